#include "kube/exec.h"
#include "base/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"

extern char **environ;

/* A credential is a few KiB; anything near this is not one. */
#define MAX_OUTPUT (1u << 20)

void kube_exec_init(struct kube_exec *spec)
{
	memset(spec, 0, sizeof(*spec));
}

void kube_exec_release(struct kube_exec *spec)
{
	free(spec->command);
	for (size_t i = 0; i < spec->nargs; i++)
		free(spec->args[i]);
	free(spec->args);
	for (size_t i = 0; i < spec->nenv; i++) {
		free(spec->env[i].name);
		free(spec->env[i].value);
	}
	free(spec->env);
	free(spec->api_version);
	free(spec->install_hint);
	kube_exec_init(spec);
}

static int dup_opt(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : CADRE_ENOMEM;
}

int kube_exec_copy(struct kube_exec *dst, const struct kube_exec *src)
{
	int err;

	kube_exec_init(dst);
	dst->provide_cluster_info = src->provide_cluster_info;
	dst->interactive = src->interactive;
	err = dup_opt(&dst->command, src->command);
	if (!err)
		err = dup_opt(&dst->api_version, src->api_version);
	if (!err)
		err = dup_opt(&dst->install_hint, src->install_hint);
	if (!err && src->nargs) {
		dst->args = calloc(src->nargs, sizeof(*dst->args));
		if (!dst->args)
			err = CADRE_ENOMEM;
		for (size_t i = 0; !err && i < src->nargs; i++) {
			err = dup_opt(&dst->args[i], src->args[i]);
			dst->nargs = i + 1;
		}
	}
	if (!err && src->nenv) {
		dst->env = calloc(src->nenv, sizeof(*dst->env));
		if (!dst->env)
			err = CADRE_ENOMEM;
		for (size_t i = 0; !err && i < src->nenv; i++) {
			dst->nenv = i + 1;
			err = dup_opt(&dst->env[i].name, src->env[i].name);
			if (!err)
				err = dup_opt(&dst->env[i].value, src->env[i].value);
		}
	}
	if (err)
		kube_exec_release(dst);
	return err;
}

void kube_exec_cred_init(struct kube_exec_cred *cred)
{
	memset(cred, 0, sizeof(*cred));
}

/* Wipe a secret before its memory goes back to the allocator. */
static void free_secret(char *s, size_t len)
{
	if (!s)
		return;
	memset(s, 0, len);
	free(s);
}

void kube_exec_cred_release(struct kube_exec_cred *cred)
{
	free_secret(cred->token, cred->token ? strlen(cred->token) : 0);
	free(cred->cert_pem);
	free_secret(cred->key_pem, cred->key_len);
	kube_exec_cred_init(cred);
}

static int parse_digits(const char **p, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (**p < '0' || **p > '9')
			return CADRE_EPARSE;
		v = v * 10 + (**p - '0');
		(*p)++;
	}
	*out = v;
	return 0;
}

static int expect_char(const char **p, char c)
{
	if (**p != c)
		return CADRE_EPARSE;
	(*p)++;
	return 0;
}

