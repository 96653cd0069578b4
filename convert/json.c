/*
 * json.c - a converted object as JSON for the API server, built from the
 * structs directly: the same keys, in the same order and with the same
 * types as the YAML of convert_emit_yaml (emit.c quotes every string YAML
 * would read as another type, so what reads back from it is: integers for
 * the counts, strings for everything else). Nothing here goes through
 * libyaml, so no input can reach its emitter by this path.
 */
#include "convert/convert.h"

#include "base/err.h"
#include "base/utf8.h"

#include <string.h>

struct writer {
	int err;  /* the first error, else 0: later calls do nothing */
};

/* obj[key] = value, a new reference that is consumed; a NULL value is the error already set. */
static void put(struct writer *w, json_t *obj, const char *key, json_t *value)
{
	if (w->err || !value) {
		json_decref(value);
		if (!w->err)
			w->err = CADRE_ENOMEM;
		return;
	}
	if (json_object_set_new(obj, key, value))
		w->err = CADRE_ENOMEM;
}

/* A string, or NULL with w->err set: CADRE_EINVAL for text that is not UTF-8. */
static json_t *string(struct writer *w, const char *s)
{
	json_t *j;

	if (w->err)
		return NULL;
	if (!utf8_valid(s, strlen(s))) {
		w->err = CADRE_EINVAL;
		return NULL;
	}
	if (!(j = json_string(s)))
		w->err = CADRE_ENOMEM;
	return j;
}

/* key: value when value is set, as emit.c's pair() and quoted_pair(). */
static void put_str(struct writer *w, json_t *obj, const char *key, const char *value)
{
	if (value && !w->err)
		put(w, obj, key, string(w, value));
}

static void put_int(struct writer *w, json_t *obj, const char *key, long long value)
{
	if (!w->err)
		put(w, obj, key, json_integer(value));
}

/* A key of a map: utf8 like any string (json_object_set_new checks it too). */
static void put_keyed(struct writer *w, json_t *obj, const char *key, json_t *value)
{
	if (!w->err && !utf8_valid(key, strlen(key)))
		w->err = CADRE_EINVAL;
	put(w, obj, key, value);
}

static json_t *object(struct writer *w)
{
	json_t *j = w->err ? NULL : json_object();

	if (!j && !w->err)
		w->err = CADRE_ENOMEM;
	return j;
}

static json_t *header(struct writer *w, const char *kind, const char *name)
{
	json_t *obj = object(w), *meta;

	put_str(w, obj, "apiVersion", TJ_API_VERSION);
	put_str(w, obj, "kind", kind);
	meta = object(w);
	put_str(w, meta, "name", name);
	put(w, obj, "metadata", meta);
	return obj;
}

static void put_resources(struct writer *w, json_t *spec, const struct tj_resources *r)
{
	json_t *res;

	if (!r->accelerators && !r->cpus && !r->memory)
		return;
	res = object(w);
	put_str(w, res, "accelerators", r->accelerators);
	put_str(w, res, "cpus", r->cpus);
	put_str(w, res, "memory", r->memory);
	put(w, spec, "resources", res);
}

