#include "kube/reflector.h"
#include "base/clock.h"

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "kube/backoff.h"
#include "kube/client.h"
#include "kube/status.h"
#include "kube/watch.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* client-go reflector defaults. */
#define DEFAULT_PAGE_SIZE 500
#define DEFAULT_MIN_WATCH_TIMEOUT_S 300
#define DEFAULT_BACKOFF_INITIAL_MS 800
#define DEFAULT_BACKOFF_MAX_MS 30000
#define DEFAULT_IDLE_TIMEOUT_MS 90000
/*
 * A watch that the server ends this soon without a single event is not a
 * normal expiry but a server turning us away: back off rather than spin
 * (client-go treats "very short watch" the same way).
 */
#define SHORT_WATCH_MS 1000
#define MAX_PATH_BYTES (64 * 1024)

static const char *const reason_names[REFLECTOR_REASON_COUNT] = {
	[REFLECTOR_CLOSED] = "closed",
	[REFLECTOR_GONE] = "gone",
	[REFLECTOR_ERROR_EVENT] = "error_event",
	[REFLECTOR_DISCONNECT] = "disconnect",
	[REFLECTOR_IDLE] = "idle_timeout",
	[REFLECTOR_BAD_STREAM] = "bad_stream",
	[REFLECTOR_HTTP_ERROR] = "http_error",
	[REFLECTOR_LIST_FAILED] = "list_failed",
};

struct reflector {
	struct kube_http *http;
	struct store *store;
	const struct kube_resource *res;
	char *ns, *label_selector, *field_selector;
	long page_size, idle_timeout_ms, min_watch_timeout_s;
	size_t max_line;

	pthread_t thread;
	bool started;           /* thread created and not yet joined */
	atomic_bool stop;       /* also the HTTP stream's stop flag */

	pthread_mutex_t lock;   /* guards rv and synced; cond waits on it */
	pthread_cond_t cond;    /* signalled on sync and on stop */
	char *rv;
	bool synced;

	_Atomic uint64_t restarts[REFLECTOR_REASON_COUNT];
	_Atomic uint64_t lists;

	/* Used by the reflector's thread only. */
	struct backoff backoff;
	struct watch watch;
	int event_error;        /* the code of an ERROR event that ended the watch */
	uint64_t events;        /* events applied in the current watch */
	bool from_list;         /* the next watch starts from the list just made */
};

const char *reflector_reason_name(enum reflector_reason reason)
{
	if ((unsigned)reason < REFLECTOR_REASON_COUNT)
		return reason_names[reason];
	return "unknown";
}

static int dup_opt(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : CADRE_ENOMEM;
}

int reflector_new(struct kube_http *http, struct store *store,
		  const struct reflector_options *opts, struct reflector **out)
{
	pthread_condattr_t attr;
	struct reflector *r;

	*out = NULL;
	if (!http || !store || !opts || !opts->resource)
		return CADRE_EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return CADRE_ENOMEM;
	if (dup_opt(opts->namespace, &r->ns) ||
	    dup_opt(opts->label_selector, &r->label_selector) ||
	    dup_opt(opts->field_selector, &r->field_selector)) {
		free(r->ns);
		free(r->label_selector);
		free(r->field_selector);
		free(r);
		return CADRE_ENOMEM;
	}
	r->http = http;
	r->store = store;
	r->res = opts->resource;
	r->page_size = opts->page_size > 0 ? opts->page_size : DEFAULT_PAGE_SIZE;
	r->idle_timeout_ms = opts->idle_timeout_ms > 0 ? opts->idle_timeout_ms
						       : DEFAULT_IDLE_TIMEOUT_MS;
	r->min_watch_timeout_s = opts->min_watch_timeout_s > 0 ? opts->min_watch_timeout_s
							       : DEFAULT_MIN_WATCH_TIMEOUT_S;
	r->max_line = opts->max_line;
	backoff_init(&r->backoff,
		     opts->backoff_initial_ms ? opts->backoff_initial_ms
					      : DEFAULT_BACKOFF_INITIAL_MS,
		     opts->backoff_max_ms ? opts->backoff_max_ms : DEFAULT_BACKOFF_MAX_MS,
		     1.0, 0);
	watch_init(&r->watch, r->max_line);
	atomic_init(&r->stop, false);
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &attr);
	pthread_condattr_destroy(&attr);
	*out = r;
	return 0;
}

void reflector_free(struct reflector *r)
{
	if (!r)
		return;
	reflector_stop(r);
	watch_release(&r->watch);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r->rv);
	free(r->ns);
	free(r->label_selector);
	free(r->field_selector);
	free(r);
}

