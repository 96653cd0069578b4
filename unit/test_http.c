#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <strings.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "kube/config.h"
#include "kube/http.h"
#include "unit/support/httpd.h"

#define S 1000000000LL
#define TESTDATA CADRE_SOURCE_DIR "/unit/testdata/kube"

/* A clock whose sleeps return at once and are added up. */
struct fake_clock {
	_Atomic int64_t now;
	_Atomic int64_t slept;
};

static int64_t fake_now(void *ctx)
{
	return atomic_load(&((struct fake_clock *)ctx)->now);
}

static void fake_sleep(void *ctx, int64_t ns)
{
	struct fake_clock *c = ctx;

	atomic_fetch_add(&c->now, ns);
	atomic_fetch_add(&c->slept, ns);
}

/* One test's world: a fake server, a config pointing at it, a client. */
struct env {
	struct httpd *server;
	struct kube_config *cfg;
	struct kube_http *http;
	struct fake_clock clock;
	struct kube_ratelimit_clock rclock;
	struct kube_response resp;
};

static void env_start(struct env *e, const struct kube_http_opts *opts_in)
{
	struct kube_http_opts opts;

	memset(e, 0, sizeof(*e));
	e->clock.now = 1000 * S;
	e->rclock = (struct kube_ratelimit_clock){ fake_now, fake_sleep, &e->clock };
	cr_assert_eq(httpd_new(&e->server), 0);
	cr_assert_eq(kube_config_new(httpd_url(e->server), &e->cfg), 0);
	if (opts_in)
		opts = *opts_in;
	else
		kube_http_opts_init(&opts);
	if (!opts.clock)
		opts.clock = &e->rclock;
	cr_assert_eq(kube_http_new(e->cfg, &opts, &e->http), 0);
	kube_response_init(&e->resp);
}

static void env_stop(struct env *e)
{
	kube_response_release(&e->resp);
	kube_http_free(e->http);
	kube_config_free(e->cfg);
	httpd_free(e->server);
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

Test(http, get_returns_the_body_and_sends_identity_headers)
{
	struct env e;
	const struct httpd_request *req;

	env_start(&e, NULL);
	e.cfg->token = strdup("s3cret");
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .body = "{\"kind\":\"Pod\"}" });
	cr_assert_eq(kube_http_request(e.http, "GET", "/api/v1/namespaces/ml/pods/p",
				       NULL, NULL, 0, &e.resp), 0);
	cr_assert_eq(e.resp.status, 200);
	cr_assert_str_eq(buf_str(&e.resp.body), "{\"kind\":\"Pod\"}");
	cr_assert_eq(e.resp.error.code, 0);
	req = httpd_request_at(e.server, 0);
	cr_assert_str_eq(req->method, "GET");
	cr_assert_str_eq(req->target, "/api/v1/namespaces/ml/pods/p");
	cr_assert_str_eq(httpd_request_header(req, "Authorization"), "Bearer s3cret");
	cr_assert_str_eq(httpd_request_header(req, "Accept"), "application/json");
	cr_assert_str_eq(httpd_request_header(req, "User-Agent"), "cadre/" CADRE_VERSION);
	env_stop(&e);
}

Test(http, post_sends_the_body_with_its_content_type)
{
	static const char body[] = "{\"metadata\":{\"name\":\"x\"}}";
	struct env e;
	const struct httpd_request *req;

	env_start(&e, NULL);
	httpd_push(e.server, &(struct httpd_response){ .status = 201, .body = "{}" });
	cr_assert_eq(kube_http_request(e.http, "POST", "/api/v1/namespaces/ml/pods",
				       "application/json", body, strlen(body), &e.resp), 0);
	req = httpd_request_at(e.server, 0);
	cr_assert_str_eq(req->method, "POST");
	cr_assert_str_eq(req->body, body);
	cr_assert_str_eq(httpd_request_header(req, "Content-Type"), "application/json");
	cr_assert_null(httpd_request_header(req, "Authorization"));
	cr_assert_null(httpd_request_header(req, "Expect"));
	env_stop(&e);
}

Test(http, patch_and_delete_use_their_verbs)
{
	struct env e;

	env_start(&e, NULL);
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	cr_assert_eq(kube_http_request(e.http, "PATCH", "/x", "application/merge-patch+json",
				       "{}", 2, &e.resp), 0);
	cr_assert_eq(kube_http_request(e.http, "DELETE", "/y", NULL, NULL, 0, &e.resp), 0);
	cr_assert_str_eq(httpd_request_at(e.server, 0)->method, "PATCH");
	cr_assert_str_eq(httpd_request_header(httpd_request_at(e.server, 0), "Content-Type"),
			 "application/merge-patch+json");
	cr_assert_str_eq(httpd_request_at(e.server, 1)->method, "DELETE");
	env_stop(&e);
}

Test(http, a_conflict_is_returned_at_once_with_the_server_message)
{
	struct env e;

	env_start(&e, NULL);
	httpd_push(e.server, &(struct httpd_response){ .status = 409,
		   .body = "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\","
			   "\"message\":\"pods \\\"a-0\\\" already exists\",\"code\":409}" });
	cr_assert_eq(kube_http_request(e.http, "POST", "/api/v1/namespaces/ml/pods",
				       NULL, "{}", 2, &e.resp), CADRE_EEXIST);
	cr_assert_eq(e.resp.status, 409);
	cr_assert_eq(e.resp.attempts, 1);
	cr_assert_str_eq(e.resp.error.reason, "AlreadyExists");
	cr_assert_str_eq(e.resp.error.message, "pods \"a-0\" already exists");
	cr_assert_eq(httpd_request_count(e.server), 1);
	env_stop(&e);
}

/*
 * An API server may answer a request it refuses (401, 403) and close the
 * stream before the body is all read or sent: libcurl then reports a
 * partial transfer after a complete status line. The refusal is what the
 * server said, not a network failure; a cut success is still a failure.
 */
Test(http, an_error_answer_cut_short_is_the_servers_answer_not_a_network_failure)
{
	struct env e;

	env_start(&e, NULL);
	httpd_push(e.server, &(struct httpd_response){ .status = 403, .torn = true,
		   .body = "{\"kind\":\"Status\",\"reason\":\"Forbidden\","
			   "\"message\":\"pods is forbidden: User \\\"x\\\" cannot create\",\"code\":403}" });
	cr_assert_eq(kube_http_request(e.http, "POST", "/api/v1/namespaces/ml/pods",
				       NULL, "{}", 2, &e.resp), CADRE_EFORBIDDEN);
	cr_assert_eq(e.resp.status, 403);
	cr_assert_str_eq(e.resp.error.reason, "Forbidden");
	cr_assert_str_eq(e.resp.error.message, "pods is forbidden: User \"x\" cannot create");
	env_stop(&e);
}

