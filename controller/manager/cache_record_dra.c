/*
 * cache_record_dra.c - trims and records of ResourceSlices, ResourceClaims
 * and DeviceClasses (cache_record_dra.h).
 *
 * A record is bytes: a header, fixed-size tables of uint32 string offsets,
 * then the strings, each once (struct strtab), the area ending with a NUL
 * so that any offset inside it reads as a terminated string. Readers check
 * every offset against the area, so a record that is not one reads as
 * empty strings and never past its end.
 */
#include "controller/manager/cache_record_dra.h"

#include <string.h>

#include "base/err.h"
#include "base/hash.h"
#include "api/dra_select.h"

#define SLICE_MAGIC 0x53
#define CLAIM_MAGIC 0x43
#define CLASS_MAGIC 0x44
#define NO_STRING UINT32_MAX

#define DEVICE_TAINTED 0x01

/*
 * A slice: its devices' string attributes as a table, a column per name
 * any of them has (a driver gives its devices the same few), a row per
 * device, NO_STRING where a device lacks one. A name is looked up once
 * per slice (cache_slice_key), then each device's value is one read.
 */
struct slice_hdr {
	int64_t generation;
	uint32_t n_devices, n_keys, strings_len;
	uint32_t driver, pool, node;
	uint8_t magic;
};

struct device_ent {
	uint32_t name, node, flags;
};

/* The most attribute names a slice's record keeps; the API allows 32 a device. */
#define SLICE_KEYS_MAX 256

struct pair_ent {
	uint32_t key, value;
};

struct claim_hdr {
	uint32_t n_results, strings_len;
	uint8_t magic;
};

struct result_ent {
	uint32_t driver, pool, device;
};

struct class_hdr {
	uint32_t n_terms, strings_len;
	uint8_t magic;
};

/* --- writing --- */

/*
 * The strings of a record being written, each kept once: a slice's devices
 * repeat their driver's attribute names and most values. Strings past the
 * slots are still kept, only not shared.
 */
#define STRTAB_SLOTS 512

struct strtab {
	char *area;
	size_t len, room;
	uint32_t slot[STRTAB_SLOTS];   /* a kept string's offset + 1; 0: free */
	bool overflow;
};

static void strtab_init(struct strtab *t, unsigned char *rec, size_t used, size_t size)
{
	memset(t->slot, 0, sizeof(t->slot));
	t->area = (char *)rec + used;
	t->len = 0;
	t->room = used <= size ? size - used : 0;
	t->overflow = used > size;
}

static uint32_t strtab_add(struct strtab *t, const char *s)
{
	size_t n, free_slot = STRTAB_SLOTS;
	uint64_t h;
	uint32_t off;

	if (!s)
		return NO_STRING;
	h = hash_fnv1a(s);
	/* Mixed down: FNV's low bits, the slot, see only the low bits of each byte. */
	h ^= h >> 29;
	for (size_t k = 0; k < STRTAB_SLOTS; k++) {
		size_t i = (size_t)(h + k) & (STRTAB_SLOTS - 1);

		if (!t->slot[i]) {
			free_slot = i;
			break;
		}
		if (!strcmp(t->area + t->slot[i] - 1, s))
			return t->slot[i] - 1;
	}
	n = strlen(s) + 1;
	if (t->overflow || n > t->room - t->len || t->len + n >= NO_STRING) {
		t->overflow = true;
		return NO_STRING;
	}
	off = (uint32_t)t->len;
	memcpy(t->area + t->len, s, n);
	t->len += n;
	if (free_slot < STRTAB_SLOTS)
		t->slot[free_slot] = off + 1;
	return off;
}

static const char *str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/*
 * A device's attribute of string value: {"string": "..."} as the API
 * server has it, or the string itself as cache_trim_slice keeps it (a
 * slice's attributes are most of its bytes, and a cache holds one a node).
 */
static const char *string_attr(const json_t *value)
{
	return json_is_string(value) ? json_string_value(value) :
	       json_string_value(json_object_get(value, "string"));
}

static bool taint_keeps_off(const json_t *taints)
{
	const json_t *t;
	size_t i;

	json_array_foreach(taints, i, t) {
		const char *effect = str(t, "effect");

		if (effect && (!strcmp(effect, "NoSchedule") || !strcmp(effect, "NoExecute")))
			return true;
	}
	return false;
}

/* Copy obj[key] into out when present. Non-zero when out of memory. */
static int share(json_t *out, const char *key, const json_t *obj)
{
	json_t *v = json_object_get(obj, key);

	return v ? json_object_set(out, key, v) : 0;
}

