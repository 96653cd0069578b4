/*
 * cadre-bench-topology: what spec.topology costs and what it buys
 * (docs/topology.md, docs/benchmarks.md).
 *
 * 1. Admission cost. The controller's caches hold N nodes as kwok registers
 *    them, in blocks of 64 and sub-blocks of 16 (GKE's labels, which cadre
 *    knows out of the box), half of them taken by other tenants' pods, and
 *    a queue of waiting 8-node jobs (half of them asking for a sub-block).
 *    One admission decision (gang_admit: the caches read, the queue walked,
 *    the job placed) is timed for a new 8-node job and a queue without
 *    spec.topology, then with it, at each N; the best of several runs.
 *
 * 2. Fragmentation. Sequences of 200 jobs (1 to 16 nodes of 8 GPUs, run
 *    times and arrivals from a fixed seed) go through the admission queue
 *    on 128 nodes in 4 blocks of 4 racks of 8. A job of at most 8 nodes
 *    requires one rack, a larger one one block. Time moves from one event
 *    (an arrival, an end) to the next; at each the queue is decided afresh.
 *    Reported: the share of the jobs' GPU-time spent waiting while the
 *    cluster had enough GPUs free for the job but not in one domain, with
 *    the domain chosen by best fit (what cadre does) and by first fit; the
 *    mean wait and the makespan; over 10 sequences.
 *
 *   cadre-bench-topology [--quick]
 *
 * --quick: 1000 nodes only, 3 runs, 3 sequences.
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
#include "controller/admission/admission.h"
#include "controller/manager/cache_record.h"
#include "controller/admission/capacity.h"
#include "controller/admission/gang.h"
#include "controller/admission/topology.h"
#include "controller/manager/jobmemo.h"
#include "controller/manager/manager.h"
#include "kube/store.h"
#include "bench/common.h"

#define BLOCK_LABEL "cloud.google.com/gce-topology-block"
#define SUB_LABEL "cloud.google.com/gce-topology-subblock"
#define WAITING_JOBS 100

/* A small fixed-seed generator, so every run of the bench sees the same jobs. */
static uint64_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33);
}

/* ---- 1. admission cost, through the controller's caches ---- */

/* Node i as kwok registers it: 8 H100s, in block i/64 and sub-block i/16. */
static json_t *make_node(long i)
{
	char name[32], block[32], sub[48];

	snprintf(name, sizeof(name), "gpu-node-%ld", i);
	snprintf(block, sizeof(block), "b%ld", i / 64);
	snprintf(sub, sizeof(sub), "b%ld-s%ld", i / 64, i / 16 % 4);
	return json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s}},"
		" s:{s:[{s:s, s:s, s:s}]},"
		" s:{s:{s:s, s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
		"apiVersion", "v1", "kind", "Node", "metadata", "name", name, "uid", name,
		"labels", "kubernetes.io/hostname", name, "type", "kwok",
		"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count", "8",
		BLOCK_LABEL, block, SUB_LABEL, sub,
		"spec", "taints", "key", "nvidia.com/gpu", "value", "present", "effect", "NoSchedule",
		"status", "allocatable", "cpu", "96", "memory", "1024Gi", "nvidia.com/gpu", "8",
		"pods", "110", "conditions", "type", "Ready", "status", "True");
}

/* A waiting job: n nodes of H100:8, with spec.topology.required on the sub-block when topo. */
static json_t *make_job(const char *name, long serial, int n, bool topo)
{
	char uid[48];
	json_t *job;

	snprintf(uid, sizeof(uid), "6f1c2d3e-4a5b-4c6d-8e9f-%012ld", serial);
	job = json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:i}, s:{s:i, s:{s:s}, s:s, s:s},"
		" s:{s:s, s:s, s:s, s:i, s:i}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob", "metadata", "name", name,
		"namespace", "team-a", "uid", uid, "creationTimestamp", "2026-11-30T04:00:00Z",
		"generation", 1, "spec", "numNodes", n, "resources", "accelerators", "H100:8",
		"image", "registry.example/train:1", "run", "torchrun train.py", "status", "phase",
		"Queued", "jobId", "123456789", "taskId", "t", "restarts", 0, "infraRestarts", 0);
	if (job && topo)
		json_object_set_new(json_object_get(job, "spec"), "topology",
				    json_pack("{s:s}", "required", SUB_LABEL));
	return job;
}

struct cluster {
	struct manager m;
	struct options opts;
};

/* The jobs were created at 2026-11-30T04:00:00Z; a minute later none has starved. */
static int64_t bench_now(void)
{
	return 1796011260;
}

