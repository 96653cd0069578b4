/*
 * tj_reconcile.c - the TrainingJob reconciler: plumbing around the pure
 * planner (tj_plan.c). Read the caches, decide, store the decision, act.
 *
 * The order of one pass:
 *   1. read the job, its pods, its Volumes, its Service and its entrypoint
 *      ConfigMap from the caches;
 *   2. plan; if the gang needs admitting, ask the admission queue and plan
 *      again with its verdict;
 *   3. PUT the status, when it differs from what is stored (and not for a
 *      young start's progress alone: tj_status_progress_only). This comes
 *      before any other write: the status carries every decision the
 *      writes act on (an admission and the node of every rank, a restart
 *      and its counters), so a process that stops after any write leaves
 *      a status from which the next one finishes the work. When the status
 *      cannot be stored (a 409, the server down), nothing else is done;
 *   4. record the plan's events, now that its decision is stored;
 *   5. make the writes the plan lists (the entrypoint ConfigMap and the
 *      Service before any pod, and no pod unless they were made; creates
 *      recorded as expectations first, so a second pass before the watch
 *      catches up makes none);
 *   6. count the metrics of what the stored status says happened.
 */
#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "api/fielderr.h"
#include "api/meta.h"
#include "api/trainingjob.h"
#include "controller/build/build.h"
#include "controller/admission/affinity.h"
#include "controller/manager/cache_record.h"
#include "controller/admission/gang.h"
#include "controller/admission/kueue.h"
#include "controller/manager/configmap_trim.h"
#include "controller/manager/manager.h"
#include "controller/manager/status.h"
#include "controller/partition/partitions.h"
#include "controller/trainingjob/podview.h"
#include "controller/manager/reconcile.h"
#include "controller/trainingjob/tj_depend_read.h"
#include "controller/trainingjob/tj_plan.h"
#include "controller/code/code.h"
#include "kube/client.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Everything one pass reads, owned in one place so one function frees it. */
struct tj_pass {
	struct manager *m;
	char key[STORE_KEY_MAX];
	json_t *obj;                 /* the job as cached */
	struct trainingjob job;
	char job_id[16];             /* the id claimed while status.jobId is unset (jobids.h) */
	json_t *partition_obj;       /* the job's Partition as cached, before its admission */
	struct field_errors errs;
	struct buf invalid;
	json_t *pods;                /* array of pod objects */
	json_t *podgroup_objs;       /* native mode: the job's PodGroups */
	json_t *entrypoint;          /* the entrypoint ConfigMap as cached (trimmed), or NULL */
	char entrypoint_digest[BUILD_DIGEST_SIZE];  /* of the data it must hold; "" unknown */
	bool entrypoint_ready;       /* it is the job's and current: pods may be created */
	struct tj_podgroup *podgroups;
	size_t n_podgroups;
	struct podview *views;
	size_t n_views;
	json_t **volume_objs;
	struct tj_volume_state *volumes;
	size_t n_volumes;
	char **label_values;         /* accelerator label values that match */
	size_t n_label_values;
	struct code_state *code;     /* spec.code's bundles in the namespace */
	struct tj_code_state *code_in;  /* the same, as the planner's input */
	struct build_code *code_build;  /* the same, as the builder's */
	size_t n_code;
	struct tj_plan plan;
	struct jobmemo_admission admission;  /* the strings of the admission verdict */
	atomic_int created;          /* pods created by this pass (run_actions) */
	atomic_bool refused;         /* the API server refused a create of this pass */
	atomic_bool no_group;        /* native mode: this pass could not make the PodGroup */
	atomic_bool no_service;      /* the Service of the job's name was refused or is another's */
	struct refusal refusal;      /* the last refusal remembered (jobmemo.h) */
	struct tj_refusal refusal_in;  /* the same, as the planner's input */
	struct job_partition partition;  /* the job's Partition, applied to job.spec */
	struct tj_dep_verdict dependency;  /* spec.dependency against the caches */
	json_t *element_objs;        /* an array job's elements, as cached */
	struct tj_element *elements;
	size_t n_elements;
};

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

static void read_volumes(struct tj_pass *p)
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
static void read_code(struct tj_pass *p)
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

/*
 * Once its code is whole, a job that has not finished is an owner of each
 * bundle it names, so that the bundle goes with the last of its jobs
 * (code_own). 0 or the error of a patch, retried by the queue.
 */
static int own_code(struct tj_pass *p)
{
	enum tj_phase phase = p->plan.status.phase;
	int err;

	if (phase == TJ_PHASE_SUCCEEDED || phase == TJ_PHASE_FAILED)
		return 0;
	for (size_t i = 0; i < p->n_code; i++)
		if (!p->code[i].complete)
			return 0;
	for (size_t i = 0; i < p->n_code; i++)
		if ((err = code_own(p->m, &p->job, p->job.spec.code[i].digest)))
			return err;
	return 0;
}

static void read_pods(struct tj_pass *p)
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
static void read_label_values(struct tj_pass *p)
{
	if (!p->job.spec.resources.has_accel)
		return;
	gang_matching_label_values(p->m, p->job.spec.resources.accel.type, &p->label_values,
				   &p->n_label_values);
}

static void fill_build_opts(struct tj_pass *p, struct build_opts *bo)
{
	memset(bo, 0, sizeof(*bo));
	bo->mode = p->job.spec.queue && *p->job.spec.queue ? GANG_KUEUE :
		   p->m->opts->gang_scheduler;
	bo->accelerator_label = p->m->opts->accelerator_label;
	bo->cluster_domain = p->m->opts->cluster_domain;
	bo->default_image = p->m->opts->default_image;
	bo->label_values = (const char *const *)p->label_values;
	bo->n_label_values = p->n_label_values;
	bo->claim_names = NULL;
	bo->n_claim_names = p->n_volumes;
	bo->code = p->code_build;
	bo->n_code = p->n_code;
}

