#include "api/accel.h"

#include "base/buf.h"
#include "base/err.h"

#include <limits.h>
#include <stddef.h>
#include <string.h>

static bool is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

int accel_parse(const char *s, struct accel *out)
{
	size_t type_len = 0;
	long long count = 1;
	const char *p;

	if (!s || !is_alnum(s[0]))
		return CADRE_EPARSE;
	for (p = s + 1; is_alnum(*p) || *p == '.' || *p == '_' || *p == '-'; p++)
		;
	type_len = (size_t)(p - s);
	if (*p == ':') {
		p++;
		if (*p < '1' || *p > '9')
			return CADRE_EPARSE;
		/* Digits by hand: strtol would take signs and white space. */
		count = 0;
		for (; *p >= '0' && *p <= '9'; p++) {
			count = count * 10 + (*p - '0');
			if (count > INT_MAX) {
				/* Still reject what is malformed after the digits. */
				while (*p >= '0' && *p <= '9')
					p++;
				return *p ? CADRE_EPARSE : CADRE_ETOOBIG;
			}
		}
	}
	if (*p)
		return CADRE_EPARSE;
	if (type_len >= sizeof(out->type))
		return CADRE_ETOOBIG;
	memcpy(out->type, s, type_len);
	out->type[type_len] = '\0';
	out->count = (int)count;
	return 0;
}

int accel_format(const struct accel *accel, struct buf *out)
{
	if (accel->count == 1)
		return buf_adds(out, accel->type);
	return buf_addf(out, "%s:%d", accel->type, accel->count);
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

bool accel_matches_label(const char *type, const char *label_value)
{
	size_t type_len, label_len;

	if (!type || !label_value || !*type)
		return false;
	type_len = strlen(type);
	label_len = strlen(label_value);
	for (size_t start = 0; start + type_len <= label_len; start++) {
		size_t i = 0;

		while (i < type_len && lower(label_value[start + i]) == lower(type[i]))
			i++;
		if (i == type_len)
			return true;
	}
	return false;
}
