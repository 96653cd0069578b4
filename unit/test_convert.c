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
		"#SBATCH --array=0-9%2 --dependency=afterok:123:prep?singleton\n"
		"#SBATCH --signal=B:USR1@90 --hold --priority=5\n"
		"#SBATCH --output=/mnt/ckpt/logs/%x-%A_%a.%N.out\n"
		"#SBATCH -w 12,gpu-[1-2] -x gpu-7 --exclusive -C a100&ib|h100\n"
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
	cr_assert_str_eq(tj.spec.partition, "research");
	cr_assert_null(tj.spec.queue);
	cr_assert_str_eq(tj.spec.array, "0-9%2");
	cr_assert(tj.spec.has_dependency);
	cr_assert(tj.spec.dependency.any);
	cr_assert_eq(tj.spec.dependency.n_items, 2);
	cr_assert_str_eq(tj.spec.dependency.items[0].jobs[0], "123",
			 "a job id stays a string");
	cr_assert_str_eq(tj.spec.dependency.items[0].jobs[1], "prep");
	cr_assert_eq(tj.spec.dependency.items[1].type, SLURM_DEP_SINGLETON);
	cr_assert_str_eq(tj.spec.signal.name, "USR1");
	cr_assert_eq(tj.spec.signal.seconds_before, 90);
	cr_assert(tj.spec.suspend);
	cr_assert_eq(tj.spec.priority, 5);
	cr_assert_str_eq(tj.spec.output, "/mnt/ckpt/logs/%x-%A_%a.%N.out");
	cr_assert_null(tj.spec.error);
	cr_assert_str_eq(tj.spec.workdir, "/workspace");
	cr_assert_str_eq(tj.spec.image, "nvcr.io/nvidia/pytorch:24.05-py3");
	cr_assert_str_eq(tj.spec.volumes[0].volume, "ckpt");
	cr_assert_str_eq(tj.spec.run, "srun torchrun train.py\n");
	/* A node named 12 stays a string. */
	cr_assert_eq(tj.spec.nodes.n_list, 3);
	cr_assert_str_eq(tj.spec.nodes.list[0], "12");
	cr_assert_str_eq(tj.spec.nodes.list[2], "gpu-2");
	cr_assert_eq(tj.spec.nodes.n_exclude, 1);
	cr_assert(tj.spec.nodes.exclusive);
	cr_assert_str_eq(tj.spec.nodes.constraint, "a100&ib|h100");
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

/*
 * Bytes that are not UTF-8 (docs/migrating.md): a comment reads as Latin-1,
 * anything else is one error naming its line and column. Every test here has
 * a timeout: libyaml's emitter once looped forever on such a byte.
 */
static int convert_text(const char *text, struct convert_result *r)
{
	convert_result_init(r);
	return convert_any(&(struct convert_input){ .text = text, .len = strlen(text),
						    .default_name = "x" }, r);
}

/* The result converts to JSON and YAML, both UTF-8, and they agree. */
static void assert_emits(const struct convert_result *r)
{
	struct ytree *tree;
	struct buf yaml;
	json_t *obj, *want;
	char *dumped;

	buf_init(&yaml, 1 << 20);
	cr_assert_eq(convert_to_json(r, &obj), 0);
	cr_assert_not_null(dumped = json_dumps(obj, 0));
	cr_assert_eq(convert_emit_yaml(r, &yaml), 0);
	cr_assert_eq(ytree_parse(yaml.data, yaml.len, &tree), 0);
	want = to_json(tree);
	cr_assert(json_equal(obj, want), "%s\nvs\n%s", dumped, buf_str(&yaml));
	free(dumped);
	json_decref(obj);
	json_decref(want);
	ytree_free(tree);
	buf_release(&yaml);
}

Test(convert, a_latin1_comment_in_the_script_body_reads_as_latin1, .timeout = 5)
{
	struct convert_result r;

	cr_assert_eq(convert_text("#!/bin/bash\n#SBATCH -N 2\n# r\xe9sultats\necho ok\n"
				  "  # \xe0 la fin\n", &r), 0, "%s", r.error.message);
	cr_assert_str_eq(r.tj.spec.run, "# r\xc3\xa9sultats\necho ok\n  # \xc3\xa0 la fin\n");
	cr_assert_eq(r.notes.items[0].line, 3);
	cr_assert_str_eq(r.notes.items[0].message, "comment not in UTF-8, read as Latin-1 "
			 "(ISO 8859-1), and so is 1 more after it");
	assert_emits(&r);
	convert_result_release(&r);
}

