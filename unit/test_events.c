#include <criterion/criterion.h>

#include "base/err.h"
#include "api/labels.h"
#include "kube/config.h"
#include "kube/events.h"
#include "kube/http.h"
#include "unit/support/httpd.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define EVENTS_PATH "/apis/events.k8s.io/v1/namespaces/ml/events"

/* Events behind a fake API server: created names are remembered for PATCH. */
struct fake_events {
	pthread_mutex_t lock;
	json_t *names;        /* name -> true */
	int delay_ms;         /* answer this late (a slow API server) */
	char *scratch;
};

static void events_handler(void *ctx, const struct httpd_request *req,
			   struct httpd_response *resp)
{
	struct fake_events *f = ctx;
	json_t *body = json_loads(req->body, 0, NULL);

	pthread_mutex_lock(&f->lock);
	free(f->scratch);
	f->scratch = NULL;
	resp->delay_ms = f->delay_ms;
	if (!strcmp(req->method, "POST")) {
		const char *name = json_string_value(json_object_get(json_object_get(body, "metadata"),
								     "name"));

		json_object_set_new(f->names, name ? name : "", json_true());
		f->scratch = json_dumps(body, JSON_COMPACT);
		resp->status = 201;
	} else if (!strcmp(req->method, "PATCH")) {
		const char *name = strrchr(req->target, '/') + 1;

		if (json_object_get(f->names, name)) {
			f->scratch = strdup("{}");
			resp->status = 200;
		} else {
			f->scratch = strdup("{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}");
			resp->status = 404;
		}
	} else {
		f->scratch = strdup("{}");
		resp->status = 400;
	}
	resp->body = f->scratch;
	pthread_mutex_unlock(&f->lock);
	json_decref(body);
}

struct rig {
	struct fake_events fake;
	struct httpd *server;
	struct kube_config *cfg;
	struct kube_http *http;
	struct events *ev;
	json_t *job;
};

static void rig_init(struct rig *g, const struct events_options *opts)
{
	struct events_options defaults = { .reporting_controller = EVENTS_CONTROLLER,
					   .reporting_instance = "cadre-7f9c" };

	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->fake.lock, NULL);
	g->fake.names = json_object();
	cr_assert_eq(httpd_new(&g->server), 0);
	httpd_set_handler(g->server, events_handler, &g->fake);
	cr_assert_eq(kube_config_new(httpd_url(g->server), &g->cfg), 0);
	cr_assert_eq(kube_http_new(g->cfg, NULL, &g->http), 0);
	cr_assert_eq(events_new(g->http, opts ? opts : &defaults, &g->ev), 0);
	g->job = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:{s:s}},s:{}}", "apiVersion",
			   "cadre.dev/v1alpha1", "kind", "TrainingJob", "metadata", "name",
			   "llama", "namespace", "ml", "uid", "0b7e-11", "labels", "team", "nlp",
			   "spec");
}

static void rig_release(struct rig *g)
{
	events_free(g->ev);
	httpd_free(g->server);
	kube_http_free(g->http);
	kube_config_free(g->cfg);
	json_decref(g->job);
	json_decref(g->fake.names);
	free(g->fake.scratch);
}

static json_t *request_body(struct httpd *s, size_t i)
{
	const struct httpd_request *req = httpd_request_at(s, i);

	cr_assert_not_null(req, "no request %zu", i);
	return json_loads(req->body, 0, NULL);
}