/* The job as cached, with the id claimed for it while its status has none (a shallow view). */
static struct trainingjob id_view(const struct tj_pass *p)
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
static void read_entrypoint(struct tj_pass *p)
{
	char name[256], key[STORE_KEY_MAX];
	struct build_opts bo;
	struct trainingjob view = id_view(p);

	fill_build_opts(p, &bo);
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
static void read_refusal(struct tj_pass *p, struct tj_input *in)
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
static int read_dependency(struct tj_pass *p, struct tj_input *in)
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
static void read_elements(struct tj_pass *p, struct tj_input *in)
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
 * Element index of the array job: its spec as the user wrote it (the cached
 * object, not the partition's effective one), without array, dependency
 * (the array's own, already met) and ttlSecondsAfterFinished (the array's
 * TTL takes its elements with it); in the array's recorded partition;
 * owned by the array; labelled and annotated so that its pods see
 * SLURM_ARRAY_* (build_pod.c). New reference or NULL.
 */
static json_t *element_object(struct tj_pass *p, int index)
{
	const json_t *meta = json_object_get(p->obj, "metadata");
	json_t *spec = json_deep_copy(json_object_get(p->obj, "spec"));
	json_t *labels = json_deep_copy(json_object_get(meta, "labels"));
	json_t *annotations = json_object(), *obj;
	const char *user = meta_annotation(&p->job.meta, ANNOTATION_SUBMITTED_BY);
	const char *slurm_name = meta_label(&p->job.meta, LABEL_SLURM_NAME);
	char name[128], idx[16];

	snprintf(name, sizeof(name), "%s-%d", p->job.meta.name, index);
	snprintf(idx, sizeof(idx), "%d", index);
	if (!labels)
		labels = json_object();
	if (!spec || !labels || !annotations)
		goto fail;
	json_object_del(spec, "array");
	json_object_del(spec, "dependency");
	json_object_del(spec, "ttlSecondsAfterFinished");
	if (p->plan.status.partition && !json_object_get(spec, "partition") &&
	    json_object_set_new(spec, "partition", json_string(p->plan.status.partition)))
		goto fail;
	/* Every element has the array's Slurm job name, as in Slurm. */
	if (json_object_set_new(labels, LABEL_SLURM_NAME,
				json_string(slurm_name ? slurm_name : p->job.meta.name)) ||
	    json_object_set_new(labels, LABEL_ARRAY_JOB, json_string(p->job.meta.name)) ||
	    json_object_set_new(labels, LABEL_ARRAY_INDEX, json_string(idx)) ||
	    json_object_set_new(annotations, ANNOTATION_ARRAY_JOB_ID,
				json_string(p->plan.status.job_id ? p->plan.status.job_id : "")) ||
	    json_object_set_new(annotations, ANNOTATION_ARRAY_TASKS,
				json_string(p->job.spec.array)) ||
	    (user && json_object_set_new(annotations, ANNOTATION_SUBMITTED_BY, json_string(user))))
		goto fail;
	obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:o, s:[{s:s, s:s, s:s, s:s, s:b, s:b}]}, "
			"s:o}", "apiVersion", TJ_API_VERSION, "kind", TJ_KIND,
			"metadata", "name", name, "namespace", p->job.meta.namespace,
			"labels", labels, "annotations", annotations, "ownerReferences",
			"apiVersion", TJ_API_VERSION, "kind", TJ_KIND, "name", p->job.meta.name,
			"uid", p->job.meta.uid, "controller", 1, "blockOwnerDeletion", 1,
			"spec", spec);
	return obj;
fail:
	json_decref(spec);
	json_decref(labels);
	json_decref(annotations);
	return NULL;
}

/*
 * Say that a create failed: a warning and a FailedCreate event, except in a
 * namespace being deleted, which refuses every create and takes the job
 * along with it (nothing to report, nothing to retry).
 */
static void create_failed(struct tj_pass *p, int ret, const char *kind, const char *name,
			  const struct kube_status *st)
{
	if (ret == CADRE_ETERMINATING) {
		log_debug("tj", "%s: no %s %s: the namespace is being deleted", p->key, kind, name);
		return;
	}
	log_warn("tj", "%s: cannot create %s %s: %s", p->key, kind, name, st->message);
	manager_event(p->m, p->obj, true, "FailedCreate", "Create", st->message);
}

/* TJ_CREATE_ELEMENT: recorded as expected first, so a pass before the watch shows it makes none. */
static int create_element(struct tj_pass *p, const struct tj_action *a)
{
	json_t *obj = element_object(p, a->rank);
	const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"),
							     "name"));
	struct kube_status st;
	int ret;

	if (!obj || !name) {
		json_decref(obj);
		return CADRE_ENOMEM;
	}
	ret = expect_create(p->m->expect, p->key, name, manager_now_ms());
	if (!ret)
		ret = kube_client_create(p->m->http, &kube_resource_trainingjobs,
					 p->job.meta.namespace, obj, NULL, &st);
	if (ret == CADRE_EEXIST) {
		expect_observed_create(p->m->expect, p->key, name);
		ret = 0;
	} else if (ret) {
		expect_observed_create(p->m->expect, p->key, name);
		create_failed(p, ret, "element", name, &st);
	}
	json_decref(obj);
	return ret;
}

/* TJ_DELETE_ELEMENT: a cancelled element (its pods go with it). */
static int delete_element(struct tj_pass *p, const struct tj_action *a)
{
	struct kube_delete_opts opts = { .propagation_policy = "Background", .uid = a->uid };
	struct kube_status st;
	int ret = kube_client_delete(p->m->http, &kube_resource_trainingjobs, p->job.meta.namespace,
				     a->pod, &opts, NULL, &st);

	if (ret == CADRE_ENOTFOUND || ret == CADRE_ECONFLICT)
		return 0;
	if (ret)
		log_warn("tj", "%s: cannot delete element %s: %s", p->key, a->pod, st.message);
	return ret;
}

