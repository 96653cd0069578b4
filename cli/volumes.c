/*
 * volumes.c - `cadre volumes apply -f VOLUME.yaml`: a SkyPilot volume file
 * as a Volume, server-side applied with field manager "cadre-cli"; prints
 * "volume/<name> created", "configured" or "unchanged" as kubectl apply
 * does (unchanged: the server kept the same resourceVersion).
 */
#include "cli/kube.h"

#include "base/buf.h"
#include "base/err.h"
#include "convert/convert.h"

#include <stdlib.h>
#include <string.h>

#define CMD "cadre volumes apply"
#define FIELD_MANAGER "cadre-cli"

static int convert(const char *path, struct convert_result *r, FILE *err)
{
	struct buf text;
	int code, e;

	buf_init(&text, CONVERT_MAX_INPUT);
	if ((code = cli_read_input(CMD, path, &text, err)))
		goto out;
	e = convert_sky_volume(&(struct convert_input){ .text = buf_str(&text),
							.len = text.len }, r);
	code = cli_converted(CMD, path, e, r, err);
out:
	buf_release(&text);
	return code;
}

static const char *resource_version(const json_t *obj)
{
	const char *rv = json_string_value(json_object_get(json_object_get(obj, "metadata"),
							   "resourceVersion"));
	return rv ? rv : "";
}

/* Apply obj; what happened as kubectl names it. 0 or the exit code. */
static int apply(struct cli_kube *k, const char *name, const json_t *obj, const char **done,
		 FILE *err)
{
	struct kube_status st;
	json_t *before = NULL, *after = NULL;
	char what[160];
	int e, code = 0;

	kube_status_clear(&st);
	snprintf(what, sizeof(what), "apply volume \"%s\" in namespace \"%s\"", name, k->ns);
	e = kube_client_get(k->http, &kube_resource_volumes, k->ns, name, &before, &st);
	if (e && e != CADRE_ENOTFOUND) {
		code = cli_kube_error(k, what, &st, err);
		goto out;
	}
	if ((e = kube_client_apply(k->http, &kube_resource_volumes, k->ns, name, NULL, obj,
				   FIELD_MANAGER, false, &after, &st))) {
		code = cli_kube_error(k, what, &st, err);
		goto out;
	}
	*done = !before ? "created" :
		strcmp(resource_version(before), resource_version(after)) ? "configured" :
		"unchanged";
out:
	json_decref(before);
	json_decref(after);
	return code;
}

int cli_volumes(const struct cli_globals *g, const char *filename, char **args, int n,
		FILE *out, FILE *err)
{
	struct convert_result r;
	struct cli_kube k = { 0 };
	json_t *obj = NULL;
	const char *done = NULL;
	int code = CLI_EXIT_USAGE;

	convert_result_init(&r);
	if (n < 1 || strcmp(args[0], "apply")) {
		fprintf(err, "cadre volumes: %s (see cadre volumes --help)\n",
			n ? "the one subcommand is apply" : "a subcommand is required: apply");
		goto out;
	}
	if (n > 1 || !filename) {
		fprintf(err, "%s: %s (see cadre volumes --help)\n", CMD,
			n > 1 ? "the file is given with -f" : "-f VOLUME.yaml is required");
		goto out;
	}
	if ((code = convert(filename, &r, err)) || (code = cli_kube_open(g, CMD, &k, err)))
		goto out;
	code = CLI_EXIT_FAILED;
	if (convert_to_json(&r, &obj)) {
		fprintf(err, "%s: out of memory\n", CMD);
		goto out;
	}
	if ((code = apply(&k, r.vol.meta.name, obj, &done, err)))
		goto out;
	cli_notes_print(&(struct cli_notes){ &r, filename, NULL }, err);
	fprintf(out, "volume/%s %s\n", r.vol.meta.name, done);
out:
	json_decref(obj);
	cli_kube_close(&k);
	convert_result_release(&r);
	return code;
}
