/*
 * podexec.h - a command in a pod's container through the API server's
 * pods/<name>/exec subresource, over WebSocket (libwebsockets), as kubectl
 * exec does since Kubernetes 1.30.
 *
 * The subprotocol is v5.channel.k8s.io, else v4.channel.k8s.io when the
 * server offers only that. Every WebSocket message is binary; its first
 * byte is the channel:
 *   0 stdin (client to server)      3 the Status of the command (JSON),
 *   1 stdout                          sent once before the server closes
 *   2 stderr                        4 terminal size (client to server, JSON
 *   255 close a channel (v5 only:     {"Width":w,"Height":h})
 *       the second byte names it; the client closes stdin so)
 * A message may arrive in fragments: the channel byte leads the first only.
 *
 * The connections are made by kube/http.c (kube_http_upgrade) as every
 * request is: the kubeconfig's proxy (or HTTPS_PROXY and NO_PROXY), its CA,
 * client certificate and key, bearer token or exec plugin credentials,
 * insecure-skip-tls-verify, tls-server-name (as SNI and the name verified)
 * and impersonation; a 401 refreshes dynamic credentials and tries once
 * more. The request is as long as the command and the token make it.
 * Several sessions run at once on one thread: podexec_run services them all
 * until each has ended. Not thread-safe: one podexec_run at a time per
 * session array.
 */
#ifndef CADRE_KUBE_PODEXEC_H
#define CADRE_KUBE_PODEXEC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "kube/http.h"
#include "kube/status.h"

#define PODEXEC_CH_STDIN 0
#define PODEXEC_CH_STDOUT 1
#define PODEXEC_CH_STDERR 2
#define PODEXEC_CH_ERROR 3
#define PODEXEC_CH_RESIZE 4
#define PODEXEC_CH_CLOSE 255

#define PODEXEC_PROTO_V5 "v5.channel.k8s.io"
#define PODEXEC_PROTO_V4 "v4.channel.k8s.io"

/* The Status on channel 3 is small; past this it is not one. */
#define PODEXEC_MAX_STATUS 65536

/* Exit code of a session whose command ended without one (the Status said why). */
#define PODEXEC_NO_EXIT_CODE (-1)

/*
 * Reads the messages of one connection as they arrive (fragments
 * included) and hands stdout/stderr bytes on; keeps the Status. Pure: the
 * unit tests feed it bytes split at every offset.
 */
struct podexec_demux {
	int channel;        /* of the message being read; -1 before its first byte */
	struct buf status;  /* channel 3's bytes, capped at PODEXEC_MAX_STATUS */
	bool has_status;    /* a whole Status message arrived */
	int (*on_output)(void *ctx, int channel, const char *data, size_t len);
	void *ctx;
};

void podexec_demux_init(struct podexec_demux *d,
			int (*on_output)(void *ctx, int channel, const char *data, size_t len),
			void *ctx);
void podexec_demux_release(struct podexec_demux *d);

/*
 * Feed len bytes of a message; first says they begin a message, final that
 * they end it. Returns 0, on_output's negative code, or CADRE_EPARSE (an
 * empty message, a second Status, a Status past the cap).
 */
int podexec_demux_feed(struct podexec_demux *d, const char *data, size_t len, bool first,
		       bool final);

/*
 * The exit code a Status (metav1.Status JSON) reports: 0 for "Success";
 * for "Failure" with reason NonZeroExitCode, the ExitCode cause's number;
 * else the N of a message that ends "exit status N" (Go's exec.ExitError:
 * kwok v0.8.0's kubelet wraps it, and the API server then reports an
 * InternalError with the code in its text only); otherwise PODEXEC_NO_EXIT_CODE with the message kept in message (which
 * is always terminated). Returns 0, or CADRE_EPARSE when it is not a Status.
 */
int podexec_status_exit_code(const char *json, size_t len, int *exit_code, char *message,
			     size_t size);

/* The resize message body for a terminal of cols x rows, into out (reset first). */
int podexec_resize_body(unsigned cols, unsigned rows, struct buf *out);

/*
 * The path and query of the exec request (reset first):
 * /api/v1/namespaces/NS/pods/POD/exec?command=A&command=B&container=C&stdin=...&stdout=true&stderr=...&tty=...
 * container may be NULL (the pod's only one). With a TTY stderr is false:
 * the terminal carries both. 0, CADRE_EINVAL (no command), buf errors.
 */
int podexec_path(struct buf *out, const char *ns, const char *pod, const char *container,
		 char *const *argv, size_t argc, bool with_stdin, bool tty);

struct podexec_session {
	/* Set by the caller. */
	const char *ns;
	const char *pod;
	const char *container;  /* NULL: the pod's only container */
	char *const *argv;      /* borrowed; argc >= 1 */
	size_t argc;
	bool tty;
	int stdin_fd;           /* read and sent on channel 0; -1: no stdin */
	int (*on_output)(void *ctx, int channel, const char *data, size_t len);
	void *ctx;

	/* Set by podexec_run. */
	int exit_code;           /* the command's; PODEXEC_NO_EXIT_CODE when not known */
	char protocol[24];       /* the subprotocol the server chose, "" when none */
	struct kube_status st;   /* code 0 when the command ran and reported; else why not */

	void *priv;              /* podexec.c's */
};

/* How the sessions are serviced. May be NULL for the defaults. */
struct podexec_opts {
	long connect_timeout_ms;     /* TCP + TLS + upgrade; 0: the client's request timeout */
	const atomic_bool *stop;     /* set from anywhere (a signal handler): abandon them */
	/* Set from a SIGWINCH handler; then get_size is asked and channel 4 sent (tty only). */
	atomic_bool *resized;
	bool (*get_size)(void *ctx, unsigned *cols, unsigned *rows);
	void *size_ctx;
};

/*
 * Run every session against http's API server (borrowed) until each has
 * ended, delivering output as it arrives. A TTY session also sends the
 * terminal size at once. Per session, exit_code and st say how it went
 * (st.code CADRE_EUNAUTHORIZED, CADRE_EFORBIDDEN, CADRE_ENOTFOUND from the
 * upgrade's HTTP status; CADRE_EIO for a connection that failed or closed
 * without a Status; CADRE_ECANCELED when *stop was set). Returns 0 when
 * the sessions could be started (each one's outcome is its own, credentials
 * that cannot be had included), or CADRE_ENOMEM / CADRE_EIO (no random
 * bytes for the keys) with sessions[0].st saying why.
 */
int podexec_run(struct kube_http *http, struct podexec_session *sessions, size_t n,
		const struct podexec_opts *opts);

#endif
