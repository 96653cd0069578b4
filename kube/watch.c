#include "kube/watch.h"

#include "base/err.h"

#include <string.h>

/*
 * After a long line the buffer keeps its allocation; past this much it is
 * given back, so one large object does not pin megabytes for the life of
 * the stream.
 */
#define WATCH_KEEP_BYTES (64 * 1024)

static const char *const type_names[] = {
	[WATCH_ADDED] = "ADDED",
	[WATCH_MODIFIED] = "MODIFIED",
	[WATCH_DELETED] = "DELETED",
	[WATCH_BOOKMARK] = "BOOKMARK",
	[WATCH_ERROR] = "ERROR",
};

const char *watch_type_name(enum watch_type type)
{
	if ((unsigned)type < sizeof(type_names) / sizeof(type_names[0]))
		return type_names[type];
	return "UNKNOWN";
}

void watch_init(struct watch *w, size_t max_line)
{
	w->max_line = max_line ? max_line : WATCH_DEFAULT_MAX_LINE;
	buf_init(&w->line, w->max_line);
	buf_init(&w->pruned, w->max_line);
	w->skipping = false;
}

void watch_release(struct watch *w)
{
	buf_release(&w->line);
	buf_release(&w->pruned);
	w->skipping = false;
}

/* Empty b, giving back a large allocation (WATCH_KEEP_BYTES). */
static void shrink(struct buf *b)
{
	if (b->cap > WATCH_KEEP_BYTES)
		buf_release(b);
	else
		buf_reset(b);
}

void watch_reset(struct watch *w)
{
	shrink(&w->line);
	w->skipping = false;
}

/* ---- leaving managedFields out ---- */

/* Objects and arrays nested deeper than this are not followed (watch_prune says 0). */
#define PRUNE_DEPTH 64

/* JSON's whitespace. */
static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static size_t skip_ws(const char *s, size_t len, size_t i)
{
	while (i < len && is_ws(s[i]))
		i++;
	return i;
}

/* One past the closing quote of the string that opens at s[i]; 0 when it never closes. */
static size_t string_end(const char *s, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return 0;
}

static bool ends_scalar(char c)
{
	return c == ',' || c == '}' || c == ']' || is_ws(c);
}

/*
 * One past the value that starts at s[i]: a string; an object or an array,
 * its brackets matched (at most PRUNE_DEPTH deep) and its strings stepped
 * over; or a scalar, up to what ends one. 0 when it does not end in the
 * text, its brackets do not match, or it is empty.
 */
static size_t value_end(const char *s, size_t len, size_t i)
{
	char closer[PRUNE_DEPTH];
	size_t depth = 0, start = i;

	if (i >= len)
		return 0;
	if (s[i] == '"')
		return string_end(s, len, i);
	if (s[i] != '{' && s[i] != '[') {
		while (i < len && !ends_scalar(s[i]))
			i++;
		return i > start ? i : 0;
	}
	for (; i < len; i++) {
		if (s[i] == '"') {
			size_t e = string_end(s, len, i);

			if (!e)
				return 0;
			i = e - 1;
		} else if (s[i] == '{' || s[i] == '[') {
			if (depth == PRUNE_DEPTH)
				return 0;
			closer[depth++] = s[i] == '{' ? '}' : ']';
		} else if (s[i] == '}' || s[i] == ']') {
			if (s[i] != closer[--depth])
				return 0;
			if (!depth)
				return i + 1;
		}
	}
	return 0;
}

/* What watch_prune knows of where it is. */
struct prune {
	const char *s;
	size_t len, at, copied;    /* the next byte to read; the first not yet copied */
	size_t depth;
	bool object[PRUNE_DEPTH];  /* frame d is an object, not an array */
	bool meta[PRUNE_DEPTH];    /* frame d is an object that is a "metadata" member's value */
	bool want_key;             /* the next string of this object is a key */
	bool after_metadata;       /* the last key was "metadata"; its value comes next */
	bool pruned;
	struct buf *out;
};

/*
 * The member whose key opens at p->at, up to the end of its value (end),
 * leaves the text: what comes before it is copied, and one comma beside it
 * goes too (the one before it; for a first member, the one after).
 */
static int drop_member(struct prune *p, size_t end)
{
	struct buf *out = p->out;
	size_t next;

	if (buf_add(out, p->s + p->copied, p->at - p->copied))
		return CADRE_ENOMEM;
	while (out->len && is_ws(out->data[out->len - 1]))
		out->len--;
	if (out->len && out->data[out->len - 1] == ',') {
		out->len--;
	} else {
		next = skip_ws(p->s, p->len, end);
		if (next < p->len && p->s[next] == ',')
			end = next + 1;
		p->want_key = true;
	}
	if (out->data)
		out->data[out->len] = '\0';
	p->copied = p->at = end;
	p->pruned = true;
	return 0;
}

