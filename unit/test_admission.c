/*
 * The admission queue: order, backfill, the starvation guard and its limits,
 * reservations, and how long a large pass takes.
 */
#include <criterion/criterion.h>

#include <time.h>

#include "base/err.h"
#include "controller/admission/admission.h"

#define GPU "nvidia.com/gpu"
#define H100 "NVIDIA-H100-80GB-HBM3"
#define A100 "NVIDIA-A100-SXM4-80GB"
#define NOW 1000000
#define STARVE ADM_DEFAULT_STARVATION_SECONDS
#define MAX_NODES 8

struct cluster {
	struct cap_node nodes[MAX_NODES];
	struct cap_resource gpus[MAX_NODES];
	struct cap_label labels[MAX_NODES];
	size_t n;
};

static void add_gpu_node(struct cluster *cl, const char *name, int gpus, const char *product)
{
	size_t i = cl->n++;

	cl->gpus[i] = (struct cap_resource){ GPU, gpus * 1000LL };
	cl->labels[i] = (struct cap_label){ "nvidia.com/gpu.product", product };
	cl->nodes[i] = (struct cap_node){
		.name = name, .ready = true, .cpu_milli = 64000, .memory_milli = 512LL << 40,
		.pods = 110, .extended = &cl->gpus[i], .n_extended = gpus ? 1 : 0,
		.labels = &cl->labels[i], .n_labels = product ? 1 : 0,
	};
}

/* Node name busy with `used` GPUs of pods already bound. */
static void use_gpus(struct capacity *c, const char *node, int used)
{
	struct cap_resource r = { GPU, used * 1000LL };

	cr_assert_eq(capacity_use(c, node, 0, 0, &r, 1), 0);
}

static struct adm_job job(const char *name, int nodes, int gpus, const char *type)
{
	return (struct adm_job){
		.namespace = "research", .name = name, .created_s = NOW - 100,
		.waiting_since_s = NOW - 100, .num_nodes = nodes,
		.demand = { .accel_resource = GPU, .accel_count = gpus, .accel_type = type },
	};
}

struct pass {
	struct admission adm;
	struct capacity cap;
	struct adm_decision out[16];
};

static void pass_init(struct pass *p, const struct cluster *cl)
{
	admission_init(&p->adm);
	cr_assert_eq(capacity_init(&p->cap, cl->nodes, cl->n, NULL), 0);
}

static void pass_run(struct pass *p, const struct adm_job *jobs, size_t n, int64_t starvation_s)
{
	cr_assert_leq(n, 16);
	cr_assert_eq(admission_decide(&p->adm, &p->cap, jobs, n, NOW, starvation_s, p->out), 0);
}

static void pass_release(struct pass *p)
{
	capacity_release(&p->cap);
	admission_release(&p->adm);
}

static void assert_admitted(const struct adm_decision *d, const char *what)
{
	cr_assert_eq(d->verdict, ADM_ADMIT, "%s waits: %s", what, d->message);
	cr_assert_eq(d->reason, ADM_REASON_ADMITTED);
	cr_assert_not_null(d->nodes);
}

static void assert_waits(const struct adm_decision *d, enum adm_reason reason, const char *what)
{
	cr_assert_eq(d->verdict, ADM_WAIT, "%s admitted: %s", what, d->message);
	cr_assert_eq(d->reason, reason, "%s: %s (%s)", what, adm_reason_name(d->reason), d->message);
	cr_assert_null(d->nodes);
}

Test(admission, a_job_that_fits_is_admitted_with_its_nodes)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[1];
	struct pass p;

	add_gpu_node(&cl, "gpu-a", 8, H100);
	add_gpu_node(&cl, "gpu-b", 8, H100);
	jobs[0] = job("llama", 2, 8, "H100");
	pass_init(&p, &cl);
	pass_run(&p, jobs, 1, STARVE);
	assert_admitted(&p.out[0], "llama");
	cr_assert_eq(p.out[0].nodes[0], 0);
	cr_assert_eq(p.out[0].nodes[1], 1);
	cr_assert_str_eq(p.out[0].message, "admitted: 2 pods on gpu-a, gpu-b");
	pass_release(&p);
}

