#include <criterion/criterion.h>

#include "base/err.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/leader.h"
#include "unit/support/httpd.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/cadre-system/leases/cadre"
#define LEASES_PATH "/apis/coordination.k8s.io/v1/namespaces/cadre-system/leases"

/* One Lease behind a fake API server with resourceVersion checks. */
struct fake_lease {
	pthread_mutex_t lock;
	json_t *lease;          /* NULL: none */
	long rv;
	int reads, creates, puts;
	int fail_puts;          /* answer every PUT with this status (0: don't) */
	bool stall_gets;        /* send a GET's headers, never its body (a stalled server) */
	bool race_next_put;     /* "third" writes just before our next PUT lands */
	char *scratch;          /* the last response body (httpd copies it) */
};

static void answer(struct fake_lease *f, struct httpd_response *resp, int status, json_t *body)
{
	free(f->scratch);
	f->scratch = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	resp->status = status;
	resp->body = f->scratch;
}

static json_t *status_body(int code, const char *reason)
{
	return json_pack("{s:s,s:s,s:i,s:s,s:s}", "kind", "Status", "status", "Failure", "code",
			 code, "reason", reason, "message", reason);
}

static void store_lease(struct fake_lease *f, json_t *lease)
{
	char rv[32];

	snprintf(rv, sizeof(rv), "%ld", ++f->rv);
	json_object_set_new(json_object_get(lease, "metadata"), "resourceVersion", json_string(rv));
	json_decref(f->lease);
	f->lease = lease;
}

static void lease_handler(void *ctx, const struct httpd_request *req,
			  struct httpd_response *resp)
{
	struct fake_lease *f = ctx;
	json_t *body = NULL;

	pthread_mutex_lock(&f->lock);
	if (!strcmp(req->method, "GET") && !strcmp(req->target, LEASE_PATH)) {
		f->reads++;
		if (f->stall_gets) {
			answer(f, resp, 200, json_deep_copy(f->lease));
			resp->hold_ms = -1;
		} else if (f->lease)
			answer(f, resp, 200, json_deep_copy(f->lease));
		else
			answer(f, resp, 404, status_body(404, "NotFound"));
	} else if (!strcmp(req->method, "POST") && !strcmp(req->target, LEASES_PATH)) {
		f->creates++;
		if (f->lease) {
			answer(f, resp, 409, status_body(409, "AlreadyExists"));
		} else {
			store_lease(f, json_loads(req->body, 0, NULL));
			answer(f, resp, 201, json_deep_copy(f->lease));
		}
	} else if (!strcmp(req->method, "PUT") && !strcmp(req->target, LEASE_PATH)) {
		const char *rv;

		f->puts++;
		body = json_loads(req->body, 0, NULL);
		rv = json_string_value(json_object_get(json_object_get(body, "metadata"),
						       "resourceVersion"));
		if (f->fail_puts) {
			answer(f, resp, f->fail_puts, status_body(f->fail_puts, "InternalError"));
		} else if (f->race_next_put) {
			json_t *other = json_deep_copy(f->lease);

			f->race_next_put = false;
			json_object_set_new(json_object_get(other, "spec"), "holderIdentity",
					    json_string("third"));
			store_lease(f, other);
			answer(f, resp, 409, status_body(409, "Conflict"));
		} else if (!f->lease || !rv || strtol(rv, NULL, 10) != f->rv) {
			answer(f, resp, 409, status_body(409, "Conflict"));
		} else {
			store_lease(f, body);
			body = NULL;
			answer(f, resp, 200, json_deep_copy(f->lease));
		}
	} else {
		answer(f, resp, 400, status_body(400, "BadRequest"));
	}
	json_decref(body);
	pthread_mutex_unlock(&f->lock);
}

/* The stored lease's spec field, as a string ("" when absent). */
static char *spec_field(struct fake_lease *f, const char *field)
{
	json_t *v;
	char *out;

	pthread_mutex_lock(&f->lock);
	v = json_object_get(json_object_get(f->lease, "spec"), field);
	if (json_is_string(v))
		out = strdup(json_string_value(v));
	else if (json_is_integer(v))
		out = json_dumps(v, JSON_ENCODE_ANY);
	else
		out = strdup("");
	pthread_mutex_unlock(&f->lock);
	return out;
}

static void expect_spec(struct fake_lease *f, const char *field, const char *want)
{
	char *got = spec_field(f, field);

	cr_assert_str_eq(got, want, "spec.%s", field);
	free(got);
}

