/*
 * placement.c - cadre's --node-selector and --toleration flags of the
 * submitting commands (sbatch, salloc, launch): where the job's pods may
 * run, written into spec.podTemplate.spec of the job they create. A Slurm
 * user names a partition for this; until the cluster's partitions carry
 * it, these two say it the way Kubernetes does (docs/cli.md).
 *
 * The words are checked for their form here, before any request; whether
 * a key is a valid label key is the API server's to say (the CRD's schema),
 * and its refusal names the field.
 */
#include "cli/kube.h"

#include "base/err.h"

#include <string.h>

static const char *const effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute" };

/* One comma-separated item of a flag, copied into item; false when too long. */
static bool next_item(const char **p, char *item, size_t size)
{
	size_t len = strcspn(*p, ",");

	if (len >= size)
		return false;
	memcpy(item, *p, len);
	item[len] = '\0';
	*p += len + ((*p)[len] == ',');
	return true;
}

/*
 * "KEY=VALUE" into key and value (pointers into item), or "KEY[=VALUE][:EFFECT]"
 * with effect when toleration. false when the form is wrong.
 */
static bool split_item(char *item, bool toleration, const char **key, const char **value,
		       const char **effect)
{
	char *eq, *colon = toleration ? strchr(item, ':') : NULL;

	*effect = NULL;
	if (colon) {
		bool known = false;

		*colon = '\0';
		*effect = colon + 1;
		for (size_t i = 0; i < sizeof(effects) / sizeof(effects[0]); i++)
			known = known || !strcmp(*effect, effects[i]);
		if (!known)
			return false;
	}
	eq = strchr(item, '=');
	*value = NULL;
	if (eq) {
		*eq = '\0';
		*value = eq + 1;
	}
	*key = item;
	if (!**key || (!toleration && !eq))
		return false;
	return !*value || !strpbrk(*value, "=:");
}

/* Calls each item of text through split_item; false at the first that is wrong. */
static bool check_flag(const char *text, bool toleration, const char *cmd, const char *flag,
		       FILE *err)
{
	char item[512];
	const char *key, *value, *effect;

	for (const char *p = text; *p || p == text;) {
		if (!next_item(&p, item, sizeof(item)) ||
		    !split_item(item, toleration, &key, &value, &effect)) {
			fprintf(err, "%s: --%s \"%s\": %s\n", cmd, flag, text,
				toleration ? "not KEY[=VALUE][:EFFECT][,...] (EFFECT: NoSchedule, "
					     "PreferNoSchedule or NoExecute)" :
					     "not KEY=VALUE[,KEY=VALUE...]");
			return false;
		}
		if (!*p)
			break;
	}
	return true;
}

int cli_placement_check(const struct cli_placement *p, const char *cmd, FILE *err)
{
	if (p->node_selector && !check_flag(p->node_selector, false, cmd, "node-selector", err))
		return CLI_EXIT_USAGE;
	if (p->tolerations && !check_flag(p->tolerations, true, cmd, "toleration", err))
		return CLI_EXIT_USAGE;
	return 0;
}

/* object[key] under parent, made when absent; NULL when out of memory (or parent is). */
static json_t *child(json_t *parent, const char *key)
{
	json_t *c;

	if (!parent)
		return NULL;
	c = json_object_get(parent, key);

	if (json_is_object(c))
		return c;
	if (!(c = json_object()) || json_object_set_new(parent, key, c))
		return NULL;
	return c;
}

static int put_selector(const char *text, json_t *pod_spec)
{
	json_t *sel = json_object();
	char item[512];
	const char *key, *value, *effect;

	if (!sel)
		return CADRE_ENOMEM;
	for (const char *p = text; *p;) {
		if (!next_item(&p, item, sizeof(item)) ||
		    !split_item(item, false, &key, &value, &effect) ||
		    json_object_set_new(sel, key, json_string(value))) {
			json_decref(sel);
			return CADRE_ENOMEM;
		}
	}
	return json_object_set_new(pod_spec, "nodeSelector", sel) ? CADRE_ENOMEM : 0;
}

/* One toleration, a new reference; NULL when out of memory. */
static json_t *toleration(const char *key, const char *value, const char *effect)
{
	json_t *t = json_pack("{s:s, s:s}", "key", key, "operator", value ? "Equal" : "Exists");

	if (t && ((value && json_object_set_new(t, "value", json_string(value))) ||
		  (effect && json_object_set_new(t, "effect", json_string(effect))))) {
		json_decref(t);
		return NULL;
	}
	return t;
}

static int put_tolerations(const char *text, json_t *pod_spec)
{
	json_t *list = json_array();
	char item[512];
	const char *key, *value, *effect;

	if (!list)
		return CADRE_ENOMEM;
	for (const char *p = text; *p;) {
		if (!next_item(&p, item, sizeof(item)) ||
		    !split_item(item, true, &key, &value, &effect) ||
		    json_array_append_new(list, toleration(key, value, effect))) {
			json_decref(list);
			return CADRE_ENOMEM;
		}
	}
	return json_object_set_new(pod_spec, "tolerations", list) ? CADRE_ENOMEM : 0;
}

int cli_placement_put(const struct cli_placement *p, json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec"), *pod_spec;
	int e = 0;

	if (!p || (!p->node_selector && !p->tolerations))
		return 0;
	if (!json_is_object(spec))
		return CADRE_EINVAL;
	if (!(pod_spec = child(child(spec, "podTemplate"), "spec")))
		return CADRE_ENOMEM;
	if (p->node_selector)
		e = put_selector(p->node_selector, pod_spec);
	if (!e && p->tolerations)
		e = put_tolerations(p->tolerations, pod_spec);
	return e;
}
