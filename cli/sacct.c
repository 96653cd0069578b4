/*
 * sacct.c - `cadre sacct` (the jobs the API server still holds, as sacct
 * prints them) and `cadre scancel ID|NAME...` (delete them).
 *
 * After the command word its options are the tool's own: sacct's -n is
 * --noheader; the namespace is --namespace (or -n before the command).
 */
#include "cli/jobs.h"
#include "cli/ranks.h"
#include "cli/slurmfmt.h"

#include "api/slurm.h"

#include "base/buf.h"
#include "base/err.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SACCT "cadre sacct"
#define SCANCEL "cadre scancel"

struct sacct_cmd {
	struct cli_globals g;
	const char *jobs, *format, *states, *users;
	bool parsable, parsable2, noheader, all, help;
};

static long long job_number(const struct trainingjob *tj)
{
	return tj->status.job_id ? strtoll(tj->status.job_id, NULL, 10) : 0;
}

/* sacct lists jobs in the order they were submitted: by id. */
static int by_id(const void *a, const void *b)
{
	long long x = job_number(*(const struct trainingjob *const *)a);
	long long y = job_number(*(const struct trainingjob *const *)b);

	return (x > y) - (x < y);
}

static bool sacct_wanted(const struct sacct_cmd *c, const struct trainingjob *tj)
{
	const char *st = slurm_state(tj, false, true);

	return slurm_row_shown(tj) && (!c->jobs || slurm_jobs_match(tj, c->jobs)) &&
	       (!c->users || cli_in_list(slurm_user(tj), c->users, false)) &&
	       (!c->states || cli_in_list(st, c->states, true) ||
		cli_in_list(slurm_state(tj, true, true), c->states, true));
}

static int sacct_args(struct sacct_cmd *c, char **args, int n, struct slurm_sacct_field *fields,
		      size_t *n_fields, FILE *err)
{
	const struct cli_opt opts[] = {
		{ "jobs", 'j', &c->jobs, NULL }, { "format", 'o', &c->format, NULL },
		{ "parsable", 'p', NULL, &c->parsable }, { "parsable2", 'P', NULL, &c->parsable2 },
		{ "noheader", 'n', NULL, &c->noheader }, { "state", 's', &c->states, NULL },
		{ "user", 'u', &c->users, NULL }, { NULL, 0, NULL, NULL },
	};
	char **pos = calloc((size_t)n + 1, sizeof(*pos));
	int n_pos = 0, code;
	size_t bad, state_len;
	const char *state;

	if (!pos)
		return CLI_EXIT_FAILED;
	code = cli_opts_parse(SACCT, opts, args, n, &c->g, &c->all, &c->help, pos, &n_pos, err);
	if (!code && n_pos) {
		fprintf(err, "%s: unexpected argument \"%s\" (jobs are chosen with -j)\n", SACCT,
			pos[0]);
		code = CLI_EXIT_USAGE;
	}
	if (!code && c->states && !slurm_states_valid(c->states, &state, &state_len)) {
		fprintf(err, "%s: --state: invalid job state \"%.*s\" (PD, R, CD, F, TO, CA, "
			"PR, RQ, ..., or their long names)\n", SACCT, (int)state_len, state);
		code = CLI_EXIT_USAGE;
	}
	if (!code && slurm_sacct_parse(c->format ? c->format : SLURM_SACCT_FIELDS, fields,
				       n_fields, &bad)) {
		fprintf(err, "%s: --format: unknown field \"%s\" (known: JobID JobIDRaw JobName "
			"Partition Account User AllocCPUS NNodes NodeList State ExitCode Elapsed "
			"Timelimit Submit Start End, each with an optional %%WIDTH)\n", SACCT,
			c->format + bad);
		code = CLI_EXIT_USAGE;
	}
	free(pos);
	return code;
}

