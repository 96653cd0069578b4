/*
 * cadre dashboard: the JSON the page is sent (golden files in
 * unit/testdata/golden/dash/, rewritten with CADRE_UPDATE_GOLDEN=1), the
 * token, cookie, Host and Origin checks, and the "disconnected" state when
 * the API server goes away and comes back.
 */
#include <criterion/criterion.h>

#include "cli/dash.h"
#include "cli/dash_server.h"

#include "base/buf.h"
#include "controller/kinds.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/reflector.h"
#include "kube/store.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define GOLDEN CADRE_SOURCE_DIR "/unit/testdata/golden/dash"

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);

	cr_assert_not_null(v, "bad test JSON: %s", e.text);
	return v;
}

static void assert_golden(const char *name, json_t *got)
{
	const char *update = getenv("CADRE_UPDATE_GOLDEN");
	char path[512];
	json_t *want;

	cr_assert_not_null(got, "%s: the builder returned NULL", name);
	snprintf(path, sizeof(path), "%s/%s.json", GOLDEN, name);
	if (update && !strcmp(update, "1"))
		cr_assert_eq(json_dump_file(got, path, JSON_INDENT(2) | JSON_SORT_KEYS), 0);
	want = json_load_file(path, 0, NULL);
	cr_assert_not_null(want, "no golden file %s", path);
	if (!json_equal(want, got)) {
		char *a = json_dumps(got, JSON_INDENT(2) | JSON_SORT_KEYS);

		cr_assert_fail("%s differs from its golden file; got:\n%s", name, a);
		free(a);
	}
	json_decref(want);
	json_decref(got);
}

#define COND(type, status, reason, t) \
	"{\"type\":\"" type "\",\"status\":\"" status "\",\"reason\":\"" reason "\"," \
	"\"message\":\"m " type "\",\"lastTransitionTime\":\"" t "\"}"

/* A queued job (low priority, older), a queued one (high priority), a running one. */
static const char jobs_json[] =
	"[{\"metadata\":{\"name\":\"old-low\",\"namespace\":\"ml\",\"creationTimestamp\":"
	"\"2026-12-01T09:00:00Z\"},\"spec\":{\"numNodes\":4,\"priority\":0,\"resources\":"
	"{\"accelerators\":\"H100:8\"},\"envs\":{\"WANDB_API_KEY\":\"sk-do-not-show\"}},"
	"\"status\":{\"phase\":\"Queued\",\"jobId\":\"11\",\"conditions\":["
	COND("Admitted", "False", "InsufficientCapacity", "2026-12-01T09:00:01Z") "]}},"
	"{\"metadata\":{\"name\":\"new-high\",\"namespace\":\"ml\",\"creationTimestamp\":"
	"\"2026-12-01T10:00:00Z\"},\"spec\":{\"numNodes\":2,\"priority\":5},"
	"\"status\":{\"phase\":\"Queued\",\"jobId\":\"12\",\"message\":\"waiting for 2 nodes\"}},"
	"{\"metadata\":{\"name\":\"train\",\"namespace\":\"ml\",\"creationTimestamp\":"
	"\"2026-12-01T08:00:00Z\"},\"spec\":{\"numNodes\":2,\"queue\":\"gpu\",\"resources\":"
	"{\"accelerators\":\"H100:8\"}},"
	"\"status\":{\"phase\":\"Running\",\"jobId\":\"10\",\"readyNodes\":2,\"restarts\":1,"
	"\"infraRestarts\":2,\"nodes\":[{\"rank\":0,\"pod\":\"train-0\",\"node\":\"gpu-1\","
	"\"ip\":\"10.0.0.5\",\"phase\":\"Running\"},{\"rank\":1,\"pod\":\"train-1\"}],"
	"\"lastFailure\":{\"rank\":1,\"pod\":\"train-1-a0\",\"node\":\"gpu-2\",\"exitCode\":137,"
	"\"reason\":\"OOMKilled\",\"message\":\"out of memory\",\"time\":\"2026-12-01T08:30:00Z\"},"
	"\"conditions\":[" COND("Running", "True", "AllRanksRunning", "2026-12-01T08:31:00Z") ","
	COND("Admitted", "True", "Admitted", "2026-12-01T08:00:02Z") "]}}]";

