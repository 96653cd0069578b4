#include <criterion/criterion.h>

#include "controller/manager/expect.h"

Test(expect, a_pending_create_holds_the_job_until_observed)
{
	struct expect *e = expect_new(1000);

	cr_assert(expect_satisfied(e, "ns/job", 0));
	cr_assert_eq(expect_create(e, "ns/job", "job-0", 0), 0);
	cr_assert_eq(expect_create(e, "ns/job", "job-1", 0), 0);
	cr_assert_not(expect_satisfied(e, "ns/job", 10));
	cr_assert(expect_satisfied(e, "ns/other", 10));
	expect_observed_create(e, "ns/job", "job-0");
	cr_assert_not(expect_satisfied(e, "ns/job", 10));
	expect_observed_create(e, "ns/job", "job-1");
	cr_assert(expect_satisfied(e, "ns/job", 10));
	expect_free(e);
}

Test(expect, deletes_and_creates_are_separate)
{
	struct expect *e = expect_new(1000);

	expect_delete(e, "ns/job", "job-0", 0);
	expect_observed_create(e, "ns/job", "job-0");
	cr_assert_not(expect_satisfied(e, "ns/job", 1));
	expect_observed_delete(e, "ns/job", "job-0");
	cr_assert(expect_satisfied(e, "ns/job", 1));
	expect_free(e);
}

Test(expect, expectations_expire_so_a_lost_event_cannot_wedge_a_job)
{
	struct expect *e = expect_new(1000);

	expect_create(e, "ns/job", "job-0", 100);
	cr_assert_not(expect_satisfied(e, "ns/job", 1099));
	cr_assert(expect_satisfied(e, "ns/job", 1100));
	expect_free(e);
}

Test(expect, forget_drops_everything_for_a_job)
{
	struct expect *e = expect_new(1000);

	expect_create(e, "ns/job", "job-0", 0);
	expect_delete(e, "ns/job", "job-1", 0);
	expect_create(e, "ns/keep", "keep-0", 0);
	expect_forget(e, "ns/job");
	cr_assert(expect_satisfied(e, "ns/job", 1));
	cr_assert_not(expect_satisfied(e, "ns/keep", 1));
	expect_free(e);
}

Test(expect, our_own_deletes_are_known_until_seen)
{
	struct expect *e = expect_new(1000);

	cr_assert_not(expect_deleting(e, "ns/job", "job-0", 0));
	expect_delete(e, "ns/job", "job-0", 0);
	cr_assert(expect_deleting(e, "ns/job", "job-0", 1));
	cr_assert_not(expect_deleting(e, "ns/job", "job-1", 1));
	expect_observed_delete(e, "ns/job", "job-0");
	cr_assert_not(expect_deleting(e, "ns/job", "job-0", 1));
	expect_free(e);
}

Test(expect, a_status_write_holds_the_version_it_was_based_on)
{
	struct expect *e = expect_new(1000);

	cr_assert(expect_status_fresh(e, "ns/job", "41", 0));
	cr_assert_eq(expect_status_written(e, "ns/job", "41", 0), 0);
	cr_assert(expect_satisfied(e, "ns/job", 1), "status writes are not pod expectations");
	cr_assert_not(expect_status_fresh(e, "ns/job", "41", 1));
	cr_assert(expect_status_fresh(e, "ns/other", "41", 1));
	cr_assert(expect_status_fresh(e, "ns/job", "42", 1));
	cr_assert(expect_status_fresh(e, "ns/job", "41", 2), "forgotten once the cache moved on");
	expect_status_written(e, "ns/job", "43", 10);
	cr_assert(expect_status_fresh(e, "ns/job", "43", 1010), "expires");
	expect_free(e);
}

Test(expect, a_quiet_time_lasts_until_its_end_is_replaced_by_a_later_one_and_holds_nothing_back)
{
	struct expect *e = expect_new(1000);

	cr_assert_eq(expect_quiet_until(e, "ns/job", 0), 0, "none recorded");
	cr_assert_eq(expect_quiet(e, "ns/job", 10000), 0);
	cr_assert_eq(expect_quiet_until(e, "ns/job", 5000), 10000,
		     "its own end, not the expectations' timeout");
	cr_assert_eq(expect_quiet_until(e, "ns/other", 5000), 0);
	cr_assert(expect_satisfied(e, "ns/job", 5000), "a quiet time creates nothing to wait for");
	cr_assert(expect_status_fresh(e, "ns/job", "1", 5000), "nor is it a status write");
	cr_assert_eq(expect_quiet(e, "ns/job", 20000), 0);
	cr_assert_eq(expect_quiet_until(e, "ns/job", 15000), 20000, "the later write replaces it");
	cr_assert_eq(expect_quiet_until(e, "ns/job", 20000), 0, "over at its end");
	expect_quiet(e, "ns/job", 30000);
	expect_forget(e, "ns/job");
	cr_assert_eq(expect_quiet_until(e, "ns/job", 25000), 0, "gone with its job");
	expect_free(e);
}
