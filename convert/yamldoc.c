/*
 * yamldoc.c - loading a SkyPilot file with libyaml and reading its nodes.
 */
#include "convert/yamldoc.h"

#include "base/err.h"
#include "base/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int yaml_fail(struct convert_result *r, const yaml_parser_t *parser)
{
	const yaml_mark_t *mark = parser->problem ? &parser->problem_mark : &parser->context_mark;

	return convert_fail(r, (int)mark->line + 1, (int)mark->column + 1, NULL, "YAML: %s%s%s",
			    parser->problem ? parser->problem : "cannot be read",
			    parser->context ? " " : "", parser->context ? parser->context : "");
}

/*
 * YAML is Unicode text, and libyaml reports a bad byte only at the start
 * of the stream. So: the line and column (in characters) of the first byte
 * that is not UTF-8, in one line. A UTF-16 stream (its byte order mark
 * first) is left to libyaml, which reads it.
 */
static int check_utf8(const struct convert_input *in, struct convert_result *r)
{
	const unsigned char *t = (const unsigned char *)in->text;
	size_t ok = utf8_valid_len(in->text, in->len);
	int line = 1, column = 1;

	if (ok == in->len || (in->len >= 2 && ((t[0] == 0xfe && t[1] == 0xff) ||
						(t[0] == 0xff && t[1] == 0xfe))))
		return 0;
	for (size_t i = 0; i < ok; i++) {
		if (t[i] == '\n') {
			line += line < INT32_MAX;
			column = 1;
		} else if ((t[i] & 0xc0) != 0x80 && column < INT32_MAX) {
			column++;
		}
	}
	return convert_fail(r, line, column, NULL, "byte 0x%02X is not UTF-8, which YAML "
			    "requires (iconv -f latin1 -t utf-8 converts the file)", t[ok]);
}

/* A pair of a mapping, for sorting its keys. */
struct keyed {
	const yaml_node_t *key;
	size_t order;  /* the pair's place in its mapping */
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	size_t n = x->key->data.scalar.length < y->key->data.scalar.length ?
		   x->key->data.scalar.length : y->key->data.scalar.length;
	int c = memcmp(x->key->data.scalar.value, y->key->data.scalar.value, n);

	if (c)
		return c;
	if (x->key->data.scalar.length != y->key->data.scalar.length)
		return x->key->data.scalar.length < y->key->data.scalar.length ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * YAML's keys are unique within a mapping; a second one is refused at its
 * line (the earliest such line in the file), naming the first. Read
 * anyway, it would overwrite what the first one set, or be read twice.
 * Every mapping of the document is in its node list once, aliases or not.
 */
static int check_unique_keys(yaml_document_t *doc, struct convert_result *r)
{
	const yaml_node_t *dup = NULL, *first = NULL;
	struct keyed *keys = NULL;
	size_t cap = 0;

	for (yaml_node_t *m = doc->nodes.start; m < doc->nodes.top; m++) {
		size_t n = 0;

		if (m->type != YAML_MAPPING_NODE)
			continue;
		for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
		     p < m->data.mapping.pairs.top; p++) {
			const yaml_node_t *k = yaml_document_get_node(doc, p->key);

			if (!k || k->type != YAML_SCALAR_NODE)
				continue;
			if (n == cap) {
				struct keyed *more = realloc(keys, (cap ? cap * 2 : 16) * sizeof(*keys));

				if (!more) {
					free(keys);
					return CADRE_ENOMEM;
				}
				keys = more;
				cap = cap ? cap * 2 : 16;
			}
			keys[n].key = k;
			keys[n].order = n;
			n++;
		}
		if (n > 1)
			qsort(keys, n, sizeof(*keys), keyed_cmp);
		for (size_t i = 1; i < n; i++)
			if (!keyed_cmp(&(struct keyed){ keys[i - 1].key, 0 },
				       &(struct keyed){ keys[i].key, 0 }) &&
			    (!dup || keys[i].key->start_mark.index < dup->start_mark.index)) {
				dup = keys[i].key;
				first = keys[i - 1].key;
			}
	}
	free(keys);
	if (!dup)
		return 0;
	/* The key in the message only when it is one printable line. */
	for (size_t i = 0; i < dup->data.scalar.length; i++)
		if (dup->data.scalar.value[i] < 0x20 || dup->data.scalar.value[i] == 0x7f)
			return convert_fail(r, ydoc_line(dup), ydoc_column(dup), NULL,
					    "a key given twice in one mapping (first on line %d)",
					    ydoc_line(first));
	return convert_fail(r, ydoc_line(dup), ydoc_column(dup), NULL,
			    "\"%.80s\" is given twice in one mapping (first on line %d)",
			    (const char *)dup->data.scalar.value, ydoc_line(first));
}

int ydoc_load(const struct convert_input *in, struct convert_result *r, const char *what,
	      yaml_document_t *doc)
{
	yaml_parser_t parser;
	yaml_document_t next;
	yaml_node_t *root;
	int err = 0;

	if (in->len > CONVERT_MAX_INPUT)
		return CADRE_ETOOBIG;
	if ((err = check_utf8(in, r)))
		return err;
	if (!yaml_parser_initialize(&parser))
		return CADRE_ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)in->text, in->len);
	if (!yaml_parser_load(&parser, doc)) {
		err = yaml_fail(r, &parser);
		goto out;
	}
	if ((err = check_unique_keys(doc, r))) {
		yaml_document_delete(doc);
		goto out;
	}
	root = yaml_document_get_root_node(doc);
	if (!root || root->type != YAML_MAPPING_NODE) {
		err = convert_fail(r, root ? ydoc_line(root) : 1, root ? ydoc_column(root) : 0, NULL,
				   "a SkyPilot %s is a mapping of fields (name, ...)", what);
		yaml_document_delete(doc);
		goto out;
	}
	if (!yaml_parser_load(&parser, &next)) {
		err = yaml_fail(r, &parser);
		yaml_document_delete(doc);
		goto out;
	}
	if (yaml_document_get_root_node(&next))
		err = convert_note(&r->notes, (int)next.start_mark.line + 1, NULL,
				   "only the first document is converted: a pipeline of several "
				   "tasks is not supported yet");
	yaml_document_delete(&next);
	if (err)
		yaml_document_delete(doc);
out:
	yaml_parser_delete(&parser);
	return err;
}

int ydoc_line(const yaml_node_t *node)
{
	return (int)node->start_mark.line + 1;
}

int ydoc_column(const yaml_node_t *node)
{
	return (int)node->start_mark.column + 1;
}

const char *ydoc_scalar(const yaml_node_t *node)
{
	return node && node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : NULL;
}

bool ydoc_is_null(const yaml_node_t *node)
{
	const char *s = ydoc_scalar(node);

	if (!node)
		return true;
	if (!s || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !*s || !strcmp(s, "~") || !strcasecmp(s, "null");
}

bool ydoc_text(const yaml_node_t *node, const char **text)
{
	const char *s = ydoc_scalar(node);

	if (!s || ydoc_is_null(node) || strlen(s) != node->data.scalar.length)
		return false;
	*text = s;
	return true;
}

const char *ydoc_key(yaml_document_t *doc, const yaml_node_pair_t *pair)
{
	const char *key = ydoc_scalar(yaml_document_get_node(doc, pair->key));

	return key ? key : "";
}
