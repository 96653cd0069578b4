/*
 * leader.h - leader election on a coordination.k8s.io/v1 Lease.
 *
 * Several replicas of the controller run; only the one holding the Lease
 * writes. This is client-go's leaderelection, rule for rule, because the
 * other controllers in a cluster (and the people running them) expect it:
 *
 *   - Acquire: create the Lease when there is none; otherwise take it only
 *     when its holder is empty (released) or it has expired. Expiry is
 *     judged on OUR monotonic clock: the record is "observed" at the local
 *     time it was last seen to change, and it has expired when
 *     observed + leaseDurationSeconds has passed with no change. The
 *     holder's renewTime is never compared with our clock, so clock skew
 *     between machines does not matter.
 *   - Every write is a PUT carrying the resourceVersion that was read: a
 *     409 means someone else wrote first, and the next attempt reads
 *     again. Nothing is ever overwritten blindly.
 *   - leaseTransitions goes up by one on every takeover; acquireTime is
 *     kept across renewals.
 *   - Renew every retry period. When no renewal has succeeded for the renew
 *     deadline (10 s, less than the 15 s others wait), stop leading: the
 *     on_stopped_leading callback runs and this elector does not try
 *     again (the controller exits, as client-go's users do, so a fresh
 *     process with fresh caches competes).
 *   - On leader_stop() while leading, release: write an empty holder (and a
 *     1 s duration), so another replica takes over at its next retry rather
 *     than after a full lease duration (client-go's ReleaseOnCancel).
 *
 * Threads: leader_start() runs the loop on a thread of its own; the
 * callbacks run on it. leader_is_leader() and leader_holder() may be called
 * from any thread. leader_try() and leader_release() are the loop's steps,
 * exposed for tests that drive the elector by hand with an injected clock;
 * they must not be called while the thread runs.
 *
 * The HTTP client should have a request timeout well under the renew
 * deadline (say 5 s), so a hung request cannot keep a deposed leader
 * writing.
 */
#ifndef CADRE_KUBE_LEADER_H
#define CADRE_KUBE_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "kube/http.h"

struct leader;

/* client-go's recommended timings (and docs/design.md 5). */
#define LEADER_LEASE_DURATION_MS 15000
#define LEADER_RENEW_DEADLINE_MS 10000
#define LEADER_RETRY_PERIOD_MS 2000

struct leader_callbacks {
	/* We hold the Lease now: start writing. */
	void (*on_started_leading)(void *ctx);
	/* We no longer hold it (lost, or stopped): stop writing now. */
	void (*on_stopped_leading)(void *ctx);
	/* The holder we observe changed; identity is borrowed for the call. */
	void (*on_new_leader)(void *ctx, const char *identity);
	void *ctx;
};

struct leader_options {
	const char *namespace;        /* of the Lease (required) */
	const char *name;             /* of the Lease (required) */
	const char *identity;         /* NULL: "<hostname>_<random hex>" */
	long lease_duration_ms;       /* 0: LEADER_LEASE_DURATION_MS */
	long renew_deadline_ms;       /* 0: LEADER_RENEW_DEADLINE_MS */
	long retry_period_ms;         /* 0: LEADER_RETRY_PERIOD_MS */
	/* Monotonic milliseconds (NULL: CLOCK_MONOTONIC), for tests. */
	uint64_t (*now_ms)(void *arg);
	void *clock_arg;
};

/*
 * An elector using http (borrowed; must outlive it). opts and cb (cb may be
 * NULL) are copied. Returns 0 and *out, CADRE_EINVAL (missing namespace or
 * name, renew deadline not below the lease duration) or CADRE_ENOMEM.
 */
int leader_new(struct kube_http *http, const struct leader_options *opts,
	       const struct leader_callbacks *cb, struct leader **out);

/* Start the election thread. 0, CADRE_EINVAL if started, CADRE_ENOMEM. */
int leader_start(struct leader *l);

/*
 * Stop the thread; if it leads, release the Lease and call
 * on_stopped_leading. Waits for the thread. Not from a callback.
 */
void leader_stop(struct leader *l);

/* Stop, then free. NULL is a no-op. */
void leader_free(struct leader *l);

/* Whether this elector holds the Lease now. */
bool leader_is_leader(struct leader *l);

/* The identity this elector writes (borrowed, lives as long as l). */
const char *leader_identity(struct leader *l);

/* The holder last observed, as a malloc'd copy (NULL if none / no memory). */
char *leader_holder(struct leader *l);

/*
 * One acquire-or-renew attempt (the loop's step). Returns 0 when we hold the
 * Lease afterwards; CADRE_EAGAIN when another holder's lease is still
 * valid; CADRE_ECONFLICT when a write lost a race (re-read next time);
 * CADRE_EEXIST when someone created the Lease first; or the API error.
 */
int leader_try(struct leader *l);

/*
 * Give the Lease up if we hold it (the loop's last step). 0 when released
 * or not held, else the API error (the Lease then simply expires).
 */
int leader_release(struct leader *l);

#endif
