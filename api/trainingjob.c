/*
 * trainingjob.c - reading a TrainingJob: spec, defaults, lifetime, phase
 * names. The status lives in trainingjob_status.c, the rules in
 * trainingjob_validate.c.
 */
#include "api/trainingjob.h"

#include "api/decode.h"
#include "api/fielderr.h"
#include "base/err.h"
#include "base/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pod_template_release(struct tj_pod_template *pt)
{
	json_decref(pt->labels);
	json_decref(pt->annotations);
	json_decref(pt->node_selector);
	json_decref(pt->tolerations);
	json_decref(pt->affinity);
	free(pt->service_account_name);
	json_decref(pt->image_pull_secrets);
	free(pt->runtime_class_name);
	free(pt->scheduler_name);
	json_decref(pt->security_context);
	json_decref(pt->container_security_context);
	json_decref(pt->resource_claims);
	memset(pt, 0, sizeof(*pt));
}

static void spec_release(struct tj_spec *spec)
{
	free(spec->resources.accelerators);
	free(spec->resources.cpus);
	free(spec->resources.memory);
	free(spec->resources.accelerator_resource);
	free(spec->resources.device_class);
	json_decref(spec->resource_claims_per_node);
	free(spec->image);
	free(spec->setup);
	free(spec->run);
	free(spec->workdir);
	for (size_t i = 0; i < spec->n_envs; i++) {
		free(spec->envs[i].name);
		free(spec->envs[i].value);
	}
	free(spec->envs);
	for (size_t i = 0; i < spec->n_secret_envs; i++) {
		free(spec->secret_envs[i].name);
		free(spec->secret_envs[i].secret_name);
		free(spec->secret_envs[i].secret_key);
	}
	free(spec->secret_envs);
	for (size_t i = 0; i < spec->n_volumes; i++) {
		free(spec->volumes[i].mount_path);
		free(spec->volumes[i].volume);
	}
	free(spec->volumes);
	tj_scratch_release(spec->scratch, spec->n_scratch);
	for (size_t i = 0; i < spec->n_stage_in; i++) {
		free(spec->stage_in[i].from);
		free(spec->stage_in[i].to);
	}
	free(spec->stage_in);
	for (size_t i = 0; i < spec->n_code; i++) {
		free(spec->code[i].digest);
		free(spec->code[i].path);
	}
	free(spec->code);
	free(spec->queue);
	free(spec->priority_class_name);
	pod_template_release(&spec->pod_template);
	free(spec->signal.name);
	for (size_t i = 0; i < spec->n_failure_rules; i++)
		free(spec->failure_rules[i].codes);
	free(spec->failure_rules);
	free(spec->partition);
	free(spec->array);
	slurm_dep_release(&spec->dependency);
	free(spec->output);
	free(spec->error);
	free(spec->topology.required);
	free(spec->topology.preferred);
	free(spec->topology.segment_required);
	tj_nodes_release(&spec->nodes);
	memset(spec, 0, sizeof(*spec));
}

void tj_init(struct trainingjob *tj)
{
	meta_init(&tj->meta);
	memset(&tj->spec, 0, sizeof(tj->spec));
	tj_status_init(&tj->status);
}

void tj_release(struct trainingjob *tj)
{
	meta_release(&tj->meta);
	spec_release(&tj->spec);
	tj_status_release(&tj->status);
}

void tj_default(struct tj_spec *spec)
{
	if (!spec->has_num_nodes) {
		spec->num_nodes = TJ_DEFAULT_NUM_NODES;
		spec->has_num_nodes = true;
	}
	if (!spec->has_tasks_per_node) {
		spec->tasks_per_node = TJ_DEFAULT_TASKS_PER_NODE;
		spec->has_tasks_per_node = true;
	}
	if (!spec->resources.accelerator_resource)
		spec->resources.accelerator_resource = strdup(TJ_DEFAULT_ACCELERATOR_RESOURCE);
	if (!spec->has_gang_timeout_seconds) {
		spec->gang_timeout_seconds = TJ_DEFAULT_GANG_TIMEOUT_SECONDS;
		spec->has_gang_timeout_seconds = true;
	}
	if (!spec->has_master_port) {
		spec->master_port = TJ_DEFAULT_MASTER_PORT;
		spec->has_master_port = true;
	}
	if (!spec->has_max_infra_restarts) {
		spec->max_infra_restarts = TJ_DEFAULT_MAX_INFRA_RESTARTS;
		spec->has_max_infra_restarts = true;
	}
	if (spec->signal.name && !spec->signal.has_seconds_before) {
		spec->signal.seconds_before = TJ_DEFAULT_SIGNAL_SECONDS_BEFORE;
		spec->signal.has_seconds_before = true;
	}
	if (spec->hang.set && !spec->hang.has_startup_seconds && spec->hang.has_progress_seconds &&
	    spec->hang.progress_seconds >= 1) {
		spec->hang.startup_seconds = spec->hang.progress_seconds;
		spec->hang.has_startup_seconds = true;
	}
}

