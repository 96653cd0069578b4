/*
 * affinity.c - a job's podTemplate affinity and its Volumes' PersistentVolumes
 * as node selectors for the capacity model, and what built-in mode refuses
 * (affinity.h). The rules follow kube-scheduler's NodeAffinity,
 * InterPodAffinity, VolumeBinding and VolumeZone filter plugins.
 */
#include "controller/admission/affinity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "api/fielderr.h"
#include "api/labels.h"
#include "api/trainingjob.h"

#define AFFINITY_PATH "spec.podTemplate.spec.affinity"
#define ANTI_PATH AFFINITY_PATH ".podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"

static const char *str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

void affinity_init(struct affinity *a)
{
	memset(a, 0, sizeof(*a));
}

void affinity_release(struct affinity *a)
{
	for (size_t i = 0; i < a->n_blocks; i++)
		free(a->blocks[i]);
	for (size_t i = 0; i < a->n_held; i++)
		json_decref(a->held[i]);
	free(a->blocks);
	free(a->held);
	free(a->selectors);
	memset(a, 0, sizeof(*a));
}

/* count zeroed items of size, freed with a; NULL when out of memory. */
static void *block(struct affinity *a, size_t count, size_t size)
{
	void **more = realloc(a->blocks, (a->n_blocks + 1) * sizeof(*more));
	void *p;

	if (!more)
		return NULL;
	a->blocks = more;
	p = calloc(count ? count : 1, size);
	if (p)
		a->blocks[a->n_blocks++] = p;
	return p;
}

/* A new selector at the end of a->selectors (valid until the next one is added). */
static struct node_selector *new_selector(struct affinity *a)
{
	struct node_selector *more = realloc(a->selectors, (a->n_selectors + 1) * sizeof(*more));

	if (!more)
		return NULL;
	a->selectors = more;
	memset(&more[a->n_selectors], 0, sizeof(*more));
	return &more[a->n_selectors++];
}

/* A list of {key, operator, values} as requirements pointing into list. */
static int parse_reqs(struct affinity *a, const json_t *list, const struct node_selector_req **out,
		      size_t *n)
{
	struct node_selector_req *reqs;
	json_t *item, *value;
	size_t i, j;

	*out = NULL;
	*n = 0;
	if (!json_array_size(list))
		return 0;
	if (!(reqs = block(a, json_array_size(list), sizeof(*reqs))))
		return CADRE_ENOMEM;
	json_array_foreach(list, i, item) {
		const json_t *values = json_object_get(item, "values");
		const char **v = block(a, json_array_size(values), sizeof(*v));
		size_t nv = 0;

		if (!v)
			return CADRE_ENOMEM;
		json_array_foreach(values, j, value)
			if (json_string_value(value))
				v[nv++] = json_string_value(value);
		reqs[i] = (struct node_selector_req){ str(item, "key"),
						      node_selector_op_parse(str(item, "operator")),
						      v, nv };
	}
	*out = reqs;
	*n = json_array_size(list);
	return 0;
}

int affinity_add_node_selector(struct affinity *a, const json_t *sel, const char *volume)
{
	const json_t *terms = json_object_get(sel, "nodeSelectorTerms"), *term;
	struct node_selector_term *t = block(a, json_array_size(terms), sizeof(*t));
	struct node_selector *s;
	size_t i;
	int err;

	if (!t)
		return CADRE_ENOMEM;
	json_array_foreach(terms, i, term)
		if ((err = parse_reqs(a, json_object_get(term, "matchExpressions"), &t[i].exprs,
				      &t[i].n_exprs)) ||
		    (err = parse_reqs(a, json_object_get(term, "matchFields"), &t[i].fields,
				      &t[i].n_fields)))
			return err;
	if (!(s = new_selector(a)))
		return CADRE_ENOMEM;
	*s = (struct node_selector){ t, json_array_size(terms), volume };
	return 0;
}

/*
 * Whether the labelSelector sel holds on the labels every rank of job
 * carries (build_pod.c: the podTemplate's, with cadre.dev/job-name set).
 * Requirements on node-rank and restart-attempt are refused before this.
 */
static bool selects_ranks(const struct trainingjob *job, const json_t *sel)
{
	const json_t *labels = job->spec.pod_template.labels, *expr, *want;
	const char *key;
	size_t i;

#define LABEL(k) (!strcmp((k), LABEL_JOB_NAME) ? job->meta.name : str(labels, (k)))
	json_object_foreach((json_t *)json_object_get(sel, "matchLabels"), key, want)
		if (!LABEL(key) || !json_string_value(want) ||
		    strcmp(LABEL(key), json_string_value(want)))
			return false;
	json_array_foreach(json_object_get(sel, "matchExpressions"), i, expr) {
		const char *k = str(expr, "key"), *op = str(expr, "operator");
		const char *have = k ? LABEL(k) : NULL;
		bool in = false;
		size_t j;

		json_array_foreach(json_object_get(expr, "values"), j, want)
			in |= have && json_string_value(want) && !strcmp(have, json_string_value(want));
		if (!op || (!strcmp(op, "In") && !in) || (!strcmp(op, "NotIn") && in) ||
		    (!strcmp(op, "Exists") && !have) || (!strcmp(op, "DoesNotExist") && have))
			return false;
	}
#undef LABEL
	return true;
}

