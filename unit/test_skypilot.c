#include <criterion/criterion.h>

#include "base/err.h"
#include "convert/convert.h"

#include <stdlib.h>
#include <string.h>

static struct convert_result r;

static void setup(void)
{
	convert_result_init(&r);
}

static void teardown(void)
{
	convert_result_release(&r);
}

TestSuite(skypilot, .init = setup, .fini = teardown);

static int task(const char *text)
{
	struct convert_input in = { .text = text, .len = strlen(text), .default_name = "task" };

	convert_result_release(&r);
	return convert_sky_task(&in, &r);
}

static int volume(const char *text)
{
	struct convert_input in = { .text = text, .len = strlen(text) };

	convert_result_release(&r);
	return convert_sky_volume(&in, &r);
}

static void task_ok(const char *text)
{
	int err = task(text);

	cr_assert_eq(err, 0, "%d: line %d: %s", err, r.error.line,
		     r.error.message ? r.error.message : "");
}

static void task_fails(const char *text, int line, const char *option)
{
	cr_assert_eq(task(text), CADRE_EPARSE, "%s", text);
	cr_assert_not_null(r.error.message);
	cr_assert_eq(r.error.line, line, "line %d: %s", r.error.line, r.error.message);
	if (option)
		cr_assert_str_eq(r.error.option ? r.error.option : "", option, "%s", r.error.message);
}

static const struct convert_note *note_on(int line, const char *option, const char *text)
{
	for (size_t i = 0; i < r.notes.len; i++) {
		const struct convert_note *n = &r.notes.items[i];

		if (n->line == line && (!option || (n->option && !strcmp(n->option, option))) &&
		    (!text || strstr(n->message, text)))
			return n;
	}
	return NULL;
}

static void assert_note(int line, const char *option, const char *text)
{
	cr_assert_not_null(note_on(line, option, text), "no note at line %d for %s with \"%s\" "
			   "(%zu notes)", line, option ? option : "-", text ? text : "", r.notes.len);
}

Test(skypilot, name_num_nodes_setup_and_run)
{
	task_ok("name: llama-pretrain\nnum_nodes: 2\nsetup: |\n  pip install x\nrun: |\n  torchrun t.py\n");
	cr_assert_str_eq(r.tj.meta.name, "llama-pretrain");
	cr_assert_eq(r.tj.spec.num_nodes, 2);
	cr_assert_str_eq(r.tj.spec.setup, "pip install x\n");
	cr_assert_str_eq(r.tj.spec.run, "torchrun t.py\n");
	task_ok("run: echo hi\n");
	cr_assert_str_eq(r.tj.meta.name, "task", "the file's name when the task has none");
	cr_assert_eq(r.tj.spec.num_nodes, 1);
	task_ok("name: My_Task\nrun: x\n");
	cr_assert_str_eq(r.tj.meta.name, "my-task");
	assert_note(1, "name", "my-task");
}

Test(skypilot, accelerators_in_every_form)
{
	task_ok("resources:\n  accelerators: H100:8\nrun: x\n");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, "H100:8");
	cr_assert(r.tj.spec.resources.has_accel);
	task_ok("resources:\n  accelerators: A100\nrun: x\n");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, "A100");
	task_ok("resources:\n  accelerators: {L4: 4}\nrun: x\n");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, "L4:4");
	task_ok("resources:\n  accelerators: [H100:8, A100:8]\nrun: x\n");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, "H100:8");
	assert_note(2, "resources.accelerators", "first");
	task_fails("resources:\n  accelerators: T4:0.5\nrun: x\n", 2, "resources.accelerators");
}

Test(skypilot, cpus_and_memory)
{
	task_ok("resources:\n  cpus: 32\n  memory: 256\nrun: x\n");
	cr_assert_str_eq(r.tj.spec.resources.cpus, "32");
	cr_assert_eq(r.tj.spec.resources.cpus_milli, 32000);
	cr_assert_str_eq(r.tj.spec.resources.memory, "256Gi", "SkyPilot counts memory in GiB");
	task_ok("resources:\n  cpus: 8+\n  memory: 64Gi\nrun: x\n");
	cr_assert_str_eq(r.tj.spec.resources.cpus, "8");
	cr_assert_str_eq(r.tj.spec.resources.memory, "64Gi");
	assert_note(2, "resources.cpus", "at least");
	task_fails("resources:\n  cpus: lots\nrun: x\n", 2, "resources.cpus");
	/* Kubernetes' parser takes a sign, the CRD's pattern does not (fuzz/regressions/skypilot). */
	task_fails("resources:\n  cpus: +4\nrun: x\n", 2, "resources.cpus");
	task_fails("resources:\n  memory: +64Gi\nrun: x\n", 2, "resources.memory");
}

