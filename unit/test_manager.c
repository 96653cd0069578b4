/*
 * What the manager's cache handlers make of a change: the keys they queue
 * and the expectations they see through. Driven with a manager that has
 * only a work queue and expectations, as the handlers need nothing else.
 */
#include <criterion/criterion.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "controller/build/build.h"
#include "controller/build/entrypoint.h"
#include "controller/manager/configmap_trim.h"
#include "controller/manager/expect.h"
#include "controller/manager/manager.h"
#include "controller/manager/handlers.h"
#include "api/pod_trim.h"
#include "kube/store.h"
#include "base/err.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/workqueue.h"
#include "unit/support/httpd.h"

static struct manager m;

static void setup(void)
{
	memset(&m, 0, sizeof(m));
	m.expect = expect_new(5 * 60 * 1000);
	m.queue = wq_new(NULL);
	cr_assert(m.expect && m.queue);
}

static void teardown(void)
{
	wq_free(m.queue);
	expect_free(m.expect);
}

TestSuite(manager, .init = setup, .fini = teardown);

static json_t *object(const char *name, const char *uid, const char *job)
{
	json_t *obj = json_pack("{s:{s:s, s:s, s:s, s:{}}}", "metadata", "namespace", "ns",
				"name", name, "uid", uid, "labels");

	cr_assert_not_null(obj);
	if (job)
		json_object_set_new(json_object_get(json_object_get(obj, "metadata"), "labels"),
				    "cadre.dev/job-name", json_string(job));
	return obj;
}

/* The next key the queue hands out, or NULL when none comes within 200 ms. */
static char *next_key(void)
{
	char *key = NULL;

	if (wq_get_timeout(m.queue, &key, 200))
		return NULL;
	wq_done(m.queue, key);
	return key;
}

static void assert_queued(const char *want)
{
	char *key = next_key();

	cr_assert_not_null(key, "nothing queued; wanted %s", want);
	cr_assert_str_eq(key, want);
	free(key);
}

Test(manager, a_pod_seen_by_the_watch_meets_its_create_expectation_and_queues_its_job)
{
	struct store_handlers h = manager_handlers(&m, KIND_PODS);
	json_t *pod = object("job-0", "uid-1", "job");

	expect_create(m.expect, "ns/job", "job-0", 0);
	cr_assert_not(expect_satisfied(m.expect, "ns/job", 1));
	h.on_add(h.ctx, "ns/job-0", pod);
	cr_assert(expect_satisfied(m.expect, "ns/job", 1));
	assert_queued("tj/ns/job");
	json_decref(pod);
}

/*
 * A relist after a broken watch can fold "the old rank-0 pod deleted" and
 * "the next attempt's rank-0 pod created" (the same name) into one update.
 * Both expectations are met, or the job would wait for them to expire.
 */
Test(manager, a_pod_replaced_under_the_same_name_meets_the_delete_and_the_create)
{
	struct store_handlers h = manager_handlers(&m, KIND_PODS);
	json_t *old_pod = object("job-0", "uid-1", "job"), *new_pod = object("job-0", "uid-2", "job");

	expect_delete(m.expect, "ns/job", "job-0", 0);
	expect_create(m.expect, "ns/job", "job-0", 0);
	h.on_update(h.ctx, "ns/job-0", old_pod, new_pod);
	cr_assert(expect_satisfied(m.expect, "ns/job", 1),
		  "a replaced pod left expectations pending");
	assert_queued("tj/ns/job");
	json_decref(old_pod);
	json_decref(new_pod);
}

/* An update of the same pod (same uid) is not the create the job waits for. */
Test(manager, an_update_of_the_same_pod_is_not_a_create)
{
	struct store_handlers h = manager_handlers(&m, KIND_PODS);
	json_t *old_pod = object("job-0", "uid-1", "job"), *new_pod = object("job-0", "uid-1", "job");

	expect_create(m.expect, "ns/job", "job-0", 0);
	h.on_update(h.ctx, "ns/job-0", old_pod, new_pod);
	cr_assert_not(expect_satisfied(m.expect, "ns/job", 1));
	assert_queued("tj/ns/job");
	json_decref(old_pod);
	json_decref(new_pod);
}

/*
 * A gang's start brings several events per pod. With a batch time they queue
 * the job once, when the batch time has passed, and the expectations are
 * still seen through at once.
 */
