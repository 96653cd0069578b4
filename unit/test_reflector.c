#include <criterion/criterion.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/err.h"
#include "kube/backoff.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/reflector.h"
#include "kube/resource.h"
#include "kube/store.h"
#include "unit/support/httpd.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

/*
 * A fake API server for one collection: list and watch requests are told
 * apart by "watch=1" and answered from two scripts. A watch past its script
 * stays open and silent (a keep-alive line, then nothing), as a quiet watch
 * does; a list past its script is a test failure (500).
 */
#define MAX_SCRIPT 8

struct fake_api {
	pthread_mutex_t lock;
	struct httpd_response lists[MAX_SCRIPT];
	size_t nlists, lists_served;
	struct httpd_response watches[MAX_SCRIPT];
	size_t nwatches, watches_served;
};

static const struct httpd_chunk keepalive[] = { { "\n", 0, 0 } };

static void fake_handler(void *ctx, const struct httpd_request *req,
			 struct httpd_response *resp)
{
	struct fake_api *api = ctx;

	pthread_mutex_lock(&api->lock);
	if (strstr(req->target, "watch=1")) {
		if (api->watches_served < api->nwatches)
			*resp = api->watches[api->watches_served];
		else
			*resp = (struct httpd_response){ .status = 200, .chunks = keepalive,
							 .nchunks = 1, .hold_ms = -1 };
		api->watches_served++;
	} else {
		if (api->lists_served < api->nlists)
			*resp = api->lists[api->lists_served];
		else
			*resp = (struct httpd_response){ .status = 500, .body = "{}" };
		api->lists_served++;
	}
	pthread_mutex_unlock(&api->lock);
}

static void list_body(struct fake_api *api, const char *body)
{
	api->lists[api->nlists++] = (struct httpd_response){ .status = 200, .body = body };
}

static void watch_chunks(struct fake_api *api, const struct httpd_chunk *chunks, size_t n,
			 int hold_ms, bool torn)
{
	api->watches[api->nwatches++] = (struct httpd_response){
		.status = 200, .chunks = chunks, .nchunks = n, .hold_ms = hold_ms, .torn = torn,
	};
}

/* The next watch is refused with 410 Gone, as the HTTP status; message is a literal. */
#define WATCH_GONE(api, message) \
	((api)->watches[(api)->nwatches++] = (struct httpd_response){ \
		.status = 410, \
		.body = "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"," \
			"\"message\":\"" message "\"}", \
	})

/* Store handlers that keep a log of what they were told. */
struct events_log {
	pthread_mutex_t lock;
	struct buf text;
};

static void log_line(struct events_log *l, const char *what, const char *key)
{
	pthread_mutex_lock(&l->lock);
	buf_addf(&l->text, "%s %s;", what, key);
	pthread_mutex_unlock(&l->lock);
}

static void h_add(void *ctx, const char *key, const json_t *obj)
{
	(void)obj;
	log_line(ctx, "add", key);
}

static void h_update(void *ctx, const char *key, const json_t *o, const json_t *n)
{
	(void)o;
	(void)n;
	log_line(ctx, "update", key);
}

static void h_delete(void *ctx, const char *key, const json_t *obj)
{
	(void)obj;
	log_line(ctx, "delete", key);
}

/* Everything a test needs, torn down in reverse. */
struct rig {
	struct fake_api api;
	struct httpd *server;
	struct kube_config *cfg;
	struct kube_http *http;
	struct store *store;
	struct events_log log;
	struct reflector *r;
};

static void rig_init(struct rig *g)
{
	struct store_handlers h = { h_add, h_update, h_delete, &g->log };

	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->api.lock, NULL);
	pthread_mutex_init(&g->log.lock, NULL);
	buf_init(&g->log.text, 1 << 16);
	cr_assert_eq(httpd_new(&g->server), 0);
	httpd_set_handler(g->server, fake_handler, &g->api);
	cr_assert_eq(kube_config_new(httpd_url(g->server), &g->cfg), 0);
	cr_assert_eq(kube_http_new(g->cfg, NULL, &g->http), 0);
	g->store = store_new(&(struct store_options){ .kind = "pods" });
	cr_assert_not_null(g->store);
	cr_assert_eq(store_add_handlers(g->store, &h), 0);
}

static void rig_start(struct rig *g, const struct reflector_options *extra)
{
	struct reflector_options opts = {
		.resource = &kube_resource_pods,
		.backoff_initial_ms = 10,
		.backoff_max_ms = 50,
		.idle_timeout_ms = 60000,
	};

	if (extra) {
		opts = *extra;
		opts.resource = &kube_resource_pods;
	}
	cr_assert_eq(reflector_new(g->http, g->store, &opts, &g->r), 0);
	cr_assert_eq(reflector_start(g->r), 0);
}

