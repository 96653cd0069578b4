/*
 * emit.c - a converted TrainingJob or Volume as YAML (libyaml's emitter),
 * keys in the order docs/design.md writes them, only the fields the input set.
 *
 * Strings that YAML would read as something else (numbers, booleans, null,
 * "H100:8" with its colon) are double-quoted; scripts are literal blocks;
 * integers are plain. So the text reads back to exactly these values.
 */
#include "convert/convert.h"

#include "base/buf.h"
#include "base/err.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

struct emitter {
	yaml_emitter_t e;
	struct buf *out;
	int err;  /* the first buf_add error, else 0 */
};

static int write_handler(void *data, unsigned char *bytes, size_t size)
{
	struct emitter *em = data;

	if (!em->err)
		em->err = buf_add(em->out, bytes, size);
	return !em->err;
}

static bool emit(struct emitter *em, yaml_event_t *ev)
{
	return yaml_emitter_emit(&em->e, ev) != 0;
}

/* Whether s reads back as the same string when written plain. */
static bool plain_is_safe(const char *s)
{
	static const char *const words[] = { "true", "false", "yes", "no", "on", "off", "null",
					     "y", "n", NULL };

	if (!*s || strspn(s, "0123456789.+-eE") == strlen(s) || !strncmp(s, "0x", 2) ||
	    !strncmp(s, "0o", 2))
		return false;
	for (size_t i = 0; words[i]; i++)
		if (!strcasecmp(s, words[i]))
			return false;
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '/'))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-") ==
	       strlen(s);
}

static bool scalar(struct emitter *em, const char *s, yaml_scalar_style_t style)
{
	yaml_event_t ev;

	if (style == YAML_ANY_SCALAR_STYLE)
		style = strchr(s, '\n') ? YAML_LITERAL_SCALAR_STYLE :
			plain_is_safe(s) ? YAML_PLAIN_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	/*
	 * libyaml refuses a value that is not UTF-8 here and leaves ev as it
	 * was: emitting it then would hand the emitter stack garbage.
	 */
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s),
					  style == YAML_PLAIN_SCALAR_STYLE,
					  style != YAML_PLAIN_SCALAR_STYLE, style))
		return false;
	return emit(em, &ev);
}

static bool str(struct emitter *em, const char *s)
{
	return scalar(em, s, YAML_ANY_SCALAR_STYLE);
}

static bool pair(struct emitter *em, const char *key, const char *value)
{
	return !value || (str(em, key) && str(em, value));
}

/* Quantities and accelerators: always quoted, as docs/design.md writes them. */
static bool quoted_pair(struct emitter *em, const char *key, const char *value)
{
	return !value || (str(em, key) && scalar(em, value, YAML_DOUBLE_QUOTED_SCALAR_STYLE));
}

static bool int_pair(struct emitter *em, const char *key, long long value)
{
	char text[32];

	snprintf(text, sizeof(text), "%lld", value);
	return str(em, key) && scalar(em, text, YAML_PLAIN_SCALAR_STYLE);
}

static bool map_start(struct emitter *em)
{
	yaml_event_t ev;

	return yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) &&
	       emit(em, &ev);
}

static bool map_end(struct emitter *em)
{
	yaml_event_t ev;

	return yaml_mapping_end_event_initialize(&ev) && emit(em, &ev);
}

static bool seq(struct emitter *em, bool start)
{
	yaml_event_t ev;

	if (start)
		return yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							    YAML_BLOCK_SEQUENCE_STYLE) && emit(em, &ev);
	return yaml_sequence_end_event_initialize(&ev) && emit(em, &ev);
}

static bool header(struct emitter *em, const char *kind, const char *name)
{
	return pair(em, "apiVersion", TJ_API_VERSION) && pair(em, "kind", kind) &&
	       str(em, "metadata") && map_start(em) && pair(em, "name", name) && map_end(em);
}

static bool emit_resources(struct emitter *em, const struct tj_resources *r)
{
	if (!r->accelerators && !r->cpus && !r->memory)
		return true;
	return str(em, "resources") && map_start(em) &&
	       quoted_pair(em, "accelerators", r->accelerators) && quoted_pair(em, "cpus", r->cpus) &&
	       quoted_pair(em, "memory", r->memory) && map_end(em);
}

