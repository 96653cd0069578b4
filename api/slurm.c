/*
 * slurm.c - time limits, job array index sets and dependencies, read and
 * written as Slurm's own tools read and write them (slurm.h says where
 * each rule comes from).
 */
#include "api/slurm.h"

#include "api/name.h"
#include "base/buf.h"
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- time limits ---- */

/* Up to n numbers separated by sep, each of 1 to 9 digits; how many were read, -1 if bad. */
static int read_numbers(const char *s, size_t len, char sep, int64_t *out, int n)
{
	int count = 0;
	size_t i = 0;

	while (count < n) {
		size_t start = i;
		int64_t v = 0;

		while (i < len && s[i] >= '0' && s[i] <= '9' && i - start < 9)
			v = v * 10 + (s[i++] - '0');
		if (i == start)
			return -1;
		out[count++] = v;
		if (i == len)
			return count;
		if (s[i] != sep)
			return -1;
		i++;
	}
	return -1;
}

int slurm_time_parse(const char *text, int64_t *seconds)
{
	const char *dash;
	int64_t days = 0, part[3] = { 0 }, total;
	size_t len;
	int n;

	if (!text || !*text)
		return CADRE_EPARSE;
	if (!strcasecmp(text, "UNLIMITED") || !strcasecmp(text, "INFINITE")) {
		*seconds = -1;
		return 0;
	}
	len = strlen(text);
	dash = strchr(text, '-');
	if (dash) {
		if (read_numbers(text, (size_t)(dash - text), '\0', &days, 1) != 1)
			return CADRE_EPARSE;
		/* D-HH, D-HH:MM, D-HH:MM:SS */
		n = read_numbers(dash + 1, len - (size_t)(dash + 1 - text), ':', part, 3);
		if (n < 1)
			return CADRE_EPARSE;
		total = ((days * 24 + part[0]) * 60 + part[1]) * 60 + part[2];
	} else {
		/* MM, MM:SS, HH:MM:SS */
		n = read_numbers(text, len, ':', part, 3);
		if (n < 1)
			return CADRE_EPARSE;
		total = n == 1 ? part[0] * 60 :
			n == 2 ? part[0] * 60 + part[1] :
			(part[0] * 60 + part[1]) * 60 + part[2];
	}
	/* Slurm keeps whole minutes, rounding seconds up; 0 is no limit. */
	*seconds = total == 0 ? -1 : (total + 59) / 60 * 60;
	return 0;
}

/* Days, hours, minutes and seconds of a time that is no limit. */
struct dhms {
	long long d, h, m, s;
};

static struct dhms dhms_of(int64_t seconds)
{
	return (struct dhms){ seconds / 86400, seconds / 3600 % 24, seconds / 60 % 60,
			      seconds % 60 };
}

void slurm_time_hms(int64_t seconds, char out[32])
{
	struct dhms t = dhms_of(seconds);
	long long d = t.d, h = t.h, m = t.m, s = t.s;

	if (seconds < 0) {
		snprintf(out, 32, "UNLIMITED");
		return;
	}
	if (d)
		snprintf(out, 32, "%lld-%02lld:%02lld:%02lld", d, h, m, s);
	else
		snprintf(out, 32, "%02lld:%02lld:%02lld", h, m, s);
}

void slurm_time_sinfo(int64_t seconds, char out[32])
{
	struct dhms t = dhms_of(seconds);
	long long d = t.d, h = t.h, m = t.m, s = t.s;

	if (seconds < 0) {
		snprintf(out, 32, "infinite");
		return;
	}
	if (d)
		snprintf(out, 32, "%lld-%02lld:%02lld:%02lld", d, h, m, s);
	else if (h)
		snprintf(out, 32, "%lld:%02lld:%02lld", h, m, s);
	else
		snprintf(out, 32, "%lld:%02lld", m, s);
}

/* ---- job arrays ---- */

void slurm_array_init(struct slurm_array *a)
{
	memset(a, 0, sizeof(*a));
	a->step = 1;
}

void slurm_array_release(struct slurm_array *a)
{
	free(a->index);
	slurm_array_init(a);
}

static void say(char *why, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!why || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
}

