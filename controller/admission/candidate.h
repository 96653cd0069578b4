/*
 * candidate.h - what a TrainingJob is to built-in gang admission
 * (docs/design.md 3.1, "Candidates and constraints").
 *
 * One function answers it, for the capacity records (cache_record.c, from
 * the job as stored), for admission's walk (gang.c, from the job as
 * decoded) and for the planner (tj_plan.c, from the status it is about to
 * write, before it asks for a decision): so that the three never disagree
 * about which jobs take room. A job that cannot start now takes none: it is
 * not in the queue, holds no node and fences nothing after
 * --starvation-seconds.
 */
#ifndef CADRE_CANDIDATE_H
#define CADRE_CANDIDATE_H

#include <stdint.h>

struct trainingjob;

enum tj_candidacy {
	/*
	 * Takes no room: finished, suspended, deleting, Pending, Restarting
	 * (but for a restart in place, which keeps its admission),
	 * on a Kueue queue, an array job (its elements are the jobs that run),
	 * waiting for its dependencies, or held by a refused ConfigMap or Service.
	 */
	CANDIDACY_NONE,
	/*
	 * In the queue: placed by the simulated walk, in turn, from not_before
	 * on (a job backing off after a failure; 0 when it may start at once).
	 */
	CANDIDACY_WAITS,
	/*
	 * Admitted: holds the node its admission chose for every rank whose
	 * pod of the current attempt is not bound yet and has not ended; a
	 * rank that finished frees its node (gang.c). Restarting in place, a
	 * live pod of an earlier attempt still on its rank's node counts as
	 * that rank's.
	 */
	CANDIDACY_HOLDS,
};

/*
 * What job, parsed and valid, is to built-in admission, with the reason in
 * *why (a static string; "" for a job that waits or holds) and, for a
 * waiting job, the time before which it may not be placed in *not_before.
 * Either pointer may be NULL.
 */
enum tj_candidacy tj_candidacy(const struct trainingjob *job, int64_t *not_before,
			       const char **why);

#endif
