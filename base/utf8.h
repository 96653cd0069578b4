/*
 * utf8.h - telling UTF-8 from other bytes, and reading Latin-1 as UTF-8.
 *
 * The API server and jansson take only well-formed UTF-8 (RFC 3629): no
 * overlong forms, no surrogates (U+D800..U+DFFF), nothing past U+10FFFF.
 * These functions hold text to that same rule, so text they pass is text
 * json_string() takes. Pure and thread-safe.
 */
#ifndef CADRE_UTF8_H
#define CADRE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * How many bytes at the start of s (len bytes) are well-formed UTF-8: len
 * when all of them are, else the offset of the first byte that starts no
 * well-formed sequence (a sequence cut short by the end counts as bad).
 */
size_t utf8_valid_len(const char *s, size_t len);

static inline bool utf8_valid(const char *s, size_t len)
{
	return utf8_valid_len(s, len) == len;
}

/*
 * The bytes of s read as ISO 8859-1 (Latin-1, where byte b is U+00b), as
 * UTF-8 into out, which must hold 2 * len bytes: every byte at or above
 * 0x80 becomes two. Returns the bytes written; no terminator is added.
 */
size_t utf8_from_latin1(const char *s, size_t len, char *out);

#endif
