#include <criterion/criterion.h>

#include <jansson.h>
#include <math.h>

#include "api/decode.h"
#include "api/fielderr.h"
#include "api/quantity.h"
#include "api/trainingjob.h"
#include "base/buf.h"
#include "base/err.h"

#define FIXTURE(name) CADRE_SOURCE_DIR "/unit/testdata/api/" name

static json_t *load_fixture(const char *path)
{
	json_error_t error;
	json_t *json = json_load_file(path, 0, &error);

	cr_assert_not_null(json, "%s:%d: %s", path, error.line, error.text);
	return json;
}

/* A minimal valid job with fragment (a JSON object) merged over its spec. */
static json_t *job_with_spec(const char *fragment)
{
	json_t *job = load_fixture(FIXTURE("trainingjob-minimal.json"));
	json_error_t error;
	json_t *extra = json_loads(fragment, 0, &error);

	cr_assert_not_null(extra, "%s: %s", fragment, error.text);
	cr_assert_eq(json_object_update(json_object_get(job, "spec"), extra), 0);
	json_decref(extra);
	return job;
}

/* All problems tj_parse and tj_validate find, joined, for messages. */
static char *joined(const struct field_errors *errs)
{
	struct buf out;

	buf_init(&out, 1 << 20);
	field_errors_join(errs, &out);
	return buf_detach(&out, NULL);
}

/*
 * Parse and validate a job whose spec has fragment merged in, and assert
 * that one of the problems is exactly "path: message".
 */
static void assert_problem(const char *fragment, const char *path, const char *message)
{
	struct trainingjob tj;
	struct field_errors errs;
	json_t *job = job_with_spec(fragment);
	const struct field_error *e;
	char *all;

	field_errors_init(&errs);
	tj_parse(job, &tj, &errs);
	tj_validate(&tj, &errs);
	all = joined(&errs);
	e = field_errors_find(&errs, path);
	cr_assert_not_null(e, "%s: no problem at %s; got: %s", fragment, path, all);
	cr_assert_str_eq(e->message, message, "%s at %s; got: %s", fragment, path, all);
	free(all);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);
}

static void assert_valid(const char *fragment)
{
	struct trainingjob tj;
	struct field_errors errs;
	json_t *job = job_with_spec(fragment);
	char *all;
	int parsed, validated;

	field_errors_init(&errs);
	parsed = tj_parse(job, &tj, &errs);
	validated = tj_validate(&tj, &errs);
	all = joined(&errs);
	cr_assert_eq(parsed, 0, "%s: %s", fragment, all);
	cr_assert_eq(validated, 0, "%s: %s", fragment, all);
	free(all);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);
}

Test(trainingjob, parses_every_field_of_the_design_example)
{
	json_t *json = load_fixture(FIXTURE("trainingjob-example.json"));
	struct trainingjob tj;
	struct field_errors errs;
	const struct tj_spec *s = &tj.spec;
	const struct tj_status *st = &tj.status;

	field_errors_init(&errs);
	cr_assert_eq(tj_parse(json, &tj, &errs), 0);
	cr_assert_eq(tj_validate(&tj, &errs), 0);
	cr_assert_str_eq(tj.meta.name, "llama-pretrain");
	cr_assert_str_eq(tj.meta.namespace, "research");
	cr_assert_eq(tj.meta.generation, 3);

	cr_assert_eq(s->num_nodes, 2);
	cr_assert_str_eq(s->resources.accelerators, "H100:8");
	cr_assert(s->resources.has_accel);
	cr_assert_str_eq(s->resources.accel.type, "H100");
	cr_assert_eq(s->resources.accel.count, 8);
	cr_assert_str_eq(s->resources.cpus, "32");
	cr_assert_eq(s->resources.cpus_milli, 32000);
	cr_assert_str_eq(s->resources.memory, "256Gi");
	cr_assert_eq(s->resources.memory_milli, 256LL * 1024 * 1024 * 1024 * 1000);
	cr_assert_str_eq(s->resources.accelerator_resource, "nvidia.com/gpu");
	cr_assert_str_eq(s->image, "nvcr.io/nvidia/pytorch:24.05-py3");
	cr_assert_str_eq(s->setup, "pip install -r requirements.txt\n");
	cr_assert(strstr(s->run, "torchrun") == s->run);
	cr_assert_str_eq(s->workdir, "/workspace");

	cr_assert_eq(s->n_envs, 3);
	cr_assert_str_eq(s->envs[0].name, "BATCH_SIZE");
	cr_assert_str_eq(s->envs[0].value, "32");
	cr_assert_str_eq(s->envs[1].name, "EPOCHS");
	cr_assert_str_eq(s->envs[2].name, "A_FIRST", "envs keep the order of the object");
	cr_assert_eq(s->n_secret_envs, 1);
	cr_assert_str_eq(s->secret_envs[0].name, "HF_TOKEN");
	cr_assert_str_eq(s->secret_envs[0].secret_name, "hf");
	cr_assert_str_eq(s->secret_envs[0].secret_key, "token");
	cr_assert_eq(s->n_volumes, 2);
	cr_assert_str_eq(s->volumes[0].mount_path, "/mnt/checkpoints");
	cr_assert_str_eq(s->volumes[0].volume, "shared-checkpoints");
	cr_assert_str_eq(s->volumes[1].mount_path, "/data");

	cr_assert_str_eq(s->queue, "");
	cr_assert_eq(s->priority, 0);
	cr_assert_str_eq(s->priority_class_name, "");
	cr_assert_eq(s->max_restarts, 0);
	cr_assert_eq(s->success_policy, TJ_SUCCESS_ALL);
	cr_assert_not(s->suspend);
	cr_assert_not(s->has_active_deadline_seconds, "null is unset");
	cr_assert_not(s->has_ttl_seconds_after_finished);
	cr_assert_eq(s->gang_timeout_seconds, 600);
	cr_assert_eq(s->master_port, 29500);

	cr_assert_str_eq(json_string_value(json_object_get(s->pod_template.labels, "app")),
			 "llama");
	cr_assert_str_eq(json_string_value(json_object_get(s->pod_template.annotations,
							   "owner")), "nlp-team");
	cr_assert_str_eq(json_string_value(json_object_get(s->pod_template.node_selector,
							   "pool")), "gpu");
	cr_assert_eq(json_array_size(s->pod_template.tolerations), 1);
	cr_assert_not_null(json_object_get(s->pod_template.affinity, "nodeAffinity"));
	cr_assert_str_eq(s->pod_template.service_account_name, "trainer");
	cr_assert_eq(json_array_size(s->pod_template.image_pull_secrets), 1);
	cr_assert_str_eq(s->pod_template.runtime_class_name, "nvidia");
	cr_assert_str_eq(s->pod_template.scheduler_name, "default-scheduler");

	cr_assert_eq(st->phase, TJ_PHASE_RUNNING);
	cr_assert_eq(st->conditions.len, 2);
	cr_assert(condition_is_true(&st->conditions, "Admitted"));
	cr_assert_eq(st->observed_generation, 3);
	cr_assert_str_eq(st->job_id, "482913307");
	cr_assert_str_eq(st->task_id, "llama-pretrain-6f1c2a9e");
	cr_assert_eq(st->ready_nodes, 2);
	cr_assert_eq(st->restarts, 1);
	cr_assert_eq(st->infra_restarts, 2);
	cr_assert_eq(st->admitted_time, 1796000700);
	cr_assert_eq(st->start_time, 1796000790);
	cr_assert_eq(st->completion_time, 0);
	cr_assert_eq(st->n_nodes, 2);
	cr_assert_eq(st->nodes[1].rank, 1);
	cr_assert_str_eq(st->nodes[1].pod, "llama-pretrain-1");
	cr_assert_str_eq(st->nodes[1].node, "gpu-node-9");
	cr_assert_str_eq(st->nodes[1].ip, "10.4.0.13");
	cr_assert_str_eq(st->nodes[1].phase, "Running");
	cr_assert(st->has_last_failure);
	cr_assert_eq(st->last_failure.exit_code, 137);
	cr_assert_str_eq(st->last_failure.reason, "OOMKilled");
	cr_assert_str_eq(st->last_failure.node, "gpu-node-3");
	cr_assert_eq(st->last_failure.time, 1796000650);
	cr_assert_str_eq(st->message, "2 of 2 nodes running");

	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(json);
}

Test(trainingjob, applies_defaults_to_a_minimal_job)
{
	json_t *json = load_fixture(FIXTURE("trainingjob-minimal.json"));
	struct trainingjob tj;
	struct field_errors errs;

	field_errors_init(&errs);
	cr_assert_eq(tj_parse(json, &tj, &errs), 0);
	cr_assert_eq(tj_validate(&tj, &errs), 0);
	cr_assert_eq(tj.spec.num_nodes, 1);
	cr_assert_eq(tj.spec.tasks_per_node, 1);
	cr_assert(tj.spec.has_tasks_per_node);
	cr_assert_str_eq(tj.spec.resources.accelerator_resource, "nvidia.com/gpu");
	cr_assert_eq(tj.spec.gang_timeout_seconds, 600);
	cr_assert_eq(tj.spec.master_port, 29500);
	cr_assert_eq(tj.spec.success_policy, TJ_SUCCESS_ALL);
	cr_assert_eq(tj.spec.priority, 0);
	cr_assert_eq(tj.spec.max_restarts, 0);
	cr_assert_not(tj.spec.suspend);
	cr_assert_not(tj.spec.resources.has_accel);
	cr_assert_null(tj.spec.resources.accelerators);
	cr_assert_null(tj.spec.image, "the controller's --default-image decides");
	cr_assert_not(tj.spec.has_active_deadline_seconds);
	cr_assert_eq(tj.spec.n_envs, 0);
	cr_assert_null(tj.spec.pod_template.tolerations);
	cr_assert_eq(tj.status.phase, TJ_PHASE_UNSET);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(json);
}

Test(trainingjob, default_fills_only_what_is_unset)
{
	struct tj_spec spec;

	memset(&spec, 0, sizeof(spec));
	spec.has_num_nodes = true;
	spec.num_nodes = 0;  /* set, and wrong: validation's to report, not default's to hide */
	spec.has_master_port = true;
	spec.master_port = 1234;
	spec.resources.accelerator_resource = strdup("amd.com/gpu");
	tj_default(&spec);
	cr_assert_eq(spec.num_nodes, 0);
	cr_assert_eq(spec.master_port, 1234);
	cr_assert_str_eq(spec.resources.accelerator_resource, "amd.com/gpu");
	cr_assert_eq(spec.gang_timeout_seconds, 600);
	cr_assert(spec.has_gang_timeout_seconds);
	free(spec.resources.accelerator_resource);
}

