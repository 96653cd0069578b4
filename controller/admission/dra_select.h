/*
 * dra_select.h - the part of a DeviceClass's CEL selector (resource.k8s.io/v1
 * spec.selectors[].cel.expression) that built-in admission reads, to count
 * a class's devices (docs/design.md 3.1).
 *
 * cadre has no CEL interpreter. It reads an expression as a conjunction
 * (its top-level "&&"; a parenthesised conjunction is looked into) and
 * understands two forms of conjunct, the ones device classes are made of
 * (NVIDIA's gpu.nvidia.com is `device.driver == 'gpu.nvidia.com' &&
 * device.attributes['gpu.nvidia.com'].type == 'gpu'`):
 *
 *   device.driver == 'X'
 *   device.attributes['D'].NAME == 'V'     (also ["D"] and ['D']['NAME'])
 *
 * with the string literal on either side, in single or double quotes. Any
 * other conjunct is taken to hold, and so is a whole expression with a
 * top-level "||" or "?" (it is not a conjunction): what cadre counts is a
 * superset of what kube-scheduler would allocate, and kube-scheduler,
 * which evaluates the expression, has the last word.
 *
 * Pure; thread-safe.
 */
#ifndef CADRE_DRA_SELECT_H
#define CADRE_DRA_SELECT_H

/*
 * One understood equality: attribute is NULL for device.driver, else the
 * attribute's qualified name "D/NAME"; value the literal, unescaped. Both
 * are borrowed for the call. A non-zero return stops the walk.
 */
typedef int (*dra_term_fn)(void *ctx, const char *attribute, const char *value);

/*
 * Call fn for each understood equality of expr, in order. Returns 0, fn's
 * non-zero return, or CADRE_ENOMEM.
 */
int dra_select_terms(const char *expr, dra_term_fn fn, void *ctx);

#endif
