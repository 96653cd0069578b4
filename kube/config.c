#include "kube/config.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "kube/proxy.h"

/* Kubeconfigs, PEM files and tokens are small; these caps are generous. */
#define MAX_KUBECONFIG (16u << 20)
#define MAX_PEM (4u << 20)
#define MAX_TOKEN (1u << 20)
/* YAML nesting deeper than this is not a kubeconfig (and aliases can loop). */
#define MAX_YAML_DEPTH 64

/* One kubeconfig file of a KUBECONFIG list, parsed. */
struct kc_file {
	char *path;
	char *dir;       /* for resolving relative references */
	json_t *root;    /* new reference: the document as JSON */
};

struct kc_set {
	struct kc_file *files;
	size_t nfiles;
	char *label;     /* "kubeconfig /a" or "kubeconfig /a:/b", for messages */
};

static int64_t real_now_ms(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void free_secret(char *s, size_t len)
{
	if (!s)
		return;
	memset(s, 0, len);
	free(s);
}

/* Read a whole file into a new NUL-terminated string. 0, CADRE_ENOTFOUND, CADRE_EIO, CADRE_ETOOBIG. */
static int read_file(const char *path, size_t max, char **data, size_t *len)
{
	struct buf b;
	char tmp[8192];
	FILE *f;
	int err = 0;

	*data = NULL;
	f = fopen(path, "rb");
	if (!f)
		return errno == ENOENT ? CADRE_ENOTFOUND : CADRE_EIO;
	buf_init(&b, max);
	for (;;) {
		size_t n = fread(tmp, 1, sizeof(tmp), f);

		if (n && (err = buf_add(&b, tmp, n)))
			break;
		if (n < sizeof(tmp)) {
			if (ferror(f))
				err = CADRE_EIO;
			break;
		}
	}
	fclose(f);
	if (!err) {
		*data = buf_detach(&b, len);
		if (!*data)
			err = CADRE_ENOMEM;
	}
	if (b.data)
		memset(b.data, 0, b.len);
	buf_release(&b);
	return err;
}

/* ---- YAML to JSON ---------------------------------------------------- */

/*
 * Plain scalars that YAML 1.1 resolves as booleans and null become JSON
 * ones; every other scalar stays a string (nothing in a kubeconfig needs a
 * number), quoted "true" included.
 */
static json_t *yaml_scalar(const yaml_node_t *node)
{
	const char *v = (const char *)node->data.scalar.value;
	size_t len = node->data.scalar.length;

	if (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE"))
			return json_true();
		if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE"))
			return json_false();
		if (!len || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
		    !strcmp(v, "NULL"))
			return json_null();
	}
	return json_stringn(v, len);
}

static json_t *yaml_to_json(yaml_document_t *doc, yaml_node_t *node, int depth)
{
	json_t *out = NULL;

	if (!node || depth > MAX_YAML_DEPTH)
		return NULL;
	switch (node->type) {
	case YAML_SCALAR_NODE:
		return yaml_scalar(node);
	case YAML_SEQUENCE_NODE:
		out = json_array();
		for (yaml_node_item_t *i = node->data.sequence.items.start;
		     out && i < node->data.sequence.items.top; i++) {
			json_t *item = yaml_to_json(doc, yaml_document_get_node(doc, *i),
						    depth + 1);

			if (!item || json_array_append_new(out, item)) {
				json_decref(out);
				out = NULL;
			}
		}
		return out;
	case YAML_MAPPING_NODE:
		out = json_object();
		for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
		     out && p < node->data.mapping.pairs.top; p++) {
			yaml_node_t *key = yaml_document_get_node(doc, p->key);
			json_t *value;

			if (!key || key->type != YAML_SCALAR_NODE) {
				json_decref(out);
				return NULL;
			}
			value = yaml_to_json(doc, yaml_document_get_node(doc, p->value),
					     depth + 1);
			if (!value || json_object_setn_new(out,
					(const char *)key->data.scalar.value,
					key->data.scalar.length, value)) {
				json_decref(out);
				out = NULL;
			}
		}
		return out;
	default:
		return NULL;
	}
}

/* Parse YAML text (first document) into a new JSON reference. */
static int parse_yaml(const char *text, size_t len, json_t **out, char *why,
		      size_t why_len)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	int err = 0;

	*out = NULL;
	if (!yaml_parser_initialize(&parser))
		return CADRE_ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(why, why_len, "line %lu: %s",
			 (unsigned long)parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "invalid YAML");
		yaml_parser_delete(&parser);
		return CADRE_EPARSE;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		*out = json_object();        /* an empty file is an empty config */
	} else {
		*out = yaml_to_json(&doc, root, 0);
		if (!*out)
			snprintf(why, why_len, "not a kubeconfig (unsupported YAML structure)");
	}
	if (!*out)
		err = CADRE_EPARSE;
	else if (!json_is_object(*out)) {
		snprintf(why, why_len, "not a kubeconfig (the document is not a mapping)");
		json_decref(*out);
		*out = NULL;
		err = CADRE_EPARSE;
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return err;
}

