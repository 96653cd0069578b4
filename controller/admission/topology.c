/*
 * topology.c - spec.topology on the capacity model (topology.h). Every
 * domain is a run of consecutive positions in the topology order, so the
 * room of a domain is one sum over its run, and the children of a domain
 * at the next level are the runs inside it: no tree is built.
 */
#include "controller/admission/topology.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"

static const char *label_of(const struct cap_node *node, const char *key)
{
	for (size_t i = 0; i < node->n_labels; i++)
		if (node->labels[i].key && !strcmp(node->labels[i].key, key))
			return node->labels[i].value ? node->labels[i].value : "";
	return NULL;
}

struct sort_ctx {
	const struct capacity *cap;
	const char **val;   /* n_levels * n_nodes, row per level, indexed by node */
	size_t n_levels;
};

static int compare_values(const char *a, const char *b)
{
	if (!a || !b)
		return a ? 1 : b ? -1 : 0;  /* a node without the label first */
	return strcmp(a, b);
}

static int compare_nodes(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *s = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	size_t n = s->cap->n_nodes;
	int cmp;

	for (size_t k = 0; k < s->n_levels; k++)
		if ((cmp = compare_values(s->val[k * n + a], s->val[k * n + b])))
			return cmp;
	return strcmp(s->cap->nodes[a].name, s->cap->nodes[b].name);
}

int topo_map_init(struct topo_map *t, const struct capacity *c, const char *const *labels,
		  const char *const *names, size_t n)
{
	size_t nn = c->n_nodes;
	struct sort_ctx s = { c, NULL, n };

	memset(t, 0, sizeof(*t));
	t->cap = c;
	if (n > TOPO_MAX_LEVELS)
		return CADRE_EINVAL;
	t->n_levels = n;
	for (size_t k = 0; k < n; k++) {
		t->labels[k] = labels[k];
		t->names[k] = names ? names[k] : NULL;
	}
	t->order = calloc(nn ? nn : 1, sizeof(*t->order));
	t->pos = calloc(nn ? nn : 1, sizeof(*t->pos));
	t->dom = calloc(n * nn + 1, sizeof(*t->dom));
	s.val = calloc(n * nn + 1, sizeof(*s.val));
	if (!t->order || !t->pos || !t->dom || !s.val) {
		free(s.val);
		return CADRE_ENOMEM;
	}
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < nn; i++)
			if ((s.val[k * nn + i] = label_of(&c->nodes[i], labels[k])))
				t->carriers[k]++;
	for (size_t i = 0; i < nn; i++)
		t->order[i] = (uint32_t)i;
	qsort_r(t->order, nn, sizeof(*t->order), compare_nodes, &s);
	for (size_t p = 0; p < nn; p++)
		t->pos[t->order[p]] = (uint32_t)p;
	/* A new domain of level k where the values of levels 0..k change. */
	for (size_t k = 0; k < n; k++) {
		int32_t *row = t->dom + k * nn;
		int32_t next = 0;

		for (size_t p = 0; p < nn; p++) {
			uint32_t i = t->order[p];
			bool same = p > 0 && row[p - 1] >= 0;

			if (!s.val[k * nn + i]) {
				row[p] = -1;
				continue;
			}
			for (size_t j = 0; same && j <= k; j++)
				same = !compare_values(s.val[j * nn + i],
						       s.val[j * nn + t->order[p - 1]]);
			row[p] = same ? row[p - 1] : next++;
		}
		t->n_domains[k] = (size_t)next;
	}
	free(s.val);
	return 0;
}

void topo_map_release(struct topo_map *t)
{
	free(t->order);
	free(t->pos);
	free(t->dom);
	memset(t, 0, sizeof(*t));
}

int topo_level_index(const struct topo_map *t, const char *label)
{
	for (size_t k = 0; label && k < t->n_levels; k++)
		if (!strcmp(t->labels[k], label))
			return (int)k;
	return -1;
}

const char *topo_level_name(const struct topo_map *t, int k)
{
	const char *slash;

	if (k < 0 || (size_t)k >= t->n_levels)
		return "";
	if (t->names[k] && *t->names[k])
		return t->names[k];
	slash = strrchr(t->labels[k], '/');
	return slash ? slash + 1 : t->labels[k];
}

/* One placement's working state. */
struct place {
	const struct topo_map *t;
	const struct topo_request *r;
	int64_t *room;     /* per position: pods of the demand the node has room for now */
	uint32_t *taken;   /* positions, one per pod placed */
	int n_taken;
};

/* A run of positions [a, b): a domain, or the nodes without a level's label. */
struct run {
	size_t a, b;
	int64_t units;
};

static int32_t dom_at(const struct topo_map *t, int k, size_t p)
{
	return t->dom[(size_t)k * t->cap->n_nodes + p];
}

