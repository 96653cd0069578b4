/*
 * The pure parts of cadre logs, cadre exec and scancel --signal: the
 * srun --label prefixer, the merge of the ranks' logs by time, and their
 * option readers.
 */
#include <criterion/criterion.h>

#include "cli/logs.h"
#include "cli/ranks.h"

#include "base/err.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *printed;
static size_t printed_len;

static FILE *capture(void)
{
	free(printed);
	printed = NULL;
	printed_len = 0;
	return open_memstream(&printed, &printed_len);
}

static FILE *devnull(void)
{
	return fopen("/dev/null", "w");
}

Test(cli_ranks, prefixer_labels_every_line_whatever_the_chunks)
{
	static const char text[] = "step 1\nstep 2\n\nno newline yet";
	const size_t len = sizeof(text) - 1;

	for (size_t cut = 0; cut <= len; cut++) {
		FILE *f = capture();
		struct cli_prefixer p;

		cli_prefixer_init(&p, 3, f);
		cr_assert_eq(cli_prefixer_write(&p, text, cut), 0);
		cr_assert_eq(cli_prefixer_write(&p, text + cut, len - cut), 0);
		cr_assert_eq(cli_prefixer_flush(&p), 0);
		cli_prefixer_release(&p);
		fclose(f);
		cr_assert_str_eq(printed, "3: step 1\n3: step 2\n3: \n3: no newline yet\n",
				 "split at %zu", cut);
	}
}

Test(cli_ranks, prefixer_cuts_a_line_past_the_cap)
{
	size_t len = CLI_PREFIX_MAX_LINE + 10;
	char *big = malloc(len);
	FILE *f = capture();
	struct cli_prefixer p;

	memset(big, 'x', len);
	cli_prefixer_init(&p, 0, f);
	cr_assert_eq(cli_prefixer_write(&p, big, len), 0);
	cr_assert_eq(cli_prefixer_flush(&p), 0);
	cli_prefixer_release(&p);
	fclose(f);
	cr_assert_eq(printed_len, 2 * 3 + len + 2);
	cr_assert_eq(strncmp(printed + 3 + CLI_PREFIX_MAX_LINE, "\n0: ", 4), 0);
	free(big);
}

Test(cli_ranks, log_time_reads_rfc3339_with_any_fraction)
{
	int64_t a, b, c;
	size_t at;

	cr_assert_eq(cli_log_time("2026-12-01T13:11:33.5Z text", 27, &a, &at), 0);
	cr_assert_eq(at, 23);
	cr_assert_eq(cli_log_time("2026-12-01T13:11:33.123456789Z x", 32, &b, &at), 0);
	cr_assert_eq(at, 31);
	cr_assert_eq(cli_log_time("2026-12-01T13:11:33Z", 20, &c, &at), 0);
	cr_assert_eq(at, 20);
	cr_assert_eq(c, 1796130693LL * 1000000000LL);
	cr_assert_eq(a, c + 500000000);
	cr_assert_eq(b, c + 123456789);
	cr_assert(b < a, "0.123 s comes before 0.5 s, whatever the digits");
	cr_assert_eq(cli_log_time("hello world, no time here", 25, &a, &at), CADRE_EPARSE);
	cr_assert_eq(cli_log_time("2026-12-01T13:11:33+01:00 x", 27, &a, &at), CADRE_EPARSE);
}

/* Merge texts[0..n) (ranks 0..n-1), each pushed split at cut, with queues of cap bytes. */
static void merge_texts(const char *const *texts, size_t n, size_t cut, size_t cap,
			bool timestamps)
{
	int ranks[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	FILE *f = capture();
	struct cli_log_merge *m = cli_log_merge_new(n, ranks, cap, timestamps, f);

	cr_assert_not_null(m);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(texts[i]), c = cut < len ? cut : len;

		cr_assert_eq(cli_log_merge_push(m, i, texts[i], c), 0);
		cr_assert_eq(cli_log_merge_push(m, i, texts[i] + c, len - c), 0);
		cli_log_merge_end(m, i);
	}
	cr_assert_eq(cli_log_merge_run(m), 0);
	cli_log_merge_free(m);
	fclose(f);
}

