/*
 * tj_plan.c - the TrainingJob state machine (tj_plan.h): the helpers every
 * part uses, a finished job, restarts and the nodes left behind, the waits
 * before admission, built-in admission and dependencies, and the pass
 * itself. The gang of an attempt is plan_gang.c, native mode plan_native.c,
 * arrays plan_array.c, the health conditions plan_health.c and the quiet
 * time of status writes plan_quiet.c.
 */
#include "controller/trainingjob/plan_internal.h"
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
	       kind == TJ_CREATE_PODGROUP || kind == TJ_DELETE_JOB ||
	       kind == TJ_CREATE_CLAIM_TEMPLATE || kind == TJ_CREATE_COMPUTE_DOMAIN;
}

struct tj_action *plan_action(struct planner *p, enum tj_action_kind kind, int rank,
				const struct podview *pod)
{
	struct tj_action *a;

	/*
	 * A pod of a job with DRA claims needs what it claims from: made with
	 * its first create, whichever path plans that create (the creates
	 * treat an object already there and the job's as made).
	 */
	if (kind == TJ_CREATE_POD && build_uses_claim_template(p->in->job))
		plan_action(p, TJ_CREATE_CLAIM_TEMPLATE, -1, NULL);
	if (kind == TJ_CREATE_POD && p->in->job->spec.compute_domain.set)
		plan_action(p, TJ_CREATE_COMPUTE_DOMAIN, -1, NULL);
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
		const struct tj_status *st = &p->out->status;

		a->pod = pod->name;
		a->uid = pod->uid;
		/* Every delete of a preempted attempt's pods gives them the preemption's grace. */
		if (kind == TJ_DELETE_POD && st->has_preemption &&
		    pod->attempt == st->preemption.attempt) {
			a->has_grace = true;
			a->grace_s = st->preemption.grace_s;
		}
	}
	return a;
}

void plan_event(struct planner *p, bool warning, const char *reason, const char *fmt, ...)
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

void plan_set_string(struct planner *p, char **field, const char *value)
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

void plan_set_message(struct planner *p, const char *fmt, ...)
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

void plan_cond(struct planner *p, const char *type, bool status, const char *reason,
		 const char *message)
{
	int err = condition_set(&p->out->status.conditions, type, status ? "True" : "False",
				reason, message, p->job->meta.generation, p->in->now, NULL);

	if (err)
		p->err = err;
}

/* Set the condition False only when it is present: absent means never true. */
void plan_cond_clear(struct planner *p, const char *type, const char *reason,
		       const char *message)
{
	if (condition_find(&p->out->status.conditions, type))
		plan_cond(p, type, false, reason, message);
}

/* Say why the job waits, for the Reconciling condition (plan_health). */
void plan_waiting(struct planner *p, const char *reason)
{
	p->wait_reason = reason;
}

int plan_num_nodes(const struct planner *p)
{
	return p->job->spec.num_nodes > 0 ? p->job->spec.num_nodes : 1;
}

void plan_requeue_in(struct planner *p, int64_t seconds)
{
	if (seconds < 1)
		seconds = 1;
	if (!p->out->requeue_after_s || seconds < p->out->requeue_after_s)
		p->out->requeue_after_s = seconds;
}

bool plan_pod_terminal(const struct podview *v)
{
	return v->phase == POD_SUCCEEDED || v->phase == POD_FAILED;
}

/* Delete pods not yet going; keep_terminal keeps finished ones for logs. */
size_t plan_delete_pods(struct planner *p, bool keep_terminal, int keep_rank)
{
	size_t live = 0;

	for (size_t i = 0; i < p->in->n_pods; i++) {
		const struct podview *v = &p->in->pods[i];

		if (keep_terminal && plan_pod_terminal(v))
			continue;
		if (v->rank == keep_rank && keep_rank >= 0)
			continue;
		live++;
		if (!v->deleting)
			plan_action(p, TJ_DELETE_POD, v->rank, v);
	}
	return live;
}

void plan_set_phase(struct planner *p, enum tj_phase phase)
{
	p->out->status.phase = phase;
}

bool plan_phase_was(const struct planner *p, enum tj_phase phase)
{
	return p->job->status.phase == phase;
}

/*
 * The node the stored admission chose for rank: built-in mode keeps its
 * decision in status.nodes (docs/design.md 3.1). NULL in the other modes,
 * and for a rank it has none for.
 */
