/* Metadata, times, field errors, names and paths: the small pieces of api/. */
#include <criterion/criterion.h>

#include <jansson.h>

#include "api/decode.h"
#include "api/fielderr.h"
#include "api/meta.h"
#include "api/name.h"
#include "base/buf.h"
#include "base/err.h"

Test(api_time, parses_rfc3339_in_the_forms_kubernetes_writes)
{
	int64_t t = 0;

	cr_assert_eq(api_time_parse("2026-11-30T01:02:03Z", &t), 0);
	cr_assert_eq(t, 1796000523);
	cr_assert_eq(api_time_parse("2026-11-30T01:02:03.123456Z", &t), 0);
	cr_assert_eq(t, 1796000523, "fractions are dropped");
	cr_assert_eq(api_time_parse("2026-11-30T03:02:03+02:00", &t), 0);
	cr_assert_eq(t, 1796000523);
	cr_assert_eq(api_time_parse("2026-11-29T20:32:03-04:30", &t), 0);
	cr_assert_eq(t, 1796000523);
	cr_assert_eq(api_time_parse("1970-01-01T00:00:00Z", &t), 0);
	cr_assert_eq(t, 0);
	cr_assert_eq(api_time_parse("2024-02-29t12:00:00z", &t), 0);
	cr_assert_eq(api_time_parse("0001-01-01T00:00:00Z", &t), 0);
	cr_assert_eq(t, -62135596800LL);
}

Test(api_time, rejects_malformed_times)
{
	static const char *const bad[] = {
		"", "2026-11-30", "2026-11-30T01:02:03", "2026-11-30 01:02:03Z",
		"2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-11-31T00:00:00Z",
		"2025-02-29T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T01:60:00Z",
		"2026-11-30T01:02:03.Z", "2026-11-30T01:02:03ZZ", "2026-11-30T01:02:03+0200",
		"0000-01-01T00:00:00Z", "26-11-30T01:02:03Z", "2026-11-30T01:02:03+24:00",
		"yesterday",
	};
	int64_t t = 5;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(api_time_parse(bad[i], &t), CADRE_EPARSE, "\"%s\"", bad[i]);
	cr_assert_eq(api_time_parse(NULL, &t), CADRE_EPARSE);
	cr_assert_eq(t, 5);
}

Test(api_time, formats_utc_whole_seconds_and_reads_back)
{
	static const int64_t times[] = {
		0, 1796000523, 951782400 /* 2000-02-29 */, -1, -62135596800LL, 253402300799LL,
		4107542400LL /* 2100-03-01 */,
	};
	char text[32];

	cr_assert_eq(api_time_format(1796000523, text), 0);
	cr_assert_str_eq(text, "2026-11-30T01:02:03Z");
	cr_assert_eq(api_time_format(-1, text), 0);
	cr_assert_str_eq(text, "1969-12-31T23:59:59Z");
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		int64_t back;

		cr_assert_eq(api_time_format(times[i], text), 0);
		cr_assert_eq(api_time_parse(text, &back), 0, "%s", text);
		cr_assert_eq(back, times[i], "%s", text);
	}
	cr_assert_eq(api_time_format(253402300800LL, text), CADRE_EINVAL);
	cr_assert_str_eq(text, "");
	cr_assert_eq(api_time_format(INT64_MIN, text), CADRE_EINVAL);
}

Test(api_time, every_prefix_of_a_time_parses_or_fails_cleanly)
{
	const char *text = "2026-11-30T01:02:03.5+02:00";
	char prefix[64];

	for (size_t n = 0; n <= strlen(text); n++) {
		int64_t t;
		int err;

		memcpy(prefix, text, n);
		prefix[n] = '\0';
		err = api_time_parse(prefix, &t);
		cr_assert_eq(err, n == strlen(text) ? 0 : CADRE_EPARSE, "\"%s\"", prefix);
	}
}

