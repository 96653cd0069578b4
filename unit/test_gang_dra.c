/*
 * Built-in gang admission of jobs whose accelerators come from a DRA
 * DeviceClass (dra_capacity.h): the devices of each node's ResourceSlices
 * that are of the class, less those ResourceClaims hold. Driven as
 * test_gang.c drives admission, with a manager that has only the stores,
 * options and admission records gang_admit reads; the stores are set up
 * with the trims and records manager.c gives them and filled as the
 * reflectors would fill them.
 */
#include <criterion/criterion.h>

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/fielderr.h"
#include "api/pod_trim.h"
#include "controller/admission/gang.h"
#include "controller/manager/cache_record.h"
#include "controller/manager/cache_record_dra.h"
#include "controller/manager/manager.h"
#include "controller/partition/partitions.h"
#include "controller/trainingjob/podview.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/reflector.h"
#include "kube/store.h"
#include "unit/support/gangman.h"

#define GPU_CLASS "gpu.nvidia.com"
#define GPU_SELECTOR \
	"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
#define H100 "NVIDIA H100 80GB HBM3"

static struct manager m;
static struct options opts;

static void setup(void)
{
	gangman_setup(&m, &opts);
	opts.device_attribute = "productName";
	opts.device_class_name = GPU_CLASS;
}

static void teardown(void)
{
	gangman_teardown(&m);
}

TestSuite(gang_dra, .init = setup, .fini = teardown);

static void upsert(enum manager_kind kind, json_t *obj)
{
	gangman_upsert(&m, kind, obj);
}

static void remove_obj(enum manager_kind kind, json_t *obj)
{
	cr_assert_not_null(obj);
	cr_assert_eq(store_remove(m.stores[kind], obj), 0);
	json_decref(obj);
}

/* A node whose GPUs DRA publishes: no nvidia.com/gpu, no accelerator label (unless label). */
static void add_dra_node(const char *name, const char *label)
{
	json_t *node = json_pack("{s:{s:s, s:{}}, s:{s:{s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
				 "metadata", "name", name, "labels", "status", "allocatable",
				 "cpu", "64", "memory", "512Gi", "pods", "110", "conditions",
				 "type", "Ready", "status", "True");

	cr_assert_not_null(node);
	if (label)
		json_object_set_new(json_object_get(json_object_get(node, "metadata"), "labels"),
				    "nvidia.com/gpu.product", json_string(label));
	upsert(KIND_NODES, node);
}

/* A node of NVIDIA's device plugin: 8 nvidia.com/gpu and the product label. */
static void add_plugin_node(const char *name)
{
	upsert(KIND_NODES, json_pack(
		"{s:{s:s, s:{s:s}}, s:{s:{s:s, s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
		"metadata", "name", name, "labels", "nvidia.com/gpu.product",
		"NVIDIA-H100-80GB-HBM3", "status", "allocatable", "cpu", "64", "memory", "512Gi",
		"pods", "110", "nvidia.com/gpu", "8", "conditions", "type", "Ready", "status",
		"True"));
}

/* A device as NVIDIA's kubelet plugin publishes it (cmd/gpu-kubelet-plugin/deviceinfo.go). */
static json_t *device(int minor, const char *type, const char *product)
{
	char name[32], uuid[64];

	snprintf(name, sizeof(name), "%s-%d", type, minor);
	snprintf(uuid, sizeof(uuid), "GPU-%08d-1111-2222-3333-444455556666", minor);
	return json_pack("{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}, "
			 "s:{s:{s:s}}}",
			 "name", name, "attributes", "type", "string", type, "productName",
			 "string", product, "uuid", "string", uuid, "brand", "string", "Nvidia",
			 "architecture", "string", "Hopper", "driverVersion", "version", "570.86.15",
			 "capacity", "memory", "value", "80Gi");
}

/* ResourceSlice name: n devices of type on node, pool pool at generation. */
static json_t *slice_json(const char *name, const char *node, const char *pool, int generation,
			  int n, const char *type, const char *product)
{
	json_t *devs = json_array(), *slice;

	for (int i = 0; i < n; i++)
		json_array_append_new(devs, device(i, type, product));
	slice = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}",
			  "apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice",
			  "metadata", "name", name, "spec", "driver", GPU_CLASS, "nodeName", node,
			  "pool", "name", pool, "generation", generation, "resourceSliceCount", 1,
			  "devices", devs);
	cr_assert_not_null(slice);
	return slice;
}

