/*
 * slurm_grammar.c - sbatch's --array and --dependency values (api/slurm.h),
 * as a script, a command line or a TrainingJob's spec carries them.
 *
 * Properties: an index set that parses is ascending, distinct, below the
 * limit, and reads back from its ranged form as the same set; squeue's
 * form of it is at most 63 bytes before its "%N"; a dependency that parses
 * writes itself back as text that parses to the same text, every item but
 * singleton naming jobs that are ids or names.
 */
#include "fuzz/fuzz.h"

#include "api/name.h"
#include "api/slurm.h"
#include "base/buf.h"
#include "base/err.h"

#include <stdlib.h>
#include <string.h>

static void check_array(const char *text)
{
	struct slurm_array a;
	struct buf ranged, task;
	int32_t *back = NULL;
	size_t n_back = 0;
	int err = slurm_array_parse(text, SLURM_DEFAULT_MAX_ARRAY_SIZE, &a, NULL, 0);

	FUZZ_CHECK(err == 0 || err == CADRE_EPARSE, "slurm_array_parse returned %d", err);
	if (err) {
		slurm_array_release(&a);
		return;
	}
	FUZZ_CHECK(a.n >= 1, "\"%s\" parsed as no index", text);
	for (size_t i = 0; i < a.n; i++)
		FUZZ_CHECK(a.index[i] >= 0 && a.index[i] < SLURM_DEFAULT_MAX_ARRAY_SIZE &&
			   (i == 0 || a.index[i] > a.index[i - 1]),
			   "\"%s\": index %zu is %d", text, i, a.index[i]);
	buf_init(&ranged, 1 << 20);
	buf_init(&task, 1 << 20);
	FUZZ_CHECK(slurm_indices_format(a.index, a.n, &ranged) == 0, "no ranged form");
	FUZZ_CHECK(slurm_indices_parse(buf_str(&ranged), &back, &n_back) == 0 && n_back == a.n &&
		   !memcmp(back, a.index, a.n * sizeof(*back)),
		   "\"%s\" does not read back as the same set", buf_str(&ranged));
	FUZZ_CHECK(slurm_array_task_str(a.index, a.n, 0, &task) == 0 && task.len <= 63,
		   "squeue's form of \"%s\" is %zu bytes", text, task.len);
	free(back);
	buf_release(&ranged);
	buf_release(&task);
	slurm_array_release(&a);
}

static void check_dependency(const char *text)
{
	struct slurm_dep d, again;
	struct buf out, out2;
	int err = slurm_dep_parse(text, &d, NULL, 0);

	FUZZ_CHECK(err == 0 || err == CADRE_EPARSE, "slurm_dep_parse returned %d", err);
	if (err) {
		slurm_dep_release(&d);
		return;
	}
	for (size_t i = 0; i < d.n_items; i++) {
		const struct slurm_dep_item *it = &d.items[i];

		FUZZ_CHECK(it->type == SLURM_DEP_SINGLETON ? it->n_jobs == 0 : it->n_jobs > 0,
			   "\"%s\": item %zu has %zu jobs", text, i, it->n_jobs);
		for (size_t j = 0; j < it->n_jobs; j++)
			FUZZ_CHECK(slurm_job_id_text(it->jobs[j]) ||
				   name_is_dns1035_label(it->jobs[j]),
				   "\"%s\": \"%s\" is no job", text, it->jobs[j]);
	}
	buf_init(&out, 1 << 20);
	buf_init(&out2, 1 << 20);
	FUZZ_CHECK(slurm_dep_format(&d, &out) == 0, "no text");
	FUZZ_CHECK(slurm_dep_parse(buf_str(&out), &again, NULL, 0) == 0 &&
		   slurm_dep_format(&again, &out2) == 0 && !strcmp(buf_str(&out), buf_str(&out2)),
		   "\"%s\" written as \"%s\" does not read back", text, buf_str(&out));
	slurm_dep_release(&again);
	buf_release(&out);
	buf_release(&out2);
	slurm_dep_release(&d);
}

int fuzz_slurm_grammar(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size);

	check_array(text);
	check_dependency(text);
	free(text);
	return 0;
}
