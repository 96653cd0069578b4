/*
 * vol_reconcile.c - the Volume reconciler (docs/design.md 4).
 *
 * A Volume is a name a TrainingJob mounts; underneath it is a PVC named
 * after it (or an existing one named by spec.claimName), and for nfs a PV
 * (build_pv_name, unique across namespaces) pre-bound to that PVC, or the
 * Volume's PV of the old scheme, adopted. Of PVs, cluster-scoped, it
 * touches only one labelled as the Volume's. The reconciler makes
 * what is missing, mirrors the PVC into status (with an Event for each
 * change of phase), keeps the claim's owner reference in step with
 * reclaimPolicy (docs/volumes.md), keeps the list of jobs using it, and
 * holds the protection finalizer so that a Volume in use is not removed
 * under a running job, and so that a Delete-policy nfs PV (cluster-scoped,
 * so it cannot be owned) is cleaned up.
 */
#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "api/fielderr.h"
#include "api/name.h"
#include "api/trainingjob.h"
#include "api/volume.h"
#include "controller/build/build.h"
#include "controller/manager/manager.h"
#include "controller/manager/status.h"
#include "controller/manager/reconcile.h"
#include "kube/client.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct users {
	const char *ns;
	const char *volume;
	char **names;
	size_t n;
	int err;
};

static void collect_user(struct users *u, const json_t *obj)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *phase = json_string_value(json_object_get(json_object_get(obj, "status"),
							      "phase"));
	const json_t *vols = json_object_get(json_object_get(obj, "spec"), "volumes");
	const char *path;
	json_t *value;

	if (!ns || strcmp(ns, u->ns))
		return;
	if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
		return;
	json_object_foreach((json_t *)vols, path, value) {
		const char *v = json_string_value(value);

		if (v && !strcmp(v, u->volume)) {
			char **more = realloc(u->names, (u->n + 1) * sizeof(*more));
			const char *name = json_string_value(json_object_get(meta, "name"));

			if (!more || !name || !(more[u->n] = strdup(name))) {
				if (more)
					u->names = more;
				u->err = CADRE_ENOMEM;
				return;
			}
			u->names = more;
			u->n++;
			break;
		}
	}
}

/* The jobs whose spec.volumes names the Volume at key (the cache's "volume" index). */
static void collect_users(struct manager *m, const char *key, struct users *u)
{
	json_t *jobs = NULL, *obj;
	size_t i;

	if (store_by_index(m->stores[KIND_TRAININGJOBS], "volume", key, &jobs)) {
		u->err = CADRE_ENOMEM;
		return;
	}
	json_array_foreach(jobs, i, obj)
		collect_user(u, obj);
	json_decref(jobs);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void users_release(struct users *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->names[i]);
	free(u->names);
}

/* JSON patch on metadata.finalizers guarded by the resourceVersion we read. */
static int patch_finalizer(struct manager *m, const struct volume *vol, const json_t *obj,
			   bool add)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const json_t *finalizers = json_object_get(meta, "finalizers");
	json_t *patch, *op;
	struct kube_status st;
	int ret, index = -1;
	size_t i;
	json_t *f;

	patch = json_pack("[{s:s, s:s, s:O}]", "op", "test", "path", "/metadata/resourceVersion",
			  "value", json_object_get(meta, "resourceVersion"));
	if (!patch)
		return CADRE_ENOMEM;
	if (add && json_array_size(finalizers))
		op = json_pack("{s:s, s:s, s:s}", "op", "add", "path", "/metadata/finalizers/-",
			       "value", VOL_FINALIZER);
	else if (add)
		op = json_pack("{s:s, s:s, s:[s]}", "op", "add", "path", "/metadata/finalizers",
			       "value", VOL_FINALIZER);
	else {
		char path[64];

		json_array_foreach(finalizers, i, f)
			if (json_string_value(f) && !strcmp(json_string_value(f), VOL_FINALIZER))
				index = (int)i;
		if (index < 0) {
			json_decref(patch);
			return 0;
		}
		snprintf(path, sizeof(path), "/metadata/finalizers/%d", index);
		op = json_pack("{s:s, s:s}", "op", "remove", "path", path);
	}
	if (!op || json_array_append_new(patch, op)) {
		json_decref(patch);
		return CADRE_ENOMEM;
	}
	ret = kube_client_patch(m->http, &kube_resource_volumes, vol->meta.namespace,
				vol->meta.name, NULL, KUBE_PATCH_JSON, patch, NULL, &st);
	json_decref(patch);
	if (ret == CADRE_EREJECTED || ret == CADRE_ECONFLICT || ret == CADRE_ENOTFOUND)
		return CADRE_EAGAIN;  /* changed under us; the watch brings the new version */
	if (ret)
		log_warn("volume", "%s/%s: cannot update finalizers: %s", vol->meta.namespace,
			 vol->meta.name, st.message);
	return ret;
}

