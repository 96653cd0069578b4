/*
 * skypilot.c - a SkyPilot task (sky/utils/schemas.py: name, num_nodes,
 * resources, envs, secrets, setup, run, workdir, volumes, file_mounts)
 * into a TrainingJob. Fields that map are set; every other field is a
 * note with its line; a value SkyPilot would refuse is an error.
 */
#include "convert/convert.h"
#include "convert/yamldoc.h"

#include "api/accel.h"
#include "api/name.h"
#include "api/quantity.h"
#include "base/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct task {
	const struct convert_input *in;
	struct convert_result *r;
	yaml_document_t *doc;
	bool has_image;
};

static yaml_node_t *node_of(struct task *t, int index)
{
	return yaml_document_get_node(t->doc, index);
}

static int fail_at(struct task *t, const yaml_node_t *n, const char *field, const char *why)
{
	return convert_fail(t->r, ydoc_line(n), ydoc_column(n), field, "%s", why);
}

static int note_at(struct task *t, const yaml_node_t *n, const char *field, const char *why)
{
	return convert_note(&t->r->notes, ydoc_line(n), field, "%s", why);
}

/* A field that must be text (a string, number or bool). */
static int want_text(struct task *t, const yaml_node_t *n, const char *field, const char **text)
{
	if (ydoc_text(n, text))
		return 0;
	return fail_at(t, n, field, "must be a string");
}

