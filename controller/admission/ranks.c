/*
 * ranks.c - a new node for some ranks of a gang that keeps the others
 * (ranks.h). The kept ranks' domains become a fence around what the ranks
 * to place may use; inside it the capacity model (or, with spec.topology,
 * topo_fit, which keeps them in as few finer domains as it can) places them.
 */
#include "controller/admission/ranks.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"

/* The domain of level k that node i is in, or -1 (no map, no level, no label). */
static int32_t domain_of(const struct topo_map *t, int k, long i)
{
	if (!t || k < 0 || i < 0)
		return -1;
	return t->dom[(size_t)k * t->cap->n_nodes + t->pos[i]];
}

/* The domain of level k of the first kept rank in [from, to) whose node is known, or -1. */
static int32_t kept_domain(const struct topo_map *t, int k, int from, int to,
			   const unsigned char *place, const long *nodes)
{
	for (int r = from; r < to; r++)
		if (!place[r] && nodes[r] >= 0)
			return domain_of(t, k, nodes[r]);
	return -1;
}

/* Fence every node outside domain dom of level k; nothing when dom is not known. */
static size_t fence_outside(const struct topo_map *t, int k, int32_t dom, unsigned char *fence)
{
	size_t fenced = 0;

	for (size_t i = 0; dom >= 0 && i < t->cap->n_nodes; i++)
		if (domain_of(t, k, (long)i) != dom && !fence[i]) {
			fence[i] = 1;
			fenced++;
		}
	return fenced;
}

/* What one placement needs and leaves. */
struct group {
	struct capacity *cap;
	const struct cap_demand *d;
	const struct topo_request *topo;
	const unsigned char *place;
	long *nodes;
	unsigned char *fence;     /* the whole gang's */
	unsigned char *narrow;    /* one group's: fence and more */
	size_t outside_required;  /* nodes outside the kept ranks' required domain */
	uint32_t *placement;
	struct buf *why;
};

/*
 * count pods of d on the nodes fence leaves, in one domain of level
 * segment when segment >= 0; when they do not fit, fit says why (for
 * capacity_describe).
 */
static int fit_in(const struct group *g, int segment, int count, const unsigned char *fence,
		  struct cap_fit *fit, bool *fits)
{
	struct topo_request r;
	struct topo_fit tf;
	int err;

	*fits = false;
	if (g->topo) {
		r = (struct topo_request){ .map = g->topo->map, .required = -1, .preferred = -1,
					   .segment = segment,
					   .segment_size = segment >= 0 ? count : 0 };
		err = topo_fit(g->cap, g->d, count, &r, fence, g->placement, &tf);
		if (err || (*fits = tf.fits))
			return err;
	}
	err = capacity_fit(g->cap, g->d, count, fence, g->topo ? NULL : g->placement, fit);
	*fits = !err && fit->fits && !g->topo;
	return err;
}

/* "ranks 2, 3" of [from, to) that are to be placed, into why. */
static void name_ranks(const struct group *g, int from, int to, int count)
{
	const char *sep = count == 1 ? "rank " : "ranks ";

	for (int r = from; r < to; r++)
		if (g->place[r]) {
			buf_addf(g->why, "%s%d", sep, r);
			sep = ", ";
		}
}

/* Why count pods did not fit in what fence leaves, into why. */
static void say_why(const struct group *g, int from, int to, int count, int level,
		    size_t outside, const struct cap_fit *fit_seen)
{
	struct cap_fit fit = *fit_seen;

	name_ranks(g, from, to, count);
	buf_adds(g->why, ": ");
	/* The nodes fenced here are the peers' domain's, not a starving job's. */
	fit.fenced = 0;
	if (fit.fits)
		buf_addf(g->why, "the %d %s nodes with room are not in one %s", count,
			 count == 1 ? "pod's" : "pods'",
			 topo_level_name(g->topo->map, g->topo->segment));
	else
		capacity_describe(g->cap, g->d, count, &fit, g->why);
	if (outside && level >= 0)
		buf_addf(g->why, "; %zu %s outside the %s of %s peers", outside,
			 outside == 1 ? "node is" : "nodes are", topo_level_name(g->topo->map, level),
			 count == 1 ? "its" : "their");
}

