/*
 * cadre dashboard: the JSON the page is sent (golden files in
 * unit/testdata/golden/dash/, rewritten with CADRE_UPDATE_GOLDEN=1), the
 * token, cookie, Host and Origin checks, and the "disconnected" state when
 * the API server goes away and comes back.
 */
#include <criterion/criterion.h>

#include "cli/dashboard/dash.h"
#include "api/dra_nodes.h"
#include "cli/dashboard/dash_server.h"

#include "base/buf.h"
#include "base/err.h"
#include "cli/kube.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/reflector.h"
#include "kube/store.h"
#include "unit/support/httpd.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
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

/*
 * docs/design.md 3.5: a victim requeued by a higher tier and queued again, and the
 * preemptor waiting for two victims to go.
 */
static const char preemption_json[] =
	"[{\"metadata\":{\"name\":\"scavenge\",\"namespace\":\"ml\",\"creationTimestamp\":"
	"\"2026-12-01T08:00:00Z\"},\"spec\":{\"numNodes\":2},"
	"\"status\":{\"phase\":\"Queued\",\"jobId\":\"20\",\"restarts\":1,\"requeues\":1,"
	"\"preemptions\":2,\"preemption\":{\"preemptor\":\"ml/urgent\",\"attempt\":3,"
	"\"time\":\"2026-12-07T10:00:00Z\",\"graceSeconds\":45,\"mode\":\"Requeue\","
	"\"tier\":10},\"conditions\":["
	COND("Admitted", "False", "Restarting", "2026-12-07T10:00:50Z") "]}},"
	"{\"metadata\":{\"name\":\"urgent\",\"namespace\":\"ml\",\"creationTimestamp\":"
	"\"2026-12-07T09:59:00Z\"},\"spec\":{\"numNodes\":4},"
	"\"status\":{\"phase\":\"Queued\",\"jobId\":\"21\",\"preempting\":["
	"{\"job\":\"ml/scavenge\",\"attempt\":3},{\"job\":\"ml/batch\",\"attempt\":0}],"
	"\"conditions\":[" COND("Admitted", "False", "Preempting", "2026-12-07T10:00:00Z") "]}}]";

static void assert_json(const json_t *got, const char *want_text)
{
	json_t *want = parse(want_text);
	char *text = json_dumps(got, JSON_SORT_KEYS);

	cr_assert(json_equal(got, want), "got %s", text ? text : "NULL");
	free(text);
	json_decref(want);
}

Test(dash_json, rows_say_who_preempted_a_job_and_how_many_it_preempts)
{
	json_t *jobs = parse(preemption_json), *map = dash_job_map(jobs);
	json_t *victim = json_object_get(map, "ml/scavenge"), *preemptor = json_object_get(map, "ml/urgent");

	cr_assert_not_null(victim);
	cr_assert_not_null(preemptor);
	assert_json(victim, "{\"key\":\"ml/scavenge\",\"namespace\":\"ml\",\"name\":\"scavenge\","
		    "\"jobId\":\"20\",\"phase\":\"Queued\",\"ready\":0,\"total\":2,\"accelerators\":\"\","
		    "\"queue\":\"\",\"priority\":0,\"reason\":\"Restarting\",\"message\":\"m Admitted\","
		    "\"created\":\"2026-12-01T08:00:00Z\",\"restarts\":1,\"infraRestarts\":0,"
		    "\"requeues\":1,\"preemptions\":2,\"preemptedBy\":\"ml/urgent\",\"preempting\":0,"
		    "\"suspended\":false,\"queuePosition\":1}");
	assert_json(preemptor, "{\"key\":\"ml/urgent\",\"namespace\":\"ml\",\"name\":\"urgent\","
		    "\"jobId\":\"21\",\"phase\":\"Queued\",\"ready\":0,\"total\":4,\"accelerators\":\"\","
		    "\"queue\":\"\",\"priority\":0,\"reason\":\"Preempting\",\"message\":\"m Admitted\","
		    "\"created\":\"2026-12-07T09:59:00Z\",\"restarts\":0,\"infraRestarts\":0,"
		    "\"requeues\":0,\"preemptions\":0,\"preemptedBy\":\"\",\"preempting\":2,"
		    "\"suspended\":false,\"queuePosition\":2}");
	json_decref(map);
	json_decref(jobs);
}