Test(skypilot, image_id_is_the_image)
{
	task_ok("resources:\n  image_id: docker:nvcr.io/nvidia/pytorch:24.05-py3\nrun: x\n");
	cr_assert_str_eq(r.tj.spec.image, "nvcr.io/nvidia/pytorch:24.05-py3");
	cr_assert_null(note_on(0, NULL, "no image"));
	task_ok("run: x\n");
	assert_note(0, NULL, "resources.image_id");
	task_fails("resources:\n  image_id: {us-east-1: ami-1}\nrun: x\n", 2, "resources.image_id");
}

Test(skypilot, infra_other_than_kubernetes_and_cloud_fields_are_reported)
{
	task_ok("resources:\n  infra: kubernetes\n  cloud: k8s\nrun: x\n");
	cr_assert_eq(r.notes.len, 1, "only the image note");
	task_ok("resources:\n  infra: aws/us-east-1\n  use_spot: true\n  disk_size: 512\nrun: x\n");
	assert_note(2, "resources.infra", "kubeconfig");
	assert_note(3, "resources.use_spot", NULL);
	assert_note(4, "resources.disk_size", NULL);
}

Test(skypilot, job_recovery_gives_max_restarts)
{
	task_ok("resources:\n  job_recovery:\n    max_restarts_on_errors: 3\nrun: x\n");
	cr_assert_eq(r.tj.spec.max_restarts, 3);
	task_ok("resources:\n  job_recovery: EAGER_NEXT_REGION\nrun: x\n");
	assert_note(2, "resources.job_recovery", "preemption");
	task_fails("resources:\n  job_recovery:\n    max_restarts_on_errors: -1\nrun: x\n", 3, NULL);
}

Test(skypilot, envs_become_plain_variables)
{
	task_ok("envs:\n  BATCH: 32\n  LR: \"3e-4\"\n  DEBUG: true\n  TOKEN:\n  SLURM_JOB_ID: 5\nrun: x\n");
	cr_assert_eq(r.tj.spec.n_envs, 3);
	cr_assert_str_eq(r.tj.spec.envs[0].name, "BATCH");
	cr_assert_str_eq(r.tj.spec.envs[0].value, "32");
	cr_assert_str_eq(r.tj.spec.envs[1].value, "3e-4");
	cr_assert_str_eq(r.tj.spec.envs[2].value, "true");
	assert_note(5, "envs", "TOKEN has no value");
	assert_note(6, "envs", "set by cadre");
	task_fails("envs:\n  1BAD: x\nrun: x\n", 2, "envs");
	task_fails("envs: [A]\nrun: x\n", 1, "envs");
}

Test(skypilot, secrets_become_secret_envs_and_never_values)
{
	task_ok("name: llama\nsecrets:\n  HF_TOKEN: hf_abc123\n  WANDB_API_KEY: null\nrun: x\n");
	cr_assert_eq(r.tj.spec.n_secret_envs, 2);
	cr_assert_str_eq(r.tj.spec.secret_envs[0].name, "HF_TOKEN");
	cr_assert_str_eq(r.tj.spec.secret_envs[0].secret_name, "llama-secrets");
	cr_assert_str_eq(r.tj.spec.secret_envs[0].secret_key, "HF_TOKEN");
	cr_assert_str_eq(r.tj.spec.secret_envs[1].secret_key, "WANDB_API_KEY");
	cr_assert_eq(r.tj.spec.n_envs, 0, "a secret value never becomes a plain env");
	assert_note(2, "secrets", "kubectl create secret generic llama-secrets");
	for (size_t i = 0; i < r.notes.len; i++)
		cr_assert_null(strstr(r.notes.items[i].message, "hf_abc123"), "the value is never echoed");
}

Test(skypilot, volumes_mount_volumes_by_name)
{
	task_ok("volumes:\n  /mnt/checkpoints: shared-checkpoints\n  /scratch:\n    size: 10Gi\nrun: x\n");
	cr_assert_eq(r.tj.spec.n_volumes, 1);
	cr_assert_str_eq(r.tj.spec.volumes[0].mount_path, "/mnt/checkpoints");
	cr_assert_str_eq(r.tj.spec.volumes[0].volume, "shared-checkpoints");
	assert_note(3, "volumes", "an ephemeral volume becomes spec.scratch");
	task_fails("volumes:\n  mnt/x: v\nrun: x\n", 2, "volumes");
	task_fails("volumes:\n  /mnt/x: Bad_Name\nrun: x\n", 2, "volumes");
}

