/*
 * yamldoc.h - internal to convert/: a YAML document loaded with libyaml,
 * and typed reads from it that keep every node's line for messages.
 *
 * The walk only ever follows known keys a fixed depth down, so aliases
 * (which libyaml resolves to shared nodes) cannot make it loop.
 */
#ifndef CADRE_CONVERT_YAMLDOC_H
#define CADRE_CONVERT_YAMLDOC_H

#include <stdbool.h>
#include <yaml.h>

#include "convert/convert.h"

/*
 * Load the first document of in into doc. A YAML error, an empty file or a
 * top level that is not a mapping is r->error (with line and column) and
 * CADRE_EPARSE; a second document is a note. On 0 the caller deletes doc
 * with yaml_document_delete.
 */
int ydoc_load(const struct convert_input *in, struct convert_result *r, const char *what,
	      yaml_document_t *doc);

/* 1-based line and column of a node. */
int ydoc_line(const yaml_node_t *node);
int ydoc_column(const yaml_node_t *node);

/* A scalar's text (borrowed, NUL-terminated) or NULL for other nodes. */
const char *ydoc_scalar(const yaml_node_t *node);

/* A plain scalar that YAML reads as null: "", "~", "null" in any case. */
bool ydoc_is_null(const yaml_node_t *node);

/* The text of a scalar that is a YAML string, number or bool; false for maps, lists and null. */
bool ydoc_text(const yaml_node_t *node, const char **text);

/* The key of a mapping pair as text; "" for a key that is not a scalar. */
const char *ydoc_key(yaml_document_t *doc, const yaml_node_pair_t *pair);

#endif
