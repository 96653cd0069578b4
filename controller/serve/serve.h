/*
 * serve.h - the controller's HTTP endpoints on libwebsockets:
 * /metrics (Prometheus text), /healthz and /readyz.
 *
 * One service thread owns the libwebsockets context; handlers only read the
 * registry (thread-safe) and call the ready/healthy callbacks, which must be
 * thread-safe and must not block. The metrics and health addresses may be
 * the same; either may be "0" (or NULL) to serve nothing there. Every path
 * is served on every address that is enabled.
 */
#ifndef CADRE_SERVE_H
#define CADRE_SERVE_H

#include <stdbool.h>

#include "controller/serve/metrics.h"

struct serve_opts {
	const char *metrics_addr;   /* "host:port", ":port", or "0" */
	const char *health_addr;
	struct registry *registry;  /* borrowed; outlives the server */
	bool (*ready)(void *ctx);   /* /readyz: 200 when true, else 503 */
	bool (*healthy)(void *ctx); /* /healthz: 200 when true (NULL: always) */
	void *ctx;
};

struct server;

/*
 * Bind the addresses and start the service thread. Returns 0, CADRE_EINVAL
 * for an address that does not parse, CADRE_EIO when a port cannot be bound,
 * CADRE_ENOMEM. On error nothing is left running.
 */
int serve_start(const struct serve_opts *opts, struct server **out);

/* The port actually bound for the metrics (which = 0) or health (1)
 * address; useful with port 0. -1 when that address is disabled. */
int serve_port(const struct server *srv, int which);

/* Stop the thread, close the sockets and free everything. NULL is a no-op. */
void serve_stop(struct server *srv);

/* Split "host:port" or ":port" (host may be "[::1]"). 0 or CADRE_EINVAL;
 * *host is a new string or NULL for any address. */
int serve_parse_addr(const char *addr, char **host, int *port);

#endif
