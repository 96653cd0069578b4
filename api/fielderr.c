#include "api/fielderr.h"

#include "base/buf.h"
#include "base/err.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void field_errors_init(struct field_errors *errs)
{
	errs->items = NULL;
	errs->len = 0;
	errs->cap = 0;
	errs->total = 0;
}

void field_errors_release(struct field_errors *errs)
{
	for (size_t i = 0; i < errs->len; i++) {
		free(errs->items[i].path);
		free(errs->items[i].message);
	}
	free(errs->items);
	field_errors_init(errs);
}

/*
 * A heap copy of at most max bytes of s, ending in "..." when cut. The cut
 * never splits a UTF-8 sequence, so a message stays valid JSON text.
 */
static char *copy_capped(const char *s, size_t max)
{
	size_t len = strlen(s);
	char *copy;

	if (len <= max)
		return strdup(s);
	len = max - 3;
	while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
		len--;
	copy = malloc(len + 4);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	memcpy(copy + len, "...", 4);
	return copy;
}

int field_errors_add(struct field_errors *errs, const char *path, const char *fmt, ...)
{
	struct field_error entry = { NULL, NULL };
	struct buf message;
	va_list ap;
	int err = 0;

	/* Counted first, so that no failure below can hide the problem. */
	errs->total++;
	if (errs->len >= FIELD_ERRORS_MAX)
		return 0;
	buf_init(&message, 1 << 20);
	if (errs->len == errs->cap) {
		size_t cap = errs->cap ? errs->cap * 2 : 8;
		struct field_error *items;

		err = CADRE_ENOMEM;
		if (cap > FIELD_ERRORS_MAX)
			cap = FIELD_ERRORS_MAX;
		items = realloc(errs->items, cap * sizeof(*items));
		if (!items)
			goto out;
		errs->items = items;
		errs->cap = cap;
	}

	/* Format without a cap first, then cut: buf would refuse, not cut. */
	va_start(ap, fmt);
	err = buf_vaddf(&message, fmt, ap);
	va_end(ap);
	if (err)
		goto out;
	err = CADRE_ENOMEM;
	entry.path = copy_capped(path ? path : "", FIELD_ERROR_PATH_MAX);
	entry.message = copy_capped(buf_str(&message), FIELD_ERROR_MESSAGE_MAX);
	if (!entry.path || !entry.message)
		goto out;
	err = 0;
	/*
	 * The parser and the validator may both see a problem (a missing
	 * name); the user should read it once.
	 */
	for (size_t i = 0; i < errs->len; i++) {
		if (!strcmp(errs->items[i].path, entry.path) &&
		    !strcmp(errs->items[i].message, entry.message)) {
			errs->total--;
			goto out;
		}
	}
	errs->items[errs->len++] = entry;
	entry.path = NULL;
	entry.message = NULL;
out:
	free(entry.path);
	free(entry.message);
	buf_release(&message);
	return err;
}

size_t field_errors_count(const struct field_errors *errs)
{
	return errs->total;
}

const struct field_error *field_errors_at(const struct field_errors *errs, size_t i)
{
	return i < errs->len ? &errs->items[i] : NULL;
}

const struct field_error *field_errors_find(const struct field_errors *errs, const char *path)
{
	for (size_t i = 0; i < errs->len; i++)
		if (!strcmp(errs->items[i].path, path))
			return &errs->items[i];
	return NULL;
}

int field_errors_join(const struct field_errors *errs, struct buf *out)
{
	int err = 0;

	for (size_t i = 0; i < errs->len && !err; i++) {
		const struct field_error *e = &errs->items[i];

		if (i)
			err = buf_adds(out, "; ");
		if (!err && e->path[0])
			err = buf_addf(out, "%s: ", e->path);
		if (!err)
			err = buf_adds(out, e->message);
	}
	if (!err && errs->total > errs->len)
		err = buf_addf(out, "%sand %zu more", errs->len ? "; " : "",
			       errs->total - errs->len);
	return err;
}
