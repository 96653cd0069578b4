/*
 * sbatch_opts.c - sbatch's options, read as getopt_long reads them for
 * sbatch ("--opt=v", "--opt v", unique prefixes of long names, "-N2",
 * "-N 2", clusters of flags), and what each becomes in a TrainingJob.
 *
 * Every option sbatch and pyxis know is in the table: those that map set a
 * field; the rest are reported with their line and why. An option sbatch
 * does not know is an error, as it is for sbatch.
 */
#include "convert/sbatch.h"

#include "api/hostlist.h"
#include "api/name.h"
#include "api/quantity.h"
#include "api/slurm.h"
#include "base/buf.h"
#include "base/err.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum arg_kind { ARG_NONE, ARG_REQUIRED, ARG_OPTIONAL };

struct option_def;
typedef int apply_fn(struct sbatch *s, const struct option_def *o, const char *value, int line);

struct option_def {
	const char *name;  /* long name, without "--" */
	char short_name;   /* 0 for none */
	enum arg_kind arg;
	apply_fn *apply;
	const char *why;   /* for options that are only reported */
};

#define OPT_NAME_MAX 64

static int note(struct sbatch *s, const struct option_def *o, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int note(struct sbatch *s, const struct option_def *o, int line, const char *fmt, ...)
{
	char option[OPT_NAME_MAX + 2], message[768];
	va_list ap;

	snprintf(option, sizeof(option), "--%s", o->name);
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	return convert_note(&s->r->notes, line, option, "%s", message);
}

static int fail(struct sbatch *s, const struct option_def *o, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct sbatch *s, const struct option_def *o, int line, const char *fmt, ...)
{
	char option[OPT_NAME_MAX + 2], message[768];
	va_list ap;

	snprintf(option, sizeof(option), "--%s", o->name);
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	return convert_fail(s->r, line, 0, option, "%s", message);
}

/* Decimal digits only, min..max. */
static bool parse_count(const char *text, size_t len, int min, int max, int *out)
{
	long v = 0;

	if (len == 0 || len > 9)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return false;
		v = v * 10 + (text[i] - '0');
	}
	if (v < min || v > max)
		return false;
	*out = (int)v;
	return true;
}

static int replace_string(char **field, const char *value)
{
	char *copy = strdup(value);

	if (!copy)
		return CADRE_ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

/* ---- what maps ---- */

static int opt_nodes(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	const char *dash = strchr(v, '-');
	int lo, hi;

	if (!parse_count(v, dash ? (size_t)(dash - v) : strlen(v), 1, 1 << 30, &lo) ||
	    (dash && (!parse_count(dash + 1, strlen(dash + 1), lo, 1 << 30, &hi))))
		return fail(s, o, line, "\"%s\" is not a node count (N or MIN-MAX, N >= 1)", v);
	if (lo > TJ_MAX_NUM_NODES)
		return fail(s, o, line, "%d nodes: a gang has at most %d", lo, TJ_MAX_NUM_NODES);
	s->nodes = lo;
	s->nodes_line = line;
	if (dash && hi != lo)
		return note(s, o, line, "a gang has one size: cadre runs exactly %d nodes, the "
			    "minimum of %s", lo, v);
	return 0;
}

static int opt_count(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	int n;

	if (!parse_count(v, strlen(v), 1, 1 << 20, &n))
		return fail(s, o, line, "\"%s\" is not a count >= 1", v);
	if (!strcmp(o->name, "ntasks")) {
		s->ntasks = n;
		s->ntasks_line = line;
	} else if (!strcmp(o->name, "ntasks-per-node")) {
		s->tasks_per_node = n;
		s->tasks_per_node_line = line;
	} else {
		s->cpus_per_task = n;
		s->cpus_per_task_line = line;
	}
	return 0;
}

static int opt_time(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	struct tj_spec *spec = &s->r->tj.spec;
	int64_t seconds;

	if (convert_slurm_time(v, &seconds))
		return fail(s, o, line, "\"%s\" is not a time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, "
			    "D-HH:MM:SS or UNLIMITED)", v);
	if (seconds > TJ_MAX_DEADLINE_SECONDS)
		return fail(s, o, line, "\"%s\" is over ten years, the longest time limit "
			    "(UNLIMITED is none)", v);
	spec->has_active_deadline_seconds = seconds >= 0;
	spec->active_deadline_seconds = seconds >= 0 ? seconds : 0;
	return 0;
}

static int opt_mem(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	struct tj_resources *res = &s->r->tj.spec.resources;
	char *quantity = NULL;
	int err = convert_slurm_memory(v, &quantity);

	if (err == CADRE_EPARSE)
		return fail(s, o, line, "\"%s\" is not a size (a number with K, M, G or T; "
			    "M when none)", v);
	if (err)
		return err;
	free(res->memory);
	res->memory = quantity;
	res->has_memory = quantity && quantity_parse(quantity, &res->memory_milli) == 0;
	if (!quantity)
		return note(s, o, line, "--mem=0 asks for all of a node's memory; Kubernetes needs "
			    "a number, so no memory request is written");
	return 0;
}

static int opt_job_name(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	s->job_name_line = line;
	return replace_string(&s->job_name, v);
}

/* -p NAME: the cluster's Partition of that name (api/partition.h), which cadre sbatch checks. */
static int opt_partition(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	const char *comma = strchr(v, ',');
	char first[256];
	int err;

	snprintf(first, sizeof(first), "%.*s", (int)(comma ? (size_t)(comma - v) : strlen(v)), v);
	if (!name_is_dns1123_subdomain(first))
		return fail(s, o, line, "\"%s\" cannot name a partition (lower case letters, "
			    "digits, '-' and '.')", first);
	if ((err = replace_string(&s->r->tj.spec.partition, first)))
		return err;
	if (comma)
		return note(s, o, line, "a job runs in one partition: cadre uses \"%s\" of \"%s\"",
			    first, v);
	return 0;
}

/* --array=0-99%8: spec.array, checked against the cluster's MaxArraySize. */
static int opt_array(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	int32_t max = s->in->max_array_size > 0 ? s->in->max_array_size :
		      SLURM_DEFAULT_MAX_ARRAY_SIZE;
	struct slurm_array a;
	char why[256];
	int err = slurm_array_parse(v, max, &a, why, sizeof(why));

	slurm_array_release(&a);
	if (err == CADRE_ENOMEM)
		return err;
	if (err)
		return fail(s, o, line, "%s", why);
	return replace_string(&s->r->tj.spec.array, v);
}

/* --dependency=afterok:123,singleton: spec.dependency. */
static int opt_dependency(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	struct tj_spec *spec = &s->r->tj.spec;
	struct slurm_dep d;
	char why[256];
	int err = slurm_dep_parse(v, &d, why, sizeof(why));

	if (err) {
		slurm_dep_release(&d);
		return err == CADRE_ENOMEM ? err : fail(s, o, line, "%s", why);
	}
	slurm_dep_release(&spec->dependency);
	spec->dependency = d;
	spec->has_dependency = true;
	return 0;
}

static int opt_kill_on_invalid_dep(struct sbatch *s, const struct option_def *o, const char *v,
				   int line)
{
	if (strcmp(v, "yes") && strcmp(v, "no"))
		return fail(s, o, line, "\"%s\" is neither yes nor no", v);
	if (!strcmp(v, "no"))
		return note(s, o, line, "cadre always fails a job whose dependency can never be met "
			    "(reason DependencyNeverSatisfied), as --kill-on-invalid-dep=yes does");
	return 0;
}

/* The signals spec.signal takes, by their Linux numbers (signal(7), x86 and arm). */
static const struct { int number; const char *name; } signals[] = {
	{ 1, "HUP" }, { 2, "INT" }, { 3, "QUIT" }, { 10, "USR1" }, { 12, "USR2" }, { 14, "ALRM" },
	{ 15, "TERM" }, { 18, "CONT" }, { 23, "URG" }, { 24, "XCPU" }, { 28, "WINCH" },
	{ 30, "PWR" },
};

/* --signal=[{R|B}:]SIG[@SECONDS]: spec.signal (the deadline and any stop, SECONDS before). */
static int opt_signal(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	struct tj_signal *sig = &s->r->tj.spec.signal;
	const char *p = v, *at = strchr(v, '@'), *name = NULL;
	char text[32];
	long seconds = TJ_DEFAULT_SIGNAL_SECONDS_BEFORE;
	int err;

	if ((p[0] == 'R' || p[0] == 'B') && p[1] == ':') {
		if ((err = note(s, o, line, p[0] == 'B' ?
				"B: (the batch shell only): cadre signals the program, which is the "
				"batch script, and the processes it started" :
				"R: (reservations) has no counterpart: cadre has no reservations")))
			return err;
		p += 2;
	}
	snprintf(text, sizeof(text), "%.*s", (int)(at ? (size_t)(at - p) : strlen(p)), p);
	if (!strncasecmp(text, "SIG", 3))
		memmove(text, text + 3, strlen(text + 3) + 1);
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]) && !name; i++) {
		char number[8];

		snprintf(number, sizeof(number), "%d", signals[i].number);
		if (!strcasecmp(text, signals[i].name) || !strcmp(text, number))
			name = signals[i].name;
	}
	if (!name)
		return fail(s, o, line, "\"%s\" is not a signal cadre can send (HUP, INT, QUIT, "
			    "USR1, USR2, ALRM, TERM, CONT, URG, XCPU, WINCH, PWR, or their numbers)",
			    text);
	if (at) {
		char *end;

		seconds = strtol(at + 1, &end, 10);
		if (!at[1] || *end || seconds < 0 || seconds > 3600)
			return fail(s, o, line, "\"%s\" is not a number of seconds from 0 to 3600",
				    at + 1);
	}
	if ((err = replace_string(&sig->name, name)))
		return err;
	sig->has_seconds_before = true;
	sig->seconds_before = seconds;
	return 0;
}