enum tj_failure_action tj_failure_action_for(const struct tj_spec *spec, int exit_code)
{
	for (size_t i = 0; i < spec->n_failure_rules; i++) {
		const struct tj_failure_rule *r = &spec->failure_rules[i];
		bool in = false;

		for (size_t j = 0; j < r->n_codes; j++)
			in |= r->codes[j] == exit_code;
		if (in != r->not_in)
			return r->action;
	}
	return TJ_FAILURE_RESTART;
}

int64_t tj_termination_grace_seconds(const struct tj_spec *spec)
{
	if (spec->has_termination_grace_period_seconds)
		return spec->termination_grace_period_seconds;
	if (spec->signal.name)
		return spec->signal.seconds_before + TJ_SIGNAL_EXTRA_GRACE_SECONDS;
	return -1;
}

static void parse_resources(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	const json_t *res = decode_object(d, spec, "spec", "resources");
	struct tj_resources *r = &s->resources;

	if (!res)
		return;
	if (decode_string(d, res, "spec.resources", "accelerators", &r->accelerators))
		r->has_accel = accel_parse(r->accelerators, &r->accel) == 0;
	decode_quantity(d, res, "spec.resources", "cpus", &r->cpus, &r->has_cpus,
		       &r->cpus_milli);
	decode_quantity(d, res, "spec.resources", "memory", &r->memory, &r->has_memory,
		       &r->memory_milli);
	decode_string(d, res, "spec.resources", "acceleratorResource",
		      &r->accelerator_resource);
}

/* spec.envs: an object of strings, kept in its order. */
static void parse_envs(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	char path[DECODE_PATH_MAX];
	const json_t *envs = decode_object(d, spec, "spec", "envs");
	const char *name;
	json_t *value;

	if (!envs || !json_object_size(envs))
		return;
	s->envs = calloc(json_object_size(envs), sizeof(*s->envs));
	if (!s->envs) {
		decode_nomem(d);
		return;
	}
	json_object_foreach((json_t *)envs, name, value) {
		struct tj_env *env = &s->envs[s->n_envs];

		if (!(env->name = strdup(name))) {
			decode_nomem(d);
			return;
		}
		s->n_envs++;
		decode_path(path, sizeof(path), "spec.envs", name);
		if (json_is_null(value))
			decode_fail(d, path, "must be a string, not null");
		else
			decode_as_string(d, value, path, &env->value);
	}
}

static void parse_secret_envs(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	char path[DECODE_PATH_MAX], ref_path[DECODE_PATH_MAX];
	const json_t *list = decode_array(d, spec, "spec", "secretEnvs");
	size_t i;
	json_t *item;

	if (!list || !json_array_size(list))
		return;
	s->secret_envs = calloc(json_array_size(list), sizeof(*s->secret_envs));
	if (!s->secret_envs) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(list, i, item) {
		struct tj_secret_env *env = &s->secret_envs[s->n_secret_envs++];
		const json_t *ref;

		decode_path_index(path, sizeof(path), "spec.secretEnvs", i);
		if (!decode_as_object(d, item, path)) {
			if (json_is_null(item))
				decode_fail(d, path, "must be an object, not null");
			continue;
		}
		decode_string(d, item, path, "name", &env->name);
		ref = decode_object(d, item, path, "secretKeyRef");
		decode_path(ref_path, sizeof(ref_path), path, "secretKeyRef");
		decode_string(d, ref, ref_path, "name", &env->secret_name);
		decode_string(d, ref, ref_path, "key", &env->secret_key);
	}
}

