/*
 * capacity.c - free capacity per node as a matrix of int64 milli-units, one
 * row per node and one column per resource. A pod's demand touches at most
 * four columns (cpu, memory, the pod slot, its accelerator), so it is
 * resolved once per call into a short list, and a node's room is a few
 * comparisons (divisions only where there is room). Which nodes a pod may
 * use is worked out once per eligibility class (see struct cap_class).
 * Nothing is allocated after capacity_init.
 */
#include "controller/admission/capacity.h"

#include <limits.h>

#include "base/buf.h"
#include "base/err.h"
#include "api/accel.h"
#include "api/dra.h"
#include "api/quantity.h"
#include "controller/build/build.h"

enum { RES_CPU, RES_MEMORY, RES_PODS, RES_FIXED };

/* A node without a known pod limit: more than any gang can ask for. */
#define UNLIMITED_PODS ((int64_t)INT_MAX * 1000)

/* Why a node is no place for a pod; each node is counted under the first that applies. */
enum exclusion { OK, NOT_READY, UNSCHEDULABLE, WRONG_ACCEL, SELECTOR, AFFINITY, VOLUME, TAINTED,
		 EXCLUDED_BY_JOB, AVOIDED, TIMED_OUT, OCCUPIED, N_EXCLUSIONS };

/*
 * Eligibility classes: which nodes a pod may use depends only on its
 * accelerator resource and type, its nodeSelector and its tolerations, and
 * most jobs of a queue have no selector or toleration and one of a few
 * types. A class is worked out once (a substring match and a taint check
 * per node) and every later scan visits its eligible nodes only.
 */
#define CLASS_SLOTS 8
#define CLASS_RESOURCE_MAX 320  /* a qualified name: 253 + '/' + 63 */
#define CLASS_TYPE_MAX 64

struct cap_class {
	bool used;
	char resource[CLASS_RESOURCE_MAX];  /* "" for a pod without accelerators */
	char taint[CLASS_RESOURCE_MAX];     /* the accelerator taint it tolerates; "" likewise */
	char type[CLASS_TYPE_MAX];          /* "" for any type */
	unsigned char *why;                 /* per node: enum exclusion without selector or tolerations */
	uint32_t *eligible;                 /* nodes whose why is OK, in node order */
	size_t n_eligible;
	int count[N_EXCLUSIONS];            /* nodes per reason */
};

struct cap_memo {
	struct cap_class class[CLASS_SLOTS];
	size_t next;  /* the slot to reuse next */
};

/* A demand resolved to columns; amounts in milli-units per pod. */
struct need {
	size_t n;
	size_t col[4 + CAP_EXTRA_MAX];
	int64_t amount[4 + CAP_EXTRA_MAX];
	bool missing;                /* it asks for a resource no node offers */
	bool plain;                  /* nothing but the class decides where it may go */
	int per_node;                /* most pods a node takes (anti-affinity); 0: no limit */
	const struct cap_class *cls;
};

static int compare_names(const void *a, const void *b, void *arg)
{
	const struct cap_node *nodes = arg;

	return strcmp(nodes[*(const uint32_t *)a].name, nodes[*(const uint32_t *)b].name);
}

static long find_res(const struct capacity *c, const char *name)
{
	for (size_t r = RES_FIXED; r < c->n_res; r++)
		if (!strcmp(c->res_names[r], name))
			return (long)r;
	return -1;
}

static const char *label_of(const struct cap_node *node, const char *key)
{
	for (size_t i = 0; i < node->n_labels; i++)
		if (node->labels[i].key && !strcmp(node->labels[i].key, key))
			return node->labels[i].value ? node->labels[i].value : "";
	return NULL;
}

