/*
 * The records admission walks instead of cached objects
 * (controller/manager/cache_record.h): each holds what gang.c reads of
 * the object it summarizes, and reads back the same.
 */
#include <criterion/criterion.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "api/labels.h"
#include "controller/manager/cache_record.h"
#include "controller/manager/cache_record_dra.h"
#include "api/pod_trim.h"
#include "kube/store.h"

static unsigned char rec[STORE_RECORD_MAX];

Test(cache_record, an_own_pod_keeps_node_phase_attempt_and_main_requests)
{
	json_t *pod = json_pack(
		"{s:{s:s, s:s, s:{s:s, s:s}}, s:{s:s, s:[{s:s, s:{s:{s:s, s:s, s:s, s:s, s:s}}},"
		" {s:s, s:{s:{s:s}}}]}, s:{s:s}}",
		"metadata", "name", "j-0", "namespace", "ml", "labels", LABEL_JOB_NAME, "j",
		LABEL_RESTART_ATTEMPT, "3", "spec", "nodeName", "gpu-1", "containers", "name",
		"main", "resources", "requests", "cpu", "1500m", "memory", "1Gi", "nvidia.com/gpu",
		"8", "pods", "1", "bad", "x", "name", "side", "resources", "requests", "cpu", "9",
		"status", "phase", "Succeeded");
	json_t *trimmed = pod_trim(pod, NULL);
	struct cache_pod p;
	int len = cache_record_pod(trimmed, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_pod_read(rec, (size_t)len, &p), 0);
	cr_assert_str_eq(p.node, "gpu-1");
	cr_assert_eq(p.cpu_milli, 1500);
	cr_assert_eq(p.memory_milli, 1073741824000LL);
	cr_assert_eq(p.n_ext, 1);
	cr_assert_str_eq(p.ext_name[0], "nvidia.com/gpu");
	cr_assert_eq(p.ext_milli[0], 8000);
	cr_assert_eq(p.phase, POD_SUCCEEDED);
	cr_assert_eq(p.attempt, 3);
	/* Something else is not a pod record. */
	cr_assert_eq(cache_pod_read(rec, 3, &p), CADRE_EINVAL);
	json_decref(trimmed);
	json_decref(pod);
}

/* One of cadre's pods pinned to gpu-2 and not bound, or being deleted. */
static json_t *pinned_pod(bool deleting)
{
	json_t *pod = json_pack(
		"{s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}},"
		" s:[{s:s, s:{s:{s:s}}}]}, s:{s:s}}",
		"metadata", "name", "j-1", "namespace", "ml", "labels", LABEL_JOB_NAME, "j",
		LABEL_RESTART_ATTEMPT, "0", LABEL_NODE_RANK, "1", "spec", "affinity",
		"nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
		"nodeSelectorTerms", "matchFields", "key", "metadata.name", "operator", "In",
		"values", "gpu-2", "containers", "name", "main", "resources", "requests",
		"nvidia.com/gpu", "8", "status", "phase", "Pending");

	if (deleting)
		json_object_set_new(json_object_get(pod, "metadata"), "deletionTimestamp",
				    json_string("2026-12-01T00:00:00Z"));
	return pod;
}

Test(cache_record, an_own_pod_not_bound_yet_names_the_node_it_is_pinned_to_until_it_goes)
{
	for (int deleting = 0; deleting < 2; deleting++) {
		json_t *pod = pinned_pod(deleting), *trimmed = pod_trim(pod, NULL);
		struct cache_pod p;
		int len = cache_record_pod(trimmed, rec, sizeof(rec), NULL);

		cr_assert_gt(len, 0);
		cr_assert_eq(cache_pod_read(rec, (size_t)len, &p), 0);
		cr_assert_null(p.node, "not bound");
		if (deleting)
			cr_assert_null(p.pinned, "a pod being deleted is never placed");
		else
			cr_assert_str_eq(p.pinned, "gpu-2");
		cr_assert_eq(p.rank, 1);
		json_decref(trimmed);
		json_decref(pod);
	}
}

