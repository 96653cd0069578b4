/*
 * spec.topology on the capacity model: one domain or wait, the fewest
 * domains, segments each in one domain, best fit against first fit, ranks
 * in network order, the starving job's domain held, and the words a person
 * reads while a job waits.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/err.h"
#include "controller/admission/admission.h"
#include "controller/admission/ranks.h"
#include "controller/admission/topology.h"

#define MAX_NODES 64
#define GPU "nvidia.com/gpu"
#define BLOCK "example.com/block"
#define RACK "example.com/rack"
#define HOST "kubernetes.io/hostname"

/* A cluster of 8-GPU nodes, each in a block and a rack; arrays it owns. */
struct cluster {
	struct cap_node nodes[MAX_NODES];
	struct cap_resource ext[MAX_NODES][1];
	struct cap_label labels[MAX_NODES][4];
	char names[MAX_NODES][16], blocks[MAX_NODES][24], racks[MAX_NODES][24];
	size_t n;
};

static struct cluster cl;
static struct capacity cap;
static struct topo_map map;
static const char *const levels[] = { BLOCK, RACK };

/* blocks x racks x per_rack nodes named n00, n01, ..., racks b0r0, b0r1, ... */
static void build(int blocks, int racks, int per_rack)
{
	memset(&cl, 0, sizeof(cl));
	for (int b = 0; b < blocks; b++)
		for (int r = 0; r < racks; r++)
			for (int k = 0; k < per_rack; k++) {
				size_t i = cl.n++;
				struct cap_node *n = &cl.nodes[i];

				cr_assert_lt(i, MAX_NODES);
				/* names that do not sort in topology order, so the order is the map's */
				snprintf(cl.names[i], sizeof(cl.names[i]), "n%02zu",
					 (i * 37) % MAX_NODES);
				snprintf(cl.blocks[i], sizeof(cl.blocks[i]), "b%d", b);
				snprintf(cl.racks[i], sizeof(cl.racks[i]), "b%dr%d", b, r);
				n->name = cl.names[i];
				n->ready = true;
				n->cpu_milli = 64000;
				n->memory_milli = 512000LL * 1000 * 1000 * 1000;
				n->pods = 110;
				n->extended = cl.ext[i];
				cl.ext[i][n->n_extended++] = (struct cap_resource){ GPU, 8000 };
				n->labels = cl.labels[i];
				cl.labels[i][n->n_labels++] = (struct cap_label){ HOST, cl.names[i] };
				cl.labels[i][n->n_labels++] = (struct cap_label){ BLOCK, cl.blocks[i] };
				cl.labels[i][n->n_labels++] = (struct cap_label){ RACK, cl.racks[i] };
			}
}

static void init_map(void)
{
	cr_assert_eq(capacity_init(&cap, cl.nodes, cl.n, NULL), 0);
	cr_assert_eq(topo_map_init(&map, &cap, levels, NULL, 2), 0);
}

static void fini(void)
{
	topo_map_release(&map);
	capacity_release(&cap);
}

static struct cap_demand gang_pod(void)
{
	return (struct cap_demand){ .accel_resource = GPU, .accel_count = 8 };
}

/* Use the GPUs of every node of rack (b, r) whose index in the rack is below busy. */
static void occupy(int per_rack, int racks, int b, int r, int busy)
{
	struct cap_resource all = { GPU, 8000 };

	for (int k = 0; k < busy; k++) {
		size_t i = ((size_t)b * racks + r) * per_rack + k;

		cr_assert_eq(capacity_use(&cap, cl.nodes[i].name, 0, 0, &all, 1), 0);
	}
}

static struct topo_request req(int required, int preferred, int segment, int size)
{
	return (struct topo_request){ &map, required, preferred, segment, size, false };
}

static const char *rack_of(uint32_t node)
{
	return cl.racks[node];
}

static const char *block_of(uint32_t node)
{
	return cl.blocks[node];
}

static int distinct_racks(const uint32_t *p, int n)
{
	int d = 0;

	for (int i = 0; i < n; i++) {
		bool seen = false;

		for (int j = 0; j < i && !seen; j++)
			seen = !strcmp(rack_of(p[j]), rack_of(p[i]));
		d += !seen;
	}
	return d;
}

Test(topology, the_map_puts_each_domain_in_one_run_in_label_order, .fini = fini)
{
	build(2, 2, 3);
	init_map();
	cr_assert_eq(map.n_domains[0], 2);
	cr_assert_eq(map.n_domains[1], 4);
	for (size_t p = 1; p < cl.n; p++)
		cr_assert_leq(strcmp(rack_of(map.order[p - 1]), rack_of(map.order[p])), 0,
			      "position %zu", p);
	cr_assert_str_eq(topo_level_name(&map, 1), "rack");
	cr_assert_eq(topo_level_index(&map, RACK), 1);
	cr_assert_eq(topo_level_index(&map, "example.com/zone"), -1);
}

