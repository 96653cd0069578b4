/*
 * Unique Slurm job ids (controller/manager/jobids.h): a job whose first
 * probe another job holds, or has claimed and not yet stored, takes the
 * next; a claim is kept for its own job, and stored ids are found by index.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/trainingjob.h"
#include "base/err.h"
#include "controller/manager/jobids.h"

static struct store *jobs_store(void)
{
	struct store *s = store_new(NULL);

	cr_assert_not_null(s);
	cr_assert_eq(store_add_index(s, JOBIDS_INDEX, jobids_index, NULL), 0);
	return s;
}

/* Store job name (uid) in namespace ns holding id (NULL: none yet). */
static void put_job(struct store *s, const char *ns, const char *name, const char *uid,
		    const char *id)
{
	json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:o}", "apiVersion",
				"cadre.dev/v1alpha1", "kind", "TrainingJob", "metadata", "name", name,
				"namespace", ns, "uid", uid, "status",
				id ? json_pack("{s:s}", "jobId", id) : json_object());

	cr_assert_not_null(obj);
	cr_assert_eq(store_upsert(s, obj), 0);
	json_decref(obj);
}

Test(jobids, a_job_takes_its_first_probe_when_no_one_holds_it)
{
	struct store *s = jobs_store();
	struct jobids *ids = jobids_new();
	char id[16], want[16];

	tj_job_id("uid-a", want);
	cr_assert_eq(jobids_claim(ids, s, "uid-a", id), 0);
	cr_assert_str_eq(id, want);
	/* Claimed again before its status is stored: the same id. */
	cr_assert_eq(jobids_claim(ids, s, "uid-a", id), 0);
	cr_assert_str_eq(id, want);
	jobids_free(ids);
	store_free(s);
}

/* Two jobs whose uids hash to one id: the second takes the next probe, stored or only claimed. */
Test(jobids, an_id_another_job_holds_or_claimed_is_passed_over)
{
	struct store *s = jobs_store();
	struct jobids *ids = jobids_new();
	char first[16], next[16], id[16];

	tj_job_id_probe("uid-b", 0, first);
	tj_job_id_probe("uid-b", 1, next);
	cr_assert_eq(strlen(first), 9);
	cr_assert_str_neq(first, next);
	/* Another job, in another namespace, already stored uid-b's first id. */
	put_job(s, "team-x", "other", "uid-other", first);
	cr_assert_eq(jobids_claim(ids, s, "uid-b", id), 0);
	cr_assert_str_eq(id, next);
	cr_assert_eq(jobids_claim(ids, s, "uid-b", id), 0);
	cr_assert_str_eq(id, next, "the claim is kept for its own job");
	jobids_free(ids);
	store_free(s);
}

static long id_of(const char *uid, unsigned k)
{
	char id[16];

	tj_job_id_probe(uid, k, id);
	return strtol(id, NULL, 10);
}

static int by_id(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/*
 * An id claimed and not yet stored (two passes at once) is passed over by
 * another job whose probes reach it: among 50,000 uids two lie within
 * 256 ids of each other; the lower one's probes up to the other's
 * id are squatted, the other claims its id first, unstored, and the lower
 * one must take the probe after it.
 */
Test(jobids, an_id_claimed_but_not_yet_stored_is_passed_over)
{
	struct store *s = jobs_store();
	struct jobids *ids = jobids_new();
	enum { N = 50000 };
	static struct near { long id; int i; } all[N];
	char lo_uid[32] = "", hi_uid[32] = "", id[16], want[16];
	long d = 0;

	for (int i = 0; i < N; i++) {
		char uid[32];

		snprintf(uid, sizeof(uid), "uid-%d", i);
		all[i] = (struct near){ id_of(uid, 0), i };
	}
	qsort(all, N, sizeof(all[0]), by_id);
	for (int k = 1; k < N && !d; k++)
		if (all[k].id - all[k - 1].id > 0 && all[k].id - all[k - 1].id < 256) {
			d = all[k].id - all[k - 1].id;
			snprintf(lo_uid, sizeof(lo_uid), "uid-%d", all[k - 1].i);
			snprintf(hi_uid, sizeof(hi_uid), "uid-%d", all[k].i);
		}
	cr_assert_gt(d, 0, "no two uids close enough");
	for (long k = 0; k < d; k++) {
		char name[32], uid[32], probe[16];

		tj_job_id_probe(lo_uid, (unsigned)k, probe);
		snprintf(name, sizeof(name), "squat-%ld", k);
		snprintf(uid, sizeof(uid), "squat-uid-%ld", k);
		put_job(s, "ml", name, uid, probe);
	}
	cr_assert_eq(jobids_claim(ids, s, hi_uid, id), 0);
	tj_job_id(hi_uid, want);
	cr_assert_str_eq(id, want);
	cr_assert_eq(jobids_claim(ids, s, lo_uid, id), 0);
	tj_job_id_probe(lo_uid, (unsigned)d + 1, want);
	cr_assert_str_eq(id, want, "%s took %s's claimed id", lo_uid, hi_uid);
	jobids_free(ids);
	store_free(s);
}

Test(jobids, a_claim_seen_stored_is_forgotten_and_the_id_stays_its_jobs)
{
	struct store *s = jobs_store();
	struct jobids *ids = jobids_new();
	char id[16], again[16];

	cr_assert_eq(jobids_claim(ids, s, "uid-c", id), 0);
	put_job(s, "ml", "c", "uid-c", id);
	/* Now stored: another job whose probes reach it is refused it by the index alone. */
	cr_assert_eq(jobids_claim(ids, s, "uid-c", again), 0);
	cr_assert_str_eq(again, id);
	cr_assert_eq(jobids_claim(ids, s, "", again), CADRE_EINVAL);
	cr_assert_eq(jobids_claim(ids, s, NULL, again), CADRE_EINVAL);
	jobids_free(ids);
	store_free(s);
}

/*
 * Many jobs at once, every one of them colliding on purpose with the ids
 * stored before it: no two ever share an id.
 */
Test(jobids, ids_are_unique_across_many_jobs)
{
	struct store *s = jobs_store();
	struct jobids *ids = jobids_new();
	enum { N = 300 };
	char got[N][16];

	for (int i = 0; i < N; i++) {
		char uid[32], name[32], probe[16];

		snprintf(uid, sizeof(uid), "uid-%d", i);
		snprintf(name, sizeof(name), "job-%d", i);
		/* Squat on this job's first two probes with other jobs' stored ids. */
		for (unsigned k = 0; k < 2; k++) {
			char squatter[32], sq_uid[32];

			tj_job_id_probe(uid, k, probe);
			snprintf(squatter, sizeof(squatter), "sq-%d-%u", i, k);
			snprintf(sq_uid, sizeof(sq_uid), "sq-uid-%d-%u", i, k);
			put_job(s, "ml", squatter, sq_uid, probe);
		}
		cr_assert_eq(jobids_claim(ids, s, uid, got[i]), 0);
		tj_job_id_probe(uid, 2, probe);
		cr_assert_str_eq(got[i], probe);
		if (i % 2)
			put_job(s, "ml", name, uid, got[i]);
	}
	for (int i = 0; i < N; i++)
		for (int j = i + 1; j < N; j++)
			cr_assert_str_neq(got[i], got[j]);
	jobids_free(ids);
	store_free(s);
}