Test(trainingjob, explicit_zero_is_not_replaced_by_a_default)
{
	assert_problem("{\"numNodes\": 0}", "spec.numNodes", "must be between 1 and 16384");
	assert_problem("{\"gang\": {\"timeoutSeconds\": 0}}", "spec.gang.timeoutSeconds",
		       "must be between 1 and 604800");
	assert_problem("{\"masterPort\": 0}", "spec.masterPort", "must be between 1 and 65535");
	assert_problem("{\"tasksPerNode\": 0}", "spec.tasksPerNode", "must be between 1 and 1024");
}

Test(trainingjob, tasks_per_node_is_read_and_bounded)
{
	struct trainingjob tj;
	struct field_errors errs;
	json_t *job = job_with_spec("{\"tasksPerNode\": 8}");

	field_errors_init(&errs);
	cr_assert_eq(tj_parse(job, &tj, &errs), 0);
	cr_assert_eq(tj_validate(&tj, &errs), 0);
	cr_assert_eq(tj.spec.tasks_per_node, 8);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);
	assert_problem("{\"tasksPerNode\": 1025}", "spec.tasksPerNode", "must be between 1 and 1024");
	assert_problem("{\"tasksPerNode\": \"8\"}", "spec.tasksPerNode",
		       "must be an integer, not a string");
}

Test(trainingjob, status_round_trips_exactly)
{
	json_t *json = load_fixture(FIXTURE("trainingjob-example.json"));
	struct trainingjob tj;
	struct tj_status again;
	struct field_errors errs;
	json_t *out, *out2;

	field_errors_init(&errs);
	cr_assert_eq(tj_parse(json, &tj, &errs), 0);
	out = tj_status_to_json(&tj.status);
	cr_assert_not_null(out);
	cr_assert(json_equal(out, json_object_get(json, "status")),
		  "status_to_json(parse(status)) must be the fixture's status");
	cr_assert_eq(tj_status_parse(out, &again, &errs), 0);
	out2 = tj_status_to_json(&again);
	cr_assert(json_equal(out, out2));
	json_decref(out);
	json_decref(out2);
	tj_status_release(&again);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(json);
}

Test(trainingjob, status_to_json_leaves_out_what_is_unset)
{
	struct tj_status st;
	json_t *out, *want;

	tj_status_init(&st);
	out = tj_status_to_json(&st);
	want = json_loads("{\"conditions\": [], \"observedGeneration\": 0, \"readyNodes\": 0,"
			  " \"restarts\": 0, \"infraRestarts\": 0, \"requeues\": 0, \"nodes\": []}", 0, NULL);
	cr_assert(json_equal(out, want), "%s", json_dumps(out, JSON_COMPACT));
	json_decref(out);
	json_decref(want);
	tj_status_release(&st);
}

Test(trainingjob, status_copy_is_deep_and_equal)
{
	json_t *json = load_fixture(FIXTURE("trainingjob-example.json"));
	struct trainingjob tj;
	struct tj_status copy;
	struct field_errors errs;
	json_t *a, *b;

	field_errors_init(&errs);
	tj_parse(json, &tj, &errs);
	cr_assert_eq(tj_status_copy(&copy, &tj.status), 0);
	cr_assert_neq(copy.message, tj.status.message);
	a = tj_status_to_json(&tj.status);
	tj_release(&tj);
	b = tj_status_to_json(&copy);
	cr_assert(json_equal(a, b));
	json_decref(a);
	json_decref(b);
	tj_status_release(&copy);
	field_errors_release(&errs);
	json_decref(json);
}

Test(trainingjob, keeps_its_own_copy_of_pod_template_subtrees)
{
	json_t *json = load_fixture(FIXTURE("trainingjob-example.json"));
	struct trainingjob tj;
	struct field_errors errs;
	json_t *affinity;

	field_errors_init(&errs);
	tj_parse(json, &tj, &errs);
	affinity = json_object_get(json_object_get(json_object_get(
		json_object_get(json, "spec"), "podTemplate"), "spec"), "affinity");
	json_object_clear(affinity);
	json_decref(json);
	cr_assert_not_null(json_object_get(tj.spec.pod_template.affinity, "nodeAffinity"));
	tj_release(&tj);
	field_errors_release(&errs);
}

Test(trainingjob, quantities_may_be_bare_numbers)
{
	struct trainingjob tj;
	struct field_errors errs;
	json_t *job = job_with_spec("{\"resources\": {\"cpus\": 32, \"memory\": 0.5}}");

	field_errors_init(&errs);
	cr_assert_eq(tj_parse(job, &tj, &errs), 0);
	cr_assert_str_eq(tj.spec.resources.cpus, "32");
	cr_assert_eq(tj.spec.resources.cpus_milli, 32000);
	cr_assert_str_eq(tj.spec.resources.memory, "0.5");
	cr_assert_eq(tj.spec.resources.memory_milli, 500);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);
}

Test(trainingjob, validation_names_each_problem_with_its_path)
{
	assert_problem("{\"numNodes\": -3}", "spec.numNodes", "must be between 1 and 16384");
	assert_problem("{\"resources\": {\"accelerators\": \"H100:0\"}}",
		       "spec.resources.accelerators",
		       "\"H100:0\" must look like <type>[:<count>] with count >= 1");
	assert_problem("{\"resources\": {\"accelerators\": \"\"}}", "spec.resources.accelerators",
		       "\"\" must look like <type>[:<count>] with count >= 1");
	assert_problem("{\"resources\": {\"accelerators\": "
		       "\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:1\"}}",
		       "spec.resources.accelerators",
		       "\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\" is too "
		       "long: the type may have 63 characters and the count may not exceed "
		       "2147483647");
	assert_problem("{\"resources\": {\"cpus\": \"lots\"}}", "spec.resources.cpus",
		       "\"lots\" is not a quantity like \"32\" or \"500m\"");
	assert_problem("{\"resources\": {\"cpus\": \"0\"}}", "spec.resources.cpus",
		       "must be > 0");
	assert_problem("{\"resources\": {\"memory\": \"-1Gi\"}}", "spec.resources.memory",
		       "must be > 0");
	assert_problem("{\"resources\": {\"memory\": \"9Ei\"}}", "spec.resources.memory",
		       "\"9Ei\" is too large");
	assert_problem("{\"resources\": {\"acceleratorResource\": \"gpu\"}}",
		       "spec.resources.acceleratorResource",
		       "must be an extended resource name like nvidia.com/gpu");
	assert_problem("{\"run\": \" \\n\\t\"}", "spec.run", "must not be empty");
	assert_problem("{\"run\": null}", "spec.run", "required");
	assert_problem("{\"workdir\": \"workspace\"}", "spec.workdir", "must be an absolute path");
	assert_problem("{\"maxRestarts\": -1}", "spec.maxRestarts", "must be between 0 and 10000");
	assert_problem("{\"activeDeadlineSeconds\": 0}", "spec.activeDeadlineSeconds",
		       "must be between 1 and 315360000 (ten years; no deadline: leave it out)");
	assert_problem("{\"ttlSecondsAfterFinished\": -5}", "spec.ttlSecondsAfterFinished",
		       "must be between 0 and 315360000");
	assert_problem("{\"masterPort\": 65536}", "spec.masterPort",
		       "must be between 1 and 65535");
	assert_problem("{\"queue\": \"Team Queue\"}", "spec.queue",
		       "must be the name of a Kueue LocalQueue (a DNS subdomain)");
	assert_problem("{\"priorityClassName\": \"HIGH\"}", "spec.priorityClassName",
		       "must be the name of a PriorityClass (a DNS subdomain)");
	assert_problem("{\"successPolicy\": \"Rank1\"}", "spec.successPolicy",
		       "must be All or Rank0, not \"Rank1\"");
	assert_problem("{\"restartStrategy\": \"Restart\"}", "spec.restartStrategy",
		       "must be Recreate or InPlace, not \"Restart\"");
}

Test(trainingjob, envs_are_c_identifiers_not_reserved_by_cadre)
{
	assert_problem("{\"envs\": {\"SLURM_JOB_ID\": \"1\"}}", "spec.envs.SLURM_JOB_ID",
		       "reserved for cadre");
	assert_problem("{\"envs\": {\"1BAD\": \"1\"}}", "spec.envs[\"1BAD\"]",
		       "must be a C identifier like BATCH_SIZE");
	assert_problem("{\"envs\": {\"BAD-NAME\": \"1\"}}", "spec.envs.BAD-NAME",
		       "must be a C identifier like BATCH_SIZE");
	assert_problem("{\"envs\": {\"A\": 1}}", "spec.envs.A", "must be a string, not an integer");
	assert_valid("{\"envs\": {\"_private\": \"\", \"slurm_job_id\": \"lower case is not ours\"}}");
}

Test(trainingjob, every_injected_name_is_refused_in_envs_and_secret_envs)
{
	char fragment[256], path[128];

	for (size_t i = 0; tj_reserved_envs[i]; i++) {
		snprintf(fragment, sizeof(fragment), "{\"envs\": {\"%s\": \"x\"}}",
			 tj_reserved_envs[i]);
		snprintf(path, sizeof(path), "spec.envs.%s", tj_reserved_envs[i]);
		assert_problem(fragment, path, "reserved for cadre");
		snprintf(fragment, sizeof(fragment),
			 "{\"secretEnvs\": [{\"name\": \"%s\", \"secretKeyRef\": "
			 "{\"name\": \"s\", \"key\": \"k\"}}]}", tj_reserved_envs[i]);
		assert_problem(fragment, "spec.secretEnvs[0].name", "reserved for cadre");
	}
}

