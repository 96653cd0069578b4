#include <criterion/criterion.h>

#include "base/err.h"
#include "kube/workqueue.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A clock the test moves by hand. */
static _Atomic uint64_t fake_now_ms = 1000;

static uint64_t fake_clock(void *arg)
{
	(void)arg;
	return atomic_load(&fake_now_ms);
}

static void advance(struct wq *q, uint64_t ms)
{
	atomic_fetch_add(&fake_now_ms, ms);
	wq_tick(q);
}

static struct wq *fake_queue(double qps, unsigned burst)
{
	struct wq_options opts = { .now_ms = fake_clock, .qps = qps, .burst = burst };
	struct wq *q = wq_new(&opts);

	cr_assert_not_null(q);
	return q;
}

static void expect_get(struct wq *q, const char *want)
{
	char *key = NULL;

	cr_assert_eq(wq_get_timeout(q, &key, 1000), 0, "expected %s", want);
	cr_assert_str_eq(key, want);
	wq_done(q, key);
	free(key);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

Test(workqueue, a_key_queued_twice_is_handed_out_once)
{
	struct wq *q = fake_queue(0, 0);
	char *key;

	cr_assert_eq(wq_add(q, "ns/a"), 0);
	cr_assert_eq(wq_add(q, "ns/b"), 0);
	cr_assert_eq(wq_add(q, "ns/a"), 0);
	cr_assert_eq(wq_len(q), 2);
	expect_get(q, "ns/a");
	expect_get(q, "ns/b");
	cr_assert_eq(wq_len(q), 0);
	cr_assert_eq(wq_get_timeout(q, &key, 10), CADRE_ETIMEDOUT);
	wq_free(q);
}

Test(workqueue, a_key_added_while_processed_waits_for_done)
{
	struct wq *q = fake_queue(0, 0);
	char *key = NULL;

	wq_add(q, "ns/a");
	cr_assert_eq(wq_get(q, &key), 0);
	cr_assert_eq(wq_add(q, "ns/a"), 0);
	cr_assert_eq(wq_add(q, "ns/a"), 0);
	/* Not handed to a second worker while the first holds it. */
	cr_assert_eq(wq_len(q), 0);
	wq_done(q, key);
	free(key);
	cr_assert_eq(wq_len(q), 1);
	expect_get(q, "ns/a");
	cr_assert_eq(wq_len(q), 0);
	wq_free(q);
}

Test(workqueue, rejects_empty_keys)
{
	struct wq *q = fake_queue(0, 0);

	cr_assert_eq(wq_add(q, ""), CADRE_EINVAL);
	cr_assert_eq(wq_add(q, NULL), CADRE_EINVAL);
	wq_free(q);
}

/* Several workers, keys re-added while processed: never two at once. */
#define NKEYS 8
#define NWORKERS 4
#define ROUNDS 200

struct stress {
	struct wq *q;
	atomic_int in_flight[NKEYS];
	atomic_int overlaps;
	atomic_int processed;
};

static void *stress_worker(void *arg)
{
	struct stress *s = arg;
	char *key;

	while (wq_get(s->q, &key) == 0) {
		int k = (int)strtol(key + 4, NULL, 10);

		if (atomic_fetch_add(&s->in_flight[k], 1) != 0)
			atomic_fetch_add(&s->overlaps, 1);
		/* Re-added during processing: must come back, but only after done. */
		wq_add(s->q, key);
		sleep_ms(0);
		atomic_fetch_sub(&s->in_flight[k], 1);
		atomic_fetch_add(&s->processed, 1);
		wq_done(s->q, key);
		free(key);
	}
	return NULL;
}

Test(workqueue, the_same_key_is_never_processed_by_two_workers)
{
	struct stress s = { 0 };
	pthread_t workers[NWORKERS];
	char key[32];
	int i, r;

	s.q = wq_new(NULL);
	for (i = 0; i < NWORKERS; i++)
		pthread_create(&workers[i], NULL, stress_worker, &s);
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < NKEYS; i++) {
			snprintf(key, sizeof(key), "key-%d", i);
			cr_assert_eq(wq_add(s.q, key), 0);
		}
	}
	while (atomic_load(&s.processed) < ROUNDS)
		sleep_ms(1);
	wq_shutdown(s.q);
	for (i = 0; i < NWORKERS; i++)
		pthread_join(workers[i], NULL);
	cr_assert_eq(atomic_load(&s.overlaps), 0);
	wq_free(s.q);
}

Test(workqueue, rate_limited_backoff_doubles_from_5ms_and_is_capped_at_1000s)
{
	struct wq *q = fake_queue(-1, 0);
	uint64_t want = 5;
	char *key;
	unsigned i;

	for (i = 0; i < 30; i++) {
		cr_assert_eq(wq_add_rate_limited(q, "ns/a"), 0);
		cr_assert_eq(wq_num_requeues(q, "ns/a"), i + 1);
		advance(q, want - 1);
		cr_assert_eq(wq_len(q), 0, "failure %u: early at %llu ms", i,
			     (unsigned long long)want - 1);
		advance(q, 1);
		cr_assert_eq(wq_len(q), 1, "failure %u: not due at %llu ms", i,
			     (unsigned long long)want);
		cr_assert_eq(wq_get(q, &key), 0);
		wq_done(q, key);
		free(key);
		want = want * 2 > 1000000 ? 1000000 : want * 2;
	}
	cr_assert_eq(want, 1000000);
	wq_free(q);
}

