#include "kube/leader.h"
#include "base/clock.h"

#include "base/err.h"
#include "base/log.h"
#include "kube/backoff.h"
#include "kube/client.h"
#include "kube/resource.h"
#include "kube/status.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* client-go waits retryPeriod stretched by up to 1.2x while acquiring. */
#define ACQUIRE_JITTER 1.2

struct leader {
	struct kube_http *http;
	char *ns, *name, *identity;
	long lease_ms, renew_ms, retry_ms;
	uint64_t (*now_ms)(void *arg);
	void *clock_arg;
	struct leader_callbacks cb;

	pthread_t thread;
	bool started;
	atomic_bool stop;

	pthread_mutex_t lock;   /* guards leading and holder; cond waits on it */
	pthread_cond_t cond;    /* signalled on stop */
	bool leading;
	char *holder;

	/* The election's own state: the loop thread's (or a test's) alone. */
	json_t *observed_spec;  /* the Lease spec as last seen to change */
	uint64_t observed_ms;   /* our clock when it was seen to change */
	json_t *lease;          /* the Lease as last read or written */
	uint64_t rng;
	/*
	 * While leading: when the renew deadline passes (our clock; 0 while
	 * acquiring). Every request of a renewal is bounded by the time left
	 * until then, as client-go bounds its renewal by a context with that
	 * deadline: one request may not outlast it.
	 */
	uint64_t deadline_ms;
};

static uint64_t leader_now(const struct leader *l)
{
	return l->now_ms(l->clock_arg);
}

/* "<hostname>_<16 hex digits>", client-go's id plus a random suffix. */
static char *default_identity(uint64_t *rng)
{
	char host[256] = "cadre", id[300];
	uint64_t suffix;

	if (gethostname(host, sizeof(host) - 1))
		snprintf(host, sizeof(host), "cadre");
	host[sizeof(host) - 1] = '\0';
	if (getrandom(&suffix, sizeof(suffix), 0) != (ssize_t)sizeof(suffix))
		suffix = backoff_random(rng);
	snprintf(id, sizeof(id), "%s_%016llx", host, (unsigned long long)suffix);
	return strdup(id);
}

int leader_new(struct kube_http *http, const struct leader_options *opts,
	       const struct leader_callbacks *cb, struct leader **out)
{
	pthread_condattr_t attr;
	struct leader *l;
	struct backoff seed;

	*out = NULL;
	if (!http || !opts || !opts->namespace || !*opts->namespace || !opts->name ||
	    !*opts->name)
		return CADRE_EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return CADRE_ENOMEM;
	l->http = http;
	l->lease_ms = opts->lease_duration_ms > 0 ? opts->lease_duration_ms
						  : LEADER_LEASE_DURATION_MS;
	l->renew_ms = opts->renew_deadline_ms > 0 ? opts->renew_deadline_ms
						  : LEADER_RENEW_DEADLINE_MS;
	l->retry_ms = opts->retry_period_ms > 0 ? opts->retry_period_ms
						: LEADER_RETRY_PERIOD_MS;
	l->now_ms = opts->now_ms ? opts->now_ms : clock_mono_ms_cb;
	l->clock_arg = opts->clock_arg;
	if (cb)
		l->cb = *cb;
	backoff_init(&seed, 1, 1, 0, 0);
	l->rng = seed.rng;
	l->ns = strdup(opts->namespace);
	l->name = strdup(opts->name);
	l->identity = opts->identity ? strdup(opts->identity) : default_identity(&l->rng);
	if (!l->ns || !l->name || !l->identity) {
		free(l->ns);
		free(l->name);
		free(l->identity);
		free(l);
		return CADRE_ENOMEM;
	}
	/* Renewals must give up before others may take over. */
	if (l->renew_ms >= l->lease_ms || l->retry_ms >= l->renew_ms) {
		free(l->ns);
		free(l->name);
		free(l->identity);
		free(l);
		return CADRE_EINVAL;
	}
	atomic_init(&l->stop, false);
	pthread_mutex_init(&l->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cond, &attr);
	pthread_condattr_destroy(&attr);
	*out = l;
	return 0;
}

void leader_free(struct leader *l)
{
	if (!l)
		return;
	leader_stop(l);
	json_decref(l->observed_spec);
	json_decref(l->lease);
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->lock);
	free(l->holder);
	free(l->ns);
	free(l->name);
	free(l->identity);
	free(l);
}

const char *leader_identity(struct leader *l)
{
	return l->identity;
}

bool leader_is_leader(struct leader *l)
{
	bool leading;

	pthread_mutex_lock(&l->lock);
	leading = l->leading;
	pthread_mutex_unlock(&l->lock);
	return leading;
}

char *leader_holder(struct leader *l)
{
	char *holder = NULL;

	pthread_mutex_lock(&l->lock);
	if (l->holder)
		holder = strdup(l->holder);
	pthread_mutex_unlock(&l->lock);
	return holder;
}

static void set_leading(struct leader *l, bool leading)
{
	pthread_mutex_lock(&l->lock);
	l->leading = leading;
	pthread_mutex_unlock(&l->lock);
}