const char *plan_decided_node(const struct planner *p, int rank)
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

void plan_record_nodes(struct planner *p)
{
	struct tj_status *st = &p->out->status;
	int n = plan_num_nodes(p), attempt = tj_attempt(st), ready = 0;
	struct tj_node_status *fresh = calloc((size_t)n, sizeof(*fresh));
	size_t n_fresh = 0;

	if (!fresh) {
		p->err = CADRE_ENOMEM;
		return;
	}
	for (int rank = 0; rank < n; rank++) {
		const struct podview *v = NULL;
		const char *decided = plan_decided_node(p, rank);
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
		plan_set_string(p, &ns->pod, v ? v->name : name);
		plan_set_string(p, &ns->node, v && v->node ? v->node : decided);
		if (!v)
			continue;
		plan_set_string(p, &ns->ip, v->ip);
		plan_set_string(p, &ns->phase, pod_phase_name(v->phase));
		if (v->phase == POD_RUNNING && !v->deleting)
			ready++;
	}
	plan_clear_nodes(p);
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

/*
 * Set rank's node in status.nodes (without a phase: no pod yet), or, with
 * node NULL, forget it: a rank restarting in place whose node was lost has
 * none until one is placed for it (plan_inplace.c).
 */
void plan_set_node(struct planner *p, int rank, const char *node)
{
	struct tj_status *st = &p->out->status;
	struct tj_node_status *ns = NULL;
	char name[320];

	for (size_t i = 0; i < st->n_nodes && !ns; i++)
		if (st->nodes[i].rank == rank)
			ns = &st->nodes[i];
	if (ns && !node) {
		node_status_release(ns);
		memmove(ns, ns + 1, (size_t)(st->nodes + st->n_nodes - ns - 1) * sizeof(*ns));
		st->n_nodes--;
	} else if (node) {
		if (!ns && !(ns = grow(p, (void **)&st->nodes, &st->n_nodes, sizeof(*ns))))
			return;
		node_status_release(ns);
		memset(ns, 0, sizeof(*ns));
		snprintf(name, sizeof(name), "%s-%d", p->job->meta.name ? p->job->meta.name : "",
			 rank);
		ns->rank = rank;
		plan_set_string(p, &ns->pod, name);
		plan_set_string(p, &ns->node, node);
	}
	record_topology(p);
}

void plan_clear_nodes(struct planner *p)
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

void plan_record_failure(struct planner *p, const struct podview *v, const char *reason,
			   const char *message)
{
	struct tj_failure *f = &p->out->status.last_failure;

	p->out->status.has_last_failure = true;
	f->rank = v ? v->rank : -1;
	f->exit_code = v ? v->exit_code : 0;
	f->time = p->in->now;
	plan_set_string(p, &f->pod, v ? v->name : NULL);
	plan_set_string(p, &f->node, v ? v->node : NULL);
	plan_set_string(p, &f->reason, reason);
	plan_set_string(p, &f->message, message);
}

void plan_finish(struct planner *p, bool success, const char *reason, const char *message)
{
	struct tj_status *st = &p->out->status;

	plan_set_phase(p, success ? TJ_PHASE_SUCCEEDED : TJ_PHASE_FAILED);
	if (!st->completion_time)
		st->completion_time = p->in->now;
	plan_cond(p, success ? "Succeeded" : "Failed", true, reason, message);
	plan_cond_clear(p, "Running", success ? "Completed" : reason, message);
	plan_cond_clear(p, "Restarting", success ? "Completed" : reason, message);
	plan_set_message(p, "%s", message);
	plan_event(p, !success, success ? "Succeeded" : reason, "%s", message);
}

/* Terminal jobs: stop what still runs, keep finished pods, honour the TTL. */
static void plan_terminal(struct planner *p)
{
	const struct tj_status *st = &p->out->status;
	const struct tj_spec *spec = &p->job->spec;

	plan_delete_pods(p, true, -1);
	plan_record_nodes(p);
	if (spec->has_ttl_seconds_after_finished && st->completion_time) {
		int64_t at = st->completion_time + spec->ttl_seconds_after_finished;

		/* A dependant that has not seen the end yet sees it first (tj_depend_read.h). */
		if (p->in->now >= at && p->in->awaited && p->in->now < at + TJ_TTL_AWAITED_MAX_S)
			plan_requeue_in(p, 2);
		else if (p->in->now >= at)
			plan_action(p, TJ_DELETE_JOB, -1, NULL);
		else
			plan_requeue_in(p, at - p->in->now);
	}
}


/* Append this failure to status.failures, dropping the oldest past the cap. */
void plan_record_history(struct planner *p, const struct podview *v, const char *reason,
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
	plan_set_string(p, &f->reason, reason);
	plan_set_string(p, &f->node, v ? v->node : NULL);
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
 * recorded as a failure; otherwise as plan_restart() below.
 */
static void requeue_gang(struct planner *p, const char *cond_reason, const char *why)
{
	struct tj_status *st = &p->out->status;

	st->requeues++;
	plan_set_phase(p, TJ_PHASE_RESTARTING);
	plan_cond(p, "Restarting", true, cond_reason, why);
	plan_cond_clear(p, "Running", cond_reason, why);
	plan_cond(p, "Admitted", false, "Restarting", why);
	plan_set_message(p, "%s; the gang is queued again (requeue %d: no failure, counted against no "
		    "limit)", why, st->requeues);
	plan_event(p, true, cond_reason, "%s", p->out->status.message);
	plan_delete_pods(p, false, -1);
	plan_clear_nodes(p);
}

/*
 * Begin a gang restart: count it, remember why, delete the gang. The job
 * stays Restarting until every pod is gone, then queues again. The status
 * that says so is stored before any pod is deleted (tj_plan.h).
 */
void plan_restart(struct planner *p, enum blame blame, const char *cond_reason,
		    const struct podview *v, const char *why)
{
	struct tj_status *st = &p->out->status;
	const struct tj_spec *spec = &p->job->spec;
	bool user = blame == BLAME_USER, in_place;
	const char *how;
	char msg[2048];

	if (blame == BLAME_NONE) {
		requeue_gang(p, cond_reason, why);
		return;
	}
	in_place = plan_in_place_possible(p, cond_reason);
	how = in_place ? "restarting the gang in place" : "restarting the gang";
	plan_record_failure(p, v, v && v->reason ? v->reason : cond_reason, why);
	plan_record_history(p, v, cond_reason, !user);
	if (user && st->restarts >= spec->max_restarts) {
		snprintf(msg, sizeof(msg), "%s; no restarts left (maxRestarts %d)", why,
			 spec->max_restarts);
		plan_finish(p, false, "MaxRestartsExceeded", msg);
		plan_cond(p, "Admitted", false, "MaxRestartsExceeded", msg);
		plan_delete_pods(p, true, -1);
		plan_record_nodes(p);
		return;
	}
	if (!user && st->infra_restarts >= spec->max_infra_restarts) {
		struct buf list;

		buf_init(&list, 1024);
		list_infra_failures(st, &list);
		snprintf(msg, sizeof(msg), "%s; no infrastructure restarts left (maxInfraRestarts "
			 "%d): %s", why, spec->max_infra_restarts, buf_str(&list));
		buf_release(&list);
		plan_finish(p, false, "TooManyInfraRestarts", msg);
		plan_cond(p, "Admitted", false, "TooManyInfraRestarts", msg);
		plan_delete_pods(p, true, -1);
		plan_record_nodes(p);
		return;
	}
	if (user)
		st->restarts++;
	else
		st->infra_restarts++;
	plan_set_phase(p, TJ_PHASE_RESTARTING);
	plan_cond(p, "Restarting", true, cond_reason, why);
	plan_cond_clear(p, "Running", cond_reason, why);
	/* In place, the gang keeps its admission: its nodes are still its own. */
	if (!in_place)
		plan_cond(p, "Admitted", false, !strcmp(cond_reason, "GangTimeout") ? "GangTimeout" :
			  "Restarting", why);
	if (user)
		plan_set_message(p, "%s; %s (restart %d of %d)", why, how, st->restarts,
			    spec->max_restarts);
	else if (blame == BLAME_NOT_COUNTED)
		plan_set_message(p, "%s; %s, not counted against maxRestarts "
			    "(spec.failurePolicy; infrastructure restart %d of %d)", why, how,
			    st->infra_restarts, spec->max_infra_restarts);
	else
		plan_set_message(p, "%s; %s (infrastructure restart %d of %d, not "
			    "counted against maxRestarts)", why, how, st->infra_restarts,
			    spec->max_infra_restarts);
	plan_event(p, true, cond_reason, "%s", p->out->status.message);
	if (in_place) {
		plan_in_place_begin(p);
		return;
	}
	plan_delete_pods(p, false, -1);
	plan_clear_nodes(p);
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
	size_t cap = (size_t)plan_num_nodes(p) / (timed_out ? 1 : 4);

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
void plan_exclude_node(struct planner *p, const char *node, const char *reason, int rank)
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
		plan_set_string(p, &x->node, node);
	}
	plan_set_string(p, &x->reason, reason);
	x->time = p->in->now;
	if (timed_out)
		return;
	plan_event(p, true, "NodeExcluded", "node %s is left behind by this job's next attempts: rank "
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
	plan_event(p, !strcmp(reason, "VolumeNotFound"), reason, "%s", msg);
}

/*
 * A job whose Partition is not there waits for it, as for a Volume: applied
 * a moment before its Partition, or while an admin replaces it (a GitOps
 * delete and create), it starts once the Partition is back. cadre sbatch
 * refuses an unknown -p at submission, in Slurm's words.
 */
bool plan_partition_waits(struct planner *p)
{
	const struct condition *c = condition_find(&p->job->status.conditions, "Admitted");
	char msg[1024];

	if (!p->in->partition_missing)
		return false;
	snprintf(msg, sizeof(msg), "%s: waiting for the Partition to exist",
		 p->in->partition_missing);
	if (!c || strcmp(c->status, "False") || !c->reason ||
	    strcmp(c->reason, "PartitionNotFound") || !c->message || strcmp(c->message, msg))
		plan_event(p, true, "PartitionNotFound", "%s", msg);
	plan_cond(p, "Admitted", false, "PartitionNotFound", msg);
	plan_waiting(p, "PartitionNotFound");
	plan_set_phase(p, TJ_PHASE_PENDING);
	plan_set_message(p, "%s", msg);
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
		plan_cond(p, "VolumesReady", false, reason, msg);
		plan_waiting(p, reason);
		plan_set_phase(p, TJ_PHASE_PENDING);
		plan_set_message(p, "waiting for volumes: %s", msg);
		return false;
	}
	if (p->in->n_volumes)
		plan_cond(p, "VolumesReady", true, "Bound", "every Volume is Bound");
	else
		plan_cond(p, "VolumesReady", true, "NoVolumes", "the job mounts no Volumes");
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
			plan_event(p, false, "WaitingForCode", "%s", msg);
		plan_cond(p, "CodeReady", false, "WaitingForCode", msg);
		plan_waiting(p, "WaitingForCode");
		plan_set_phase(p, TJ_PHASE_PENDING);
		plan_set_message(p, "%s", msg);
		return false;
	}
	if (p->in->n_code < p->job->spec.n_code) {
		plan_waiting(p, "WaitingForCode");
		plan_set_phase(p, TJ_PHASE_PENDING);
		plan_set_message(p, "waiting for code: its bundles are not read yet");
		return false;
	}
	plan_cond(p, "CodeReady", true, "CodePresent", "every code bundle is in the namespace");
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
	plan_event(p, !strcmp(d->reason, "NotManagedByKueue"), d->reason, "%s", d->message);
}

