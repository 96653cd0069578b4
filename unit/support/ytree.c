#include "unit/support/ytree.h"

#include <errno.h>
#include <yaml.h>

#include "base/buf.h"
#include "base/err.h"

/* Repository manifests are small; this only stops a runaway file from filling memory. */
#define YTREE_MAX_FILE (16u << 20)
/* Deeper than any manifest nests; bounds the recursion on hostile input. */
#define YTREE_MAX_DEPTH 256

static struct ytree *node_new(enum ytree_kind kind, size_t line)
{
	struct ytree *t = calloc(1, sizeof(*t));

	if (t) {
		t->kind = kind;
		t->line = line;
	}
	return t;
}

void ytree_free(struct ytree *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->len; i++) {
		if (t->keys)
			free(t->keys[i]);
		ytree_free(t->items[i]);
	}
	free(t->keys);
	free(t->items);
	free(t->value);
	free(t);
}

/* Append child (and key, for a mapping) to t; takes ownership of both, even on error. */
static int node_push(struct ytree *t, char *key, struct ytree *child)
{
	struct ytree **items;
	char **keys;
	int rc = 0;

	items = realloc(t->items, (t->len + 1) * sizeof(*items));
	if (!items) {
		rc = CADRE_ENOMEM;
		goto out;
	}
	t->items = items;
	if (t->kind == YTREE_MAP) {
		keys = realloc(t->keys, (t->len + 1) * sizeof(*keys));
		if (!keys) {
			rc = CADRE_ENOMEM;
			goto out;
		}
		t->keys = keys;
		t->keys[t->len] = key;
		key = NULL;
	}
	t->items[t->len++] = child;
	child = NULL;
out:
	free(key);
	ytree_free(child);
	return rc;
}

static int parser_next(yaml_parser_t *parser, yaml_event_t *event)
{
	if (!yaml_parser_parse(parser, event))
		return CADRE_EPARSE;
	return 0;
}

/*
 * Build the node that starts with event (already parsed; consumed here) and everything
 * under it. On success *out owns the node.
 */
static int parse_node(yaml_parser_t *parser, yaml_event_t *event, int depth,
		      struct ytree **out)
{
	struct ytree *t = NULL;
	yaml_event_t child_event;
	size_t line = event->start_mark.line + 1;
	int rc = 0;

	*out = NULL;
	if (depth > YTREE_MAX_DEPTH) {
		rc = CADRE_EPARSE;
		goto out;
	}
	switch (event->type) {
	case YAML_SCALAR_EVENT:
		if (event->data.scalar.anchor) {
			rc = CADRE_EPARSE;
			goto out;
		}
		t = node_new(YTREE_SCALAR, line);
		if (!t) {
			rc = CADRE_ENOMEM;
			goto out;
		}
		t->value = strndup((const char *)event->data.scalar.value,
				   event->data.scalar.length);
		if (!t->value) {
			rc = CADRE_ENOMEM;
			goto out;
		}
		t->quoted = event->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		int is_map = event->type == YAML_MAPPING_START_EVENT;
		yaml_event_type_t end = is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
		const yaml_char_t *anchor = is_map ? event->data.mapping_start.anchor
						   : event->data.sequence_start.anchor;

		if (anchor) {
			rc = CADRE_EPARSE;
			goto out;
		}
		t = node_new(is_map ? YTREE_MAP : YTREE_SEQ, line);
		if (!t) {
			rc = CADRE_ENOMEM;
			goto out;
		}
		for (;;) {
			struct ytree *key_node = NULL, *child = NULL;
			char *key = NULL;

			rc = parser_next(parser, &child_event);
			if (rc < 0)
				goto out;
			if (child_event.type == end) {
				yaml_event_delete(&child_event);
				break;
			}
			if (is_map) {
				rc = parse_node(parser, &child_event, depth + 1, &key_node);
				if (rc < 0)
					goto out;
				if (key_node->kind != YTREE_SCALAR) {
					ytree_free(key_node);
					rc = CADRE_EPARSE;
					goto out;
				}
				key = key_node->value;
				key_node->value = NULL;
				ytree_free(key_node);
				rc = parser_next(parser, &child_event);
				if (rc < 0) {
					free(key);
					goto out;
				}
			}
			/* A key twice: the API server's YAML reader refuses it, so this does too. */
			for (size_t i = 0; key && i < t->len; i++)
				if (t->keys[i] && !strcmp(t->keys[i], key)) {
					free(key);
					yaml_event_delete(&child_event);
					rc = CADRE_EPARSE;
					goto out;
				}
			rc = parse_node(parser, &child_event, depth + 1, &child);
			if (rc < 0) {
				free(key);
				goto out;
			}
			rc = node_push(t, key, child);
			if (rc < 0)
				goto out;
		}
		break;
	}
	default:
		/* An alias, or an event that cannot start a node. */
		rc = CADRE_EPARSE;
		goto out;
	}
	*out = t;
	t = NULL;
