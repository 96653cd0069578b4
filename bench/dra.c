/*
 * cadre-bench-dra: what counting DRA devices costs a built-in admission
 * decision (dra_capacity.h, docs/benchmarks.md "DRA").
 *
 * Two clusters of N kwok-shaped nodes of 8 H100s, the same but for how the
 * GPUs are published, side by side in one run:
 *
 *   device plugin  each node lists nvidia.com/gpu: 8 in its allocatable and
 *                  carries the product label; other tenants' pods on half
 *                  of the nodes ask for nvidia.com/gpu: 8.
 *   DRA            no node lists a GPU or the label; each has one
 *                  ResourceSlice of NVIDIA's driver with its 8 GPUs (their
 *                  attributes as the driver publishes them), and the
 *                  DeviceClass gpu.nvidia.com selects them; the tenants'
 *                  pods ask for no GPU, and a ResourceClaim each holds
 *                  their node's 8.
 *
 * In both, 100 jobs wait that cannot fit (3/4 of the nodes each, so the
 * decision walks them all), and one gang_admit for a new 8-node job (which
 * fits) is timed: the caches read, the DRA devices counted (DRA cluster),
 * the queue walked, the job placed. Median of several runs, in ms, at
 * 1,000 and 5,000 nodes; the bytes the caches keep of the slices and
 * claims beside those of the nodes.
 *
 *   cadre-bench-dra [--quick]
 *
 * --quick: 1000 nodes only, 5 runs.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/common.h"
#include "controller/manager/manager.h"
#include "kube/store.h"

#define WAITING_JOBS 100
#define GPUS 8
#define CLASS "gpu.nvidia.com"

/* The jobs were created at 2026-11-30T04:00:00Z; a minute later none has starved. */
static int64_t bench_now(void)
{
	return 1796011260;
}

static uint64_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33);
}

/* Node i as kwok registers it; with the device plugin's GPUs and label unless dra. */
static json_t *make_node(long i, bool dra)
{
	char name[32];
	json_t *node;

	snprintf(name, sizeof(name), "gpu-node-%ld", i);
	node = json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, s:{s:[{s:s, s:s, s:s}]},"
		" s:{s:{s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
		"apiVersion", "v1", "kind", "Node", "metadata", "name", name, "uid", name,
		"labels", "kubernetes.io/hostname", name, "type", "kwok",
		"spec", "taints", "key", "nvidia.com/gpu", "value", "present", "effect", "NoSchedule",
		"status", "allocatable", "cpu", "96", "memory", "1024Gi", "pods", "110",
		"conditions", "type", "Ready", "status", "True");
	if (node && !dra) {
		json_object_set_new(json_object_get(json_object_get(node, "status"), "allocatable"),
				    "nvidia.com/gpu", json_string("8"));
		json_object_set_new(json_object_get(json_object_get(node, "metadata"), "labels"),
				    "nvidia.com/gpu.product", json_string("NVIDIA-H100-80GB-HBM3"));
	}
	return node;
}

/* Node i's ResourceSlice as NVIDIA's kubelet plugin publishes it (deviceinfo.go). */
static json_t *make_slice(long i)
{
	char name[64], node[32];
	json_t *devs = json_array();

	snprintf(node, sizeof(node), "gpu-node-%ld", i);
	snprintf(name, sizeof(name), "%s-gpu.nvidia.com-x7k2p", node);
	for (int d = 0; devs && d < GPUS; d++) {
		char dev[16], uuid[64], bus[32];

		snprintf(dev, sizeof(dev), "gpu-%d", d);
		snprintf(uuid, sizeof(uuid), "GPU-%08lx-%04x-4c6d-8e9f-0123456789ab", i, d);
		snprintf(bus, sizeof(bus), "0000:%02x:00.0", 0x18 + d * 0x10);
		json_array_append_new(devs, json_pack(
			"{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s},"
			" s:{s:s}, s:{s:s}, s:{s:s}}, s:{s:{s:s}}}",
			"name", dev, "attributes", "type", "string", "gpu", "uuid", "string", uuid,
			"productName", "string", "NVIDIA H100 80GB HBM3", "brand", "string", "Nvidia",
			"architecture", "string", "Hopper", "cudaComputeCapability", "version",
			"9.0.0", "driverVersion", "version", "570.86.15", "cudaDriverVersion",
			"version", "12.8.0", "resource.kubernetes.io/pciBusID", "string", bus,
			"resource.kubernetes.io/pcieRoot", "string", "pci0000:00",
			"capacity", "memory", "value", "80Gi"));
	}
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}",
			 "apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice",
			 "metadata", "name", name, "uid", name, "spec", "driver", CLASS,
			 "nodeName", node, "pool", "name", node, "generation", 1,
			 "resourceSliceCount", 1, "devices", devs);
}

