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
#include "cli/bundle.h"
#include "cli/code.h"
#include "cli/sbatch.h"
#include "cli/submit.h"

#include "base/buf.h"
#include "base/err.h"
#include "api/clustertopology.h"
#include "api/labels.h"
#include "convert/convert.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define CMD "cadre sbatch"

/* cadre's own flags among sbatch's: 1 taken, 0 not one of them, -1 bad usage. */
static int own_flag(struct cli_words *c, const char *cmd, char **args, int n, int *i,
		    FILE *err)
{
	static const char *const names[] = { "kubeconfig", "context", "namespace", "image",
					     "submit-timeout", "topology-level", "node-selector",
					     "toleration", "max-upload" };
	const char **values[] = { &c->g.kubeconfig, &c->g.context, &c->g.namespace, &c->image,
				  &c->timeout, &c->topology_level, &c->placement.node_selector,
				  &c->placement.tolerations, &c->max_upload };
	const char *a = args[*i];

	if (!strcmp(a, "--parsable") || !strcmp(a, "--help") || !strcmp(a, "-h")) {
		*(a[2] == 'p' ? &c->parsable : &c->help) = true;
		return 1;
	}
	/* sbatch -W/--wait: wait for the job's end and exit with its code. */
	if (!strcmp(a, "--wait") || !strcmp(a, "-W")) {
		c->wait = true;
		return 1;
	}
	/* The submit directory stays behind (docs/code.md). */
	if (!strcmp(a, "--no-upload")) {
		c->no_upload = true;
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
			break;
		}
		if (after_script(c, cmd, a, err))
			return -1;
	}
	if (mode == CLI_WORDS_COMMAND && (c->no_upload || c->max_upload)) {
		fprintf(err, "%s: --no-upload and --max-upload are cadre sbatch's: salloc's "
			"commands run in the image as it is\n", cmd);
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
						       .topology_level = c->topology_level,
						       .n_args = c->n_opts }, r);

	return cli_converted(cmd, file, e, r, err);
}

/*
 * The level #SBATCH --switches and --segment mean, when the command line
 * gave none: the cluster's ClusterTopology defaultLevel (docs/topology.md).
 * Opens k. 0 with *level set (owned) or left NULL when the cluster names
 * none, or the exit code.
 */
static int cluster_level(struct cli_words *c, struct cli_kube *k, bool *opened, char **level,
			 FILE *err)
{
	struct cluster_topology t;
	int code;

	if (!*opened) {
		if ((code = cli_kube_open(&c->g, CMD, k, err)))
			return code;
		*opened = true;
	}
	cli_cluster_topology(k, &t);
	if (t.default_level && !(*level = strdup(t.default_level))) {
		cluster_topology_release(&t);
		fprintf(err, "%s: out of memory\n", CMD);
		return CLI_EXIT_FAILED;
	}
	cluster_topology_release(&t);
	return 0;
}

/*
 * The script with the options on top. A script that asks for a topology
 * (--switches, --segment) without --topology-level is converted again with
 * the cluster's level, which opens k. 0 or the exit code.
 */
static int convert(struct cli_words *c, struct cli_kube *k, bool *opened, char **level,
		   struct convert_result *r, FILE *err)
{
	struct convert_input in = { .image = c->image, .args = c->opts, .n_args = c->n_opts,
				    .topology_level = c->topology_level };
	char cwd[PATH_MAX];

	/* A relative --chdir is under the submit directory, which goes along (docs/code.md). */
	if (!c->no_upload && getcwd(cwd, sizeof(cwd)))
		in.submit_dir = cwd;
	struct buf text;
	char *name = NULL;
	int code, e;

	buf_init(&text, CONVERT_MAX_INPUT);
	if ((code = cli_read_input(CMD, c->script, &text, err)))
		goto out;
	code = CLI_EXIT_FAILED;
	if (!(name = cli_name_from_path(c->script)))
		goto out;
	in.text = buf_str(&text);
	in.len = text.len;
	in.default_name = name;
	e = convert_slurm(&in, r);

