/*
 * build_pod.c - one pod of a gang (docs/design.md 2.2 and 2.3; docs/pods.md).
 *
 * The pod is assembled from parts, each a function that checks what it reads
 * and says which field is at fault. jansson calls that can fail only for want
 * of memory are or-ed into one flag and checked once per part: a failed
 * json_object_set_new() frees its value, so nothing leaks on that path.
 */
#include "controller/build/build.h"
#include "api/slurm.h"
#include "controller/admission/kueue.h"

#include "base/buf.h"
#include "base/err.h"
#include "api/accel.h"
#include "api/hostlist.h"
#include "api/quantity.h"
#include "controller/build/entrypoint.h"
#include "api/code.h"

#include <inttypes.h>

/* A pod's hostname (<job>-<rank>) is a DNS label. */
#define HOSTNAME_MAX 63

/* What build_pod works out once and every part reads. */
struct pod_ctx {
	const struct trainingjob *job;
	const struct build_opts *opts;
	int rank;
	int attempt;
	int num_nodes;
	enum gang_mode mode;
	const char *image;
	const char *accel_resource;
	const char *accel_label;
	int gpus;           /* accelerators per pod; 0 when none asked for */
	char configmap[HOSTNAME_MAX + sizeof(BUILD_ENTRYPOINT_SUFFIX)];  /* <job>-entrypoint */
	struct buf *err;
};

static int set_str(json_t *obj, const char *key, const char *value)
{
	return json_object_set_new(obj, key, json_string(value)) ? 1 : 0;
}

/* A copy of a user-given object or array, so the pod shares nothing with the job. */
static json_t *copy_or_new(const json_t *v, bool array)
{
	if (v)
		return json_deep_copy(v);
	return array ? json_array() : json_object();
}

/*
 * One variable: into a pod's env list as {name, value}, or into a
 * ConfigMap's data object as name -> value (the shared variables, which the
 * pod takes by envFrom). 1 when out of memory.
 */
static int add_env(json_t *env, const char *name, const char *value)
{
	if (json_is_object(env))
		return json_object_set_new(env, name, json_string(value)) ? 1 : 0;
	return json_array_append_new(env, json_pack("{s:s, s:s}", "name", name, "value", value))
		? 1 : 0;
}

static int add_env_int(json_t *env, const char *name, long long value)
{
	char text[24];

	snprintf(text, sizeof(text), "%lld", value);
	return add_env(env, name, text);
}

/* "4" for one node, "4(x2)" for two: Slurm's SLURM_TASKS_PER_NODE. */
static int add_tasks_per_node(json_t *env, int tasks, int nodes)
{
	char text[48];

	if (nodes > 1)
		snprintf(text, sizeof(text), "%d(x%d)", tasks, nodes);
	else
		snprintf(text, sizeof(text), "%d", tasks);
	return add_env(env, "SLURM_TASKS_PER_NODE", text);
}

/*
 * An array job's element (docs/design.md 12): SLURM_ARRAY_JOB_ID (the array's own
 * job id) and the element's index, as the controller labelled and annotated it
 * when it made the element, then _COUNT, _MIN, _MAX and _STEP of the array's
 * index set, as slurmctld's _create_job_array sets them. Nothing for any other job.
 */
static int add_array_env(const struct trainingjob *job, json_t *env)
{
	const char *array_id = meta_annotation(&job->meta, ANNOTATION_ARRAY_JOB_ID);
	const char *index = meta_label(&job->meta, LABEL_ARRAY_INDEX);
	const char *tasks = meta_annotation(&job->meta, ANNOTATION_ARRAY_TASKS);
	struct slurm_array a;
	int bad = 0;

	if (!array_id || !index || !tasks)
		return 0;
	if (slurm_array_parse(tasks, SLURM_ARRAY_INDEX_LIMIT, &a, NULL, 0) || !a.n) {
		slurm_array_release(&a);
		return 0;
	}
	bad |= add_env(env, "SLURM_ARRAY_JOB_ID", array_id);
	bad |= add_env(env, "SLURM_ARRAY_TASK_ID", index);
	bad |= add_env_int(env, "SLURM_ARRAY_TASK_COUNT", (long long)a.n);
	bad |= add_env_int(env, "SLURM_ARRAY_TASK_MIN", a.index[0]);
	bad |= add_env_int(env, "SLURM_ARRAY_TASK_MAX", a.index[a.n - 1]);
	bad |= add_env_int(env, "SLURM_ARRAY_TASK_STEP", a.step);
	slurm_array_release(&a);
	return bad;
}

/*
 * What a batch step sees under Slurm beyond the table of docs/design.md 2.3
 * (docs/design.md 2.4). CPUs are whole under Slurm: a fractional request counts
 * as the next whole CPU, and a task gets at least one.
 */
static int add_slurm_env(const struct pod_ctx *c, json_t *env, const char *nodelist)
{
	const struct tj_spec *spec = &c->job->spec;
	int tasks = spec->has_tasks_per_node && spec->tasks_per_node > 0 ?
		    spec->tasks_per_node : TJ_DEFAULT_TASKS_PER_NODE;
	long long ntasks = (long long)tasks * c->num_nodes;
	int bad = 0;

	bad |= add_env(env, "SLURM_NODELIST", nodelist);
	bad |= add_env(env, "SLURM_JOBID", c->job->status.job_id);
	bad |= add_env_int(env, "SLURM_NTASKS", ntasks);
	bad |= add_env_int(env, "SLURM_NPROCS", ntasks);
	bad |= add_env_int(env, "SLURM_NTASKS_PER_NODE", tasks);
	bad |= add_tasks_per_node(env, tasks, c->num_nodes);
	if (spec->resources.has_cpus) {
		long long on_node = (spec->resources.cpus_milli + 999) / 1000;
		long long per_task = on_node / tasks;

		bad |= add_env_int(env, "SLURM_CPUS_PER_TASK", per_task > 0 ? per_task : 1);
		bad |= add_env_int(env, "SLURM_CPUS_ON_NODE", on_node > 0 ? on_node : 1);
	}
	bad |= add_env_int(env, "SLURM_GPUS_ON_NODE", c->gpus);
	bad |= add_env_int(env, "SLURM_LOCALID", 0);
	if (spec->workdir && *spec->workdir)
		bad |= add_env(env, "SLURM_SUBMIT_DIR", spec->workdir);
	/* The Partition the job runs in (its effective spec names it), else the Kueue queue. */
	if (spec->partition && *spec->partition)
		bad |= add_env(env, "SLURM_JOB_PARTITION", spec->partition);
	else if (spec->queue && *spec->queue)
		bad |= add_env(env, "SLURM_JOB_PARTITION", spec->queue);
	bad |= add_env(env, "SLURM_CLUSTER_NAME", BUILD_SLURM_CLUSTER_NAME);
	bad |= add_array_env(c->job, env);
	if (spec->output && *spec->output)
		bad |= add_env(env, "CADRE_OUTPUT", spec->output);
	if (spec->error && *spec->error)
		bad |= add_env(env, "CADRE_ERROR", spec->error);
	return bad;
}

/*
 * The host names <job>-0 ... in rank order, compressed as Slurm does
 * (llama-pretrain-[0-1]).
 */
static int node_list(const struct pod_ctx *c, struct buf *nodelist)
{
	const char *name = c->job->meta.name;
	char **hosts = calloc((size_t)c->num_nodes, sizeof(*hosts));
	int ret = hosts ? 0 : CADRE_ENOMEM;

	for (int r = 0; r < c->num_nodes && !ret; r++) {
		struct buf host;

		buf_init(&host, HOSTNAME_MAX + 1);
		if (buf_addf(&host, "%s-%d", name, r))
			ret = CADRE_ENOMEM;
		hosts[r] = buf_detach(&host, NULL);
		if (!hosts[r])
			ret = CADRE_ENOMEM;
	}
	if (!ret)
		ret = hostlist_compress((const char *const *)hosts, (size_t)c->num_nodes,
					nodelist);
	for (int r = 0; hosts && r < c->num_nodes; r++)
		free(hosts[r]);
	free(hosts);
	/* The names were checked in pod_ctx_init: only memory can fail here. */
	return ret ? CADRE_ENOMEM : 0;
}

