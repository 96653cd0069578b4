/*
 * cadre logs, cadre exec and scancel --signal against a fake API server:
 * the merged, rank-prefixed lines, the requests they send, and one line
 * with the right exit code when something is missing or refused.
 */
#include <criterion/criterion.h>

#include "cli/cli.h"
#include "support/httpd.h"
#include "unit/support/clirun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JOBS "/apis/cadre.dev/v1alpha1/namespaces/ml/trainingjobs"
#define PODS "/api/v1/namespaces/ml/pods"

static const char job_list[] =
	"{\"kind\":\"TrainingJobList\",\"metadata\":{},\"items\":["
	"{\"metadata\":{\"name\":\"eval\",\"namespace\":\"ml\",\"uid\":\"u2\","
	"\"creationTimestamp\":\"2026-12-01T10:00:00Z\"},"
	"\"spec\":{\"numNodes\":2,\"run\":\"x\"},"
	"\"status\":{\"phase\":\"Running\",\"jobId\":\"4242\"}}]}";

#define POD(name, rank, attempt, phase) \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ml\",\"labels\":{" \
	"\"cadre.dev/job-name\":\"eval\",\"cadre.dev/node-rank\":\"" rank "\"," \
	"\"cadre.dev/restart-attempt\":\"" attempt "\"}},\"status\":{\"phase\":\"" phase "\"}}"

/* A pod with its uid, as the API server lists it. */
#define POD_UID(name, uid, rank, attempt, phase) \
	"{\"metadata\":{\"name\":\"" name "\",\"uid\":\"" uid "\",\"namespace\":\"ml\",\"labels\":{" \
	"\"cadre.dev/job-name\":\"eval\",\"cadre.dev/node-rank\":\"" rank "\"," \
	"\"cadre.dev/restart-attempt\":\"" attempt "\"}},\"status\":{\"phase\":\"" phase "\"}}"

static struct {
	const char *pods;  /* the items of the pod list */
	const char *now_uid;  /* the uid GET pods/eval-1-1 answers: who holds the name now */
	int pod_get_status;   /* 0: GET pods/NAME is answered; else this status */
	int log_status;    /* 0: the logs are answered */
	bool cut;          /* rank 1's first follow stream ends after its lines */
	int follows;       /* follow streams of rank 1 asked for */
	int job_reads;     /* reads of the job while following */
} fake;

static struct httpd *server;
static char dir[64], kubeconfig[128], *out, *err;