Test(manager, pod_events_within_the_batch_time_queue_their_job_once, .timeout = 10)
{
	struct store_handlers h = manager_handlers(&m, KIND_PODS);
	json_t *pods[8];
	char name[16], uid[16], *key = NULL;

	m.pod_batch_ms = 300;
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "job-%d", i);
		snprintf(uid, sizeof(uid), "uid-%d", i);
		pods[i] = object(name, uid, "job");
		expect_create(m.expect, "ns/job", name, 0);
	}
	for (int i = 0; i < 8; i++) {
		h.on_add(h.ctx, "ns/pod", pods[i]);
		h.on_update(h.ctx, "ns/pod", pods[i], pods[i]);
	}
	cr_assert(expect_satisfied(m.expect, "ns/job", 1), "the creates were not seen at once");
	cr_assert_not(wq_get_timeout(m.queue, &key, 100) == 0,
		      "queued %s before the batch time", key ? key : "?");
	cr_assert_eq(wq_get_timeout(m.queue, &key, 2000), 0, "the job was never queued");
	cr_assert_str_eq(key, "tj/ns/job");
	wq_done(m.queue, key);
	free(key);
	cr_assert_null(next_key(), "the job was queued more than once");
	for (int i = 0; i < 8; i++)
		json_decref(pods[i]);
}

/* A TrainingJob deleted and created again while the watch was down starts afresh. */
Test(manager, a_job_replaced_under_the_same_name_forgets_the_old_ones_expectations)
{
	struct store_handlers h = manager_handlers(&m, KIND_TRAININGJOBS);
	json_t *old_job = object("job", "uid-1", NULL), *new_job = object("job", "uid-2", NULL);

	expect_create(m.expect, "ns/job", "job-0", 0);
	h.on_update(h.ctx, "ns/job", old_job, new_job);
	cr_assert(expect_satisfied(m.expect, "ns/job", 1));
	assert_queued("tj/ns/job");

	/* The same job updated keeps them. */
	expect_create(m.expect, "ns/job", "job-0", 0);
	h.on_update(h.ctx, "ns/job", new_job, new_job);
	cr_assert_not(expect_satisfied(m.expect, "ns/job", 1));
	json_decref(old_job);
	json_decref(new_job);
}

Test(manager, a_pod_group_change_queues_the_job_it_belongs_to)
{
	struct store_handlers h = manager_handlers(&m, KIND_PODGROUPS);
	json_t *pg = object("llama-attempt-0", "g1", "llama");

	h.on_update(h.ctx, "ns/llama-attempt-0", pg, pg);
	assert_queued("tj/ns/llama");
	json_decref(pg);
}

Test(manager, native_mode_needs_podgroups_in_the_discovery_document)
{
	json_t *with = json_pack("{s:[{s:s}, {s:s}]}", "resources", "name", "workloads", "name",
				 "podgroups");
	json_t *without = json_pack("{s:[{s:s}]}", "resources", "name", "workloads");

	cr_assert(manager_discovery_serves(with, "podgroups"));
	cr_assert_not(manager_discovery_serves(without, "podgroups"));
	cr_assert_not(manager_discovery_serves(NULL, "podgroups"));
	json_decref(with);
	json_decref(without);
}

/* Made, changed or deleted, the entrypoint ConfigMap queues the job whose label it carries. */
Test(manager, an_entrypoint_configmap_change_queues_the_job_it_belongs_to)
{
	struct store_handlers h = manager_handlers(&m, KIND_CONFIGMAPS);
	json_t *cm = object("llama-entrypoint", "c1", "llama");

	h.on_add(h.ctx, "ns/llama-entrypoint", cm);
	assert_queued("tj/ns/llama");
	h.on_update(h.ctx, "ns/llama-entrypoint", cm, cm);
	assert_queued("tj/ns/llama");
	h.on_delete(h.ctx, "ns/llama-entrypoint", cm);
	assert_queued("tj/ns/llama");
	json_decref(cm);
}

/*
 * A ConfigMap as the API server sends it: owned by uid (NULL: no owner),
 * holding script (base64) in binaryData and data.
 */
