#include <criterion/criterion.h>

#include "api/hostlist.h"
#include "base/buf.h"
#include "base/err.h"

#include <stdio.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Compress a comma-separated list of names and compare with want. */
static void assert_compress(const char *names_csv, const char *want)
{
	const char *names[64];
	char copy[1024];
	size_t n = 0;
	struct buf out;
	int err;

	snprintf(copy, sizeof(copy), "%s", names_csv);
	for (char *p = copy, *comma; p; p = comma ? comma + 1 : NULL) {
		comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		names[n++] = p;
	}
	buf_init(&out, 1 << 20);
	err = hostlist_compress(names, n, &out);
	cr_assert_eq(err, 0, "%s: %d", names_csv, err);
	cr_assert_str_eq(buf_str(&out), want, "%s", names_csv);
	buf_release(&out);
}

/* Expand expr and compare with a comma-separated want. */
static void assert_expand(const char *expr, const char *want)
{
	struct hostlist hl;
	struct buf got;
	int err = hostlist_expand(expr, 1 << 16, &hl);

	cr_assert_eq(err, 0, "\"%s\": %d", expr, err);
	buf_init(&got, 1 << 20);
	for (size_t i = 0; i < hl.len; i++)
		cr_assert_eq(buf_addf(&got, "%s%s", i ? "," : "", hl.names[i]), 0);
	cr_assert_str_eq(buf_str(&got), want, "\"%s\"", expr);
	buf_release(&got);
	hostlist_release(&hl);
}

Test(hostlist, compresses_slurms_own_examples)
{
	assert_compress("node01,node02,node05", "node[01-02,05]");
	assert_compress("tux2,tux1,tux2", "tux[2,1-2]");
	assert_compress("linux0000,linux0001,linux0002", "linux[0000-0002]");
	assert_compress("node5", "node5");
	assert_compress("llama-pretrain-0,llama-pretrain-1", "llama-pretrain-[0-1]");
}

Test(hostlist, keeps_rank_order_without_sorting)
{
	assert_compress("n3,n2,n1", "n[3,2,1]");
	assert_compress("n1,n2,n4,n3", "n[1-2,4,3]");
	assert_compress("a1,b1,a2", "a1,b1,a2");
}

Test(hostlist, padding_must_agree_for_hosts_to_share_a_range)
{
	assert_compress("n1,n01", "n[1,01]");
	assert_compress("n01,n1", "n[01,1]");
	assert_compress("n5,n06", "n[5,06]");
	assert_compress("n9,n10,n11", "n[9-11]");
	assert_compress("n09,n10", "n[09-10]");
	assert_compress("n99,n100", "n[99-100]");
	assert_compress("n010,n11", "n[010,11]");
}

Test(hostlist, only_trailing_digits_compress)
{
	assert_compress("gpu1a,gpu2a", "gpu1a,gpu2a");
	assert_compress("rack1-n1,rack1-n2,rack2-n1", "rack1-n[1-2],rack2-n1");
	assert_compress("login,n1,n2", "login,n[1-2]");
	assert_compress("n1,login,n2", "n1,login,n2");
	assert_compress("1,2,3", "[1-3]");
}

Test(hostlist, numbers_too_long_to_count_stay_whole_names)
{
	assert_compress("n1234567890,n1234567891", "n1234567890,n1234567891");
	assert_compress("n123456789,n123456790", "n[123456789-123456790]");
}

Test(hostlist, refuses_names_it_could_not_read_back)
{
	static const char *const bad[] = { "", "a,b", "a b", "a[1]", "a]", "x\ty", "x\ny" };
	char long_name[HOSTLIST_NAME_MAX + 2];
	const char *names[1];
	struct buf out;

	buf_init(&out, 1 << 20);
	for (size_t i = 0; i < COUNT(bad); i++) {
		names[0] = bad[i];
		cr_assert_eq(hostlist_compress(names, 1, &out), CADRE_EINVAL, "\"%s\"", bad[i]);
	}
	names[0] = NULL;
	cr_assert_eq(hostlist_compress(names, 1, &out), CADRE_EINVAL);
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	names[0] = long_name;
	cr_assert_eq(hostlist_compress(names, 1, &out), CADRE_EINVAL);
	cr_assert_eq(hostlist_compress(names, 0, &out), 0, "no names, no text");
	cr_assert_str_eq(buf_str(&out), "");
	buf_release(&out);
}

