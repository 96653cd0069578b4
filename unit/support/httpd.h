/*
 * httpd.h - a fake HTTP/1.1 server on 127.0.0.1 for unit tests.
 *
 * It listens on an ephemeral port, runs in its own threads (one accepting,
 * one per connection), and answers each request with the next response of
 * a SCRIPT, in order, across all connections; when the script is empty, a
 * handler callback (if set) answers; otherwise a 500 with body
 * "httpd: script exhausted" is sent, so a test that issued one request too
 * many sees it. Every request is recorded (method, target, headers, body)
 * for assertions.
 *
 * A response can be:
 *  - a plain body (Content-Length),
 *  - a list of chunks sent with chunked transfer-encoding, each after an
 *    optional delay (a watch stream),
 *  - with a silent pause (a half-open server) of hold_ms, or until the
 *    client closes or the server stops: with chunks, after the last chunk
 *    and before the terminating zero chunk; with a plain body, after the
 *    headers and before the body,
 *  - torn: the last chunk's size line promises more bytes than are sent and
 *    the connection is closed (a body cut mid-chunk).
 * Connections are keep-alive unless a response says close, is torn, or
 * holds; the client can reuse them.
 *
 *   struct httpd *s;
 *   httpd_new(&s);
 *   httpd_push(s, &(struct httpd_response){ .status = 200,
 *              .body = "{\"kind\":\"Pod\"}" });
 *   ... point a client at httpd_url(s) ...
 *   cr_assert_str_eq(httpd_request_at(s, 0)->target, "/api/v1/pods");
 *   httpd_free(s);
 *
 * Thread-safety: every function may be called from the test's threads
 * while the server runs. Responses are deep-copied when pushed (or when a
 * handler returns), so they may be built from stack data.
 */
#ifndef CADRE_UNIT_HTTPD_H
#define CADRE_UNIT_HTTPD_H

#include <stdbool.h>
#include <stddef.h>

struct httpd;

struct httpd_chunk {
	const char *data;   /* bytes of one chunk */
	size_t len;         /* 0 = strlen(data) */
	int delay_ms;       /* wait this long before sending it */
};

struct httpd_response {
	int status;                      /* 200, 404, ... (reason phrase is generic) */
	const char *headers;             /* extra header lines, each ending "\r\n";
					    NULL = none. Content-Type defaults to
					    application/json unless given here */
	const char *body;                /* plain body; NULL = empty. Ignored when
					    chunks is set */
	void *owned;                     /* a handler's: free()d once the response
					    is copied (e.g. the malloc'd body) */
	const struct httpd_chunk *chunks;/* chunked body, nchunks entries */
	size_t nchunks;
	int delay_ms;                    /* wait before sending the status line */
	bool torn;                       /* announce 16 bytes more in the last
					    chunk than are sent, then close */
	int hold_ms;                     /* stay silent this long (see above);
					    -1 = until the client closes or
					    httpd_free; 0 = no pause */
	bool close;                      /* close the connection after this response */
};

/* One recorded request. Strings are NUL-terminated and owned by the server. */
struct httpd_request {
	char *method;       /* "GET" */
	char *target;       /* path and query, as sent: "/api/v1/pods?limit=500" */
	char **names;       /* header names as sent, nheaders of them */
	char **values;      /* header values, leading/trailing blanks trimmed */
	size_t nheaders;
	char *body;         /* de-chunked body ("" when none) */
	size_t body_len;
	int connection;     /* 0, 1, ... in accept order: equal numbers = reused connection */
};

/*
 * Answer req (borrowed) by filling resp (zeroed before the call). Runs on a
 * connection thread; the response is copied after it returns, so the text
 * resp points to must outlive the call: static, or _Thread_local when it is
 * made per request (never the handler's own stack).
 */
typedef void (*httpd_handler_fn)(void *ctx, const struct httpd_request *req,
				 struct httpd_response *resp);

/* Start a server. Returns 0 or a negative CADRE_E* code (socket errors: CADRE_EIO). */
int httpd_new(struct httpd **out);

/*
 * Stop: close the listener and every connection (ending holds and delays
 * at once), join all threads, free everything. NULL is a no-op.
 */
void httpd_free(struct httpd *s);

/* "http://127.0.0.1:<port>" (borrowed, valid until httpd_free). */
const char *httpd_url(struct httpd *s);
int httpd_port(struct httpd *s);

/* Append a response to the script (deep copy). 0 or CADRE_ENOMEM. */
int httpd_push(struct httpd *s, const struct httpd_response *resp);

/* Answer with handler once the script is empty (NULL to unset). */
void httpd_set_handler(struct httpd *s, httpd_handler_fn handler, void *ctx);

/* How many requests have been received so far. */
size_t httpd_request_count(struct httpd *s);

/*
 * Request i (0 = first received), or NULL when there is no such request.
 * Borrowed; stays valid until httpd_free (requests are never moved).
 */
const struct httpd_request *httpd_request_at(struct httpd *s, size_t i);

/* The value of header name (case-insensitive) in req, or NULL. Borrowed. */
const char *httpd_request_header(const struct httpd_request *req,
				 const char *name);

/*
 * Block until at least n requests have been received or timeout_ms passes.
 * Returns true when they have.
 */
bool httpd_wait_requests(struct httpd *s, size_t n, int timeout_ms);

/* Number of connections accepted so far. */
int httpd_connection_count(struct httpd *s);

#endif