Test(events, the_same_event_twice_is_one_create_then_one_patch_with_count_2)
{
	struct events_stats stats;
	const struct httpd_request *req;
	json_t *created, *patch, *want_ref;
	char path[512];
	struct rig g;

	rig_init(&g, NULL);
	cr_assert_eq(events_start(g.ev), 0);
	cr_assert_eq(events_record(g.ev, g.job, EVENTS_NORMAL, "Admitted", "Admit",
				   "admitted onto %d nodes", 2), 0);
	cr_assert_eq(events_flush(g.ev, 5000), 0);
	cr_assert_eq(events_record(g.ev, g.job, EVENTS_NORMAL, "Admitted", "Admit",
				   "admitted onto %d nodes", 2), 0);
	cr_assert_eq(events_flush(g.ev, 5000), 0);
	cr_assert_eq(httpd_request_count(g.server), 2);

	req = httpd_request_at(g.server, 0);
	cr_assert_str_eq(req->method, "POST");
	cr_assert_str_eq(req->target, EVENTS_PATH);
	created = request_body(g.server, 0);
	cr_assert_str_eq(json_string_value(json_object_get(created, "apiVersion")),
			 "events.k8s.io/v1");
	cr_assert_str_eq(json_string_value(json_object_get(created, "reason")), "Admitted");
	cr_assert_str_eq(json_string_value(json_object_get(created, "action")), "Admit");
	cr_assert_str_eq(json_string_value(json_object_get(created, "note")), "admitted onto 2 nodes");
	cr_assert_str_eq(json_string_value(json_object_get(created, "type")), "Normal");
	cr_assert_str_eq(json_string_value(json_object_get(created, "reportingController")),
			 "cadre.dev/controller");
	cr_assert_str_eq(json_string_value(json_object_get(created, "reportingInstance")),
			 "cadre-7f9c");
	cr_assert_not_null(json_string_value(json_object_get(created, "eventTime")));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(created, "metadata"),
							   "namespace")), "ml");
	want_ref = json_pack("{s:s,s:s,s:s,s:s,s:s}", "apiVersion", "cadre.dev/v1alpha1", "kind",
			     "TrainingJob", "name", "llama", "namespace", "ml", "uid", "0b7e-11");
	cr_assert(json_equal(json_object_get(created, "regarding"), want_ref));

	req = httpd_request_at(g.server, 1);
	cr_assert_str_eq(req->method, "PATCH");
	snprintf(path, sizeof(path), EVENTS_PATH "/%s",
		 json_string_value(json_object_get(json_object_get(created, "metadata"), "name")));
	cr_assert_str_eq(req->target, path);
	cr_assert(strstr(httpd_request_header(req, "Content-Type"), "merge-patch"));
	patch = request_body(g.server, 1);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(patch, "series"), "count")),
		     2);
	cr_assert_not_null(json_string_value(json_object_get(json_object_get(patch, "series"),
							     "lastObservedTime")));

	events_stats(g.ev, &stats);
	cr_assert_eq(stats.created, 1);
	cr_assert_eq(stats.patched, 1);
	json_decref(created);
	json_decref(patch);
	json_decref(want_ref);
	rig_release(&g);
}

Test(events, a_third_repeat_counts_3)
{
	struct rig g;
	json_t *patch;
	int i;

	rig_init(&g, NULL);
	cr_assert_eq(events_start(g.ev), 0);
	for (i = 0; i < 3; i++)
		events_record(g.ev, g.job, EVENTS_WARNING, "PodFailed", "Restart", "rank 1 exited 137");
	cr_assert_eq(events_flush(g.ev, 5000), 0);
	cr_assert_eq(httpd_request_count(g.server), 3);
	patch = request_body(g.server, 2);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(patch, "series"), "count")),
		     3);
	json_decref(patch);
	rig_release(&g);
}

Test(events, different_notes_are_different_events)
{
	struct events_stats stats;
	struct rig g;

	rig_init(&g, NULL);
	cr_assert_eq(events_start(g.ev), 0);
	events_record(g.ev, g.job, EVENTS_WARNING, "PodFailed", "Restart", "rank 0 exited 1");
	events_record(g.ev, g.job, EVENTS_WARNING, "PodFailed", "Restart", "rank 1 exited 1");
	cr_assert_eq(events_flush(g.ev, 5000), 0);
	events_stats(g.ev, &stats);
	cr_assert_eq(stats.created, 2);
	cr_assert_eq(stats.patched, 0);
	rig_release(&g);
}

Test(events, an_expired_event_is_created_again)
{
	struct events_stats stats;
	struct rig g;

	rig_init(&g, NULL);
	cr_assert_eq(events_start(g.ev), 0);
	events_record(g.ev, g.job, EVENTS_NORMAL, "Started", "Start", "all ranks running");
	cr_assert_eq(events_flush(g.ev, 5000), 0);
	pthread_mutex_lock(&g.fake.lock);
	json_object_clear(g.fake.names);
	pthread_mutex_unlock(&g.fake.lock);
	events_record(g.ev, g.job, EVENTS_NORMAL, "Started", "Start", "all ranks running");
	cr_assert_eq(events_flush(g.ev, 5000), 0);
	cr_assert_eq(httpd_request_count(g.server), 3);
	cr_assert_str_eq(httpd_request_at(g.server, 1)->method, "PATCH");
	cr_assert_str_eq(httpd_request_at(g.server, 2)->method, "POST");
	events_stats(g.ev, &stats);
	cr_assert_eq(stats.created, 2);
	rig_release(&g);
}

static _Atomic uint64_t fake_now = 1000;

static uint64_t fake_clock(void *arg)
{
	(void)arg;
	return atomic_load(&fake_now);
}