static void rig_release(struct rig *g)
{
	reflector_free(g->r);
	httpd_free(g->server);
	kube_http_free(g->http);
	kube_config_free(g->cfg);
	store_free(g->store);
	buf_release(&g->log.text);
}

static char *log_text(struct rig *g)
{
	char *copy;

	pthread_mutex_lock(&g->log.lock);
	copy = strdup(buf_str(&g->log.text));
	pthread_mutex_unlock(&g->log.lock);
	return copy;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Poll until the reflector's resourceVersion is want, or fail after 5 s. */
static void wait_rv(struct reflector *r, const char *want)
{
	char *rv = NULL;
	int i;

	for (i = 0; i < 500; i++) {
		free(rv);
		rv = reflector_resource_version(r);
		if (rv && !strcmp(rv, want))
			break;
		sleep_ms(10);
	}
	cr_assert(rv && !strcmp(rv, want), "resourceVersion %s, want %s", rv ? rv : "(none)",
		  want);
	free(rv);
}

/* The n-th request (0-based) whose target does (watch) or does not contain watch=1. */
static const struct httpd_request *nth_request(struct httpd *s, bool watch, size_t n)
{
	size_t i, seen = 0;

	for (i = 0; i < httpd_request_count(s); i++) {
		const struct httpd_request *req = httpd_request_at(s, i);

		if (!!strstr(req->target, "watch=1") != watch)
			continue;
		if (seen++ == n)
			return req;
	}
	return NULL;
}

static size_t count_requests(struct httpd *s, bool watch)
{
	size_t i, n = 0;

	for (i = 0; i < httpd_request_count(s); i++)
		n += !!strstr(httpd_request_at(s, i)->target, "watch=1") == watch;
	return n;
}

/* Wait until the server has seen n watch requests. */
static const struct httpd_request *wait_watch(struct httpd *s, size_t n)
{
	const struct httpd_request *req = NULL;
	int i;

	for (i = 0; i < 500 && !(req = nth_request(s, true, n - 1)); i++)
		sleep_ms(10);
	cr_assert_not_null(req, "watch request %zu never came", n);
	return req;
}

/* Milliseconds from now until the server has seen n lists; fails after 5 s. */
static uint64_t ms_until_lists(struct httpd *s, size_t n)
{
	uint64_t start = clock_mono_ms();
	int i;

	for (i = 0; i < 1000 && count_requests(s, false) < n; i++)
		sleep_ms(5);
	cr_assert_eq(count_requests(s, false), n, "list %zu never came", n);
	return clock_mono_ms() - start;
}

#define POD(name, rv) \
	"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"" name "\",\"resourceVersion\":\"" rv "\"}}"
#define EVENT(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"

Test(reflector, lists_then_watches_from_the_lists_resource_version)
{
	static const struct httpd_chunk events[] = {
		{ EVENT("ADDED", POD("c", "101")), 0, 0 },
		/* An event split across two chunks, mid-object. */
		{ "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"namespace\":\"ml\",", 0, 0 },
		{ "\"name\":\"a\",\"resourceVersion\":\"102\"}}}\n", 0, 5 },
		{ EVENT("DELETED", POD("b", "103")), 0, 0 },
	};
	struct reflector_options opts = {
		.field_selector = REFLECTOR_NON_TERMINAL_PODS,
		.backoff_initial_ms = 10,
		.backoff_max_ms = 50,
	};
	const struct httpd_request *list, *watch;
	struct rig g;
	json_t *obj;
	char *text;
	const char *t;
	long timeout;

	rig_init(&g);
	list_body(&g.api, "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"100\"},"
			  "\"items\":[" POD("a", "1") "," POD("b", "2") "]}");
	watch_chunks(&g.api, events, 4, -1, false);
	rig_start(&g, &opts);
	cr_assert_eq(reflector_wait_synced(g.r, 5000), 0);
	wait_rv(g.r, "103");

	list = nth_request(g.server, false, 0);
	cr_assert(strstr(list->target, "/api/v1/pods?"), "%s", list->target);
	cr_assert(strstr(list->target, "limit=500"), "%s", list->target);
	cr_assert(strstr(list->target, "fieldSelector=status.phase%21%3DSucceeded%2C"
				       "status.phase%21%3DFailed"), "%s", list->target);
	watch = nth_request(g.server, true, 0);
	cr_assert(strstr(watch->target, "resourceVersion=100"), "%s", watch->target);
	cr_assert(strstr(watch->target, "allowWatchBookmarks=true"), "%s", watch->target);
	cr_assert(strstr(watch->target, "fieldSelector=status.phase"), "%s", watch->target);
	t = strstr(watch->target, "timeoutSeconds=");
	cr_assert_not_null(t);
	timeout = strtol(t + strlen("timeoutSeconds="), NULL, 10);
	cr_assert(timeout >= 300 && timeout <= 600, "timeoutSeconds=%ld", timeout);

	text = log_text(&g);
	cr_assert_str_eq(text, "add ml/a;add ml/b;add ml/c;update ml/a;delete ml/b;");
	free(text);
	cr_assert_eq(store_len(g.store), 2);
	cr_assert_eq(store_get(g.store, "ml/a", &obj), 0);
	json_decref(obj);
	cr_assert(reflector_synced(g.r));
	rig_release(&g);
}

Test(reflector, a_bookmark_moves_the_resource_version_and_nothing_else)
{
	/* Named like a stored pod, so applying it by mistake would show. */
	static const struct httpd_chunk events[] = {
		{ EVENT("BOOKMARK", "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ml\","
				    "\"name\":\"a\",\"resourceVersion\":\"555\"}}"), 0, 0 },
	};
	struct rig g;
	char *text;

	rig_init(&g);
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[" POD("a", "1") "]}");
	watch_chunks(&g.api, events, 1, 0, false);
	rig_start(&g, NULL);
	wait_rv(g.r, "555");
	/* The server closed that watch: the next one starts at the bookmark. */
	cr_assert(strstr(wait_watch(g.server, 2)->target, "resourceVersion=555"));
	text = log_text(&g);
	cr_assert_str_eq(text, "add ml/a;");
	free(text);
	cr_assert_eq(store_len(g.store), 1);
	cr_assert_eq(count_requests(g.server, false), 1);
	rig_release(&g);
}

