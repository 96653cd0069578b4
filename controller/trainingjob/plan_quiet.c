/*
 * plan_quiet.c - the quiet time of status writes while a gang starts
 * (tj_plan.h, tj_status_quiet_until and the rest).
 */
#include "controller/trainingjob/plan_internal.h"
#include "base/buf.h"
#include "base/err.h"
#include "controller/admission/candidate.h"
#include "controller/build/build.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A copy of a status object without what moves while a gang starts. */
static json_t *without_progress(const json_t *status)
{
	bool scheduler = tj_status_waiting_for_scheduler(status);
	json_t *copy = json_deep_copy(status), *c;
	size_t i;

	if (!copy)
		return NULL;
	json_object_del(copy, "nodes");
	json_object_del(copy, "readyNodes");
	json_object_del(copy, "message");
	/*
	 * Reconciling repeats the message, and its reason says what the start
	 * waits for now (PodsStarting, Unschedulable, a pod's waiting reason):
	 * on a busy scheduler it flips back and forth with the pods bound.
	 */
	json_array_foreach(json_object_get(copy, "conditions"), i, c) {
		const char *type = json_string_value(json_object_get(c, "type"));

		if (type && !strcmp(type, "Reconciling")) {
			json_object_del(c, "message");
			json_object_del(c, "reason");
		}
		/* Waiting for kube-scheduler, Admitted's message counts the pods created. */
		if (scheduler && type && !strcmp(type, "Admitted"))
			json_object_del(c, "message");
	}
	return copy;
}

static bool is_starting(const json_t *status)
{
	const char *phase = json_string_value(json_object_get(status, "phase"));

	return phase && !strcmp(phase, "Starting");
}

bool tj_status_waiting_for_scheduler(const json_t *status)
{
	const char *phase = json_string_value(json_object_get(status, "phase"));
	const json_t *c;
	size_t i;

	if (!phase || strcmp(phase, "Queued"))
		return false;
	json_array_foreach(json_object_get(status, "conditions"), i, c) {
		const char *type = json_string_value(json_object_get(c, "type"));
		const char *reason = json_string_value(json_object_get(c, "reason"));

		if (type && !strcmp(type, "Admitted"))
			return reason && !strcmp(reason, "WaitingForScheduler");
	}
	return false;
}

int64_t tj_status_quiet_until(int64_t admitted_time, int64_t last_until)
{
	if (!admitted_time)
		return last_until;
	return last_until > admitted_time + TJ_START_QUIET_S ? last_until :
							       admitted_time + TJ_START_QUIET_S;
}

int64_t tj_status_quiet_after_write(int64_t admitted_time, int64_t now)
{
	if (admitted_time && now < admitted_time + TJ_START_QUIET_S)
		return admitted_time + TJ_START_QUIET_S;
	return now + TJ_PROGRESS_EVERY_S;
}

int64_t tj_status_quiet_after(const json_t *stored, const json_t *written,
			      int64_t admitted_time, int64_t now)
{
	/* A native gang's admission after its written wait: the wait used the first quiet time. */
	if (is_starting(written) && tj_status_waiting_for_scheduler(stored))
		return now + TJ_PROGRESS_EVERY_S;
	if (is_starting(written))
		return tj_status_quiet_after_write(admitted_time, now);
	if (!tj_status_waiting_for_scheduler(written))
		return 0;
	/* The wait has no admission to count from: its first write starts the first quiet time. */
	return now + (tj_status_waiting_for_scheduler(stored) ? TJ_PROGRESS_EVERY_S :
								 TJ_START_QUIET_S);
}

bool tj_status_progress_only(const json_t *stored, const json_t *want, int64_t quiet_until,
			     int64_t now)
{
	json_t *a, *b;
	bool same;

	if (now >= quiet_until)
		return false;
	if (!(is_starting(stored) && is_starting(want)) &&
	    !(tj_status_waiting_for_scheduler(stored) && tj_status_waiting_for_scheduler(want)))
		return false;
	a = without_progress(stored);
	b = without_progress(want);
	same = a && b && json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return same;
}
