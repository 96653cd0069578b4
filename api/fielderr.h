/*
 * fielderr.h - a list of problems found in an object, each tied to the path
 * of the field it concerns ("spec.numNodes", "spec.envs.SLURM_JOB_ID",
 * "spec.volumes[\"tmp\"]").
 *
 * Parsers and validators append to one list so that a user sees every
 * problem at once, the way the API server reports a 422. Paths and messages
 * often quote user input, so both are copied and truncated to a cap, and the
 * list keeps at most FIELD_ERRORS_MAX entries: an object with a hundred
 * thousand bad env names costs a bounded amount of memory. Entries past the
 * cap are still counted.
 *
 * Not thread-safe; one owner at a time.
 *
 *   struct field_errors errs;
 *   field_errors_init(&errs);
 *   field_errors_add(&errs, "spec.numNodes", "must be >= 1");
 *   field_errors_join(&errs, &msg);   // "spec.numNodes: must be >= 1"
 *   field_errors_release(&errs);
 */
#ifndef CADRE_API_FIELDERR_H
#define CADRE_API_FIELDERR_H

#include <stdbool.h>
#include <stddef.h>

struct buf;

#define FIELD_ERRORS_MAX 64          /* entries kept; more are only counted */
#define FIELD_ERROR_PATH_MAX 256     /* bytes of a path kept, with "..." when cut */
#define FIELD_ERROR_MESSAGE_MAX 512  /* bytes of a message kept, likewise */

struct field_error {
	char *path;     /* owned; "" for the object as a whole */
	char *message;  /* owned */
};

struct field_errors {
	struct field_error *items;  /* the kept entries, in the order added */
	size_t len;                 /* entries kept */
	size_t cap;
	size_t total;               /* entries added, kept or not, even on ENOMEM */
};

void field_errors_init(struct field_errors *errs);

/* Free every entry; the list is empty and may be used again. */
void field_errors_release(struct field_errors *errs);

/*
 * Add one problem. path is copied; the message is formatted from fmt. An
 * entry equal (path and message) to one already kept is not added again.
 * Returns 0 (also when the entry was only counted because the list is full)
 * or CADRE_ENOMEM. Either way field_errors_count() is at least one after
 * it, so a caller that checks the count never mistakes a bad object for a
 * good one.
 */
int field_errors_add(struct field_errors *errs, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Problems added so far, including those past the cap. */
size_t field_errors_count(const struct field_errors *errs);

/* The i-th kept entry (i < errs->len), borrowed; NULL past the end. */
const struct field_error *field_errors_at(const struct field_errors *errs, size_t i);

/* The first kept entry whose path is exactly path, borrowed; NULL if none. */
const struct field_error *field_errors_find(const struct field_errors *errs, const char *path);

/*
 * Append "path: message; path: message" to out, with "; and N more" when
 * entries were dropped at the cap. An entry with an empty path is written as
 * its message alone. Returns 0 or an error of buf_add (CADRE_ETOOBIG,
 * CADRE_ENOMEM); on error out may hold part of the text.
 */
int field_errors_join(const struct field_errors *errs, struct buf *out);

#endif
