/*
 * tj_depend_read.h - what the caches show of the jobs a TrainingJob's
 * spec.dependency names, read into the pure decision (tj_depend.h):
 *
 * - a Slurm id through the TrainingJob cache's index of stored ids
 *   (jobids.h), a name by key, never by a walk over every job;
 * - an array element "ID_INDEX" as its TrainingJob when it is there, else
 *   from its array: pending while the throttle holds it, ended as the
 *   array's sets say once it is gone, no job at all when the array has no
 *   such index;
 * - singleton through the cache's index of singleton groups;
 * - a cycle: the chain of jobs that wait for their own dependencies,
 *   followed from the job's (at most TJ_DEP_WALK_MAX jobs), leading back to
 *   it.
 */
#ifndef CADRE_TJ_DEPEND_READ_H
#define CADRE_TJ_DEPEND_READ_H

#include <stdbool.h>

#include "api/trainingjob.h"
#include "controller/trainingjob/tj_depend.h"

struct manager;

/* How many waiting jobs the cycle walk reads at most, per decision. */
#define TJ_DEP_WALK_MAX 64

/*
 * Decide job's spec.dependency against the caches into out. *decided is
 * false (and out untouched) when there is nothing to decide: no
 * dependency, or one met or outgrown already (it started). 0 or
 * CADRE_ENOMEM; when decided, release out with tj_dep_verdict_release.
 */
int tj_dependency_read(struct manager *m, const struct trainingjob *job,
		       struct tj_dep_verdict *out, bool *decided);

/*
 * Whether a job that waits for its dependencies names job (by name, Slurm
 * id, or as an array's "ID_INDEX") and has not recorded it as met: its
 * TTL waits (tj_plan.h, TJ_TTL_AWAITED_MAX_S).
 */
bool tj_dependency_awaited(struct manager *m, const struct trainingjob *job);

#endif