Test(cache_record, a_summary_keeps_its_effective_requests_and_an_unbound_pod_no_node)
{
	json_t *pod = json_pack(
		"{s:{s:s, s:s}, s:{s:[{s:s, s:{s:{s:s}}}], s:[{s:s, s:{s:{s:s}}}]},"
		" s:{s:s}}",
		"metadata", "name", "web", "namespace", "ml", "spec", "containers", "name", "a",
		"resources", "requests", "cpu", "1", "initContainers", "name", "init",
		"resources", "requests", "cpu", "4", "status", "phase", "Pending");
	json_t *summary = pod_trim_summary(pod, NULL);
	struct cache_pod p;
	int len = cache_record_pod(summary, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_pod_read(rec, (size_t)len, &p), 0);
	cr_assert_null(p.node);
	cr_assert_eq(p.cpu_milli, 4000);
	cr_assert_eq(p.n_ext, 0);
	cr_assert_eq(p.attempt, -1);
	json_decref(summary);
	json_decref(pod);
}

static json_t *job(const char *phase, bool suspend, const char *queue)
{
	json_t *j = json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:{s:i, s:{s:s}, s:s, s:s, s:b},"
		" s:{s:s, s:i, s:i, s:[{s:s, s:s, s:s}]}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob", "metadata", "name", "j",
		"namespace", "ml", "uid", "u-1", "creationTimestamp", "2026-12-01T00:00:00Z",
		"spec", "numNodes", 4, "resources", "accelerators", "H100:8", "image", "img",
		"run", "true", "suspend", suspend, "status", "phase", phase, "restarts", 1,
		"infraRestarts", 2, "conditions", "type", "Admitted", "status", "True",
		"lastTransitionTime", "2026-12-01T00:00:00Z");

	if (queue)
		json_object_set_new(json_object_get(j, "spec"), "queue", json_string(queue));
	return j;
}

static struct cache_job job_record(json_t *j)
{
	struct cache_job out;
	int len = cache_record_job(j, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_job_read(rec, (size_t)len, &out), 0);
	json_decref(j);
	return out;
}

Test(cache_record, a_job_record_says_what_the_job_is_to_gang_admission)
{
	struct cache_job r = job_record(job("Running", false, NULL));

	cr_assert_eq(r.candidacy, CANDIDACY_HOLDS);
	cr_assert_eq(r.attempt, 3);
	cr_assert_eq(r.num_nodes, 4);
	cr_assert_str_eq(r.uid, "u-1");
	cr_assert_str_eq(r.phase, "Running");
	cr_assert_eq(job_record(job("Queued", false, NULL)).candidacy, CANDIDACY_HOLDS);
	cr_assert_eq(job_record(job("Succeeded", false, NULL)).candidacy, CANDIDACY_NONE);
	cr_assert_eq(job_record(job("Pending", false, NULL)).candidacy, CANDIDACY_NONE);
	cr_assert_eq(job_record(job("Restarting", false, NULL)).candidacy, CANDIDACY_NONE);
	cr_assert_eq(job_record(job("Queued", true, NULL)).candidacy, CANDIDACY_NONE);
	cr_assert_eq(job_record(job("Queued", false, "team-a")).candidacy, CANDIDACY_NONE);
	/* One that does not parse cannot wait either, and still has a record. */
	r = job_record(json_pack("{s:{s:s}, s:s}", "metadata", "name", "x", "spec", "bad"));
	cr_assert_eq(r.candidacy, CANDIDACY_NONE);
	cr_assert_str_eq(r.uid, "");
}

