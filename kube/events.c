#include "kube/events.h"
#include "base/clock.h"

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "kube/client.h"
#include "kube/resource.h"
#include "kube/status.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* client-go record defaults. */
#define DEFAULT_QUEUE_LEN 1000
#define DEFAULT_CACHE_LEN 4096
#define DEFAULT_SPAM_BURST 25
#define DEFAULT_SPAM_QPS (1.0 / 300.0)

/* One recorded event waiting to be sent. */
struct event_rec {
	struct event_rec *next;
	enum events_type type;
	char *reason, *action, *note;
	json_t *regarding;     /* {apiVersion, kind, name, namespace, uid} */
	json_t *when;          /* MicroTime string of the recording */
};

struct events {
	struct kube_http *http;
	char *controller, *instance;
	size_t queue_len, cache_len;
	unsigned spam_burst;
	double spam_qps;
	uint64_t (*now_ms)(void *arg);
	void *clock_arg;

	pthread_t thread;
	bool started;

	pthread_mutex_t lock;    /* guards the queue and the flags below */
	pthread_cond_t cond;     /* queue changed, in-flight ended, or stop */
	struct event_rec *head, *tail;
	size_t queued;
	bool in_flight;
	bool stopping;

	/*
	 * The sender thread's own state. Both are jansson objects used as
	 * LRU maps: insertion-ordered, so a touched entry is deleted and
	 * re-added at the end, and the oldest is the first.
	 */
	json_t *series;          /* correlation key -> {"name", "namespace", "count"} */
	json_t *buckets;         /* object key -> {"tokens", "at"} */
	unsigned long name_seq;  /* keeps event names unique within a nanosecond */

	_Atomic uint64_t created, patched, dropped, filtered, failed;
};

static json_t *micro_time_now(void)
{
	char text[64];

	clock_micro_time(text);
	return json_string(text);
}

static void rec_free(struct event_rec *r)
{
	if (!r)
		return;
	free(r->reason);
	free(r->action);
	free(r->note);
	json_decref(r->regarding);
	json_decref(r->when);
	free(r);
}

int events_new(struct kube_http *http, const struct events_options *opts,
	       struct events **out)
{
	pthread_condattr_t attr;
	char host[256] = "cadre";
	struct events *e;

	*out = NULL;
	if (!http || !opts || !opts->reporting_controller)
		return CADRE_EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CADRE_ENOMEM;
	if (!opts->reporting_instance && gethostname(host, sizeof(host) - 1))
		snprintf(host, sizeof(host), "cadre");
	host[sizeof(host) - 1] = '\0';
	e->http = http;
	e->controller = strdup(opts->reporting_controller);
	e->instance = strdup(opts->reporting_instance ? opts->reporting_instance : host);
	e->series = json_object();
	e->buckets = json_object();
	if (!e->controller || !e->instance || !e->series || !e->buckets) {
		free(e->controller);
		free(e->instance);
		json_decref(e->series);
		json_decref(e->buckets);
		free(e);
		return CADRE_ENOMEM;
	}
	e->queue_len = opts->queue_len ? opts->queue_len : DEFAULT_QUEUE_LEN;
	e->cache_len = opts->cache_len ? opts->cache_len : DEFAULT_CACHE_LEN;
	e->spam_burst = opts->spam_burst ? opts->spam_burst : DEFAULT_SPAM_BURST;
	e->spam_qps = opts->spam_qps > 0 ? opts->spam_qps : DEFAULT_SPAM_QPS;
	e->now_ms = opts->now_ms ? opts->now_ms : clock_mono_ms_cb;
	e->clock_arg = opts->clock_arg;
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &attr);
	pthread_condattr_destroy(&attr);
	*out = e;
	return 0;
}

void events_free(struct events *e)
{
	struct event_rec *r;

	if (!e)
		return;
	events_stop(e);
	while ((r = e->head)) {
		e->head = r->next;
		rec_free(r);
	}
	json_decref(e->series);
	json_decref(e->buckets);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e->controller);
	free(e->instance);
	free(e);
}

/* The reference to an object as events.k8s.io wants it. */
static json_t *object_ref(const json_t *obj)
{
	const json_t *meta = json_object_get(obj, "metadata");
	json_t *ref = json_object();
	static const char *const top[] = { "apiVersion", "kind" };
	static const char *const in_meta[] = { "name", "namespace", "uid" };
	size_t i;

	if (!ref)
		return NULL;
	for (i = 0; i < 2; i++) {
		json_t *v = json_object_get(obj, top[i]);

		if (json_is_string(v) && json_object_set(ref, top[i], v))
			goto fail;
	}
	for (i = 0; i < 3; i++) {
		json_t *v = json_object_get(meta, in_meta[i]);

		if (json_is_string(v) && json_string_length(v) && json_object_set(ref, in_meta[i], v))
			goto fail;
	}
	return ref;
fail:
	json_decref(ref);
	return NULL;
}

/*
 * Cut s (which has at least max + 1 bytes when longer than max) to at most
 * max bytes without splitting a UTF-8 sequence.
 */