/*
 * --switches=COUNT[@MAX-TIME]: at most COUNT leaf switches. One is every rank
 * in one domain of the topology level (spec.topology.required); more is as
 * few domains as the cluster allows (preferred), since cadre packs rather
 * than counts. Slurm's MAX-TIME (wait that long, then take any nodes) has
 * no counterpart: required waits for a domain with room.
 */
static int opt_switches(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	const char *at = strchr(v, '@');
	size_t len = at ? (size_t)(at - v) : strlen(v);
	int count, err;

	if (!parse_count(v, len, 1, 100000, &count))
		return fail(s, o, line, "\"%s\" is not a count of switches (COUNT[@MAX-TIME], "
			    "COUNT from 1)", v);
	if (at) {
		int64_t secs;

		if (convert_slurm_time(at + 1, &secs))
			return fail(s, o, line, "\"%s\" after @ is not a Slurm time", at + 1);
		if ((err = note(s, o, line, "@%s: cadre does not give up on the topology after a "
				"wait: %s", at + 1, count == 1 ?
				"the gang waits until one domain has room" :
				"preferred never waits")))
			return err;
	}
	s->switches = count;
	s->switches_line = line;
	return 0;
}

/* --segment=N: groups of N consecutive ranks, each in one domain of the level. */
static int opt_segment(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	int n;

	if (!parse_count(v, strlen(v), 1, 100000, &n))
		return fail(s, o, line, "\"%s\" is not a number of nodes from 1", v);
	s->segment = n;
	s->segment_line = line;
	return 0;
}

/* --hold: created suspended, as sbatch -H submits a held job (scontrol release lets it go). */
static int opt_hold(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	(void)o;
	(void)v;
	(void)line;
	s->r->tj.spec.suspend = true;
	return 0;
}

/* --priority=N: spec.priority, the order of cadre's queue. --nice[=N]: priority -N (100). */
static int opt_priority(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	bool nice = !strcmp(o->name, "nice");
	char *end;
	long n;

	if (!nice && !strcasecmp(v, "TOP"))
		return note(s, o, line, "TOP (the highest priority an admin allows) has no "
			    "counterpart: give a number");
	n = nice && !*v ? 100 : strtol(v, &end, 10);
	if ((*v && *end) || n < (nice ? -2147483645 : 0) || n > 2147483645)
		return fail(s, o, line, "\"%s\" is not a whole number", v);
	s->r->tj.spec.priority = (int32_t)(nice ? -n : n);
	return 0;
}

/*
 * --chdir: the job's workdir. A relative one is relative to the submit
 * directory, as sbatch reads it, when the caller knows it (cadre sbatch,
 * which takes that directory along: docs/code.md); cadre convert does not.
 */
static int opt_chdir(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	char joined[8192];

	if (v[0] == '/')
		return replace_string(&s->r->tj.spec.workdir, v);
	if (!s->in->submit_dir || s->in->submit_dir[0] != '/')
		return fail(s, o, line, "\"%s\" is relative to the directory sbatch ran in, which a "
			    "pod does not have; give an absolute path (cadre sbatch takes that "
			    "directory along)", v);
	if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", s->in->submit_dir, v) >=
	    sizeof(joined))
		return fail(s, o, line, "\"%s\" is too long a path", v);
	return replace_string(&s->r->tj.spec.workdir, joined);
}

/* Set name=value in spec.envs, replacing an earlier value. */
static int set_env(struct tj_spec *spec, const char *name, size_t name_len, const char *value)
{
	struct tj_env *envs;
	char *n, *v;

	for (size_t i = 0; i < spec->n_envs; i++) {
		if (strlen(spec->envs[i].name) == name_len &&
		    !memcmp(spec->envs[i].name, name, name_len))
			return replace_string(&spec->envs[i].value, value);
	}
	envs = realloc(spec->envs, (spec->n_envs + 1) * sizeof(*envs));
	if (!envs)
		return CADRE_ENOMEM;
	spec->envs = envs;
	n = strndup(name, name_len);
	v = strdup(value);
	if (!n || !v) {
		free(n);
		free(v);
		return CADRE_ENOMEM;
	}
	spec->envs[spec->n_envs].name = n;
	spec->envs[spec->n_envs++].value = v;
	return 0;
}

