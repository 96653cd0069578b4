/*
 * tj_read.c - a pass's reading (tj_pass.h): the job validated, its pods,
 * Volumes, code, PodGroups, elements, dependency and the nodes, from the
 * caches into the planner's input.
 */
#include "controller/trainingjob/tj_pass.h"
#include "controller/admission/gang_preempt.h"

/* store_get_record visitor: 1 or 0 from a node record, CADRE_EINVAL without one. */
static int ready_of_record(void *ctx, const char *key, const void *rec, size_t len)
{
	(void)ctx;
	(void)key;
	return len ? cache_node_ready(rec, len) : CADRE_EINVAL;
}

/*
 * Whether the node is Ready. Asked for every pod of a gang on every pass, so
 * the node's record answers; only a node too large for one is decoded.
 */
static bool node_ok(void *ctx, const char *name)
{
	struct manager *m = ctx;
	json_t *node = NULL, *cond;
	bool ok = false;
	size_t i;
	int ready = store_get_record(m->stores[KIND_NODES], name, ready_of_record, NULL);

	if (ready >= 0 || ready == CADRE_ENOTFOUND)
		return ready == 1;
	if (store_get(m->stores[KIND_NODES], name, &node))
		return false;
	json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, cond) {
		const char *type = json_string_value(json_object_get(cond, "type"));
		const char *status = json_string_value(json_object_get(cond, "status"));

		if (type && !strcmp(type, "Ready"))
			ok = status && !strcmp(status, "True");
	}
	json_decref(node);
	return ok;
}

/* Whether the node is in the cache at all, Ready or not. */
static bool node_known(void *ctx, const char *name)
{
	struct manager *m = ctx;

	return store_contains(m->stores[KIND_NODES], name);
}

struct label_ask {
	const char *key;
	char *out;
	size_t size;
};

/* store_get_record visitor: the label of a node's record, 0 or -1. */
static int label_of_record(void *ctx, const char *key, const void *rec, size_t len)
{
	struct label_ask *a = ctx;
	const char *v = len ? cache_node_label(rec, len, a->key) : NULL;

	(void)key;
	if (!v || strlen(v) >= a->size)
		return -1;
	memcpy(a->out, v, strlen(v) + 1);
	return 0;
}

/* A node's label, from its record (status.topology; docs/topology.md). */
static int node_label(void *ctx, const char *name, const char *key, char *out, size_t size)
{
	struct manager *m = ctx;
	struct label_ask a = { key, out, size };

	return store_get_record(m->stores[KIND_NODES], name, label_of_record, &a) == 0 ? 0 : -1;
}

void tj_read_volumes(struct tj_pass *p)
{
	const struct tj_spec *spec = &p->job.spec;

	p->n_volumes = spec->n_volumes;
	if (!p->n_volumes)
		return;
	p->volumes = calloc(p->n_volumes, sizeof(*p->volumes));
	p->volume_objs = calloc(p->n_volumes, sizeof(*p->volume_objs));
	if (!p->volumes || !p->volume_objs) {
		p->n_volumes = 0;
		return;
	}
	for (size_t i = 0; i < p->n_volumes; i++) {
		struct tj_volume_state *vs = &p->volumes[i];
		char vkey[STORE_KEY_MAX];
		const json_t *status;
		const char *phase;

		vs->mount_path = spec->volumes[i].mount_path;
		vs->volume = spec->volumes[i].volume ? spec->volumes[i].volume : "";
		snprintf(vkey, sizeof(vkey), "%s/%s", p->job.meta.namespace, vs->volume);
		if (store_get(p->m->stores[KIND_VOLUMES], vkey, &p->volume_objs[i]))
			continue;
		vs->found = true;
		status = json_object_get(p->volume_objs[i], "status");
		phase = json_string_value(json_object_get(status, "phase"));
		vs->claim_name = json_string_value(json_object_get(status, "claimName"));
		vs->bound = phase && !strcmp(phase, "Bound") && vs->claim_name;
	}
}