/* ---- small helpers --------------------------------------------------- */

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* path if absolute, else dir/path; a new string. */
static char *resolve(const char *dir, const char *path)
{
	struct buf b;

	if (path[0] == '/')
		return strdup(path);
	buf_init(&b, 64 * 1024);
	if (buf_addf(&b, "%s/%s", dir, path)) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

/* Base64 (newlines allowed, as kubeconfigs wrap it) to a new NUL-terminated buffer. */
static int decode_base64(const char *in, char **out, size_t *out_len)
{
	EVP_ENCODE_CTX *ctx;
	size_t in_len = strlen(in);
	unsigned char *data;
	int n = 0, tail = 0, err = CADRE_EPARSE;

	*out = NULL;
	if (in_len > MAX_PEM * 2)
		return CADRE_ETOOBIG;
	data = malloc(in_len / 4 * 3 + 4);
	ctx = EVP_ENCODE_CTX_new();
	if (!data || !ctx) {
		err = CADRE_ENOMEM;
		goto out;
	}
	EVP_DecodeInit(ctx);
	if (EVP_DecodeUpdate(ctx, data, &n, (const unsigned char *)in, (int)in_len) < 0 ||
	    EVP_DecodeFinal(ctx, data + n, &tail) < 0)
		goto out;
	n += tail;
	data[n] = '\0';
	*out = (char *)data;
	*out_len = (size_t)n;
	data = NULL;
	err = 0;
out:
	EVP_ENCODE_CTX_free(ctx);
	free(data);
	return err;
}

static const char *get_str(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s && *s ? s : NULL;
}

/* ---- the merged view of a KUBECONFIG list ---------------------------- */

static void kc_set_release(struct kc_set *set)
{
	for (size_t i = 0; i < set->nfiles; i++) {
		free(set->files[i].path);
		free(set->files[i].dir);
		json_decref(set->files[i].root);
	}
	free(set->files);
	free(set->label);
	memset(set, 0, sizeof(*set));
}

/*
 * Read the files of a list (split on ':' when split). Missing files in a
 * list are skipped, as kubectl does; a single named file must exist.
 */
static int kc_set_load(struct kc_set *set, const char *paths, bool split,
		       struct kube_status *st)
{
	struct buf label;
	char *copy = strdup(paths), *p, *next, *text = NULL;
	size_t len, listed = 0;
	int err = 0;

	memset(set, 0, sizeof(*set));
	buf_init(&label, 64 * 1024);
	if (!copy)
		return kube_status_set(st, CADRE_ENOMEM, "out of memory");
	for (p = copy; p; p = next) {
		struct kc_file *files, *f;
		char why[256] = "";
		json_t *root;

		next = split ? strchr(p, ':') : NULL;
		if (next)
			*next++ = '\0';
		if (!*p)
			continue;
		listed++;
		err = read_file(p, MAX_KUBECONFIG, &text, &len);
		if (err == CADRE_ENOTFOUND && split && strchr(paths, ':')) {
			err = 0;
			continue;
		}
		if (err) {
			kube_status_set(st, err, "kubeconfig %s: %s", p,
					err == CADRE_ENOTFOUND ? "no such file"
					: err == CADRE_ETOOBIG ? "file too large"
					: "cannot read it");
			goto out;
		}
		err = parse_yaml(text, len, &root, why, sizeof(why));
		free(text);
		text = NULL;
		if (err) {
			kube_status_set(st, err, "kubeconfig %s: %s", p, why);
			goto out;
		}
		files = realloc(set->files, (set->nfiles + 1) * sizeof(*files));
		if (!files) {
			json_decref(root);
			err = kube_status_set(st, CADRE_ENOMEM, "out of memory");
			goto out;
		}
		set->files = files;
		f = &set->files[set->nfiles++];
		f->root = root;
		f->path = strdup(p);
		f->dir = dir_of(p);
		if (!f->path || !f->dir) {
			err = kube_status_set(st, CADRE_ENOMEM, "out of memory");
			goto out;
		}
	}
	if (!set->nfiles) {
		err = kube_status_set(st, CADRE_ENOTFOUND, "kubeconfig %s: %s", paths,
				      listed ? "none of the listed files exists"
				      : "no file named");
		goto out;
	}
	/* Messages about the merged view name every file that took part. */
	err = buf_adds(&label, "kubeconfig ");
	for (size_t i = 0; i < set->nfiles && !err; i++)
		err = buf_addf(&label, "%s%s", i ? ":" : "", set->files[i].path);
	if (!err)
		set->label = buf_detach(&label, NULL);
	if (err || !set->label)
		err = kube_status_set(st, CADRE_ENOMEM, "out of memory");
out:
	buf_release(&label);
	free(copy);
	if (err)
		kc_set_release(set);
	return err;
}

/*
 * Find the named entry of a list section ("clusters", "users", "contexts")
 * in the first file that defines it; *file says which. The entry's inner
 * object (entry[field]) is returned borrowed, or NULL.
 */
static const json_t *kc_find(const struct kc_set *set, const char *section,
			     const char *field, const char *name,
			     const struct kc_file **file)
{
	for (size_t i = 0; i < set->nfiles; i++) {
		const json_t *list = json_object_get(set->files[i].root, section);
		size_t j;
		json_t *entry;

		json_array_foreach(list, j, entry) {
			const char *n = json_string_value(json_object_get(entry, "name"));

			if (n && !strcmp(n, name)) {
				const json_t *inner = json_object_get(entry, field);

				*file = &set->files[i];
				return json_is_object(inner) ? inner : json_null();
			}
		}
	}
	return NULL;
}

static const char *kc_current_context(const struct kc_set *set)
{
	for (size_t i = 0; i < set->nfiles; i++) {
		const char *c = get_str(set->files[i].root, "current-context");

		if (c)
			return c;
	}
	return NULL;
}

/*
 * PEM from either "<field>-data" (base64) or "<field>" (a file relative to
 * the kubeconfig). The data form wins when both are set, as in client-go.
 * For the file form *file_out (when not NULL) gets its resolved path, so it
 * can be read again when it changes.
 */
static int load_pem(const struct kc_file *file, const json_t *obj,
		    const char *what, const char *name, const char *field,
		    char **pem, size_t *len, char **file_out, struct kube_status *st)
{
	char data_field[64], *path = NULL;
	const char *data, *ref;
	int err;

	*pem = NULL;
	*len = 0;
	snprintf(data_field, sizeof(data_field), "%s-data", field);
	data = get_str(obj, data_field);
	ref = get_str(obj, field);
	if (data) {
		err = decode_base64(data, pem, len);
		if (err)
			return kube_status_set(st, err, "kubeconfig %s: %s \"%s\": %s is not valid base64",
					       file->path, what, name, data_field);
		return 0;
	}
	if (!ref)
		return 0;
	path = resolve(file->dir, ref);
	if (!path)
		return kube_status_set(st, CADRE_ENOMEM, "out of memory");
	err = read_file(path, MAX_PEM, pem, len);
	if (err)
		kube_status_set(st, err, "kubeconfig %s: %s \"%s\": %s %s: %s", file->path,
				what, name, field, path,
				err == CADRE_ENOTFOUND ? "no such file" : "cannot read it");
	if (!err && file_out) {
		*file_out = path;
		path = NULL;
	}
	free(path);
	return err;
}

/*
 * Refuse a field of obj that is not in known (NULL-terminated): what cadre
 * does not know it cannot honour, and a kubeconfig is never half-read.
 * what and name say where ("user \"bob\""). 0 or CADRE_EINVAL.
 */
static int known_fields(const struct kc_file *file, const char *what, const char *name,
			const json_t *obj, const char *const *known, struct kube_status *st)
{
	const char *key;
	json_t *value;

	json_object_foreach((json_t *)obj, key, value) {
		size_t i = 0;

		while (known[i] && strcmp(known[i], key))
			i++;
		if (!known[i])
			return kube_status_set(st, CADRE_EINVAL, "kubeconfig %s: %s \"%s\": field "
					       "\"%s\" is not one cadre knows, so it cannot honour it",
					       file->path, what, name, key);
	}
	return 0;
}

/* A value that goes into a header line must not end it. */
static bool header_safe(const char *s)
{
	for (; *s; s++)
		if (*s == '\r' || *s == '\n' || (unsigned char)*s < 0x20)
			return false;
	return true;
}

/* exec's interactiveMode into *out (client-go: v1 must say; v1beta1 defaults to IfAvailable). */
static int exec_mode(const struct kc_file *file, const char *user, const json_t *exec,
		     const char *version, enum kube_exec_interactive *out,
		     struct kube_status *st)
{
	const char *mode = get_str(exec, "interactiveMode");

	*out = KUBE_EXEC_IF_AVAILABLE;
	if (mode && !strcmp(mode, "Never"))
		*out = KUBE_EXEC_NEVER;
	else if (mode && !strcmp(mode, "Always"))
		*out = KUBE_EXEC_ALWAYS;
	else if (mode && strcmp(mode, "IfAvailable"))
		return kube_status_set(st, CADRE_EINVAL, "kubeconfig %s: user \"%s\": exec "
				       "interactiveMode \"%s\" is not Never, IfAvailable or Always",
				       file->path, user, mode);
	else if (!mode && !strcmp(version, KUBE_EXEC_V1))
		return kube_status_set(st, CADRE_EINVAL, "kubeconfig %s: user \"%s\": exec "
				       "interactiveMode must be set for %s (Never, IfAvailable or "
				       "Always)", file->path, user, KUBE_EXEC_V1);
	return 0;
}

/*
 * exec's args and env into spec. 0; CADRE_EPARSE (said in st) for an
 * entry of the wrong shape; CADRE_ENOMEM (for the caller to say).
 */
static int exec_lists(const struct kc_file *file, const char *user, const json_t *args,
		      const json_t *env, struct kube_exec *spec, struct kube_status *st)
{
	json_t *item;
	size_t i;

	if (json_array_size(args) &&
	    !(spec->args = calloc(json_array_size(args), sizeof(*spec->args))))
		return CADRE_ENOMEM;
	json_array_foreach(args, i, item) {
		if (!json_is_string(item))
			return kube_status_set(st, CADRE_EPARSE, "kubeconfig %s: user \"%s\": exec "
					       "args[%zu] is not a string", file->path, user, i);
		spec->args[spec->nargs] = strdup(json_string_value(item));
		if (!spec->args[spec->nargs++])
			return CADRE_ENOMEM;
	}
	if (json_array_size(env) &&
	    !(spec->env = calloc(json_array_size(env), sizeof(*spec->env))))
		return CADRE_ENOMEM;
	json_array_foreach(env, i, item) {
		const char *name = get_str(item, "name");
		const char *value = json_string_value(json_object_get(item, "value"));

		if (!name || !value)
			return kube_status_set(st, CADRE_EPARSE, "kubeconfig %s: user \"%s\": exec "
					       "env[%zu] needs name and value", file->path, user, i);
		spec->env[spec->nenv].name = strdup(name);
		spec->env[spec->nenv].value = strdup(value);
		spec->nenv++;
		if (!spec->env[spec->nenv - 1].name || !spec->env[spec->nenv - 1].value)
			return CADRE_ENOMEM;
	}
	return 0;
}

static int load_exec(const struct kc_file *file, const char *user,
		     const json_t *exec, struct kube_exec **out,
		     struct kube_status *st)
{
	struct kube_exec *spec;
	const char *command = get_str(exec, "command");
	const char *version = get_str(exec, "apiVersion");
	const json_t *args = json_object_get(exec, "args");
	const json_t *env = json_object_get(exec, "env");
	int err;

	static const char *const known[] = { "command", "args", "env", "apiVersion",
					     "installHint", "provideClusterInfo", "interactiveMode",
					     NULL };
	enum kube_exec_interactive interactive = KUBE_EXEC_IF_AVAILABLE;

	*out = NULL;
	if ((err = known_fields(file, "exec of user", user, exec, known, st)))
		return err;
	err = CADRE_ENOMEM;
	if (!command)
		return kube_status_set(st, CADRE_EINVAL, "kubeconfig %s: user \"%s\": exec has no command",
				       file->path, user);
	if (!version || (strcmp(version, KUBE_EXEC_V1) && strcmp(version, KUBE_EXEC_V1BETA1)))
		return kube_status_set(st, CADRE_EINVAL,
				       "kubeconfig %s: user \"%s\": exec apiVersion \"%s\" is not supported "
				       "(use %s or %s)", file->path, user, version ? version : "",
				       KUBE_EXEC_V1, KUBE_EXEC_V1BETA1);
	if ((err = exec_mode(file, user, exec, version, &interactive, st)))
		return err;
	err = CADRE_ENOMEM;
	if ((args && !json_is_array(args) && !json_is_null(args)) ||
	    (env && !json_is_array(env) && !json_is_null(env)))
		return kube_status_set(st, CADRE_EPARSE,
				       "kubeconfig %s: user \"%s\": exec args and env must be lists",
				       file->path, user);
	spec = calloc(1, sizeof(*spec));
	if (!spec)
		goto out;
	kube_exec_init(spec);
	spec->provide_cluster_info = json_is_true(json_object_get(exec, "provideClusterInfo"));
	spec->interactive = interactive;
	/* A relative command with a '/' is relative to the kubeconfig (client-go). */
	spec->command = (strchr(command, '/') && command[0] != '/')
		? resolve(file->dir, command) : strdup(command);
	spec->api_version = strdup(version);
	if (!spec->command || !spec->api_version)
		goto out;
	if (get_str(exec, "installHint") &&
	    !(spec->install_hint = strdup(get_str(exec, "installHint"))))
		goto out;
	if ((err = exec_lists(file, user, args, env, spec, st)))
		goto out;
	*out = spec;
	spec = NULL;
	err = 0;
out:
	/* Every failure not described above is an allocation that failed. */
	if (err == CADRE_ENOMEM)
		kube_status_set(st, err, "out of memory");
	if (spec) {
		kube_exec_release(spec);
		free(spec);
	}
	return err;
}

static struct kube_config *config_alloc(void)
{
	struct kube_config *cfg = calloc(1, sizeof(*cfg));

	if (!cfg)
		return NULL;
	if (pthread_mutex_init(&cfg->lock, NULL)) {
		free(cfg);
		return NULL;
	}
	if (pthread_cond_init(&cfg->exec_done, NULL)) {
		pthread_mutex_destroy(&cfg->lock);
		free(cfg);
		return NULL;
	}
	kube_exec_cred_init(&cfg->exec_cred);
	kube_status_clear(&cfg->exec_error);
	cfg->token_read_ms = INT64_MIN;
	cfg->files_checked_ms = INT64_MIN;
	cfg->exec_timeout_ms = KUBE_EXEC_TIMEOUT_MS;
	cfg->now_ms = real_now_ms;
	return cfg;
}

void kube_config_free(struct kube_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->server);
	free(cfg->source);
	free(cfg->context);
	free(cfg->namespace);
	free(cfg->ca_pem);
	free(cfg->cert_pem);
	free_secret(cfg->key_pem, cfg->key_len);
	free_secret(cfg->token, cfg->token ? strlen(cfg->token) : 0);
	free(cfg->token_file);
	if (cfg->exec) {
		kube_exec_release(cfg->exec);
		free(cfg->exec);
	}
	free(cfg->tls_server_name);
	free(cfg->proxy_url);
	for (size_t i = 0; i < cfg->nimpersonate; i++)
		free(cfg->impersonate[i]);
	free(cfg->impersonate);
	free(cfg->exec_cluster_config);
	free(cfg->ca_file);
	free(cfg->cert_file);
	free(cfg->key_file);
	free_secret(cfg->cached_token, cfg->cached_token ? strlen(cfg->cached_token) : 0);
	kube_exec_cred_release(&cfg->exec_cred);
	pthread_cond_destroy(&cfg->exec_done);
	pthread_mutex_destroy(&cfg->lock);
	free(cfg);
}