/* spec.volumes: mount path -> Volume name, kept in its order. */
static void parse_volumes(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	char path[DECODE_PATH_MAX];
	const json_t *volumes = decode_object(d, spec, "spec", "volumes");
	const char *mount_path;
	json_t *value;

	if (!volumes || !json_object_size(volumes))
		return;
	s->volumes = calloc(json_object_size(volumes), sizeof(*s->volumes));
	if (!s->volumes) {
		decode_nomem(d);
		return;
	}
	json_object_foreach((json_t *)volumes, mount_path, value) {
		struct tj_volume_mount *mount = &s->volumes[s->n_volumes];

		if (!(mount->mount_path = strdup(mount_path))) {
			decode_nomem(d);
			return;
		}
		s->n_volumes++;
		decode_path_quoted(path, sizeof(path), "spec.volumes", mount_path);
		if (json_is_null(value))
			decode_fail(d, path, "must be the name of a Volume, not null");
		else
			decode_as_string(d, value, path, &mount->volume);
	}
}

static int compare_scratch(const void *a, const void *b)
{
	return strcmp(((const struct tj_scratch *)a)->mount_path,
		      ((const struct tj_scratch *)b)->mount_path);
}

/*
 * spec.scratch: mount path -> {size, storageClassName}, sorted by mount path
 * so that TMPDIR and the pod's volume names do not hang on the JSON order.
 */
void tj_decode_scratch(struct decoder *d, const json_t *spec, struct tj_scratch **out, size_t *n)
{
	static const char *const keys[] = { "size", "storageClassName", NULL };
	char path[DECODE_PATH_MAX];
	const json_t *scratch = decode_object(d, spec, "spec", "scratch");
	const char *mount_path;
	json_t *value;

	if (!scratch || !json_object_size(scratch))
		return;
	*out = calloc(json_object_size(scratch), sizeof(**out));
	if (!*out) {
		decode_nomem(d);
		return;
	}
	json_object_foreach((json_t *)scratch, mount_path, value) {
		struct tj_scratch *sc = &(*out)[*n];

		if (!(sc->mount_path = strdup(mount_path))) {
			decode_nomem(d);
			return;
		}
		++*n;
		decode_path_quoted(path, sizeof(path), "spec.scratch", mount_path);
		if (!decode_as_object(d, value, path))
			continue;
		decode_only_keys(d, value, path, keys, NULL);
		decode_quantity(d, value, path, "size", &sc->size, &sc->has_size, &sc->size_milli);
		decode_string(d, value, path, "storageClassName", &sc->storage_class_name);
	}
	qsort(*out, *n, sizeof(**out), compare_scratch);
}

void tj_scratch_release(struct tj_scratch *scratch, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(scratch[i].mount_path);
		free(scratch[i].size);
		free(scratch[i].storage_class_name);
	}
	free(scratch);
}

int tj_scratch_copy(const struct tj_scratch *from, size_t n, struct tj_scratch **out,
		    size_t *n_out)
{
	struct tj_scratch *to = calloc(n ? n : 1, sizeof(*to));

	if (!to)
		return CADRE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		to[i] = from[i];
		to[i].mount_path = strdup(from[i].mount_path);
		to[i].size = from[i].size ? strdup(from[i].size) : NULL;
		to[i].storage_class_name = from[i].storage_class_name ?
					   strdup(from[i].storage_class_name) : NULL;
		if (!to[i].mount_path || (from[i].size && !to[i].size) ||
		    (from[i].storage_class_name && !to[i].storage_class_name)) {
			tj_scratch_release(to, i + 1);
			return CADRE_ENOMEM;
		}
	}
	*out = to;
	*n_out = n;
	return 0;
}