static const char pods_json[] =
	"[{\"metadata\":{\"name\":\"train-0\",\"namespace\":\"ml\",\"labels\":"
	"{\"cadre.dev/job-name\":\"train\",\"cadre.dev/node-rank\":\"0\"}},"
	"\"spec\":{\"nodeName\":\"gpu-1\",\"containers\":[{\"name\":\"main\",\"resources\":"
	"{\"requests\":{\"nvidia.com/gpu\":\"8\"}}}]},\"status\":{\"phase\":\"Running\","
	"\"podIP\":\"10.0.0.5\",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"running\":{}}}]}},"
	"{\"metadata\":{\"name\":\"train-1\",\"namespace\":\"ml\",\"labels\":"
	"{\"cadre.dev/job-name\":\"train\",\"cadre.dev/node-rank\":\"1\"}},"
	"\"spec\":{\"nodeName\":\"gpu-2\",\"containers\":[{\"name\":\"main\",\"resources\":"
	"{\"requests\":{\"nvidia.com/gpu\":\"8\"}}}]},\"status\":{\"phase\":\"Failed\","
	"\"podIP\":\"10.0.0.6\",\"containerStatuses\":[{\"name\":\"main\",\"state\":"
	"{\"terminated\":{\"exitCode\":137,\"reason\":\"OOMKilled\"}}}]}}]";

static const char nodes_json[] =
	"[{\"metadata\":{\"name\":\"gpu-2\",\"labels\":{\"nvidia.com/gpu.product\":\"NVIDIA-H100\"}},"
	"\"status\":{\"allocatable\":{\"cpu\":\"96\",\"nvidia.com/gpu\":\"8\"},"
	"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}},"
	"{\"metadata\":{\"name\":\"gpu-1\",\"labels\":{\"nvidia.com/gpu.product\":\"NVIDIA-H100\"}},"
	"\"status\":{\"allocatable\":{\"cpu\":\"96\",\"nvidia.com/gpu\":\"8\"},"
	"\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}},"
	"{\"metadata\":{\"name\":\"cpu-1\"},\"status\":{\"allocatable\":{\"cpu\":\"8\"}}}]";

static const char events_json[] =
	"[{\"type\":\"Normal\",\"reason\":\"Started\",\"message\":\"all ranks run\","
	"\"lastTimestamp\":\"2026-12-01T08:31:00Z\",\"count\":1},"
	"{\"type\":\"Warning\",\"reason\":\"RankFailed\",\"message\":\"rank 1 exit 137\","
	"\"lastTimestamp\":\"2026-12-01T08:30:00Z\",\"count\":3}]";

Test(dash_json, waiting_jobs_are_ordered_as_admission_orders_them)
{
	json_t *jobs = parse(jobs_json);

	assert_golden("queue", dash_queue_order(jobs));
	json_decref(jobs);
}

Test(dash_json, job_rows_carry_phase_nodes_queue_position_and_why_they_wait)
{
	json_t *jobs = parse(jobs_json);

	assert_golden("job-map", dash_job_map(jobs));
	json_decref(jobs);
}

Test(dash_json, no_value_of_a_jobs_environment_reaches_the_page)
{
	json_t *jobs = parse(jobs_json), *pods = parse(pods_json), *evs = parse(events_json);
	json_t *map = dash_job_map(jobs);
	json_t *detail = dash_job_detail(json_array_get(jobs, 0), pods, evs, 2);
	char *a = json_dumps(map, 0), *b = json_dumps(detail, 0);

	cr_assert_null(strstr(a, "sk-do-not-show"));
	cr_assert_null(strstr(b, "sk-do-not-show"));
	cr_assert_null(strstr(b, "WANDB"));
	free(a);
	free(b);
	json_decref(map);
	json_decref(detail);
	json_decref(jobs);
	json_decref(pods);
	json_decref(evs);
}

Test(dash_json, a_jobs_page_has_ranks_with_exit_codes_a_timeline_events_and_last_failure)
{
	json_t *jobs = parse(jobs_json), *pods = parse(pods_json), *evs = parse(events_json);

	assert_golden("job-detail", dash_job_detail(json_array_get(jobs, 2), pods, evs, 0));
	json_decref(jobs);
	json_decref(pods);
	json_decref(evs);
}