static void set_other_holder(struct fake_lease *f, const char *holder, const char *renew)
{
	pthread_mutex_lock(&f->lock);
	store_lease(f, json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:i,s:s,s:s,s:i}}", "apiVersion",
				 "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name",
				 "cadre", "namespace", "cadre-system", "spec", "holderIdentity",
				 holder, "leaseDurationSeconds", 15, "acquireTime",
				 "2000-01-01T00:00:00.000000Z", "renewTime", renew,
				 "leaseTransitions", 3));
	pthread_mutex_unlock(&f->lock);
}

static _Atomic uint64_t fake_now = 100000;

static uint64_t fake_clock(void *arg)
{
	(void)arg;
	return atomic_load(&fake_now);
}

/* What the callbacks saw. */
struct seen {
	atomic_int started, stopped;
	char leaders[512];
	pthread_mutex_t lock;
};

static void cb_started(void *ctx)
{
	atomic_fetch_add(&((struct seen *)ctx)->started, 1);
}

static void cb_stopped(void *ctx)
{
	atomic_fetch_add(&((struct seen *)ctx)->stopped, 1);
}

static void cb_new_leader(void *ctx, const char *id)
{
	struct seen *s = ctx;
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = strlen(s->leaders);
	snprintf(s->leaders + n, sizeof(s->leaders) - n, "%s;", id);
	pthread_mutex_unlock(&s->lock);
}

struct rig {
	struct fake_lease fake;
	struct httpd *server;
	struct kube_config *cfg;
	struct kube_http *http;
	struct seen seen;
	struct leader *l;
};

static struct leader *new_elector(struct rig *g, const char *identity, bool fake_time,
				  long lease_ms, long renew_ms, long retry_ms)
{
	struct leader_options opts = {
		.namespace = "cadre-system",
		.name = "cadre",
		.identity = identity,
		.lease_duration_ms = lease_ms,
		.renew_deadline_ms = renew_ms,
		.retry_period_ms = retry_ms,
		.now_ms = fake_time ? fake_clock : NULL,
	};
	struct leader_callbacks cb = { cb_started, cb_stopped, cb_new_leader, &g->seen };
	struct leader *l;

	cr_assert_eq(leader_new(g->http, &opts, &cb, &l), 0);
	return l;
}

static void rig_init(struct rig *g)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->fake.lock, NULL);
	pthread_mutex_init(&g->seen.lock, NULL);
	cr_assert_eq(httpd_new(&g->server), 0);
	httpd_set_handler(g->server, lease_handler, &g->fake);
	cr_assert_eq(kube_config_new(httpd_url(g->server), &g->cfg), 0);
	cr_assert_eq(kube_http_new(g->cfg, NULL, &g->http), 0);
	g->l = new_elector(g, "me", true, 0, 0, 0);
}

static void rig_release(struct rig *g)
{
	leader_free(g->l);
	httpd_free(g->server);
	kube_http_free(g->http);
	kube_config_free(g->cfg);
	json_decref(g->fake.lease);
	free(g->fake.scratch);
}

static void advance(uint64_t ms)
{
	atomic_fetch_add(&fake_now, ms);
}

Test(leader, acquires_by_creating_the_lease)
{
	struct rig g;

	rig_init(&g);
	cr_assert_not(leader_is_leader(g.l));
	cr_assert_eq(leader_try(g.l), 0);
	cr_assert(leader_is_leader(g.l));
	cr_assert_eq(g.fake.creates, 1);
	expect_spec(&g.fake, "holderIdentity", "me");
	expect_spec(&g.fake, "leaseDurationSeconds", "15");
	expect_spec(&g.fake, "leaseTransitions", "0");
	cr_assert_str_eq(g.seen.leaders, "me;");
	rig_release(&g);
}

Test(leader, renewing_keeps_acquire_time_and_transitions)
{
	struct rig g;
	char *acquired, *renewed, *renewed_again;

	rig_init(&g);
	cr_assert_eq(leader_try(g.l), 0);
	acquired = spec_field(&g.fake, "acquireTime");
	renewed = spec_field(&g.fake, "renewTime");
	usleep(2000);
	advance(2000);
	cr_assert_eq(leader_try(g.l), 0);
	cr_assert_eq(g.fake.puts, 1);
	expect_spec(&g.fake, "acquireTime", acquired);
	expect_spec(&g.fake, "leaseTransitions", "0");
	renewed_again = spec_field(&g.fake, "renewTime");
	cr_assert_str_neq(renewed, renewed_again);
	cr_assert_str_eq(g.seen.leaders, "me;");
	free(acquired);
	free(renewed);
	free(renewed_again);
	rig_release(&g);
}