static void pass_release(struct tj_pass *p)
{
	tj_plan_release(&p->plan);
	json_decref(p->partition_obj);
	tj_dep_verdict_release(&p->dependency);
	free(p->elements);
	json_decref(p->element_objs);
	jobmemo_admission_release(&p->admission);
	for (size_t i = 0; i < p->n_volumes; i++)
		json_decref(p->volume_objs[i]);
	free(p->volume_objs);
	free(p->volumes);
	free(p->code);
	free(p->code_in);
	free(p->code_build);
	free(p->views);
	json_decref(p->pods);
	free(p->podgroups);
	json_decref(p->podgroup_objs);
	json_decref(p->entrypoint);
	for (size_t i = 0; i < p->n_label_values; i++)
		free(p->label_values[i]);
	free(p->label_values);
	tj_release(&p->job);
	field_errors_release(&p->errs);
	buf_release(&p->invalid);
	json_decref(p->obj);
}

/*
 * st as the API server's 409 would be, with a message that says whose the
 * object of the job's name is instead (kind: "ConfigMap", "Service").
 */
static void foreign_status(struct kube_status *st, const char *kind, const char *name,
			   const json_t *obj)
{
	const json_t *ref = json_array_get(json_object_get(json_object_get(obj, "metadata"),
							   "ownerReferences"), 0);
	const char *owner_kind = json_string_value(json_object_get(ref, "kind"));
	const char *owner = json_string_value(json_object_get(ref, "name"));
	struct buf msg;

	kube_status_clear(st);
	st->code = CADRE_EEXIST;
	st->http_status = 409;
	snprintf(st->reason, sizeof(st->reason), "AlreadyExists");
	/* A message a person reads: cut with "..." to what a Status message holds. */
	buf_init(&msg, sizeof(st->message) - 1);
	if (ref)
		buf_addf_cut(&msg, "%s %s already exists and belongs to %s %s, not to this "
			     "TrainingJob; cadre leaves it alone: delete or rename it and the "
			     "job's pods are created", kind, name,
			     owner_kind ? owner_kind : "an object", owner ? owner : "");
	else
		buf_addf_cut(&msg, "%s %s already exists and has no owner, so it is not this "
			     "TrainingJob's; cadre leaves it alone: delete or rename it and the "
			     "job's pods are created", kind, name);
	snprintf(st->message, sizeof(st->message), "%s", buf_str(&msg));
	buf_release(&msg);
}

/*
 * Remember that an object the pods need (kind "ConfigMap" or "Service", a
 * negative rank of tj_plan.h) could not be made, for the next plan.
 */
static int object_refused(struct tj_pass *p, const char *kind, const char *name, int rank,
			  const struct kube_status *st)
{
	int attempt = tj_attempt(&p->plan.status);

	create_failed(p, st->code, kind, name, st);
	atomic_store(&p->refused, true);
	return jobmemo_refused(p->m->memo, p->key, p->job.meta.uid, name, rank, attempt, st,
			       manager_time(p->m));
}

static int service_refused(struct tj_pass *p, const struct kube_status *st)
{
	atomic_store(&p->no_service, true);
	return object_refused(p, "Service", p->job.meta.name, TJ_REFUSAL_SERVICE, st);
}

/*
 * A Service of the job's name already exists: the job's own, made by an
 * earlier pass the cache has not shown yet, or someone else's, which is
 * left alone and said (its selector is not the job's: no rank would find
 * its peers through it). 0 when it is the job's.
 */
static int service_exists_already(struct tj_pass *p)
{
	const char *name = p->job.meta.name;
	struct kube_status st;
	json_t *got = NULL;
	int ret;

	ret = kube_client_get(p->m->http, &kube_resource_services, p->job.meta.namespace, name,
			      &got, &st);
	if (ret) {
		log_warn("tj", "%s: cannot read Service %s: %s", p->key, name, st.message);
		return ret == CADRE_ENOTFOUND ? CADRE_EAGAIN : ret;
	}
	if (meta_owned_by(got, p->job.meta.uid)) {
		json_decref(got);
		jobmemo_created(p->m->memo, p->key, name);
		return 0;
	}
	foreign_status(&st, "Service", name, got);
	json_decref(got);
	ret = service_refused(p, &st);
	return ret ? ret : CADRE_EEXIST;
}

static int create_service(struct tj_pass *p)
{
	struct kube_status st;
	struct buf err;
	json_t *svc = NULL;
	int ret;

	buf_init(&err, 1024);
	ret = build_service(&p->job, &svc, &err);
	if (ret)
		log_warn("tj", "%s: cannot build the Service: %s", p->key, buf_str(&err));
	buf_release(&err);
	if (ret)
		return ret;
	ret = kube_client_create(p->m->http, &kube_resource_services, p->job.meta.namespace, svc,
				 NULL, &st);
	json_decref(svc);
	if (ret == CADRE_EEXIST)
		return service_exists_already(p);
	if (ret && refusal_is_final(&st))
		return service_refused(p, &st) ? CADRE_ENOMEM : ret;
	if (ret)
		create_failed(p, ret, "Service", p->job.meta.name, &st);
	else
		jobmemo_created(p->m->memo, p->key, p->job.meta.name);
	return ret;
}

/* Remember that the entrypoint ConfigMap could not be made, for the next plan (tj_plan.h). */
static int entrypoint_refused(struct tj_pass *p, const char *name, const struct kube_status *st)
{
	return object_refused(p, "ConfigMap", name, TJ_REFUSAL_ENTRYPOINT, st);
}

/* A ConfigMap of the job's name that is not the job's: say whose, touch nothing. */
static int entrypoint_clash(struct tj_pass *p, const char *name, const json_t *cm)
{
	struct kube_status st;
	int ret;

	foreign_status(&st, "ConfigMap", name, cm);
	ret = entrypoint_refused(p, name, &st);
	return ret ? ret : CADRE_EEXIST;
}

/*
 * Bring the job's entrypoint ConfigMap to this controller's script and the
 * job's shared variables, from what the cache shows (cm, trimmed): create it
 * when absent, PUT it over an earlier controller's script or variables the
 * spec no longer gives (guarded by its resourceVersion), leave a foreign one
 * alone. 0 when the job's ConfigMap is now current.
 */
