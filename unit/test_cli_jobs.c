/*
 * cadre squeue, sacct, scancel and queue against a fake API server: the
 * exact lines they print, the requests they send, their options, and one
 * line with exit 1 when the API server cannot be reached or refuses.
 */
#include <criterion/criterion.h>

#include "cli/cli.h"
#include "unit/support/clirun.h"
#include "support/httpd.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JOBS "/apis/cadre.dev/v1alpha1/namespaces/ml/trainingjobs"
#define ALL_JOBS "/apis/cadre.dev/v1alpha1/trainingjobs"

#define COND(type, status, reason) \
	"{\"type\":\"" type "\",\"status\":\"" status "\",\"reason\":\"" reason "\"," \
	"\"message\":\"m\",\"lastTransitionTime\":\"2026-12-01T10:00:00Z\"}"

/* Three jobs: queued for capacity (alice), starting on two nodes (bob), one done. */
static const char job_list[] =
	"{\"kind\":\"TrainingJobList\",\"apiVersion\":\"cadre.dev/v1alpha1\","
	"\"metadata\":{\"resourceVersion\":\"10\"},\"items\":["
	"{\"metadata\":{\"name\":\"llama-pretrain\",\"namespace\":\"ml\",\"uid\":\"u1\","
	"\"creationTimestamp\":\"2026-12-01T10:00:00Z\","
	"\"annotations\":{\"cadre.dev/submitted-by\":\"alice\"}},"
	"\"spec\":{\"numNodes\":4,\"run\":\"x\",\"resources\":{\"accelerators\":\"H100:8\"}},"
	"\"status\":{\"phase\":\"Queued\",\"jobId\":\"4243\",\"conditions\":["
	COND("Admitted", "False", "InsufficientCapacity") "]}},"
	"{\"metadata\":{\"name\":\"eval\",\"namespace\":\"ml\",\"uid\":\"u2\","
	"\"creationTimestamp\":\"2026-12-01T10:00:00Z\","
	"\"annotations\":{\"cadre.dev/submitted-by\":\"bob\"}},"
	"\"spec\":{\"numNodes\":2,\"run\":\"x\",\"queue\":\"gpu\"},"
	"\"status\":{\"phase\":\"Starting\",\"jobId\":\"4242\",\"nodes\":["
	"{\"rank\":0,\"pod\":\"eval-0\",\"node\":\"kwok-1\"},"
	"{\"rank\":1,\"pod\":\"eval-1\",\"node\":\"kwok-2\"}]}},"
	"{\"metadata\":{\"name\":\"done\",\"namespace\":\"ml\",\"uid\":\"u3\","
	"\"creationTimestamp\":\"2026-12-01T09:00:00Z\"},"
	"\"spec\":{\"numNodes\":1,\"run\":\"x\"},"
	"\"status\":{\"phase\":\"Succeeded\",\"jobId\":\"4240\","
	"\"startTime\":\"2026-12-01T09:00:00Z\",\"completionTime\":\"2026-12-01T09:01:05Z\"}}]}";

/*
 * Preemption (docs/design.md 3.4): ml/urgent (partition gpu, a higher tier)
 * waits for its victims; scavenge was cancelled, batch requeued and waits again.
 */
#define PREEMPTION(mode, attempt) \
	"\"preemption\":{\"preemptor\":\"ml/urgent\",\"attempt\":" attempt ",\"time\":" \
	"\"2026-12-01T10:30:15Z\",\"graceSeconds\":45,\"mode\":\"" mode "\",\"tier\":10}"

