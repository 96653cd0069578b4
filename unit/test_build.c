/*
 * The builders, against golden JSON in unit/testdata/golden/ (inputs in
 * unit/testdata/golden/inputs/). Objects are compared with json_equal, so
 * key order does not matter. To accept a deliberate change, run
 *   CADRE_UPDATE_GOLDEN=1 ./build/cadre-unit --filter 'build/[a-z]*'
 * and review the diff of the golden files. The entrypoint script inside the
 * entrypoint ConfigMap is checked against entrypoint_script() and replaced by
 * a placeholder before comparing, so editing the script does not touch them.
 */
#include <criterion/criterion.h>
#include <openssl/evp.h>

#include "base/buf.h"
#include "base/err.h"
#include "api/fielderr.h"
#include "api/name.h"
#include "api/trainingjob.h"
#include "api/volume.h"
#include "controller/build/build.h"
#include "controller/build/entrypoint.h"
#include "unit/support/podenv.h"

#define GOLDEN_DIR CADRE_SOURCE_DIR "/unit/testdata/golden"
#define SCRIPT_PLACEHOLDER "<entrypoint_script()>"

static json_t *load_json(const char *path)
{
	json_error_t error;
	json_t *v = json_load_file(path, 0, &error);

	cr_assert_not_null(v, "%s:%d: %s", path, error.line, error.text);
	return v;
}

/* The job in inputs/<name>.json, parsed and validated; edit (may be NULL) changes the JSON first. */
static void load_job(const char *name, void (*edit)(json_t *obj), struct trainingjob *tj)
{
	struct field_errors errs;
	struct buf path, msg;
	json_t *obj;

	buf_init(&path, 512);
	buf_init(&msg, 4096);
	buf_addf(&path, "%s/inputs/%s.json", GOLDEN_DIR, name);
	obj = load_json(buf_str(&path));
	if (edit)
		edit(obj);
	field_errors_init(&errs);
	tj_parse(obj, tj, &errs);
	tj_validate(tj, &errs);
	field_errors_join(&errs, &msg);
	cr_assert_eq(field_errors_count(&errs), 0, "%s: %s", name, buf_str(&msg));
	field_errors_release(&errs);
	json_decref(obj);
	buf_release(&path);
	buf_release(&msg);
}

/* The Volume named name in inputs/volumes.json. */
static void load_volume(const char *name, struct volume *vol)
{
	struct field_errors errs;
	struct buf msg;
	json_t *all = load_json(GOLDEN_DIR "/inputs/volumes.json"), *obj;
	size_t i;

	json_array_foreach(all, i, obj) {
		const char *n = json_string_value(json_object_get(json_object_get(obj, "metadata"),
								  "name"));
		if (strcmp(n, name))
			continue;
		field_errors_init(&errs);
		buf_init(&msg, 4096);
		vol_parse(obj, vol, &errs);
		vol_validate(vol, &errs);
		field_errors_join(&errs, &msg);
		cr_assert_eq(field_errors_count(&errs), 0, "%s: %s", name, buf_str(&msg));
		field_errors_release(&errs);
		buf_release(&msg);
		json_decref(all);
		return;
	}
	cr_assert_fail("no Volume %s in volumes.json", name);
}

static char *dump(const json_t *v)
{
	return json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS);
}

/* got must equal golden/<name>.json (or becomes it under CADRE_UPDATE_GOLDEN=1). */
static void assert_golden(const char *name, const json_t *got)
{
	const char *update = getenv("CADRE_UPDATE_GOLDEN");
	struct buf path;
	json_t *want;

	buf_init(&path, 512);
	buf_addf(&path, "%s/%s.json", GOLDEN_DIR, name);
	if (update && !strcmp(update, "1")) {
		cr_assert_eq(json_dump_file(got, buf_str(&path), JSON_INDENT(2) | JSON_SORT_KEYS), 0);
		FILE *f = fopen(buf_str(&path), "a");
		cr_assert_not_null(f);
		fputc('\n', f);
		fclose(f);
	}
	want = load_json(buf_str(&path));
	if (!json_equal(want, got)) {
		char *a = dump(got), *b = dump(want);

		cr_assert_fail("%s differs from the golden file.\ngot:\n%s\nwanted:\n%s\n"
			       "(CADRE_UPDATE_GOLDEN=1 rewrites it)", name, a, b);
		free(a);
		free(b);
	}
	json_decref(want);
	buf_release(&path);
}

static json_t *container_of(const json_t *pod)
{
	return json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
}

/*
 * Every pod's command is the one short line that sources the entrypoint from
 * its ConfigMap: the script itself is never in a pod (docs/pods.md).
 */
static void replace_script(json_t *pod)
{
	json_t *cmd = json_object_get(container_of(pod), "command");

	cr_assert_eq(json_array_size(cmd), 3);
	cr_assert_str_eq(json_string_value(json_array_get(cmd, 0)), "/bin/sh");
	cr_assert_str_eq(json_string_value(json_array_get(cmd, 1)), "-c");
	cr_assert_str_eq(json_string_value(json_array_get(cmd, 2)),
			 ". /cadre/entrypoint/entrypoint.sh");
}

static const char *const h100_values[] = {
	"NVIDIA-H100-NVL", "NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-NVL",
};

static struct build_opts llama_opts(void)
{
	static const char *const claims[] = { "shared-checkpoints" };

	return (struct build_opts){
		.mode = GANG_BUILTIN,
		.accelerator_label = "nvidia.com/gpu.product",
		.label_values = h100_values,
		.n_label_values = sizeof(h100_values) / sizeof(h100_values[0]),
		.claim_names = claims,
		.n_claim_names = 1,
	};
}

/* The shared variables of the job of the last pod_ok (env_value); never freed: one test each. */
static json_t *last_shared;

static json_t *pod_ok(const struct trainingjob *tj, int rank, int attempt,
		      const struct build_opts *opts)
{
	struct buf err;
	json_t *pod = NULL;
	int ret;

	buf_init(&err, 4096);
	ret = build_pod(tj, rank, attempt, opts, &pod, &err);
	cr_assert_eq(ret, 0, "build_pod: %d %s", ret, buf_str(&err));
	cr_assert_not_null(pod);
	json_decref(last_shared);
	last_shared = NULL;
	cr_assert_eq(build_shared_env(tj, opts, &last_shared, &err), 0, "%s", buf_str(&err));
	buf_release(&err);
	return pod;
}

/* Build and expect failure with code and a message starting with prefix. */
static void pod_fails(const struct trainingjob *tj, int rank, const struct build_opts *opts,
		      int code, const char *prefix)
{
	struct buf err;
	json_t *pod = (json_t *)1;

	buf_init(&err, 4096);
	cr_assert_eq(build_pod(tj, rank, 0, opts, &pod, &err), code, "%s", buf_str(&err));
	cr_assert_null(pod);
	cr_assert_eq(strncmp(buf_str(&err), prefix, strlen(prefix)), 0,
		     "message \"%s\" does not start with \"%s\"", buf_str(&err), prefix);
	buf_release(&err);
}

/*
 * The variable name as pod's container gets it: from the pod's env, which
 * wins, else from its ConfigMap's data, the shared variables of the job of
 * the last pod_ok (each test runs in a process of its own).
 */
static const char *env_value(const json_t *pod, const char *name)
{
	json_t *env = json_object_get(container_of(pod), "env"), *e;
	size_t i;

	json_array_foreach(env, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "name")), name))
			return json_string_value(json_object_get(e, "value"));
	return json_string_value(json_object_get(last_shared, name));
}

static const char *label(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(
		json_object_get(json_object_get(obj, "metadata"), "labels"), key));
}

static const char *annotation(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(
		json_object_get(json_object_get(obj, "metadata"), "annotations"), key));
}

static json_t *pod_spec(const json_t *pod)
{
	return json_object_get(pod, "spec");
}

Test(build, service_matches_golden)
{
	struct trainingjob tj;
	json_t *svc = NULL;

	load_job("llama-pretrain", NULL, &tj);
	cr_assert_eq(build_service(&tj, &svc, NULL), 0);
	assert_golden("llama-pretrain.service", svc);
	json_decref(svc);
	tj_release(&tj);
}

Test(build, service_needs_the_uid_for_its_owner_reference)
{
	struct trainingjob tj;
	struct buf err;
	json_t *svc = NULL;

	load_job("llama-pretrain", NULL, &tj);
	free(tj.meta.uid);
	tj.meta.uid = NULL;
	buf_init(&err, 256);
	cr_assert_eq(build_service(&tj, &svc, &err), CADRE_EINVAL);
	cr_assert_null(svc);
	cr_assert_str_eq(buf_str(&err), "metadata.uid: required: owner references name the uid");
	buf_release(&err);
	tj_release(&tj);
}

static void assert_json(json_t *got, const char *want_text);

/* The script travels in the ConfigMap; the golden file holds a placeholder for it. */
Test(build, entrypoint_configmap_matches_golden_and_holds_exactly_the_script)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	unsigned char *decoded;
	const char *b64;
	json_t *cm = NULL, *bin;
	size_t len = strlen(entrypoint_script());
	int n;

	load_job("llama-pretrain", NULL, &tj);
	cr_assert_eq(build_entrypoint_configmap(&tj, &opts, &cm, NULL), 0);
	bin = json_object_get(cm, "binaryData");
	cr_assert_eq(json_object_size(bin), 1);
	b64 = json_string_value(json_object_get(bin, ENTRYPOINT_KEY));
	cr_assert_not_null(b64);
	/* Base64 that decodes to the script, byte for byte (padding decodes as zeros). */
	decoded = malloc(strlen(b64));
	n = EVP_DecodeBlock(decoded, (const unsigned char *)b64, (int)strlen(b64));
	cr_assert_geq(n, (int)len);
	cr_assert_eq(memcmp(decoded, entrypoint_script(), len), 0);
	for (int i = (int)len; i < n; i++)
		cr_assert_eq(decoded[i], 0);
	free(decoded);
	json_object_set_new(bin, ENTRYPOINT_KEY, json_string(SCRIPT_PLACEHOLDER));
	assert_golden("llama-pretrain.configmap", cm);
	json_decref(cm);
	tj_release(&tj);
}

/* A ConfigMap key the pod's envFrom takes as a variable, and not one the pod sets itself. */
static void assert_shared_and_own_apart(const json_t *data, const json_t *pod)
{
	const json_t *e;
	size_t i;

	json_array_foreach(json_object_get(container_of(pod), "env"), i, e)
		cr_assert_null(json_object_get(data, json_string_value(json_object_get(e, "name"))),
			       "%s both in the ConfigMap and the pod",
			       json_string_value(json_object_get(e, "name")));
}

/*
 * What every rank shares is the ConfigMap's data, taken whole by envFrom;
 * each pod sets only its rank and restart count; together they are
 * docs/design.md 2.3 and 2.4.
 */
Test(build, the_shared_variables_are_the_configmaps_data_and_each_pod_sets_only_its_own)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *cm = NULL, *data, *shared = NULL;

	load_job("llama-pretrain", NULL, &tj);
	cr_assert_eq(build_entrypoint_configmap(&tj, &opts, &cm, NULL), 0);
	data = json_object_get(cm, "data");
	cr_assert_eq(build_shared_env(&tj, &opts, &shared, NULL), 0);
	cr_assert(json_equal(data, shared));
	cr_assert_str_eq(json_string_value(json_object_get(data, "MASTER_ADDR")),
			 "llama-pretrain-0.llama-pretrain.research.svc.cluster.local");
	cr_assert_str_eq(json_string_value(json_object_get(data, "SLURM_JOB_NODELIST")),
			 "llama-pretrain-[0-1]");
	cr_assert_null(json_object_get(data, "NODE_RANK"));
	cr_assert_null(json_object_get(data, "CADRE_RESTART_ATTEMPT"));
	for (int rank = 0; rank < 2; rank++) {
		json_t *pod = pod_ok(&tj, rank, 4, &opts);
		char want[1024];

		assert_json(json_object_get(container_of(pod), "envFrom"),
			    "[{\"configMapRef\": {\"name\": \"llama-pretrain-entrypoint\"}}]");
		assert_shared_and_own_apart(data, pod);
		snprintf(want, sizeof(want),
			 "[{\"name\": \"SKYPILOT_NODE_RANK\", \"value\": \"%d\"},"
			 " {\"name\": \"NODE_RANK\", \"value\": \"%d\"},"
			 " {\"name\": \"SLURM_NODEID\", \"value\": \"%d\"},"
			 " {\"name\": \"SLURM_PROCID\", \"value\": \"%d\"},"
			 " {\"name\": \"CADRE_RESTART_ATTEMPT\", \"value\": \"4\"},"
			 " {\"name\": \"SLURM_RESTART_COUNT\", \"value\": \"4\"},"
			 " {\"name\": \"BATCH_SIZE\", \"value\": \"32\"},"
			 " {\"name\": \"HF_TOKEN\", \"valueFrom\": {\"secretKeyRef\":"
			 " {\"key\": \"token\", \"name\": \"hf\"}}}]", rank, rank, rank, rank);
		assert_json(json_object_get(container_of(pod), "env"), want);
		json_decref(pod);
	}
	json_decref(shared);
	json_decref(cm);
	tj_release(&tj);
}