/* A metav1.MicroTime for now, by the wall clock (for people and kubectl). */
static json_t *micro_time_now(void)
{
	char text[64];

	clock_micro_time(text);
	return json_string(text);
}

/*
 * Note the Lease as read or written. A spec that differs from the one last
 * seen restarts the expiry clock (client-go's observedTime); the holder is
 * reported when it changes.
 */
static void observe(struct leader *l, json_t *lease, uint64_t now)
{
	json_t *spec = json_object_get(lease, "spec");
	const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
	bool changed_holder;
	char *copy = NULL;

	json_decref(l->lease);
	l->lease = json_incref(lease);
	if (l->observed_spec && json_equal(l->observed_spec, spec))
		return;
	json_decref(l->observed_spec);
	l->observed_spec = json_deep_copy(spec);
	l->observed_ms = now;

	if (holder && *holder)
		copy = strdup(holder);
	pthread_mutex_lock(&l->lock);
	changed_holder = (copy == NULL) != (l->holder == NULL) ||
			 (copy && strcmp(copy, l->holder));
	free(l->holder);
	l->holder = copy;
	pthread_mutex_unlock(&l->lock);
	if (changed_holder && copy) {
		log_info("leader", "lease %s/%s is held by %s", l->ns, l->name, copy);
		if (l->cb.on_new_leader)
			l->cb.on_new_leader(l->cb.ctx, copy);
	}
}

/* Whether the holder in the observed record is us. */
static bool observed_self(const struct leader *l)
{
	const char *holder = json_string_value(json_object_get(l->observed_spec,
								"holderIdentity"));

	return holder && !strcmp(holder, l->identity);
}

/*
 * The spec we want to write. acquire_time and transitions come from the
 * caller: kept on renewal, new on takeover.
 */
static json_t *lease_spec(const char *holder, long duration_s, json_t *acquire_time,
			  json_int_t transitions)
{
	return json_pack("{s:s,s:i,s:o,s:o,s:I}", "holderIdentity", holder,
				 "leaseDurationSeconds", (int)duration_s, "renewTime",
				 micro_time_now(), "acquireTime",
				 acquire_time ? json_incref(acquire_time) : micro_time_now(),
				 "leaseTransitions", transitions);
}

/*
 * Before each request: bound it by the time left before the renew deadline.
 * CADRE_ETIMEDOUT when none is left: this renewal has failed already.
 */
static int bound_request(struct leader *l)
{
	uint64_t now = leader_now(l);

	if (!l->deadline_ms) {
		kube_http_set_timeout(l->http, 0);
		return 0;
	}
	if (now >= l->deadline_ms)
		return CADRE_ETIMEDOUT;
	kube_http_set_timeout(l->http, (long)(l->deadline_ms - now));
	return 0;
}

static int create_lease(struct leader *l, uint64_t now)
{
	struct kube_status st;
	json_t *obj, *created = NULL;
	int err;

	err = bound_request(l);
	if (err)
		return err;
	obj = json_pack("{s:s,s:s,s:{s:s,s:s},s:o}", "apiVersion", "coordination.k8s.io/v1",
			"kind", "Lease", "metadata", "name", l->name, "namespace", l->ns,
			"spec", lease_spec(l->identity, l->lease_ms / 1000, NULL, 0));
	if (!obj)
		return CADRE_ENOMEM;
	err = kube_client_create(l->http, &kube_resource_leases, l->ns, obj, &created, &st);
	json_decref(obj);
	if (err) {
		if (err != CADRE_EEXIST)
			log_warn("leader", "creating lease %s/%s: %s", l->ns, l->name, st.message);
		return err;
	}
	observe(l, created, now);
	json_decref(created);
	set_leading(l, true);
	return 0;
}

/* PUT lease with spec (both borrowed); the resourceVersion read guards it. */
static int put_lease(struct leader *l, const json_t *lease, json_t *spec, uint64_t now)
{
	struct kube_status st;
	json_t *obj, *written = NULL;
	int err = bound_request(l);

	if (err)
		return err;
	obj = json_deep_copy(lease);
	if (!obj || json_object_set(obj, "spec", spec)) {
		json_decref(obj);
		return CADRE_ENOMEM;
	}
	err = kube_client_replace(l->http, &kube_resource_leases, l->ns, l->name, obj,
				  &written, &st);
	json_decref(obj);
	if (err) {
		if (err == CADRE_ECONFLICT)
			log_debug("leader", "lease %s/%s changed under us; reading it again",
				  l->ns, l->name);
		else
			log_warn("leader", "writing lease %s/%s: %s", l->ns, l->name, st.message);
		return err;
	}
	observe(l, written, now);
	json_decref(written);
	return 0;
}