/*
 * Which PV an nfs Volume uses, into pv (BUILD_PV_NAME_SIZE bytes), and
 * whether it exists (*found):
 * - a PV of the old scheme (build_pv_legacy_name) labelled as the
 *   Volume's: adopted as it is, since its claim is bound to it and the
 *   data is there; no new PV is made beside it;
 * - otherwise the PV of build_pv_name(), when it is labelled as the
 *   Volume's or does not exist yet (then ensure_pv makes it);
 * - a PV of that name labelled for another Volume, or not at all, is not
 *   the Volume's: CADRE_EEXIST, and why into refusal. cadre touches it no
 *   more than a PV of the old name that is someone else's.
 * Read from the cache only, so each controller process decides the same.
 */
static int choose_pv(struct manager *m, const struct volume *vol, char *pv, bool *found,
		     struct buf *refusal)
{
	json_t *obj = NULL;
	const json_t *labels;
	const char *ns, *name;
	int ret;

	*found = false;
	if (build_pv_legacy_name(vol, pv, BUILD_PV_NAME_SIZE) == 0 &&
	    store_get(m->stores[KIND_PVS], pv, &obj) == 0) {
		*found = build_pv_is_volumes(obj, vol);
		json_decref(obj);
		obj = NULL;
		if (*found)
			return 0;
	}
	ret = build_pv_name(vol, pv, BUILD_PV_NAME_SIZE);
	if (ret)
		return ret;
	if (store_get(m->stores[KIND_PVS], pv, &obj))
		return 0;
	if (build_pv_is_volumes(obj, vol)) {
		*found = true;
		json_decref(obj);
		return 0;
	}
	labels = json_object_get(json_object_get(obj, "metadata"), "labels");
	ns = json_string_value(json_object_get(labels, LABEL_VOLUME_NAMESPACE));
	name = json_string_value(json_object_get(labels, LABEL_VOLUME));
	if (ns && name)
		buf_addf_cut(refusal, "PersistentVolume %s is labelled as Volume %.63s/%.253s's, "
			     "not this one's: cadre leaves it alone; delete it or give it the "
			     "labels %s=%s and %s=%s", pv, ns, name, LABEL_VOLUME_NAMESPACE,
			     vol->meta.namespace, LABEL_VOLUME, vol->meta.name);
	else
		buf_addf_cut(refusal, "PersistentVolume %s exists and is not labelled as this "
			     "Volume's: cadre leaves it alone; delete it or give it the labels "
			     "%s=%s and %s=%s", pv, LABEL_VOLUME_NAMESPACE, vol->meta.namespace,
			     LABEL_VOLUME, vol->meta.name);
	json_decref(obj);
	return CADRE_EEXIST;
}

/*
 * Delete the PV named pv if the cache shows it labelled as vol's, guarded
 * by the uid and resourceVersion seen: a PV deleted and made again, or
 * relabelled, since the cache's copy is refused (409) and looked at again.
 */
static int delete_pv(struct manager *m, const struct volume *vol, const char *pv)
{
	struct kube_delete_opts opts = { 0 };
	struct kube_status st;
	json_t *obj = NULL;
	const json_t *meta;
	int ret = 0;

	if (store_get(m->stores[KIND_PVS], pv, &obj))
		return 0;
	if (!build_pv_is_volumes(obj, vol))
		goto out;
	meta = json_object_get(obj, "metadata");
	opts.uid = json_string_value(json_object_get(meta, "uid"));
	opts.resource_version = json_string_value(json_object_get(meta, "resourceVersion"));
	ret = kube_client_delete(m->http, &kube_resource_pvs, NULL, pv, &opts, NULL, &st);
	if (ret == CADRE_ENOTFOUND)
		ret = 0;
	else if (ret == CADRE_ECONFLICT)
		ret = CADRE_EAGAIN;
	else if (ret)
		log_warn("volume", "%s/%s: cannot delete PV %s: %s", vol->meta.namespace,
			 vol->meta.name, pv, st.message);
out:
	json_decref(obj);
	return ret;
}

