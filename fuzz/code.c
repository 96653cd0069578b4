/*
 * code.c - a code bundle's ConfigMap as the controller and the CLI find it
 * in a namespace (api/code.h): anyone who may create a ConfigMap may have
 * written it. The bytes are JSON; an object is read as a whole ConfigMap,
 * and again as the metadata of one (so a seed of either shape reaches the
 * checks past the digest).
 *
 * Properties: a refusal says why, on one line, the same whether the caller
 * asks for the reason or not; a part that is read is one the writer could
 * have written: index < parts <= CODE_MAX_PARTS, a "sha256:<64 lowercase
 * hex>" digest whose label and part name are the object's, a size its
 * parts hold (code_parts_for agrees), the kind it said; and the metadata
 * cli/code.c writes for that part reads back as the same part.
 */
#include "fuzz/fuzz.h"

#include "api/code.h"
#include "base/err.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

static bool lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool same_part(const struct code_part *a, const struct code_part *b)
{
	return !strcmp(a->digest, b->digest) && a->index == b->index && a->parts == b->parts &&
	       a->size == b->size && a->file == b->file;
}

/* The metadata cli/code.c's part_object writes for part; a new reference. */
static json_t *written(const struct code_part *part)
{
	char name[CODE_NAME_SIZE], label[CODE_LABEL_LEN + 1], num[16], parts[16], size[24];

	if (code_part_name(part->digest, part->index, name) ||
	    code_label_value(part->digest, label))
		return NULL;
	snprintf(num, sizeof(num), "%" PRIu32, part->index);
	snprintf(parts, sizeof(parts), "%" PRIu32, part->parts);
	snprintf(size, sizeof(size), "%" PRIu64, part->size);
	return json_pack("{s:{s:s, s:{s:s}, s:{s:s, s:s, s:s, s:s, s:s}}}",
			 "metadata", "name", name, "labels", CODE_LABEL, label,
			 "annotations", CODE_ANNOTATION_DIGEST, part->digest,
			 CODE_ANNOTATION_PART, num, CODE_ANNOTATION_PARTS, parts,
			 CODE_ANNOTATION_SIZE, size, CODE_ANNOTATION_KIND,
			 part->file ? "file" : "dir");
}

static void check_read(const json_t *cm)
{
	const json_t *meta = json_object_get(cm, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *label = json_string_value(json_object_get(json_object_get(meta, "labels"),
							      CODE_LABEL));
	const char *kind = json_string_value(json_object_get(json_object_get(meta, "annotations"),
							     CODE_ANNOTATION_KIND));
	char why[256], tiny[4], want[CODE_NAME_SIZE];
	struct code_part part, again;
	json_t *back;
	int err;

	memset(why, 0x55, sizeof(why));
	err = code_part_read(cm, &part, why, sizeof(why));
	FUZZ_CHECK(err == 0 || err == CADRE_EPARSE, "code_part_read returned %d", err);
	FUZZ_CHECK(code_part_read(cm, &again, NULL, 0) == err,
		   "the answer depends on whether a reason is asked for");
	memset(tiny, 0x55, sizeof(tiny));
	FUZZ_CHECK(code_part_read(cm, &again, tiny, sizeof(tiny)) == err,
		   "a short reason buffer changes the answer");
	if (err) {
		FUZZ_CHECK(memchr(why, '\0', sizeof(why)) && why[0], "a refusal without a reason");
		FUZZ_CHECK(!strchr(why, '\n'), "a reason of several lines: %s", why);
		FUZZ_CHECK(tiny[sizeof(tiny) - 1] == '\0', "a short reason is not cut and ended");
		return;
	}
	FUZZ_CHECK(part.parts >= 1 && part.parts <= CODE_MAX_PARTS, "%" PRIu32 " parts",
		   part.parts);
	FUZZ_CHECK(part.index < part.parts, "part %" PRIu32 " of %" PRIu32, part.index,
		   part.parts);
	FUZZ_CHECK(strlen(part.digest) == 71 && !strncmp(part.digest, "sha256:", 7) &&
		   lower_hex(part.digest + 7, 64), "the digest \"%s\"", part.digest);
	FUZZ_CHECK(part.size > (uint64_t)(part.parts - 1) * CODE_PART_BYTES &&
		   part.size <= (uint64_t)part.parts * CODE_PART_BYTES &&
		   code_parts_for((size_t)part.size) == part.parts,
		   "%" PRIu64 " bytes in %" PRIu32 " parts", part.size, part.parts);
	FUZZ_CHECK(label && !strncmp(label, part.digest + 7, CODE_LABEL_LEN) &&
		   strlen(label) == CODE_LABEL_LEN, "the label is not the digest's");
	FUZZ_CHECK(!code_part_name(part.digest, part.index, want) && name && !strcmp(name, want),
		   "the part is named %s, not %s", name ? name : "(nothing)", want);
	FUZZ_CHECK(kind && !strcmp(kind, part.file ? "file" : "dir"), "the kind %s read as %s",
		   kind ? kind : "(none)", part.file ? "file" : "dir");
	FUZZ_CHECK(same_part(&part, &again), "two reads of one object differ");
	back = written(&part);
	FUZZ_CHECK(back, "the part read cannot be written back");
	FUZZ_CHECK(!code_part_read(back, &again, why, sizeof(why)) && same_part(&part, &again),
		   "the part as the CLI writes it does not read back the same: %s", why);
	json_decref(back);
}

int fuzz_code(const uint8_t *data, size_t size)
{
	json_t *obj = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	json_t *wrapped;

	if (!obj)
		return 0;
	check_read(obj);
	if (json_is_object(obj)) {
		wrapped = json_pack("{s:s, s:s, s:O}", "apiVersion", "v1", "kind", "ConfigMap",
				    "metadata", obj);
		FUZZ_CHECK(wrapped, "out of memory");
		check_read(wrapped);
		json_decref(wrapped);
	}
	json_decref(obj);
	return 0;
}