Test(topology, required_takes_the_smallest_rack_that_holds_the_gang, .fini = fini)
{
	struct cap_demand d = gang_pod();
	struct topo_request r;
	struct topo_fit fit;
	uint32_t p[4];

	build(2, 2, 4);
	init_map();
	occupy(4, 2, 0, 0, 3);  /* b0r0: 1 free */
	occupy(4, 2, 0, 1, 1);  /* b0r1: 3 free */
	occupy(4, 2, 1, 0, 0);  /* b1r0: 4 free */
	occupy(4, 2, 1, 1, 2);  /* b1r1: 2 free */
	r = req(1, -1, -1, 0);
	cr_assert_eq(topo_fit(&cap, &d, 2, &r, NULL, p, &fit), 0);
	cr_assert(fit.fits);
	cr_assert_str_eq(rack_of(p[0]), "b1r1", "best fit: the rack with 2 free, not 3 or 4");
	cr_assert_str_eq(rack_of(p[1]), "b1r1");
	cr_assert_eq(topo_fit(&cap, &d, 3, &r, NULL, p, &fit), 0);
	cr_assert(fit.fits);
	cr_assert_eq(distinct_racks(p, 3), 1);
	cr_assert_str_eq(rack_of(p[0]), "b0r1");
	/* First fit takes the first rack in order that holds it, the empty one included. */
	r.first_fit = true;
	cr_assert_eq(topo_fit(&cap, &d, 2, &r, NULL, p, &fit), 0);
	cr_assert_str_eq(rack_of(p[0]), "b0r1");
}

Test(topology, a_gang_no_rack_holds_waits_and_says_which_level_and_the_largest_room,
     .fini = fini)
{
	struct cap_demand d = gang_pod();
	struct topo_request r;
	struct topo_fit fit;
	struct buf msg;

	build(2, 2, 4);
	init_map();
	occupy(4, 2, 0, 0, 1);
	occupy(4, 2, 0, 1, 2);
	occupy(4, 2, 1, 0, 2);
	occupy(4, 2, 1, 1, 2);
	r = req(1, -1, -1, 0);
	cr_assert_eq(topo_fit(&cap, &d, 4, &r, NULL, NULL, &fit), 0);
	cr_assert_not(fit.fits, "9 GPUs nodes are free, but no rack has 4");
	cr_assert_eq(fit.best_room, 3);
	cr_assert_eq(fit.best_ever, 4);
	buf_init(&msg, 256);
	cr_assert_eq(topo_describe(&r, 4, &fit, &msg), 0);
	cr_assert_str_eq(buf_str(&msg), "needs 4 nodes in one rack (example.com/rack); "
			 "the largest rack has room for 3");
	/* Too big for any rack, even empty. */
	buf_reset(&msg);
	cr_assert_eq(topo_fit(&cap, &d, 5, &r, NULL, NULL, &fit), 0);
	cr_assert_eq(topo_describe(&r, 5, &fit, &msg), 0);
	cr_assert_str_eq(buf_str(&msg), "needs 5 nodes in one rack (example.com/rack); "
			 "the largest rack has room for 3, and none could hold it even empty "
			 "(at most 4)");
	buf_release(&msg);
}

Test(topology, a_level_no_node_carries_is_named, .fini = fini)
{
	static const char *const three[] = { BLOCK, RACK, "example.com/nvlink" };
	struct cap_demand d = gang_pod();
	struct topo_request r;
	struct topo_fit fit;
	struct buf msg;

	build(1, 2, 2);
	cr_assert_eq(capacity_init(&cap, cl.nodes, cl.n, NULL), 0);
	cr_assert_eq(topo_map_init(&map, &cap, three, NULL, 3), 0);
	r = req(2, -1, -1, 0);
	cr_assert_eq(topo_fit(&cap, &d, 1, &r, NULL, NULL, &fit), 0);
	cr_assert_not(fit.fits);
	buf_init(&msg, 256);
	topo_describe(&r, 1, &fit, &msg);
	cr_assert_str_eq(buf_str(&msg), "no node carries the label example.com/nvlink "
			 "(the level of spec.topology.required)");
	buf_release(&msg);
}

