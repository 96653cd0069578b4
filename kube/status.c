#include "kube/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"

void kube_status_clear(struct kube_status *st)
{
	st->code = 0;
	st->http_status = 0;
	st->reason[0] = '\0';
	st->message[0] = '\0';
}

int kube_status_code(long http_status, const char *reason, bool retry_after)
{
	if (http_status >= 200 && http_status < 300)
		return 0;
	switch (http_status) {
	case 400: return CADRE_EINVAL;
	case 401: return CADRE_EUNAUTHORIZED;
	case 403: return CADRE_EFORBIDDEN;
	case 404: return CADRE_ENOTFOUND;
	case 408: return CADRE_ETIMEDOUT;
	case 409:
		/*
		 * The API server answers both a taken name and a stale
		 * resourceVersion with 409; only the reason tells them apart,
		 * and callers treat them very differently (an AlreadyExists on
		 * a deterministic pod name is success).
		 */
		if (reason && !strcmp(reason, "AlreadyExists"))
			return CADRE_EEXIST;
		return CADRE_ECONFLICT;
	case 410: return CADRE_EGONE;
	case 413: return CADRE_ETOOBIG;
	case 422: return CADRE_EREJECTED;
	case 429: return CADRE_ETOOMANY;
	case 503:
		if (retry_after)
			return CADRE_EAGAIN;
		return CADRE_ESERVER;
	}
	if (http_status >= 500 && http_status < 600)
		return CADRE_ESERVER;
	return CADRE_EHTTP;
}

static void copy_field(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/* Take reason and message from a Status object, when it is one. */
static void take_status_fields(struct kube_status *st, const json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));

	if (!kind || strcmp(kind, "Status"))
		return;
	copy_field(st->reason, sizeof(st->reason),
		   json_string_value(json_object_get(obj, "reason")));
	copy_field(st->message, sizeof(st->message),
		   json_string_value(json_object_get(obj, "message")));
}

/* Whether a Status object names the cause reason (details.causes[].reason). */
static bool has_cause(const json_t *obj, const char *reason)
{
	const json_t *causes = json_object_get(json_object_get(obj, "details"), "causes");
	const json_t *c;
	size_t i;

	json_array_foreach(causes, i, c) {
		const char *r = json_string_value(json_object_get(c, "reason"));

		if (r && !strcmp(r, reason))
			return true;
	}
	return false;
}

/* Keep a readable prefix of a non-Status body: one line, printable only. */
static void message_from_body(struct kube_status *st, const char *body,
			      size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len && n + 1 < sizeof(st->message); i++) {
		unsigned char c = (unsigned char)body[i];

		st->message[n++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	while (n && st->message[n - 1] == ' ')
		n--;
	st->message[n] = '\0';
}

int kube_status_from_http(struct kube_status *st, long http_status,
			  const char *body, size_t len, bool retry_after)
{
	json_t *obj = NULL;

	kube_status_clear(st);
	st->http_status = http_status;
	if (body && len) {
		obj = json_loadb(body, len, 0, NULL);
		if (json_is_object(obj))
			take_status_fields(st, obj);
	}
	st->code = kube_status_code(http_status, st->reason, retry_after);
	if (st->code == CADRE_EFORBIDDEN && st->reason[0] && has_cause(obj, "NamespaceTerminating"))
		st->code = CADRE_ETERMINATING;
	if (st->code && !st->message[0]) {
		if (body && len && !json_is_object(obj))
			message_from_body(st, body, len);
		if (!st->message[0])
			snprintf(st->message, sizeof(st->message),
				 "the server answered HTTP %ld (%s)",
				 http_status, cadre_strerror(st->code));
	}
	json_decref(obj);
	return st->code;
}

int kube_status_from_object(struct kube_status *st, const json_t *status)
{
	json_t *code = json_object_get(status, "code");

	kube_status_clear(st);
	take_status_fields(st, status);
	if (!json_is_integer(code)) {
		st->code = CADRE_ESERVER;
		if (!st->message[0])
			copy_field(st->message, sizeof(st->message),
				   "the server sent an error without a status code");
		return st->code;
	}
	st->http_status = (long)json_integer_value(code);
	st->code = kube_status_code(st->http_status, st->reason, false);
	/* An ERROR event always means the watch is over, even with a 2xx code. */
	if (!st->code)
		st->code = CADRE_ESERVER;
	return st->code;
}

int kube_status_set(struct kube_status *st, int code, const char *fmt, ...)
{
	va_list ap;

	if (!st)
		return code;
	st->code = code;
	st->http_status = 0;
	st->reason[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(st->message, sizeof(st->message), fmt, ap);
	va_end(ap);
	/*
	 * One line, whatever the values it quotes hold (a kubeconfig's names
	 * and URLs are the user's text): control characters become spaces.
	 */
	for (char *c = st->message; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	return code;
}
