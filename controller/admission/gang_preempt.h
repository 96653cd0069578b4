/*
 * gang_preempt.h - built-in preemption by Partition tier against the live
 * caches (docs/design.md 3.5, "Preemption"): the glue between one
 * admission decision (gang.c), the choice of victims (preempt.h) and the
 * victims' own reconciles.
 *
 * The decision is stored on the preemptor first: its status.preempting
 * lists the victims and the attempts it stops. The TrainingJob cache
 * indexes that list (GANG_PREEMPTS_INDEX), so each victim's reconcile
 * finds, without a walk, that it is preempted (gang_preempted), records it
 * in its own status, and only then signals its pods. While a listed
 * victim is still stopping, the preemptor holds the nodes it needs and no
 * second preemption is chosen for it; a controller that restarts in
 * between finds the same list and finishes the same preemption.
 */
#ifndef CADRE_GANG_PREEMPT_H
#define CADRE_GANG_PREEMPT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "controller/admission/gang_internal.h"
#include "controller/trainingjob/tj_plan.h"

#define GANG_PREEMPTS_INDEX "preempts"

/* The TrainingJob cache's index: the keys a job's status.preempting names. */
int gang_preempts_index(const json_t *job, json_t *values, void *arg);

/*
 * Whether a victim a preemptor listed is still stopping: it is there, and
 * has pods that have not ended, or has not yet acted on its preemption (it
 * still holds its admission at the attempt listed).
 */
bool gang_victim_stopping(struct manager *m, const struct tj_preempting *v);

/*
 * Whether job (parsed, at its current attempt) is listed by a waiting job's
 * status.preempting; its preemptor, tiers, mode and grace into out, with
 * the preemptor's key in by (STORE_KEY_MAX bytes), which out->preemptor
 * points at. 0 or CADRE_ENOMEM.
 */
int gang_preempted(struct manager *m, const struct trainingjob *job, struct tj_preempted *out,
		   char *by, bool *yes);

/*
 * After a decision in which queue[target] waits: when it heads its tier
 * (every job ahead of it was admitted or cannot be placed for a reason of
 * its own) and running gangs of lower tiers may be preempted, choose the
 * fewest that make it fit (preempt.h) on the capacity it would see at its
 * turn. The victims and a message into held (n_preempt 0: none).
 */
int gang_preempt(struct scratch *s, struct collect *c, char **held_keys, size_t n_held,
		 const struct capacity *cap, const struct adm_job *queue, size_t n_queue,
		 const struct adm_decision *dec, size_t target, struct jobmemo_admission *held);

/*
 * The head of a decided queue: the first job in admission order that waits
 * and could be placed but for room, the one job gang_preempt may choose
 * victims for; n_queue when none.
 */
size_t gang_queue_head(const struct adm_job *queue, size_t n_queue,
		       const struct adm_decision *dec);

/* Whether job, waiting at the head of the queue, may preempt running gangs. */
bool gang_may_preempt(const struct partition_set *parts, const struct adm_job *job);

#endif
