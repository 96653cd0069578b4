#include <criterion/criterion.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"

Test(buf, appends_and_stays_terminated)
{
	struct buf b;

	buf_init(&b, 64);
	cr_assert_str_eq(buf_str(&b), "");
	cr_assert_eq(buf_adds(&b, "gpu"), 0);
	cr_assert_eq(buf_addf(&b, "-%d", 7), 0);
	cr_assert_eq(buf_addc(&b, '!'), 0);
	cr_assert_str_eq(b.data, "gpu-7!");
	cr_assert_eq(b.len, 6);
	buf_release(&b);
}

Test(buf, refuses_to_grow_past_its_cap_and_keeps_contents)
{
	struct buf b;

	buf_init(&b, 8);
	cr_assert_eq(buf_adds(&b, "12345678"), 0);
	cr_assert_eq(buf_addc(&b, '9'), CADRE_ETOOBIG);
	cr_assert_eq(buf_addf(&b, "%s", "x"), CADRE_ETOOBIG);
	cr_assert_str_eq(b.data, "12345678");
	buf_release(&b);
}

Test(buf, a_failed_append_is_sticky_so_no_later_append_leaves_a_hole)
{
	struct buf b;

	buf_init(&b, 8);
	cr_assert_eq(buf_adds(&b, "abc"), 0);
	cr_assert_eq(buf_error(&b), 0);
	cr_assert_eq(buf_adds(&b, "too long"), CADRE_ETOOBIG);
	/* "de" would fit, but after it the text would read as if nothing failed. */
	cr_assert_eq(buf_adds(&b, "de"), CADRE_ETOOBIG);
	cr_assert_eq(buf_addc(&b, 'f'), CADRE_ETOOBIG);
	cr_assert_eq(buf_addf(&b, "%d", 1), CADRE_ETOOBIG);
	cr_assert_str_eq(b.data, "abc");
	cr_assert_eq(buf_error(&b), CADRE_ETOOBIG);
	/* Starting over forgets the failure. */
	buf_reset(&b);
	cr_assert_eq(buf_error(&b), 0);
	cr_assert_eq(buf_adds(&b, "de"), 0);
	cr_assert_str_eq(b.data, "de");
	buf_release(&b);
	cr_assert_eq(buf_error(&b), 0);
}

Test(buf, a_cut_message_ends_in_an_ellipsis_on_a_character_boundary)
{
	struct buf b;

	buf_init(&b, 12);
	cr_assert_eq(buf_addf_cut(&b, "%s", "short"), 0);
	cr_assert_str_eq(b.data, "short");
	buf_reset(&b);
	cr_assert_eq(buf_addf_cut(&b, "node %s has no room", "gpu-7"), 0);
	cr_assert_str_eq(b.data, "node gpu-...");
	cr_assert_eq(b.len, 12);
	cr_assert_eq(buf_error(&b), 0);
	/* "é" is two bytes: the cut never splits it. */
	buf_reset(&b);
	cr_assert_eq(buf_addf_cut(&b, "%s", "abcdefgh\xc3\xa9 and more"), 0);
	cr_assert_str_eq(b.data, "abcdefgh...");
	/* Appended after text already there, the cut is of what fits after it. */
	buf_reset(&b);
	cr_assert_eq(buf_adds(&b, "x: "), 0);
	cr_assert_eq(buf_addf_cut(&b, "%s", "0123456789"), 0);
	cr_assert_str_eq(b.data, "x: 012345...");
	buf_release(&b);
}

Test(buf, consume_moves_the_rest_to_the_front)
{
	struct buf b;

	buf_init(&b, 64);
	buf_adds(&b, "line1\nline2");
	buf_consume(&b, 6);
	cr_assert_str_eq(b.data, "line2");
	buf_consume(&b, 100);
	cr_assert_eq(b.len, 0);
	cr_assert_str_eq(buf_str(&b), "");
	buf_release(&b);
}

Test(buf, detach_hands_over_ownership)
{
	struct buf b;
	size_t len;
	char *s;

	buf_init(&b, 64);
	s = buf_detach(&b, &len);
	cr_assert_str_eq(s, "");
	cr_assert_eq(len, 0);
	free(s);
	buf_adds(&b, "abc");
	s = buf_detach(&b, &len);
	cr_assert_str_eq(s, "abc");
	cr_assert_eq(len, 3);
	cr_assert_null(b.data);
	free(s);
}

