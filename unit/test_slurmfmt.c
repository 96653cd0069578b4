/*
 * cli/slurmfmt: a TrainingJob's line as squeue, sacct and sky jobs queue
 * print it, compared byte for byte.
 */
#include <criterion/criterion.h>

#include "api/fielderr.h"
#include "api/trainingjob.h"
#include "base/buf.h"
#include "base/err.h"
#include "cli/jobs.h"
#include "cli/slurmfmt.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 2026-12-01T10:00:00Z */
#define T0 1796119200LL

static struct trainingjob tj;
static struct buf b;

static void setup(void)
{
	tj_init(&tj);
	buf_init(&b, 1 << 20);
	setenv("TZ", "UTC", 1);
	tzset();
}

static void teardown(void)
{
	tj_release(&tj);
	buf_release(&b);
}

TestSuite(slurmfmt, .init = setup, .fini = teardown);

/* tj from a TrainingJob named name in namespace ml with extra spec and status JSON. */
static void job(const char *name, const char *spec, const char *status, const char *annotations)
{
	char text[4096];
	struct field_errors errs;
	json_t *obj;

	snprintf(text, sizeof(text),
		 "{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		 "\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\",\"uid\":\"u1\","
		 "\"creationTimestamp\":\"2026-12-01T10:00:00Z\"%s%s%s},"
		 "\"spec\":{\"numNodes\":2,\"run\":\"true\"%s%s},\"status\":{%s}}",
		 name, annotations ? ",\"annotations\":{" : "", annotations ? annotations : "",
		 annotations ? "}" : "", spec ? "," : "", spec ? spec : "", status ? status : "");
	obj = json_loads(text, 0, NULL);
	cr_assert(obj, "json: %s", text);
	tj_release(&tj);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(obj, &tj, &errs), 0, "%s", text);
	field_errors_release(&errs);
	json_decref(obj);
}

static const char *time_used(int64_t s)
{
	static char out[32];

	slurm_time_used(s, out);
	return out;
}

static const char *elapsed(int64_t s)
{
	static char out[32];

	slurm_elapsed(s, out);
	return out;
}

Test(slurmfmt, squeue_time_drops_days_and_hours_until_needed)
{
	cr_assert_str_eq(time_used(0), "0:00");
	cr_assert_str_eq(time_used(59), "0:59");
	cr_assert_str_eq(time_used(60), "1:00");
	cr_assert_str_eq(time_used(3599), "59:59");
	cr_assert_str_eq(time_used(3600), "1:00:00");
	cr_assert_str_eq(time_used(86399), "23:59:59");
	cr_assert_str_eq(time_used(86400), "1-00:00:00");
	cr_assert_str_eq(time_used(93784), "1-02:03:04");
	cr_assert_str_eq(time_used(365 * 86400), "365-00:00:00");
	cr_assert_str_eq(time_used(365 * 86400 + 1), "INVALID");
	cr_assert_str_eq(time_used(-5), "INVALID");
}

Test(slurmfmt, sacct_elapsed_is_zero_padded_hours_minutes_seconds)
{
	cr_assert_str_eq(elapsed(0), "00:00:00");
	cr_assert_str_eq(elapsed(59), "00:00:59");
	cr_assert_str_eq(elapsed(3600), "01:00:00");
	cr_assert_str_eq(elapsed(86400), "1-00:00:00");
	cr_assert_str_eq(elapsed(93784), "1-02:03:04");
}

Test(slurmfmt, squeue_field_cuts_to_the_width_keeping_the_start)
{
	cr_assert_eq(slurm_squeue_field(&b, "llama-pretrain", 8, true), 0);
	cr_assert_str_eq(buf_str(&b), "llama-pr");
	buf_reset(&b);
	slurm_squeue_field(&b, "job2", 8, true);
	cr_assert_str_eq(buf_str(&b), "    job2");
	buf_reset(&b);
	slurm_squeue_field(&b, "job2", 8, false);
	cr_assert_str_eq(buf_str(&b), "job2    ");
	buf_reset(&b);
	slurm_squeue_field(&b, "(Resources)", -1, false);
	cr_assert_str_eq(buf_str(&b), "(Resources)");
}

Test(slurmfmt, squeue_default_header_is_slurms_byte_for_byte)
{
	cr_assert_eq(slurm_squeue_header(SLURM_SQUEUE_FORMAT, &b), 0);
	cr_assert_str_eq(buf_str(&b), "             JOBID PARTITION     NAME     USER ST       "
				      "TIME  NODES NODELIST(REASON)");
}

Test(slurmfmt, a_queued_job_shows_its_reason_in_parentheses)
{
	job("job2", NULL, "\"phase\":\"Queued\",\"jobId\":\"12346\",\"conditions\":[{\"type\":"
	    "\"Admitted\",\"status\":\"False\",\"reason\":\"InsufficientCapacity\","
	    "\"message\":\"m\",\"lastTransitionTime\":\"2026-12-01T10:00:00Z\"}]",
	    "\"cadre.dev/submitted-by\":\"dave\"");
	cr_assert_eq(slurm_squeue_row(SLURM_SQUEUE_FORMAT, &tj, T0 + 100, &b), 0);
	cr_assert_str_eq(buf_str(&b), "             12346         -     job2     dave PD       "
				      "0:00      2 (Resources)");
}

Test(slurmfmt, a_running_job_shows_its_time_and_compressed_host_names)
{
	job("llama-pretrain", "\"queue\":\"gpu-h100\"",
	    "\"phase\":\"Running\",\"jobId\":\"7\",\"startTime\":\"2026-12-01T10:00:00Z\","
	    "\"nodes\":[{\"rank\":1,\"pod\":\"p1\",\"node\":\"n-b\"},"
	    "{\"rank\":0,\"pod\":\"p0\",\"node\":\"n-a\"}]", NULL);
	cr_assert_eq(slurm_squeue_row(SLURM_SQUEUE_FORMAT, &tj, T0 + 3600, &b), 0);
	cr_assert_str_eq(buf_str(&b), "                 7  gpu-h100 llama-pr       ml  R    "
				      "1:00:00      2 llama-pretrain-[0-1]");
}

