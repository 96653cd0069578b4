/*
 * dash_server.h - internal to the dashboard's server files (dash_server.c,
 * dash_http.c, dash_logs.c): the server's state and a connection's.
 *
 * Threads: everything here but the marked fields is touched only on the
 * service thread (the command's). Store handlers set `dirty`; the health
 * thread sets `connected`; log threads append to their stream under
 * log_lock.
 */
#ifndef CADRE_CLI_DASH_SERVER_H
#define CADRE_CLI_DASH_SERVER_H

#include "cli/dashboard/dash.h"

#include <libwebsockets.h>
#include <pthread.h>
#include <stdatomic.h>

#include "base/buf.h"

/* A slow page past this many unsent messages is closed; it reconnects for a snapshot. */
#define DASH_MAX_QUEUED 256
/* Ranks whose logs one page follows at once. */
#define DASH_MAX_LOG_RANKS 16

struct dash_msg {
	struct dash_msg *next;
	size_t len;
	char data[];  /* LWS_PRE bytes, then the text */
};

/* One followed pod log: a thread streaming pods/<pod>/log?follow=true. */
struct dash_log {
	struct dash_server *srv;
	char ns[64], pod[254];
	int rank;
	pthread_t thread;
	atomic_bool stop, done;
	struct buf pending;   /* under srv->log_lock: whole lines not yet sent */
	struct buf partial;   /* the log thread's unfinished line */
	char error[800];      /* under srv->log_lock: why the stream ended, once */
};

struct dash_conn {
	struct lws *wsi;
	struct dash_server *srv;
	struct dash_conn *next;
	struct dash_msg *head, *tail;
	size_t queued;
	bool overflow, greeted;
	char watch[320];      /* the job whose page is open, "" for none */
	json_t *last_detail;  /* what it was last sent of that job */
	struct dash_log *logs[DASH_MAX_LOG_RANKS];
};

/*
 * An action on a job (cancel, suspend, resume) in flight: its API call runs
 * on a thread of its own, so the service thread (the pushes, every other
 * request) never waits for the API server. The thread fills the answer and
 * wakes the service thread, which sends it on the connection that asked, if
 * it is still open, and joins the thread.
 */
struct dash_action {
	struct dash_server *srv;
	struct lws *wsi;          /* service thread: the asking connection; NULL once it closed */
	char ns[64], name[254], verb[16];
	pthread_t thread;
	atomic_bool done;         /* status and answer are set */
	unsigned status;
	char *answer;             /* JSON */
	struct dash_action *next; /* srv->actions */
};

/* An HTTP transaction's answer, sent in pieces. */
struct dash_http {
	char *body;
	size_t len, sent;
	struct dash_action *action;  /* an action this transaction waits for */
};

struct dash_server {
	struct dash_server_opts opts;
	struct dash_auth auth;    /* service thread */
	struct dash_names names;  /* what Host may name */
	char address[64];
	char scope[64];
	int port;
	struct lws_context *ctx;
	lws_sorted_usec_list_t sul;
	struct dash_conn *conns;
	atomic_bool dirty;       /* set by store handlers */
	atomic_bool connected;   /* set by the health thread */
	atomic_bool stopping;
	bool sent_connected;
	struct dash_health health_state;  /* the health thread's, from dash_server_start */
	pthread_t health;
	bool health_started;
	pthread_mutex_t log_lock;
	/*
	 * Under phase_lock (written by the jobs' reflector thread): each job's
	 * phases in the order the watch delivered them, key -> ["Queued",
	 * "Starting", ...], so a phase that lasted less than a push still shows.
	 */
	pthread_mutex_t phase_lock;
	json_t *phases;
	/* what was last pushed: rows by key, the queue, the GPU nodes */
	json_t *job_map, *queue, *gpu_nodes, *topology;
	struct dash_history history;
	time_t last_sample;
	struct dash_action *actions;  /* service thread: in flight, or done and not yet joined */
};

/* Send the answers of actions that are done; join those whose answer is sent (service thread). */
void dash_actions_reap(struct dash_server *srv, bool all);

/* Queue msg (a reference it takes) for c. 0, CADRE_ENOMEM, CADRE_ETOOBIG (c closes). */
int dash_conn_send(struct dash_conn *c, json_t *msg);

/* libwebsockets' callback for HTTP (dash_http.c). */
int dash_http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
		       void *in, size_t len);

/*
 * Why the request on wsi is refused, or NULL: Host first, then (when
 * need_origin, or when the request has one) Origin, then the cookie.
 */
const char *dash_http_refusal(struct dash_server *srv, struct lws *wsi, bool need_origin);

/* The Events about tj (a NEW array; empty when none). */
json_t *dash_events_of(struct dash_server *srv, const json_t *tj);

/* Index core/v1 Events by "namespace/name" of their involvedObject. */
int dash_index_event_object(const json_t *ev, json_t *values, void *arg);

/* Follow the logs of every rank of pods (a job's, borrowed) not followed yet. */
void dash_logs_follow(struct dash_conn *c, const json_t *pods);

/* Stop and join c's log threads. */
void dash_logs_stop(struct dash_conn *c);

/* Send every connection the log lines its threads have read. */
void dash_logs_drain(struct dash_server *srv);

/* Wake the service thread (from any thread). */
void dash_server_wake(struct dash_server *srv);

#endif
