/*
 * launch.c - `cadre launch TASK.yaml`: a SkyPilot task as a TrainingJob,
 * submitted as `cadre sbatch` submits a script; prints
 * "Submitted job <name> (jobId <id>)" once the controller has given it its
 * id.
 */
#include "cli/kube.h"

#include "api/name.h"
#include "base/buf.h"
#include "base/err.h"
#include "convert/convert.h"

#include <stdlib.h>
#include <string.h>

#define CMD "cadre launch"

/* The task, named --name when given. 0 or the exit code. */
static int convert(const char *path, const struct cli_launch_opts *o, struct convert_result *r,
		   FILE *err)
{
	struct buf text;
	char *name = NULL;
	int code, e;

	buf_init(&text, CONVERT_MAX_INPUT);
	if ((code = cli_read_input(CMD, path, &text, err)))
		goto out;
	code = CLI_EXIT_FAILED;
	if (!(name = o->name ? strdup(o->name) : cli_name_from_path(path)))
		goto out;
	e = convert_sky_task(&(struct convert_input){ .text = buf_str(&text), .len = text.len,
						      .default_name = name, .image = o->image }, r);
	if ((code = cli_converted(CMD, path, e, r, err)))
		goto out;
	if (o->name) {
		free(r->tj.meta.name);
		if (!(r->tj.meta.name = strdup(o->name))) {
			code = CLI_EXIT_FAILED;
			goto out;
		}
	}
	code = CLI_EXIT_OK;
out:
	free(name);
	buf_release(&text);
	return code;
}

int cli_launch(const struct cli_globals *g, const struct cli_launch_opts *o, char **args,
	       int n, FILE *out, FILE *err)
{
	struct convert_result r;
	double timeout = CLI_SUBMIT_TIMEOUT_S;
	char id[64];
	const struct cli_placement placement = { o->node_selector, o->tolerations };
	int code = CLI_EXIT_USAGE;

	convert_result_init(&r);
	if (o->wait_timeout && !cli_parse_timeout(o->wait_timeout, &timeout)) {
		fprintf(err, "%s: --submit-timeout \"%s\": not a number of seconds\n", CMD,
			o->wait_timeout);
		goto out;
	}
	if (o->cluster) {
		code = cli_launch_cluster(g, o, args, n, timeout, out, err);
		goto out;
	}
	if (o->gpus) {
		fprintf(err, "%s: --gpus goes with -c NAME (a cluster); a task names its "
			"accelerators in resources\n", CMD);
		goto out;
	}
	if (n != 1) {
		fprintf(err, "%s: %s (see cadre launch --help)\n", CMD,
			n ? "one TASK.yaml at a time" : "TASK.yaml is required");
		goto out;
	}
	if (o->name && (strlen(o->name) > 52 || !name_is_dns1035_label(o->name))) {
		fprintf(err, "%s: --name \"%s\": a job's name is a DNS label of at most 52 "
			"characters (lower case letters, digits and '-', starting with a letter)\n",
			CMD, o->name);
		goto out;
	}
	if (o->wait_timeout && !cli_parse_timeout(o->wait_timeout, &timeout)) {
		fprintf(err, "%s: --submit-timeout \"%s\": not a number of seconds\n", CMD,
			o->wait_timeout);
		goto out;
	}
	if ((code = cli_placement_check(&placement, CMD, err)) ||
	    (code = convert(args[0], o, &r, err)) ||
	    (code = cli_submit(g, CMD, &(struct cli_notes){ &r, args[0], &placement }, timeout,
				   id, sizeof(id), err)))
		goto out;
	fprintf(out, "Submitted job %s (jobId %s)\n", r.tj.meta.name, id);
out:
	convert_result_release(&r);
	return code;
}