static void cut_utf8(char *s, size_t max)
{
	if (strlen(s) <= max)
		return;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	s[max] = '\0';
}

int events_record(struct events *e, const json_t *regarding, enum events_type type,
		  const char *reason, const char *action, const char *fmt, ...)
{
	/* A few bytes past the cap, so the cut can see where a character ends. */
	char note[EVENTS_MAX_NOTE + 8];
	struct event_rec *r = NULL;
	va_list ap;
	int err = 0;

	if (!reason || !*reason || !action || !*action || !fmt)
		return CADRE_EINVAL;
	if (!json_string_length(json_object_get(json_object_get(regarding, "metadata"), "name")))
		return CADRE_EINVAL;
	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	cut_utf8(note, EVENTS_MAX_NOTE);

	r = calloc(1, sizeof(*r));
	if (!r)
		return CADRE_ENOMEM;
	r->type = type;
	r->reason = strdup(reason);
	r->action = strdup(action);
	r->note = strdup(note);
	r->regarding = object_ref(regarding);
	r->when = micro_time_now();
	if (!r->reason || !r->action || !r->note || !r->regarding || !r->when) {
		err = CADRE_ENOMEM;
		goto out;
	}

	pthread_mutex_lock(&e->lock);
	if (e->queued >= e->queue_len || e->stopping) {
		pthread_mutex_unlock(&e->lock);
		atomic_fetch_add(&e->dropped, 1);
		err = CADRE_ETOOBIG;
		goto out;
	}
	if (e->tail)
		e->tail->next = r;
	else
		e->head = r;
	e->tail = r;
	e->queued++;
	r = NULL;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
out:
	rec_free(r);
	return err;
}

/* Touch key in an LRU map: move it to the end; evict the oldest past max. */
static void lru_put(json_t *map, const char *key, json_t *value, size_t max)
{
	json_incref(value);
	json_object_del(map, key);
	while (json_object_size(map) >= max)
		json_object_del(map, json_object_iter_key(json_object_iter(map)));
	json_object_set_new(map, key, value);
}

static void ref_key(struct buf *b, const json_t *ref)
{
	static const char *const fields[] = { "apiVersion", "kind", "namespace", "name", "uid" };
	size_t i;

	for (i = 0; i < 5; i++)
		buf_addf(b, "%s\x1f", json_string_value(json_object_get(ref, fields[i]))
					   ? json_string_value(json_object_get(ref, fields[i]))
					   : "");
}

/*
 * Take a token from the object's bucket (client-go's spam filter): refill
 * at spam_qps up to spam_burst. false when the object is over its budget.
 */
static bool spam_allow(struct events *e, const char *object_key)
{
	json_t *bucket = json_object_get(e->buckets, object_key);
	uint64_t now = e->now_ms(e->clock_arg);
	double tokens = e->spam_burst;
	bool allow;

	if (bucket) {
		uint64_t at = (uint64_t)json_integer_value(json_object_get(bucket, "at"));

		tokens = json_real_value(json_object_get(bucket, "tokens"));
		if (now > at)
			tokens += (double)(now - at) / 1000.0 * e->spam_qps;
		if (tokens > e->spam_burst)
			tokens = e->spam_burst;
	}
	allow = tokens >= 1.0;
	if (allow)
		tokens -= 1.0;
	bucket = json_pack("{s:f,s:I}", "tokens", tokens, "at", (json_int_t)now);
	if (bucket)
		lru_put(e->buckets, object_key, bucket, e->cache_len);
	json_decref(bucket);
	return allow;
}

static const char *event_namespace(const struct event_rec *r)
{
	const char *ns = json_string_value(json_object_get(r->regarding, "namespace"));

	/* Events about cluster-scoped objects live in "default", as client-go's. */
	return ns && *ns ? ns : "default";
}

