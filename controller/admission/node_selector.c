/*
 * node_selector.c - kube-scheduler's node selector rules, for admission to
 * check before it pins a rank where the scheduler would refuse it.
 */
#include "controller/admission/node_selector.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "controller/admission/capacity.h"

enum node_selector_op node_selector_op_parse(const char *op)
{
	static const char *const names[] = {
		[NODE_SELECTOR_IN] = "In", [NODE_SELECTOR_NOT_IN] = "NotIn",
		[NODE_SELECTOR_EXISTS] = "Exists", [NODE_SELECTOR_DOES_NOT_EXIST] = "DoesNotExist",
		[NODE_SELECTOR_GT] = "Gt", [NODE_SELECTOR_LT] = "Lt",
	};

	for (size_t i = 0; op && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(op, names[i]))
			return (enum node_selector_op)i;
	return NODE_SELECTOR_BAD;
}

static const char *label_value(const struct cap_label *labels, size_t n, const char *key)
{
	for (size_t i = 0; key && i < n; i++)
		if (labels[i].key && !strcmp(labels[i].key, key))
			return labels[i].value ? labels[i].value : "";
	return NULL;
}

/* A base-10 int64, all of s, as Go's strconv.ParseInt reads it. */
static bool parse_int(const char *s, int64_t *out)
{
	char *end;
	long long v;

	/* strtoll would also skip leading blanks, which ParseInt refuses. */
	if (!s || !s[0] || !strchr("+-0123456789", s[0]))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || end == s)
		return false;
	*out = v;
	return true;
}

static bool in_values(const struct node_selector_req *r, const char *v)
{
	for (size_t i = 0; i < r->n_values; i++)
		if (r->values[i] && !strcmp(r->values[i], v))
			return true;
	return false;
}

/* One requirement against value (NULL: the node has no such label). */
static bool req_holds(const struct node_selector_req *r, const char *value)
{
	int64_t have, want;

	switch (r->op) {
	case NODE_SELECTOR_IN:
		return value && in_values(r, value);
	case NODE_SELECTOR_NOT_IN:
		return !value || !in_values(r, value);
	case NODE_SELECTOR_EXISTS:
		return value != NULL;
	case NODE_SELECTOR_DOES_NOT_EXIST:
		return value == NULL;
	case NODE_SELECTOR_GT:
	case NODE_SELECTOR_LT:
		/* kube wants exactly one value; the label must be an integer too. */
		if (!value || r->n_values != 1 || !parse_int(value, &have) ||
		    !parse_int(r->values[0], &want))
			return false;
		return r->op == NODE_SELECTOR_GT ? have > want : have < want;
	case NODE_SELECTOR_BAD:
		break;
	}
	return false;
}

static bool term_matches(const struct node_selector_term *t, const char *name,
			 const struct cap_label *labels, size_t n_labels)
{
	if (t->n_exprs == 0 && t->n_fields == 0)
		return false;
	for (size_t i = 0; i < t->n_exprs; i++)
		if (!req_holds(&t->exprs[i], label_value(labels, n_labels, t->exprs[i].key)))
			return false;
	for (size_t i = 0; i < t->n_fields; i++) {
		const struct node_selector_req *r = &t->fields[i];

		if (!r->key || strcmp(r->key, "metadata.name") ||
		    (r->op != NODE_SELECTOR_IN && r->op != NODE_SELECTOR_NOT_IN) ||
		    !req_holds(r, name))
			return false;
	}
	return true;
}

bool node_selector_matches(const struct node_selector *s, const char *name,
			   const struct cap_label *labels, size_t n_labels)
{
	for (size_t i = 0; i < s->n_terms; i++)
		if (term_matches(&s->terms[i], name ? name : "", labels, n_labels))
			return true;
	return false;
}