Test(http, a_success_cut_short_is_still_an_io_error)
{
	struct env e;

	env_start(&e, NULL);
	httpd_push(e.server, &(struct httpd_response){ .status = 201, .torn = true,
		   .body = "{\"kind\":\"Pod\"}" });
	cr_assert_eq(kube_http_request(e.http, "POST", "/api/v1/namespaces/ml/pods",
				       NULL, "{}", 2, &e.resp), CADRE_EIO);
	env_stop(&e);
}

Test(http, too_many_requests_waits_retry_after_and_retries_even_a_post)
{
	struct env e;

	env_start(&e, NULL);
	httpd_push(e.server, &(struct httpd_response){ .status = 429,
		   .headers = "Retry-After: 1\r\n",
		   .body = "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429}" });
	httpd_push(e.server, &(struct httpd_response){ .status = 201, .body = "{\"ok\":1}" });
	cr_assert_eq(kube_http_request(e.http, "POST", "/api/v1/namespaces/ml/pods",
				       NULL, "{}", 2, &e.resp), 0);
	cr_assert_eq(e.resp.status, 201);
	cr_assert_eq(e.resp.attempts, 2);
	cr_assert_str_eq(buf_str(&e.resp.body), "{\"ok\":1}");
	cr_assert_eq(httpd_request_count(e.server), 2);
	cr_assert_str_eq(httpd_request_at(e.server, 1)->body, "{}");
	/* The wait went through the clock: exactly the second asked for. */
	cr_assert_eq(e.clock.slept, 1 * S, "slept %lld", (long long)e.clock.slept);
	env_stop(&e);
}

Test(http, retry_after_is_honoured_on_the_real_clock)
{
	struct kube_http_opts opts;
	struct env e;
	int64_t start;

	kube_http_opts_init(&opts);
	opts.clock = &kube_ratelimit_clock_real;
	env_start(&e, &opts);
	httpd_push(e.server, &(struct httpd_response){ .status = 429,
		   .headers = "Retry-After: 1\r\n" });
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	start = mono_ms();
	cr_assert_eq(kube_http_request(e.http, "GET", "/api", NULL, NULL, 0, &e.resp), 0);
	cr_assert_geq(mono_ms() - start, 1000);
	env_stop(&e);
}

Test(http, service_unavailable_with_retry_after_retries_idempotent_requests_only)
{
	struct env e;

	env_start(&e, NULL);
	httpd_push(e.server, &(struct httpd_response){ .status = 503,
		   .headers = "Retry-After: 2\r\n" });
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	cr_assert_eq(kube_http_request(e.http, "GET", "/api", NULL, NULL, 0, &e.resp), 0);
	cr_assert_eq(e.clock.slept, 2 * S);

	/* A POST may have been processed: it is handed back, not resent. */
	httpd_push(e.server, &(struct httpd_response){ .status = 503,
		   .headers = "Retry-After: 2\r\n" });
	cr_assert_eq(kube_http_request(e.http, "POST", "/api", NULL, "{}", 2, &e.resp),
		     CADRE_EAGAIN);
	cr_assert_eq(httpd_request_count(e.server), 3);

	/* Without Retry-After nothing says when to come back. */
	httpd_push(e.server, &(struct httpd_response){ .status = 503 });
	cr_assert_eq(kube_http_request(e.http, "GET", "/api", NULL, NULL, 0, &e.resp),
		     CADRE_ESERVER);
	cr_assert_eq(httpd_request_count(e.server), 4);
	env_stop(&e);
}

Test(http, retries_are_bounded)
{
	struct kube_http_opts opts;
	struct env e;

	kube_http_opts_init(&opts);
	opts.max_retries = 2;
	env_start(&e, &opts);
	for (int i = 0; i < 5; i++)
		httpd_push(e.server, &(struct httpd_response){ .status = 429,
			   .headers = "Retry-After: 100\r\n" });
	cr_assert_eq(kube_http_request(e.http, "GET", "/api", NULL, NULL, 0, &e.resp),
		     CADRE_ETOOMANY);
	cr_assert_eq(e.resp.attempts, 3);
	cr_assert_eq(httpd_request_count(e.server), 3);
	/* Each wait capped at max_retry_after (60 s), not the 100 s asked. */
	cr_assert_eq(e.clock.slept, 2 * 60 * S);
	env_stop(&e);
}

Test(http, the_client_side_limiter_spaces_requests_past_the_burst)
{
	struct kube_http_opts opts;
	struct env e;

	kube_http_opts_init(&opts);
	opts.qps = 1;
	opts.burst = 2;
	env_start(&e, &opts);
	for (int i = 0; i < 5; i++) {
		httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
		cr_assert_eq(kube_http_request(e.http, "GET", "/api", NULL, NULL, 0, &e.resp), 0);
	}
	/* Two from the burst, then one a second: three seconds of waiting. */
	cr_assert_eq(e.clock.slept, 3 * S, "slept %lld", (long long)e.clock.slept);
	env_stop(&e);
}

Test(http, connections_are_reused)
{
	struct env e;

	env_start(&e, NULL);
	for (int i = 0; i < 3; i++) {
		httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
		cr_assert_eq(kube_http_request(e.http, "GET", "/api", NULL, NULL, 0, &e.resp), 0);
	}
	cr_assert_eq(httpd_connection_count(e.server), 1);
	env_stop(&e);
}

struct worker {
	struct kube_http *http;
	int failures;
};

static void answer_ok(void *ctx, const struct httpd_request *req,
		      struct httpd_response *resp)
{
	(void)ctx;
	resp->status = 200;
	resp->body = req->target;
}

static void *request_many(void *arg)
{
	struct worker *w = arg;
	struct kube_response resp;
	char path[64];

	kube_response_init(&resp);
	for (int i = 0; i < 20; i++) {
		snprintf(path, sizeof(path), "/t/%p/%d", (void *)w, i);
		if (kube_http_request(w->http, "GET", path, NULL, NULL, 0, &resp) ||
		    strcmp(buf_str(&resp.body), path))
			w->failures++;
	}
	kube_response_release(&resp);
	return NULL;
}

