/*
 * json.c - a converted object as JSON for the API server: the YAML that
 * convert_emit_yaml writes, read back with libyaml. emit.c quotes every
 * string YAML would read as another type, so a plain scalar that reads as
 * an integer is one, and every other scalar is a string.
 */
#include "convert/convert.h"

#include "base/buf.h"
#include "base/err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* A plain scalar of digits (with a leading '-') is an integer. */
static json_t *scalar_json(const yaml_node_t *n)
{
	const char *s = (const char *)n->data.scalar.value;
	char *end;
	long long v;

	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && *s &&
	    strspn(s + (*s == '-'), "0123456789") == strlen(s + (*s == '-'))) {
		errno = 0;
		v = strtoll(s, &end, 10);
		if (!errno && !*end)
			return json_integer(v);
	}
	return json_stringn(s, n->data.scalar.length);
}

/* The walk follows emit.c's output: no aliases, a bounded depth. */
static json_t *node_json(yaml_document_t *doc, const yaml_node_t *n, int depth)
{
	json_t *j = NULL;

	if (!n || depth > 32)
		return NULL;
	if (n->type == YAML_SCALAR_NODE)
		return scalar_json(n);
	if (n->type == YAML_SEQUENCE_NODE) {
		j = json_array();
		for (yaml_node_item_t *i = n->data.sequence.items.start;
		     j && i < n->data.sequence.items.top; i++)
			if (json_array_append_new(j, node_json(doc, yaml_document_get_node(doc, *i),
							       depth + 1)))
				goto fail;
		return j;
	}
	j = json_object();
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     j && p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(doc, p->key);

		if (!k || k->type != YAML_SCALAR_NODE ||
		    json_object_set_new(j, (const char *)k->data.scalar.value,
					node_json(doc, yaml_document_get_node(doc, p->value),
						  depth + 1)))
			goto fail;
	}
	return j;
fail:
	json_decref(j);
	return NULL;
}

int convert_to_json(const struct convert_result *r, json_t **out)
{
	struct buf yaml;
	yaml_parser_t parser;
	yaml_document_t doc;
	int err;

	*out = NULL;
	buf_init(&yaml, (size_t)64 << 20);
	if ((err = convert_emit_yaml(r, &yaml)))
		goto out;
	err = CADRE_ENOMEM;
	if (!yaml_parser_initialize(&parser))
		goto out;
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml.data, yaml.len);
	if (yaml_parser_load(&parser, &doc)) {
		*out = node_json(&doc, yaml_document_get_root_node(&doc), 0);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	if (*out)
		err = 0;
out:
	buf_release(&yaml);
	return err;
}