static json_t *trim_meta(const json_t *obj, bool namespaced)
{
	const json_t *meta = json_object_get(obj, "metadata");
	json_t *m = json_object();

	if (!m || share(m, "name", meta) || (namespaced && share(m, "namespace", meta))) {
		json_decref(m);
		return NULL;
	}
	return m;
}

static json_t *trim_device(const json_t *dev)
{
	json_t *out = json_object(), *attrs = json_object();
	const char *key;
	json_t *value;

	if (!out || !attrs)
		goto fail;
	if (share(out, "name", dev) || share(out, "nodeName", dev))
		goto fail;
	json_object_foreach((json_t *)json_object_get(dev, "attributes"), key, value)
		if (string_attr(value) &&
		    json_object_set_new(attrs, key, json_string(string_attr(value))))
			goto fail;
	if (json_object_size(attrs) && json_object_set(out, "attributes", attrs))
		goto fail;
	if (taint_keeps_off(json_object_get(dev, "taints")) &&
	    json_object_set_new(out, "taints", json_pack("[{s:s}]", "effect", "NoSchedule")))
		goto fail;
	json_decref(attrs);
	return out;
fail:
	json_decref(attrs);
	json_decref(out);
	return NULL;
}

json_t *cache_trim_slice(const json_t *slice, void *arg)
{
	const json_t *spec = json_object_get(slice, "spec"), *dev;
	const json_t *pool = json_object_get(spec, "pool");
	json_t *out = json_object(), *s = json_object(), *p = json_object(), *devs = json_array();
	size_t i;

	(void)arg;
	if (!out || !s || !p || !devs)
		goto fail;
	if (json_object_set_new(out, "metadata", trim_meta(slice, false)) ||
	    share(s, "driver", spec) || share(s, "nodeName", spec) ||
	    share(p, "name", pool) || share(p, "generation", pool) ||
	    json_object_set(s, "pool", p))
		goto fail;
	json_array_foreach(json_object_get(spec, "devices"), i, dev)
		if (json_array_append_new(devs, trim_device(dev)))
			goto fail;
	if (json_object_set(s, "devices", devs) || json_object_set(out, "spec", s))
		goto fail;
	json_decref(s);
	json_decref(p);
	json_decref(devs);
	return out;
fail:
	json_decref(s);
	json_decref(p);
	json_decref(devs);
	json_decref(out);
	return NULL;
}

/* A result that holds its device: adminAccess takes it from no one. */
static bool holds(const json_t *result)
{
	return !json_is_true(json_object_get(result, "adminAccess"));
}

static const json_t *claim_results(const json_t *claim)
{
	return json_object_get(json_object_get(json_object_get(json_object_get(
		claim, "status"), "allocation"), "devices"), "results");
}

json_t *cache_trim_claim(const json_t *claim, void *arg)
{
	json_t *out = json_object(), *results = json_array();
	const json_t *r;
	size_t i;

	(void)arg;
	if (!out || !results || json_object_set_new(out, "metadata", trim_meta(claim, true)))
		goto fail;
	json_array_foreach(claim_results(claim), i, r)
		if (holds(r) && json_array_append_new(results, json_pack(
			"{s:O?, s:O?, s:O?}", "driver", json_object_get(r, "driver"), "pool",
			json_object_get(r, "pool"), "device", json_object_get(r, "device"))))
			goto fail;
	if (json_array_size(results) && json_object_set_new(out, "status", json_pack(
		"{s:{s:{s:O}}}", "allocation", "devices", "results", results)))
		goto fail;
	json_decref(results);
	return out;
fail:
	json_decref(results);
	json_decref(out);
	return NULL;
}

json_t *cache_trim_class(const json_t *cls, void *arg)
{
	json_t *out = json_object(), *sels = json_array();
	const json_t *sel;
	size_t i;

	(void)arg;
	if (!out || !sels || json_object_set_new(out, "metadata", trim_meta(cls, false)))
		goto fail;
	json_array_foreach(json_object_get(json_object_get(cls, "spec"), "selectors"), i, sel) {
		const json_t *expr = json_object_get(json_object_get(sel, "cel"), "expression");

		if (json_is_string(expr) && json_array_append_new(sels, json_pack(
			"{s:{s:O}}", "cel", "expression", expr)))
			goto fail;
	}
	if (json_object_set_new(out, "spec", json_pack("{s:O}", "selectors", sels)))
		goto fail;
	json_decref(sels);
	return out;
fail:
	json_decref(sels);
	json_decref(out);
	return NULL;
}

