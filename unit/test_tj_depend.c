/*
 * tj_depend.h: spec.dependency against what the caches show, by Slurm's rules
 * (sbatch.1 --dependency) and --kill-on-invalid-dep=yes.
 */
#include <criterion/criterion.h>

#include <string.h>

#include "api/fielderr.h"
#include "controller/trainingjob/tj_depend.h"

static void job_with(struct trainingjob *tj, const char *dependency, const char *satisfied)
{
	char text[2048];
	struct field_errors errs;
	json_t *obj;

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"child\",\"namespace\":\"ml\"},"
		 "\"spec\":{\"run\":\"x\",\"dependency\":%s},\"status\":{%s}}", dependency,
		 satisfied ? satisfied : "");
	obj = json_loads(text, 0, NULL);
	cr_assert_not_null(obj, "%s", text);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(obj, tj, &errs), 0);
	field_errors_release(&errs);
	json_decref(obj);
}

static enum tj_dep_state decide(const char *dependency, const struct tj_dep_target *t, size_t n,
				const char *singleton_by, char *message)
{
	struct trainingjob tj;
	struct tj_dep_verdict v;
	enum tj_dep_state s;

	job_with(&tj, dependency, NULL);
	cr_assert_eq(tj_dep_decide(&tj, t, n, singleton_by, &v), 0);
	s = v.state;
	if (message)
		snprintf(message, 512, "%s", v.message);
	tj_dep_verdict_release(&v);
	tj_release(&tj);
	return s;
}

#define ITEM(type, job) "{\"items\":[{\"type\":\"" type "\",\"jobs\":[\"" job "\"]}]}"
#define T(ref, phase, started) { ref, true, phase, started }
#define GONE(ref) { ref, false, TJ_PHASE_UNSET, false }

Test(tj_depend, afterok_waits_for_success_and_a_failure_can_never_meet_it)
{
	struct tj_dep_target running = T("123", TJ_PHASE_RUNNING, true);
	struct tj_dep_target ok = T("123", TJ_PHASE_SUCCEEDED, true);
	struct tj_dep_target failed = T("123", TJ_PHASE_FAILED, true);
	char msg[512];

	cr_assert_eq(decide(ITEM("afterok", "123"), &running, 1, NULL, msg), TJ_DEP_WAIT);
	cr_assert_str_eq(msg, "waiting for dependency afterok:123: job 123 is Running");
	cr_assert_eq(decide(ITEM("afterok", "123"), &ok, 1, NULL, NULL), TJ_DEP_MET);
	cr_assert_eq(decide(ITEM("afterok", "123"), &failed, 1, NULL, msg), TJ_DEP_NEVER);
	cr_assert_str_eq(msg, "dependency afterok:123 can never be satisfied: job 123 is Failed");
}

Test(tj_depend, the_other_types_by_slurms_rules)
{
	struct tj_dep_target queued = T("prep", TJ_PHASE_QUEUED, false);
	struct tj_dep_target running = T("prep", TJ_PHASE_RUNNING, true);
	struct tj_dep_target ok = T("prep", TJ_PHASE_SUCCEEDED, true);
	struct tj_dep_target failed = T("prep", TJ_PHASE_FAILED, true);

	cr_assert_eq(decide(ITEM("after", "prep"), &queued, 1, NULL, NULL), TJ_DEP_WAIT);
	cr_assert_eq(decide(ITEM("after", "prep"), &running, 1, NULL, NULL), TJ_DEP_MET);
	cr_assert_eq(decide(ITEM("afterany", "prep"), &running, 1, NULL, NULL), TJ_DEP_WAIT);
	cr_assert_eq(decide(ITEM("afterany", "prep"), &failed, 1, NULL, NULL), TJ_DEP_MET);
	cr_assert_eq(decide(ITEM("afterany", "prep"), &ok, 1, NULL, NULL), TJ_DEP_MET);
	cr_assert_eq(decide(ITEM("afternotok", "prep"), &failed, 1, NULL, NULL), TJ_DEP_MET);
	cr_assert_eq(decide(ITEM("afternotok", "prep"), &ok, 1, NULL, NULL), TJ_DEP_NEVER);
}

/* A job id no job has any more was cancelled; a name may still be applied. */
Test(tj_depend, a_job_gone_by_id_was_cancelled_a_missing_name_is_waited_for)
{
	struct tj_dep_target gone = GONE("123"), missing = GONE("prep");
	char msg[512];

	cr_assert_eq(decide(ITEM("afterok", "123"), &gone, 1, NULL, msg), TJ_DEP_NEVER);
	cr_assert(strstr(msg, "job 123 was cancelled"), "%s", msg);
	cr_assert_eq(decide(ITEM("afterany", "123"), &gone, 1, NULL, NULL), TJ_DEP_MET);
	cr_assert_eq(decide(ITEM("afternotok", "123"), NULL, 0, NULL, NULL), TJ_DEP_MET);
	cr_assert_eq(decide(ITEM("afterok", "prep"), &missing, 1, NULL, msg), TJ_DEP_WAIT);
	cr_assert_str_eq(msg, "waiting for dependency afterok:prep: job prep does not exist (yet)");
}