/*
 * A job with no status yet gets the ids the planner will store: its first
 * ConfigMap is already the one its pods need, with no second write.
 */
Test(build, a_new_jobs_configmap_carries_the_ids_the_planner_will_store)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	char job_id[16], task_id[TJ_TASK_ID_MAX], before[BUILD_DIGEST_SIZE];
	char after[BUILD_DIGEST_SIZE];
	json_t *shared = NULL;

	load_job("llama-pretrain", NULL, &tj);
	free(tj.status.job_id);
	free(tj.status.task_id);
	tj.status.job_id = tj.status.task_id = NULL;
	cr_assert_eq(build_entrypoint_digest(&tj, &opts, before), 0);
	cr_assert_eq(build_shared_env(&tj, &opts, &shared, NULL), 0);
	tj_job_id(tj.meta.uid, job_id);
	tj_task_id(&tj.meta, job_id, task_id);
	cr_assert_str_eq(json_string_value(json_object_get(shared, "SLURM_JOB_ID")), job_id);
	cr_assert_str_eq(json_string_value(json_object_get(shared, "SKYPILOT_TASK_ID")), task_id);
	tj.status.job_id = strdup(job_id);
	tj.status.task_id = strdup(task_id);
	cr_assert_eq(build_entrypoint_digest(&tj, &opts, after), 0);
	cr_assert_str_eq(before, after, "storing the ids must not make the ConfigMap stale");
	json_decref(shared);
	tj_release(&tj);
}

/* A job that cannot become pods has a ConfigMap with the script and no variables. */
Test(build, a_job_that_cannot_become_pods_gets_a_configmap_without_variables)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *cm = NULL;

	load_job("cpu-only", NULL, &tj);
	free(tj.spec.image);
	tj.spec.image = NULL;
	cr_assert_eq(build_entrypoint_configmap(&tj, &opts, &cm, NULL), 0);
	cr_assert_eq(json_object_size(json_object_get(cm, "data")), 0);
	cr_assert_not_null(json_object_get(json_object_get(cm, "binaryData"), ENTRYPOINT_KEY));
	json_decref(cm);
	tj_release(&tj);
}

/* The digest names the data, not the order of its keys; any value changes it. */
Test(build, the_data_digest_ignores_key_order_and_sees_every_value)
{
	json_t *a = json_pack("{s:s, s:s}", "A", "1", "B", "2");
	json_t *b = json_pack("{s:s, s:s}", "B", "2", "A", "1");
	json_t *c = json_pack("{s:s, s:s}", "A", "1", "B", "3");
	char da[BUILD_DIGEST_SIZE], db[BUILD_DIGEST_SIZE], dc[BUILD_DIGEST_SIZE];
	char dn[BUILD_DIGEST_SIZE], de[BUILD_DIGEST_SIZE];
	json_t *empty = json_object();

	cr_assert_eq(build_data_digest(a, da), 0);
	cr_assert_eq(build_data_digest(b, db), 0);
	cr_assert_eq(build_data_digest(c, dc), 0);
	cr_assert_eq(build_data_digest(NULL, dn), 0);
	cr_assert_eq(build_data_digest(empty, de), 0);
	cr_assert_str_eq(da, db);
	cr_assert_str_neq(da, dc);
	cr_assert_str_eq(dn, de, "no data is empty data");
	cr_assert_eq(strlen(da), 16);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	json_decref(empty);
}

Test(build, entrypoint_configmap_needs_the_uid_for_its_owner_reference)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	struct buf err;
	json_t *cm = NULL;

	load_job("llama-pretrain", NULL, &tj);
	free(tj.meta.uid);
	tj.meta.uid = NULL;
	buf_init(&err, 256);
	cr_assert_eq(build_entrypoint_configmap(&tj, &opts, &cm, &err), CADRE_EINVAL);
	cr_assert_null(cm);
	cr_assert_str_eq(buf_str(&err), "metadata.uid: required: owner references name the uid");
	buf_release(&err);
	tj_release(&tj);
}

Test(build, entrypoint_configmap_name_is_the_job_and_a_suffix_and_bounded)
{
	char name[300], big[250];

	cr_assert_eq(build_entrypoint_name("llama-pretrain", name, sizeof(name)), 0);
	cr_assert_str_eq(name, "llama-pretrain-entrypoint");
	cr_assert_eq(build_entrypoint_name("llama-pretrain", name, 10), CADRE_EINVAL);
	cr_assert_eq(build_entrypoint_name("", name, sizeof(name)), CADRE_EINVAL);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cr_assert_eq(build_entrypoint_name(big, name, sizeof(name)), CADRE_EINVAL,
		     "past the 253 bytes of an object name");
}

/* Every rank mounts the job's ConfigMap read-only and sources the script from it. */
Test(build, every_pod_mounts_the_entrypoint_configmap_read_only_where_its_command_looks)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;

	load_job("llama-pretrain", NULL, &tj);
	for (int rank = 0; rank < 2; rank++) {
		json_t *pod = pod_ok(&tj, rank, 0, &opts), *v, *m, *vol = NULL, *mount = NULL;
		size_t i;

		replace_script(pod);
		json_array_foreach(json_object_get(pod_spec(pod), "volumes"), i, v)
			if (!strcmp(json_string_value(json_object_get(v, "name")), "cadre-entrypoint"))
				vol = v;
		json_array_foreach(json_object_get(container_of(pod), "volumeMounts"), i, m)
			if (!strcmp(json_string_value(json_object_get(m, "name")), "cadre-entrypoint"))
				mount = m;
		cr_assert_not_null(vol);
		cr_assert_not_null(mount);
		assert_json(json_object_get(vol, "configMap"),
			    "{\"name\": \"llama-pretrain-entrypoint\", \"defaultMode\": 292, "
			    "\"items\": [{\"key\": \"entrypoint.sh\", \"path\": \"entrypoint.sh\"}]}");
		cr_assert_str_eq(json_string_value(json_object_get(mount, "mountPath")),
				 "/cadre/entrypoint");
		cr_assert(json_is_true(json_object_get(mount, "readOnly")));
		json_decref(pod);
	}
	tj_release(&tj);
}

Test(build, llama_pretrain_pods_match_golden)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;

	static const char *const admitted_on[] = { "gpu-node-7", "gpu-node-2" };

	load_job("llama-pretrain", NULL, &tj);
	for (int rank = 0; rank < 2; rank++) {
		json_t *pod;
		char name[64];

		/* As the built-in admission creates them: each on its rank's node. */
		opts.node = admitted_on[rank];
		pod = pod_ok(&tj, rank, 2, &opts);
		replace_script(pod);
		snprintf(name, sizeof(name), "llama-pretrain.pod-%d", rank);
		assert_golden(name, pod);
		json_decref(pod);
	}
	tj_release(&tj);
}

static void four_nodes(json_t *obj)
{
	json_object_set_new(json_object_get(obj, "spec"), "numNodes", json_integer(4));
}

/*
 * docs/design.md 2.3, then 2.4's Slurm set, then the entrypoint's inputs
 * (the ConfigMap's, by envFrom), then the rank's and the attempt's own, then
 * envs and secretEnvs: names, order, values, as the container gets them.
 */
Test(build, every_rank_gets_every_variable_with_its_exact_value_in_order)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;

	load_job("llama-pretrain", four_nodes, &tj);
	for (int rank = 0; rank < 4; rank++) {
		char r[4];
		const char *want[][2] = {
			{ "SKYPILOT_NUM_NODES", "4" }, { "NNODES", "4" },
			{ "SLURM_NNODES", "4" }, { "SLURM_JOB_NUM_NODES", "4" },
			{ "SKYPILOT_NUM_GPUS_PER_NODE", "8" }, { "SLURM_GPUS_PER_NODE", "8" },
			{ "SLURM_JOB_NODELIST", "llama-pretrain-[0-3]" },
			{ "SKYPILOT_TASK_ID", "cadre-2026-03-02-09-15-00_llama-pretrain_482913307" },
			{ "CADRE_TASK_ID", "cadre-2026-03-02-09-15-00_llama-pretrain_482913307" },
			{ "SLURM_JOB_ID", "482913307" }, { "CADRE_JOB_ID", "482913307" },
			{ "SLURM_JOB_NAME", "llama-pretrain" }, { "CADRE_JOB_NAME", "llama-pretrain" },
			{ "MASTER_ADDR", "llama-pretrain-0.llama-pretrain.research.svc.cluster.local" },
			{ "MASTER_PORT", "29500" },
			/* docs/design.md 2.4: 4 nodes x 1 task, 32 CPUs, 8 GPUs, attempt 2. */
			{ "SLURM_NODELIST", "llama-pretrain-[0-3]" },
			{ "SLURM_JOBID", "482913307" },
			{ "SLURM_NTASKS", "4" }, { "SLURM_NPROCS", "4" },
			{ "SLURM_NTASKS_PER_NODE", "1" }, { "SLURM_TASKS_PER_NODE", "1(x4)" },
			{ "SLURM_CPUS_PER_TASK", "32" }, { "SLURM_CPUS_ON_NODE", "32" },
			{ "SLURM_GPUS_ON_NODE", "8" }, { "SLURM_LOCALID", "0" },
			{ "SLURM_SUBMIT_DIR", "/workspace" },
			{ "SLURM_CLUSTER_NAME", "cadre" },
			{ ENTRYPOINT_ENV_BIN_DIR, BUILD_BIN_DIR },
			/* The peers are named from it by the entrypoint, not listed. */
			{ "CADRE_PEER_DOMAIN", "llama-pretrain.research.svc" },
			{ "CADRE_GANG_TIMEOUT_SECONDS", "600" },
			{ "CADRE_WORKDIR", "/workspace" },
			{ "CADRE_SETUP", "pip install -r requirements.txt\n" },
			{ "CADRE_RUN", tj.spec.run },
			/* The pod's own. */
			{ "SKYPILOT_NODE_RANK", r }, { "NODE_RANK", r },
			{ "SLURM_NODEID", r }, { "SLURM_PROCID", r },
			{ "CADRE_RESTART_ATTEMPT", "2" }, { "SLURM_RESTART_COUNT", "2" },
			{ "BATCH_SIZE", "32" },
		};
		size_t n = sizeof(want) / sizeof(want[0]);
		json_t *pod, *env, *secret;

		snprintf(r, sizeof(r), "%d", rank);
		pod = pod_ok(&tj, rank, 2, &opts);
		env = pod_environment(&tj, &opts, pod);
		cr_assert_eq(json_array_size(env), n + 1, "rank %d has %zu variables", rank,
			     json_array_size(env));
		for (size_t i = 0; i < n; i++) {
			json_t *e = json_array_get(env, i);

			cr_assert_str_eq(json_string_value(json_object_get(e, "name")), want[i][0],
					 "rank %d variable %zu", rank, i);
			cr_assert_str_eq(json_string_value(json_object_get(e, "value")), want[i][1],
					 "rank %d %s", rank, want[i][0]);
		}
		secret = json_array_get(env, n);
		cr_assert_str_eq(json_string_value(json_object_get(secret, "name")), "HF_TOKEN");
		cr_assert_null(json_object_get(secret, "value"), "a Secret's value never enters the pod");
		cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(
			secret, "valueFrom"), "secretKeyRef"), "name")), "hf");
		cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(
			secret, "valueFrom"), "secretKeyRef"), "key")), "token");
		cr_assert_str_eq(label(pod, LABEL_NODE_RANK), r);
		json_decref(env);
		json_decref(pod);
	}
	tj_release(&tj);
}

static void four_tasks_on_three_nodes_in_a_queue(json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec");

	json_object_set_new(spec, "numNodes", json_integer(3));
	json_object_set_new(spec, "tasksPerNode", json_integer(4));
	json_object_set_new(spec, "queue", json_string("gpu-long"));
	json_object_set_new(json_object_get(spec, "resources"), "cpus", json_string("30"));
}

/* Slurm's task counts follow spec.tasksPerNode; the partition is the queue. */
Test(build, slurm_task_counts_follow_tasks_per_node_and_the_partition_the_queue)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", four_tasks_on_three_nodes_in_a_queue, &tj);
	pod = pod_ok(&tj, 2, 0, &opts);
	cr_assert_str_eq(env_value(pod, "SLURM_JOB_NODELIST"), "llama-pretrain-[0-2]");
	cr_assert_str_eq(env_value(pod, "SLURM_NODELIST"), "llama-pretrain-[0-2]");
	cr_assert_str_eq(env_value(pod, "SLURM_NTASKS"), "12");
	cr_assert_str_eq(env_value(pod, "SLURM_NPROCS"), "12");
	cr_assert_str_eq(env_value(pod, "SLURM_NTASKS_PER_NODE"), "4");
	cr_assert_str_eq(env_value(pod, "SLURM_TASKS_PER_NODE"), "4(x3)");
	/* 30 CPUs over 4 tasks: Slurm gives each task whole CPUs. */
	cr_assert_str_eq(env_value(pod, "SLURM_CPUS_ON_NODE"), "30");
	cr_assert_str_eq(env_value(pod, "SLURM_CPUS_PER_TASK"), "7");
	cr_assert_str_eq(env_value(pod, "SLURM_JOB_PARTITION"), "gpu-long");
	/* The batch step is task 0 of its node; srun numbers the tasks. */
	cr_assert_str_eq(env_value(pod, "SLURM_PROCID"), "2");
	cr_assert_str_eq(env_value(pod, "SLURM_LOCALID"), "0");
	cr_assert_str_eq(env_value(pod, "SLURM_RESTART_COUNT"), "0");
	json_decref(pod);
	tj_release(&tj);
}

