/*
 * watch.c - a watch stream from the API server through the framer
 * (kube/watch.h). The first byte picks where the stream is cut into the
 * chunks the HTTP layer would hand over; the rest is the stream.
 *
 * Properties: the events are the same however the stream is cut (the
 * stream whole, byte by byte, and in the chunks the first byte chose);
 * whether any line failed is the same too; what a watch holds never passes
 * its cap; and the stream as one text, when it decodes and watch_prune
 * prunes it, decodes pruned as whole with metadata.managedFields deleted.
 */
#include "fuzz/fuzz.h"

#include "base/buf.h"
#include "base/err.h"
#include "kube/watch.h"

#include <stdlib.h>
#include <string.h>

/* Small enough that the fuzzer reaches it. */
#define MAX_LINE 512

struct events {
	struct buf text;  /* "TYPE <object>\n" per event */
};

static int on_event(void *ctx, enum watch_type type, json_t *object)
{
	struct events *ev = ctx;
	char *dumped = json_dumps(object, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	FUZZ_CHECK(dumped, "an event object cannot be written");
	buf_addf(&ev->text, "%s %s\n", watch_type_name(type), dumped);
	free(dumped);
	json_decref(object);
	return 0;
}

/* Frame data in chunks of the sizes step gives; any error seen, in *failed. */
static void frame(const char *data, size_t size, size_t (*step)(size_t at, unsigned seed),
		  unsigned seed, struct events *ev, bool *failed)
{
	struct watch w;
	size_t at = 0;

	watch_init(&w, MAX_LINE);
	buf_init(&ev->text, (size_t)64 << 20);
	*failed = false;
	while (at < size) {
		size_t n = step(at, seed);
		int err;

		if (n > size - at)
			n = size - at;
		err = watch_feed(&w, data + at, n, on_event, ev);
		FUZZ_CHECK(err == 0 || err == CADRE_EPARSE || err == CADRE_ETOOBIG,
			   "watch_feed returned %d", err);
		*failed |= err != 0;
		FUZZ_CHECK(watch_pending(&w) <= MAX_LINE, "a watch holds %zu bytes, past its cap",
			   watch_pending(&w));
		at += n;
	}
	watch_release(&w);
}

static size_t whole(size_t at, unsigned seed)
{
	(void)at;
	(void)seed;
	return SIZE_MAX;
}

static size_t bytewise(size_t at, unsigned seed)
{
	(void)at;
	(void)seed;
	return 1;
}

/* Chunks of 1 to 16 bytes, a pattern the seed chooses. */
static size_t chosen(size_t at, unsigned seed)
{
	return 1 + ((at * 2654435761u) ^ seed) % 16;
}

/* Delete managedFields from every object that is a "metadata" member's value, as decoded. */
static void drop_managed(json_t *v)
{
	const char *key;
	json_t *m;
	size_t i;

	if (json_is_array(v)) {
		json_array_foreach(v, i, m)
			drop_managed(m);
		return;
	}
	json_object_foreach(v, key, m) {
		if (!strcmp(key, "metadata") && json_is_object(m))
			json_object_del(m, "managedFields");
		drop_managed(m);
	}
}

/*
 * watch_prune against the decoder: text that decodes and is pruned decodes,
 * pruned, as it does whole with those members deleted.
 */
static void check_prune(const char *text, size_t len)
{
	json_t *whole = json_loadb(text, len, JSON_DECODE_ANY, NULL), *pruned;
	struct buf out;
	int ret;

	buf_init(&out, len + 1);
	ret = watch_prune(text, len, &out);
	FUZZ_CHECK(ret == 0 || ret == 1, "watch_prune returned %d", ret);
	FUZZ_CHECK(out.len <= len, "pruned text of %zu bytes from %zu", out.len, len);
	if (whole && ret == 1) {
		drop_managed(whole);
		pruned = json_loadb(out.data, out.len, JSON_DECODE_ANY, NULL);
		FUZZ_CHECK(pruned && json_equal(pruned, whole), "pruned text decodes otherwise: %s",
			   buf_str(&out));
		json_decref(pruned);
	}
	json_decref(whole);
	buf_release(&out);
}

int fuzz_watch(const uint8_t *data, size_t size)
{
	struct events a, b, c;
	bool fa, fb, fc;

	if (!size)
		return 0;
	check_prune((const char *)data + 1, size - 1);
	frame((const char *)data + 1, size - 1, whole, 0, &a, &fa);
	frame((const char *)data + 1, size - 1, bytewise, 0, &b, &fb);
	frame((const char *)data + 1, size - 1, chosen, data[0], &c, &fc);
	FUZZ_CHECK(!strcmp(buf_str(&a.text), buf_str(&b.text)),
		   "whole and byte by byte differ:\n%s\nvs\n%s", buf_str(&a.text), buf_str(&b.text));
	FUZZ_CHECK(!strcmp(buf_str(&a.text), buf_str(&c.text)),
		   "whole and in chunks differ:\n%s\nvs\n%s", buf_str(&a.text), buf_str(&c.text));
	FUZZ_CHECK(fa == fb && fa == fc, "a failure seen only for some cuts: %d %d %d", fa, fb, fc);
	buf_release(&a.text);
	buf_release(&b.text);
	buf_release(&c.text);
	return 0;
}
