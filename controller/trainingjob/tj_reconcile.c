/*
 * tj_reconcile.c - the TrainingJob reconciler: plumbing around the pure
 * planner (tj_plan.c). Read the caches (tj_read.c), decide, store the
 * decision, act (tj_write.c); tj_pass.h is what the three share.
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
#include "controller/trainingjob/tj_pass.h"

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
 * The victims a new status.preempting names, now that it is stored: each
 * one's reconcile finds itself there and stops (gang_preempt.h).
 */
static void tell_victims(struct tj_pass *p)
{
	const struct tj_status *st = &p->plan.status;

	for (size_t i = 0; i < st->n_preempting; i++) {
		char ns[STORE_KEY_MAX];
		const char *slash = strchr(st->preempting[i].job, '/');

		if (!slash || (size_t)(slash - st->preempting[i].job) >= sizeof(ns))
			continue;
		memcpy(ns, st->preempting[i].job, (size_t)(slash - st->preempting[i].job));
		ns[slash - st->preempting[i].job] = '\0';
		manager_enqueue(p->m, "tj", ns, slash + 1);
	}
}

static void record_metrics(struct tj_pass *p)
{
	struct manager_metrics *mm = &p->m->metrics;
	const struct tj_status *before = &p->job.status, *after = &p->plan.status;

	if (after->preemptions > before->preemptions) {
		const char *labels[] = { after->preemption.mode ? after->preemption.mode : "Requeue" };

		metric_add(mm->preemptions, labels, 1);
	}

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
	/* A preemption is counted above, not as a restart. */
	if (tj_attempt(after) - after->preemptions > tj_attempt(before) - before->preemptions) {
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
	tj_validate_job(&p);
	/* The id is claimed first: the ConfigMap and the pods carry the one the status will. */
	if ((!p.job.status.job_id || !*p.job.status.job_id) &&
	    (ret = jobids_claim(m->jobids, m->stores[KIND_TRAININGJOBS], p.job.meta.uid, p.job_id)))
		goto out;

	tj_read_pods(&p);
	tj_read_volumes(&p);
	tj_read_code(&p);
	tj_read_label_values(&p);
	/* A cached Service of the name that is another's (an earlier job's) is not the job's. */
	in.service_exists = store_get(m->stores[KIND_SERVICES], p.key, &svc) == 0 &&
			    meta_owned_by(svc, p.job.meta.uid);
	json_decref(svc);
	tj_read_entrypoint(&p);
	in.entrypoint_exists = p.entrypoint_ready;
	in.job = &p.job;
	in.invalid = p.invalid.len ? buf_str(&p.invalid) : NULL;
	tj_input_partition(&p, &in);
	in.now = manager_time(m);
	in.mode = p.job.spec.queue && *p.job.spec.queue ? GANG_KUEUE : m->opts->gang_scheduler;
	tj_input_caches(&p, &in);
	tj_read_refusal(&p, &in);
	if (in.mode == GANG_KUEUE)
		in.kueue = kueue_job_view(m->kueue, &p.job, &kueue_view, &kueue_wl, &kueue_obj);
	if ((ret = tj_read_dependency(&p, &in)))
		goto out;
	tj_read_elements(&p, &in);
	if ((ret = tj_read_preempted(&p, &in)))
		goto out;
	in.requeue = meta_annotation(&p.job.meta, ANNOTATION_REQUEUE);
	in.job_id = p.job_id;
	if (tj_phase_terminal(p.job.status.phase) &&
	    p.job.spec.has_ttl_seconds_after_finished)
		in.awaited = tj_dependency_awaited(m, &p.job);

	ret = plan(&p, &in);
	if (ret)
		goto out;
	/* The decision is stored before anything acts on it (docs/design.md 3.1). */
	ret = tj_write_status(&p, &written);
	if (ret)
		goto out;
	/* Then its events, then what acting on it did, so that `kubectl describe`
	 * reads in order (Admitted before CreatedPods). */
	tj_send_plan_events(&p);
	/* The owners are for Kubernetes' collection only: a failed patch holds nothing up. */
	own_err = tj_own_code(&p);
	act_err = tj_run_actions(&p);
	if (written) {
		record_metrics(&p);
		tell_victims(&p);
	}
	if (p.plan.requeue_after_s > 0)
		manager_enqueue_after(m, "tj", ns, name, (uint64_t)p.plan.requeue_after_s * 1000);
	/*
	 * A DRA object made by a pass that was held for its refusal: nothing
	 * cadre watches changes, so the pass that creates the pods is asked for.
	 */
	if (atomic_load(&p.claims_made) && !atomic_load(&p.created))
		manager_enqueue_after(m, "tj", ns, name, 0);
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
