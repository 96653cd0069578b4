#include "controller/manager/manager.h"
#include "controller/admission/gang_pass.h"
#include "controller/admission/gang_preempt.h"
#include "controller/manager/handlers.h"
#include "api/pod_trim.h"
#include "controller/manager/configmap_trim.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/log.h"
#include "api/labels.h"
#include "controller/manager/cache_record.h"
#include "controller/manager/cache_record_dra.h"
#include "controller/admission/kueue.h"
#include "controller/admission/topology_watch.h"
#include "controller/build/build.h"
#include "controller/code/code.h"
#include "controller/trainingjob/tj_depend.h"
#include "controller/manager/reconcile.h"
#include "kube/client.h"
#include "kube/config.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How a watched kind is listed and what the store keeps of it. */
struct kind_spec {
	const struct kube_resource *resource;
	const char *label_selector;
	const char *field_selector;
	store_trim_fn trim;
	bool namespaced_by_flag;   /* honour --namespace */
	store_record_fn record;    /* what admission walks (cache_record.h) */
	/*
	 * Not waited for at start nor for readiness: the cluster may refuse to
	 * list the kind (RBAC), and jobs that do not need it must run all the
	 * same; its reader asks whether it has listed (dra_capacity.c).
	 */
	bool optional;
};

/*
 * Designated fields: a kind without a selector or a record function leaves
 * it out, which clang's -Wmissing-field-initializers allows only in this form.
 */
static const struct kind_spec kinds[KIND_COUNT] = {
	[KIND_TRAININGJOBS] = { .resource = &kube_resource_trainingjobs,
				.trim = store_trim_bookkeeping, .namespaced_by_flag = true,
				.record = cache_record_job },
	[KIND_VOLUMES] = { .resource = &kube_resource_volumes, .trim = store_trim_bookkeeping,
			   .namespaced_by_flag = true },
	[KIND_PODS] = { .resource = &kube_resource_pods, .label_selector = LABEL_JOB_NAME,
			.trim = pod_trim, .namespaced_by_flag = true, .record = cache_record_pod },
	/*
	 * Capacity is cluster-wide whatever --namespace says. Without it, cadre's
	 * pods are all in KIND_PODS and this cache holds the rest; with it, cadre's
	 * pods in other namespaces (another install's, another team's) use GPUs
	 * too, so this cache holds every pod (manager_other_pods_selector) and
	 * admission skips the ones KIND_PODS holds.
	 */
	[KIND_OTHER_PODS] = { .resource = &kube_resource_pods,
			      .label_selector = "!" LABEL_JOB_NAME,
			      .field_selector = REFLECTOR_NON_TERMINAL_PODS,
			      .trim = pod_trim_summary, .record = cache_record_pod },
	[KIND_NODES] = { .resource = &kube_resource_nodes, .trim = store_trim_bookkeeping,
			 .record = cache_record_node },
	/* Only whether a job's Service exists, and whose it is, is read. */
	[KIND_SERVICES] = { .resource = &kube_resource_services, .label_selector = LABEL_JOB_NAME,
			    .trim = store_trim_metadata, .namespaced_by_flag = true },
	[KIND_PVCS] = { .resource = &kube_resource_pvcs, .trim = store_trim_bookkeeping,
			.namespaced_by_flag = true },
	[KIND_PVS] = { .resource = &kube_resource_pvs, .trim = store_trim_bookkeeping },
	/* The version is the one the API server serves: manager->podgroups. */
	[KIND_PODGROUPS] = { .label_selector = LABEL_JOB_NAME, .trim = store_trim_bookkeeping,
			     .namespaced_by_flag = true },
	/* Selected like the Services; a ConfigMap of the name without the label is never cached. */
	[KIND_CONFIGMAPS] = { .resource = &kube_resource_configmaps,
			      .label_selector = LABEL_JOB_NAME, .trim = configmap_trim,
			      .namespaced_by_flag = true },
	/* A handful of objects, read whole by partitions_apply. */
	[KIND_PARTITIONS] = { .resource = &kube_resource_partitions,
			      .trim = store_trim_bookkeeping },
	/* The parts of code bundles: their metadata, never their megabytes of data. */
	[KIND_CODE] = { .resource = &kube_resource_configmaps, .label_selector = CODE_LABEL,
			.trim = code_trim, .namespaced_by_flag = true },
	[KIND_RESOURCESLICES] = { .resource = &kube_resource_resourceslices,
				  .trim = cache_trim_slice, .record = cache_record_slice,
				  .optional = true },
	[KIND_RESOURCECLAIMS] = { .resource = &kube_resource_resourceclaims,
				  .trim = cache_trim_claim, .record = cache_record_claim,
				  .optional = true },
	[KIND_DEVICECLASSES] = { .resource = &kube_resource_deviceclasses,
				 .trim = cache_trim_class, .record = cache_record_class,
				 .optional = true },
};

