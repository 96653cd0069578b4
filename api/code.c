#include "api/code.h"

#include "base/err.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static bool lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* "sha256:" and 64 lowercase hex digits. */
static bool digest_ok(const char *digest)
{
	return digest && !strncmp(digest, "sha256:", 7) && strlen(digest) == 71 &&
	       lower_hex(digest + 7, 64);
}

int code_label_value(const char *digest, char out[CODE_LABEL_LEN + 1])
{
	if (!digest_ok(digest))
		return CADRE_EINVAL;
	memcpy(out, digest + 7, CODE_LABEL_LEN);
	out[CODE_LABEL_LEN] = '\0';
	return 0;
}

int code_part_name(const char *digest, uint32_t index, char out[CODE_NAME_SIZE])
{
	char label[CODE_LABEL_LEN + 1];

	if (code_label_value(digest, label) || index >= CODE_MAX_PARTS)
		return CADRE_EINVAL;
	snprintf(out, CODE_NAME_SIZE, "cadre-code-%s-%" PRIu32, label, index);
	return 0;
}

uint64_t code_part_bytes(uint64_t size, uint32_t index)
{
	uint64_t off = (uint64_t)index * CODE_PART_BYTES;

	if (off >= size)
		return 0;
	return size - off < CODE_PART_BYTES ? size - off : CODE_PART_BYTES;
}

uint32_t code_parts_for(size_t len)
{
	size_t n = len / CODE_PART_BYTES + (len % CODE_PART_BYTES != 0);

	/* Saturated: no length wraps around to a small count. */
	return n == 0 ? 1 : n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* A plain decimal string of at most 19 digits (no sign, no spaces) into *out. */
static bool read_count(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	size_t n = 0;

	if (!s || !*s || strlen(s) > 19)
		return false;
	for (; s[n]; n++) {
		if (s[n] < '0' || s[n] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[n] - '0');
	}
	*out = v;
	return true;
}

#define FAIL(...)                                        \
	do {                                             \
		if (why && why_size)                     \
			snprintf(why, why_size, __VA_ARGS__); \
		return CADRE_EPARSE;                     \
	} while (0)

int code_part_read(const json_t *cm, struct code_part *out, char *why, size_t why_size)
{
	const json_t *meta = json_object_get(cm, "metadata");
	const json_t *labels = json_object_get(meta, "labels");
	const json_t *ann = json_object_get(meta, "annotations");
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *label = json_string_value(json_object_get(labels, CODE_LABEL));
	const char *digest = json_string_value(json_object_get(ann, CODE_ANNOTATION_DIGEST));
	const char *kind = json_string_value(json_object_get(ann, CODE_ANNOTATION_KIND));
	char want[CODE_NAME_SIZE];
	uint64_t index, parts, size;

	memset(out, 0, sizeof(*out));
	if (!digest_ok(digest))
		FAIL("annotation %s must be \"sha256:\" and 64 lowercase hex digits",
		     CODE_ANNOTATION_DIGEST);
	if (!label || strlen(label) != CODE_LABEL_LEN || strncmp(label, digest + 7, CODE_LABEL_LEN))
		FAIL("label %s must be the first %d hex digits of %s", CODE_LABEL, CODE_LABEL_LEN,
		     CODE_ANNOTATION_DIGEST);
	if (!read_count(json_string_value(json_object_get(ann, CODE_ANNOTATION_PARTS)), &parts) ||
	    parts < 1 || parts > CODE_MAX_PARTS)
		FAIL("annotation %s must be a number of parts from 1 to %u", CODE_ANNOTATION_PARTS,
		     CODE_MAX_PARTS);
	if (!read_count(json_string_value(json_object_get(ann, CODE_ANNOTATION_PART)), &index) ||
	    index >= parts)
		FAIL("annotation %s must be a part's index below %s", CODE_ANNOTATION_PART,
		     CODE_ANNOTATION_PARTS);
	if (!read_count(json_string_value(json_object_get(ann, CODE_ANNOTATION_SIZE)), &size) ||
	    size > parts * (uint64_t)CODE_PART_BYTES || size <= (parts - 1) * (uint64_t)CODE_PART_BYTES)
		FAIL("annotation %s must be the archive's bytes, which %s parts hold",
		     CODE_ANNOTATION_SIZE, CODE_ANNOTATION_PARTS);
	if (!kind || (strcmp(kind, "dir") && strcmp(kind, "file")))
		FAIL("annotation %s must be \"dir\" or \"file\"", CODE_ANNOTATION_KIND);
	code_part_name(digest, (uint32_t)index, want);
	if (!name || strcmp(name, want))
		FAIL("metadata.name must be %s, the name of part %" PRIu64, want, index);
	memcpy(out->digest, digest, 72);
	out->index = (uint32_t)index;
	out->parts = (uint32_t)parts;
	out->size = size;
	out->file = !strcmp(kind, "file");
	return 0;
}