Test(reflector, a_410_error_event_relists_exactly_once_and_reports_what_vanished)
{
	static const struct httpd_chunk events[] = {
		{ EVENT("ERROR", "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":410,"
				 "\"reason\":\"Expired\",\"message\":\"too old resource version\"}"), 0, 0 },
	};
	struct rig g;
	char *text;

	rig_init(&g);
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"100\"},\"items\":["
			  POD("a", "1") "," POD("b", "2") "," POD("c", "3") "]}");
	watch_chunks(&g.api, events, 1, -1, false);
	/* While we were away: b and c were deleted, a changed. */
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"200\"},\"items\":["
			  POD("a", "150") "]}");
	rig_start(&g, NULL);
	cr_assert(strstr(wait_watch(g.server, 2)->target, "resourceVersion=200"));
	sleep_ms(200);
	cr_assert_eq(count_requests(g.server, false), 2);
	cr_assert_eq(reflector_lists(g.r), 2);
	cr_assert_eq(reflector_restarts(g.r, REFLECTOR_GONE), 1);
	text = log_text(&g);
	cr_assert_str_eq(text, "add ml/a;add ml/b;add ml/c;update ml/a;delete ml/b;delete ml/c;");
	free(text);
	rig_release(&g);
}

Test(reflector, any_other_error_event_relists_too)
{
	static const struct httpd_chunk events[] = {
		{ EVENT("ADDED", POD("b", "101")), 0, 0 },
		{ EVENT("ERROR", "{\"kind\":\"Status\",\"code\":500,\"reason\":\"InternalError\","
				 "\"message\":\"etcd is sad\"}"), 0, 0 },
	};
	struct rig g;

	rig_init(&g);
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[]}");
	watch_chunks(&g.api, events, 2, -1, false);
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"300\"},\"items\":[]}");
	rig_start(&g, NULL);
	cr_assert(strstr(wait_watch(g.server, 2)->target, "resourceVersion=300"));
	cr_assert_eq(count_requests(g.server, false), 2);
	cr_assert_eq(reflector_restarts(g.r, REFLECTOR_ERROR_EVENT), 1);
	cr_assert_eq(store_len(g.store), 0);
	rig_release(&g);
}

