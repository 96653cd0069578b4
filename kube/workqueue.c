#include "kube/workqueue.h"
#include "base/clock.h"

#include "base/err.h"
#include "kube/ratelimit.h"

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* client-go DefaultControllerRateLimiter. */
#define WQ_DEFAULT_BASE_MS 5
#define WQ_DEFAULT_MAX_MS (1000 * 1000)
#define WQ_DEFAULT_QPS 10.0
#define WQ_DEFAULT_BURST 100

/* A key waiting for its due time; ties keep the order they were added in. */
struct wq_delayed {
	uint64_t due_ms;
	uint64_t seq;
	char *key;
};

struct wq {
	pthread_mutex_t lock;
	pthread_cond_t cond;        /* signalled when a key is queued or on shutdown */
	struct wq_options opts;

	/* Ready keys, FIFO, as a ring; each string is owned by the ring. */
	char **ring;
	size_t head, count, cap;

	/*
	 * Sets and maps as jansson objects (a string-keyed hash table we
	 * already link). dirty: keys queued or to be re-queued on done;
	 * processing: keys a worker holds; waiting: key -> earliest due time;
	 * failures: key -> rate-limited adds since the last forget.
	 */
	json_t *dirty, *processing, *waiting, *failures;

	/*
	 * Min-heap on (due_ms, seq). An entry whose due time no longer
	 * matches waiting[key] is stale (the key was moved earlier) and is
	 * dropped when it surfaces, which keeps updates O(log n) without a
	 * position index.
	 */
	struct wq_delayed *heap;
	size_t heap_len, heap_cap;
	uint64_t seq;

	/* Global token bucket, on the queue's clock (reserve semantics). */
	struct kube_ratelimit bucket;

	bool shutting_down;
};

static uint64_t wq_now(const struct wq *q)
{
	return q->opts.now_ms(q->opts.clock_arg);
}

/* The bucket reads the queue's clock, so an injected clock paces both. */
static int64_t bucket_now_ns(void *ctx)
{
	return (int64_t)wq_now(ctx) * 1000000;
}

/* Required by the clock interface; the queue only reserves, never sleeps. */
static void bucket_sleep_ns(void *ctx, int64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };

	(void)ctx;
	nanosleep(&ts, NULL);
}

struct wq *wq_new(const struct wq_options *opts)
{
	pthread_condattr_t attr;
	struct kube_ratelimit_clock clock = { bucket_now_ns, bucket_sleep_ns, NULL };
	struct wq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	if (opts)
		q->opts = *opts;
	if (!q->opts.base_delay_ms)
		q->opts.base_delay_ms = WQ_DEFAULT_BASE_MS;
	if (!q->opts.max_delay_ms)
		q->opts.max_delay_ms = WQ_DEFAULT_MAX_MS;
	if (q->opts.qps == 0)
		q->opts.qps = WQ_DEFAULT_QPS;
	if (!q->opts.burst)
		q->opts.burst = WQ_DEFAULT_BURST;
	if (!q->opts.now_ms)
		q->opts.now_ms = clock_mono_ms_cb;

	q->dirty = json_object();
	q->processing = json_object();
	q->waiting = json_object();
	q->failures = json_object();
	if (!q->dirty || !q->processing || !q->waiting || !q->failures)
		goto fail;
	clock.ctx = q;
	/* qps < 0 asks for no bucket; the limiter's word for that is 0. */
	if (kube_ratelimit_init(&q->bucket, q->opts.qps < 0 ? 0 : q->opts.qps,
				(int)q->opts.burst, &clock))
		goto fail;