/* One node, every job wants all of it: the one admitted is the head of the queue. */
Test(admission, queue_order_is_priority_then_age_then_name)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[4];
	struct pass p;

	add_gpu_node(&cl, "gpu-a", 8, H100);
	jobs[0] = job("old-low", 1, 8, NULL);
	jobs[0].created_s = NOW - 5000;
	jobs[1] = job("new-high", 1, 8, NULL);
	jobs[1].priority = 10;
	jobs[1].created_s = NOW - 10;
	jobs[2] = job("b-mid", 1, 8, NULL);
	jobs[2].priority = 5;
	jobs[3] = job("a-mid", 1, 8, NULL);
	jobs[3].priority = 5;
	pass_init(&p, &cl);
	pass_run(&p, jobs, 4, STARVE);
	assert_admitted(&p.out[1], "new-high");
	cr_assert_eq(p.out[1].position, 0);
	cr_assert_eq(p.out[3].position, 1, "same priority and age: a-mid before b-mid");
	cr_assert_eq(p.out[2].position, 2);
	cr_assert_eq(p.out[0].position, 3, "oldest, but lowest priority");
	assert_waits(&p.out[3], ADM_REASON_INSUFFICIENT_CAPACITY, "a-mid");
	pass_release(&p);

	/* Same priority: the older goes first. */
	jobs[1].priority = 0;
	jobs[2].priority = 0;
	jobs[3].priority = 0;
	pass_init(&p, &cl);
	pass_run(&p, jobs, 4, STARVE);
	assert_admitted(&p.out[0], "old-low");
	pass_release(&p);
}

Test(admission, admitted_jobs_take_capacity_from_the_jobs_behind_them)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[3];
	struct pass p;

	add_gpu_node(&cl, "gpu-a", 8, H100);
	add_gpu_node(&cl, "gpu-b", 8, H100);
	jobs[0] = job("first", 1, 8, "H100");
	jobs[1] = job("second", 1, 8, "H100");
	jobs[2] = job("third", 1, 8, "H100");
	jobs[1].created_s++;
	jobs[2].created_s += 2;
	pass_init(&p, &cl);
	pass_run(&p, jobs, 3, STARVE);
	assert_admitted(&p.out[0], "first");
	assert_admitted(&p.out[1], "second");
	cr_assert_neq(p.out[0].nodes[0], p.out[1].nodes[0]);
	assert_waits(&p.out[2], ADM_REASON_INSUFFICIENT_CAPACITY, "third");
	cr_assert_str_eq(p.out[2].message,
			 "needs 1 node with 8 nvidia.com/gpu of type H100; 0 nodes have room");
	pass_release(&p);
}

Test(admission, a_big_head_job_does_not_block_smaller_jobs_behind_it)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[2];
	struct pass p;

	add_gpu_node(&cl, "gpu-a", 8, H100);
	add_gpu_node(&cl, "gpu-b", 8, H100);
	jobs[0] = job("big", 2, 8, "H100");
	jobs[0].priority = 1;
	jobs[0].waiting_since_s = NOW - STARVE + 1;  /* not yet starving */
	jobs[1] = job("small", 1, 4, "H100");
	pass_init(&p, &cl);
	use_gpus(&p.cap, "gpu-a", 4);
	pass_run(&p, jobs, 2, STARVE);
	assert_waits(&p.out[0], ADM_REASON_INSUFFICIENT_CAPACITY, "big");
	cr_assert_not(p.out[0].starving);
	cr_assert_str_eq(p.out[0].message,
			 "needs 2 nodes with 8 nvidia.com/gpu of type H100; 1 node has room");
	assert_admitted(&p.out[1], "small");
	pass_release(&p);
}

