/*
 * oapi.c - the OpenAPI v3 subset and the CEL subset of oapi.h. The schema is
 * a ytree (scalars are text); the object is jansson's.
 */
#include "unit/support/oapi.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/utf8.h"
#include "unit/support/ytree.h"

/* ---- compiled patterns, kept for the process ---- */

#define MAX_PATTERNS 64

static struct {
	char *text;
	regex_t re;
	bool ok;
} patterns[MAX_PATTERNS];
static size_t n_patterns;

/* Whether s matches pattern (unanchored, as RE2's and ECMA's search); -1 when it does not compile. */
static int pattern_match(const char *pattern, const char *s)
{
	size_t i;

	for (i = 0; i < n_patterns && strcmp(patterns[i].text, pattern); i++)
		;
	if (i == n_patterns) {
		if (n_patterns == MAX_PATTERNS || !(patterns[i].text = strdup(pattern)))
			return -1;
		patterns[i].ok = !regcomp(&patterns[i].re, pattern, REG_EXTENDED | REG_NOSUB);
		n_patterns++;
	}
	if (!patterns[i].ok)
		return -1;
	return regexec(&patterns[i].re, s, 0, NULL, 0) == 0;
}

/* Characters (code points) of a UTF-8 string, as maxLength and CEL's size() count them. */
static size_t chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* ---- CEL, evaluated while it is parsed ---- */

#define CEL_MAX_VARS 4
#define CEL_MAX_DEPTH 64

struct cel {
	const char *p;
	const json_t *self;
	const char *var_name[CEL_MAX_VARS];
	size_t var_len[CEL_MAX_VARS];
	json_t *var_value[CEL_MAX_VARS];
	int n_vars;
	int depth;
	char *why;
	size_t why_size;
	bool failed;
};

/* Values are new json_t references; NULL after a failure. Skipped branches yield json_null(). */
static json_t *cel_expr(struct cel *c, bool eval);

static json_t *cel_fail(struct cel *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->failed) {
		va_start(ap, fmt);
		vsnprintf(c->why, c->why_size, fmt, ap);
		va_end(ap);
		c->failed = true;
	}
	return NULL;
}

static void cel_space(struct cel *c)
{
	while (isspace((unsigned char)*c->p))
		c->p++;
}

/* Consume tok (after blanks) when it is next. */
static bool cel_eat(struct cel *c, const char *tok)
{
	size_t n = strlen(tok);

	cel_space(c);
	if (strncmp(c->p, tok, n))
		return false;
	/* "in" and words must end at a word boundary; "=" must not be "==" etc. */
	if (isalpha((unsigned char)tok[0]) && (isalnum((unsigned char)c->p[n]) || c->p[n] == '_'))
		return false;
	c->p += n;
	return true;
}

static bool cel_expect(struct cel *c, const char *tok)
{
	if (cel_eat(c, tok))
		return true;
	cel_fail(c, "expected '%s' at \"%.20s\"", tok, c->p);
	return false;
}

/* An identifier: its start and length, or 0. */
static size_t cel_ident(struct cel *c, const char **start)
{
	size_t n = 0;

	cel_space(c);
	*start = c->p;
	if (!isalpha((unsigned char)*c->p) && *c->p != '_')
		return 0;
	while (isalnum((unsigned char)c->p[n]) || c->p[n] == '_')
		n++;
	c->p += n;
	return n;
}

static json_t *cel_string(struct cel *c)
{
	char quote = *c->p++;
	struct buf b;
	json_t *out;

	buf_init(&b, 1 << 16);
	while (*c->p && *c->p != quote) {
		char ch = *c->p++;

		if (ch == '\\') {
			ch = *c->p++;
			if (!ch)
				break;
			/* CEL's escapes; any other, "\." as in a regex, does not compile. */
			if (!strchr("abfnrtv\\'\"`?", ch)) {
				buf_release(&b);
				return cel_fail(c, "invalid escape \\%c in a string", ch);
			}
			ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch;
		}
		buf_add(&b, &ch, 1);
	}
	if (*c->p != quote) {
		buf_release(&b);
		return cel_fail(c, "unterminated string");
	}
	c->p++;
	out = json_string(b.data ? b.data : "");
	buf_release(&b);
	return out ? out : cel_fail(c, "string is not UTF-8");
}