Test(dash_json, a_jobs_page_has_its_last_preemption_and_the_jobs_it_preempts)
{
	json_t *jobs = parse(preemption_json), *none = json_array();
	json_t *victim = dash_job_detail(json_array_get(jobs, 0), none, none, 1);
	json_t *preemptor = dash_job_detail(json_array_get(jobs, 1), none, none, 2);

	assert_json(json_object_get(victim, "preemption"),
		    "{\"preemptor\":\"ml/urgent\",\"attempt\":3,\"time\":\"2026-12-07T10:00:00Z\","
		    "\"graceSeconds\":45,\"mode\":\"Requeue\",\"tier\":10}");
	assert_json(json_object_get(victim, "preempting"), "[]");
	cr_assert(json_is_null(json_object_get(preemptor, "preemption")));
	assert_json(json_object_get(preemptor, "preempting"),
		    "[{\"job\":\"ml/scavenge\",\"attempt\":3},{\"job\":\"ml/batch\",\"attempt\":0}]");
	json_decref(victim);
	json_decref(preemptor);
	json_decref(none);
	json_decref(jobs);
}

Test(dash_json, gpu_nodes_show_free_used_and_the_jobs_holding_them)
{
	json_t *nodes = parse(nodes_json), *pods = parse(pods_json), *rows;
	long long used, total;

	rows = dash_gpu_nodes(nodes, pods, NULL);
	dash_gpu_totals(rows, &used, &total);
	cr_assert_eq(used, 8, "the Failed pod holds nothing");
	cr_assert_eq(total, 16);
	assert_golden("gpu-nodes", rows);
	json_decref(nodes);
	json_decref(pods);
}

/*
 * A node whose GPUs Dynamic Resource Allocation publishes (no nvidia.com/gpu
 * in its allocatable) is a GPU node row too: its devices of the GPU
 * classes, used while the claim allocated them is reserved for one of
 * cadre's pods that runs; the MIG device is no GPU, the Failed pod's claim
 * and the claim of a pod not cadre's hold nothing here.
 */
