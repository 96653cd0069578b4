#include "kube/http.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <strings.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/log.h"
#include "kube/proxy.h"

/*
 * Idle easy handles kept for reuse; more are freed. They hold no connection
 * (the I/O thread's multi handle does), only their buffers: as many as a
 * gang's parallel writers (PARALLEL_WRITES in tj_reconcile.c), so a gang's
 * writes do not allocate and free 64 handles each time.
 */
#define POOL_MAX 64
/* A stream checks its stop flag and idle clock at least this often. */
#define STREAM_TICK_MS 100
#define NS_PER_MS 1000000LL

struct kube_http {
	struct kube_config *cfg;        /* borrowed */
	struct kube_http_opts opts;     /* user_agent and clock point into this struct */
	atomic_long timeout_ms;         /* kube_http_set_timeout; 0: opts.request_timeout_ms */
	char *user_agent;
	char *base_url;                 /* cfg->server, or with tls-server-name as host */
	struct curl_slist *connect_to;  /* tls-server-name: where to really connect */
	char proxy[2048];               /* the proxy URL for libcurl, "" for none (kube/proxy.h) */
	bool proxy_https;               /* an https:// proxy: its certificate is verified too */
	char proxy_error[700];          /* why the environment's proxy cannot be used, or "" */
	struct kube_ratelimit_clock clock;
	struct kube_ratelimit limiter;

	CURLSH *share;
	pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];

	pthread_mutex_t pool_lock;
	CURL *pool[POOL_MAX];
	size_t npool;

	/*
	 * Requests (not streams) are driven by one multi handle on io_thread,
	 * so that over HTTP/2 they share one connection, as client-go's do: a
	 * gang's 64 creates are 64 streams on a warm connection, not 64 TLS
	 * handshakes. Callers still block: each hands its easy handle over
	 * and waits on io_cond until the thread says it is done.
	 */
	CURLM *multi;
	pthread_t io_thread;
	bool io_started;
	pthread_mutex_t io_lock;
	pthread_cond_t io_cond;
	struct submitted *submitted;    /* handed over, not yet added to multi */
	struct submitted *inflight;     /* added to multi, not yet done (io thread only) */
	bool io_stop;
	/*
	 * The liveness check (io thread only): when any request's transfer last
	 * received a byte, and the probe sent to see whether the connection
	 * still answers (NULL when none is out).
	 */
	uint64_t last_rx_ms;
	CURL *probe;
	char *probe_url;
	atomic_bool cancelled;          /* kube_http_cancel */

	pthread_mutex_t stats_lock;
	struct kube_http_stat *stats;
	size_t nstats, stats_cap;
};

/* One request handed to the I/O thread; lives on the caller's stack. */
struct submitted {
	CURL *easy;
	CURLcode rc;
	bool done;
	bool lost;                      /* ended by the liveness check: no answer came */
	uint64_t sent_ms;               /* when its request went out; 0: not yet */
	struct submitted *next;
	struct submitted *next_inflight, **prev_inflight;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_result;

/*
 * curl_global_init is not thread-safe and must run once per process; it
 * is never undone, since other clients may still be running (its memory is
 * reachable until exit, not leaked).
 */
static void global_init(void)
{
	global_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

void kube_http_opts_init(struct kube_http_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->qps = 100;
	opts->burst = 200;
	opts->connect_timeout_ms = 10000;
	opts->request_timeout_ms = 60000;
	opts->max_body = 64u << 20;
	opts->max_retries = 5;
	opts->max_retry_after_ms = 60000;
	opts->liveness_idle_ms = 15000;
	opts->liveness_timeout_ms = 10000;
}

void kube_response_init(struct kube_response *resp)
{
	resp->status = 0;
	buf_init(&resp->body, 64u << 20);
	kube_status_clear(&resp->error);
	resp->attempts = 0;
}

void kube_response_release(struct kube_response *resp)
{
	buf_release(&resp->body);
}

/*
 * kubeconfig's tls-server-name: verify the server's certificate against that
 * name instead of the URL's host. libcurl verifies the URL's host, so the
 * URL gets the name as its host and CURLOPT_CONNECT_TO sends the connection
 * to the real address.
 */
static int setup_server_name(struct kube_http *h)
{
	const char *name = h->cfg->tls_server_name;
	char *host = NULL, *port = NULL, *url = NULL;
	struct curl_slist *list;
	struct buf b;
	CURLU *u;
	int err = CADRE_EINVAL;

	buf_init(&b, 64 * 1024);
	h->base_url = strdup(h->cfg->server);
	if (!h->base_url)
		return CADRE_ENOMEM;
	if (!name || !*name)
		return 0;
	u = curl_url();
	if (!u)
		return CADRE_ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, h->cfg->server, 0) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ||
	    curl_url_set(u, CURLUPART_HOST, name, 0) ||
	    curl_url_get(u, CURLUPART_URL, &url, 0))
		goto out;
	err = buf_addf(&b, "%s:%s:%s:%s", name, port, host, port);
	if (err)
		goto out;
	err = CADRE_ENOMEM;
	list = curl_slist_append(NULL, b.data);
	if (!list)
		goto out;
	h->connect_to = list;
	free(h->base_url);
	h->base_url = strdup(url);
	if (!h->base_url)
		goto out;
	/* curl_url_get adds "/" for an empty path; paths are appended to this. */
	for (size_t n = strlen(h->base_url); n && h->base_url[n - 1] == '/'; n--)
		h->base_url[n - 1] = '\0';
	err = 0;
out:
	curl_free(host);
	curl_free(port);
	curl_free(url);
	curl_url_cleanup(u);
	buf_release(&b);
	return err;
}

/*
 * The proxy for this client's server (kube/proxy.h), chosen once: the
 * kubeconfig's proxy-url, else the environment. A proxy from the
 * environment that cannot be used fails each request with the reason
 * (kube_config_load has refused a bad proxy-url already).
 */
static void choose_proxy(struct kube_http *h)
{
	struct kube_proxy_env env;
	char why[128], shown[512];
	const char *from;

	kube_proxy_env_get(&env);
	if (kube_proxy_select(h->cfg->server, h->cfg->proxy_url, &env, h->proxy, sizeof(h->proxy),
			      why, sizeof(why))) {
		from = h->cfg->proxy_url ? h->cfg->proxy_url
		       : !strncmp(h->cfg->server, "https://", 8) ? env.https_proxy : env.http_proxy;
		kube_proxy_redact(from, shown, sizeof(shown));
		snprintf(h->proxy_error, sizeof(h->proxy_error), "proxy %s: %s", shown, why);
		h->proxy[0] = '\0';
	}
	h->proxy_https = !strncasecmp(h->proxy, "https://", 8);
}

static void share_lock(CURL *easy, curl_lock_data data,
		       curl_lock_access access, void *ctx)
{
	struct kube_http *h = ctx;

	(void)easy;
	(void)access;
	pthread_mutex_lock(&h->share_locks[data]);
}

static void share_unlock(CURL *easy, curl_lock_data data, void *ctx)
{
	struct kube_http *h = ctx;

	(void)easy;
	pthread_mutex_unlock(&h->share_locks[data]);
}

static void io_finish(struct kube_http *h, struct submitted *req, CURLcode rc)
{
	pthread_mutex_lock(&h->io_lock);
	req->rc = rc;
	req->done = true;
	pthread_cond_broadcast(&h->io_cond);
	pthread_mutex_unlock(&h->io_lock);
}

static void inflight_add(struct kube_http *h, struct submitted *req)
{
	req->next_inflight = h->inflight;
	req->prev_inflight = &h->inflight;
	if (h->inflight)
		h->inflight->prev_inflight = &req->next_inflight;
	h->inflight = req;
}

/* Take req out of the multi handle and the in-flight list, and wake its caller. */
static void io_end(struct kube_http *h, struct submitted *req, CURLcode rc)
{
	curl_multi_remove_handle(h->multi, req->easy);
	*req->prev_inflight = req->next_inflight;
	if (req->next_inflight)
		req->next_inflight->prev_inflight = req->prev_inflight;
	io_finish(h, req, rc);
}