Test(admission, a_starving_head_job_holds_the_nodes_it_needs)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[2];
	struct pass p;

	add_gpu_node(&cl, "gpu-a", 8, H100);
	add_gpu_node(&cl, "gpu-b", 8, H100);
	jobs[0] = job("big", 2, 8, "H100");
	jobs[0].priority = 1;
	jobs[0].waiting_since_s = NOW - STARVE;  /* exactly the limit: starving */
	jobs[1] = job("small", 1, 4, "H100");
	pass_init(&p, &cl);
	use_gpus(&p.cap, "gpu-a", 4);
	pass_run(&p, jobs, 2, STARVE);
	assert_waits(&p.out[0], ADM_REASON_INSUFFICIENT_CAPACITY, "big");
	cr_assert(p.out[0].starving);
	cr_assert_str_eq(p.out[0].message,
			 "needs 2 nodes with 8 nvidia.com/gpu of type H100; 1 node has room; "
			 "waiting 10m, so no job behind it may use the nodes it needs");
	assert_waits(&p.out[1], ADM_REASON_QUEUED_BEHIND, "small");
	cr_assert_str_eq(p.out[1].message,
			 "fits, but on nodes held for research/big, which has waited 10m "
			 "(longer than 10m) and goes first");
	pass_release(&p);
}

Test(admission, the_guard_can_be_turned_off)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[2];
	struct pass p;

	add_gpu_node(&cl, "gpu-a", 8, H100);
	add_gpu_node(&cl, "gpu-b", 8, H100);
	jobs[0] = job("big", 2, 8, "H100");
	jobs[0].priority = 1;
	jobs[0].waiting_since_s = NOW - 100000;
	jobs[1] = job("small", 1, 4, "H100");
	pass_init(&p, &cl);
	use_gpus(&p.cap, "gpu-a", 4);
	pass_run(&p, jobs, 2, -1);
	cr_assert_not(p.out[0].starving);
	assert_admitted(&p.out[1], "small");
	pass_release(&p);
}

Test(admission, a_job_that_could_never_fit_holds_nothing)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[2];
	struct pass p;

	add_gpu_node(&cl, "gpu-a", 8, H100);
	add_gpu_node(&cl, "gpu-b", 8, H100);
	jobs[0] = job("huge", 3, 8, "H100");  /* three nodes of 8 in a two-node cluster */
	jobs[0].priority = 1;
	jobs[0].waiting_since_s = NOW - 100000;
	jobs[1] = job("small", 1, 8, "H100");
	pass_init(&p, &cl);
	pass_run(&p, jobs, 2, STARVE);
	assert_waits(&p.out[0], ADM_REASON_INSUFFICIENT_CAPACITY, "huge");
	cr_assert_not(p.out[0].starving);
	cr_assert_str_eq(p.out[0].message,
			 "needs 3 nodes with 8 nvidia.com/gpu of type H100; the 2 eligible nodes "
			 "could hold only 2 even if empty");
	assert_admitted(&p.out[1], "small");
	pass_release(&p);
}

/* The guard holds only what the starving job could use: other accelerators stay open. */
Test(admission, a_starving_job_holds_only_nodes_it_could_use)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[3];
	struct pass p;

	add_gpu_node(&cl, "h100-a", 8, H100);
	add_gpu_node(&cl, "h100-b", 8, H100);
	add_gpu_node(&cl, "a100-a", 8, A100);
	add_gpu_node(&cl, "cpu-a", 0, NULL);
	jobs[0] = job("big", 2, 8, "H100");
	jobs[0].priority = 1;
	jobs[0].waiting_since_s = NOW - STARVE - 1;
	jobs[1] = job("a100-job", 1, 8, "A100");
	jobs[2] = job("cpu-job", 1, 0, NULL);
	jobs[2].demand = (struct cap_demand){ .cpu_milli = 4000 };
	pass_init(&p, &cl);
	use_gpus(&p.cap, "h100-a", 1);
	pass_run(&p, jobs, 3, STARVE);
	cr_assert(p.out[0].starving);
	assert_admitted(&p.out[1], "a100-job");
	cr_assert_eq(p.out[1].nodes[0], 2);
	/* The CPU job may run on every node; the GPU nodes are held, the CPU node is not. */
	assert_admitted(&p.out[2], "cpu-job");
	cr_assert_eq(p.out[2].nodes[0], 2, "the first node not held: a100-a");
	pass_release(&p);
}

