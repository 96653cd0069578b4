/*
 * meta.h - the parts of an object's metadata that cadre reads, and the
 * time format Kubernetes writes.
 *
 * The controller never writes metadata except its own finalizer, so this
 * is read-only: there is no metadata-to-JSON. Labels and annotations are
 * kept as jansson objects, since callers only look keys up or copy them
 * whole into pods.
 */
#ifndef CADRE_API_META_H
#define CADRE_API_META_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct field_errors;

struct object_meta {
	char *name;                 /* owned; NULL when absent */
	char *namespace;            /* owned; NULL when absent (cluster-scoped) */
	char *uid;                  /* owned; NULL when absent */
	char *resource_version;     /* owned, opaque; NULL when absent */
	int64_t generation;         /* 0 when absent */
	int64_t creation_timestamp; /* Unix seconds; 0 when absent */
	bool deleting;              /* deletionTimestamp is set */
	int64_t deletion_timestamp; /* Unix seconds, when deleting */
	/* New references to objects of strings; never NULL after meta_parse. */
	json_t *labels;
	json_t *annotations;
	char **finalizers;          /* owned array of owned strings */
	size_t n_finalizers;
};

/* An empty meta: all NULL and zero, safe to release. */
void meta_init(struct object_meta *meta);

/* Free the contents; the meta is as after meta_init. */
void meta_release(struct object_meta *meta);

/*
 * Read metadata (borrowed; NULL when the object has none) into meta, which
 * meta_parse initializes first. Problems are added to errs under path
 * "metadata.*"; missing metadata, or metadata without a name, is one of
 * them. Returns 0, CADRE_EINVAL when it added errors (meta then holds what
 * could be read), or CADRE_ENOMEM. Release meta whatever it returns.
 */
int meta_parse(const json_t *metadata, struct object_meta *meta, struct field_errors *errs);

/* The value of label key, borrowed from meta; NULL when absent. */
const char *meta_label(const struct object_meta *meta, const char *key);

/* The value of annotation key, borrowed from meta; NULL when absent. */
const char *meta_annotation(const struct object_meta *meta, const char *key);

bool meta_has_finalizer(const struct object_meta *meta, const char *finalizer);

/*
 * Whether one of obj's metadata.ownerReferences has this uid: the object is
 * that owner's, not another's of the same name. False for a NULL or empty
 * uid and for an object without owners.
 */
bool meta_owned_by(const json_t *obj, const char *uid);

/*
 * Parse an RFC 3339 time ("2026-11-30T01:02:03Z", "...03.123456Z",
 * "...03+02:00", lower-case t and z accepted) into Unix seconds; a
 * fraction of a second is dropped. Years 0001 to 9999. Returns 0 or
 * CADRE_EPARSE.
 */
int api_time_parse(const char *rfc3339, int64_t *unix_seconds);

/*
 * Write unix_seconds as "2026-11-30T01:02:03Z" (UTC, whole seconds, the
 * form metav1.Time marshals to) into out. Returns 0, or CADRE_EINVAL for a
 * time outside years 0001 to 9999 (out is then "").
 */
int api_time_format(int64_t unix_seconds, char out[32]);

#endif