Test(dash_json, dra_gpu_nodes_show_their_devices_and_the_jobs_whose_claims_hold_them)
{
	json_t *nodes = parse("[{\"metadata\":{\"name\":\"dra-1\"},\"status\":{\"allocatable\":"
			      "{\"cpu\":\"96\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}},"
			      "{\"metadata\":{\"name\":\"cpu-1\"},\"status\":{\"allocatable\":"
			      "{\"cpu\":\"8\"}}}]");
	json_t *pods = parse("[{\"metadata\":{\"name\":\"train-0\",\"namespace\":\"ml\","
			     "\"labels\":{\"cadre.dev/job-name\":\"train\"}},\"spec\":{\"nodeName\":"
			     "\"dra-1\"},\"status\":{\"phase\":\"Running\"}},"
			     "{\"metadata\":{\"name\":\"old-0\",\"namespace\":\"ml\",\"labels\":"
			     "{\"cadre.dev/job-name\":\"old\"}},\"spec\":{\"nodeName\":\"dra-1\"},"
			     "\"status\":{\"phase\":\"Failed\"}}]");
	json_t *classes = parse("[{\"metadata\":{\"name\":\"gpu.nvidia.com\"},\"spec\":"
				"{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == "
				"'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == "
				"'gpu'\"}}]}}]");
#define DEV(name, type) "{\"name\":\"" name "\",\"attributes\":{\"type\":{\"string\":\"" type \
	"\"},\"productName\":{\"string\":\"NVIDIA H100 80GB HBM3\"}}}"
	json_t *slices = parse("[{\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"dra-1\","
			       "\"pool\":{\"name\":\"dra-1\",\"generation\":1,"
			       "\"resourceSliceCount\":1},\"devices\":[" DEV("gpu-0", "gpu") ","
			       DEV("gpu-1", "gpu") "," DEV("gpu-2", "gpu") "," DEV("gpu-3", "gpu") ","
			       DEV("mig-0", "mig") "]}}]");
#undef DEV
#define CLAIM(name, pod, devices) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ml\"}," \
	"\"status\":{\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"" pod "\"}]," \
	"\"allocation\":{\"devices\":{\"results\":[" devices "]}}}}"
#define RESULT(dev) "{\"request\":\"r\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"dra-1\"," \
	"\"device\":\"" dev "\"}"
	json_t *claims = parse("[" CLAIM("a", "train-0", RESULT("gpu-0") "," RESULT("gpu-1")) ","
			       CLAIM("b", "old-0", RESULT("gpu-2")) ","
			       CLAIM("c", "someone-elses", RESULT("gpu-3") "," RESULT("mig-0")) "]");
#undef CLAIM
#undef RESULT
	struct dra_nodes dra;
	json_t *rows;

	cr_assert_eq(dra_nodes_build(classes, slices, claims, &dra), 0);
	rows = dash_gpu_nodes(nodes, pods, &dra);
	assert_json(rows, "[{\"name\":\"dra-1\",\"ready\":true,\"product\":"
		    "\"NVIDIA H100 80GB HBM3\",\"resource\":\"gpu.nvidia.com\",\"allocatable\":4,"
		    "\"used\":2,\"free\":2,\"jobs\":[{\"key\":\"ml/train\",\"count\":2}]}]");
	json_decref(rows);
	rows = dash_gpu_nodes(nodes, pods, NULL);
	assert_json(rows, "[]");
	json_decref(rows);
	dra_nodes_release(&dra);
	json_decref(nodes);
	json_decref(pods);
	json_decref(classes);
	json_decref(slices);
	json_decref(claims);
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

Test(dash_auth, a_code_opens_one_session_and_the_session_is_not_the_code)
{
	static struct dash_auth a;
	char s1[DASH_TOKEN_LEN + 1], s2[DASH_TOKEN_LEN + 1], cookie[128], next[DASH_TOKEN_LEN + 1];

	cr_assert_eq(dash_auth_init(&a, TOKEN), 0);
	cr_assert_eq(dash_auth_redeem(&a, "0123", s1), CADRE_EUNAUTHORIZED);
	cr_assert_eq(dash_auth_redeem(&a, TOKEN, s1), 0);
	cr_assert_str_neq(s1, TOKEN);
	/* spent: the same code again opens nothing; a new one is out */
	cr_assert_eq(dash_auth_redeem(&a, TOKEN, s2), CADRE_EUNAUTHORIZED);
	cr_assert_str_neq(a.code, TOKEN);
	cr_assert_eq(strlen(a.code), DASH_TOKEN_LEN);
	snprintf(cookie, sizeof(cookie), "x=1; " DASH_COOKIE "=%s", s1);
	cr_assert(dash_auth_cookie_ok(&a, cookie));
	cr_assert_not(dash_auth_cookie_ok(&a, DASH_COOKIE "=" TOKEN), "the code is no cookie");
	snprintf(cookie, sizeof(cookie), DASH_COOKIE "=%s", a.code);
	cr_assert_not(dash_auth_cookie_ok(&a, cookie), "nor is the next code");
	/* each browser its own session; past the limit the oldest ends */
	snprintf(next, sizeof(next), "%s", a.code);
	cr_assert_eq(dash_auth_redeem(&a, next, s2), 0);
	cr_assert_str_neq(s1, s2);
	for (int i = 0; i < DASH_MAX_SESSIONS - 1; i++) {
		char s[DASH_TOKEN_LEN + 1];

		snprintf(next, sizeof(next), "%s", a.code);
		cr_assert_eq(dash_auth_redeem(&a, next, s), 0);
	}
	snprintf(cookie, sizeof(cookie), DASH_COOKIE "=%s", s1);
	cr_assert_not(dash_auth_cookie_ok(&a, cookie));
	snprintf(cookie, sizeof(cookie), DASH_COOKIE "=%s", s2);
	cr_assert(dash_auth_cookie_ok(&a, cookie));
}

static struct dash_names names_for(const char *address)
{
	struct dash_names n;

	dash_names_for(address, &n);
	return n;
}

Test(dash_auth, host_must_name_the_bound_address_and_port)
{
	struct dash_names lo = names_for("127.0.0.1"), v6 = names_for("::1");
	struct dash_names lan = names_for("10.1.2.3");

	cr_assert(dash_host_ok("127.0.0.1:8765", &lo, 8765));
	cr_assert(dash_host_ok("localhost:8765", &lo, 8765));
	cr_assert(dash_host_ok("LOCALHOST:8765", &lo, 8765));
	cr_assert(dash_host_ok("[::1]:8765", &v6, 8765));
	cr_assert(dash_host_ok("10.1.2.3:80", &lan, 80));
	/* DNS rebinding: the attacker's name, resolving to loopback */
	cr_assert_not(dash_host_ok("evil.example:8765", &lo, 8765));
	cr_assert_not(dash_host_ok("127.0.0.1:8766", &lo, 8765));
	cr_assert_not(dash_host_ok("127.0.0.1", &lo, 8765));
	cr_assert_not(dash_host_ok("127.0.0.1:8765.evil.example", &lo, 8765));
	cr_assert_not(dash_host_ok("localhost:80", &lan, 80), "localhost is not 10.1.2.3");
	cr_assert_not(dash_host_ok(NULL, &lo, 8765));
}

Test(dash_auth, a_wildcard_address_answers_to_the_machines_own_names_and_addresses)
{
	struct dash_names any = names_for("0.0.0.0");
	struct ifaddrs *list = NULL;
	char host[256], want[320];
	size_t addresses = 0;

	cr_assert_eq(gethostname(host, sizeof(host)), 0);
	snprintf(want, sizeof(want), "%s:8765", host);
	cr_assert(dash_host_ok(want, &any, 8765), "the host name %s", host);
	cr_assert(dash_host_ok("127.0.0.1:8765", &any, 8765));
	cr_assert(dash_host_ok("localhost:8765", &any, 8765));
	cr_assert_eq(getifaddrs(&list), 0);
	for (struct ifaddrs *i = list; i; i = i->ifa_next) {
		char text[64];

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
			continue;
		inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, text, sizeof(text));
		snprintf(want, sizeof(want), "%s:8765", text);
		cr_assert(dash_host_ok(want, &any, 8765), "the address %s", text);
		addresses++;
	}
	freeifaddrs(list);
	cr_assert_geq(addresses, 1);
	/* the wildcard is no address a browser goes to, and a stranger's name is still refused */
	cr_assert_not(dash_host_ok("0.0.0.0:8765", &any, 8765));
	cr_assert_not(dash_host_ok("evil.example:8765", &any, 8765));
	cr_assert(dash_origin_ok("http://127.0.0.1:8765", &any, 8765));
}