Test(cli_ranks, merge_orders_lines_by_time_and_keeps_each_rank_in_order)
{
	const char *texts[] = {
		"2026-12-01T10:00:00.1Z a\n2026-12-01T10:00:00.3Z c\ncontinued\n",
		"2026-12-01T10:00:00.2Z b\n2026-12-01T10:00:00.3Z d",
	};

	for (size_t cut = 0; cut <= strlen(texts[0]); cut++) {
		merge_texts(texts, 2, cut, 4096, false);
		cr_assert_str_eq(printed, "0: a\n1: b\n0: c\n0: continued\n1: d\n", "split at %zu",
				 cut);
	}
	merge_texts(texts, 2, 0, 4096, true);
	cr_assert_str_eq(printed, "0: 2026-12-01T10:00:00.1Z a\n1: 2026-12-01T10:00:00.2Z b\n"
			 "0: 2026-12-01T10:00:00.3Z c\n0: continued\n1: 2026-12-01T10:00:00.3Z d\n");
}

Test(cli_ranks, merge_of_empty_logs_prints_nothing)
{
	const char *texts[] = { "", "" };

	merge_texts(texts, 2, 0, 4096, false);
	cr_assert_eq(printed_len, 0);
}

/* A rank's log pushed from a thread of its own, in chunks of 7 bytes. */
struct producer {
	struct cli_log_merge *m;
	size_t i;
	const char *text;
	size_t len;
	pthread_t thread;
};

static void *produce(void *arg)
{
	struct producer *p = arg;

	for (size_t at = 0; at < p->len; at += 7)
		cr_assert_eq(cli_log_merge_push(p->m, p->i, p->text + at,
						p->len - at < 7 ? p->len - at : 7), 0);
	cli_log_merge_end(p->m, p->i);
	return NULL;
}

Test(cli_ranks, merge_holds_a_queue_per_rank_whatever_the_logs_size, .timeout = 60)
{
	enum { LINES = 5000 };
	struct producer prod[2];
	struct buf logs[2];
	char *line_long = malloc(100001);
	int ranks[2] = { 0, 1 };
	FILE *f = capture();
	struct cli_log_merge *m = cli_log_merge_new(2, ranks, 64, false, f);
	size_t zeros = 0, ones = 0, last_ns = 0;

	/* each rank far over its 64-byte queue: a line of 100000 bytes, and 5000 lines */
	memset(line_long, 'x', 100000);
	line_long[100000] = '\0';
	for (int r = 0; r < 2; r++) {
		buf_init(&logs[r], (size_t)64 << 20);
		if (!r)
			cr_assert_eq(buf_addf(&logs[r], "2026-12-01T10:00:00Z %s\n", line_long), 0);
		for (int i = 0; i < LINES; i++)
			cr_assert_eq(buf_addf(&logs[r], "2026-12-01T10:%02d:%02d.%09dZ rank %d line %d\n",
					      i / 3600 % 60, i / 60 % 60, i % 60 * 1000 + r, r, i), 0);
		prod[r] = (struct producer){ .m = m, .i = (size_t)r, .text = logs[r].data,
					     .len = logs[r].len };
		pthread_create(&prod[r].thread, NULL, produce, &prod[r]);
	}
	cr_assert_eq(cli_log_merge_run(m), 0);
	for (int r = 0; r < 2; r++) {
		pthread_join(prod[r].thread, NULL);
		buf_release(&logs[r]);
	}
	cli_log_merge_free(m);
	fclose(f);
	/* the long line whole first, then the ranks' lines interleaved by time */
	cr_assert_eq(strncmp(printed, "0: xxxx", 7), 0);
	cr_assert_eq(printed[3 + 100000], '\n');
	for (char *p = printed + 3 + 100001; *p; p = strchr(p, '\n') + 1) {
		int r, i;

		cr_assert_eq(sscanf(p, "%d: rank %*d line %d", &r, &i), 2, "%.40s", p);
		cr_assert_eq((size_t)i * 2 + (size_t)r, last_ns, "out of order at %.40s", p);
		last_ns++;
		*(r ? &ones : &zeros) += 1;
	}
	cr_assert_eq(zeros, LINES);
	cr_assert_eq(ones, LINES);
	free(line_long);
}

