/*
 * The capacity model: exact arithmetic on milli-units, several pods per
 * node, which nodes a pod may use, reservations, and the messages a person
 * reads when a gang does not fit.
 */
#include <criterion/criterion.h>

#include "base/buf.h"
#include "base/err.h"
#include "api/quantity.h"
#include "controller/admission/capacity.h"

#define MAX_NODES 16
#define H100 "NVIDIA-H100-80GB-HBM3"
#define A100 "NVIDIA-A100-SXM4-80GB"
#define GPU "nvidia.com/gpu"

/* A small cluster whose nodes point into arrays it owns. */
struct cluster {
	struct cap_node nodes[MAX_NODES];
	struct cap_resource ext[MAX_NODES][2];
	struct cap_label labels[MAX_NODES][4];
	struct cap_taint taints[MAX_NODES][4];
	size_t n;
};

static int64_t q(const char *text)
{
	int64_t milli = 0;

	cr_assert_eq(quantity_parse(text, &milli), 0, "quantity %s", text);
	return milli;
}

/* A ready node; gpus 0 and product NULL for a CPU node. */
static struct cap_node *add_node(struct cluster *cl, const char *name, const char *cpu,
				 const char *memory, int gpus, const char *product)
{
	size_t i = cl->n++;
	struct cap_node *n = &cl->nodes[i];

	cr_assert_lt(i, MAX_NODES);
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->ready = true;
	n->cpu_milli = q(cpu);
	n->memory_milli = q(memory);
	n->pods = 110;
	n->extended = cl->ext[i];
	n->labels = cl->labels[i];
	n->taints = cl->taints[i];
	cl->labels[i][n->n_labels++] = (struct cap_label){ "kubernetes.io/hostname", name };
	if (gpus) {
		cl->ext[i][n->n_extended++] = (struct cap_resource){ GPU, gpus * 1000LL };
		cl->labels[i][n->n_labels++] = (struct cap_label){ "nvidia.com/gpu.product", product };
	}
	return n;
}

static void add_label(struct cluster *cl, struct cap_node *n, const char *key, const char *value)
{
	cl->labels[n - cl->nodes][n->n_labels++] = (struct cap_label){ key, value };
}

static void add_taint(struct cluster *cl, struct cap_node *n, const char *key, const char *value,
		      enum cap_effect effect)
{
	cl->taints[n - cl->nodes][n->n_taints++] = (struct cap_taint){ key, value, effect };
}

static void init(struct capacity *c, const struct cluster *cl)
{
	cr_assert_eq(capacity_init(c, cl->nodes, cl->n, NULL), 0);
}

static struct cap_demand gpus(int count, const char *type)
{
	return (struct cap_demand){ .accel_resource = GPU, .accel_count = count, .accel_type = type };
}

static struct cap_fit fit_of(const struct capacity *c, const struct cap_demand *d, int count)
{
	struct cap_fit fit;

	cr_assert_eq(capacity_fit(c, d, count, NULL, NULL, &fit), 0);
	return fit;
}

static void assert_message(const struct capacity *c, const struct cap_demand *d, int count,
			   const char *want)
{
	struct cap_fit fit = fit_of(c, d, count);
	struct buf msg;

	cr_assert_not(fit.fits);
	buf_init(&msg, 1024);
	cr_assert_eq(capacity_describe(c, d, count, &fit, &msg), 0);
	cr_assert_str_eq(buf_str(&msg), want);
	buf_release(&msg);
}