static int set_string(char **field, const char *value)
{
	char *copy = strdup(value);

	if (!copy)
		return CADRE_ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

/* ---- resources ---- */

static int res_accelerators(struct task *t, yaml_node_t *n)
{
	struct tj_resources *res = &t->r->tj.spec.resources;
	char text[128];
	const char *s;
	int err;

	if (n->type == YAML_SEQUENCE_NODE && n->data.sequence.items.start <
	    n->data.sequence.items.top) {
		if ((err = note_at(t, n, "resources.accelerators", "a list of choices: cadre asks for "
				   "the first")))
			return err;
		n = node_of(t, *n->data.sequence.items.start);
	}
	if (n->type == YAML_MAPPING_NODE && n->data.mapping.pairs.top - n->data.mapping.pairs.start == 1) {
		const yaml_node_pair_t *p = n->data.mapping.pairs.start;
		const char *count;

		if (!ydoc_text(node_of(t, p->value), &count))
			return fail_at(t, n, "resources.accelerators", "must be TYPE[:COUNT] or "
				       "{TYPE: COUNT}, e.g. H100:8");
		snprintf(text, sizeof(text), "%s:%s", ydoc_key(t->doc, p), count);
	} else if (ydoc_text(n, &s)) {
		snprintf(text, sizeof(text), "%s", s);
	} else {
		return fail_at(t, n, "resources.accelerators", "must be TYPE[:COUNT], e.g. H100:8");
	}
	if (accel_parse(text, &res->accel))
		return convert_fail(t->r, ydoc_line(n), ydoc_column(n), "resources.accelerators",
				    "\"%s\" is not TYPE[:COUNT] with a whole count >= 1", text);
	res->has_accel = true;
	return set_string(&res->accelerators, text);
}

/*
 * cpus and memory: "32", "32+" (at least; cadre asks for exactly that), or
 * a quantity. SkyPilot counts memory in GiB when no unit is given.
 */
static int res_quantity(struct task *t, yaml_node_t *n, const char *field, bool memory,
			char **out, bool *has, int64_t *milli)
{
	char text[64];
	const char *s;
	size_t len;
	int err;

	if ((err = want_text(t, n, field, &s)))
		return err;
	len = strlen(s);
	snprintf(text, sizeof(text), "%.*s", (int)(len && s[len - 1] == '+' ? len - 1 : len), s);
	if (memory && *text && strspn(text, "0123456789.") == strlen(text)) {
		size_t n_len = strlen(text);

		snprintf(text + n_len, sizeof(text) - n_len, "Gi");
	}
	/* quantity_parse takes a '+' as Kubernetes' parser does; the CRD's pattern does not. */
	if (*text == '+' || quantity_parse(text, milli) || *milli <= 0)
		return convert_fail(t->r, ydoc_line(n), ydoc_column(n), field,
				    "\"%s\" is not a positive quantity written without a sign", s);
	*has = true;
	if ((err = set_string(out, text)))
		return err;
	if (len && s[len - 1] == '+')
		return convert_note(&t->r->notes, ydoc_line(n), field, "\"%s\" means at least: "
				    "cadre asks for exactly %s", s, text);
	return 0;
}

static int res_image(struct task *t, yaml_node_t *n)
{
	const char *s;

	if (!ydoc_text(n, &s))
		return fail_at(t, n, "resources.image_id", "one image for every region: a string "
			       "such as docker:nvcr.io/nvidia/pytorch:24.05-py3");
	if (!strncmp(s, "docker:", 7))
		s += 7;
	if (!*s)
		return fail_at(t, n, "resources.image_id", "an image is required");
	t->has_image = true;
	return set_string(&t->r->tj.spec.image, s);
}

/* infra/cloud: Kubernetes is where cadre runs; anything else is a note. */
static int res_infra(struct task *t, yaml_node_t *n, const char *field)
{
	const char *s;

	if (ydoc_text(n, &s) && (!strncmp(s, "kubernetes", 10) || !strncmp(s, "k8s", 3)))
		return 0;
	return note_at(t, n, field, "cadre runs on the cluster of the kubeconfig's context");
}

/* One exit code of recover_on_exit_codes: 1 to 255 (0 is success, never recovered). */
static int recover_code(struct task *t, yaml_node_t *v, int32_t *codes, size_t *n)
{
	const char *s;
	char *end;
	long code;

	if (!ydoc_text(v, &s) || !*s || (code = strtol(s, &end, 10)) < 0 || code > 255 || *end)
		return fail_at(t, v, "resources.job_recovery.recover_on_exit_codes",
			       "must be an exit code from 0 to 255, or a list of them");
	if (code == 0)
		return note_at(t, v, "resources.job_recovery.recover_on_exit_codes",
			       "0 is success: nothing to recover");
	if (code == 137 && note_at(t, v, "resources.job_recovery.recover_on_exit_codes",
				   "137 is what an OOM kill or a SIGKILL gives: SkyPilot reserves it, "
				   "cadre recovers it as asked"))
		return CADRE_ENOMEM;
	for (size_t i = 0; i < *n; i++)
		if (codes[i] == code)
			return 0;
	codes[(*n)++] = (int32_t)code;
	return 0;
}

/*
 * recover_on_exit_codes: a failurePolicy rule RestartNotCounted for those
 * codes (restarts that do not count against max_restarts_on_errors, as in
 * SkyPilot; capped, as every infrastructure restart, by maxInfraRestarts).
 */
static int res_recover_codes(struct task *t, yaml_node_t *v)
{
	struct tj_spec *spec = &t->r->tj.spec;
	struct tj_failure_rule *rules, *rule;
	int32_t codes[256];
	size_t n = 0;
	int err = 0;

	if (v->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *i = v->data.sequence.items.start;
		     i < v->data.sequence.items.top && !err && n < 255; i++)
			err = recover_code(t, node_of(t, *i), codes, &n);
	} else {
		err = recover_code(t, v, codes, &n);
	}
	if (err || !n)
		return err;
	if (!(rules = realloc(spec->failure_rules, (spec->n_failure_rules + 1) * sizeof(*rules))))
		return CADRE_ENOMEM;
	spec->failure_rules = rules;
	rule = &rules[spec->n_failure_rules];
	memset(rule, 0, sizeof(*rule));
	if (!(rule->codes = calloc(n, sizeof(*rule->codes))))
		return CADRE_ENOMEM;
	memcpy(rule->codes, codes, n * sizeof(*codes));
	rule->n_codes = n;
	rule->action = TJ_FAILURE_RESTART_NOT_COUNTED;
	spec->n_failure_rules++;
	return 0;
}

