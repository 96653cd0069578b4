/*
 * cadre-bench-cache: what the controller's caches cost per object.
 *
 * docs/design.md 8 asks for <= 128 MiB resident with 10k TrainingJobs and 80k
 * pods cached, where Go operators spend about 33 KiB per cached pod. A
 * cluster that size does not fit on a test machine, so this measures the
 * caches themselves: it fills stores with objects shaped like what the API
 * server returns (managedFields, status, conditions), through the same
 * trim functions and indexes the controller uses, and reports the heap
 * each object keeps (glibc's mallinfo2, before and after), then what the
 * docs/design.md 8 cluster would cost.
 *
 *   cadre-bench-cache POD.json JOB.json [PODS [JOBS]]
 *
 * POD.json is a pod as cadre builds it (unit/testdata/golden/llama-pretrain.pod-1.json),
 * JOB.json a TrainingJob (unit/testdata/golden/inputs/llama-pretrain.json). PODS
 * defaults to 80000 and JOBS to 10000.
 */
#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/labels.h"
#include "controller/manager/pod_trim.h"
#include "kube/store.h"

#define GO_BYTES_PER_POD (33 * 1024)
#define BUDGET_BYTES (128u << 20)

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static json_t *load(const char *path)
{
	json_error_t error;
	json_t *obj = json_load_file(path, 0, &error);

	if (!obj) {
		fprintf(stderr, "cadre-bench-cache: %s:%d: %s\n", path, error.line, error.text);
		exit(2);
	}
	return obj;
}

/* What the API server adds to every object: server metadata and managedFields. */
static void serve(json_t *obj, const char *name, long n)
{
	json_t *meta = json_object_get(obj, "metadata");
	char uid[64], rv[32];

	snprintf(uid, sizeof(uid), "6f1c2d3e-4a5b-4c6d-8e9f-%012ld", n);
	snprintf(rv, sizeof(rv), "%ld", 100000 + n);
	json_object_set_new(meta, "name", json_string(name));
	json_object_set_new(meta, "namespace", json_string("team-a"));
	json_object_set_new(meta, "uid", json_string(uid));
	json_object_set_new(meta, "resourceVersion", json_string(rv));
	json_object_set_new(meta, "creationTimestamp", json_string("2026-11-30T04:00:00Z"));
	json_object_set_new(meta, "managedFields", json_pack(
		"[{s:s, s:s, s:s, s:s, s:s, s:{s:{}, s:{}, s:{}}},"
		" {s:s, s:s, s:s, s:s, s:s, s:s, s:{s:{}}}]",
		"manager", "cadre-controller", "operation", "Update", "apiVersion", "v1",
		"time", "2026-11-30T04:00:00Z", "fieldsType", "FieldsV1", "fieldsV1",
		"f:metadata", "f:spec", "f:status",
		"manager", "kubelet", "operation", "Update", "apiVersion", "v1",
		"time", "2026-11-30T04:00:05Z", "fieldsType", "FieldsV1", "subresource", "status",
		"fieldsV1", "f:status"));
}

/* A Running pod's status as a kubelet reports it. */
static json_t *running_status(long n)
{
	char ip[32];

	snprintf(ip, sizeof(ip), "10.%ld.%ld.%ld", (n >> 16) & 255, (n >> 8) & 255, n & 255);
	return json_pack(
		"{s:s, s:s, s:s, s:s, s:s, s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s},"
		" {s:s, s:s, s:s}], s:[{s:s, s:b, s:i, s:s, s:s, s:s, s:b, s:{s:{s:s}}}]}",
		"phase", "Running", "podIP", ip, "hostIP", "192.168.0.10", "qosClass", "Guaranteed",
		"startTime", "2026-11-30T04:00:02Z", "conditions",
		"type", "PodScheduled", "status", "True", "lastTransitionTime", "2026-11-30T04:00:01Z",
		"type", "Initialized", "status", "True", "lastTransitionTime", "2026-11-30T04:00:02Z",
		"type", "ContainersReady", "status", "True", "lastTransitionTime", "2026-11-30T04:00:05Z",
		"type", "Ready", "status", "True", "lastTransitionTime", "2026-11-30T04:00:05Z",
		"containerStatuses", "name", "main", "ready", 1, "restartCount", 0,
		"image", "registry.example/team-a/train:2026.11",
		"imageID", "registry.example/team-a/train@sha256:0f3c9a1be7d2c4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b",
		"containerID", "containerd://9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
		"started", 1, "state", "running", "startedAt", "2026-11-30T04:00:04Z");
}

