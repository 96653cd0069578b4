#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "base/err.h"
#include "controller/serve/metrics.h"

static char *render(struct registry *reg)
{
	struct buf out;

	buf_init(&out, 1 << 20);
	cr_assert_eq(registry_render(reg, &out), 0);
	return buf_detach(&out, NULL);
}

Test(metrics, counter_with_labels_renders_help_type_and_series)
{
	struct registry *reg = registry_new();
	const char *labels[] = { "kind", "result", NULL };
	struct metric *m = registry_add(reg, METRIC_COUNTER, "cadre_reconcile_total",
					"Reconciles by kind and result.", labels, NULL, 0);
	const char *ok[] = { "TrainingJob", "success" };
	const char *err[] = { "TrainingJob", "error" };
	char *text;

	metric_add(m, ok, 1);
	metric_add(m, ok, 2);
	metric_add(m, err, 1);
	text = render(reg);
	cr_assert_str_eq(text,
		"# HELP cadre_reconcile_total Reconciles by kind and result.\n"
		"# TYPE cadre_reconcile_total counter\n"
		"cadre_reconcile_total{kind=\"TrainingJob\",result=\"success\"} 3\n"
		"cadre_reconcile_total{kind=\"TrainingJob\",result=\"error\"} 1\n");
	cr_assert_eq(metric_value(m, ok), 3);
	free(text);
	registry_free(reg);
}

Test(metrics, histogram_buckets_are_cumulative_with_inf_sum_and_count)
{
	struct registry *reg = registry_new();
	const double bounds[] = { 0.1, 1 };
	struct metric *m = registry_add(reg, METRIC_HISTOGRAM, "cadre_x_seconds", "X.",
					NULL, bounds, 2);
	char *text;

	metric_observe(m, NULL, 0.05);
	metric_observe(m, NULL, 0.5);
	metric_observe(m, NULL, 5);
	text = render(reg);
	cr_assert_str_eq(text,
		"# HELP cadre_x_seconds X.\n"
		"# TYPE cadre_x_seconds histogram\n"
		"cadre_x_seconds_bucket{le=\"0.1\"} 1\n"
		"cadre_x_seconds_bucket{le=\"1\"} 2\n"
		"cadre_x_seconds_bucket{le=\"+Inf\"} 3\n"
		"cadre_x_seconds_sum 5.55\n"
		"cadre_x_seconds_count 3\n");
	free(text);
	registry_free(reg);
}

Test(metrics, label_values_are_escaped)
{
	struct registry *reg = registry_new();
	const char *labels[] = { "reason", NULL };
	struct metric *m = registry_add(reg, METRIC_GAUGE, "g", "G.", labels, NULL, 0);
	const char *v[] = { "a\"b\\c\nd" };
	char *text;

	metric_set(m, v, 1.5);
	text = render(reg);
	cr_assert(strstr(text, "g{reason=\"a\\\"b\\\\c\\nd\"} 1.5\n"), "%s", text);
	free(text);
	registry_free(reg);
}

Test(metrics, gauge_zero_resets_every_series)
{
	struct registry *reg = registry_new();
	const char *labels[] = { "phase", NULL };
	struct metric *m = registry_add(reg, METRIC_GAUGE, "cadre_trainingjobs", "Jobs.",
					labels, NULL, 0);
	const char *running[] = { "Running" };

	metric_set(m, running, 4);
	metric_zero(m);
	cr_assert_eq(metric_value(m, running), 0);
	registry_free(reg);
}

static void fixed_collector(void *ctx, struct buf *out)
{
	buf_addf(out, "# TYPE extra gauge\nextra %d\n", *(int *)ctx);
}

Test(metrics, collectors_append_after_families)
{
	struct registry *reg = registry_new();
	int value = 7;
	char *text;

	registry_add_collector(reg, fixed_collector, &value);
	registry_add_collector(reg, metrics_process_collector, NULL);
	text = render(reg);
	cr_assert(strstr(text, "extra 7\n"));
	cr_assert(strstr(text, "process_resident_memory_bytes "));
	cr_assert(strstr(text, "process_cpu_seconds_total "));
	cr_assert_null(strstr(text, "process_resident_memory_bytes 0\n"));
	free(text);
	registry_free(reg);
}

static void long_collector(void *ctx, struct buf *out)
{
	buf_addf(out, "# TYPE long gauge\nlong{text=\"%0*d\"} 1\n", 200, 0);
}

Test(metrics, a_render_that_does_not_fit_fails_instead_of_leaving_a_hole)
{
	struct registry *reg = registry_new();
	struct buf out;
	int value = 7;

	/* The long collector's text does not fit; the short one after it would. */
	registry_add_collector(reg, long_collector, NULL);
	registry_add_collector(reg, fixed_collector, &value);
	buf_init(&out, 100);
	cr_assert_eq(registry_render(reg, &out), CADRE_ETOOBIG);
	cr_assert_null(strstr(buf_str(&out), "extra 7"));
	buf_release(&out);
	registry_free(reg);
}

static void *bump(void *arg)
{
	const char *v[] = { "k" };

	for (int i = 0; i < 10000; i++)
		metric_add(arg, v, 1);
	return NULL;
}

Test(metrics, concurrent_updates_are_not_lost)
{
	struct registry *reg = registry_new();
	const char *labels[] = { "l", NULL };
	struct metric *m = registry_add(reg, METRIC_COUNTER, "c", "C.", labels, NULL, 0);
	const char *v[] = { "k" };
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, bump, m);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(metric_value(m, v), 40000);
	registry_free(reg);
}