int kube_exec_parse_time(const char *s, int64_t *ms)
{
	const char *p = s;
	struct tm tm;
	int year, mon, day, hour, min, sec, frac_ms = 0, off = 0;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	if (parse_digits(&p, 4, &year) || expect_char(&p, '-') ||
	    parse_digits(&p, 2, &mon) || expect_char(&p, '-') ||
	    parse_digits(&p, 2, &day))
		return CADRE_EPARSE;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return CADRE_EPARSE;
	p++;
	if (parse_digits(&p, 2, &hour) || expect_char(&p, ':') ||
	    parse_digits(&p, 2, &min) || expect_char(&p, ':') ||
	    parse_digits(&p, 2, &sec))
		return CADRE_EPARSE;
	if (*p == '.') {
		int scale = 100;

		p++;
		if (*p < '0' || *p > '9')
			return CADRE_EPARSE;
		for (; *p >= '0' && *p <= '9'; p++) {
			frac_ms += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1, oh, om;

		p++;
		if (parse_digits(&p, 2, &oh) || expect_char(&p, ':') ||
		    parse_digits(&p, 2, &om))
			return CADRE_EPARSE;
		off = sign * (oh * 3600 + om * 60);
	} else {
		return CADRE_EPARSE;
	}
	if (*p || mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 ||
	    min > 59 || sec > 60)
		return CADRE_EPARSE;
	tm.tm_year = year - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = day;
	tm.tm_hour = hour;
	tm.tm_min = min;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return CADRE_EPARSE;
	*ms = ((int64_t)t - off) * 1000 + frac_ms;
	return 0;
}

static int dup_json_string(const json_t *v, char **out, size_t *len)
{
	size_t n = json_string_length(v);

	*out = malloc(n + 1);
	if (!*out)
		return CADRE_ENOMEM;
	memcpy(*out, json_string_value(v), n);
	(*out)[n] = '\0';
	if (len)
		*len = n;
	return 0;
}

int kube_exec_parse(const char *json, size_t len, const char *api_version,
		    struct kube_exec_cred *cred, struct kube_status *st)
{
	json_t *root, *status, *token, *cert, *key, *expiry;
	const char *kind, *version;
	int err = CADRE_EPARSE;

	kube_exec_cred_init(cred);
	root = json_loadb(json, len, 0, NULL);
	if (!json_is_object(root)) {
		kube_status_set(st, err, "exec plugin output is not a JSON object");
		goto out;
	}
	kind = json_string_value(json_object_get(root, "kind"));
	version = json_string_value(json_object_get(root, "apiVersion"));
	if (!kind || strcmp(kind, "ExecCredential")) {
		kube_status_set(st, err, "exec plugin output: kind is \"%s\", want ExecCredential",
				kind ? kind : "");
		goto out;
	}
	if (!version || strcmp(version, api_version)) {
		kube_status_set(st, err, "exec plugin output: apiVersion is \"%s\", want \"%s\"",
				version ? version : "", api_version);
		goto out;
	}
	status = json_object_get(root, "status");
	if (!json_is_object(status)) {
		kube_status_set(st, err, "exec plugin output: no status");
		goto out;
	}
	token = json_object_get(status, "token");
	cert = json_object_get(status, "clientCertificateData");
	key = json_object_get(status, "clientKeyData");
	expiry = json_object_get(status, "expirationTimestamp");
	if ((cert && !json_is_string(cert)) || (key && !json_is_string(key)) ||
	    (token && !json_is_string(token))) {
		kube_status_set(st, err, "exec plugin output: status.token, "
				"clientCertificateData and clientKeyData must be strings");
		goto out;
	}
	if (!cert != !key) {
		kube_status_set(st, err, "exec plugin output: status.%s is set without status.%s",
				cert ? "clientCertificateData" : "clientKeyData",
				cert ? "clientKeyData" : "clientCertificateData");
		goto out;
	}
	if ((!token || !json_string_length(token)) && !cert) {
		kube_status_set(st, err, "exec plugin output: status has neither a token "
				"nor clientCertificateData/clientKeyData");
		goto out;
	}
	if (expiry && !json_is_null(expiry)) {
		if (!json_is_string(expiry) ||
		    kube_exec_parse_time(json_string_value(expiry), &cred->expires_ms)) {
			kube_status_set(st, err, "exec plugin output: status.expirationTimestamp "
					"is not an RFC 3339 time");
			goto out;
		}
	}
	err = 0;
	if ((token && json_string_length(token) &&
	     dup_json_string(token, &cred->token, NULL)) ||
	    (cert && (dup_json_string(cert, &cred->cert_pem, &cred->cert_len) ||
		      dup_json_string(key, &cred->key_pem, &cred->key_len))))
		err = kube_status_set(st, CADRE_ENOMEM, "out of memory");
out:
	if (err)
		kube_exec_cred_release(cred);
	json_decref(root);
	return err;
}

/* Base64 of len bytes, as a new NUL-terminated string (for the cluster's CA). */
static char *base64(const char *data, size_t len)
{
	size_t out_len = 4 * ((len + 2) / 3) + 1;
	char *out = malloc(out_len);

	if (out)
		EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)data,
				(int)len);
	return out;
}