static int print_sacct(const struct sacct_cmd *c, const struct slurm_sacct_field *fields,
		       size_t n_fields, const struct cli_jobs *jobs, FILE *out)
{
	enum slurm_sacct_mode mode = c->parsable2 ? SLURM_SACCT_PARSABLE2 :
				     c->parsable ? SLURM_SACCT_PARSABLE : SLURM_SACCT_TABLE;
	const struct trainingjob **v = calloc(jobs->len + 1, sizeof(*v));
	int64_t now = (int64_t)time(NULL);
	struct buf text;
	size_t n = 0;
	int e = 0;

	if (!v)
		return CLI_EXIT_FAILED;
	for (size_t i = 0; i < jobs->len; i++)
		if (sacct_wanted(c, &jobs->items[i]))
			v[n++] = &jobs->items[i];
	qsort(v, n, sizeof(*v), by_id);
	buf_init(&text, (size_t)1 << 26);
	if (!c->noheader)
		e = slurm_sacct_header(fields, n_fields, mode, &text);
	for (size_t i = 0; i < n && !e; i++)
		e = slurm_sacct_row(fields, n_fields, mode, v[i], now, &text);
	if (!e)
		fputs(buf_str(&text), out);
	buf_release(&text);
	free(v);
	return e ? CLI_EXIT_FAILED : 0;
}

int cli_sacct(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	struct sacct_cmd c = { .g = *g };
	struct slurm_sacct_field fields[SLURM_SACCT_MAX_FIELDS];
	struct cli_kube k = { 0 };
	struct cli_jobs jobs = { 0 };
	size_t n_fields = 0;
	int code;

	if ((code = sacct_args(&c, args, n, fields, &n_fields, err)))
		return code;
	if (c.help) {
		cli_print_help(out, "sacct");
		return 0;
	}
	if ((code = cli_kube_open(&c.g, SACCT, &k, err)))
		return code;
	if (!(code = cli_jobs_list(&k, c.all, &jobs, err)))
		code = print_sacct(&c, fields, n_fields, &jobs, out);
	cli_jobs_release(&jobs);
	cli_kube_close(&k);
	return code;
}

/* ---- scancel ---- */

/* Delete one job; 0 or the exit code after one line. A job already gone is done. */
static int cancel_one(struct cli_kube *k, const struct trainingjob *tj, FILE *err)
{
	const struct kube_delete_opts opts = { .propagation_policy = "Background",
					       .uid = tj->meta.uid };
	struct kube_status st;
	char what[320];
	int e;

	kube_status_clear(&st);
	e = kube_client_delete(k->http, &kube_resource_trainingjobs, tj->meta.namespace,
			       tj->meta.name, &opts, NULL, &st);
	if (!e || e == CADRE_ENOTFOUND)
		return 0;
	snprintf(what, sizeof(what), "delete trainingjob \"%s\"", tj->meta.name);
	if (!st.code)
		st.code = e;
	return cli_kube_error(k, what, &st, err);
}

/* Delete one job (one already going is left to finish). */
static int cancel_act(struct cli_kube *k, const struct trainingjob *tj, void *ctx, FILE *out,
		      FILE *err)
{
	(void)ctx;
	(void)out;
	return tj->meta.deleting ? 0 : cancel_one(k, tj, err);
}

/*
 * The array's cancelled indices with index added, as one ranged set in set
 * (initialised here): what the annotation had is read back and written
 * again in order, so it stays as long as the array's own index set however
 * often an element is cancelled. 1, or -1 when memory ran out.
 */
static int cancel_set(const struct slurm_array *a, const char *had, long index, struct buf *set)
{
	size_t size = (size_t)a->index[a->n - 1] + 1, n = 0;
	unsigned char *mark = calloc(size, 1);
	int32_t *v = calloc(size, sizeof(*v));
	int err = mark && v ? 0 : CADRE_ENOMEM;

	buf_init(set, (size_t)16 << 20);
	if (!err && had && *had)
		(void)slurm_indices_mark(had, mark, size);
	if (!err) {
		mark[index] = 1;
		for (size_t i = 0; i < size; i++)
			if (mark[i] && slurm_array_has(a, (int32_t)i))
				v[n++] = (int32_t)i;
		err = slurm_indices_format(v, n, set);
	}
	free(mark);
	free(v);
	return err ? -1 : 1;
}

