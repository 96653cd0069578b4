#include "controller/manager/expect.h"
#include "base/err.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum expect_kind { EXPECT_CREATE, EXPECT_DELETE, EXPECT_STATUS, EXPECT_QUIET };

struct expect_item {
	struct expect_item *next;
	enum expect_kind kind;
	uint64_t deadline_ms;
	char *job;
	char *name;
};

/*
 * A plain list: the items pending at any moment are the creates and deletes
 * of gangs in flight, a few hundred at most, and each lives for the moments
 * between a request and its watch event.
 */
struct expect {
	pthread_mutex_t lock;
	uint64_t timeout_ms;
	struct expect_item *head;
};

struct expect *expect_new(uint64_t timeout_ms)
{
	struct expect *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	pthread_mutex_init(&e->lock, NULL);
	e->timeout_ms = timeout_ms;
	return e;
}

static void item_free(struct expect_item *it)
{
	free(it->job);
	free(it->name);
	free(it);
}

void expect_free(struct expect *e)
{
	struct expect_item *it, *next;

	if (!e)
		return;
	for (it = e->head; it; it = next) {
		next = it->next;
		item_free(it);
	}
	pthread_mutex_destroy(&e->lock);
	free(e);
}

/* Add an item that lives until deadline_ms. */
static int expect_add_until(struct expect *e, enum expect_kind kind, const char *job,
			    const char *name, uint64_t deadline_ms)
{
	struct expect_item *it = calloc(1, sizeof(*it));

	if (!it)
		return CADRE_ENOMEM;
	it->kind = kind;
	it->deadline_ms = deadline_ms;
	it->job = strdup(job);
	it->name = strdup(name);
	if (!it->job || !it->name) {
		item_free(it);
		return CADRE_ENOMEM;
	}
	pthread_mutex_lock(&e->lock);
	it->next = e->head;
	e->head = it;
	pthread_mutex_unlock(&e->lock);
	return 0;
}

static int expect_add(struct expect *e, enum expect_kind kind, const char *job,
		      const char *name, uint64_t now_ms)
{
	return expect_add_until(e, kind, job, name, now_ms + e->timeout_ms);
}

int expect_create(struct expect *e, const char *job, const char *name, uint64_t now_ms)
{
	return expect_add(e, EXPECT_CREATE, job, name, now_ms);
}

int expect_delete(struct expect *e, const char *job, const char *name, uint64_t now_ms)
{
	return expect_add(e, EXPECT_DELETE, job, name, now_ms);
}

/* Remove items of job matching kind and name (NULL: any); lock held. */
static void remove_matching(struct expect *e, const char *job, const char *name,
			    int kind)
{
	struct expect_item **link = &e->head, *it;

	while ((it = *link)) {
		if (!strcmp(it->job, job) && (!name || !strcmp(it->name, name)) &&
		    (kind < 0 || it->kind == (enum expect_kind)kind)) {
			*link = it->next;
			item_free(it);
		} else {
			link = &it->next;
		}
	}
}

void expect_observed_create(struct expect *e, const char *job, const char *name)
{
	pthread_mutex_lock(&e->lock);
	remove_matching(e, job, name, EXPECT_CREATE);
	pthread_mutex_unlock(&e->lock);
}

void expect_observed_delete(struct expect *e, const char *job, const char *name)
{
	pthread_mutex_lock(&e->lock);
	remove_matching(e, job, name, EXPECT_DELETE);
	pthread_mutex_unlock(&e->lock);
}

bool expect_satisfied(struct expect *e, const char *job, uint64_t now_ms)
{
	struct expect_item **link, *it;
	bool satisfied = true;

	pthread_mutex_lock(&e->lock);
	link = &e->head;
	while ((it = *link)) {
		if (!strcmp(it->job, job) && it->kind != EXPECT_STATUS) {
			if (now_ms >= it->deadline_ms) {
				/* Expired: the event was lost; trust the cache again. */
				*link = it->next;
				item_free(it);
				continue;
			}
			/* A quiet time holds nothing back (expect.h). */
			if (it->kind != EXPECT_QUIET)
				satisfied = false;
		}
		link = &it->next;
	}
	pthread_mutex_unlock(&e->lock);
	return satisfied;
}

/* Whether an unexpired item of kind for name under job is pending. */
static bool pending(struct expect *e, enum expect_kind kind, const char *job, const char *name,
		    uint64_t now_ms)
{
	bool found = false;

	pthread_mutex_lock(&e->lock);
	for (struct expect_item *it = e->head; it && !found; it = it->next)
		found = it->kind == kind && now_ms < it->deadline_ms &&
			!strcmp(it->job, job) && !strcmp(it->name, name);
	pthread_mutex_unlock(&e->lock);
	return found;
}

bool expect_deleting(struct expect *e, const char *job, const char *name, uint64_t now_ms)
{
	return pending(e, EXPECT_DELETE, job, name, now_ms);
}

int expect_status_written(struct expect *e, const char *job, const char *rv, uint64_t now_ms)
{
	if (!rv)
		return 0;
	pthread_mutex_lock(&e->lock);
	remove_matching(e, job, NULL, EXPECT_STATUS);
	pthread_mutex_unlock(&e->lock);
	return expect_add(e, EXPECT_STATUS, job, rv, now_ms);
}

bool expect_status_fresh(struct expect *e, const char *job, const char *cached_rv,
			 uint64_t now_ms)
{
	struct expect_item **link, *it;
	bool fresh = true;

	pthread_mutex_lock(&e->lock);
	link = &e->head;
	while ((it = *link)) {
		if (it->kind == EXPECT_STATUS && !strcmp(it->job, job)) {
			if (now_ms < it->deadline_ms && cached_rv && !strcmp(it->name, cached_rv)) {
				fresh = false;
				break;
			}
			/* The cache moved past our write (or it expired): forget it. */
			*link = it->next;
			item_free(it);
			continue;
		}
		link = &it->next;
	}
	pthread_mutex_unlock(&e->lock);
	return fresh;
}

int expect_quiet(struct expect *e, const char *job, uint64_t until_ms)
{
	pthread_mutex_lock(&e->lock);
	remove_matching(e, job, NULL, EXPECT_QUIET);
	pthread_mutex_unlock(&e->lock);
	return expect_add_until(e, EXPECT_QUIET, job, "", until_ms);
}

uint64_t expect_quiet_until(struct expect *e, const char *job, uint64_t now_ms)
{
	struct expect_item **link = &e->head, *it;
	uint64_t until = 0;

	pthread_mutex_lock(&e->lock);
	while ((it = *link)) {
		if (it->kind == EXPECT_QUIET && !strcmp(it->job, job)) {
			if (now_ms < it->deadline_ms) {
				until = it->deadline_ms;
				break;
			}
			*link = it->next;
			item_free(it);
			continue;
		}
		link = &it->next;
	}
	pthread_mutex_unlock(&e->lock);
	return until;
}

void expect_forget(struct expect *e, const char *job)
{
	pthread_mutex_lock(&e->lock);
	remove_matching(e, job, NULL, -1);
	pthread_mutex_unlock(&e->lock);
}