static void cluster_fill(struct cluster *c, long nodes, bool topo)
{
	memset(c, 0, sizeof(*c));
	c->opts.accelerator_label = "nvidia.com/gpu.product";
	c->opts.starvation_seconds = 600;
	c->m.opts = &c->opts;
	c->m.wall_s = bench_now;
	c->m.stores[KIND_TRAININGJOBS] = bench_cache_new(KIND_TRAININGJOBS);
	c->m.stores[KIND_PODS] = bench_cache_new(KIND_PODS);
	c->m.stores[KIND_OTHER_PODS] = bench_cache_new(KIND_OTHER_PODS);
	c->m.stores[KIND_NODES] = bench_cache_new(KIND_NODES);
	rng_state = 42;
	for (long i = 0; i < nodes; i++) {
		bench_put(c->m.stores[KIND_NODES], make_node(i));
		if (rng() % 2)
			bench_put(c->m.stores[KIND_OTHER_PODS], bench_tenant_pod(i));
	}
	for (long j = 0; j < WAITING_JOBS; j++) {
		char name[32];

		/* Too big for what is free, so each stays in the queue the decision walks. */
		snprintf(name, sizeof(name), "waiting-%ld", j);
		bench_put(c->m.stores[KIND_TRAININGJOBS],
		    make_job(name, j, (int)(nodes * 3 / 4), topo && j % 2));
	}
	bench_manager_init(&c->m);
}

static void cluster_free(struct cluster *c)
{
	bench_manager_free(&c->m);
}

/* One admission decision for a new 8-node job: the best of runs, in ms. */
static double decide(struct cluster *c, bool topo, int runs, bool *admitted)
{
	json_t *obj = make_job(topo ? "new-topo" : "new-plain", 999999 - topo, 8, topo);
	struct bench_verdict v;
	double best = bench_decide(&c->m, obj, runs, &v);

	*admitted = v.admitted;
	json_decref(obj);
	return best;
}

static void admission_cost(bool quick)
{
	static const long full[] = { 1000, 5000 }, small[] = { 1000 };
	const long *sizes = quick ? small : full;
	size_t n = quick ? 1 : 2;
	int runs = quick ? 3 : 7;

	printf("## Admission decision per job\n\n");
	printf("One gang_admit for a new 8-node job: the controller's caches read (N kwok-shaped\n"
	       "nodes in blocks of 64 and sub-blocks of 16, half taken by other tenants' pods),\n"
	       "%d waiting jobs walked, the job placed. Without topology: neither the job nor the\n"
	       "queue has spec.topology. With: the job and half the queue require a sub-block.\n"
	       "Best of %d runs.\n\n", WAITING_JOBS, runs);
	printf("| nodes | without topology (ms) | with topology.required (ms) | ratio |\n");
	printf("|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < n; i++) {
		struct cluster plain_c, topo_c;
		bool plain_ok = false, topo_ok = false;
		double plain, topo;

		/* The same nodes and tenants; the queue and the job with or without topology. */
		cluster_fill(&plain_c, sizes[i], false);
		cluster_fill(&topo_c, sizes[i], true);
		plain = decide(&plain_c, false, runs, &plain_ok);
		topo = decide(&topo_c, true, runs, &topo_ok);
		if (!plain_ok || !topo_ok)
			bench_die("a new 8-node job was not admitted: the bench measured the wrong thing");
		printf("| %ld | %.2f | %.2f | %.2fx |\n", sizes[i], plain, topo, topo / plain);
		cluster_free(&plain_c);
		cluster_free(&topo_c);
	}
	printf("\n");
}

/* ---- 2. fragmentation, on the capacity model and the admission queue ---- */

#define SIM_BLOCKS 4
#define SIM_RACKS 4
#define SIM_PER_RACK 8
#define SIM_NODES (SIM_BLOCKS * SIM_RACKS * SIM_PER_RACK)

struct sim_job {
	int size;          /* nodes */
	double arrive_s;   /* when it is submitted */
	double run_s;      /* how long it runs */
	double start_s;    /* -1 while waiting */
	double frag_s;     /* time it waited while enough nodes were free, not in one domain */
	uint32_t nodes[16];
};

struct sim {
	struct cap_node nodes[SIM_NODES];
	struct cap_resource ext[SIM_NODES];
	struct cap_label labels[SIM_NODES][3];
	char names[SIM_NODES][16], blocks[SIM_NODES][8], racks[SIM_NODES][8];
};