Test(trainingjob, reserved_list_is_design_section_2_3_and_the_entrypoint_inputs)
{
	static const char *const design[] = {
		"SKYPILOT_NUM_NODES", "NNODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES",
		"SKYPILOT_NODE_RANK", "NODE_RANK", "SLURM_NODEID", "SLURM_PROCID",
		"SKYPILOT_NUM_GPUS_PER_NODE", "SLURM_GPUS_PER_NODE", "SKYPILOT_NODE_IPS",
		"SLURM_JOB_NODELIST", "SKYPILOT_TASK_ID", "CADRE_TASK_ID", "SLURM_JOB_ID",
		"CADRE_JOB_ID", "SLURM_JOB_NAME", "CADRE_JOB_NAME", "MASTER_ADDR",
		"MASTER_PORT", "CADRE_RESTART_ATTEMPT",
		/* docs/design.md 2.4 */
		"SLURM_NODELIST", "SLURM_JOBID", "SLURM_NTASKS", "SLURM_NPROCS",
		"SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE", "SLURM_CPUS_PER_TASK",
		"SLURM_CPUS_ON_NODE", "SLURM_GPUS_ON_NODE", "SLURM_LOCALID", "SLURM_SUBMIT_DIR",
		"SLURM_JOB_PARTITION", "SLURM_RESTART_COUNT", "SLURM_CLUSTER_NAME",
		/* controller/build/entrypoint.h; test_build checks the two agree. */
		"CADRE_PEERS", "CADRE_PEER_DOMAIN", "CADRE_GANG_TIMEOUT_SECONDS", "CADRE_WORKDIR",
		"CADRE_SETUP", "CADRE_RUN", "CADRE_TERMINATION_LOG", "CADRE_BIN_DIR",
		"CADRE_ATTEMPT_FILE",
		/* The watchdog's and the signal's inputs (spec.hang, spec.signal). */
		"CADRE_HEARTBEAT_FILE", "CADRE_HANG_STARTUP_SECONDS", "CADRE_HANG_PROGRESS_SECONDS",
		"CADRE_NCCL_DUMP_DIR", "CADRE_SIGNAL", "CADRE_SIGNAL_SECONDS_BEFORE", "CADRE_DEADLINE",
		/* An array element's (docs/design.md 12), and --output/--error's. */
		"SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
		"SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP",
		"CADRE_OUTPUT", "CADRE_ERROR",
		/* spec.stageIn's copies, spec.code's bundles. */
		"CADRE_STAGE_IN", "CADRE_CODE",
	};
	size_t n = 0;

	while (tj_reserved_envs[n])
		n++;
	cr_assert_eq(n, sizeof(design) / sizeof(design[0]));
	for (size_t i = 0; i < n; i++) {
		cr_assert_str_eq(tj_reserved_envs[i], design[i]);
		cr_assert(tj_env_reserved(design[i]));
	}
	cr_assert_not(tj_env_reserved("BATCH_SIZE"));
	cr_assert_not(tj_env_reserved("master_addr"));
	cr_assert_not(tj_env_reserved(NULL));
}

Test(trainingjob, secret_envs_need_a_name_a_secret_and_a_key)
{
	assert_problem("{\"secretEnvs\": [{\"secretKeyRef\": {\"name\": \"hf\", \"key\": \"t\"}}]}",
		       "spec.secretEnvs[0].name", "required");
	assert_problem("{\"secretEnvs\": [{\"name\": \"HF_TOKEN\"}]}",
		       "spec.secretEnvs[0].secretKeyRef.name", "required");
	assert_problem("{\"secretEnvs\": [{\"name\": \"HF_TOKEN\", \"secretKeyRef\": {\"name\": \"hf\"}}]}",
		       "spec.secretEnvs[0].secretKeyRef.key", "required");
	assert_problem("{\"secretEnvs\": [{\"name\": \"T\", \"secretKeyRef\": "
		       "{\"name\": \"Bad_Secret\", \"key\": \"k\"}}]}",
		       "spec.secretEnvs[0].secretKeyRef.name",
		       "must be the name of a Secret (a DNS subdomain)");
	assert_problem("{\"secretEnvs\": [{\"name\": \"T\", \"secretKeyRef\": "
		       "{\"name\": \"s\", \"key\": \"a/b\"}}]}",
		       "spec.secretEnvs[0].secretKeyRef.key", "must be a Secret key ([-._a-zA-Z0-9]+)");
	assert_problem("{\"envs\": {\"T\": \"x\"}, \"secretEnvs\": [{\"name\": \"T\", "
		       "\"secretKeyRef\": {\"name\": \"s\", \"key\": \"k\"}}]}",
		       "spec.secretEnvs[0].name", "T is also set in spec.envs");
	assert_problem("{\"secretEnvs\": ["
		       "{\"name\": \"T\", \"secretKeyRef\": {\"name\": \"s\", \"key\": \"k\"}},"
		       "{\"name\": \"T\", \"secretKeyRef\": {\"name\": \"s\", \"key\": \"j\"}}]}",
		       "spec.secretEnvs[1].name", "duplicate of spec.secretEnvs[0].name");
	assert_problem("{\"secretEnvs\": [null]}", "spec.secretEnvs[0]",
		       "must be an object, not null");
}

Test(trainingjob, volume_mount_paths_are_absolute_plain_and_not_dev_shm)
{
	assert_problem("{\"volumes\": {\"tmp\": \"scratch\"}}", "spec.volumes[\"tmp\"]",
		       "mount path must be absolute");
	assert_problem("{\"volumes\": {\"/mnt/../etc\": \"scratch\"}}",
		       "spec.volumes[\"/mnt/../etc\"]",
		       "mount path must be a plain directory: no \".\", \"..\" or empty "
		       "components, and not \"/\"");
	assert_problem("{\"volumes\": {\"/\": \"scratch\"}}", "spec.volumes[\"/\"]",
		       "mount path must be a plain directory: no \".\", \"..\" or empty "
		       "components, and not \"/\"");
	assert_problem("{\"volumes\": {\"/dev/shm\": \"scratch\"}}", "spec.volumes[\"/dev/shm\"]",
		       "/dev/shm is mounted by cadre");
	assert_problem("{\"volumes\": {\"/cadre/bin\": \"scratch\"}}", "spec.volumes[\"/cadre/bin\"]",
		       "/cadre/bin is mounted by cadre (its srun and scontrol)");
	assert_problem("{\"volumes\": {\"/cadre/bin/x\": \"scratch\"}}",
		       "spec.volumes[\"/cadre/bin/x\"]",
		       "/cadre/bin is mounted by cadre (its srun and scontrol)");
	assert_problem("{\"volumes\": {\"/cadre/entrypoint\": \"scratch\"}}",
		       "spec.volumes[\"/cadre/entrypoint\"]",
		       "/cadre/entrypoint is mounted by cadre (its entrypoint script)");
	assert_problem("{\"volumes\": {\"/cadre/entrypoint/x\": \"scratch\"}}",
		       "spec.volumes[\"/cadre/entrypoint/x\"]",
		       "/cadre/entrypoint is mounted by cadre (its entrypoint script)");
	assert_problem("{\"volumes\": {\"/mnt/x\": \"Scratch_Space\"}}", "spec.volumes[\"/mnt/x\"]",
		       "must be the name of a Volume (a DNS subdomain)");
	assert_problem("{\"volumes\": {\"/mnt/x\": null}}", "spec.volumes[\"/mnt/x\"]",
		       "must be the name of a Volume, not null");
	assert_valid("{\"volumes\": {\"/dev/shmem\": \"scratch\", \"/mnt/ckpt/\": \"ckpt\"}}");
	assert_valid("{\"volumes\": {\"/cadre/binaries\": \"scratch\", \"/cadre\": \"ckpt\"}}");
	assert_valid("{\"volumes\": {\"/cadre/entrypoints\": \"scratch\"}}");
}

Test(trainingjob, name_must_fit_service_and_pod_host_names)
{
	struct trainingjob tj;
	struct field_errors errs;
	json_t *job = job_with_spec("{\"numNodes\": 10}");
	const struct field_error *e;

	/* 62 characters: "<name>-9" would be 64. */
	json_object_set_new(json_object_get(job, "metadata"), "name",
			    json_string("a123456789012345678901234567890123456789012345678901234567890b"));
	field_errors_init(&errs);
	tj_parse(job, &tj, &errs);
	cr_assert_eq(tj_validate(&tj, &errs), CADRE_EINVAL);
	e = field_errors_find(&errs, "metadata.name");
	cr_assert_not_null(e);
	cr_assert_str_eq(e->message, "must be at most 61 characters so that pod host names "
			 "\"<name>-<rank>\" fit in 63");
	tj_release(&tj);
	field_errors_release(&errs);

	json_object_set_new(json_object_get(job, "metadata"), "name", json_string("7-llama"));
	field_errors_init(&errs);
	tj_parse(job, &tj, &errs);
	cr_assert_eq(tj_validate(&tj, &errs), CADRE_EINVAL);
	cr_assert_not_null(field_errors_find(&errs, "metadata.name"));
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);
}

Test(trainingjob, pod_template_refuses_anything_outside_its_subset)
{
	static const char *const why =
		"unknown field; podTemplate accepts only metadata.labels, metadata.annotations "
		"and spec.{nodeSelector, tolerations, affinity, serviceAccountName, "
		"imagePullSecrets, runtimeClassName, schedulerName, securityContext, "
		"containerSecurityContext, resourceClaims}";

	assert_problem("{\"podTemplate\": {\"spec\": {\"hostNetwork\": true}}}",
		       "spec.podTemplate.spec.hostNetwork", why);
	assert_problem("{\"podTemplate\": {\"spec\": {\"containers\": []}}}",
		       "spec.podTemplate.spec.containers", why);
	assert_problem("{\"podTemplate\": {\"spec\": {\"volumes\": [{\"hostPath\": {\"path\": \"/\"}}]}}}",
		       "spec.podTemplate.spec.volumes", why);
	assert_problem("{\"podTemplate\": {\"spec\": {\"hostPID\": true}}}",
		       "spec.podTemplate.spec.hostPID", why);
	assert_problem("{\"podTemplate\": {\"metadata\": {\"name\": \"x\"}}}",
		       "spec.podTemplate.metadata.name", why);
	assert_problem("{\"podTemplate\": {\"kind\": \"Pod\"}}", "spec.podTemplate.kind", why);
}