/*
 * Place the ranks of [from, to) that are to be placed: beside a kept rank
 * of the same segment, or as a whole segment, or in the kept ranks'
 * preferred domain when it has room.
 */
static int place_group(struct group *g, int n, int from, int to, bool *fits)
{
	const struct topo_request *topo = g->topo;
	const struct topo_map *t = topo ? topo->map : NULL;
	size_t nn = g->cap->n_nodes, outside = g->outside_required;
	int count = 0, level = topo ? topo->required : -1, segment = -1, err = 0, at = 0;
	struct cap_fit fit;

	for (int r = from; r < to; r++)
		count += g->place[r] != 0;
	if (!count)
		return 0;
	memcpy(g->narrow, g->fence, nn);
	if (topo && topo->segment >= 0) {
		if (count < to - from) {
			level = topo->segment;
			outside += fence_outside(t, level, kept_domain(t, level, from, to, g->place,
								       g->nodes), g->narrow);
		} else {
			segment = topo->segment;
		}
	} else if (topo && topo->preferred >= 0) {
		/* Near the peers if there is room there; else where the rest allows. */
		fence_outside(t, topo->preferred, kept_domain(t, topo->preferred, 0, n, g->place,
							      g->nodes), g->narrow);
		err = fit_in(g, -1, count, g->narrow, &fit, fits);
		if (err || *fits)
			goto placed;
		memcpy(g->narrow, g->fence, nn);
	}
	err = fit_in(g, segment, count, g->narrow, &fit, fits);
placed:
	if (err)
		return err;
	if (!*fits) {
		say_why(g, from, to, count, level, outside, &fit);
		return 0;
	}
	capacity_take(g->cap, g->d, g->placement, count);
	for (int r = from; r < to; r++)
		if (g->place[r])
			g->nodes[r] = (long)g->placement[at++];
	return 0;
}

int ranks_place(struct capacity *cap, const struct cap_demand *d, const struct topo_request *topo,
		int n, const unsigned char *place, long *nodes, bool *fits, struct buf *why)
{
	size_t nn = cap->n_nodes;
	struct group g = { cap, d, topo, place, nodes, NULL, NULL, 0, NULL, why };
	int want = 0, size = n, err = 0;

	*fits = false;
	for (int r = 0; r < n; r++)
		want += place[r] != 0;
	if (n < 1 || !want || (topo && topo->segment >= 0 &&
			       (topo->segment_size < 1 || n % topo->segment_size)))
		return CADRE_EINVAL;
	if (topo && topo->segment >= 0)
		size = topo->segment_size;
	g.fence = calloc(nn + 1, 1);
	g.narrow = calloc(nn + 1, 1);
	g.placement = calloc((size_t)n, sizeof(*g.placement));
	if (!g.fence || !g.narrow || !g.placement) {
		err = CADRE_ENOMEM;
		goto out;
	}
	/* One rank per host: not beside a kept rank. */
	for (int r = 0; d->one_per_node && r < n; r++)
		if (!place[r] && nodes[r] >= 0 && (size_t)nodes[r] < nn)
			g.fence[nodes[r]] = 1;
	if (topo && topo->required >= 0)
		g.outside_required = fence_outside(topo->map, topo->required,
						   kept_domain(topo->map, topo->required, 0, n,
							       place, nodes), g.fence);
	*fits = true;
	for (int from = 0; from < n && *fits && !err; from += size)
		err = place_group(&g, n, from, from + size, fits);
	if (!err && buf_error(why))
		err = CADRE_ENOMEM;
out:
	free(g.fence);
	free(g.narrow);
	free(g.placement);
	if (err)
		*fits = false;
	return err;
}
