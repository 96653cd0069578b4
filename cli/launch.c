/*
 * launch.c - `cadre launch TASK.yaml`: a SkyPilot task as a TrainingJob,
 * submitted as `cadre sbatch` submits a script; prints
 * "Submitted job <name> (jobId <id>)" once the controller has given it its
 * id.
 */
#include "cli/kube.h"
#include "cli/bundle.h"
#include "cli/code.h"

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

/*
 * workdir and the local sources of file_mounts, sent with the job
 * (docs/code.md), unless --no-upload says the image or a Volume has them
 * already. 0 or the exit code.
 */
int cli_launch_uploads(struct cli_kube *k, const struct cli_launch_opts *o, uint64_t max,
		       struct convert_result *r, FILE *err)
{
	struct cli_code_src *srcs;
	int code;

	if (!r->n_uploads || o->no_upload)
		return 0;
	if (!(srcs = calloc(r->n_uploads, sizeof(*srcs)))) {
		fprintf(err, "%s: out of memory\n", CMD);
		return CLI_EXIT_FAILED;
	}
	for (size_t i = 0; i < r->n_uploads; i++)
		srcs[i] = (struct cli_code_src){ r->uploads[i].source, r->uploads[i].target };
	code = cli_code_attach(k, srcs, r->n_uploads, max, &r->tj.spec, err);
	free(srcs);
	return code;
}

int cli_launch(const struct cli_globals *g, const struct cli_launch_opts *o, char **args,
	       int n, FILE *out, FILE *err)
{
	struct convert_result r;
	struct cli_kube k;
	bool opened = false;
	double timeout = CLI_SUBMIT_TIMEOUT_S;
	uint64_t max = BUNDLE_DEFAULT_MAX_BYTES;
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
	if (o->max_upload && cli_code_max(CMD, o->max_upload, &max, err))
		goto out;
	if ((code = cli_placement_check(&placement, CMD, err)) ||
	    (code = convert(args[0], o, &r, err)) || (code = cli_kube_open(g, CMD, &k, err)))
		goto out;
	opened = true;
	if ((code = cli_launch_uploads(&k, o, max, &r, err)) ||
	    (code = cli_submit_on(&k, &(struct cli_notes){ &r, args[0], &placement }, timeout,
				  id, sizeof(id), err)))
		goto out;
	fprintf(out, "Submitted job %s (jobId %s)\n", r.tj.meta.name, id);
out:
	if (opened)
		cli_kube_close(&k);
	convert_result_release(&r);
	return code;
}
