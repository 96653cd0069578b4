/*
 * squeue.c - `cadre squeue` (Slurm's squeue) and `cadre queue` (SkyPilot's
 * sky jobs queue): the TrainingJobs of the namespace, one line each.
 *
 * After the command word its options are the tool's own, so -n is
 * squeue's --name and -h its --noheader; the namespace is --namespace (or
 * -n before the command), as for cadre sbatch.
 */
#include "cli/jobs.h"
#include "cli/slurmfmt.h"

#include "base/buf.h"
#include "base/err.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SQUEUE "cadre squeue"
#define QUEUE "cadre queue"

struct squeue_cmd {
	struct cli_globals g;
	const char *users, *jobs, *states, *names, *format;
	bool me, is_long, noheader, json, all, help;
	char *me_user;  /* --me: who the API server says we are */
};

/* squeue's default: every job that has not ended (-t all: every job). */
static bool state_wanted(const struct trainingjob *tj, const char *states)
{
	if (!states)
		return !tj_phase_terminal(tj->status.phase);
	return cli_in_list("all", states, true) ||
	       cli_in_list(slurm_state(tj, true, false), states, true) ||
	       cli_in_list(slurm_state(tj, false, false), states, true);
}

static bool wanted(const struct squeue_cmd *c, const struct trainingjob *tj)
{
	return slurm_row_shown(tj) && state_wanted(tj, c->states) &&
	       (!c->users || cli_in_list(slurm_user(tj), c->users, false)) &&
	       (!c->me_user || !strcmp(slurm_user(tj), c->me_user)) &&
	       (!c->jobs || slurm_jobs_match(tj, c->jobs)) &&
	       (!c->names || cli_in_list(slurm_job_name(tj), c->names, false) ||
		(tj->meta.name && cli_in_list(tj->meta.name, c->names, false)));
}

/* Slurm's order of job states (enum job_states): pending, running, suspended, then the ends. */
static int state_rank(const struct trainingjob *tj)
{
	const char *s = slurm_state(tj, true, false);
	static const char *const order[] = { "PD", "CF", "R", "RQ", "S", "CG", "CD", "F", "TO",
					     "PR" };

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (!strcmp(s, order[i]))
			return (int)i;
	return 99;
}

static long long job_number(const struct trainingjob *tj)
{
	return tj->status.job_id ? strtoll(tj->status.job_id, NULL, 10) : 0;
}

/* squeue's default sort "P,t,-p": partition, state, priority high first; then the id. */
static int squeue_order(const void *a, const void *b)
{
	const struct trainingjob *x = *(const struct trainingjob *const *)a;
	const struct trainingjob *y = *(const struct trainingjob *const *)b;
	int d = strcmp(slurm_partition(x), slurm_partition(y));

	if (!d)
		d = state_rank(x) - state_rank(y);
	if (!d)
		d = (y->spec.priority > x->spec.priority) - (y->spec.priority < x->spec.priority);
	if (!d)
		d = (job_number(x) > job_number(y)) - (job_number(x) < job_number(y));
	return d;
}

/* The jobs c asks for, sorted by cmp, as pointers into jobs. NULL: no memory. */
static const struct trainingjob **select_jobs(const struct cli_jobs *jobs,
					      const struct squeue_cmd *c,
					      int (*cmp)(const void *, const void *), size_t *n)
{
	const struct trainingjob **v = calloc(jobs->len + 1, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < jobs->len; i++)
		if (!c || wanted(c, &jobs->items[i]))
			v[(*n)++] = &jobs->items[i];
	qsort(v, *n, sizeof(*v), cmp);
	return v;
}

