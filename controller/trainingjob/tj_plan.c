#include "controller/trainingjob/tj_plan.h"
#include "base/buf.h"
#include "base/err.h"
#include "controller/admission/candidate.h"
#include "controller/build/build.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One planning pass: the input, the plan being built, and the first error. */
struct planner {
	const struct tj_input *in;
	const struct trainingjob *job;
	struct tj_plan *out;
	const char *wait_reason;  /* why the job is not there yet; static or borrowed from in */
	int err;
};

int64_t tj_restart_backoff_s(int attempt)
{
	int64_t s = 10;

	for (int i = 1; i < attempt && s < 300; i++)
		s *= 2;
	return s < 300 ? s : 300;
}

static void *grow(struct planner *p, void **items, size_t *n, size_t size)
{
	void *more = realloc(*items, (*n + 1) * size);

	if (!more) {
		p->err = CADRE_ENOMEM;
		return NULL;
	}
	*items = more;
	memset((char *)more + *n * size, 0, size);
	return (char *)more + (*n)++ * size;
}

/* The objects a job has one of: planned at most once per pass, whoever asks. */
static bool one_per_job(enum tj_action_kind kind)
{
	return kind == TJ_CREATE_ENTRYPOINT || kind == TJ_CREATE_SERVICE ||
	       kind == TJ_CREATE_PODGROUP || kind == TJ_DELETE_JOB;
}

static struct tj_action *action(struct planner *p, enum tj_action_kind kind, int rank,
				const struct podview *pod)
{
	struct tj_action *a;

	if (one_per_job(kind))
		for (size_t i = 0; i < p->out->n_actions; i++)
			if (p->out->actions[i].kind == kind)
				return &p->out->actions[i];
	a = grow(p, (void **)&p->out->actions, &p->out->n_actions, sizeof(*a));
	if (!a)
		return NULL;
	a->kind = kind;
	a->rank = rank;
	a->attempt = tj_attempt(&p->out->status);
	if (pod) {
		a->pod = pod->name;
		a->uid = pod->uid;
	}
	return a;
}

static bool reason_ok(const char *r);
static bool dependency_holds(struct planner *p);