Test(capacity, exact_quantities_fit_and_one_byte_more_does_not)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = { .cpu_milli = q("2"), .memory_milli = q("8Gi") };

	add_node(&cl, "n0", "4", "16Gi", 0, NULL);
	init(&c, &cl);
	cr_assert(fit_of(&c, &d, 2).fits);
	cr_assert_not(fit_of(&c, &d, 3).fits);
	d.memory_milli = q("8Gi") + 1000;  /* one byte more: only one pod fits */
	cr_assert_not(fit_of(&c, &d, 2).fits);
	cr_assert_eq(fit_of(&c, &d, 2).room, 1);
	d = (struct cap_demand){ .cpu_milli = q("1500m") };
	cr_assert_eq(fit_of(&c, &d, 5).room, 2);  /* 4 / 1.5 */
	d.cpu_milli = q("1334m");
	cr_assert_eq(fit_of(&c, &d, 5).room, 2);  /* 3 * 1.334 = 4.002 > 4 */
	d.cpu_milli = q("1333m");
	cr_assert_eq(fit_of(&c, &d, 5).room, 3);
	capacity_release(&c);
}

Test(capacity, several_pods_share_a_node_when_the_demand_is_small)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = gpus(2, "H100");
	uint32_t placement[8];
	struct cap_fit fit;

	add_node(&cl, "gpu-a", "64", "512Gi", 8, H100);
	add_node(&cl, "gpu-b", "64", "512Gi", 8, H100);
	init(&c, &cl);
	cr_assert_eq(capacity_fit(&c, &d, 8, NULL, placement, &fit), 0);
	cr_assert(fit.fits);
	for (int p = 0; p < 8; p++)
		cr_assert_eq(placement[p], p < 4 ? 0u : 1u, "pod %d on node %u", p, placement[p]);
	cr_assert_not(fit_of(&c, &d, 9).fits);
	cr_assert_eq(fit_of(&c, &d, 9).room, 8);
	capacity_release(&c);
}

Test(capacity, the_pod_limit_of_a_node_counts)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = { .cpu_milli = q("100m") };

	add_node(&cl, "small", "64", "64Gi", 0, NULL)->pods = 3;
	init(&c, &cl);
	cr_assert(fit_of(&c, &d, 3).fits);
	cr_assert_not(fit_of(&c, &d, 4).fits);
	cr_assert_eq(capacity_use(&c, "small", 0, 0, NULL, 0), 0);
	cr_assert_not(fit_of(&c, &d, 3).fits);
	capacity_release(&c);
}

Test(capacity, bound_pods_use_capacity_and_unknown_nodes_are_reported)
{
	static const struct cap_resource six[] = { { GPU, 6000 } };
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = gpus(4, "H100");

	add_node(&cl, "gpu-a", "64", "512Gi", 8, H100);
	init(&c, &cl);
	cr_assert(fit_of(&c, &d, 2).fits);
	cr_assert_eq(capacity_use(&c, "gpu-a", q("8"), q("64Gi"), six, 1), 0);
	cr_assert_not(fit_of(&c, &d, 1).fits);
	d.accel_count = 2;
	cr_assert(fit_of(&c, &d, 1).fits);
	cr_assert_eq(capacity_use(&c, "gone", 1000, 0, NULL, 0), CADRE_ENOTFOUND);
	capacity_release(&c);
}

Test(capacity, accelerator_type_is_matched_through_the_label)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = gpus(8, "h100");  /* case does not matter */
	uint32_t placement[1];
	struct cap_fit fit;

	add_node(&cl, "a100-0", "64", "512Gi", 8, A100);
	add_node(&cl, "h100-0", "64", "512Gi", 8, H100);
	add_node(&cl, "cpu-0", "64", "512Gi", 0, NULL);
	init(&c, &cl);
	cr_assert_eq(capacity_fit(&c, &d, 1, NULL, placement, &fit), 0);
	cr_assert(fit.fits);
	cr_assert_eq(placement[0], 1);
	cr_assert_not(fit_of(&c, &d, 2).fits);
	cr_assert_eq(fit_of(&c, &d, 2).wrong_accel, 2);
	d.accel_type = "B200";
	assert_message(&c, &d, 1, "no node has accelerator type B200 (label nvidia.com/gpu.product)");
	/* No type: any node with the resource. */
	d.accel_type = NULL;
	cr_assert(fit_of(&c, &d, 2).fits);
	capacity_release(&c);
}