Test(leader, another_holders_lease_expires_by_our_clock_not_its_timestamps)
{
	struct rig g;

	rig_init(&g);
	/* A renewTime from 2000: by timestamps long expired; we must not care. */
	set_other_holder(&g.fake, "other", "2000-01-01T00:00:00.000000Z");
	cr_assert_eq(leader_try(g.l), CADRE_EAGAIN);
	cr_assert_not(leader_is_leader(g.l));
	advance(14999);
	cr_assert_eq(leader_try(g.l), CADRE_EAGAIN);
	cr_assert_eq(g.fake.puts, 0);
	advance(1);
	cr_assert_eq(leader_try(g.l), 0);
	cr_assert(leader_is_leader(g.l));
	expect_spec(&g.fake, "holderIdentity", "me");
	expect_spec(&g.fake, "leaseTransitions", "4");
	cr_assert_str_eq(g.seen.leaders, "other;me;");
	rig_release(&g);
}

Test(leader, a_holder_that_keeps_renewing_keeps_the_lease)
{
	struct rig g;

	rig_init(&g);
	set_other_holder(&g.fake, "other", "2026-01-01T00:00:00.000000Z");
	cr_assert_eq(leader_try(g.l), CADRE_EAGAIN);
	advance(10000);
	set_other_holder(&g.fake, "other", "2026-01-01T00:00:10.000000Z");
	cr_assert_eq(leader_try(g.l), CADRE_EAGAIN);
	/* 20 s since first seen, but only 10 s since it last changed. */
	advance(10000);
	cr_assert_eq(leader_try(g.l), CADRE_EAGAIN);
	advance(5000);
	cr_assert_eq(leader_try(g.l), 0);
	rig_release(&g);
}

Test(leader, a_conflict_is_read_again_and_never_overwritten)
{
	struct rig g;
	int reads;

	rig_init(&g);
	set_other_holder(&g.fake, "other", "2026-01-01T00:00:00.000000Z");
	cr_assert_eq(leader_try(g.l), CADRE_EAGAIN);
	advance(16000);
	g.fake.race_next_put = true;
	cr_assert_eq(leader_try(g.l), CADRE_ECONFLICT);
	cr_assert_not(leader_is_leader(g.l));
	expect_spec(&g.fake, "holderIdentity", "third");
	reads = g.fake.reads;
	/* The next attempt reads first and sees a fresh holder: hands off. */
	cr_assert_eq(leader_try(g.l), CADRE_EAGAIN);
	cr_assert_eq(g.fake.reads, reads + 1);
	expect_spec(&g.fake, "holderIdentity", "third");
	cr_assert_eq(g.fake.puts, 1);
	rig_release(&g);
}

Test(leader, a_released_lease_is_taken_at_once)
{
	struct rig g;

	rig_init(&g);
	set_other_holder(&g.fake, "", "2026-01-01T00:00:00.000000Z");
	cr_assert_eq(leader_try(g.l), 0);
	expect_spec(&g.fake, "holderIdentity", "me");
	expect_spec(&g.fake, "leaseTransitions", "4");
	rig_release(&g);
}

Test(leader, release_empties_the_holder_so_another_replica_takes_over_at_once)
{
	struct rig g;
	struct leader *b;

	rig_init(&g);
	cr_assert_eq(leader_try(g.l), 0);
	b = new_elector(&g, "b", true, 0, 0, 0);
	cr_assert_eq(leader_try(b), CADRE_EAGAIN);
	cr_assert_eq(leader_release(g.l), 0);
	cr_assert_not(leader_is_leader(g.l));
	expect_spec(&g.fake, "holderIdentity", "");
	expect_spec(&g.fake, "leaseDurationSeconds", "1");
	cr_assert_eq(leader_try(b), 0);
	expect_spec(&g.fake, "holderIdentity", "b");
	expect_spec(&g.fake, "leaseTransitions", "1");
	/* Releasing what we do not hold writes nothing. */
	cr_assert_eq(leader_release(g.l), 0);
	leader_free(b);
	rig_release(&g);
}

static bool wait_for(atomic_int *v, int want, int timeout_ms)
{
	int i;

	for (i = 0; i < timeout_ms / 5 && atomic_load(v) < want; i++)
		usleep(5000);
	return atomic_load(v) >= want;
}

/* Poll until the fake has seen n PUTs (renewals), for at most timeout_ms. */
static bool wait_puts(struct fake_lease *f, int n, int timeout_ms)
{
	int i, puts = 0;

	for (i = 0; i < timeout_ms / 5; i++) {
		pthread_mutex_lock(&f->lock);
		puts = f->puts;
		pthread_mutex_unlock(&f->lock);
		if (puts >= n)
			return true;
		usleep(5000);
	}
	return false;
}

