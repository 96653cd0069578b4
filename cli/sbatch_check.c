/*
 * sbatch_check.c - what cadre sbatch asks the cluster before it submits,
 * as slurmctld checks a submission (src/slurmctld/job_mgr.c), and --wait.
 *
 * A job goes in only when what it names exists: its Partition (else
 * Slurm's "invalid partition specified"), a time limit within the
 * partition's MaxTime, a namespace its allowedNamespaces lists and a
 * priority within its maxJobPriority (else Slurm's words, then the
 * field's), the nodes -w and -x name and a node with the features -C
 * asks (else "Invalid node name specified", "Invalid feature
 * specification"), the jobs of its dependency (else "Job dependency problem"). A dependency on a job by name is written with that job's id,
 * as Slurm keeps dependencies by id, so a later job of the same name never
 * stands in for it. The note about the image says which default applies.
 */
#include "cli/sbatch.h"

#include "api/fielderr.h"
#include "api/partition.h"
#include "api/slurm.h"
#include "base/buf.h"
#include "base/err.h"
#include "cli/jobs.h"
#include "convert/convert.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Every Partition the user may read into parts; *readable false when they cannot be read. */
static int load_partitions(struct cli_kube *k, struct partition **parts, size_t *n,
			   bool *readable, FILE *err)
{
	struct kube_status st;
	json_t *items = NULL, *obj;
	size_t i;
	int e;

	*parts = NULL;
	*n = 0;
	*readable = true;
	kube_status_clear(&st);
	e = kube_client_list(k->http, &kube_resource_partitions, NULL, NULL, &items, NULL, &st);
	if (e == CADRE_ENOTFOUND)
		return 0;  /* no Partition kind: no partition exists */
	if (e == CADRE_EFORBIDDEN) {
		*readable = false;  /* the controller checks, and says so in status */
		return 0;
	}
	if (e) {
		if (!st.code)
			st.code = e;
		return cli_kube_error(k, "list partitions", &st, err);
	}
	if (!(*parts = calloc(json_array_size(items) + 1, sizeof(**parts)))) {
		json_decref(items);
		fprintf(err, "%s: out of memory\n", k->cmd);
		return CLI_EXIT_FAILED;
	}
	json_array_foreach(items, i, obj) {
		struct field_errors errs;

		field_errors_init(&errs);
		if (partition_parse(obj, &(*parts)[*n], &errs) != CADRE_ENOMEM &&
		    (*parts)[*n].meta.name)
			(*n)++;
		else
			partition_release(&(*parts)[*n]);
		field_errors_release(&errs);
	}
	json_decref(items);
	return 0;
}

/* The note "no image: ..." (line 0) of r, or NULL. */
static struct convert_note *image_note(struct convert_result *r)
{
	for (size_t i = 0; i < r->notes.len; i++)
		if (r->notes.items[i].line == 0 && r->notes.items[i].message &&
		    !strncmp(r->notes.items[i].message, "no image:", 9))
			return &r->notes.items[i];
	return NULL;
}

/* The note, told what the cluster says: the partition's image, or the controller's. */
static int say_image(struct convert_result *r, const struct partition *p, const char *name)
{
	struct convert_note *n = image_note(r);
	const char *colon;
	struct buf msg;
	char *text;

	if (!n || !(colon = strstr(n->message, ", so ")))
		return 0;
	buf_init(&msg, 2048);
	buf_add(&msg, n->message, (size_t)(colon - n->message));
	if (p && p->spec.default_image)
		buf_addf(&msg, ", so partition %s's defaultImage %s runs the job", name,
			 p->spec.default_image);
	else if (p)
		buf_addf(&msg, ", so the controller's --default-image runs the job (partition %s "
			 "has no defaultImage); without one the job fails", name);
	else
		buf_adds(&msg, ", so the controller's --default-image runs the job (no partition "
			 "gives one); without one the job fails");
	if (!(text = buf_detach(&msg, NULL)))
		return CADRE_ENOMEM;
	free(n->message);
	n->message = text;
	return 0;
}

/* Whether node (a Node object) has every label of a feature's entry. */
static bool node_has(const json_t *node, const json_t *labels)
{
	const json_t *have = json_object_get(json_object_get(node, "metadata"), "labels");
	const char *key;
	json_t *value;

	json_object_foreach((json_t *)labels, key, value)
		if (!json_equal(json_object_get(have, key), value))
			return false;
	return true;
}

/* Whether some node has every feature of one of the constraint's terms. */
static bool some_node_fits(const json_t *nodes, const struct tj_constraint *c,
			   const json_t *features)
{
	const json_t *node;
	size_t i;

	json_array_foreach(nodes, i, node)
		for (size_t t = 0; t < c->n_terms; t++) {
			bool all = true;

			for (size_t f = t ? c->term_end[t - 1] : 0; f < c->term_end[t] && all; f++)
				all = node_has(node, json_object_get(features, c->feature[f]));
			if (all)
				return true;
		}
	return false;
}

