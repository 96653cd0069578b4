/*
 * trainingjob_validate.c - the rules a parsed TrainingJob must meet before
 * cadre acts on it. The CRD schema enforces most of them at the API server;
 * these are the second line of defence (an object written before a schema
 * change, a schema that was not installed) and the source of the
 * Failed/InvalidSpec message, so every problem is reported with its path.
 */
#include "api/trainingjob.h"

#include "api/decode.h"
#include "api/fielderr.h"
#include "api/name.h"
#include "api/quantity.h"
#include "base/err.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/*
 * docs/design.md 2.3, in the order of its table, then the Slurm set of docs/design.md
 * 2.4, then the inputs of the generated entrypoint (docs/design.md 2.2), which
 * cadre sets on every pod too: a user's CADRE_RUN would replace the job's
 * own run.
 */
const char *const tj_reserved_envs[] = {
	"SKYPILOT_NUM_NODES", "NNODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES",
	"SKYPILOT_NODE_RANK", "NODE_RANK", "SLURM_NODEID", "SLURM_PROCID",
	"SKYPILOT_NUM_GPUS_PER_NODE", "SLURM_GPUS_PER_NODE",
	"SKYPILOT_NODE_IPS",
	"SLURM_JOB_NODELIST",
	"SKYPILOT_TASK_ID", "CADRE_TASK_ID",
	"SLURM_JOB_ID", "CADRE_JOB_ID",
	"SLURM_JOB_NAME", "CADRE_JOB_NAME",
	"MASTER_ADDR", "MASTER_PORT",
	"CADRE_RESTART_ATTEMPT",
	"SLURM_NODELIST", "SLURM_JOBID", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NTASKS_PER_NODE",
	"SLURM_TASKS_PER_NODE", "SLURM_CPUS_PER_TASK", "SLURM_CPUS_ON_NODE", "SLURM_GPUS_ON_NODE",
	"SLURM_LOCALID", "SLURM_SUBMIT_DIR", "SLURM_JOB_PARTITION", "SLURM_RESTART_COUNT",
	"SLURM_CLUSTER_NAME",
	"CADRE_PEERS", "CADRE_PEER_DOMAIN", "CADRE_GANG_TIMEOUT_SECONDS", "CADRE_WORKDIR",
	"CADRE_SETUP", "CADRE_RUN",
	"CADRE_TERMINATION_LOG", "CADRE_BIN_DIR", "CADRE_ATTEMPT_FILE",
	"CADRE_HEARTBEAT_FILE", "CADRE_HANG_STARTUP_SECONDS", "CADRE_HANG_PROGRESS_SECONDS",
	"CADRE_NCCL_DUMP_DIR", "CADRE_SIGNAL", "CADRE_SIGNAL_SECONDS_BEFORE", "CADRE_DEADLINE",
	"SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
	"SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP",
	"CADRE_OUTPUT", "CADRE_ERROR",
	"CADRE_STAGE_IN",
	"CADRE_CODE",
	NULL,
};

bool tj_env_reserved(const char *name)
{
	for (size_t i = 0; name && tj_reserved_envs[i]; i++)
		if (!strcmp(name, tj_reserved_envs[i]))
			return true;
	return false;
}

static bool ends_with_nocase(const char *s, const char *suffix)
{
	size_t len = strlen(s), suffix_len = strlen(suffix);

	return len >= suffix_len && !strcasecmp(s + len - suffix_len, suffix);
}

static bool contains_nocase(const char *s, const char *needle)
{
	return strcasestr(s, needle) != NULL;
}

bool tj_env_looks_secret(const char *name)
{
	return name && (ends_with_nocase(name, "_TOKEN") || ends_with_nocase(name, "_KEY") ||
			contains_nocase(name, "PASSWORD") || contains_nocase(name, "SECRET"));
}

/* Label and annotation prefixes that cadre and Kueue set on pods themselves. */
static const char *reserved_key_owner(const char *key)
{
	if (!strncmp(key, CADRE_KEY_PREFIX, strlen(CADRE_KEY_PREFIX)))
		return "reserved for cadre";
	if (!strncmp(key, "kueue.x-k8s.io/", 15))
		return "set by cadre from spec.queue";
	return NULL;
}

static int decimal_digits(int64_t n)
{
	int digits = 1;

	while (n >= 10) {
		n /= 10;
		digits++;
	}
	return digits;
}

/*
 * The job's name is its Service's name (a DNS-1035 label) and, with
 * "-<rank>" appended, every pod's hostname (at most 63 bytes).
 */
static void validate_name(struct decoder *d, const struct trainingjob *tj)
{
	const char *name = tj->meta.name;
	int64_t last_rank = tj->spec.num_nodes > 1 ? tj->spec.num_nodes - 1 : 0;
	size_t room = 63 - 1 - (size_t)decimal_digits(last_rank);

	if (!name) {
		decode_fail(d, "metadata.name", "required");
		return;
	}
	if (!name_is_dns1035_label(name)) {
		decode_fail(d, "metadata.name",
			    "must be a DNS-1035 label (lower-case letters, digits and '-', "
			    "starting with a letter, at most 63 characters): it names the "
			    "job's Service");
		return;
	}
	if (strlen(name) > room)
		decode_fail(d, "metadata.name",
			    "must be at most %zu characters so that pod host names "
			    "\"<name>-<rank>\" fit in 63", room);
}

