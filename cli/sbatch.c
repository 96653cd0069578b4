/*
 * sbatch.c - `cadre sbatch [options] SCRIPT`: the script's TrainingJob with
 * the command line's sbatch options on top, created with the user's
 * credentials; prints "Submitted batch job <jobId>" once the controller has
 * given it its id, as sbatch does (src/sbatch/sbatch.c), or the id alone
 * with --parsable.
 *
 * The words after "sbatch" are read as sbatch reads its own: options up to
 * the script, then the script's arguments. cadre's flags are taken out of
 * them by their exact long names (also after the script); -n stays
 * sbatch's --ntasks, so the namespace is --namespace here (or -n before
 * "sbatch").
 */
#include "cli/kube.h"
#include "cli/submit.h"

#include "base/buf.h"
#include "base/err.h"
#include "api/labels.h"
#include "convert/convert.h"

#include <stdlib.h>
#include <string.h>

#define CMD "cadre sbatch"

/* cadre's own flags among sbatch's: 1 taken, 0 not one of them, -1 bad usage. */
static int own_flag(struct cli_words *c, const char *cmd, char **args, int n, int *i,
		    FILE *err)
{
	static const char *const names[] = { "kubeconfig", "context", "namespace", "image",
					     "submit-timeout", "node-selector", "toleration" };
	const char **values[] = { &c->g.kubeconfig, &c->g.context, &c->g.namespace, &c->image,
				  &c->timeout, &c->placement.node_selector,
				  &c->placement.tolerations };
	const char *a = args[*i];

	if (!strcmp(a, "--parsable") || !strcmp(a, "--help") || !strcmp(a, "-h")) {
		*(a[2] == 'p' ? &c->parsable : &c->help) = true;
		return 1;
	}
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		size_t len = strlen(names[k]);

		if (strncmp(a, "--", 2) || strncmp(a + 2, names[k], len) ||
		    (a[2 + len] && a[2 + len] != '='))
			continue;
		if (a[2 + len] == '=') {
			*values[k] = a + 3 + len;
		} else if (*i + 1 < n) {
			*values[k] = args[++*i];
		} else {
			fprintf(err, "%s: flag needs an argument: %s\n", cmd, a);
			return -1;
		}
		return 1;
	}
	return 0;
}

/* SCRIPT mode: the script, then only cadre's flags; -1 after one line for any other word. */
static int after_script(struct cli_words *c, const char *cmd, const char *a, FILE *err)
{
	if (!c->script) {
		c->script = a;
		return 0;
	}
	fprintf(err, "%s: \"%s\" after the script: a TrainingJob runs its script without "
		"arguments, and sbatch's options go before it\n", cmd, a);
	return -1;
}

/*
 * Options up to the script or command. After a script only cadre's own
 * flags (kubectl users put them last), since sbatch would pass any other
 * word to the script; after a command every word is the command's, as
 * salloc passes them on.
 */
int cli_words_parse(struct cli_words *c, const char *cmd, enum cli_words_mode mode,
		    char **args, int n, FILE *err)
{
	if (!(c->opts = calloc((size_t)n + 1, sizeof(*c->opts)))) {
		fprintf(err, "%s: out of memory\n", cmd);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const char *a = args[i];
		int taken = a[0] == '-' && a[1] ? own_flag(c, cmd, args, n, &i, err) : 0;

		if (taken < 0)
			return -1;
		if (taken)
			continue;
		if (mode == CLI_WORDS_SCRIPT && c->script)
			return after_script(c, cmd, a, err);
		if (!strcmp(a, "--") && i + 1 < n)
			a = args[++i];  /* getopt's end of options: the script or command follows */
		else if (a[0] == '-' && a[1]) {
			c->opts[c->n_opts++] = a;
			if (convert_sbatch_words(a) == 2 && i + 1 < n)
				c->opts[c->n_opts++] = args[++i];
			continue;
		}
		if (mode == CLI_WORDS_COMMAND) {
			c->command = &args[i];
			c->n_command = n - i;
			return 0;
		}
		if (after_script(c, cmd, a, err))
			return -1;
	}
	return 0;
}

