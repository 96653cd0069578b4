/*
 * err.h - the error codes every cadre function returns.
 *
 * Functions return 0 on success or one of the negative codes below. An HTTP
 * status becomes one of these in exactly one place (kube/status.c); the
 * reason and message the API server gave are kept beside it, not in it.
 */
#ifndef CADRE_ERR_H
#define CADRE_ERR_H

enum cadre_err {
	CADRE_OK = 0,
	CADRE_ENOMEM = -1,        /* allocation failed */
	CADRE_EINVAL = -2,        /* bad argument or unusable input from the caller */
	CADRE_EPARSE = -3,        /* malformed JSON, YAML, quantity, ... */
	CADRE_ENOTFOUND = -4,     /* 404, or no such key in a store */
	CADRE_ECONFLICT = -5,     /* 409 Conflict: stale resourceVersion */
	CADRE_EEXIST = -6,        /* 409 AlreadyExists */
	CADRE_EGONE = -7,         /* 410 Gone: resourceVersion too old */
	/*
	 * Not now: nothing is wrong, and the same call may succeed later (a 503
	 * with Retry-After, a Lease another holder still owns, a reconcile to
	 * requeue, a cluster that cannot take a pod yet). Never "dropped".
	 */
	CADRE_EAGAIN = -8,
	CADRE_ETOOMANY = -9,      /* 429: throttled by the server */
	CADRE_EUNAUTHORIZED = -10, /* 401 */
	CADRE_EFORBIDDEN = -11,   /* 403 */
	CADRE_EREJECTED = -12,    /* 422: the server rejected the object */
	CADRE_ETIMEDOUT = -13,    /* deadline passed, or an idle connection */
	CADRE_EIO = -14,          /* transport error: connect, TLS, reset */
	CADRE_ESERVER = -15,      /* 5xx other than 503 with Retry-After */
	CADRE_ETOOBIG = -16,      /* input over its cap, or a full queue: dropped */
	CADRE_ECANCELED = -17,    /* the operation was stopped by shutdown */
	CADRE_EHTTP = -18,        /* any other non-2xx status */
	/*
	 * 403 with the cause NamespaceTerminating: the namespace is being
	 * deleted and takes nothing new. Its objects go with it; there is
	 * nothing to retry and nothing to report.
	 */
	CADRE_ETERMINATING = -19,
};

/* A static, human-readable name for an error code; never NULL. */
const char *cadre_strerror(int err);

#endif
