/*
 * watch.h - framing of a Kubernetes watch stream into events.
 *
 * A watch response (GET ...?watch=1) is a sequence of JSON objects, one per
 * line: {"type": "ADDED", "object": {...}}. The bytes arrive from the HTTP
 * layer in chunks that have nothing to do with lines: one chunk may hold
 * half an event, or three and a half. A struct watch takes the chunks in
 * order and calls back once per complete line, so the events seen are the
 * same however the stream was split.
 *
 * A line may not grow past a cap (16 MiB by default; the API server limits
 * one object to about 1.5 MiB): past it, the rest of the line is skipped,
 * CADRE_ETOOBIG is reported, and framing carries on with the next line. The
 * memory a watch holds is therefore bounded by the cap, whatever the server
 * sends. Blank lines (keep-alives) are ignored; a "\r\n" ending is accepted.
 *
 * Each object's metadata.managedFields is left out before the line is
 * decoded (watch_prune): the API server's record of who wrote which field,
 * which no caller reads, is up to half of a pod's bytes, and decoding is
 * most of what a watch costs.
 *
 * Not thread-safe: one stream, one thread.
 */
#ifndef CADRE_KUBE_WATCH_H
#define CADRE_KUBE_WATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"

#define WATCH_DEFAULT_MAX_LINE ((size_t)16 << 20)

enum watch_type {
	WATCH_ADDED,
	WATCH_MODIFIED,
	WATCH_DELETED,
	WATCH_BOOKMARK,   /* only metadata.resourceVersion is meaningful */
	WATCH_ERROR,      /* object is a metav1.Status; code 410 means relist */
};

/*
 * Called once per event. object is a NEW reference that the callback owns
 * (json_decref it, or keep it). Return 0 to go on; a negative CADRE_E* code
 * stops watch_feed(), which returns it; the rest of that chunk is dropped.
 */
typedef int (*watch_event_fn)(void *ctx, enum watch_type type, json_t *object);

struct watch {
	struct buf line;    /* the unfinished line, capped at max_line */
	struct buf pruned;  /* a line without its managedFields, to decode */
	size_t max_line;
	bool skipping;      /* inside a line that went past the cap */
};

/* Set up; max_line 0 means WATCH_DEFAULT_MAX_LINE. */
void watch_init(struct watch *w, size_t max_line);

/* Free the line buffer. The watch may be reused after watch_init(). */
void watch_release(struct watch *w);

/* Forget any partial line: the start of a new stream. */
void watch_reset(struct watch *w);

/*
 * Frame len bytes (data may be NULL when len is 0). Every complete line in
 * them is delivered, in order. Returns 0; the callback's code if it
 * stopped; or, when a line could not be used, the first such error after
 * the whole chunk is framed (the stream is then out of step with the
 * server, and a reflector reconnects):
 *   CADRE_ETOOBIG  a line went past max_line (reported once per line)
 *   CADRE_EPARSE   a line is not JSON, not an object, has an unknown type,
 *                  or lacks an object
 *   CADRE_ENOMEM
 */
int watch_feed(struct watch *w, const char *data, size_t len, watch_event_fn fn,
	       void *ctx);

/* Bytes of an unfinished line held now (a stream that ends here was cut). */
size_t watch_pending(const struct watch *w);

/*
 * The JSON text of len bytes without any "managedFields" member of an
 * object that is the value of a "metadata" member, into out (reset first):
 * the same text, as jansson decodes it, as the whole one with those
 * members deleted. Returns 1 when out holds the pruned text; 0 when
 * nothing was pruned (no such member, a key written with escapes, nesting
 * past 64 levels, or text it cannot follow: the caller decodes the original,
 * which says what is wrong with it); CADRE_ENOMEM. A managedFields value
 * is skipped, not checked: a line whose only flaw is inside one decodes.
 */
int watch_prune(const char *text, size_t len, struct buf *out);

/* "ADDED", "MODIFIED", ...; never NULL. */
const char *watch_type_name(enum watch_type type);

#endif
