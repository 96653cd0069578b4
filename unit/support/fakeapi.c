/*
 * fakeapi.c - the stateful fake API server of fakeapi.h.
 */
#include "unit/support/fakeapi.h"
#include "unit/support/httpd.h"
#include "base/err.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fakeapi {
	struct httpd *server;
	pthread_mutex_t lock;
	json_t *objects;        /* "<resource>/<namespace>/<name>" -> object */
	long rv, uid;
	int writes;
	int crash_at;           /* die once writes reaches this; 0: never */
	bool crashed;
	int overbooked;
};

/* A parsed request path: the resource, its namespace and name, and /status. */
struct target {
	char resource[32], ns[128], name[256];
	bool status;
};

static bool parse_target(const char *path, struct target *t)
{
	char copy[512], *parts[12], *save = NULL, *q;
	int n = 0, i = 0;

	memset(t, 0, sizeof(*t));
	snprintf(copy, sizeof(copy), "%s", path);
	if ((q = strchr(copy, '?')))
		*q = '\0';
	for (char *p = strtok_r(copy, "/", &save); p && n < 12; p = strtok_r(NULL, "/", &save))
		parts[n++] = p;
	if (n >= 2 && !strcmp(parts[0], "api"))
		i = 2;                       /* api v1 ... */
	else if (n >= 3 && !strcmp(parts[0], "apis"))
		i = 3;                       /* apis group version ... */
	else
		return false;
	if (i < n && !strcmp(parts[i], "namespaces") && i + 2 < n) {
		snprintf(t->ns, sizeof(t->ns), "%s", parts[i + 1]);
		i += 2;
	}
	if (i >= n)
		return false;
	snprintf(t->resource, sizeof(t->resource), "%s", parts[i++]);
	if (i < n)
		snprintf(t->name, sizeof(t->name), "%s", parts[i++]);
	t->status = i < n && !strcmp(parts[i], "status");
	return true;
}

static void key_of(char *out, size_t size, const char *resource, const char *ns,
		   const char *name)
{
	snprintf(out, size, "%s/%s/%s", resource, ns ? ns : "", name);
}

static json_t *meta(const json_t *obj)
{
	return json_object_get(obj, "metadata");
}

static const char *str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static void set_rv(struct fakeapi *f, json_t *obj)
{
	char rv[32];

	snprintf(rv, sizeof(rv), "%ld", ++f->rv);
	json_object_set_new(meta(obj), "resourceVersion", json_string(rv));
}