Test(field_errors, joins_every_problem_with_its_path)
{
	struct field_errors errs;
	struct buf out;

	field_errors_init(&errs);
	buf_init(&out, 4096);
	cr_assert_eq(field_errors_add(&errs, "spec.numNodes", "must be >= 1"), 0);
	cr_assert_eq(field_errors_add(&errs, "spec.resources.accelerators",
				      "\"%s\" must look like <type>[:<count>] with count >= 1",
				      "H100:0"), 0);
	cr_assert_eq(field_errors_count(&errs), 2);
	cr_assert_eq(field_errors_join(&errs, &out), 0);
	cr_assert_str_eq(buf_str(&out),
			 "spec.numNodes: must be >= 1; spec.resources.accelerators: "
			 "\"H100:0\" must look like <type>[:<count>] with count >= 1");
	cr_assert_str_eq(field_errors_at(&errs, 1)->path, "spec.resources.accelerators");
	cr_assert_null(field_errors_at(&errs, 2));
	buf_release(&out);
	field_errors_release(&errs);
	cr_assert_eq(field_errors_count(&errs), 0);
}

Test(field_errors, says_a_repeated_problem_once)
{
	struct field_errors errs;

	field_errors_init(&errs);
	field_errors_add(&errs, "metadata.name", "required");
	field_errors_add(&errs, "metadata.name", "required");
	field_errors_add(&errs, "metadata.name", "too long");
	cr_assert_eq(field_errors_count(&errs), 2);
	cr_assert_eq(errs.len, 2);
	field_errors_release(&errs);
}

