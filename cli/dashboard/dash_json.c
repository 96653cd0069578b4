/*
 * dash_json.c - what the dashboard's page reads, built from the objects the
 * reflectors keep. Every field is picked by name: a pod's environment, a
 * Secret or the kubeconfig never reaches a row, whatever the objects hold.
 */
#include "cli/dashboard/dash.h"

#include "base/err.h"

#include <stdlib.h>
#include <string.h>

#define MAX_EVENTS 50

static const json_t *get(const json_t *o, const char *a)
{
	return json_object_get(o, a);
}

static const char *str(const json_t *o, const char *a)
{
	return json_string_value(get(o, a));
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static int key_of(const json_t *obj, char *out, size_t size)
{
	const json_t *m = get(obj, "metadata");
	const char *ns = str(m, "namespace"), *name = str(m, "name");
	int n;

	if (!name)
		return CADRE_EINVAL;
	n = ns ? snprintf(out, size, "%s/%s", ns, name) : snprintf(out, size, "%s", name);
	return n < 0 || (size_t)n >= size ? CADRE_EINVAL : 0;
}

static bool is_waiting(const json_t *tj)
{
	const char *phase = or_empty(str(get(tj, "status"), "phase"));

	if (json_is_true(get(get(tj, "spec"), "suspend")))
		return false;
	return !strcmp(phase, "Queued") || !strcmp(phase, "Pending") || !*phase;
}

/* Admission's order: priority (higher first), creation (older first), namespace, name. */
static int queue_cmp(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	json_int_t px = json_integer_value(get(get(x, "spec"), "priority"));
	json_int_t py = json_integer_value(get(get(y, "spec"), "priority"));
	const json_t *mx = get(x, "metadata"), *my = get(y, "metadata");
	int c;

	if (px != py)
		return px > py ? -1 : 1;
	/* RFC 3339 in UTC ("...Z"), as the API server writes it, sorts as text. */
	if ((c = strcmp(or_empty(str(mx, "creationTimestamp")), or_empty(str(my, "creationTimestamp")))))
		return c;
	if ((c = strcmp(or_empty(str(mx, "namespace")), or_empty(str(my, "namespace")))))
		return c;
	return strcmp(or_empty(str(mx, "name")), or_empty(str(my, "name")));
}

json_t *dash_queue_order(const json_t *jobs)
{
	size_t n = json_array_size(jobs), k = 0;
	const json_t **waiting = calloc(n ? n : 1, sizeof(*waiting));
	json_t *out = json_array();
	char key[320];

	if (!waiting || !out)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (is_waiting(json_array_get(jobs, i)))
			waiting[k++] = json_array_get(jobs, i);
	qsort(waiting, k, sizeof(*waiting), queue_cmp);
	for (size_t i = 0; i < k; i++)
		if (!key_of(waiting[i], key, sizeof(key)) && json_array_append_new(out, json_string(key)))
			goto fail;
	free(waiting);
	return out;
fail:
	free(waiting);
	json_decref(out);
	return NULL;
}

static const json_t *condition(const json_t *tj, const char *type)
{
	const json_t *conds = get(get(tj, "status"), "conditions"), *c;
	size_t i;

	json_array_foreach(conds, i, c)
		if (!strcmp(or_empty(str(c, "type")), type))
			return c;
	return NULL;
}

/* Why a job waits: the Admitted condition's reason while it is not True. */
static void wait_reason(const json_t *tj, const char **reason, const char **message)
{
	const json_t *adm = condition(tj, "Admitted");
	const json_t *st = get(tj, "status");

	*reason = "";
	*message = or_empty(str(st, "message"));
	if (json_is_true(get(get(tj, "spec"), "suspend")))
		*reason = "Suspended";
	else if (adm && strcmp(or_empty(str(adm, "status")), "True")) {
		*reason = or_empty(str(adm, "reason"));
		if (!**message)
			*message = or_empty(str(adm, "message"));
	}
}

static json_t *jint(const json_t *o, const char *a)
{
	return json_integer(json_integer_value(get(o, a)));
}

/*
 * The row's requeues and preemptions (docs/design.md 3.5): how often it was
 * requeued and preempted, who preempted it last ("" if nobody) and how many
 * jobs it is preempting now. 0 or CADRE_ENOMEM.
 */
static int preemption_fields(json_t *row, const json_t *st)
{
	const json_t *pre = get(st, "preemption");

	if (json_object_set_new(row, "requeues", jint(st, "requeues")) ||
	    json_object_set_new(row, "preemptions", jint(st, "preemptions")) ||
	    json_object_set_new(row, "preemptedBy", json_string(or_empty(str(pre, "preemptor")))) ||
	    json_object_set_new(row, "preempting",
				json_integer((json_int_t)json_array_size(get(st, "preempting")))))
		return CADRE_ENOMEM;
	return 0;
}

json_t *dash_job_summary(const json_t *tj, int queue_pos)
{
	const json_t *m = get(tj, "metadata"), *spec = get(tj, "spec"), *st = get(tj, "status");
	const char *reason, *message;
	char key[320];
	json_t *row;

	if (key_of(tj, key, sizeof(key)))
		return NULL;
	wait_reason(tj, &reason, &message);
	row = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:o, s:s, s:s, s:s,"
			" s:o, s:o, s:b}",
			"key", key, "namespace", or_empty(str(m, "namespace")),
			"name", or_empty(str(m, "name")), "jobId", or_empty(str(st, "jobId")),
			"phase", str(st, "phase") ? str(st, "phase") : "Pending",
			"ready", jint(st, "readyNodes"),
			"total", json_integer(json_integer_value(get(spec, "numNodes")) ?
					      json_integer_value(get(spec, "numNodes")) : 1),
			"accelerators", or_empty(str(get(spec, "resources"), "accelerators")),
			"queue", or_empty(str(spec, "queue")), "priority", jint(spec, "priority"),
			"reason", reason, "message", message,
			"created", or_empty(str(m, "creationTimestamp")),
			"restarts", jint(st, "restarts"), "infraRestarts", jint(st, "infraRestarts"),
			"suspended", json_is_true(get(spec, "suspend")));
	if (row && (preemption_fields(row, st) ||
		    (queue_pos > 0 &&
		     json_object_set_new(row, "queuePosition", json_integer(queue_pos))))) {
		json_decref(row);
		return NULL;
	}
	return row;
}