Test(convert, a_latin1_comment_in_the_sbatch_block_is_left_out_unchanged, .timeout = 5)
{
	struct convert_result r;

	cr_assert_eq(convert_text("#!/bin/bash\n# r\xe9sultats\n#SBATCH -N 2\necho ok\n", &r), 0,
		     "%s", r.error.message);
	cr_assert_str_eq(r.tj.spec.run, "echo ok\n");
	for (size_t i = 0; i < r.notes.len; i++)
		cr_assert_null(strstr(r.notes.items[i].message, "UTF-8"), "%s",
			       r.notes.items[i].message);
	assert_emits(&r);
	convert_result_release(&r);
}

static void assert_refused(const char *text, int line, int column, const char *byte)
{
	struct convert_result r;

	cr_assert_eq(convert_text(text, &r), CADRE_EPARSE, "%s", text);
	cr_assert_eq(r.error.line, line, "%s: line %d", text, r.error.line);
	cr_assert_eq(r.error.column, column, "%s: column %d", text, r.error.column);
	cr_assert(strstr(r.error.message, byte), "%s", r.error.message);
	cr_assert(strstr(r.error.message, "not UTF-8"), "%s", r.error.message);
	cr_assert_null(strchr(r.error.message, '\n'));
	convert_result_release(&r);
}

Test(convert, a_byte_not_utf8_outside_comments_is_refused_at_its_line_and_column, .timeout = 5)
{
	/* In a command of the body: its bytes would reach the pods as they are. */
	assert_refused("#!/bin/bash\n#SBATCH -N 2\necho r\xe9sultats > out\n", 3, 7, "0xE9");
	/* The column counts characters: "é" before it is one. */
	assert_refused("#!/bin/bash\necho \xc3\xa9t\xe9\n", 2, 8, "0xE9");
	/* In an option, the interpreter line, a lone continuation byte, a cut sequence. */
	assert_refused("#!/bin/bash\n#SBATCH --job-name=r\xe9s\necho\n", 2, 21, "0xE9");
	assert_refused("#!/bin/b\xe2sh\necho\n", 1, 9, "0xE2");
	assert_refused("#!/bin/bash\necho \x80\n", 2, 6, "0x80");
	assert_refused("#!/bin/bash\necho \xe2\x82", 2, 6, "0xE2");
	/* Overlong forms and surrogates are not UTF-8 either. */
	assert_refused("#!/bin/bash\necho \xc0\xaf\n", 2, 6, "0xC0");
	assert_refused("#!/bin/bash\necho \xed\xa0\x80\n", 2, 6, "0xED");
	/* YAML must be UTF-8 from end to end, comments too, as SkyPilot reads it. */
	assert_refused("name: a\nrun: |\n  # r\xe9s\n  echo\n", 3, 6, "0xE9");
	assert_refused("run: echo r\xe9s\n", 1, 12, "0xE9");
	assert_refused("type: k8s-pvc\nsize: 10Gi\nname: v\xff\n", 3, 8, "0xFF");
}

/* Each byte that cannot start UTF-8 text, in a comment and in a command, at once. */
Test(convert, every_byte_not_utf8_converts_or_fails_in_milliseconds, .timeout = 10)
{
	char text[128];
	struct convert_result r;

	for (int b = 0x80; b <= 0xff; b++) {
		snprintf(text, sizeof(text), "#!/bin/bash\n#SBATCH -J j%c\n# %c\necho %c\n", b, b, b);
		cr_assert_eq(convert_text(text, &r), CADRE_EPARSE, "byte 0x%02X", b);
		cr_assert_eq(r.error.line, 2, "byte 0x%02X", b);
		convert_result_release(&r);
		snprintf(text, sizeof(text), "#!/bin/bash\n#SBATCH -J j\n# %c\necho\n", b);
		cr_assert_eq(convert_text(text, &r), 0, "byte 0x%02X: %s", b, r.error.message);
		assert_emits(&r);
		convert_result_release(&r);
		snprintf(text, sizeof(text), "#!/bin/bash\n#SBATCH -J j\n# ok\necho %c\n", b);
		cr_assert_eq(convert_text(text, &r), CADRE_EPARSE, "byte 0x%02X", b);
		cr_assert_eq(r.error.line, 4, "byte 0x%02X", b);
		cr_assert_eq(r.error.column, 6, "byte 0x%02X", b);
		convert_result_release(&r);
	}
}