/*
 * Of the nodes it could use, a starving job holds the ones with the most
 * room now, just enough for its gang; the rest stay open to backfill.
 */
Test(admission, a_starving_job_holds_the_freest_nodes_and_no_more)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[2];
	struct pass p;

	add_gpu_node(&cl, "n0", 8, H100);
	add_gpu_node(&cl, "n1", 8, H100);
	add_gpu_node(&cl, "n2", 8, H100);
	add_gpu_node(&cl, "n3", 8, H100);
	jobs[0] = job("big", 2, 8, "H100");
	jobs[0].priority = 1;
	jobs[0].waiting_since_s = NOW - STARVE - 1;
	jobs[1] = job("small", 1, 2, "H100");
	pass_init(&p, &cl);
	use_gpus(&p.cap, "n0", 6);  /* 2 free */
	use_gpus(&p.cap, "n1", 2);  /* 6 free: held */
	use_gpus(&p.cap, "n2", 8);  /* full */
	use_gpus(&p.cap, "n3", 4);  /* 4 free: held */
	pass_run(&p, jobs, 2, STARVE);
	cr_assert(p.out[0].starving);
	assert_admitted(&p.out[1], "small");
	cr_assert_eq(p.out[1].nodes[0], 0, "small went to n%u, not n0", p.out[1].nodes[0]);
	pass_release(&p);

	/* Two GPUs more on n0 and small has nowhere to go but held nodes. */
	pass_init(&p, &cl);
	use_gpus(&p.cap, "n0", 8);
	use_gpus(&p.cap, "n1", 2);
	use_gpus(&p.cap, "n2", 8);
	use_gpus(&p.cap, "n3", 4);
	pass_run(&p, jobs, 2, STARVE);
	assert_waits(&p.out[1], ADM_REASON_QUEUED_BEHIND, "small");
	pass_release(&p);
}

/* A higher-priority job is ahead of a starving one and is not held back by it. */
Test(admission, priority_still_goes_before_a_starving_job)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[2];
	struct pass p;

	add_gpu_node(&cl, "gpu-a", 8, H100);
	add_gpu_node(&cl, "gpu-b", 8, H100);
	jobs[0] = job("starving", 2, 8, "H100");
	jobs[0].waiting_since_s = NOW - 100000;
	jobs[1] = job("urgent", 1, 4, "H100");
	jobs[1].priority = 100;
	pass_init(&p, &cl);
	use_gpus(&p.cap, "gpu-a", 4);
	pass_run(&p, jobs, 2, STARVE);
	assert_admitted(&p.out[1], "urgent");
	cr_assert(p.out[0].starving);
	pass_release(&p);
}

/* An admitted gang whose pods are not bound yet still owns its GPUs. */
Test(admission, reservations_of_admitted_gangs_prevent_double_admission)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[1];
	struct cap_demand admitted = { .accel_resource = GPU, .accel_count = 8,
				       .accel_type = "H100" };
	struct pass p;

	add_gpu_node(&cl, "gpu-a", 8, H100);
	add_gpu_node(&cl, "gpu-b", 8, H100);
	jobs[0] = job("next", 1, 8, "H100");
	pass_init(&p, &cl);
	cr_assert_eq(capacity_reserve(&p.cap, &admitted, 1, "gpu-a", NULL), 0);
	cr_assert_eq(capacity_reserve(&p.cap, &admitted, 1, NULL, NULL), 0);
	pass_run(&p, jobs, 1, STARVE);
	assert_waits(&p.out[0], ADM_REASON_INSUFFICIENT_CAPACITY, "next");
	pass_release(&p);

	/* Without the reservations the same job fits. */
	pass_init(&p, &cl);
	pass_run(&p, jobs, 1, STARVE);
	assert_admitted(&p.out[0], "next");
	pass_release(&p);
}

/* Two passes in a row: the second allocates nothing new and sees the first's admissions. */
Test(admission, decide_takes_admitted_demand_off_the_capacity)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[1];
	struct pass p;

	add_gpu_node(&cl, "gpu-a", 8, H100);
	jobs[0] = job("only", 1, 8, "H100");
	pass_init(&p, &cl);
	pass_run(&p, jobs, 1, STARVE);
	assert_admitted(&p.out[0], "only");
	pass_run(&p, jobs, 1, STARVE);
	assert_waits(&p.out[0], ADM_REASON_INSUFFICIENT_CAPACITY, "only, again");
	pass_release(&p);
}

