/*
 * preempt.c - the fewest running gangs to stop for a job of a higher tier
 * (preempt.h).
 */
#include "controller/admission/preempt.h"

#include "base/err.h"

#include <stdlib.h>
#include <string.h>

struct trial {
	struct capacity *cap;
	const struct cap_saved *base;
	const struct adm_job *job;
	const struct pre_victim *v;
	const size_t *order;      /* victims in preference order */
	size_t n;
	unsigned char *gone;      /* per victim (by index into v) */
	uint32_t *placement;
};

static int compare_strings(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* Lowest tier, lowest priority, most recently started, then by name. */
static int compare_victims(const void *pa, const void *pb)
{
	const struct pre_victim *a = *(const struct pre_victim *const *)pa;
	const struct pre_victim *b = *(const struct pre_victim *const *)pb;
	int cmp;

	if (a->tier != b->tier)
		return a->tier < b->tier ? -1 : 1;
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	if (a->started_s != b->started_s)
		return a->started_s > b->started_s ? -1 : 1;
	cmp = compare_strings(a->namespace, b->namespace);
	return cmp ? cmp : compare_strings(a->name, b->name);
}

static void charge_pod(struct capacity *cap, const struct pre_pod *p)
{
	capacity_use_at(cap, p->node, p->cpu_milli, p->memory_milli, p->ext, p->n_ext);
	if (p->occupies)
		cap->occupied[p->node] = 1;
	if (p->exclusive)
		capacity_hold_whole_at(cap, p->node);
}

/* Whether the job fits with the victims marked gone stopped and every other one charged. */
static int try_gone(struct trial *t, bool *fits)
{
	capacity_restore(t->cap, t->base);
	for (size_t i = 0; i < t->n; i++)
		if (!t->gone[i])
			for (size_t k = 0; k < t->v[i].n_pods; k++)
				charge_pod(t->cap, &t->v[i].pods[k]);
	return admission_fits(t->cap, t->job, t->placement, fits);
}

/* Mark gone the first k victims of the order, and no other. */
static void gone_prefix(struct trial *t, size_t k)
{
	memset(t->gone, 0, t->n);
	for (size_t i = 0; i < k; i++)
		t->gone[t->order[i]] = 1;
}

/* The victims' pods by node: at[start[i]..start[i+1]) are node i's (victim index, pod). */
struct by_node {
	size_t *start;
	struct { size_t victim; const struct pre_pod *pod; } *at;
	uint32_t *seen;        /* per node: the last victim (+1) whose gain counted it */
	int64_t *room_full;    /* per node: room with every victim running */
};

static int by_node_build(struct trial *t, struct by_node *b)
{
	size_t nodes = t->cap->n_nodes, total = 0;

	for (size_t v = 0; v < t->n; v++)
		total += t->v[v].n_pods;
	b->start = calloc(nodes + 1, sizeof(*b->start));
	b->at = calloc(total + 1, sizeof(*b->at));
	b->seen = calloc(nodes + 1, sizeof(*b->seen));
	b->room_full = calloc(nodes + 1, sizeof(*b->room_full));
	if (!b->start || !b->at || !b->seen || !b->room_full)
		return CADRE_ENOMEM;
	for (size_t v = 0; v < t->n; v++)
		for (size_t k = 0; k < t->v[v].n_pods; k++)
			b->start[t->v[v].pods[k].node + 1]++;
	for (size_t i = 0; i < nodes; i++)
		b->start[i + 1] += b->start[i];
	for (size_t v = 0; v < t->n; v++)
		for (size_t k = 0; k < t->v[v].n_pods; k++) {
			size_t i = t->v[v].pods[k].node, slot = b->start[i] + b->seen[i]++;

			b->at[slot].victim = v;
			b->at[slot].pod = &t->v[v].pods[k];
		}
	memset(b->seen, 0, (nodes + 1) * sizeof(*b->seen));
	return 0;
}

static void by_node_release(struct by_node *b)
{
	free(b->start);
	free(b->at);
	free(b->seen);
	free(b->room_full);
}

/*
 * Pods of the job that victim v's nodes gain when it alone stops: each of
 * its nodes' rows rebuilt from the base with every other victim's pods,
 * its room read, and the row put back as full has it.
 */
static int64_t gain_alone(struct trial *t, struct by_node *b, const struct cap_saved *full,
			  size_t v)
{
	int64_t gain = 0;

	for (size_t k = 0; k < t->v[v].n_pods; k++) {
		size_t i = t->v[v].pods[k].node;

		if (b->seen[i] == v + 1)
			continue;
		b->seen[i] = (uint32_t)(v + 1);
		capacity_restore_node(t->cap, t->base, i);
		for (size_t e = b->start[i]; e < b->start[i + 1]; e++)
			if (b->at[e].victim != v)
				charge_pod(t->cap, b->at[e].pod);
		gain += capacity_room(t->cap, &t->job->demand, i, t->job->num_nodes) -
			b->room_full[i];
		capacity_restore_node(t->cap, full, i);
	}
	return gain;
}

/*
 * one_enough for a job whose pods are placed by count alone (no topology,
 * no listed nodes): it fits when the rooms of the nodes add up to its
 * pods, so a victim is tried only when what its nodes gain makes up the
 * shortfall, and then confirmed by a whole what-if.
 */
static int one_enough_by_room(struct trial *t, size_t *one)
{
	struct by_node b = { 0 };
	struct cap_saved full = { 0 };
	int64_t total = 0;
	bool fits;
	int ret;

	*one = t->n;
	memset(t->gone, 0, t->n);
	if ((ret = try_gone(t, &fits)) || (ret = by_node_build(t, &b)) ||
	    (ret = capacity_save(t->cap, &full)) ||
	    (ret = capacity_rooms(t->cap, &t->job->demand, t->job->num_nodes, NULL, false,
				  b.room_full)))
		goto out;
	for (size_t i = 0; i < t->cap->n_nodes; i++)
		total += b.room_full[i];
	for (size_t i = 0; i < t->n && *one == t->n; i++) {
		if (total + gain_alone(t, &b, &full, t->order[i]) < t->job->num_nodes)
			continue;
		memset(t->gone, 0, t->n);
		t->gone[t->order[i]] = 1;
		if ((ret = try_gone(t, &fits)))
			goto out;
		if (fits)
			*one = i;
		capacity_restore(t->cap, &full);
	}
out:
	cap_saved_release(&full);
	by_node_release(&b);
	return ret;
}

/* The first victim of the order that is enough alone, into *one; n when none is. */
static int one_enough(struct trial *t, size_t *one)
{
	bool fits;
	int ret;

	*one = t->n;
	for (size_t i = 0; i < t->n; i++) {
		memset(t->gone, 0, t->n);
		t->gone[t->order[i]] = 1;
		if ((ret = try_gone(t, &fits)))
			return ret;
		if (fits) {
			*one = i;
			return 0;
		}
	}
	return 0;
}

/* The shortest prefix of the order that is enough (fits grows with it), then pruned. */
static int prefix_pruned(struct trial *t, size_t *k_out)
{
	size_t lo = 1, hi = t->n;
	bool fits;
	int ret;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		gone_prefix(t, mid);
		if ((ret = try_gone(t, &fits)))
			return ret;
		if (fits)
			hi = mid;
		else
			lo = mid + 1;
	}
	gone_prefix(t, lo);
	/* From the last taken back: keep every gang the others can do without. */
	for (size_t i = lo; i-- > 0;) {
		t->gone[t->order[i]] = 0;
		if ((ret = try_gone(t, &fits)))
			return ret;
		if (!fits)
			t->gone[t->order[i]] = 1;
	}
	*k_out = lo;
	return 0;
}