Test(capacity, the_accelerator_label_key_is_the_controllers)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = gpus(8, "H100");
	struct cap_node *n = add_node(&cl, "gpu-a", "64", "512Gi", 8, A100);

	add_label(&cl, n, "example.com/accelerator", "h100-sxm");
	cr_assert_eq(capacity_init(&c, cl.nodes, cl.n, "example.com/accelerator"), 0);
	cr_assert(fit_of(&c, &d, 1).fits);
	capacity_release(&c);
}

Test(capacity, not_ready_and_cordoned_nodes_are_left_out)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = gpus(8, "H100");
	struct cap_fit fit;

	add_node(&cl, "gpu-a", "64", "512Gi", 8, H100)->ready = false;
	add_node(&cl, "gpu-b", "64", "512Gi", 8, H100)->unschedulable = true;
	add_node(&cl, "gpu-c", "64", "512Gi", 8, H100);
	init(&c, &cl);
	fit = fit_of(&c, &d, 2);
	cr_assert_not(fit.fits);
	cr_assert_eq(fit.not_ready, 1);
	cr_assert_eq(fit.unschedulable, 1);
	cr_assert_eq(fit.eligible, 1);
	assert_message(&c, &d, 2,
		       "needs 2 nodes with 8 nvidia.com/gpu of type H100; the 1 eligible node "
		       "could hold only 1 even if empty; not counted: 1 not ready, 1 cordoned");
	cr_assert(fit_of(&c, &d, 1).fits);
	capacity_release(&c);
}

Test(capacity, taints_keep_pods_off_unless_tolerated)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_toleration equal = { "dedicated", CAP_TOLERATE_EQUAL, "training", CAP_NO_SCHEDULE };
	struct cap_toleration other_value = { "dedicated", CAP_TOLERATE_EQUAL, "infer", CAP_EFFECT_ANY };
	struct cap_toleration exists_all = { NULL, CAP_TOLERATE_EXISTS, NULL, CAP_EFFECT_ANY };
	struct cap_toleration wrong_effect = { "dedicated", CAP_TOLERATE_EXISTS, NULL, CAP_NO_EXECUTE };
	struct cap_demand d = { .cpu_milli = q("1") };
	struct cap_node *n;

	n = add_node(&cl, "n0", "4", "8Gi", 0, NULL);
	add_taint(&cl, n, "dedicated", "training", CAP_NO_SCHEDULE);
	add_taint(&cl, n, "spot", "true", CAP_PREFER_NO_SCHEDULE);  /* only a preference */
	init(&c, &cl);
	cr_assert_eq(fit_of(&c, &d, 1).tainted, 1);
	d.tolerations = &equal;
	d.n_tolerations = 1;
	cr_assert(fit_of(&c, &d, 1).fits);
	d.tolerations = &other_value;
	cr_assert_not(fit_of(&c, &d, 1).fits);
	d.tolerations = &wrong_effect;
	cr_assert_not(fit_of(&c, &d, 1).fits);
	d.tolerations = &exists_all;
	cr_assert(fit_of(&c, &d, 1).fits);
	capacity_release(&c);
}

Test(capacity, the_accelerator_taint_is_tolerated_only_by_pods_that_use_it)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand gpu = gpus(1, "H100"), cpu = { .cpu_milli = q("1") };
	struct cap_node *n = add_node(&cl, "gpu-a", "64", "512Gi", 8, H100);

	add_taint(&cl, n, GPU, "present", CAP_NO_SCHEDULE);
	init(&c, &cl);
	cr_assert(fit_of(&c, &gpu, 1).fits);
	cr_assert_not(fit_of(&c, &cpu, 1).fits);
	assert_message(&c, &cpu, 1, "needs 1 node with 1 CPU; no node can run it; "
		       "not counted: 1 with a taint it does not tolerate");
	capacity_release(&c);
	/* A NoExecute taint of the same key is another matter. */
	cl.taints[0][0].effect = CAP_NO_EXECUTE;
	init(&c, &cl);
	cr_assert_not(fit_of(&c, &gpu, 1).fits);
	capacity_release(&c);
}

