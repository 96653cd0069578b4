/*
 * events.h - an event recorder: Kubernetes Events about cadre's objects,
 * sent in the background.
 *
 * Reconcilers record what they decide ("Admitted", "PodFailed", ...) as
 * events.k8s.io/v1 Events that `kubectl describe` and `kubectl events`
 * show. Recording must never slow a reconciler down or flood the API
 * server, so, as client-go's recorder does:
 *
 *   - events_record() only queues: a bounded queue, emptied by one sender
 *     thread. When the queue is full the event is dropped and counted; a
 *     slow API server costs events, never reconcile time.
 *   - Identical events (same object, type, reason, action and note) are
 *     one Event with a series: the first is created, each repeat PATCHes
 *     series.count and series.lastObservedTime. A cache of the most recent
 *     4096 distinct events remembers what was sent (client-go's LRU size).
 *   - A token bucket per object (burst 25, then one per 5 minutes, as
 *     client-go's EventSourceObjectSpamFilter) filters an object that
 *     produces events without pause; filtered events are counted.
 *
 * Sending is best effort: a failed create or patch is logged and counted,
 * not retried (kube/http.c already waits out 429s). A patch of an Event the
 * server has since expired (404) creates it again.
 *
 * Threads: events_record() and the counters may be called from any thread;
 * events_start/stop/free from one owner.
 */
#ifndef CADRE_KUBE_EVENTS_H
#define CADRE_KUBE_EVENTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/http.h"

struct events;

enum events_type { EVENTS_NORMAL, EVENTS_WARNING };

/* The API server refuses a longer note; longer ones are cut. */
#define EVENTS_MAX_NOTE 1024

struct events_options {
	const char *reporting_controller;  /* required: who reports, "<domain>/<name>" */
	const char *reporting_instance;    /* NULL: the host name */
	size_t queue_len;                  /* 0: 1000 */
	size_t cache_len;                  /* 0: 4096 */
	unsigned spam_burst;               /* 0: 25 */
	double spam_qps;                   /* 0: 1/300 */
	/* Monotonic milliseconds for the spam filter (NULL: CLOCK_MONOTONIC). */
	uint64_t (*now_ms)(void *arg);
	void *clock_arg;
};

/*
 * A recorder sending through http (borrowed; must outlive it); opts is
 * copied and must name the reporting controller. Events may be recorded before events_start(); they
 * wait in the queue. Returns 0 and *out, or CADRE_EINVAL / CADRE_ENOMEM.
 */
int events_new(struct kube_http *http, const struct events_options *opts,
	       struct events **out);

/* Start the sender thread. 0, CADRE_EINVAL if started, CADRE_ENOMEM. */
int events_start(struct events *e);

/*
 * Wait until every queued event has been sent (or failed), for at most
 * timeout_ms. 0, or CADRE_ETIMEDOUT. For tests and graceful shutdown.
 */
int events_flush(struct events *e, long timeout_ms);

/*
 * Stop the sender after the event in flight; events still queued are
 * dropped (and counted). Call events_flush() first to send them.
 */
void events_stop(struct events *e);

/* Stop, then free. NULL is a no-op. */
void events_free(struct events *e);

/*
 * Queue an event about regarding (borrowed; read now: apiVersion, kind,
 * metadata.name, .namespace, .uid). reason is CamelCase ("Admitted"),
 * action what cadre did or is doing ("Admit"), the note is formatted from
 * fmt. Never blocks on the network. Returns 0; CADRE_ETOOBIG when the queue
 * is full and the event was dropped; CADRE_EINVAL (no name, no reason or
 * action); CADRE_ENOMEM. Callers may ignore the result: events are
 * advisory.
 */
int events_record(struct events *e, const json_t *regarding, enum events_type type,
		  const char *reason, const char *action, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Counters, for logs and metrics. */
struct events_stats {
	uint64_t created;     /* Events created */
	uint64_t patched;     /* series updates sent */
	uint64_t dropped;     /* queue full, or still queued at stop */
	uint64_t filtered;    /* stopped by the per-object spam filter */
	uint64_t failed;      /* the API refused or could not be reached */
};

void events_stats(struct events *e, struct events_stats *out);

#endif