static bool cel_truth(struct cel *c, const json_t *v, bool eval)
{
	if (!eval)
		return false;
	if (!json_is_boolean(v)) {
		cel_fail(c, "no such overload: a condition that is not a bool");
		return false;
	}
	return json_is_true(v);
}

static json_t *cel_bool(bool b)
{
	return json_boolean(b);
}

/* Field select: o.name; a missing field is CEL's "no such key". */
static json_t *cel_select(struct cel *c, json_t *o, const char *name, size_t n, bool eval)
{
	char key[128];
	json_t *v;

	if (!eval) {
		json_decref(o);
		return json_null();
	}
	snprintf(key, sizeof(key), "%.*s", (int)n, name);
	v = json_is_object(o) ? json_object_get(o, key) : NULL;
	json_incref(v);
	json_decref(o);
	return v ? v : cel_fail(c, "no such key: %s", key);
}

/* recv.all(x, p) and recv.exists(x, p): p re-read for each element. */
static json_t *cel_macro(struct cel *c, json_t *recv, bool all, bool eval)
{
	const char *name, *body;
	size_t n, count = 0;
	json_t *items = NULL, *result = NULL;
	bool acc = all;

	if (!(n = cel_ident(c, &name)) || !cel_expect(c, ","))
		goto fail;
	if (c->n_vars == CEL_MAX_VARS) {
		cel_fail(c, "too many nested macros");
		goto fail;
	}
	body = c->p;
	if (eval) {
		if (json_is_object(recv)) {
			const char *k;
			json_t *v;

			items = json_array();
			json_object_foreach(recv, k, v)
				json_array_append_new(items, json_string(k));
		} else if (json_is_array(recv)) {
			items = json_incref(recv);
		} else {
			cel_fail(c, "all/exists on a value that is neither a map nor a list");
			goto fail;
		}
		count = json_array_size(items);
	}
	c->var_name[c->n_vars] = name;
	c->var_len[c->n_vars] = n;
	c->n_vars++;
	/* Once parse with eval off for an empty receiver, so the text is consumed. */
	for (size_t i = 0; i < (count ? count : 1); i++) {
		json_t *v;
		bool run = eval && count && (all ? acc : !acc);

		c->p = body;
		c->var_value[c->n_vars - 1] = run ? json_array_get(items, i) : json_null();
		v = cel_expr(c, run);
		if (!v) {
			c->n_vars--;
			goto fail;
		}
		if (run)
			acc = cel_truth(c, v, true);
		json_decref(v);
		if (c->failed) {
			c->n_vars--;
			goto fail;
		}
	}
	c->n_vars--;
	if (!cel_expect(c, ")"))
		goto fail;
	result = eval ? cel_bool(acc) : json_null();
fail:
	json_decref(items);
	json_decref(recv);
	return result;
}

/* recv.method(arg) for the string methods. */
static json_t *cel_method(struct cel *c, json_t *recv, const char *m, size_t n, bool eval)
{
	json_t *arg, *out = NULL;
	const char *s, *a;

	if (n == 3 && !strncmp(m, "all", 3))
		return cel_macro(c, recv, true, eval);
	if (n == 6 && !strncmp(m, "exists", 6))
		return cel_macro(c, recv, false, eval);
	arg = cel_expr(c, eval);
	if (!arg || !cel_expect(c, ")"))
		goto out;
	if (!eval) {
		out = json_null();
		goto out;
	}
	s = json_string_value(recv);
	a = json_string_value(arg);
	if (!s || !a) {
		cel_fail(c, "no such overload: %.*s on a non-string", (int)n, m);
		goto out;
	}
	if (n == 7 && !strncmp(m, "matches", 7)) {
		int hit = pattern_match(a, s);

		out = hit < 0 ? cel_fail(c, "bad pattern %s", a) : cel_bool(hit);
	} else if (n == 10 && !strncmp(m, "startsWith", 10)) {
		out = cel_bool(!strncmp(s, a, strlen(a)));
	} else if (n == 8 && !strncmp(m, "endsWith", 8)) {
		out = cel_bool(strlen(s) >= strlen(a) && !strcmp(s + strlen(s) - strlen(a), a));
	} else if (n == 8 && !strncmp(m, "contains", 8)) {
		out = cel_bool(strstr(s, a) != NULL);
	} else {
		cel_fail(c, "unknown method %.*s", (int)n, m);
	}
out:
	json_decref(arg);
	json_decref(recv);
	return out;
}

