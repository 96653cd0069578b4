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

#endif
