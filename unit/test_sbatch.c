#include <criterion/criterion.h>

#include "base/err.h"
#include "convert/convert.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static struct convert_result r;

static void setup(void)
{
	convert_result_init(&r);
}

static void teardown(void)
{
	convert_result_release(&r);
}

TestSuite(sbatch, .init = setup, .fini = teardown);

/* Convert a script; image is what --image would give (NULL: none). */
static int script_with_image(const char *text, const char *image)
{
	struct convert_input in = { .text = text, .len = strlen(text), .default_name = "train",
				    .image = image };

	convert_result_release(&r);
	return convert_slurm(&in, &r);
}

static int script(const char *text)
{
	return script_with_image(text, NULL);
}

/* A script of these #SBATCH lines and one srun command; must convert. */
static void sbatch_ok(const char *lines)
{
	char text[4096];
	int err;

	snprintf(text, sizeof(text), "#!/bin/bash\n%s\nsrun python train.py\n", lines);
	err = script(text);
	cr_assert_eq(err, 0, "%s: %d %s", lines, err, r.error.message ? r.error.message : "");
}

/* The same, but it must be refused naming line and option. */
static void sbatch_fails(const char *lines, int line, const char *option)
{
	char text[4096];

	snprintf(text, sizeof(text), "#!/bin/bash\n%s\nsrun python train.py\n", lines);
	cr_assert_eq(script(text), CADRE_EPARSE, "%s", lines);
	cr_assert_not_null(r.error.message);
	cr_assert_eq(r.error.line, line, "%s: line %d: %s", lines, r.error.line, r.error.message);
	if (option)
		cr_assert_str_eq(r.error.option ? r.error.option : "", option, "%s", lines);
	else
		cr_assert_null(r.error.option, "%s", lines);
}

/* The note on line about option (NULL: any) whose message holds text. */
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
			   "(%zu notes; first: %s)", line, option ? option : "-", text ? text : "",
			   r.notes.len, r.notes.len ? r.notes.items[0].message : "none");
}

/* The first note with a line, for messages. */
static const char *first_line_note(void)
{
	static char text[1200];

	for (size_t i = 0; i < r.notes.len; i++)
		if (r.notes.items[i].line) {
			snprintf(text, sizeof(text), "line %d: %s", r.notes.items[i].line,
				 r.notes.items[i].message);
			return text;
		}
	return "none";
}

/* Notes other than the one every image-less script gets. */
static size_t option_notes(void)
{
	size_t n = 0;

	for (size_t i = 0; i < r.notes.len; i++)
		n += r.notes.items[i].line != 0;
	return n;
}

Test(sbatch, reads_long_options_with_equals_or_a_separate_value)
{
	sbatch_ok("#SBATCH --nodes=2\n#SBATCH --job-name llama");
	cr_assert_eq(r.tj.spec.num_nodes, 2);
	cr_assert_str_eq(r.tj.meta.name, "llama");
}

Test(sbatch, reads_short_options_attached_or_separate)
{
	sbatch_ok("#SBATCH -N2\n#SBATCH -J llama -p gpu\n#SBATCH -t 90");
	cr_assert_eq(r.tj.spec.num_nodes, 2);
	cr_assert_str_eq(r.tj.meta.name, "llama");
	cr_assert_str_eq(r.tj.spec.partition, "gpu");
	cr_assert_eq(r.tj.spec.active_deadline_seconds, 5400);
	sbatch_ok("#SBATCH -N 3");
	cr_assert_eq(r.tj.spec.num_nodes, 3);
}

Test(sbatch, accepts_unique_prefixes_of_long_names_as_getopt_does)
{
	sbatch_ok("#SBATCH --job=short --ntasks-per-n=1 --parti=q");
	cr_assert_str_eq(r.tj.meta.name, "short");
	cr_assert_str_eq(r.tj.spec.partition, "q");
	sbatch_fails("#SBATCH --gpus-per=8", 2, NULL);
	cr_assert(strstr(r.error.message, "ambiguous"), "%s", r.error.message);
}

Test(sbatch, reads_several_options_per_line_with_quotes_and_comments)
{
	sbatch_ok("#SBATCH -N 2 --job-name=\"llama 7b\" # two nodes\n"
		  "#SBATCH --export=MSG=\"a\\ b\" #comment");
	cr_assert_eq(r.tj.spec.num_nodes, 2);
	cr_assert_str_eq(r.tj.meta.name, "llama-7b");
	cr_assert_eq(r.tj.spec.n_envs, 1);
	cr_assert_str_eq(r.tj.spec.envs[0].value, "a b");
	sbatch_fails("#SBATCH --job-name=\"open", 2, NULL);
}

Test(sbatch, reads_the_block_until_the_first_command_only)
{
	cr_assert_eq(script("#!/bin/bash\n\n# a comment\n#SBATCH --nodes=2\n   \n"
			    "echo start\n#SBATCH --nodes=4\nsrun hostname\n"), 0);
	cr_assert_eq(r.tj.spec.num_nodes, 2, "sbatch ignores #SBATCH after a command");
	assert_note(7, NULL, "sbatch ignores it");
	cr_assert_str_eq(r.tj.spec.run, "echo start\n#SBATCH --nodes=4\nsrun hostname\n");
}

Test(sbatch, the_body_without_shebang_and_sbatch_lines_is_the_run_script)
{
	cr_assert_eq(script("#!/bin/bash\n#SBATCH -N 1\n\n\nset -e\nsrun ./a.out\n"), 0);
	cr_assert_str_eq(r.tj.spec.run, "set -e\nsrun ./a.out\n");
	cr_assert_eq(script("#!/bin/bash\nsrun ./a.out"), 0, "no #SBATCH lines, no newline at the end");
	cr_assert_str_eq(r.tj.spec.run, "srun ./a.out");
	cr_assert_eq(r.tj.spec.num_nodes, 1);
}

