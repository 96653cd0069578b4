/*
 * ranks.h - internal to cli/: the pods of a job's ranks (for logs, exec
 * and scancel --signal), the srun --label line prefixer, and the option
 * readers of cadre logs and cadre exec.
 */
#ifndef CADRE_CLI_RANKS_H
#define CADRE_CLI_RANKS_H

#include <stdbool.h>
#include <stdio.h>

#include "base/buf.h"
#include "cli/jobs.h"
#include "kube/podexec.h"

/* One pod of a job: labels cadre.dev/node-rank and cadre.dev/restart-attempt. */
struct cli_rank_pod {
	int rank;
	int attempt;
	char *name;
	char *uid;    /* metadata.uid: which pod of that name it is ("" when absent) */
	char *phase;  /* "Running", ...; "" when absent */
	bool deleting;
};

struct cli_rank_pods {
	struct cli_rank_pod *items;  /* by attempt, then rank */
	size_t len;
};

/*
 * The pods labelled cadre.dev/job-name=job in ns. 0 or CADRE_E* (st says
 * what the API server answered). Release with cli_rank_pods_release.
 */
int cli_rank_pods_list(struct cli_kube *k, const char *ns, const char *job,
		       struct cli_rank_pods *out, struct kube_status *st);
void cli_rank_pods_release(struct cli_rank_pods *pods);

/* The highest attempt among pods; -1 when there are none. */
int cli_rank_pods_latest(const struct cli_rank_pods *pods);

/*
 * Writes text to out with each line prefixed "N: " (srun --label), keeping
 * a line that has not ended until the rest arrives; lines are cut at
 * CLI_PREFIX_MAX_LINE bytes. Not thread-safe: the caller locks around it.
 */
#define CLI_PREFIX_MAX_LINE 65536
struct cli_prefixer {
	char prefix[24];
	struct buf partial;
	FILE *out;
};

void cli_prefixer_init(struct cli_prefixer *p, int rank, FILE *out);
/* 0 or CADRE_EIO (out failed). */
int cli_prefixer_write(struct cli_prefixer *p, const char *data, size_t len);
/* The line that has not ended, ended with a newline. */
int cli_prefixer_flush(struct cli_prefixer *p);
/* Forget the line that has not ended. */
void cli_prefixer_drop(struct cli_prefixer *p);
void cli_prefixer_release(struct cli_prefixer *p);

/* "3" into *n: a whole number 0..1000000; false for anything else. */
bool cli_parse_count(const char *text, int *n);

/* Ranks as --rank takes them: "3", "0-3", "0,2,5-7". No range: every rank. */
#define CLI_RANK_RANGES 64
struct cli_rank_set {
	int lo[CLI_RANK_RANGES], hi[CLI_RANK_RANGES];
	size_t n;
};

/* Parse text into set (reset first); false for anything else, or more than 64 ranges. */
bool cli_rank_set_parse(const char *text, struct cli_rank_set *set);

/* Whether set holds rank (an empty set holds every rank). */
bool cli_rank_set_has(const struct cli_rank_set *set, int rank);

struct cli_logs_opts {
	struct cli_globals g;
	const char *job;
	bool follow, all, help;
	bool timestamps;            /* each line's time after its rank */
	struct cli_rank_set ranks;  /* empty: every rank */
	int attempt;                /* -1: the latest */
	long tail;                  /* the last N lines of each rank; -1: all */
	long since_seconds;         /* --since 10m: 600; 0: none */
	char since_time[32];        /* --since 2026-12-01T10:00:00Z, in UTC; "": none */
	long long limit_bytes;      /* at most this much of each rank's log; 0: no limit */
};

/* Read `cadre logs` args into o. 0, or CLI_EXIT_USAGE after one line on err. */
int cli_logs_parse(char **args, int n, struct cli_logs_opts *o, FILE *err);

struct cli_exec_opts {
	struct cli_globals g;
	const char *job;
	char **argv;  /* borrowed from args: the words after "--" (or after JOB, as sky exec) */
	int argc;
	bool interactive, tty, all, help;
	int rank;  /* -1: every rank */
};

/* Read `cadre exec` args into o. 0, or CLI_EXIT_USAGE after one line on err. */
int cli_exec_parse(char **args, int n, struct cli_exec_opts *o, FILE *err);

/*
 * "USR1", "SIGUSR1", "usr1" or "10" as the name kill -s takes ("USR1"),
 * into name; false for a signal that is not one of the standard ones.
 */
bool cli_signal_name(const char *text, char *name, size_t size);

/*
 * Run argv on the Running pods of job (all ranks, or rank when >= 0) of the
 * latest attempt through exec, every output line prefixed by its rank
 * (stdout to out, stderr to err). *worst gets the highest exit code (1 for
 * a rank whose command could not be run). 0, or the exit code after one
 * line on err (nothing runs, the API refuses).
 */
int cli_exec_ranks(struct cli_kube *k, const struct trainingjob *tj, int rank, char **argv,
		   int argc, int *worst, FILE *out, FILE *err);

#endif
