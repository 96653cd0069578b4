/*
 * dash_server.c - the dashboard's HTTP and WebSocket server on
 * libwebsockets, on the command's own thread.
 *
 * Routes (every one checks Host first, then the session):
 *   GET  /?code=C        the printed URL: its one-time code becomes a
 *                        session cookie, 303 to /; a new code is made
 *                        (opts.on_code) for the next browser
 *   GET  /, /app.js, ..  the embedded page (web/dashboard/)
 *   POST /api/jobs/NS/NAME/{cancel,suspend,resume}
 *                        the action with the user's credentials, on a thread
 *                        of its own (the pushes go on); the answer has the
 *                        API server's status, and its words in
 *                        {"ok", "status", "reason", "message"}
 *   WS   /ws (subprotocol "cadre-dash")
 *                        a snapshot, then deltas; {"watch": "ns/name"}
 *                        asks for that job's page and its logs
 * A request without a session's cookie is 401, a foreign Host or Origin 403;
 * each refusal is a short text/plain answer. POST and the WebSocket also need
 * the page's own Origin.
 *
 * Pushes: store handlers (on the reflectors' threads) only set a flag. A
 * 250 ms timer on the service thread rebuilds what changed and sends each
 * connection the difference from what it was last sent, so a burst of
 * events becomes one message.
 */
#include "cli/dashboard/dash_server.h"

#include "api/dra_nodes.h"
#include "base/err.h"
#include "kube/client.h"
#include "kube/reflector.h"
#include "kube/store.h"

#include <openssl/crypto.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define TICK_US (250 * LWS_US_PER_MS)

static json_t *store_array(struct store *s)
{
	json_t *arr = NULL;

	if (!s || store_list(s, &arr))
		return json_array();
	return arr;
}

static void on_change(struct dash_server *srv)
{
	atomic_store(&srv->dirty, true);
}

static void h_add(void *ctx, const char *key, const json_t *obj)
{
	on_change(ctx);
}

static void h_update(void *ctx, const char *key, const json_t *o, const json_t *n)
{
	on_change(ctx);
}

static void h_delete(void *ctx, const char *key, const json_t *obj)
{
	on_change(ctx);
}

/* Append the job's phase to its history when it differs from the last one. */
static void note_phase(struct dash_server *srv, const char *key, const json_t *tj)
{
	const char *phase = json_string_value(json_object_get(json_object_get(tj, "status"),
							      "phase"));
	const char *last;
	json_t *seen;

	if (!phase)
		return;
	pthread_mutex_lock(&srv->phase_lock);
	seen = json_object_get(srv->phases, key);
	if (!seen && !json_object_set_new(srv->phases, key, json_array()))
		seen = json_object_get(srv->phases, key);
	last = json_string_value(json_array_get(seen, json_array_size(seen) - 1));
	if (seen && json_array_size(seen) < 64 && (!last || strcmp(last, phase)))
		json_array_append_new(seen, json_string(phase));
	pthread_mutex_unlock(&srv->phase_lock);
}

static void job_add(void *ctx, const char *key, const json_t *obj)
{
	note_phase(ctx, key, obj);
	on_change(ctx);
}

static void job_update(void *ctx, const char *key, const json_t *o, const json_t *n)
{
	note_phase(ctx, key, n);
	on_change(ctx);
}

static void job_delete(void *ctx, const char *key, const json_t *obj)
{
	struct dash_server *srv = ctx;

	pthread_mutex_lock(&srv->phase_lock);
	json_object_del(srv->phases, key);
	pthread_mutex_unlock(&srv->phase_lock);
	on_change(ctx);
}

void dash_server_job_handlers(struct dash_server *srv, void *handlers)
{
	struct store_handlers *h = handlers;

	memset(h, 0, sizeof(*h));
	h->on_add = job_add;
	h->on_update = job_update;
	h->on_delete = job_delete;
	h->ctx = srv;
}