/* The claim the Volume uses: the one it adopted, or the one named after it. */
static const char *claim_of(const struct volume *vol)
{
	return vol->spec.claim_name && *vol->spec.claim_name ? vol->spec.claim_name :
	       vol->meta.name;
}

/*
 * Send patch (borrowed) to the Volume's claim. A failed guard (409) or a
 * claim gone (404) is CADRE_EAGAIN: the watch brings what changed.
 */
static int patch_claim(struct manager *m, const struct volume *vol, const json_t *patch)
{
	struct kube_status st;
	int ret;

	ret = kube_client_patch(m->http, &kube_resource_pvcs, vol->meta.namespace,
				claim_of(vol), NULL, KUBE_PATCH_STRATEGIC, patch, NULL, &st);
	if (ret == CADRE_ECONFLICT || ret == CADRE_ENOTFOUND)
		return CADRE_EAGAIN;
	if (ret)
		log_warn("volume", "%s/%s: cannot update the owners of claim %s: %s",
			 vol->meta.namespace, vol->meta.name, claim_of(vol), st.message);
	return ret;
}

/*
 * The cached claim carries the Volume's owner reference exactly when the
 * Volume owns it (build_claim_owned): reclaimPolicy is mutable, and a
 * reference left on a claim whose Volume turned Retain lets the garbage
 * collector delete the claim, and the data on it, with the Volume. Makes
 * no call when the claim is as it should be or not cached yet.
 */
static int sync_claim_owner(struct manager *m, const struct volume *vol, const json_t *obj)
{
	char key[STORE_KEY_MAX], msg[512];
	json_t *pvc = NULL, *patch = NULL;
	struct buf err;
	int ret;

	snprintf(key, sizeof(key), "%s/%s", vol->meta.namespace, claim_of(vol));
	if (store_get(m->stores[KIND_PVCS], key, &pvc))
		return 0;  /* ensure_claim made it, or it is not there: the watch tells */
	buf_init(&err, 256);
	ret = build_claim_owner_patch(vol, pvc, &patch, &err);
	if (ret == CADRE_EINVAL) {
		log_warn("volume", "%s/%s: claim %s: %s", vol->meta.namespace, vol->meta.name,
			 claim_of(vol), buf_str(&err));
		ret = 0;
	}
	if (ret || !patch)
		goto out;
	ret = patch_claim(m, vol, patch);
	if (ret)
		goto out;
	if (build_claim_owned(vol))
		snprintf(msg, sizeof(msg), "PersistentVolumeClaim %s is now owned by the Volume: "
			 "reclaimPolicy Delete, deleting the Volume deletes it", claim_of(vol));
	else
		snprintf(msg, sizeof(msg), "PersistentVolumeClaim %s is no longer owned by the "
			 "Volume: it outlives the Volume (%s)", claim_of(vol),
			 vol->spec.claim_name && *vol->spec.claim_name ?
			 "an adopted claim is never deleted" : "reclaimPolicy Retain");
	log_info("volume", "%s/%s: %s", vol->meta.namespace, vol->meta.name, msg);
	manager_event(m, obj, false, build_claim_owned(vol) ? "ClaimOwned" : "ClaimReleased",
		      "Update", msg);
out:
	json_decref(patch);
	json_decref(pvc);
	buf_release(&err);
	return ret;
}

/*
 * Before a Volume that does not own its claim lets go: make sure no
 * reference of ours is left on the claim, whatever the cache says, since
 * once the Volume is gone the garbage collector would act on it.
 */
static int disown_claim(struct manager *m, const struct volume *vol)
{
	json_t *patch = NULL;
	struct buf err;
	int ret;

	if (!name_is_dns1123_subdomain(claim_of(vol)))
		return 0;  /* an invalid claimName names no claim */
	buf_init(&err, 256);
	ret = build_claim_disown_patch(vol, &patch, &err);
	if (ret == CADRE_EINVAL) {
		/* No uid to find ours by: nothing of ours can be on it. */
		log_warn("volume", "%s/%s: %s", vol->meta.namespace, vol->meta.name, buf_str(&err));
		ret = 0;
	} else if (!ret) {
		ret = patch_claim(m, vol, patch);
		if (ret == CADRE_EAGAIN)
			ret = 0;  /* no such claim (an unguarded patch has no conflict) */
	}
	json_decref(patch);
	buf_release(&err);
	return ret;
}

