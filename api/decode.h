/*
 * decode.h - typed reads from jansson values that turn every surprise into a
 * field error instead of a crash. Internal to api/: the parsers of
 * TrainingJob, Volume, metadata and conditions are written with it.
 *
 * A struct decoder carries the error list and the first hard failure
 * (CADRE_ENOMEM), so a parser reads field after field in a straight line
 * and checks once at the end:
 *
 *   struct decoder d;
 *   decode_init(&d, errs);
 *   decode_string(&d, spec, "spec", "image", &s->image);
 *   decode_int32(&d, spec, "spec", "numNodes", &s->num_nodes, &s->has_num_nodes);
 *   return decode_finish(&d);
 *
 * Conventions for every reader: a member that is absent or JSON null is
 * "not set" (Kubernetes' meaning of null for an optional field): nothing is
 * stored and no error is recorded. A member of the wrong type records
 * "<path>: must be a <type>" and stores nothing. Values passed in are
 * borrowed; strings stored are new heap copies owned by the caller, and a
 * string already in the slot is freed first.
 */
#ifndef CADRE_API_DECODE_H
#define CADRE_API_DECODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/fielderr.h"

/* Room for any path decode_path builds: it cuts what would not fit. */
#define DECODE_PATH_MAX (FIELD_ERROR_PATH_MAX + 64)

struct decoder {
	struct field_errors *errs;  /* borrowed */
	bool failed;                /* a problem was found (it may repeat one already listed) */
	int err;                    /* first hard failure, or 0 */
};

void decode_init(struct decoder *d, struct field_errors *errs);

/*
 * 0 when nothing went wrong since decode_init, CADRE_ENOMEM after an
 * allocation failure, else CADRE_EINVAL (field errors were recorded).
 */
int decode_finish(const struct decoder *d);

/*
 * Fold in the result of a nested parser that wrote to the same list:
 * CADRE_EINVAL marks d failed, any other error becomes d->err.
 */
void decode_merge(struct decoder *d, int err);

/* Record a field error at path; a failure to record becomes d->err. */
void decode_fail(struct decoder *d, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Record an allocation failure. */
void decode_nomem(struct decoder *d);

/*
 * Write base + key into out: ".key" when key is a plain identifier
 * ([A-Za-z_][A-Za-z0-9_-]*), else "[\"key\"]" with the key JSON-escaped,
 * as in spec.envs.BATCH_SIZE and spec.volumes["/mnt/ckpt"]. An empty base
 * gives the key alone. Cut to fit size.
 */
void decode_path(char *out, size_t size, const char *base, const char *key);

/*
 * Like decode_path, but always in the quoted form: for maps whose keys are
 * paths or other free text (spec.volumes["tmp"]), where ".tmp" would read
 * as a field name.
 */
void decode_path_quoted(char *out, size_t size, const char *base, const char *key);

/* Write base + "[i]" into out. */
void decode_path_index(char *out, size_t size, const char *base, size_t i);

/*
 * Readers of one value v (NULL or JSON null: not set) at path. Each returns
 * true when it stored a value.
 */
bool decode_as_string(struct decoder *d, const json_t *v, const char *path, char **out);
bool decode_as_int64(struct decoder *d, const json_t *v, const char *path,
		     int64_t min, int64_t max, int64_t *out);
bool decode_as_bool(struct decoder *d, const json_t *v, const char *path, bool *out);
/* An RFC 3339 string, stored as Unix seconds. */
bool decode_as_time(struct decoder *d, const json_t *v, const char *path, int64_t *out);
/* True when v is an object (resp. array); records an error for other types. */
bool decode_as_object(struct decoder *d, const json_t *v, const char *path);
bool decode_as_array(struct decoder *d, const json_t *v, const char *path);

/*
 * Readers of member key of obj (an object, or NULL for "no object"), with
 * the path built from base and key. The int readers set *set (when not
 * NULL) to true when they stored a value.
 */
bool decode_string(struct decoder *d, const json_t *obj, const char *base,
		   const char *key, char **out);
bool decode_int32(struct decoder *d, const json_t *obj, const char *base,
		  const char *key, int32_t *out, bool *set);
bool decode_int64(struct decoder *d, const json_t *obj, const char *base,
		  const char *key, int64_t *out, bool *set);
bool decode_bool(struct decoder *d, const json_t *obj, const char *base,
		 const char *key, bool *out);
bool decode_time(struct decoder *d, const json_t *obj, const char *base,
		 const char *key, int64_t *out);

/*
 * A resource quantity at member key of obj. Kubernetes quantities are
 * int-or-string: YAML's cpus: 32 arrives as a number, and is kept as the
 * text "32" (a real is printed with 15 significant digits, so 0.1 stays
 * "0.1"). The text goes to *raw; *has and *milli are set when it parses.
 * Whether it must parse is the validator's question.
 */
void decode_quantity(struct decoder *d, const json_t *obj, const char *base,
		     const char *key, char **raw, bool *has, int64_t *milli);

/*
 * The member key of obj when it is an object (resp. array), borrowed; NULL
 * when absent, null or of another type (then with an error recorded).
 */
const json_t *decode_object(struct decoder *d, const json_t *obj, const char *base,
			    const char *key);
const json_t *decode_array(struct decoder *d, const json_t *obj, const char *base,
			   const char *key);

/*
 * A deep copy of member key of obj when it is an object (resp. array), as
 * a new reference stored in *out (an earlier value there is released);
 * nothing is stored when absent or null.
 */
bool decode_object_copy(struct decoder *d, const json_t *obj, const char *base,
			const char *key, json_t **out);
bool decode_array_copy(struct decoder *d, const json_t *obj, const char *base,
		       const char *key, json_t **out);

/*
 * Like decode_object_copy, and every value of the object must be a string
 * (labels, annotations, nodeSelector).
 */
bool decode_string_map_copy(struct decoder *d, const json_t *obj, const char *base,
			    const char *key, json_t **out);

/*
 * Record "<path>: unknown field" for every member of obj (an object) whose
 * name is not in allowed (NULL-terminated), with why appended when given.
 * Used where unknown fields are a safety question (podTemplate), not for
 * forward compatibility.
 */
void decode_only_keys(struct decoder *d, const json_t *obj, const char *base,
		      const char *const allowed[], const char *why);

/*
 * Check a list of pod tolerations (known keys, Exists or Equal, an empty
 * value with Exists, a known effect), each at base[i]. For TrainingJob
 * podTemplates and Partitions.
 */
void api_validate_tolerations(struct decoder *d, const json_t *list, const char *base);

/* Replace the string in *slot with a copy of value (NULL clears it). 0 or CADRE_ENOMEM. */
int api_strset(char **slot, const char *value);

#endif