static json_t *configmap(const char *owner_uid, const char *script, json_t *data)
{
	json_t *cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:{s:s}, s:[{s:s, s:s}]},"
			       " s:{s:s}, s:o}", "apiVersion", "v1", "kind", "ConfigMap",
			       "metadata", "name", "llama-entrypoint", "namespace", "ns",
			       "uid", "c1", "resourceVersion", "42",
			       "labels", "cadre.dev/job-name", "llama",
			       "managedFields", "manager", "cadre", "operation", "Update",
			       "binaryData", ENTRYPOINT_KEY, script, "data", data);
	json_t *meta = json_object_get(cm, "metadata");

	cr_assert_not_null(cm);
	if (owner_uid)
		json_object_set_new(meta, "ownerReferences",
				    json_pack("[{s:s, s:s, s:s, s:b}]", "kind", "TrainingJob",
					      "name", "llama", "uid", owner_uid, "controller", 1));
	return cm;
}

Test(manager, the_configmap_cache_keeps_whose_it_is_and_whether_its_script_and_variables_are_current)
{
	json_t *vars = json_pack("{s:s, s:s}", "NNODES", "2", "MASTER_PORT", "29500");
	json_t *cm = configmap("u-1", entrypoint_script_base64(), json_incref(vars));
	json_t *trimmed = configmap_trim(cm, NULL), *meta = json_object_get(trimmed, "metadata");
	char want[BUILD_DIGEST_SIZE], other[BUILD_DIGEST_SIZE];

	cr_assert_eq(build_data_digest(vars, want), 0);
	json_object_set_new(vars, "NNODES", json_string("4"));
	cr_assert_eq(build_data_digest(vars, other), 0);
	cr_assert_not_null(trimmed);
	cr_assert_null(json_object_get(trimmed, "binaryData"), "the script is not cached");
	cr_assert_null(json_object_get(trimmed, "data"), "nor the variables");
	cr_assert_null(json_object_get(meta, "managedFields"));
	cr_assert_str_eq(json_string_value(json_object_get(meta, "resourceVersion")), "42");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(meta, "labels"),
							   "cadre.dev/job-name")), "llama");
	cr_assert_eq(configmap_state(trimmed, "u-1", want), CONFIGMAP_CURRENT);
	cr_assert_eq(configmap_state(trimmed, "u-1", other), CONFIGMAP_STALE,
		     "the job's variables changed");
	cr_assert_eq(configmap_state(trimmed, "u-1", NULL), CONFIGMAP_STALE,
		     "variables not known are not current");
	cr_assert_eq(configmap_state(trimmed, "u-2", want), CONFIGMAP_FOREIGN,
		     "an earlier job of the same name owns it");
	cr_assert_eq(configmap_state(NULL, "u-1", want), CONFIGMAP_ABSENT);
	json_decref(trimmed);
	json_decref(cm);

	/* An earlier controller's: another script, or the script in data. */
	cm = configmap("u-1", "IyBlYXJsaWVyCg==", json_deep_copy(vars));
	trimmed = configmap_trim(cm, NULL);
	cr_assert_eq(configmap_state(trimmed, "u-1", other), CONFIGMAP_STALE);
	json_decref(trimmed);
	json_decref(cm);
	cm = configmap("u-1", entrypoint_script_base64(), json_deep_copy(vars));
	json_object_del(cm, "binaryData");
	json_object_set_new(json_object_get(cm, "data"), ENTRYPOINT_KEY,
			    json_string(entrypoint_script()));
	trimmed = configmap_trim(cm, NULL);
	cr_assert_eq(configmap_state(trimmed, "u-1", other), CONFIGMAP_STALE);
	json_decref(trimmed);
	json_decref(cm);

	cm = configmap(NULL, entrypoint_script_base64(), json_deep_copy(vars));
	trimmed = configmap_trim(cm, NULL);
	cr_assert_eq(configmap_state(trimmed, "u-1", other), CONFIGMAP_FOREIGN,
		     "no owner is not ours");
	json_decref(trimmed);
	json_decref(cm);
	json_decref(vars);
}

/* The admission kick, which comes half a second after the change that asks for it. */
static void assert_kicked(void)
{
	char *key = NULL;

	cr_assert_eq(wq_get_timeout(m.queue, &key, 2000), 0, "no admission kick");
	wq_done(m.queue, key);
	cr_assert_str_eq(key, "admission");
	free(key);
}

static json_t *node_json(const char *ready, const char *heartbeat)
{
	json_t *node = json_pack("{s:{s:s, s:{s:s}}, s:{s:{s:s, s:s}, s:[{s:s, s:s, s:s}]}}",
				 "metadata", "name", "gpu-0", "labels", "nvidia.com/gpu.product",
				 "H100", "status", "allocatable", "cpu", "64", "nvidia.com/gpu", "8",
				 "conditions", "type", "Ready", "status", ready,
				 "lastHeartbeatTime", heartbeat);

	cr_assert_not_null(node);
	return node;
}