static int sync_entrypoint(struct tj_pass *p, const char *name, const json_t *cm)
{
	struct trainingjob view;
	enum configmap_state state = configmap_state(cm, p->job.meta.uid, p->entrypoint_digest);
	const json_t *rv = json_object_get(json_object_get(cm, "metadata"), "resourceVersion");
	struct build_opts bo;
	struct kube_status st;
	struct buf err;
	json_t *want = NULL;
	int ret;

	if (state == CONFIGMAP_CURRENT)
		return 0;
	if (state == CONFIGMAP_FOREIGN)
		return entrypoint_clash(p, name, cm);
	buf_init(&err, 1024);
	fill_build_opts(p, &bo);
	view = id_view(p);
	ret = build_entrypoint_configmap(&view, &bo, &want, &err);
	if (ret)
		log_warn("tj", "%s: cannot build the entrypoint ConfigMap: %s", p->key,
			 buf_str(&err));
	buf_release(&err);
	if (ret)
		return ret;
	kube_status_clear(&st);
	if (state == CONFIGMAP_STALE) {
		ret = json_object_set(json_object_get(want, "metadata"), "resourceVersion",
				      (json_t *)rv) ? CADRE_ENOMEM :
		      kube_client_replace(p->m->http, &kube_resource_configmaps,
					  p->job.meta.namespace, name, want, NULL, &st);
		if (!ret)
			log_info("tj", "%s: updated ConfigMap %s to this controller's entrypoint and the job's variables",
				 p->key, name);
	} else {
		ret = kube_client_create(p->m->http, &kube_resource_configmaps,
					 p->job.meta.namespace, want, NULL, &st);
	}
	json_decref(want);
	if (ret == CADRE_EEXIST || ret == CADRE_ECONFLICT)
		return ret;  /* the cache is behind: the caller reads the object itself */
	if (ret && refusal_is_final(&st))
		return entrypoint_refused(p, name, &st) ? CADRE_ENOMEM : ret;
	if (ret == CADRE_ETERMINATING)
		log_debug("tj", "%s: no ConfigMap %s: the namespace is being deleted", p->key, name);
	else if (ret)
		log_warn("tj", "%s: cannot write ConfigMap %s: %s", p->key, name, st.message);
	return ret;
}

/*
 * TJ_CREATE_ENTRYPOINT. The cache may be behind the API server (our own
 * create not seen yet, a foreign ConfigMap without our label never
 * cached): when a write meets an object it did not expect, the object is
 * read and judged once more.
 */
static int create_entrypoint(struct tj_pass *p)
{
	char name[256];
	json_t *got = NULL, *trimmed;
	int ret;

	if (build_entrypoint_name(p->job.meta.name, name, sizeof(name)))
		return CADRE_EINVAL;
	ret = sync_entrypoint(p, name, p->entrypoint);
	if (ret == CADRE_EEXIST && p->entrypoint && configmap_state(p->entrypoint,
			p->job.meta.uid, p->entrypoint_digest) == CONFIGMAP_FOREIGN)
		return ret;  /* the clash is already said */
	if (ret == CADRE_EEXIST || ret == CADRE_ECONFLICT) {
		struct kube_status st;

		ret = kube_client_get(p->m->http, &kube_resource_configmaps, p->job.meta.namespace,
				      name, &got, &st);
		if (ret) {
			log_warn("tj", "%s: cannot read ConfigMap %s: %s", p->key, name, st.message);
			return ret == CADRE_ENOTFOUND ? CADRE_EAGAIN : ret;
		}
		trimmed = configmap_trim(got, NULL);
		json_decref(got);
		if (!trimmed)
			return CADRE_ENOMEM;
		ret = sync_entrypoint(p, name, trimmed);
		json_decref(trimmed);
	}
	if (ret)
		return ret;
	jobmemo_created(p->m->memo, p->key, name);
	p->entrypoint_ready = true;
	return 0;
}

/*
 * Native mode: an API server whose GenericWorkload gate is off drops
 * spec.schedulingGroup without a word, and the pod would be scheduled on
 * its own. Take such a pod back at once and treat it as a refused create
 * (status.message and Admitted say why; the gang timeout ends the attempt).
 */
static int check_scheduling_group(struct tj_pass *p, const struct tj_action *a,
				  const char *name, const json_t *created, struct kube_status *st)
{
	struct kube_delete_opts opts = { .propagation_policy = "Background",
					 .grace_period_set = true, .grace_period_seconds = 0 };
	char group[256];

	if (build_podgroup_name(p->job.meta.name, a->attempt, group, sizeof(group)) ||
	    build_pod_kept_scheduling_group(created, group))
		return 0;
	opts.uid = json_string_value(json_object_get(json_object_get(created, "metadata"), "uid"));
	kube_client_delete(p->m->http, &kube_resource_pods, p->job.meta.namespace, name, &opts,
			   NULL, NULL);
	kube_status_clear(st);
	st->code = CADRE_EREJECTED;
	st->http_status = 422;
	snprintf(st->reason, sizeof(st->reason), "SchedulingGroupDropped");
	/* The pod name is a hostname (at most 63 bytes): the message fits. */
	if (snprintf(st->message, sizeof(st->message),
		     "the API server dropped spec.schedulingGroup from pod %.63s, so kube-scheduler "
		     "would place it alone; cadre deleted it. --gang-scheduler=native needs "
		     "--feature-gates=GenericWorkload=true,GangScheduling=true on kube-apiserver "
		     "and kube-scheduler (1.37: GenericWorkload=true)", name) < 0)
		st->message[0] = '\0';
	log_error("tj", "%s: %s", p->key, st->message);
	return CADRE_EREJECTED;
}

