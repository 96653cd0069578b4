/*
 * dra_capacity.c - DRA devices counted into a decision's nodes
 * (dra_capacity.h).
 *
 * The slices' records are read in place, in one walk of their cache: each
 * device is matched there against the classes of the decision, and only
 * what counting needs is kept, in the decision's scratch area (a few bytes
 * a device, where a record is a hundred). Claims, read in place too, are
 * matched to those devices through their pools: a claim's result names its
 * pool, and a node's pool has the node's few devices. Pools and nodes are
 * found by hashing their names; a decision stays linear in the cluster's
 * devices.
 */
#include "controller/admission/dra_capacity.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dra.h"
#include "base/err.h"
#include "base/hash.h"
#include "controller/admission/gang_internal.h"
#include "controller/build/build.h"
#include "controller/manager/cache_record_dra.h"
#include "controller/manager/manager.h"
#include "kube/reflector.h"
#include "kube/store.h"

/* A record too large for the cache is made again up to this size (a slice is far smaller). */
#define RECORD_BIG_MAX (16u << 20)
/* What is kept of the slices goes in blocks of this size. */
#define ARENA_BLOCK (64u << 10)

void dra_view_init(struct scratch *s, struct dra_view *v, const struct candidate *jobs,
		   size_t n_jobs)
{
	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < n_jobs; i++) {
		const char *cls = jobs[i].job.spec.resources.device_class;
		bool seen = false;
		size_t size;
		char *res;

		if (!cls || !*cls || !jobs[i].job.spec.resources.has_accel)
			continue;
		for (size_t k = 0; k < v->n && !seen; k++)
			seen = !strcmp(v->classes[k], cls);
		if (seen)
			continue;
		if (!v->classes) {
			v->classes = gang_scratch_alloc(s, n_jobs, sizeof(*v->classes));
			v->resources = gang_scratch_alloc(s, n_jobs, sizeof(*v->resources));
			v->state = gang_scratch_alloc(s, n_jobs, sizeof(*v->state));
			if (!v->classes || !v->resources || !v->state) {
				v->classes = NULL;
				return;
			}
		}
		size = strlen(CAP_DEVICE_CLASS_PREFIX) + strlen(cls) + 1;
		if (!(res = gang_scratch_alloc(s, size, 1)))
			return;
		snprintf(res, size, "%s%s", CAP_DEVICE_CLASS_PREFIX, cls);
		v->resources[v->n] = res;
		v->classes[v->n++] = cls;
	}
}

/* --- a bump allocator over the scratch area --- */

struct arena {
	struct scratch *s;
	unsigned char *at;
	size_t room;
};

static void *arena_alloc(struct arena *a, size_t len)
{
	const size_t align = alignof(max_align_t);
	void *p;

	len = (len + align - 1) / align * align;
	if (len > a->room) {
		size_t size = len > ARENA_BLOCK ? len : ARENA_BLOCK;

		if (!(a->at = gang_scratch_alloc(a->s, 1, size)))
			return NULL;
		a->room = size;
	}
	p = a->at;
	a->at += len;
	a->room -= len;
	return p;
}

static const char *arena_strdup(struct arena *a, const char *text)
{
	size_t n = strlen(text) + 1;
	char *copy = arena_alloc(a, n);

	if (copy)
		memcpy(copy, text, n);
	return copy;
}

/* --- names, by hash --- */

struct slot {
	const char *a, *b;
	uint64_t h;
	int64_t value;
	long first;      /* a pool's: its first slice (struct slice.next chains the rest) */
	bool used;
};

struct names {
	struct slot *slot;
	size_t mask;
};