/* line split at single spaces into v (at most 15 words). */
/* Feed text to r split at cut, as a stream's chunks may be. */
static void feed_split(struct cli_log_resume *r, struct cli_prefixer *p, const char *text,
		       size_t cut)
{
	size_t len = strlen(text);

	cut = cut < len ? cut : len;
	cr_assert_eq(cli_log_resume_feed(r, p, text, cut), 0);
	cr_assert_eq(cli_log_resume_feed(r, p, text + cut, len - cut), 0);
}

Test(cli_ranks, a_reopened_log_goes_on_after_its_last_line_without_repeats)
{
	/* The first stream ends in a line; the next, from that second, sends it all again. */
	static const char first[] =
		"2026-12-01T10:00:01.5Z epoch 1\n"
		"2026-12-01T10:00:02.25Z same time a\n"
		"2026-12-01T10:00:02.25Z same time b\n"
		"2026-12-01T10:00:02.75Z cut off mid-li";
	static const char second[] =
		"2026-12-01T10:00:02.25Z same time a\n"
		"2026-12-01T10:00:02.25Z same time b\n"
		"2026-12-01T10:00:02.25Z same time c\n"
		"2026-12-01T10:00:02.75Z cut off mid-line\n"
		"2026-12-01T10:00:03Z epoch 2\n"
		"2026-12-01T10:00:01Z an earlier time, after the resume: printed\n";

	for (size_t cut = 0; cut <= sizeof(second) - 1; cut++) {
		FILE *f = capture();
		struct cli_log_resume r;
		struct cli_prefixer p;
		char since[32];

		cli_prefixer_init(&p, 1, f);
		cli_log_resume_init(&r);
		feed_split(&r, &p, first, cut);
		cr_assert(cli_log_resume_reopen(&r, &p, since, sizeof(since)));
		cr_assert_str_eq(since, "2026-12-01T10:00:02Z");
		feed_split(&r, &p, second, cut);
		cr_assert_eq(cli_log_resume_finish(&r, &p), 0);
		cli_prefixer_release(&p);
		fclose(f);
		cr_assert_str_eq(printed, "1: epoch 1\n1: same time a\n1: same time b\n"
				 "1: same time c\n1: cut off mid-line\n1: epoch 2\n"
				 "1: an earlier time, after the resume: printed\n",
				 "split at %zu", cut);
	}
}

Test(cli_ranks, a_reopened_log_resumes_from_the_greatest_time_printed_not_the_last)
{
	/* a line written later with an earlier time (another writer's clock, stderr) */
	static const char first[] =
		"2026-12-01T10:00:05Z at five\n"
		"2026-12-01T10:00:03Z at three, written after\n";
	/* the next stream, from the greatest time's second, sends the greatest again */
	static const char second[] =
		"2026-12-01T10:00:05Z at five\n"
		"2026-12-01T10:00:06Z at six\n";
	FILE *f = capture();
	struct cli_log_resume r;
	struct cli_prefixer p;
	char since[32];

	cli_prefixer_init(&p, 0, f);
	cli_log_resume_init(&r);
	cr_assert_eq(cli_log_resume_feed(&r, &p, first, strlen(first)), 0);
	cr_assert(cli_log_resume_reopen(&r, &p, since, sizeof(since)));
	cr_assert_str_eq(since, "2026-12-01T10:00:05Z");
	cr_assert_eq(cli_log_resume_feed(&r, &p, second, strlen(second)), 0);
	cr_assert_eq(cli_log_resume_finish(&r, &p), 0);
	cli_prefixer_release(&p);
	fclose(f);
	cr_assert_str_eq(printed, "0: at five\n0: at three, written after\n0: at six\n");
}

