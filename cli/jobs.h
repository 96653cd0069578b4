/*
 * jobs.h - internal to cli/: the TrainingJobs of a namespace (or all) read
 * into structs for the daily commands (squeue, sacct, scancel, queue), and
 * the option reader those commands share.
 */
#ifndef CADRE_CLI_JOBS_H
#define CADRE_CLI_JOBS_H

#include <stdbool.h>
#include <stdio.h>

#include "api/trainingjob.h"
#include "cli/kube.h"

struct cli_jobs {
	struct trainingjob *items;
	size_t len;
};

/*
 * List the TrainingJobs of k->ns (every namespace when all) into jobs.
 * 0, or the exit code after one line on err (cli_kube_error). A job that
 * does not parse is read as far as it parses. Release with cli_jobs_release.
 */
int cli_jobs_list(struct cli_kube *k, bool all, struct cli_jobs *jobs, FILE *err);
void cli_jobs_release(struct cli_jobs *jobs);

/* The job named by word: the one whose status.jobId it is, else the one of that name; NULL. */
const struct trainingjob *cli_jobs_find(const struct cli_jobs *jobs, const char *word);

/*
 * One job as a person reads it (cadre status): name and id, state and why,
 * resources, times, restarts, the last failure, every rank, the
 * conditions; appended to out. Pure. 0 or CADRE_ENOMEM/CADRE_ETOOBIG.
 */
struct buf;
int cli_status_text(const struct trainingjob *tj, int64_t now, struct buf *out);

/* One option of a daily command: a value (value != NULL) or a switch (set). */
struct cli_opt {
	const char *name;  /* long name without "--"; NULL ends a table */
	char short_name;   /* 0: none */
	const char **value;
	bool *set;
};

/*
 * Read args[0..n) as getopt_long reads them with opts (exact long names,
 * "--name=v", "--name v", "-xv", "-x v", clustered switches "-lh", "--"
 * ends them); the kubeconfig flags (--kubeconfig, --context, --namespace),
 * -A/--all-namespaces and --help are added to g, *all and *help. The other
 * words go to pos[0..*n_pos) (pos has room for n). 0, or CLI_EXIT_USAGE
 * after one line on err naming cmd.
 */
int cli_opts_parse(const char *cmd, const struct cli_opt *opts, char **args, int n,
		   struct cli_globals *g, bool *all, bool *help, char **pos, int *n_pos,
		   FILE *err);

/* Whether word is one of the comma-separated items of list (case-insensitive when nocase). */
bool cli_in_list(const char *word, const char *list, bool nocase);

#endif
