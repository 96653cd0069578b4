/*
 * handlers.c - what each change a cache sees means for the work queue and the
 * expectations: the store handlers of every watched kind (handlers.h).
 */
#include "controller/manager/handlers.h"
#include "controller/manager/cache_record.h"
#include "controller/manager/cache_record_dra.h"
#include "controller/manager/reconcile.h"
#include "controller/code/code.h"
#include "api/labels.h"

#include <string.h>

static const char *obj_ns(const json_t *obj)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), "namespace"));
}

static const char *obj_name(const json_t *obj)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
}

static const char *obj_label(const json_t *obj, const char *label)
{
	return json_string_value(json_object_get(
		json_object_get(json_object_get(obj, "metadata"), "labels"), label));
}

static const char *obj_uid(const json_t *obj)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
}

/* Whether old and new are different objects under one name (deleted and made again). */
static bool uid_changed(const json_t *old_obj, const json_t *new_obj)
{
	const char *a = obj_uid(old_obj), *b = obj_uid(new_obj);

	return a && b && strcmp(a, b);
}

/* --- handlers: what each change means for the queue --- */

/* The Volumes a job names: their usedBy lists change with the job. */
static void enqueue_job_volumes(struct manager *m, const json_t *job)
{
	const json_t *vols = json_object_get(json_object_get(job, "spec"), "volumes");
	const char *path;
	json_t *value;

	json_object_foreach((json_t *)vols, path, value)
		if (json_string_value(value))
			manager_enqueue(m, "vol", obj_ns(job), json_string_value(value));
}

/*
 * An array job's element (docs/design.md 12) is the array's to count: its
 * creation settles the array's expectation, and any change of it queues
 * the array.
 */
static void enqueue_array(struct manager *m, const json_t *obj, bool created)
{
	const char *array = obj_label(obj, LABEL_ARRAY_JOB);
	char key[STORE_KEY_MAX];

	if (!array)
		return;
	snprintf(key, sizeof(key), "%s/%s", obj_ns(obj) ? obj_ns(obj) : "", array);
	if (created)
		expect_observed_create(m->expect, key, obj_name(obj));
	manager_enqueue(m, "tj", obj_ns(obj), array);
}

/* The code bundles a job names: whether they are still needed changes with the job. */
static void enqueue_job_code(struct manager *m, const json_t *job)
{
	const json_t *list = json_object_get(json_object_get(job, "spec"), "code"), *item;
	char label[CODE_LABEL_LEN + 1];
	size_t i;

	json_array_foreach((json_t *)list, i, item)
		if (!code_label_value(json_string_value(json_object_get(item, "digest")), label))
			manager_enqueue(m, "code", obj_ns(job), label);
}

static const char *obj_phase(const json_t *obj)
{
	const char *phase = json_string_value(
		json_object_get(json_object_get(obj, "status"), "phase"));

	return phase ? phase : "";
}

static void on_tj(void *ctx, const char *key, const json_t *obj)
{
	struct manager *m = ctx;

	(void)key;
	manager_enqueue(m, "tj", obj_ns(obj), obj_name(obj));
	enqueue_job_volumes(m, obj);
	enqueue_array(m, obj, true);
}

static void on_tj_add(void *ctx, const char *key, const json_t *obj)
{
	on_tj(ctx, key, obj);
	enqueue_job_code(ctx, obj);
}

static void on_tj_update(void *ctx, const char *key, const json_t *old_obj,
			 const json_t *new_obj)
{
	struct manager *m = ctx;
	const char *old_phase = json_string_value(
		json_object_get(json_object_get(old_obj, "status"), "phase"));
	const char *new_phase = json_string_value(
		json_object_get(json_object_get(new_obj, "status"), "phase"));

	/* Deleted and created again while the watch was down: start afresh. */
	if (uid_changed(old_obj, new_obj))
		expect_forget(m->expect, key);
	on_tj(ctx, key, new_obj);
	/* A job changing phase (finished, restarting) may free capacity, and its code. */
	if (strcmp(old_phase ? old_phase : "", new_phase ? new_phase : "")) {
		manager_kick_admission(m);
		enqueue_job_code(m, new_obj);
	}
}

static void on_tj_delete(void *ctx, const char *key, const json_t *obj)
{
	struct manager *m = ctx;

	expect_forget(m->expect, key);
	jobmemo_forget(m->memo, key);
	manager_kick_admission(m);
	enqueue_job_volumes(m, obj);
	enqueue_array(m, obj, false);
	enqueue_job_code(m, obj);
}

/*
 * Batched (manager.pod_batch_ms): nothing a pass does for a gang waits on a
 * single pod event; the ungates follow the creates in the same pass.
 */
static void enqueue_pod_job(struct manager *m, const json_t *pod)
{
	manager_enqueue_after(m, "tj", obj_ns(pod), obj_label(pod, LABEL_JOB_NAME),
			      m->pod_batch_ms);
}

