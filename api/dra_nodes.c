/*
 * dra_nodes.c - the devices of each node and who holds them (dra_nodes.h):
 * the pools' newest generations, the devices of those, sorted once by
 * identity to mark the claims' results, then by node to answer per node.
 */
#include "api/dra_nodes.h"

#include "api/dra.h"
#include "base/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* A pool and the highest generation of it seen. */
struct pool {
	const char *driver, *name;
	json_int_t generation;
};

static int pool_cmp(const void *x, const void *y)
{
	const struct pool *a = x, *b = y;
	int c = strcmp(a->driver, b->driver);

	return c ? c : strcmp(a->name, b->name);
}

/* The pools of slices, each once with its highest generation, sorted; *n of them. */
static struct pool *newest_pools(const json_t *slices, size_t *n)
{
	struct pool *pools = calloc(json_array_size(slices) + 1, sizeof(*pools));
	const json_t *slice;
	size_t i, kept = 0;

	*n = 0;
	if (!pools)
		return NULL;
	json_array_foreach(slices, i, slice) {
		const json_t *spec = json_object_get(slice, "spec");
		const json_t *pool = json_object_get(spec, "pool");

		if (!str(spec, "driver") || !str(pool, "name"))
			continue;
		pools[*n].driver = str(spec, "driver");
		pools[*n].name = str(pool, "name");
		pools[*n].generation = json_integer_value(json_object_get(pool, "generation"));
		(*n)++;
	}
	qsort(pools, *n, sizeof(*pools), pool_cmp);
	for (i = 0; i < *n; i++) {
		if (kept && !pool_cmp(&pools[kept - 1], &pools[i])) {
			if (pools[i].generation > pools[kept - 1].generation)
				pools[kept - 1].generation = pools[i].generation;
			continue;
		}
		pools[kept++] = pools[i];
	}
	*n = kept;
	return pools;
}

static int identity_cmp(const void *x, const void *y)
{
	const struct dra_device *a = x, *b = y;
	int c = strcmp(a->driver, b->driver);

	if (!c)
		c = strcmp(a->pool, b->pool);
	return c ? c : strcmp(a->name, b->name);
}

static int node_cmp(const void *x, const void *y)
{
	int c = strcmp(((const struct dra_device *)x)->node, ((const struct dra_device *)y)->node);

	return c ? c : identity_cmp(x, y);
}

/* The devices of the newest generation of each pool that sit on one node, into d. */
static int read_devices(const json_t *slices, struct dra_nodes *d)
{
	size_t n_pools, i, j, room = 0;
	struct pool *pools = newest_pools(slices, &n_pools);
	const json_t *slice, *dev;

	if (!pools)
		return CADRE_ENOMEM;
	json_array_foreach(slices, i, slice)
		room += json_array_size(json_object_get(json_object_get(slice, "spec"), "devices"));
	if (!(d->devices = calloc(room + 1, sizeof(*d->devices)))) {
		free(pools);
		return CADRE_ENOMEM;
	}
	json_array_foreach(slices, i, slice) {
		const json_t *spec = json_object_get(slice, "spec");
		const json_t *pool = json_object_get(spec, "pool");
		struct pool key = { str(spec, "driver"), str(pool, "name"), 0 };
		const struct pool *newest;
		bool per_device = json_is_true(json_object_get(spec, "perDeviceNodeSelection"));

		if (!key.driver || !key.name ||
		    !(newest = bsearch(&key, pools, n_pools, sizeof(*pools), pool_cmp)) ||
		    json_integer_value(json_object_get(pool, "generation")) != newest->generation)
			continue;
		json_array_foreach(json_object_get(spec, "devices"), j, dev) {
			const char *node = per_device ? str(dev, "nodeName") : str(spec, "nodeName");

			if (!node || !str(dev, "name"))
				continue;
			d->devices[d->n_devices++] = (struct dra_device){
				.node = node, .driver = key.driver, .pool = key.name,
				.name = str(dev, "name"), .device = dev,
			};
		}
	}
	free(pools);
	return 0;
}