static void one_node(json_t *obj)
{
	json_object_set_new(json_object_get(obj, "spec"), "numNodes", json_integer(1));
}

Test(build, a_single_node_is_a_hostlist_without_brackets)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", one_node, &tj);
	pod = pod_ok(&tj, 0, 0, &opts);
	cr_assert_str_eq(env_value(pod, "SLURM_JOB_NODELIST"), "llama-pretrain-0");
	cr_assert_str_eq(env_value(pod, "SLURM_TASKS_PER_NODE"), "1");
	json_decref(pod);
	tj_release(&tj);
}

static void most_nodes(json_t *obj)
{
	json_object_set_new(json_object_get(obj, "spec"), "numNodes", json_integer(1024));
}

static size_t compact_size(const json_t *pod)
{
	char *text = json_dumps(pod, JSON_COMPACT);
	size_t n;

	cr_assert_not_null(text);
	n = strlen(text);
	free(text);
	return n;
}

/*
 * Every watcher of pods (the scheduler, the kubelet, cadre) decodes each pod
 * at every change, so a pod must not carry a list of its peers: a rank of
 * a 1024-node gang is a few digits longer than a rank of a single node.
 */
Test(build, a_pods_size_does_not_grow_with_its_gang)
{
	struct build_opts opts = llama_opts();
	struct trainingjob small, large;
	json_t *one, *many;

	load_job("llama-pretrain", one_node, &small);
	load_job("llama-pretrain", most_nodes, &large);
	one = pod_ok(&small, 0, 0, &opts);
	many = pod_ok(&large, 1023, 0, &opts);
	cr_assert_str_eq(env_value(many, "CADRE_PEER_DOMAIN"), "llama-pretrain.research.svc");
	cr_assert_null(env_value(many, "CADRE_PEERS"));
	cr_assert_lt(compact_size(many), compact_size(one) + 64, "%zu bytes against %zu",
		     compact_size(many), compact_size(one));
	json_decref(one);
	json_decref(many);
	tj_release(&small);
	tj_release(&large);
}

/*
 * Slurm scripts name peers by their short host names: the Service's domain
 * is searched first, under the cluster domain the controller was given.
 */
Test(build, pods_search_the_services_domain_so_short_host_names_resolve)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod, *searches;

	load_job("llama-pretrain", NULL, &tj);
	pod = pod_ok(&tj, 1, 0, &opts);
	searches = json_object_get(json_object_get(pod_spec(pod), "dnsConfig"), "searches");
	cr_assert_eq(json_array_size(searches), 1);
	cr_assert_str_eq(json_string_value(json_array_get(searches, 0)),
			 "llama-pretrain.research.svc.cluster.local");
	cr_assert_null(json_object_get(pod_spec(pod), "dnsPolicy"),
		       "the cluster's own resolver and search path stay");
	json_decref(pod);
	opts.cluster_domain = "k8s.corp.example";
	pod = pod_ok(&tj, 1, 0, &opts);
	searches = json_object_get(json_object_get(pod_spec(pod), "dnsConfig"), "searches");
	cr_assert_str_eq(json_string_value(json_array_get(searches, 0)),
			 "llama-pretrain.research.svc.k8s.corp.example");
	json_decref(pod);
	tj_release(&tj);
}

/*
 * MASTER_ADDR is rank 0's name as the kubelet writes it first in the pod's
 * /etc/hosts, cluster domain and all: torchrun's c10d rendezvous on rank 0
 * hosts the store only when the endpoint is that name (PyTorch 1.13 on the
 * real node: without the domain every rank timed out).
 */
Test(build, master_addr_is_rank_0s_full_name_with_the_cluster_domain)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", NULL, &tj);
	for (int rank = 0; rank < 2; rank++) {
		pod = pod_ok(&tj, rank, 0, &opts);
		cr_assert_str_eq(env_value(pod, "MASTER_ADDR"),
				 "llama-pretrain-0.llama-pretrain.research.svc.cluster.local");
		json_decref(pod);
	}
	opts.cluster_domain = "k8s.corp.example";
	pod = pod_ok(&tj, 1, 0, &opts);
	cr_assert_str_eq(env_value(pod, "MASTER_ADDR"),
			 "llama-pretrain-0.llama-pretrain.research.svc.k8s.corp.example");
	json_decref(pod);
	tj_release(&tj);
}

Test(build, pod_names_hostnames_and_labels_follow_the_rank)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", NULL, &tj);
	pod = pod_ok(&tj, 1, 3, &opts);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pod, "metadata"),
							    "name")), "llama-pretrain-1");
	cr_assert_str_eq(json_string_value(json_object_get(pod_spec(pod), "hostname")),
			 "llama-pretrain-1");
	cr_assert_str_eq(json_string_value(json_object_get(pod_spec(pod), "subdomain")),
			 "llama-pretrain");
	cr_assert_str_eq(json_string_value(json_object_get(pod_spec(pod), "restartPolicy")),
			 "Never");
	cr_assert_str_eq(label(pod, LABEL_JOB_NAME), "llama-pretrain");
	cr_assert_str_eq(label(pod, LABEL_RESTART_ATTEMPT), "3");
	cr_assert_str_eq(env_value(pod, "CADRE_RESTART_ATTEMPT"), "3");
	json_decref(pod);
	tj_release(&tj);
}

static bool has_gate(const json_t *pod)
{
	return json_object_get(pod_spec(pod), "schedulingGates") != NULL;
}

/* The node names the pod's term i requires by matchFields metadata.name, or NULL. */
static const char *pinned_in_term(const json_t *pod, size_t i)
{
	const json_t *terms = json_object_get(json_object_get(json_object_get(json_object_get(
		pod_spec(pod), "affinity"), "nodeAffinity"),
		"requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
	const json_t *fields = json_object_get(json_array_get(terms, i), "matchFields"), *f;
	size_t j;

	json_array_foreach(fields, j, f)
		if (!strcmp(json_string_value(json_object_get(f, "key")), "metadata.name") &&
		    !strcmp(json_string_value(json_object_get(f, "operator")), "In") &&
		    json_array_size(json_object_get(f, "values")) == 1)
			return json_string_value(json_array_get(json_object_get(f, "values"), 0));
	return NULL;
}

/*
 * Built-in mode (docs/design.md 3.1): no gate, no Kueue labels; the pod is
 * pinned to the node its rank was admitted on by a required node affinity
 * (kube-scheduler still checks it there; nodeName would bypass it), with
 * the accelerator requirement in the same term.
 */
Test(build, builtin_mode_pins_each_pod_to_its_admitted_node_without_a_gate)
{
	struct build_opts opts = llama_opts();
	static const char *const nodes[] = { "gpu-node-7", "gpu-node-2" };
	struct trainingjob tj;

	load_job("llama-pretrain", NULL, &tj);
	for (int rank = 0; rank < 2; rank++) {
		json_t *pod;

		opts.node = nodes[rank];
		pod = pod_ok(&tj, rank, 0, &opts);
		cr_assert_not(has_gate(pod));
		cr_assert_null(json_object_get(pod_spec(pod), "nodeName"),
			       "the scheduler binds it: its checks still run");
		cr_assert_str_eq(pinned_in_term(pod, 0), nodes[rank]);
		cr_assert_not_null(json_object_get(json_array_get(json_object_get(json_object_get(
			json_object_get(json_object_get(pod_spec(pod), "affinity"), "nodeAffinity"),
			"requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms"), 0),
			"matchExpressions"), "the accelerator type stays required");
		cr_assert_null(label(pod, BUILD_KUEUE_QUEUE_LABEL));
		cr_assert_null(label(pod, BUILD_KUEUE_GROUP_LABEL));
		cr_assert_null(annotation(pod, BUILD_KUEUE_COUNT_ANNOTATION));
		json_decref(pod);
	}
	tj_release(&tj);
}

/* A job without accelerators is pinned too; unpinned, it has no affinity at all. */
Test(build, a_pin_needs_no_accelerator_and_no_pin_adds_no_affinity)
{
	struct build_opts opts = { .mode = GANG_BUILTIN };
	struct trainingjob tj;
	json_t *pod;

	load_job("cpu-only", NULL, &tj);
	opts.node = "cpu-3";
	pod = pod_ok(&tj, 0, 0, &opts);
	cr_assert_str_eq(pinned_in_term(pod, 0), "cpu-3");
	json_decref(pod);
	opts.node = NULL;
	pod = pod_ok(&tj, 0, 0, &opts);
	cr_assert_null(json_object_get(pod_spec(pod), "affinity"));
	json_decref(pod);
	tj_release(&tj);
}

static void with_queue(json_t *obj)
{
	json_object_set_new(json_object_get(obj, "spec"), "queue", json_string("team-a"));
}

Test(build, spec_queue_builds_a_kueue_pod_group_without_our_gate)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", with_queue, &tj);
	opts.mode = GANG_BUILTIN;  /* spec.queue wins over the controller's mode */
	pod = pod_ok(&tj, 1, 2, &opts);
	cr_assert_null(json_object_get(pod_spec(pod), "schedulingGates"));
	cr_assert_str_eq(label(pod, BUILD_KUEUE_QUEUE_LABEL), "team-a");
	cr_assert_str_eq(label(pod, BUILD_KUEUE_GROUP_LABEL), "llama-pretrain-2");
	cr_assert_str_eq(annotation(pod, BUILD_KUEUE_COUNT_ANNOTATION), "2");
	replace_script(pod);
	assert_golden("llama-pretrain.kueue.pod-1", pod);
	json_decref(pod);
	tj_release(&tj);
}

static void with_queue_and_priority_class(json_t *obj)
{
	json_t *meta = json_object_get(obj, "metadata");

	with_queue(obj);
	if (!json_object_get(meta, "labels"))
		json_object_set_new(meta, "labels", json_object());
	json_object_set_new(json_object_get(meta, "labels"), "kueue.x-k8s.io/priority-class",
			    json_string("research-high"));
}

/* Kueue reads the WorkloadPriorityClass from the pods; the job carries it as a label. */
Test(build, a_jobs_kueue_priority_class_label_goes_to_its_pods)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", with_queue_and_priority_class, &tj);
	pod = pod_ok(&tj, 0, 0, &opts);
	cr_assert_str_eq(label(pod, "kueue.x-k8s.io/priority-class"), "research-high");
	json_decref(pod);
	tj_release(&tj);

	load_job("llama-pretrain", with_queue, &tj);
	pod = pod_ok(&tj, 0, 0, &opts);
	cr_assert_null(label(pod, "kueue.x-k8s.io/priority-class"));
	json_decref(pod);
	tj_release(&tj);
}

Test(build, kueue_mode_without_a_queue_leaves_the_queue_to_kueues_default)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", NULL, &tj);
	opts.mode = GANG_KUEUE;
	pod = pod_ok(&tj, 0, 0, &opts);
	cr_assert_null(json_object_get(pod_spec(pod), "schedulingGates"));
	cr_assert_null(label(pod, BUILD_KUEUE_QUEUE_LABEL));
	cr_assert_str_eq(label(pod, BUILD_KUEUE_GROUP_LABEL), "llama-pretrain-0");
	cr_assert_str_eq(annotation(pod, BUILD_KUEUE_COUNT_ANNOTATION), "2");
	json_decref(pod);
	tj_release(&tj);
}

Test(build, none_mode_creates_ungated_pods_without_kueue_labels)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", NULL, &tj);
	opts.mode = GANG_NONE;
	pod = pod_ok(&tj, 0, 0, &opts);
	cr_assert_null(json_object_get(pod_spec(pod), "schedulingGates"));
	cr_assert_null(label(pod, BUILD_KUEUE_GROUP_LABEL));
	cr_assert_null(annotation(pod, BUILD_KUEUE_COUNT_ANNOTATION));
	json_decref(pod);
	tj_release(&tj);
}

