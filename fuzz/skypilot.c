/*
 * skypilot.c - a SkyPilot task and a SkyPilot volume file: the same bytes
 * through convert_sky_task, convert_sky_volume and convert_any (which
 * first guesses the kind).
 *
 * Properties: as fuzz/sbatch.c; each parser gives its object or one error.
 */
#include "fuzz/fuzz.h"

#include "base/err.h"
#include "convert/convert.h"

#include <stdlib.h>
#include <string.h>

static void one(int (*parse)(const struct convert_input *, struct convert_result *),
		const char *text, size_t len)
{
	struct convert_result r;
	int err;

	convert_result_init(&r);
	err = parse(&(struct convert_input){ .text = text, .len = len, .default_name = "fuzz" }, &r);
	if (!err)
		fuzz_check_converted(&r);
	FUZZ_CHECK(err == 0 || err == CADRE_EPARSE || err == CADRE_ETOOBIG,
		   "a SkyPilot parser returned %d", err);
	FUZZ_CHECK(err != CADRE_EPARSE || (r.error.message && !strchr(r.error.message, '\n')),
		   "a parse error is not one line: %s", r.error.message ? r.error.message : "(none)");
	convert_result_release(&r);
}

int fuzz_skypilot(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size);

	one(convert_sky_task, text, size);
	one(convert_sky_volume, text, size);
	one(convert_any, text, size);
	free(text);
	return 0;
}