static void sim_nodes(struct sim *s)
{
	for (int i = 0; i < SIM_NODES; i++) {
		struct cap_node *n = &s->nodes[i];

		snprintf(s->names[i], sizeof(s->names[i]), "n%03d", i);
		snprintf(s->blocks[i], sizeof(s->blocks[i]), "b%d", i / (SIM_RACKS * SIM_PER_RACK));
		snprintf(s->racks[i], sizeof(s->racks[i]), "r%d", i / SIM_PER_RACK);
		s->ext[i] = (struct cap_resource){ "nvidia.com/gpu", 8000 };
		s->labels[i][0] = (struct cap_label){ "example.com/block", s->blocks[i] };
		s->labels[i][1] = (struct cap_label){ "example.com/rack", s->racks[i] };
		s->labels[i][2] = (struct cap_label){ "nvidia.com/gpu.product", "H100" };
		*n = (struct cap_node){ .name = s->names[i], .ready = true, .cpu_milli = 96000,
					.memory_milli = 1, .pods = 110, .extended = &s->ext[i],
					.n_extended = 1, .labels = s->labels[i], .n_labels = 3 };
	}
}

struct sim_result {
	double frag_share, mean_wait, makespan;
};

static void simulate(const struct sim_job *input, int n_jobs, bool first_fit,
		     struct sim_result *res)
{
	static const char *const levels[] = { "example.com/block", "example.com/rack" };
	struct sim *s = calloc(1, sizeof(*s));
	struct sim_job *jobs = calloc((size_t)n_jobs, sizeof(*jobs));
	struct adm_job *queue = calloc((size_t)n_jobs, sizeof(*queue));
	struct adm_decision *out = calloc((size_t)n_jobs, sizeof(*out));
	struct topo_request *reqs = calloc((size_t)n_jobs, sizeof(*reqs));
	int *qidx = calloc((size_t)n_jobs, sizeof(*qidx));
	struct cap_demand d = { .accel_resource = "nvidia.com/gpu", .accel_count = 8 };
	double t = 0, work = 0, frag = 0, wait = 0;
	int done = 0;

	if (!s || !jobs || !queue || !out || !reqs || !qidx)
		bench_die("out of memory");
	sim_nodes(s);
	memcpy(jobs, input, (size_t)n_jobs * sizeof(*jobs));
	while (done < n_jobs) {
		struct capacity cap;
		struct topo_map map;
		struct admission adm;
		int n_queue = 0, free_nodes = SIM_NODES;
		double next = -1;

		if (capacity_init(&cap, s->nodes, SIM_NODES, NULL) ||
		    topo_map_init(&map, &cap, levels, NULL, 2))
			bench_die("cannot set the capacity up");
		for (int j = 0; j < n_jobs; j++) {
			struct cap_resource all = { "nvidia.com/gpu", 8000 };

			if (jobs[j].start_s < 0 || t >= jobs[j].start_s + jobs[j].run_s)
				continue;
			for (int k = 0; k < jobs[j].size; k++)
				capacity_use(&cap, s->names[jobs[j].nodes[k]], 0, 0, &all, 1);
			free_nodes -= jobs[j].size;
		}
		for (int j = 0; j < n_jobs; j++) {
			if (jobs[j].start_s >= 0 || jobs[j].arrive_s > t)
				continue;
			reqs[j] = (struct topo_request){ &map, jobs[j].size <= SIM_PER_RACK ? 1 : 0,
							 -1, -1, 0, first_fit };
			qidx[n_queue] = j;
			queue[n_queue++] = (struct adm_job){ .namespace = "sim", .name = "job",
				.created_s = j, .waiting_since_s = (int64_t)jobs[j].arrive_s,
				.num_nodes = jobs[j].size,
				.demand = d, .topo = &reqs[j] };
		}
		admission_init(&adm);
		if (admission_decide(&adm, &cap, queue, (size_t)n_queue, (int64_t)t, -1, out))
			bench_die("admission failed");
		for (int q = 0; q < n_queue; q++) {
			struct sim_job *j = &jobs[qidx[q]];

			if (out[q].verdict != ADM_ADMIT)
				continue;
			j->start_s = t;
			for (int k = 0; k < j->size; k++)
				j->nodes[k] = out[q].nodes[k];
			free_nodes -= j->size;
		}
		admission_release(&adm);
		topo_map_release(&map);
		capacity_release(&cap);
		/* The next end of a running job, or the next arrival. */
		for (int j = 0; j < n_jobs; j++) {
			double e = jobs[j].start_s >= 0 ? jobs[j].start_s + jobs[j].run_s :
				   jobs[j].arrive_s;

			if (e > t && (next < 0 || e < next))
				next = e;
		}
		if (next < 0)
			bench_die("nothing runs and the queue does not move");
		/* Until then: who waits while enough nodes are free. */
		for (int j = 0; j < n_jobs; j++)
			if (jobs[j].start_s < 0 && jobs[j].arrive_s <= t && free_nodes >= jobs[j].size)
				jobs[j].frag_s += next - t;
		t = next;
		done = 0;
		for (int j = 0; j < n_jobs; j++)
			done += jobs[j].start_s >= 0 && t >= jobs[j].start_s + jobs[j].run_s;
	}
	for (int j = 0; j < n_jobs; j++) {
		work += jobs[j].run_s * jobs[j].size;
		frag += jobs[j].frag_s * jobs[j].size;
		wait += jobs[j].start_s - jobs[j].arrive_s;
	}
	res->frag_share = frag / work;
	res->mean_wait = wait / n_jobs;
	res->makespan = t;
	free(s);
	free(jobs);
	free(queue);
	free(out);
	free(reqs);
	free(qidx);
}