/* Native mode: the PodGroup of the attempt, before any of its pods. */
static int create_podgroup(struct tj_pass *p, const struct tj_action *a)
{
	struct kube_status st;
	struct buf err;
	json_t *pg = NULL;
	int ret;

	buf_init(&err, 1024);
	ret = build_podgroup(&p->job, a->attempt, p->m->podgroups->api_version, &pg, &err);
	if (ret)
		log_warn("tj", "%s: cannot build the PodGroup: %s", p->key, buf_str(&err));
	buf_release(&err);
	if (ret)
		return ret;
	ret = kube_client_create(p->m->http, p->m->podgroups, p->job.meta.namespace, pg, NULL,
				 &st);
	if (ret && ret != CADRE_EEXIST)
		create_failed(p, ret, "PodGroup",
			      json_string_value(json_object_get(json_object_get(pg, "metadata"),
								"name")), &st);
	json_decref(pg);
	return ret == CADRE_EEXIST ? 0 : ret;
}

static int delete_podgroup(struct tj_pass *p, const struct tj_action *a)
{
	struct kube_delete_opts opts = { .propagation_policy = "Background" };
	struct kube_status st;
	int ret;

	ret = kube_client_delete(p->m->http, p->m->podgroups, p->job.meta.namespace, a->pod,
				 &opts, NULL, &st);
	if (ret == CADRE_ENOTFOUND)
		return 0;
	if (ret)
		log_warn("tj", "%s: cannot delete PodGroup %s: %s", p->key, a->pod, st.message);
	return ret;
}

static int create_pod(struct tj_pass *p, const struct tj_action *a)
{
	const char *claims[p->n_volumes + 1];
	struct trainingjob next = p->job;
	struct build_opts bo;
	struct kube_status st;
	struct buf err;
	json_t *pod = NULL, *created = NULL;
	char name[STORE_KEY_MAX];
	int ret;

	for (size_t i = 0; i < p->n_volumes; i++)
		claims[i] = p->volumes[i].claim_name;
	fill_build_opts(p, &bo);
	bo.claim_names = claims;
	/* Built-in mode: on the node the stored admission chose for the rank. */
	if (bo.mode == GANG_BUILTIN)
		for (size_t i = 0; i < p->plan.status.n_nodes; i++)
			if (p->plan.status.nodes[i].rank == a->rank)
				bo.node = p->plan.status.nodes[i].node;
	/* The pod carries the ids of the status about to be written (a shallow view). */
	next.status = p->plan.status;
	buf_init(&err, 2048);
	ret = build_pod(&next, a->rank, a->attempt, &bo, &pod, &err);
	if (ret) {
		/* The spec cannot become a pod now: say so, do not retry in a loop. */
		log_warn("tj", "%s: cannot build rank %d: %s", p->key, a->rank, buf_str(&err));
		if (a->rank == 0)
			manager_event(p->m, p->obj, true,
				      ret == CADRE_EAGAIN ? "NoMatchingNodes" : "InvalidSpec",
				      "Create", buf_str(&err));
		buf_release(&err);
		return ret == CADRE_ENOMEM ? ret : CADRE_EINVAL;
	}
	buf_release(&err);
	snprintf(name, sizeof(name), "%s-%d", p->job.meta.name, a->rank);
	ret = expect_create(p->m->expect, p->key, name, manager_now_ms());
	if (!ret)
		ret = kube_client_create(p->m->http, &kube_resource_pods, p->job.meta.namespace,
					 pod, &created, &st);
	json_decref(pod);
	if (!ret && bo.mode == GANG_NATIVE)
		ret = check_scheduling_group(p, a, name, created, &st);
	json_decref(created);
	if (ret == CADRE_EEXIST) {
		/* Made by an earlier pass or process; the watch will show it. */
		expect_observed_create(p->m->expect, p->key, name);
		jobmemo_created(p->m->memo, p->key, name);
		return 0;
	}
	if (ret) {
		expect_observed_create(p->m->expect, p->key, name);
		create_failed(p, ret, "pod", name, &st);
		/* Nothing will appear in the caches: remember it for the next plan. */
		if (refusal_is_final(&st)) {
			atomic_store(&p->refused, true);
			if (jobmemo_refused(p->m->memo, p->key, p->job.meta.uid, name, a->rank,
					    a->attempt, &st, manager_time(p->m)))
				return CADRE_ENOMEM;
		}
		return ret;
	}
	jobmemo_created(p->m->memo, p->key, name);
	atomic_fetch_add(&p->created, 1);
	return 0;
}

static int delete_pod(struct tj_pass *p, const struct tj_action *a)
{
	struct kube_delete_opts opts = { .propagation_policy = "Background", .uid = a->uid };
	struct kube_status st;
	int ret;

	ret = expect_delete(p->m->expect, p->key, a->pod, manager_now_ms());
	if (ret)
		return ret;
	ret = kube_client_delete(p->m->http, &kube_resource_pods, p->job.meta.namespace, a->pod,
				 &opts, NULL, &st);
	if (ret == CADRE_ENOTFOUND || ret == CADRE_ECONFLICT) {
		/* Already gone, or a newer pod of that name: nothing of ours to delete. */
		expect_observed_delete(p->m->expect, p->key, a->pod);
		return 0;
	}
	if (ret) {
		expect_observed_delete(p->m->expect, p->key, a->pod);
		log_warn("tj", "%s: cannot delete pod %s: %s", p->key, a->pod, st.message);
	}
	return ret;
}

static int delete_job(struct tj_pass *p)
{
	struct kube_delete_opts opts = { .propagation_policy = "Background",
					 .uid = p->job.meta.uid };
	struct kube_status st;
	int ret;

	log_info("tj", "%s: ttlSecondsAfterFinished passed; deleting the TrainingJob", p->key);
	ret = kube_client_delete(p->m->http, &kube_resource_trainingjobs, p->job.meta.namespace,
				 p->job.meta.name, &opts, NULL, &st);
	if (ret == CADRE_ENOTFOUND || ret == CADRE_ECONFLICT)
		return 0;
	if (ret)
		log_warn("tj", "%s: cannot delete the TrainingJob: %s", p->key, st.message);
	return ret;
}