/*
 * scancel ARRAY_INDEX of an element that has not started (or has): the
 * array job records it in its annotation cadre.dev/cancel-tasks, and its
 * controller never starts it (or deletes it). 1 when word named such an
 * element and it was asked for, 0 when word is no such element, else the
 * exit code after one line.
 */
static int cancel_element(struct cli_kube *k, const struct cli_jobs *jobs, const char *word,
			  FILE *err)
{
	const char *under = strchr(word, '_');
	const struct trainingjob *array = NULL;
	struct slurm_array a;
	struct kube_status st;
	struct buf set;
	json_t *patch;
	char id[32], what[320];
	long index;
	char *end;
	int e;

	if (!under || (size_t)(under - word) >= sizeof(id))
		return 0;
	snprintf(id, sizeof(id), "%.*s", (int)(under - word), word);
	index = strtol(under + 1, &end, 10);
	if (!under[1] || *end || index < 0)
		return 0;
	for (size_t i = 0; i < jobs->len && !array; i++)
		if (jobs->items[i].spec.array && jobs->items[i].status.job_id &&
		    !strcmp(jobs->items[i].status.job_id, id))
			array = &jobs->items[i];
	if (!array || slurm_array_parse(array->spec.array, SLURM_ARRAY_INDEX_LIMIT, &a, NULL, 0)) {
		if (array)
			slurm_array_release(&a);
		return 0;
	}
	e = slurm_array_has(&a, (int32_t)index);
	if (e)
		e = cancel_set(&a, meta_annotation(&array->meta, ANNOTATION_CANCEL_TASKS), index, &set);
	slurm_array_release(&a);
	if (e < 0) {
		buf_release(&set);
		fprintf(err, "%s: out of memory\n", SCANCEL);
		return CLI_EXIT_FAILED;
	}
	if (!e)
		return 0;
	patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", ANNOTATION_CANCEL_TASKS,
			  buf_str(&set));
	buf_release(&set);
	if (!patch) {
		fprintf(err, "%s: out of memory\n", SCANCEL);
		return CLI_EXIT_FAILED;
	}
	kube_status_clear(&st);
	e = kube_client_patch(k->http, &kube_resource_trainingjobs, array->meta.namespace,
			      array->meta.name, NULL, KUBE_PATCH_MERGE, patch, NULL, &st);
	json_decref(patch);
	if (!e)
		return 1;
	snprintf(what, sizeof(what), "cancel element %ld of trainingjob \"%s\"", index,
		 array->meta.name);
	if (!st.code)
		st.code = e;
	return cli_kube_error(k, what, &st, err);
}

/*
 * Each job named by words[0..n) (a job id or a name) given to act; a name
 * that matches none is Slurm's error line. Exit code: the worst of act's
 * and CLI_EXIT_FAILED for an unknown job.
 */
typedef int (*job_action)(struct cli_kube *k, const struct trainingjob *tj, void *ctx,
			  FILE *out, FILE *err);

static int each_named_job(struct cli_kube *k, bool all, char **words, int n, job_action act,
			  void *ctx, FILE *out, FILE *err)
{
	struct cli_jobs jobs;
	int code, worst = 0;

	if ((code = cli_jobs_list(k, all, &jobs, err)))
		return code;
	for (int i = 0; i < n; i++) {
		const struct trainingjob *tj = cli_jobs_find(&jobs, words[i]);

		/* An element: its array records the cancel (one not started yet has no job). */
		if (act == cancel_act && strchr(words[i], '_')) {
			code = cancel_element(k, &jobs, words[i], err);
			if (code > 1)
				worst = code;
			if (code && !tj)
				continue;
		}
		if (!tj) {
			fprintf(err, "%s: error: Kill job error on job id %s: Invalid job id "
				"specified\n", SCANCEL, words[i]);
			worst = worst ? worst : CLI_EXIT_FAILED;
			continue;
		}
		if ((code = act(k, tj, ctx, out, err)))
			worst = code;
	}
	cli_jobs_release(&jobs);
	return worst;
}