/* Each device a claim's allocation names is held by that claim (the first listed). */
static void mark_held(const json_t *claims, struct dra_nodes *d)
{
	const json_t *claim, *result;
	size_t i, j;

	qsort(d->devices, d->n_devices, sizeof(*d->devices), identity_cmp);
	json_array_foreach(claims, i, claim) {
		const json_t *results = json_object_get(json_object_get(json_object_get(
			json_object_get(claim, "status"), "allocation"), "devices"), "results");

		json_array_foreach(results, j, result) {
			struct dra_device key = { .driver = or_empty(str(result, "driver")),
						  .pool = or_empty(str(result, "pool")),
						  .name = or_empty(str(result, "device")) };
			struct dra_device *held;

			/* Admin access reaches a device in use by others and takes it from no one. */
			if (json_is_true(json_object_get(result, "adminAccess")))
				continue;
			held = bsearch(&key, d->devices, d->n_devices, sizeof(*d->devices),
				       identity_cmp);
			if (held && !held->claim)
				held->claim = claim;
		}
	}
}

int dra_nodes_build(const json_t *classes, const json_t *slices, const json_t *claims,
		    struct dra_nodes *out)
{
	const json_t *obj;
	size_t i;
	int e;

	memset(out, 0, sizeof(*out));
	if (!(out->classes = calloc(json_array_size(classes) + 1, sizeof(*out->classes))))
		return CADRE_ENOMEM;
	json_array_foreach(classes, i, obj) {
		struct dra_class *c = &out->classes[out->n_classes];

		e = dra_class_parse(obj, c);
		if (e == CADRE_ENOMEM) {
			dra_class_release(c);
			return e;
		}
		if (e)
			dra_class_release(c);
		else
			out->n_classes++;
	}
	if ((e = read_devices(slices, out)))
		return e;
	mark_held(claims, out);
	qsort(out->devices, out->n_devices, sizeof(*out->devices), node_cmp);
	return 0;
}

void dra_nodes_release(struct dra_nodes *d)
{
	for (size_t i = 0; i < d->n_classes; i++)
		dra_class_release(&d->classes[i]);
	free(d->classes);
	free(d->devices);
	memset(d, 0, sizeof(*d));
}

size_t dra_nodes_of(const struct dra_nodes *d, const char *node, const struct dra_device **first)
{
	size_t lo = 0, hi = d->n_devices, n = 0;

	/* The first device whose node is not before node. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(d->devices[mid].node, node) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + n < d->n_devices && !strcmp(d->devices[lo + n].node, node))
		n++;
	*first = n ? &d->devices[lo] : NULL;
	return n;
}

const struct dra_class *dra_nodes_class_of(const struct dra_nodes *d, const struct dra_device *dev,
					   const char *class_name)
{
	for (size_t i = 0; i < d->n_classes; i++) {
		const struct dra_class *c = &d->classes[i];

		if (class_name ? !strcmp(c->name, class_name) : dra_class_is_gpu(c))
			if (dra_class_selects(c, dev->driver, dev->device))
				return c;
	}
	return NULL;
}

void dra_nodes_gpus(const struct dra_nodes *d, const char *node, const char *class_name,
		    struct dra_node_gpus *out)
{
	const struct dra_device *first;
	size_t n = dra_nodes_of(d, node, &first);

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		const struct dra_device *dev = &first[i];
		const struct dra_class *c = dra_nodes_class_of(d, dev, class_name);

		if (!c)
			continue;
		out->devices++;
		out->held += dev->claim != NULL;
		if (!out->class_name)
			out->class_name = c->name;
		if (!out->product)
			out->product = dra_device_attribute(json_object_get(dev->device, "attributes"),
							    dev->driver, DRA_DEFAULT_ATTRIBUTE);
	}
}
