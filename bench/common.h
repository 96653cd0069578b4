/*
 * common.h - what the benchmarks that need no cluster share: failing with
 * a word, a monotonic clock, and the controller's caches set up as
 * manager.c sets them up (trims, records, indexes), filled one object at
 * a time.
 */
#ifndef CADRE_BENCH_COMMON_H
#define CADRE_BENCH_COMMON_H

#include <jansson.h>

#include "controller/manager/manager.h"
#include "kube/store.h"

/* "cadre-bench-...: what" on stderr, exit 1. */
_Noreturn void bench_die(const char *what);

/* CLOCK_MONOTONIC, in milliseconds. */
double bench_now_ms(void);

/*
 * A store for the cache of kind: pods (own, with the job and node
 * indexes), other pods, TrainingJobs (records and the preemption index),
 * Partitions, and Nodes for any other kind. Dies when out of memory.
 */
struct store *bench_cache_new(enum manager_kind kind);

/* Store obj (stolen) in s; dies when it cannot. */
void bench_put(struct store *s, json_t *obj);

/* What gang_admit needs of m beside its caches: the admission records and lock. */
void bench_manager_init(struct manager *m);
/* Those, and every cache m has. */
void bench_manager_free(struct manager *m);

#endif
