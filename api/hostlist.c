/*
 * hostlist.c - Slurm hostlist expressions. The rules are Slurm's
 * (src/common/hostlist.c); the code is written for cadre: compress walks the
 * names once, expand checks the size of every token before it allocates.
 */
#include "api/hostlist.h"

#include "base/buf.h"
#include "base/err.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void hostlist_init(struct hostlist *hl)
{
	hl->names = NULL;
	hl->len = 0;
	hl->cap = 0;
}

void hostlist_release(struct hostlist *hl)
{
	for (size_t i = 0; i < hl->len; i++)
		free(hl->names[i]);
	free(hl->names);
	hostlist_init(hl);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_separator(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n';
}

/* ---- compress ---- */

static size_t digits_of(unsigned long n)
{
	size_t digits = 1;

	while (n /= 10)
		digits++;
	return digits;
}

/* One run of hosts: prefix + [lo, hi] at width, or one host as written. */
struct range {
	const char *prefix;  /* borrowed from the caller's names */
	size_t prefix_len;
	unsigned long lo, hi;
	int width;
	bool single;         /* no number: prefix is the whole name */
};

/* Leading zeros of n written at width (Slurm's _zero_padded). */
static int zero_padding(unsigned long n, int width)
{
	int digits = (int)digits_of(n);

	return width > digits ? width - digits : 0;
}

/*
 * Whether a range whose first number is n at *wn can take m at *wm, and the
 * width they then share: whichever number's padding a change of width would
 * not alter takes the other's width (Slurm's _width_equiv).
 */
static bool widths_combine(unsigned long n, int *wn, unsigned long m, int *wm)
{
	bool n_keeps = zero_padding(n, *wn) == zero_padding(n, *wm);
	bool m_keeps = zero_padding(m, *wm) == zero_padding(m, *wn);

	if (!n_keeps && !m_keeps)
		return false;
	if (!n_keeps)
		*wm = *wn;
	else
		*wn = *wm;
	return true;
}

static int split_name(const char *name, struct range *r)
{
	size_t len, digits = 0;

	if (!name || !*name)
		return CADRE_EINVAL;
	len = strlen(name);
	if (len > HOSTLIST_NAME_MAX)
		return CADRE_EINVAL;
	for (size_t i = 0; i < len; i++)
		if (is_separator(name[i]) || name[i] == '[' || name[i] == ']')
			return CADRE_EINVAL;
	while (digits < len && is_digit(name[len - 1 - digits]))
		digits++;
	memset(r, 0, sizeof(*r));
	r->prefix = name;
	if (digits == 0 || digits > HOSTLIST_DIGITS_MAX) {
		r->prefix_len = len;
		r->single = true;
		return 0;
	}
	r->prefix_len = len - digits;
	r->lo = r->hi = strtoul(name + r->prefix_len, NULL, 10);
	r->width = (int)digits;
	return 0;
}

static bool same_prefix(const struct range *a, const struct range *b)
{
	return a->prefix_len == b->prefix_len &&
	       !memcmp(a->prefix, b->prefix, a->prefix_len);
}

/* Whether b may share a's bracket (Slurm's hostrange_within_range). */
static bool share_bracket(const struct range *a, const struct range *b)
{
	return !a->single && !b->single && same_prefix(a, b);
}

static int add_number(struct buf *out, const struct range *r)
{
	if (r->lo == r->hi)
		return buf_addf(out, "%0*lu", r->width, r->lo);
	return buf_addf(out, "%0*lu-%0*lu", r->width, r->lo, r->width, r->hi);
}

/* Write ranges[*i...] that share one prefix; *i ends on the last written. */
static int add_bracketed(struct buf *out, const struct range *ranges, size_t n, size_t *i)
{
	const struct range *first = &ranges[*i];
	bool bracket = first->lo != first->hi ||
		       (*i + 1 < n && share_bracket(first, &ranges[*i + 1]));
	int err;

	if ((err = buf_add(out, first->prefix, first->prefix_len)))
		return err;
	if (bracket && (err = buf_addc(out, '[')))
		return err;
	for (;;) {
		if ((err = add_number(out, &ranges[*i])))
			return err;
		if (*i + 1 >= n || !share_bracket(&ranges[*i], &ranges[*i + 1]))
			break;
		if ((err = buf_addc(out, ',')))
			return err;
		++*i;
	}
	return bracket ? buf_addc(out, ']') : 0;
}

int hostlist_compress(const char *const *names, size_t n, struct buf *out)
{
	struct range *ranges = NULL, next;
	size_t len = 0;
	int err = 0;

	if (n == 0)
		return 0;
	if (!(ranges = calloc(n, sizeof(*ranges))))
		return CADRE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct range *tail = len ? &ranges[len - 1] : NULL;

		if ((err = split_name(names[i], &next)))
			goto out;
		if (tail && !tail->single && !next.single && same_prefix(tail, &next) &&
		    tail->hi + 1 == next.lo &&
		    widths_combine(tail->lo, &tail->width, next.lo, &next.width))
			tail->hi = next.lo;
		else
			ranges[len++] = next;
	}
	for (size_t i = 0; i < len; i++) {
		if (i && (err = buf_addc(out, ',')))
			goto out;
		if (ranges[i].single)
			err = buf_add(out, ranges[i].prefix, ranges[i].prefix_len);
		else
			err = add_bracketed(out, ranges, len, &i);
		if (err)
			goto out;
	}
out:
	free(ranges);
	return err;
}