int manager_index_volume_pv(const json_t *vol, json_t *values, void *arg)
{
	const json_t *meta = json_object_get(vol, "metadata");
	const char *type = json_string_value(json_object_get(json_object_get(vol, "spec"),
							     "type"));
	char pv[BUILD_PV_NAME_SIZE];

	(void)arg;
	if (!type || strcmp(type, "nfs"))
		return 0;
	if (build_pv_name_of(json_string_value(json_object_get(meta, "namespace")),
			     json_string_value(json_object_get(meta, "name")), pv, sizeof(pv)))
		return 0;
	return json_array_append_new(values, json_string(pv)) ? CADRE_ENOMEM : 0;
}

int manager_index_job_volumes(const json_t *job, json_t *values, void *arg)
{
	const char *ns = json_string_value(json_object_get(json_object_get(job, "metadata"),
							   "namespace"));
	const json_t *vols = json_object_get(json_object_get(job, "spec"), "volumes");
	const char *path;
	json_t *value;
	char key[STORE_KEY_MAX];

	(void)arg;
	json_object_foreach((json_t *)vols, path, value) {
		int n;

		if (!json_string_value(value))
			continue;
		n = snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", json_string_value(value));
		if (n < 0 || (size_t)n >= sizeof(key))
			continue;
		if (json_array_append_new(values, json_string(key)))
			return CADRE_ENOMEM;
	}
	return 0;
}