Test(sbatch, refuses_what_sbatch_refuses)
{
	cr_assert_eq(script("#SBATCH -N 2\nsrun x\n"), CADRE_EPARSE);
	cr_assert_eq(r.error.line, 1);
	cr_assert(strstr(r.error.message, "#!"), "%s", r.error.message);
	cr_assert_eq(script("#!/bin/bash\r\n#SBATCH -N 2\r\nsrun x\r\n"), CADRE_EPARSE);
	cr_assert(strstr(r.error.message, "DOS"), "%s", r.error.message);
	convert_result_release(&r);
	cr_assert_eq(convert_slurm(&(struct convert_input){ .text = "#!/bin/sh\n\0x\n", .len = 13 },
				   &r), CADRE_EPARSE);
	cr_assert(strstr(r.error.message, "NUL"), "%s", r.error.message);
	convert_result_release(&r);
	cr_assert_eq(script("#!/bin/bash\n#SBATCH -N 2\n\n"), CADRE_EPARSE);
	cr_assert(strstr(r.error.message, "no commands"), "%s", r.error.message);
	/* Carriage returns alone are no command either (fuzz/regressions/sbatch). */
	cr_assert_eq(script("#!/bin/bash\n#SBATCH -N 2\n\r\r \r \n\r"), CADRE_EPARSE);
	cr_assert(strstr(r.error.message, "no commands"), "%s", r.error.message);
	cr_assert_eq(script("#!/bin/bash\n\n  srun x\n"), 0);
	cr_assert_str_eq(r.tj.spec.run, "  srun x\n", "the first command keeps its indent");
	sbatch_fails("#SBATCH --frobnicate=3", 2, NULL);
	cr_assert(strstr(r.error.message, "unrecognized option '--frobnicate'"), "%s", r.error.message);
	sbatch_fails("#SBATCH -Z", 2, NULL);
	sbatch_fails("#SBATCH nodes=2", 2, NULL);
	cr_assert(strstr(r.error.message, "invalid #SBATCH directive"), "%s", r.error.message);
	sbatch_fails("#SBATCH --requeue=yes", 2, "--requeue");
	sbatch_fails("#SBATCH -N 2\n#SBATCH --job-name", 3, "--job-name");
}

Test(sbatch, node_counts)
{
	sbatch_ok("#SBATCH --nodes=2-4");
	cr_assert_eq(r.tj.spec.num_nodes, 2);
	assert_note(2, "--nodes", "exactly 2 nodes");
	sbatch_fails("#SBATCH --nodes=0", 2, "--nodes");
	sbatch_fails("#SBATCH --nodes=two", 2, "--nodes");
	sbatch_fails("#SBATCH --nodes=4-2", 2, "--nodes");
}

Test(sbatch, time_in_every_form_slurm_reads)
{
	static const struct { const char *text; int64_t seconds; } ok[] = {
		{ "30", 1800 }, { "30:15", 1860 }, { "1:00:00", 3600 }, { "2-0", 172800 },
		{ "1-12", 129600 }, { "1-02:30", 95400 }, { "1-02:03:04", 93840 },
		{ "0:30", 60 }, { "90", 5400 }, { "UNLIMITED", -1 }, { "infinite", -1 }, { "0", -1 },
		{ "00:00:00", -1 },
	};
	static const char *const bad[] = {
		"", "abc", "1-", "-1", "1:2:3:4", "1-2:3:4:5", "1:", ":5", "1.5", "1h", "1--2",
		"1-2-3", " 30", "30 ",
	};
	int64_t seconds;

	for (size_t i = 0; i < COUNT(ok); i++) {
		cr_assert_eq(convert_slurm_time(ok[i].text, &seconds), 0, "%s", ok[i].text);
		cr_assert_eq(seconds, ok[i].seconds, "%s: %lld", ok[i].text, (long long)seconds);
	}
	for (size_t i = 0; i < COUNT(bad); i++)
		cr_assert_eq(convert_slurm_time(bad[i], &seconds), CADRE_EPARSE, "\"%s\"", bad[i]);
}

Test(sbatch, time_becomes_the_active_deadline)
{
	sbatch_ok("#SBATCH --time=1-02:03:04");
	cr_assert(r.tj.spec.has_active_deadline_seconds);
	cr_assert_eq(r.tj.spec.active_deadline_seconds, 93840);
	sbatch_ok("#SBATCH --time=UNLIMITED");
	cr_assert_not(r.tj.spec.has_active_deadline_seconds);
	sbatch_fails("#SBATCH -N 2\n#SBATCH --time=soon", 3, "--time");
}

Test(sbatch, memory_with_and_without_units)
{
	static const struct { const char *text, *quantity; } ok[] = {
		{ "64G", "64Gi" }, { "64g", "64Gi" }, { "500", "500Mi" }, { "500M", "500Mi" },
		{ "1T", "1Ti" }, { "512K", "512Ki" }, { "0", NULL },
	};
	/* The last two: past what a Kubernetes quantity holds (fuzz/regressions/slurm_values). */
	static const char *const bad[] = { "", "64GB", "G", "-1", "1.5G", "64 G", "64P", "64Gi",
					   "8888888888881T", "999999999999999" };
	char *q;

	for (size_t i = 0; i < COUNT(ok); i++) {
		cr_assert_eq(convert_slurm_memory(ok[i].text, &q), 0, "%s", ok[i].text);
		if (ok[i].quantity)
			cr_assert_str_eq(q, ok[i].quantity, "%s", ok[i].text);
		else
			cr_assert_null(q, "%s", ok[i].text);
		free(q);
	}
	for (size_t i = 0; i < COUNT(bad); i++)
		cr_assert_eq(convert_slurm_memory(bad[i], &q), CADRE_EPARSE, "\"%s\"", bad[i]);
	sbatch_ok("#SBATCH --mem=256G");
	cr_assert_str_eq(r.tj.spec.resources.memory, "256Gi");
	cr_assert(r.tj.spec.resources.has_memory);
	sbatch_ok("#SBATCH --mem=0");
	cr_assert_null(r.tj.spec.resources.memory);
	assert_note(2, "--mem", "all of a node's memory");
	sbatch_fails("#SBATCH --mem=lots", 2, "--mem");
}