static void time_text(long s, char out[32])
{
	time_t t = (time_t)s;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Give obj what the server gives a new object. Lock held. */
static void admit_new(struct fakeapi *f, json_t *obj, const char *resource, long created_s)
{
	char uid[64], created[32];

	snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012ld", ++f->uid);
	time_text(created_s, created);
	json_object_set_new(meta(obj), "uid", json_string(uid));
	json_object_set_new(meta(obj), "generation", json_integer(1));
	json_object_set_new(meta(obj), "creationTimestamp", json_string(created));
	if (!strcmp(resource, "pods") && !json_object_get(obj, "status"))
		json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Pending"));
	set_rv(f, obj);
}

int fakeapi_add(struct fakeapi *f, const char *resource, json_t *obj, long created_s)
{
	char key[512];
	int ret = 0;

	pthread_mutex_lock(&f->lock);
	key_of(key, sizeof(key), resource, str(meta(obj), "namespace"), str(meta(obj), "name"));
	if (json_object_get(f->objects, key)) {
		ret = CADRE_EEXIST;
		json_decref(obj);
	} else {
		admit_new(f, obj, resource, created_s);
		json_object_set_new(f->objects, key, obj);
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

static json_t *status_body(int code, const char *reason, const char *message)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "kind", "Status", "apiVersion", "v1",
			 "status", "Failure", "code", code, "reason", reason, "message", message);
}

/* The answer's text is freed once httpd has copied it (httpd.h, owned). */
static void answer(struct httpd_response *resp, int status, json_t *body)
{
	char *text = json_dumps(body, JSON_COMPACT);

	json_decref(body);
	resp->status = status;
	resp->body = text;
	resp->owned = text;
}

/*
 * Remove what a deleted TrainingJob owns, as the garbage collector would, and
 * what those own in turn (an array job's elements, and their pods). Lock held.
 */
static void collect_garbage(struct fakeapi *f, const char *owner_uid)
{
	const char *key;
	json_t *obj, *tmp, *ref, *gone = json_array(), *uid;
	size_t i;

	json_object_foreach_safe(f->objects, tmp, key, obj) {
		bool owned = false;

		json_array_foreach(json_object_get(meta(obj), "ownerReferences"), i, ref)
			owned |= str(ref, "uid") && !strcmp(str(ref, "uid"), owner_uid);
		if (!owned)
			continue;
		if (str(meta(obj), "uid"))
			json_array_append_new(gone, json_string(str(meta(obj), "uid")));
		json_object_del(f->objects, key);
	}
	json_array_foreach(gone, i, uid)
		collect_garbage(f, json_string_value(uid));
	json_decref(gone);
}

static void handle_create(struct fakeapi *f, const struct target *t, const char *body,
			  struct httpd_response *resp)
{
	json_t *obj = json_loads(body, 0, NULL);
	char key[512];

	if (!json_is_object(obj) || !str(meta(obj), "name")) {
		json_decref(obj);
		answer(resp, 400, status_body(400, "BadRequest", "no name"));
		return;
	}
	key_of(key, sizeof(key), t->resource, t->ns, str(meta(obj), "name"));
	if (json_object_get(f->objects, key)) {
		json_decref(obj);
		answer(resp, 409, status_body(409, "AlreadyExists", "already exists"));
		return;
	}
	json_object_set_new(meta(obj), "namespace", json_string(t->ns));
	admit_new(f, obj, t->resource, (long)time(NULL));
	json_object_set(f->objects, key, obj);
	answer(resp, 201, obj);
}

static void handle_replace(struct fakeapi *f, const struct target *t, const char *body,
			   struct httpd_response *resp)
{
	json_t *obj = json_loads(body, 0, NULL), *have;
	char key[512];

	key_of(key, sizeof(key), t->resource, t->ns, t->name);
	have = json_object_get(f->objects, key);
	if (!have) {
		json_decref(obj);
		answer(resp, 404, status_body(404, "NotFound", "not found"));
		return;
	}
	if (!json_is_object(obj) || !str(meta(obj), "resourceVersion") ||
	    strcmp(str(meta(obj), "resourceVersion"), str(meta(have), "resourceVersion"))) {
		json_decref(obj);
		answer(resp, 409, status_body(409, "Conflict", "the object has been modified"));
		return;
	}
	if (t->status) {
		json_object_set(have, "status", json_object_get(obj, "status"));
	} else {
		/* The server's own metadata stays; the rest is the body's. */
		json_object_set(obj, "metadata", meta(have));
		json_object_set(f->objects, key, obj);
		have = obj;
	}
	json_decref(obj);
	set_rv(f, have);
	answer(resp, 200, json_incref(have));
}

static void handle_delete(struct fakeapi *f, const struct target *t, const char *body,
			  struct httpd_response *resp)
{
	json_t *opts = json_loads(body, 0, NULL), *have;
	const char *uid = str(json_object_get(opts, "preconditions"), "uid");
	char key[512];

	key_of(key, sizeof(key), t->resource, t->ns, t->name);
	have = json_object_get(f->objects, key);
	if (!have)
		answer(resp, 404, status_body(404, "NotFound", "not found"));
	else if (uid && strcmp(uid, str(meta(have), "uid")))
		answer(resp, 409, status_body(409, "Conflict", "uid precondition failed"));
	else {
		json_t *gone = json_incref(have);

		json_object_del(f->objects, key);
		if (!strcmp(t->resource, "trainingjobs"))
			collect_garbage(f, str(meta(gone), "uid"));
		answer(resp, 200, gone);
	}
	json_decref(opts);
}

/* The member a JSON pointer's last token names ("~1" is "/", "~0" is "~"). */
static void pointer_token(const char *in, char *out, size_t size)
{
	size_t n = 0;

	for (; *in && n + 1 < size; in++) {
		if (in[0] == '~' && (in[1] == '1' || in[1] == '0')) {
			out[n++] = in[1] == '1' ? '/' : '~';
			in++;
		} else {
			out[n++] = *in;
		}
	}
	out[n] = '\0';
}

/*
 * A JSON patch (RFC 6902) of "test" and "replace" ops on string members
 * (what the controller sends: a pod's uid tested, a label set). A failed
 * test is 422, as the API server answers it.
 */
static void handle_patch(struct fakeapi *f, const struct target *t, const char *body,
			 struct httpd_response *resp)
{
	json_t *ops = json_loads(body, 0, NULL), *have, *op, *copy;
	char key[512];
	size_t i;

	key_of(key, sizeof(key), t->resource, t->ns, t->name);
	have = json_object_get(f->objects, key);
	if (!have || !json_is_array(ops)) {
		json_decref(ops);
		answer(resp, have ? 400 : 404, status_body(have ? 400 : 404, have ? "BadRequest" :
				  "NotFound", have ? "not a JSON patch" : "not found"));
		return;
	}
	copy = json_deep_copy(have);
	json_array_foreach(ops, i, op) {
		char path[256], *slash, member[128];
		json_t *parent = copy;
		const char *p;

		snprintf(path, sizeof(path), "%s", str(op, "path") ? str(op, "path") : "");
		p = path + 1;
		while ((slash = strchr(p, '/'))) {
			*slash = '\0';
			pointer_token(p, member, sizeof(member));
			parent = json_object_get(parent, member);
			p = slash + 1;
		}
		pointer_token(p, member, sizeof(member));
		if (!strcmp(str(op, "op"), "test") &&
		    !json_equal(json_object_get(parent, member), json_object_get(op, "value"))) {
			json_decref(copy);
			json_decref(ops);
			answer(resp, 422, status_body(422, "Invalid", "the test op failed"));
			return;
		}
		if (!strcmp(str(op, "op"), "replace") && json_is_object(parent))
			json_object_set(parent, member, json_object_get(op, "value"));
	}
	json_decref(ops);
	json_object_set_new(f->objects, key, copy);
	set_rv(f, copy);
	answer(resp, 200, json_incref(copy));
}

static void handle(void *ctx, const struct httpd_request *req, struct httpd_response *resp)
{
	struct fakeapi *f = ctx;
	bool write = strcmp(req->method, "GET") != 0;
	struct target t;
	char key[512];

	pthread_mutex_lock(&f->lock);
	if (!parse_target(req->target, &t)) {
		answer(resp, 404, status_body(404, "NotFound", "no such path"));
		goto out;
	}
	if (!strcmp(t.resource, "events")) {
		answer(resp, 201, json_object());
		goto out;
	}
	if (f->crashed) {
		answer(resp, 503, status_body(503, "ServiceUnavailable", "the process is gone"));
		goto out;
	}
	if (write && f->crash_at && ++f->writes >= f->crash_at)
		f->crashed = true;       /* this write lands; none after it */
	else if (write && !f->crash_at)
		f->writes++;
	if (!strcmp(req->method, "GET") && *t.name) {
		json_t *obj;

		key_of(key, sizeof(key), t.resource, t.ns, t.name);
		obj = json_object_get(f->objects, key);
		if (obj)
			answer(resp, 200, json_incref(obj));
		else
			answer(resp, 404, status_body(404, "NotFound", "not found"));
	} else if (!strcmp(req->method, "POST") && !*t.name) {
		handle_create(f, &t, req->body, resp);
	} else if (!strcmp(req->method, "PUT") && *t.name) {
		handle_replace(f, &t, req->body, resp);
	} else if (!strcmp(req->method, "DELETE") && *t.name) {
		handle_delete(f, &t, req->body, resp);
	} else if (!strcmp(req->method, "PATCH") && *t.name) {
		handle_patch(f, &t, req->body, resp);
	} else {
		answer(resp, 405, status_body(405, "MethodNotAllowed", req->method));
	}
out:
	pthread_mutex_unlock(&f->lock);
}

int fakeapi_new(struct fakeapi **out)
{
	struct fakeapi *f = calloc(1, sizeof(*f));
	int ret;

	*out = NULL;
	if (!f)
		return CADRE_ENOMEM;
	pthread_mutex_init(&f->lock, NULL);
	f->objects = json_object();
	f->rv = 100;
	ret = httpd_new(&f->server);
	if (ret || !f->objects) {
		fakeapi_free(f);
		return ret ? ret : CADRE_ENOMEM;
	}
	httpd_set_handler(f->server, handle, f);
	*out = f;
	return 0;
}

void fakeapi_free(struct fakeapi *f)
{
	if (!f)
		return;
	httpd_free(f->server);
	json_decref(f->objects);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

const char *fakeapi_url(struct fakeapi *f)
{
	return httpd_url(f->server);
}

json_t *fakeapi_list(struct fakeapi *f, const char *resource)
{
	json_t *list = json_array(), *obj;
	size_t n = strlen(resource);
	const char *key;

	pthread_mutex_lock(&f->lock);
	json_object_foreach(f->objects, key, obj)
		if (!strncmp(key, resource, n) && key[n] == '/')
			json_array_append_new(list, json_deep_copy(obj));
	pthread_mutex_unlock(&f->lock);
	return list;
}

json_t *fakeapi_get(struct fakeapi *f, const char *resource, const char *ns, const char *name)
{
	char key[512];
	json_t *obj;

	key_of(key, sizeof(key), resource, ns, name);
	pthread_mutex_lock(&f->lock);
	obj = json_deep_copy(json_object_get(f->objects, key));
	pthread_mutex_unlock(&f->lock);
	return obj;
}

int fakeapi_set_suspend(struct fakeapi *f, const char *ns, const char *name, bool suspend)
{
	char key[512];
	json_t *obj;

	key_of(key, sizeof(key), "trainingjobs", ns, name);
	pthread_mutex_lock(&f->lock);
	obj = json_object_get(f->objects, key);
	if (obj) {
		json_object_set_new(json_object_get(obj, "spec"), "suspend", json_boolean(suspend));
		json_object_set_new(meta(obj), "generation", json_integer(
			json_integer_value(json_object_get(meta(obj), "generation")) + 1));
		set_rv(f, obj);
	}
	pthread_mutex_unlock(&f->lock);
	return obj ? 0 : CADRE_ENOTFOUND;
}

int fakeapi_delete_job(struct fakeapi *f, const char *ns, const char *name)
{
	char key[512];
	json_t *obj;

	key_of(key, sizeof(key), "trainingjobs", ns, name);
	pthread_mutex_lock(&f->lock);
	obj = json_incref(json_object_get(f->objects, key));
	if (obj) {
		json_object_del(f->objects, key);
		collect_garbage(f, str(meta(obj), "uid"));
		json_decref(obj);
	}
	pthread_mutex_unlock(&f->lock);
	return obj ? 0 : CADRE_ENOTFOUND;
}

int fakeapi_writes(struct fakeapi *f)
{
	int n;

	pthread_mutex_lock(&f->lock);
	n = f->writes;
	pthread_mutex_unlock(&f->lock);
	return n;
}

void fakeapi_crash_after(struct fakeapi *f, int k)
{
	pthread_mutex_lock(&f->lock);
	f->writes = 0;
	f->crash_at = k;
	f->crashed = false;
	pthread_mutex_unlock(&f->lock);
}

bool fakeapi_crashed(struct fakeapi *f)
{
	bool crashed;

	pthread_mutex_lock(&f->lock);
	crashed = f->crashed;
	pthread_mutex_unlock(&f->lock);
	return crashed;
}

void fakeapi_revive(struct fakeapi *f)
{
	pthread_mutex_lock(&f->lock);
	f->crashed = false;
	f->crash_at = 0;
	pthread_mutex_unlock(&f->lock);
}

static long gpus_of(const json_t *pod)
{
	const json_t *c = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"),
					 0);
	const char *n = str(json_object_get(json_object_get(c, "resources"), "requests"),
			    "nvidia.com/gpu");

	return n ? strtol(n, NULL, 10) : 0;
}

static const char *pinned_node(const json_t *pod)
{
	const json_t *terms = json_object_get(json_object_get(json_object_get(json_object_get(
		json_object_get(pod, "spec"), "affinity"), "nodeAffinity"),
		"requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
	const json_t *field;
	size_t i;

	json_array_foreach(json_object_get(json_array_get(terms, 0), "matchFields"), i, field)
		if (!strcmp(str(field, "key"), "metadata.name"))
			return json_string_value(json_array_get(json_object_get(field, "values"), 0));
	return NULL;
}

static bool terminal(const json_t *pod)
{
	const char *phase = str(json_object_get(pod, "status"), "phase");

	return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

/* GPUs free on node now: allocatable less every bound pod that has not ended. Lock held. */
static long free_gpus(struct fakeapi *f, const json_t *node)
{
	const char *name = str(meta(node), "name"), *key;
	const char *alloc = str(json_object_get(json_object_get(node, "status"), "allocatable"),
				"nvidia.com/gpu");
	long left = alloc ? strtol(alloc, NULL, 10) : 0;
	json_t *pod;

	json_object_foreach(f->objects, key, pod) {
		const char *on = str(json_object_get(pod, "spec"), "nodeName");

		if (!strncmp(key, "pods/", 5) && on && !strcmp(on, name) && !terminal(pod))
			left -= gpus_of(pod);
	}
	return left;
}

void fakeapi_schedule(struct fakeapi *f)
{
	const char *key, *nkey;
	json_t *pod, *node;

	pthread_mutex_lock(&f->lock);
	json_object_foreach(f->objects, key, pod) {
		json_t *spec = json_object_get(pod, "spec"), *status = json_object_get(pod, "status");
		const char *want, *phase = str(status, "phase");
		char ip[32];

		if (strncmp(key, "pods/", 5) || terminal(pod))
			continue;
		if (!str(spec, "nodeName")) {
			want = pinned_node(pod);
			json_object_foreach(f->objects, nkey, node) {
				if (strncmp(nkey, "nodes/", 6) ||
				    (want && strcmp(want, str(meta(node), "name"))))
					continue;
				if (free_gpus(f, node) >= gpus_of(pod)) {
					json_object_set_new(spec, "nodeName",
							    json_string(str(meta(node), "name")));
					break;
				}
				if (want)
					f->overbooked++;
			}
			if (!str(spec, "nodeName"))
				continue;
			set_rv(f, pod);
			continue;  /* the kubelet starts it next round */
		}
		if (phase && !strcmp(phase, "Running"))
			continue;
		snprintf(ip, sizeof(ip), "10.0.0.%ld", f->rv % 250 + 1);
		json_object_set_new(status, "phase", json_string("Running"));
		json_object_set_new(status, "podIP", json_string(ip));
		json_object_set_new(status, "containerStatuses", json_pack(
			"[{s:s, s:{s:{s:s}}}]", "name", "main", "state", "running", "startedAt",
			"2026-12-01T00:00:00Z"));
		set_rv(f, pod);
	}
	pthread_mutex_unlock(&f->lock);
}

/*
 * The kubelet reports on a pod: its phase (NULL: as it was) and its container
 * statuses (taken over). 0 or CADRE_ENOTFOUND.
 */
static int report_pod(struct fakeapi *f, const char *ns, const char *name, const char *phase,
		      json_t *statuses)
{
	char key[512];
	json_t *pod;

	key_of(key, sizeof(key), "pods", ns, name);
	pthread_mutex_lock(&f->lock);
	pod = json_object_get(f->objects, key);
	if (pod) {
		json_t *status = json_object_get(pod, "status");

		if (phase)
			json_object_set_new(status, "phase", json_string(phase));
		json_object_set(status, "containerStatuses", statuses);
		set_rv(f, pod);
	}
	pthread_mutex_unlock(&f->lock);
	json_decref(statuses);
	return pod ? 0 : CADRE_ENOTFOUND;
}

int fakeapi_fail_pod(struct fakeapi *f, const char *ns, const char *name, int code)
{
	return report_pod(f, ns, name, "Failed", json_pack(
		"[{s:s, s:{s:{s:i, s:s, s:s}}}]", "name", "main", "state", "terminated",
		"exitCode", code, "reason", "Error", "message", "the program failed"));
}

int fakeapi_fail_pod_in_place(struct fakeapi *f, const char *ns, const char *name, int code)
{
	json_t *pod = fakeapi_get(f, "pods", ns, name);
	const char *attempt = str(json_object_get(meta(pod), "labels"), "cadre.dev/restart-attempt");
	char message[96];

	snprintf(message, sizeof(message), "the program failed\ncadre-attempt: %s\n",
		 attempt ? attempt : "?");
	json_decref(pod);
	return report_pod(f, ns, name, NULL, json_pack(
		"[{s:s, s:i, s:{s:{s:s}}, s:{s:{s:i, s:s, s:s}}}]", "name", "main",
		"restartCount", 1, "state", "running", "startedAt", "2026-12-01T00:00:01Z",
		"lastState", "terminated", "exitCode", code, "reason", "Error", "message", message));
}

int fakeapi_delete_pod(struct fakeapi *f, const char *ns, const char *name)
{
	char key[512];
	int ret;

	key_of(key, sizeof(key), "pods", ns, name);
	pthread_mutex_lock(&f->lock);
	ret = json_object_del(f->objects, key) ? CADRE_ENOTFOUND : 0;
	pthread_mutex_unlock(&f->lock);
	return ret;
}

int fakeapi_lose_node(struct fakeapi *f, const char *name)
{
	const char *key, *node;
	char node_key[512];
	json_t *obj;
	void *tmp;
	int ret;

	key_of(node_key, sizeof(node_key), "nodes", NULL, name);
	pthread_mutex_lock(&f->lock);
	ret = json_object_del(f->objects, node_key) ? CADRE_ENOTFOUND : 0;
	json_object_foreach_safe(f->objects, tmp, key, obj) {
		node = str(json_object_get(obj, "spec"), "nodeName");
		if (!ret && !strncmp(key, "pods/", 5) && node && !strcmp(node, name))
			json_object_del(f->objects, key);
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

int fakeapi_succeed_pod(struct fakeapi *f, const char *ns, const char *name)
{
	return report_pod(f, ns, name, "Succeeded", json_pack(
		"[{s:s, s:{s:{s:i, s:s}}}]", "name", "main", "state", "terminated",
		"exitCode", 0, "reason", "Completed"));
}

int fakeapi_overbooked(struct fakeapi *f)
{
	int n;

	pthread_mutex_lock(&f->lock);
	n = f->overbooked;
	pthread_mutex_unlock(&f->lock);
	return n;
}
