#include "controller/serve/metrics.h"
#include "base/err.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_LABELS 4

struct series {
	struct series *next;
	char *values[MAX_LABELS];
	double value;          /* counter/gauge value; histogram sum */
	unsigned long count;   /* histogram observations */
	unsigned long *buckets; /* histogram per-bucket counts (not cumulative) */
};

struct metric {
	struct metric *next;
	struct registry *reg;
	enum metric_type type;
	char *name;
	char *help;
	char *labels[MAX_LABELS];
	size_t nlabels;
	double *bounds;
	size_t nbounds;
	struct series *series;
};

struct collector {
	struct collector *next;
	metrics_collector fn;
	void *ctx;
};

struct registry {
	pthread_mutex_t lock;
	struct metric *head, **tail;
	struct collector *collectors, **ctail;
};

struct registry *registry_new(void)
{
	struct registry *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return NULL;
	pthread_mutex_init(&reg->lock, NULL);
	reg->tail = &reg->head;
	reg->ctail = &reg->collectors;
	return reg;
}

static void series_free(struct series *s, size_t nlabels)
{
	for (size_t i = 0; i < nlabels; i++)
		free(s->values[i]);
	free(s->buckets);
	free(s);
}

void registry_free(struct registry *reg)
{
	struct metric *m, *mnext;
	struct collector *c, *cnext;

	if (!reg)
		return;
	for (m = reg->head; m; m = mnext) {
		struct series *s, *snext;

		mnext = m->next;
		for (s = m->series; s; s = snext) {
			snext = s->next;
			series_free(s, m->nlabels);
		}
		for (size_t i = 0; i < m->nlabels; i++)
			free(m->labels[i]);
		free(m->name);
		free(m->help);
		free(m->bounds);
		free(m);
	}
	for (c = reg->collectors; c; c = cnext) {
		cnext = c->next;
		free(c);
	}
	pthread_mutex_destroy(&reg->lock);
	free(reg);
}

struct metric *registry_add(struct registry *reg, enum metric_type type,
			    const char *name, const char *help,
			    const char *const *labels,
			    const double *buckets, size_t nbuckets)
{
	struct metric *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->reg = reg;
	m->type = type;
	m->name = strdup(name);
	m->help = strdup(help);
	if (!m->name || !m->help)
		goto fail;
	for (; labels && labels[m->nlabels]; m->nlabels++) {
		if (m->nlabels == MAX_LABELS)
			goto fail;
		m->labels[m->nlabels] = strdup(labels[m->nlabels]);
		if (!m->labels[m->nlabels])
			goto fail;
	}
	if (type == METRIC_HISTOGRAM && nbuckets) {
		m->bounds = malloc(nbuckets * sizeof(*m->bounds));
		if (!m->bounds)
			goto fail;
		memcpy(m->bounds, buckets, nbuckets * sizeof(*m->bounds));
		m->nbounds = nbuckets;
	}
	pthread_mutex_lock(&reg->lock);
	*reg->tail = m;
	reg->tail = &m->next;
	pthread_mutex_unlock(&reg->lock);
	return m;
fail:
	for (size_t i = 0; i < m->nlabels; i++)
		free(m->labels[i]);
	free(m->name);
	free(m->help);
	free(m);
	return NULL;
}

/* Find or create the series for values; called with the lock held. */
static struct series *series_get(struct metric *m, const char *const *values)
{
	struct series *s, **link = &m->series;