/* Each row gets the phases its job went through ("phasesSeen"). */
static void add_phases(struct dash_server *srv, json_t *map)
{
	const char *key;
	json_t *row;

	pthread_mutex_lock(&srv->phase_lock);
	json_object_foreach(map, key, row) {
		json_t *seen = json_object_get(srv->phases, key);

		json_object_set_new(row, "phasesSeen", seen ? json_deep_copy(seen) : json_array());
	}
	pthread_mutex_unlock(&srv->phase_lock);
}

void dash_server_handlers(struct dash_server *srv, void *handlers)
{
	struct store_handlers *h = handlers;

	memset(h, 0, sizeof(*h));
	h->on_add = h_add;
	h->on_update = h_update;
	h->on_delete = h_delete;
	h->ctx = srv;
}

bool dash_server_connected(struct dash_server *srv)
{
	return atomic_load(&srv->connected);
}

/* ---- outgoing messages ---- */

int dash_conn_send(struct dash_conn *c, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	struct dash_msg *m;
	size_t n;

	json_decref(msg);
	if (!text)
		return CADRE_ENOMEM;
	n = strlen(text);
	if (c->queued >= DASH_MAX_QUEUED || !(m = malloc(sizeof(*m) + LWS_PRE + n))) {
		free(text);
		c->overflow = true;  /* the service closes it; the page reconnects */
		lws_callback_on_writable(c->wsi);
		return CADRE_ETOOBIG;
	}
	m->next = NULL;
	m->len = n;
	memcpy(m->data + LWS_PRE, text, n);
	free(text);
	*(c->tail ? &c->tail->next : &c->head) = m;
	c->tail = m;
	c->queued++;
	lws_callback_on_writable(c->wsi);
	return 0;
}

static int conn_write_one(struct dash_conn *c)
{
	struct dash_msg *m = c->head;

	if (c->overflow)
		return -1;
	if (!m)
		return 0;
	if (lws_write(c->wsi, (unsigned char *)m->data + LWS_PRE, m->len, LWS_WRITE_TEXT) <
	    (int)m->len)
		return -1;
	c->head = m->next;
	if (!c->head)
		c->tail = NULL;
	c->queued--;
	free(m);
	if (c->head)
		lws_callback_on_writable(c->wsi);
	return 0;
}