Test(build, accelerators_become_requests_limits_a_toleration_and_node_affinity)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod, *res, *tol, *terms, *expr, *values;

	load_job("llama-pretrain", NULL, &tj);
	pod = pod_ok(&tj, 0, 0, &opts);
	res = json_object_get(container_of(pod), "resources");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(res, "requests"),
							    "nvidia.com/gpu")), "8");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(res, "limits"),
							    "nvidia.com/gpu")), "8");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(res, "requests"),
							    "cpu")), "32");
	cr_assert_null(json_object_get(json_object_get(res, "limits"), "cpu"));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(res, "limits"),
							    "memory")), "256Gi");
	tol = json_object_get(pod_spec(pod), "tolerations");
	cr_assert_eq(json_array_size(tol), 1);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(tol, 0), "key")),
			 "nvidia.com/gpu");
	terms = json_object_get(json_object_get(json_object_get(json_object_get(pod_spec(pod),
		"affinity"), "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"),
		"nodeSelectorTerms");
	cr_assert_eq(json_array_size(terms), 1);
	expr = json_array_get(json_object_get(json_array_get(terms, 0), "matchExpressions"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(expr, "key")), "nvidia.com/gpu.product");
	cr_assert_str_eq(json_string_value(json_object_get(expr, "operator")), "In");
	/* The A100 value is dropped, the duplicate H100 value kept once, the rest sorted. */
	values = json_object_get(expr, "values");
	cr_assert_eq(json_array_size(values), 2);
	cr_assert_str_eq(json_string_value(json_array_get(values, 0)), "NVIDIA-H100-80GB-HBM3");
	cr_assert_str_eq(json_string_value(json_array_get(values, 1)), "NVIDIA-H100-NVL");
	json_decref(pod);
	tj_release(&tj);
}

Test(build, accelerators_without_a_matching_node_wait_instead_of_failing)
{
	static const char *const a100_only[] = { "NVIDIA-A100-SXM4-80GB" };
	struct build_opts opts = llama_opts();
	struct trainingjob tj;

	load_job("llama-pretrain", NULL, &tj);
	opts.label_values = a100_only;
	opts.n_label_values = 1;
	pod_fails(&tj, 0, &opts, CADRE_EAGAIN,
		  "spec.resources.accelerators: no node has accelerator type H100 "
		  "(label nvidia.com/gpu.product)");
	opts.label_values = NULL;
	opts.n_label_values = 0;
	opts.accelerator_label = "example.com/accelerator";
	pod_fails(&tj, 0, &opts, CADRE_EAGAIN,
		  "spec.resources.accelerators: no node has accelerator type H100 "
		  "(label example.com/accelerator)");
	tj_release(&tj);
}

Test(build, cpu_only_job_has_no_gpu_resource_toleration_or_affinity)
{
	struct build_opts opts = { .mode = GANG_BUILTIN };
	struct trainingjob tj;

	load_job("cpu-only", NULL, &tj);
	for (int rank = 0; rank < 3; rank++) {
		json_t *pod = pod_ok(&tj, rank, 0, &opts), *res;
		char *text;

		res = json_object_get(container_of(pod), "resources");
		cr_assert_str_eq(json_string_value(json_object_get(json_object_get(res, "requests"),
								    "cpu")), "500m");
		cr_assert_str_eq(json_string_value(json_object_get(json_object_get(res, "requests"),
								    "memory")), "1536Mi");
		cr_assert_null(json_object_get(pod_spec(pod), "tolerations"));
		cr_assert_null(json_object_get(pod_spec(pod), "affinity"));
		cr_assert_str_eq(env_value(pod, "SKYPILOT_NUM_GPUS_PER_NODE"), "0");
		cr_assert_str_eq(env_value(pod, "SLURM_GPUS_PER_NODE"), "0");
		cr_assert_null(env_value(pod, "CADRE_WORKDIR"));
		cr_assert_null(env_value(pod, "CADRE_SETUP"));
		/* 500m is one whole CPU to Slurm; no workdir, no SLURM_SUBMIT_DIR. */
		cr_assert_str_eq(env_value(pod, "SLURM_CPUS_ON_NODE"), "1");
		cr_assert_str_eq(env_value(pod, "SLURM_CPUS_PER_TASK"), "1");
		cr_assert_str_eq(env_value(pod, "SLURM_GPUS_ON_NODE"), "0");
		cr_assert_null(env_value(pod, "SLURM_SUBMIT_DIR"));
		text = json_dumps(pod, 0);
		cr_assert_null(strstr(text, "nvidia.com/gpu"), "%s", text);
		free(text);
		cr_assert_str_eq(json_string_value(json_object_get(pod_spec(pod),
			"priorityClassName")), "batch-low");
		if (rank == 2) {
			replace_script(pod);
			assert_golden("cpu-only.pod-2", pod);
		}
		json_decref(pod);
	}
	tj_release(&tj);
}

static const char *const a100_values[] = { "NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-PCIE-40GB" };
/* In the order of spec.volumes: /data then /ckpt. */
static const char *const template_claims[] = { "datasets", "checkpoints" };

static struct build_opts template_opts(void)
{
	return (struct build_opts){
		.mode = GANG_NONE,
		.label_values = a100_values,
		.n_label_values = 2,
		.claim_names = template_claims,
		.n_claim_names = 2,
	};
}

Test(build, pod_template_merges_and_cadre_labels_win)
{
	struct build_opts opts = template_opts();
	struct trainingjob tj;
	json_t *pod, *spec, *terms, *tol;

	load_job("template", NULL, &tj);
	pod = pod_ok(&tj, 1, 0, &opts);
	replace_script(pod);
	assert_golden("template.pod-1", pod);
	json_decref(pod);
	/*
	 * Validation refuses cadre.dev/ keys in a template; should one get
	 * through anyway, cadre's own values still win.
	 */
	json_object_set_new(tj.spec.pod_template.labels, LABEL_JOB_NAME,
			    json_string("spoofed"));
	json_object_set_new(tj.spec.pod_template.labels, LABEL_NODE_RANK, json_string("9"));
	json_object_set_new(tj.spec.pod_template.annotations, ANNOTATION_JOB_UID,
			    json_string("spoofed"));
	pod = pod_ok(&tj, 1, 0, &opts);
	cr_assert_str_eq(label(pod, "team"), "nlp");
	cr_assert_str_eq(label(pod, LABEL_JOB_NAME), "tuned");
	cr_assert_str_eq(label(pod, LABEL_NODE_RANK), "1");
	cr_assert_str_eq(annotation(pod, "example.com/owner"), "ada");
	cr_assert_str_eq(annotation(pod, ANNOTATION_JOB_UID),
			 "0c0ffee0-1111-4222-8333-444455556666");
	spec = pod_spec(pod);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(spec, "nodeSelector"),
		"topology.kubernetes.io/zone")), "eu-west-1a");
	cr_assert_str_eq(json_string_value(json_object_get(spec, "serviceAccountName")), "trainer");
	cr_assert_str_eq(json_string_value(json_object_get(spec, "runtimeClassName")), "nvidia");
	cr_assert_str_eq(json_string_value(json_object_get(spec, "schedulerName")), "volcano");
	cr_assert_eq(json_array_size(json_object_get(spec, "imagePullSecrets")), 1);
	/* Ours first, then the template's. */
	tol = json_object_get(spec, "tolerations");
	cr_assert_eq(json_array_size(tol), 2);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(tol, 0), "key")),
			 "nvidia.com/gpu");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(tol, 1), "key")),
			 "dedicated");
	/* The accelerator requirement is AND-ed into each of the user's terms. */
	terms = json_object_get(json_object_get(json_object_get(json_object_get(spec, "affinity"),
		"nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"),
		"nodeSelectorTerms");
	cr_assert_eq(json_array_size(terms), 2);
	for (size_t i = 0; i < 2; i++) {
		json_t *exprs = json_object_get(json_array_get(terms, i), "matchExpressions");
		json_t *last = json_array_get(exprs, json_array_size(exprs) - 1);

		cr_assert_str_eq(json_string_value(json_object_get(last, "key")),
				 "nvidia.com/gpu.product", "term %zu", i);
	}
	cr_assert_eq(json_array_size(json_object_get(json_array_get(terms, 0),
						     "matchExpressions")), 2);
	cr_assert_eq(json_array_size(json_object_get(json_array_get(terms, 1), "matchFields")), 1);
	/* Pinned, the node is AND-ed into each term too: no term lets the pod elsewhere. */
	json_decref(pod);
	opts.node = "gpu-node-4";
	pod = pod_ok(&tj, 1, 0, &opts);
	for (size_t i = 0; i < 2; i++)
		cr_assert_str_eq(pinned_in_term(pod, i), "gpu-node-4", "term %zu", i);
	spec = pod_spec(pod);
	cr_assert_not_null(json_object_get(json_object_get(json_object_get(spec, "affinity"),
		"nodeAffinity"), "preferredDuringSchedulingIgnoredDuringExecution"));
	cr_assert_not_null(json_object_get(json_object_get(spec, "affinity"), "podAntiAffinity"));
	json_decref(pod);
	tj_release(&tj);
}

/* vol-0, vol-1 in mount path order, each with the claim of its own entry. */
Test(build, volumes_are_named_in_mount_path_order_with_their_own_claims)
{
	struct build_opts opts = template_opts();
	struct trainingjob tj;
	json_t *pod, *volumes, *mounts;

	load_job("template", NULL, &tj);
	cr_assert_str_eq(tj.spec.volumes[0].mount_path, "/data");
	pod = pod_ok(&tj, 0, 0, &opts);
	volumes = json_object_get(pod_spec(pod), "volumes");
	mounts = json_object_get(container_of(pod), "volumeMounts");
	cr_assert_eq(json_array_size(volumes), 5);
	cr_assert_eq(json_array_size(mounts), 5);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(volumes, 0),
		"emptyDir"), "medium")), "Memory");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(mounts, 0), "mountPath")),
			 "/dev/shm");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(volumes, 1), "name")),
			 "cadre-bin");
	cr_assert(json_is_object(json_object_get(json_array_get(volumes, 1), "emptyDir")));
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(mounts, 1), "mountPath")),
			 BUILD_BIN_DIR);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(volumes, 2), "name")),
			 "cadre-entrypoint");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(mounts, 2), "mountPath")),
			 ENTRYPOINT_DIR);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(volumes, 3), "name")),
			 "vol-0");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(volumes, 3),
		"persistentVolumeClaim"), "claimName")), "checkpoints");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(mounts, 3), "mountPath")),
			 "/ckpt");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(volumes, 4),
		"persistentVolumeClaim"), "claimName")), "datasets");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(mounts, 4), "mountPath")),
			 "/data");
	json_decref(pod);
	tj_release(&tj);
}

/* Nothing that would make a pod privileged, host-networked or host-mounted, anywhere. */
static void assert_no_host_access(const json_t *v, const char *where)
{
	static const char *const banned[] = {
		"privileged", "hostNetwork", "hostPID", "hostIPC", "hostPath", "hostPort",
		"securityContext", "allowPrivilegeEscalation", "capabilities", NULL,
	};
	const char *key;
	json_t *child;
	size_t i;

	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, child) {
			for (size_t b = 0; banned[b]; b++)
				cr_assert_str_neq(key, banned[b], "%s has %s", where, key);
			assert_no_host_access(child, where);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, child)
			assert_no_host_access(child, where);
	}
}

Test(build, no_pod_ever_asks_for_host_access_or_privilege)
{
	struct build_opts llama = llama_opts(), tpl = template_opts(), cpu = { .mode = GANG_KUEUE };
	struct trainingjob a, b, c;
	json_t *pod;

	load_job("llama-pretrain", NULL, &a);
	load_job("template", NULL, &b);
	load_job("cpu-only", NULL, &c);
	pod = pod_ok(&a, 0, 0, &llama);
	assert_no_host_access(pod, "llama-pretrain");
	json_decref(pod);
	pod = pod_ok(&b, 0, 0, &tpl);
	assert_no_host_access(pod, "template");
	json_decref(pod);
	pod = pod_ok(&c, 0, 0, &cpu);
	assert_no_host_access(pod, "cpu-only");
	json_decref(pod);
	tj_release(&a);
	tj_release(&b);
	tj_release(&c);
}

static bool list_has(const json_t *list, const char *value)
{
	size_t i;
	json_t *v;

	json_array_foreach(list, i, v)
		if (json_string_value(v) && !strcmp(json_string_value(v), value))
			return true;
	return false;
}

/*
 * The checks of the restricted Pod Security Standard (kubernetes.io/docs/concepts/
 * security/pod-security-standards), on a built pod: what cadre adds must pass them
 * whenever the job's own settings do.
 */
static void assert_meets_restricted(const json_t *pod)
{
	static const char *const allowed_volumes[] = {
		"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
		"persistentVolumeClaim", "projected", "secret", NULL,
	};
	const json_t *spec = pod_spec(pod), *psc = json_object_get(spec, "securityContext");
	const json_t *containers = json_object_get(spec, "containers"), *c, *v;
	const char *key;
	size_t i;

	assert_no_host_access(json_object_get(spec, "volumes"), "volumes");
	json_array_foreach(json_object_get(spec, "volumes"), i, v)
		json_object_foreach((json_t *)v, key, c) {
			bool ok = !strcmp(key, "name");

			for (size_t a = 0; allowed_volumes[a]; a++)
				ok |= !strcmp(key, allowed_volumes[a]);
			cr_assert(ok, "volume %zu is of type %s", i, key);
		}
	cr_assert_null(json_object_get(spec, "initContainers"));
	cr_assert_null(json_object_get(spec, "ephemeralContainers"));
	json_array_foreach(containers, i, c) {
		const json_t *sc = json_object_get(c, "securityContext");
		const json_t *caps = json_object_get(sc, "capabilities");
		const json_t *seccomp = json_object_get(sc, "seccompProfile");
		const json_t *nonroot = json_object_get(sc, "runAsNonRoot");

		cr_assert(json_is_false(json_object_get(sc, "allowPrivilegeEscalation")),
			  "container %zu may escalate privileges", i);
		cr_assert(list_has(json_object_get(caps, "drop"), "ALL"),
			  "container %zu keeps its capabilities", i);
		cr_assert_null(json_object_get(caps, "add"));
		cr_assert_null(json_object_get(sc, "privileged"));
		cr_assert_null(json_object_get(c, "ports"), "no host ports, no ports at all");
		if (!nonroot)
			nonroot = json_object_get(psc, "runAsNonRoot");
		cr_assert(json_is_true(nonroot), "container %zu may run as root", i);
		if (!seccomp)
			seccomp = json_object_get(psc, "seccompProfile");
		cr_assert(seccomp, "container %zu has no seccomp profile", i);
		key = json_string_value(json_object_get(seccomp, "type"));
		cr_assert(key && (!strcmp(key, "RuntimeDefault") || !strcmp(key, "Localhost")));
		v = json_object_get(sc, "runAsUser");
		cr_assert(!v || json_integer_value(v) != 0, "container %zu runs as uid 0", i);
	}
	v = json_object_get(psc, "runAsUser");
	cr_assert(!v || json_integer_value(v) != 0, "the pod runs as uid 0");
}