Test(topology, preferred_uses_one_rack_when_one_has_room_else_the_fewest, .fini = fini)
{
	struct cap_demand d = gang_pod();
	struct topo_request r;
	struct topo_fit fit;
	uint32_t p[16];

	build(2, 2, 4);
	init_map();
	occupy(4, 2, 0, 0, 2);  /* b0r0: 2 free */
	occupy(4, 2, 1, 1, 1);  /* b1r1: 3 free; b0r1 and b1r0: 4 free */
	r = req(-1, 1, -1, 0);
	cr_assert_eq(topo_fit(&cap, &d, 3, &r, NULL, p, &fit), 0);
	cr_assert(fit.fits);
	cr_assert_eq(distinct_racks(p, 3), 1);
	cr_assert_str_eq(rack_of(p[0]), "b1r1", "the narrowest rack that holds 3");
	/* 6 fit in no rack, but in one block: b0 holds exactly 6 (b1 7), in two racks. */
	cr_assert_eq(topo_fit(&cap, &d, 6, &r, NULL, p, &fit), 0);
	cr_assert(fit.fits);
	cr_assert_eq(distinct_racks(p, 6), 2);
	for (int i = 0; i < 6; i++)
		cr_assert_str_eq(block_of(p[i]), "b0", "rank %d", i);
	/* 13 of 13 free: every rack, still ranks grouped by rack. */
	cr_assert_eq(topo_fit(&cap, &d, 13, &r, NULL, p, &fit), 0);
	cr_assert(fit.fits);
	for (int i = 1; i < 13; i++)
		cr_assert_leq(strcmp(rack_of(p[i - 1]), rack_of(p[i])), 0, "rank %d", i);
}

Test(topology, segments_each_fill_one_rack_with_consecutive_ranks, .fini = fini)
{
	struct cap_demand d = gang_pod();
	struct topo_request r;
	struct topo_fit fit;
	uint32_t p[16];

	build(4, 2, 4);  /* 8 racks of 4 */
	init_map();
	occupy(4, 2, 0, 0, 1);
	occupy(4, 2, 1, 1, 2);
	occupy(4, 2, 2, 0, 3);  /* five racks stay whole */
	r = req(-1, -1, 1, 4);
	cr_assert_eq(topo_fit(&cap, &d, 16, &r, NULL, p, &fit), 0);
	cr_assert(fit.fits);
	for (int s = 0; s < 4; s++)
		for (int i = 1; i < 4; i++)
			cr_assert_str_eq(rack_of(p[s * 4 + i]), rack_of(p[s * 4]),
					 "segment %d rank %d", s, s * 4 + i);
	cr_assert_eq(distinct_racks(p, 16), 4);
	/* Six whole racks are needed for 24; only five are whole. */
	cr_assert_eq(topo_fit(&cap, &d, 24, &r, NULL, NULL, &fit), 0);
	cr_assert_not(fit.fits, "18 nodes would be free in racks with room, but only 5 "
		      "segments of 4");
	cr_assert_eq(fit.units, 6);
	cr_assert_eq(fit.room, 5);
}

Test(topology, segments_inside_a_required_block, .fini = fini)
{
	struct cap_demand d = gang_pod();
	struct topo_request r;
	struct topo_fit fit;
	uint32_t p[8];
	struct buf msg;

	build(2, 2, 4);
	init_map();
	occupy(4, 2, 0, 0, 1);  /* b0: racks of 3 and 4 free: one segment of 4 */
	r = req(0, -1, 1, 4);
	cr_assert_eq(topo_fit(&cap, &d, 8, &r, NULL, p, &fit), 0);
	cr_assert(fit.fits);
	for (int i = 0; i < 8; i++)
		cr_assert_str_eq(block_of(p[i]), "b1", "rank %d", i);
	occupy(4, 2, 1, 1, 1);
	cr_assert_eq(topo_fit(&cap, &d, 8, &r, NULL, NULL, &fit), 0);
	cr_assert_not(fit.fits);
	buf_init(&msg, 256);
	topo_describe(&r, 8, &fit, &msg);
	cr_assert_str_eq(buf_str(&msg), "needs 2 segments of 4 nodes, each in one rack "
			 "(example.com/rack), all in one block; the most one block has room for is 1");
	buf_release(&msg);
}

Test(topology, best_fit_keeps_a_whole_rack_that_first_fit_breaks, .fini = fini)
{
	struct cap_demand d = gang_pod();
	struct topo_request best, first;
	struct topo_fit fit;
	uint32_t p[4];

	build(1, 2, 4);
	init_map();
	occupy(4, 2, 0, 1, 2);  /* r0 empty, r1 half full */
	best = req(1, -1, -1, 0);
	first = best;
	first.first_fit = true;
	cr_assert_eq(topo_fit(&cap, &d, 2, &best, NULL, p, &fit), 0);
	cr_assert_str_eq(rack_of(p[0]), "b0r1");
	cr_assert_eq(topo_fit(&cap, &d, 2, &first, NULL, p, &fit), 0);
	cr_assert_str_eq(rack_of(p[0]), "b0r0", "first fit breaks the whole rack");
}

