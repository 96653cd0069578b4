#include <criterion/criterion.h>
#include <ftw.h>
#include <pthread.h>
#include <pty.h>
#include <time.h>
#include <stdio.h>
#include <unistd.h>

#include "base/err.h"
#include "kube/config.h"
#include "kube/exec.h"

#define TESTDATA CADRE_SOURCE_DIR "/unit/testdata/kube"
#define PLUGIN TESTDATA "/exec-plugin.sh"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *data;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	data = calloc(1, (size_t)n + 1);
	cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return data;
}

static int remove_entry(const char *path, const struct stat *sb, int flag,
			struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* A state directory the plugin reports into (PLUGIN_STATE_DIR). */
static void state_dir(char *dir)
{
	cr_assert(mkdtemp(dir));
	setenv("PLUGIN_STATE_DIR", dir, 1);
}

static char *state_file(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return slurp(path);
}

/* How many times the plugin ran (it keeps the count in runs). */
static int runs(const char *dir)
{
	char *text = state_file(dir, "runs");
	int n = text ? (int)strtol(text, NULL, 10) : 0;

	free(text);
	return n;
}

/* A spec for the test plugin; arguments and env as given. */
static void plugin_spec(struct kube_exec *spec, const char *mode)
{
	kube_exec_init(spec);
	spec->command = strdup(PLUGIN);
	spec->api_version = strdup(KUBE_EXEC_V1);
	spec->args = calloc(3, sizeof(char *));
	spec->args[0] = strdup(mode);
	spec->args[1] = strdup("--region");
	spec->args[2] = strdup("eu west");
	spec->nargs = 3;
	spec->env = calloc(1, sizeof(*spec->env));
	spec->env[0].name = strdup("PLUGIN_TOKEN");
	spec->env[0].value = strdup("cloud");
	spec->nenv = 1;
}

/* kube_exec_run with the cluster server and CA only, no terminal, a daemon's timeout. */
static int run(const struct kube_exec *spec, const char *server, const char *ca,
	       struct kube_exec_cred *cred, struct kube_status *st)
{
	struct kube_exec_cluster cluster = { .server = server, .ca_pem = ca };
	struct kube_exec_run_opts o = { .cluster = &cluster, .timeout_ms = KUBE_EXEC_TIMEOUT_MS };

	return kube_exec_run(spec, &o, cred, st);
}

/* ---- parsing ---- */

Test(exec, parses_a_v1_token_credential_with_expiry)
{
	static const char out[] =
		"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
		"\"status\":{\"token\":\"abc\",\"expirationTimestamp\":\"2030-01-02T03:04:05Z\"}}";
	struct kube_exec_cred cred;
	struct kube_status st;

	cr_assert_eq(kube_exec_parse(out, strlen(out), KUBE_EXEC_V1, &cred, &st), 0, "%s",
		     st.message);
	cr_assert_str_eq(cred.token, "abc");
	cr_assert_null(cred.cert_pem);
	cr_assert_eq(cred.expires_ms, 1893553445000LL);
	kube_exec_cred_release(&cred);
}

Test(exec, parses_a_v1beta1_client_certificate_credential)
{
	static const char out[] =
		"{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\","
		"\"status\":{\"clientCertificateData\":\"-----BEGIN CERTIFICATE-----\\nX\\n\","
		"\"clientKeyData\":\"-----BEGIN EC PRIVATE KEY-----\\nY\\n\"}}";
	struct kube_exec_cred cred;
	struct kube_status st;

	cr_assert_eq(kube_exec_parse(out, strlen(out), KUBE_EXEC_V1BETA1, &cred, &st), 0, "%s",
		     st.message);
	cr_assert_null(cred.token);
	cr_assert_str_eq(cred.cert_pem, "-----BEGIN CERTIFICATE-----\nX\n");
	cr_assert_eq(cred.cert_len, strlen(cred.cert_pem));
	cr_assert_str_eq(cred.key_pem, "-----BEGIN EC PRIVATE KEY-----\nY\n");
	cr_assert_eq(cred.expires_ms, 0);
	kube_exec_cred_release(&cred);
}

Test(exec, refuses_output_that_is_not_a_usable_credential)
{
	static const struct { const char *json; const char *why; } bad[] = {
		{ "not json", "not a JSON object" },
		{ "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"Pod\",\"status\":{\"token\":\"a\"}}",
		  "kind is \"Pod\"" },
		{ "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"a\"}}",
		  "apiVersion is \"client.authentication.k8s.io/v1beta1\"" },
		{ "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\"}",
		  "no status" },
		{ "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{}}",
		  "neither a token" },
		{ "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
		  "\"status\":{\"clientCertificateData\":\"c\"}}",
		  "clientCertificateData is set without status.clientKeyData" },
		{ "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
		  "\"status\":{\"token\":\"a\",\"expirationTimestamp\":\"tomorrow\"}}",
		  "expirationTimestamp" },
	};
	struct kube_exec_cred cred;
	struct kube_status st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(kube_exec_parse(bad[i].json, strlen(bad[i].json), KUBE_EXEC_V1,
					     &cred, &st), CADRE_EPARSE, "case %zu", i);
		cr_expect(strstr(st.message, bad[i].why), "case %zu: %s", i, st.message);
		cr_expect_null(cred.token);
	}
}

