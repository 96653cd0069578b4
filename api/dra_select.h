/*
 * dra_select.h - the part of a DeviceClass's CEL selector (resource.k8s.io/v1
 * spec.selectors[].cel.expression) that built-in admission reads, to count
 * a class's devices (docs/design.md 3.1), and that cadre sinfo and the
 * dashboard read to show them (dra_class.h).
 *
 * cadre has no CEL interpreter. It reads an expression as a conjunction
 * (its top-level "&&"; a parenthesised conjunction is looked into) and
 * understands two forms of conjunct, the ones device classes are made of
 * (NVIDIA's gpu.nvidia.com is `device.driver == 'gpu.nvidia.com' &&
 * device.attributes['gpu.nvidia.com'].type == 'gpu'`):
 *
 *   device.driver == 'X'
 *   device.attributes['D'].NAME == V       (also ["D"] and ['D']['NAME'])
 *
 * with the literal on either side: a string in single or double quotes,
 * an integer, true or false (V; device.driver is compared to strings). Any
 * other conjunct is taken to hold, and so is a whole expression with a
 * top-level "||" or "?" (it is not a conjunction): what cadre counts is a
 * superset of what kube-scheduler would allocate, and kube-scheduler,
 * which evaluates the expression, has the last word.
 *
 * Pure; thread-safe.
 */
#ifndef CADRE_DRA_SELECT_H
#define CADRE_DRA_SELECT_H

/* What a literal is: its text is a string's value, or the integer or boolean as written. */
enum dra_literal {
	DRA_LITERAL_STRING,
	DRA_LITERAL_INT,     /* an optional '-' and digits */
	DRA_LITERAL_BOOL,    /* "true" or "false" */
};

/*
 * One understood equality: attribute is NULL for device.driver, else the
 * attribute's qualified name "D/NAME"; value the literal (a string
 * unescaped), of kind. Both are borrowed for the call. A non-zero return
 * stops the walk.
 */
typedef int (*dra_term_fn)(void *ctx, const char *attribute, const char *value,
			   enum dra_literal kind);

/*
 * Call fn for each understood equality of expr, in order. Returns 0, fn's
 * non-zero return, or CADRE_ENOMEM.
 */
int dra_select_terms(const char *expr, dra_term_fn fn, void *ctx);

#endif