static uint64_t hash2(const char *a, const char *b)
{
	uint64_t h = hash_fnv1a(a);

	/* A byte no name holds between the parts: ("a", "bc") and ("ab", "c") differ. */
	h = (h ^ 0xff) * 1099511628211ULL;
	for (const char *p = b; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	/*
	 * A product's low bits depend only on its factors' low bits, and the
	 * table is indexed by them: names that differ in a digit ("gpu-node-17",
	 * "gpu-node-18") would crowd a few slots. MurmurHash3's finalizer
	 * spreads the high bits down.
	 */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* Room for n names at most half full. false when out of memory (s->err set). */
static bool names_init(struct scratch *s, struct names *t, size_t n)
{
	size_t size = 16;

	while (size < 2 * n)
		size *= 2;
	t->slot = gang_scratch_alloc(s, size, sizeof(*t->slot));
	t->mask = size - 1;
	return t->slot != NULL;
}

/* The slot of (a, b): the one that holds it, else the free one it would take. */
static struct slot *names_slot(const struct names *t, const char *a, const char *b)
{
	uint64_t h = hash2(a, b);

	for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
		struct slot *sl = &t->slot[i];

		if (!sl->used || (sl->h == h && !strcmp(sl->a, a) && !strcmp(sl->b, b)))
			return sl;
	}
}

/* Take (a, b) into its free slot (from names_slot). */
static void names_take(struct slot *sl, const char *a, const char *b, int64_t value)
{
	*sl = (struct slot){ a, b, hash2(a, b), value, -1, true };
}

/* --- records --- */

/*
 * Visit the record of every object of store, in place, under its lock; the
 * few too large for a record (kept as keys in big) are made here, each
 * into a buffer of its own, after the walk. 0 or the first error.
 */
static int visit_records(struct store *store, store_record_fn record, store_record_visit_fn fn,
			 void *ctx, json_t *big)
{
	const json_t *key;
	size_t i;
	int err;

	if (!store)
		return 0;
	if ((err = store_foreach_record(store, fn, ctx)))
		return err;
	json_array_foreach(big, i, key) {
		json_t *obj;

		if (store_get(store, json_string_value(key), &obj))
			continue;
		for (size_t size = 16 * STORE_RECORD_MAX; size <= RECORD_BIG_MAX; size *= 4) {
			void *buf = malloc(size);
			int len = buf ? record(obj, buf, size, NULL) : CADRE_ENOMEM;

			if (len > 0)
				err = fn(ctx, json_string_value(key), buf, (size_t)len);
			else if (len < 0)
				err = len;
			free(buf);
			if (len)
				break;
		}
		json_decref(obj);
		if (err)
			return err;
	}
	return 0;
}

/* A record kept whole: a DeviceClass's (a few per decision). */
struct copy {
	struct scratch *s;
	void *rec;
	size_t len;
	json_t *big;
};

static int copy_record(void *arg, const char *key, const void *rec, size_t len)
{
	struct copy *c = arg;

	if (!len)
		return json_array_append_new(c->big, json_string(key)) ? CADRE_ENOMEM : 0;
	if (!(c->rec = gang_scratch_alloc(c->s, 1, len)))
		return CADRE_ENOMEM;
	memcpy(c->rec, rec, len);
	c->len = len;
	return 0;
}

/* The DeviceClass name's record, copied: CADRE_ENOTFOUND when there is none. */
static int class_read(struct scratch *s, struct store *store, const char *name,
		      struct cache_class *out)
{
	struct copy c = { s, NULL, 0, json_array() };
	int err = c.big ? 0 : CADRE_ENOMEM;
	json_t *obj = NULL;

	if (!err && store)
		err = store_get_record(store, name, copy_record, &c);
	/* Too large for the cache's record (selectors of kilobytes): made here. */
	if (!err && !c.rec && json_array_size(c.big) && store_get(store, name, &obj) == 0) {
		for (size_t size = 16 * STORE_RECORD_MAX; !err && !c.rec && size <= RECORD_BIG_MAX;
		     size *= 4) {
			void *buf = malloc(size);
			int len = buf ? cache_record_class(obj, buf, size, NULL) : CADRE_ENOMEM;

			if (len > 0)
				err = copy_record(&c, name, buf, (size_t)len);
			else if (len < 0)
				err = len;
			free(buf);
		}
		json_decref(obj);
	}
	json_decref(c.big);
	if (!err && (!c.rec || cache_class_read(c.rec, c.len, out)))
		err = CADRE_ENOTFOUND;
	return err;
}

/* --- counting --- */

/* The most DeviceClasses one decision counts (a bit each): more would be a site of its own. */
#define CLASSES_MAX 64

/* A device of a slice, as far as counting goes. */
struct device {
	const char *name;      /* in scratch; NULL when of no class counted */
	const char *type;      /* its type attribute when the node may need it as its label */
	uint64_t classes;      /* bit x: of v's class x */
	long node;             /* index of its node */
	bool held;             /* a claim's allocation holds it */
};

struct slice {
	const char *driver, *pool;    /* in scratch */
	int64_t generation;
	struct device *devices;       /* in scratch; only when one is of a class */
	size_t n_devices;
	long next;                    /* the next slice of its pool, or -1 */
};

struct count {
	struct dra_view *v;
	const struct cache_class *classes;   /* per class of v; read where DRA_COUNTED */
	long **keys;                   /* per class: its terms' keys in the slice being read */
	long type_key;                 /* the type attribute's key there */
	struct arena arena;
	struct slice *slices;
	size_t n_slices, cap_slices;
	struct names pools;            /* (driver, pool): newest generation, first slice */
	struct names nodes;            /* (node, ""): its index */
	int64_t *total;                /* n_nodes * v->n */
	const char **type;             /* per node: the type its label would say, or NULL */
	const char *attribute;         /* --device-attribute */
	bool *labelled;                /* per node: it has the accelerator label */
	json_t *big;                   /* keys of objects too large for a record */
};

static bool dra_synced(struct manager *m)
{
	static const enum manager_kind kinds[] = { KIND_RESOURCESLICES, KIND_RESOURCECLAIMS,
						    KIND_DEVICECLASSES };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (m->reflectors[kinds[i]] && !reflector_synced(m->reflectors[kinds[i]]))
			return false;
	return true;
}

static const char *label_of(const struct cap_node *node, const char *key)
{
	for (size_t i = 0; i < node->n_labels; i++)
		if (node->labels[i].key && !strcmp(node->labels[i].key, key))
			return node->labels[i].value;
	return NULL;
}

/* The index of the node named name, or -1 (none, a node gone, or not listed yet). */
static long node_index(const struct count *c, const char *name)
{
	const struct slot *sl = name ? names_slot(&c->nodes, name, "") : NULL;

	return sl && sl->used ? (long)sl->value : -1;
}

/*
 * Device k of slice s into dv: its node, the classes it is of, its name
 * when it is of any. The type of the first device of a class on a node
 * without the label is kept for the label (typed: the node last given one).
 */
static int read_device(struct count *c, const struct cache_slice *s, long slice_node, size_t k,
		       struct device *dv, long *typed)
{
	const struct dra_view *v = c->v;
	struct cache_device d;

	cache_slice_device(s, k, &d);
	*dv = (struct device){ .node = d.node == s->node ? slice_node : node_index(c, d.node) };
	if (dv->node < 0 || d.tainted)
		return 0;
	for (size_t x = 0; x < v->n && x < CLASSES_MAX; x++)
		if (v->state[x] == DRA_COUNTED &&
		    cache_class_selects(&c->classes[x], s, c->keys[x], &d))
			dv->classes |= (uint64_t)1 << x;
	if (!dv->classes)
		return 0;
	if (!(dv->name = arena_strdup(&c->arena, d.name)))
		return CADRE_ENOMEM;
	if (!c->labelled[dv->node] && dv->node != *typed) {
		const char *type = cache_device_value(s, &d, c->type_key);

		if (type && !(dv->type = arena_strdup(&c->arena, type)))
			return CADRE_ENOMEM;
		if (type)
			*typed = dv->node;
	}
	return 0;
}

/* One slice, read in place (store_record_visit_fn): what counting needs of it kept. */
static int take_slice(void *arg, const char *key, const void *rec, size_t len)
{
	struct count *c = arg;
	struct cache_slice s;
	struct slice *out;
	struct device *devs;
	long slice_node, typed = -1;
	bool any = false;
	int err;

	if (!len)
		return json_array_append_new(c->big, json_string(key)) ? CADRE_ENOMEM : 0;
	if (cache_slice_read(rec, len, &s))
		return 0;
	if (c->n_slices == c->cap_slices) {
		size_t cap = c->cap_slices ? c->cap_slices * 2 : 256;
		struct slice *more = realloc(c->slices, cap * sizeof(*more));

		if (!more)
			return CADRE_ENOMEM;
		c->slices = more;
		c->cap_slices = cap;
	}
	out = &c->slices[c->n_slices];
	*out = (struct slice){ .generation = s.generation, .next = -1 };
	out->driver = arena_strdup(&c->arena, s.driver);
	out->pool = arena_strdup(&c->arena, s.pool);
	devs = s.n_devices ? arena_alloc(&c->arena, s.n_devices * sizeof(*devs)) : NULL;
	if (!out->driver || !out->pool || (s.n_devices && !devs))
		return CADRE_ENOMEM;
	slice_node = node_index(c, s.node);
	/* The names the devices are matched by, found once for all of them. */
	for (size_t x = 0; x < c->v->n && x < CLASSES_MAX; x++)
		if (c->v->state[x] == DRA_COUNTED)
			cache_class_keys(&c->classes[x], &s, c->keys[x]);
	c->type_key = cache_slice_key(&s, c->attribute);
	for (size_t k = 0; k < s.n_devices; k++) {
		if ((err = read_device(c, &s, slice_node, k, &devs[k], &typed)))
			return err;
		any |= devs[k].classes != 0;
	}
	/* A slice of no device counted still says its pool's generation. */
	if (any) {
		out->devices = devs;
		out->n_devices = s.n_devices;
	}
	c->n_slices++;
	return 0;
}

/*
 * Each pool's newest generation, and its slices chained: a pool being
 * republished counts its newest slices only, as kube-scheduler does.
 */
static int index_pools(struct scratch *s, struct count *c)
{
	if (!names_init(s, &c->pools, c->n_slices))
		return CADRE_ENOMEM;
	for (size_t i = 0; i < c->n_slices; i++) {
		struct slice *sl = &c->slices[i];
		struct slot *p = names_slot(&c->pools, sl->driver, sl->pool);

		if (!p->used)
			names_take(p, sl->driver, sl->pool, sl->generation);
		else if (sl->generation > p->value)
			p->value = sl->generation;
		sl->next = p->first;
		p->first = (long)i;
	}
	return 0;
}

static int index_nodes(struct scratch *s, const struct cap_node *nodes, size_t n,
		       struct count *c)
{
	if (!names_init(s, &c->nodes, n))
		return CADRE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct slot *sl = names_slot(&c->nodes, nodes[i].name, "");

		if (!sl->used)
			names_take(sl, nodes[i].name, "", (int64_t)i);
	}
	return 0;
}

