/*
 * plan_gang.c - the gang of the current attempt once admitted: its pods
 * counted rank by rank, made, watched, and what a failure, a hang, a lost
 * node or the gang timeout makes of it.
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
		/*
		 * Someone deleted it: the kubelet's TERM (or its KILL after the grace)
		 * may have ended the run before the cache showed the deletion, and that
		 * end is the delete's doing, not the program's.
		 */
		if (v->deleting && !v->deleted_by_us && !c->infra_fail &&
		    (!plan_pod_terminal(v) || (v->phase == POD_FAILED &&
		     (v->exit_code == 128 + 15 || v->exit_code == 128 + 9))))
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
		if (v->node && v->phase != POD_PENDING && !plan_pod_terminal(v) && in->node_ok &&
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
			/* Gone with its node (the pod GC takes a deleted node's pods). */
			if (ns->node && p->in->node_ok && !p->in->node_ok(p->in->node_ctx, ns->node)) {
				snprintf(why, sizeof(why), "node %s of rank %d (pod %s) was lost",
					 ns->node, ns->rank, ns->pod ? ns->pod : "?");
				plan_exclude_node(p, ns->node, "NodeLost", ns->rank);
				plan_restart(p, BLAME_INFRA, "NodeLost", NULL, why);
				return true;
			}
			if (tainted(p, ns->node)) {
				snprintf(why, sizeof(why), "pod %s (rank %d) was evicted by a NoExecute "
					 "taint of node %s it does not tolerate", ns->pod ? ns->pod : "?",
					 ns->rank, ns->node);
				plan_exclude_node(p, ns->node, "Tainted", ns->rank);
			} else {
				snprintf(why, sizeof(why), "pod %s (rank %d) was deleted outside cadre",
					 ns->pod ? ns->pod : "?", ns->rank);
			}
			plan_restart(p, BLAME_INFRA, "Evicted", NULL, why);
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

	if (refused && plan_refusal_expired(p, refused, refused_since))
		return true;
	if (in->expectations_met && !have)
		plan_topology_unexpressed(p);
	if (in->expectations_met)
		for (int r = 0; r < n; r++)
			if (!by_rank[r])
				plan_action(p, TJ_CREATE_POD, r, NULL);
	for (int r = 0; r < n; r++)
		if (by_rank[r] && by_rank[r]->kueue_managed)
			kueue_managed++;
	if (!in->service_exists)
		plan_action(p, TJ_CREATE_SERVICE, -1, NULL);
	if (!plan_kueue_admitted(p, (size_t)have, kueue_managed, &kd)) {
		if (plan_kueue_evicted(p, &kd))
			return true;
		if (refused)
			plan_say_refused(p, refused, "Admitted", refused_since);
		else if (kd.recheck)
			plan_requeue_in(p, 30);  /* no Workload event will say that Kueue came */
		plan_record_nodes(p);
		return true;
	}
	plan_admit(p, kd.message);
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
	/* Deleted by someone: what its run did since is the kubelet's TERM, not news. */
	bool deleted = v->deleting && (v->trouble == POD_TROUBLE_NONE ||
				       v->trouble == POD_TROUBLE_EXITED);
	bool taint = !reason && deleted && tainted(p, v->node);
	struct podview gone = *v;
	char why[1024];

	if (deleted) {
		gone.reason = NULL;
		gone.message = NULL;
		gone.message_len = 0;
	}
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
	else if (deleted)
		snprintf(why, sizeof(why), "pod %s (rank %d) was deleted outside cadre", v->name,
			 v->rank);
	else
		snprintf(why, sizeof(why), "pod %s (rank %d) was evicted or preempted%s%.*s", v->name,
			 v->rank, podview_message_len(v) ? ": " : "", podview_message_len(v),
			 v->message ? v->message : "");
	if (taint)
		reason = "Tainted";
	if (reason)
		plan_exclude_node(p, v->node, reason, v->rank);
	plan_restart(p, BLAME_INFRA, node_lost ? "NodeLost" : v->trouble == POD_TROUBLE_DEVICE ?
		"DeviceUnhealthy" : "Evicted", &gone, why);
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
	/* What the watchdog said after its prefix, without the attempt's tag. */
	int len = podview_message_len(v) - (int)strlen(PODVIEW_HUNG_MESSAGE);
	const char *what = v->message + strlen(PODVIEW_HUNG_MESSAGE);
	char why[1024];

	if (len <= 0) {
		what = "no progress";
		len = (int)strlen(what);
	}
	snprintf(why, sizeof(why), "rank %d (pod %s) on node %s is hung: %.*s", v->rank, v->name,
		 v->node ? v->node : "?", len, what);
	if (p->job->spec.hang.action == TJ_HANG_FAIL) {
		struct podview hung = *v;

		hung.reason = "Hung";
		plan_record_failure(p, &hung, "Hung", why);
		plan_record_history(p, &hung, "Hung", false);
		plan_finish(p, false, "Hung", why);
		plan_cond(p, "Admitted", false, "Hung", why);
		plan_delete_pods(p, true, -1);
		plan_record_nodes(p);
		return;
	}
	if (again) {
		struct podview hung = *v;

		hung.reason = "Hung";
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "; it hung on the same node "
			 "in the attempt before");
		plan_exclude_node(p, v->node, "Hung", v->rank);
		plan_restart(p, BLAME_INFRA, "Hung", &hung, why);
		return;
	}
	{
		struct podview hung = *v;

		hung.reason = "Hung";
		plan_restart(p, BLAME_USER, "Hung", &hung, why);
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
	plan_restart(p, BLAME_USER, "ScratchFull", &full, why);
}

