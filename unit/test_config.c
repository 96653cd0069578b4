#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <unistd.h>

#include "base/err.h"
#include "kube/config.h"

#define TESTDATA CADRE_SOURCE_DIR "/unit/testdata/kube"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *data;
	long n;

	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	data = calloc(1, (size_t)n + 1);
	cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return data;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static int remove_entry(const char *path, const struct stat *sb, int flag,
			struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(const char *dir)
{
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void assert_same_as_file(const char *data, size_t len, const char *name)
{
	char path[512], *want;

	snprintf(path, sizeof(path), "%s/%s", TESTDATA, name);
	want = slurp(path);
	cr_assert_not_null(data, "%s not loaded", name);
	cr_assert_eq(len, strlen(want), "%s: %zu bytes, want %zu", name, len, strlen(want));
	cr_assert_str_eq(data, want);
	free(want);
}

Test(config, certificate_files_are_read_relative_to_the_kubeconfig)
{
	struct kube_config *cfg;
	struct kube_status st;

	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/files.yaml", NULL, &cfg, &st), 0,
		     "%s", st.message);
	cr_assert_str_eq(cfg->server, "https://127.0.0.1:6443");
	cr_assert_str_eq(cfg->context, "files");
	cr_assert_str_eq(cfg->namespace, "ml");
	assert_same_as_file(cfg->ca_pem, cfg->ca_len, "ca.crt");
	assert_same_as_file(cfg->cert_pem, cfg->cert_len, "client.crt");
	assert_same_as_file(cfg->key_pem, cfg->key_len, "client.key");
	cr_assert_null(cfg->token);
	cr_assert_not(cfg->insecure);
	cr_assert(strstr(cfg->source, "files.yaml"));
	kube_config_free(cfg);
}

Test(config, inline_base64_data_decodes_to_the_same_pem)
{
	struct kube_config *cfg;
	struct kube_config_creds creds;
	struct kube_status st;

	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/data.yaml", NULL, &cfg, &st), 0,
		     "%s", st.message);
	cr_assert_str_eq(cfg->server, "https://10.0.0.1:6443");
	cr_assert_str_eq(cfg->namespace, "default");
	assert_same_as_file(cfg->ca_pem, cfg->ca_len, "ca.crt");
	assert_same_as_file(cfg->cert_pem, cfg->cert_len, "client.crt");
	assert_same_as_file(cfg->key_pem, cfg->key_len, "client.key");
	cr_assert_eq(kube_config_credentials(cfg, &creds, &st), 0);
	assert_same_as_file(creds.cert_pem, creds.cert_len, "client.crt");
	assert_same_as_file(creds.key_pem, creds.key_len, "client.key");
	cr_assert_null(creds.token);
	kube_config_creds_release(&creds);
	kube_config_free(cfg);
}

Test(config, a_static_token_is_sent_as_it_is)
{
	struct kube_config *cfg;
	struct kube_config_creds creds;
	struct kube_status st;

	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/tokens.yaml", NULL, &cfg, &st), 0,
		     "%s", st.message);
	cr_assert_str_eq(cfg->context, "dev");
	cr_assert_str_eq(cfg->server, "http://127.0.0.1:8080");
	cr_assert_eq(kube_config_credentials(cfg, &creds, &st), 0);
	cr_assert_str_eq(creds.token, "alice-token");
	cr_assert_null(creds.cert_pem);
	cr_assert_not(kube_config_invalidate(cfg));
	kube_config_creds_release(&creds);
	kube_config_free(cfg);
}

Test(config, the_context_override_picks_a_token_file_user)
{
	struct kube_config *cfg;
	struct kube_config_creds creds;
	struct kube_status st;

	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/tokens.yaml", "prod", &cfg, &st), 0,
		     "%s", st.message);
	cr_assert_str_eq(cfg->context, "prod");
	cr_assert_str_eq(cfg->namespace, "prod");
	cr_assert_str_eq(cfg->token_file, TESTDATA "/robot.token");
	cr_assert_eq(kube_config_credentials(cfg, &creds, &st), 0);
	cr_assert_str_eq(creds.token, "robot-token");
	kube_config_creds_release(&creds);
	kube_config_free(cfg);
}