/*
 * Kueue admits in its Workload for the pod group (kueue.h): that decides,
 * never the pods' gates. The pods only tell why there is no Workload.
 */
bool plan_kueue_admitted(struct planner *p, size_t have, size_t managed,
			   struct kueue_decision *d)
{
	struct kueue_view v = { 0 };

	if (p->in->kueue)
		v = *p->in->kueue;
	v.queue = p->job->spec.queue;
	v.namespace = p->job->meta.namespace;
	v.pods = have;
	v.managed = managed;
	v.n = (size_t)plan_num_nodes(p);
	kueue_decide(&v, d);
	if (d->verdict == KUEUE_ADMIT)
		return true;
	if (d->verdict == KUEUE_EVICT)
		return false;
	kueue_wait_event(p, d);
	plan_cond(p, "Admitted", false, d->reason, d->message);
	plan_waiting(p, d->reason);
	plan_set_phase(p, TJ_PHASE_QUEUED);
	plan_set_message(p, "%s", d->message);
	return false;
}

/* After admission too: Kueue evicting the group restarts it; a preemption is no failure. */
bool plan_kueue_evicted(struct planner *p, const struct kueue_decision *given)
{
	struct kueue_decision d;

	if (!given) {
		struct kueue_view v = { 0 };

		if (!p->in->kueue)
			return false;
		v = *p->in->kueue;
		v.n = (size_t)plan_num_nodes(p);
		kueue_decide(&v, &d);
		given = &d;
	}
	if (given->verdict != KUEUE_EVICT)
		return false;
	plan_restart(p, given->no_failure ? BLAME_NONE : BLAME_INFRA,
		plan_reason_ok(given->reason) ? given->reason : "Evicted", NULL, given->message);
	return true;
}