Test(topology, a_fenced_node_takes_no_rank, .fini = fini)
{
	struct cap_demand d = gang_pod();
	struct topo_request r;
	struct topo_fit fit;
	unsigned char fence[MAX_NODES] = { 0 };
	uint32_t p[4];

	build(1, 2, 4);
	init_map();
	r = req(1, -1, -1, 0);
	cr_assert_eq(topo_fit(&cap, &d, 4, &r, NULL, p, &fit), 0);
	fence[p[0]] = 1;
	cr_assert_eq(topo_fit(&cap, &d, 4, &r, fence, p, &fit), 0);
	cr_assert(fit.fits);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(fence[p[i]], 0);
}

/* The admission queue: a starving gang holds a whole rack, and nothing smaller takes it. */
Test(topology, a_starving_gang_holds_the_rack_that_drains_first, .fini = fini)
{
	struct admission adm;
	struct topo_request r;
	struct adm_job jobs[2];
	struct adm_decision out[2];

	build(1, 2, 4);
	init_map();
	occupy(4, 2, 0, 0, 3);
	occupy(4, 2, 0, 1, 1);  /* r0: 1 free, r1: 3 free */
	r = req(1, -1, -1, 0);
	jobs[0] = (struct adm_job){ .namespace = "ml", .name = "big", .created_s = 0,
				    .waiting_since_s = 0, .num_nodes = 4, .demand = gang_pod(),
				    .topo = &r };
	jobs[1] = (struct adm_job){ .namespace = "ml", .name = "small", .created_s = 10,
				    .waiting_since_s = 10, .num_nodes = 1, .demand = gang_pod() };
	admission_init(&adm);
	cr_assert_eq(admission_decide(&adm, &cap, jobs, 2, 1000, 600, out), 0);
	cr_assert_eq(out[0].verdict, ADM_WAIT);
	cr_assert(out[0].starving);
	cr_assert_eq(out[1].verdict, ADM_ADMIT);
	cr_assert_str_eq(rack_of(out[1].nodes[0]), "b0r0",
			 "the small job keeps off the rack held for the starving one");
	admission_release(&adm);
}

Test(topology, a_job_the_cluster_does_not_describe_waits_with_its_reason, .fini = fini)
{
	struct admission adm;
	struct adm_job job = { .namespace = "ml", .name = "odd", .num_nodes = 1,
			       .demand = gang_pod(),
			       .blocked = "spec.topology.required: \"x/y\" is not a level" };
	struct adm_decision out;

	build(1, 1, 1);
	init_map();
	admission_init(&adm);
	cr_assert_eq(admission_decide(&adm, &cap, &job, 1, 0, 600, &out), 0);
	cr_assert_eq(out.verdict, ADM_WAIT);
	cr_assert_str_eq(out.message, "spec.topology.required: \"x/y\" is not a level");
	admission_release(&adm);
}

Test(topology, bad_requests_are_refused, .fini = fini)
{
	struct cap_demand d = gang_pod();
	struct topo_request r;
	struct topo_fit fit;

	build(1, 1, 4);
	init_map();
	r = req(1, -1, 1, 3);
	cr_assert_eq(topo_fit(&cap, &d, 4, &r, NULL, NULL, &fit), CADRE_EINVAL,
		     "3 does not divide 4");
	r = req(5, -1, -1, 0);
	cr_assert_eq(topo_fit(&cap, &d, 4, &r, NULL, NULL, &fit), CADRE_EINVAL);
	r = req(1, -1, -1, 0);
	cr_assert_eq(topo_fit(&cap, &d, 0, &r, NULL, NULL, &fit), CADRE_EINVAL);
}

/*
 * ranks.h: a rank whose node was lost while its peers restart in place is
 * placed again alone, as its gang's spec.topology would have placed it
 * beside them.
 */
static const char *place_one(const struct topo_request *r, struct cap_demand *d, int n,
			     const unsigned char *place, long *nodes, bool *fits, struct buf *why)
{
	buf_reset(why);
	cr_assert_eq(ranks_place(&cap, d, r, n, place, nodes, fits, why), 0);
	return buf_str(why);
}