Test(capacity, node_selector_must_match_every_pair)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_label zone_a[] = { { "zone", "a" }, { "pool", "train" } };
	struct cap_demand d = { .cpu_milli = q("1"), .node_selector = zone_a, .n_node_selector = 2 };
	struct cap_node *n;
	uint32_t placement[1];
	struct cap_fit fit;

	n = add_node(&cl, "n0", "4", "8Gi", 0, NULL);
	add_label(&cl, n, "zone", "a");
	n = add_node(&cl, "n1", "4", "8Gi", 0, NULL);
	add_label(&cl, n, "zone", "b");  /* both keys, one value wrong */
	add_label(&cl, n, "pool", "train");
	n = add_node(&cl, "n2", "4", "8Gi", 0, NULL);
	add_label(&cl, n, "zone", "a");
	add_label(&cl, n, "pool", "train");
	init(&c, &cl);
	cr_assert_eq(capacity_fit(&c, &d, 1, NULL, placement, &fit), 0);
	cr_assert(fit.fits);
	cr_assert_eq(placement[0], 2);
	cr_assert_eq(fit_of(&c, &d, 2).selector_mismatch, 2);
	capacity_release(&c);
}

Test(capacity, a_reservation_on_a_node_keeps_a_second_gang_off_it)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = gpus(8, "H100");
	int unplaced = -1;

	add_node(&cl, "gpu-a", "64", "512Gi", 8, H100);
	add_node(&cl, "gpu-b", "64", "512Gi", 8, H100);
	init(&c, &cl);
	cr_assert_eq(capacity_reserve(&c, &d, 1, "gpu-b", &unplaced), 0);
	cr_assert_eq(unplaced, 0);
	cr_assert_not(fit_of(&c, &d, 2).fits);
	cr_assert(fit_of(&c, &d, 1).fits);
	cr_assert_eq(capacity_reserve(&c, &d, 1, "gone", NULL), CADRE_ENOTFOUND);
	capacity_release(&c);
}

Test(capacity, a_reservation_without_nodes_is_placed_like_a_fit)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = gpus(8, "H100"), small = gpus(4, "H100");
	int unplaced = -1;

	add_node(&cl, "gpu-a", "64", "512Gi", 8, H100);
	add_node(&cl, "gpu-b", "64", "512Gi", 8, H100);
	add_node(&cl, "a100", "64", "512Gi", 8, A100);
	init(&c, &cl);
	/* Three pods reserved, only two H100 nodes: one is reported unplaced. */
	cr_assert_eq(capacity_reserve(&c, &d, 3, NULL, &unplaced), 0);
	cr_assert_eq(unplaced, 1);
	cr_assert_not(fit_of(&c, &small, 1).fits);
	cr_assert(fit_of(&c, &(struct cap_demand){ .accel_resource = GPU, .accel_count = 8,
						   .accel_type = "A100" }, 1).fits);
	capacity_release(&c);
}

Test(capacity, take_subtracts_what_fit_placed)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = gpus(4, NULL);
	uint32_t placement[3];
	struct cap_fit fit;

	add_node(&cl, "gpu-a", "64", "512Gi", 8, H100);
	add_node(&cl, "gpu-b", "64", "512Gi", 8, H100);
	init(&c, &cl);
	cr_assert_eq(capacity_fit(&c, &d, 3, NULL, placement, &fit), 0);
	cr_assert(fit.fits);
	capacity_take(&c, &d, placement, 3);
	cr_assert_eq(fit_of(&c, &d, 1).room, 1);
	cr_assert_eq(capacity_room(&c, &d, 0, 10), 0);
	cr_assert_eq(capacity_room(&c, &d, 1, 10), 1);
	cr_assert_eq(capacity_room_empty(&c, &d, 1, 10), 2);
	capacity_release(&c);
}