/* Whether sel names this job, as cadre.dev/job-name: <name> or In [<name>]. */
static bool names_job(const struct trainingjob *job, const json_t *sel)
{
	const json_t *expr, *values;
	size_t i;

	if (str(json_object_get(sel, "matchLabels"), LABEL_JOB_NAME))
		return !strcmp(str(json_object_get(sel, "matchLabels"), LABEL_JOB_NAME),
			       job->meta.name);
	json_array_foreach(json_object_get(sel, "matchExpressions"), i, expr) {
		values = json_object_get(expr, "values");
		if (str(expr, "key") && !strcmp(str(expr, "key"), LABEL_JOB_NAME) &&
		    str(expr, "operator") && !strcmp(str(expr, "operator"), "In") &&
		    json_array_size(values) == 1 &&
		    json_string_value(json_array_get(values, 0)) &&
		    !strcmp(json_string_value(json_array_get(values, 0)), job->meta.name))
			return true;
	}
	return false;
}

/* Whether the selector sel has a requirement on key. */
static bool selector_uses(const json_t *sel, const char *key)
{
	const json_t *expr;
	size_t i;

	if (json_object_get(json_object_get(sel, "matchLabels"), key))
		return true;
	json_array_foreach(json_object_get(sel, "matchExpressions"), i, expr)
		if (str(expr, "key") && !strcmp(str(expr, "key"), key))
			return true;
	return false;
}

/*
 * What keeps the anti-affinity term from being the own-ranks-per-host form:
 * NULL when it is that form, else the message, and *field the part of the
 * term at fault.
 */
static const char *anti_term_problem(const struct trainingjob *job, const json_t *term,
				     const char **field)
{
	const json_t *sel = json_object_get(term, "labelSelector"), *ns;
	const char *key = str(term, "topologyKey");
	size_t i;

	*field = "topologyKey";
	if (!key || strcmp(key, AFFINITY_HOSTNAME_KEY))
		return "built-in gang admission models anti-affinity between a gang's ranks per "
		       "host only (" AFFINITY_HOSTNAME_KEY "); spread over wider domains with "
		       "Kueue (spec.queue) or --gang-scheduler=native";
	*field = "namespaces";
	json_array_foreach(json_object_get(term, "namespaces"), i, ns)
		if (!json_string_value(ns) || !job->meta.namespace ||
		    strcmp(json_string_value(ns), job->meta.namespace))
			return "anti-affinity to pods of other namespaces is not modelled by "
			       "built-in gang admission";
	*field = json_object_get(term, "namespaceSelector") ? "namespaceSelector" :
		 json_object_get(term, "matchLabelKeys") ? "matchLabelKeys" :
		 json_object_get(term, "mismatchLabelKeys") ? "mismatchLabelKeys" : NULL;
	if (*field)
		return "not modelled by built-in gang admission";
	*field = "labelSelector";
	if (!json_is_object(sel))
		return NULL;  /* selects no pod: no constraint */
	if (selector_uses(sel, LABEL_NODE_RANK) || selector_uses(sel, LABEL_RESTART_ATTEMPT))
		return LABEL_NODE_RANK " and " LABEL_RESTART_ATTEMPT " differ between a gang's "
		       "pods: select its ranks by " LABEL_JOB_NAME;
	if (!names_job(job, sel))
		return "must select this job's own ranks only (matchLabels " LABEL_JOB_NAME
		       ": <the job's name>): built-in gang admission models anti-affinity "
		       "between a gang's ranks, not to other pods";
	return NULL;
}

int affinity_add_template(struct affinity *a, const struct trainingjob *job)
{
	const json_t *affinity = job->spec.pod_template.affinity, *terms, *term;
	const json_t *required = json_object_get(json_object_get(affinity, "nodeAffinity"),
						 "requiredDuringSchedulingIgnoredDuringExecution");
	const char *field;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(affinity, "podAntiAffinity"),
					   "requiredDuringSchedulingIgnoredDuringExecution"), i, term)
		if (!anti_term_problem(job, term, &field) &&
		    json_is_object(json_object_get(term, "labelSelector")) &&
		    selects_ranks(job, json_object_get(term, "labelSelector")))
			a->one_per_node = true;
	terms = json_object_get(required, "nodeSelectorTerms");
	/*
	 * build_affinity ANDs the pinned node into every term, a term of none
	 * when there is none: an empty term, or no term, lets every node.
	 */
	if (!json_array_size(terms))
		return 0;
	json_array_foreach(terms, i, term)
		if (!json_array_size(json_object_get(term, "matchExpressions")) &&
		    !json_array_size(json_object_get(term, "matchFields")))
			return 0;
	return affinity_add_node_selector(a, required, NULL);
}