Test(skypilot, workdir_and_local_file_mounts_become_uploads_buckets_are_reported)
{
	task_ok("file_mounts:\n  /data: s3://bucket/data\n  ~/.netrc: ./netrc\n"
		"  /opt/tools/: tools\n  /m:\n    source: gs://b\n"
		"workdir: .\nconfig:\n  kubernetes: {}\nfrobnicate: 1\nrun: x\n");
	assert_note(2, "file_mounts", "/data is not copied");
	assert_note(5, "file_mounts", "/m is not copied");
	assert_note(8, "config", NULL);
	assert_note(10, "frobnicate", "not a field");
	cr_assert_str_eq(r.tj.spec.workdir, CONVERT_SKY_WORKDIR);
	cr_assert_eq(r.n_uploads, 3);
	/* workdir first, whatever its place in the file. */
	cr_assert_str_eq(r.uploads[0].source, ".");
	cr_assert_str_eq(r.uploads[0].target, "/root/sky_workdir");
	cr_assert_str_eq(r.uploads[0].field, "workdir");
	cr_assert_eq(r.uploads[0].line, 7);
	cr_assert_str_eq(r.uploads[1].source, "./netrc");
	cr_assert_str_eq(r.uploads[1].target, "/root/.netrc");
	cr_assert_str_eq(r.uploads[2].target, "/opt/tools");
	cr_assert_null(r.tj.spec.code, "the converter uploads nothing; the CLI fills spec.code");
	/* Without a workdir, a relative destination is still where SkyPilot puts it. */
	task_ok("file_mounts:\n  conf: ../conf\nrun: x\n");
	cr_assert_eq(r.n_uploads, 1);
	cr_assert_str_eq(r.uploads[0].target, "/root/sky_workdir/conf");
}

Test(skypilot, upload_destinations_are_plain_and_apart)
{
	task_fails("workdir: .\nfile_mounts:\n  /root/sky_workdir/x: ./x\nrun: x\n", 3,
		   "file_mounts");
	task_fails("file_mounts:\n  /a/../b: ./x\nrun: x\n", 2, "file_mounts");
	task_fails("file_mounts:\n  /a: ./x\n  /a/b: ./y\nrun: x\n", 3, "file_mounts");
	task_fails("workdir: s3://bucket/code\nrun: x\n", 1, "workdir");
	task_ok("workdir:\n  url: https://example.com/r.git\n  ref: main\nrun: x\n");
	assert_note(1, "workdir", "is not cloned");
	cr_assert_eq(r.n_uploads, 0);
	cr_assert_null(r.tj.spec.workdir);
}

Test(skypilot, only_the_first_task_of_a_pipeline_is_converted)
{
	task_ok("name: a\nrun: x\n---\nname: b\nrun: y\n");
	cr_assert_str_eq(r.tj.meta.name, "a");
	assert_note(3, NULL, "pipeline");
}

Test(skypilot, bad_input_names_its_line_and_column)
{
	task_fails("name: x\nrun: [unclosed\n", 3, NULL);
	cr_assert(strstr(r.error.message, "YAML"), "%s", r.error.message);
	cr_assert_gt(r.error.column, 0);
	task_fails("name: x\n  bad: indent\nrun: x\n", 2, NULL);
	task_fails("num_nodes: two\nrun: x\n", 1, "num_nodes");
	cr_assert_eq(r.error.column, 12);
	task_fails("num_nodes: 0\nrun: x\n", 1, "num_nodes");
	task_fails("name: x\nnum_nodes: 2\n", 1, "run");
	task_fails("- run: x\n", 1, NULL);
	task_fails("", 1, NULL);
	task_fails("run: {a: b}\n", 1, "run");
	/* A run of line ends only is no command (fuzz/regressions/skypilot). */
	task_fails("name: x\nrun: |+\n\n\n", 2, "run");
	task_fails("run: \" \\t\"\n", 1, "run");
	/* An error quoting text with line breaks is still one line (fuzz/regressions/skypilot). */
	task_fails("resources:\n  accelerators: {\"H100:8\\n\\nx\": 1}\nrun: x\n", 2,
		   "resources.accelerators");
	cr_assert_null(strchr(r.error.message, '\n'), "%s", r.error.message);
	cr_assert(strstr(r.error.message, "\"H100:8  x:1\""), "%s", r.error.message);
}