/* The device a claim's result names, in its pool's newest slices, marked held. */
static void mark_held(struct count *c, const char *driver, const char *pool, const char *device)
{
	const struct slot *p = names_slot(&c->pools, driver, pool);

	for (long j = p->used ? p->first : -1; j >= 0; j = c->slices[j].next) {
		struct slice *sl = &c->slices[j];

		if (sl->generation != p->value)
			continue;
		for (size_t k = 0; k < sl->n_devices; k++)
			if (sl->devices[k].name && !strcmp(sl->devices[k].name, device)) {
				sl->devices[k].held = true;
				return;
			}
	}
}

/* One claim, read in place (store_record_visit_fn): the devices it holds marked. */
static int take_claim(void *arg, const char *key, const void *rec, size_t len)
{
	struct count *c = arg;
	struct cache_claim cl;

	if (!len)
		return json_array_append_new(c->big, json_string(key)) ? CADRE_ENOMEM : 0;
	if (cache_claim_read(rec, len, &cl))
		return 0;
	for (size_t k = 0; k < cl.n_results; k++) {
		const char *driver, *pool, *device;

		cache_claim_result(&cl, k, &driver, &pool, &device);
		if (driver && pool && device)
			mark_held(c, driver, pool, device);
	}
	return 0;
}

/* The devices of the pools' newest slices, per node and class. */
static void count_slices(struct count *c)
{
	struct dra_view *v = c->v;

	for (size_t j = 0; j < c->n_slices; j++) {
		const struct slice *sl = &c->slices[j];

		if (!sl->n_devices ||
		    names_slot(&c->pools, sl->driver, sl->pool)->value != sl->generation)
			continue;
		for (size_t k = 0; k < sl->n_devices; k++) {
			const struct device *d = &sl->devices[k];
			size_t row = (size_t)d->node * v->n;

			for (size_t x = 0; d->classes && x < v->n && x < CLASSES_MAX; x++) {
				if (!(d->classes >> x & 1))
					continue;
				c->total[row + x]++;
				v->held[row + x] += d->held;
			}
			if (d->type && !c->type[d->node])
				c->type[d->node] = d->type;
		}
	}
}