Test(dash_json, a_delta_holds_only_changed_rows_and_deleted_keys)
{
	json_t *jobs = parse(jobs_json), *old_map = dash_job_map(jobs), *new_map, *delta;

	cr_assert_eq(dash_job_delta(old_map, old_map, &delta), 0);
	cr_assert_null(delta, "no change, no delta");
	json_array_remove(jobs, 0);  /* old-low is gone, train has one node ready */
	json_object_set_new(json_object_get(json_array_get(jobs, 1), "status"), "readyNodes",
			    json_integer(1));
	new_map = dash_job_map(jobs);
	cr_assert_eq(dash_job_delta(old_map, new_map, &delta), 0);
	assert_golden("delta", delta);
	json_decref(old_map);
	json_decref(new_map);
	json_decref(jobs);
}

Test(dash_json, the_first_delta_of_a_page_is_every_row)
{
	json_t *jobs = parse(jobs_json), *map = dash_job_map(jobs), *delta;

	cr_assert_eq(dash_job_delta(NULL, map, &delta), 0);
	cr_assert_eq(json_array_size(json_object_get(delta, "upsert")), 3);
	cr_assert_eq(json_array_size(json_object_get(delta, "delete")), 0);
	json_decref(delta);
	json_decref(map);
	json_decref(jobs);
}

Test(dash_json, gpu_nodes_show_free_used_and_the_jobs_holding_them)
{
	json_t *nodes = parse(nodes_json), *pods = parse(pods_json), *rows;
	long long used, total;

	rows = dash_gpu_nodes(nodes, pods);
	dash_gpu_totals(rows, &used, &total);
	cr_assert_eq(used, 8, "the Failed pod holds nothing");
	cr_assert_eq(total, 16);
	assert_golden("gpu-nodes", rows);
	json_decref(nodes);
	json_decref(pods);
}

Test(dash_json, the_gpu_history_keeps_the_last_hour_oldest_first)
{
	static struct dash_history h;
	json_t *v;

	for (int i = 0; i < DASH_SAMPLES + 5; i++)
		dash_history_add(&h, 1000 + i * DASH_SAMPLE_S, i, 16);
	v = dash_history_json(&h);
	cr_assert_eq(json_array_size(v), DASH_SAMPLES);
	cr_assert_eq(json_integer_value(json_array_get(json_array_get(v, 0), 1)), 5);
	cr_assert_eq(json_integer_value(json_array_get(json_array_get(v, DASH_SAMPLES - 1), 1)),
		     DASH_SAMPLES + 4);
	json_decref(v);
}

/* ---- access ---- */

#define TOKEN "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

Test(dash_auth, a_new_token_is_64_hex_digits_and_never_the_same_twice)
{
	char a[DASH_TOKEN_LEN + 1], b[DASH_TOKEN_LEN + 1];

	cr_assert_eq(dash_token_new(a), 0);
	cr_assert_eq(dash_token_new(b), 0);
	cr_assert_eq(strlen(a), DASH_TOKEN_LEN);
	cr_assert_eq(strspn(a, "0123456789abcdef"), DASH_TOKEN_LEN);
	cr_assert_str_neq(a, b);
}

Test(dash_auth, only_the_exact_token_is_accepted)
{
	cr_assert(dash_token_equal(TOKEN, TOKEN));
	cr_assert_not(dash_token_equal(NULL, TOKEN));
	cr_assert_not(dash_token_equal("", TOKEN));
	cr_assert_not(dash_token_equal("0123", TOKEN));
	cr_assert_not(dash_token_equal(TOKEN "0", TOKEN));
	cr_assert_not(dash_token_equal("1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", TOKEN));
}

Test(dash_auth, the_cookie_is_found_among_others_and_must_hold_the_token)
{
	cr_assert(dash_cookie_ok(DASH_COOKIE "=" TOKEN, TOKEN));
	cr_assert(dash_cookie_ok("a=1; " DASH_COOKIE "=" TOKEN "; b=2", TOKEN));
	cr_assert_not(dash_cookie_ok(NULL, TOKEN));
	cr_assert_not(dash_cookie_ok("", TOKEN));
	cr_assert_not(dash_cookie_ok("x" DASH_COOKIE "=" TOKEN, TOKEN));
	cr_assert_not(dash_cookie_ok(DASH_COOKIE "=" TOKEN "x", TOKEN));
	cr_assert_not(dash_cookie_ok(DASH_COOKIE "=; a=" TOKEN, TOKEN));
}

