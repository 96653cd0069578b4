/*
 * completion.c - `cadre completion bash|zsh`: a completion script for the
 * shell, written from the command table itself, so that a new command or
 * flag completes as soon as its --help lists it.
 *
 * A command's flags are the ones its --help lists in its flag lines (a line
 * that starts with at most six spaces and a "-"); sbatch and salloc add
 * sbatch's own options (convert_sbatch_option). Words after the commands
 * that take a job complete to the ids and names cadre squeue lists, with
 * the namespace given before the command.
 */
#include "cli/cli.h"

#include "base/buf.h"
#include "base/err.h"
#include "convert/convert.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The commands whose words are jobs, and the ones whose words are commands to run. */
#define JOB_COMMANDS "scancel status logs exec"

static bool is_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '-';
}

/* " flag" appended unless out has it already (a help may name a flag twice). */
static int add_flag(struct buf *out, const char *flag, size_t len)
{
	const char *have = buf_str(out);

	for (const char *p = strstr(have, " "); p; p = strstr(p + 1, " "))
		if (!strncmp(p + 1, flag, len) && (p[1 + len] == ' ' || !p[1 + len]))
			return 0;
	return buf_addf(out, " %.*s", (int)len, flag);
}

/* Each flag of a flag line ("  -u, --user LIST   ..."), space-separated, appended to out. */
static int line_flags(const char *line, size_t len, struct buf *out)
{
	size_t i = 0, indent;
	int e = 0;

	while (i < len && line[i] == ' ')
		i++;
	indent = i;
	if (indent > 6 || i >= len || line[i] != '-')
		return 0;
	while (!e && i < len && line[i] == '-') {
		size_t start = i;

		while (i < len && line[i] == '-')
			i++;
		while (i < len && is_word_char(line[i]))
			i++;
		e = add_flag(out, line + start, i - start);
		if (i + 1 < len && line[i] == ',' && line[i + 1] == ' ')
			i += 2;
		else
			break;
	}
	return e;
}

/* Every flag of a command: its help's flag lines, sbatch's options, the global flags. */
static int command_flags(const char *name, const char *help, struct buf *out)
{
	static const char globals[] = "--kubeconfig --context --namespace --help";
	char flag[80];
	int e = 0;

	for (const char *p = help; *p && !e;) {
		size_t n = strcspn(p, "\n");

		e = line_flags(p, n, out);
		p += n + (p[n] == '\n');
	}
	for (size_t i = 0; !e && (!strcmp(name, "sbatch") || !strcmp(name, "salloc")) &&
			   convert_sbatch_option(i); i++) {
		snprintf(flag, sizeof(flag), "--%s", convert_sbatch_option(i));
		e = add_flag(out, flag, strlen(flag));
	}
	for (const char *p = globals; *p && !e;) {
		size_t n = strcspn(p, " ");

		e = add_flag(out, p, n);
		p += n + (p[n] == ' ');
	}
	return e;
}

/* text for the inside of single quotes (and for _describe, with its ':' escaped). */
static int escaped(struct buf *out, const char *text, bool zsh_describe)
{
	int e = 0;

	for (const char *p = text; *p && !e; p++) {
		if (*p == '\'')
			e = buf_adds(out, "'\\''");
		else if (*p == ':' && zsh_describe)
			e = buf_adds(out, "\\:");
		else
			e = buf_addc(out, *p);
	}
	return e;
}

static int quoted(struct buf *out, const char *text)
{
	int e = buf_addc(out, '\'');

	e = e ? e : escaped(out, text, false);
	return e ? e : buf_addc(out, '\'');
}

/* "\tNAME) opts=' ... ' ;;" for every command, in shell case syntax (zsh: "(NAME)"). */
static int cases(struct buf *out, bool zsh)
{
	const char *name, *summary, *help;
	struct buf flags;
	int e = 0;

	buf_init(&flags, (size_t)1 << 16);
	for (size_t i = 0; !e && cli_command_at(i, &name, &summary, &help); i++) {
		buf_reset(&flags);
		e = command_flags(name, help, &flags);
		e = e ? e : buf_addf(out, "\t%s%s) opts=", zsh ? "(" : "", name);
		e = e ? e : quoted(out, buf_str(&flags) + 1);
		e = e ? e : buf_adds(out, " ;;\n");
	}
	buf_release(&flags);
	return e;
}

static int command_names(struct buf *out)
{
	const char *name, *summary, *help;
	int e = 0;

	for (size_t i = 0; !e && cli_command_at(i, &name, &summary, &help); i++)
		e = buf_addf(out, "%s%s", i ? " " : "", name);
	return e;
}

static const char bash_head[] =
	"# bash completion for cadre. Load it with: source <(cadre completion bash)\n"
	"_cadre() {\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	"\tlocal cmd= i w opts ns=()\n"
	"\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	"\t\tw=${COMP_WORDS[i]}\n"
	"\t\tcase $w in\n"
	"\t\t--kubeconfig|--context|--namespace|-n) ns+=(\"$w\" \"${COMP_WORDS[i+1]}\"); ((i++)) ;;\n"
	"\t\t--kubeconfig=*|--context=*|--namespace=*) ns+=(\"$w\") ;;\n"
	"\t\t-*) ;;\n"
	"\t\t*) cmd=$w; break ;;\n"
	"\t\tesac\n"
	"\tdone\n"
	"\tcase $prev in\n"
	"\t--kubeconfig|-f|--filename) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
	"\tesac\n"
	"\tif [[ -z $cmd ]]; then\n"
	"\t\tif [[ $cur == -* ]]; then\n"
	"\t\t\tCOMPREPLY=($(compgen -W '--kubeconfig --context --namespace --help' -- \"$cur\"))\n"
	"\t\telse\n"
	"\t\t\tCOMPREPLY=($(compgen -W '";