int manager_index_job_array(const json_t *job, json_t *values, void *arg)
{
	const json_t *meta = json_object_get(job, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *array = json_string_value(json_object_get(json_object_get(meta, "labels"),
							      LABEL_ARRAY_JOB));
	char key[STORE_KEY_MAX];
	int n;

	(void)arg;
	if (!array)
		return 0;
	n = snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", array);
	if (n < 0 || (size_t)n >= sizeof(key))
		return 0;
	return json_array_append_new(values, json_string(key)) ? CADRE_ENOMEM : 0;
}

/* What kind k is listed as; NULL for a kind this mode does not watch. */
static const struct kube_resource *kind_resource(const struct manager *m, int k)
{
	return k == KIND_PODGROUPS ? m->podgroups : kinds[k].resource;
}

const char *manager_other_pods_selector(const struct options *opts)
{
	return opts->namespace && *opts->namespace ? NULL : kinds[KIND_OTHER_PODS].label_selector;
}

uint64_t manager_now_ms(void)
{
	return clock_mono_ms();
}

static void queue_key(struct manager *m, const char *kind, const char *ns,
		      const char *name, uint64_t delay_ms)
{
	char key[STORE_KEY_MAX + 16];

	if (!name || !*name)
		return;
	snprintf(key, sizeof(key), "%s/%s/%s", kind, ns ? ns : "", name);
	if (delay_ms)
		wq_add_after(m->queue, key, delay_ms);
	else
		wq_add(m->queue, key);
}

void manager_enqueue(struct manager *m, const char *kind, const char *ns, const char *name)
{
	queue_key(m, kind, ns, name, 0);
}

void manager_enqueue_after(struct manager *m, const char *kind, const char *ns,
			   const char *name, uint64_t delay_ms)
{
	queue_key(m, kind, ns, name, delay_ms);
}

/* Capacity changes come in floods (a node's pods, a gang ending); one pass
 * over the waiting jobs per half second answers them all. What the last
 * admission pass decided is stale from now (gang_pass.h). */
void manager_kick_admission(struct manager *m)
{
	atomic_fetch_add(&m->admission_epoch, 1);
	wq_add_after(m->queue, "admission", 500);
}

void manager_event(struct manager *m, const json_t *obj, bool warning, const char *reason,
		   const char *action, const char *message)
{
	if (m->events)
		events_record(m->events, obj, warning ? EVENTS_WARNING : EVENTS_NORMAL, reason,
			      action, "%s", message);
}

/* --- metrics --- */

struct phase_counts {
	const char *names[10];
	size_t counts[10];
};

/* From the jobs' records (cache_record.h): a scrape decodes nothing. */
static int count_phase(void *ctx, const char *key, const void *rec, size_t len)
{
	struct phase_counts *pc = ctx;
	struct cache_job job;
	const char *phase;

	(void)key;
	if (cache_job_read(rec, len, &job))
		return 0;
	phase = job.phase;
	for (size_t i = 0; i < 10 && pc->names[i]; i++)
		if (!strcmp(pc->names[i], *phase ? phase : "Pending")) {
			pc->counts[i]++;
			break;
		}
	return 0;
}

/* cadre_trainingjobs{phase}: counted from the cache at scrape time, so it
 * is always exactly what the cache holds, every phase present (0 included). */
static void phase_counts_render(struct manager *m, struct buf *out)
{
	struct phase_counts pc = { { "Pending", "Queued", "Starting", "Running", "Restarting",
				     "Succeeded", "Failed", "Suspended", NULL }, { 0 } };

	store_foreach_record(m->stores[KIND_TRAININGJOBS], count_phase, &pc);
	buf_adds(out, "# HELP cadre_trainingjobs TrainingJobs by phase.\n"
		 "# TYPE cadre_trainingjobs gauge\n");
	for (size_t i = 0; pc.names[i]; i++)
		buf_addf(out, "cadre_trainingjobs{phase=\"%s\"} %zu\n", pc.names[i], pc.counts[i]);
}

static void api_collector(void *ctx, struct buf *out)
{
	struct manager *m = ctx;
	struct kube_http_stat stats[128];
	size_t n = kube_http_stats(m->http, stats, 128);

	if (n > 128)
		n = 128;
	buf_adds(out, "# HELP cadre_api_requests_total API server requests by verb and HTTP code.\n"
		 "# TYPE cadre_api_requests_total counter\n");
	for (size_t i = 0; i < n; i++)
		buf_addf(out, "cadre_api_requests_total{verb=\"%s\",code=\"%ld\"} %llu\n",
			 stats[i].verb, stats[i].code, (unsigned long long)stats[i].count);
	buf_adds(out, "# HELP cadre_watch_restarts_total Watch restarts by resource and reason.\n"
		 "# TYPE cadre_watch_restarts_total counter\n");
	for (int k = 0; k < KIND_COUNT; k++) {
		if (!m->reflectors[k])
			continue;
		for (int r = 0; r < REFLECTOR_REASON_COUNT; r++) {
			uint64_t count = reflector_restarts(m->reflectors[k], r);

			if (count)
				buf_addf(out, "cadre_watch_restarts_total{resource=\"%s%s\","
					 "reason=\"%s\"} %llu\n",
					 reflector_resource_name(m->reflectors[k]),
					 k == KIND_OTHER_PODS ? "-other" : k == KIND_CODE ? "-code" : "",
					 reflector_reason_name(r), (unsigned long long)count);
		}
	}
	phase_counts_render(m, out);
	buf_addf(out, "# HELP cadre_workqueue_depth Keys waiting in the work queue.\n"
		 "# TYPE cadre_workqueue_depth gauge\ncadre_workqueue_depth %zu\n",
		 wq_len(m->queue));
	buf_addf(out, "# HELP cadre_cache_objects Objects held in each cache.\n"
		 "# TYPE cadre_cache_objects gauge\n");
	for (int k = 0; k < KIND_COUNT; k++)
		if (m->stores[k])
			buf_addf(out, "cadre_cache_objects{resource=\"%s%s\"} %zu\n",
				 kind_resource(m, k)->plural,
				 k == KIND_OTHER_PODS ? "-other" : k == KIND_CODE ? "-code" : "",
				 store_len(m->stores[k]));
	code_metrics_render(m->stores[KIND_CODE], out);
}

static int metrics_init(struct manager *m)
{
	static const char *const kind_result[] = { "kind", "result", NULL };
	static const char *const kind_only[] = { "kind", NULL };
	static const char *const reason[] = { "reason", NULL };
	static const char *const mode[] = { "mode", NULL };
	static const double latency[] = { 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5 };
	static const double waits[] = { 1, 5, 15, 30, 60, 300, 900, 3600, 14400 };
	struct manager_metrics *mm = &m->metrics;

	m->registry = registry_new();
	if (!m->registry)
		return CADRE_ENOMEM;
	mm->reconcile_total = registry_add(m->registry, METRIC_COUNTER, "cadre_reconcile_total",
					   "Reconciles by kind and result.", kind_result, NULL, 0);
	mm->reconcile_seconds = registry_add(m->registry, METRIC_HISTOGRAM,
					     "cadre_reconcile_duration_seconds",
					     "Time one reconcile took.", kind_only, latency, 8);
	mm->admission_wait = registry_add(m->registry, METRIC_HISTOGRAM,
					  "cadre_gang_admission_wait_seconds",
					  "Time from a gang's creation or requeue to its admission.",
					  NULL, waits, 9);
	mm->time_to_running = registry_add(m->registry, METRIC_HISTOGRAM,
					   "cadre_time_to_all_running_seconds",
					   "Time from admission until every pod of the gang runs.",
					   NULL, waits, 9);
	mm->job_restarts = registry_add(m->registry, METRIC_COUNTER, "cadre_job_restarts_total",
					"Gang restarts by reason.", reason, NULL, 0);
	mm->preemptions = registry_add(m->registry, METRIC_COUNTER, "cadre_preemptions_total",
				       "Running gangs preempted for a higher Partition tier, by the "
				       "victim's preemptMode.", mode, NULL, 0);
	mm->leader = registry_add(m->registry, METRIC_GAUGE, "cadre_leader",
				  "1 while this process holds the leader Lease.", NULL, NULL, 0);
	if (!mm->reconcile_total || !mm->reconcile_seconds ||
	    !mm->admission_wait || !mm->time_to_running || !mm->job_restarts ||
	    !mm->preemptions || !mm->leader)
		return CADRE_ENOMEM;
	if (registry_add_collector(m->registry, api_collector, m) ||
	    registry_add_collector(m->registry, metrics_process_collector, NULL))
		return CADRE_ENOMEM;
	return 0;
}

/* --- workers --- */

static int run_key(struct manager *m, const char *key)
{
	char kind[8], ns[STORE_KEY_MAX], name[STORE_KEY_MAX];
	const char *slash1, *slash2;

	if (!strcmp(key, "admission")) {
		tj_requeue_waiting(m);
		return 0;
	}
	slash1 = strchr(key, '/');
	slash2 = slash1 ? strchr(slash1 + 1, '/') : NULL;
	if (!slash2 || (size_t)(slash1 - key) >= sizeof(kind))
		return CADRE_EINVAL;
	snprintf(kind, sizeof(kind), "%.*s", (int)(slash1 - key), key);
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash2 - slash1 - 1), slash1 + 1);
	snprintf(name, sizeof(name), "%s", slash2 + 1);
	if (!strcmp(kind, "tj"))
		return tj_reconcile(m, ns, name);
	if (!strcmp(kind, "vol"))
		return vol_reconcile(m, ns, name);
	if (!strcmp(kind, "code"))
		return code_reconcile(m, ns, name);
	return CADRE_EINVAL;
}