static json_t *cel_postfix(struct cel *c, json_t *v, bool eval)
{
	while (v && cel_eat(c, ".")) {
		const char *name;
		size_t n = cel_ident(c, &name);

		if (!n) {
			json_decref(v);
			return cel_fail(c, "expected a name after '.'");
		}
		if (cel_eat(c, "("))
			v = cel_method(c, v, name, n, eval);
		else
			v = cel_select(c, v, name, n, eval);
	}
	return v;
}

/* has(a.b): whether the last field is present, without failing on its absence. */
static json_t *cel_has(struct cel *c, bool eval)
{
	const char *name, *last = NULL;
	size_t n, last_n = 0;
	json_t *v;

	if (!(n = cel_ident(c, &name)) || (n != 4 || strncmp(name, "self", 4)))
		return cel_fail(c, "has() of something other than a field of self");
	v = json_incref((json_t *)c->self);
	while (cel_eat(c, ".")) {
		if (last)
			v = cel_select(c, v, last, last_n, eval);
		if (!v || !(last_n = cel_ident(c, &last)))
			return cel_fail(c, "has() needs a field");
	}
	if (!last || !cel_expect(c, ")")) {
		json_decref(v);
		return cel_fail(c, "has() needs a field");
	}
	if (!eval) {
		json_decref(v);
		return json_null();
	}
	{
		char key[128];
		bool present;

		snprintf(key, sizeof(key), "%.*s", (int)last_n, last);
		present = json_is_object(v) && json_object_get(v, key);
		json_decref(v);
		return cel_bool(present);
	}
}

static json_t *cel_primary(struct cel *c, bool eval)
{
	const char *name;
	size_t n;
	json_t *v;

	cel_space(c);
	if (++c->depth > CEL_MAX_DEPTH)
		return cel_fail(c, "too deep");
	if (*c->p == '\'' || *c->p == '"')
		return cel_string(c);
	if (isdigit((unsigned char)*c->p)) {
		long long x = strtoll(c->p, (char **)&c->p, 10);

		return json_integer(x);
	}
	if (cel_eat(c, "(")) {
		v = cel_expr(c, eval);
		if (v && !cel_expect(c, ")")) {
			json_decref(v);
			return NULL;
		}
		return v;
	}
	if (cel_eat(c, "[")) {
		json_t *list = json_array();

		while (!cel_eat(c, "]")) {
			if (json_array_size(list) && !cel_expect(c, ","))
				goto bad_list;
			if (!(v = cel_expr(c, eval)))
				goto bad_list;
			json_array_append_new(list, v);
		}
		return list;
bad_list:
		json_decref(list);
		return NULL;
	}
	if (!(n = cel_ident(c, &name)))
		return cel_fail(c, "unexpected \"%.20s\"", c->p);
	if (n == 4 && !strncmp(name, "true", 4))
		return json_true();
	if (n == 5 && !strncmp(name, "false", 5))
		return json_false();
	if (n == 4 && !strncmp(name, "null", 4))
		return json_null();
	if (n == 4 && !strncmp(name, "self", 4))
		return json_incref((json_t *)c->self);
	if (n == 3 && !strncmp(name, "has", 3) && cel_eat(c, "("))
		return cel_has(c, eval);
	if (n == 4 && !strncmp(name, "size", 4) && cel_eat(c, "(")) {
		json_t *out;

		if (!(v = cel_expr(c, eval)) || !cel_expect(c, ")")) {
			json_decref(v);
			return NULL;
		}
		if (!eval)
			out = json_null();
		else if (json_is_string(v))
			out = json_integer((json_int_t)chars(json_string_value(v)));
		else if (json_is_array(v))
			out = json_integer((json_int_t)json_array_size(v));
		else if (json_is_object(v))
			out = json_integer((json_int_t)json_object_size(v));
		else
			out = cel_fail(c, "no such overload: size of that");
		json_decref(v);
		return out;
	}
	for (int i = c->n_vars - 1; i >= 0; i--)
		if (c->var_len[i] == n && !strncmp(c->var_name[i], name, n))
			return json_incref(c->var_value[i]);
	return cel_fail(c, "undeclared reference to '%.*s'", (int)n, name);
}