Test(tj_depend, every_item_or_with_any_one_item)
{
	struct tj_dep_target t[] = { T("1", TJ_PHASE_SUCCEEDED, true), T("2", TJ_PHASE_RUNNING, true),
				     T("3", TJ_PHASE_FAILED, true) };
	const char *all = "{\"items\":[{\"type\":\"afterok\",\"jobs\":[\"1\"]},"
			  "{\"type\":\"afterok\",\"jobs\":[\"2\"]}]}";
	const char *any = "{\"any\":true,\"items\":[{\"type\":\"afterok\",\"jobs\":[\"1\"]},"
			  "{\"type\":\"afterok\",\"jobs\":[\"2\"]}]}";
	const char *any_never = "{\"any\":true,\"items\":[{\"type\":\"afterok\",\"jobs\":[\"3\"]},"
				"{\"type\":\"afterok\",\"jobs\":[\"2\"]}]}";
	/* One item naming two jobs: both must meet it. */
	const char *both = "{\"items\":[{\"type\":\"afterok\",\"jobs\":[\"1\",\"3\"]}]}";

	cr_assert_eq(decide(all, t, 3, NULL, NULL), TJ_DEP_WAIT);
	cr_assert_eq(decide(any, t, 3, NULL, NULL), TJ_DEP_MET);
	cr_assert_eq(decide(any_never, t, 3, NULL, NULL), TJ_DEP_WAIT, "2 may still succeed");
	cr_assert_eq(decide(both, t, 3, NULL, NULL), TJ_DEP_NEVER);
}

Test(tj_depend, singleton_waits_for_an_older_job_of_its_name)
{
	char msg[512];

	cr_assert_eq(decide("{\"items\":[{\"type\":\"singleton\"}]}", NULL, 0, "train-x7k2p", msg),
		     TJ_DEP_WAIT);
	cr_assert(strstr(msg, "train-x7k2p"), "%s", msg);
	cr_assert_eq(decide("{\"items\":[{\"type\":\"singleton\"}]}", NULL, 0, NULL, NULL),
		     TJ_DEP_MET);
}

/* A target deleted after it met its item stays met: what was recorded is not asked again. */
Test(tj_depend, a_pair_recorded_as_met_stays_met_when_its_job_is_gone)
{
	struct trainingjob tj;
	struct tj_dep_verdict v;
	struct tj_dep_target t[] = { GONE("1"), T("2", TJ_PHASE_SUCCEEDED, true) };

	job_with(&tj, "{\"items\":[{\"type\":\"afterok\",\"jobs\":[\"1\",\"2\"]}]}",
		 "\"dependency\":{\"met\":false,\"satisfied\":[\"afterok:1\"]}");
	cr_assert_eq(tj_dep_decide(&tj, t, 2, NULL, &v), 0);
	cr_assert_eq(v.state, TJ_DEP_MET);
	cr_assert_eq(v.n_satisfied, 1);
	cr_assert_str_eq(v.satisfied[0], "afterok:2");
	tj_dep_verdict_release(&v);
	tj_release(&tj);
}

/* The key a job is filed under in the singleton index; "" when it is filed under none. */
static void filed_under(const char *json, char *out, size_t size)
{
	json_t *obj = json_loads(json, 0, NULL), *values = json_array();

	cr_assert(obj && values, "%s", json);
	cr_assert_eq(tj_singleton_index(obj, values, NULL), 0);
	cr_assert_leq(json_array_size(values), 1);
	snprintf(out, size, "%s", json_array_size(values) ?
		 json_string_value(json_array_get(values, 0)) : "");
	json_decref(values);
	json_decref(obj);
}

Test(tj_depend, a_job_is_indexed_by_namespace_slurm_name_and_submitter_until_it_ends)
{
	char key[256], want[256];

	filed_under("{\"metadata\":{\"name\":\"j1\",\"namespace\":\"ml\",\"labels\":"
		    "{\"cadre.dev/slurm-name\":\"train\"},\"annotations\":"
		    "{\"cadre.dev/submitted-by\":\"alice\"}},\"status\":{\"phase\":\"Running\"}}",
		    key, sizeof(key));
	tj_singleton_key("ml", "train", "alice", want, sizeof(want));
	cr_assert_str_eq(key, want);
	/* No label: its name; no submitter: "". */
	filed_under("{\"metadata\":{\"name\":\"j2\",\"namespace\":\"ml\"}}", key, sizeof(key));
	tj_singleton_key("ml", "j2", NULL, want, sizeof(want));
	cr_assert_str_eq(key, want);
	/* Finished: it holds nobody back, so it is not filed at all. */
	filed_under("{\"metadata\":{\"name\":\"j3\",\"namespace\":\"ml\"},\"status\":"
		    "{\"phase\":\"Failed\"}}", key, sizeof(key));
	cr_assert_str_eq(key, "");
	/* Groups differ in any part. */
	tj_singleton_key("ml", "train", "bob", key, sizeof(key));
	tj_singleton_key("ml", "train", "alice", want, sizeof(want));
	cr_assert_str_neq(key, want);
}
