/*
 * plan_native.c - native gang mode: kube-scheduler admits the PodGroup
 * (docs/gang-admission.md), read here from its status (tj_podgroup_read).
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
void plan_delete_podgroups(struct planner *p, int keep_attempt)
{
	if (p->in->mode != GANG_NATIVE)
		return;
	for (size_t i = 0; i < p->in->n_podgroups; i++) {
		const struct tj_podgroup *pg = &p->in->podgroups[i];
		struct tj_action *a;

		if (pg->attempt == keep_attempt || pg->deleting)
			continue;
		a = plan_action(p, TJ_DELETE_PODGROUP, -1, NULL);
		if (a)
			a->pod = pg->name;
	}
}

/* The gang waits for the scheduler: Queued, Admitted=False with why. */
static void native_wait(struct planner *p, const char *reason, const char *msg)
{
	plan_cond(p, "Admitted", false, reason, msg);
	plan_waiting(p, reason);
	plan_set_phase(p, TJ_PHASE_QUEUED);
	plan_set_message(p, "%s", msg);
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
void plan_topology_unexpressed(struct planner *p)
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
		plan_event(p, true, "TopologyNotExpressible", "%s cannot say spec.topology.%s; the "
		      "pods are placed without it", mode, what);
}

/*
 * Before admission: the PodGroup, then every pod naming it, ungated, in the
 * same pass (the reconciler sends the pods only once the group's create
 * succeeded: a pod naming a missing group never reaches the scheduler's
 * queue); then mirror the scheduler. Scheduled (or every pod bound, should
 * the condition lag) is the admission. Returns true when the gang is admitted.
 */
bool plan_native_admitted(struct planner *p, const struct podview **by_rank,
			    const struct tj_refusal *refused, int64_t refused_since)
{
	const struct tj_podgroup *pg = current_podgroup(p);
	const struct condition *c = condition_find(&p->job->status.conditions, "Admitted");
	int n = plan_num_nodes(p), have = 0, bound = 0;
	const char *reason;
	char msg[1024];

	if (refused && plan_refusal_expired(p, refused, refused_since))
		return false;
	if (!pg) {
		if (p->in->expectations_met) {
			plan_action(p, TJ_CREATE_PODGROUP, -1, NULL);
			plan_topology_unexpressed(p);
			for (int r = 0; r < n; r++)
				if (!by_rank[r])
					plan_action(p, TJ_CREATE_POD, r, NULL);
		}
		/* Said as the wait is said once the group is seen: made in this pass, it is
		 * the same wait, and no second write tells it. */
		native_wait(p, "WaitingForScheduler", scheduler_wait(p, NULL, n, msg, sizeof(msg)));
		return false;
	}
	for (int r = 0; r < n; r++) {
		if (!by_rank[r] && p->in->expectations_met)
			plan_action(p, TJ_CREATE_POD, r, NULL);
		have += by_rank[r] != NULL;
		bound += by_rank[r] && by_rank[r]->node;
	}
	if (pg->state == TJ_PODGROUP_SCHEDULED || (have == n && bound == n)) {
		snprintf(msg, sizeof(msg), "kube-scheduler placed pod group %s (%d pods)",
			 pg->name, n);
		plan_admit(p, msg);
		return true;
	}
	/* Placed as one, no pod of the group has a node yet: the list of them would only
	 * follow the watch, one more write. They are listed once placed. */
	plan_clear_nodes(p);
	if (refused) {
		plan_say_refused(p, refused, "Admitted", refused_since);
		return false;
	}
	if (pg->state == TJ_PODGROUP_UNSCHEDULABLE) {
		reason = plan_reason_ok(pg->reason) ? pg->reason : "Unschedulable";
		snprintf(msg, sizeof(msg), "kube-scheduler cannot place pod group %s (%d pods): %s",
			 pg->name, n, pg->message && *pg->message ? pg->message : "no message");
		/* Once per change of what the scheduler says, not once per reconcile. */
		if (!c || strcmp(c->status, "False") || strcmp(c->reason, reason) ||
		    strcmp(c->message ? c->message : "", msg))
			plan_event(p, false, reason, "%s", msg);
		native_wait(p, reason, msg);
		return false;
	}
	native_wait(p, "WaitingForScheduler", scheduler_wait(p, pg->name, n, msg, sizeof(msg)));
	return false;
}

/* After admission: the scheduler preempting the group requeues it, no failure. */
bool plan_native_disrupted(struct planner *p)
{
	const struct tj_podgroup *pg = current_podgroup(p);
	char why[1024];

	if (!pg || !pg->disrupted)
		return false;
	snprintf(why, sizeof(why), "kube-scheduler disrupted pod group %s: %s", pg->name,
		 pg->disruption_message && *pg->disruption_message ? pg->disruption_message :
		 "no message");
	plan_restart(p, BLAME_NONE, "Preempted", NULL, why);
	return true;
}

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
