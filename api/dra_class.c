/*
 * dra_class.c - a DeviceClass's selectors, read as far as dra_class.h says:
 * the equalities dra_select_terms finds, kept as terms.
 */
#include "api/dra_class.h"

#include "api/dra_select.h"
#include "base/err.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* One equality dra_select_terms read, as a term of c. */
static int add_term(void *ctx, const char *attribute, const char *value, enum dra_literal kind)
{
	struct dra_class *c = ctx;
	struct dra_class_term *t, *more;
	const char *slash = attribute ? strchr(attribute, '/') : NULL;

	if (attribute && !slash)
		return 0;
	more = realloc(c->terms, (c->n_terms + 1) * sizeof(*more));
	if (!more)
		return CADRE_ENOMEM;
	c->terms = more;
	t = &c->terms[c->n_terms];
	memset(t, 0, sizeof(*t));
	if (kind == DRA_LITERAL_INT)
		t->value = json_integer(strtoll(value, NULL, 10));
	else if (kind == DRA_LITERAL_BOOL)
		t->value = json_boolean(!strcmp(value, "true"));
	else
		/*
		 * Unchecked: a literal that is not UTF-8 never equals an attribute
		 * (which is), and is kept so that its class selects nothing.
		 */
		t->value = json_stringn_nocheck(value, strlen(value));
	if (slash && (!(t->domain = strndup(attribute, (size_t)(slash - attribute))) ||
		      !(t->name = strdup(slash + 1)))) {
		free(t->domain);
		json_decref(t->value);
		return CADRE_ENOMEM;
	}
	if (!t->value) {
		free(t->domain);
		free(t->name);
		return CADRE_ENOMEM;
	}
	c->n_terms++;
	return 0;
}

/* ---- the class ---- */

int dra_class_parse(const json_t *obj, struct dra_class *out)
{
	const json_t *spec = json_object_get(obj, "spec"), *sel;
	const char *name = str(json_object_get(obj, "metadata"), "name");
	const char *ext = str(spec, "extendedResourceName");
	size_t i;
	int e = 0;

	memset(out, 0, sizeof(*out));
	if (!name)
		return CADRE_EINVAL;
	if (!(out->name = strdup(name)) || (ext && !(out->extended_resource_name = strdup(ext))))
		return CADRE_ENOMEM;
	json_array_foreach(json_object_get(spec, "selectors"), i, sel) {
		const char *expr = str(json_object_get(sel, "cel"), "expression");

		if (expr && (e = dra_select_terms(expr, add_term, out)))
			return e;
	}
	return 0;
}

void dra_class_release(struct dra_class *c)
{
	for (size_t i = 0; i < c->n_terms; i++) {
		free(c->terms[i].domain);
		free(c->terms[i].name);
		json_decref(c->terms[i].value);
	}
	free(c->terms);
	free(c->name);
	free(c->extended_resource_name);
	memset(c, 0, sizeof(*c));
}

/* The attribute domain/name of a device of driver: "DOMAIN/NAME", or "NAME" in the driver's own domain. */
static const json_t *attribute(const json_t *attributes, const char *driver, const char *domain,
			       const char *name)
{
	const json_t *v = NULL;
	size_t dlen = strlen(domain), nlen = strlen(name);
	char *key;

	if (driver && !strcmp(domain, driver) && (v = json_object_get(attributes, name)))
		return v;
	if (dlen > SIZE_MAX / 2 - nlen || !(key = malloc(dlen + nlen + 2)))
		return NULL;
	memcpy(key, domain, dlen);
	key[dlen] = '/';
	memcpy(key + dlen + 1, name, nlen + 1);
	v = json_object_get(attributes, key);
	free(key);
	return v;
}

/* Whether an attribute's value ({"string": ..} | {"int": ..} | {"bool": ..}) equals literal. */
static bool attribute_equals(const json_t *attr, const json_t *literal)
{
	const json_t *v;

	if (json_is_string(literal))
		return json_is_string(v = json_object_get(attr, "string")) &&
		       !strcmp(json_string_value(v), json_string_value(literal));
	if (json_is_integer(literal))
		return json_is_integer(v = json_object_get(attr, "int")) &&
		       json_integer_value(v) == json_integer_value(literal);
	return json_is_boolean(v = json_object_get(attr, "bool")) &&
	       json_is_true(v) == json_is_true(literal);
}

bool dra_class_selects(const struct dra_class *c, const char *driver, const json_t *device)
{
	const json_t *attributes = json_object_get(device, "attributes");

	for (size_t i = 0; i < c->n_terms; i++) {
		const struct dra_class_term *t = &c->terms[i];

		if (!t->domain) {
			if (!driver || !json_is_string(t->value) ||
			    strcmp(driver, json_string_value(t->value)))
				return false;
		} else if (!attribute_equals(attribute(attributes, driver, t->domain, t->name),
					     t->value)) {
			return false;
		}
	}
	return true;
}

bool dra_class_is_gpu(const struct dra_class *c)
{
	const char *ext = c->extended_resource_name;
	size_t n = ext ? strlen(ext) : 0;

	return (n > 4 && strchr(ext, '/') && !strcmp(ext + n - 4, "/gpu")) ||
	       !strncmp(c->name, "gpu.", 4);
}
