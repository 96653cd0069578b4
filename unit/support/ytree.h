/*
 * ytree.h - a YAML document as a plain tree, for tests that read repository files.
 *
 * Tests of manifests (CRDs, samples) want to ask "what is at spec.versions[0].schema"
 * without an event loop; libyaml only gives events. ytree builds a small tree of
 * scalars, mappings and sequences from one document. It is for trusted files in the
 * repository, not network input: it keeps everything in memory and refuses anchors and
 * aliases (CADRE_EPARSE) rather than expanding them. Not thread-safe per tree; distinct
 * trees are independent.
 */
#ifndef CADRE_UNIT_YTREE_H
#define CADRE_UNIT_YTREE_H

#include <stddef.h>

enum ytree_kind { YTREE_SCALAR, YTREE_MAP, YTREE_SEQ };

struct ytree {
	enum ytree_kind kind;
	char *value;            /* YTREE_SCALAR: the text, NUL-terminated; else NULL */
	int quoted;             /* YTREE_SCALAR: written in quotes or as a block, so never a number, bool or null */
	size_t len;             /* YTREE_MAP: pairs; YTREE_SEQ: items */
	char **keys;            /* YTREE_MAP: len keys (scalar keys only) */
	struct ytree **items;   /* YTREE_MAP: len values; YTREE_SEQ: len items */
	size_t line;            /* 1-based line where the node starts, for messages */
};

/*
 * Parse the first document of text (len bytes) into *out, which the caller frees with
 * ytree_free(). An empty stream gives an empty mapping. Returns 0, CADRE_EPARSE for
 * malformed YAML, a non-scalar mapping key, an anchor or an alias, or CADRE_ENOMEM.
 * On error *out is NULL.
 */
int ytree_parse(const char *text, size_t len, struct ytree **out);

/* Read the file at path and parse it as ytree_parse() does; CADRE_EIO if unreadable. */
int ytree_load(const char *path, struct ytree **out);

/* Free a tree and everything under it. NULL is allowed. */
void ytree_free(struct ytree *t);

/* The value of key in a mapping; NULL when t is NULL, not a mapping, or has no key. Borrowed. */
struct ytree *ytree_get(const struct ytree *t, const char *key);

/* Item i of a sequence; NULL when t is NULL, not a sequence, or too short. Borrowed. */
struct ytree *ytree_at(const struct ytree *t, size_t i);

/*
 * Follow a dotted path of mapping keys, where a segment "[N]" (N decimal) indexes a
 * sequence: "spec.versions.[0].name". Keys that contain dots cannot be reached this way;
 * use ytree_get(). NULL when any step is missing. Borrowed.
 */
struct ytree *ytree_path(const struct ytree *t, const char *path);

/* The text of a scalar, or NULL when t is NULL or not a scalar. Borrowed. */
const char *ytree_str(const struct ytree *t);

#endif
