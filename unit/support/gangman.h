/*
 * gangman.h - a manager holding the caches built-in admission reads (its
 * own and other pods, TrainingJobs, Nodes, Partitions and the DRA kinds),
 * trimmed and recorded as the controller keeps them, for unit tests that
 * call gang_admit and friends without a cluster.
 */
#ifndef CADRE_UNIT_GANGMAN_H
#define CADRE_UNIT_GANGMAN_H

#include <jansson.h>

#include "api/fielderr.h"
#include "api/trainingjob.h"
#include "controller/admission/gang.h"
#include "controller/manager/jobmemo.h"
#include "controller/manager/manager.h"
#include "controller/partition/partitions.h"

/* Fill m (and opts, zeroed then given the accelerator label and a starvation of 600 s). */
void gangman_setup(struct manager *m, struct options *opts);
void gangman_teardown(struct manager *m);

/* Store obj (a new reference, consumed) in the cache of kind, as a watch event would. */
void gangman_upsert(struct manager *m, enum manager_kind kind, json_t *obj);

/* One gang_admit of a cached job, as its reconcile makes it: the job and the verdict. */
struct gangman_decision {
	json_t *obj;
	struct trainingjob job;
	struct field_errors errs;
	struct tj_admission out;
	struct jobmemo_admission held;
	struct job_partition part;
};

/* Decide for the cached TrainingJob "ns/<name>" into d; release d with gangman_decided. */
void gangman_decide(struct manager *m, const char *name, struct gangman_decision *d);
void gangman_decided(struct gangman_decision *d);

#endif