/*
 * A burst of reconciles (a sync, a relist, many jobs at once) decodes a tree
 * per job and its pods, and frees them in holes among what stays; malloc
 * gives back only the top of its heaps by itself. When the queue runs dry
 * after at least TRIM_AFTER_RECONCILES, hand the free pages back, so the
 * resident set after a burst is what the process holds, not its peak.
 */
#define TRIM_AFTER_RECONCILES 64

static void give_back_after_burst(struct manager *m)
{
	if (atomic_fetch_add(&m->reconciles_untrimmed, 1) + 1 < TRIM_AFTER_RECONCILES ||
	    wq_len(m->queue))
		return;
	atomic_store(&m->reconciles_untrimmed, 0);
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

static void *worker_main(void *arg)
{
	struct manager *m = arg;
	char *key;

	while (wq_get(m->queue, &key) == 0) {
		uint64_t start = manager_now_ms();
		const char *kind = !strncmp(key, "vol/", 4) ? "Volume" :
				   !strncmp(key, "tj/", 3) ? "TrainingJob" :
				   !strncmp(key, "code/", 5) ? "CodeBundle" : "Admission";
		const char *labels[2] = { kind, NULL };
		int err = 0;

		if (atomic_load(&m->leading))
			err = run_key(m, key);
		labels[1] = err == 0 ? "success" : err == CADRE_EAGAIN ? "requeue" : "error";
		metric_add(m->metrics.reconcile_total, labels, 1);
		metric_observe(m->metrics.reconcile_seconds, labels,
			       (double)(manager_now_ms() - start) / 1000.0);
		if (err == 0 || err == CADRE_ETERMINATING) {
			/* A namespace being deleted takes the object along: nothing to retry. */
			wq_forget(m->queue, key);
		} else {
			if (err != CADRE_EAGAIN && err != CADRE_ECONFLICT)
				log_warn("worker", "%s: %s; retrying with backoff", key,
					 cadre_strerror(err));
			wq_add_rate_limited(m->queue, key);
		}
		wq_done(m->queue, key);
		free(key);
		give_back_after_burst(m);
	}
	return NULL;
}

static void on_started_leading(void *ctx)
{
	struct manager *m = ctx;

	log_info("leader", "became leader as %s; starting to reconcile",
		 m->leader ? leader_identity(m->leader) : "(no election)");
	atomic_store(&m->leading, true);
	metric_set(m->metrics.leader, NULL, 1);
	manager_enqueue_everything(m);
}

static void on_stopped_leading(void *ctx)
{
	struct manager *m = ctx;

	atomic_store(&m->leading, false);
	metric_set(m->metrics.leader, NULL, 0);
	if (!atomic_load(&m->stopping)) {
		/*
		 * Another replica may be writing now: no write of ours may go out
		 * after this, not even one a worker is in the middle of (its pass
		 * ends as a crash would end it, which the next leader finishes
		 * from the stored status), and the process exits, as client-go's
		 * users do.
		 */
		kube_http_cancel(m->http, true);
		log_error("leader", "lost the leader Lease; exiting so a clean process takes over");
		manager_stop(m);
	}
}

static void on_new_leader(void *ctx, const char *identity)
{
	(void)ctx;
	log_info("leader", "the leader is now %s", identity && *identity ? identity : "(none)");
}

bool manager_synced(void *arg)
{
	struct manager *m = arg;

	for (int k = 0; k < KIND_COUNT; k++)
		if (m->reflectors[k] && !kinds[k].optional && !reflector_synced(m->reflectors[k]))
			return false;
	return true;
}

bool manager_discovery_serves(const json_t *doc, const char *plural)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(doc, "resources"), i, r) {
		const char *name = json_string_value(json_object_get(r, "name"));

		if (name && !strcmp(name, plural))
			return true;
	}
	return false;
}