Test(trainingjob, pod_template_fields_are_checked)
{
	assert_problem("{\"podTemplate\": {\"metadata\": {\"labels\": {\"cadre.dev/job-name\": \"x\"}}}}",
		       "spec.podTemplate.metadata.labels[\"cadre.dev/job-name\"]",
		       "reserved for cadre");
	assert_problem("{\"podTemplate\": {\"metadata\": {\"labels\": "
		       "{\"kueue.x-k8s.io/queue-name\": \"q\"}}}}",
		       "spec.podTemplate.metadata.labels[\"kueue.x-k8s.io/queue-name\"]",
		       "set by cadre from spec.queue");
	assert_problem("{\"podTemplate\": {\"metadata\": {\"labels\": {\"app\": \"not valid!\"}}}}",
		       "spec.podTemplate.metadata.labels.app",
		       "value must be a label value (at most 63 characters of [-A-Za-z0-9_.], "
		       "alphanumeric at both ends)");
	assert_problem("{\"podTemplate\": {\"metadata\": {\"annotations\": {\"a b\": \"x\"}}}}",
		       "spec.podTemplate.metadata.annotations[\"a b\"]",
		       "key must be a qualified name like example.com/name");
	assert_problem("{\"podTemplate\": {\"spec\": {\"nodeSelector\": {\"pool\": 3}}}}",
		       "spec.podTemplate.spec.nodeSelector.pool", "must be a string");
	assert_problem("{\"podTemplate\": {\"spec\": {\"tolerations\": [{\"operator\": \"Maybe\"}]}}}",
		       "spec.podTemplate.spec.tolerations[0].operator", "must be Exists or Equal");
	assert_problem("{\"podTemplate\": {\"spec\": {\"tolerations\": "
		       "[{\"operator\": \"Exists\", \"value\": \"v\"}]}}}",
		       "spec.podTemplate.spec.tolerations[0].value",
		       "must be empty when operator is Exists");
	assert_problem("{\"podTemplate\": {\"spec\": {\"tolerations\": [{\"effect\": \"Evict\"}]}}}",
		       "spec.podTemplate.spec.tolerations[0].effect",
		       "must be NoSchedule, PreferNoSchedule or NoExecute");
	assert_problem("{\"podTemplate\": {\"spec\": {\"tolerations\": [\"x\"]}}}",
		       "spec.podTemplate.spec.tolerations[0]", "must be an object");
	assert_problem("{\"podTemplate\": {\"spec\": {\"tolerations\": [{\"hostPath\": 1}]}}}",
		       "spec.podTemplate.spec.tolerations[0].hostPath", "unknown field");
	assert_problem("{\"podTemplate\": {\"spec\": {\"imagePullSecrets\": [{}]}}}",
		       "spec.podTemplate.spec.imagePullSecrets[0].name", "required");
	assert_problem("{\"podTemplate\": {\"spec\": {\"affinity\": {\"hostAffinity\": {}}}}}",
		       "spec.podTemplate.spec.affinity.hostAffinity", "unknown field");
	assert_problem("{\"podTemplate\": {\"spec\": {\"serviceAccountName\": \"Root User\"}}}",
		       "spec.podTemplate.spec.serviceAccountName",
		       "must be the name of a ServiceAccount (a DNS subdomain)");
	assert_valid("{\"podTemplate\": {\"metadata\": {\"labels\": {}, \"annotations\": {}},"
		     " \"spec\": {\"nodeSelector\": {}, \"tolerations\": [], \"affinity\": {},"
		     " \"serviceAccountName\": \"\", \"imagePullSecrets\": [],"
		     " \"runtimeClassName\": \"\", \"schedulerName\": \"\"}}}");
}

/* What a namespace labelled pod-security.kubernetes.io/enforce=restricted asks of a pod. */
Test(trainingjob, pod_template_takes_the_security_settings_of_a_restricted_namespace)
{
	struct trainingjob tj;
	struct field_errors errs;
	json_t *job = job_with_spec(
		"{\"podTemplate\": {\"spec\": {"
		"\"securityContext\": {\"runAsUser\": 1000, \"runAsGroup\": 1000,"
		" \"runAsNonRoot\": true, \"fsGroup\": 2000,"
		" \"seccompProfile\": {\"type\": \"RuntimeDefault\"}},"
		"\"containerSecurityContext\": {\"allowPrivilegeEscalation\": false,"
		" \"capabilities\": {\"drop\": [\"ALL\"]}, \"runAsNonRoot\": true,"
		" \"readOnlyRootFilesystem\": true}}}}");
	const struct tj_pod_template *pt = &tj.spec.pod_template;

	field_errors_init(&errs);
	cr_assert_eq(tj_parse(job, &tj, &errs), 0);
	cr_assert_eq(tj_validate(&tj, &errs), 0);
	cr_assert_eq(json_integer_value(json_object_get(pt->security_context, "runAsUser")), 1000);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pt->security_context,
		"seccompProfile"), "type")), "RuntimeDefault");
	cr_assert(json_is_false(json_object_get(pt->container_security_context,
						"allowPrivilegeEscalation")));
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);
	assert_valid("{\"podTemplate\": {\"spec\": {\"securityContext\": {\"seccompProfile\":"
		     " {\"type\": \"Localhost\", \"localhostProfile\": \"profiles/train.json\"}}}}}");
	assert_valid("{\"podTemplate\": {\"spec\": {\"containerSecurityContext\": {}}}}");
}

/* Nothing that grants privilege passes, and each refusal names its field. */
Test(trainingjob, pod_template_security_settings_never_grant_privilege)
{
	assert_problem("{\"podTemplate\": {\"spec\": {\"containerSecurityContext\":"
		       " {\"allowPrivilegeEscalation\": true}}}}",
		       "spec.podTemplate.spec.containerSecurityContext.allowPrivilegeEscalation",
		       "must be false: cadre lets no pod gain privileges");
	assert_problem("{\"podTemplate\": {\"spec\": {\"containerSecurityContext\":"
		       " {\"privileged\": true}}}}",
		       "spec.podTemplate.spec.containerSecurityContext.privileged",
		       "unknown field; the container securityContext accepts only "
		       "allowPrivilegeEscalation (false), capabilities.drop, runAsNonRoot and "
		       "readOnlyRootFilesystem: nothing that grants privilege");
	assert_problem("{\"podTemplate\": {\"spec\": {\"containerSecurityContext\":"
		       " {\"capabilities\": {\"add\": [\"SYS_ADMIN\"]}}}}}",
		       "spec.podTemplate.spec.containerSecurityContext.capabilities.add",
		       "unknown field; capabilities may only be dropped, never added");
	assert_problem("{\"podTemplate\": {\"spec\": {\"containerSecurityContext\":"
		       " {\"capabilities\": {\"drop\": [\"all; rm\"]}}}}}",
		       "spec.podTemplate.spec.containerSecurityContext.capabilities.drop[0]",
		       "must be a capability name like ALL or NET_RAW");
	assert_problem("{\"podTemplate\": {\"spec\": {\"securityContext\": {\"privileged\": true}}}}",
		       "spec.podTemplate.spec.securityContext.privileged",
		       "unknown field; the pod securityContext accepts only runAsUser, runAsGroup, "
		       "runAsNonRoot, fsGroup and seccompProfile");
	assert_problem("{\"podTemplate\": {\"spec\": {\"securityContext\": {\"sysctls\": []}}}}",
		       "spec.podTemplate.spec.securityContext.sysctls",
		       "unknown field; the pod securityContext accepts only runAsUser, runAsGroup, "
		       "runAsNonRoot, fsGroup and seccompProfile");
	assert_problem("{\"podTemplate\": {\"spec\": {\"securityContext\":"
		       " {\"seccompProfile\": {\"type\": \"Unconfined\"}}}}}",
		       "spec.podTemplate.spec.securityContext.seccompProfile.type",
		       "must be RuntimeDefault or Localhost, not \"Unconfined\"");
	assert_problem("{\"podTemplate\": {\"spec\": {\"securityContext\":"
		       " {\"seccompProfile\": {\"type\": \"Localhost\"}}}}}",
		       "spec.podTemplate.spec.securityContext.seccompProfile.localhostProfile",
		       "required for type Localhost");
	assert_problem("{\"podTemplate\": {\"spec\": {\"securityContext\":"
		       " {\"seccompProfile\": {\"type\": \"Localhost\","
		       " \"localhostProfile\": \"../../etc/x\"}}}}}",
		       "spec.podTemplate.spec.securityContext.seccompProfile.localhostProfile",
		       "must be a path relative to the kubelet's seccomp directory, without ..");
	assert_problem("{\"podTemplate\": {\"spec\": {\"securityContext\": {\"runAsUser\": -1}}}}",
		       "spec.podTemplate.spec.securityContext.runAsUser",
		       "must be between 0 and 2147483647");
	assert_problem("{\"podTemplate\": {\"spec\": {\"securityContext\": {\"runAsNonRoot\": \"yes\"}}}}",
		       "spec.podTemplate.spec.securityContext.runAsNonRoot",
		       "must be a boolean, not a string");
}

Test(trainingjob, reports_every_problem_at_once)
{
	struct trainingjob tj;
	struct field_errors errs;
	json_t *job = job_with_spec("{\"numNodes\": 0, \"run\": \"\", \"masterPort\": -1,"
				    " \"resources\": {\"accelerators\": \"H100:0\"},"
				    " \"envs\": {\"NODE_RANK\": \"3\"},"
				    " \"volumes\": {\"tmp\": \"x\"}}");
	char *all;

	field_errors_init(&errs);
	cr_assert_eq(tj_parse(job, &tj, &errs), 0);
	cr_assert_eq(tj_validate(&tj, &errs), CADRE_EINVAL);
	all = joined(&errs);
	cr_assert_eq(field_errors_count(&errs), 6, "%s", all);
	cr_assert_str_eq(all,
			 "spec.numNodes: must be between 1 and 16384; "
			 "spec.resources.accelerators: \"H100:0\" must look like <type>[:<count>] "
			 "with count >= 1; "
			 "spec.run: must not be empty; "
			 "spec.envs.NODE_RANK: reserved for cadre; "
			 "spec.volumes[\"tmp\"]: mount path must be absolute; "
			 "spec.masterPort: must be between 1 and 65535");
	free(all);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);
}