	for (s = m->series; s; s = s->next) {
		size_t i;

		for (i = 0; i < m->nlabels; i++)
			if (strcmp(s->values[i], values[i] ? values[i] : ""))
				break;
		if (i == m->nlabels)
			return s;
		link = &s->next;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	for (size_t i = 0; i < m->nlabels; i++) {
		s->values[i] = strdup(values[i] ? values[i] : "");
		if (!s->values[i])
			goto fail;
	}
	if (m->type == METRIC_HISTOGRAM) {
		s->buckets = calloc(m->nbounds + 1, sizeof(*s->buckets));
		if (!s->buckets)
			goto fail;
	}
	*link = s;
	return s;
fail:
	series_free(s, m->nlabels);
	return NULL;
}

void metric_add(struct metric *m, const char *const *values, double delta)
{
	struct series *s;

	if (!m)
		return;
	pthread_mutex_lock(&m->reg->lock);
	s = series_get(m, values);
	if (s)
		s->value += delta;
	pthread_mutex_unlock(&m->reg->lock);
}

void metric_set(struct metric *m, const char *const *values, double value)
{
	struct series *s;

	if (!m)
		return;
	pthread_mutex_lock(&m->reg->lock);
	s = series_get(m, values);
	if (s)
		s->value = value;
	pthread_mutex_unlock(&m->reg->lock);
}

void metric_observe(struct metric *m, const char *const *values, double value)
{
	struct series *s;
	size_t i;

	if (!m || m->type != METRIC_HISTOGRAM)
		return;
	pthread_mutex_lock(&m->reg->lock);
	s = series_get(m, values);
	if (s) {
		for (i = 0; i < m->nbounds && value > m->bounds[i]; i++)
			;
		s->buckets[i]++;
		s->count++;
		s->value += value;
	}
	pthread_mutex_unlock(&m->reg->lock);
}

void metric_zero(struct metric *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->reg->lock);
	for (struct series *s = m->series; s; s = s->next)
		s->value = 0;
	pthread_mutex_unlock(&m->reg->lock);
}

double metric_value(struct metric *m, const char *const *values)
{
	struct series *s;
	double v = 0;

	if (!m)
		return 0;
	pthread_mutex_lock(&m->reg->lock);
	s = series_get(m, values);
	if (s)
		v = m->type == METRIC_HISTOGRAM ? (double)s->count : s->value;
	pthread_mutex_unlock(&m->reg->lock);
	return v;
}

int registry_add_collector(struct registry *reg, metrics_collector fn, void *ctx)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return CADRE_ENOMEM;
	c->fn = fn;
	c->ctx = ctx;
	pthread_mutex_lock(&reg->lock);
	*reg->ctail = c;
	reg->ctail = &c->next;
	pthread_mutex_unlock(&reg->lock);
	return 0;
}

/* The shortest of %.15g..%.17g that reads back as the same double. */
static void add_shortest(struct buf *out, double value)
{
	char text[40];

	for (int digits = 15; digits <= 17; digits++) {
		snprintf(text, sizeof(text), "%.*g", digits, value);
		if (strtod(text, NULL) == value)
			break;
	}
	buf_adds(out, text);
}

void metrics_format_value(struct buf *out, double value)
{
	if (isnan(value))
		buf_adds(out, "NaN");
	else if (isinf(value))
		buf_adds(out, value > 0 ? "+Inf" : "-Inf");
	else if (value == floor(value) && fabs(value) < 1e15)
		buf_addf(out, "%.0f", value);
	else
		add_shortest(out, value);
}

void metrics_escape_label(struct buf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			buf_adds(out, "\\\\");
		else if (*s == '"')
			buf_adds(out, "\\\"");
		else if (*s == '\n')
			buf_adds(out, "\\n");
		else
			buf_addc(out, *s);
	}
}

static void escape_help(struct buf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			buf_adds(out, "\\\\");
		else if (*s == '\n')
			buf_adds(out, "\\n");
		else
			buf_addc(out, *s);
	}
}

/* {a="x",b="y"[,le="..."]} or nothing when there are no labels at all. */
static void render_labels(struct buf *out, const struct metric *m,
			  const struct series *s, const char *le)
{
	bool any = false;

	for (size_t i = 0; i < m->nlabels; i++) {
		buf_adds(out, any ? "," : "{");
		buf_addf(out, "%s=\"", m->labels[i]);
		metrics_escape_label(out, s->values[i]);
		buf_addc(out, '"');
		any = true;
	}
	if (le) {
		buf_adds(out, any ? "," : "{");
		buf_addf(out, "le=\"%s\"", le);
		any = true;
	}
	if (any)
		buf_addc(out, '}');
}

