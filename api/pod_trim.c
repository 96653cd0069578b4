#include "api/pod_trim.h"
#include "base/err.h"
#include "api/quantity.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int pod_trim_quantity_milli(const char *s, long long *milli)
{
	int64_t v;
	int err = quantity_parse(s, &v);

	if (err == CADRE_ETOOBIG) {
		*milli = s[0] == '-' ? -LLONG_MAX : LLONG_MAX;
		return 0;
	}
	if (err)
		return CADRE_EPARSE;
	*milli = v;
	return 0;
}

/* A list of resource amounts; names are borrowed from the pod being trimmed. */
#define RES_MAX 32

struct reslist {
	size_t n;
	const char *name[RES_MAX];
	long long milli[RES_MAX];
};

static long long sat_add(long long a, long long b)
{
	if (b > 0 && a > LLONG_MAX - b)
		return LLONG_MAX;
	return a + b;
}

static long long *res_slot(struct reslist *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->name[i], name))
			return &r->milli[i];
	if (r->n == RES_MAX)
		return NULL;
	r->name[r->n] = name;
	r->milli[r->n] = 0;
	return &r->milli[r->n++];
}

/* r += list (a ResourceList object). Unparseable amounts count as 0. */
static void res_add(struct reslist *r, const json_t *list)
{
	const char *name;
	json_t *q;

	json_object_foreach((json_t *)list, name, q) {
		long long m, *slot;

		if (!json_is_string(q) || pod_trim_quantity_milli(json_string_value(q), &m))
			continue;
		slot = res_slot(r, name);
		if (slot)
			*slot = sat_add(*slot, m);
	}
}

static void res_add_list(struct reslist *r, const struct reslist *other)
{
	size_t i;

	for (i = 0; i < other->n; i++) {
		long long *slot = res_slot(r, other->name[i]);

		if (slot)
			*slot = sat_add(*slot, other->milli[i]);
	}
}

static void res_max(struct reslist *r, const struct reslist *other)
{
	size_t i;

	for (i = 0; i < other->n; i++) {
		long long *slot = res_slot(r, other->name[i]);

		if (slot && other->milli[i] > *slot)
			*slot = other->milli[i];
	}
}

static const json_t *container_requests(const json_t *c)
{
	return json_object_get(json_object_get(c, "resources"), "requests");
}

/*
 * A pod's effective requests, as the scheduler computes them
 * (k8s.io/component-helpers resource.PodRequests): regular containers
 * summed; restartable init containers (sidecars) added to that sum and to
 * every later init container's need; the result is the larger of the sum
 * and the largest init need; then the pod overhead.
 */
static void pod_requests(const json_t *spec, struct reslist *out)
{
	struct reslist sidecars = { 0 }, init_max = { 0 };
	const json_t *c;
	size_t i;

	out->n = 0;
	json_array_foreach(json_object_get(spec, "containers"), i, c)
		res_add(out, container_requests(c));
	json_array_foreach(json_object_get(spec, "initContainers"), i, c) {
		const char *policy = json_string_value(json_object_get(c, "restartPolicy"));
		struct reslist need = { 0 };

		if (policy && !strcmp(policy, "Always")) {
			res_add(out, container_requests(c));
			res_add(&sidecars, container_requests(c));
			need = sidecars;
		} else {
			res_add(&need, container_requests(c));
			res_add_list(&need, &sidecars);
		}
		res_max(&init_max, &need);
	}
	res_max(out, &init_max);
	res_add(out, json_object_get(spec, "overhead"));
}

/* Share the string node of src[key] with dst; absent or empty is skipped. */
static int share_string(json_t *dst, const char *key, const json_t *src, const char *src_key)
{
	json_t *v = json_object_get(src, src_key);

	if (!json_is_string(v) || !json_string_length(v))
		return 0;
	return json_object_set_nocheck(dst, key, v) ? CADRE_ENOMEM : 0;
}

/* Canonical quantity text for milli-units: "<n>" when whole, else "<n>m". */
static json_t *quantity_json(long long milli)
{
	char text[32];

	if (milli % 1000 == 0)
		snprintf(text, sizeof(text), "%lld", milli / 1000);
	else
		snprintf(text, sizeof(text), "%lldm", milli);
	return json_string_nocheck(text);
}

/* dst[key] = src[key], the same node (shared, not copied); absent or null is skipped. */
static bool share(json_t *dst, const json_t *src, const char *key)
{
	json_t *v = json_object_get(src, key);

	if (!v || json_is_null(v))
		return true;
	return json_object_set_nocheck(dst, key, v) == 0;
}