/* The discovery document of one group version: NULL when it is not served. */
static json_t *discovery_doc(struct kube_http *h, const struct kube_resource *res, int *err)
{
	struct kube_response resp;
	char path[128];
	json_t *doc = NULL;

	snprintf(path, sizeof(path), "/apis/%s/%s", res->group, res->version);
	kube_response_init(&resp);
	*err = kube_http_request(h, "GET", path, NULL, NULL, 0, &resp);
	if (*err == CADRE_ENOTFOUND)
		*err = 0;
	else if (*err)
		log_error("config", "cannot read %s: %s", path, resp.error.message);
	else
		doc = json_loadb(resp.body.data, resp.body.len, 0, NULL);
	kube_response_release(&resp);
	return doc;
}

bool manager_discover_dra(struct kube_http *h)
{
	int err = 0;
	json_t *doc = discovery_doc(h, &kube_resource_resourceslices, &err);
	bool served = err || manager_discovery_serves(doc, kube_resource_resourceslices.plural);

	json_decref(doc);
	if (err)
		log_warn("config", "watching resource.k8s.io/v1's ResourceSlices, ResourceClaims "
			 "and DeviceClasses all the same");
	else if (!served)
		log_info("config", "resource.k8s.io/v1 is not served: jobs whose accelerators come "
			 "from a DeviceClass will wait; restart the controller once it is");
	return served;
}

