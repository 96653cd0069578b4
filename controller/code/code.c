/*
 * code.c - code bundles on the controller's side (code.h; docs/code.md).
 */
#include "controller/code/code.h"

#include "api/meta.h"
#include "api/trainingjob.h"
#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "controller/manager/manager.h"
#include "kube/client.h"

#include <inttypes.h>
#include <string.h>

static const char *meta_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

json_t *code_trim(const json_t *cm, void *arg)
{
	static const char *const keep[] = { "name", "namespace", "uid", "resourceVersion",
					    "creationTimestamp", "deletionTimestamp", "labels",
					    "ownerReferences" };
	static const char *const annotations[] = { CODE_ANNOTATION_DIGEST, CODE_ANNOTATION_PART,
						   CODE_ANNOTATION_PARTS, CODE_ANNOTATION_SIZE,
						   CODE_ANNOTATION_KIND };
	const json_t *meta = json_object_get(cm, "metadata");
	const json_t *ann = json_object_get(meta, "annotations");
	json_t *out = json_object(), *m = json_object(), *a = json_object();

	(void)arg;
	if (!out || !m || !a)
		goto fail;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		json_t *v = json_object_get(meta, keep[i]);

		if (v && json_object_set(m, keep[i], v))
			goto fail;
	}
	for (size_t i = 0; i < sizeof(annotations) / sizeof(annotations[0]); i++) {
		json_t *v = json_object_get(ann, annotations[i]);

		if (v && json_object_set(a, annotations[i], v))
			goto fail;
	}
	if (json_object_set_new(m, "annotations", a))
		goto fail_a;
	if (json_object_set_new(out, "metadata", m))
		goto fail_m;
	return out;
fail:
	json_decref(a);
fail_a:
	json_decref(m);
fail_m:
	json_decref(out);
	return NULL;
}

/* "namespace/value" into values. */
static int add_key(json_t *values, const char *ns, const char *value)
{
	char key[STORE_KEY_MAX];
	int n = snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", value);

	if (n < 0 || (size_t)n >= sizeof(key))
		return 0;
	return json_array_append_new(values, json_string(key)) ? CADRE_ENOMEM : 0;
}

int code_index_part(const json_t *cm, json_t *values, void *arg)
{
	const char *label = json_string_value(json_object_get(
		json_object_get(json_object_get(cm, "metadata"), "labels"), CODE_LABEL));

	(void)arg;
	if (!label || strlen(label) != CODE_LABEL_LEN)
		return 0;
	return add_key(values, meta_str(cm, "namespace"), label);
}

int code_index_job(const json_t *job, json_t *values, void *arg)
{
	const json_t *list = json_object_get(json_object_get(job, "spec"), "code"), *item;
	char label[CODE_LABEL_LEN + 1];
	size_t i;
	int err;

	(void)arg;
	json_array_foreach((json_t *)list, i, item) {
		const char *digest = json_string_value(json_object_get(item, "digest"));

		if (code_label_value(digest, label))
			continue;
		if ((err = add_key(values, meta_str(job, "namespace"), label)))
			return err;
	}
	return 0;
}

int code_state_of(struct store *parts, const char *ns, const char *digest,
		  struct code_state *out)
{
	unsigned char seen[CODE_MAX_PARTS] = { 0 };
	char label[CODE_LABEL_LEN + 1], key[STORE_KEY_MAX], why[192] = "";
	json_t *found = NULL, *cm;
	uint32_t have = 0;
	size_t i;
	int err;