Test(http, concurrent_requests_from_several_threads)
{
	struct env e;
	struct worker workers[4];
	pthread_t threads[4];

	env_start(&e, NULL);
	httpd_set_handler(e.server, answer_ok, NULL);
	for (int i = 0; i < 4; i++) {
		workers[i] = (struct worker){ e.http, 0 };
		pthread_create(&threads[i], NULL, request_many, &workers[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(threads[i], NULL);
		cr_expect_eq(workers[i].failures, 0);
	}
	cr_assert_eq(httpd_request_count(e.server), 80);
	/* Connections are pooled: far fewer than one per request. */
	cr_assert_leq(httpd_connection_count(e.server), 8);
	env_stop(&e);
}

Test(http, stats_count_requests_by_verb_and_code)
{
	struct kube_http_stat stats[8];
	struct env e;
	size_t n;
	uint64_t get200 = 0, post409 = 0;

	env_start(&e, NULL);
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	httpd_push(e.server, &(struct httpd_response){ .status = 409, .body = "{}" });
	kube_http_request(e.http, "GET", "/a", NULL, NULL, 0, &e.resp);
	kube_http_request(e.http, "GET", "/a", NULL, NULL, 0, &e.resp);
	kube_http_request(e.http, "POST", "/a", NULL, "{}", 2, &e.resp);
	n = kube_http_stats(e.http, stats, 8);
	cr_assert_eq(n, 2);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(stats[i].verb, "GET") && stats[i].code == 200)
			get200 = stats[i].count;
		if (!strcmp(stats[i].verb, "POST") && stats[i].code == 409)
			post409 = stats[i].count;
	}
	cr_assert_eq(get200, 2);
	cr_assert_eq(post409, 1);
	env_stop(&e);
}

Test(http, a_body_over_the_cap_is_refused)
{
	struct kube_http_opts opts;
	struct env e;

	kube_http_opts_init(&opts);
	opts.max_body = 16;
	env_start(&e, &opts);
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .body = "{\"items\":[1,2,3,4,5,6,7,8,9]}" });
	cr_assert_eq(kube_http_request(e.http, "GET", "/a", NULL, NULL, 0, &e.resp),
		     CADRE_ETOOBIG);
	cr_assert_leq(e.resp.body.len, 16);
	env_stop(&e);
}

Test(http, a_refused_connection_is_an_io_error)
{
	struct kube_config *cfg;
	struct kube_http *http;
	struct kube_response resp;
	struct httpd *s;
	char url[64];

	/* A port that was just free: nothing listens there now. */
	httpd_new(&s);
	snprintf(url, sizeof(url), "%s", httpd_url(s));
	httpd_free(s);
	kube_config_new(url, &cfg);
	kube_http_new(cfg, NULL, &http);
	kube_response_init(&resp);
	cr_assert_eq(kube_http_request(http, "GET", "/api", NULL, NULL, 0, &resp), CADRE_EIO);
	cr_assert_eq(resp.status, 0);
	cr_assert(strstr(resp.error.message, "GET /api"), "%s", resp.error.message);
	kube_response_release(&resp);
	kube_http_free(http);
	kube_config_free(cfg);
}

Test(http, a_slow_answer_times_out)
{
	struct kube_http_opts opts;
	struct env e;

	kube_http_opts_init(&opts);
	opts.request_timeout_ms = 300;
	env_start(&e, &opts);
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}",
		   .delay_ms = 5000 });
	cr_assert_eq(kube_http_request(e.http, "GET", "/a", NULL, NULL, 0, &e.resp),
		     CADRE_ETIMEDOUT);
	env_stop(&e);
}

struct timed_worker {
	struct kube_http *http;
	int err;
	int64_t took_ms;
};

static void *request_once_timed(void *arg)
{
	struct timed_worker *w = arg;
	struct kube_response resp;
	int64_t t0 = mono_ms();

	kube_response_init(&resp);
	w->err = kube_http_request(w->http, "GET", "/silent", NULL, NULL, 0, &resp);
	w->took_ms = mono_ms() - t0;
	kube_response_release(&resp);
	return NULL;
}

/*
 * A TLS server that takes connections and never says a word (a stopped
 * process: the kernel completes the TCP handshake, nothing answers it).
 * Requests that wait for the first connection to learn whether it
 * multiplexes are not on any connection yet, and libcurl does not time
 * those out: each must still end at its own timeout, not one connect
 * timeout after the request ahead of it (the sixth would take 3 s).
 */
Test(http, concurrent_requests_to_a_silent_server_each_end_at_their_own_timeout,
     .timeout = 60)
{
	enum { N = 6 };
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	struct timed_worker workers[N];
	struct kube_http_opts opts;
	pthread_t threads[N];
	struct kube_config *cfg;
	struct kube_http *http;
	int64_t shortest = INT64_MAX, longest = 0;
	char url[64];
	int fd;

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	cr_assert_eq(listen(fd, 64), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d", ntohs(addr.sin_port));
	cr_assert_eq(kube_config_new(url, &cfg), 0);
	/*
	 * Nothing to verify (no certificate ever comes), and loading the
	 * system's CA bundle for every connection takes seconds under valgrind.
	 */
	cfg->insecure = true;
	kube_http_opts_init(&opts);
	opts.connect_timeout_ms = 500;
	opts.request_timeout_ms = 500;
	cr_assert_eq(kube_http_new(cfg, &opts, &http), 0);
	for (int i = 0; i < N; i++) {
		workers[i] = (struct timed_worker){ http, 0, 0 };
		pthread_create(&threads[i], NULL, request_once_timed, &workers[i]);
	}
	for (int i = 0; i < N; i++) {
		pthread_join(threads[i], NULL);
		cr_expect_eq(workers[i].err, CADRE_ETIMEDOUT, "request %d: %s", i,
			     cadre_strerror(workers[i].err));
		cr_expect_lt(workers[i].took_ms, 2400, "request %d took %lld ms", i,
			     (long long)workers[i].took_ms);
		if (workers[i].took_ms < shortest)
			shortest = workers[i].took_ms;
		if (workers[i].took_ms > longest)
			longest = workers[i].took_ms;
	}
	/* Waiting out each other's timeouts would spread them 2.5 s apart. */
	cr_expect_lt(longest - shortest, 1250, "from %lld to %lld ms", (long long)shortest,
		     (long long)longest);
	kube_http_free(http);
	kube_config_free(cfg);
	close(fd);
}

struct cancel_later {
	struct kube_http *http;
	int after_ms;
};

static void *cancel_after(void *arg)
{
	struct cancel_later *c = arg;

	usleep((useconds_t)c->after_ms * 1000);
	kube_http_cancel(c->http, true);
	return NULL;
}

/* A GET on the real clock, cancelled from another thread after 200 ms: its code and time. */
static int request_cancelled(struct env *e, int64_t *took_ms)
{
	struct cancel_later c = { e->http, 200 };
	int64_t t0 = mono_ms();
	pthread_t thread;
	int err;

	cr_assert_eq(pthread_create(&thread, NULL, cancel_after, &c), 0);
	err = kube_http_request(e->http, "GET", "/a", NULL, NULL, 0, &e->resp);
	*took_ms = mono_ms() - t0;
	pthread_join(thread, NULL);
	return err;
}

/*
 * A shutdown does not wait for a slow server: a request in flight ends when
 * the client is cancelled, and once allowed again the client works.
 */
Test(http, a_request_in_flight_ends_when_the_client_is_cancelled, .timeout = 30)
{
	struct kube_http_opts opts;
	int64_t took;
	struct env e;

	kube_http_opts_init(&opts);
	opts.clock = &kube_ratelimit_clock_real;
	env_start(&e, &opts);
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}",
		   .delay_ms = 10000 });
	cr_assert_eq(request_cancelled(&e, &took), CADRE_ECANCELED, "%s",
		     cadre_strerror(e.resp.error.code));
	cr_assert_lt(took, 3000, "took %lld ms", (long long)took);
	cr_assert_eq(kube_http_request(e.http, "GET", "/b", NULL, NULL, 0, &e.resp),
		     CADRE_ECANCELED, "a new request is not sent while cancelled");
	kube_http_cancel(e.http, false);
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	cr_assert_eq(kube_http_request(e.http, "GET", "/c", NULL, NULL, 0, &e.resp), 0);
	env_stop(&e);
}

