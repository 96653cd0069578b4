/*
 * hostlist.c - Slurm hostlists, both ways (api/hostlist.h). The first byte
 * picks the direction, the rest is the text:
 *   even: an expression ("gpu[01-04,07]"); when it expands, the names
 *         compress, and the compressed form expands to the same names (so
 *         compressing is stable: compress(expand(c)) is c);
 *   odd:  names, one per line; when they compress, the text expands back
 *         to exactly those names, in order.
 */
#include "fuzz/fuzz.h"

#include "api/hostlist.h"
#include "base/buf.h"
#include "base/err.h"

#include <stdlib.h>
#include <string.h>

#define MAX_HOSTS 4096

static bool same_names(const struct hostlist *a, const char *const *b, size_t n)
{
	if (a->len != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(a->names[i], b[i]))
			return false;
	return true;
}

/* names compress, and the text expands back to them; the text is left in out. */
static void round_trip(const char *const *names, size_t n, struct buf *out, bool must)
{
	struct hostlist back;
	int err = hostlist_compress(names, n, out);

	if (!must && err)
		return;
	FUZZ_CHECK(!err, "names that expanded do not compress (%d): %s", err, names[0]);
	hostlist_init(&back);
	err = hostlist_expand(buf_str(out), MAX_HOSTS, &back);
	FUZZ_CHECK(!err, "\"%s\" (compressed) does not expand (%d)", buf_str(out), err);
	FUZZ_CHECK(same_names(&back, names, n), "\"%s\" expands to %zu other names (%zu given)",
		   buf_str(out), back.len, n);
	hostlist_release(&back);
}

static void from_expression(const char *expr)
{
	struct hostlist hl;
	struct buf text;

	hostlist_init(&hl);
	buf_init(&text, 1 << 20);
	if (!hostlist_expand(expr, MAX_HOSTS, &hl) && hl.len)
		round_trip((const char *const *)hl.names, hl.len, &text, true);
	hostlist_release(&hl);
	buf_release(&text);
}

static void from_names(char *text)
{
	char *names[MAX_HOSTS];
	size_t n = 0;
	struct buf out;

	for (char *p = text; p && n < MAX_HOSTS; ) {
		char *nl = strchr(p, '\n');

		if (nl)
			*nl = '\0';
		names[n++] = p;
		p = nl ? nl + 1 : NULL;
	}
	buf_init(&out, 1 << 20);
	round_trip((const char *const *)names, n, &out, false);
	buf_release(&out);
}

int fuzz_hostlist(const uint8_t *data, size_t size)
{
	char *text;

	if (!size)
		return 0;
	text = fuzz_strndup(data + 1, size - 1);
	if (data[0] & 1)
		from_names(text);
	else
		from_expression(text);
	free(text);
	return 0;
}
