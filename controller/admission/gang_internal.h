/*
 * gang_internal.h - what gang.c (one admission decision) shares with
 * gang_preempt.c (the preemption a decision may end in): its scratch area,
 * the candidates it collected, and the way it builds the cluster's capacity.
 */
#ifndef CADRE_GANG_INTERNAL_H
#define CADRE_GANG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/trainingjob.h"
#include "controller/admission/admission.h"
#include "controller/admission/capacity.h"
#include "controller/admission/dra_capacity.h"
#include "controller/manager/cache_record.h"
#include "controller/manager/jobmemo.h"
#include "controller/partition/partitions.h"

struct manager;
struct store;

/* A growing scratch area of fixed-size records; freed in one go. */
struct scratch {
	void **blocks;
	size_t n;
	int err;
};

void *gang_scratch_alloc(struct scratch *s, size_t count, size_t size);
char *gang_scratch_strdup(struct scratch *s, const char *text);
void gang_scratch_release(struct scratch *s);

struct candidate {
	struct trainingjob job;
	bool borrowed;     /* job is the caller's (the job asked about), not to be released */
	int64_t since;     /* created, or requeued after its last failure */
	bool admitted;     /* admitted earlier; some pods still need a place */
	bool placing;      /* the job asked about, whose ranks without a node are being placed */
	int unbound;
	unsigned char *bound;  /* per rank, its pod bound (charge_admitted; scratch) */
	/* Admitted by this process, the cache not showing it yet: the decision. */
	struct jobmemo_admission recorded;
};

/* A job that the records say waits for admission, to be decoded after the walk. */
struct waiting {
	char *key;
	bool admitted;
	int unbound;
};

struct collect {
	struct manager *m;
	struct waiting *waiting;     /* from the walk over the records */
	size_t n_waiting, cap_waiting;
	struct candidate *jobs;      /* decoded from those */
	size_t n;
	int64_t now;
	uint64_t now_ms;             /* monotonic, for the admitted records */
	int err;
	struct partition_set parts;  /* every Partition, for tiers (docs/design.md 3.5) */
	struct dra_view dra;         /* the DeviceClasses the jobs name (dra_capacity.h) */
};

struct charge_ctx {
	struct capacity *cap;
	struct store *own;      /* cadre's pods, charged from there */
	/*
	 * Keys of the admitted gangs with ranks not bound yet, sorted: their
	 * pods are charged by charge_admitted, from the same read that finds
	 * the unbound ranks, so a pod bound between two walks of the cache is
	 * counted once, never zero times.
	 */
	char **held;
	size_t n_held;
};

/* Sorts keys (char *) by strcmp, for charge_ctx.held. */
int gang_key_cmp(const void *a, const void *b);

/* A pod's requests charged on its node (occupied, or held whole when exclusive). */
void gang_charge(struct charge_ctx *c, const struct cache_pod *p);
bool gang_pod_ended(const struct cache_pod *p);

/* One pod of job's gang: what it asks of a node (strings and arrays in s). */
void gang_demand_of(struct scratch *s, const struct trainingjob *job, struct cap_demand *d);

/*
 * The cluster's free capacity now, every pod charged except those of the
 * jobs named in held (sorted keys), which the caller charges itself; the
 * devices of c->dra's DeviceClasses counted in, and c->dra's states set.
 */
int gang_capacity(struct collect *c, struct scratch *s, struct capacity *cap,
		  struct cap_node **cap_nodes, json_t **nodes, char **held, size_t n_held);

/* The admitted gangs of c on cap: their bound pods charged, the rest reserved where pinned. */
void gang_hold_admitted(struct scratch *s, const struct collect *c, struct capacity *cap);

#endif