static const char *const restricted_claims[] = { "checkpoints" };

/* The pod and container securityContext a restricted namespace asks for reach the pod as given. */
Test(build, restricted_security_settings_reach_the_pod_and_meet_the_restricted_profile)
{
	struct build_opts opts = {
		.mode = GANG_BUILTIN, .claim_names = restricted_claims, .n_claim_names = 1,
	};
	struct trainingjob tj;
	json_t *pod;

	load_job("restricted", NULL, &tj);
	pod = pod_ok(&tj, 1, 0, &opts);
	assert_meets_restricted(pod);
	cr_assert(json_equal(json_object_get(pod_spec(pod), "securityContext"),
			     tj.spec.pod_template.security_context));
	cr_assert(json_equal(json_object_get(container_of(pod), "securityContext"),
			     tj.spec.pod_template.container_security_context));
	replace_script(pod);
	assert_golden("restricted.pod-1", pod);
	json_decref(pod);
	tj_release(&tj);
}

static void template_with_host_network(json_t *obj)
{
	json_t *tpl = json_object_get(json_object_get(obj, "spec"), "podTemplate");

	json_object_set_new(json_object_get(tpl, "spec"), "hostNetwork", json_true());
}

/* A podTemplate with anything else never reaches the builder: the job does not parse. */
Test(build, a_pod_template_with_other_fields_is_refused_before_building)
{
	struct buf path;
	struct field_errors errs;
	struct trainingjob tj;
	json_t *obj;

	buf_init(&path, 512);
	buf_addf(&path, "%s/inputs/template.json", GOLDEN_DIR);
	obj = load_json(buf_str(&path));
	template_with_host_network(obj);
	field_errors_init(&errs);
	cr_assert_neq(tj_parse(obj, &tj, &errs), 0);
	cr_assert_gt(field_errors_count(&errs), 0);
	field_errors_release(&errs);
	tj_release(&tj);
	json_decref(obj);
	buf_release(&path);
}

static void without_image(json_t *obj)
{
	json_object_del(json_object_get(obj, "spec"), "image");
}

Test(build, missing_image_uses_the_default_or_is_invalid)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", without_image, &tj);
	pod_fails(&tj, 0, &opts, CADRE_EINVAL,
		  "spec.image: required: the controller has no --default-image");
	opts.default_image = "registry.example.com/base:1";
	pod = pod_ok(&tj, 0, 0, &opts);
	cr_assert_str_eq(json_string_value(json_object_get(container_of(pod), "image")),
			 "registry.example.com/base:1");
	json_decref(pod);
	tj_release(&tj);
}

Test(build, spec_image_wins_over_the_default)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", NULL, &tj);
	opts.default_image = "registry.example.com/base:1";
	pod = pod_ok(&tj, 0, 0, &opts);
	cr_assert_str_eq(json_string_value(json_object_get(container_of(pod), "image")),
			 "nvcr.io/nvidia/pytorch:24.05-py3");
	json_decref(pod);
	tj_release(&tj);
}

Test(build, refuses_what_cannot_become_a_pod)
{
	static const char *const no_claim[] = { "" };
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	char *saved;

	load_job("llama-pretrain", NULL, &tj);
	pod_fails(&tj, 2, &opts, CADRE_EINVAL, "spec.numNodes: rank 2 is outside 0..1");
	pod_fails(&tj, -1, &opts, CADRE_EINVAL, "spec.numNodes: rank -1");
	opts.n_claim_names = 0;
	pod_fails(&tj, 0, &opts, CADRE_EINVAL, "spec.volumes: 1 volumes but 0 claim names");
	opts = llama_opts();
	opts.claim_names = no_claim;
	pod_fails(&tj, 0, &opts, CADRE_EINVAL,
		  "spec.volumes: /mnt/checkpoints: Volume shared-checkpoints has no claim yet");
	opts = llama_opts();
	saved = tj.status.job_id;
	tj.status.job_id = NULL;
	pod_fails(&tj, 0, &opts, CADRE_EINVAL, "status.jobId: not assigned yet");
	tj.status.job_id = saved;
	tj_release(&tj);
}

/* Validation checks this too; the builder does not rely on it. */
Test(build, refuses_a_name_whose_last_hostname_would_be_too_long)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;

	load_job("llama-pretrain", NULL, &tj);
	free(tj.meta.name);
	/* 62 characters: "-1" makes 64. */
	tj.meta.name = strdup("a-job-name-of-sixty-two-characters-so-rank-one-is-one-too-many");
	cr_assert_eq(strlen(tj.meta.name), 62);
	pod_fails(&tj, 0, &opts, CADRE_EINVAL, "metadata.name: too long");
	/* 59 characters: rank 999 fits exactly, rank 1000 does not. */
	tj.meta.name[59] = '\0';
	tj.spec.num_nodes = 1001;
	pod_fails(&tj, 0, &opts, CADRE_EINVAL, "metadata.name: too long");
	tj.spec.num_nodes = 1000;
	json_decref(pod_ok(&tj, 0, 0, &opts));
	tj_release(&tj);
}

/* spec.envs after cadre's would win in the pod, so a name cadre sets is refused. */
Test(build, refuses_user_envs_that_would_shadow_the_entrypoint_inputs)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	char *saved;

	load_job("llama-pretrain", NULL, &tj);
	saved = tj.spec.envs[0].name;
	tj.spec.envs[0].name = "CADRE_RUN";
	pod_fails(&tj, 0, &opts, CADRE_EINVAL, "spec.envs: CADRE_RUN is set by cadre");
	tj.spec.envs[0].name = "SLURM_JOB_ID";
	pod_fails(&tj, 0, &opts, CADRE_EINVAL, "spec.envs: SLURM_JOB_ID is set by cadre");
	tj.spec.envs[0].name = saved;
	tj_release(&tj);
}

/* The API's reserved list is what keeps them out at admission; it must know every input. */
Test(build, every_entrypoint_input_is_a_reserved_name)
{
	static const char *const inputs[] = {
		ENTRYPOINT_ENV_PEER_DOMAIN, ENTRYPOINT_ENV_JOB_NAME, ENTRYPOINT_ENV_NNODES,
		ENTRYPOINT_ENV_PEERS, ENTRYPOINT_ENV_TIMEOUT, ENTRYPOINT_ENV_WORKDIR,
		ENTRYPOINT_ENV_SETUP, ENTRYPOINT_ENV_RUN, ENTRYPOINT_ENV_TERMINATION_LOG,
		ENTRYPOINT_ENV_BIN_DIR, ENTRYPOINT_ENV_HEARTBEAT_FILE, ENTRYPOINT_ENV_HANG_STARTUP,
		ENTRYPOINT_ENV_HANG_PROGRESS, ENTRYPOINT_ENV_NCCL_DUMP_DIR, ENTRYPOINT_ENV_SIGNAL,
		ENTRYPOINT_ENV_SIGNAL_BEFORE, ENTRYPOINT_ENV_DEADLINE, ENTRYPOINT_ENV_ATTEMPT_FILE,
	};

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
		cr_assert(tj_env_reserved(inputs[i]), "%s is not in tj_reserved_envs", inputs[i]);
}

Test(build, the_same_input_builds_the_same_pod)
{
	static const char *const reordered[] = {
		"NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-NVL", "NVIDIA-A100-SXM4-80GB",
	};
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *a, *b;

	load_job("llama-pretrain", NULL, &tj);
	a = pod_ok(&tj, 1, 1, &opts);
	opts.label_values = reordered;
	opts.n_label_values = 3;
	b = pod_ok(&tj, 1, 1, &opts);
	cr_assert(json_equal(a, b));
	json_decref(a);
	json_decref(b);
	tj_release(&tj);
}

/* build_pvc bound to the PV build_pv makes, as for a Volume with no PV of the old scheme. */
static int build_pvc_new(const struct volume *vol, json_t **out, struct buf *err)
{
	return build_pvc(vol, NULL, out, err);
}

static json_t *volume_object(const char *name, int (*fn)(const struct volume *, json_t **,
							 struct buf *))
{
	struct volume vol;
	struct buf err;
	json_t *out = NULL;
	int ret;

	load_volume(name, &vol);
	buf_init(&err, 1024);
	ret = fn(&vol, &out, &err);
	cr_assert_eq(ret, 0, "%s: %d %s", name, ret, buf_str(&err));
	buf_release(&err);
	vol_release(&vol);
	return out;
}

Test(build, retained_pvc_is_not_owned_by_its_volume)
{
	json_t *pvc = volume_object("shared-checkpoints", build_pvc_new);

	cr_assert_null(json_object_get(json_object_get(pvc, "metadata"), "ownerReferences"));
	assert_golden("shared-checkpoints.pvc", pvc);
	json_decref(pvc);
}

Test(build, deleted_pvc_is_owned_by_its_volume_and_keeps_its_class)
{
	json_t *pvc = volume_object("scratch", build_pvc_new);
	json_t *owner = json_array_get(json_object_get(json_object_get(pvc, "metadata"),
						       "ownerReferences"), 0);

	cr_assert_str_eq(json_string_value(json_object_get(owner, "kind")), "Volume");
	cr_assert(json_is_true(json_object_get(owner, "controller")));
	assert_golden("scratch.pvc", pvc);
	json_decref(pvc);
}

Test(build, nfs_volume_is_a_retained_pv_and_a_claim_bound_to_it)
{
	json_t *pv = volume_object("datasets", build_pv);
	json_t *pvc = volume_object("datasets", build_pvc_new);

	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pv, "metadata"),
							    "name")), "cadre.research.datasets.4a9ea1cb736a7423");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pvc, "spec"),
					   "volumeName")), "cadre.research.datasets.4a9ea1cb736a7423");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pv, "spec"),
		"persistentVolumeReclaimPolicy")), "Retain");
	assert_golden("datasets.pv", pv);
	assert_golden("datasets.pvc", pvc);
	json_decref(pv);
	json_decref(pvc);
}

Test(build, nfs_volume_without_a_size_gets_a_nominal_one_on_both_sides)
{
	json_t *pv = volume_object("home", build_pv);
	json_t *pvc = volume_object("home", build_pvc_new);

	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(pv,
		"spec"), "capacity"), "storage")), BUILD_NFS_NOMINAL_SIZE);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(
		json_object_get(pvc, "spec"), "resources"), "requests"), "storage")),
		BUILD_NFS_NOMINAL_SIZE);
	cr_assert_null(json_object_get(json_object_get(pvc, "metadata"), "ownerReferences"));
	assert_golden("home.pv", pv);
	assert_golden("home.pvc", pvc);
	json_decref(pv);
	json_decref(pvc);
}

Test(build, adopted_claims_and_non_nfs_pvs_are_not_built)
{
	struct volume vol;
	struct buf err;
	json_t *out = NULL;

	buf_init(&err, 1024);
	load_volume("adopted", &vol);
	cr_assert_eq(build_pvc(&vol, NULL, &out, &err), CADRE_EINVAL);
	cr_assert_null(out);
	cr_assert_str_eq(buf_str(&err),
			 "spec.claimName: the Volume adopts claim existing-claim; cadre makes none");
	vol_release(&vol);
	buf_reset(&err);
	load_volume("shared-checkpoints", &vol);
	cr_assert_eq(build_pv(&vol, &out, &err), CADRE_EINVAL);
	cr_assert_null(out);
	cr_assert_str_eq(buf_str(&err),
			 "spec.type: only an nfs Volume has a PersistentVolume of cadre's");
	vol_release(&vol);
	buf_release(&err);
}

/* printf 'research/datasets' | sha256sum | cut -c1-16 */
Test(build, pv_name_is_namespace_name_and_a_hash_of_both)
{
	struct volume vol;
	char name[BUILD_PV_NAME_SIZE];

	load_volume("datasets", &vol);
	cr_assert_eq(build_pv_name(&vol, name, sizeof(name)), 0);
	cr_assert_str_eq(name, "cadre.research.datasets.4a9ea1cb736a7423");
	cr_assert(name_is_dns1123_subdomain(name));
	cr_assert_eq(build_pv_name(&vol, name, 10), CADRE_EINVAL);
	free(vol.meta.namespace);
	vol.meta.namespace = NULL;
	cr_assert_eq(build_pv_name(&vol, name, sizeof(name)), CADRE_EINVAL);
	vol_release(&vol);
}

