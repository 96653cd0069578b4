/*
 * status.c - `cadre status JOB`: one job as a person reads it, from its
 * name and id down to every rank and condition.
 */
#include "cli/jobs.h"
#include "cli/slurmfmt.h"

#include "api/meta.h"
#include "base/buf.h"
#include "base/err.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STATUS "cadre status"

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* "2026-12-01T10:00:00Z (1 hr ago)", or "-". */
static int when(struct buf *out, const char *label, int64_t t, int64_t now)
{
	char at[32], ago[32];

	if (!t)
		return buf_addf(out, "%-14s -\n", label);
	if (api_time_format(t, at))
		return buf_addf(out, "%-14s -\n", label);
	sky_ago(t, now, ago);
	return buf_addf(out, "%-14s %s (%s)\n", label, at, ago);
}

static int header(const struct trainingjob *tj, int64_t now, struct buf *out)
{
	const char *state = slurm_state(tj, false, false);
	char t[32];
	int e;

	e = buf_addf(out, "%-14s %s (job id %s)\n", "Job:", or_dash(tj->meta.name),
		     or_dash(tj->status.job_id));
	e = e ? e : buf_addf(out, "%-14s %s\n", "Namespace:", or_dash(tj->meta.namespace));
	e = e ? e : buf_addf(out, "%-14s %s\n", "User:", or_dash(slurm_user(tj)));
	if (!e && (!strcmp(state, "PENDING") || !strcmp(state, "SUSPENDED")))
		e = buf_addf(out, "%-14s %s (%s), phase %s\n", "State:", state, slurm_reason(tj),
			     or_dash(tj_phase_name(tj->status.phase)));
	else if (!e)
		e = buf_addf(out, "%-14s %s, phase %s\n", "State:", state,
			     or_dash(tj_phase_name(tj->status.phase)));
	if (!e && tj->status.message && *tj->status.message)
		e = buf_addf(out, "%-14s %s\n", "Why:", tj->status.message);
	e = e ? e : buf_addf(out, "%-14s ", "Resources:");
	e = e ? e : sky_resources(tj, out);
	e = e ? e : buf_addf(out, "\n%-14s %s\n", "Queue:", slurm_partition(tj));
	e = e ? e : when(out, "Submitted:", tj->meta.creation_timestamp, now);
	e = e ? e : when(out, "Started:", tj->status.start_time, now);
	if (!e && tj->status.completion_time)
		e = when(out, "Ended:", tj->status.completion_time, now);
	slurm_time_used(slurm_job_elapsed(tj, now), t);
	e = e ? e : buf_addf(out, "%-14s %s\n", "Elapsed:", t);
	slurm_time_limit(tj, t);
	e = e ? e : buf_addf(out, "%-14s %s\n", "Time limit:", t);
	e = e ? e : buf_addf(out, "%-14s %d of %d (maxRestarts); %d recover%s after node loss, "
			     "eviction or preemption\n", "Restarts:", (int)tj->status.restarts,
			     (int)tj->spec.max_restarts, (int)tj->status.infra_restarts,
			     tj->status.infra_restarts == 1 ? "y" : "ies");
	return e;
}

/*
 * Preemption (docs/design.md 3.5): the last time a higher tier preempted
 * the job and what became of it, and the jobs it is preempting now.
 */
static int preemption(const struct trainingjob *tj, int64_t now, struct buf *out)
{
	const struct tj_preemption *p = &tj->status.preemption;
	char at[32], ago[32];
	int e = 0;

	if (tj->status.has_preemption) {
		if (!p->time || api_time_format(p->time, at))
			snprintf(at, sizeof(at), "-");
		sky_ago(p->time, now, ago);
		e = buf_addf(out, "%-14s %d time%s; last by %s (tier %d) at %s (%s), %s after %llds "
			     "of grace\n", "Preempted:", (int)tj->status.preemptions,
			     tj->status.preemptions == 1 ? "" : "s", or_dash(p->preemptor),
			     (int)p->tier, at, ago, p->mode && !strcmp(p->mode, "Cancel") ?
			     "cancelled" : "requeued", (long long)p->grace_s);
	}
	if (!e && tj->status.n_preempting) {
		e = buf_addf(out, "%-14s %zu job%s:", "Preempting:", tj->status.n_preempting,
			     tj->status.n_preempting == 1 ? "" : "s");
		for (size_t i = 0; i < tj->status.n_preempting && !e; i++)
			e = buf_addf(out, "%s %s", i ? "," : "", tj->status.preempting[i].job);
		e = e ? e : buf_addc(out, '\n');
	}
	return e;
}

static int last_failure(const struct trainingjob *tj, struct buf *out)
{
	const struct tj_failure *f = &tj->status.last_failure;
	int e;

	if (!tj->status.has_last_failure)
		return 0;
	e = buf_addf(out, "%-14s rank %d (pod %s, node %s): exit code %d", "Last failure:",
		     (int)f->rank, or_dash(f->pod), or_dash(f->node), (int)f->exit_code);
	if (!e && f->reason && *f->reason)
		e = buf_addf(out, ", %s", f->reason);
	if (!e && f->message && *f->message)
		e = buf_addf(out, ": %s", f->message);
	return e ? e : buf_addc(out, '\n');
}