static void put_lists(struct writer *w, json_t *spec, const struct tj_spec *s)
{
	json_t *map, *list;

	if (s->n_envs) {
		map = object(w);
		for (size_t i = 0; i < s->n_envs; i++)
			put_keyed(w, map, s->envs[i].name,
				  string(w, s->envs[i].value ? s->envs[i].value : ""));
		put(w, spec, "envs", map);
	}
	if (s->n_secret_envs) {
		list = w->err ? NULL : json_array();
		for (size_t i = 0; list && !w->err && i < s->n_secret_envs; i++) {
			json_t *item = object(w), *ref = object(w);

			put_str(w, item, "name", s->secret_envs[i].name);
			put_str(w, ref, "name", s->secret_envs[i].secret_name);
			put_str(w, ref, "key", s->secret_envs[i].secret_key);
			put(w, item, "secretKeyRef", ref);
			if (!w->err && json_array_append(list, item))
				w->err = CADRE_ENOMEM;
			json_decref(item);
		}
		put(w, spec, "secretEnvs", list);
	}
	if (s->n_volumes) {
		map = object(w);
		for (size_t i = 0; i < s->n_volumes; i++)
			if (s->volumes[i].volume)
				put_keyed(w, map, s->volumes[i].mount_path,
					  string(w, s->volumes[i].volume));
		put(w, spec, "volumes", map);
	}
	if (s->n_scratch) {
		map = object(w);
		for (size_t i = 0; i < s->n_scratch; i++) {
			json_t *item = object(w);

			put_str(w, item, "size", s->scratch[i].size);
			put_str(w, item, "storageClassName", s->scratch[i].storage_class_name);
			put_keyed(w, map, s->scratch[i].mount_path, item);
		}
		put(w, spec, "scratch", map);
	}
	if (s->n_code) {
		list = w->err ? NULL : json_array();
		for (size_t i = 0; list && !w->err && i < s->n_code; i++) {
			json_t *item = object(w);

			put_str(w, item, "digest", s->code[i].digest);
			put_str(w, item, "path", s->code[i].path);
			if (!w->err && json_array_append(list, item))
				w->err = CADRE_ENOMEM;
			json_decref(item);
		}
		put(w, spec, "code", list);
	}
}

static void append(struct writer *w, json_t *list, json_t *item)
{
	if (w->err || !item) {
		json_decref(item);
		if (!w->err)
			w->err = CADRE_ENOMEM;
		return;
	}
	if (json_array_append_new(list, item))
		w->err = CADRE_ENOMEM;
}

static json_t *array(struct writer *w)
{
	json_t *j = w->err ? NULL : json_array();

	if (!j && !w->err)
		w->err = CADRE_ENOMEM;
	return j;
}

/* spec.dependency, as emit.c writes it. */
static void put_dependency(struct writer *w, json_t *spec, const struct tj_spec *s)
{
	json_t *dep, *items;

	if (!s->has_dependency)
		return;
	dep = object(w);
	items = array(w);
	if (s->dependency.any)
		put(w, dep, "any", json_true());
	for (size_t i = 0; i < s->dependency.n_items && !w->err; i++) {
		const struct slurm_dep_item *it = &s->dependency.items[i];
		json_t *item = object(w), *jobs;

		put_str(w, item, "type", slurm_dep_type_name(it->type));
		if (it->n_jobs) {
			jobs = array(w);
			for (size_t j = 0; j < it->n_jobs; j++)
				append(w, jobs, string(w, it->jobs[j]));
			put(w, item, "jobs", jobs);
		}
		append(w, items, item);
	}
	put(w, dep, "items", items);
	put(w, spec, "dependency", dep);
}

/* spec.nodeList, excludeNodes, exclusive and constraint, as emit.c writes them. */
static void put_nodes(struct writer *w, json_t *spec, const struct tj_nodes *n)
{
	if (n->n_list) {
		json_t *list = array(w);

		for (size_t i = 0; i < n->n_list; i++)
			append(w, list, json_string(n->list[i]));
		put(w, spec, "nodeList", list);
	}
	if (n->n_exclude) {
		json_t *list = array(w);

		for (size_t i = 0; i < n->n_exclude; i++)
			append(w, list, json_string(n->exclude[i]));
		put(w, spec, "excludeNodes", list);
	}
	if (n->exclusive)
		put(w, spec, "exclusive", json_true());
	put_str(w, spec, "constraint", n->constraint);
}

/* spec.topology, as emit.c writes it. */
static void put_topology(struct writer *w, json_t *spec, const struct tj_topology *t)
{
	json_t *topo;

	if (!t->set)
		return;
	topo = object(w);
	put_str(w, topo, "required", t->required);
	put_str(w, topo, "preferred", t->preferred);
	if (t->has_segment) {
		json_t *seg = object(w);

		put_int(w, seg, "size", t->segment_size);
		put_str(w, seg, "required", t->segment_required);
		put(w, topo, "segment", seg);
	}
	put(w, spec, "topology", topo);
}

