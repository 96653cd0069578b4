/*
 * dra_capacity.c - DRA devices counted into a decision's nodes
 * (dra_capacity.h). The caches' records are copied into the decision's
 * scratch area, so that the strings the nodes are given outlive the walks;
 * devices, pools and nodes are matched by hashing their names, which keeps
 * a decision linear in the devices of the cluster.
 */
#include "controller/admission/dra_capacity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dra.h"
#include "base/err.h"
#include "base/hash.h"
#include "controller/build/build.h"
#include "controller/admission/gang_internal.h"
#include "controller/manager/cache_record_dra.h"
#include "controller/manager/manager.h"
#include "kube/reflector.h"
#include "kube/store.h"

/* A record too large for the cache is made again up to this size (a slice is far smaller). */
#define RECORD_BIG_MAX (16u << 20)

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

/* --- a set of names, by hash --- */

struct slot {
	const char *a, *b, *c;
	uint64_t h;
	int64_t value;
	bool used;
};

struct names {
	struct slot *slot;
	size_t mask;
};

static uint64_t hash3(const char *a, const char *b, const char *c)
{
	uint64_t h = hash_fnv1a(a);

	/* A byte no name holds between the parts: ("a", "bc") and ("ab", "c") differ. */
	h = (h ^ 0xff) * 1099511628211ULL;
	for (const char *p = b; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ 0xff) * 1099511628211ULL;
	for (const char *p = c; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
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

/* The slot of (a, b, c): the one that holds it, else the free one it would take. */
static struct slot *names_slot(const struct names *t, const char *a, const char *b,
			       const char *c)
{
	uint64_t h = hash3(a, b, c);

	for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
		struct slot *sl = &t->slot[i];

		if (!sl->used || (sl->h == h && !strcmp(sl->a, a) && !strcmp(sl->b, b) &&
				  !strcmp(sl->c, c))) {
			sl->h = h;
			return sl;
		}
	}
}

/* Take (a, b, c) into its slot (free, from names_slot). */
static void names_take(struct slot *sl, const char *a, const char *b, const char *c,
		       int64_t value)
{
	*sl = (struct slot){ a, b, c, sl->h, value, true };
}

/* --- the records, copied --- */

struct records {
	struct scratch *s;
	store_record_fn record;
	const void **rec;
	size_t *len;
	size_t n, cap;
	json_t *undecoded;       /* keys of objects without a record */
	int err;
};

static int records_add(struct records *r, const void *rec, size_t len)
{
	void *copy;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		const void **more = realloc(r->rec, cap * sizeof(*more));
		size_t *lens = more ? realloc(r->len, cap * sizeof(*lens)) : NULL;

		if (more)
			r->rec = more;
		if (!lens)
			return r->err = CADRE_ENOMEM;
		r->len = lens;
		r->cap = cap;
	}
	copy = gang_scratch_alloc(r->s, 1, len);
	if (!copy)
		return r->err = CADRE_ENOMEM;
	memcpy(copy, rec, len);
	r->rec[r->n] = copy;
	r->len[r->n++] = len;
	return 0;
}

static int walk_record(void *arg, const char *key, const void *rec, size_t len)
{
	struct records *r = arg;

	if (!len)
		return json_array_append_new(r->undecoded, json_string(key)) ?
		       (r->err = CADRE_ENOMEM) : 0;
	return records_add(r, rec, len);
}

/* The record of an object too large for its cache's, made here. */
static int record_big(struct records *r, const json_t *obj)
{
	for (size_t size = 16 * STORE_RECORD_MAX; size <= RECORD_BIG_MAX; size *= 4) {
		void *buf = malloc(size);
		int len;

		if (!buf)
			return r->err = CADRE_ENOMEM;
		len = r->record(obj, buf, size, NULL);
		if (len > 0)
			records_add(r, buf, (size_t)len);
		free(buf);
		if (len != 0)
			return len < 0 ? 0 : r->err;
	}
	return 0;
}

/* Every record of store (those too large decoded and made), copied. */
static int records_read(struct scratch *s, struct store *store, store_record_fn record,
			struct records *r)
{
	const json_t *key;
	size_t i;