	if (e == CADRE_EPARSE && r->needs_topology_level && !c->topology_level) {
		if ((code = cluster_level(c, k, opened, level, err)))
			goto out;
		if (*level) {
			convert_result_release(r);
			convert_result_init(r);
			in.topology_level = c->topology_level = *level;
			e = convert_slurm(&in, r);
		} else {
			struct convert_note *n = &r->error;

			convert_notes_sort(&r->notes);
			cli_print_note(err, c->script, &(struct convert_note){
				n->line, n->column, n->option,
				"the cluster's ClusterTopology names no defaultLevel (kubectl get "
				"ctopo default): pass --topology-level LABEL, the node label a "
				"switch is" });
			code = CLI_EXIT_USAGE;
			goto out;
		}
	}
	code = cli_converted(CMD, c->script, e, r, err);
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
	/* Labels the submission put on the job (singleton's cadre.dev/slurm-name). */
	if (notes->r->tj.meta.labels && json_object_size(notes->r->tj.meta.labels) &&
	    json_object_set(json_object_get(obj, "metadata"), "labels", notes->r->tj.meta.labels))
		goto out;
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

/*
 * Slurm lets many jobs share a name (and --dependency=singleton groups jobs
 * by it); a TrainingJob's name is unique in its namespace. So the job is
 * labelled with its Slurm name (cadre.dev/slurm-name, which squeue's NAME
 * and singleton read) and, when a TrainingJob of that name exists already,
 * named apart by five random characters, as salloc names its jobs; a note
 * says so. 0 or the exit code.
 */
static int name_apart(struct cli_kube *k, struct convert_result *r, FILE *err)
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	struct trainingjob *tj = &r->tj;
	struct kube_status st;
	unsigned char bytes[5];
	json_t *obj = NULL;
	char *name;
	size_t len;
	int e;

	kube_status_clear(&st);
	e = kube_client_get(k->http, &kube_resource_trainingjobs, k->ns, tj->meta.name, &obj, &st);
	json_decref(obj);
	if (e)
		return 0;  /* not there (or unreadable: the create says why) */
	if (!tj->meta.labels && !(tj->meta.labels = json_object()))
		return CLI_EXIT_FAILED;
	if (json_object_set_new(tj->meta.labels, LABEL_SLURM_NAME, json_string(tj->meta.name)))
		return CLI_EXIT_FAILED;
	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
		fprintf(err, "%s: no random bytes to name the job apart\n", CMD);
		return CLI_EXIT_FAILED;
	}
	len = strlen(tj->meta.name);
	if (len > TJ_NAME_MAX - 6)
		len = TJ_NAME_MAX - 6;
	if (!(name = malloc(len + 7)))
		return CLI_EXIT_FAILED;
	memcpy(name, tj->meta.name, len);
	name[len] = '-';
	for (size_t i = 0; i < sizeof(bytes); i++)
		name[len + 1 + i] = alphabet[bytes[i] % (sizeof(alphabet) - 1)];
	name[len + 6] = '\0';
	fprintf(err, "%s: job name %s is taken in namespace %s: the TrainingJob is %s (squeue and "
		"sacct show %s)\n", CMD, tj->meta.name, k->ns, name, tj->meta.name);
	free(tj->meta.name);
	tj->meta.name = name;
	return 0;
}

/* --dependency=singleton: the job carries its Slurm name, which singleton groups by. */
static int singleton_label(struct convert_result *r)
{
	struct trainingjob *tj = &r->tj;
	bool singleton = false;

	for (size_t i = 0; tj->spec.has_dependency && i < tj->spec.dependency.n_items; i++)
		singleton |= tj->spec.dependency.items[i].type == SLURM_DEP_SINGLETON;
	if (!singleton || (tj->meta.labels && json_object_get(tj->meta.labels, LABEL_SLURM_NAME)))
		return 0;
	if (!tj->meta.labels && !(tj->meta.labels = json_object()))
		return CLI_EXIT_FAILED;
	return json_object_set_new(tj->meta.labels, LABEL_SLURM_NAME, json_string(tj->meta.name)) ?
	       CLI_EXIT_FAILED : 0;
}

