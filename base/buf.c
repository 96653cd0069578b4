#include "base/buf.h"
#include "base/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
	b->err = 0;
}

void buf_release(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->err = 0;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->data)
		b->data[0] = '\0';
}

int buf_error(const struct buf *b)
{
	return b->err;
}

/* Remember the first failure; every later append returns it. */
static int buf_fail(struct buf *b, int err)
{
	if (!b->err)
		b->err = err;
	return b->err;
}

/* Make room for extra more bytes plus the terminator. */
static int buf_grow(struct buf *b, size_t extra)
{
	size_t need, cap;
	char *data;

	if (extra > b->max || b->len > b->max - extra)
		return CADRE_ETOOBIG;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	if (cap > b->max + 1)
		cap = b->max + 1;
	data = realloc(b->data, cap);
	if (!data)
		return CADRE_ENOMEM;
	b->data = data;
	b->cap = cap;
	return 0;
}

int buf_add(struct buf *b, const void *data, size_t len)
{
	int err = b->err ? b->err : buf_grow(b, len);

	if (err)
		return buf_fail(b, err);
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int buf_addc(struct buf *b, char c)
{
	return buf_add(b, &c, 1);
}

/* The length fmt formats to (ap is not consumed); 0, or the sticky failure. */
static int formatted_len(struct buf *b, const char *fmt, va_list ap, size_t *len)
{
	va_list copy;
	int n;

	if (b->err)
		return b->err;
	va_copy(copy, ap);
	n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n < 0)
		return buf_fail(b, CADRE_EINVAL);
	*len = (size_t)n;
	return 0;
}

int buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	size_t n;
	int err = formatted_len(b, fmt, ap, &n);

	if (err)
		return err;
	err = buf_grow(b, n);
	if (err)
		return buf_fail(b, err);
	vsnprintf(b->data + b->len, n + 1, fmt, ap);
	b->len += n;
	return 0;
}

int buf_vaddf_cut(struct buf *b, const char *fmt, va_list ap)
{
	static const char ellipsis[] = "...";
	const size_t dots = sizeof(ellipsis) - 1;
	size_t n, room, keep;
	char *at;
	int err = formatted_len(b, fmt, ap, &n);

	if (err)
		return err;
	room = b->max - b->len;
	if (n <= room)
		return buf_vaddf(b, fmt, ap);
	if (room < dots)
		return buf_fail(b, CADRE_ETOOBIG);
	err = buf_grow(b, room);
	if (err)
		return buf_fail(b, err);
	at = b->data + b->len;
	vsnprintf(at, room + 1, fmt, ap);
	/* Back off over UTF-8 continuation bytes (10xxxxxx) to a character's start. */
	keep = room - dots;
	while (keep > 0 && ((unsigned char)at[keep] & 0xC0) == 0x80)
		keep--;
	memcpy(at + keep, ellipsis, dots);
	b->len += keep + dots;
	b->data[b->len] = '\0';
	return 0;
}

int buf_addf_cut(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = buf_vaddf_cut(b, fmt, ap);
	va_end(ap);
	return err;
}

int buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = buf_vaddf(b, fmt, ap);
	va_end(ap);
	return err;
}

void buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *data = b->data;

	if (!data)
		data = calloc(1, 1);
	if (len)
		*len = data ? b->len : 0;
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->err = 0;
	return data;
}

const char *buf_str(const struct buf *b)
{
	return b->data ? b->data : "";
}
