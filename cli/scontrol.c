/*
 * scontrol.c - cadre scontrol: the login side's verbs on jobs, as Slurm's
 * scontrol has them (src/scontrol/scontrol.c, info_job.c, update_job.c).
 *
 *   show job [ID]        the job's record in scontrol's key=value layout
 *                        (info_job.c _sprint_job_info), every job without ID
 *   show partition [P]   each Partition's record (sinfo.c), AllowAccounts its
 *                        allowedNamespaces
 *   show hostnames [L]   one host a line (L, else $SLURM_JOB_NODELIST)
 *   hold ID...           spec.suspend: true on a job not yet admitted (Slurm
 *                        holds only pending jobs); squeue: PD (JobHeldUser)
 *   release ID...        spec.suspend: false
 *   requeue ID...        the annotation cadre.dev/requeue: the controller
 *                        tears an admitted gang down and queues it again
 *   update JobId=ID TimeLimit=T   spec.activeDeadlineSeconds (mutable)
 *
 * IDs are Slurm job ids, ARRAY_INDEX, or job names.
 */
#include "cli/cli.h"
#include "cli/jobs.h"
#include "cli/kube.h"
#include "cli/sinfo.h"
#include "cli/slurmfmt.h"

#include "api/hostlist.h"
#include "api/labels.h"
#include "api/slurm.h"
#include "api/trainingjob.h"
#include "base/buf.h"
#include "base/err.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define SCONTROL "scontrol"
#define CMD "cadre scontrol"