/*
 * spec.cluster, as client-go's clientauthentication.Cluster: the server,
 * its TLS and proxy settings, and the cluster's exec extension as "config".
 */
static json_t *cluster_info(const struct kube_exec_cluster *c)
{
	json_t *cluster = json_pack("{s:s}", "server", c->server), *config;
	char *ca64 = NULL;
	int e = 0;

	if (!cluster)
		return NULL;
	if (c->tls_server_name)
		e |= json_object_set_new(cluster, "tls-server-name", json_string(c->tls_server_name));
	if (c->insecure)
		e |= json_object_set_new(cluster, "insecure-skip-tls-verify", json_true());
	if (c->ca_pem) {
		ca64 = base64(c->ca_pem, strlen(c->ca_pem));
		e |= ca64 ? json_object_set_new(cluster, "certificate-authority-data",
						json_string(ca64)) : -1;
	}
	if (c->proxy_url)
		e |= json_object_set_new(cluster, "proxy-url", json_string(c->proxy_url));
	if (c->disable_compression)
		e |= json_object_set_new(cluster, "disable-compression", json_true());
	if (c->config) {
		config = json_loads(c->config, JSON_DECODE_ANY, NULL);
		e |= config ? json_object_set_new(cluster, "config", config) : -1;
	}
	free(ca64);
	if (e) {
		json_decref(cluster);
		return NULL;
	}
	return cluster;
}

char *kube_exec_info(const struct kube_exec *spec, const struct kube_exec_cluster *cluster,
		     bool interactive)
{
	json_t *info, *sp, *c;
	char *json = NULL;

	info = json_pack("{s:s, s:s, s:{s:b}}", "apiVersion", spec->api_version,
			 "kind", "ExecCredential", "spec", "interactive", interactive);
	if (!info)
		return NULL;
	sp = json_object_get(info, "spec");
	if (spec->provide_cluster_info && cluster && cluster->server) {
		c = cluster_info(cluster);
		if (!c || json_object_set_new(sp, "cluster", c))
			goto out;
	}
	json = json_dumps(info, JSON_COMPACT);
out:
	json_decref(info);
	return json;
}

/* KUBERNETES_EXEC_INFO=<ExecCredential with spec only> */
static char *exec_info(const struct kube_exec *spec, const struct kube_exec_cluster *cluster,
		       bool interactive)
{
	char *json = kube_exec_info(spec, cluster, interactive), *var = NULL;
	struct buf b;

	buf_init(&b, 8u << 20);
	if (json && !buf_addf(&b, "KUBERNETES_EXEC_INFO=%s", json))
		var = buf_detach(&b, NULL);
	free(json);
	buf_release(&b);
	return var;
}

/* Does environment entry e ("NAME=value") set name? */
static bool env_names(const char *e, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(e, name, n) && e[n] == '=';
}

/*
 * The child's environment: ours, minus what the spec overrides, plus the
 * spec's variables and the exec info. Pointers into environ are borrowed;
 * owned[] (nowned of them) holds what the caller must free, also when the
 * result is NULL (out of memory).
 */
static char **build_env(const struct kube_exec *spec, char *info,
			char ***owned, size_t *nowned)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + spec->nenv + 2, sizeof(*env));
	*owned = calloc(spec->nenv + 1, sizeof(**owned));
	*nowned = 0;
	if (!env || !*owned) {
		free(env);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		bool overridden = env_names(environ[i], "KUBERNETES_EXEC_INFO");

		for (size_t j = 0; j < spec->nenv && !overridden; j++)
			overridden = env_names(environ[i], spec->env[j].name);
		if (!overridden)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < spec->nenv; j++) {
		struct buf b;
		char *var;

		buf_init(&b, 1u << 20);
		buf_addf(&b, "%s=%s", spec->env[j].name,
			 spec->env[j].value ? spec->env[j].value : "");
		var = buf_error(&b) ? NULL : buf_detach(&b, NULL);
		buf_release(&b);
		if (!var) {
			free(env);
			return NULL;
		}
		(*owned)[(*nowned)++] = var;
		env[k++] = var;
	}
	env[k++] = info;
	env[k] = NULL;
	return env;
}

