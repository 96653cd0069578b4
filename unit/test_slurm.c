/*
 * api/slurm.h: time limits, job array index sets and dependencies, read and
 * written as Slurm's tools read and write them. The expected strings are
 * Slurm's own, with the source that prints each.
 */
#include <criterion/criterion.h>

#include "api/slurm.h"
#include "base/buf.h"
#include "base/err.h"

#include <string.h>

static int64_t secs(const char *text)
{
	int64_t s = 12345;

	cr_assert_eq(slurm_time_parse(text, &s), 0, "%s", text);
	return s;
}

Test(slurm, time_limits_read_as_time_str2mins_reads_them)
{
	cr_assert_eq(secs("30"), 1800);
	cr_assert_eq(secs("30:15"), 1860);   /* seconds round up to a minute */
	cr_assert_eq(secs("1:00:00"), 3600);
	cr_assert_eq(secs("2-12"), (2 * 24 + 12) * 3600);
	cr_assert_eq(secs("1-00:30"), 86400 + 1800);
	cr_assert_eq(secs("7-00:00:00"), 7 * 86400);
	cr_assert_eq(secs("UNLIMITED"), -1);
	cr_assert_eq(secs("infinite"), -1);
	cr_assert_eq(secs("0"), -1);
	for (const char *const *bad = (const char *const[]){ "", "soon", "1:2:3:4", "-1", "1-",
		"1-a", "1.5", "10000000000", NULL }; *bad; bad++) {
		int64_t s;

		cr_assert_eq(slurm_time_parse(*bad, &s), CADRE_EPARSE, "%s", *bad);
	}
}

Test(slurm, times_print_as_scontrol_and_sinfo_print_them)
{
	char out[32];

	/* src/common/parse_time.c mins2time_str: TimeLimit=01:00:00, 7-00:00:00 */
	slurm_time_hms(3600, out);
	cr_assert_str_eq(out, "01:00:00");
	slurm_time_hms(7 * 86400, out);
	cr_assert_str_eq(out, "7-00:00:00");
	slurm_time_hms(-1, out);
	cr_assert_str_eq(out, "UNLIMITED");
	/* src/sinfo/print.c _print_secs: 1:00:00, 30:00, 7-00:00:00, infinite */
	slurm_time_sinfo(3600, out);
	cr_assert_str_eq(out, "1:00:00");
	slurm_time_sinfo(1800, out);
	cr_assert_str_eq(out, "30:00");
	slurm_time_sinfo(7 * 86400, out);
	cr_assert_str_eq(out, "7-00:00:00");
	slurm_time_sinfo(-1, out);
	cr_assert_str_eq(out, "infinite");
}

static void array_is(const char *text, const char *indices, int32_t max_running, int32_t step)
{
	struct slurm_array a;
	struct buf b;
	char why[256];

	buf_init(&b, 1 << 20);
	cr_assert_eq(slurm_array_parse(text, SLURM_DEFAULT_MAX_ARRAY_SIZE, &a, why, sizeof(why)), 0,
		     "%s: %s", text, why);
	cr_assert_eq(slurm_indices_format(a.index, a.n, &b), 0);
	cr_assert_str_eq(buf_str(&b), indices, "%s", text);
	cr_assert_eq(a.max_running, max_running, "%s", text);
	cr_assert_eq(a.step, step, "%s", text);
	slurm_array_release(&a);
	buf_release(&b);
}

Test(slurm, array_index_sets_read_as_sbatch_reads_them)
{
	array_is("0-9", "0-9", 0, 1);
	array_is("0-99%8", "0-99", 8, 1);
	array_is("1,3,5-7", "1,3,5-7", 0, 1);
	array_is("0-15:4", "0,4,8,12", 0, 4);
	array_is("7,1-3,2", "1-3,7", 0, 1);   /* sorted, repeats once */
	array_is("1000", "1000", 0, 1);
}

