#include "api/condition.h"

#include "api/decode.h"
#include "api/fielderr.h"
#include "api/meta.h"
#include "base/err.h"

#include <stdlib.h>
#include <string.h>

void condition_list_init(struct condition_list *list)
{
	list->items = NULL;
	list->len = 0;
	list->cap = 0;
}

static void condition_release(struct condition *c)
{
	free(c->type);
	free(c->status);
	free(c->reason);
	free(c->message);
	memset(c, 0, sizeof(*c));
}

void condition_list_release(struct condition_list *list)
{
	for (size_t i = 0; i < list->len; i++)
		condition_release(&list->items[i]);
	free(list->items);
	condition_list_init(list);
}

static bool valid_status(const char *status)
{
	return status && (!strcmp(status, "True") || !strcmp(status, "False") ||
			  !strcmp(status, "Unknown"));
}

static struct condition *find(const struct condition_list *list, const char *type)
{
	for (size_t i = 0; i < list->len; i++)
		if (!strcmp(list->items[i].type, type))
			return &list->items[i];
	return NULL;
}

const struct condition *condition_find(const struct condition_list *list, const char *type)
{
	return find(list, type);
}

bool condition_is_true(const struct condition_list *list, const char *type)
{
	const struct condition *c = find(list, type);

	return c && !strcmp(c->status, "True");
}

/* Make room for one more entry. 0 or CADRE_ENOMEM. */
static int reserve(struct condition_list *list)
{
	struct condition *items;
	size_t cap;

	if (list->len < list->cap)
		return 0;
	cap = list->cap ? list->cap * 2 : 4;
	items = realloc(list->items, cap * sizeof(*items));
	if (!items)
		return CADRE_ENOMEM;
	list->items = items;
	list->cap = cap;
	return 0;
}

int condition_set(struct condition_list *list, const char *type, const char *status,
		  const char *reason, const char *message, int64_t observed_generation,
		  int64_t now, bool *changed)
{
	struct condition fresh = { 0 };
	struct condition *old;
	int err = CADRE_EINVAL;

	if (changed)
		*changed = false;
	if (!type || !*type || !valid_status(status))
		goto out;
	reason = reason ? reason : "";
	message = message ? message : "";
	old = find(list, type);
	if (old && !strcmp(old->status, status) && !strcmp(old->reason, reason) &&
	    !strcmp(old->message, message) && old->observed_generation == observed_generation) {
		err = 0;
		goto out;
	}

	/* Build the whole new entry first, so a failure leaves the list as it was. */
	err = CADRE_ENOMEM;
	fresh.type = strdup(type);
	fresh.status = strdup(status);
	fresh.reason = strdup(reason);
	fresh.message = strdup(message);
	if (!fresh.type || !fresh.status || !fresh.reason || !fresh.message)
		goto out;
	fresh.observed_generation = observed_generation;
	fresh.last_transition_time =
		old && !strcmp(old->status, status) ? old->last_transition_time : now;
	if (old) {
		condition_release(old);
	} else {
		if (reserve(list))
			goto out;
		old = &list->items[list->len++];
	}
	*old = fresh;
	memset(&fresh, 0, sizeof(fresh));
	if (changed)
		*changed = true;
	err = 0;
out:
	condition_release(&fresh);
	return err;
}

void condition_list_observe(struct condition_list *list, int64_t observed_generation,
			    bool *changed)
{
	if (changed)
		*changed = false;
	for (size_t i = 0; i < list->len; i++) {
		if (list->items[i].observed_generation == observed_generation)
			continue;
		list->items[i].observed_generation = observed_generation;
		if (changed)
			*changed = true;
	}
}

void condition_remove(struct condition_list *list, const char *type, bool *changed)
{
	struct condition *c = find(list, type);

	if (changed)
		*changed = c != NULL;
	if (!c)
		return;
	condition_release(c);
	memmove(c, c + 1, (size_t)(list->items + list->len - (c + 1)) * sizeof(*c));
	list->len--;
}

/* A member that is missing or null: "required" rather than a type error. */
static bool absent(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return !v || json_is_null(v);
}

int condition_list_parse(const json_t *array, const char *path,
			 struct condition_list *list, struct field_errors *errs)
{
	char item_path[DECODE_PATH_MAX], field[DECODE_PATH_MAX];
	struct decoder d;
	size_t i;
	json_t *item;

	condition_list_init(list);
	decode_init(&d, errs);
	if (!decode_as_array(&d, array, path))
		return decode_finish(&d);
	json_array_foreach(array, i, item) {
		struct condition c = { 0 };
		bool failed_before = d.failed;
		bool bad;

		decode_path_index(item_path, sizeof(item_path), path, i);
		d.failed = false;
		if (!decode_as_object(&d, item, item_path)) {
			if (json_is_null(item))
				decode_fail(&d, item_path, "must be an object, not null");
			continue;
		}
		decode_string(&d, item, item_path, "type", &c.type);
		decode_string(&d, item, item_path, "status", &c.status);
		decode_string(&d, item, item_path, "reason", &c.reason);
		decode_string(&d, item, item_path, "message", &c.message);
		decode_int64(&d, item, item_path, "observedGeneration",
			     &c.observed_generation, NULL);
		decode_time(&d, item, item_path, "lastTransitionTime", &c.last_transition_time);
		decode_path(field, sizeof(field), item_path, "type");
		if (absent(item, "type"))
			decode_fail(&d, field, "required");
		else if (c.type && find(list, c.type))
			decode_fail(&d, field, "duplicate condition type \"%.64s\"", c.type);
		decode_path(field, sizeof(field), item_path, "status");
		if (absent(item, "status"))
			decode_fail(&d, field, "required");
		else if (c.status && !valid_status(c.status))
			decode_fail(&d, field, "must be True, False or Unknown");
		if (!d.err && !c.reason && !(c.reason = strdup("")))
			decode_nomem(&d);
		if (!d.err && !c.message && !(c.message = strdup("")))
			decode_nomem(&d);
		bad = d.err || d.failed;
		d.failed = d.failed || failed_before;
		if (!bad && reserve(list)) {
			decode_nomem(&d);
			bad = true;
		}
		if (bad) {
			condition_release(&c);
			if (d.err)
				break;
			continue;
		}
		list->items[list->len++] = c;
	}
	return decode_finish(&d);
}

json_t *condition_list_to_json(const struct condition_list *list)
{
	json_t *array = json_array();

	if (!array)
		return NULL;
	for (size_t i = 0; i < list->len; i++) {
		const struct condition *c = &list->items[i];
		char when[32];
		json_t *obj;

		api_time_format(c->last_transition_time, when);
		obj = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s}",
				"type", c->type, "status", c->status,
				"observedGeneration", (json_int_t)c->observed_generation,
				"lastTransitionTime", when,
				"reason", c->reason, "message", c->message);
		if (!obj || json_array_append_new(array, obj)) {
			json_decref(array);
			return NULL;
		}
	}
	return array;
}