/* Someone else's pod: a Deployment's replica with a sidecar. */
static json_t *foreign_pod(void)
{
	return json_pack(
		"{s:s, s:s, s:{s:{s:s, s:s}, s:[{s:s, s:s, s:s, s:s, s:b, s:b}]},"
		" s:{s:s, s:s, s:s, s:i, s:[{s:s, s:s, s:[{s:s, s:i}],"
		" s:{s:{s:s, s:s}, s:{s:s}}, s:[{s:s, s:s}]},"
		" {s:s, s:s, s:{s:{s:s, s:s}}}]}}",
		"apiVersion", "v1", "kind", "Pod", "metadata", "labels",
		"app", "web-frontend", "pod-template-hash", "7d9f8c6b5", "ownerReferences",
		"apiVersion", "apps/v1", "kind", "ReplicaSet", "name", "web-frontend-7d9f8c6b5",
		"uid", "1b2c3d4e-5f60-4a1b-8c2d-3e4f5a6b7c8d", "controller", 1,
		"blockOwnerDeletion", 1, "spec", "nodeName", "cpu-node-17", "restartPolicy", "Always",
		"serviceAccountName", "default", "terminationGracePeriodSeconds", 30, "containers",
		"name", "web", "image", "registry.example/web/frontend:4.2.1", "ports",
		"name", "http", "containerPort", 8080, "resources", "requests", "cpu", "500m",
		"memory", "512Mi", "limits", "memory", "512Mi", "env", "name", "LOG_LEVEL",
		"value", "info", "name", "proxy", "image", "registry.example/mesh/proxy:1.22",
		"resources", "requests", "cpu", "100m", "memory", "128Mi");
}

/* A TrainingJob as the controller has written its status: Running, one entry per node. */
static void job_status(json_t *job, long n)
{
	json_t *nodes = json_array();
	long num = json_integer_value(json_object_get(json_object_get(job, "spec"), "numNodes"));
	char pod[64], jobid[32];

	for (long r = 0; r < num; r++) {
		snprintf(pod, sizeof(pod), "job-%ld-%ld", n, r);
		json_array_append_new(nodes, json_pack("{s:i, s:s, s:s, s:s}", "rank", (json_int_t)r,
						       "pod", pod, "node", "gpu-node-17",
						       "phase", "Running"));
	}
	snprintf(jobid, sizeof(jobid), "%ld", 900000000 + n);
	json_object_set_new(job, "status", json_pack(
		"{s:s, s:i, s:i, s:s, s:s, s:s, s:s, s:i, s:i, s:o, s:[{s:s, s:s, s:s, s:s, s:s, s:i},"
		" {s:s, s:s, s:s, s:s, s:s, s:i}, {s:s, s:s, s:s, s:s, s:s, s:i}]}",
		"phase", "Running", "observedGeneration", 1, "readyNodes", (json_int_t)num,
		"jobId", jobid, "taskId", "cadre-2026-11-30-04-00-00_job_900000000",
		"admittedTime", "2026-11-30T04:00:00Z", "startTime", "2026-11-30T04:00:06Z",
		"restarts", 0, "infraRestarts", 0, "nodes", nodes, "conditions",
		"type", "VolumesReady", "status", "True", "reason", "AllBound", "message",
		"every Volume is Bound", "lastTransitionTime", "2026-11-30T04:00:00Z",
		"observedGeneration", 1,
		"type", "Admitted", "status", "True", "reason", "Admitted", "message",
		"admitted: the whole gang fits", "lastTransitionTime", "2026-11-30T04:00:00Z",
		"observedGeneration", 1,
		"type", "Running", "status", "True", "reason", "AllPodsRunning", "message",
		"all pods are Running", "lastTransitionTime", "2026-11-30T04:00:06Z",
		"observedGeneration", 1));
}

struct result {
	const char *what;
	long count;
	size_t bytes;
};

/*
 * Fill a store with count objects made by make(template, i), trimmed by
 * trim, indexed as the controller indexes them; return the heap the store
 * holds afterwards. The store is freed before returning.
 */