static void conn_release(struct dash_conn *c)
{
	struct dash_server *srv = c->srv;

	dash_logs_stop(c);
	while (c->head) {
		struct dash_msg *m = c->head;

		c->head = m->next;
		free(m);
	}
	c->tail = NULL;
	json_decref(c->last_detail);
	c->last_detail = NULL;
	for (struct dash_conn **p = &srv->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
}

/* ---- what the page is sent ---- */

static json_t *cluster_json(struct dash_server *srv)
{
	return json_pack("{s:O, s:O, s:o?}", "nodes", srv->gpu_nodes, "topology", srv->topology,
			 "gpuHistory", dash_history_json(&srv->history));
}

static json_t *snapshot(struct dash_server *srv)
{
	json_t *rows = json_array(), *v;
	const char *k;

	json_object_foreach(srv->job_map, k, v)
		json_array_append(rows, v);
	return json_pack("{s:s, s:b, s:s, s:o, s:O, s:o?}", "type", "snapshot",
			 "connected", atomic_load(&srv->connected), "scope", srv->scope,
			 "jobs", rows, "queue", srv->queue, "cluster", cluster_json(srv));
}

/* The job's page for c, when it changed since c was last sent it. */
static void send_detail(struct dash_server *srv, struct dash_conn *c, const json_t *jobs)
{
	json_t *tj = NULL, *pods = NULL, *evs, *detail, *row;
	const json_t *q;
	size_t i;
	int pos = 0;

	if (!*c->watch)
		return;
	if (store_get(srv->opts.jobs, c->watch, &tj)) {
		detail = json_pack("{s:s, s:s, s:b}", "type", "job", "key", c->watch, "gone", 1);
	} else {
		json_array_foreach(srv->queue, i, q)
			if (!strcmp(json_string_value(q), c->watch))
				pos = (int)i + 1;
		if (store_by_index(srv->opts.pods, "job", c->watch, &pods))
			pods = json_array();
		evs = dash_events_of(srv, tj);
		detail = dash_job_detail(tj, pods, evs, pos);
		json_decref(evs);
		if (detail) {
			json_t *one = json_object();

			json_object_set(one, c->watch, json_object_get(detail, "job"));
			add_phases(srv, one);
			json_decref(one);
			json_object_set_new(detail, "type", json_string("job"));
			json_object_set_new(detail, "key", json_string(c->watch));
		}
		dash_logs_follow(c, pods);
	}
	(void)jobs;
	row = detail;
	if (row && !json_equal(row, c->last_detail)) {
		json_decref(c->last_detail);
		c->last_detail = json_incref(row);
		dash_conn_send(c, json_incref(row));
	}
	json_decref(row);
	json_decref(pods);
	json_decref(tj);
}

/*
 * The GPU nodes, with Dynamic Resource Allocation's when it is watched; the
 * devices are borrowed from the stores' arrays for the call only.
 */
static json_t *gpu_nodes(struct dash_server *srv, const json_t *nodes, const json_t *pods)
{
	json_t *classes, *slices, *claims, *rows = NULL;
	struct dra_nodes dra;

	if (!srv->opts.device_classes)
		return dash_gpu_nodes(nodes, pods, NULL);
	classes = store_array(srv->opts.device_classes);
	slices = store_array(srv->opts.resource_slices);
	claims = store_array(srv->opts.resource_claims);
	if (!dra_nodes_build(classes, slices, claims, &dra))
		rows = dash_gpu_nodes(nodes, pods, &dra);
	dra_nodes_release(&dra);
	json_decref(classes);
	json_decref(slices);
	json_decref(claims);
	return rows;
}

/* Rebuild the rows; the delta for every connection. */
static void rebuild(struct dash_server *srv, bool force)
{
	bool connected = atomic_load(&srv->connected);
	json_t *jobs = store_array(srv->opts.jobs), *pods = store_array(srv->opts.pods);
	json_t *nodes = store_array(srv->opts.nodes), *map, *queue, *gpu, *topo = NULL;
	json_t *delta = NULL, *msg;
	bool changed;

	if ((map = dash_job_map(jobs)))
		add_phases(srv, map);
	queue = dash_queue_order(jobs);
	gpu = gpu_nodes(srv, nodes, pods);
	if (gpu)
		topo = dash_topology(srv->opts.levels, nodes, gpu);
	if (!map || !queue || !gpu || !topo || dash_job_delta(srv->job_map, map, &delta))
		goto out;
	changed = delta || !json_equal(queue, srv->queue) || !json_equal(gpu, srv->gpu_nodes) ||
		  !json_equal(topo, srv->topology) || connected != srv->sent_connected || force;
	msg = changed ? json_pack("{s:s, s:b, s:o?, s:O, s:o?}", "type", "delta",
				  "connected", connected, "jobs", delta, "queue", queue,
				  "cluster", NULL) : NULL;
	delta = NULL;
	json_decref(srv->job_map);
	json_decref(srv->queue);
	json_decref(srv->gpu_nodes);
	srv->job_map = map;
	srv->queue = queue;
	srv->gpu_nodes = gpu;
	json_decref(srv->topology);
	srv->topology = topo;
	map = queue = gpu = topo = NULL;
	srv->sent_connected = connected;
	if (msg)
		json_object_set_new(msg, "cluster", cluster_json(srv));
	for (struct dash_conn *c = srv->conns; c; c = c->next) {
		if (msg && c->greeted)
			dash_conn_send(c, json_incref(msg));
		send_detail(srv, c, jobs);
	}
	json_decref(msg);
out:
	json_decref(delta);
	json_decref(map);
	json_decref(queue);
	json_decref(gpu);
	json_decref(topo);
	json_decref(jobs);
	json_decref(pods);
	json_decref(nodes);
}

static void tick(lws_sorted_usec_list_t *sul)
{
	struct dash_server *srv = lws_container_of(sul, struct dash_server, sul);
	time_t now = time(NULL);

	if (now - srv->last_sample >= DASH_SAMPLE_S) {
		long long used, total;

		dash_gpu_totals(srv->gpu_nodes, &used, &total);
		dash_history_add(&srv->history, (int64_t)now, used, total);
		srv->last_sample = now;
		atomic_store(&srv->dirty, true);
	}
	if (atomic_exchange(&srv->dirty, false) || srv->sent_connected != atomic_load(&srv->connected))
		rebuild(srv, false);
	dash_logs_drain(srv);
	dash_actions_reap(srv, false);
	lws_sul_schedule(srv->ctx, 0, &srv->sul, tick, TICK_US);
}

/* ---- the WebSocket ---- */

static void on_ws_message(struct dash_server *srv, struct dash_conn *c, const char *in,
			  size_t len)
{
	switch (dash_ws_message(in, len, c->watch, sizeof(c->watch))) {
	case DASH_WS_WATCH:
		json_decref(c->last_detail);
		c->last_detail = NULL;
		dash_logs_stop(c);
		send_detail(srv, c, NULL);
		break;
	case DASH_WS_UNWATCH:
		c->watch[0] = '\0';
		dash_logs_stop(c);
		break;
	case DASH_WS_IGNORE:
		break;
	}
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
		       void *in, size_t len)
{
	struct dash_server *srv = lws_context_user(lws_get_context(wsi));
	struct dash_conn *c = user;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return dash_http_refusal(srv, wsi, true) ? 1 : 0;
	case LWS_CALLBACK_ESTABLISHED:
		memset(c, 0, sizeof(*c));
		c->wsi = wsi;
		c->srv = srv;
		c->next = srv->conns;
		srv->conns = c;
		c->greeted = true;
		dash_conn_send(c, snapshot(srv));
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return conn_write_one(c);
	case LWS_CALLBACK_RECEIVE:
		if (lws_is_first_fragment(wsi) && lws_is_final_fragment(wsi))
			on_ws_message(srv, c, in, len);
		return 0;
	case LWS_CALLBACK_CLOSED:
		if (c && c->srv)  /* a refused upgrade closes without being established */
			conn_release(c);
		return 0;
	case LWS_CALLBACK_PROTOCOL_INIT:
		return 0;
	default:
		return 0;
	}
}

