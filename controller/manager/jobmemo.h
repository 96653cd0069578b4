/*
 * jobmemo.h - what this process knows of a job that its caches cannot show
 * yet, one entry per job, with a payload per use:
 *
 *  - an admission this process decided whose stored status the TrainingJob
 *    cache has not brought back: the decision (its message and the node of
 *    every rank) is written to the job's status before any pod exists
 *    (docs/design.md 3.1), but the watch shows that write later still. In
 *    between, every other admission decision must count the gang as
 *    holding the nodes it was given, exactly as expectations cover pod
 *    creates (expect.h); and a pass whose status write failed (a 409) asks
 *    again and must get the same decision. It lasts until the cache shows
 *    the admission, the job's attempt moves on, or the ttl passes.
 *  - the last create the API server refused (Pod Security, a quota, a
 *    webhook): nothing appears in any cache when that happens, so the
 *    planner would otherwise never say why a pod does not appear (struct
 *    tj_refusal in tj_plan.h). The job's entrypoint ConfigMap and Service
 *    are recorded the same way under their own names, with the negative
 *    ranks of tj_plan.h.
 *
 * Memory only, and only ever a shortcut: the stored status is the record of
 * an admission (a process that restarts reads it there), and a refused
 * create is refused again within one pass. An entry describes one job (its
 * uid) and one attempt (tj_attempt): a lookup for another
 * drops it, so a job replaced under the same name, or a later attempt,
 * never inherits either payload. Keys are job keys ("namespace/name").
 * Thread-safe; every function accepts a NULL table and then does nothing
 * (finds nothing).
 */
#ifndef CADRE_JOBMEMO_H
#define CADRE_JOBMEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/status.h"

struct jobmemo;

/* admission_ttl_ms: how long an admission the cache never shows is believed. */
struct jobmemo *jobmemo_new(uint64_t admission_ttl_ms);
void jobmemo_free(struct jobmemo *t);

/* Drop key's entry whole (the job is gone). */
void jobmemo_forget(struct jobmemo *t, const char *key);

/* Entries held (for tests and logs). */
size_t jobmemo_len(struct jobmemo *t);

/* --- admissions --- */

/* A recorded admission, copied out: owned by the caller (jobmemo_admission_release). */
struct jobmemo_admission {
	char *message;
	char **nodes;      /* the node of each rank */
	int n_nodes;
	/* A wait that preempts (docs/design.md 3.5): the victims and their attempts. */
	char **preempt;
	int32_t *preempt_attempt;
	size_t n_preempt;
};

void jobmemo_admission_release(struct jobmemo_admission *a);

/*
 * Fill a (released or zeroed) with copies of message and nodes[0..n_nodes).
 * 0, or CADRE_ENOMEM with a left released.
 */
int jobmemo_admission_set(struct jobmemo_admission *a, const char *message,
			  const char *const *nodes, int n_nodes);

/*
 * Record that job key (uid, attempt) was admitted at now_ms with message
 * and nodes[0..n_nodes) (all copied). Replaces an earlier admission of key.
 * 0 or CADRE_ENOMEM.
 */
int jobmemo_admit(struct jobmemo *t, const char *key, const char *uid, int attempt,
		  const char *message, const char *const *nodes, int n_nodes, uint64_t now_ms);

/*
 * Whether key (uid, attempt) has a live admission. One of another uid or
 * attempt, or older than the ttl, is dropped and does not count. When out
 * is not NULL and the admission is live, out receives a copy of it (true
 * with out->nodes NULL only when out of memory: treat as not recorded).
 */
bool jobmemo_admitted(struct jobmemo *t, const char *key, const char *uid, int attempt,
		      uint64_t now_ms, struct jobmemo_admission *out);

/* Drop key's admission, if any (the cache shows it, or the job no longer waits). */
void jobmemo_admission_done(struct jobmemo *t, const char *key);

/* --- refused creates --- */

/* What one refusal said; plain data, copied out by jobmemo_refusal. */
struct refusal {
	char pod[254];          /* the pod (or ConfigMap, Service) that could not be created */
	int rank;
	int attempt;            /* tj_attempt of that create */
	char reason[64];        /* the API server's Status reason: Forbidden, Invalid, ... */
	char message[512];      /* the API server's message */
	int64_t first_time;     /* Unix seconds of the first refusal of this attempt */
	int64_t time;           /* Unix seconds of this one */
};

/*
 * Whether a failed create is the API server refusing the object, as
 * opposed to a transient failure: a response came, and it was 400, 403 or
 * 422 (admission webhooks, Pod Security, quotas, validation); never a
 * namespace being deleted (CADRE_ETERMINATING), which refuses every create.
 */
bool refusal_is_final(const struct kube_status *st);

/*
 * Record that the create of pod (rank, attempt) of job (key, uid) was
 * refused at now (Unix seconds) with st's reason and message. A refusal of
 * the same job and attempt keeps its first_time. 0 or CADRE_ENOMEM.
 */
int jobmemo_refused(struct jobmemo *t, const char *key, const char *uid, const char *pod,
		    int rank, int attempt, const struct kube_status *st, int64_t now);

/* The create of pod succeeded (or the object exists): drop the refusal if it names pod. */
void jobmemo_created(struct jobmemo *t, const char *key, const char *pod);

/*
 * Copy key's refusal into out when it belongs to this uid and attempt; an
 * entry of another uid or attempt is dropped. True when out was filled.
 */
bool jobmemo_refusal(struct jobmemo *t, const char *key, const char *uid, int attempt,
		     struct refusal *out);

#endif