/*
 * The submit directory goes with the job (docs/code.md): the directory of
 * --chdir (#SBATCH or the command line; relative to the working directory,
 * as sbatch reads it), else the working directory, packed, stored and
 * unpacked in every pod at the same absolute path, where the script runs
 * (spec.workdir, SLURM_SUBMIT_DIR). Not with --no-upload, nor when that
 * directory lies on one of the job's Volumes, which every pod mounts
 * already: then the job only starts there. 0 or the exit code.
 */
static int submit_dir(const struct cli_words *c, uint64_t max, struct cli_kube *k,
		      struct convert_result *r, FILE *err)
{
	struct tj_spec *spec = &r->tj.spec;
	char cwd[PATH_MAX], joined[2 * PATH_MAX + 2], dir[PATH_MAX];
	const char *asked = spec->workdir;

	if (c->no_upload)
		return 0;
	if (!getcwd(cwd, sizeof(cwd))) {
		fprintf(err, "%s: cannot tell the submit directory: %s\n", CMD, strerror(errno));
		return CLI_EXIT_FAILED;
	}
	if (asked && asked[0] != '/')
		snprintf(joined, sizeof(joined), "%s/%s", cwd, asked);
	else
		snprintf(joined, sizeof(joined), "%s", asked ? asked : cwd);
	for (size_t i = 0; i < spec->n_volumes; i++) {
		const char *m = spec->volumes[i].mount_path;
		size_t len = strlen(m);

		if (!strncmp(joined, m, len) && (!joined[len] || joined[len] == '/')) {
			free(spec->workdir);
			return (spec->workdir = strdup(joined)) ? 0 : CLI_EXIT_FAILED;
		}
	}
	if (!realpath(joined, dir)) {
		fprintf(err, "%s: the submit directory %s: %s (--no-upload when the code is in "
			"the image)\n", CMD, joined, strerror(errno));
		return CLI_EXIT_FAILED;
	}
	if (!strcmp(dir, "/")) {
		fprintf(err, "%s: the submit directory is /: run cadre sbatch from the project's "
			"directory, or pass --no-upload when the code is in the image\n", CMD);
		return CLI_EXIT_USAGE;
	}
	free(spec->workdir);
	if (!(spec->workdir = strdup(dir)))
		return CLI_EXIT_FAILED;
	return cli_code_attach(k, &(struct cli_code_src){ dir, dir }, 1, max, spec, err);
}

int cli_sbatch(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	struct cli_words c = { .g = *g };
	struct convert_result r;
	struct cli_kube k;
	bool opened = false;
	char *level = NULL;
	double timeout = CLI_SUBMIT_TIMEOUT_S;
	uint64_t max = BUNDLE_DEFAULT_MAX_BYTES;
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
	if (c.max_upload && cli_code_max(CMD, c.max_upload, &max, err))
		goto out;
	if ((code = cli_placement_check(&c.placement, CMD, err)) ||
	    (code = convert(&c, &k, &opened, &level, &r, err)))
		goto out;
	if (!opened && (code = cli_kube_open(&c.g, CMD, &k, err)))
		goto out;
	opened = true;
	if ((code = cli_sbatch_check(&k, &r, err)) || (code = submit_dir(&c, max, &k, &r, err)) ||
	    (code = name_apart(&k, &r, err)) ||
	    (code = singleton_label(&r)) ||
	    (code = cli_submit_on(&k, &(struct cli_notes){ &r, c.script, &c.placement }, timeout,
				  id, sizeof(id), err)))
		goto out;
	fprintf(out, c.parsable ? "%s\n" : "Submitted batch job %s\n", id);
	fflush(out);
	if (c.wait)
		code = cli_sbatch_wait(&k, r.tj.meta.name, err);
out:
	if (opened)
		cli_kube_close(&k);
	cli_words_release(&c);
	convert_result_release(&r);
	free(level);
	return code;
}