static void pod_job_key(const json_t *pod, char *key, size_t size)
{
	snprintf(key, size, "%s/%s", obj_ns(pod) ? obj_ns(pod) : "",
		 obj_label(pod, LABEL_JOB_NAME) ? obj_label(pod, LABEL_JOB_NAME) : "");
}

static void on_pod_add(void *ctx, const char *key, const json_t *pod)
{
	struct manager *m = ctx;
	char job[STORE_KEY_MAX];

	(void)key;
	pod_job_key(pod, job, sizeof(job));
	expect_observed_create(m->expect, job, obj_name(pod));
	enqueue_pod_job(m, pod);
}

static void on_pod_delete(void *ctx, const char *key, const json_t *pod);

static void on_pod_update(void *ctx, const char *key, const json_t *old_pod,
			  const json_t *new_pod)
{
	/*
	 * A relist after a broken watch folds "rank 3's pod deleted" and "the
	 * next attempt's rank 3 created" (same name) into one update; both
	 * expectations must be seen through, or the job waits for them to
	 * expire.
	 */
	if (uid_changed(old_pod, new_pod)) {
		on_pod_delete(ctx, key, old_pod);
		on_pod_add(ctx, key, new_pod);
		return;
	}
	enqueue_pod_job(ctx, new_pod);
}

static void on_pod_delete(void *ctx, const char *key, const json_t *pod)
{
	struct manager *m = ctx;
	char job[STORE_KEY_MAX];

	(void)key;
	pod_job_key(pod, job, sizeof(job));
	expect_observed_delete(m->expect, job, obj_name(pod));
	enqueue_pod_job(m, pod);
	manager_kick_admission(m);
}

static void on_capacity(void *ctx, const char *key, const json_t *obj)
{
	(void)key;
	(void)obj;
	manager_kick_admission(ctx);
}

/*
 * Whether what admission reads of an object changed between two versions:
 * its cache record (cache_record.h), which keeps exactly that (a node's
 * readiness, cordon, allocatable, labels and taints; a pod's node, phase
 * and requests). A node's heartbeat, a pod's IP or readiness moves none of
 * it, and waking every waiting job for one (each then decided against the
 * whole queue) was most of a queued site's CPU. A version too large for a
 * record counts as a change.
 */
static bool record_changed(store_record_fn record, const json_t *a, const json_t *b)
{
	unsigned char ra[STORE_RECORD_MAX], rb[STORE_RECORD_MAX];
	int la = record(a, ra, sizeof(ra), NULL), lb = record(b, rb, sizeof(rb), NULL);

	return la <= 0 || lb <= 0 || la != lb || memcmp(ra, rb, (size_t)la) != 0;
}

/* Somebody else's pod: only a change of its node, phase or requests moves capacity. */
static void on_other_pod_update(void *ctx, const char *key, const json_t *old_obj,
				const json_t *new_obj)
{
	if (record_changed(cache_record_pod, old_obj, new_obj))
		on_capacity(ctx, key, new_obj);
}

/* Any edit of a Partition may change where and in what order its jobs go. */
static void on_capacity_update(void *ctx, const char *key, const json_t *old_obj,
			       const json_t *new_obj)
{
	(void)old_obj;
	on_capacity(ctx, key, new_obj);
}

/* A node that changed may have lost pods of running gangs: look at them. */
static void on_node_change(void *ctx, const char *key, const json_t *node)
{
	struct manager *m = ctx;
	json_t *pods = NULL, *pod;
	size_t i;

	manager_kick_admission(m);
	if (store_by_index(m->stores[KIND_PODS], "node", obj_name(node), &pods) == 0) {
		json_array_foreach(pods, i, pod)
			enqueue_pod_job(m, pod);
		json_decref(pods);
	}
	(void)key;
}

static void on_node_update(void *ctx, const char *key, const json_t *old_obj,
			   const json_t *new_obj)
{
	if (record_changed(cache_record_node, old_obj, new_obj))
		on_node_change(ctx, key, new_obj);
}

/*
 * Dynamic Resource Allocation: a slice, claim or class changes the devices
 * admission counts (dra_capacity.h) only through its record, and nothing
 * but admission reads them. A claim's record holds nothing until the claim
 * is allocated: one made for a pod, or deleted unallocated, moves no device.
 */
static store_record_fn dra_record(enum manager_kind kind)
{
	return kind == KIND_RESOURCESLICES ? cache_record_slice :
	       kind == KIND_RESOURCECLAIMS ? cache_record_claim : cache_record_class;
}