Test(admission, refuses_a_job_without_pods)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[1];
	struct pass p;

	add_gpu_node(&cl, "gpu-a", 8, H100);
	jobs[0] = job("empty", 0, 8, "H100");
	pass_init(&p, &cl);
	cr_assert_eq(admission_decide(&p.adm, &p.cap, jobs, 1, NOW, STARVE, p.out), CADRE_EINVAL);
	pass_release(&p);
}

Test(admission, reason_names_are_the_condition_reasons)
{
	cr_assert_str_eq(adm_reason_name(ADM_REASON_ADMITTED), "Admitted");
	cr_assert_str_eq(adm_reason_name(ADM_REASON_INSUFFICIENT_CAPACITY), "InsufficientCapacity");
	cr_assert_str_eq(adm_reason_name(ADM_REASON_QUEUED_BEHIND), "QueuedBehind");
}

/* CPU time of this thread: the machine is shared, so wall time says little. */
static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	return (double)(now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) / 1e9;
}

/*
 * 500 nodes (10 not ready), 40,000 bound pods, 1000 queued jobs of mixed
 * shapes (1 to 16 pods of 1 to 8 GPUs of three types): prints the
 * time of one whole pass. Timing varies with the machine and the
 * sanitizers, so it is reported, not asserted; what is asserted is that the
 * pass admits what fits and never admits more than the cluster holds.
 */