int manager_discover_podgroups(struct kube_http *h, const struct kube_resource **out)
{
	static const struct kube_resource *const versions[] = {
		&kube_resource_podgroups_v1beta1, &kube_resource_podgroups_v1alpha2 };
	int err = 0;

	*out = NULL;
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]) && !*out; i++) {
		json_t *doc = discovery_doc(h, versions[i], &err);

		if (err)
			return err;
		if (manager_discovery_serves(doc, "podgroups"))
			*out = versions[i];
		json_decref(doc);
	}
	if (!*out) {
		log_error("config", "--gang-scheduler=native needs the PodGroup API, and this API "
			  "server serves podgroups in neither scheduling.k8s.io/v1beta1 nor "
			  "scheduling.k8s.io/v1alpha2. Kubernetes 1.36: kube-apiserver "
			  "--runtime-config=scheduling.k8s.io/v1alpha2=true and, on kube-apiserver, "
			  "kube-scheduler and kube-controller-manager, "
			  "--feature-gates=GenericWorkload=true,GangScheduling=true. Kubernetes 1.37: "
			  "--runtime-config=scheduling.k8s.io/v1beta1=true and "
			  "--feature-gates=GenericWorkload=true. Or pick another --gang-scheduler "
			  "(builtin, kueue, none)");
		return CADRE_ENOTFOUND;
	}
	log_info("config", "native gang scheduling: PodGroups at %s", (*out)->api_version);
	return 0;
}

int manager_stores_init(struct manager *m)
{
	for (int k = 0; k < KIND_COUNT; k++) {
		if (!kind_resource(m, k))
			continue;
		struct store_options so = { .kind = kind_resource(m, k)->plural,
					    .trim = kinds[k].trim, .record = kinds[k].record };
		struct store_handlers h = manager_handlers(m, (enum manager_kind)k);
		int err;

		m->stores[k] = store_new(&so);
		if (!m->stores[k])
			return CADRE_ENOMEM;
		err = store_add_handlers(m->stores[k], &h);
		if (!err && k == KIND_TRAININGJOBS)
			err = store_add_index(m->stores[k], "volume", manager_index_job_volumes,
					      NULL);
		if (!err && k == KIND_VOLUMES)
			err = store_add_index(m->stores[k], MANAGER_PV_INDEX,
					      manager_index_volume_pv, NULL);
		if (!err && k == KIND_TRAININGJOBS)
			err = store_add_index(m->stores[k], "array", manager_index_job_array, NULL);
		if (!err && k == KIND_TRAININGJOBS)
			err = store_add_index(m->stores[k], JOBIDS_INDEX, jobids_index, NULL);
		if (!err && k == KIND_TRAININGJOBS)
			err = store_add_index(m->stores[k], TJ_SINGLETON_INDEX, tj_singleton_index,
					      NULL);
		if (!err && k == KIND_TRAININGJOBS)
			err = store_add_index(m->stores[k], TJ_AWAITED_INDEX, tj_awaited_index, NULL);
		if (!err && k == KIND_TRAININGJOBS)
			err = store_add_index(m->stores[k], CODE_INDEX, code_index_job, NULL);
		if (!err && k == KIND_TRAININGJOBS)
			err = store_add_index(m->stores[k], GANG_PREEMPTS_INDEX, gang_preempts_index,
					      NULL);
		if (!err && k == KIND_CODE)
			err = store_add_index(m->stores[k], CODE_INDEX, code_index_part, NULL);
		if (!err && (k == KIND_PODS || k == KIND_PODGROUPS)) {
			err = store_add_index(m->stores[k], "job", pod_index_job, NULL);
			if (!err)
				err = store_add_index(m->stores[k], "node", pod_index_node, NULL);
		}
		if (err)
			return err;
	}
	return 0;
}