static const char preemption_list[] =
	"{\"kind\":\"TrainingJobList\",\"apiVersion\":\"cadre.dev/v1alpha1\","
	"\"metadata\":{\"resourceVersion\":\"20\"},\"items\":["
	"{\"metadata\":{\"name\":\"scavenge\",\"namespace\":\"ml\",\"uid\":\"u4\","
	"\"creationTimestamp\":\"2026-12-01T10:00:00Z\","
	"\"annotations\":{\"cadre.dev/submitted-by\":\"alice\"}},"
	"\"spec\":{\"numNodes\":2,\"run\":\"x\",\"partition\":\"spot\"},"
	"\"status\":{\"phase\":\"Failed\",\"jobId\":\"4250\",\"partition\":\"spot\","
	"\"preemptions\":1,\"startTime\":\"2026-12-01T10:01:00Z\","
	"\"completionTime\":\"2026-12-01T10:31:00Z\","
	"\"message\":\"preempted by ml/urgent (tier 10 over tier 0)\"," PREEMPTION("Cancel", "0") ","
	"\"nodes\":[{\"rank\":0,\"pod\":\"scavenge-0\",\"node\":\"kwok-1\"},"
	"{\"rank\":1,\"pod\":\"scavenge-1\",\"node\":\"kwok-2\"}],\"conditions\":["
	COND("Failed", "True", "Preempted") "]}},"
	"{\"metadata\":{\"name\":\"batch\",\"namespace\":\"ml\",\"uid\":\"u5\","
	"\"creationTimestamp\":\"2026-12-01T10:00:00Z\","
	"\"annotations\":{\"cadre.dev/submitted-by\":\"bob\"}},"
	"\"spec\":{\"numNodes\":2,\"run\":\"x\",\"partition\":\"spot\"},"
	"\"status\":{\"phase\":\"Queued\",\"jobId\":\"4251\",\"partition\":\"spot\","
	"\"preemptions\":1," PREEMPTION("Requeue", "0") ",\"conditions\":["
	COND("Admitted", "False", "InsufficientCapacity") "]}},"
	"{\"metadata\":{\"name\":\"urgent\",\"namespace\":\"ml\",\"uid\":\"u6\","
	"\"creationTimestamp\":\"2026-12-01T10:30:00Z\","
	"\"annotations\":{\"cadre.dev/submitted-by\":\"carol\"}},"
	"\"spec\":{\"numNodes\":4,\"run\":\"x\",\"partition\":\"gpu\"},"
	"\"status\":{\"phase\":\"Queued\",\"jobId\":\"4252\",\"partition\":\"gpu\","
	"\"preempting\":[{\"job\":\"ml/scavenge\",\"attempt\":0},{\"job\":\"ml/batch\","
	"\"attempt\":0}],\"conditions\":[" COND("Admitted", "False", "Preempting") "]}}]}";

static struct fake {
	const char *list; /* the TrainingJobList answered; NULL: job_list */
	int list_status;  /* 0: answers the list */
	int shed;         /* the first lists answered 429 with Retry-After: 0 */
	int delete_status;
	char body[16384];
} fake;

static struct httpd *server;
static char dir[64], kubeconfig[128], *out, *err;

static void status_body(int code, const char *reason)
{
	snprintf(fake.body, sizeof(fake.body), "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		 "\"status\":\"Failure\",\"reason\":\"%s\",\"message\":\"%s\",\"code\":%d}",
		 reason, reason, code);
}