/* One job as an entry of squeue --json's "jobs", with Slurm's field names. */
static json_t *job_json(const struct trainingjob *tj, int64_t now)
{
	struct buf nodes;
	char t[32];
	json_t *o;

	buf_init(&nodes, (size_t)1 << 20);
	if (slurm_nodelist(tj, &nodes)) {
		buf_release(&nodes);
		return NULL;
	}
	slurm_time_used(slurm_run_time(tj, now), t);
	o = json_pack("{s:I,s:s,s:s,s:s,s:s,s:[s],s:s,s:i,s:s,s:s,s:I,s:I,s:I}",
		      "job_id", (json_int_t)job_number(tj),
		      "name", slurm_job_name(tj),
		      "user_name", slurm_user(tj),
		      "account", tj->meta.namespace ? tj->meta.namespace : "",
		      "partition", slurm_partition(tj),
		      "job_state", slurm_state(tj, false, false),
		      "state_reason", slurm_reason(tj),
		      "node_count", (int)tj->spec.num_nodes,
		      "nodes", buf_str(&nodes),
		      "time_used", t,
		      "submit_time", (json_int_t)tj->meta.creation_timestamp,
		      "start_time", (json_int_t)slurm_start_time(tj),
		      "end_time", (json_int_t)tj->status.completion_time);
	buf_release(&nodes);
	return o;
}

static int print_json(const struct trainingjob **v, size_t n, int64_t now, FILE *out)
{
	json_t *jobs = json_array(), *doc = json_pack("{s:o}", "jobs", jobs);
	char *text = NULL;
	int code = CLI_EXIT_FAILED;

	for (size_t i = 0; doc && i < n; i++)
		if (json_array_append_new(jobs, job_json(v[i], now)))
			goto out;
	if (!doc || !(text = json_dumps(doc, JSON_INDENT(2))))
		goto out;
	fprintf(out, "%s\n", text);
	code = 0;
out:
	free(text);
	json_decref(doc);
	return code;
}

static int print_table(const struct squeue_cmd *c, const struct trainingjob **v, size_t n,
		       int64_t now, FILE *out)
{
	/* squeue reads SQUEUE_FORMAT when neither -o nor -l says otherwise (opts.c). */
	const char *env = getenv("SQUEUE_FORMAT");
	const char *format = c->format ? c->format :
			     c->is_long ? SLURM_SQUEUE_FORMAT_LONG :
			     env && *env ? env : SLURM_SQUEUE_FORMAT;
	struct buf line;
	int e = 0;

	buf_init(&line, (size_t)1 << 24);
	if (!c->noheader && !(e = slurm_squeue_header(format, &line)))
		fprintf(out, "%s\n", buf_str(&line));
	for (size_t i = 0; i < n && !e; i++) {
		buf_reset(&line);
		if (!(e = slurm_squeue_row(format, v[i], now, &line)))
			fprintf(out, "%s\n", buf_str(&line));
	}
	buf_release(&line);
	return e ? CLI_EXIT_FAILED : 0;
}

