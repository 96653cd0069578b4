/*
 * slurmfmt.c - a TrainingJob as squeue, sacct and sky jobs queue print it.
 * The widths, justification and cuts follow src/squeue/print.c
 * (_print_str) and src/common/print_fields.c (print_fields_str).
 */
#include "cli/slurmfmt.h"
#include "api/slurm.h"

#include "api/hostlist.h"
#include "api/trainingjob.h"
#include "base/buf.h"
#include "base/err.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

void slurm_time_used(int64_t s, char out[32])
{
	long long d, h, m;

	if (s < 0 || s > 365 * 86400LL) {
		/* src/squeue/print.c _print_secs */
		snprintf(out, 32, "INVALID");
		return;
	}
	d = s / 86400;
	h = s / 3600 % 24;
	m = s / 60 % 60;
	s %= 60;
	if (d)
		snprintf(out, 32, "%lld-%02lld:%02lld:%02lld", d, h, m, (long long)s);
	else if (h)
		snprintf(out, 32, "%lld:%02lld:%02lld", h, m, (long long)s);
	else
		snprintf(out, 32, "%lld:%02lld", m, (long long)s);
}

void slurm_elapsed(int64_t s, char out[32])
{
	long long d;

	s = s < 0 ? 0 : s;
	d = s / 86400;
	if (d)
		snprintf(out, 32, "%lld-%02lld:%02lld:%02lld", d, (long long)(s / 3600 % 24),
			 (long long)(s / 60 % 60), (long long)(s % 60));
	else
		snprintf(out, 32, "%02lld:%02lld:%02lld", (long long)(s / 3600),
			 (long long)(s / 60 % 60), (long long)(s % 60));
}

void slurm_time_limit(const struct trainingjob *tj, char out[32])
{
	if (!tj->spec.has_active_deadline_seconds || tj->spec.active_deadline_seconds <= 0)
		snprintf(out, 32, "UNLIMITED");
	else
		slurm_time_used(tj->spec.active_deadline_seconds, out);
}

int64_t slurm_job_elapsed(const struct trainingjob *tj, int64_t now)
{
	int64_t end;

	if (!tj->status.start_time)
		return 0;
	end = tj->status.completion_time ? tj->status.completion_time : now;
	return end > tj->status.start_time ? end - tj->status.start_time : 0;
}

int64_t slurm_start_time(const struct trainingjob *tj)
{
	const char *st = slurm_state(tj, true, false);

	return !strcmp(st, "PD") || !strcmp(st, "RQ") ? 0 : tj->status.start_time;
}

int64_t slurm_run_time(const struct trainingjob *tj, int64_t now)
{
	return slurm_start_time(tj) ? slurm_job_elapsed(tj, now) : 0;
}

static bool failed_for(const struct trainingjob *tj, const char *reason)
{
	const struct condition *c = condition_find(&tj->status.conditions, "Failed");

	return c && !strcmp(c->status, "True") && !strcmp(c->reason, reason);
}

bool slurm_preempted(const struct trainingjob *tj)
{
	return tj->status.phase == TJ_PHASE_FAILED && failed_for(tj, "Preempted");
}