/* spec.stageIn: [{from, to}], in its order. */
static void parse_stage_in(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	static const char *const keys[] = { "from", "to", NULL };
	char path[DECODE_PATH_MAX];
	const json_t *list = decode_array(d, spec, "spec", "stageIn"), *item;
	size_t i;

	if (!list || !json_array_size(list))
		return;
	s->stage_in = calloc(json_array_size(list), sizeof(*s->stage_in));
	if (!s->stage_in) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(list, i, item) {
		struct tj_stage_in *st = &s->stage_in[s->n_stage_in++];

		decode_path_index(path, sizeof(path), "spec.stageIn", i);
		if (!decode_as_object(d, item, path))
			continue;
		decode_only_keys(d, item, path, keys, NULL);
		decode_string(d, item, path, "from", &st->from);
		decode_string(d, item, path, "to", &st->to);
	}
}

/* spec.code: [{digest, path}], in its order. */
static void parse_code(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	static const char *const keys[] = { "digest", "path", NULL };
	char path[DECODE_PATH_MAX];
	const json_t *list = decode_array(d, spec, "spec", "code"), *item;
	size_t i;

	if (!list || !json_array_size(list))
		return;
	s->code = calloc(json_array_size(list), sizeof(*s->code));
	if (!s->code) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(list, i, item) {
		struct tj_code *c = &s->code[s->n_code++];

		decode_path_index(path, sizeof(path), "spec.code", i);
		if (!decode_as_object(d, item, path))
			continue;
		decode_only_keys(d, item, path, keys, NULL);
		decode_string(d, item, path, "digest", &c->digest);
		decode_string(d, item, path, "path", &c->path);
	}
}

/*
 * spec.podTemplate: only the fields docs/design.md section 1 lists, and the
 * security contexts a restricted namespace asks for (docs/pods.md). Anything
 * else (hostNetwork, volumes, containers, ...) is refused here rather than
 * dropped, so a user learns it was not applied.
 */
static void parse_pod_template(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	static const char *const template_keys[] = { "metadata", "spec", NULL };
	static const char *const metadata_keys[] = { "labels", "annotations", NULL };
	static const char *const spec_keys[] = {
		"nodeSelector", "tolerations", "affinity", "serviceAccountName",
		"imagePullSecrets", "runtimeClassName", "schedulerName", "securityContext",
		"containerSecurityContext", "resourceClaims", NULL,
	};
	static const char *const why =
		"podTemplate accepts only metadata.labels, metadata.annotations and spec."
		"{nodeSelector, tolerations, affinity, serviceAccountName, imagePullSecrets, "
		"runtimeClassName, schedulerName, securityContext, containerSecurityContext, "
		"resourceClaims}";
	const char *base = "spec.podTemplate";
	struct tj_pod_template *pt = &s->pod_template;
	const json_t *tmpl = decode_object(d, spec, "spec", "podTemplate");
	const json_t *meta, *pod;

	if (!tmpl)
		return;
	decode_only_keys(d, tmpl, base, template_keys, why);
	meta = decode_object(d, tmpl, base, "metadata");
	if (meta) {
		decode_only_keys(d, meta, "spec.podTemplate.metadata", metadata_keys, why);
		decode_string_map_copy(d, meta, "spec.podTemplate.metadata", "labels",
				       &pt->labels);
		decode_string_map_copy(d, meta, "spec.podTemplate.metadata", "annotations",
				       &pt->annotations);
	}
	pod = decode_object(d, tmpl, base, "spec");
	if (pod) {
		base = "spec.podTemplate.spec";
		decode_only_keys(d, pod, base, spec_keys, why);
		decode_string_map_copy(d, pod, base, "nodeSelector", &pt->node_selector);
		decode_array_copy(d, pod, base, "tolerations", &pt->tolerations);
		decode_object_copy(d, pod, base, "affinity", &pt->affinity);
		decode_string(d, pod, base, "serviceAccountName", &pt->service_account_name);
		decode_array_copy(d, pod, base, "imagePullSecrets", &pt->image_pull_secrets);
		decode_string(d, pod, base, "runtimeClassName", &pt->runtime_class_name);
		decode_string(d, pod, base, "schedulerName", &pt->scheduler_name);
		decode_object_copy(d, pod, base, "securityContext", &pt->security_context);
		decode_object_copy(d, pod, base, "containerSecurityContext",
				   &pt->container_security_context);
		decode_array_copy(d, pod, base, "resourceClaims", &pt->resource_claims);
	}
}