static const struct lws_protocols protocols[] = {
	{ "http", dash_http_callback, sizeof(struct dash_http), 0, 0, NULL, 0 },
	{ "cadre-dash", ws_callback, sizeof(struct dash_conn), 65536, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

/* ---- the API server's health, on its own thread (probes block) ---- */

static uint64_t failures(struct dash_server *srv)
{
	uint64_t n = 0;

	for (size_t i = 0; i < srv->opts.n_reflectors; i++)
		for (int r = 0; r < REFLECTOR_REASON_COUNT; r++)
			if (r != REFLECTOR_CLOSED)
				n += reflector_restarts(srv->opts.reflectors[i], r);
	return n;
}

static int probe_version(void *ctx)
{
	struct kube_response resp;
	int e;

	kube_response_init(&resp);
	e = kube_http_request(ctx, "GET", "/version", NULL, NULL, 0, &resp);
	kube_response_release(&resp);
	return e;
}

static void *health_thread(void *arg)
{
	struct dash_server *srv = arg;
	struct dash_health h = srv->health_state;

	while (!atomic_load(&srv->stopping)) {
		uint64_t f;
		bool ok = true;

		for (int i = 0; i < 10 && !atomic_load(&srv->stopping); i++)
			usleep(100 * 1000);
		f = failures(srv);
		if (dash_health_needs_probe(&h, f))
			ok = srv->opts.probe(srv->opts.probe_ctx) == 0;
		if (dash_health_step(&h, f, ok))
			atomic_store(&srv->connected, h.connected);
	}
	return NULL;
}

/* ---- lifetime ---- */

static void lws_quiet(int level, const char *line)
{
	(void)level;
	(void)line;
}

int dash_server_start(const struct dash_server_opts *opts, struct dash_server **out)
{
	struct lws_context_creation_info info;
	struct dash_server *srv = calloc(1, sizeof(*srv));
	int e = CADRE_ENOMEM;

	*out = NULL;
	if (!srv)
		return CADRE_ENOMEM;
	srv->opts = *opts;
	if (!srv->opts.probe) {
		srv->opts.probe = probe_version;
		srv->opts.probe_ctx = opts->http;
	}
	snprintf(srv->address, sizeof(srv->address), "%s", opts->address);
	if (opts->names)
		srv->names = *opts->names;
	else
		dash_names_for(srv->address, &srv->names);
	snprintf(srv->scope, sizeof(srv->scope), "%s", opts->scope ? opts->scope : "");
	atomic_store(&srv->connected, true);
	srv->sent_connected = true;
	/* Counted from before the reflectors start, so their first failure is seen. */
	dash_health_init(&srv->health_state, failures(srv));
	pthread_mutex_init(&srv->log_lock, NULL);
	pthread_mutex_init(&srv->phase_lock, NULL);
	srv->phases = json_object();
	srv->job_map = json_object();
	srv->queue = json_array();
	srv->gpu_nodes = json_array();
	srv->topology = json_array();
	if (dash_auth_init(&srv->auth, opts->code)) {
		e = CADRE_EIO;
		goto fail;
	}
	lws_set_log_level(LLL_ERR, lws_quiet);
	memset(&info, 0, sizeof(info));
	info.port = opts->port;
	info.iface = srv->address;
	info.protocols = protocols;
	info.user = srv;
	/* "::" takes IPv4 too (IPV6_V6ONLY off), as every listener on "::" does by default */
	info.options = strchr(srv->address, ':') ? 0 : LWS_SERVER_OPTION_DISABLE_IPV6;
	if (!srv->job_map || !srv->queue || !srv->gpu_nodes || !srv->topology || !srv->phases)
		goto fail;
	if (!(srv->ctx = lws_create_context(&info))) {
		e = CADRE_EIO;
		goto fail;
	}
	srv->port = lws_get_vhost_listen_port(lws_get_vhost_by_name(srv->ctx, "default"));
	*out = srv;
	return 0;
fail:
	dash_server_free(srv);
	return e;
}

int dash_server_port(const struct dash_server *srv)
{
	return srv->port;
}

const char *dash_server_code(const struct dash_server *srv)
{
	return srv->auth.code;
}

const struct dash_names *dash_server_names(const struct dash_server *srv)
{
	return &srv->names;
}

int dash_server_run(struct dash_server *srv, const _Atomic bool *stop)
{
	int e = 0;

	if (pthread_create(&srv->health, NULL, health_thread, srv))
		return CADRE_ENOMEM;
	srv->health_started = true;
	rebuild(srv, true);
	lws_sul_schedule(srv->ctx, 0, &srv->sul, tick, TICK_US);
	while (!atomic_load(stop))
		if (lws_service(srv->ctx, 0) < 0) {
			e = CADRE_EIO;
			break;
		}
	atomic_store(&srv->stopping, true);
	pthread_join(srv->health, NULL);
	srv->health_started = false;
	return e;
}

void dash_server_wake(struct dash_server *srv)
{
	if (srv && srv->ctx)
		lws_cancel_service(srv->ctx);
}

void dash_server_free(struct dash_server *srv)
{
	if (!srv)
		return;
	atomic_store(&srv->stopping, true);
	if (srv->health_started)
		pthread_join(srv->health, NULL);
	/* actions end at their API call's end; their connections still exist */
	dash_actions_reap(srv, true);
	if (srv->ctx)
		lws_context_destroy(srv->ctx);  /* closes every connection: conn_release */
	json_decref(srv->job_map);
	json_decref(srv->queue);
	json_decref(srv->gpu_nodes);
	json_decref(srv->topology);
	json_decref(srv->phases);
	OPENSSL_cleanse(&srv->auth, sizeof(srv->auth));
	pthread_mutex_destroy(&srv->log_lock);
	pthread_mutex_destroy(&srv->phase_lock);
	free(srv);
}