/* The key that opens at p->at, in an object: 1 to go on, 0 to give up, or CADRE_ENOMEM. */
static int prune_key(struct prune *p)
{
	const char *s = p->s;
	size_t end = string_end(s, p->len, p->at), colon, value, value_stop;
	const char *key = s + p->at + 1;
	size_t key_len;

	if (!end || memchr(key, '\\', end - p->at - 1))
		return 0;
	key_len = end - p->at - 2;
	colon = skip_ws(s, p->len, end);
	if (colon >= p->len || s[colon] != ':')
		return 0;
	p->want_key = false;
	if (p->meta[p->depth - 1] && key_len == 13 && !memcmp(key, "managedFields", 13)) {
		value = skip_ws(s, p->len, colon + 1);
		value_stop = value_end(s, p->len, value);
		if (!value_stop)
			return 0;
		return drop_member(p, value_stop) ? CADRE_ENOMEM : 1;
	}
	p->after_metadata = key_len == 8 && !memcmp(key, "metadata", 8);
	p->at = colon + 1;
	return 1;
}

int watch_prune(const char *text, size_t len, struct buf *out)
{
	struct prune p = { .s = text, .len = len, .out = out };
	int ret;

	buf_reset(out);
	if (!len || !memmem(text, len, "\"managedFields\"", 15))
		return 0;
	while (p.at < len) {
		char c = text[p.at];

		if (c == '"' && p.depth && p.object[p.depth - 1] && p.want_key) {
			ret = prune_key(&p);
			if (ret <= 0)
				return ret;
			continue;
		}
		if (c == '"') {
			p.at = string_end(text, len, p.at);
			if (!p.at)
				return 0;
			p.after_metadata = false;
			continue;
		}
		if (c == '{' || c == '[') {
			if (p.depth == PRUNE_DEPTH)
				return 0;
			p.object[p.depth] = c == '{';
			p.meta[p.depth] = c == '{' && p.after_metadata;
			p.depth++;
			p.want_key = c == '{';
		} else if (c == '}' || c == ']') {
			if (!p.depth)
				return 0;
			p.depth--;
			p.want_key = false;
		} else if (c == ',') {
			p.want_key = p.depth && p.object[p.depth - 1];
		}
		if (!is_ws(c))
			p.after_metadata = false;
		p.at++;
	}
	if (!p.pruned)
		return 0;
	if (buf_add(out, text + p.copied, len - p.copied))
		return CADRE_ENOMEM;
	return 1;
}

size_t watch_pending(const struct watch *w)
{
	return w->line.len;
}

/* A line holds no '\n': whitespace alone is a keep-alive. */
static bool is_blank(const char *s, size_t len)
{
	return skip_ws(s, len, 0) == len;
}

/*
 * Decode one complete line and hand it on. Returns CADRE_EPARSE for a line
 * that is not an event; what the callback returned goes to *stop, so that
 * a callback's code is never mistaken for a bad line.
 */
static int deliver(const char *line, size_t len, struct buf *pruned, watch_event_fn fn,
		   void *ctx, int *stop)
{
	json_t *root, *object;
	const char *type;
	size_t i;
	int err;

	if (is_blank(line, len))
		return 0;
	err = watch_prune(line, len, pruned);
	if (err < 0)
		return err;
	root = err ? json_loadb(pruned->data, pruned->len, 0, NULL) : json_loadb(line, len, 0, NULL);
	shrink(pruned);
	err = CADRE_EPARSE;
	if (!json_is_object(root))
		goto out;
	type = json_string_value(json_object_get(root, "type"));
	object = json_object_get(root, "object");
	if (!type || !json_is_object(object))
		goto out;
	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
		if (!strcmp(type, type_names[i])) {
			*stop = fn(ctx, (enum watch_type)i, json_incref(object));
			err = 0;
			break;
		}
	}
out:
	json_decref(root);
	return err;
}

/* Keep the first error of a chunk; a callback's error ends the chunk. */
static void note(int *first, int err)
{
	if (err && !*first)
		*first = err;
}

int watch_feed(struct watch *w, const char *data, size_t len, watch_event_fn fn,
	       void *ctx)
{
	int first = 0, stop = 0, err;

	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl ? (size_t)(nl - data) : len;
		size_t used = nl ? n + 1 : n;

		if (w->skipping) {
			/* The rest of an over-long line: drop it, up to its end. */
			if (nl)
				w->skipping = false;
		} else if (n > w->max_line || w->line.len > w->max_line - n) {
			watch_reset(w);
			w->skipping = !nl;
			note(&first, CADRE_ETOOBIG);
		} else if (!nl) {
			err = buf_add(&w->line, data, n);
			if (err) {
				watch_reset(w);
				w->skipping = true;
				note(&first, err);
			}
		} else if (!w->line.len) {
			/* The common case: a whole line inside the chunk, no copy. */
			note(&first, deliver(data, n, &w->pruned, fn, ctx, &stop));
		} else {
			err = buf_add(&w->line, data, n);
			if (!err)
				err = deliver(w->line.data, w->line.len, &w->pruned, fn, ctx, &stop);
			watch_reset(w);
			note(&first, err);
		}
		if (stop)
			return stop;
		data += used;
		len -= used;
	}
	return first;
}