/* Nor for its own rate limit: a request waiting for a token ends when cancelled. */
Test(http, a_request_waiting_for_the_rate_limiter_ends_when_the_client_is_cancelled,
     .timeout = 30)
{
	struct kube_http_opts opts;
	int64_t took;
	struct env e;

	kube_http_opts_init(&opts);
	opts.clock = &kube_ratelimit_clock_real;
	opts.qps = 0.1;
	opts.burst = 1;
	env_start(&e, &opts);
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	cr_assert_eq(kube_http_request(e.http, "GET", "/first", NULL, NULL, 0, &e.resp), 0);
	/* The next token is 10 s away. */
	cr_assert_eq(request_cancelled(&e, &took), CADRE_ECANCELED);
	cr_assert_lt(took, 3000, "took %lld ms", (long long)took);
	env_stop(&e);
}

Test(http, unauthorized_rereads_a_token_file_and_retries_once)
{
	char dir[] = "/tmp/cadre-http-XXXXXX", path[128];
	struct env e;
	FILE *f;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/token", dir);
	f = fopen(path, "w");
	fputs("old-token\n", f);
	fclose(f);
	env_start(&e, NULL);
	e.cfg->token_file = strdup(path);
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	cr_assert_eq(kube_http_request(e.http, "GET", "/a", NULL, NULL, 0, &e.resp), 0);

	/* The token rotates; the server starts refusing the old one. */
	f = fopen(path, "w");
	fputs("new-token\n", f);
	fclose(f);
	httpd_push(e.server, &(struct httpd_response){ .status = 401,
		   .body = "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"code\":401}" });
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	cr_assert_eq(kube_http_request(e.http, "GET", "/a", NULL, NULL, 0, &e.resp), 0);
	cr_assert_eq(e.resp.attempts, 2);
	cr_assert_str_eq(httpd_request_header(httpd_request_at(e.server, 1), "Authorization"),
			 "Bearer old-token");
	cr_assert_str_eq(httpd_request_header(httpd_request_at(e.server, 2), "Authorization"),
			 "Bearer new-token");

	/* A static token cannot get better: a 401 is returned as it is. */
	free(e.cfg->token_file);
	e.cfg->token_file = NULL;
	e.cfg->token = strdup("static");
	httpd_push(e.server, &(struct httpd_response){ .status = 401 });
	cr_assert_eq(kube_http_request(e.http, "GET", "/a", NULL, NULL, 0, &e.resp),
		     CADRE_EUNAUTHORIZED);
	cr_assert_eq(e.resp.attempts, 1);
	env_stop(&e);
	unlink(path);
	rmdir(dir);
}

/* ---- streams ---- */

struct collect {
	struct buf data;
	int calls;
	int fail_after;   /* return CADRE_EPARSE on this call (0 = never) */
	atomic_bool *stop_after_first;
};

static int collect_data(void *ctx, const char *data, size_t len)
{
	struct collect *c = ctx;

	c->calls++;
	if (buf_add(&c->data, data, len))
		return CADRE_ETOOBIG;
	if (c->stop_after_first)
		atomic_store(c->stop_after_first, true);
	if (c->fail_after && c->calls >= c->fail_after)
		return CADRE_EPARSE;
	return 0;
}

Test(http, a_stream_delivers_chunks_as_they_arrive)
{
	static const struct httpd_chunk chunks[] = {
		{ "{\"type\":\"ADD", 0, 0 },
		{ "ED\",\"object\":{}}\n{\"ty", 0, 20 },
		{ "pe\":\"DELETED\",\"object\":{}}\n", 0, 20 },
	};
	struct collect c = { 0 };
	struct env e;
	struct kube_stream_opts so = { .idle_timeout_ms = 5000, .on_data = collect_data, .ctx = &c };

	env_start(&e, NULL);
	buf_init(&c.data, 1 << 20);
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .chunks = chunks, .nchunks = 3 });
	cr_assert_eq(kube_http_stream(e.http, "/api/v1/pods?watch=1", &so), 0);
	cr_assert_str_eq(buf_str(&c.data),
			 "{\"type\":\"ADDED\",\"object\":{}}\n{\"type\":\"DELETED\",\"object\":{}}\n");
	cr_assert_geq(c.calls, 2, "calls %d", c.calls);
	cr_assert_str_eq(httpd_request_at(e.server, 0)->target, "/api/v1/pods?watch=1");
	buf_release(&c.data);
	env_stop(&e);
}