Test(trainingjob, credential_looking_env_names)
{
	static const char *const secret[] = {
		"HF_TOKEN", "hf_token", "AWS_SECRET_ACCESS_KEY", "API_KEY", "DB_PASSWORD",
		"PASSWORD", "MY_PASSWORD_FILE", "client_secret", "SECRET",
	};
	static const char *const plain[] = {
		"BATCH_SIZE", "TOKEN", "KEY", "TOKENIZER", "KEYS", "MONKEY", "TOKENS_PER_STEP",
		"NUM_KEYS", "",
	};

	for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
		cr_assert(tj_env_looks_secret(secret[i]), "%s", secret[i]);
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		cr_assert_not(tj_env_looks_secret(plain[i]), "%s", plain[i]);
	cr_assert_not(tj_env_looks_secret(NULL));
}

Test(trainingjob, phases_have_names_and_two_are_terminal)
{
	static const char *const names[] = {
		"Pending", "Queued", "Starting", "Running", "Restarting", "Succeeded",
		"Failed", "Suspended",
	};
	enum tj_phase phase;

	for (size_t i = 0; i < 8; i++) {
		cr_assert_eq(tj_phase_parse(names[i], &phase), 0);
		cr_assert_str_eq(tj_phase_name(phase), names[i]);
		cr_assert_eq(tj_phase_terminal(phase),
			     phase == TJ_PHASE_SUCCEEDED || phase == TJ_PHASE_FAILED);
	}
	cr_assert_str_eq(tj_phase_name(TJ_PHASE_UNSET), "");
	cr_assert_str_eq(tj_phase_name((enum tj_phase)99), "");
	cr_assert_eq(tj_phase_parse("running", &phase), CADRE_EINVAL);
	cr_assert_eq(tj_phase_parse("", &phase), CADRE_EINVAL);
	cr_assert_str_eq(tj_success_policy_name(TJ_SUCCESS_RANK0), "Rank0");
	cr_assert_str_eq(tj_restart_strategy_name(TJ_RESTART_IN_PLACE), "InPlace");
	cr_assert_str_eq(tj_restart_strategy_name(TJ_RESTART_RECREATE), "Recreate");
}

Test(trainingjob, not_an_object_or_no_metadata_or_spec_is_a_field_error)
{
	static const char *const docs[] = {
		"[]", "\"job\"", "7", "null", "{}", "{\"metadata\": {\"name\": \"x\"}}",
		"{\"spec\": {\"run\": \"x\"}}", "{\"metadata\": null, \"spec\": null}",
		"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"x\"}, \"spec\": {\"run\": \"x\"}}",
		"{\"apiVersion\": \"v1\", \"metadata\": {\"name\": \"x\"}, \"spec\": {\"run\": \"x\"}}",
	};

	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		struct trainingjob tj;
		struct field_errors errs;
		json_t *json = json_loads(docs[i], JSON_DECODE_ANY, NULL);

		field_errors_init(&errs);
		cr_assert_eq(tj_parse(json, &tj, &errs), CADRE_EINVAL, "%s", docs[i]);
		cr_assert_gt(errs.len, 0, "%s", docs[i]);
		tj_release(&tj);
		field_errors_release(&errs);
		json_decref(json);
	}
	{
		struct trainingjob tj;
		struct field_errors errs;

		field_errors_init(&errs);
		cr_assert_eq(tj_parse(NULL, &tj, &errs), CADRE_EINVAL);
		cr_assert_str_eq(field_errors_at(&errs, 0)->path, "");
		tj_release(&tj);
		field_errors_release(&errs);
	}
}

/* Parse a job whose spec has member key set to value (stolen). */
static int parse_with(const char *key, json_t *value, struct field_errors *errs)
{
	struct trainingjob tj;
	json_t *job = job_with_spec("{}");
	int err;

	json_object_set_new(json_object_get(job, "spec"), key, value);
	err = tj_parse(job, &tj, errs);
	tj_release(&tj);
	json_decref(job);
	return err;
}

Test(trainingjob, huge_and_odd_numbers_are_field_errors)
{
	struct field_errors errs;
	json_error_t error;
	json_t *big;

	field_errors_init(&errs);
	cr_assert_eq(parse_with("numNodes", json_integer(2147483648LL), &errs), CADRE_EINVAL);
	cr_assert_str_eq(field_errors_find(&errs, "spec.numNodes")->message,
			 "must be between -2147483648 and 2147483647");
	field_errors_release(&errs);
	cr_assert_eq(parse_with("numNodes", json_integer(INT64_MIN), &errs), CADRE_EINVAL);
	field_errors_release(&errs);
	cr_assert_eq(parse_with("numNodes", json_real(1e300), &errs), CADRE_EINVAL);
	field_errors_release(&errs);
	cr_assert_eq(parse_with("numNodes", json_real(2.5), &errs), CADRE_EINVAL);
	cr_assert_str_eq(field_errors_find(&errs, "spec.numNodes")->message,
			 "must be an integer");
	field_errors_release(&errs);
	cr_assert_eq(parse_with("numNodes", json_real(4.0), &errs), 0, "4.0 is 4");
	cr_assert_eq(parse_with("activeDeadlineSeconds", json_real(9223372036854775808.0), &errs),
		     CADRE_EINVAL);
	field_errors_release(&errs);
	cr_assert_eq(parse_with("activeDeadlineSeconds", json_integer(INT64_MAX), &errs), 0);

	/* jansson itself refuses 1e400 and 2^63 as written... */
	cr_assert_null(json_loads("{\"numNodes\": 1e400}", 0, &error));
	cr_assert_null(json_loads("{\"numNodes\": 9223372036854775808}", 0, &error));
	/* ...unless asked to read integers as reals; then they are field errors. */
	big = json_loads("9223372036854775808", JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &error);
	cr_assert_not_null(big);
	cr_assert_eq(parse_with("numNodes", big, &errs), CADRE_EINVAL);
	cr_assert_not_null(field_errors_find(&errs, "spec.numNodes"));
	field_errors_release(&errs);
	big = json_loads("-10000000000000000000", JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &error);
	cr_assert_eq(parse_with("gang", json_pack("{s:o}", "timeoutSeconds", big), &errs),
		     CADRE_EINVAL);
	cr_assert_not_null(field_errors_find(&errs, "spec.gang.timeoutSeconds"));
	field_errors_release(&errs);
}

/* [[[...]]] or {"a": {"a": ...}} nested depth deep around a leaf. */
static json_t *nested(int depth, bool objects)
{
	json_t *v = json_integer(1);

	for (int i = 0; i < depth; i++) {
		json_t *outer = objects ? json_object() : json_array();

		if (objects)
			json_object_set_new(outer, "a", v);
		else
			json_array_append_new(outer, v);
		v = outer;
	}
	return v;
}

Test(trainingjob, deep_nesting_is_a_field_error_or_passes_through)
{
	struct field_errors errs;
	json_t *pt;

	field_errors_init(&errs);
	cr_assert_eq(parse_with("numNodes", nested(200, false), &errs), CADRE_EINVAL);
	cr_assert_not_null(field_errors_find(&errs, "spec.numNodes"));
	field_errors_release(&errs);
	cr_assert_eq(parse_with("envs", nested(200, true), &errs), CADRE_EINVAL);
	cr_assert_not_null(field_errors_find(&errs, "spec.envs.a"));
	field_errors_release(&errs);
	cr_assert_eq(parse_with("resources", nested(200, true), &errs), 0,
		     "an unknown field outside podTemplate is ignored");
	field_errors_release(&errs);
	pt = json_pack("{s:{s:{s:o}}}", "spec", "affinity", "nodeAffinity", nested(200, true));
	cr_assert_eq(parse_with("podTemplate", pt, &errs), 0,
		     "affinity is passed through whole, however deep");
	field_errors_release(&errs);
}

/*
 * Walk every member and element of the example; replace each in turn with
 * every value of another JSON type; parse and validate. Nothing may crash,
 * and the replaced field itself must be reported.
 */
struct walk {
	json_t *doc;
	int checked;
};

static bool passed_through(const char *path)
{
	/* Opaque subtrees: the API server validates them when pods are made. */
	return !strncmp(path, "spec.podTemplate.spec.affinity.", 31) ||
	       !strncmp(path, "spec.podTemplate.spec.affinity[", 31);
}

static bool accepts_number(const char *path)
{
	/* Quantities are int-or-string. */
	return !strcmp(path, "spec.resources.cpus") || !strcmp(path, "spec.resources.memory") ||
	       (!strncmp(path, "spec.scratch[", 13) && strlen(path) > 5 &&
		!strcmp(path + strlen(path) - 5, ".size"));
}

static bool same_kind(const json_t *a, const json_t *b)
{
	if (json_is_boolean(a) && json_is_boolean(b))
		return true;
	return json_typeof(a) == json_typeof(b);
}

static void check_replacement(struct walk *w, const char *path, json_t *original,
			      json_t *parent, const char *key, size_t index)
{
	json_t *wrongs[] = {
		json_true(), json_integer(42), json_real(1.5), json_string("x"),
		json_array(), json_object(),
	};

	for (size_t i = 0; i < sizeof(wrongs) / sizeof(wrongs[0]); i++) {
		struct trainingjob tj;
		struct field_errors errs;
		int err;

		if (same_kind(original, wrongs[i]) ||
		    (accepts_number(path) && json_is_number(wrongs[i]))) {
			json_decref(wrongs[i]);
			continue;
		}
		json_incref(original);
		if (key)
			json_object_set_new(parent, key, wrongs[i]);
		else
			json_array_set_new(parent, index, wrongs[i]);

		field_errors_init(&errs);
		err = tj_parse(w->doc, &tj, &errs);
		cr_assert(err == 0 || err == CADRE_EINVAL);
		tj_validate(&tj, &errs);
		{
			json_t *status = tj_status_to_json(&tj.status);

			json_decref(status);
		}
		if (!field_errors_find(&errs, path)) {
			char *all = joined(&errs);

			cr_assert_fail("%s replaced by %s: no problem at that path; got: %s",
				       path, json_dumps(key ? json_object_get(parent, key) :
						       json_array_get(parent, index),
						       JSON_ENCODE_ANY), all);
		}
		w->checked++;
		tj_release(&tj);
		field_errors_release(&errs);

		if (key)
			json_object_set_new(parent, key, original);
		else
			json_array_set_new(parent, index, original);
	}
}

