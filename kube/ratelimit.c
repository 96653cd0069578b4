#include "kube/ratelimit.h"

#include <errno.h>
#include <time.h>

#include "base/err.h"

#define NS_PER_S 1000000000LL
/* Sleeps are cut into slices this long so a stop flag is seen promptly. */
#define SLEEP_SLICE_NS (100 * 1000000LL)

static int64_t real_now_ns(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static void real_sleep_ns(void *ctx, int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / NS_PER_S, .tv_nsec = ns % NS_PER_S };

	(void)ctx;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

const struct kube_ratelimit_clock kube_ratelimit_clock_real = {
	.now_ns = real_now_ns,
	.sleep_ns = real_sleep_ns,
	.ctx = NULL,
};

int kube_ratelimit_init(struct kube_ratelimit *rl, double qps, int burst,
			const struct kube_ratelimit_clock *clock)
{
	if (pthread_mutex_init(&rl->lock, NULL))
		return CADRE_EINVAL;
	rl->clock = clock ? *clock : kube_ratelimit_clock_real;
	rl->qps = qps;
	rl->burst = burst < 1 ? 1 : burst;
	rl->tokens = rl->burst;
	rl->last_ns = rl->clock.now_ns(rl->clock.ctx);
	return 0;
}

void kube_ratelimit_release(struct kube_ratelimit *rl)
{
	pthread_mutex_destroy(&rl->lock);
}

/* Bring tokens up to now; caller holds the lock. */
static void refill(struct kube_ratelimit *rl, int64_t now)
{
	if (now > rl->last_ns) {
		rl->tokens += (double)(now - rl->last_ns) * rl->qps / NS_PER_S;
		if (rl->tokens > rl->burst)
			rl->tokens = rl->burst;
		rl->last_ns = now;
	}
}

int64_t kube_ratelimit_reserve(struct kube_ratelimit *rl)
{
	int64_t now, wait_ns = 0;

	if (rl->qps <= 0)
		return 0;
	now = rl->clock.now_ns(rl->clock.ctx);
	pthread_mutex_lock(&rl->lock);
	refill(rl, now);
	rl->tokens -= 1;
	/*
	 * A negative balance is the queue of callers already promised a future
	 * token; this caller's token arrives when the balance climbs back to 0.
	 */
	if (rl->tokens < 0)
		wait_ns = (int64_t)(-rl->tokens * NS_PER_S / rl->qps + 0.5);
	pthread_mutex_unlock(&rl->lock);
	return wait_ns;
}

bool kube_ratelimit_try(struct kube_ratelimit *rl)
{
	bool ok = false;
	int64_t now;

	if (rl->qps <= 0)
		return true;
	now = rl->clock.now_ns(rl->clock.ctx);
	pthread_mutex_lock(&rl->lock);
	refill(rl, now);
	if (rl->tokens >= 1) {
		rl->tokens -= 1;
		ok = true;
	}
	pthread_mutex_unlock(&rl->lock);
	return ok;
}

int kube_ratelimit_sleep(const struct kube_ratelimit_clock *clock, int64_t ns,
			 const atomic_bool *stop)
{
	if (!clock)
		clock = &kube_ratelimit_clock_real;
	while (ns > 0) {
		int64_t slice = ns < SLEEP_SLICE_NS ? ns : SLEEP_SLICE_NS;

		if (stop && atomic_load(stop))
			return CADRE_ECANCELED;
		clock->sleep_ns(clock->ctx, slice);
		ns -= slice;
	}
	if (stop && atomic_load(stop))
		return CADRE_ECANCELED;
	return 0;
}

int kube_ratelimit_wait(struct kube_ratelimit *rl, const atomic_bool *stop)
{
	return kube_ratelimit_sleep(&rl->clock, kube_ratelimit_reserve(rl), stop);
}
