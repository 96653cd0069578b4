/*
 * dra_class.c - a DeviceClass's selectors, read as far as dra_class.h says:
 * a scan that splits a CEL expression at its top-level "&&" (quotes,
 * parentheses and brackets kept whole), then a small recursive descent over
 * each conjunct that accepts "operand == operand" and nothing more.
 */
#include "api/dra_class.h"

#include "base/err.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* ---- reading CEL ---- */

struct cursor {
	const char *p, *end;
};

static void skip_space(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool ident_char(char ch, bool first)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
	       (!first && ch >= '0' && ch <= '9');
}

/*
 * A quoted string at c (after the quote is checked by the caller): its
 * text, unescaped, as a new string; NULL for an escape other than \\ \' \"
 * (the only ones a class's names need), a triple quote, or no end.
 */
static char *read_string(struct cursor *c)
{
	char quote = *c->p, *out, *w;
	const char *q;

	if (c->end - c->p >= 3 && c->p[1] == quote && c->p[2] == quote)
		return NULL;
	for (q = c->p + 1; q < c->end && *q != quote; q++)
		if (*q == '\\' && ++q == c->end)
			return NULL;
	if (q == c->end || !(out = malloc((size_t)(q - c->p))))
		return NULL;
	w = out;
	for (const char *r = c->p + 1; r < q; r++) {
		if (*r == '\\') {
			r++;
			if (*r != '\\' && *r != '\'' && *r != '"') {
				free(out);
				return NULL;
			}
		}
		*w++ = *r;
	}
	*w = '\0';
	c->p = q + 1;
	return out;
}

/* An identifier at c into out (size bytes); false when there is none or it does not fit. */
static bool read_ident(struct cursor *c, char *out, size_t size)
{
	size_t n = 0;

	if (c->p == c->end || !ident_char(*c->p, true))
		return false;
	while (c->p < c->end && ident_char(*c->p, false)) {
		if (n + 1 == size)
			return false;
		out[n++] = *c->p++;
	}
	out[n] = '\0';
	return true;
}

static bool eat(struct cursor *c, char ch)
{
	skip_space(c);
	if (c->p == c->end || *c->p != ch)
		return false;
	c->p++;
	skip_space(c);
	return true;
}

/* One side of "==": a literal (value set), or what of the device it reads (term set). */
struct operand {
	json_t *value;
	bool is_ref;
	char *domain, *name;  /* a reference: domain NULL for device.driver */
};

static void operand_release(struct operand *o)
{
	json_decref(o->value);
	free(o->domain);
	free(o->name);
	memset(o, 0, sizeof(*o));
}

/* An integer literal: decimal, no suffix (CEL's u for unsigned is not read). */
static bool read_int(struct cursor *c, json_t **value)
{
	char text[32], *end;
	size_t n = 0;
	long long v;

	if (c->p < c->end && *c->p == '-')
		text[n++] = *c->p++;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9' && n + 1 < sizeof(text))
		text[n++] = *c->p++;
	text[n] = '\0';
	if (c->p < c->end && (ident_char(*c->p, false) || *c->p == '.'))
		return false;
	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || end == text || *end)
		return false;
	return (*value = json_integer(v)) != NULL;
}

/* device.driver, device.attributes['D'].NAME, device.attributes['D']['NAME']. */
static bool read_device_ref(struct cursor *c, struct operand *o)
{
	char word[64];

	if (!eat(c, '.') || !read_ident(c, word, sizeof(word)))
		return false;
	if (!strcmp(word, "driver")) {
		o->is_ref = true;
		return true;
	}
	if (strcmp(word, "attributes") || !eat(c, '[') || c->p == c->end ||
	    (*c->p != '\'' && *c->p != '"') || !(o->domain = read_string(c)) || !eat(c, ']'))
		return false;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		skip_space(c);
		if (!read_ident(c, word, sizeof(word)) || !(o->name = strdup(word)))
			return false;
	} else if (!eat(c, '[') || c->p == c->end || (*c->p != '\'' && *c->p != '"') ||
		   !(o->name = read_string(c)) || !eat(c, ']')) {
		return false;
	}
	o->is_ref = true;
	return true;
}