static void walk(struct walk *w, json_t *node, const char *path)
{
	char child_path[DECODE_PATH_MAX];
	const char *key;
	json_t *value;
	size_t i;

	if (json_is_object(node)) {
		json_object_foreach(node, key, value) {
			if (!strcmp(path, "spec.volumes") || !strcmp(path, "spec.scratch"))
				decode_path_quoted(child_path, sizeof(child_path), path, key);
			else
				decode_path(child_path, sizeof(child_path), path, key);
			if (passed_through(child_path) || json_is_null(value))
				continue;
			check_replacement(w, child_path, value, node, key, 0);
			walk(w, value, child_path);
		}
	} else if (json_is_array(node)) {
		json_array_foreach(node, i, value) {
			decode_path_index(child_path, sizeof(child_path), path, i);
			if (passed_through(child_path))
				continue;
			check_replacement(w, child_path, value, node, NULL, i);
			walk(w, value, child_path);
		}
	}
}

Test(trainingjob, every_field_of_the_wrong_type_is_reported_at_its_path)
{
	struct walk w = { load_fixture(FIXTURE("trainingjob-example.json")), 0 };

	walk(&w, w.doc, "");
	cr_assert_gt(w.checked, 400, "walked only %d replacements", w.checked);
	json_decref(w.doc);
}

/* Set every field to null in turn: never a crash; required ones reported. */
static void walk_nulls(json_t *doc, json_t *node, const char *path, int *checked)
{
	static const char *const required[] = { "metadata", "metadata.name", "spec", "spec.run" };
	char child_path[DECODE_PATH_MAX];
	const char *key;
	json_t *value;

	if (!json_is_object(node))
		return;
	json_object_foreach(node, key, value) {
		struct trainingjob tj;
		struct field_errors errs;

		decode_path(child_path, sizeof(child_path), path, key);
		json_incref(value);
		json_object_set_new(node, key, json_null());
		field_errors_init(&errs);
		tj_parse(doc, &tj, &errs);
		tj_validate(&tj, &errs);
		for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
			if (!strcmp(child_path, required[i]))
				cr_assert_not_null(field_errors_find(&errs, child_path),
						   "%s: null must be reported", child_path);
		tj_release(&tj);
		field_errors_release(&errs);
		json_object_set_new(node, key, value);
		(*checked)++;
		walk_nulls(doc, value, child_path, checked);
	}
}

Test(trainingjob, null_anywhere_never_crashes_and_required_fields_say_so)
{
	json_t *doc = load_fixture(FIXTURE("trainingjob-example.json"));
	int checked = 0;

	walk_nulls(doc, doc, "", &checked);
	cr_assert_gt(checked, 80);
	json_decref(doc);
}

Test(trainingjob, every_prefix_of_the_document_fails_to_load_or_parses)
{
	char *text;
	size_t len;
	json_t *doc = load_fixture(FIXTURE("trainingjob-example.json"));
	int loaded = 0;

	text = json_dumps(doc, JSON_COMPACT);
	len = strlen(text);
	for (size_t n = 0; n <= len; n++) {
		struct trainingjob tj;
		struct field_errors errs;
		json_error_t error;
		json_t *json = json_loadb(text, n, 0, &error);

		if (!json)
			continue;
		loaded++;
		field_errors_init(&errs);
		cr_assert_eq(tj_parse(json, &tj, &errs), 0);
		tj_release(&tj);
		field_errors_release(&errs);
		json_decref(json);
	}
	cr_assert_eq(loaded, 1, "only the whole document is JSON");
	free(text);
	json_decref(doc);
}

/*
 * Cut the document after every complete value (and after every opening
 * bracket), close what is open, and parse that: the truncated objects a
 * partial write or an old client could produce. Each must parse or be
 * reported, and be releasable.
 */
Test(trainingjob, the_document_cut_at_every_value_and_closed_parses_cleanly)
{
	json_t *doc = load_fixture(FIXTURE("trainingjob-example.json"));
	char *text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	size_t len = strlen(text), depth = 0;
	char stack[64];
	int cuts = 0, reported = 0;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		size_t end = 0;  /* cut point after this character, 0 for none */

		if (c == '"') {
			size_t j = i + 1;

			while (text[j] != '"')
				j += text[j] == '\\' ? 2 : 1;
			i = j;
			/* A key is followed by ':'; only values end a cut. */
			if (text[j + 1] != ':')
				end = j + 1;
		} else if (c == '{' || c == '[') {
			stack[depth++] = c == '{' ? '}' : ']';
			end = i + 1;
		} else if (c == '}' || c == ']') {
			depth--;
			end = i + 1;
		} else if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
			while (i + 1 < len && strchr("0123456789.eE+-truefalsn", text[i + 1]))
				i++;
			end = i + 1;
		}
		if (!end || !depth)
			continue;
		{
			struct trainingjob tj;
			struct field_errors errs;
			struct buf cut;
			json_error_t error;
			json_t *json;
			int err;

			buf_init(&cut, 1 << 20);
			buf_add(&cut, text, end);
			for (size_t k = depth; k-- > 0;)
				buf_addc(&cut, stack[k]);
			json = json_loads(buf_str(&cut), 0, &error);
			cr_assert_not_null(json, "%s: %s", buf_str(&cut), error.text);
			field_errors_init(&errs);
			err = tj_parse(json, &tj, &errs);
			cr_assert(err == 0 || err == CADRE_EINVAL);
			if (tj_validate(&tj, &errs) || err) {
				cr_assert_gt(field_errors_count(&errs), 0);
				reported++;
			}
			cuts++;
			tj_release(&tj);
			field_errors_release(&errs);
			json_decref(json);
			buf_release(&cut);
		}
	}
	cr_assert_gt(cuts, 100);
	cr_assert_gt(reported, 0, "cuts before spec.run must be reported");
	free(text);
	json_decref(doc);
}

/* spec.hang, spec.signal, spec.terminationGracePeriodSeconds, spec.failurePolicy. */
Test(trainingjob, long_run_fields_parse_default_and_refuse_bad_values_by_name)
{
	struct trainingjob tj;
	struct field_errors errs;
	json_t *job = job_with_spec("{\"hang\": {\"progressSeconds\": 120}, \"signal\": "
				    "{\"name\": \"USR1\"}, \"failurePolicy\": {\"rules\": [{\"action\":"
				    " \"RestartNotCounted\", \"onExitCodes\": {\"operator\": \"In\","
				    " \"values\": [33, 34]}}]}}");

	field_errors_init(&errs);
	cr_assert_eq(tj_parse(job, &tj, &errs), 0);
	cr_assert_eq(tj_validate(&tj, &errs), 0);
	cr_assert(tj.spec.hang.set);
	cr_assert_eq(tj.spec.hang.startup_seconds, 120, "startupSeconds defaults to progressSeconds");
	cr_assert_eq(tj.spec.hang.action, TJ_HANG_RESTART);
	cr_assert_eq(tj.spec.signal.seconds_before, 60, "Slurm's default");
	cr_assert_eq(tj.spec.max_infra_restarts, 10);
	cr_assert_eq(tj_termination_grace_seconds(&tj.spec), 90);
	cr_assert_eq(tj_failure_action_for(&tj.spec, 34), TJ_FAILURE_RESTART_NOT_COUNTED);
	cr_assert_eq(tj_failure_action_for(&tj.spec, 1), TJ_FAILURE_RESTART);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);

	assert_problem("{\"hang\": {\"progressSeconds\": 0}}", "spec.hang.progressSeconds",
		       "must be between 1 and 604800");
	assert_problem("{\"hang\": {\"startupSeconds\": -5, \"progressSeconds\": 5}}",
		       "spec.hang.startupSeconds", "must be between 1 and 604800");
	assert_problem("{\"hang\": {\"progressSeconds\": 5, \"action\": \"Ignore\"}}",
		       "spec.hang.action", "must be Restart or Fail, not \"Ignore\"");
	assert_problem("{\"signal\": {\"name\": \"SIGFOO\"}}", "spec.signal.name",
		       "\"SIGFOO\" is not a signal cadre can send (HUP, INT, QUIT, USR1, USR2, ALRM, TERM, "
		       "CONT, URG, WINCH, XCPU, PWR)");
	assert_problem("{\"signal\": {\"name\": \"USR1\", \"secondsBefore\": -1}}",
		       "spec.signal.secondsBefore", "must be between 0 and 3600");
	assert_problem("{\"activeDeadlineSeconds\": 60, \"signal\": {\"name\": \"USR1\","
		       " \"secondsBefore\": 90}}", "spec.signal.secondsBefore",
		       "must be less than activeDeadlineSeconds, or the signal would come before the job "
		       "starts");
	assert_problem("{\"terminationGracePeriodSeconds\": 10, \"signal\": {\"name\": \"USR1\","
		       " \"secondsBefore\": 90}}", "spec.terminationGracePeriodSeconds",
		       "must be at least signal.secondsBefore, the time the program has between the signal "
		       "and SIGTERM");
	assert_problem("{\"maxInfraRestarts\": -1}", "spec.maxInfraRestarts",
		       "must be between 0 and 10000");
	assert_problem("{\"failurePolicy\": {\"rules\": [{\"action\": \"Retry\", \"onExitCodes\":"
		       " {\"operator\": \"In\", \"values\": [1]}}]}}",
		       "spec.failurePolicy.rules[0].action",
		       "must be Restart, RestartNotCounted or Fail, not \"Retry\"");
	assert_problem("{\"failurePolicy\": {\"rules\": [{\"action\": \"Fail\", \"onExitCodes\":"
		       " {\"operator\": \"In\", \"values\": [256]}}]}}",
		       "spec.failurePolicy.rules[0].onExitCodes.values[0]", "must be between 1 and 255");
	assert_problem("{\"failurePolicy\": {\"rules\": [{\"action\": \"Fail\", \"onExitCodes\":"
		       " {\"operator\": \"In\", \"values\": []}}]}}",
		       "spec.failurePolicy.rules[0].onExitCodes.values", "must list at least one exit code");
	assert_problem("{\"failurePolicy\": {\"rules\": [{\"action\": \"Fail\", \"onExitCodes\":"
		       " {\"operator\": \"In\", \"values\": [3, 4, 3]}}]}}",
		       "spec.failurePolicy.rules[0].onExitCodes.values[2]", "repeats exit code 3");
}

