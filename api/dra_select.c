/*
 * dra_select.c - the equalities of a DeviceClass's CEL selector that cadre
 * reads (dra_select.h). A hand scanner over the text: it only has to find
 * the top level of the expression (quotes and brackets skipped) and read
 * two fixed shapes of path; everything else is left to kube-scheduler.
 */
#include "api/dra_select.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

/* Parentheses nested deeper than this are not looked into (the conjunct is taken to hold). */
#define NESTING_MAX 32

struct span {
	const char *p;
	size_t n;
};

struct walk {
	dra_term_fn fn;
	void *ctx;
	/* Room for any literal or name of the expression, and for "D/NAME". */
	char *value, *domain, *name, *attribute;
	int ret;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static struct span trim(struct span s)
{
	while (s.n && is_space(s.p[0])) {
		s.p++;
		s.n--;
	}
	while (s.n && is_space(s.p[s.n - 1]))
		s.n--;
	return s;
}

/* The index just past the quoted text starting at s.p[i]; past s.n when it is not closed. */
static size_t skip_quoted(struct span s, size_t i)
{
	char quote = s.p[i];

	for (i++; i < s.n; i++) {
		if (s.p[i] == '\\')
			i++;
		else if (s.p[i] == quote)
			return i + 1;
	}
	return s.n + 1;
}

/*
 * Walk s at depth 0 (outside quotes and brackets), calling at(ctx, i) for
 * each index there; false when s is unbalanced or a quote is not closed.
 */
static bool top_level(struct span s, bool (*at)(void *ctx, struct span s, size_t i), void *ctx)
{
	int depth = 0;

	for (size_t i = 0; i < s.n; i++) {
		char c = s.p[i];

		if (c == '\'' || c == '"') {
			i = skip_quoted(s, i);
			if (i > s.n)
				return false;
			i--;
		} else if (c == '(' || c == '[' || c == '{') {
			depth++;
		} else if (c == ')' || c == ']' || c == '}') {
			if (--depth < 0)
				return false;
		} else if (depth == 0 && !at(ctx, s, i)) {
			return false;
		}
	}
	return depth == 0;
}

/* Whether s is one pair of parentheses around the rest. */
static bool wrapped(struct span s)
{
	int depth = 0;

	if (s.n < 2 || s.p[0] != '(' || s.p[s.n - 1] != ')')
		return false;
	for (size_t i = 0; i < s.n; i++) {
		char c = s.p[i];

		if (c == '\'' || c == '"') {
			i = skip_quoted(s, i);
			if (i > s.n)
				return false;
			i--;
		} else if (c == '(') {
			depth++;
		} else if (c == ')' && --depth == 0 && i != s.n - 1) {
			return false;
		}
	}
	return depth == 0;
}

/* s is exactly an integer (an optional '-', then digits) or true or false: into out. */
static bool plain_literal(struct span s, char *out, enum dra_literal *kind)
{
	size_t i = s.n && s.p[0] == '-';

	if ((s.n == 4 && !memcmp(s.p, "true", 4)) || (s.n == 5 && !memcmp(s.p, "false", 5))) {
		*kind = DRA_LITERAL_BOOL;
	} else {
		/* At most 18 digits: every such integer is an int64 CEL and jansson agree on. */
		if (i == s.n || s.n - i > 18)
			return false;
		for (; i < s.n; i++)
			if (s.p[i] < '0' || s.p[i] > '9')
				return false;
		*kind = DRA_LITERAL_INT;
	}
	memcpy(out, s.p, s.n);
	out[s.n] = '\0';
	return true;
}

/* s is exactly one string literal, '...' or "...": its value into out. */
static bool literal(struct span s, char *out)
{
	size_t o = 0;
	char quote;

	if (s.n < 2)
		return false;
	quote = s.p[0];
	if ((quote != '\'' && quote != '"') || s.p[s.n - 1] != quote)
		return false;
	for (size_t i = 1; i < s.n - 1; i++) {
		char c = s.p[i];

		/* A quote inside ends the literal early: '''...''' and 'a' + 'b' are not one. */
		if (c == quote || c == '\n' || c == '\r')
			return false;
		if (c == '\\') {
			if (i + 1 >= s.n - 1)
				return false;
			c = s.p[++i];
			/* The escapes a name or a value plausibly holds; any other is not read. */
			if (c != '\\' && c != '\'' && c != '"')
				return false;
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return true;
}

/* s is one literal of any kind. */
static bool value_of(struct span s, char *out, enum dra_literal *kind)
{
	*kind = DRA_LITERAL_STRING;
	return literal(s, out) || plain_literal(s, out, kind);
}

struct cursor {
	const char *p, *end;
};

static void skip_space(struct cursor *c)
{
	while (c->p < c->end && is_space(*c->p))
		c->p++;
}

static bool punct(struct cursor *c, char ch)
{
	skip_space(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

/* The identifier w, whole (not the start of a longer one). */
static bool word(struct cursor *c, const char *w)
{
	size_t n = strlen(w);

	skip_space(c);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) ||
	    (c->p + n < c->end && is_ident(c->p[n])))
		return false;
	c->p += n;
	return true;
}

static bool ident(struct cursor *c, char *out)
{
	size_t n = 0;

	skip_space(c);
	if (c->p >= c->end || !is_ident(*c->p) || (*c->p >= '0' && *c->p <= '9'))
		return false;
	while (c->p < c->end && is_ident(*c->p))
		out[n++] = *c->p++;
	out[n] = '\0';
	return true;
}

/* A string literal at the cursor, non-empty, into out. */
static bool quoted(struct cursor *c, char *out)
{
	struct span s;
	size_t end;

	skip_space(c);
	if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
		return false;
	s = (struct span){ c->p, (size_t)(c->end - c->p) };
	end = skip_quoted(s, 0);
	if (end > s.n || !literal((struct span){ c->p, end }, out) || !*out)
		return false;
	c->p += end;
	return true;
}

/*
 * s is device.driver (*attribute NULL) or device.attributes['D'].NAME
 * (*attribute "D/NAME", in w->attribute).
 */
static bool path(struct walk *w, struct span s, const char **attribute)
{
	struct cursor c = { s.p, s.p + s.n };
	size_t d, n;

	if (!word(&c, "device") || !punct(&c, '.'))
		return false;
	if (word(&c, "driver")) {
		*attribute = NULL;
	} else {
		if (!word(&c, "attributes") || !punct(&c, '[') || !quoted(&c, w->domain) ||
		    !punct(&c, ']'))
			return false;
		if (punct(&c, '.')) {
			if (!ident(&c, w->name))
				return false;
		} else if (!punct(&c, '[') || !quoted(&c, w->name) || !punct(&c, ']')) {
			return false;
		}
		d = strlen(w->domain);
		n = strlen(w->name);
		memcpy(w->attribute, w->domain, d);
		w->attribute[d] = '/';
		memcpy(w->attribute + d + 1, w->name, n + 1);
		*attribute = w->attribute;
	}
	skip_space(&c);
	return c.p == c.end;
}

/* Where the one top-level "==" of a conjunct is; two or more, or none: not an equality. */
struct equality {
	size_t at;
	int count;
};

static bool find_equals(void *ctx, struct span s, size_t i)
{
	struct equality *e = ctx;

	if (s.p[i] != '=' || i + 1 >= s.n || s.p[i + 1] != '=')
		return true;
	if ((i > 0 && strchr("=!<>", s.p[i - 1])) || (i + 2 < s.n && s.p[i + 2] == '='))
		return true;
	e->at = i;
	e->count++;
	return true;
}

static int conjunction(struct walk *w, struct span s, int level);

static void conjunct(struct walk *w, struct span s, int level)
{
	struct equality e = { 0, 0 };
	struct span left, right;
	enum dra_literal kind;
	const char *attribute;

	s = trim(s);
	if (wrapped(s)) {
		if (level < NESTING_MAX)
			w->ret = conjunction(w, (struct span){ s.p + 1, s.n - 2 }, level + 1);
		return;
	}
	if (!top_level(s, find_equals, &e) || e.count != 1)
		return;
	left = trim((struct span){ s.p, e.at });
	right = trim((struct span){ s.p + e.at + 2, s.n - e.at - 2 });
	if (!(value_of(left, w->value, &kind) && path(w, right, &attribute)) &&
	    !(value_of(right, w->value, &kind) && path(w, left, &attribute)))
		return;
	/* A driver's name is a string: device.driver == 3 is not read. */
	if (!attribute && kind != DRA_LITERAL_STRING)
		return;
	w->ret = w->fn(w->ctx, attribute, w->value, kind);
}

/* A top-level "||" or "?" makes the expression no conjunction. */
static bool no_alternative(void *ctx, struct span s, size_t i)
{
	(void)ctx;
	return !(s.p[i] == '?' || (s.p[i] == '|' && i + 1 < s.n && s.p[i + 1] == '|'));
}

struct split {
	struct walk *w;
	size_t start;
	int level;
};

static bool split_and(void *ctx, struct span s, size_t i)
{
	struct split *sp = ctx;

	if (s.p[i] != '&' || i + 1 >= s.n || s.p[i + 1] != '&' || i < sp->start)
		return true;
	conjunct(sp->w, (struct span){ s.p + sp->start, i - sp->start }, sp->level);
	sp->start = i + 2;
	return sp->w->ret == 0;
}

static int conjunction(struct walk *w, struct span s, int level)
{
	struct split sp = { w, 0, level };

	if (!top_level(s, no_alternative, NULL))
		return 0;
	if (!top_level(s, split_and, &sp) || w->ret)
		return w->ret;
	conjunct(w, (struct span){ s.p + sp.start, s.n - sp.start }, level);
	return w->ret;
}

int dra_select_terms(const char *expr, dra_term_fn fn, void *ctx)
{
	size_t n = expr ? strlen(expr) : 0;
	struct walk w = { .fn = fn, .ctx = ctx };
	char *room;
	int ret;

	if (!n)
		return 0;
	room = malloc(5 * (n + 1));
	if (!room)
		return CADRE_ENOMEM;
	w.value = room;
	w.domain = room + (n + 1);
	w.name = room + 2 * (n + 1);
	w.attribute = room + 3 * (n + 1);
	ret = conjunction(&w, (struct span){ expr, n }, 0);
	free(room);
	return ret;
}