Test(capacity, messages_say_what_is_needed_and_what_has_room)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = gpus(8, "H100");
	static const struct cap_resource busy[] = { { GPU, 4000 } };

	add_node(&cl, "gpu-a", "64", "512Gi", 8, H100);
	add_node(&cl, "gpu-b", "64", "512Gi", 8, H100);
	add_node(&cl, "a100", "64", "512Gi", 8, A100);
	init(&c, &cl);
	cr_assert_eq(capacity_use(&c, "gpu-b", 0, 0, busy, 1), 0);
	assert_message(&c, &d, 2, "needs 2 nodes with 8 nvidia.com/gpu of type H100; 1 node has "
		       "room; not counted: 1 without accelerator type H100");
	d.cpu_milli = q("32");
	d.memory_milli = q("256Gi");
	assert_message(&c, &d, 2, "needs 2 nodes with 8 nvidia.com/gpu of type H100, 32 CPU, "
		       "256Gi memory; 1 node has room; not counted: 1 without accelerator type H100");
	d = gpus(2, "H100");
	assert_message(&c, &d, 7, "needs 7 nodes with 2 nvidia.com/gpu of type H100; 2 nodes have "
		       "room for 6; not counted: 1 without accelerator type H100");
	d = gpus(16, "H100");
	assert_message(&c, &d, 1, "needs 1 node with 16 nvidia.com/gpu of type H100; the 2 "
		       "eligible nodes could hold only 0 even if empty; not counted: 1 without "
		       "accelerator type H100");
	d = (struct cap_demand){ .accel_resource = "amd.com/gpu", .accel_count = 1 };
	assert_message(&c, &d, 1, "no node offers amd.com/gpu");
	capacity_release(&c);
}

Test(capacity, refuses_duplicate_node_names_and_bad_counts)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = { .cpu_milli = -1 };
	struct cap_fit fit;

	add_node(&cl, "n0", "4", "8Gi", 0, NULL);
	add_node(&cl, "n0", "4", "8Gi", 0, NULL);
	cr_assert_eq(capacity_init(&c, cl.nodes, cl.n, NULL), CADRE_EINVAL);
	capacity_release(&c);
	cr_assert_eq(capacity_init(&c, cl.nodes, 1, NULL), 0);
	cr_assert_eq(capacity_node_index(&c, "n0"), 0);
	cr_assert_eq(capacity_node_index(&c, "n1"), -1);
	cr_assert_eq(capacity_fit(&c, &d, 1, NULL, NULL, &fit), CADRE_EINVAL);
	d.cpu_milli = 0;
	cr_assert_eq(capacity_fit(&c, &d, 0, NULL, NULL, &fit), CADRE_EINVAL);
	cr_assert_eq(capacity_reserve(&c, &d, -1, NULL, NULL), CADRE_EINVAL);
	capacity_release(&c);
}

Test(capacity, fenced_nodes_are_counted_but_not_used)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = gpus(8, "H100");
	unsigned char fence[2] = { 1, 0 };
	uint32_t placement[1];
	struct cap_fit fit;

	add_node(&cl, "gpu-a", "64", "512Gi", 8, H100);
	add_node(&cl, "gpu-b", "64", "512Gi", 8, H100);
	init(&c, &cl);
	cr_assert_eq(capacity_fit(&c, &d, 1, fence, placement, &fit), 0);
	cr_assert(fit.fits);
	cr_assert_eq(placement[0], 1);
	cr_assert_eq(capacity_fit(&c, &d, 2, fence, NULL, &fit), 0);
	cr_assert_not(fit.fits);
	cr_assert_eq(fit.fenced, 1);
	cr_assert_eq(fit.ever, 2);
	capacity_release(&c);
}