Test(sbatch, gres_gives_the_gpus_per_node)
{
	sbatch_ok("#SBATCH --gres=gpu:h100:8");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, "h100:8");
	cr_assert(r.tj.spec.resources.has_accel);
	cr_assert_eq(option_notes(), 0);
	sbatch_ok("#SBATCH --gres=gpu:4");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, CONVERT_ANY_GPU_TYPE ":4");
	assert_note(2, "--gres", "no GPU type");
	sbatch_ok("#SBATCH --gres=gpu");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, CONVERT_ANY_GPU_TYPE ":1");
	sbatch_ok("#SBATCH --gres=gpu:a100:2,nvme:1");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, "a100:2");
	assert_note(2, "--gres", "\"nvme:1\"");
	sbatch_fails("#SBATCH --gres=gpu:h100:0", 2, "--gres");
	sbatch_fails("#SBATCH --gres=gpu:h1/00:2", 2, "--gres");
	/* TYPE:COUNT past the CRD's 64 characters (fuzz/regressions/sbatch). */
	sbatch_ok("#SBATCH --gres=gpu:h012345678901234567890123456789012345678901234567890123456789:8");
	cr_assert_eq(strlen(r.tj.spec.resources.accelerators), 63);
	sbatch_fails("#SBATCH --gres=gpu:h012345678901234567890123456789012345678901234567890123456789ab:80", 2,
		     "--gres");
	cr_assert(strstr(r.error.message, "longer than the 64 characters"), "%s", r.error.message);
}

Test(sbatch, gpus_per_node_and_gpus_in_total)
{
	sbatch_ok("#SBATCH --gpus-per-node=H100:8");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, "H100:8");
	sbatch_ok("#SBATCH --gpus-per-node=8");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, CONVERT_ANY_GPU_TYPE ":8");
	assert_note(2, "--gpus-per-node", "no GPU type");
	sbatch_ok("#SBATCH -N 2\n#SBATCH --gpus=H100:16");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, "H100:8");
	sbatch_ok("#SBATCH -G 4");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, CONVERT_ANY_GPU_TYPE ":4");
	sbatch_fails("#SBATCH -N 3\n#SBATCH --gpus=H100:16", 3, "--gpus");
	cr_assert(strstr(r.error.message, "do not divide over 3 nodes"), "%s", r.error.message);
	sbatch_ok("#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-task=h100:2");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, "h100:8");
	sbatch_fails("#SBATCH --gpus-per-node=h100", 2, "--gpus-per-node");
}

/* The pods' srun starts tasksPerNode tasks (docs/pods.md); a total is spread over the nodes. */
Test(sbatch, tasks_per_node_becomes_spec_tasks_per_node)
{
	sbatch_ok("#SBATCH --ntasks-per-node=8");
	cr_assert_eq(r.tj.spec.tasks_per_node, 8);
	cr_assert(r.tj.spec.has_tasks_per_node);
	cr_assert_eq(option_notes(), 0, "srun honours it: nothing to report");
	sbatch_ok("#SBATCH -N 2\n#SBATCH --ntasks=4");
	cr_assert_eq(r.tj.spec.tasks_per_node, 2);
	assert_note(3, "--ntasks", "spec.tasksPerNode: 2 (4 tasks over 2 nodes)");
	sbatch_ok("#SBATCH -N 2\n#SBATCH --ntasks=5");
	cr_assert_eq(r.tj.spec.tasks_per_node, 3);
	assert_note(3, "--ntasks", "5 tasks do not divide over 2 nodes");
	sbatch_ok("#SBATCH -N 2\n#SBATCH --ntasks=2\n#SBATCH --ntasks-per-node=1");
	cr_assert_eq(option_notes(), 0, "one task per node is what cadre runs");
	cr_assert_not(r.tj.spec.has_tasks_per_node, "and the default is not written");
}

Test(sbatch, cpus_per_task_times_tasks_is_the_nodes_cpus)
{
	sbatch_ok("#SBATCH -c 8");
	cr_assert_str_eq(r.tj.spec.resources.cpus, "8");
	cr_assert(r.tj.spec.resources.has_cpus);
	sbatch_ok("#SBATCH -c 8 --ntasks-per-node=4");
	cr_assert_str_eq(r.tj.spec.resources.cpus, "32");
}

Test(sbatch, job_names_become_dns_labels)
{
	sbatch_ok("#SBATCH -J Llama_Pretrain.v2");
	cr_assert_str_eq(r.tj.meta.name, "llama-pretrain-v2");
	assert_note(2, "--job-name", "llama-pretrain-v2");
	sbatch_ok("#SBATCH -N 1");
	cr_assert_str_eq(r.tj.meta.name, "train", "the script's name, as sbatch does");
	cr_assert_eq(option_notes(), 0);
	char *name = convert_job_name("7-__Run__");
	cr_assert_str_eq(name, "run");
	free(name);
	name = convert_job_name("___");
	cr_assert_str_eq(name, "job");
	free(name);
	/* At most 50, the CRD's limit (fuzz/regressions/sbatch), and no '-' left at the cut. */
	name = convert_job_name("a-true-b-33-c-null-d-e-a-b-f-x-g-yestainer-imagen-more-words");
	cr_assert_str_eq(name, "a-true-b-33-c-null-d-e-a-b-f-x-g-yestainer-imagen");
	cr_assert_eq(strlen(name), 49);
	free(name);
	name = convert_job_name("abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij-xyz");
	cr_assert_eq(strlen(name), CONVERT_NAME_MAX, "%s", name);
	free(name);
}