	memset(out, 0, sizeof(*out));
	if (code_label_value(digest, label))
		return CADRE_EINVAL;
	snprintf(key, sizeof(key), "%s/%s", ns, label);
	if ((err = store_by_index(parts, CODE_INDEX, key, &found)))
		return err;
	json_array_foreach(found, i, cm) {
		struct code_part p;

		if (meta_str(cm, "deletionTimestamp"))
			continue;
		if (code_part_read(cm, &p, why, sizeof(why))) {
			snprintf(out->why, sizeof(out->why), "ConfigMap %.64s: %.160s",
				 meta_str(cm, "name") ? meta_str(cm, "name") : "?", why);
			continue;
		}
		if (strcmp(p.digest, digest))
			continue;
		/* The first part read says what the bundle is; one that disagrees is not counted. */
		if (!out->parts) {
			out->parts = p.parts;
			out->size = p.size;
			out->file = p.file;
		} else if (p.parts != out->parts || p.size != out->size || p.file != out->file) {
			snprintf(out->why, sizeof(out->why), "its ConfigMaps disagree on its size "
				 "(%.64s)", meta_str(cm, "name") ? meta_str(cm, "name") : "?");
			continue;
		}
		if (!seen[p.index]++)
			have++;
	}
	json_decref(found);
	if (out->parts && have == out->parts && !out->why[0]) {
		out->complete = true;
		return 0;
	}
	if (out->why[0])
		return 0;
	if (!out->parts)
		snprintf(out->why, sizeof(out->why), "no ConfigMap labelled %s=%s in namespace %s "
			 "(cadre push, sbatch and launch upload it)", CODE_LABEL, label, ns);
	else
		snprintf(out->why, sizeof(out->why), "%" PRIu32 " of its %" PRIu32 " ConfigMaps "
			 "(labelled %s=%s) are in namespace %s", have, out->parts, CODE_LABEL,
			 label, ns);
	return 0;
}

/* Whether cm's ownerReferences name uid. */
static bool owned_by(const json_t *cm, const char *uid)
{
	const json_t *refs = json_object_get(json_object_get(cm, "metadata"), "ownerReferences");
	const json_t *ref;
	size_t i;

	json_array_foreach((json_t *)refs, i, ref)
	{
		const char *ref_uid = json_string_value(json_object_get(ref, "uid"));

		if (ref_uid && !strcmp(ref_uid, uid))
			return true;
	}
	return false;
}

int code_own(struct manager *m, const struct trainingjob *job, const char *digest)
{
	char label[CODE_LABEL_LEN + 1], key[STORE_KEY_MAX];
	const char *ns = job->meta.namespace, *uid = job->meta.uid;
	json_t *found = NULL, *cm, *patch = NULL;
	size_t i;
	int err;

	if (!ns || !uid || !job->meta.name || code_label_value(digest, label))
		return CADRE_EINVAL;
	if (job->meta.labels && json_object_get(job->meta.labels, LABEL_ARRAY_JOB))
		return 0;
	snprintf(key, sizeof(key), "%s/%s", ns, label);
	if ((err = store_by_index(m->stores[KIND_CODE], CODE_INDEX, key, &found)))
		return err;
	json_array_foreach(found, i, cm) {
		struct kube_status st;
		const char *name = meta_str(cm, "name");

		if (!name || owned_by(cm, uid) || meta_str(cm, "deletionTimestamp"))
			continue;
		if (!patch) {
			patch = json_pack("{s:{s:[{s:s, s:s, s:s, s:s}]}}", "metadata",
					  "ownerReferences", "apiVersion", CADRE_API_VERSION,
					  "kind", "TrainingJob", "name", job->meta.name, "uid", uid);
			if (!patch) {
				err = CADRE_ENOMEM;
				break;
			}
		}
		kube_status_clear(&st);
		err = kube_client_patch(m->http, &kube_resource_configmaps, ns, name, NULL,
					KUBE_PATCH_STRATEGIC, patch, NULL, &st);
		if (err == CADRE_ENOTFOUND) {
			err = 0;  /* collected meanwhile: the job's next pass sees it missing */
			continue;
		}
		if (err) {
			log_warn("code", "%s/%s: cannot make job %s an owner: %s", ns, name,
				 job->meta.name, st.message);
			break;
		}
	}
	json_decref(patch);
	json_decref(found);
	return err;
}

/* The users of a bundle: how many, how many still running, the last end. */
struct users {
	size_t n, active;
	int64_t last_end;
};