/*
 * A rank's program exited non-zero: spec.failurePolicy says what its exit
 * code means; without a rule for it, a restart counted against maxRestarts.
 */
static void gang_user_failure(struct planner *p, const struct podview *v)
{
	enum tj_failure_action action = tj_failure_action_for(&p->job->spec, v->exit_code);
	char why[1024];

	snprintf(why, sizeof(why), "rank %d (pod %s) failed with exit code %d%s%.*s", v->rank,
		 v->name, v->exit_code, podview_message_len(v) ? ": " : "", podview_message_len(v),
		 v->message ? v->message : "");
	if (action == TJ_FAILURE_FAIL) {
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "; spec.failurePolicy fails "
			 "the job on exit code %d", v->exit_code);
		plan_record_failure(p, v, v->reason ? v->reason : "Error", why);
		plan_record_history(p, v, "PodFailed", false);
		plan_finish(p, false, "FailurePolicy", why);
		plan_cond(p, "Admitted", false, "FailurePolicy", why);
		plan_delete_pods(p, true, -1);
		plan_record_nodes(p);
		return;
	}
	plan_restart(p, action == TJ_FAILURE_RESTART_NOT_COUNTED ? BLAME_NOT_COUNTED : BLAME_USER,
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
		plan_finish(p, true, "Rank0Succeeded", "rank 0 succeeded");
		plan_delete_pods(p, true, 0);
		plan_record_nodes(p);
		return true;
	}
	if (spec->success_policy == TJ_SUCCESS_ALL && c->succeeded == n) {
		snprintf(why, sizeof(why), "all %d pods succeeded", n);
		plan_finish(p, true, "AllSucceeded", why);
		plan_record_nodes(p);
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
				plan_action(p, TJ_CREATE_POD, r, NULL);

	plan_record_nodes(p);
	if (c->running != n)
		return false;
	if (!plan_phase_was(p, TJ_PHASE_RUNNING)) {
		char msg[128];

		snprintf(msg, sizeof(msg), "all %d pods are Running", n);
		p->out->all_running_now = true;
		plan_event(p, false, "Running", "%s", msg);
		plan_cond(p, "Running", true, "AllPodsRunning", msg);
	}
	plan_set_phase(p, TJ_PHASE_RUNNING);
	if (!st->start_time)
		st->start_time = in->now;
	plan_cond_clear(p, "Restarting", "Running", "the gang is Running again");
	free(st->message);
	st->message = NULL;
	return true;
}