static json_t *cel_unary(struct cel *c, bool eval)
{
	json_t *v, *out;

	if (cel_eat(c, "!") ) {
		if (!(v = cel_unary(c, eval)))
			return NULL;
		out = eval ? (json_is_boolean(v) ? cel_bool(!json_is_true(v)) :
			      cel_fail(c, "no such overload: ! of a non-bool")) : json_null();
		json_decref(v);
		return out;
	}
	if (!(v = cel_primary(c, eval)))
		return NULL;
	c->depth--;
	return cel_postfix(c, v, eval);
}

static int cel_compare(const json_t *a, const json_t *b, bool *ok)
{
	*ok = true;
	if (json_is_integer(a) && json_is_integer(b))
		return (json_integer_value(a) > json_integer_value(b)) -
		       (json_integer_value(a) < json_integer_value(b));
	if (json_is_string(a) && json_is_string(b))
		return strcmp(json_string_value(a), json_string_value(b));
	*ok = false;
	return 0;
}

/* a * b, a / b, a % b of integers, left to right; division by zero is CEL's error. */
static json_t *cel_mul(struct cel *c, bool eval)
{
	json_t *a = cel_unary(c, eval), *b;
	char op;

	while (a) {
		if (cel_eat(c, "*"))
			op = '*';
		else if (cel_eat(c, "/"))
			op = '/';
		else if (cel_eat(c, "%"))
			op = '%';
		else
			return a;
		if (!(b = cel_unary(c, eval))) {
			json_decref(a);
			return NULL;
		}
		if (eval) {
			json_int_t x = json_integer_value(a), y = json_integer_value(b);
			json_t *r;

			if (!json_is_integer(a) || !json_is_integer(b))
				r = cel_fail(c, "no such overload: %c of a non-int", op);
			else if (op != '*' && y == 0)
				r = cel_fail(c, "division by zero");
			else
				r = json_integer(op == '*' ? x * y : op == '/' ? x / y : x % y);
			json_decref(a);
			a = r;
		}
		json_decref(b);
	}
	return NULL;
}

/* a + b: integers add, strings concatenate, left to right. */
static json_t *cel_add(struct cel *c, bool eval)
{
	json_t *a = cel_mul(c, eval), *b, *r;

	while (a && cel_eat(c, "+")) {
		if (!(b = cel_mul(c, eval))) {
			json_decref(a);
			return NULL;
		}
		r = json_null();
		if (eval) {
			json_decref(r);
			if (json_is_integer(a) && json_is_integer(b)) {
				r = json_integer(json_integer_value(a) + json_integer_value(b));
			} else if (json_is_string(a) && json_is_string(b)) {
				struct buf cat;

				buf_init(&cat, 1 << 16);
				buf_addf(&cat, "%s%s", json_string_value(a), json_string_value(b));
				r = json_string(buf_str(&cat));
				buf_release(&cat);
			} else {
				r = cel_fail(c, "no such overload: + of those");
			}
		}
		json_decref(a);
		json_decref(b);
		a = r;
	}
	return a;
}