Test(slurmfmt, the_host_list_leaves_out_ranks_not_yet_on_a_node)
{
	job("t", NULL, "\"phase\":\"Starting\",\"nodes\":[{\"rank\":0,\"node\":\"a\"},"
	    "{\"rank\":1},{\"rank\":2,\"node\":\"c\"}]", NULL);
	cr_assert_eq(slurm_nodelist(&tj, &b), 0);
	cr_assert_str_eq(buf_str(&b), "t-[0,2]");
	cr_assert_str_eq(slurm_state(&tj, true, false), "CF");
}

static void admitted(const char *status, const char *reason)
{
	char s[512];

	snprintf(s, sizeof(s), "\"phase\":\"Queued\",\"conditions\":[{\"type\":\"Admitted\","
		 "\"status\":\"%s\",\"reason\":\"%s\",\"message\":\"m\","
		 "\"lastTransitionTime\":\"2026-12-01T10:00:00Z\"}]", status, reason);
	job("r", NULL, s, NULL);
}

Test(slurmfmt, cadres_admission_reasons_read_as_slurms)
{
	admitted("False", "InsufficientCapacity");
	cr_assert_str_eq(slurm_reason(&tj), "Resources");
	admitted("False", "QueuedBehind");
	cr_assert_str_eq(slurm_reason(&tj), "Priority");
	admitted("False", "WaitingForKueue");
	cr_assert_str_eq(slurm_reason(&tj), "QOSWaitingForKueue");
	admitted("False", "NotManagedByKueue");
	cr_assert_str_eq(slurm_reason(&tj), "NotManagedByKueue");
	admitted("False", "SomethingNew");
	cr_assert_str_eq(slurm_reason(&tj), "SomethingNew");
	admitted("True", "Admitted");
	cr_assert_str_eq(slurm_reason(&tj), "None");
}

Test(slurmfmt, a_job_waiting_for_volumes_names_the_volume_reason)
{
	job("v", NULL, "\"phase\":\"Pending\",\"conditions\":[{\"type\":\"VolumesReady\","
	    "\"status\":\"False\",\"reason\":\"VolumeNotBound\",\"message\":\"m\","
	    "\"lastTransitionTime\":\"2026-12-01T10:00:00Z\"}]", NULL);
	cr_assert_str_eq(slurm_reason(&tj), "VolumeNotBound");
	cr_assert_str_eq(slurm_state(&tj, true, false), "PD");
}

Test(slurmfmt, a_job_the_controller_has_not_seen_waits_for_its_begin_time)
{
	job("new", NULL, NULL, NULL);
	cr_assert_str_eq(slurm_reason(&tj), "BeginTime");
	cr_assert_str_eq(slurm_state(&tj, false, true), "PENDING");
}

Test(slurmfmt, phases_map_to_slurms_states)
{
	static const struct { const char *phase, *compact, *full; } cases[] = {
		{ "Pending", "PD", "PENDING" },   { "Queued", "PD", "PENDING" },
		{ "Starting", "CF", "CONFIGURING" }, { "Running", "R", "RUNNING" },
		{ "Restarting", "RQ", "REQUEUED" }, { "Succeeded", "CD", "COMPLETED" },
		{ "Failed", "F", "FAILED" },      { "Suspended", "S", "SUSPENDED" },
	};
	char s[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* A job that ran (Suspended after a start; one held before is PD). */
		snprintf(s, sizeof(s), "\"phase\":\"%s\",\"startTime\":\"2026-12-01T10:01:00Z\"",
			 cases[i].phase);
		job("p", NULL, s, NULL);
		cr_assert_str_eq(slurm_state(&tj, true, false), cases[i].compact, "%s", s);
		cr_assert_str_eq(slurm_state(&tj, false, true), cases[i].full, "%s", s);
	}
}

Test(slurmfmt, a_job_past_its_deadline_is_timeout_and_a_deleted_one_cancelled)
{
	job("d", NULL, "\"phase\":\"Failed\",\"conditions\":[{\"type\":\"Failed\","
	    "\"status\":\"True\",\"reason\":\"DeadlineExceeded\",\"message\":\"m\","
	    "\"lastTransitionTime\":\"2026-12-01T10:00:00Z\"}]", NULL);
	cr_assert_str_eq(slurm_state(&tj, false, true), "TIMEOUT");
	cr_assert_str_eq(slurm_state(&tj, true, false), "TO");
	job("c", NULL, "\"phase\":\"Running\"", NULL);
	tj.meta.deleting = true;
	cr_assert_str_eq(slurm_state(&tj, false, true), "CANCELLED");
	cr_assert_str_eq(slurm_state(&tj, true, false), "CG");
	cr_assert_str_eq(slurm_state(&tj, false, false), "COMPLETING");
}

Test(slurmfmt, exit_code_is_exit_colon_signal)
{
	char out[24];

	job("e", NULL, "\"phase\":\"Succeeded\"", NULL);
	slurm_exit_code(&tj, out);
	cr_assert_str_eq(out, "0:0");
	job("e", NULL, "\"phase\":\"Failed\",\"lastFailure\":{\"rank\":0,\"exitCode\":3,"
	    "\"reason\":\"Error\"}", NULL);
	slurm_exit_code(&tj, out);
	cr_assert_str_eq(out, "3:0");
	job("e", NULL, "\"phase\":\"Failed\",\"lastFailure\":{\"rank\":0,\"exitCode\":137,"
	    "\"reason\":\"OOMKilled\"}", NULL);
	slurm_exit_code(&tj, out);
	cr_assert_str_eq(out, "0:9");
}

Test(slurmfmt, the_user_is_the_submitter_else_the_namespace)
{
	job("u", NULL, NULL, "\"cadre.dev/submitted-by\":\"alice@example.com\"");
	cr_assert_str_eq(slurm_user(&tj), "alice@example.com");
	job("u", NULL, NULL, NULL);
	cr_assert_str_eq(slurm_user(&tj), "ml");
}

Test(slurmfmt, squeue_format_takes_widths_justification_and_literal_text)
{
	job("abc", "\"activeDeadlineSeconds\":5400", "\"phase\":\"Running\",\"jobId\":\"42\","
	    "\"startTime\":\"2026-12-01T10:00:00Z\"", NULL);
	cr_assert_eq(slurm_squeue_row("%i|%5j|%.5j|%T|%l|%a|%%", &tj, T0 + 59, &b), 0);
	cr_assert_str_eq(buf_str(&b), "42|abc  |  abc|RUNNING|1:30:00|ml|%");
	buf_reset(&b);
	slurm_squeue_header("%i|%.3j", &b);
	cr_assert_str_eq(buf_str(&b), "JOBID|NAM");
}

