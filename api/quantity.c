#include "api/quantity.h"

#include "base/buf.h"
#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/*
 * Largest decimal exponent worth keeping: past it every non-zero mantissa
 * of at most QUANTITY_MAX_LEN digits overflows or rounds to one milli-unit,
 * so a bigger exponent changes nothing but the risk of int overflow.
 */
#define EXPONENT_CLAMP 10000

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Read a suffix: powers of ten into *exp10 and of two into *exp2.
 * Returns false for anything that is not a whole, valid suffix.
 */
static bool parse_suffix(const char *p, int *exp10, int *exp2)
{
	static const struct { const char *text; int exp10, exp2; } suffixes[] = {
		{ "", 0, 0 },
		{ "n", -9, 0 }, { "u", -6, 0 }, { "m", -3, 0 },
		{ "k", 3, 0 }, { "M", 6, 0 }, { "G", 9, 0 },
		{ "T", 12, 0 }, { "P", 15, 0 }, { "E", 18, 0 },
		{ "Ki", 0, 10 }, { "Mi", 0, 20 }, { "Gi", 0, 30 },
		{ "Ti", 0, 40 }, { "Pi", 0, 50 }, { "Ei", 0, 60 },
	};
	int sign = 1, value = 0;

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (!strcmp(p, suffixes[i].text)) {
			*exp10 = suffixes[i].exp10;
			*exp2 = suffixes[i].exp2;
			return true;
		}
	}
	/* "E" alone is exa, matched above; an exponent needs digits. */
	if (*p != 'e' && *p != 'E')
		return false;
	p++;
	if (*p == '+' || *p == '-')
		sign = *p++ == '-' ? -1 : 1;
	if (!is_digit(*p))
		return false;
	for (; is_digit(*p); p++)
		if (value < EXPONENT_CLAMP)
			value = value * 10 + (*p - '0');
	if (*p)
		return false;
	*exp10 = sign * (value < EXPONENT_CLAMP ? value : EXPONENT_CLAMP);
	*exp2 = 0;
	return true;
}

/* The number held in digits[from..n) (most significant first); false past INT64_MAX. */
static bool digits_value(const unsigned char *digits, size_t from, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n - from > 19)
		return false;
	for (size_t i = from; i < n; i++)
		v = v * 10 + digits[i];
	if (v > INT64_MAX)
		return false;
	*out = v;
	return true;
}

int quantity_parse(const char *s, int64_t *milli)
{
	/* The mantissa, most significant digit first, with room to grow by
	 * the 19 digits that a factor of 2^60 adds. */
	unsigned char digits[QUANTITY_MAX_LEN + 24];
	size_t n = 0, len;
	int nfrac = 0, exp10 = 0, exp2 = 0, shift;
	bool negative = false, any_digit = false;
	uint64_t magnitude;
	const char *p = s;

	if (!s || !*s)
		return CADRE_EPARSE;
	len = strlen(s);
	if (len > QUANTITY_MAX_LEN)
		return CADRE_ETOOBIG;
	if (*p == '+' || *p == '-')
		negative = *p++ == '-';
	/* Leading zeros are dropped; zeros after the point still count in nfrac. */
	for (; is_digit(*p); p++) {
		any_digit = true;
		if (n || *p != '0')
			digits[n++] = (unsigned char)(*p - '0');
	}
	if (*p == '.') {
		for (p++; is_digit(*p); p++) {
			any_digit = true;
			nfrac++;
			if (n || *p != '0')
				digits[n++] = (unsigned char)(*p - '0');
		}
	}
	if (!any_digit || !parse_suffix(p, &exp10, &exp2))
		return CADRE_EPARSE;
	if (!n) {
		*milli = 0;
		return 0;
	}

	/* Multiply by 2^exp2 in place, a factor of 2^10 at a time. */
	for (int k = 0; k < exp2 / 10; k++) {
		unsigned carry = 0;

		for (size_t i = n; i-- > 0;) {
			unsigned v = digits[i] * 1024u + carry;

			digits[i] = (unsigned char)(v % 10);
			carry = v / 10;
		}
		while (carry) {
			memmove(digits + 1, digits, n++);
			digits[0] = (unsigned char)(carry % 10);
			carry /= 10;
		}
	}

	/* The value in milli-units is digits * 10^shift. */
	shift = exp10 - nfrac + 3;
	if (shift >= 0) {
		if (n + (size_t)shift > 19 || !digits_value(digits, 0, n, &magnitude))
			return CADRE_ETOOBIG;
		for (int k = 0; k < shift; k++) {
			if (magnitude > INT64_MAX / 10)
				return CADRE_ETOOBIG;
			magnitude *= 10;
		}
	} else if ((size_t)-shift >= n) {
		/* Only a fraction of a milli-unit, and not zero: round up to one. */
		magnitude = 1;
	} else {
		size_t keep = n - (size_t)-shift;
		bool remainder = false;

		if (!digits_value(digits, 0, keep, &magnitude))
			return CADRE_ETOOBIG;
		for (size_t i = keep; i < n; i++)
			remainder |= digits[i] != 0;
		if (remainder) {
			if (magnitude == INT64_MAX)
				return CADRE_ETOOBIG;
			magnitude++;
		}
	}
	*milli = negative ? -(int64_t)magnitude : (int64_t)magnitude;
	return 0;
}

int quantity_format(int64_t milli, struct buf *out)
{
	static const char *const binary[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	static const char *const decimal[] = { "", "k", "M", "G", "T", "P", "E" };
	uint64_t magnitude = milli < 0 ? -(uint64_t)milli : (uint64_t)milli;
	const char *sign = milli < 0 ? "-" : "";
	uint64_t units, power;

	if (magnitude % 1000)
		return buf_addf(out, "%s%llum", sign, (unsigned long long)magnitude);
	units = magnitude / 1000;
	if (!units)
		return buf_adds(out, "0");
	for (int i = 6; i >= 1; i--) {
		power = (uint64_t)1 << (10 * i);
		if (units % power == 0)
			return buf_addf(out, "%s%llu%s", sign,
					(unsigned long long)(units / power), binary[i]);
	}
	power = 1000000000000000000ULL;
	for (int i = 6; i >= 1; i--, power /= 1000) {
		if (units % power == 0)
			return buf_addf(out, "%s%llu%s", sign,
					(unsigned long long)(units / power), decimal[i]);
	}
	return buf_addf(out, "%s%llu", sign, (unsigned long long)units);
}

int quantity_add(int64_t a, int64_t b, int64_t *sum)
{
	int64_t result;

	if (__builtin_add_overflow(a, b, &result))
		return CADRE_ETOOBIG;
	*sum = result;
	return 0;
}