/*
 * The cluster's Nodes (the user may not list them: then the controller
 * checks). *nodes NULL when they cannot be read; a CLI exit code.
 */
static int load_nodes(struct cli_kube *k, json_t **nodes, FILE *err)
{
	struct kube_status st;
	int e;

	*nodes = NULL;
	kube_status_clear(&st);
	e = kube_client_list(k->http, &kube_resource_nodes, NULL, NULL, nodes, NULL, &st);
	if (e == CADRE_EFORBIDDEN)
		return 0;
	if (e) {
		if (!st.code)
			st.code = e;
		return cli_kube_error(k, "list nodes", &st, err);
	}
	return 0;
}

/* Whether a Node of that name is in nodes. */
static bool node_named(const json_t *nodes, const char *name)
{
	const json_t *node;
	size_t i;

	json_array_foreach(nodes, i, node) {
		const char *n = json_string_value(json_object_get(json_object_get(node, "metadata"),
								  "name"));

		if (n && !strcmp(n, name))
			return true;
	}
	return false;
}

/*
 * -w and -x name nodes that exist (slurmctld: "Invalid node name
 * specified"), and some node has what -C asks of partition p's features
 * (else "Invalid feature specification"; not asked when p is NULL), as
 * slurmctld checks a submission.
 */
static int check_features(struct cli_kube *k, const struct partition *p,
			  const struct tj_spec *spec, FILE *err)
{
	const struct tj_nodes *n = &spec->nodes;
	struct tj_constraint c;
	json_t *nodes;
	char why[192];
	int code;

	if (!n->n_list && !n->n_exclude && !n->constraint)
		return 0;
	if ((code = load_nodes(k, &nodes, err)) || !nodes)
		return code;
	for (size_t i = 0; i < n->n_list + n->n_exclude && !code; i++) {
		const char *name = i < n->n_list ? n->list[i] : n->exclude[i - n->n_list];

		if (!node_named(nodes, name)) {
			fprintf(err, "sbatch: error: Batch job submission failed: Invalid node name "
				"specified (no node %s)\n", name);
			code = CLI_EXIT_FAILED;
		}
	}
	if (!code && p && n->constraint &&
	    !tj_constraint_parse(n->constraint, &c, why, sizeof(why))) {
		if (!some_node_fits(nodes, &c, p->spec.features)) {
			fprintf(err, "sbatch: error: Batch job submission failed: Invalid feature "
				"specification (no node has %s)\n", n->constraint);
			code = CLI_EXIT_FAILED;
		}
		tj_constraint_release(&c);
	}
	json_decref(nodes);
	return code;
}

static int check_partition(struct cli_kube *k, struct convert_result *r, FILE *err)
{
	struct tj_spec *spec = &r->tj.spec;
	struct partition *parts;
	const struct partition *found = NULL;
	const char *name = NULL;
	bool readable;
	size_t n;
	char why[512];
	int code;

	if ((code = load_partitions(k, &parts, &n, &readable, err)))
		return code;
	if (!readable) {
		code = check_features(k, NULL, spec, err);
		goto out;
	}
	partition_pick(parts, n, NULL, spec->partition, spec->queue, &name, &found);
	if (name && !found) {
		/* slurmctld's words (job_mgr.c), as sbatch prints them. */
		fprintf(err, "sbatch: error: invalid partition specified: %s\n", name);
		code = CLI_EXIT_FAILED;
		goto out;
	}
	if (found && partition_refuses(found, spec, why, sizeof(why))) {
		if (strstr(why, "spec.constraint"))
			fprintf(err, "sbatch: error: Batch job submission failed: Invalid feature "
				"specification (%s)\n", why);
		else
			fprintf(err, "sbatch: error: Batch job submission failed: %s\n",
				strstr(why, "time limit") ? "Requested time limit is invalid "
				"(missing or exceeds some limit)" : why);
		code = CLI_EXIT_FAILED;
		goto out;
	}
	if (!found && spec->nodes.constraint) {
		fprintf(err, "sbatch: error: Batch job submission failed: Invalid feature "
			"specification (no partition defines node features)\n");
		code = CLI_EXIT_FAILED;
		goto out;
	}
	if ((code = check_features(k, found, spec, err)))
		goto out;
	/* The job's namespace is the one it is created in. Slurm's words for a partition the
	 * account may not use (ESLURM_INVALID_ACCOUNT), then which field says so. */
	if (found && partition_forbids(found, k->ns, spec, why, sizeof(why))) {
		fprintf(err, "sbatch: error: Batch job submission failed: %s (%s)\n",
			strstr(why, "allowedNamespaces") ? "Invalid account or account/partition "
			"combination specified" : "Access/permission denied", why);
		code = CLI_EXIT_FAILED;
		goto out;
	}
	if (say_image(r, found, name))
		code = CLI_EXIT_FAILED;
out:
	for (size_t i = 0; i < n; i++)
		partition_release(&parts[i]);
	free(parts);
	return code;
}

/*
 * A job a dependency names: a job id, "ARRAY_INDEX" (an element, started or
 * not), or a name, whose id then replaces it. false when there is none.
 */