static void validate_quantity(struct decoder *d, const char *path, const char *raw,
			      const char *example)
{
	int64_t milli;
	int err;

	if (!raw)
		return;
	err = quantity_parse(raw, &milli);
	if (err == CADRE_ETOOBIG)
		decode_fail(d, path, "\"%.64s\" is too large", raw);
	else if (err)
		decode_fail(d, path, "\"%.64s\" is not a quantity like %s", raw, example);
	else if (milli <= 0)
		decode_fail(d, path, "must be > 0");
}

static void validate_resources(struct decoder *d, const struct tj_resources *r)
{
	const char *resource = r->accelerator_resource;
	struct accel accel;
	int err;

	if (r->accelerators) {
		err = accel_parse(r->accelerators, &accel);
		if (err == CADRE_ETOOBIG)
			decode_fail(d, "spec.resources.accelerators",
				    "\"%.64s\" is too long: the type may have 63 characters "
				    "and the count may not exceed 2147483647", r->accelerators);
		else if (err)
			decode_fail(d, "spec.resources.accelerators",
				    "\"%.64s\" must look like <type>[:<count>] with count >= 1",
				    r->accelerators);
	}
	validate_quantity(d, "spec.resources.cpus", r->cpus, "\"32\" or \"500m\"");
	validate_quantity(d, "spec.resources.memory", r->memory, "\"256Gi\"");
	/* Extended resources are always domain-prefixed (nvidia.com/gpu). */
	if (!resource || !name_is_qualified(resource) || !strchr(resource, '/'))
		decode_fail(d, "spec.resources.acceleratorResource",
			    "must be an extended resource name like nvidia.com/gpu");
}

static bool blank(const char *s)
{
	if (!s)
		return true;
	for (; *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return false;
	return true;
}

/* An env name: a C identifier, not one cadre sets. */
static void validate_env_name(struct decoder *d, const char *path, const char *name)
{
	if (!name_is_c_identifier(name))
		decode_fail(d, path, "must be a C identifier like BATCH_SIZE");
	else if (tj_env_reserved(name))
		decode_fail(d, path, "reserved for cadre");
}

static void validate_envs(struct decoder *d, const struct tj_spec *s)
{
	char path[DECODE_PATH_MAX], ref_path[DECODE_PATH_MAX], field[DECODE_PATH_MAX];

	for (size_t i = 0; i < s->n_envs; i++) {
		decode_path(path, sizeof(path), "spec.envs", s->envs[i].name);
		validate_env_name(d, path, s->envs[i].name);
	}
	for (size_t i = 0; i < s->n_secret_envs; i++) {
		const struct tj_secret_env *env = &s->secret_envs[i];

		decode_path_index(path, sizeof(path), "spec.secretEnvs", i);
		decode_path(field, sizeof(field), path, "name");
		if (!env->name) {
			decode_fail(d, field, "required");
		} else {
			validate_env_name(d, field, env->name);
			for (size_t j = 0; j < s->n_envs; j++)
				if (!strcmp(s->envs[j].name, env->name))
					decode_fail(d, field, "%s is also set in spec.envs",
						    env->name);
			for (size_t j = 0; j < i; j++)
				if (s->secret_envs[j].name &&
				    !strcmp(s->secret_envs[j].name, env->name))
					decode_fail(d, field, "duplicate of spec.secretEnvs[%zu].name",
						    j);
		}
		decode_path(ref_path, sizeof(ref_path), path, "secretKeyRef");
		decode_path(field, sizeof(field), ref_path, "name");
		if (!env->secret_name)
			decode_fail(d, field, "required");
		else if (!name_is_dns1123_subdomain(env->secret_name))
			decode_fail(d, field, "must be the name of a Secret (a DNS subdomain)");
		decode_path(field, sizeof(field), ref_path, "key");
		if (!env->secret_key)
			decode_fail(d, field, "required");
		else if (!name_is_config_key(env->secret_key))
			decode_fail(d, field, "must be a Secret key ([-._a-zA-Z0-9]+)");
	}
}

/* Whether path is dir or below it: a directory cadre mounts into every pod. */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (!path[n] || path[n] == '/');
}

