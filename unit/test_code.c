/*
 * test_code.c - api/code.c: the names and labels of a code bundle's
 * ConfigMaps, and what one ConfigMap's metadata says of its bundle. A part
 * is read from anyone's ConfigMap, so each field it may get wrong is refused
 * with a message that names that field (fuzz/code.c tries the rest).
 */
#include <criterion/criterion.h>

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "api/code.h"
#include "base/err.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

#define HEX "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define DIGEST "sha256:" HEX
#define LABEL "0123456789abcdef0123456789abcdef01234567"
#define OTHER_DIGEST "sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define MIB (1u << 20)

/*
 * A sound part as cli/code.c writes it: part 1 of the 3 of a directory
 * bundle of 2 MiB and 5 bytes. A new reference.
 */
static json_t *sound_part(void)
{
	json_t *cm = json_pack("{s:s, s:s, s:{s:s, s:{s:s}, s:{s:s, s:s, s:s, s:s, s:s}},"
			       " s:b, s:{s:s}}",
			       "apiVersion", "v1", "kind", "ConfigMap",
			       "metadata", "name", "cadre-code-" LABEL "-1",
			       "labels", CODE_LABEL, LABEL,
			       "annotations", CODE_ANNOTATION_DIGEST, DIGEST,
			       CODE_ANNOTATION_PART, "1", CODE_ANNOTATION_PARTS, "3",
			       CODE_ANNOTATION_SIZE, "2097157", CODE_ANNOTATION_KIND, "dir",
			       "immutable", 1, "binaryData", CODE_PART_KEY, "H4sIAAAAAAAA");

	cr_assert_not_null(cm);
	return cm;
}

static json_t *metadata(json_t *cm)
{
	return json_object_get(cm, "metadata");
}

static json_t *annotations(json_t *cm)
{
	return json_object_get(metadata(cm), "annotations");
}

static json_t *labels(json_t *cm)
{
	return json_object_get(metadata(cm), "labels");
}

/* Set key of obj to the string value, or remove it when value is NULL. */
static void set_or_remove(json_t *obj, const char *key, const char *value)
{
	if (value)
		cr_assert_eq(json_object_set_new(obj, key, json_string(value)), 0);
	else
		json_object_del(obj, key);
}

/* cm is refused, and the message is about the field: it starts with want. */
static void assert_refused(json_t *cm, const char *want, const char *what)
{
	struct code_part part;
	char why[256] = "";

	cr_assert_eq(code_part_read(cm, &part, why, sizeof(why)), CADRE_EPARSE,
		     "%s was accepted", what);
	cr_assert_eq(strncmp(why, want, strlen(want)), 0, "%s: the message \"%s\" is not about %s",
		     what, why, want);
	cr_assert_null(strchr(why, '\n'), "%s: the message is one line: %s", what, why);
}

/* The sound part with annotation key set to value (NULL: without it) is refused for field. */
static void assert_annotation_refused(const char *key, const char *value, const char *field)
{
	json_t *cm = sound_part();
	char what[160];

	snprintf(what, sizeof(what), "%s: \"%s\"", key, value ? value : "(none)");
	set_or_remove(annotations(cm), key, value);
	assert_refused(cm, field, what);
	json_decref(cm);
}

#define DIGEST_FIELD "annotation " CODE_ANNOTATION_DIGEST " must"
#define LABEL_FIELD "label " CODE_LABEL " must"
#define PARTS_FIELD "annotation " CODE_ANNOTATION_PARTS " must"
#define PART_FIELD "annotation " CODE_ANNOTATION_PART " must"
#define SIZE_FIELD "annotation " CODE_ANNOTATION_SIZE " must"
#define KIND_FIELD "annotation " CODE_ANNOTATION_KIND " must"

