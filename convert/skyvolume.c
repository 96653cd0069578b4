/*
 * skyvolume.c - a SkyPilot volume file (`sky volumes apply -f`: name, type,
 * infra, size, use_existing, config.access_mode, config.storage_class_name)
 * into a Volume. It maps one to one (docs/design.md 4); what does not is noted.
 */
#include "convert/convert.h"
#include "convert/yamldoc.h"

#include "api/name.h"
#include "api/quantity.h"
#include "base/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct volfile {
	struct convert_result *r;
	yaml_document_t *doc;
	bool use_existing;
	int name_line;
};

static int fail_at(struct volfile *v, const yaml_node_t *n, const char *field, const char *why)
{
	return convert_fail(v->r, ydoc_line(n), ydoc_column(n), field, "%s", why);
}

static int text_field(struct volfile *v, const yaml_node_t *n, const char *field, char **out)
{
	const char *s;

	if (!ydoc_text(n, &s))
		return fail_at(v, n, field, "must be a string");
	free(*out);
	return (*out = strdup(s)) ? 0 : CADRE_ENOMEM;
}

/* "500Gi", or a number of GiB as SkyPilot reads "size: 100". */
static int parse_size(struct volfile *v, const yaml_node_t *n)
{
	struct vol_spec *spec = &v->r->vol.spec;
	const char *s;
	char text[64];

	if (!ydoc_text(n, &s))
		return fail_at(v, n, "size", "must be a size such as 500Gi");
	snprintf(text, sizeof(text), "%s%s", s, strspn(s, "0123456789") == strlen(s) ? "Gi" : "");
	/* quantity_parse takes a '+' as Kubernetes' parser does; the CRD's pattern does not. */
	if (*text == '+' || quantity_parse(text, &spec->size_milli) || spec->size_milli <= 0)
		return fail_at(v, n, "size", "must be a positive size such as 500Gi, without a sign");
	spec->has_size = true;
	free(spec->size);
	return (spec->size = strdup(text)) ? 0 : CADRE_ENOMEM;
}

static int parse_access_mode(struct volfile *v, const yaml_node_t *n)
{
	static const struct { const char *name; enum vol_access_mode mode; } modes[] = {
		{ "ReadWriteMany", VOL_ACCESS_READ_WRITE_MANY },
		{ "ReadWriteOnce", VOL_ACCESS_READ_WRITE_ONCE },
		{ "ReadOnlyMany", VOL_ACCESS_READ_ONLY_MANY },
		{ "ReadWriteOncePod", VOL_ACCESS_READ_WRITE_ONCE_POD },
	};
	const char *s;

	if (ydoc_text(n, &s))
		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
			if (!strcmp(s, modes[i].name)) {
				v->r->vol.spec.access_mode = modes[i].mode;
				return 0;
			}
	return fail_at(v, n, "config.access_mode", "must be ReadWriteMany, ReadWriteOnce, "
		       "ReadOnlyMany or ReadWriteOncePod");
}

/* As vol_validate reads spec.storageClassName: a StorageClass's name, or "" for none. */
static int parse_storage_class(struct volfile *v, yaml_node_t *n, const char *field)
{
	const char *s;

	if (ydoc_text(n, &s) && *s && !name_is_dns1123_subdomain(s))
		return fail_at(v, n, field, "must be the name of a StorageClass (lower-case "
			       "letters, digits, '-' and '.', at most 253)");
	return text_field(v, n, field, &v->r->vol.spec.storage_class_name);
}

static int parse_config(struct volfile *v, yaml_node_t *n)
{
	if (ydoc_is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(v, n, "config", "must be a mapping (access_mode, storage_class_name)");
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *key = ydoc_key(v->doc, p);
		yaml_node_t *val = yaml_document_get_node(v->doc, p->value);
		char field[96];
		int err;

		snprintf(field, sizeof(field), "config.%.80s", key);
		if (!strcmp(key, "access_mode"))
			err = parse_access_mode(v, val);
		else if (!strcmp(key, "storage_class_name"))
			err = parse_storage_class(v, val, field);
		else if (!strcmp(key, "namespace"))
			err = convert_note(&v->r->notes, ydoc_line(val), field, "the Volume goes to the "
					   "namespace of kubectl (-n, or the context's)");
		else
			err = convert_note(&v->r->notes, ydoc_line(val), field, "has no counterpart "
					   "in a Volume");
		if (err)
			return err;
	}
	return 0;
}

static int parse_field(struct volfile *v, yaml_node_pair_t *p)
{
	const char *key = ydoc_key(v->doc, p), *s;
	yaml_node_t *val = yaml_document_get_node(v->doc, p->value);

	if (!strcmp(key, "name")) {
		v->name_line = ydoc_line(val);
		return text_field(v, val, "name", &v->r->vol.meta.name);
	}
	if (!strcmp(key, "type")) {
		if (ydoc_text(val, &s) && !strcmp(s, "k8s-pvc"))
			return 0;
		return fail_at(v, val, "type", "cadre's Volumes from SkyPilot files are k8s-pvc "
			       "(an NFS export is a Volume of type nfs: write it as YAML)");
	}
	if (!strcmp(key, "infra") || !strcmp(key, "cloud")) {
		if (ydoc_text(val, &s) && (!strncmp(s, "kubernetes", 10) || !strncmp(s, "k8s", 3)))
			return 0;
		return convert_note(&v->r->notes, ydoc_line(val), key, "cadre runs on the cluster "
				    "of the kubeconfig's context");
	}
	if (!strcmp(key, "size"))
		return parse_size(v, val);
	if (!strcmp(key, "config"))
		return parse_config(v, val);
	if (!strcmp(key, "use_existing")) {
		v->use_existing = ydoc_text(val, &s) && !strcmp(s, "true");
		return 0;
	}
	return convert_note(&v->r->notes, ydoc_line(val), key, "has no counterpart in a Volume");
}

int convert_sky_volume(const struct convert_input *in, struct convert_result *r)
{
	yaml_document_t doc;
	struct volfile v = { .r = r, .doc = &doc };
	yaml_node_t *root;
	int err;

	r->kind = CONVERT_SKY_VOLUME;
	if ((err = ydoc_load(in, r, "volume", &doc)))
		return err;
	root = yaml_document_get_root_node(&doc);
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top && !err; p++)
		err = parse_field(&v, p);
	if (err)
		goto out;
	if (!r->vol.meta.name || !name_is_dns1123_subdomain(r->vol.meta.name)) {
		err = convert_fail(r, v.name_line ? v.name_line : 1, 0, "name", "%s", r->vol.meta.name ?
				   "not a Volume name (lower case letters, digits, '-' and '.')" :
				   "required: jobs mount the Volume by this name");
		goto out;
	}
	/* use_existing: the PVC of that name already exists; cadre adopts it. */
	if (v.use_existing && !(r->vol.spec.claim_name = strdup(r->vol.meta.name)))
		err = CADRE_ENOMEM;
	else if (!v.use_existing && !r->vol.spec.has_size)
		err = convert_fail(r, ydoc_line(root), 0, "size", "required for a new k8s-pvc");
out:
	yaml_document_delete(&doc);
	return err;
}