/*
 * Waiting jobs are decided again when capacity may have moved, not at every
 * node heartbeat: each kick decides every queued job against the whole queue.
 */
Test(manager, a_node_heartbeat_wakes_no_waiting_job_and_a_ready_change_does)
{
	struct store_handlers h = manager_handlers(&m, KIND_NODES);
	json_t *a = node_json("True", "2026-12-07T10:00:00Z");
	json_t *b = node_json("True", "2026-12-07T10:00:40Z");
	json_t *c = node_json("False", "2026-12-07T10:01:20Z");
	char *key = NULL;

	cr_assert_not_null(m.stores[KIND_PODS] = store_new(NULL));
	cr_assert_eq(store_add_index(m.stores[KIND_PODS], "node", pod_index_node, NULL), 0);
	h.on_update(h.ctx, "gpu-0", a, b);
	cr_assert_eq(wq_get_timeout(m.queue, &key, 1000), CADRE_ETIMEDOUT, "a heartbeat woke the queue");
	h.on_update(h.ctx, "gpu-0", b, c);
	assert_kicked();
	store_free(m.stores[KIND_PODS]);
	m.stores[KIND_PODS] = NULL;
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

static json_t *tenant_pod(const char *phase, const char *ip)
{
	json_t *pod = json_pack("{s:{s:s, s:s, s:s}, s:{s:s, s:[{s:s, s:{s:{s:s}}}]}, s:{s:s, s:s}}",
				"metadata", "namespace", "other", "name", "p", "uid", "u",
				"spec", "nodeName", "gpu-0", "containers", "name", "c", "resources",
				"requests", "nvidia.com/gpu", "8", "status", "phase", phase, "podIP",
				ip);

	cr_assert_not_null(pod);
	return pod;
}

Test(manager, another_tenants_pod_wakes_waiting_jobs_only_when_it_frees_or_takes_room)
{
	struct store_handlers h = manager_handlers(&m, KIND_OTHER_PODS);
	json_t *a = tenant_pod("Running", ""), *b = tenant_pod("Running", "10.0.0.7");
	json_t *c = tenant_pod("Succeeded", "10.0.0.7");
	char *key = NULL;

	h.on_update(h.ctx, "other/p", a, b);
	cr_assert_eq(wq_get_timeout(m.queue, &key, 1000), CADRE_ETIMEDOUT, "an IP woke the queue");
	h.on_update(h.ctx, "other/p", b, c);
	assert_kicked();
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

/* --- Dynamic Resource Allocation: what moves the devices admission counts --- */

static json_t *gpu_slice(const char *product, const char *memory)
{
	json_t *slice = json_pack(
		"{s:{s:s, s:s}, s:{s:s, s:s, s:{s:s, s:i}, s:[{s:s, s:{s:{s:s}, s:{s:s},"
		" s:{s:s}}, s:{s:{s:s}}}]}}",
		"metadata", "name", "gpu-0-gpu.nvidia.com", "resourceVersion", "1",
		"spec", "driver", "gpu.nvidia.com", "nodeName", "gpu-0", "pool", "name", "gpu-0",
		"generation", 1, "devices", "name", "gpu-0", "attributes", "type", "string", "gpu",
		"productName", "string", product, "driverVersion", "version", "570.86.15",
		"capacity", "memory", "value", memory);

	cr_assert_not_null(slice);
	return slice;
}

Test(manager, a_slice_wakes_waiting_jobs_only_when_its_devices_change)
{
	struct store_handlers h = manager_handlers(&m, KIND_RESOURCESLICES);
	json_t *a = gpu_slice("NVIDIA H100 80GB HBM3", "80Gi");
	json_t *b = gpu_slice("NVIDIA H100 80GB HBM3", "79Gi");
	json_t *c = gpu_slice("NVIDIA H200", "79Gi");
	char *key = NULL;

	h.on_add(h.ctx, "gpu-0-gpu.nvidia.com", a);
	assert_kicked();
	/* Its devices' capacity and versions are no part of what admission counts. */
	h.on_update(h.ctx, "gpu-0-gpu.nvidia.com", a, b);
	cr_assert_eq(wq_get_timeout(m.queue, &key, 1000), CADRE_ETIMEDOUT,
		     "an unchanged record woke the queue");
	h.on_update(h.ctx, "gpu-0-gpu.nvidia.com", b, c);
	assert_kicked();
	h.on_delete(h.ctx, "gpu-0-gpu.nvidia.com", c);
	assert_kicked();
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

static json_t *pod_claim(bool allocated)
{
	json_t *claim = json_pack("{s:{s:s, s:s}, s:{s:{s:[{s:s}]}}}", "metadata", "namespace",
				  "ml", "name", "p-0-gpu", "spec", "devices", "requests", "name",
				  "accelerators");

	if (allocated)
		json_object_set_new(claim, "status", json_pack(
			"{s:{s:{s:[{s:s, s:s, s:s, s:s}]}}}", "allocation", "devices", "results",
			"request", "accelerators", "driver", "gpu.nvidia.com", "pool", "gpu-0",
			"device", "gpu-0"));
	cr_assert_not_null(claim);
	return claim;
}

Test(manager, a_claim_wakes_waiting_jobs_when_its_allocation_comes_or_goes)
{
	struct store_handlers h = manager_handlers(&m, KIND_RESOURCECLAIMS);
	json_t *pending = pod_claim(false), *allocated = pod_claim(true);
	json_t *reserved = pod_claim(true);
	char *key = NULL;

	/* The claims of a gang's pods are made before they are allocated: nothing moves. */
	h.on_add(h.ctx, "ml/p-0-gpu", pending);
	h.on_delete(h.ctx, "ml/p-0-gpu", pending);
	cr_assert_eq(wq_get_timeout(m.queue, &key, 1000), CADRE_ETIMEDOUT,
		     "an unallocated claim woke the queue");
	h.on_update(h.ctx, "ml/p-0-gpu", pending, allocated);
	assert_kicked();
	/* Reserved for its pod: the same devices. */
	json_object_set_new(json_object_get(reserved, "status"), "reservedFor",
			    json_pack("[{s:s, s:s}]", "resource", "pods", "name", "p-0"));
	h.on_update(h.ctx, "ml/p-0-gpu", allocated, reserved);
	cr_assert_eq(wq_get_timeout(m.queue, &key, 1000), CADRE_ETIMEDOUT);
	h.on_delete(h.ctx, "ml/p-0-gpu", reserved);
	assert_kicked();
	json_decref(pending);
	json_decref(allocated);
	json_decref(reserved);
}

Test(manager, a_device_class_wakes_waiting_jobs_when_it_comes)
{
	struct store_handlers h = manager_handlers(&m, KIND_DEVICECLASSES);
	json_t *cls = json_pack("{s:{s:s}, s:{s:[{s:{s:s}}]}}", "metadata", "name",
				"gpu.nvidia.com", "spec", "selectors", "cel", "expression",
				"device.driver == 'gpu.nvidia.com'");

	h.on_add(h.ctx, "gpu.nvidia.com", cls);
	assert_kicked();
	json_decref(cls);
}

/* A cluster without resource.k8s.io/v1 is not watched for it: the caches stay empty. */
Test(manager, dra_is_watched_only_where_the_api_server_serves_it)
{
	struct httpd *server;
	struct kube_config *cfg;
	struct kube_http *http;

	cr_assert_eq(httpd_new(&server), 0);
	cr_assert_eq(kube_config_new(httpd_url(server), &cfg), 0);
	cr_assert_eq(kube_http_new(cfg, NULL, &http), 0);
	httpd_push(server, &(struct httpd_response){ .status = 404,
		.body = "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}" });
	cr_assert_not(manager_discover_dra(http));
	httpd_push(server, &(struct httpd_response){ .status = 200,
		.body = "{\"kind\":\"APIResourceList\",\"groupVersion\":\"resource.k8s.io/v1\","
			"\"resources\":[{\"name\":\"deviceclasses\"}]}" });
	cr_assert_not(manager_discover_dra(http));
	httpd_push(server, &(struct httpd_response){ .status = 200,
		.body = "{\"kind\":\"APIResourceList\",\"groupVersion\":\"resource.k8s.io/v1\","
			"\"resources\":[{\"name\":\"deviceclasses\"},{\"name\":\"resourceclaims\"},"
			"{\"name\":\"resourceslices\"}]}" });
	cr_assert(manager_discover_dra(http));
	cr_assert_str_eq(httpd_request_at(server, 0)->target, "/apis/resource.k8s.io/v1");
	kube_http_free(http);
	kube_config_free(cfg);
	httpd_free(server);
}
