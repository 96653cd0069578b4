/*
 * controller/manager/jobmemo.h: what the reconciler remembers between passes
 * that the caches cannot show yet: an admission whose stored status has not
 * come back through the watch, and the last refused create, so the planner
 * can say why a pod never appears.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "base/err.h"
#include "controller/manager/jobmemo.h"

static struct kube_status refused(long http_status, const char *message)
{
	struct kube_status st = { .code = -11, .http_status = http_status };

	snprintf(st.reason, sizeof(st.reason), "%s", "Forbidden");
	snprintf(st.message, sizeof(st.message), "%s", message);
	return st;
}

Test(jobmemo, only_an_answer_of_the_api_server_refusing_the_object_is_final)
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
	st.http_status = 403;
	st.code = CADRE_ETERMINATING;
	cr_assert_not(refusal_is_final(&st), "a namespace being deleted refuses everything");
}

Test(jobmemo, a_refusal_is_remembered_with_the_time_of_the_first_of_its_attempt)
{
	struct jobmemo *r = jobmemo_new(1000);
	struct kube_status st = refused(403, "first");
	struct refusal got;

	cr_assert_not_null(r);
	cr_assert_eq(jobmemo_refused(r, "ml/llama", "u-1", "llama-0", 0, 2, &st, 100), 0);
	st = refused(403, "second");
	cr_assert_eq(jobmemo_refused(r, "ml/llama", "u-1", "llama-0", 0, 2, &st, 130), 0);
	cr_assert(jobmemo_refusal(r, "ml/llama", "u-1", 2, &got));
	cr_assert_str_eq(got.pod, "llama-0");
	cr_assert_str_eq(got.reason, "Forbidden");
	cr_assert_str_eq(got.message, "second");
	cr_assert_eq(got.first_time, 100);
	cr_assert_eq(got.time, 130);
	cr_assert_eq(got.attempt, 2);
	cr_assert_not(jobmemo_refusal(r, "ml/other", "u-1", 2, &got));
	jobmemo_free(r);
}

Test(jobmemo, a_successful_create_of_that_pod_clears_it_another_pod_does_not)
{
	struct jobmemo *r = jobmemo_new(1000);
	struct kube_status st = refused(403, "exceeded quota");
	struct refusal got;

	jobmemo_refused(r, "ml/llama", "u-1", "llama-1", 1, 0, &st, 100);
	jobmemo_created(r, "ml/llama", "llama-0");
	cr_assert(jobmemo_refusal(r, "ml/llama", "u-1", 0, &got));
	jobmemo_created(r, "ml/llama", "llama-1");
	cr_assert_not(jobmemo_refusal(r, "ml/llama", "u-1", 0, &got));
	jobmemo_free(r);
}

Test(jobmemo, another_attempt_or_a_new_job_of_the_same_name_drops_it)
{
	struct jobmemo *r = jobmemo_new(1000);
	struct kube_status st = refused(403, "violates PodSecurity");
	struct refusal got;

	jobmemo_refused(r, "ml/llama", "u-1", "llama-0", 0, 0, &st, 100);
	cr_assert_not(jobmemo_refusal(r, "ml/llama", "u-1", 1, &got));
	cr_assert_not(jobmemo_refusal(r, "ml/llama", "u-1", 0, &got), "dropped, not hidden");
	jobmemo_refused(r, "ml/llama", "u-1", "llama-0", 0, 0, &st, 100);
	cr_assert_not(jobmemo_refusal(r, "ml/llama", "u-2", 0, &got));
	/* A new attempt starts its own clock. */
	jobmemo_refused(r, "ml/llama", "u-1", "llama-0", 0, 0, &st, 100);
	jobmemo_refused(r, "ml/llama", "u-1", "llama-0", 0, 1, &st, 300);
	cr_assert(jobmemo_refusal(r, "ml/llama", "u-1", 1, &got));
	cr_assert_eq(got.first_time, 300);
	jobmemo_forget(r, "ml/llama");
	cr_assert_not(jobmemo_refusal(r, "ml/llama", "u-1", 1, &got));
	jobmemo_free(r);
}

Test(jobmemo, a_null_table_remembers_nothing_and_never_crashes)
{
	struct kube_status st = refused(403, "x");
	struct refusal got;

	cr_assert_eq(jobmemo_refused(NULL, "ml/llama", "u-1", "llama-0", 0, 0, &st, 1), 0);
	cr_assert_not(jobmemo_refusal(NULL, "ml/llama", "u-1", 0, &got));
	jobmemo_created(NULL, "ml/llama", "llama-0");
	jobmemo_forget(NULL, "ml/llama");
	jobmemo_free(NULL);
}

static const char *const two_nodes[] = { "n0", "n1" };