	*r = (struct records){ .s = s, .record = record, .undecoded = json_array() };
	if (!r->undecoded)
		return r->err = CADRE_ENOMEM;
	if (!store)
		return 0;
	store_foreach_record(store, walk_record, r);
	json_array_foreach(r->undecoded, i, key) {
		json_t *obj;

		if (r->err || store_get(store, json_string_value(key), &obj))
			continue;
		record_big(r, obj);
		json_decref(obj);
	}
	return r->err;
}

static void records_release(struct records *r)
{
	free(r->rec);
	free(r->len);
	json_decref(r->undecoded);
}

/* The record of the DeviceClass name, copied: CADRE_ENOTFOUND when there is none. */
static int class_read(struct scratch *s, struct store *store, const char *name,
		      struct cache_class *out)
{
	struct records r = { .s = s, .record = cache_record_class, .undecoded = json_array() };
	int err = r.undecoded ? 0 : CADRE_ENOMEM;

	if (!err && store && store_get_record(store, name, walk_record, &r) == 0 && !r.err &&
	    json_array_size(r.undecoded)) {
		json_t *obj;

		if (store_get(store, name, &obj) == 0) {
			record_big(&r, obj);
			json_decref(obj);
		}
	}
	err = err ? err : r.err;
	if (!err && (!r.n || cache_class_read(r.rec[0], r.len[0], out)))
		err = CADRE_ENOTFOUND;
	records_release(&r);
	return err;
}

/* --- counting --- */

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

/* What one decision counts, per node and class. */
struct count {
	struct dra_view *v;
	struct cache_class *classes;   /* per class of v; used where DRA_COUNTED */
	struct names allocated;        /* (driver, pool, device) a claim holds */
	struct names pools;            /* (driver, pool): its highest generation */
	struct names nodes;            /* node name: its index */
	int64_t *total;                /* n_nodes * v->n */
	const char **type;             /* per node: the type its label would say, or NULL */
	const char *attribute;         /* --device-attribute */
	bool *labelled;                /* per node: it has the accelerator label */
};

/* Every result of every claim into c->allocated. */
static int index_claims(struct scratch *s, const struct records *claims, struct count *c)
{
	size_t n = 0;

	for (size_t i = 0; i < claims->n; i++) {
		struct cache_claim cl;

		if (!cache_claim_read(claims->rec[i], claims->len[i], &cl))
			n += cl.n_results;
	}
	if (!names_init(s, &c->allocated, n))
		return CADRE_ENOMEM;
	for (size_t i = 0; i < claims->n; i++) {
		struct cache_claim cl;

		if (cache_claim_read(claims->rec[i], claims->len[i], &cl))
			continue;
		for (size_t k = 0; k < cl.n_results; k++) {
			const char *driver, *pool, *device;
			struct slot *sl;

			cache_claim_result(&cl, k, &driver, &pool, &device);
			if (!driver || !pool || !device)
				continue;
			sl = names_slot(&c->allocated, driver, pool, device);
			if (!sl->used)
				names_take(sl, driver, pool, device, 1);
		}
	}
	return 0;
}

/* Each pool's highest generation into c->pools: a pool being republished counts its newest. */
static int index_pools(struct scratch *s, const struct cache_slice *slices, size_t n,
		       struct count *c)
{
	if (!names_init(s, &c->pools, n))
		return CADRE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct slot *sl = names_slot(&c->pools, slices[i].driver, slices[i].pool, "");

		if (!sl->used)
			names_take(sl, slices[i].driver, slices[i].pool, "", slices[i].generation);
		else if (slices[i].generation > sl->value)
			sl->value = slices[i].generation;
	}
	return 0;
}

static int index_nodes(struct scratch *s, const struct cap_node *nodes, size_t n,
		       struct count *c)
{
	if (!names_init(s, &c->nodes, n))
		return CADRE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct slot *sl = names_slot(&c->nodes, nodes[i].name, "", "");

		if (!sl->used)
			names_take(sl, nodes[i].name, "", "", (int64_t)i);
	}
	return 0;
}