/* The Volume is going: release what the reclaim policy says, then the finalizer. */
static int finish_delete(struct manager *m, const struct volume *vol, const json_t *obj)
{
	struct kube_status st;
	char pv[BUILD_PV_NAME_SIZE];
	int ret;

	if (build_claim_owned(vol)) {
		ret = kube_client_delete(m->http, &kube_resource_pvcs, vol->meta.namespace,
					 vol->meta.name, NULL, NULL, &st);
		if (ret && ret != CADRE_ENOTFOUND) {
			log_warn("volume", "%s/%s: cannot delete claim: %s", vol->meta.namespace,
				 vol->meta.name, st.message);
			return ret;
		}
	} else {
		ret = disown_claim(m, vol);
		if (ret)
			return ret;
	}
	if (vol->spec.reclaim_policy == VOL_RECLAIM_DELETE && vol->spec.type == VOL_TYPE_NFS) {
		/* Both names: a Volume of the old scheme's PV, or the PV cadre makes now. */
		if (build_pv_legacy_name(vol, pv, sizeof(pv)) == 0) {
			ret = delete_pv(m, vol, pv);
			if (ret)
				return ret;
		}
		if (build_pv_name(vol, pv, sizeof(pv)) == 0) {
			ret = delete_pv(m, vol, pv);
			if (ret)
				return ret;
		}
	}
	log_info("volume", "%s/%s: deleted (reclaimPolicy %s)", vol->meta.namespace,
		 vol->meta.name, vol_reclaim_policy_name(vol->spec.reclaim_policy));
	return patch_finalizer(m, vol, obj, false);
}

/*
 * Make what the Volume lacks: for nfs the PV (choose_pv), then the claim.
 * CADRE_EEXIST, with why in refusal, when the PV's name is taken by a PV
 * that is not the Volume's: then nothing is made.
 */
static int ensure_claim(struct manager *m, const struct volume *vol, const json_t *obj,
			struct buf *refusal)
{
	struct kube_status st;
	char key[STORE_KEY_MAX], pv[BUILD_PV_NAME_SIZE] = "";
	struct buf err;
	json_t *existing = NULL, *want = NULL;
	bool found;
	int ret = 0;

	buf_init(&err, 1024);
	if (vol->spec.type == VOL_TYPE_NFS) {
		ret = choose_pv(m, vol, pv, &found, refusal);
		if (ret == CADRE_EINVAL)
			build_fail(&err, ret, "metadata.name", "names no PersistentVolume");
		if (ret)
			goto out;
		if (!found) {
			ret = build_pv(vol, &want, &err);
			if (ret)
				goto out;
			ret = kube_client_create(m->http, &kube_resource_pvs, NULL, want, NULL, &st);
			json_decref(want);
			want = NULL;
			if (ret == CADRE_EEXIST) {
				/* Not in the cache yet: whose it is shows when it is. */
				ret = CADRE_EAGAIN;
				goto out;
			}
			if (ret) {
				log_warn("volume", "%s/%s: cannot create PV %s: %s",
					 vol->meta.namespace, vol->meta.name, pv, st.message);
				goto out;
			}
		}
	}
	if (vol->spec.claim_name && *vol->spec.claim_name)
		goto out;  /* an existing claim is adopted, never created */
	snprintf(key, sizeof(key), "%s/%s", vol->meta.namespace, vol->meta.name);
	if (store_get(m->stores[KIND_PVCS], key, &existing) == 0)
		goto out;  /* also a claim left by a Retain Volume of the same name: adopted */
	ret = build_pvc(vol, *pv ? pv : NULL, &want, &err);
	if (ret)
		goto out;
	ret = kube_client_create(m->http, &kube_resource_pvcs, vol->meta.namespace, want, NULL, &st);
	json_decref(want);
	if (ret == CADRE_EEXIST)
		ret = 0;
	else if (ret == CADRE_ETERMINATING)
		log_debug("volume", "%s: no PVC: the namespace is being deleted", key);
	else if (ret)
		log_warn("volume", "%s: cannot create PVC: %s", key, st.message);
	else
		manager_event(m, obj, false, "CreatedClaim", "Create",
			      "created PersistentVolumeClaim for the Volume");
out:
	if (ret == CADRE_EINVAL)
		log_warn("volume", "%s/%s: %s", vol->meta.namespace, vol->meta.name, buf_str(&err));
	json_decref(existing);
	buf_release(&err);
	return ret;
}