/* spec.code: whether each bundle is whole in the namespace (controller/code/code.h). */
void tj_read_code(struct tj_pass *p)
{
	const struct tj_spec *spec = &p->job.spec;
	size_t n = spec->n_code;

	if (!n || !p->job.meta.namespace)
		return;
	p->code = calloc(n, sizeof(*p->code));
	p->code_in = calloc(n, sizeof(*p->code_in));
	p->code_build = calloc(n, sizeof(*p->code_build));
	if (!p->code || !p->code_in || !p->code_build)
		return;
	for (size_t i = 0; i < n; i++) {
		struct code_state *cs = &p->code[i];
		const char *digest = spec->code[i].digest;

		if (!digest || code_state_of(p->m->stores[KIND_CODE], p->job.meta.namespace,
					     digest, cs))
			return;  /* an invalid spec, or out of memory: fewer states than entries */
		p->code_in[i] = (struct tj_code_state){ digest, cs->complete, cs->why };
		p->code_build[i] = (struct build_code){ cs->parts, cs->file };
		p->n_code = i + 1;
	}
}


void tj_read_pods(struct tj_pass *p)
{
	size_t i;
	json_t *pod;

	if (store_by_index(p->m->stores[KIND_PODS], "job", p->key, &p->pods))
		return;
	p->views = calloc(json_array_size(p->pods) + 1, sizeof(*p->views));
	if (!p->views)
		return;
	json_array_foreach(p->pods, i, pod) {
		struct podview *v = &p->views[p->n_views++];

		podview_read(pod, v);
		v->deleted_by_us = v->deleting && v->name &&
				   expect_deleting(p->m->expect, p->key, v->name, manager_now_ms());
	}
}

/* Native mode: the job's PodGroups, from their cache. */
static void read_podgroups(struct tj_pass *p)
{
	json_t *pg;
	size_t i;

	if (!p->m->stores[KIND_PODGROUPS] ||
	    store_by_index(p->m->stores[KIND_PODGROUPS], "job", p->key, &p->podgroup_objs))
		return;
	p->podgroups = calloc(json_array_size(p->podgroup_objs) + 1, sizeof(*p->podgroups));
	if (!p->podgroups)
		return;
	json_array_foreach(p->podgroup_objs, i, pg)
		if (tj_podgroup_read(pg, &p->podgroups[p->n_podgroups]) == 0)
			p->n_podgroups++;
}

/* The values of the accelerator label seen on Nodes that match the type. */
void tj_read_label_values(struct tj_pass *p)
{
	if (!p->job.spec.resources.has_accel)
		return;
	gang_matching_label_values(p->m, p->job.spec.resources.accel.type, &p->label_values,
				   &p->n_label_values);
}

void tj_fill_build_opts(struct tj_pass *p, struct build_opts *bo)
{
	memset(bo, 0, sizeof(*bo));
	bo->mode = p->job.spec.queue && *p->job.spec.queue ? GANG_KUEUE :
		   p->m->opts->gang_scheduler;
	bo->accelerator_label = p->m->opts->accelerator_label;
	bo->cluster_domain = p->m->opts->cluster_domain;
	bo->default_image = p->m->opts->default_image;
	bo->device_attribute = p->m->opts->device_attribute;
	bo->label_values = (const char *const *)p->label_values;
	bo->n_label_values = p->n_label_values;
	bo->claim_names = NULL;
	bo->n_claim_names = p->n_volumes;
	bo->code = p->code_build;
	bo->n_code = p->n_code;
}

/* The job as cached, with the id claimed for it while its status has none (a shallow view). */
struct trainingjob tj_id_view(const struct tj_pass *p)
{
	struct trainingjob view = p->job;

	if ((!view.status.job_id || !*view.status.job_id) && p->job_id[0])
		view.status.job_id = (char *)p->job_id;
	return view;
}

