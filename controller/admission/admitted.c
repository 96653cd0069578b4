/*
 * admitted.c - admissions not yet seen in the cache (admitted.h). Few
 * records are ever held at once (a burst of admissions, each gone as soon
 * as its status comes back through the watch), so a flat array serves.
 */
#include "controller/admission/admitted.h"
#include "base/err.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct record {
	char *key;
	char *uid;
	char *message;
	int attempt;
	uint64_t at_ms;
};

struct admitted {
	pthread_mutex_t lock;
	struct record *records;
	size_t n, cap;
	uint64_t ttl_ms;
};

struct admitted *admitted_new(uint64_t ttl_ms)
{
	struct admitted *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	pthread_mutex_init(&a->lock, NULL);
	a->ttl_ms = ttl_ms;
	return a;
}

static void record_release(struct record *r)
{
	free(r->key);
	free(r->uid);
	free(r->message);
}

/* Remove records[i]; the last one takes its place. Lock held. */
static void drop(struct admitted *a, size_t i)
{
	record_release(&a->records[i]);
	a->records[i] = a->records[--a->n];
}

static long find(struct admitted *a, const char *key)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->records[i].key, key))
			return (long)i;
	return -1;
}

void admitted_free(struct admitted *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		record_release(&a->records[i]);
	free(a->records);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

int admitted_record(struct admitted *a, const char *key, const char *uid, int attempt,
		    const char *message, uint64_t now_ms)
{
	struct record r = { strdup(key), strdup(uid ? uid : ""), strdup(message ? message : ""),
			    attempt, now_ms };
	int err = 0;
	long i;

	if (!r.key || !r.uid || !r.message) {
		record_release(&r);
		return CADRE_ENOMEM;
	}
	pthread_mutex_lock(&a->lock);
	i = find(a, key);
	if (i >= 0) {
		record_release(&a->records[i]);
		a->records[i] = r;
	} else if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		struct record *more = realloc(a->records, cap * sizeof(*more));

		if (more) {
			a->records = more;
			a->cap = cap;
			a->records[a->n++] = r;
		} else {
			record_release(&r);
			err = CADRE_ENOMEM;
		}
	} else {
		a->records[a->n++] = r;
	}
	pthread_mutex_unlock(&a->lock);
	return err;
}

bool admitted_pending(struct admitted *a, const char *key, const char *uid, int attempt,
		      uint64_t now_ms, char **message)
{
	bool live = false;
	long i;

	pthread_mutex_lock(&a->lock);
	i = find(a, key);
	if (i >= 0) {
		const struct record *r = &a->records[i];

		live = r->attempt == attempt && !strcmp(r->uid, uid ? uid : "") &&
		       now_ms < r->at_ms + a->ttl_ms;
		if (!live)
			drop(a, (size_t)i);
		else if (message)
			*message = strdup(r->message);
	}
	pthread_mutex_unlock(&a->lock);
	return live;
}

void admitted_forget(struct admitted *a, const char *key)
{
	long i;

	pthread_mutex_lock(&a->lock);
	i = find(a, key);
	if (i >= 0)
		drop(a, (size_t)i);
	pthread_mutex_unlock(&a->lock);
}

size_t admitted_len(struct admitted *a)
{
	size_t n;

	pthread_mutex_lock(&a->lock);
	n = a->n;
	pthread_mutex_unlock(&a->lock);
	return n;
}