/* Types are remembered in a few slots; more types than slots still match right. */
Test(capacity, many_accelerator_types_are_all_matched_right)
{
	static const char *const products[] = {
		"T4", "L4", "L40S", "A10G", "A100", "H100", "H200", "B200", "GB200", "V100",
	};
	enum { N = sizeof(products) / sizeof(products[0]) };
	struct cluster cl = { 0 };
	struct capacity c;

	for (size_t i = 0; i < N; i++)
		add_node(&cl, products[i], "8", "64Gi", 8, products[i]);
	init(&c, &cl);
	for (int round = 0; round < 3; round++)
		for (size_t t = 0; t < N; t++) {
			struct cap_demand d = gpus(8, products[t]);
			uint32_t placement[1];
			struct cap_fit fit;

			int matching = 0;  /* "L4" is also in "L40S", "B200" in "GB200" */

			for (size_t n = 0; n < N; n++)
				matching += strcasestr(products[n], products[t]) != NULL;
			cr_assert_eq(capacity_fit(&c, &d, 1, NULL, placement, &fit), 0);
			cr_assert(fit.fits, "%s", products[t]);
			cr_assert_str_eq(cl.nodes[placement[0]].name, products[t]);
			/* A gang that cannot fit makes the scan count every node. */
			cr_assert_eq(capacity_fit(&c, &d, 3, NULL, NULL, &fit), 0);
			cr_assert_eq(fit.eligible, matching, "%s", products[t]);
			cr_assert_eq(fit.wrong_accel, (int)N - matching, "%s", products[t]);
		}
	capacity_release(&c);
}

/* Which of the cluster's nodes a pod of d may use, as "n0,n2". */
static void eligible_names(const struct capacity *c, const struct cap_demand *d, char *out,
			   size_t size)
{
	out[0] = '\0';
	for (size_t i = 0; i < c->n_nodes; i++)
		if (capacity_eligible(c, d, i))
			snprintf(out + strlen(out), size - strlen(out), "%s%s", *out ? "," : "",
				 c->nodes[i].name);
}

/*
 * kube-scheduler's NodeAffinity: terms OR-ed, the requirements of a term
 * AND-ed, every operator on labels, and metadata.name by matchFields.
 * Without it admission pinned ranks onto nodes the scheduler then refused.
 */