/*
 * The job's entrypoint ConfigMap, from its cache (trimmed: configmap_trim.h),
 * and whether it holds this controller's script and the variables the job's
 * pods need now.
 */
void tj_read_entrypoint(struct tj_pass *p)
{
	char name[256], key[STORE_KEY_MAX];
	struct build_opts bo;
	struct trainingjob view = tj_id_view(p);

	tj_fill_build_opts(p, &bo);
	if (build_entrypoint_digest(&view, &bo, p->entrypoint_digest))
		p->entrypoint_digest[0] = '\0';
	if (build_entrypoint_name(p->job.meta.name, name, sizeof(name)) ||
	    snprintf(key, sizeof(key), "%s/%s", p->job.meta.namespace, name) >= (int)sizeof(key) ||
	    store_get(p->m->stores[KIND_CONFIGMAPS], key, &p->entrypoint))
		return;
	p->entrypoint_ready = configmap_state(p->entrypoint, p->job.meta.uid,
					      p->entrypoint_digest) == CONFIGMAP_CURRENT;
}

/* The refusal of this job's current attempt the reconciler remembers, as planner input. */
void tj_read_refusal(struct tj_pass *p, struct tj_input *in)
{
	int attempt = tj_attempt(&p->job.status);
	struct refusal *r = &p->refusal;

	if (!jobmemo_refusal(p->m->memo, p->key, p->job.meta.uid, attempt, r))
		return;
	p->refusal_in = (struct tj_refusal){
		.pod = r->pod, .rank = r->rank, .attempt = r->attempt, .reason = r->reason,
		.message = r->message, .first_time = r->first_time,
	};
	in->refusal = &p->refusal_in;
}

/* A label or annotation of a cached object. */
static const char *meta_str(const json_t *obj, const char *map, const char *key)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"),
								  map), key));
}

/* spec.dependency, decided from the caches (tj_depend_read.h), as planner input. */
int tj_read_dependency(struct tj_pass *p, struct tj_input *in)
{
	bool decided = false;
	int err = tj_dependency_read(p->m, &p->job, &p->dependency, &decided);

	if (!err && decided)
		in->dependency = &p->dependency;
	return err;
}

/* Whether toleration tol (a Toleration object) tolerates taint (a Taint object). */
static bool tolerates(const json_t *tol, const json_t *taint)
{
	const char *key = json_string_value(json_object_get(tol, "key"));
	const char *op = json_string_value(json_object_get(tol, "operator"));
	const char *value = json_string_value(json_object_get(tol, "value"));
	const char *effect = json_string_value(json_object_get(tol, "effect"));
	const char *t_key = json_string_value(json_object_get(taint, "key"));
	const char *t_value = json_string_value(json_object_get(taint, "value"));
	bool exists = op && !strcmp(op, "Exists");

	if (effect && *effect && strcmp(effect, "NoExecute"))
		return false;
	if (key && *key) {
		if (!t_key || strcmp(key, t_key))
			return false;
	} else if (!exists) {
		return false;
	}
	return exists || !strcmp(value ? value : "", t_value ? t_value : "");
}

/*
 * tj_input.node_evicts: the node has a NoExecute taint no toleration of the
 * job's pod template tolerates. The taints of a lost node (not-ready,
 * unreachable), which every pod tolerates for a while, are the node's loss.
 */
static bool node_evicts(void *ctx, const char *name)
{
	struct tj_pass *p = ctx;
	json_t *node = NULL, *taint, *tol;
	bool evicts = false;
	size_t i, k;

	if (store_get(p->m->stores[KIND_NODES], name, &node))
		return false;
	json_array_foreach(json_object_get(json_object_get(node, "spec"), "taints"), i, taint) {
		const char *effect = json_string_value(json_object_get(taint, "effect"));
		const char *key = json_string_value(json_object_get(taint, "key"));
		bool tolerated = false;

		if (!effect || strcmp(effect, "NoExecute") || !key ||
		    !strcmp(key, "node.kubernetes.io/not-ready") ||
		    !strcmp(key, "node.kubernetes.io/unreachable"))
			continue;
		json_array_foreach(p->job.spec.pod_template.tolerations, k, tol)
			tolerated = tolerated || tolerates(tol, taint);
		evicts = evicts || !tolerated;
	}
	json_decref(node);
	return evicts;
}