static bool emit_lists(struct emitter *em, const struct tj_spec *s)
{
	bool ok = true;

	if (s->n_envs) {
		ok = ok && str(em, "envs") && map_start(em);
		for (size_t i = 0; ok && i < s->n_envs; i++) {
			const char *value = s->envs[i].value ? s->envs[i].value : "";

			ok = str(em, s->envs[i].name) &&
			     scalar(em, value, plain_is_safe(value) ? YAML_PLAIN_SCALAR_STYLE :
				    YAML_DOUBLE_QUOTED_SCALAR_STYLE);
		}
		ok = ok && map_end(em);
	}
	if (s->n_secret_envs) {
		ok = ok && str(em, "secretEnvs") && seq(em, true);
		for (size_t i = 0; ok && i < s->n_secret_envs; i++)
			ok = map_start(em) && pair(em, "name", s->secret_envs[i].name) &&
			     str(em, "secretKeyRef") && map_start(em) &&
			     pair(em, "name", s->secret_envs[i].secret_name) &&
			     pair(em, "key", s->secret_envs[i].secret_key) && map_end(em) &&
			     map_end(em);
		ok = ok && seq(em, false);
	}
	if (s->n_volumes) {
		ok = ok && str(em, "volumes") && map_start(em);
		for (size_t i = 0; ok && i < s->n_volumes; i++)
			ok = pair(em, s->volumes[i].mount_path, s->volumes[i].volume);
		ok = ok && map_end(em);
	}
	if (s->n_scratch) {
		ok = ok && str(em, "scratch") && map_start(em);
		for (size_t i = 0; ok && i < s->n_scratch; i++)
			ok = str(em, s->scratch[i].mount_path) && map_start(em) &&
			     quoted_pair(em, "size", s->scratch[i].size) &&
			     pair(em, "storageClassName", s->scratch[i].storage_class_name) &&
			     map_end(em);
		ok = ok && map_end(em);
	}
	if (s->n_code) {
		ok = ok && str(em, "code") && seq(em, true);
		for (size_t i = 0; ok && i < s->n_code; i++)
			ok = map_start(em) && pair(em, "digest", s->code[i].digest) &&
			     pair(em, "path", s->code[i].path) && map_end(em);
		ok = ok && seq(em, false);
	}
	return ok;
}

static bool bool_pair(struct emitter *em, const char *key, bool value)
{
	return str(em, key) && scalar(em, value ? "true" : "false", YAML_PLAIN_SCALAR_STYLE);
}

/* spec.dependency, spec.signal and spec.failurePolicy: the nested fields of sbatch and SkyPilot. */
static bool emit_nested(struct emitter *em, const struct tj_spec *s)
{
	bool ok = true;

	if (s->has_dependency) {
		ok = str(em, "dependency") && map_start(em) &&
		     (!s->dependency.any || bool_pair(em, "any", true)) && str(em, "items") &&
		     seq(em, true);
		for (size_t i = 0; ok && i < s->dependency.n_items; i++) {
			const struct slurm_dep_item *it = &s->dependency.items[i];

			ok = map_start(em) && pair(em, "type", slurm_dep_type_name(it->type));
			if (ok && it->n_jobs) {
				ok = str(em, "jobs") && seq(em, true);
				for (size_t j = 0; ok && j < it->n_jobs; j++)
					ok = str(em, it->jobs[j]);
				ok = ok && seq(em, false);
			}
			ok = ok && map_end(em);
		}
		ok = ok && seq(em, false) && map_end(em);
	}
	return ok;
}