Test(events, an_object_past_its_spam_budget_is_filtered_until_it_refills)
{
	struct events_options opts = {
		.reporting_controller = EVENTS_CONTROLLER, .reporting_instance = "x", .spam_burst = 3, .spam_qps = 1.0,
		.now_ms = fake_clock,
	};
	struct events_stats stats;
	json_t *other;
	struct rig g;
	int i;

	rig_init(&g, &opts);
	other = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "v1", "kind", "Pod",
			  "metadata", "name", "other", "namespace", "ml");
	cr_assert_eq(events_start(g.ev), 0);
	for (i = 0; i < 5; i++)
		events_record(g.ev, g.job, EVENTS_NORMAL, "Tick", "Tick", "tick %d", i);
	events_record(g.ev, other, EVENTS_NORMAL, "Tick", "Tick", "tick");
	cr_assert_eq(events_flush(g.ev, 5000), 0);
	events_stats(g.ev, &stats);
	cr_assert_eq(stats.created, 4);
	cr_assert_eq(stats.filtered, 2);
	/* One token back per second. */
	atomic_fetch_add(&fake_now, 1000);
	events_record(g.ev, g.job, EVENTS_NORMAL, "Tick", "Tick", "tick again");
	events_record(g.ev, g.job, EVENTS_NORMAL, "Tick", "Tick", "and again");
	cr_assert_eq(events_flush(g.ev, 5000), 0);
	events_stats(g.ev, &stats);
	cr_assert_eq(stats.created, 5);
	cr_assert_eq(stats.filtered, 3);
	json_decref(other);
	rig_release(&g);
}

Test(events, a_full_queue_drops_and_counts)
{
	struct events_options opts = { .reporting_controller = EVENTS_CONTROLLER,
				       .reporting_instance = "x", .queue_len = 2 };
	struct events_stats stats;
	struct rig g;

	rig_init(&g, &opts);
	/* Not started yet: the queue fills. */
	cr_assert_eq(events_record(g.ev, g.job, EVENTS_NORMAL, "A", "A", "1"), 0);
	cr_assert_eq(events_record(g.ev, g.job, EVENTS_NORMAL, "A", "A", "2"), 0);
	cr_assert_eq(events_record(g.ev, g.job, EVENTS_NORMAL, "A", "A", "3"), CADRE_ETOOBIG);
	cr_assert_eq(events_start(g.ev), 0);
	cr_assert_eq(events_flush(g.ev, 5000), 0);
	events_stats(g.ev, &stats);
	cr_assert_eq(stats.dropped, 1);
	cr_assert_eq(stats.created, 2);
	rig_release(&g);
}

static long elapsed_ms(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

Test(events, a_slow_api_server_never_blocks_the_recorder)
{
	struct events_stats stats;
	struct timespec start;
	struct rig g;
	int i;

	rig_init(&g, NULL);
	g.fake.delay_ms = 1000;
	cr_assert_eq(events_start(g.ev), 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < 20; i++)
		cr_assert_eq(events_record(g.ev, g.job, EVENTS_NORMAL, "Tick", "Tick", "%d", i), 0);
	/* One create alone takes a second here: recording waited for none. */
	cr_assert_lt(elapsed_ms(&start), 1000, "recording took %ld ms", elapsed_ms(&start));
	/* Stopping drops what is still queued instead of waiting for it. */
	events_stop(g.ev);
	events_stats(g.ev, &stats);
	cr_assert_gt(stats.dropped, 10);
	cr_assert_eq(events_record(g.ev, g.job, EVENTS_NORMAL, "Tick", "Tick", "late"),
		     CADRE_ETOOBIG);
	rig_release(&g);
}

Test(events, notes_are_cut_at_the_api_limit_on_a_character_boundary)
{
	char long_note[3000];
	struct rig g;
	json_t *created;
	const char *note;
	size_t i;

	/* "é" is two bytes; an odd prefix makes byte 1024 fall inside one. */
	long_note[0] = 'x';
	for (i = 1; i + 2 < sizeof(long_note); i += 2) {
		long_note[i] = (char)0xc3;
		long_note[i + 1] = (char)0xa9;
	}
	long_note[i] = '\0';
	rig_init(&g, NULL);
	cr_assert_eq(events_start(g.ev), 0);
	cr_assert_eq(events_record(g.ev, g.job, EVENTS_WARNING, "Long", "Say", "%s", long_note), 0);
	cr_assert_eq(events_flush(g.ev, 5000), 0);
	created = request_body(g.server, 0);
	cr_assert_not_null(created, "the body must stay valid JSON (UTF-8)");
	note = json_string_value(json_object_get(created, "note"));
	cr_assert_leq(strlen(note), EVENTS_MAX_NOTE);
	cr_assert_geq(strlen(note), EVENTS_MAX_NOTE - 1);
	cr_assert_str_eq(json_string_value(json_object_get(created, "type")), "Warning");
	json_decref(created);
	rig_release(&g);
}

Test(events, records_need_a_named_object_a_reason_and_an_action)
{
	json_t *nameless = json_pack("{s:{}}", "metadata");
	struct rig g;

	rig_init(&g, NULL);
	cr_assert_eq(events_record(g.ev, nameless, EVENTS_NORMAL, "R", "A", "x"), CADRE_EINVAL);
	cr_assert_eq(events_record(g.ev, g.job, EVENTS_NORMAL, "", "A", "x"), CADRE_EINVAL);
	cr_assert_eq(events_record(g.ev, g.job, EVENTS_NORMAL, "R", NULL, "x"), CADRE_EINVAL);
	json_decref(nameless);
	rig_release(&g);
}