static int res_job_recovery(struct task *t, yaml_node_t *n)
{
	yaml_node_pair_t *p;
	int err;

	if (n->type != YAML_MAPPING_NODE)
		return note_at(t, n, "resources.job_recovery", "cadre requeues a gang after "
			       "preemption or node loss whatever the strategy");
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *key = ydoc_key(t->doc, p), *s;
		yaml_node_t *v = node_of(t, p->value);
		char *end;
		long max;

		if (!strcmp(key, "recover_on_exit_codes")) {
			if ((err = res_recover_codes(t, v)))
				return err;
			continue;
		}
		if (strcmp(key, "max_restarts_on_errors")) {
			if ((err = note_at(t, v, "resources.job_recovery", "cadre requeues a gang "
					   "after preemption or node loss whatever the strategy")))
				return err;
			continue;
		}
		if (!ydoc_text(v, &s) || (max = strtol(s, &end, 10)) < 0 || *end || !*s ||
		    max > 1000000)
			return fail_at(t, v, "resources.job_recovery.max_restarts_on_errors",
				       "must be a whole number >= 0");
		t->r->tj.spec.max_restarts = (int32_t)max;
	}
	return 0;
}

static int parse_resources(struct task *t, yaml_node_t *n)
{
	struct tj_resources *res = &t->r->tj.spec.resources;
	yaml_node_pair_t *p;
	int err = 0;

	if (ydoc_is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(t, n, "resources", "must be a mapping (accelerators, cpus, memory, ...)");
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top && !err; p++) {
		const char *key = ydoc_key(t->doc, p);
		yaml_node_t *v = node_of(t, p->value);
		char field[96];

		snprintf(field, sizeof(field), "resources.%.80s", key);
		if (ydoc_is_null(v))
			continue;
		if (!strcmp(key, "accelerators"))
			err = res_accelerators(t, v);
		else if (!strcmp(key, "cpus"))
			err = res_quantity(t, v, field, false, &res->cpus, &res->has_cpus,
					   &res->cpus_milli);
		else if (!strcmp(key, "memory"))
			err = res_quantity(t, v, field, true, &res->memory, &res->has_memory,
					   &res->memory_milli);
		else if (!strcmp(key, "image_id"))
			err = res_image(t, v);
		else if (!strcmp(key, "infra") || !strcmp(key, "cloud"))
			err = res_infra(t, v, field);
		else if (!strcmp(key, "job_recovery"))
			err = res_job_recovery(t, v);
		else
			err = note_at(t, v, field, "has no counterpart in a TrainingJob (cadre "
				      "places pods on the cluster's nodes)");
	}
	return err;
}

/* ---- envs, secrets, volumes ---- */

/* The longest secretEnvs name and key the CRD takes. */
#define SECRET_KEY_MAX 253

/* A variable name that may go into spec.envs or spec.secretEnvs. */
static int check_env_name(struct task *t, yaml_node_t *key_node, const char *field,
			  const char *name, bool *skip)
{
	*skip = false;
	if (!name_is_c_identifier(name))
		return convert_fail(t->r, ydoc_line(key_node), ydoc_column(key_node), field,
				    "\"%.64s\" is not a variable name", name);
	if (tj_env_reserved(name)) {
		*skip = true;
		return convert_note(&t->r->notes, ydoc_line(key_node), field, "%s is set by cadre "
				    "on every pod; the value given is not used", name);
	}
	return 0;
}

static int parse_envs(struct task *t, yaml_node_t *n)
{
	struct tj_spec *spec = &t->r->tj.spec;
	yaml_node_pair_t *p;
	size_t count;
	int err;

	if (ydoc_is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(t, n, "envs", "must be a mapping of NAME: value");
	count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (!(spec->envs = calloc(count ? count : 1, sizeof(*spec->envs))))
		return CADRE_ENOMEM;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *name = ydoc_key(t->doc, p), *value;
		yaml_node_t *v = node_of(t, p->value);
		struct tj_env *env;
		bool skip;

		if ((err = check_env_name(t, node_of(t, p->key), "envs", name, &skip)))
			return err;
		if (skip)
			continue;
		if (ydoc_is_null(v)) {
			if ((err = convert_note(&t->r->notes, ydoc_line(v), "envs", "%s has no value: "
						"SkyPilot asks for it with --env; give it here", name)))
				return err;
			continue;
		}
		if ((err = want_text(t, v, "envs", &value)))
			return err;
		env = &spec->envs[spec->n_envs++];
		env->name = strdup(name);
		env->value = strdup(value);
		if (!env->name || !env->value)
			return CADRE_ENOMEM;
	}
	return 0;
}

/*
 * secrets: values never go into the TrainingJob (docs/design.md 6). Each becomes
 * a secretEnvs entry reading key NAME of the Secret "<job>-secrets", and one
 * note says how to create it.
 */