/* A broken stream hangs rather than fails: the timeout makes it fail. */
Test(http, an_idle_stream_is_abandoned_after_the_idle_timeout, .timeout = 60)
{
	static const struct httpd_chunk chunks[] = { { "{\"type\":\"BOOKMARK\"}\n", 0, 0 } };
	struct kube_http_opts opts;
	struct collect c = { 0 };
	struct env e;
	struct kube_stream_opts so = { .idle_timeout_ms = 500, .on_data = collect_data, .ctx = &c };
	int64_t start, took;

	kube_http_opts_init(&opts);
	opts.clock = &kube_ratelimit_clock_real;
	env_start(&e, &opts);
	buf_init(&c.data, 1 << 20);
	/* One event, then silence with the connection open: a half-open peer. */
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .chunks = chunks, .nchunks = 1, .hold_ms = -1 });
	start = mono_ms();
	cr_assert_eq(kube_http_stream(e.http, "/w", &so), CADRE_ETIMEDOUT);
	took = mono_ms() - start;
	cr_assert_geq(took, 500);
	cr_assert_lt(took, 5000, "took %lld ms", (long long)took);
	cr_assert_str_eq(buf_str(&c.data), "{\"type\":\"BOOKMARK\"}\n");
	buf_release(&c.data);
	env_stop(&e);
}

Test(http, a_stream_silent_from_the_start_times_out, .timeout = 60)
{
	struct kube_http_opts opts;
	struct collect c = { 0 };
	struct env e;
	struct kube_stream_opts so = { .idle_timeout_ms = 300, .on_data = collect_data, .ctx = &c };

	kube_http_opts_init(&opts);
	opts.clock = &kube_ratelimit_clock_real;
	env_start(&e, &opts);
	buf_init(&c.data, 1 << 20);
	/* Headers promise a body that never comes. */
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .body = "{}", .hold_ms = -1 });
	cr_assert_eq(kube_http_stream(e.http, "/w", &so), CADRE_ETIMEDOUT);
	cr_assert_eq(c.calls, 0);
	buf_release(&c.data);
	env_stop(&e);
}

struct stopper {
	atomic_bool *stop;
	int delay_ms;
};

static void *stop_later(void *arg)
{
	struct stopper *s = arg;

	usleep((useconds_t)s->delay_ms * 1000);
	atomic_store(s->stop, true);
	return NULL;
}

Test(http, a_stream_stops_when_another_thread_sets_the_flag, .timeout = 60)
{
	static const struct httpd_chunk chunks[] = { { "{}\n", 0, 0 } };
	struct kube_http_opts opts;
	struct collect c = { 0 };
	atomic_bool stop = false;
	struct stopper s = { &stop, 200 };
	struct env e;
	struct kube_stream_opts so = { .idle_timeout_ms = 0, .on_data = collect_data,
				       .ctx = &c, .stop = &stop };
	pthread_t thread;
	int64_t start, took;

	kube_http_opts_init(&opts);
	opts.clock = &kube_ratelimit_clock_real;
	env_start(&e, &opts);
	buf_init(&c.data, 1 << 20);
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .chunks = chunks, .nchunks = 1, .hold_ms = -1 });
	start = mono_ms();
	pthread_create(&thread, NULL, stop_later, &s);
	cr_assert_eq(kube_http_stream(e.http, "/w", &so), CADRE_ECANCELED);
	took = mono_ms() - start;
	pthread_join(thread, NULL);
	cr_assert_geq(took, 200);
	cr_assert_lt(took, 3000, "took %lld ms", (long long)took);
	buf_release(&c.data);
	env_stop(&e);
}

/* Keeps what arrives and sets the stop flag once "first" is in. */
struct stop_on_first {
	struct buf data;
	atomic_bool stop;
};

static int stop_after_first(void *ctx, const char *data, size_t len)
{
	struct stop_on_first *s = ctx;

	buf_add(&s->data, data, len);
	if (strstr(buf_str(&s->data), "first"))
		atomic_store(&s->stop, true);
	return 0;
}

Test(http, a_stopped_stream_hands_on_nothing_more_not_even_what_came_in_the_same_read,
     .timeout = 60)
{
	static const struct httpd_chunk chunks[] = { { "first\n", 0, 0 }, { "second\n", 0, 0 },
						     { "third\n", 0, 0 } };
	struct kube_http_opts opts;
	struct stop_on_first s = { .stop = false };
	struct env e;
	struct kube_stream_opts so = { .on_data = stop_after_first, .ctx = &s, .stop = &s.stop };

	kube_http_opts_init(&opts);
	opts.clock = &kube_ratelimit_clock_real;
	env_start(&e, &opts);
	buf_init(&s.data, 1 << 20);
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .chunks = chunks, .nchunks = 3, .hold_ms = -1 });
	cr_assert_eq(kube_http_stream(e.http, "/w", &so), CADRE_ECANCELED);
	cr_assert_str_eq(buf_str(&s.data), "first\n");
	buf_release(&s.data);
	env_stop(&e);
}

Test(http, a_torn_chunk_is_an_io_error_not_a_crash, .timeout = 60)
{
	static const struct httpd_chunk chunks[] = {
		{ "{\"type\":\"ADDED\"}\n", 0, 0 },
		{ "{\"type\":\"MODI", 0, 0 },
	};
	struct collect c = { 0 };
	struct env e;
	struct kube_stream_opts so = { .idle_timeout_ms = 5000, .on_data = collect_data, .ctx = &c };

	env_start(&e, NULL);
	buf_init(&c.data, 1 << 20);
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .chunks = chunks, .nchunks = 2, .torn = true });
	cr_assert_eq(kube_http_stream(e.http, "/w", &so), CADRE_EIO);
	cr_assert(!strncmp(buf_str(&c.data), "{\"type\":\"ADDED\"}\n", 17));
	buf_release(&c.data);
	env_stop(&e);
}

Test(http, a_stream_refused_with_gone_keeps_the_status)
{
	struct kube_response resp;
	struct collect c = { 0 };
	struct env e;
	struct kube_stream_opts so = { .idle_timeout_ms = 5000, .on_data = collect_data,
				       .ctx = &c, .resp = &resp };

	env_start(&e, NULL);
	kube_response_init(&resp);
	buf_init(&c.data, 1 << 20);
	httpd_push(e.server, &(struct httpd_response){ .status = 410,
		   .body = "{\"kind\":\"Status\",\"reason\":\"Expired\","
			   "\"message\":\"too old resource version: 5 (900)\",\"code\":410}" });
	cr_assert_eq(kube_http_stream(e.http, "/w?watch=1&resourceVersion=5", &so), CADRE_EGONE);
	cr_assert_eq(c.calls, 0);
	cr_assert_eq(resp.status, 410);
	cr_assert_str_eq(resp.error.reason, "Expired");
	cr_assert_str_eq(resp.error.message, "too old resource version: 5 (900)");
	kube_response_release(&resp);
	buf_release(&c.data);
	env_stop(&e);
}