Test(hostlist, expands_ranges_lists_and_padding)
{
	assert_expand("node[01-02,05]", "node01,node02,node05");
	assert_expand("tux[2,1-2]", "tux2,tux1,tux2");
	assert_expand("linux[0000-0002]", "linux0000,linux0001,linux0002");
	assert_expand("n[8-10]", "n8,n9,n10");
	assert_expand("n[08-10]", "n08,n09,n10");
	assert_expand("n[001-10]", "n001,n002,n003,n004,n005,n006,n007,n008,n009,n010");
	assert_expand("n[1,01]", "n1,n01");
	assert_expand("node5", "node5");
	assert_expand("[1-3]", "1,2,3");
}

Test(hostlist, expands_lists_of_hosts_with_every_separator)
{
	assert_expand("a1,b[1-2] c3\td4\ne5", "a1,b1,b2,c3,d4,e5");
	assert_expand(",,a1,,", "a1");
	assert_expand("", "");
	assert_expand("n[1-2],n[1-2]", "n1,n2,n1,n2");
}

Test(hostlist, expands_suffixes_and_several_groups)
{
	assert_expand("n[1-3].ib", "n1.ib,n2.ib,n3.ib");
	assert_expand("rack[1-2]-n[3-4]", "rack1-n3,rack1-n4,rack2-n3,rack2-n4");
	assert_expand("a[1-2]b[3-4]c", "a1b3c,a1b4c,a2b3c,a2b4c");
}

Test(hostlist, rejects_malformed_expressions)
{
	static const char *const bad[] = {
		"n[1-2", "n1-2]", "n]", "n[]", "n[1,,2]", "n[,1]", "n[1,]", "n[-1]",
		"n[1-]", "n[a]", "n[1-2-3]", "n[3-1]", "n[[1]]", "n[1]]", "n[1 ,2]",
		"n[1-0x2]", "n[+1]", "n[1234567890]", "a,b[1", "[",
	};
	struct hostlist hl;

	for (size_t i = 0; i < COUNT(bad); i++) {
		cr_assert_eq(hostlist_expand(bad[i], 1 << 16, &hl), CADRE_EPARSE, "\"%s\"", bad[i]);
		hostlist_release(&hl);
	}
	cr_assert_eq(hostlist_expand(NULL, 1, &hl), CADRE_EPARSE);
	hostlist_release(&hl);
}

Test(hostlist, caps_the_expansion_before_allocating)
{
	struct hostlist hl;

	cr_assert_eq(hostlist_expand("n[0-999999999]", 1 << 16, &hl), CADRE_ETOOBIG);
	cr_assert_eq(hl.len, 0, "nothing expanded for a token over the cap");
	hostlist_release(&hl);
	cr_assert_eq(hostlist_expand("a[0-999]b[0-999]c[0-999]", 1 << 16, &hl), CADRE_ETOOBIG);
	hostlist_release(&hl);
	cr_assert_eq(hostlist_expand("n[1-4]", 4, &hl), 0, "exactly the cap");
	cr_assert_eq(hl.len, 4);
	hostlist_release(&hl);
	cr_assert_eq(hostlist_expand("n[1-4],m1", 4, &hl), CADRE_ETOOBIG, "the cap counts every token");
	hostlist_release(&hl);
}

Test(hostlist, rejects_names_longer_than_a_host_name)
{
	char expr[HOSTLIST_NAME_MAX + 16];
	struct hostlist hl;

	memset(expr, 'a', HOSTLIST_NAME_MAX - 1);
	memcpy(expr + HOSTLIST_NAME_MAX - 1, "[1-9]", 6);
	cr_assert_eq(hostlist_expand(expr, 16, &hl), 0, "255 bytes fit");
	cr_assert_eq(strlen(hl.names[0]), HOSTLIST_NAME_MAX);
	hostlist_release(&hl);
	memcpy(expr + HOSTLIST_NAME_MAX - 1, "[1-10]", 7);
	cr_assert_eq(hostlist_expand(expr, 16, &hl), CADRE_ETOOBIG, "a 256-byte n10 is refused");
	hostlist_release(&hl);
}

