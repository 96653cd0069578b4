/*
 * http.h - the one place cadre speaks HTTP to the API server (the only file
 * that includes curl/curl.h is kube/http.c).
 *
 * A struct kube_http is a client for one API server. It is thread-safe:
 * any number of threads may call kube_http_request and kube_http_stream at
 * once. Inside, a request (kube_http_request) is handed to the client's
 * I/O thread, whose one libcurl multi handle multiplexes every request as
 * a stream of one kept-alive HTTP/2 connection where the server offers
 * HTTP/2 over TLS (parallel connections over HTTP/1.1); the caller blocks
 * until its transfer is done. A stream (kube_http_stream) runs on its
 * caller's thread with a connection of its own. DNS answers and TLS
 * sessions are shared through a locked CURLSH.
 *
 * Every call first takes a token from the client-side limiter (qps/burst,
 * defaults 100/200, as --kube-api-qps / --kube-api-burst): waiting for a
 * token is not an error. A 429 or a 503 carrying Retry-After is waited out
 * and retried up to max_retries times: a 429 was not processed, so any verb
 * retries; a 503 retries only for GET/HEAD/PUT/DELETE (idempotent). A 401
 * makes the config re-read its dynamic credentials (token file, exec
 * plugin) and, when there were any, retries once. Nothing else is retried
 * here: a 409 goes back to the caller, who re-reads.
 *
 * For tests: kube_config_new(httpd_url(server), &cfg) and kube_http_new(cfg,
 * NULL, &h) give a client for the fake server in unit/support/httpd.h.
 *
 * Errors: every non-2xx response becomes a CADRE_E* code through
 * kube/status.c, with the API server's Status reason and message kept in
 * the response. Transport failures are CADRE_EIO (connect, TLS, reset,
 * malformed response) or CADRE_ETIMEDOUT.
 */
#ifndef CADRE_KUBE_HTTP_H
#define CADRE_KUBE_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "kube/config.h"
#include "kube/ratelimit.h"
#include "kube/status.h"

struct kube_http;

struct kube_http_opts {
	double qps;                  /* requests per second; <= 0 = unlimited */
	int burst;                   /* bucket size */
	long connect_timeout_ms;     /* TCP + TLS handshake */
	long request_timeout_ms;     /* a whole kube_http_request (not streams) */
	size_t max_body;             /* response bodies past this fail with CADRE_ETOOBIG */
	int max_retries;             /* Retry-After retries per request */
	long max_retry_after_ms;     /* a longer Retry-After is waited this long */
	const char *user_agent;      /* copied; NULL = "cadre/<version>" */
	/*
	 * The liveness check of the requests' connection: when requests have
	 * waited this long for an answer and nothing at all arrived meanwhile, a
	 * GET /version goes on the same connection; when that has no answer in
	 * liveness_timeout_ms, the connection is taken for dead (a peer that
	 * vanished without closing it, a proxy that stopped forwarding): the
	 * requests on it end (an idempotent one is sent once more, on a new
	 * connection; another ends with CADRE_ETIMEDOUT) and the next ones open
	 * a new connection. client-go pings an HTTP/2 connection after 30 s
	 * without a frame; 0 turns the check off.
	 */
	long liveness_idle_ms;
	long liveness_timeout_ms;
	const struct kube_ratelimit_clock *clock; /* copied; NULL = real. Paces the
					  limiter and Retry-After waits */
};

/*
 * Defaults: qps 100, burst 200, connect 10 s, request 60 s, max_body 64 MiB,
 * max_retries 5, max_retry_after 60 s, liveness check after 15 s without an
 * answer with 10 s for it, real clock.
 */
void kube_http_opts_init(struct kube_http_opts *opts);

/*
 * The outcome of one request. Initialise with kube_response_init, free the
 * body with kube_response_release; one response may be reused for several
 * requests (each request resets it).
 */
struct kube_response {
	long status;                 /* HTTP status of the last attempt; 0 = none */
	struct buf body;             /* the body (any status), capped at max_body */
	struct kube_status error;    /* code 0 on 2xx; else the code, reason, message */
	int attempts;                /* how many times the request was sent */
};