int kube_config_new(const char *server, struct kube_config **out)
{
	struct kube_config *cfg;

	*out = NULL;
	if (!server || !*server)
		return CADRE_EINVAL;
	cfg = config_alloc();
	if (!cfg)
		return CADRE_ENOMEM;
	cfg->server = strdup(server);
	cfg->source = strdup("explicit server");
	cfg->namespace = strdup("default");
	if (!cfg->server || !cfg->source || !cfg->namespace) {
		kube_config_free(cfg);
		return CADRE_ENOMEM;
	}
	*out = cfg;
	return 0;
}

/* strdup into *dst, or record ENOMEM. */
static int set_str(char **dst, const char *src, struct kube_status *st)
{
	*dst = strdup(src);
	return *dst ? 0 : kube_status_set(st, CADRE_ENOMEM, "out of memory");
}

/* Drop trailing '/' so paths can be appended. */
static void trim_server(char *server)
{
	size_t n = strlen(server);

	while (n > 0 && server[n - 1] == '/')
		server[--n] = '\0';
}

/* Append the header line "<name>: <value>" (value checked) to cfg->impersonate. */
static int add_impersonate(struct kube_config *cfg, const char *name, const char *value)
{
	char **v = realloc(cfg->impersonate, (cfg->nimpersonate + 1) * sizeof(*v));
	struct buf b;

	if (!v)
		return CADRE_ENOMEM;
	cfg->impersonate = v;
	buf_init(&b, 1u << 20);
	if (buf_addf(&b, "%s: %s", name, value)) {
		buf_release(&b);
		return CADRE_ENOMEM;
	}
	v[cfg->nimpersonate++] = buf_detach(&b, NULL);
	return v[cfg->nimpersonate - 1] ? 0 : CADRE_ENOMEM;
}