static bool resolve_job(const struct cli_jobs *jobs, char **ref)
{
	const struct trainingjob *tj = cli_jobs_find(jobs, *ref);
	const char *under = strchr(*ref, '_');
	char *id;

	if (!tj && under && slurm_job_id_text(*ref)) {
		struct slurm_array a;
		char parent[32];
		bool has = false;

		snprintf(parent, sizeof(parent), "%.*s", (int)(under - *ref), *ref);
		tj = cli_jobs_find(jobs, parent);
		if (tj && tj->spec.array &&
		    !slurm_array_parse(tj->spec.array, SLURM_ARRAY_INDEX_LIMIT, &a, NULL, 0))
			has = slurm_array_has(&a, (int32_t)strtol(under + 1, NULL, 10));
		if (tj && tj->spec.array)
			slurm_array_release(&a);
		return has;
	}
	if (!tj)
		return false;
	if (slurm_job_id_text(*ref) || !tj->status.job_id)
		return true;
	if (!(id = strdup(tj->status.job_id)))
		return false;
	free(*ref);
	*ref = id;
	return true;
}

static int check_dependency(struct cli_kube *k, struct convert_result *r, FILE *err)
{
	struct slurm_dep *d = &r->tj.spec.dependency;
	struct cli_jobs jobs;
	int code;

	if (!r->tj.spec.has_dependency)
		return 0;
	if ((code = cli_jobs_list(k, false, &jobs, err)))
		return code;
	for (size_t i = 0; i < d->n_items && !code; i++)
		for (size_t j = 0; j < d->items[i].n_jobs && !code; j++)
			if (!resolve_job(&jobs, &d->items[i].jobs[j])) {
				/* slurm_errno.c's ESLURM_DEPENDENCY, as sbatch prints it. */
				fprintf(err, "sbatch: error: Batch job submission failed: Job "
					"dependency problem (no job %s in namespace %s)\n",
					d->items[i].jobs[j], k->ns);
				code = CLI_EXIT_FAILED;
			}
	cli_jobs_release(&jobs);
	return code;
}

int cli_sbatch_check(struct cli_kube *k, struct convert_result *r, FILE *err)
{
	int code = check_partition(k, r, err);

	return code ? code : check_dependency(k, r, err);
}

/* ---- --wait ---- */

/* The highest exit code of an array's failed elements (1 when none says). */
static int array_exit_code(struct cli_kube *k, const char *name)
{
	struct kube_list_opts opts = { 0 };
	struct kube_status st;
	char selector[256];
	json_t *items = NULL, *obj;
	int worst = 0;
	size_t i;

	snprintf(selector, sizeof(selector), "%s=%s", LABEL_ARRAY_JOB, name);
	opts.label_selector = selector;
	kube_status_clear(&st);
	if (kube_client_list(k->http, &kube_resource_trainingjobs, k->ns, &opts, &items, NULL, &st))
		return 1;
	json_array_foreach(items, i, obj) {
		const json_t *status = json_object_get(obj, "status");
		const char *phase = json_string_value(json_object_get(status, "phase"));
		int code = (int)json_integer_value(json_object_get(json_object_get(status,
							"lastFailure"), "exitCode"));

		if (phase && !strcmp(phase, "Failed") && code > worst)
			worst = code;
	}
	json_decref(items);
	return worst ? worst : 1;
}

int cli_sbatch_wait(struct cli_kube *k, const char *name, FILE *err)
{
	for (;;) {
		struct kube_status st;
		json_t *obj = NULL;
		const json_t *status;
		const char *phase;
		int e, code;

		kube_status_clear(&st);
		e = kube_client_get(k->http, &kube_resource_trainingjobs, k->ns, name, &obj, &st);
		if (e == CADRE_ENOTFOUND) {
			fprintf(err, "sbatch: error: job %s was cancelled (deleted) while sbatch waited "
				"for it\n", name);
			return CLI_EXIT_FAILED;
		}
		if (e) {
			char what[320];

			snprintf(what, sizeof(what), "read trainingjob \"%s\"", name);
			if (!st.code)
				st.code = e;
			return cli_kube_error(k, what, &st, err);
		}
		status = json_object_get(obj, "status");
		phase = json_string_value(json_object_get(status, "phase"));
		if (phase && !strcmp(phase, "Succeeded")) {
			json_decref(obj);
			return 0;
		}
		if (phase && !strcmp(phase, "Failed")) {
			/* sbatch --wait exits with the job's exit code; a job array's highest. */
			code = json_object_get(json_object_get(obj, "spec"), "array") ?
			       array_exit_code(k, name) :
			       (int)json_integer_value(json_object_get(json_object_get(status,
								"lastFailure"), "exitCode"));
			json_decref(obj);
			return code > 0 && code < 256 ? code : 1;
		}
		json_decref(obj);
		nanosleep(&(struct timespec){ .tv_sec = CLI_SBATCH_WAIT_POLL_S }, NULL);
	}
}
