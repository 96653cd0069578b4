/*
 * What a TrainingJob is to built-in gang admission
 * (controller/admission/candidate.h): the one answer the capacity records,
 * admission's walk and the planner share.
 */
#include <criterion/criterion.h>

#include <jansson.h>
#include <string.h>

#include "api/fielderr.h"
#include "api/trainingjob.h"
#include "controller/admission/candidate.h"

/* A valid 2-node job in phase, with status and spec members merged in. */
static enum tj_candidacy candidacy_of(const char *phase, const char *spec_extra,
				      const char *status_extra, int64_t *not_before,
				      const char **why)
{
	json_t *obj = json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:{s:i, s:s, s:s}, s:{s:s}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob", "metadata", "name", "j",
		"namespace", "ml", "uid", "u-1", "creationTimestamp", "2026-12-01T00:00:00Z",
		"spec", "numNodes", 2, "image", "img", "run", "true", "status", "phase", phase);
	struct field_errors errs;
	struct trainingjob job;
	enum tj_candidacy c;

	cr_assert_not_null(obj);
	if (spec_extra) {
		json_t *more = json_loads(spec_extra, 0, NULL);

		cr_assert_not_null(more, "%s", spec_extra);
		json_object_update(json_object_get(obj, "spec"), more);
		json_decref(more);
	}
	if (status_extra) {
		json_t *more = json_loads(status_extra, 0, NULL);

		cr_assert_not_null(more, "%s", status_extra);
		json_object_update(json_object_get(obj, "status"), more);
		json_decref(more);
	}
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(obj, &job, &errs), 0);
	cr_assert_eq(tj_validate(&job, &errs), 0, "%s", field_errors_count(&errs) ?
		     field_errors_at(&errs, 0)->message : "");
	c = tj_candidacy(&job, not_before, why);
	field_errors_release(&errs);
	tj_release(&job);
	json_decref(obj);
	return c;
}

static const char admitted[] =
	"{\"conditions\":[{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\","
	"\"lastTransitionTime\":\"2026-12-01T00:00:00Z\"}]}";

Test(candidate, a_queued_job_waits_and_an_admitted_one_holds)
{
	const char *why = "x";

	cr_assert_eq(candidacy_of("Queued", NULL, NULL, NULL, &why), CANDIDACY_WAITS);
	cr_assert_str_eq(why, "");
	cr_assert_eq(candidacy_of("", NULL, NULL, NULL, NULL), CANDIDACY_WAITS, "a new job");
	cr_assert_eq(candidacy_of("Starting", NULL, admitted, NULL, NULL), CANDIDACY_HOLDS);
	cr_assert_eq(candidacy_of("Running", NULL, admitted, NULL, NULL), CANDIDACY_HOLDS);
}

/* Restarting in place, the gang keeps its admission and its nodes; recreated, it holds none. */
Test(candidate, a_gang_restarting_in_place_still_holds)
{
	static const char in_place[] =
		"{\"infraRestarts\":1,\"inPlaceRestart\":{\"attempt\":1,\"time\":"
		"\"2026-12-01T00:00:00Z\"},\"conditions\":[{\"type\":\"Admitted\",\"status\":"
		"\"True\",\"reason\":\"Admitted\",\"lastTransitionTime\":\"2026-12-01T00:00:00Z\"}]}";
	static const char an_earlier_one[] =
		"{\"infraRestarts\":2,\"inPlaceRestart\":{\"attempt\":1,\"time\":"
		"\"2026-12-01T00:00:00Z\"}}";

	cr_assert_eq(candidacy_of("Restarting", "{\"restartStrategy\":\"InPlace\"}", in_place,
				  NULL, NULL), CANDIDACY_HOLDS);
	cr_assert_eq(candidacy_of("Restarting", "{\"restartStrategy\":\"InPlace\"}",
				  an_earlier_one, NULL, NULL), CANDIDACY_NONE);
}

Test(candidate, jobs_that_cannot_start_now_take_no_room_and_say_why)
{
	static const struct {
		const char *phase, *spec, *status, *why;
	} none[] = {
		{ "Succeeded", NULL, NULL, "finished" },
		{ "Pending", NULL, NULL, "Pending" },
		{ "Restarting", NULL, NULL, "restarting" },
		{ "Queued", "{\"suspend\":true}", NULL, "suspended" },
		{ "Queued", "{\"queue\":\"team-a\"}", NULL, "Kueue" },
		/* An array job runs no pods: its elements are the candidates. */
		{ "Running", "{\"array\":\"0-9\"}", admitted, "array job" },
		{ "Queued", "{\"array\":\"0-9%2\"}", NULL, "array job" },
		/* Held by a dependency or a singleton until it is met. */
		{ "Queued", "{\"dependency\":{\"items\":[{\"type\":\"afterok\",\"jobs\":[\"7\"]}]}}", NULL, "dependencies" },
		{ "Queued", "{\"dependency\":{\"items\":[{\"type\":\"singleton\"}]}}", NULL, "dependencies" },
		/* Its ConfigMap or Service refused: it could not use room given to it. */
		{ "Queued", NULL, "{\"conditions\":[{\"type\":\"Admitted\",\"status\":\"False\","
		  "\"reason\":\"CreateRefused\",\"message\":\"quota\"}]}", "refused" },
	};

	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		const char *why = NULL;

		cr_assert_eq(candidacy_of(none[i].phase, none[i].spec, none[i].status, NULL, &why),
			     CANDIDACY_NONE, "case %zu", i);
		cr_assert_not_null(strstr(why, none[i].why), "case %zu: %s", i, why);
	}
}

Test(candidate, a_met_dependency_or_a_started_job_is_a_candidate_again)
{
	cr_assert_eq(candidacy_of("Queued", "{\"dependency\":{\"items\":[{\"type\":\"afterok\",\"jobs\":[\"7\"]}]}}",
				  "{\"dependency\":{\"met\":true}}", NULL, NULL), CANDIDACY_WAITS);
	cr_assert_eq(candidacy_of("Queued", "{\"dependency\":{\"items\":[{\"type\":\"afterok\",\"jobs\":[\"7\"]}]}}",
				  "{\"admittedTime\":\"2026-12-01T00:00:00Z\"}", NULL, NULL),
		     CANDIDACY_WAITS, "a restart after it started waits for nothing but room");
}

Test(candidate, a_job_backing_off_waits_from_the_end_of_its_backoff)
{
	int64_t not_before = -1;

	cr_assert_eq(candidacy_of("Queued", NULL, NULL, &not_before, NULL), CANDIDACY_WAITS);
	cr_assert_eq(not_before, 0);
	cr_assert_eq(candidacy_of("Queued", NULL, "{\"restarts\":1,\"lastFailure\":{\"time\":"
				  "\"2026-12-01T00:00:00Z\",\"reason\":\"Error\"}}", &not_before,
				  NULL), CANDIDACY_WAITS);
	cr_assert_gt(not_before, 1764547200, "2026-12-01T00:00:00Z plus the backoff");
}
