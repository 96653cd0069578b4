#include "controller/trainingjob/refusals.h"
#include "base/err.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	struct entry *next;
	char *job;
	char *uid;
	struct refusal what;
};

/*
 * A plain list: an entry exists only while a job's creates are being
 * refused, which is a handful of jobs at a time on any cluster.
 */
struct refusals {
	pthread_mutex_t lock;
	struct entry *head;
};

struct refusals *refusals_new(void)
{
	struct refusals *r = calloc(1, sizeof(*r));

	if (r)
		pthread_mutex_init(&r->lock, NULL);
	return r;
}

static void entry_free(struct entry *e)
{
	free(e->job);
	free(e->uid);
	free(e);
}

void refusals_free(struct refusals *r)
{
	struct entry *e, *next;

	if (!r)
		return;
	for (e = r->head; e; e = next) {
		next = e->next;
		entry_free(e);
	}
	pthread_mutex_destroy(&r->lock);
	free(r);
}

bool refusal_is_final(const struct kube_status *st)
{
	return st->http_status == 400 || st->http_status == 403 || st->http_status == 422;
}

/* The link that points at job's entry (or at the list's end); lock held. */
static struct entry **find(struct refusals *r, const char *job)
{
	struct entry **link = &r->head;

	while (*link && strcmp((*link)->job, job))
		link = &(*link)->next;
	return link;
}

static void unlink_entry(struct entry **link)
{
	struct entry *e = *link;

	*link = e->next;
	entry_free(e);
}

int refusals_record(struct refusals *r, const char *job, const char *uid, const char *pod,
		    int rank, int attempt, const struct kube_status *st, int64_t now)
{
	struct entry **link, *e;
	int64_t first = now;

	if (!r)
		return 0;
	pthread_mutex_lock(&r->lock);
	link = find(r, job);
	e = *link;
	if (e && (strcmp(e->uid, uid ? uid : "") || e->what.attempt != attempt)) {
		unlink_entry(link);
		e = NULL;
	}
	if (e) {
		first = e->what.first_time;
	} else {
		e = calloc(1, sizeof(*e));
		if (e) {
			e->job = strdup(job);
			e->uid = strdup(uid ? uid : "");
		}
		if (!e || !e->job || !e->uid) {
			if (e)
				entry_free(e);
			pthread_mutex_unlock(&r->lock);
			return CADRE_ENOMEM;
		}
		e->next = r->head;
		r->head = e;
	}
	snprintf(e->what.pod, sizeof(e->what.pod), "%s", pod);
	snprintf(e->what.reason, sizeof(e->what.reason), "%s", st->reason);
	snprintf(e->what.message, sizeof(e->what.message), "%s", st->message);
	e->what.rank = rank;
	e->what.attempt = attempt;
	e->what.first_time = first;
	e->what.time = now;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

void refusals_created(struct refusals *r, const char *job, const char *pod)
{
	struct entry **link;

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	link = find(r, job);
	if (*link && !strcmp((*link)->what.pod, pod))
		unlink_entry(link);
	pthread_mutex_unlock(&r->lock);
}

bool refusals_get(struct refusals *r, const char *job, const char *uid, int attempt,
		  struct refusal *out)
{
	struct entry **link;
	bool found = false;

	if (!r)
		return false;
	pthread_mutex_lock(&r->lock);
	link = find(r, job);
	if (*link) {
		if (!strcmp((*link)->uid, uid ? uid : "") && (*link)->what.attempt == attempt) {
			*out = (*link)->what;
			found = true;
		} else {
			unlink_entry(link);
		}
	}
	pthread_mutex_unlock(&r->lock);
	return found;
}

void refusals_forget(struct refusals *r, const char *job)
{
	struct entry **link;

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	link = find(r, job);
	if (*link)
		unlink_entry(link);
	pthread_mutex_unlock(&r->lock);
}