/* spec.computeDomain: {} or {allocationMode: Single | All}. */
static void parse_compute_domain(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	static const char *const keys[] = { "allocationMode", NULL };
	const json_t *cd = decode_object(d, spec, "spec", "computeDomain");
	char *mode = NULL;

	if (!cd)
		return;
	s->compute_domain.set = true;
	decode_only_keys(d, cd, "spec.computeDomain", keys,
			 "computeDomain accepts only allocationMode (Single or All)");
	if (!decode_string(d, cd, "spec.computeDomain", "allocationMode", &mode))
		return;
	if (!strcmp(mode, "All"))
		s->compute_domain.all_channels = true;
	else if (strcmp(mode, "Single"))
		decode_fail(d, "spec.computeDomain.allocationMode", "must be Single or All, not "
			    "\"%.64s\"", mode);
	free(mode);
}

static void parse_success_policy(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	char *name = NULL;

	if (!decode_string(d, spec, "spec", "successPolicy", &name))
		return;
	if (!strcmp(name, "All"))
		s->success_policy = TJ_SUCCESS_ALL;
	else if (!strcmp(name, "Rank0"))
		s->success_policy = TJ_SUCCESS_RANK0;
	else
		decode_fail(d, "spec.successPolicy", "must be All or Rank0, not \"%.64s\"", name);
	free(name);
}

static void parse_restart_strategy(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	char *name = NULL;

	if (!decode_string(d, spec, "spec", "restartStrategy", &name))
		return;
	if (!strcmp(name, "Recreate"))
		s->restart_strategy = TJ_RESTART_RECREATE;
	else if (!strcmp(name, "InPlace"))
		s->restart_strategy = TJ_RESTART_IN_PLACE;
	else
		decode_fail(d, "spec.restartStrategy", "must be Recreate or InPlace, not \"%.64s\"",
			    name);
	free(name);
}

/* spec.hang: {startupSeconds, progressSeconds, action}. */
static void parse_hang(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	const json_t *hang = decode_object(d, spec, "spec", "hang");
	struct tj_hang *h = &s->hang;
	char *action = NULL;

	if (!hang)
		return;
	h->set = true;
	decode_int64(d, hang, "spec.hang", "startupSeconds", &h->startup_seconds,
		     &h->has_startup_seconds);
	decode_int64(d, hang, "spec.hang", "progressSeconds", &h->progress_seconds,
		     &h->has_progress_seconds);
	if (decode_string(d, hang, "spec.hang", "action", &action)) {
		if (!strcmp(action, "Restart"))
			h->action = TJ_HANG_RESTART;
		else if (!strcmp(action, "Fail"))
			h->action = TJ_HANG_FAIL;
		else
			decode_fail(d, "spec.hang.action", "must be Restart or Fail, not \"%.64s\"",
				    action);
	}
	free(action);
}

static void parse_signal(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	const json_t *sig = decode_object(d, spec, "spec", "signal");

	if (!sig)
		return;
	if (!decode_string(d, sig, "spec.signal", "name", &s->signal.name))
		decode_fail(d, "spec.signal.name", "is required");
	decode_int64(d, sig, "spec.signal", "secondsBefore", &s->signal.seconds_before,
		     &s->signal.has_seconds_before);
}

/* One rule of spec.failurePolicy.rules at path. */
static void parse_failure_rule(struct decoder *d, const json_t *item, const char *path,
			       struct tj_failure_rule *r)
{
	char sub[DECODE_PATH_MAX], vpath[DECODE_PATH_MAX];
	char *action = NULL, *op = NULL;
	const json_t *on, *values, *v;
	size_t i;

