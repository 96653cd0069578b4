/*
 * exec.h - client-go exec credential plugins
 * (client.authentication.k8s.io/v1 and v1beta1).
 *
 * A kubeconfig user may name a command that prints an ExecCredential on
 * stdout (cloud CLIs: `aws eks get-token`, `gke-gcloud-auth-plugin`, ...).
 * kube_exec_run() starts it with posix_spawn, the parent's environment plus
 * the spec's env, and KUBERNETES_EXEC_INFO describing the request (with the
 * whole cluster when provideClusterInfo); reads at most 1 MiB of stdout;
 * waits as long as the caller allows (a daemon: KUBE_EXEC_TIMEOUT_MS; a
 * person logging in: no limit); and parses the result. The plugin's stderr
 * goes to ours, as kubectl does, so its prompts and errors reach the person
 * running cadre; its stdin is the terminal when its interactiveMode and the
 * caller allow (spec.interactive says so), else /dev/null.
 *
 * Caching (until status.expirationTimestamp, re-run after a 401) belongs to
 * the caller, kube/config.c, which owns the lock around it.
 *
 * Thread-safe: no shared state (posix_spawn does not disturb other threads).
 */
#ifndef CADRE_KUBE_EXEC_H
#define CADRE_KUBE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/status.h"

/* A daemon's plugin that has not answered in this long is killed and counted a failure. */
#define KUBE_EXEC_TIMEOUT_MS 60000

#define KUBE_EXEC_V1 "client.authentication.k8s.io/v1"
#define KUBE_EXEC_V1BETA1 "client.authentication.k8s.io/v1beta1"

/* interactiveMode: whether the plugin may be given the terminal (client-go's words). */
enum kube_exec_interactive {
	KUBE_EXEC_IF_AVAILABLE,  /* when there is one (v1beta1's default) */
	KUBE_EXEC_NEVER,
	KUBE_EXEC_ALWAYS,        /* it must have one: without, it is not run */
};

struct kube_exec_env {
	char *name;
	char *value;
};

/* users[].user.exec from a kubeconfig. Every string is owned by the struct. */
struct kube_exec {
	char *command;         /* a name looked up in PATH, or a path (already
				  resolved against the kubeconfig's directory) */
	char **args;           /* nargs strings, not including the command */
	size_t nargs;
	struct kube_exec_env *env;
	size_t nenv;
	char *api_version;     /* KUBE_EXEC_V1 or KUBE_EXEC_V1BETA1 */
	char *install_hint;    /* shown when the command cannot be started; may be NULL */
	bool provide_cluster_info; /* pass spec.cluster in KUBERNETES_EXEC_INFO */
	enum kube_exec_interactive interactive;
};

/* What a plugin returned. Owned by the struct; PEM bytes NUL-terminated. */
struct kube_exec_cred {
	char *token;           /* bearer token, or NULL */
	char *cert_pem;        /* client certificate PEM, or NULL */
	size_t cert_len;
	char *key_pem;         /* client key PEM, or NULL */
	size_t key_len;
	int64_t expires_ms;    /* wall clock (ms since the epoch); 0 = does not expire */
};

/* Zero the spec, then free its strings with kube_exec_release. */
void kube_exec_init(struct kube_exec *spec);
void kube_exec_release(struct kube_exec *spec);

/* Deep copy src into dst (dst uninitialised). 0 or CADRE_ENOMEM. */
int kube_exec_copy(struct kube_exec *dst, const struct kube_exec *src);

void kube_exec_cred_init(struct kube_exec_cred *cred);
void kube_exec_cred_release(struct kube_exec_cred *cred);

/* spec.cluster of KUBERNETES_EXEC_INFO (provideClusterInfo); every field may be NULL / false. */
struct kube_exec_cluster {
	const char *server;
	const char *tls_server_name;
	bool insecure;               /* insecure-skip-tls-verify */
	const char *ca_pem;          /* sent as certificate-authority-data */
	const char *proxy_url;
	bool disable_compression;
	const char *config;          /* the cluster's exec extension, JSON */
};

struct kube_exec_run_opts {
	const struct kube_exec_cluster *cluster;  /* NULL: none to give */
	/* The caller may hand the plugin this process's terminal (when stdin is one). */
	bool terminal;
	long timeout_ms;             /* <= 0: no limit */
};

/*
 * Run the plugin and parse its output into cred (initialised by the call).
 * Returns 0, or with st filled and cred empty:
 *   CADRE_EIO       the command could not be started, exited non-zero or was
 *                   killed (the message names the command, the exit status
 *                   and the install hint)
 *   CADRE_EINVAL    interactiveMode Always without a terminal to give it
 *   CADRE_ETIMEDOUT it did not finish within opts->timeout_ms
 *   CADRE_ETOOBIG   more than 1 MiB on stdout
 *   CADRE_EPARSE    the output is not an ExecCredential (see kube_exec_parse)
 *   CADRE_ENOMEM
 */
int kube_exec_run(const struct kube_exec *spec, const struct kube_exec_run_opts *opts,
		  struct kube_exec_cred *cred, struct kube_status *st);

/*
 * KUBERNETES_EXEC_INFO's value for spec (a new string, or NULL when out of
 * memory): the ExecCredential with spec.interactive and, with
 * provideClusterInfo, spec.cluster from cluster.
 */
char *kube_exec_info(const struct kube_exec *spec, const struct kube_exec_cluster *cluster,
		     bool interactive);

/*
 * Parse an ExecCredential (JSON, len bytes) into cred (initialised by the
 * call). The kind must be ExecCredential and apiVersion must equal
 * api_version. status must hold a token, or both clientCertificateData and
 * clientKeyData. status.expirationTimestamp is RFC 3339 ("2024-05-01T10:00:00Z",
 * fractions and offsets accepted). Returns 0 or CADRE_EPARSE (st says which
 * field), CADRE_ENOMEM.
 */
int kube_exec_parse(const char *json, size_t len, const char *api_version,
		    struct kube_exec_cred *cred, struct kube_status *st);

/*
 * RFC 3339 time to milliseconds since the epoch. Returns 0 or CADRE_EPARSE.
 */
int kube_exec_parse_time(const char *s, int64_t *ms);

#endif