Test(field_errors, caps_entries_and_lengths_but_counts_everything)
{
	struct field_errors errs;
	struct buf out;
	char path[32], huge[4000];

	field_errors_init(&errs);
	buf_init(&out, 1 << 20);
	for (int i = 0; i < FIELD_ERRORS_MAX + 10; i++) {
		snprintf(path, sizeof(path), "spec.envs.V%d", i);
		cr_assert_eq(field_errors_add(&errs, path, "bad"), 0);
	}
	cr_assert_eq(errs.len, FIELD_ERRORS_MAX);
	cr_assert_eq(field_errors_count(&errs), FIELD_ERRORS_MAX + 10);
	cr_assert_eq(field_errors_join(&errs, &out), 0);
	cr_assert(strstr(buf_str(&out), "; and 10 more") != NULL);
	field_errors_release(&errs);

	memset(huge, 'x', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	/* A multi-byte character straddling the cut must not be split. */
	memcpy(huge + FIELD_ERROR_MESSAGE_MAX - 4, "é", 2);
	cr_assert_eq(field_errors_add(&errs, huge, "%s", huge), 0);
	cr_assert_leq(strlen(field_errors_at(&errs, 0)->path), FIELD_ERROR_PATH_MAX);
	cr_assert_leq(strlen(field_errors_at(&errs, 0)->message), FIELD_ERROR_MESSAGE_MAX);
	{
		json_t *s = json_string(field_errors_at(&errs, 0)->message);

		cr_assert_not_null(s, "a cut message is still valid UTF-8");
		json_decref(s);
	}
	buf_release(&out);
	field_errors_release(&errs);
}

Test(decode_path, quotes_keys_that_are_not_plain_names)
{
	char path[DECODE_PATH_MAX];
	char long_key[1000];

	decode_path(path, sizeof(path), "spec.envs", "BATCH_SIZE");
	cr_assert_str_eq(path, "spec.envs.BATCH_SIZE");
	decode_path(path, sizeof(path), "spec.volumes", "/mnt/ckpt");
	cr_assert_str_eq(path, "spec.volumes[\"/mnt/ckpt\"]");
	decode_path(path, sizeof(path), "spec.envs", "tmp");
	cr_assert_str_eq(path, "spec.envs.tmp");
	decode_path_quoted(path, sizeof(path), "spec.volumes", "tmp");
	cr_assert_str_eq(path, "spec.volumes[\"tmp\"]");
	decode_path(path, sizeof(path), "labels", "a\"b\\c\n");
	cr_assert_str_eq(path, "labels[\"a\\\"b\\\\c\\u000a\"]");
	decode_path(path, sizeof(path), "", "apiVersion");
	cr_assert_str_eq(path, "apiVersion");
	decode_path_index(path, sizeof(path), "spec.secretEnvs", 3);
	cr_assert_str_eq(path, "spec.secretEnvs[3]");

	/* A key longer than the buffer is cut, without splitting a character. */
	for (size_t i = 0; i + 2 < sizeof(long_key); i += 2)
		memcpy(long_key + i, "é", 2);
	long_key[sizeof(long_key) - 2] = '\0';
	decode_path(path, sizeof(path), "spec.volumes", long_key);
	cr_assert_lt(strlen(path), sizeof(path));
	{
		json_t *s = json_string(path);

		cr_assert_not_null(s);
		json_decref(s);
	}
}

Test(meta, reads_the_fields_cadre_uses)
{
	const char *text =
		"{\"name\": \"llama\", \"namespace\": \"research\", \"uid\": \"u-1\","
		" \"resourceVersion\": \"42\", \"generation\": 3,"
		" \"creationTimestamp\": \"2026-11-30T01:02:03Z\","
		" \"deletionTimestamp\": \"2026-11-30T02:00:00Z\","
		" \"labels\": {\"team\": \"nlp\"}, \"annotations\": {\"a\": \"b\"},"
		" \"finalizers\": [\"cadre.dev/volume-protection\"],"
		" \"managedFields\": [{\"manager\": \"kubectl\"}]}";
	struct object_meta meta;
	struct field_errors errs;
	json_t *json = json_loads(text, 0, NULL);

	field_errors_init(&errs);
	cr_assert_eq(meta_parse(json, &meta, &errs), 0);
	cr_assert_str_eq(meta.name, "llama");
	cr_assert_str_eq(meta.namespace, "research");
	cr_assert_str_eq(meta.uid, "u-1");
	cr_assert_str_eq(meta.resource_version, "42");
	cr_assert_eq(meta.generation, 3);
	cr_assert_eq(meta.creation_timestamp, 1796000523);
	cr_assert(meta.deleting);
	cr_assert_eq(meta.deletion_timestamp, 1796004000);
	cr_assert_str_eq(meta_label(&meta, "team"), "nlp");
	cr_assert_null(meta_label(&meta, "absent"));
	cr_assert_str_eq(meta_annotation(&meta, "a"), "b");
	cr_assert(meta_has_finalizer(&meta, "cadre.dev/volume-protection"));
	cr_assert_not(meta_has_finalizer(&meta, "other"));
	meta_release(&meta);
	json_decref(json);
	field_errors_release(&errs);
}

Test(meta, missing_metadata_or_name_is_a_field_error_and_maps_are_never_null)
{
	struct object_meta meta;
	struct field_errors errs;
	json_t *empty = json_object();

	field_errors_init(&errs);
	cr_assert_eq(meta_parse(NULL, &meta, &errs), CADRE_EINVAL);
	cr_assert_not_null(field_errors_find(&errs, "metadata"));
	cr_assert_not_null(meta.labels);
	cr_assert_not_null(meta.annotations);
	meta_release(&meta);
	cr_assert_eq(meta_parse(empty, &meta, &errs), CADRE_EINVAL);
	cr_assert_not_null(field_errors_find(&errs, "metadata.name"));
	cr_assert_not(meta.deleting);
	meta_release(&meta);
	json_decref(empty);
	field_errors_release(&errs);
}

Test(meta, wrong_types_become_field_errors)
{
	const char *text =
		"{\"name\": 7, \"generation\": \"3\", \"creationTimestamp\": 5,"
		" \"labels\": {\"a\": 1}, \"annotations\": [], \"finalizers\": [1, \"ok\"]}";
	struct object_meta meta;
	struct field_errors errs;
	json_t *json = json_loads(text, 0, NULL);

	field_errors_init(&errs);
	cr_assert_eq(meta_parse(json, &meta, &errs), CADRE_EINVAL);
	cr_assert_not_null(field_errors_find(&errs, "metadata.name"));
	cr_assert_not_null(field_errors_find(&errs, "metadata.generation"));
	cr_assert_not_null(field_errors_find(&errs, "metadata.creationTimestamp"));
	cr_assert_not_null(field_errors_find(&errs, "metadata.labels.a"));
	cr_assert_not_null(field_errors_find(&errs, "metadata.annotations"));
	cr_assert_not_null(field_errors_find(&errs, "metadata.finalizers[0]"));
	cr_assert_eq(meta.n_finalizers, 1);
	cr_assert_str_eq(meta.finalizers[0], "ok");
	meta_release(&meta);
	json_decref(json);
	field_errors_release(&errs);
}

Test(name, kubernetes_name_rules)
{
	cr_assert(name_is_dns1035_label("llama-pretrain"));
	cr_assert_not(name_is_dns1035_label("7llama"));
	cr_assert(name_is_dns1123_label("7llama"));
	cr_assert_not(name_is_dns1123_label("Llama"));
	cr_assert_not(name_is_dns1123_label("llama-"));
	cr_assert_not(name_is_dns1123_label(""));
	cr_assert(name_is_dns1123_subdomain("hf.tokens-1"));
	cr_assert_not(name_is_dns1123_subdomain("hf..tokens"));
	cr_assert_not(name_is_dns1123_subdomain(".hf"));
	cr_assert(name_is_c_identifier("_BATCH_SIZE2"));
	cr_assert_not(name_is_c_identifier("2BATCH"));
	cr_assert_not(name_is_c_identifier("BATCH-SIZE"));
	cr_assert_not(name_is_c_identifier(""));
	cr_assert(name_is_qualified("nvidia.com/gpu"));
	cr_assert(name_is_qualified("app"));
	cr_assert_not(name_is_qualified("/gpu"));
	cr_assert_not(name_is_qualified("nvidia.com/"));
	cr_assert_not(name_is_qualified("a/b/c"));
	cr_assert(name_is_label_value(""));
	cr_assert(name_is_label_value("v1.2_x"));
	cr_assert_not(name_is_label_value("-v"));
	cr_assert(name_is_config_key("token.txt"));
	cr_assert_not(name_is_config_key(".."));
	cr_assert_not(name_is_config_key("a/b"));
	cr_assert(name_is_mount_path("/mnt/ckpt"));
	cr_assert(name_is_mount_path("/mnt/ckpt/"));
	cr_assert_not(name_is_mount_path("/"));
	cr_assert_not(name_is_mount_path("mnt"));
	cr_assert_not(name_is_mount_path("/mnt/../etc"));
	cr_assert_not(name_is_mount_path("/mnt//x"));
	cr_assert_not(name_is_mount_path("/mnt/./x"));
	cr_assert_not(name_is_mount_path(NULL));
}

Test(meta, an_object_is_owned_by_a_uid_its_owner_references_name)
{
	json_t *obj = json_pack("{s:{s:s, s:[{s:s, s:s}, {s:s, s:s}]}}", "metadata", "name", "llama",
				"ownerReferences", "kind", "Deployment", "uid", "d-1",
				"kind", "TrainingJob", "uid", "tj-1");
	json_t *bare = json_pack("{s:{s:s}}", "metadata", "name", "llama");

	cr_assert(meta_owned_by(obj, "tj-1"), "any of the references counts");
	cr_assert(meta_owned_by(obj, "d-1"));
	cr_assert_not(meta_owned_by(obj, "tj-2"));
	cr_assert_not(meta_owned_by(obj, ""), "an empty uid is nobody's");
	cr_assert_not(meta_owned_by(obj, NULL));
	cr_assert_not(meta_owned_by(bare, "tj-1"));
	cr_assert_not(meta_owned_by(NULL, "tj-1"));
	json_decref(obj);
	json_decref(bare);
}
