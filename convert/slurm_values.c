/*
 * slurm_values.c - the values of sbatch options that have their own
 * grammar: --time (src/common/parse_time.c, time_str2mins) and --mem
 * (str_to_mbytes).
 */
#include "convert/convert.h"

#include "api/quantity.h"
#include "base/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Up to n numbers separated by sep, each of 1 to 9 digits; how many were read. */
static int read_numbers(const char *s, size_t len, char sep, int64_t *out, int n)
{
	int count = 0;
	size_t i = 0;

	while (count < n) {
		size_t start = i;
		int64_t v = 0;

		while (i < len && s[i] >= '0' && s[i] <= '9' && i - start < 9)
			v = v * 10 + (s[i++] - '0');
		if (i == start)
			return -1;
		out[count++] = v;
		if (i == len)
			return count;
		if (s[i] != sep)
			return -1;
		i++;
	}
	return -1;
}

int convert_slurm_time(const char *text, int64_t *seconds)
{
	const char *dash;
	int64_t days = 0, part[3] = { 0 }, total;
	size_t len;
	int n;

	if (!text || !*text)
		return CADRE_EPARSE;
	if (!strcasecmp(text, "UNLIMITED") || !strcasecmp(text, "INFINITE")) {
		*seconds = -1;
		return 0;
	}
	len = strlen(text);
	dash = strchr(text, '-');
	if (dash) {
		if (read_numbers(text, (size_t)(dash - text), '\0', &days, 1) != 1)
			return CADRE_EPARSE;
		/* D-HH, D-HH:MM, D-HH:MM:SS */
		n = read_numbers(dash + 1, len - (size_t)(dash + 1 - text), ':', part, 3);
		if (n < 1)
			return CADRE_EPARSE;
		total = ((days * 24 + part[0]) * 60 + part[1]) * 60 + part[2];
	} else {
		/* MM, MM:SS, HH:MM:SS */
		n = read_numbers(text, len, ':', part, 3);
		if (n < 1)
			return CADRE_EPARSE;
		total = n == 1 ? part[0] * 60 :
			n == 2 ? part[0] * 60 + part[1] :
			(part[0] * 60 + part[1]) * 60 + part[2];
	}
	/* Slurm keeps whole minutes, rounding seconds up; 0 is no limit. */
	*seconds = total == 0 ? -1 : (total + 59) / 60 * 60;
	return 0;
}

int convert_slurm_memory(const char *text, char **quantity)
{
	static const char units[] = "KMGT";
	const char *unit_at = text;
	char out[32];
	int64_t n = 0, milli;
	const char *unit;

	*quantity = NULL;
	if (!text)
		return CADRE_EPARSE;
	while (*unit_at >= '0' && *unit_at <= '9' && unit_at - text < 15)
		n = n * 10 + (*unit_at++ - '0');
	if (unit_at == text)
		return CADRE_EPARSE;
	if (!*unit_at) {
		unit = "M";
	} else {
		char c = (char)(*unit_at >= 'a' ? *unit_at - 'a' + 'A' : *unit_at);

		if (unit_at[1] || !(unit = memchr(units, c, 4)))
			return CADRE_EPARSE;
	}
	if (n == 0)
		return 0;
	snprintf(out, sizeof(out), "%lld%ci", (long long)n, unit[0]);
	/* 15 digits of T are past what a Kubernetes quantity holds (2^63 milli-units). */
	if (quantity_parse(out, &milli))
		return CADRE_EPARSE;
	return (*quantity = strdup(out)) ? 0 : CADRE_ENOMEM;
}