	if (decode_string(d, item, path, "action", &action)) {
		decode_path(sub, sizeof(sub), path, "action");
		if (!strcmp(action, "Restart"))
			r->action = TJ_FAILURE_RESTART;
		else if (!strcmp(action, "RestartNotCounted"))
			r->action = TJ_FAILURE_RESTART_NOT_COUNTED;
		else if (!strcmp(action, "Fail"))
			r->action = TJ_FAILURE_FAIL;
		else
			decode_fail(d, sub, "must be Restart, RestartNotCounted or Fail, not "
				    "\"%.64s\"", action);
	}
	free(action);
	on = decode_object(d, item, path, "onExitCodes");
	decode_path(sub, sizeof(sub), path, "onExitCodes");
	if (decode_string(d, on, sub, "operator", &op)) {
		if (!strcmp(op, "NotIn"))
			r->not_in = true;
		else if (strcmp(op, "In"))
			decode_fail(d, sub, "operator must be In or NotIn, not \"%.64s\"", op);
	}
	free(op);
	values = decode_array(d, on, sub, "values");
	decode_path(vpath, sizeof(vpath), sub, "values");
	if (!values || !json_array_size(values)) {
		decode_fail(d, vpath, "must list at least one exit code");
		return;
	}
	r->codes = calloc(json_array_size(values), sizeof(*r->codes));
	if (!r->codes) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(values, i, v) {
		char ipath[DECODE_PATH_MAX];
		int64_t code;

		decode_path_index(ipath, sizeof(ipath), vpath, i);
		if (!decode_as_int64(d, v, ipath, 1, 255, &code))
			continue;
		/* A set, as the CRD's x-kubernetes-list-type says. */
		for (size_t j = 0; j < r->n_codes; j++)
			if (r->codes[j] == code) {
				decode_fail(d, ipath, "repeats exit code %lld", (long long)code);
				break;
			}
		r->codes[r->n_codes++] = (int32_t)code;
	}
}

static void parse_failure_policy(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	const json_t *policy = decode_object(d, spec, "spec", "failurePolicy");
	const json_t *rules = decode_array(d, policy, "spec.failurePolicy", "rules");
	char path[DECODE_PATH_MAX];
	json_t *item;
	size_t i;

	if (!rules || !json_array_size(rules))
		return;
	s->failure_rules = calloc(json_array_size(rules), sizeof(*s->failure_rules));
	if (!s->failure_rules) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(rules, i, item) {
		decode_path_index(path, sizeof(path), "spec.failurePolicy.rules", i);
		if (!decode_as_object(d, item, path))
			continue;
		parse_failure_rule(d, item, path, &s->failure_rules[s->n_failure_rules++]);
	}
}

/* spec.dependency: {any, items: [{type, jobs: [...]}]}, Slurm's --dependency as fields. */
static void parse_dependency(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	const json_t *dep = decode_object(d, spec, "spec", "dependency");
	const json_t *items, *item;
	struct slurm_dep *sd = &s->dependency;
	char path[DECODE_PATH_MAX], sub[DECODE_PATH_MAX];
	size_t i;

	if (!dep)
		return;
	s->has_dependency = true;
	decode_bool(d, dep, "spec.dependency", "any", &sd->any);
	items = decode_array(d, dep, "spec.dependency", "items");
	if (!items || !json_array_size(items)) {
		decode_fail(d, "spec.dependency.items", "must list at least one dependency");
		return;
	}
	if (!(sd->items = calloc(json_array_size(items), sizeof(*sd->items)))) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(items, i, item) {
		struct slurm_dep_item *it;
		const json_t *jobs, *job;
		char *type = NULL;
		size_t j;
		int t;

		decode_path_index(path, sizeof(path), "spec.dependency.items", i);
		if (!decode_as_object(d, item, path))
			continue;
		it = &sd->items[sd->n_items++];
		decode_path(sub, sizeof(sub), path, "type");
		if (!decode_string(d, item, path, "type", &type))
			decode_fail(d, sub, "required");
		else if ((t = slurm_dep_type_parse(type)) < 0)
			decode_fail(d, sub, "must be after, afterany, afterok, afternotok or "
				    "singleton, not \"%.64s\"", type);
		else
			it->type = (enum slurm_dep_type)t;
		free(type);
		jobs = decode_array(d, item, path, "jobs");
		if (!jobs || !json_array_size(jobs))
			continue;
		if (!(it->jobs = calloc(json_array_size(jobs), sizeof(*it->jobs)))) {
			decode_nomem(d);
			return;
		}
		decode_path(sub, sizeof(sub), path, "jobs");
		json_array_foreach(jobs, j, job) {
			char jpath[DECODE_PATH_MAX];

			decode_path_index(jpath, sizeof(jpath), sub, j);
			if (decode_as_string(d, job, jpath, &it->jobs[it->n_jobs]))
				it->n_jobs++;
		}
	}
}