Test(config, a_context_without_user_sends_no_credentials)
{
	struct kube_config *cfg;
	struct kube_config_creds creds;
	struct kube_status st;

	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/tokens.yaml", "anonymous", &cfg,
						 &st), 0, "%s", st.message);
	cr_assert_eq(kube_config_credentials(cfg, &creds, &st), 0);
	cr_assert_null(creds.token);
	cr_assert_null(creds.cert_pem);
	kube_config_creds_release(&creds);
	kube_config_free(cfg);
}

Test(config, missing_context_user_and_cluster_are_named_in_the_error)
{
	struct kube_config *cfg = (struct kube_config *)1;
	struct kube_status st;

	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/tokens.yaml", "no-user", &cfg, &st),
		     CADRE_ENOTFOUND);
	cr_assert_null(cfg);
	cr_assert_str_eq(st.message, "kubeconfig " TESTDATA "/tokens.yaml: context \"no-user\" "
			 "names user \"bob\" which is not defined");

	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/tokens.yaml", "no-cluster", &cfg, &st),
		     CADRE_ENOTFOUND);
	cr_assert_str_eq(st.message, "kubeconfig " TESTDATA "/tokens.yaml: context \"no-cluster\" "
			 "names cluster \"nowhere\" which is not defined");

	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/tokens.yaml", "staging", &cfg, &st),
		     CADRE_ENOTFOUND);
	cr_assert_str_eq(st.message, "kubeconfig " TESTDATA "/tokens.yaml: context \"staging\" "
			 "is not defined");
}

Test(config, insecure_skip_tls_verify_is_taken_from_the_kubeconfig)
{
	struct kube_config *cfg;
	struct kube_status st;

	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/insecure.yaml", NULL, &cfg, &st), 0,
		     "%s", st.message);
	cr_assert(cfg->insecure);
	cr_assert_null(cfg->ca_pem);
	kube_config_free(cfg);

	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/files.yaml", NULL, &cfg, &st), 0);
	cr_assert_not(cfg->insecure);
	kube_config_free(cfg);
}

Test(config, a_kubeconfig_list_merges_first_definition_wins)
{
	struct kube_config *cfg;
	struct kube_status st;

	/* A first: its current-context and its "shared" cluster; user u from B. */
	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/merge-a.yaml:" TESTDATA "/merge-b.yaml",
						 NULL, &cfg, &st), 0, "%s", st.message);
	cr_assert_str_eq(cfg->context, "one");
	cr_assert_str_eq(cfg->server, "https://a.example:6443");
	cr_assert_str_eq(cfg->token, "u-from-b");
	kube_config_free(cfg);

	/* B first: B's current-context. */
	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/merge-b.yaml:" TESTDATA "/merge-a.yaml",
						 NULL, &cfg, &st), 0, "%s", st.message);
	cr_assert_str_eq(cfg->context, "two");
	cr_assert_str_eq(cfg->server, "https://only-b.example:6443");
	cr_assert_str_eq(cfg->namespace, "from-b");
	kube_config_free(cfg);

	/* B first, context one: A's context, but B's definition of "shared". */
	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/merge-b.yaml:" TESTDATA "/merge-a.yaml",
						 "one", &cfg, &st), 0, "%s", st.message);
	cr_assert_str_eq(cfg->server, "https://b.example:6443");
	kube_config_free(cfg);
}

Test(config, missing_files_in_a_list_are_skipped_but_not_all_of_them)
{
	struct kube_config *cfg;
	struct kube_status st;

	cr_assert_eq(kube_config_from_kubeconfig("/nonexistent/a:" TESTDATA "/merge-b.yaml::",
						 NULL, &cfg, &st), 0, "%s", st.message);
	cr_assert_str_eq(cfg->context, "two");
	kube_config_free(cfg);

	cr_assert_eq(kube_config_from_kubeconfig("/nonexistent/a:/nonexistent/b", NULL, &cfg, &st),
		     CADRE_ENOTFOUND);
	cr_assert(strstr(st.message, "none of the listed files exists"), "%s", st.message);

	cr_assert_eq(kube_config_from_kubeconfig("/nonexistent/only", NULL, &cfg, &st),
		     CADRE_ENOTFOUND);
	cr_assert_str_eq(st.message, "kubeconfig /nonexistent/only: no such file");
}