/* Mirror the claim into status; the rest of status is set by the caller. */
static void observe_claim(struct manager *m, const struct volume *vol, struct vol_status *st,
			  int64_t now, int64_t generation)
{
	const char *claim = vol->spec.claim_name && *vol->spec.claim_name ?
			    vol->spec.claim_name : vol->meta.name;
	char key[STORE_KEY_MAX], msg[512];
	json_t *pvc = NULL, *mode;
	const json_t *pst;
	const char *phase;
	size_t i;

	free(st->claim_name);
	st->claim_name = strdup(claim);
	free(st->capacity);
	st->capacity = NULL;
	for (i = 0; i < st->n_access_modes; i++)
		free(st->access_modes[i]);
	free(st->access_modes);
	st->access_modes = NULL;
	st->n_access_modes = 0;

	snprintf(key, sizeof(key), "%s/%s", vol->meta.namespace, claim);
	if (store_get(m->stores[KIND_PVCS], key, &pvc)) {
		st->phase = VOL_PHASE_PENDING;
		snprintf(msg, sizeof(msg), "PersistentVolumeClaim %s does not exist yet", claim);
		condition_set(&st->conditions, "Ready", "False", "ClaimNotFound", msg, generation,
			      now, NULL);
		return;
	}
	pst = json_object_get(pvc, "status");
	phase = json_string_value(json_object_get(pst, "phase"));
	if (json_string_value(json_object_get(json_object_get(pst, "capacity"), "storage")))
		st->capacity = strdup(json_string_value(
			json_object_get(json_object_get(pst, "capacity"), "storage")));
	st->access_modes = calloc(json_array_size(json_object_get(pst, "accessModes")) + 1,
				  sizeof(char *));
	if (st->access_modes)
		json_array_foreach(json_object_get(pst, "accessModes"), i, mode)
			if (json_string_value(mode))
				st->access_modes[st->n_access_modes++] = strdup(json_string_value(mode));
	if (phase && !strcmp(phase, "Bound")) {
		st->phase = VOL_PHASE_BOUND;
		snprintf(msg, sizeof(msg), "PersistentVolumeClaim %s is Bound", claim);
		condition_set(&st->conditions, "Ready", "True", "Bound", msg, generation, now, NULL);
	} else if (phase && !strcmp(phase, "Lost")) {
		st->phase = VOL_PHASE_FAILED;
		snprintf(msg, sizeof(msg), "PersistentVolumeClaim %s lost its PersistentVolume",
			 claim);
		condition_set(&st->conditions, "Ready", "False", "ClaimLost", msg, generation, now,
			      NULL);
	} else {
		st->phase = VOL_PHASE_PENDING;
		snprintf(msg, sizeof(msg), "PersistentVolumeClaim %s is %s: waiting for a "
			 "PersistentVolume that offers %s %s", claim, phase ? phase : "Pending",
			 vol->spec.size ? vol->spec.size : "the requested size",
			 vol_access_mode_name(vol->spec.access_mode));
		condition_set(&st->conditions, "Ready", "False", "ClaimPending", msg, generation,
			      now, NULL);
	}
	json_decref(pvc);
}

/* A stored Volume status as vol_status_to_json writes it (status_canonical_fn). */
static json_t *canonical_status(const json_t *status)
{
	json_t *have = NULL;
	struct vol_status current;
	struct field_errors errs;

	field_errors_init(&errs);
	if (vol_status_parse(status, &current, &errs) == 0)
		have = vol_status_to_json(&current);
	vol_status_release(&current);
	field_errors_release(&errs);
	return have;
}