static json_t *cel_relation(struct cel *c, bool eval)
{
	static const char *const ops[] = { "==", "!=", "<=", ">=", "<", ">", "in", NULL };
	json_t *a = cel_add(c, eval), *b, *out = NULL;
	int op;
	bool ok;

	if (!a)
		return NULL;
	for (op = 0; ops[op] && !cel_eat(c, ops[op]); op++)
		;
	if (!ops[op])
		return a;
	if (!(b = cel_add(c, eval))) {
		json_decref(a);
		return NULL;
	}
	if (!eval) {
		out = json_null();
	} else if (op == 0 || op == 1) {
		out = cel_bool(json_equal(a, b) == (op == 0));
	} else if (op == 6) {
		bool found = false;
		size_t i;
		json_t *item;

		if (!json_is_array(b)) {
			out = cel_fail(c, "no such overload: in of a non-list");
		} else {
			json_array_foreach(b, i, item)
				found |= json_equal(a, item) != 0;
			out = cel_bool(found);
		}
	} else {
		int cmp = cel_compare(a, b, &ok);

		out = !ok ? cel_fail(c, "no such overload: comparing those") :
		      cel_bool(op == 2 ? cmp <= 0 : op == 3 ? cmp >= 0 : op == 4 ? cmp < 0 : cmp > 0);
	}
	json_decref(a);
	json_decref(b);
	return out;
}

static json_t *cel_and(struct cel *c, bool eval)
{
	json_t *v = cel_relation(c, eval), *r;

	while (v && cel_eat(c, "&&")) {
		bool left = cel_truth(c, v, eval);

		json_decref(v);
		if (c->failed || !(r = cel_relation(c, eval && left)))
			return NULL;
		v = eval && left ? r : (json_decref(r), eval ? json_false() : json_null());
	}
	return v;
}

static json_t *cel_or(struct cel *c, bool eval)
{
	json_t *v = cel_and(c, eval), *r;

	while (v && cel_eat(c, "||")) {
		bool left = cel_truth(c, v, eval);

		json_decref(v);
		if (c->failed || !(r = cel_and(c, eval && !left)))
			return NULL;
		v = eval && !left ? r : (json_decref(r), eval ? json_true() : json_null());
	}
	return v;
}

static json_t *cel_expr(struct cel *c, bool eval)
{
	json_t *cond = cel_or(c, eval), *yes, *no;
	bool which;

	if (!cond || !cel_eat(c, "?"))
		return cond;
	which = cel_truth(c, cond, eval);
	json_decref(cond);
	if (c->failed || !(yes = cel_expr(c, eval && which)))
		return NULL;
	if (!cel_expect(c, ":") || !(no = cel_expr(c, eval && !which))) {
		json_decref(yes);
		return NULL;
	}
	if (eval && which) {
		json_decref(no);
		return yes;
	}
	json_decref(yes);
	return eval ? no : (json_decref(no), json_null());
}

int oapi_cel_eval(const char *rule, const json_t *self, char *why, size_t why_size)
{
	struct cel c = { .p = rule, .self = self, .why = why, .why_size = why_size };
	json_t *v = cel_expr(&c, true);
	int result = -1;

	cel_space(&c);
	if (v && !c.failed && *c.p)
		cel_fail(&c, "unexpected \"%.20s\"", c.p);
	if (v && !c.failed) {
		if (json_is_boolean(v))
			result = json_is_true(v);
		else
			cel_fail(&c, "the rule is not a bool");
	}
	json_decref(v);
	return c.failed ? -1 : result;
}

/* ---- the structural schema ---- */

struct check {
	struct buf *errors;
	size_t count;
};

static void problem(struct check *k, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct check *k, const char *path, const char *fmt, ...)
{
	va_list ap;

	k->count++;
	buf_addf(k->errors, "%s: ", *path ? path : "<root>");
	va_start(ap, fmt);
	buf_vaddf(k->errors, fmt, ap);
	va_end(ap);
	buf_adds(k->errors, "\n");
}

static bool number_of(const struct ytree *schema, const char *key, long long *out)
{
	const char *s = ytree_str(ytree_get(schema, key));
	char *end;

	if (!s)
		return false;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return !errno && !*end && end != s;
}

static bool is_true(const struct ytree *schema, const char *key)
{
	const char *s = ytree_str(ytree_get(schema, key));

	return s && !strcmp(s, "true");
}