static void event(struct planner *p, bool warning, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void event(struct planner *p, bool warning, const char *reason, const char *fmt, ...)
{
	struct tj_event *e = grow(p, (void **)&p->out->events, &p->out->n_events, sizeof(*e));
	struct buf b;
	va_list ap;

	if (!e)
		return;
	buf_init(&b, 4096);
	va_start(ap, fmt);
	if (buf_vaddf_cut(&b, fmt, ap))
		p->err = CADRE_ENOMEM;
	va_end(ap);
	e->warning = warning;
	e->reason = reason;
	e->message = buf_detach(&b, NULL);
	if (!e->message)
		p->err = CADRE_ENOMEM;
}

static void set_string(struct planner *p, char **field, const char *value)
{
	char *copy = NULL;

	if (value) {
		copy = strdup(value);
		if (!copy) {
			p->err = CADRE_ENOMEM;
			return;
		}
	}
	free(*field);
	*field = copy;
}

static void set_message(struct planner *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_message(struct planner *p, const char *fmt, ...)
{
	struct buf b;
	va_list ap;

	buf_init(&b, 4096);
	va_start(ap, fmt);
	if (buf_vaddf_cut(&b, fmt, ap))
		p->err = CADRE_ENOMEM;
	va_end(ap);
	free(p->out->status.message);
	p->out->status.message = buf_detach(&b, NULL);
	if (!p->out->status.message)
		p->err = CADRE_ENOMEM;
}

static void cond(struct planner *p, const char *type, bool status, const char *reason,
		 const char *message)
{
	int err = condition_set(&p->out->status.conditions, type, status ? "True" : "False",
				reason, message, p->job->meta.generation, p->in->now, NULL);

	if (err)
		p->err = err;
}

/* Set the condition False only when it is present: absent means never true. */
static void cond_clear(struct planner *p, const char *type, const char *reason,
		       const char *message)
{
	if (condition_find(&p->out->status.conditions, type))
		cond(p, type, false, reason, message);
}

/* Say why the job waits, for the Reconciling condition (plan_health). */
static void waiting(struct planner *p, const char *reason)
{
	p->wait_reason = reason;
}

static int num_nodes(const struct planner *p)
{
	return p->job->spec.num_nodes > 0 ? p->job->spec.num_nodes : 1;
}

static void requeue_in(struct planner *p, int64_t seconds)
{
	if (seconds < 1)
		seconds = 1;
	if (!p->out->requeue_after_s || seconds < p->out->requeue_after_s)
		p->out->requeue_after_s = seconds;
}

static bool pod_terminal(const struct podview *v)
{
	return v->phase == POD_SUCCEEDED || v->phase == POD_FAILED;
}

/* Delete pods not yet going; keep_terminal keeps finished ones for logs. */
static size_t delete_pods(struct planner *p, bool keep_terminal, int keep_rank)
{
	size_t live = 0;

	for (size_t i = 0; i < p->in->n_pods; i++) {
		const struct podview *v = &p->in->pods[i];

		if (keep_terminal && pod_terminal(v))
			continue;
		if (v->rank == keep_rank && keep_rank >= 0)
			continue;
		live++;
		if (!v->deleting)
			action(p, TJ_DELETE_POD, v->rank, v);
	}
	return live;
}

static void set_phase(struct planner *p, enum tj_phase phase)
{
	p->out->status.phase = phase;
}

static bool phase_was(const struct planner *p, enum tj_phase phase)
{
	return p->job->status.phase == phase;
}

static void clear_nodes(struct planner *p);

/*
 * The node the stored admission chose for rank: built-in mode keeps its
 * decision in status.nodes (docs/design.md 3.1). NULL in the other modes,
 * and for a rank it has none for.
 */
static const char *decided_node(const struct planner *p, int rank)
{
	const struct tj_status *st = &p->out->status;

	if (p->in->mode != GANG_BUILTIN)
		return NULL;
	for (size_t i = 0; i < st->n_nodes; i++)
		if (st->nodes[i].rank == rank)
			return st->nodes[i].node;
	return NULL;
}

static void node_status_release(struct tj_node_status *ns)
{
	free(ns->pod);
	free(ns->node);
	free(ns->ip);
	free(ns->phase);
}

/*
 * Rebuild status.nodes and readyNodes from the pods of the current attempt.
 * A rank whose pod does not exist (yet) keeps the node the admission chose
 * for it, without a phase: that is the record its pod is created from.
 */
static void record_topology(struct planner *p);

static void record_nodes(struct planner *p)
{
	struct tj_status *st = &p->out->status;
	int n = num_nodes(p), attempt = tj_attempt(st), ready = 0;
	struct tj_node_status *fresh = calloc((size_t)n, sizeof(*fresh));
	size_t n_fresh = 0;

	if (!fresh) {
		p->err = CADRE_ENOMEM;
		return;
	}
	for (int rank = 0; rank < n; rank++) {
		const struct podview *v = NULL;
		const char *decided = decided_node(p, rank);
		struct tj_node_status *ns;
		char name[320];

		for (size_t i = 0; i < p->in->n_pods; i++)
			if (p->in->pods[i].rank == rank && p->in->pods[i].attempt == attempt)
				v = &p->in->pods[i];
		if (!v && !decided)
			continue;
		ns = &fresh[n_fresh++];
		ns->rank = rank;
		snprintf(name, sizeof(name), "%s-%d", p->job->meta.name ? p->job->meta.name : "",
			 rank);
		set_string(p, &ns->pod, v ? v->name : name);
		set_string(p, &ns->node, v && v->node ? v->node : decided);
		if (!v)
			continue;
		set_string(p, &ns->ip, v->ip);
		set_string(p, &ns->phase, pod_phase_name(v->phase));
		if (v->phase == POD_RUNNING && !v->deleting)
			ready++;
	}
	clear_nodes(p);
	st->nodes = fresh;
	st->n_nodes = n_fresh;
	st->ready_nodes = ready;
	record_topology(p);
}

/*
 * status.topology: the values of spec.topology's level on the ranks' nodes,
 * each once, in rank order (docs/topology.md). Nothing without spec.topology
 * or before any rank has a node; a node whose label is not known is left out.
 */
static void record_topology(struct planner *p)
{
	struct tj_status *st = &p->out->status;
	const char *level = tj_topology_level(&p->job->spec);
	struct tj_topology_status t = { 0 };
	char value[64];

	tj_topology_status_release(&st->topology);
	if (!level || !p->in->node_label || !st->n_nodes)
		return;
	t.domains = calloc(st->n_nodes, sizeof(*t.domains));
	t.level = strdup(level);
	if (!t.domains || !t.level) {
		tj_topology_status_release(&t);
		p->err = CADRE_ENOMEM;
		return;
	}
	for (size_t i = 0; i < st->n_nodes; i++) {
		bool seen = false;

		if (!st->nodes[i].node ||
		    p->in->node_label(p->in->node_ctx, st->nodes[i].node, level, value,
				      sizeof(value)))
			continue;
		for (size_t j = 0; j < t.n_domains && !seen; j++)
			seen = !strcmp(t.domains[j], value);
		if (seen)
			continue;
		if (!(t.domains[t.n_domains] = strdup(value))) {
			tj_topology_status_release(&t);
			p->err = CADRE_ENOMEM;
			return;
		}
		t.n_domains++;
	}
	if (!t.n_domains) {
		tj_topology_status_release(&t);
		return;
	}
	st->topology = t;
}

static void clear_nodes(struct planner *p)
{
	struct tj_status *st = &p->out->status;

	for (size_t i = 0; i < st->n_nodes; i++)
		node_status_release(&st->nodes[i]);
	free(st->nodes);
	st->nodes = NULL;
	st->n_nodes = 0;
	st->ready_nodes = 0;
	tj_topology_status_release(&st->topology);
}

static void record_failure(struct planner *p, const struct podview *v, const char *reason,
			   const char *message)
{
	struct tj_failure *f = &p->out->status.last_failure;

	p->out->status.has_last_failure = true;
	f->rank = v ? v->rank : -1;
	f->exit_code = v ? v->exit_code : 0;
	f->time = p->in->now;
	set_string(p, &f->pod, v ? v->name : NULL);
	set_string(p, &f->node, v ? v->node : NULL);
	set_string(p, &f->reason, reason);
	set_string(p, &f->message, message);
}

static void finish(struct planner *p, bool success, const char *reason, const char *message)
{
	struct tj_status *st = &p->out->status;

	set_phase(p, success ? TJ_PHASE_SUCCEEDED : TJ_PHASE_FAILED);
	if (!st->completion_time)
		st->completion_time = p->in->now;
	cond(p, success ? "Succeeded" : "Failed", true, reason, message);
	cond_clear(p, "Running", success ? "Completed" : reason, message);
	cond_clear(p, "Restarting", success ? "Completed" : reason, message);
	set_message(p, "%s", message);
	event(p, !success, success ? "Succeeded" : reason, "%s", message);
}

/* Terminal jobs: stop what still runs, keep finished pods, honour the TTL. */
static void plan_terminal(struct planner *p)
{
	const struct tj_status *st = &p->out->status;
	const struct tj_spec *spec = &p->job->spec;

	delete_pods(p, true, -1);
	record_nodes(p);
	if (spec->has_ttl_seconds_after_finished && st->completion_time) {
		int64_t at = st->completion_time + spec->ttl_seconds_after_finished;

		/* A dependant that has not seen the end yet sees it first (tj_depend_read.h). */
		if (p->in->now >= at && p->in->awaited && p->in->now < at + TJ_TTL_AWAITED_MAX_S)
			requeue_in(p, 2);
		else if (p->in->now >= at)
			action(p, TJ_DELETE_JOB, -1, NULL);
		else
			requeue_in(p, at - p->in->now);
	}
}

/* Whom a restart is charged to (docs/design.md 1.3). */
enum blame {
	BLAME_USER,        /* the job's failure: restarts, against maxRestarts */
	BLAME_INFRA,       /* the infrastructure's: infraRestarts, against maxInfraRestarts */
	BLAME_NOT_COUNTED, /* spec.failurePolicy RestartNotCounted: infraRestarts too, said so */
	BLAME_NONE,        /* no failure (a preemption, a requeue): requeues, against no limit */
};

/* Append this failure to status.failures, dropping the oldest past the cap. */
static void record_history(struct planner *p, const struct podview *v, const char *reason,
			   bool infrastructure)
{
	struct tj_status *st = &p->out->status;
	struct tj_failure_record *f;

	if (st->n_failures == TJ_MAX_FAILURE_RECORDS) {
		free(st->failures[0].reason);
		free(st->failures[0].node);
		memmove(st->failures, st->failures + 1, (st->n_failures - 1) * sizeof(*f));
		st->n_failures--;
		memset(&st->failures[st->n_failures], 0, sizeof(*f));
	} else if (!grow(p, (void **)&st->failures, &st->n_failures, sizeof(*f))) {
		return;
	} else {
		st->n_failures--;
	}
	f = &st->failures[st->n_failures++];
	f->attempt = tj_attempt(st);
	f->infrastructure = infrastructure;
	f->rank = v ? v->rank : -1;
	f->exit_code = v ? v->exit_code : 0;
	f->time = p->in->now;
	set_string(p, &f->reason, reason);
	set_string(p, &f->node, v ? v->node : NULL);
}

/* "attempt 2: NodeLost on gpu-3 (rank 1); attempt 3: ..." of the infrastructure failures. */
static void list_infra_failures(const struct tj_status *st, struct buf *out)
{
	const char *sep = "";

	for (size_t i = 0; i < st->n_failures; i++) {
		const struct tj_failure_record *f = &st->failures[i];

		if (!f->infrastructure)
			continue;
		buf_addf_cut(out, "%sattempt %d: %s", sep, f->attempt, f->reason ? f->reason : "?");
		if (f->node)
			buf_addf_cut(out, " on %s", f->node);
		if (f->rank >= 0)
			buf_addf_cut(out, " (rank %d)", f->rank);
		sep = "; ";
	}
}

/*
 * A restart that is no failure: someone's priority or a person asked for
 * the room (Kueue's preemption, the scheduler's disruption, a stopped
 * queue, scontrol requeue). Counted in requeues, against no limit, and not
 * recorded as a failure; otherwise as restart() below.
 */
static void requeue_gang(struct planner *p, const char *cond_reason, const char *why)
{
	struct tj_status *st = &p->out->status;

	st->requeues++;
	set_phase(p, TJ_PHASE_RESTARTING);
	cond(p, "Restarting", true, cond_reason, why);
	cond_clear(p, "Running", cond_reason, why);
	cond(p, "Admitted", false, "Restarting", why);
	set_message(p, "%s; the gang is queued again (requeue %d: no failure, counted against no "
		    "limit)", why, st->requeues);
	event(p, true, cond_reason, "%s", p->out->status.message);
	delete_pods(p, false, -1);
	clear_nodes(p);
}

/*
 * Begin a gang restart: count it, remember why, delete the gang. The job
 * stays Restarting until every pod is gone, then queues again. The status
 * that says so is stored before any pod is deleted (tj_plan.h).
 */
static void restart(struct planner *p, enum blame blame, const char *cond_reason,
		    const struct podview *v, const char *why)
{
	struct tj_status *st = &p->out->status;
	const struct tj_spec *spec = &p->job->spec;
	bool user = blame == BLAME_USER;
	char msg[2048];

	if (blame == BLAME_NONE) {
		requeue_gang(p, cond_reason, why);
		return;
	}
	record_failure(p, v, v && v->reason ? v->reason : cond_reason, why);
	record_history(p, v, cond_reason, !user);
	if (user && st->restarts >= spec->max_restarts) {
		snprintf(msg, sizeof(msg), "%s; no restarts left (maxRestarts %d)", why,
			 spec->max_restarts);
		finish(p, false, "MaxRestartsExceeded", msg);
		cond(p, "Admitted", false, "MaxRestartsExceeded", msg);
		delete_pods(p, true, -1);
		record_nodes(p);
		return;
	}
	if (!user && st->infra_restarts >= spec->max_infra_restarts) {
		struct buf list;

		buf_init(&list, 1024);
		list_infra_failures(st, &list);
		snprintf(msg, sizeof(msg), "%s; no infrastructure restarts left (maxInfraRestarts "
			 "%d): %s", why, spec->max_infra_restarts, buf_str(&list));
		buf_release(&list);
		finish(p, false, "TooManyInfraRestarts", msg);
		cond(p, "Admitted", false, "TooManyInfraRestarts", msg);
		delete_pods(p, true, -1);
		record_nodes(p);
		return;
	}
	if (user)
		st->restarts++;
	else
		st->infra_restarts++;
	set_phase(p, TJ_PHASE_RESTARTING);
	cond(p, "Restarting", true, cond_reason, why);
	cond_clear(p, "Running", cond_reason, why);
	cond(p, "Admitted", false, !strcmp(cond_reason, "GangTimeout") ? "GangTimeout" : "Restarting",
	     why);
	if (user)
		set_message(p, "%s; restarting the gang (restart %d of %d)", why, st->restarts,
			    spec->max_restarts);
	else if (blame == BLAME_NOT_COUNTED)
		set_message(p, "%s; restarting the gang, not counted against maxRestarts "
			    "(spec.failurePolicy; infrastructure restart %d of %d)", why,
			    st->infra_restarts, spec->max_infra_restarts);
	else
		set_message(p, "%s; restarting the gang (infrastructure restart %d of %d, not "
			    "counted against maxRestarts)", why, st->infra_restarts,
			    spec->max_infra_restarts);
	event(p, true, cond_reason, "%s", p->out->status.message);
	delete_pods(p, false, -1);
	clear_nodes(p);
}

/*
 * At most this many nodes a job leaves behind of each kind: after failures
 * there a quarter of its gang, at least one, so that it cannot shut itself
 * out; after gang timeouts one a rank, since admission lets those go when
 * the job could not fit without them. Never more than 32 of a kind (the
 * CRD's 64 in all).
 */
static size_t excluded_cap(const struct planner *p, bool timed_out)
{
	size_t cap = (size_t)num_nodes(p) / (timed_out ? 1 : 4);

	if (cap < 1)
		cap = 1;
	return cap < 32 ? cap : 32;
}

static void excluded_remove(struct tj_status *st, size_t i)
{
	free(st->excluded_nodes[i].node);
	free(st->excluded_nodes[i].reason);
	memmove(st->excluded_nodes + i, st->excluded_nodes + i + 1,
		(st->n_excluded_nodes - i - 1) * sizeof(*st->excluded_nodes));
	st->n_excluded_nodes--;
}

/* Make room for one more excluded node of the kind: the first of it listed goes at the cap. */
static void excluded_make_room(struct planner *p, bool timed_out)
{
	struct tj_status *st = &p->out->status;
	size_t have = 0, first = st->n_excluded_nodes;

	for (size_t i = 0; i < st->n_excluded_nodes; i++)
		if (tj_excluded_timed_out(&st->excluded_nodes[i]) == timed_out && have++ == 0)
			first = i;
	if (have >= excluded_cap(p, timed_out))
		excluded_remove(st, first);
}

/* Drop excluded nodes older than TJ_EXCLUDED_NODE_TTL_S. */
static void expire_excluded(struct planner *p)
{
	struct tj_status *st = &p->out->status;
	size_t kept = 0;

	for (size_t i = 0; i < st->n_excluded_nodes; i++) {
		struct tj_excluded_node *x = &st->excluded_nodes[i];

		if (x->time && p->in->now - x->time >= TJ_EXCLUDED_NODE_TTL_S) {
			free(x->node);
			free(x->reason);
			continue;
		}
		st->excluded_nodes[kept++] = *x;
	}
	st->n_excluded_nodes = kept;
}

/*
 * Leave node behind for the job's later attempts (status.excludedNodes),
 * with reason, and say so on the Node as a Warning (never a cordon or a
 * taint). Already there: its time is renewed. At the cap the oldest goes.
 * A gang timeout (TJ_EXCLUDED_GANG_TIMEOUT) is no evidence against the
 * node: no Warning on it, and it does not replace a failure's entry.
 */
static void exclude_node(struct planner *p, const char *node, const char *reason, int rank)
{
	struct tj_status *st = &p->out->status;
	struct tj_excluded_node *x = NULL;
	bool timed_out = !strcmp(reason, TJ_EXCLUDED_GANG_TIMEOUT);
	struct tj_event *e;

	if (!node || !*node)
		return;
	for (size_t i = 0; i < st->n_excluded_nodes && !x; i++) {
		if (!st->excluded_nodes[i].node || strcmp(st->excluded_nodes[i].node, node))
			continue;
		if (tj_excluded_timed_out(&st->excluded_nodes[i]) == timed_out)
			x = &st->excluded_nodes[i];
		else if (timed_out)
			return;  /* excluded after a failure there already */
		else
			excluded_remove(st, i);  /* the failure replaces it, under its own cap */
	}
	if (!x) {
		excluded_make_room(p, timed_out);
		x = grow(p, (void **)&st->excluded_nodes, &st->n_excluded_nodes, sizeof(*x));
		if (!x)
			return;
		set_string(p, &x->node, node);
	}
	set_string(p, &x->reason, reason);
	x->time = p->in->now;
	if (timed_out)
		return;
	event(p, true, "NodeExcluded", "node %s is left behind by this job's next attempts: rank "
	      "%d failed there (%s); status.excludedNodes lists it for %dh", node, rank, reason,
	      TJ_EXCLUDED_NODE_TTL_S / 3600);
	if (!p->out->n_events)
		return;
	e = &p->out->events[p->out->n_events - 1];
	if (!strcmp(e->reason, "NodeExcluded") && !(e->node = strdup(node)))
		p->err = CADRE_ENOMEM;
}

/*
 * Say, as an event, why the job waits for a Volume, once per change: the
 * planner sees the condition it wrote last time, so a wait that has not
 * changed (same reason, same Volume) is not told again on every reconcile.
 */
static void volume_wait_event(struct planner *p, const char *reason, const char *msg)
{
	const struct condition *c = condition_find(&p->job->status.conditions, "VolumesReady");

	if (c && !strcmp(c->status, "False") && c->reason && !strcmp(c->reason, reason) &&
	    c->message && !strcmp(c->message, msg))
		return;
	/* A Volume that does not exist needs a person; a claim binding is normal. */
	event(p, !strcmp(reason, "VolumeNotFound"), reason, "%s", msg);
}

/*
 * A job whose Partition is not there waits for it, as for a Volume: applied
 * a moment before its Partition, or while an admin replaces it (a GitOps
 * delete and create), it starts once the Partition is back. cadre sbatch
 * refuses an unknown -p at submission, in Slurm's words.
 */
static bool partition_waits(struct planner *p)
{
	const struct condition *c = condition_find(&p->job->status.conditions, "Admitted");
	char msg[1024];

	if (!p->in->partition_missing)
		return false;
	snprintf(msg, sizeof(msg), "%s: waiting for the Partition to exist",
		 p->in->partition_missing);
	if (!c || strcmp(c->status, "False") || !c->reason ||
	    strcmp(c->reason, "PartitionNotFound") || !c->message || strcmp(c->message, msg))
		event(p, true, "PartitionNotFound", "%s", msg);
	cond(p, "Admitted", false, "PartitionNotFound", msg);
	waiting(p, "PartitionNotFound");
	set_phase(p, TJ_PHASE_PENDING);
	set_message(p, "%s", msg);
	return true;
}

static bool volumes_ready(struct planner *p)
{
	for (size_t i = 0; i < p->in->n_volumes; i++) {
		const struct tj_volume_state *v = &p->in->volumes[i];
		const char *reason = v->found ? "VolumeNotBound" : "VolumeNotFound";
		char msg[1024];

		if (v->found && v->bound)
			continue;
		if (!v->found)
			snprintf(msg, sizeof(msg), "Volume \"%s\" (mounted at %s) does not exist "
				 "in namespace %s; create it and the job starts once it is Bound",
				 v->volume, v->mount_path,
				 p->job->meta.namespace ? p->job->meta.namespace : "");
		else
			snprintf(msg, sizeof(msg), "Volume \"%s\" (mounted at %s) is not Bound yet; "
				 "kubectl describe volume.cadre.dev/%s says what its claim waits for",
				 v->volume, v->mount_path, v->volume);
		volume_wait_event(p, reason, msg);
		cond(p, "VolumesReady", false, reason, msg);
		waiting(p, reason);
		set_phase(p, TJ_PHASE_PENDING);
		set_message(p, "waiting for volumes: %s", msg);
		return false;
	}
	if (p->in->n_volumes)
		cond(p, "VolumesReady", true, "Bound", "every Volume is Bound");
	else
		cond(p, "VolumesReady", true, "NoVolumes", "the job mounts no Volumes");
	return true;
}

/*
 * spec.code: the job waits, Pending with WaitingForCode, until every bundle
 * it names is whole in its namespace, so that no pod starts without its
 * code; said as an event once per change, as volume waits are. A job whose
 * bundle was collected (--code-retention) and that would start again says
 * so the same way.
 */
static bool code_ready(struct planner *p)
{
	const struct condition *c;
	char msg[1024];

	if (!p->job->spec.n_code)
		return true;
	for (size_t i = 0; i < p->in->n_code; i++) {
		const struct tj_code_state *cs = &p->in->code[i];

		if (cs->complete)
			continue;
		snprintf(msg, sizeof(msg), "waiting for code %s: %s", cs->digest,
			 cs->why ? cs->why : "not in the namespace");
		c = condition_find(&p->job->status.conditions, "CodeReady");
		if (!c || strcmp(c->status, "False") || !c->message || strcmp(c->message, msg))
			event(p, false, "WaitingForCode", "%s", msg);
		cond(p, "CodeReady", false, "WaitingForCode", msg);
		waiting(p, "WaitingForCode");
		set_phase(p, TJ_PHASE_PENDING);
		set_message(p, "%s", msg);
		return false;
	}
	if (p->in->n_code < p->job->spec.n_code) {
		waiting(p, "WaitingForCode");
		set_phase(p, TJ_PHASE_PENDING);
		set_message(p, "waiting for code: its bundles are not read yet");
		return false;
	}
	cond(p, "CodeReady", true, "CodePresent", "every code bundle is in the namespace");
	return true;
}

/* Kueue's word while a job waits, as an event once per change, as volume waits are. */
static void kueue_wait_event(struct planner *p, const struct kueue_decision *d)
{
	const struct condition *c = condition_find(&p->job->status.conditions, "Admitted");

	if (c && !strcmp(c->status, "False") && c->reason && !strcmp(c->reason, d->reason) &&
	    c->message && !strcmp(c->message, d->message))
		return;
	/* Kueue missing needs a person; waiting for quota is normal. */
	event(p, !strcmp(d->reason, "NotManagedByKueue"), d->reason, "%s", d->message);
}

/*
 * Kueue admits in its Workload for the pod group (kueue.h): that decides,
 * never the pods' gates. The pods only tell why there is no Workload.
 */
static bool kueue_admitted(struct planner *p, size_t have, size_t managed,
			   struct kueue_decision *d)
{
	struct kueue_view v = { 0 };

	if (p->in->kueue)
		v = *p->in->kueue;
	v.queue = p->job->spec.queue;
	v.namespace = p->job->meta.namespace;
	v.pods = have;
	v.managed = managed;
	v.n = (size_t)num_nodes(p);
	kueue_decide(&v, d);
	if (d->verdict == KUEUE_ADMIT)
		return true;
	if (d->verdict == KUEUE_EVICT)
		return false;
	kueue_wait_event(p, d);
	cond(p, "Admitted", false, d->reason, d->message);
	waiting(p, d->reason);
	set_phase(p, TJ_PHASE_QUEUED);
	set_message(p, "%s", d->message);
	return false;
}

/* After admission too: Kueue evicting the group restarts it; a preemption is no failure. */
static bool kueue_evicted(struct planner *p, const struct kueue_decision *given)
{
	struct kueue_decision d;

	if (!given) {
		struct kueue_view v = { 0 };

		if (!p->in->kueue)
			return false;
		v = *p->in->kueue;
		v.n = (size_t)num_nodes(p);
		kueue_decide(&v, &d);
		given = &d;
	}
	if (given->verdict != KUEUE_EVICT)
		return false;
	restart(p, given->no_failure ? BLAME_NONE : BLAME_INFRA,
		reason_ok(given->reason) ? given->reason : "Evicted", NULL, given->message);
	return true;
}

/*
 * The first admission: its time, and the spec of the job's Partition then,
 * so that what the job took from it is kept (tj_status.partition_spec).
 */
static void first_admission(struct planner *p)
{
	struct tj_status *st = &p->out->status;

	if (st->admitted_time)
		return;
	st->admitted_time = p->in->now;
	if (p->in->partition_spec && !st->partition_spec &&
	    !(st->partition_spec = json_deep_copy(p->in->partition_spec)))
		p->err = CADRE_ENOMEM;
}

static void admit(struct planner *p, const char *message)
{
	cond(p, "Admitted", true, "Admitted", message);
	first_admission(p);
	p->out->admitted_now = true;
	event(p, false, "Admitted", "%s", message);
}

/* The input's create refusal when it still holds: this attempt, its pod still missing. */
static const struct tj_refusal *live_refusal(const struct planner *p,
					     const struct podview **by_rank)
{
	const struct tj_refusal *r = p->in->refusal;

	if (!r || !r->pod || r->attempt != tj_attempt(&p->out->status))
		return NULL;
	if (r->rank == TJ_REFUSAL_ENTRYPOINT)
		return p->in->entrypoint_exists ? NULL : r;
	if (r->rank == TJ_REFUSAL_SERVICE) {
		if (p->in->service_exists)
			return NULL;
		for (int i = 0; i < num_nodes(p); i++)
			if (!by_rank[i])
				return r;
		return NULL;  /* a whole gang has found its peers already */
	}
	if (r->rank < 0 || r->rank >= num_nodes(p) || by_rank[r->rank])
		return NULL;
	return r;
}

/*
 * What a refusal could not create: "ConfigMap <name>", "Service <name>", or
 * "pod <name>", followed by " (rank <r>)" when with_rank.
 */
static void refused_object(const struct tj_refusal *r, bool with_rank, char *out, size_t size)
{
	if (r->rank == TJ_REFUSAL_ENTRYPOINT)
		snprintf(out, size, "ConfigMap %s", r->pod);
	else if (r->rank == TJ_REFUSAL_SERVICE)
		snprintf(out, size, "Service %s", r->pod);
	else if (with_rank)
		snprintf(out, size, "pod %s (rank %d)", r->pod, r->rank);
	else
		snprintf(out, size, "pod %s", r->pod);
}

/*
 * When the gang timeout of a refused create starts: at this attempt's
 * admission, like the gang's; before admission (Kueue cannot admit pods
 * that do not exist) at the first refusal.
 */
static int64_t refusal_since(const struct planner *p, const struct tj_refusal *r)
{
	const struct condition *c = condition_find(&p->out->status.conditions, "Admitted");

	if (c && !strcmp(c->status, "True") && c->last_transition_time)
		return c->last_transition_time;
	return r->first_time;
}

/*
 * A pod the API server refuses to create (Pod Security, a quota, a
 * webhook): the gang timeout, counted from since, bounds how long that may
 * last. Past it the spec cannot run in this namespace: a failure of user
 * input, counted against maxRestarts. Returns true when it restarted.
 */
static bool refusal_expired(struct planner *p, const struct tj_refusal *r, int64_t since)
{
	int64_t timeout = p->job->spec.gang_timeout_seconds;
	struct podview v = { .name = r->pod, .rank = r->rank, .attempt = r->attempt };
	char why[1024], what[320];

	if (p->in->now < since + timeout)
		return false;
	refused_object(r, true, what, sizeof(what));
	snprintf(why, sizeof(why), "the API server refused to create %s for %llds: %s",
		 what, (long long)timeout, r->message && *r->message ? r->message : "no message");
	/* lastFailure names a pod; a ConfigMap or a Service is named in the message only. */
	restart(p, BLAME_USER, "CreateRefused", r->rank < 0 ? NULL : &v, why);
	return true;
}

/* Until then, say why at once: in status.message and in the condition that waits. */
static void say_refused(struct planner *p, const struct tj_refusal *r, const char *cond_type,
			int64_t since)
{
	char why[1024], what[320];

	/* A pod's name says its rank already. */
	refused_object(r, false, what, sizeof(what));
	snprintf(why, sizeof(why), "cannot create %s: %s", what,
		 r->message && *r->message ? r->message : "refused by the API server");
	cond(p, cond_type, false, "CreateRefused", why);
	set_message(p, "%s", why);
	waiting(p, "CreateRefused");
	requeue_in(p, since + p->job->spec.gang_timeout_seconds - p->in->now);
}

/* --- native gang mode: kube-scheduler admits the PodGroup (docs/gang-admission.md) --- */

/* The current attempt's PodGroup, if the cache has it and it is not going. */
static const struct tj_podgroup *current_podgroup(const struct planner *p)
{
	int attempt = tj_attempt(&p->out->status);

	for (size_t i = 0; i < p->in->n_podgroups; i++)
		if (p->in->podgroups[i].attempt == attempt && !p->in->podgroups[i].deleting)
			return &p->in->podgroups[i];
	return NULL;
}

/* A PodGroup of another attempt goes: its status and minCount belong to that attempt. */
static void delete_podgroups(struct planner *p, int keep_attempt)
{
	if (p->in->mode != GANG_NATIVE)
		return;
	for (size_t i = 0; i < p->in->n_podgroups; i++) {
		const struct tj_podgroup *pg = &p->in->podgroups[i];
		struct tj_action *a;

		if (pg->attempt == keep_attempt || pg->deleting)
			continue;
		a = action(p, TJ_DELETE_PODGROUP, -1, NULL);
		if (a)
			a->pod = pg->name;
	}
}

/* The gang waits for the scheduler: Queued, Admitted=False with why. */
static void native_wait(struct planner *p, const char *reason, const char *msg)
{
	cond(p, "Admitted", false, reason, msg);
	waiting(p, reason);
	set_phase(p, TJ_PHASE_QUEUED);
	set_message(p, "%s", msg);
}

/*
 * What a native gang waits for: kube-scheduler to place its group (name;
 * NULL: the current attempt's, being made). No count of the pods created:
 * the pass that makes the group sends them all, and a count that follows
 * only the watch catching up would be one more status write.
 */
static const char *scheduler_wait(struct planner *p, const char *name, int n, char *msg,
				  size_t size)
{
	char made[256];

	if (!name) {
		if (build_podgroup_name(p->job->meta.name, tj_attempt(&p->out->status), made,
					sizeof(made)))
			snprintf(made, sizeof(made), "of attempt %d", tj_attempt(&p->out->status));
		name = made;
	}
	snprintf(msg, size, "waiting for kube-scheduler to place pod group %s (%d pods)", name, n);
	return msg;
}

/*
 * The part of spec.topology a gang mode cannot say, told once per attempt
 * as its first pods are made (docs/topology.md): Kueue takes required or
 * preferred, not both; a PodGroup takes required only.
 */
static void topology_unexpressed(struct planner *p)
{
	const struct tj_topology *t = &p->job->spec.topology;
	const char *mode = p->in->mode == GANG_KUEUE ? "Kueue" : "a PodGroup";
	char what[256] = "";

	if (!t->set || (p->in->mode != GANG_KUEUE && p->in->mode != GANG_NATIVE))
		return;
	if (p->in->mode == GANG_KUEUE && t->required && t->preferred)
		snprintf(what, sizeof(what), "preferred (%s): Kueue takes one of required and "
			 "preferred, and has required", t->preferred);
	else if (p->in->mode == GANG_NATIVE && (t->preferred || t->has_segment))
		snprintf(what, sizeof(what), "%s%s%s: a PodGroup takes one required level only",
			 t->preferred ? "preferred" : "", t->preferred && t->has_segment ?
			 " and " : "", t->has_segment ? "segment" : "");
	if (*what)
		event(p, true, "TopologyNotExpressible", "%s cannot say spec.topology.%s; the "
		      "pods are placed without it", mode, what);
}

/*
 * Before admission: the PodGroup, then every pod naming it, ungated, in the
 * same pass (the reconciler sends the pods only once the group's create
 * succeeded: a pod naming a missing group never reaches the scheduler's
 * queue); then mirror the scheduler. Scheduled (or every pod bound, should
 * the condition lag) is the admission. Returns true when the gang is admitted.
 */
static bool native_admitted(struct planner *p, const struct podview **by_rank,
			    const struct tj_refusal *refused, int64_t refused_since)
{
	const struct tj_podgroup *pg = current_podgroup(p);
	const struct condition *c = condition_find(&p->job->status.conditions, "Admitted");
	int n = num_nodes(p), have = 0, bound = 0;
	const char *reason;
	char msg[1024];

	if (refused && refusal_expired(p, refused, refused_since))
		return false;
	if (!pg) {
		if (p->in->expectations_met) {
			action(p, TJ_CREATE_PODGROUP, -1, NULL);
			topology_unexpressed(p);
			for (int r = 0; r < n; r++)
				if (!by_rank[r])
					action(p, TJ_CREATE_POD, r, NULL);
		}
		/* Said as the wait is said once the group is seen: made in this pass, it is
		 * the same wait, and no second write tells it. */
		native_wait(p, "WaitingForScheduler", scheduler_wait(p, NULL, n, msg, sizeof(msg)));
		return false;
	}
	for (int r = 0; r < n; r++) {
		if (!by_rank[r] && p->in->expectations_met)
			action(p, TJ_CREATE_POD, r, NULL);
		have += by_rank[r] != NULL;
		bound += by_rank[r] && by_rank[r]->node;
	}
	if (pg->state == TJ_PODGROUP_SCHEDULED || (have == n && bound == n)) {
		snprintf(msg, sizeof(msg), "kube-scheduler placed pod group %s (%d pods)",
			 pg->name, n);
		admit(p, msg);
		return true;
	}
	/* Placed as one, no pod of the group has a node yet: the list of them would only
	 * follow the watch, one more write. They are listed once placed. */
	clear_nodes(p);
	if (refused) {
		say_refused(p, refused, "Admitted", refused_since);
		return false;
	}
	if (pg->state == TJ_PODGROUP_UNSCHEDULABLE) {
		reason = reason_ok(pg->reason) ? pg->reason : "Unschedulable";
		snprintf(msg, sizeof(msg), "kube-scheduler cannot place pod group %s (%d pods): %s",
			 pg->name, n, pg->message && *pg->message ? pg->message : "no message");
		/* Once per change of what the scheduler says, not once per reconcile. */
		if (!c || strcmp(c->status, "False") || strcmp(c->reason, reason) ||
		    strcmp(c->message ? c->message : "", msg))
			event(p, false, reason, "%s", msg);
		native_wait(p, reason, msg);
		return false;
	}
	native_wait(p, "WaitingForScheduler", scheduler_wait(p, pg->name, n, msg, sizeof(msg)));
	return false;
}

/* After admission: the scheduler preempting the group requeues it, no failure. */
static bool native_disrupted(struct planner *p)
{
	const struct tj_podgroup *pg = current_podgroup(p);
	char why[1024];

	if (!pg || !pg->disrupted)
		return false;
	snprintf(why, sizeof(why), "kube-scheduler disrupted pod group %s: %s", pg->name,
		 pg->disruption_message && *pg->disruption_message ? pg->disruption_message :
		 "no message");
	restart(p, BLAME_NONE, "Preempted", NULL, why);
	return true;
}

/* The gang of the current attempt is admitted: create, ungate, watch it.
 * by_rank is zeroed scratch space for num_nodes entries. */
/* What this attempt's pods say, rank by rank: the census the gang decides on. */
struct gang_census {
	const struct podview *user_fail, *infra_fail, *start_trouble, *sched_trouble;
	int running, succeeded, have;
};

/* File this attempt's pods by rank and count them. */
static void gang_census(struct planner *p, const struct podview **by_rank, int n, int attempt,
			struct gang_census *c)
{
	const struct tj_input *in = p->in;

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < in->n_pods; i++) {
		const struct podview *v = &in->pods[i];

		if (v->attempt != attempt || v->rank < 0 || v->rank >= n)
			continue;
		by_rank[v->rank] = v;
	}
	for (int r = 0; r < n; r++) {
		const struct podview *v = by_rank[r];

		if (!v)
			continue;
		c->have++;
		if (v->phase == POD_RUNNING && !v->deleting)
			c->running++;
		if (v->phase == POD_SUCCEEDED)
			c->succeeded++;
		if (v->deleting && !v->deleted_by_us && !pod_terminal(v) && !c->infra_fail)
			c->infra_fail = v;
		else if (v->trouble == POD_TROUBLE_EXITED && !c->user_fail)
			c->user_fail = v;
		/* Its scratch overflowed: what the job wrote, not the node's doing. */
		else if (v->trouble == POD_TROUBLE_EVICTED && v->over_storage)
			c->user_fail = c->user_fail ? c->user_fail : v;
		else if ((v->trouble == POD_TROUBLE_EVICTED || v->trouble == POD_TROUBLE_NODE_LOST ||
			  v->trouble == POD_TROUBLE_DEVICE) && (!c->infra_fail ||
			 (c->infra_fail->evidence == POD_NODE_NONE && v->evidence != POD_NODE_NONE)))
			c->infra_fail = v;
		else if (v->trouble == POD_TROUBLE_START && !c->start_trouble)
			c->start_trouble = v;
		else if (v->trouble == POD_TROUBLE_UNSCHEDULABLE && !c->sched_trouble)
			c->sched_trouble = v;
		/*
		 * A node that is gone or not Ready took the pod with it; but one just
		 * bound to a node not yet Ready (or not yet in the cache) has lost
		 * nothing: kube-scheduler may bind to a node before it reports Ready.
		 * Should that node never come up, the pod GC or the gang timeout ends it.
		 */
		if (v->node && v->phase != POD_PENDING && !pod_terminal(v) && in->node_ok &&
		    !in->node_ok(in->node_ctx, v->node) && !c->infra_fail)
			c->infra_fail = v;
	}
}

/*
 * A rank whose pod the stored status has seen (it has a phase, or the whole
 * gang was Running) and is gone was deleted by someone: restart. A rank
 * with only its admitted node recorded has a pod still to be created.
 */
/*
 * Whether node has a NoExecute taint the job does not tolerate: a pod of it
 * that vanished was the taint's eviction (kube-controller-manager deletes
 * it; the DisruptionTarget condition it writes first may never reach the
 * cache), so the node is the evidence.
 */
static bool tainted(const struct planner *p, const char *node)
{
	return node && *node && p->in->node_evicts && p->in->node_evicts(p->in->evicts_ctx, node);
}

static bool gang_deleted_outside(struct planner *p, const struct podview **by_rank, int n,
				 int attempt)
{
	bool was_running = p->job->status.phase == TJ_PHASE_RUNNING;
	char why[1024];

	for (size_t i = 0; i < p->job->status.n_nodes; i++) {
		const struct tj_node_status *ns = &p->job->status.nodes[i];
		bool seen = was_running || (ns->phase && *ns->phase);

		if (ns->rank >= 0 && ns->rank < n && !by_rank[ns->rank] && seen &&
		    tj_attempt(&p->job->status) == attempt) {
			if (tainted(p, ns->node)) {
				snprintf(why, sizeof(why), "pod %s (rank %d) was evicted by a NoExecute "
					 "taint of node %s it does not tolerate", ns->pod ? ns->pod : "?",
					 ns->rank, ns->node);
				exclude_node(p, ns->node, "Tainted", ns->rank);
			} else {
				snprintf(why, sizeof(why), "pod %s (rank %d) was deleted outside cadre",
					 ns->pod ? ns->pod : "?", ns->rank);
			}
			restart(p, BLAME_INFRA, "Evicted", NULL, why);
			return true;
		}
	}
	return false;
}

/*
 * Kueue mode before admission: the pods exist before Kueue admits them, so
 * create them first. True when the pass ends here (not admitted yet).
 */
static bool gang_kueue_wait(struct planner *p, const struct podview **by_rank, int n, int have,
			    const struct tj_refusal *refused, int64_t refused_since)
{
	const struct tj_input *in = p->in;
	struct kueue_decision kd;
	size_t kueue_managed = 0;

	if (refused && refusal_expired(p, refused, refused_since))
		return true;
	if (in->expectations_met && !have)
		topology_unexpressed(p);
	if (in->expectations_met)
		for (int r = 0; r < n; r++)
			if (!by_rank[r])
				action(p, TJ_CREATE_POD, r, NULL);
	for (int r = 0; r < n; r++)
		if (by_rank[r] && by_rank[r]->kueue_managed)
			kueue_managed++;
	if (!in->service_exists)
		action(p, TJ_CREATE_SERVICE, -1, NULL);
	if (!kueue_admitted(p, (size_t)have, kueue_managed, &kd)) {
		if (kueue_evicted(p, &kd))
			return true;
		if (refused)
			say_refused(p, refused, "Admitted", refused_since);
		else if (kd.recheck)
			requeue_in(p, 30);  /* no Workload event will say that Kueue came */
		record_nodes(p);
		return true;
	}
	admit(p, kd.message);
	return false;
}

/* The CamelCase reason status.excludedNodes gives a node's evidence. */
static const char *evidence_reason(enum pod_node_evidence e)
{
	switch (e) {
	case POD_NODE_PRESSURE: return "NodePressure";
	case POD_NODE_TAINT: return "Tainted";
	case POD_NODE_DEVICE: return "DeviceUnhealthy";
	case POD_NODE_NONE: break;
	}
	return NULL;
}

/*
 * The infrastructure took a pod (a lost node, an eviction, a bad device, a
 * delete): restart without blame. A reason that points at the node leaves
 * the node behind for the next attempts.
 */
static void gang_restart_infra(struct planner *p, const struct podview *v)
{
	const struct tj_input *in = p->in;
	bool node_lost = v->trouble == POD_TROUBLE_NODE_LOST ||
			 (v->node && in->node_ok && !in->node_ok(in->node_ctx, v->node));
	const char *reason = node_lost ? "NodeLost" : evidence_reason(v->evidence);
	bool taint = !reason && v->deleting && v->trouble == POD_TROUBLE_NONE && tainted(p, v->node);
	char why[1024];

	if (node_lost)
		snprintf(why, sizeof(why), "node %s of rank %d (pod %s) was lost",
			 v->node ? v->node : "?", v->rank, v->name);
	else if (v->trouble == POD_TROUBLE_DEVICE)
		snprintf(why, sizeof(why), "device %s of rank %d (pod %s) on node %s is reported "
			 "Unhealthy", v->device ? v->device : "?", v->rank, v->name,
			 v->node ? v->node : "?");
	else if (taint)
		snprintf(why, sizeof(why), "pod %s (rank %d) was evicted by a NoExecute taint of "
			 "node %s it does not tolerate", v->name, v->rank, v->node);
	else
		snprintf(why, sizeof(why), "pod %s (rank %d) was %s%s%s", v->name, v->rank,
			 v->deleting && v->trouble == POD_TROUBLE_NONE ?
			 "deleted outside cadre" : "evicted or preempted",
			 v->message ? ": " : "", v->message ? v->message : "");
	if (taint)
		reason = "Tainted";
	if (reason)
		exclude_node(p, v->node, reason, v->rank);
	restart(p, BLAME_INFRA, node_lost ? "NodeLost" : v->trouble == POD_TROUBLE_DEVICE ?
		"DeviceUnhealthy" : "Evicted", v, why);
}

/*
 * A rank the watchdog ended (spec.hang): the job's failure, or with action
 * Fail its end; but the same node hung in the attempt before too, and that
 * points at the node: left behind, and an infrastructure restart.
 */
static void gang_hung(struct planner *p, const struct podview *v)
{
	const struct tj_failure *last = &p->job->status.last_failure;
	bool again = p->job->status.has_last_failure && last->reason && v->node && last->node &&
		     !strcmp(last->reason, "Hung") && !strcmp(last->node, v->node);
	const char *what = v->message && strlen(v->message) > strlen(PODVIEW_HUNG_MESSAGE) ?
			   v->message + strlen(PODVIEW_HUNG_MESSAGE) : "no progress";
	char why[1024];

	snprintf(why, sizeof(why), "rank %d (pod %s) on node %s is hung: %s", v->rank, v->name,
		 v->node ? v->node : "?", what);
	if (p->job->spec.hang.action == TJ_HANG_FAIL) {
		struct podview hung = *v;

		hung.reason = "Hung";
		record_failure(p, &hung, "Hung", why);
		record_history(p, &hung, "Hung", false);
		finish(p, false, "Hung", why);
		cond(p, "Admitted", false, "Hung", why);
		delete_pods(p, true, -1);
		record_nodes(p);
		return;
	}
	if (again) {
		struct podview hung = *v;

		hung.reason = "Hung";
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "; it hung on the same node "
			 "in the attempt before");
		exclude_node(p, v->node, "Hung", v->rank);
		restart(p, BLAME_INFRA, "Hung", &hung, why);
		return;
	}
	{
		struct podview hung = *v;

		hung.reason = "Hung";
		restart(p, BLAME_USER, "Hung", &hung, why);
	}
}

