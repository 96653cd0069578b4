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
	w->skipping = false;
}

void watch_release(struct watch *w)
{
	buf_release(&w->line);
	w->skipping = false;
}

void watch_reset(struct watch *w)
{
	if (w->line.cap > WATCH_KEEP_BYTES)
		buf_release(&w->line);
	else
		buf_reset(&w->line);
	w->skipping = false;
}

size_t watch_pending(const struct watch *w)
{
	return w->line.len;
}

static bool is_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/*
 * Decode one complete line and hand it on. Returns CADRE_EPARSE for a line
 * that is not an event; what the callback returned goes to *stop, so that
 * a callback's code is never mistaken for a bad line.
 */
static int deliver(const char *line, size_t len, watch_event_fn fn, void *ctx,
		   int *stop)
{
	json_t *root, *object;
	const char *type;
	size_t i;
	int err = CADRE_EPARSE;

	if (is_blank(line, len))
		return 0;
	root = json_loadb(line, len, 0, NULL);
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
			note(&first, deliver(data, n, fn, ctx, &stop));
		} else {
			err = buf_add(&w->line, data, n);
			if (!err)
				err = deliver(w->line.data, w->line.len, fn, ctx, &stop);
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