Test(convert, command_line_words_and_the_image_flag_must_be_utf8, .timeout = 5)
{
	const char *script = "#!/bin/bash\necho ok\n";
	const char *args[] = { "-N", "2", "--job-name=caf\xe9" };
	struct convert_result r;

	convert_result_init(&r);
	cr_assert_eq(convert_slurm(&(struct convert_input){ .text = script, .len = strlen(script),
							    .args = args, .n_args = 3 }, &r),
		     CADRE_EPARSE);
	cr_assert_eq(r.error.line, CONVERT_LINE_ARGS);
	cr_assert_str_eq(r.error.message, "option 3, column 15: byte 0xE9 is not UTF-8, and a "
			 "TrainingJob holds UTF-8 text");
	convert_result_release(&r);
	convert_result_init(&r);
	cr_assert_eq(convert_any(&(struct convert_input){ .text = script, .len = strlen(script),
							  .image = "img\xe9" }, &r), CADRE_EPARSE);
	cr_assert_str_eq(r.error.option, "--image");
	convert_result_release(&r);
}

/* Whatever put it there, a string that is not UTF-8 is CADRE_EINVAL from both writers. */
Test(convert, writers_refuse_a_string_that_is_not_utf8_and_return, .timeout = 5)
{
	struct convert_result r;
	struct buf yaml;
	json_t *obj = NULL;

	cr_assert_eq(convert_text("#!/bin/bash\necho ok\n", &r), 0);
	free(r.tj.spec.run);
	cr_assert_not_null(r.tj.spec.run = strdup("echo r\xe9sultats\n"));
	buf_init(&yaml, 1 << 20);
	cr_assert_eq(convert_emit_yaml(&r, &yaml), CADRE_EINVAL);
	cr_assert_eq(convert_to_json(&r, &obj), CADRE_EINVAL);
	cr_assert_null(obj);
	buf_release(&yaml);
	convert_result_release(&r);
}

/*
 * The CRD's schema (unit/support/oapi.h) accepts every object the converters
 * make: from the fixtures here, the fuzz seeds and the inputs that once broke
 * a fuzz target. (fuzz/sbatch and fuzz/skypilot check the same on every input
 * they try.)
 */
#include "unit/support/oapi.h"

#include <dirent.h>

static size_t schema_checked;

static void assert_schema_accepts(const char *path)
{
	char *text = read_file(path), *start = text;
	struct convert_result r;
	struct buf errors;
	json_t *obj;
	const struct ytree *schema;

	/* A fuzz seed's "ARGS ..." line is sbatch's command line, not the script. */
	if (!strncmp(start, "ARGS ", 5) && strchr(start, '\n'))
		start = strchr(start, '\n') + 1;
	convert_result_init(&r);
	buf_init(&errors, 1 << 20);
	if (!convert_any(&(struct convert_input){ .text = start, .len = strlen(start),
						  .default_name = "x" }, &r)) {
		cr_assert_eq(convert_to_json(&r, &obj), 0, "%s", path);
		schema = oapi_crd_schema(r.kind == CONVERT_SKY_VOLUME ?
					 CADRE_SOURCE_DIR "/crd/volumes.cadre.dev.yaml" :
					 CADRE_SOURCE_DIR "/crd/trainingjobs.cadre.dev.yaml");
		cr_assert_not_null(schema);
		cr_assert_eq(oapi_validate(schema, obj, &errors), 0, "%s: the CRD refuses it:\n%s",
			     path, buf_str(&errors));
		json_decref(obj);
		schema_checked++;
	}
	buf_release(&errors);
	convert_result_release(&r);
	free(text);
}