Test(cache_record, a_node_record_reads_back_as_admission_reads_the_node)
{
	json_t *node = json_pack(
		"{s:{s:s, s:{s:s, s:s, s:i}}, s:{s:b, s:[{s:s, s:s, s:s}, {s:s, s:s}]},"
		" s:{s:{s:s, s:s, s:s, s:s, s:s}, s:[{s:s, s:s}, {s:s, s:s}]}}",
		"metadata", "name", "gpu-1", "labels", "nvidia.com/gpu.product", "H100", "zone",
		"a", "weird", 7, "spec", "unschedulable", 1, "taints", "key", "dedicated", "value",
		"ml", "effect", "NoSchedule", "key", "spot", "effect", "PreferNoSchedule",
		"status", "allocatable", "cpu", "64", "memory", "512Gi", "pods", "110",
		"nvidia.com/gpu", "8", "junk", "?", "conditions", "type", "MemoryPressure",
		"status", "False", "type", "Ready", "status", "True");
	struct cache_node_counts n;
	struct cap_resource ext[4];
	struct cap_label labels[4];
	struct cap_taint taints[4];
	struct cap_node cn;
	int len = cache_record_node(node, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_node_counts(rec, (size_t)len, &n), 0);
	cr_assert_eq(n.n_ext, 1);
	cr_assert_eq(n.n_labels, 2);
	cr_assert_eq(n.n_taints, 2);
	cr_assert_eq(cache_node_read(rec, (size_t)len, &cn, ext, labels, taints), 0);
	cr_assert_str_eq(cn.name, "gpu-1");
	cr_assert(cn.ready);
	cr_assert(cn.unschedulable);
	cr_assert_eq(cn.cpu_milli, 64000);
	cr_assert_eq(cn.pods, 110);
	cr_assert_str_eq(cn.extended[0].name, "nvidia.com/gpu");
	cr_assert_eq(cn.extended[0].milli, 8000);
	cr_assert_str_eq(cn.labels[0].key, "nvidia.com/gpu.product");
	cr_assert_str_eq(cn.labels[1].value, "a");
	cr_assert_str_eq(cn.taints[0].key, "dedicated");
	cr_assert_str_eq(cn.taints[0].value, "ml");
	cr_assert_eq(cn.taints[0].effect, CAP_NO_SCHEDULE);
	cr_assert_null(cn.taints[1].value);
	cr_assert_eq(cn.taints[1].effect, CAP_PREFER_NO_SCHEDULE);
	cr_assert_str_eq(cache_node_label(rec, (size_t)len, "zone"), "a");
	cr_assert_null(cache_node_label(rec, (size_t)len, "weird"));
	cr_assert_eq(cache_node_ready(rec, (size_t)len), 1);
	cr_assert_eq(cache_node_ready(rec, 3), CADRE_EINVAL);
	/* Too large for the room given: no record, the node is decoded instead. */
	cr_assert_eq(cache_record_node(node, rec, 40, NULL), 0);
	json_decref(node);
}

/* The reconciler asks a node record whether the node is Ready, for every pod on every pass. */
Test(cache_record, a_node_record_says_whether_the_node_is_ready)
{
	json_t *node = json_pack("{s:{s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", "gpu-2",
				 "status", "conditions", "type", "Ready", "status", "Unknown");
	int len = cache_record_node(node, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_node_ready(rec, (size_t)len), 0);
	json_decref(node);
	node = json_pack("{s:{s:s}}", "metadata", "name", "gpu-3");
	len = cache_record_node(node, rec, sizeof(rec), NULL);
	cr_assert_gt(len, 0);
	cr_assert_eq(cache_node_ready(rec, (size_t)len), 0, "a node without conditions is not Ready");
	json_decref(node);
}