Test(exec, rfc3339_times_with_fractions_and_offsets)
{
	int64_t ms;

	cr_assert_eq(kube_exec_parse_time("1970-01-01T00:00:00Z", &ms), 0);
	cr_assert_eq(ms, 0);
	cr_assert_eq(kube_exec_parse_time("2024-05-01T10:00:00.250Z", &ms), 0);
	cr_assert_eq(ms, 1714557600250LL);
	cr_assert_eq(kube_exec_parse_time("2024-05-01T12:00:00+02:00", &ms), 0);
	cr_assert_eq(ms, 1714557600000LL);
	cr_assert_eq(kube_exec_parse_time("2024-05-01T05:30:00.123456789-04:30", &ms), 0);
	cr_assert_eq(ms, 1714557600123LL);
	cr_assert_eq(kube_exec_parse_time("2024-05-01 10:00:00", &ms), CADRE_EPARSE);
	cr_assert_eq(kube_exec_parse_time("2024-13-01T10:00:00Z", &ms), CADRE_EPARSE);
	cr_assert_eq(kube_exec_parse_time("2024-05-01T10:00:00Zjunk", &ms), CADRE_EPARSE);
	cr_assert_eq(kube_exec_parse_time("", &ms), CADRE_EPARSE);
}

/* ---- running ---- */

Test(exec, runs_the_plugin_with_args_env_and_exec_info)
{
	char dir[] = "/tmp/cadre-exec-XXXXXX";
	struct kube_exec spec;
	struct kube_exec_cred cred;
	struct kube_status st;
	char *info, *args;
	json_t *j;

	state_dir(dir);
	plugin_spec(&spec, "token");
	spec.provide_cluster_info = true;
	cr_assert_eq(run(&spec, "https://api.example:6443", "PEM", &cred, &st), 0,
		     "%s", st.message);
	cr_assert_str_eq(cred.token, "cloud-1");
	args = state_file(dir, "args");
	cr_assert_str_eq(args, "token\n--region\neu west\n");
	info = state_file(dir, "info");
	j = json_loads(info, 0, NULL);
	cr_assert_not_null(j, "exec info: %s", info);
	cr_assert_str_eq(json_string_value(json_object_get(j, "apiVersion")), KUBE_EXEC_V1);
	cr_assert_str_eq(json_string_value(json_object_get(j, "kind")), "ExecCredential");
	cr_assert(json_is_false(json_object_get(json_object_get(j, "spec"), "interactive")));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(j, "spec"),
		"cluster"), "server")), "https://api.example:6443");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(j, "spec"),
		"cluster"), "certificate-authority-data")), "UEVN");
	json_decref(j);
	free(info);
	free(args);
	kube_exec_cred_release(&cred);
	kube_exec_release(&spec);
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

