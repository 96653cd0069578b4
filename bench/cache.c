/*
 * cadre-bench-cache: what the controller's caches cost per object.
 *
 * docs/design.md 8 asks for <= 128 MiB resident with 10k TrainingJobs and 80k
 * pods cached, where Go operators spend about 33 KiB per cached pod. A
 * cluster that size does not fit on a test machine, so this measures the
 * caches themselves: it fills stores with objects shaped like what the API
 * server returns (managedFields, status, conditions), through the same
 * trims, records and indexes the controller uses (controller/manager/
 * manager.c), and reports the heap each object keeps (glibc's mallinfo2,
 * before and after); then it fills one set of caches as large as the
 * docs/design.md 8 cluster, reports its heap, and times what reads it: one
 * admission decision (gang_admit, every pod and job visited), a decode of
 * every pod (what the same walk would cost without records), and the
 * decode of one 1024-pod job's pods (what its reconcile reads).
 *
 *   cadre-bench-cache POD.json JOB.json [PODS [JOBS]]
 *
 * POD.json is a pod as cadre builds it (unit/testdata/golden/llama-pretrain.pod-1.json),
 * JOB.json a TrainingJob (unit/testdata/golden/inputs/llama-pretrain.json). PODS
 * defaults to 80000 and JOBS to 10000.
 *
 * On main before the caches were packed (9674214) this printed 7,070 bytes
 * per own pod, 1,780 per other pod and 14,042 per TrainingJob: 673 MiB of
 * heap for 10k jobs and 80k own pods.
 */
#include <jansson.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/fielderr.h"
#include "api/labels.h"
#include "api/trainingjob.h"
#include "controller/manager/jobmemo.h"
#include "controller/manager/cache_record.h"
#include "controller/admission/gang.h"
#include "controller/manager/manager.h"
#include "api/pod_trim.h"
#include "base/slab.h"
#include "kube/store.h"
#include "bench/common.h"

#define GO_BYTES_PER_POD (33 * 1024)
#define BUDGET_BYTES (128u << 20)

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	/* The caches' objects are in slabs, apart from malloc (base/slab.h). */
	return mi.uordblks + mi.hblkhd + slab_resident_bytes();
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

/* The nodes the pods run on: NODES GPU nodes as kwok registers them. */
#define NODES 1000
/* Own pods per job, so that every cached job's gang is whole and bound. */
#define PODS_PER_JOB 8

static void node_name(char *out, size_t size, long i)
{
	snprintf(out, size, "gpu-node-%ld", i % NODES);
}

/* Own pod i: rank i % 8 of job-(i / 8), Running on a node, attempt 0. */
static json_t *make_own_pod(const json_t *template, long i)
{
	json_t *pod = json_deep_copy(template), *labels;
	char name[64], job[32], node[32];

	snprintf(name, sizeof(name), "job-%ld-%ld", i / PODS_PER_JOB, i % PODS_PER_JOB);
	snprintf(job, sizeof(job), "job-%ld", i / PODS_PER_JOB);
	node_name(node, sizeof(node), i / PODS_PER_JOB);
	serve(pod, name, i);
	labels = json_object_get(json_object_get(pod, "metadata"), "labels");
	json_object_set_new(labels, LABEL_JOB_NAME, json_string(job));
	json_object_set_new(labels, LABEL_RESTART_ATTEMPT, json_string("0"));
	json_object_set_new(json_object_get(pod, "spec"), "nodeName", json_string(node));
	json_object_del(json_object_get(pod, "spec"), "schedulingGates");
	json_object_set_new(pod, "status", running_status(i));
	return pod;
}

static json_t *make_foreign_pod(const json_t *template, long i)
{
	json_t *pod = json_deep_copy(template);
	char name[64], node[32];

	snprintf(name, sizeof(name), "web-frontend-7d9f8c6b5-%05ld", i);
	node_name(node, sizeof(node), i);
	serve(pod, name, i);
	json_object_set_new(json_object_get(pod, "spec"), "nodeName", json_string(node));
	json_object_set_new(pod, "status", running_status(i));
	return pod;
}

