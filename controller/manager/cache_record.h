/*
 * cache_record.h - the fixed records that admission walks instead of the
 * cached objects (store_record_fn, kube/store.h).
 *
 * An admission decision charges every cached pod to its node and looks at
 * every TrainingJob; decoding each packed object for that would cost tens
 * of milliseconds with 80k pods cached. These records are computed once,
 * when an object is stored, from its trimmed form, and hold exactly what
 * the walkers in gang.c read. Pure; thread-safe.
 */
#ifndef CADRE_CACHE_RECORD_H
#define CADRE_CACHE_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/admission/candidate.h"
#include "controller/admission/capacity.h"
#include "controller/trainingjob/podview.h"

/* At most this many extended resources per pod are kept (cpu and memory apart). */
#define CACHE_POD_EXT_MAX 8

/*
 * A pod's record (store_options.record for both pod caches; arg unused).
 * For cadre's own pods (a trimmed pod, with metadata): the requests of its
 * first container (the builders give every pod exactly one), its node (or
 * the node it is pinned to), phase, rank and restart attempt as
 * podview_read reads them. For a summary
 * (pod_trim_summary): its effective requests and node, or, when it is not
 * bound yet, the node it is pinned to. Amounts that do not parse are left
 * out, "pods" too.
 */
int cache_record_pod(const json_t *pod, void *rec, size_t size, void *arg);

/* A pod's record read back; the strings point into the record. */
struct cache_pod {
	const char *node;          /* NULL when not bound */
	/*
	 * One of cadre's pods not bound yet: the node its required affinity
	 * pins it to, where it can only go; NULL when none, or when it is being
	 * deleted (kube-scheduler places no pod that is going).
	 */
	const char *pinned;
	int64_t cpu_milli, memory_milli;
	size_t n_ext;
	const char *ext_name[CACHE_POD_EXT_MAX];
	int64_t ext_milli[CACHE_POD_EXT_MAX];
	enum pod_phase phase;      /* POD_UNKNOWN for a summary */
	int attempt;               /* -1 for a summary or a bad label */
	int rank;                  /* -1 likewise */
	bool node_service;         /* a DaemonSet's or a static pod: no job's (summary only) */
	bool exclusive;            /* one of cadre's, of a job with spec.exclusive */
};

/* Read a record made by cache_record_pod. CADRE_EINVAL when it is not one. */
int cache_pod_read(const void *rec, size_t len, struct cache_pod *out);

/*
 * A TrainingJob's record (store_options.record for the TrainingJob cache):
 * what it is to built-in gang admission (candidate.h) and what deciding
 * whether it holds capacity or backs off needs, so that only the jobs that
 * really wait or hold are decoded and parsed for a decision.
 */
int cache_record_job(const json_t *job, void *rec, size_t size, void *arg);

struct cache_job {
	enum tj_candidacy candidacy;  /* tj_candidacy of the job as stored; NONE when it
					 does not parse or validate */
	int64_t not_before;        /* a waiting job is not placed before (tj_candidacy) */
	int attempt;               /* tj_attempt */
	int num_nodes;
	/* Restarting in place: ranks whose node was lost, not placed again yet (gang.c). */
	int awaiting_nodes;
	const char *uid;           /* "" when none */
	const char *phase;         /* status.phase as written; "" when none */
	/* What built-in preemption asks of a running job (gang_preempt.c), "" when none: */
	const char *partition;       /* status.partition */
	const char *spec_partition;  /* spec.partition */
	const char *queue;           /* spec.queue */
	int32_t priority;            /* spec.priority */
	int64_t run_started;         /* its Running condition's time, else status.startTime */
	int32_t preempted_attempt;   /* status.preemption.attempt; -1 when none */
};

/* Read a record made by cache_record_job. CADRE_EINVAL when it is not one. */
int cache_job_read(const void *rec, size_t len, struct cache_job *out);

/*
 * A Node's record (store_options.record for the Node cache): what
 * admission reads of a node (gang.c): its name, Ready condition, whether
 * it is cordoned, its allocatable resources, labels and taints. A node too
 * large for a record (STORE_RECORD_MAX) gets none (returns 0), and is
 * decoded instead.
 */
int cache_record_node(const json_t *node, void *rec, size_t size, void *arg);

/* How many extended resources, labels and taints a node record holds. */
struct cache_node_counts {
	size_t n_ext, n_labels, n_taints;
};

int cache_node_counts(const void *rec, size_t len, struct cache_node_counts *out);

/*
 * Read a node record into out, with arrays of the sizes cache_node_counts
 * gives (any may be NULL when its count is 0). The strings point into rec,
 * which must outlive out. CADRE_EINVAL when rec is not a node record.
 */
int cache_node_read(const void *rec, size_t len, struct cap_node *out, struct cap_resource *ext,
		    struct cap_label *labels, struct cap_taint *taints);

/*
 * Whether a node record says the node is Ready (its Ready condition is
 * "True"): 1 or 0, or CADRE_EINVAL when rec is not a node record.
 */
int cache_node_ready(const void *rec, size_t len);

/* The value of label key in a node record (pointing into rec), or NULL. */
const char *cache_node_label(const void *rec, size_t len, const char *key);

/* A taint or toleration effect by name ("NoSchedule", ...); "" or NULL is any. */
enum cap_effect cache_effect_parse(const char *s);

#endif