static void handler(void *ctx, const struct httpd_request *req, struct httpd_response *resp)
{
	(void)ctx;
	resp->status = 200;
	if (strstr(req->target, "/selfsubjectreviews")) {
		resp->status = 201;
		snprintf(fake.body, sizeof(fake.body),
			 "{\"status\":{\"userInfo\":{\"username\":\"bob\"}}}");
	} else if (!strcmp(req->method, "GET") && (!strncmp(req->target, JOBS "?", strlen(JOBS) + 1) ||
						   !strncmp(req->target, ALL_JOBS "?",
							    strlen(ALL_JOBS) + 1))) {
		resp->status = fake.list_status ? fake.list_status : 200;
		if (fake.shed > 0) {
			fake.shed--;
			resp->status = 429;
			resp->headers = "Retry-After: 0\r\n";
			status_body(429, "TooManyRequests");
		} else if (fake.list_status)
			status_body(fake.list_status, fake.list_status == 401 ? "Unauthorized" :
				    "Forbidden");
		else
			snprintf(fake.body, sizeof(fake.body), "%s", fake.list ? fake.list : job_list);
	} else if (!strcmp(req->method, "DELETE") && !strncmp(req->target, JOBS "/", strlen(JOBS) + 1)) {
		resp->status = fake.delete_status ? fake.delete_status : 200;
		if (fake.delete_status)
			status_body(fake.delete_status, "Forbidden");
		else
			snprintf(fake.body, sizeof(fake.body), "{\"kind\":\"Status\",\"status\":\"Success\"}");
	} else {
		resp->status = 404;
		status_body(404, "NotFound");
	}
	resp->body = fake.body;
}

static void setup(void)
{
	memset(&fake, 0, sizeof(fake));
	snprintf(dir, sizeof(dir), "/tmp/cadre-jobs-XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(kubeconfig, sizeof(kubeconfig), "%s/config", dir);
	cr_assert_eq(httpd_new(&server), 0);
	httpd_set_handler(server, handler, NULL);
	clirun_kubeconfig(kubeconfig, httpd_url(server));
	unsetenv("KUBECONFIG");
	setenv("TZ", "UTC", 1);
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

TestSuite(cli_jobs, .init = setup, .fini = teardown);

static int cadre(const char *line)
{
	return clirun(dir, line, kubeconfig, &out, &err);
}

static size_t count_requests(const char *method, const char *target)
{
	size_t n = 0;

	for (size_t i = 0; i < httpd_request_count(server); i++) {
		const struct httpd_request *r = httpd_request_at(server, i);

		n += !strcmp(r->method, method) && !strcmp(r->target, target);
	}
	return n;
}

static void assert_one_line(const char *text)
{
	cr_assert(strstr(err, text), "stderr: %s", err);
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
	cr_assert_str_eq(out, "");
}

Test(cli_jobs, squeue_prints_the_jobs_that_have_not_ended_in_slurms_columns)
{
	cr_assert_eq(cadre("squeue --kubeconfig KC"), 0, "%s", err);
	cr_assert_str_eq(err, "");
	cr_assert_str_eq(out,
		"             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
		"              4243         - llama-pr    alice PD       0:00      4 (Resources)\n"
		"              4242       gpu     eval      bob CF       0:00      2 eval-[0-1]\n");
	cr_assert_eq(count_requests("GET", JOBS "?limit=500"), 1);
}

/* squeue sorts as "P,t,-p": by partition ("-" before "gpu"), then state. */
/* An API server shedding load answers 429 with Retry-After; kubectl's client waits it out
 * ten times, and so does cadre's. */
Test(cli_jobs, squeue_waits_out_ten_429s_as_kubectl_does)
{
	fake.shed = 10;
	cr_assert_eq(cadre("--kubeconfig KC squeue -h"), 0, "%s", err);
	cr_assert_str_eq(err, "");
	cr_assert(strstr(out, "eval"));
	fake.shed = 11;
	cr_assert_neq(cadre("--kubeconfig KC squeue -h"), 0);
	cr_assert(strstr(err, "429") || strstr(err, "TooManyRequests") || strstr(err, "too many"),
		  "%s", err);
}

Test(cli_jobs, squeue_filters_by_user_id_name_and_state)
{
	cr_assert_eq(cadre("squeue --kubeconfig KC -h -u alice -o %i"), 0, "%s", err);
	cr_assert_str_eq(out, "4243\n");
	cr_assert_eq(cadre("squeue --kubeconfig KC -h -j 4242,4240 -o %i"), 0, "%s", err);
	cr_assert_str_eq(out, "4242\n");
	cr_assert_eq(cadre("squeue --kubeconfig KC -h -t all -o %i:%T"), 0, "%s", err);
	cr_assert_str_eq(out, "4243:PENDING\n4240:COMPLETED\n4242:CONFIGURING\n");
	cr_assert_eq(cadre("squeue --kubeconfig KC -ht CD --format=%j"), 0, "%s", err);
	cr_assert_str_eq(out, "done\n");
	cr_assert_eq(cadre("squeue --kubeconfig KC -h -n eval -o %i"), 0, "%s", err);
	cr_assert_str_eq(out, "4242\n");
}

Test(cli_jobs, squeue_me_asks_the_api_server_who_we_are)
{
	cr_assert_eq(cadre("squeue --kubeconfig KC --me -h -o %u"), 0, "%s", err);
	cr_assert_str_eq(out, "bob\n");
	cr_assert_eq(count_requests("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews"), 1);
}

Test(cli_jobs, squeue_all_namespaces_lists_across_them)
{
	cr_assert_eq(cadre("squeue --kubeconfig KC -A -h -o %i"), 0, "%s", err);
	cr_assert_eq(count_requests("GET", ALL_JOBS "?limit=500"), 1);
}

Test(cli_jobs, squeue_json_has_slurms_field_names)
{
	json_t *doc, *job;

	cr_assert_eq(cadre("squeue --kubeconfig KC --json -j 4242"), 0, "%s", err);
	cr_assert((doc = json_loads(out, 0, NULL)), "%s", out);
	cr_assert_eq(json_array_size(json_object_get(doc, "jobs")), 1);
	job = json_array_get(json_object_get(doc, "jobs"), 0);
	cr_assert_eq(json_integer_value(json_object_get(job, "job_id")), 4242);
	cr_assert_str_eq(json_string_value(json_object_get(job, "user_name")), "bob");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(job, "job_state"), 0)),
			 "CONFIGURING");
	cr_assert_str_eq(json_string_value(json_object_get(job, "nodes")), "eval-[0-1]");
	json_decref(doc);
}