static const char bash_tail[] =
	"\tesac\n"
	"\tif [[ $cur == -* ]]; then\n"
	"\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"${cur%%=*}\"))\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tcase \" " JOB_COMMANDS " \" in\n"
	"\t*\" $cmd \"*)\n"
	"\t\tCOMPREPLY=($(compgen -W \"$(\"${COMP_WORDS[0]}\" \"${ns[@]}\" squeue -h -t all "
	"-o '%i %j' 2>/dev/null)\" -- \"$cur\"))\n"
	"\t\treturn ;;\n"
	"\tesac\n"
	"\tcase $cmd in\n"
	"\tcompletion) COMPREPLY=($(compgen -W 'bash zsh' -- \"$cur\")) ;;\n"
	"\tvolumes) COMPREPLY=($(compgen -W 'apply' -- \"$cur\")) ;;\n"
	"\tsalloc) COMPREPLY=($(compgen -c -- \"$cur\")) ;;\n"
	"\t*) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	"\tesac\n"
	"}\n"
	"complete -F _cadre cadre kubectl-cadre\n";

static int bash_script(struct buf *out)
{
	int e = buf_adds(out, bash_head);

	e = e ? e : command_names(out);
	e = e ? e : buf_adds(out, "' -- \"$cur\"))\n\t\tfi\n\t\treturn\n\tfi\n\tcase $cmd in\n");
	e = e ? e : cases(out, false);
	return e ? e : buf_adds(out, bash_tail);
}

static const char zsh_head[] =
	"#compdef cadre kubectl-cadre\n"
	"# zsh completion for cadre. Load it with: source <(cadre completion zsh)\n"
	"# (after compinit), or save it as _cadre in a directory of $fpath.\n"
	"_cadre() {\n"
	"\tlocal cmd i opts\n"
	"\tlocal -a ns commands\n"
	"\tfor ((i = 2; i < CURRENT; i++)); do\n"
	"\t\tcase $words[i] in\n"
	"\t\t(--kubeconfig|--context|--namespace|-n) ns+=($words[i] $words[i+1]); ((i++)) ;;\n"
	"\t\t(--kubeconfig=*|--context=*|--namespace=*) ns+=($words[i]) ;;\n"
	"\t\t(-*) ;;\n"
	"\t\t(*) cmd=$words[i]; break ;;\n"
	"\t\tesac\n"
	"\tdone\n"
	"\tif [[ -z $cmd ]]; then\n"
	"\t\tif [[ $PREFIX == -* ]]; then\n"
	"\t\t\tcompadd -- --kubeconfig --context --namespace --help\n"
	"\t\telse\n"
	"\t\t\tcommands=(\n";

static const char zsh_tail[] =
	"\tesac\n"
	"\tif [[ $PREFIX == -* ]]; then\n"
	"\t\tcompadd -- ${=opts}\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tcase \" " JOB_COMMANDS " \" in\n"
	"\t(*\" $cmd \"*)\n"
	"\t\tcompadd -- ${=\"$($words[1] $ns squeue -h -t all -o '%i %j' 2>/dev/null)\"}\n"
	"\t\treturn ;;\n"
	"\tesac\n"
	"\tcase $cmd in\n"
	"\t(completion) compadd bash zsh ;;\n"
	"\t(volumes) compadd apply ;;\n"
	"\t(salloc) _command_names -e ;;\n"
	"\t(*) _files ;;\n"
	"\tesac\n"
	"}\n"
	"if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then\n"
	"\t_cadre \"$@\"\n"
	"else\n"
	"\tcompdef _cadre cadre kubectl-cadre\n"
	"fi\n";

static int zsh_script(struct buf *out)
{
	const char *name, *summary, *help;
	int e = buf_adds(out, zsh_head);

	for (size_t i = 0; !e && cli_command_at(i, &name, &summary, &help); i++) {
		e = buf_addf(out, "\t\t\t\t'%s:", name);
		e = e ? e : escaped(out, summary, true);
		e = e ? e : buf_adds(out, "'\n");
	}
	e = e ? e : buf_adds(out, "\t\t\t)\n\t\t\t_describe -t commands 'cadre command' commands\n"
			      "\t\tfi\n\t\treturn\n\tfi\n\tcase $cmd in\n");
	e = e ? e : cases(out, true);
	return e ? e : buf_adds(out, zsh_tail);
}

int cli_completion(char **args, int n, FILE *out, FILE *err)
{
	struct buf text;
	int e;

	if (n != 1 || (strcmp(args[0], "bash") && strcmp(args[0], "zsh"))) {
		fprintf(err, "cadre completion: %s (see cadre completion --help)\n",
			n == 1 ? "the shells are bash and zsh" : "give the shell: bash or zsh");
		return CLI_EXIT_USAGE;
	}
	buf_init(&text, (size_t)1 << 20);
	e = strcmp(args[0], "bash") ? zsh_script(&text) : bash_script(&text);
	if (!e)
		fputs(buf_str(&text), out);
	else
		fprintf(err, "cadre completion: %s\n", cadre_strerror(e));
	buf_release(&text);
	return e ? CLI_EXIT_FAILED : 0;
}