/*
 * The kubelet evicted a rank for the local storage it wrote: the job's
 * failure, counted against maxRestarts, and the node stays in use. An
 * emptyDir is named by its spec.scratch path (scratch-N is the N-th in path
 * order, build_pod.c); the restart's new pod starts with empty scratch.
 */
static void gang_over_storage(struct planner *p, const struct podview *v)
{
	const struct tj_spec *spec = &p->job->spec;
	struct podview full = *v;
	char volume[64], limit[64], why[1024];
	const char *path = NULL;
	unsigned long idx = 0;
	char *end;

	podview_storage_eviction(v->message, volume, sizeof(volume), limit, sizeof(limit));
	if (!strncmp(volume, "scratch-", 8)) {
		idx = strtoul(volume + 8, &end, 10);
		if (end != volume + 8 && !*end && idx < spec->n_scratch)
			path = spec->scratch[idx].mount_path;
	}
	if (path && !*limit)
		snprintf(limit, sizeof(limit), "%s", spec->scratch[idx].size ?
			 spec->scratch[idx].size : "its size");
	if (path)
		snprintf(why, sizeof(why), "scratch %s over %s on node %s (rank %d, pod %s): the "
			 "kubelet evicted it; ask spec.scratch for more, or write less there",
			 path, limit, v->node ? v->node : "?", v->rank, v->name);
	else
		snprintf(why, sizeof(why), "rank %d (pod %s) on node %s wrote more local storage "
			 "than its limit, and the kubelet evicted it: %s", v->rank, v->name,
			 v->node ? v->node : "?", v->message ? v->message : "no message");
	full.reason = "ScratchFull";
	restart(p, BLAME_USER, "ScratchFull", &full, why);
}