/*
 * An as-user-extra key in a header name, as client-go escapes it: every
 * byte that is not a token character, and '%', as %XX.
 */
static int extra_header_name(const char *key, struct buf *out)
{
	static const char token[] = "!#$&'*+-.^_`|~";
	int err = buf_adds(out, "Impersonate-Extra-");

	for (const unsigned char *k = (const unsigned char *)key; *k && !err; k++)
		err = isalnum(*k) || (*k < 0x80 && strchr(token, *k))
			? buf_add(out, (const char *)k, 1) : buf_addf(out, "%%%02X", *k);
	return err;
}

/*
 * The user's impersonation fields into header lines (cfg->impersonate), as
 * client-go sends them: Impersonate-User, -Uid, one Impersonate-Group per
 * group, one Impersonate-Extra-<key> per value.
 */
static int load_impersonation(struct kube_config *cfg, const struct kc_file *file,
			      const char *user_name, const json_t *user, struct kube_status *st)
{
	const json_t *as = json_object_get(user, "as"), *uid = json_object_get(user, "as-uid");
	const json_t *groups = json_object_get(user, "as-groups");
	const json_t *extra = json_object_get(user, "as-user-extra");
	const char *key, *bad = "as";
	json_t *v, *item;
	size_t i, j;
	int err = 0;

	if (json_is_null(as))
		as = NULL;
	if (json_is_null(uid))
		uid = NULL;
	if ((as && !json_is_string(as)) || (uid && !json_is_string(uid)) ||
	    (groups && !json_is_null(groups) && !json_is_array(groups)) ||
	    (extra && !json_is_null(extra) && !json_is_object(extra)))
		return kube_status_set(st, CADRE_EPARSE, "kubeconfig %s: user \"%s\": as and as-uid "
				       "must be strings, as-groups a list, as-user-extra a map of "
				       "lists", file->path, user_name);
	if (!as && (uid || json_array_size(groups) || json_object_size(extra)))
		return kube_status_set(st, CADRE_EINVAL, "kubeconfig %s: user \"%s\": %s without as: "
				       "a uid, groups or extra are only sent with the user to act as",
				       file->path, user_name, uid ? "as-uid" : json_array_size(groups)
				       ? "as-groups" : "as-user-extra");
	if (as) {
		bad = "as";
		err = header_safe(json_string_value(as))
			? add_impersonate(cfg, "Impersonate-User", json_string_value(as)) : CADRE_EINVAL;
	}
	if (!err && uid) {
		bad = "as-uid";
		err = header_safe(json_string_value(uid))
			? add_impersonate(cfg, "Impersonate-Uid", json_string_value(uid)) : CADRE_EINVAL;
	}
	bad = err ? bad : "as-groups";
	json_array_foreach(groups, i, item) {
		if (err)
			break;
		err = json_is_string(item) && header_safe(json_string_value(item))
			? add_impersonate(cfg, "Impersonate-Group", json_string_value(item))
			: CADRE_EINVAL;
	}
	bad = err ? bad : "as-user-extra";
	json_object_foreach((json_t *)extra, key, v) {
		struct buf name;

		if (err)
			break;
		if (!json_is_array(v)) {
			err = CADRE_EINVAL;
			break;
		}
		buf_init(&name, 64 * 1024);
		err = extra_header_name(key, &name);
		json_array_foreach(v, j, item) {
			if (err)
				break;
			err = json_is_string(item) && header_safe(json_string_value(item))
				? add_impersonate(cfg, name.data, json_string_value(item)) : CADRE_EINVAL;
		}
		buf_release(&name);
	}
	if (err == CADRE_ENOMEM)
		return kube_status_set(st, err, "out of memory");
	if (err)
		return kube_status_set(st, err, "kubeconfig %s: user \"%s\": %s: every value must be "
				       "a string without line breaks", file->path, user_name, bad);
	return 0;
}

/* The users[] entry's credentials into cfg. */
static int load_user(struct kube_config *cfg, const struct kc_file *user_file,
		     const char *user_name, const json_t *user,
		     struct kube_status *st)
{
	static const char *const known[] = {
		"client-certificate", "client-certificate-data", "client-key", "client-key-data",
		"token", "tokenFile", "as", "as-uid", "as-groups", "as-user-extra", "exec",
		"extensions", "username", "password", "auth-provider", NULL };
	const char *token, *token_file;
	const json_t *exec;
	int err;