json_t *oapi_json_from_yaml(const struct ytree *t)
{
	char *end;
	long long n;

	if (!t)
		return NULL;
	if (t->kind == YTREE_MAP) {
		json_t *o = json_object();

		for (size_t i = 0; i < t->len; i++)
			json_object_set_new(o, t->keys[i], oapi_json_from_yaml(t->items[i]));
		return o;
	}
	if (t->kind == YTREE_SEQ) {
		json_t *a = json_array();

		for (size_t i = 0; i < t->len; i++)
			json_array_append_new(a, oapi_json_from_yaml(t->items[i]));
		return a;
	}
	if (t->quoted)
		return json_string(t->value);
	if (!strcmp(t->value, "true") || !strcmp(t->value, "false"))
		return json_boolean(!strcmp(t->value, "true"));
	if (!*t->value || !strcmp(t->value, "null") || !strcmp(t->value, "~"))
		return json_null();
	errno = 0;
	n = strtoll(t->value, &end, 10);
	if (!errno && !*end && end != t->value)
		return json_integer(n);
	return json_string(t->value);
}

/* RFC 3339 date-time, as the API server's strfmt reads it: 2024-05-01T10:00:00Z, offsets, fractions. */
static bool is_date_time(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";

	for (size_t i = 0; i < sizeof(shape) - 1; i++)
		if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) :
		    (shape[i] == 'T' ? (s[i] != 'T' && s[i] != 't' && s[i] != ' ') : s[i] != shape[i]))
			return false;
	s += sizeof(shape) - 1;
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return false;
		while (isdigit((unsigned char)*s))
			s++;
	}
	if ((*s == 'Z' || *s == 'z') && !s[1])
		return true;
	return (*s == '+' || *s == '-') && isdigit((unsigned char)s[1]) &&
	       isdigit((unsigned char)s[2]) && s[3] == ':' && isdigit((unsigned char)s[4]) &&
	       isdigit((unsigned char)s[5]) && !s[6];
}

static void check_node(struct check *k, const struct ytree *schema, const json_t *v,
		       const char *path, int depth);

static void check_rules(struct check *k, const struct ytree *schema, const json_t *v,
			const char *path)
{
	const struct ytree *rules = ytree_get(schema, "x-kubernetes-validations");

	for (size_t i = 0; rules && rules->kind == YTREE_SEQ && i < rules->len; i++) {
		const char *rule = ytree_str(ytree_get(rules->items[i], "rule"));
		const char *message = ytree_str(ytree_get(rules->items[i], "message"));
		const char *field = ytree_str(ytree_get(rules->items[i], "fieldPath"));
		char why[256] = "", at[512];
		int r;

		if (!rule)
			continue;
		if (strstr(rule, "oldSelf"))
			continue;  /* a transition rule: not on create */
		/* The API server reports a rule at its fieldPath (".size") under the node. */
		snprintf(at, sizeof(at), "%s%s", path, field && *path ? field :
			 field && *field == '.' ? field + 1 : field ? field : "");
		r = oapi_cel_eval(rule, v, why, sizeof(why));
		if (r < 0)
			problem(k, at, "rule cannot be evaluated (%s): %s", why, rule);
		else if (!r)
			problem(k, at, "%s (rule: %s)", message ? message : "fails", rule);
	}
}

static void check_string(struct check *k, const struct ytree *schema, const char *s,
			 const char *path)
{
	const char *pattern = ytree_str(ytree_get(schema, "pattern"));
	const char *format = ytree_str(ytree_get(schema, "format"));
	long long n;

	if (!utf8_valid(s, strlen(s)))
		problem(k, path, "not UTF-8");
	if (number_of(schema, "maxLength", &n) && (long long)chars(s) > n)
		problem(k, path, "longer than %lld characters", n);
	if (number_of(schema, "minLength", &n) && (long long)chars(s) < n)
		problem(k, path, "shorter than %lld characters", n);
	if (pattern && pattern_match(pattern, s) != 1)
		problem(k, path, "\"%.80s\" does not match %s", s, pattern);
	if (format && !strcmp(format, "date-time") && !is_date_time(s))
		problem(k, path, "\"%.80s\" is not an RFC 3339 date-time", s);
}