/*
 * tj_input.element_taken: <job>-<index> is cached and is not this array's.
 * One on its way out, or owned by an earlier array of this name (deleted
 * and applied again: the garbage collector takes its elements), is not
 * taken: the name comes free.
 */
static bool element_taken(void *ctx, int index)
{
	struct tj_pass *p = ctx;
	char key[512];
	json_t *obj = NULL, *ref;
	const json_t *meta;
	bool taken;
	size_t i;

	snprintf(key, sizeof(key), "%s/%s-%d", p->job.meta.namespace, p->job.meta.name, index);
	if (store_get(p->m->stores[KIND_TRAININGJOBS], key, &obj))
		return false;
	meta = json_object_get(obj, "metadata");
	taken = !meta_owned_by(obj, p->job.meta.uid) &&
		!json_object_get(meta, "deletionTimestamp");
	json_array_foreach(json_object_get(meta, "ownerReferences"), i, ref) {
		const char *kind = json_string_value(json_object_get(ref, "kind"));
		const char *name = json_string_value(json_object_get(ref, "name"));

		if (kind && name && !strcmp(kind, TJ_KIND) && !strcmp(name, p->job.meta.name))
			taken = false;
	}
	json_decref(obj);
	return taken;
}

/* An array job's elements (docs/design.md 12), from the TrainingJob cache's "array" index. */
void tj_read_elements(struct tj_pass *p, struct tj_input *in)
{
	json_t *obj;
	size_t i;

	if (!p->job.spec.array)
		return;
	in->max_array_size = p->m->opts->max_array_size;
	in->cancel_tasks = meta_annotation(&p->job.meta, ANNOTATION_CANCEL_TASKS);
	if (store_by_index(p->m->stores[KIND_TRAININGJOBS], "array", p->key, &p->element_objs))
		return;
	p->elements = calloc(json_array_size(p->element_objs) + 1, sizeof(*p->elements));
	if (!p->elements)
		return;
	json_array_foreach(p->element_objs, i, obj) {
		const json_t *meta = json_object_get(obj, "metadata");
		const char *index = meta_str(obj, "labels", LABEL_ARRAY_INDEX);
		struct tj_element *e = &p->elements[p->n_elements];
		char *end;
		long n;

		if (!index || !meta_owned_by(obj, p->job.meta.uid))
			continue;
		n = strtol(index, &end, 10);
		if (*end || n < 0 || n >= SLURM_ARRAY_INDEX_LIMIT)
			continue;
		e->index = (int32_t)n;
		e->name = json_string_value(json_object_get(meta, "name"));
		e->uid = json_string_value(json_object_get(meta, "uid"));
		e->deleting = json_object_get(meta, "deletionTimestamp") != NULL;
		if (tj_phase_parse(json_string_value(json_object_get(json_object_get(obj, "status"),
								     "phase")), &e->phase))
			e->phase = TJ_PHASE_UNSET;
		p->n_elements++;
	}
	in->elements = p->elements;
	in->n_elements = p->n_elements;
	in->element_taken = element_taken;
	in->element_ctx = p;
}

/*
 * Parse and validate the job into p->job; what is wrong goes into p->invalid.
 * A new generation with a credential-looking env gets a warning event.
 */