/*
 * The file to run: command itself when it names a path, else the first
 * executable match in our PATH (the parent's, as client-go looks it up).
 * Resolving here, rather than leaving it to posix_spawnp, gives the same
 * "cannot run" error everywhere, including where the spawn cannot report
 * a failed exec (valgrind). Returns a new string, or NULL with errno set.
 */
static char *find_command(const char *command)
{
	const char *path = getenv("PATH"), *p, *end;
	struct buf b;

	if (strchr(command, '/')) {
		if (access(command, X_OK))
			return NULL;
		return strdup(command);
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	buf_init(&b, 64 * 1024);
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		buf_reset(&b);
		/* An empty PATH entry means the current directory. */
		if (buf_addf(&b, "%.*s%s%s", (int)(end - p), p, end == p ? "." : "", "/") ||
		    buf_adds(&b, command))
			break;
		if (!access(b.data, X_OK))
			return buf_detach(&b, NULL);
		if (!*end)
			break;
	}
	buf_release(&b);
	errno = ENOENT;
	return NULL;
}

static int64_t mono_ms(void)
{
	return (int64_t)clock_mono_ms();
}

/*
 * Read the child's stdout until EOF, the cap or the deadline (0: none).
 * Returns 0, CADRE_ETOOBIG, CADRE_ETIMEDOUT or CADRE_EIO.
 */
static int read_output(int fd, struct buf *out, int64_t deadline)
{
	char tmp[4096];

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline ? deadline - mono_ms() : -1;
		ssize_t n;
		int r;

		if (deadline && left <= 0)
			return CADRE_ETIMEDOUT;
		r = poll(&pfd, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return CADRE_EIO;
		if (r == 0)
			return CADRE_ETIMEDOUT;
		n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return CADRE_EIO;
		if (n == 0)
			return 0;
		if (buf_add(out, tmp, (size_t)n))
			return CADRE_ETOOBIG;
	}
}

/*
 * Read the running plugin's output (at most MAX_OUTPUT, within timeout_ms
 * when > 0) and reap it; killed when it overruns either. 0 when it exited
 * with status 0, else the error (set in st). pid is reaped either way.
 */
static int exec_collect(const struct kube_exec *spec, pid_t pid, int fd, long timeout_ms,
			struct buf *out, struct kube_status *st)
{
	const char *hint = spec->install_hint ? spec->install_hint : "";
	int err = read_output(fd, out, timeout_ms > 0 ? mono_ms() + timeout_ms : 0), wstatus = 0;

	if (err) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
			;
		kube_status_set(st, err, "exec plugin %s: %s", spec->command,
				err == CADRE_ETIMEDOUT ? "did not finish in time"
				: err == CADRE_ETOOBIG ? "wrote more than 1 MiB"
				: "cannot read its output");
		return err;
	}
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(wstatus) && !WEXITSTATUS(wstatus))
		return 0;
	if (WIFEXITED(wstatus))
		return kube_status_set(st, CADRE_EIO, "exec plugin %s exited with status %d%s%s",
				       spec->command, WEXITSTATUS(wstatus),
				       *hint ? "; " : "", hint);
	return kube_status_set(st, CADRE_EIO, "exec plugin %s was killed by signal %d",
			       spec->command, WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
}

/*
 * Whether the plugin gets the terminal: its interactiveMode, and whether the
 * caller has one to give (client-go: stdin is a terminal). 0, or
 * CADRE_EINVAL when it must have one and there is none.
 */