static int parse_secrets(struct task *t, yaml_node_t *key_node, yaml_node_t *n)
{
	struct tj_spec *spec = &t->r->tj.spec;
	char secret[128];
	yaml_node_pair_t *p;
	size_t count;
	int err;

	if (ydoc_is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(t, n, "secrets", "must be a mapping of NAME: value");
	count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	snprintf(secret, sizeof(secret), "%s-secrets", t->r->tj.meta.name);
	if (!(spec->secret_envs = calloc(count ? count : 1, sizeof(*spec->secret_envs))))
		return CADRE_ENOMEM;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *name = ydoc_key(t->doc, p);
		struct tj_secret_env *e = &spec->secret_envs[spec->n_secret_envs];
		bool skip;

		if ((err = check_env_name(t, node_of(t, p->key), "secrets", name, &skip)))
			return err;
		if (skip)
			continue;
		/* The name is also the Secret's key, which the CRD (as a Secret) bounds. */
		if (strlen(name) > SECRET_KEY_MAX)
			return convert_fail(t->r, ydoc_line(node_of(t, p->key)),
					    ydoc_column(node_of(t, p->key)), "secrets",
					    "\"%.32s...\" is longer than %d characters", name,
					    SECRET_KEY_MAX);
		spec->n_secret_envs++;
		e->name = strdup(name);
		e->secret_name = strdup(secret);
		e->secret_key = strdup(name);
		if (!e->name || !e->secret_name || !e->secret_key)
			return CADRE_ENOMEM;
	}
	return convert_note(&t->r->notes, ydoc_line(key_node), "secrets", "values are never written "
			    "into a TrainingJob: create the Secret first, e.g. kubectl create secret "
			    "generic %s --from-literal=NAME=value for each name", secret);
}

/* config of an ephemeral volume: storage_class_name kept, access_mode noted. */
static int parse_ephemeral_config(struct task *t, yaml_node_t *n, struct tj_scratch *sc)
{
	const char *s;
	int err;

	if (ydoc_is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(t, n, "volumes", "config must be a mapping (storage_class_name, "
			       "access_mode)");
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *key = ydoc_key(t->doc, p);
		yaml_node_t *v = node_of(t, p->value);

		if (!strcmp(key, "storage_class_name")) {
			if (!ydoc_text(v, &s) || !name_is_dns1123_subdomain(s))
				return fail_at(t, v, "volumes", "storage_class_name must be the name of "
					       "a StorageClass (lower-case letters, digits, '-' and '.')");
			if ((err = set_string(&sc->storage_class_name, s)))
				return err;
		} else if (!strcmp(key, "access_mode")) {
			err = note_at(t, v, "volumes", "access_mode is not needed: every node gets "
				      "scratch of its own (ReadWriteOnce), not one claim shared by the "
				      "cluster; keep what all nodes must share on a Volume");
		} else {
			err = convert_note(&t->r->notes, ydoc_line(v), "volumes", "config.%.64s has "
					   "no counterpart in spec.scratch", key);
		}
		if (err)
			return err;
	}
	return 0;
}

/*
 * An ephemeral volume ({size, labels, config: {storage_class_name,
 * access_mode}}, created and deleted with the cluster) becomes spec.scratch:
 * node-local space created and deleted with each pod. One difference is
 * noted: SkyPilot's is one claim the nodes share, cadre's one per node.
 */
static int parse_ephemeral(struct task *t, const char *path, yaml_node_t *path_node,
			   yaml_node_t *n)
{
	struct tj_spec *spec = &t->r->tj.spec;
	struct tj_scratch *more, *sc;
	bool has_size = false;
	int err;

	if (!(more = realloc(spec->scratch, (spec->n_scratch + 1) * sizeof(*more))))
		return CADRE_ENOMEM;
	spec->scratch = more;
	sc = &spec->scratch[spec->n_scratch++];
	memset(sc, 0, sizeof(*sc));
	if (!(sc->mount_path = strdup(path)))
		return CADRE_ENOMEM;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *key = ydoc_key(t->doc, p), *size;
		yaml_node_t *v = node_of(t, p->value);

		if (!strcmp(key, "size")) {
			if (!ydoc_text(v, &size) || quantity_parse(size, &sc->size_milli) ||
			    sc->size_milli < 1000)
				return fail_at(t, v, "volumes", "size must be a quantity like 100Gi");
			if ((err = set_string(&sc->size, size)))
				return err;
			sc->has_size = has_size = true;
		} else if (!strcmp(key, "config")) {
			if ((err = parse_ephemeral_config(t, v, sc)))
				return err;
		} else if ((err = convert_note(&t->r->notes, ydoc_line(node_of(t, p->key)), "volumes",
					       "%.64s of an ephemeral volume has no counterpart "
					       "in spec.scratch",
					       key))) {
			return err;
		}
	}
	if (!has_size)
		return fail_at(t, n, "volumes", "an ephemeral volume needs a size, e.g. size: 100Gi");
	return note_at(t, path_node, "volumes", sc->storage_class_name ?
		       "an ephemeral volume becomes spec.scratch: each node gets a claim of its own "
		       "of that class and size, deleted with its pod; the nodes do not share it" :
		       "an ephemeral volume becomes spec.scratch: each node gets an emptyDir of that "
		       "size on its own disk, deleted with its pod; the nodes do not share it");
}