/* A partition is the cluster's Partition of that name (docs/design.md 11), not a Kueue queue. */
Test(sbatch, partition_is_the_partition)
{
	sbatch_ok("#SBATCH --partition=a100,h100");
	cr_assert_str_eq(r.tj.spec.partition, "a100");
	cr_assert_null(r.tj.spec.queue);
	assert_note(2, "--partition", "one partition");
	sbatch_fails("#SBATCH -p GPU_Queue", 2, "--partition");
}

Test(sbatch, chdir_is_the_workdir_when_absolute)
{
	sbatch_ok("#SBATCH -D /workspace/llama");
	cr_assert_str_eq(r.tj.spec.workdir, "/workspace/llama");
	sbatch_fails("#SBATCH --chdir=llama", 2, "--chdir");
}

Test(sbatch, export_lists_become_envs)
{
	sbatch_ok("#SBATCH --export=NONE");
	cr_assert_eq(r.tj.spec.n_envs, 0);
	cr_assert_eq(option_notes(), 0);
	sbatch_ok("#SBATCH --export=ALL");
	assert_note(2, "--export", "ALL");
	sbatch_ok("#SBATCH --export=ALL,BATCH=32,LR=3e-4,HOME,SLURM_JOB_ID=7,BATCH=64");
	cr_assert_eq(r.tj.spec.n_envs, 2);
	cr_assert_str_eq(r.tj.spec.envs[0].name, "BATCH");
	cr_assert_str_eq(r.tj.spec.envs[0].value, "64", "a later value replaces an earlier one");
	cr_assert_str_eq(r.tj.spec.envs[1].value, "3e-4");
	assert_note(2, "--export", "HOME takes its value");
	assert_note(2, "--export", "SLURM_JOB_ID is set by cadre");
	sbatch_fails("#SBATCH --export=1BAD=2", 2, "--export");
}

Test(sbatch, requeue_options_are_explained)
{
	sbatch_ok("#SBATCH --requeue");
	cr_assert_eq(r.tj.spec.max_restarts, 0);
	assert_note(2, "--requeue", "infraRestarts");
	sbatch_ok("#SBATCH --no-requeue");
	cr_assert_eq(r.tj.spec.max_restarts, 0);
	assert_note(2, "--no-requeue", "cannot be turned off");
}

Test(sbatch, container_image_of_pyxis_is_the_image)
{
	sbatch_ok("#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.05-py3");
	cr_assert_str_eq(r.tj.spec.image, "nvcr.io/nvidia/pytorch:24.05-py3");
	cr_assert_null(note_on(0, NULL, "no image"));
	sbatch_ok("#SBATCH --container-image=docker://alice@nvcr.io#nvidia/pytorch:24.05-py3");
	cr_assert_str_eq(r.tj.spec.image, "nvcr.io/nvidia/pytorch:24.05-py3");
	assert_note(2, "--container-image", "imagePullSecrets");
	sbatch_ok("#SBATCH --container-image ubuntu:24.04");
	cr_assert_str_eq(r.tj.spec.image, "ubuntu:24.04");
	sbatch_fails("#SBATCH --container-image=/scratch/torch.sqsh", 2, "--container-image");
}

Test(sbatch, the_image_comes_from_the_file_else_the_flag_else_the_controller)
{
	cr_assert_eq(script_with_image("#!/bin/bash\n#SBATCH --container-image=a:1\nsrun x\n",
				       "b:2"), 0);
	cr_assert_str_eq(r.tj.spec.image, "a:1");
	cr_assert_not(r.image_from_flag);
	cr_assert_eq(script_with_image("#!/bin/bash\nsrun x\n", "b:2"), 0);
	cr_assert_str_eq(r.tj.spec.image, "b:2");
	cr_assert(r.image_from_flag);
	cr_assert_null(note_on(0, NULL, "no image"));
	cr_assert_eq(script("#!/bin/bash\nsrun x\n"), 0);
	cr_assert_null(r.tj.spec.image);
	assert_note(0, NULL, "--default-image");
}

Test(sbatch, container_mounts_of_volumes_become_volumes)
{
	sbatch_ok("#SBATCH --container-mounts=shared-checkpoints:/mnt/checkpoints,"
		  "/lustre/data:/data,datasets:/data/sets:ro");
	cr_assert_eq(r.tj.spec.n_volumes, 2);
	cr_assert_str_eq(r.tj.spec.volumes[0].mount_path, "/mnt/checkpoints");
	cr_assert_str_eq(r.tj.spec.volumes[0].volume, "shared-checkpoints");
	cr_assert_str_eq(r.tj.spec.volumes[1].volume, "datasets");
	assert_note(2, "--container-mounts", "/lustre/data is a directory of the Slurm nodes");
	assert_note(2, "--container-mounts", "\"ro\"");
	sbatch_fails("#SBATCH --container-mounts=data:relative", 2, "--container-mounts");
	sbatch_fails("#SBATCH --container-mounts=Data_Set:/data", 2, "--container-mounts");
	/* A path takes one mount: the same one again is kept once, another is refused. */
	sbatch_ok("#SBATCH --container-mounts=ckpt:/mnt\n#SBATCH --container-mounts=ckpt:/mnt");
	cr_assert_eq(r.tj.spec.n_volumes, 1);
	sbatch_fails("#SBATCH --container-mounts=ckpt:/mnt,data:/mnt", 2, "--container-mounts");
}

Test(sbatch, output_off_any_volume_is_reported_with_where_the_output_goes)
{
	sbatch_ok("#SBATCH --output=logs/%x-%j.out\n#SBATCH -e err.txt");
	assert_note(2, "--output", "container log");
	assert_note(3, "--error", "container log");
	cr_assert_null(r.tj.spec.output);
	cr_assert_null(r.tj.spec.error);
}

