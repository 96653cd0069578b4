/*
 * partitions.h - a job's Partition, from the controller's cache of them
 * (api/partition.h; docs/design.md 11).
 *
 * Every reader of a job that acts on where or how it runs (the
 * reconciler, gang admission) calls partitions_apply on the job it parsed:
 * the partition's defaults and placement become the job's effective spec,
 * in memory only. A job whose partition does not exist, or refuses it (a
 * time limit past maxTime, another queue; before admission also a namespace
 * not in allowedNamespaces or a priority above maxJobPriority), cannot run:
 * the verdict says so and why, in Slurm's words or naming the field.
 *
 * Thread-safe: reads the store, which is.
 */
#ifndef CADRE_PARTITIONS_H
#define CADRE_PARTITIONS_H

#include "api/trainingjob.h"

struct manager;

enum partition_verdict {
	PARTITION_NONE = 0,  /* no partition: today's behaviour */
	PARTITION_APPLIED,   /* name's defaults and placement are in the job's spec now */
	PARTITION_UNKNOWN,   /* name is no Partition: the job cannot run */
	PARTITION_REFUSED,   /* the partition refuses the job: message says why */
};

struct job_partition {
	enum partition_verdict verdict;
	char name[256];      /* "" for PARTITION_NONE */
	char message[512];   /* UNKNOWN, REFUSED: for status.message; else "" */
};

/*
 * Pick job's partition (status.partition, else spec.partition, else the
 * default one for a job that names no queue; none for a job admitted
 * before any was recorded, so a running job is not moved) and apply it
 * to job->spec. 0 or CADRE_ENOMEM.
 */
int partitions_apply(struct manager *m, struct trainingjob *job, struct job_partition *out);

/*
 * What preemption makes of a job (docs/design.md 3.5), from its Partition
 * as it is now: as in Slurm, an admin's change of a tier or a mode applies
 * to the jobs already running. Zero (tier 0, Off) without a partition.
 */
struct job_preempt {
	int32_t tier;
	int mode;              /* enum partition_preempt_mode */
	int64_t exempt_s;      /* preemptExemptTimeSeconds */
	int64_t grace_s;       /* partition_grace_seconds for the job */
};

/* Every cached Partition, parsed, for several lookups in one decision. */
struct partition_set {
	struct partition *parts;
	size_t n;
	json_t *bad;           /* name -> why, for the Partitions that do not parse */
	/* --device-class-name: a job's DeviceClass when its partition names none; borrowed. */
	const char *device_class;
};

/* 0 or CADRE_ENOMEM; release set whatever it returns. */
int partitions_load(struct manager *m, struct partition_set *set);
void partitions_release(struct partition_set *set);

/*
 * partitions_apply against a set loaded once: what a decision over many
 * waiting jobs uses, so the Partitions are read once, not once a job.
 */
int partitions_apply_set(const struct partition_set *set, struct trainingjob *job,
			 struct job_partition *out);

/* job's settings (its status.partition, else spec.partition, else the default one). */
void partitions_preempt_of(const struct partition_set *set, const struct trainingjob *job,
			   struct job_preempt *out);

/*
 * The same from what a job's cache record keeps (cache_record.h): its
 * status.partition, spec.partition and spec.queue ("" or NULL when none);
 * grace_s is left 0 (the victim computes its own).
 */
void partitions_preempt_named(const struct partition_set *set, const char *recorded,
			      const char *spec_partition, const char *queue,
			      struct job_preempt *out);

/* Whether a partition of a tier below tier lets its jobs be preempted. */
bool partitions_preemptable_below(const struct partition_set *set, int32_t tier);

#endif