/*
 * The first admission: its time, and the spec of the job's Partition then,
 * so that what the job took from it is kept (tj_status.partition_spec).
 */
void plan_first_admission(struct planner *p)
{
	struct tj_status *st = &p->out->status;

	if (st->admitted_time)
		return;
	st->admitted_time = p->in->now;
	if (p->in->partition_spec && !st->partition_spec &&
	    !(st->partition_spec = json_deep_copy(p->in->partition_spec)))
		p->err = CADRE_ENOMEM;
}

void plan_admit(struct planner *p, const char *message)
{
	/* What it preempted for has done its work. */
	tj_preempting_clear(&p->out->status);
	plan_cond(p, "Admitted", true, "Admitted", message);
	plan_first_admission(p);
	p->out->admitted_now = true;
	plan_event(p, false, "Admitted", "%s", message);
}

/* The input's create refusal when it still holds: this attempt, its pod still missing. */
const struct tj_refusal *plan_live_refusal(const struct planner *p,
					     const struct podview **by_rank)
{
	const struct tj_refusal *r = p->in->refusal;

	if (!r || !r->pod || r->attempt != tj_attempt(&p->out->status))
		return NULL;
	if (r->rank == TJ_REFUSAL_ENTRYPOINT)
		return p->in->entrypoint_exists ? NULL : r;
	if (r->rank == TJ_REFUSAL_SERVICE || r->rank == TJ_REFUSAL_CLAIM_TEMPLATE ||
	    r->rank == TJ_REFUSAL_COMPUTE_DOMAIN) {
		if (r->rank == TJ_REFUSAL_SERVICE && p->in->service_exists)
			return NULL;
		for (int i = 0; i < plan_num_nodes(p); i++)
			if (!by_rank[i])
				return r;
		return NULL;  /* a whole gang has found its peers already */
	}
	if (r->rank < 0 || r->rank >= plan_num_nodes(p) || by_rank[r->rank])
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
	else if (r->rank == TJ_REFUSAL_CLAIM_TEMPLATE)
		snprintf(out, size, "ResourceClaimTemplate %s", r->pod);
	else if (r->rank == TJ_REFUSAL_COMPUTE_DOMAIN)
		snprintf(out, size, "ComputeDomain %s", r->pod);
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
int64_t plan_refusal_since(const struct planner *p, const struct tj_refusal *r)
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
bool plan_refusal_expired(struct planner *p, const struct tj_refusal *r, int64_t since)
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
	plan_restart(p, BLAME_USER, "CreateRefused", r->rank < 0 ? NULL : &v, why);
	return true;
}

