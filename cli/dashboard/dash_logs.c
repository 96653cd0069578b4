/*
 * dash_logs.c - a live log tail per rank for an open job page: one thread
 * per rank streams GET pods/<pod>/log?container=main&follow=true
 * &tailLines=200 with the user's credentials (so RBAC decides), cuts it
 * into lines, and the service thread sends them as
 * {"type": "log", "key", "rank", "lines": [...]} every tick.
 */
#include "cli/dashboard/dash_server.h"

#include "base/err.h"
#include "kube/http.h"
#include "kube/store.h"

/* A line longer than this is cut; a page cannot show more anyway. */
#define MAX_LINE 4096
/* Unsent lines held per rank; past it the oldest are dropped. */
#define MAX_PENDING (256u << 10)

static int on_data(void *ctx, const char *data, size_t len)
{
	struct dash_log *l = ctx;

	for (size_t i = 0; i < len; i++) {
		if (data[i] != '\n') {
			if (l->partial.len < MAX_LINE)
				buf_addc(&l->partial, data[i]);
			continue;
		}
		pthread_mutex_lock(&l->srv->log_lock);
		if (l->pending.len + l->partial.len + 1 > MAX_PENDING)
			buf_reset(&l->pending);
		buf_add(&l->pending, l->partial.data ? l->partial.data : "", l->partial.len);
		buf_addc(&l->pending, '\n');
		pthread_mutex_unlock(&l->srv->log_lock);
		buf_reset(&l->partial);
	}
	return 0;
}

static void *log_thread(void *arg)
{
	struct dash_log *l = arg;
	struct kube_response resp;
	struct kube_stream_opts o = { .on_data = on_data, .ctx = l, .stop = &l->stop,
				      .resp = &resp };
	char path[512];
	int e;

	kube_response_init(&resp);
	snprintf(path, sizeof(path),
		 "/api/v1/namespaces/%s/pods/%s/log?container=main&follow=true&tailLines=200",
		 l->ns, l->pod);
	e = kube_http_stream(l->srv->opts.http, path, &o);
	if (e && e != CADRE_ECANCELED) {
		pthread_mutex_lock(&l->srv->log_lock);
		snprintf(l->error, sizeof(l->error), "log of %s: %s", l->pod,
			 *resp.error.message ? resp.error.message : cadre_strerror(e));
		pthread_mutex_unlock(&l->srv->log_lock);
	}
	kube_response_release(&resp);
	atomic_store(&l->done, true);
	return NULL;
}

static bool followed(const struct dash_conn *c, const char *pod)
{
	for (int i = 0; i < DASH_MAX_LOG_RANKS; i++)
		if (c->logs[i] && !strcmp(c->logs[i]->pod, pod))
			return true;
	return false;
}

/*
 * Whether the pod's container has started (else the API refuses its log): the
 * pod is Running or has ended, or a container has terminated. The pod cache
 * keeps state.waiting and state.terminated but not state.running, so the
 * phase is what says a container runs.
 */
static bool has_started(const json_t *pod)
{
	const json_t *st = json_object_get(pod, "status");
	const char *phase = json_string_value(json_object_get(st, "phase"));
	const json_t *cs = json_object_get(st, "containerStatuses"), *s;
	size_t i;

	if (phase && (!strcmp(phase, "Running") || !strcmp(phase, "Succeeded") ||
		      !strcmp(phase, "Failed")))
		return true;
	json_array_foreach(cs, i, s)
		if (json_object_get(json_object_get(s, "state"), "terminated"))
			return true;
	return false;
}

static void start_one(struct dash_conn *c, int slot, const json_t *pod)
{
	const json_t *m = json_object_get(pod, "metadata");
	const char *rank = json_string_value(json_object_get(json_object_get(m, "labels"),
							     "cadre.dev/node-rank"));
	struct dash_log *l = calloc(1, sizeof(*l));

	if (!l)
		return;
	l->srv = c->srv;
	l->rank = rank ? (int)strtol(rank, NULL, 10) : slot;
	snprintf(l->ns, sizeof(l->ns), "%s", json_string_value(json_object_get(m, "namespace")));
	snprintf(l->pod, sizeof(l->pod), "%s", json_string_value(json_object_get(m, "name")));
	buf_init(&l->pending, MAX_PENDING + MAX_LINE + 1);
	buf_init(&l->partial, MAX_LINE + 1);
	if (pthread_create(&l->thread, NULL, log_thread, l)) {
		buf_release(&l->pending);
		buf_release(&l->partial);
		free(l);
		return;
	}
	c->logs[slot] = l;
}

void dash_logs_follow(struct dash_conn *c, const json_t *pods)
{
	const json_t *pod;
	size_t i;

	json_array_foreach(pods, i, pod) {
		const char *name = json_string_value(json_object_get(json_object_get(pod, "metadata"),
								     "name"));
		int slot = -1;

		if (!name || followed(c, name) || !has_started(pod))
			continue;
		for (int k = 0; k < DASH_MAX_LOG_RANKS && slot < 0; k++)
			if (!c->logs[k])
				slot = k;
		if (slot < 0)
			return;
		start_one(c, slot, pod);
	}
}

static void log_free(struct dash_log *l)
{
	atomic_store(&l->stop, true);
	pthread_join(l->thread, NULL);
	buf_release(&l->pending);
	buf_release(&l->partial);
	free(l);
}

void dash_logs_stop(struct dash_conn *c)
{
	for (int i = 0; i < DASH_MAX_LOG_RANKS; i++) {
		if (c->logs[i])
			log_free(c->logs[i]);
		c->logs[i] = NULL;
	}
}

/* A log line as a JSON string; bytes that are not UTF-8 become '?'. */
static json_t *line_json(char *s, size_t n)
{
	json_t *v = json_stringn(s, n);

	if (v)
		return v;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80)
			s[i] = '?';
	return json_stringn(s, n);
}

/* The lines (and an error, once) of l as a message for c; NULL when none. */
static json_t *take_lines(struct dash_conn *c, struct dash_log *l)
{
	json_t *lines = json_array(), *msg = NULL;
	size_t start = 0;

	pthread_mutex_lock(&c->srv->log_lock);
	for (size_t i = 0; i < l->pending.len; i++)
		if (l->pending.data[i] == '\n') {
			json_array_append_new(lines, line_json(l->pending.data + start, i - start));
			start = i + 1;
		}
	buf_reset(&l->pending);
	if (json_array_size(lines) || *l->error)
		msg = json_pack("{s:s, s:s, s:i, s:s, s:O}", "type", "log", "key", c->watch,
				"rank", l->rank, "error", l->error, "lines", lines);
	l->error[0] = '\0';
	pthread_mutex_unlock(&c->srv->log_lock);
	json_decref(lines);
	return msg;
}

void dash_logs_drain(struct dash_server *srv)
{
	for (struct dash_conn *c = srv->conns; c; c = c->next)
		for (int i = 0; i < DASH_MAX_LOG_RANKS; i++) {
			json_t *msg;

			if (!c->logs[i])
				continue;
			if ((msg = take_lines(c, c->logs[i])))
				dash_conn_send(c, msg);
		}
}
