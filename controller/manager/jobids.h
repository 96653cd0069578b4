/*
 * jobids.h - Slurm job ids that are unique.
 *
 * A job's id (status.jobId, SLURM_JOB_ID) is first derived from its uid
 * (tj_job_id_probe, probe 0: nine digits); with ids drawn from 9e8, two
 * jobs share one with even odds at about 30,000 jobs, and `scancel ID`
 * would take the first. So the id is claimed here before the planner
 * stores it: the TrainingJob cache's "jobid" index says which ids stored
 * statuses hold, a claim made but not yet seen there is remembered, and an
 * id held by another job is passed over for the next probe. The claim is
 * written (status.jobId) before anything acts on it; one lost with a
 * process is claimed again by the next, from the same uid, the same way.
 * Thread-safe.
 */
#ifndef CADRE_JOBIDS_H
#define CADRE_JOBIDS_H

#include <jansson.h>

#include "kube/store.h"

/* The TrainingJob cache's index of stored ids. */
#define JOBIDS_INDEX "jobid"

struct jobids;

struct jobids *jobids_new(void);
void jobids_free(struct jobids *ids);

/* store_index_fn of JOBIDS_INDEX: a job's status.jobId, when it has one. */
int jobids_index(const json_t *job, json_t *values, void *arg);

/*
 * The id of the job whose uid is uid into out (nine digits): the one the
 * jobs cache shows it holding, else the first probe no other job holds or
 * has claimed. 0, CADRE_EINVAL (no uid), CADRE_ENOMEM, CADRE_EEXIST (every
 * probe tried is taken: a cluster of hundreds of millions of jobs).
 */
int jobids_claim(struct jobids *ids, struct store *jobs, const char *uid, char out[16]);

#endif