/* docs/design.md 11-13: partition, array, dependency, output and error, and their status. */
Test(trainingjob, slurm_fields_read_and_their_status_round_trips)
{
	json_t *job = job_with_spec("{\"partition\": \"gpu\", \"array\": \"0-9%2\", "
				    "\"dependency\": {\"any\": true, \"items\": [{\"type\": \"afterok\", "
				    "\"jobs\": [\"123\", \"prep\"]}, {\"type\": \"singleton\"}]}, "
				    "\"output\": \"logs/%x-%j.out\", \"error\": \"logs/%x-%j.err\"}");
	json_t *status = json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:b, s:[s]}, s:s}",
				   "partition", "gpu", "array", "started", "0-3", "succeeded", "0-1",
				   "cancelled", "3", "dependency", "met", 1, "satisfied", "afterok:123",
				   "requeued", "2026-12-01T10:00:00Z");
	struct field_errors errs;
	struct trainingjob tj;
	json_t *out;

	cr_assert_eq(json_object_set_new(job, "status", status), 0);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(job, &tj, &errs), 0);
	cr_assert_eq(tj_validate(&tj, &errs), 0);
	cr_assert_str_eq(tj.spec.partition, "gpu");
	cr_assert_str_eq(tj.spec.array, "0-9%2");
	cr_assert(tj.spec.has_dependency);
	cr_assert(tj.spec.dependency.any);
	cr_assert_eq(tj.spec.dependency.n_items, 2);
	cr_assert_eq(tj.spec.dependency.items[0].type, SLURM_DEP_AFTEROK);
	cr_assert_str_eq(tj.spec.dependency.items[0].jobs[1], "prep");
	cr_assert_eq(tj.spec.dependency.items[1].type, SLURM_DEP_SINGLETON);
	cr_assert_str_eq(tj.spec.output, "logs/%x-%j.out");
	cr_assert_str_eq(tj.status.partition, "gpu");
	cr_assert_str_eq(tj.status.array_started, "0-3");
	cr_assert_null(tj.status.array_failed);
	cr_assert(tj.status.dependency_met);
	out = tj_status_to_json(&tj.status);
	cr_assert(json_equal(json_object_get(out, "array"), json_object_get(status, "array")));
	cr_assert(json_equal(json_object_get(out, "dependency"),
			     json_object_get(status, "dependency")));
	cr_assert_str_eq(json_string_value(json_object_get(out, "requeued")),
			 "2026-12-01T10:00:00Z");
	json_decref(out);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);
}

Test(trainingjob, bad_arrays_and_dependencies_are_named)
{
	assert_problem("{\"array\": \"0-9%0\"}", "spec.array",
		       "\"0-9%0\" is not an index set: N, A-B or A-B:STEP, comma-separated, then "
		       "%MAX (0-99%8, 1,3,5-7, 0-15:4)");
	assert_problem("{\"dependency\": {\"items\": [{\"type\": \"afterok\"}]}}",
		       "spec.dependency.items[0]", "jobs: list at least one job");
	assert_problem("{\"dependency\": {\"items\": [{\"type\": \"before\", \"jobs\": [\"1\"]}]}}",
		       "spec.dependency.items[0].type",
		       "must be after, afterany, afterok, afternotok or singleton, not \"before\"");
	assert_problem("{\"dependency\": {\"items\": [{\"type\": \"afterok\", \"jobs\": "
		       "[\"Not A Job\"]}]}}", "spec.dependency.items[0]",
		       "\"Not A Job\" is neither a job id (123, 123_4) nor a job name");
	assert_problem("{\"partition\": \"Bad_Partition\"}", "spec.partition",
		       "must be the name of a Partition (a DNS subdomain)");
	assert_valid("{\"array\": \"1,3,5-7\"}");
}

Test(trainingjob, scratch_is_read_sorted_by_mount_path_with_its_size_and_class)
{
	struct trainingjob tj;
	struct field_errors errs;
	json_t *job = job_with_spec("{\"volumes\": {\"/mnt/shared\": \"ckpt\"},"
				    " \"scratch\": {\"/scratch\": {\"size\": \"20Gi\"},"
				    " \"/mnt/cache\": {\"size\": 1000000, \"storageClassName\": \"nvme\"}},"
				    " \"stageIn\": [{\"from\": \"/mnt/shared/d\", \"to\": \"/mnt/cache/d\"}]}");

	field_errors_init(&errs);
	cr_assert_eq(tj_parse(job, &tj, &errs), 0);
	cr_assert_eq(tj_validate(&tj, &errs), 0);
	cr_assert_eq(tj.spec.n_scratch, 2);
	cr_assert_str_eq(tj.spec.scratch[0].mount_path, "/mnt/cache");
	cr_assert_str_eq(tj.spec.scratch[0].storage_class_name, "nvme");
	cr_assert_eq(tj.spec.scratch[0].size_milli, 1000000LL * 1000);
	cr_assert_str_eq(tj.spec.scratch[1].mount_path, "/scratch");
	cr_assert_null(tj.spec.scratch[1].storage_class_name);
	cr_assert_eq(tj.spec.scratch[1].size_milli, 20LL * 1024 * 1024 * 1024 * 1000);
	cr_assert_eq(tj.spec.n_stage_in, 1);
	cr_assert_str_eq(tj.spec.stage_in[0].from, "/mnt/shared/d");
	cr_assert_str_eq(tj.spec.stage_in[0].to, "/mnt/cache/d");
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);
}

Test(trainingjob, scratch_paths_are_absolute_sized_and_apart_from_volumes)
{
	assert_problem("{\"scratch\": {\"cache\": {\"size\": \"1Gi\"}}}", "spec.scratch[\"cache\"]",
		       "mount path must be absolute");
	assert_problem("{\"scratch\": {\"/dev/shm/x\": {\"size\": \"1Gi\"}}}",
		       "spec.scratch[\"/dev/shm/x\"]", "/dev/shm is mounted by cadre");
	assert_problem("{\"scratch\": {\"/c\": {}}}", "spec.scratch[\"/c\"].size", "required");
	assert_problem("{\"scratch\": {\"/c\": {\"size\": \"lots\"}}}", "spec.scratch[\"/c\"].size",
		       "must be a quantity like \"100Gi\", not \"lots\"");
	assert_problem("{\"scratch\": {\"/c\": {\"size\": \"0\"}}}", "spec.scratch[\"/c\"].size",
		       "must be at least one byte");
	assert_problem("{\"scratch\": {\"/c\": {\"size\": \"1Gi\", \"storageClassName\": \"Fast_SSD\"}}}",
		       "spec.scratch[\"/c\"].storageClassName",
		       "must be the name of a StorageClass (a DNS subdomain)");
	assert_problem("{\"scratch\": {\"/c\": {\"size\": \"1Gi\", \"sizeLimit\": \"2Gi\"}}}",
		       "spec.scratch[\"/c\"].sizeLimit", "unknown field");
	assert_problem("{\"volumes\": {\"/mnt/shared\": \"v\"},"
		       " \"scratch\": {\"/mnt/shared/cache\": {\"size\": \"1Gi\"}}}",
		       "spec.scratch[\"/mnt/shared/cache\"]",
		       "overlaps the mount path /mnt/shared of spec.volumes: scratch is each "
		       "node's own, a Volume is shared");
	assert_problem("{\"volumes\": {\"/mnt/shared/ckpt\": \"v\"},"
		       " \"scratch\": {\"/mnt/shared\": {\"size\": \"1Gi\"}}}",
		       "spec.scratch[\"/mnt/shared\"]",
		       "overlaps the mount path /mnt/shared/ckpt of spec.volumes: scratch is each "
		       "node's own, a Volume is shared");
	/* A sibling that only shares a prefix is apart. */
	assert_valid("{\"volumes\": {\"/mnt/shared\": \"v\"},"
		     " \"scratch\": {\"/mnt/shared2\": {\"size\": \"1Gi\"}}}");
}

Test(trainingjob, stage_in_goes_from_a_volume_into_scratch)
{
	const char *base = "{\"volumes\": {\"/mnt/shared\": \"v\"},"
			   " \"scratch\": {\"/mnt/cache\": {\"size\": \"1Gi\"}}, \"stageIn\": [%s]}";
	char fragment[512];

	snprintf(fragment, sizeof(fragment), base, "{\"from\": \"/etc/passwd\", \"to\": \"/mnt/cache/p\"}");
	assert_problem(fragment, "spec.stageIn[0].from",
		       "must be under the mount path of one of spec.volumes (the shared copy)");
	snprintf(fragment, sizeof(fragment), base, "{\"from\": \"/mnt/shared/d\", \"to\": \"/tmp/d\"}");
	assert_problem(fragment, "spec.stageIn[0].to",
		       "must be under the mount path of one of spec.scratch (the node's copy)");
	snprintf(fragment, sizeof(fragment), base, "{\"from\": \"/mnt/shared/../etc\", \"to\": \"/mnt/cache/d\"}");
	assert_problem(fragment, "spec.stageIn[0].from",
		       "must be an absolute path without \".\", \"..\" or empty components");
	snprintf(fragment, sizeof(fragment), base, "{\"to\": \"/mnt/cache/d\"}");
	assert_problem(fragment, "spec.stageIn[0].from", "required");
	snprintf(fragment, sizeof(fragment), base, "{\"from\": \"/mnt/shared/d\", \"to\": \"/mnt/cache\"}");
	assert_valid(fragment);
}

#define CODE_DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

Test(trainingjob, code_is_read_in_its_order_with_digest_and_path)
{
	struct trainingjob tj;
	struct field_errors errs;
	json_t *job = job_with_spec("{\"code\": [{\"digest\": \"" CODE_DIGEST "\","
				    " \"path\": \"/home/alice/proj\"},"
				    " {\"digest\": \"" CODE_DIGEST "\", \"path\": \"/opt/conf.yaml\"}]}");

	field_errors_init(&errs);
	cr_assert_eq(tj_parse(job, &tj, &errs), 0);
	cr_assert_eq(tj_validate(&tj, &errs), 0);
	cr_assert_eq(tj.spec.n_code, 2);
	cr_assert_str_eq(tj.spec.code[0].digest, CODE_DIGEST);
	cr_assert_str_eq(tj.spec.code[0].path, "/home/alice/proj");
	cr_assert_str_eq(tj.spec.code[1].path, "/opt/conf.yaml");
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);
}