Test(exec, a_plugin_may_return_a_client_certificate)
{
	struct kube_exec spec;
	struct kube_exec_cred cred;
	struct kube_status st;
	char *cert, *key;

	unsetenv("PLUGIN_STATE_DIR");
	plugin_spec(&spec, "cert");
	cr_assert_eq(run(&spec, NULL, NULL, &cred, &st), 0, "%s", st.message);
	cert = slurp(TESTDATA "/client.crt");
	key = slurp(TESTDATA "/client.key");
	cr_assert_str_eq(cred.cert_pem, cert);
	cr_assert_str_eq(cred.key_pem, key);
	cr_assert_null(cred.token);
	free(cert);
	free(key);
	kube_exec_cred_release(&cred);
	kube_exec_release(&spec);
}

Test(exec, failures_say_what_failed_and_how_to_fix_it)
{
	struct kube_exec spec;
	struct kube_exec_cred cred;
	struct kube_status st;

	unsetenv("PLUGIN_STATE_DIR");
	plugin_spec(&spec, "fail");
	spec.install_hint = strdup("run cloud login");
	cr_assert_eq(run(&spec, NULL, NULL, &cred, &st), CADRE_EIO);
	cr_assert(strstr(st.message, "exited with status 3"), "%s", st.message);
	cr_assert(strstr(st.message, "run cloud login"), "%s", st.message);
	cr_assert_null(cred.token);

	free(spec.args[0]);
	spec.args[0] = strdup("garbage");
	cr_assert_eq(run(&spec, NULL, NULL, &cred, &st), CADRE_EPARSE);
	cr_assert(strstr(st.message, "not a JSON object"), "%s", st.message);

	free(spec.command);
	spec.command = strdup("cadre-no-such-plugin");
	cr_assert_eq(run(&spec, NULL, NULL, &cred, &st), CADRE_EIO);
	cr_assert(strstr(st.message, "cadre-no-such-plugin: cannot run"), "%s", st.message);
	cr_assert(strstr(st.message, "run cloud login"), "%s", st.message);
	kube_exec_release(&spec);
}

Test(exec, copy_is_deep)
{
	struct kube_exec spec, copy;

	plugin_spec(&spec, "token");
	cr_assert_eq(kube_exec_copy(&copy, &spec), 0);
	kube_exec_release(&spec);
	cr_assert_str_eq(copy.command, PLUGIN);
	cr_assert_eq(copy.nargs, 3);
	cr_assert_str_eq(copy.args[2], "eu west");
	cr_assert_str_eq(copy.env[0].value, "cloud");
	kube_exec_release(&copy);
}

/* ---- through the config: caching and expiry ---- */

struct fake_wall {
	int64_t now_ms;
};

static int64_t fake_wall_now(void *ctx)
{
	return ((struct fake_wall *)ctx)->now_ms;
}

static char *token_now(struct kube_config *cfg)
{
	struct kube_config_creds creds;
	struct kube_status st;
	char *token;

	cr_assert_eq(kube_config_credentials(cfg, &creds, &st), 0, "%s", st.message);
	token = strdup(creds.token ? creds.token : "");
	kube_config_creds_release(&creds);
	return token;
}

#define assert_token(cfg, want) do { \
	char *t_ = token_now(cfg); \
	cr_assert_str_eq(t_, want); \
	free(t_); \
} while (0)

Test(exec, the_kubeconfig_exec_user_is_resolved_and_cached_until_expiry)
{
	char dir[] = "/tmp/cadre-exec-XXXXXX";
	struct fake_wall wall;
	struct kube_config *cfg;
	struct kube_status st;
	char *args;

	state_dir(dir);
	setenv("PLUGIN_EXPIRY", "2030-01-01T00:00:00Z", 1);
	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/exec.yaml", NULL, &cfg, &st), 0,
		     "%s", st.message);
	cr_assert_str_eq(cfg->exec->command, TESTDATA "/./exec-plugin.sh");
	cr_assert_eq(cfg->exec->nargs, 3);
	cr_assert_str_eq(cfg->exec->env[0].name, "PLUGIN_TOKEN");
	cr_assert(cfg->exec->provide_cluster_info);
	cr_assert_str_eq(cfg->exec->install_hint, "install the test plugin");
	cr_assert_eq(runs(dir), 0, "the plugin runs on first use, not at load");

	kube_exec_parse_time("2029-12-31T23:00:00Z", &wall.now_ms);
	kube_config_set_clock(cfg, fake_wall_now, &wall);
	assert_token(cfg, "exec-token-1");
	assert_token(cfg, "exec-token-1");
	cr_assert_eq(runs(dir), 1);
	args = state_file(dir, "args");
	cr_assert_str_eq(args, "token\n--region\neu-west-1\n");
	free(args);

	/* Past status.expirationTimestamp: run again. */
	wall.now_ms += 3600 * 1000;
	assert_token(cfg, "exec-token-2");
	cr_assert_eq(runs(dir), 2);

	/* A 401 says the credential is no good even before it expires. */
	kube_exec_parse_time("2029-12-31T23:00:00Z", &wall.now_ms);
	cr_assert(kube_config_invalidate(cfg));
	assert_token(cfg, "exec-token-3");
	assert_token(cfg, "exec-token-3");
	cr_assert_eq(runs(dir), 3);
	kube_config_free(cfg);
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