/* Starting: say what the gang waits for, in the words of its first troubled pod. */
static void gang_say_starting(struct planner *p, int n, const struct gang_census *c)
{
	const struct podview *start = c->start_trouble, *sched = c->sched_trouble;

	plan_waiting(p, start ? start->reason : sched ? "Unschedulable" : "PodsStarting");
	if (start)
		plan_set_message(p, "rank %d (pod %s) cannot start: %s: %s", start->rank, start->name,
			    start->reason, start->message ? start->message : "");
	else if (sched)
		plan_set_message(p, "rank %d (pod %s) is unschedulable: %s", sched->rank, sched->name,
			    sched->message ? sched->message : "");
	else
		plan_set_message(p, "%d of %d pods Running", c->running, n);
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
		const char *node = by_rank[r] && by_rank[r]->node ? NULL : plan_decided_node(p, r);

		if (!node)
			continue;
		plan_exclude_node(p, node, TJ_EXCLUDED_GANG_TIMEOUT, r);
		if (len < size)
			len += (size_t)snprintf(why + len, size - len, "%s%s (rank %d)", sep, node, r);
		sep = ", ";
		count++;
	}
	if (count && len < size)
		snprintf(why + len, size - len, ": %s off for the next attempts "
			 "(status.excludedNodes)", count == 1 ? "it stays" : "they stay");
}

/* The gang timeout counts from this attempt's admission (or in-place beginning): past it, restart. */
static void gang_timeout(struct planner *p, const struct podview **by_rank, int n,
			 const struct gang_census *c)
{
	const struct tj_spec *spec = &p->job->spec;
	const struct condition *admitted = condition_find(&p->out->status.conditions, "Admitted");
	const struct podview *start = c->start_trouble;
	int64_t deadline, in_place_since = plan_in_place_since(p);
	char why[1024];

	if (!admitted || strcmp(admitted->status, "True") || !admitted->last_transition_time)
		return;
	/* An attempt begun in place has the timeout from its beginning. */
	deadline = admitted->last_transition_time;
	if (in_place_since > deadline)
		deadline = in_place_since;
	deadline += spec->gang_timeout_seconds;
	if (p->in->now < deadline) {
		plan_requeue_in(p, deadline - p->in->now);
		return;
	}
	if (start) {
		snprintf(why, sizeof(why), "rank %d (pod %s) could not start within %llds: %s: %s",
			 start->rank, start->name, (long long)spec->gang_timeout_seconds,
			 start->reason, start->message ? start->message : "");
		plan_restart(p, BLAME_USER, "PodFailed", start, why);
		return;
	}
	snprintf(why, sizeof(why), "only %d of %d pods were Running %llds after admission",
		 c->running, n, (long long)spec->gang_timeout_seconds);
	exclude_unscheduled(p, by_rank, n, why, sizeof(why));
	plan_restart(p, BLAME_INFRA, "GangTimeout", c->sched_trouble, why);
}

/*
 * No pod is planned while an object the pods need is refused: past the
 * gang timeout it is a failure of user input, until then the job says why
 * in the condition it waits on.
 */
void plan_hold_for_refusal(struct planner *p, const struct tj_refusal *refused, int64_t since)
{
	bool admitted = condition_is_true(&p->out->status.conditions, "Admitted");

	if (plan_refusal_expired(p, refused, since))
		return;
	plan_set_phase(p, admitted ? TJ_PHASE_STARTING : TJ_PHASE_QUEUED);
	plan_say_refused(p, refused, admitted ? "Running" : "Admitted", since);
	plan_record_nodes(p);
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
		plan_action(p, TJ_CREATE_ENTRYPOINT, -1, NULL);
	if (!refused || refused->rank != TJ_REFUSAL_ENTRYPOINT)
		return false;
	plan_hold_for_refusal(p, refused, since);
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
		plan_action(p, TJ_CREATE_SERVICE, -1, NULL);
	plan_hold_for_refusal(p, refused, since);
	return true;
}

/*
 * The DRA objects the pods claim from, while one is refused: no pod is
 * planned (each would wait for a claim that cannot be made), the create is
 * tried again, and the job says why as for a refused pod. True when the
 * pass ends here.
 */
static bool claims_blocked(struct planner *p, const struct tj_refusal *refused, int64_t since)
{
	if (!refused || (refused->rank != TJ_REFUSAL_CLAIM_TEMPLATE &&
			 refused->rank != TJ_REFUSAL_COMPUTE_DOMAIN))
		return false;
	if (p->in->expectations_met)
		plan_action(p, refused->rank == TJ_REFUSAL_CLAIM_TEMPLATE ?
			    TJ_CREATE_CLAIM_TEMPLATE : TJ_CREATE_COMPUTE_DOMAIN, -1, NULL);
	plan_hold_for_refusal(p, refused, since);
	return true;
}

/*
 * Built-in mode: a pod still to be created, or one an earlier version left
 * gated, needs the node the stored admission chose for its rank. An
 * admission stored without one (by a version that gated its pods and kept
 * the placement in memory) cannot be finished: the gang is admitted again,
 * without blame. True when it restarted, or when a rank restarting in place
 * waits for a node of its own.
 */