/* Whether spec.envs sets name (the user's value then stands). */
static bool user_sets(const struct tj_spec *spec, const char *name)
{
	for (size_t i = 0; i < spec->n_envs; i++)
		if (!strcmp(spec->envs[i].name, name))
			return true;
	for (size_t i = 0; i < spec->n_secret_envs; i++)
		if (spec->secret_envs[i].name && !strcmp(spec->secret_envs[i].name, name))
			return true;
	return false;
}

/*
 * PyTorch's NCCL flight recorder, for a job that asks for hang detection: a
 * trace buffer and a dump when PyTorch's own NCCL watchdog times out (those
 * two in add_long_run_env), written under dir (docs/pods.md, "Hangs"). A
 * variable the job sets itself is left to it.
 */
static int add_flight_recorder_env(const struct tj_spec *spec, json_t *env, const char *dir)
{
	struct buf file;
	int bad = 0;

	buf_init(&file, 4096);
	bad |= buf_addf(&file, "%s/rank_", dir) != 0;
	if (!user_sets(spec, "TORCH_FR_DUMP_TEMP_FILE"))
		bad |= add_env(env, "TORCH_FR_DUMP_TEMP_FILE", buf_str(&file));
	if (!user_sets(spec, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE"))
		bad |= add_env(env, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE", buf_str(&file));
	buf_release(&file);
	return bad;
}

/*
 * Where a hang's NCCL dumps go: under the first Volume's mount path (in
 * mount path order), so they outlive the pods, per job and attempt; without
 * a Volume, in the pod (gone with it; the hang's message says so).
 */
static int nccl_dump_dir(const struct pod_ctx *c, struct buf *out)
{
	const struct tj_spec *spec = &c->job->spec;
	const char *first = NULL;

	for (size_t i = 0; i < spec->n_volumes; i++)
		if (!first || strcmp(spec->volumes[i].mount_path, first) < 0)
			first = spec->volumes[i].mount_path;
	if (!first)
		return buf_adds(out, "/tmp/cadre-nccl");
	return buf_addf(out, "%s/cadre-nccl/%s/attempt-%d", strcmp(first, "/") ? first : "",
			c->job->meta.name, c->attempt);
}

/*
 * spec.hang and spec.signal, as the entrypoint reads them (entrypoint.h),
 * the part every attempt shares. Nothing when the job asks for neither.
 */
static int add_long_run_env(const struct tj_spec *spec, json_t *env)
{
	int bad = 0;

	if (spec->hang.set && spec->hang.has_progress_seconds) {
		bad |= add_env(env, ENTRYPOINT_ENV_HEARTBEAT_FILE, BUILD_HEARTBEAT_FILE);
		bad |= add_env_int(env, ENTRYPOINT_ENV_HANG_STARTUP,
				   spec->hang.has_startup_seconds ? spec->hang.startup_seconds :
				   spec->hang.progress_seconds);
		bad |= add_env_int(env, ENTRYPOINT_ENV_HANG_PROGRESS, spec->hang.progress_seconds);
		if (!user_sets(spec, "TORCH_NCCL_TRACE_BUFFER_SIZE"))
			bad |= add_env(env, "TORCH_NCCL_TRACE_BUFFER_SIZE", "2000");
		if (!user_sets(spec, "TORCH_NCCL_DUMP_ON_TIMEOUT"))
			bad |= add_env(env, "TORCH_NCCL_DUMP_ON_TIMEOUT", "1");
	}
	if (spec->signal.name) {
		bad |= add_env(env, ENTRYPOINT_ENV_SIGNAL, spec->signal.name);
		bad |= add_env_int(env, ENTRYPOINT_ENV_SIGNAL_BEFORE, spec->signal.seconds_before);
	}
	return bad;
}

/*
 * The part of spec.hang and spec.signal that belongs to one attempt: where
 * its NCCL dumps go, and the deadline, which is known from the first
 * admission on (activeDeadlineSeconds counts from it, docs/design.md 1.3).
 */
static int add_attempt_long_run_env(const struct pod_ctx *c, json_t *env)
{
	const struct tj_spec *spec = &c->job->spec;
	const struct tj_status *st = &c->job->status;
	int bad = 0;

	if (spec->hang.set && spec->hang.has_progress_seconds) {
		struct buf dir;

		buf_init(&dir, 4096);
		bad |= nccl_dump_dir(c, &dir) != 0;
		bad |= add_env(env, ENTRYPOINT_ENV_NCCL_DUMP_DIR, buf_str(&dir));
		bad |= add_flight_recorder_env(spec, env, buf_str(&dir));
		buf_release(&dir);
	}
	if (spec->signal.name && spec->has_active_deadline_seconds && st->admitted_time)
		bad |= add_env_int(env, ENTRYPOINT_ENV_DEADLINE,
				   st->admitted_time + spec->active_deadline_seconds);
	return bad;
}

/*
 * spec.scratch and spec.stageIn: TMPDIR is the first scratch path (they are
 * sorted) unless the job sets its own; CADRE_STAGE_IN lists the copies for
 * the entrypoint, from and to on lines of their own (the paths have no
 * control characters, tj_validate says so).
 */
static int add_scratch_env(const struct tj_spec *spec, json_t *env)
{
	struct buf list;
	int bad = 0;

	if (spec->n_scratch && !user_sets(spec, "TMPDIR"))
		bad |= add_env(env, "TMPDIR", spec->scratch[0].mount_path);
	if (!spec->n_stage_in)
		return bad;
	buf_init(&list, (size_t)1 << 20);
	for (size_t i = 0; i < spec->n_stage_in; i++) {
		const struct tj_stage_in *st = &spec->stage_in[i];

		bad |= buf_addf(&list, "%s\n%s\n", st->from ? st->from : "",
				st->to ? st->to : "") != 0;
	}
	bad |= add_env(env, ENTRYPOINT_ENV_STAGE_IN, buf_str(&list));
	buf_release(&list);
	return bad;
}

/*
 * The variables cadre sets alike on every rank of every attempt, in the
 * order of docs/design.md 2.3, then 2.4's Slurm set, then the entrypoint's
 * inputs: the gang's shape, its names and what the entrypoint runs. They
 * reach the pods from the job's ConfigMap (envFrom), the rank's and the
 * attempt's own from the pod (build_env). SKYPILOT_NODE_IPS is not here:
 * only the entrypoint can know the addresses.
 */
static bool add_shared_env(const struct pod_ctx *c, json_t *env, const struct buf *nodelist,
			  const struct buf *domain, const struct buf *master)
{
	const struct trainingjob *job = c->job;
	const struct tj_spec *spec = &job->spec;
	const char *name = job->meta.name;
	int64_t timeout = spec->has_gang_timeout_seconds ? spec->gang_timeout_seconds :
			  TJ_DEFAULT_GANG_TIMEOUT_SECONDS;
	int port = spec->has_master_port ? spec->master_port : TJ_DEFAULT_MASTER_PORT;
	int bad = 0;

	bad |= add_env_int(env, "SKYPILOT_NUM_NODES", c->num_nodes);
	bad |= add_env_int(env, "NNODES", c->num_nodes);
	bad |= add_env_int(env, "SLURM_NNODES", c->num_nodes);
	bad |= add_env_int(env, "SLURM_JOB_NUM_NODES", c->num_nodes);
	bad |= add_env_int(env, "SKYPILOT_NUM_GPUS_PER_NODE", c->gpus);
	bad |= add_env_int(env, "SLURM_GPUS_PER_NODE", c->gpus);
	bad |= add_env(env, "SLURM_JOB_NODELIST", buf_str(nodelist));
	bad |= add_env(env, "SKYPILOT_TASK_ID", job->status.task_id);
	bad |= add_env(env, "CADRE_TASK_ID", job->status.task_id);
	bad |= add_env(env, "SLURM_JOB_ID", job->status.job_id);
	bad |= add_env(env, "CADRE_JOB_ID", job->status.job_id);
	/* Slurm's job name: an array's elements all carry the array's (label cadre.dev/slurm-name). */
	bad |= add_env(env, "SLURM_JOB_NAME", meta_label(&c->job->meta, LABEL_SLURM_NAME) ?
		       meta_label(&c->job->meta, LABEL_SLURM_NAME) : name);
	bad |= add_env(env, "CADRE_JOB_NAME", name);
	bad |= add_env(env, "MASTER_ADDR", buf_str(master));
	bad |= add_env_int(env, "MASTER_PORT", port);
	bad |= add_slurm_env(c, env, buf_str(nodelist));

	bad |= add_env(env, ENTRYPOINT_ENV_BIN_DIR, BUILD_BIN_DIR);
	bad |= add_env(env, ENTRYPOINT_ENV_PEER_DOMAIN, buf_str(domain));
	bad |= add_env_int(env, ENTRYPOINT_ENV_TIMEOUT, timeout);
	if (spec->workdir && *spec->workdir)
		bad |= add_env(env, ENTRYPOINT_ENV_WORKDIR, spec->workdir);
	if (spec->setup && *spec->setup)
		bad |= add_env(env, ENTRYPOINT_ENV_SETUP, spec->setup);
	bad |= add_env(env, ENTRYPOINT_ENV_RUN, spec->run);
	bad |= add_long_run_env(spec, env);
	bad |= add_scratch_env(spec, env);
	return !bad;
}

/*
 * What is the rank's and the attempt's own: the rank under each of its
 * names, the restart count under both, and the attempt's part of
 * spec.hang and spec.signal.
 */
static int add_code_env(const struct pod_ctx *c, json_t *env);

bool build_in_place(const struct trainingjob *job, enum gang_mode mode)
{
	return job->spec.restart_strategy == TJ_RESTART_IN_PLACE &&
	       (mode == GANG_BUILTIN || mode == GANG_NONE);
}

static int add_pod_env(const struct pod_ctx *c, json_t *env)
{
	int bad = 0;

	bad |= add_env_int(env, "SKYPILOT_NODE_RANK", c->rank);
	bad |= add_env_int(env, "NODE_RANK", c->rank);
	bad |= add_env_int(env, "SLURM_NODEID", c->rank);
	bad |= add_env_int(env, "SLURM_PROCID", c->rank);
	bad |= add_env_int(env, "CADRE_RESTART_ATTEMPT", c->attempt);
	bad |= add_env_int(env, "SLURM_RESTART_COUNT", c->attempt);
	if (build_in_place(c->job, c->mode))
		bad |= add_env(env, ENTRYPOINT_ENV_ATTEMPT_FILE, BUILD_ATTEMPT_DIR "/attempt");
	bad |= add_attempt_long_run_env(c, env);
	bad |= add_code_env(c, env);
	return bad;
}

/*
 * The user's spec.envs and spec.secretEnvs after cadre's. A name cadre sets
 * cannot be shadowed (the last duplicate wins in a pod). The API and the CRD
 * refuse them already; this is for an object that got past both, such as
 * one stored before a CRD upgrade. 0, CADRE_EINVAL (in c->err) or CADRE_ENOMEM.
 */
static int add_user_env(const struct pod_ctx *c, json_t *env)
{
	const struct tj_spec *spec = &c->job->spec;
	int bad = 0;

	for (size_t i = 0; i < spec->n_envs; i++) {
		const struct tj_env *e = &spec->envs[i];

		if (tj_env_reserved(e->name))
			return build_fail(c->err, CADRE_EINVAL, "spec.envs", "%s is set by cadre",
					  e->name);
		if (!e->value)
			return build_fail(c->err, CADRE_EINVAL, "spec.envs", "%s must be a string",
					  e->name);
		bad |= add_env(env, e->name, e->value);
	}
	for (size_t i = 0; i < spec->n_secret_envs; i++) {
		const struct tj_secret_env *s = &spec->secret_envs[i];

		if (!s->name || !s->secret_name || !s->secret_key)
			return build_fail(c->err, CADRE_EINVAL, "spec.secretEnvs",
					  "entry %zu needs name, secretKeyRef.name and secretKeyRef.key",
					  i);
		if (tj_env_reserved(s->name))
			return build_fail(c->err, CADRE_EINVAL, "spec.secretEnvs",
					  "%s is set by cadre", s->name);
		bad |= json_array_append_new(env, json_pack("{s:s, s:{s:{s:s, s:s}}}",
							    "name", s->name, "valueFrom",
							    "secretKeyRef", "name", s->secret_name,
							    "key", s->secret_key)) != 0;
	}
	return bad ? CADRE_ENOMEM : 0;
}

/*
 * The shared variables (add_shared_env) as an object, name -> value.
 *
 * MASTER_ADDR is rank 0's fully qualified name, cluster domain and all: the
 * name the kubelet writes first for the pod in its own /etc/hosts, so the
 * canonical name rank 0 finds for its host name. torchrun's c10d rendezvous
 * (--rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT) decides whether to host the
 * store by comparing the endpoint with that name (PyTorch 1.x compares only
 * names; 2.x its addresses too); without the domain rank 0 of such a gang
 * never hosts it and every rank times out. A name of five dots is also
 * looked up as it is, before any search domain.
 */
static int build_shared(const struct pod_ctx *c, json_t **out)
{
	const char *name = c->job->meta.name, *ns = c->job->meta.namespace;
	const char *cluster_domain = c->opts->cluster_domain && *c->opts->cluster_domain ?
				     c->opts->cluster_domain : OPTIONS_DEFAULT_CLUSTER_DOMAIN;
	struct buf nodelist, domain, master;
	json_t *env = json_object();
	int bad = !env;

	buf_init(&nodelist, (size_t)1 << 24);
	buf_init(&domain, 512);
	buf_init(&master, 512);
	bad |= node_list(c, &nodelist) != 0;
	bad |= buf_addf(&domain, "%s.%s.svc", name, ns) != 0;
	bad |= buf_addf(&master, "%s-0.%s.%s", name, buf_str(&domain), cluster_domain) != 0;
	if (bad || !add_shared_env(c, env, &nodelist, &domain, &master)) {
		json_decref(env);
		env = NULL;
	}
	buf_release(&nodelist);
	buf_release(&domain);
	buf_release(&master);
	*out = env;
	return env ? 0 : CADRE_ENOMEM;
}

/*
 * The pod's own env: add_pod_env's, then spec.envs, then spec.secretEnvs.
 * Kubernetes gives env precedence over envFrom, and expands $(NAME) in env
 * values only: spec.envs may still refer to a shared variable, and what
 * cadre puts in the ConfigMap (the run and setup scripts among it) reaches
 * the process byte for byte.
 */
static int build_env(const struct pod_ctx *c, json_t **out)
{
	json_t *env = json_array();
	int ret;

	if (!env || add_pod_env(c, env)) {
		json_decref(env);
		return CADRE_ENOMEM;
	}
	ret = add_user_env(c, env);
	if (ret) {
		json_decref(env);
		return ret;
	}
	*out = env;
	return 0;
}

/*
 * The emptyDir scratch of a pod, summed into *milli: what the pod asks of
 * the node's disk. Returns how many there are.
 */
static size_t emptydir_bytes_milli(const struct tj_spec *spec, int64_t *milli)
{
	size_t n = 0;

	*milli = 0;
	for (size_t i = 0; i < spec->n_scratch; i++)
		if (!spec->scratch[i].storage_class_name && spec->scratch[i].has_size &&
		    !quantity_add(*milli, spec->scratch[i].size_milli, milli))
			n++;
	return n;
}

int64_t build_scratch_request_milli(const struct trainingjob *job)
{
	int64_t milli = 0;

	return emptydir_bytes_milli(&job->spec, &milli) > 0 ? milli : 0;
}

/*
 * Requests for what spec.resources asks; limits only where a limit is the
 * request: memory (a pod past its request would be the first evicted) and
 * the accelerator (extended resources cannot overcommit). No CPU limit:
 * throttling a data loader helps nobody. The emptyDir scratch is requested
 * as ephemeral-storage, so the scheduler places a rank where its disk has
 * room, but not limited: each emptyDir's sizeLimit bounds it already, and a
 * container limit would also count the image's writable layer and the logs,
 * evicting a rank for bytes its scratch never held (docs/volumes.md).
 */
static int build_resources(const struct pod_ctx *c, json_t **out)
{
	const struct tj_resources *res = &c->job->spec.resources;
	json_t *requests = json_object(), *limits = json_object(), *resources = NULL;
	int64_t scratch_milli = 0;
	struct buf q;
	int bad = !requests || !limits;

	buf_init(&q, 64);
	if (res->has_cpus) {
		bad |= quantity_format(res->cpus_milli, &q) != 0;
		bad |= set_str(requests, "cpu", buf_str(&q));
	}
	if (res->has_memory) {
		buf_reset(&q);
		bad |= quantity_format(res->memory_milli, &q) != 0;
		bad |= set_str(requests, "memory", buf_str(&q));
		bad |= set_str(limits, "memory", buf_str(&q));
	}
	if (emptydir_bytes_milli(&c->job->spec, &scratch_milli) > 0) {
		buf_reset(&q);
		bad |= quantity_format(scratch_milli, &q) != 0;
		bad |= set_str(requests, "ephemeral-storage", buf_str(&q));
	}
	/* Through DRA the devices are the claim's (build_pod_claims), not a resource. */
	if (c->gpus > 0 && !build_uses_claim_template(c->job)) {
		buf_reset(&q);
		bad |= buf_addf(&q, "%d", c->gpus) != 0;
		bad |= set_str(requests, c->accel_resource, buf_str(&q));
		bad |= set_str(limits, c->accel_resource, buf_str(&q));
	}
	buf_release(&q);
	if (!bad)
		resources = json_object();
	bad |= !resources;
	if (!bad && json_object_size(requests))
		bad |= json_object_set(resources, "requests", requests) != 0;
	if (!bad && json_object_size(limits))
		bad |= json_object_set(resources, "limits", limits) != 0;
	json_decref(requests);
	json_decref(limits);
	if (bad) {
		json_decref(resources);
		return CADRE_ENOMEM;
	}
	*out = resources;
	return 0;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct mount {
	const char *path;
	const char *claim;
};

static int compare_mounts(const void *a, const void *b)
{
	return strcmp(((const struct mount *)a)->path, ((const struct mount *)b)->path);
}

/*
 * spec.scratch, already in mount path order, as scratch-0, scratch-1, ...:
 * with a StorageClass a generic ephemeral volume (the kube-controller-manager
 * makes the claim <pod>-scratch-N, owned by the pod, so it goes with it and a
 * new pod of a restart gets a new one); without, an emptyDir of sizeLimit.
 * A path the API let through that cadre mounts itself or that sits on a
 * Volume's is refused here, naming the field.
 */
static int add_scratch_volumes(const struct pod_ctx *c, json_t *volumes, json_t *mounts)
{
	const struct tj_spec *spec = &c->job->spec;
	char name[32];
	struct buf size;
	int bad = 0;

	for (size_t i = 0; i < spec->n_scratch; i++) {
		const struct tj_scratch *sc = &spec->scratch[i];

		if (!sc->has_size || sc->size_milli < 1000)
			return build_fail(c->err, CADRE_EINVAL, "spec.scratch",
					  "%s: size must be a quantity of at least one byte",
					  sc->mount_path);
		for (size_t v = 0; v < spec->n_volumes; v++)
			if (!strcmp(sc->mount_path, spec->volumes[v].mount_path))
				return build_fail(c->err, CADRE_EINVAL, "spec.scratch",
						  "%s is the mount path of a Volume too",
						  sc->mount_path);
		if (!strcmp(sc->mount_path, "/dev/shm") || !strcmp(sc->mount_path, BUILD_BIN_DIR) ||
		    !strcmp(sc->mount_path, ENTRYPOINT_DIR))
			return build_fail(c->err, CADRE_EINVAL, "spec.scratch",
					  "%s is mounted by cadre", sc->mount_path);
	}
	buf_init(&size, 64);
	for (size_t i = 0; i < spec->n_scratch && !bad; i++) {
		const struct tj_scratch *sc = &spec->scratch[i];
		json_t *vol;

		snprintf(name, sizeof(name), "scratch-%zu", i);
		buf_reset(&size);
		bad |= quantity_format(sc->size_milli, &size) != 0;
		if (sc->storage_class_name)
			vol = json_pack("{s:s, s:{s:{s:{s:{s:s}}, s:{s:[s], s:s, s:{s:{s:s}}}}}}",
					"name", name, "ephemeral", "volumeClaimTemplate",
					"metadata", "labels", LABEL_JOB_NAME, c->job->meta.name,
					"spec", "accessModes", "ReadWriteOnce",
					"storageClassName", sc->storage_class_name,
					"resources", "requests", "storage", buf_str(&size));
		else
			vol = json_pack("{s:s, s:{s:s}}", "name", name, "emptyDir", "sizeLimit",
					buf_str(&size));
		bad |= json_array_append_new(volumes, vol) != 0;
		bad |= json_array_append_new(mounts, json_pack("{s:s, s:s}", "name", name,
				"mountPath", sc->mount_path)) != 0;
	}
	buf_release(&size);
	return bad ? CADRE_ENOMEM : 0;
}

/*
 * spec.code: bundle i's ConfigMaps as one projected volume code-<i>, read
 * only at BUILD_CODE_DIR/<i>, part k as the file k; a directory bundle's
 * path an emptyDir code-dir-<i> (the image's own directories may be
 * read-only or owned by another user, and the path may not exist in it).
 * A file bundle is written by the entrypoint at its path.
 */
static int add_code_volumes(const struct pod_ctx *c, json_t *volumes, json_t *mounts)
{
	const struct tj_spec *spec = &c->job->spec;
	const struct build_opts *opts = c->opts;
	char name[32], dir[64], cm[CODE_NAME_SIZE], file[16];
	int bad = 0;

	if (!spec->n_code)
		return 0;
	if (opts->n_code != spec->n_code || !opts->code)
		return build_fail(c->err, CADRE_EAGAIN, "spec.code",
				  "its bundles are not all in the namespace yet");
	for (size_t i = 0; i < spec->n_code && !bad; i++) {
		const struct build_code *bc = &opts->code[i];
		json_t *sources = json_array();

		if (!bc->parts || bc->parts > CODE_MAX_PARTS)
			bad = 1;
		for (uint32_t k = 0; sources && !bad && k < bc->parts; k++) {
			if (code_part_name(spec->code[i].digest, k, cm)) {
				json_decref(sources);
				return build_fail(c->err, CADRE_EINVAL, "spec.code",
						  "[%zu].digest is not a sha256 digest", i);
			}
			snprintf(file, sizeof(file), "%" PRIu32, k);
			bad |= json_array_append_new(sources, json_pack(
				"{s:{s:s, s:[{s:s, s:s}]}}", "configMap", "name", cm, "items",
				"key", CODE_PART_KEY, "path", file)) != 0;
		}
		snprintf(name, sizeof(name), "code-%zu", i);
		snprintf(dir, sizeof(dir), BUILD_CODE_DIR "/%zu", i);
		bad |= !sources || json_array_append_new(volumes, json_pack(
			"{s:s, s:{s:o, s:i}}", "name", name, "projected", "sources", sources,
			"defaultMode", 0444)) != 0;
		bad |= json_array_append_new(mounts, json_pack("{s:s, s:s, s:b}", "name", name,
				"mountPath", dir, "readOnly", 1)) != 0;
		if (bc->file)
			continue;
		snprintf(name, sizeof(name), "code-dir-%zu", i);
		bad |= json_array_append_new(volumes, json_pack("{s:s, s:{}}", "name", name,
				"emptyDir")) != 0;
		bad |= json_array_append_new(mounts, json_pack("{s:s, s:s}", "name", name,
				"mountPath", spec->code[i].path)) != 0;
	}
	return bad ? CADRE_ENOMEM : 0;
}

/*
 * CADRE_CODE for the entrypoint: per bundle a line "<digest> <dir|file>
 * <parts directory> <path>" (the path last: it is the one that may hold
 * spaces; tj_validate refuses control characters in it).
 */
static int add_code_env(const struct pod_ctx *c, json_t *env)
{
	const struct tj_spec *spec = &c->job->spec;
	struct buf list;
	int bad = 0;

	if (!spec->n_code || c->opts->n_code != spec->n_code)
		return 0;
	buf_init(&list, (size_t)1 << 16);
	for (size_t i = 0; i < spec->n_code; i++)
		bad |= buf_addf(&list, "%s %s " BUILD_CODE_DIR "/%zu %s\n", spec->code[i].digest,
				c->opts->code[i].file ? "file" : "dir", i, spec->code[i].path) != 0;
	bad |= add_env(env, ENTRYPOINT_ENV_CODE, buf_str(&list));
	buf_release(&list);
	return bad;
}

/*
 * /dev/shm as memory (NCCL and data loaders outgrow the runtime's 64 MiB),
 * BUILD_BIN_DIR for the entrypoint's Slurm commands (the image's own
 * directories may be read-only or owned by another user), the job's
 * entrypoint ConfigMap read-only at ENTRYPOINT_DIR (the command sources the
 * script from there; world-readable, since the image's user may be anyone),
 * then each spec.volumes entry as its claim. Volume names are vol-0, vol-1,
 * ... in mount path order: DNS labels whatever the paths, and the same on
 * every rank and every attempt.
 */
static int build_volumes(const struct pod_ctx *c, json_t **volumes_out, json_t **mounts_out)
{
	const struct tj_spec *spec = &c->job->spec;
	const struct build_opts *opts = c->opts;
	struct mount *order = NULL;
	json_t *volumes = NULL, *mounts = NULL;
	char name[32];
	int bad, ret = 0;

	if (opts->n_claim_names != spec->n_volumes || (spec->n_volumes && !opts->claim_names))
		return build_fail(c->err, CADRE_EINVAL, "spec.volumes",
				  "%zu volumes but %zu claim names were given", spec->n_volumes,
				  opts->n_claim_names);
	if (spec->n_volumes) {
		order = calloc(spec->n_volumes, sizeof(*order));
		if (!order)
			return CADRE_ENOMEM;
	}
	for (size_t i = 0; i < spec->n_volumes; i++) {
		order[i].path = spec->volumes[i].mount_path;
		order[i].claim = opts->claim_names[i];
		if (!order[i].claim || !*order[i].claim) {
			ret = build_fail(c->err, CADRE_EINVAL, "spec.volumes",
					 "%s: Volume %s has no claim yet", order[i].path,
					 spec->volumes[i].volume ? spec->volumes[i].volume : "");
			goto out;
		}
		if (!strcmp(order[i].path, "/dev/shm") || !strcmp(order[i].path, BUILD_BIN_DIR) ||
		    !strcmp(order[i].path, ENTRYPOINT_DIR) || !strcmp(order[i].path, BUILD_ATTEMPT_DIR)) {
			ret = build_fail(c->err, CADRE_EINVAL, "spec.volumes",
					 "%s is mounted by cadre", order[i].path);
			goto out;
		}
	}
	if (spec->n_volumes)
		qsort(order, spec->n_volumes, sizeof(*order), compare_mounts);

	/* 0444: the script is sourced, never executed, and no one writes it. */
	volumes = json_pack("[{s:s, s:{s:s}}, {s:s, s:{}}, {s:s, s:{s:s, s:i, s:[{s:s, s:s}]}}]",
			    "name", "dshm", "emptyDir", "medium", "Memory",
			    "name", "cadre-bin", "emptyDir",
			    "name", "cadre-entrypoint", "configMap", "name", c->configmap,
			    "defaultMode", 0444, "items", "key", ENTRYPOINT_KEY, "path",
			    ENTRYPOINT_KEY);
	mounts = json_pack("[{s:s, s:s}, {s:s, s:s}, {s:s, s:s, s:b}]",
			   "name", "dshm", "mountPath", "/dev/shm",
			   "name", "cadre-bin", "mountPath", BUILD_BIN_DIR,
			   "name", "cadre-entrypoint", "mountPath", ENTRYPOINT_DIR, "readOnly", 1);
	bad = !volumes || !mounts;
	for (size_t i = 0; i < spec->n_volumes && !bad; i++) {
		snprintf(name, sizeof(name), "vol-%zu", i);
		bad |= json_array_append_new(volumes, json_pack("{s:s, s:{s:s}}", "name", name,
				"persistentVolumeClaim", "claimName", order[i].claim)) != 0;
		bad |= json_array_append_new(mounts, json_pack("{s:s, s:s}", "name", name,
				"mountPath", order[i].path)) != 0;
	}
	/* InPlace: the attempt the controller tells, as a file the kubelet keeps current. */
	if (!bad && build_in_place(c->job, c->mode)) {
		bad |= json_array_append_new(volumes, json_pack("{s:s, s:{s:[{s:s, s:{s:s}}]}}",
				"name", "cadre-attempt", "downwardAPI", "items", "path", "attempt",
				"fieldRef", "fieldPath",
				"metadata.labels['" LABEL_RESTART_ATTEMPT "']")) != 0;
		bad |= json_array_append_new(mounts, json_pack("{s:s, s:s, s:b}", "name",
				"cadre-attempt", "mountPath", BUILD_ATTEMPT_DIR, "readOnly", 1)) != 0;
	}
	if (!bad && (ret = add_scratch_volumes(c, volumes, mounts)))
		goto out;
	if (!bad && (ret = add_code_volumes(c, volumes, mounts)))
		goto out;
	if (bad) {
		ret = CADRE_ENOMEM;
		goto out;
	}
	*volumes_out = volumes;
	*mounts_out = mounts;
	volumes = mounts = NULL;
out:
	json_decref(volumes);
	json_decref(mounts);
	free(order);
	return ret;
}

/*
 * {key: <label>, operator: In, values: [...]}: the label values the caller
 * saw that match the type, sorted and without duplicates. None: the job
 * must wait (CADRE_EAGAIN), since a pod without the affinity could land on
 * the wrong accelerator.
 */
static int accel_expression(const struct pod_ctx *c, json_t **out)
{
	const struct build_opts *opts = c->opts;
	const char *type = c->job->spec.resources.accel.type;
	const char **values = NULL;
	size_t n = 0;
	json_t *list = NULL;
	int bad, ret = 0;

	if (opts->n_label_values) {
		if (!opts->label_values)
			return build_fail(c->err, CADRE_EINVAL, "", "label_values is NULL");
		values = calloc(opts->n_label_values, sizeof(*values));
		if (!values)
			return CADRE_ENOMEM;
	}
	for (size_t i = 0; i < opts->n_label_values; i++)
		if (accel_matches_label(type, opts->label_values[i]))
			values[n++] = opts->label_values[i];
	if (n == 0) {
		ret = build_fail(c->err, CADRE_EAGAIN, "spec.resources.accelerators",
				 "no node has accelerator type %s (label %s)", type, c->accel_label);
		goto out;
	}
	qsort(values, n, sizeof(*values), compare_strings);
	list = json_array();
	bad = !list;
	for (size_t i = 0; i < n && !bad; i++)
		if (i == 0 || strcmp(values[i], values[i - 1]))
			bad |= json_array_append_new(list, json_string(values[i])) != 0;
	if (!bad) {
		*out = json_pack("{s:s, s:s, s:O}", "key", c->accel_label, "operator", "In",
				 "values", list);
		bad = !*out;
	}
	if (bad)
		ret = CADRE_ENOMEM;
out:
	json_decref(list);
	free(values);
	return ret;
}

/*
 * parent[key] in *child, made empty (an object, or a list if array) when
 * absent. CADRE_EINVAL when it is there with another type.
 */
static int member(json_t *parent, const char *key, bool array, json_t **child)
{
	json_t *v = json_object_get(parent, key);

	if (v) {
		*child = v;
		return (array ? json_is_array(v) : json_is_object(v)) ? 0 : CADRE_EINVAL;
	}
	v = array ? json_array() : json_object();
	*child = v;
	return json_object_set_new(parent, key, v) ? CADRE_ENOMEM : 0;
}

/*
 * Whether the pod must keep off the nodes status.excludedNodes lists: in the
 * modes where cadre does not choose the node (pinned, the admission already
 * left them out).
 */
static bool avoid_nodes(const struct pod_ctx *c)
{
	return !c->opts->node && c->job->status.n_excluded_nodes > 0;
}

/* {key: metadata.name, operator: NotIn, values: [the excluded nodes]}. */
static int avoid_field(const struct pod_ctx *c, json_t **out)
{
	const struct tj_status *st = &c->job->status;
	json_t *values = json_array();

	for (size_t i = 0; values && i < st->n_excluded_nodes; i++)
		if (st->excluded_nodes[i].node &&
		    json_array_append_new(values, json_string(st->excluded_nodes[i].node))) {
			json_decref(values);
			values = NULL;
		}
	*out = values ? json_pack("{s:s, s:s, s:o}", "key", "metadata.name", "operator", "NotIn",
				  "values", values) : NULL;
	return *out ? 0 : CADRE_ENOMEM;
}

/* {key: metadata.name, operator: In, values: [node]}: the pod's own node, by name. */
static int pin_field(const char *node, json_t **out)
{
	*out = json_pack("{s:s, s:s, s:[s]}", "key", "metadata.name", "operator", "In", "values",
			 node);
	return *out ? 0 : CADRE_ENOMEM;
}

/*
 * Append a copy of item to term[key] (a list, made when absent), for every
 * term. CADRE_EINVAL (said in err) when a term or the list has another shape.
 */
static int and_into_terms(const struct pod_ctx *c, json_t *terms, const char *key,
			  const json_t *item)
{
	json_t *term, *list;
	size_t i;
	int ret;

	json_array_foreach(terms, i, term) {
		ret = json_is_object(term) ? member(term, key, true, &list) : CADRE_EINVAL;
		if (ret == CADRE_EINVAL)
			build_fail(c->err, ret, "spec.podTemplate.spec.affinity.nodeAffinity",
				   "nodeSelectorTerms[%zu] must be a term with a list of %s", i, key);
		if (!ret && json_array_append_new(list, json_deep_copy(item)))
			ret = CADRE_ENOMEM;
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * podTemplate's affinity with the accelerator requirement and the pinned
 * node (build_opts.node) AND-ed in: terms of nodeSelectorTerms are OR-ed by
 * the scheduler, so each goes into every term (a new single term when there
 * is none). The rest of the user's affinity (pod affinity, preferences)
 * passes as given.
 */
static int build_affinity(const struct pod_ctx *c, json_t **out)
{
	static const char path[] = "spec.podTemplate.spec.affinity.nodeAffinity";
	const json_t *template = c->job->spec.pod_template.affinity;
	json_t *affinity = NULL, *expr = NULL, *pin = NULL, *node, *required, *terms;
	int ret;

	/* A claim's selector picks the type of a DRA device; the node's label may not say it. */
	bool by_label = c->gpus > 0 && !build_uses_claim_template(c->job);

	*out = NULL;
	if (!by_label && !c->opts->node && !avoid_nodes(c)) {
		if (template)
			*out = json_deep_copy(template);
		return template && !*out ? CADRE_ENOMEM : 0;
	}
	if (by_label && (ret = accel_expression(c, &expr)))
		return ret;
	if (c->opts->node)
		ret = pin_field(c->opts->node, &pin);
	else if (avoid_nodes(c))
		ret = avoid_field(c, &pin);
	if (ret)
		goto out;
	ret = CADRE_ENOMEM;
	affinity = copy_or_new(template, false);
	if (!affinity)
		goto out;
	if (!json_is_object(affinity)) {
		ret = build_fail(c->err, CADRE_EINVAL, "spec.podTemplate.spec.affinity",
				 "must be an object");
		goto out;
	}
	if ((ret = member(affinity, "nodeAffinity", false, &node)) ||
	    (ret = member(node, "requiredDuringSchedulingIgnoredDuringExecution", false,
			  &required)) ||
	    (ret = member(required, "nodeSelectorTerms", true, &terms))) {
		if (ret == CADRE_EINVAL)
			build_fail(c->err, ret, path, "requiredDuringSchedulingIgnoredDuringExecution"
				   ".nodeSelectorTerms must be a list of terms");
		goto out;
	}
	ret = CADRE_ENOMEM;
	if (json_array_size(terms) == 0 && json_array_append_new(terms, json_object()))
		goto out;
	if ((expr && (ret = and_into_terms(c, terms, "matchExpressions", expr))) ||
	    (pin && (ret = and_into_terms(c, terms, "matchFields", pin))))
		goto out;
	*out = affinity;
	affinity = NULL;
	ret = 0;
out:
	json_decref(affinity);
	json_decref(expr);
	json_decref(pin);
	return ret;
}

/* The accelerator's taint is tolerated first, then podTemplate's tolerations as given. */
static int build_tolerations(const struct pod_ctx *c, json_t **out)
{
	const json_t *template = c->job->spec.pod_template.tolerations;
	json_t *list;

	*out = NULL;
	if (template && !json_is_array(template))
		return build_fail(c->err, CADRE_EINVAL, "spec.podTemplate.spec.tolerations",
				  "must be a list");
	if (c->gpus == 0 && json_array_size(template) == 0)
		return 0;
	list = json_array();
	if (!list)
		return CADRE_ENOMEM;
	if (c->gpus > 0 &&
	    json_array_append_new(list, json_pack("{s:s, s:s, s:s}", "key", c->accel_resource,
						  "operator", "Exists", "effect", "NoSchedule")))
		goto nomem;
	for (size_t i = 0; i < json_array_size(template); i++)
		if (json_array_append_new(list, json_deep_copy(json_array_get(template, i))))
			goto nomem;
	*out = list;
	return 0;
nomem:
	json_decref(list);
	return CADRE_ENOMEM;
}

/*
 * spec.topology as Kueue's TAS annotations on the pod group: required, else
 * preferred (Kueue takes one of the two; a job with both gets required and
 * an event, tj_topology_unexpressed), the segment as a slice, and the pod's
 * rank as the group's pod index so Kueue places ranks in topology order.
 */
static int add_kueue_topology(const struct tj_topology *t, json_t *annotations)
{
	char text[16];
	int bad = 0;

	if (!t->set)
		return 0;
	if (t->required)
		bad |= set_str(annotations, BUILD_KUEUE_TAS_REQUIRED, t->required);
	else if (t->preferred)
		bad |= set_str(annotations, BUILD_KUEUE_TAS_PREFERRED, t->preferred);
	if (t->has_segment && t->segment_required) {
		snprintf(text, sizeof(text), "%d", t->segment_size);
		bad |= set_str(annotations, BUILD_KUEUE_TAS_SLICE_REQUIRED, t->segment_required);
		bad |= set_str(annotations, BUILD_KUEUE_TAS_SLICE_SIZE, text);
	}
	bad |= set_str(annotations, BUILD_KUEUE_POD_INDEX_LABEL, LABEL_NODE_RANK);
	return bad;
}

/*
 * Labels and annotations: podTemplate's first, then cadre's over them, so
 * a template cannot take a pod out of its Service, its gang or its Kueue
 * group.
 */
static int build_meta(const struct pod_ctx *c, const char *pod_name, json_t **out)
{
	const struct trainingjob *job = c->job;
	const struct tj_pod_template *tpl = &job->spec.pod_template;
	json_t *meta = NULL, *labels, *annotations, *owners = NULL;
	char text[64];
	int bad;

	labels = copy_or_new(tpl->labels, false);
	annotations = copy_or_new(tpl->annotations, false);
	bad = !labels || !annotations;
	if (!bad && (!json_is_object(labels) || !json_is_object(annotations))) {
		json_decref(labels);
		json_decref(annotations);
		return build_fail(c->err, CADRE_EINVAL, "spec.podTemplate.metadata",
				  "labels and annotations must be maps");
	}
	bad |= set_str(labels, LABEL_JOB_NAME, job->meta.name);
	snprintf(text, sizeof(text), "%d", c->rank);
	bad |= set_str(labels, LABEL_NODE_RANK, text);
	snprintf(text, sizeof(text), "%d", c->attempt);
	bad |= set_str(labels, LABEL_RESTART_ATTEMPT, text);
	if (job->spec.nodes.exclusive)
		bad |= set_str(labels, LABEL_EXCLUSIVE, "true");
	bad |= set_str(annotations, ANNOTATION_JOB_UID, job->meta.uid);
	if (c->mode == GANG_KUEUE) {
		/*
		 * Without spec.queue the label is left out and Kueue's default
		 * LocalQueue (if the cluster has one) takes the group.
		 */
		if (job->spec.queue && *job->spec.queue)
			bad |= set_str(labels, BUILD_KUEUE_QUEUE_LABEL, job->spec.queue);
		snprintf(text, sizeof(text), "%s-%d", job->meta.name, c->attempt);
		bad |= set_str(labels, BUILD_KUEUE_GROUP_LABEL, text);
		snprintf(text, sizeof(text), "%d", c->num_nodes);
		bad |= set_str(annotations, BUILD_KUEUE_COUNT_ANNOTATION, text);
		bad |= add_kueue_topology(&job->spec.topology, annotations);
		/* Kueue reads a WorkloadPriorityClass from the pods; the job names it
		 * on itself, as a batch Job does (docs/kueue.md). */
		if (json_is_string(json_object_get(job->meta.labels, KUEUE_PRIORITY_LABEL)))
			bad |= set_str(labels, KUEUE_PRIORITY_LABEL,
				       json_string_value(json_object_get(job->meta.labels,
									 KUEUE_PRIORITY_LABEL)));
	}
	bad |= build_owner_refs(TJ_API_VERSION, TJ_KIND, job->meta.name, job->meta.uid,
				&owners) != 0;
	if (!bad)
		meta = json_pack("{s:s, s:s, s:O, s:O, s:O}", "name", pod_name,
				 "namespace", job->meta.namespace, "labels", labels,
				 "annotations", annotations, "ownerReferences", owners);
	json_decref(labels);
	json_decref(annotations);
	json_decref(owners);
	if (!meta)
		return CADRE_ENOMEM;
	*out = meta;
	return 0;
}

/*
 * The Service's own domain searched first, so the short host names of
 * SLURM_JOB_NODELIST resolve (`getent hosts llama-pretrain-1`); the
 * cluster's default search path follows it, since dnsConfig adds to it.
 */
static int add_dns_search(const struct pod_ctx *c, json_t *pspec)
{
	const char *domain = c->opts->cluster_domain && *c->opts->cluster_domain ?
			     c->opts->cluster_domain : OPTIONS_DEFAULT_CLUSTER_DOMAIN;
	struct buf search;
	int bad;

	buf_init(&search, 1024);
	bad = buf_addf(&search, "%s.%s.svc.%s", c->job->meta.name, c->job->meta.namespace,
		       domain) != 0;
	if (!bad)
		bad = json_object_set_new(pspec, "dnsConfig",
					  json_pack("{s:[s]}", "searches", buf_str(&search))) != 0;
	buf_release(&search);
	return bad;
}

/* Checks that need nothing built yet; fills what the parts share. */
static int pod_ctx_init(struct pod_ctx *c, const struct trainingjob *job, int rank, int attempt,
			const struct build_opts *opts, struct buf *err)
{
	const struct tj_spec *spec = &job->spec;
	const struct tj_resources *res = &spec->resources;
	const char *name = job->meta.name;

	memset(c, 0, sizeof(*c));
	c->job = job;
	c->opts = opts;
	c->rank = rank;
	c->attempt = attempt;
	c->err = err;
	c->num_nodes = spec->has_num_nodes ? spec->num_nodes : TJ_DEFAULT_NUM_NODES;
	c->mode = spec->queue && *spec->queue ? GANG_KUEUE : opts->mode;
	c->accel_label = opts->accelerator_label && *opts->accelerator_label ?
			 opts->accelerator_label : BUILD_DEFAULT_ACCELERATOR_LABEL;
	c->accel_resource = res->accelerator_resource && *res->accelerator_resource ?
			    res->accelerator_resource : TJ_DEFAULT_ACCELERATOR_RESOURCE;

	if (!name || !*name)
		return build_fail(err, CADRE_EINVAL, "metadata.name", "required");
	if (!job->meta.namespace || !*job->meta.namespace)
		return build_fail(err, CADRE_EINVAL, "metadata.namespace", "required");
	if (!job->meta.uid || !*job->meta.uid)
		return build_fail(err, CADRE_EINVAL, "metadata.uid",
				  "required: owner references name the uid");
	if (c->num_nodes < 1)
		return build_fail(err, CADRE_EINVAL, "spec.numNodes", "must be >= 1");
	if (rank < 0 || rank >= c->num_nodes)
		return build_fail(err, CADRE_EINVAL, "spec.numNodes",
				  "rank %d is outside 0..%d", rank, c->num_nodes - 1);
	if (attempt < 0)
		return build_fail(err, CADRE_EINVAL, "status.restarts",
				  "attempt %d is negative", attempt);
	/* The last rank's hostname is the longest: <job>-<numNodes-1>. */
	if (snprintf(NULL, 0, "%s-%d", name, c->num_nodes - 1) > HOSTNAME_MAX)
		return build_fail(err, CADRE_EINVAL, "metadata.name",
				  "too long: %s-%d must be a hostname of at most %d characters",
				  name, c->num_nodes - 1, HOSTNAME_MAX);
	/* Shorter than a host name, the name fits the ConfigMap's. */
	if (build_entrypoint_name(name, c->configmap, sizeof(c->configmap)))
		return build_fail(err, CADRE_EINVAL, "metadata.name",
				  "too long for the ConfigMap <name>%s", BUILD_ENTRYPOINT_SUFFIX);
	c->image = spec->image && *spec->image ? spec->image : opts->default_image;
	if (!c->image || !*c->image)
		return build_fail(err, CADRE_EINVAL, "spec.image",
				  "required: the controller has no --default-image");
	if (!spec->run || !*spec->run)
		return build_fail(err, CADRE_EINVAL, "spec.run", "required");
	if (!job->status.job_id || !*job->status.job_id)
		return build_fail(err, CADRE_EINVAL, "status.jobId", "not assigned yet");
	if (!job->status.task_id || !*job->status.task_id)
		return build_fail(err, CADRE_EINVAL, "status.taskId", "not assigned yet");
	if (res->cpus && !res->has_cpus)
		return build_fail(err, CADRE_EINVAL, "spec.resources.cpus",
				  "\"%s\" is not a quantity", res->cpus);
	if (res->memory && !res->has_memory)
		return build_fail(err, CADRE_EINVAL, "spec.resources.memory",
				  "\"%s\" is not a quantity", res->memory);
	if (res->accelerators && !res->has_accel)
		return build_fail(err, CADRE_EINVAL, "spec.resources.accelerators",
				  "\"%s\" is not <type>[:<count>]", res->accelerators);
	if (res->has_accel) {
		if (res->accel.count < 1)
			return build_fail(err, CADRE_EINVAL, "spec.resources.accelerators",
					  "count must be >= 1");
		c->gpus = res->accel.count;
	}
	return 0;
}

int build_pod(const struct trainingjob *job, int rank, int attempt,
	      const struct build_opts *opts, json_t **out, struct buf *err)
{
	const struct tj_spec *spec = &job->spec;
	const struct tj_pod_template *tpl = &spec->pod_template;
	json_t *pod = NULL, *meta = NULL, *env = NULL, *resources = NULL, *volumes = NULL;
	json_t *mounts = NULL, *affinity = NULL, *tolerations = NULL, *container, *pspec;
	json_t *claims = NULL, *claimed = NULL;
	char pod_name[HOSTNAME_MAX + 1];
	struct pod_ctx c;
	int bad, ret;

	*out = NULL;
	ret = pod_ctx_init(&c, job, rank, attempt, opts, err);
	if (ret)
		return ret;
	snprintf(pod_name, sizeof(pod_name), "%s-%d", job->meta.name, rank);
	if ((ret = build_meta(&c, pod_name, &meta)) ||
	    (ret = build_env(&c, &env)) ||
	    (ret = build_resources(&c, &resources)) ||
	    (ret = build_volumes(&c, &volumes, &mounts)) ||
	    (ret = build_affinity(&c, &affinity)) ||
	    (ret = build_tolerations(&c, &tolerations)))
		goto out;
	if ((ret = build_pod_claims(job, attempt, &claims, &claimed))) {
		if (ret == CADRE_EINVAL)
			build_fail(err, ret, "metadata.name", "too long for the names of its claims");
		goto out;
	}
	if (claimed && json_object_set(resources, "claims", claimed)) {
		ret = CADRE_ENOMEM;
		goto out;
	}

	ret = CADRE_ENOMEM;
	/*
	 * FallbackToLogsOnError: when user code fails without writing a
	 * termination message, the tail of its log becomes one, which the
	 * reconciler copies into status.lastFailure.
	 */
	container = json_pack("{s:s, s:s, s:o, s:[{s:{s:s}}], s:O, s:O, s:O, s:s}",
			      "name", MAIN_CONTAINER, "image", c.image, "command", entrypoint_command(),
			      "envFrom", "configMapRef", "name", c.configmap,
			      "env", env, "resources", resources, "volumeMounts", mounts,
			      "terminationMessagePolicy", "FallbackToLogsOnError");
	if (!container)
		goto out;
	/*
	 * InPlace: a run that ends non-zero (the program's failure, or the
	 * entrypoint's stop for the next attempt) restarts this container in the
	 * same pod; the entrypoint then waits for the attempt the controller tells.
	 */
	if (build_in_place(job, c.mode) &&
	    (json_object_set_new(container, "restartPolicy", json_string("Never")) ||
	     json_object_set_new(container, "restartPolicyRules",
				 json_pack("[{s:s, s:{s:s, s:[i]}}]", "action", "Restart",
					   "exitCodes", "operator", "NotIn", "values", 0)))) {
		json_decref(container);
		goto out;
	}
	/* Validation let through only what takes privilege away (docs/pods.md). */
	if (tpl->container_security_context &&
	    json_object_set_new(container, "securityContext",
				json_deep_copy(tpl->container_security_context))) {
		json_decref(container);
		goto out;
	}
	pod = json_pack("{s:s, s:s, s:O, s:{s:s, s:s, s:s, s:[o], s:O}}",
			"apiVersion", "v1", "kind", "Pod", "metadata", meta,
			"spec", "hostname", pod_name, "subdomain", job->meta.name,
			"restartPolicy", "Never", "containers", container, "volumes", volumes);
	if (!pod)
		goto out;
	pspec = json_object_get(pod, "spec");
	bad = 0;
	if (c.mode == GANG_NATIVE) {
		/* kube-scheduler holds the pods until the whole PodGroup fits: no gate of ours. */
		char group[256];

		bad |= build_podgroup_name(job->meta.name, attempt, group, sizeof(group)) ||
		       json_object_set_new(pspec, "schedulingGroup",
					   json_pack("{s:s}", "podGroupName", group)) != 0;
	}
	bad |= add_dns_search(&c, pspec);
	if (affinity)
		bad |= json_object_set(pspec, "affinity", affinity) != 0;
	if (tolerations)
		bad |= json_object_set(pspec, "tolerations", tolerations) != 0;
	if (claims)
		bad |= json_object_set(pspec, "resourceClaims", claims) != 0;
	if (tpl->node_selector && json_object_size(tpl->node_selector))
		bad |= json_object_set_new(pspec, "nodeSelector",
					   json_deep_copy(tpl->node_selector)) != 0;
	if (tpl->image_pull_secrets && json_array_size(tpl->image_pull_secrets))
		bad |= json_object_set_new(pspec, "imagePullSecrets",
					   json_deep_copy(tpl->image_pull_secrets)) != 0;
	if (tpl->service_account_name && *tpl->service_account_name)
		bad |= set_str(pspec, "serviceAccountName", tpl->service_account_name);
	if (tpl->runtime_class_name && *tpl->runtime_class_name)
		bad |= set_str(pspec, "runtimeClassName", tpl->runtime_class_name);
	if (tpl->scheduler_name && *tpl->scheduler_name)
		bad |= set_str(pspec, "schedulerName", tpl->scheduler_name);
	if (tpl->security_context)
		bad |= json_object_set_new(pspec, "securityContext",
					   json_deep_copy(tpl->security_context)) != 0;
	if (spec->priority_class_name && *spec->priority_class_name)
		bad |= set_str(pspec, "priorityClassName", spec->priority_class_name);
	if (tj_termination_grace_seconds(spec) >= 0)
		bad |= json_object_set_new(pspec, "terminationGracePeriodSeconds",
					   json_integer(tj_termination_grace_seconds(spec))) != 0;
	if (bad)
		goto out;
	*out = pod;
	pod = NULL;
	ret = 0;
out:
	json_decref(pod);
	json_decref(meta);
	json_decref(env);
	json_decref(resources);
	json_decref(volumes);
	json_decref(mounts);
	json_decref(affinity);
	json_decref(tolerations);
	json_decref(claims);
	json_decref(claimed);
	return ret;
}

int build_shared_env(const struct trainingjob *job, const struct build_opts *opts,
		     json_t **out, struct buf *err)
{
	struct trainingjob view = *job;
	char job_id[16], task_id[TJ_TASK_ID_MAX];
	struct pod_ctx c;
	int ret;

	*out = NULL;
	/* Derived as the planner derives them, so a job's first ConfigMap is already its last. */
	if (!view.status.job_id || !*view.status.job_id) {
		tj_job_id(job->meta.uid, job_id);
		view.status.job_id = job_id;
	}
	if (!view.status.task_id || !*view.status.task_id) {
		tj_task_id(&job->meta, view.status.job_id, task_id);
		view.status.task_id = task_id;
	}
	ret = pod_ctx_init(&c, &view, 0, 0, opts, err);
	return ret ? ret : build_shared(&c, out);
}