out:
	yaml_event_delete(event);
	ytree_free(t);
	return rc;
}

int ytree_parse(const char *text, size_t len, struct ytree **out)
{
	yaml_parser_t parser;
	yaml_event_t event;
	struct ytree *root = NULL;
	int rc = 0;

	*out = NULL;
	if (!yaml_parser_initialize(&parser))
		return CADRE_ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);

	/* Skip STREAM-START and DOCUMENT-START; an empty stream has no document. */
	for (;;) {
		rc = parser_next(&parser, &event);
		if (rc < 0)
			goto out;
		if (event.type == YAML_STREAM_START_EVENT ||
		    event.type == YAML_DOCUMENT_START_EVENT) {
			yaml_event_delete(&event);
			continue;
		}
		break;
	}
	if (event.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&event);
		root = node_new(YTREE_MAP, 1);
		if (!root)
			rc = CADRE_ENOMEM;
		goto out;
	}
	rc = parse_node(&parser, &event, 0, &root);
out:
	yaml_parser_delete(&parser);
	if (rc < 0) {
		ytree_free(root);
		return rc;
	}
	*out = root;
	return 0;
}

int ytree_load(const char *path, struct ytree **out)
{
	struct buf text;
	char chunk[8192];
	FILE *f;
	size_t n;
	int rc = 0;

	*out = NULL;
	buf_init(&text, YTREE_MAX_FILE);
	f = fopen(path, "rb");
	if (!f) {
		rc = CADRE_EIO;
		goto out;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		rc = buf_add(&text, chunk, n);
		if (rc < 0)
			goto out;
	}
	if (ferror(f)) {
		rc = CADRE_EIO;
		goto out;
	}
	rc = ytree_parse(buf_str(&text), text.len, out);
out:
	if (f)
		fclose(f);
	buf_release(&text);
	return rc;
}

struct ytree *ytree_get(const struct ytree *t, const char *key)
{
	size_t i;

	if (!t || t->kind != YTREE_MAP)
		return NULL;
	for (i = 0; i < t->len; i++)
		if (strcmp(t->keys[i], key) == 0)
			return t->items[i];
	return NULL;
}

struct ytree *ytree_at(const struct ytree *t, size_t i)
{
	if (!t || t->kind != YTREE_SEQ || i >= t->len)
		return NULL;
	return t->items[i];
}

struct ytree *ytree_path(const struct ytree *t, const char *path)
{
	const struct ytree *cur = t;
	const char *seg = path;
	char key[256];

	while (cur && *seg) {
		const char *dot = strchr(seg, '.');
		size_t n = dot ? (size_t)(dot - seg) : strlen(seg);

		if (n == 0 || n >= sizeof(key))
			return NULL;
		memcpy(key, seg, n);
		key[n] = '\0';
		if (key[0] == '[' && key[n - 1] == ']') {
			char *end;
			unsigned long long i;

			errno = 0;
			i = strtoull(key + 1, &end, 10);
			if (errno || end != key + n - 1 || end == key + 1)
				return NULL;
			cur = ytree_at(cur, (size_t)i);
		} else {
			cur = ytree_get(cur, key);
		}
		seg = dot ? dot + 1 : seg + n;
	}
	return (struct ytree *)cur;
}

const char *ytree_str(const struct ytree *t)
{
	if (!t || t->kind != YTREE_SCALAR)
		return NULL;
	return t->value;
}