/* Until then, say why at once: in status.message and in the condition that waits. */
void plan_say_refused(struct planner *p, const struct tj_refusal *r, const char *cond_type,
			int64_t since)
{
	char why[1024], what[320];

	/* A pod's name says its rank already. */
	refused_object(r, false, what, sizeof(what));
	snprintf(why, sizeof(why), "cannot create %s: %s", what,
		 r->message && *r->message ? r->message : "refused by the API server");
	plan_cond(p, cond_type, false, "CreateRefused", why);
	plan_set_message(p, "%s", why);
	plan_waiting(p, "CreateRefused");
	plan_requeue_in(p, since + p->job->spec.gang_timeout_seconds - p->in->now);
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
		plan_event(p, false, "Requeued", "the old gang is gone; attempt %d waits %llds more "
		      "(restart backoff after %s), then queues for admission", attempt,
		      (long long)wait_s,
		      st->last_failure.reason ? st->last_failure.reason : "a failure");
	else
		plan_event(p, false, "Requeued", "the old gang is gone; attempt %d is queued for "
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
		plan_requeue_in(p, deadline - p->in->now);
		return false;
	}
	snprintf(msg, sizeof(msg), "activeDeadlineSeconds (%lld) passed",
		 (long long)spec->active_deadline_seconds);
	plan_finish(p, false, "DeadlineExceeded", msg);
	plan_delete_pods(p, true, -1);
	plan_record_nodes(p);
	return true;
}

