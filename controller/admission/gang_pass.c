/*
 * gang_pass.c - the verdicts of the last admission pass (gang_pass.h), sorted
 * by key for a binary search; every string copied.
 */
#include "controller/admission/gang_pass.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"

struct gang_pass {
	uint64_t epoch, made_ms;
	struct gang_pass_entry *entries;
	size_t n;
};

static void entry_release(struct gang_pass_entry *e)
{
	free((char *)e->key);
	free((char *)e->uid);
	free((char *)e->resource_version);
	free((char *)e->reason);
	free((char *)e->message);
	for (int i = 0; e->nodes && i < e->n_nodes; i++)
		free((char *)e->nodes[i]);
	free((void *)e->nodes);
}

void gang_pass_free(struct gang_pass *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		entry_release(&p->entries[i]);
	free(p->entries);
	free(p);
}

/* A copy of s, or "" for NULL; false when out of memory. */
static bool copy(const char **out, const char *s)
{
	*out = strdup(s ? s : "");
	return *out != NULL;
}

static bool entry_copy(struct gang_pass_entry *out, const struct gang_pass_entry *in)
{
	const char **nodes;

	*out = (struct gang_pass_entry){ .attempt = in->attempt, .admit = in->admit };
	if (!copy(&out->key, in->key) || !copy(&out->uid, in->uid) ||
	    !copy(&out->resource_version, in->resource_version) ||
	    !copy(&out->reason, in->reason) || !copy(&out->message, in->message))
		return false;
	if (!in->n_nodes)
		return true;
	nodes = calloc((size_t)in->n_nodes, sizeof(*nodes));
	out->nodes = nodes;
	if (!nodes)
		return false;
	for (int i = 0; i < in->n_nodes; i++, out->n_nodes++)
		if (!copy(&nodes[i], in->nodes[i]))
			return false;
	return true;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct gang_pass_entry *)a)->key,
		      ((const struct gang_pass_entry *)b)->key);
}

int gang_pass_set(struct gang_pass **p, uint64_t epoch, uint64_t now_ms,
		  const struct gang_pass_entry *entries, size_t n)
{
	struct gang_pass *next = calloc(1, sizeof(*next));

	gang_pass_free(*p);
	*p = NULL;
	if (!next || !(next->entries = calloc(n + 1, sizeof(*next->entries)))) {
		free(next);
		return CADRE_ENOMEM;
	}
	next->epoch = epoch;
	next->made_ms = now_ms;
	for (; next->n < n; next->n++)
		if (!entry_copy(&next->entries[next->n], &entries[next->n])) {
			next->n++;
			gang_pass_free(next);
			return CADRE_ENOMEM;
		}
	qsort(next->entries, next->n, sizeof(*next->entries), by_key);
	*p = next;
	return 0;
}

static bool same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

const struct gang_pass_entry *gang_pass_find(const struct gang_pass *p, uint64_t epoch,
					     uint64_t now_ms, const char *key, const char *uid,
					     const char *resource_version, int attempt)
{
	struct gang_pass_entry want = { .key = key };
	const struct gang_pass_entry *e;

	if (!p || p->epoch != epoch || now_ms < p->made_ms ||
	    now_ms - p->made_ms >= GANG_PASS_TTL_MS || !key)
		return NULL;
	e = bsearch(&want, p->entries, p->n, sizeof(*p->entries), by_key);
	/* A job the pass read without a resourceVersion is never taken for another version. */
	if (!e || !*e->resource_version || !same(e->uid, uid) ||
	    !same(e->resource_version, resource_version) || e->attempt != attempt)
		return NULL;
	return e;
}
