/*
 * reflector.h - keep a store in step with the API server: list, then watch.
 *
 * A reflector owns one thread that runs client-go's ListAndWatch:
 *
 *   LIST     page through the collection (limit 500), collect every item
 *            into a batch and commit it as the store's whole content: new
 *            objects are adds, changed ones updates, and objects that are
 *            gone (deleted while we were not watching) deletes. The list's
 *            resourceVersion is where the watch starts. The first commit
 *            makes the reflector "synced".
 *   WATCH    GET ?watch=1&resourceVersion=<rv>&allowWatchBookmarks=true
 *            &timeoutSeconds=<5..10 min, random> and apply each event to
 *            the store, remembering each event's resourceVersion (BOOKMARK
 *            events only move it). resourceVersions are opaque strings:
 *            never compared, only handed back.
 *   RESTART  when the watch ends, decide how to go on:
 *            - the server closed it (timeoutSeconds): watch again at once
 *              from the last resourceVersion;
 *            - 410 Gone (as the HTTP status or in an ERROR event), or any
 *              other ERROR event: the resourceVersion is no good, so LIST
 *              again (once) and watch from the new list; at once, unless
 *              the refused watch was the first from a fresh list and ended
 *              within a second (then after the backoff, so that a server
 *              refusing every version cannot make us spin);
 *            - a dropped or torn connection, a malformed line, no byte for
 *              idle_timeout_ms (a half-open connection), another HTTP
 *              error: wait a jittered backoff (800 ms doubling to 30 s,
 *              client-go) and watch again from the last resourceVersion.
 *            Every restart is counted by reason for
 *            cadre_watch_restarts_total{resource,reason}.
 *
 * Handlers registered on the store run on the reflector's thread.
 *
 * Threads: reflector_start() starts the thread; every other function may be
 * called from any thread. reflector_stop() sets a flag that the HTTP stream
 * and every wait look at (within ~100 ms) and joins the thread.
 */
#ifndef CADRE_KUBE_REFLECTOR_H
#define CADRE_KUBE_REFLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/http.h"
#include "kube/resource.h"
#include "kube/store.h"

struct reflector;

/* Why a watch was restarted (the metric's reason label). */
enum reflector_reason {
	REFLECTOR_CLOSED,        /* "closed": the server ended the watch normally */
	REFLECTOR_GONE,          /* "gone": 410, the resourceVersion expired */
	REFLECTOR_ERROR_EVENT,   /* "error_event": an ERROR event other than 410 */
	REFLECTOR_DISCONNECT,    /* "disconnect": connection refused, reset, torn */
	REFLECTOR_IDLE,          /* "idle_timeout": no byte for idle_timeout_ms */
	REFLECTOR_BAD_STREAM,    /* "bad_stream": malformed or over-long line */
	REFLECTOR_HTTP_ERROR,    /* "http_error": the watch request was refused */
	REFLECTOR_LIST_FAILED,   /* "list_failed": a list failed and is retried */
	REFLECTOR_REASON_COUNT
};

/* The label value for reason; never NULL. */
const char *reflector_reason_name(enum reflector_reason reason);

/* The pod reflector's field selector: non-terminal pods only (docs/design.md 3.1). */
#define REFLECTOR_NON_TERMINAL_PODS "status.phase!=Succeeded,status.phase!=Failed"

struct reflector_options {
	const struct kube_resource *resource;  /* borrowed; must outlive the reflector */
	const char *namespace;       /* NULL: all namespaces. Copied, like the selectors */
	const char *label_selector;  /* NULL: none */
	const char *field_selector;  /* NULL: none */
	long page_size;              /* 0: 500 (client-go's pager) */
	/*
	 * A watch with no byte for this long is abandoned (0: 90 s, about
	 * twice the interval at which the API server sends bookmarks and
	 * keep-alives, so a healthy quiet watch never trips it).
	 */
	long idle_timeout_ms;
	/* timeoutSeconds is random in [min, 2 * min] (0: 300, client-go). */
	long min_watch_timeout_s;
	/* Backoff before re-watching after a failure (0: 800 ms and 30 s). */
	uint64_t backoff_initial_ms;
	uint64_t backoff_max_ms;
	size_t max_line;             /* watch line cap (0: 16 MiB) */
};

/*
 * A reflector filling store (borrowed; it must outlive the reflector) from
 * http (borrowed, likewise). opts is copied. Nothing runs until
 * reflector_start(). Returns 0 and *out, or CADRE_EINVAL / CADRE_ENOMEM.
 */
int reflector_new(struct kube_http *http, struct store *store,
		  const struct reflector_options *opts, struct reflector **out);

/* Start the thread. 0, CADRE_EINVAL if already started, or CADRE_ENOMEM. */
int reflector_start(struct reflector *r);

/*
 * Stop the thread and wait for it; a no-op when it is not running. Safe to
 * call from any thread but the reflector's own (from a handler it would
 * deadlock).
 */
void reflector_stop(struct reflector *r);

/* Stop, then free. NULL is a no-op. */
void reflector_free(struct reflector *r);

/* Whether the first list has been committed to the store. */
bool reflector_synced(struct reflector *r);

/*
 * Wait until synced, for at most timeout_ms. 0, CADRE_ETIMEDOUT, or
 * CADRE_ECANCELED when the reflector was stopped.
 */
int reflector_wait_synced(struct reflector *r, long timeout_ms);

/*
 * The last resourceVersion seen (from a list, an event or a bookmark), as
 * a malloc'd copy for the caller to free; NULL before the first list or
 * when out of memory.
 */
char *reflector_resource_version(struct reflector *r);

/* How many times the watch was restarted for reason. */
uint64_t reflector_restarts(struct reflector *r, enum reflector_reason reason);

/* How many lists were attempted (the first one included). */
uint64_t reflector_lists(struct reflector *r);

/* The resource's plural ("pods"), for the metric's resource label. */
const char *reflector_resource_name(struct reflector *r);

#endif