/* A mount path of spec.volumes or spec.scratch: absolute, plain, none of cadre's own. */
static void validate_mount_path(struct decoder *d, const char *field, const char *mount_path)
{
	if (mount_path[0] != '/')
		decode_fail(d, field, "mount path must be absolute");
	else if (!name_is_mount_path(mount_path))
		decode_fail(d, field, "mount path must be a plain directory: no \".\", "
			    "\"..\" or empty components, and not \"/\"");
	else if (under(mount_path, "/dev/shm"))
		decode_fail(d, field, "/dev/shm is mounted by cadre");
	else if (under(mount_path, "/cadre/bin"))
		decode_fail(d, field, "/cadre/bin is mounted by cadre (its srun and scontrol)");
	/* ENTRYPOINT_DIR of controller/build/entrypoint.h. */
	else if (under(mount_path, "/cadre/entrypoint"))
		decode_fail(d, field, "/cadre/entrypoint is mounted by cadre (its entrypoint "
			    "script)");
	/* CODE_PARTS_DIR of controller/build/build.h. */
	else if (under(mount_path, "/cadre/code"))
		decode_fail(d, field, "/cadre/code is mounted by cadre (the parts of spec.code's "
			    "bundles)");
}

static void validate_volumes(struct decoder *d, const struct tj_spec *s)
{
	char path[DECODE_PATH_MAX];

	for (size_t i = 0; i < s->n_volumes; i++) {
		const struct tj_volume_mount *m = &s->volumes[i];

		decode_path_quoted(path, sizeof(path), "spec.volumes", m->mount_path);
		validate_mount_path(d, path, m->mount_path);
		if (m->volume && !name_is_dns1123_subdomain(m->volume))
			decode_fail(d, path, "must be the name of a Volume (a DNS subdomain)");
	}
}

/* The spec.volumes mount path that path is at or under (or that is under path), or NULL. */
static const char *volume_overlapping(const struct tj_spec *s, const char *path)
{
	for (size_t i = 0; i < s->n_volumes; i++)
		if (under(path, s->volumes[i].mount_path) || under(s->volumes[i].mount_path, path))
			return s->volumes[i].mount_path;
	return NULL;
}

/*
 * spec.scratch: a mount path like spec.volumes', apart from every Volume's
 * (scratch is node-local, a Volume shared: one inside the other would hide
 * which is which), and a positive size.
 */
void tj_validate_scratch(struct decoder *d, const struct tj_spec *s)
{
	char path[DECODE_PATH_MAX], field[DECODE_PATH_MAX];
	const char *vol;

	if (s->n_scratch > TJ_MAX_SCRATCH)
		decode_fail(d, "spec.scratch", "at most %d mount paths", TJ_MAX_SCRATCH);
	for (size_t i = 0; i < s->n_scratch; i++) {
		const struct tj_scratch *sc = &s->scratch[i];

		decode_path_quoted(path, sizeof(path), "spec.scratch", sc->mount_path);
		validate_mount_path(d, path, sc->mount_path);
		if ((vol = volume_overlapping(s, sc->mount_path)))
			decode_fail(d, path, "overlaps the mount path %.256s of spec.volumes: "
				    "scratch is each node's own, a Volume is shared", vol);
		decode_path(field, sizeof(field), path, "size");
		if (!sc->size)
			decode_fail(d, field, "required");
		else if (!sc->has_size)
			decode_fail(d, field, "must be a quantity like \"100Gi\", not \"%.64s\"",
				    sc->size);
		else if (sc->size_milli < 1000)
			decode_fail(d, field, "must be at least one byte");
		decode_path(field, sizeof(field), path, "storageClassName");
		if (sc->storage_class_name && !name_is_dns1123_subdomain(sc->storage_class_name))
			decode_fail(d, field, "must be the name of a StorageClass (a DNS "
				    "subdomain)");
	}
}

/* The spec.scratch mount path that path is at or under, or NULL. */
static const char *scratch_holding(const struct tj_spec *s, const char *path)
{
	for (size_t i = 0; i < s->n_scratch; i++)
		if (under(path, s->scratch[i].mount_path))
			return s->scratch[i].mount_path;
	return NULL;
}

/* The spec.scratch mount path that path is at, under or above, or NULL. */
static const char *scratch_overlapping(const struct tj_spec *s, const char *path)
{
	for (size_t i = 0; i < s->n_scratch; i++)
		if (under(path, s->scratch[i].mount_path) || under(s->scratch[i].mount_path, path))
			return s->scratch[i].mount_path;
	return NULL;
}