/* The ranks as a table: RANK POD NODE IP PHASE, columns two spaces apart. */
static int ranks(const struct trainingjob *tj, struct buf *out)
{
	size_t w[4] = { strlen("POD"), strlen("NODE"), strlen("IP"), 0 };
	int e = 0;

	if (!tj->status.n_nodes)
		return 0;
	for (size_t i = 0; i < tj->status.n_nodes; i++) {
		const struct tj_node_status *n = &tj->status.nodes[i];
		size_t l[3] = { strlen(or_dash(n->pod)), strlen(or_dash(n->node)),
				strlen(or_dash(n->ip)) };

		for (int k = 0; k < 3; k++)
			w[k] = l[k] > w[k] ? l[k] : w[k];
	}
	e = buf_addf(out, "\n%-4s  %-*s  %-*s  %-*s  %s\n", "RANK", (int)w[0], "POD", (int)w[1],
		     "NODE", (int)w[2], "IP", "PHASE");
	for (size_t i = 0; i < tj->status.n_nodes && !e; i++) {
		const struct tj_node_status *n = &tj->status.nodes[i];

		e = buf_addf(out, "%-4d  %-*s  %-*s  %-*s  %s\n", (int)n->rank, (int)w[0],
			     or_dash(n->pod), (int)w[1], or_dash(n->node), (int)w[2],
			     or_dash(n->ip), or_dash(n->phase));
	}
	return e;
}

static int conditions(const struct trainingjob *tj, struct buf *out)
{
	const struct condition_list *l = &tj->status.conditions;
	size_t wt = strlen("CONDITION"), wr = strlen("REASON");
	int e;

	if (!l->len)
		return 0;
	for (size_t i = 0; i < l->len; i++) {
		wt = strlen(l->items[i].type) > wt ? strlen(l->items[i].type) : wt;
		wr = strlen(l->items[i].reason) > wr ? strlen(l->items[i].reason) : wr;
	}
	e = buf_addf(out, "\n%-*s  %-7s  %-*s  %s\n", (int)wt, "CONDITION", "STATUS", (int)wr,
		     "REASON", "MESSAGE");
	for (size_t i = 0; i < l->len && !e; i++)
		e = buf_addf(out, "%-*s  %-7s  %-*s  %s\n", (int)wt, l->items[i].type,
			     l->items[i].status, (int)wr, or_dash(l->items[i].reason),
			     or_dash(l->items[i].message));
	return e;
}

int cli_status_text(const struct trainingjob *tj, int64_t now, struct buf *out)
{
	struct buf hosts;
	int e;

	buf_init(&hosts, (size_t)1 << 20);
	e = header(tj, now, out);
	e = e ? e : preemption(tj, now, out);
	e = e ? e : last_failure(tj, out);
	e = e ? e : slurm_nodelist(tj, &hosts);
	if (!e && hosts.len)
		e = buf_addf(out, "%-14s %s\n", "Hosts:", buf_str(&hosts));
	buf_release(&hosts);
	e = e ? e : ranks(tj, out);
	return e ? e : conditions(tj, out);
}

int cli_status(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	const struct cli_opt opts[] = { { NULL, 0, NULL, NULL } };
	struct cli_globals gl = *g;
	struct cli_kube k = { 0 };
	struct cli_jobs jobs = { 0 };
	const struct trainingjob *tj;
	bool all = false, help = false;
	char **pos = calloc((size_t)n + 1, sizeof(*pos));
	int n_pos = 0, code = CLI_EXIT_FAILED;
	struct buf text;

	buf_init(&text, (size_t)1 << 24);
	if (!pos)
		return code;
	if ((code = cli_opts_parse(STATUS, opts, args, n, &gl, &all, &help, pos, &n_pos, err)))
		goto done;
	if (help) {
		cli_print_help(out, "status");
		goto done;
	}
	if (!n_pos) {
		/* sky status: the clusters. */
		if (!(code = cli_kube_open(&gl, STATUS, &k, err))) {
			code = cli_clusters(&k, all, out, err);
			cli_kube_close(&k);
		}
		goto done;
	}
	if (n_pos != 1) {
		fprintf(err, "%s: give one job id or name\n", STATUS);
		code = CLI_EXIT_USAGE;
		goto done;
	}
	if ((code = cli_kube_open(&gl, STATUS, &k, err)))
		goto done;
	if ((code = cli_jobs_list(&k, all, &jobs, err)))
		goto out;
	code = CLI_EXIT_FAILED;
	if (!(tj = cli_jobs_find(&jobs, pos[0]))) {
		fprintf(err, "%s: no job %s in %s\n", STATUS, pos[0],
			all ? "any namespace" : k.ns);
	} else if (cli_status_text(tj, (int64_t)time(NULL), &text)) {
		fprintf(err, "%s: out of memory\n", STATUS);
	} else {
		fputs(buf_str(&text), out);
		code = 0;
	}
out:
	cli_jobs_release(&jobs);
	cli_kube_close(&k);
done:
	buf_release(&text);
	free(pos);
	return code;
}