/* A path on a Volume the job mounts is written there: absolute, or relative to a workdir on one. */
Test(sbatch, output_on_a_volume_is_written_there)
{
	sbatch_ok("#SBATCH --container-mounts=ckpt:/mnt/ckpt -D /mnt/ckpt/run\n"
		  "#SBATCH --output=logs/%x-%j.out --error=/mnt/ckpt/err-%j");
	cr_assert_str_eq(r.tj.spec.output, "logs/%x-%j.out");
	cr_assert_str_eq(r.tj.spec.error, "/mnt/ckpt/err-%j");
	cr_assert_null(note_on(3, NULL, NULL), "%s", first_line_note());
	/* Several nodes append to one file: said, with how to have one per node. */
	sbatch_ok("#SBATCH -N 2 --container-mounts=ckpt:/mnt/ckpt\n#SBATCH -o /mnt/ckpt/%x.out");
	assert_note(3, "--output", "%N or %t");
	sbatch_fails("#SBATCH --output=", 2, "--output");
}

Test(sbatch, array_is_the_array_and_bad_ones_name_their_line)
{
	sbatch_ok("#SBATCH --array=0-99%8");
	cr_assert_str_eq(r.tj.spec.array, "0-99%8");
	sbatch_ok("#SBATCH -a 1,3,5-7");
	cr_assert_str_eq(r.tj.spec.array, "1,3,5-7");
	sbatch_fails("#SBATCH -N 1\n#SBATCH --array=0-9%0", 3, "--array");
	sbatch_fails("#SBATCH --array=oops", 2, "--array");
	/* Slurm's MaxArraySize, 1001 unless the cluster says otherwise. */
	sbatch_fails("#SBATCH --array=0-1001", 2, "--array");
	cr_assert(strstr(r.error.message, "MaxArraySize 1001"), "%s", r.error.message);
}

Test(sbatch, an_arrays_name_leaves_room_for_its_element_names)
{
	sbatch_ok("#SBATCH -J abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij --array=0-999");
	cr_assert_eq(strlen(r.tj.meta.name), TJ_NAME_MAX - 4, "%s", r.tj.meta.name);
	assert_note(2, "--job-name", "<name>-<index>");
}

Test(sbatch, dependency_is_the_dependency_and_bad_ones_name_their_line)
{
	sbatch_ok("#SBATCH --dependency=afterok:123:456,afterany:prep");
	cr_assert(r.tj.spec.has_dependency);
	cr_assert_not(r.tj.spec.dependency.any);
	cr_assert_eq(r.tj.spec.dependency.n_items, 2);
	cr_assert_eq(r.tj.spec.dependency.items[0].n_jobs, 2);
	sbatch_ok("#SBATCH -d singleton");
	cr_assert_eq(r.tj.spec.dependency.items[0].type, SLURM_DEP_SINGLETON);
	sbatch_fails("#SBATCH --dependency=afterok", 2, "--dependency");
	sbatch_fails("#SBATCH --dependency=aftercorr:12", 2, "--dependency");
	sbatch_fails("#SBATCH --dependency=afterok:1,afterany:2?after:3", 2, "--dependency");
}

/* A script of these #SBATCH lines converted with level as --topology-level (NULL: none). */
static int topology_script(const char *lines, const char *level)
{
	char text[4096];
	struct convert_input in = { .text = text, .default_name = "train",
				    .topology_level = level };

	snprintf(text, sizeof(text), "#!/bin/bash\n%s\nsrun python train.py\n", lines);
	in.len = strlen(text);
	convert_result_release(&r);
	return convert_slurm(&in, &r);
}

#define LEAF "network.topology.nvidia.com/leaf"

/* --switches and --segment: spec.topology at the cluster's level (docs/topology.md). */
Test(sbatch, switches_and_segment_are_spec_topology_at_the_level)
{
	const struct tj_topology *t = &r.tj.spec.topology;

	/* One switch: every rank under one leaf, or wait. */
	cr_assert_eq(topology_script("#SBATCH -N 8\n#SBATCH --switches=1", LEAF), 0, "%s",
		     r.error.message ? r.error.message : "");
	cr_assert(t->set);
	cr_assert_str_eq(t->required, LEAF);
	cr_assert_null(t->preferred);
	cr_assert_not(t->has_segment);
	/* Slurm's @MAX-TIME relaxes after a wait; cadre says it does not. */
	cr_assert_eq(topology_script("#SBATCH -N 8\n#SBATCH --switches=1@10:00", LEAF), 0);
	assert_note(3, "--switches", "does not give up");
	/* More than one: as few as the cluster allows, said in a note. */
	cr_assert_eq(topology_script("#SBATCH -N 8\n#SBATCH --switches=3", LEAF), 0);
	cr_assert_null(t->required);
	cr_assert_str_eq(t->preferred, LEAF);
	assert_note(3, "--switches", "as few");
	/* Segments of N consecutive ranks, each under one leaf. */
	cr_assert_eq(topology_script("#SBATCH -N 8\n#SBATCH --segment=4", LEAF), 0);
	cr_assert(t->has_segment);
	cr_assert_eq(t->segment_size, 4);
	cr_assert_str_eq(t->segment_required, LEAF);
	cr_assert_null(t->required);
	/* One segment of every node is one domain. */
	cr_assert_eq(topology_script("#SBATCH -N 8\n#SBATCH --segment=8", LEAF), 0);
	cr_assert_str_eq(t->required, LEAF);
	cr_assert_not(t->has_segment);
	/* The options written as JSON as the API server reads them. */
	cr_assert_eq(topology_script("#SBATCH -N 8\n#SBATCH --switches=2 --segment=4", LEAF), 0);
	json_t *obj = NULL, *want = json_pack("{s:s, s:{s:i, s:s}}", "preferred", LEAF, "segment",
					      "size", 4, "required", LEAF);

	cr_assert_eq(convert_to_json(&r, &obj), 0);
	cr_assert(json_equal(json_object_get(json_object_get(obj, "spec"), "topology"), want));
	json_decref(want);
	json_decref(obj);
}

