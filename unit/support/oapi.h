/*
 * oapi.h - an object checked against a CRD's OpenAPI v3 schema the way the
 * API server checks a create: defaults applied first, then the structural
 * keywords the CRDs in crd/ use, then their x-kubernetes-validations rules.
 *
 * Keywords: type (object, array, string, integer, number, boolean),
 * properties (a key the schema does not list is an error: the API server
 * would prune it, so what was sent would not be what is stored),
 * additionalProperties, required, enum, pattern, minLength and maxLength
 * (in characters), minimum, maximum, minItems, maxItems, minProperties,
 * maxProperties, format (int32, int64, date-time), default,
 * x-kubernetes-int-or-string with its anyOf, x-kubernetes-list-type (set,
 * map with x-kubernetes-list-map-keys: no duplicates). A null where the
 * schema is not nullable is an error too (the API server drops it). An object schema
 * with neither properties nor additionalProperties (metadata) takes
 * anything, as the API server validates it by itself.
 *
 * Rules: a subset of CEL that covers every rule in crd/: literals (strings,
 * integers, true, false, null, lists), self and the variable of all() and
 * exists(), field selection, has(), size(), !, &&, ||, ?:, ==, !=, <, <=,
 * >, >=, in, and the methods matches (RE2 syntax read as POSIX extended,
 * which the CRDs' patterns share), startsWith, endsWith, contains, all,
 * exists, and + (integers add, strings concatenate). Transition rules
 * (those that name oldSelf) do not apply to a
 * create and are skipped. A rule outside the subset is an error, not a pass,
 * so a new rule in crd/ fails the tests until this learns it.
 *
 * For tests and the fuzz targets; not thread-safe (a cache of compiled
 * patterns).
 */
#ifndef CADRE_UNIT_OAPI_H
#define CADRE_UNIT_OAPI_H

#include <jansson.h>
#include <stddef.h>

struct buf;
struct ytree;

/*
 * Check obj against schema (the openAPIV3Schema node of a CRD version).
 * Every problem is appended to errors as one line "<path>: <what>".
 * Returns the number of problems; obj is not changed.
 */
size_t oapi_validate(const struct ytree *schema, const json_t *obj, struct buf *errors);

/*
 * The openAPIV3Schema of the first version of the CRD file at path, loaded
 * once and kept for the process (the tree is freed at exit). NULL when the
 * file cannot be read.
 */
const struct ytree *oapi_crd_schema(const char *path);

/*
 * A YAML tree as the JSON kubectl sends for it: plain scalars typed as YAML
 * 1.1's core schema reads them (integers, true, false, null), everything
 * else a string. A new reference; NULL for NULL.
 */
json_t *oapi_json_from_yaml(const struct ytree *t);

/* Evaluate one CEL rule with self bound to self; 1 true, 0 false, -1 error (why in why). */
int oapi_cel_eval(const char *rule, const json_t *self, char *why, size_t why_size);

#endif
