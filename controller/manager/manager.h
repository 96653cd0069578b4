/*
 * manager.h - the controller process's moving parts, wired together.
 *
 * One manager owns: the API client, a reflector and store per watched kind,
 * the work queue and its workers, expectations, the job memo (jobmemo.h),
 * the event recorder, the metrics registry and, with --leader-elect, the
 * elector. Store handlers turn changes into queue keys; workers take keys
 * and run the reconciler of their kind. Workers run only while this process may write: always without
 * leader election, and only while leading with it.
 *
 * Queue keys name a kind and an object: "tj/<namespace>/<name>",
 * "vol/<namespace>/<name>" and "code/<namespace>/<label>" (a code bundle,
 * controller/code/code.h), plus "admission", which re-queues every job
 * still waiting for capacity (capacity changes are coalesced into it).
 *
 * Threads: manager_run() blocks until manager_stop() (from a signal-safe
 * flag watcher or another thread). Reconcilers run on worker threads and
 * read the stores, which are thread-safe.
 */
#ifndef CADRE_MANAGER_H
#define CADRE_MANAGER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* kube/resource.h, then cadre's kinds for the controller's client (api/kinds.h). */
#include "kube/resource.h"
#include "api/kinds.h"
#include "controller/manager/expect.h"
#include "controller/manager/jobids.h"
#include "controller/manager/jobmemo.h"
#include "controller/serve/metrics.h"
#include "controller/options.h"
#include "kube/events.h"
#include "kube/http.h"
#include "kube/leader.h"
#include "kube/reflector.h"
#include "kube/store.h"
#include "kube/workqueue.h"

struct kueue_watch;
struct topology_watch;

enum manager_kind {
	KIND_TRAININGJOBS,
	KIND_VOLUMES,
	KIND_PODS,          /* cadre's own pods, every phase, trimmed (store.h) */
	KIND_OTHER_PODS,    /* everybody else's non-terminal pods, trimmed */
	KIND_NODES,
	KIND_SERVICES,
	KIND_PVCS,
	KIND_PVS,
	KIND_PODGROUPS,     /* native gang mode only: the PodGroups cadre made (else no store) */
	KIND_CONFIGMAPS,    /* the jobs' entrypoint ConfigMaps, trimmed (configmap_trim.h) */
	KIND_PARTITIONS,    /* the Partitions (cluster-scoped): where jobs run, their defaults */
	KIND_CODE,          /* the code bundles' ConfigMaps, metadata only (controller/code/code.h) */
	/*
	 * Dynamic Resource Allocation (resource.k8s.io/v1), what admission counts
	 * devices from (controller/admission/dra_capacity.h), trimmed and recorded
	 * (cache_record_dra.h). Claims of every namespace, whatever --namespace
	 * says: any of them holds devices. Not watched when the API server does
	 * not serve the group (manager.dra_absent), and not waited for at start.
	 */
	KIND_RESOURCESLICES,
	KIND_RESOURCECLAIMS,
	KIND_DEVICECLASSES,
	KIND_COUNT
};

struct manager_metrics {
	struct metric *reconcile_total;        /* {kind,result} */
	struct metric *reconcile_seconds;      /* {kind} */
	struct metric *workqueue_depth;
	struct metric *admission_wait;         /* seconds from creation to admission */
	struct metric *time_to_running;        /* seconds from admission to all Running */
	struct metric *job_restarts;           /* {reason} */
	struct metric *preemptions;            /* {mode}: built-in preemptions by tier */
	struct metric *leader;                 /* 1 while leading */
};

/*
 * manager.pod_batch_ms by default. A quarter second: a 1024-pod start brings
 * some 5,000 pod events; answered one pass each, every pass reading all 1024
 * pods, the controller used a core for a minute. Kubernetes' Job controller
 * batches its pods' events by a second for the same reason.
 */
#define MANAGER_POD_BATCH_MS 250

struct gang_pass;

struct manager {
	const struct options *opts;
	struct kube_config *config;
	struct kube_http *http;
	struct kube_http *lease_http;          /* the leader elector's own client */
	/* Native gang mode: the PodGroup version the API server serves; NULL otherwise. */
	const struct kube_resource *podgroups;
	struct kueue_watch *kueue;             /* Kueue's Workloads (kueue.h); started on demand */
	struct topology_watch *topology;       /* ClusterTopology (topology_watch.h); on demand */
	/*
	 * The API server does not serve resource.k8s.io/v1 (found at start):
	 * its kinds are not watched and their caches stay empty.
	 */
	bool dra_absent;
	struct registry *registry;
	struct manager_metrics metrics;
	struct store *stores[KIND_COUNT];
	struct reflector *reflectors[KIND_COUNT];
	struct wq *queue;
	/*
	 * A pod event queues its job this many ms later (0: at once), so that
	 * the burst of events a gang's start brings (each pod created, bound,
	 * Running) is answered by a few passes instead of one per event.
	 */
	uint64_t pod_batch_ms;
	struct expect *expect;
	struct jobids *jobids;                 /* unique Slurm job ids (jobids.h) */
	struct jobmemo *memo;                  /* what the caches cannot show yet (jobmemo.h) */
	/* The last admission pass's verdicts (gang_pass.h), under admission_lock. */
	struct gang_pass *pass;
	/* Moved by every kick of admission: what admission reads changed (gang_pass.h). */
	atomic_uint_fast64_t admission_epoch;
	struct events *events;
	struct leader *leader;
	pthread_t *workers;
	int n_workers;
	bool workers_running;
	atomic_bool stopping;
	atomic_bool leading;
	atomic_uint reconciles_untrimmed;      /* since the heap was last given back */
	/* Wall-clock Unix seconds for the reconcilers (manager_time); NULL: time(NULL). */
	int64_t (*wall_s)(void);
	pthread_mutex_t lock;          /* workers_running, start/stop of workers */
	pthread_mutex_t admission_lock; /* one admission decision at a time */
	pthread_cond_t wake;
};