/* Restarting: wait for the old gang to go, then queue again. True while it is not gone. */
static bool old_gang_going(struct planner *p)
{
	struct tj_status *st = &p->out->status;
	size_t live;

	if (st->phase != TJ_PHASE_RESTARTING || plan_in_place_current(p))
		return false;
	live = plan_delete_pods(p, false, -1);
	if (live) {
		plan_set_message(p, "restarting: waiting for %zu pods of the old gang to go", live);
		return true;
	}
	plan_set_phase(p, TJ_PHASE_QUEUED);
	plan_cond(p, "Restarting", false, "TornDown", "the old gang is gone; queued again");
	requeued_event(p);
	return false;
}

/*
 * Pods of an earlier attempt are never reused (in place, they are told the
 * new one instead, plan_inplace.c): finish deleting them. True while any is left.
 */
static bool stale_pods_going(struct planner *p, int attempt)
{
	const struct tj_input *in = p->in;
	size_t stale = 0;

	if (plan_in_place_current(p))
		return plan_in_place_catch_up(p, attempt);
	for (size_t i = 0; i < in->n_pods; i++)
		if (in->pods[i].attempt != attempt)
			stale++;
	if (!stale)
		return false;
	for (size_t i = 0; i < in->n_pods; i++)
		if (in->pods[i].attempt != attempt && !in->pods[i].deleting)
			plan_action(p, TJ_DELETE_POD, in->pods[i].rank, &in->pods[i]);
	plan_waiting(p, "OldPodsTerminating");
	plan_set_message(p, "waiting for %zu pods of an earlier attempt to go", stale);
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
	plan_set_phase(p, TJ_PHASE_QUEUED);
	plan_waiting(p, "RestartBackoff");
	plan_set_message(p, "restart %d: backing off for %llds after %s", attempt,
		    (long long)(at - p->in->now),
		    st->last_failure.reason ? st->last_failure.reason : "a failure");
	plan_requeue_in(p, at - p->in->now);
	return true;
}

/*
 * Admission chose victims for this job: the choice is stored in
 * status.preempting, written before any victim hears of it; each victim's
 * own reconcile finds it there (gang_preempt.h).
 */
static void record_preempting(struct planner *p)
{
	const struct tj_admission *a = &p->in->admission;
	struct tj_status *st = &p->out->status;
	struct tj_preempting *list = calloc(a->n_preempt, sizeof(*list));

	if (!list) {
		p->err = CADRE_ENOMEM;
		return;
	}
	tj_preempting_clear(st);
	st->preempting = list;
	for (size_t i = 0; i < a->n_preempt; i++) {
		list[i].attempt = a->preempt_attempt[i];
		plan_set_string(p, &list[i].job, a->preempt[i]);
		st->n_preempting++;
	}
}