Test(http, a_reader_can_end_the_stream_with_its_own_code, .timeout = 60)
{
	static const struct httpd_chunk chunks[] = { { "bad\n", 0, 0 }, { "more\n", 0, 50 } };
	struct collect c = { .fail_after = 1 };
	struct env e;
	struct kube_stream_opts so = { .idle_timeout_ms = 5000, .on_data = collect_data, .ctx = &c };

	env_start(&e, NULL);
	buf_init(&c.data, 1 << 20);
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .chunks = chunks, .nchunks = 2, .hold_ms = -1 });
	cr_assert_eq(kube_http_stream(e.http, "/w", &so), CADRE_EPARSE);
	cr_assert_eq(c.calls, 1);
	buf_release(&c.data);
	env_stop(&e);
}

Test(http, a_stream_counts_as_a_watch_in_the_stats)
{
	static const struct httpd_chunk chunks[] = { { "{}\n", 0, 0 } };
	struct kube_http_stat stat;
	struct collect c = { 0 };
	struct env e;
	struct kube_stream_opts so = { .on_data = collect_data, .ctx = &c };

	env_start(&e, NULL);
	buf_init(&c.data, 1 << 20);
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .chunks = chunks, .nchunks = 1 });
	cr_assert_eq(kube_http_stream(e.http, "/w", &so), 0);
	cr_assert_eq(kube_http_stats(e.http, &stat, 1), 1);
	cr_assert_str_eq(stat.verb, "WATCH");
	cr_assert_eq(stat.code, 200);
	buf_release(&c.data);
	env_stop(&e);
}

Test(http, bad_arguments_are_refused)
{
	struct kube_http *http;
	struct kube_config *cfg;

	kube_config_new("ftp://example.com", &cfg);
	cr_assert_eq(kube_http_new(cfg, NULL, &http), CADRE_EINVAL);
	cr_assert_null(http);
	kube_config_free(cfg);
	cr_assert_eq(kube_config_new("", &cfg), CADRE_EINVAL);
}

/* ---- TLS: certificates and keys handed to libcurl from memory ---- */


/*
 * A one-purpose TLS server: it requires a client certificate signed by the
 * test CA, answers every request with 200 "{}", and records the client's
 * common name. Its certificate is valid only for kubernetes.default.svc.
 */
struct tls_peer {
	int listen_fd;
	int port;
	SSL_CTX *ctx;
	pthread_t thread;
	_Atomic int served;      /* requests answered */
	char client_cn[128];
};

static void *tls_peer_main(void *arg)
{
	static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				     "Content-Length: 2\r\nConnection: close\r\n\r\n{}";
	struct tls_peer *p = arg;

	for (;;) {
		char req[4096];
		size_t got = 0;
		int fd = accept(p->listen_fd, NULL, NULL);
		SSL *ssl;
		X509 *cert;

		if (fd < 0)
			return NULL;
		ssl = SSL_new(p->ctx);
		SSL_set_fd(ssl, fd);
		if (SSL_accept(ssl) == 1) {
			cert = SSL_get1_peer_certificate(ssl);
			if (cert) {
				X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName,
							  p->client_cn, sizeof(p->client_cn));
				X509_free(cert);
			}
			while (got < sizeof(req) - 1) {
				int n = SSL_read(ssl, req + got, (int)(sizeof(req) - 1 - got));

				if (n <= 0)
					break;
				got += (size_t)n;
				req[got] = '\0';
				if (strstr(req, "\r\n\r\n"))
					break;
			}
			/* Counted only once a request came: a client that rejects the
			 * server's name may do so after the handshake completed. */
			if (got)
				atomic_fetch_add(&p->served, 1);
			SSL_write(ssl, answer, (int)strlen(answer));
			SSL_shutdown(ssl);
		}
		SSL_free(ssl);
		close(fd);
	}
}

static void tls_peer_start(struct tls_peer *p)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);

	/* A client that gives up mid-handshake must not kill the test with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	memset(p, 0, sizeof(*p));
	p->ctx = SSL_CTX_new(TLS_server_method());
	cr_assert_not_null(p->ctx);
	cr_assert_eq(SSL_CTX_use_certificate_file(p->ctx, TESTDATA "/server.crt", SSL_FILETYPE_PEM), 1);
	cr_assert_eq(SSL_CTX_use_PrivateKey_file(p->ctx, TESTDATA "/server.key", SSL_FILETYPE_PEM), 1);
	cr_assert_eq(SSL_CTX_load_verify_locations(p->ctx, TESTDATA "/ca.crt", NULL), 1);
	SSL_CTX_set_verify(p->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	p->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(p->listen_fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	cr_assert_eq(listen(p->listen_fd, 8), 0);
	getsockname(p->listen_fd, (struct sockaddr *)&addr, &len);
	p->port = ntohs(addr.sin_port);
	pthread_create(&p->thread, NULL, tls_peer_main, p);
}

static void tls_peer_stop(struct tls_peer *p)
{
	shutdown(p->listen_fd, SHUT_RDWR);   /* wakes accept() */
	pthread_join(p->thread, NULL);
	close(p->listen_fd);
	SSL_CTX_free(p->ctx);
}

static char *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *data = calloc(1, 8192);

	cr_assert_not_null(f);
	*len = fread(data, 1, 8191, f);
	fclose(f);
	return data;
}

/* A config for the peer with whichever pieces a test asks for. */
static struct kube_config *tls_config(const struct tls_peer *p, bool ca, bool client_cert,
				      bool server_name)
{
	struct kube_config *cfg;
	char url[64];

	snprintf(url, sizeof(url), "https://127.0.0.1:%d", p->port);
	cr_assert_eq(kube_config_new(url, &cfg), 0);
	if (ca)
		cfg->ca_pem = read_whole(TESTDATA "/ca.crt", &cfg->ca_len);
	if (client_cert) {
		cfg->cert_pem = read_whole(TESTDATA "/client.crt", &cfg->cert_len);
		cfg->key_pem = read_whole(TESTDATA "/client.key", &cfg->key_len);
	}
	if (server_name)
		cfg->tls_server_name = strdup("kubernetes.default.svc");
	return cfg;
}

static int tls_get(struct kube_config *cfg, struct kube_response *resp)
{
	struct kube_http *http;
	int err;

	cr_assert_eq(kube_http_new(cfg, NULL, &http), 0);
	err = kube_http_request(http, "GET", "/version", NULL, NULL, 0, resp);
	kube_http_free(http);
	return err;
}