/* Jobs from this one on have no pods cached: they finished. */
static long first_finished = LONG_MAX;

/*
 * Job i: 8 nodes, Running and admitted (its status as the controller wrote
 * it), or Succeeded from first_finished on.
 */
static json_t *make_job(const json_t *template, long i)
{
	json_t *job = json_deep_copy(template);
	char name[64];

	snprintf(name, sizeof(name), "job-%ld", i);
	serve(job, name, i);
	json_object_set_new(json_object_get(job, "spec"), "numNodes",
			    json_integer(PODS_PER_JOB));
	job_status(job, i);
	if (i >= first_finished)
		json_object_set_new(json_object_get(job, "status"), "phase",
				    json_string("Succeeded"));
	return job;
}

/* A node as kwok registers it: 8 H100s, labels, a taint, conditions. */
static json_t *make_node(const json_t *template, long i)
{
	char name[32];

	(void)template;
	node_name(name, sizeof(name), i);
	return json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s}, s:{s:s}, s:s},"
		" s:{s:[{s:s, s:s}]}, s:{s:{s:s, s:s, s:s, s:s}, s:{s:s, s:s, s:s, s:s},"
		" s:[{s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s}],"
		" s:{s:s, s:s, s:s, s:s, s:s, s:s}}}",
		"apiVersion", "v1", "kind", "Node", "metadata", "name", name, "uid",
		"0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d", "resourceVersion", "4242", "labels",
		"kubernetes.io/hostname", name, "kubernetes.io/os", "linux", "kubernetes.io/arch",
		"amd64", "type", "kwok", "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3",
		"node.kubernetes.io/instance-type", "p5.48xlarge", "annotations",
		"node.alpha.kubernetes.io/ttl", "0", "creationTimestamp", "2026-11-30T03:00:00Z",
		"spec", "taints", "key", "kwok.x-k8s.io/node", "effect", "NoSchedule",
		"status", "capacity", "cpu", "192", "memory", "2Ti", "nvidia.com/gpu", "8", "pods",
		"110", "allocatable", "cpu", "192", "memory", "2Ti", "nvidia.com/gpu", "8", "pods",
		"110", "conditions", "type", "Ready", "status", "True", "reason", "KubeletReady",
		"message", "kubelet is posting ready status", "lastHeartbeatTime",
		"2026-11-30T04:00:00Z", "type", "MemoryPressure", "status", "False", "reason",
		"KubeletHasSufficientMemory", "message", "kubelet has sufficient memory available",
		"lastHeartbeatTime", "2026-11-30T04:00:00Z", "nodeInfo", "architecture", "amd64",
		"kubeletVersion", "fake", "kubeProxyVersion", "fake", "operatingSystem", "linux",
		"osImage", "", "containerRuntimeVersion", "");
}

typedef json_t *(*make_fn)(const json_t *template, long i);

/* Store count objects made by make, numbered from first. */
static void fill(struct store *s, const json_t *template, long first, long count, make_fn make)
{
	for (long i = first; i < first + count; i++) {
		json_t *obj = make(template, i);

		if (!obj || store_upsert(s, obj))
			bench_die("cannot store an object");
		json_decref(obj);
	}
}

/* The heap one object of a kind keeps, from count of them in a cache of their own. */
static double bytes_per_object(enum manager_kind kind, const json_t *template, long count,
			       make_fn make, double *packed)
{
	struct store *s;
	size_t before, after;

	malloc_trim(0);
	before = heap_in_use();
	s = bench_cache_new(kind);
	fill(s, template, 0, count, make);
	after = heap_in_use();
	*packed = (double)store_packed_bytes(s) / (double)count;
	store_free(s);
	return (double)(after - before) / (double)count;
}