Test(dash_auth, the_cookie_is_http_only_and_same_site_strict)
{
	char c[200];

	cr_assert_eq(dash_cookie_header(TOKEN, c, sizeof(c)), 0);
	cr_assert_str_eq(c, DASH_COOKIE "=" TOKEN "; Path=/; HttpOnly; SameSite=Strict");
}

Test(dash_auth, host_must_name_the_bound_address_and_port)
{
	cr_assert(dash_host_ok("127.0.0.1:8765", "127.0.0.1", 8765));
	cr_assert(dash_host_ok("localhost:8765", "127.0.0.1", 8765));
	cr_assert(dash_host_ok("LOCALHOST:8765", "127.0.0.1", 8765));
	cr_assert(dash_host_ok("[::1]:8765", "::1", 8765));
	cr_assert(dash_host_ok("10.1.2.3:80", "10.1.2.3", 80));
	/* DNS rebinding: the attacker's name, resolving to loopback */
	cr_assert_not(dash_host_ok("evil.example:8765", "127.0.0.1", 8765));
	cr_assert_not(dash_host_ok("127.0.0.1:8766", "127.0.0.1", 8765));
	cr_assert_not(dash_host_ok("127.0.0.1", "127.0.0.1", 8765));
	cr_assert_not(dash_host_ok("127.0.0.1:8765.evil.example", "127.0.0.1", 8765));
	cr_assert_not(dash_host_ok("localhost:80", "10.1.2.3", 80), "localhost is not 10.1.2.3");
	cr_assert_not(dash_host_ok(NULL, "127.0.0.1", 8765));
}

Test(dash_auth, origin_must_be_the_pages_own)
{
	cr_assert(dash_origin_ok("http://127.0.0.1:8765", "127.0.0.1", 8765));
	cr_assert(dash_origin_ok("http://localhost:8765", "127.0.0.1", 8765));
	cr_assert_not(dash_origin_ok("http://evil.example", "127.0.0.1", 8765));
	cr_assert_not(dash_origin_ok("https://127.0.0.1:8765", "127.0.0.1", 8765));
	cr_assert_not(dash_origin_ok("http://127.0.0.1:8765/", "127.0.0.1", 8765));
	cr_assert_not(dash_origin_ok("null", "127.0.0.1", 8765));
	cr_assert_not(dash_origin_ok(NULL, "127.0.0.1", 8765));
}

Test(dash_auth, loopback_is_127_slash_8_and_ipv6_one)
{
	cr_assert(dash_is_loopback("127.0.0.1"));
	cr_assert(dash_is_loopback("127.1.2.3"));
	cr_assert(dash_is_loopback("::1"));
	cr_assert_not(dash_is_loopback("0.0.0.0"));
	cr_assert_not(dash_is_loopback("10.0.0.1"));
	cr_assert_not(dash_is_loopback("::"));
}

Test(dash_auth, every_page_asset_is_embedded)
{
	cr_assert_not_null(dash_asset_find("/"));
	cr_assert_not_null(dash_asset_find("/app.js"));
	cr_assert_not_null(dash_asset_find("/style.css"));
	cr_assert_null(dash_asset_find("/../CMakeLists.txt"));
	cr_assert_not_null(strstr((const char *)dash_asset_find("/")->data, "/app.js"));
}

/* ---- the API server goes away and comes back ---- */

/* dash_route: the decisions the HTTP callback takes, from the request's bytes alone. */
static const struct dash_site site = { .address = "127.0.0.1", .port = 8765, .token = TOKEN };

static struct dash_route route_of(bool post, const char *path, const char *token,
				  const char *origin, const char *cookie)
{
	struct dash_request req = { .post = post, .path = path, .token = token,
				    .host = "127.0.0.1:8765", .origin = origin, .cookie = cookie };
	struct dash_route r;

	dash_route(&req, &site, &r);
	return r;
}

