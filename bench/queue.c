/*
 * cadre-bench-queue: what a queue of waiting jobs costs one admission
 * decision (docs/benchmarks.md, "Queue").
 *
 * The controller's caches hold 1,000 kwok-shaped nodes of 8 H100s, half of
 * them taken by other tenants' pods, 10 Partitions, and Q TrainingJobs
 * waiting that cannot fit (800 nodes each), spread over the Partitions with
 * mixed priorities. One gang_admit for a new 8-node job (which fits) is
 * timed at each Q, the best of several runs: what one pass over the queue
 * costs, and what each waiting job adds to it.
 *
 * Then a kick (manager_kick_admission): every waiting job asked once, as
 * the sweep that follows a change does, timed twice in the same run: with
 * each job answered from the pass that decided it (gang_pass.h), and with
 * every job decided afresh (the epoch moved before each, as before there
 * was a pass to answer from): O(Q) against O(Q^2).
 *
 *   cadre-bench-queue [--quick]
 *
 * --quick: queues of 0, 250 and 500, 3 runs; the sweep at 250.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/fielderr.h"
#include "api/trainingjob.h"
#include "bench/common.h"
#include "controller/admission/gang.h"
#include "controller/manager/jobmemo.h"
#include "kube/store.h"

#define NODES 1000
#define PARTITIONS 10

/* The jobs were created at 2026-11-30T04:00:00Z; a minute later none has starved. */
static int64_t bench_now(void)
{
	return 1796011260;
}

static json_t *make_node(long i)
{
	char name[32];

	snprintf(name, sizeof(name), "gpu-node-%ld", i);
	return json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:{s:s, s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
		"apiVersion", "v1", "kind", "Node", "metadata", "name", name, "uid", name,
		"labels", "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3", "status",
		"allocatable", "cpu", "96", "memory", "1024Gi", "nvidia.com/gpu", "8", "pods", "110",
		"conditions", "type", "Ready", "status", "True");
}

static json_t *make_job(const char *name, long serial, int n, int partition, int priority)
{
	char uid[48], part[32], rv[24];

	snprintf(uid, sizeof(uid), "6f1c2d3e-4a5b-4c6d-8e9f-%012ld", serial);
	snprintf(part, sizeof(part), "part-%d", partition);
	snprintf(rv, sizeof(rv), "%ld", 1000 + serial);
	return json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:i}, s:{s:i, s:{s:s}, s:s, s:s, s:s, s:i},"
		" s:{s:s, s:s, s:s}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob", "metadata", "name", name,
		"namespace", "team-a", "uid", uid, "resourceVersion", rv,
		"creationTimestamp", "2026-11-30T04:00:00Z", "generation", 1, "spec", "numNodes", n, "resources", "accelerators", "H100:8",
		"image", "registry.example/train:1", "run", "torchrun train.py", "partition", part,
		"priority", priority, "status", "phase", "Queued", "jobId", "123456789", "taskId",
		"t");
}

static void fill(struct manager *m, struct options *opts, long queue)
{
	memset(m, 0, sizeof(*m));
	memset(opts, 0, sizeof(*opts));
	opts->accelerator_label = "nvidia.com/gpu.product";
	opts->starvation_seconds = 600;
	m->opts = opts;
	m->wall_s = bench_now;
	for (int k = 0; k < KIND_COUNT; k++)
		if (k == KIND_TRAININGJOBS || k == KIND_PODS || k == KIND_OTHER_PODS ||
		    k == KIND_NODES || k == KIND_PARTITIONS)
			m->stores[k] = bench_cache_new((enum manager_kind)k);
	for (int p = 0; p < PARTITIONS; p++) {
		char name[32];

		snprintf(name, sizeof(name), "part-%d", p);
		bench_put(m->stores[KIND_PARTITIONS],
			  json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion",
				    "cadre.dev/v1alpha1", "kind", "Partition", "metadata", "name",
				    name, "uid", name, "spec", "maxTime", "7-00:00:00"));
	}
	for (long i = 0; i < NODES; i++) {
		bench_put(m->stores[KIND_NODES], make_node(i));
		if (i % 2)
			bench_put(m->stores[KIND_OTHER_PODS], bench_tenant_pod(i));
	}
	for (long j = 0; j < queue; j++) {
		char name[32];

		/* Too big for what is free, so each stays in the queue the decision walks. */
		snprintf(name, sizeof(name), "waiting-%ld", j);
		bench_put(m->stores[KIND_TRAININGJOBS],
			  make_job(name, j, 800, (int)(j % PARTITIONS), (int)(j % 7) * 10));
	}
	bench_manager_init(m);
}

