/*
 * code.c - the user's code sent with a job: packed (cli/bundle.c), stored
 * as a bundle's ConfigMaps (api/code.h) with the user's credentials, and
 * named in spec.code. docs/code.md says why it is made so.
 */
#include "cli/code.h"
#include "cli/bundle.h"

#include "api/code.h"
#include "api/trainingjob.h"
#include "base/err.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

int cli_code_max(const char *cmd, const char *text, uint64_t *out, FILE *err)
{
	static const struct { const char *suffix; uint64_t scale; } units[] = {
		{ "", 1 }, { "B", 1 }, { "K", 1ull << 10 }, { "KiB", 1ull << 10 },
		{ "M", 1ull << 20 }, { "MiB", 1ull << 20 }, { "G", 1ull << 30 },
		{ "GiB", 1ull << 30 },
	};
	unsigned long long v;
	char *end;

	errno = 0;
	v = text && *text >= '0' && *text <= '9' ? strtoull(text, &end, 10) : 0;
	if (v && !errno) {
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (strcmp(end, units[i].suffix))
				continue;
			if (v > BUNDLE_CEILING_BYTES / units[i].scale)
				break;
			*out = v * units[i].scale;
			return 0;
		}
		if (!strchr("BKMG", *end) || !*end || errno) {
			fprintf(err, "%s: --max-upload \"%s\": a size like 64M (bytes, or K, M, G)\n",
				cmd, text);
			return -1;
		}
		fprintf(err, "%s: --max-upload \"%s\": at most %llu MiB (the ceiling: 128 "
			"ConfigMaps of 1 MiB in the namespace); put larger data on a Volume\n",
			cmd, text, (unsigned long long)(BUNDLE_CEILING_BYTES >> 20));
		return -1;
	}
	fprintf(err, "%s: --max-upload \"%s\": a size like 64M (bytes, or K, M, G)\n", cmd,
		text ? text : "");
	return -1;
}

/* The bundle's parts already in the namespace: present[i] for part i. */
struct present {
	const struct bundle *b;
	uint32_t parts;
	unsigned char seen[CODE_MAX_PARTS];
};

static int note_part(void *ctx, json_t *item)
{
	struct present *p = ctx;
	struct code_part part;

	/* Anything that is not a sound part of this very bundle is not counted. */
	if (code_part_read(item, &part, NULL, 0) || strcmp(part.digest, p->b->digest) ||
	    part.parts != p->parts || part.size != p->b->len)
		return 0;
	p->seen[part.index] = 1;
	return 0;
}

/* A new ConfigMap for part index of b; NULL when out of memory. */
static json_t *part_object(const struct bundle *b, uint32_t index)
{
	size_t off = (size_t)index * CODE_PART_BYTES;
	size_t len = (size_t)code_part_bytes(b->len, index);
	char name[CODE_NAME_SIZE], label[CODE_LABEL_LEN + 1], num[24], parts[24], size[24];
	char *b64 = malloc(4 * ((len + 2) / 3) + 1);
	json_t *obj = NULL;

	if (!b64 || code_part_name(b->digest, index, name) || code_label_value(b->digest, label))
		goto out;
	EVP_EncodeBlock((unsigned char *)b64, b->data + off, (int)len);
	snprintf(num, sizeof(num), "%" PRIu32, index);
	snprintf(parts, sizeof(parts), "%" PRIu32, code_parts_for(b->len));
	snprintf(size, sizeof(size), "%zu", b->len);
	obj = json_pack("{s:s, s:s, s:{s:s, s:{s:s}, s:{s:s, s:s, s:s, s:s, s:s}}, s:b, s:{s:s}}",
			"apiVersion", "v1", "kind", "ConfigMap",
			"metadata", "name", name, "labels", CODE_LABEL, label,
			"annotations", CODE_ANNOTATION_DIGEST, b->digest,
			CODE_ANNOTATION_PART, num, CODE_ANNOTATION_PARTS, parts,
			CODE_ANNOTATION_SIZE, size, CODE_ANNOTATION_KIND, b->file ? "file" : "dir",
			"immutable", 1, "binaryData", CODE_PART_KEY, b64);
out:
	free(b64);
	return obj;
}

