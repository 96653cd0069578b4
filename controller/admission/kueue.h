/*
 * kueue.h - cadre's Kueue mode (docs/design.md 3.2, docs/kueue.md): Kueue's own
 * Workload for a job's pod group, read and mirrored rather than guessed.
 *
 * The pods of a job in Kueue mode carry the pod-group contract of Kueue's
 * pod integration (v0.17: label kueue.x-k8s.io/queue-name, label
 * kueue.x-k8s.io/pod-group-name=<job>-<attempt>, annotation
 * kueue.x-k8s.io/pod-group-total-count). Kueue makes one Workload per group,
 * named after the group, in the job's namespace, and decides there:
 *   QuotaReserved False   waiting; its message names the quota that is short
 *   Admitted True         admitted; Kueue removes its scheduling gates
 *   Evicted True          evicted (reason Preempted, PodsReadyTimeout, ...);
 *                         Preempted True says by whom; Kueue deletes the pods
 * kueue_decide maps that, with what the pods show, to what the TrainingJob
 * says: a pure function, so each case is a unit test (unit/test_kueue.c).
 *
 * The watch: Workloads are watched (get, list, watch; nothing else) only once
 * a job in Kueue mode is reconciled, or from the start with
 * --gang-scheduler=kueue, so a cluster without Kueue and without such jobs
 * never asks for them. The watch is not waited for at start-up: until its
 * first list succeeds (no Workload API: Kueue not installed) every job with
 * a queue says that Kueue is unreachable, and waits.
 */
#ifndef CADRE_KUEUE_H
#define CADRE_KUEUE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/resource.h"

/* Kueue's Workload API, as v0.16 and later store it. */
extern const struct kube_resource kueue_resource_workloads;

/* Kueue's pod-group contract (pkg/controller/jobs/pod/constants, v0.17). */
#define KUEUE_QUEUE_LABEL "kueue.x-k8s.io/queue-name"
#define KUEUE_GROUP_LABEL "kueue.x-k8s.io/pod-group-name"
#define KUEUE_COUNT_ANNOTATION "kueue.x-k8s.io/pod-group-total-count"
/* A WorkloadPriorityClass's name; copied from the TrainingJob's labels to its pods. */
#define KUEUE_PRIORITY_LABEL "kueue.x-k8s.io/priority-class"

enum kueue_wl_state {
	KUEUE_WL_PENDING,       /* no quota reserved (yet) */
	KUEUE_WL_RESERVED,      /* quota reserved, admission checks pending */
	KUEUE_WL_ADMITTED,      /* Admitted True */
	KUEUE_WL_EVICTED,       /* Evicted True: preempted, timed out, deactivated */
	KUEUE_WL_FINISHED,      /* Finished True */
};

/* One Workload, its strings borrowed from the object it was read from. */
struct kueue_workload {
	const char *name;
	enum kueue_wl_state state;
	const char *reason;         /* of the condition that decided the state; may be NULL */
	const char *message;        /* Kueue's message; may be NULL */
	const char *cluster_queue;  /* status.admission.clusterQueue; may be NULL */
	bool no_failure;            /* EVICTED by a preemption, a stopped or deactivated queue */
};

/*
 * Read a Workload object into out, borrowing its strings. Evicted True wins
 * over Admitted (Kueue sets Evicted first and clears Admitted after), and
 * an eviction by preemption takes the Preempted condition's reason
 * (InClusterQueue, InCohortReclamation, InCohortFairSharing, ...) and
 * message. CADRE_EINVAL when obj has no name.
 */
int kueue_workload_read(const json_t *obj, struct kueue_workload *out);

/* What the caches say about the job's current pod group. */
struct kueue_view {
	bool api_served;                 /* the Workload watch has listed at least once */
	const struct kueue_workload *wl; /* the group's Workload; NULL: none seen */
	const char *group;               /* the pod group's (and Workload's) name */
	const char *queue;               /* spec.queue; may be NULL (Kueue's default queue) */
	const char *namespace;
	size_t pods;                     /* the group's pods that exist */
	size_t managed;                  /* of them, labelled kueue.x-k8s.io/managed=true */
	size_t n;                        /* the group's size */
	char group_buf[64];              /* where kueue_job_view keeps group */
};