/* A DaemonSet's or static pod is a service of its node; an exclusive job's pod says so. */
Test(cache_record, a_pod_record_tells_node_services_and_exclusive_jobs_apart)
{
	json_t *ds = json_pack("{s:{s:s, s:s, s:[{s:s, s:s}]}, s:{s:s}, s:{s:s}}",
			       "metadata", "name", "agent", "namespace", "kube-system",
			       "ownerReferences", "kind", "DaemonSet", "name", "agent",
			       "spec", "nodeName", "n1", "status", "phase", "Running");
	json_t *mirror = json_pack("{s:{s:s, s:s, s:{s:s}}, s:{s:s}, s:{s:s}}",
				   "metadata", "name", "etcd-n1", "namespace", "kube-system",
				   "annotations", "kubernetes.io/config.mirror", "x",
				   "spec", "nodeName", "n1", "status", "phase", "Running");
	json_t *job = json_pack("{s:{s:s, s:s, s:[{s:s, s:s}]}, s:{s:s}, s:{s:s}}",
				"metadata", "name", "w", "namespace", "ml", "ownerReferences",
				"kind", "ReplicaSet", "name", "rs", "spec", "nodeName", "n1",
				"status", "phase", "Running");
	json_t *own = pinned_pod(false), *t;
	json_t *in[] = { ds, mirror, job };
	struct cache_pod p;
	int len;

	for (size_t i = 0; i < 3; i++) {
		t = pod_trim_summary(in[i], NULL);
		len = cache_record_pod(t, rec, sizeof(rec), NULL);
		cr_assert_gt(len, 0);
		cr_assert_eq(cache_pod_read(rec, (size_t)len, &p), 0);
		cr_assert_eq(p.node_service, i < 2, "pod %zu", i);
		cr_assert_not(p.exclusive);
		json_decref(t);
		json_decref(in[i]);
	}
	json_object_set_new(json_object_get(json_object_get(own, "metadata"), "labels"),
			    LABEL_EXCLUSIVE, json_string("true"));
	t = pod_trim(own, NULL);
	len = cache_record_pod(t, rec, sizeof(rec), NULL);
	cr_assert_eq(cache_pod_read(rec, (size_t)len, &p), 0);
	cr_assert(p.exclusive);
	cr_assert_not(p.node_service);
	json_decref(t);
	json_decref(own);
}

/* --- Dynamic Resource Allocation (cache_record_dra.h) --- */

#define H100 "NVIDIA H100 80GB HBM3"

/* A slice of NVIDIA's driver with n GPUs on node gpu-7 (cmd/gpu-kubelet-plugin/deviceinfo.go). */
static json_t *nvidia_slice(int n)
{
	json_t *devs = json_array();

	for (int i = 0; i < n; i++) {
		char name[16], uuid[64], bus[32];

		snprintf(name, sizeof(name), "gpu-%d", i);
		snprintf(uuid, sizeof(uuid), "GPU-%08d-aaaa-bbbb-cccc-ddddeeeeffff", i);
		snprintf(bus, sizeof(bus), "0000:%02x:00.0", 0x18 + i);
		json_array_append_new(devs, json_pack(
			"{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}},"
			" s:{s:{s:s}}}",
			"name", name, "attributes", "type", "string", "gpu", "productName",
			"string", H100, "uuid", "string", uuid, "brand", "string", "Nvidia",
			"architecture", "string", "Hopper", "resource.kubernetes.io/pciBusID",
			"string", bus, "driverVersion", "version", "570.86.15", "capacity",
			"memory", "value", "80Gi"));
	}
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}",
			 "apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata",
			 "name", "gpu-7-gpu.nvidia.com-x2x4k", "resourceVersion", "881",
			 "annotations", "note", "kept by nobody", "spec", "driver", "gpu.nvidia.com",
			 "nodeName", "gpu-7", "pool", "name", "gpu-7", "generation", 3,
			 "resourceSliceCount", 1, "devices", devs);
}

/* How many times text is in the len bytes of rec. */
static int occurrences(const unsigned char *r, size_t len, const char *text)
{
	size_t n = strlen(text);
	int count = 0;

	for (size_t i = 0; i + n <= len; i++)
		count += !memcmp(r + i, text, n);
	return count;
}