static void check_integer(struct check *k, const struct ytree *schema, long long x,
			  const char *path)
{
	const char *format = ytree_str(ytree_get(schema, "format"));
	long long n;

	if (number_of(schema, "minimum", &n) && x < n)
		problem(k, path, "%lld is less than %lld", x, n);
	if (number_of(schema, "maximum", &n) && x > n)
		problem(k, path, "%lld is more than %lld", x, n);
	if (format && !strcmp(format, "int32") && (x < INT32_MIN || x > INT32_MAX))
		problem(k, path, "%lld is out of int32", x);
}

static void check_list(struct check *k, const struct ytree *schema, const json_t *v,
		       const char *path, int depth)
{
	const char *type = ytree_str(ytree_get(schema, "x-kubernetes-list-type"));
	const struct ytree *keys = ytree_get(schema, "x-kubernetes-list-map-keys");
	size_t n = json_array_size(v);
	long long limit;
	char sub[512];

	if (number_of(schema, "maxItems", &limit) && (long long)n > limit)
		problem(k, path, "more than %lld items", limit);
	if (number_of(schema, "minItems", &limit) && (long long)n < limit)
		problem(k, path, "fewer than %lld items", limit);
	for (size_t i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		check_node(k, ytree_get(schema, "items"), json_array_get(v, i), sub, depth + 1);
		for (size_t j = 0; type && j < i; j++) {
			const json_t *a = json_array_get(v, i), *b = json_array_get(v, j);
			bool same = true;

			if (!strcmp(type, "set")) {
				same = json_equal(a, b);
			} else if (!strcmp(type, "map") && keys && keys->kind == YTREE_SEQ) {
				for (size_t q = 0; q < keys->len; q++) {
					const char *key = ytree_str(keys->items[q]);

					same = same && json_equal(json_object_get(a, key),
								  json_object_get(b, key));
				}
			} else {
				same = false;
			}
			if (same)
				problem(k, sub, "duplicate of item %zu in a list of type %s", j, type);
		}
	}
}

static void check_object(struct check *k, const struct ytree *schema, const json_t *v,
			 const char *path, int depth)
{
	const struct ytree *props = ytree_get(schema, "properties");
	const struct ytree *extra = ytree_get(schema, "additionalProperties");
	const struct ytree *required = ytree_get(schema, "required");
	long long limit;
	const char *key;
	json_t *item;
	char sub[512];

	for (size_t i = 0; required && required->kind == YTREE_SEQ && i < required->len; i++) {
		const char *name = ytree_str(required->items[i]);

		if (name && !json_object_get(v, name)) {
			/* At the missing field, as the API server's "Required value". */
			snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", name);
			problem(k, sub, "required");
		}
	}
	if (number_of(schema, "maxProperties", &limit) && (long long)json_object_size(v) > limit)
		problem(k, path, "more than %lld entries", limit);
	if (number_of(schema, "minProperties", &limit) && (long long)json_object_size(v) < limit)
		problem(k, path, "fewer than %lld entries", limit);
	json_object_foreach((json_t *)v, key, item) {
		const struct ytree *sub_schema = ytree_get(props, key);

		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
		if (!utf8_valid(key, strlen(key)))
			problem(k, sub, "key not UTF-8");
		if (sub_schema)
			check_node(k, sub_schema, item, sub, depth + 1);
		else if (extra && extra->kind == YTREE_MAP)
			check_node(k, extra, item, sub, depth + 1);
		else if (props || (extra && ytree_str(extra) && !strcmp(ytree_str(extra), "false")))
			problem(k, sub, "unknown field: the API server would drop it");
	}
}

