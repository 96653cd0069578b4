/*
 * tj_depend.h - whether a job's spec.dependency is met (docs/design.md 13),
 * decided from what the caches show of the jobs it names: a pure function,
 * so that every rule is a unit test.
 *
 * Slurm's rules (sbatch.1 --dependency), for each job an item names:
 *   after       the job has started (been admitted), or ended;
 *   afterany    the job has ended, whatever its end;
 *   afterok     the job has succeeded;
 *   afternotok  the job has failed (a timeout and a cancel are failures);
 * an item is met when every job it names is; the dependency when every item
 * is (any: when one is). A job that is not there:
 *   - seen there before (status.dependency.seen): it was deleted, which is
 *     how cadre cancels; cancelled, after, afterany and afternotok are met
 *     by it, and afterok never can be;
 *   - named by a Slurm id and never seen: no such job exists, as Slurm
 *     finds when it is submitted: afterok and afternotok can never be met
 *     (sbatch: "Job dependency problem"), after and afterany are lifted;
 *     an array's index that is not one of its elements is no job either;
 *   - named by name and never seen: it may still come (GitOps applies in
 *     any order): the dependency waits, and says so.
 * An element of an array not made yet (the throttle holds it) is pending;
 * one made, ended and deleted ended as the array's sets say.
 * singleton: no older job of the same Slurm name and submitter (or any
 * that was admitted) is still running or waiting. A dependency that leads
 * back to the job itself can never be met (Slurm: "Circular job dependency").
 *
 * What can never be met fails the job, DependencyNeverSatisfied, as Slurm's
 * --kill-on-invalid-dep=yes does; Slurm's default leaves such a job pending
 * for ever, which is a job nobody looks at holding a place in the queue.
 */
#ifndef CADRE_TJ_DEPEND_H
#define CADRE_TJ_DEPEND_H

#include <stdbool.h>
#include <stddef.h>

#include "api/trainingjob.h"

/* What the caches show of one job a dependency names. */
struct tj_dep_target {
	const char *ref;      /* as the spec names it: "482913307", "482913307_4", "prep" */
	bool found;
	enum tj_phase phase;  /* when found */
	bool started;         /* when found: it was admitted once (status.admittedTime) */
	bool seen;            /* in the job's status.dependency.seen: found by an earlier pass */
	bool no_such_index;   /* "ID_INDEX" of an array that has no element INDEX */
};

enum tj_dep_state { TJ_DEP_WAIT = 0, TJ_DEP_MET, TJ_DEP_NEVER };

struct tj_dep_verdict {
	enum tj_dep_state state;
	char message[512];    /* WAIT and NEVER: for status.message, naming the item */
	/* "type:job" pairs met now, to record in status.dependency.satisfied (owned). */
	char **satisfied;
	size_t n_satisfied;
	/* The refs found now, to record in status.dependency.seen (owned). */
	char **seen;
	size_t n_seen;
};

/*
 * Decide job's dependency. targets[0..n) hold every job its items name (by
 * ref; a ref missing from targets reads as not found). singleton_by is the
 * name of an older job of its singleton group still running or waiting,
 * NULL when none; cycle, when not NULL, the chain of waiting jobs that leads
 * back to job ("a -> b -> a"). Pairs recorded in
 * job->status.dependency_satisfied stay met whatever the targets say now.
 * 0 or CADRE_ENOMEM; release out with tj_dep_verdict_release whatever it
 * returns.
 */
int tj_dep_decide(const struct trainingjob *job, const struct tj_dep_target *targets, size_t n,
		  const char *singleton_by, const char *cycle, struct tj_dep_verdict *out);
void tj_dep_verdict_release(struct tj_dep_verdict *v);

/*
 * The TrainingJob cache's index of singleton groups (store_index_fn): a job
 * not finished is filed under tj_singleton_key of its namespace, Slurm name
 * (the label cadre.dev/slurm-name, else its name) and submitter (the
 * annotation cadre.dev/submitted-by, "" when none), so that a singleton
 * waiter reads its group, not every cached job.
 */
#define TJ_SINGLETON_INDEX "singleton"
int tj_singleton_index(const json_t *job, json_t *values, void *arg);

/*
 * The TrainingJob cache's index of what waiting jobs wait for
 * (store_index_fn): a job that still waits for its dependencies is filed
 * under "<namespace>/<ref>" for every job its items name that it has not
 * recorded as met. A finished job's TTL waits while someone is filed under
 * its name or id (tj_dependency_awaited), so that a dependant never finds
 * gone a job whose end it has not seen.
 */
#define TJ_AWAITED_INDEX "awaited"

/*
 * Whether a cached job (a TrainingJob object) still waits for its
 * dependencies: it has some, not met, never admitted, not finished.
 */
bool tj_waits_for_dependency(const json_t *job);
int tj_awaited_index(const json_t *job, json_t *values, void *arg);

/* The index key of a group into out ("" when it does not fit); the length written. */
size_t tj_singleton_key(const char *ns, const char *group, const char *user, char *out,
			size_t size);

#endif