/* A key given twice once wrote past the secrets it had counted (fuzz/regressions/skypilot). */
Test(skypilot, a_key_given_twice_in_a_mapping_is_refused_at_the_second)
{
	task_fails("name: t\nsecrets:\n  A: x\nrun: echo\nsecrets:\n  B: y\n  C: z\n", 5, NULL);
	cr_assert_str_eq(r.error.message, "\"secrets\" is given twice in one mapping (first on line 2)");
	cr_assert_eq(r.error.column, 1);
	task_fails("run: echo\nenvs:\n  A: 1\n  B: 2\n  A: 3\n", 5, NULL);
	cr_assert_eq(r.error.column, 3);
	task_fails("run: echo\nresources: {cpus: 2, cpus: 4}\n", 2, NULL);
	task_fails("run: echo\n\"a\\nb\": 1\n\"a\\nb\": 2\n", 3, NULL);
	cr_assert_str_eq(r.error.message, "a key given twice in one mapping (first on line 2)");
	cr_assert_eq(volume("name: v\ntype: k8s-pvc\nsize: 1Gi\nsize: 2Gi\n"), CADRE_EPARSE);
	cr_assert_eq(r.error.line, 4);
	task_ok("run: echo\nenvs: {A: 1}\nsecrets: {A: 2}\n");
}

Test(skypilot, the_seed_volume_maps_one_to_one)
{
	cr_assert_eq(volume("name: shared-checkpoints\ntype: k8s-pvc\ninfra: kubernetes\n"
			    "size: 500Gi\nconfig:\n  access_mode: ReadWriteMany\n"), 0);
	cr_assert_str_eq(r.vol.meta.name, "shared-checkpoints");
	cr_assert_eq(r.vol.spec.type, VOL_TYPE_K8S_PVC);
	cr_assert_str_eq(r.vol.spec.size, "500Gi");
	cr_assert_eq(r.vol.spec.access_mode, VOL_ACCESS_READ_WRITE_MANY);
	cr_assert_eq(r.notes.len, 0);
}

Test(skypilot, volume_fields)
{
	cr_assert_eq(volume("name: data\ntype: k8s-pvc\nsize: 100\nconfig:\n  access_mode: "
			    "ReadWriteOnce\n  storage_class_name: fast\n  namespace: ml\nlabels: {a: b}\n"), 0);
	cr_assert_str_eq(r.vol.spec.size, "100Gi", "a bare number is GiB");
	cr_assert_eq(r.vol.spec.access_mode, VOL_ACCESS_READ_WRITE_ONCE);
	cr_assert_str_eq(r.vol.spec.storage_class_name, "fast");
	assert_note(7, "config.namespace", "kubectl");
	assert_note(8, "labels", NULL);
	cr_assert_eq(volume("name: old\ntype: k8s-pvc\nuse_existing: true\n"), 0);
	cr_assert_str_eq(r.vol.spec.claim_name, "old", "use_existing adopts the PVC of that name");
}