Test(cli_ranks, a_followed_log_keeps_its_times_with_timestamps)
{
	static const char text[] = "2026-12-01T10:00:05.5Z hello\nno time\n";
	FILE *f = capture();
	struct cli_log_resume r;
	struct cli_prefixer p;

	cli_prefixer_init(&p, 3, f);
	cli_log_resume_init(&r);
	r.keep_time = true;
	for (size_t i = 0; i < sizeof(text) - 1; i++)
		cr_assert_eq(cli_log_resume_feed(&r, &p, text + i, 1), 0);
	cr_assert_eq(cli_log_resume_finish(&r, &p), 0);
	cli_prefixer_release(&p);
	fclose(f);
	cr_assert_str_eq(printed, "3: 2026-12-01T10:00:05.5Z hello\n3: no time\n");
}

Test(cli_ranks, a_log_reopened_before_any_line_is_read_from_its_start)
{
	FILE *f = capture();
	struct cli_log_resume r;
	struct cli_prefixer p;
	char since[32] = "unchanged";

	cli_prefixer_init(&p, 0, f);
	cli_log_resume_init(&r);
	cr_assert_eq(cli_log_resume_feed(&r, &p, "2026-12-01T10:00:01Z half", 25), 0);
	cr_assert(!cli_log_resume_reopen(&r, &p, since, sizeof(since)));
	cr_assert_eq(cli_log_resume_feed(&r, &p, "2026-12-01T10:00:01Z half a line\n"
					 "no time: as it is\n", 51), 0);
	cr_assert_eq(cli_log_resume_finish(&r, &p), 0);
	cli_prefixer_release(&p);
	fclose(f);
	cr_assert_str_eq(printed, "0: half a line\n0: no time: as it is\n");
}

Test(cli_ranks, a_reopened_log_drops_a_repeated_line_too_long_to_hold)
{
	size_t len = CLI_PREFIX_MAX_LINE + 100, head = 21;
	char *big = malloc(len + 1);
	FILE *f = capture();
	struct cli_log_resume r;
	struct cli_prefixer p;
	char since[32];

	memcpy(big, "2026-12-01T10:00:01Z ", head);
	memset(big + head, 'x', len - head - 1);
	big[len - 1] = '\n';
	big[len] = '\0';
	cli_prefixer_init(&p, 0, f);
	cli_log_resume_init(&r);
	cr_assert_eq(cli_log_resume_feed(&r, &p, big, len), 0);
	cr_assert(cli_log_resume_reopen(&r, &p, since, sizeof(since)));
	cr_assert_eq(cli_log_resume_feed(&r, &p, big, len), 0);
	cr_assert_eq(cli_log_resume_feed(&r, &p, "2026-12-01T10:00:02Z next\n", 26), 0);
	cr_assert_eq(cli_log_resume_finish(&r, &p), 0);
	cli_prefixer_release(&p);
	fclose(f);
	/* the long line once, without its time, then the next */
	cr_assert_eq(printed_len, 3 + (len - head - 1) + 1 + strlen("0: next\n"), "%zu",
		     printed_len);
	cr_assert_eq(strncmp(printed, "0: xxx", 6), 0);
	cr_assert_str_eq(printed + printed_len - 8, "0: next\n");
	free(big);
}

static int split(char *line, char **v)
{
	int n = 0;
	char *p = line;

	while (*p && n < 15) {
		v[n++] = p;
		p += strcspn(p, " ");
		if (*p)
			*p++ = '\0';
	}
	return n;
}