json_t *dash_job_map(const json_t *jobs)
{
	json_t *queue = dash_queue_order(jobs), *map = json_object(), *tj, *q;
	size_t i, k;

	if (!queue || !map)
		goto fail;
	json_array_foreach(jobs, i, tj) {
		char key[320];
		int pos = 0;
		json_t *row;

		if (key_of(tj, key, sizeof(key)))
			continue;
		json_array_foreach(queue, k, q)
			if (!strcmp(json_string_value(q), key))
				pos = (int)k + 1;
		if (!(row = dash_job_summary(tj, pos)) || json_object_set_new(map, key, row))
			goto fail;
	}
	json_decref(queue);
	return map;
fail:
	json_decref(queue);
	json_decref(map);
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of map, sorted; *n of them. The strings are borrowed from map. */
static const char **sorted_keys(const json_t *map, size_t *n)
{
	const char **keys = calloc(json_object_size(map) + 1, sizeof(*keys)), *k;
	json_t *v;

	*n = 0;
	if (!keys)
		return NULL;
	json_object_foreach((json_t *)map, k, v)
		keys[(*n)++] = k;
	qsort(keys, *n, sizeof(*keys), cmp_str);
	return keys;
}

int dash_job_delta(const json_t *old_map, const json_t *new_map, json_t **out)
{
	json_t *upsert = json_array(), *gone = json_array();
	const char **keys = NULL;
	size_t n;
	int e = CADRE_ENOMEM;

	*out = NULL;
	if (!upsert || !gone || !(keys = sorted_keys(new_map, &n)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		json_t *now = json_object_get(new_map, keys[i]);

		if (!json_equal(now, json_object_get(old_map, keys[i])) &&
		    json_array_append(upsert, now))
			goto out;
	}
	free(keys);
	if (!(keys = sorted_keys(old_map, &n)))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!json_object_get(new_map, keys[i]) && json_array_append_new(gone, json_string(keys[i])))
			goto out;
	e = 0;
	if (json_array_size(upsert) || json_array_size(gone))
		*out = json_pack("{s:O, s:O}", "upsert", upsert, "delete", gone);
	if ((json_array_size(upsert) || json_array_size(gone)) && !*out)
		e = CADRE_ENOMEM;
out:
	free(keys);
	json_decref(upsert);
	json_decref(gone);
	return e;
}

/* The main container's end: exit code and reason, once it terminated. */
static void pod_exit(const json_t *pod, json_t *rank)
{
	const json_t *cs = get(get(pod, "status"), "containerStatuses"), *c;
	size_t i;

	json_array_foreach(cs, i, c) {
		const json_t *term = get(get(c, "state"), "terminated");

		if (!term)
			continue;
		json_object_set_new(rank, "exitCode", jint(term, "exitCode"));
		json_object_set_new(rank, "reason", json_string(or_empty(str(term, "reason"))));
		return;
	}
}

static const json_t *pod_named(const json_t *pods, const char *name)
{
	const json_t *p;
	size_t i;

	json_array_foreach(pods, i, p)
		if (name && !strcmp(or_empty(str(get(p, "metadata"), "name")), name))
			return p;
	return NULL;
}

static json_t *ranks(const json_t *tj, const json_t *pods)
{
	const json_t *nodes = get(get(tj, "status"), "nodes"), *n;
	json_t *out = json_array();
	size_t i;

	json_array_foreach(nodes, i, n) {
		const json_t *pod = pod_named(pods, str(n, "pod"));
		const json_t *pst = get(pod, "status");
		const char *phase = str(pst, "phase") ? str(pst, "phase") : str(n, "phase");
		json_t *r = json_pack("{s:o, s:s, s:s, s:s, s:s, s:n, s:s}",
				      "rank", jint(n, "rank"), "pod", or_empty(str(n, "pod")),
				      "node", or_empty(str(n, "node") ? str(n, "node") :
						       str(get(pod, "spec"), "nodeName")),
				      "ip", or_empty(str(n, "ip") ? str(n, "ip") : str(pst, "podIP")),
				      "phase", or_empty(phase), "exitCode", "reason", "");

		if (!r || json_array_append_new(out, r)) {
			json_decref(out);
			return NULL;
		}
		pod_exit(pod, r);
	}
	return out;
}

static int by_field(const json_t *x, const json_t *y, const char *field)
{
	return strcmp(or_empty(str(x, field)), or_empty(str(y, field)));
}

static int cond_cmp(const void *a, const void *b)
{
	int c = by_field(*(const json_t *const *)a, *(const json_t *const *)b, "lastTransitionTime");

	return c ? c : by_field(*(const json_t *const *)a, *(const json_t *const *)b, "type");
}

static int event_cmp(const void *a, const void *b)
{
	int c = by_field(*(const json_t *const *)a, *(const json_t *const *)b, "time");

	return c ? c : by_field(*(const json_t *const *)a, *(const json_t *const *)b, "message");
}

/* rows (an array of new objects) sorted by cmp, the last `keep` of them. */
static json_t *sorted(json_t *rows, int (*cmp)(const void *, const void *), size_t keep)
{
	size_t n = json_array_size(rows);
	json_t **v = calloc(n + 1, sizeof(*v)), *out = json_array();

	if (!v || !out || !rows) {
		free(v);
		json_decref(out);
		json_decref(rows);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(rows, i);
	qsort(v, n, sizeof(*v), cmp);
	for (size_t i = n > keep ? n - keep : 0; i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	json_decref(rows);
	return out;
}

static json_t *conditions(const json_t *tj)
{
	const json_t *conds = get(get(tj, "status"), "conditions"), *c;
	json_t *rows = json_array();
	size_t i;

	json_array_foreach(conds, i, c)
		json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:s, s:s}",
			"type", or_empty(str(c, "type")), "status", or_empty(str(c, "status")),
			"reason", or_empty(str(c, "reason")), "message", or_empty(str(c, "message")),
			"lastTransitionTime", or_empty(str(c, "lastTransitionTime"))));
	return sorted(rows, cond_cmp, 16);
}

