#include <criterion/criterion.h>

#include <jansson.h>

#include "api/condition.h"
#include "api/fielderr.h"
#include "base/err.h"

#define T0 1796000000LL  /* some time in 2026 */

Test(condition, set_adds_a_new_condition_stamped_now)
{
	struct condition_list list;
	const struct condition *c;
	bool changed = false;

	condition_list_init(&list);
	cr_assert_eq(condition_set(&list, "Admitted", "False", "InsufficientCapacity",
				   "needs 2 nodes with 8 nvidia.com/gpu", 3, T0, &changed), 0);
	cr_assert(changed);
	c = condition_find(&list, "Admitted");
	cr_assert_not_null(c);
	cr_assert_str_eq(c->status, "False");
	cr_assert_str_eq(c->reason, "InsufficientCapacity");
	cr_assert_eq(c->observed_generation, 3);
	cr_assert_eq(c->last_transition_time, T0);
	cr_assert_null(condition_find(&list, "Running"));
	condition_list_release(&list);
}

Test(condition, keeps_transition_time_when_only_reason_or_message_change)
{
	struct condition_list list;
	bool changed;

	condition_list_init(&list);
	condition_set(&list, "Admitted", "False", "InsufficientCapacity", "1 node has room",
		      1, T0, NULL);
	cr_assert_eq(condition_set(&list, "Admitted", "False", "QueuedBehind",
				   "behind llama-pretrain", 1, T0 + 60, &changed), 0);
	cr_assert(changed, "a new reason is a change");
	cr_assert_eq(condition_find(&list, "Admitted")->last_transition_time, T0);
	cr_assert_str_eq(condition_find(&list, "Admitted")->reason, "QueuedBehind");
	cr_assert_eq(condition_set(&list, "Admitted", "False", "QueuedBehind",
				   "behind 2 jobs", 2, T0 + 120, &changed), 0);
	cr_assert(changed);
	cr_assert_eq(condition_find(&list, "Admitted")->last_transition_time, T0);
	cr_assert_eq(condition_find(&list, "Admitted")->observed_generation, 2);
	cr_assert_eq(list.len, 1, "one entry per type");
	condition_list_release(&list);
}

Test(condition, moves_transition_time_when_status_flips)
{
	struct condition_list list;
	bool changed;

	condition_list_init(&list);
	condition_set(&list, "Admitted", "False", "InsufficientCapacity", "", 1, T0, NULL);
	cr_assert_eq(condition_set(&list, "Admitted", "True", "Admitted", "", 1, T0 + 90,
				   &changed), 0);
	cr_assert(changed);
	cr_assert_eq(condition_find(&list, "Admitted")->last_transition_time, T0 + 90);
	cr_assert(condition_is_true(&list, "Admitted"));
	condition_list_release(&list);
}

Test(condition, reports_no_change_when_nothing_changed)
{
	struct condition_list list;
	bool changed = true;

	condition_list_init(&list);
	condition_set(&list, "Running", "True", "AllPodsRunning", "2 of 2", 4, T0, NULL);
	cr_assert_eq(condition_set(&list, "Running", "True", "AllPodsRunning", "2 of 2", 4,
				   T0 + 500, &changed), 0);
	cr_assert_not(changed);
	cr_assert_eq(condition_find(&list, "Running")->last_transition_time, T0);
	condition_list_release(&list);
}

Test(condition, observe_stamps_every_condition_with_the_generation_and_keeps_the_rest)
{
	struct condition_list list;
	bool changed = false;

	condition_list_init(&list);
	condition_set(&list, "Admitted", "True", "Admitted", "fits", 1, T0, NULL);
	condition_set(&list, "Running", "True", "AllPodsRunning", "2 of 2", 2, T0 + 5, NULL);
	condition_list_observe(&list, 3, &changed);
	cr_assert(changed);
	for (size_t i = 0; i < list.len; i++) {
		cr_assert_eq(list.items[i].observed_generation, 3, "%s", list.items[i].type);
		cr_assert_str_eq(list.items[i].status, "True");
	}
	cr_assert_eq(condition_find(&list, "Admitted")->last_transition_time, T0);
	cr_assert_eq(condition_find(&list, "Running")->last_transition_time, T0 + 5);
	cr_assert_str_eq(condition_find(&list, "Running")->message, "2 of 2");
	condition_list_observe(&list, 3, &changed);
	cr_assert_not(changed, "a second stamp with the same generation changes nothing");
	condition_list_release(&list);
}