/*
 * A rank's program exited non-zero: spec.failurePolicy says what its exit
 * code means; without a rule for it, a restart counted against maxRestarts.
 */
static void gang_user_failure(struct planner *p, const struct podview *v)
{
	enum tj_failure_action action = tj_failure_action_for(&p->job->spec, v->exit_code);
	char why[1024];

	snprintf(why, sizeof(why), "rank %d (pod %s) failed with exit code %d%s%s", v->rank,
		 v->name, v->exit_code, v->message ? ": " : "", v->message ? v->message : "");
	if (action == TJ_FAILURE_FAIL) {
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "; spec.failurePolicy fails "
			 "the job on exit code %d", v->exit_code);
		record_failure(p, v, v->reason ? v->reason : "Error", why);
		record_history(p, v, "PodFailed", false);
		finish(p, false, "FailurePolicy", why);
		cond(p, "Admitted", false, "FailurePolicy", why);
		delete_pods(p, true, -1);
		record_nodes(p);
		return;
	}
	restart(p, action == TJ_FAILURE_RESTART_NOT_COUNTED ? BLAME_NOT_COUNTED : BLAME_USER,
		"PodFailed", v, why);
}

/*
 * The outcome: success by the job's policy, else a failed pod (the user's
 * exit, or the infrastructure's). True when the attempt ended here.
 */