/* The old scheme gave both cadre-ml-prod-data; deleting one Volume deleted the other's PV. */
Test(build, pv_names_of_ml_prod_data_and_ml_prod_data_differ)
{
	char a[BUILD_PV_NAME_SIZE], b[BUILD_PV_NAME_SIZE];

	cr_assert_eq(build_pv_name_of("ml", "prod-data", a, sizeof(a)), 0);
	cr_assert_eq(build_pv_name_of("ml-prod", "data", b, sizeof(b)), 0);
	cr_assert_str_eq(a, "cadre.ml.prod-data.f3cc4d841248ed09");
	cr_assert_str_eq(b, "cadre.ml-prod.data.5f0e4a79f843de3a");
	/* A dotted name cannot pass for another namespace's either. */
	cr_assert_eq(build_pv_name_of("ml", "prod.data", a, sizeof(a)), 0);
	cr_assert_eq(build_pv_name_of("ml-prod", "data", b, sizeof(b)), 0);
	cr_assert_str_neq(a, b);
}

/* name: 253 bytes, labels of 63 (the last 61) joined by '.', with c at index cut. */
static void longest_name(char name[254], size_t cut, char c)
{
	memset(name, 'v', 253);
	name[63] = name[127] = name[191] = '.';
	name[253] = '\0';
	if (cut < 253)
		name[cut] = c;
}

/* The longest names still give a DNS subdomain of at most 253 bytes, and distinct ones. */
Test(build, pv_name_of_the_longest_names_is_cut_to_a_dns_subdomain)
{
	char ns[64], name[254], a[BUILD_PV_NAME_SIZE], b[BUILD_PV_NAME_SIZE];

	memset(ns, 'n', 63);
	ns[63] = '\0';
	longest_name(name, 253, 0);
	cr_assert(name_is_dns1123_subdomain(name));
	cr_assert_eq(build_pv_name_of(ns, name, a, sizeof(a)), 0);
	cr_assert_eq(strlen(a), 253);
	cr_assert(name_is_dns1123_subdomain(a), "%s", a);
	longest_name(name, 252, 'w');
	cr_assert_eq(build_pv_name_of(ns, name, b, sizeof(b)), 0);
	cr_assert_str_neq(a, b, "names that differ past the cut still differ");
	/* A cut that ends in '.' or '-' drops it: a label ends in a letter or digit. */
	for (size_t cut = 160; cut < 175; cut++) {
		longest_name(name, cut, cut == 191 ? '.' : '-');
		if (!name_is_dns1123_subdomain(name))
			continue;
		cr_assert_eq(build_pv_name_of(ns, name, a, sizeof(a)), 0);
		cr_assert(name_is_dns1123_subdomain(a), "cut at %zu: %s", cut, a);
		cr_assert_leq(strlen(a), 253);
	}
	/* The cut lands on the '.' after the third label. */
	memset(ns, 'n', 37);  /* 37 + '.' + 192 of the name = 230, the readable part */
	ns[37] = '\0';
	longest_name(name, 253, 0);
	cr_assert_eq(build_pv_name_of(ns, name, a, sizeof(a)), 0);
	cr_assert(name_is_dns1123_subdomain(a), "%s", a);
}

Test(build, pv_legacy_name_is_cadre_namespace_name_and_bounded)
{
	struct volume vol;
	char name[300];

	load_volume("datasets", &vol);
	cr_assert_eq(build_pv_legacy_name(&vol, name, sizeof(name)), 0);
	cr_assert_str_eq(name, "cadre-research-datasets");
	cr_assert_eq(build_pv_legacy_name(&vol, name, 10), CADRE_EINVAL);
	free(vol.meta.name);
	vol.meta.name = malloc(251);
	memset(vol.meta.name, 'a', 250);
	vol.meta.name[250] = '\0';
	cr_assert_eq(build_pv_legacy_name(&vol, name, sizeof(name)), CADRE_EINVAL);
	vol_release(&vol);
}

Test(build, a_pv_is_a_volumes_only_when_labelled_with_its_namespace_and_name)
{
	struct volume vol;
	json_t *pv;

	load_volume("datasets", &vol);
	pv = json_pack("{s:{s:{s:s, s:s}}}", "metadata", "labels", LABEL_VOLUME, "datasets",
		       LABEL_VOLUME_NAMESPACE, "research");
	cr_assert(build_pv_is_volumes(pv, &vol));
	json_object_set_new(json_object_get(json_object_get(pv, "metadata"), "labels"),
			    LABEL_VOLUME_NAMESPACE, json_string("research-2"));
	cr_assert_not(build_pv_is_volumes(pv, &vol), "another namespace's Volume datasets");
	json_object_del(json_object_get(json_object_get(pv, "metadata"), "labels"),
			LABEL_VOLUME_NAMESPACE);
	cr_assert_not(build_pv_is_volumes(pv, &vol), "a name alone says no namespace");
	json_object_del(json_object_get(pv, "metadata"), "labels");
	cr_assert_not(build_pv_is_volumes(pv, &vol), "unlabelled");
	json_decref(pv);
	vol_release(&vol);
}

/* A claim adopting a PV of the old scheme is bound to it, not to a new one. */
Test(build, nfs_claim_binds_to_the_pv_it_is_given)
{
	struct volume vol;
	struct buf err;
	json_t *pvc = NULL;

	load_volume("datasets", &vol);
	buf_init(&err, 256);
	cr_assert_eq(build_pvc(&vol, "cadre-research-datasets", &pvc, &err), 0, "%s",
		     buf_str(&err));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pvc, "spec"),
							    "volumeName")), "cadre-research-datasets");
	json_decref(pvc);
	buf_release(&err);
	vol_release(&vol);
}

/* The claim cadre made for the Volume name (in namespace research), as cached, with refs. */
static json_t *cached_claim(const char *name, json_t *refs)
{
	json_t *pvc = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s}}", "apiVersion", "v1",
				"kind", "PersistentVolumeClaim", "metadata", "name", name,
				"namespace", "research", "uid", "c1a1c1a1-0000-4000-8000-000000000001",
				"resourceVersion", "4242");

	cr_assert_not_null(pvc);
	if (refs)
		cr_assert_eq(json_object_set_new(json_object_get(pvc, "metadata"),
						 "ownerReferences", refs), 0);
	return pvc;
}

/* The reference build_pvc puts on the claim of vol. */
static json_t *refs_of(const struct volume *vol)
{
	json_t *refs = NULL;

	cr_assert_eq(build_owner_refs(VOL_API_VERSION, VOL_KIND, vol->meta.name, vol->meta.uid,
				      &refs), 0);
	return refs;
}

/* build_claim_owner_patch on vol and pvc (stolen), expected to succeed. */
static json_t *owner_patch_for(const struct volume *vol, json_t *pvc)
{
	struct buf err;
	json_t *patch = NULL;
	int ret;

	buf_init(&err, 256);
	ret = build_claim_owner_patch(vol, pvc, &patch, &err);
	cr_assert_eq(ret, 0, "%d %s", ret, buf_str(&err));
	buf_release(&err);
	json_decref(pvc);
	return patch;
}

static void assert_json(json_t *got, const char *want_text)
{
	json_error_t error;
	json_t *want = json_loads(want_text, 0, &error);
	char *dump;

	cr_assert_not_null(want, "%s", error.text);
	dump = json_dumps(got, JSON_SORT_KEYS);
	cr_assert(json_equal(got, want), "got %s", dump ? dump : "(null)");
	free(dump);
	json_decref(want);
}

Test(build, only_a_delete_volume_owns_and_never_an_adopted_claim)
{
	struct volume vol;

	load_volume("scratch", &vol);  /* Delete */
	cr_assert(build_claim_owned(&vol));
	vol.spec.reclaim_policy = VOL_RECLAIM_RETAIN;
	cr_assert_not(build_claim_owned(&vol));
	vol_release(&vol);
	load_volume("adopted", &vol);  /* claimName, Retain */
	cr_assert_not(build_claim_owned(&vol));
	vol.spec.reclaim_policy = VOL_RECLAIM_DELETE;
	cr_assert_not(build_claim_owned(&vol), "a claim the user brought is never owned");
	vol_release(&vol);
}

Test(build, a_claim_already_as_the_policy_says_needs_no_patch)
{
	struct volume vol;

	load_volume("scratch", &vol);
	cr_assert_null(owner_patch_for(&vol, cached_claim("scratch", refs_of(&vol))));
	vol.spec.reclaim_policy = VOL_RECLAIM_RETAIN;
	cr_assert_null(owner_patch_for(&vol, cached_claim("scratch", NULL)));
	cr_assert_null(owner_patch_for(&vol, cached_claim("scratch", json_array())));
	vol_release(&vol);
}

Test(build, delete_changed_to_retain_removes_only_our_reference_guarded_by_resource_version)
{
	struct volume vol;
	json_t *refs, *ours, *patch;

	load_volume("scratch", &vol);
	vol.spec.reclaim_policy = VOL_RECLAIM_RETAIN;
	refs = json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "v1", "kind", "ConfigMap",
			 "name", "keeper", "uid", "0f0f0f0f-0000-4000-8000-000000000001");
	ours = refs_of(&vol);
	cr_assert_eq(json_array_extend(refs, ours), 0);
	json_decref(ours);
	patch = owner_patch_for(&vol, cached_claim("scratch", refs));
	assert_json(patch, "{\"metadata\": {\"resourceVersion\": \"4242\", \"ownerReferences\": "
		    "[{\"$patch\": \"delete\", \"uid\": \"5e5e5e5e-0000-4000-8000-00000000000b\"}]}}");
	json_decref(patch);
	vol_release(&vol);
}

Test(build, retain_changed_to_delete_adds_the_controlling_reference_guarded_by_resource_version)
{
	struct volume vol;
	json_t *patch;

	load_volume("shared-checkpoints", &vol);
	vol.spec.reclaim_policy = VOL_RECLAIM_DELETE;
	patch = owner_patch_for(&vol, cached_claim("shared-checkpoints", NULL));
	assert_json(patch, "{\"metadata\": {\"resourceVersion\": \"4242\", \"ownerReferences\": "
		    "[{\"apiVersion\": \"cadre.dev/v1alpha1\", \"kind\": \"Volume\", "
		    "\"name\": \"shared-checkpoints\", "
		    "\"uid\": \"5e5e5e5e-0000-4000-8000-00000000000a\", \"controller\": true, "
		    "\"blockOwnerDeletion\": true}]}}");
	json_decref(patch);
	vol_release(&vol);
}

Test(build, a_reference_added_beside_another_controller_does_not_claim_control)
{
	struct volume vol;
	json_t *refs, *patch;

	load_volume("scratch", &vol);
	refs = json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "apps/v1",
			 "kind", "StatefulSet", "name", "db", "uid",
			 "0f0f0f0f-0000-4000-8000-000000000002", "controller", 1);
	patch = owner_patch_for(&vol, cached_claim("scratch", refs));
	cr_assert_not_null(patch);
	cr_assert(json_is_false(json_object_get(json_array_get(json_object_get(json_object_get(
		patch, "metadata"), "ownerReferences"), 0), "controller")));
	json_decref(patch);
	vol_release(&vol);
}

Test(build, a_reference_of_an_earlier_volume_of_the_same_name_is_not_ours)
{
	struct volume vol;
	json_t *refs, *patch;

	load_volume("scratch", &vol);
	refs = refs_of(&vol);
	cr_assert_eq(json_object_set_new(json_array_get(refs, 0), "uid",
					 json_string("0f0f0f0f-0000-4000-8000-000000000003")), 0);
	cr_assert_eq(json_object_set_new(json_array_get(refs, 0), "controller", json_false()), 0);
	patch = owner_patch_for(&vol, cached_claim("scratch", refs));
	cr_assert_not_null(patch, "the Volume of this uid does not own the claim yet");
	json_decref(patch);
	vol.spec.reclaim_policy = VOL_RECLAIM_RETAIN;
	refs = refs_of(&vol);
	cr_assert_eq(json_object_set_new(json_array_get(refs, 0), "uid",
					 json_string("0f0f0f0f-0000-4000-8000-000000000003")), 0);
	cr_assert_null(owner_patch_for(&vol, cached_claim("scratch", refs)));
	vol_release(&vol);
}

Test(build, an_adopted_claim_with_delete_is_never_given_our_reference_and_loses_one_it_has)
{
	struct volume vol;
	json_t *patch;

	load_volume("adopted", &vol);
	vol.spec.reclaim_policy = VOL_RECLAIM_DELETE;
	cr_assert_null(owner_patch_for(&vol, cached_claim("existing-claim", NULL)));
	patch = owner_patch_for(&vol, cached_claim("existing-claim", refs_of(&vol)));
	assert_json(patch, "{\"metadata\": {\"resourceVersion\": \"4242\", \"ownerReferences\": "
		    "[{\"$patch\": \"delete\", \"uid\": \"5e5e5e5e-0000-4000-8000-00000000000e\"}]}}");
	json_decref(patch);
	vol_release(&vol);
}