Test(condition, refuses_bad_status_or_type_and_leaves_the_list_alone)
{
	struct condition_list list;
	bool changed = true;

	condition_list_init(&list);
	cr_assert_eq(condition_set(&list, "Running", "true", "X", "", 1, T0, &changed),
		     CADRE_EINVAL);
	cr_assert_not(changed);
	cr_assert_eq(condition_set(&list, "", "True", "X", "", 1, T0, NULL), CADRE_EINVAL);
	cr_assert_eq(condition_set(&list, NULL, "True", "X", "", 1, T0, NULL), CADRE_EINVAL);
	cr_assert_eq(condition_set(&list, "Running", NULL, "X", "", 1, T0, NULL), CADRE_EINVAL);
	cr_assert_eq(list.len, 0);
	cr_assert_eq(condition_set(&list, "Running", "Unknown", NULL, NULL, 1, T0, NULL), 0);
	cr_assert_str_eq(condition_find(&list, "Running")->reason, "");
	cr_assert_str_eq(condition_find(&list, "Running")->message, "");
	condition_list_release(&list);
}

Test(condition, remove_drops_one_type_and_keeps_the_order_of_the_rest)
{
	struct condition_list list;
	bool changed;

	condition_list_init(&list);
	condition_set(&list, "A", "True", "R", "", 1, T0, NULL);
	condition_set(&list, "B", "True", "R", "", 1, T0, NULL);
	condition_set(&list, "C", "True", "R", "", 1, T0, NULL);
	condition_remove(&list, "B", &changed);
	cr_assert(changed);
	cr_assert_eq(list.len, 2);
	cr_assert_str_eq(list.items[0].type, "A");
	cr_assert_str_eq(list.items[1].type, "C");
	condition_remove(&list, "B", &changed);
	cr_assert_not(changed);
	condition_list_release(&list);
}

Test(condition, json_round_trip_is_exact)
{
	struct condition_list list, back;
	struct field_errors errs;
	json_t *json, *again;

	condition_list_init(&list);
	field_errors_init(&errs);
	condition_set(&list, "Admitted", "True", "Admitted", "ok \"quoted\" ünïcode", 7,
		      T0, NULL);
	condition_set(&list, "Failed", "False", "", "", 7, T0 + 1, NULL);
	json = condition_list_to_json(&list);
	cr_assert_not_null(json);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json, 0),
							   "lastTransitionTime")),
			 "2026-11-30T00:53:20Z");
	cr_assert_eq(json_integer_value(json_object_get(json_array_get(json, 0),
							"observedGeneration")), 7);
	cr_assert_eq(condition_list_parse(json, "status.conditions", &back, &errs), 0);
	cr_assert_eq(back.len, 2);
	cr_assert_str_eq(back.items[0].message, "ok \"quoted\" ünïcode");
	cr_assert_eq(back.items[1].last_transition_time, T0 + 1);
	again = condition_list_to_json(&back);
	cr_assert(json_equal(json, again));
	json_decref(json);
	json_decref(again);
	condition_list_release(&list);
	condition_list_release(&back);
	field_errors_release(&errs);
}

Test(condition, parse_reports_bad_entries_with_their_paths_and_keeps_the_good)
{
	const char *text =
		"[{\"type\": \"Ready\", \"status\": \"True\", \"reason\": \"Bound\"},"
		" {\"type\": \"Ready\", \"status\": \"False\"},"
		" {\"status\": \"True\"},"
		" {\"type\": \"X\", \"status\": \"yes\"},"
		" {\"type\": 5, \"status\": \"True\"},"
		" {\"type\": \"Y\", \"status\": \"True\", \"lastTransitionTime\": \"yesterday\"},"
		" null, 7]";
	struct condition_list list;
	struct field_errors errs;
	json_t *json = json_loads(text, 0, NULL);

	field_errors_init(&errs);
	cr_assert_not_null(json);
	cr_assert_eq(condition_list_parse(json, "status.conditions", &list, &errs), CADRE_EINVAL);
	cr_assert_eq(list.len, 1);
	cr_assert_str_eq(list.items[0].type, "Ready");
	cr_assert_not_null(field_errors_find(&errs, "status.conditions[1].type"));
	cr_assert_not_null(field_errors_find(&errs, "status.conditions[2].type"));
	cr_assert_not_null(field_errors_find(&errs, "status.conditions[3].status"));
	cr_assert_not_null(field_errors_find(&errs, "status.conditions[4].type"));
	cr_assert_not_null(field_errors_find(&errs, "status.conditions[5].lastTransitionTime"));
	cr_assert_not_null(field_errors_find(&errs, "status.conditions[6]"));
	cr_assert_not_null(field_errors_find(&errs, "status.conditions[7]"));
	json_decref(json);
	condition_list_release(&list);
	field_errors_release(&errs);
}

Test(condition, parse_of_a_non_array_is_a_field_error)
{
	struct condition_list list;
	struct field_errors errs;
	json_t *obj = json_object();

	field_errors_init(&errs);
	cr_assert_eq(condition_list_parse(obj, "status.conditions", &list, &errs), CADRE_EINVAL);
	cr_assert_not_null(field_errors_find(&errs, "status.conditions"));
	cr_assert_eq(condition_list_parse(NULL, "status.conditions", &list, &errs), 0);
	cr_assert_eq(list.len, 0);
	json_decref(obj);
	condition_list_release(&list);
	field_errors_release(&errs);
}
