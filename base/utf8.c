/*
 * utf8.c - the well-formed byte sequences of RFC 3629, table 3-7 of the
 * Unicode standard: the second byte's range depends on the first, which is
 * what rules out overlong forms, surrogates and code points past U+10FFFF.
 */
#include "base/utf8.h"

/* The length of the well-formed sequence at s (n bytes left), or 0. */
static size_t sequence_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t want;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		want = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		want = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		want = 4;
	else
		return 0;  /* a continuation byte, 0xc0, 0xc1 (overlong) or past 0xf4 */
	if (s[0] == 0xe0)
		lo = 0xa0;  /* overlong below U+0800 */
	else if (s[0] == 0xed)
		hi = 0x9f;  /* surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90;  /* overlong below U+10000 */
	else if (s[0] == 0xf4)
		hi = 0x8f;  /* past U+10FFFF */
	if (n < want || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < want; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return want;
}

size_t utf8_valid_len(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t at = 0;

	while (at < len) {
		size_t n = sequence_len(p + at, len - at);

		if (!n)
			break;
		at += n;
	}
	return at;
}

size_t utf8_from_latin1(const char *s, size_t len, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x80) {
			out[o++] = (char)c;
		} else {
			out[o++] = (char)(0xc0 | (c >> 6));
			out[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return o;
}