Test(build, an_owner_patch_needs_the_volume_uid_and_the_claim_resource_version)
{
	struct volume vol;
	struct buf err;
	json_t *pvc, *patch = NULL;

	buf_init(&err, 256);
	load_volume("scratch", &vol);
	pvc = cached_claim("scratch", NULL);
	json_object_del(json_object_get(pvc, "metadata"), "resourceVersion");
	cr_assert_eq(build_claim_owner_patch(&vol, pvc, &patch, &err), CADRE_EINVAL);
	cr_assert_null(patch);
	cr_assert_str_eq(buf_str(&err),
			 "metadata.resourceVersion: the claim has none to guard the patch with");
	json_decref(pvc);
	buf_reset(&err);
	free(vol.meta.uid);
	vol.meta.uid = NULL;
	pvc = cached_claim("scratch", NULL);
	cr_assert_eq(build_claim_owner_patch(&vol, pvc, &patch, &err), CADRE_EINVAL);
	cr_assert_eq(build_claim_disown_patch(&vol, &patch, NULL), CADRE_EINVAL);
	cr_assert_null(patch);
	json_decref(pvc);
	vol_release(&vol);
	buf_release(&err);
}

Test(build, the_last_disown_removes_our_reference_by_uid_unguarded)
{
	struct volume vol;
	json_t *patch = NULL;

	load_volume("shared-checkpoints", &vol);
	cr_assert_eq(build_claim_disown_patch(&vol, &patch, NULL), 0);
	assert_json(patch, "{\"metadata\": {\"ownerReferences\": [{\"$patch\": \"delete\", "
		    "\"uid\": \"5e5e5e5e-0000-4000-8000-00000000000a\"}]}}");
	json_decref(patch);
	vol_release(&vol);
}

Test(build, native_mode_points_each_pod_at_the_attempts_pod_group_without_our_gate)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	char group[128];
	json_t *pod;

	load_job("llama-pretrain", NULL, &tj);
	opts.mode = GANG_NATIVE;
	cr_assert_eq(build_podgroup_name(tj.meta.name, 3, group, sizeof(group)), 0);
	cr_assert_str_eq(group, "llama-pretrain-attempt-3");
	pod = pod_ok(&tj, 1, 3, &opts);
	cr_assert_null(json_object_get(pod_spec(pod), "schedulingGates"));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pod_spec(pod),
			 "schedulingGroup"), "podGroupName")), group);
	cr_assert_null(label(pod, BUILD_KUEUE_GROUP_LABEL));
	cr_assert(build_pod_kept_scheduling_group(pod, group));
	json_decref(pod);
	tj_release(&tj);
}

Test(build, a_pod_whose_scheduling_group_the_api_server_dropped_is_detected)
{
	json_t *dropped = json_pack("{s:{s:s}}", "spec", "hostname", "llama-pretrain-0");
	json_t *other = json_pack("{s:{s:{s:s}}}", "spec", "schedulingGroup", "podGroupName",
				  "llama-pretrain-attempt-0");

	cr_assert_not(build_pod_kept_scheduling_group(dropped, "llama-pretrain-attempt-0"));
	cr_assert_not(build_pod_kept_scheduling_group(other, "llama-pretrain-attempt-1"));
	cr_assert_not(build_pod_kept_scheduling_group(NULL, "llama-pretrain-attempt-0"));
	json_decref(dropped);
	json_decref(other);
}

Test(build, pod_group_is_a_gang_of_num_nodes_owned_by_the_job)
{
	struct trainingjob tj;
	struct buf err;
	json_t *pg = NULL;

	load_job("llama-pretrain", NULL, &tj);
	buf_init(&err, 1024);
	cr_assert_eq(build_podgroup(&tj, 0, BUILD_PODGROUP_V1ALPHA2, &pg, &err), 0, "%s",
		     buf_str(&err));
	assert_golden("llama-pretrain.podgroup-0", pg);
	json_decref(pg);
	tj_release(&tj);
	buf_release(&err);
}

Test(build, pod_group_carries_the_priority_class_and_the_served_version)
{
	struct trainingjob tj;
	struct buf err;
	json_t *pg = NULL;

	load_job("cpu-only", NULL, &tj);
	buf_init(&err, 1024);
	cr_assert_eq(build_podgroup(&tj, 2, BUILD_PODGROUP_V1BETA1, &pg, &err), 0, "%s",
		     buf_str(&err));
	cr_assert_str_eq(json_string_value(json_object_get(pg, "apiVersion")),
			 "scheduling.k8s.io/v1beta1");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pg, "spec"),
			 "priorityClassName")), "batch-low");
	cr_assert_str_eq(label(pg, LABEL_RESTART_ATTEMPT), "2");
	assert_golden("cpu-only.podgroup-2", pg);
	json_decref(pg);
	tj_release(&tj);
	buf_release(&err);
}

/* A job stored before validation knew the paths cadre mounts is refused, not built. */
Test(build, refuses_volumes_over_the_paths_cadre_mounts)
{
	struct build_opts opts = template_opts();
	struct trainingjob tj;
	char *saved;

	load_job("template", NULL, &tj);
	saved = tj.spec.volumes[0].mount_path;
	tj.spec.volumes[0].mount_path = "/cadre/bin";
	pod_fails(&tj, 0, &opts, CADRE_EINVAL, "spec.volumes: /cadre/bin is mounted by cadre");
	tj.spec.volumes[0].mount_path = "/dev/shm";
	pod_fails(&tj, 0, &opts, CADRE_EINVAL, "spec.volumes: /dev/shm is mounted by cadre");
	tj.spec.volumes[0].mount_path = "/cadre/entrypoint";
	pod_fails(&tj, 0, &opts, CADRE_EINVAL, "spec.volumes: /cadre/entrypoint is mounted by cadre");
	tj.spec.volumes[0].mount_path = saved;
	tj_release(&tj);
}

/* ---- long runs (docs/pods.md, "Hangs" and "Signals") ---- */

static void with_long_runs(json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec"), *status = json_object_get(obj, "status");

	json_object_set_new(spec, "hang", json_pack("{s:i, s:i}", "startupSeconds", 600,
						     "progressSeconds", 120));
	json_object_set_new(spec, "signal", json_pack("{s:s, s:i}", "name", "USR1",
						       "secondsBefore", 90));
	json_object_set_new(spec, "activeDeadlineSeconds", json_integer(3600));
	/* The job's own flight recorder buffer size stands. */
	if (!json_object_get(spec, "envs"))
		json_object_set_new(spec, "envs", json_object());
	json_object_set_new(json_object_get(spec, "envs"), "TORCH_NCCL_TRACE_BUFFER_SIZE",
			    json_string("20000"));
	json_object_set_new(status, "admittedTime", json_string("2026-03-02T09:15:00Z"));
}

Test(build, hang_and_signal_reach_the_entrypoint_and_the_pod)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", with_long_runs, &tj);
	opts.node = "gpu-node-7";
	pod = pod_ok(&tj, 1, 2, &opts);
	cr_assert_str_eq(env_value(pod, ENTRYPOINT_ENV_HANG_STARTUP), "600");
	cr_assert_str_eq(env_value(pod, ENTRYPOINT_ENV_HANG_PROGRESS), "120");
	cr_assert_str_eq(env_value(pod, ENTRYPOINT_ENV_HEARTBEAT_FILE), BUILD_HEARTBEAT_FILE);
	/* The first Volume by mount path keeps the dumps, per job and attempt. */
	cr_assert_str_eq(env_value(pod, ENTRYPOINT_ENV_NCCL_DUMP_DIR),
			 "/mnt/checkpoints/cadre-nccl/llama-pretrain/attempt-2");
	cr_assert_str_eq(env_value(pod, "TORCH_NCCL_DUMP_ON_TIMEOUT"), "1");
	cr_assert_str_eq(env_value(pod, "TORCH_FR_DUMP_TEMP_FILE"),
			 "/mnt/checkpoints/cadre-nccl/llama-pretrain/attempt-2/rank_");
	cr_assert_str_eq(env_value(pod, "TORCH_NCCL_TRACE_BUFFER_SIZE"), "20000",
			 "the job's own value, once");
	cr_assert_str_eq(env_value(pod, ENTRYPOINT_ENV_SIGNAL), "USR1");
	cr_assert_str_eq(env_value(pod, ENTRYPOINT_ENV_SIGNAL_BEFORE), "90");
	/* 2026-03-02T09:15:00Z + 3600 s. */
	cr_assert_str_eq(env_value(pod, ENTRYPOINT_ENV_DEADLINE), "1772446500");
	cr_assert_eq(json_integer_value(json_object_get(pod_spec(pod),
							"terminationGracePeriodSeconds")), 120,
		     "secondsBefore + 30 when the job sets no grace");
	json_decref(pod);
	tj_release(&tj);

	/* Asking for neither costs nothing: no variable, no grace of ours. */
	load_job("llama-pretrain", NULL, &tj);
	pod = pod_ok(&tj, 1, 0, &opts);
	cr_assert_null(env_value(pod, ENTRYPOINT_ENV_HANG_PROGRESS));
	cr_assert_null(env_value(pod, "TORCH_NCCL_DUMP_ON_TIMEOUT"));
	cr_assert_null(env_value(pod, ENTRYPOINT_ENV_SIGNAL));
	cr_assert_null(json_object_get(pod_spec(pod), "terminationGracePeriodSeconds"));
	json_decref(pod);
	tj_release(&tj);
}

static void with_queue_and_excluded(json_t *obj)
{
	with_queue(obj);
	json_object_set_new(json_object_get(obj, "status"), "excludedNodes",
			    json_pack("[{s:s, s:s}, {s:s, s:s}]", "node", "gpu-node-3", "reason",
				      "NodeLost", "node", "gpu-node-9", "reason", "Hung"));
}

/* Where cadre does not choose the node (Kueue, native, none), the pod keeps off the excluded ones. */
Test(build, where_cadre_does_not_place_the_pod_it_keeps_off_the_excluded_nodes)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod, *field;

	load_job("llama-pretrain", with_queue_and_excluded, &tj);
	pod = pod_ok(&tj, 0, 0, &opts);
	field = json_array_get(json_object_get(json_array_get(json_object_get(json_object_get(
		json_object_get(json_object_get(pod_spec(pod), "affinity"), "nodeAffinity"),
		"requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms"), 0),
		"matchFields"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(field, "operator")), "NotIn");
	cr_assert_eq(json_array_size(json_object_get(field, "values")), 2);
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(field, "values"), 1)),
			 "gpu-node-9");
	json_decref(pod);
	tj_release(&tj);
}

/* An array job's element, as the controller makes it (docs/design.md 12). */
static void array_element(json_t *obj)
{
	json_t *meta = json_object_get(obj, "metadata");

	json_object_set_new(meta, "name", json_string("sweep-4"));
	json_object_set_new(meta, "labels", json_pack("{s:s, s:s, s:s}", LABEL_ARRAY_JOB, "sweep",
						      LABEL_ARRAY_INDEX, "4", LABEL_SLURM_NAME,
						      "sweep"));
	json_object_set_new(meta, "annotations", json_pack("{s:s, s:s}", ANNOTATION_ARRAY_JOB_ID,
							   "482913300", ANNOTATION_ARRAY_TASKS,
							   "0-15:4%2"));
	json_object_set_new(json_object_get(obj, "spec"), "output",
			    json_string("logs/%x-%A_%a.out"));
}

/* slurmctld's _create_job_array: COUNT, MIN, MAX and STEP of the index set. */
Test(build, an_array_element_sees_slurm_array_variables_and_the_array_s_job_name)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", array_element, &tj);
	pod = pod_ok(&tj, 0, 0, &opts);
	cr_assert_str_eq(env_value(pod, "SLURM_ARRAY_JOB_ID"), "482913300");
	cr_assert_str_eq(env_value(pod, "SLURM_ARRAY_TASK_ID"), "4");
	cr_assert_str_eq(env_value(pod, "SLURM_ARRAY_TASK_COUNT"), "4");
	cr_assert_str_eq(env_value(pod, "SLURM_ARRAY_TASK_MIN"), "0");
	cr_assert_str_eq(env_value(pod, "SLURM_ARRAY_TASK_MAX"), "12");
	cr_assert_str_eq(env_value(pod, "SLURM_ARRAY_TASK_STEP"), "4");
	cr_assert_str_eq(env_value(pod, "SLURM_JOB_NAME"), "sweep");
	cr_assert_str_eq(env_value(pod, "CADRE_JOB_NAME"), "sweep-4");
	cr_assert_str_eq(env_value(pod, "CADRE_OUTPUT"), "logs/%x-%A_%a.out");
	cr_assert_null(env_value(pod, "CADRE_ERROR"));
	json_decref(pod);
	tj_release(&tj);
}