static void add_slice(const char *node, int n, const char *type)
{
	char name[64];

	snprintf(name, sizeof(name), "%s-gpu.nvidia.com", node);
	upsert(KIND_RESOURCESLICES, slice_json(name, node, node, 1, n, type, H100));
}

static void add_class(const char *name, const char *expression)
{
	upsert(KIND_DEVICECLASSES, json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}",
					     "apiVersion", "resource.k8s.io/v1", "kind",
					     "DeviceClass", "metadata", "name", name, "spec",
					     "selectors", "cel", "expression", expression));
}

/* A ResourceClaim of namespace ns allocated the devices (of pool) listed, NULL-terminated. */
static json_t *claim_json(const char *ns, const char *name, const char *pool,
			  const char *const *devices, bool admin)
{
	json_t *results = json_array();

	for (size_t i = 0; devices[i]; i++) {
		json_t *r = json_pack("{s:s, s:s, s:s, s:s}", "request", "gpu", "driver", GPU_CLASS,
				      "pool", pool, "device", devices[i]);

		if (admin)
			json_object_set_new(r, "adminAccess", json_true());
		json_array_append_new(results, r);
	}
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:o}}}}", "apiVersion",
			 "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name,
			 "namespace", ns, "status", "allocation", "devices", "results", results);
}

/* A waiting TrainingJob asking for accelerators ("H100:8") on each of nodes nodes. */
static void add_job(const char *name, int nodes, const char *accelerators, const char *partition,
		    int seq)
{
	char created[32], uid[32];
	time_t at = time(NULL) - 100 + seq;
	struct tm tm;
	json_t *job;

	gmtime_r(&at, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(uid, sizeof(uid), "uid-%s", name);
	job = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i, s:s}, s:{s:i, s:{s:s}, s:s, s:s}, "
			"s:{s:s, s:s}}",
			"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
			"metadata", "name", name, "namespace", "ns", "uid", uid, "generation", 1,
			"creationTimestamp", created,
			"spec", "numNodes", nodes, "resources", "accelerators", accelerators,
			"image", "img", "run", "true",
			"status", "phase", "Queued", "jobId", "1");
	cr_assert_not_null(job);
	if (partition)
		json_object_set_new(json_object_get(job, "spec"), "partition",
				    json_string(partition));
	upsert(KIND_TRAININGJOBS, job);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * gang_admit for the cached job ns/name, with its partition's defaults
 * applied as the reconciler applies them: its message into msg and, when
 * admitted, the nodes of its ranks, sorted and comma-separated, into nodes.
 */
static enum admit_verdict decide(const char *name, char *msg, size_t size, char *nodes,
				 size_t nodes_size)
{
	struct gangman_decision d;
	const struct tj_admission *out = &d.out;
	enum admit_verdict verdict;

	gangman_decide(&m, name, &d);
	snprintf(msg, size, "%s", out->message ? out->message : "");
	nodes[0] = '\0';
	if (out->verdict == ADMIT_YES) {
		const char *sorted[16];

		cr_assert_eq(out->n_nodes, d.job.spec.num_nodes, "an admission places every rank");
		cr_assert_leq(out->n_nodes, 16);
		memcpy(sorted, out->nodes, (size_t)out->n_nodes * sizeof(*sorted));
		qsort(sorted, (size_t)out->n_nodes, sizeof(*sorted), by_name);
		for (int r = 0; r < out->n_nodes; r++)
			snprintf(nodes + strlen(nodes), nodes_size - strlen(nodes), "%s%s",
				 r ? "," : "", sorted[r]);
	}
	verdict = out->verdict;
	gangman_decided(&d);
	return verdict;
}