static int squeue_args(struct squeue_cmd *c, char **args, int n, FILE *err)
{
	const struct cli_opt opts[] = {
		{ "user", 'u', &c->users, NULL }, { "me", 0, NULL, &c->me },
		{ "jobs", 'j', &c->jobs, NULL }, { "states", 't', &c->states, NULL },
		{ "name", 'n', &c->names, NULL }, { "long", 'l', NULL, &c->is_long },
		{ "format", 'o', &c->format, NULL }, { "noheader", 'h', NULL, &c->noheader },
		{ "json", 0, NULL, &c->json }, { NULL, 0, NULL, NULL },
	};
	char **pos = calloc((size_t)n + 1, sizeof(*pos));
	int n_pos = 0, code;
	size_t bad, state_len;
	const char *state;

	if (!pos)
		return CLI_EXIT_FAILED;
	code = cli_opts_parse(SQUEUE, opts, args, n, &c->g, &c->all, &c->help, pos, &n_pos, err);
	if (!code && n_pos) {
		fprintf(err, "%s: unexpected argument \"%s\" (jobs are chosen with -j, -u, -n)\n",
			SQUEUE, pos[0]);
		code = CLI_EXIT_USAGE;
	}
	if (!code && c->is_long && c->format) {
		fprintf(err, "%s: -o/--format and -l/--long are mutually exclusive, as in "
			"squeue\n", SQUEUE);
		code = CLI_EXIT_USAGE;
	}
	if (!code && c->states && !slurm_states_valid(c->states, &state, &state_len)) {
		fprintf(err, "%s: --states: invalid job state \"%.*s\" (PD, R, CF, RQ, S, CG, CD, "
			"F, TO, PR, their long names, or all)\n", SQUEUE, (int)state_len, state);
		code = CLI_EXIT_USAGE;
	}
	if (!code && !c->format && !c->is_long && getenv("SQUEUE_FORMAT") &&
	    *getenv("SQUEUE_FORMAT") && slurm_squeue_check(getenv("SQUEUE_FORMAT"), &bad)) {
		fprintf(err, "%s: SQUEUE_FORMAT: unknown field at \"%s\" (known: %%i %%P %%j %%u "
			"%%t %%T %%M %%l %%D %%R %%N %%r %%a)\n", SQUEUE, getenv("SQUEUE_FORMAT") + bad);
		code = CLI_EXIT_USAGE;
	}
	if (!code && c->format && slurm_squeue_check(c->format, &bad)) {
		fprintf(err, "%s: --format: unknown field at \"%s\" (known: %%i %%P %%j %%u %%t "
			"%%T %%M %%l %%D %%R %%N %%r %%a)\n", SQUEUE, c->format + bad);
		code = CLI_EXIT_USAGE;
	}
	free(pos);
	return code;
}

int cli_squeue(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	struct squeue_cmd c = { .g = *g };
	struct cli_kube k = { 0 };
	struct cli_jobs jobs = { 0 };
	const struct trainingjob **v = NULL;
	size_t nv;
	int code;

	if ((code = squeue_args(&c, args, n, err)))
		return code;
	if (c.help) {
		cli_print_help(out, "squeue");
		return 0;
	}
	if ((code = cli_kube_open(&c.g, SQUEUE, &k, err)))
		return code;
	if ((code = cli_jobs_list(&k, c.all, &jobs, err)))
		goto out;
	if (c.me && !(c.me_user = cli_kube_whoami(&k))) {
		fprintf(err, "%s: --me: the API server %s does not say who these credentials are "
			"(SelfSubjectReview); use -u USER\n", SQUEUE, k.cfg->server);
		code = CLI_EXIT_FAILED;
		goto out;
	}
	code = CLI_EXIT_FAILED;
	if (!(v = select_jobs(&jobs, &c, squeue_order, &nv)))
		goto out;
	code = c.json ? print_json(v, nv, (int64_t)time(NULL), out) :
			print_table(&c, v, nv, (int64_t)time(NULL), out);
out:
	free(v);
	free(c.me_user);
	cli_jobs_release(&jobs);
	cli_kube_close(&k);
	return code;
}

/* ---- cadre queue ---- */

/* sky jobs queue: the newest job first. */
static int queue_order(const void *a, const void *b)
{
	const struct trainingjob *x = *(const struct trainingjob *const *)a;
	const struct trainingjob *y = *(const struct trainingjob *const *)b;

	return (job_number(y) > job_number(x)) - (job_number(y) < job_number(x));
}

static const char *const queue_header[] = { "ID", "NAME", "RESOURCES", "SUBMITTED",
					    "TOT. DURATION", "JOB DURATION", "#RECOVERIES",
					    "STATUS" };
#define QUEUE_COLUMNS (sizeof(queue_header) / sizeof(queue_header[0]))