struct templates {
	const json_t *own, *foreign, *job;
};

struct cluster {
	struct manager m;
	struct options opts;
	size_t heap;
};

/* Caches holding jobs, own and other pods and the nodes, and the heap they take. */
static void cluster_fill(struct cluster *c, const struct templates *t, long jobs, long own,
			 long other)
{
	size_t before;

	memset(c, 0, sizeof(*c));
	c->opts.accelerator_label = "nvidia.com/gpu.product";
	c->opts.starvation_seconds = 600;
	c->m.opts = &c->opts;
	malloc_trim(0);
	before = heap_in_use();
	c->m.stores[KIND_TRAININGJOBS] = bench_cache_new(KIND_TRAININGJOBS);
	c->m.stores[KIND_PODS] = bench_cache_new(KIND_PODS);
	c->m.stores[KIND_OTHER_PODS] = bench_cache_new(KIND_OTHER_PODS);
	c->m.stores[KIND_NODES] = bench_cache_new(KIND_NODES);
	first_finished = own / PODS_PER_JOB;
	fill(c->m.stores[KIND_TRAININGJOBS], t->job, 0, jobs, make_job);
	first_finished = LONG_MAX;
	fill(c->m.stores[KIND_PODS], t->own, 0, own, make_own_pod);
	fill(c->m.stores[KIND_OTHER_PODS], t->foreign, 0, other, make_foreign_pod);
	c->heap = heap_in_use() - before;
	fill(c->m.stores[KIND_NODES], NULL, 0, NODES, make_node);
	bench_manager_init(&c->m);
}

static void cluster_free(struct cluster *c)
{
	bench_manager_free(&c->m);
}

/* One admission decision for a new 8-node job, in ms (the best of runs). */
static double time_decision(struct cluster *c, const json_t *template, int runs)
{
	json_t *obj = json_deep_copy(template);
	struct bench_verdict v;
	double best;

	serve(obj, "waiting", 999999);
	json_object_set_new(json_object_get(obj, "spec"), "numNodes", json_integer(8));
	json_object_set_new(json_object_get(obj, "status"), "restarts", json_integer(0));
	json_object_set_new(json_object_get(obj, "status"), "infraRestarts", json_integer(0));
	best = bench_decide(&c->m, obj, runs, &v);
	json_decref(obj);
	return best;
}

static int count_pod(void *ctx, const char *key, const json_t *obj)
{
	(void)key;
	(void)obj;
	++*(long *)ctx;
	return 0;
}

/* Decoding every own pod, as a walk without records would: ms. */
static double time_decode_all(struct cluster *c)
{
	long n = 0;
	double t0 = bench_now_ms();

	store_foreach(c->m.stores[KIND_PODS], count_pod, &n);
	return bench_now_ms() - t0;
}

/* The pods of one 1024-pod job, decoded by store_by_index as its reconcile reads them: ms. */
static double time_big_job(struct cluster *c, const json_t *own)
{
	struct store *pods = c->m.stores[KIND_PODS];
	double t0, best = 1e9;
	json_t *list;

	for (long r = 0; r < 1024; r++) {
		json_t *pod = make_own_pod(own, r);
		char name[32];

		snprintf(name, sizeof(name), "big-%ld", r);
		json_object_set_new(json_object_get(pod, "metadata"), "name", json_string(name));
		json_object_set_new(json_object_get(json_object_get(pod, "metadata"), "labels"),
				    LABEL_JOB_NAME, json_string("big"));
		if (store_upsert(pods, pod))
			bench_die("cannot store a pod");
		json_decref(pod);
	}
	for (int run = 0; run < 5; run++) {
		t0 = bench_now_ms();
		if (store_by_index(pods, "job", "team-a/big", &list) || json_array_size(list) != 1024)
			bench_die("the 1024-pod job is not indexed");
		json_decref(list);
		if (bench_now_ms() - t0 < best)
			best = bench_now_ms() - t0;
	}
	return best;
}

