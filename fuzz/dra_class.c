/*
 * dra_class.c - a DeviceClass's CEL selector as cadre reads it
 * (api/dra_class.h): any bytes as the expression, as a cluster's
 * administrator may write it.
 *
 * Properties: a named class always reads; every term is device.driver or
 * an attribute with a domain and a name, equal to a string, an integer or
 * a boolean; and a device made to meet every term (its driver the driver
 * terms' string, each attribute the value its terms name) is selected
 * exactly when the terms agree with each other. That last check is made
 * when every attribute has a C identifier for a name and a domain without
 * '/', as the API server's attributes do, so that no two keys can meet.
 */
#include "fuzz/fuzz.h"

#include "api/dra_class.h"
#include "api/name.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define NO_DRIVER "fuzz.example.com"

/* Whether text is UTF-8, as every key of a device's attributes is. */
static bool utf8(const char *text)
{
	json_t *j = json_string(text);

	json_decref(j);
	return j != NULL;
}

/* The device meeting c's terms into *device; false when two terms disagree. */
static bool device_for(const struct dra_class *c, const char **driver, json_t *device)
{
	json_t *attrs = json_object_get(device, "attributes");
	bool agree = true;

	*driver = NULL;
	for (size_t i = 0; i < c->n_terms; i++) {
		const struct dra_class_term *t = &c->terms[i];
		const char *type = json_is_string(t->value) ? "string" :
				   json_is_integer(t->value) ? "int" : "bool";
		const json_t *had;
		char *key;
		size_t len;

		if (!t->domain) {
			if (!json_is_string(t->value) || (*driver &&
							  strcmp(*driver, json_string_value(t->value))))
				agree = false;
			else
				*driver = json_string_value(t->value);
			continue;
		}
		len = strlen(t->domain) + strlen(t->name) + 2;
		key = malloc(len);
		FUZZ_CHECK(key, "out of memory");
		snprintf(key, len, "%s/%s", t->domain, t->name);
		if ((had = json_object_get(attrs, key)))
			agree = agree && json_equal(json_object_get(had, type), t->value);
		else
			json_object_set_new(attrs, key, json_pack("{s:O}", type, t->value));
		free(key);
	}
	if (!*driver)
		*driver = NO_DRIVER;
	return agree;
}

int fuzz_dra_class(const uint8_t *data, size_t size)
{
	char *expr = fuzz_strndup(data, size);
	json_t *obj = json_pack("{s:{s:s},s:{s:[{s:{s:s}}]}}", "metadata", "name", "c", "spec",
				"selectors", "cel", "expression", "");
	json_t *device = json_pack("{s:s,s:{}}", "name", "d", "attributes");
	struct dra_class c;
	const char *driver;
	bool plain = true, agree;

	FUZZ_CHECK(expr && obj && device, "out of memory");
	/* Not UTF-8 is no JSON string; the bytes are read as the API server would not send them. */
	json_object_set_new(json_object_get(json_array_get(json_object_get(json_object_get(obj,
		"spec"), "selectors"), 0), "cel"), "expression", json_stringn_nocheck(expr,
										 strlen(expr)));
	FUZZ_CHECK(!dra_class_parse(obj, &c), "a named class does not read");
	for (size_t i = 0; i < c.n_terms; i++) {
		const struct dra_class_term *t = &c.terms[i];

		FUZZ_CHECK(json_is_string(t->value) || json_is_integer(t->value) ||
			   json_is_boolean(t->value), "term %zu's value is no literal", i);
		FUZZ_CHECK(!t->domain == !t->name, "term %zu: a domain without a name", i);
		if (t->domain)
			/* An attribute whose name is not UTF-8 is on no device: it never holds. */
			plain = plain && name_is_c_identifier(t->name) && !strchr(t->domain, '/') &&
				utf8(t->domain);
	}
	agree = device_for(&c, &driver, device);
	if (plain)
		FUZZ_CHECK(dra_class_selects(&c, driver, device) == agree,
			   "a device made to meet %zu terms (agreeing: %d) is %sselected", c.n_terms,
			   agree, agree ? "not " : "");
	dra_class_release(&c);
	json_decref(device);
	json_decref(obj);
	free(expr);
	return 0;
}