Test(sbatch, switches_without_a_level_or_a_segment_that_does_not_divide_is_refused)
{
	cr_assert_eq(topology_script("#SBATCH -N 8\n#SBATCH --switches=1", NULL), CADRE_EPARSE);
	cr_assert(r.needs_topology_level);
	cr_assert_eq(r.error.line, 3);
	cr_assert_str_eq(r.error.option, "--switches");
	cr_assert(strstr(r.error.message, "--topology-level"), "%s", r.error.message);
	cr_assert_eq(topology_script("#SBATCH -N 8\n#SBATCH --segment=3", LEAF), CADRE_EPARSE);
	cr_assert_not(r.needs_topology_level);
	cr_assert_eq(r.error.line, 3);
	cr_assert_str_eq(r.error.option, "--segment");
	cr_assert_eq(topology_script("#SBATCH --switches=0", LEAF), CADRE_EPARSE);
	cr_assert_str_eq(r.error.option, "--switches");
	cr_assert_eq(topology_script("#SBATCH --switches=1@soon", LEAF), CADRE_EPARSE);
	cr_assert_eq(topology_script("#SBATCH --segment=x", LEAF), CADRE_EPARSE);
	cr_assert_str_eq(r.error.option, "--segment");
}

/* --signal=[{R|B}:]SIG[@SECONDS]: spec.signal, 60 s by default as in Slurm. */
Test(sbatch, signal_is_spec_signal)
{
	sbatch_ok("#SBATCH --signal=USR1@90");
	cr_assert_str_eq(r.tj.spec.signal.name, "USR1");
	cr_assert_eq(r.tj.spec.signal.seconds_before, 90);
	sbatch_ok("#SBATCH --signal=SIGTERM");
	cr_assert_str_eq(r.tj.spec.signal.name, "TERM");
	cr_assert_eq(r.tj.spec.signal.seconds_before, 60);
	sbatch_ok("#SBATCH --signal=B:10@30");
	cr_assert_str_eq(r.tj.spec.signal.name, "USR1");
	assert_note(2, "--signal", "batch shell");
	/* Past the time limit it comes as early as it can, as Slurm's would at the start. */
	sbatch_ok("#SBATCH --time=1 --signal=USR2@120");
	cr_assert_eq(r.tj.spec.signal.seconds_before, 59);
	sbatch_fails("#SBATCH --signal=KILL", 2, "--signal");
	sbatch_fails("#SBATCH --signal=USR1@soon", 2, "--signal");
}

Test(sbatch, hold_priority_and_nice_map_to_the_spec)
{
	sbatch_ok("#SBATCH --hold --priority=7");
	cr_assert(r.tj.spec.suspend);
	cr_assert_eq(r.tj.spec.priority, 7);
	sbatch_ok("#SBATCH --nice=5");
	cr_assert_eq(r.tj.spec.priority, -5);
	sbatch_ok("#SBATCH --nice");
	cr_assert_eq(r.tj.spec.priority, -100);
	sbatch_fails("#SBATCH --priority=high", 2, "--priority");
}

/* --mem-per-cpu and --mem-per-gpu, times the node's CPUs or GPUs, as the node's memory. */
Test(sbatch, memory_per_cpu_or_gpu_is_the_nodes_memory)
{
	sbatch_ok("#SBATCH -c 4 --ntasks-per-node=2 --mem-per-cpu=2G");
	cr_assert_str_eq(r.tj.spec.resources.memory, "16384Mi");
	sbatch_ok("#SBATCH --gpus-per-node=h100:8 --mem-per-gpu=80G");
	cr_assert_str_eq(r.tj.spec.resources.memory, "655360Mi");
	sbatch_ok("#SBATCH --mem-per-cpu=2G");
	assert_note(2, "--mem-per-cpu", "--mem");
}

Test(sbatch, every_other_option_is_reported_with_its_line)
{
	static const char *const lines[] = {
		"--account=ml", "-A ml", "--qos=high", "--begin=now+1hour", "--deadline=tomorrow",
		"--prefer=h100", "--nodefile=nodes.txt", "--mail-type=END", "--mem-per-gpu=80G",
		"--contiguous", "--kill-on-invalid-dep=no", "--signal=R:USR1@90",
		"--container-name=x", "--container-mount-home", "--priority=TOP", "--exclusive=user",
		"-v", "--output=/home/me/out.txt",
	};
	char text[256];

	for (size_t i = 0; i < COUNT(lines); i++) {
		snprintf(text, sizeof(text), "#!/bin/bash\n#SBATCH -N 1\n#SBATCH %s\nsrun x\n", lines[i]);
		cr_assert_eq(script(text), 0, "%s: %s", lines[i], r.error.message);
		cr_assert_eq(option_notes(), 1, "%s", lines[i]);
		cr_assert_eq(r.notes.items[0].line, 3, "%s", lines[i]);
		cr_assert_not_null(r.notes.items[0].option, "%s", lines[i]);
	}
}

/* -w, -x, --exclusive and -C become the job's node choices (docs/design.md 3.4). */
Test(sbatch, node_choices_at_submit_are_the_jobs)
{
	const struct tj_nodes *n = &r.tj.spec.nodes;

	sbatch_ok("#SBATCH -N 3 -w gpu-node-[1-2] -x gpu-node-7,gpu-node-9 --exclusive "
		  "-C a100&ib|h100");
	cr_assert_eq(option_notes(), 0, "%s", first_line_note());
	cr_assert_eq(n->n_list, 2);
	cr_assert_str_eq(n->list[0], "gpu-node-1");
	cr_assert_str_eq(n->list[1], "gpu-node-2");
	cr_assert_eq(n->n_exclude, 2);
	cr_assert_str_eq(n->exclude[1], "gpu-node-9");
	cr_assert(n->exclusive);
	cr_assert_str_eq(n->constraint, "a100&ib|h100");
	sbatch_fails("#SBATCH -w gpu[1-", 2, "--nodelist");
	sbatch_fails("#SBATCH -x /tmp/nodes", 2, "--exclude");
	sbatch_fails("#SBATCH -C [a*2]", 2, "--constraint");
}

