/*
 * jobmemo.c - what the caches cannot show yet, per job (jobmemo.h). Few
 * entries are ever held at once (a burst of admissions, each gone as soon
 * as its status comes back through the watch; the jobs whose creates are
 * being refused), so a plain list serves.
 */
#include "controller/manager/jobmemo.h"
#include "base/err.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	struct entry *next;
	char *key;
	char *uid;
	int attempt;
	bool admitted;                   /* the admission payload is set */
	struct jobmemo_admission admission;
	uint64_t admitted_ms;
	bool refused;                    /* the refusal payload is set */
	struct refusal refusal;
};

struct jobmemo {
	pthread_mutex_t lock;
	struct entry *head;
	uint64_t ttl_ms;
};

struct jobmemo *jobmemo_new(uint64_t admission_ttl_ms)
{
	struct jobmemo *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	t->ttl_ms = admission_ttl_ms;
	return t;
}

void jobmemo_admission_release(struct jobmemo_admission *a)
{
	if (!a)
		return;
	free(a->message);
	for (int i = 0; i < a->n_nodes && a->nodes; i++)
		free(a->nodes[i]);
	free(a->nodes);
	for (size_t i = 0; i < a->n_preempt; i++)
		free(a->preempt[i]);
	free(a->preempt);
	free(a->preempt_attempt);
	memset(a, 0, sizeof(*a));
}

static void entry_free(struct entry *e)
{
	jobmemo_admission_release(&e->admission);
	free(e->key);
	free(e->uid);
	free(e);
}

void jobmemo_free(struct jobmemo *t)
{
	struct entry *e, *next;

	if (!t)
		return;
	for (e = t->head; e; e = next) {
		next = e->next;
		entry_free(e);
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* The link that points at key's entry (or at the list's end); lock held. */
static struct entry **find(struct jobmemo *t, const char *key)
{
	struct entry **link = &t->head;

	while (*link && strcmp((*link)->key, key))
		link = &(*link)->next;
	return link;
}

static void unlink_entry(struct entry **link)
{
	struct entry *e = *link;

	*link = e->next;
	entry_free(e);
}

/* An entry with neither payload goes; lock held. */
static void unlink_if_empty(struct entry **link)
{
	if (*link && !(*link)->admitted && !(*link)->refused)
		unlink_entry(link);
}

static bool same(const struct entry *e, const char *uid, int attempt)
{
	return !strcmp(e->uid, uid ? uid : "") && e->attempt == attempt;
}

/*
 * key's entry for (uid, attempt), made when absent; one of another uid or
 * attempt is replaced. NULL when out of memory. Lock held.
 */
static struct entry *entry_for(struct jobmemo *t, const char *key, const char *uid, int attempt)
{
	struct entry **link = find(t, key), *e = *link;

	if (e && same(e, uid, attempt))
		return e;
	if (e)
		unlink_entry(link);
	e = calloc(1, sizeof(*e));
	if (e) {
		e->key = strdup(key);
		e->uid = strdup(uid ? uid : "");
		e->attempt = attempt;
	}
	if (!e || !e->key || !e->uid) {
		if (e)
			entry_free(e);
		return NULL;
	}
	e->next = t->head;
	t->head = e;
	return e;
}

/*
 * key's entry when it is of (uid, attempt); one of another is dropped.
 * Lock held.
 */
static struct entry **entry_of(struct jobmemo *t, const char *key, const char *uid,
			       int attempt)
{
	struct entry **link = find(t, key);

	if (*link && !same(*link, uid, attempt)) {
		unlink_entry(link);
		return NULL;
	}
	return *link ? link : NULL;
}

void jobmemo_forget(struct jobmemo *t, const char *key)
{
	struct entry **link;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	link = find(t, key);
	if (*link)
		unlink_entry(link);
	pthread_mutex_unlock(&t->lock);
}

size_t jobmemo_len(struct jobmemo *t)
{
	size_t n = 0;

	if (!t)
		return 0;
	pthread_mutex_lock(&t->lock);
	for (const struct entry *e = t->head; e; e = e->next)
		n++;
	pthread_mutex_unlock(&t->lock);
	return n;
}

int jobmemo_admission_set(struct jobmemo_admission *out, const char *message,
			  const char *const *nodes, int n)
{
	memset(out, 0, sizeof(*out));
	out->message = strdup(message ? message : "");
	out->nodes = calloc(n > 0 ? (size_t)n : 1, sizeof(*out->nodes));
	if (!out->message || !out->nodes)
		goto nomem;
	for (; out->n_nodes < n; out->n_nodes++)
		if (!(out->nodes[out->n_nodes] = strdup(nodes[out->n_nodes] ?
							 nodes[out->n_nodes] : "")))
			goto nomem;
	return 0;
nomem:
	jobmemo_admission_release(out);
	return CADRE_ENOMEM;
}

int jobmemo_admit(struct jobmemo *t, const char *key, const char *uid, int attempt,
		  const char *message, const char *const *nodes, int n_nodes, uint64_t now_ms)
{
	struct jobmemo_admission copy;
	struct entry *e;

	if (!t)
		return 0;
	if (jobmemo_admission_set(&copy, message, nodes, n_nodes))
		return CADRE_ENOMEM;
	pthread_mutex_lock(&t->lock);
	e = entry_for(t, key, uid, attempt);
	if (e) {
		jobmemo_admission_release(&e->admission);
		e->admission = copy;
		e->admitted = true;
		e->admitted_ms = now_ms;
	}
	pthread_mutex_unlock(&t->lock);
	if (!e) {
		jobmemo_admission_release(&copy);
		return CADRE_ENOMEM;
	}
	return 0;
}

bool jobmemo_admitted(struct jobmemo *t, const char *key, const char *uid, int attempt,
		      uint64_t now_ms, struct jobmemo_admission *out)
{
	struct entry **link;
	bool live = false;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!t)
		return false;
	pthread_mutex_lock(&t->lock);
	link = entry_of(t, key, uid, attempt);
	if (link && (*link)->admitted) {
		struct entry *e = *link;

		live = now_ms < e->admitted_ms + t->ttl_ms;
		if (!live) {
			jobmemo_admission_release(&e->admission);
			e->admitted = false;
			unlink_if_empty(link);
		} else if (out) {
			jobmemo_admission_set(out, e->admission.message,
				       (const char *const *)e->admission.nodes, e->admission.n_nodes);
		}
	}
	pthread_mutex_unlock(&t->lock);
	return live;
}