/* The distinct names of the devices' string attributes, in order met, at most max. */
static size_t slice_keys(const json_t *devices, const char **keys, size_t max)
{
	const json_t *dev, *value;
	const char *key;
	size_t i, n = 0;

	json_array_foreach(devices, i, dev)
		json_object_foreach((json_t *)json_object_get(dev, "attributes"), key, value) {
			size_t k = 0;

			if (!string_attr(value))
				continue;
			while (k < n && strcmp(keys[k], key))
				k++;
			if (k == n && n < max)
				keys[n++] = key;
		}
	return n;
}

int cache_record_slice(const json_t *slice, void *rec, size_t size, void *arg)
{
	const json_t *spec = json_object_get(slice, "spec"), *devices, *dev;
	const json_t *pool = json_object_get(spec, "pool");
	struct slice_hdr h = { .magic = SLICE_MAGIC };
	const char *keys[SLICE_KEYS_MAX];
	unsigned char *out = rec;
	size_t i, used, at_devices, at_values;
	struct strtab t;

	(void)arg;
	devices = json_object_get(spec, "devices");
	h.n_devices = (uint32_t)json_array_size(devices);
	h.n_keys = (uint32_t)slice_keys(devices, keys, SLICE_KEYS_MAX);
	h.generation = json_integer_value(json_object_get(pool, "generation"));
	at_devices = sizeof(h) + h.n_keys * sizeof(uint32_t);
	at_values = at_devices + h.n_devices * sizeof(struct device_ent);
	used = at_values + (size_t)h.n_devices * h.n_keys * sizeof(uint32_t);
	strtab_init(&t, rec, used, size);
	if (t.overflow)
		return 0;
	h.driver = strtab_add(&t, str(spec, "driver") ? str(spec, "driver") : "");
	h.pool = strtab_add(&t, str(pool, "name") ? str(pool, "name") : "");
	h.node = strtab_add(&t, str(spec, "nodeName"));
	for (size_t k = 0; k < h.n_keys; k++) {
		uint32_t off = strtab_add(&t, keys[k]);

		if (!t.overflow)
			memcpy(out + sizeof(h) + k * sizeof(off), &off, sizeof(off));
	}
	json_array_foreach(devices, i, dev) {
		const json_t *attrs = json_object_get(dev, "attributes");
		struct device_ent d;

		d.name = strtab_add(&t, str(dev, "name") ? str(dev, "name") : "");
		d.node = strtab_add(&t, str(dev, "nodeName"));
		d.flags = taint_keeps_off(json_object_get(dev, "taints")) ? DEVICE_TAINTED : 0;
		for (size_t k = 0; k < h.n_keys; k++) {
			uint32_t off = strtab_add(&t, string_attr(json_object_get(attrs, keys[k])));

			if (!t.overflow)
				memcpy(out + at_values + (i * h.n_keys + k) * sizeof(off), &off,
				       sizeof(off));
		}
		if (!t.overflow)
			memcpy(out + at_devices + i * sizeof(d), &d, sizeof(d));
	}
	if (t.overflow)
		return 0;
	h.strings_len = (uint32_t)t.len;
	memcpy(out, &h, sizeof(h));
	return (int)(used + t.len);
}

int cache_record_claim(const json_t *claim, void *rec, size_t size, void *arg)
{
	const json_t *results = claim_results(claim), *r;
	struct claim_hdr h = { .magic = CLAIM_MAGIC };
	unsigned char *out = rec;
	struct strtab t;
	size_t i, used;

	(void)arg;
	json_array_foreach(results, i, r)
		h.n_results += holds(r);
	used = sizeof(h) + h.n_results * sizeof(struct result_ent);
	strtab_init(&t, rec, used, size);
	h.n_results = 0;
	json_array_foreach(results, i, r) {
		struct result_ent e;

		if (!holds(r))
			continue;
		e.driver = strtab_add(&t, str(r, "driver") ? str(r, "driver") : "");
		e.pool = strtab_add(&t, str(r, "pool") ? str(r, "pool") : "");
		e.device = strtab_add(&t, str(r, "device") ? str(r, "device") : "");
		if (!t.overflow)
			memcpy(out + sizeof(h) + h.n_results * sizeof(e), &e, sizeof(e));
		h.n_results++;
	}
	if (t.overflow)
		return 0;
	h.strings_len = (uint32_t)t.len;
	memcpy(out, &h, sizeof(h));
	return (int)(used + t.len);
}

struct terms {
	struct strtab *t;      /* NULL: count only */
	unsigned char *at;     /* where the next term goes */
	uint32_t n;
};