Test(capacity, required_node_affinity_is_matched_as_the_scheduler_matches_it)
{
	struct cluster cl = { 0 };
	struct capacity c;
	static const char *const zone_a[] = { "a" }, *const five[] = { "5" };
	static const char *const n3[] = { "n3" }, *const n0[] = { "n0" };
	struct node_selector_req in_a = { "zone", NODE_SELECTOR_IN, zone_a, 1 };
	struct node_selector_req not_a = { "zone", NODE_SELECTOR_NOT_IN, zone_a, 1 };
	struct node_selector_req has_gen = { .key = "gen", .op = NODE_SELECTOR_EXISTS };
	struct node_selector_req no_gen = { .key = "gen", .op = NODE_SELECTOR_DOES_NOT_EXIST };
	struct node_selector_req gen_gt5 = { "gen", NODE_SELECTOR_GT, five, 1 };
	struct node_selector_req gen_lt5 = { "gen", NODE_SELECTOR_LT, five, 1 };
	struct node_selector_req name_n3 = { "metadata.name", NODE_SELECTOR_IN, n3, 1 };
	struct node_selector_req name_not_n0 = { "metadata.name", NODE_SELECTOR_NOT_IN, n0, 1 };
	struct node_selector_term t[2];
	struct node_selector sel = { t, 1, NULL };
	struct cap_demand d = { .cpu_milli = q("1"), .affinity = &sel, .n_affinity = 1 };
	struct cap_node *n;
	char names[64];

	n = add_node(&cl, "n0", "4", "8Gi", 0, NULL);
	add_label(&cl, n, "zone", "a");
	add_label(&cl, n, "gen", "4");
	n = add_node(&cl, "n1", "4", "8Gi", 0, NULL);
	add_label(&cl, n, "zone", "a");
	add_label(&cl, n, "gen", "6");
	n = add_node(&cl, "n2", "4", "8Gi", 0, NULL);
	add_label(&cl, n, "zone", "b");
	add_label(&cl, n, "gen", "x");  /* not an integer: neither Gt nor Lt */
	add_node(&cl, "n3", "4", "8Gi", 0, NULL);  /* no zone, no gen */
	init(&c, &cl);
#define EXPECT(want)                                                    \
	do {                                                            \
		eligible_names(&c, &d, names, sizeof(names));           \
		cr_assert_str_eq(names, want);                          \
	} while (0)
	t[0] = (struct node_selector_term){ .exprs = &in_a, .n_exprs = 1 };
	EXPECT("n0,n1");
	t[0].exprs = &not_a;
	EXPECT("n2,n3");  /* NotIn lets a node without the label */
	t[0].exprs = &has_gen;
	EXPECT("n0,n1,n2");
	t[0].exprs = &no_gen;
	EXPECT("n3");
	t[0].exprs = &gen_gt5;
	EXPECT("n1");
	t[0].exprs = &gen_lt5;
	EXPECT("n0");
	t[0] = (struct node_selector_term){ .fields = &name_n3, .n_fields = 1 };
	EXPECT("n3");
	/* In a term, AND; across terms, OR. */
	t[0] = (struct node_selector_term){ .exprs = &in_a, .n_exprs = 1, .fields = &name_not_n0,
					    .n_fields = 1 };
	EXPECT("n1");
	t[1] = (struct node_selector_term){ .fields = &name_n3, .n_fields = 1 };
	sel.n_terms = 2;
	EXPECT("n1,n3");
	/* A term without requirements matches no node; no term, none either. */
	t[1] = (struct node_selector_term){ 0 };
	EXPECT("n1");
	sel.n_terms = 0;
	EXPECT("");
#undef EXPECT
	sel.n_terms = 1;
	t[0] = (struct node_selector_term){ .exprs = &in_a, .n_exprs = 1 };
	assert_message(&c, &d, 9, "needs 9 nodes with 1 CPU; the 2 eligible nodes could hold "
		       "only 8 even if empty; not counted: 2 not matching its required node "
		       "affinity");
	capacity_release(&c);
}

/*
 * Required pod anti-affinity between the ranks per host: at most one rank a
 * node, where first fit would have packed small ranks together (and the
 * scheduler refused the second pinned there).
 */
Test(capacity, anti_affinity_between_ranks_puts_each_rank_on_its_own_node)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_demand d = gpus(2, "H100");
	uint32_t placement[3];
	struct cap_fit fit;

	add_node(&cl, "gpu-a", "64", "512Gi", 8, H100);
	add_node(&cl, "gpu-b", "64", "512Gi", 8, H100);
	init(&c, &cl);
	cr_assert_eq(capacity_fit(&c, &d, 2, NULL, placement, &fit), 0);
	cr_assert(fit.fits);
	cr_assert_eq(placement[1], 0, "packed without the anti-affinity");
	d.one_per_node = true;
	cr_assert_eq(capacity_fit(&c, &d, 2, NULL, placement, &fit), 0);
	cr_assert(fit.fits);
	cr_assert_eq(placement[0], 0);
	cr_assert_eq(placement[1], 1);
	cr_assert_eq(capacity_room(&c, &d, 0, 4), 1);
	cr_assert_eq(capacity_room_empty(&c, &d, 0, 4), 1);
	assert_message(&c, &d, 3, "needs 3 nodes with 2 nvidia.com/gpu of type H100, one a node "
		       "(pod anti-affinity); the 2 eligible nodes could hold only 2 even if empty");
	/* A reservation of such a gang without nodes is placed the same way. */
	cr_assert_eq(capacity_reserve(&c, &d, 2, NULL, NULL), 0);
	d.one_per_node = false;
	cr_assert_eq(capacity_room(&c, &d, 0, 4), 3);
	cr_assert_eq(capacity_room(&c, &d, 1, 4), 3);
	capacity_release(&c);
}