/* Whether obj's record counts for anything: any slice or class, an allocated claim. */
static bool dra_counts(store_record_fn record, const json_t *obj)
{
	unsigned char rec[STORE_RECORD_MAX];
	struct cache_claim claim;
	int len;

	if (record != cache_record_claim)
		return true;
	len = record(obj, rec, sizeof(rec), NULL);
	return len <= 0 || cache_claim_read(rec, (size_t)len, &claim) || claim.n_results > 0;
}

static void on_dra(struct manager *m, enum manager_kind kind, const json_t *obj)
{
	if (dra_counts(dra_record(kind), obj))
		manager_kick_admission(m);
}

static void on_dra_update(struct manager *m, enum manager_kind kind, const json_t *old_obj,
			  const json_t *new_obj)
{
	if (record_changed(dra_record(kind), old_obj, new_obj))
		manager_kick_admission(m);
}

static void on_slice(void *ctx, const char *key, const json_t *obj)
{
	(void)key;
	on_dra(ctx, KIND_RESOURCESLICES, obj);
}

static void on_slice_update(void *ctx, const char *key, const json_t *old_obj,
			    const json_t *new_obj)
{
	(void)key;
	on_dra_update(ctx, KIND_RESOURCESLICES, old_obj, new_obj);
}

static void on_resource_claim(void *ctx, const char *key, const json_t *obj)
{
	(void)key;
	on_dra(ctx, KIND_RESOURCECLAIMS, obj);
}

static void on_resource_claim_update(void *ctx, const char *key, const json_t *old_obj,
				     const json_t *new_obj)
{
	(void)key;
	on_dra_update(ctx, KIND_RESOURCECLAIMS, old_obj, new_obj);
}

static void on_device_class(void *ctx, const char *key, const json_t *obj)
{
	(void)key;
	on_dra(ctx, KIND_DEVICECLASSES, obj);
}

static void on_device_class_update(void *ctx, const char *key, const json_t *old_obj,
				   const json_t *new_obj)
{
	(void)key;
	on_dra_update(ctx, KIND_DEVICECLASSES, old_obj, new_obj);
}

static void on_volume(void *ctx, const char *key, const json_t *obj)
{
	struct manager *m = ctx;

	(void)key;
	manager_enqueue(m, "vol", obj_ns(obj), obj_name(obj));
	/* Jobs waiting in Pending for this Volume. */
	tj_requeue_waiting(m);
}

static void on_volume_update(void *ctx, const char *key, const json_t *old_obj,
			     const json_t *new_obj)
{
	(void)old_obj;
	on_volume(ctx, key, new_obj);
}

/* A claim or volume changed: the Volume named like it (or claiming it) looks again. */
static void on_claim(void *ctx, const char *key, const json_t *obj)
{
	struct manager *m = ctx;
	const char *volume = obj_label(obj, LABEL_VOLUME);

	(void)key;
	if (volume)
		manager_enqueue(m, "vol", obj_ns(obj), volume);
	else if (obj_ns(obj))
		manager_enqueue(m, "vol", obj_ns(obj), obj_name(obj));
}

static void on_claim_update(void *ctx, const char *key, const json_t *old_obj,
			    const json_t *new_obj)
{
	(void)old_obj;
	on_claim(ctx, key, new_obj);
}

/*
 * A PV came, changed or went: the Volume it is labelled as (a PV is
 * cluster-scoped, so its namespace is a label too), and the Volume whose
 * PV name it holds, which may be another one waiting for it to go.
 */
static void on_pv(void *ctx, const char *key, const json_t *obj)
{
	struct manager *m = ctx;
	const char *ns = obj_label(obj, LABEL_VOLUME_NAMESPACE);
	const char *volume = obj_label(obj, LABEL_VOLUME);
	json_t *vols = NULL, *vol;
	size_t i;

	(void)key;
	if (ns && volume)
		manager_enqueue(m, "vol", ns, volume);
	if (!obj_name(obj) ||
	    store_by_index(m->stores[KIND_VOLUMES], MANAGER_PV_INDEX, obj_name(obj), &vols))
		return;
	json_array_foreach(vols, i, vol)
		manager_enqueue(m, "vol", obj_ns(vol), obj_name(vol));
	json_decref(vols);
}

static void on_pv_update(void *ctx, const char *key, const json_t *old_obj,
			 const json_t *new_obj)
{
	(void)old_obj;
	on_pv(ctx, key, new_obj);
}

static void on_service(void *ctx, const char *key, const json_t *obj)
{
	struct manager *m = ctx;

	(void)key;
	manager_enqueue(m, "tj", obj_ns(obj), obj_label(obj, LABEL_JOB_NAME));
}

static void on_service_update(void *ctx, const char *key, const json_t *old_obj,
			      const json_t *new_obj)
{
	(void)old_obj;
	on_service(ctx, key, new_obj);
}

/*
 * A part of a code bundle came, changed or went: the jobs that name the
 * bundle look again (one may be waiting for it), and so does the bundle's
 * collection.
 */
