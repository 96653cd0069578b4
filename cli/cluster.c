/*
 * cluster.c - SkyPilot's cluster verbs: `cadre launch -c NAME [--gpus T:N]
 * [TASK.yaml]` keeps a named cluster up (a TrainingJob whose run ends by
 * holding its pods, as a dev node; label cadre.dev/cluster), `cadre exec
 * NAME CMD|TASK.yaml` runs on it (cli/exec.c), `cadre down NAME` ends it and
 * `cadre status` lists the clusters as `sky status` does.
 */
#include "cli/jobs.h"
#include "cli/kube.h"
#include "cli/bundle.h"
#include "cli/code.h"
#include "cli/slurmfmt.h"

#include "api/accel.h"
#include "api/labels.h"
#include "api/name.h"
#include "base/buf.h"
#include "base/err.h"
#include "convert/convert.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LAUNCH "cadre launch"
#define DOWN "cadre down"

/* What a cluster's run ends with: the pods stay up until `cadre down`. */
#define CLUSTER_HOLD "# cadre launch -c: the cluster stays up until `cadre down`\n" \
		     "while :; do sleep 3600; done\n"

static int cluster_job(const char *path, const struct cli_launch_opts *o,
		       struct convert_result *r, FILE *err)
{
	struct buf text, run;
	int code, e;

	buf_init(&text, CONVERT_MAX_INPUT);
	buf_init(&run, CONVERT_MAX_INPUT + 4096);
	if (path && (code = cli_read_input(LAUNCH, path, &text, err)))
		goto out;
	if (!path && buf_adds(&text, "num_nodes: 1\nrun: \"true\"\n")) {
		code = CLI_EXIT_FAILED;
		goto out;
	}
	e = convert_sky_task(&(struct convert_input){ .text = buf_str(&text), .len = text.len,
						      .default_name = o->cluster, .image = o->image },
			     r);
	if ((code = cli_converted(LAUNCH, path ? path : "-c", e, r, err)))
		goto out;
	code = CLI_EXIT_FAILED;
	free(r->tj.meta.name);
	if (!(r->tj.meta.name = strdup(o->cluster)))
		goto out;
	if (o->gpus) {
		struct accel a;

		if (accel_parse(o->gpus, &a)) {
			fprintf(err, "%s: --gpus \"%s\": TYPE[:COUNT], as H100:1\n", LAUNCH, o->gpus);
			code = CLI_EXIT_USAGE;
			goto out;
		}
		free(r->tj.spec.resources.accelerators);
		if (!(r->tj.spec.resources.accelerators = strdup(o->gpus)))
			goto out;
		r->tj.spec.resources.accel = a;
		r->tj.spec.resources.has_accel = true;
	}
	if (r->tj.spec.run && *r->tj.spec.run && (buf_adds(&run, r->tj.spec.run) ||
						  (run.data[run.len - 1] != '\n' &&
						   buf_addc(&run, '\n'))))
		goto out;
	if (buf_adds(&run, CLUSTER_HOLD))
		goto out;
	free(r->tj.spec.run);
	if (!(r->tj.spec.run = buf_detach(&run, NULL)))
		goto out;
	if (!r->tj.meta.labels && !(r->tj.meta.labels = json_object()))
		goto out;
	if (json_object_set_new(r->tj.meta.labels, LABEL_CLUSTER, json_string(o->cluster)))
		goto out;
	code = 0;
out:
	buf_release(&text);
	buf_release(&run);
	return code;
}