/*
 * ephemeral-storage (a rank's emptyDir scratch) is compared with the nodes'
 * allocatable ephemeral-storage like any resource: bound pods use it, a
 * node that reports none takes no such pod.
 */
Test(capacity, ephemeral_storage_requests_are_compared_with_allocatable)
{
	struct cluster cl = { 0 };
	struct capacity c;
	struct cap_resource disk = { "ephemeral-storage", q("60Gi") };
	struct cap_demand d = gpus(2, "H100");
	struct cap_resource used = { "ephemeral-storage", q("50Gi") };
	struct cap_node *n;
	uint32_t placement[2];
	struct cap_fit fit;

	n = add_node(&cl, "gpu-a", "64", "512Gi", 8, H100);
	cl.ext[0][n->n_extended++] = (struct cap_resource){ "ephemeral-storage", q("100Gi") };
	add_node(&cl, "gpu-b", "64", "512Gi", 8, H100);  /* reports no ephemeral-storage */
	n = add_node(&cl, "gpu-c", "64", "512Gi", 8, H100);
	cl.ext[2][n->n_extended++] = (struct cap_resource){ "ephemeral-storage", q("100Gi") };
	init(&c, &cl);
	d.extra = &disk;
	d.n_extra = 1;
	cr_assert_eq(capacity_use(&c, "gpu-c", 0, 0, &used, 1), 0);
	cr_assert_eq(capacity_fit(&c, &d, 1, NULL, placement, &fit), 0);
	cr_assert(fit.fits);
	cr_assert_eq(capacity_room(&c, &d, 0, 4), 1, "100Gi holds one 60Gi rank");
	cr_assert_eq(capacity_room(&c, &d, 1, 4), 0);
	cr_assert_eq(capacity_room(&c, &d, 2, 4), 0, "50Gi of 100Gi are used");
	assert_message(&c, &d, 2, "needs 2 nodes with 2 nvidia.com/gpu of type H100, 60Gi "
		       "ephemeral-storage; 1 node has room");
	disk.name = "example.com/scratch";
	assert_message(&c, &d, 1, "no node offers example.com/scratch");
	capacity_release(&c);
}

/* A Volume's PersistentVolume's node affinity, and the nodes a gang timed out on, said apart. */
Test(capacity, volume_affinity_and_timed_out_nodes_are_counted_apart)
{
	struct cluster cl = { 0 };
	struct capacity c;
	static const char *const zone_a[] = { "a" };
	static const char *const timed_out[] = { "gpu-a" };
	struct node_selector_req in_a = { "topology.kubernetes.io/zone", NODE_SELECTOR_IN, zone_a,
					  1 };
	struct node_selector_term term = { .exprs = &in_a, .n_exprs = 1 };
	struct node_selector sel = { &term, 1, "ckpt" };
	struct cap_demand d = gpus(8, "H100");
	struct cap_node *n;

	n = add_node(&cl, "gpu-a", "64", "512Gi", 8, H100);
	add_label(&cl, n, "topology.kubernetes.io/zone", "a");
	n = add_node(&cl, "gpu-b", "64", "512Gi", 8, H100);
	add_label(&cl, n, "topology.kubernetes.io/zone", "b");
	init(&c, &cl);
	d.affinity = &sel;
	d.n_affinity = 1;
	cr_assert(fit_of(&c, &d, 1).fits);
	d.timed_out = timed_out;
	d.n_timed_out = 1;
	assert_message(&c, &d, 1, "needs 1 node with 8 nvidia.com/gpu of type H100; no node can "
		       "run it; not counted: 1 outside its Volumes' PersistentVolume node "
		       "affinity, 1 where its gang timed out before (status.excludedNodes)");
	capacity_release(&c);
}