static int do_action(struct tj_pass *p, const struct tj_action *a)
{
	int ret = 0;

	switch (a->kind) {
	case TJ_CREATE_ENTRYPOINT:
		ret = create_entrypoint(p);
		break;
	case TJ_CREATE_SERVICE:
		ret = create_service(p);
		break;
	case TJ_CREATE_POD:
		ret = create_pod(p, a);
		break;
	case TJ_DELETE_POD:
		ret = delete_pod(p, a);
		break;
	case TJ_DELETE_JOB:
		ret = delete_job(p);
		break;
	case TJ_CREATE_PODGROUP:
		ret = p->m->podgroups ? create_podgroup(p, a) : 0;
		if (ret)
			atomic_store(&p->no_group, true);
		break;
	case TJ_DELETE_PODGROUP:
		ret = p->m->podgroups ? delete_podgroup(p, a) : 0;
		break;
	case TJ_CREATE_ELEMENT:
		ret = create_element(p, a);
		break;
	case TJ_DELETE_ELEMENT:
		ret = delete_element(p, a);
		break;
	}
	return ret;
}

/*
 * Pod writes of one kind go out together: one at a time, the 64 creates of
 * a gang are seconds of round trips, each waiting on etcd. Creates start
 * with one probe: a quota or an admission webhook that refuses one pod
 * refuses them all, and one refusal is enough. The admission has already
 * decided that the gang fits, so once the probe is made, the rest go at
 * once (the Job controller's doubling batches would cost a round trip per
 * doubling); a refusal among them stops the creates not yet sent. Deletes
 * touch only our own pods and all go at once. At most PARALLEL_WRITES requests are in
 * flight; the client's QPS limit still applies to each. The limit is what
 * keeps the QPS used when the server is slow to answer: at 64, with writes
 * taking ~2 s on a loaded 2-core control plane, a 1024-node gang's creates
 * went at ~30/s (34 s, where the Job controller, with hundreds in flight,
 * made its 1024 in 11 s at the same QPS 100).
 */
#define PARALLEL_WRITES 256
#define WRITER_STACK_BYTES (256u << 10)

struct wave {
	struct tj_pass *p;
	const struct tj_action *acts;
	atomic_size_t next;
	size_t end;
	atomic_int first_err;
};

static void *wave_worker(void *arg)
{
	struct wave *w = arg;
	size_t i;

	while ((i = atomic_fetch_add(&w->next, 1)) < w->end) {
		int ret, none = 0;

		/* After a refused create, the creates not yet sent are not sent. */
		if (w->acts[i].kind == TJ_CREATE_POD && atomic_load(&w->first_err))
			break;
		ret = do_action(w->p, &w->acts[i]);
		if (ret)
			atomic_compare_exchange_strong(&w->first_err, &none, ret);
	}
	return NULL;
}

/*
 * Run acts[0..n), all of one kind or all of what the pods wait for, in
 * batches (see above). Returns the first error.
 */
static int run_wave(struct tj_pass *p, const struct tj_action *acts, size_t n)
{
	struct wave w = { .p = p, .acts = acts };
	pthread_t threads[PARALLEL_WRITES];
	/* Only creates probe first; deletes of our own pods all go at once. */
	bool probe = acts[0].kind == TJ_CREATE_POD;
	size_t start = 0, batch = probe ? 1 : n;
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WRITER_STACK_BYTES);
	atomic_init(&w.first_err, 0);
	while (start < n) {
		size_t end = start + batch < n ? start + batch : n, spawned = 0;

		atomic_init(&w.next, start);
		w.end = end;
		/* This thread is one of the writers; a thread that cannot start is not needed. */
		while (spawned + 1 < end - start && spawned + 1 < PARALLEL_WRITES &&
		       pthread_create(&threads[spawned], &attr, wave_worker, &w) == 0)
			spawned++;
		wave_worker(&w);
		for (size_t t = 0; t < spawned; t++)
			pthread_join(threads[t], NULL);
		if (atomic_load(&w.first_err) && probe)
			break;
		start = end;
		batch = n;
	}
	pthread_attr_destroy(&attr);
	return atomic_load(&w.first_err);
}

static bool runs_in_waves(enum tj_action_kind kind)
{
	return kind == TJ_CREATE_POD || kind == TJ_DELETE_POD || kind == TJ_CREATE_ELEMENT;
}

/*
 * What the pods wait for. None of these waits for another, so they go out
 * together: one after the other, the ConfigMap and the Service of a new job
 * were two round trips before its first pod.
 */
static bool before_pods(enum tj_action_kind kind)
{
	return kind == TJ_CREATE_ENTRYPOINT || kind == TJ_CREATE_SERVICE ||
	       kind == TJ_CREATE_PODGROUP;
}

static int run_actions(struct tj_pass *p)
{
	const struct tj_action *acts = p->plan.actions;
	size_t n = p->plan.n_actions, i = 0, j;
	int first_err = 0, created, ret;

	while (i < n) {
		/* The run of actions of one kind that starts at i; or of what the pods wait for. */
		for (j = i + 1; j < n && (acts[j].kind == acts[i].kind ||
		     (before_pods(acts[i].kind) && before_pods(acts[j].kind))); j++)
			;
		/*
		 * The pods mount the entrypoint ConfigMap, find their peers through the
		 * Service, and a pod naming a PodGroup not made would never reach the
		 * scheduler's queue: none goes out before all are made, or while the
		 * Service is refused.
		 */
		if (acts[i].kind == TJ_CREATE_POD && (!p->entrypoint_ready ||
		    atomic_load(&p->no_group) || atomic_load(&p->no_service))) {
			log_debug("tj", "%s: no pod is created without %s", p->key,
				  atomic_load(&p->no_group) ? "its PodGroup" :
				  atomic_load(&p->no_service) ? "its Service" :
				  "the entrypoint ConfigMap");
			if (!first_err)
				first_err = CADRE_EAGAIN;
			i = j;
			continue;
		}
		if (runs_in_waves(acts[i].kind) || before_pods(acts[i].kind)) {
			ret = run_wave(p, &acts[i], j - i);
		} else {
			ret = 0;
			for (size_t k = i; k < j; k++) {
				int r = do_action(p, &acts[k]);

				if (r && !ret)
					ret = r;
			}
		}
		if (ret && !first_err)
			first_err = ret;
		i = j;
	}
	created = atomic_load(&p->created);
	if (created) {
		char msg[256];

		snprintf(msg, sizeof(msg), "created %d pod%s of attempt %d%s", created,
			 created == 1 ? "" : "s",
			 tj_attempt(&p->plan.status),
			 p->m->opts->gang_scheduler == GANG_BUILTIN && !(p->job.spec.queue &&
			 *p->job.spec.queue) ? ", each on the node its admission chose" : "");
		manager_event(p->m, p->obj, false, "CreatedPods", "Create", msg);
	}
	return first_err;
}

