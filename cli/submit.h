/*
 * submit.h - internal to cli/: the words of the commands that submit with
 * sbatch's options (cadre sbatch, cadre salloc), read once, as sbatch and
 * salloc read them (getopt_long with sbatch's option table), and the
 * conversion of a script with those options on top.
 */
#ifndef CADRE_CLI_SUBMIT_H
#define CADRE_CLI_SUBMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/kube.h"

struct convert_result;

/* What follows the options. */
enum cli_words_mode {
	CLI_WORDS_SCRIPT,   /* sbatch: one script, then only cadre's own flags */
	CLI_WORDS_COMMAND,  /* salloc: a command and its arguments, taken as they are */
};

struct cli_words {
	struct cli_globals g;   /* --kubeconfig, --context, --namespace, on top of the caller's */
	const char *image;      /* --image */
	const char *topology_level;  /* --topology-level, else the ClusterTopology's */
	struct cli_placement placement;  /* --node-selector, --toleration */
	const char *timeout;    /* --submit-timeout, as text */
	bool parsable, help;    /* --parsable; --help or -h */
	bool wait;              /* sbatch -W/--wait */
	bool no_upload;         /* sbatch --no-upload: the code is in the image or on a Volume */
	const char *max_upload; /* sbatch --max-upload SIZE, as text */
	const char *script;     /* SCRIPT mode: the script; NULL when none */
	char **command;         /* COMMAND mode: the command and its arguments (borrowed) */
	int n_command;          /* 0: none given */
	const char **opts;      /* sbatch's options, in order (owned array, borrowed words) */
	size_t n_opts;
};

/*
 * Split args[0..n) (every word after the command name) into cadre's own
 * flags, sbatch's options and what follows them, as mode says. cadre's
 * flags are taken by their exact long names (-h too); in SCRIPT mode also
 * after the script, in COMMAND mode only before the command, whose words
 * are all the command's. "--" ends the options. c->g starts as the
 * caller's globals. 0, or -1 after one line on err naming cmd (a flag
 * without its value, a word after the script) or when out of memory.
 * Release with cli_words_release.
 */
int cli_words_parse(struct cli_words *c, const char *cmd, enum cli_words_mode mode,
		    char **args, int n, FILE *err);
void cli_words_release(struct cli_words *c);

/*
 * Convert text (a batch script, file names it in notes) with c's options
 * on top into r, named default_name unless the script or the options name
 * it. 0, or the exit code after one line on err (cli_converted).
 */
int cli_words_convert(const struct cli_words *c, const char *cmd, const char *file,
		      const char *text, size_t len, const char *default_name,
		      struct convert_result *r, FILE *err);

#endif