/* Decimal digits at *p (1 to 9 of them), moved past; -1 when there are none. */
static long digits(const char **p)
{
	long v = 0;
	int n = 0;

	while (**p >= '0' && **p <= '9' && n < 10) {
		v = v * 10 + (**p - '0');
		(*p)++;
		n++;
	}
	return n == 0 || n > 9 ? -1 : v;
}

static int cmp_index(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

int slurm_array_parse(const char *text, int32_t limit, struct slurm_array *a, char *why,
		      size_t why_size)
{
	const char *p = text, *colon;
	unsigned char *seen = NULL;
	size_t n = 0;

	slurm_array_init(a);
	if (limit <= 0 || limit > SLURM_ARRAY_INDEX_LIMIT)
		limit = SLURM_ARRAY_INDEX_LIMIT;
	if (!text || !*text) {
		say(why, why_size, "an index set is required (0-99, 1,3,5-7, 0-15:4, 0-99%%8)");
		return CADRE_EPARSE;
	}
	/* One bit per index the cluster allows: repeats cost nothing, order is free. */
	if (!(seen = calloc((size_t)limit / 8 + 1, 1)))
		return CADRE_ENOMEM;
	for (;;) {
		long lo, hi, step = 1;

		if ((lo = digits(&p)) < 0)
			goto bad;
		hi = lo;
		if (*p == '-') {
			p++;
			if ((hi = digits(&p)) < 0 || hi < lo)
				goto bad;
			if (*p == ':') {
				p++;
				if ((step = digits(&p)) < 1)
					goto bad;
			}
		}
		if (hi >= limit) {
			say(why, why_size, "index %ld is past the largest this cluster allows, %ld "
			    "(MaxArraySize %ld)", hi, (long)limit - 1, (long)limit);
			free(seen);
			return CADRE_EPARSE;
		}
		for (long i = lo; i <= hi; i += step)
			if (!(seen[i / 8] & (1u << (i % 8)))) {
				seen[i / 8] |= (unsigned char)(1u << (i % 8));
				n++;
			}
		if (*p != ',')
			break;
		p++;
	}
	if (*p == '%') {
		long max;

		p++;
		if ((max = digits(&p)) < 1 || *p)
			goto bad;
		a->max_running = (int32_t)max;
	}
	if (*p)
		goto bad;
	if (!(a->index = calloc(n, sizeof(*a->index)))) {
		free(seen);
		return CADRE_ENOMEM;
	}
	for (long i = 0; i < limit && a->n < n; i++)
		if (seen[i / 8] & (1u << (i % 8)))
			a->index[a->n++] = (int32_t)i;
	free(seen);
	/* SLURM_ARRAY_TASK_STEP: the number after the first ':' (job_mgr.c), else 1. */
	colon = strchr(text, ':');
	if (colon) {
		const char *q = colon + 1;

		a->step = (int32_t)digits(&q);
	}
	return 0;
bad:
	free(seen);
	say(why, why_size, "\"%.64s\" is not an index set: N, A-B or A-B:STEP, comma-separated, "
	    "then %%MAX (0-99%%8, 1,3,5-7, 0-15:4)", text);
	return CADRE_EPARSE;
}

bool slurm_array_has(const struct slurm_array *a, int32_t index)
{
	return a->n && bsearch(&index, a->index, a->n, sizeof(*a->index), cmp_index) != NULL;
}

int slurm_indices_format(const int32_t *index, size_t n, struct buf *out)
{
	const char *comma = "";
	int err = 0;

	for (size_t i = 0; i < n && !err;) {
		size_t j = i;

		while (j + 1 < n && index[j + 1] == index[j] + 1)
			j++;
		if (j == i)
			err = buf_addf(out, "%s%d", comma, index[i]);
		else
			err = buf_addf(out, "%s%d-%d", comma, index[i], index[j]);
		comma = ",";
		i = j + 1;
	}
	return err;
}

int slurm_array_task_str(const int32_t *index, size_t n, int32_t max_running,
			 struct buf *out)
{
	/* bit_fmt into 64 bytes (SLURM_BITSTR_LEN's default). */
	enum { BITSTR_LEN = 64 };
	char cut[BITSTR_LEN];
	struct buf full;
	int err = 0;

	if (!n)
		return 0;
	if (n > 5 && index[n - 1] - index[0] > 10 && index[1] != index[0] + 1) {
		int32_t step = index[1] - index[0];
		bool is_step = true;

		for (size_t i = 2; i < n && is_step; i++)
			is_step = index[i] - index[i - 1] == step;
		if (is_step) {
			err = buf_addf(out, "%d-%d:%d", index[0], index[n - 1], step);
			goto throttle;
		}
	}
	buf_init(&full, (size_t)64 << 20);
	err = slurm_indices_format(index, n, &full);
	if (!err) {
		size_t len;

		snprintf(cut, sizeof(cut), "%s", buf_str(&full));
		len = strlen(cut);
		/* print.c: longer than buf_size - 3, the last three bytes become "...". */
		if (len > BITSTR_LEN - 3)
			for (int i = 0; i < 3; i++)
				cut[BITSTR_LEN - 2 - i] = '.';
		err = buf_adds(out, cut);
	}
	buf_release(&full);
throttle:
	if (!err && max_running > 0)
		err = buf_addf(out, "%%%d", max_running);
	return err;
}

int slurm_indices_parse(const char *text, int32_t **out, size_t *n_out)
{
	struct slurm_array a;
	int err;

	*out = NULL;
	*n_out = 0;
	if (!text || !*text)
		return 0;
	if (strchr(text, '%') || strchr(text, ':'))
		return CADRE_EPARSE;
	err = slurm_array_parse(text, SLURM_ARRAY_INDEX_LIMIT, &a, NULL, 0);
	if (err) {
		slurm_array_release(&a);
		return err;
	}
	*out = a.index;
	*n_out = a.n;
	return 0;
}

int slurm_indices_mark(const char *text, unsigned char *set, size_t size)
{
	const char *p = text;
	long *edge;
	long depth = 0;

	if (!text || !*text || !size)
		return 0;
	/* Checked whole before anything is marked: a bad set marks nothing. */
	for (;;) {
		long lo = digits(&p), hi = lo;

		if (lo < 0)
			return CADRE_EPARSE;
		if (*p == '-') {
			p++;
			if ((hi = digits(&p)) < 0 || hi < lo)
				return CADRE_EPARSE;
		}
		if (*p != ',')
			break;
		p++;
	}
	if (*p)
		return CADRE_EPARSE;
	/*
	 * Each range adds one at its first index and takes one away past its
	 * last, so a set of any shape costs its length and size once: ranges
	 * that overlap or reach far past the array cost no more than others.
	 */
	if (!(edge = calloc(size + 1, sizeof(*edge))))
		return CADRE_ENOMEM;
	for (p = text;;) {
		long lo = digits(&p), hi = lo;

		if (*p == '-') {
			p++;
			hi = digits(&p);
		}
		if ((size_t)lo < size) {
			edge[lo]++;
			edge[(size_t)hi < size ? (size_t)hi + 1 : size]--;
		}
		if (*p != ',')
			break;
		p++;
	}
	for (size_t i = 0; i < size; i++) {
		depth += edge[i];
		if (depth > 0)
			set[i] = 1;
	}
	free(edge);
	return 0;
}

/* ---- dependencies ---- */

static const char *const dep_names[] = {
	[SLURM_DEP_AFTER] = "after",
	[SLURM_DEP_AFTERANY] = "afterany",
	[SLURM_DEP_AFTEROK] = "afterok",
	[SLURM_DEP_AFTERNOTOK] = "afternotok",
	[SLURM_DEP_SINGLETON] = "singleton",
};

const char *slurm_dep_type_name(enum slurm_dep_type type)
{
	if ((unsigned)type >= sizeof(dep_names) / sizeof(dep_names[0]))
		return "";
	return dep_names[type];
}

int slurm_dep_type_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(dep_names) / sizeof(dep_names[0]); i++)
		if (name && !strcmp(name, dep_names[i]))
			return (int)i;
	return -1;
}

