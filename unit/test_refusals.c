/*
 * The refused-create memory of controller/trainingjob/refusals.h: what the reconciler
 * remembers between passes so the planner can say why a pod never appears.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/trainingjob/refusals.h"

static struct kube_status refused(long http_status, const char *message)
{
	struct kube_status st = { .code = -11, .http_status = http_status };

	snprintf(st.reason, sizeof(st.reason), "%s", "Forbidden");
	snprintf(st.message, sizeof(st.message), "%s", message);
	return st;
}

Test(refusals, only_an_answer_of_the_api_server_refusing_the_object_is_final)
{
	struct kube_status st = refused(403, "violates PodSecurity");

	cr_assert(refusal_is_final(&st));
	st.http_status = 400;
	cr_assert(refusal_is_final(&st), "a webhook's denial");
	st.http_status = 422;
	cr_assert(refusal_is_final(&st));
	st.http_status = 500;
	cr_assert_not(refusal_is_final(&st), "a webhook that is down is not a refusal");
	st.http_status = 429;
	cr_assert_not(refusal_is_final(&st));
	st.http_status = 0;
	cr_assert_not(refusal_is_final(&st), "no answer at all");
}

Test(refusals, a_refusal_is_remembered_with_the_time_of_the_first_of_its_attempt)
{
	struct refusals *r = refusals_new();
	struct kube_status st = refused(403, "first");
	struct refusal got;

	cr_assert_not_null(r);
	cr_assert_eq(refusals_record(r, "ml/llama", "u-1", "llama-0", 0, 2, &st, 100), 0);
	st = refused(403, "second");
	cr_assert_eq(refusals_record(r, "ml/llama", "u-1", "llama-0", 0, 2, &st, 130), 0);
	cr_assert(refusals_get(r, "ml/llama", "u-1", 2, &got));
	cr_assert_str_eq(got.pod, "llama-0");
	cr_assert_str_eq(got.reason, "Forbidden");
	cr_assert_str_eq(got.message, "second");
	cr_assert_eq(got.first_time, 100);
	cr_assert_eq(got.time, 130);
	cr_assert_eq(got.attempt, 2);
	cr_assert_not(refusals_get(r, "ml/other", "u-1", 2, &got));
	refusals_free(r);
}

Test(refusals, a_successful_create_of_that_pod_clears_it_another_pod_does_not)
{
	struct refusals *r = refusals_new();
	struct kube_status st = refused(403, "exceeded quota");
	struct refusal got;

	refusals_record(r, "ml/llama", "u-1", "llama-1", 1, 0, &st, 100);
	refusals_created(r, "ml/llama", "llama-0");
	cr_assert(refusals_get(r, "ml/llama", "u-1", 0, &got));
	refusals_created(r, "ml/llama", "llama-1");
	cr_assert_not(refusals_get(r, "ml/llama", "u-1", 0, &got));
	refusals_free(r);
}

Test(refusals, another_attempt_or_a_new_job_of_the_same_name_drops_it)
{
	struct refusals *r = refusals_new();
	struct kube_status st = refused(403, "violates PodSecurity");
	struct refusal got;

	refusals_record(r, "ml/llama", "u-1", "llama-0", 0, 0, &st, 100);
	cr_assert_not(refusals_get(r, "ml/llama", "u-1", 1, &got));
	cr_assert_not(refusals_get(r, "ml/llama", "u-1", 0, &got), "dropped, not hidden");
	refusals_record(r, "ml/llama", "u-1", "llama-0", 0, 0, &st, 100);
	cr_assert_not(refusals_get(r, "ml/llama", "u-2", 0, &got));
	/* A new attempt starts its own clock. */
	refusals_record(r, "ml/llama", "u-1", "llama-0", 0, 0, &st, 100);
	refusals_record(r, "ml/llama", "u-1", "llama-0", 0, 1, &st, 300);
	cr_assert(refusals_get(r, "ml/llama", "u-1", 1, &got));
	cr_assert_eq(got.first_time, 300);
	refusals_forget(r, "ml/llama");
	cr_assert_not(refusals_get(r, "ml/llama", "u-1", 1, &got));
	refusals_free(r);
}

Test(refusals, a_null_table_remembers_nothing_and_never_crashes)
{
	struct kube_status st = refused(403, "x");
	struct refusal got;

	cr_assert_eq(refusals_record(NULL, "ml/llama", "u-1", "llama-0", 0, 0, &st, 1), 0);
	cr_assert_not(refusals_get(NULL, "ml/llama", "u-1", 0, &got));
	refusals_created(NULL, "ml/llama", "llama-0");
	refusals_forget(NULL, "ml/llama");
	refusals_free(NULL);
}