Test(cli_jobs, squeue_refuses_an_unknown_format_field_and_flag)
{
	cr_assert_eq(cadre("squeue --kubeconfig KC -o %i|%Z"), CLI_EXIT_USAGE);
	assert_one_line("cadre squeue: --format: unknown field at \"%Z\"");
	cr_assert_eq(cadre("squeue --kubeconfig KC --bogus"), CLI_EXIT_USAGE);
	assert_one_line("cadre squeue: unknown flag: --bogus");
	cr_assert_eq(cadre("squeue --kubeconfig KC -u"), CLI_EXIT_USAGE);
	assert_one_line("cadre squeue: flag needs an argument: -u");
	cr_assert_eq(cadre("squeue --kubeconfig KC -l -o %i"), CLI_EXIT_USAGE);
	assert_one_line("cadre squeue: -o/--format and -l/--long are mutually exclusive");
	cr_assert_eq(cadre("squeue --kubeconfig KC -t PD,soon"), CLI_EXIT_USAGE);
	assert_one_line("cadre squeue: --states: invalid job state \"soon\"");
	cr_assert_eq(cadre("sacct --kubeconfig KC -s later"), CLI_EXIT_USAGE);
	assert_one_line("cadre sacct: --state: invalid job state \"later\"");
	cr_assert_eq(cadre("squeue --kubeconfig KC 4242"), CLI_EXIT_USAGE);
	assert_one_line("cadre squeue: unexpected argument \"4242\"");
	cr_assert_eq(httpd_request_count(server), 0);
}

Test(cli_jobs, sacct_parsable2_is_what_submitit_reads)
{
	cr_assert_eq(cadre("sacct --kubeconfig KC -o JobID,State --parsable2 -j 4240"), 0, "%s",
		     err);
	cr_assert_str_eq(out, "JobID|State\n4240|COMPLETED\n");
}