/*
 * Build everything from opts (borrowed; outlives the manager): load the
 * kubeconfig, make the client, stores, reflectors, queue, recorder, metrics.
 * Nothing runs yet. 0 or an error with a log line saying what failed.
 */
int manager_init(struct manager *m, const struct options *opts);

/*
 * Start reflectors, wait for their first lists, start the HTTP endpoints'
 * readiness, then lead (or not) and run workers until manager_stop().
 * Returns 0 after a clean stop, or an error when start-up failed.
 */
int manager_run(struct manager *m);

/* Ask manager_run to return; safe from any thread (not from a signal handler). */
void manager_stop(struct manager *m);

/*
 * Native gang mode's start-up check: the newest scheduling.k8s.io version
 * whose discovery document lists podgroups (v1beta1, then v1alpha2) into
 * *out. CADRE_ENOTFOUND, with a log line naming the flags a cluster needs,
 * when neither serves it; another code when discovery itself failed.
 */
int manager_discover_podgroups(struct kube_http *h, const struct kube_resource **out);

/*
 * Whether the API server serves the kinds of Dynamic Resource Allocation
 * (resource.k8s.io/v1 with resourceslices): false for a 404 or a discovery
 * document without them. On any other failure, true with a warning: the
 * watches then say for themselves whether they can list.
 */
bool manager_discover_dra(struct kube_http *h);

/* Whether a discovery document (an APIResourceList) lists plural. */
bool manager_discovery_serves(const json_t *doc, const char *plural);

/* Free everything manager_init made. */
void manager_release(struct manager *m);

/*
 * Whether every reflector has synced (for /readyz), those of the DRA kinds
 * aside: a cluster that refuses them (RBAC) still runs jobs without DRA.
 * Thread-safe.
 */
bool manager_synced(void *m);

/* Queue helpers for handlers and reconcilers. */
void manager_enqueue(struct manager *m, const char *kind, const char *ns, const char *name);

/*
 * The TrainingJob cache's index "volume" (store_index_fn): a job under
 * "namespace/<volume>" for each Volume its spec.volumes names, so that a
 * Volume's users are found without decoding every job.
 */
int manager_index_job_volumes(const json_t *job, json_t *values, void *arg);

/*
 * Index of the Volume cache: an nfs Volume under the name of the PV cadre
 * makes for it (build_pv_name), so that a PV labelled as another's, or
 * not at all, still brings back the Volume whose name it holds.
 */
#define MANAGER_PV_INDEX "pv"
int manager_index_volume_pv(const json_t *vol, json_t *values, void *arg);

/*
 * The TrainingJob cache's index "array" (store_index_fn): an array job's
 * element (label cadre.dev/array-job) under "namespace/<array>".
 */
int manager_index_job_array(const json_t *job, json_t *values, void *arg);
void manager_enqueue_after(struct manager *m, const char *kind, const char *ns,
			   const char *name, uint64_t delay_ms);
void manager_kick_admission(struct manager *m);

/* The store handlers of each kind are in controller/manager/handlers.h. */

/* Record an event about obj (borrowed) if a recorder exists. */
void manager_event(struct manager *m, const json_t *obj, bool warning, const char *reason,
		   const char *action, const char *message);

/* Status is written through controller/manager/status.h. */

/*
 * The label selector of the cache of other pods: with --namespace, none
 * (every non-terminal pod, cadre's in other namespaces among them, since
 * they take capacity too); without it, every pod that is not cadre's.
 */
const char *manager_other_pods_selector(const struct options *opts);

/* Monotonic milliseconds. */
uint64_t manager_now_ms(void);

/*
 * The wall clock the reconcilers decide by (Unix seconds): condition times,
 * backoffs, deadlines. m->wall_s when set (tests that let minutes pass),
 * else time(NULL).
 */
int64_t manager_time(const struct manager *m);

/*
 * The stores of every kind, with the trims, records, indexes and handlers
 * the reconcilers rely on, and no reflector: for manager_init, and for
 * tests that fill the caches themselves. m->opts must be set; native mode
 * also needs m->podgroups. 0 or CADRE_ENOMEM.
 */
int manager_stores_init(struct manager *m);

#endif