	pthread_mutex_init(&q->lock, NULL);
	/* Monotonic, so a wall-clock step never stretches a delayed key. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cond, &attr);
	pthread_condattr_destroy(&attr);
	return q;
fail:
	json_decref(q->dirty);
	json_decref(q->processing);
	json_decref(q->waiting);
	json_decref(q->failures);
	free(q);
	return NULL;
}

void wq_free(struct wq *q)
{
	size_t i;

	if (!q)
		return;
	for (i = 0; i < q->count; i++)
		free(q->ring[(q->head + i) % q->cap]);
	free(q->ring);
	for (i = 0; i < q->heap_len; i++)
		free(q->heap[i].key);
	free(q->heap);
	json_decref(q->dirty);
	json_decref(q->processing);
	json_decref(q->waiting);
	json_decref(q->failures);
	kube_ratelimit_release(&q->bucket);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* Append key (ownership moves to the ring on success). */
static int ring_push(struct wq *q, char *key)
{
	if (q->count == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 16, i;
		char **ring = malloc(cap * sizeof(*ring));

		if (!ring)
			return CADRE_ENOMEM;
		for (i = 0; i < q->count; i++)
			ring[i] = q->ring[(q->head + i) % q->cap];
		free(q->ring);
		q->ring = ring;
		q->cap = cap;
		q->head = 0;
	}
	q->ring[(q->head + q->count) % q->cap] = key;
	q->count++;
	return 0;
}

static char *ring_pop(struct wq *q)
{
	char *key = q->ring[q->head];

	q->head = (q->head + 1) % q->cap;
	q->count--;
	return key;
}

/* The add rule, with the lock held. */
static int add_locked(struct wq *q, const char *key)
{
	char *copy;
	int err;

	if (json_object_get(q->dirty, key))
		return 0;
	if (json_object_set_new_nocheck(q->dirty, key, json_true()))
		return CADRE_ENOMEM;
	/* Held by a worker: wq_done() queues it again, never a second worker. */
	if (json_object_get(q->processing, key))
		return 0;
	copy = strdup(key);
	if (!copy) {
		err = CADRE_ENOMEM;
		goto undo;
	}
	err = ring_push(q, copy);
	if (err) {
		free(copy);
		goto undo;
	}
	pthread_cond_signal(&q->cond);
	return 0;
undo:
	json_object_del(q->dirty, key);
	return err;
}

static bool heap_less(const struct wq_delayed *a, const struct wq_delayed *b)
{
	return a->due_ms < b->due_ms || (a->due_ms == b->due_ms && a->seq < b->seq);
}

static void heap_swap(struct wq *q, size_t i, size_t j)
{
	struct wq_delayed t = q->heap[i];

	q->heap[i] = q->heap[j];
	q->heap[j] = t;
}

static int heap_push(struct wq *q, const char *key, uint64_t due_ms)
{
	size_t i;
	char *copy;

	if (q->heap_len == q->heap_cap) {
		size_t cap = q->heap_cap ? q->heap_cap * 2 : 16;
		struct wq_delayed *heap = realloc(q->heap, cap * sizeof(*heap));

		if (!heap)
			return CADRE_ENOMEM;
		q->heap = heap;
		q->heap_cap = cap;
	}
	copy = strdup(key);
	if (!copy)
		return CADRE_ENOMEM;
	i = q->heap_len++;
	q->heap[i] = (struct wq_delayed){ due_ms, q->seq++, copy };
	while (i > 0 && heap_less(&q->heap[i], &q->heap[(i - 1) / 2])) {
		heap_swap(q, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	return 0;
}

/* Remove the root; the caller has taken its key. */
static void heap_pop(struct wq *q)
{
	size_t i = 0;

	q->heap[0] = q->heap[--q->heap_len];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < q->heap_len && heap_less(&q->heap[l], &q->heap[m]))
			m = l;
		if (r < q->heap_len && heap_less(&q->heap[r], &q->heap[m]))
			m = r;
		if (m == i)
			break;
		heap_swap(q, i, m);
		i = m;
	}
}

/* Queue every delayed key that is due at now; lock held. */
static void promote_due(struct wq *q, uint64_t now)
{
	while (q->heap_len && q->heap[0].due_ms <= now) {
		struct wq_delayed top = q->heap[0];
		json_t *due = json_object_get(q->waiting, top.key);

		heap_pop(q);
		if (due && (uint64_t)json_integer_value(due) == top.due_ms) {
			json_object_del(q->waiting, top.key);
			/*
			 * Out of memory here would lose the key; put it back
			 * as due now so the next call retries.
			 */
			if (add_locked(q, top.key)) {
				json_object_set_new_nocheck(q->waiting, top.key,
							    json_integer((json_int_t)top.due_ms));
				if (heap_push(q, top.key, top.due_ms) == 0) {
					free(top.key);
					break;
				}
			}
		}
		free(top.key);
	}
}

/* Add after delay; lock held. */
static int add_after_locked(struct wq *q, const char *key, uint64_t delay_ms)
{
	uint64_t now = wq_now(q), due;
	json_t *have;
	int err;

	promote_due(q, now);
	if (!delay_ms)
		return add_locked(q, key);
	due = now + delay_ms;
	have = json_object_get(q->waiting, key);
	if (have && (uint64_t)json_integer_value(have) <= due)
		return 0;
	err = heap_push(q, key, due);
	if (err)
		return err;
	if (json_object_set_new_nocheck(q->waiting, key, json_integer((json_int_t)due)))
		return CADRE_ENOMEM; /* the heap entry is then stale and dropped */
	/* A blocked getter may now have an earlier wake-up to schedule. */
	pthread_cond_broadcast(&q->cond);
	return 0;
}

int wq_add(struct wq *q, const char *key)
{
	return wq_add_after(q, key, 0);
}

int wq_add_after(struct wq *q, const char *key, uint64_t delay_ms)
{
	int err;

	if (!key || !*key)
		return CADRE_EINVAL;
	pthread_mutex_lock(&q->lock);
	if (q->shutting_down)
		err = CADRE_ECANCELED;
	else
		err = add_after_locked(q, key, delay_ms);
	pthread_mutex_unlock(&q->lock);
	return err;
}

/* base * 2^failures, capped, without overflowing. */
static uint64_t backoff_for(const struct wq *q, json_int_t failures)
{
	uint64_t base = q->opts.base_delay_ms, max = q->opts.max_delay_ms;

	if (failures >= 63 || base > (max >> failures))
		return max;
	return base << failures;
}

/* Take one token, returning how many milliseconds the caller must wait for it. */
static uint64_t bucket_reserve(struct wq *q)
{
	int64_t ns = kube_ratelimit_reserve(&q->bucket);

	return ns > 0 ? ((uint64_t)ns + 999999) / 1000000 : 0;
}

int wq_add_rate_limited(struct wq *q, const char *key)
{
	uint64_t per_key, global;
	json_int_t failures;
	int err;

	if (!key || !*key)
		return CADRE_EINVAL;
	pthread_mutex_lock(&q->lock);
	if (q->shutting_down) {
		err = CADRE_ECANCELED;
		goto out;
	}
	failures = json_integer_value(json_object_get(q->failures, key));
	per_key = backoff_for(q, failures);
	if (json_object_set_new_nocheck(q->failures, key, json_integer(failures + 1))) {
		err = CADRE_ENOMEM;
		goto out;
	}
	global = bucket_reserve(q);
	err = add_after_locked(q, key, per_key > global ? per_key : global);
out:
	pthread_mutex_unlock(&q->lock);
	return err;
}

void wq_forget(struct wq *q, const char *key)
{
	pthread_mutex_lock(&q->lock);
	json_object_del(q->failures, key);
	pthread_mutex_unlock(&q->lock);
}

unsigned wq_num_requeues(struct wq *q, const char *key)
{
	json_int_t n;

	pthread_mutex_lock(&q->lock);
	n = json_integer_value(json_object_get(q->failures, key));
	pthread_mutex_unlock(&q->lock);
	return (unsigned)n;
}

static void timespec_add_ms(struct timespec *ts, uint64_t ms)
{
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* timeout_ms UINT64_MAX waits for ever. */
static int get_locked(struct wq *q, char **key, uint64_t timeout_ms)
{
	uint64_t start = clock_mono_ms();

	for (;;) {
		uint64_t now = wq_now(q), wait_ms = UINT64_MAX, waited;
		struct timespec ts;
		char *k;

		if (q->shutting_down)
			return CADRE_ECANCELED;
		promote_due(q, now);
		if (q->count) {
			k = ring_pop(q);
			json_object_del(q->dirty, k);
			if (json_object_set_new_nocheck(q->processing, k, json_true())) {
				/* Cannot track it: hand nothing out, keep it queued. */
				json_object_set_new_nocheck(q->dirty, k, json_true());
				q->head = (q->head + q->cap - 1) % q->cap;
				q->ring[q->head] = k;
				q->count++;
				return CADRE_ENOMEM;
			}
			*key = k;
			return 0;
		}
		if (q->heap_len)
			wait_ms = q->heap[0].due_ms - now;
		if (timeout_ms != UINT64_MAX) {
			waited = clock_mono_ms() - start;
			if (waited >= timeout_ms)
				return CADRE_ETIMEDOUT;
			if (timeout_ms - waited < wait_ms)
				wait_ms = timeout_ms - waited;
		}
		if (wait_ms == UINT64_MAX) {
			pthread_cond_wait(&q->cond, &q->lock);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		timespec_add_ms(&ts, wait_ms);
		pthread_cond_timedwait(&q->cond, &q->lock, &ts);
	}
}

int wq_get(struct wq *q, char **key)
{
	int err;

	pthread_mutex_lock(&q->lock);
	err = get_locked(q, key, UINT64_MAX);
	pthread_mutex_unlock(&q->lock);
	return err;
}

int wq_get_timeout(struct wq *q, char **key, uint64_t timeout_ms)
{
	int err;

	pthread_mutex_lock(&q->lock);
	err = get_locked(q, key, timeout_ms == UINT64_MAX ? UINT64_MAX - 1 : timeout_ms);
	pthread_mutex_unlock(&q->lock);
	return err;
}

void wq_done(struct wq *q, const char *key)
{
	char *copy;

	pthread_mutex_lock(&q->lock);
	json_object_del(q->processing, key);
	if (!q->shutting_down && json_object_get(q->dirty, key)) {
		copy = strdup(key);
		if (!copy || ring_push(q, copy)) {
			/* Lost for now; a later add of the key queues it. */
			free(copy);
			json_object_del(q->dirty, key);
		} else {
			pthread_cond_signal(&q->cond);
		}
	}
	pthread_mutex_unlock(&q->lock);
}

size_t wq_len(struct wq *q)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	promote_due(q, wq_now(q));
	n = q->count;
	pthread_mutex_unlock(&q->lock);
	return n;
}

size_t wq_delayed_len(struct wq *q)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	promote_due(q, wq_now(q));
	n = json_object_size(q->waiting);
	pthread_mutex_unlock(&q->lock);
	return n;
}

void wq_tick(struct wq *q)
{
	pthread_mutex_lock(&q->lock);
	promote_due(q, wq_now(q));
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

void wq_shutdown(struct wq *q)
{
	pthread_mutex_lock(&q->lock);
	q->shutting_down = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}