Test(http, tls_with_ca_and_client_certificate_from_memory)
{
	struct tls_peer peer;
	struct kube_config *cfg;
	struct kube_response resp;

	tls_peer_start(&peer);
	kube_response_init(&resp);
	cfg = tls_config(&peer, true, true, true);
	cr_assert_eq(tls_get(cfg, &resp), 0, "%s", resp.error.message);
	cr_assert_str_eq(buf_str(&resp.body), "{}");
	cr_assert_str_eq(peer.client_cn, "cadre-test-client");
	kube_config_free(cfg);
	kube_response_release(&resp);
	tls_peer_stop(&peer);
}

Test(http, tls_refuses_a_server_it_cannot_verify)
{
	struct tls_peer peer;
	struct kube_config *cfg;
	struct kube_response resp;

	tls_peer_start(&peer);
	kube_response_init(&resp);
	/* The certificate is not for 127.0.0.1. */
	cfg = tls_config(&peer, true, true, false);
	cr_assert_eq(tls_get(cfg, &resp), CADRE_EIO);
	kube_config_free(cfg);
	/* The system store does not know the test CA. */
	cfg = tls_config(&peer, false, true, true);
	cr_assert_eq(tls_get(cfg, &resp), CADRE_EIO);
	kube_config_free(cfg);
	/* Unless the kubeconfig said to skip verification. */
	cfg = tls_config(&peer, false, true, false);
	cfg->insecure = true;
	cr_assert_eq(tls_get(cfg, &resp), 0, "%s", resp.error.message);
	kube_config_free(cfg);
	cr_assert_eq(peer.served, 1, "served %d", peer.served);
	kube_response_release(&resp);
	tls_peer_stop(&peer);
}

Test(http, tls_without_a_client_certificate_is_refused_by_the_server)
{
	struct tls_peer peer;
	struct kube_config *cfg;
	struct kube_response resp;

	tls_peer_start(&peer);
	kube_response_init(&resp);
	cfg = tls_config(&peer, true, false, true);
	cr_assert_eq(tls_get(cfg, &resp), CADRE_EIO);
	cr_assert_eq(peer.served, 0);
	kube_config_free(cfg);
	kube_response_release(&resp);
	tls_peer_stop(&peer);
}

/* ---- what a kubeconfig says reaches every request ---- */

static int record_chunks(void *ctx, const char *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	return 0;
}

/* A client for the kubeconfig text written to a temporary file (removed at once). */
static struct kube_http *kubeconfig_client(const char *text, struct kube_config **cfg)
{
	char path[] = "/tmp/cadre-http-kubeconfig-XXXXXX";
	struct kube_status st;
	struct kube_http *http;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, cfg, &st), 0, "%s", st.message);
	unlink(path);
	cr_assert_eq(kube_http_new(*cfg, NULL, &http), 0);
	return http;
}

Test(http, impersonation_in_the_kubeconfig_is_sent_with_every_request_and_stream)
{
	struct httpd *server;
	struct kube_config *cfg;
	struct kube_http *http;
	struct kube_response resp;
	struct kube_stream_opts so = { .on_data = record_chunks };
	char text[1024];

	cr_assert_eq(httpd_new(&server), 0);
	snprintf(text, sizeof(text),
		 "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
		 "clusters: [{name: k, cluster: {server: '%s'}}]\n"
		 "users: [{name: u, user: {token: t, as: jane, as-groups: [devs, ops], "
		 "as-user-extra: {reason: [debugging]}}}]\n", httpd_url(server));
	http = kubeconfig_client(text, &cfg);
	kube_response_init(&resp);
	httpd_push(server, &(struct httpd_response){ .status = 200, .body = "{}" });
	httpd_push(server, &(struct httpd_response){ .status = 200, .body = "{}" });
	cr_assert_eq(kube_http_request(http, "GET", "/api/v1/pods", NULL, NULL, 0, &resp), 0);
	cr_assert_eq(kube_http_stream(http, "/api/v1/pods?watch=1", &so), 0);
	for (size_t i = 0; i < 2; i++) {
		const struct httpd_request *req = httpd_request_at(server, i);
		size_t groups = 0;

		cr_assert_str_eq(httpd_request_header(req, "Impersonate-User"), "jane");
		cr_assert_str_eq(httpd_request_header(req, "Impersonate-Extra-reason"), "debugging");
		for (size_t h = 0; h < req->nheaders; h++)
			if (!strcasecmp(req->names[h], "Impersonate-Group"))
				cr_assert_str_eq(req->values[h], groups++ ? "ops" : "devs");
		cr_assert_eq(groups, 2, "request %zu", i);
	}
	kube_response_release(&resp);
	kube_http_free(http);
	kube_config_free(cfg);
	httpd_free(server);
}

/* GET through a client for server (the proxy, when there is one, is the fake server). */
static int get_through(const char *server_url, const char *proxy_line, struct httpd *proxy,
		       struct kube_response *resp)
{
	struct kube_config *cfg;
	struct kube_http *http;
	char text[1024];
	int e;

	snprintf(text, sizeof(text),
		 "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
		 "clusters: [{name: k, cluster: {server: '%s'%s}}]\n", server_url, proxy_line);
	http = kubeconfig_client(text, &cfg);
	httpd_push(proxy, &(struct httpd_response){ .status = 200, .body = "{}" });
	e = kube_http_request(http, "GET", "/version", NULL, NULL, 0, resp);
	kube_http_free(http);
	kube_config_free(cfg);
	return e;
}

Test(http, a_proxy_url_carries_every_request_whatever_the_environment)
{
	struct httpd *proxy;
	struct kube_response resp;
	char line[256];

	cr_assert_eq(httpd_new(&proxy), 0);
	kube_response_init(&resp);
	setenv("NO_PROXY", "*", 1);
	snprintf(line, sizeof(line), ", proxy-url: '%s'", httpd_url(proxy));
	/* a name that resolves nowhere: only the proxy can reach it */
	cr_assert_eq(get_through("http://cadre-unit.invalid:6443", line, proxy, &resp), 0, "%s",
		     resp.error.message);
	cr_assert_str_eq(httpd_request_at(proxy, 0)->target, "http://cadre-unit.invalid:6443/version");
	kube_response_release(&resp);
	httpd_free(proxy);
}