Test(code, reads_what_a_sound_part_says_of_its_bundle)
{
	json_t *cm = sound_part();
	struct code_part part;
	char why[256] = "untouched";

	cr_assert_eq(code_part_read(cm, &part, why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(part.digest, DIGEST);
	cr_assert_eq(part.index, 1);
	cr_assert_eq(part.parts, 3);
	cr_assert_eq(part.size, 2097157);
	cr_assert_not(part.file);
	json_decref(cm);
}

Test(code, reads_a_file_bundles_part_from_its_metadata_alone)
{
	json_t *cm = sound_part();
	json_t *trimmed;
	struct code_part part;

	set_or_remove(annotations(cm), CODE_ANNOTATION_KIND, "file");
	trimmed = json_pack("{s:O}", "metadata", metadata(cm));
	cr_assert_eq(code_part_read(trimmed, &part, NULL, 0), 0);
	cr_assert(part.file);
	cr_assert_eq(part.index, 1);
	json_decref(trimmed);
	json_decref(cm);
}

/* The largest bundle a reader takes: its last part, 127 MiB and a byte. */
Test(code, reads_the_last_part_of_a_bundle_of_128_parts)
{
	json_t *cm = sound_part();
	struct code_part part;
	char why[256] = "";

	set_or_remove(annotations(cm), CODE_ANNOTATION_PARTS, "128");
	set_or_remove(annotations(cm), CODE_ANNOTATION_PART, "127");
	set_or_remove(annotations(cm), CODE_ANNOTATION_SIZE, "134217728");
	set_or_remove(metadata(cm), "name", "cadre-code-" LABEL "-127");
	cr_assert_eq(code_part_read(cm, &part, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(part.index, 127);
	cr_assert_eq(part.parts, CODE_MAX_PARTS);
	cr_assert_eq(part.size, 128ull * MIB);
	json_decref(cm);
}

Test(code, refuses_a_digest_that_is_not_sha256_and_64_lowercase_hex)
{
	static const char *const bad[] = {
		NULL, "", "sha256:", "sha256:" LABEL,
		"sha256:" HEX "0",                                                   /* 65 digits */
		"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde", /* 63 */
		"sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
		"sha256:0123456789abcdeg0123456789abcdef0123456789abcdef0123456789abcdef",
		"sha512:" HEX, "SHA256:" HEX, HEX, " sha256:" HEX, "sha256:" HEX " ",
	};

	for (size_t i = 0; i < COUNT(bad); i++)
		assert_annotation_refused(CODE_ANNOTATION_DIGEST, bad[i], DIGEST_FIELD);
}

Test(code, refuses_a_digest_that_is_no_string)
{
	json_t *cm = sound_part();

	json_object_set_new(annotations(cm), CODE_ANNOTATION_DIGEST, json_integer(256));
	assert_refused(cm, DIGEST_FIELD, "a number for the digest");
	json_decref(cm);
}

Test(code, refuses_a_label_that_is_not_the_digests_first_40_hex_digits)
{
	static const char *const bad[] = {
		NULL, "", "fedcba9876543210fedcba9876543210fedcba98",
		"0123456789abcdef0123456789abcdef0123456",     /* 39 */
		LABEL "8",                                     /* 41 */
		HEX,
	};

	for (size_t i = 0; i < COUNT(bad); i++) {
		json_t *cm = sound_part();

		set_or_remove(labels(cm), CODE_LABEL, bad[i]);
		assert_refused(cm, LABEL_FIELD, bad[i] ? bad[i] : "no label");
		json_decref(cm);
	}
}

/* The digest is another bundle's, the label and name still this one's. */
Test(code, refuses_a_digest_its_label_does_not_match)
{
	assert_annotation_refused(CODE_ANNOTATION_DIGEST, OTHER_DIGEST, LABEL_FIELD);
}

Test(code, refuses_a_number_of_parts_that_is_0_over_128_or_not_a_plain_number)
{
	static const char *const bad[] = {
		NULL, "", "0", "129", "4294967297", "-1", "+3", " 3", "3 ", "3x", "0x3", "3.0",
		"99999999999999999999",
	};

	for (size_t i = 0; i < COUNT(bad); i++)
		assert_annotation_refused(CODE_ANNOTATION_PARTS, bad[i], PARTS_FIELD);
}

Test(code, refuses_a_number_of_parts_given_as_a_json_number)
{
	json_t *cm = sound_part();

	json_object_set_new(annotations(cm), CODE_ANNOTATION_PARTS, json_integer(3));
	assert_refused(cm, PARTS_FIELD, "parts as a number");
	json_decref(cm);
}

Test(code, refuses_an_index_that_is_not_below_the_number_of_parts)
{
	static const char *const bad[] = { NULL, "", "3", "4", "128", "-1", "1x", "18446744073709551617" };

	for (size_t i = 0; i < COUNT(bad); i++)
		assert_annotation_refused(CODE_ANNOTATION_PART, bad[i], PART_FIELD);
}

/* Three parts hold more than 2 MiB and at most 3 MiB: any other size is not this bundle's. */
Test(code, refuses_a_size_its_number_of_parts_cannot_hold)
{
	static const char *const bad[] = {
		NULL, "", "0", "1", "2097152", "3145729", "134217728", "-5", "2097157B",
	};

	for (size_t i = 0; i < COUNT(bad); i++)
		assert_annotation_refused(CODE_ANNOTATION_SIZE, bad[i], SIZE_FIELD);
}

Test(code, accepts_the_sizes_at_the_edges_of_its_number_of_parts)
{
	static const char *const good[] = { "2097153", "3145728" };

	for (size_t i = 0; i < COUNT(good); i++) {
		json_t *cm = sound_part();
		struct code_part part;
		char why[256] = "";

		set_or_remove(annotations(cm), CODE_ANNOTATION_SIZE, good[i]);
		cr_assert_eq(code_part_read(cm, &part, why, sizeof(why)), 0, "%s: %s", good[i], why);
		json_decref(cm);
	}
}

Test(code, refuses_a_kind_that_is_not_dir_or_file)
{
	static const char *const bad[] = { NULL, "", "Dir", "FILE", "files", "dir ", "directory" };

	for (size_t i = 0; i < COUNT(bad); i++)
		assert_annotation_refused(CODE_ANNOTATION_KIND, bad[i], KIND_FIELD);
}

/* The name says which part the ConfigMap is: it must be this part's of this bundle. */
Test(code, refuses_a_name_that_is_not_the_parts_own)
{
	static const char *const bad[] = {
		NULL, "", "cadre-code-" LABEL "-0", "cadre-code-" LABEL "-01", "cadre-code-" LABEL "-1x",
		"cadre-code-fedcba9876543210fedcba9876543210fedcba98-1", "cadre-code-" LABEL,
		"my-config",
	};

	for (size_t i = 0; i < COUNT(bad); i++) {
		json_t *cm = sound_part();
		struct code_part part;
		char why[256] = "";

		set_or_remove(metadata(cm), "name", bad[i]);
		cr_assert_eq(code_part_read(cm, &part, why, sizeof(why)), CADRE_EPARSE,
			     "the name \"%s\" was accepted", bad[i] ? bad[i] : "(none)");
		cr_assert_str_eq(why, "metadata.name must be cadre-code-" LABEL "-1, the name of part 1",
				 "the message names the field and the part's name");
		json_decref(cm);
	}
}

/* A ConfigMap with several faults is refused for the first, in the order of the header. */
Test(code, names_the_first_problem_only)
{
	json_t *cm = sound_part();

	set_or_remove(annotations(cm), CODE_ANNOTATION_KIND, "tarball");
	set_or_remove(annotations(cm), CODE_ANNOTATION_PART, "7");
	assert_refused(cm, PART_FIELD, "index and kind both wrong");
	json_decref(cm);
}

Test(code, refuses_what_is_no_configmap)
{
	static const char *const texts[] = {
		"{}", "[]", "\"cadre-code\"", "{\"metadata\": []}", "{\"metadata\": {\"annotations\": 3}}",
	};
	struct code_part part;
	char why[256];

	for (size_t i = 0; i < COUNT(texts); i++) {
		json_t *v = json_loads(texts[i], JSON_DECODE_ANY, NULL);

		cr_assert_not_null(v, "%s", texts[i]);
		why[0] = '\0';
		cr_assert_eq(code_part_read(v, &part, why, sizeof(why)), CADRE_EPARSE, "%s", texts[i]);
		cr_assert_gt(strlen(why), 0, "%s: no message", texts[i]);
		json_decref(v);
	}
	cr_assert_eq(code_part_read(NULL, &part, NULL, 0), CADRE_EPARSE);
}

/* A caller that wants no message, or a short one, gets the same answer, cut to its buffer. */
Test(code, writes_the_message_only_into_the_buffer_it_is_given)
{
	json_t *cm = sound_part();
	struct code_part part;
	char why[8];

	set_or_remove(annotations(cm), CODE_ANNOTATION_KIND, "zip");
	cr_assert_eq(code_part_read(cm, &part, NULL, 0), CADRE_EPARSE);
	memset(why, 'x', sizeof(why));
	cr_assert_eq(code_part_read(cm, &part, why, 1), CADRE_EPARSE);
	cr_assert_eq(why[0], '\0');
	cr_assert_eq(why[1], 'x');
	cr_assert_eq(code_part_read(cm, &part, why, sizeof(why)), CADRE_EPARSE);
	cr_assert_str_eq(why, "annotat");
	json_decref(cm);
}

Test(code, label_value_is_the_digests_first_40_hex_digits)
{
	char label[CODE_LABEL_LEN + 1];

	cr_assert_eq(code_label_value(DIGEST, label), 0);
	cr_assert_str_eq(label, LABEL);
	cr_assert_eq(code_label_value("sha256:" LABEL, label), CADRE_EINVAL);
	cr_assert_eq(code_label_value("sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef"
				      "0123456789abcdef", label), CADRE_EINVAL);
	cr_assert_eq(code_label_value(HEX, label), CADRE_EINVAL);
	cr_assert_eq(code_label_value(NULL, label), CADRE_EINVAL);
}

Test(code, part_names_run_from_0_to_127)
{
	char name[CODE_NAME_SIZE];

	cr_assert_eq(code_part_name(DIGEST, 0, name), 0);
	cr_assert_str_eq(name, "cadre-code-" LABEL "-0");
	cr_assert_eq(code_part_name(DIGEST, 127, name), 0);
	cr_assert_str_eq(name, "cadre-code-" LABEL "-127");
	/* A ConfigMap's name is a DNS subdomain; this one even fits a label's 63. */
	cr_assert_leq(strlen(name), 63);
	cr_assert_eq(code_part_name(DIGEST, CODE_MAX_PARTS, name), CADRE_EINVAL);
	cr_assert_eq(code_part_name(DIGEST, UINT32_MAX, name), CADRE_EINVAL);
	cr_assert_eq(code_part_name("sha1:" LABEL, 0, name), CADRE_EINVAL);
}

Test(code, parts_for_a_size_are_whole_mebibytes_and_at_least_one)
{
	cr_assert_eq(code_parts_for(0), 1);
	cr_assert_eq(code_parts_for(1), 1);
	cr_assert_eq(code_parts_for(MIB - 1), 1);
	cr_assert_eq(code_parts_for(MIB), 1);
	cr_assert_eq(code_parts_for(MIB + 1), 2);
	cr_assert_eq(code_parts_for(2 * MIB), 2);
	cr_assert_eq(code_parts_for((size_t)CODE_MAX_PARTS * MIB), CODE_MAX_PARTS);
	cr_assert_eq(code_parts_for((size_t)CODE_MAX_PARTS * MIB + 1), CODE_MAX_PARTS + 1);
}

/*
 * What the writer's names and counts say, the reader takes back: every part
 * of bundles of several sizes, named by code_part_name and counted by
 * code_parts_for, as cli/code.c writes them.
 */
Test(code, every_part_the_writer_names_reads_back)
{
	static const uint64_t sizes[] = { 1, MIB, MIB + 1, 5ull * MIB + 3, 128ull * MIB };

	for (size_t s = 0; s < COUNT(sizes); s++) {
		uint32_t parts = code_parts_for((size_t)sizes[s]);

		for (uint32_t i = 0; i < parts; i++) {
			char name[CODE_NAME_SIZE], label[CODE_LABEL_LEN + 1], num[16], count[16];
			char size[24], why[256] = "";
			struct code_part part;
			json_t *cm;

			cr_assert_eq(code_part_name(DIGEST, i, name), 0);
			cr_assert_eq(code_label_value(DIGEST, label), 0);
			snprintf(num, sizeof(num), "%u", i);
			snprintf(count, sizeof(count), "%u", parts);
			snprintf(size, sizeof(size), "%llu", (unsigned long long)sizes[s]);
			cm = json_pack("{s:{s:s, s:{s:s}, s:{s:s, s:s, s:s, s:s, s:s}}}",
				       "metadata", "name", name, "labels", CODE_LABEL, label,
				       "annotations", CODE_ANNOTATION_DIGEST, DIGEST,
				       CODE_ANNOTATION_PART, num, CODE_ANNOTATION_PARTS, count,
				       CODE_ANNOTATION_SIZE, size, CODE_ANNOTATION_KIND,
				       i % 2 ? "file" : "dir");
			cr_assert_not_null(cm);
			cr_assert_eq(code_part_read(cm, &part, why, sizeof(why)), 0,
				     "size %s part %u: %s", size, i, why);
			cr_assert_eq(part.index, i);
			cr_assert_eq(part.parts, parts);
			cr_assert_eq(part.size, sizes[s]);
			cr_assert_eq(part.file, i % 2 == 1);
			json_decref(cm);
		}
	}
}