/* The job's phase, read again every second until it is Running or has ended. */
static int wait_up(struct cli_kube *k, const char *name, FILE *err)
{
	for (;;) {
		struct kube_status st;
		json_t *obj = NULL;
		const char *phase;
		int e;

		kube_status_clear(&st);
		if ((e = kube_client_get(k->http, &kube_resource_trainingjobs, k->ns, name, &obj,
					 &st))) {
			if (!st.code)
				st.code = e;
			return cli_kube_error(k, "read the cluster's trainingjob", &st, err);
		}
		phase = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
		if (phase && !strcmp(phase, "Running")) {
			json_decref(obj);
			return 0;
		}
		if (phase && (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded"))) {
			fprintf(err, "%s: cluster %s ended (%s) before it was up: cadre status %s says "
				"why\n", LAUNCH, name, phase, name);
			json_decref(obj);
			return CLI_EXIT_FAILED;
		}
		json_decref(obj);
		nanosleep(&(struct timespec){ .tv_sec = 1 }, NULL);
	}
}

int cli_launch_cluster(const struct cli_globals *g, const struct cli_launch_opts *o,
		       char **args, int n, double timeout, FILE *out, FILE *err)
{
	const struct cli_placement placement = { o->node_selector, o->tolerations };
	struct convert_result r;
	struct cli_kube k;
	struct kube_status st;
	json_t *had = NULL;
	uint64_t max = BUNDLE_DEFAULT_MAX_BYTES;
	char id[64];
	int code;

	convert_result_init(&r);
	if (n > 1) {
		fprintf(err, "%s: one TASK.yaml at a time\n", LAUNCH);
		return CLI_EXIT_USAGE;
	}
	if (strlen(o->cluster) > 52 || !name_is_dns1035_label(o->cluster)) {
		fprintf(err, "%s: -c \"%s\": a cluster's name is a DNS label of at most 52 "
			"characters (lower case letters, digits and '-', starting with a letter)\n",
			LAUNCH, o->cluster);
		return CLI_EXIT_USAGE;
	}
	if (o->max_upload && cli_code_max(LAUNCH, o->max_upload, &max, err))
		return CLI_EXIT_USAGE;
	if ((code = cli_placement_check(&placement, LAUNCH, err)) ||
	    (code = cluster_job(n ? args[0] : NULL, o, &r, err)))
		goto out;
	if ((code = cli_kube_open(g, LAUNCH, &k, err)))
		goto out;
	kube_status_clear(&st);
	if (!kube_client_get(k.http, &kube_resource_trainingjobs, k.ns, o->cluster, &had, &st)) {
		/* sky launch -c on a cluster that is up runs the task there: that is cadre exec. */
		fprintf(err, "%s: cluster %s exists already in namespace %s: cadre exec %s "
			"TASK.yaml runs a task on it, cadre down %s ends it\n", LAUNCH, o->cluster,
			k.ns, o->cluster, o->cluster);
		json_decref(had);
		code = CLI_EXIT_FAILED;
	} else if (!(code = cli_launch_uploads(&k, o, max, &r, err)) &&
		   !(code = cli_submit_on(&k, &(struct cli_notes){ &r, n ? args[0] : NULL,
								    &placement },
					 timeout, id, sizeof(id), err))) {
		fprintf(out, "Launching cluster %s (jobId %s)...\n", o->cluster, id);
		fflush(out);
		if (!(code = wait_up(&k, o->cluster, err)))
			fprintf(out, "Cluster %s is UP: cadre exec %s CMD runs on it, cadre down %s "
				"ends it.\n", o->cluster, o->cluster, o->cluster);
	}
	cli_kube_close(&k);
out:
	convert_result_release(&r);
	return code;
}

int cli_down(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	const struct cli_opt opts[] = { { NULL, 0, NULL, NULL } };
	struct cli_globals gl = *g;
	struct cli_kube k = { 0 };
	bool all = false, help = false;
	char **pos = calloc((size_t)n + 1, sizeof(*pos));
	int n_pos = 0, code, worst = 0;

	if (!pos)
		return CLI_EXIT_FAILED;
	if ((code = cli_opts_parse(DOWN, opts, args, n, &gl, &all, &help, pos, &n_pos, err)))
		goto done;
	if (help) {
		cli_print_help(out, "down");
		goto done;
	}
	if (!n_pos) {
		fprintf(err, "%s: which cluster? (cadre down NAME...)\n", DOWN);
		code = CLI_EXIT_USAGE;
		goto done;
	}
	if ((code = cli_kube_open(&gl, DOWN, &k, err)))
		goto done;
	for (int i = 0; i < n_pos; i++) {
		struct kube_status st;
		json_t *obj = NULL;
		const char *label;
		int e;

		kube_status_clear(&st);
		e = kube_client_get(k.http, &kube_resource_trainingjobs, k.ns, pos[i], &obj, &st);
		label = json_string_value(json_object_get(json_object_get(json_object_get(obj,
								"metadata"), "labels"), LABEL_CLUSTER));
		if (e == CADRE_ENOTFOUND || (!e && !label)) {
			/* sky down's words for a cluster that does not exist. */
			fprintf(err, "%s: Cluster(s) not found: %s.%s\n", DOWN, pos[i],
				!e ? " (a job, not a cluster: cadre scancel ends it)" : "");
			worst = CLI_EXIT_FAILED;
		} else if (e) {
			if (!st.code)
				st.code = e;
			worst = cli_kube_error(&k, "read the cluster's trainingjob", &st, err);
		} else {
			fprintf(out, "Terminating cluster %s...", pos[i]);
			fflush(out);
			kube_status_clear(&st);
			e = kube_client_delete(k.http, &kube_resource_trainingjobs, k.ns, pos[i], NULL, NULL,
					       &st);
			if (e && e != CADRE_ENOTFOUND) {
				fprintf(out, "\n");
				if (!st.code)
					st.code = e;
				worst = cli_kube_error(&k, "delete the cluster's trainingjob", &st, err);
			} else {
				fprintf(out, "done.\n");
			}
		}
		json_decref(obj);
	}
	code = worst;
	cli_kube_close(&k);
done:
	free(pos);
	return code;
}

/* sky status's STATUS: UP once Running, INIT before, STOPPED once it ended. */
static const char *cluster_status(const struct trainingjob *tj)
{
	if (tj->status.phase == TJ_PHASE_RUNNING)
		return "UP";
	if (tj_phase_terminal(tj->status.phase))
		return "STOPPED";
	return "INIT";
}

int cli_clusters(struct cli_kube *k, bool all, FILE *out, FILE *err)
{
	static const char *const header[] = { "NAME", "INFRA", "RESOURCES", "STATUS", "AUTOSTOP",
					      "LAUNCHED" };
	enum { COLS = sizeof(header) / sizeof(header[0]) };
	struct cli_jobs jobs;
	struct buf *cells;
	size_t width[COLS] = { 0 }, rows = 1;
	int64_t now = (int64_t)time(NULL);
	int code, e = 0;

	if ((code = cli_jobs_list(k, all, &jobs, err)))
		return code;
	if (!(cells = calloc((jobs.len + 1) * COLS, sizeof(*cells)))) {
		cli_jobs_release(&jobs);
		return CLI_EXIT_FAILED;
	}
	for (size_t i = 0; i < (jobs.len + 1) * COLS; i++)
		buf_init(&cells[i], (size_t)1 << 16);
	for (size_t c = 0; c < COLS && !e; c++)
		e = buf_adds(&cells[c], header[c]);
	for (size_t i = 0; i < jobs.len && !e; i++) {
		const struct trainingjob *tj = &jobs.items[i];
		struct buf *row = &cells[rows * COLS];
		char ago[32];

		if (!meta_label(&tj->meta, LABEL_CLUSTER))
			continue;
		sky_ago(tj->meta.creation_timestamp, now, ago);
		e = buf_adds(&row[0], tj->meta.name);
		e = e ? e : buf_addf(&row[1], "Kubernetes (%s)", tj->meta.namespace);
		e = e ? e : sky_resources(tj, &row[2]);
		e = e ? e : buf_adds(&row[3], cluster_status(tj));
		e = e ? e : buf_adds(&row[4], "-");
		e = e ? e : buf_adds(&row[5], ago);
		rows++;
	}
	fprintf(out, "Clusters\n");
	if (rows == 1 && !e)
		fprintf(out, "No existing clusters.\n");
	for (size_t i = 0; i < rows * COLS; i++)
		if (cells[i].len > width[i % COLS])
			width[i % COLS] = cells[i].len;
	for (size_t r = 0; rows > 1 && r < rows && !e; r++)
		for (size_t c = 0; c < COLS; c++)
			fprintf(out, c + 1 < COLS ? "%-*s  " : "%-*s\n", (int)width[c],
				buf_str(&cells[r * COLS + c]));
	for (size_t i = 0; i < (jobs.len + 1) * COLS; i++)
		buf_release(&cells[i]);
	free(cells);
	cli_jobs_release(&jobs);
	return e ? CLI_EXIT_FAILED : 0;
}
