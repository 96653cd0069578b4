/*
 * cli.h - the `cadre` command line (DESIGN.md 9): `cadre <command> [flags]`,
 * flags parsed as kubectl parses them (pflag: "--flag=v", "--flag v",
 * "-n v", "-nv", flags before or after the command, "--" ends them), the
 * global kubeconfig flags on every command, `--help` on each.
 *
 * Exit codes: 0 done; 1 failed for a reason outside the input (out of
 * memory, a file that cannot be read); 2 bad usage or bad input, with one
 * line on stderr.
 */
#ifndef CADRE_CLI_H
#define CADRE_CLI_H

#include <stdbool.h>
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
int cli_convert(const struct cli_globals *g, const char *image, char **args, int n,
		FILE *out, FILE *err);

#endif
