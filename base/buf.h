/*
 * buf.h - a growable byte buffer with a cap.
 *
 * Modelled on curl's dynbuf: the contents are always NUL-terminated, the
 * buffer never grows past the cap given at init (input from the network must
 * not be able to take the process's memory), and a failed append leaves the
 * buffer as it was. Not thread-safe; one owner at a time.
 *
 * A failure is sticky: after one append fails, every later append fails with
 * the same code and changes nothing, until buf_reset() or buf_release(). So
 * text built by many appends is either whole or marked failed, never missing
 * a piece in the middle, and may be checked once, with buf_error(), where it
 * is used:
 *
 *   struct buf b;
 *   buf_init(&b, 1 << 20);
 *   buf_addf(&b, "%d", n);
 *   buf_adds(&b, " items");
 *   if ((err = buf_error(&b))) ...
 *   use(b.data, b.len);
 *   buf_release(&b);
 */
#ifndef CADRE_BUF_H
#define CADRE_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data;     /* NULL until the first append; then NUL-terminated */
	size_t len;     /* bytes used, not counting the terminator */
	size_t cap;     /* bytes allocated */
	size_t max;     /* most bytes len may reach */
	int err;        /* the first failed append's code, 0 while none failed */
};

/* Set up an empty buffer that will hold at most max bytes. */
void buf_init(struct buf *b, size_t max);

/* Free the contents and forget a failure; the buffer is empty and may be used again. */
void buf_release(struct buf *b);

/* Forget the contents and a failure but keep the allocation. */
void buf_reset(struct buf *b);

/* 0 while every append since init, reset or release succeeded; else the first failure. */
int buf_error(const struct buf *b);

/*
 * Append bytes. Returns 0, CADRE_ETOOBIG when the result would exceed max,
 * CADRE_ENOMEM, or the earlier failure (sticky, above). On error the buffer
 * is unchanged.
 */
int buf_add(struct buf *b, const void *data, size_t len);
int buf_adds(struct buf *b, const char *s);
int buf_addc(struct buf *b, char c);
int buf_addf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int buf_vaddf(struct buf *b, const char *fmt, va_list ap);

/*
 * For text a person reads (a status message, an event note): append the
 * formatted text, or, when it does not fit under max, as much of it as fits
 * with "..." after it, cut on a UTF-8 character boundary. Returns 0 (also
 * when it cut), CADRE_ETOOBIG only when not even "..." fits, CADRE_ENOMEM,
 * or the earlier failure.
 */
int buf_addf_cut(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int buf_vaddf_cut(struct buf *b, const char *fmt, va_list ap);

/* Drop the first n bytes (n <= len), moving the rest to the front. */
void buf_consume(struct buf *b, size_t n);

/*
 * Hand the contents to the caller, who frees them with free(); the buffer is
 * left empty and forgets a failure (check buf_error() first). Returns an empty allocated string when nothing was appended,
 * NULL only on allocation failure.
 */
char *buf_detach(struct buf *b, size_t *len);

/* The contents, or "" when empty; borrowed, valid until the next change. */
const char *buf_str(const struct buf *b);

#endif
