/*
 * cadre-bench-preempt: what choosing victims costs a built-in admission
 * decision (docs/design.md 3.5, docs/benchmarks.md).
 *
 * The controller's caches hold N kwok-shaped nodes of 8 H100s, every one
 * taken by a running 5-node gang of the scavenger Partition (tier 0,
 * preemptMode Requeue): N/5 gangs, 5 pods each, started a minute apart.
 * One gang_admit is timed for a new 8-node job of the same tier (it waits:
 * the plain decision, no preemption possible) and for one of the urgent
 * Partition (tier 10), which chooses the fewest gangs to stop (two); the
 * best of several runs, side by side, at 1,000 and 5,000 nodes.
 *
 *   cadre-bench-preempt [--quick]
 *
 * --quick: 1000 nodes only, 3 runs.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/fielderr.h"
#include "api/labels.h"
#include "api/pod_trim.h"
#include "api/trainingjob.h"
#include "controller/admission/gang.h"
#include "controller/admission/gang_preempt.h"
#include "controller/manager/cache_record.h"
#include "controller/manager/jobmemo.h"
#include "controller/manager/manager.h"
#include "kube/store.h"
#include "bench/common.h"

#define GANG 5
/* 2026-11-30T04:00:00Z plus a day: every gang is past any exempt time. */
#define NOW 1796097600

static int64_t bench_now(void)
{
	return NOW;
}

static json_t *make_node(long i)
{
	char name[32];

	snprintf(name, sizeof(name), "gpu-node-%ld", i);
	return json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:[{s:s, s:s, s:s}]},"
		" s:{s:{s:s, s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
		"apiVersion", "v1", "kind", "Node", "metadata", "name", name, "uid", name,
		"labels", "kubernetes.io/hostname", name, "type", "kwok", "nvidia.com/gpu.product",
		"NVIDIA-H100-80GB-HBM3", "spec", "taints", "key", "nvidia.com/gpu", "value",
		"present", "effect", "NoSchedule", "status", "allocatable", "cpu", "96", "memory",
		"1024Gi", "nvidia.com/gpu", "8", "pods", "110", "conditions", "type", "Ready",
		"status", "True");
}

static json_t *make_partition(const char *name, int tier, const char *mode)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i, s:s}}", "apiVersion",
			 "cadre.dev/v1alpha1", "kind", "Partition", "metadata", "name", name, "uid",
			 name, "spec", "priorityTier", tier, "preemptMode", mode);
}

static void timestamp(int64_t t, char *out, size_t size)
{
	time_t at = (time_t)t;
	struct tm tm;

	gmtime_r(&at, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A job of partition part, n nodes; running since started (its ranks on nodes first..), or waiting. */
static json_t *make_job(const char *name, long serial, const char *part, int n, int64_t started,
			long first)
{
	char uid[48], at[32];
	json_t *job, *nodes;

	snprintf(uid, sizeof(uid), "6f1c2d3e-4a5b-4c6d-8e9f-%012ld", serial);
	job = json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:i}, s:{s:i, s:{s:s}, s:s, s:s, s:s},"
		" s:{s:s, s:s, s:s}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob", "metadata", "name", name,
		"namespace", "team-a", "uid", uid, "creationTimestamp", "2026-11-30T04:00:00Z",
		"generation", 1, "spec", "numNodes", n, "resources", "accelerators", "H100:8",
		"image", "registry.example/train:1", "run", "torchrun train.py", "partition", part,
		"status", "phase", started ? "Running" : "Queued", "jobId", "123456789", "taskId",
		"t");
	if (!job || !started)
		return job;
	timestamp(started, at, sizeof(at));
	nodes = json_array();
	for (int r = 0; r < n; r++) {
		char node[32];

		snprintf(node, sizeof(node), "gpu-node-%ld", first + r);
		json_array_append_new(nodes, json_pack("{s:i, s:s}", "rank", r, "node", node));
	}
	json_object_update_new(json_object_get(job, "status"), json_pack(
		"{s:s, s:s, s:s, s:o, s:[{s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s}]}",
		"partition", part, "startTime", at, "admittedTime", at, "nodes", nodes,
		"conditions", "type", "Admitted", "status", "True", "reason", "Admitted", "message",
		"admitted", "lastTransitionTime", at, "type", "Running", "status", "True", "reason",
		"AllPodsRunning", "message", "running", "lastTransitionTime", at));
	return job;
}

