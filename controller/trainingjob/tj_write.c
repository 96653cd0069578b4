/*
 * tj_write.c - a pass's writing (tj_pass.h): the status stored first, then
 * the events, and the writes the plan lists (the ConfigMap and Service
 * before any pod, pods in waves, elements, PodGroups, deletes, owners).
 */
#include "controller/trainingjob/tj_pass.h"

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

/*
 * The DRA objects of a job (docs/dra.md). A 404 is the API server saying it
 * serves no such kind: DRA off, or no ComputeDomain CRD; that is said in
 * words a person acts on, and held as a refusal like a 403.
 */
struct dra_object {
	const struct kube_resource *res;
	const char *kind;
	int rank;                /* TJ_REFUSAL_* */
	const char *missing;     /* what a 404 means */
};

static const struct dra_object claim_template_object = {
	&kube_resource_resourceclaimtemplates, "ResourceClaimTemplate", TJ_REFUSAL_CLAIM_TEMPLATE,
	"the job's accelerators come from a DeviceClass (its Partition's deviceClassName, or "
	"--device-class-name), but this cluster serves no resource.k8s.io/v1 "
	"ResourceClaimTemplates: Dynamic Resource Allocation is off (docs/dra.md)",
};
static const struct dra_object compute_domain_object = {
	&kube_resource_computedomains, "ComputeDomain", TJ_REFUSAL_COMPUTE_DOMAIN,
	"spec.computeDomain needs NVIDIA's ComputeDomain (resource.nvidia.com/v1beta1), and its "
	"CRD is not installed on this cluster: install NVIDIA's DRA driver, or leave "
	"spec.computeDomain out (docs/dra.md)",
};

static int dra_refused(struct tj_pass *p, const struct dra_object *o, const char *name,
		       const struct kube_status *st)
{
	int ret;

	atomic_store(&p->no_claims, true);
	ret = object_refused(p, o->kind, name, o->rank, st);
	return ret ? ret : CADRE_EEXIST;
}

/* Create obj (o's kind, named name); one there already is fine when it is the job's. */
static int create_dra_object(struct tj_pass *p, const struct dra_object *o, const char *name,
			     json_t *obj)
{
	struct kube_status st;
	json_t *got = NULL;
	int ret;

	ret = kube_client_create(p->m->http, o->res, p->job.meta.namespace, obj, NULL, &st);
	if (ret == CADRE_EEXIST) {
		ret = kube_client_get(p->m->http, o->res, p->job.meta.namespace, name, &got, &st);
		if (ret) {
			atomic_store(&p->no_claims, true);
			log_warn("tj", "%s: cannot read %s %s: %s", p->key, o->kind, name,
				 st.message);
			return ret == CADRE_ENOTFOUND ? CADRE_EAGAIN : ret;
		}
		if (!meta_owned_by(got, p->job.meta.uid)) {
			foreign_status(&st, o->kind, name, got);
			json_decref(got);
			return dra_refused(p, o, name, &st);
		}
		json_decref(got);
		ret = 0;
	}
	if (ret == CADRE_ENOTFOUND && st.http_status == 404) {
		snprintf(st.message, sizeof(st.message), "%s", o->missing);
		return dra_refused(p, o, name, &st);
	}
	if (ret && refusal_is_final(&st))
		return dra_refused(p, o, name, &st);
	if (ret) {
		atomic_store(&p->no_claims, true);
		create_failed(p, ret, o->kind, name, &st);
	} else {
		jobmemo_created(p->m->memo, p->key, name);
		atomic_store(&p->claims_made, true);
	}
	return ret;
}

static int create_claim_template(struct tj_pass *p)
{
	struct build_opts bo;
	char name[320];
	struct buf err;
	json_t *obj = NULL;
	int ret;

	tj_fill_build_opts(p, &bo);
	buf_init(&err, 1024);
	ret = build_claim_template_name(p->job.meta.name, name, sizeof(name));
	if (!ret)
		ret = build_claim_template(&p->job, &bo, &obj, &err);
	if (ret) {
		atomic_store(&p->no_claims, true);
		log_warn("tj", "%s: cannot build the ResourceClaimTemplate: %s", p->key,
			 buf_str(&err));
	}
	buf_release(&err);
	if (!ret)
		ret = create_dra_object(p, &claim_template_object, name, obj);
	json_decref(obj);
	return ret;
}

/*
 * This attempt's ComputeDomain; the last attempt's goes (its channel is
 * bound to pods that are gone), and the rest go with the job.
 */