int cli_code_store(struct cli_kube *k, const struct bundle *b, FILE *err)
{
	static const struct kube_resource *cms = &kube_resource_configmaps;
	struct present p = { .b = b, .parts = code_parts_for(b->len) };
	char label[CODE_LABEL_LEN + 1], selector[CODE_LABEL_LEN + 32], what[128];
	struct kube_status st;
	int e;

	if (p.parts > CODE_MAX_PARTS || code_label_value(b->digest, label)) {
		fprintf(err, "%s: the bundle of %zu bytes is over the ceiling\n", k->cmd, b->len);
		return CLI_EXIT_FAILED;
	}
	snprintf(selector, sizeof(selector), "%s=%s", CODE_LABEL, label);
	kube_status_clear(&st);
	e = kube_client_list_each(k->http, cms, k->ns,
				  &(struct kube_list_opts){ .label_selector = selector,
							    .metadata_only = true },
				  note_part, &p, NULL, &st);
	if (e) {
		snprintf(what, sizeof(what), "list the code bundles (configmaps) of namespace %s",
			 k->ns);
		return cli_kube_error(k, what, &st, err);
	}
	for (uint32_t i = 0; i < p.parts; i++) {
		json_t *obj;

		if (p.seen[i])
			continue;
		if (!(obj = part_object(b, i))) {
			fprintf(err, "%s: out of memory\n", k->cmd);
			return CLI_EXIT_FAILED;
		}
		kube_status_clear(&st);
		e = kube_client_create(k->http, cms, k->ns, obj, NULL, &st);
		json_decref(obj);
		/* Another upload of the same code made it first: the same bytes. */
		if (e && e != CADRE_EEXIST) {
			snprintf(what, sizeof(what), "create configmap \"cadre-code-%s-%" PRIu32
				 "\" (the code)", label, i);
			return cli_kube_error(k, what, &st, err);
		}
	}
	return 0;
}

int cli_code_attach(struct cli_kube *k, const struct cli_code_src *srcs, size_t n,
		    uint64_t max_bytes, struct tj_spec *spec, FILE *err)
{
	struct bundle *b = calloc(n ? n : 1, sizeof(*b));
	struct tj_code *grown;
	char why[1024];
	size_t packed = 0;
	int code = CLI_EXIT_FAILED, e;

	if (!b || !(grown = realloc(spec->code, (spec->n_code + n + 1) * sizeof(*spec->code)))) {
		fprintf(err, "%s: out of memory\n", k->cmd);
		goto out;
	}
	spec->code = grown;
	/* Every source packed before anything is stored: a refusal creates nothing. */
	for (; packed < n; packed++) {
		bundle_init(&b[packed]);
		if ((e = bundle_pack(srcs[packed].source, max_bytes, &b[packed], why, sizeof(why)))) {
			fprintf(err, "%s: %s\n", k->cmd, e == CADRE_ENOMEM ? "out of memory" : why);
			packed++;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++)
		if ((code = cli_code_store(k, &b[i], err)))
			goto out;
	code = CLI_EXIT_FAILED;
	for (size_t i = 0; i < n; i++) {
		struct tj_code *c = &spec->code[spec->n_code];

		c->digest = strdup(b[i].digest);
		c->path = strdup(srcs[i].target);
		if (!c->digest || !c->path) {
			free(c->digest);
			free(c->path);
			fprintf(err, "%s: out of memory\n", k->cmd);
			goto out;
		}
		spec->n_code++;
	}
	code = 0;
out:
	for (size_t i = 0; i < packed; i++)
		bundle_release(&b[i]);
	free(b);
	return code;
}

/* Bytes and parts of every sound bundle part listed. */
struct usage {
	uint64_t bytes;
	size_t parts;
};

static int add_usage(void *ctx, json_t *item)
{
	struct usage *u = ctx;
	struct code_part part;

	if (code_part_read(item, &part, NULL, 0))
		return 0;
	u->bytes += code_part_bytes(part.size, part.index);
	u->parts++;
	return 0;
}

int cli_code_usage(struct cli_kube *k, uint64_t *bytes, size_t *parts)
{
	struct usage u = { 0 };
	struct kube_status st;
	int e;

	kube_status_clear(&st);
	e = kube_client_list_each(k->http, &kube_resource_configmaps, k->ns,
				  &(struct kube_list_opts){ .label_selector = CODE_LABEL,
							    .metadata_only = true },
				  add_usage, &u, NULL, &st);
	*bytes = u.bytes;
	*parts = u.parts;
	return e;
}

int cli_push(const struct cli_globals *g, const char *max_upload, char **args, int n,
	     FILE *out, FILE *err)
{
	static const char cmd[] = "cadre push";
	uint64_t max = BUNDLE_DEFAULT_MAX_BYTES;
	struct cli_kube k;
	struct bundle b;
	char why[1024];
	int code, e;

	if (n != 1) {
		fprintf(err, "%s: %s (see cadre push --help)\n", cmd,
			n ? "one DIR at a time" : "DIR is required");
		return CLI_EXIT_USAGE;
	}
	if (max_upload && cli_code_max(cmd, max_upload, &max, err))
		return CLI_EXIT_USAGE;
	bundle_init(&b);
	/* Packed first: a refusal needs no cluster and creates nothing. */
	if ((e = bundle_pack(args[0], max, &b, why, sizeof(why)))) {
		fprintf(err, "%s: %s\n", cmd, e == CADRE_ENOMEM ? "out of memory" : why);
		bundle_release(&b);
		return CLI_EXIT_FAILED;
	}
	if ((code = cli_kube_open(g, cmd, &k, err)))
		goto out;
	code = cli_code_store(&k, &b, err);
	if (!code)
		fprintf(out, "%s\n", b.digest);
	cli_kube_close(&k);
out:
	bundle_release(&b);
	return code;
}