void slurm_dep_init(struct slurm_dep *d)
{
	memset(d, 0, sizeof(*d));
}

void slurm_dep_release(struct slurm_dep *d)
{
	for (size_t i = 0; i < d->n_items; i++) {
		for (size_t j = 0; j < d->items[i].n_jobs; j++)
			free(d->items[i].jobs[j]);
		free(d->items[i].jobs);
	}
	free(d->items);
	slurm_dep_init(d);
}

bool slurm_job_id_text(const char *text)
{
	const char *p = text;
	size_t n = 0;

	if (!p || *p < '1' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9' && n <= 10) {
		p++;
		n++;
	}
	if (n > 10)
		return false;
	if (*p == '_') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		n = 0;
		while (*p >= '0' && *p <= '9' && n <= 9) {
			p++;
			n++;
		}
		if (n > 9)
			return false;
	}
	return *p == '\0';
}

/* One "TYPE:JOB[:JOB...]" or "singleton" of len bytes at s, into d. */
static int dep_item(const char *s, size_t len, struct slurm_dep *d, char *why, size_t size)
{
	char text[1024], *p, *colon;
	struct slurm_dep_item *more, *item;
	int type;

	if (len == 0 || len >= sizeof(text)) {
		if (len)
			say(why, size, "an item longer than %zu bytes", sizeof(text) - 1);
		else
			say(why, size, "an empty item");
		return CADRE_EPARSE;
	}
	memcpy(text, s, len);
	text[len] = '\0';
	colon = strchr(text, ':');
	if (colon)
		*colon = '\0';
	if (!strcmp(text, "aftercorr") || !strcmp(text, "afterburstbuffer")) {
		say(why, size, "%s is not supported: cadre runs only after, afterany, afterok, "
		    "afternotok and singleton", text);
		return CADRE_EPARSE;
	}
	type = slurm_dep_type_parse(text);
	if (type < 0) {
		say(why, size, "\"%.64s\" is not a dependency type (after, afterany, afterok, "
		    "afternotok, singleton)", text);
		return CADRE_EPARSE;
	}
	if (type == SLURM_DEP_SINGLETON ? colon != NULL : !colon || !colon[1]) {
		if (type == SLURM_DEP_SINGLETON)
			say(why, size, "singleton takes no job");
		else
			say(why, size, "%s needs at least one job: %s:JOB[:JOB...]", text, text);
		return CADRE_EPARSE;
	}
	more = realloc(d->items, (d->n_items + 1) * sizeof(*more));
	if (!more)
		return CADRE_ENOMEM;
	d->items = more;
	item = &d->items[d->n_items++];
	memset(item, 0, sizeof(*item));
	item->type = (enum slurm_dep_type)type;
	for (p = colon ? colon + 1 : NULL; p;) {
		char *next = strchr(p, ':'), **jobs;

		if (next)
			*next = '\0';
		if (strchr(p, '+')) {
			say(why, size, "\"%.64s\": a delay (+minutes) is not supported", p);
			return CADRE_EPARSE;
		}
		if (!slurm_job_id_text(p) && !name_is_dns1035_label(p)) {
			say(why, size, "\"%.64s\" is neither a job id (123, 123_4) nor a job name", p);
			return CADRE_EPARSE;
		}
		jobs = realloc(item->jobs, (item->n_jobs + 1) * sizeof(*jobs));
		if (!jobs)
			return CADRE_ENOMEM;
		item->jobs = jobs;
		if (!(item->jobs[item->n_jobs] = strdup(p)))
			return CADRE_ENOMEM;
		item->n_jobs++;
		p = next ? next + 1 : NULL;
	}
	return 0;
}