static int create_compute_domain(struct tj_pass *p, const struct tj_action *a)
{
	struct kube_delete_opts del = { .propagation_policy = "Background" };
	char name[320], old[320];
	struct kube_status st;
	struct buf err;
	json_t *obj = NULL;
	int ret;

	buf_init(&err, 1024);
	ret = build_compute_domain_name(p->job.meta.name, a->attempt, name, sizeof(name));
	if (!ret)
		ret = build_compute_domain(&p->job, a->attempt, &obj, &err);
	if (ret) {
		atomic_store(&p->no_claims, true);
		log_warn("tj", "%s: cannot build the ComputeDomain: %s", p->key, buf_str(&err));
	}
	buf_release(&err);
	if (!ret)
		ret = create_dra_object(p, &compute_domain_object, name, obj);
	json_decref(obj);
	if (!ret && a->attempt > 0 &&
	    !build_compute_domain_name(p->job.meta.name, a->attempt - 1, old, sizeof(old)))
		kube_client_delete(p->m->http, &kube_resource_computedomains,
				   p->job.meta.namespace, old, &del, NULL, &st);
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
	tj_fill_build_opts(p, &bo);
	view = tj_id_view(p);
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
	tj_fill_build_opts(p, &bo);
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
	struct kube_delete_opts opts = { .propagation_policy = "Background", .uid = a->uid,
					 .grace_period_set = a->has_grace,
					 .grace_period_seconds = a->grace_s };
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

/*
 * InPlace: a live pod of an earlier attempt is told the new one (its label,
 * which the entrypoint reads). A JSON patch that first tests the uid: a pod
 * gone or replaced since the plan is not ours to tell.
 */
static int tell_pod_attempt(struct tj_pass *p, const struct tj_action *a)
{
	char attempt[16];
	struct kube_status st;
	json_t *patch;
	int ret;

	snprintf(attempt, sizeof(attempt), "%d", a->attempt);
	patch = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}]",
			  "op", "test", "path", "/metadata/uid", "value", a->uid ? a->uid : "",
			  "op", "replace", "path", LABEL_RESTART_ATTEMPT_POINTER, "value", attempt);
	if (!patch)
		return CADRE_ENOMEM;
	ret = kube_client_patch(p->m->http, &kube_resource_pods, p->job.meta.namespace, a->pod,
				NULL, KUBE_PATCH_JSON, patch, NULL, &st);
	json_decref(patch);
	if (ret == CADRE_ENOTFOUND || ret == CADRE_EREJECTED)
		return 0;
	if (ret)
		log_warn("tj", "%s: cannot tell pod %s of attempt %d: %s", p->key, a->pod,
			 a->attempt, st.message);
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
	case TJ_CREATE_CLAIM_TEMPLATE:
		ret = create_claim_template(p);
		break;
	case TJ_CREATE_COMPUTE_DOMAIN:
		ret = create_compute_domain(p, a);
		break;
	case TJ_CREATE_POD:
		ret = create_pod(p, a);
		break;
	case TJ_DELETE_POD:
		ret = delete_pod(p, a);
		break;
	case TJ_PATCH_POD_ATTEMPT:
		ret = tell_pod_attempt(p, a);
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
	return kind == TJ_CREATE_POD || kind == TJ_DELETE_POD || kind == TJ_CREATE_ELEMENT ||
	       kind == TJ_PATCH_POD_ATTEMPT;
}

/*
 * What the pods wait for. None of these waits for another, so they go out
 * together: one after the other, the ConfigMap and the Service of a new job
 * were two round trips before its first pod.
 */
static bool before_pods(enum tj_action_kind kind)
{
	return kind == TJ_CREATE_ENTRYPOINT || kind == TJ_CREATE_SERVICE ||
	       kind == TJ_CREATE_PODGROUP || kind == TJ_CREATE_CLAIM_TEMPLATE ||
	       kind == TJ_CREATE_COMPUTE_DOMAIN;
}

int tj_run_actions(struct tj_pass *p)
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
		    atomic_load(&p->no_group) || atomic_load(&p->no_service) ||
		    atomic_load(&p->no_claims))) {
			log_debug("tj", "%s: no pod is created without %s", p->key,
				  atomic_load(&p->no_group) ? "its PodGroup" :
				  atomic_load(&p->no_claims) ? "what it claims devices from" :
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
int tj_write_status(struct tj_pass *p, bool *written_out)
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
void tj_send_plan_events(struct tj_pass *p)
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

/*
 * Once its code is whole, a job that has not finished is an owner of each
 * bundle it names, so that the bundle goes with the last of its jobs
 * (code_own). 0 or the error of a patch, retried by the queue.
 */
int tj_own_code(struct tj_pass *p)
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