Test(exec, a_credential_without_expiry_is_kept_until_a_401)
{
	char dir[] = "/tmp/cadre-exec-XXXXXX";
	struct fake_wall wall = { 1700000000000 };
	struct kube_config *cfg;
	struct kube_status st;

	state_dir(dir);
	unsetenv("PLUGIN_EXPIRY");
	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/exec.yaml", NULL, &cfg, &st), 0);
	kube_config_set_clock(cfg, fake_wall_now, &wall);
	assert_token(cfg, "exec-token-1");
	wall.now_ms += 365LL * 24 * 3600 * 1000;
	assert_token(cfg, "exec-token-1");
	kube_config_invalidate(cfg);
	assert_token(cfg, "exec-token-2");
	kube_config_free(cfg);
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

Test(exec, a_failing_plugin_fails_the_credentials_call)
{
	struct kube_config *cfg;
	struct kube_config_creds creds;
	struct kube_status st;

	unsetenv("PLUGIN_STATE_DIR");
	setenv("PLUGIN_API_VERSION", KUBE_EXEC_V1BETA1, 1);
	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/exec.yaml", NULL, &cfg, &st), 0);
	cr_assert_eq(kube_config_credentials(cfg, &creds, &st), CADRE_EPARSE);
	cr_assert(strstr(st.message, "apiVersion is \"" KUBE_EXEC_V1BETA1 "\""), "%s", st.message);
	cr_assert_null(creds.token);
	kube_config_free(cfg);
}

/* ---- what the plugin is given ---- */

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* A kubeconfig in dir whose user runs the test plugin with mode (and the cluster lines given). */
static char *exec_kubeconfig(const char *dir, const char *mode, const char *cluster_lines,
			     const char *exec_lines)
{
	char path[512], text[4096];

	snprintf(text, sizeof(text),
		 "current-context: c\n"
		 "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
		 "clusters:\n"
		 "- name: k\n"
		 "  cluster:\n"
		 "    server: https://k.example:6443\n%s"
		 "users:\n"
		 "- name: u\n"
		 "  user:\n"
		 "    exec:\n"
		 "      apiVersion: client.authentication.k8s.io/v1\n"
		 "      command: %s\n"
		 "      args: [%s]\n%s",
		 cluster_lines, PLUGIN, mode, exec_lines);
	snprintf(path, sizeof(path), "%s/config", dir);
	write_text(path, text);
	return strdup(path);
}

Test(exec, provide_cluster_info_gives_the_plugin_the_whole_cluster)
{
	char dir[] = "/tmp/cadre-exec-XXXXXX", *path, *info, *ca;
	struct kube_config *cfg;
	struct kube_status st;
	json_t *j, *cluster;

	state_dir(dir);
	path = exec_kubeconfig(dir, "token",
			       "    certificate-authority: " TESTDATA "/ca.crt\n"
			       "    tls-server-name: api.internal\n"
			       "    proxy-url: socks5://bastion:1080\n"
			       "    disable-compression: true\n"
			       "    extensions:\n"
			       "    - name: other.example/thing\n"
			       "      extension: {ignored: true}\n"
			       "    - name: client.authentication.k8s.io/exec\n"
			       "      extension: {audience: cadre, scopes: [a, b]}\n",
			       "      provideClusterInfo: true\n"
			       "      interactiveMode: Never\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &cfg, &st), 0, "%s", st.message);
	assert_token(cfg, "tok-1");
	info = state_file(dir, "info");
	j = json_loads(info, 0, NULL);
	cluster = json_object_get(json_object_get(j, "spec"), "cluster");
	cr_assert_not_null(cluster, "%s", info);
	cr_assert_str_eq(json_string_value(json_object_get(cluster, "server")),
			 "https://k.example:6443");
	cr_assert_str_eq(json_string_value(json_object_get(cluster, "tls-server-name")),
			 "api.internal");
	cr_assert_str_eq(json_string_value(json_object_get(cluster, "proxy-url")),
			 "socks5://bastion:1080");
	cr_assert(json_is_true(json_object_get(cluster, "disable-compression")), "%s", info);
	cr_assert_null(json_object_get(cluster, "insecure-skip-tls-verify"), "%s", info);
	ca = slurp(TESTDATA "/ca.crt");
	cr_assert_not_null(json_object_get(cluster, "certificate-authority-data"));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(cluster, "config"),
							   "audience")), "cadre", "%s", info);
	cr_assert_eq(json_array_size(json_object_get(json_object_get(cluster, "config"), "scopes")),
		     2);
	json_decref(j);
	free(ca);
	free(info);
	free(path);
	kube_config_free(cfg);
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* This process's stdin becomes a new terminal; the other end is returned. */
static int stdin_terminal(void)
{
	int master, slave;

	cr_assert_eq(openpty(&master, &slave, NULL, NULL, NULL), 0);
	cr_assert_eq(dup2(slave, STDIN_FILENO), STDIN_FILENO);
	close(slave);
	return master;
}

