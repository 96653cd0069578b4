/*
 * jobs.c - the TrainingJobs a daily command shows, and its options.
 */
#include "cli/jobs.h"

#include "api/fielderr.h"
#include "base/err.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct collect {
	struct cli_jobs *jobs;
	size_t cap;
};

static int collect_one(void *ctx, json_t *item)
{
	struct collect *c = ctx;
	struct field_errors errs;
	struct trainingjob *tj;

	if (c->jobs->len == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct trainingjob *p = realloc(c->jobs->items, cap * sizeof(*p));

		if (!p)
			return CADRE_ENOMEM;
		c->jobs->items = p;
		c->cap = cap;
	}
	tj = &c->jobs->items[c->jobs->len];
	field_errors_init(&errs);
	/* a job the schema let through but tj_parse finds odd is still shown */
	if (tj_parse(item, tj, &errs) == CADRE_ENOMEM) {
		tj_release(tj);
		field_errors_release(&errs);
		return CADRE_ENOMEM;
	}
	field_errors_release(&errs);
	c->jobs->len++;
	return 0;
}

int cli_jobs_list(struct cli_kube *k, bool all, struct cli_jobs *jobs, FILE *err)
{
	struct collect c = { .jobs = jobs, .cap = 0 };
	struct kube_status st;
	char what[320];
	int e;

	memset(jobs, 0, sizeof(*jobs));
	kube_status_clear(&st);
	e = kube_client_list_each(k->http, &kube_resource_trainingjobs, all ? NULL : k->ns, NULL,
				  collect_one, &c, NULL, &st);
	if (!e)
		return 0;
	if (e == CADRE_ENOMEM) {
		fprintf(err, "%s: out of memory\n", k->cmd);
		return CLI_EXIT_FAILED;
	}
	if (all)
		snprintf(what, sizeof(what), "list trainingjobs in every namespace");
	else
		snprintf(what, sizeof(what), "list trainingjobs in namespace \"%s\"", k->ns);
	if (!st.code)
		st.code = e;
	return cli_kube_error(k, what, &st, err);
}

void cli_jobs_release(struct cli_jobs *jobs)
{
	for (size_t i = 0; i < jobs->len; i++)
		tj_release(&jobs->items[i]);
	free(jobs->items);
	jobs->items = NULL;
	jobs->len = 0;
}

const struct trainingjob *cli_jobs_find(const struct cli_jobs *jobs, const char *word)
{
	const char *under = strchr(word, '_');

	for (size_t i = 0; i < jobs->len; i++)
		if (jobs->items[i].status.job_id && !strcmp(jobs->items[i].status.job_id, word))
			return &jobs->items[i];
	/* An array's element by ARRAY_INDEX, as Slurm names it. */
	for (size_t i = 0; under && i < jobs->len; i++) {
		const struct object_meta *m = &jobs->items[i].meta;
		const char *array = meta_annotation(m, ANNOTATION_ARRAY_JOB_ID);
		const char *index = meta_label(m, LABEL_ARRAY_INDEX);

		if (array && index && strlen(array) == (size_t)(under - word) &&
		    !strncmp(array, word, (size_t)(under - word)) && !strcmp(index, under + 1))
			return &jobs->items[i];
	}
	for (size_t i = 0; i < jobs->len; i++)
		if (jobs->items[i].meta.name && !strcmp(jobs->items[i].meta.name, word))
			return &jobs->items[i];
	return NULL;
}

bool cli_in_list(const char *word, const char *list, bool nocase)
{
	size_t len = strlen(word);

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");

		if (n == len && !(nocase ? strncasecmp(p, word, n) : strncmp(p, word, n)))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

/* The long option a ("--name[=v]") in opts; NULL when none. */
static const struct cli_opt *find_long(const struct cli_opt *opts, const char *a, size_t len)
{
	for (const struct cli_opt *o = opts; o->name; o++)
		if (strlen(o->name) == len && !strncmp(o->name, a, len))
			return o;
	return NULL;
}

static const struct cli_opt *find_short(const struct cli_opt *opts, char c)
{
	for (const struct cli_opt *o = opts; o->name; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

static int take_long(const char *cmd, const struct cli_opt *all_opts, char **args, int n,
		     int *i, FILE *err)
{
	const char *a = args[*i] + 2, *eq = strchr(a, '=');
	const struct cli_opt *o = find_long(all_opts, a, eq ? (size_t)(eq - a) : strlen(a));

	if (!o) {
		fprintf(err, "%s: unknown flag: --%.*s\n", cmd,
			(int)(eq ? (size_t)(eq - a) : strlen(a)), a);
		return CLI_EXIT_USAGE;
	}
	if (o->set) {
		if (eq) {
			fprintf(err, "%s: flag --%s takes no value\n", cmd, o->name);
			return CLI_EXIT_USAGE;
		}
		*o->set = true;
		return 0;
	}
	if (eq) {
		*o->value = eq + 1;
	} else if (*i + 1 < n) {
		*o->value = args[++*i];
	} else {
		fprintf(err, "%s: flag needs an argument: --%s\n", cmd, o->name);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

static int take_short(const char *cmd, const struct cli_opt *all_opts, char **args, int n,
		      int *i, FILE *err)
{
	for (const char *p = args[*i] + 1; *p; p++) {
		const struct cli_opt *o = find_short(all_opts, *p);

		if (!o) {
			fprintf(err, "%s: unknown flag: -%c\n", cmd, *p);
			return CLI_EXIT_USAGE;
		}
		if (o->set) {
			*o->set = true;
			continue;
		}
		if (p[1]) {
			*o->value = p + 1 + (p[1] == '=');
		} else if (*i + 1 < n) {
			*o->value = args[++*i];
		} else {
			fprintf(err, "%s: flag needs an argument: -%c\n", cmd, *p);
			return CLI_EXIT_USAGE;
		}
		return 0;
	}
	return 0;
}

int cli_opts_parse(const char *cmd, const struct cli_opt *opts, char **args, int n,
		   struct cli_globals *g, bool *all, bool *help, char **pos, int *n_pos,
		   FILE *err)
{
	struct cli_opt table[48];
	size_t k = 0;
	bool dashdash = false;
	int code;

	table[k++] = (struct cli_opt){ "kubeconfig", 0, &g->kubeconfig, NULL };
	table[k++] = (struct cli_opt){ "context", 0, &g->context, NULL };
	table[k++] = (struct cli_opt){ "namespace", 0, &g->namespace, NULL };
	table[k++] = (struct cli_opt){ "all-namespaces", 'A', NULL, all };
	table[k++] = (struct cli_opt){ "help", 0, NULL, help };
	for (const struct cli_opt *o = opts; o->name && k + 1 < sizeof(table) / sizeof(table[0]);
	     o++)
		table[k++] = *o;
	table[k] = (struct cli_opt){ NULL, 0, NULL, NULL };
	*n_pos = 0;
	for (int i = 0; i < n; i++) {
		const char *a = args[i];

		if (dashdash || a[0] != '-' || !a[1]) {
			pos[(*n_pos)++] = args[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			dashdash = true;
			continue;
		}
		code = a[1] == '-' ? take_long(cmd, table, args, n, &i, err) :
				     take_short(cmd, table, args, n, &i, err);
		if (code)
			return code;
	}
	return 0;
}