/* slurm_make_time_str: "%Y-%m-%dT%H:%M:%S" in local time, "Unknown" for none. */
static void make_time(int64_t t, char out[32])
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (!t || !localtime_r(&tt, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(out, 32, "Unknown");
}

/* Slurm's JobState of scontrol: squeue's long name, a hold before start PENDING. */
static const char *job_state(const struct trainingjob *tj)
{
	return slurm_state(tj, false, true);
}

/* The job's Dependency= text: spec.dependency as Slurm writes it, "(null)" when none. */
static int dependency(const struct trainingjob *tj, struct buf *out)
{
	if (!tj->spec.has_dependency || !tj->spec.dependency.n_items)
		return buf_adds(out, "(null)");
	return slurm_dep_format(&tj->spec.dependency, out);
}

/* scontrol's first line: the id, the array's, the name. tmp is scratch. */
static int show_job_ids(const struct trainingjob *tj, const char *nl, struct buf *out,
			struct buf *tmp)
{
	int e = buf_addf(out, "JobId=%s ", tj->status.job_id ? tj->status.job_id : "0");

	if (!e && slurm_is_element(tj))
		e = buf_addf(out, "ArrayJobId=%s ArrayTaskId=%s ",
			     meta_annotation(&tj->meta, ANNOTATION_ARRAY_JOB_ID),
			     meta_label(&tj->meta, LABEL_ARRAY_INDEX));
	else if (!e && tj->spec.array) {
		struct slurm_array a;

		buf_reset(tmp);
		e = slurm_array_pending(tj, tmp) < 0 ? CADRE_ENOMEM : 0;
		if (!e)
			e = buf_addf(out, "ArrayJobId=%s ArrayTaskId=%s ",
				     tj->status.job_id ? tj->status.job_id : "0",
				     tmp->len ? buf_str(tmp) : "(null)");
		if (!e && !slurm_array_parse(tj->spec.array, SLURM_ARRAY_INDEX_LIMIT, &a, NULL, 0) &&
		    a.max_running > 0)
			e = buf_addf(out, "ArrayTaskThrottle=%d ", (int)a.max_running);
		slurm_array_release(&a);
	}
	return e ? e : buf_addf(out, "JobName=%s%s", slurm_job_name(tj), nl);
}

/* ReqNodeList and ExcNodeList: -w and -x as Slurm's ranged hostlists. tmp is scratch. */
static int node_lists(const struct trainingjob *tj, const char *nl, struct buf *out,
		      struct buf *tmp)
{
	const struct tj_nodes *n = &tj->spec.nodes;
	int e;

	buf_reset(tmp);
	e = hostlist_compress((const char *const *)n->list, n->n_list, tmp);
	e = e ? e : buf_addf(out, "ReqNodeList=%s ", n->n_list ? buf_str(tmp) : "(null)");
	buf_reset(tmp);
	e = e ? e : hostlist_compress((const char *const *)n->exclude, n->n_exclude, tmp);
	return e ? e : buf_addf(out, "ExcNodeList=%s%s", n->n_exclude ? buf_str(tmp) : "(null)",
				nl);
}

/*
 * PreemptEligibleTime and PreemptTime: _sprint_job_info prints them for a
 * job that has started (slurm_start_time: not pending, nor requeued, a
 * pending job's flag) in a partition whose jobs can be preempted (pack_job's
 * preemptable time). The CLI does not read Partitions, so the one job
 * known to be in such a partition is one that was preempted; its eligible
 * time is its start (PreemptExemptTime 0, slurm.conf's default).
 * PreemptTime is status.preemption's time while the run it stopped is the
 * job's last one, None once the job was requeued and started again
 * (job_requeue_internal clears preempt_time).
 */
static int show_job_preempt(const struct trainingjob *tj, const char *nl, struct buf *out)
{
	const struct tj_preemption *p = &tj->status.preemption;
	char eligible[32], at[32];

	if (!tj->status.has_preemption || !slurm_start_time(tj))
		return 0;
	make_time(slurm_start_time(tj), eligible);
	if (p->time && (slurm_preempted(tj) || p->attempt == tj_attempt(&tj->status)))
		make_time(p->time, at);
	else
		snprintf(at, sizeof(at), "None");
	return buf_addf(out, "PreemptEligibleTime=%s PreemptTime=%s%s", eligible, at, nl);
}

/* RunTime through Scheduler: the job's times. */
static int show_job_times(const struct trainingjob *tj, int64_t now, const char *nl,
			  struct buf *out)
{
	int64_t start = slurm_start_time(tj), end = tj->status.completion_time;
	char t1[32], t2[32], t3[32];
	int e;

	slurm_time_hms(slurm_run_time(tj, now), t1);
	if (tj->spec.has_active_deadline_seconds && tj->spec.active_deadline_seconds > 0)
		slurm_time_hms(tj->spec.active_deadline_seconds, t2);
	else
		snprintf(t2, sizeof(t2), "UNLIMITED");
	e = buf_addf(out, "RunTime=%s TimeLimit=%s TimeMin=N/A%s", t1, t2, nl);
	make_time(tj->meta.creation_timestamp, t1);
	e = e ? e : buf_addf(out, "SubmitTime=%s EligibleTime=%s%s", t1, t1, nl);
	make_time(tj->status.admitted_time, t2);
	e = e ? e : buf_addf(out, "AccrueTime=%s%s", t1, nl);
	make_time(start, t1);
	if (!end && start && tj->spec.has_active_deadline_seconds &&
	    tj->spec.active_deadline_seconds > 0)
		end = start + tj->spec.active_deadline_seconds;
	if (!end && start)
		snprintf(t3, sizeof(t3), "Unknown");
	else
		make_time(end, t3);
	e = e ? e : buf_addf(out, "StartTime=%s EndTime=%s Deadline=N/A%s", t1, t3, nl);
	e = e ? e : show_job_preempt(tj, nl, out);
	return e ? e : buf_addf(out, "SuspendTime=None SecsPreSuspend=0 LastSchedEval=%s "
				"Scheduler=Main%s", t2, nl);
}

/* NumNodes through MinCPUsNode: what the job asks for. tmp is scratch. */
static int show_job_resources(const struct trainingjob *tj, const char *nl, struct buf *out,
			      struct buf *tmp)
{
	int32_t nodes = tj->spec.has_num_nodes ? tj->spec.num_nodes : 1;
	int32_t tasks = tj->spec.has_tasks_per_node ? tj->spec.tasks_per_node : 1;
	int64_t cpus_per_node = tj->spec.resources.has_cpus ?
				(tj->spec.resources.cpus_milli + 999) / 1000 : tasks;
	int e;

	e = buf_addf(out, "NumNodes=%d NumCPUs=%lld NumTasks=%d CPUs/Task=N/A "
		     "ReqB:S:C:T=0:0:*:*%s", (int)nodes, (long long)(cpus_per_node * nodes),
		     (int)(nodes * tasks), nl);
	buf_reset(tmp);
	e = e ? e : buf_addf(tmp, "cpu=%lld", (long long)(cpus_per_node * nodes));
	if (!e && tj->spec.resources.has_memory)
		e = buf_addf(tmp, ",mem=%lldM", (long long)(tj->spec.resources.memory_milli /
							    1000 / (1024 * 1024) * nodes));
	e = e ? e : buf_addf(tmp, ",node=%d,billing=%lld", (int)nodes,
			     (long long)(cpus_per_node * nodes));
	if (!e && tj->spec.resources.has_accel)
		e = buf_addf(tmp, ",gres/gpu=%d", tj->spec.resources.accel.count * (int)nodes);
	e = e ? e : buf_addf(out, "ReqTRES=%s%s", buf_str(tmp), nl);
	e = e ? e : buf_addf(out, "AllocTRES=%s%s", slurm_start_time(tj) ? buf_str(tmp) :
			     "(null)", nl);
	e = e ? e : buf_addf(out, "Socks/Node=* NtasksPerN:B:S:C=%d:0:*:* CoreSpec=*%s",
			     (int)tasks, nl);
	return e ? e : buf_addf(out, "MinCPUsNode=%lld MinMemoryNode=%s MinTmpDiskNode=0%s",
				(long long)cpus_per_node,
				tj->spec.resources.memory ? tj->spec.resources.memory : "0", nl);
}

/* Features through TresPerNode: the rest of the request, files and command. */
static int show_job_rest(const struct trainingjob *tj, const char *nl, struct buf *out)
{
	const char *features = tj->spec.nodes.constraint ? tj->spec.nodes.constraint : "(null)";
	int e = buf_addf(out, "Features=%s DelayBoot=00:00:00%s", features, nl);

	/* job_exclusive_display_string: --exclusive is NODE. */
	e = e ? e : buf_addf(out, "OverSubscribe=NO Exclusive=%s Contiguous=0 Licenses=(null) "
			     "LicensesAlloc=(null) Network=(null)%s",
			     tj->spec.nodes.exclusive ? "NODE" : "NO", nl);
	e = e ? e : buf_addf(out, "Command=%s%s", tj->meta.name ? tj->meta.name : "(null)", nl);
	e = e ? e : buf_addf(out, "WorkDir=%s%s", tj->spec.workdir ? tj->spec.workdir : "/", nl);
	e = e ? e : buf_addf(out, "StdErr=%s%s", tj->spec.error ? tj->spec.error :
			     tj->spec.output ? tj->spec.output : "(container log)", nl);
	e = e ? e : buf_addf(out, "StdIn=/dev/null%s", nl);
	e = e ? e : buf_addf(out, "StdOut=%s%s", tj->spec.output ? tj->spec.output :
			     "(container log)", nl);
	if (!e && tj->spec.resources.accelerators) {
		char type[64];
		size_t n = 0;

		for (const char *p = tj->spec.resources.accel.type; *p && n < 63; p++)
			type[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
		type[n] = '\0';
		e = buf_addf(out, "TresPerNode=gres/gpu:%s:%d", type,
			     tj->spec.resources.accel.count);
	}
	return e;
}

int slurm_show_job(const struct trainingjob *tj, int64_t now, struct buf *out)
{
	const char *nl = "\n   ";
	const char *user = slurm_user(tj);
	const char *ns = tj->meta.namespace ? tj->meta.namespace : "";
	char code[24];
	struct buf tmp;
	int e;

	buf_init(&tmp, 1 << 20);
	e = show_job_ids(tj, nl, out, &tmp);
	/* Kubernetes users have no uid or gid: 0, the namespace as the group. */
	e = e ? e : buf_addf(out, "UserId=%s(0) GroupId=%s(0) MCS_label=N/A%s", user, ns, nl);
	e = e ? e : buf_addf(out, "Priority=%d Nice=0 Account=%s QOS=normal%s",
			     (int)tj->spec.priority, ns, nl);
	e = e ? e : buf_addf(out, "JobState=%s Reason=%s Dependency=", job_state(tj),
			     slurm_reason(tj));
	e = e ? e : dependency(tj, out);
	e = e ? e : buf_adds(out, nl);
	slurm_exit_code(tj, code);
	e = e ? e : buf_addf(out, "Requeue=1 Restarts=%d BatchFlag=1 Reboot=0 ExitCode=%s%s",
			     tj_attempt(&tj->status), code, nl);
	e = e ? e : show_job_times(tj, now, nl, out);
	e = e ? e : buf_addf(out, "Partition=%s AllocNode:Sid=%s:0%s", slurm_partition(tj),
			     "cadre", nl);
	e = e ? e : node_lists(tj, nl, out, &tmp);
	buf_reset(&tmp);
	e = e ? e : slurm_nodelist(tj, &tmp);
	e = e ? e : buf_addf(out, "NodeList=%s%s", tmp.len ? buf_str(&tmp) : "(null)", nl);
	/* The ranks' host names are their pods' (SLURM_JOB_NODELIST, squeue's NODELIST). */
	if (!e && tj->status.n_nodes && tj->status.nodes[0].pod)
		e = buf_addf(out, "BatchHost=%s%s", tj->status.nodes[0].pod, nl);
	e = e ? e : show_job_resources(tj, nl, out, &tmp);
	e = e ? e : show_job_rest(tj, nl, out);
	/* xstrtrim, then the blank line between records. */
	while (!e && out->len && (out->data[out->len - 1] == ' ' ||
				  out->data[out->len - 1] == '\n'))
		out->data[--out->len] = '\0';
	e = e ? e : buf_adds(out, "\n\n");
	buf_release(&tmp);
	return e;
}

/* ---- the verbs ---- */

static int patch_job(struct cli_kube *k, const struct trainingjob *tj, json_t *patch,
		     const char *what, FILE *err)
{
	struct kube_status st;
	char doing[320];
	int e;

	kube_status_clear(&st);
	e = kube_client_patch(k->http, &kube_resource_trainingjobs, tj->meta.namespace,
			      tj->meta.name, NULL, KUBE_PATCH_MERGE, patch, NULL, &st);
	json_decref(patch);
	if (!e)
		return 0;
	snprintf(doing, sizeof(doing), "%s trainingjob \"%s\"", what, tj->meta.name);
	if (!st.code)
		st.code = e;
	return cli_kube_error(k, doing, &st, err);
}

static bool pending(const struct trainingjob *tj)
{
	return !tj->status.admitted_time && !tj->status.start_time &&
	       !tj_phase_terminal(tj->status.phase);
}

static int verb_one(struct cli_kube *k, const char *verb, const struct trainingjob *tj,
		    const char *word, FILE *err)
{
	if (!strcmp(verb, "hold") || !strcmp(verb, "release")) {
		bool hold = !strcmp(verb, "hold");

		if (hold && !pending(tj)) {
			/* slurm_errno.c ESLURM_JOB_NOT_PENDING, as scontrol prints it. */
			fprintf(err, "%s: error: Job is no longer pending execution for job %s\n",
				SCONTROL, word);
			return CLI_EXIT_FAILED;
		}
		return patch_job(k, tj, json_pack("{s:{s:b}}", "spec", "suspend", hold), verb, err);
	}
	/* requeue: a new value asks again (api/labels.h). */
	{
		char value[64];

		if (tj_phase_terminal(tj->status.phase) || pending(tj)) {
			fprintf(err, "%s: error: Job is pending execution for job %s\n", SCONTROL,
				word);
			return CLI_EXIT_FAILED;
		}
		snprintf(value, sizeof(value), "%lld", (long long)time(NULL));
		return patch_job(k, tj, json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
						  ANNOTATION_REQUEUE, value), verb, err);
	}
}

static int each_job(struct cli_kube *k, bool all, const char *verb, char **words, int n,
		    FILE *err)
{
	struct cli_jobs jobs;
	int code, worst = 0;

	if ((code = cli_jobs_list(k, all, &jobs, err)))
		return code;
	for (int i = 0; i < n; i++) {
		/* scontrol takes a comma-separated list too. */
		for (char *w = words[i], *next; w && *w; w = next) {
			const struct trainingjob *tj;

			if ((next = strchr(w, ',')))
				*next++ = '\0';
			if (!(tj = cli_jobs_find(&jobs, w))) {
				fprintf(err, "%s: error: Invalid job id specified for job %s\n",
					SCONTROL, w);
				worst = CLI_EXIT_FAILED;
				continue;
			}
			if ((code = verb_one(k, verb, tj, w, err)))
				worst = code;
		}
	}
	cli_jobs_release(&jobs);
	return worst;
}

static int show_job(struct cli_kube *k, bool all, const char *word, FILE *out, FILE *err)
{
	struct cli_jobs jobs;
	struct buf text;
	int code, e = 0;
	bool any = false;
	int64_t now = (int64_t)time(NULL);

	if ((code = cli_jobs_list(k, all, &jobs, err)))
		return code;
	buf_init(&text, (size_t)64 << 20);
	for (size_t i = 0; i < jobs.len && !e; i++) {
		const struct trainingjob *tj = &jobs.items[i];

		if (word ? tj != cli_jobs_find(&jobs, word) : !slurm_row_shown(tj))
			continue;
		any = true;
		e = slurm_show_job(tj, now, &text);
	}
	if (e) {
		fprintf(err, "%s: %s\n", CMD, cadre_strerror(e));
		code = CLI_EXIT_FAILED;
	} else if (word && !any) {
		fprintf(err, "slurm_load_jobs error: Invalid job id specified\n");
		code = CLI_EXIT_FAILED;
	} else if (!any) {
		fprintf(out, "No jobs in the system\n");
	} else {
		fputs(buf_str(&text), out);
	}
	buf_release(&text);
	cli_jobs_release(&jobs);
	return code;
}

static int show_hostnames(const char *list, FILE *out, FILE *err)
{
	struct hostlist hl;
	int e;

	if (!list)
		list = getenv("SLURM_JOB_NODELIST");
	if (!list)
		list = getenv("SLURM_NODELIST");
	if (!list) {
		fprintf(err, "%s: error: host list is empty\n", SCONTROL);
		return CLI_EXIT_FAILED;
	}
	if ((e = hostlist_expand(list, 65536, &hl))) {
		fprintf(err, "%s: error: Invalid hostlist: %s\n", SCONTROL, list);
		hostlist_release(&hl);
		return CLI_EXIT_FAILED;
	}
	for (size_t i = 0; i < hl.len; i++)
		fprintf(out, "%s\n", hl.names[i]);
	hostlist_release(&hl);
	return 0;
}

/* update JobId=ID TimeLimit=T: the key=value words, case-insensitive keys as scontrol's. */
static int update(struct cli_kube *k, bool all, char **words, int n, FILE *err)
{
	const char *id = NULL, *limit = NULL;
	struct cli_jobs jobs;
	const struct trainingjob *tj;
	int64_t seconds;
	int code;

	for (int i = 0; i < n; i++) {
		const char *eq = strchr(words[i], '=');

		if (eq && (size_t)(eq - words[i]) == 5 && !strncasecmp(words[i], "JobId", 5))
			id = eq + 1;
		else if (eq && (size_t)(eq - words[i]) == 9 && !strncasecmp(words[i], "TimeLimit", 9))
			limit = eq + 1;
		else {
			/* scontrol's words for a field it cannot update (update_job.c). */
			fprintf(err, "Update of this parameter is not supported: %s\n", words[i]);
			fprintf(err, "Request aborted\n");
			return CLI_EXIT_USAGE;
		}
	}
	if (!id) {
		fprintf(err, "%s: error: No job identification provided (JobId=ID)\n", SCONTROL);
		return CLI_EXIT_USAGE;
	}
	if (!limit)
		return 0;
	if (!strcasecmp(limit, "UNLIMITED") || !strcasecmp(limit, "INFINITE"))
		seconds = -1;
	else if (slurm_time_parse(limit, &seconds) || seconds <= 0) {
		fprintf(err, "Invalid TimeLimit value: %s\n", limit);
		return CLI_EXIT_USAGE;
	}
	if ((code = cli_jobs_list(k, all, &jobs, err)))
		return code;
	if (!(tj = cli_jobs_find(&jobs, id))) {
		fprintf(err, "%s: error: Invalid job id specified for job %s\n", SCONTROL, id);
		code = CLI_EXIT_FAILED;
	} else if (tj_phase_terminal(tj->status.phase)) {
		fprintf(err, "%s: error: Job/step already completing or completed for job %s\n",
			SCONTROL, id);
		code = CLI_EXIT_FAILED;
	} else {
		json_t *patch = seconds < 0 ?
			json_pack("{s:{s:n}}", "spec", "activeDeadlineSeconds") :
			json_pack("{s:{s:I}}", "spec", "activeDeadlineSeconds", (json_int_t)seconds);

		code = patch_job(k, tj, patch, "update", err);
	}
	cli_jobs_release(&jobs);
	return code;
}

int cli_scontrol(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	const struct cli_opt opts[] = { { NULL, 0, NULL, NULL } };
	struct cli_globals gl = *g;
	struct cli_kube k = { 0 };
	bool all = false, help = false;
	char **pos = calloc((size_t)n + 1, sizeof(*pos));
	int n_pos = 0, code;
	const char *verb;

	if (!pos)
		return CLI_EXIT_FAILED;
	if ((code = cli_opts_parse(CMD, opts, args, n, &gl, &all, &help, pos, &n_pos, err)))
		goto done;
	if (help || !n_pos) {
		cli_print_help(help ? out : err, "scontrol");
		code = help ? 0 : CLI_EXIT_USAGE;
		goto done;
	}
	verb = pos[0];
	if (!strcasecmp(verb, "show") && n_pos >= 2 &&
	    (!strcasecmp(pos[1], "hostnames") || !strcasecmp(pos[1], "hostname"))) {
		code = show_hostnames(n_pos > 2 ? pos[2] : NULL, out, err);
		goto done;
	}
	/* scontrol takes any unambiguous prefix: part, partition, partitions. */
	if (!strcasecmp(verb, "show") && n_pos >= 2 && strlen(pos[1]) >= 4 &&
	    !strncasecmp(pos[1], "partitions", strlen(pos[1]))) {
		if (!(code = cli_kube_open(&gl, CMD, &k, err))) {
			code = cli_show_partition(&k, n_pos > 2 ? pos[2] : NULL, out, err);
			cli_kube_close(&k);
		}
		goto done;
	}
	if (!(!strcasecmp(verb, "show") && n_pos >= 2 && !strncasecmp(pos[1], "job", 3)) &&
	    strcasecmp(verb, "hold") && strcasecmp(verb, "release") &&
	    strcasecmp(verb, "requeue") && strcasecmp(verb, "update")) {
		fprintf(err, "%s: invalid entity: %s for keyword: %s (cadre scontrol has show job, "
			"show partition, show hostnames, hold, release, requeue, update)\n", SCONTROL,
			n_pos > 1 ? pos[1] : "", verb);
		code = CLI_EXIT_USAGE;
		goto done;
	}
	if ((strcasecmp(verb, "show") && strcasecmp(verb, "update") && n_pos < 2)) {
		fprintf(err, "%s: error: No job identification provided\n", SCONTROL);
		code = CLI_EXIT_USAGE;
		goto done;
	}
	if ((code = cli_kube_open(&gl, CMD, &k, err)))
		goto done;
	if (!strcasecmp(verb, "show"))
		code = show_job(&k, all, n_pos > 2 ? pos[2] : NULL, out, err);
	else if (!strcasecmp(verb, "update"))
		code = update(&k, all, pos + 1, n_pos - 1, err);
	else {
		char lower[16];

		snprintf(lower, sizeof(lower), "%s", verb);
		for (char *p = lower; *p; p++)
			*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
		code = each_job(&k, all, lower, pos + 1, n_pos - 1, err);
	}
	cli_kube_close(&k);
done:
	free(pos);
	return code;
}
