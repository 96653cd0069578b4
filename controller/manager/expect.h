/*
 * expect.h - expectations: what this controller has asked the API server to
 * do and not yet seen in its caches.
 *
 * A reconcile reads the pod cache. Right after it creates pod <job>-3, the
 * cache does not hold that pod yet; a second reconcile in that window would
 * see rank 3 missing and create it again (AlreadyExists at best, a
 * duplicate under a generated name at worst). So each create and delete is
 * recorded here before it is sent, the pod handlers mark it seen when the
 * watch delivers it, and a reconcile that finds expectations pending for
 * its job waits instead of acting (client-go's ControllerExpectations).
 * Expectations expire after a timeout so a lost watch event cannot wedge a
 * job forever: the reconcile after that trusts the cache again.
 *
 * Keys are job keys ("namespace/name"); items are object names. Thread-safe.
 */
#ifndef CADRE_EXPECT_H
#define CADRE_EXPECT_H

#include <stdbool.h>
#include <stdint.h>

struct expect;

/* timeout_ms: how long an unobserved expectation is believed (client-go: 5 min). */
struct expect *expect_new(uint64_t timeout_ms);
void expect_free(struct expect *e);

/* Record that name under job is about to be created / deleted. 0 or CADRE_ENOMEM. */
int expect_create(struct expect *e, const char *job, const char *name, uint64_t now_ms);
int expect_delete(struct expect *e, const char *job, const char *name, uint64_t now_ms);

/*
 * The cache saw name appear (observed_create) or go (observed_delete), or
 * the request failed so it never will (both forget the pending item).
 */
void expect_observed_create(struct expect *e, const char *job, const char *name);
void expect_observed_delete(struct expect *e, const char *job, const char *name);

/* True when nothing is pending for job (or all of it has expired). */
bool expect_satisfied(struct expect *e, const char *job, uint64_t now_ms);

/* Whether a delete of name under job is ours and not yet seen through. */
bool expect_deleting(struct expect *e, const char *job, const char *name, uint64_t now_ms);

/*
 * Status writes. A reconcile that wrote status based on the object at
 * resourceVersion rv must not act again on that same version: the cache
 * has not caught up with its own write, and acting on the old status would
 * repeat decisions already made (a second restart, a deleted pod counted as
 * lost). expect_status_written() records rv; expect_status_fresh() is false
 * while the cached object still has it. resourceVersions are only compared
 * for equality: they are opaque.
 */
int expect_status_written(struct expect *e, const char *job, const char *rv, uint64_t now_ms);
bool expect_status_fresh(struct expect *e, const char *job, const char *cached_rv,
			 uint64_t now_ms);

/*
 * Quiet time for a starting gang's progress (tj_status_progress_only): after
 * a status write, the next write of progress alone waits until until_ms.
 * expect_quiet() records it (replacing an earlier one); expect_quiet_until()
 * is its end while it lasts, else 0. Holds nothing back.
 */
int expect_quiet(struct expect *e, const char *job, uint64_t until_ms);
uint64_t expect_quiet_until(struct expect *e, const char *job, uint64_t now_ms);

/* Drop everything recorded for job (the job is gone). */
void expect_forget(struct expect *e, const char *job);

#endif