/* Names of the form a job's pods have, in rank order, and mixed ones. */
Test(hostlist, a_thousand_nodes_round_trip)
{
	static char names[1000][32];
	const char *ptrs[1000];
	struct hostlist hl;
	struct buf out;

	for (int i = 0; i < 1000; i++) {
		/* a gap at 500, a padded block at 700-799, a stray name at 900 */
		if (i == 900)
			snprintf(names[i], sizeof(names[i]), "login");
		else if (i >= 700 && i < 800)
			snprintf(names[i], sizeof(names[i]), "job-%04d", i);
		else
			snprintf(names[i], sizeof(names[i]), "job-%d", i == 500 ? 5000 : i);
		ptrs[i] = names[i];
	}
	buf_init(&out, 1 << 20);
	cr_assert_eq(hostlist_compress(ptrs, 1000, &out), 0);
	cr_assert_str_eq(buf_str(&out),
			 "job-[0-499,5000,501-699,0700-0799,800-899],login,job-[901-999]");
	cr_assert_eq(hostlist_expand(buf_str(&out), 1000, &hl), 0);
	cr_assert_eq(hl.len, 1000);
	for (size_t i = 0; i < 1000; i++)
		cr_assert_str_eq(hl.names[i], names[i], "rank %zu", i);
	hostlist_release(&hl);
	buf_release(&out);
}

/*
 * Every prefix of valid expressions either expands or is refused cleanly,
 * and a prefix that ends inside a bracket is always refused.
 */
Test(hostlist, every_truncation_is_expanded_or_refused)
{
	static const char *const exprs[] = {
		"node[01-02,05],login,rack[1-2]-n[3-4].ib", "tux[2,1-2] a1\tb[10-12]",
	};
	char part[128];

	for (size_t e = 0; e < COUNT(exprs); e++) {
		size_t len = strlen(exprs[e]);

		for (size_t cut = 0; cut <= len; cut++) {
			struct hostlist hl;
			int depth = 0, err;

			memcpy(part, exprs[e], cut);
			part[cut] = '\0';
			for (size_t i = 0; i < cut; i++)
				depth += part[i] == '[' ? 1 : part[i] == ']' ? -1 : 0;
			err = hostlist_expand(part, 1 << 16, &hl);
			if (depth)
				cr_assert_eq(err, CADRE_EPARSE, "\"%s\" ends inside a bracket", part);
			else
				cr_assert(err == 0 || err == CADRE_EPARSE, "\"%s\": %d", part, err);
			hostlist_release(&hl);
		}
	}
}

/* Splitting a list of hosts at a separator expands to the two halves. */
Test(hostlist, a_list_split_at_a_separator_expands_to_its_halves)
{
	const char *expr = "node[01-02,05],login,rack[1-2]-n[3-4].ib,tux[2,1-2]";
	struct hostlist whole;
	size_t len = strlen(expr);

	cr_assert_eq(hostlist_expand(expr, 1 << 16, &whole), 0);
	for (size_t cut = 0; cut <= len; cut++) {
		char head[128], tail[128];
		struct hostlist a, b;
		int depth = 0;

		for (size_t i = 0; i < cut; i++)
			depth += expr[i] == '[' ? 1 : expr[i] == ']' ? -1 : 0;
		if (depth || (cut < len && expr[cut] != ','))
			continue;
		snprintf(head, sizeof(head), "%.*s", (int)cut, expr);
		snprintf(tail, sizeof(tail), "%s", expr + cut);
		cr_assert_eq(hostlist_expand(head, 1 << 16, &a), 0, "\"%s\"", head);
		cr_assert_eq(hostlist_expand(tail, 1 << 16, &b), 0, "\"%s\"", tail);
		cr_assert_eq(a.len + b.len, whole.len, "cut at %zu", cut);
		for (size_t i = 0; i < whole.len; i++)
			cr_assert_str_eq(i < a.len ? a.names[i] : b.names[i - a.len], whole.names[i]);
		hostlist_release(&a);
		hostlist_release(&b);
	}
	hostlist_release(&whole);
}

/* What compress writes, expand reads back, for names of every shape. */
Test(hostlist, compress_then_expand_is_the_identity)
{
	static const char *const lists[][8] = {
		{ "n1", "n01", "n2", "n02", "n001", NULL },
		{ "a9", "a10", "a011", "a12", "b", "b1", NULL },
		{ "x-0", "x-1", "x-1", "x-0", "y", NULL },
		{ "n999999999", "n1000000000", "7", "8", NULL },
	};

	for (size_t l = 0; l < COUNT(lists); l++) {
		size_t n = 0;
		struct hostlist hl;
		struct buf out;

		while (lists[l][n])
			n++;
		buf_init(&out, 1 << 20);
		cr_assert_eq(hostlist_compress(lists[l], n, &out), 0);
		cr_assert_eq(hostlist_expand(buf_str(&out), 64, &hl), 0, "%s", buf_str(&out));
		cr_assert_eq(hl.len, n, "%s", buf_str(&out));
		for (size_t i = 0; i < n; i++)
			cr_assert_str_eq(hl.names[i], lists[l][i], "%s", buf_str(&out));
		hostlist_release(&hl);
		buf_release(&out);
	}
}