/* spec.stageIn: from a Volume's mount into a scratch path, both plain absolute paths. */
static void validate_stage_in(struct decoder *d, const struct tj_spec *s)
{
	char path[DECODE_PATH_MAX], field[DECODE_PATH_MAX];

	if (s->n_stage_in > TJ_MAX_STAGE_IN)
		decode_fail(d, "spec.stageIn", "at most %d entries", TJ_MAX_STAGE_IN);
	for (size_t i = 0; i < s->n_stage_in; i++) {
		const struct tj_stage_in *st = &s->stage_in[i];
		bool in_volume = false;

		decode_path_index(path, sizeof(path), "spec.stageIn", i);
		decode_path(field, sizeof(field), path, "from");
		if (!st->from)
			decode_fail(d, field, "required");
		else if (st->from[0] != '/' || !name_is_mount_path(st->from))
			decode_fail(d, field, "must be an absolute path without \".\", \"..\" or "
				    "empty components");
		for (size_t v = 0; st->from && v < s->n_volumes; v++)
			in_volume |= under(st->from, s->volumes[v].mount_path);
		if (st->from && !in_volume && st->from[0] == '/')
			decode_fail(d, field, "must be under the mount path of one of spec.volumes "
				    "(the shared copy)");
		decode_path(field, sizeof(field), path, "to");
		if (!st->to)
			decode_fail(d, field, "required");
		else if (st->to[0] != '/' || !name_is_mount_path(st->to))
			decode_fail(d, field, "must be an absolute path without \".\", \"..\" or "
				    "empty components");
		else if (!scratch_holding(s, st->to))
			decode_fail(d, field, "must be under the mount path of one of spec.scratch "
				    "(the node's copy)");
	}
}