/* v with every missing property that has a default filled in, one level down (a new reference). */
static json_t *defaulted(const struct ytree *schema, const json_t *v)
{
	const struct ytree *props = ytree_get(schema, "properties");
	json_t *out;

	if (!json_is_object(v) || !props || props->kind != YTREE_MAP)
		return json_incref((json_t *)v);
	out = json_copy((json_t *)v);
	for (size_t i = 0; out && i < props->len; i++) {
		const struct ytree *d = ytree_get(props->items[i], "default");

		if (d && !json_object_get(out, props->keys[i]))
			json_object_set_new(out, props->keys[i], oapi_json_from_yaml(d));
	}
	return out;
}

static bool type_is(const json_t *v, const char *type)
{
	if (!strcmp(type, "object"))
		return json_is_object(v);
	if (!strcmp(type, "array"))
		return json_is_array(v);
	if (!strcmp(type, "string"))
		return json_is_string(v);
	if (!strcmp(type, "integer"))
		return json_is_integer(v);
	if (!strcmp(type, "number"))
		return json_is_number(v);
	if (!strcmp(type, "boolean"))
		return json_is_boolean(v);
	return false;
}

static void check_node(struct check *k, const struct ytree *schema, const json_t *given,
		       const char *path, int depth)
{
	const char *type = ytree_str(ytree_get(schema, "type"));
	const struct ytree *values = ytree_get(schema, "enum");
	json_t *v;

	if (!schema || schema->kind != YTREE_MAP) {
		problem(k, path, "no schema");
		return;
	}
	if (depth > 64) {
		problem(k, path, "nested too deep");
		return;
	}
	if (json_is_null(given) && !is_true(schema, "nullable")) {
		problem(k, path, "null is not allowed");
		return;
	}
	v = defaulted(schema, given);
	if (is_true(schema, "x-kubernetes-int-or-string")) {
		if (!json_is_integer(v) && !json_is_string(v))
			problem(k, path, "must be an integer or a string");
	} else if (type && !type_is(v, type)) {
		problem(k, path, "must be of type %s", type);
		goto out;
	}
	if (values && values->kind == YTREE_SEQ) {
		bool found = false;

		for (size_t i = 0; !found && i < values->len; i++) {
			json_t *want = oapi_json_from_yaml(values->items[i]);

			found = json_equal(want, v);
			json_decref(want);
		}
		if (!found)
			problem(k, path, "not one of the allowed values");
	}
	if (json_is_string(v))
		check_string(k, schema, json_string_value(v), path);
	else if (json_is_integer(v))
		check_integer(k, schema, json_integer_value(v), path);
	else if (json_is_array(v))
		check_list(k, schema, v, path, depth);
	else if (json_is_object(v))
		check_object(k, schema, v, path, depth);
	check_rules(k, schema, v, path);
out:
	json_decref(v);
}

size_t oapi_validate(const struct ytree *schema, const json_t *obj, struct buf *errors)
{
	struct check k = { .errors = errors };

	check_node(&k, schema, obj, "", 0);
	return k.count;
}

/* ---- the CRDs, loaded once ---- */

#define MAX_CRDS 4

static struct {
	char *path;
	struct ytree *tree;
} crds[MAX_CRDS];
static size_t n_crds;

static void crds_free(void)
{
	for (size_t i = 0; i < n_crds; i++) {
		free(crds[i].path);
		ytree_free(crds[i].tree);
	}
	for (size_t i = 0; i < n_patterns; i++) {
		if (patterns[i].ok)
			regfree(&patterns[i].re);
		free(patterns[i].text);
	}
	n_crds = n_patterns = 0;
}

const struct ytree *oapi_crd_schema(const char *path)
{
	size_t i;

	for (i = 0; i < n_crds && strcmp(crds[i].path, path); i++)
		;
	if (i == n_crds) {
		if (n_crds == MAX_CRDS || ytree_load(path, &crds[i].tree))
			return NULL;
		if (!(crds[i].path = strdup(path))) {
			ytree_free(crds[i].tree);
			return NULL;
		}
		if (!n_crds)
			atexit(crds_free);
		n_crds++;
	}
	return ytree_path(ytree_at(ytree_get(ytree_get(crds[i].tree, "spec"), "versions"), 0),
			  "schema.openAPIV3Schema");
}