static void handler(void *ctx, const struct httpd_request *req, struct httpd_response *resp)
{
	/* ranks' logs are read at once, each on its connection's thread: one body each,
	 * copied by httpd when this returns */
	static _Thread_local char body[8192];

	(void)ctx;
	resp->status = 200;
	static const struct httpd_chunk rank0[] = {
		{ "2026-12-01T10:00:00.5Z rank zero ", 0, 0 }, { "follows\n", 0, 50 } };
	static const struct httpd_chunk rank1[] = {
		{ "2026-12-01T10:00:01Z rank one follows\n", 0, 0 } };
	/* what a kubelet sends again from sinceTime=2026-12-01T10:00:01Z, then a new line */
	static const struct httpd_chunk rank1_again[] = {
		{ "2026-12-01T10:00:01Z rank one follows\n2026-12-01T10:00:03Z rank one goes on\n",
		  0, 0 } };
	const char *phase = "Succeeded";

	if (!strncmp(req->target, JOBS "?", strlen(JOBS) + 1)) {
		snprintf(body, sizeof(body), "%s", job_list);
	} else if (!strcmp(req->target, JOBS "/eval")) {
		/* read again while following: the job has ended (once rank 1 is back, if cut;
		 * a few seconds at most) */
		if (fake.cut && __atomic_load_n(&fake.follows, __ATOMIC_SEQ_CST) < 2 &&
		    __atomic_add_fetch(&fake.job_reads, 1, __ATOMIC_SEQ_CST) < 4)
			phase = "Running";
		snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"eval\","
			 "\"namespace\":\"ml\"},\"status\":{\"phase\":\"%s\"}}", phase);
	} else if (strstr(req->target, "/log?") && strstr(req->target, "follow=true")) {
		/* a stream that never ends on its own, as kwok's, unless cut */
		bool zero = strstr(req->target, "/eval-1-0/") != NULL;
		int n = zero ? 0 : __atomic_add_fetch(&fake.follows, 1, __ATOMIC_SEQ_CST);

		resp->chunks = zero ? rank0 : n > 1 ? rank1_again : rank1;
		resp->nchunks = zero ? 2 : 1;
		resp->hold_ms = fake.cut && n == 1 ? 0 : -1;
		resp->headers = "Content-Type: text/plain\r\n";
		return;
	} else if ((!strcmp(req->target, PODS "/eval-1-1") || !strcmp(req->target, PODS "/eval-1-0")) &&
		   fake.pod_get_status) {
		resp->status = fake.pod_get_status;
		snprintf(body, sizeof(body), "{\"kind\":\"Status\",\"status\":\"Failure\","
			 "\"reason\":\"Forbidden\",\"message\":\"cannot get pods\",\"code\":403}");
	} else if (!strcmp(req->target, PODS "/eval-1-1") || !strcmp(req->target, PODS "/eval-1-0")) {
		snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\",\"uid\":\"%s\"}}",
			 req->target + strlen(PODS) + 1,
			 fake.now_uid && strstr(req->target, "eval-1-1") ? fake.now_uid
			 : strstr(req->target, "eval-1-1") ? "u11" : "u10");
	} else if (!strncmp(req->target, PODS "?", strlen(PODS) + 1)) {
		snprintf(body, sizeof(body), "{\"kind\":\"PodList\",\"metadata\":{},"
			 "\"items\":[%s]}", fake.pods);
	} else if (strstr(req->target, "/log?") && fake.log_status) {
		resp->status = fake.log_status;
		snprintf(body, sizeof(body), "{\"kind\":\"Status\",\"status\":\"Failure\","
			 "\"reason\":\"Forbidden\",\"message\":\"pods \\\"eval-1-0\\\" is forbidden\","
			 "\"code\":403}");
	} else if (!strncmp(req->target, PODS "/eval-1-0/log?", strlen(PODS) + 14)) {
		snprintf(body, sizeof(body),
			 "2026-12-01T10:00:00.1Z rank zero starts\n"
			 "2026-12-01T10:00:02Z step 2\n");
	} else if (!strncmp(req->target, PODS "/eval-1-1/log?", strlen(PODS) + 14)) {
		snprintf(body, sizeof(body), "2026-12-01T10:00:01.5Z rank one starts\n");
	} else {
		resp->status = 404;
		snprintf(body, sizeof(body), "{\"kind\":\"Status\",\"status\":\"Failure\","
			 "\"reason\":\"NotFound\",\"message\":\"not found\",\"code\":404}");
	}
	resp->body = body;
}

