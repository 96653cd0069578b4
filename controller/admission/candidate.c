#include "controller/admission/candidate.h"
#include "api/condition.h"
#include "api/trainingjob.h"
#include "controller/trainingjob/tj_plan.h"

#include <string.h>

/* The reason the job is no candidate, or NULL when it is one. */
static const char *not_a_candidate(const struct trainingjob *job)
{
	const struct tj_spec *spec = &job->spec;
	const struct tj_status *st = &job->status;
	const struct condition *admitted = condition_find(&st->conditions, "Admitted");

	if (tj_phase_terminal(st->phase))
		return "it has finished";
	if (job->meta.deleting)
		return "it is being deleted";
	if (spec->suspend || st->phase == TJ_PHASE_SUSPENDED)
		return "it is suspended";
	if (spec->queue && *spec->queue)
		return "it is on a Kueue queue";
	if (spec->array)
		return "an array job runs no pods itself: its elements wait for admission";
	if (st->phase == TJ_PHASE_PENDING)
		return "it waits for something other than capacity (phase Pending)";
	/* In place, the gang keeps its admission and its nodes (docs/failures.md). */
	if (st->phase == TJ_PHASE_RESTARTING && !tj_in_place_current(st))
		return "it is restarting";
	if (admitted && !strcmp(admitted->status, "True"))
		return NULL;
	if (spec->has_dependency && !st->dependency_met && !st->admitted_time)
		return "it waits for its dependencies";
	if (admitted && admitted->reason && !strcmp(admitted->reason, "CreateRefused"))
		return "the API server refused its ConfigMap or Service";
	return NULL;
}

enum tj_candidacy tj_candidacy(const struct trainingjob *job, int64_t *not_before,
			       const char **why)
{
	const struct tj_status *st = &job->status;
	const char *reason = not_a_candidate(job);
	int attempt = tj_attempt(st);

	if (not_before)
		*not_before = 0;
	if (why)
		*why = reason ? reason : "";
	if (reason)
		return CANDIDACY_NONE;
	if (condition_is_true(&st->conditions, "Admitted"))
		return CANDIDACY_HOLDS;
	if (not_before && attempt > 0 && st->has_last_failure)
		*not_before = st->last_failure.time + tj_restart_backoff_s(attempt);
	return CANDIDACY_WAITS;
}