Test(dash_auth, origin_must_be_the_pages_own)
{
	struct dash_names lo = names_for("127.0.0.1");

	cr_assert(dash_origin_ok("http://127.0.0.1:8765", &lo, 8765));
	cr_assert(dash_origin_ok("http://localhost:8765", &lo, 8765));
	cr_assert_not(dash_origin_ok("http://evil.example", &lo, 8765));
	cr_assert_not(dash_origin_ok("https://127.0.0.1:8765", &lo, 8765));
	cr_assert_not(dash_origin_ok("http://127.0.0.1:8765/", &lo, 8765));
	cr_assert_not(dash_origin_ok("null", &lo, 8765));
	cr_assert_not(dash_origin_ok(NULL, &lo, 8765));
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
#define SESSION "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

/* A dashboard on 127.0.0.1:8765 whose code outstanding is TOKEN, with one session, SESSION. */
static struct dash_site route_site(void)
{
	static struct dash_names names;
	static struct dash_auth auth;

	memset(&names, 0, sizeof(names));
	dash_names_add(&names, "127.0.0.1");
	dash_names_add(&names, "localhost");
	memset(&auth, 0, sizeof(auth));
	snprintf(auth.code, sizeof(auth.code), "%s", TOKEN);
	snprintf(auth.sessions[0], sizeof(auth.sessions[0]), "%s", SESSION);
	auth.nsessions = 1;
	return (struct dash_site){ .names = &names, .port = 8765, .auth = &auth };
}

static struct dash_route route_of(bool post, const char *path, const char *code,
				  const char *origin, const char *cookie)
{
	struct dash_request req = { .post = post, .path = path, .code = code,
				    .host = "127.0.0.1:8765", .origin = origin, .cookie = cookie };
	struct dash_site site = route_site();
	struct dash_route r;

	dash_route(&req, &site, &r);
	return r;
}

Test(dash_route, only_the_visit_with_the_code_goes_without_a_session)
{
	const char *cookie = "a=1; " DASH_COOKIE "=" SESSION;
	struct dash_route r;

	cr_assert_eq(route_of(false, "/", TOKEN, NULL, NULL).kind, DASH_ROUTE_FIRST_VISIT);
	r = route_of(false, "/", TOKEN "0", NULL, NULL);
	cr_assert_eq(r.kind, DASH_ROUTE_REFUSE);
	cr_assert_str_eq(r.refusal, DASH_CODE_REFUSAL);
	/* The code itself is no session. */
	r = route_of(false, "/app.js", NULL, NULL, DASH_COOKIE "=" TOKEN);
	cr_assert_eq(r.kind, DASH_ROUTE_REFUSE);
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
	const char *cookie = DASH_COOKIE "=" SESSION, *origin = "http://127.0.0.1:8765";
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

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
	struct dash_server_opts o = { .address = "127.0.0.1", .code = TOKEN, .scope = "ml",
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

/* ---- the one-time code, and actions that do not hold the page up ---- */

/*
 * One HTTP exchange on a connection of its own: the answer's head and body
 * (by Content-Length) into out; its length.
 */
static size_t http_exchange(int port, const char *request, char *out, size_t size)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 15 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t got = 0;
	char *end;

	cr_assert_geq(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	out[0] = '\0';
	for (;;) {
		ssize_t n = read(fd, out + got, size - 1 - got);
		const char *cl;

		if (n <= 0)
			break;
		got += (size_t)n;
		out[got] = '\0';
		end = strstr(out, "\r\n\r\n");
		cl = strcasestr(out, "content-length:");
		if (end && (!cl || got >= (size_t)(end + 4 - out) + strtoul(cl + 15, NULL, 10)))
			break;
	}
	close(fd);
	return got;
}

struct code_seen {
	char code[DASH_TOKEN_LEN + 1];
	int count;
};

static void note_code(void *ctx, const char *code)
{
	struct code_seen *c = ctx;

	snprintf(c->code, sizeof(c->code), "%s", code);
	c->count++;
}

struct slow_action {
	int port;
	char session[DASH_TOKEN_LEN + 1];
	char answer[4096];
};

static void *post_cancel(void *arg)
{
	struct slow_action *a = arg;
	char req[512];

	snprintf(req, sizeof(req), "POST /api/jobs/ml/train/cancel HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
		 "Origin: http://127.0.0.1:%d\r\nCookie: " DASH_COOKIE "=%s\r\n"
		 "Content-Length: 0\r\n\r\n", a->port, a->port, a->session);
	http_exchange(a->port, req, a->answer, sizeof(a->answer));
	return NULL;
}

Test(dash_server, the_code_opens_one_browser_and_an_action_never_holds_the_page_up, .timeout = 60)
{
	struct dash_server_opts o = { .address = "127.0.0.1", .code = TOKEN, .scope = "ml" };
	struct code_seen seen = { .count = 0 };
	struct slow_action act = { 0 };
	struct kube_config *cfg = NULL;
	struct kube_http *http = NULL;
	struct httpd *api;
	struct store *jobs = store_new(NULL);
	struct running run = { 0 };
	char req[512], answer[16384], *cookie;
	pthread_t t, poster;
	int port;
	int64_t t0, took;

	cr_assert_eq(httpd_new(&api), 0);
	/* the API server takes 2.5 s over the delete */
	httpd_push(api, &(struct httpd_response){ .status = 200, .body = "{}", .delay_ms = 2500 });
	cr_assert_eq(kube_config_new(httpd_url(api), &cfg), 0);
	cr_assert_eq(kube_http_new(cfg, NULL, &http), 0);
	o.http = http;
	o.jobs = jobs;
	o.probe = fake_probe;
	o.on_code = note_code;
	o.code_ctx = &seen;
	atomic_store(&probe_ok, true);
	cr_assert_eq(dash_server_start(&o, &run.srv), 0);
	port = dash_server_port(run.srv);
	cr_assert_eq(pthread_create(&t, NULL, run_server, &run), 0);

	snprintf(req, sizeof(req), "GET /?code=" TOKEN " HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port);
	http_exchange(port, req, answer, sizeof(answer));
	cr_assert(!strncmp(answer, "HTTP/1.1 303", 12), "%s", answer);
	cookie = strcasestr(answer, "set-cookie: " DASH_COOKIE "=");
	cr_assert_not_null(cookie, "%s", answer);
	snprintf(act.session, sizeof(act.session), "%.64s", cookie + strlen("set-cookie: ") +
		 strlen(DASH_COOKIE) + 1);
	cr_assert_str_neq(act.session, TOKEN, "the session is not the printed code");
	cr_assert_eq(seen.count, 1, "a new code for the next browser");
	cr_assert_str_neq(seen.code, TOKEN);
	/* the printed code opened its browser: it opens no other */
	http_exchange(port, req, answer, sizeof(answer));
	cr_assert(!strncmp(answer, "HTTP/1.1 401", 12), "%s", answer);

	act.port = port;
	cr_assert_eq(pthread_create(&poster, NULL, post_cancel, &act), 0);
	cr_assert(httpd_wait_requests(api, 1, 5000), "the delete reached the API server");
	t0 = mono_ms();
	snprintf(req, sizeof(req), "GET /app.js HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
		 "Cookie: " DASH_COOKIE "=%s\r\n\r\n", port, act.session);
	http_exchange(port, req, answer, sizeof(answer));
	took = mono_ms() - t0;
	cr_assert(!strncmp(answer, "HTTP/1.1 200", 12), "%.200s", answer);
	cr_assert_lt(took, 1000, "the page waited %lld ms for another's action", (long long)took);
	pthread_join(poster, NULL);
	cr_assert(!strncmp(act.answer, "HTTP/1.1 200", 12), "%s", act.answer);
	cr_assert(strstr(act.answer, "\"ok\":true"), "%s", act.answer);
	cr_assert_str_eq(httpd_request_at(api, 0)->method, "DELETE");
	cr_assert_str_eq(httpd_request_at(api, 0)->target,
			 "/apis/cadre.dev/v1alpha1/namespaces/ml/trainingjobs/train");

	atomic_store(&run.stop, true);
	pthread_join(t, NULL);
	dash_server_free(run.srv);
	store_free(jobs);
	kube_http_free(http);
	kube_config_free(cfg);
	httpd_free(api);
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

/* The cluster page's topology: each level the GPU nodes carry, its domains and their room. */
Test(dash_topology, levels_the_nodes_carry_with_free_nodes_and_gpus_per_domain)
{
	json_t *levels = json_pack("[{s:s, s:s}, {s:s}]", "nodeLabel", "example.com/rack", "name",
				   "rack", "nodeLabel", "example.com/unused");
	json_t *nodes = json_pack("[{s:{s:s, s:{s:s}}}, {s:{s:s, s:{s:s}}}, {s:{s:s, s:{s:s}}}]",
				  "metadata", "name", "n1", "labels", "example.com/rack", "r2",
				  "metadata", "name", "n2", "labels", "example.com/rack", "r1",
				  "metadata", "name", "n3", "labels", "example.com/rack", "r1");
	json_t *rows = json_pack("[{s:s, s:b, s:i, s:i}, {s:s, s:b, s:i, s:i}, {s:s, s:b, s:i, s:i}]",
				 "name", "n1", "ready", 1, "allocatable", 8, "free", 8,
				 "name", "n2", "ready", 1, "allocatable", 8, "free", 2,
				 "name", "n3", "ready", 1, "allocatable", 8, "free", 8);
	json_t *want = json_pack("[{s:s, s:s, s:[{s:s, s:i, s:i, s:i, s:i}, {s:s, s:i, s:i, s:i, s:i}]}]",
				 "label", "example.com/rack", "name", "rack", "domains",
				 "value", "r1", "nodes", 2, "freeNodes", 1, "freeGpus", 10, "gpus", 16,
				 "value", "r2", "nodes", 1, "freeNodes", 1, "freeGpus", 8, "gpus", 8);
	json_t *got = dash_topology(levels, nodes, rows);
	char *text = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);

	cr_assert(json_equal(got, want), "%s", text);
	free(text);
	json_decref(got);
	json_decref(want);
	json_decref(levels);
	json_decref(nodes);
	json_decref(rows);
}