static bool gang_outcome(struct planner *p, const struct podview **by_rank, int n,
			 const struct gang_census *c)
{
	const struct tj_spec *spec = &p->job->spec;
	const struct podview *v = c->user_fail;
	char why[1024];

	/* Success first: with Rank0, rank 0 finishing wins over the others. */
	if (spec->success_policy == TJ_SUCCESS_RANK0 && by_rank[0] &&
	    by_rank[0]->phase == POD_SUCCEEDED) {
		finish(p, true, "Rank0Succeeded", "rank 0 succeeded");
		delete_pods(p, true, 0);
		record_nodes(p);
		return true;
	}
	if (spec->success_policy == TJ_SUCCESS_ALL && c->succeeded == n) {
		snprintf(why, sizeof(why), "all %d pods succeeded", n);
		finish(p, true, "AllSucceeded", why);
		record_nodes(p);
		return true;
	}
	/* A node that went bad under a rank explains whatever the rank did next. */
	if (c->infra_fail && c->infra_fail->evidence != POD_NODE_NONE) {
		gang_restart_infra(p, c->infra_fail);
		return true;
	}
	if (v && v->hung) {
		gang_hung(p, v);
		return true;
	}
	if (v && v->over_storage) {
		gang_over_storage(p, v);
		return true;
	}
	if (v) {
		gang_user_failure(p, v);
		return true;
	}
	if (c->infra_fail) {
		gang_restart_infra(p, c->infra_fail);
		return true;
	}
	return false;
}

/*
 * Progress: create what is missing (built-in: each pod pinned to its rank's
 * admitted node) and say Running once every pod runs. True when the gang
 * is Running.
 */
static bool gang_progress(struct planner *p, const struct podview **by_rank, int n,
			  const struct gang_census *c)
{
	const struct tj_input *in = p->in;
	struct tj_status *st = &p->out->status;

	/* Create what is missing, once every earlier create has been seen. */
	if (c->have < n && in->expectations_met)
		for (int r = 0; r < n; r++)
			if (!by_rank[r])
				action(p, TJ_CREATE_POD, r, NULL);

	record_nodes(p);
	if (c->running != n)
		return false;
	if (!phase_was(p, TJ_PHASE_RUNNING)) {
		char msg[128];

		snprintf(msg, sizeof(msg), "all %d pods are Running", n);
		p->out->all_running_now = true;
		event(p, false, "Running", "%s", msg);
		cond(p, "Running", true, "AllPodsRunning", msg);
	}
	set_phase(p, TJ_PHASE_RUNNING);
	if (!st->start_time)
		st->start_time = in->now;
	cond_clear(p, "Restarting", "Running", "the gang is Running again");
	free(st->message);
	st->message = NULL;
	return true;
}

/* Starting: say what the gang waits for, in the words of its first troubled pod. */
static void gang_say_starting(struct planner *p, int n, const struct gang_census *c)
{
	const struct podview *start = c->start_trouble, *sched = c->sched_trouble;

	waiting(p, start ? start->reason : sched ? "Unschedulable" : "PodsStarting");
	if (start)
		set_message(p, "rank %d (pod %s) cannot start: %s: %s", start->rank, start->name,
			    start->reason, start->message ? start->message : "");
	else if (sched)
		set_message(p, "rank %d (pod %s) is unschedulable: %s", sched->rank, sched->name,
			    sched->message ? sched->message : "");
	else
		set_message(p, "%d of %d pods Running", c->running, n);
}

/*
 * Built-in mode, at the gang timeout: the node of every rank that was never
 * scheduled where its admission pinned it goes into status.excludedNodes
 * (reason GangTimeout), stored with the restart, so that the next admission
 * does not pin the gang the same way again (docs/design.md 3.1). The ranks
 * the scheduler bound show that their nodes took them: those stay usable.
 * The nodes are named at the end of why (size bytes).
 */
static void exclude_unscheduled(struct planner *p, const struct podview **by_rank, int n,
				char *why, size_t size)
{
	size_t len = strlen(why);
	const char *sep = "; never scheduled on ";
	int count = 0;

	if (p->in->mode != GANG_BUILTIN)
		return;
	for (int r = 0; r < n; r++) {
		const char *node = by_rank[r] && by_rank[r]->node ? NULL : decided_node(p, r);

		if (!node)
			continue;
		exclude_node(p, node, TJ_EXCLUDED_GANG_TIMEOUT, r);
		if (len < size)
			len += (size_t)snprintf(why + len, size - len, "%s%s (rank %d)", sep, node, r);
		sep = ", ";
		count++;
	}
	if (count && len < size)
		snprintf(why + len, size - len, ": %s off for the next attempts "
			 "(status.excludedNodes)", count == 1 ? "it stays" : "they stay");
}

/* The gang timeout counts from this attempt's admission: past it, restart. */
static void gang_timeout(struct planner *p, const struct podview **by_rank, int n,
			 const struct gang_census *c)
{
	const struct tj_spec *spec = &p->job->spec;
	const struct condition *admitted = condition_find(&p->out->status.conditions, "Admitted");
	const struct podview *start = c->start_trouble;
	int64_t deadline;
	char why[1024];

	if (!admitted || strcmp(admitted->status, "True") || !admitted->last_transition_time)
		return;
	deadline = admitted->last_transition_time + spec->gang_timeout_seconds;
	if (p->in->now < deadline) {
		requeue_in(p, deadline - p->in->now);
		return;
	}
	if (start) {
		snprintf(why, sizeof(why), "rank %d (pod %s) could not start within %llds: %s: %s",
			 start->rank, start->name, (long long)spec->gang_timeout_seconds,
			 start->reason, start->message ? start->message : "");
		restart(p, BLAME_USER, "PodFailed", start, why);
		return;
	}
	snprintf(why, sizeof(why), "only %d of %d pods were Running %llds after admission",
		 c->running, n, (long long)spec->gang_timeout_seconds);
	exclude_unscheduled(p, by_rank, n, why, sizeof(why));
	restart(p, BLAME_INFRA, "GangTimeout", c->sched_trouble, why);
}

/*
 * No pod is planned while an object the pods need is refused: past the
 * gang timeout it is a failure of user input, until then the job says why
 * in the condition it waits on.
 */
static void hold_for_refusal(struct planner *p, const struct tj_refusal *refused, int64_t since)
{
	bool admitted = condition_is_true(&p->out->status.conditions, "Admitted");

	if (refusal_expired(p, refused, since))
		return;
	set_phase(p, admitted ? TJ_PHASE_STARTING : TJ_PHASE_QUEUED);
	say_refused(p, refused, admitted ? "Running" : "Admitted", since);
	record_nodes(p);
}

/*
 * The entrypoint ConfigMap the pods mount, planned before any of them
 * whenever a pod is to be created and the cache does not show it as the
 * job's with this controller's script. While a refusal of it holds (the
 * API server refused it, or a ConfigMap of that name is someone else's) no
 * pod is planned: the job says why as for a refused pod, and the gang
 * timeout bounds the wait. True when the pass ends here.
 */
static bool entrypoint_blocked(struct planner *p, int n, int have,
			       const struct tj_refusal *refused, int64_t since)
{
	if (p->in->entrypoint_exists || have >= n)
		return false;
	if (p->in->expectations_met)
		action(p, TJ_CREATE_ENTRYPOINT, -1, NULL);
	if (!refused || refused->rank != TJ_REFUSAL_ENTRYPOINT)
		return false;
	hold_for_refusal(p, refused, since);
	return true;
}

/*
 * The job's Service, while the API server refuses it or one of its name is
 * someone else's: its pods would never find their peers, so none is
 * planned, and the job says why as for a refused pod. True when the pass
 * ends here.
 */
static bool service_blocked(struct planner *p, const struct tj_refusal *refused, int64_t since)
{
	if (!refused || refused->rank != TJ_REFUSAL_SERVICE)
		return false;
	if (p->in->expectations_met)
		action(p, TJ_CREATE_SERVICE, -1, NULL);
	hold_for_refusal(p, refused, since);
	return true;
}

/*
 * Built-in mode: a pod still to be created, or one an earlier version left
 * gated, needs the node the stored admission chose for its rank. An
 * admission stored without one (by a version that gated its pods and kept
 * the placement in memory) cannot be finished: the gang is admitted again,
 * without blame. True when it restarted.
 */
static bool builtin_record_incomplete(struct planner *p, const struct podview **by_rank, int n)
{
	char why[1024];

	if (p->in->mode != GANG_BUILTIN)
		return false;
	for (int r = 0; r < n; r++) {
		if (by_rank[r] ? !by_rank[r]->gated : decided_node(p, r) != NULL)
			continue;
		snprintf(why, sizeof(why), "attempt %d was admitted without a stored node for rank "
			 "%d (an earlier cadre version kept its placement in memory); the gang is "
			 "admitted again", tj_attempt(&p->out->status), r);
		restart(p, BLAME_INFRA, "AdmissionIncomplete", NULL, why);
		return true;
	}
	return false;
}

/*
 * Built-in mode: a node the admission chose that no longer exists will never
 * take its rank's pod; the gang goes back to the queue at once rather than
 * after its gang timeout. (A node that is only NotReady may come back: the
 * gang timeout bounds that wait.) True when it restarted.
 */
static bool builtin_node_gone(struct planner *p, const struct podview **by_rank, int n)
{
	const struct tj_input *in = p->in;
	char why[1024];

	if (in->mode != GANG_BUILTIN || !in->node_known)
		return false;
	for (int r = 0; r < n; r++) {
		const char *node = decided_node(p, r);
		struct podview v = { .rank = r, .node = node, .attempt = tj_attempt(&p->out->status) };
		char name[320];

		if ((by_rank[r] && by_rank[r]->node) || !node || in->node_known(in->node_ctx, node))
			continue;
		snprintf(name, sizeof(name), "%s-%d", p->job->meta.name ? p->job->meta.name : "", r);
		v.name = name;
		snprintf(why, sizeof(why), "node %s, admitted for rank %d, is gone before its pod "
			 "was placed", node, r);
		restart(p, BLAME_INFRA, "NodeLost", &v, why);
		return true;
	}
	return false;
}