int capacity_init(struct capacity *c, const struct cap_node *nodes, size_t n_nodes,
		  const char *accel_label)
{
	size_t n_names = RES_FIXED;

	memset(c, 0, sizeof(*c));
	c->nodes = nodes;
	c->n_nodes = n_nodes;
	c->accel_label = accel_label && *accel_label ? accel_label : BUILD_DEFAULT_ACCELERATOR_LABEL;
	if (n_nodes > CAPACITY_MAX_NODES)
		return CADRE_EINVAL;
	for (size_t i = 0; i < n_nodes; i++) {
		if (!nodes[i].name)
			return CADRE_EINVAL;
		n_names += nodes[i].n_extended;
	}
	/* Room for every name; duplicates are folded below, so this is an upper bound. */
	c->res_names = calloc(n_names, sizeof(*c->res_names));
	c->accel_value = calloc(n_nodes ? n_nodes : 1, sizeof(*c->accel_value));
	c->by_name = calloc(n_nodes ? n_nodes : 1, sizeof(*c->by_name));
	c->memo = calloc(1, sizeof(*c->memo));
	c->occupied = calloc(n_nodes ? n_nodes : 1, 1);
	if (!c->res_names || !c->accel_value || !c->by_name || !c->memo || !c->occupied)
		return CADRE_ENOMEM;
	for (size_t k = 0; k < CLASS_SLOTS; k++) {
		c->memo->class[k].why = calloc(n_nodes ? n_nodes : 1, 1);
		c->memo->class[k].eligible = calloc(n_nodes ? n_nodes : 1, sizeof(uint32_t));
		if (!c->memo->class[k].why || !c->memo->class[k].eligible)
			return CADRE_ENOMEM;
	}
	c->res_names[RES_CPU] = "cpu";
	c->res_names[RES_MEMORY] = "memory";
	c->res_names[RES_PODS] = "pods";
	c->n_res = RES_FIXED;
	for (size_t i = 0; i < n_nodes; i++)
		for (size_t e = 0; e < nodes[i].n_extended; e++) {
			const char *name = nodes[i].extended[e].name;

			if (name && find_res(c, name) < 0)
				c->res_names[c->n_res++] = name;
		}

	c->alloc = calloc(n_nodes * c->n_res + 1, sizeof(*c->alloc));
	c->free = calloc(n_nodes * c->n_res + 1, sizeof(*c->free));
	if (!c->alloc || !c->free)
		return CADRE_ENOMEM;
	for (size_t i = 0; i < n_nodes; i++) {
		int64_t *row = c->alloc + i * c->n_res;

		row[RES_CPU] = nodes[i].cpu_milli;
		row[RES_MEMORY] = nodes[i].memory_milli;
		row[RES_PODS] = nodes[i].pods > 0 && nodes[i].pods < INT_MAX ?
				nodes[i].pods * 1000 : UNLIMITED_PODS;
		for (size_t e = 0; e < nodes[i].n_extended; e++)
			if (nodes[i].extended[e].name)
				row[find_res(c, nodes[i].extended[e].name)] = nodes[i].extended[e].milli;
		c->accel_value[i] = label_of(&nodes[i], c->accel_label);
		c->by_name[i] = (uint32_t)i;
	}
	memcpy(c->free, c->alloc, n_nodes * c->n_res * sizeof(*c->free));
	qsort_r(c->by_name, n_nodes, sizeof(*c->by_name), compare_names, (void *)nodes);
	for (size_t i = 1; i < n_nodes; i++)
		if (!strcmp(nodes[c->by_name[i]].name, nodes[c->by_name[i - 1]].name))
			return CADRE_EINVAL;
	return 0;
}

void capacity_release(struct capacity *c)
{
	free(c->res_names);
	free(c->alloc);
	free(c->free);
	free(c->accel_value);
	free(c->by_name);
	free(c->occupied);
	for (size_t k = 0; c->memo && k < CLASS_SLOTS; k++) {
		free(c->memo->class[k].why);
		free(c->memo->class[k].eligible);
	}
	free(c->memo);
	memset(c, 0, sizeof(*c));
}