static int wants_terminal(const struct kube_exec *spec, const struct kube_exec_run_opts *o,
			  bool *terminal, struct kube_status *st)
{
	bool have = o && o->terminal && isatty(STDIN_FILENO);

	*terminal = spec->interactive != KUBE_EXEC_NEVER && have;
	if (spec->interactive == KUBE_EXEC_ALWAYS && !have)
		return kube_status_set(st, CADRE_EINVAL, "exec plugin %s: its interactiveMode is "
				       "Always, and %s", spec->command, o && o->terminal
				       ? "standard input is not a terminal"
				       : "this program does not give a plugin its terminal");
	return 0;
}

int kube_exec_run(const struct kube_exec *spec, const struct kube_exec_run_opts *opts,
		  struct kube_exec_cred *cred, struct kube_status *st)
{
	posix_spawn_file_actions_t actions;
	char **argv = NULL, **envp = NULL, **owned = NULL, *info = NULL, *file = NULL;
	size_t nowned = 0;
	int pipefd[2] = { -1, -1 }, err, wstatus = 0, spawn_err;
	bool actions_ready = false, terminal = false;
	pid_t pid = -1;
	struct buf out;
	const char *hint = spec->install_hint ? spec->install_hint : "";

	kube_exec_cred_init(cred);
	buf_init(&out, MAX_OUTPUT);
	if (!spec->command || !spec->api_version) {
		err = kube_status_set(st, CADRE_EINVAL, "exec plugin: no command or apiVersion");
		goto out;
	}
	if ((err = wants_terminal(spec, opts, &terminal, st)))
		goto out;
	argv = calloc(spec->nargs + 2, sizeof(*argv));
	info = exec_info(spec, opts ? opts->cluster : NULL, terminal);
	if (argv && info)
		envp = build_env(spec, info, &owned, &nowned);
	if (!envp) {
		err = kube_status_set(st, CADRE_ENOMEM, "exec plugin: out of memory");
		goto out;
	}
	argv[0] = spec->command;
	for (size_t i = 0; i < spec->nargs; i++)
		argv[i + 1] = spec->args[i];
	if (pipe2(pipefd, O_CLOEXEC)) {
		err = kube_status_set(st, CADRE_EIO, "exec plugin %s: pipe: %s",
				      spec->command, strerror(errno));
		goto out;
	}
	/*
	 * stdin: the terminal when the plugin may ask the person something (a
	 * device-code login), else empty; stderr is ours, for the person.
	 */
	actions_ready = !posix_spawn_file_actions_init(&actions);
	if (!actions_ready ||
	    (!terminal && posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) ||
	    posix_spawn_file_actions_adddup2(&actions, pipefd[1], 1)) {
		err = kube_status_set(st, CADRE_ENOMEM, "exec plugin: out of memory");
		goto out;
	}
	file = find_command(spec->command);
	if (!file)
		spawn_err = errno;
	else
		spawn_err = posix_spawn(&pid, file, &actions, NULL, argv, envp);
	close(pipefd[1]);
	pipefd[1] = -1;
	if (spawn_err) {
		pid = -1;
		err = kube_status_set(st, CADRE_EIO, "exec plugin %s: cannot run: %s%s%s",
				      spec->command, strerror(spawn_err),
				      *hint ? "; " : "", hint);
		goto out;
	}
	err = exec_collect(spec, pid, pipefd[0], opts ? opts->timeout_ms : KUBE_EXEC_TIMEOUT_MS,
			   &out, st);
	pid = -1;
	if (err)
		goto out;
	err = kube_exec_parse(buf_str(&out), out.len, spec->api_version, cred, st);
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
			;
	}
	if (actions_ready)
		posix_spawn_file_actions_destroy(&actions);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	free(envp);
	free(argv);
	free(info);
	free(file);
	/* The output held the credential itself. */
	if (out.data)
		memset(out.data, 0, out.len);
	buf_release(&out);
	return err;
}