static bool read_operand(struct cursor *c, struct operand *o)
{
	char word[64];

	skip_space(c);
	if (c->p == c->end)
		return false;
	if (*c->p == '\'' || *c->p == '"') {
		char *s = read_string(c);

		o->value = s ? json_string(s) : NULL;
		free(s);
		return o->value != NULL;
	}
	if (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'))
		return read_int(c, &o->value);
	if (!read_ident(c, word, sizeof(word)))
		return false;
	if (!strcmp(word, "true") || !strcmp(word, "false"))
		return (o->value = json_boolean(word[0] == 't')) != NULL;
	return !strcmp(word, "device") && read_device_ref(c, o);
}

/*
 * conjunct [p, end) as a term of c: 0 when it is one (added) or is not
 * understood (skipped), CADRE_ENOMEM.
 */
static int add_equality(struct dra_class *c, const char *p, const char *end)
{
	struct cursor cur = { p, end };
	struct operand a = { 0 }, b = { 0 };
	struct dra_class_term *terms, *t;
	int e = 0;

	if (!read_operand(&cur, &a))
		goto out;
	skip_space(&cur);
	if (cur.end - cur.p < 2 || cur.p[0] != '=' || cur.p[1] != '=')
		goto out;
	cur.p += 2;
	if (!read_operand(&cur, &b))
		goto out;
	skip_space(&cur);
	if (cur.p != cur.end || a.is_ref == b.is_ref)
		goto out;
	if (!(terms = realloc(c->terms, (c->n_terms + 1) * sizeof(*terms)))) {
		e = CADRE_ENOMEM;
		goto out;
	}
	c->terms = terms;
	t = &terms[c->n_terms++];
	{
		struct operand *ref = a.is_ref ? &a : &b, *lit = a.is_ref ? &b : &a;

		t->domain = ref->domain;
		t->name = ref->name;
		t->value = lit->value;
		ref->domain = ref->name = NULL;
		lit->value = NULL;
	}
out:
	operand_release(&a);
	operand_release(&b);
	return e;
}

static const char *trim_left(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static const char *trim_right(const char *p, const char *end)
{
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' ||
			   end[-1] == '\r'))
		end--;
	return end;
}

/*
 * Where the quote at p ends (the byte after it), or end. Escapes are
 * skipped; a triple quote reads as an empty string and a quote, which is
 * whole enough for finding "&&".
 */
static const char *past_quote(const char *p, const char *end)
{
	char quote = *p++;

	while (p < end && *p != quote)
		p += *p == '\\' && p + 1 < end ? 2 : 1;
	return p < end ? p + 1 : end;
}

/* Whether the parenthesis at p closes at end[-1], so that it wraps [p, end) whole. */
static bool closes_at(const char *p, const char *end)
{
	int depth = 0;

	for (const char *q = p; q < end; q++) {
		if (*q == '\'' || *q == '"') {
			q = past_quote(q, end) - 1;
			continue;
		}
		depth += (*q == '(') - (*q == ')');
		if (!depth)
			return q == end - 1;
	}
	return false;
}

/* One conjunct [p, end): a parenthesised conjunction is looked into, else an equality. */
static int add_expression(struct dra_class *c, const char *p, const char *end, int depth_left);

static int add_conjunct(struct dra_class *c, const char *p, const char *end, int depth_left)
{
	p = trim_left(p, end);
	end = trim_right(p, end);
	if (end - p >= 2 && *p == '(' && closes_at(p, end))
		return add_expression(c, p + 1, end - 1, depth_left - 1);
	return add_equality(c, p, end);
}

/*
 * The terms of the expression [p, end): its top-level conjuncts. depth_left
 * bounds the nesting looked into, so no input recurses without end.
 */
static int add_expression(struct dra_class *c, const char *p, const char *end, int depth_left)
{
	const char *start, *q;
	int depth = 0, e = 0;

	p = trim_left(p, end);
	end = trim_right(p, end);
	if (depth_left <= 0 || p == end)
		return 0;
	/* Not a conjunction at the top: "a || b", "a ? b : c". Nothing of it is understood. */
	for (q = p; q < end; q++) {
		if (*q == '\'' || *q == '"') {
			q = past_quote(q, end) - 1;
			continue;
		}
		depth += (*q == '(' || *q == '[') - (*q == ')' || *q == ']');
		if (!depth && (*q == '?' || (*q == '|' && q + 1 < end && q[1] == '|')))
			return 0;
	}
	depth = 0;
	for (start = q = p; !e && q < end; q++) {
		if (*q == '\'' || *q == '"') {
			q = past_quote(q, end) - 1;
			continue;
		}
		depth += (*q == '(' || *q == '[') - (*q == ')' || *q == ']');
		if (depth || *q != '&' || q + 1 == end || q[1] != '&')
			continue;
		e = add_conjunct(c, start, q, depth_left);
		start = ++q + 1;
	}
	return e ? e : add_conjunct(c, start, end, depth_left);
}

/* ---- the class ---- */

/* How deep parentheses are looked into: NVIDIA's classes have none. */
#define NESTING_MAX 16

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

		if (expr && (e = add_expression(out, expr, expr + strlen(expr), NESTING_MAX)))
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
