/*
 * cache_record_dra.h - what the caches keep of the objects of Dynamic
 * Resource Allocation (resource.k8s.io/v1), and the records admission
 * counts devices from (controller/admission/dra_capacity.h): a trim per
 * kind (store_trim_fn), so that the packed objects hold no more than the
 * records are made of, and a record per kind (store_record_fn, as
 * cache_record.h's for pods and nodes).
 *
 *   ResourceSlice  its driver, pool (name, generation), spec.nodeName and,
 *                  per device, its name, its own nodeName (a slice with
 *                  perDeviceNodeSelection), whether a NoSchedule or
 *                  NoExecute taint keeps pods off it, and its attributes
 *                  of string value: the type attribute (--device-attribute)
 *                  and whatever a DeviceClass selector compares are among
 *                  them (of the first 256 names the devices use). Strings
 *                  are kept once per record (a node's GPUs share their
 *                  product name, architecture and driver).
 *   ResourceClaim  the devices its allocation holds (driver, pool, device
 *                  of each result; a result with adminAccess holds none);
 *                  an unallocated claim's record holds nothing.
 *   DeviceClass    the equalities of its selectors cadre reads
 *                  (api/dra_select.h).
 *
 * A record too large for STORE_RECORD_MAX is not made (the record function
 * returns 0); the reader makes it from the cached object instead, into a
 * buffer of its own (the same function with a larger size).
 *
 * Pure; thread-safe.
 */
#ifndef CADRE_CACHE_RECORD_DRA_H
#define CADRE_CACHE_RECORD_DRA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The trims (store_trim_fn; arg unused): new references, NULL when out of
 * memory. A trimmed slice keeps its devices' string attributes as plain
 * strings ({"type": "gpu"}, not {"type": {"string": "gpu"}}); the record
 * functions read either form alike.
 */
json_t *cache_trim_slice(const json_t *slice, void *arg);
json_t *cache_trim_claim(const json_t *claim, void *arg);
json_t *cache_trim_class(const json_t *cls, void *arg);

/*
 * The records (store_record_fn; arg unused): the length written, 0 when it
 * does not fit in size, or CADRE_ENOMEM (a DeviceClass's selector could
 * not be read).
 */
int cache_record_slice(const json_t *slice, void *rec, size_t size, void *arg);
int cache_record_claim(const json_t *claim, void *rec, size_t size, void *arg);
int cache_record_class(const json_t *cls, void *rec, size_t size, void *arg);

/* A slice's record read back; strings point into the record. */
struct cache_slice {
	const char *driver;
	const char *pool;
	int64_t generation;
	const char *node;       /* spec.nodeName; NULL when the slice is not one node's */
	size_t n_devices;
	/* Where the rest is, for the functions below. */
	const unsigned char *keys, *devices, *values;
	const char *strings;
	size_t n_keys, strings_len;
};

struct cache_device {
	const char *name;
	/* Its node: its own nodeName with perDeviceNodeSelection, else the slice's; NULL: none. */
	const char *node;
	bool tainted;           /* a NoSchedule or NoExecute taint: pods without a toleration stay off */
	size_t index;           /* in the slice */
};

/* Read a slice record. CADRE_EINVAL when rec is not one. */
int cache_slice_read(const void *rec, size_t len, struct cache_slice *out);

/* Device k (< s->n_devices) of a slice read by cache_slice_read. */
void cache_slice_device(const struct cache_slice *s, size_t k, struct cache_device *out);

/*
 * An attribute, named as --device-attribute takes it and as
 * dra_device_attribute (api/dra.h) finds it ("NAME" in the driver's
 * domain, or "DOMAIN/NAME", the two being one when DOMAIN is the
 * driver's), looked up once in a slice: its key there, or -1 when no
 * device of the slice has it as a string.
 */
long cache_slice_key(const struct cache_slice *s, const char *attribute);

/* A device's string value of key (cache_slice_key, in its slice); NULL when it has none. */
const char *cache_device_value(const struct cache_slice *s, const struct cache_device *d,
			       long key);

/* Both at once, for one device. */
const char *cache_device_attribute(const struct cache_slice *s, const struct cache_device *d,
				   const char *attribute);

/* A claim's record read back: the devices its allocation holds. */
struct cache_claim {
	size_t n_results;
	const unsigned char *results;
	const char *strings;
	size_t strings_len;
};

int cache_claim_read(const void *rec, size_t len, struct cache_claim *out);

/* Result k (< c->n_results): the device it holds, strings pointing into the record. */
void cache_claim_result(const struct cache_claim *c, size_t k, const char **driver,
			const char **pool, const char **device);

/* A DeviceClass's record read back: its equalities (dra_select.h). */
struct cache_class {
	size_t n_terms;
	const unsigned char *terms;
	const char *strings;
	size_t strings_len;
};

int cache_class_read(const void *rec, size_t len, struct cache_class *out);

/* Term k (< c->n_terms): attribute NULL for device.driver, else "D/NAME"; its value. */
void cache_class_term(const struct cache_class *c, size_t k, const char **attribute,
		      const char **value);

/*
 * The key in slice s (cache_slice_key) of each of c's terms, into
 * keys[0..c->n_terms): looked up once for all the slice's devices.
 */
void cache_class_keys(const struct cache_class *c, const struct cache_slice *s, long *keys);

/*
 * Whether device d of slice s is of class c as far as cadre can tell:
 * every equality of c holds (dra_select.h says which conjuncts are read,
 * and that the rest are taken to hold). keys: from cache_class_keys for s,
 * or NULL to look them up for this call.
 */
bool cache_class_selects(const struct cache_class *c, const struct cache_slice *s,
			 const long *keys, const struct cache_device *d);

#endif
