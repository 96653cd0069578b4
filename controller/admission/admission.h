/*
 * admission.h - cadre's own gang admission queue (docs/design.md 3.1; the rules
 * and their reasons are in docs/gang-admission.md).
 *
 * One pass takes the waiting jobs and the cluster's free capacity and says,
 * for every job, admit or wait, and why:
 *  - the queue is ordered by its Partition's priorityTier (higher first,
 *    as Slurm schedules higher tiers first), then priority (higher first),
 *    then creation time (older first), then namespace and name;
 *  - each job that fits is admitted, and its pods' demand is taken off the
 *    capacity before the jobs behind it are looked at;
 *  - a job that does not fit does not block the jobs behind it (backfill),
 *    unless it has waited starvation_s or longer: then it holds the nodes
 *    it needs (those it could run on, most free first, until they could
 *    hold its whole gang), and nothing behind it is admitted onto them.
 *    A job that could not fit even in an empty cluster holds nothing.
 *
 * Pure: the caller passes the clock. A struct admission keeps scratch
 * buffers from pass to pass so a steady state allocates nothing; it is not
 * thread-safe.
 *
 *   struct admission adm;
 *   admission_init(&adm);
 *   ... each pass: capacity_init/use/reserve, then
 *   admission_decide(&adm, &cap, jobs, n, now, 600, decisions);
 *   admission_release(&adm);
 */
#ifndef CADRE_ADMISSION_H
#define CADRE_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "controller/admission/capacity.h"
#include "controller/admission/topology.h"

/* --starvation-seconds' default. */
#define ADM_DEFAULT_STARVATION_SECONDS 600
/* A decision's message, including its NUL; longer ones end in "...". */
#define ADM_MESSAGE_MAX 320

enum adm_verdict {
	ADM_WAIT = 0,
	ADM_ADMIT,
};

/* The reasons of the Admitted condition (docs/design.md 1.2). */
enum adm_reason {
	ADM_REASON_ADMITTED = 0,
	ADM_REASON_INSUFFICIENT_CAPACITY,  /* it does not fit in what is free */
	ADM_REASON_QUEUED_BEHIND,          /* it fits, but on nodes held for a starving job */
};

struct adm_job {
	const char *namespace;
	const char *name;
	int32_t tier;             /* its Partition's priorityTier; 0 without one */
	int32_t priority;
	int64_t created_s;        /* metadata.creationTimestamp, Unix seconds */
	int64_t waiting_since_s;  /* when it last started waiting (created, or requeued) */
	int num_nodes;            /* pods in the gang, >= 1 */
	struct cap_demand demand; /* per pod; borrowed */
	/* spec.topology, resolved; NULL without one (borrowed). */
	const struct topo_request *topo;
	/*
	 * Set when the job cannot be placed for a reason of its own (a level the
	 * cluster does not describe): it waits with this message, and holds nothing.
	 */
	const char *blocked;
	/*
	 * Set for a job whose preempted victims are stopping (docs/design.md
	 * 3.4): it holds the nodes it needs as a starving job does, at once, and
	 * its message and the held-back jobs' say this (", which preempted ...").
	 */
	const char *holds;
};

struct adm_decision {
	enum adm_verdict verdict;
	enum adm_reason reason;
	/* Waited past the limit without fitting: it holds nodes for itself. */
	bool starving;
	/* 0-based place in the queue order. */
	size_t position;
	/*
	 * When admitted: num_nodes node indices (into the capacity's nodes),
	 * one per pod, a node repeated when it takes several. Borrowed from
	 * the struct admission, valid until its next decide or release; NULL
	 * when waiting.
	 */
	const uint32_t *nodes;
	char message[ADM_MESSAGE_MAX];
};

struct admission {
	const struct adm_job **order;
	size_t order_cap;
	unsigned char *fence;                /* per node: held for a starving job */
	const struct adm_job **held_by;      /* per node: that job */
	struct cap_candidate *candidates;    /* per node: scratch for choosing what to hold */
	size_t node_cap;
	uint32_t *placement;                 /* every admitted job's nodes, back to back */
	size_t placement_cap;
	struct buf text;                     /* scratch for messages */
};

void admission_init(struct admission *a);
void admission_release(struct admission *a);

/*
 * Decide for jobs[0..n_jobs) against cap at time now_s; out has n_jobs
 * entries, out[i] for jobs[i]. starvation_s < 0 turns the starvation guard
 * off. The demand of each admitted job is taken off cap (capacity_take),
 * so afterwards cap holds what is left. Returns 0, CADRE_EINVAL (a job with
 * num_nodes < 1 or a negative demand; nothing is decided) or CADRE_ENOMEM.
 */
int admission_decide(struct admission *a, struct capacity *cap, const struct adm_job *jobs,
		     size_t n_jobs, int64_t now_s, int64_t starvation_s, struct adm_decision *out);

/*
 * Whether job fits on cap's free capacity as the queue would place it (its
 * topology too), with no node fenced; placement (num_nodes entries, may be
 * NULL) receives its nodes. 0 or CADRE_EINVAL.
 */
int admission_fits(const struct capacity *cap, const struct adm_job *job, uint32_t *placement,
		   bool *fits);

/* Whether a comes before b in the queue's order. */
bool admission_before(const struct adm_job *a, const struct adm_job *b);

/* "Admitted", "InsufficientCapacity", "QueuedBehind"; static. */
const char *adm_reason_name(enum adm_reason reason);

#endif
