#include <criterion/criterion.h>

#include "api/fielderr.h"
#include "api/trainingjob.h"
#include "api/volume.h"
#include "base/buf.h"
#include "base/err.h"
#include "cli/cli.h"
#include "convert/convert.h"
#include "unit/support/ytree.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TESTDATA CADRE_SOURCE_DIR "/unit/testdata/convert"

/* A YAML tree as the JSON kubectl would send: plain scalars typed as YAML 1.1 core does. */
static json_t *to_json(const struct ytree *t)
{
	json_t *out;
	const char *s;
	char *end;
	long long n;

	switch (t->kind) {
	case YTREE_MAP:
		out = json_object();
		for (size_t i = 0; i < t->len; i++)
			json_object_set_new(out, t->keys[i], to_json(t->items[i]));
		return out;
	case YTREE_SEQ:
		out = json_array();
		for (size_t i = 0; i < t->len; i++)
			json_array_append_new(out, to_json(t->items[i]));
		return out;
	case YTREE_SCALAR:
		break;
	}
	s = t->value;
	if (t->quoted)
		return json_string(s);
	if (!strcmp(s, "true") || !strcmp(s, "false"))
		return json_boolean(!strcmp(s, "true"));
	if (!*s || !strcmp(s, "null") || !strcmp(s, "~"))
		return json_null();
	n = strtoll(s, &end, 10);
	return *end ? json_string(s) : json_integer(n);
}

static char *read_file(const char *path)
{
	struct buf b;
	char chunk[4096];
	size_t n;
	FILE *f = fopen(path, "rb");

	cr_assert_not_null(f, "%s", path);
	buf_init(&b, 1 << 20);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		cr_assert_eq(buf_add(&b, chunk, n), 0);
	fclose(f);
	return buf_detach(&b, NULL);
}

/* Run `cadre ARGS...` in the test data directory; its stdout and stderr. */
static int run_cadre(char **out, char **err, int argc, char **argv)
{
	size_t out_len, err_len;
	FILE *o = open_memstream(out, &out_len), *e = open_memstream(err, &err_len);
	int code;

	cr_assert_eq(chdir(TESTDATA), 0);
	code = cli_main(argc, argv, o, e);
	fclose(o);
	fclose(e);
	return code;
}

/* The YAML must be a TrainingJob (or Volume) that tj_parse and tj_validate accept. */
static void assert_valid(const char *yaml, bool is_volume)
{
	struct ytree *tree;
	struct field_errors errs;
	struct buf msg;
	json_t *obj;

	cr_assert_eq(ytree_parse(yaml, strlen(yaml), &tree), 0, "%s", yaml);
	obj = to_json(tree);
	field_errors_init(&errs);
	buf_init(&msg, 1 << 16);
	if (is_volume) {
		struct volume v;

		vol_parse(obj, &v, &errs);
		vol_validate(&v, &errs);
		vol_release(&v);
	} else {
		struct trainingjob tj;

		tj_parse(obj, &tj, &errs);
		tj_validate(&tj, &errs);
		tj_release(&tj);
	}
	field_errors_join(&errs, &msg);
	cr_assert_eq(field_errors_count(&errs), 0, "%s\n%s", buf_str(&msg), yaml);
	buf_release(&msg);
	field_errors_release(&errs);
	json_decref(obj);
	ytree_free(tree);
}

static void assert_golden(const char *input, const char *golden, bool is_volume)
{
	char path[512], *out, *err, *want_out, *want_err;
	char *argv[] = { "cadre", "convert", (char *)input, NULL };

	cr_assert_eq(run_cadre(&out, &err, 3, argv), CLI_EXIT_OK, "%s", err);
	snprintf(path, sizeof(path), TESTDATA "/%s.golden.yaml", golden);
	want_out = read_file(path);
	snprintf(path, sizeof(path), TESTDATA "/%s.golden.stderr", golden);
	want_err = read_file(path);
	cr_assert_str_eq(out, want_out, "%s: stdout differs from %s.golden.yaml", input, golden);
	cr_assert_str_eq(err, want_err, "%s: stderr differs from %s.golden.stderr", input, golden);
	assert_valid(out, is_volume);
	free(out);
	free(err);
	free(want_out);
	free(want_err);
}

Test(convert, the_seed_batch_script_matches_its_golden_job)
{
	assert_golden("train.sh", "train", false);
}

Test(convert, the_seed_task_matches_its_golden_job)
{
	assert_golden("task.yaml", "task", false);
}

Test(convert, the_seed_volume_matches_its_golden_volume)
{
	assert_golden("volume.yaml", "volume", true);
}

