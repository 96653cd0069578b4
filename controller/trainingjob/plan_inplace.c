/*
 * plan_inplace.c - spec.restartStrategy InPlace (docs/failures.md, "In-place
 * restart"): a restart that keeps the gang's pods. The new attempt is stored
 * first (the counters, status.inPlaceRestart); then a pod that cannot run it
 * (deleted, evicted, ended, on a node gone bad) is deleted, and once those
 * are gone every other pod is told the attempt through its
 * cadre.dev/restart-attempt label, which its entrypoint reads; the ranks
 * whose pods were deleted get new ones on the nodes status.nodes keeps for
 * them (plan_gang.c creates them as any missing rank). A rank whose node was
 * lost or left behind has its node forgotten with the new attempt, and is
 * placed again, alone, beside the others (gang.c asks ranks.h), before its
 * pod is made. A pod is told, never asked: the kubelet restarts the
 * container in place, by the restart rule its pod carries, when the
 * entrypoint stops the run.
 */
#include "controller/trainingjob/plan_internal.h"
#include "api/condition.h"
#include "controller/build/build.h"

#include <stdio.h>
#include <string.h>

bool plan_in_place(const struct planner *p)
{
	return build_in_place(p->job, p->in->mode);
}

bool plan_in_place_current(const struct planner *p)
{
	return plan_in_place(p) && tj_in_place_current(&p->out->status);
}

/*
 * Whether the job left node behind after a failure there. A gang timeout's
 * entry says nothing against the node (admission sets it aside when the job
 * needs it), so a rank already there stays.
 */
static bool excluded(const struct planner *p, const char *node)
{
	const struct tj_status *st = &p->out->status;

	for (size_t i = 0; node && i < st->n_excluded_nodes; i++)
		if (st->excluded_nodes[i].node && !strcmp(st->excluded_nodes[i].node, node) &&
		    !tj_excluded_timed_out(&st->excluded_nodes[i]))
			return true;
	return false;
}

/* Whether v can run the next attempt where it is: alive, not going, on a usable node. */
static bool pod_keeps(const struct planner *p, const struct podview *v)
{
	if (v->deleting || plan_pod_terminal(v) || v->trouble == POD_TROUBLE_EVICTED ||
	    v->trouble == POD_TROUBLE_NODE_LOST || v->trouble == POD_TROUBLE_DEVICE)
		return false;
	if (v->node && p->in->node_ok && !p->in->node_ok(p->in->node_ctx, v->node))
		return false;
	return !excluded(p, v->node);
}

/* Built-in mode: whether rank's node is still its own, Ready and not left behind. */
static bool node_kept(const struct planner *p, int rank)
{
	const char *node = plan_decided_node(p, rank);

	return node && (!p->in->node_ok || p->in->node_ok(p->in->node_ctx, node)) &&
	       !excluded(p, node);
}

/*
 * Whether rank's pod can be made again for the next attempt: in none mode
 * wherever kube-scheduler puts it; in built-in mode on the node its
 * admission chose, or, when that node is lost or left behind, on one placed
 * for the rank alone. Not so for a job that lists its nodes
 * (spec.nodes.list): its ranks have nowhere else to go.
 */
static bool rank_replaceable(const struct planner *p, int rank)
{
	return p->in->mode != GANG_BUILTIN || node_kept(p, rank) || !p->job->spec.nodes.n_list;
}

bool plan_in_place_possible(const struct planner *p, const char *cond_reason)
{
	const struct tj_input *in = p->in;
	int n = plan_num_nodes(p), attempt = tj_attempt(&p->out->status), kept = 0;

	/* A gang that never came up, or an admission to redo, is placed afresh. */
	if (!plan_in_place(p) || !strcmp(cond_reason, "GangTimeout") ||
	    !strcmp(cond_reason, "AdmissionIncomplete") ||
	    !condition_is_true(&p->out->status.conditions, "Admitted"))
		return false;
	for (int r = 0; r < n; r++) {
		const struct podview *v = NULL;

		for (size_t i = 0; i < in->n_pods; i++)
			if (in->pods[i].rank == r && in->pods[i].attempt == attempt)
				v = &in->pods[i];
		if (v && pod_keeps(p, v))
			kept++;
		else if (!rank_replaceable(p, r))
			return false;
	}
	return kept > 0;
}

/*
 * The pods of other attempts than attempt: each that cannot run it is deleted;
 * once none of those is left, the others are told. Returns how many are to go.
 */
static size_t tell_or_replace(struct planner *p, int attempt)
{
	const struct tj_input *in = p->in;
	size_t going = 0;

	for (size_t i = 0; i < in->n_pods; i++) {
		const struct podview *v = &in->pods[i];

		if (v->attempt == attempt || (v->attempt < attempt && pod_keeps(p, v)))
			continue;
		going++;
		if (!v->deleting)
			plan_action(p, TJ_DELETE_POD, v->rank, v);
	}
	/* A peer's old pod goes before the others restart, so none finds it by name. */
	if (going)
		return going;
	for (size_t i = 0; i < in->n_pods; i++)
		if (in->pods[i].attempt != attempt)
			plan_action(p, TJ_PATCH_POD_ATTEMPT, in->pods[i].rank, &in->pods[i]);
	return 0;
}