static int create_event(struct events *e, struct event_rec *r, const char *key)
{
	const char *name = json_string_value(json_object_get(r->regarding, "name"));
	const char *ns = event_namespace(r);
	struct kube_status st;
	struct timespec ts;
	char event_name[320];
	json_t *ev, *entry;
	int err;

	/* client-go names events "<object>.<unix nanoseconds in hex>". */
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(event_name, sizeof(event_name), "%.240s.%llx%lx", name,
		 (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec,
		 e->name_seq++ % 16);
	ev = json_pack("{s:s,s:s,s:{s:s,s:s},s:O,s:s,s:s,s:s,s:s,s:s,s:s,s:O}",
		       "apiVersion", "events.k8s.io/v1", "kind", "Event", "metadata", "name",
		       event_name, "namespace", ns, "eventTime", r->when,
		       "reportingController", e->controller, "reportingInstance", e->instance,
		       "action", r->action, "reason", r->reason, "note", r->note, "type",
		       r->type == EVENTS_WARNING ? "Warning" : "Normal", "regarding",
		       r->regarding);
	if (!ev)
		return CADRE_ENOMEM;
	err = kube_client_create(e->http, &kube_resource_events, ns, ev, NULL, &st);
	json_decref(ev);
	if (err == CADRE_ETERMINATING) {
		/* What it was about goes with its namespace. */
		log_debug("events", "no event %s for %s/%s: the namespace is being deleted",
			  r->reason, ns, name);
		return err;
	}
	if (err) {
		log_warn("events", "creating event %s for %s/%s: %s", r->reason, ns, name,
			 st.message);
		return err;
	}
	atomic_fetch_add(&e->created, 1);
	entry = json_pack("{s:s,s:s,s:i}", "name", event_name, "namespace", ns, "count", 1);
	if (entry)
		lru_put(e->series, key, entry, e->cache_len);
	json_decref(entry);
	return 0;
}

/* A repeat: count it in the existing Event's series. */
static int patch_series(struct events *e, struct event_rec *r, const char *key, json_t *entry)
{
	const char *name = json_string_value(json_object_get(entry, "name"));
	const char *ns = json_string_value(json_object_get(entry, "namespace"));
	json_int_t count = json_integer_value(json_object_get(entry, "count")) + 1;
	struct kube_status st;
	json_t *patch, *updated;
	int err;

	patch = json_pack("{s:{s:I,s:O}}", "series", "count", count, "lastObservedTime", r->when);
	if (!patch)
		return CADRE_ENOMEM;
	err = kube_client_patch(e->http, &kube_resource_events, ns, name, NULL,
				KUBE_PATCH_MERGE, patch, NULL, &st);
	json_decref(patch);
	if (err == CADRE_ENOTFOUND) {
		/* Events expire on the server (an hour by default): start anew. */
		json_object_del(e->series, key);
		return create_event(e, r, key);
	}
	if (err) {
		log_warn("events", "updating event %s/%s: %s", ns, name, st.message);
		return err;
	}
	atomic_fetch_add(&e->patched, 1);
	updated = json_pack("{s:s,s:s,s:I}", "name", name, "namespace", ns, "count", count);
	if (updated)
		lru_put(e->series, key, updated, e->cache_len);
	json_decref(updated);
	return 0;
}

static void send_one(struct events *e, struct event_rec *r)
{
	struct buf object_key, key;
	json_t *entry;
	int err = CADRE_ENOMEM;

	buf_init(&object_key, 4096);
	buf_init(&key, 4096 + 4 * EVENTS_MAX_NOTE);
	ref_key(&object_key, r->regarding);
	if (buf_adds(&key, buf_str(&object_key)) ||
	    buf_addf(&key, "%d\x1f%s\x1f%s\x1f%s", (int)r->type, r->reason, r->action, r->note))
		goto out;
	if (!spam_allow(e, buf_str(&object_key))) {
		atomic_fetch_add(&e->filtered, 1);
		err = 0;
		goto out;
	}
	entry = json_incref(json_object_get(e->series, buf_str(&key)));
	if (entry)
		err = patch_series(e, r, buf_str(&key), entry);
	else
		err = create_event(e, r, buf_str(&key));
	json_decref(entry);
out:
	if (err)
		atomic_fetch_add(&e->failed, 1);
	buf_release(&object_key);
	buf_release(&key);
}

static void *sender_main(void *arg)
{
	struct events *e = arg;

	pthread_mutex_lock(&e->lock);
	for (;;) {
		struct event_rec *r;

		while (!e->head && !e->stopping)
			pthread_cond_wait(&e->cond, &e->lock);
		if (e->stopping)
			break;
		r = e->head;
		e->head = r->next;
		if (!e->head)
			e->tail = NULL;
		e->queued--;
		e->in_flight = true;
		pthread_mutex_unlock(&e->lock);

		send_one(e, r);
		rec_free(r);

		pthread_mutex_lock(&e->lock);
		e->in_flight = false;
		pthread_cond_broadcast(&e->cond);
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

int events_start(struct events *e)
{
	if (e->started)
		return CADRE_EINVAL;
	if (pthread_create(&e->thread, NULL, sender_main, e))
		return CADRE_ENOMEM;
	e->started = true;
	return 0;
}

int events_flush(struct events *e, long timeout_ms)
{
	struct timespec deadline;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&e->lock);
	while (e->head || e->in_flight) {
		if (pthread_cond_timedwait(&e->cond, &e->lock, &deadline)) {
			err = CADRE_ETIMEDOUT;
			break;
		}
	}
	pthread_mutex_unlock(&e->lock);
	return err;
}

void events_stop(struct events *e)
{
	struct event_rec *r;

	pthread_mutex_lock(&e->lock);
	e->stopping = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	if (e->started) {
		pthread_join(e->thread, NULL);
		e->started = false;
	}
	pthread_mutex_lock(&e->lock);
	while ((r = e->head)) {
		e->head = r->next;
		rec_free(r);
		atomic_fetch_add(&e->dropped, 1);
	}
	e->tail = NULL;
	e->queued = 0;
	pthread_mutex_unlock(&e->lock);
}

void events_stats(struct events *e, struct events_stats *out)
{
	out->created = atomic_load(&e->created);
	out->patched = atomic_load(&e->patched);
	out->dropped = atomic_load(&e->dropped);
	out->filtered = atomic_load(&e->filtered);
	out->failed = atomic_load(&e->failed);
}