const char *slurm_state(const struct trainingjob *tj, bool compact, bool acct)
{
	static const char *const names[][2] = {
		[TJ_PHASE_UNSET] = { "PD", "PENDING" },
		[TJ_PHASE_PENDING] = { "PD", "PENDING" },
		[TJ_PHASE_QUEUED] = { "PD", "PENDING" },
		[TJ_PHASE_STARTING] = { "CF", "CONFIGURING" },
		[TJ_PHASE_RUNNING] = { "R", "RUNNING" },
		[TJ_PHASE_RESTARTING] = { "RQ", "REQUEUED" },
		[TJ_PHASE_SUCCEEDED] = { "CD", "COMPLETED" },
		[TJ_PHASE_FAILED] = { "F", "FAILED" },
		[TJ_PHASE_SUSPENDED] = { "S", "SUSPENDED" },
	};
	enum tj_phase p = tj->status.phase;

	if (tj->meta.deleting && !tj_phase_terminal(p))
		return acct ? (compact ? "CA" : "CANCELLED") : (compact ? "CG" : "COMPLETING");
	/* An array's row is its elements still waiting to start (slurm_array_pending). */
	if (tj->spec.array && !tj_phase_terminal(p))
		return compact ? "PD" : "PENDING";
	if (p == TJ_PHASE_FAILED && failed_for(tj, "DeadlineExceeded"))
		return compact ? "TO" : "TIMEOUT";
	/* --kill-on-invalid-dep=yes cancels such a job (slurmctld's kill_invalid_depend). */
	if (p == TJ_PHASE_FAILED && failed_for(tj, "DependencyNeverSatisfied"))
		return compact ? "CA" : "CANCELLED";
	/* PreemptMode=CANCEL ends a victim JOB_PREEMPTED (slurmctld's _job_signal). */
	if (slurm_preempted(tj))
		return compact ? "PR" : "PREEMPTED";
	/* scontrol hold: a job held before it started is pending (JobHeldUser), as Slurm's. */
	if (p == TJ_PHASE_SUSPENDED && !tj->status.start_time)
		return compact ? "PD" : "PENDING";
	if ((unsigned)p >= sizeof(names) / sizeof(names[0]))
		p = TJ_PHASE_UNSET;
	return names[p][compact ? 0 : 1];
}

bool slurm_states_valid(const char *list, const char **bad, size_t *bad_len)
{
	static const char *const known[] = {
		"all", "PD", "PENDING", "CF", "CONFIGURING", "R", "RUNNING", "RQ", "REQUEUED",
		"S", "SUSPENDED", "CD", "COMPLETED", "F", "FAILED", "TO", "TIMEOUT", "CG",
		"COMPLETING", "CA", "CANCELLED", "PR", "PREEMPTED",
	};

	for (const char *p = list;; p++) {
		size_t n = strcspn(p, ","), k;

		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (strlen(known[k]) == n && !strncasecmp(known[k], p, n))
				break;
		if (k == sizeof(known) / sizeof(known[0])) {
			*bad = p;
			*bad_len = n;
			return false;
		}
		p += n;
		if (!*p)
			return true;
	}
}

/* How many of an array's started elements have not ended. */
static size_t array_running(const struct trainingjob *tj)
{
	const char *ended[] = { tj->status.array_succeeded, tj->status.array_failed,
				tj->status.array_cancelled };
	int32_t *started = NULL, *done = NULL;
	size_t n_started = 0, n_done = 0, running = 0;

	if (slurm_indices_parse(tj->status.array_started, &started, &n_started))
		return 0;
	for (size_t i = 0; i < n_started; i++) {
		bool over = false;

		for (size_t k = 0; k < 3 && !over; k++) {
			free(done);
			done = NULL;
			n_done = 0;
			if (slurm_indices_parse(ended[k], &done, &n_done))
				continue;
			for (size_t j = 0; j < n_done && !over; j++)
				over = done[j] == started[i];
		}
		running += !over;
	}
	free(done);
	free(started);
	return running;
}

/*
 * An array's pending row: JobArrayTaskLimit while %N elements run (slurmctld's
 * WAIT_ARRAY_TASK_LIMIT), else Priority: the next one starts when admitted.
 */
static const char *array_reason(const struct trainingjob *tj)
{
	struct slurm_array a;
	const char *why = "Priority";

	if (!slurm_array_parse(tj->spec.array, SLURM_ARRAY_INDEX_LIMIT, &a, NULL, 0) &&
	    a.max_running > 0 && array_running(tj) >= (size_t)a.max_running)
		why = "JobArrayTaskLimit";
	slurm_array_release(&a);
	return why;
}