/*
 * A name no Node can have is refused at conversion, naming the option and its
 * line (the fuzzer found "-x -kube-..." converted into a job the API refuses);
 * a name listed twice is kept once, as Slurm ignores it.
 */
Test(sbatch, node_lists_hold_only_node_names_each_once)
{
	const struct tj_nodes *n = &r.tj.spec.nodes;

	sbatch_fails("#SBATCH -x -kube-job-name=llama", 2, "--exclude");
	sbatch_fails("#SBATCH -w GPU-Node-1", 2, "--nodelist");
	sbatch_ok("#SBATCH -N 2 -w gpu-node-1,gpu-node-[1-2]");
	cr_assert_eq(n->n_list, 2);
	cr_assert_str_eq(n->list[0], "gpu-node-1");
	cr_assert_str_eq(n->list[1], "gpu-node-2");
}

Test(sbatch, setup_commands_and_srun_run_on_every_node_silently)
{
	cr_assert_eq(script("#!/bin/bash\n#SBATCH -N 2\n"
			    "module load cuda/12.4\nml purge\nsource /env/bin/activate\n"
			    ". ~/.bashrc\nexport NCCL_DEBUG=INFO\ncd /workspace\necho start\n"
			    "mkdir -p /ckpt/run1\nnvidia-smi\nMASTER=$(scontrol show hostnames | head -n1)\n"
			    "conda activate torch\nset -euo pipefail\n# a comment\n\n"
			    "srun torchrun \\\n  --nnodes=2 \\\n  train.py\n"), 0);
	cr_assert_eq(option_notes(), 0, "first: %s", first_line_note());
}

Test(sbatch, other_commands_outside_srun_are_reported_with_their_line)
{
	cr_assert_eq(script("#!/bin/bash\n#SBATCH -N 2\n"
			    "python prepare.py --out /data\n"           /* 3 */
			    "srun python train.py\n"                     /* 4 */
			    "OMP_NUM_THREADS=4 \\\n  python eval.py\n"   /* 5-6 */
			    "mkdir /ckpt/run1\n"                         /* 7 */
			    "conda install numpy\n"),                    /* 8 */
		     0);
	assert_note(3, NULL, "`python prepare.py --out /data` runs on every node");
	assert_note(5, NULL, "eval.py");
	assert_note(7, NULL, "mkdir -p");
	assert_note(8, NULL, "conda install");
	cr_assert_eq(option_notes(), 4);
}

Test(sbatch, commands_kept_to_one_rank_or_in_a_here_document_are_not_reported)
{
	cr_assert_eq(script("#!/bin/bash\n#SBATCH -N 2\n"
			    "if [ \"$SLURM_NODEID\" = 0 ]; then\n"
			    "  python prepare.py\n"
			    "  if [ -d /x ]; then\n    rm -rf /x\n  fi\n"
			    "fi\n"
			    "cat > cfg.yaml <<'EOF'\nmodel: llama\nrun: python x\nEOF\n"
			    "for i in 1 2; do\n  echo $i\ndone\n"
			    "if [ -f ok ]; then echo ok; fi\n"
			    "srun python train.py\n"),
		     0);
	cr_assert_eq(option_notes(), 0, "first: %s", first_line_note());
	cr_assert_eq(script("#!/bin/bash\n#SBATCH -N 2\n"
			    "if [ -d /x ]; then\n  python prepare.py\nfi\n"), 0);
	assert_note(4, NULL, "prepare.py");
}

Test(sbatch, an_interpreter_other_than_a_shell_is_reported)
{
	cr_assert_eq(script("#!/usr/bin/env bash\nsrun x\n"), 0);
	cr_assert_null(note_on(1, NULL, NULL));
	cr_assert_eq(script("#!/bin/sh -e\nsrun x\n"), 0);
	cr_assert_null(note_on(1, NULL, NULL));
	cr_assert_eq(script("#!/usr/bin/env python3\nprint(1)\n"), 0);
	assert_note(1, NULL, "interpreter");
}

/*
 * Every prefix of a real script, in a buffer without a terminator (so an
 * over-read shows under ASan): converted or refused with a message, never
 * anything else.
 */
Test(sbatch, every_truncation_is_converted_or_refused_cleanly)
{
	const char *full = "#!/bin/bash\n#SBATCH --job-name=llama -N 2 \"--gres=gpu:h100:8\"\n"
			   "#SBATCH --time=1-02:03:04 --export=ALL,A=1 # c\n"
			   "#SBATCH --container-mounts=ckpt:/mnt/ckpt\n"
			   "module load cuda\nif [ $SLURM_NODEID = 0 ]; then\n python p.py\nfi\n"
			   "cat <<EOF\nx\nEOF\nsrun torchrun \\\n  train.py\n";
	size_t len = strlen(full);

	for (size_t cut = 0; cut <= len; cut++) {
		char *part = malloc(cut ? cut : 1);
		struct convert_input in = { .text = part, .len = cut };
		int err;

		memcpy(part, full, cut);
		convert_result_release(&r);
		err = convert_slurm(&in, &r);
		cr_assert(err == 0 || (err == CADRE_EPARSE && r.error.message), "cut %zu: %d", cut, err);
		if (err == 0)
			cr_assert(r.tj.spec.run && *r.tj.spec.run && r.tj.meta.name, "cut %zu", cut);
		free(part);
	}
}