static int parse_volumes(struct task *t, yaml_node_t *n)
{
	struct tj_spec *spec = &t->r->tj.spec;
	yaml_node_pair_t *p;
	size_t count;
	int err;

	if (ydoc_is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(t, n, "volumes", "must be a mapping of /mount/path: volume-name");
	count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (!(spec->volumes = calloc(count ? count : 1, sizeof(*spec->volumes))))
		return CADRE_ENOMEM;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *path = ydoc_key(t->doc, p), *volume;
		yaml_node_t *v = node_of(t, p->value);
		struct tj_volume_mount *m = &spec->volumes[spec->n_volumes];

		if (!name_is_mount_path(path))
			return fail_at(t, node_of(t, p->key), "volumes", "a mount path must be absolute "
				       "and plain, e.g. /mnt/checkpoints");
		if (v->type == YAML_MAPPING_NODE) {
			if ((err = parse_ephemeral(t, path, node_of(t, p->key), v)))
				return err;
			continue;
		}
		if (!ydoc_text(v, &volume))
			return fail_at(t, v, "volumes", "must be the name of a Volume, or an ephemeral "
				       "volume {size: 100Gi}");
		if (!name_is_dns1123_subdomain(volume))
			return fail_at(t, v, "volumes", "not the name of a Volume (lower case letters, "
				       "digits, '-' and '.')");
		spec->n_volumes++;
		m->mount_path = strdup(path);
		m->volume = strdup(volume);
		if (!m->mount_path || !m->volume)
			return CADRE_ENOMEM;
	}
	return 0;
}

/* Append an upload of source to target (the pod's absolute path). 0 or CADRE_ENOMEM. */
static int add_upload(struct task *t, const char *source, const char *target,
		      const char *field, int line)
{
	struct convert_result *r = t->r;
	struct convert_upload *grown, *u;

	grown = realloc(r->uploads, (r->n_uploads + 1) * sizeof(*r->uploads));
	if (!grown)
		return CADRE_ENOMEM;
	r->uploads = grown;
	u = &r->uploads[r->n_uploads];
	u->source = strdup(source);
	u->target = strdup(target);
	u->field = field;
	u->line = line;
	if (!u->source || !u->target) {
		free(u->source);
		free(u->target);
		return CADRE_ENOMEM;
	}
	r->n_uploads++;
	return 0;
}

/* A source SkyPilot reads from a bucket or the web, which cadre does not fetch. */
static bool is_remote_source(const char *src)
{
	return strstr(src, "://") != NULL;
}

/*
 * Where a file_mounts destination is in the pod, as SkyPilot places it: "~"
 * and "~/x" under the home directory, a relative path under the workdir,
 * an absolute one as it is. 0, or -1 when it is not a plain path.
 */
static int mount_target(const char *dest, char *out, size_t size)
{
	int n;

	if (!strcmp(dest, "~"))
		n = snprintf(out, size, "%s", CONVERT_SKY_HOME);
	else if (!strncmp(dest, "~/", 2))
		n = snprintf(out, size, "%s/%s", CONVERT_SKY_HOME, dest + 2);
	else if (dest[0] == '/')
		n = snprintf(out, size, "%s", dest);
	else
		n = snprintf(out, size, "%s/%s", CONVERT_SKY_WORKDIR, dest);
	if (n < 0 || (size_t)n >= size)
		return -1;
	/* No trailing slash: the path names the file or directory itself. */
	while (n > 1 && out[n - 1] == '/')
		out[--n] = '\0';
	return name_is_mount_path(out) ? 0 : -1;
}