/* One pass over an admitted (or admitting) gang: census, outcome, progress, timeout. */
static void plan_gang_ranks(struct planner *p, const struct podview **by_rank)
{
	const struct tj_input *in = p->in;
	struct tj_status *st = &p->out->status;
	int n = num_nodes(p), attempt = tj_attempt(st);
	const struct tj_refusal *refused;
	struct gang_census c;
	int64_t refused_since;

	gang_census(p, by_rank, n, attempt, &c);
	refused = live_refusal(p, by_rank);
	refused_since = refused ? refusal_since(p, refused) : 0;
	/* Kueue evicting the group deletes its pods: say it with Kueue's reason, before
	 * the pods' deletions are taken for someone else's. */
	if (in->mode == GANG_KUEUE && condition_is_true(&st->conditions, "Admitted") &&
	    kueue_evicted(p, NULL))
		return;
	if (in->expectations_met && !c.infra_fail && gang_deleted_outside(p, by_rank, n, attempt))
		return;
	if (entrypoint_blocked(p, n, c.have, refused, refused_since) ||
	    service_blocked(p, refused, refused_since))
		return;
	if (in->mode == GANG_KUEUE && !condition_is_true(&st->conditions, "Admitted") &&
	    gang_kueue_wait(p, by_rank, n, c.have, refused, refused_since))
		return;
	if (!in->service_exists)
		action(p, TJ_CREATE_SERVICE, -1, NULL);
	if (in->mode == GANG_NATIVE) {
		if (!condition_is_true(&st->conditions, "Admitted") &&
		    !native_admitted(p, by_rank, refused, refused_since))
			return;
		if (native_disrupted(p))
			return;
	}
	if (gang_outcome(p, by_rank, n, &c))
		return;
	if (refused && refusal_expired(p, refused, refused_since))
		return;
	if (builtin_record_incomplete(p, by_rank, n) || builtin_node_gone(p, by_rank, n))
		return;
	if (gang_progress(p, by_rank, n, &c))
		return;
	set_phase(p, TJ_PHASE_STARTING);
	cond(p, "Running", false, "Starting", "waiting for every pod to be Running");
	if (refused) {
		say_refused(p, refused, "Running", refused_since);
		return;
	}
	gang_say_starting(p, n, &c);
	gang_timeout(p, by_rank, n, &c);
}

static void plan_gang(struct planner *p)
{
	const struct podview **by_rank = calloc((size_t)num_nodes(p), sizeof(*by_rank));

	if (!by_rank) {
		p->err = CADRE_ENOMEM;
		return;
	}
	plan_gang_ranks(p, by_rank);
	free(by_rank);
}

/*
 * Restarting -> Queued: every pod of the old gang is gone. Said once, since
 * only the pass that sees the stored phase Restarting and no pod left gets
 * here; the message says what happens next and how long the backoff lasts.
 */
static void requeued_event(struct planner *p)
{
	const struct tj_status *st = &p->out->status;
	int attempt = tj_attempt(st);
	int64_t wait_s = 0;

	if (attempt > 0 && st->has_last_failure)
		wait_s = st->last_failure.time + tj_restart_backoff_s(attempt) - p->in->now;
	if (wait_s > 0)
		event(p, false, "Requeued", "the old gang is gone; attempt %d waits %llds more "
		      "(restart backoff after %s), then queues for admission", attempt,
		      (long long)wait_s,
		      st->last_failure.reason ? st->last_failure.reason : "a failure");
	else
		event(p, false, "Requeued", "the old gang is gone; attempt %d is queued for "
		      "admission", attempt);
}

/* activeDeadlineSeconds, counted from the first admission across restarts. True when it passed. */
static bool active_deadline_passed(struct planner *p)
{
	const struct tj_status *st = &p->out->status;
	const struct tj_spec *spec = &p->job->spec;
	int64_t deadline;
	char msg[256];

	if (!spec->has_active_deadline_seconds || !st->admitted_time)
		return false;
	deadline = st->admitted_time + spec->active_deadline_seconds;
	if (p->in->now < deadline) {
		requeue_in(p, deadline - p->in->now);
		return false;
	}
	snprintf(msg, sizeof(msg), "activeDeadlineSeconds (%lld) passed",
		 (long long)spec->active_deadline_seconds);
	finish(p, false, "DeadlineExceeded", msg);
	delete_pods(p, true, -1);
	record_nodes(p);
	return true;
}

/* Restarting: wait for the old gang to go, then queue again. True while it is not gone. */
static bool old_gang_going(struct planner *p)
{
	struct tj_status *st = &p->out->status;
	size_t live;

	if (st->phase != TJ_PHASE_RESTARTING)
		return false;
	live = delete_pods(p, false, -1);
	if (live) {
		set_message(p, "restarting: waiting for %zu pods of the old gang to go", live);
		return true;
	}
	set_phase(p, TJ_PHASE_QUEUED);
	cond(p, "Restarting", false, "TornDown", "the old gang is gone; queued again");
	requeued_event(p);
	return false;
}

/* Pods of an earlier attempt are never reused: finish deleting them. True while any is left. */
static bool stale_pods_going(struct planner *p, int attempt)
{
	const struct tj_input *in = p->in;
	size_t stale = 0;

	for (size_t i = 0; i < in->n_pods; i++)
		if (in->pods[i].attempt != attempt)
			stale++;
	if (!stale)
		return false;
	for (size_t i = 0; i < in->n_pods; i++)
		if (in->pods[i].attempt != attempt && !in->pods[i].deleting)
			action(p, TJ_DELETE_POD, in->pods[i].rank, &in->pods[i]);
	waiting(p, "OldPodsTerminating");
	set_message(p, "waiting for %zu pods of an earlier attempt to go", stale);
	return true;
}

/* After a failure, the next attempt waits out its backoff. True while it waits. */
static bool restart_backing_off(struct planner *p, int attempt)
{
	const struct tj_status *st = &p->out->status;
	int64_t at;

	if (attempt <= 0 || !st->has_last_failure)
		return false;
	at = st->last_failure.time + tj_restart_backoff_s(attempt);
	if (p->in->now >= at)
		return false;
	set_phase(p, TJ_PHASE_QUEUED);
	waiting(p, "RestartBackoff");
	set_message(p, "restart %d: backing off for %llds after %s", attempt,
		    (long long)(at - p->in->now),
		    st->last_failure.reason ? st->last_failure.reason : "a failure");
	requeue_in(p, at - p->in->now);
	return true;
}

/* Built-in admission said wait: say why, once as an event, and stay Queued. */
static void builtin_wait(struct planner *p)
{
	const struct tj_input *in = p->in;
	const char *reason = in->admission.reason ? in->admission.reason : "InsufficientCapacity";
	const char *msg = in->admission.message ? in->admission.message : "waiting for capacity";
	const struct condition *c = condition_find(&p->out->status.conditions, "Admitted");

	/* Keep a GangTimeout reason visible until the next admission. */
	if (!c || strcmp(c->reason, "GangTimeout"))
		cond(p, "Admitted", false, reason, msg);
	/* Say once, as an event, that the gang waits and why. */
	if (!c || strcmp(c->status, "False") || strcmp(c->reason, reason))
		event(p, false, reason, "%s", msg);
	waiting(p, reason);
	set_phase(p, TJ_PHASE_QUEUED);
	set_message(p, "%s", msg);
}

/*
 * Built-in mode, while the gang waits: its entrypoint ConfigMap and Service
 * are made now, so that admission has only the pods left to create. While
 * either is refused the job is no candidate for admission (it would hold
 * capacity it cannot use): it says why, and the gang timeout, counted from
 * the first refusal, bounds the wait. True when the pass ends here.
 */
static bool builtin_prepare(struct planner *p)
{
	const struct tj_input *in = p->in;
	const struct tj_refusal *r = in->refusal;

	if (in->mode != GANG_BUILTIN)
		return false;
	if (!in->entrypoint_exists && in->expectations_met)
		action(p, TJ_CREATE_ENTRYPOINT, -1, NULL);
	if (!in->service_exists)
		action(p, TJ_CREATE_SERVICE, -1, NULL);
	if (!r || !r->pod || r->attempt != tj_attempt(&p->out->status) ||
	    !((r->rank == TJ_REFUSAL_ENTRYPOINT && !in->entrypoint_exists) ||
	      (r->rank == TJ_REFUSAL_SERVICE && !in->service_exists)))
		return false;
	hold_for_refusal(p, r, r->first_time);
	return true;
}

/*
 * The built-in admission's decision, into status.nodes: the node of every
 * rank, which the status write stores before any pod exists and from which
 * every pod of the attempt is created (record_nodes keeps it).
 */
static void record_decision(struct planner *p)
{
	const struct tj_admission *a = &p->in->admission;
	struct tj_status *st = &p->out->status;
	int n = num_nodes(p);

	clear_nodes(p);
	if (!a->nodes || a->n_nodes != n) {
		p->err = CADRE_EINVAL;  /* the admission queue always places every rank */
		return;
	}
	st->nodes = calloc((size_t)n, sizeof(*st->nodes));
	if (!st->nodes) {
		p->err = CADRE_ENOMEM;
		return;
	}
	for (int r = 0; r < n; r++) {
		struct tj_node_status *ns = &st->nodes[st->n_nodes++];
		char name[320];

		snprintf(name, sizeof(name), "%s-%d", p->job->meta.name ? p->job->meta.name : "",
			 r);
		ns->rank = r;
		set_string(p, &ns->pod, name);
		set_string(p, &ns->node, a->nodes[r]);
	}
}

/*
 * Built-in mode, every wait before admission passed: the job is Queued for
 * a decision, and asks for one only when tj_candidacy, which the capacity
 * records use too, says it waits (docs/design.md 3.1). True when it is no
 * candidate after all: it says why and waits.
 */
static bool builtin_not_a_candidate(struct planner *p)
{
	const struct condition *c = condition_find(&p->out->status.conditions, "Admitted");
	struct trainingjob view = *p->job;
	const char *why;

	if (p->out->status.phase == TJ_PHASE_PENDING)
		set_phase(p, TJ_PHASE_QUEUED);
	/* A refusal that held it has cleared (builtin_prepare). */
	if (c && !strcmp(c->status, "False") && !strcmp(c->reason, "CreateRefused"))
		cond(p, "Admitted", false, "Queued", "waiting for admission");
	view.status = p->out->status;
	if (tj_candidacy(&view, NULL, &why) == CANDIDACY_WAITS)
		return false;
	waiting(p, "NotACandidate");
	set_message(p, "not waiting for admission: %s", why);
	return true;
}

/* Admission by the gang scheduler in use. True when the pass ends here (not admitted). */
static bool not_admitted(struct planner *p)
{
	const struct tj_input *in = p->in;

	switch (in->mode) {
	case GANG_KUEUE:
		break;  /* plan_gang creates the pods and mirrors Kueue */
	case GANG_NATIVE:
		break;  /* plan_gang creates the PodGroup and the pods and mirrors it */
	case GANG_NONE:
		admit(p, "admitted without gang scheduling (--gang-scheduler=none)");
		break;
	case GANG_BUILTIN:
		if (builtin_not_a_candidate(p))
			return true;
		if (in->admission.verdict == ADMIT_UNDECIDED) {
			p->out->needs_admission = true;
			return true;
		}
		if (in->admission.verdict == ADMIT_WAIT) {
			builtin_wait(p);
			return true;
		}
		admit(p, in->admission.message ? in->admission.message :
		      "admitted: the whole gang fits");
		record_decision(p);
		break;
	}
	return false;
}

/* Add each of add[0..n) to the list (*list, *len), each once. */
static void record_each(struct planner *p, char ***list, size_t *len, char *const *add, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool have = false;
		char **slot;

		for (size_t j = 0; j < *len && !have; j++)
			have = !strcmp((*list)[j], add[i]);
		if (have)
			continue;
		slot = grow(p, (void **)list, len, sizeof(*slot));
		if (slot)
			set_string(p, slot, add[i]);
	}
}

/* What v met and found, into status.dependency.satisfied and .seen. */
static void record_satisfied(struct planner *p, const struct tj_dep_verdict *v)
{
	struct tj_status *st = &p->out->status;

	record_each(p, &st->dependency_satisfied, &st->n_dependency_satisfied, v->satisfied,
		    v->n_satisfied);
	record_each(p, &st->dependency_seen, &st->n_dependency_seen, v->seen, v->n_seen);
}

/*
 * spec.dependency, before the job first starts (docs/design.md 13): wait
 * Queued with reason Dependency, fail with DependencyNeverSatisfied, or,
 * once met, say so in status.dependency.met (stored with the admission
 * that follows, or before it) and never look again. True when the pass
 * ends here.
 */
static bool dependency_holds(struct planner *p)
{
	const struct tj_dep_verdict *v = p->in->dependency;
	struct tj_status *st = &p->out->status;
	const struct condition *c = condition_find(&p->job->status.conditions, "Admitted");

	if (!p->job->spec.has_dependency || st->dependency_met || st->admitted_time)
		return false;
	if (!v) {
		set_phase(p, TJ_PHASE_QUEUED);
		cond(p, "Admitted", false, "Dependency", "waiting for its dependencies");
		waiting(p, "Dependency");
		set_message(p, "waiting for its dependencies");
		return true;
	}
	record_satisfied(p, v);
	switch (v->state) {
	case TJ_DEP_MET:
		st->dependency_met = true;
		event(p, false, "DependencyMet", "its dependencies are satisfied; queued for "
		      "admission");
		return false;
	case TJ_DEP_NEVER:
		finish(p, false, "DependencyNeverSatisfied", v->message);
		cond(p, "Admitted", false, "DependencyNeverSatisfied", v->message);
		return true;
	case TJ_DEP_WAIT:
		break;
	}
	/* Said as an event once per change of what it waits for. */
	if (!c || strcmp(c->reason, "Dependency") || strcmp(c->message ? c->message : "",
							   v->message))
		event(p, false, "Dependency", "%s", v->message);
	set_phase(p, TJ_PHASE_QUEUED);
	cond(p, "Admitted", false, "Dependency", v->message);
	waiting(p, "Dependency");
	set_message(p, "%s", v->message);
	return true;
}

