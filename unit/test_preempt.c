/*
 * Choosing victims for a job of a higher tier (controller/admission/preempt.h):
 * nothing when even all would not do, one when one is enough, the fewest,
 * and the order among equals (tier, priority, youngest).
 */
#include <criterion/criterion.h>

#include "base/err.h"
#include "controller/admission/preempt.h"

#define GPU "nvidia.com/gpu"
#define MAX 8

struct site {
	struct cap_node nodes[MAX];
	struct cap_resource gpus[MAX];
	char names[MAX][32];
	size_t n;
	struct capacity cap;
	struct pre_pod pods[MAX][MAX];
	struct pre_victim v[MAX];
	size_t n_v;
};

/* n nodes of 8 GPUs each. */
static void site_init(struct site *s, size_t n)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		snprintf(s->names[i], sizeof(s->names[i]), "gpu-%zu", i);
		s->gpus[i] = (struct cap_resource){ GPU, 8000 };
		s->nodes[i] = (struct cap_node){ .name = s->names[i], .ready = true,
						 .cpu_milli = 64000, .memory_milli = 1LL << 40,
						 .pods = 110, .extended = &s->gpus[i], .n_extended = 1 };
	}
	s->n = n;
	cr_assert_eq(capacity_init(&s->cap, s->nodes, n, NULL), 0);
}

/* A running gang of tier, priority, started, with 8 GPUs on each node listed (-1 ends). */
static void running(struct site *s, const char *name, int tier, int prio, int64_t started,
		    const int *nodes)
{
	struct pre_victim *v = &s->v[s->n_v];
	size_t k = 0;

	for (; nodes[k] >= 0; k++)
		s->pods[s->n_v][k] = (struct pre_pod){ .node = (uint32_t)nodes[k],
						       .ext = { { GPU, 8000 } }, .n_ext = 1,
						       .occupies = true };
	*v = (struct pre_victim){ "ml", name, tier, prio, started, s->pods[s->n_v], k };
	s->n_v++;
}

static struct adm_job wants(int nodes)
{
	return (struct adm_job){ .namespace = "ml", .name = "urgent", .tier = 10,
				 .num_nodes = nodes,
				 .demand = { .accel_resource = GPU, .accel_count = 8 } };
}

static void choose(struct site *s, int nodes, size_t *chosen, size_t *n)
{
	struct adm_job job = wants(nodes);

	cr_assert_eq(preempt_choose(&s->cap, &job, s->v, s->n_v, chosen, n), 0);
}

Test(preempt, nothing_when_even_every_candidate_gone_would_not_do)
{
	struct site s;
	size_t chosen[MAX], n = 9;

	site_init(&s, 3);
	running(&s, "a", 0, 0, 100, (int[]){ 0, -1 });
	running(&s, "b", 0, 0, 200, (int[]){ 1, -1 });
	choose(&s, 4, chosen, &n);
	cr_assert_eq(n, 0);
	capacity_release(&s.cap);
}

Test(preempt, one_gang_alone_enough_is_the_one_stopped)
{
	struct site s;
	size_t chosen[MAX], n;

	/* Two one-node gangs and a two-node gang fill 4 nodes; a two-node job needs room. */
	site_init(&s, 4);
	running(&s, "small-1", 0, 0, 100, (int[]){ 0, -1 });
	running(&s, "small-2", 0, 0, 200, (int[]){ 1, -1 });
	running(&s, "pair", 0, 5, 50, (int[]){ 2, 3, -1 });
	choose(&s, 2, chosen, &n);
	cr_assert_eq(n, 1, "the fewest gangs: the pair alone, not the two small ones");
	cr_assert_str_eq(s.v[chosen[0]].name, "pair");
	capacity_release(&s.cap);
}

Test(preempt, lowest_tier_then_priority_then_youngest_among_equals)
{
	struct site s;
	size_t chosen[MAX], n;

	site_init(&s, 4);
	running(&s, "old", 0, 0, 100, (int[]){ 0, -1 });
	running(&s, "young", 0, 0, 900, (int[]){ 1, -1 });
	running(&s, "important", 0, 50, 1000, (int[]){ 2, -1 });
	running(&s, "middle-tier", 5, 0, 2000, (int[]){ 3, -1 });
	choose(&s, 1, chosen, &n);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(s.v[chosen[0]].name, "young");
	capacity_release(&s.cap);
}

