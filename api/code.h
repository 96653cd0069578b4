/*
 * code.h - a code bundle as it lives in a namespace (docs/code.md): the
 * names, labels and annotations of its ConfigMaps, and what one of them
 * says of the bundle. The CLI writes them (cadre push, sbatch, launch), the
 * controller reads them; both spell them through this header.
 *
 * A bundle of digest "sha256:<64 hex>" is parts ConfigMaps named
 * "cadre-code-<first 40 hex>-<index>", index 0 .. parts-1, each immutable,
 * with the bytes index*CODE_PART_BYTES .. of the archive in
 * binaryData[CODE_PART_KEY], labelled CODE_LABEL = the first 40 hex (a label
 * value holds 63 at most) and annotated with the whole digest, the part's
 * index, the number of parts, the archive's size and its kind (a directory
 * or one file). Pure; thread-safe.
 */
#ifndef CADRE_API_CODE_H
#define CADRE_API_CODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/labels.h"

#define CODE_LABEL CADRE_KEY_PREFIX "code"
#define CODE_ANNOTATION_DIGEST CADRE_KEY_PREFIX "code-digest"
#define CODE_ANNOTATION_PART CADRE_KEY_PREFIX "code-part"
#define CODE_ANNOTATION_PARTS CADRE_KEY_PREFIX "code-parts"
#define CODE_ANNOTATION_SIZE CADRE_KEY_PREFIX "code-size"
#define CODE_ANNOTATION_KIND CADRE_KEY_PREFIX "code-kind"   /* "dir" or "file" */
#define CODE_PART_KEY "part"
/* A ConfigMap's data may hold 1 MiB (the API server's MaxSecretSize). */
#define CODE_PART_BYTES (1u << 20)
/* 128 MiB of parts: the CLI's hard ceiling (cli/bundle.h) and the most a reader accepts. */
#define CODE_MAX_PARTS 128u
/* The label value: the digest's first 40 hex digits. */
#define CODE_LABEL_LEN 40
/* "cadre-code-" 40 hex "-" and up to 3 digits, and the NUL. */
#define CODE_NAME_SIZE 64

/* The label value of digest ("sha256:<64 hex>") into out; 0 or CADRE_EINVAL. */
int code_label_value(const char *digest, char out[CODE_LABEL_LEN + 1]);

/* The name of part index of digest's bundle into out; 0 or CADRE_EINVAL. */
int code_part_name(const char *digest, uint32_t index, char out[CODE_NAME_SIZE]);

/* What one ConfigMap of a bundle says of it, from its metadata alone. */
struct code_part {
	char digest[72];   /* "sha256:<64 hex>" */
	uint32_t index;    /* this part */
	uint32_t parts;    /* how many the bundle has, 1 .. CODE_MAX_PARTS */
	uint64_t size;     /* the whole archive's bytes */
	bool file;         /* a bundle of one file, unpacked at its path */
};

/*
 * Read cm's metadata (a ConfigMap, whole or trimmed to metadata; borrowed)
 * into out. 0, or CADRE_EPARSE when a label or annotation is missing or
 * malformed, disagrees with another (the label is not the digest's, the
 * name is not the part's) or is out of range (index >= parts, parts over
 * CODE_MAX_PARTS, a size parts cannot hold); why (why_size bytes) then
 * names the first problem. Input from anyone who may create a ConfigMap:
 * never trusted, never crashes (fuzz/code.c).
 */
int code_part_read(const json_t *cm, struct code_part *out, char *why, size_t why_size);

/* How many of an archive's size bytes part index holds (0 past its end). */
uint64_t code_part_bytes(uint64_t size, uint32_t index);

/* How many parts an archive of len bytes takes (at least 1). */
uint32_t code_parts_for(size_t len);

#endif