void jobmemo_admission_done(struct jobmemo *t, const char *key)
{
	struct entry **link;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	link = find(t, key);
	if (*link && (*link)->admitted) {
		jobmemo_admission_release(&(*link)->admission);
		(*link)->admitted = false;
		unlink_if_empty(link);
	}
	pthread_mutex_unlock(&t->lock);
}

bool refusal_is_final(const struct kube_status *st)
{
	/* A namespace being deleted refuses every create; the job goes with it. */
	if (st->code == CADRE_ETERMINATING)
		return false;
	return st->http_status == 400 || st->http_status == 403 || st->http_status == 422;
}

int jobmemo_refused(struct jobmemo *t, const char *key, const char *uid, const char *pod,
		    int rank, int attempt, const struct kube_status *st, int64_t now)
{
	struct entry *e;

	if (!t)
		return 0;
	pthread_mutex_lock(&t->lock);
	e = entry_for(t, key, uid, attempt);
	if (e) {
		struct refusal *r = &e->refusal;

		if (!e->refused)
			r->first_time = now;
		e->refused = true;
		snprintf(r->pod, sizeof(r->pod), "%s", pod);
		snprintf(r->reason, sizeof(r->reason), "%s", st->reason);
		snprintf(r->message, sizeof(r->message), "%s", st->message);
		r->rank = rank;
		r->attempt = attempt;
		r->time = now;
	}
	pthread_mutex_unlock(&t->lock);
	return e ? 0 : CADRE_ENOMEM;
}

void jobmemo_created(struct jobmemo *t, const char *key, const char *pod)
{
	struct entry **link;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	link = find(t, key);
	if (*link && (*link)->refused && !strcmp((*link)->refusal.pod, pod)) {
		(*link)->refused = false;
		unlink_if_empty(link);
	}
	pthread_mutex_unlock(&t->lock);
}

bool jobmemo_refusal(struct jobmemo *t, const char *key, const char *uid, int attempt,
		     struct refusal *out)
{
	struct entry **link;
	bool found = false;

	if (!t)
		return false;
	pthread_mutex_lock(&t->lock);
	link = entry_of(t, key, uid, attempt);
	if (link && (*link)->refused) {
		*out = (*link)->refusal;
		found = true;
	}
	pthread_mutex_unlock(&t->lock);
	return found;
}