Test(gang_dra, a_gang_is_admitted_whole_onto_the_nodes_whose_slices_have_its_devices)
{
	char msg[512], nodes[128];

	add_class(GPU_CLASS, GPU_SELECTOR);
	add_dra_node("dra-0", NULL);
	add_dra_node("dra-1", NULL);
	add_dra_node("dra-2", NULL);
	add_slice("dra-0", 8, "gpu");
	add_slice("dra-2", 8, "gpu");
	add_slice("dra-1", 4, "gpu");

	/* Three ranks of 8: two nodes have 8 devices; no rank is placed alone. */
	add_job("three", 3, "H100:8", NULL, 0);
	cr_assert_eq(decide("three", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	cr_assert(strstr(msg, "needs 3 nodes with 8 devices of DeviceClass gpu.nvidia.com of "
			 "type H100"), "%s", msg);
	remove_obj(KIND_TRAININGJOBS, json_pack("{s:{s:s, s:s}}", "metadata", "name", "three",
						"namespace", "ns"));

	add_job("two", 2, "H100:8", NULL, 1);
	cr_assert_eq(decide("two", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "dra-0,dra-2");
	/* The gang holds both nodes until its pods' claims are allocated: dra-1 is left. */
	add_job("small", 1, "H100:4", NULL, 2);
	cr_assert_eq(decide("small", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s",
		     msg);
	cr_assert_str_eq(nodes, "dra-1");
}

Test(gang_dra, devices_a_claim_holds_are_not_counted_and_the_message_says_what_is_missing)
{
	static const char *const one[] = { "gpu-3", NULL };
	static const char *const all[] = { "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5",
					   "gpu-6", "gpu-7", NULL };
	char msg[512], nodes[128];

	add_class(GPU_CLASS, GPU_SELECTOR);
	add_dra_node("dra-0", NULL);
	add_dra_node("dra-1", NULL);
	add_slice("dra-0", 8, "gpu");
	add_slice("dra-1", 8, "gpu");
	/* Somebody's claim, in a namespace of its own, holds one GPU of dra-1. */
	upsert(KIND_RESOURCECLAIMS, claim_json("tenant", "c1", "dra-1", one, false));
	add_job("a", 2, "H100:8", NULL, 0);
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	cr_assert_str_eq(msg, "needs 2 nodes with 8 devices of DeviceClass gpu.nvidia.com of "
			 "type H100; 1 node has room");
	/* A monitoring tool's adminAccess claim takes no device from anyone. */
	upsert(KIND_RESOURCECLAIMS, claim_json("monitoring", "all", "dra-0", all, true));
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	cr_assert(strstr(msg, "1 node has room"), "%s", msg);
	/* The claim is freed: both nodes have their 8. */
	remove_obj(KIND_RESOURCECLAIMS, claim_json("tenant", "c1", "dra-1", one, false));
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "dra-0,dra-1");
}

Test(gang_dra, a_job_of_a_class_that_does_not_exist_waits_and_says_so)
{
	char msg[512], nodes[128];

	add_dra_node("dra-0", NULL);
	add_slice("dra-0", 8, "gpu");
	add_job("a", 1, "H100:8", NULL, 0);
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	cr_assert_str_eq(msg, "its accelerators come from DeviceClass gpu.nvidia.com, which "
			 "does not exist");
	add_class(GPU_CLASS, GPU_SELECTOR);
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "dra-0");
}

Test(gang_dra, a_cluster_without_the_dra_api_keeps_its_dra_jobs_waiting_with_a_reason)
{
	char msg[512], nodes[128];

	m.dra_absent = true;
	add_plugin_node("gpu-0");
	add_job("a", 1, "H100:8", NULL, 0);
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	cr_assert(strstr(msg, "does not serve resource.k8s.io/v1"), "%s", msg);
}

/*
 * The DRA caches are not waited for at start (a cluster may refuse them):
 * until their reflectors have listed, a DRA job waits and says why, and a
 * job of a device plugin is admitted as ever.
 */
Test(gang_dra, until_the_dra_caches_have_listed_only_dra_jobs_wait)
{
	struct reflector_options ro = { .resource = &kube_resource_resourceslices };
	struct kube_config *cfg;
	struct kube_http *http;
	char msg[512], nodes[128];

	cr_assert_eq(kube_config_new("http://127.0.0.1:9", &cfg), 0);
	cr_assert_eq(kube_http_new(cfg, NULL, &http), 0);
	cr_assert_eq(reflector_new(http, m.stores[KIND_RESOURCESLICES], &ro,
				   &m.reflectors[KIND_RESOURCESLICES]), 0);
	upsert(KIND_PARTITIONS, json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "dra",
					  "spec", "deviceClassName", GPU_CLASS));
	opts.device_class_name = NULL;
	add_class(GPU_CLASS, GPU_SELECTOR);
	add_plugin_node("gpu-0");
	add_job("dra", 1, "H100:8", "dra", 0);
	cr_assert_eq(decide("dra", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	cr_assert_str_eq(msg, "reading the cluster's ResourceSlices, ResourceClaims and "
			 "DeviceClasses (resource.k8s.io/v1) for DeviceClass gpu.nvidia.com");
	add_job("plain", 1, "H100:8", NULL, 1);
	cr_assert_eq(decide("plain", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s",
		     msg);
	reflector_free(m.reflectors[KIND_RESOURCESLICES]);
	m.reflectors[KIND_RESOURCESLICES] = NULL;
	kube_http_free(http);
	kube_config_free(cfg);
}

Test(gang_dra, only_the_newest_generation_of_a_pool_counts)
{
	char msg[512], nodes[128];

	add_class(GPU_CLASS, GPU_SELECTOR);
	add_dra_node("dra-0", NULL);
	/* The driver republishes its pool with 4 GPUs; the old slice is not deleted yet. */
	upsert(KIND_RESOURCESLICES, slice_json("dra-0-old", "dra-0", "dra-0", 1, 8, "gpu", H100));
	upsert(KIND_RESOURCESLICES, slice_json("dra-0-new", "dra-0", "dra-0", 2, 4, "gpu", H100));
	add_job("eight", 1, "H100:8", NULL, 0);
	cr_assert_eq(decide("eight", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	cr_assert(strstr(msg, "could hold only 0 even if empty"), "%s", msg);
	add_job("four", 1, "H100:4", NULL, 1);
	cr_assert_eq(decide("four", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s",
		     msg);
	cr_assert_str_eq(nodes, "dra-0");
}

Test(gang_dra, mig_devices_are_not_of_a_class_that_asks_for_type_gpu)
{
	char msg[512], nodes[128];

	add_class(GPU_CLASS, GPU_SELECTOR);
	add_class("mig.nvidia.com", "device.driver == 'gpu.nvidia.com' && "
		  "device.attributes['gpu.nvidia.com'].type == 'mig'");
	add_dra_node("dra-0", NULL);
	add_slice("dra-0", 8, "mig");
	add_job("a", 1, "H100:1", NULL, 0);
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	cr_assert_str_eq(msg, "no node has devices of DeviceClass gpu.nvidia.com");
	/* The same devices are mig.nvidia.com's. */
	opts.device_class_name = "mig.nvidia.com";
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "dra-0");
}

Test(gang_dra, a_mixed_cluster_places_each_job_where_its_kind_of_accelerator_is)
{
	char msg[512], nodes[128];

	/* DRA through a Partition; jobs of no partition use the device plugin. */
	opts.device_class_name = NULL;
	upsert(KIND_PARTITIONS, json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "dra",
					  "spec", "deviceClassName", GPU_CLASS));
	add_class(GPU_CLASS, GPU_SELECTOR);
	add_plugin_node("gpu-0");
	add_plugin_node("gpu-1");
	add_dra_node("dra-0", NULL);
	add_dra_node("dra-1", NULL);
	add_slice("dra-0", 8, "gpu");
	add_slice("dra-1", 8, "gpu");

	add_job("dra", 2, "H100:8", "dra", 0);
	cr_assert_eq(decide("dra", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "dra-0,dra-1");
	add_job("plain", 2, "H100:8", NULL, 1);
	cr_assert_eq(decide("plain", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s",
		     msg);
	cr_assert_str_eq(nodes, "gpu-0,gpu-1");
	/* Both kinds are taken: neither kind of job spills onto the other's nodes. */
	add_job("dra2", 1, "H100:8", "dra", 2);
	cr_assert_eq(decide("dra2", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	add_job("plain2", 1, "H100:8", NULL, 3);
	cr_assert_eq(decide("plain2", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
}

Test(gang_dra, a_node_that_has_the_accelerator_label_keeps_its_own)
{
	char msg[512], nodes[128];

	add_class(GPU_CLASS, GPU_SELECTOR);
	add_dra_node("dra-0", "NVIDIA-A100-SXM4-80GB");
	add_dra_node("dra-1", NULL);
	add_slice("dra-0", 8, "gpu");
	add_slice("dra-1", 8, "gpu");
	add_job("a", 2, "H100:8", NULL, 0);
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	cr_assert(strstr(msg, "1 without accelerator type H100"), "%s", msg);
	add_job("b", 1, "A100:8", NULL, 1);
	cr_assert_eq(decide("b", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "dra-0");
}

Test(gang_dra, a_device_tainted_noschedule_is_nobodys)
{
	char msg[512], nodes[128];
	json_t *slice = slice_json("dra-0-s", "dra-0", "dra-0", 1, 8, "gpu", H100);

	json_object_set_new(json_array_get(json_object_get(json_object_get(slice, "spec"),
							   "devices"), 5),
			    "taints", json_pack("[{s:s, s:s}]", "key", "gpu.nvidia.com/xid",
						"effect", "NoSchedule"));
	add_class(GPU_CLASS, GPU_SELECTOR);
	add_dra_node("dra-0", NULL);
	upsert(KIND_RESOURCESLICES, slice);
	add_job("a", 1, "H100:8", NULL, 0);
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	add_job("b", 1, "H100:7", NULL, 1);
	cr_assert_eq(decide("b", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
}

/*
 * A tenant's pod that asks for the class's devices by name (KEP-5004) got
 * them through a claim kube-scheduler made: the claim counts them, the
 * pod's request does not count them again.
 */
Test(gang_dra, a_pod_asking_for_a_class_by_name_is_counted_once_through_its_claim)
{
	static const char *const four[] = { "gpu-0", "gpu-1", "gpu-2", "gpu-3", NULL };
	char msg[512], nodes[128];

	add_class(GPU_CLASS, GPU_SELECTOR);
	add_dra_node("dra-0", NULL);
	add_slice("dra-0", 8, "gpu");
	upsert(KIND_RESOURCECLAIMS, claim_json("tenant", "p-gpu-claim", "dra-0", four, false));
	upsert(KIND_OTHER_PODS, json_pack(
		"{s:{s:s, s:s, s:s, s:{}}, s:{s:s, s:[{s:s, s:{s:{s:s}}}]}, s:{s:s}}",
		"metadata", "name", "p", "namespace", "tenant", "uid", "p", "labels",
		"spec", "nodeName", "dra-0", "containers", "name", "main", "resources",
		"requests", "deviceclass.resource.kubernetes.io/gpu.nvidia.com", "4",
		"status", "phase", "Running"));
	add_job("a", 1, "H100:4", NULL, 0);
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	add_job("b", 1, "H100:1", NULL, 1);
	cr_assert_eq(decide("b", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
}

/*
 * A node of many partitions publishes more devices than a cache record
 * holds: its slice is read from the cached object instead, and counted
 * the same.
 */
Test(gang_dra, a_slice_too_large_for_a_record_is_counted_all_the_same)
{
	static const char *const held[] = { "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5",
					    "gpu-6", "gpu-7", "gpu-8", "gpu-9", NULL };
	unsigned char rec[STORE_RECORD_MAX];
	json_t *slice = slice_json("dra-0-big", "dra-0", "dra-0", 1, 64, "gpu", H100);
	char msg[512], nodes[128];

	cr_assert_eq(cache_record_slice(slice, rec, sizeof(rec), NULL), 0, "the record fits");
	add_class(GPU_CLASS, GPU_SELECTOR);
	add_dra_node("dra-0", NULL);
	upsert(KIND_RESOURCESLICES, slice);
	upsert(KIND_RESOURCECLAIMS, claim_json("tenant", "c", "dra-0", held, false));
	add_job("a", 1, "H100:55", NULL, 0);
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	cr_assert(strstr(msg, "needs 1 node with 55 devices of DeviceClass gpu.nvidia.com"), "%s",
		  msg);
	add_job("b", 1, "H100:54", NULL, 1);
	cr_assert_eq(decide("b", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "dra-0");
}

/* A DeviceClass of more equalities than a record holds is read from the cached object. */
Test(gang_dra, a_class_too_large_for_a_record_is_read_all_the_same)
{
	unsigned char rec[STORE_RECORD_MAX];
	json_t *selectors = json_array(), *cls;
	char expr[4096], msg[512], nodes[128];

	/* 8 selectors of 70 equalities, each naming an attribute of its own. */
	for (int sel = 0; sel < 8; sel++) {
		size_t used = (size_t)snprintf(expr, sizeof(expr), "device.driver == 'gpu.nvidia.com'");

		for (int t = 0; t < 70; t++)
			used += (size_t)snprintf(expr + used, sizeof(expr) - used,
						 " && device.attributes['gpu.nvidia.com'].a%d_%d == ''",
						 sel, t);
		cr_assert_lt(used, sizeof(expr));
		json_array_append_new(selectors, json_pack("{s:{s:s}}", "cel", "expression", expr));
	}
	cls = json_pack("{s:{s:s}, s:{s:o}}", "metadata", "name", GPU_CLASS, "spec", "selectors",
			selectors);
	cr_assert_eq(cache_record_class(cls, rec, sizeof(rec), NULL), 0, "the record fits");
	upsert(KIND_DEVICECLASSES, cls);
	add_dra_node("dra-0", NULL);
	add_slice("dra-0", 8, "gpu");
	add_job("a", 1, "H100:8", NULL, 0);
	/* Read: its devices lack those attributes, so none is of it. */
	cr_assert_eq(decide("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_WAIT);
	cr_assert_str_eq(msg, "no node has devices of DeviceClass gpu.nvidia.com");
}