static void render_metric(struct buf *out, const struct metric *m)
{
	static const char *const type_names[] = { "counter", "gauge", "histogram" };

	buf_addf(out, "# HELP %s ", m->name);
	escape_help(out, m->help);
	buf_addf(out, "\n# TYPE %s %s\n", m->name, type_names[m->type]);
	for (const struct series *s = m->series; s; s = s->next) {
		if (m->type != METRIC_HISTOGRAM) {
			buf_adds(out, m->name);
			render_labels(out, m, s, NULL);
			buf_addc(out, ' ');
			metrics_format_value(out, s->value);
			buf_addc(out, '\n');
			continue;
		}
		unsigned long cumulative = 0;

		for (size_t i = 0; i <= m->nbounds; i++) {
			struct buf le;

			buf_init(&le, 64);
			if (i < m->nbounds)
				metrics_format_value(&le, m->bounds[i]);
			else
				buf_adds(&le, "+Inf");
			cumulative += s->buckets[i];
			buf_addf(out, "%s_bucket", m->name);
			render_labels(out, m, s, buf_str(&le));
			buf_addf(out, " %lu\n", cumulative);
			buf_release(&le);
		}
		buf_addf(out, "%s_sum", m->name);
		render_labels(out, m, s, NULL);
		buf_addc(out, ' ');
		metrics_format_value(out, s->value);
		buf_addf(out, "\n%s_count", m->name);
		render_labels(out, m, s, NULL);
		buf_addf(out, " %lu\n", s->count);
	}
}

int registry_render(struct registry *reg, struct buf *out)
{
	struct collector *c;

	pthread_mutex_lock(&reg->lock);
	for (struct metric *m = reg->head; m; m = m->next)
		render_metric(out, m);
	c = reg->collectors;
	pthread_mutex_unlock(&reg->lock);
	/* Collectors are only ever appended, so walking the list unlocked is safe. */
	for (; c; c = c->next)
		c->fn(c->ctx, out);
	/* Appends above are checked here once: a failure is sticky (buf.h). */
	if (buf_error(out))
		return buf_error(out);
	return out->len >= out->max ? CADRE_ETOOBIG : 0;
}

void metrics_process_collector(void *ctx, struct buf *out)
{
	long page = sysconf(_SC_PAGESIZE), ticks = sysconf(_SC_CLK_TCK);
	unsigned long utime = 0, stime = 0;
	unsigned long long starttime = 0;
	long rss_pages = 0, size_pages = 0;
	char line[1024];
	int fds = 0;
	FILE *f;
	DIR *d;

	(void)ctx;
	f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &size_pages, &rss_pages) != 2)
			rss_pages = 0;
		fclose(f);
	}
	f = fopen("/proc/self/stat", "r");
	if (f) {
		if (fgets(line, sizeof(line), f)) {
			/* Fields after the command name, which may hold spaces. */
			char *p = strrchr(line, ')');

			if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
					"%lu %lu %*d %*d %*d %*d %*d %*d %llu",
					&utime, &stime, &starttime) != 3)
				utime = stime = 0;
		}
		fclose(f);
	}
	d = opendir("/proc/self/fd");
	if (d) {
		struct dirent *e;

		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				fds++;
		closedir(d);
	}
	buf_addf(out, "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
		 "# TYPE process_resident_memory_bytes gauge\n"
		 "process_resident_memory_bytes %ld\n", rss_pages * page);
	buf_addf(out, "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
		 "# TYPE process_virtual_memory_bytes gauge\n"
		 "process_virtual_memory_bytes %ld\n", size_pages * page);
	buf_addf(out, "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
		 "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total ");
	metrics_format_value(out, (double)(utime + stime) / (double)ticks);
	buf_addf(out, "\n# HELP process_open_fds Number of open file descriptors.\n"
		 "# TYPE process_open_fds gauge\nprocess_open_fds %d\n", fds);
	f = fopen("/proc/stat", "r");
	if (f) {
		unsigned long long btime = 0;

		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "btime %llu", &btime) == 1)
				break;
		fclose(f);
		if (btime) {
			buf_addf(out, "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
				 "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds ");
			metrics_format_value(out, (double)btime + (double)starttime / (double)ticks);
			buf_addc(out, '\n');
		}
	}
}
