/*
 * admitted.h - gangs this controller has admitted whose admission its
 * TrainingJob cache does not show yet.
 *
 * The admission queue learns that a gang holds capacity from the job's
 * Admitted condition in the cache, but that status is written after the
 * gang's pods are created, and reaches the cache through the watch later
 * still. In between, another decision (on any worker) would treat the
 * admitted gang as still waiting: its pods unbound, so uncharged, and its
 * demand not reserved, free to be given to the next gang. So each decision
 * to admit is recorded here, and until the cache shows it (or the job's
 * attempt moves on, or the record expires) the queue counts the gang as
 * admitted, exactly as expectations cover pod creates (expect.h).
 *
 * Keys are job keys ("namespace/name"); a record also names the job's uid
 * and attempt (restarts + infraRestarts), so a job replaced under the same
 * name, or a later attempt, never inherits an admission. Thread-safe.
 */
#ifndef CADRE_ADMITTED_H
#define CADRE_ADMITTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct admitted;

/* ttl_ms: how long an admission the cache never shows is believed. NULL on ENOMEM. */
struct admitted *admitted_new(uint64_t ttl_ms);
void admitted_free(struct admitted *a);

/*
 * Record that job key (uid, attempt) was admitted at now_ms with message
 * (copied; what the status will say). Replaces an earlier record of key.
 * 0 or CADRE_ENOMEM.
 */
int admitted_record(struct admitted *a, const char *key, const char *uid, int attempt,
		    const char *message, uint64_t now_ms);

/*
 * Whether key (uid, attempt) has a live record. A record of another uid or
 * attempt, or one older than the ttl, is dropped and does not count. When
 * message is not NULL and a record is live, *message receives a copy of its
 * message (the caller frees it; NULL when out of memory).
 */
bool admitted_pending(struct admitted *a, const char *key, const char *uid, int attempt,
		      uint64_t now_ms, char **message);

/* Drop the record of key, if any (the cache shows the admission, or the job is gone). */
void admitted_forget(struct admitted *a, const char *key);

/* Records held (for tests and logs). */
size_t admitted_len(struct admitted *a);

#endif
