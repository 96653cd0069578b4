/*
 * status.h - what an API call came to: an HTTP status and the API server's
 * Status body turned into one CADRE_E* code, with the reason and message
 * kept for logs and for users.
 *
 * The mapping from HTTP status to error code lives in exactly one function,
 * kube_status_code(); everything else (responses, watch ERROR events, the
 * typed helpers) goes through it, so "what does a 409 mean" has one answer:
 *
 *   400 -> CADRE_EINVAL          401 -> CADRE_EUNAUTHORIZED
 *   403 -> CADRE_EFORBIDDEN      404 -> CADRE_ENOTFOUND
 *   408 -> CADRE_ETIMEDOUT       409 + reason AlreadyExists -> CADRE_EEXIST
 *   409 otherwise -> CADRE_ECONFLICT
 *   410 -> CADRE_EGONE           413 -> CADRE_ETOOBIG
 *   422 -> CADRE_EREJECTED        429 -> CADRE_ETOOMANY
 *   503 with Retry-After -> CADRE_EAGAIN (the server asked us to come back)
 *   other 5xx -> CADRE_ESERVER   other non-2xx -> CADRE_EHTTP
 *   2xx -> 0
 *
 * Transport failures never reach this table: kube/http.c reports them as
 * CADRE_EIO or CADRE_ETIMEDOUT through kube_status_set().
 *
 * A struct kube_status is plain data (fixed arrays, no allocation): copy it,
 * keep it on the stack, zero it with kube_status_clear(). Not shared between
 * threads; each call fills the one its caller passes.
 */
#ifndef CADRE_KUBE_STATUS_H
#define CADRE_KUBE_STATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct kube_status {
	int code;           /* 0 or a negative CADRE_E* code */
	long http_status;   /* the HTTP status, 0 when no response arrived */
	char reason[64];    /* Status.reason ("AlreadyExists", "Conflict"), or "" */
	char message[512];  /* Status.message, or what went wrong locally; "" when 0 */
};

/* Reset to success: code 0, status 0, empty reason and message. */
void kube_status_clear(struct kube_status *st);

/*
 * The one HTTP-status-to-error mapping (table above). reason is the Status
 * reason or NULL; retry_after says whether a Retry-After header came with the
 * response. Pure and thread-safe.
 */
int kube_status_code(long http_status, const char *reason, bool retry_after);

/*
 * Fill st from a response: its HTTP status and body (which may be a
 * metav1.Status JSON object, anything else, or empty). reason and message
 * come from the Status when it parses; otherwise the message is the start of
 * the body, or the HTTP status line's meaning when there is no body. body
 * may be NULL when len is 0. Returns st->code (0 for 2xx).
 */
int kube_status_from_http(struct kube_status *st, long http_status,
			  const char *body, size_t len, bool retry_after);

/*
 * Fill st from a metav1.Status object (borrowed; not modified), as carried
 * by a watch ERROR event: its "code" field is the HTTP status to map. A
 * Status without a code maps to CADRE_ESERVER. Returns st->code.
 */
int kube_status_from_object(struct kube_status *st, const json_t *status);

/*
 * Record an error that did not come from the API server (transport, local
 * parsing): sets code, clears reason and http_status, formats the message,
 * which is kept to one line (control characters become spaces).
 * Returns code, so callers can write `return kube_status_set(st, ...)`.
 * st may be NULL, in which case only code is returned.
 */
int kube_status_set(struct kube_status *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