/* The claim of tenant pod i, holding every GPU of its node. */
static json_t *make_claim(long i)
{
	char name[48], pool[32];
	json_t *results = json_array();

	snprintf(name, sizeof(name), "tenant-%ld-gpus-5x9qd", i);
	snprintf(pool, sizeof(pool), "gpu-node-%ld", i);
	for (int d = 0; results && d < GPUS; d++) {
		char dev[16];

		snprintf(dev, sizeof(dev), "gpu-%d", d);
		json_array_append_new(results, json_pack("{s:s, s:s, s:s, s:s}", "request", "gpus",
							 "driver", CLASS, "pool", pool, "device",
							 dev));
	}
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}},"
			 " s:{s:{s:{s:o}}, s:[{s:s, s:s, s:s}]}}",
			 "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata",
			 "name", name, "namespace", "other", "uid", name, "spec", "devices",
			 "requests", "name", "gpus", "exactly", "deviceClassName", CLASS, "count",
			 GPUS, "status", "allocation", "devices", "results", results,
			 "reservedFor", "resource", "pods", "name", "tenant", "uid", name);
}

/* Tenant pod i on its node, with no GPU request (its GPUs are its claim's). */
static json_t *make_dra_tenant(long i)
{
	json_t *pod = bench_tenant_pod(i);
	json_t *req = json_object_get(json_object_get(json_array_get(json_object_get(
		json_object_get(pod, "spec"), "containers"), 0), "resources"), "requests");

	json_object_del(req, "nvidia.com/gpu");
	json_object_set_new(req, "cpu", json_string("4"));
	return pod;
}

static json_t *make_job(const char *name, long serial, int n)
{
	char uid[48];

	snprintf(uid, sizeof(uid), "6f1c2d3e-4a5b-4c6d-8e9f-%012ld", serial);
	return json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:i}, s:{s:i, s:{s:s}, s:s, s:s},"
		" s:{s:s, s:s, s:s, s:i, s:i}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob", "metadata", "name", name,
		"namespace", "team-a", "uid", uid, "creationTimestamp", "2026-11-30T04:00:00Z",
		"generation", 1, "spec", "numNodes", n, "resources", "accelerators", "H100:8",
		"image", "registry.example/train:1", "run", "torchrun train.py", "status", "phase",
		"Queued", "jobId", "123456789", "taskId", "t", "restarts", 0, "infraRestarts", 0);
}

struct cluster {
	struct manager m;
	struct options opts;
};