static int64_t room_sum(const struct place *pl, size_t a, size_t b)
{
	int64_t sum = 0;

	for (size_t p = a; p < b; p++)
		sum += pl->room[p];
	return sum;
}

/* The end of the run of level k that starts at a, within [a, b). */
static size_t run_end(const struct topo_map *t, int k, size_t a, size_t b)
{
	size_t e = a + 1;

	while (e < b && dom_at(t, k, e) == dom_at(t, k, a))
		e++;
	return e;
}

/*
 * Units of [a, b): its pods, or with a segment level the whole segments
 * its domains of that level hold.
 */
static int64_t units_in(const struct place *pl, size_t a, size_t b, int seg, int size)
{
	int64_t units = 0;

	if (seg < 0)
		return room_sum(pl, a, b);
	for (size_t p = a; p < b;) {
		size_t e = run_end(pl->t, seg, p, b);

		if (dom_at(pl->t, seg, p) >= 0)
			units += room_sum(pl, p, e) / size;
		p = e;
	}
	return units;
}

/* The runs of level k inside [a, b), with domains only (no unlabelled run) when only_domains. */
static size_t runs_of(const struct place *pl, int k, size_t a, size_t b, bool only_domains,
		      int seg, int size, struct run *out)
{
	size_t n = 0;

	for (size_t p = a; p < b;) {
		size_t e = run_end(pl->t, k, p, b);

		if (!only_domains || dom_at(pl->t, k, p) >= 0)
			out[n++] = (struct run){ p, e, units_in(pl, p, e, seg, size) };
		p = e;
	}
	return n;
}

static int by_units_desc(const void *pa, const void *pb)
{
	const struct run *a = pa, *b = pb;

	if (a->units != b->units)
		return a->units > b->units ? -1 : 1;
	return a->a < b->a ? -1 : a->a > b->a;
}

/*
 * Of runs[0..n), the one that holds need units with the least room to
 * spare (best fit), or the first in topology order that holds them
 * (first fit); -1 when none does.
 */
static long pick_one(const struct run *runs, size_t n, int64_t need, bool first_fit)
{
	long best = -1;

	for (size_t i = 0; i < n; i++) {
		if (runs[i].units < need)
			continue;
		if (first_fit)
			return (long)i;
		if (best < 0 || runs[i].units < runs[best].units)
			best = (long)i;
	}
	return best;
}

static int pack(struct place *pl, size_t a, size_t b, int k, int64_t need);

/*
 * need units over the runs: the one run that holds them all, if any (best
 * fit), else the largest first, until one holds what is left. Each run
 * gets amount units, each unit size pods, packed from level k. runs is
 * reordered.
 */
static int spread(struct place *pl, struct run *runs, size_t n, int64_t need, int size, int k)
{
	size_t i = 0;

	qsort(runs, n, sizeof(*runs), by_units_desc);
	while (need > 0 && i < n && runs[i].units > 0) {
		size_t lo = i, hi = n;  /* the last run at or after i with units >= need */

		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (runs[mid].units >= need)
				lo = mid;
			else
				hi = mid;
		}
		if (runs[lo].units >= need)
			return pack(pl, runs[lo].a, runs[lo].b, k, need * size);
		if (pack(pl, runs[i].a, runs[i].b, k, runs[i].units * size))
			return CADRE_EINVAL;
		need -= runs[i].units;
		i++;
	}
	return need > 0 ? CADRE_EINVAL : 0;
}

/* need pods on [a, b), as few domains of level k and each finer level as possible. */
static int pack(struct place *pl, size_t a, size_t b, int k, int64_t need)
{
	struct run *runs;
	size_t n;
	int err;

	if (need <= 0)
		return 0;
	if ((size_t)k >= pl->t->n_levels) {
		for (size_t p = a; p < b && need > 0; p++)
			for (; pl->room[p] > 0 && need > 0; pl->room[p]--, need--)
				pl->taken[pl->n_taken++] = (uint32_t)p;
		return need > 0 ? CADRE_EINVAL : 0;
	}
	runs = malloc((b - a) * sizeof(*runs));
	if (!runs)
		return CADRE_ENOMEM;
	n = runs_of(pl, k, a, b, false, -1, 1, runs);
	err = spread(pl, runs, n, need, 1, k + 1);
	free(runs);
	return err;
}

/*
 * The narrowest single domain that holds need pods: of level from, else the
 * level above, up to level to; its run in *out. false when none does.
 */
static bool narrowest(struct place *pl, size_t a, size_t b, int from, int to, int64_t need,
		      struct run *out, int *level)
{
	struct run *runs = malloc((b - a + 1) * sizeof(*runs));

