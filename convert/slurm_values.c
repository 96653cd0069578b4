/*
 * slurm_values.c - the values of sbatch options that have their own
 * grammar: --time (src/common/parse_time.c, time_str2mins) and --mem
 * (str_to_mbytes).
 */
#include "convert/convert.h"

#include "api/quantity.h"
#include "api/slurm.h"
#include "base/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* --time's grammar is api/slurm.h's: Partitions and scontrol read it too. */
int convert_slurm_time(const char *text, int64_t *seconds)
{
	return slurm_time_parse(text, seconds);
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