Test(slurmfmt, squeue_long_format_has_state_and_time_limit)
{
	job("abc", NULL, "\"phase\":\"Running\",\"jobId\":\"42\"", NULL);
	cr_assert_eq(slurm_squeue_header(SLURM_SQUEUE_FORMAT_LONG, &b), 0);
	cr_assert_str_eq(buf_str(&b), "             JOBID PARTITION     NAME     USER    STATE "
				      "      TIME TIME_LIMI  NODES NODELIST(REASON)");
	buf_reset(&b);
	slurm_squeue_row(SLURM_SQUEUE_FORMAT_LONG, &tj, T0, &b);
	cr_assert_str_eq(buf_str(&b), "                42         -      abc       ml  RUNNING "
				      "      0:00 UNLIMITED      2 ");
}

Test(slurmfmt, an_unknown_squeue_field_is_refused_with_its_place)
{
	size_t bad = 99;

	cr_assert_eq(slurm_squeue_check("%i %.9P %Z", &bad), CADRE_EINVAL);
	cr_assert_eq(bad, 8);
	cr_assert_eq(slurm_squeue_check("%.18i %%", &bad), 0);
	cr_assert_eq(slurm_squeue_check("%.", &bad), CADRE_EINVAL);
}

Test(slurmfmt, sacct_default_fields_have_slurms_widths_and_dashes)
{
	struct slurm_sacct_field f[SLURM_SACCT_MAX_FIELDS];
	size_t n, bad;

	cr_assert_eq(slurm_sacct_parse(SLURM_SACCT_FIELDS, f, &n, &bad), 0);
	cr_assert_eq(n, 7);
	cr_assert_eq(slurm_sacct_header(f, n, SLURM_SACCT_TABLE, &b), 0);
	cr_assert_str_eq(buf_str(&b),
			 "JobID           JobName  Partition    Account  AllocCPUS      State "
			 "ExitCode \n"
			 "------------ ---------- ---------- ---------- ---------- ---------- "
			 "-------- \n");
}

Test(slurmfmt, sacct_cuts_overlong_text_with_a_plus)
{
	struct slurm_sacct_field f[SLURM_SACCT_MAX_FIELDS];
	size_t n, bad;

	job("llama-pretrain", "\"resources\":{\"cpus\":\"4\"}",
	    "\"phase\":\"Failed\",\"jobId\":\"4242\",\"startTime\":\"2026-12-01T10:00:00Z\","
	    "\"completionTime\":\"2026-12-01T11:00:59Z\",\"lastFailure\":{\"rank\":1,"
	    "\"exitCode\":2,\"reason\":\"Error\"}", NULL);
	cr_assert_eq(slurm_sacct_parse(SLURM_SACCT_FIELDS ",Elapsed", f, &n, &bad), 0);
	cr_assert_eq(slurm_sacct_row(f, n, SLURM_SACCT_TABLE, &tj, T0 + 99999, &b), 0);
	cr_assert_str_eq(buf_str(&b), "4242         llama-pre+          -         ml          8 "
				      "    FAILED      2:0   01:00:59 \n");
}

Test(slurmfmt, sacct_parsable_and_parsable2_as_submitit_reads_them)
{
	struct slurm_sacct_field f[SLURM_SACCT_MAX_FIELDS];
	size_t n, bad;

	job("t", NULL, "\"phase\":\"Running\",\"jobId\":\"4242\"", NULL);
	cr_assert_eq(slurm_sacct_parse("JobID,State", f, &n, &bad), 0);
	slurm_sacct_header(f, n, SLURM_SACCT_PARSABLE2, &b);
	slurm_sacct_row(f, n, SLURM_SACCT_PARSABLE2, &tj, T0, &b);
	cr_assert_str_eq(buf_str(&b), "JobID|State\n4242|RUNNING\n");
	buf_reset(&b);
	slurm_sacct_header(f, n, SLURM_SACCT_PARSABLE, &b);
	slurm_sacct_row(f, n, SLURM_SACCT_PARSABLE, &tj, T0, &b);
	cr_assert_str_eq(buf_str(&b), "JobID|State|\n4242|RUNNING|\n");
}

Test(slurmfmt, sacct_field_names_ignore_case_and_take_a_width)
{
	struct slurm_sacct_field f[SLURM_SACCT_MAX_FIELDS];
	size_t n, bad = 99;

	cr_assert_eq(slurm_sacct_parse("jobid%4,jobname%20,state", f, &n, &bad), 0);
	cr_assert_eq(n, 3);
	cr_assert_eq(f[0].width, -4);
	cr_assert_eq(f[1].width, 20);
	job("t", NULL, "\"phase\":\"Succeeded\",\"jobId\":\"123456\"", NULL);
	slurm_sacct_row(f, 1, SLURM_SACCT_TABLE, &tj, T0, &b);
	cr_assert_str_eq(buf_str(&b), "123+ \n");
	cr_assert_eq(slurm_sacct_parse("JobID,Bogus", f, &n, &bad), CADRE_EINVAL);
	cr_assert_eq(bad, 6);
	cr_assert_eq(slurm_sacct_parse("JobID%0", f, &n, &bad), CADRE_EINVAL);
	cr_assert_eq(slurm_sacct_parse("JobID%x", f, &n, &bad), CADRE_EINVAL);
	cr_assert_eq(slurm_sacct_parse("", f, &n, &bad), CADRE_EINVAL);
}

Test(slurmfmt, sacct_times_and_a_node_list_before_the_start)
{
	struct slurm_sacct_field f[SLURM_SACCT_MAX_FIELDS];
	size_t n, bad;

	job("t", NULL, "\"phase\":\"Queued\",\"jobId\":\"1\"", NULL);
	cr_assert_eq(slurm_sacct_parse("Submit,Start,NodeList,AllocCPUS", f, &n, &bad), 0);
	slurm_sacct_row(f, n, SLURM_SACCT_PARSABLE2, &tj, T0, &b);
	cr_assert_str_eq(buf_str(&b), "2026-12-01T10:00:00|Unknown|None assigned|0\n");
}