Test(reflector, a_410_status_on_the_watch_request_relists_once)
{
	struct rig g;

	rig_init(&g);
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[]}");
	WATCH_GONE(&g.api, "too old resource version: 100 (900)");
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"900\"},\"items\":[]}");
	rig_start(&g, NULL);
	cr_assert(strstr(wait_watch(g.server, 2)->target, "resourceVersion=900"));
	sleep_ms(200);
	cr_assert_eq(count_requests(g.server, false), 2);
	cr_assert_eq(reflector_restarts(g.r, REFLECTOR_GONE), 1);
	rig_release(&g);
}

/*
 * After an API server restart every resumed watch is refused with 410: the
 * server is back, and the relist must not wait out the backoff that the
 * broken connection built up (here 2 s).
 */
Test(reflector, a_410_on_a_resumed_watch_relists_at_once_without_the_backoff)
{
	static const struct httpd_chunk events[] = {
		{ EVENT("ADDED", POD("a", "101")), 0, 0 },
	};
	struct reflector_options opts = {
		.idle_timeout_ms = 60000,
		.backoff_initial_ms = 2000,
		.backoff_max_ms = 2000,
	};
	struct rig g;
	uint64_t waited;

	rig_init(&g);
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[]}");
	/* One event, then the connection breaks: 2 s of backoff before watching again. */
	watch_chunks(&g.api, events, 1, 0, true);
	WATCH_GONE(&g.api, "too old resource version: 101 (900)");
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"900\"},\"items\":[]}");
	rig_start(&g, &opts);
	cr_assert(strstr(wait_watch(g.server, 2)->target, "resourceVersion=101"));
	waited = ms_until_lists(g.server, 2);
	cr_assert_lt(waited, 1000, "the relist waited %llu ms", (unsigned long long)waited);
	cr_assert(strstr(wait_watch(g.server, 3)->target, "resourceVersion=900"));
	cr_assert_eq(reflector_restarts(g.r, REFLECTOR_GONE), 1);
	cr_assert_eq(reflector_restarts(g.r, REFLECTOR_DISCONNECT), 1);
	rig_release(&g);
}

/* But a version refused straight from a fresh list is a server turning us away. */
Test(reflector, a_410_on_the_first_watch_from_a_fresh_list_waits_the_backoff)
{
	struct reflector_options opts = {
		.idle_timeout_ms = 60000,
		.backoff_initial_ms = 400,
		.backoff_max_ms = 400,
	};
	struct rig g;
	uint64_t waited;

	rig_init(&g);
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[]}");
	WATCH_GONE(&g.api, "too old resource version: 100 (900)");
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"900\"},\"items\":[]}");
	rig_start(&g, &opts);
	wait_watch(g.server, 1);
	waited = ms_until_lists(g.server, 2);
	/* The backoff is 400 ms; wait_watch saw the refused watch at most 10 ms late. */
	cr_assert_geq(waited, 380, "the relist came after %llu ms", (unsigned long long)waited);
	rig_release(&g);
}

Test(reflector, a_half_open_watch_is_abandoned_and_resumed_from_the_last_version)
{
	static const struct httpd_chunk events[] = {
		{ EVENT("ADDED", POD("a", "101")), 0, 0 },
	};
	struct reflector_options opts = {
		.idle_timeout_ms = 300,
		.backoff_initial_ms = 10,
		.backoff_max_ms = 50,
	};
	struct rig g;

	rig_init(&g);
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[]}");
	/* One event, then silence on a connection that never closes. */
	watch_chunks(&g.api, events, 1, -1, false);
	rig_start(&g, &opts);
	cr_assert(strstr(wait_watch(g.server, 2)->target, "resourceVersion=101"),
		  "%s", nth_request(g.server, true, 1)->target);
	cr_assert_eq(reflector_restarts(g.r, REFLECTOR_IDLE), 1);
	cr_assert_eq(count_requests(g.server, false), 1);
	rig_release(&g);
}

Test(reflector, a_torn_connection_is_resumed_from_the_last_version_without_relisting)
{
	static const struct httpd_chunk events[] = {
		{ EVENT("ADDED", POD("a", "101")), 0, 0 },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"na", 0, 0 },
	};
	struct rig g;
	char *text;

	rig_init(&g);
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[]}");
	watch_chunks(&g.api, events, 2, 0, true);
	rig_start(&g, NULL);
	cr_assert(strstr(wait_watch(g.server, 2)->target, "resourceVersion=101"));
	cr_assert_eq(reflector_restarts(g.r, REFLECTOR_DISCONNECT), 1);
	cr_assert_eq(count_requests(g.server, false), 1);
	text = log_text(&g);
	cr_assert_str_eq(text, "add ml/a;");
	free(text);
	rig_release(&g);
}