Test(dash_route, only_the_first_visit_with_the_token_goes_without_the_cookie)
{
	const char *cookie = "a=1; " DASH_COOKIE "=" TOKEN;
	struct dash_route r;

	cr_assert_eq(route_of(false, "/", TOKEN, NULL, NULL).kind, DASH_ROUTE_FIRST_VISIT);
	r = route_of(false, "/", TOKEN "0", NULL, NULL);
	cr_assert_eq(r.kind, DASH_ROUTE_REFUSE);
	cr_assert_str_eq(r.refusal, "401 the token is not this dashboard's");
	r = route_of(false, "/app.js", NULL, NULL, NULL);
	cr_assert_eq(r.kind, DASH_ROUTE_REFUSE);
	cr_assert(!strncmp(r.refusal, "401 ", 4), "%s", r.refusal);
	r = route_of(false, "/app.js", NULL, NULL, cookie);
	cr_assert_eq(r.kind, DASH_ROUTE_ASSET);
	cr_assert_str_eq(r.asset->path, "/app.js");
	cr_assert_str_eq(route_of(false, "/nothing", NULL, NULL, cookie).refusal, "404 not found");
	/* Another site's page cannot POST, even with the cookie its browser holds. */
	r = route_of(true, "/api/jobs/ml/llama/cancel", NULL, "http://evil.example", cookie);
	cr_assert_str_eq(r.refusal, "403 requests from other sites' pages are refused");
	r = route_of(true, "/api/jobs/ml/llama/cancel", NULL, NULL, cookie);
	cr_assert_str_eq(r.refusal, "403 requests from other sites' pages are refused");
}

Test(dash_route, an_action_names_a_job_and_one_of_three_verbs)
{
	const char *cookie = DASH_COOKIE "=" TOKEN, *origin = "http://127.0.0.1:8765";
	struct dash_route r = route_of(true, "/api/jobs/ml/llama/suspend", NULL, origin, cookie);

	cr_assert_eq(r.kind, DASH_ROUTE_ACTION);
	cr_assert_str_eq(r.ns, "ml");
	cr_assert_str_eq(r.name, "llama");
	cr_assert_str_eq(r.verb, "suspend");
	cr_assert_str_eq(route_of(true, "/api/jobs/ml/llama/delete", NULL, origin, cookie).refusal,
			 "404 no such action");
	cr_assert_str_eq(route_of(true, "/api/jobs/ml//cancel", NULL, origin, cookie).refusal,
			 "404 no such action");
	cr_assert_str_eq(route_of(true, "/api/jobs/ml/llama/cancel/x", NULL, origin, cookie).refusal,
			 "404 no such action");
	cr_assert_str_eq(route_of(true, "/", NULL, origin, cookie).refusal, "404 not found");
}

Test(dash_route, a_websocket_message_watches_a_job_or_none)
{
	char watch[16] = "before";

	cr_assert_eq(dash_ws_message("{\"watch\":\"ml/llama\"}", 20, watch, sizeof(watch)),
		     DASH_WS_WATCH);
	cr_assert_str_eq(watch, "ml/llama");
	cr_assert_eq(dash_ws_message("{\"watch\":null}", 14, watch, sizeof(watch)), DASH_WS_UNWATCH);
	cr_assert_eq(dash_ws_message("{\"watch\":\"0123456789abcdef\"}", 28, watch, sizeof(watch)),
		     DASH_WS_UNWATCH, "a key that does not fit");
	cr_assert_str_eq(watch, "ml/llama");
	cr_assert_eq(dash_ws_message("{\"watch\"", 8, watch, sizeof(watch)), DASH_WS_IGNORE);
	cr_assert_eq(dash_ws_message("[1]", 3, watch, sizeof(watch)), DASH_WS_IGNORE);
	cr_assert_eq(dash_ws_message("", 0, watch, sizeof(watch)), DASH_WS_IGNORE);
}

Test(dash_health, a_failure_with_a_failed_probe_is_disconnected_until_a_quiet_good_probe)
{
	struct dash_health h;

	dash_health_init(&h, 3);
	cr_assert_not(dash_health_needs_probe(&h, 3), "quiet and connected: no probe");
	cr_assert_not(dash_health_step(&h, 3, true));
	cr_assert(dash_health_needs_probe(&h, 4));
	cr_assert_not(dash_health_step(&h, 4, true), "a watch restart the server answers after");
	cr_assert(h.connected);
	cr_assert(dash_health_step(&h, 5, false));
	cr_assert_not(h.connected);
	cr_assert(dash_health_needs_probe(&h, 5), "disconnected: probe every step");
	cr_assert_not(dash_health_step(&h, 5, false));
	cr_assert_not(dash_health_step(&h, 6, true), "still failing while it answers");
	cr_assert_not(h.connected);
	cr_assert(dash_health_step(&h, 6, true));
	cr_assert(h.connected);
}