Test(cli_jobs, sacct_prints_every_job_with_slurms_default_fields)
{
	cr_assert_eq(cadre("sacct --kubeconfig KC"), 0, "%s", err);
	cr_assert_str_eq(out,
		"JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
		"------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
		"4240               done          -         ml          0  COMPLETED      0:0 \n"
		"4242               eval        gpu         ml          0 CONFIGURI+      0:0 \n"
		"4243         llama-pre+          -         ml          0    PENDING      0:0 \n");
}

Test(cli_jobs, sacct_formats_fields_and_widths_and_filters_states)
{
	cr_assert_eq(cadre("sacct --kubeconfig KC -n -p -s CD -o jobid,elapsed,state%4"), 0, "%s",
		     err);
	cr_assert_str_eq(out, "4240|00:01:05|COMPLETED|\n");
	cr_assert_eq(cadre("sacct --kubeconfig KC -n -s COMPLETED -o jobid%6,state%4"), 0, "%s",
		     err);
	cr_assert_str_eq(out, "4240   COM+ \n");
	cr_assert_eq(cadre("sacct --kubeconfig KC -o JobID,Nope"), CLI_EXIT_USAGE);
	assert_one_line("cadre sacct: --format: unknown field \"Nope\"");
}

/*
 * squeue lists a preempted job only when asked for it (-t PR, -t all): it
 * has ended. Its victims' preemptor waits for Resources, as slurmctld says
 * while the nodes it preempts are still busy.
 */
Test(cli_jobs, squeue_shows_preempted_jobs_and_the_preemptor_waiting_for_them)
{
	fake.list = preemption_list;
	cr_assert_eq(cadre("squeue --kubeconfig KC -t PR"), 0, "%s", err);
	cr_assert_str_eq(out,
		"             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
		"              4250      spot scavenge    alice PR      30:00      2 scavenge-[0-1]\n");
	cr_assert_eq(cadre("squeue --kubeconfig KC -h -t preempted,pd -o %.18i|%9P|%.8T|%r"), 0,
		     "%s", err);
	cr_assert_str_eq(out, "              4252|gpu      | PENDING|Resources\n"
			      "              4251|spot     | PENDING|Resources\n"
			      "              4250|spot     |PREEMPTE|None\n");
	cr_assert_eq(cadre("squeue --kubeconfig KC -h -o %i"), 0, "%s", err);
	cr_assert_str_eq(out, "4252\n4251\n");
}

Test(cli_jobs, sacct_shows_a_preempted_job_as_preempted_and_filters_it_by_state)
{
	fake.list = preemption_list;
	cr_assert_eq(cadre("sacct --kubeconfig KC"), 0, "%s", err);
	cr_assert_str_eq(out,
		"JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
		"------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
		"4250           scavenge       spot         ml          0  PREEMPTED      0:0 \n"
		"4251              batch       spot         ml          0    PENDING      0:0 \n"
		"4252             urgent        gpu         ml          0    PENDING      0:0 \n");
	cr_assert_eq(cadre("sacct --kubeconfig KC -s PR -P -o JobID,State,Elapsed"), 0, "%s", err);
	cr_assert_str_eq(out, "JobID|State|Elapsed\n4250|PREEMPTED|00:30:00\n");
	cr_assert_eq(cadre("sacct --kubeconfig KC -n -s preempted -o jobid,state"), 0, "%s", err);
	cr_assert_str_eq(out, "4250          PREEMPTED \n");
}