/*
 * scontrol requeue (the annotation cadre.dev/requeue, a new value each
 * time): an admitted gang is torn down and queued again, as Slurm requeues
 * a running job, counted as an infrastructure restart (SLURM_RESTART_COUNT
 * grows) and never against maxRestarts; a job not admitted is where a
 * requeue would put it. Acted on once per value (status.requeued). True
 * when it restarted.
 */
static bool requeue_asked(struct planner *p)
{
	struct tj_status *st = &p->out->status;
	const char *asked = p->in->requeue;

	if (!asked || !*asked || (st->requeued && !strcmp(st->requeued, asked)))
		return false;
	set_string(p, &st->requeued, asked);
	if (st->phase == TJ_PHASE_RESTARTING || !condition_is_true(&st->conditions, "Admitted"))
		return false;
	restart(p, BLAME_NONE, "Requeued", NULL, "requeued (scontrol requeue)");
	return true;
}

static void plan_active(struct planner *p)
{
	struct tj_status *st = &p->out->status;
	int attempt = tj_attempt(st);

	if (dependency_holds(p) || requeue_asked(p))
		return;
	if (active_deadline_passed(p))
		return;
	delete_podgroups(p, attempt);
	if (old_gang_going(p) || stale_pods_going(p, attempt))
		return;
	if (!condition_is_true(&st->conditions, "Admitted")) {
		if (partition_waits(p) || !volumes_ready(p) || !code_ready(p) ||
		    restart_backing_off(p, attempt) ||
		    builtin_prepare(p) ||
		    not_admitted(p))
			return;
	}
	plan_gang(p);
}

/* --- array jobs (docs/design.md 12) --- */

/* The index sets of an array job, one byte per index up to its largest. */
struct index_sets {
	size_t size;
	unsigned char *member, *started, *succeeded, *failed, *cancelled, *cancel_asked, *present;
	const struct tj_element **element;  /* per index: the element in the cache, or NULL */
};

static void sets_release(struct index_sets *x)
{
	free(x->member);
	free(x->started);
	free(x->succeeded);
	free(x->failed);
	free(x->cancelled);
	free(x->cancel_asked);
	free(x->present);
	free(x->element);
}

/* A ranged set ("0-3,5") into set; indices past size are not the array's and are left out. */
static void set_load(unsigned char *set, size_t size, const char *text)
{
	(void)slurm_indices_mark(text, set, size);
}

/* set as a ranged string into *field (NULL when empty). */
static void set_store(struct planner *p, char **field, const unsigned char *set, size_t size)
{
	struct buf b;
	int32_t *v = calloc(size + 1, sizeof(*v));
	size_t n = 0;

	if (!v) {
		p->err = CADRE_ENOMEM;
		return;
	}
	for (size_t i = 0; i < size; i++)
		if (set[i])
			v[n++] = (int32_t)i;
	buf_init(&b, (size_t)16 << 20);
	if (slurm_indices_format(v, n, &b))
		p->err = CADRE_ENOMEM;
	set_string(p, field, n ? buf_str(&b) : NULL);
	buf_release(&b);
	free(v);
}

static int sets_init(struct index_sets *x, const struct slurm_array *a)
{
	memset(x, 0, sizeof(*x));
	x->size = a->n ? (size_t)a->index[a->n - 1] + 1 : 1;
	x->member = calloc(x->size, 1);
	x->started = calloc(x->size, 1);
	x->succeeded = calloc(x->size, 1);
	x->failed = calloc(x->size, 1);
	x->cancelled = calloc(x->size, 1);
	x->cancel_asked = calloc(x->size, 1);
	x->present = calloc(x->size, 1);
	x->element = calloc(x->size, sizeof(*x->element));
	if (!x->member || !x->started || !x->succeeded || !x->failed || !x->cancelled ||
	    !x->cancel_asked || !x->present || !x->element)
		return CADRE_ENOMEM;
	for (size_t i = 0; i < a->n; i++)
		x->member[a->index[i]] = 1;
	return 0;
}

static bool ended(const struct index_sets *x, size_t i)
{
	return x->succeeded[i] || x->failed[i] || x->cancelled[i];
}

/*
 * An element whose name another object holds (a TrainingJob <job>-<index>
 * this array does not own) can never be made: it fails, once, with a
 * warning that names the object, and the array ends when the rest do.
 */
static bool element_taken(struct planner *p, struct index_sets *x, size_t i)
{
	const struct tj_input *in = p->in;

	if (!in->element_taken || !in->element_taken(in->element_ctx, (int)i))
		return false;
	x->failed[i] = 1;
	event(p, true, "ElementNameTaken", "element %zu not created: trainingjob %s-%zu exists "
	      "and is not this array's", i, p->job->meta.name, i);
	return true;
}

/* What the array's elements are doing, for status.message. */
static void array_message(struct planner *p, const struct slurm_array *a, size_t running,
			  size_t waiting, size_t ok, size_t failed, size_t cancelled)
{
	char cap[48] = "";

	if (a->max_running > 0)
		snprintf(cap, sizeof(cap), " (at most %d at once)", a->max_running);
	set_message(p, "%zu elements: %zu running, %zu waiting%s, %zu succeeded, %zu failed, "
		    "%zu cancelled", a->n, running, waiting, cap, ok, failed, cancelled);
}

/* Every element ended: the array is done, as its elements did. */
static void array_finish(struct planner *p, const struct index_sets *x, const struct slurm_array *a,
			 size_t failed, size_t cancelled)
{
	struct buf list;
	int32_t *v;
	size_t n = 0;

	if (!failed && !cancelled) {
		char msg[128];

		snprintf(msg, sizeof(msg), "all %zu elements succeeded", a->n);
		finish(p, true, "AllElementsSucceeded", msg);
		return;
	}
	if (!(v = calloc(x->size + 1, sizeof(*v)))) {
		p->err = CADRE_ENOMEM;
		return;
	}
	for (size_t i = 0; i < x->size; i++)
		if (x->member[i] && (failed ? x->failed[i] : x->cancelled[i]))
			v[n++] = (int32_t)i;
	buf_init(&list, 4096);
	slurm_indices_format(v, n, &list);
	if (failed) {
		char msg[4200];

		snprintf(msg, sizeof(msg), "%zu of %zu elements failed: %s", failed, a->n,
			 buf_str(&list));
		finish(p, false, "ElementsFailed", msg);
	} else {
		char msg[4200];

		snprintf(msg, sizeof(msg), "%zu of %zu elements were cancelled: %s", cancelled,
			 a->n, buf_str(&list));
		finish(p, false, "ElementsCancelled", msg);
	}
	buf_release(&list);
	free(v);
}

/*
 * An array job runs no pods: its elements are TrainingJobs <job>-<index> it
 * owns. The decision to start one (its index in status.array.started) is
 * stored before the element is created, and the throttle counts what is
 * stored, so "at most N at once" holds whatever process creates them and
 * whenever one stops: a process that starts creates every started element
 * that is missing, and starts no more than the throttle leaves room for.
 * Cancelled elements (the annotation cadre.dev/cancel-tasks) are recorded
 * and deleted; one that ended first keeps its end.
 */
/*
 * What the array's status and the cache say of each element, into x: the
 * stored sets, the elements there (each there was started; one that ended
 * is counted so), and the cancellations asked, with a delete of each one
 * still there.
 */
static void array_observe(struct planner *p, struct index_sets *x)
{
	const struct tj_input *in = p->in;
	const struct tj_status *st = &p->out->status;

	set_load(x->started, x->size, st->array_started);
	set_load(x->succeeded, x->size, st->array_succeeded);
	set_load(x->failed, x->size, st->array_failed);
	set_load(x->cancelled, x->size, st->array_cancelled);
	set_load(x->cancel_asked, x->size, in->cancel_tasks);
	for (size_t k = 0; k < in->n_elements; k++) {
		const struct tj_element *e = &in->elements[k];
		size_t i = (size_t)e->index;

		if (e->index < 0 || i >= x->size || !x->member[i])
			continue;
		x->present[i] = 1;
		x->element[i] = e;
		x->started[i] = 1;  /* it exists: it was started (by this process or another) */
		if (!ended(x, i) && e->phase == TJ_PHASE_SUCCEEDED)
			x->succeeded[i] = 1;
		else if (!ended(x, i) && e->phase == TJ_PHASE_FAILED)
			x->failed[i] = 1;
	}
	for (size_t i = 0; i < x->size; i++) {
		if (!x->member[i] || !x->cancel_asked[i] || x->succeeded[i] || x->failed[i])
			continue;
		x->cancelled[i] = 1;
		if (x->present[i] && !x->element[i]->deleting) {
			struct tj_action *act = action(p, TJ_DELETE_ELEMENT, (int)i, NULL);

			if (act) {
				act->pod = x->element[i]->name;
				act->uid = x->element[i]->uid;
			}
		}
	}
}

/*
 * The elements that run, the missing ones made again and new ones made,
 * lowest index first, while the throttle leaves room. How many run.
 */
static size_t array_start(struct planner *p, struct index_sets *x, const struct slurm_array *a)
{
	size_t running = 0;

	/* Running: started, not ended, and a cancelled one until it is gone. */
	for (size_t i = 0; i < x->size; i++)
		if (x->member[i] && x->started[i] &&
		    (!ended(x, i) || (x->cancelled[i] && x->present[i] && !x->succeeded[i] &&
				      !x->failed[i])))
			running++;
	/* A started element that is missing is created (again). */
	for (size_t i = 0; i < x->size && p->in->expectations_met; i++)
		if (x->member[i] && x->started[i] && !ended(x, i) && !x->present[i]) {
			if (element_taken(p, x, i))
				running--;
			else
				action(p, TJ_CREATE_ELEMENT, (int)i, NULL);
		}
	for (size_t i = 0; i < x->size && !p->job->spec.suspend; i++) {
		if (!x->member[i] || x->started[i] || x->cancelled[i])
			continue;
		if (a->max_running > 0 && running >= (size_t)a->max_running)
			break;
		x->started[i] = 1;
		if (element_taken(p, x, i))
			continue;
		running++;
		action(p, TJ_CREATE_ELEMENT, (int)i, NULL);
	}
	return running;
}

/* Why elements wait (held, or the throttle), or that every one has started; the phase. */
static void array_wait(struct planner *p, const struct slurm_array *a, size_t running,
		       size_t pending)
{
	if (pending && p->job->spec.suspend) {
		cond(p, "Admitted", false, "JobHeldUser", "spec.suspend is true: no element starts");
		waiting(p, "JobHeldUser");
	} else if (pending) {
		char msg[128];

		snprintf(msg, sizeof(msg), "at most %d elements run at once", a->max_running);
		cond(p, "Admitted", false, "JobArrayTaskLimit", msg);
		waiting(p, "JobArrayTaskLimit");
	} else {
		cond(p, "Admitted", true, "ElementsStarted", "every element has started");
	}
	set_phase(p, running ? TJ_PHASE_RUNNING : p->job->spec.suspend ? TJ_PHASE_SUSPENDED :
		  TJ_PHASE_QUEUED);
}

static void plan_array(struct planner *p)
{
	const struct tj_input *in = p->in;
	struct tj_status *st = &p->out->status;
	size_t running, pending = 0, ok = 0, failed = 0, cancelled = 0, done = 0;
	int32_t limit = in->max_array_size > 0 ? in->max_array_size : SLURM_DEFAULT_MAX_ARRAY_SIZE;
	struct index_sets x;
	struct slurm_array a;
	char why[256];
	int err;

	memset(&x, 0, sizeof(x));
	err = slurm_array_parse(p->job->spec.array, limit, &a, why, sizeof(why));
	if (err == CADRE_ENOMEM) {
		p->err = err;
		goto out;
	}
	if (err) {
		char msg[512];

		snprintf(msg, sizeof(msg), "invalid spec: spec.array: %s", why);
		finish(p, false, "InvalidSpec", msg);
		goto out;
	}
	if (dependency_holds(p) || (!st->admitted_time && partition_waits(p)))
		goto out;
	if ((err = sets_init(&x, &a))) {
		p->err = err;
		goto out;
	}
	st->has_array = true;
	array_observe(p, &x);
	running = array_start(p, &x, &a);
	for (size_t i = 0; i < x.size; i++) {
		if (!x.member[i])
			continue;
		pending += !x.started[i] && !x.cancelled[i];
		ok += x.succeeded[i];
		failed += x.failed[i];
		cancelled += x.cancelled[i] && !x.succeeded[i] && !x.failed[i];
		done += ended(&x, i);
	}
	set_store(p, &st->array_started, x.started, x.size);
	set_store(p, &st->array_succeeded, x.succeeded, x.size);
	set_store(p, &st->array_failed, x.failed, x.size);
	set_store(p, &st->array_cancelled, x.cancelled, x.size);
	if (running)
		first_admission(p);
	if (running && !st->start_time)
		st->start_time = p->in->now;
	if (done == a.n) {
		array_finish(p, &x, &a, failed, cancelled);
		goto out;
	}
	array_wait(p, &a, running, pending);
	array_message(p, &a, running, pending, ok, failed, cancelled);
out:
	sets_release(&x);
	slurm_array_release(&a);
}