Test(err, every_code_has_a_name)
{
	for (int e = 0; e >= CADRE_ETERMINATING; e--)
		cr_assert_str_neq(cadre_strerror(e), "unknown error", "code %d", e);
	cr_assert_str_eq(cadre_strerror(-1000), "unknown error");
}

Test(log, parses_levels_and_formats)
{
	enum log_level level;
	enum log_format format;

	cr_assert_eq(log_parse_level("warning", &level), 0);
	cr_assert_eq(level, LOG_WARN);
	cr_assert_eq(log_parse_level("loud", &level), CADRE_EINVAL);
	cr_assert_eq(log_parse_format("json", &format), 0);
	cr_assert_eq(format, LOG_JSON);
	cr_assert_eq(log_parse_format("xml", &format), CADRE_EINVAL);
}

#include <regex.h>

#include "base/clock.h"

Test(clock, monotonic_never_goes_back)
{
	uint64_t a = clock_mono_ms(), b = clock_mono_ms();

	cr_assert_geq(b, a);
	cr_assert_gt(a, 0);
}

Test(clock, micro_time_is_rfc3339_with_microseconds_in_utc)
{
	char text[64];
	regex_t re;

	clock_micro_time(text);
	cr_assert_eq(regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$",
			     REG_EXTENDED | REG_NOSUB), 0);
	cr_assert_eq(regexec(&re, text, 0, NULL, 0), 0, "%s", text);
	regfree(&re);
}

#include "base/utf8.h"

#include <jansson.h>

Test(utf8, well_formed_text_is_valid_to_its_end)
{
	const char *ok[] = { "", "plain ascii", "r\xc3\xa9sultats", "\xe2\x82\xac", "\xed\x9f\xbf",
			     "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf", "\xef\xbf\xbf" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		cr_assert(utf8_valid(ok[i], strlen(ok[i])), "case %zu", i);
}

Test(utf8, the_valid_length_stops_at_the_first_bad_byte)
{
	static const struct { const char *s; size_t want; } bad[] = {
		{ "r\xe9sultats", 1 },          /* Latin-1 */
		{ "ab\x80", 2 },                /* a lone continuation byte */
		{ "\xc0\xaf", 0 },              /* overlong '/' */
		{ "\xe0\x80\xaf", 0 },          /* overlong, three bytes */
		{ "\xf0\x80\x80\xaf", 0 },      /* overlong, four bytes */
		{ "x\xed\xa0\x80", 1 },         /* a surrogate */
		{ "\xf4\x90\x80\x80", 0 },      /* past U+10FFFF */
		{ "\xf5\x80\x80\x80", 0 },
		{ "ok\xe2\x82", 2 },            /* cut short by the end */
		{ "\xc3\xa9\xc3", 2 },
		{ "\xe2\x28\xa1", 0 },          /* a second byte that continues nothing */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(utf8_valid_len(bad[i].s, strlen(bad[i].s)), bad[i].want, "case %zu", i);
}

/* The same rule as jansson's, which is what the JSON for the API server goes through. */
Test(utf8, agrees_with_jansson_on_every_two_and_three_byte_sequence)
{
	char s[4] = { 0 };
	json_t *j;

	for (int a = 0x80; a <= 0xff; a++)
		for (int b = 0; b <= 0xff; b++)
			for (int c = 0; c <= 0xff; c += 0x0f) {
				s[0] = (char)a;
				s[1] = (char)b;
				s[2] = (char)c;
				j = json_stringn(s, 3);
				cr_assert_eq(utf8_valid(s, 3), j != NULL, "%02x %02x %02x", a, b, c);
				json_decref(j);
			}
}

Test(utf8, latin1_becomes_utf8_byte_for_character)
{
	char out[64];
	size_t n = utf8_from_latin1("r\xe9sultats \xff\xa0", 12, out);

	cr_assert_eq(n, 15);
	cr_assert_eq(memcmp(out, "r\xc3\xa9sultats \xc3\xbf\xc2\xa0", 15), 0);
	cr_assert(utf8_valid(out, n));
}