Test(jobmemo, an_admission_counts_for_its_job_uid_and_attempt_with_its_message_and_nodes)
{
	struct jobmemo *t = jobmemo_new(1000);
	struct jobmemo_admission got;

	cr_assert_eq(jobmemo_admit(t, "ns/a", "uid-a", 2, "admitted: 2 pods on n0, n1", two_nodes,
				   2, 100), 0);
	cr_assert(jobmemo_admitted(t, "ns/a", "uid-a", 2, 200, &got));
	cr_assert_str_eq(got.message, "admitted: 2 pods on n0, n1");
	cr_assert_eq(got.n_nodes, 2);
	cr_assert_str_eq(got.nodes[0], "n0");
	cr_assert_str_eq(got.nodes[1], "n1");
	jobmemo_admission_release(&got);
	cr_assert_not(jobmemo_admitted(t, "ns/b", "uid-a", 2, 200, NULL));
	jobmemo_free(t);
}

Test(jobmemo, another_attempt_or_uid_drops_the_admission)
{
	struct jobmemo *t = jobmemo_new(1000);

	cr_assert_eq(jobmemo_admit(t, "ns/a", "uid-a", 0, "m", two_nodes, 2, 100), 0);
	cr_assert_not(jobmemo_admitted(t, "ns/a", "uid-a", 1, 200, NULL));
	cr_assert_eq(jobmemo_len(t), 0);
	cr_assert_eq(jobmemo_admit(t, "ns/a", "uid-a", 0, "m", two_nodes, 2, 100), 0);
	cr_assert_not(jobmemo_admitted(t, "ns/a", "uid-other", 0, 200, NULL));
	cr_assert_eq(jobmemo_len(t), 0);
	jobmemo_free(t);
}

Test(jobmemo, an_admission_expires_after_the_ttl_and_done_drops_only_it)
{
	struct jobmemo *t = jobmemo_new(1000);
	struct kube_status st = refused(403, "quota");
	struct refusal got;

	cr_assert_eq(jobmemo_admit(t, "ns/a", "uid-a", 0, "m", two_nodes, 2, 100), 0);
	cr_assert(jobmemo_admitted(t, "ns/a", "uid-a", 0, 1099, NULL));
	cr_assert_not(jobmemo_admitted(t, "ns/a", "uid-a", 0, 1100, NULL));
	cr_assert_eq(jobmemo_len(t), 0);

	/* Both payloads on one entry: the admission seen in the cache leaves the refusal. */
	cr_assert_eq(jobmemo_admit(t, "ns/a", "uid-a", 0, "m", two_nodes, 2, 100), 0);
	cr_assert_eq(jobmemo_refused(t, "ns/a", "uid-a", "a-1", 1, 0, &st, 5), 0);
	cr_assert_eq(jobmemo_len(t), 1);
	jobmemo_admission_done(t, "ns/a");
	cr_assert_not(jobmemo_admitted(t, "ns/a", "uid-a", 0, 200, NULL));
	cr_assert(jobmemo_refusal(t, "ns/a", "uid-a", 0, &got));
	jobmemo_created(t, "ns/a", "a-1");
	cr_assert_eq(jobmemo_len(t), 0, "an entry with nothing left goes");
	jobmemo_free(t);
}

Test(jobmemo, admitting_again_replaces_and_forget_removes)
{
	struct jobmemo *t = jobmemo_new(1000);
	static const char *const other[] = { "n7" };
	struct jobmemo_admission got;

	cr_assert_eq(jobmemo_admit(t, "ns/a", "uid-a", 0, "first", two_nodes, 2, 100), 0);
	cr_assert_eq(jobmemo_admit(t, "ns/b", "uid-b", 0, "b", two_nodes, 2, 100), 0);
	cr_assert_eq(jobmemo_admit(t, "ns/a", "uid-a", 1, "second", other, 1, 150), 0);
	cr_assert_eq(jobmemo_len(t), 2);
	cr_assert(jobmemo_admitted(t, "ns/a", "uid-a", 1, 200, &got));
	cr_assert_str_eq(got.message, "second");
	cr_assert_eq(got.n_nodes, 1);
	cr_assert_str_eq(got.nodes[0], "n7");
	jobmemo_admission_release(&got);
	jobmemo_forget(t, "ns/a");
	jobmemo_forget(t, "ns/none");
	cr_assert_eq(jobmemo_len(t), 1);
	cr_assert(jobmemo_admitted(t, "ns/b", "uid-b", 0, 200, NULL));
	jobmemo_free(t);
}

Test(jobmemo, a_null_table_records_no_admission_and_never_crashes)
{
	struct jobmemo_admission got;

	cr_assert_eq(jobmemo_admit(NULL, "ns/a", "u", 0, "m", two_nodes, 2, 1), 0);
	cr_assert_not(jobmemo_admitted(NULL, "ns/a", "u", 0, 1, &got));
	cr_assert_null(got.nodes);
	jobmemo_admission_done(NULL, "ns/a");
	cr_assert_eq(jobmemo_len(NULL), 0);
}