/* Jobs of seed: sizes 1 to 16, run 10 to 130 minutes, arriving at a rate that keeps the
 * cluster about 90% busy on average. */
static void sim_jobs(uint64_t seed, struct sim_job *jobs, int n_jobs)
{
	double t = 0;

	rng_state = seed;
	for (int j = 0; j < n_jobs; j++) {
		int size = 1 + (int)(rng() % 16);
		double run = 600 + rng() % 7200;

		jobs[j] = (struct sim_job){ .size = size, .arrive_s = t, .run_s = run,
					    .start_s = -1 };
		/* mean node-seconds per job / (0.9 x nodes): the mean gap between arrivals */
		t += (8.5 * 4200.0 / (0.9 * SIM_NODES)) * 2.0 * (rng() % 1000) / 1000.0;
	}
}

static void fragmentation(bool quick)
{
	int n_jobs = 200, seeds = quick ? 3 : 10;
	struct sim_job *jobs = calloc((size_t)n_jobs, sizeof(*jobs));
	struct sim_result best, first, sum_b = { 0 }, sum_f = { 0 };
	double min_b = 1e9, max_b = 0, min_f = 1e9, max_f = 0;
	int better = 0;

	if (!jobs)
		bench_die("out of memory");
	for (int k = 0; k < seeds; k++) {
		sim_jobs(2026 + (uint64_t)k, jobs, n_jobs);
		simulate(jobs, n_jobs, false, &best);
		simulate(jobs, n_jobs, true, &first);
		sum_b.frag_share += best.frag_share;
		sum_b.mean_wait += best.mean_wait;
		sum_b.makespan += best.makespan;
		sum_f.frag_share += first.frag_share;
		sum_f.mean_wait += first.mean_wait;
		sum_f.makespan += first.makespan;
		min_b = best.frag_share < min_b ? best.frag_share : min_b;
		max_b = best.frag_share > max_b ? best.frag_share : max_b;
		min_f = first.frag_share < min_f ? first.frag_share : min_f;
		max_f = first.frag_share > max_f ? first.frag_share : max_f;
		better += best.frag_share < first.frag_share;
	}
	printf("## Fragmentation\n\n");
	printf("Sequences of %d jobs of 1 to 16 nodes (8 GPUs each), run times 10 to 130 minutes,\n"
	       "arriving in a random order at a rate that keeps the cluster about 90%% busy, on %d\n"
	       "nodes in %d blocks of %d racks of %d. A job of up to %d nodes requires one rack, a\n"
	       "larger one one block; the queue is FIFO with backfill. \"Fragmented wait\" is the\n"
	       "GPU-time jobs spent waiting while the cluster had enough GPUs free for them, but not\n"
	       "in one domain, as a share of the GPU-time they ran. Mean over %d sequences (seeds\n"
	       "2026 to %d), min and max in brackets; the same sequences go to both policies.\n\n",
	       n_jobs, SIM_NODES, SIM_BLOCKS, SIM_RACKS, SIM_PER_RACK, SIM_PER_RACK, seeds,
	       2026 + seeds - 1);
	printf("| | best fit (cadre) | first fit |\n|---|---:|---:|\n");
	printf("| fragmented wait, share of GPU-time | %.1f%% [%.1f, %.1f] | %.1f%% [%.1f, %.1f] |\n",
	       100 * sum_b.frag_share / seeds, 100 * min_b, 100 * max_b,
	       100 * sum_f.frag_share / seeds, 100 * min_f, 100 * max_f);
	printf("| mean wait (min) | %.1f | %.1f |\n", sum_b.mean_wait / seeds / 60,
	       sum_f.mean_wait / seeds / 60);
	printf("| makespan (h) | %.2f | %.2f |\n", sum_b.makespan / seeds / 3600,
	       sum_f.makespan / seeds / 3600);
	printf("| sequences where best fit fragments less | %d of %d | |\n\n", better, seeds);
	free(jobs);
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");

	if (argc > 1 && !quick) {
		fprintf(stderr, "usage: cadre-bench-topology [--quick]\n");
		return 2;
	}
	printf("# Topology (cadre-bench-topology%s)\n\n", quick ? " --quick" : "");
	admission_cost(quick);
	fragmentation(quick);
	return 0;
}
