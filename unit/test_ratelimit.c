#include <criterion/criterion.h>
#include <pthread.h>

#include "base/err.h"
#include "kube/ratelimit.h"

#define S 1000000000LL

/* A clock that moves only when someone sleeps on it, and counts the sleeping. */
struct fake_clock {
	_Atomic int64_t now;
	_Atomic int64_t slept;
	_Atomic int sleeps;
};

static int64_t fake_now(void *ctx)
{
	struct fake_clock *c = ctx;

	return atomic_load(&c->now);
}

static void fake_sleep(void *ctx, int64_t ns)
{
	struct fake_clock *c = ctx;

	atomic_fetch_add(&c->now, ns);
	atomic_fetch_add(&c->slept, ns);
	atomic_fetch_add(&c->sleeps, 1);
}

static struct kube_ratelimit_clock clock_of(struct fake_clock *c)
{
	return (struct kube_ratelimit_clock){ fake_now, fake_sleep, c };
}

Test(ratelimit, a_burst_passes_then_callers_are_spaced_at_qps)
{
	struct fake_clock fc = { .now = 1000 * S };
	struct kube_ratelimit_clock clock = clock_of(&fc);
	struct kube_ratelimit rl;

	cr_assert_eq(kube_ratelimit_init(&rl, 2, 3, &clock), 0);
	cr_assert_eq(kube_ratelimit_reserve(&rl), 0);
	cr_assert_eq(kube_ratelimit_reserve(&rl), 0);
	cr_assert_eq(kube_ratelimit_reserve(&rl), 0);
	/* Empty: the next ones wait 0.5 s, 1 s, 1.5 s at 2 per second. */
	cr_assert_eq(kube_ratelimit_reserve(&rl), S / 2);
	cr_assert_eq(kube_ratelimit_reserve(&rl), S);
	cr_assert_eq(kube_ratelimit_reserve(&rl), 3 * S / 2);
	kube_ratelimit_release(&rl);
}

Test(ratelimit, tokens_refill_with_time_up_to_the_burst)
{
	struct fake_clock fc = { .now = 5 * S };
	struct kube_ratelimit_clock clock = clock_of(&fc);
	struct kube_ratelimit rl;
	int granted = 0;

	kube_ratelimit_init(&rl, 10, 5, &clock);
	while (kube_ratelimit_try(&rl))
		granted++;
	cr_assert_eq(granted, 5);
	fc.now += S / 2;     /* 0.5 s at 10/s: five tokens back */
	granted = 0;
	while (kube_ratelimit_try(&rl))
		granted++;
	cr_assert_eq(granted, 5);
	fc.now += 3600 * S;  /* an hour idle still gives only a burst */
	granted = 0;
	while (kube_ratelimit_try(&rl))
		granted++;
	cr_assert_eq(granted, 5);
	kube_ratelimit_release(&rl);
}

Test(ratelimit, wait_sleeps_for_the_reserved_token_on_the_clock)
{
	struct fake_clock fc = { .now = 1 };
	struct kube_ratelimit_clock clock = clock_of(&fc);
	struct kube_ratelimit rl;

	kube_ratelimit_init(&rl, 100, 200, &clock);
	/* 300 calls: 200 at once, the other 100 at 100/s: one second in all. */
	for (int i = 0; i < 300; i++)
		cr_assert_eq(kube_ratelimit_wait(&rl, NULL), 0);
	cr_assert(fc.slept >= S - S / 100 && fc.slept <= S + S / 100,
		  "slept %lld ns", (long long)fc.slept);
	kube_ratelimit_release(&rl);
}

Test(ratelimit, no_limit_when_qps_is_zero)
{
	struct fake_clock fc = { .now = 1 };
	struct kube_ratelimit_clock clock = clock_of(&fc);
	struct kube_ratelimit rl;

	kube_ratelimit_init(&rl, 0, 1, &clock);
	for (int i = 0; i < 1000; i++)
		cr_assert_eq(kube_ratelimit_reserve(&rl), 0);
	cr_assert(kube_ratelimit_try(&rl));
	kube_ratelimit_release(&rl);
}

Test(ratelimit, a_stop_flag_ends_the_wait)
{
	struct fake_clock fc = { .now = 1 };
	struct kube_ratelimit_clock clock = clock_of(&fc);
	struct kube_ratelimit rl;
	atomic_bool stop = true;

	kube_ratelimit_init(&rl, 1, 1, &clock);
	kube_ratelimit_reserve(&rl);
	cr_assert_eq(kube_ratelimit_wait(&rl, &stop), CADRE_ECANCELED);
	cr_assert_eq(fc.slept, 0);
	kube_ratelimit_release(&rl);
}

Test(ratelimit, sleep_is_cut_into_slices)
{
	struct fake_clock fc = { .now = 1 };
	struct kube_ratelimit_clock clock = clock_of(&fc);

	cr_assert_eq(kube_ratelimit_sleep(&clock, 2 * S, NULL), 0);
	cr_assert_eq(fc.slept, 2 * S);
	cr_assert_eq(fc.sleeps, 20);
}

struct hammer {
	struct kube_ratelimit *rl;
	_Atomic int64_t *total_wait;
};

static void *reserve_many(void *arg)
{
	struct hammer *h = arg;

	for (int i = 0; i < 250; i++)
		atomic_fetch_add(h->total_wait, kube_ratelimit_reserve(h->rl));
	return NULL;
}

Test(ratelimit, concurrent_callers_share_one_bucket)
{
	struct fake_clock fc = { .now = 1 };
	struct kube_ratelimit_clock clock = clock_of(&fc);
	struct kube_ratelimit rl;
	_Atomic int64_t total = 0;
	struct hammer h = { &rl, &total };
	pthread_t threads[4];

	/*
	 * 1000 reservations against burst 10 at 1/s with time frozen: the
	 * waits are 1 s, 2 s, ... 990 s whatever the interleaving, so their sum
	 * shows that no token was handed out twice.
	 */
	kube_ratelimit_init(&rl, 1, 10, &clock);
	for (int i = 0; i < 4; i++)
		pthread_create(&threads[i], NULL, reserve_many, &h);
	for (int i = 0; i < 4; i++)
		pthread_join(threads[i], NULL);
	cr_assert_eq(total, 990LL * 991 / 2 * S, "total %lld", (long long)total);
	kube_ratelimit_release(&rl);
}