void tj_validate_job(struct tj_pass *p)
{
	struct manager *m = p->m;

	if (tj_parse(p->obj, &p->job, &p->errs) == 0) {
		/* The partition's defaults are the job's effective spec, in memory only. */
		if (partitions_apply(m, &p->job, &p->partition))
			field_errors_add(&p->errs, "spec.partition", "out of memory");
		tj_validate(&p->job, &p->errs);
		/*
		 * Built-in mode pins every rank: what it cannot model, it must
		 * refuse before it admits. A gang admitted already (by an earlier
		 * version) was placed: it is not ended for it.
		 */
		if (!(p->job.spec.queue && *p->job.spec.queue) &&
		    m->opts->gang_scheduler == GANG_BUILTIN &&
		    !condition_is_true(&p->job.status.conditions, "Admitted"))
			affinity_refuse_builtin(&p->job, &p->errs);
	}
	if (!p->job.spec.image && !m->opts->default_image)
		field_errors_add(&p->errs, "spec.image",
				 "required: this controller runs without --default-image");
	if (field_errors_count(&p->errs))
		field_errors_join(&p->errs, &p->invalid);
	if (p->job.status.observed_generation == p->job.meta.generation)
		return;
	for (size_t i = 0; i < p->job.spec.n_envs; i++)
		if (tj_env_looks_secret(p->job.spec.envs[i].name)) {
			char msg[512];

			snprintf(msg, sizeof(msg), "spec.envs.%s looks like a credential and is "
				 "stored in plain text in the TrainingJob; use secretEnvs to "
				 "take it from a Secret", p->job.spec.envs[i].name);
			manager_event(m, p->obj, true, "PlainTextCredential", "Validate", msg);
		}
}

/* What the job took from its Partition, or why it has none, as planner input. */
void tj_input_partition(struct tj_pass *p, struct tj_input *in)
{
	if (p->partition.verdict == PARTITION_REFUSED) {
		in->invalid = p->partition.message;
		in->invalid_reason = "InvalidPartition";
	}
	if (p->partition.verdict == PARTITION_UNKNOWN)
		in->partition_missing = p->partition.message;
	in->partition = p->partition.verdict == PARTITION_APPLIED ? p->partition.name : NULL;
	/* Its spec now, for the record the first admission keeps. */
	if (in->partition && !p->job.status.admitted_time &&
	    !store_get(p->m->stores[KIND_PARTITIONS], in->partition, &p->partition_obj))
		in->partition_spec = json_object_get(p->partition_obj, "spec");
}

/* The pods, Volumes, code, nodes and PodGroups read for the pass, as planner input. */
void tj_input_caches(struct tj_pass *p, struct tj_input *in)
{
	struct manager *m = p->m;

	in->pods = p->views;
	in->n_pods = p->n_views;
	in->expectations_met = expect_satisfied(m->expect, p->key, manager_now_ms());
	if (!in->expectations_met)
		log_debug("tj", "%s: waiting for the watch to bring back our pod writes", p->key);
	in->volumes = p->volumes;
	in->n_volumes = p->n_volumes;
	in->code = p->code_in;
	in->n_code = p->n_code;
	in->node_ok = node_ok;
	in->node_label = node_label;
	in->node_known = node_known;
	in->node_ctx = m;
	in->node_evicts = node_evicts;
	in->evicts_ctx = p;
	read_podgroups(p);
	in->podgroups = p->podgroups;
	in->n_podgroups = p->n_podgroups;
}

/*
 * Built-in mode, an admitted job: whether a waiting job of a higher tier
 * lists it in status.preempting (gang_preempt.h). 0 or CADRE_ENOMEM.
 */
int tj_read_preempted(struct tj_pass *p, struct tj_input *in)
{
	bool yes = false;
	int err;

	if (in->mode != GANG_BUILTIN || !condition_is_true(&p->job.status.conditions, "Admitted"))
		return 0;
	err = gang_preempted(p->m, &p->job, &p->preempted, p->preemptor, &yes);
	if (!err && yes)
		in->preempted = &p->preempted;
	return err;
}
