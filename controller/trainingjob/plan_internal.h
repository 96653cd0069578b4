/*
 * plan_internal.h - what the planner's files share (tj_plan.h is the
 * planner's contract): the pass being planned and the helpers each file
 * uses of the others. A helper's comment is at its definition, in the file
 * named above its declaration here. Internal to controller/trainingjob/.
 */
#ifndef CADRE_PLAN_INTERNAL_H
#define CADRE_PLAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/trainingjob/tj_plan.h"

/* One planning pass: the input, the plan being built, and the first error. */
struct planner {
	const struct tj_input *in;
	const struct trainingjob *job;
	struct tj_plan *out;
	const char *wait_reason;  /* why the job is not there yet; static or borrowed from in */
	int err;
};

/* Whom a restart is charged to (docs/design.md 1.3). */
enum blame {
	BLAME_USER,        /* the job's failure: restarts, against maxRestarts */
	BLAME_INFRA,       /* the infrastructure's: infraRestarts, against maxInfraRestarts */
	BLAME_NOT_COUNTED, /* spec.failurePolicy RestartNotCounted: infraRestarts too, said so */
	BLAME_NONE,        /* no failure (a preemption, a requeue): requeues, against no limit */
};

/* tj_plan.c */
struct tj_action *plan_action(struct planner *p, enum tj_action_kind kind, int rank,
				const struct podview *pod);
void plan_admit(struct planner *p, const char *message);
void plan_clear_nodes(struct planner *p);
void plan_cond(struct planner *p, const char *type, bool status, const char *reason,
		 const char *message);
void plan_cond_clear(struct planner *p, const char *type, const char *reason,
		       const char *message);
const char *plan_decided_node(const struct planner *p, int rank);
size_t plan_delete_pods(struct planner *p, bool keep_terminal, int keep_rank);
bool plan_dependency_holds(struct planner *p);
void plan_event(struct planner *p, bool warning, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void plan_exclude_node(struct planner *p, const char *node, const char *reason, int rank);
void plan_finish(struct planner *p, bool success, const char *reason, const char *message);
void plan_first_admission(struct planner *p);
bool plan_kueue_admitted(struct planner *p, size_t have, size_t managed,
			   struct kueue_decision *d);
bool plan_kueue_evicted(struct planner *p, const struct kueue_decision *given);
const struct tj_refusal *plan_live_refusal(const struct planner *p,
					     const struct podview **by_rank);
int plan_num_nodes(const struct planner *p);
bool plan_partition_waits(struct planner *p);
bool plan_phase_was(const struct planner *p, enum tj_phase phase);
bool plan_pod_terminal(const struct podview *v);
void plan_record_failure(struct planner *p, const struct podview *v, const char *reason,
			   const char *message);
void plan_record_history(struct planner *p, const struct podview *v, const char *reason,
			   bool infrastructure);
void plan_record_nodes(struct planner *p);
bool plan_refusal_expired(struct planner *p, const struct tj_refusal *r, int64_t since);
int64_t plan_refusal_since(const struct planner *p, const struct tj_refusal *r);
void plan_requeue_in(struct planner *p, int64_t seconds);
void plan_restart(struct planner *p, enum blame blame, const char *cond_reason,
		    const struct podview *v, const char *why);
void plan_say_refused(struct planner *p, const struct tj_refusal *r, const char *cond_type,
			int64_t since);
void plan_set_node(struct planner *p, int rank, const char *node);
void plan_set_message(struct planner *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void plan_set_phase(struct planner *p, enum tj_phase phase);
void plan_set_string(struct planner *p, char **field, const char *value);
void plan_waiting(struct planner *p, const char *reason);

/* plan_native.c */
void plan_delete_podgroups(struct planner *p, int keep_attempt);
bool plan_native_admitted(struct planner *p, const struct podview **by_rank,
			    const struct tj_refusal *refused, int64_t refused_since);
bool plan_native_disrupted(struct planner *p);
void plan_topology_unexpressed(struct planner *p);

/* plan_gang.c */
void plan_hold_for_refusal(struct planner *p, const struct tj_refusal *refused, int64_t since);
void plan_gang(struct planner *p);

/* plan_inplace.c */
bool plan_in_place(const struct planner *p);
bool plan_in_place_current(const struct planner *p);
bool plan_in_place_possible(const struct planner *p, const char *cond_reason);
void plan_in_place_begin(struct planner *p);
bool plan_in_place_catch_up(struct planner *p, int attempt);
bool plan_in_place_place(struct planner *p, const struct podview **by_rank, int n);
int64_t plan_in_place_since(const struct planner *p);

/* plan_array.c */
void plan_array(struct planner *p);

/* plan_health.c */
void plan_health(struct planner *p);
bool plan_reason_ok(const char *r);

#endif