static struct result fill(const char *what, const json_t *template, long count,
			  json_t *(*make)(const json_t *template, long i), store_trim_fn trim,
			  bool indexed)
{
	struct store_options opts = { .kind = what, .trim = trim };
	struct store *s;
	struct result r = { what, count, 0 };
	size_t before;

	malloc_trim(0);
	before = heap_in_use();
	s = store_new(&opts);
	if (!s || (indexed && (store_add_index(s, "job", pod_index_job, NULL) ||
			       store_add_index(s, "node", pod_index_node, NULL)))) {
		fprintf(stderr, "cadre-bench-cache: out of memory\n");
		exit(1);
	}
	for (long i = 0; i < count; i++) {
		json_t *obj = make(template, i);

		if (!obj || store_upsert(s, obj)) {
			fprintf(stderr, "cadre-bench-cache: cannot store %s %ld\n", what, i);
			exit(1);
		}
		json_decref(obj);
	}
	if (store_len(s) != (size_t)count) {
		fprintf(stderr, "cadre-bench-cache: %s: stored %zu of %ld\n", what, store_len(s),
			count);
		exit(1);
	}
	r.bytes = heap_in_use() - before;
	store_free(s);
	return r;
}

static json_t *make_own_pod(const json_t *template, long i)
{
	json_t *pod = json_deep_copy(template);
	char name[64], job[32];

	snprintf(name, sizeof(name), "job-%ld-%ld", i / 8, i % 8);
	snprintf(job, sizeof(job), "job-%ld", i / 8);
	serve(pod, name, i);
	json_object_set_new(json_object_get(json_object_get(pod, "metadata"), "labels"),
			    LABEL_JOB_NAME, json_string(job));
	json_object_set_new(json_object_get(pod, "spec"), "nodeName", json_string("gpu-node-17"));
	json_object_del(json_object_get(pod, "spec"), "schedulingGates");
	json_object_set_new(pod, "status", running_status(i));
	return pod;
}

static json_t *make_foreign_pod(const json_t *template, long i)
{
	json_t *pod = json_deep_copy(template);
	char name[64];

	snprintf(name, sizeof(name), "web-frontend-7d9f8c6b5-%05ld", i);
	serve(pod, name, i);
	json_object_set_new(pod, "status", running_status(i));
	return pod;
}

static json_t *make_job(const json_t *template, long i)
{
	json_t *job = json_deep_copy(template);
	char name[64];

	snprintf(name, sizeof(name), "job-%ld", i);
	serve(job, name, i);
	job_status(job, i);
	return job;
}

static double mib(double bytes)
{
	return bytes / (1024.0 * 1024.0);
}

int main(int argc, char **argv)
{
	json_t *own, *job, *foreign;
	struct result own_r, foreign_r, job_r;
	long pods, jobs;
	double own_total, foreign_total, go_total;

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: cadre-bench-cache POD.json JOB.json [PODS [JOBS]]\n");
		return 2;
	}
	own = load(argv[1]);
	job = load(argv[2]);
	foreign = foreign_pod();
	pods = argc > 3 ? strtol(argv[3], NULL, 10) : 80000;
	jobs = argc > 4 ? strtol(argv[4], NULL, 10) : 10000;
	if (pods <= 0 || jobs <= 0) {
		fprintf(stderr, "cadre-bench-cache: PODS and JOBS must be positive\n");
		return 2;
	}

	own_r = fill("cadre's own pods", own, pods, make_own_pod, pod_trim, true);
	foreign_r = fill("other pods", foreign, pods, make_foreign_pod, pod_trim, true);
	job_r = fill("TrainingJobs", job, jobs, make_job, store_trim_managed_fields, false);

	printf("%-20s %8s %12s %14s\n", "cache", "objects", "heap (MiB)", "bytes/object");
	for (size_t i = 0; i < 3; i++) {
		const struct result *r = i == 0 ? &own_r : i == 1 ? &foreign_r : &job_r;

		printf("%-20s %8ld %12.1f %14.0f\n", r->what, r->count, mib((double)r->bytes),
		       (double)r->bytes / (double)r->count);
	}

	own_total = (double)own_r.bytes + (double)job_r.bytes;
	foreign_total = (double)foreign_r.bytes + (double)job_r.bytes;
	go_total = (double)GO_BYTES_PER_POD * (double)pods;
	printf("\n%ld TrainingJobs and %ld pods cached (docs/design.md 8 budget %.0f MiB):\n", jobs,
	       pods, mib(BUDGET_BYTES));
	printf("%-44s %10s %14s\n", "", "cadre", "Go, 33 KiB/pod");
	printf("%-44s %10.1f %14.1f\n", "all pods cadre's own (MiB of heap)", mib(own_total),
	       mib(go_total));
	printf("%-44s %10.1f %14.1f\n", "all pods someone else's (MiB of heap)",
	       mib(foreign_total), mib(go_total));

	json_decref(own);
	json_decref(job);
	json_decref(foreign);
	return 0;
}