/* A stored TrainingJob status as tj_status_to_json writes it (status_canonical_fn). */
static json_t *canonical_status(const json_t *status)
{
	json_t *have = NULL;
	struct tj_status current;
	struct field_errors errs;

	field_errors_init(&errs);
	if (tj_status_parse(status, &current, &errs) == 0)
		have = tj_status_to_json(&current);
	tj_status_release(&current);
	field_errors_release(&errs);
	return have;
}

/* The end of the quiet time for a starting gang's progress (tj_plan.h), in Unix seconds. */
static int64_t progress_quiet_until(struct tj_pass *p, int64_t now)
{
	uint64_t now_ms = manager_now_ms(), last = expect_quiet_until(p->m->expect, p->key, now_ms);

	return tj_status_quiet_until(p->plan.status.admitted_time,
				     last > now_ms ? now + (int64_t)((last - now_ms + 999) / 1000) : 0);
}

/* Whether want differs from the stored status only by progress still in its quiet time. */
static bool progress_only(struct tj_pass *p, const json_t *want)
{
	int64_t now = manager_time(p->m), until = progress_quiet_until(p, now);
	json_t *have = canonical_status(json_object_get(p->obj, "status"));
	bool same = have && tj_status_progress_only(have, want, until, now);

	json_decref(have);
	if (same)
		manager_enqueue_after(p->m, "tj", p->job.meta.namespace, p->job.meta.name,
				      (uint64_t)(until - now) * 1000);
	return same;
}

/*
 * Store the plan's status (step 3 of a pass). *written: a PUT stored it now.
 * 0 when the stored status is what the plan decided (written now, already
 * so, or only progress held back); else the error, and nothing may act on
 * the plan.
 */
static int write_status(struct tj_pass *p, bool *written_out)
{
	json_t *want = tj_status_to_json(&p->plan.status);
	bool written = false;
	int ret;

	*written_out = false;
	if (!want)
		return CADRE_ENOMEM;
	if (progress_only(p, want)) {
		json_decref(want);
		return 0;
	}
	ret = status_write(p->m, &kube_resource_trainingjobs, p->obj, want, canonical_status,
			   "tj", &written);
	if (!ret && written)
		ret = expect_status_written(p->m->expect, p->key, p->job.meta.resource_version,
					    manager_now_ms());
	/* The next write of a start's progress alone waits its turn (tj_plan.h). */
	if (!ret && written) {
		int64_t now = manager_time(p->m);
		int64_t until = tj_status_quiet_after(json_object_get(p->obj, "status"), want,
						      p->plan.status.admitted_time, now);

		if (until > now)
			ret = expect_quiet(p->m->expect, p->key,
					   manager_now_ms() + (uint64_t)(until - now) * 1000);
	}
	json_decref(want);
	*written_out = written;
	return ret;
}

static void record_metrics(struct tj_pass *p)
{
	struct manager_metrics *mm = &p->m->metrics;
	const struct tj_status *before = &p->job.status, *after = &p->plan.status;

	if (p->plan.admitted_now) {
		int64_t since = p->job.meta.creation_timestamp;

		if (before->has_last_failure && before->last_failure.time > since)
			since = before->last_failure.time;
		metric_observe(mm->admission_wait, NULL, (double)(manager_time(p->m) - since));
	}
	if (p->plan.all_running_now) {
		const struct condition *c = condition_find(&after->conditions, "Admitted");

		if (c && c->last_transition_time)
			metric_observe(mm->time_to_running, NULL,
				       (double)(manager_time(p->m) - c->last_transition_time));
	}
	if (tj_attempt(after) > tj_attempt(before)) {
		const struct condition *c = condition_find(&after->conditions, "Restarting");
		const char *labels[] = { c ? c->reason : "Unknown" };

		metric_add(mm->job_restarts, labels, 1);
	}
}

/*
 * Plan, asking the admission queue when the planner needs a verdict. The
 * queue sees the job with the status the planner is about to write: what
 * made it a candidate this pass (tj_candidacy) is there, not yet in the cache.
 */
static int plan(struct tj_pass *p, struct tj_input *in)
{
	struct trainingjob asked;
	int ret = tj_plan_make(in, &p->plan);

	if (ret || !p->plan.needs_admission)
		return ret;
	asked = p->job;
	asked.status = p->plan.status;
	ret = gang_admit(p->m, &asked, &in->admission, &p->admission);
	tj_plan_release(&p->plan);
	if (ret)
		return ret;
	return tj_plan_make(in, &p->plan);
}

/*
 * Parse and validate the job into p->job; what is wrong goes into p->invalid.
 * A new generation with a credential-looking env gets a warning event.
 */
static void validate_job(struct tj_pass *p)
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

/*
 * An event about a Node (a job leaves it behind): the object events.h wants,
 * with the node's uid when the cache has it. New reference, or NULL.
 */
static json_t *node_ref(struct tj_pass *p, const char *name)
{
	json_t *node = NULL, *ref;
	const char *uid = NULL;

	if (!store_get(p->m->stores[KIND_NODES], name, &node))
		uid = json_string_value(json_object_get(json_object_get(node, "metadata"), "uid"));
	ref = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Node", "metadata",
			"name", name);
	if (ref && uid)
		json_object_set_new(json_object_get(ref, "metadata"), "uid", json_string(uid));
	json_decref(node);
	return ref;
}