static bool builtin_record_incomplete(struct planner *p, const struct podview **by_rank, int n)
{
	char why[1024];

	if (p->in->mode != GANG_BUILTIN)
		return false;
	/* In place, a rank whose node was lost is placed again, alone. */
	if (plan_in_place_current(p))
		return plan_in_place_place(p, by_rank, n);
	for (int r = 0; r < n; r++) {
		if (by_rank[r] ? !by_rank[r]->gated : plan_decided_node(p, r) != NULL)
			continue;
		snprintf(why, sizeof(why), "attempt %d was admitted without a stored node for rank "
			 "%d (an earlier cadre version kept its placement in memory); the gang is "
			 "admitted again", tj_attempt(&p->out->status), r);
		plan_restart(p, BLAME_INFRA, "AdmissionIncomplete", NULL, why);
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
		const char *node = plan_decided_node(p, r);
		struct podview v = { .rank = r, .node = node, .attempt = tj_attempt(&p->out->status) };
		char name[320];

		if ((by_rank[r] && by_rank[r]->node) || !node || in->node_known(in->node_ctx, node))
			continue;
		snprintf(name, sizeof(name), "%s-%d", p->job->meta.name ? p->job->meta.name : "", r);
		v.name = name;
		snprintf(why, sizeof(why), "node %s, admitted for rank %d, is gone before its pod "
			 "was placed", node, r);
		plan_restart(p, BLAME_INFRA, "NodeLost", &v, why);
		return true;
	}
	return false;
}

/* One pass over an admitted (or admitting) gang: census, outcome, progress, timeout. */
static void plan_gang_ranks(struct planner *p, const struct podview **by_rank)
{
	const struct tj_input *in = p->in;
	struct tj_status *st = &p->out->status;
	int n = plan_num_nodes(p), attempt = tj_attempt(st);
	const struct tj_refusal *refused;
	struct gang_census c;
	int64_t refused_since;

	gang_census(p, by_rank, n, attempt, &c);
	refused = plan_live_refusal(p, by_rank);
	refused_since = refused ? plan_refusal_since(p, refused) : 0;
	/* Kueue evicting the group deletes its pods: say it with Kueue's reason, before
	 * the pods' deletions are taken for someone else's. */
	if (in->mode == GANG_KUEUE && condition_is_true(&st->conditions, "Admitted") &&
	    plan_kueue_evicted(p, NULL))
		return;
	if (in->expectations_met && !c.infra_fail && gang_deleted_outside(p, by_rank, n, attempt))
		return;
	if (entrypoint_blocked(p, n, c.have, refused, refused_since) ||
	    service_blocked(p, refused, refused_since) ||
	    claims_blocked(p, refused, refused_since))
		return;
	if (in->mode == GANG_KUEUE && !condition_is_true(&st->conditions, "Admitted") &&
	    gang_kueue_wait(p, by_rank, n, c.have, refused, refused_since))
		return;
	if (!in->service_exists)
		plan_action(p, TJ_CREATE_SERVICE, -1, NULL);
	if (in->mode == GANG_NATIVE) {
		if (!condition_is_true(&st->conditions, "Admitted") &&
		    !plan_native_admitted(p, by_rank, refused, refused_since))
			return;
		if (plan_native_disrupted(p))
			return;
	}
	if (gang_outcome(p, by_rank, n, &c))
		return;
	if (refused && plan_refusal_expired(p, refused, refused_since))
		return;
	if (builtin_record_incomplete(p, by_rank, n) || builtin_node_gone(p, by_rank, n))
		return;
	if (gang_progress(p, by_rank, n, &c))
		return;
	plan_set_phase(p, TJ_PHASE_STARTING);
	plan_cond(p, "Running", false, "Starting", "waiting for every pod to be Running");
	if (refused) {
		plan_say_refused(p, refused, "Running", refused_since);
		return;
	}
	gang_say_starting(p, n, &c);
	gang_timeout(p, by_rank, n, &c);
}

void plan_gang(struct planner *p)
{
	const struct podview **by_rank = calloc((size_t)plan_num_nodes(p), sizeof(*by_rank));

	if (!by_rank) {
		p->err = CADRE_ENOMEM;
		return;
	}
	plan_gang_ranks(p, by_rank);
	free(by_rank);
}
