/*
 * slurm_values.c - sbatch's --time and --mem values (convert/slurm_values.c).
 *
 * Properties: a time is no limit (-1) or a whole number of minutes in
 * seconds, as Slurm counts it; a memory value is none (all of a node) or a
 * Kubernetes quantity that cadre's own quantity parser reads as more than 0.
 */
#include "fuzz/fuzz.h"

#include "api/quantity.h"
#include "base/err.h"
#include "convert/convert.h"

#include <stdlib.h>

int fuzz_slurm_values(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size), *q = NULL;
	int64_t seconds = 0, milli = 0;
	int err;

	err = convert_slurm_time(text, &seconds);
	FUZZ_CHECK(err == 0 || err == CADRE_EPARSE, "convert_slurm_time returned %d", err);
	if (!err)
		FUZZ_CHECK(seconds == -1 || (seconds >= 0 && seconds % 60 == 0),
			   "\"%s\" is %lld seconds", text, (long long)seconds);
	err = convert_slurm_memory(text, &q);
	FUZZ_CHECK(err == 0 || err == CADRE_EPARSE, "convert_slurm_memory returned %d", err);
	if (!err && q) {
		err = quantity_parse(q, &milli);
		FUZZ_CHECK(!err && milli > 0, "\"%s\" became \"%s\", which is no quantity (%d)",
			   text, q, err);
	}
	free(q);
	free(text);
	return 0;
}
