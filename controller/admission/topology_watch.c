/*
 * topology_watch.c - the ClusterTopology watch (topology_watch.h).
 */
#include "controller/admission/topology_watch.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/log.h"
#include "kube/resource.h"
#include "api/kinds.h"
#include "controller/manager/manager.h"
#include "kube/lazywatch.h"
#include "kube/reflector.h"
#include "kube/store.h"

struct topology_watch {
	struct manager *m;
	struct lazy_watch lw;
};

/* New levels: every job that waits looks again. */
static void on_change(void *ctx, const char *key, const json_t *obj)
{
	struct topology_watch *w = ctx;

	(void)key;
	(void)obj;
	manager_kick_admission(w->m);
}

static void on_update(void *ctx, const char *key, const json_t *old_obj, const json_t *new_obj)
{
	(void)old_obj;
	on_change(ctx, key, new_obj);
}

struct topology_watch *topology_watch_new(struct manager *m)
{
	struct topology_watch *w = calloc(1, sizeof(*w));
	struct store_options so = { .kind = kube_resource_clustertopologies.plural,
				    .trim = store_trim_bookkeeping };
	struct store_handlers h = { on_change, on_update, on_change, NULL };
	struct reflector_options ro = { .resource = &kube_resource_clustertopologies };

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

int topology_watch_ensure(struct topology_watch *w)
{
	bool first;
	int err;

	if (!w)
		return CADRE_EINVAL;
	if (!(err = lazy_watch_start(&w->lw, &first)) && first)
		log_info("topology", "watching %s for the levels of jobs' spec.topology",
			 kube_resource_clustertopologies.plural);
	return err;
}

int topology_watch_levels(struct topology_watch *w, struct cluster_topology *out, char *why,
			  size_t size)
{
	struct field_errors errs;
	json_t *obj = NULL;
	int err;

	cluster_topology_init(out);
	if (!w)
		return cluster_topology_builtin_levels(out);
	if (topology_watch_ensure(w) || !reflector_synced(w->lw.reflector)) {
		snprintf(why, size, "reading the cluster's topology levels (ClusterTopology "
			 CLUSTER_TOPOLOGY_NAME "; is crd/clustertopologies.cadre.dev.yaml installed?)");
		return CADRE_EAGAIN;
	}
	if (store_get(w->lw.store, CLUSTER_TOPOLOGY_NAME, &obj))
		return cluster_topology_builtin_levels(out);
	field_errors_init(&errs);
	err = cluster_topology_parse(obj, out, &errs);
	json_decref(obj);
	if (err == CADRE_EINVAL) {
		const struct field_error *e = field_errors_at(&errs, 0);

		snprintf(why, size, "ClusterTopology " CLUSTER_TOPOLOGY_NAME " is not valid: %s: %s",
			 e ? e->path : "", e ? e->message : "");
	}
	field_errors_release(&errs);
	return err;
}

void topology_watch_free(struct topology_watch *w)
{
	if (!w)
		return;
	lazy_watch_release(&w->lw);
	free(w);
}