Test(workqueue, forget_resets_the_backoff)
{
	struct wq *q = fake_queue(-1, 0);
	int i;

	for (i = 0; i < 3; i++) {
		wq_add_rate_limited(q, "ns/a");
		advance(q, 1000);
		expect_get(q, "ns/a");
	}
	cr_assert_eq(wq_num_requeues(q, "ns/a"), 3);
	wq_forget(q, "ns/a");
	cr_assert_eq(wq_num_requeues(q, "ns/a"), 0);
	wq_add_rate_limited(q, "ns/a");
	advance(q, 4);
	cr_assert_eq(wq_len(q), 0);
	advance(q, 1);
	cr_assert_eq(wq_len(q), 1);
	wq_free(q);
}

Test(workqueue, the_global_bucket_spaces_keys_past_its_burst)
{
	/* 10 qps, burst 2: two keys at their own 5 ms, then 100 ms apart. */
	struct wq *q = fake_queue(10, 2);

	wq_add_rate_limited(q, "a");
	wq_add_rate_limited(q, "b");
	wq_add_rate_limited(q, "c");
	wq_add_rate_limited(q, "d");
	advance(q, 5);
	cr_assert_eq(wq_len(q), 2);
	advance(q, 94);
	cr_assert_eq(wq_len(q), 2);
	advance(q, 1);
	cr_assert_eq(wq_len(q), 3);
	advance(q, 100);
	cr_assert_eq(wq_len(q), 4);
	expect_get(q, "a");
	expect_get(q, "b");
	expect_get(q, "c");
	expect_get(q, "d");
	wq_free(q);
}

Test(workqueue, add_after_releases_keys_in_due_order)
{
	struct wq *q = fake_queue(0, 0);

	wq_add_after(q, "a", 300);
	wq_add_after(q, "b", 100);
	wq_add_after(q, "c", 200);
	cr_assert_eq(wq_delayed_len(q), 3);
	advance(q, 99);
	cr_assert_eq(wq_len(q), 0);
	advance(q, 51);
	cr_assert_eq(wq_len(q), 1);
	expect_get(q, "b");
	advance(q, 100);
	expect_get(q, "c");
	advance(q, 100);
	expect_get(q, "a");
	cr_assert_eq(wq_delayed_len(q), 0);
	wq_free(q);
}

Test(workqueue, a_waiting_key_keeps_its_earliest_due_time)
{
	struct wq *q = fake_queue(0, 0);

	wq_add_after(q, "a", 500);
	wq_add_after(q, "a", 50);
	wq_add_after(q, "a", 900);
	cr_assert_eq(wq_delayed_len(q), 1);
	advance(q, 50);
	expect_get(q, "a");
	/* The stale 500 ms entry must not bring it back. */
	advance(q, 1000);
	cr_assert_eq(wq_len(q), 0);
	wq_free(q);
}

struct getter {
	struct wq *q;
	int err;
	char *key;
};

static void *blocking_get(void *arg)
{
	struct getter *g = arg;

	g->err = wq_get(g->q, &g->key);
	return NULL;
}

Test(workqueue, a_blocked_get_wakes_when_a_fake_clock_makes_a_key_due)
{
	struct getter g = { .q = fake_queue(0, 0) };
	pthread_t t;

	wq_add_after(g.q, "late", 60 * 1000);
	pthread_create(&t, NULL, blocking_get, &g);
	sleep_ms(20);
	advance(g.q, 60 * 1000);
	pthread_join(t, NULL);
	cr_assert_eq(g.err, 0);
	cr_assert_str_eq(g.key, "late");
	wq_done(g.q, g.key);
	free(g.key);
	wq_free(g.q);
}

Test(workqueue, a_blocked_get_wakes_for_a_delayed_key_on_the_real_clock)
{
	struct getter g = { .q = wq_new(NULL) };
	pthread_t t;

	pthread_create(&t, NULL, blocking_get, &g);
	sleep_ms(10);
	wq_add_after(g.q, "soon", 30);
	pthread_join(t, NULL);
	cr_assert_eq(g.err, 0);
	cr_assert_str_eq(g.key, "soon");
	free(g.key);
	wq_free(g.q);
}

Test(workqueue, shutdown_wakes_every_blocked_getter)
{
	struct getter g[3];
	pthread_t t[3];
	struct wq *q = wq_new(NULL);
	int i;

	for (i = 0; i < 3; i++) {
		g[i] = (struct getter){ .q = q, .err = 1 };
		pthread_create(&t[i], NULL, blocking_get, &g[i]);
	}
	sleep_ms(20);
	wq_shutdown(q);
	for (i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		cr_assert_eq(g[i].err, CADRE_ECANCELED);
	}
	cr_assert_eq(wq_add(q, "x"), CADRE_ECANCELED);
	cr_assert_eq(wq_add_rate_limited(q, "x"), CADRE_ECANCELED);
	wq_free(q);
}

Test(workqueue, free_releases_keys_still_queued_and_delayed)
{
	struct wq *q = fake_queue(0, 0);

	wq_add(q, "a");
	wq_add_after(q, "b", 100);
	wq_add_rate_limited(q, "c");
	wq_free(q);
}