Test(config, invalid_yaml_names_the_file_and_line)
{
	struct kube_config *cfg;
	struct kube_status st;

	cr_assert_eq(kube_config_from_kubeconfig(TESTDATA "/bad-yaml.yaml", NULL, &cfg, &st),
		     CADRE_EPARSE);
	cr_assert(strstr(st.message, "bad-yaml.yaml: line "), "%s", st.message);
}

Test(config, unusable_users_and_clusters_are_refused_with_the_field)
{
	char dir[] = "/tmp/cadre-config-XXXXXX", path[256];
	struct kube_config *cfg;
	struct kube_status st;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/config", dir);

	write_file(dir, "config",
		   "current-context: c\n"
		   "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
		   "clusters: [{name: k, cluster: {server: 'https://k:6443'}}]\n"
		   "users: [{name: u, user: {client-certificate: missing.crt}}]\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &cfg, &st), CADRE_ENOTFOUND);
	cr_assert(strstr(st.message, "user \"u\": client-certificate"), "%s", st.message);
	cr_assert(strstr(st.message, "/missing.crt: no such file"), "%s", st.message);

	write_file(dir, "only.crt", "-----BEGIN CERTIFICATE-----\n");
	write_file(dir, "config",
		   "current-context: c\n"
		   "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
		   "clusters: [{name: k, cluster: {server: 'https://k:6443'}}]\n"
		   "users: [{name: u, user: {client-certificate: only.crt}}]\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &cfg, &st), CADRE_EINVAL);
	cr_assert(strstr(st.message, "client certificate without a client key"), "%s", st.message);

	write_file(dir, "config",
		   "current-context: c\n"
		   "contexts: [{name: c, context: {cluster: k}}]\n"
		   "clusters: [{name: k, cluster: {certificate-authority-data: 'not base64!'}}]\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &cfg, &st), CADRE_EINVAL);
	cr_assert(strstr(st.message, "cluster \"k\" has no server"), "%s", st.message);

	/* A URL with no host after the scheme (fuzz/regressions/kubeconfig). */
	write_file(dir, "config",
		   "current-context: c\n"
		   "contexts: [{name: c, context: {cluster: k}}]\n"
		   "clusters: [{name: k, cluster: {server: 'https://'}}]\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &cfg, &st), CADRE_EINVAL);
	cr_assert(strstr(st.message, "server \"https://\" is not an http(s) URL with a host"), "%s",
		  st.message);

	/* The message stays one line whatever the values hold (fuzz/regressions/kubeconfig). */
	write_file(dir, "config",
		   "current-context: c\n"
		   "contexts: [{name: c, context: {cluster: k}}]\n"
		   "clusters: [{name: k, cluster: {server: \"ftp://a\\nb\\tc\"}}]\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &cfg, &st), CADRE_EINVAL);
	cr_assert(strstr(st.message, "server \"ftp://a b c\""), "%s", st.message);

	write_file(dir, "config",
		   "current-context: c\n"
		   "contexts: [{name: c, context: {cluster: k}}]\n"
		   "clusters: [{name: k, cluster: {server: 'https://k', "
		   "certificate-authority-data: 'not base64!'}}]\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &cfg, &st), CADRE_EPARSE);
	cr_assert(strstr(st.message, "certificate-authority-data is not valid base64"), "%s",
		  st.message);

	write_file(dir, "config",
		   "current-context: c\n"
		   "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
		   "clusters: [{name: k, cluster: {server: 'https://k'}}]\n"
		   "users: [{name: u, user: {username: admin, password: hunter2}}]\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &cfg, &st), CADRE_EINVAL);
	cr_assert(strstr(st.message, "basic authentication is not supported"), "%s", st.message);
	cr_assert_null(strstr(st.message, "hunter2"));

	write_file(dir, "config",
		   "contexts: [{name: c, context: {cluster: k}}]\n"
		   "clusters: [{name: k, cluster: {server: 'https://k'}}]\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, NULL, &cfg, &st), CADRE_ENOTFOUND);
	cr_assert(strstr(st.message, "no current-context"), "%s", st.message);
	rm_tree(dir);
}

Test(config, yaml_anchors_are_understood_and_a_quoted_boolean_is_refused)
{
	char dir[] = "/tmp/cadre-config-XXXXXX", path[256];
	struct kube_config *cfg;
	struct kube_status st;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/config", dir);
	write_file(dir, "config",
		   "current-context: c\n"
		   "contexts: [{name: c, context: &ctx {cluster: k, user: u, namespace: anchored}},"
		   " {name: d, context: *ctx}]\n"
		   "clusters: [{name: k, cluster: {server: 'https://k', insecure-skip-tls-verify: 'true'}}]\n"
		   "users: [{name: u, user: {token: \"t\"}}]\n");
	/* A quoted 'true' is a string, not the flag: refused, as kubectl refuses it. */
	cr_assert_eq(kube_config_from_kubeconfig(path, "d", &cfg, &st), CADRE_EPARSE);
	cr_assert(strstr(st.message, "cluster \"k\": insecure-skip-tls-verify must be true or "
			 "false"), "%s", st.message);
	cr_assert_null(cfg);
	write_file(dir, "config",
		   "current-context: c\n"
		   "contexts: [{name: c, context: &ctx {cluster: k, user: u, namespace: anchored}},"
		   " {name: d, context: *ctx}]\n"
		   "clusters: [{name: k, cluster: {server: 'https://k'}}]\n"
		   "users: [{name: u, user: {token: \"t\"}}]\n");
	cr_assert_eq(kube_config_from_kubeconfig(path, "d", &cfg, &st), 0, "%s", st.message);
	cr_assert_str_eq(cfg->namespace, "anchored");
	cr_assert_not(cfg->insecure);
	kube_config_free(cfg);
	rm_tree(dir);
}

Test(config, load_prefers_the_flag_then_kubeconfig_env_then_in_cluster)
{
	struct kube_config_opts opts = { .kubeconfig = TESTDATA "/files.yaml" };
	struct kube_config *cfg;
	struct kube_status st;

	setenv("KUBECONFIG", TESTDATA "/tokens.yaml", 1);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	cr_assert_eq(kube_config_load(&opts, &cfg, &st), 0, "%s", st.message);
	cr_assert_str_eq(cfg->context, "files");
	kube_config_free(cfg);

	opts.kubeconfig = NULL;
	opts.context = "prod";
	cr_assert_eq(kube_config_load(&opts, &cfg, &st), 0, "%s", st.message);
	cr_assert_str_eq(cfg->context, "prod");
	kube_config_free(cfg);

	unsetenv("KUBECONFIG");
	opts.sa_dir = "/nonexistent/sa";
	cr_assert_eq(kube_config_load(&opts, &cfg, &st), CADRE_ENOTFOUND);
	cr_assert(strstr(st.message, "in-cluster /nonexistent/sa/ca.crt"), "%s", st.message);

	unsetenv("KUBERNETES_SERVICE_HOST");
	setenv("HOME", "/nonexistent/home", 1);
	cr_assert_eq(kube_config_load(NULL, &cfg, &st), CADRE_ENOTFOUND);
	cr_assert_str_eq(st.message, "kubeconfig /nonexistent/home/.kube/config: no such file");
}

/* ---- in-cluster ---- */

struct fake_wall {
	int64_t now_ms;
};

static int64_t fake_wall_now(void *ctx)
{
	return ((struct fake_wall *)ctx)->now_ms;
}

static void make_sa_dir(char *dir)
{
	cr_assert(mkdtemp(dir));
	write_file(dir, "token", "token-1\n");
	write_file(dir, "namespace", "cadre-system");
	write_file(dir, "ca.crt", "-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n");
}

Test(config, in_cluster_reads_the_service_account_directory)
{
	char dir[] = "/tmp/cadre-sa-XXXXXX";
	struct kube_config *cfg;
	struct kube_config_creds creds;
	struct kube_status st;

	make_sa_dir(dir);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	cr_assert_eq(kube_config_in_cluster(dir, &cfg, &st), 0, "%s", st.message);
	cr_assert_str_eq(cfg->server, "https://10.96.0.1:443");
	cr_assert_str_eq(cfg->namespace, "cadre-system");
	cr_assert_str_eq(cfg->ca_pem, "-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n");
	cr_assert_not(cfg->insecure);
	cr_assert_eq(kube_config_credentials(cfg, &creds, &st), 0);
	cr_assert_str_eq(creds.token, "token-1");
	kube_config_creds_release(&creds);
	kube_config_free(cfg);

	/* The directory may also come from CADRE_SA_DIR; IPv6 gets brackets. */
	setenv("CADRE_SA_DIR", dir, 1);
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	cr_assert_eq(kube_config_in_cluster(NULL, &cfg, &st), 0, "%s", st.message);
	cr_assert_str_eq(cfg->server, "https://[fd00::1]:443");
	kube_config_free(cfg);
	rm_tree(dir);
}

Test(config, in_cluster_token_is_reread_every_minute_and_after_invalidate)
{
	char dir[] = "/tmp/cadre-sa-XXXXXX", token[256];
	struct fake_wall wall = { 1700000000000 };
	struct kube_config *cfg;
	struct kube_config_creds creds;
	struct kube_status st;

	make_sa_dir(dir);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	cr_assert_eq(kube_config_in_cluster(dir, &cfg, &st), 0, "%s", st.message);
	kube_config_set_clock(cfg, fake_wall_now, &wall);
	cr_assert_eq(kube_config_credentials(cfg, &creds, &st), 0);
	cr_assert_str_eq(creds.token, "token-1");
	kube_config_creds_release(&creds);

	/* The kubelet rotates the projected token. */
	write_file(dir, "token", "token-2\n");
	wall.now_ms += 59 * 1000;
	kube_config_credentials(cfg, &creds, &st);
	cr_assert_str_eq(creds.token, "token-1", "re-read too early");
	kube_config_creds_release(&creds);
	wall.now_ms += 1000;
	kube_config_credentials(cfg, &creds, &st);
	cr_assert_str_eq(creds.token, "token-2");
	kube_config_creds_release(&creds);

	/* After a 401 the file is read again at once. */
	write_file(dir, "token", "token-3");
	cr_assert(kube_config_invalidate(cfg));
	kube_config_credentials(cfg, &creds, &st);
	cr_assert_str_eq(creds.token, "token-3");
	kube_config_creds_release(&creds);

	/* A token file missing mid-rotation: the last token goes on working. */
	snprintf(token, sizeof(token), "%s/token", dir);
	cr_assert_eq(unlink(token), 0);
	kube_config_invalidate(cfg);
	cr_assert_eq(kube_config_credentials(cfg, &creds, &st), 0);
	cr_assert_str_eq(creds.token, "token-3");
	kube_config_creds_release(&creds);
	kube_config_free(cfg);
	rm_tree(dir);
}

Test(config, in_cluster_errors_name_what_is_missing)
{
	char dir[] = "/tmp/cadre-sa-XXXXXX", token[256];
	struct kube_config *cfg;
	struct kube_status st;

	make_sa_dir(dir);
	unsetenv("KUBERNETES_SERVICE_HOST");
	cr_assert_eq(kube_config_in_cluster(dir, &cfg, &st), CADRE_ENOTFOUND);
	cr_assert(strstr(st.message, "KUBERNETES_SERVICE_HOST"), "%s", st.message);

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	snprintf(token, sizeof(token), "%s/token", dir);
	unlink(token);
	cr_assert_eq(kube_config_in_cluster(dir, &cfg, &st), CADRE_ENOTFOUND);
	cr_assert_null(cfg);
	cr_assert(strstr(st.message, token), "%s", st.message);
	rm_tree(dir);
}

/* Load dir/config written from text; the error code. */
static int load_text(const char *dir, const char *text, struct kube_config **cfg,
		     struct kube_status *st)
{
	char path[256];

	write_file(dir, "config", text);
	snprintf(path, sizeof(path), "%s/config", dir);
	return kube_config_from_kubeconfig(path, NULL, cfg, st);
}

#define HEAD "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"

Test(config, every_field_cadre_cannot_honour_is_refused_by_name)
{
	static const struct {
		const char *text, *says;
	} cases[] = {
		{ HEAD "clusters: [{name: k, cluster: {server: 'https://k', certificate-authoriti: x}}]\n"
		  "users: [{name: u, user: {token: t}}]\n",
		  "cluster \"k\": field \"certificate-authoriti\" is not one cadre knows" },
		{ HEAD "clusters: [{name: k, cluster: {server: 'https://k'}}]\n"
		  "users: [{name: u, user: {token: t, tokenfile: /x}}]\n",
		  "user \"u\": field \"tokenfile\" is not one cadre knows" },
		{ "current-context: c\ncontexts: [{name: c, context: {cluster: k, namespaces: x}}]\n"
		  "clusters: [{name: k, cluster: {server: 'https://k'}}]\n",
		  "context \"c\": field \"namespaces\" is not one cadre knows" },
		{ HEAD "clusters: [{name: k, cluster: {server: 'https://k'}}]\n"
		  "users: [{name: u, user: {exec: {command: x, apiVersion: "
		  "client.authentication.k8s.io/v1beta1, interactive: Never}}}]\n",
		  "exec of user \"u\": field \"interactive\" is not one cadre knows" },
		{ HEAD "clusters: [{name: k, cluster: {server: 'https://k'}}]\n"
		  "users: [{name: u, user: {auth-provider: {name: oidc}}}]\n",
		  "user \"u\": auth-provider is not supported" },
		{ HEAD "clusters: [{name: k, cluster: {server: 'https://k'}}]\n"
		  "users: [{name: u, user: {password: hunter2}}]\n",
		  "user \"u\": password: basic authentication is not supported" },
		{ HEAD "clusters: [{name: k, cluster: {server: 'https://k', proxy-url: 'ftp://p:21'}}]\n"
		  "users: [{name: u, user: {token: t}}]\n",
		  "cluster \"k\": proxy-url \"ftp://p:21\": the scheme must be http, https or socks5" },
		{ HEAD "clusters: [{name: k, cluster: {server: 'https://k', proxy-url: "
		  "'socks5h://me:secret@p:1080'}}]\n"
		  "users: [{name: u, user: {token: t}}]\n",
		  "proxy-url \"socks5h://p:1080\": the scheme must be" },
		{ HEAD "clusters: [{name: k, cluster: {server: 'https://k', disable-compression: "
		  "'yes'}}]\nusers: [{name: u, user: {token: t}}]\n",
		  "cluster \"k\": disable-compression must be true or false" },
		{ HEAD "clusters: [{name: k, cluster: {server: 'https://k'}}]\n"
		  "users: [{name: u, user: {token: t, as-groups: [admins]}}]\n",
		  "user \"u\": as-groups without as" },
		{ HEAD "clusters: [{name: k, cluster: {server: 'https://k'}}]\n"
		  "users: [{name: u, user: {token: t, as: \"bob\\r\\nX-Evil: 1\"}}]\n",
		  "user \"u\": as: every value must be a string without line breaks" },
		{ HEAD "clusters: [{name: k, cluster: {server: 'https://k'}}]\n"
		  "users: [{name: u, user: {token: t, as: bob, as-user-extra: {scopes: one}}}]\n",
		  "user \"u\": as-user-extra: every value must be" },
	};
	char dir[] = "/tmp/cadre-config-XXXXXX";
	struct kube_config *cfg;
	struct kube_status st;

	cr_assert(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_neq(load_text(dir, cases[i].text, &cfg, &st), 0, "case %zu loaded", i);
		cr_assert_null(cfg);
		cr_assert(strstr(st.message, cases[i].says), "case %zu: %s", i, st.message);
		cr_assert_null(strchr(st.message, '\n'), "one line: %s", st.message);
		cr_assert_null(strstr(st.message, "secret"), "%s", st.message);
		cr_assert_null(strstr(st.message, "hunter2"), "%s", st.message);
	}
	rm_tree(dir);
}

Test(config, impersonation_and_the_clusters_settings_are_read)
{
	char dir[] = "/tmp/cadre-config-XXXXXX";
	struct kube_config *cfg;
	struct kube_status st;

	cr_assert(mkdtemp(dir));
	cr_assert_eq(load_text(dir, HEAD
			       "clusters: [{name: k, cluster: {server: 'https://k', proxy-url: "
			       "'socks5://bastion:1080', disable-compression: true, "
			       "tls-server-name: api.internal, extensions: [{name: x, extension: {}}]}}]\n"
			       "users: [{name: u, user: {token: t, as: jane, as-uid: '1234', "
			       "as-groups: [devs, 'ml team'], as-user-extra: {'example.com/scope%': "
			       "[a, b], reason: [debugging]}, extensions: []}}]\n", &cfg, &st), 0,
		     "%s", st.message);
	cr_assert_str_eq(cfg->proxy_url, "socks5://bastion:1080");
	cr_assert(cfg->disable_compression);
	cr_assert_str_eq(cfg->tls_server_name, "api.internal");
	cr_assert_eq(cfg->nimpersonate, 7);
	cr_assert_str_eq(cfg->impersonate[0], "Impersonate-User: jane");
	cr_assert_str_eq(cfg->impersonate[1], "Impersonate-Uid: 1234");
	cr_assert_str_eq(cfg->impersonate[2], "Impersonate-Group: devs");
	cr_assert_str_eq(cfg->impersonate[3], "Impersonate-Group: ml team");
	/* client-go escapes a key byte that may not be in a header name, and '%' */
	cr_assert_str_eq(cfg->impersonate[4], "Impersonate-Extra-example.com%2Fscope%25: a");
	cr_assert_str_eq(cfg->impersonate[5], "Impersonate-Extra-example.com%2Fscope%25: b");
	cr_assert_str_eq(cfg->impersonate[6], "Impersonate-Extra-reason: debugging");
	kube_config_free(cfg);
	rm_tree(dir);
}

struct wall {
	int64_t now_ms;
};

static int64_t wall_now(void *ctx)
{
	return ((struct wall *)ctx)->now_ms;
}

static void copy_file(const char *from, const char *dir, const char *name)
{
	char *text = slurp(from);

	write_file(dir, name, text);
	free(text);
}

/* The credentials' CA and certificate now start with the files' (the test's PEMs differ early). */
static void assert_creds_are(struct kube_config *cfg, const char *ca, const char *cert,
			     const char *key)
{
	struct kube_config_creds creds;
	struct kube_status st;
	char *want_ca = slurp(ca), *want_cert = slurp(cert), *want_key = slurp(key);

	cr_assert_eq(kube_config_credentials(cfg, &creds, &st), 0, "%s", st.message);
	cr_assert_str_eq(creds.ca_pem, want_ca);
	cr_assert_str_eq(creds.cert_pem, want_cert);
	cr_assert_str_eq(creds.key_pem, want_key);
	kube_config_creds_release(&creds);
	free(want_ca);
	free(want_cert);
	free(want_key);
}

Test(config, rotated_certificate_key_and_ca_files_are_read_again)
{
	char dir[] = "/tmp/cadre-config-XXXXXX";
	struct wall wall = { 1700000000000 };
	struct kube_config *cfg;
	struct kube_status st;

	cr_assert(mkdtemp(dir));
	copy_file(TESTDATA "/ca.crt", dir, "ca.pem");
	copy_file(TESTDATA "/client.crt", dir, "tls.crt");
	copy_file(TESTDATA "/client.key", dir, "tls.key");
	cr_assert_eq(load_text(dir, HEAD
			       "clusters: [{name: k, cluster: {server: 'https://k', "
			       "certificate-authority: ca.pem}}]\n"
			       "users: [{name: u, user: {client-certificate: tls.crt, "
			       "client-key: tls.key}}]\n", &cfg, &st), 0, "%s", st.message);
	kube_config_set_clock(cfg, wall_now, &wall);
	assert_creds_are(cfg, TESTDATA "/ca.crt", TESTDATA "/client.crt", TESTDATA "/client.key");

	/* a new CA bundle (here: the server's certificate stands for one) */
	copy_file(TESTDATA "/server.crt", dir, "ca.pem");
	wall.now_ms += KUBE_CONFIG_FILE_CHECK_MS;
	assert_creds_are(cfg, TESTDATA "/server.crt", TESTDATA "/client.crt", TESTDATA "/client.key");

	/* half a rotation: the new certificate without its key keeps the old pair */
	copy_file(TESTDATA "/server.crt", dir, "tls.crt");
	wall.now_ms += KUBE_CONFIG_FILE_CHECK_MS;
	assert_creds_are(cfg, TESTDATA "/server.crt", TESTDATA "/client.crt", TESTDATA "/client.key");
	/* the key follows: the new pair */
	copy_file(TESTDATA "/server.key", dir, "tls.key");
	wall.now_ms += KUBE_CONFIG_FILE_CHECK_MS;
	assert_creds_are(cfg, TESTDATA "/server.crt", TESTDATA "/server.crt", TESTDATA "/server.key");
	kube_config_free(cfg);
	rm_tree(dir);
}