static int write_status(struct manager *m, const struct volume *vol, const json_t *obj,
			const struct vol_status *next)
{
	json_t *want = vol_status_to_json(next);
	int ret;

	if (!want)
		return CADRE_ENOMEM;
	ret = status_write(m, &kube_resource_volumes, obj, want, canonical_status, "volume",
			   NULL);
	json_decref(want);
	return ret;
}

/*
 * An Event for each change of phase, once the status saying so is stored
 * (a failed write is retried and would repeat it): Warning for Failed.
 */
static void phase_event(struct manager *m, const json_t *obj, enum vol_phase was,
			const struct vol_status *now)
{
	char note[EVENTS_MAX_NOTE];

	if (vol_phase_change_note(was, now, note, sizeof(note)))
		manager_event(m, obj, now->phase == VOL_PHASE_FAILED, vol_phase_name(now->phase),
			      "Reconcile", note);
}

int vol_reconcile(struct manager *m, const char *ns, const char *name)
{
	struct users users = { .ns = ns, .volume = name };
	struct field_errors errs;
	struct vol_status next;
	struct volume vol;
	struct buf invalid, refusal;
	char key[STORE_KEY_MAX];
	json_t *obj = NULL;
	int64_t now = time(NULL);
	int ret = 0;

	vol_init(&vol);
	vol_status_init(&next);
	field_errors_init(&errs);
	buf_init(&invalid, 8192);
	buf_init(&refusal, 1024);
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	if (store_get(m->stores[KIND_VOLUMES], key, &obj))
		goto out;
	if (vol_parse(obj, &vol, &errs) == 0)
		vol_validate(&vol, &errs);
	collect_users(m, key, &users);
	if (users.err) {
		ret = users.err;
		goto out;
	}
	if (users.n > 1)  /* qsort must not be given NULL, which no users leaves */
		qsort(users.names, users.n, sizeof(*users.names), cmp_names);

	if (vol.meta.deleting) {
		if (users.n) {
			/* Protection: the finalizer holds it while a job may mount it. */
			log_info("volume", "%s: deletion waits for %zu job(s) using it", key, users.n);
			goto status;
		}
		ret = meta_has_finalizer(&vol.meta, VOL_FINALIZER) ? finish_delete(m, &vol, obj) : 0;
		goto out;
	}
	if (!meta_has_finalizer(&vol.meta, VOL_FINALIZER)) {
		ret = patch_finalizer(m, &vol, obj, true);
		goto out;  /* the update comes back through the watch */
	}

status:
	ret = vol_status_parse(json_object_get(obj, "status"), &next, &errs);
	if (ret == CADRE_ENOMEM)
		goto out;
	ret = 0;
	if (field_errors_count(&errs)) {
		field_errors_join(&errs, &invalid);
		next.phase = VOL_PHASE_FAILED;
		condition_set(&next.conditions, "Ready", "False", "InvalidSpec", buf_str(&invalid),
			      vol.meta.generation, now, NULL);
	} else if (!vol.meta.deleting) {
		ret = ensure_claim(m, &vol, obj, &refusal);
		if (ret == CADRE_EINVAL)
			ret = 0;
		if (ret == CADRE_EEXIST) {
			/* Settled until that PV changes: its event brings the Volume back. */
			ret = 0;
			next.phase = VOL_PHASE_FAILED;
			condition_set(&next.conditions, "Ready", "False", "PersistentVolumeConflict",
				      buf_str(&refusal), vol.meta.generation, now, NULL);
			log_warn("volume", "%s: %s", key, buf_str(&refusal));
		} else {
			if (!ret)
				ret = sync_claim_owner(m, &vol, obj);
			observe_claim(m, &vol, &next, now, vol.meta.generation);
		}
	}
	for (size_t i = 0; i < next.n_used_by; i++)
		free(next.used_by[i]);
	free(next.used_by);
	next.used_by = users.names;
	next.n_used_by = users.n;
	users.names = NULL;
	users.n = 0;
	if (vol_status_observe(&next, vol.meta.generation, now))
		ret = CADRE_ENOMEM;
	{
		int wret = write_status(m, &vol, obj, &next);

		if (!wret)
			phase_event(m, obj, vol.status.phase, &next);
		if (!ret)
			ret = wret;
	}
out:
	users_release(&users);
	vol_status_release(&next);
	vol_release(&vol);
	field_errors_release(&errs);
	buf_release(&invalid);
	buf_release(&refusal);
	json_decref(obj);
	return ret;
}