/* Whether a and b are one path or one lies under the other. */
static bool paths_nest(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b), n = na < nb ? na : nb;

	return !strncmp(a, b, n) && (na == nb || (na < nb ? b[n] : a[n]) == '/');
}

/*
 * file_mounts: {destination: source}. A local source (a file or a
 * directory) is uploaded by cadre launch and unpacked at its destination
 * (docs/code.md); a bucket (s3://, gs://, ...) or a storage mapping is not
 * fetched: a note says so.
 */
static int parse_file_mounts(struct task *t, yaml_node_t *n)
{
	yaml_node_pair_t *p;
	int err;

	if (n->type != YAML_MAPPING_NODE)
		return ydoc_is_null(n) ? 0 : fail_at(t, n, "file_mounts", "must be a mapping");
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_of(t, p->key), *v = node_of(t, p->value);
		const char *dest = ydoc_key(t->doc, p), *src;
		char target[4096];

		if (!ydoc_text(v, &src) || is_remote_source(src)) {
			if ((err = convert_note(&t->r->notes, ydoc_line(k), "file_mounts",
						"%.200s is not copied: cadre fetches no bucket or "
						"storage object; put the files in the image or on a "
						"Volume", dest)))
				return err;
			continue;
		}
		if (!*src)
			return fail_at(t, v, "file_mounts", "the source is empty");
		if (mount_target(dest, target, sizeof(target)))
			return fail_at(t, k, "file_mounts", "the destination must be a plain path "
				       "(absolute, ~/..., or relative to the workdir) without '.', "
				       "'..' or empty components");
		for (size_t i = 0; i < t->r->n_uploads; i++)
			if (paths_nest(t->r->uploads[i].target, target))
				return fail_at(t, k, "file_mounts", "the destination is at or under "
					       "another upload's (the workdir or an earlier "
					       "file_mounts entry): cadre unpacks each in a directory "
					       "of its own");
		if ((err = add_upload(t, src, target, "file_mounts", ydoc_line(k))))
			return err;
	}
	return 0;
}

/*
 * workdir: a local directory, uploaded by cadre launch and unpacked at
 * SkyPilot's ~/sky_workdir, where setup and run start (docs/code.md). The
 * git form ({url, ref}) is not cloned: a note says so.
 */
static int parse_workdir(struct task *t, yaml_node_t *k, yaml_node_t *v)
{
	const char *src;
	int err;

	if (ydoc_is_null(v))
		return 0;
	if (!ydoc_text(v, &src))
		return note_at(t, k, "workdir", "a git workdir ({url, ref}) is not cloned: put "
			       "the code in the image or on a Volume, or check it out and give "
			       "workdir its local directory");
	if (!*src)
		return fail_at(t, v, "workdir", "must name a directory");
	if (is_remote_source(src))
		return fail_at(t, v, "workdir", "must be a local directory");
	if ((err = add_upload(t, src, CONVERT_SKY_WORKDIR, "workdir", ydoc_line(k))))
		return err;
	return set_string(&t->r->tj.spec.workdir, CONVERT_SKY_WORKDIR);
}

/* ---- the task ---- */

static int parse_num_nodes(struct task *t, yaml_node_t *n)
{
	const char *s;
	char *end;
	long v;

	if (!ydoc_text(n, &s) || (v = strtol(s, &end, 10)) < 1 || *end || v > TJ_MAX_NUM_NODES)
		return fail_at(t, n, "num_nodes", "must be a whole number from 1 to 16384");
	t->r->tj.spec.num_nodes = (int32_t)v;
	t->r->tj.spec.has_num_nodes = true;
	return 0;
}

static int parse_name(struct task *t, yaml_node_t *root)
{
	struct trainingjob *tj = &t->r->tj;
	const char *given = t->in->default_name;
	int line = 0;

	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *v = node_of(t, p->value);

		if (strcmp(ydoc_key(t->doc, p), "name") || ydoc_is_null(v))
			continue;
		if (!ydoc_text(v, &given))
			return fail_at(t, v, "name", "must be a string");
		line = ydoc_line(v);
	}
	if (!(tj->meta.name = convert_job_name(given)))
		return CADRE_ENOMEM;
	if (given && strcmp(given, tj->meta.name))
		return convert_note(&t->r->notes, line, line ? "name" : NULL, "the job is named "
				    "\"%s\": a TrainingJob's name is a DNS label (lower case letters, "
				    "digits and '-')", tj->meta.name);
	return 0;
}