Test(preempt, several_when_no_one_is_enough_and_none_more_than_needed)
{
	struct site s;
	size_t chosen[MAX], n;

	/* Five one-node gangs on five full nodes and one free node: three nodes wanted. */
	site_init(&s, 6);
	running(&s, "e1", 0, 0, 500, (int[]){ 0, -1 });
	running(&s, "e2", 0, 0, 400, (int[]){ 1, -1 });
	running(&s, "e3", 0, 0, 300, (int[]){ 2, -1 });
	running(&s, "e4", 0, 0, 200, (int[]){ 3, -1 });
	running(&s, "e5", 0, 0, 100, (int[]){ 4, -1 });
	choose(&s, 3, chosen, &n);
	cr_assert_eq(n, 2, "one free node and two stopped");
	cr_assert_str_eq(s.v[chosen[0]].name, "e1", "the youngest first");
	cr_assert_str_eq(s.v[chosen[1]].name, "e2");
	/* cap is left as the choice makes it: the job fits now. */
	{
		struct adm_job job = wants(3);
		bool fits;

		cr_assert_eq(admission_fits(&s.cap, &job, NULL, &fits), 0);
		cr_assert(fits);
	}
	capacity_release(&s.cap);
}

Test(preempt, a_prefix_is_pruned_of_gangs_the_rest_can_do_without)
{
	struct site s;
	size_t chosen[MAX], n;

	/* The youngest holds one node; two nodes are wanted and only the pairs give two. */
	site_init(&s, 5);
	running(&s, "tiny", 0, 0, 900, (int[]){ 0, -1 });
	running(&s, "pair-a", 0, 0, 500, (int[]){ 1, 2, -1 });
	running(&s, "pair-b", 0, 0, 400, (int[]){ 3, 4, -1 });
	choose(&s, 4, chosen, &n);
	cr_assert_eq(n, 2, "both pairs, and not the tiny one taken first");
	cr_assert_str_eq(s.v[chosen[0]].name, "pair-a");
	cr_assert_str_eq(s.v[chosen[1]].name, "pair-b");
	capacity_release(&s.cap);
}

Test(preempt, no_candidates_choose_nothing_and_a_bad_job_is_refused)
{
	struct site s;
	size_t chosen[MAX], n = 3;
	struct adm_job bad = wants(0);

	site_init(&s, 1);
	choose(&s, 1, chosen, &n);
	cr_assert_eq(n, 0);
	cr_assert_eq(preempt_choose(&s.cap, &bad, s.v, 0, chosen, &n), CADRE_EINVAL);
	capacity_release(&s.cap);
}

/* A job that lists its node is made room for there, whoever is younger elsewhere. */
Test(preempt, a_listed_node_is_freed_whoever_is_youngest_elsewhere)
{
	static const char *const listed[] = { "gpu-1" };
	struct site s;
	size_t chosen[MAX], n;
	struct adm_job job;

	site_init(&s, 2);
	running(&s, "on-listed", 0, 0, 100, (int[]){ 1, -1 });
	running(&s, "youngest", 0, 0, 900, (int[]){ 0, -1 });
	job = wants(1);
	job.demand.required = listed;
	job.demand.n_required = 1;
	cr_assert_eq(preempt_choose(&s.cap, &job, s.v, s.n_v, chosen, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(s.v[chosen[0]].name, "on-listed");
	capacity_release(&s.cap);
}

/* Counting rooms never picks a gang whose nodes the job cannot use. */
Test(preempt, a_gang_on_nodes_the_job_cannot_use_is_never_enough_alone)
{
	struct site s;
	size_t chosen[MAX], n;

	site_init(&s, 3);
	s.nodes[2].unschedulable = true;  /* cordoned: nothing new goes there */
	capacity_release(&s.cap);
	cr_assert_eq(capacity_init(&s.cap, s.nodes, 3, NULL), 0);
	running(&s, "on-cordoned", 0, 0, 900, (int[]){ 2, -1 });
	running(&s, "a", 0, 0, 100, (int[]){ 0, -1 });
	running(&s, "b", 0, 0, 200, (int[]){ 1, -1 });
	choose(&s, 1, chosen, &n);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(s.v[chosen[0]].name, "b", "the youngest on a usable node");
	capacity_release(&s.cap);
}