/* One device of a slice of its pool's newest generation, counted for its node. */
static void count_device(struct count *c, const struct cache_slice *sl,
			 const struct cache_device *d)
{
	const struct dra_view *v = c->v;
	struct slot *node;
	bool any = false;
	size_t i;

	if (!d->node || d->tainted)
		return;
	node = names_slot(&c->nodes, d->node, "", "");
	if (!node->used)
		return;  /* a node gone, or not listed yet */
	i = (size_t)node->value;
	for (size_t k = 0; k < v->n; k++) {
		if (v->state[k] != DRA_COUNTED || !cache_class_selects(&c->classes[k], sl, d))
			continue;
		any = true;
		c->total[i * v->n + k]++;
		if (names_slot(&c->allocated, sl->driver, sl->pool, d->name)->used)
			v->held[i * v->n + k]++;
	}
	if (any && !c->labelled[i] && !c->type[i])
		c->type[i] = cache_device_attribute(sl, d, c->attribute);
}

static void count_slices(struct count *c, const struct cache_slice *slices, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct cache_slice *sl = &slices[i];

		if (names_slot(&c->pools, sl->driver, sl->pool, "")->value != sl->generation)
			continue;
		for (size_t k = 0; k < sl->n_devices; k++) {
			struct cache_device d;

			cache_slice_device(sl, k, &d);
			count_device(c, sl, &d);
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
		int err = served && synced ?
			  class_read(s, m->stores[KIND_DEVICECLASSES], v->classes[k], &classes[k]) :
			  0;

		if (err && err != CADRE_ENOTFOUND)
			return err;
		v->state[k] = !served ? DRA_NOT_SERVED : !synced ? DRA_NOT_SYNCED :
			      err ? DRA_NO_CLASS : DRA_COUNTED;
		counted += v->state[k] == DRA_COUNTED;
	}
	return counted;
}

int dra_capacity_add(struct manager *m, struct scratch *s, struct dra_view *v,
		     struct cap_node *nodes, size_t n_nodes)
{
	const char *accel_label = m->opts->accelerator_label && *m->opts->accelerator_label ?
				  m->opts->accelerator_label : BUILD_DEFAULT_ACCELERATOR_LABEL;
	struct count c = { .v = v };
	struct records slices = { 0 }, claims = { 0 };
	struct cache_slice *list = NULL;
	size_t n_list = 0;
	int err;

	v->held = NULL;
	v->n_nodes = n_nodes;
	if (!v->n)
		return 0;
	c.classes = gang_scratch_alloc(s, v->n, sizeof(*c.classes));
	v->held = gang_scratch_alloc(s, n_nodes * v->n + 1, sizeof(*v->held));
	c.total = gang_scratch_alloc(s, n_nodes * v->n + 1, sizeof(*c.total));
	c.type = gang_scratch_alloc(s, n_nodes + 1, sizeof(*c.type));
	c.labelled = gang_scratch_alloc(s, n_nodes + 1, sizeof(*c.labelled));
	c.attribute = m->opts->device_attribute && *m->opts->device_attribute ?
		      m->opts->device_attribute : DRA_DEFAULT_ATTRIBUTE;
	if (!c.classes || !v->held || !c.total || !c.type || !c.labelled)
		return CADRE_ENOMEM;
	if ((err = read_classes(m, s, v, c.classes)) <= 0)
		return err;
	err = records_read(s, m->stores[KIND_RESOURCECLAIMS], cache_record_claim, &claims);
	if (!err)
		err = records_read(s, m->stores[KIND_RESOURCESLICES], cache_record_slice, &slices);
	if (!err && !(list = calloc(slices.n + 1, sizeof(*list))))
		err = CADRE_ENOMEM;
	for (size_t i = 0; !err && i < slices.n; i++)
		n_list += cache_slice_read(slices.rec[i], slices.len[i], &list[n_list]) == 0;
	if (!err)
		err = index_claims(s, &claims, &c);
	if (!err)
		err = index_pools(s, list, n_list, &c);
	if (!err)
		err = index_nodes(s, nodes, n_nodes, &c);
	if (!err) {
		for (size_t i = 0; i < n_nodes; i++)
			c.labelled[i] = label_of(&nodes[i], accel_label) != NULL;
		count_slices(&c, list, n_list);
		for (size_t i = 0; i < n_nodes && !err; i++)
			err = extend_node(s, &c, &nodes[i], i, accel_label);
	}
	free(list);
	records_release(&claims);
	records_release(&slices);
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
		}
		return gang_scratch_strdup(s, text);
	}
	return NULL;
}