	if (get_str(user, "username") || get_str(user, "password"))
		return kube_status_set(st, CADRE_EINVAL,
				       "kubeconfig %s: user \"%s\": %s: basic authentication is not "
				       "supported; use a token, a client certificate or an exec plugin",
				       user_file->path, user_name,
				       get_str(user, "username") ? "username" : "password");
	if (json_object_get(user, "auth-provider"))
		return kube_status_set(st, CADRE_EINVAL,
				       "kubeconfig %s: user \"%s\": auth-provider is not supported "
				       "(kubectl dropped its gcp and azure providers in 1.26); use the "
				       "provider's exec plugin (gke-gcloud-auth-plugin, kubelogin)",
				       user_file->path, user_name);
	if ((err = known_fields(user_file, "user", user_name, user, known, st)))
		return err;
	err = load_pem(user_file, user, "user", user_name, "client-certificate",
		       &cfg->cert_pem, &cfg->cert_len, &cfg->cert_file, st);
	if (!err)
		err = load_pem(user_file, user, "user", user_name, "client-key",
			       &cfg->key_pem, &cfg->key_len, &cfg->key_file, st);
	if (err)
		return err;
	if (!cfg->cert_pem != !cfg->key_pem)
		return kube_status_set(st, CADRE_EINVAL,
				       "kubeconfig %s: user \"%s\" has a client %s without a client %s",
				       user_file->path, user_name,
				       cfg->cert_pem ? "certificate" : "key",
				       cfg->cert_pem ? "key" : "certificate");
	token = get_str(user, "token");
	token_file = get_str(user, "tokenFile");
	if (token && !header_safe(token))
		return kube_status_set(st, CADRE_EINVAL, "kubeconfig %s: user \"%s\": token has a "
				       "line break in it", user_file->path, user_name);
	if (token && (err = set_str(&cfg->token, token, st)))
		return err;
	if (token_file) {
		cfg->token_file = resolve(user_file->dir, token_file);
		if (!cfg->token_file)
			return kube_status_set(st, CADRE_ENOMEM, "out of memory");
	}
	if ((err = load_impersonation(cfg, user_file, user_name, user, st)))
		return err;
	exec = json_object_get(user, "exec");
	if (exec && !json_is_null(exec) && !json_is_object(exec))
		return kube_status_set(st, CADRE_EPARSE, "kubeconfig %s: user \"%s\": exec is not "
				       "a map", user_file->path, user_name);
	if (json_is_object(exec))
		return load_exec(user_file, user_name, exec, &cfg->exec, st);
	return 0;
}

/* The cluster's exec extension (extensions[] entry "client.authentication.k8s.io/exec"). */
static int load_exec_extension(struct kube_config *cfg, const struct kc_file *file,
			       const char *cluster_name, const json_t *cluster,
			       struct kube_status *st)
{
	const json_t *list = json_object_get(cluster, "extensions");
	json_t *item;
	size_t i;

	if (list && !json_is_null(list) && !json_is_array(list))
		return kube_status_set(st, CADRE_EPARSE, "kubeconfig %s: cluster \"%s\": extensions "
				       "must be a list", file->path, cluster_name);
	json_array_foreach(list, i, item) {
		const char *name = get_str(item, "name");

		if (!name || strcmp(name, "client.authentication.k8s.io/exec"))
			continue;
		cfg->exec_cluster_config = json_dumps(json_object_get(item, "extension"),
						      JSON_COMPACT | JSON_ENCODE_ANY);
		if (!cfg->exec_cluster_config && json_object_get(item, "extension"))
			return kube_status_set(st, CADRE_ENOMEM, "out of memory");
	}
	return 0;
}

/* proxy-url: the schemes kubectl takes (http, https, socks5). */
static int load_proxy(struct kube_config *cfg, const struct kc_file *file,
		      const char *cluster_name, const json_t *cluster, struct kube_status *st)
{
	const char *url = get_str(cluster, "proxy-url");
	char why[128], shown[512];

	if (!url)
		return 0;
	kube_proxy_redact(url, shown, sizeof(shown));
	if (!strncasecmp(url, "socks5h://", 10))
		snprintf(why, sizeof(why), "the scheme must be http, https or socks5");
	else if (!kube_proxy_check(url, why, sizeof(why)))
		return set_str(&cfg->proxy_url, url, st);
	return kube_status_set(st, CADRE_EINVAL, "kubeconfig %s: cluster \"%s\": proxy-url \"%s\": "
			       "%s", file->path, cluster_name, shown, why);
}

/* A true/false field: absent is false; anything but a YAML boolean is refused, as kubectl does. */
static int get_bool(const struct kc_file *file, const char *what, const char *name,
		    const json_t *obj, const char *field, bool *out, struct kube_status *st)
{
	const json_t *v = json_object_get(obj, field);

	*out = json_is_true(v);
	if (!v || json_is_boolean(v) || json_is_null(v))
		return 0;
	return kube_status_set(st, CADRE_EPARSE, "kubeconfig %s: %s \"%s\": %s must be true or "
			       "false%s", file->path, what, name, field,
			       json_is_string(v) ? " (unquoted: a quoted one is a string)" : "");
}

/* The clusters[] entry into cfg. */
static int load_cluster(struct kube_config *cfg, const struct kc_file *file, const char *name,
			const json_t *cluster, struct kube_status *st)
{
	static const char *const known[] = {
		"server", "certificate-authority", "certificate-authority-data",
		"insecure-skip-tls-verify", "tls-server-name", "proxy-url", "disable-compression",
		"extensions", NULL };
	const char *server = get_str(cluster, "server"), *sni = get_str(cluster, "tls-server-name");
	int err;

	if ((err = known_fields(file, "cluster", name, cluster, known, st)))
		return err;
	if (!server)
		return kube_status_set(st, CADRE_EINVAL, "kubeconfig %s: cluster \"%s\" has no server",
				       file->path, name);
	if ((strncmp(server, "https://", 8) && strncmp(server, "http://", 7)) ||
	    !strstr(server, "://")[3] || strstr(server, "://")[3] == '/')
		return kube_status_set(st, CADRE_EINVAL,
				       "kubeconfig %s: cluster \"%s\": server \"%s\" is not an http(s) URL "
				       "with a host", file->path, name, server);
	if ((err = set_str(&cfg->server, server, st)))
		return err;
	trim_server(cfg->server);
	if (sni && !header_safe(sni))
		return kube_status_set(st, CADRE_EINVAL, "kubeconfig %s: cluster \"%s\": "
				       "tls-server-name is not a name", file->path, name);
	if (sni && (err = set_str(&cfg->tls_server_name, sni, st)))
		return err;
	if ((err = get_bool(file, "cluster", name, cluster, "insecure-skip-tls-verify",
			    &cfg->insecure, st)) ||
	    (err = get_bool(file, "cluster", name, cluster, "disable-compression",
			    &cfg->disable_compression, st)) ||
	    (err = load_proxy(cfg, file, name, cluster, st)) ||
	    (err = load_exec_extension(cfg, file, name, cluster, st)))
		return err;
	err = load_pem(file, cluster, "cluster", name, "certificate-authority", &cfg->ca_pem,
		       &cfg->ca_len, &cfg->ca_file, st);
	if (err)
		return err;
	if (cfg->insecure && cfg->ca_pem)
		/* kubectl refuses this combination too: which one was meant? */
		return kube_status_set(st, CADRE_EINVAL,
				       "kubeconfig %s: cluster \"%s\" sets both a certificate authority "
				       "and insecure-skip-tls-verify", file->path, name);
	if (cfg->insecure)
		log_warn("config", "kubeconfig %s: cluster \"%s\" sets insecure-skip-tls-verify: "
			 "the server's certificate will not be verified", file->path, name);
	return 0;
}