void plan_in_place_begin(struct planner *p)
{
	struct tj_status *st = &p->out->status;

	st->has_in_place = true;
	st->in_place.attempt = tj_attempt(st);
	st->in_place.time = p->in->now;
	/* The ranks keep their nodes; no phase of the new attempt is known yet. */
	plan_record_nodes(p);
	/* A rank whose node is lost or left behind is placed again (plan_in_place_place). */
	for (int r = 0; p->in->mode == GANG_BUILTIN && r < plan_num_nodes(p); r++)
		if (!node_kept(p, r))
			plan_set_node(p, r, NULL);
	plan_requeue_in(p, p->job->spec.gang_timeout_seconds);
	plan_waiting(p, "RestartingInPlace");
	tell_or_replace(p, st->in_place.attempt);
}

/*
 * The gang timeout ran out before every pod was told or replaced (what
 * says which, ending in the timeout): the gang is recreated, and the record
 * of the in-place attempt goes, stored with the deletes (the same attempt:
 * no second count).
 */
static void fall_back(struct planner *p, const char *what)
{
	struct tj_status *st = &p->out->status;
	char why[1024];

	snprintf(why, sizeof(why), "attempt %d could not restart in place: %s within %llds "
		 "(spec.gang.timeoutSeconds); the gang is recreated", tj_attempt(st), what,
		 (long long)p->job->spec.gang_timeout_seconds);
	st->has_in_place = false;
	plan_set_phase(p, TJ_PHASE_RESTARTING);
	plan_cond(p, "Restarting", true, "InPlaceFailed", why);
	plan_cond(p, "Admitted", false, "Restarting", why);
	plan_set_message(p, "%s", why);
	plan_event(p, true, "InPlaceFailed", "%s", why);
	plan_delete_pods(p, false, -1);
	plan_clear_nodes(p);
}

int64_t plan_in_place_since(const struct planner *p)
{
	return plan_in_place_current(p) ? p->out->status.in_place.time : 0;
}

bool plan_in_place_catch_up(struct planner *p, int attempt)
{
	const struct tj_input *in = p->in;
	int64_t deadline = p->out->status.in_place.time + p->job->spec.gang_timeout_seconds;
	size_t stale = 0, going;

	for (size_t i = 0; i < in->n_pods; i++)
		stale += in->pods[i].attempt != attempt;
	if (!stale)
		return false;
	if (in->now >= deadline) {
		char what[128];

		snprintf(what, sizeof(what), "%zu pods were neither told nor replaced", stale);
		fall_back(p, what);
		return true;
	}
	plan_requeue_in(p, deadline - in->now);
	plan_waiting(p, "RestartingInPlace");
	going = tell_or_replace(p, attempt);
	if (going)
		plan_set_message(p, "restarting in place: waiting for %zu pod%s that cannot restart "
			    "in place to go", going, going == 1 ? "" : "s");
	else
		plan_set_message(p, "restarting in place: telling %zu rank%s that attempt %d began",
			    stale, stale == 1 ? "" : "s", attempt);
	return true;
}

/* While a rank waits for a node, the admission is asked again this often (seconds). */
#define PLACE_RETRY_S 5

/*
 * Built-in mode, once every kept pod runs the new attempt: a rank without a
 * pod or a node (its node was lost) gets one from admission, which places
 * it beside its peers (gang.c, ranks.h). The node is stored in status.nodes
 * with the pass's other writes, before its pod is made; a rank that finds
 * none waits, asking again, until the gang timeout recreates the gang.
 * True when the pass ends here.
 */
bool plan_in_place_place(struct planner *p, const struct podview **by_rank, int n)
{
	const struct tj_admission *a = &p->in->admission;
	int64_t deadline = p->out->status.in_place.time + p->job->spec.gang_timeout_seconds;
	int missing = 0;

	for (int r = 0; r < n; r++)
		missing += !by_rank[r] && !plan_decided_node(p, r);
	if (!missing)
		return false;
	if (a->verdict == ADMIT_UNDECIDED) {
		p->out->needs_admission = true;
		return true;
	}
	if (a->verdict == ADMIT_YES && a->nodes && a->n_nodes == n) {
		for (int r = 0; r < n; r++)
			if (!by_rank[r] && !plan_decided_node(p, r))
				plan_set_node(p, r, a->nodes[r]);
		plan_event(p, false, "RanksPlaced", "%s", a->message ? a->message : "placed again");
		return false;
	}
	if (p->in->now >= deadline) {
		char what[768];

		snprintf(what, sizeof(what), "%d rank%s found no node (%s)", missing,
			 missing == 1 ? "" : "s", a->message ? a->message : "no room");
		fall_back(p, what);
		return true;
	}
	plan_requeue_in(p, deadline - p->in->now < PLACE_RETRY_S ? deadline - p->in->now :
			PLACE_RETRY_S);
	plan_waiting(p, "RestartingInPlace");
	plan_set_message(p, "restarting in place: %d rank%s wait%s for a node: %s", missing,
			 missing == 1 ? "" : "s", missing == 1 ? "s" : "",
			 a->message ? a->message : "no room");
	plan_record_nodes(p);
	return true;
}
