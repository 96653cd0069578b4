/*
 * topology.h - where a gang goes in the network: spec.topology placed on the
 * capacity model (docs/topology.md; docs/design.md 3.1).
 *
 * The cluster's levels are node label keys, coarse to fine (a block, then a
 * rack, then an NVLink domain). A domain of level k is the nodes that agree
 * on the values of levels 0..k, so domains nest. topo_map_init sorts the
 * nodes in topology order (by those values, then by name): every domain is
 * then one run of consecutive nodes, and walking the order visits network
 * neighbours one after another.
 *
 * topo_fit places count identical pods:
 *  - required level r: all in one domain of r, the one with the least room
 *    that holds them (best fit, so large domains stay whole for large jobs);
 *  - preferred level p: in one domain of p if one has room (best fit), else
 *    in one domain of the level above, and so on; past the coarsest, over
 *    the fewest domains;
 *  - segment (size s at level g): count/s groups of s pods, each group in
 *    one domain of g (inside the required domain when there is one);
 * and inside whatever it chose, the pods go to as few domains of each finer
 * level as possible: a domain that holds all that is left, the smallest
 * such, else the largest first. Ranks are numbered in topology order, so
 * consecutive ranks share the finest level, and a segment is consecutive.
 *
 * Pure: no I/O, no clock. A topo_map borrows the capacity's nodes.
 */
#ifndef CADRE_TOPOLOGY_H
#define CADRE_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/admission/capacity.h"

struct buf;

/* The most levels a cluster may describe (ClusterTopology's maxItems). */
#define TOPO_MAX_LEVELS 16

/* The nodes of a capacity in topology order, and their domains per level. */
struct topo_map {
	const struct capacity *cap;   /* borrowed */
	size_t n_levels;
	const char *labels[TOPO_MAX_LEVELS];  /* the levels' node label keys, borrowed */
	const char *names[TOPO_MAX_LEVELS];   /* what a person calls each level, borrowed */
	uint32_t *order;        /* node indices in topology order */
	/*
	 * Per level, per position in order: the domain's number (counting from
	 * 0 in order), or -1 when that node lacks the level's label.
	 */
	int32_t *dom;           /* n_levels * n_nodes, row per level */
	size_t n_domains[TOPO_MAX_LEVELS];
	size_t carriers[TOPO_MAX_LEVELS];  /* nodes with the level's label */
	uint32_t *pos;          /* per node index: its position in order */
};

/*
 * Sort c's nodes by the values of labels[0..n) (coarse to fine), then by
 * name. names[i] may be NULL: the label's last part ("rack" of
 * "example.com/rack") names it. Returns 0, CADRE_EINVAL (more than
 * TOPO_MAX_LEVELS) or CADRE_ENOMEM; release t whatever it returns.
 */
int topo_map_init(struct topo_map *t, const struct capacity *c, const char *const *labels,
		  const char *const *names, size_t n);
void topo_map_release(struct topo_map *t);

/* The place of label among t's levels, or -1. */
int topo_level_index(const struct topo_map *t, const char *label);

/* What a person calls level k: its name, else the label's last part. */
const char *topo_level_name(const struct topo_map *t, int k);

/* A gang's spec.topology, its levels resolved against the map. */
struct topo_request {
	const struct topo_map *map;
	int required;      /* level index, -1 for none */
	int preferred;     /* level index, -1 for none */
	int segment;       /* level index, -1 for none */
	int segment_size;  /* pods per segment, >= 1 with a segment */
	/* Take the first domain in topology order that fits, not the smallest (bench only). */
	bool first_fit;
};

/* Why a topology request fits or not. */
struct topo_fit {
	bool fits;
	int level;        /* the level that decided: the segment's, else required's, else -1 */
	int units;        /* what had to fit: pods, or segments with a segment */
	int best_room;    /* the most units one domain of level has room for now */
	int best_ever;    /* the most units one domain of level could hold when empty */
	int room;         /* units all the domains together have room for */
	size_t carriers;  /* nodes that carry level's label */
};

/*
 * Place count pods of d as r asks, on free capacity, never on a fenced node
 * (fence: one byte per node, may be NULL). placement (may be NULL)
 * receives count node indices in rank order when it fits. Returns 0 or
 * CADRE_EINVAL (count < 1, a segment size that does not divide count, a
 * level out of range) or CADRE_ENOMEM.
 */
int topo_fit(const struct capacity *c, const struct cap_demand *d, int count,
	     const struct topo_request *r, const unsigned char *fence, uint32_t *placement,
	     struct topo_fit *fit);

/*
 * For a job that has waited too long: the domain of r's required level
 * whose nodes it should hold so that they drain for it (the one with the
 * most room now among those that could hold it when empty). Its eligible
 * nodes not yet fenced are marked TOPO_NEWLY_HELD in fence. Nothing when r
 * has no required level or no domain could ever hold it. Returns how many
 * nodes it marked.
 */
#define TOPO_NEWLY_HELD 2
size_t topo_hold(const struct capacity *c, const struct cap_demand *d, int count,
		 const struct topo_request *r, unsigned char *fence);

/*
 * Append to out, for a person, why it does not fit: "needs 16 nodes in one
 * rack (example.com/rack); the largest rack has room for 11". Returns 0 or
 * an error of buf_add.
 */
int topo_describe(const struct topo_request *r, int count, const struct topo_fit *fit,
		  struct buf *out);

#endif