Test(cache_record, a_slice_record_keeps_its_pool_node_and_the_string_attributes_of_each_device)
{
	json_t *slice = nvidia_slice(8);
	struct cache_slice s;
	struct cache_device d;
	int len = cache_record_slice(slice, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_slice_read(rec, (size_t)len, &s), 0);
	cr_assert_str_eq(s.driver, "gpu.nvidia.com");
	cr_assert_str_eq(s.pool, "gpu-7");
	cr_assert_eq(s.generation, 3);
	cr_assert_str_eq(s.node, "gpu-7");
	cr_assert_eq(s.n_devices, 8);
	cache_slice_device(&s, 5, &d);
	cr_assert_str_eq(d.name, "gpu-5");
	cr_assert_str_eq(d.node, "gpu-7");
	cr_assert_not(d.tainted);
	/* The type attribute, named as --device-attribute takes it, in either form. */
	cr_assert_str_eq(cache_device_attribute(&s, &d, "productName"), H100);
	cr_assert_str_eq(cache_device_attribute(&s, &d, "gpu.nvidia.com/productName"), H100);
	cr_assert_str_eq(cache_device_attribute(&s, &d, "resource.kubernetes.io/pciBusID"),
			 "0000:1d:00.0");
	cr_assert_null(cache_device_attribute(&s, &d, "pciBusID"), "another domain's");
	cr_assert_null(cache_device_attribute(&s, &d, "driverVersion"), "a version, not a string");
	cr_assert_null(cache_device_attribute(&s, &d, "example.com/productName"));
	/* What the GPUs share is kept once: a node's 8 take about 1 KB, some 30 would fit. */
	cr_assert_eq(occurrences(rec, (size_t)len, H100), 1);
	cr_assert_eq(occurrences(rec, (size_t)len, "productName"), 1);
	cr_assert_lt(len, 1200);
	cr_assert_eq(cache_slice_read(rec, (size_t)len - 1, &s), CADRE_EINVAL);
	cr_assert_eq(cache_slice_read(rec, 8, &s), CADRE_EINVAL);
	json_decref(slice);
}

Test(cache_record, a_slice_is_recorded_alike_from_its_trimmed_form_and_whole)
{
	json_t *slice = nvidia_slice(4), *trimmed = cache_trim_slice(slice, NULL);
	unsigned char whole[STORE_RECORD_MAX];
	int a = cache_record_slice(slice, whole, sizeof(whole), NULL);
	int b = cache_record_slice(trimmed, rec, sizeof(rec), NULL);

	cr_assert_gt(a, 0);
	cr_assert_eq(a, b);
	cr_assert_eq(memcmp(whole, rec, (size_t)a), 0);
	cr_assert_null(json_object_get(json_object_get(trimmed, "metadata"), "annotations"));
	cr_assert_null(json_object_get(json_array_get(json_object_get(json_object_get(
		trimmed, "spec"), "devices"), 0), "capacity"));
	/* Attributes as plain strings, the versions left out: the cache holds a slice a node. */
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(
		json_object_get(json_object_get(trimmed, "spec"), "devices"), 0), "attributes"),
		"productName")), H100);
	cr_assert_null(json_object_get(json_object_get(json_array_get(json_object_get(
		json_object_get(trimmed, "spec"), "devices"), 0), "attributes"), "driverVersion"));
	json_decref(trimmed);
	json_decref(slice);
}