/* A core/v1 Event's time: the last time it was seen, else when it began. */
static const char *event_time(const json_t *ev)
{
	const char *t = str(ev, "lastTimestamp");

	if (!t || !*t)
		t = str(ev, "eventTime");
	if (!t || !*t)
		t = str(get(ev, "metadata"), "creationTimestamp");
	return or_empty(t);
}

static json_t *events(const json_t *evs)
{
	json_t *rows = json_array();
	const json_t *ev;
	size_t i;

	json_array_foreach(evs, i, ev)
		json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:s, s:I}",
			"time", event_time(ev), "type", or_empty(str(ev, "type")),
			"reason", or_empty(str(ev, "reason")), "message", or_empty(str(ev, "message")),
			"count", (json_int_t)(json_integer_value(get(ev, "count")) ?
					      json_integer_value(get(ev, "count")) : 1)));
	return sorted(rows, event_cmp, MAX_EVENTS);
}

static json_t *last_failure(const json_t *tj)
{
	const json_t *f = get(get(tj, "status"), "lastFailure");

	if (!json_is_object(f))
		return json_null();
	return json_pack("{s:o, s:s, s:s, s:o, s:s, s:s, s:s}", "rank", jint(f, "rank"),
			 "pod", or_empty(str(f, "pod")), "node", or_empty(str(f, "node")),
			 "exitCode", jint(f, "exitCode"), "reason", or_empty(str(f, "reason")),
			 "message", or_empty(str(f, "message")), "time", or_empty(str(f, "time")));
}