int64_t manager_time(const struct manager *m)
{
	return m->wall_s ? m->wall_s() : (int64_t)time(NULL);
}

int manager_init(struct manager *m, const struct options *opts)
{
	struct kube_config_opts copts = { .kubeconfig = opts->kubeconfig,
					  .context = opts->context };
	struct events_options events_opts = { .reporting_controller = EVENTS_CONTROLLER };
	struct kube_http_opts hopts;
	struct kube_status st;
	int err;

	memset(m, 0, sizeof(*m));
	m->opts = opts;
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->admission_lock, NULL);
	pthread_cond_init(&m->wake, NULL);

	kube_status_clear(&st);
	err = kube_config_load(&copts, &m->config, &st);
	if (err) {
		log_error("config", "cannot load a Kubernetes config: %s", st.message);
		return err;
	}
	kube_http_opts_init(&hopts);
	hopts.qps = opts->kube_api_qps;
	hopts.burst = opts->kube_api_burst;
	err = kube_http_new(m->config, &hopts, &m->http);
	if (err) {
		log_error("config", "cannot make an API client: %s", cadre_strerror(err));
		return err;
	}
	err = metrics_init(m);
	if (err)
		return err;
	m->queue = wq_new(NULL);
	m->pod_batch_ms = MANAGER_POD_BATCH_MS;
	m->expect = expect_new(5 * 60 * 1000);
	m->jobids = jobids_new();
	/* As long as a pod create is believed (expect.h): the same window. */
	m->memo = jobmemo_new(5 * 60 * 1000);
	if (!m->queue || !m->expect || !m->memo || !m->jobids)
		return CADRE_ENOMEM;
	err = events_new(m->http, &events_opts, &m->events);
	if (err)
		return err;

	m->kueue = kueue_watch_new(m);
	m->topology = topology_watch_new(m);
	if (!m->kueue || !m->topology)
		return CADRE_ENOMEM;
	if (opts->gang_scheduler == GANG_NATIVE) {
		err = manager_discover_podgroups(m->http, &m->podgroups);
		if (err)
			return err;
	}
	m->dra_absent = !manager_discover_dra(m->http);
	err = manager_stores_init(m);
	if (err)
		return err;
	for (int k = 0; k < KIND_COUNT; k++) {
		if (!m->stores[k] || (kinds[k].optional && m->dra_absent))
			continue;
		struct reflector_options ro = {
			.resource = kind_resource(m, k),
			.namespace = kinds[k].namespaced_by_flag ? opts->namespace : NULL,
			.label_selector = k == KIND_OTHER_PODS ? manager_other_pods_selector(opts) :
					  kinds[k].label_selector,
			.field_selector = kinds[k].field_selector,
		};

		err = reflector_new(m->http, m->stores[k], &ro, &m->reflectors[k]);
		if (err)
			return err;
	}
	return 0;
}

static int start_workers(struct manager *m)
{
	m->n_workers = m->opts->workers;
	m->workers = calloc((size_t)m->n_workers, sizeof(*m->workers));
	if (!m->workers)
		return CADRE_ENOMEM;
	for (int i = 0; i < m->n_workers; i++)
		if (pthread_create(&m->workers[i], NULL, worker_main, m)) {
			m->n_workers = i;
			return CADRE_ENOMEM;
		}
	m->workers_running = true;
	return 0;
}

