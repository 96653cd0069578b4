/* Admissions not yet seen in the cache: what a record counts for, and when it goes. */
#include <criterion/criterion.h>

#include <stdlib.h>

#include "controller/admission/admitted.h"

static struct admitted *a;

static void setup(void)
{
	a = admitted_new(1000);
	cr_assert_not_null(a);
}

static void teardown(void)
{
	admitted_free(a);
}

TestSuite(admitted, .init = setup, .fini = teardown);

Test(admitted, a_record_counts_for_its_job_uid_and_attempt_with_its_message)
{
	char *msg = NULL;

	cr_assert_eq(admitted_record(a, "ns/a", "uid-a", 2, "admitted: 2 pods on n0, n1", 100), 0);
	cr_assert(admitted_pending(a, "ns/a", "uid-a", 2, 200, &msg));
	cr_assert_str_eq(msg, "admitted: 2 pods on n0, n1");
	free(msg);
	cr_assert_not(admitted_pending(a, "ns/b", "uid-a", 2, 200, NULL));
}

Test(admitted, another_attempt_or_uid_drops_the_record)
{
	cr_assert_eq(admitted_record(a, "ns/a", "uid-a", 0, "m", 100), 0);
	cr_assert_not(admitted_pending(a, "ns/a", "uid-a", 1, 200, NULL));
	cr_assert_eq(admitted_len(a), 0);
	cr_assert_eq(admitted_record(a, "ns/a", "uid-a", 0, "m", 100), 0);
	cr_assert_not(admitted_pending(a, "ns/a", "uid-other", 0, 200, NULL));
	cr_assert_eq(admitted_len(a), 0);
}

Test(admitted, a_record_expires_after_the_ttl)
{
	cr_assert_eq(admitted_record(a, "ns/a", "uid-a", 0, "m", 100), 0);
	cr_assert(admitted_pending(a, "ns/a", "uid-a", 0, 1099, NULL));
	cr_assert_not(admitted_pending(a, "ns/a", "uid-a", 0, 1100, NULL));
	cr_assert_eq(admitted_len(a), 0);
}

Test(admitted, recording_again_replaces_and_forget_removes)
{
	char *msg = NULL;

	cr_assert_eq(admitted_record(a, "ns/a", "uid-a", 0, "first", 100), 0);
	cr_assert_eq(admitted_record(a, "ns/b", "uid-b", 0, "b", 100), 0);
	cr_assert_eq(admitted_record(a, "ns/a", "uid-a", 1, "second", 150), 0);
	cr_assert_eq(admitted_len(a), 2);
	cr_assert(admitted_pending(a, "ns/a", "uid-a", 1, 200, &msg));
	cr_assert_str_eq(msg, "second");
	free(msg);
	admitted_forget(a, "ns/a");
	admitted_forget(a, "ns/none");
	cr_assert_eq(admitted_len(a), 1);
	cr_assert(admitted_pending(a, "ns/b", "uid-b", 0, 200, NULL));
}

Test(admitted, many_records_grow_the_table)
{
	char key[32];

	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "ns/j%d", i);
		cr_assert_eq(admitted_record(a, key, "u", 0, "m", 0), 0);
	}
	cr_assert_eq(admitted_len(a), 100);
	cr_assert(admitted_pending(a, "ns/j57", "u", 0, 10, NULL));
}