/* status.preemption as the page shows it: by whom, when, how; null when never preempted. */
static json_t *preemption(const json_t *tj)
{
	const json_t *p = get(get(tj, "status"), "preemption");

	if (!json_is_object(p))
		return json_null();
	return json_pack("{s:s, s:o, s:s, s:o, s:s, s:o}", "preemptor", or_empty(str(p, "preemptor")),
			 "attempt", jint(p, "attempt"), "time", or_empty(str(p, "time")),
			 "graceSeconds", jint(p, "graceSeconds"), "mode", or_empty(str(p, "mode")),
			 "tier", jint(p, "tier"));
}

/* status.preempting: the jobs this one is stopping to make room, [{job, attempt}]. */
static json_t *preempting(const json_t *tj)
{
	const json_t *list = get(get(tj, "status"), "preempting"), *v;
	json_t *out = json_array();
	size_t i;

	json_array_foreach(list, i, v)
		if (json_array_append_new(out, json_pack("{s:s, s:o}", "job", or_empty(str(v, "job")),
							 "attempt", jint(v, "attempt")))) {
			json_decref(out);
			return NULL;
		}
	return out;
}

json_t *dash_job_detail(const json_t *tj, const json_t *pods, const json_t *evs, int queue_pos)
{
	return json_pack("{s:o?, s:o?, s:o?, s:o?, s:o?, s:o?, s:o?}",
			 "job", dash_job_summary(tj, queue_pos), "ranks", ranks(tj, pods),
			 "conditions", conditions(tj), "events", events(evs),
			 "lastFailure", last_failure(tj), "preemption", preemption(tj),
			 "preempting", preempting(tj));
}