Test(build, a_job_that_is_no_array_element_has_no_array_variables)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", NULL, &tj);
	pod = pod_ok(&tj, 0, 0, &opts);
	cr_assert_null(env_value(pod, "SLURM_ARRAY_JOB_ID"));
	cr_assert_null(env_value(pod, "SLURM_ARRAY_TASK_ID"));
	cr_assert_null(env_value(pod, "CADRE_OUTPUT"));
	json_decref(pod);
	tj_release(&tj);
}

/* spec.topology of a 2-node job: required and preferred racks, segments of one. */
static void with_topology(json_t *obj)
{
	json_object_set_new(json_object_get(obj, "spec"), "topology", json_pack(
		"{s:s, s:s, s:{s:i, s:s}}", "required", "example.com/block", "preferred",
		"example.com/rack", "segment", "size", 1, "required", "example.com/rack"));
}

/* Kueue mode: Kueue's TAS annotations, one of required and preferred, ranks as the pod index. */
Test(build, kueue_mode_writes_spec_topology_as_kueues_tas_annotations)
{
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("llama-pretrain", with_topology, &tj);
	opts.mode = GANG_KUEUE;
	pod = pod_ok(&tj, 1, 0, &opts);
	cr_assert_str_eq(annotation(pod, BUILD_KUEUE_TAS_REQUIRED), "example.com/block");
	cr_assert_null(annotation(pod, BUILD_KUEUE_TAS_PREFERRED),
		       "Kueue refuses a pod with both");
	cr_assert_str_eq(annotation(pod, BUILD_KUEUE_TAS_SLICE_REQUIRED), "example.com/rack");
	cr_assert_str_eq(annotation(pod, BUILD_KUEUE_TAS_SLICE_SIZE), "1");
	cr_assert_str_eq(annotation(pod, BUILD_KUEUE_POD_INDEX_LABEL), LABEL_NODE_RANK);
	cr_assert_str_eq(label(pod, LABEL_NODE_RANK), "1");
	json_decref(pod);
	/* Built-in mode writes none of them: the admission placed the ranks. */
	opts.mode = GANG_BUILTIN;
	pod = pod_ok(&tj, 1, 0, &opts);
	cr_assert_null(annotation(pod, BUILD_KUEUE_TAS_REQUIRED));
	cr_assert_null(annotation(pod, BUILD_KUEUE_POD_INDEX_LABEL));
	json_decref(pod);
	tj_release(&tj);
}

Test(build, a_pod_group_takes_the_required_level_as_its_topology_constraint)
{
	struct trainingjob tj;
	struct buf err;
	json_t *pg = NULL, *topo;

	load_job("llama-pretrain", with_topology, &tj);
	buf_init(&err, 1024);
	cr_assert_eq(build_podgroup(&tj, 0, BUILD_PODGROUP_V1ALPHA2, &pg, &err), 0, "%s",
		     buf_str(&err));
	topo = json_object_get(json_object_get(json_object_get(pg, "spec"),
					       "schedulingConstraints"), "topology");
	cr_assert_eq(json_array_size(topo), 1);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(topo, 0), "key")),
			 "example.com/block");
	json_decref(pg);
	tj_release(&tj);
	buf_release(&err);
}

static struct build_opts scratch_opts(void)
{
	static const char *const claims[] = { "shared-checkpoints" };

	return (struct build_opts){
		.mode = GANG_NONE,
		.claim_names = claims,
		.n_claim_names = 1,
	};
}

Test(build, scratch_is_an_ephemeral_claim_with_a_class_and_an_emptydir_without)
{
	struct build_opts opts = scratch_opts();
	struct trainingjob tj;
	json_t *pod, *volumes, *mounts, *v;

	load_job("node-scratch", NULL, &tj);
	pod = pod_ok(&tj, 1, 0, &opts);
	replace_script(pod);
	assert_golden("node-scratch.pod-1", pod);
	volumes = json_object_get(pod_spec(pod), "volumes");
	mounts = json_object_get(container_of(pod), "volumeMounts");
	/* dshm, cadre-bin, cadre-entrypoint, vol-0, then scratch in path order. */
	cr_assert_eq(json_array_size(volumes), 7);
	v = json_array_get(volumes, 4);
	cr_assert_str_eq(json_string_value(json_object_get(v, "name")), "scratch-0");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(mounts, 4), "mountPath")),
			 "/mnt/cache");
	v = json_object_get(json_object_get(json_object_get(v, "ephemeral"), "volumeClaimTemplate"),
			    "spec");
	cr_assert_str_eq(json_string_value(json_object_get(v, "storageClassName")), "local-nvme");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(v, "accessModes"), 0)),
			 "ReadWriteOnce");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(v,
		"resources"), "requests"), "storage")), "100Gi");
	v = json_array_get(volumes, 6);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(mounts, 6), "mountPath")),
			 "/scratch/tmp");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(v, "emptyDir"),
		"sizeLimit")), "20Gi");
	/* The emptyDirs' sizes are asked of the node's disk, and limited by sizeLimit alone. */
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(
		container_of(pod), "resources"), "requests"), "ephemeral-storage")), "20992Mi");
	cr_assert_null(json_object_get(json_object_get(json_object_get(container_of(pod),
		"resources"), "limits"), "ephemeral-storage"));
	/* TMPDIR is the first path in sorted order, whatever the JSON's. */
	cr_assert_str_eq(env_value(pod, "TMPDIR"), "/mnt/cache");
	cr_assert_str_eq(env_value(pod, ENTRYPOINT_ENV_STAGE_IN),
			 "/mnt/shared/datasets/shards\n/mnt/cache/shards\n"
			 "/mnt/shared/vocab.json\n/scratch/tmp/vocab.json\n");
	json_decref(pod);
	tj_release(&tj);
}

static void set_tmpdir(json_t *obj)
{
	json_object_set_new(json_object_get(obj, "spec"), "envs",
			    json_pack("{s:s}", "TMPDIR", "/var/tmp"));
}

Test(build, a_job_that_sets_tmpdir_keeps_its_own)
{
	struct build_opts opts = scratch_opts();
	struct trainingjob tj;
	const json_t *e;
	json_t *pod, *env;
	size_t i, n = 0;

	load_job("node-scratch", set_tmpdir, &tj);
	pod = pod_ok(&tj, 0, 0, &opts);
	/* Once, the job's, in the pod: not also in the ConfigMap, where the pod's would win. */
	cr_assert_null(json_object_get(last_shared, "TMPDIR"));
	env = pod_environment(&tj, &opts, pod);
	json_array_foreach(env, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "name")), "TMPDIR")) {
			cr_assert_str_eq(json_string_value(json_object_get(e, "value")), "/var/tmp");
			n++;
		}
	cr_assert_eq(n, 1);
	json_decref(env);
	json_decref(pod);
	tj_release(&tj);
}

Test(build, a_job_without_scratch_gets_no_tmpdir_and_no_disk_request)
{
	struct build_opts opts = template_opts();
	struct trainingjob tj;
	json_t *pod;

	load_job("template", NULL, &tj);
	pod = pod_ok(&tj, 0, 0, &opts);
	cr_assert_null(env_value(pod, "TMPDIR"));
	cr_assert_null(env_value(pod, ENTRYPOINT_ENV_STAGE_IN));
	cr_assert_null(json_object_get(json_object_get(json_object_get(container_of(pod),
		"resources"), "requests"), "ephemeral-storage"));
	json_decref(pod);
	tj_release(&tj);
}

#define CODE_D1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define CODE_D2 "sha256:2222222222222222222222222222222222222222222222222222222222222222"

/* spec.code: a directory of two parts at /home/alice/proj, one file at /etc/app.conf. */
static void with_code(json_t *obj)
{
	json_object_set_new(json_object_get(obj, "spec"), "code", json_pack(
		"[{s:s, s:s}, {s:s, s:s}]", "digest", CODE_D1, "path", "/home/alice/proj",
		"digest", CODE_D2, "path", "/etc/app.conf"));
}

/* The volume of pod named name, or NULL. */
static const json_t *pod_volume(const json_t *pod, const char *name)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(pod_spec(pod), "volumes"), i, v)
		if (!strcmp(json_string_value(json_object_get(v, "name")), name))
			return v;
	return NULL;
}

static const char *mount_path_of(const json_t *pod, const char *name)
{
	const json_t *m;
	size_t i;

	json_array_foreach(json_object_get(container_of(pod), "volumeMounts"), i, m)
		if (!strcmp(json_string_value(json_object_get(m, "name")), name))
			return json_string_value(json_object_get(m, "mountPath"));
	return NULL;
}

Test(build, code_bundles_are_mounted_read_only_and_a_directory_gets_an_emptydir_at_its_path)
{
	static const struct build_code code[] = { { 2, false }, { 1, true } };
	struct build_opts opts = llama_opts();
	struct trainingjob tj;
	const json_t *v, *sources;
	json_t *pod;

	load_job("llama-pretrain", with_code, &tj);
	opts.code = code;
	opts.n_code = 2;
	pod = pod_ok(&tj, 1, 0, &opts);
	v = pod_volume(pod, "code-0");
	cr_assert_not_null(v);
	sources = json_object_get(json_object_get(v, "projected"), "sources");
	cr_assert_eq(json_array_size(sources), 2);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(sources, 1),
		"configMap"), "name")), "cadre-code-1111111111111111111111111111111111111111-1");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(
		json_object_get(json_array_get(sources, 1), "configMap"), "items"), 0), "path")), "1");
	cr_assert_str_eq(mount_path_of(pod, "code-0"), "/cadre/code/0");
	cr_assert_str_eq(mount_path_of(pod, "code-dir-0"), "/home/alice/proj");
	cr_assert_str_eq(mount_path_of(pod, "code-1"), "/cadre/code/1");
	cr_assert_null(pod_volume(pod, "code-dir-1"), "a file is written at its path, not mounted");
	cr_assert_str_eq(env_value(pod, "CADRE_CODE"),
			 CODE_D1 " dir /cadre/code/0 /home/alice/proj\n"
			 CODE_D2 " file /cadre/code/1 /etc/app.conf\n");
	json_decref(pod);

	/* Until every bundle is whole, no pod: the job waits, nothing is wrong with it. */
	opts.n_code = 1;
	pod_fails(&tj, 0, &opts, CADRE_EAGAIN, "spec.code");
	tj_release(&tj);
}

static void restart_in_place(json_t *obj)
{
	json_object_set_new(json_object_get(obj, "spec"), "restartStrategy", json_string("InPlace"));
}

static void restart_in_place_queued(json_t *obj)
{
	restart_in_place(obj);
	json_object_set_new(json_object_get(obj, "spec"), "queue", json_string("team-a"));
}

/*
 * InPlace (docs/failures.md): the container restarts in its pod on any
 * non-zero end, and the entrypoint reads the attempt from the pod's label,
 * kept current by the kubelet.
 */
Test(build, an_in_place_pod_restarts_its_container_and_reads_the_attempt_from_its_label)
{
	struct build_opts opts = llama_opts();
	const json_t *vol, *item;
	struct trainingjob tj;
	json_t *pod, *want;

	load_job("llama-pretrain", restart_in_place, &tj);
	pod = pod_ok(&tj, 1, 2, &opts);
	cr_assert_str_eq(json_string_value(json_object_get(pod_spec(pod), "restartPolicy")),
			 "Never");
	cr_assert_str_eq(json_string_value(json_object_get(container_of(pod), "restartPolicy")),
			 "Never");
	want = json_pack("[{s:s, s:{s:s, s:[i]}}]", "action", "Restart", "exitCodes",
			 "operator", "NotIn", "values", 0);
	cr_assert(json_equal(json_object_get(container_of(pod), "restartPolicyRules"), want));
	json_decref(want);
	vol = pod_volume(pod, "cadre-attempt");
	cr_assert_not_null(vol);
	item = json_array_get(json_object_get(json_object_get(vol, "downwardAPI"), "items"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(item, "path")), "attempt");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(item, "fieldRef"),
							    "fieldPath")),
			 "metadata.labels['cadre.dev/restart-attempt']");
	cr_assert_str_eq(mount_path_of(pod, "cadre-attempt"), BUILD_ATTEMPT_DIR);
	cr_assert_str_eq(env_value(pod, ENTRYPOINT_ENV_ATTEMPT_FILE), "/cadre/attempt/attempt");
	cr_assert_str_eq(env_value(pod, "CADRE_RESTART_ATTEMPT"), "2");
	json_decref(pod);
	tj_release(&tj);

	/* Recreate, the default, and a Kueue job: none of it. */
	load_job("llama-pretrain", NULL, &tj);
	pod = pod_ok(&tj, 1, 2, &opts);
	cr_assert_null(json_object_get(container_of(pod), "restartPolicyRules"));
	cr_assert_null(pod_volume(pod, "cadre-attempt"));
	cr_assert_null(env_value(pod, ENTRYPOINT_ENV_ATTEMPT_FILE));
	json_decref(pod);
	tj_release(&tj);
	load_job("llama-pretrain", restart_in_place_queued, &tj);
	pod = pod_ok(&tj, 1, 2, &opts);
	cr_assert_null(json_object_get(container_of(pod), "restartPolicyRules"));
	cr_assert_null(pod_volume(pod, "cadre-attempt"));
	json_decref(pod);
	tj_release(&tj);
}