void cli_words_release(struct cli_words *c)
{
	free(c->opts);
	c->opts = NULL;
	c->n_opts = 0;
}

int cli_words_convert(const struct cli_words *c, const char *cmd, const char *file,
		      const char *text, size_t len, const char *default_name,
		      struct convert_result *r, FILE *err)
{
	int e = convert_slurm(&(struct convert_input){ .text = text, .len = len,
						       .default_name = default_name,
						       .image = c->image, .args = c->opts,
						       .n_args = c->n_opts }, r);

	return cli_converted(cmd, file, e, r, err);
}

/* The script with the options on top. 0 or the exit code. */
static int convert(struct cli_words *c, struct convert_result *r, FILE *err)
{
	struct buf text;
	char *name = NULL;
	int code;

	buf_init(&text, CONVERT_MAX_INPUT);
	if ((code = cli_read_input(CMD, c->script, &text, err)))
		goto out;
	code = CLI_EXIT_FAILED;
	if (!(name = cli_name_from_path(c->script)))
		goto out;
	code = cli_words_convert(c, CMD, c->script, buf_str(&text), text.len, name, r, err);
out:
	free(name);
	buf_release(&text);
	return code;
}

int cli_submit_on(struct cli_kube *k, const struct cli_notes *notes, double timeout_s,
		  char *job_id, size_t size, FILE *err)
{
	json_t *obj = NULL;
	char *user = NULL;
	int code = CLI_EXIT_FAILED;

	if (convert_to_json(notes->r, &obj) || cli_placement_put(notes->placement, obj)) {
		fprintf(err, "%s: out of memory\n", k->cmd);
		goto out;
	}
	if ((user = cli_kube_whoami(k))) {
		json_t *meta = json_object_get(obj, "metadata");
		json_t *ann = json_object_get(meta, "annotations");

		if (!ann && json_object_set_new(meta, "annotations", ann = json_object()))
			goto out;
		if (json_object_set_new(ann, ANNOTATION_SUBMITTED_BY, json_string(user)))
			goto out;
	}
	code = cli_submit_job(k, obj, notes, timeout_s, job_id, size, err);
out:
	free(user);
	json_decref(obj);
	return code;
}

int cli_submit(const struct cli_globals *g, const char *cmd, const struct cli_notes *notes,
	       double timeout_s, char *job_id, size_t size, FILE *err)
{
	struct cli_kube k;
	int code;

	if ((code = cli_kube_open(g, cmd, &k, err)))
		return code;
	code = cli_submit_on(&k, notes, timeout_s, job_id, size, err);
	cli_kube_close(&k);
	return code;
}

int cli_sbatch(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	struct cli_words c = { .g = *g };
	struct convert_result r;
	double timeout = CLI_SUBMIT_TIMEOUT_S;
	char id[64];
	int code = CLI_EXIT_USAGE;

	convert_result_init(&r);
	if (cli_words_parse(&c, CMD, CLI_WORDS_SCRIPT, args, n, err))
		goto out;
	if (c.help) {
		cli_print_help(out, "sbatch");
		code = CLI_EXIT_OK;
		goto out;
	}
	if (!c.script) {
		fprintf(err, "%s: SCRIPT is required (see cadre sbatch --help)\n", CMD);
		goto out;
	}
	if (c.timeout && !cli_parse_timeout(c.timeout, &timeout)) {
		fprintf(err, "%s: --submit-timeout \"%s\": not a number of seconds\n", CMD,
			c.timeout);
		goto out;
	}
	if ((code = cli_placement_check(&c.placement, CMD, err)) || (code = convert(&c, &r, err)) ||
	    (code = cli_submit(&c.g, CMD, &(struct cli_notes){ &r, c.script, &c.placement },
				   timeout, id, sizeof(id), err)))
		goto out;
	fprintf(out, c.parsable ? "%s\n" : "Submitted batch job %s\n", id);
out:
	cli_words_release(&c);
	convert_result_release(&r);
	return code;
}