/* ---- expand ---- */

struct span {
	unsigned long lo, hi;
	int width;
};

/* A token's pieces: literal text, or a bracket group of spans. */
struct segment {
	const char *text;    /* literal: borrowed from the expression */
	size_t text_len;
	struct span *spans;  /* group: owned; NULL for a literal */
	size_t n_spans;
	size_t span_at;      /* odometer position while expanding */
	unsigned long value;
};

struct token {
	struct segment *segs;
	size_t n_segs;
	size_t cap;
};

static void token_release(struct token *t)
{
	for (size_t i = 0; i < t->n_segs; i++)
		free(t->segs[i].spans);
	free(t->segs);
	memset(t, 0, sizeof(*t));
}

static struct segment *token_push(struct token *t)
{
	if (t->n_segs == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4;
		struct segment *segs = realloc(t->segs, cap * sizeof(*segs));

		if (!segs)
			return NULL;
		t->segs = segs;
		t->cap = cap;
	}
	memset(&t->segs[t->n_segs], 0, sizeof(t->segs[0]));
	return &t->segs[t->n_segs++];
}

/* Decimal digits s[0..len) into *value; at most HOSTLIST_DIGITS_MAX of them. */
static int parse_number(const char *s, size_t len, unsigned long *value)
{
	unsigned long v = 0;

	if (len == 0 || len > HOSTLIST_DIGITS_MAX)
		return CADRE_EPARSE;
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(s[i]))
			return CADRE_EPARSE;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	*value = v;
	return 0;
}

/* One group item "n" or "lo-hi" (s[0..len)). */
static int parse_span(const char *s, size_t len, struct span *span)
{
	const char *dash = memchr(s, '-', len);
	size_t lo_len = dash ? (size_t)(dash - s) : len;
	int err;

	if ((err = parse_number(s, lo_len, &span->lo)))
		return err;
	span->width = (int)lo_len;
	span->hi = span->lo;
	if (dash && (err = parse_number(dash + 1, len - lo_len - 1, &span->hi)))
		return err;
	return span->lo <= span->hi ? 0 : CADRE_EPARSE;
}

/* The group between '[' and ']' (s[0..len)) into seg. */
static int parse_group(const char *s, size_t len, struct segment *seg)
{
	size_t n = 1, at = 0;

	for (size_t i = 0; i < len; i++)
		n += s[i] == ',';
	if (!(seg->spans = calloc(n, sizeof(*seg->spans))))
		return CADRE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *comma = memchr(s + at, ',', len - at);
		size_t item_len = comma ? (size_t)(comma - (s + at)) : len - at;
		int err = parse_span(s + at, item_len, &seg->spans[i]);

		if (err)
			return err;
		seg->n_spans++;
		at += item_len + 1;
	}
	return 0;
}

/* Split one host expression (s[0..len), no separators outside brackets). */
static int parse_token(const char *s, size_t len, struct token *t)
{
	size_t i = 0;
	int err;

	while (i < len) {
		struct segment *seg = token_push(t);
		const char *close;

		if (!seg)
			return CADRE_ENOMEM;
		if (s[i] != '[') {
			seg->text = s + i;
			while (i < len && s[i] != '[') {
				if (s[i] == ']')
					return CADRE_EPARSE;
				i++;
			}
			seg->text_len = (size_t)(s + i - seg->text);
			continue;
		}
		close = memchr(s + i, ']', len - i);
		if (!close || memchr(s + i + 1, '[', (size_t)(close - (s + i + 1))))
			return CADRE_EPARSE;
		if ((err = parse_group(s + i + 1, (size_t)(close - (s + i + 1)), seg)))
			return err;
		i = (size_t)(close - s) + 1;
	}
	return 0;
}