Test(skypilot, bad_volume_files_are_refused)
{
	static const struct { const char *text; int line; const char *option; } bad[] = {
		{ "name: v\ntype: runpod-network-volume\nsize: 1Gi\n", 2, "type" },
		{ "type: k8s-pvc\nsize: 1Gi\n", 1, "name" },
		{ "name: Bad_Name\ntype: k8s-pvc\nsize: 1Gi\n", 1, "name" },
		{ "name: v\ntype: k8s-pvc\n", 1, "size" },
		{ "name: v\ntype: k8s-pvc\nsize: big\n", 3, "size" },
		{ "name: v\ntype: k8s-pvc\nsize: 1Gi\nconfig:\n  access_mode: Sometimes\n", 5,
		  "config.access_mode" },
		/* What vol_validate refuses is refused here, at its line (fuzz/regressions/skypilot). */
		{ "name: v\ntype: k8s-pvc\nsize: 1Gi\nconfig:\n  storage_class_name: Fast_SSD\n", 5,
		  "config.storage_class_name" },
		/* Kubernetes' parser takes "+1", the CRD's pattern does not. */
		{ "name: v\ntype: k8s-pvc\nsize: +1\n", 3, "size" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(volume(bad[i].text), CADRE_EPARSE, "%s", bad[i].text);
		cr_assert_eq(r.error.line, bad[i].line, "%s: %s", bad[i].text, r.error.message);
		cr_assert_str_eq(r.error.option, bad[i].option, "%s", bad[i].text);
	}
}

Test(skypilot, the_kind_is_told_from_the_text)
{
	cr_assert_eq(convert_detect("#!/bin/bash\n", 12), CONVERT_SLURM);
	cr_assert_eq(convert_detect("x\n#SBATCH -N 2\n", 15), CONVERT_SLURM);
	cr_assert_eq(convert_detect("name: a\nrun: x\n", 15), CONVERT_SKY_TASK);
	cr_assert_eq(convert_detect("resources:\n  cpus: 2\n", 21), CONVERT_SKY_TASK);
	cr_assert_eq(convert_detect("name: v\ntype: k8s-pvc\nsize: 1Gi\n", 32), CONVERT_SKY_VOLUME);
	cr_assert_eq(convert_detect("name: v\n", 8), CONVERT_UNKNOWN);
	cr_assert_eq(convert_detect("", 0), CONVERT_UNKNOWN);
	cr_assert_eq(convert_any(&(struct convert_input){ .text = "hello\n", .len = 6 }, &r),
		     CADRE_EPARSE);
	cr_assert(strstr(r.error.message, "not a Slurm batch script"), "%s", r.error.message);
}

/* Every prefix of a task, without a terminator: converted or refused, never worse. */
Test(skypilot, every_truncation_is_converted_or_refused_cleanly)
{
	const char *full = "name: llama\nnum_nodes: 2\nresources:\n  accelerators: {H100: 8}\n"
			   "  cpus: 8+\n  memory: 64\n  image_id: docker:img:1\nenvs:\n  A: \"1\"\n"
			   "secrets:\n  T: v\nvolumes:\n  /mnt/c: ckpt\nfile_mounts:\n  /d: s3://b\n"
			   "setup: |\n  pip install x\nrun: |\n  torchrun t.py\n";
	size_t len = strlen(full);

	for (size_t cut = 0; cut <= len; cut++) {
		char *part = malloc(cut ? cut : 1);
		int err;

		memcpy(part, full, cut);
		convert_result_release(&r);
		err = convert_sky_task(&(struct convert_input){ .text = part, .len = cut }, &r);
		cr_assert(err == 0 || (err == CADRE_EPARSE && r.error.message), "cut %zu: %d", cut, err);
		if (err == 0)
			cr_assert(r.tj.spec.run && r.tj.meta.name, "cut %zu", cut);
		free(part);
	}
}

Test(skypilot, an_accelerator_map_needs_a_count)
{
	task_fails("resources:\n  accelerators: {H100: [8]}\nrun: x\n", 2, "resources.accelerators");
}

/* SkyPilot's ephemeral volume (docs/source/reference/volumes.rst): size, labels, config. */
Test(skypilot, ephemeral_volumes_become_scratch_of_each_node)
{
	task_ok("num_nodes: 2\n"
		"volumes:\n"
		"  /mnt/cache:\n"                                  /* 3 */
		"    size: 100Gi\n"
		"    labels:\n"                                    /* 5 */
		"      env: production\n"
		"    config:\n"
		"      storage_class_name: local-nvme\n"
		"      access_mode: ReadWriteMany\n"               /* 9 */
		"  /tmp/work:\n"                                   /* 10 */
		"    size: 20Gi\n"
		"run: x\n");
	cr_assert_eq(r.tj.spec.n_volumes, 0);
	cr_assert_eq(r.tj.spec.n_scratch, 2);
	cr_assert_str_eq(r.tj.spec.scratch[0].mount_path, "/mnt/cache");
	cr_assert_str_eq(r.tj.spec.scratch[0].size, "100Gi");
	cr_assert_str_eq(r.tj.spec.scratch[0].storage_class_name, "local-nvme");
	cr_assert_str_eq(r.tj.spec.scratch[1].mount_path, "/tmp/work");
	cr_assert_null(r.tj.spec.scratch[1].storage_class_name);
	assert_note(3, "volumes", "each node gets a claim of its own of that class and size");
	assert_note(5, "volumes", "labels of an ephemeral volume has no counterpart");
	assert_note(9, "volumes", "access_mode is not needed");
	assert_note(10, "volumes", "each node gets an emptyDir of that size on its own disk");
	task_fails("volumes:\n  /mnt/cache:\n    labels: {a: b}\nrun: x\n", 3, "volumes");
	task_fails("volumes:\n  /mnt/cache:\n    size: lots\nrun: x\n", 3, "volumes");
	task_fails("volumes:\n  /mnt/cache:\n    size: 1Gi\n    config:\n"
		   "      storage_class_name: Bad_Class\nrun: x\n", 5, "volumes");
}

Test(skypilot, num_nodes_past_the_jobs_bound_is_refused)
{
	task_fails("num_nodes: 16385\nrun: x\n", 1, "num_nodes");
	task_ok("num_nodes: 16384\nrun: x\n");
}
