/*
 * config.h - where the API server is and how to prove who we are.
 *
 * Two sources, as client-go and controller-runtime have them:
 *
 *  - kubeconfig files. --kubeconfig names one file; otherwise KUBECONFIG is
 *    a colon-separated list merged as kubectl merges it: for
 *    current-context, and for each cluster, user and context *name*, the
 *    first file that sets it wins; files in the list that do not exist are
 *    skipped. Relative file references (certificate-authority,
 *    client-certificate, client-key, tokenFile, an exec command containing
 *    '/') are resolved against the directory of the file that held them.
 *  - in-cluster: the service account directory (token, ca.crt, namespace)
 *    and KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT.
 *
 * kube_config_load() picks one the way controller-runtime does:
 * --kubeconfig, then KUBECONFIG, then in-cluster (when
 * KUBERNETES_SERVICE_HOST is set), then ~/.kube/config.
 *
 * Certificates and keys are held as PEM bytes in memory (the *-data forms
 * decoded from base64, the file forms read once at load) and handed to
 * libcurl as blobs; they are never written to temporary files.
 *
 * Credentials that change while the process runs - a token file (projected
 * service account tokens rotate), exec plugin output, and certificate, key
 * and CA files (rotated by cert-manager or a node agent) - are cached inside
 * the config behind a mutex: kube_config_credentials() returns a private
 * copy, re-reading the token file when the copy is a minute old, the PEM
 * files when they changed, and re-running the exec plugin when its
 * credential has expired; kube_config_invalidate() (called by kube/http.c
 * after a 401) forces the token file and the plugin on the next call.
 *
 * Every field of a kubeconfig's cluster, user and context entries is either
 * honoured or refused with an error naming it (docs/kube-client.md has the
 * list): nothing a kubeconfig says is silently ignored.
 *
 * Lifetime: a config is created by one of the constructors, used (read-only
 * fields, plus the locked credential cache) by any number of threads, and
 * freed with kube_config_free() after every user (struct kube_http) is gone.
 * Errors name the file and the field:
 *   kubeconfig /x: context "dev" names user "bob" which is not defined
 */
#ifndef CADRE_KUBE_CONFIG_H
#define CADRE_KUBE_CONFIG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/exec.h"
#include "kube/status.h"

/* Token files are re-read at least this often (client-go: one minute). */
#define KUBE_CONFIG_TOKEN_REREAD_MS 60000
/*
 * Certificate and key files are looked at (stat) at most this often, and
 * read again when they changed: rotated certificates are used without a
 * restart.
 */
#define KUBE_CONFIG_FILE_CHECK_MS 1000

/* The service account directory inside a pod. */
#define KUBE_CONFIG_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* What a file was when it was read last: a change of any of these reads it again. */
struct kube_file_stamp {
	bool present;
	unsigned long long dev, ino, size;
	long long mtime_ns;
};

struct kube_config {
	/* Read-only after construction. */
	char *server;          /* "https://10.0.0.1:6443", no trailing '/' */
	char *source;          /* "kubeconfig /path" or "in-cluster /dir", for messages */
	char *context;         /* context name used, NULL in-cluster */
	char *namespace;       /* the context's / service account's namespace, or "default" */
	char *token;           /* static bearer token, or NULL */
	char *token_file;      /* file holding the bearer token, or NULL */
	struct kube_exec *exec;/* exec credential plugin, or NULL */
	char *tls_server_name; /* SNI / name to verify instead of the URL's host, or NULL */
	bool insecure;         /* insecure-skip-tls-verify: only ever from a kubeconfig */
	/*
	 * The cluster's proxy-url (http, https or socks5), as written; NULL: the
	 * environment decides (kube/proxy.h). A URL may carry a password:
	 * kube_proxy_redact it for messages.
	 */
	char *proxy_url;
	bool disable_compression;  /* the cluster's disable-compression */
	/*
	 * Impersonation (the user's as, as-uid, as-groups, as-user-extra) as the
	 * header lines every request carries: "Impersonate-User: bob", ...
	 */
	char **impersonate;
	size_t nimpersonate;
	/* The cluster's extension "client.authentication.k8s.io/exec" (JSON), or NULL. */
	char *exec_cluster_config;
	/* How an exec plugin may run (kube_config_opts). */
	bool exec_terminal;
	long exec_timeout_ms;      /* <= 0: no limit */
	/* The files of the PEMs below, re-read when they change; NULL for *-data. */
	char *ca_file;
	char *cert_file;
	char *key_file;

	/*
	 * The PEMs: set before the config is shared (a constructor, or a test),
	 * then read and replaced only under lock (kube_config_credentials).
	 */
	char *ca_pem;          /* CA bundle PEM, or NULL for the system store */
	size_t ca_len;
	char *cert_pem;        /* client certificate PEM, or NULL */
	size_t cert_len;
	char *key_pem;         /* client key PEM, or NULL */
	size_t key_len;