Test(cli_jobs, scontrol_show_job_of_a_preempted_job_says_when)
{
	fake.list = preemption_list;
	cr_assert_eq(cadre("scontrol --kubeconfig KC show job 4250"), 0, "%s", err);
	cr_assert(strstr(out, "\n   JobState=PREEMPTED Reason=None Dependency=(null)\n"
			      "   Requeue=1 Restarts=1 BatchFlag=1 Reboot=0 ExitCode=0:0\n"), "%s", out);
	cr_assert(strstr(out, "\n   StartTime=2026-12-01T10:01:00 EndTime=2026-12-01T10:31:00 "
			      "Deadline=N/A\n   PreemptEligibleTime=2026-12-01T10:01:00 "
			      "PreemptTime=2026-12-01T10:30:15\n   SuspendTime=None "), "%s", out);
	cr_assert_eq(cadre("scontrol --kubeconfig KC show job batch"), 0, "%s", err);
	cr_assert(strstr(out, "\n   JobState=PENDING Reason=Resources Dependency=(null)\n"
			      "   Requeue=1 Restarts=1 BatchFlag=1 "), "%s", out);
	cr_assert_null(strstr(out, "Preempt"), "%s", out);
}

Test(cli_jobs, scancel_deletes_by_job_id_and_by_name)
{
	cr_assert_eq(cadre("scancel --kubeconfig KC 4243 eval"), 0, "%s", err);
	cr_assert_str_eq(out, "");
	cr_assert_str_eq(err, "");
	cr_assert_eq(count_requests("DELETE", JOBS "/llama-pretrain"), 1);
	cr_assert_eq(count_requests("DELETE", JOBS "/eval"), 1);
}

/* scancel -u USER, -t STATE with no job named: every job of those users in those states. */
Test(cli_jobs, scancel_by_user_and_state_cancels_those_jobs_only)
{
	cr_assert_eq(cadre("scancel --kubeconfig KC -u bob"), 0, "%s", err);
	cr_assert_eq(count_requests("DELETE", JOBS "/eval"), 1);
	cr_assert_eq(count_requests("DELETE", JOBS "/llama-pretrain"), 0);
	cr_assert_eq(cadre("scancel --kubeconfig KC -t PD"), 0, "%s", err);
	cr_assert_eq(count_requests("DELETE", JOBS "/llama-pretrain"), 1);
	cr_assert_eq(count_requests("DELETE", JOBS "/eval"), 1, "eval is not pending");
	cr_assert_eq(cadre("scancel --kubeconfig KC -u alice -t R"), 0, "%s", err);
	cr_assert_eq(count_requests("DELETE", JOBS "/llama-pretrain"), 1, "alice has no running job");
	cr_assert_eq(count_requests("DELETE", JOBS "/done"), 0, "an ended job is never cancelled");
}

Test(cli_jobs, scancel_of_an_unknown_id_is_an_error_and_the_rest_are_cancelled)
{
	cr_assert_eq(cadre("scancel --kubeconfig KC 9999 4242"), CLI_EXIT_FAILED);
	cr_assert_str_eq(err, "cadre scancel: error: Kill job error on job id 9999: Invalid job "
			      "id specified\n");
	cr_assert_eq(count_requests("DELETE", JOBS "/eval"), 1);
}

Test(cli_jobs, scancel_needs_a_job)
{
	cr_assert_eq(cadre("scancel --kubeconfig KC"), CLI_EXIT_USAGE);
	assert_one_line("cadre scancel: error: No job identification provided");
}

Test(cli_jobs, scancel_forbidden_is_one_line)
{
	fake.delete_status = 403;
	cr_assert_eq(cadre("scancel --kubeconfig KC eval"), CLI_EXIT_FAILED);
	assert_one_line("cadre scancel: delete trainingjob \"eval\": not allowed (403 Forbidden)");
}

Test(cli_jobs, queue_prints_skypilots_columns_newest_first)
{
	char *second;

	cr_assert_eq(cadre("queue --kubeconfig KC"), 0, "%s", err);
	cr_assert(!strncmp(out, "ID    NAME            RESOURCES   SUBMITTED", 42), "%s", out);
	cr_assert(strstr(out, "TOT. DURATION  JOB DURATION  #RECOVERIES  STATUS\n"), "%s", out);
	second = strchr(out, '\n') + 1;
	cr_assert(!strncmp(second, "4243  llama-pretrain  4x[H100:8]  ", 34), "%s", out);
	cr_assert(strstr(out, "-             0            PENDING\n"), "%s", out);
	cr_assert(strstr(out, "\n4240  done            1x[CPU]     "), "%s", out);
	cr_assert(strstr(out, "1m 5s         0            SUCCEEDED\n"), "%s", out);
}