int slurm_dep_parse(const char *text, struct slurm_dep *d, char *why, size_t why_size)
{
	bool comma, question;
	const char *p;

	slurm_dep_init(d);
	if (!text || !*text) {
		say(why, why_size, "a dependency is required (afterok:JOB, singleton, ...)");
		return CADRE_EPARSE;
	}
	comma = strchr(text, ',') != NULL;
	question = strchr(text, '?') != NULL;
	if (comma && question) {
		say(why, why_size, "',' (all) and '?' (any) cannot be mixed");
		return CADRE_EPARSE;
	}
	d->any = question;
	for (p = text;;) {
		size_t len = strcspn(p, ",?");
		int err = dep_item(p, len, d, why, why_size);

		if (err)
			return err;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

int slurm_dep_format(const struct slurm_dep *d, struct buf *out)
{
	int err = 0;

	for (size_t i = 0; i < d->n_items && !err; i++) {
		const struct slurm_dep_item *it = &d->items[i];

		if (i)
			err = buf_addc(out, d->any ? '?' : ',');
		if (!err)
			err = buf_adds(out, slurm_dep_type_name(it->type));
		for (size_t j = 0; j < it->n_jobs && !err; j++)
			err = buf_addf(out, ":%s", it->jobs[j]);
	}
	return err;
}
