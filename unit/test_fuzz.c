/*
 * Every input under fuzz/corpus/<target>/ (the seeds) and
 * fuzz/regressions/<target>/ (what a fuzzer once broke) through the
 * target's entry point, in this build: so the plain build checks the same
 * properties on them as the fuzzers do (docs/fuzzing.md), and a crash that
 * was fixed stays fixed. A broken property aborts, which fails the test.
 */
#include <criterion/criterion.h>

#include "base/buf.h"
#include "fuzz/fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define FUZZ_DIR CADRE_SOURCE_DIR "/fuzz"

static size_t replay_file(fuzz_fn fn, const char *path)
{
	struct buf b;
	char chunk[8192];
	size_t n;
	FILE *f = fopen(path, "rb");

	cr_assert_not_null(f, "%s", path);
	buf_init(&b, (size_t)16 << 20);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		cr_assert_eq(buf_add(&b, chunk, n), 0, "%s", path);
	fclose(f);
	fn((const uint8_t *)(b.data ? b.data : ""), b.len);
	buf_release(&b);
	return 1;
}

/* Every regular file of dir; a missing dir is none. */
static size_t replay_dir(fuzz_fn fn, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;
	char path[1024];
	struct stat st;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.' && !stat(path, &st) && S_ISREG(st.st_mode))
			n += replay_file(fn, path);
	}
	closedir(d);
	return n;
}

static const struct fuzz_target *target(const char *name)
{
	for (size_t i = 0; i < fuzz_targets_len; i++)
		if (!strcmp(fuzz_targets[i].name, name))
			return &fuzz_targets[i];
	cr_assert_fail("no fuzz target %s", name);
	return NULL;
}

static void replay(const char *name)
{
	const struct fuzz_target *t = target(name);
	char dir[512];
	size_t seeds;

	snprintf(dir, sizeof(dir), FUZZ_DIR "/corpus/%s", name);
	seeds = replay_dir(t->fn, dir);
	cr_assert_geq(seeds, 3, "fuzz/corpus/%s has %zu seeds", name, seeds);
	snprintf(dir, sizeof(dir), FUZZ_DIR "/regressions/%s", name);
	replay_dir(t->fn, dir);
	/* The empty input and a lone byte: the smallest a fuzzer starts from. */
	t->fn((const uint8_t *)"", 0);
	t->fn((const uint8_t *)"\xff", 1);
}

TestSuite(fuzz);

Test(fuzz, every_target_is_in_the_table_and_has_a_directory)
{
	char dir[512];
	struct stat st;

	cr_assert_eq(fuzz_targets_len, 13);
	for (size_t i = 0; i < fuzz_targets_len; i++) {
		snprintf(dir, sizeof(dir), FUZZ_DIR "/corpus/%s", fuzz_targets[i].name);
		cr_assert_eq(stat(dir, &st), 0, "%s", dir);
		snprintf(dir, sizeof(dir), FUZZ_DIR "/%s.c", fuzz_targets[i].name);
		cr_assert_eq(stat(dir, &st), 0, "%s", dir);
	}
}

Test(fuzz, sbatch_replays_its_seeds_and_regressions, .timeout = 60) { replay("sbatch"); }
Test(fuzz, skypilot_replays_its_seeds_and_regressions, .timeout = 60) { replay("skypilot"); }
Test(fuzz, hostlist_replays_its_seeds_and_regressions, .timeout = 60) { replay("hostlist"); }
Test(fuzz, slurm_values_replays_its_seeds_and_regressions, .timeout = 60)
{
	replay("slurm_values");
}
Test(fuzz, slurm_grammar_replays_its_seeds_and_regressions, .timeout = 60)
{
	replay("slurm_grammar");
}
Test(fuzz, kubeconfig_replays_its_seeds_and_regressions, .timeout = 60) { replay("kubeconfig"); }
Test(fuzz, watch_replays_its_seeds_and_regressions, .timeout = 60) { replay("watch"); }
Test(fuzz, objects_replays_its_seeds_and_regressions, .timeout = 60) { replay("objects"); }
Test(fuzz, podexec_replays_its_seeds_and_regressions, .timeout = 60) { replay("podexec"); }
Test(fuzz, dash_http_replays_its_seeds_and_regressions, .timeout = 60) { replay("dash_http"); }
Test(fuzz, dash_ws_replays_its_seeds_and_regressions, .timeout = 60) { replay("dash_ws"); }
Test(fuzz, code_replays_its_seeds_and_regressions, .timeout = 60) { replay("code"); }
Test(fuzz, dra_class_replays_its_seeds_and_regressions, .timeout = 60) { replay("dra_class"); }