int leader_try(struct leader *l)
{
	uint64_t now = leader_now(l);
	struct kube_status st;
	json_t *cur = NULL, *spec, *want = NULL;
	const char *holder;
	json_int_t duration_s, transitions;
	bool self;
	int err;

	err = bound_request(l);
	if (err)
		return err;
	err = kube_client_get(l->http, &kube_resource_leases, l->ns, l->name, &cur, &st);
	if (err == CADRE_ENOTFOUND)
		return create_lease(l, now);
	if (err) {
		log_warn("leader", "reading lease %s/%s: %s", l->ns, l->name, st.message);
		return err;
	}
	observe(l, cur, now);
	spec = json_object_get(cur, "spec");
	holder = json_string_value(json_object_get(spec, "holderIdentity"));
	duration_s = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
	if (duration_s <= 0)
		duration_s = l->lease_ms / 1000;
	self = observed_self(l);
	/* Held by someone else, and not yet expired by our own clock. */
	if (holder && *holder && !self &&
	    l->observed_ms + (uint64_t)duration_s * 1000 > now) {
		set_leading(l, false);
		err = CADRE_EAGAIN;
		goto out;
	}
	transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
	want = lease_spec(l->identity, l->lease_ms / 1000,
			  self ? json_object_get(spec, "acquireTime") : NULL,
			  self ? transitions : transitions + 1);
	if (!want) {
		err = CADRE_ENOMEM;
		goto out;
	}
	if (!self)
		log_info("leader", "taking over lease %s/%s from %s", l->ns, l->name,
			 holder && *holder ? holder : "(released)");
	err = put_lease(l, cur, want, now);
	if (!err)
		set_leading(l, true);
out:
	json_decref(want);
	json_decref(cur);
	return err;
}

int leader_release(struct leader *l)
{
	json_t *spec, *want;
	int err;

	if (!l->lease || !observed_self(l)) {
		set_leading(l, false);
		return 0;
	}
	spec = json_object_get(l->lease, "spec");
	/* client-go ReleaseOnCancel: no holder, a 1 s lease, transitions kept. */
	want = lease_spec("", 1, NULL,
			  json_integer_value(json_object_get(spec, "leaseTransitions")));
	if (!want)
		return CADRE_ENOMEM;
	err = put_lease(l, l->lease, want, leader_now(l));
	json_decref(want);
	set_leading(l, false);
	if (!err)
		log_info("leader", "released lease %s/%s", l->ns, l->name);
	return err;
}

/* Sleep ms unless stopped. true when stopped. */
static bool sleep_or_stop(struct leader *l, uint64_t ms)
{
	struct timespec deadline;
	bool stopped;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += (time_t)(ms / 1000);
	deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&l->lock);
	while (!atomic_load(&l->stop))
		if (pthread_cond_timedwait(&l->cond, &l->lock, &deadline))
			break;
	stopped = atomic_load(&l->stop);
	pthread_mutex_unlock(&l->lock);
	return stopped;
}

static void *leader_main(void *arg)
{
	struct leader *l = arg;
	uint64_t last_renew;

	/* Acquire: retry until we hold it. */
	for (;;) {
		uint64_t wait_ms;

		if (atomic_load(&l->stop))
			return NULL;
		if (leader_try(l) == 0)
			break;
		wait_ms = (uint64_t)l->retry_ms +
			  backoff_between(&l->rng, 0,
					  (uint64_t)((double)l->retry_ms * ACQUIRE_JITTER));
		if (sleep_or_stop(l, wait_ms))
			return NULL;
	}
	log_info("leader", "%s leads (lease %s/%s)", l->identity, l->ns, l->name);
	if (l->cb.on_started_leading)
		l->cb.on_started_leading(l->cb.ctx);

	/*
	 * Renew every retry period; give up after the renew deadline. Each
	 * attempt's requests are bounded by it (bound_request), so a hung
	 * request cannot keep a deposed leader writing past it.
	 */
	last_renew = leader_now(l);
	while (!sleep_or_stop(l, (uint64_t)l->retry_ms)) {
		uint64_t now;
		int err;

		l->deadline_ms = last_renew + (uint64_t)l->renew_ms;
		err = leader_try(l);
		if (!err) {
			last_renew = leader_now(l);
			continue;
		}
		now = leader_now(l);
		/* Someone else holds a valid lease: we are no longer leader. */
		if (err == CADRE_EAGAIN || now - last_renew >= (uint64_t)l->renew_ms) {
			log_error("leader", "%s lost lease %s/%s: %s, last renewed %llu ms ago",
				  l->identity, l->ns, l->name, cadre_strerror(err),
				  (unsigned long long)(now - last_renew));
			set_leading(l, false);
			if (l->cb.on_stopped_leading)
				l->cb.on_stopped_leading(l->cb.ctx);
			return NULL;
		}
	}
	/* Stopped while leading: hand over at once. */
	l->deadline_ms = 0;
	leader_release(l);
	if (l->cb.on_stopped_leading)
		l->cb.on_stopped_leading(l->cb.ctx);
	return NULL;
}

int leader_start(struct leader *l)
{
	if (l->started)
		return CADRE_EINVAL;
	atomic_store(&l->stop, false);
	if (pthread_create(&l->thread, NULL, leader_main, l))
		return CADRE_ENOMEM;
	l->started = true;
	return 0;
}

void leader_stop(struct leader *l)
{
	pthread_mutex_lock(&l->lock);
	atomic_store(&l->stop, true);
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	if (l->started) {
		pthread_join(l->thread, NULL);
		l->started = false;
	}
}