/* libcurl is about to send a request of the I/O thread's: from now on it waits for an answer. */
static int io_sending(void *ctx, char *conn_primary_ip, char *conn_local_ip,
		      int conn_primary_port, int conn_local_port)
{
	struct submitted *req = ctx;

	(void)conn_primary_ip;
	(void)conn_local_ip;
	(void)conn_primary_port;
	(void)conn_local_port;
	req->sent_ms = clock_mono_ms();
	return CURL_PREREQFUNC_OK;
}

/* Add what callers handed over; while cancelled, end it (and all in flight) at once. */
static void io_admit(struct kube_http *h, struct submitted *add)
{
	bool cancelled = atomic_load(&h->cancelled);
	struct submitted *next;

	for (; add; add = next) {
		next = add->next;
		if (cancelled) {
			io_finish(h, add, CURLE_ABORTED_BY_CALLBACK);
			continue;
		}
		curl_easy_setopt(add->easy, CURLOPT_PRIVATE, add);
		curl_easy_setopt(add->easy, CURLOPT_PREREQFUNCTION, io_sending);
		curl_easy_setopt(add->easy, CURLOPT_PREREQDATA, add);
		if (curl_multi_add_handle(h->multi, add->easy) != CURLM_OK)
			io_finish(h, add, CURLE_OUT_OF_MEMORY);
		else
			inflight_add(h, add);
	}
	while (cancelled && h->inflight)
		io_end(h, h->inflight, CURLE_ABORTED_BY_CALLBACK);
}

static size_t probe_data(char *data, size_t size, size_t n, void *ctx)
{
	struct kube_http *h = ctx;

	(void)data;
	h->last_rx_ms = clock_mono_ms();
	return size * n;
}

/*
 * Ask the connection a request waits on whether it still answers: GET
 * /version as a copy of that request (so libcurl sends it on the same
 * connection: HTTP/2 multiplexes it beside the others), with its own short
 * timeout. Any answer, even a 401, says the connection is alive. client-go
 * does the same with an HTTP/2 PING after 30 s without a frame, which
 * libcurl 7.88 cannot send.
 */