enum kueue_verdict {
	KUEUE_WAIT,       /* Admitted False with reason and message, phase Queued */
	KUEUE_ADMIT,      /* Admitted True */
	KUEUE_EVICT,      /* an infrastructure restart with Kueue's reason */
};

struct kueue_decision {
	enum kueue_verdict verdict;
	/* WAIT: WaitingForKueue | NotManagedByKueue; ADMIT: Admitted; EVICT: Kueue's own
	 * reason, borrowed from the Workload (it lives as long as v->wl does). */
	const char *reason;
	char message[1024];     /* for status.message and the events */
	bool recheck;           /* WAIT on no news that will come as an event: look again soon */
	bool no_failure;        /* EVICT for no failure of the job's (a preemption): a requeue */
};

/*
 * Decide from v. Never admits without a Workload that says Admitted:
 *   - no Workload API:                  NotManagedByKueue, "Kueue is unreachable" (recheck)
 *   - no Workload, every pod there but not one taken by Kueue's webhook:
 *                                       NotManagedByKueue, naming the namespace label
 *   - no Workload otherwise:            WaitingForKueue, "Kueue has not made the Workload"
 *   - Workload pending or reserved:     WaitingForKueue with Kueue's reason and message
 *   - Workload admitted or finished:    admitted ("admitted by Kueue to ClusterQueue X")
 *   - Workload evicted:                 evict, with Kueue's reason and message
 */
void kueue_decide(const struct kueue_view *v, struct kueue_decision *out);

/*
 * The pod group's name for a job's attempt, as the pods' label gives it and
 * Kueue names the Workload: "<job>-<attempt>". CADRE_EINVAL when it does
 * not fit size or a label value.
 */
int kueue_group_name(const char *job, int attempt, char *out, size_t size);

/*
 * The job a Workload name belongs to: the name without its last
 * "-<digits>". CADRE_EINVAL when the name has no such suffix.
 */
int kueue_group_job(const char *workload, char *out, size_t size);

/*
 * What the Workload cache keeps of a Workload (a store trim function; arg
 * unused): metadata's name, namespace, uid, resourceVersion and
 * deletionTimestamp, status.conditions and status.admission.clusterQueue.
 * Its pod sets hold whole pod templates, which nothing here reads. NULL
 * when out of memory.
 */
json_t *kueue_workload_trim(const json_t *obj, void *arg);

struct manager;
struct kueue_watch;

/* A Workload watch for m (nothing runs yet); NULL when out of memory. */
struct kueue_watch *kueue_watch_new(struct manager *m);

/*
 * Start watching Workloads, once: later calls return at once. Thread-safe.
 * Changes to a Workload re-queue the TrainingJob its name belongs to.
 */
int kueue_watch_ensure(struct kueue_watch *w);

/*
 * Fill *v's api_served and, when the cache has it, *wl with the Workload
 * named group in ns (its strings borrow *obj, which the caller releases
 * with json_decref; *obj is NULL when there is none).
 */
void kueue_watch_lookup(struct kueue_watch *w, const char *ns, const char *group,
			struct kueue_view *v, struct kueue_workload *wl, json_t **obj);

struct trainingjob;

/*
 * The view of job's current pod group (attempt tj_attempt):
 * starts the watch if it is not running yet, then looks the Workload up,
 * as kueue_watch_lookup. Returns v.
 */
const struct kueue_view *kueue_job_view(struct kueue_watch *w, const struct trainingjob *job,
					struct kueue_view *v, struct kueue_workload *wl,
					json_t **obj);

/* Stop the watch and free it; NULL is fine. */
void kueue_watch_free(struct kueue_watch *w);

#endif