Test(cli_ranks, logs_options_take_the_job_follow_rank_and_attempt)
{
	char line[] = "llama -f --rank 2 --attempt=1 --namespace ml";
	char *v[16];
	int n = split(line, v);
	struct cli_logs_opts o = { 0 };
	FILE *err = devnull();

	cr_assert_eq(cli_logs_parse(v, n, &o, err), 0);
	cr_assert_str_eq(o.job, "llama");
	cr_assert(o.follow);
	cr_assert(cli_rank_set_has(&o.ranks, 2));
	cr_assert_not(cli_rank_set_has(&o.ranks, 1));
	cr_assert_not(cli_rank_set_has(&o.ranks, 3));
	cr_assert_eq(o.attempt, 1);
	cr_assert_str_eq(o.g.namespace, "ml");
	fclose(err);
}

Test(cli_ranks, logs_options_default_to_every_rank_of_the_latest_attempt)
{
	char line[] = "4242";
	char *v[2] = { line };
	struct cli_logs_opts o = { 0 };

	cr_assert_eq(cli_logs_parse(v, 1, &o, stderr), 0);
	cr_assert_eq(o.ranks.n, 0);
	cr_assert(cli_rank_set_has(&o.ranks, 0) && cli_rank_set_has(&o.ranks, 1023));
	cr_assert_eq(o.attempt, -1);
	cr_assert_eq(o.tail, -1);
	cr_assert_eq(o.since_seconds, 0);
	cr_assert_str_empty(o.since_time);
	cr_assert_eq(o.limit_bytes, 0);
	cr_assert(!o.follow);
	cr_assert(!o.timestamps);
}

Test(cli_ranks, logs_options_take_ranges_tail_since_limit_and_timestamps)
{
	char line[] = "llama --rank 0,2,5-7 --tail 100 --since 1h30m --limit-bytes=4096 --timestamps";
	char *v[16];
	int n = split(line, v);
	struct cli_logs_opts o = { 0 };

	cr_assert_eq(cli_logs_parse(v, n, &o, stderr), 0);
	for (int r = 0; r < 10; r++)
		cr_assert_eq(cli_rank_set_has(&o.ranks, r), r == 0 || r == 2 || (r >= 5 && r <= 7),
			     "rank %d", r);
	cr_assert_eq(o.tail, 100);
	cr_assert_eq(o.since_seconds, 5400);
	cr_assert_eq(o.limit_bytes, 4096);
	cr_assert(o.timestamps);
	{
		char l2[] = "llama --since 2026-12-01T11:00:00+01:00 --tail 0";

		n = split(l2, v);
		memset(&o, 0, sizeof(o));
		cr_assert_eq(cli_logs_parse(v, n, &o, stderr), 0);
		cr_assert_str_eq(o.since_time, "2026-12-01T10:00:00Z");
		cr_assert_eq(o.since_seconds, 0);
		cr_assert_eq(o.tail, 0);
	}
}

Test(cli_ranks, logs_refuses_a_bad_rank_no_job_or_two_jobs)
{
	const char *bad[] = { "job --rank x", "job --rank -1", "", "a b", "job --attempt 1.5",
			      "job --bogus", "job --rank 3-1", "job --rank 1,", "job --rank ,1",
			      "job --tail -5", "job --tail x", "job --since 10", "job --since 5d",
			      "job --since yesterday", "job --limit-bytes 0",
			      "job --limit-bytes 1k" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[96], *v[16];
		struct cli_logs_opts o = { 0 };
		FILE *err = capture();
		int n;

		snprintf(line, sizeof(line), "%s", bad[i]);
		n = *line ? split(line, v) : 0;
		cr_assert_eq(cli_logs_parse(v, n, &o, err), CLI_EXIT_USAGE, "%s", bad[i]);
		fclose(err);
		cr_assert(printed_len > 0 && !strchr(printed, '\n')[1], "one line for %s", bad[i]);
	}
}

