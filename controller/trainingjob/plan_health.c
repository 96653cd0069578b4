/*
 * plan_health.c - the GitOps conditions (Reconciling, Stalled) that say
 * whether the job is where its spec asks (docs/api.md).
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

/* A reason the CRD accepts: ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$, at most 1024. */
bool plan_reason_ok(const char *r)
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
void plan_health(struct planner *p)
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
	if (!plan_reason_ok(reason))
		reason = tj_phase_name(st->phase);
	if (!message || !*message) {
		snprintf(fallback, sizeof(fallback), "the job is %s", tj_phase_name(st->phase));
		message = fallback;
	}
	/* reason and message point into strings that plan_cond() copies before it frees any. */
	plan_cond(p, "Reconciling", reconciling, reason, message);
	if (st->phase == TJ_PHASE_FAILED)
		plan_cond(p, "Stalled", true, reason, message);
	else
		plan_cond_clear(p, "Stalled", reason, message);
}
