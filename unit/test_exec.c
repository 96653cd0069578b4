#include <criterion/criterion.h>
#include <ftw.h>
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
	cr_assert_eq(kube_exec_run(&spec, "https://api.example:6443", "PEM", &cred, &st), 0,
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
	cr_assert_eq(kube_exec_run(&spec, NULL, NULL, &cred, &st), 0, "%s", st.message);
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
	cr_assert_eq(kube_exec_run(&spec, NULL, NULL, &cred, &st), CADRE_EIO);
	cr_assert(strstr(st.message, "exited with status 3"), "%s", st.message);
	cr_assert(strstr(st.message, "run cloud login"), "%s", st.message);
	cr_assert_null(cred.token);

	free(spec.args[0]);
	spec.args[0] = strdup("garbage");
	cr_assert_eq(kube_exec_run(&spec, NULL, NULL, &cred, &st), CADRE_EPARSE);
	cr_assert(strstr(st.message, "not a JSON object"), "%s", st.message);

	free(spec.command);
	spec.command = strdup("cadre-no-such-plugin");
	cr_assert_eq(kube_exec_run(&spec, NULL, NULL, &cred, &st), CADRE_EIO);
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