Test(cli_ranks, exec_options_split_at_the_double_dash)
{
	char line[] = "llama --rank 1 -it -- bash -l -c --rank";
	char *v[16];
	int n = split(line, v);
	struct cli_exec_opts o = { 0 };

	cr_assert_eq(cli_exec_parse(v, n, &o, stderr), 0);
	cr_assert_str_eq(o.job, "llama");
	cr_assert_eq(o.rank, 1);
	cr_assert(o.interactive && o.tty);
	cr_assert_eq(o.argc, 4);
	cr_assert_str_eq(o.argv[0], "bash");
	cr_assert_str_eq(o.argv[3], "--rank", "the command's own flags stay its own");
}

Test(cli_ranks, exec_refuses_no_command_a_word_before_the_dashes_and_t_without_i)
{
	/* "job hostname" is sky exec's form (tested below); a word before "--" is not. */
	const char *bad[] = { "job", "job --", "job extra -- true", "job -t -- sh",
			      "-- true", "job --rank=a -- true" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[96], *v[16];
		struct cli_exec_opts o = { 0 };
		FILE *err = capture();
		int n;

		snprintf(line, sizeof(line), "%s", bad[i]);
		n = split(line, v);
		cr_assert_eq(cli_exec_parse(v, n, &o, err), CLI_EXIT_USAGE, "%s", bad[i]);
		fclose(err);
		cr_assert(printed_len > 0 && !strchr(printed, '\n')[1], "one line for %s", bad[i]);
	}
}

/* sky exec NAME CMD...: without "--" the command is the words after the job. */
Test(cli_ranks, exec_takes_sky_execs_form_without_the_dashes)
{
	char line[96], *v[16];
	struct cli_exec_opts o = { 0 };
	FILE *err = capture();
	int n;

	snprintf(line, sizeof(line), "%s", "dev-node --rank 0 python train.py --lr 3");
	n = split(line, v);
	cr_assert_eq(cli_exec_parse(v, n, &o, err), 0);
	fclose(err);
	cr_assert_str_eq(o.job, "dev-node");
	cr_assert_eq(o.rank, 0);
	cr_assert_eq(o.argc, 4);
	cr_assert_str_eq(o.argv[0], "python");
	cr_assert_str_eq(o.argv[3], "3");
}

Test(cli_ranks, signal_names_as_scancel_takes_them)
{
	char name[16];

	cr_assert(cli_signal_name("USR1", name, sizeof(name)));
	cr_assert_str_eq(name, "USR1");
	cr_assert(cli_signal_name("SIGusr2", name, sizeof(name)));
	cr_assert_str_eq(name, "USR2");
	cr_assert(cli_signal_name("15", name, sizeof(name)));
	cr_assert_str_eq(name, "TERM");
	cr_assert(cli_signal_name("sigkill", name, sizeof(name)));
	cr_assert_str_eq(name, "KILL");
	cr_assert(!cli_signal_name("", name, sizeof(name)));
	cr_assert(!cli_signal_name("SIG", name, sizeof(name)));
	cr_assert(!cli_signal_name("NOTASIGNAL", name, sizeof(name)));
	cr_assert(!cli_signal_name("0", name, sizeof(name)), "0 only tests, it signals nothing");
	cr_assert(!cli_signal_name("-9", name, sizeof(name)));
	cr_assert(!cli_signal_name("USR1;rm", name, sizeof(name)));
}

Test(cli_ranks, counts_are_whole_numbers_only)
{
	int n;

	cr_assert(cli_parse_count("0", &n) && n == 0);
	cr_assert(cli_parse_count("12", &n) && n == 12);
	cr_assert(!cli_parse_count("", &n));
	cr_assert(!cli_parse_count("-1", &n));
	cr_assert(!cli_parse_count("+1", &n));
	cr_assert(!cli_parse_count("1x", &n));
	cr_assert(!cli_parse_count("99999999999", &n));
}

static void free_printed(void) __attribute__((destructor));
static void free_printed(void)
{
	free(printed);
}
