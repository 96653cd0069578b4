/*
 * partition_features.c - a Partition's spec.features, the node features
 * sbatch -C names (docs/design.md 3.4):
 *
 *   features:
 *     a100: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
 *     ib:   {network.example.com/fabric: infiniband}
 *
 * A feature is had by the nodes that carry every label of its entry, as
 * slurm.conf's Features= of a node says it has one. A job's constraint
 * ("a100&ib|h100") becomes a required node affinity of its pods, so that
 * kube-scheduler and built-in admission (which models required node
 * affinity) place them on nodes that have it.
 */
#include "api/decode.h"
#include "api/name.h"
#include "api/partition.h"
#include "api/trainingjob.h"
#include "base/err.h"

#include <stdio.h>
#include <string.h>

/* A feature's name: as a constraint names it (letters, digits, '_', '-', '.'), 1 to 63. */
static bool feature_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 63)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
			return false;
	return true;
}

void partition_decode_features(struct decoder *d, const json_t *spec, json_t **out)
{
	char path[DECODE_PATH_MAX], lpath[DECODE_PATH_MAX];
	const char *name, *key;
	json_t *labels, *value;

	if (!decode_object_copy(d, spec, "spec", "features", out) || !*out)
		return;
	if (json_object_size(*out) > PARTITION_FEATURES_MAX)
		decode_fail(d, "spec.features", "defines %zu features, more than %d",
			    json_object_size(*out), PARTITION_FEATURES_MAX);
	json_object_foreach(*out, name, labels) {
		decode_path_quoted(path, sizeof(path), "spec.features", name);
		if (!feature_name(name))
			decode_fail(d, path, "a feature's name is 1 to 63 letters, digits, '_', '-' "
				    "and '.'");
		if (!json_is_object(labels) || !json_object_size(labels)) {
			decode_fail(d, path, "must be the labels a node has the feature by "
				    "({key: value, ...}, at least one)");
			continue;
		}
		json_object_foreach(labels, key, value) {
			decode_path(lpath, sizeof(lpath), path, key);
			if (!name_is_qualified(key))
				decode_fail(d, lpath, "key must be a qualified name like "
					    "example.com/name");
			if (!name_is_label_value(json_string_value(value)))
				decode_fail(d, lpath, "value must be a label value");
		}
	}
}

bool partition_lacks_feature(const struct partition *p, const char *constraint, char *why,
			     size_t size)
{
	struct tj_constraint c;
	bool lacks = false;

	if (!constraint || tj_constraint_parse(constraint, &c, why, size))
		return false;  /* validation says what is wrong with the text */
	for (size_t i = 0; i < c.n_features && !lacks; i++)
		if (!json_object_get(p->spec.features, c.feature[i])) {
			snprintf(why, size, "feature %.63s of spec.constraint is not one of "
				 "partition %s's spec.features", c.feature[i],
				 p->meta.name ? p->meta.name : "");
			lacks = true;
		}
	tj_constraint_release(&c);
	return lacks;
}

/* Append to exprs a "key In [value]" requirement for every label of a feature. */
static int add_requirements(json_t *exprs, const json_t *labels)
{
	const char *key;
	json_t *value;

	json_object_foreach((json_t *)labels, key, value)
		if (json_array_append_new(exprs, json_pack("{s:s, s:s, s:[O]}", "key", key,
							   "operator", "In", "values", value)))
			return CADRE_ENOMEM;
	return 0;
}

/* term AND constraint term t, as a new term in terms. */
static int and_term(json_t *terms, const json_t *term, const struct tj_constraint *c, size_t t,
		    const json_t *features)
{
	json_t *copy = term ? json_deep_copy(term) : json_object(), *exprs;
	size_t from = t ? c->term_end[t - 1] : 0;

	if (!copy)
		return CADRE_ENOMEM;
	exprs = json_object_get(copy, "matchExpressions");
	if (!json_is_array(exprs) &&
	    (!(exprs = json_array()) || json_object_set_new(copy, "matchExpressions", exprs))) {
		json_decref(copy);
		return CADRE_ENOMEM;
	}
	for (size_t i = from; i < c->term_end[t]; i++)
		if (add_requirements(exprs, json_object_get(features, c->feature[i]))) {
			json_decref(copy);
			return CADRE_ENOMEM;
		}
	return json_array_append_new(terms, copy) ? CADRE_ENOMEM : 0;
}

/*
 * The affinity's required nodeSelectorTerms (terms are OR-ed, so the
 * constraint goes into every one: each old term AND each constraint term).
 */
static int and_into_affinity(json_t *affinity, const struct tj_constraint *c,
			     const json_t *features)
{
	json_t *node = json_object_get(affinity, "nodeAffinity"), *required, *old, *terms;
	size_t n_old;
	int err = 0;

	if (!node && json_object_set_new(affinity, "nodeAffinity", node = json_object()))
		return CADRE_ENOMEM;
	required = json_object_get(node, "requiredDuringSchedulingIgnoredDuringExecution");
	if (!required && json_object_set_new(node, "requiredDuringSchedulingIgnoredDuringExecution",
					     required = json_object()))
		return CADRE_ENOMEM;
	old = json_incref(json_object_get(required, "nodeSelectorTerms"));
	n_old = json_array_size(old);
	if (!(terms = json_array())) {
		json_decref(old);
		return CADRE_ENOMEM;
	}
	for (size_t i = 0; i < (n_old ? n_old : 1) && !err; i++)
		for (size_t t = 0; t < c->n_terms && !err; t++)
			err = and_term(terms, n_old ? json_array_get(old, i) : NULL, c, t, features);
	json_decref(old);
	if (err) {
		json_decref(terms);
		return err;
	}
	/* set_new takes terms whether it succeeds or not. */
	return json_object_set_new(required, "nodeSelectorTerms", terms) ? CADRE_ENOMEM : 0;
}

int partition_apply_constraint(const struct partition *p, struct tj_spec *spec)
{
	struct tj_constraint c;
	char why[160];
	json_t *affinity = spec->pod_template.affinity;
	int err;

	if (!spec->nodes.constraint || partition_lacks_feature(p, spec->nodes.constraint, why,
								sizeof(why)))
		return 0;  /* partition_refuses says so before admission */
	err = tj_constraint_parse(spec->nodes.constraint, &c, why, sizeof(why));
	if (err)
		return err == CADRE_ENOMEM ? err : 0;
	if (!json_is_object(affinity) && !(affinity = json_object())) {
		tj_constraint_release(&c);
		return CADRE_ENOMEM;
	}
	err = and_into_affinity(affinity, &c, p->spec.features);
	if (affinity != spec->pod_template.affinity) {
		json_decref(spec->pod_template.affinity);
		spec->pod_template.affinity = affinity;
	}
	tj_constraint_release(&c);
	return err;
}
