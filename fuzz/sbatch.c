/*
 * sbatch.c - a batch script through convert_slurm, as cadre sbatch and
 * cadre convert read it. An input whose first line is "ARGS word word..."
 * gives those words as sbatch's command line (after the script's #SBATCH
 * lines, so they win); the rest is the script.
 *
 * Properties: any bytes give a TrainingJob or one error with a line (no
 * hang: libFuzzer's -timeout); a TrainingJob passes fuzz_check_converted.
 */
#include "fuzz/fuzz.h"

#include "base/err.h"
#include "convert/convert.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 32

int fuzz_sbatch(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size), *script = text, *words[MAX_ARGS];
	size_t n_words = 0, len = size;
	struct convert_result r;
	int err;

	if (!strncmp(text, "ARGS ", 5) && memchr(text, '\n', size)) {
		char *nl = memchr(text, '\n', size), *p = text + 5;

		*nl = '\0';
		while (*p && n_words < MAX_ARGS) {
			size_t n = strcspn(p, " ");

			if (n)
				words[n_words++] = p;
			p += n;
			if (*p)
				*p++ = '\0';
		}
		script = nl + 1;
		len = size - (size_t)(script - text);
	}
	convert_result_init(&r);
	err = convert_slurm(&(struct convert_input){ .text = script, .len = len,
						     .default_name = "fuzz",
						     .topology_level = "network.topology.nvidia.com/leaf",
						     .args = (const char *const *)words,
						     .n_args = n_words }, &r);
	if (!err)
		fuzz_check_converted(&r);
	else
		FUZZ_CHECK(err != CADRE_EPARSE || r.error.message, "a parse error without a message");
	FUZZ_CHECK(err == 0 || err == CADRE_EPARSE || err == CADRE_ETOOBIG,
		   "convert_slurm returned %d", err);
	FUZZ_CHECK(!r.error.message || !strchr(r.error.message, '\n'),
		   "an error of more than one line: %s", r.error.message);
	convert_result_release(&r);
	free(text);
	return 0;
}