static const char *duration(int64_t s)
{
	static char out[64];

	sky_duration(s, true, out);
	return out;
}

Test(slurmfmt, sky_durations_show_the_two_largest_units)
{
	char out[64];

	cr_assert_str_eq(duration(0), "0s");
	cr_assert_str_eq(duration(59), "59s");
	cr_assert_str_eq(duration(60), "1m");
	cr_assert_str_eq(duration(303), "5m 3s");
	cr_assert_str_eq(duration(3600), "1h");
	cr_assert_str_eq(duration(3660 + 5), "1h 1m");
	cr_assert_str_eq(duration(86400), "1d");
	cr_assert_str_eq(duration(86400 + 7200), "1d 2h");
	sky_duration(5, false, out);
	cr_assert_str_eq(out, "-");
}

Test(slurmfmt, sky_submitted_reads_as_time_ago)
{
	char out[32];

	sky_ago(T0, T0 + 1, out);
	cr_assert_str_eq(out, "1 sec ago");
	sky_ago(T0, T0 + 59, out);
	cr_assert_str_eq(out, "59 secs ago");
	sky_ago(T0, T0 + 3600, out);
	cr_assert_str_eq(out, "1 hr ago");
	sky_ago(T0, T0 + 2 * 86400, out);
	cr_assert_str_eq(out, "2 days ago");
	sky_ago(0, T0, out);
	cr_assert_str_eq(out, "-");
}

Test(slurmfmt, sky_status_and_resources)
{
	job("s", "\"resources\":{\"accelerators\":\"H100:8\"}", "\"phase\":\"Restarting\"", NULL);
	cr_assert_str_eq(sky_status(&tj), "RECOVERING");
	cr_assert_eq(sky_resources(&tj, &b), 0);
	cr_assert_str_eq(buf_str(&b), "2x[H100:8]");
	buf_reset(&b);
	job("s", "\"resources\":{\"cpus\":\"4\"}", "\"phase\":\"Queued\"", NULL);
	cr_assert_str_eq(sky_status(&tj), "PENDING");
	sky_resources(&tj, &b);
	cr_assert_str_eq(buf_str(&b), "2x[CPU:4]");
}

Test(slurmfmt, state_lists_take_compact_and_long_names_in_any_case)
{
	const char *bad = NULL;
	size_t len = 0;

	cr_assert(slurm_states_valid("PD,running,all,Cd,TIMEOUT", &bad, &len));
	cr_assert_not(slurm_states_valid("PD,BOGUS,R", &bad, &len));
	cr_assert_eq(len, 5);
	cr_assert(!strncmp(bad, "BOGUS", 5));
	cr_assert_not(slurm_states_valid("R,", &bad, &len));
	cr_assert_eq(len, 0);
}