Test(reflector, a_malformed_line_reconnects_from_the_last_version)
{
	static const struct httpd_chunk events[] = {
		{ EVENT("ADDED", POD("a", "101")), 0, 0 },
		{ "{not json}\n", 0, 0 },
	};
	struct rig g;

	rig_init(&g);
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[]}");
	watch_chunks(&g.api, events, 2, -1, false);
	rig_start(&g, NULL);
	cr_assert(strstr(wait_watch(g.server, 2)->target, "resourceVersion=101"));
	cr_assert_eq(reflector_restarts(g.r, REFLECTOR_BAD_STREAM), 1);
	cr_assert_eq(count_requests(g.server, false), 1);
	rig_release(&g);
}

Test(reflector, a_failed_list_is_retried_and_sync_waits_for_it)
{
	struct rig g;

	rig_init(&g);
	g.api.lists[g.api.nlists++] = (struct httpd_response){
		.status = 503, .body = "{\"kind\":\"Status\",\"code\":503}" };
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[" POD("a", "7") "]}");
	rig_start(&g, NULL);
	cr_assert_eq(reflector_wait_synced(g.r, 5000), 0);
	cr_assert_eq(reflector_lists(g.r), 2);
	cr_assert_eq(reflector_restarts(g.r, REFLECTOR_LIST_FAILED), 1);
	cr_assert_eq(store_len(g.store), 1);
	rig_release(&g);
}

Test(reflector, stop_from_another_thread_ends_a_quiet_watch_promptly)
{
	struct timespec a, b;
	struct rig g;
	long ms;

	rig_init(&g);
	list_body(&g.api, "{\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[]}");
	rig_start(&g, NULL);
	wait_watch(g.server, 1);
	cr_assert(!reflector_synced(g.r) || reflector_wait_synced(g.r, 10) == 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	reflector_stop(g.r);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	cr_assert_lt(ms, 1500, "stop took %ld ms", ms);
	cr_assert_eq(reflector_wait_synced(g.r, 10), 0);
	rig_release(&g);
}

Test(reflector, waiting_for_sync_gives_up_when_stopped)
{
	struct rig g;
	int i;

	rig_init(&g);
	/* No list script: every list is a 500, so it never syncs. */
	rig_start(&g, NULL);
	cr_assert_eq(reflector_wait_synced(g.r, 50), CADRE_ETIMEDOUT);
	for (i = 0; i < 500 && !reflector_restarts(g.r, REFLECTOR_LIST_FAILED); i++)
		sleep_ms(10);
	cr_assert_gt(reflector_restarts(g.r, REFLECTOR_LIST_FAILED), 0);
	reflector_stop(g.r);
	cr_assert_eq(reflector_wait_synced(g.r, 1000), CADRE_ECANCELED);
	rig_release(&g);
}

Test(backoff, doubles_from_initial_with_jitter_up_to_the_cap)
{
	struct backoff b;
	uint64_t base = 800, d;
	int i;

	backoff_init(&b, 800, 30000, 1.0, 42);
	for (i = 0; i < 12; i++) {
		d = backoff_next(&b);
		cr_assert_geq(d, base > 30000 ? 30000 : base, "step %d: %llu", i,
			      (unsigned long long)d);
		cr_assert_leq(d, 2 * base > 30000 ? 30000 : 2 * base, "step %d: %llu", i,
			      (unsigned long long)d);
		base = base * 2 > 30000 ? 30000 : base * 2;
	}
	cr_assert_eq(backoff_next(&b), 30000);
	backoff_reset(&b);
	d = backoff_next(&b);
	cr_assert(d >= 800 && d <= 1600, "%llu", (unsigned long long)d);
}

Test(backoff, jitter_spreads_delays)
{
	struct backoff a, b;

	backoff_init(&a, 1000, 30000, 1.0, 1);
	backoff_init(&b, 1000, 30000, 1.0, 2);
	cr_assert_neq(backoff_next(&a), backoff_next(&b));
	backoff_init(&a, 1000, 30000, 0, 1);
	cr_assert_eq(backoff_next(&a), 1000);
	cr_assert_eq(backoff_next(&a), 2000);
}

Test(backoff, between_stays_in_range)
{
	uint64_t state = 7, v;
	int i, seen_lo = 0, seen_hi = 0;

	for (i = 0; i < 1000; i++) {
		v = backoff_between(&state, 3, 5);
		cr_assert(v >= 3 && v <= 5);
		seen_lo |= v == 3;
		seen_hi |= v == 5;
	}
	cr_assert(seen_lo && seen_hi);
}