static int config_from_set(const struct kc_set *set, const char *context_name,
			   struct kube_config **out, struct kube_status *st)
{
	static const char *const known_context[] = { "cluster", "user", "namespace",
						     "extensions", NULL };
	const struct kc_file *ctx_file = NULL, *cluster_file = NULL, *user_file = NULL;
	const json_t *ctx, *cluster, *user = NULL;
	const char *cluster_name, *user_name, *ns;
	struct kube_config *cfg = NULL;
	const char *label = set->label;
	int err;

	*out = NULL;
	if (!context_name)
		context_name = kc_current_context(set);
	if (!context_name)
		return kube_status_set(st, CADRE_ENOTFOUND,
				       "%s: no current-context is set and no context was named",
				       label);
	ctx = kc_find(set, "contexts", "context", context_name, &ctx_file);
	if (!ctx)
		return kube_status_set(st, CADRE_ENOTFOUND, "%s: context \"%s\" is not defined",
				       label, context_name);
	if ((err = known_fields(ctx_file, "context", context_name, ctx, known_context, st)))
		return err;
	cluster_name = get_str(ctx, "cluster");
	if (!cluster_name)
		return kube_status_set(st, CADRE_EINVAL, "kubeconfig %s: context \"%s\" names no cluster",
				       ctx_file->path, context_name);
	cluster = kc_find(set, "clusters", "cluster", cluster_name, &cluster_file);
	if (!cluster)
		return kube_status_set(st, CADRE_ENOTFOUND,
				       "kubeconfig %s: context \"%s\" names cluster \"%s\" which is not defined",
				       ctx_file->path, context_name, cluster_name);
	user_name = get_str(ctx, "user");
	if (user_name) {
		user = kc_find(set, "users", "user", user_name, &user_file);
		if (!user)
			return kube_status_set(st, CADRE_ENOTFOUND,
					       "kubeconfig %s: context \"%s\" names user \"%s\" which is not defined",
					       ctx_file->path, context_name, user_name);
	}
	cfg = config_alloc();
	if (!cfg)
		return kube_status_set(st, CADRE_ENOMEM, "out of memory");
	ns = get_str(ctx, "namespace");
	if ((err = set_str(&cfg->source, label, st)) ||
	    (err = set_str(&cfg->context, context_name, st)) ||
	    (err = set_str(&cfg->namespace, ns ? ns : "default", st)) ||
	    (err = load_cluster(cfg, cluster_file, cluster_name, cluster, st)))
		goto out;
	if (user) {
		err = load_user(cfg, user_file, user_name, user, st);
		if (err)
			goto out;
	}
	*out = cfg;
	cfg = NULL;
out:
	kube_config_free(cfg);
	return err;
}

static int from_paths(const char *paths, bool split, const struct kube_config_opts *opts,
		      struct kube_config **out, struct kube_status *st)
{
	struct kc_set set;
	int err;

	*out = NULL;
	if (!paths || !*paths)
		return kube_status_set(st, CADRE_ENOTFOUND, "kubeconfig: no file named");
	err = kc_set_load(&set, paths, split, st);
	if (err)
		return err;
	err = config_from_set(&set, opts ? opts->context : NULL, out, st);
	kc_set_release(&set);
	if (!err && opts) {
		(*out)->exec_terminal = opts->exec_terminal;
		(*out)->exec_timeout_ms = opts->exec_timeout_ms ? opts->exec_timeout_ms
								: KUBE_EXEC_TIMEOUT_MS;
	}
	if (!err && (*out)->token_file) {
		struct kube_config_creds creds;

		/* Fail now, naming the file, rather than on the first request. */
		err = kube_config_credentials(*out, &creds, st);
		kube_config_creds_release(&creds);
		if (err) {
			kube_config_free(*out);
			*out = NULL;
		}
	}
	return err;
}

int kube_config_from_kubeconfig(const char *paths, const char *context,
				struct kube_config **out, struct kube_status *st)
{
	struct kube_config_opts opts = { .context = context };

	return from_paths(paths, true, &opts, out, st);
}

/* Read a service account file, trimmed; NULL-safe error text in st. */
static int read_sa_file(const char *dir, const char *name, size_t max,
			char **data, size_t *len, struct kube_status *st)
{
	struct buf path;
	int err;

	buf_init(&path, 64 * 1024);
	err = buf_addf(&path, "%s/%s", dir, name);
	if (!err)
		err = read_file(path.data, max, data, len);
	if (err)
		kube_status_set(st, err, "in-cluster %s: %s", buf_str(&path),
				err == CADRE_ENOTFOUND ? "no such file" : "cannot read it");
	buf_release(&path);
	return err;
}