/* A reason the CRD accepts: ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$, at most 1024. */
static bool reason_ok(const char *r)
{
	size_t n = r ? strlen(r) : 0;

	if (!n || n > 1024 || !((r[0] >= 'A' && r[0] <= 'Z') || (r[0] >= 'a' && r[0] <= 'z')))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_,:",
			    r[i]) || (i == n - 1 && (r[i] == ',' || r[i] == ':')))
			return false;
	return true;
}

/*
 * The GitOps health conditions (docs/design.md 1.2), derived here from the final
 * phase and message so that no path through the planner can forget them.
 * They follow kstatus's "abnormal-true" convention:
 *   Pending, Queued, Starting, Restarting: Reconciling=True, with the reason
 *     the job waits and status.message; kstatus reads InProgress.
 *   Failed: Stalled=True with the Failed reason; kstatus reads Failed.
 *   Running, Succeeded: Reconciling=False; kstatus reads Current.
 *   Suspended: Reconciling=False once no pod is left (the job is as its
 *     spec asks, so a GitOps sync that waits for health is not held up by
 *     a suspended job); Reconciling=True/Suspending while pods still go.
 * Stalled is added only when it becomes True, and a Failed job never leaves
 * Failed, so it is absent on every other job.
 */
static void plan_health(struct planner *p)
{
	struct tj_status *st = &p->out->status;
	const char *reason = NULL, *message = st->message;
	const struct condition *c = NULL;
	bool reconciling = false;
	char fallback[64];

	switch (st->phase) {
	case TJ_PHASE_UNSET:
		return;
	case TJ_PHASE_PENDING:
	case TJ_PHASE_QUEUED:
	case TJ_PHASE_STARTING:
		reconciling = true;
		reason = p->wait_reason;
		break;
	case TJ_PHASE_RESTARTING:
		reconciling = true;
		c = condition_find(&st->conditions, "Restarting");
		reason = c ? c->reason : NULL;
		break;
	case TJ_PHASE_SUSPENDED:
		reconciling = p->wait_reason != NULL;
		reason = p->wait_reason;
		break;
	case TJ_PHASE_RUNNING:
		message = "every pod is Running";
		break;
	case TJ_PHASE_SUCCEEDED:
	case TJ_PHASE_FAILED:
		c = condition_find(&st->conditions,
				   st->phase == TJ_PHASE_FAILED ? "Failed" : "Succeeded");
		reason = c ? c->reason : NULL;
		message = c && *c->message ? c->message : message;
		break;
	}
	if (!reason_ok(reason))
		reason = tj_phase_name(st->phase);
	if (!message || !*message) {
		snprintf(fallback, sizeof(fallback), "the job is %s", tj_phase_name(st->phase));
		message = fallback;
	}
	/* reason and message point into strings that cond() copies before it frees any. */
	cond(p, "Reconciling", reconciling, reason, message);
	if (st->phase == TJ_PHASE_FAILED)
		cond(p, "Stalled", true, reason, message);
	else
		cond_clear(p, "Stalled", reason, message);
}

int tj_plan_make(const struct tj_input *in, struct tj_plan *out)
{
	const struct trainingjob *job = in->job;
	struct planner p = { .in = in, .job = job, .out = out };
	struct tj_status *st = &out->status;
	enum tj_phase before;
	char job_id[16];
	int err;

	memset(out, 0, sizeof(*out));
	err = tj_status_copy(st, &job->status);
	if (err)
		return err;
	before = st->phase;
	st->observed_generation = job->meta.generation;
	if (!st->job_id) {
		tj_job_id(job->meta.uid, job_id);
		set_string(&p, &st->job_id, in->job_id && *in->job_id ? in->job_id : job_id);
	}
	if (!st->task_id) {
		char task[TJ_TASK_ID_MAX];

		tj_task_id(&job->meta, st->job_id, task);
		set_string(&p, &st->task_id, task);
	}

	if (job->meta.deleting)
		goto out;
	expire_excluded(&p);
	if (in->partition && !st->partition)
		set_string(&p, &st->partition, in->partition);
	if (in->invalid) {
		if (st->phase != TJ_PHASE_FAILED) {
			char msg[2048];

			snprintf(msg, sizeof(msg), "%s%s", in->invalid_reason ? "" : "invalid spec: ",
				 in->invalid);
			finish(&p, false, in->invalid_reason ? in->invalid_reason : "InvalidSpec", msg);
		}
		plan_terminal(&p);
		goto out;
	}
	if (tj_phase_terminal(st->phase)) {
		plan_terminal(&p);
		goto out;
	}
	if (job->spec.array) {
		plan_array(&p);
		goto out;
	}
	if (job->spec.suspend) {
		size_t live = delete_pods(&p, false, -1);

		/* On resume the scheduler must place the gang again, under a fresh status. */
		delete_podgroups(&p, -1);

		set_phase(&p, TJ_PHASE_SUSPENDED);
		cond(&p, "Suspended", true, "Suspended", "spec.suspend is true");
		cond_clear(&p, "Running", "Suspended", "spec.suspend is true");
		cond_clear(&p, "Admitted", "Suspended", "spec.suspend is true");
		clear_nodes(&p);
		if (live) {
			waiting(&p, "Suspending");
			set_message(&p, "suspending: deleting %zu pods", live);
		} else
			set_message(&p, "suspended: no pods exist; set spec.suspend to false to resume");
		if (before != TJ_PHASE_SUSPENDED)
			event(&p, false, "Suspended", "spec.suspend is true; deleting the gang");
		goto out;
	}
	if (st->phase == TJ_PHASE_SUSPENDED) {
		/* A gang still going is not resumed under itself: the new one would adopt it. */
		size_t live = delete_pods(&p, false, -1);

		if (live) {
			waiting(&p, "Suspending");
			set_message(&p, "resuming once the %zu pods of the suspended gang are gone",
				    live);
			goto out;
		}
		cond(&p, "Suspended", false, "Resumed", "spec.suspend is false");
		set_phase(&p, TJ_PHASE_QUEUED);
		event(&p, false, "Resumed", "spec.suspend is false; queued for admission");
	}
	if (st->phase == TJ_PHASE_UNSET)
		set_phase(&p, TJ_PHASE_QUEUED);
	plan_active(&p);
out:
	if (!job->meta.deleting)
		plan_health(&p);
	condition_list_observe(&st->conditions, job->meta.generation, NULL);
	return p.err;
}

void tj_plan_release(struct tj_plan *plan)
{
	tj_status_release(&plan->status);
	free(plan->actions);
	for (size_t i = 0; i < plan->n_events; i++) {
		free(plan->events[i].message);
		free(plan->events[i].node);
	}
	free(plan->events);
	memset(plan, 0, sizeof(*plan));
}

/* The condition of type in a list, or NULL. */
int tj_podgroup_read(const json_t *obj, struct tj_podgroup *out)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const json_t *status_obj = json_object_get(obj, "status");
	const char *attempt = json_string_value(json_object_get(json_object_get(meta, "labels"),
							       LABEL_RESTART_ATTEMPT));
	const json_t *sched, *dis;
	const char *status;
	char *end;
	long n;

	memset(out, 0, sizeof(*out));
	out->name = json_string_value(json_object_get(meta, "name"));
	if (!out->name || !attempt || !*attempt)
		return CADRE_EINVAL;
	errno = 0;
	n = strtol(attempt, &end, 10);
	if (errno || *end || n < 0 || n > INT32_MAX)
		return CADRE_EINVAL;
	out->attempt = (int)n;
	out->deleting = json_object_get(meta, "deletionTimestamp") != NULL;
	sched = podview_condition(status_obj, "PodGroupScheduled");
	if (!sched)
		sched = podview_condition(status_obj, "PodGroupInitiallyScheduled");
	status = json_string_value(json_object_get(sched, "status"));
	if (status && !strcmp(status, "True"))
		out->state = TJ_PODGROUP_SCHEDULED;
	else if (status && !strcmp(status, "False"))
		out->state = TJ_PODGROUP_UNSCHEDULABLE;
	out->reason = json_string_value(json_object_get(sched, "reason"));
	out->message = json_string_value(json_object_get(sched, "message"));
	dis = podview_condition(status_obj, "DisruptionTarget");
	status = json_string_value(json_object_get(dis, "status"));
	out->disrupted = status && !strcmp(status, "True");
	out->disruption_message = json_string_value(json_object_get(dis, "message"));
	return 0;
}

/* A copy of a status object without what moves while a gang starts. */
static json_t *without_progress(const json_t *status)
{
	bool scheduler = tj_status_waiting_for_scheduler(status);
	json_t *copy = json_deep_copy(status), *c;
	size_t i;

	if (!copy)
		return NULL;
	json_object_del(copy, "nodes");
	json_object_del(copy, "readyNodes");
	json_object_del(copy, "message");
	/*
	 * Reconciling repeats the message, and its reason says what the start
	 * waits for now (PodsStarting, Unschedulable, a pod's waiting reason):
	 * on a busy scheduler it flips back and forth with the pods bound.
	 */
	json_array_foreach(json_object_get(copy, "conditions"), i, c) {
		const char *type = json_string_value(json_object_get(c, "type"));

		if (type && !strcmp(type, "Reconciling")) {
			json_object_del(c, "message");
			json_object_del(c, "reason");
		}
		/* Waiting for kube-scheduler, Admitted's message counts the pods created. */
		if (scheduler && type && !strcmp(type, "Admitted"))
			json_object_del(c, "message");
	}
	return copy;
}

static bool is_starting(const json_t *status)
{
	const char *phase = json_string_value(json_object_get(status, "phase"));

	return phase && !strcmp(phase, "Starting");
}

bool tj_status_waiting_for_scheduler(const json_t *status)
{
	const char *phase = json_string_value(json_object_get(status, "phase"));
	const json_t *c;
	size_t i;

	if (!phase || strcmp(phase, "Queued"))
		return false;
	json_array_foreach(json_object_get(status, "conditions"), i, c) {
		const char *type = json_string_value(json_object_get(c, "type"));
		const char *reason = json_string_value(json_object_get(c, "reason"));

		if (type && !strcmp(type, "Admitted"))
			return reason && !strcmp(reason, "WaitingForScheduler");
	}
	return false;
}

int64_t tj_status_quiet_until(int64_t admitted_time, int64_t last_until)
{
	if (!admitted_time)
		return last_until;
	return last_until > admitted_time + TJ_START_QUIET_S ? last_until :
							       admitted_time + TJ_START_QUIET_S;
}

int64_t tj_status_quiet_after_write(int64_t admitted_time, int64_t now)
{
	if (admitted_time && now < admitted_time + TJ_START_QUIET_S)
		return admitted_time + TJ_START_QUIET_S;
	return now + TJ_PROGRESS_EVERY_S;
}

int64_t tj_status_quiet_after(const json_t *stored, const json_t *written,
			      int64_t admitted_time, int64_t now)
{
	/* A native gang's admission after its written wait: the wait used the first quiet time. */
	if (is_starting(written) && tj_status_waiting_for_scheduler(stored))
		return now + TJ_PROGRESS_EVERY_S;
	if (is_starting(written))
		return tj_status_quiet_after_write(admitted_time, now);
	if (!tj_status_waiting_for_scheduler(written))
		return 0;
	/* The wait has no admission to count from: its first write starts the first quiet time. */
	return now + (tj_status_waiting_for_scheduler(stored) ? TJ_PROGRESS_EVERY_S :
								 TJ_START_QUIET_S);
}

bool tj_status_progress_only(const json_t *stored, const json_t *want, int64_t quiet_until,
			     int64_t now)
{
	json_t *a, *b;
	bool same;

	if (now >= quiet_until)
		return false;
	if (!(is_starting(stored) && is_starting(want)) &&
	    !(tj_status_waiting_for_scheduler(stored) && tj_status_waiting_for_scheduler(want)))
		return false;
	a = without_progress(stored);
	b = without_progress(want);
	same = a && b && json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return same;
}
