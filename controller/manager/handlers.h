/*
 * handlers.h - the watch -> queue handlers: what a change in each cache means
 * for the work queue and the expectations.
 *
 * A TrainingJob's change queues the job and the Volumes it names; a pod's
 * change queues its job and settles the job's expectations; a change in
 * capacity (other pods, nodes, DRA's slices, claims and classes) queues one
 * admission pass; Services,
 * PodGroups, entrypoint ConfigMaps, claims and volumes queue the object that owns them. Handlers
 * run on the reflector's thread of their kind and only queue keys: the
 * reconcilers do the work.
 */
#ifndef CADRE_HANDLERS_H
#define CADRE_HANDLERS_H

#include "controller/manager/manager.h"

/*
 * The handlers the cache of kind calls (their ctx is the manager): what a
 * change means for the work queue and the expectations. For tests, which
 * drive them with a manager that has only its queue and expectations.
 */
struct store_handlers manager_handlers(struct manager *m, enum manager_kind kind);

/* Queue every TrainingJob and Volume in the caches: the first pass after
 * gaining the lead. */
void manager_enqueue_everything(struct manager *m);

#endif