static void trim_trailing_space(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

int kube_config_in_cluster(const char *sa_dir, struct kube_config **out,
			   struct kube_status *st)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	struct kube_config *cfg = NULL;
	struct kube_config_creds creds;
	struct buf b;
	char *ns = NULL;
	size_t len;
	int err;

	*out = NULL;
	buf_init(&b, 64 * 1024);
	if (!sa_dir)
		sa_dir = getenv("CADRE_SA_DIR");
	if (!sa_dir || !*sa_dir)
		sa_dir = KUBE_CONFIG_SA_DIR;
	if (!host || !*host || !port || !*port)
		return kube_status_set(st, CADRE_ENOTFOUND, "in-cluster: KUBERNETES_SERVICE_HOST "
				       "and KUBERNETES_SERVICE_PORT are not set");
	cfg = config_alloc();
	if (!cfg)
		return kube_status_set(st, CADRE_ENOMEM, "out of memory");
	/* An IPv6 service address needs brackets in a URL. */
	err = buf_addf(&b, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
	if (!err)
		cfg->server = buf_detach(&b, NULL);
	buf_reset(&b);
	if (!err)
		err = buf_addf(&b, "in-cluster %s", sa_dir);
	if (!err)
		cfg->source = buf_detach(&b, NULL);
	if (err || !cfg->server || !cfg->source) {
		err = kube_status_set(st, CADRE_ENOMEM, "out of memory");
		goto out;
	}
	buf_reset(&b);
	err = buf_addf(&b, "%s/token", sa_dir);
	if (!err)
		cfg->token_file = buf_detach(&b, NULL);
	if (err || !cfg->token_file) {
		err = kube_status_set(st, CADRE_ENOMEM, "out of memory");
		goto out;
	}
	err = read_sa_file(sa_dir, "ca.crt", MAX_PEM, &cfg->ca_pem, &cfg->ca_len, st);
	if (err)
		goto out;
	err = read_sa_file(sa_dir, "namespace", 4096, &ns, &len, st);
	if (err == CADRE_ENOTFOUND) {
		err = 0;
		if (st)
			kube_status_clear(st);
		ns = strdup("default");
	}
	if (err)
		goto out;
	if (!ns) {
		err = kube_status_set(st, CADRE_ENOMEM, "out of memory");
		goto out;
	}
	trim_trailing_space(ns);
	cfg->namespace = ns;
	err = kube_config_credentials(cfg, &creds, st);
	kube_config_creds_release(&creds);
	if (err)
		goto out;
	*out = cfg;
	cfg = NULL;
out:
	buf_release(&b);
	kube_config_free(cfg);
	return err;
}

int kube_config_load(const struct kube_config_opts *opts,
		     struct kube_config **out, struct kube_status *st)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	struct buf path;
	int err;

	*out = NULL;
	if (opts && opts->kubeconfig && *opts->kubeconfig)
		return from_paths(opts->kubeconfig, false, opts, out, st);
	if (env && *env)
		return from_paths(env, true, opts, out, st);
	if (getenv("KUBERNETES_SERVICE_HOST"))
		return kube_config_in_cluster(opts ? opts->sa_dir : NULL, out, st);
	if (!home || !*home)
		return kube_status_set(st, CADRE_ENOTFOUND, "no kubeconfig: --kubeconfig and "
				       "KUBECONFIG are unset, not in a cluster, and HOME is unset");
	buf_init(&path, 64 * 1024);
	err = buf_addf(&path, "%s/.kube/config", home);
	if (err)
		err = kube_status_set(st, err, "out of memory");
	else
		err = from_paths(path.data, false, opts, out, st);
	buf_release(&path);
	return err;
}

void kube_config_set_clock(struct kube_config *cfg,
			   int64_t (*now_ms)(void *ctx), void *ctx)
{
	pthread_mutex_lock(&cfg->lock);
	cfg->now_ms = now_ms ? now_ms : real_now_ms;
	cfg->clock_ctx = ctx;
	pthread_mutex_unlock(&cfg->lock);
}

/* Re-read the token file when due; caller holds the lock. */
static int refresh_token_file(struct kube_config *cfg, int64_t now,
			      struct kube_status *st)
{
	char *token;
	size_t len;
	int err;

	/* A wall clock that stepped backwards makes the copy due, not eternal. */
	if (cfg->cached_token && cfg->token_read_ms != INT64_MIN &&
	    now >= cfg->token_read_ms &&
	    now - cfg->token_read_ms < KUBE_CONFIG_TOKEN_REREAD_MS)
		return 0;
	err = read_file(cfg->token_file, MAX_TOKEN, &token, &len);
	if (!err) {
		trim_trailing_space(token);
		if (!*token) {
			free(token);
			err = CADRE_EINVAL;
		}
	}
	if (err) {
		/*
		 * Mid-rotation the file can briefly be missing; the old token
		 * stays valid for a while, so keep using it and try again on
		 * the next call.
		 */
		if (cfg->cached_token) {
			log_warn("config", "token file %s: %s; keeping the previous token",
				 cfg->token_file, err == CADRE_EINVAL ? "empty" : cadre_strerror(err));
			return 0;
		}
		return kube_status_set(st, err, "token file %s: %s", cfg->token_file,
				       err == CADRE_ENOTFOUND ? "no such file"
				       : err == CADRE_EINVAL ? "empty" : "cannot read it");
	}
	free_secret(cfg->cached_token, strlen(cfg->cached_token ? cfg->cached_token : ""));
	cfg->cached_token = token;
	cfg->token_read_ms = now;
	return 0;
}

/*
 * Run the exec plugin when its credential is missing or expired; lock held
 * on entry and on return, but not while the plugin runs (a person may take
 * minutes over a device-code login): one run at a time, and the callers
 * that need its credential meanwhile wait for it on exec_done, while every
 * other use of the config goes on. Waiters of a run that failed get its
 * error rather than running the plugin once more each.
 */
static int refresh_exec(struct kube_config *cfg, struct kube_status *st)
{
	struct kube_exec_cluster cluster = {
		.server = cfg->server, .tls_server_name = cfg->tls_server_name,
		.insecure = cfg->insecure, .ca_pem = cfg->ca_pem, .proxy_url = cfg->proxy_url,
		.disable_compression = cfg->disable_compression,
		.config = cfg->exec_cluster_config };
	struct kube_exec_run_opts opts = { .cluster = &cluster, .terminal = cfg->exec_terminal,
					   .timeout_ms = cfg->exec_timeout_ms };
	struct kube_exec_cred fresh;
	struct kube_status run_st;
	unsigned long runs = cfg->exec_runs;
	char *ca = NULL;
	int err;

	while (cfg->exec_running)
		pthread_cond_wait(&cfg->exec_done, &cfg->lock);
	if (cfg->exec_runs != runs && cfg->exec_error.code) {
		if (st)
			*st = cfg->exec_error;
		return cfg->exec_error.code;
	}
	if (cfg->exec_valid && (!cfg->exec_cred.expires_ms ||
				cfg->now_ms(cfg->clock_ctx) < cfg->exec_cred.expires_ms))
		return 0;
	/* The CA may be replaced while the lock is out: the plugin gets a copy. */
	if (cfg->ca_pem && !(ca = strdup(cfg->ca_pem)))
		return kube_status_set(st, CADRE_ENOMEM, "out of memory");
	cluster.ca_pem = ca;
	cfg->exec_running = true;
	pthread_mutex_unlock(&cfg->lock);
	kube_status_clear(&run_st);
	err = kube_exec_run(cfg->exec, &opts, &fresh, &run_st);
	free(ca);
	pthread_mutex_lock(&cfg->lock);
	cfg->exec_running = false;
	cfg->exec_runs++;
	cfg->exec_error = run_st;
	cfg->exec_error.code = err;
	pthread_cond_broadcast(&cfg->exec_done);
	if (err) {
		if (st)
			*st = run_st;
		return err;
	}
	kube_exec_cred_release(&cfg->exec_cred);
	cfg->exec_cred = fresh;
	cfg->exec_valid = true;
	return 0;
}

/* What the file at path is now (present false when it cannot be looked at). */
static struct kube_file_stamp file_stamp(const char *path)
{
	struct kube_file_stamp fs = { 0 };
	struct stat sb;