static void probe_start(struct kube_http *h, struct submitted *stuck)
{
	CURL *probe = curl_easy_duphandle(stuck->easy);

	if (!probe)
		return;
	curl_easy_setopt(probe, CURLOPT_SHARE, h->share);
	curl_easy_setopt(probe, CURLOPT_URL, h->probe_url);
	curl_easy_setopt(probe, CURLOPT_POSTFIELDS, NULL);
	curl_easy_setopt(probe, CURLOPT_CUSTOMREQUEST, NULL);
	curl_easy_setopt(probe, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(probe, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(probe, CURLOPT_HEADERFUNCTION, probe_data);
	curl_easy_setopt(probe, CURLOPT_HEADERDATA, h);
	curl_easy_setopt(probe, CURLOPT_WRITEFUNCTION, probe_data);
	curl_easy_setopt(probe, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(probe, CURLOPT_PREREQFUNCTION, NULL);
	curl_easy_setopt(probe, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(probe, CURLOPT_PRIVATE, NULL);
	curl_easy_setopt(probe, CURLOPT_TIMEOUT_MS, h->opts.liveness_timeout_ms);
	/*
	 * An HTTP/2 connection is shared without waiting; one whose kind is not
	 * known yet would keep a waiting probe pending (and past its timeout)
	 * until it answers.
	 */
	curl_easy_setopt(probe, CURLOPT_PIPEWAIT, 0L);
	if (curl_multi_add_handle(h->multi, probe) != CURLM_OK) {
		curl_easy_cleanup(probe);
		return;
	}
	log_debug("http", "no answer for %ld ms: asking the connection whether it is alive",
		  h->opts.liveness_idle_ms);
	h->probe = probe;
}

static void probe_end(struct kube_http *h)
{
	if (!h->probe)
		return;
	curl_multi_remove_handle(h->multi, h->probe);
	curl_easy_cleanup(h->probe);
	h->probe = NULL;
}

/*
 * The connection did not answer the probe: it is dead though its socket is
 * open (a peer gone without a FIN, a proxy that stopped forwarding). Every
 * request in flight ends now, as lost (kube_http_request sends an idempotent
 * one once more), and the multi handle is replaced, so that its connections
 * close and the next request opens a fresh one. The swap happens under
 * io_lock, which every curl_multi_wakeup from another thread holds.
 */
static void io_lost(struct kube_http *h)
{
	CURLM *fresh = curl_multi_init(), *old;

	probe_end(h);
	log_warn("http", "%s stopped answering (nothing for %ld ms, then no answer to a check "
		 "in %ld ms): its requests end, the next ones go on a new connection",
		 h->cfg->server, h->opts.liveness_idle_ms, h->opts.liveness_timeout_ms);
	while (h->inflight) {
		h->inflight->lost = true;
		io_end(h, h->inflight, CURLE_OPERATION_TIMEDOUT);
	}
	if (!fresh)
		return;  /* keep the old one: later requests time out as they did */
	curl_multi_setopt(fresh, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	pthread_mutex_lock(&h->io_lock);
	old = h->multi;
	h->multi = fresh;
	pthread_mutex_unlock(&h->io_lock);
	curl_multi_cleanup(old);
	h->last_rx_ms = clock_mono_ms();
}

/*
 * When requests have waited liveness_idle_ms for an answer and nothing at
 * all arrived meanwhile, probe the connection; a probe that fails (its
 * timeout, or any transport error) means the connection is lost.
 */
static void io_liveness(struct kube_http *h)
{
	uint64_t now = clock_mono_ms();
	struct submitted *stuck = NULL;

	if (h->opts.liveness_idle_ms <= 0 || h->probe)
		return;
	if (!h->inflight || now - h->last_rx_ms < (uint64_t)h->opts.liveness_idle_ms)
		return;
	for (struct submitted *r = h->inflight; r; r = r->next_inflight)
		if (r->sent_ms && now - r->sent_ms >= (uint64_t)h->opts.liveness_idle_ms)
			stuck = r;
	if (stuck)
		probe_start(h, stuck);
}

static void *io_main(void *arg)
{
	struct kube_http *h = arg;

	h->last_rx_ms = clock_mono_ms();
	for (;;) {
		struct submitted *add;
		int running = 0, queued;
		CURLMsg *msg;
		bool stop, lost = false;

		pthread_mutex_lock(&h->io_lock);
		add = h->submitted;
		h->submitted = NULL;
		stop = h->io_stop;
		pthread_mutex_unlock(&h->io_lock);
		/* kube_http_free: no call may be in progress, so nothing is left. */
		if (stop)
			break;
		io_admit(h, add);
		curl_multi_perform(h->multi, &running);
		while ((msg = curl_multi_info_read(h->multi, &queued))) {
			char *req = NULL;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &req);
			if (!req) {  /* the probe */
				lost = msg->data.result != CURLE_OK;
				probe_end(h);
				continue;
			}
			io_end(h, (struct submitted *)req, msg->data.result);
		}
		if (lost)
			io_lost(h);
		io_liveness(h);
		curl_multi_poll(h->multi, NULL, 0, h->inflight ? 250 : 1000, NULL);
	}
	probe_end(h);
	return NULL;
}

/* The I/O thread may replace the multi handle (io_lost): wake it under io_lock. */
void kube_http_cancel(struct kube_http *h, bool on)
{
	atomic_store(&h->cancelled, on);
	if (on && h->io_started) {
		pthread_mutex_lock(&h->io_lock);
		curl_multi_wakeup(h->multi);
		pthread_mutex_unlock(&h->io_lock);
	}
}

/*
 * curl_easy_perform, through the shared multi handle. *lost says the
 * liveness check ended it (the connection stopped answering).
 */
static CURLcode io_perform(struct kube_http *h, CURL *easy, bool *lost)
{
	struct submitted req = { .easy = easy, .rc = CURLE_OK };

	pthread_mutex_lock(&h->io_lock);
	req.next = h->submitted;
	h->submitted = &req;
	curl_multi_wakeup(h->multi);
	while (!req.done)
		pthread_cond_wait(&h->io_cond, &h->io_lock);
	pthread_mutex_unlock(&h->io_lock);
	*lost = req.lost;
	return req.rc;
}

int kube_http_new(struct kube_config *cfg, const struct kube_http_opts *opts,
		  struct kube_http **out)
{
	struct kube_http *h;
	int err = CADRE_ENOMEM;
	bool limiter_ready = false;

	*out = NULL;
	if (!cfg || !cfg->server || (strncmp(cfg->server, "https://", 8) &&
				     strncmp(cfg->server, "http://", 7)))
		return CADRE_EINVAL;
	pthread_once(&global_once, global_init);
	if (global_result != CURLE_OK)
		return CADRE_EIO;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CADRE_ENOMEM;
	h->cfg = cfg;
	if (opts)
		h->opts = *opts;
	else
		kube_http_opts_init(&h->opts);
	h->clock = h->opts.clock ? *h->opts.clock : kube_ratelimit_clock_real;
	h->opts.clock = &h->clock;
	if (h->opts.user_agent)
		h->user_agent = strdup(h->opts.user_agent);
	else
		h->user_agent = strdup("cadre/" CADRE_VERSION);
	if (!h->user_agent)
		goto out;
	h->opts.user_agent = h->user_agent;
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&h->share_locks[i], NULL);
	pthread_mutex_init(&h->pool_lock, NULL);
	pthread_mutex_init(&h->stats_lock, NULL);
	err = kube_ratelimit_init(&h->limiter, h->opts.qps, h->opts.burst,
				  &h->clock);
	if (err)
		goto out;
	limiter_ready = true;
	err = CADRE_ENOMEM;
	h->share = curl_share_init();
	if (!h->share)
		goto out;
	/*
	 * DNS answers and TLS sessions are safe to share between threads
	 * (streams, which run on their callers' threads, use them too); the
	 * connection cache is not, so requests' connections belong to the
	 * multi handle of the I/O thread, and each stream has its own.
	 */
	curl_share_setopt(h->share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(h->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(h->share, CURLSHOPT_USERDATA, h);
	curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	err = setup_server_name(h);
	if (err)
		goto out;
	choose_proxy(h);
	if (!(h->probe_url = malloc(strlen(h->base_url) + sizeof("/version"))))
		goto out;
	memcpy(h->probe_url, h->base_url, strlen(h->base_url));
	memcpy(h->probe_url + strlen(h->base_url), "/version", sizeof("/version"));
	err = CADRE_ENOMEM;
	pthread_mutex_init(&h->io_lock, NULL);
	pthread_cond_init(&h->io_cond, NULL);
	h->multi = curl_multi_init();
	if (!h->multi)
		goto out;
	curl_multi_setopt(h->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	if (pthread_create(&h->io_thread, NULL, io_main, h))
		goto out;
	h->io_started = true;
	err = 0;
	*out = h;
	h = NULL;
out:
	/* Until the limiter is set up, kube_http_free cannot take it apart. */
	if (h && limiter_ready) {
		kube_http_free(h);
	} else if (h) {
		free(h->user_agent);
		free(h);
	}
	return err;
}

void kube_http_free(struct kube_http *h)
{
	if (!h)
		return;
	if (h->io_started) {
		pthread_mutex_lock(&h->io_lock);
		h->io_stop = true;
		curl_multi_wakeup(h->multi);
		pthread_mutex_unlock(&h->io_lock);
		pthread_join(h->io_thread, NULL);
	}
	/* Easy handles first: they hold references to the share. */
	for (size_t i = 0; i < h->npool; i++)
		curl_easy_cleanup(h->pool[i]);
	if (h->multi) {
		curl_multi_cleanup(h->multi);
		pthread_mutex_destroy(&h->io_lock);
		pthread_cond_destroy(&h->io_cond);
	}
	if (h->share)
		curl_share_cleanup(h->share);
	kube_ratelimit_release(&h->limiter);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&h->share_locks[i]);
	pthread_mutex_destroy(&h->pool_lock);
	pthread_mutex_destroy(&h->stats_lock);
	free(h->stats);
	free(h->user_agent);
	free(h->base_url);
	free(h->probe_url);
	curl_slist_free_all(h->connect_to);
	free(h);
}

void kube_http_set_timeout(struct kube_http *h, long request_timeout_ms)
{
	atomic_store(&h->timeout_ms, request_timeout_ms > 0 ? request_timeout_ms : 0);
}

struct kube_config *kube_http_config(struct kube_http *h)
{
	return h->cfg;
}

/* An idle easy handle (with its open connections), or a new one. */
static CURL *pool_take(struct kube_http *h)
{
	CURL *easy = NULL;

	pthread_mutex_lock(&h->pool_lock);
	if (h->npool)
		easy = h->pool[--h->npool];
	pthread_mutex_unlock(&h->pool_lock);
	if (!easy)
		easy = curl_easy_init();
	return easy;
}

static void pool_give(struct kube_http *h, CURL *easy)
{
	pthread_mutex_lock(&h->pool_lock);
	if (h->npool < POOL_MAX) {
		h->pool[h->npool++] = easy;
		easy = NULL;
	}
	pthread_mutex_unlock(&h->pool_lock);
	if (easy)
		curl_easy_cleanup(easy);
}

static void stats_count(struct kube_http *h, const char *verb, long code)
{
	struct kube_http_stat *s;

	pthread_mutex_lock(&h->stats_lock);
	for (size_t i = 0; i < h->nstats; i++) {
		s = &h->stats[i];
		if (s->code == code && !strcmp(s->verb, verb)) {
			s->count++;
			goto out;
		}
	}
	if (h->nstats == h->stats_cap) {
		size_t cap = h->stats_cap ? h->stats_cap * 2 : 16;

		s = realloc(h->stats, cap * sizeof(*s));
		if (!s)
			goto out; /* a lost count is better than a lost request */
		h->stats = s;
		h->stats_cap = cap;
	}
	s = &h->stats[h->nstats++];
	snprintf(s->verb, sizeof(s->verb), "%s", verb);
	s->code = code;
	s->count = 1;
out:
	pthread_mutex_unlock(&h->stats_lock);
}

size_t kube_http_stats(struct kube_http *h, struct kube_http_stat *out,
		       size_t max)
{
	size_t n;

	pthread_mutex_lock(&h->stats_lock);
	n = h->nstats;
	if (out && max)
		memcpy(out, h->stats, (n < max ? n : max) * sizeof(*out));
	pthread_mutex_unlock(&h->stats_lock);
	return n;
}

/* What one transfer saw; filled by the callbacks below. */
struct transfer {
	struct kube_http *h;
	CURL *easy;
	struct buf *body;            /* where non-streamed bytes go */
	bool too_big;
	long retry_after_s;          /* -1 = no usable Retry-After */
	/* streams only */
	const struct kube_stream_opts *stream;
	int callback_err;
	bool stream_2xx;
	bool stopped;                /* the stop flag was seen in the write callback */
	bool status_known;
	bool connected;              /* the request is on its way: idle time counts */
	int64_t last_data_ns;
	const char *accept;          /* the Accept header's value; NULL: application/json */
};

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct transfer *t = ctx;
	size_t len = size * n;
	static const char name[] = "retry-after:";

	/* Header bytes are bytes too: the connection is alive. */
	if (t->stream)
		t->last_data_ns = t->h->clock.now_ns(t->h->clock.ctx);
	else
		t->h->last_rx_ms = clock_mono_ms();  /* on the I/O thread */
	/* A new status line (after a 100 Continue) starts a new header set. */
	if (len >= 5 && !strncmp(data, "HTTP/", 5))
		t->retry_after_s = -1;
	if (len > sizeof(name) - 1 && !strncasecmp(data, name, sizeof(name) - 1)) {
		char value[32], *end;
		size_t vlen = len - (sizeof(name) - 1);
		const char *v = data + sizeof(name) - 1;
		long secs;

		while (vlen && isspace((unsigned char)*v)) {
			v++;
			vlen--;
		}
		while (vlen && isspace((unsigned char)v[vlen - 1]))
			vlen--;
		if (vlen && vlen < sizeof(value)) {
			memcpy(value, v, vlen);
			value[vlen] = '\0';
			/*
			 * Only delay-seconds: the API server never sends an
			 * HTTP-date, and client-go ignores one too.
			 */
			errno = 0;
			secs = strtol(value, &end, 10);
			if (!errno && !*end && secs >= 0)
				t->retry_after_s = secs;
		}
	}
	return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct transfer *t = ctx;
	size_t len = size * n;

	if (t->stream) {
		if (!t->status_known) {
			long status = 0;

			curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
			t->stream_2xx = status >= 200 && status < 300;
			t->status_known = true;
		}
		t->last_data_ns = t->h->clock.now_ns(t->h->clock.ctx);
		if (t->stream_2xx) {
			int err;

			/*
			 * Stopped: nothing more is handed on, not even what came in the
			 * same read. The flag is looked at between reads too, but bytes
			 * that arrive before that look (up to STREAM_TICK_MS after it
			 * was set) would reach a reader that has been told to be done:
			 * cadre logs -f printed a line of an old attempt's stream after
			 * the new attempt's follower had printed it.
			 */
			if (t->stream->stop && atomic_load(t->stream->stop)) {
				t->stopped = true;
				return 0;
			}
			err = t->stream->on_data(t->stream->ctx, data, len);

			if (err) {
				t->callback_err = err < 0 ? err : CADRE_ECANCELED;
				return 0;
			}
			return len;
		}
	} else {
		t->h->last_rx_ms = clock_mono_ms();  /* on the I/O thread */
	}
	if (buf_add(t->body, data, len)) {
		t->too_big = true;
		return 0;
	}
	return len;
}

/*
 * The proxy of kube/proxy.h, and nothing else: an empty CURLOPT_PROXY turns
 * libcurl's own reading of the environment off, and an empty
 * CURLOPT_NOPROXY its reading of NO_PROXY (which proxy.c has applied
 * already, as Go does, and which does not apply to a kubeconfig's
 * proxy-url). An https:// proxy's certificate is verified as client-go's
 * transport does it, with the cluster's TLS settings (its CA, or the
 * system's; insecure-skip-tls-verify skips it).
 */
static void setup_proxy(struct kube_http *h, CURL *easy, const struct kube_config_creds *creds)
{
	curl_easy_setopt(easy, CURLOPT_PROXY, h->proxy);
	curl_easy_setopt(easy, CURLOPT_NOPROXY, "");
	if (!h->proxy_https)
		return;
	if (creds->ca_pem) {
		struct curl_blob blob = { creds->ca_pem, creds->ca_len, CURL_BLOB_COPY };

		curl_easy_setopt(easy, CURLOPT_PROXY_CAINFO_BLOB, &blob);
	}
	if (h->cfg->insecure) {
		curl_easy_setopt(easy, CURLOPT_PROXY_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(easy, CURLOPT_PROXY_SSL_VERIFYHOST, 0L);
	}
}

/*
 * Set the options every request shares: URL, TLS material, credentials,
 * proxy, impersonation, timeouts. *headers receives the list to free after
 * the transfer.
 */
static int setup_common(struct kube_http *h, struct transfer *t,
			const char *path, const struct kube_config_creds *creds,
			struct curl_slist **headers, struct buf *url)
{
	struct kube_config *cfg = h->cfg;
	struct curl_slist *list = NULL, *next;
	struct buf auth;
	CURL *easy = t->easy;
	int err;

	*headers = NULL;
	buf_reset(url);
	err = buf_adds(url, h->base_url);
	if (!err)
		err = buf_adds(url, path);
	if (err)
		return err;
	curl_easy_reset(easy);
	curl_easy_setopt(easy, CURLOPT_URL, url->data);
	curl_easy_setopt(easy, CURLOPT_SHARE, h->share);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(easy, CURLOPT_USERAGENT, h->user_agent);
	curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, h->opts.connect_timeout_ms);
	curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(easy, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(easy, CURLOPT_TCP_KEEPINTVL, 10L);
	if (!cfg->disable_compression)
		curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
	setup_proxy(h, easy, creds);
	curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(easy, CURLOPT_HEADERDATA, t);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, t);
	if (h->connect_to)
		curl_easy_setopt(easy, CURLOPT_CONNECT_TO, h->connect_to);

	if (creds->ca_pem) {
		struct curl_blob blob = { creds->ca_pem, creds->ca_len, CURL_BLOB_COPY };

		curl_easy_setopt(easy, CURLOPT_CAINFO_BLOB, &blob);
	}
	if (cfg->insecure) {
		curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (creds->cert_pem && creds->key_pem) {
		struct curl_blob cert = { creds->cert_pem, creds->cert_len, CURL_BLOB_COPY };
		struct curl_blob key = { creds->key_pem, creds->key_len, CURL_BLOB_COPY };

		curl_easy_setopt(easy, CURLOPT_SSLCERTTYPE, "PEM");
		curl_easy_setopt(easy, CURLOPT_SSLCERT_BLOB, &cert);
		curl_easy_setopt(easy, CURLOPT_SSLKEYTYPE, "PEM");
		curl_easy_setopt(easy, CURLOPT_SSLKEY_BLOB, &key);
	}

	/* Without this libcurl waits up to a second for a 100 Continue. */
	list = curl_slist_append(list, "Expect:");
	if (list && t->accept) {
		char accept[256];

		snprintf(accept, sizeof(accept), "Accept: %s", t->accept);
		next = curl_slist_append(list, accept);
	} else {
		next = list ? curl_slist_append(list, "Accept: application/json") : NULL;
	}
	if (next && creds->token) {
		buf_init(&auth, 64 * 1024);
		err = buf_addf(&auth, "Authorization: Bearer %s", creds->token);
		next = err ? NULL : curl_slist_append(list, auth.data);
		/* The copy in auth held a secret; do not leave it in freed memory. */
		if (auth.data)
			memset(auth.data, 0, auth.len);
		buf_release(&auth);
	}
	for (size_t i = 0; next && i < cfg->nimpersonate; i++)
		next = curl_slist_append(list, cfg->impersonate[i]);
	if (!next) {
		curl_slist_free_all(list);
		return CADRE_ENOMEM;
	}
	*headers = list;
	return 0;
}

static int transport_error(struct kube_status *st, CURLcode rc,
			   const char *errbuf, const char *method,
			   const char *path)
{
	int code = CADRE_EIO;

	if (rc == CURLE_OPERATION_TIMEDOUT)
		code = CADRE_ETIMEDOUT;
	else if (rc == CURLE_OUT_OF_MEMORY)
		code = CADRE_ENOMEM;
	return kube_status_set(st, code, "%s %s: %s", method, path,
			       errbuf[0] ? errbuf : curl_easy_strerror(rc));
}

/* Make resp ready for a new call: no status, no body, no error. */
static void response_reset(struct kube_http *h, struct kube_response *resp, int attempts)
{
	resp->status = 0;
	resp->attempts = attempts;
	resp->body.max = h->opts.max_body;
	buf_reset(&resp->body);
	kube_status_clear(&resp->error);
}

static bool idempotent(const char *method)
{
	return !strcmp(method, "GET") || !strcmp(method, "HEAD") ||
	       !strcmp(method, "PUT") || !strcmp(method, "DELETE") ||
	       !strcmp(method, "OPTIONS");
}

/*
 * What every send attempt does first, for a request and a stream alike: take
 * the current credentials (a refreshed token after a 401) and set the easy
 * handle up for path_and_query. The credentials are released at once:
 * setup_common copies what it keeps. 0, or the error also set in resp.
 */
static int attempt_setup(struct kube_http *h, struct transfer *t, const char *method,
			 const char *path_and_query, struct curl_slist **headers,
			 struct buf *url, struct kube_response *resp)
{
	struct kube_config_creds creds = { 0 };
	int err;

	if (h->proxy_error[0])
		return kube_status_set(&resp->error, CADRE_EINVAL, "%s %s: %s", method,
				       path_and_query, h->proxy_error);
	if ((err = kube_config_credentials(h->cfg, &creds, &resp->error)))
		return err;
	err = setup_common(h, t, path_and_query, &creds, headers, url);
	kube_config_creds_release(&creds);
	if (err)
		kube_status_set(&resp->error, err, "%s %s: cannot build request", method,
				path_and_query);
	return err;
}

/* A request's body, method and timeout on top of attempt_setup. 0 or CADRE_ENOMEM. */
static int request_setup(struct kube_http *h, struct transfer *t, const char *method,
			 const char *content_type, const char *body, size_t body_len,
			 struct curl_slist **headers, char *errbuf, struct kube_response *resp)
{
	if (body) {
		struct curl_slist *next;
		char ct[256];

		snprintf(ct, sizeof(ct), "Content-Type: %s",
			 content_type ? content_type : "application/json");
		next = curl_slist_append(*headers, ct);
		if (!next)
			return kube_status_set(&resp->error, CADRE_ENOMEM, "out of memory");
		*headers = next;
		curl_easy_setopt(t->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
		curl_easy_setopt(t->easy, CURLOPT_POSTFIELDS, body);
	}
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(t->easy, CURLOPT_NOBODY, 1L);
	else if (strcmp(method, "GET") || body)
		curl_easy_setopt(t->easy, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(t->easy, CURLOPT_HTTPHEADER, *headers);
	curl_easy_setopt(t->easy, CURLOPT_TIMEOUT_MS, atomic_load(&h->timeout_ms) > 0 ?
			 atomic_load(&h->timeout_ms) : h->opts.request_timeout_ms);
	errbuf[0] = '\0';
	curl_easy_setopt(t->easy, CURLOPT_ERRORBUFFER, errbuf);
	return 0;
}

/*
 * What one finished request attempt means: 0 for a 2xx, else the error (set
 * in resp). *answered says whether the error is the server's answer, which a
 * new attempt may change (a 401, a 429 or 503 with Retry-After).
 */
static int request_result(struct kube_http *h, const struct transfer *t, const char *method,
			  const char *path_and_query, CURLcode rc, long status,
			  const char *errbuf, struct kube_response *resp, bool *answered)
{
	*answered = false;
	if (t->too_big)
		return kube_status_set(&resp->error, CADRE_ETOOBIG,
				       "%s %s: response body over %zu bytes",
				       method, path_and_query, h->opts.max_body);
	/*
	 * A server that refuses a request may answer and close before the
	 * transfer is done (kube-apiserver does for a bad token): after a
	 * complete error status the answer is the server's, not the
	 * network's. A cut-short success is never taken as one.
	 */
	if (rc != CURLE_OK && !(rc == CURLE_PARTIAL_FILE && status >= 400))
		return transport_error(&resp->error, rc, errbuf, method, path_and_query);
	*answered = true;
	return kube_status_from_http(&resp->error, status, resp->body.data,
				     resp->body.len, t->retry_after_s >= 0);
}

/*
 * A 429 was not processed, so any verb may go again; a 503 may have been,
 * so only idempotent ones do. Both only when the server said when (client-go
 * does the same). True after waiting, when the caller should send again.
 */
static bool retry_after_wait(struct kube_http *h, const struct transfer *t, const char *method,
			     const char *path_and_query, long status,
			     const struct kube_response *resp)
{
	int64_t wait_ms = (int64_t)t->retry_after_s * 1000;

	if (t->retry_after_s < 0 || resp->attempts > h->opts.max_retries ||
	    !(status == 429 || (status == 503 && idempotent(method))))
		return false;
	if (wait_ms > h->opts.max_retry_after_ms)
		wait_ms = h->opts.max_retry_after_ms;
	log_debug("http", "%s %s: HTTP %ld, retrying in %lld ms",
		  method, path_and_query, status, (long long)wait_ms);
	/* Cancelled meanwhile: the next attempt says so. */
	kube_ratelimit_sleep(&h->clock, wait_ms * NS_PER_MS, &h->cancelled);
	return true;
}

/* How long the last transfer of easy took, for the debug log. */
static double elapsed_ms(CURL *easy)
{
	curl_off_t us = 0;

	curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &us);
	return (double)us / 1000.0;
}

/* What a request ended by kube_http_cancel returns. */
static int cancelled_error(struct kube_response *resp, const char *method,
			   const char *path_and_query)
{
	return kube_status_set(&resp->error, CADRE_ECANCELED,
			       "%s %s: cancelled: the client is shutting down", method,
			       path_and_query);
}

int kube_http_request(struct kube_http *h, const char *method,
		      const char *path_and_query, const char *content_type,
		      const char *body, size_t body_len,
		      struct kube_response *resp)
{
	return kube_http_request_accept(h, method, path_and_query, NULL, content_type, body,
					body_len, resp);
}

int kube_http_request_accept(struct kube_http *h, const char *method,
			     const char *path_and_query, const char *accept,
			     const char *content_type, const char *body, size_t body_len,
			     struct kube_response *resp)
{
	struct curl_slist *headers = NULL;
	char errbuf[CURL_ERROR_SIZE];
	struct transfer t;
	struct buf url;
	bool auth_retried = false, lost_retried = false, answered, lost;
	int err;

	buf_init(&url, 64 * 1024);
	memset(&t, 0, sizeof(t));
	response_reset(h, resp, 0);
	if (!method || !path_and_query || path_and_query[0] != '/') {
		err = kube_status_set(&resp->error, CADRE_EINVAL,
				      "bad request arguments");
		goto out;
	}
	t.h = h;
	t.accept = accept;
	t.easy = pool_take(h);
	if (!t.easy) {
		err = kube_status_set(&resp->error, CADRE_ENOMEM, "out of memory");
		goto out;
	}
	t.body = &resp->body;

	for (;;) {
		CURLcode rc;
		long status = 0;

		if (kube_ratelimit_wait(&h->limiter, &h->cancelled) || atomic_load(&h->cancelled)) {
			err = cancelled_error(resp, method, path_and_query);
			goto out;
		}
		err = attempt_setup(h, &t, method, path_and_query, &headers, &url, resp);
		if (!err)
			err = request_setup(h, &t, method, content_type, body, body_len, &headers,
					    errbuf, resp);
		if (err)
			goto out;

		buf_reset(&resp->body);
		t.too_big = false;
		t.retry_after_s = -1;
		resp->attempts++;
		/* Wait for the HTTP/2 connection in use rather than open another. */
		curl_easy_setopt(t.easy, CURLOPT_PIPEWAIT, 1L);
		rc = io_perform(h, t.easy, &lost);
		curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_setopt(t.easy, CURLOPT_HTTPHEADER, NULL);
		curl_slist_free_all(headers);
		headers = NULL;
		resp->status = status;
		stats_count(h, method, rc == CURLE_OK ? status : 0);
		log_debug("http", "%s %s: %ld (%s) in %.1f ms", method, path_and_query, status,
			  rc == CURLE_OK ? "ok" : curl_easy_strerror(rc), elapsed_ms(t.easy));

		if (rc == CURLE_ABORTED_BY_CALLBACK && atomic_load(&h->cancelled)) {
			err = cancelled_error(resp, method, path_and_query);
			goto out;
		}
		if (lost) {
			/* no answer came: one that changes nothing goes once more, on a new connection */
			if (idempotent(method) && !lost_retried) {
				lost_retried = true;
				continue;
			}
			err = kube_status_set(&resp->error, CADRE_ETIMEDOUT, "%s %s: the connection "
					      "stopped answering (no answer to a check within %ld ms)",
					      method, path_and_query, h->opts.liveness_timeout_ms);
			goto out;
		}
		err = request_result(h, &t, method, path_and_query, rc, status, errbuf, resp,
				     &answered);
		if (!err || !answered)
			goto out;
		if (status == 401 && !auth_retried && kube_config_invalidate(h->cfg)) {
			auth_retried = true;
			continue;
		}
		if (retry_after_wait(h, &t, method, path_and_query, status, resp))
			continue;
		goto out;
	}
out:
	curl_slist_free_all(headers);
	if (t.easy)
		pool_give(h, t.easy);
	buf_release(&url);
	resp->error.code = err;
	return err;
}

/*
 * libcurl calls this once the connection is up, just before it sends the
 * request. Idle time counts from here: until then the connect timeout is
 * in charge, and a slow connect is not a silent peer.
 */
static int on_connected(void *ctx, char *conn_primary_ip, char *conn_local_ip,
			int conn_primary_port, int conn_local_port)
{
	struct transfer *t = ctx;

	(void)conn_primary_ip;
	(void)conn_local_ip;
	(void)conn_primary_port;
	(void)conn_local_port;
	t->connected = true;
	t->last_data_ns = t->h->clock.now_ns(t->h->clock.ctx);
	return CURL_PREREQFUNC_OK;
}

/* Milliseconds left before the stream counts as idle (may be <= 0). */
static long idle_left_ms(const struct transfer *t, int64_t now)
{
	return (long)((t->last_data_ns - now) / NS_PER_MS) +
	       t->stream->idle_timeout_ms;
}

/* How a stream's transfer ended, as stream_pump saw it. */
struct stream_end {
	CURLcode rc;
	bool idle, stopped, done;
};

/*
 * Drive the stream's multi handle until the transfer ends, the reader asks
 * to stop, the stop flag is set or the stream is idle for too long, looking
 * every STREAM_TICK_MS.
 */
static void stream_pump(struct kube_http *h, struct transfer *t, CURLM *multi,
			const struct kube_stream_opts *opts, struct stream_end *end)
{
	while (!end->done) {
		int running = 0, queued;
		long wait_ms = STREAM_TICK_MS;
		CURLMsg *msg;

		if (curl_multi_perform(multi, &running) != CURLM_OK) {
			end->rc = CURLE_RECV_ERROR;
			break;
		}
		while ((msg = curl_multi_info_read(multi, &queued)))
			if (msg->msg == CURLMSG_DONE) {
				end->rc = msg->data.result;
				end->done = true;
			}
		if (end->done || !running)
			break;
		if (t->callback_err)
			break;
		if (opts->stop && atomic_load(opts->stop)) {
			end->stopped = true;
			break;
		}
		if (opts->idle_timeout_ms > 0 && t->connected) {
			long left = idle_left_ms(t, h->clock.now_ns(h->clock.ctx));

			if (left <= 0) {
				end->idle = true;
				break;
			}
			if (left < wait_ms)
				wait_ms = left;
		}
		curl_multi_poll(multi, NULL, 0, (int)wait_ms, NULL);
	}
}

/* What an ended stream means: 0 for a clean end of a 2xx, else the error (set in resp). */
static int stream_result(struct kube_http *h, const struct transfer *t,
			 const char *path_and_query, const struct kube_stream_opts *opts,
			 const struct stream_end *end, long status, const char *errbuf,
			 struct kube_response *resp)
{
	int err;

	if (end->stopped || t->stopped)
		return kube_status_set(&resp->error, CADRE_ECANCELED, "GET %s: stopped",
				       path_and_query);
	if (t->callback_err)
		return kube_status_set(&resp->error, t->callback_err,
				       "GET %s: ended by the reader (%s)", path_and_query,
				       cadre_strerror(t->callback_err));
	if (end->idle)
		return kube_status_set(&resp->error, CADRE_ETIMEDOUT, "GET %s: no data for %ld ms",
				       path_and_query, opts->idle_timeout_ms);
	if (t->too_big)
		return kube_status_set(&resp->error, CADRE_ETOOBIG,
				       "GET %s: error body over %zu bytes", path_and_query,
				       h->opts.max_body);
	if (end->rc != CURLE_OK || !end->done)
		return transport_error(&resp->error,
				       end->rc == CURLE_OK ? CURLE_RECV_ERROR : end->rc,
				       errbuf, "GET", path_and_query);
	err = kube_status_from_http(&resp->error, status, resp->body.data, resp->body.len,
				    t->retry_after_s >= 0);
	/* The next stream (the reflector comes back) gets fresh credentials. */
	if (status == 401)
		kube_config_invalidate(h->cfg);
	return err;
}

int kube_http_stream(struct kube_http *h, const char *path_and_query,
		     const struct kube_stream_opts *opts)
{
	struct curl_slist *headers = NULL;
	struct kube_response local, *resp = opts->resp;
	struct stream_end end = { CURLE_OK, false, false, false };
	char errbuf[CURL_ERROR_SIZE];
	struct transfer t;
	struct buf url;
	CURLM *multi = NULL;
	bool added = false;
	long status = 0;
	int err;

	if (!resp) {
		kube_response_init(&local);
		resp = &local;
	}
	buf_init(&url, 64 * 1024);
	memset(&t, 0, sizeof(t));
	response_reset(h, resp, 1);
	if (!path_and_query || path_and_query[0] != '/' || !opts->on_data) {
		err = kube_status_set(&resp->error, CADRE_EINVAL,
				      "bad stream arguments");
		goto out;
	}
	err = kube_ratelimit_wait(&h->limiter, opts->stop);
	if (err) {
		kube_status_set(&resp->error, err, "GET %s: stopped", path_and_query);
		goto out;
	}
	/*
	 * A stream gets its own easy and multi handles: its connection ends
	 * with it (an abandoned watch cannot be reused), and driving the
	 * multi handle ourselves lets us look at the stop flag and the idle
	 * clock every STREAM_TICK_MS instead of libcurl's once a second.
	 */
	t.h = h;
	t.stream = opts;
	t.body = &resp->body;
	t.retry_after_s = -1;
	t.easy = curl_easy_init();
	multi = curl_multi_init();
	if (!t.easy || !multi) {
		err = kube_status_set(&resp->error, CADRE_ENOMEM, "out of memory");
		goto out;
	}
	err = attempt_setup(h, &t, "GET", path_and_query, &headers, &url, resp);
	if (err)
		goto out;
	curl_easy_setopt(t.easy, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(t.easy, CURLOPT_PREREQFUNCTION, on_connected);
	curl_easy_setopt(t.easy, CURLOPT_PREREQDATA, &t);
	errbuf[0] = '\0';
	curl_easy_setopt(t.easy, CURLOPT_ERRORBUFFER, errbuf);
	if (curl_multi_add_handle(multi, t.easy) != CURLM_OK) {
		err = kube_status_set(&resp->error, CADRE_ENOMEM, "out of memory");
		goto out;
	}
	added = true;
	t.last_data_ns = h->clock.now_ns(h->clock.ctx);

	stream_pump(h, &t, multi, opts, &end);
	curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
	resp->status = status;
	stats_count(h, "WATCH", status);
	err = stream_result(h, &t, path_and_query, opts, &end, status, errbuf, resp);
out:
	if (added)
		curl_multi_remove_handle(multi, t.easy);
	if (t.easy)
		curl_easy_cleanup(t.easy);
	if (multi)
		curl_multi_cleanup(multi);
	curl_slist_free_all(headers);
	buf_release(&url);
	resp->error.code = err;
	if (resp == &local)
		kube_response_release(&local);
	return err;
}

/* ---- upgraded connections (pods/exec) ---- */

/* The head of an answer is small; its body (a Status) too. */
#define UPGRADE_MAX_HEAD (64u << 10)
#define UPGRADE_MAX_BODY (1u << 20)
#define UPGRADE_TICK_MS 100

enum upgrade_state { UP_CONNECTING, UP_SENDING, UP_READING, UP_BODY, UP_DONE };

/* The connections of one kube_http_upgrade share a multi handle; the last one out frees it. */
struct upgrade_group {
	CURLM *multi;
	size_t refs;
};

struct upgrade_priv {
	struct upgrade_group *group;
	struct transfer t;
	struct curl_slist *headers;  /* libcurl's list from setup_common (unused but freed) */
	struct buf url;
	struct buf out;              /* the request, then nothing */
	size_t sent;
	struct buf in;               /* the answer's head, then its body */
	size_t head_len;             /* bytes of in that are the head (after UP_READING) */
	long status;
	long long content_length;    /* -1: until the connection closes */
	enum upgrade_state state;
	bool added, retried;
	char errbuf[CURL_ERROR_SIZE];
};

static CURL *upgrade_easy(const struct kube_upgrade *u)
{
	const struct upgrade_priv *p = u->priv;

	return p ? p->t.easy : NULL;
}

int kube_upgrade_fd(const struct kube_upgrade *u)
{
	curl_socket_t fd = CURL_SOCKET_BAD;
	CURL *easy = upgrade_easy(u);

	if (!easy || curl_easy_getinfo(easy, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK)
		return -1;
	return fd == CURL_SOCKET_BAD ? -1 : (int)fd;
}

int kube_upgrade_send(struct kube_upgrade *u, const void *data, size_t len, size_t *done)
{
	CURL *easy = upgrade_easy(u);
	CURLcode rc;

	*done = 0;
	if (!easy)
		return CADRE_EIO;
	rc = curl_easy_send(easy, data, len, done);
	return rc == CURLE_OK ? 0 : rc == CURLE_AGAIN ? CADRE_EAGAIN : CADRE_EIO;
}

int kube_upgrade_recv(struct kube_upgrade *u, void *data, size_t size, size_t *done)
{
	CURL *easy = upgrade_easy(u);
	CURLcode rc;

	*done = 0;
	if (!easy)
		return CADRE_EIO;
	rc = curl_easy_recv(easy, data, size, done);
	return rc == CURLE_OK ? 0 : rc == CURLE_AGAIN ? CADRE_EAGAIN : CADRE_EIO;
}

static void upgrade_disconnect(struct upgrade_priv *p)
{
	if (p->added)
		curl_multi_remove_handle(p->group->multi, p->t.easy);
	p->added = false;
	if (p->t.easy)
		curl_easy_cleanup(p->t.easy);
	p->t.easy = NULL;
	curl_slist_free_all(p->headers);
	p->headers = NULL;
}

void kube_upgrade_release(struct kube_upgrade *u)
{
	struct upgrade_priv *p = u->priv;

	if (p) {
		upgrade_disconnect(p);
		if (p->group && !--p->group->refs) {
			curl_multi_cleanup(p->group->multi);
			free(p->group);
		}
		buf_release(&p->url);
		/* the request held the credentials */
		if (p->out.data)
			memset(p->out.data, 0, p->out.len);
		buf_release(&p->out);
		buf_release(&p->in);
		free(p);
	}
	u->priv = NULL;
	free(u->head);
	u->head = NULL;
	buf_release(&u->early);
}

bool kube_upgrade_header(const char *head, const char *name, char *out, size_t size)
{
	size_t n = strlen(name);

	for (const char *line = head ? strstr(head, "\r\n") : NULL; line && line[2];
	     line = strstr(line + 2, "\r\n")) {
		const char *v = line + 2, *end;

		if (strncasecmp(v, name, n) || v[n] != ':')
			continue;
		v += n + 1;
		v += strspn(v, " \t");
		end = strstr(v, "\r\n");
		if (!end)
			end = v + strlen(v);
		while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if ((size_t)(end - v) >= size)
			return false;
		memcpy(out, v, (size_t)(end - v));
		out[end - v] = '\0';
		return true;
	}
	return false;
}

/*
 * The request: the path of the server URL (a server behind a path prefix)
 * and path_and_query, Host as the URL's (tls-server-name's when set, as for
 * every request), then the credentials, impersonation and the protocol's
 * lines. 0 or CADRE_ENOMEM (with creds' secrets wiped from the buffer).
 */
static int upgrade_request(struct kube_http *h, const struct kube_upgrade *u,
			   const struct kube_config_creds *creds, struct buf *out)
{
	const char *authority = strstr(h->base_url, "://") + 3;
	size_t host_len = strcspn(authority, "/");
	int err;

	buf_reset(out);
	err = buf_addf(out, "GET %s%s HTTP/1.1\r\nHost: %.*s\r\nUser-Agent: %s\r\n",
		       authority + host_len, u->path_and_query, (int)host_len, authority,
		       h->user_agent);
	if (!err && creds->token)
		err = buf_addf(out, "Authorization: Bearer %s\r\n", creds->token);
	for (size_t i = 0; !err && i < h->cfg->nimpersonate; i++)
		err = buf_addf(out, "%s\r\n", h->cfg->impersonate[i]);
	if (!err)
		err = buf_addf(out, "%s\r\n", u->headers ? u->headers : "");
	return err ? CADRE_ENOMEM : 0;
}

/* Start (or start again, after a 401) u's connection in its group. */
static int upgrade_start(struct kube_http *h, struct kube_upgrade *u, struct kube_response *scratch)
{
	struct upgrade_priv *p = u->priv;
	struct kube_config_creds creds = { 0 };
	int err;

	upgrade_disconnect(p);
	buf_reset(&p->in);
	p->sent = p->head_len = 0;
	p->status = 0;
	p->content_length = -1;
	kube_status_clear(&u->st);
	if (h->proxy_error[0])
		return kube_status_set(&u->st, CADRE_EINVAL, "%s", h->proxy_error);
	if ((err = kube_config_credentials(h->cfg, &creds, &u->st)))
		return err;
	p->t.h = h;
	p->t.body = &scratch->body;
	p->t.easy = curl_easy_init();
	if (!p->t.easy)
		err = CADRE_ENOMEM;
	if (!err)
		err = setup_common(h, &p->t, "/", &creds, &p->headers, &p->url);
	if (!err)
		err = upgrade_request(h, u, &creds, &p->out);
	kube_config_creds_release(&creds);
	if (err)
		return kube_status_set(&u->st, CADRE_ENOMEM, "out of memory");
	/* a connection of its own, its TLS on HTTP/1.1 (the API server upgrades nothing else) */
	curl_easy_setopt(p->t.easy, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(p->t.easy, CURLOPT_HTTPPROXYTUNNEL, 1L);
	curl_easy_setopt(p->t.easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	p->errbuf[0] = '\0';
	curl_easy_setopt(p->t.easy, CURLOPT_ERRORBUFFER, p->errbuf);
	curl_easy_setopt(p->t.easy, CURLOPT_PRIVATE, u);
	if (curl_multi_add_handle(p->group->multi, p->t.easy) != CURLM_OK)
		return kube_status_set(&u->st, CADRE_ENOMEM, "out of memory");
	p->added = true;
	p->state = UP_CONNECTING;
	return 0;
}

/* The head is in: 101 is done; another status reads its body (a Status) first. */
static void upgrade_head(struct kube_upgrade *u, const char *path)
{
	struct upgrade_priv *p = u->priv;
	const char *end = memmem(p->in.data, p->in.len, "\r\n\r\n", 4);
	char value[32];

	p->head_len = (size_t)(end - p->in.data) + 4;
	if (sscanf(p->in.data, "HTTP/1.%*1[01] %3ld", &p->status) != 1) {
		kube_status_set(&u->st, CADRE_EIO, "GET %s: the answer is not HTTP", path);
		p->state = UP_DONE;
		return;
	}
	u->head = strndup(p->in.data, p->head_len);
	if (!u->head) {
		kube_status_set(&u->st, CADRE_ENOMEM, "out of memory");
		p->state = UP_DONE;
		return;
	}
	if (p->status == 101) {
		if (buf_add(&u->early, p->in.data + p->head_len, p->in.len - p->head_len))
			kube_status_set(&u->st, CADRE_ENOMEM, "out of memory");
		p->state = UP_DONE;
		return;
	}
	if (kube_upgrade_header(u->head, "Content-Length", value, sizeof(value)))
		p->content_length = strtoll(value, NULL, 10);
	p->state = UP_BODY;
}

/* The answer that was not 101, as the error a request with it would be. */
static void upgrade_refused(struct kube_upgrade *u)
{
	struct upgrade_priv *p = u->priv;
	char value[32];
	size_t body = p->in.len - p->head_len;

	if (p->content_length >= 0 && (size_t)p->content_length < body)
		body = (size_t)p->content_length;
	kube_status_from_http(&u->st, p->status, p->in.data + p->head_len, body,
			      kube_upgrade_header(u->head, "Retry-After", value, sizeof(value)));
	if (!u->st.code)  /* a 2xx that is not 101: the server does not upgrade here */
		kube_status_set(&u->st, CADRE_EHTTP, "GET %s: HTTP %ld where 101 Switching "
				"Protocols was asked for", u->path_and_query, p->status);
	u->st.http_status = p->status;
	p->state = UP_DONE;
}

/* Move u's request and answer as far as they go without waiting. */
static void upgrade_step(struct kube_upgrade *u)
{
	struct upgrade_priv *p = u->priv;
	char chunk[16384];
	size_t n;
	int e = 0;

	while (p->state == UP_SENDING && !(e = kube_upgrade_send(u, p->out.data + p->sent,
								 p->out.len - p->sent, &n))) {
		p->sent += n;
		if (p->sent == p->out.len)
			p->state = UP_READING;
	}
	while ((p->state == UP_READING || p->state == UP_BODY) &&
	       !(e = kube_upgrade_recv(u, chunk, sizeof(chunk), &n))) {
		if (!n) {  /* closed */
			if (p->state == UP_BODY)
				upgrade_refused(u);
			else
				kube_status_set(&u->st, CADRE_EIO, "GET %s: the server closed the "
						"connection without an answer", u->path_and_query);
			p->state = UP_DONE;
			return;
		}
		if (buf_add(&p->in, chunk, n)) {
			if (p->state == UP_BODY) {  /* enough of a body to say what it was */
				upgrade_refused(u);
				return;
			}
			kube_status_set(&u->st, CADRE_EIO, "GET %s: an answer's head over %u bytes",
					u->path_and_query, UPGRADE_MAX_HEAD);
			p->state = UP_DONE;
			return;
		}
		if (p->state == UP_READING && memmem(p->in.data, p->in.len, "\r\n\r\n", 4)) {
			upgrade_head(u, u->path_and_query);
			p->in.max = UPGRADE_MAX_HEAD + UPGRADE_MAX_BODY;
		}
		if (p->state == UP_BODY && p->content_length >= 0 &&
		    p->in.len - p->head_len >= (size_t)p->content_length)
			upgrade_refused(u);
	}
	if (e && e != CADRE_EAGAIN && p->state != UP_DONE) {
		kube_status_set(&u->st, CADRE_EIO, "GET %s: the connection failed", u->path_and_query);
		p->state = UP_DONE;
	}
}

/* Collect what libcurl finished connecting (or failed to). */
static void upgrade_connected(struct upgrade_group *g)
{
	CURLMsg *msg;
	int queued;

	while ((msg = curl_multi_info_read(g->multi, &queued))) {
		struct kube_upgrade *u = NULL;
		struct upgrade_priv *p;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&u);
		p = u->priv;
		if (msg->data.result == CURLE_OK) {
			p->state = UP_SENDING;
			continue;
		}
		transport_error(&u->st, msg->data.result, p->errbuf, "GET", u->path_and_query);
		p->state = UP_DONE;
	}
}

/*
 * A group for the n upgrades (*out), each started or, when the rate limit
 * or stop ends it, done with why. CADRE_ENOMEM with nothing kept.
 */
static int upgrade_begin(struct kube_http *h, struct kube_upgrade *u, size_t n,
			 struct kube_response *scratch, const atomic_bool *stop,
			 struct upgrade_group **out)
{
	struct upgrade_group *g = calloc(1, sizeof(*g));
	int err = 0;

	*out = NULL;
	if (!g || !(g->multi = curl_multi_init())) {
		free(g);
		return CADRE_ENOMEM;
	}
	for (size_t i = 0; i < n && !err; i++) {
		struct upgrade_priv *p = calloc(1, sizeof(*p));

		if (!p) {
			err = CADRE_ENOMEM;
			break;
		}
		p->group = g;
		g->refs++;
		buf_init(&p->url, 64 * 1024);
		buf_init(&p->out, 4u << 20);
		buf_init(&p->in, UPGRADE_MAX_HEAD);
		u[i].priv = p;
		if (kube_ratelimit_wait(&h->limiter, stop) || (stop && atomic_load(stop))) {
			kube_status_set(&u[i].st, CADRE_ECANCELED, "stopped");
			p->state = UP_DONE;
			continue;
		}
		if (upgrade_start(h, &u[i], scratch))
			p->state = UP_DONE;
	}
	if (err) {
		for (size_t i = 0; i < n; i++)
			kube_upgrade_release(&u[i]);
		if (!g->refs) {
			curl_multi_cleanup(g->multi);
			free(g);
		}
		return err;
	}
	*out = g;
	return 0;
}

/*
 * One round over the upgrades: each stepped (a 401 with credentials that
 * can be refreshed is tried once more), the sockets to wait on into fds.
 * How many are not done; *connecting when one still connects.
 */
static size_t upgrade_round(struct kube_http *h, struct kube_upgrade *u, size_t n,
			    struct kube_response *scratch, struct pollfd *fds, int *nfds,
			    bool *connecting)
{
	size_t left = 0;

	*nfds = 0;
	*connecting = false;
	for (size_t i = 0; i < n; i++) {
		struct upgrade_priv *p = u[i].priv;

		upgrade_step(&u[i]);
		if (p->state == UP_DONE && u[i].st.code == CADRE_EUNAUTHORIZED && !p->retried &&
		    kube_config_invalidate(h->cfg)) {
			p->retried = true;
			free(u[i].head);
			u[i].head = NULL;
			if (upgrade_start(h, &u[i], scratch))
				p->state = UP_DONE;
		}
		if (p->state == UP_DONE)
			continue;
		left++;
		*connecting = *connecting || p->state == UP_CONNECTING;
		if (p->state != UP_CONNECTING && kube_upgrade_fd(&u[i]) >= 0)
			fds[(*nfds)++] = (struct pollfd){ .fd = kube_upgrade_fd(&u[i]),
				.events = p->state == UP_SENDING ? POLLOUT : POLLIN };
	}
	return left;
}

/* Every upgrade not done yet ends: stopped, or out of time. */
static void upgrade_expire(struct kube_upgrade *u, size_t n, const atomic_bool *stop)
{
	for (size_t i = 0; i < n; i++) {
		struct upgrade_priv *p = u[i].priv;

		if (p->state == UP_DONE)
			continue;
		if (stop && atomic_load(stop))
			kube_status_set(&u[i].st, CADRE_ECANCELED, "stopped");
		else
			kube_status_set(&u[i].st, CADRE_ETIMEDOUT, "GET %s: no answer to the "
					"upgrade in time", u[i].path_and_query);
		p->state = UP_DONE;
	}
}

int kube_http_upgrade(struct kube_http *h, struct kube_upgrade *u, size_t n, long timeout_ms,
		      const atomic_bool *stop)
{
	struct upgrade_group *g;
	struct kube_response scratch;
	struct pollfd *fds;
	int64_t deadline;
	int err;

	for (size_t i = 0; i < n; i++) {
		u[i].priv = NULL;
		u[i].head = NULL;
		buf_init(&u[i].early, (size_t)4 << 20);
		kube_status_clear(&u[i].st);
	}
	if (!n)
		return CADRE_EINVAL;
	if (!(fds = calloc(n, sizeof(*fds))))
		return CADRE_ENOMEM;
	kube_response_init(&scratch);
	err = upgrade_begin(h, u, n, &scratch, stop, &g);
	if (err) {
		free(fds);
		kube_response_release(&scratch);
		return err;
	}
	/* connecting has its own timeout; the answer may wait for the kubelet's */
	deadline = h->clock.now_ns(h->clock.ctx) / NS_PER_MS +
		   (timeout_ms > 0 ? timeout_ms : h->opts.request_timeout_ms);
	for (;;) {
		int running = 0, nfds;
		bool connecting;

		curl_multi_perform(g->multi, &running);
		upgrade_connected(g);
		if (!upgrade_round(h, u, n, &scratch, fds, &nfds, &connecting))
			break;
		if ((stop && atomic_load(stop)) ||
		    h->clock.now_ns(h->clock.ctx) / NS_PER_MS >= deadline) {
			upgrade_expire(u, n, stop);
			break;
		}
		if (connecting)
			curl_multi_poll(g->multi, NULL, 0, nfds ? 10 : UPGRADE_TICK_MS, NULL);
		if (nfds)
			poll(fds, (nfds_t)nfds, connecting ? 0 : UPGRADE_TICK_MS);
	}
	/* what did not switch protocols keeps no connection */
	for (size_t i = 0; i < n; i++) {
		struct upgrade_priv *p = u[i].priv;

		if (p && u[i].st.code)
			upgrade_disconnect(p);
		if (p && p->out.data)
			memset(p->out.data, 0, p->out.len);
	}
	free(fds);
	kube_response_release(&scratch);
	return 0;
}