void kube_response_init(struct kube_response *resp);
void kube_response_release(struct kube_response *resp);

/*
 * A client for cfg, which is borrowed: it must outlive the client. opts may
 * be NULL for the defaults; it is copied. Checks that the server URL is
 * http:// or https://. Returns 0 and *out, or CADRE_EINVAL / CADRE_ENOMEM
 * (with *out NULL).
 */
int kube_http_new(struct kube_config *cfg, const struct kube_http_opts *opts,
		  struct kube_http **out);

/* Free the client. No call may be in progress. NULL is a no-op. */
void kube_http_free(struct kube_http *h);

/*
 * Cancel (on true) or allow again (on false) the client's requests, from any
 * thread. While cancelled, every request in flight ends at once, one waiting
 * for the rate limiter or a Retry-After stops waiting, and a new one is not
 * sent: each returns CADRE_ECANCELED. For a shutdown that must not wait for
 * a busy server (a gang's writes queued behind the QPS limit take seconds);
 * what a cancelled write did is what a crash leaves, which the reconcilers
 * already see through. Streams are stopped by their own flags instead.
 */
void kube_http_cancel(struct kube_http *h, bool on);

/*
 * The timeout of every request sent from now on (ms; 0 or less: back to
 * opts.request_timeout_ms). Thread-safe; for a client whose caller bounds
 * each request by a deadline of its own (the leader elector's renewals).
 */
void kube_http_set_timeout(struct kube_http *h, long request_timeout_ms);

/* The config the client was made with (borrowed). */
struct kube_config *kube_http_config(struct kube_http *h);

/*
 * Send method to path_and_query (starting with '/'; the server URL is
 * prepended). body may be NULL (body_len 0); content_type may be NULL
 * (defaults to application/json when there is a body). Accepts JSON.
 * resp must be initialised; it is reset first and then holds the result of
 * the last attempt.
 * Returns 0 on 2xx; otherwise resp->error.code: the mapped status code,
 * CADRE_EIO / CADRE_ETIMEDOUT for transport failures, CADRE_ETOOBIG when the
 * body passes max_body, CADRE_EINVAL / CADRE_ENOMEM.
 */
int kube_http_request(struct kube_http *h, const char *method,
		      const char *path_and_query, const char *content_type,
		      const char *body, size_t body_len,
		      struct kube_response *resp);

/*
 * kube_http_request with the Accept header's value accept (NULL:
 * application/json), for the API server's other representations of the
 * same object: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
 * lists only the objects' metadata.
 */
int kube_http_request_accept(struct kube_http *h, const char *method,
			     const char *path_and_query, const char *accept,
			     const char *content_type, const char *body, size_t body_len,
			     struct kube_response *resp);

struct kube_stream_opts {
	/*
	 * Abandon the connection after this long without a byte (header or
	 * body; 0 = no idle limit), counted from when the connection is up
	 * (before that, the connect timeout applies). Checked every 100 ms on the
	 * client's clock (kube_http_opts.clock: give a test that wants the idle
	 * timeout to fire the real clock), so it fires for a half-open
	 * connection that sends nothing at all.
	 */
	long idle_timeout_ms;
	/*
	 * Called with body bytes as they arrive, at arbitrary boundaries (a
	 * chunk may end mid-line or mid-UTF-8 sequence), only for 2xx
	 * responses. Return 0 to go on; a negative CADRE_E* code stops the
	 * stream and is what kube_http_stream returns. Runs on the caller's
	 * thread. data is borrowed for the call.
	 */
	int (*on_data)(void *ctx, const char *data, size_t len);
	void *ctx;
	/*
	 * Set from any thread to end the stream: seen within ~100 ms (the
	 * transfer is driven in slices that long), and once it is set on_data
	 * is not called again, whatever arrives meanwhile. May be NULL.
	 */
	const atomic_bool *stop;
	/*
	 * Optional: receives the HTTP status and, on non-2xx, the body (capped
	 * at max_body) and the mapped error. May be NULL.
	 */
	struct kube_response *resp;
};