Test(sbatch, convert_any_lists_notes_in_line_order_file_wide_ones_last)
{
	const char *text = "#!/bin/bash\n#SBATCH -J A_B --account=x\n#SBATCH --output=o\npython x\n";

	cr_assert_eq(convert_any(&(struct convert_input){ .text = text, .len = strlen(text) }, &r), 0);
	cr_assert_eq(r.notes.len, 5);
	for (size_t i = 1; i + 1 < r.notes.len; i++)
		cr_assert_leq(r.notes.items[i - 1].line, r.notes.items[i].line, "note %zu", i);
	cr_assert_eq(r.notes.items[0].line, 2);
	/* Stable: --account is read before the name is settled, and stays first. */
	cr_assert_str_eq(r.notes.items[0].option, "--account");
	cr_assert_str_eq(r.notes.items[1].option, "--job-name");
	cr_assert_eq(r.notes.items[2].line, 3);
	cr_assert_eq(r.notes.items[3].line, 4);
	cr_assert_eq(r.notes.items[4].line, 0, "the image note is about the whole file");
}

Test(sbatch, gpus_asked_for_twice_use_the_per_node_form_and_say_so)
{
	sbatch_ok("#SBATCH -N 2\n#SBATCH --gpus=H100:16\n#SBATCH --gres=gpu:h100:4");
	cr_assert_str_eq(r.tj.spec.resources.accelerators, "h100:4");
	assert_note(3, "--gpus", "from --gres");
}

Test(sbatch, case_patterns_and_functions_are_not_commands)
{
	cr_assert_eq(script("#!/bin/bash\n#SBATCH -N 2\n"
			    "case \"$MODE\" in\n  fast)\n    export STEPS=10\n    ;;\nesac\n"
			    "setup_env() {\n  export A=1\n}\n"
			    "srun python train.py\n"), 0);
	cr_assert_eq(option_notes(), 0, "first: %s", first_line_note());
}

Test(sbatch, command_line_options_are_read_after_the_sbatch_lines_and_win)
{
	const char *text = "#!/bin/bash\n#SBATCH -N 2 --time=10 -J first\n#SBATCH --export=A=1\n"
			   "srun python train.py\n";
	const char *args[] = { "-N", "4", "--time=1:00:00", "--job-name", "second",
			       "--export=B=2", "--mem=0" };
	struct convert_input in = { .text = text, .len = strlen(text), .args = args,
				    .n_args = COUNT(args) };

	convert_result_release(&r);
	cr_assert_eq(convert_slurm(&in, &r), 0, "%s", r.error.message);
	cr_assert_eq(r.tj.spec.num_nodes, 4);
	cr_assert_eq(r.tj.spec.active_deadline_seconds, 3600);
	cr_assert_str_eq(r.tj.meta.name, "second");
	cr_assert_eq(r.tj.spec.n_envs, 2, "a list option adds to the script's");
	assert_note(CONVERT_LINE_ARGS, "--mem", "all of a node's memory");
}

Test(sbatch, a_command_line_option_sbatch_refuses_is_an_error_of_the_command_line)
{
	const char *text = "#!/bin/bash\n#SBATCH -N 2\nsrun python train.py\n";
	const char *bad_time[] = { "--time=soon" }, *unknown[] = { "--bogus" },
		   *no_value[] = { "-N" };
	const char *const *cases[] = { bad_time, unknown, no_value };

	for (size_t i = 0; i < COUNT(cases); i++) {
		struct convert_input in = { .text = text, .len = strlen(text), .args = cases[i],
					    .n_args = 1 };

		convert_result_release(&r);
		cr_assert_eq(convert_slurm(&in, &r), CADRE_EPARSE, "%s", cases[i][0]);
		cr_assert_eq(r.error.line, CONVERT_LINE_ARGS, "%s: %s", cases[i][0],
			     r.error.message);
	}
}

Test(sbatch, the_words_an_option_takes_are_those_getopt_gives_it)
{
	static const struct { const char *word; int words; } cases[] = {
		{ "-N", 2 }, { "-N2", 1 }, { "--nodes", 2 }, { "--nodes=2", 1 },
		{ "--nodeli", 2 }, { "--nod", 1 }, { "-J", 2 }, { "-vN", 2 }, { "-vN2", 1 }, { "-v", 1 },
		{ "--exclusive", 1 }, { "--requeue", 1 }, { "train.sh", 1 }, { "-", 1 },
		{ "--bogus", 1 }, { "-Z", 1 }, { "--time", 2 }, { "--container-image", 2 },
	};

	for (size_t i = 0; i < COUNT(cases); i++)
		cr_assert_eq(convert_sbatch_words(cases[i].word), cases[i].words, "%s",
			     cases[i].word);
}

Test(sbatch, tmpdir_and_local_paths_are_pointed_at_scratch_once_each)
{
	cr_assert_eq(script("#!/bin/bash\n#SBATCH -N 2\n"
			    "export PATH=/usr/local/cuda/bin:$PATH\n"              /* 3: not /local */
			    "mkdir -p /local/scratch/$USER\n"                      /* 4 */
			    "sbcast /shared/data.tar /local/scratch/data.tar\n"    /* 5 */
			    "export HF_HOME=$TMPDIR/hf\n"                          /* 6 */
			    "srun python train.py --cache ${TMPDIR}/c --data /local/scratch\n"), 0);
	assert_note(4, NULL, "/local/scratch is the node's own disk on Slurm: make it scratch, "
		    "e.g. scratch: {/local/scratch: {size: 100Gi}}");
	assert_note(6, NULL, "$TMPDIR is the node's own disk on Slurm: give the job spec.scratch");
	/* Once each; sbcast runs on every node as it should, unreported. */
	cr_assert_eq(option_notes(), 2, "first: %s", first_line_note());
}

/* A gang and a time limit have a top, as the TrainingJob's schema has (docs/api.md). */
Test(sbatch, nodes_and_time_past_the_jobs_bounds_are_refused_with_their_line)
{
	sbatch_fails("#SBATCH -N 16385", 2, "--nodes");
	sbatch_fails("#SBATCH --time=3651-00:00:00", 2, "--time");
	sbatch_ok("#SBATCH -N 16384 --time=3650-00:00:00");
}
