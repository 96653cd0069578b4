/*
 * preempt.h - which running gangs to stop so that a job of a higher
 * Partition tier fits (docs/design.md 3.5, "Preemption").
 *
 * The caller (gang_preempt.c) finds the candidates: Running gangs of
 * strictly lower tiers whose Partition's preemptMode is not Off and whose
 * preemptExemptTimeSeconds has passed, none already being preempted. It
 * builds a capacity in which none of their pods is charged (every other
 * pod and the room of the jobs ahead of the preemptor in the queue are),
 * and passes their pods by node. preempt_choose() then picks:
 *  - nothing, when the job would not fit even with every candidate gone;
 *  - else the fewest gangs: one, when one alone is enough (the first such
 *    in the order below); otherwise the shortest prefix of that order that
 *    is enough, less every gang of it that the rest can do without, tried
 *    from the last taken (Kueue's and Slurm's greedy fill, then pruning);
 *  - the order: lowest tier first, then lowest priority, then the most
 *    recently started (Slurm's youngest_first), then namespace and name.
 *
 * Pure: no I/O, no clock. Each what-if puts the capacity back to its base
 * and charges the gangs kept; O(candidates x their pods) per what-if, and
 * at most candidates + 2 log2(candidates) + chosen what-ifs.
 */
#ifndef CADRE_PREEMPT_H
#define CADRE_PREEMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/admission/admission.h"
#include "controller/admission/capacity.h"

/* Most extended resources a victim's pod is charged with (cache_record.h's). */
#define PRE_POD_EXT_MAX 8

/* A running pod of a candidate, on the capacity's node index node. */
struct pre_pod {
	uint32_t node;
	int64_t cpu_milli, memory_milli;
	struct cap_resource ext[PRE_POD_EXT_MAX];
	size_t n_ext;
	bool occupies;   /* not a service of the node: an exclusive job may not share it */
	bool exclusive;  /* the victim's own spec.exclusive: it holds the node whole */
};

struct pre_victim {
	const char *namespace, *name;  /* borrowed */
	int32_t tier, priority;
	int64_t started_s;             /* status.startTime */
	const struct pre_pod *pods;    /* borrowed */
	size_t n_pods;
};

/*
 * Choose among victims[0..n) for job on cap (see above). chosen (n
 * entries) receives the indices of the victims to stop, in the order
 * above; *n_chosen 0 when none would do. cap ends holding its base plus
 * the pods of the victims kept. 0, CADRE_EINVAL (a bad job) or CADRE_ENOMEM.
 */
int preempt_choose(struct capacity *cap, const struct adm_job *job, const struct pre_victim *victims,
		   size_t n, size_t *chosen, size_t *n_chosen);

#endif
