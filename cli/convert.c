/*
 * convert.c - `cadre convert FILE [--image IMG]`: the file's TrainingJob or
 * Volume on stdout, what cannot be honoured on stderr as "FILE:LINE:
 * option: message", bad input as one such line and exit code 2.
 */
#include "cli/cli.h"

#include "base/buf.h"
#include "base/err.h"
#include "convert/convert.h"

#include <stdlib.h>
#include <string.h>

int cli_convert(const struct cli_globals *g, const struct cli_convert_opts *o, char **args, int n,
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
	if ((code = cli_read_input("cadre convert", args[0], &text, err)))
		goto out;
	code = CLI_EXIT_USAGE;
	if (!(name = cli_name_from_path(args[0]))) {
		code = CLI_EXIT_FAILED;
		goto out;
	}
	e = convert_any(&(struct convert_input){ .text = buf_str(&text), .len = text.len,
						 .default_name = name, .image = o->image,
						 .topology_level = o->topology_level }, &r);
	if (e == CADRE_EPARSE) {
		cli_print_note(err, args[0], &r.error);
		goto out;
	}
	/* What cadre launch would send: convert itself reads no cluster and stores nothing. */
	for (size_t i = 0; !e && i < r.n_uploads; i++)
		e = convert_note(&r.notes, r.uploads[i].line, r.uploads[i].field,
				 "%.200s is not in this job: cadre launch uploads it and unpacks it "
				 "at %.200s; with kubectl apply, `cadre push %.200s` prints the digest "
				 "for spec.code: [{digest, path: %.200s}] (docs/code.md)",
				 r.uploads[i].source, r.uploads[i].target, r.uploads[i].source,
				 r.uploads[i].target);
	if (!e) {
		convert_notes_sort(&r.notes);
		e = convert_emit_yaml(&r, &yaml);
	}
	if (e) {
		fprintf(err, "cadre convert: %s: %s\n", args[0], cadre_strerror(e));
		code = e == CADRE_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAILED;
		goto out;
	}
	fwrite(yaml.data, 1, yaml.len, out);
	for (size_t i = 0; i < r.notes.len; i++)
		cli_print_note(err, args[0], &r.notes.items[i]);
	code = CLI_EXIT_OK;
out:
	free(name);
	buf_release(&text);
	buf_release(&yaml);
	convert_result_release(&r);
	return code;
}