static void count_users(const json_t *jobs, struct users *u)
{
	const json_t *job;
	size_t i;

	memset(u, 0, sizeof(*u));
	json_array_foreach((json_t *)jobs, i, job) {
		const json_t *status = json_object_get(job, "status");
		const char *phase = json_string_value(json_object_get(status, "phase"));
		const char *done = json_string_value(json_object_get(status, "completionTime"));
		int64_t t;

		u->n++;
		if (!phase || (strcmp(phase, "Succeeded") && strcmp(phase, "Failed"))) {
			u->active++;
			continue;
		}
		if (done && !api_time_parse(done, &t) && t > u->last_end)
			u->last_end = t;
	}
}

int code_reconcile(struct manager *m, const char *ns, const char *label)
{
	const struct options *o = m->opts;
	char key[STORE_KEY_MAX];
	json_t *parts = NULL, *jobs = NULL, *cm;
	int64_t now = manager_time(m), newest = 0, due;
	struct users u;
	size_t i;
	int err;

	snprintf(key, sizeof(key), "%s/%s", ns, label);
	if ((err = store_by_index(m->stores[KIND_CODE], CODE_INDEX, key, &parts)) ||
	    (err = store_by_index(m->stores[KIND_TRAININGJOBS], CODE_INDEX, key, &jobs)))
		goto out;
	if (!json_array_size(parts))
		goto out;
	count_users(jobs, &u);
	if (u.active)
		goto out;  /* a job's end queues the bundle again */
	json_array_foreach(parts, i, cm) {
		const char *made = meta_str(cm, "creationTimestamp");
		int64_t t;

		if (made && !api_time_parse(made, &t) && t > newest)
			newest = t;
	}
	if (u.n) {
		if (o->code_retention_seconds < 0)
			goto out;
		due = u.last_end + o->code_retention_seconds;
	} else {
		if (o->code_orphan_seconds < 0)
			goto out;
		due = newest + o->code_orphan_seconds;
	}
	if (now < due) {
		manager_enqueue_after(m, "code", ns, label, (uint64_t)(due - now) * 1000);
		goto out;
	}
	log_info("code", "%s/%s: deleting the code bundle: %s", ns, label,
		 u.n ? "every job that uses it has finished, past --code-retention" :
		       "no job names it, past --code-orphan-seconds");
	json_array_foreach(parts, i, cm) {
		struct kube_status st;
		const char *name = meta_str(cm, "name");
		int e;

		if (!name || meta_str(cm, "deletionTimestamp"))
			continue;
		kube_status_clear(&st);
		e = kube_client_delete(m->http, &kube_resource_configmaps, ns, name, NULL, NULL,
				       &st);
		if (e && e != CADRE_ENOTFOUND && !err) {
			log_warn("code", "%s/%s: cannot delete: %s", ns, name, st.message);
			err = e;
		}
	}
out:
	json_decref(parts);
	json_decref(jobs);
	return err;
}

/* Per namespace: the bytes of the parts cached. */
static int add_bytes(void *ctx, const char *key, const json_t *cm)
{
	json_t *sums = ctx;
	struct code_part p;
	const char *ns = meta_str(cm, "namespace");
	json_t *sum;

	(void)key;
	if (!ns || code_part_read(cm, &p, NULL, 0))
		return 0;
	sum = json_object_get(sums, ns);
	return json_object_set_new(sums, ns, json_integer((sum ? json_integer_value(sum) : 0) +
		(json_int_t)code_part_bytes(p.size, p.index))) ? CADRE_ENOMEM : 0;
}

void code_metrics_render(struct store *parts, struct buf *out)
{
	json_t *sums = json_object();
	const char *ns;
	json_t *v;

	buf_adds(out, "# HELP cadre_code_bundle_bytes Bytes of code bundles (their ConfigMaps' "
		 "data) stored per namespace.\n# TYPE cadre_code_bundle_bytes gauge\n");
	if (!sums || !parts || store_foreach(parts, add_bytes, sums)) {
		json_decref(sums);
		return;
	}
	json_object_foreach(sums, ns, v)
		buf_addf(out, "cadre_code_bundle_bytes{namespace=\"%s\"} %" JSON_INTEGER_FORMAT "\n",
			 ns, json_integer_value(v));
	json_decref(sums);
}
