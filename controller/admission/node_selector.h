/*
 * node_selector.h - a required node selector (a pod's required node
 * affinity, a PersistentVolume's node affinity) and whether a node matches
 * it, by the rules kube-scheduler applies (k8s.io/component-helpers
 * nodeaffinity): terms are OR-ed, the requirements of a term AND-ed.
 *
 * Pure; strings and arrays are borrowed from the caller. Thread-safe.
 */
#ifndef CADRE_NODE_SELECTOR_H
#define CADRE_NODE_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>

struct cap_label;

enum node_selector_op {
	NODE_SELECTOR_IN = 0,
	NODE_SELECTOR_NOT_IN,        /* also true when the label is absent */
	NODE_SELECTOR_EXISTS,
	NODE_SELECTOR_DOES_NOT_EXIST,
	NODE_SELECTOR_GT,            /* the label and the one value read as integers */
	NODE_SELECTOR_LT,
	NODE_SELECTOR_BAD,           /* an operator kube does not know: matches nothing */
};

/* One requirement on a node label (matchExpressions) or field (matchFields). */
struct node_selector_req {
	const char *key;
	enum node_selector_op op;
	const char *const *values;
	size_t n_values;
};

struct node_selector_term {
	const struct node_selector_req *exprs;   /* on labels */
	size_t n_exprs;
	const struct node_selector_req *fields;  /* on fields: metadata.name only */
	size_t n_fields;
};

struct node_selector {
	const struct node_selector_term *terms;  /* OR-ed; none: no node matches */
	size_t n_terms;
	/*
	 * Where it comes from, for a person: NULL for the pod's own affinity,
	 * else the name of the Volume whose PersistentVolume it is.
	 */
	const char *volume;
};

/* The operator named op ("In", "NotIn", ...); NODE_SELECTOR_BAD for any other. */
enum node_selector_op node_selector_op_parse(const char *op);

/*
 * Whether the node named name with labels[0..n_labels) matches s: some term
 * whose every requirement holds. A term without requirements matches no
 * node, as in kube; a matchFields key other than metadata.name, or an
 * operator other than In and NotIn there, makes its term match nothing.
 */
bool node_selector_matches(const struct node_selector *s, const char *name,
			   const struct cap_label *labels, size_t n_labels);

#endif