size_t affinity_refuse_builtin(const struct trainingjob *job, struct field_errors *errs)
{
	const json_t *affinity = job->spec.pod_template.affinity, *term;
	const char *problem, *field;
	size_t before = field_errors_count(errs), i;

	if (json_array_size(json_object_get(json_object_get(affinity, "podAffinity"),
					    "requiredDuringSchedulingIgnoredDuringExecution")))
		field_errors_add(errs, AFFINITY_PATH ".podAffinity."
				 "requiredDuringSchedulingIgnoredDuringExecution",
				 "built-in gang admission pins every rank to a node and cannot "
				 "model affinity to pods; to keep the ranks in one zone or rack use "
				 "spec.topology.required, or let Kueue (spec.queue) or "
				 "kube-scheduler (--gang-scheduler=native) place the gang");
	json_array_foreach(json_object_get(json_object_get(affinity, "podAntiAffinity"),
					   "requiredDuringSchedulingIgnoredDuringExecution"), i, term) {
		char path[160];

		if (!(problem = anti_term_problem(job, term, &field)))
			continue;
		snprintf(path, sizeof(path), ANTI_PATH "[%zu].%s", i, field);
		field_errors_add(errs, path, "%s", problem);
	}
	return field_errors_count(errs) - before;
}

/* The zone and region labels kube-scheduler's VolumeZone compares, beta forms first. */
static const char *const zone_labels[] = {
	"failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
	"topology.kubernetes.io/zone", "topology.kubernetes.io/region",
};
#define N_ZONE_LABELS (sizeof(zone_labels) / sizeof(zone_labels[0]))

/*
 * The values of a zone label ("a__b" is a or b, blanks trimmed) into a
 * block; 0 values when one is empty (VolumeZone ignores such a label).
 */
static int zone_values(struct affinity *a, const char *text, const char ***out, size_t *n)
{
	size_t len = strlen(text);
	char *copy = block(a, len + 1, 1), *p, *sep;
	const char **v = block(a, len / 2 + 1, sizeof(*v));

	*n = 0;
	*out = v;
	if (!copy || !v)
		return CADRE_ENOMEM;
	memcpy(copy, text, len + 1);
	for (p = copy;; p = sep + 2) {
		char *end;

		sep = strstr(p, "__");
		if (sep)
			*sep = '\0';
		p += strspn(p, " \t\n\r\f\v");
		end = p + strlen(p);
		while (end > p && strchr(" \t\n\r\f\v", end[-1]))
			*--end = '\0';
		if (!*p) {
			*n = 0;
			return 0;
		}
		v[(*n)++] = p;
		if (!sep)
			return 0;
	}
}

/*
 * VolumeZone's check for one label of the PV, as three OR-ed terms: the
 * node's label is one of the values; or, for a beta key, the node lacks it
 * and its topology.kubernetes.io form is one of them; or the node has none
 * of the zone labels at all.
 */
static int add_zone(struct affinity *a, size_t k, const char *value, const char *volume)
{
	struct node_selector_term *t = block(a, 3, sizeof(*t));
	struct node_selector_req *r = block(a, 3 + N_ZONE_LABELS, sizeof(*r));
	struct node_selector *s;
	const char **values;
	size_t n_values, n = 0;
	int err = t && r ? zone_values(a, value, &values, &n_values) : CADRE_ENOMEM;

	if (err || !n_values)
		return err;
	r[0] = (struct node_selector_req){ zone_labels[k], NODE_SELECTOR_IN, values, n_values };
	t[n++] = (struct node_selector_term){ .exprs = &r[0], .n_exprs = 1 };
	if (k < 2) {
		r[1] = (struct node_selector_req){ .key = zone_labels[k],
						   .op = NODE_SELECTOR_DOES_NOT_EXIST };
		r[2] = (struct node_selector_req){ zone_labels[k + 2], NODE_SELECTOR_IN, values,
						   n_values };
		t[n++] = (struct node_selector_term){ .exprs = &r[1], .n_exprs = 2 };
	}
	for (size_t i = 0; i < N_ZONE_LABELS; i++)
		r[3 + i] = (struct node_selector_req){ .key = zone_labels[i],
						       .op = NODE_SELECTOR_DOES_NOT_EXIST };
	t[n++] = (struct node_selector_term){ .exprs = &r[3], .n_exprs = N_ZONE_LABELS };
	if (!(s = new_selector(a)))
		return CADRE_ENOMEM;
	*s = (struct node_selector){ t, n, volume };
	return 0;
}

int affinity_add_pv(struct affinity *a, json_t *pv, const char *volume)
{
	const json_t *labels = json_object_get(json_object_get(pv, "metadata"), "labels");
	const json_t *required = json_object_get(json_object_get(json_object_get(pv, "spec"),
								 "nodeAffinity"), "required");
	json_t **more = realloc(a->held, (a->n_held + 1) * sizeof(*more));
	int err = 0;

	if (!more)
		return CADRE_ENOMEM;
	a->held = more;
	a->held[a->n_held++] = json_incref(pv);
	if (json_is_object(required))
		err = affinity_add_node_selector(a, required, volume);
	for (size_t k = 0; !err && k < N_ZONE_LABELS; k++)
		if (str(labels, zone_labels[k]))
			err = add_zone(a, k, str(labels, zone_labels[k]), volume);
	return err;
}