const char *slurm_reason(const struct trainingjob *tj)
{
	static const struct { const char *cadre, *slurm; } map[] = {
		{ "InsufficientCapacity", "Resources" },
		{ "QueuedBehind", "Priority" },
		{ "WaitingForKueue", "QOSWaitingForKueue" },
		{ "NotManagedByKueue", "NotManagedByKueue" },
		{ "GangTimeout", "Resources" },
		/*
		 * A preemptor waiting for its victims to go: select_nodes gets
		 * ESLURM_NODES_BUSY from _preempt_jobs and says WAIT_RESOURCES.
		 */
		{ "Preempting", "Resources" },
	};
	const struct condition *c;

	if (tj->status.phase == TJ_PHASE_UNSET)
		return "BeginTime";
	/* A victim keeps the reason it ran with: WAIT_NO_REASON. */
	if (slurm_preempted(tj))
		return "None";
	if (tj->status.phase == TJ_PHASE_SUSPENDED || (tj->spec.suspend && tj->spec.array))
		return "JobHeldUser";
	if (tj->spec.array)
		return array_reason(tj);
	c = condition_find(&tj->status.conditions, "VolumesReady");
	if (c && strcmp(c->status, "True") && *c->reason)
		return c->reason;
	c = condition_find(&tj->status.conditions, "Admitted");
	if (!c || !strcmp(c->status, "True") || !*c->reason)
		return "None";
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(c->reason, map[i].cadre))
			return map[i].slurm;
	return c->reason;
}

const char *slurm_user(const struct trainingjob *tj)
{
	const char *u = meta_annotation(&tj->meta, ANNOTATION_SUBMITTED_BY);

	return u && *u ? u : tj->meta.namespace ? tj->meta.namespace : "";
}

const char *slurm_partition(const struct trainingjob *tj)
{
	if (tj->status.partition && *tj->status.partition)
		return tj->status.partition;
	if (tj->spec.partition && *tj->spec.partition)
		return tj->spec.partition;
	return tj->spec.queue && *tj->spec.queue ? tj->spec.queue : "-";
}

/* ---- job arrays (docs/design.md 12) ---- */

bool slurm_is_element(const struct trainingjob *tj)
{
	return meta_label(&tj->meta, LABEL_ARRAY_INDEX) &&
	       meta_annotation(&tj->meta, ANNOTATION_ARRAY_JOB_ID);
}

int slurm_array_pending(const struct trainingjob *tj, struct buf *out)
{
	struct slurm_array a;
	int32_t *started = NULL, *cancelled = NULL, *pending = NULL;
	size_t n_started = 0, n_cancelled = 0, n = 0;
	int err;

	if (!tj->spec.array || tj_phase_terminal(tj->status.phase))
		return 0;
	if (slurm_array_parse(tj->spec.array, SLURM_ARRAY_INDEX_LIMIT, &a, NULL, 0)) {
		slurm_array_release(&a);
		return 0;
	}
	err = slurm_indices_parse(tj->status.array_started, &started, &n_started);
	if (!err)
		err = slurm_indices_parse(tj->status.array_cancelled, &cancelled, &n_cancelled);
	if (!err && !(pending = calloc(a.n + 1, sizeof(*pending))))
		err = CADRE_ENOMEM;
	for (size_t i = 0; !err && i < a.n; i++) {
		bool in = false;

		for (size_t j = 0; j < n_started && !in; j++)
			in = started[j] == a.index[i];
		for (size_t j = 0; j < n_cancelled && !in; j++)
			in = cancelled[j] == a.index[i];
		if (!in)
			pending[n++] = a.index[i];
	}
	if (!err && n && out)
		err = slurm_array_task_str(pending, n, a.max_running, out);
	free(started);
	free(cancelled);
	free(pending);
	slurm_array_release(&a);
	return err ? err : (int)(n > 0);
}

bool slurm_row_shown(const struct trainingjob *tj)
{
	return !tj->spec.array || slurm_array_pending(tj, NULL) > 0;
}

int slurm_job_id(const struct trainingjob *tj, struct buf *out)
{
	const char *id = tj->status.job_id ? tj->status.job_id : "";

	if (slurm_is_element(tj))
		return buf_addf(out, "%s_%s", meta_annotation(&tj->meta, ANNOTATION_ARRAY_JOB_ID),
				meta_label(&tj->meta, LABEL_ARRAY_INDEX));
	if (tj->spec.array) {
		int e = buf_addf(out, "%s_[", id);

		if (!e && slurm_array_pending(tj, out) < 0)
			e = CADRE_ENOMEM;
		return e ? e : buf_addc(out, ']');
	}
	return buf_adds(out, id);
}