int manager_run(struct manager *m)
{
	int err;

	for (int k = 0; k < KIND_COUNT; k++) {
		if (!m->reflectors[k])
			continue;
		err = reflector_start(m->reflectors[k]);
		if (err)
			return err;
	}
	err = events_start(m->events);
	if (err)
		return err;
	/* Not waited for: without Kueue installed it never lists (kueue.h). */
	if (m->opts->gang_scheduler == GANG_KUEUE && (err = kueue_watch_ensure(m->kueue)))
		return err;
	log_info("manager", "listing and watching %s; waiting for caches to sync",
		 m->opts->namespace ? m->opts->namespace : "all namespaces");
	for (int k = 0; k < KIND_COUNT; k++) {
		if (!m->reflectors[k] || kinds[k].optional)
			continue;
		while (!atomic_load(&m->stopping)) {
			err = reflector_wait_synced(m->reflectors[k], 1000);
			if (err != CADRE_ETIMEDOUT)
				break;
		}
		if (atomic_load(&m->stopping))
			return 0;
		log_info("manager", "cache synced: %s%s (%zu objects)",
			 kind_resource(m, k)->plural, k == KIND_OTHER_PODS ? " (other pods)" : "",
			 store_len(m->stores[k]));
	}
	log_info("manager", "all caches synced");

	err = start_workers(m);
	if (err)
		return err;
	if (m->opts->leader_elect) {
		struct leader_options lo = { .namespace = m->opts->leader_election_namespace,
					     .name = m->opts->leader_election_id };
		struct leader_callbacks cb = { on_started_leading, on_stopped_leading,
					       on_new_leader, m };

		struct kube_http_opts hopts;

		/*
		 * The Lease gets a client of its own: a busy reconciler must
		 * not spend the renewals' rate limit, and a hung renew must
		 * give up well inside the 10 s renew deadline (the shared
		 * client waits 60 s).
		 */
		kube_http_opts_init(&hopts);
		hopts.qps = 5;
		hopts.burst = 10;
		hopts.connect_timeout_ms = 5000;
		hopts.request_timeout_ms = 5000;
		hopts.max_retries = 0;
		err = kube_http_new(m->config, &hopts, &m->lease_http);
		if (!err)
			err = leader_new(m->lease_http, &lo, &cb, &m->leader);
		if (!err)
			err = leader_start(m->leader);
		if (err)
			return err;
		log_info("leader", "standing for election on Lease %s/%s as %s",
			 lo.namespace, lo.name, leader_identity(m->leader));
	} else {
		on_started_leading(m);
	}

	pthread_mutex_lock(&m->lock);
	while (!atomic_load(&m->stopping))
		pthread_cond_wait(&m->wake, &m->lock);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

void manager_stop(struct manager *m)
{
	pthread_mutex_lock(&m->lock);
	atomic_store(&m->stopping, true);
	pthread_cond_broadcast(&m->wake);
	pthread_mutex_unlock(&m->lock);
}

void manager_release(struct manager *m)
{
	atomic_store(&m->stopping, true);
	/*
	 * Stop writing first: the Lease goes back only after workers are done.
	 * A pass in the middle of a gang's writes would otherwise finish them,
	 * queued behind the QPS limit of a busy server, for many seconds: its
	 * requests are cancelled instead, which leaves what a crash leaves.
	 */
	if (m->queue)
		wq_shutdown(m->queue);
	if (m->http)
		kube_http_cancel(m->http, true);
	for (int i = 0; i < m->n_workers; i++)
		pthread_join(m->workers[i], NULL);
	free(m->workers);
	m->workers = NULL;
	/* The events still to send go out below, in their own bounded time. */
	if (m->http)
		kube_http_cancel(m->http, false);
	if (m->leader) {
		leader_stop(m->leader);
		leader_free(m->leader);
		log_info("leader", "released the leader Lease");
	}
	for (int k = 0; k < KIND_COUNT; k++)
		reflector_free(m->reflectors[k]);
	kueue_watch_free(m->kueue);
	m->kueue = NULL;
	topology_watch_free(m->topology);
	m->topology = NULL;
	if (m->events) {
		events_flush(m->events, 2000);
		events_free(m->events);
	}
	for (int k = 0; k < KIND_COUNT; k++)
		store_free(m->stores[k]);
	wq_free(m->queue);
	expect_free(m->expect);
	jobids_free(m->jobids);
	jobmemo_free(m->memo);
	gang_pass_free(m->pass);
	registry_free(m->registry);
	kube_http_free(m->lease_http);
	kube_http_free(m->http);
	kube_config_free(m->config);
	pthread_mutex_destroy(&m->lock);
	pthread_mutex_destroy(&m->admission_lock);
	pthread_cond_destroy(&m->wake);
	memset(m, 0, sizeof(*m));
}