Test(cli_jobs, every_command_has_help_with_an_example)
{
	static const char *const cmds[] = { "squeue", "sacct", "scancel", "queue", "status" };
	char line[64];

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(line, sizeof(line), "%s --help", cmds[i]);
		cr_assert_eq(cadre(line), 0, "%s", line);
		cr_assert(strstr(out, "Usage: cadre "), "%s", out);
		cr_assert(strstr(out, "Examples:\n  cadre "), "%s", out);
		snprintf(line, sizeof(line), "help %s", cmds[i]);
		cr_assert_eq(cadre(line), 0, "%s", line);
		cr_assert(strstr(out, "Examples:\n  cadre "), "%s", out);
	}
	cr_assert_eq(httpd_request_count(server), 0);
}

Test(cli_jobs, unauthorized_is_one_line_and_exit_one)
{
	static const char *const cmds[] = { "squeue", "sacct", "scancel 4242", "queue",
					    "status 4242" };
	char line[64];

	fake.list_status = 401;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(line, sizeof(line), "%s --kubeconfig KC", cmds[i]);
		cr_assert_eq(cadre(line), CLI_EXIT_FAILED, "%s", line);
		assert_one_line("does not accept these credentials (401 Unauthorized)");
	}
	fake.list_status = 403;
	cr_assert_eq(cadre("squeue --kubeconfig KC"), CLI_EXIT_FAILED);
	assert_one_line("cadre squeue: list trainingjobs in namespace \"ml\": not allowed (403 "
			"Forbidden)");
}

Test(cli_jobs, an_unreachable_server_is_one_line_and_exit_one)
{
	static const char *const cmds[] = { "squeue", "sacct", "scancel 4242", "queue",
					    "status 4242" };
	char line[64];

	httpd_free(server);
	server = NULL;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(line, sizeof(line), "%s --kubeconfig KC", cmds[i]);
		cr_assert_eq(cadre(line), CLI_EXIT_FAILED, "%s", line);
		assert_one_line(": cannot reach the API server http://127.0.0.1:");
	}
}

Test(cli_jobs, status_shows_one_job_by_id_or_name)
{
	static const char head[] = "Job:           eval (job id 4242)\nNamespace:     ml\n"
				   "User:          bob\nState:         CONFIGURING, phase Starting\n";

	cr_assert_eq(cadre("status --kubeconfig KC 4242"), 0, "%s", err);
	cr_assert(!strncmp(out, head, strlen(head)), "%s", out);
	cr_assert(strstr(out, "\nHosts:         eval-[0-1]\n"), "%s", out);
	cr_assert(strstr(out, "\n0     eval-0  kwok-1  -   -\n"), "%s", out);
	cr_assert_eq(cadre("status --kubeconfig KC llama-pretrain"), 0, "%s", err);
	cr_assert(strstr(out, "\nState:         PENDING (Resources), phase Queued\n"), "%s", out);
	cr_assert_eq(cadre("status --kubeconfig KC 9999"), CLI_EXIT_FAILED);
	assert_one_line("cadre status: no job 9999 in ml");
	cr_assert_eq(cadre("status --kubeconfig KC 4242 4243"), CLI_EXIT_USAGE);
	assert_one_line("cadre status: give one job id or name");
	/* No job: the clusters of cadre launch -c, as sky status; none here. */
	cr_assert_eq(cadre("status --kubeconfig KC"), 0, "%s", err);
	cr_assert_str_eq(out, "Clusters\nNo existing clusters.\n");
}