/* Built-in admission said wait: say why, once as an event, and stay Queued. */
static void builtin_wait(struct planner *p)
{
	const struct tj_input *in = p->in;
	const char *reason = in->admission.reason ? in->admission.reason : "InsufficientCapacity";
	const char *msg = in->admission.message ? in->admission.message : "waiting for capacity";
	const struct condition *c = condition_find(&p->out->status.conditions, "Admitted");

	if (in->admission.n_preempt)
		record_preempting(p);
	/* Keep a GangTimeout reason visible until the next admission. */
	if (!c || strcmp(c->reason, "GangTimeout") || in->admission.n_preempt)
		plan_cond(p, "Admitted", false, reason, msg);
	/* Say once, as an event, that the gang waits and why. */
	if (!c || strcmp(c->status, "False") || strcmp(c->reason, reason))
		plan_event(p, false, reason, "%s", msg);
	plan_waiting(p, reason);
	plan_set_phase(p, TJ_PHASE_QUEUED);
	plan_set_message(p, "%s", msg);
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
		plan_action(p, TJ_CREATE_ENTRYPOINT, -1, NULL);
	if (!in->service_exists)
		plan_action(p, TJ_CREATE_SERVICE, -1, NULL);
	if (!r || !r->pod || r->attempt != tj_attempt(&p->out->status) ||
	    !((r->rank == TJ_REFUSAL_ENTRYPOINT && !in->entrypoint_exists) ||
	      (r->rank == TJ_REFUSAL_SERVICE && !in->service_exists)))
		return false;
	plan_hold_for_refusal(p, r, r->first_time);
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
	int n = plan_num_nodes(p);

	plan_clear_nodes(p);
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
		plan_set_string(p, &ns->pod, name);
		plan_set_string(p, &ns->node, a->nodes[r]);
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
		plan_set_phase(p, TJ_PHASE_QUEUED);
	/* A refusal that held it has cleared (builtin_prepare). */
	if (c && !strcmp(c->status, "False") && !strcmp(c->reason, "CreateRefused"))
		plan_cond(p, "Admitted", false, "Queued", "waiting for admission");
	view.status = p->out->status;
	if (tj_candidacy(&view, NULL, &why) == CANDIDACY_WAITS)
		return false;
	plan_waiting(p, "NotACandidate");
	plan_set_message(p, "not waiting for admission: %s", why);
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
		plan_admit(p, "admitted without gang scheduling (--gang-scheduler=none)");
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
		plan_admit(p, in->admission.message ? in->admission.message :
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
			plan_set_string(p, slot, add[i]);
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
bool plan_dependency_holds(struct planner *p)
{
	const struct tj_dep_verdict *v = p->in->dependency;
	struct tj_status *st = &p->out->status;
	const struct condition *c = condition_find(&p->job->status.conditions, "Admitted");

	if (!p->job->spec.has_dependency || st->dependency_met || st->admitted_time)
		return false;
	if (!v) {
		plan_set_phase(p, TJ_PHASE_QUEUED);
		plan_cond(p, "Admitted", false, "Dependency", "waiting for its dependencies");
		plan_waiting(p, "Dependency");
		plan_set_message(p, "waiting for its dependencies");
		return true;
	}
	record_satisfied(p, v);
	switch (v->state) {
	case TJ_DEP_MET:
		st->dependency_met = true;
		plan_event(p, false, "DependencyMet", "its dependencies are satisfied; queued for "
		      "admission");
		return false;
	case TJ_DEP_NEVER:
		plan_finish(p, false, "DependencyNeverSatisfied", v->message);
		plan_cond(p, "Admitted", false, "DependencyNeverSatisfied", v->message);
		return true;
	case TJ_DEP_WAIT:
		break;
	}
	/* Said as an event once per change of what it waits for. */
	if (!c || strcmp(c->reason, "Dependency") || strcmp(c->message ? c->message : "",
							   v->message))
		plan_event(p, false, "Dependency", "%s", v->message);
	plan_set_phase(p, TJ_PHASE_QUEUED);
	plan_cond(p, "Admitted", false, "Dependency", v->message);
	plan_waiting(p, "Dependency");
	plan_set_message(p, "%s", v->message);
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
	plan_set_string(p, &st->requeued, asked);
	if (st->phase == TJ_PHASE_RESTARTING || !condition_is_true(&st->conditions, "Admitted"))
		return false;
	plan_restart(p, BLAME_NONE, "Requeued", NULL, "requeued (scontrol requeue)");
	return true;
}

/*
 * A job of a higher tier preempts this one (docs/design.md 3.5): the
 * preemption is recorded in status.preemption, with the grace, before the
 * pods are told (the status is written before any action); then each pod
 * is deleted with that grace, so the program gets spec.signal (else
 * SIGTERM) from the entrypoint and is killed when the grace ends. Requeue:
 * it waits in the queue again, keeping its place by age; Cancel: it ends
 * Failed. Either way counted in preemptions, never as a failure.
 */
static bool preempted(struct planner *p)
{
	const struct tj_preempted *pre = p->in->preempted;
	struct tj_status *st = &p->out->status;
	struct tj_preemption *rec = &st->preemption;
	const char *sig = p->job->spec.signal.name ? p->job->spec.signal.name : "TERM";
	char msg[1024];

	if (!pre || st->phase == TJ_PHASE_RESTARTING || !condition_is_true(&st->conditions,
									  "Admitted"))
		return false;
	st->has_preemption = true;
	rec->attempt = tj_attempt(st);
	rec->time = p->in->now;
	rec->grace_s = pre->grace_s;
	rec->tier = pre->tier;
	plan_set_string(p, &rec->preemptor, pre->preemptor);
	plan_set_string(p, &rec->mode, pre->cancel ? "Cancel" : "Requeue");
	st->preemptions++;
	snprintf(msg, sizeof(msg), "preempted by %s (Partition tier %d over %d): its pods get "
		 "SIG%s and %llds to stop, then the job %s (preemption %d: no failure)",
		 pre->preemptor, (int)pre->tier, (int)pre->own_tier, sig, (long long)pre->grace_s,
		 pre->cancel ? "ends (preemptMode Cancel)" : "is queued again (preemptMode Requeue)",
		 st->preemptions);
	if (pre->cancel) {
		plan_finish(p, false, "Preempted", msg);
		plan_cond(p, "Admitted", false, "Preempted", msg);
		plan_record_nodes(p);
	} else {
		plan_set_phase(p, TJ_PHASE_RESTARTING);
		plan_cond(p, "Restarting", true, "Preempted", msg);
		plan_cond_clear(p, "Running", "Preempted", msg);
		plan_cond(p, "Admitted", false, "Restarting", msg);
		plan_set_message(p, "%s", msg);
		plan_event(p, true, "Preempted", "%s", msg);
		plan_clear_nodes(p);
	}
	plan_delete_pods(p, true, -1);
	return true;
}

static void plan_active(struct planner *p)
{
	struct tj_status *st = &p->out->status;
	int attempt = tj_attempt(st);

	if (preempted(p) || plan_dependency_holds(p) || requeue_asked(p))
		return;
	if (active_deadline_passed(p))
		return;
	plan_delete_podgroups(p, attempt);
	if (old_gang_going(p) || stale_pods_going(p, attempt))
		return;
	if (!condition_is_true(&st->conditions, "Admitted")) {
		if (plan_partition_waits(p) || !volumes_ready(p) || !code_ready(p) ||
		    restart_backing_off(p, attempt) ||
		    builtin_prepare(p) ||
		    not_admitted(p))
			return;
	}
	plan_gang(p);
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
		plan_set_string(&p, &st->job_id, in->job_id && *in->job_id ? in->job_id : job_id);
	}
	if (!st->task_id) {
		char task[TJ_TASK_ID_MAX];

		tj_task_id(&job->meta, st->job_id, task);
		plan_set_string(&p, &st->task_id, task);
	}

	if (job->meta.deleting)
		goto out;
	expire_excluded(&p);
	if (in->partition && !st->partition)
		plan_set_string(&p, &st->partition, in->partition);
	if (in->invalid) {
		if (st->phase != TJ_PHASE_FAILED) {
			char msg[2048];

			snprintf(msg, sizeof(msg), "%s%s", in->invalid_reason ? "" : "invalid spec: ",
				 in->invalid);
			plan_finish(&p, false, in->invalid_reason ? in->invalid_reason : "InvalidSpec", msg);
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
		size_t live = plan_delete_pods(&p, false, -1);

		/* On resume the scheduler must place the gang again, under a fresh status. */
		plan_delete_podgroups(&p, -1);

		plan_set_phase(&p, TJ_PHASE_SUSPENDED);
		plan_cond(&p, "Suspended", true, "Suspended", "spec.suspend is true");
		plan_cond_clear(&p, "Running", "Suspended", "spec.suspend is true");
		plan_cond_clear(&p, "Admitted", "Suspended", "spec.suspend is true");
		plan_clear_nodes(&p);
		if (live) {
			plan_waiting(&p, "Suspending");
			plan_set_message(&p, "suspending: deleting %zu pods", live);
		} else
			plan_set_message(&p, "suspended: no pods exist; set spec.suspend to false to resume");
		if (before != TJ_PHASE_SUSPENDED)
			plan_event(&p, false, "Suspended", "spec.suspend is true; deleting the gang");
		goto out;
	}
	if (st->phase == TJ_PHASE_SUSPENDED) {
		/* A gang still going is not resumed under itself: the new one would adopt it. */
		size_t live = plan_delete_pods(&p, false, -1);

		if (live) {
			plan_waiting(&p, "Suspending");
			plan_set_message(&p, "resuming once the %zu pods of the suspended gang are gone",
				    live);
			goto out;
		}
		plan_cond(&p, "Suspended", false, "Resumed", "spec.suspend is false");
		plan_set_phase(&p, TJ_PHASE_QUEUED);
		plan_event(&p, false, "Resumed", "spec.suspend is false; queued for admission");
	}
	if (st->phase == TJ_PHASE_UNSET)
		plan_set_phase(&p, TJ_PHASE_QUEUED);
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