static void schema_accepts_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[1024];

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			assert_schema_accepts(path);
		}
	closedir(d);
}

Test(convert, the_crds_schema_accepts_every_converted_fixture_and_fuzz_input)
{
	schema_checked = 0;
	assert_schema_accepts(TESTDATA "/train.sh");
	assert_schema_accepts(TESTDATA "/task.yaml");
	assert_schema_accepts(TESTDATA "/volume.yaml");
	cr_assert_eq(schema_checked, 3);
	schema_accepts_dir(CADRE_SOURCE_DIR "/fuzz/corpus/sbatch");
	schema_accepts_dir(CADRE_SOURCE_DIR "/fuzz/corpus/skypilot");
	schema_accepts_dir(CADRE_SOURCE_DIR "/fuzz/regressions/sbatch");
	schema_accepts_dir(CADRE_SOURCE_DIR "/fuzz/regressions/skypilot");
	cr_assert_geq(schema_checked, 12, "only %zu conversions succeeded", schema_checked);
}

/* The check is not vacuous: what the converter must never make is refused. */
Test(convert, the_crds_schema_refuses_a_converted_job_made_invalid)
{
	struct convert_result r;
	struct buf errors;
	json_t *obj;
	const struct ytree *schema = oapi_crd_schema(CADRE_SOURCE_DIR
						     "/crd/trainingjobs.cadre.dev.yaml");

	cr_assert_not_null(schema);
	cr_assert_eq(convert_text("#!/bin/bash\n#SBATCH -N 2 --export=A=1\necho\n", &r), 0);
	buf_init(&errors, 1 << 20);
	free(r.tj.meta.name);
	r.tj.meta.name = strdup("a-name-of-fifty-one-characters-is-one-too-many-xyzw");
	free(r.tj.spec.envs[0].name);
	r.tj.spec.envs[0].name = strdup("MASTER_ADDR");
	cr_assert_eq(convert_to_json(&r, &obj), 0);
	cr_assert_eq(oapi_validate(schema, obj, &errors), 2, "%s", buf_str(&errors));
	json_decref(obj);
	buf_release(&errors);
	convert_result_release(&r);
}

/*
 * The sweep of issue 30: an array of ten, two at a time, after job 123, in
 * partition gpu, told USR1 90 s before its time limit, its --output off any
 * Volume (so the note says where the output goes).
 */
Test(convert, a_slurm_sweep_matches_its_golden_job)
{
	assert_golden("sweep.sh", "sweep", false);
}

/* SkyPilot's job_recovery: max_restarts_on_errors and recover_on_exit_codes. */
Test(convert, a_skypilot_recovery_matches_its_golden_job)
{
	assert_golden("recover.yaml", "recover", false);
}

/*
 * cadre launch: a task's ephemeral volumes reach the API server as spec.scratch, in the
 * JSON and the YAML alike, and the job they make is valid.
 */
Test(convert, an_ephemeral_volume_is_sent_as_scratch_and_reads_back_valid)
{
	static const char task[] =
		"name: cached\nnum_nodes: 2\n"
		"volumes:\n  /mnt/checkpoints: shared-checkpoints\n"
		"  /mnt/cache:\n    size: 100Gi\n    config:\n      storage_class_name: local-nvme\n"
		"  /scratch:\n    size: 20Gi\n"
		"run: python train.py\n";
	struct convert_result r;
	struct trainingjob tj;
	struct field_errors errs;
	json_t *obj, *scratch;

	cr_assert_eq(convert_text(task, &r), 0);
	assert_emits(&r);
	cr_assert_eq(convert_to_json(&r, &obj), 0);
	scratch = json_object_get(json_object_get(obj, "spec"), "scratch");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(scratch, "/mnt/cache"),
							   "storageClassName")), "local-nvme");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(scratch, "/scratch"),
							   "size")), "20Gi");
	cr_assert_null(json_object_get(json_object_get(scratch, "/scratch"), "storageClassName"));
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(obj, &tj, &errs), 0);
	cr_assert_eq(tj_validate(&tj, &errs), 0);
	cr_assert_eq(tj.spec.n_scratch, 2);
	cr_assert_eq(tj.spec.n_volumes, 1);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(obj);
	convert_result_release(&r);
}