long capacity_node_index(const struct capacity *c, const char *name)
{
	size_t lo = 0, hi = c->n_nodes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = strcmp(name, c->nodes[c->by_name[mid]].name);

		if (cmp == 0)
			return (long)c->by_name[mid];
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* Saturating, so a flood of usage cannot wrap a free amount around to plenty. */
static void subtract(int64_t *v, int64_t amount)
{
	if (amount > 0 && *v < INT64_MIN + amount)
		*v = INT64_MIN;
	else if (amount < 0 && *v > INT64_MAX + amount)
		*v = INT64_MAX;
	else
		*v -= amount;
}

int capacity_use(struct capacity *c, const char *node, int64_t cpu_milli, int64_t memory_milli,
		 const struct cap_resource *extended, size_t n_extended)
{
	long i = node ? capacity_node_index(c, node) : -1;

	if (i < 0)
		return CADRE_ENOTFOUND;
	capacity_use_at(c, (size_t)i, cpu_milli, memory_milli, extended, n_extended);
	return 0;
}

void capacity_use_at(struct capacity *c, size_t i, int64_t cpu_milli, int64_t memory_milli,
		     const struct cap_resource *extended, size_t n_extended)
{
	int64_t *row = c->free + i * c->n_res;

	subtract(&row[RES_CPU], cpu_milli);
	subtract(&row[RES_MEMORY], memory_milli);
	subtract(&row[RES_PODS], 1000);
	capacity_use_extended_at(c, i, extended, n_extended);
}

void capacity_use_extended_at(struct capacity *c, size_t i, const struct cap_resource *extended,
			      size_t n_extended)
{
	int64_t *row = c->free + i * c->n_res;

	for (size_t e = 0; e < n_extended; e++) {
		long r = extended[e].name ? find_res(c, extended[e].name) : -1;

		if (r >= 0)
			subtract(&row[r], extended[e].milli);
	}
}

int capacity_occupy(struct capacity *c, const char *node)
{
	long i = node ? capacity_node_index(c, node) : -1;

	if (i < 0)
		return CADRE_ENOTFOUND;
	c->occupied[i] = 1;
	return 0;
}

int capacity_save(const struct capacity *c, struct cap_saved *saved)
{
	size_t n = c->n_nodes * c->n_res;

	saved->free = malloc((n ? n : 1) * sizeof(*saved->free));
	saved->occupied = malloc(c->n_nodes ? c->n_nodes : 1);
	saved->n_nodes = c->n_nodes;
	saved->n_res = c->n_res;
	if (!saved->free || !saved->occupied) {
		cap_saved_release(saved);
		return CADRE_ENOMEM;
	}
	memcpy(saved->free, c->free, n * sizeof(*saved->free));
	memcpy(saved->occupied, c->occupied, c->n_nodes);
	return 0;
}

void capacity_restore(struct capacity *c, const struct cap_saved *saved)
{
	memcpy(c->free, saved->free, saved->n_nodes * saved->n_res * sizeof(*c->free));
	memcpy(c->occupied, saved->occupied, saved->n_nodes);
}

void capacity_restore_node(struct capacity *c, const struct cap_saved *saved, size_t i)
{
	memcpy(c->free + i * c->n_res, saved->free + i * saved->n_res,
	       saved->n_res * sizeof(*c->free));
	c->occupied[i] = saved->occupied[i];
}

void cap_saved_release(struct cap_saved *saved)
{
	free(saved->free);
	free(saved->occupied);
	memset(saved, 0, sizeof(*saved));
}

/* Nothing is left of node i's free capacity. */
static void hold_whole(struct capacity *c, size_t i)
{
	int64_t *row = c->free + i * c->n_res;

	for (size_t k = 0; k < c->n_res; k++)
		if (row[k] > 0)
			row[k] = 0;
	c->occupied[i] = 1;
}

int capacity_hold_whole(struct capacity *c, const char *node)
{
	long i = node ? capacity_node_index(c, node) : -1;

	if (i < 0)
		return CADRE_ENOTFOUND;
	hold_whole(c, (size_t)i);
	return 0;
}

void capacity_hold_whole_at(struct capacity *c, size_t i)
{
	hold_whole(c, i);
}

static bool wants_accel(const struct cap_demand *d)
{
	return d->accel_count > 0 && d->accel_resource && *d->accel_resource;
}

/* The key of the accelerator taint a pod of d tolerates; NULL when it wants none. */
static const char *accel_taint(const struct cap_demand *d)
{
	if (!wants_accel(d))
		return NULL;
	return d->accel_taint && *d->accel_taint ? d->accel_taint : d->accel_resource;
}

/* The DeviceClass a DRA demand's devices come from; NULL for a device plugin's resource. */
static const char *device_class(const char *resource)
{
	size_t n = strlen(CAP_DEVICE_CLASS_PREFIX);

	return resource && !strncmp(resource, CAP_DEVICE_CLASS_PREFIX, n) ? resource + n : NULL;
}

static bool tolerated(const struct cap_demand *d, bool plain, const struct cap_taint *taint);

/* The reason node i is no place for a pod of the class, ignoring nodeSelector and tolerations. */
static enum exclusion class_exclusion(const struct capacity *c, const struct cap_demand *d,
				      size_t i)
{
	const struct cap_node *node = &c->nodes[i];

	if (!node->ready)
		return NOT_READY;
	if (node->unschedulable)
		return UNSCHEDULABLE;
	if (wants_accel(d) && d->accel_type && *d->accel_type &&
	    !accel_matches_label(d->accel_type, c->accel_value[i]))
		return WRONG_ACCEL;
	for (size_t k = 0; k < node->n_taints; k++)
		if (!tolerated(d, true, &node->taints[k]))
			return TAINTED;
	return OK;
}

/*
 * The class of d, from the memo or worked out now into the slot used
 * longest ago. Names too long to remember are worked out into that slot
 * without being remembered.
 */
static const struct cap_class *class_of(const struct capacity *c, const struct cap_demand *d)
{
	struct cap_memo *m = c->memo;
	const char *resource = wants_accel(d) ? d->accel_resource : "";
	const char *taint = wants_accel(d) ? accel_taint(d) : "";
	const char *type = wants_accel(d) && d->accel_type ? d->accel_type : "";
	bool keep = strlen(resource) < CLASS_RESOURCE_MAX && strlen(taint) < CLASS_RESOURCE_MAX &&
		    strlen(type) < CLASS_TYPE_MAX;
	struct cap_class *cls;

	for (size_t k = 0; k < CLASS_SLOTS && keep; k++)
		if (m->class[k].used && !strcmp(m->class[k].resource, resource) &&
		    !strcmp(m->class[k].taint, taint) && !strcmp(m->class[k].type, type))
			return &m->class[k];
	cls = &m->class[m->next];
	m->next = (m->next + 1) % CLASS_SLOTS;
	cls->used = keep;
	if (keep) {
		memcpy(cls->resource, resource, strlen(resource) + 1);
		memcpy(cls->taint, taint, strlen(taint) + 1);
		memcpy(cls->type, type, strlen(type) + 1);
	}
	cls->n_eligible = 0;
	memset(cls->count, 0, sizeof(cls->count));
	for (size_t i = 0; i < c->n_nodes; i++) {
		enum exclusion why = class_exclusion(c, d, i);

		cls->why[i] = (unsigned char)why;
		cls->count[why]++;
		if (why == OK)
			cls->eligible[cls->n_eligible++] = (uint32_t)i;
	}
	return cls;
}

/* Add the column of resource name, or mark need missing when no node offers it. */
static void need_resource(const struct capacity *c, struct need *need, const char *name,
			  int64_t milli)
{
	long r = find_res(c, name);

	if (r < 0) {
		need->missing = true;
		return;
	}
	need->col[need->n] = (size_t)r;
	need->amount[need->n++] = milli;
}

/* Resolve d to columns. CADRE_EINVAL for a negative amount or too many extras. */
static int resolve(const struct capacity *c, const struct cap_demand *d, struct need *need)
{
	memset(need, 0, sizeof(*need));
	if (d->cpu_milli < 0 || d->memory_milli < 0 || d->accel_count < 0 ||
	    d->accel_count > INT64_MAX / 1000 || d->n_extra > CAP_EXTRA_MAX)
		return CADRE_EINVAL;
	for (size_t k = 0; k < d->n_extra; k++)
		if (d->extra[k].milli < 0 || !d->extra[k].name)
			return CADRE_EINVAL;
	if (d->cpu_milli > 0) {
		need->col[need->n] = RES_CPU;
		need->amount[need->n++] = d->cpu_milli;
	}
	if (d->memory_milli > 0) {
		need->col[need->n] = RES_MEMORY;
		need->amount[need->n++] = d->memory_milli;
	}
	need->col[need->n] = RES_PODS;
	need->amount[need->n++] = 1000;
	if (wants_accel(d))
		need_resource(c, need, d->accel_resource, d->accel_count * 1000);
	for (size_t k = 0; k < d->n_extra; k++)
		if (d->extra[k].milli > 0)
			need_resource(c, need, d->extra[k].name, d->extra[k].milli);
	need->per_node = d->one_per_node || d->exclusive ? 1 : 0;
	need->plain = d->n_node_selector == 0 && d->n_tolerations == 0 && d->n_avoid == 0 &&
		      d->n_timed_out == 0 && d->n_affinity == 0 && d->n_exclude == 0 &&
		      d->n_required == 0 && !d->exclusive;
	need->cls = class_of(c, d);
	return 0;
}

/* How many pods of need fit in row, at most limit. */
static int copies(const int64_t *row, const struct need *need, int limit)
{
	int64_t best;

	if (need->per_node && limit > need->per_node)
		limit = need->per_node;
	best = limit;
	if (need->missing || limit < 1)
		return 0;
	/* Compare before dividing: on a busy cluster most nodes have no room at all. */
	for (size_t k = 0; k < need->n; k++)
		if (row[need->col[k]] < need->amount[k])
			return 0;
	for (size_t k = 0; k < need->n && best > 1; k++) {
		int64_t n = row[need->col[k]] / need->amount[k];

		if (n < best)
			best = n;
	}
	return (int)best;
}

/*
 * Room for pods of need in row, fractional: 0.75 when the scarcest resource
 * a pod needs is at three quarters of one pod's share. It ranks nodes that
 * have room for no whole pod by how close they are.
 */
static double headroom(const int64_t *row, const struct need *need)
{
	double best = -1;

	if (need->missing)
		return 0;
	for (size_t k = 0; k < need->n; k++) {
		double have = row[need->col[k]] <= 0 ? 0 :
			      (double)row[need->col[k]] / (double)need->amount[k];

		if (best < 0 || have < best)
			best = have;
	}
	if (need->per_node && best > need->per_node)
		best = need->per_node;
	return best < 0 ? 0 : best;
}

static bool listed(const char *const *names, size_t n, const char *name)
{
	for (size_t k = 0; k < n; k++)
		if (names[k] && !strcmp(names[k], name))
			return true;
	return false;
}

static bool tolerates(const struct cap_toleration *t, const struct cap_taint *taint)
{
	const char *tv = t->value ? t->value : "", *v = taint->value ? taint->value : "";

	if (t->effect != CAP_EFFECT_ANY && t->effect != taint->effect)
		return false;
	if (t->key && *t->key) {
		if (!taint->key || strcmp(t->key, taint->key))
			return false;
	} else if (t->op != CAP_TOLERATE_EXISTS) {
		return false;  /* an empty key means "every taint" only with Exists */
	}
	return t->op == CAP_TOLERATE_EXISTS || !strcmp(tv, v);
}

/* plain: count only the toleration every accelerator pod has, not the demand's own. */
static bool tolerated(const struct cap_demand *d, bool plain, const struct cap_taint *taint)
{
	if (taint->effect == CAP_PREFER_NO_SCHEDULE)
		return true;
	/* The toleration build_pod adds for the accelerator resource. */
	if (wants_accel(d) && taint->key && !strcmp(taint->key, accel_taint(d)) &&
	    taint->effect == CAP_NO_SCHEDULE)
		return true;
	for (size_t i = 0; !plain && i < d->n_tolerations; i++)
		if (tolerates(&d->tolerations[i], taint))
			return true;
	return false;
}

/*
 * Why node i is no place for a pod of d: its class's answer, then the nodes
 * it leaves behind, nodeSelector, required node affinity, its Volumes' node
 * affinity and tolerations.
 */
static enum exclusion exclusion(const struct capacity *c, const struct cap_demand *d,
				const struct need *need, size_t i)
{
	const struct cap_node *node = &c->nodes[i];
	enum exclusion why = (enum exclusion)need->cls->why[i];

	if (need->plain || (why != OK && why != TAINTED))
		return why;
	if (listed(d->exclude, d->n_exclude, node->name))
		return EXCLUDED_BY_JOB;
	if (d->exclusive && c->occupied[i])
		return OCCUPIED;
	if (listed(d->avoid, d->n_avoid, node->name))
		return AVOIDED;
	if (listed(d->timed_out, d->n_timed_out, node->name))
		return TIMED_OUT;
	for (size_t k = 0; k < d->n_node_selector; k++) {
		const char *v = d->node_selector[k].key ? label_of(node, d->node_selector[k].key) : NULL;
		const char *want = d->node_selector[k].value ? d->node_selector[k].value : "";

		if (!v || strcmp(v, want))
			return SELECTOR;
	}
	for (size_t k = 0; k < d->n_affinity; k++)
		if (!node_selector_matches(&d->affinity[k], node->name, node->labels,
					   node->n_labels))
			return d->affinity[k].volume ? VOLUME : AFFINITY;
	for (size_t k = 0; k < node->n_taints; k++)
		if (!tolerated(d, false, &node->taints[k]))
			return TAINTED;
	return OK;
}

/* How many nodes a scan visits, and the k-th: the eligible ones of a plain demand, else all. */
static size_t scan_len(const struct capacity *c, const struct need *need)
{
	return need->plain ? need->cls->n_eligible : c->n_nodes;
}

static size_t scan_node(const struct need *need, size_t k)
{
	return need->plain ? need->cls->eligible[k] : k;
}

bool capacity_eligible(const struct capacity *c, const struct cap_demand *d, size_t i)
{
	struct need need;

	return i < c->n_nodes && !resolve(c, d, &need) && exclusion(c, d, &need, i) == OK;
}

size_t capacity_candidates(const struct capacity *c, const struct cap_demand *d,
			   const unsigned char *fence, int limit, struct cap_candidate *out)
{
	struct need need;
	size_t n = 0;

	if (resolve(c, d, &need))
		return 0;
	for (size_t k = 0; k < scan_len(c, &need); k++) {
		size_t i = scan_node(&need, k);
		const int64_t *row = c->free + i * c->n_res;
		int empty;

		if ((fence && fence[i]) || (!need.plain && exclusion(c, d, &need, i) != OK))
			continue;
		empty = copies(c->alloc + i * c->n_res, &need, limit);
		if (empty < 1)
			continue;
		out[n].node = (uint32_t)i;
		out[n].room_empty = empty;
		out[n].headroom = headroom(row, &need);
		n++;
	}
	return n;
}

int capacity_room(const struct capacity *c, const struct cap_demand *d, size_t i, int limit)
{
	struct need need;

	if (i >= c->n_nodes || resolve(c, d, &need))
		return 0;
	return copies(c->free + i * c->n_res, &need, limit);
}

int capacity_room_empty(const struct capacity *c, const struct cap_demand *d, size_t i, int limit)
{
	struct need need;

	if (i >= c->n_nodes || resolve(c, d, &need))
		return 0;
	return copies(c->alloc + i * c->n_res, &need, limit);
}

int capacity_rooms(const struct capacity *c, const struct cap_demand *d, int limit,
		   const unsigned char *fence, bool empty, int64_t *room)
{
	struct need need;
	int ret = resolve(c, d, &need);

	if (ret)
		return ret;
	memset(room, 0, c->n_nodes * sizeof(*room));
	for (size_t k = 0; k < scan_len(c, &need); k++) {
		size_t i = scan_node(&need, k);
		const int64_t *row = (empty ? c->alloc : c->free) + i * c->n_res;

		if ((fence && fence[i]) || (!need.plain && exclusion(c, d, &need, i) != OK))
			continue;
		room[i] = copies(row, &need, limit);
	}
	return 0;
}

/*
 * The nodes the demand names (spec.nodeList): one pod each, first, while
 * each can take it. false, with fit->required_busy, when one cannot (gone,
 * not eligible, held back or full) or there are more than count.
 */
static bool place_required(const struct capacity *c, const struct cap_demand *d,
			   const struct need *need, int count, const unsigned char *fence,
			   uint32_t *placement, struct cap_fit *fit)
{
	for (size_t r = 0; r < d->n_required; r++) {
		long i = capacity_node_index(c, d->required[r]);

		if (i < 0 || (int)r >= count || exclusion(c, d, need, (size_t)i) != OK ||
		    (fence && fence[i]) || copies(c->free + (size_t)i * c->n_res, need, 1) < 1) {
			fit->required_busy = d->required[r];
			return false;
		}
		if (placement)
			placement[fit->placed] = (uint32_t)i;
		fit->placed++;
		fit->ever++;
		fit->eligible++;
		fit->nodes_with_room++;
	}
	fit->room = fit->placed;
	fit->fits = fit->placed == count;
	return true;
}

int capacity_fit(const struct capacity *c, const struct cap_demand *d, int count,
		 const unsigned char *fence, uint32_t *placement, struct cap_fit *fit)
{
	struct need need;
	int ret;

	memset(fit, 0, sizeof(*fit));
	if (count < 1)
		return CADRE_EINVAL;
	ret = resolve(c, d, &need);
	if (ret)
		return ret;
	if (d->n_required && (!place_required(c, d, &need, count, fence, placement, fit) ||
			      fit->fits))
		return 0;
	if (need.plain) {
		/* The class has counted the nodes left out, once for every job like this one. */
		fit->not_ready = need.cls->count[NOT_READY];
		fit->unschedulable = need.cls->count[UNSCHEDULABLE];
		fit->wrong_accel = need.cls->count[WRONG_ACCEL];
		fit->tainted = need.cls->count[TAINTED];
	}
	for (size_t k = 0; k < scan_len(c, &need); k++) {
		size_t i = scan_node(&need, k);
		int here, ever;

		if (d->n_required && listed(d->required, d->n_required, c->nodes[i].name))
			continue;  /* it has its pod already */
		switch (need.plain ? OK : exclusion(c, d, &need, i)) {
		case NOT_READY: fit->not_ready++; continue;
		case UNSCHEDULABLE: fit->unschedulable++; continue;
		case WRONG_ACCEL: fit->wrong_accel++; continue;
		case SELECTOR: fit->selector_mismatch++; continue;
		case AFFINITY: fit->affinity_mismatch++; continue;
		case VOLUME: fit->volume_mismatch++; continue;
		case TAINTED: fit->tainted++; continue;
		case EXCLUDED_BY_JOB: fit->excluded++; continue;
		case OCCUPIED: fit->occupied++; continue;
		case AVOIDED: fit->avoided++; continue;
		case TIMED_OUT: fit->timed_out++; continue;
		case OK: break;
		case N_EXCLUSIONS: break;
		}
		fit->eligible++;
		/* Saturates at count after a node or two, and then costs nothing. */
		ever = copies(c->alloc + i * c->n_res, &need, count - fit->ever);
		fit->ever += ever;
		if (fence && fence[i]) {
			fit->fenced++;
			continue;
		}
		here = copies(c->free + i * c->n_res, &need, count - fit->placed);
		if (here > 0) {
			fit->nodes_with_room++;
			for (int p = 0; p < here && placement; p++)
				placement[fit->placed + p] = (uint32_t)i;
			fit->placed += here;
			fit->room = fit->placed;
			if (fit->placed == count) {
				fit->fits = true;
				return 0;
			}
		}
	}
	return 0;
}

void capacity_take(struct capacity *c, const struct cap_demand *d, const uint32_t *placement,
		   int count)
{
	struct need need;

	if (resolve(c, d, &need))
		return;
	for (int p = 0; p < count; p++) {
		int64_t *row;

		if (placement[p] >= c->n_nodes)
			continue;
		row = c->free + (size_t)placement[p] * c->n_res;
		for (size_t k = 0; k < need.n; k++)
			subtract(&row[need.col[k]], need.amount[k]);
		c->occupied[placement[p]] = 1;
		if (d->exclusive)
			hold_whole(c, placement[p]);
	}
}

int capacity_reserve(struct capacity *c, const struct cap_demand *d, int count, const char *node,
		     int *unplaced)
{
	struct need need;
	int left = count;
	int ret;

	if (unplaced)
		*unplaced = count > 0 ? count : 0;
	if (count < 0)
		return CADRE_EINVAL;
	ret = resolve(c, d, &need);
	if (ret)
		return ret;
	if (node) {
		long i = capacity_node_index(c, node);
		int64_t *row;

		if (i < 0)
			return CADRE_ENOTFOUND;
		row = c->free + (size_t)i * c->n_res;
		for (int p = 0; p < count; p++)
			for (size_t k = 0; k < need.n; k++)
				subtract(&row[need.col[k]], need.amount[k]);
		c->occupied[i] = 1;
		if (d->exclusive && count > 0)
			hold_whole(c, (size_t)i);
		left = 0;
	} else {
		for (size_t k = 0; k < scan_len(c, &need) && left > 0; k++) {
			size_t i = scan_node(&need, k);
			int64_t *row = c->free + i * c->n_res;
			int here;

			if (!need.plain && exclusion(c, d, &need, i) != OK)
				continue;
			here = copies(row, &need, left);
			for (int p = 0; p < here; p++)
				for (size_t r = 0; r < need.n; r++)
					subtract(&row[need.col[r]], need.amount[r]);
			left -= here;
		}
	}
	if (unplaced)
		*unplaced = left;
	return 0;
}

static const char *plural(int n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* "8 nvidia.com/gpu of type H100, 32 CPU, 256Gi memory" or "nothing in particular". */
static int describe_pod(const struct cap_demand *d, struct buf *out)
{
	const char *sep = "";
	int ret = 0;

	if (wants_accel(d) && device_class(d->accel_resource)) {
		ret |= buf_addf(out, "%lld %s of DeviceClass %s", (long long)d->accel_count,
				d->accel_count == 1 ? "device" : "devices",
				device_class(d->accel_resource));
		if (d->accel_type && *d->accel_type)
			ret |= buf_addf(out, " of type %s", d->accel_type);
		sep = ", ";
	} else if (wants_accel(d)) {
		ret |= buf_addf(out, "%lld %s", (long long)d->accel_count, d->accel_resource);
		if (d->accel_type && *d->accel_type)
			ret |= buf_addf(out, " of type %s", d->accel_type);
		sep = ", ";
	}
	if (d->cpu_milli > 0) {
		ret |= buf_adds(out, sep);
		ret |= quantity_format(d->cpu_milli, out);
		ret |= buf_adds(out, " CPU");
		sep = ", ";
	}
	if (d->memory_milli > 0) {
		ret |= buf_adds(out, sep);
		ret |= quantity_format(d->memory_milli, out);
		ret |= buf_adds(out, " memory");
		sep = ", ";
	}
	for (size_t k = 0; k < d->n_extra; k++) {
		if (d->extra[k].milli <= 0 || !d->extra[k].name)
			continue;
		ret |= buf_adds(out, sep);
		ret |= quantity_format(d->extra[k].milli, out);
		ret |= buf_addf(out, " %s", d->extra[k].name);
		sep = ", ";
	}
	if (!*sep)
		ret |= buf_adds(out, "room for a pod");
	if (d->exclusive)
		ret |= buf_adds(out, ", each on a node of its own (spec.exclusive)");
	else if (d->one_per_node)
		ret |= buf_adds(out, ", one a node (pod anti-affinity)");
	return ret ? CADRE_ENOMEM : 0;
}

/* "; not counted: 2 not ready, 1 cordoned, ..." for the nodes left out. */
static int describe_exclusions(const struct cap_demand *d, const struct cap_fit *fit,
			       struct buf *out)
{
	const char *sep = "; not counted: ";
	int ret = 0;

#define EXCLUDED(n, fmt, ...)                                              \
	do {                                                               \
		if ((n) > 0) {                                             \
			ret |= buf_addf(out, "%s%d " fmt, sep, (n), __VA_ARGS__); \
			sep = ", ";                                        \
		}                                                          \
	} while (0)
	EXCLUDED(fit->not_ready, "%s", "not ready");
	EXCLUDED(fit->unschedulable, "%s", "cordoned");
	EXCLUDED(fit->wrong_accel, "without accelerator type %s", d->accel_type);
	EXCLUDED(fit->selector_mismatch, "%s", "not matching nodeSelector");
	EXCLUDED(fit->affinity_mismatch, "%s", "not matching its required node affinity");
	EXCLUDED(fit->volume_mismatch, "%s", "outside its Volumes' PersistentVolume node affinity");
	EXCLUDED(fit->tainted, "with %s it does not tolerate",
		 plural(fit->tainted, "a taint", "taints"));
	EXCLUDED(fit->fenced, "held for a job that has waited longer%s", "");
	if (fit->required_busy)
		ret |= buf_addf(out, "; node %s of spec.nodeList cannot take a rank now",
				fit->required_busy);
	EXCLUDED(fit->excluded, "excluded by the job (spec.excludeNodes)%s", "");
	EXCLUDED(fit->occupied, "with pods of other jobs (spec.exclusive)%s", "");
	EXCLUDED(fit->avoided, "this job left behind after failures there "
		 "(status.excludedNodes)%s", "");
	EXCLUDED(fit->timed_out, "where its gang timed out before (status.excludedNodes)%s", "");
#undef EXCLUDED
	return ret ? CADRE_ENOMEM : 0;
}

int capacity_describe(const struct capacity *c, const struct cap_demand *d, int count,
		      const struct cap_fit *fit, struct buf *out)
{
	int ret = 0;

	/* Before any type: a class without devices is the first thing to fix. */
	if (wants_accel(d) && device_class(d->accel_resource) && find_res(c, d->accel_resource) < 0)
		return buf_addf(out, "no node has devices of DeviceClass %s",
				device_class(d->accel_resource));
	if (wants_accel(d) && d->accel_type && *d->accel_type && fit->eligible == 0) {
		bool any = false;
		struct need need;

		if (resolve(c, d, &need))
			return CADRE_EINVAL;
		for (size_t i = 0; i < c->n_nodes && !any; i++)
			any = accel_matches_label(d->accel_type, c->accel_value[i]);
		if (!any && device_class(d->accel_resource))
			return buf_addf(out, "no node has accelerator type %s (label %s, or "
					"attribute %s of its DeviceClass %s devices)", d->accel_type,
					c->accel_label, c->device_attribute ? c->device_attribute :
					DRA_DEFAULT_ATTRIBUTE, device_class(d->accel_resource));
		if (!any)
			return buf_addf(out, "no node has accelerator type %s (label %s)",
					d->accel_type, c->accel_label);
	}
	if (fit->eligible > 0 && fit->ever == 0) {
		const char *absent = NULL;

		if (wants_accel(d) && find_res(c, d->accel_resource) < 0)
			absent = d->accel_resource;
		for (size_t k = 0; !absent && k < d->n_extra && k < CAP_EXTRA_MAX; k++)
			if (d->extra[k].name && d->extra[k].milli > 0 &&
			    find_res(c, d->extra[k].name) < 0)
				absent = d->extra[k].name;
		if (absent)
			return buf_addf(out, "no node offers %s", absent);
	}
	ret |= buf_addf(out, "needs %d %s with ", count, plural(count, "node", "nodes"));
	ret |= describe_pod(d, out);
	if (fit->eligible == 0)
		ret |= buf_adds(out, "; no node can run it");
	else if (fit->ever < count)
		ret |= buf_addf(out, "; the %d eligible %s could hold only %d even if empty",
				fit->eligible, plural(fit->eligible, "node", "nodes"), fit->ever);
	else if (fit->room == fit->nodes_with_room)
		ret |= buf_addf(out, "; %d %s room", fit->nodes_with_room,
				plural(fit->nodes_with_room, "node has", "nodes have"));
	else
		ret |= buf_addf(out, "; %d %s room for %d", fit->nodes_with_room,
				plural(fit->nodes_with_room, "node has", "nodes have"), fit->room);
	if (ret == 0)
		ret = describe_exclusions(d, fit, out);
	return ret ? CADRE_ENOMEM : 0;
}