/*
 * What runs in each rank's container for --signal: the entrypoint's
 * cadre-signal (controller/build/entrypoint.sh), found through CADRE_BIN_DIR,
 * which the controller sets on the container (and so on every exec).
 */
static const char signal_script[] =
	"exec \"${CADRE_BIN_DIR:-/cadre/bin}/cadre-signal\" \"$1\"";

/* --signal: SIG (ctx) to every running rank of the job; the job stays. */
static int signal_act(struct cli_kube *k, const struct trainingjob *tj, void *ctx, FILE *out,
		      FILE *err)
{
	char *argv[] = { "/bin/sh", "-c", (char *)signal_script, "cadre-signal", ctx };
	int code, ranks_worst;

	code = cli_exec_ranks(k, tj, -1, argv, 5, &ranks_worst, out, err);
	return code || ranks_worst ? CLI_EXIT_FAILED : 0;
}

/*
 * scancel -u USER and -t STATE with no job named: every job of those users
 * in those states (a job's user is who submitted it, squeue's USER).
 */
static int cancel_selected(struct cli_kube *k, bool all, const char *users, const char *states,
			   job_action act, void *ctx, FILE *out, FILE *err)
{
	struct cli_jobs jobs;
	int code, worst = 0;

	if ((code = cli_jobs_list(k, all, &jobs, err)))
		return code;
	for (size_t i = 0; i < jobs.len; i++) {
		const struct trainingjob *tj = &jobs.items[i];

		if (tj_phase_terminal(tj->status.phase) || slurm_is_element(tj))
			continue;
		if (users && !cli_in_list(slurm_user(tj), users, false))
			continue;
		if (states && !cli_in_list(slurm_state(tj, true, false), states, true) &&
		    !cli_in_list(slurm_state(tj, false, false), states, true))
			continue;
		if ((code = act(k, tj, ctx, out, err)))
			worst = code;
	}
	cli_jobs_release(&jobs);
	return worst;
}

int cli_scancel(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	const char *signal = NULL, *users = NULL, *states = NULL;
	const struct cli_opt opts[] = { { "signal", 's', &signal, NULL },
					{ "user", 'u', &users, NULL },
					{ "state", 't', &states, NULL }, { NULL, 0, NULL, NULL } };
	char sig[16];
	struct cli_globals gl = *g;
	struct cli_kube k = { 0 };
	bool all = false, help = false;
	char **pos = calloc((size_t)n + 1, sizeof(*pos));
	int n_pos = 0, code = CLI_EXIT_FAILED;

	if (!pos)
		return code;
	if ((code = cli_opts_parse(SCANCEL, opts, args, n, &gl, &all, &help, pos, &n_pos, err)))
		goto done;
	if (help) {
		cli_print_help(out, "scancel");
		goto done;
	}
	if (!n_pos && !users && !states) {
		fprintf(err, "%s: error: No job identification provided (give a job id or name)\n",
			SCANCEL);
		code = CLI_EXIT_USAGE;
		goto done;
	}
	if (states) {
		const char *bad;
		size_t bad_len;

		if (!slurm_states_valid(states, &bad, &bad_len)) {
			fprintf(err, "%s: error: Invalid job state specified: %.*s\n", SCANCEL,
				(int)bad_len, bad);
			code = CLI_EXIT_USAGE;
			goto done;
		}
	}
	if (signal && !cli_signal_name(signal, sig, sizeof(sig))) {
		fprintf(err, "%s: error: Invalid job signal: %s\n", SCANCEL, signal);
		code = CLI_EXIT_USAGE;
		goto done;
	}
	if ((code = cli_kube_open(&gl, SCANCEL, &k, err)))
		goto done;
	if (!n_pos)
		code = cancel_selected(&k, all, users, states, signal ? signal_act : cancel_act,
				       signal ? sig : NULL, out, err);
	else if (signal)
		code = each_named_job(&k, all, pos, n_pos, signal_act, sig, out, err);
	else
		code = each_named_job(&k, all, pos, n_pos, cancel_act, NULL, out, err);
	cli_kube_close(&k);
done:
	free(pos);
	return code;
}