/* Node i's counts as extended resources beside its own, and the label it lacked. */
static int extend_node(struct scratch *s, const struct count *c, struct cap_node *node,
		       size_t i, const char *accel_label)
{
	const struct dra_view *v = c->v;
	size_t more = 0;

	for (size_t k = 0; k < v->n; k++)
		more += c->total[i * v->n + k] > 0;
	if (more) {
		struct cap_resource *ext = gang_scratch_alloc(s, node->n_extended + more,
							      sizeof(*ext));

		if (!ext)
			return CADRE_ENOMEM;
		if (node->n_extended)
			memcpy(ext, node->extended, node->n_extended * sizeof(*ext));
		for (size_t k = 0; k < v->n; k++)
			if (c->total[i * v->n + k] > 0)
				ext[node->n_extended++] = (struct cap_resource){
					v->resources[k], c->total[i * v->n + k] * 1000 };
		node->extended = ext;
	}
	if (c->type[i]) {
		struct cap_label *labels = gang_scratch_alloc(s, node->n_labels + 1,
							      sizeof(*labels));

		if (!labels)
			return CADRE_ENOMEM;
		if (node->n_labels)
			memcpy(labels, node->labels, node->n_labels * sizeof(*labels));
		labels[node->n_labels++] = (struct cap_label){ accel_label, c->type[i] };
		node->labels = labels;
	}
	return 0;
}