static int choose(struct trial *t, size_t *chosen, size_t *n_chosen)
{
	size_t one, k;
	bool fits;
	int ret;

	memset(t->gone, 1, t->n);
	if ((ret = try_gone(t, &fits)) || !fits)
		return ret;  /* not even with every candidate gone: nothing */
	if (!t->job->topo && !t->job->demand.n_required)
		ret = one_enough_by_room(t, &one);
	else
		ret = one_enough(t, &one);
	if (ret)
		return ret;
	if (one < t->n) {
		chosen[(*n_chosen)++] = t->order[one];
		gone_prefix(t, 0);
		t->gone[t->order[one]] = 1;
	} else {
		if ((ret = prefix_pruned(t, &k)))
			return ret;
		for (size_t i = 0; i < k; i++)
			if (t->gone[t->order[i]])
				chosen[(*n_chosen)++] = t->order[i];
	}
	return try_gone(t, &fits);  /* leave cap as the choice makes it */
}

int preempt_choose(struct capacity *cap, const struct adm_job *job,
		   const struct pre_victim *victims, size_t n, size_t *chosen, size_t *n_chosen)
{
	struct cap_saved base;
	struct trial t = { cap, &base, job, victims, NULL, n, NULL, NULL };
	const struct pre_victim **by_pref = NULL;
	size_t *order;
	int ret;

	*n_chosen = 0;
	if (job->num_nodes < 1)
		return CADRE_EINVAL;
	if (!n)
		return 0;
	if ((ret = capacity_save(cap, &base)))
		return ret;
	order = calloc(n, sizeof(*order));
	by_pref = calloc(n, sizeof(*by_pref));
	t.gone = calloc(n, 1);
	t.placement = calloc((size_t)job->num_nodes, sizeof(*t.placement));
	if (!order || !by_pref || !t.gone || !t.placement) {
		ret = CADRE_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		by_pref[i] = &victims[i];
	qsort(by_pref, n, sizeof(*by_pref), compare_victims);
	for (size_t i = 0; i < n; i++)
		order[i] = (size_t)(by_pref[i] - victims);
	t.order = order;
	ret = choose(&t, chosen, n_chosen);
out:
	free(by_pref);
	free(order);
	free(t.gone);
	free(t.placement);
	cap_saved_release(&base);
	return ret;
}
