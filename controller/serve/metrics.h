/*
 * metrics.h - a small Prometheus registry: counters, gauges and histograms
 * with labels, rendered in the text exposition format (version 0.0.4).
 *
 * Families are created once at start-up; series (one per label-value tuple)
 * are created on first use. All functions are thread-safe: one mutex per
 * registry, held only for the few instructions an update takes. Label values
 * are copied. Collectors are callbacks run at render time for numbers that
 * live elsewhere (the HTTP client's request counts, process memory).
 */
#ifndef CADRE_METRICS_H
#define CADRE_METRICS_H

#include <stddef.h>

#include "base/buf.h"

enum metric_type { METRIC_COUNTER, METRIC_GAUGE, METRIC_HISTOGRAM };

struct registry;
struct metric;

/* A new empty registry, or NULL when out of memory. */
struct registry *registry_new(void);
void registry_free(struct registry *reg);

/*
 * Register a family. labels is a NULL-terminated list of label names (or
 * NULL for none); buckets (histograms only) is an increasing list of upper
 * bounds of length nbuckets, +Inf is implied. Returns a handle owned by the
 * registry, or NULL when out of memory.
 */
struct metric *registry_add(struct registry *reg, enum metric_type type,
			    const char *name, const char *help,
			    const char *const *labels,
			    const double *buckets, size_t nbuckets);

/*
 * Update the series named by values (one per label name, in order; NULL
 * when the family has no labels). Silently drops the update when memory for
 * a new series cannot be had: metrics must never fail a reconcile.
 */
void metric_add(struct metric *m, const char *const *values, double delta);
void metric_set(struct metric *m, const char *const *values, double value);
void metric_observe(struct metric *m, const char *const *values, double value);

/* Set every series of a gauge family to 0 (before a full recount). */
void metric_zero(struct metric *m);

/* Reads a series' value (counters and gauges) or count (histograms). */
double metric_value(struct metric *m, const char *const *values);

/*
 * A collector appends complete exposition text (HELP, TYPE and samples) to
 * out when the registry renders. Called without the registry lock held.
 */
typedef void (*metrics_collector)(void *ctx, struct buf *out);
int registry_add_collector(struct registry *reg, metrics_collector fn, void *ctx);

/*
 * Append the whole registry in exposition format. 0, or CADRE_ETOOBIG /
 * CADRE_ENOMEM when any part of it could not be appended (collectors
 * included): the text is then incomplete and must not be served.
 */
int registry_render(struct registry *reg, struct buf *out);

/* A collector for process_resident_memory_bytes, process_cpu_seconds_total,
 * process_open_fds and process_start_time_seconds, read from /proc/self. */
void metrics_process_collector(void *ctx, struct buf *out);

/* Append value as Prometheus prints a float: integers without a fraction,
 * +Inf, -Inf and NaN spelled out. */
void metrics_format_value(struct buf *out, double value);

/* Append s escaped for a label value (backslash, quote, newline). */
void metrics_escape_label(struct buf *out, const char *s);

#endif