static char *run_for_token(struct kube_exec *spec, bool terminal, int expect,
			   struct kube_status *st)
{
	struct kube_exec_run_opts o = { .terminal = terminal, .timeout_ms = 20000 };
	struct kube_exec_cred cred;
	char *token;

	cr_assert_eq(kube_exec_run(spec, &o, &cred, st), expect, "%s", st->message);
	token = strdup(cred.token ? cred.token : "");
	kube_exec_cred_release(&cred);
	return token;
}

Test(exec, a_plugin_may_ask_the_person_at_the_terminal_when_its_mode_and_the_caller_allow)
{
	char dir[] = "/tmp/cadre-exec-XXXXXX", *token, *tty, *info;
	struct kube_exec spec;
	struct kube_status st;
	int master = stdin_terminal();

	state_dir(dir);
	plugin_spec(&spec, "ask");
	spec.interactive = KUBE_EXEC_IF_AVAILABLE;
	cr_assert_eq(write(master, "code-42\n", 8), 8);
	token = run_for_token(&spec, true, 0, &st);
	cr_assert_str_eq(token, "asked-code-42");
	tty = state_file(dir, "stdin-is-a-terminal");
	cr_assert_str_eq(tty, "yes\n");
	info = state_file(dir, "info");
	cr_assert(strstr(info, "\"interactive\":true"), "%s", info);
	free(token);
	free(tty);
	free(info);

	/* Never: the plugin reads nothing, and is told it may not ask */
	free(spec.args[0]);
	spec.args[0] = strdup("token");
	spec.interactive = KUBE_EXEC_NEVER;
	token = run_for_token(&spec, true, 0, &st);
	tty = state_file(dir, "stdin-is-a-terminal");
	cr_assert_str_eq(tty, "no\n");
	info = state_file(dir, "info");
	cr_assert(strstr(info, "\"interactive\":false"), "%s", info);
	free(token);
	free(tty);
	free(info);

	/* a caller that has no person at the terminal (a daemon) never hands it over */
	spec.interactive = KUBE_EXEC_IF_AVAILABLE;
	token = run_for_token(&spec, false, 0, &st);
	tty = state_file(dir, "stdin-is-a-terminal");
	cr_assert_str_eq(tty, "no\n");
	free(token);
	free(tty);

	/* Always, without one to give: not run, and the line says why */
	spec.interactive = KUBE_EXEC_ALWAYS;
	token = run_for_token(&spec, false, CADRE_EINVAL, &st);
	cr_assert(strstr(st.message, "interactiveMode is Always"), "%s", st.message);
	cr_assert_eq(runs(dir), 3);
	free(token);
	kube_exec_release(&spec);
	close(master);
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

Test(exec, the_interactive_mode_is_read_as_kubectl_reads_it)
{
	char dir[] = "/tmp/cadre-exec-XXXXXX", *path;
	struct kube_config *cfg;
	struct kube_status st;

	cr_assert(mkdtemp(dir));
	path = exec_kubeconfig(dir, "token", "", "");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &cfg, &st), CADRE_EINVAL);
	cr_assert(strstr(st.message, "interactiveMode must be set"), "%s", st.message);
	free(path);
	path = exec_kubeconfig(dir, "token", "", "      interactiveMode: Sometimes\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &cfg, &st), CADRE_EINVAL);
	cr_assert(strstr(st.message, "interactiveMode \"Sometimes\""), "%s", st.message);
	free(path);
	path = exec_kubeconfig(dir, "token", "", "      interactiveMode: Always\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &cfg, &st), 0, "%s", st.message);
	cr_assert_eq(cfg->exec->interactive, KUBE_EXEC_ALWAYS);
	kube_config_free(cfg);
	free(path);
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static int64_t mono_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

Test(exec, a_daemon_kills_a_plugin_that_does_not_answer_and_a_person_is_given_the_time,
     .timeout = 30)
{
	struct kube_exec spec;
	struct kube_exec_run_opts o = { .timeout_ms = 300 };
	struct kube_exec_cred cred;
	struct kube_status st;
	int64_t t0;

	unsetenv("PLUGIN_STATE_DIR");
	setenv("PLUGIN_SLEEP", "2", 1);
	plugin_spec(&spec, "slow");
	t0 = mono_now_ms();
	cr_assert_eq(kube_exec_run(&spec, &o, &cred, &st), CADRE_ETIMEDOUT);
	cr_assert_lt(mono_now_ms() - t0, 1500);
	cr_assert(strstr(st.message, "did not finish in time"), "%s", st.message);
	o.timeout_ms = -1;
	cr_assert_eq(kube_exec_run(&spec, &o, &cred, &st), 0, "%s", st.message);
	cr_assert_str_eq(cred.token, "slow-1");
	kube_exec_cred_release(&cred);
	kube_exec_release(&spec);
}

struct credentials_call {
	struct kube_config *cfg;
	char *token;
	int64_t done_ms;
};

static void *call_credentials(void *arg)
{
	struct credentials_call *c = arg;

	c->token = token_now(c->cfg);
	c->done_ms = mono_now_ms();
	return NULL;
}

Test(exec, a_plugin_run_holds_up_only_the_callers_that_need_its_credential, .timeout = 30)
{
	char dir[] = "/tmp/cadre-exec-XXXXXX", *path;
	struct credentials_call a = { 0 }, b = { 0 };
	pthread_t ta, tb;
	struct kube_status st;
	int64_t t0, took;

	state_dir(dir);
	setenv("PLUGIN_SLEEP", "1.5", 1);
	path = exec_kubeconfig(dir, "slow", "", "      interactiveMode: Never\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &a.cfg, &st), 0, "%s", st.message);
	b.cfg = a.cfg;
	t0 = mono_now_ms();
	pthread_create(&ta, NULL, call_credentials, &a);
	usleep(300 * 1000);
	pthread_create(&tb, NULL, call_credentials, &b);
	usleep(100 * 1000);
	/* another thread's use of the config does not wait for the plugin */
	kube_config_set_clock(a.cfg, NULL, NULL);
	took = mono_now_ms() - t0;
	cr_assert_lt(took, 1000, "kube_config_set_clock waited %lld ms", (long long)took);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	/* the second caller waited for the run under way and got its credential */
	cr_assert_str_eq(a.token, "slow-1");
	cr_assert_str_eq(b.token, "slow-1");
	cr_assert_eq(runs(dir), 1);
	cr_assert_geq(b.done_ms - t0, 1400);
	free(a.token);
	free(b.token);
	kube_config_free(a.cfg);
	free(path);
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