bool tj_code_digest_ok(const char *digest)
{
	if (!digest || strncmp(digest, "sha256:", 7) || strlen(digest) != 7 + 64)
		return false;
	for (const char *c = digest + 7; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return false;
	return true;
}

/*
 * spec.code: a digest and an absolute path each, the path a mount path of
 * its own (an emptyDir the bundle is unpacked into): not on a Volume or
 * scratch, where it would hide shared data or the node's space, not at or
 * under another entry's, none of cadre's own.
 */
static void validate_code(struct decoder *d, const struct tj_spec *s)
{
	char path[DECODE_PATH_MAX], field[DECODE_PATH_MAX];
	const char *other;

	if (s->n_code > TJ_MAX_CODE)
		decode_fail(d, "spec.code", "at most %d entries", TJ_MAX_CODE);
	for (size_t i = 0; i < s->n_code; i++) {
		const struct tj_code *c = &s->code[i];

		decode_path_index(path, sizeof(path), "spec.code", i);
		decode_path(field, sizeof(field), path, "digest");
		if (!c->digest)
			decode_fail(d, field, "required");
		else if (!tj_code_digest_ok(c->digest))
			decode_fail(d, field, "must be \"sha256:\" and 64 lowercase hex digits "
				    "(cadre push DIR prints it)");
		decode_path(field, sizeof(field), path, "path");
		if (!c->path) {
			decode_fail(d, field, "required");
			continue;
		}
		validate_mount_path(d, field, c->path);
		if (c->path[0] != '/' || !name_is_mount_path(c->path))
			continue;
		if (under(c->path, "/cadre") || under(c->path, "/dev/shm")) {
			decode_fail(d, field, "/cadre and /dev/shm are mounted by cadre");
			continue;
		}
		if ((other = volume_overlapping(s, c->path)))
			decode_fail(d, field, "overlaps the mount path %.256s of spec.volumes: "
				    "code on a Volume is already shared, leave it out of spec.code",
				    other);
		else if ((other = scratch_overlapping(s, c->path)))
			decode_fail(d, field, "overlaps the scratch path %.256s", other);
		for (size_t j = 0; j < i; j++)
			if (s->code[j].path && (under(c->path, s->code[j].path) ||
						under(s->code[j].path, c->path)))
				decode_fail(d, field, "overlaps spec.code[%zu].path %.256s", j,
					    s->code[j].path);
	}
}

/* Keys (and for labels, values) of a labels-like map. */
static void validate_keys(struct decoder *d, const json_t *map, const char *base,
			  bool label_values, bool reserve)
{
	char path[DECODE_PATH_MAX];
	const char *key, *owner;
	json_t *value;

	json_object_foreach((json_t *)map, key, value) {
		decode_path(path, sizeof(path), base, key);
		if (!name_is_qualified(key))
			decode_fail(d, path, "key must be a qualified name like "
				    "example.com/name");
		else if (reserve && (owner = reserved_key_owner(key)))
			decode_fail(d, path, "%s", owner);
		if (label_values && !name_is_label_value(json_string_value(value)))
			decode_fail(d, path, "value must be a label value (at most 63 "
				    "characters of [-A-Za-z0-9_.], alphanumeric at both ends)");
	}
}

void api_validate_tolerations(struct decoder *d, const json_t *list, const char *base)
{
	static const char *const keys[] = {
		"key", "operator", "value", "effect", "tolerationSeconds", NULL,
	};
	char path[DECODE_PATH_MAX], field[DECODE_PATH_MAX];
	size_t i;
	json_t *t;

	json_array_foreach(list, i, t) {
		char *op = NULL, *value = NULL, *effect = NULL, *key = NULL;
		int64_t seconds;

		decode_path_index(path, sizeof(path), base, i);
		if (!json_is_object(t)) {
			decode_fail(d, path, "must be an object");
			continue;
		}
		decode_only_keys(d, t, path, keys, NULL);
		decode_string(d, t, path, "key", &key);
		decode_string(d, t, path, "value", &value);
		decode_int64(d, t, path, "tolerationSeconds", &seconds, NULL);
		if (decode_string(d, t, path, "operator", &op) && strcmp(op, "Exists") &&
		    strcmp(op, "Equal")) {
			decode_path(field, sizeof(field), path, "operator");
			decode_fail(d, field, "must be Exists or Equal");
		}
		if (op && !strcmp(op, "Exists") && value && *value) {
			decode_path(field, sizeof(field), path, "value");
			decode_fail(d, field, "must be empty when operator is Exists");
		}
		if (decode_string(d, t, path, "effect", &effect) && *effect &&
		    strcmp(effect, "NoSchedule") && strcmp(effect, "PreferNoSchedule") &&
		    strcmp(effect, "NoExecute")) {
			decode_path(field, sizeof(field), path, "effect");
			decode_fail(d, field, "must be NoSchedule, PreferNoSchedule or NoExecute");
		}
		free(key);
		free(op);
		free(value);
		free(effect);
	}
}

static void validate_pull_secrets(struct decoder *d, const json_t *list)
{
	static const char *const keys[] = { "name", NULL };
	char path[DECODE_PATH_MAX], field[DECODE_PATH_MAX];
	size_t i;
	json_t *ref;

	json_array_foreach(list, i, ref) {
		char *name = NULL;

		decode_path_index(path, sizeof(path),
				  "spec.podTemplate.spec.imagePullSecrets", i);
		if (!json_is_object(ref)) {
			decode_fail(d, path, "must be an object like {\"name\": \"regcred\"}");
			continue;
		}
		decode_only_keys(d, ref, path, keys, NULL);
		decode_path(field, sizeof(field), path, "name");
		if (!json_object_get(ref, "name") || json_is_null(json_object_get(ref, "name")))
			decode_fail(d, field, "required");
		else if (decode_string(d, ref, path, "name", &name) &&
			 !name_is_dns1123_subdomain(name))
			decode_fail(d, field, "must be the name of a Secret (a DNS subdomain)");
		free(name);
	}
}

static void validate_optional_name(struct decoder *d, const char *path, const char *name,
				   const char *what)
{
	if (name && *name && !name_is_dns1123_subdomain(name))
		decode_fail(d, path, "must be the name of a %s (a DNS subdomain)", what);
}

/* An id (uid, gid) as Kubernetes takes them: 0 to 2^31 - 1. */
static void validate_id(struct decoder *d, const json_t *obj, const char *base, const char *key)
{
	char path[DECODE_PATH_MAX];
	int64_t id;

	decode_path(path, sizeof(path), base, key);
	decode_as_int64(d, json_object_get(obj, key), path, 0, INT32_MAX, &id);
}

/*
 * seccompProfile: RuntimeDefault or Localhost (with the profile's path
 * under the kubelet's seccomp directory). Unconfined is the one value that
 * takes confinement away, so it is refused.
 */
static void validate_seccomp(struct decoder *d, const json_t *sp, const char *path)
{
	static const char *const keys[] = { "type", "localhostProfile", NULL };
	char field[DECODE_PATH_MAX];
	char *type = NULL, *profile = NULL;
	bool localhost;

	if (!decode_as_object(d, sp, path))
		return;
	decode_only_keys(d, sp, path, keys, NULL);
	decode_path(field, sizeof(field), path, "type");
	if (!decode_string(d, sp, path, "type", &type))
		decode_fail(d, field, "required: RuntimeDefault or Localhost");
	else if (strcmp(type, "RuntimeDefault") && strcmp(type, "Localhost"))
		decode_fail(d, field, "must be RuntimeDefault or Localhost, not \"%.64s\"", type);
	localhost = type && !strcmp(type, "Localhost");
	decode_path(field, sizeof(field), path, "localhostProfile");
	if (decode_string(d, sp, path, "localhostProfile", &profile)) {
		if (!localhost)
			decode_fail(d, field, "only for type Localhost");
		else if (!*profile || profile[0] == '/' || strstr(profile, ".."))
			decode_fail(d, field, "must be a path relative to the kubelet's seccomp "
				    "directory, without ..");
	} else if (localhost) {
		decode_fail(d, field, "required for type Localhost");
	}
	free(type);
	free(profile);
}

#define POD_SECURITY "spec.podTemplate.spec.securityContext"
#define CONTAINER_SECURITY "spec.podTemplate.spec.containerSecurityContext"

/* The pod's securityContext: ids, runAsNonRoot and seccomp only. */
static void validate_pod_security(struct decoder *d, const json_t *sc)
{
	static const char *const keys[] = {
		"runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup", "seccompProfile", NULL,
	};
	const char *base = POD_SECURITY;
	bool flag;

	decode_only_keys(d, sc, base, keys, "the pod securityContext accepts only runAsUser, "
			 "runAsGroup, runAsNonRoot, fsGroup and seccompProfile");
	validate_id(d, sc, base, "runAsUser");
	validate_id(d, sc, base, "runAsGroup");
	validate_id(d, sc, base, "fsGroup");
	decode_bool(d, sc, base, "runAsNonRoot", &flag);
	if (json_object_get(sc, "seccompProfile") &&
	    !json_is_null(json_object_get(sc, "seccompProfile")))
		validate_seccomp(d, json_object_get(sc, "seccompProfile"),
				 POD_SECURITY ".seccompProfile");
}

/* The container's securityContext: only what takes privilege away. */
static void validate_container_security(struct decoder *d, const json_t *sc)
{
	static const char *const keys[] = {
		"allowPrivilegeEscalation", "capabilities", "runAsNonRoot",
		"readOnlyRootFilesystem", NULL,
	};
	static const char *const cap_keys[] = { "drop", NULL };
	const char *base = CONTAINER_SECURITY;
	const json_t *caps, *drop, *name;
	char path[DECODE_PATH_MAX];
	bool flag;
	size_t i;

	decode_only_keys(d, sc, base, keys, "the container securityContext accepts only "
			 "allowPrivilegeEscalation (false), capabilities.drop, runAsNonRoot and "
			 "readOnlyRootFilesystem: nothing that grants privilege");
	if (decode_bool(d, sc, base, "allowPrivilegeEscalation", &flag) && flag)
		decode_fail(d, CONTAINER_SECURITY ".allowPrivilegeEscalation",
			    "must be false: cadre lets no pod gain privileges");
	decode_bool(d, sc, base, "runAsNonRoot", &flag);
	decode_bool(d, sc, base, "readOnlyRootFilesystem", &flag);
	caps = decode_object(d, sc, base, "capabilities");
	if (!caps)
		return;
	decode_only_keys(d, caps, CONTAINER_SECURITY ".capabilities", cap_keys,
			 "capabilities may only be dropped, never added");
	drop = decode_array(d, caps, CONTAINER_SECURITY ".capabilities", "drop");
	json_array_foreach(drop, i, name) {
		const char *s = json_string_value(name);

		decode_path_index(path, sizeof(path), CONTAINER_SECURITY ".capabilities.drop", i);
		if (!s || !*s || strlen(s) > 64 || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") !=
		    strlen(s))
			decode_fail(d, path, "must be a capability name like ALL or NET_RAW");
	}
}

static void validate_pod_template(struct decoder *d, const struct tj_pod_template *pt)
{
	static const char *const affinity_keys[] = {
		"nodeAffinity", "podAffinity", "podAntiAffinity", NULL,
	};

	if (pt->labels)
		validate_keys(d, pt->labels, "spec.podTemplate.metadata.labels", true, true);
	if (pt->annotations)
		validate_keys(d, pt->annotations, "spec.podTemplate.metadata.annotations",
			      false, true);
	if (pt->node_selector)
		validate_keys(d, pt->node_selector, "spec.podTemplate.spec.nodeSelector",
			      true, false);
	if (pt->tolerations)
		api_validate_tolerations(d, pt->tolerations, "spec.podTemplate.spec.tolerations");
	if (pt->affinity)
		decode_only_keys(d, pt->affinity, "spec.podTemplate.spec.affinity",
				 affinity_keys, NULL);
	validate_optional_name(d, "spec.podTemplate.spec.serviceAccountName",
			       pt->service_account_name, "ServiceAccount");
	if (pt->image_pull_secrets)
		validate_pull_secrets(d, pt->image_pull_secrets);
	validate_optional_name(d, "spec.podTemplate.spec.runtimeClassName",
			       pt->runtime_class_name, "RuntimeClass");
	validate_optional_name(d, "spec.podTemplate.spec.schedulerName",
			       pt->scheduler_name, "scheduler");
	if (pt->security_context)
		validate_pod_security(d, pt->security_context);
	if (pt->container_security_context)
		validate_container_security(d, pt->container_security_context);
}

/* The signal names spec.signal.name may take (the CRD's enum). */
static const char *const signal_names[] = {
	"HUP", "INT", "QUIT", "USR1", "USR2", "ALRM", "TERM", "CONT", "URG", "WINCH", "XCPU",
	"PWR", NULL,
};

bool tj_signal_name_ok(const char *name)
{
	for (size_t i = 0; name && signal_names[i]; i++)
		if (!strcmp(name, signal_names[i]))
			return true;
	return false;
}

/* spec.hang, spec.signal, spec.terminationGracePeriodSeconds, spec.failurePolicy. */
static void validate_long_runs(struct decoder *d, const struct tj_spec *s)
{
	if (s->has_max_infra_restarts &&
	    (s->max_infra_restarts < 0 || s->max_infra_restarts > TJ_MAX_RESTART_COUNT))
		decode_fail(d, "spec.maxInfraRestarts", "must be between 0 and %d",
			    TJ_MAX_RESTART_COUNT);
	if (s->hang.set) {
		if (!s->hang.has_progress_seconds)
			decode_fail(d, "spec.hang.progressSeconds", "required");
		else if (s->hang.progress_seconds < 1 || s->hang.progress_seconds > 604800)
			decode_fail(d, "spec.hang.progressSeconds", "must be between 1 and 604800");
		if (s->hang.has_startup_seconds &&
		    (s->hang.startup_seconds < 1 || s->hang.startup_seconds > 604800))
			decode_fail(d, "spec.hang.startupSeconds", "must be between 1 and 604800");
	}
	if (s->signal.name && !tj_signal_name_ok(s->signal.name))
		decode_fail(d, "spec.signal.name", "\"%.32s\" is not a signal cadre can send "
			    "(HUP, INT, QUIT, USR1, USR2, ALRM, TERM, CONT, URG, WINCH, XCPU, PWR)",
			    s->signal.name);
	if (s->signal.has_seconds_before &&
	    (s->signal.seconds_before < 0 || s->signal.seconds_before > 3600))
		decode_fail(d, "spec.signal.secondsBefore", "must be between 0 and 3600");
	else if (s->signal.name && s->has_active_deadline_seconds &&
		 s->signal.seconds_before >= s->active_deadline_seconds)
		decode_fail(d, "spec.signal.secondsBefore", "must be less than "
			    "activeDeadlineSeconds, or the signal would come before the job starts");
	if (s->has_termination_grace_period_seconds) {
		if (s->termination_grace_period_seconds < 0 ||
		    s->termination_grace_period_seconds > 7200)
			decode_fail(d, "spec.terminationGracePeriodSeconds",
				    "must be between 0 and 7200");
		else if (s->signal.name &&
			 s->termination_grace_period_seconds < s->signal.seconds_before)
			decode_fail(d, "spec.terminationGracePeriodSeconds", "must be at least "
				    "signal.secondsBefore, the time the program has between the "
				    "signal and SIGTERM");
	}
}

/*
 * spec.array and spec.dependency. An array's elements are TrainingJobs
 * named <name>-<index>, held to the same 50 characters as the job's name
 * (the CRD's rule), so the name leaves room for the largest index.
 */
static void validate_slurm(struct decoder *d, const struct trainingjob *tj)
{
	const struct tj_spec *s = &tj->spec;
	char why[256];

	if (s->array) {
		struct slurm_array a;
		int err = slurm_array_parse(s->array, SLURM_ARRAY_INDEX_LIMIT, &a, why, sizeof(why));

		if (err == CADRE_ENOMEM)
			decode_nomem(d);
		else if (err)
			decode_fail(d, "spec.array", "%s", why);
		else if (tj->meta.name && a.n &&
			 strlen(tj->meta.name) + 1 + (size_t)decimal_digits(a.index[a.n - 1]) >
			 TJ_NAME_MAX)
			decode_fail(d, "metadata.name", "must leave room for the array's element "
				    "names \"<name>-%d\" in %d characters", a.index[a.n - 1],
				    TJ_NAME_MAX);
		slurm_array_release(&a);
	}
	for (size_t i = 0; s->has_dependency && i < s->dependency.n_items; i++) {
		const struct slurm_dep_item *it = &s->dependency.items[i];
		char path[DECODE_PATH_MAX];

		decode_path_index(path, sizeof(path), "spec.dependency.items", i);
		if (it->type == SLURM_DEP_SINGLETON ? it->n_jobs != 0 : it->n_jobs == 0)
			decode_fail(d, path, it->type == SLURM_DEP_SINGLETON ?
				    "singleton takes no jobs" : "jobs: list at least one job");
		for (size_t j = 0; j < it->n_jobs; j++)
			if (!slurm_job_id_text(it->jobs[j]) && !name_is_dns1035_label(it->jobs[j]))
				decode_fail(d, path, "\"%.64s\" is neither a job id (123, 123_4) nor "
					    "a job name", it->jobs[j]);
	}
	validate_optional_name(d, "spec.partition", s->partition, "Partition");
	if (s->output && !*s->output)
		decode_fail(d, "spec.output", "must not be empty");
	if (s->error && !*s->error)
		decode_fail(d, "spec.error", "must not be empty");
}

static void validate_level(struct decoder *d, const char *path, const char *label)
{
	if (label && !name_is_qualified(label))
		decode_fail(d, path, "\"%.64s\" is not a node label key", label);
}

/* spec.topology's own shape; its levels against the cluster's: tj_topology_check_levels. */
static void validate_topology(struct decoder *d, const struct tj_spec *s)
{
	const struct tj_topology *t = &s->topology;

	if (!t->set)
		return;
	if (!t->required && !t->preferred && !t->has_segment)
		decode_fail(d, "spec.topology", "must set required, preferred or segment");
	validate_level(d, "spec.topology.required", t->required);
	validate_level(d, "spec.topology.preferred", t->preferred);
	if (!t->has_segment)
		return;
	validate_level(d, "spec.topology.segment.required", t->segment_required);
	if (t->segment_size < 1)
		decode_fail(d, "spec.topology.segment.size", "must be >= 1");
	else if (s->num_nodes >= 1 && s->num_nodes % t->segment_size)
		decode_fail(d, "spec.topology.segment.size", "must divide numNodes (%d) into "
			    "whole segments", s->num_nodes);
}

/* The place of label in levels, or -1. */
static long level_index(const char *label, const char *const *levels, size_t n)
{
	for (size_t i = 0; label && i < n; i++)
		if (levels[i] && !strcmp(levels[i], label))
			return (long)i;
	return -1;
}

int tj_topology_check_levels(const struct tj_spec *spec, const char *const *levels, size_t n,
			     const char *source, struct field_errors *errs)
{
	const struct tj_topology *t = &spec->topology;
	struct decoder d;
	long req, pref, seg;

	decode_init(&d, errs);
	if (!t->set)
		return decode_finish(&d);
	req = level_index(t->required, levels, n);
	pref = level_index(t->preferred, levels, n);
	seg = level_index(t->segment_required, levels, n);
	if (t->required && req < 0)
		decode_fail(&d, "spec.topology.required", "\"%.64s\" is not a level of %s",
			    t->required, source);
	if (t->preferred && pref < 0)
		decode_fail(&d, "spec.topology.preferred", "\"%.64s\" is not a level of %s",
			    t->preferred, source);
	if (t->has_segment && t->segment_required && seg < 0)
		decode_fail(&d, "spec.topology.segment.required", "\"%.64s\" is not a level of %s",
			    t->segment_required, source);
	if (req >= 0 && pref >= 0 && pref <= req)
		decode_fail(&d, "spec.topology.preferred", "must be a level finer than required "
			    "(%.64s), inside which it packs the ranks", t->required);
	if (req >= 0 && seg >= 0 && seg < req)
		decode_fail(&d, "spec.topology.segment.required", "must not be wider than "
			    "required (%.64s): the segments lie inside its one domain", t->required);
	return decode_finish(&d);
}

int tj_validate(const struct trainingjob *tj, struct field_errors *errs)
{
	const struct tj_spec *s = &tj->spec;
	struct decoder d;

	decode_init(&d, errs);
	validate_name(&d, tj);
	if (s->num_nodes < 1 || s->num_nodes > TJ_MAX_NUM_NODES)
		decode_fail(&d, "spec.numNodes", "must be between 1 and %d", TJ_MAX_NUM_NODES);
	if (s->tasks_per_node < 1 || s->tasks_per_node > TJ_MAX_TASKS_PER_NODE)
		decode_fail(&d, "spec.tasksPerNode", "must be between 1 and %d",
			    TJ_MAX_TASKS_PER_NODE);
	validate_resources(&d, &s->resources);
	if (blank(s->run))
		decode_fail(&d, "spec.run", s->run ? "must not be empty" : "required");
	if (s->workdir && *s->workdir && s->workdir[0] != '/')
		decode_fail(&d, "spec.workdir", "must be an absolute path");
	validate_envs(&d, s);
	validate_volumes(&d, s);
	tj_validate_scratch(&d, s);
	validate_stage_in(&d, s);
	validate_code(&d, s);
	tj_validate_nodes(&d, s);
	validate_optional_name(&d, "spec.queue", s->queue, "Kueue LocalQueue");
	validate_optional_name(&d, "spec.priorityClassName", s->priority_class_name,
			       "PriorityClass");
	if (s->max_restarts < 0 || s->max_restarts > TJ_MAX_RESTART_COUNT)
		decode_fail(&d, "spec.maxRestarts", "must be between 0 and %d",
			    TJ_MAX_RESTART_COUNT);
	if (s->has_active_deadline_seconds &&
	    (s->active_deadline_seconds < 1 || s->active_deadline_seconds > TJ_MAX_DEADLINE_SECONDS))
		decode_fail(&d, "spec.activeDeadlineSeconds", "must be between 1 and %lld (ten "
			    "years; no deadline: leave it out)", TJ_MAX_DEADLINE_SECONDS);
	if (s->has_ttl_seconds_after_finished &&
	    (s->ttl_seconds_after_finished < 0 || s->ttl_seconds_after_finished > TJ_MAX_TTL_SECONDS))
		decode_fail(&d, "spec.ttlSecondsAfterFinished", "must be between 0 and %lld",
			    TJ_MAX_TTL_SECONDS);
	if (s->gang_timeout_seconds < 1 || s->gang_timeout_seconds > TJ_MAX_GANG_TIMEOUT_SECONDS)
		decode_fail(&d, "spec.gang.timeoutSeconds", "must be between 1 and %d",
			    TJ_MAX_GANG_TIMEOUT_SECONDS);
	if (s->master_port < 1 || s->master_port > 65535)
		decode_fail(&d, "spec.masterPort", "must be between 1 and 65535");
	validate_pod_template(&d, &s->pod_template);
	tj_validate_claims(&d, s);
	validate_long_runs(&d, s);
	validate_slurm(&d, tj);
	validate_topology(&d, s);
	return decode_finish(&d);
}
