/*
 * convert.c - `cadre convert FILE [--image IMG]`: the file's TrainingJob or
 * Volume on stdout, what cannot be honoured on stderr as "FILE:LINE:
 * option: message", bad input as one such line and exit code 2.
 */
#include "cli/cli.h"

#include "base/buf.h"
#include "base/err.h"
#include "convert/convert.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The whole of path ("-": stdin) into b, at most CONVERT_MAX_INPUT bytes. */
static int read_input(const char *path, struct buf *b)
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

/* "train" for "dir/train.sh": sbatch names a job after its script. */
static char *name_from_path(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	dot = strchr(base, '.');
	if (!strcmp(path, "-") || dot == base)
		return strdup("job");
	return dot ? strndup(base, (size_t)(dot - base)) : strdup(base);
}

static void print_note(FILE *f, const char *file, const struct convert_note *n)
{
	fprintf(f, "%s:", file);
	if (n->line)
		fprintf(f, "%d:", n->line);
	if (n->line && n->column)
		fprintf(f, "%d:", n->column);
	fprintf(f, " %s%s%s\n", n->option ? n->option : "", n->option ? ": " : "", n->message);
}

int cli_convert(const struct cli_globals *g, const char *image, char **args, int n,
		FILE *out, FILE *err)
{
	struct convert_result r;
	struct buf text, yaml;
	char *name = NULL;
	int code = CLI_EXIT_USAGE, e;

	(void)g;  /* convert reads no cluster */
	convert_result_init(&r);
	buf_init(&text, CONVERT_MAX_INPUT);
	buf_init(&yaml, (size_t)64 << 20);
	if (n != 1) {
		fprintf(err, "cadre convert: %s (see cadre convert --help)\n",
			n ? "one FILE at a time" : "FILE is required");
		goto out;
	}
	if ((e = read_input(args[0], &text))) {
		fprintf(err, "cadre convert: %s: %s\n", args[0], e == CADRE_ETOOBIG ?
			"larger than 4 MiB: not a batch script or task file" : strerror(errno));
		goto out;
	}
	if (!(name = name_from_path(args[0]))) {
		code = CLI_EXIT_FAILED;
		goto out;
	}
	e = convert_any(&(struct convert_input){ .text = buf_str(&text), .len = text.len,
						 .default_name = name, .image = image }, &r);
	if (e == CADRE_EPARSE) {
		print_note(err, args[0], &r.error);
		goto out;
	}
	if (!e)
		e = convert_emit_yaml(&r, &yaml);
	if (e) {
		fprintf(err, "cadre convert: %s: %s\n", args[0], cadre_strerror(e));
		code = e == CADRE_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAILED;
		goto out;
	}
	fwrite(yaml.data, 1, yaml.len, out);
	for (size_t i = 0; i < r.notes.len; i++)
		print_note(err, args[0], &r.notes.items[i]);
	code = CLI_EXIT_OK;
out:
	free(name);
	buf_release(&text);
	buf_release(&yaml);
	convert_result_release(&r);
	return code;
}
