/*
 * file.c - what the commands that read a file share: reading it, the job
 * name sbatch would give it, and the notes as "FILE:LINE: message".
 */
#include "cli/cli.h"

#include "base/buf.h"
#include "base/err.h"
#include "convert/convert.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cli_read_file(const char *path, struct buf *b)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	char chunk[8192];
	size_t n;
	int err = 0;

	if (!f)
		return CADRE_EIO;
	while (!err && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		err = buf_add(b, chunk, n);
	if (!err && ferror(f))
		err = CADRE_EIO;
	if (f != stdin)
		fclose(f);
	return err;
}

int cli_read_input(const char *cmd, const char *path, struct buf *b, FILE *err)
{
	int e;

	errno = 0;
	if (!(e = cli_read_file(path, b)))
		return CLI_EXIT_OK;
	if (e == CADRE_ENOMEM) {
		fprintf(err, "%s: out of memory\n", cmd);
		return CLI_EXIT_FAILED;
	}
	fprintf(err, "%s: %s: %s\n", cmd, path, e == CADRE_ETOOBIG ?
		"larger than 4 MiB: not a batch script or task file" :
		strerror(errno ? errno : EIO));
	return CLI_EXIT_USAGE;
}

char *cli_name_from_path(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	dot = strchr(base, '.');
	if (!strcmp(path, "-") || dot == base)
		return strdup("job");
	return dot ? strndup(base, (size_t)(dot - base)) : strdup(base);
}

int cli_converted(const char *cmd, const char *path, int e, struct convert_result *r,
		  FILE *err)
{
	convert_notes_sort(&r->notes);
	if (e == CADRE_EPARSE) {
		cli_print_note(err, path, &r->error);
		return CLI_EXIT_USAGE;
	}
	if (e) {
		fprintf(err, "%s: %s: %s\n", cmd, path, cadre_strerror(e));
		return CLI_EXIT_FAILED;
	}
	return CLI_EXIT_OK;
}

void cli_print_note(FILE *f, const char *file, const struct convert_note *n)
{
	if (n->line == CONVERT_LINE_ARGS)
		fputs("command line:", f);
	else
		fprintf(f, "%s:", file);
	if (n->line > 0)
		fprintf(f, "%d:", n->line);
	if (n->line > 0 && n->column)
		fprintf(f, "%d:", n->column);
	fprintf(f, " %s%s%s\n", n->option ? n->option : "", n->option ? ": " : "", n->message);
}