Test(slurm, bad_array_sets_are_refused_with_why)
{
	static const char *const bad[] = { "", "a", "1-", "-1", "5-3", "1,,2", "1%", "1%0",
		"0-3:0", "1 2", "1,", "0-9%2%3", "99999999999" };
	struct slurm_array a;
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		cr_assert_eq(slurm_array_parse(bad[i], SLURM_DEFAULT_MAX_ARRAY_SIZE, &a, why,
					       sizeof(why)), CADRE_EPARSE, "\"%s\"", bad[i]);
		cr_assert(why[0], "\"%s\" says why", bad[i]);
		slurm_array_release(&a);
	}
}

Test(slurm, an_index_at_max_array_size_is_refused_naming_the_limit)
{
	struct slurm_array a;
	char why[256];

	/* Slurm: the largest index is one less than MaxArraySize (default 1001). */
	cr_assert_eq(slurm_array_parse("0-1000", 1001, &a, why, sizeof(why)), 0);
	cr_assert_eq(a.n, 1001);
	slurm_array_release(&a);
	cr_assert_eq(slurm_array_parse("0-1001", 1001, &a, why, sizeof(why)), CADRE_EPARSE);
	cr_assert(strstr(why, "1001") && strstr(why, "MaxArraySize"), "%s", why);
	slurm_array_release(&a);
	cr_assert_eq(slurm_array_parse("4,1500%2", 1001, &a, why, sizeof(why)), CADRE_EPARSE);
	slurm_array_release(&a);
}

static void task_str_is(const int32_t *v, size_t n, int32_t max, const char *want)
{
	struct buf b;

	buf_init(&b, 1 << 20);
	cr_assert_eq(slurm_array_task_str(v, n, max, &b), 0);
	cr_assert_str_eq(buf_str(&b), want);
	buf_release(&b);
}

/*
 * squeue prints a pending array as "%u_[%s]" of its task string, which
 * xlate_array_task_str (src/common/slurm_protocol_defs.c) writes: a step when
 * it can, else bit_fmt cut to 64 bytes, then "%%%u" of the throttle.
 */
Test(slurm, pending_array_elements_read_as_squeue_prints_them)
{
	int32_t range[96], step[8] = { 0, 4, 8, 12, 16, 20, 24, 28 }, odd[40];

	for (int i = 0; i < 96; i++)
		range[i] = i + 4;
	task_str_is(range, 96, 8, "4-99%8");
	task_str_is(range, 96, 0, "4-99");
	task_str_is(step, 8, 2, "0-28:4%2");
	task_str_is((const int32_t[]){ 1, 3, 5, 6, 7 }, 5, 0, "1,3,5-7");
	task_str_is((const int32_t[]){ 9 }, 1, 2, "9%2");
	/* 40 odd numbers not evenly... made uneven: bit_fmt, cut to 60 bytes and "...". */
	for (int i = 0; i < 40; i++)
		odd[i] = i * 3 + (i % 2);
	{
		struct buf b;

		buf_init(&b, 1 << 20);
		cr_assert_eq(slurm_array_task_str(odd, 40, 0, &b), 0);
		cr_assert_eq(b.len, 63, "%s", buf_str(&b));
		cr_assert(!strcmp(buf_str(&b) + 60, "..."), "%s", buf_str(&b));
		cr_assert(!strncmp(buf_str(&b), "0,4,6,10,12,", 12), "%s", buf_str(&b));
		buf_release(&b);
	}
}

Test(slurm, ranged_index_sets_read_back)
{
	int32_t *v;
	size_t n;

	cr_assert_eq(slurm_indices_parse("0-3,5,7-8", &v, &n), 0);
	cr_assert_eq(n, 7);
	cr_assert_eq(v[4], 5);
	free(v);
	cr_assert_eq(slurm_indices_parse("", &v, &n), 0);
	cr_assert_eq(n, 0);
	cr_assert_null(v);
	cr_assert_eq(slurm_indices_parse("1%2", &v, &n), CADRE_EPARSE);
}