const char *slurm_job_name(const struct trainingjob *tj)
{
	const char *slurm = meta_label(&tj->meta, LABEL_SLURM_NAME);

	return slurm && *slurm ? slurm : tj->meta.name ? tj->meta.name : "";
}

bool slurm_job_matches(const struct trainingjob *tj, const char *word)
{
	const char *id = tj->status.job_id ? tj->status.job_id : "";
	const char *array = meta_annotation(&tj->meta, ANNOTATION_ARRAY_JOB_ID);
	const char *index = meta_label(&tj->meta, LABEL_ARRAY_INDEX);
	char element[64];

	if (!strcmp(id, word) || (array && !strcmp(array, word)))
		return true;
	if (!array || !index)
		return false;
	snprintf(element, sizeof(element), "%s_%s", array, index);
	return !strcmp(element, word);
}

bool slurm_jobs_match(const struct trainingjob *tj, const char *list)
{
	char word[64];

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");

		snprintf(word, sizeof(word), "%.*s", (int)n, p);
		if (slurm_job_matches(tj, word))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

void slurm_exit_code(const struct trainingjob *tj, char out[24])
{
	int32_t code = 0;

	/* A preempted job is killed, not failed: its exit_code stays 0 in slurmctld. */
	if (tj->status.has_last_failure && tj->status.phase == TJ_PHASE_FAILED &&
	    !slurm_preempted(tj))
		code = tj->status.last_failure.exit_code;
	if (code > 128 && code < 128 + 65)
		snprintf(out, 24, "0:%d", (int)(code - 128));
	else
		snprintf(out, 24, "%d:0", (int)(code < 0 ? 0 : code));
}

static int by_rank(const void *a, const void *b)
{
	const struct tj_node_status *x = *(const struct tj_node_status *const *)a;
	const struct tj_node_status *y = *(const struct tj_node_status *const *)b;

	return (x->rank > y->rank) - (x->rank < y->rank);
}

int slurm_nodelist(const struct trainingjob *tj, struct buf *out)
{
	const char *name = tj->meta.name ? tj->meta.name : "";
	const struct tj_node_status **ranks;
	size_t n = 0, len = strlen(name) + 16;
	char **names;
	int e = 0;

	if (!tj->status.n_nodes)
		return 0;
	ranks = calloc(tj->status.n_nodes, sizeof(*ranks));
	names = calloc(tj->status.n_nodes, sizeof(*names));
	if (!ranks || !names) {
		e = CADRE_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < tj->status.n_nodes; i++)
		if (tj->status.nodes[i].node && *tj->status.nodes[i].node)
			ranks[n++] = &tj->status.nodes[i];
	qsort(ranks, n, sizeof(*ranks), by_rank);
	for (size_t i = 0; i < n && !e; i++) {
		if (!(names[i] = malloc(len)))
			e = CADRE_ENOMEM;
		else
			snprintf(names[i], len, "%s-%d", name, (int)ranks[i]->rank);
	}
	if (!e)
		e = hostlist_compress((const char *const *)names, n, out);
out:
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(ranks);
	return e;
}

int slurm_squeue_field(struct buf *out, const char *text, int width, bool right)
{
	if (width < 0)
		return buf_adds(out, text);
	return buf_addf(out, right ? "%*.*s" : "%-*.*s", width, width, text);
}

/*
 * A host list as squeue prints it (_print_nodes): right-justified it is
 * never cut, since a cut list names other hosts; left-justified the
 * precision of "%.Ns" still cuts it.
 */
static int squeue_nodes_field(struct buf *out, const char *text, int width, bool right)
{
	if (width >= 0 && right)
		return buf_addf(out, "%*s", width, text);
	return slurm_squeue_field(out, text, width, right);
}

/* ---- squeue -o ---- */

static const struct { char letter; const char *header; } squeue_fields[] = {
	{ 'i', "JOBID" }, { 'j', "NAME" }, { 'u', "USER" }, { 't', "ST" },
	{ 'T', "STATE" }, { 'M', "TIME" }, { 'D', "NODES" }, { 'R', "NODELIST(REASON)" },
	{ 'N', "NODELIST" }, { 'r', "REASON" }, { 'P', "PARTITION" }, { 'l', "TIME_LIMIT" },
	{ 'a', "ACCOUNT" },
};

static const char *squeue_header_of(char letter)
{
	for (size_t i = 0; i < sizeof(squeue_fields) / sizeof(squeue_fields[0]); i++)
		if (squeue_fields[i].letter == letter)
			return squeue_fields[i].header;
	return NULL;
}

/* One "%[.][N]X" at *p (after the '%'): letter, width (-1: none), right. */
static int squeue_spec(const char **p, char *letter, int *width, bool *right)
{
	const char *s = *p;

	*right = *s == '.';
	s += *right;
	*width = -1;
	if (isdigit((unsigned char)*s)) {
		*width = 0;
		while (isdigit((unsigned char)*s) && *width < 1000)
			*width = *width * 10 + (*s++ - '0');
		if (*width >= 1000)
			return CADRE_EINVAL;
	}
	*letter = *s;
	if (*s != '%' && !squeue_header_of(*s))
		return CADRE_EINVAL;
	*p = s + 1;
	return 0;
}

int slurm_squeue_check(const char *format, size_t *bad)
{
	for (const char *p = format; *p;) {
		char letter;
		int width;
		bool right;

		if (*p++ != '%')
			continue;
		if (squeue_spec(&p, &letter, &width, &right)) {
			*bad = (size_t)(p - format - 1);
			return CADRE_EINVAL;
		}
	}
	return 0;
}

/*
 * Whether %R shows a reason (pending, suspended, failed) rather than the
 * hosts; a preempted job shows its hosts, as _print_job_reason_list has no
 * IS_JOB_PREEMPTED.
 */
static bool is_waiting(const struct trainingjob *tj)
{
	const char *st = slurm_state(tj, true, false);

	return !strcmp(st, "PD") || !strcmp(st, "S") || !strcmp(st, "F") || !strcmp(st, "TO");
}

/* The text of field letter for tj (tj NULL: the header); tmp holds it when built here. */
static int squeue_value(char letter, const struct trainingjob *tj, int64_t now,
			struct buf *tmp, const char **text, bool *nodes)
{
	char t[32];
	int e = 0;

	buf_reset(tmp);
	*nodes = tj && (letter == 'N' || (letter == 'R' && !is_waiting(tj)));
	if (!tj) {
		*text = squeue_header_of(letter);
		return 0;
	}
	switch (letter) {
	case 'i': e = slurm_job_id(tj, tmp); break;
	case 'j': *text = slurm_job_name(tj); return 0;
	case 'u': *text = slurm_user(tj); return 0;
	case 'a': *text = tj->meta.namespace ? tj->meta.namespace : ""; return 0;
	case 'P': *text = slurm_partition(tj); return 0;
	case 't': *text = slurm_state(tj, true, false); return 0;
	case 'T': *text = slurm_state(tj, false, false); return 0;
	case 'M': slurm_time_used(slurm_run_time(tj, now), t); e = buf_adds(tmp, t); break;
	case 'l': slurm_time_limit(tj, t); e = buf_adds(tmp, t); break;
	case 'D': e = buf_addf(tmp, "%d", (int)tj->spec.num_nodes); break;
	case 'N': e = slurm_nodelist(tj, tmp); break;
	case 'r': *text = slurm_reason(tj); return 0;
	case 'R':
		if (!is_waiting(tj))
			e = slurm_nodelist(tj, tmp);
		else if (tj->status.phase == TJ_PHASE_FAILED)
			e = buf_addf(tmp, "(%s)", tj->status.has_last_failure &&
				     tj->status.last_failure.reason ?
				     tj->status.last_failure.reason : "NonZeroExitCode");
		else
			e = buf_addf(tmp, "(%s)", slurm_reason(tj));
		break;
	default: return CADRE_EINVAL;
	}
	*text = buf_str(tmp);
	return e;
}

static int squeue_line(const char *format, const struct trainingjob *tj, int64_t now,
		       struct buf *out)
{
	struct buf tmp;
	int e = 0;

	buf_init(&tmp, (size_t)1 << 20);
	for (const char *p = format; *p && !e;) {
		const char *text = NULL;
		char letter;
		int width;
		bool right, nodes;

		if (*p != '%') {
			e = buf_addc(out, *p++);
			continue;
		}
		p++;
		if ((e = squeue_spec(&p, &letter, &width, &right)))
			break;
		if (letter == '%')
			e = buf_addc(out, '%');
		else if (!(e = squeue_value(letter, tj, now, &tmp, &text, &nodes)))
			e = nodes ? squeue_nodes_field(out, text, width, right) :
				    slurm_squeue_field(out, text, width, right);
	}
	buf_release(&tmp);
	return e;
}

int slurm_squeue_header(const char *format, struct buf *out)
{
	return squeue_line(format, NULL, 0, out);
}

int slurm_squeue_row(const char *format, const struct trainingjob *tj, int64_t now,
		     struct buf *out)
{
	return squeue_line(format, tj, now, out);
}

/* ---- sacct ---- */

enum sacct_id {
	F_JOBID, F_JOBIDRAW, F_JOBNAME, F_PARTITION, F_ACCOUNT, F_ALLOCCPUS, F_STATE,
	F_EXITCODE, F_ELAPSED, F_NNODES, F_NODELIST, F_USER, F_SUBMIT, F_START, F_END,
	F_TIMELIMIT,
};

/*
 * How src/common/print_fields.c prints a kind of field in a table: a string
 * is cut with "+" (print_fields_str), a number or a duration is never cut
 * (print_fields_uint32, print_fields_time_from_secs), a date is cut
 * without a mark (print_fields_date).
 */
enum sacct_kind { K_STR, K_NUM, K_DATE };

/* Names, default widths and kinds of src/sacct/sacct.c's field table. */
static const struct { const char *name; int width; enum sacct_kind kind; } sacct_fields[] = {
	[F_JOBID] = { "JobID", -12, K_STR }, [F_JOBIDRAW] = { "JobIDRaw", 12, K_STR },
	[F_JOBNAME] = { "JobName", 10, K_STR }, [F_PARTITION] = { "Partition", 10, K_STR },
	[F_ACCOUNT] = { "Account", 10, K_STR }, [F_ALLOCCPUS] = { "AllocCPUS", 10, K_NUM },
	[F_STATE] = { "State", 10, K_STR }, [F_EXITCODE] = { "ExitCode", 8, K_STR },
	[F_ELAPSED] = { "Elapsed", 10, K_NUM }, [F_NNODES] = { "NNodes", 8, K_NUM },
	[F_NODELIST] = { "NodeList", 15, K_STR }, [F_USER] = { "User", 9, K_STR },
	[F_SUBMIT] = { "Submit", 19, K_DATE }, [F_START] = { "Start", 19, K_DATE },
	[F_END] = { "End", 19, K_DATE }, [F_TIMELIMIT] = { "Timelimit", 10, K_STR },
};

#define N_SACCT (sizeof(sacct_fields) / sizeof(sacct_fields[0]))

int slurm_sacct_parse(const char *list, struct slurm_sacct_field *fields, size_t *n, size_t *bad)
{
	const char *p = list;

	*n = 0;
	while (*p) {
		size_t len = strcspn(p, ",%"), k;
		const char *start = p;

		for (k = 0; k < N_SACCT; k++)
			if (strlen(sacct_fields[k].name) == len &&
			    !strncasecmp(sacct_fields[k].name, p, len))
				break;
		if (k == N_SACCT || *n == SLURM_SACCT_MAX_FIELDS)
			goto bad;
		fields[*n].id = (int)k;
		fields[*n].width = sacct_fields[k].width;
		p += len;
		if (*p == '%') {
			int w = 0, digits = 0;

			for (p++; isdigit((unsigned char)*p) && digits < 4; p++, digits++)
				w = w * 10 + (*p - '0');
			if (!digits || digits > 3 || !w || (*p && *p != ','))
				goto bad;
			/* a width keeps the field's own justification */
			fields[*n].width = sacct_fields[k].width < 0 ? -w : w;
		}
		(*n)++;
		if (*p == ',')
			p++;
		continue;
bad:
		*bad = (size_t)(start - list);
		return CADRE_EINVAL;
	}
	if (!*n) {
		*bad = 0;
		return CADRE_EINVAL;
	}
	return 0;
}

static int sacct_cell(struct buf *out, const char *text, int width, enum sacct_kind kind,
		      enum slurm_sacct_mode mode, bool last)
{
	int w = abs(width);
	char cut[1024];

	if (mode == SLURM_SACCT_PARSABLE2 && last)
		return buf_adds(out, text);
	if (mode != SLURM_SACCT_TABLE)
		return buf_addf(out, "%s|", text);
	if (kind == K_NUM)
		return buf_addf(out, width < 0 ? "%-*s " : "%*s ", w, text);
	if (kind == K_STR && strlen(text) > (size_t)w && w > 0 && (size_t)w < sizeof(cut)) {
		snprintf(cut, sizeof(cut), "%.*s", w - 1, text);
		cut[w - 1] = '+';
		cut[w] = '\0';
		text = cut;
	}
	return buf_addf(out, width < 0 ? "%-*.*s " : "%*.*s ", w, w, text);
}

int slurm_sacct_cell(struct buf *out, const char *text, int width, enum slurm_sacct_mode mode,
		     bool last)
{
	return sacct_cell(out, text, width, K_STR, mode, last);
}

static void sacct_time(int64_t t, char out[32])
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (!t || !localtime_r(&tt, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(out, 32, "Unknown");
}

static int sacct_value(int id, const struct trainingjob *tj, int64_t now, struct buf *tmp,
		       const char **text)
{
	char t[32];
	int e = 0;

	buf_reset(tmp);
	switch (id) {
	case F_JOBID: e = slurm_job_id(tj, tmp); break;
	case F_JOBIDRAW: *text = tj->status.job_id ? tj->status.job_id : ""; return 0;
	case F_JOBNAME: *text = slurm_job_name(tj); return 0;
	case F_PARTITION: *text = slurm_partition(tj); return 0;
	case F_ACCOUNT: *text = tj->meta.namespace ? tj->meta.namespace : ""; return 0;
	case F_USER: *text = slurm_user(tj); return 0;
	case F_STATE: *text = slurm_state(tj, false, true); return 0;
	case F_ALLOCCPUS: {
		int64_t cpus = tj->spec.resources.has_cpus ?
			(tj->spec.resources.cpus_milli + 999) / 1000 : 0;

		e = buf_addf(tmp, "%lld", slurm_start_time(tj) ?
			     (long long)(cpus * tj->spec.num_nodes) : 0LL);
		break;
	}
	case F_EXITCODE: slurm_exit_code(tj, t); e = buf_adds(tmp, t); break;
	case F_ELAPSED: slurm_elapsed(slurm_run_time(tj, now), t); e = buf_adds(tmp, t); break;
	case F_NNODES: e = buf_addf(tmp, "%d", (int)tj->spec.num_nodes); break;
	case F_NODELIST:
		e = slurm_start_time(tj) ? slurm_nodelist(tj, tmp) : buf_adds(tmp, "None assigned");
		break;
	case F_SUBMIT: sacct_time(tj->meta.creation_timestamp, t); e = buf_adds(tmp, t); break;
	case F_START: sacct_time(slurm_start_time(tj), t); e = buf_adds(tmp, t); break;
	case F_END: sacct_time(tj->status.completion_time, t); e = buf_adds(tmp, t); break;
	case F_TIMELIMIT: slurm_time_limit(tj, t); e = buf_adds(tmp, t); break;
	default: return CADRE_EINVAL;
	}
	*text = buf_str(tmp);
	return e;
}

int slurm_sacct_header(const struct slurm_sacct_field *fields, size_t n,
		       enum slurm_sacct_mode mode, struct buf *out)
{
	int e = 0;

	for (size_t i = 0; i < n && !e; i++)
		e = sacct_cell(out, sacct_fields[fields[i].id].name, fields[i].width, K_DATE,
			       mode, i + 1 == n);
	e = e ? e : buf_addc(out, '\n');
	for (size_t i = 0; mode == SLURM_SACCT_TABLE && i < n && !e; i++) {
		for (int k = 0; k < abs(fields[i].width) && !e; k++)
			e = buf_addc(out, '-');
		e = e ? e : buf_addc(out, ' ');
	}
	if (mode == SLURM_SACCT_TABLE && !e)
		e = buf_addc(out, '\n');
	return e;
}

int slurm_sacct_row(const struct slurm_sacct_field *fields, size_t n, enum slurm_sacct_mode mode,
		    const struct trainingjob *tj, int64_t now, struct buf *out)
{
	struct buf tmp;
	int e = 0;

	buf_init(&tmp, (size_t)1 << 20);
	for (size_t i = 0; i < n && !e; i++) {
		const char *text;

		if (!(e = sacct_value(fields[i].id, tj, now, &tmp, &text)))
			e = sacct_cell(out, text, fields[i].width, sacct_fields[fields[i].id].kind,
				       mode, i + 1 == n);
	}
	buf_release(&tmp);
	return e ? e : buf_addc(out, '\n');
}

/* ---- sky jobs queue ---- */

void sky_duration(int64_t s, bool known, char out[64])
{
	static const struct { int64_t secs; const char *unit; } units[] = {
		{ 86400, "d" }, { 3600, "h" }, { 60, "m" }, { 1, "s" },
	};
	size_t i;

	if (!known) {
		snprintf(out, 64, "-");
		return;
	}
	s = s < 0 ? 0 : s;
	for (i = 0; i + 1 < sizeof(units) / sizeof(units[0]) && s < units[i].secs; i++)
		;
	if (i + 1 == sizeof(units) / sizeof(units[0]) || s % units[i].secs / units[i + 1].secs == 0)
		snprintf(out, 64, "%lld%s", (long long)(s / units[i].secs), units[i].unit);
	else
		snprintf(out, 64, "%lld%s %lld%s", (long long)(s / units[i].secs), units[i].unit,
			 (long long)(s % units[i].secs / units[i + 1].secs), units[i + 1].unit);
}

const char *sky_status(const struct trainingjob *tj)
{
	if (tj->meta.deleting && !tj_phase_terminal(tj->status.phase))
		return "CANCELLING";
	switch (tj->status.phase) {
	case TJ_PHASE_STARTING: return "STARTING";
	case TJ_PHASE_RUNNING: return "RUNNING";
	case TJ_PHASE_RESTARTING: return "RECOVERING";
	case TJ_PHASE_SUCCEEDED: return "SUCCEEDED";
	case TJ_PHASE_FAILED: return "FAILED";
	default: return "PENDING";
	}
}

int sky_resources(const struct trainingjob *tj, struct buf *out)
{
	const struct tj_resources *r = &tj->spec.resources;

	if (r->accelerators && *r->accelerators)
		return buf_addf(out, "%dx[%s]", (int)tj->spec.num_nodes, r->accelerators);
	if (r->cpus && *r->cpus)
		return buf_addf(out, "%dx[CPU:%s]", (int)tj->spec.num_nodes, r->cpus);
	return buf_addf(out, "%dx[CPU]", (int)tj->spec.num_nodes);
}

void sky_ago(int64_t then, int64_t now, char out[32])
{
	int64_t d = now > then ? now - then : 0;

	if (!then)
		snprintf(out, 32, "-");
	else if (d < 60)
		snprintf(out, 32, "%lld sec%s ago", (long long)d, d == 1 ? "" : "s");
	else if (d < 3600)
		snprintf(out, 32, "%lld min%s ago", (long long)(d / 60), d / 60 == 1 ? "" : "s");
	else if (d < 86400)
		snprintf(out, 32, "%lld hr%s ago", (long long)(d / 3600), d / 3600 == 1 ? "" : "s");
	else
		snprintf(out, 32, "%lld day%s ago", (long long)(d / 86400), d / 86400 == 1 ? "" : "s");
}