static int add_term(void *ctx, const char *attribute, const char *value, enum dra_literal kind)
{
	struct terms *ts = ctx;
	struct pair_ent p;

	/* Slices are kept with their string attributes only: other equalities are taken to hold. */
	if (kind != DRA_LITERAL_STRING)
		return 0;
	if (ts->t) {
		p.key = strtab_add(ts->t, attribute);
		p.value = strtab_add(ts->t, value);
		if (!ts->t->overflow)
			memcpy(ts->at + ts->n * sizeof(p), &p, sizeof(p));
	}
	ts->n++;
	return 0;
}

/* Call fn over the equalities of every selector of the class. */
static int class_terms(const json_t *cls, struct terms *ts)
{
	const json_t *sel;
	size_t i;
	int err;

	json_array_foreach(json_object_get(json_object_get(cls, "spec"), "selectors"), i, sel) {
		const char *expr = str(json_object_get(sel, "cel"), "expression");

		if (expr && (err = dra_select_terms(expr, add_term, ts)))
			return err;
	}
	return 0;
}

int cache_record_class(const json_t *cls, void *rec, size_t size, void *arg)
{
	struct class_hdr h = { .magic = CLASS_MAGIC };
	struct terms ts = { NULL, NULL, 0 };
	struct strtab t;
	size_t used;
	int err;

	(void)arg;
	if ((err = class_terms(cls, &ts)))
		return err;
	h.n_terms = ts.n;
	used = sizeof(h) + (size_t)h.n_terms * sizeof(struct pair_ent);
	strtab_init(&t, rec, used, size);
	ts = (struct terms){ &t, (unsigned char *)rec + sizeof(h), 0 };
	if ((err = class_terms(cls, &ts)))
		return err;
	if (t.overflow)
		return 0;
	h.strings_len = (uint32_t)t.len;
	memcpy(rec, &h, sizeof(h));
	return (int)(used + t.len);
}

/* --- reading --- */

/* The string at off of an area of len bytes that ends with a NUL; NULL for NO_STRING or past it. */
static const char *str_at(const char *area, size_t len, uint32_t off)
{
	return off < len ? area + off : NULL;
}

/* The strings of a record: [at, len) ends with a NUL, or is empty. */
static bool strings_ok(const void *rec, size_t len, size_t at, uint32_t strings_len)
{
	return at <= len && len - at == strings_len &&
	       (!strings_len || ((const char *)rec)[len - 1] == '\0');
}

int cache_slice_read(const void *rec, size_t len, struct cache_slice *out)
{
	struct slice_hdr h;
	size_t at;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return CADRE_EINVAL;
	memcpy(&h, rec, sizeof(h));
	at = sizeof(h) + (size_t)h.n_keys * sizeof(uint32_t) +
	     (size_t)h.n_devices * sizeof(struct device_ent) +
	     (size_t)h.n_devices * h.n_keys * sizeof(uint32_t);
	if (h.magic != SLICE_MAGIC || !strings_ok(rec, len, at, h.strings_len))
		return CADRE_EINVAL;
	out->keys = (const unsigned char *)rec + sizeof(h);
	out->devices = out->keys + (size_t)h.n_keys * sizeof(uint32_t);
	out->values = out->devices + (size_t)h.n_devices * sizeof(struct device_ent);
	out->strings = (const char *)rec + at;
	out->strings_len = h.strings_len;
	out->n_devices = h.n_devices;
	out->n_keys = h.n_keys;
	out->generation = h.generation;
	out->driver = str_at(out->strings, out->strings_len, h.driver);
	out->pool = str_at(out->strings, out->strings_len, h.pool);
	out->node = str_at(out->strings, out->strings_len, h.node);
	if (!out->driver || !out->pool)
		return CADRE_EINVAL;
	return 0;
}

void cache_slice_device(const struct cache_slice *s, size_t k, struct cache_device *out)
{
	struct device_ent d;
	const char *name;

	memcpy(&d, s->devices + k * sizeof(d), sizeof(d));
	name = str_at(s->strings, s->strings_len, d.name);
	out->name = name ? name : "";
	out->node = d.node == NO_STRING ? s->node : str_at(s->strings, s->strings_len, d.node);
	out->tainted = d.flags & DEVICE_TAINTED;
	out->index = k;
}

/* The longest qualified name: a 63-byte domain, '/', a 32-byte name (resource/v1 types.go). */
#define QUALIFIED_MAX 128

