/*
 * common.h - what the benchmarks that need no cluster share: failing with
 * a word, a monotonic clock, and the controller's caches set up as
 * manager.c sets them up (trims, records, indexes), filled one object at
 * a time.
 */
#ifndef CADRE_BENCH_COMMON_H
#define CADRE_BENCH_COMMON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "controller/manager/manager.h"
#include "kube/store.h"

/* "cadre-bench-...: what" on stderr, exit 1. */
_Noreturn void bench_die(const char *what);

/* CLOCK_MONOTONIC, in milliseconds. */
double bench_now_ms(void);

/*
 * A store for the cache of kind: pods (own, with the job and node
 * indexes), other pods, TrainingJobs (records and the preemption index),
 * Partitions, ResourceSlices, ResourceClaims, DeviceClasses, and Nodes for
 * any other kind. Dies when out of memory.
 */
struct store *bench_cache_new(enum manager_kind kind);

/* Store obj (stolen) in s; dies when it cannot. */
void bench_put(struct store *s, json_t *obj);

/* What one decision said, for a bench to check it measured what it meant to. */
struct bench_verdict {
	bool admitted;
	size_t n_preempt;   /* victims chosen */
};

/*
 * One gang_admit for the TrainingJob obj (borrowed), stored in m's cache
 * for the time of it and asked about runs times afresh: the best time, in
 * ms; what the last one said into last.
 */
double bench_decide(struct manager *m, json_t *obj, int runs, struct bench_verdict *last);

/*
 * The same, each run's time into ms[0..runs). The job is given
 * m->opts->device_class_name, as the reconciler's partitions_apply would
 * give it.
 */
void bench_decide_runs(struct manager *m, json_t *obj, int runs, double *ms,
		       struct bench_verdict *last);

/* Another tenant's pod holding every GPU of node gpu-node-<i>. */
json_t *bench_tenant_pod(long i);

/* What gang_admit needs of m beside its caches: the admission records and lock. */
void bench_manager_init(struct manager *m);
/* Those, and every cache m has. */
void bench_manager_free(struct manager *m);

#endif
