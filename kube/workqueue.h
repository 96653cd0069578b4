/*
 * workqueue.h - a rate-limited work queue of string keys (client-go semantics).
 *
 * Reconcilers are driven by keys ("namespace/name"), not by events: handlers
 * add the key of whatever changed and workers take keys one at a time. The
 * queue promises what client-go's workqueue promises, because reconcilers
 * are written against exactly those promises:
 *
 *   - A key is queued at most once: adding a key that is already waiting to
 *     be taken does nothing, so a burst of events becomes one reconcile.
 *   - A key is never handed to two workers at once. A key added while a
 *     worker holds it is marked dirty and queued again when the worker calls
 *     wq_done(), so the change is still seen, after the first pass ends.
 *   - wq_add_after() delays an add; wq_add_rate_limited() delays it by the
 *     larger of a per-key exponential backoff (5 ms doubling up to 1000 s)
 *     and a global token bucket (10 qps, burst 100): client-go's
 *     DefaultControllerRateLimiter (the bucket is kube/ratelimit.h on the
 *     queue's clock). wq_forget() ends a key's backoff.
 *
 * Usage by a worker thread:
 *
 *   char *key;
 *   while (wq_get(q, &key) == 0) {
 *           int err = reconcile(key);
 *           if (err) wq_add_rate_limited(q, key); else wq_forget(q, key);
 *           wq_done(q, key);
 *           free(key);
 *   }
 *
 * Every function is thread-safe (one mutex, one condition variable).
 *
 * Time: delays are measured with opts.now_ms, CLOCK_MONOTONIC by default.
 * There is no timer thread: a blocked wq_get() sleeps until the earliest
 * delayed key is due, and any call on the queue first moves due keys into
 * it. A test that injects a clock advances it and calls wq_tick().
 */
#ifndef CADRE_KUBE_WORKQUEUE_H
#define CADRE_KUBE_WORKQUEUE_H

#include <stddef.h>
#include <stdint.h>

struct wq;

/* Milliseconds on a clock that never goes backwards. */
typedef uint64_t (*wq_clock_fn)(void *arg);

struct wq_options {
	/* Per-key backoff: base_delay_ms * 2^failures, at most max_delay_ms. */
	uint64_t base_delay_ms;   /* 0 means 5 (client-go) */
	uint64_t max_delay_ms;    /* 0 means 1000 s (client-go) */
	/* Global token bucket shared by every key. */
	double qps;               /* 0 means 10 (client-go); < 0 disables the bucket */
	unsigned burst;           /* 0 means 100 (client-go) */
	wq_clock_fn now_ms;       /* NULL: CLOCK_MONOTONIC */
	void *clock_arg;
};

/*
 * A new, empty queue; opts may be NULL for every default. Returns NULL when
 * memory runs out. Free with wq_free().
 */
struct wq *wq_new(const struct wq_options *opts);

/*
 * Shut the queue down (if it is not already) and free it with every key it
 * still holds. No thread may be inside, or enter, a wq_* call on it.
 */
void wq_free(struct wq *q);

/*
 * Queue key (copied) unless it is already queued. Returns 0, CADRE_ENOMEM,
 * CADRE_EINVAL for an empty key, or CADRE_ECANCELED after wq_shutdown().
 */
int wq_add(struct wq *q, const char *key);

/*
 * Queue key once delay_ms has passed; delay_ms 0 is wq_add(). A key that is
 * already waiting keeps the earlier of its two due times. Same errors as
 * wq_add().
 */
int wq_add_after(struct wq *q, const char *key, uint64_t delay_ms);

/*
 * Count one more failure for key and queue it after the larger of its
 * backoff and the global bucket's delay. Same errors as wq_add().
 */
int wq_add_rate_limited(struct wq *q, const char *key);

/* The delay wq_add_rate_limited() would use next, without using it. */
uint64_t wq_backoff_ms(struct wq *q, const char *key);

/* Forget key's failures: its next rate-limited add waits base_delay_ms. */
void wq_forget(struct wq *q, const char *key);

/* How many failures key has had since it was last forgotten. */
unsigned wq_num_requeues(struct wq *q, const char *key);

/*
 * Block until a key can be handed out, then give it to the caller, who owns
 * the string (free()) and must call wq_done() with it once the work ends.
 * Returns 0, or CADRE_ECANCELED once the queue is shut down (keys still
 * queued are dropped: a controller that stops must stop writing, and the
 * next one rebuilds its work from its caches).
 */
int wq_get(struct wq *q, char **key);

/*
 * The same, but give up after timeout_ms: CADRE_ETIMEDOUT. For callers that
 * must also watch a flag of their own.
 */
int wq_get_timeout(struct wq *q, char **key, uint64_t timeout_ms);

/*
 * Mark the work on key finished; if it was added again meanwhile, it is
 * queued now. key is not freed (the caller still owns it).
 */
void wq_done(struct wq *q, const char *key);

/* Keys queued and ready to be taken (for cadre_workqueue_depth). */
size_t wq_len(struct wq *q);

/* Keys waiting for a delay to pass. */
size_t wq_delayed_len(struct wq *q);

/*
 * Move every delayed key whose time has come into the queue and wake the
 * getters. The queue does this itself on every call; tests that move an
 * injected clock call it to wake a blocked wq_get().
 */
void wq_tick(struct wq *q);

/* Refuse new keys and wake every blocked wq_get(), which then fail. */
void wq_shutdown(struct wq *q);

#endif