/* How many hosts a token gives; refuses past room hosts or a name too long. */
static int token_measure(const struct token *t, size_t room, size_t *count)
{
	size_t hosts = 1, name_len = 0;

	for (size_t i = 0; i < t->n_segs; i++) {
		const struct segment *seg = &t->segs[i];
		size_t group = 0, widest = 0;

		if (!seg->spans) {
			name_len += seg->text_len;
			continue;
		}
		for (size_t k = 0; k < seg->n_spans; k++) {
			const struct span *span = &seg->spans[k];
			size_t width = digits_of(span->hi);

			group += span->hi - span->lo + 1;
			if (group > room)
				return CADRE_ETOOBIG;
			if ((size_t)span->width > width)
				width = (size_t)span->width;
			if (width > widest)
				widest = width;
		}
		name_len += widest;
		if (group > room || hosts > room / group)
			return CADRE_ETOOBIG;
		hosts *= group;
	}
	if (hosts > room || name_len > HOSTLIST_NAME_MAX)
		return CADRE_ETOOBIG;
	*count = hosts;
	return 0;
}

static int list_push(struct hostlist *hl, const char *name, size_t len)
{
	char *copy;

	if (len == 0)
		return CADRE_EPARSE;
	if (len > HOSTLIST_NAME_MAX)
		return CADRE_ETOOBIG;
	if (hl->len == hl->cap) {
		size_t cap = hl->cap ? hl->cap * 2 : 16;
		char **names = realloc(hl->names, cap * sizeof(*names));

		if (!names)
			return CADRE_ENOMEM;
		hl->names = names;
		hl->cap = cap;
	}
	if (!(copy = strndup(name, len)))
		return CADRE_ENOMEM;
	hl->names[hl->len++] = copy;
	return 0;
}

/* Step the odometer; false once every combination has been written. */
static bool token_advance(struct token *t)
{
	for (size_t i = t->n_segs; i-- > 0;) {
		struct segment *seg = &t->segs[i];

		if (!seg->spans)
			continue;
		if (seg->value < seg->spans[seg->span_at].hi) {
			seg->value++;
			return true;
		}
		if (seg->span_at + 1 < seg->n_spans) {
			seg->value = seg->spans[++seg->span_at].lo;
			return true;
		}
		seg->span_at = 0;
		seg->value = seg->spans[0].lo;
	}
	return false;
}

static int token_expand(struct token *t, struct hostlist *out)
{
	char name[HOSTLIST_NAME_MAX + 1 + HOSTLIST_DIGITS_MAX];
	int err;

	for (size_t i = 0; i < t->n_segs; i++)
		if (t->segs[i].spans)
			t->segs[i].value = t->segs[i].spans[0].lo;
	do {
		size_t len = 0;

		for (size_t i = 0; i < t->n_segs; i++) {
			const struct segment *seg = &t->segs[i];
			int n;

			if (!seg->spans) {
				if (seg->text_len > HOSTLIST_NAME_MAX - len)
					return CADRE_ETOOBIG;
				memcpy(name + len, seg->text, seg->text_len);
				len += seg->text_len;
				continue;
			}
			n = snprintf(name + len, sizeof(name) - len, "%0*lu",
				     seg->spans[seg->span_at].width, seg->value);
			if (n < 0 || (size_t)n > HOSTLIST_NAME_MAX - len)
				return CADRE_ETOOBIG;
			len += (size_t)n;
		}
		if ((err = list_push(out, name, len)))
			return err;
	} while (token_advance(t));
	return 0;
}

/* The end of the token at s[start]: the next separator outside brackets. */
static size_t token_end(const char *expr, size_t start)
{
	int depth = 0;
	size_t i = start;

	for (; expr[i]; i++) {
		if (expr[i] == '[')
			depth++;
		else if (expr[i] == ']')
			depth--;
		else if (depth <= 0 && is_separator(expr[i]))
			break;
	}
	return i;
}

int hostlist_expand(const char *expr, size_t max_hosts, struct hostlist *out)
{
	size_t at = 0;
	int err = 0;

	hostlist_init(out);
	if (!expr)
		return CADRE_EPARSE;
	while (expr[at]) {
		struct token t = { 0 };
		size_t end, count;

		if (is_separator(expr[at])) {
			at++;
			continue;
		}
		end = token_end(expr, at);
		err = parse_token(expr + at, end - at, &t);
		if (!err)
			err = token_measure(&t, max_hosts - out->len, &count);
		if (!err)
			err = token_expand(&t, out);
		token_release(&t);
		if (err)
			return err;
		at = end;
	}
	return 0;
}
