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
	cr_assert_eq(tj_dep_decide(&tj, t, n, singleton_by, NULL, &v), 0);
	s = v.state;
	if (message)
		snprintf(message, 512, "%s", v.message);
	tj_dep_verdict_release(&v);
	tj_release(&tj);
	return s;
}

#define ITEM(type, job) "{\"items\":[{\"type\":\"" type "\",\"jobs\":[\"" job "\"]}]}"
#define T(ref, phase, started) { ref, true, phase, started, false, false }
/* Seen by an earlier pass, not there now: deleted. */
#define GONE(ref) { ref, false, TJ_PHASE_UNSET, false, true, false }
/* Never there when the job looked. */
#define NEVER_SEEN(ref) { ref, false, TJ_PHASE_UNSET, false, false, false }

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

/* A job deleted since it was seen was cancelled; a name never seen may still be applied. */
Test(tj_depend, a_job_deleted_since_it_was_seen_was_cancelled_a_missing_name_is_waited_for)
{
	struct tj_dep_target gone = GONE("123"), gone_name = GONE("prep");
	struct tj_dep_target missing = NEVER_SEEN("prep");
	char msg[512];

	cr_assert_eq(decide(ITEM("afterok", "123"), &gone, 1, NULL, msg), TJ_DEP_NEVER);
	cr_assert(strstr(msg, "job 123 was cancelled (deleted)"), "%s", msg);
	cr_assert_eq(decide(ITEM("afterany", "123"), &gone, 1, NULL, NULL), TJ_DEP_MET);
	cr_assert_eq(decide(ITEM("afternotok", "123"), &gone, 1, NULL, NULL), TJ_DEP_MET);
	cr_assert_eq(decide(ITEM("afternotok", "prep"), &gone_name, 1, NULL, NULL), TJ_DEP_MET);
	cr_assert_eq(decide(ITEM("afterok", "prep"), &missing, 1, NULL, msg), TJ_DEP_WAIT);
	cr_assert_str_eq(msg, "waiting for dependency afterok:prep: job prep does not exist (yet)");
}

/*
 * A Slurm id no job ever had (applied with kubectl; sbatch refuses it):
 * Slurm refuses afterok and afternotok on it ("Job dependency problem")
 * and lifts after and afterany. Before, all but afterok were met at once.
 */
Test(tj_depend, an_id_no_job_ever_had_is_no_job_as_slurm_finds_at_submit)
{
	struct tj_dep_target none = NEVER_SEEN("123");
	struct tj_dep_target no_index = { "123_7", false, TJ_PHASE_UNSET, false, false, true };
	char msg[512];

	cr_assert_eq(decide(ITEM("afternotok", "123"), &none, 1, NULL, msg), TJ_DEP_NEVER);
	cr_assert(strstr(msg, "job 123 does not exist"), "%s", msg);
	cr_assert_eq(decide(ITEM("afterok", "123"), &none, 1, NULL, NULL), TJ_DEP_NEVER);
	cr_assert_eq(decide(ITEM("after", "123"), &none, 1, NULL, NULL), TJ_DEP_MET);
	cr_assert_eq(decide(ITEM("afterany", "123"), NULL, 0, NULL, NULL), TJ_DEP_MET);
	/* An index its array does not have is no job either. */
	cr_assert_eq(decide(ITEM("afterok", "123_7"), &no_index, 1, NULL, msg), TJ_DEP_NEVER);
	cr_assert(strstr(msg, "its array has no such index"), "%s", msg);
}

Test(tj_depend, a_cycle_can_never_be_met_and_every_job_found_is_recorded_as_seen)
{
	struct trainingjob tj;
	struct tj_dep_target t[2] = { T("123", TJ_PHASE_RUNNING, true), NEVER_SEEN("prep") };
	struct tj_dep_verdict v;

	job_with(&tj, ITEM("afterok", "123"), NULL);
	cr_assert_eq(tj_dep_decide(&tj, t, 2, NULL, NULL, &v), 0);
	cr_assert_eq(v.n_seen, 1);
	cr_assert_str_eq(v.seen[0], "123");
	tj_dep_verdict_release(&v);
	cr_assert_eq(tj_dep_decide(&tj, t, 2, NULL, "child -> a -> child", &v), 0);
	cr_assert_eq(v.state, TJ_DEP_NEVER);
	cr_assert_str_eq(v.message, "circular job dependency: child -> a -> child");
	tj_dep_verdict_release(&v);
	tj_release(&tj);
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
	cr_assert_eq(tj_dep_decide(&tj, t, 2, NULL, NULL, &v), 0);
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

Test(tj_depend, a_waiting_job_is_indexed_under_each_job_it_has_not_seen_meet_its_type)
{
	json_t *obj = json_loads(
		"{\"metadata\":{\"name\":\"c\",\"namespace\":\"ml\"},\"spec\":{\"dependency\":"
		"{\"items\":[{\"type\":\"afterok\",\"jobs\":[\"a\",\"123\"]}]}},"
		"\"status\":{\"phase\":\"Queued\",\"dependency\":{\"satisfied\":[\"afterok:a\"]}}}",
		0, NULL);
	json_t *values = json_array();

	cr_assert(obj && values);
	cr_assert_eq(tj_awaited_index(obj, values, NULL), 0);
	cr_assert_eq(json_array_size(values), 1, "a is met already");
	cr_assert_str_eq(json_string_value(json_array_get(values, 0)), "ml/123");
	/* Met, or started: it awaits nothing. */
	json_object_set_new(json_object_get(json_object_get(obj, "status"), "dependency"), "met",
			    json_true());
	json_array_clear(values);
	cr_assert_eq(tj_awaited_index(obj, values, NULL), 0);
	cr_assert_eq(json_array_size(values), 0);
	json_decref(values);
	json_decref(obj);
}