/* Take node i's GPUs (a rank runs there, or its node is the lost one). */
static void busy(size_t i)
{
	struct cap_resource all = { GPU, 8000 };

	cr_assert_eq(capacity_use(&cap, cl.nodes[i].name, 0, 0, &all, 1), 0);
}

Test(topology, a_lost_rank_goes_back_into_its_peers_block_and_near_them, .fini = fini)
{
	struct cap_demand d = gang_pod();
	struct topo_request r;
	unsigned char place[4] = { 0, 1, 0, 0 };
	long nodes[4] = { 0, -1, 3, 4 };
	struct buf why;
	bool fits;

	build(2, 2, 3);  /* b0r0: 0-2, b0r1: 3-5, b1r0: 6-8, b1r1: 9-11 */
	init_map();
	busy(0);
	busy(1);  /* rank 1's lost node */
	busy(3);
	busy(4);
	buf_init(&why, 1024);
	/* Block b1 is empty, but the gang's required block is b0: node 2 or 5. */
	r = req(0, -1, -1, 0);
	place_one(&r, &d, 4, place, nodes, &fits, &why);
	cr_assert(fits, "%s", buf_str(&why));
	cr_assert_str_eq(block_of((uint32_t)nodes[1]), "b0");
	cr_assert(nodes[1] == 2 || nodes[1] == 5);
	cr_assert_eq(nodes[0], 0, "a kept rank stays");
	/* Preferring the rack, it goes into rank 0's rack, b0r0: node 2. */
	fini();
	init_map();
	busy(0);
	busy(1);
	busy(3);
	busy(4);
	nodes[1] = -1;
	r = req(0, 1, -1, 0);
	place_one(&r, &d, 4, place, nodes, &fits, &why);
	cr_assert(fits);
	cr_assert_eq(nodes[1], 2);
	/* With b0 full, it waits, and says where the room it cannot use is. */
	busy(5);
	nodes[1] = -1;
	r = req(0, -1, -1, 0);
	cr_assert_str_eq(place_one(&r, &d, 4, place, nodes, &fits, &why), "rank 1: needs 1 node "
			 "with 8 nvidia.com/gpu; 0 nodes have room; 6 nodes are outside the block of "
			 "its peers");
	cr_assert_not(fits);
	buf_release(&why);
}

Test(topology, a_lost_rank_of_a_segment_joins_its_segment_and_a_lost_segment_stays_whole,
     .fini = fini)
{
	struct cap_demand d = gang_pod();
	struct topo_request r = { 0 };
	unsigned char place[4] = { 0, 0, 0, 1 };
	long nodes[4] = { 0, 1, 6, -1 };
	struct buf why;
	bool fits;

	build(2, 2, 3);
	init_map();
	busy(0);
	busy(1);
	busy(6);
	busy(7);  /* rank 3's lost node, in rank 2's rack b1r0 */
	buf_init(&why, 1024);
	r = req(-1, -1, 1, 2);
	place_one(&r, &d, 4, place, nodes, &fits, &why);
	cr_assert(fits, "%s", buf_str(&why));
	cr_assert_eq(nodes[3], 8, "beside rank 2, in rack b1r0");
	/* Ranks 2 and 3 both lost: the segment goes whole into one rack. */
	fini();
	init_map();
	busy(0);
	busy(1);
	busy(6);
	busy(7);
	busy(4);  /* b0r1 keeps two nodes free, b1r1 three */
	place[2] = 1;
	nodes[2] = nodes[3] = -1;
	place_one(&r, &d, 4, place, nodes, &fits, &why);
	cr_assert(fits, "%s", buf_str(&why));
	cr_assert_str_eq(rack_of((uint32_t)nodes[2]), rack_of((uint32_t)nodes[3]));
	cr_assert_neq(nodes[2], nodes[3]);
	buf_release(&why);
}

Test(topology, a_lost_rank_with_anti_affinity_goes_beside_no_kept_rank, .fini = fini)
{
	struct cap_demand d = { .accel_resource = GPU, .accel_count = 4, .one_per_node = true };
	unsigned char place[2] = { 1, 0 };
	long nodes[2] = { -1, 0 };
	struct buf why;
	bool fits;

	build(1, 1, 2);
	init_map();
	buf_init(&why, 512);
	place_one(NULL, &d, 2, place, nodes, &fits, &why);
	cr_assert(fits);
	cr_assert_eq(nodes[0], 1, "node 0 has room but runs rank 1");
	cr_assert_eq(ranks_place(&cap, &d, NULL, 2, (const unsigned char[2]){ 0, 0 }, nodes,
				 &fits, &why), CADRE_EINVAL, "nothing to place");
	buf_release(&why);
}