long cache_slice_key(const struct cache_slice *s, const char *attribute)
{
	const char *slash = strchr(attribute, '/');
	size_t dlen = strlen(s->driver);
	char other_buf[QUALIFIED_MAX];
	const char *other = NULL;
	long found = -1;

	/* The other spelling in the driver's domain: "NAME" for "<driver>/NAME", and back. */
	if (slash && (size_t)(slash - attribute) == dlen && !strncmp(attribute, s->driver, dlen))
		other = slash + 1;
	else if (!slash && dlen + strlen(attribute) + 2 <= sizeof(other_buf)) {
		memcpy(other_buf, s->driver, dlen);
		other_buf[dlen] = '/';
		memcpy(other_buf + dlen + 1, attribute, strlen(attribute) + 1);
		other = other_buf;
	}
	for (size_t k = 0; k < s->n_keys; k++) {
		uint32_t off;
		const char *key;

		memcpy(&off, s->keys + k * sizeof(off), sizeof(off));
		key = str_at(s->strings, s->strings_len, off);
		if (!key)
			continue;
		/* As spelled first; the other spelling only when the first is not there. */
		if (!strcmp(key, attribute))
			return (long)k;
		if (found < 0 && other && !strcmp(key, other))
			found = (long)k;
	}
	return found;
}

const char *cache_device_value(const struct cache_slice *s, const struct cache_device *d,
			       long key)
{
	uint32_t off;

	if (key < 0 || (size_t)key >= s->n_keys || d->index >= s->n_devices)
		return NULL;
	memcpy(&off, s->values + (d->index * s->n_keys + (size_t)key) * sizeof(off), sizeof(off));
	return str_at(s->strings, s->strings_len, off);
}

const char *cache_device_attribute(const struct cache_slice *s, const struct cache_device *d,
				   const char *attribute)
{
	return cache_device_value(s, d, cache_slice_key(s, attribute));
}

int cache_claim_read(const void *rec, size_t len, struct cache_claim *out)
{
	struct claim_hdr h;
	size_t at;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return CADRE_EINVAL;
	memcpy(&h, rec, sizeof(h));
	at = sizeof(h) + (size_t)h.n_results * sizeof(struct result_ent);
	if (h.magic != CLAIM_MAGIC || !strings_ok(rec, len, at, h.strings_len))
		return CADRE_EINVAL;
	out->n_results = h.n_results;
	out->results = (const unsigned char *)rec + sizeof(h);
	out->strings = (const char *)rec + at;
	out->strings_len = h.strings_len;
	return 0;
}

void cache_claim_result(const struct cache_claim *c, size_t k, const char **driver,
			const char **pool, const char **device)
{
	struct result_ent e;

	memcpy(&e, c->results + k * sizeof(e), sizeof(e));
	*driver = str_at(c->strings, c->strings_len, e.driver);
	*pool = str_at(c->strings, c->strings_len, e.pool);
	*device = str_at(c->strings, c->strings_len, e.device);
}

int cache_class_read(const void *rec, size_t len, struct cache_class *out)
{
	struct class_hdr h;
	size_t at;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return CADRE_EINVAL;
	memcpy(&h, rec, sizeof(h));
	at = sizeof(h) + (size_t)h.n_terms * sizeof(struct pair_ent);
	if (h.magic != CLASS_MAGIC || !strings_ok(rec, len, at, h.strings_len))
		return CADRE_EINVAL;
	out->n_terms = h.n_terms;
	out->terms = (const unsigned char *)rec + sizeof(h);
	out->strings = (const char *)rec + at;
	out->strings_len = h.strings_len;
	return 0;
}

void cache_class_term(const struct cache_class *c, size_t k, const char **attribute,
		      const char **value)
{
	struct pair_ent p;

	memcpy(&p, c->terms + k * sizeof(p), sizeof(p));
	*attribute = str_at(c->strings, c->strings_len, p.key);
	*value = str_at(c->strings, c->strings_len, p.value);
}

void cache_class_keys(const struct cache_class *c, const struct cache_slice *s, long *keys)
{
	for (size_t k = 0; k < c->n_terms; k++) {
		const char *attribute, *value;

		cache_class_term(c, k, &attribute, &value);
		keys[k] = attribute ? cache_slice_key(s, attribute) : -1;
	}
}

bool cache_class_selects(const struct cache_class *c, const struct cache_slice *s,
			 const long *keys, const struct cache_device *d)
{
	for (size_t k = 0; k < c->n_terms; k++) {
		const char *attribute, *value, *have;

		cache_class_term(c, k, &attribute, &value);
		if (!value)
			return false;
		if (!attribute)
			have = s->driver;
		else
			have = cache_device_value(s, d, keys ? keys[k] : cache_slice_key(s, attribute));
		if (!have || strcmp(have, value))
			return false;
	}
	return true;
}