Test(admission, a_large_pass_is_fast, .timeout = 300)
{
	enum { NODES = 500, JOBS = 1000, PODS = 40000 };
	static const char *const products[] = { H100, A100, "NVIDIA-L40S" };
	static const char *const types[] = { "H100", "A100", "L40S" };
	struct cap_node *nodes = calloc(NODES, sizeof(*nodes));
	struct cap_resource *gpus = calloc(NODES, sizeof(*gpus));
	struct cap_label *labels = calloc(NODES * 2, sizeof(*labels));
	char (*names)[16] = calloc(NODES, sizeof(*names));
	struct adm_job *jobs = calloc(JOBS, sizeof(*jobs));
	char (*job_names)[16] = calloc(JOBS, sizeof(*job_names));
	struct adm_decision *out = calloc(JOBS, sizeof(*out));
	struct cap_resource one = { GPU, 1000 };
	struct admission adm;
	struct capacity cap;
	struct timespec start;
	double build_s, decide_s, again_s;
	long admitted_gpus = 0, admitted = 0, free_gpus = 0;

	for (int i = 0; i < NODES; i++) {
		snprintf(names[i], sizeof(names[i]), "node-%03d", i);
		gpus[i] = (struct cap_resource){ GPU, 8000 };
		labels[2 * i] = (struct cap_label){ "nvidia.com/gpu.product", products[i % 3] };
		labels[2 * i + 1] = (struct cap_label){ "kubernetes.io/hostname", names[i] };
		nodes[i] = (struct cap_node){ .name = names[i], .ready = i % 50 != 7,
			.cpu_milli = 192000, .memory_milli = 2048LL << 40, .pods = 250,
			.extended = &gpus[i], .n_extended = 1, .labels = &labels[2 * i], .n_labels = 2 };
	}
	for (int j = 0; j < JOBS; j++) {
		snprintf(job_names[j], sizeof(job_names[j]), "job-%04d", j);
		jobs[j] = (struct adm_job){ .namespace = "bench", .name = job_names[j],
			.priority = j % 7, .created_s = NOW - 10 * j, .waiting_since_s = NOW - 10 * j,
			.num_nodes = 1 + j % 16,
			.demand = { .cpu_milli = 4000 * (1 + j % 4), .memory_milli = (16LL << 30) * 1000,
				    .accel_resource = GPU, .accel_count = 1 << (j % 4),
				    .accel_type = types[j % 3] } };
	}

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	admission_init(&adm);
	cr_assert_eq(capacity_init(&cap, nodes, NODES, NULL), 0);
	/* A quarter of the GPUs busy (two on every node), and CPU pods everywhere. */
	for (int p = 0; p < PODS; p++)
		if (p < 2 * NODES)
			capacity_use(&cap, names[p % NODES], 500, 1LL << 30, &one, 1);
		else
			capacity_use(&cap, names[(p * 7) % NODES], 100, 0, NULL, 0);
	for (int i = 0; i < NODES; i++)
		free_gpus += nodes[i].ready ? 6 : 0;
	build_s = seconds_since(&start);

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	cr_assert_eq(admission_decide(&adm, &cap, jobs, JOBS, NOW, STARVE, out), 0);
	decide_s = seconds_since(&start);
	for (int j = 0; j < JOBS; j++)
		if (out[j].verdict == ADM_ADMIT) {
			admitted++;
			admitted_gpus += jobs[j].num_nodes * jobs[j].demand.accel_count;
		}
	cr_assert_gt(admitted, 0);
	cr_assert_leq(admitted_gpus, free_gpus);

	/* A second pass over what is left: scratch is reused, nothing fits twice. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	cr_assert_eq(admission_decide(&adm, &cap, jobs, JOBS, NOW, STARVE, out), 0);
	again_s = seconds_since(&start);

	fprintf(stderr, "admission: %d nodes, %d bound pods, %d jobs: capacity in %.2f ms, "
		"decided in %.2f ms (%ld admitted, %ld GPUs), again in %.2f ms of CPU\n",
		NODES, PODS, JOBS, build_s * 1e3, decide_s * 1e3, admitted, admitted_gpus,
		again_s * 1e3);
	capacity_release(&cap);
	admission_release(&adm);
	free(nodes);
	free(gpus);
	free(labels);
	free(names);
	free(jobs);
	free(job_names);
	free(out);
}

/* docs/design.md 3.5: a higher Partition tier goes first, whatever the priorities. */
Test(admission, a_higher_tier_goes_first_whatever_the_priority)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[2];
	struct pass p;

	add_gpu_node(&cl, "gpu-1", 8, H100);
	jobs[0] = job("scavenger", 1, 8, NULL);
	jobs[0].priority = 1000;
	jobs[1] = job("urgent", 1, 8, NULL);
	jobs[1].tier = 5;
	pass_init(&p, &cl);
	pass_run(&p, jobs, 2, STARVE);
	assert_admitted(&p.out[1], "urgent");
	cr_assert_eq(p.out[0].verdict, ADM_WAIT);
	cr_assert(admission_before(&jobs[1], &jobs[0]));
	pass_release(&p);
}

/* A preemptor whose victims are stopping holds what they free at once, and says why. */
Test(admission, a_preemptor_holds_the_nodes_it_needs_and_the_jobs_behind_are_told)
{
	struct cluster cl = { 0 };
	struct adm_job jobs[2];
	struct pass p;

	add_gpu_node(&cl, "gpu-1", 8, H100);
	add_gpu_node(&cl, "gpu-2", 8, H100);
	jobs[0] = job("urgent", 2, 8, NULL);
	jobs[0].tier = 5;
	jobs[0].holds = "preempted 1 job to run";
	jobs[1] = job("small", 1, 8, NULL);
	pass_init(&p, &cl);
	use_gpus(&p.cap, "gpu-1", 8);  /* the victim's pod, still stopping */
	pass_run(&p, jobs, 2, -1);
	cr_assert_eq(p.out[0].verdict, ADM_WAIT);
	cr_assert(p.out[0].starving);
	cr_assert(strstr(p.out[0].message, "it preempted 1 job to run, so no job behind it"),
		  "%s", p.out[0].message);
	cr_assert_eq(p.out[1].verdict, ADM_WAIT, "gpu-2 is held: %s", p.out[1].message);
	cr_assert_eq(p.out[1].reason, ADM_REASON_QUEUED_BEHIND);
	cr_assert(strstr(p.out[1].message, "held for research/urgent, which preempted 1 job"),
		  "%s", p.out[1].message);
	pass_release(&p);
}
