/*
 * trainingjob_nodes.c - spec.nodeList, spec.excludeNodes, spec.exclusive
 * and spec.constraint: the node choices sbatch takes at submit
 * (trainingjob.h, struct tj_nodes).
 */
#include "api/decode.h"
#include "api/name.h"
#include "api/trainingjob.h"
#include "base/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void names_release(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

void tj_nodes_release(struct tj_nodes *n)
{
	names_release(n->list, n->n_list);
	names_release(n->exclude, n->n_exclude);
	free(n->constraint);
	memset(n, 0, sizeof(*n));
}

/* A list of node names at spec.<key> into *out. */
static void decode_names(struct decoder *d, const json_t *spec, const char *key, char ***out,
			 size_t *n)
{
	const json_t *list = decode_array(d, spec, "spec", key), *v;
	char base[DECODE_PATH_MAX], path[DECODE_PATH_MAX];
	size_t i;

	if (!json_array_size(list))
		return;
	if (!(*out = calloc(json_array_size(list), sizeof(**out)))) {
		decode_nomem(d);
		return;
	}
	decode_path(base, sizeof(base), "spec", key);
	json_array_foreach(list, i, v) {
		decode_path_index(path, sizeof(path), base, i);
		if (decode_as_string(d, v, path, &(*out)[*n]))
			(*n)++;
	}
}

void tj_decode_nodes(struct decoder *d, const json_t *spec, struct tj_nodes *out)
{
	decode_names(d, spec, "nodeList", &out->list, &out->n_list);
	decode_names(d, spec, "excludeNodes", &out->exclude, &out->n_exclude);
	decode_bool(d, spec, "spec", "exclusive", &out->exclusive);
	decode_string(d, spec, "spec", "constraint", &out->constraint);
}

static bool listed(char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* Node names: each a node's name (DNS-1123 subdomain), once, at most TJ_MAX_NODE_NAMES. */
static void check_names(struct decoder *d, const char *key, char *const *names, size_t n)
{
	char base[DECODE_PATH_MAX], path[DECODE_PATH_MAX];

	decode_path(base, sizeof(base), "spec", key);
	if (n > TJ_MAX_NODE_NAMES)
		decode_fail(d, base, "names %zu nodes, more than %d", n, TJ_MAX_NODE_NAMES);
	for (size_t i = 0; i < n && i < TJ_MAX_NODE_NAMES; i++) {
		decode_path_index(path, sizeof(path), base, i);
		if (!name_is_dns1123_subdomain(names[i]))
			decode_fail(d, path, "\"%.64s\" is not a node name", names[i]);
		else if (listed(names, i, names[i]))
			decode_fail(d, path, "%.64s is listed twice", names[i]);
	}
}

void tj_validate_nodes(struct decoder *d, const struct tj_spec *s)
{
	const struct tj_nodes *n = &s->nodes;
	struct tj_constraint c;
	char why[160];
	int err;

	check_names(d, "nodeList", n->list, n->n_list);
	check_names(d, "excludeNodes", n->exclude, n->n_exclude);
	for (size_t i = 0; i < n->n_list; i++)
		if (listed(n->exclude, n->n_exclude, n->list[i]))
			decode_fail(d, "spec.excludeNodes", "%.64s is in spec.nodeList too",
				    n->list[i]);
	/* Slurm: "Requested node configuration is not available". */
	if (s->num_nodes > 0 && n->n_list > (size_t)s->num_nodes)
		decode_fail(d, "spec.nodeList", "names %zu nodes, more than numNodes (%d)",
			    n->n_list, s->num_nodes);
	if (n->n_list && s->topology.set)
		decode_fail(d, "spec.nodeList", "cannot be used with spec.topology, which chooses "
			    "the nodes itself");
	if (!n->constraint)
		return;
	err = tj_constraint_parse(n->constraint, &c, why, sizeof(why));
	if (err == CADRE_ENOMEM)
		decode_nomem(d);
	else if (err)
		decode_fail(d, "spec.constraint", "%s", why);
	tj_constraint_release(&c);
}

void tj_constraint_release(struct tj_constraint *c)
{
	free(c->text);
	free(c->feature);
	free(c->term_end);
	memset(c, 0, sizeof(*c));
}

static bool feature_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '-' || ch == '.';
}

int tj_constraint_parse(const char *text, struct tj_constraint *out, char *why, size_t size)
{
	size_t len = text ? strlen(text) : 0, cap = len / 2 + 1;
	char *p;

	memset(out, 0, sizeof(*out));
	if (!len || len > TJ_MAX_CONSTRAINT) {
		snprintf(why, size, "must be 1 to %d characters of features joined by & or |",
			 TJ_MAX_CONSTRAINT);
		return CADRE_EPARSE;
	}
	out->text = strdup(text);
	out->feature = calloc(cap, sizeof(*out->feature));
	out->term_end = calloc(cap, sizeof(*out->term_end));
	if (!out->text || !out->feature || !out->term_end) {
		tj_constraint_release(out);
		return CADRE_ENOMEM;
	}
	for (p = out->text;;) {
		char *start = p;

		while (feature_char(*p))
			p++;
		if (p == start) {
			snprintf(why, size, "expected a feature name at column %zu of \"%.64s\" "
				 "(features are letters, digits, '_', '-' and '.', joined by & or |; "
				 "brackets and counts are not taken)", (size_t)(p - out->text) + 1,
				 text);
			tj_constraint_release(out);
			return CADRE_EPARSE;
		}
		if (out->n_features == TJ_MAX_CONSTRAINT_FEATURES) {
			snprintf(why, size, "names more than %d features", TJ_MAX_CONSTRAINT_FEATURES);
			tj_constraint_release(out);
			return CADRE_EPARSE;
		}
		out->feature[out->n_features++] = start;
		if (*p == '&') {
			*p++ = '\0';
			continue;
		}
		out->term_end[out->n_terms++] = out->n_features;
		if (*p == '\0')
			return 0;
		if (*p != '|') {
			snprintf(why, size, "unexpected '%c' at column %zu of \"%.64s\" (features "
				 "are joined by & or |)", *p, (size_t)(p - out->text) + 1, text);
			tj_constraint_release(out);
			return CADRE_EPARSE;
		}
		*p++ = '\0';
	}
}