/* spec.signal and spec.failurePolicy, as emit.c writes them. */
static void put_long_runs(struct writer *w, json_t *spec, const struct tj_spec *s)
{
	if (s->signal.name) {
		json_t *sig = object(w);

		put_str(w, sig, "name", s->signal.name);
		if (s->signal.has_seconds_before)
			put_int(w, sig, "secondsBefore", s->signal.seconds_before);
		put(w, spec, "signal", sig);
	}
	if (s->n_failure_rules) {
		json_t *policy = object(w), *rules = array(w);

		for (size_t i = 0; i < s->n_failure_rules && !w->err; i++) {
			const struct tj_failure_rule *r = &s->failure_rules[i];
			json_t *rule = object(w), *on = object(w), *values = array(w);

			put_str(w, rule, "action", r->action == TJ_FAILURE_FAIL ? "Fail" :
				r->action == TJ_FAILURE_RESTART_NOT_COUNTED ? "RestartNotCounted" :
				"Restart");
			put_str(w, on, "operator", r->not_in ? "NotIn" : "In");
			for (size_t j = 0; j < r->n_codes; j++)
				append(w, values, json_integer(r->codes[j]));
			put(w, on, "values", values);
			put(w, rule, "onExitCodes", on);
			append(w, rules, rule);
		}
		put(w, policy, "rules", rules);
		put(w, spec, "failurePolicy", policy);
	}
}

static json_t *job(struct writer *w, const struct trainingjob *tj)
{
	const struct tj_spec *s = &tj->spec;
	json_t *obj = header(w, TJ_KIND, tj->meta.name), *spec = object(w);

	if (s->has_num_nodes)
		put_int(w, spec, "numNodes", s->num_nodes);
	if (s->has_tasks_per_node && s->tasks_per_node != 1)
		put_int(w, spec, "tasksPerNode", s->tasks_per_node);
	put_resources(w, spec, &s->resources);
	put_str(w, spec, "image", s->image);
	put_str(w, spec, "setup", s->setup);
	put_str(w, spec, "run", s->run);
	put_str(w, spec, "workdir", s->workdir);
	put_lists(w, spec, s);
	put_str(w, spec, "queue", s->queue);
	put_str(w, spec, "partition", s->partition);
	put_str(w, spec, "array", s->array);
	put_dependency(w, spec, s);
	put_topology(w, spec, &s->topology);
	put_nodes(w, spec, &s->nodes);
	if (s->priority)
		put_int(w, spec, "priority", s->priority);
	if (s->max_restarts)
		put_int(w, spec, "maxRestarts", s->max_restarts);
	if (s->has_active_deadline_seconds)
		put_int(w, spec, "activeDeadlineSeconds", s->active_deadline_seconds);
	if (s->suspend)
		put(w, spec, "suspend", json_true());
	put_long_runs(w, spec, s);
	put_str(w, spec, "output", s->output);
	put_str(w, spec, "error", s->error);
	put(w, obj, "spec", spec);
	return obj;
}

static json_t *volume(struct writer *w, const struct volume *v)
{
	const struct vol_spec *s = &v->spec;
	json_t *obj = header(w, VOL_KIND, v->meta.name), *spec = object(w);

	put_str(w, spec, "type", vol_type_name(s->type));
	put_str(w, spec, "size", s->size);
	put_str(w, spec, "accessMode", vol_access_mode_name(s->access_mode));
	put_str(w, spec, "storageClassName", s->storage_class_name);
	put_str(w, spec, "claimName", s->claim_name);
	put(w, obj, "spec", spec);
	return obj;
}

int convert_to_json(const struct convert_result *r, json_t **out)
{
	struct writer w = { 0 };
	json_t *obj;

	*out = NULL;
	if (r->kind == CONVERT_UNKNOWN || (r->kind == CONVERT_SKY_VOLUME ? !r->vol.meta.name :
					    !r->tj.meta.name))
		return CADRE_EINVAL;
	obj = r->kind == CONVERT_SKY_VOLUME ? volume(&w, &r->vol) : job(&w, &r->tj);
	if (w.err) {
		json_decref(obj);
		return w.err;
	}
	*out = obj;
	return 0;
}
