/*
 * ratelimit.h - a thread-safe token bucket (client-go's flowcontrol /
 * golang.org/x/time/rate semantics).
 *
 * The bucket holds at most `burst` tokens and refills at `qps` tokens per
 * second. A caller that finds it empty is not refused: it reserves the next
 * token and is told how long to wait for it, so a burst of 300 calls against
 * qps 100 / burst 200 runs 200 at once and the rest at 100 per second. The
 * HTTP client waits (kube_ratelimit_wait); the work queue uses the delay
 * (kube_ratelimit_reserve) as its global rate limit for add_rate_limited.
 *
 * Time comes from a clock that tests can replace, so limiter behaviour is
 * tested by counting tokens and summing requested sleeps, never by reading
 * the wall clock.
 *
 * Thread-safety: every function except init/release may be called from
 * several threads at once (one mutex guards the bucket; it is never held
 * while sleeping).
 */
#ifndef CADRE_KUBE_RATELIMIT_H
#define CADRE_KUBE_RATELIMIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * A monotonic clock and a sleep. now_ns returns nanoseconds since any fixed
 * point; sleep_ns blocks (or, in a fake clock, advances time) for ns
 * nanoseconds. Both must be thread-safe. ctx is passed to both.
 */
struct kube_ratelimit_clock {
	int64_t (*now_ns)(void *ctx);
	void (*sleep_ns)(void *ctx, int64_t ns);
	void *ctx;
};

/* The real clock: CLOCK_MONOTONIC and nanosleep. Static storage. */
extern const struct kube_ratelimit_clock kube_ratelimit_clock_real;

struct kube_ratelimit {
	pthread_mutex_t lock;
	double qps;         /* refill per second; <= 0 means no limit */
	double burst;       /* bucket size, >= 1 */
	double tokens;      /* may go negative: tokens reserved ahead of time */
	int64_t last_ns;    /* when tokens was last brought up to date */
	struct kube_ratelimit_clock clock;
};

/*
 * Start full (burst tokens available now). qps <= 0 disables limiting
 * (every reserve returns 0). burst < 1 is treated as 1. clock may be NULL for
 * the real clock; it is copied. Returns 0 or CADRE_EINVAL (pthread failure).
 */
int kube_ratelimit_init(struct kube_ratelimit *rl, double qps, int burst,
			const struct kube_ratelimit_clock *clock);

/* Destroy the mutex. No call may be in progress. */
void kube_ratelimit_release(struct kube_ratelimit *rl);

/*
 * Take one token, now or in the future. Returns how many nanoseconds the
 * caller must wait before acting (0 when a token was available). The token
 * is spent either way: a caller that gives up after reserving does not
 * return it (client-go does not either; the cost is one token).
 */
int64_t kube_ratelimit_reserve(struct kube_ratelimit *rl);

/* Take a token only if one is available now. */
bool kube_ratelimit_try(struct kube_ratelimit *rl);

/*
 * Reserve a token and sleep until it is due, using the limiter's clock, in
 * slices of at most 100 ms so that a set stop flag (may be NULL) ends the
 * wait early. Returns 0, or CADRE_ECANCELED when stop was seen.
 */
int kube_ratelimit_wait(struct kube_ratelimit *rl, const atomic_bool *stop);

/*
 * Sleep ns nanoseconds on clock (NULL = real) in slices of at most 100 ms,
 * returning CADRE_ECANCELED early if stop (may be NULL) becomes true, else 0.
 * Shared by the HTTP client for Retry-After waits.
 */
int kube_ratelimit_sleep(const struct kube_ratelimit_clock *clock, int64_t ns,
			 const atomic_bool *stop);

#endif