/*
 * Which of v's classes can be counted, and the equalities of those that
 * can: how many can, or CADRE_ENOMEM.
 */
static int read_classes(struct manager *m, struct scratch *s, struct dra_view *v,
			struct cache_class *classes)
{
	bool served = !m->dra_absent, synced = dra_synced(m);
	int counted = 0;

	for (size_t k = 0; k < v->n; k++) {
		int err = served && synced && k < CLASSES_MAX ?
			  class_read(s, m->stores[KIND_DEVICECLASSES], v->classes[k], &classes[k]) :
			  0;

		if (err && err != CADRE_ENOTFOUND)
			return err;
		v->state[k] = !served ? DRA_NOT_SERVED : !synced ? DRA_NOT_SYNCED :
			      k >= CLASSES_MAX ? DRA_TOO_MANY : err ? DRA_NO_CLASS : DRA_COUNTED;
		counted += v->state[k] == DRA_COUNTED;
	}
	return counted;
}

int dra_capacity_add(struct manager *m, struct scratch *s, struct dra_view *v,
		     struct cap_node *nodes, size_t n_nodes)
{
	const char *accel_label = m->opts->accelerator_label && *m->opts->accelerator_label ?
				  m->opts->accelerator_label : BUILD_DEFAULT_ACCELERATOR_LABEL;
	struct count c = { .v = v, .arena = { .s = s } };
	struct cache_class *classes;
	int err;