static int parse_script(struct task *t, yaml_node_t *n, const char *field, char **out)
{
	const char *s;

	if (ydoc_is_null(n))
		return 0;
	if (!ydoc_text(n, &s))
		return fail_at(t, n, field, "must be a string of shell commands");
	/* Blank as tj_validate reads spec.run: nothing but spaces, tabs and line ends. */
	if (!strcmp(field, "run") && strspn(s, " \t\r\n") == strlen(s))
		return fail_at(t, n, field, "holds no command");
	return set_string(out, s);
}

/* Top-level fields that SkyPilot knows and cadre does not use. */
static const char *const unused_fields[][2] = {
	{ "config", "SkyPilot's configuration overrides have no counterpart" },
	{ "service", "SkyServe services are not supported" },
	{ "event_callback", "event callbacks are not supported" },
	{ "inputs", "inputs and outputs are not supported" },
	{ "outputs", "inputs and outputs are not supported" },
	{ "experimental", "SkyPilot's experimental fields have no counterpart" },
	{ "pool", "pools are not supported: a job gets its own nodes" },
};

static int parse_field(struct task *t, yaml_node_pair_t *p)
{
	struct tj_spec *spec = &t->r->tj.spec;
	const char *key = ydoc_key(t->doc, p);
	yaml_node_t *v = node_of(t, p->value), *k = node_of(t, p->key);

	if (!strcmp(key, "name"))
		return 0;
	if (!strcmp(key, "num_nodes"))
		return parse_num_nodes(t, v);
	if (!strcmp(key, "resources"))
		return parse_resources(t, v);
	if (!strcmp(key, "setup"))
		return parse_script(t, v, "setup", &spec->setup);
	if (!strcmp(key, "run"))
		return parse_script(t, v, "run", &spec->run);
	if (!strcmp(key, "envs"))
		return parse_envs(t, v);
	if (!strcmp(key, "secrets"))
		return parse_secrets(t, k, v);
	if (!strcmp(key, "volumes"))
		return parse_volumes(t, v);
	if (!strcmp(key, "file_mounts"))
		return parse_file_mounts(t, v);
	for (size_t i = 0; i < sizeof(unused_fields) / sizeof(unused_fields[0]); i++)
		if (!strcmp(key, unused_fields[i][0]))
			return note_at(t, k, key, unused_fields[i][1]);
	return convert_note(&t->r->notes, ydoc_line(k), key, "not a field of a SkyPilot task; "
			    "ignored");
}

int convert_sky_task(const struct convert_input *in, struct convert_result *r)
{
	yaml_document_t doc;
	struct task t = { .in = in, .r = r, .doc = &doc };
	yaml_node_t *root;
	int err;

	r->kind = CONVERT_SKY_TASK;
	if ((err = ydoc_load(in, r, "task", &doc)))
		return err;
	root = yaml_document_get_root_node(&doc);
	if ((err = parse_name(&t, root)))
		goto out;
	/* workdir first, wherever it stands: file_mounts are placed against it. */
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top && !err; p++)
		if (!strcmp(ydoc_key(&doc, p), "workdir"))
			err = parse_workdir(&t, node_of(&t, p->key), node_of(&t, p->value));
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top && !err; p++)
		if (strcmp(ydoc_key(&doc, p), "workdir"))
			err = parse_field(&t, p);
	if (err)
		goto out;
	if (!r->tj.spec.has_num_nodes) {
		r->tj.spec.num_nodes = 1;
		r->tj.spec.has_num_nodes = true;
	}
	if (!r->tj.spec.run || !*r->tj.spec.run) {
		err = convert_fail(r, ydoc_line(root), 0, "run", "required: cadre runs it on every "
				   "node (a task without run only provisions nodes in SkyPilot)");
		goto out;
	}
	if (!t.has_image)
		err = convert_default_image(in, r, "resources.image_id");
out:
	yaml_document_delete(&doc);
	return err;
}