/* spec.topology: {required, preferred, segment: {size, required}}. */
static void parse_topology(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	const json_t *topo = decode_object(d, spec, "spec", "topology"), *seg;
	struct tj_topology *t = &s->topology;

	if (!topo)
		return;
	t->set = true;
	decode_string(d, topo, "spec.topology", "required", &t->required);
	decode_string(d, topo, "spec.topology", "preferred", &t->preferred);
	seg = decode_object(d, topo, "spec.topology", "segment");
	if (!seg)
		return;
	t->has_segment = true;
	if (!decode_int32(d, seg, "spec.topology.segment", "size", &t->segment_size, NULL))
		decode_fail(d, "spec.topology.segment.size", "is required");
	if (!decode_string(d, seg, "spec.topology.segment", "required", &t->segment_required))
		decode_fail(d, "spec.topology.segment.required", "is required");
}

const char *tj_topology_level(const struct tj_spec *spec)
{
	const struct tj_topology *t = &spec->topology;

	if (!t->set)
		return NULL;
	if (t->has_segment && t->segment_required)
		return t->segment_required;
	return t->required ? t->required : t->preferred;
}

static void parse_spec(struct decoder *d, const json_t *spec, struct tj_spec *s)
{
	const json_t *gang;

	decode_int32(d, spec, "spec", "numNodes", &s->num_nodes, &s->has_num_nodes);
	decode_int32(d, spec, "spec", "tasksPerNode", &s->tasks_per_node, &s->has_tasks_per_node);
	parse_resources(d, spec, s);
	decode_string(d, spec, "spec", "image", &s->image);
	decode_string(d, spec, "spec", "setup", &s->setup);
	decode_string(d, spec, "spec", "run", &s->run);
	decode_string(d, spec, "spec", "workdir", &s->workdir);
	parse_envs(d, spec, s);
	parse_secret_envs(d, spec, s);
	parse_volumes(d, spec, s);
	tj_decode_scratch(d, spec, &s->scratch, &s->n_scratch);
	parse_stage_in(d, spec, s);
	parse_code(d, spec, s);
	decode_string(d, spec, "spec", "queue", &s->queue);
	decode_int32(d, spec, "spec", "priority", &s->priority, NULL);
	decode_string(d, spec, "spec", "priorityClassName", &s->priority_class_name);
	decode_int32(d, spec, "spec", "maxRestarts", &s->max_restarts, NULL);
	parse_success_policy(d, spec, s);
	parse_restart_strategy(d, spec, s);
	decode_bool(d, spec, "spec", "suspend", &s->suspend);
	decode_int64(d, spec, "spec", "activeDeadlineSeconds", &s->active_deadline_seconds,
		     &s->has_active_deadline_seconds);
	decode_int64(d, spec, "spec", "ttlSecondsAfterFinished",
		     &s->ttl_seconds_after_finished, &s->has_ttl_seconds_after_finished);
	gang = decode_object(d, spec, "spec", "gang");
	decode_int64(d, gang, "spec.gang", "timeoutSeconds", &s->gang_timeout_seconds,
		     &s->has_gang_timeout_seconds);
	decode_int32(d, spec, "spec", "masterPort", &s->master_port, &s->has_master_port);
	parse_pod_template(d, spec, s);
	decode_array_copy(d, spec, "spec", "resourceClaimsPerNode", &s->resource_claims_per_node);
	parse_compute_domain(d, spec, s);
	decode_int32(d, spec, "spec", "maxInfraRestarts", &s->max_infra_restarts,
		     &s->has_max_infra_restarts);
	parse_hang(d, spec, s);
	parse_signal(d, spec, s);
	decode_int64(d, spec, "spec", "terminationGracePeriodSeconds",
		     &s->termination_grace_period_seconds, &s->has_termination_grace_period_seconds);
	parse_failure_policy(d, spec, s);
	decode_string(d, spec, "spec", "partition", &s->partition);
	decode_string(d, spec, "spec", "array", &s->array);
	parse_dependency(d, spec, s);
	decode_string(d, spec, "spec", "output", &s->output);
	decode_string(d, spec, "spec", "error", &s->error);
	parse_topology(d, spec, s);
	tj_decode_nodes(d, spec, &s->nodes);
}