Test(cache_record, a_slice_record_says_which_devices_are_tainted_and_where_each_one_is)
{
	json_t *slice = nvidia_slice(3), *devs;
	struct cache_slice s;
	struct cache_device d;
	int len;

	/* perDeviceNodeSelection: each device names its node, the slice none. */
	json_object_del(json_object_get(slice, "spec"), "nodeName");
	json_object_set_new(json_object_get(slice, "spec"), "perDeviceNodeSelection", json_true());
	devs = json_object_get(json_object_get(slice, "spec"), "devices");
	json_object_set_new(json_array_get(devs, 0), "nodeName", json_string("n0"));
	json_object_set_new(json_array_get(devs, 1), "nodeName", json_string("n1"));
	json_object_set_new(json_array_get(devs, 1), "taints", json_pack(
		"[{s:s, s:s}, {s:s, s:s}]", "key", "a", "effect", "None", "key", "xid", "effect",
		"NoExecute"));
	json_object_set_new(json_array_get(devs, 2), "taints", json_pack(
		"[{s:s, s:s}]", "key", "a", "effect", "None"));
	len = cache_record_slice(slice, rec, sizeof(rec), NULL);
	cr_assert_gt(len, 0);
	cr_assert_eq(cache_slice_read(rec, (size_t)len, &s), 0);
	cr_assert_null(s.node);
	cache_slice_device(&s, 0, &d);
	cr_assert_str_eq(d.node, "n0");
	cr_assert_not(d.tainted);
	cache_slice_device(&s, 1, &d);
	cr_assert_str_eq(d.node, "n1");
	cr_assert(d.tainted);
	cache_slice_device(&s, 2, &d);
	cr_assert_null(d.node);
	cr_assert_not(d.tainted, "an effect that keeps no pod off");
	json_decref(slice);
}

/* A partitionable GPU publishes dozens of devices: no record, the reader makes a larger one. */
Test(cache_record, a_slice_too_large_for_a_record_gets_one_in_a_larger_buffer)
{
	json_t *slice = nvidia_slice(64);
	size_t size = 64 * 1024;
	unsigned char *big = malloc(size);
	struct cache_slice s;
	struct cache_device d;
	int len;

	cr_assert_not_null(big);
	cr_assert_eq(cache_record_slice(slice, rec, 512, NULL), 0);
	len = cache_record_slice(slice, big, size, NULL);
	cr_assert_gt(len, 0);
	cr_assert_eq(cache_slice_read(big, (size_t)len, &s), 0);
	cr_assert_eq(s.n_devices, 64);
	cache_slice_device(&s, 63, &d);
	cr_assert_str_eq(d.name, "gpu-63");
	cr_assert_str_eq(cache_device_attribute(&s, &d, "uuid"),
			 "GPU-00000063-aaaa-bbbb-cccc-ddddeeeeffff");
	free(big);
	json_decref(slice);
}

static json_t *claim(bool allocated)
{
	json_t *c = json_pack("{s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s}}]}}}", "metadata", "name",
			      "p-0-accelerators-7xk2q", "namespace", "ml", "spec", "devices",
			      "requests", "name", "accelerators", "exactly", "deviceClassName",
			      "gpu.nvidia.com");

	if (allocated)
		json_object_set_new(c, "status", json_pack(
			"{s:{s:{s:[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:b},"
			" {s:s, s:s, s:s, s:s}]}}, s:[{s:s, s:s, s:s}]}",
			"allocation", "devices", "results",
			"request", "accelerators", "driver", "gpu.nvidia.com", "pool", "gpu-7",
			"device", "gpu-0",
			"request", "watch", "driver", "gpu.nvidia.com", "pool", "gpu-7", "device",
			"gpu-1", "adminAccess", 1,
			"request", "accelerators", "driver", "gpu.nvidia.com", "pool", "gpu-7",
			"device", "gpu-2",
			"reservedFor", "resource", "pods", "name", "p-0", "uid", "u"));
	return c;
}