/* One item of --export: ALL, NONE, NIL, NAME or NAME=value. */
static int export_item(struct sbatch *s, const struct option_def *o, const char *item,
		       size_t len, int line)
{
	const char *eq = memchr(item, '=', len);
	size_t name_len = eq ? (size_t)(eq - item) : len;
	char name[256], value[1024];

	snprintf(name, sizeof(name), "%.*s", (int)name_len, item);
	if (!eq && (!strcmp(name, "NONE") || !strcmp(name, "NIL")))
		return 0;
	if (!eq && !strcmp(name, "ALL"))
		return note(s, o, line, "ALL: the environment of the shell that ran sbatch does not "
			    "exist in a pod; the job sees the image's variables, cadre's and spec.envs");
	if (!name_is_c_identifier(name))
		return fail(s, o, line, "\"%s\" is not a variable name", name);
	if (tj_env_reserved(name))
		return note(s, o, line, "%s is set by cadre on every pod; the value given is not used",
			    name);
	if (!eq)
		return note(s, o, line, "%s takes its value from the shell that ran sbatch, which a pod "
			    "does not have; give it as %s=value", name, name);
	snprintf(value, sizeof(value), "%.*s", (int)(len - name_len - 1), eq + 1);
	return set_env(&s->r->tj.spec, name, name_len, value);
}