	v->held = NULL;
	v->n_nodes = n_nodes;
	if (!v->n)
		return 0;
	classes = gang_scratch_alloc(s, v->n, sizeof(*classes));
	v->held = gang_scratch_alloc(s, n_nodes * v->n + 1, sizeof(*v->held));
	c.total = gang_scratch_alloc(s, n_nodes * v->n + 1, sizeof(*c.total));
	c.type = gang_scratch_alloc(s, n_nodes + 1, sizeof(*c.type));
	c.labelled = gang_scratch_alloc(s, n_nodes + 1, sizeof(*c.labelled));
	c.attribute = m->opts->device_attribute && *m->opts->device_attribute ?
		      m->opts->device_attribute : DRA_DEFAULT_ATTRIBUTE;
	if (!classes || !v->held || !c.total || !c.type || !c.labelled)
		return CADRE_ENOMEM;
	if ((err = read_classes(m, s, v, classes)) <= 0)
		return err;
	c.classes = classes;
	if (!(c.keys = gang_scratch_alloc(s, v->n, sizeof(*c.keys))))
		return CADRE_ENOMEM;
	for (size_t x = 0; x < v->n; x++)
		if (v->state[x] == DRA_COUNTED &&
		    !(c.keys[x] = gang_scratch_alloc(s, classes[x].n_terms + 1, sizeof(long))))
			return CADRE_ENOMEM;
	if (!(c.big = json_array()))
		return CADRE_ENOMEM;
	err = index_nodes(s, nodes, n_nodes, &c);
	for (size_t i = 0; !err && i < n_nodes; i++)
		c.labelled[i] = label_of(&nodes[i], accel_label) != NULL;
	if (!err)
		err = visit_records(m->stores[KIND_RESOURCESLICES], cache_record_slice, take_slice,
				    &c, c.big);
	if (!err)
		err = index_pools(s, &c);
	json_array_clear(c.big);
	if (!err)
		err = visit_records(m->stores[KIND_RESOURCECLAIMS], cache_record_claim, take_claim,
				    &c, c.big);
	if (!err) {
		count_slices(&c);
		for (size_t i = 0; i < n_nodes && !err; i++)
			err = extend_node(s, &c, &nodes[i], i, accel_label);
	}
	free(c.slices);
	json_decref(c.big);
	return err ? err : s->err;
}

void dra_capacity_charge(const struct dra_view *v, struct capacity *cap)
{
	if (!v->held || cap->n_nodes != v->n_nodes)
		return;
	for (size_t i = 0; i < cap->n_nodes; i++)
		for (size_t k = 0; k < v->n; k++) {
			struct cap_resource held = { v->resources[k],
						     v->held[i * v->n + k] * 1000 };

			if (held.milli > 0)
				capacity_use_extended_at(cap, i, &held, 1);
		}
}

const char *dra_blocked(struct scratch *s, const struct dra_view *v, const char *class_name)
{
	char text[512];

	for (size_t k = 0; class_name && k < v->n; k++) {
		if (strcmp(v->classes[k], class_name))
			continue;
		switch (v->state[k]) {
		case DRA_COUNTED:
			return NULL;
		case DRA_NO_CLASS:
			snprintf(text, sizeof(text), "its accelerators come from DeviceClass %s, "
				 "which does not exist", class_name);
			break;
		case DRA_NOT_SERVED:
			snprintf(text, sizeof(text), "its accelerators come from DeviceClass %s, and "
				 "the API server does not serve resource.k8s.io/v1", class_name);
			break;
		case DRA_NOT_SYNCED:
			snprintf(text, sizeof(text), "reading the cluster's ResourceSlices, "
				 "ResourceClaims and DeviceClasses (resource.k8s.io/v1) for "
				 "DeviceClass %s", class_name);
			break;
		case DRA_TOO_MANY:
			snprintf(text, sizeof(text), "the jobs waiting name more than %d "
				 "DeviceClasses, and DeviceClass %s is past them", CLASSES_MAX,
				 class_name);
			break;
		}
		return gang_scratch_strdup(s, text);
	}
	return NULL;
}
