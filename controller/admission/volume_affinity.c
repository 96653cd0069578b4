/*
 * volume_affinity.c - Volume -> claim -> PersistentVolume, through the
 * caches, into the node selectors admission checks (volume_affinity.h).
 */
#include "controller/admission/volume_affinity.h"

#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "api/trainingjob.h"
#include "controller/manager/manager.h"
#include "kube/store.h"

/* The cached object of kind at "ns/name" (new reference), or NULL. */
static json_t *cached(struct manager *m, enum manager_kind kind, const char *ns, const char *name)
{
	char key[STORE_KEY_MAX];
	json_t *obj = NULL;
	int n;

	if (!m->stores[kind] || !name || !*name)
		return NULL;
	n = ns ? snprintf(key, sizeof(key), "%s/%s", ns, name) :
		 snprintf(key, sizeof(key), "%s", name);
	if (n < 0 || (size_t)n >= sizeof(key) || store_get(m->stores[kind], key, &obj))
		return NULL;
	return obj;
}

static const char *str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

int volume_affinity_add(struct manager *m, const struct trainingjob *job, struct affinity *a)
{
	const char *ns = job->meta.namespace;
	int err = 0;

	for (size_t i = 0; !err && ns && i < job->spec.n_volumes; i++) {
		const char *name = job->spec.volumes[i].volume;
		json_t *vol = cached(m, KIND_VOLUMES, ns, name), *pvc = NULL, *pv = NULL;

		if (vol)
			pvc = cached(m, KIND_PVCS, ns, str(json_object_get(vol, "status"),
							   "claimName"));
		if (pvc)
			pv = cached(m, KIND_PVS, NULL, str(json_object_get(pvc, "spec"),
							   "volumeName"));
		if (pv)
			err = affinity_add_pv(a, pv, name);
		json_decref(pv);
		json_decref(pvc);
		json_decref(vol);
	}
	return err;
}