static int opt_export(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	const char *p = v;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		int err;

		if (len && (err = export_item(s, o, p, len, line)))
			return err;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static int opt_requeue(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	if (!strcmp(o->name, "requeue"))
		return note(s, o, line, "cadre always requeues a gang after node loss, eviction or "
			    "preemption (status.infraRestarts), as --requeue does; a script that fails "
			    "is retried only with spec.maxRestarts, which stays 0 as in Slurm");
	s->r->tj.spec.max_restarts = 0;
	return note(s, o, line, "spec.maxRestarts is 0, so a failing script is not retried; cadre "
		    "still requeues a gang after node loss, eviction or preemption, and that "
		    "cannot be turned off");
}

/* pyxis/enroot write "registry#path" for "registry/path". */
static int opt_container_image(struct sbatch *s, const struct option_def *o, const char *v,
			       int line)
{
	const char *image = v, *at, *hash;
	char ref[1024];
	int err;

	if (!strncmp(image, "docker://", 9))
		image += 9;
	if (image[0] == '/' || image[0] == '.' || strstr(image, ".sqsh"))
		return fail(s, o, line, "\"%s\" is a squashfs file on the cluster; a pod pulls images "
			    "from a registry: push it and name it here", v);
	at = strchr(image, '@');
	hash = strchr(image, '#');
	if (at && (!hash || at < hash) && strchr(image, ':') > at) {
		if ((err = note(s, o, line, "the user in \"%s\" is dropped: registry credentials go in "
				"spec.podTemplate.spec.imagePullSecrets", v)))
			return err;
		image = at + 1;
		hash = strchr(image, '#');
	}
	snprintf(ref, sizeof(ref), "%s", image);
	if (hash)
		ref[hash - image] = '/';
	if (!*ref)
		return fail(s, o, line, "an image is required");
	s->has_image = true;
	return replace_string(&s->r->tj.spec.image, ref);
}

static int add_volume(struct tj_spec *spec, const char *path, const char *volume)
{
	struct tj_volume_mount *mounts = realloc(spec->volumes,
						 (spec->n_volumes + 1) * sizeof(*mounts));
	char *p, *v;

	if (!mounts)
		return CADRE_ENOMEM;
	spec->volumes = mounts;
	p = strdup(path);
	v = strdup(volume);
	if (!p || !v) {
		free(p);
		free(v);
		return CADRE_ENOMEM;
	}
	spec->volumes[spec->n_volumes].mount_path = p;
	spec->volumes[spec->n_volumes++].volume = v;
	return 0;
}

/* One "SRC[:DST[:FLAGS]]" of --container-mounts. */
static int mount_item(struct sbatch *s, const struct option_def *o, const char *item, int line)
{
	char src[512], dst[512] = "", flags[128] = "";
	const char *c1 = strchr(item, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	int err;

	snprintf(src, sizeof(src), "%.*s", (int)(c1 ? (size_t)(c1 - item) : strlen(item)), item);
	if (c1)
		snprintf(dst, sizeof(dst), "%.*s",
			 (int)(c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1)), c1 + 1);
	if (c2)
		snprintf(flags, sizeof(flags), "%s", c2 + 1);
	if (!*dst)
		snprintf(dst, sizeof(dst), "%s", src);
	if (src[0] == '/' || src[0] == '.' || src[0] == '~')
		return note(s, o, line, "%s is a directory of the Slurm nodes, not mounted: create a "
			    "Volume for it and mount it with spec.volumes[\"%s\"]", src, dst);
	if (!name_is_dns1123_subdomain(src))
		return fail(s, o, line, "\"%s\" names neither a directory nor a Volume", src);
	if (!name_is_mount_path(dst))
		return fail(s, o, line, "\"%s\" is not an absolute mount path", dst);
	if (*flags && (err = note(s, o, line, "mount flags \"%s\" of %s are not applied", flags, src)))
		return err;
	/* One mount a path: the same one again is kept once; another Volume there is refused. */
	for (size_t i = 0; i < s->r->tj.spec.n_volumes; i++) {
		const struct tj_volume_mount *m = &s->r->tj.spec.volumes[i];

		if (strcmp(m->mount_path, dst))
			continue;
		if (!strcmp(m->volume, src))
			return 0;
		return fail(s, o, line, "%s is already where Volume %s is mounted", dst, m->volume);
	}
	return add_volume(&s->r->tj.spec, dst, src);
}

static int opt_container_mounts(struct sbatch *s, const struct option_def *o, const char *v,
				int line)
{
	char item[1024];

	for (const char *p = v;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		int err;

		snprintf(item, sizeof(item), "%.*s", (int)len, p);
		if (*item && (err = mount_item(s, o, item, line)))
			return err;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static int opt_container_workdir(struct sbatch *s, const struct option_def *o, const char *v,
				 int line)
{
	if (v[0] != '/')
		return fail(s, o, line, "\"%s\" is not an absolute path", v);
	return replace_string(&s->r->tj.spec.workdir, v);
}

/* "[type:]count" (count required) or, for --gres, "[type][:count]". */
static int parse_gpus(struct sbatch *s, const struct option_def *o, const char *v, int line,
		      bool count_optional, struct sbatch_gpus *out)
{
	const char *colon = strrchr(v, ':'), *count = colon ? colon + 1 : v;
	size_t type_len = colon ? (size_t)(colon - v) : 0;
	struct sbatch_gpus g = { .line = line, .option = o->name, .count = 1 };

	if (!parse_count(count, strlen(count), 1, 1 << 16, &g.count)) {
		if (!count_optional || colon)
			return fail(s, o, line, "\"%s\" is not [type:]count with count >= 1", v);
		type_len = strlen(v);
	}
	if (type_len >= sizeof(g.type) || memchr(v, ':', type_len))
		return fail(s, o, line, "\"%s\": one GPU type, of at most 63 characters", v);
	memcpy(g.type, v, type_len);
	g.type[type_len] = '\0';
	for (size_t i = 0; i < type_len; i++) {
		char c = v[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  (i > 0 && (c == '.' || c == '_' || c == '-'));

		if (!ok)
			return fail(s, o, line, "\"%s\" is not a GPU type", g.type);
	}
	*out = g;
	return 0;
}

static int opt_gres(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	char item[256];

	for (const char *p = v;;) {
		const char *comma = strchr(p, ',');
		int err;

		snprintf(item, sizeof(item), "%.*s", (int)(comma ? (size_t)(comma - p) : strlen(p)), p);
		if (!strcmp(item, "gpu"))
			err = parse_gpus(s, o, "1", line, true, &s->gpus_per_node);
		else if (!strncmp(item, "gpu:", 4))
			err = parse_gpus(s, o, item + 4, line, true, &s->gpus_per_node);
		else if (!strcmp(item, "none"))
			err = 0;
		else
			err = note(s, o, line, "the generic resource \"%s\" has no counterpart; only "
				   "gpu is honoured", item);
		if (err || !comma)
			return err;
		p = comma + 1;
	}
}

static int opt_gpus(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	struct sbatch_gpus *target = !strcmp(o->name, "gpus") ? &s->gpus_total :
				     !strcmp(o->name, "gpus-per-task") ? &s->gpus_per_task :
				     &s->gpus_per_node;

	return parse_gpus(s, o, v, line, false, target);
}

/* --output/--error: kept, and decided once the volumes are known (finish_output). */
static int opt_output(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	bool error = !strcmp(o->name, "error");
	int err;

	if (!*v)
		return fail(s, o, line, "a file name pattern is required");
	if ((err = replace_string(error ? &s->error : &s->output, v)))
		return err;
	*(error ? &s->error_line : &s->output_line) = line;
	return 0;
}

/* --mem-per-cpu, --mem-per-gpu: kept in MiB, multiplied out in sbatch_apply. */
static int opt_mem_per(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	char *quantity = NULL;
	int64_t milli;
	int err = convert_slurm_memory(v, &quantity);

	if (err == CADRE_EPARSE || (!err && !quantity))
		return fail(s, o, line, "\"%s\" is not a size (a number with K, M, G or T; M when "
			    "none)", v);
	if (err)
		return err;
	err = quantity_parse(quantity, &milli);
	free(quantity);
	if (err)
		return fail(s, o, line, "\"%s\" is not a size", v);
	s->mem_per_cpu_mib = s->mem_per_gpu_mib = 0;
	*(!strcmp(o->name, "mem-per-cpu") ? &s->mem_per_cpu_mib : &s->mem_per_gpu_mib) =
		milli / 1000 / (1024 * 1024);
	s->mem_per_line = line;
	s->mem_per_option = o->name;
	return 0;
}

/*
 * The names of an expanded hostlist that can be Nodes' names (DNS-1123
 * subdomains), each once: Slurm ignores a name listed twice. A name that
 * cannot be a node's fails the option, naming it (hl released).
 */
static int node_names_only(struct sbatch *s, const struct option_def *o, int line,
			   struct hostlist *hl)
{
	size_t kept = 0;

	for (size_t i = 0; i < hl->len; i++) {
		bool twice = false;

		if (!name_is_dns1123_subdomain(hl->names[i])) {
			char bad[80];

			snprintf(bad, sizeof(bad), "%.64s", hl->names[i]);
			hostlist_release(hl);
			return fail(s, o, line, "\"%s\" is not a node name (a Kubernetes Node's name: "
				    "lower-case letters, digits, '-' and '.')", bad);
		}
		for (size_t j = 0; j < kept && !twice; j++)
			twice = !strcmp(hl->names[j], hl->names[i]);
		if (twice)
			free(hl->names[i]);
		else
			hl->names[kept++] = hl->names[i];
	}
	hl->len = kept;
	return 0;
}

/*
 * -w/--nodelist, -x/--exclude: a Slurm hostlist ("gpu-node-[1-2],gpu-node-7") into
 * spec.nodeList or spec.excludeNodes. A file name (a value with '/') is not read.
 */
static int opt_nodes_named(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	bool exclude = !strcmp(o->name, "exclude");
	struct tj_nodes *n = &s->r->tj.spec.nodes;
	char ***names = exclude ? &n->exclude : &n->list;
	size_t *count = exclude ? &n->n_exclude : &n->n_list;
	struct hostlist hl;
	int err;

	if (strchr(v, '/'))
		return fail(s, o, line, "\"%s\" names a file of nodes, which cadre does not read: "
			    "list the nodes", v);
	err = hostlist_expand(v, TJ_MAX_NODE_NAMES, &hl);
	if (err == CADRE_ENOMEM) {
		hostlist_release(&hl);
		return err;
	}
	if (err) {
		hostlist_release(&hl);
		return fail(s, o, line, "\"%s\" is not a node list (a Slurm hostlist of at most "
			    "%d nodes, as \"gpu-node-[1-2],gpu-node-7\")", v, TJ_MAX_NODE_NAMES);
	}
	if ((err = node_names_only(s, o, line, &hl)))
		return err;
	for (size_t i = 0; i < *count; i++)
		free((*names)[i]);
	free(*names);
	*names = hl.names;
	*count = hl.len;
	hl.names = NULL;
	hl.len = hl.cap = 0;
	hostlist_release(&hl);
	return 0;
}

/* --exclusive: the nodes alone; =user, =mcs and =topo share them with others. */
static int opt_exclusive(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	if (v && *v)
		return note(s, o, line, "--exclusive=%s shares nodes with some other jobs, which "
			    "cadre does not tell apart: the job shares its nodes as its requests "
			    "allow", v);
	s->r->tj.spec.nodes.exclusive = true;
	return 0;
}

/* -C/--constraint: node features, each a Partition's spec.features entry. */
static int opt_constraint(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	struct tj_constraint c;
	char why[192];
	int err = tj_constraint_parse(v, &c, why, sizeof(why));

	tj_constraint_release(&c);
	if (err == CADRE_ENOMEM)
		return err;
	if (err)
		return fail(s, o, line, "%s", why);
	return replace_string(&s->r->tj.spec.nodes.constraint, v);
}

static int opt_report(struct sbatch *s, const struct option_def *o, const char *v, int line)
{
	return note(s, o, line, "%s", o->why ? o->why : "has no counterpart in a TrainingJob");
}

/* ---- the table: sbatch.1 and pyxis's README ---- */

#define ACCOUNTING "Slurm accounts, QOS and reservations have no counterpart: quotas come " \
		   "from the namespace and its Kueue queue (a Partition may name one)"
#define PLACEMENT "not converted: use spec.nodeList, excludeNodes or constraint, or " \
		  "spec.podTemplate.spec.affinity"
#define SCHEDULING "cadre admits a gang as soon as it fits and keeps no start time or " \
		   "deadline for a queued job: submit it with --hold and release it " \
		   "(cadre scontrol release) when it should start"
#define CPU_LAYOUT "CPU, socket and memory binding is the kubelet's (CPU manager), not cadre's"
#define CLIENT "changes only how sbatch itself runs; nothing to convert"
#define NOTIFY "no mail or notifications: watch with kubectl get tj -w or cadre squeue"
#define CONTAINER "pyxis container options other than image, mounts and workdir have no " \
		  "counterpart: the pod is the container"

static const struct option_def options[] = {
	{ "nodes", 'N', ARG_REQUIRED, opt_nodes, NULL },
	{ "ntasks", 'n', ARG_REQUIRED, opt_count, NULL },
	{ "ntasks-per-node", 0, ARG_REQUIRED, opt_count, NULL },
	{ "cpus-per-task", 'c', ARG_REQUIRED, opt_count, NULL },
	{ "mem", 0, ARG_REQUIRED, opt_mem, NULL },
	{ "time", 't', ARG_REQUIRED, opt_time, NULL },
	{ "job-name", 'J', ARG_REQUIRED, opt_job_name, NULL },
	{ "partition", 'p', ARG_REQUIRED, opt_partition, NULL },
	{ "chdir", 'D', ARG_REQUIRED, opt_chdir, NULL },
	{ "export", 0, ARG_REQUIRED, opt_export, NULL },
	{ "requeue", 0, ARG_NONE, opt_requeue, NULL },
	{ "no-requeue", 0, ARG_NONE, opt_requeue, NULL },
	{ "gres", 0, ARG_REQUIRED, opt_gres, NULL },
	{ "gpus-per-node", 0, ARG_REQUIRED, opt_gpus, NULL },
	{ "gpus", 'G', ARG_REQUIRED, opt_gpus, NULL },
	{ "gpus-per-task", 0, ARG_REQUIRED, opt_gpus, NULL },
	{ "output", 'o', ARG_REQUIRED, opt_output, NULL },
	{ "error", 'e', ARG_REQUIRED, opt_output, NULL },
	{ "container-image", 0, ARG_REQUIRED, opt_container_image, NULL },
	{ "container-mounts", 0, ARG_REQUIRED, opt_container_mounts, NULL },
	{ "container-workdir", 0, ARG_REQUIRED, opt_container_workdir, NULL },
	{ "input", 'i', ARG_REQUIRED, opt_report, "a pod's standard input is empty" },
	{ "mem-per-cpu", 0, ARG_REQUIRED, opt_mem_per, NULL },
	{ "mem-per-gpu", 0, ARG_REQUIRED, opt_mem_per, NULL },
	{ "ntasks-per-core", 0, ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "ntasks-per-socket", 0, ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "ntasks-per-gpu", 0, ARG_REQUIRED, opt_report, "not converted yet: use --ntasks-per-node" },
	{ "cpus-per-gpu", 0, ARG_REQUIRED, opt_report, "not converted yet: use --cpus-per-task" },
	{ "mincpus", 0, ARG_REQUIRED, opt_report, "not converted yet: use --cpus-per-task" },
	{ "account", 'A', ARG_REQUIRED, opt_report, ACCOUNTING },
	{ "qos", 'q', ARG_REQUIRED, opt_report, ACCOUNTING },
	{ "reservation", 0, ARG_REQUIRED, opt_report, ACCOUNTING },
	{ "wckey", 0, ARG_REQUIRED, opt_report, ACCOUNTING },
	{ "licenses", 'L', ARG_REQUIRED, opt_report, ACCOUNTING },
	{ "clusters", 'M', ARG_REQUIRED, opt_report, "the cluster is the kubeconfig's context" },
	{ "cluster-constraint", 0, ARG_REQUIRED, opt_report, "the cluster is the kubeconfig's context" },
	{ "array", 'a', ARG_REQUIRED, opt_array, NULL },
	{ "dependency", 'd', ARG_REQUIRED, opt_dependency, NULL },
	{ "kill-on-invalid-dep", 0, ARG_REQUIRED, opt_kill_on_invalid_dep, NULL },
	{ "begin", 'b', ARG_REQUIRED, opt_report, SCHEDULING },
	{ "deadline", 0, ARG_REQUIRED, opt_report, SCHEDULING },
	{ "time-min", 0, ARG_REQUIRED, opt_report, SCHEDULING },
	{ "hold", 'H', ARG_NONE, opt_hold, NULL },
	{ "priority", 0, ARG_REQUIRED, opt_priority, NULL },
	{ "nice", 0, ARG_OPTIONAL, opt_priority, NULL },
	{ "signal", 0, ARG_REQUIRED, opt_signal, NULL },
	{ "constraint", 'C', ARG_REQUIRED, opt_constraint, NULL },
	{ "prefer", 0, ARG_REQUIRED, opt_report, PLACEMENT },
	{ "nodelist", 'w', ARG_REQUIRED, opt_nodes_named, NULL },
	{ "exclude", 'x', ARG_REQUIRED, opt_nodes_named, NULL },
	{ "nodefile", 'F', ARG_REQUIRED, opt_report, PLACEMENT },
	{ "switches", 0, ARG_REQUIRED, opt_switches, NULL },
	{ "exclusive", 0, ARG_OPTIONAL, opt_exclusive, NULL },
	{ "oversubscribe", 's', ARG_NONE, opt_report, "pods share nodes as their requests allow" },
	{ "contiguous", 0, ARG_NONE, opt_report, PLACEMENT },
	{ "spread-job", 0, ARG_NONE, opt_report, PLACEMENT },
	{ "use-min-nodes", 0, ARG_NONE, opt_report, "a gang has one size" },
	{ "overcommit", 'O', ARG_NONE, opt_report, CPU_LAYOUT },
	{ "distribution", 'm', ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "hint", 0, ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "mem-bind", 0, ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "cpu-freq", 0, ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "cores-per-socket", 0, ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "sockets-per-node", 0, ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "threads-per-core", 0, ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "extra-node-info", 'B', ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "core-spec", 'S', ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "thread-spec", 0, ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "gpu-bind", 0, ARG_REQUIRED, opt_report, "GPU binding is the device plugin's" },
	{ "gpu-freq", 0, ARG_REQUIRED, opt_report, "GPU binding is the device plugin's" },
	{ "gpus-per-socket", 0, ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "gres-flags", 0, ARG_REQUIRED, opt_report, "GPU binding is the device plugin's" },
	{ "tres-bind", 0, ARG_REQUIRED, opt_report, CPU_LAYOUT },
	{ "tres-per-task", 0, ARG_REQUIRED, opt_report, "not converted yet: use --gpus-per-node" },
	{ "tmp", 0, ARG_REQUIRED, opt_report, "not converted yet: pods get the node's ephemeral storage" },
	{ "mail-type", 0, ARG_REQUIRED, opt_report, NOTIFY },
	{ "mail-user", 0, ARG_REQUIRED, opt_report, NOTIFY },
	{ "comment", 0, ARG_REQUIRED, opt_report, "put it in metadata.annotations" },
	{ "extra", 0, ARG_REQUIRED, opt_report, "put it in metadata.annotations" },
	{ "open-mode", 0, ARG_REQUIRED, opt_report, "output goes to the container log" },
	{ "export-file", 0, ARG_REQUIRED, opt_report, "give the variables with --export=NAME=value" },
	{ "get-user-env", 0, ARG_OPTIONAL, opt_report, "a pod has no login environment of the user" },
	{ "propagate", 0, ARG_OPTIONAL, opt_report, "resource limits come from the pod's requests" },
	{ "acctg-freq", 0, ARG_REQUIRED, opt_report, ACCOUNTING },
	{ "profile", 0, ARG_REQUIRED, opt_report, ACCOUNTING },
	{ "mcs-label", 0, ARG_REQUIRED, opt_report, ACCOUNTING },
	{ "network", 0, ARG_REQUIRED, opt_report, "pods use the cluster network" },
	{ "resv-ports", 0, ARG_OPTIONAL, opt_report, "pods use the cluster network" },
	{ "no-kill", 'k', ARG_OPTIONAL, opt_report, "a lost node restarts the whole gang" },
	{ "kill-on-bad-exit", 'K', ARG_OPTIONAL, opt_report, "a failed pod restarts the whole gang" },
	{ "reboot", 0, ARG_NONE, opt_report, "cadre does not reboot nodes" },
	{ "delay-boot", 0, ARG_REQUIRED, opt_report, "cadre does not reboot nodes" },
	{ "power", 0, ARG_REQUIRED, opt_report, "no power management" },
	{ "bb", 0, ARG_REQUIRED, opt_report, "no burst buffers: use a Volume" },
	{ "bbf", 0, ARG_REQUIRED, opt_report, "no burst buffers: use a Volume" },
	{ "uid", 0, ARG_REQUIRED, opt_report, "the pod runs as its image's user" },
	{ "gid", 0, ARG_REQUIRED, opt_report, "the pod runs as its image's user" },
	{ "wait-all-nodes", 0, ARG_REQUIRED, opt_report, "a gang always starts on all its nodes" },
	{ "segment", 0, ARG_REQUIRED, opt_segment, NULL },
	{ "batch", 0, ARG_REQUIRED, opt_report, PLACEMENT },
	{ "container", 0, ARG_REQUIRED, opt_report, CONTAINER },
	{ "container-id", 0, ARG_REQUIRED, opt_report, CONTAINER },
	{ "container-name", 0, ARG_REQUIRED, opt_report, CONTAINER },
	{ "container-save", 0, ARG_REQUIRED, opt_report, CONTAINER },
	{ "container-env", 0, ARG_REQUIRED, opt_report, "give the variables with --export=NAME=value" },
	{ "container-mount-home", 0, ARG_NONE, opt_report, "no home directory is mounted: use a Volume" },
	{ "no-container-mount-home", 0, ARG_NONE, opt_report, CONTAINER },
	{ "container-remap-root", 0, ARG_NONE, opt_report, "the pod runs as its image's user" },
	{ "no-container-remap-root", 0, ARG_NONE, opt_report, "the pod runs as its image's user" },
	{ "container-entrypoint", 0, ARG_NONE, opt_report, "cadre's entrypoint runs spec.run" },
	{ "no-container-entrypoint", 0, ARG_NONE, opt_report, "cadre's entrypoint runs spec.run" },
	{ "container-entrypoint-log", 0, ARG_NONE, opt_report, CONTAINER },
	{ "container-writable", 0, ARG_NONE, opt_report, CONTAINER },
	{ "container-readonly", 0, ARG_NONE, opt_report, CONTAINER },
	{ "parsable", 0, ARG_NONE, opt_report, CLIENT },
	{ "quiet", 'Q', ARG_NONE, opt_report, CLIENT },
	{ "verbose", 'v', ARG_NONE, opt_report, CLIENT },
	{ "wait", 'W', ARG_NONE, opt_report, CLIENT },
	{ "test-only", 0, ARG_NONE, opt_report, CLIENT },
	{ "ignore-pbs", 0, ARG_NONE, opt_report, CLIENT },
	{ "wrap", 0, ARG_REQUIRED, opt_report, "the script's body is the command" },
	{ "help", 'h', ARG_NONE, opt_report, CLIENT },
	{ "usage", 0, ARG_NONE, opt_report, CLIENT },
	{ "version", 'V', ARG_NONE, opt_report, CLIENT },
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

const char *convert_sbatch_option(size_t i)
{
	for (size_t k = 0, seen = 0; k < N_OPTIONS; k++)
		if (options[k].apply != opt_report && seen++ == i)
			return options[k].name;
	return NULL;
}

/* An exact long name, else its unique prefix (getopt_long's rule). */
static const struct option_def *find_long(const char *name, size_t len, bool *ambiguous)
{
	const struct option_def *found = NULL;

	*ambiguous = false;
	for (size_t i = 0; i < N_OPTIONS; i++) {
		if (strncmp(options[i].name, name, len))
			continue;
		if (strlen(options[i].name) == len)
			return &options[i];
		if (found)
			*ambiguous = true;
		found = &options[i];
	}
	return *ambiguous ? NULL : found;
}

static const struct option_def *find_short(char c)
{
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (options[i].short_name == c)
			return &options[i];
	return NULL;
}

/* One "--name[=value]" at args[*i]; may take args[*i + 1] as its value. */
static int apply_long(struct sbatch *s, size_t *i)
{
	const struct sbatch_arg *a = &s->args[*i];
	const char *name = a->text + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const char *value = eq ? eq + 1 : NULL;
	const struct option_def *o;
	bool ambiguous;

	o = len ? find_long(name, len, &ambiguous) : NULL;
	if (!o)
		return convert_fail(s->r, a->line, 0, NULL, "%s option '--%.*s' (sbatch refuses it "
				    "too)", len && ambiguous ? "ambiguous" : "unrecognized",
				    (int)(len > OPT_NAME_MAX ? OPT_NAME_MAX : len), name);
	if (o->arg == ARG_NONE && value)
		return fail(s, o, a->line, "takes no value");
	if (o->arg == ARG_REQUIRED && !value) {
		if (*i + 1 >= s->n_args)
			return fail(s, o, a->line, "requires a value");
		value = s->args[++*i].text;
	}
	return o->apply(s, o, value ? value : "", a->line);
}

/* A cluster of short options at args[*i]: "-N2", "-N 2", "-Hv". */
static int apply_short(struct sbatch *s, size_t *i)
{
	const struct sbatch_arg *a = &s->args[*i];
	int err;

	for (const char *p = a->text + 1; *p; p++) {
		const struct option_def *o = find_short(*p);
		const char *value = p[1] ? p + 1 : NULL;

		if (!o)
			return convert_fail(s->r, a->line, 0, NULL, "invalid option -- '%c' (sbatch "
					    "refuses it too)", *p);
		if (o->arg == ARG_NONE) {
			if ((err = o->apply(s, o, "", a->line)))
				return err;
			continue;
		}
		if (o->arg == ARG_REQUIRED && !value) {
			if (*i + 1 >= s->n_args)
				return fail(s, o, a->line, "requires a value");
			value = s->args[++*i].text;
		}
		return o->apply(s, o, value ? value : "", a->line);
	}
	return 0;
}

static int apply_args(struct sbatch *s)
{
	for (size_t i = 0; i < s->n_args; i++) {
		const char *t = s->args[i].text;
		int err;

		if (t[0] == '-' && t[1] == '-' && t[2])
			err = apply_long(s, &i);
		else if (t[0] == '-' && t[1] && t[1] != '-')
			err = apply_short(s, &i);
		else
			err = convert_fail(s->r, s->args[i].line, 0, NULL, "invalid #SBATCH directive "
					   "\"%.64s\": not an option (sbatch refuses it too)", t);
		if (err)
			return err;
	}
	return 0;
}

/* ---- what needs several options ---- */

static int finish_tasks(struct sbatch *s, int *tasks)
{
	int nodes = s->nodes ? s->nodes : 1;

	*tasks = 1;
	if (s->tasks_per_node)
		*tasks = s->tasks_per_node;
	else if (s->ntasks)
		*tasks = (s->ntasks + nodes - 1) / nodes;
	s->r->tj.spec.tasks_per_node = *tasks;
	s->r->tj.spec.has_tasks_per_node = *tasks > 1;
	/* Per node is what the pods' srun runs; a total is spread over the nodes. */
	if (*tasks > 1 && !s->tasks_per_node && s->ntasks != *tasks * nodes)
		return convert_note(&s->r->notes, s->ntasks_line, "--ntasks",
				    "%d tasks do not divide over %d nodes: written as "
				    "spec.tasksPerNode: %d, so srun runs %d tasks in all", s->ntasks,
				    nodes, *tasks, *tasks * nodes);
	if (*tasks > 1 && !s->tasks_per_node)
		return convert_note(&s->r->notes, s->ntasks_line, "--ntasks",
				    "written as spec.tasksPerNode: %d (%d tasks over %d nodes)",
				    *tasks, s->ntasks, nodes);
	return 0;
}

/* GPUs asked for in two ways: the per-node form wins, then --gpus; say so. */
static int note_unused_gpus(struct sbatch *s)
{
	const struct sbatch_gpus *given[] = { &s->gpus_per_node, &s->gpus_total, &s->gpus_per_task };
	const struct sbatch_gpus *used = NULL;
	char option[OPT_NAME_MAX + 2];

	for (size_t i = 0; i < 3; i++) {
		int err;

		if (!given[i]->line)
			continue;
		if (!used) {
			used = given[i];
			continue;
		}
		snprintf(option, sizeof(option), "--%s", given[i]->option);
		if ((err = convert_note(&s->r->notes, given[i]->line, option, "not used: the GPUs "
					"per node come from --%s", used->option)))
			return err;
	}
	return 0;
}

/* The per-node GPU request from whichever option gave one. */
#define ACCELERATORS_MAX 64

static int finish_gpus(struct sbatch *s, int tasks)
{
	struct tj_resources *res = &s->r->tj.spec.resources;
	int nodes = s->nodes ? s->nodes : 1;
	struct sbatch_gpus g = s->gpus_per_node;
	char text[96], option[OPT_NAME_MAX + 2];
	int err;

	if ((err = note_unused_gpus(s)))
		return err;
	if (!g.line && s->gpus_total.line) {
		g = s->gpus_total;
		if (g.count % nodes)
			return convert_fail(s->r, g.line, 0, "--gpus", "%d GPUs do not divide over %d "
					    "nodes: a gang has the same GPUs on every node", g.count, nodes);
		g.count /= nodes;
	} else if (!g.line && s->gpus_per_task.line) {
		g = s->gpus_per_task;
		if (tasks > 0 && g.count > INT_MAX / tasks)
			return convert_fail(s->r, g.line, 0, "--gpus-per-task", "%d GPUs for each of "
					    "%d tasks is more than any node has", g.count, tasks);
		g.count *= tasks;
	}
	if (!g.line)
		return 0;
	if (!*g.type) {
		snprintf(g.type, sizeof(g.type), "%s", CONVERT_ANY_GPU_TYPE);
		snprintf(option, sizeof(option), "--%s", g.option);
		if (convert_note(&s->r->notes, g.line, option,
				 "no GPU type: cadre writes " CONVERT_ANY_GPU_TYPE ":%d, which matches "
				 "every node whose GPU product label holds \"" CONVERT_ANY_GPU_TYPE "\"; "
				 "name a type (h100:%d) to pin one", g.count, g.count))
			return CADRE_ENOMEM;
	}
	snprintf(text, sizeof(text), "%s:%d", g.type, g.count);
	/* crd/: spec.resources.accelerators has at most 64 characters. */
	if (strlen(text) > ACCELERATORS_MAX) {
		snprintf(option, sizeof(option), "--%s", g.option);
		return convert_fail(s->r, g.line, 0, option, "\"%s\" is longer than the %d "
				    "characters spec.resources.accelerators holds", text,
				    ACCELERATORS_MAX);
	}
	if (replace_string(&res->accelerators, text))
		return CADRE_ENOMEM;
	res->has_accel = accel_parse(text, &res->accel) == 0;
	return 0;
}

static int finish_name_and_image(struct sbatch *s)
{
	struct trainingjob *tj = &s->r->tj;
	const char *given = s->job_name ? s->job_name : s->in->default_name;

	if (!(tj->meta.name = convert_job_name(given ? given : "job")))
		return CADRE_ENOMEM;
	if (given && strcmp(given, tj->meta.name) &&
	    convert_note(&s->r->notes, s->job_name ? s->job_name_line : 0,
			 s->job_name ? "--job-name" : NULL, "the job is named \"%s\": a TrainingJob's "
			 "name is a DNS label (lower case letters, digits and '-')", tj->meta.name))
		return CADRE_ENOMEM;
	if (s->has_image)
		return 0;
	return convert_default_image(s->in, s->r, "#SBATCH --container-image");
}

/* Whether path (absolute, or relative to workdir) lies on one of spec.volumes. */
static bool on_volume(const struct tj_spec *spec, const char *path)
{
	char full[4096];

	if (path[0] == '/')
		snprintf(full, sizeof(full), "%s", path);
	else if (spec->workdir && spec->workdir[0] == '/')
		snprintf(full, sizeof(full), "%s/%s", spec->workdir, path);
	else
		return false;
	for (size_t i = 0; i < spec->n_volumes; i++) {
		size_t n = strlen(spec->volumes[i].mount_path);

		if (!strncmp(full, spec->volumes[i].mount_path, n) && full[n] == '/')
			return true;
	}
	return false;
}

/*
 * --output and --error go where sbatch would write them when the path lies
 * on a Volume the job mounts (the entrypoint appends there, beside the
 * container log); anywhere else a pod's file system is gone with the pod,
 * so they are not set and a note says where the output is.
 */
static int finish_output(struct sbatch *s)
{
	struct tj_spec *spec = &s->r->tj.spec;
	const char *given[] = { s->output, s->error };
	const int lines[] = { s->output_line, s->error_line };
	char **field[] = { &spec->output, &spec->error };
	const char *names[] = { "--output", "--error" };
	int err;

	for (int i = 0; i < 2; i++) {
		const char *v = given[i];

		if (!v)
			continue;
		if (!on_volume(spec, v)) {
			if ((err = convert_note(&s->r->notes, lines[i], names[i], "\"%s\" is not on a "
						"Volume the job mounts, so it is not written: the "
						"output goes to the container log (cadre logs JOB)",
						v)))
				return err;
			continue;
		}
		if ((err = replace_string(field[i], v)))
			return err;
		if ((s->nodes > 1) && !strstr(v, "%N") && !strstr(v, "%t") && !strstr(v, "%n") &&
		    (err = convert_note(&s->r->notes, lines[i], names[i], "every node appends to "
					"\"%s\" (cadre runs the script on every node); %%N or %%t in "
					"the pattern gives each node a file", v)))
			return err;
	}
	return 0;
}

/* --mem-per-cpu and --mem-per-gpu times the node's CPUs or GPUs: the node's --mem. */
static int finish_mem_per(struct sbatch *s)
{
	struct tj_resources *res = &s->r->tj.spec.resources;
	int64_t per = s->mem_per_cpu_mib ? s->mem_per_cpu_mib : s->mem_per_gpu_mib;
	int64_t count = s->mem_per_cpu_mib ? (res->has_cpus ? (res->cpus_milli + 999) / 1000 : 0) :
			(res->has_accel ? res->accel.count : 0);
	char option[OPT_NAME_MAX + 2], quantity[48];

	if (!s->mem_per_option)
		return 0;
	snprintf(option, sizeof(option), "--%s", s->mem_per_option);
	if (res->memory)
		return convert_note(&s->r->notes, s->mem_per_line, option, "not used: --mem gives the "
				    "node's memory");
	if (count < 1)
		return convert_note(&s->r->notes, s->mem_per_line, option, "no %s per node to "
				    "multiply: give the node's total with --mem",
				    s->mem_per_cpu_mib ? "CPUs (--cpus-per-task)" : "GPUs");
	snprintf(quantity, sizeof(quantity), "%lldMi", (long long)(per * count));
	if (replace_string(&res->memory, quantity))
		return CADRE_ENOMEM;
	res->has_memory = quantity_parse(quantity, &res->memory_milli) == 0;
	return 0;
}

/* An array's elements are <name>-<index>, at most TJ_NAME_MAX long: shorten the name to fit. */
static int finish_array_name(struct sbatch *s)
{
	struct trainingjob *tj = &s->r->tj;
	struct slurm_array a;
	size_t room, len;
	char digits[16];

	if (!tj->spec.array || slurm_array_parse(tj->spec.array, SLURM_ARRAY_INDEX_LIMIT, &a,
						 NULL, 0)) {
		if (tj->spec.array)
			slurm_array_release(&a);
		return 0;
	}
	snprintf(digits, sizeof(digits), "%d", a.n ? a.index[a.n - 1] : 0);
	slurm_array_release(&a);
	room = TJ_NAME_MAX - 1 - strlen(digits);
	len = strlen(tj->meta.name);
	if (len <= room)
		return 0;
	while (room > 1 && tj->meta.name[room - 1] == '-')
		room--;
	tj->meta.name[room] = '\0';
	return convert_note(&s->r->notes, s->job_name ? s->job_name_line : 0,
			    s->job_name ? "--job-name" : NULL, "the job is named \"%s\": its array's "
			    "elements are named <name>-<index>, at most %d characters",
			    tj->meta.name, TJ_NAME_MAX);
}

/*
 * --signal's seconds before the end reach past --time: Slurm then sends the
 * signal at the start; a TrainingJob's secondsBefore must be less than its
 * activeDeadlineSeconds, so it is cut to one second less, and said.
 */
static int finish_signal(struct sbatch *s)
{
	struct tj_spec *spec = &s->r->tj.spec;
	long long asked = spec->signal.seconds_before;

	if (!spec->signal.name || !spec->has_active_deadline_seconds ||
	    asked < spec->active_deadline_seconds)
		return 0;
	spec->signal.seconds_before = spec->active_deadline_seconds - 1;
	return convert_note(&s->r->notes, 0, "--signal", "%llds before the end is not within "
			    "the time limit of %llds; the signal comes %llds before the end instead",
			    asked, (long long)spec->active_deadline_seconds,
			    (long long)spec->signal.seconds_before);
}

/* spec.topology from --switches and --segment, once --nodes is known. */
static int finish_topology(struct sbatch *s)
{
	struct tj_topology *t = &s->r->tj.spec.topology;
	const char *level = s->in->topology_level;
	int line = s->switches ? s->switches_line : s->segment_line;
	const char *option = s->switches ? "--switches" : "--segment";
	int nodes = s->r->tj.spec.num_nodes;
	int err;

	if (!s->switches && !s->segment)
		return 0;
	if (!level || !*level) {
		s->r->needs_topology_level = true;
		return convert_fail(s->r, line, 0, option, "which topology level is a switch: "
				    "pass --topology-level LABEL (cadre sbatch reads the "
				    "ClusterTopology's defaultLevel)");
	}
	if (s->segment && nodes % s->segment)
		return convert_fail(s->r, s->segment_line, 0, "--segment", "%d does not divide "
				    "the job's %d nodes into equal segments", s->segment, nodes);
	t->set = true;
	if (s->switches == 1 && (err = replace_string(&t->required, level)))
		return err;
	if (s->switches > 1) {
		if ((err = replace_string(&t->preferred, level)))
			return err;
		if ((err = convert_note(&s->r->notes, s->switches_line, "--switches",
					"cadre packs the ranks into as few %s domains as it can "
					"(spec.topology.preferred); it does not count them", level)))
			return err;
	}
	/* One segment of every node is one domain; segments inside one domain of the same
	 * level add nothing. */
	if (s->segment && s->segment == nodes && !t->required) {
		free(t->preferred);
		t->preferred = NULL;
		return replace_string(&t->required, level);
	}
	if (s->segment && s->switches != 1) {
		t->has_segment = true;
		t->segment_size = s->segment;
		if ((err = replace_string(&t->segment_required, level)))
			return err;
	}
	return 0;
}

int sbatch_apply(struct sbatch *s)
{
	struct tj_spec *spec = &s->r->tj.spec;
	int tasks, err;
	char cpus[32];

	if ((err = apply_args(s)) || (err = finish_tasks(s, &tasks)) ||
	    (err = finish_gpus(s, tasks)))
		return err;
	spec->num_nodes = s->nodes ? s->nodes : 1;
	spec->has_num_nodes = true;
	if (s->cpus_per_task) {
		snprintf(cpus, sizeof(cpus), "%lld", (long long)s->cpus_per_task * tasks);
		if ((err = replace_string(&spec->resources.cpus, cpus)))
			return err;
		spec->resources.has_cpus = quantity_parse(cpus, &spec->resources.cpus_milli) == 0;
	}
	/* The options' own notes before the file's (the image), then the name's fit. */
	if ((err = finish_mem_per(s)) || (err = finish_output(s)) || (err = finish_signal(s)) ||
	    (err = finish_name_and_image(s)) || (err = finish_array_name(s)) ||
	    (err = finish_topology(s)))
		return err;
	return 0;
}

int convert_sbatch_words(const char *word)
{
	const struct option_def *o;
	bool ambiguous;

	if (word[0] != '-' || !word[1])
		return 1;
	if (word[1] == '-') {
		const char *name = word + 2;

		if (!*name || strchr(name, '='))
			return 1;
		o = find_long(name, strlen(name), &ambiguous);
		return o && o->arg == ARG_REQUIRED ? 2 : 1;
	}
	for (const char *p = word + 1; *p; p++) {
		if (!(o = find_short(*p)))
			return 1;
		if (o->arg != ARG_NONE)
			return o->arg == ARG_REQUIRED && !p[1] ? 2 : 1;
	}
	return 1;
}