Test(trainingjob, code_needs_a_sha256_digest_and_a_path_of_its_own)
{
	const char *base = "{\"volumes\": {\"/mnt/shared\": \"v\"},"
			   " \"scratch\": {\"/mnt/cache\": {\"size\": \"1Gi\"}}, \"code\": [%s]}";
	char fragment[1024];

	snprintf(fragment, sizeof(fragment), base, "{\"digest\": \"sha256:ABC\", \"path\": \"/p\"}");
	assert_problem(fragment, "spec.code[0].digest",
		       "must be \"sha256:\" and 64 lowercase hex digits (cadre push DIR prints it)");
	snprintf(fragment, sizeof(fragment), base, "{\"path\": \"/p\"}");
	assert_problem(fragment, "spec.code[0].digest", "required");
	snprintf(fragment, sizeof(fragment), base, "{\"digest\": \"" CODE_DIGEST "\", \"path\": \"p\"}");
	assert_problem(fragment, "spec.code[0].path", "mount path must be absolute");
	snprintf(fragment, sizeof(fragment), base,
		 "{\"digest\": \"" CODE_DIGEST "\", \"path\": \"/mnt/shared/code\"}");
	assert_problem(fragment, "spec.code[0].path",
		       "overlaps the mount path /mnt/shared of spec.volumes: code on a Volume is "
		       "already shared, leave it out of spec.code");
	snprintf(fragment, sizeof(fragment), base,
		 "{\"digest\": \"" CODE_DIGEST "\", \"path\": \"/mnt/cache\"}");
	assert_problem(fragment, "spec.code[0].path", "overlaps the scratch path /mnt/cache");
	snprintf(fragment, sizeof(fragment), base,
		 "{\"digest\": \"" CODE_DIGEST "\", \"path\": \"/cadre/code\"}");
	assert_problem(fragment, "spec.code[0].path", "/cadre/code is mounted by cadre (the "
		       "parts of spec.code's bundles)");
	snprintf(fragment, sizeof(fragment), base,
		 "{\"digest\": \"" CODE_DIGEST "\", \"path\": \"/cadre/x\"}");
	assert_problem(fragment, "spec.code[0].path", "/cadre and /dev/shm are mounted by cadre");
	snprintf(fragment, sizeof(fragment), base,
		 "{\"digest\": \"" CODE_DIGEST "\", \"path\": \"/w\"},"
		 " {\"digest\": \"" CODE_DIGEST "\", \"path\": \"/w/sub\"}");
	assert_problem(fragment, "spec.code[1].path", "overlaps spec.code[0].path /w");
	snprintf(fragment, sizeof(fragment), base,
		 "{\"digest\": \"" CODE_DIGEST "\", \"path\": \"/w\", \"mode\": 1}");
	assert_problem(fragment, "spec.code[0].mode", "unknown field");
	snprintf(fragment, sizeof(fragment), base,
		 "{\"digest\": \"" CODE_DIGEST "\", \"path\": \"/mnt/shared2\"}");
	assert_valid(fragment);
}

/* Every size a user sets has a top (docs/api.md): past it, the sums it goes into overflow. */
Test(trainingjob, sizes_past_their_bounds_are_refused_naming_the_field)
{
	assert_valid("{\"numNodes\": 16384, \"maxRestarts\": 10000, \"maxInfraRestarts\": 10000,"
		     " \"activeDeadlineSeconds\": 315360000, \"ttlSecondsAfterFinished\": 315360000,"
		     " \"gang\": {\"timeoutSeconds\": 604800}}");
	assert_problem("{\"numNodes\": 16385}", "spec.numNodes", "must be between 1 and 16384");
	assert_problem("{\"numNodes\": 2147483647}", "spec.numNodes",
		       "must be between 1 and 16384");
	assert_problem("{\"activeDeadlineSeconds\": 9223372036854775807}",
		       "spec.activeDeadlineSeconds",
		       "must be between 1 and 315360000 (ten years; no deadline: leave it out)");
	assert_problem("{\"maxRestarts\": 10001}", "spec.maxRestarts",
		       "must be between 0 and 10000");
	assert_problem("{\"maxInfraRestarts\": 2147483647}", "spec.maxInfraRestarts",
		       "must be between 0 and 10000");
	assert_problem("{\"ttlSecondsAfterFinished\": 315360001}", "spec.ttlSecondsAfterFinished",
		       "must be between 0 and 315360000");
	assert_problem("{\"gang\": {\"timeoutSeconds\": 604801}}", "spec.gang.timeoutSeconds",
		       "must be between 1 and 604800");
}

/* sbatch -w, -x, --exclusive and -C as fields (trainingjob.h, struct tj_nodes). */
Test(trainingjob, node_choices_are_read_and_checked)
{
	struct trainingjob tj;
	struct field_errors errs;
	json_t *job = job_with_spec("{\"numNodes\":2,\"nodeList\":[\"gpu-node-1\",\"gpu-node-2\"],"
				    "\"excludeNodes\":[\"gpu-node-7\"],\"exclusive\":true,"
				    "\"constraint\":\"a100&ib|h100\"}");

	field_errors_init(&errs);
	cr_assert_eq(tj_parse(job, &tj, &errs), 0);
	cr_assert_eq(tj_validate(&tj, &errs), 0);
	cr_assert_eq(tj.spec.nodes.n_list, 2);
	cr_assert_str_eq(tj.spec.nodes.list[1], "gpu-node-2");
	cr_assert_eq(tj.spec.nodes.n_exclude, 1);
	cr_assert(tj.spec.nodes.exclusive);
	cr_assert_str_eq(tj.spec.nodes.constraint, "a100&ib|h100");
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);

	assert_problem("{\"numNodes\":1,\"nodeList\":[\"a\",\"b\"]}", "spec.nodeList",
		       "names 2 nodes, more than numNodes (1)");
	assert_problem("{\"nodeList\":[\"Bad_Name\"]}", "spec.nodeList[0]",
		       "\"Bad_Name\" is not a node name");
	assert_problem("{\"excludeNodes\":[\"a\",\"a\"]}", "spec.excludeNodes[1]",
		       "a is listed twice");
	assert_problem("{\"nodeList\":[\"a\"],\"excludeNodes\":[\"a\"]}", "spec.excludeNodes",
		       "a is in spec.nodeList too");
	assert_problem("{\"constraint\":\"[a|b]*2\"}", "spec.constraint",
		       "expected a feature name at column 1 of \"[a|b]*2\" (features are letters, "
		       "digits, '_', '-' and '.', joined by & or |; brackets and counts are not "
		       "taken)");
	assert_problem("{\"constraint\":\"a&\"}", "spec.constraint",
		       "expected a feature name at column 3 of \"a&\" (features are letters, "
		       "digits, '_', '-' and '.', joined by & or |; brackets and counts are not "
		       "taken)");
	assert_valid("{\"constraint\":\"rack-1.fast\"}");
}

Test(trainingjob, a_constraint_is_an_or_of_ands)
{
	struct tj_constraint c;
	char why[160];

	cr_assert_eq(tj_constraint_parse("a100&ib|h100", &c, why, sizeof(why)), 0);
	cr_assert_eq(c.n_terms, 2);
	cr_assert_eq(c.n_features, 3);
	cr_assert_eq(c.term_end[0], 2);
	cr_assert_str_eq(c.feature[0], "a100");
	cr_assert_str_eq(c.feature[1], "ib");
	cr_assert_str_eq(c.feature[2], "h100");
	tj_constraint_release(&c);
	cr_assert_eq(tj_constraint_parse("a b", &c, why, sizeof(why)), CADRE_EPARSE);
	cr_assert_str_eq(why, "unexpected ' ' at column 2 of \"a b\" (features are joined by & "
			 "or |)");
	cr_assert_eq(tj_constraint_parse("", &c, why, sizeof(why)), CADRE_EPARSE);
}

/* docs/failures.md: spec.restartStrategy decodes, and status.inPlaceRestart round trips. */
Test(trainingjob, in_place_restart_strategy_and_its_status_round_trip)
{
	json_t *job = job_with_spec("{\"restartStrategy\": \"InPlace\"}");
	json_t *status = json_pack("{s:i, s:{s:i, s:s}}", "restarts", 2, "inPlaceRestart",
				   "attempt", 2, "time", "2026-12-07T10:00:00Z");
	struct field_errors errs;
	struct trainingjob tj;
	json_t *out;

	cr_assert_eq(json_object_set_new(job, "status", status), 0);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(job, &tj, &errs), 0);
	cr_assert_eq(tj.spec.restart_strategy, TJ_RESTART_IN_PLACE);
	cr_assert(tj.status.has_in_place);
	cr_assert_eq(tj.status.in_place.attempt, 2);
	out = tj_status_to_json(&tj.status);
	cr_assert(json_equal(json_object_get(out, "inPlaceRestart"),
			     json_object_get(status, "inPlaceRestart")));
	json_decref(out);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);
}

/* docs/design.md 3.5: a preemption's record on both jobs round trips, and counts in the attempt. */
Test(trainingjob, preemption_status_round_trips_and_counts_in_the_attempt)
{
	json_t *job = job_with_spec("{}");
	json_t *status = json_pack("{s:i, s:i, s:{s:s, s:i, s:s, s:i, s:s, s:i}, s:[{s:s, s:i}]}",
				   "restarts", 1, "preemptions", 2, "preemption",
				   "preemptor", "ml/urgent", "attempt", 2, "time",
				   "2026-12-07T10:00:00Z", "graceSeconds", 45, "mode", "Requeue",
				   "tier", 10, "preempting", "job", "ml/scavenge", "attempt", 0);
	struct field_errors errs;
	struct trainingjob tj;
	json_t *out;

	cr_assert_eq(json_object_set_new(job, "status", status), 0);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(job, &tj, &errs), 0);
	cr_assert_eq(tj.status.preemptions, 2);
	cr_assert_eq(tj_attempt(&tj.status), 3);
	cr_assert(tj.status.has_preemption);
	cr_assert_str_eq(tj.status.preemption.preemptor, "ml/urgent");
	cr_assert_eq(tj.status.preemption.grace_s, 45);
	cr_assert_eq(tj.status.n_preempting, 1);
	cr_assert_str_eq(tj.status.preempting[0].job, "ml/scavenge");
	out = tj_status_to_json(&tj.status);
	cr_assert(json_equal(json_object_get(out, "preemption"),
			     json_object_get(status, "preemption")));
	cr_assert(json_equal(json_object_get(out, "preempting"),
			     json_object_get(status, "preempting")));
	cr_assert_eq(json_integer_value(json_object_get(out, "preemptions")), 2);
	json_decref(out);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(job);
}