/* Every field the converters set, written and read back through tj_parse. */
Test(convert, every_field_reads_back_through_tj_parse)
{
	const char *text =
		"#!/bin/bash\n#SBATCH -J llama -N 4 --gres=gpu:h100:8 -c 2 --mem=512G\n"
		"#SBATCH --ntasks-per-node=8\n"
		"#SBATCH --time=2-00:00:00 -p research -D /workspace\n"
		"#SBATCH --export=A=true,B=32,C=null,D=,E=a:b,F=#x,G=yes\n"
		"#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.05-py3\n"
		"#SBATCH --container-mounts=ckpt:/mnt/ckpt\n"
		"srun torchrun train.py\n";
	struct convert_result r;
	struct ytree *tree;
	struct trainingjob tj;
	struct field_errors errs;
	struct buf yaml;
	json_t *obj;

	convert_result_init(&r);
	buf_init(&yaml, 1 << 20);
	cr_assert_eq(convert_slurm(&(struct convert_input){ .text = text, .len = strlen(text) }, &r),
		     0, "%s", r.error.message);
	cr_assert_eq(convert_emit_yaml(&r, &yaml), 0);
	assert_valid(buf_str(&yaml), false);
	cr_assert_eq(ytree_parse(yaml.data, yaml.len, &tree), 0);
	obj = to_json(tree);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(obj, &tj, &errs), 0);
	cr_assert_str_eq(tj.meta.name, "llama");
	cr_assert_eq(tj.spec.num_nodes, 4);
	cr_assert_eq(tj.spec.tasks_per_node, 8);
	cr_assert_str_eq(tj.spec.resources.accelerators, "h100:8");
	cr_assert_str_eq(tj.spec.resources.cpus, "16");
	cr_assert_str_eq(tj.spec.resources.memory, "512Gi");
	cr_assert_eq(tj.spec.active_deadline_seconds, 172800);
	cr_assert_str_eq(tj.spec.queue, "research");
	cr_assert_str_eq(tj.spec.workdir, "/workspace");
	cr_assert_str_eq(tj.spec.image, "nvcr.io/nvidia/pytorch:24.05-py3");
	cr_assert_str_eq(tj.spec.volumes[0].volume, "ckpt");
	cr_assert_str_eq(tj.spec.run, "srun torchrun train.py\n");
	cr_assert_eq(tj.spec.n_envs, 7);
	for (size_t i = 0; i < tj.spec.n_envs; i++) {
		cr_assert_str_eq(tj.spec.envs[i].name, r.tj.spec.envs[i].name);
		cr_assert_str_eq(tj.spec.envs[i].value, r.tj.spec.envs[i].value,
				 "%s must read back as the same string", tj.spec.envs[i].name);
	}
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(obj);
	ytree_free(tree);
	buf_release(&yaml);
	convert_result_release(&r);
}

Test(convert, secret_envs_and_max_restarts_read_back)
{
	const char *text = "name: t\nsecrets:\n  HF_TOKEN: x\nresources:\n  job_recovery:\n"
			   "    max_restarts_on_errors: 2\nrun: |\n  echo \"$HF_TOKEN\" | wc -c\n";
	struct convert_result r;
	struct buf yaml;

	convert_result_init(&r);
	buf_init(&yaml, 1 << 20);
	cr_assert_eq(convert_sky_task(&(struct convert_input){ .text = text, .len = strlen(text) },
				      &r), 0);
	cr_assert_eq(convert_emit_yaml(&r, &yaml), 0);
	cr_assert(strstr(buf_str(&yaml), "maxRestarts: 2\n"), "%s", buf_str(&yaml));
	cr_assert(strstr(buf_str(&yaml), "secretKeyRef:\n      name: t-secrets\n      key: HF_TOKEN"),
		  "%s", buf_str(&yaml));
	assert_valid(buf_str(&yaml), false);
	buf_release(&yaml);
	convert_result_release(&r);
}

Test(convert, nothing_converted_is_not_emitted)
{
	struct convert_result r;
	struct buf yaml;

	convert_result_init(&r);
	buf_init(&yaml, 1 << 20);
	cr_assert_eq(convert_emit_yaml(&r, &yaml), CADRE_EINVAL);
	buf_release(&yaml);
	convert_result_release(&r);
}

/* convert_to_json must be what the YAML of convert_emit_yaml reads as. */
static void assert_json_is_the_yaml(const char *file, bool slurm)
{
	char path[512], *text;
	struct convert_result r;
	struct ytree *tree;
	struct buf yaml;
	json_t *obj, *want;

	snprintf(path, sizeof(path), "%s%s", file[0] == '/' ? "" : TESTDATA "/", file);
	text = read_file(path);
	convert_result_init(&r);
	buf_init(&yaml, 1 << 20);
	cr_assert_eq(convert_any(&(struct convert_input){ .text = text, .len = strlen(text),
							  .default_name = "x" }, &r), 0);
	cr_assert_eq(convert_emit_yaml(&r, &yaml), 0);
	cr_assert_eq(ytree_parse(yaml.data, yaml.len, &tree), 0);
	want = to_json(tree);
	cr_assert_eq(convert_to_json(&r, &obj), 0);
	cr_assert(json_equal(obj, want), "%s: %s\nvs\n%s", file, json_dumps(obj, JSON_SORT_KEYS),
		  json_dumps(want, JSON_SORT_KEYS));
	if (slurm)
		cr_assert(json_is_integer(json_object_get(json_object_get(obj, "spec"), "numNodes")));
	json_decref(obj);
	json_decref(want);
	ytree_free(tree);
	buf_release(&yaml);
	convert_result_release(&r);
	free(text);
}

Test(convert, the_json_sent_to_the_api_server_is_what_the_yaml_reads_as)
{
	FILE *f;
	char path[512];

	assert_json_is_the_yaml("train.sh", true);
	assert_json_is_the_yaml("task.yaml", true);
	assert_json_is_the_yaml("volume.yaml", false);
	snprintf(path, sizeof(path), "/tmp/cadre-json-%d.sh", (int)getpid());
	cr_assert(f = fopen(path, "w"));
	fputs("#!/bin/bash\n#SBATCH -J llama -N 4 --gres=gpu:h100:8 -c 2 --mem=512G --time=5\n"
	      "#SBATCH --export=A=true,B=32,C=null,D=,E=a:b,G=yes,H=-7\n"
	      "#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.05-py3\n"
	      "#SBATCH --container-mounts=ckpt:/mnt/ckpt\nsrun torchrun train.py\n", f);
	fclose(f);
	assert_json_is_the_yaml(path, true);
	unlink(path);
}