/* The plan's events, recorded on the job (or a Node the job leaves behind) and logged. */
static void send_plan_events(struct tj_pass *p)
{
	for (size_t i = 0; i < p->plan.n_events; i++) {
		const struct tj_event *e = &p->plan.events[i];

		if (e->node) {
			json_t *ref = node_ref(p, e->node);
			char msg[1024];

			snprintf(msg, sizeof(msg), "TrainingJob %s: %s", p->key, e->message);
			if (ref)
				manager_event(p->m, ref, true, e->reason, "Exclude", msg);
			json_decref(ref);
		}
		manager_event(p->m, p->obj, e->warning, e->reason, "Reconcile", e->message);
		if (e->warning)
			log_warn("tj", "%s: %s: %s", p->key, e->reason, e->message);
		else
			log_info("tj", "%s: %s: %s", p->key, e->reason, e->message);
	}
}

/* What the job took from its Partition, or why it has none, as planner input. */
static void input_partition(struct tj_pass *p, struct tj_input *in)
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
static void input_caches(struct tj_pass *p, struct tj_input *in)
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

int tj_reconcile(struct manager *m, const char *ns, const char *name)
{
	struct kueue_view kueue_view;
	struct kueue_workload kueue_wl;
	json_t *kueue_obj = NULL;
	struct tj_pass p = { .m = m };
	struct tj_input in = { 0 };
	json_t *svc = NULL;
	bool written;
	int ret, act_err, own_err;

	snprintf(p.key, sizeof(p.key), "%s/%s", ns, name);
	field_errors_init(&p.errs);
	buf_init(&p.invalid, 8192);
	tj_init(&p.job);
	if (store_get(m->stores[KIND_TRAININGJOBS], p.key, &p.obj)) {
		/* Deleted: owner references take its pods and Service with it. */
		expect_forget(m->expect, p.key);
		jobmemo_forget(m->memo, p.key);
		ret = 0;
		goto out;
	}
	if (!expect_status_fresh(m->expect, p.key, json_string_value(json_object_get(
		json_object_get(p.obj, "metadata"), "resourceVersion")), manager_now_ms())) {
		/* Our last status write has not come back through the watch yet:
		 * acting on this older version would repeat what it decided. */
		log_debug("tj", "%s: waiting for the watch to bring back our status write",
			  p.key);
		manager_enqueue_after(m, "tj", ns, name, 1000);
		ret = 0;
		goto out;
	}
	validate_job(&p);
	/* The id is claimed first: the ConfigMap and the pods carry the one the status will. */
	if ((!p.job.status.job_id || !*p.job.status.job_id) &&
	    (ret = jobids_claim(m->jobids, m->stores[KIND_TRAININGJOBS], p.job.meta.uid, p.job_id)))
		goto out;

	read_pods(&p);
	read_volumes(&p);
	read_code(&p);
	read_label_values(&p);
	/* A cached Service of the name that is another's (an earlier job's) is not the job's. */
	in.service_exists = store_get(m->stores[KIND_SERVICES], p.key, &svc) == 0 &&
			    meta_owned_by(svc, p.job.meta.uid);
	json_decref(svc);
	read_entrypoint(&p);
	in.entrypoint_exists = p.entrypoint_ready;
	in.job = &p.job;
	in.invalid = p.invalid.len ? buf_str(&p.invalid) : NULL;
	input_partition(&p, &in);
	in.now = manager_time(m);
	in.mode = p.job.spec.queue && *p.job.spec.queue ? GANG_KUEUE : m->opts->gang_scheduler;
	input_caches(&p, &in);
	read_refusal(&p, &in);
	if (in.mode == GANG_KUEUE)
		in.kueue = kueue_job_view(m->kueue, &p.job, &kueue_view, &kueue_wl, &kueue_obj);
	if ((ret = read_dependency(&p, &in)))
		goto out;
	read_elements(&p, &in);
	in.requeue = meta_annotation(&p.job.meta, ANNOTATION_REQUEUE);
	in.job_id = p.job_id;
	if (tj_phase_terminal(p.job.status.phase) &&
	    p.job.spec.has_ttl_seconds_after_finished)
		in.awaited = tj_dependency_awaited(m, &p.job);

	ret = plan(&p, &in);
	if (ret)
		goto out;
	/* The decision is stored before anything acts on it (docs/design.md 3.1). */
	ret = write_status(&p, &written);
	if (ret)
		goto out;
	/* Then its events, then what acting on it did, so that `kubectl describe`
	 * reads in order (Admitted before CreatedPods). */
	send_plan_events(&p);
	/* The owners are for Kubernetes' collection only: a failed patch holds nothing up. */
	own_err = own_code(&p);
	act_err = run_actions(&p);
	if (written)
		record_metrics(&p);
	if (p.plan.requeue_after_s > 0)
		manager_enqueue_after(m, "tj", ns, name, (uint64_t)p.plan.requeue_after_s * 1000);
	/* A spec that cannot be built waits for an edit; a refused create is tried again. */
	if (act_err && (act_err != CADRE_EINVAL || atomic_load(&p.refused)))
		ret = act_err;
	else if (own_err)
		ret = own_err;
out:
	pass_release(&p);
	json_decref(kueue_obj);
	return ret;
}

/* From the jobs' records (cache_record.h), by key: nothing is decoded. */
static int requeue_one(void *ctx, const char *key, const void *rec, size_t len)
{
	struct manager *m = ctx;
	const char *slash = strchr(key, '/');
	char ns[STORE_KEY_MAX];
	struct cache_job job;

	if (cache_job_read(rec, len, &job) || !slash || (size_t)(slash - key) >= sizeof(ns))
		return 0;
	memcpy(ns, key, (size_t)(slash - key));
	ns[slash - key] = '\0';
	if (!*job.phase || !strcmp(job.phase, "Queued") || !strcmp(job.phase, "Pending"))
		manager_enqueue(m, "tj", ns, slash + 1);
	return 0;
}

void tj_requeue_waiting(struct manager *m)
{
	store_foreach_record(m->stores[KIND_TRAININGJOBS], requeue_one, m);
}