Test(http, the_environments_proxy_is_chosen_as_client_go_chooses_it)
{
	struct httpd *proxy, *server;
	struct kube_response resp;

	cr_assert_eq(httpd_new(&proxy), 0);
	cr_assert_eq(httpd_new(&server), 0);
	kube_response_init(&resp);
	/* libcurl alone reads only http_proxy in lower case: Go reads HTTP_PROXY */
	unsetenv("http_proxy");
	unsetenv("NO_PROXY");
	unsetenv("no_proxy");
	setenv("HTTP_PROXY", httpd_url(proxy), 1);
	cr_assert_eq(get_through("http://cadre-unit.invalid:6443", "", proxy, &resp), 0, "%s",
		     resp.error.message);
	cr_assert_eq(httpd_request_count(proxy), 1);
	/* NO_PROXY exempts the domain: straight to a name that resolves nowhere */
	setenv("NO_PROXY", "other.example, .invalid", 1);
	cr_assert_eq(get_through("http://cadre-unit.invalid:6443", "", proxy, &resp), CADRE_EIO);
	cr_assert_eq(httpd_request_count(proxy), 1);
	/* a loopback server is never sent through a proxy from the environment */
	unsetenv("NO_PROXY");
	cr_assert_eq(get_through(httpd_url(server), "", server, &resp), 0, "%s", resp.error.message);
	cr_assert_eq(httpd_request_count(proxy), 1);
	cr_assert_str_eq(httpd_request_at(server, 0)->target, "/version");
	/* one that cannot be used is said, with the variable's value and without its password */
	setenv("HTTP_PROXY", "ftp://me:pw@proxy:21", 1);
	cr_assert_eq(get_through("http://cadre-unit.invalid:6443", "", proxy, &resp), CADRE_EINVAL);
	cr_assert(strstr(resp.error.message, "proxy ftp://proxy:21: the scheme must be"), "%s",
		  resp.error.message);
	unsetenv("HTTP_PROXY");
	kube_response_release(&resp);
	httpd_free(proxy);
	httpd_free(server);
}

/* ---- a connection that stops answering ---- */

/*
 * A TCP relay in front of the fake server that can stop forwarding: after
 * relay_freeze, it still accepts and reads, but nothing reaches either side
 * (a proxy that hangs, a peer gone without closing), so no RST or FIN ever
 * tells the client.
 */
struct relay {
	int listen_fd, port, target_port;
	pthread_t thread;
	atomic_bool frozen, stop;
};

static int connect_to(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void *relay_main(void *arg)
{
	struct relay *r = arg;
	struct pollfd fds[1 + 2 * 16];
	int peer[1 + 2 * 16];
	nfds_t n = 1;

	fds[0] = (struct pollfd){ .fd = r->listen_fd, .events = POLLIN };
	while (!atomic_load(&r->stop)) {
		if (poll(fds, n, 50) <= 0)
			continue;
		if ((fds[0].revents & POLLIN) && n + 2 <= sizeof(fds) / sizeof(fds[0])) {
			int c = accept(r->listen_fd, NULL, NULL), s = c >= 0 ? connect_to(r->target_port) : -1;

			if (s >= 0) {
				fds[n] = (struct pollfd){ .fd = c, .events = POLLIN };
				peer[n++] = s;
				fds[n] = (struct pollfd){ .fd = s, .events = POLLIN };
				peer[n++] = c;
			} else if (c >= 0) {
				close(c);
			}
		}
		for (nfds_t i = 1; i < n; i++) {
			char buf[16384];
			ssize_t got;

			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
				continue;
			got = read(fds[i].fd, buf, sizeof(buf));
			if (got <= 0) {
				fds[i].fd = -1;
				continue;
			}
			if (!atomic_load(&r->frozen))
				(void)!write(peer[i], buf, (size_t)got);
		}
	}
	for (nfds_t i = 0; i < n; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	return NULL;
}

static void relay_start(struct relay *r, int target_port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	memset(r, 0, sizeof(*r));
	r->target_port = target_port;
	r->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_eq(bind(r->listen_fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(r->listen_fd, 16), 0);
	getsockname(r->listen_fd, (struct sockaddr *)&a, &len);
	r->port = ntohs(a.sin_port);
	pthread_create(&r->thread, NULL, relay_main, r);
}

static void relay_stop(struct relay *r)
{
	atomic_store(&r->stop, true);
	pthread_join(r->thread, NULL);
}

Test(http, a_connection_that_stops_answering_is_noticed_at_the_check_not_at_the_timeout,
     .timeout = 60)
{
	struct httpd *server;
	struct relay relay;
	struct kube_config *cfg;
	struct kube_http *http;
	struct kube_http_opts opts;
	struct kube_response resp;
	char url[64];
	int64_t t0, took;

	cr_assert_eq(httpd_new(&server), 0);
	relay_start(&relay, httpd_port(server));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", relay.port);
	cr_assert_eq(kube_config_new(url, &cfg), 0);
	kube_http_opts_init(&opts);
	opts.request_timeout_ms = 30000;
	opts.liveness_idle_ms = 300;
	opts.liveness_timeout_ms = 300;
	cr_assert_eq(kube_http_new(cfg, &opts, &http), 0);
	kube_response_init(&resp);
	httpd_push(server, &(struct httpd_response){ .status = 200, .body = "{}" });
	cr_assert_eq(kube_http_request(http, "GET", "/api", NULL, NULL, 0, &resp), 0, "%s",
		     resp.error.message);

	atomic_store(&relay.frozen, true);
	t0 = mono_ms();
	cr_assert_eq(kube_http_request(http, "GET", "/api", NULL, NULL, 0, &resp), CADRE_ETIMEDOUT);
	took = mono_ms() - t0;
	/* twice idle and check (a GET goes once more), not the 30 s request timeout */
	cr_assert_lt(took, 5000, "noticed after %lld ms", (long long)took);
	cr_assert(strstr(resp.error.message, "stopped answering"), "%s", resp.error.message);
	cr_assert_eq(resp.attempts, 2);
	/* a POST is not sent twice: it may have been done */
	t0 = mono_ms();
	cr_assert_eq(kube_http_request(http, "POST", "/api/v1/namespaces/ml/pods", NULL, "{}", 2,
				       &resp), CADRE_ETIMEDOUT);
	cr_assert_eq(resp.attempts, 1);
	cr_assert_lt(mono_ms() - t0, 3000);

	/* forwarding again: the next request answers, on a new connection */
	atomic_store(&relay.frozen, false);
	httpd_push(server, &(struct httpd_response){ .status = 200, .body = "{}" });
	cr_assert_eq(kube_http_request(http, "GET", "/api", NULL, NULL, 0, &resp), 0, "%s",
		     resp.error.message);
	kube_response_release(&resp);
	kube_http_free(http);
	kube_config_free(cfg);
	relay_stop(&relay);
	httpd_free(server);
}