Test(leader, the_thread_leads_then_releases_on_stop)
{
	struct rig g;
	struct leader *a;

	rig_init(&g);
	a = new_elector(&g, "a", false, 3000, 2000, 50);
	cr_assert_eq(leader_start(a), 0);
	cr_assert(wait_for(&g.seen.started, 1, 3000));
	cr_assert(leader_is_leader(a));
	cr_assert(wait_puts(&g.fake, 2, 5000), "no renewals");
	expect_spec(&g.fake, "holderIdentity", "a");
	leader_stop(a);
	cr_assert_eq(atomic_load(&g.seen.stopped), 1);
	cr_assert_not(leader_is_leader(a));
	expect_spec(&g.fake, "holderIdentity", "");
	/* The replica that was waiting reads it on its next try. */
	cr_assert_eq(leader_try(g.l), 0);
	leader_free(a);
	cr_assert_eq(atomic_load(&g.seen.stopped), 1);
	rig_release(&g);
}

Test(leader, failed_renewals_past_the_deadline_stop_leading)
{
	struct rig g;
	struct leader *a;

	rig_init(&g);
	a = new_elector(&g, "a", false, 1000, 300, 50);
	cr_assert_eq(leader_start(a), 0);
	cr_assert(wait_for(&g.seen.started, 1, 3000));
	pthread_mutex_lock(&g.fake.lock);
	g.fake.fail_puts = 500;
	pthread_mutex_unlock(&g.fake.lock);
	cr_assert(wait_for(&g.seen.stopped, 1, 3000));
	cr_assert_not(leader_is_leader(a));
	leader_free(a);
	cr_assert_eq(atomic_load(&g.seen.stopped), 1);
	rig_release(&g);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * A renewal whose request hangs (the server answers its headers, never its
 * body) gives up at the renew deadline, not when the client's own request
 * timeout (here a minute) ends: another replica may lead once the lease
 * duration has passed, and this one must have stopped writing before that.
 */
Test(leader, a_renewal_that_hangs_gives_up_at_the_renew_deadline)
{
	struct rig g;
	struct leader *a;
	uint64_t stalled_at, took;

	rig_init(&g);
	a = new_elector(&g, "a", false, 3000, 1000, 100);
	cr_assert_eq(leader_start(a), 0);
	cr_assert(wait_for(&g.seen.started, 1, 3000));
	cr_assert(wait_puts(&g.fake, 2, 5000), "no renewals");
	pthread_mutex_lock(&g.fake.lock);
	g.fake.stall_gets = true;
	pthread_mutex_unlock(&g.fake.lock);
	stalled_at = mono_ms();
	cr_assert(wait_for(&g.seen.stopped, 1, 10000), "still leading 10 s into a stall");
	took = mono_ms() - stalled_at;
	cr_assert_lt(took, 2500, "stopped %llu ms into the stall; the renew deadline is 1000 ms",
		     (unsigned long long)took);
	cr_assert_not(leader_is_leader(a));
	leader_free(a);
	rig_release(&g);
}

Test(leader, timings_must_let_renewal_give_up_before_others_take_over)
{
	struct rig g;
	struct leader *l = NULL;
	struct leader_options bad = {
		.namespace = "ns", .name = "x", .lease_duration_ms = 10000,
		.renew_deadline_ms = 10000,
	};

	rig_init(&g);
	cr_assert_eq(leader_new(g.http, &bad, NULL, &l), CADRE_EINVAL);
	cr_assert_null(l);
	bad.renew_deadline_ms = 0;
	bad.lease_duration_ms = 0;
	bad.name = NULL;
	cr_assert_eq(leader_new(g.http, &bad, NULL, &l), CADRE_EINVAL);
	rig_release(&g);
}

Test(leader, the_default_identity_is_hostname_and_a_random_suffix)
{
	struct leader_options opts = { .namespace = "ns", .name = "x" };
	struct leader *a, *b;
	struct rig g;
	char host[256] = "";
	const char *id;

	rig_init(&g);
	gethostname(host, sizeof(host) - 1);
	cr_assert_eq(leader_new(g.http, &opts, NULL, &a), 0);
	cr_assert_eq(leader_new(g.http, &opts, NULL, &b), 0);
	id = leader_identity(a);
	cr_assert_eq(strncmp(id, host, strlen(host)), 0, "%s", id);
	cr_assert_eq(id[strlen(host)], '_');
	cr_assert_eq(strlen(id), strlen(host) + 17);
	cr_assert_str_neq(id, leader_identity(b));
	leader_free(a);
	leader_free(b);
	rig_release(&g);
}