	/* The credential cache; private to config.c. */
	pthread_mutex_t lock;
	char *cached_token;         /* token_file contents */
	int64_t token_read_ms;      /* when cached_token was read; INT64_MIN = must re-read */
	struct kube_exec_cred exec_cred;
	bool exec_valid;
	/* One plugin run at a time, outside the lock: the others wait on exec_done. */
	pthread_cond_t exec_done;
	bool exec_running;
	unsigned long exec_runs;    /* runs finished */
	struct kube_status exec_error; /* the last run's failure (code 0: it succeeded) */
	struct kube_file_stamp ca_stamp, cert_stamp, key_stamp;
	int64_t files_checked_ms;   /* when the files were last looked at */
	int64_t (*now_ms)(void *ctx);  /* wall clock, replaceable for tests */
	void *clock_ctx;
};

/* A snapshot of the credentials to send with one request. Owned by the struct. */
struct kube_config_creds {
	char *token;           /* bearer token, or NULL */
	char *ca_pem;          /* CA bundle PEM, or NULL for the system store */
	size_t ca_len;
	char *cert_pem;        /* client certificate PEM (from the config or exec), or NULL */
	size_t cert_len;
	char *key_pem;
	size_t key_len;
};

struct kube_config_opts {
	const char *kubeconfig;  /* --kubeconfig: one file; overrides KUBECONFIG */
	const char *context;     /* --context: overrides current-context */
	const char *sa_dir;      /* in-cluster directory; NULL = $CADRE_SA_DIR, else
				    KUBE_CONFIG_SA_DIR */
	/*
	 * An exec plugin whose interactiveMode allows it gets this process's
	 * terminal as its stdin (a device-code login prints a URL and waits).
	 * For a command a person runs; a daemon leaves it false.
	 */
	bool exec_terminal;
	/*
	 * How long a plugin may run before it is killed: 0 for
	 * KUBE_EXEC_TIMEOUT_MS, < 0 for no limit (a person may be logging in).
	 */
	long exec_timeout_ms;
};

/*
 * Load a config from the first source that applies (see above). opts may be
 * NULL. On success *out is a new config for kube_config_free. On failure
 * *out is NULL, st->message says what and where, and the return is
 *   CADRE_ENOTFOUND  no source applies, or a named file / context / cluster
 *                    / user does not exist
 *   CADRE_EPARSE     a file is not valid YAML, a field has the wrong type,
 *                    base64 data does not decode
 *   CADRE_EINVAL     the result is unusable (no server, a cert without key)
 *   CADRE_EIO        a file could not be read
 *   CADRE_ENOMEM
 */
int kube_config_load(const struct kube_config_opts *opts,
		     struct kube_config **out, struct kube_status *st);

/*
 * Load from kubeconfig files only. paths is one path or a colon-separated
 * list (as KUBECONFIG); context overrides current-context when not NULL.
 * Errors as kube_config_load.
 */
int kube_config_from_kubeconfig(const char *paths, const char *context,
				struct kube_config **out, struct kube_status *st);

/*
 * In-cluster config from sa_dir (NULL = $CADRE_SA_DIR, else
 * KUBE_CONFIG_SA_DIR) and KUBERNETES_SERVICE_HOST/PORT. The token is read
 * now (so a missing one fails here) and again at least every minute.
 * Errors as kube_config_load; CADRE_ENOTFOUND when the variables are unset.
 */
int kube_config_in_cluster(const char *sa_dir, struct kube_config **out,
			   struct kube_status *st);

/*
 * A bare config for server (copied) with no credentials: for tests against a
 * plain-HTTP fake server and for callers that fill fields themselves (every
 * field set must be malloc'd: kube_config_free frees them).
 * Returns 0, CADRE_EINVAL (server NULL or empty) or CADRE_ENOMEM.
 */
int kube_config_new(const char *server, struct kube_config **out);

/* Free the config and everything it holds. NULL is a no-op. */
void kube_config_free(struct kube_config *cfg);

/*
 * Replace the wall clock used for token re-reading and exec expiry (ms
 * since the epoch). For tests; call before the config is shared.
 */
void kube_config_set_clock(struct kube_config *cfg,
			   int64_t (*now_ms)(void *ctx), void *ctx);

/*
 * The credentials for a request, as a private copy (release with
 * kube_config_creds_release). Precedence, as client-go: a static token,
 * else the token file, else the exec plugin's token; client certificate
 * from the config, else from the exec plugin. Thread-safe; the exec plugin
 * runs under the config's lock, so concurrent callers wait for one run.
 * Returns 0, or (creds empty, st filled) the error of reading the token
 * file (CADRE_EIO) or of running the plugin (see kube_exec_run).
 */
int kube_config_credentials(struct kube_config *cfg,
			    struct kube_config_creds *creds,
			    struct kube_status *st);

void kube_config_creds_release(struct kube_config_creds *creds);

/*
 * Forget cached dynamic credentials (after a 401), so the next
 * kube_config_credentials re-reads the token file and re-runs the exec
 * plugin. Returns true when there was something dynamic to refresh (a retry
 * may then succeed), false for static credentials. Thread-safe.
 */
bool kube_config_invalidate(struct kube_config *cfg);

#endif
