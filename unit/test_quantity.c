#include <criterion/criterion.h>

#include <limits.h>
#include <stdint.h>

#include "api/quantity.h"
#include "base/buf.h"
#include "base/err.h"

static const int64_t Ki = 1024, Mi = 1024 * 1024, Gi = 1024LL * 1024 * 1024;

struct parse_case {
	const char *text;
	int64_t milli;
};

static void assert_parses(const char *text, int64_t want)
{
	int64_t milli = -12345;
	int err = quantity_parse(text, &milli);

	cr_assert_eq(err, 0, "\"%s\": error %d", text, err);
	cr_assert_eq(milli, want, "\"%s\": got %lld, want %lld", text, (long long)milli,
		     (long long)want);
}

Test(quantity, parses_plain_milli_binary_decimal_and_exponent_forms)
{
	static const struct parse_case cases[] = {
		{ "1", 1000 },
		{ "0", 0 },
		{ "32", 32000 },
		{ "250m", 250 },
		{ "1.5", 1500 },
		{ "500Gi", 500 * Gi * 1000 },
		{ "256Gi", 256 * Gi * 1000 },
		{ "1Ki", 1024000 },
		{ "1Mi", Mi * 1000 },
		{ "1e3", 1000000 },
		{ "1E3", 1000000 },
		{ "1e+3", 1000000 },
		{ "1e-3", 1 },
		{ "1k", 1000000 },
		{ "1M", 1000000000 },
		{ "2G", 2000000000000LL },
		{ "1T", 1000000000000000LL },
		{ "1P", 1000000000000000000LL },
		{ "+5", 5000 },
		{ "-1", -1000 },
		{ "-250m", -250 },
		{ "1.", 1000 },
		{ ".5", 500 },
		{ "0.5Ki", 512000 },
		{ "1.5Gi", 1536 * Mi * 1000 },
		{ "007", 7000 },
		{ "0.000", 0 },
		{ "-0", 0 },
		{ "100n", 1 },
		{ "1u", 1 },
		{ "1000000n", 1 },
		{ "1000001n", 2 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_parses(cases[i].text, cases[i].milli);
}

Test(quantity, rounds_sub_milli_precision_away_from_zero)
{
	assert_parses("0.1m", 1);
	assert_parses("1.0001", 1001);
	assert_parses("1.0000000000000000000000000001", 1001);
	assert_parses("0.0000000000000000000000000001", 1);
	assert_parses("1e-300", 1);
	assert_parses("-0.1m", -1);
	assert_parses("1.0000", 1000);
	assert_parses("0.3333Ki", 341300);   /* 341.2992 rounds up to 341.3 */
}

Test(quantity, rejects_what_kubernetes_rejects)
{
	static const char *const bad[] = {
		"", " ", " 1", "1 ", "1 Gi", "\t1", "1\n", ".", "-", "+", "+-1", "--1",
		"1e", "1e+", "1E-", "1Zi", "1Z", "1K", "1ki", "1gi", "1KiB", "1G1",
		"1..5", "1.5.5", "e3", "m", "Gi", "0x10", "1,5", "1_000", "１",
		"1e3m", "1mi", "1 m", "NaN", "inf", "1b",
	};
	int64_t milli = 77;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(quantity_parse(bad[i], &milli), CADRE_EPARSE, "\"%s\"", bad[i]);
	cr_assert_eq(quantity_parse(NULL, &milli), CADRE_EPARSE);
	cr_assert_eq(milli, 77, "a failed parse must not write");
}

Test(quantity, refuses_what_int64_milli_cannot_hold_instead_of_wrapping)
{
	int64_t milli = 0;

	/* INT64_MAX milli is 9223372036854775.807 units. */
	assert_parses("9223372036854775807m", INT64_MAX);
	assert_parses("-9223372036854775807m", -INT64_MAX);
	cr_assert_eq(quantity_parse("9223372036854775808m", &milli), CADRE_ETOOBIG);
	cr_assert_eq(quantity_parse("9223372036854776", &milli), CADRE_ETOOBIG);
	cr_assert_eq(quantity_parse("1E", &milli), CADRE_ETOOBIG);     /* 10^21 milli */
	cr_assert_eq(quantity_parse("8Ei", &milli), CADRE_ETOOBIG);
	cr_assert_eq(quantity_parse("7Ei", &milli), CADRE_ETOOBIG);     /* 8.07e21 milli */
	cr_assert_eq(quantity_parse("8191Ti", &milli), 0);
	cr_assert_eq(milli, 8191 * 1024LL * Gi * 1000);
	cr_assert_eq(quantity_parse("8192Pi", &milli), CADRE_ETOOBIG);
	cr_assert_eq(quantity_parse("1e16", &milli), CADRE_ETOOBIG);
	cr_assert_eq(quantity_parse("1e15", &milli), 0);
	cr_assert_eq(quantity_parse("1e400", &milli), CADRE_ETOOBIG);
	cr_assert_eq(quantity_parse("1e99999999999999999999", &milli), CADRE_ETOOBIG);
	cr_assert_eq(quantity_parse("99999999999999999999999999", &milli), CADRE_ETOOBIG);
	cr_assert_eq(quantity_parse("-99999999999999999999999999", &milli), CADRE_ETOOBIG);
	cr_assert_eq(quantity_parse("9223372036854775807.9999m", &milli), CADRE_ETOOBIG,
		     "rounding up past the top must not wrap");
}

Test(quantity, refuses_overlong_text_as_too_big)
{
	char text[QUANTITY_MAX_LEN + 2];
	int64_t milli;

	memset(text, '0', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	cr_assert_eq(quantity_parse(text, &milli), CADRE_ETOOBIG);
	text[QUANTITY_MAX_LEN] = '\0';
	cr_assert_eq(quantity_parse(text, &milli), 0);
	cr_assert_eq(milli, 0);
}

Test(quantity, zero_mantissa_is_zero_whatever_the_suffix)
{
	assert_parses("0Ei", 0);
	assert_parses("0e99999", 0);
	assert_parses("0.0E", 0);
}

static void assert_formats(int64_t milli, const char *want)
{
	struct buf out;

	buf_init(&out, 64);
	cr_assert_eq(quantity_format(milli, &out), 0);
	cr_assert_str_eq(buf_str(&out), want, "%lld", (long long)milli);
	buf_release(&out);
}

Test(quantity, formats_canonically)
{
	assert_formats(32000, "32");
	assert_formats(250, "250m");
	assert_formats(1500, "1500m");
	assert_formats(0, "0");
	assert_formats(256 * Gi * 1000, "256Gi");
	assert_formats(1024000, "1Ki");
	assert_formats(1536 * Mi * 1000, "1536Mi");
	assert_formats(1000000, "1k");
	assert_formats(5000000000LL, "5M");
	assert_formats(1000 * 1000 * 1000 * 1000LL, "1G");
	assert_formats(-250, "-250m");
	assert_formats(-2 * Ki * 1000, "-2Ki");
	assert_formats(1001000, "1001");
	assert_formats(INT64_MAX, "9223372036854775807m");
	assert_formats(INT64_MIN, "-9223372036854775808m");
}

Test(quantity, format_reads_back_to_the_same_value)
{
	static const int64_t values[] = {
		0, 1, 999, 1000, 1001, 32000, 250, 1024000, 1000000, 3 * Gi * 1000,
		INT64_MAX, -INT64_MAX, -1, 123456789000LL, 7 * 1024 * Gi * 1000,
		9223372036854775000LL,
	};
	struct buf out;

	buf_init(&out, 64);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		int64_t back = 42;

		buf_reset(&out);
		cr_assert_eq(quantity_format(values[i], &out), 0);
		cr_assert_eq(quantity_parse(buf_str(&out), &back), 0, "%s", buf_str(&out));
		cr_assert_eq(back, values[i], "%s", buf_str(&out));
	}
	buf_release(&out);
}

Test(quantity, every_prefix_of_a_quantity_parses_or_fails_cleanly)
{
	static const char *const texts[] = {
		"1.5Gi", "-250m", "1e+3", ".5Ki", "9223372036854775807m", "0.0001e-2",
	};

	for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
		char prefix[64];
		size_t len = strlen(texts[t]);

		for (size_t n = 0; n <= len; n++) {
			int64_t milli = -7;
			int err;

			memcpy(prefix, texts[t], n);
			prefix[n] = '\0';
			err = quantity_parse(prefix, &milli);
			cr_assert(err == 0 || err == CADRE_EPARSE || err == CADRE_ETOOBIG,
				  "\"%s\": %d", prefix, err);
			if (err)
				cr_assert_eq(milli, -7, "\"%s\"", prefix);
		}
	}
	/* Spot checks on the prefixes of "1.5Gi". */
	assert_parses("1.5", 1500);
	assert_parses("1.", 1000);
	{
		int64_t milli;

		cr_assert_eq(quantity_parse("1.5G", &milli), 0);
		cr_assert_eq(milli, 1500000000000LL);
	}
}

Test(quantity, add_refuses_overflow)
{
	int64_t sum = 5;

	cr_assert_eq(quantity_add(250, 750, &sum), 0);
	cr_assert_eq(sum, 1000);
	cr_assert_eq(quantity_add(INT64_MAX, 1, &sum), CADRE_ETOOBIG);
	cr_assert_eq(sum, 1000, "a failed add must not write");
	cr_assert_eq(quantity_add(INT64_MIN, -1, &sum), CADRE_ETOOBIG);
	cr_assert_eq(quantity_add(INT64_MAX, INT64_MIN, &sum), 0);
	cr_assert_eq(sum, -1);
}