const char *reflector_resource_name(struct reflector *r)
{
	return r->res->plural;
}

bool reflector_synced(struct reflector *r)
{
	bool synced;

	pthread_mutex_lock(&r->lock);
	synced = r->synced;
	pthread_mutex_unlock(&r->lock);
	return synced;
}

static void deadline_after(struct timespec *ts, uint64_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int reflector_wait_synced(struct reflector *r, long timeout_ms)
{
	struct timespec deadline;
	int err = 0;

	deadline_after(&deadline, timeout_ms > 0 ? (uint64_t)timeout_ms : 0);
	pthread_mutex_lock(&r->lock);
	while (!r->synced && !atomic_load(&r->stop)) {
		if (pthread_cond_timedwait(&r->cond, &r->lock, &deadline)) {
			err = CADRE_ETIMEDOUT;
			break;
		}
	}
	if (r->synced)
		err = 0;
	else if (atomic_load(&r->stop))
		err = CADRE_ECANCELED;
	pthread_mutex_unlock(&r->lock);
	return err;
}

char *reflector_resource_version(struct reflector *r)
{
	char *rv = NULL;

	pthread_mutex_lock(&r->lock);
	if (r->rv)
		rv = strdup(r->rv);
	pthread_mutex_unlock(&r->lock);
	return rv;
}

uint64_t reflector_restarts(struct reflector *r, enum reflector_reason reason)
{
	if ((unsigned)reason >= REFLECTOR_REASON_COUNT)
		return 0;
	return atomic_load(&r->restarts[reason]);
}

uint64_t reflector_lists(struct reflector *r)
{
	return atomic_load(&r->lists);
}

/* Remember rv (copied). An out-of-memory keeps the older one: safe, only slower. */
static void set_rv(struct reflector *r, const char *rv)
{
	char *copy;

	if (!rv)
		return;
	copy = strdup(rv);
	if (!copy)
		return;
	pthread_mutex_lock(&r->lock);
	free(r->rv);
	r->rv = copy;
	pthread_mutex_unlock(&r->lock);
}

/* Sleep ms unless stopped first. Returns CADRE_ECANCELED when stopped. */
static int sleep_unless_stopped(struct reflector *r, uint64_t ms)
{
	struct timespec deadline;
	int err = 0;

	deadline_after(&deadline, ms);
	pthread_mutex_lock(&r->lock);
	while (!atomic_load(&r->stop)) {
		if (pthread_cond_timedwait(&r->cond, &r->lock, &deadline))
			break;
	}
	if (atomic_load(&r->stop))
		err = CADRE_ECANCELED;
	pthread_mutex_unlock(&r->lock);
	return err;
}

struct list_ctx {
	struct reflector *r;
	struct store_batch *batch;
};

static int list_item(void *ctx, json_t *item)
{
	struct list_ctx *lc = ctx;
	int err;

	if (atomic_load(&lc->r->stop))
		return CADRE_ECANCELED;
	err = store_batch_add(lc->batch, item);
	if (err == CADRE_EINVAL) {
		/* An item without a name cannot be keyed; it cannot be real. */
		log_warn("reflector", "%s: list item without a name skipped", lc->r->res->plural);
		return 0;
	}
	return err;
}

/* LIST into a batch and commit it; the store is untouched on failure. */
static int relist(struct reflector *r)
{
	struct kube_list_opts opts = {
		.label_selector = r->label_selector,
		.field_selector = r->field_selector,
		.limit = r->page_size,
	};
	struct list_ctx lc = { r, store_batch_new(r->store) };
	struct kube_status st;
	char *rv = NULL;
	int err;

	kube_status_clear(&st);
	if (!lc.batch)
		return CADRE_ENOMEM;
	atomic_fetch_add(&r->lists, 1);
	err = kube_client_list_each(r->http, r->res, r->ns, &opts, list_item, &lc, &rv, &st);
	if (err) {
		if (err != CADRE_ECANCELED)
			log_warn("reflector", "%s: list failed: %s: %s", r->res->plural,
				 cadre_strerror(err), st.message);
		goto out;
	}
	err = store_batch_commit(lc.batch);
	if (err)
		log_warn("reflector", "%s: storing the list: %s", r->res->plural,
			 cadre_strerror(err));
#ifdef __GLIBC__
	/*
	 * Decoding the list's pages freed as much as the store keeps, in
	 * holes malloc would otherwise hold on to: give them back, so that a
	 * relist does not leave the resident set at its peak.
	 */
	malloc_trim(0);
#endif
	/* Even a partly stored list moves on: the next relist repairs it. */
	set_rv(r, rv);
	/* Every list is worth a line: after the first, each one means a watch was lost. */
	log_info("reflector", "%s: %s (%zu objects, resourceVersion %s)", r->res->plural,
		 reflector_synced(r) ? "relisted" : "synced", store_len(r->store), rv);
	pthread_mutex_lock(&r->lock);
	r->synced = true;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	err = 0;
out:
	free(rv);
	store_batch_free(lc.batch);
	return err;
}

/* metadata.<field> of obj as a string, or otherwise when it has none. */
static const char *object_meta(const json_t *obj, const char *field, const char *otherwise)
{
	const char *s = json_string_value(json_object_get(json_object_get(obj, "metadata"), field));

	return s ? s : otherwise;
}

/* Apply one watch event. Owns object. */
static int on_event(void *ctx, enum watch_type type, json_t *object)
{
	struct reflector *r = ctx;
	struct kube_status st;
	int err = 0;

	switch (type) {
	case WATCH_ADDED:
	case WATCH_MODIFIED:
		err = store_upsert(r->store, object);
		break;
	case WATCH_DELETED:
		err = store_remove(r->store, object);
		break;
	case WATCH_BOOKMARK:
		/* Progress only: nothing in the store changes. */
		break;
	case WATCH_ERROR:
		kube_status_from_object(&st, object);
		r->event_error = st.code ? st.code : CADRE_ESERVER;
		log_info("reflector", "%s: watch ERROR event: %s (%ld %s)", r->res->plural,
			 st.message, st.http_status, st.reason);
		json_decref(object);
		return r->event_error;
	}
	if (err == CADRE_EINVAL) {
		log_warn("reflector", "%s: %s event for an object without a name skipped",
			 r->res->plural, watch_type_name(type));
		err = 0;
	}
	/*
	 * The resourceVersion moves only once the event is applied, so a
	 * failure here re-delivers the event on the next watch.
	 */
	if (!err) {
		set_rv(r, object_meta(object, "resourceVersion", NULL));
		r->events++;
		if (type != WATCH_BOOKMARK)
			log_debug("reflector", "%s: %s %s/%s at resourceVersion %s", r->res->plural,
				  watch_type_name(type), object_meta(object, "namespace", ""),
				  object_meta(object, "name", ""),
				  object_meta(object, "resourceVersion", ""));
	}
	json_decref(object);
	return err;
}

static int on_data(void *ctx, const char *data, size_t len)
{
	struct reflector *r = ctx;

	return watch_feed(&r->watch, data, len, on_event, r);
}

static int watch_path(struct reflector *r, const char *rv, struct buf *path)
{
	char timeout[32];
	struct buf query;
	uint64_t seconds;
	int err;

	/* Random, so the reflectors of many controllers do not expire together. */
	seconds = backoff_between(&r->backoff.rng, (uint64_t)r->min_watch_timeout_s,
				  2 * (uint64_t)r->min_watch_timeout_s);
	snprintf(timeout, sizeof(timeout), "%llu", (unsigned long long)seconds);
	buf_init(&query, MAX_PATH_BYTES);
	err = kube_path_query_add(&query, "watch", "1");
	if (!err)
		err = kube_path_query_add(&query, "allowWatchBookmarks", "true");
	if (!err)
		err = kube_path_query_add(&query, "resourceVersion", rv);
	if (!err)
		err = kube_path_query_add(&query, "timeoutSeconds", timeout);
	if (!err)
		err = kube_path_query_add(&query, "labelSelector", r->label_selector);
	if (!err)
		err = kube_path_query_add(&query, "fieldSelector", r->field_selector);
	if (!err)
		err = kube_path(path, r->res, r->ns, NULL, NULL, buf_str(&query));
	buf_release(&query);
	return err;
}

/* What to do after a watch ended. */
enum next_step {
	STEP_WATCH,           /* watch again now */
	STEP_BACKOFF_WATCH,   /* wait a backoff, then watch again */
	STEP_RELIST,          /* list again now */
	STEP_BACKOFF_RELIST,  /* wait a backoff, then list again */
	STEP_EXIT,            /* stopped */
};

/* Run one watch to its end and classify how it ended. */
static enum next_step watch_once(struct reflector *r, enum reflector_reason *reason)
{
	struct kube_response resp;
	struct kube_stream_opts opts = {
		.idle_timeout_ms = r->idle_timeout_ms,
		.on_data = on_data,
		.ctx = r,
		.stop = &r->stop,
		.resp = &resp,
	};
	char *rv = reflector_resource_version(r);
	uint64_t started = clock_mono_ms();
	enum next_step step = STEP_BACKOFF_WATCH;
	struct buf path;
	bool brief, from_list = r->from_list;
	int err;

	r->from_list = false;
	buf_init(&path, MAX_PATH_BYTES);
	kube_response_init(&resp);
	watch_reset(&r->watch);
	r->event_error = 0;
	r->events = 0;
	err = watch_path(r, rv ? rv : "", &path);
	if (!err)
		err = kube_http_stream(r->http, buf_str(&path), &opts);
	if (r->events)
		backoff_reset(&r->backoff);
	/*
	 * A watch that ends at once without an event, however it ends, means
	 * the server is turning us away: never come back without a backoff.
	 */
	brief = !r->events && clock_mono_ms() - started < SHORT_WATCH_MS;

	if (atomic_load(&r->stop)) {
		*reason = REFLECTOR_CLOSED;
		step = STEP_EXIT;
		goto out;
	}
	/*
	 * A resourceVersion refused at once is only a server turning us away
	 * when it came from the list just made. Refused on a watch resumed
	 * after a break, it is the expected news that the server moved on
	 * while we were away (after an API server restart, every watch gets
	 * it): the server is answering again, so relist now. Waiting out the
	 * backoff that the break built up would leave the cache stale for up
	 * to 30 s more.
	 */
	if (r->event_error) {
		*reason = r->event_error == CADRE_EGONE ? REFLECTOR_GONE : REFLECTOR_ERROR_EVENT;
		step = brief && from_list ? STEP_BACKOFF_RELIST : STEP_RELIST;
		goto log;
	}
	switch (err) {
	case 0:
		*reason = REFLECTOR_CLOSED;
		if (!brief)
			step = STEP_WATCH;
		goto out;
	case CADRE_EGONE:
		*reason = REFLECTOR_GONE;
		step = brief && from_list ? STEP_BACKOFF_RELIST : STEP_RELIST;
		break;
	case CADRE_ETIMEDOUT:
		*reason = REFLECTOR_IDLE;
		break;
	case CADRE_EIO:
		*reason = REFLECTOR_DISCONNECT;
		break;
	case CADRE_EPARSE:
	case CADRE_ETOOBIG:
	case CADRE_ENOMEM:
		*reason = REFLECTOR_BAD_STREAM;
		break;
	default:
		*reason = REFLECTOR_HTTP_ERROR;
		log_warn("reflector", "%s: watch refused: %s: %s", r->res->plural,
			 cadre_strerror(err), resp.error.message);
		goto out;
	}
log:
	log_info("reflector", "%s: watch from resourceVersion %s ended: %s", r->res->plural,
		 rv ? rv : "", reflector_reason_name(*reason));
out:
	kube_response_release(&resp);
	buf_release(&path);
	free(rv);
	return step;
}

static void *reflector_main(void *arg)
{
	struct reflector *r = arg;
	enum reflector_reason reason;
	enum next_step step;
	bool need_list = true;

	while (!atomic_load(&r->stop)) {
		if (need_list) {
			if (relist(r)) {
				if (atomic_load(&r->stop))
					break;
				atomic_fetch_add(&r->restarts[REFLECTOR_LIST_FAILED], 1);
				if (sleep_unless_stopped(r, backoff_next(&r->backoff)))
					break;
				continue;
			}
			need_list = false;
			r->from_list = true;
			backoff_reset(&r->backoff);
		}
		step = watch_once(r, &reason);
		if (step == STEP_EXIT)
			break;
		atomic_fetch_add(&r->restarts[reason], 1);
		if (step == STEP_RELIST || step == STEP_BACKOFF_RELIST)
			need_list = true;
		if ((step == STEP_BACKOFF_WATCH || step == STEP_BACKOFF_RELIST) &&
		    sleep_unless_stopped(r, backoff_next(&r->backoff)))
			break;
	}
	return NULL;
}

int reflector_start(struct reflector *r)
{
	if (r->started)
		return CADRE_EINVAL;
	atomic_store(&r->stop, false);
	if (pthread_create(&r->thread, NULL, reflector_main, r))
		return CADRE_ENOMEM;
	r->started = true;
	return 0;
}

void reflector_stop(struct reflector *r)
{
	pthread_mutex_lock(&r->lock);
	atomic_store(&r->stop, true);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	if (r->started) {
		pthread_join(r->thread, NULL);
		r->started = false;
	}
}
