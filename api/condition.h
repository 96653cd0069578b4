/*
 * condition.h - status conditions in the shape of metav1.Condition, kept as
 * a list keyed by type.
 *
 * condition_set() is the one way the controller changes a condition. It
 * follows the Kubernetes convention (apimachinery meta.SetStatusCondition):
 * lastTransitionTime moves only when status changes, so a reason or message
 * update does not make a condition look new; and it says whether anything
 * changed, so a reconcile that changes nothing writes nothing.
 *
 * Not thread-safe; one owner at a time.
 */
#ifndef CADRE_API_CONDITION_H
#define CADRE_API_CONDITION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct field_errors;

struct condition {
	char *type;       /* owned, CamelCase: "Admitted", "Ready" */
	char *status;     /* owned: "True" | "False" | "Unknown" */
	char *reason;     /* owned, CamelCase; "" when none was given */
	char *message;    /* owned; "" when none was given */
	int64_t observed_generation;
	int64_t last_transition_time;  /* Unix seconds; 0 when unknown */
};

struct condition_list {
	struct condition *items;  /* owned, in the order first set */
	size_t len;
	size_t cap;
};

void condition_list_init(struct condition_list *list);

/* Free every condition; the list is empty and may be used again. */
void condition_list_release(struct condition_list *list);

/*
 * Set condition type to status, reason, message (NULL reads as "") and
 * observed_generation. A new condition, or one whose status differs, gets
 * last_transition_time = now; otherwise the old time is kept. *changed
 * (when not NULL) is set to whether anything about the list changed.
 * Returns 0; CADRE_EINVAL when type is empty or status is not one of the
 * three values (the list is then untouched); CADRE_ENOMEM (likewise).
 */
int condition_set(struct condition_list *list, const char *type, const char *status,
		  const char *reason, const char *message, int64_t observed_generation,
		  int64_t now, bool *changed);

/*
 * Stamp every condition with observed_generation, the metadata.generation
 * the status was computed from, including the ones this reconcile did not
 * set: a condition that still holds after a spec change holds for the new
 * generation too. Nothing else moves, lastTransitionTime included.
 * *changed (when not NULL) says whether any condition had another value.
 */
void condition_list_observe(struct condition_list *list, int64_t observed_generation,
			    bool *changed);

/* Remove condition type if present; *changed (when not NULL) says whether it was. */
void condition_remove(struct condition_list *list, const char *type, bool *changed);

/* The condition of that type, borrowed from list; NULL when absent. */
const struct condition *condition_find(const struct condition_list *list, const char *type);

/* Whether condition type is present with status "True". */
bool condition_is_true(const struct condition_list *list, const char *type);

/*
 * Read a JSON array of conditions (borrowed; NULL or null means none) into
 * list, which this initializes first. Problems are added to errs under
 * path ("status.conditions[2].status"); a bad entry, or a second entry of a
 * type already seen, is skipped. Returns 0, CADRE_EINVAL when it added
 * errors, or CADRE_ENOMEM. Release list whatever it returns.
 */
int condition_list_parse(const json_t *array, const char *path,
			 struct condition_list *list, struct field_errors *errs);

/*
 * The list as a JSON array of {type, status, observedGeneration,
 * lastTransitionTime, reason, message}, the metav1.Condition field set.
 * New reference; NULL when out of memory or when a string is not valid
 * UTF-8 (jansson refuses those).
 */
json_t *condition_list_to_json(const struct condition_list *list);

#endif
