/*
 * cli.h - the `cadre` command line (docs/design.md 9): `cadre <command> [flags]`,
 * flags parsed as kubectl parses them (pflag: "--flag=v", "--flag v",
 * "-n v", "-nv", flags before or after the command, "--" ends them), the
 * global kubeconfig flags on every command, `--help` on each.
 *
 * Exit codes: 0 done; 1 failed for a reason outside the input (out of
 * memory, no kubeconfig, an API server that cannot be reached, refuses the
 * credentials or forbids the request); 2 bad usage or bad input (a file
 * that cannot be read, an object the API server rejects as invalid). Either
 * way one line on stderr.
 */
#ifndef CADRE_CLI_H
#define CADRE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILED 1
#define CLI_EXIT_USAGE 2

/* The kubeconfig flags every command takes (read as kubectl reads them). */
struct cli_globals {
	const char *kubeconfig;  /* --kubeconfig; NULL: $KUBECONFIG, then ~/.kube/config */
	const char *context;     /* --context; NULL: the current context */
	const char *namespace;   /* -n/--namespace; NULL: the context's, else "default" */
};

/* One flag of a command: a value (value != NULL) or a switch (set != NULL). */
struct cli_flag {
	const char *name;   /* long name without "--" */
	char short_name;    /* 0 for none */
	const char **value;
	bool *set;
};

/*
 * Run `cadre` with argv (argv[0] is the program), writing to out and err.
 * Returns the exit code. Reads only the files the command names.
 */
int cli_main(int argc, char **argv, FILE *out, FILE *err);

/* `cadre convert`: see its --help. args[0..n) are the positional words. */
struct cli_convert_opts {
	const char *image;           /* --image */
	const char *topology_level;  /* --topology-level */
};

int cli_convert(const struct cli_globals *g, const struct cli_convert_opts *o, char **args, int n,
		FILE *out, FILE *err);

/*
 * `cadre sbatch`: args[0..n) are every word after "sbatch" as typed (its
 * own parser splits cadre's flags, sbatch's options and the script, since
 * sbatch's -n is --ntasks). g holds the global flags given before it.
 */
int cli_sbatch(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);

/* The flags of `cadre launch`. */
struct cli_launch_opts {
	const char *image;         /* --image */
	const char *name;          /* --name */
	const char *wait_timeout;  /* --submit-timeout, seconds as text; NULL: 30 */
	const char *cluster;       /* -c/--cluster: a named cluster that stays up */
	const char *gpus;          /* --gpus TYPE[:N] (with -c) */
	const char *node_selector; /* --node-selector KEY=VALUE[,...] */
	const char *tolerations;   /* --toleration KEY[=VALUE][:EFFECT][,...] */
	const char *max_upload;    /* --max-upload SIZE: the cap on the code sent (docs/code.md) */
	bool no_upload;            /* --no-upload: send neither workdir nor file_mounts */
};

/* `cadre launch -c NAME [TASK.yaml]` (cli/cluster.c); timeout: for the job id. */
int cli_launch_cluster(const struct cli_globals *g, const struct cli_launch_opts *o,
		       char **args, int n, double timeout, FILE *out, FILE *err);

/* `cadre down NAME...`: ends the clusters of cadre launch -c. */
int cli_down(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);

/* `cadre push DIR [--max-upload SIZE]` (cli/code.c): see its --help. */
int cli_push(const struct cli_globals *g, const char *max_upload, char **args, int n,
	     FILE *out, FILE *err);

/* `cadre launch TASK.yaml`: see its --help. */
int cli_launch(const struct cli_globals *g, const struct cli_launch_opts *o, char **args,
	       int n, FILE *out, FILE *err);

/* `cadre volumes apply -f FILE`: args[0] is "apply". */
int cli_volumes(const struct cli_globals *g, const char *filename, char **args, int n,
		FILE *out, FILE *err);

/*
 * The daily commands (cli/squeue.c, cli/sacct.c): args[0..n) are every word
 * after the command, read with the tool's own options (squeue's -n is
 * --name, sacct's -n --noheader); g holds the global flags given before it.
 */
int cli_squeue(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);
int cli_scontrol(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);
int cli_sinfo(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);
int cli_queue(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);
int cli_sacct(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);
int cli_scancel(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);
int cli_status(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);

/*
 * `cadre salloc [sbatch options] [COMMAND [ARGS]]` (cli/salloc.c): args as
 * for cli_sbatch; the words from the command on are the command's.
 */
int cli_salloc(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);

/* `cadre completion bash|zsh` (cli/completion.c): the script on out. */
int cli_completion(char **args, int n, FILE *out, FILE *err);

/*
 * The i-th command of the table: its name, one-line summary and --help
 * text (static strings). false past the last.
 */
bool cli_command_at(size_t i, const char **name, const char **summary, const char **help);

/*
 * The commands on a job's ranks (cli/logs.c, cli/exec.c): their options
 * after the command word, as cadre logs --help and cadre exec --help say.
 */
int cli_logs(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);
int cli_exec(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);

/* A command's --help and the global flags on f (cmd: "sbatch"). */
void cli_print_help(FILE *f, const char *cmd);

/* ---- shared by the commands (cli/file.c) ---- */

struct buf;
struct convert_note;
struct convert_result;

/* The whole of path ("-": stdin) into b, at most CONVERT_MAX_INPUT bytes. 0 or CADRE_E*. */
int cli_read_file(const char *path, struct buf *b);

/*
 * Read path for command cmd ("cadre sbatch"), printing the one-line reason on
 * err when it cannot be read. Returns 0 or the exit code.
 */
int cli_read_input(const char *cmd, const char *path, struct buf *b, FILE *err);

/* "train" for "dir/train.sh" (sbatch names a job after its script); NULL: no memory. */
char *cli_name_from_path(const char *path);

/* "FILE:LINE[:COLUMN]: [option: ]message"; "command line: ..." for CONVERT_LINE_ARGS. */
void cli_print_note(FILE *f, const char *file, const struct convert_note *n);

/*
 * The exit code of command cmd after a converter answered e for path into
 * r: 0 when it converted (r's notes sorted, for printing later); a parse
 * error is printed as r's one note and is CLI_EXIT_USAGE; any other error
 * is one line and CLI_EXIT_FAILED.
 */
int cli_converted(const char *cmd, const char *path, int e, struct convert_result *r,
		  FILE *err);

#endif