/*
 * GET path_and_query and deliver the body to opts->on_data as it arrives
 * (for ?watch=1). No overall timeout; connect timeout and the rate limiter
 * apply. Not retried (the reflector decides when to come back). Returns:
 *   0                the server ended the response cleanly
 *   CADRE_ETIMEDOUT  idle_timeout_ms passed with no bytes
 *   CADRE_ECANCELED  *stop was set
 *   on_data's code   when the callback stopped it
 *   the mapped code  for a non-2xx status (details in opts->resp)
 *   CADRE_EIO        transport failure, including a torn chunked body
 */
int kube_http_stream(struct kube_http *h, const char *path_and_query,
		     const struct kube_stream_opts *opts);

/*
 * Connections upgraded from HTTP/1.1 to a protocol of their own (pods/exec's
 * WebSocket: kube/podexec.c speaks it), made as every request is: through
 * the same proxy, with the same TLS (CA, client certificate and key,
 * tls-server-name), bearer token and impersonation headers, so that what
 * works for a GET works for an exec. The request has no size limit of its
 * own (a long command line, a large token): the API server's is 1 MiB.
 */
struct kube_upgrade {
	/* Set by the caller. */
	const char *path_and_query;  /* "/api/v1/namespaces/ns/pods/p/exec?..." */
	const char *headers;         /* the protocol's own header lines, each ending "\r\n" */
	/* Set by kube_http_upgrade. */
	struct kube_status st;       /* code 0: the server switched protocols (101) */
	char *head;                  /* that answer's status line and headers, NUL-terminated */
	struct buf early;            /* bytes that came after the head: the protocol's first */
	void *priv;                  /* http.c's */
};

/*
 * Connect u[0..n) at once, send each one's request (GET path_and_query with
 * Host, User-Agent, the credentials, impersonation and u->headers) and read
 * the answer's head. Per upgrade, st says how it went: 0 for 101; the mapped
 * code (with the Status's reason and message, as for any request) for
 * another answer; CADRE_EIO / CADRE_ETIMEDOUT when there was none within
 * timeout_ms (0: the client's request timeout; connecting has the connect
 * timeout within it), CADRE_ECANCELED when *stop
 * (may be NULL) was set. A 401 refreshes dynamic credentials (token file,
 * exec plugin) and tries once more, as a request does. Returns 0, or
 * CADRE_ENOMEM / CADRE_EINVAL (n is 0) with nothing connected.
 * Release every u with kube_upgrade_release, whatever st says.
 */
int kube_http_upgrade(struct kube_http *h, struct kube_upgrade *u, size_t n, long timeout_ms,
		      const atomic_bool *stop);

/* The socket to poll for an upgraded connection; -1 when it has none. */
int kube_upgrade_fd(const struct kube_upgrade *u);

/*
 * Send or receive bytes of an upgraded connection without waiting (TLS is
 * done inside). *done is how many; 0 or CADRE_EAGAIN (nothing could move
 * now: poll the fd), CADRE_EIO. A receive of 0 bytes that returns 0 means
 * the peer closed the connection. Bytes TLS has already decrypted do not
 * wake a poll: receive until CADRE_EAGAIN before polling.
 */
int kube_upgrade_send(struct kube_upgrade *u, const void *data, size_t len, size_t *done);
int kube_upgrade_recv(struct kube_upgrade *u, void *data, size_t size, size_t *done);

/* Close and free what kube_http_upgrade made of u (safe on any u it was given). */
void kube_upgrade_release(struct kube_upgrade *u);

/*
 * The value of header name (case-insensitive) in a head, trimmed, into
 * out; false when absent or longer than size.
 */
bool kube_upgrade_header(const char *head, const char *name, char *out, size_t size);

/*
 * Request counts by method and HTTP status, for
 * cadre_api_requests_total{verb,code}. code is the HTTP status, or 0 for
 * requests that got no response. Each attempt counts (a retried 429 counts
 * once as 429 and once as the final status).
 */
struct kube_http_stat {
	char verb[16];               /* "GET", "POST", ... ("WATCH" for streams) */
	long code;
	uint64_t count;
};

/*
 * Copy up to max entries into out (in no particular order) and return how
 * many entries exist (which may be more than max). Thread-safe.
 */
size_t kube_http_stats(struct kube_http *h, struct kube_http_stat *out,
		       size_t max);

#endif