static void on_code(void *ctx, const char *key, const json_t *cm)
{
	struct manager *m = ctx;
	const char *label = obj_label(cm, CODE_LABEL);
	char index[STORE_KEY_MAX];
	json_t *jobs = NULL, *job;
	size_t i;

	(void)key;
	if (!label)
		return;
	manager_enqueue(m, "code", obj_ns(cm), label);
	snprintf(index, sizeof(index), "%s/%s", obj_ns(cm) ? obj_ns(cm) : "", label);
	if (store_by_index(m->stores[KIND_TRAININGJOBS], CODE_INDEX, index, &jobs))
		return;
	json_array_foreach(jobs, i, job)
		if (strcmp(obj_phase(job), "Succeeded") && strcmp(obj_phase(job), "Failed"))
			manager_enqueue(m, "tj", obj_ns(job), obj_name(job));
	json_decref(jobs);
}

static void on_code_update(void *ctx, const char *key, const json_t *old_obj,
			   const json_t *new_obj)
{
	(void)old_obj;
	on_code(ctx, key, new_obj);
}

static const struct store_handlers handlers_for[KIND_COUNT] = {
	[KIND_TRAININGJOBS] = { on_tj_add, on_tj_update, on_tj_delete, NULL },
	[KIND_VOLUMES] = { on_volume, on_volume_update, on_volume, NULL },
	[KIND_PODS] = { on_pod_add, on_pod_update, on_pod_delete, NULL },
	[KIND_OTHER_PODS] = { on_capacity, on_other_pod_update, on_capacity, NULL },
	[KIND_NODES] = { on_node_change, on_node_update, on_node_change, NULL },
	[KIND_SERVICES] = { on_service, on_service_update, on_service, NULL },
	[KIND_PVCS] = { on_claim, on_claim_update, on_claim, NULL },
	[KIND_PVS] = { on_pv, on_pv_update, on_pv, NULL },
	/* A PodGroup carries the job's label, as a Service does. */
	[KIND_PODGROUPS] = { on_service, on_service_update, on_service, NULL },
	/* So does the entrypoint ConfigMap: made, changed or deleted, its job looks again. */
	[KIND_CONFIGMAPS] = { on_service, on_service_update, on_service, NULL },
	/* A Partition changes where and how waiting jobs run, or whether they may. */
	[KIND_PARTITIONS] = { on_capacity, on_capacity_update, on_capacity, NULL },
	[KIND_CODE] = { on_code, on_code_update, on_code, NULL },
	[KIND_RESOURCESLICES] = { on_slice, on_slice_update, on_slice, NULL },
	[KIND_RESOURCECLAIMS] = { on_resource_claim, on_resource_claim_update, on_resource_claim,
				  NULL },
	[KIND_DEVICECLASSES] = { on_device_class, on_device_class_update, on_device_class, NULL },
};

struct store_handlers manager_handlers(struct manager *m, enum manager_kind kind)
{
	struct store_handlers h = handlers_for[kind];

	h.ctx = m;
	return h;
}

struct enqueue_all {
	struct manager *m;
	const char *kind;
};

/* Queue the object at key ("namespace/name"); its record is not needed. */
static int enqueue_key(void *ctx, const char *key, const void *rec, size_t len)
{
	const struct enqueue_all *e = ctx;
	const char *slash = strchr(key, '/');
	char ns[STORE_KEY_MAX];

	(void)rec;
	(void)len;
	if (!slash || (size_t)(slash - key) >= sizeof(ns))
		return 0;
	memcpy(ns, key, (size_t)(slash - key));
	ns[slash - key] = '\0';
	manager_enqueue(e->m, e->kind, ns, slash + 1);
	return 0;
}

/*
 * Queue every object we know of: the first pass after gaining the lead.
 * By key, without decoding: 10k TrainingJobs listed as JSON would hold all
 * of them decoded at once.
 */
/* Queue the bundle a part belongs to ("code/<namespace>/<label>"). */
static int enqueue_bundle(void *ctx, const char *key, const json_t *cm)
{
	(void)key;
	if (obj_label(cm, CODE_LABEL))
		manager_enqueue(ctx, "code", obj_ns(cm), obj_label(cm, CODE_LABEL));
	return 0;
}

void manager_enqueue_everything(struct manager *m)
{
	struct enqueue_all tj = { m, "tj" }, vol = { m, "vol" };

	store_foreach_record(m->stores[KIND_TRAININGJOBS], enqueue_key, &tj);
	store_foreach_record(m->stores[KIND_VOLUMES], enqueue_key, &vol);
	/* A new leader looks at every bundle: the last one's timers went with it. */
	if (m->stores[KIND_CODE])
		store_foreach(m->stores[KIND_CODE], enqueue_bundle, m);
}