static double mib(double bytes)
{
	return bytes / (1024.0 * 1024.0);
}

/*
 * What a list leaves resident. The reflector decodes each page of a list
 * (500 objects) into a jansson tree and stores the page's objects, trimmed
 * and packed, while the tree is alive; then the tree goes, and after the
 * last page malloc_trim(0) hands back what it can. Two ways of keeping the
 * same objects are measured, each in a child process of its own, from its
 * VmRSS before the first page to after the trim:
 *   - the store: its entries in slabs apart from malloc (base/slab.h);
 *   - the same packed bytes, one malloc block an object of the size of a
 *     store entry, as the store kept them before it had slabs (93723d1^):
 *     the baseline.
 */
enum keeper { KEEP_STORE, KEEP_MALLOC };

#define LIST_PAGE 500

static long vm_rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = strtol(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

/* Page [first, first + LIST_PAGE) of own pods as the API server would send it. */
static char *list_page(const json_t *own, long first, long count)
{
	json_t *items = json_array(), *list;
	char *text;

	for (long i = first; i < first + LIST_PAGE && i < count; i++)
		json_array_append_new(items, make_own_pod(own, i));
	list = json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", "v1", "kind", "PodList",
			 "metadata", "resourceVersion", "123456", "items", items);
	text = list ? json_dumps(list, JSON_COMPACT) : NULL;
	json_decref(list);
	if (!text)
		bench_die("out of memory");
	return text;
}

/* In a child: the MiB a list of count own pods leaves resident, kept the way how says. */
static double listed_child(enum keeper how, const json_t *own, long count)
{
	struct store *s = how == KEEP_STORE ? bench_cache_new(KIND_PODS) : NULL;
	struct store_batch *b = s ? store_batch_new(s) : NULL;
	char **kept = how == KEEP_MALLOC ? calloc((size_t)count, sizeof(*kept)) : NULL;
	long before;

	if (how == KEEP_STORE ? !b : !kept)
		bench_die("out of memory");
	malloc_trim(0);
	before = vm_rss_kib();
	for (long first = 0; first < count; first += LIST_PAGE) {
		char *text = list_page(own, first, count);
		json_t *page = json_loads(text, 0, NULL), *item;
		size_t i;

		free(text);
		if (!page)
			bench_die("a list page does not parse");
		json_array_foreach(json_object_get(page, "items"), i, item) {
			json_t *trimmed;
			char *packed;
			size_t len;

			if (b) {
				if (store_batch_add(b, item))
					bench_die("cannot store a pod");
				continue;
			}
			trimmed = pod_trim(item, NULL);
			packed = trimmed ? json_dumps(trimmed, JSON_COMPACT) : NULL;
			json_decref(trimmed);
			if (!packed)
				bench_die("out of memory");
			/* An entry's header, record and key were in the same block. */
			len = strlen(packed);
			kept[first + (long)i] = malloc(len + 1 + 256);
			if (!kept[first + (long)i])
				bench_die("out of memory");
			memcpy(kept[first + (long)i], packed, len + 1);
			free(packed);
		}
		json_decref(page);
	}
	if (b && store_batch_commit(b))
		bench_die("cannot store the list");
	malloc_trim(0);
	return (double)(vm_rss_kib() - before) / 1024.0;
}

/* listed_child() in a fork, so that neither way inherits what the other left. */
static double listed_rss(enum keeper how, const json_t *own, long count)
{
	double mib_listed = -1;
	int fds[2], status;
	pid_t pid;

	fflush(stdout);
	if (pipe(fds) || (pid = fork()) < 0)
		bench_die("cannot fork");
	if (!pid) {
		double v = listed_child(how, own, count);

		close(fds[0]);
		_exit(write(fds[1], &v, sizeof(v)) == (ssize_t)sizeof(v) ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], &mib_listed, sizeof(mib_listed)) != (ssize_t)sizeof(mib_listed))
		mib_listed = -1;
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (mib_listed < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		bench_die("the list child failed");
	return mib_listed;
}