Test(slurmfmt, status_text_reads_as_one_job_for_a_person)
{
	job("llama", "\"maxRestarts\":3,\"resources\":{\"accelerators\":\"H100:8\"}",
	    "\"phase\":\"Restarting\",\"jobId\":\"42\",\"restarts\":1,\"infraRestarts\":1,"
	    "\"startTime\":\"2026-12-01T10:00:00Z\",\"message\":\"rank 1 failed\","
	    "\"lastFailure\":{\"rank\":1,\"pod\":\"llama-1\",\"node\":\"n2\",\"exitCode\":137,"
	    "\"reason\":\"OOMKilled\",\"message\":\"out of memory\"},"
	    "\"nodes\":[{\"rank\":0,\"pod\":\"llama-0\",\"node\":\"n1\",\"ip\":\"10.0.0.1\","
	    "\"phase\":\"Running\"},{\"rank\":1,\"pod\":\"llama-1\"}],"
	    "\"conditions\":[" "{\"type\":\"Restarting\",\"status\":\"True\",\"reason\":"
	    "\"PodFailed\",\"message\":\"rank 1 failed\",\"lastTransitionTime\":"
	    "\"2026-12-01T10:00:00Z\"}]", "\"cadre.dev/submitted-by\":\"alice\"");
	cr_assert_eq(cli_status_text(&tj, T0 + 61, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"Job:           llama (job id 42)\n"
		"Namespace:     ml\n"
		"User:          alice\n"
		"State:         REQUEUED, phase Restarting\n"
		"Why:           rank 1 failed\n"
		"Resources:     2x[H100:8]\n"
		"Queue:         -\n"
		"Submitted:     2026-12-01T10:00:00Z (1 min ago)\n"
		"Started:       2026-12-01T10:00:00Z (1 min ago)\n"
		"Elapsed:       1:01\n"
		"Time limit:    UNLIMITED\n"
		"Restarts:      1 of 3 (maxRestarts); 1 recovery after node loss, eviction or "
		"preemption\n"
		"Last failure:  rank 1 (pod llama-1, node n2): exit code 137, OOMKilled: out of memory\n"
		"Hosts:         llama-0\n"
		"\n"
		"RANK  POD      NODE  IP        PHASE\n"
		"0     llama-0  n1    10.0.0.1  Running\n"
		"1     llama-1  -     -         -\n"
		"\n"
		"CONDITION   STATUS   REASON     MESSAGE\n"
		"Restarting  True     PodFailed  rank 1 failed\n");
}

Test(slurmfmt, status_text_of_a_waiting_job_says_why)
{
	job("w", NULL, "\"phase\":\"Queued\",\"jobId\":\"7\",\"conditions\":[{\"type\":"
	    "\"Admitted\",\"status\":\"False\",\"reason\":\"QueuedBehind\",\"message\":\"m\","
	    "\"lastTransitionTime\":\"2026-12-01T10:00:00Z\"}]", NULL);
	cr_assert_eq(cli_status_text(&tj, T0, &b), 0);
	cr_assert(strstr(buf_str(&b), "\nState:         PENDING (Priority), phase Queued\n"),
		  "%s", buf_str(&b));
	cr_assert(strstr(buf_str(&b), "\nStarted:       -\n"), "%s", buf_str(&b));
	cr_assert_null(strstr(buf_str(&b), "RANK"), "%s", buf_str(&b));
}

Test(slurmfmt, a_right_justified_host_list_is_never_cut_a_left_one_is)
{
	job("llama-pretrain", NULL, "\"phase\":\"Running\",\"jobId\":\"7\",\"nodes\":["
	    "{\"rank\":0,\"node\":\"a\"},{\"rank\":1,\"node\":\"b\"}]", NULL);
	cr_assert_eq(slurm_squeue_row("%.6N|%.6R|%6N|%30N|", &tj, T0, &b), 0);
	cr_assert_str_eq(buf_str(&b), "llama-pretrain-[0-1]|llama-pretrain-[0-1]|llama-|"
				      "llama-pretrain-[0-1]          |");
	buf_reset(&b);
	job("q", NULL, "\"phase\":\"Queued\"", NULL);
	cr_assert_eq(slurm_squeue_row("%.6R|", &tj, T0, &b), 0);
	cr_assert_str_eq(buf_str(&b), "(None)|");
	buf_reset(&b);
	cr_assert_eq(slurm_squeue_row("%.4R|", &tj, T0, &b), 0);
	cr_assert_str_eq(buf_str(&b), "(Non|");
}

Test(slurmfmt, sacct_never_cuts_numbers_and_durations_and_cuts_dates_and_headers_plainly)
{
	struct slurm_sacct_field f[SLURM_SACCT_MAX_FIELDS];
	size_t n, bad;

	job("t", "\"resources\":{\"cpus\":\"61728\"}", "\"phase\":\"Succeeded\",\"jobId\":\"1\","
	    "\"startTime\":\"2026-12-01T10:00:00Z\",\"completionTime\":\"2026-12-02T10:00:00Z\"",
	    NULL);
	cr_assert_eq(slurm_sacct_parse("AllocCPUS%3,Elapsed%4,Start%10", f, &n, &bad), 0);
	cr_assert_eq(slurm_sacct_header(f, n, SLURM_SACCT_TABLE, &b), 0);
	cr_assert_eq(slurm_sacct_row(f, n, SLURM_SACCT_TABLE, &tj, T0, &b), 0);
	cr_assert_str_eq(buf_str(&b), "All Elap      Start \n--- ---- ---------- \n"
				      "123456 1-00:00:00 2026-12-01 \n");
}

/*
 * scontrol show job's layout: src/scontrol/info_job.c _sprint_job_info at
 * SchedMD/slurm 284c3b9 - "JobId=%u " then "JobName=%s", each later line
 * after "\n   ", the record trimmed (xstrtrim) and ended by "\n\n".
 */
Test(slurmfmt, scontrol_show_job_has_slurms_key_value_layout)
{
	job("llama-pretrain",
	    "\"resources\":{\"accelerators\":\"H100:8\",\"cpus\":\"32\"},\"partition\":\"gpu\","
	    "\"activeDeadlineSeconds\":3600",
	    "\"phase\":\"Running\",\"jobId\":\"4242\",\"startTime\":\"2026-12-01T10:01:00Z\","
	    "\"admittedTime\":\"2026-12-01T10:00:30Z\",\"partition\":\"gpu\","
	    "\"nodes\":[{\"rank\":0,\"pod\":\"llama-pretrain-0\",\"node\":\"gpu-node-0\"},"
	    "{\"rank\":1,\"pod\":\"llama-pretrain-1\",\"node\":\"gpu-node-1\"}]",
	    "\"cadre.dev/submitted-by\":\"alice\"");
	cr_assert_eq(slurm_show_job(&tj, T0 + 60 + 62, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"JobId=4242 JobName=llama-pretrain\n"
		"   UserId=alice(0) GroupId=ml(0) MCS_label=N/A\n"
		"   Priority=0 Nice=0 Account=ml QOS=normal\n"
		"   JobState=RUNNING Reason=None Dependency=(null)\n"
		"   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
		"   RunTime=00:01:02 TimeLimit=01:00:00 TimeMin=N/A\n"
		"   SubmitTime=2026-12-01T10:00:00 EligibleTime=2026-12-01T10:00:00\n"
		"   AccrueTime=2026-12-01T10:00:00\n"
		"   StartTime=2026-12-01T10:01:00 EndTime=2026-12-01T11:01:00 Deadline=N/A\n"
		"   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-01T10:00:30 "
		"Scheduler=Main\n"
		"   Partition=gpu AllocNode:Sid=cadre:0\n"
		"   ReqNodeList=(null) ExcNodeList=(null)\n"
		"   NodeList=llama-pretrain-[0-1]\n"
		"   BatchHost=llama-pretrain-0\n"
		"   NumNodes=2 NumCPUs=64 NumTasks=2 CPUs/Task=N/A ReqB:S:C:T=0:0:*:*\n"
		"   ReqTRES=cpu=64,node=2,billing=64,gres/gpu=16\n"
		"   AllocTRES=cpu=64,node=2,billing=64,gres/gpu=16\n"
		"   Socks/Node=* NtasksPerN:B:S:C=1:0:*:* CoreSpec=*\n"
		"   MinCPUsNode=32 MinMemoryNode=0 MinTmpDiskNode=0\n"
		"   Features=(null) DelayBoot=00:00:00\n"
		"   OverSubscribe=NO Exclusive=NO Contiguous=0 Licenses=(null) LicensesAlloc=(null) "
		"Network=(null)\n"
		"   Command=llama-pretrain\n"
		"   WorkDir=/\n"
		"   StdErr=(container log)\n"
		"   StdIn=/dev/null\n"
		"   StdOut=(container log)\n"
		"   TresPerNode=gres/gpu:h100:8\n\n");
}

/*
 * -w, -x, -C and --exclusive as scontrol prints them: "Req%s=%s Exc%s=%s"
 * with the ranged hostlists, Features= the constraint as given, and
 * job_exclusive_display_string's NODE.
 */
Test(slurmfmt, scontrol_show_job_says_the_nodes_asked_for_and_avoided)
{
	const char *text;

	job("pick", "\"nodeList\":[\"gpu-node-1\",\"gpu-node-2\"],"
	    "\"excludeNodes\":[\"gpu-node-7\"],\"exclusive\":true,\"constraint\":\"a100&ib\"",
	    "\"phase\":\"Queued\",\"jobId\":\"9\"", NULL);
	cr_assert_eq(slurm_show_job(&tj, T0, &b), 0);
	text = buf_str(&b);
	cr_assert(strstr(text, "\n   ReqNodeList=gpu-node-[1-2] ExcNodeList=gpu-node-7\n"), "%s",
		  text);
	cr_assert(strstr(text, "\n   Features=a100&ib DelayBoot=00:00:00\n"), "%s", text);
	cr_assert(strstr(text, "\n   OverSubscribe=NO Exclusive=NODE Contiguous=0 "), "%s", text);
}

/* scontrol hold before the job started: PENDING (JobHeldUser), as Slurm shows a held job. */
Test(slurmfmt, a_job_held_before_it_started_is_pending_held_by_its_user)
{
	job("held", "\"suspend\":true", "\"phase\":\"Suspended\",\"jobId\":\"7\"", NULL);
	cr_assert_str_eq(slurm_state(&tj, true, false), "PD");
	cr_assert_str_eq(slurm_reason(&tj), "JobHeldUser");
}

/*
 * squeue's JOBID of an array (src/squeue/print.c _print_job_job_id): the
 * elements not started yet as one row "%u_[%s]" with the throttle, each
 * started element "%u_%u".
 */
Test(slurmfmt, an_arrays_pending_elements_are_one_row_and_each_started_one_its_own)
{
	job("sweep", "\"array\":\"0-9%2\"",
	    "\"phase\":\"Running\",\"jobId\":\"4242\",\"array\":{\"started\":\"0-3\","
	    "\"succeeded\":\"0-1\"}", NULL);
	cr_assert_eq(slurm_job_id(&tj, &b), 0);
	cr_assert_str_eq(buf_str(&b), "4242_[4-9%2]");
	cr_assert_str_eq(slurm_reason(&tj), "JobArrayTaskLimit", "2 and 3 run");
	cr_assert_str_eq(slurm_state(&tj, true, false), "PD");
	cr_assert(slurm_row_shown(&tj));
	job("sweep", "\"array\":\"0-9%2\"",
	    "\"phase\":\"Running\",\"jobId\":\"4242\",\"array\":{\"started\":\"0-9\"}", NULL);
	cr_assert_not(slurm_row_shown(&tj), "nothing pending: no row of its own");
	buf_reset(&b);
	job("sweep-3", NULL, "\"phase\":\"Running\",\"jobId\":\"4246\"",
	    "\"cadre.dev/array-job-id\":\"4242\"");
	/* the index is a label */
	json_object_set_new(tj.meta.labels ? tj.meta.labels : (tj.meta.labels = json_object()),
			    "cadre.dev/array-index", json_string("3"));
	cr_assert_eq(slurm_job_id(&tj, &b), 0);
	cr_assert_str_eq(buf_str(&b), "4242_3");
	cr_assert(slurm_job_matches(&tj, "4242"));
	cr_assert(slurm_job_matches(&tj, "4242_3"));
	cr_assert_not(slurm_job_matches(&tj, "4242_4"));
}

/* ---- preemption (docs/design.md 3.5) ---- */

#define FAILED_PREEMPTED \
	"{\"type\":\"Failed\",\"status\":\"True\",\"reason\":\"Preempted\",\"message\":" \
	"\"preempted by ml/urgent (tier 10 over tier 0)\",\"lastTransitionTime\":" \
	"\"2026-12-01T10:31:00Z\"}"

/*
 * A victim of partition spot cancelled by ml/urgent of a higher tier: it
 * had failed once (restarts 1, lastFailure of that attempt), ran again from
 * 10:01 and was preempted at 10:30:15 with 45 s of grace.
 */
static void cancelled_victim(void)
{
	job("scavenge", "\"partition\":\"spot\"",
	    "\"phase\":\"Failed\",\"jobId\":\"4250\",\"partition\":\"spot\",\"restarts\":1,"
	    "\"preemptions\":1,\"admittedTime\":\"2026-12-01T10:00:30Z\","
	    "\"startTime\":\"2026-12-01T10:01:00Z\",\"completionTime\":\"2026-12-01T10:31:00Z\","
	    "\"message\":\"preempted by ml/urgent (tier 10 over tier 0)\","
	    "\"preemption\":{\"preemptor\":\"ml/urgent\",\"attempt\":1,\"time\":"
	    "\"2026-12-01T10:30:15Z\",\"graceSeconds\":45,\"mode\":\"Cancel\",\"tier\":10},"
	    "\"lastFailure\":{\"rank\":1,\"exitCode\":3,\"reason\":\"Error\"},"
	    "\"nodes\":[{\"rank\":0,\"pod\":\"scavenge-0\",\"node\":\"n1\"},"
	    "{\"rank\":1,\"pod\":\"scavenge-1\",\"node\":\"n2\"}],"
	    "\"conditions\":[" FAILED_PREEMPTED ",{\"type\":\"Admitted\",\"status\":\"False\","
	    "\"reason\":\"Preempted\",\"message\":\"m\",\"lastTransitionTime\":"
	    "\"2026-12-01T10:31:00Z\"}]", NULL);
}

/*
 * A victim whose partition requeues: phase is Restarting (stopping,
 * requeue counted), Queued (waiting again) or Running (started again).
 */
static void requeued_victim(const char *phase, const char *admitted_reason)
{
	char s[2048];

	snprintf(s, sizeof(s),
		 "\"phase\":\"%s\",\"jobId\":\"4251\",\"partition\":\"spot\",\"preemptions\":1,"
		 "\"admittedTime\":\"2026-12-01T10:00:30Z\",\"startTime\":\"2026-12-01T10:01:00Z\","
		 "\"preemption\":{\"preemptor\":\"ml/urgent\",\"attempt\":0,\"time\":"
		 "\"2026-12-01T10:30:15Z\",\"graceSeconds\":45,\"mode\":\"Requeue\",\"tier\":10},"
		 "\"nodes\":[{\"rank\":0,\"pod\":\"batch-0\",\"node\":\"n1\"},"
		 "{\"rank\":1,\"pod\":\"batch-1\",\"node\":\"n2\"}],"
		 "\"conditions\":[{\"type\":\"Admitted\",\"status\":\"%s\",\"reason\":\"%s\","
		 "\"message\":\"m\",\"lastTransitionTime\":\"2026-12-01T10:30:15Z\"}]",
		 phase, strcmp(phase, "Running") ? "False" : "True", admitted_reason);
	job("batch", "\"partition\":\"spot\"", s, NULL);
}

/* squeue.1 and sacct.1, JOB STATE CODES: "PR PREEMPTED Job terminated due to preemption". */
Test(slurmfmt, a_job_cancelled_by_preemption_is_preempted)
{
	char code[24];

	cancelled_victim();
	cr_assert(slurm_preempted(&tj));
	cr_assert_str_eq(slurm_state(&tj, true, false), "PR");
	cr_assert_str_eq(slurm_state(&tj, false, false), "PREEMPTED");
	cr_assert_str_eq(slurm_state(&tj, false, true), "PREEMPTED");
	/* slurmctld leaves a victim's state_reason as it ran (WAIT_NO_REASON) and exit_code 0. */
	cr_assert_str_eq(slurm_reason(&tj), "None");
	slurm_exit_code(&tj, code);
	cr_assert_str_eq(code, "0:0");
}

/*
 * squeue's _print_job_reason_list shows the hosts of a job that is not
 * pending, failed, timed out or out of memory: a preempted one's too. -l
 * cuts PREEMPTED to %.8T's eight bytes, as squeue does.
 */
Test(slurmfmt, squeue_shows_a_preempted_job_with_its_hosts)
{
	cancelled_victim();
	cr_assert_eq(slurm_squeue_row(SLURM_SQUEUE_FORMAT, &tj, T0 + 7200, &b), 0);
	cr_assert_str_eq(buf_str(&b), "              4250      spot scavenge       ml PR      "
				      "30:00      2 scavenge-[0-1]");
	buf_reset(&b);
	cr_assert_eq(slurm_squeue_row(SLURM_SQUEUE_FORMAT_LONG, &tj, T0 + 7200, &b), 0);
	cr_assert_str_eq(buf_str(&b), "              4250      spot scavenge       ml PREEMPTE      "
				      "30:00 UNLIMITED      2 scavenge-[0-1]");
	buf_reset(&b);
	cr_assert_eq(slurm_squeue_row("%t|%T|%r|%R", &tj, T0 + 7200, &b), 0);
	cr_assert_str_eq(buf_str(&b), "PR|PREEMPTED|None|scavenge-[0-1]");
}

Test(slurmfmt, sacct_shows_a_preempted_job_as_preempted_with_exit_code_zero)
{
	struct slurm_sacct_field f[SLURM_SACCT_MAX_FIELDS];
	size_t n, bad;

	cancelled_victim();
	cr_assert_eq(slurm_sacct_parse(SLURM_SACCT_FIELDS, f, &n, &bad), 0);
	cr_assert_eq(slurm_sacct_row(f, n, SLURM_SACCT_TABLE, &tj, T0 + 7200, &b), 0);
	cr_assert_str_eq(buf_str(&b), "4250           scavenge       spot         ml          0  "
				      "PREEMPTED      0:0 \n");
	buf_reset(&b);
	cr_assert_eq(slurm_sacct_parse("JobID,State,Elapsed,End", f, &n, &bad), 0);
	cr_assert_eq(slurm_sacct_row(f, n, SLURM_SACCT_PARSABLE2, &tj, T0 + 7200, &b), 0);
	cr_assert_str_eq(buf_str(&b), "4250|PREEMPTED|00:30:00|2026-12-01T10:31:00\n");
}

/*
 * A requeued victim is REQUEUED while its pods stop, then PENDING with the
 * queue's reason, then RUNNING: never PREEMPTED, since it did not end.
 * While it waits it is a new pending job to Slurm (job_requeue_internal
 * clears start_time): TIME 0:00, no Start, no Elapsed, though
 * status.startTime keeps its first start.
 */
Test(slurmfmt, a_requeued_victim_is_requeued_then_pending_as_any_requeued_job)
{
	struct slurm_sacct_field f[SLURM_SACCT_MAX_FIELDS];
	size_t n, bad;

	requeued_victim("Restarting", "Restarting");
	cr_assert_not(slurm_preempted(&tj));
	cr_assert_eq(slurm_squeue_row(SLURM_SQUEUE_FORMAT, &tj, T0 + 1830, &b), 0);
	cr_assert_str_eq(buf_str(&b), "              4251      spot    batch       ml RQ       "
				      "0:00      2 batch-[0-1]");
	buf_reset(&b);
	requeued_victim("Queued", "InsufficientCapacity");
	cr_assert_eq(slurm_squeue_row(SLURM_SQUEUE_FORMAT_LONG, &tj, T0 + 1830, &b), 0);
	cr_assert_str_eq(buf_str(&b), "              4251      spot    batch       ml  PENDING      "
				      " 0:00 UNLIMITED      2 (Resources)");
	cr_assert_str_eq(slurm_state(&tj, false, true), "PENDING");
	buf_reset(&b);
	cr_assert_eq(slurm_sacct_parse("JobID,State,Start,Elapsed,AllocCPUS,NodeList", f, &n,
				       &bad), 0);
	cr_assert_eq(slurm_sacct_row(f, n, SLURM_SACCT_PARSABLE2, &tj, T0 + 1830, &b), 0);
	cr_assert_str_eq(buf_str(&b), "4251|PENDING|Unknown|00:00:00|0|None assigned\n");
	buf_reset(&b);
	requeued_victim("Running", "Admitted");
	cr_assert_eq(slurm_squeue_row("%t %M", &tj, T0 + 1830, &b), 0);
	cr_assert_str_eq(buf_str(&b), "R 29:30");
}

/*
 * The preemptor waits while its victims stop: slurmctld's select_nodes
 * says WAIT_RESOURCES when _preempt_jobs leaves the nodes busy.
 */
Test(slurmfmt, a_preemptor_waiting_for_its_victims_waits_for_resources)
{
	admitted("False", "Preempting");
	cr_assert_str_eq(slurm_reason(&tj), "Resources");
	cr_assert_str_eq(slurm_state(&tj, true, false), "PD");
}

Test(slurmfmt, state_lists_take_preempted_in_both_forms)
{
	const char *bad = NULL;
	size_t len = 0;

	cr_assert(slurm_states_valid("PR,preempted,R", &bad, &len));
	cr_assert_not(slurm_states_valid("PREEMPT", &bad, &len));
	cr_assert_eq(len, 7);
}

/*
 * info_job.c prints "PreemptEligibleTime=%s PreemptTime=%s" after the
 * StartTime line for a started job of a preemptable partition
 * (SchedMD/slurm 284c3b9); a cancelled victim has its preemption's time.
 */
Test(slurmfmt, scontrol_show_job_of_a_cancelled_victim_is_preempted_at_its_time)
{
	cancelled_victim();
	cr_assert_eq(slurm_show_job(&tj, T0 + 7200, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"JobId=4250 JobName=scavenge\n"
		"   UserId=ml(0) GroupId=ml(0) MCS_label=N/A\n"
		"   Priority=0 Nice=0 Account=ml QOS=normal\n"
		"   JobState=PREEMPTED Reason=None Dependency=(null)\n"
		"   Requeue=1 Restarts=2 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
		"   RunTime=00:30:00 TimeLimit=UNLIMITED TimeMin=N/A\n"
		"   SubmitTime=2026-12-01T10:00:00 EligibleTime=2026-12-01T10:00:00\n"
		"   AccrueTime=2026-12-01T10:00:00\n"
		"   StartTime=2026-12-01T10:01:00 EndTime=2026-12-01T10:31:00 Deadline=N/A\n"
		"   PreemptEligibleTime=2026-12-01T10:01:00 PreemptTime=2026-12-01T10:30:15\n"
		"   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-01T10:00:30 "
		"Scheduler=Main\n"
		"   Partition=spot AllocNode:Sid=cadre:0\n"
		"   ReqNodeList=(null) ExcNodeList=(null)\n"
		"   NodeList=scavenge-[0-1]\n"
		"   BatchHost=scavenge-0\n"
		"   NumNodes=2 NumCPUs=2 NumTasks=2 CPUs/Task=N/A ReqB:S:C:T=0:0:*:*\n"
		"   ReqTRES=cpu=2,node=2,billing=2\n"
		"   AllocTRES=cpu=2,node=2,billing=2\n"
		"   Socks/Node=* NtasksPerN:B:S:C=1:0:*:* CoreSpec=*\n"
		"   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0\n"
		"   Features=(null) DelayBoot=00:00:00\n"
		"   OverSubscribe=NO Exclusive=NO Contiguous=0 Licenses=(null) LicensesAlloc=(null) "
		"Network=(null)\n"
		"   Command=scavenge\n"
		"   WorkDir=/\n"
		"   StdErr=(container log)\n"
		"   StdIn=/dev/null\n"
		"   StdOut=(container log)\n\n");
}

/*
 * A requeued victim: no preemption line while it is REQUEUED or PENDING
 * (not started, as Slurm's requeued job), PreemptTime=None once it runs
 * again (job_requeue_internal clears preempt_time); Restarts counts the
 * preemption, as restart_cnt does.
 */
Test(slurmfmt, scontrol_show_job_of_a_requeued_victim)
{
	requeued_victim("Restarting", "Restarting");
	cr_assert_eq(slurm_show_job(&tj, T0 + 1830, &b), 0);
	cr_assert(strstr(buf_str(&b), "\n   JobState=REQUEUED Reason=Restarting Dependency=(null)\n"
				      "   Requeue=1 Restarts=1 BatchFlag=1 "), "%s", buf_str(&b));
	cr_assert_null(strstr(buf_str(&b), "Preempt"), "%s", buf_str(&b));
	buf_reset(&b);
	requeued_victim("Queued", "InsufficientCapacity");
	cr_assert_eq(slurm_show_job(&tj, T0 + 1830, &b), 0);
	cr_assert(strstr(buf_str(&b), "\n   JobState=PENDING Reason=Resources Dependency=(null)\n"
				      "   Requeue=1 Restarts=1 BatchFlag=1 "), "%s", buf_str(&b));
	cr_assert(strstr(buf_str(&b), "\n   RunTime=00:00:00 TimeLimit=UNLIMITED "), "%s",
		  buf_str(&b));
	cr_assert(strstr(buf_str(&b), "\n   StartTime=Unknown EndTime=Unknown Deadline=N/A\n"
				      "   SuspendTime=None "), "%s", buf_str(&b));
	cr_assert(strstr(buf_str(&b), "\n   AllocTRES=(null)\n"), "%s", buf_str(&b));
	cr_assert_null(strstr(buf_str(&b), "Preempt"), "%s", buf_str(&b));
	buf_reset(&b);
	requeued_victim("Running", "Admitted");
	cr_assert_eq(slurm_show_job(&tj, T0 + 1830, &b), 0);
	cr_assert(strstr(buf_str(&b), "\n   StartTime=2026-12-01T10:01:00 EndTime=Unknown "
				      "Deadline=N/A\n   PreemptEligibleTime=2026-12-01T10:01:00 "
				      "PreemptTime=None\n   SuspendTime=None "), "%s", buf_str(&b));
}

/* cadre status says who preempted the job, when and with what end, and whom it preempts. */
Test(slurmfmt, status_text_says_who_preempted_the_job_and_whom_it_preempts)
{
	cancelled_victim();
	cr_assert_eq(cli_status_text(&tj, T0 + 3600, &b), 0);
	cr_assert(strstr(buf_str(&b), "\nState:         PREEMPTED, phase Failed\n"
				      "Why:           preempted by ml/urgent (tier 10 over tier 0)\n"),
		  "%s", buf_str(&b));
	cr_assert(strstr(buf_str(&b), "\nPreempted:     1 time; last by ml/urgent (tier 10) at "
				      "2026-12-01T10:30:15Z (29 mins ago), cancelled after 45s of "
				      "grace\nLast failure:  "), "%s", buf_str(&b));
	buf_reset(&b);
	job("urgent", NULL, "\"phase\":\"Queued\",\"jobId\":\"4252\",\"preempting\":["
	    "{\"job\":\"ml/scavenge\",\"attempt\":1},{\"job\":\"ml/batch\",\"attempt\":0}]", NULL);
	cr_assert_eq(cli_status_text(&tj, T0 + 3600, &b), 0);
	cr_assert(strstr(buf_str(&b), "\nPreempting:    2 jobs: ml/scavenge, ml/batch\n"), "%s",
		  buf_str(&b));
	cr_assert_null(strstr(buf_str(&b), "Preempted:"), "%s", buf_str(&b));
}