static bool emit_names(struct emitter *em, const char *key, char *const *names, size_t n)
{
	bool ok = !n || (str(em, key) && seq(em, true));

	/* Quoted: a node may be named "123" or "yes", which YAML would read otherwise. */
	for (size_t i = 0; ok && i < n; i++)
		ok = scalar(em, names[i], YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	return ok && (!n || seq(em, false));
}

/* spec.nodeList, excludeNodes, exclusive and constraint: -w, -x, --exclusive and -C. */
static bool emit_nodes(struct emitter *em, const struct tj_nodes *n)
{
	return emit_names(em, "nodeList", n->list, n->n_list) &&
	       emit_names(em, "excludeNodes", n->exclude, n->n_exclude) &&
	       (!n->exclusive || bool_pair(em, "exclusive", true)) &&
	       quoted_pair(em, "constraint", n->constraint);
}

/* spec.topology: --switches and --segment. */
static bool emit_topology(struct emitter *em, const struct tj_topology *t)
{
	if (!t->set)
		return true;
	return str(em, "topology") && map_start(em) && pair(em, "required", t->required) &&
	       pair(em, "preferred", t->preferred) &&
	       (!t->has_segment || (str(em, "segment") && map_start(em) &&
				    int_pair(em, "size", t->segment_size) &&
				    pair(em, "required", t->segment_required) && map_end(em))) &&
	       map_end(em);
}

static bool emit_long_runs(struct emitter *em, const struct tj_spec *s)
{
	bool ok = true;

	if (s->signal.name)
		ok = str(em, "signal") && map_start(em) && pair(em, "name", s->signal.name) &&
		     (!s->signal.has_seconds_before ||
		      int_pair(em, "secondsBefore", s->signal.seconds_before)) && map_end(em);
	if (ok && s->n_failure_rules) {
		ok = str(em, "failurePolicy") && map_start(em) && str(em, "rules") && seq(em, true);
		for (size_t i = 0; ok && i < s->n_failure_rules; i++) {
			const struct tj_failure_rule *r = &s->failure_rules[i];
			const char *action = r->action == TJ_FAILURE_FAIL ? "Fail" :
					     r->action == TJ_FAILURE_RESTART_NOT_COUNTED ?
					     "RestartNotCounted" : "Restart";

			ok = map_start(em) && pair(em, "action", action) && str(em, "onExitCodes") &&
			     map_start(em) && pair(em, "operator", r->not_in ? "NotIn" : "In") &&
			     str(em, "values") && seq(em, true);
			for (size_t j = 0; ok && j < r->n_codes; j++) {
				char code[16];

				snprintf(code, sizeof(code), "%d", r->codes[j]);
				ok = scalar(em, code, YAML_PLAIN_SCALAR_STYLE);
			}
			ok = ok && seq(em, false) && map_end(em) && map_end(em);
		}
		ok = ok && seq(em, false) && map_end(em);
	}
	return ok;
}

static bool emit_job(struct emitter *em, const struct trainingjob *tj)
{
	const struct tj_spec *s = &tj->spec;

	return header(em, TJ_KIND, tj->meta.name) && str(em, "spec") && map_start(em) &&
	       (!s->has_num_nodes || int_pair(em, "numNodes", s->num_nodes)) &&
	       (!s->has_tasks_per_node || s->tasks_per_node == 1 ||
		int_pair(em, "tasksPerNode", s->tasks_per_node)) &&
	       emit_resources(em, &s->resources) && quoted_pair(em, "image", s->image) &&
	       pair(em, "setup", s->setup) && pair(em, "run", s->run) &&
	       pair(em, "workdir", s->workdir) && emit_lists(em, s) &&
	       pair(em, "queue", s->queue) && pair(em, "partition", s->partition) &&
	       pair(em, "array", s->array) && emit_nested(em, s) &&
	       emit_topology(em, &s->topology) && emit_nodes(em, &s->nodes) &&
	       (!s->priority || int_pair(em, "priority", s->priority)) &&
	       (!s->max_restarts || int_pair(em, "maxRestarts", s->max_restarts)) &&
	       (!s->has_active_deadline_seconds ||
		int_pair(em, "activeDeadlineSeconds", s->active_deadline_seconds)) &&
	       (!s->suspend || bool_pair(em, "suspend", true)) && emit_long_runs(em, s) &&
	       pair(em, "output", s->output) && pair(em, "error", s->error) &&
	       map_end(em);
}

static bool emit_volume(struct emitter *em, const struct volume *v)
{
	const struct vol_spec *s = &v->spec;

	return header(em, VOL_KIND, v->meta.name) && str(em, "spec") && map_start(em) &&
	       pair(em, "type", vol_type_name(s->type)) && quoted_pair(em, "size", s->size) &&
	       pair(em, "accessMode", vol_access_mode_name(s->access_mode)) &&
	       pair(em, "storageClassName", s->storage_class_name) &&
	       pair(em, "claimName", s->claim_name) && map_end(em);
}

static bool document(struct emitter *em, const struct convert_result *r, bool start)
{
	yaml_event_t ev;

	if (!start) {
		return yaml_document_end_event_initialize(&ev, 1) && emit(em, &ev) &&
		       yaml_stream_end_event_initialize(&ev) && emit(em, &ev);
	}
	if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) || !emit(em, &ev) ||
	    !yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1))
		return false;
	return emit(em, &ev) && map_start(em) &&
	       (r->kind == CONVERT_SKY_VOLUME ? emit_volume(em, &r->vol) : emit_job(em, &r->tj)) &&
	       map_end(em);
}

int convert_emit_yaml(const struct convert_result *r, struct buf *out)
{
	struct emitter em = { .out = out };
	bool ok;

	if (r->kind == CONVERT_UNKNOWN || (r->kind == CONVERT_SKY_VOLUME ? !r->vol.meta.name :
					    !r->tj.meta.name))
		return CADRE_EINVAL;
	if (!yaml_emitter_initialize(&em.e))
		return CADRE_ENOMEM;
	yaml_emitter_set_output(&em.e, write_handler, &em);
	yaml_emitter_set_unicode(&em.e, 1);
	yaml_emitter_set_width(&em.e, 100);
	ok = document(&em, r, true) && document(&em, r, false) && yaml_emitter_flush(&em.e);
	yaml_emitter_delete(&em.e);
	if (em.err)
		return em.err;
	/* Only bytes that are not UTF-8 make libyaml refuse a scalar. */
	return ok ? 0 : CADRE_EINVAL;
}