static void setup(void)
{
	memset(&fake, 0, sizeof(fake));
	fake.pods = POD("eval-0-0", "0", "0", "Failed") "," POD("eval-0-1", "1", "0", "Failed")
		"," POD("eval-1-1", "1", "1", "Running") "," POD("eval-1-0", "0", "1", "Running");
	snprintf(dir, sizeof(dir), "/tmp/cadre-logs-XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(kubeconfig, sizeof(kubeconfig), "%s/config", dir);
	cr_assert_eq(httpd_new(&server), 0);
	httpd_set_handler(server, handler, NULL);
	clirun_kubeconfig(kubeconfig, httpd_url(server));
	unsetenv("KUBECONFIG");
}

static void teardown(void)
{
	httpd_free(server);
	server = NULL;
	unlink(kubeconfig);
	rmdir(dir);
	free(out);
	free(err);
	out = err = NULL;
}

TestSuite(cli_logs, .init = setup, .fini = teardown);

static int cadre(const char *line)
{
	return clirun(dir, line, kubeconfig, &out, &err);
}

static bool requested(const char *target)
{
	for (size_t i = 0; i < httpd_request_count(server); i++)
		if (!strcmp(httpd_request_at(server, i)->target, target))
			return true;
	return false;
}

Test(cli_logs, logs_merges_the_latest_attempts_ranks_in_time_order_each_line_prefixed)
{
	cr_assert_eq(cadre("--kubeconfig KC logs 4242"), 0, "%s", err);
	cr_assert_str_eq(out, "0: rank zero starts\n1: rank one starts\n0: step 2\n");
	cr_assert_str_eq(err, "");
	cr_assert(requested(PODS "/eval-1-0/log?container=main&timestamps=true"));
	cr_assert(requested(PODS "?labelSelector=cadre.dev%2Fjob-name%3Deval&limit=500") ||
		  requested(PODS "?limit=500&labelSelector=cadre.dev%2Fjob-name%3Deval"),
		  "the pods are chosen by the job's label");
}

Test(cli_logs, follow_prints_whole_lines_as_they_come_and_ends_when_the_job_has_ended)
{
	cr_assert_eq(cadre("--kubeconfig KC logs -f eval"), 0, "%s", err);
	cr_assert(strstr(out, "0: rank zero follows\n"), "%s", out);
	cr_assert(strstr(out, "1: rank one follows\n"), "%s", out);
	cr_assert_eq(strlen(out), strlen("0: rank zero follows\n1: rank one follows\n"));
	cr_assert(requested(PODS "/eval-1-1/log?container=main&follow=true&timestamps=true"));
	cr_assert(!requested(PODS "/eval-0-1/log?container=main&follow=true&timestamps=true"),
		  "the old attempt's pods are not followed");
}

Test(cli_logs, follow_opens_a_stream_that_ended_again_where_it_stopped)
{
	fake.cut = true;
	cr_assert_eq(cadre("--kubeconfig KC logs -f eval"), 0, "%s", err);
	cr_assert(requested(PODS "/eval-1-1/log?container=main&follow=true&timestamps=true"
			    "&sinceTime=2026-12-01T10%3A00%3A01Z"), "reopened from its last line");
	cr_assert(strstr(out, "1: rank one goes on\n"), "%s", out);
	cr_assert_eq(strlen(out), strlen("0: rank zero follows\n1: rank one follows\n"
					 "1: rank one goes on\n"), "no line twice: %s", out);
	cr_assert_str_eq(err, "cadre logs: rank 1 (pod eval-1-1): the server ended its log stream "
			 "while the pod runs; reading on from 2026-12-01T10:00:01Z\n");
}

Test(cli_logs, logs_asks_for_the_tail_since_and_limit_of_the_ranks_chosen_and_keeps_times)
{
	cr_assert_eq(cadre("--kubeconfig KC logs 4242 --rank 1-3 --tail 5 --since 10m "
			   "--limit-bytes 100 --timestamps"), 0, "%s", err);
	cr_assert_str_eq(out, "1: 2026-12-01T10:00:01.5Z rank one starts\n");
	cr_assert(requested(PODS "/eval-1-1/log?container=main&timestamps=true&tailLines=5"
			    "&sinceSeconds=600&limitBytes=100"));
	cr_assert(!requested(PODS "/eval-1-0/log?container=main&timestamps=true&tailLines=5"
			     "&sinceSeconds=600&limitBytes=100"), "rank 0 is not asked for");
}

Test(cli_logs, follow_prints_nothing_of_a_pod_that_took_the_name_it_followed)
{
	/* the list shows attempt 1's pods; by the time rank 1's stream answers, its name is another pod's */
	fake.pods = POD_UID("eval-1-1", "u11", "1", "1", "Running") ","
		    POD_UID("eval-1-0", "u10", "0", "1", "Running");
	fake.now_uid = "u-next";
	cr_assert_eq(cadre("--kubeconfig KC logs -f eval"), 0, "%s", err);
	cr_assert_str_eq(out, "0: rank zero follows\n");
	cr_assert(requested(PODS "/eval-1-1"), "the name's pod is asked for once the stream answers");
	cr_assert_eq(fake.follows, 1, "nor is that stream opened again");
}

Test(cli_logs, follow_prints_a_pod_it_may_not_get_as_before_the_check)
{
	/* a role with list and pods/log but not get on pods: the check cannot tell, the lines come */
	fake.pods = POD_UID("eval-1-1", "u11", "1", "1", "Running") ","
		    POD_UID("eval-1-0", "u10", "0", "1", "Running");
	fake.pod_get_status = 403;
	cr_assert_eq(cadre("--kubeconfig KC logs -f eval"), 0, "%s", err);
	cr_assert(strstr(out, "1: rank one follows\n"), "%s", out);
	cr_assert(strstr(out, "0: rank zero follows\n"), "%s", out);
	cr_assert_str_eq(err, "");
}

Test(cli_logs, logs_of_one_rank_by_name)
{
	cr_assert_eq(cadre("--kubeconfig KC logs eval --rank 1"), 0, "%s", err);
	cr_assert_str_eq(out, "1: rank one starts\n");
}

Test(cli_logs, logs_of_an_attempt_without_pods_is_one_line_and_exit_1)
{
	cr_assert_eq(cadre("--kubeconfig KC logs eval --attempt 7"), 1);
	cr_assert_str_eq(err, "cadre logs: job \"eval\" has no pods of that rank and attempt "
			 "(state Running)\n");
	cr_assert_str_eq(out, "");
}

Test(cli_logs, a_refused_log_is_one_line_per_rank_and_exit_1)
{
	fake.log_status = 403;
	cr_assert_eq(cadre("--kubeconfig KC logs eval --rank 0"), 1);
	cr_assert_str_eq(err, "cadre logs: the log of rank 0 (pod eval-1-0): not allowed (403 "
			 "Forbidden): pods \"eval-1-0\" is forbidden\n");
}

Test(cli_logs, an_unknown_job_is_one_line_and_exit_1)
{
	cr_assert_eq(cadre("--kubeconfig KC logs nope"), 1);
	cr_assert_str_eq(err, "cadre logs: no job \"nope\" in namespace \"ml\"\n");
}

Test(cli_logs, exec_without_a_running_rank_is_one_line_and_runs_nothing)
{
	fake.pods = POD("eval-0-0", "0", "0", "Pending");
	cr_assert_eq(cadre("--kubeconfig KC exec eval -- hostname"), 1);
	cr_assert_str_eq(err, "cadre exec: job \"eval\" has no running rank (state Running)\n");
	for (size_t i = 0; i < httpd_request_count(server); i++)
		cr_assert_null(strstr(httpd_request_at(server, i)->target, "/exec"));
}

Test(cli_logs, scancel_signal_refuses_an_unknown_signal_before_any_request)
{
	cr_assert_eq(cadre("--kubeconfig KC scancel --signal=BOGUS 4242"), 2);
	cr_assert_str_eq(err, "cadre scancel: error: Invalid job signal: BOGUS\n");
	cr_assert_eq(httpd_request_count(server), 0);
}

Test(cli_logs, help_names_every_flag_and_an_example)
{
	cr_assert_eq(cadre("logs --help"), 0);
	cr_assert(strstr(out, "--follow") && strstr(out, "--attempt") && strstr(out, "Examples:"));
	cr_assert_eq(cadre("exec --help"), 0);
	cr_assert(strstr(out, "-- COMMAND") && strstr(out, "--tty") && strstr(out, "Examples:"));
	cr_assert_eq(cadre("scancel --help"), 0);
	cr_assert(strstr(out, "--signal SIG"));
}