/* Share the listed keys of src into dst. */
static bool share_keys(json_t *dst, const json_t *src, const char *const *keys)
{
	for (; *keys; keys++)
		if (!share(dst, src, *keys))
			return false;
	return true;
}

/* A new empty object or array (array true) as dst[key], owned by dst; NULL on no memory. */
static json_t *child(json_t *dst, const char *key, bool array)
{
	json_t *v = array ? json_array() : json_object();

	if (!v || json_object_set_new_nocheck(dst, key, v))
		return NULL;
	return v;
}

/* A new empty object appended to array, owned by it; NULL on no memory. */
static json_t *append_object(json_t *array)
{
	json_t *v = json_object();

	if (!v || json_array_append_new(array, v))
		return NULL;
	return v;
}

/* Remove dst[key] when it is an empty object or array. */
static void drop_empty(json_t *dst, const char *key)
{
	json_t *v = json_object_get(dst, key);

	if ((json_is_object(v) && !json_object_size(v)) || (json_is_array(v) && !json_array_size(v)))
		json_object_del(dst, key);
}

static bool listed(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

static const char *const own_meta_keys[] = {
	"name", "namespace", "uid", "resourceVersion", "labels", "deletionTimestamp", NULL,
};
static const char *const own_spec_keys[] = { "nodeName", "schedulingGates", NULL };
static const char *const own_status_keys[] = { "phase", "podIP", "reason", "message", NULL };
static const char *const own_condition_types[] = {
	"PodScheduled", "Ready", "DisruptionTarget", NULL,
};
static const char *const own_condition_keys[] = { "type", "status", "reason", "message", NULL };
static const char *const own_state_keys[] = { "waiting", "terminated", NULL };
/* The run before a restart in place (spec.restartStrategy InPlace): how it ended. */
static const char *const own_last_state_keys[] = { "terminated", NULL };

/*
 * cadre's own pod, cut to what its reconcilers read (see store.h). Every
 * new node is attached to its parent as soon as it is made, so one decref
 * of out frees all on failure.
 */
static json_t *trim_own_pod(const json_t *pod)
{
	const json_t *spec = json_object_get(pod, "spec");
	const json_t *status = json_object_get(pod, "status");
	json_t *out = json_object(), *meta, *sp, *st, *list, *item, *sub;
	const json_t *c;
	size_t i;

	if (!out || !(meta = child(out, "metadata", false)) ||
	    !share_keys(meta, json_object_get(pod, "metadata"), own_meta_keys))
		goto fail;

	if (!(sp = child(out, "spec", false)) || !share_keys(sp, spec, own_spec_keys) ||
	    !(list = child(sp, "containers", true)))
		goto fail;
	/* Where admission pinned it, while it is not bound (cache_record_pod charges it there). */
	if (!json_object_get(spec, "nodeName") && pod_pinned_node(spec) &&
	    json_object_set_new_nocheck(sp, "pinnedNode", json_string(pod_pinned_node(spec))))
		goto fail;
	json_array_foreach(json_object_get(spec, "containers"), i, c) {
		if (!(item = append_object(list)) || !share(item, c, "name") ||
		    !(sub = child(item, "resources", false)) ||
		    !share(sub, json_object_get(c, "resources"), "requests"))
			goto fail;
		drop_empty(item, "resources");
	}

	if (!(st = child(out, "status", false)) || !share_keys(st, status, own_status_keys) ||
	    !(list = child(st, "conditions", true)))
		goto fail;
	json_array_foreach(json_object_get(status, "conditions"), i, c) {
		if (!listed(json_string_value(json_object_get(c, "type")), own_condition_types))
			continue;
		if (!(item = append_object(list)) || !share_keys(item, c, own_condition_keys))
			goto fail;
	}
	if (!(list = child(st, "containerStatuses", true)))
		goto fail;
	json_array_foreach(json_object_get(status, "containerStatuses"), i, c) {
		if (!(item = append_object(list)) || !share(item, c, "name") ||
		    !share(item, c, "allocatedResourcesStatus") ||
		    !(sub = child(item, "state", false)) ||
		    !share_keys(sub, json_object_get(c, "state"), own_state_keys) ||
		    !(sub = child(item, "lastState", false)) ||
		    !share_keys(sub, json_object_get(c, "lastState"), own_last_state_keys))
			goto fail;
		drop_empty(item, "state");
		drop_empty(item, "lastState");
	}
	drop_empty(st, "conditions");
	drop_empty(st, "containerStatuses");
	drop_empty(sp, "containers");
	drop_empty(out, "spec");
	drop_empty(out, "status");
	return out;
fail:
	json_decref(out);
	return NULL;
}

json_t *pod_trim(const json_t *pod, void *arg)
{
	const json_t *meta = json_object_get(pod, "metadata");

	if (json_object_get(json_object_get(meta, "labels"), LABEL_JOB_NAME))
		return trim_own_pod(pod);
	return pod_trim_summary(pod, arg);
}

const char *pod_pinned_node(const json_t *spec)
{
	const json_t *terms = json_object_get(json_object_get(json_object_get(json_object_get(
		spec, "affinity"), "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"),
		"nodeSelectorTerms");
	const char *pinned = NULL;
	const json_t *term, *field;
	size_t i, j;

	/* Terms are OR-ed: the pod is pinned only when every term names the same node. */
	json_array_foreach(terms, i, term) {
		const char *named = NULL;

		json_array_foreach(json_object_get(term, "matchFields"), j, field) {
			const json_t *values = json_object_get(field, "values");
			const char *key = json_string_value(json_object_get(field, "key"));
			const char *op = json_string_value(json_object_get(field, "operator"));

			if (key && op && !strcmp(key, "metadata.name") && !strcmp(op, "In") &&
			    json_array_size(values) == 1)
				named = json_string_value(json_array_get(values, 0));
		}
		if (!named || (pinned && strcmp(pinned, named)))
			return NULL;
		pinned = named;
	}
	return pinned;
}

/*
 * A DaemonSet's pod or a static (mirror) pod: a service of the node, not
 * a job, so --exclusive does not count it (as Slurm counts no daemon).
 */
static bool node_service(const json_t *meta)
{
	const json_t *ref;
	size_t i;

	if (json_object_get(json_object_get(meta, "annotations"), "kubernetes.io/config.mirror"))
		return true;
	json_array_foreach(json_object_get(meta, "ownerReferences"), i, ref) {
		const char *kind = json_string_value(json_object_get(ref, "kind"));

		if (kind && !strcmp(kind, "DaemonSet"))
			return true;
	}
	return false;
}

json_t *pod_trim_summary(const json_t *pod, void *arg)
{
	const json_t *meta = json_object_get(pod, "metadata");
	const json_t *spec = json_object_get(pod, "spec");
	const json_t *gates = json_object_get(spec, "schedulingGates");
	json_t *out = NULL, *requests = NULL;
	struct reslist sum;
	size_t i;

	(void)arg;
	out = json_object();
	requests = json_object();
	if (!out || !requests)
		goto fail;
	if (share_string(out, "namespace", meta, "namespace") ||
	    share_string(out, "name", meta, "name") ||
	    share_string(out, "nodeName", spec, "nodeName") ||
	    share_string(out, "phase", json_object_get(pod, "status"), "phase"))
		goto fail;
	pod_requests(spec, &sum);
	for (i = 0; i < sum.n; i++) {
		if (!sum.milli[i])
			continue;
		if (json_object_set_new_nocheck(requests, sum.name[i],
						quantity_json(sum.milli[i])))
			goto fail;
	}
	if (json_object_size(requests) &&
	    json_object_set_nocheck(out, "requests", requests))
		goto fail;
	if (json_array_size(gates) &&
	    json_object_set_new_nocheck(out, "schedulingGates", json_true()))
		goto fail;
	if (node_service(meta) && json_object_set_new_nocheck(out, "nodeService", json_true()))
		goto fail;
	if (!json_object_get(out, "nodeName") && pod_pinned_node(spec) &&
	    json_object_set_new_nocheck(out, "pinnedNode", json_string(pod_pinned_node(spec))))
		goto fail;
	json_decref(requests);
	return out;
fail:
	json_decref(requests);
	json_decref(out);
	return NULL;
}

int pod_index_job(const json_t *pod, json_t *values, void *arg)
{
	const json_t *meta = json_object_get(pod, "metadata");
	const char *job = json_string_value(json_object_get(json_object_get(meta, "labels"),
							     LABEL_JOB_NAME));
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	/* a namespace (63) and a label value (63); as long as a store key may be (kube/store.h) */
	char value[320];
	int n;

	(void)arg;
	if (!job || !*job)
		return 0;
	n = snprintf(value, sizeof(value), "%s/%s", ns ? ns : "", job);
	if (n < 0 || (size_t)n >= sizeof(value))
		return 0;
	return json_array_append_new(values, json_string_nocheck(value)) ? CADRE_ENOMEM : 0;
}

int pod_index_node(const json_t *pod, json_t *values, void *arg)
{
	json_t *node = json_object_get(json_object_get(pod, "spec"), "nodeName");

	(void)arg;
	if (!node)
		node = json_object_get(pod, "nodeName");
	if (!json_is_string(node) || !json_string_length(node))
		return 0;
	return json_array_append(values, node) ? CADRE_ENOMEM : 0;
}