/* apiVersion and kind, when present, must name this kind. */
static void check_kind(struct decoder *d, const json_t *obj)
{
	char *api_version = NULL, *kind = NULL;

	if (decode_string(d, obj, "", "apiVersion", &api_version) &&
	    strcmp(api_version, TJ_API_VERSION))
		decode_fail(d, "apiVersion", "must be " TJ_API_VERSION);
	if (decode_string(d, obj, "", "kind", &kind) && strcmp(kind, TJ_KIND))
		decode_fail(d, "kind", "must be " TJ_KIND);
	free(api_version);
	free(kind);
}

int tj_parse(const json_t *obj, struct trainingjob *out, struct field_errors *errs)
{
	struct decoder d;
	const json_t *spec;

	tj_init(out);
	decode_init(&d, errs);
	if (!json_is_object(obj)) {
		decode_fail(&d, "", "a TrainingJob must be a JSON object");
		goto out;
	}
	check_kind(&d, obj);
	decode_merge(&d, meta_parse(json_object_get(obj, "metadata"), &out->meta, errs));
	spec = json_object_get(obj, "spec");
	if (!spec || json_is_null(spec))
		decode_fail(&d, "spec", "required");
	else if (decode_as_object(&d, spec, "spec"))
		parse_spec(&d, spec, &out->spec);
	decode_merge(&d, tj_status_parse(json_object_get(obj, "status"), &out->status, errs));
out:
	tj_default(&out->spec);
	if (!out->spec.resources.accelerator_resource)
		decode_nomem(&d);
	return decode_finish(&d);
}

const char *tj_success_policy_name(enum tj_success_policy policy)
{
	return policy == TJ_SUCCESS_RANK0 ? "Rank0" : "All";
}

const char *tj_restart_strategy_name(enum tj_restart_strategy strategy)
{
	return strategy == TJ_RESTART_IN_PLACE ? "InPlace" : "Recreate";
}

static const char *const phase_names[] = {
	[TJ_PHASE_UNSET] = "",
	[TJ_PHASE_PENDING] = "Pending",
	[TJ_PHASE_QUEUED] = "Queued",
	[TJ_PHASE_STARTING] = "Starting",
	[TJ_PHASE_RUNNING] = "Running",
	[TJ_PHASE_RESTARTING] = "Restarting",
	[TJ_PHASE_SUCCEEDED] = "Succeeded",
	[TJ_PHASE_FAILED] = "Failed",
	[TJ_PHASE_SUSPENDED] = "Suspended",
};

const char *tj_phase_name(enum tj_phase phase)
{
	if ((unsigned)phase >= sizeof(phase_names) / sizeof(phase_names[0]))
		return "";
	return phase_names[phase];
}

int tj_phase_parse(const char *name, enum tj_phase *out)
{
	for (unsigned i = TJ_PHASE_PENDING; i < sizeof(phase_names) / sizeof(phase_names[0]); i++) {
		if (name && !strcmp(name, phase_names[i])) {
			*out = (enum tj_phase)i;
			return 0;
		}
	}
	return CADRE_EINVAL;
}

bool tj_phase_terminal(enum tj_phase phase)
{
	return phase == TJ_PHASE_SUCCEEDED || phase == TJ_PHASE_FAILED;
}

void tj_job_id_probe(const char *uid, unsigned k, char out[16])
{
	uint64_t h = hash_fnv1a(uid) % 900000000ULL;

	snprintf(out, 16, "%llu", (unsigned long long)((h + k) % 900000000ULL + 100000000ULL));
}

void tj_job_id(const char *uid, char out[16])
{
	tj_job_id_probe(uid, 0, out);
}

void tj_task_id(const struct object_meta *meta, const char *job_id, char out[TJ_TASK_ID_MAX])
{
	char created[32] = "";

	api_time_format(meta->creation_timestamp, created);
	for (char *c = created; *c; c++)
		if (*c == ':' || *c == 'T')
			*c = '-';
	snprintf(out, TJ_TASK_ID_MAX, "cadre-%.19s_%s_%s", created, meta->name ? meta->name : "",
		 job_id ? job_id : "");
}