Test(slurm, indices_mark_clamps_to_the_set_and_marks_nothing_when_bad)
{
	unsigned char set[8];

	memset(set, 0, sizeof(set));
	cr_assert_eq(slurm_indices_mark("1,3-4,6-999999999", set, sizeof(set)), 0);
	cr_assert_arr_eq(set, ((unsigned char[]){0, 1, 0, 1, 1, 0, 1, 1}), sizeof(set));
	memset(set, 0, sizeof(set));
	cr_assert_eq(slurm_indices_mark("0-2,0-7,5", set, sizeof(set)), 0);
	cr_assert_arr_eq(set, ((unsigned char[]){1, 1, 1, 1, 1, 1, 1, 1}), sizeof(set));
	memset(set, 0, sizeof(set));
	cr_assert_eq(slurm_indices_mark("1,3-2", set, sizeof(set)), CADRE_EPARSE);
	cr_assert_eq(slurm_indices_mark("1,", set, sizeof(set)), CADRE_EPARSE);
	cr_assert_eq(slurm_indices_mark("1:2", set, sizeof(set)), CADRE_EPARSE);
	cr_assert_eq(slurm_indices_mark("1%2", set, sizeof(set)), CADRE_EPARSE);
	cr_assert_eq(slurm_indices_mark("9999999999", set, sizeof(set)), CADRE_EPARSE);
	for (size_t i = 0; i < sizeof(set); i++)
		cr_assert_eq(set[i], 0, "a bad set marks nothing");
	cr_assert_eq(slurm_indices_mark("", set, sizeof(set)), 0);
	cr_assert_eq(slurm_indices_mark(NULL, set, sizeof(set)), 0);
}

static void dep_is(const char *text, bool any, size_t items, const char *back)
{
	struct slurm_dep d;
	struct buf b;
	char why[256];

	buf_init(&b, 4096);
	cr_assert_eq(slurm_dep_parse(text, &d, why, sizeof(why)), 0, "%s: %s", text, why);
	cr_assert_eq(d.any, any, "%s", text);
	cr_assert_eq(d.n_items, items, "%s", text);
	cr_assert_eq(slurm_dep_format(&d, &b), 0);
	cr_assert_str_eq(buf_str(&b), back);
	slurm_dep_release(&d);
	buf_release(&b);
}

/* sbatch.1 --dependency: "," all, "?" any; types after, afterany, afterok, afternotok, singleton. */
Test(slurm, dependencies_read_as_sbatch_reads_them)
{
	dep_is("afterok:123", false, 1, "afterok:123");
	dep_is("afterok:20:21,afterany:23", false, 2, "afterok:20:21,afterany:23");
	dep_is("afterok:123?afternotok:prep", true, 2, "afterok:123?afternotok:prep");
	dep_is("singleton", false, 1, "singleton");
	dep_is("after:482913307_4", false, 1, "after:482913307_4");
}

Test(slurm, bad_dependencies_are_refused_with_why)
{
	static const char *const bad[] = { "", "afterok", "afterok:", "afterok:1,afterany:2?after:3",
		"before:1", "afterok:Bad_Name", "singleton:1", "aftercorr:1", "afterok:1+10",
		"afterok:0123", "afterok:1::2", "," };
	struct slurm_dep d;
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		cr_assert_eq(slurm_dep_parse(bad[i], &d, why, sizeof(why)), CADRE_EPARSE,
			     "\"%s\"", bad[i]);
		cr_assert(why[0], "\"%s\" says why", bad[i]);
		slurm_dep_release(&d);
	}
}

Test(slurm, job_ids_are_numbers_or_array_elements)
{
	cr_assert(slurm_job_id_text("123"));
	cr_assert(slurm_job_id_text("482913307_4"));
	cr_assert_not(slurm_job_id_text("0"));
	cr_assert_not(slurm_job_id_text("12_"));
	cr_assert_not(slurm_job_id_text("prep"));
	cr_assert_not(slurm_job_id_text("12345678901"));
}