Test(cache_record, a_claim_record_holds_the_devices_its_allocation_holds_and_nothing_before)
{
	json_t *c = claim(true), *trimmed = cache_trim_claim(c, NULL);
	const char *driver, *pool, *device;
	struct cache_claim cl;
	int len = cache_record_claim(c, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_claim_read(rec, (size_t)len, &cl), 0);
	cr_assert_eq(cl.n_results, 2, "an adminAccess result holds no device");
	cache_claim_result(&cl, 1, &driver, &pool, &device);
	cr_assert_str_eq(driver, "gpu.nvidia.com");
	cr_assert_str_eq(pool, "gpu-7");
	cr_assert_str_eq(device, "gpu-2");
	cr_assert_eq(cache_record_claim(trimmed, rec, sizeof(rec), NULL), len);
	cr_assert_null(json_object_get(trimmed, "spec"));
	json_decref(trimmed);
	json_decref(c);

	c = claim(false);
	len = cache_record_claim(c, rec, sizeof(rec), NULL);
	cr_assert_gt(len, 0);
	cr_assert_eq(cache_claim_read(rec, (size_t)len, &cl), 0);
	cr_assert_eq(cl.n_results, 0);
	json_decref(c);
}

static json_t *device_class(const char *expression)
{
	return json_pack("{s:{s:s}, s:{s:[{s:{s:s}}], s:s}}", "metadata", "name", "gpu.nvidia.com",
			 "spec", "selectors", "cel", "expression", expression,
			 "extendedResourceName", "nvidia.com/gpu");
}

/* A device of the test slice with its type attribute set to type. */
static bool selects(const unsigned char *class_rec, size_t class_len, const char *driver,
		    const char *type)
{
	json_t *slice = nvidia_slice(1);
	unsigned char srec[STORE_RECORD_MAX];
	struct cache_class c;
	struct cache_slice s;
	struct cache_device d;
	bool yes;
	int len;

	json_object_set_new(json_object_get(slice, "spec"), "driver", json_string(driver));
	json_object_set_new(json_object_get(json_object_get(json_array_get(json_object_get(
		json_object_get(slice, "spec"), "devices"), 0), "attributes"), "type"),
		"string", json_string(type));
	len = cache_record_slice(slice, srec, sizeof(srec), NULL);
	cr_assert_gt(len, 0);
	cr_assert_eq(cache_slice_read(srec, (size_t)len, &s), 0);
	cache_slice_device(&s, 0, &d);
	cr_assert_eq(cache_class_read(class_rec, class_len, &c), 0);
	yes = cache_class_selects(&c, &s, NULL, &d);
	json_decref(slice);
	return yes;
}

Test(cache_record, a_class_record_keeps_the_equalities_of_its_selectors)
{
	json_t *cls = device_class("device.driver == 'gpu.nvidia.com' && "
				   "device.attributes['gpu.nvidia.com'].type == 'gpu'");
	const char *attribute, *value;
	struct cache_class c;
	int len = cache_record_class(cls, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_class_read(rec, (size_t)len, &c), 0);
	cr_assert_eq(c.n_terms, 2);
	cache_class_term(&c, 0, &attribute, &value);
	cr_assert_null(attribute);
	cr_assert_str_eq(value, "gpu.nvidia.com");
	cache_class_term(&c, 1, &attribute, &value);
	cr_assert_str_eq(attribute, "gpu.nvidia.com/type");
	cr_assert_str_eq(value, "gpu");
	cr_assert(selects(rec, (size_t)len, "gpu.nvidia.com", "gpu"));
	cr_assert_not(selects(rec, (size_t)len, "gpu.nvidia.com", "mig"));
	cr_assert_not(selects(rec, (size_t)len, "gpu.example.com", "gpu"));
	json_decref(cls);

	/* Nothing cadre can read: every device is taken to be of it, and kube-scheduler decides. */
	cls = device_class("device.attributes['gpu.nvidia.com'].type == 'gpu' || true");
	len = cache_record_class(cls, rec, sizeof(rec), NULL);
	cr_assert_gt(len, 0);
	cr_assert_eq(cache_class_read(rec, (size_t)len, &c), 0);
	cr_assert_eq(c.n_terms, 0);
	cr_assert(selects(rec, (size_t)len, "gpu.example.com", "anything"));
	json_decref(cls);
}