static json_t *make_pod(const char *job, int rank, long node)
{
	char name[64], rank_s[8], node_s[32];

	snprintf(name, sizeof(name), "%s-%d", job, rank);
	snprintf(rank_s, sizeof(rank_s), "%d", rank);
	snprintf(node_s, sizeof(node_s), "gpu-node-%ld", node);
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}}, "
			 "s:{s:s, s:[{s:s, s:{s:{s:s}}}]}, s:{s:s}}",
			 "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
			 "team-a", "uid", name, "labels", LABEL_JOB_NAME, job, LABEL_NODE_RANK,
			 rank_s, LABEL_RESTART_ATTEMPT, "0", "spec", "nodeName", node_s,
			 "containers", "name", "main", "resources", "requests", "nvidia.com/gpu", "8",
			 "status", "phase", "Running");
}

struct cluster {
	struct manager m;
	struct options opts;
};

static void cluster_fill(struct cluster *c, long nodes)
{
	memset(c, 0, sizeof(*c));
	c->opts.accelerator_label = "nvidia.com/gpu.product";
	c->opts.starvation_seconds = 600;
	c->opts.gang_scheduler = GANG_BUILTIN;
	c->m.opts = &c->opts;
	c->m.wall_s = bench_now;
	for (int k = 0; k < KIND_COUNT; k++)
		if (k == KIND_TRAININGJOBS || k == KIND_PODS || k == KIND_OTHER_PODS ||
		    k == KIND_NODES || k == KIND_PARTITIONS)
			c->m.stores[k] = bench_cache_new((enum manager_kind)k);
	bench_put(c->m.stores[KIND_PARTITIONS], make_partition("scavenger", 0, "Requeue"));
	bench_put(c->m.stores[KIND_PARTITIONS], make_partition("urgent", 10, "Off"));
	for (long i = 0; i < nodes; i++)
		bench_put(c->m.stores[KIND_NODES], make_node(i));
	for (long g = 0; g < nodes / GANG; g++) {
		char name[32];

		snprintf(name, sizeof(name), "scav-%ld", g);
		bench_put(c->m.stores[KIND_TRAININGJOBS],
		    make_job(name, g, "scavenger", GANG, NOW - 86000 + g * 60, g * GANG));
		for (int r = 0; r < GANG; r++)
			bench_put(c->m.stores[KIND_PODS], make_pod(name, r, g * GANG + r));
	}
	bench_manager_init(&c->m);
}

static void cluster_free(struct cluster *c)
{
	bench_manager_free(&c->m);
}

/* One decision for a new 8-node job of part, on a full cluster: the best of runs, in ms. */
static double decide(struct cluster *c, const char *part, int runs, size_t *victims)
{
	json_t *obj = make_job(part, 999999, part, 8, 0, 0);
	struct bench_verdict v;
	double best = bench_decide(&c->m, obj, runs, &v);

	json_decref(obj);
	if (v.admitted)
		bench_die("a job on a full cluster was admitted: the bench measured the wrong thing");
	*victims = v.n_preempt;
	return best;
}

int main(int argc, char **argv)
{
	static const long full[] = { 1000, 5000 }, small[] = { 1000 };
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");
	const long *sizes = quick ? small : full;
	size_t n = quick ? 1 : 2;
	int runs = quick ? 3 : 7;

	if (argc > 1 && !quick) {
		fprintf(stderr, "usage: cadre-bench-preempt [--quick]\n");
		return 2;
	}
	printf("# Preemption (cadre-bench-preempt%s)\n\n", quick ? " --quick" : "");
	printf("One gang_admit for a new 8-node job on N nodes of 8 H100s, every one taken by a\n"
	       "running %d-node gang of the scavenger Partition (tier 0, preemptMode Requeue). Plain:\n"
	       "the job is of the same tier, so it waits and nothing is preempted. Preempting: the\n"
	       "job is of the urgent Partition (tier 10); the decision finds the candidates, builds\n"
	       "the capacity without them and chooses the fewest gangs to stop. Best of %d runs.\n\n",
	       GANG, runs);
	printf("| nodes | running gangs | plain (ms) | preempting (ms) | ratio | gangs chosen |\n");
	printf("|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < n; i++) {
		struct cluster c;
		size_t none = 0, chosen = 0;
		double plain, pre;

		cluster_fill(&c, sizes[i]);
		plain = decide(&c, "scavenger", runs, &none);
		pre = decide(&c, "urgent", runs, &chosen);
		if (none || chosen != 2)
			bench_die("the decisions chose other victims than expected: the bench measured the "
			    "wrong thing");
		printf("| %ld | %ld | %.2f | %.2f | %.2fx | %zu |\n", sizes[i], sizes[i] / GANG,
		       plain, pre, pre / plain, chosen);
		cluster_free(&c);
	}
	printf("\n");
	return 0;
}