static void cluster_fill(struct cluster *c, long nodes, bool dra)
{
	memset(c, 0, sizeof(*c));
	c->opts.accelerator_label = "nvidia.com/gpu.product";
	c->opts.device_attribute = "productName";
	c->opts.device_class_name = dra ? CLASS : NULL;
	c->opts.starvation_seconds = 600;
	c->m.opts = &c->opts;
	c->m.wall_s = bench_now;
	for (int k = 0; k < KIND_COUNT; k++)
		if (k == KIND_TRAININGJOBS || k == KIND_PODS || k == KIND_OTHER_PODS ||
		    k == KIND_NODES || (dra && (k == KIND_RESOURCESLICES || k == KIND_RESOURCECLAIMS ||
						k == KIND_DEVICECLASSES)))
			c->m.stores[k] = bench_cache_new((enum manager_kind)k);
	if (dra)
		bench_put(c->m.stores[KIND_DEVICECLASSES], json_pack(
			"{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}], s:s}}", "apiVersion",
			"resource.k8s.io/v1", "kind", "DeviceClass", "metadata", "name", CLASS, "spec",
			"selectors", "cel", "expression", "device.driver == 'gpu.nvidia.com' && "
			"device.attributes['gpu.nvidia.com'].type == 'gpu'", "extendedResourceName",
			"nvidia.com/gpu"));
	/* The same half of the nodes taken in both clusters. */
	rng_state = 42;
	for (long i = 0; i < nodes; i++) {
		bench_put(c->m.stores[KIND_NODES], make_node(i, dra));
		if (dra)
			bench_put(c->m.stores[KIND_RESOURCESLICES], make_slice(i));
		if (!(rng() % 2))
			continue;
		if (!dra) {
			bench_put(c->m.stores[KIND_OTHER_PODS], bench_tenant_pod(i));
			continue;
		}
		bench_put(c->m.stores[KIND_OTHER_PODS], make_dra_tenant(i));
		bench_put(c->m.stores[KIND_RESOURCECLAIMS], make_claim(i));
	}
	for (long j = 0; j < WAITING_JOBS; j++) {
		char name[32];

		snprintf(name, sizeof(name), "waiting-%ld", j);
		bench_put(c->m.stores[KIND_TRAININGJOBS], make_job(name, j, (int)(nodes * 3 / 4)));
	}
	bench_manager_init(&c->m);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One decision for a new 8-node job: the median of runs, in ms. */
static double decide(struct cluster *c, int runs)
{
	json_t *obj = make_job("new", 999999, 8);
	double ms[16], median;
	struct bench_verdict v;

	if (!obj || runs > 16)
		bench_die("out of memory");
	bench_decide_runs(&c->m, obj, runs, ms, &v);
	json_decref(obj);
	if (!v.admitted)
		bench_die("a new 8-node job was not admitted: the bench measured the wrong thing");
	qsort(ms, (size_t)runs, sizeof(*ms), by_value);
	median = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
	return median;
}

static double mib(size_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

int main(int argc, char **argv)
{
	static const long full[] = { 1000, 5000 }, small[] = { 1000 };
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");
	const long *sizes = quick ? small : full;
	size_t n = quick ? 1 : 2;
	int runs = quick ? 5 : 15;

	if (argc > 1 && !quick) {
		fprintf(stderr, "usage: cadre-bench-dra [--quick]\n");
		return 2;
	}
	printf("# DRA (cadre-bench-dra%s)\n\n", quick ? " --quick" : "");
	printf("One gang_admit for a new 8-node job on N nodes of 8 H100s, half of them taken by\n"
	       "other tenants, while %d jobs wait that cannot fit. Device plugin: the GPUs are\n"
	       "nvidia.com/gpu in each node's allocatable. DRA: one ResourceSlice of %d GPUs per\n"
	       "node (NVIDIA's attributes), the DeviceClass gpu.nvidia.com, and a ResourceClaim\n"
	       "holding the 8 GPUs of each taken node; the job's GPUs come from the class.\n"
	       "Median of %d runs. Cache: what the controller keeps packed of the nodes, and of\n"
	       "the slices and claims (their records aside).\n\n", WAITING_JOBS, GPUS, runs);
	printf("| nodes | device plugin (ms) | DRA (ms) | ratio | node cache (MiB) |"
	       " slice + claim cache (MiB) |\n");
	printf("|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < n; i++) {
		struct cluster plugin, dra;
		double t_plugin, t_dra;

		cluster_fill(&plugin, sizes[i], false);
		cluster_fill(&dra, sizes[i], true);
		t_plugin = decide(&plugin, runs);
		t_dra = decide(&dra, runs);
		printf("| %ld | %.2f | %.2f | %.2fx | %.2f | %.2f |\n", sizes[i], t_plugin, t_dra,
		       t_dra / t_plugin, mib(store_packed_bytes(dra.m.stores[KIND_NODES])),
		       mib(store_packed_bytes(dra.m.stores[KIND_RESOURCESLICES]) +
			   store_packed_bytes(dra.m.stores[KIND_RESOURCECLAIMS])));
		bench_manager_free(&plugin.m);
		bench_manager_free(&dra.m);
	}
	printf("\n");
	return 0;
}