static atomic_bool probe_ok;

static int fake_probe(void *ctx)
{
	(void)ctx;
	return atomic_load(&probe_ok) ? 0 : -14;
}

struct running {
	struct dash_server *srv;
	atomic_bool stop;
};

static void *run_server(void *arg)
{
	struct running *r = arg;

	dash_server_run(r->srv, &r->stop);
	return NULL;
}

static bool wait_connected(struct dash_server *srv, bool want, int ms)
{
	for (int i = 0; i < ms / 50; i++) {
		if (dash_server_connected(srv) == want)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

Test(dash_health, the_server_says_disconnected_when_the_api_server_goes_and_recovers, .timeout = 30)
{
	struct reflector_options ro = { .resource = &kube_resource_trainingjobs,
					.backoff_initial_ms = 60000, .backoff_max_ms = 60000 };
	struct dash_server_opts o = { .address = "127.0.0.1", .token = TOKEN, .scope = "ml",
				      .probe = fake_probe, .n_reflectors = 1 };
	struct kube_config *cfg = NULL;
	struct kube_http *http = NULL;
	struct reflector *r = NULL;
	struct store *jobs = store_new(NULL);
	struct running run = { 0 };
	pthread_t t;

	atomic_store(&probe_ok, false);
	/* Nothing listens on port 1: the list fails, as when the API server is gone. */
	cr_assert_eq(kube_config_new("http://127.0.0.1:1", &cfg), 0);
	cr_assert_eq(kube_http_new(cfg, NULL, &http), 0);
	cr_assert_eq(reflector_new(http, jobs, &ro, &r), 0);
	o.http = http;
	o.jobs = jobs;
	o.reflectors[0] = r;
	cr_assert_eq(dash_server_start(&o, &run.srv), 0);
	cr_assert_gt(dash_server_port(run.srv), 0);
	cr_assert(dash_server_connected(run.srv), "connected until something fails");
	cr_assert_eq(pthread_create(&t, NULL, run_server, &run), 0);
	cr_assert_eq(reflector_start(r), 0);
	cr_assert(wait_connected(run.srv, false, 5000), "the page is told: disconnected");
	atomic_store(&probe_ok, true);
	cr_assert(wait_connected(run.srv, true, 5000), "and recovers when the server answers");
	atomic_store(&run.stop, true);
	pthread_join(t, NULL);
	reflector_free(r);
	dash_server_free(run.srv);
	store_free(jobs);
	kube_http_free(http);
	kube_config_free(cfg);
}

/* ---- the command's flags ---- */

#include "unit/support/clirun.h"

Test(dash_cli, an_address_other_than_loopback_needs_allow_remote)
{
	char *out = NULL, *err = NULL;

	cr_assert_eq(clirun("/tmp", "dashboard --address 0.0.0.0", NULL, &out, &err), 2);
	cr_assert_str_empty(out);
	cr_assert_not_null(strstr(err, "--address 0.0.0.0 is reachable from other machines"), "%s", err);
	cr_assert_not_null(strstr(err, "--allow-remote"), "%s", err);
	free(out);
	free(err);
}

Test(dash_cli, a_port_must_be_a_number_up_to_65535)
{
	char *out = NULL, *err = NULL;

	cr_assert_eq(clirun("/tmp", "dashboard --port 70000", NULL, &out, &err), 2);
	cr_assert_not_null(strstr(err, "--port: \"70000\" is not a port"), "%s", err);
	free(out);
	free(err);
}

Test(dash_cli, help_names_every_flag)
{
	char *out = NULL, *err = NULL;

	cr_assert_eq(clirun("/tmp", "dashboard --help", NULL, &out, &err), 0);
	cr_assert_not_null(strstr(out, "--allow-remote"));
	cr_assert_not_null(strstr(out, "--open"));
	cr_assert_not_null(strstr(out, "--port N"));
	free(out);
	free(err);
}