	if (!runs)
		return false;
	for (int k = from; k >= to; k--) {
		size_t n = runs_of(pl, k, a, b, true, -1, 1, runs);
		long i = pick_one(runs, n, need, pl->r->first_fit);

		if (i >= 0) {
			*out = runs[i];
			*level = k;
			free(runs);
			return true;
		}
	}
	free(runs);
	return false;
}

/* count pods inside [a, b), whose domains below level k are free to choose. */
static int place_in(struct place *pl, size_t a, size_t b, int k, int count)
{
	const struct topo_request *r = pl->r;
	struct run *runs, found;
	size_t n;
	int level, err;

	if (r->segment >= 0) {
		runs = malloc((b - a + 1) * sizeof(*runs));
		if (!runs)
			return CADRE_ENOMEM;
		n = runs_of(pl, r->segment, a, b, true, r->segment, r->segment_size, runs);
		err = spread(pl, runs, n, count / r->segment_size, r->segment_size,
			     r->segment + 1);
		free(runs);
		return err;
	}
	if (r->preferred >= k && narrowest(pl, a, b, r->preferred, k, count, &found, &level))
		return pack(pl, found.a, found.b, level + 1, count);
	return pack(pl, a, b, k, count);
}

static int compare_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return a < b ? -1 : a > b;
}

static bool valid_level(const struct topo_map *t, int k)
{
	return k >= -1 && k < (int)t->n_levels;
}

/* Room now (or when empty) per position, never on a fenced or ineligible node. */
static int fill_room(const struct capacity *c, const struct topo_map *t,
		     const struct cap_demand *d, int count, const unsigned char *fence,
		     bool empty, int64_t *room, int64_t *by_node)
{
	int err = capacity_rooms(c, d, count, fence, empty, by_node);

	if (err)
		return err;
	for (size_t p = 0; p < c->n_nodes; p++)
		room[p] = by_node[t->order[p]];
	return 0;
}

/* For the level that decides: the most units a domain holds, and all together. */
static void survey(struct place *pl, int level, int seg, int size, int64_t *best,
		   int64_t *total)
{
	struct run *runs = malloc((pl->t->cap->n_nodes + 1) * sizeof(*runs));
	size_t n;

	*best = *total = 0;
	if (!runs)
		return;
	n = runs_of(pl, level, 0, pl->t->cap->n_nodes, true, seg, size, runs);
	for (size_t i = 0; i < n; i++) {
		if (runs[i].units > *best)
			*best = runs[i].units;
		*total += runs[i].units;
	}
	free(runs);
}

static int clamp_int(int64_t v)
{
	return v > INT32_MAX ? INT32_MAX : (int)v;
}

int topo_fit(const struct capacity *c, const struct cap_demand *d, int count,
	     const struct topo_request *r, const unsigned char *fence, uint32_t *placement,
	     struct topo_fit *fit)
{
	const struct topo_map *t = r->map;
	size_t nn = c->n_nodes;
	struct place pl = { t, r, NULL, NULL, 0 };
	int level = r->segment >= 0 ? r->segment : r->required;
	int size = r->segment >= 0 ? r->segment_size : 1;
	int survey_level = r->required >= 0 ? r->required : level;
	int64_t units, best, total, *by_node = NULL;
	struct run *runs = NULL, chosen;
	int err = 0;

	memset(fit, 0, sizeof(*fit));
	fit->level = level;
	if (count < 1 || !valid_level(t, r->required) || !valid_level(t, r->preferred) ||
	    !valid_level(t, r->segment) || (r->segment >= 0 && (r->segment_size < 1 ||
								 count % r->segment_size)))
		return CADRE_EINVAL;
	units = count / size;
	fit->units = (int)units;
	if (level >= 0)
		fit->carriers = t->carriers[level];
	pl.room = calloc(nn + 1, sizeof(*pl.room));
	pl.taken = calloc((size_t)count, sizeof(*pl.taken));
	by_node = calloc(nn + 1, sizeof(*by_node));
	runs = calloc(nn + 1, sizeof(*runs));
	if (!pl.room || !pl.taken || !by_node || !runs) {
		err = CADRE_ENOMEM;
		goto out;
	}
	if ((err = fill_room(c, t, d, count, fence, false, pl.room, by_node)))
		goto out;
	if (level >= 0) {
		survey(&pl, survey_level, r->segment, size, &best, &total);
		fit->best_room = clamp_int(best);
		fit->room = clamp_int(total);
	} else {
		fit->room = clamp_int(room_sum(&pl, 0, nn));
		fit->best_room = fit->room;
	}