static void report_listed(const json_t *own, long count)
{
	double store_mib = listed_rss(KEEP_STORE, own, count);
	double malloc_mib = listed_rss(KEEP_MALLOC, own, count);

	printf("\n%ld own pods listed in pages of %d, VmRSS they leave after malloc_trim:\n",
	       count, LIST_PAGE);
	printf("  the store (entries in slabs)                   %8.1f MiB  %6.0f bytes a pod\n",
	       store_mib, store_mib * 1048576.0 / (double)count);
	printf("  the same bytes kept by malloc (the baseline)   %8.1f MiB  %6.0f bytes a pod\n",
	       malloc_mib, malloc_mib * 1048576.0 / (double)count);
}

static void report_cluster(const struct templates *t, long jobs, long own, long other)
{
	struct cluster c;
	char what[96];

	cluster_fill(&c, t, jobs, own, other);
	snprintf(what, sizeof(what), "%ld jobs + %ld own + %ld other pods", jobs, own, other);
	printf("%-44s %10.1f MiB of heap (budget %.0f MiB resident)\n", what, mib((double)c.heap),
	       mib(BUDGET_BYTES));
	printf("  one admission decision (every pod, job and node visited): %8.2f ms\n",
	       time_decision(&c, t->job, 5));
	printf("  decoding every own pod instead (a walk without records):  %8.2f ms\n",
	       time_decode_all(&c));
	printf("  the 1024 pods of one job, decoded (store_by_index):        %8.2f ms\n",
	       time_big_job(&c, t->own));
	cluster_free(&c);
}

int main(int argc, char **argv)
{
	struct templates t;
	json_t *own, *job, *foreign;
	double per[4], packed[4];
	long pods, jobs;
	static const char *const names[4] = { "cadre's own pod", "other pod", "TrainingJob",
					      "node" };

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: cadre-bench-cache POD.json JOB.json [PODS [JOBS]]\n");
		return 2;
	}
	own = load(argv[1]);
	job = load(argv[2]);
	foreign = foreign_pod();
	pods = argc > 3 ? strtol(argv[3], NULL, 10) : 80000;
	jobs = argc > 4 ? strtol(argv[4], NULL, 10) : 10000;
	if (pods < 4 || jobs <= 0) {
		fprintf(stderr, "cadre-bench-cache: PODS must be at least 4, JOBS positive\n");
		return 2;
	}
	t = (struct templates){ own, foreign, job };

	per[0] = bytes_per_object(KIND_PODS, own, pods, make_own_pod, &packed[0]);
	per[1] = bytes_per_object(KIND_OTHER_PODS, foreign, pods, make_foreign_pod, &packed[1]);
	per[2] = bytes_per_object(KIND_TRAININGJOBS, job, jobs, make_job, &packed[2]);
	per[3] = bytes_per_object(KIND_NODES, NULL, NODES, make_node, &packed[3]);
	printf("%-20s %14s %14s %16s\n", "cached object", "heap bytes", "of it JSON",
	       "before (9674214)");
	for (int i = 0; i < 4; i++) {
		static const char *const before[4] = { "7070", "1780", "14042", "-" };

		printf("%-20s %14.0f %14.0f %16s\n", names[i], per[i], packed[i], before[i]);
	}
	printf("\nGo operators at 33 KiB per cached pod: %.0f MiB for %ld pods.\n",
	       mib((double)GO_BYTES_PER_POD * (double)pods), pods);
	report_cluster(&t, jobs, pods * 3 / 4, pods - pods * 3 / 4);
	report_cluster(&t, jobs, pods, 0);
	report_listed(own, pods);

	json_decref(own);
	json_decref(job);
	json_decref(foreign);
	return 0;
}