/* The cells of tj's row into cells[] (each a buf). */
static int queue_cells(const struct trainingjob *tj, int64_t now, struct buf *cells)
{
	int64_t end = tj->status.completion_time ? tj->status.completion_time : now;
	char t[64];
	int e;

	e = buf_adds(&cells[0], tj->status.job_id ? tj->status.job_id : "-");
	e = e ? e : buf_adds(&cells[1], tj->meta.name ? tj->meta.name : "");
	e = e ? e : sky_resources(tj, &cells[2]);
	sky_ago(tj->meta.creation_timestamp, now, t);
	e = e ? e : buf_adds(&cells[3], t);
	sky_duration(end - tj->meta.creation_timestamp, tj->meta.creation_timestamp != 0, t);
	e = e ? e : buf_adds(&cells[4], t);
	sky_duration(slurm_job_elapsed(tj, now), tj->status.start_time != 0, t);
	e = e ? e : buf_adds(&cells[5], t);
	e = e ? e : buf_addf(&cells[6], "%d", (int)(tj->status.infra_restarts + tj->status.requeues));
	e = e ? e : buf_adds(&cells[7], sky_status(tj));
	return e;
}

/* SkyPilot's tables (prettytable, no border): columns left-aligned, two spaces apart. */
static int print_queue(const struct trainingjob **v, size_t n, int64_t now, FILE *out)
{
	struct buf *cells = calloc((n + 1) * QUEUE_COLUMNS, sizeof(*cells));
	size_t width[QUEUE_COLUMNS] = { 0 };
	int e = 0;

	if (!cells)
		return CLI_EXIT_FAILED;
	for (size_t i = 0; i < (n + 1) * QUEUE_COLUMNS; i++)
		buf_init(&cells[i], (size_t)1 << 16);
	for (size_t k = 0; k < QUEUE_COLUMNS && !e; k++)
		e = buf_adds(&cells[k], queue_header[k]);
	for (size_t i = 0; i < n && !e; i++)
		e = queue_cells(v[i], now, &cells[(i + 1) * QUEUE_COLUMNS]);
	for (size_t i = 0; i < (n + 1) * QUEUE_COLUMNS; i++)
		if (cells[i].len > width[i % QUEUE_COLUMNS])
			width[i % QUEUE_COLUMNS] = cells[i].len;
	for (size_t i = 0; i <= n && !e; i++) {
		for (size_t k = 0; k < QUEUE_COLUMNS; k++) {
			const struct buf *b = &cells[i * QUEUE_COLUMNS + k];

			if (k + 1 < QUEUE_COLUMNS)
				fprintf(out, "%-*s  ", (int)width[k], buf_str(b));
			else
				fprintf(out, "%s\n", buf_str(b));
		}
	}
	for (size_t i = 0; i < (n + 1) * QUEUE_COLUMNS; i++)
		buf_release(&cells[i]);
	free(cells);
	return e ? CLI_EXIT_FAILED : 0;
}

int cli_queue(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	const struct cli_opt opts[] = { { NULL, 0, NULL, NULL } };
	struct cli_globals gl = *g;
	struct cli_kube k = { 0 };
	struct cli_jobs jobs = { 0 };
	const struct trainingjob **v = NULL;
	bool all = false, help = false;
	char **pos = calloc((size_t)n + 1, sizeof(*pos));
	int n_pos = 0, code = CLI_EXIT_FAILED;
	size_t nv;

	if (!pos)
		return code;
	if ((code = cli_opts_parse(QUEUE, opts, args, n, &gl, &all, &help, pos, &n_pos, err)))
		goto done;
	if (help) {
		cli_print_help(out, "queue");
		goto done;
	}
	if (n_pos) {
		fprintf(err, "%s: unexpected argument \"%s\"\n", QUEUE, pos[0]);
		code = CLI_EXIT_USAGE;
		goto done;
	}
	if ((code = cli_kube_open(&gl, QUEUE, &k, err)))
		goto done;
	if ((code = cli_jobs_list(&k, all, &jobs, err)))
		goto out;
	code = CLI_EXIT_FAILED;
	if ((v = select_jobs(&jobs, NULL, queue_order, &nv)))
		code = print_queue(v, nv, (int64_t)time(NULL), out);
out:
	free(v);
	cli_jobs_release(&jobs);
	cli_kube_close(&k);
done:
	free(pos);
	return code;
}