	if (r->required >= 0) {
		size_t n = runs_of(&pl, r->required, 0, nn, true, r->segment, size, runs);
		long i = pick_one(runs, n, units, r->first_fit);

		if (i < 0)
			goto unplaced;
		chosen = runs[i];
		err = place_in(&pl, chosen.a, chosen.b, r->required + 1, count);
	} else if (fit->room < (r->segment >= 0 ? units : count)) {
		goto unplaced;
	} else {
		err = place_in(&pl, 0, nn, 0, count);
	}
	if (err == CADRE_EINVAL)
		goto unplaced;  /* a shape the sums promised but the packing could not keep */
	if (err || pl.n_taken != count)
		goto out;
	fit->fits = true;
	fit->best_ever = fit->best_room;
	if (placement) {
		qsort(pl.taken, (size_t)count, sizeof(*pl.taken), compare_u32);
		for (int i = 0; i < count; i++)
			placement[i] = t->order[pl.taken[i]];
	}
	goto out;
unplaced:
	/* What the cluster could hold empty: for the message and the starvation guard. */
	err = 0;
	if (level >= 0 && !(err = fill_room(c, t, d, count, fence, true, pl.room, by_node))) {
		survey(&pl, survey_level, r->segment, size, &best, &total);
		fit->best_ever = clamp_int(r->required >= 0 ? best : total);
	}
out:
	free(pl.room);
	free(pl.taken);
	free(by_node);
	free(runs);
	return err;
}

size_t topo_hold(const struct capacity *c, const struct cap_demand *d, int count,
		 const struct topo_request *r, unsigned char *fence)
{
	const struct topo_map *t = r->map;
	size_t nn = c->n_nodes, n, held_n = 0;
	int size = r->segment >= 0 ? r->segment_size : 1;
	struct place pl = { t, r, NULL, NULL, 0 };
	struct run *ever = NULL, *now = NULL;
	int64_t *by_node = NULL;
	long best = -1;

	if (r->required < 0 || count < 1 || count % size)
		return 0;
	pl.room = calloc(nn + 1, sizeof(*pl.room));
	by_node = calloc(nn + 1, sizeof(*by_node));
	ever = calloc(nn + 1, sizeof(*ever));
	now = calloc(nn + 1, sizeof(*now));
	if (!pl.room || !by_node || !ever || !now ||
	    fill_room(c, t, d, count, fence, true, pl.room, by_node))
		goto out;
	n = runs_of(&pl, r->required, 0, nn, true, r->segment, size, ever);
	if (fill_room(c, t, d, count, fence, false, pl.room, by_node))
		goto out;
	runs_of(&pl, r->required, 0, nn, true, r->segment, size, now);
	for (size_t i = 0; i < n; i++)
		if (ever[i].units >= count / size &&
		    (best < 0 || now[i].units > now[best].units))
			best = (long)i;
	if (best < 0)
		goto out;
	for (size_t p = now[best].a; p < now[best].b; p++) {
		uint32_t i = t->order[p];

		if (!fence[i] && capacity_eligible(c, d, i)) {
			fence[i] = TOPO_NEWLY_HELD;
			held_n++;
		}
	}
out:
	free(pl.room);
	free(by_node);
	free(ever);
	free(now);
	return held_n;
}

/* "node" or "nodes": a rank is a node of the job, whatever the pods per node. */
static const char *nodes_word(int64_t n)
{
	return n == 1 ? "node" : "nodes";
}

int topo_describe(const struct topo_request *r, int count, const struct topo_fit *fit,
		  struct buf *out)
{
	const struct topo_map *t = r->map;
	int level = fit->level;
	const char *name = topo_level_name(t, level);
	int ret = 0;

	if (level < 0)
		return buf_addf(out, "needs %d %s; there is room for %d", count, nodes_word(count),
				fit->room);
	if (!fit->carriers)
		return buf_addf(out, "no node carries the label %s (the level of %s)",
				t->labels[level], r->segment >= 0 ? "spec.topology.segment" :
				"spec.topology.required");
	if (r->segment >= 0) {
		ret |= buf_addf(out, "needs %d segments of %d %s, each in one %s (%s)",
				fit->units, r->segment_size, nodes_word(r->segment_size), name,
				t->labels[level]);
		if (r->required >= 0)
			ret |= buf_addf(out, ", all in one %s; the most one %s has room for is %d",
					topo_level_name(t, r->required),
					topo_level_name(t, r->required), fit->best_room);
		else
			ret |= buf_addf(out, "; the %ss have room for %d", name, fit->room);
	} else {
		ret |= buf_addf(out, "needs %d %s in one %s (%s); the largest %s has room for %d",
				count, nodes_word(count), name, t->labels[level], name,
				fit->best_room);
	}
	if (fit->best_ever < fit->units)
		ret |= buf_addf(out, ", and none could hold it even empty (at most %d)",
				fit->best_ever);
	return ret;
}
