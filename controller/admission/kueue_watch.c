/*
 * kueue_watch.c - the Workload watch of cadre's Kueue mode (kueue.h).
 */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "api/trainingjob.h"
#include "controller/admission/kueue.h"
#include "controller/manager/manager.h"
#include "kube/lazywatch.h"
#include "kube/reflector.h"
#include "kube/store.h"

struct kueue_watch {
	struct manager *m;
	struct lazy_watch lw;
};

json_t *kueue_workload_trim(const json_t *obj, void *arg)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const json_t *status = json_object_get(obj, "status");
	json_t *out, *m, *st;

	(void)arg;
	out = json_object();
	m = json_object();
	st = json_object();
	if (!out || !m || !st)
		goto fail;
	for (const char **k = (const char *[]){ "name", "namespace", "uid", "resourceVersion",
						"deletionTimestamp", NULL }; *k; k++)
		if (json_object_get(meta, *k) &&
		    json_object_set(m, *k, json_object_get(meta, *k)))
			goto fail;
	if (json_object_get(status, "conditions") &&
	    json_object_set(st, "conditions", json_object_get(status, "conditions")))
		goto fail;
	if (json_object_get(status, "admission") &&
	    json_object_set_new(st, "admission", json_pack("{s:O?}", "clusterQueue",
		json_object_get(json_object_get(status, "admission"), "clusterQueue"))))
		goto fail;
	if (json_object_set_new(out, "metadata", m) || json_object_set_new(out, "status", st))
		goto fail_out;
	return out;
fail:
	json_decref(m);
	json_decref(st);
fail_out:
	json_decref(out);
	return NULL;
}

static void requeue_job(struct kueue_watch *w, const json_t *obj)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	char job[STORE_KEY_MAX];

	/* A Workload of something else than a cadre pod group re-queues nothing real. */
	if (name && kueue_group_job(name, job, sizeof(job)) == 0)
		manager_enqueue(w->m, "tj", ns, job);
}

static void on_add(void *ctx, const char *key, const json_t *obj)
{
	(void)key;
	requeue_job(ctx, obj);
}

static void on_update(void *ctx, const char *key, const json_t *old_obj, const json_t *new_obj)
{
	(void)key;
	(void)old_obj;
	requeue_job(ctx, new_obj);
}

struct kueue_watch *kueue_watch_new(struct manager *m)
{
	struct kueue_watch *w = calloc(1, sizeof(*w));
	struct store_options so = { .kind = kueue_resource_workloads.plural,
				    .trim = kueue_workload_trim };
	struct store_handlers h = { on_add, on_update, on_add, NULL };
	struct reflector_options ro = {
		.resource = &kueue_resource_workloads,
		.namespace = m->opts->namespace,
	};

	if (!w)
		return NULL;
	w->m = m;
	h.ctx = w;
	if (lazy_watch_init(&w->lw, m->http, &so, &h, &ro)) {
		free(w);
		return NULL;
	}
	return w;
}

int kueue_watch_ensure(struct kueue_watch *w)
{
	bool first;
	int err;

	if (!w)
		return CADRE_EINVAL;
	if (!(err = lazy_watch_start(&w->lw, &first)) && first)
		log_info("kueue", "watching Kueue's %s (%s) for the pod groups of jobs in "
			 "Kueue mode", kueue_resource_workloads.plural,
			 kueue_resource_workloads.api_version);
	return err;
}

void kueue_watch_lookup(struct kueue_watch *w, const char *ns, const char *group,
			struct kueue_view *v, struct kueue_workload *wl, json_t **obj)
{
	char key[STORE_KEY_MAX];

	*obj = NULL;
	v->wl = NULL;
	v->api_served = w && reflector_synced(w->lw.reflector);
	if (!v->api_served || !group)
		return;
	snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", group);
	if (store_get(w->lw.store, key, obj) == 0 && kueue_workload_read(*obj, wl) == 0)
		v->wl = wl;
}

const struct kueue_view *kueue_job_view(struct kueue_watch *w, const struct trainingjob *job,
					struct kueue_view *v, struct kueue_workload *wl,
					json_t **obj)
{
	int attempt = tj_attempt(&job->status);

	memset(v, 0, sizeof(*v));
	*obj = NULL;
	if (kueue_watch_ensure(w))
		return v;
	if (kueue_group_name(job->meta.name, attempt, v->group_buf, sizeof(v->group_buf)) == 0)
		v->group = v->group_buf;
	kueue_watch_lookup(w, job->meta.namespace, v->group, v, wl, obj);
	return v;
}

void kueue_watch_free(struct kueue_watch *w)
{
	if (!w)
		return;
	lazy_watch_release(&w->lw);
	free(w);
}