/*
 * After a kick, each of the queue's jobs asked once, in the store's order;
 * fresh: the epoch moved before each ask (no pass answers). Milliseconds.
 */
static double sweep(struct manager *m, long queue, bool fresh)
{
	struct trainingjob *jobs = calloc((size_t)queue + 1, sizeof(*jobs));
	struct field_errors errs;
	double t0, ms;
	long waits = 0;

	if (!jobs)
		bench_die("out of memory");
	field_errors_init(&errs);
	for (long j = 0; j < queue; j++) {
		char key[64];
		json_t *obj;

		snprintf(key, sizeof(key), "team-a/waiting-%ld", j);
		if (store_get(m->stores[KIND_TRAININGJOBS], key, &obj) ||
		    tj_parse(obj, &jobs[j], &errs))
			bench_die("a waiting job is not in the cache");
		json_decref(obj);
	}
	atomic_fetch_add(&m->admission_epoch, 1);
	t0 = bench_now_ms();
	for (long j = 0; j < queue; j++) {
		struct jobmemo_admission held = { 0 };
		struct tj_admission out;

		if (fresh)
			atomic_fetch_add(&m->admission_epoch, 1);
		if (gang_admit(m, &jobs[j], &out, &held))
			bench_die("gang_admit failed");
		waits += out.verdict == ADMIT_WAIT;
		jobmemo_admission_release(&held);
	}
	ms = bench_now_ms() - t0;
	if (waits != queue)
		bench_die("a job that cannot fit was admitted: the bench measured the wrong thing");
	for (long j = 0; j < queue; j++)
		tj_release(&jobs[j]);
	free(jobs);
	field_errors_release(&errs);
	return ms;
}

int main(int argc, char **argv)
{
	static const long full[] = { 0, 250, 500, 1000 }, small[] = { 0, 250, 500 };
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");
	const long *sizes = quick ? small : full;
	size_t n = quick ? 3 : 4;
	int runs = quick ? 3 : 7;
	double empty = 0;

	if (argc > 1 && !quick) {
		fprintf(stderr, "usage: cadre-bench-queue [--quick]\n");
		return 2;
	}
	printf("# Queue (cadre-bench-queue%s)\n\n", quick ? " --quick" : "");
	printf("One gang_admit for a new 8-node job that fits, on %d nodes of 8 H100s (half taken\n"
	       "by other tenants' pods) with %d Partitions, while Q jobs wait that cannot fit\n"
	       "(800 nodes each; mixed Partitions and priorities): the caches read, the queue\n"
	       "walked and decided, the job placed. Best of %d runs.\n\n", NODES, PARTITIONS, runs);
	printf("| waiting jobs | decision (ms) | per waiting job (us) |\n");
	printf("|---:|---:|---:|\n");
	for (size_t i = 0; i < n; i++) {
		struct manager m;
		struct options opts;
		struct bench_verdict v;
		json_t *obj;
		double ms;

		fill(&m, &opts, sizes[i]);
		obj = make_job("new", 999999, 8, 0, 0);
		ms = bench_decide(&m, obj, runs, &v);
		json_decref(obj);
		if (!v.admitted)
			bench_die("the new job was not admitted: the bench measured the wrong thing");
		if (!sizes[i])
			empty = ms;
		if (sizes[i])
			printf("| %ld | %.2f | %.1f |\n", sizes[i], ms,
			       (ms - empty) * 1000.0 / (double)sizes[i]);
		else
			printf("| 0 | %.2f | - |\n", ms);
		bench_manager_free(&m);
	}
	printf("\nA kick: each of the Q waiting jobs asked once, as the sweep after a change asks\n"
	       "them. Answered from the pass that decided it, against each decided afresh (the\n"
	       "old way), in the same run.\n\n");
	printf("| waiting jobs | sweep, from the pass (ms) | sweep, each afresh (ms) | ratio |\n");
	printf("|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < n; i++) {
		struct manager m;
		struct options opts;
		double with, without;

		if (!sizes[i] || (quick && sizes[i] != 250))
			continue;
		fill(&m, &opts, sizes[i]);
		with = sweep(&m, sizes[i], false);
		without = sweep(&m, sizes[i], true);
		printf("| %ld | %.1f | %.1f | %.3f |\n", sizes[i], with, without, with / without);
		bench_manager_free(&m);
	}
	printf("\n");
	return 0;
}