	if (!stat(path, &sb)) {
		fs.present = true;
		fs.dev = (unsigned long long)sb.st_dev;
		fs.ino = (unsigned long long)sb.st_ino;
		fs.size = (unsigned long long)sb.st_size;
		fs.mtime_ns = (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
	}
	return fs;
}

static bool stamp_equal(const struct kube_file_stamp *a, const struct kube_file_stamp *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->mtime_ns == b->mtime_ns;
}

/* Whether a certificate PEM and a key PEM belong together (a rotation half done does not). */
static bool pair_matches(const char *cert, size_t cert_len, const char *key, size_t key_len)
{
	BIO *cb = BIO_new_mem_buf(cert, (int)cert_len), *kb = BIO_new_mem_buf(key, (int)key_len);
	X509 *x = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
	EVP_PKEY *k = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
	bool ok = x && k && X509_check_private_key(x, k) == 1;

	X509_free(x);
	EVP_PKEY_free(k);
	BIO_free(cb);
	BIO_free(kb);
	ERR_clear_error();
	return ok;
}

/*
 * Read the CA, client certificate and key files again when they changed
 * (certificates rotated by cert-manager or a node agent); lock held. A file
 * that cannot be read, or a new certificate whose key has not been written
 * yet, keeps the previous one in use (with a warning) and is looked at again
 * on the next check: a rotation is seldom one atomic step.
 */
static void refresh_files(struct kube_config *cfg, int64_t now)
{
	struct kube_file_stamp ca, cert, key;
	char *data = NULL, *kdata = NULL;
	size_t len, klen;

	if (!cfg->ca_file && !cfg->cert_file)
		return;
	if (cfg->files_checked_ms != INT64_MIN && now >= cfg->files_checked_ms &&
	    now - cfg->files_checked_ms < KUBE_CONFIG_FILE_CHECK_MS)
		return;
	if (cfg->files_checked_ms == INT64_MIN) {
		/* the files were read at load: remember what they were */
		if (cfg->ca_file)
			cfg->ca_stamp = file_stamp(cfg->ca_file);
		if (cfg->cert_file)
			cfg->cert_stamp = file_stamp(cfg->cert_file);
		if (cfg->key_file)
			cfg->key_stamp = file_stamp(cfg->key_file);
		cfg->files_checked_ms = now;
		return;
	}
	cfg->files_checked_ms = now;
	if (cfg->ca_file)
		ca = file_stamp(cfg->ca_file);
	if (cfg->ca_file && !stamp_equal(&ca, &cfg->ca_stamp)) {
		if (!read_file(cfg->ca_file, MAX_PEM, &data, &len)) {
			free(cfg->ca_pem);
			cfg->ca_pem = data;
			cfg->ca_len = len;
			cfg->ca_stamp = ca;
			log_info("config", "%s: read again: it changed", cfg->ca_file);
		} else {
			log_warn("config", "%s changed but cannot be read; the previous one stays "
				 "in use", cfg->ca_file);
		}
	}
	if (!cfg->cert_file || !cfg->key_file)
		return;
	cert = file_stamp(cfg->cert_file);
	key = file_stamp(cfg->key_file);
	if (stamp_equal(&cert, &cfg->cert_stamp) && stamp_equal(&key, &cfg->key_stamp))
		return;
	if (read_file(cfg->cert_file, MAX_PEM, &data, &len) ||
	    read_file(cfg->key_file, MAX_PEM, &kdata, &klen) ||
	    !pair_matches(data, len, kdata, klen)) {
		log_warn("config", "%s or %s changed, and they are not a certificate and its key "
			 "yet; the previous pair stays in use", cfg->cert_file, cfg->key_file);
		free(data);
		free_secret(kdata, kdata ? klen : 0);
		return;
	}
	free(cfg->cert_pem);
	free_secret(cfg->key_pem, cfg->key_len);
	cfg->cert_pem = data;
	cfg->cert_len = len;
	cfg->key_pem = kdata;
	cfg->key_len = klen;
	cfg->cert_stamp = cert;
	cfg->key_stamp = key;
	log_info("config", "%s and %s: read again: they changed", cfg->cert_file, cfg->key_file);
}

static int dup_bytes(char **dst, size_t *dst_len, const char *src, size_t len)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = malloc(len + 1);
	if (!*dst)
		return CADRE_ENOMEM;
	memcpy(*dst, src, len);
	(*dst)[len] = '\0';
	if (dst_len)
		*dst_len = len;
	return 0;
}

int kube_config_credentials(struct kube_config *cfg,
			    struct kube_config_creds *creds,
			    struct kube_status *st)
{
	const char *token = NULL, *cert, *key;
	size_t cert_len, key_len;
	int64_t now;
	int err = 0;

	memset(creds, 0, sizeof(*creds));
	pthread_mutex_lock(&cfg->lock);
	now = cfg->now_ms(cfg->clock_ctx);
	refresh_files(cfg, now);
	if (cfg->token) {
		token = cfg->token;
	} else if (cfg->token_file) {
		err = refresh_token_file(cfg, now, st);
		token = cfg->cached_token;
	} else if (cfg->exec) {
		err = refresh_exec(cfg, st);
	}
	/* after the plugin ran, the lock was out: read what is there now */
	cert = cfg->cert_pem;
	cert_len = cfg->cert_len;
	key = cfg->key_pem;
	key_len = cfg->key_len;
	if (!err && !cfg->token && !cfg->token_file && cfg->exec) {
		token = cfg->exec_cred.token;
		if (!cert && cfg->exec_cred.cert_pem) {
			cert = cfg->exec_cred.cert_pem;
			cert_len = cfg->exec_cred.cert_len;
			key = cfg->exec_cred.key_pem;
			key_len = cfg->exec_cred.key_len;
		}
	}
	if (!err && (dup_bytes(&creds->token, NULL, token, token ? strlen(token) : 0) ||
		     dup_bytes(&creds->ca_pem, &creds->ca_len, cfg->ca_pem, cfg->ca_len) ||
		     dup_bytes(&creds->cert_pem, &creds->cert_len, cert, cert_len) ||
		     dup_bytes(&creds->key_pem, &creds->key_len, key, key_len)))
		err = kube_status_set(st, CADRE_ENOMEM, "out of memory");
	pthread_mutex_unlock(&cfg->lock);
	if (err)
		kube_config_creds_release(creds);
	return err;
}

void kube_config_creds_release(struct kube_config_creds *creds)
{
	free_secret(creds->token, creds->token ? strlen(creds->token) : 0);
	free(creds->ca_pem);
	free(creds->cert_pem);
	free_secret(creds->key_pem, creds->key_len);
	memset(creds, 0, sizeof(*creds));
}

bool kube_config_invalidate(struct kube_config *cfg)
{
	bool dynamic = false;

	pthread_mutex_lock(&cfg->lock);
	if (!cfg->token && cfg->token_file) {
		cfg->token_read_ms = INT64_MIN;
		dynamic = true;
	} else if (!cfg->token && cfg->exec) {
		cfg->exec_valid = false;
		dynamic = true;
	}
	pthread_mutex_unlock(&cfg->lock);
	return dynamic;
}
