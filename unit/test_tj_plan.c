#include <criterion/criterion.h>
#include <string.h>

#include "api/fielderr.h"
#include "base/err.h"
#include "api/trainingjob.h"
#include "controller/trainingjob/tj_plan.h"

/* A fixture: a parsed job, its pods and the planner's input. */
struct fx {
	struct trainingjob job;
	json_t *pods_json[8];
	struct podview pods[8];
	size_t n_pods;
	struct tj_input in;
	struct tj_plan plan;
};

static const char *const base_job =
	"{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
	"\"metadata\":{\"name\":\"llama\",\"namespace\":\"ml\",\"uid\":\"u-1\",\"generation\":1,"
	"\"creationTimestamp\":\"2026-11-30T00:00:00Z\"},"
	"\"spec\":{\"numNodes\":2,\"resources\":{\"accelerators\":\"H100:8\"},"
	"\"image\":\"img\",\"run\":\"train\",\"maxRestarts\":1%s},"
	"\"status\":%s}";

static void fx_job(struct fx *f, const char *spec_extra, const char *status)
{
	char text[4096];
	struct field_errors errs;
	json_error_t jerr;
	json_t *obj;

	memset(f, 0, sizeof(*f));
	snprintf(text, sizeof(text), base_job, spec_extra ? spec_extra : "",
		 status ? status : "{}");
	obj = json_loads(text, 0, &jerr);
	cr_assert_not_null(obj, "%s", jerr.text);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(obj, &f->job, &errs), 0);
	field_errors_release(&errs);
	json_decref(obj);
	f->in.job = &f->job;
	f->in.now = 1000000;
	f->in.mode = GANG_BUILTIN;
	f->in.expectations_met = true;
	f->in.service_exists = true;
	f->in.entrypoint_exists = true;
}

/* A pod, as JSON text, among the fixture's pods and the planner's input. */
static void fx_add_pod(struct fx *f, const char *text)
{
	json_error_t jerr;

	f->pods_json[f->n_pods] = json_loads(text, 0, &jerr);
	cr_assert_not_null(f->pods_json[f->n_pods], "%s", jerr.text);
	podview_read(f->pods_json[f->n_pods], &f->pods[f->n_pods]);
	f->n_pods++;
	f->in.pods = f->pods;
	f->in.n_pods = f->n_pods;
}

/* Add pod <job>-<rank> of attempt, phase, and extra JSON in status/spec. */
static void fx_pod(struct fx *f, int rank, int attempt, const char *phase, bool gated,
		   const char *status_extra)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"llama-%d\",\"uid\":\"p%d\",\"labels\":{"
		 "\"cadre.dev/job-name\":\"llama\",\"cadre.dev/node-rank\":\"%d\","
		 "\"cadre.dev/restart-attempt\":\"%d\"}},"
		 "\"spec\":{%s\"nodeName\":\"n%d\"},"
		 "\"status\":{\"phase\":\"%s\",\"podIP\":\"10.0.0.%d\"%s}}",
		 rank, rank, rank, attempt,
		 gated ? "\"schedulingGates\":[{\"name\":\"cadre.dev/gang\"}]," : "",
		 rank, phase, rank + 1, status_extra ? status_extra : "");
	fx_add_pod(f, text);
}

static void fx_plan(struct fx *f)
{
	cr_assert_eq(tj_plan_make(&f->in, &f->plan), 0);
}

static void fx_release(struct fx *f)
{
	tj_plan_release(&f->plan);
	tj_release(&f->job);
	for (size_t i = 0; i < f->n_pods; i++)
		json_decref(f->pods_json[i]);
}

static size_t count_actions(const struct tj_plan *p, enum tj_action_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_actions; i++)
		if (p->actions[i].kind == kind)
			n++;
	return n;
}

static const char *cond_reason(const struct tj_plan *p, const char *type)
{
	const struct condition *c = condition_find(&p->status.conditions, type);

	return c ? c->reason : "(absent)";
}

static bool has_event(const struct tj_plan *p, const char *reason)
{
	for (size_t i = 0; i < p->n_events; i++)
		if (!strcmp(p->events[i].reason, reason))
			return true;
	return false;
}

/* The plan's event of that reason; fails the test when there is none. */
static const struct tj_event *event_of(const struct tj_plan *p, const char *reason)
{
	for (size_t i = 0; i < p->n_events; i++)
		if (!strcmp(p->events[i].reason, reason))
			return &p->events[i];
	cr_assert_fail("no %s event among the plan's %zu", reason, p->n_events);
	return NULL;
}

/* The next reconcile: the status the plan wrote is the job's, then plan again. */
static void fx_replan(struct fx *f)
{
	struct tj_status written;

	cr_assert_eq(tj_status_copy(&written, &f->plan.status), 0);
	tj_status_release(&f->job.status);
	f->job.status = written;
	tj_plan_release(&f->plan);
	fx_plan(f);
}

/* A built-in admission stored at t, without (ADMITTED_BARE) or with its decision:
 * rank r on node n<r>, where fx_pod binds it. */
#define ADMITTED_BARE(t) "{\"phase\":\"Starting\",\"admittedTime\":\"" t "\"," \
	"\"conditions\":[{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\"," \
	"\"message\":\"\",\"lastTransitionTime\":\"" t "\"}]"
#define DECIDED_NODES "\"nodes\":[{\"rank\":0,\"pod\":\"llama-0\",\"node\":\"n0\"}," \
	"{\"rank\":1,\"pod\":\"llama-1\",\"node\":\"n1\"}]"
#define ADMITTED_AT(t) ADMITTED_BARE(t) "," DECIDED_NODES
/* 1970-01-12T13:46:40Z is now (1000000) in the fixture. */
#define NOW "1970-01-12T13:46:40Z"
#define EARLIER "1970-01-12T13:40:00Z"

Test(tj_plan, a_new_job_asks_for_admission_and_gets_stable_ids)
{
	struct fx f;
	char id[16];

	fx_job(&f, NULL, NULL);
	fx_plan(&f);
	cr_assert(f.plan.needs_admission);
	cr_assert_eq(f.plan.n_actions, 0);
	tj_job_id("u-1", id);
	cr_assert_str_eq(f.plan.status.job_id, id);
	cr_assert_eq(strlen(id), 9);
	cr_assert(strstr(f.plan.status.task_id, "llama"));
	fx_release(&f);
}

Test(tj_plan, a_job_that_does_not_fit_waits_in_queued_and_says_why)
{
	struct fx f;

	fx_job(&f, NULL, NULL);
	f.in.admission = (struct tj_admission){ .verdict = ADMIT_WAIT, .reason = "InsufficientCapacity",
		.message = "needs 2 nodes with 8 nvidia.com/gpu of type H100; 1 node has room" };
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "InsufficientCapacity");
	cr_assert(strstr(f.plan.status.message, "1 node has room"));
	cr_assert_eq(f.plan.n_actions, 0);
	cr_assert(has_event(&f.plan, "InsufficientCapacity"), "the wait is told as an event");
	fx_release(&f);
}

static const char *const on_n0_n1[] = { "n0", "n1" };

/* The admission queue's yes, with the node of each rank. */
#define ADMIT_ON_N0_N1(msg) (struct tj_admission){ .verdict = ADMIT_YES, .message = msg, \
	.nodes = on_n0_n1, .n_nodes = 2 }

Test(tj_plan, admission_is_a_decision_in_the_status_and_creates_every_rank_from_it)
{
	struct fx f;

	fx_job(&f, NULL, NULL);
	f.in.service_exists = false;
	f.in.admission = ADMIT_ON_N0_N1("fits on n0, n1");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_STARTING);
	cr_assert(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_eq(f.plan.status.admitted_time, 1000000);
	/* The decision itself, which the reconciler stores before any create. */
	cr_assert_eq(f.plan.status.n_nodes, 2);
	for (int r = 0; r < 2; r++) {
		cr_assert_eq(f.plan.status.nodes[r].rank, r);
		cr_assert_str_eq(f.plan.status.nodes[r].node, on_n0_n1[r]);
		cr_assert_str_eq(f.plan.status.nodes[r].pod, r ? "llama-1" : "llama-0");
		cr_assert_null(f.plan.status.nodes[r].phase, "no pod of it has been seen");
	}
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 2);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_SERVICE), 1, "once, whoever asks for it");
	cr_assert(f.plan.admitted_now);
	cr_assert(has_event(&f.plan, "Admitted"));
	fx_release(&f);
}

/* The first admission records the Partition's spec then; a later one keeps the first record. */
Test(tj_plan, the_first_admission_records_what_the_partition_was)
{
	json_t *spec = json_pack("{s:s, s:s}", "defaultTime", "3600", "defaultImage", "img:1");
	json_t *later = json_pack("{s:s}", "defaultTime", "1");
	struct fx f;

	fx_job(&f, NULL, NULL);
	f.in.partition = "gpu";
	f.in.partition_spec = spec;
	f.in.admission = ADMIT_ON_N0_N1("fits on n0, n1");
	fx_plan(&f);
	cr_assert(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert(json_equal(f.plan.status.partition_spec, spec));
	cr_assert_str_eq(f.plan.status.partition, "gpu");
	fx_release(&f);

	fx_job(&f, NULL, "{\"phase\":\"Restarting\",\"admittedTime\":\"" EARLIER "\","
	       "\"partition\":\"gpu\",\"partitionSpec\":\"{\\\"defaultTime\\\":\\\"3600\\\"}\"}");
	f.in.partition = "gpu";
	f.in.partition_spec = later;
	f.in.admission = ADMIT_ON_N0_N1("fits on n0, n1");
	fx_plan(&f);
	cr_assert_str_eq(json_string_value(json_object_get(f.plan.status.partition_spec,
							   "defaultTime")), "3600");
	fx_release(&f);
	json_decref(spec);
	json_decref(later);
}

Test(tj_plan, an_admission_that_does_not_place_every_rank_is_refused_by_the_planner)
{
	struct fx f;

	fx_job(&f, NULL, NULL);
	f.in.admission = (struct tj_admission){ .verdict = ADMIT_YES, .message = "m",
						.nodes = on_n0_n1, .n_nodes = 1 };
	cr_assert_eq(tj_plan_make(&f.in, &f.plan), CADRE_EINVAL);
	fx_release(&f);
}

/* Built-in: a job that waits has its ConfigMap and Service, and never a pod. */
Test(tj_plan, a_queued_gang_gets_its_configmap_and_service_and_no_pod)
{
	struct fx f;

	fx_job(&f, NULL, NULL);
	f.in.service_exists = false;
	f.in.entrypoint_exists = false;
	fx_plan(&f);
	cr_assert(f.plan.needs_admission);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_ENTRYPOINT), 1);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_SERVICE), 1);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	tj_plan_release(&f.plan);
	f.in.admission = (struct tj_admission){ .verdict = ADMIT_WAIT, .reason = "InsufficientCapacity",
						.message = "no room" };
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	cr_assert_eq(f.plan.status.n_nodes, 0);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_ENTRYPOINT), 1);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_SERVICE), 1);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	fx_release(&f);
}

Test(tj_plan, no_pod_is_created_while_an_earlier_create_is_unseen)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Pending", false, NULL);
	f.in.expectations_met = false;
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	f.in.expectations_met = true;
	tj_plan_release(&f.plan);
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 1);
	cr_assert_eq(f.plan.actions[0].rank, 1);
	fx_release(&f);
}

/*
 * An admission stored without the node of a rank whose pod is missing, or
 * pods left gated (an earlier version kept its placement in memory and
 * gated its pods): the gang cannot be finished as decided, so it is
 * admitted again, without blame.
 */
Test(tj_plan, an_admission_stored_without_its_nodes_is_admitted_again)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_BARE(NOW) "}");
	fx_pod(&f, 0, 0, "Pending", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_eq(f.plan.status.restarts, 0);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "AdmissionIncomplete");
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	fx_release(&f);

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Pending", true, NULL);
	fx_pod(&f, 1, 0, "Pending", true, NULL);
	fx_plan(&f);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "AdmissionIncomplete");
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 2);
	fx_release(&f);

	/* A whole gang of an earlier version, ungated, runs on untouched. */
	fx_job(&f, NULL, ADMITTED_BARE(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RUNNING);
	fx_release(&f);
}

static bool only_n0_known(void *ctx, const char *node)
{
	(void)ctx;
	return !strcmp(node, "n0");
}

/* A chosen node deleted before its pod was placed: requeue now, not at the gang timeout. */
Test(tj_plan, a_chosen_node_that_is_gone_requeues_the_gang_at_once)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	f.in.node_known = only_n0_known;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "NodeLost");
	cr_assert_str_eq(f.plan.status.last_failure.node, "n1");
	cr_assert_eq(f.plan.status.last_failure.rank, 1);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	fx_release(&f);

	/* Known, it is created there. */
	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 1);
	fx_release(&f);
}

Test(tj_plan, every_pod_running_makes_the_job_running)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RUNNING);
	cr_assert_eq(f.plan.status.ready_nodes, 2);
	cr_assert_eq(f.plan.status.start_time, 1000000);
	cr_assert_eq(f.plan.status.n_nodes, 2);
	cr_assert_str_eq(f.plan.status.nodes[1].ip, "10.0.0.2");
	cr_assert_str_eq(f.plan.status.nodes[1].node, "n1");
	cr_assert(condition_is_true(&f.plan.status.conditions, "Running"));
	cr_assert(f.plan.all_running_now);
	cr_assert_null(f.plan.status.message);
	fx_release(&f);
}

Test(tj_plan, a_failed_rank_restarts_the_gang_and_records_the_failure)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false,
	       ",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"terminated\":"
	       "{\"exitCode\":3,\"reason\":\"Error\"}}}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_eq(f.plan.status.infra_restarts, 0);
	cr_assert(f.plan.status.has_last_failure);
	cr_assert_eq(f.plan.status.last_failure.rank, 1);
	cr_assert_eq(f.plan.status.last_failure.exit_code, 3);
	cr_assert_str_eq(f.plan.status.last_failure.pod, "llama-1");
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "PodFailed");
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 2);
	cr_assert_not(condition_is_true(&f.plan.status.conditions, "Admitted"));
	fx_release(&f);
}

Test(tj_plan, a_failure_with_no_restarts_left_fails_the_job_and_keeps_finished_pods)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) ",\"restarts\":1}");
	fx_pod(&f, 0, 1, "Running", false, NULL);
	fx_pod(&f, 1, 1, "Failed", false,
	       ",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"terminated\":"
	       "{\"exitCode\":3}}}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(cond_reason(&f.plan, "Failed"), "MaxRestartsExceeded");
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 1);
	cr_assert_str_eq(f.plan.actions[0].pod, "llama-0");
	cr_assert_neq(f.plan.status.completion_time, 0);
	fx_release(&f);
}

Test(tj_plan, an_evicted_pod_is_an_infrastructure_restart)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false, ",\"reason\":\"Evicted\",\"message\":\"low memory\"");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.restarts, 0);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "Evicted");
	fx_release(&f);
}

Test(tj_plan, a_pod_deleted_by_someone_else_is_an_infrastructure_restart)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_BARE(NOW) ",\"nodes\":[{\"rank\":0,\"pod\":\"llama-0\","
	       "\"node\":\"n0\",\"phase\":\"Running\"},{\"rank\":1,\"pod\":\"llama-1\","
	       "\"node\":\"n1\",\"phase\":\"Running\"}]}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	fx_release(&f);
}

/*
 * A rank whose pod the stored status has never seen (only its admitted node
 * is recorded: the pass that stored the admission stopped before creating
 * it) is created, on that node, not taken for a deletion.
 */
Test(tj_plan, a_rank_with_only_its_admitted_node_recorded_is_created_not_restarted)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_STARTING);
	cr_assert_eq(f.plan.status.infra_restarts, 0);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 1);
	cr_assert_eq(f.plan.actions[0].rank, 1);
	/* The record it is created from survives the pass: rank 1 still on n1. */
	cr_assert_eq(f.plan.status.n_nodes, 2);
	cr_assert_str_eq(f.plan.status.nodes[1].node, "n1");
	cr_assert_null(f.plan.status.nodes[1].phase);
	fx_release(&f);

	/* Once the whole gang was Running, a missing pod was deleted by someone. */
	fx_job(&f, NULL, "{\"phase\":\"Running\",\"admittedTime\":\"" NOW "\","
	       "\"conditions\":[{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":"
	       "\"Admitted\",\"message\":\"\",\"lastTransitionTime\":\"" NOW "\"}],"
	       DECIDED_NODES "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	fx_release(&f);
}

static bool node_n1_lost(void *ctx, const char *node)
{
	(void)ctx;
	return strcmp(node, "n1") != 0;
}

Test(tj_plan, a_lost_node_is_an_infrastructure_restart)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.node_ok = node_n1_lost;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "NodeLost");
	fx_release(&f);
}

/* Bound to a node that has not reported Ready yet, a pod that never ran has lost nothing. */
Test(tj_plan, a_pod_bound_to_a_node_not_yet_ready_is_not_a_lost_node)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Pending", false, NULL);
	f.in.node_ok = node_n1_lost;  /* rank 1 is on n1 */
	fx_plan(&f);
	cr_assert_eq(f.plan.status.infra_restarts, 0, "%s: %s", f.plan.status.last_failure.reason,
		     f.plan.status.message);
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 0);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_STARTING);
	fx_release(&f);

	/* Should the node never come up, the gang timeout ends the attempt. */
	fx_job(&f, ",\"gang\":{\"timeoutSeconds\":60}", ADMITTED_AT(EARLIER) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Pending", false, NULL);
	f.in.node_ok = node_n1_lost;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "GangTimeout");
	fx_release(&f);
}

Test(tj_plan, restarting_waits_for_the_old_gang_then_backs_off_in_queued)
{
	struct fx f;

	fx_job(&f, NULL, "{\"phase\":\"Restarting\",\"restarts\":1,\"lastFailure\":{\"rank\":1,"
	       "\"exitCode\":3,\"reason\":\"Error\",\"time\":\"" NOW "\"}}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 1);
	fx_release(&f);

	fx_job(&f, NULL, "{\"phase\":\"Restarting\",\"restarts\":1,\"lastFailure\":{\"rank\":1,"
	       "\"exitCode\":3,\"reason\":\"Error\",\"time\":\"" NOW "\"}}");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	cr_assert_eq(f.plan.requeue_after_s, 10);
	cr_assert_not(f.plan.needs_admission);
	cr_assert(strstr(f.plan.status.message, "backing off"));
	fx_release(&f);
}

Test(tj_plan, backoff_doubles_to_five_minutes)
{
	cr_assert_eq(tj_restart_backoff_s(1), 10);
	cr_assert_eq(tj_restart_backoff_s(2), 20);
	cr_assert_eq(tj_restart_backoff_s(3), 40);
	cr_assert_eq(tj_restart_backoff_s(6), 300);
	cr_assert_eq(tj_restart_backoff_s(60), 300);
}

Test(tj_plan, rank0_success_succeeds_and_deletes_the_others)
{
	struct fx f;

	fx_job(&f, ",\"successPolicy\":\"Rank0\"", ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Succeeded", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_SUCCEEDED);
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 1);
	cr_assert_str_eq(f.plan.actions[0].pod, "llama-1");
	fx_release(&f);
}

Test(tj_plan, all_policy_needs_every_pod_to_succeed)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Succeeded", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_STARTING);
	fx_release(&f);
	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Succeeded", false, NULL);
	fx_pod(&f, 1, 0, "Succeeded", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_SUCCEEDED);
	cr_assert_str_eq(cond_reason(&f.plan, "Succeeded"), "AllSucceeded");
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 0);
	fx_release(&f);
}

Test(tj_plan, suspend_deletes_the_pods_and_resume_queues_again)
{
	struct fx f;

	fx_job(&f, ",\"suspend\":true", ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_SUSPENDED);
	cr_assert(condition_is_true(&f.plan.status.conditions, "Suspended"));
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 1);
	cr_assert_not(condition_is_true(&f.plan.status.conditions, "Admitted"));
	fx_release(&f);

	fx_job(&f, NULL, "{\"phase\":\"Suspended\",\"conditions\":[{\"type\":\"Suspended\","
	       "\"status\":\"True\",\"reason\":\"Suspended\",\"message\":\"\","
	       "\"lastTransitionTime\":\"" NOW "\"}]}");
	fx_plan(&f);
	cr_assert(f.plan.needs_admission);
	cr_assert_str_eq(cond_reason(&f.plan, "Suspended"), "Resumed");
	fx_release(&f);
}

Test(tj_plan, the_deadline_fails_the_job_and_stops_its_pods)
{
	struct fx f;

	fx_job(&f, ",\"activeDeadlineSeconds\":60", ADMITTED_AT(EARLIER) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(cond_reason(&f.plan, "Failed"), "DeadlineExceeded");
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 2);
	fx_release(&f);
}

Test(tj_plan, ttl_deletes_the_job_after_it_finishes)
{
	struct fx f;

	fx_job(&f, ",\"ttlSecondsAfterFinished\":30",
	       "{\"phase\":\"Succeeded\",\"completionTime\":\"" NOW "\"}");
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_JOB), 0);
	cr_assert_eq(f.plan.requeue_after_s, 30);
	fx_release(&f);
	fx_job(&f, ",\"ttlSecondsAfterFinished\":30",
	       "{\"phase\":\"Succeeded\",\"completionTime\":\"" EARLIER "\"}");
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_JOB), 1);
	fx_release(&f);
}

/* Awaited by a dependant that has not seen it end: kept, at most TJ_TTL_AWAITED_MAX_S more. */
Test(tj_plan, ttl_waits_for_a_dependant_at_most_its_bound)
{
	struct fx f;

	fx_job(&f, ",\"ttlSecondsAfterFinished\":30",
	       "{\"phase\":\"Succeeded\",\"completionTime\":\"" EARLIER "\"}");
	f.in.awaited = true;
	f.in.now -= 360;  /* 10 s past its TTL */
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_JOB), 0);
	cr_assert_gt(f.plan.requeue_after_s, 0, "looked at again");
	fx_release(&f);
	/* EARLIER is 400 s before now: 370 s past its TTL, past the bound. */
	fx_job(&f, ",\"ttlSecondsAfterFinished\":30",
	       "{\"phase\":\"Succeeded\",\"completionTime\":\"" EARLIER "\"}");
	f.in.awaited = true;
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_JOB), 1);
	fx_release(&f);
}

Test(tj_plan, a_missing_volume_keeps_the_job_pending)
{
	struct fx f;
	struct tj_volume_state vols[] = { { "/mnt/ckpt", "shared", false, false, NULL } };

	fx_job(&f, NULL, NULL);
	f.in.volumes = vols;
	f.in.n_volumes = 1;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_PENDING);
	cr_assert_str_eq(cond_reason(&f.plan, "VolumesReady"), "VolumeNotFound");
	cr_assert(strstr(f.plan.status.message, "shared"));
	cr_assert_not(f.plan.needs_admission);
	fx_release(&f);

	vols[0].found = true;
	fx_job(&f, NULL, NULL);
	f.in.volumes = vols;
	f.in.n_volumes = 1;
	fx_plan(&f);
	cr_assert_str_eq(cond_reason(&f.plan, "VolumesReady"), "VolumeNotBound");
	fx_release(&f);
}

Test(tj_plan, waiting_for_volumes_is_one_event_per_reason_not_one_per_reconcile)
{
	struct fx f;
	struct tj_volume_state vols[] = { { "/mnt/ckpt", "shared", false, false, NULL } };
	const struct tj_event *e;

	fx_job(&f, NULL, NULL);
	f.in.volumes = vols;
	f.in.n_volumes = 1;
	fx_plan(&f);
	e = event_of(&f.plan, "VolumeNotFound");
	cr_assert(e->warning, "a Volume that does not exist needs a person");
	cr_assert(strstr(e->message, "\"shared\"") && strstr(e->message, "/mnt/ckpt") &&
		  strstr(e->message, "namespace ml"), "%s", e->message);
	cr_assert(strstr(e->message, "create"), "says what to do: %s", e->message);
	fx_replan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_PENDING);
	cr_assert_eq(f.plan.n_events, 0, "still missing: no second event");

	vols[0].found = true;
	fx_replan(&f);
	e = event_of(&f.plan, "VolumeNotBound");
	cr_assert_not(e->warning, "a claim waiting to bind is normal");
	cr_assert(strstr(e->message, "\"shared\"") && strstr(e->message, "not Bound"),
		  "%s", e->message);
	cr_assert(strstr(e->message, "kubectl describe volume.cadre.dev/shared"),
		  "says where to look: %s", e->message);
	fx_replan(&f);
	cr_assert_eq(f.plan.n_events, 0, "still unbound: no second event");
	fx_release(&f);
}

Test(tj_plan, a_second_missing_volume_is_a_new_event)
{
	struct fx f;
	struct tj_volume_state vols[] = { { "/mnt/a", "a", false, false, NULL },
					  { "/mnt/b", "b", false, false, NULL } };

	fx_job(&f, NULL, NULL);
	f.in.volumes = vols;
	f.in.n_volumes = 2;
	fx_plan(&f);
	cr_assert(strstr(event_of(&f.plan, "VolumeNotFound")->message, "\"a\""));
	vols[0].found = vols[0].bound = true;
	vols[0].claim_name = "a";
	fx_replan(&f);
	cr_assert(strstr(event_of(&f.plan, "VolumeNotFound")->message, "\"b\""),
		  "the same reason about another Volume is news");
	fx_release(&f);
}

Test(tj_plan, the_old_gang_gone_requeues_with_one_event_that_says_what_comes_next)
{
	struct fx f;
	const struct tj_event *e;

	fx_job(&f, NULL, "{\"phase\":\"Restarting\",\"restarts\":1,\"lastFailure\":{\"rank\":1,"
	       "\"exitCode\":3,\"reason\":\"Error\",\"time\":\"" NOW "\"}}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_not(has_event(&f.plan, "Requeued"), "a pod of the old gang is still there");
	tj_plan_release(&f.plan);

	f.in.n_pods = 0;
	f.in.now += 4;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	e = event_of(&f.plan, "Requeued");
	cr_assert_not(e->warning);
	cr_assert(strstr(e->message, "old gang is gone"), "%s", e->message);
	cr_assert(strstr(e->message, "attempt 1"), "names the next attempt: %s", e->message);
	cr_assert(strstr(e->message, "6s"), "says how long the backoff still lasts: %s",
		  e->message);
	cr_assert(strstr(e->message, "Error"), "says after what: %s", e->message);
	fx_replan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	cr_assert_not(has_event(&f.plan, "Requeued"), "queued already: no second event");
	fx_release(&f);
}

Test(tj_plan, an_invalid_spec_fails_once_with_the_field_paths)
{
	struct fx f;

	fx_job(&f, NULL, NULL);
	f.in.invalid = "spec.numNodes: must be >= 1";
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(cond_reason(&f.plan, "Failed"), "InvalidSpec");
	cr_assert(strstr(f.plan.status.message, "spec.numNodes"));
	cr_assert(has_event(&f.plan, "InvalidSpec"));
	fx_release(&f);
}

/* A partition's refusal (partitions.h) is the status message as it is, and an event. */
Test(tj_plan, a_partition_refusal_fails_with_invalid_partition_in_status_and_an_event)
{
	static const char why[] = "partition gpu: namespace ml is not in spec.allowedNamespaces";
	struct fx f;

	fx_job(&f, NULL, NULL);
	f.in.invalid = why;
	f.in.invalid_reason = "InvalidPartition";
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(cond_reason(&f.plan, "Failed"), "InvalidPartition");
	cr_assert_str_eq(f.plan.status.message, why);
	cr_assert(has_event(&f.plan, "InvalidPartition"));
	for (size_t i = 0; i < f.plan.n_events; i++)
		if (!strcmp(f.plan.events[i].reason, "InvalidPartition"))
			cr_assert_str_eq(f.plan.events[i].message, why);
	fx_release(&f);
}

Test(tj_plan, the_gang_timeout_tears_down_and_requeues_as_infrastructure)
{
	struct fx f;

	fx_job(&f, ",\"gang\":{\"timeoutSeconds\":60}", ADMITTED_AT(EARLIER) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Pending", false,
	       ",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
	       "\"reason\":\"Unschedulable\",\"message\":\"0/4 nodes are available\"}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "GangTimeout");
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "GangTimeout");
	fx_release(&f);
}

Test(tj_plan, an_image_that_never_pulls_counts_against_max_restarts)
{
	struct fx f;

	fx_job(&f, ",\"gang\":{\"timeoutSeconds\":600}", ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Pending", false,
	       ",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"waiting\":"
	       "{\"reason\":\"ImagePullBackOff\",\"message\":\"pull access denied\"}}}]");
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_STARTING);
	cr_assert(strstr(f.plan.status.message, "ImagePullBackOff: pull access denied"),
		  "%s", f.plan.status.message);
	cr_assert_eq(f.plan.requeue_after_s, 600);
	fx_release(&f);

	fx_job(&f, ",\"gang\":{\"timeoutSeconds\":60}", ADMITTED_AT(EARLIER) "}");
	fx_pod(&f, 0, 0, "Pending", false,
	       ",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"waiting\":"
	       "{\"reason\":\"ImagePullBackOff\",\"message\":\"pull access denied\"}}}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "PodFailed");
	fx_release(&f);
}

/* Kueue is installed (its Workload API listed) and has the Workload wl, or none. */
static void fx_kueue(struct fx *f, struct kueue_view *v, const struct kueue_workload *wl)
{
	memset(v, 0, sizeof(*v));
	v->api_served = true;
	v->wl = wl;
	v->group = "llama-0";
	f->in.kueue = v;
}

Test(tj_plan, kueue_mode_creates_ungated_pods_and_waits_with_kueues_message)
{
	struct kueue_workload wl = { "llama-0", KUEUE_WL_PENDING, "Pending",
		"couldn't assign flavors to pod set main: insufficient unused quota for "
		"nvidia.com/gpu in flavor h100, 8 more needed", NULL, false };
	struct kueue_view v;
	struct fx f;

	fx_job(&f, ",\"queue\":\"team-a\"", NULL);
	f.in.mode = GANG_KUEUE;
	fx_kueue(&f, &v, &wl);
	fx_plan(&f);
	cr_assert_not(f.plan.needs_admission);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 2);
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "WaitingForKueue");
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	cr_assert(strstr(f.plan.status.message, "insufficient unused quota for nvidia.com/gpu"),
		  "%s", f.plan.status.message);
	cr_assert(has_event(&f.plan, "WaitingForKueue"));
	fx_release(&f);
}

/* Gates gone and the pods Running say nothing: only the Workload admits. */
Test(tj_plan, kueue_mode_admits_only_when_the_workload_says_admitted)
{
	struct kueue_workload wl = { "llama-0", KUEUE_WL_PENDING, "Pending", "waiting", NULL, false };
	struct kueue_view v;
	struct fx f;

	fx_job(&f, ",\"queue\":\"team-a\"", NULL);
	f.in.mode = GANG_KUEUE;
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.pods[0].kueue_managed = f.pods[1].kueue_managed = true;
	fx_kueue(&f, &v, &wl);
	fx_plan(&f);
	cr_assert_not(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	fx_release(&f);

	wl.state = KUEUE_WL_ADMITTED;
	wl.cluster_queue = "team-a-cq";
	fx_job(&f, ",\"queue\":\"team-a\"", NULL);
	f.in.mode = GANG_KUEUE;
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.pods[0].kueue_managed = f.pods[1].kueue_managed = true;
	fx_kueue(&f, &v, &wl);
	fx_plan(&f);
	cr_assert(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RUNNING);
	cr_assert(has_event(&f.plan, "Admitted"));
	fx_release(&f);
}

/*
 * Kueue preempting an admitted job: a requeue with Kueue's reason, no
 * failure: eleven preemptions of a job allowed ten infrastructure restarts
 * still leave it queued again, counted in requeues alone.
 */
Test(tj_plan, kueue_preemption_is_a_requeue_with_kueues_reason_against_no_limit)
{
	struct kueue_workload wl = { "llama-0", KUEUE_WL_EVICTED, "InCohortReclamation",
		"Preempted to accommodate a workload (UID: u-2) due to reclamation within the "
		"cohort", "team-a-cq", true };
	struct kueue_view v;
	struct fx f;

	fx_job(&f, ",\"queue\":\"team-a\"", "{\"phase\":\"Running\",\"conditions\":["
	       "{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\","
	       "\"message\":\"admitted\",\"lastTransitionTime\":\"" NOW "\"}]}");
	f.in.mode = GANG_KUEUE;
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_kueue(&f, &v, &wl);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.requeues, 1);
	cr_assert_eq(f.plan.status.infra_restarts, 0);
	cr_assert_eq(f.plan.status.restarts, 0);
	cr_assert_eq(f.plan.status.has_last_failure, false, "a preemption is no failure");
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "InCohortReclamation");
	cr_assert(strstr(f.plan.status.message, "reclamation within the cohort"), "%s",
		  f.plan.status.message);
	cr_assert(has_event(&f.plan, "InCohortReclamation"));
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 2);
	fx_release(&f);
	fx_job(&f, ",\"queue\":\"team-a\",\"maxInfraRestarts\":10",
	       "{\"phase\":\"Running\",\"requeues\":10,\"infraRestarts\":10,\"conditions\":["
	       "{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\","
	       "\"message\":\"admitted\",\"lastTransitionTime\":\"" NOW "\"}]}");
	f.in.mode = GANG_KUEUE;
	fx_pod(&f, 0, 20, "Running", false, NULL);
	fx_pod(&f, 1, 20, "Running", false, NULL);
	fx_kueue(&f, &v, &wl);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING, "%s", f.plan.status.message);
	cr_assert_eq(f.plan.status.requeues, 11);
	cr_assert_eq(f.plan.status.infra_restarts, 10);
	fx_release(&f);
}

/* Kueue evicting for a reason of the infrastructure's (PodsReadyTimeout): counted. */
Test(tj_plan, kueue_eviction_for_pods_not_ready_is_an_infrastructure_restart)
{
	struct kueue_workload wl = { "llama-0", KUEUE_WL_EVICTED, "PodsReadyTimeout",
		"Exceeded the PodsReady timeout", "team-a-cq", false };
	struct kueue_view v;
	struct fx f;

	fx_job(&f, ",\"queue\":\"team-a\"", "{\"phase\":\"Running\",\"conditions\":["
	       "{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\","
	       "\"message\":\"admitted\",\"lastTransitionTime\":\"" NOW "\"}]}");
	f.in.mode = GANG_KUEUE;
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_kueue(&f, &v, &wl);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_eq(f.plan.status.requeues, 0);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "PodsReadyTimeout");
	fx_release(&f);
}

/*
 * Kueue deletes an evicted group's pods itself: when the cache already shows
 * them gone, the restart still carries Kueue's reason, not "deleted outside cadre".
 */
Test(tj_plan, kueue_eviction_wins_over_the_pods_it_deleted)
{
	struct kueue_workload wl = { "llama-0", KUEUE_WL_EVICTED, "InClusterQueue",
		"Preempted to accommodate a higher priority Workload", "team-a-cq", true };
	struct kueue_view v;
	struct fx f;

	fx_job(&f, ",\"queue\":\"team-a\"", "{\"phase\":\"Running\",\"conditions\":["
	       "{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\","
	       "\"message\":\"admitted\",\"lastTransitionTime\":\"" NOW "\"}],"
	       "\"nodes\":[{\"rank\":0,\"pod\":\"llama-0\"},{\"rank\":1,\"pod\":\"llama-1\"}]}");
	f.in.mode = GANG_KUEUE;
	fx_kueue(&f, &v, &wl);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.requeues, 1);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "InClusterQueue");
	cr_assert(strstr(f.plan.status.message, "higher priority Workload"), "%s",
		  f.plan.status.message);
	fx_release(&f);
}

/* No Workload API (Kueue not installed): the job says so and waits, never admitted. */
Test(tj_plan, kueue_mode_without_kueue_says_so_and_waits)
{
	struct fx f;

	fx_job(&f, ",\"queue\":\"team-a\"", NULL);
	f.in.mode = GANG_KUEUE;
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_not(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "NotManagedByKueue");
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	cr_assert_eq(f.plan.status.admitted_time, 0);
	cr_assert(strstr(f.plan.status.message, "is Kueue installed?"), "%s", f.plan.status.message);
	cr_assert_gt(f.plan.requeue_after_s, 0);
	fx_release(&f);
}

/*
 * A namespace Kueue does not manage: the pods were never gated and no
 * Workload comes. Nothing admitted the job.
 */
Test(tj_plan, kueue_mode_does_not_claim_an_admission_when_kueue_never_took_the_pods)
{
	struct kueue_view v;
	struct fx f;

	fx_job(&f, ",\"queue\":\"team-a\"", NULL);
	f.in.mode = GANG_KUEUE;
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.pods[0].kueue_managed = true;
	fx_kueue(&f, &v, NULL);
	fx_plan(&f);
	cr_assert_not(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "NotManagedByKueue");
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	cr_assert_eq(f.plan.status.admitted_time, 0);
	cr_assert(strstr(f.plan.status.message, "1 of 2 pods are not managed by Kueue"), "%s",
		  f.plan.status.message);
	cr_assert_not(has_event(&f.plan, "Admitted"));
	fx_release(&f);
}

Test(tj_plan, pods_of_an_earlier_attempt_are_deleted_before_anything_else)
{
	struct fx f;

	fx_job(&f, NULL, "{\"phase\":\"Queued\",\"restarts\":1}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 1);
	cr_assert_not(f.plan.needs_admission);
	fx_release(&f);
}

/* What the API server says when Pod Security refuses a pod. */
#define PSA_MESSAGE "pods \"llama-0\" is forbidden: violates PodSecurity \"restricted:latest\": " \
	"runAsNonRoot != true (pod or container \"main\" must set " \
	"securityContext.runAsNonRoot=true)"

static const struct tj_refusal psa_refusal = {
	.pod = "llama-0", .rank = 0, .attempt = 0, .reason = "Forbidden",
	.message = PSA_MESSAGE, .first_time = 1000000,
};

static const char *cond_message(const struct tj_plan *p, const char *type)
{
	const struct condition *c = condition_find(&p->status.conditions, type);

	return c && c->message ? c->message : "(absent)";
}

Test(tj_plan, a_refused_create_says_why_in_the_message_and_the_running_condition)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	f.in.refusal = &psa_refusal;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_STARTING);
	cr_assert_str_eq(f.plan.status.message, "cannot create pod llama-0: " PSA_MESSAGE);
	cr_assert_str_eq(cond_reason(&f.plan, "Running"), "CreateRefused");
	cr_assert(strstr(cond_message(&f.plan, "Running"), "violates PodSecurity"), "%s",
		  cond_message(&f.plan, "Running"));
	/* The create is tried again, and the plan looks again when the gang timeout passes. */
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 2);
	cr_assert_eq(f.plan.requeue_after_s, 600);
	cr_assert_eq(f.plan.status.restarts, 0);
	fx_release(&f);
}

Test(tj_plan, a_create_still_refused_at_the_gang_timeout_counts_against_max_restarts)
{
	struct fx f;

	fx_job(&f, ",\"gang\":{\"timeoutSeconds\":60}", ADMITTED_AT(EARLIER) "}");
	f.in.refusal = &psa_refusal;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_eq(f.plan.status.infra_restarts, 0);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "CreateRefused");
	cr_assert(f.plan.status.has_last_failure);
	cr_assert_str_eq(f.plan.status.last_failure.reason, "CreateRefused");
	cr_assert_str_eq(f.plan.status.last_failure.pod, "llama-0");
	cr_assert(strstr(f.plan.status.last_failure.message, "violates PodSecurity"));
	cr_assert(has_event(&f.plan, "CreateRefused"));
	fx_release(&f);

	fx_job(&f, ",\"maxRestarts\":0,\"gang\":{\"timeoutSeconds\":60}", ADMITTED_AT(EARLIER) "}");
	f.in.refusal = &psa_refusal;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(cond_reason(&f.plan, "Failed"), "MaxRestartsExceeded");
	cr_assert_str_eq(f.plan.status.last_failure.reason, "CreateRefused");
	cr_assert(strstr(f.plan.status.message, "violates PodSecurity"), "%s",
		  f.plan.status.message);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	fx_release(&f);
}

Test(tj_plan, a_refusal_of_another_attempt_or_of_a_pod_that_now_exists_is_ignored)
{
	struct tj_refusal old = psa_refusal;
	struct fx f;

	old.attempt = 1;
	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	f.in.refusal = &old;
	fx_plan(&f);
	cr_assert_str_eq(f.plan.status.message, "0 of 2 pods Running");
	cr_assert_str_eq(cond_reason(&f.plan, "Running"), "Starting");
	fx_release(&f);

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Pending", false, NULL);
	f.in.refusal = &psa_refusal;
	fx_plan(&f);
	cr_assert_str_eq(f.plan.status.message, "0 of 2 pods Running");
	fx_release(&f);
}

Test(tj_plan, in_kueue_mode_a_refused_create_says_why_in_admitted_and_times_out)
{
	struct fx f;

	fx_job(&f, ",\"queue\":\"team-a\"", NULL);
	f.in.mode = GANG_KUEUE;
	f.in.refusal = &psa_refusal;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "CreateRefused");
	cr_assert(strstr(f.plan.status.message, "violates PodSecurity"));
	cr_assert_eq(f.plan.requeue_after_s, 600);
	fx_release(&f);

	fx_job(&f, ",\"queue\":\"team-a\",\"gang\":{\"timeoutSeconds\":60}", NULL);
	f.in.mode = GANG_KUEUE;
	f.in.refusal = &psa_refusal;
	f.in.now += 61;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_str_eq(f.plan.status.last_failure.reason, "CreateRefused");
	fx_release(&f);
}

/* The GitOps conditions of a plan, as kstatus reads them (docs/design.md 1.2). */
static void assert_health(const struct tj_plan *p, const char *reconciling, const char *reason,
			  bool stalled)
{
	const struct condition *r = condition_find(&p->status.conditions, "Reconciling");
	const struct condition *s = condition_find(&p->status.conditions, "Stalled");

	cr_assert_not_null(r, "every phase sets Reconciling");
	cr_assert_str_eq(r->status, reconciling, "Reconciling in phase %s",
			 tj_phase_name(p->status.phase));
	cr_assert_str_eq(r->reason, reason, "Reconciling's reason in phase %s",
			 tj_phase_name(p->status.phase));
	cr_assert_neq(strlen(r->message), 0);
	if (stalled) {
		cr_assert_not_null(s, "a Failed job is Stalled");
		cr_assert_str_eq(s->status, "True");
		cr_assert_str_eq(s->reason, reason);
		cr_assert_str_eq(s->message, p->status.message);
	} else {
		cr_assert(!s || !strcmp(s->status, "False"), "Stalled in phase %s",
			  tj_phase_name(p->status.phase));
	}
	if (!strcmp(reconciling, "True"))
		cr_assert_str_eq(r->message, p->status.message,
				 "a job on its way says the same as status.message");
}

Test(tj_plan, a_queued_job_is_reconciling_with_the_reason_it_waits)
{
	struct fx f;

	fx_job(&f, NULL, NULL);
	f.in.admission = (struct tj_admission){ .verdict = ADMIT_WAIT, .reason = "InsufficientCapacity",
		.message = "needs 2 nodes with 8 nvidia.com/gpu of type H100; 1 node has room" };
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	assert_health(&f.plan, "True", "InsufficientCapacity", false);
	fx_release(&f);

	fx_job(&f, NULL, "{\"phase\":\"Queued\",\"restarts\":1,\"lastFailure\":{\"rank\":1,"
	       "\"exitCode\":3,\"reason\":\"Error\",\"time\":\"" NOW "\"}}");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	assert_health(&f.plan, "True", "RestartBackoff", false);
	fx_release(&f);

	{
		struct kueue_view v;

		fx_job(&f, ",\"queue\":\"team-a\"", NULL);
		f.in.mode = GANG_KUEUE;
		fx_kueue(&f, &v, NULL);
		fx_plan(&f);
		assert_health(&f.plan, "True", "WaitingForKueue", false);
	}
	fx_release(&f);
}

Test(tj_plan, a_pending_job_is_reconciling_until_its_volumes_are_bound)
{
	struct fx f;
	struct tj_volume_state vols[] = { { "/mnt/ckpt", "shared", true, false, NULL } };

	fx_job(&f, NULL, NULL);
	f.in.volumes = vols;
	f.in.n_volumes = 1;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_PENDING);
	assert_health(&f.plan, "True", "VolumeNotBound", false);
	fx_release(&f);
}

Test(tj_plan, a_starting_job_is_reconciling_and_names_what_holds_it)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Pending", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_STARTING);
	assert_health(&f.plan, "True", "PodsStarting", false);
	fx_release(&f);

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Pending", false,
	       ",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"waiting\":"
	       "{\"reason\":\"ImagePullBackOff\",\"message\":\"pull access denied\"}}}]");
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	assert_health(&f.plan, "True", "ImagePullBackOff", false);
	fx_release(&f);
}

Test(tj_plan, a_restarting_job_is_reconciling_with_the_restart_reason)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false,
	       ",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"terminated\":"
	       "{\"exitCode\":3,\"reason\":\"Error\"}}}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	assert_health(&f.plan, "True", "PodFailed", false);
	fx_release(&f);
}

Test(tj_plan, running_and_succeeded_jobs_are_neither_reconciling_nor_stalled)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RUNNING);
	assert_health(&f.plan, "False", "Running", false);
	fx_release(&f);

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Succeeded", false, NULL);
	fx_pod(&f, 1, 0, "Succeeded", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_SUCCEEDED);
	assert_health(&f.plan, "False", "AllSucceeded", false);
	fx_release(&f);
}

Test(tj_plan, a_failed_job_is_stalled_with_the_failed_reason)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) ",\"restarts\":1}");
	fx_pod(&f, 0, 1, "Running", false, NULL);
	fx_pod(&f, 1, 1, "Failed", false,
	       ",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"terminated\":"
	       "{\"exitCode\":3}}}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	assert_health(&f.plan, "False", "MaxRestartsExceeded", true);
	fx_release(&f);

	fx_job(&f, NULL, NULL);
	f.in.invalid = "spec.numNodes: must be >= 1";
	fx_plan(&f);
	assert_health(&f.plan, "False", "InvalidSpec", true);
	fx_release(&f);

	fx_job(&f, ",\"activeDeadlineSeconds\":60", ADMITTED_AT(EARLIER) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	assert_health(&f.plan, "False", "DeadlineExceeded", true);
	fx_release(&f);
}

Test(tj_plan, a_suspended_job_is_current_once_its_pods_are_gone)
{
	struct fx f;

	fx_job(&f, ",\"suspend\":true", ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_SUSPENDED);
	assert_health(&f.plan, "True", "Suspending", false);
	fx_release(&f);

	fx_job(&f, ",\"suspend\":true", "{\"phase\":\"Suspended\"}");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_SUSPENDED);
	assert_health(&f.plan, "False", "Suspended", false);
	fx_release(&f);
}

/* Plan, feed the planned status back as the stored one, plan again later. */
static void replan_later(struct fx *f, int64_t seconds)
{
	tj_status_release(&f->job.status);
	cr_assert_eq(tj_status_copy(&f->job.status, &f->plan.status), 0);
	tj_plan_release(&f->plan);
	f->in.now += seconds;
	fx_plan(f);
}

static void assert_same_status(const struct tj_status *a, const struct tj_status *b)
{
	json_t *ja = tj_status_to_json(a), *jb = tj_status_to_json(b);
	char *ta = json_dumps(ja, JSON_SORT_KEYS), *tb = json_dumps(jb, JSON_SORT_KEYS);

	cr_assert(json_equal(ja, jb), "a second reconcile would write:\n%s\nover\n%s", tb, ta);
	free(ta);
	free(tb);
	json_decref(ja);
	json_decref(jb);
}

Test(tj_plan, the_health_conditions_are_stable_so_nothing_is_written_twice)
{
	struct fx f;
	struct tj_status first;

	fx_job(&f, NULL, NULL);
	f.in.admission = (struct tj_admission){ .verdict = ADMIT_WAIT, .reason = "InsufficientCapacity", .message = "no room" };
	fx_plan(&f);
	cr_assert_eq(tj_status_copy(&first, &f.plan.status), 0);
	replan_later(&f, 100);
	assert_same_status(&first, &f.plan.status);
	tj_status_release(&first);
	fx_release(&f);

	fx_job(&f, NULL, ADMITTED_AT(NOW) ",\"restarts\":1}");
	fx_pod(&f, 0, 1, "Succeeded", false, NULL);
	fx_pod(&f, 1, 1, "Failed", false,
	       ",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"terminated\":"
	       "{\"exitCode\":3}}}]");
	fx_plan(&f);
	cr_assert_eq(tj_status_copy(&first, &f.plan.status), 0);
	replan_later(&f, 100);
	assert_same_status(&first, &f.plan.status);
	tj_status_release(&first);
	fx_release(&f);
}

Test(tj_plan, every_condition_follows_a_new_generation_even_the_untouched_ones)
{
	struct fx f;

	/* Running at generation 1; then spec.maxRestarts is patched: generation 2. */
	fx_job(&f, NULL, "{\"phase\":\"Running\",\"observedGeneration\":1,\"conditions\":["
	       "{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\","
	       "\"message\":\"fits\",\"observedGeneration\":1,\"lastTransitionTime\":\"" EARLIER "\"},"
	       "{\"type\":\"VolumesReady\",\"status\":\"True\",\"reason\":\"NoVolumes\","
	       "\"message\":\"the job mounts no Volumes\",\"observedGeneration\":1,"
	       "\"lastTransitionTime\":\"" EARLIER "\"},"
	       "{\"type\":\"Running\",\"status\":\"True\",\"reason\":\"AllPodsRunning\","
	       "\"message\":\"all 2 pods are Running\",\"observedGeneration\":1,"
	       "\"lastTransitionTime\":\"" EARLIER "\"}]}");
	f.job.meta.generation = 2;
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RUNNING);
	cr_assert_eq(f.plan.status.observed_generation, 2);
	cr_assert_geq(f.plan.status.conditions.len, 4);
	for (size_t i = 0; i < f.plan.status.conditions.len; i++) {
		const struct condition *c = &f.plan.status.conditions.items[i];

		cr_assert_eq(c->observed_generation, 2, "condition %s kept generation %lld",
			     c->type, (long long)c->observed_generation);
	}
	cr_assert_eq(condition_find(&f.plan.status.conditions, "Running")->last_transition_time,
		     1000000 - 400, "a new generation is not a transition");
	fx_release(&f);
}

/* --- native gang mode: kube-scheduler admits the PodGroup (docs/gang-admission.md) --- */

static void fx_native(struct fx *f, const char *status)
{
	fx_job(f, NULL, status);
	f->in.mode = GANG_NATIVE;
}

/* Pods of a PodGroup the scheduler has not placed: created, no node. */
static void fx_unbound_pods(struct fx *f, int attempt)
{
	for (int r = 0; r < 2; r++) {
		fx_pod(f, r, attempt, "Pending", false, NULL);
		f->pods[f->n_pods - 1].node = NULL;
	}
}

static const struct tj_action *action_of(const struct tj_plan *p, enum tj_action_kind kind)
{
	for (size_t i = 0; i < p->n_actions; i++)
		if (p->actions[i].kind == kind)
			return &p->actions[i];
	return NULL;
}

/* The pods follow in the same pass, after it: one pass, not two, before the scheduler sees them. */
Test(tj_plan, native_mode_creates_the_pod_group_first_and_the_pods_after_it)
{
	struct fx f;

	fx_native(&f, NULL);
	fx_plan(&f);
	cr_assert_not(f.plan.needs_admission);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_PODGROUP), 1);
	cr_assert_eq(action_of(&f.plan, TJ_CREATE_PODGROUP)->attempt, 0);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 2);
	for (size_t i = 0; i < f.plan.n_actions; i++)
		cr_assert(f.plan.actions[i].kind != TJ_CREATE_POD ||
			  action_of(&f.plan, TJ_CREATE_PODGROUP) < &f.plan.actions[i],
			  "a pod create before the PodGroup's");
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "WaitingForScheduler");
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	fx_release(&f);
}

Test(tj_plan, native_mode_creates_every_pod_once_the_pod_group_exists)
{
	struct tj_podgroup pg = { .name = "llama-attempt-0", .attempt = 0 };
	struct fx f;

	fx_native(&f, NULL);
	f.in.podgroups = &pg;
	f.in.n_podgroups = 1;
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_PODGROUP), 0);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 2);
	cr_assert_not(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "WaitingForScheduler");
	fx_release(&f);
}

/*
 * The pass that makes the group sends its pods too: the wait says the same
 * before and after the cache shows them, so it is one status write.
 */
Test(tj_plan, a_native_gang_s_wait_says_the_same_before_and_after_its_group_and_pods_are_seen)
{
	struct tj_podgroup pg = { .name = "llama-attempt-0", .attempt = 0 };
	struct fx f;
	json_t *first, *later;

	fx_native(&f, NULL);
	fx_plan(&f);
	cr_assert_str_eq(f.plan.status.message,
			 "waiting for kube-scheduler to place pod group llama-attempt-0 (2 pods)");
	first = tj_status_to_json(&f.plan.status);
	fx_release(&f);

	fx_native(&f, NULL);
	f.in.podgroups = &pg;
	f.in.n_podgroups = 1;
	fx_pod(&f, 0, 0, "Pending", false, NULL);
	fx_plan(&f);
	later = tj_status_to_json(&f.plan.status);
	fx_release(&f);
	cr_assert(first && later);
	cr_assert(json_equal(first, later), "the wait was said twice");
	json_decref(first);
	json_decref(later);
}

Test(tj_plan, native_mode_mirrors_an_unschedulable_pod_group_with_the_schedulers_message)
{
	struct tj_podgroup pg = { .name = "llama-attempt-0", .attempt = 0,
				  .state = TJ_PODGROUP_UNSCHEDULABLE, .reason = "Unschedulable",
				  .message = "pod group is unschedulable" };
	struct fx f;

	fx_native(&f, NULL);
	fx_unbound_pods(&f, 0);
	f.in.podgroups = &pg;
	f.in.n_podgroups = 1;
	fx_plan(&f);
	cr_assert_not(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "Unschedulable");
	cr_assert(strstr(cond_message(&f.plan, "Admitted"), "pod group is unschedulable"));
	cr_assert(strstr(f.plan.status.message, "pod group is unschedulable"), "%s",
		  f.plan.status.message);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	cr_assert_eq(f.plan.status.admitted_time, 0);
	cr_assert(has_event(&f.plan, "Unschedulable"));
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	fx_release(&f);
}

Test(tj_plan, native_mode_admits_when_the_scheduler_placed_the_pod_group)
{
	struct tj_podgroup pg = { .name = "llama-attempt-0", .attempt = 0,
				  .state = TJ_PODGROUP_SCHEDULED, .reason = "Scheduled" };
	struct fx f;

	fx_native(&f, NULL);
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.podgroups = &pg;
	f.in.n_podgroups = 1;
	fx_plan(&f);
	cr_assert(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert(f.plan.admitted_now);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RUNNING);
	fx_release(&f);
}

Test(tj_plan, native_mode_a_disrupted_pod_group_is_requeued_not_failed)
{
	struct tj_podgroup pg = { .name = "llama-attempt-0", .attempt = 0,
				  .state = TJ_PODGROUP_SCHEDULED, .disrupted = true,
				  .disruption_message = "preempted by ml/urgent" };
	struct fx f;

	fx_native(&f, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.podgroups = &pg;
	f.in.n_podgroups = 1;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.restarts, 0);
	cr_assert_eq(f.plan.status.infra_restarts, 0);
	cr_assert_eq(f.plan.status.requeues, 1, "a preemption is no failure");
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "Preempted");
	cr_assert(strstr(cond_message(&f.plan, "Restarting"), "preempted by ml/urgent"));
	fx_release(&f);
}

Test(tj_plan, native_mode_a_restart_deletes_the_old_pod_group_and_creates_the_next)
{
	struct tj_podgroup pg = { .name = "llama-attempt-0", .attempt = 0,
				  .state = TJ_PODGROUP_SCHEDULED };
	const struct tj_action *del;
	struct fx f;

	fx_native(&f, "{\"phase\":\"Queued\",\"restarts\":1}");
	f.in.podgroups = &pg;
	f.in.n_podgroups = 1;
	fx_plan(&f);
	del = action_of(&f.plan, TJ_DELETE_PODGROUP);
	cr_assert_not_null(del);
	cr_assert_str_eq(del->pod, "llama-attempt-0");
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_PODGROUP), 1);
	cr_assert_eq(action_of(&f.plan, TJ_CREATE_PODGROUP)->attempt, 1);
	/* The old PodGroup said Scheduled: that is not attempt 1's admission. */
	cr_assert_not(condition_is_true(&f.plan.status.conditions, "Admitted"));
	/* Attempt 0's pods are gone: attempt 1's follow its PodGroup in the same pass. */
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 2);
	fx_release(&f);
}

Test(tj_plan, other_modes_never_touch_pod_groups)
{
	struct tj_podgroup pg = { .name = "llama-attempt-0", .attempt = 0 };
	struct fx f;

	fx_job(&f, NULL, "{\"phase\":\"Queued\",\"restarts\":1}");
	f.in.podgroups = &pg;
	f.in.n_podgroups = 1;
	f.in.admission = ADMIT_ON_N0_N1("fits");
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_PODGROUP), 0);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_PODGROUP), 0);
	fx_release(&f);
}

Test(tj_plan, a_pod_group_is_read_from_either_served_version)
{
	const char *alpha =
		"{\"metadata\":{\"name\":\"llama-attempt-1\",\"labels\":"
		"{\"cadre.dev/restart-attempt\":\"1\"}},\"status\":{\"conditions\":["
		"{\"type\":\"PodGroupScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\","
		"\"message\":\"pod group is unschedulable\"}]}}";
	const char *beta =
		"{\"metadata\":{\"name\":\"llama-attempt-0\",\"deletionTimestamp\":\"x\","
		"\"labels\":{\"cadre.dev/restart-attempt\":\"0\"}},\"status\":{\"conditions\":["
		"{\"type\":\"PodGroupInitiallyScheduled\",\"status\":\"True\"},"
		"{\"type\":\"DisruptionTarget\",\"status\":\"True\",\"message\":\"preempted\"}]}}";
	const char *foreign = "{\"metadata\":{\"name\":\"theirs\"}}";
	struct tj_podgroup pg;
	json_t *a = json_loads(alpha, 0, NULL), *b = json_loads(beta, 0, NULL);
	json_t *f = json_loads(foreign, 0, NULL);

	cr_assert_eq(tj_podgroup_read(a, &pg), 0);
	cr_assert_eq(pg.attempt, 1);
	cr_assert_eq(pg.state, TJ_PODGROUP_UNSCHEDULABLE);
	cr_assert_str_eq(pg.message, "pod group is unschedulable");
	cr_assert_not(pg.disrupted);
	cr_assert_eq(tj_podgroup_read(b, &pg), 0);
	cr_assert_eq(pg.state, TJ_PODGROUP_SCHEDULED);
	cr_assert(pg.deleting);
	cr_assert(pg.disrupted);
	cr_assert_str_eq(pg.disruption_message, "preempted");
	cr_assert_eq(tj_podgroup_read(f, &pg), CADRE_EINVAL);
	json_decref(a);
	json_decref(b);
	json_decref(f);
}

Test(tj_plan, native_mode_makes_the_service_once_before_and_after_admission)
{
	struct tj_podgroup pg = { .name = "llama-attempt-0", .attempt = 0,
				  .state = TJ_PODGROUP_SCHEDULED };
	struct fx f;

	fx_native(&f, NULL);
	f.in.service_exists = false;
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_SERVICE), 1);
	fx_release(&f);

	/* Admitted in this very pass: still one create. */
	fx_native(&f, NULL);
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.podgroups = &pg;
	f.in.n_podgroups = 1;
	f.in.service_exists = false;
	fx_plan(&f);
	cr_assert(f.plan.admitted_now);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_SERVICE), 1);
	fx_release(&f);

	/* Running, its Service deleted by someone: made again. */
	fx_native(&f, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.podgroups = &pg;
	f.in.n_podgroups = 1;
	f.in.service_exists = false;
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_SERVICE), 1);
	fx_release(&f);
}

Test(tj_plan, a_young_start_s_progress_alone_is_not_a_status_write)
{
	json_t *stored = json_pack("{s:s, s:i, s:s, s:[], s:[{s:s, s:s}]}", "phase", "Starting",
				   "readyNodes", 0, "message", "0 of 2 pods Running", "nodes",
				   "conditions", "type", "Admitted", "status", "True");
	json_t *moved = json_pack("{s:s, s:i, s:s, s:[{s:i, s:s}], s:[{s:s, s:s}]}", "phase",
				  "Starting", "readyNodes", 1, "message", "1 of 2 pods Running",
				  "nodes", "rank", 0, "node", "n0", "conditions", "type", "Admitted",
				  "status", "True");
	json_t *running = json_deep_copy(moved), *troubled = json_deep_copy(moved);

	json_object_set_new(running, "phase", json_string("Running"));
	json_array_append_new(json_object_get(troubled, "conditions"),
			      json_pack("{s:s, s:s}", "type", "Restarting", "status", "True"));
	int64_t quiet = tj_status_quiet_until(1000, 0);

	cr_assert(tj_status_progress_only(stored, moved, quiet, 1000));
	cr_assert(tj_status_progress_only(stored, moved, quiet, 1000 + TJ_START_QUIET_S - 1));
	cr_assert_not(tj_status_progress_only(stored, moved, quiet, 1000 + TJ_START_QUIET_S),
		      "after the quiet time, progress is written");
	cr_assert_not(tj_status_progress_only(stored, moved, tj_status_quiet_until(0, 0), 1000),
		      "not admitted");
	cr_assert_not(tj_status_progress_only(stored, running, quiet, 1001), "Running is written");
	cr_assert_not(tj_status_progress_only(stored, troubled, quiet, 1001),
		      "a condition that changes is written");
	/* What the start waits for flips as pods bind: PodsStarting, Unschedulable, ... */
	json_t *reasoned = json_deep_copy(moved), *flipped = json_deep_copy(moved);

	json_array_append_new(json_object_get(reasoned, "conditions"),
			      json_pack("{s:s, s:s, s:s, s:s}", "type", "Reconciling", "status",
					"True", "reason", "PodsStarting", "message",
					"1 of 2 pods Running"));
	json_array_append_new(json_object_get(flipped, "conditions"),
			      json_pack("{s:s, s:s, s:s, s:s}", "type", "Reconciling", "status",
					"True", "reason", "Unschedulable", "message",
					"rank 1 (pod p-1) is unschedulable"));
	cr_assert(tj_status_progress_only(reasoned, flipped, quiet, 1001),
		  "the Reconciling reason alone is written with the progress");
	cr_assert_not(tj_status_progress_only(reasoned, flipped, quiet, 1000 + TJ_START_QUIET_S));
	json_decref(reasoned);
	json_decref(flipped);
	json_decref(stored);
	json_decref(moved);
	json_decref(running);
	json_decref(troubled);
}

Test(tj_plan, a_long_start_s_progress_is_written_at_most_once_per_quiet_time)
{
	json_t *stored = json_pack("{s:s, s:i, s:s, s:[], s:[{s:s, s:s}]}", "phase", "Starting",
				   "readyNodes", 3, "message", "3 of 1024 pods Running", "nodes",
				   "conditions", "type", "Admitted", "status", "True");
	json_t *moved = json_pack("{s:s, s:i, s:s, s:[], s:[{s:s, s:s}]}", "phase", "Starting",
				  "readyNodes", 4, "message", "4 of 1024 pods Running", "nodes",
				  "conditions", "type", "Admitted", "status", "True");
	/* Admitted at 1000; progress last written at 1030, so quiet until 1040. */
	int64_t after_write = tj_status_quiet_until(1000, 1030 + TJ_START_QUIET_S);

	cr_assert_eq(tj_status_quiet_until(1000, 0), 1000 + TJ_START_QUIET_S);
	cr_assert_eq(tj_status_quiet_until(1000, 1005), 1000 + TJ_START_QUIET_S,
		     "the quiet time after admission is the least");
	cr_assert_eq(after_write, 1030 + TJ_START_QUIET_S);
	cr_assert(tj_status_progress_only(stored, moved, after_write, 1031),
		  "a pod event just after a progress write is not written");
	cr_assert(tj_status_progress_only(stored, moved, after_write, 1030 + TJ_START_QUIET_S - 1));
	cr_assert_not(tj_status_progress_only(stored, moved, after_write, 1030 + TJ_START_QUIET_S),
		      "once the quiet time is over, the progress is written");
	cr_assert_eq(tj_status_quiet_until(0, 0), 0, "not admitted, nothing written: nothing is held");
	cr_assert_eq(tj_status_quiet_until(0, 1040), 1040,
		     "not admitted (a native gang's wait): the quiet time after our last write");
	json_decref(stored);
	json_decref(moved);
}

/* A native gang counts its pods while kube-scheduler places it: that alone waits too. */
Test(tj_plan, a_native_gang_s_pod_count_while_the_scheduler_waits_is_held_but_its_verdict_is_not)
{
	const char *fmt = "{s:s, s:s, s:[{s:s, s:s, s:s, s:s}]}";
	json_t *creating = json_pack(fmt, "phase", "Queued", "message",
				     "creating the PodGroup of attempt 0 (64 pods)", "conditions",
				     "type", "Admitted", "status", "False", "reason",
				     "WaitingForScheduler", "message", "creating");
	json_t *counted = json_pack(fmt, "phase", "Queued", "message",
				    "waiting for kube-scheduler to place pod group x (64 of 64 pods created)",
				    "conditions", "type", "Admitted", "status", "False", "reason",
				    "WaitingForScheduler", "message", "waiting");
	json_t *refused = json_pack(fmt, "phase", "Queued", "message", "cannot place",
				    "conditions", "type", "Admitted", "status", "False", "reason",
				    "Unschedulable", "message", "cannot place");
	json_t *capacity = json_pack(fmt, "phase", "Queued", "message", "2 of 64 nodes free",
				     "conditions", "type", "Admitted", "status", "False", "reason",
				     "InsufficientCapacity", "message", "2 free");
	json_t *capacity2 = json_pack(fmt, "phase", "Queued", "message", "3 of 64 nodes free",
				      "conditions", "type", "Admitted", "status", "False", "reason",
				      "InsufficientCapacity", "message", "3 free");
	/* Not admitted; our first write of the wait was at 1000 (tj_reconcile keeps it). */
	int64_t quiet = tj_status_quiet_until(0, 1000 + TJ_START_QUIET_S);

	cr_assert(tj_status_waiting_for_scheduler(creating));
	cr_assert_not(tj_status_waiting_for_scheduler(refused));
	cr_assert(tj_status_progress_only(creating, counted, quiet, 1001));
	cr_assert_not(tj_status_progress_only(creating, counted, quiet, 1000 + TJ_START_QUIET_S),
		      "once the quiet time is over, the count is written");
	cr_assert_not(tj_status_progress_only(creating, refused, quiet, 1001),
		      "the scheduler's verdict is written at once");
	cr_assert_not(tj_status_progress_only(capacity, capacity2, quiet, 1001),
		      "the built-in queue's messages are not held");
	json_decref(creating);
	json_decref(counted);
	json_decref(refused);
	json_decref(capacity);
	json_decref(capacity2);
}

/*
 * A 1024-node start on a busy cluster takes about a minute: Admitted, its
 * progress once, Running; three status writes. Slower ones once a minute.
 */
Test(tj_plan, a_start_s_progress_is_written_after_the_first_quiet_time_then_once_a_minute)
{
	cr_assert_eq(tj_status_quiet_after_write(1000, 1000), 1000 + TJ_START_QUIET_S,
		     "the admission's own write keeps the first quiet time");
	cr_assert_eq(tj_status_quiet_after_write(1000, 1004), 1000 + TJ_START_QUIET_S);
	cr_assert_eq(tj_status_quiet_after_write(1000, 1000 + TJ_START_QUIET_S),
		     1000 + TJ_START_QUIET_S + TJ_PROGRESS_EVERY_S,
		     "after the first progress write, the next is a minute away");
	cr_assert_eq(tj_status_quiet_after_write(1000, 1100), 1100 + TJ_PROGRESS_EVERY_S);
	cr_assert_eq(tj_status_quiet_after_write(0, 1100), 1100 + TJ_PROGRESS_EVERY_S,
		     "not admitted: from the write");
	cr_assert_gt(TJ_PROGRESS_EVERY_S, TJ_START_QUIET_S);
}

/* What a written status begins: a start's quiet time, a native wait's, or none. */
Test(tj_plan, a_status_write_begins_the_quiet_time_of_a_start_or_of_a_native_wait_only)
{
	json_t *starting = json_pack("{s:s}", "phase", "Starting");
	json_t *queued = json_pack("{s:s, s:[{s:s, s:s, s:s}]}", "phase", "Queued", "conditions",
				   "type", "Admitted", "status", "False", "reason",
				   "InsufficientCapacity");
	json_t *waiting = json_pack("{s:s, s:[{s:s, s:s, s:s}]}", "phase", "Queued", "conditions",
				    "type", "Admitted", "status", "False", "reason",
				    "WaitingForScheduler");

	cr_assert_eq(tj_status_quiet_after(queued, starting, 1000, 1004),
		     tj_status_quiet_after_write(1000, 1004));
	cr_assert_eq(tj_status_quiet_after(queued, waiting, 0, 1000), 1000 + TJ_START_QUIET_S,
		     "the wait's first write begins the first quiet time");
	cr_assert_eq(tj_status_quiet_after(waiting, waiting, 0, 1000), 1000 + TJ_PROGRESS_EVERY_S,
		     "a later write of the wait: a minute");
	cr_assert_eq(tj_status_quiet_after(NULL, queued, 0, 1000), 0,
		     "the built-in queue's messages are never held");
	cr_assert_eq(tj_status_quiet_after(waiting, starting, 1034, 1034), 1034 + TJ_PROGRESS_EVERY_S,
		     "a native admission after its wait: the wait had the first quiet time");
	json_decref(starting);
	json_decref(queued);
	json_decref(waiting);
}

Test(tj_plan, the_planner_s_own_progress_statuses_during_a_start_are_progress_only)
{
	struct fx f;
	json_t *before, *after;

	/* Both ranks ungated and bound, none Running yet; then rank 0 runs. */
	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Pending", false, NULL);
	fx_pod(&f, 1, 0, "Pending", false, NULL);
	fx_plan(&f);
	before = tj_status_to_json(&f.plan.status);
	fx_release(&f);

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Pending", false, NULL);
	fx_plan(&f);
	after = tj_status_to_json(&f.plan.status);
	cr_assert_not(json_equal(before, after), "the start moved on");
	cr_assert(tj_status_progress_only(before, after, tj_status_quiet_until(f.in.now, 0),
					  f.in.now + 1),
		  "only nodes, readyNodes and the messages changed");
	json_decref(before);
	json_decref(after);
	fx_release(&f);
}

/* --- the entrypoint ConfigMap the pods mount (docs/pods.md) --- */

/* The index of the first action of kind, or n_actions when there is none. */
static size_t first_action(const struct tj_plan *p, enum tj_action_kind kind)
{
	for (size_t i = 0; i < p->n_actions; i++)
		if (p->actions[i].kind == kind)
			return i;
	return p->n_actions;
}

/* Plan f with no entrypoint ConfigMap yet: it comes once, before any pod create. */
static void assert_entrypoint_first(struct fx *f, const char *mode, size_t want_pods)
{
	f->in.entrypoint_exists = false;
	fx_plan(f);
	cr_assert_eq(count_actions(&f->plan, TJ_CREATE_ENTRYPOINT), 1, "%s", mode);
	cr_assert_eq(count_actions(&f->plan, TJ_CREATE_POD), want_pods, "%s", mode);
	cr_assert_eq(first_action(&f->plan, TJ_CREATE_ENTRYPOINT), 0,
		     "%s: the ConfigMap is the first action", mode);
	for (size_t i = 0; i < f->plan.n_actions; i++)
		cr_assert(f->plan.actions[i].kind != TJ_CREATE_POD ||
			  i > first_action(&f->plan, TJ_CREATE_ENTRYPOINT),
			  "%s: a pod create before the ConfigMap", mode);
	fx_release(f);
}

Test(tj_plan, the_entrypoint_configmap_is_planned_before_any_pod_in_every_gang_mode)
{
	struct tj_podgroup pg = { .name = "llama-attempt-0", .attempt = 0 };
	struct kueue_workload wl = { "llama-0", KUEUE_WL_PENDING, "Pending", "waiting", NULL, false };
	struct kueue_view v;
	struct fx f;

	fx_job(&f, NULL, NULL);
	f.in.service_exists = false;
	f.in.admission = ADMIT_ON_N0_N1("fits on n0, n1");
	assert_entrypoint_first(&f, "builtin", 2);

	fx_job(&f, NULL, NULL);
	f.in.mode = GANG_NONE;
	assert_entrypoint_first(&f, "none", 2);

	/* Kueue admits pods that exist: they, and so the ConfigMap, come before admission. */
	fx_job(&f, ",\"queue\":\"team-a\"", NULL);
	f.in.mode = GANG_KUEUE;
	f.in.service_exists = false;
	fx_kueue(&f, &v, &wl);
	assert_entrypoint_first(&f, "kueue", 2);

	fx_native(&f, NULL);
	f.in.podgroups = &pg;
	f.in.n_podgroups = 1;
	assert_entrypoint_first(&f, "native", 2);

	/* Native mode's first pass makes the PodGroup and the pods; the ConfigMap still comes first. */
	fx_native(&f, NULL);
	assert_entrypoint_first(&f, "native, no PodGroup yet", 2);
}

Test(tj_plan, the_entrypoint_configmap_is_not_planned_when_it_exists_or_no_pod_is_missing)
{
	struct fx f;

	fx_job(&f, NULL, NULL);
	f.in.admission = ADMIT_ON_N0_N1("fits on n0, n1");
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 2);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_ENTRYPOINT), 0);
	fx_release(&f);

	/* A running gang creates nothing: an earlier controller's script is left until then. */
	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.entrypoint_exists = false;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RUNNING);
	cr_assert_eq(f.plan.n_actions, 0);
	fx_release(&f);

	/* Nor while an earlier pod create is unseen: no pod is created in that pass. */
	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Pending", false, NULL);
	f.in.entrypoint_exists = false;
	f.in.expectations_met = false;
	fx_plan(&f);
	cr_assert_eq(f.plan.n_actions, 0);
	fx_release(&f);

	/*
	 * Queued, not admitted: a built-in gang gets its ConfigMap while it
	 * waits (so that admission has only the pods to make); a Kueue gang
	 * only when it makes its pods, which Kueue needs to see.
	 */
	fx_job(&f, NULL, NULL);
	f.in.entrypoint_exists = false;
	f.in.admission = (struct tj_admission){ .verdict = ADMIT_WAIT, .reason = "InsufficientCapacity", .message = "no room" };
	fx_plan(&f);
	cr_assert_eq(f.plan.n_actions, 1);
	cr_assert_eq(f.plan.actions[0].kind, TJ_CREATE_ENTRYPOINT);
	fx_release(&f);
}

#define CLASH_MESSAGE "ConfigMap llama-entrypoint already exists and has no owner, so it is " \
	"not this TrainingJob's; cadre leaves it alone: delete or rename it and the job's " \
	"pods are created"

static const struct tj_refusal clash_refusal = {
	.pod = "llama-entrypoint", .rank = TJ_REFUSAL_ENTRYPOINT, .attempt = 0,
	.reason = "AlreadyExists", .message = CLASH_MESSAGE, .first_time = 1000000,
};

Test(tj_plan, a_configmap_that_is_not_the_jobs_holds_every_pod_and_says_which)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	f.in.entrypoint_exists = false;
	f.in.refusal = &clash_refusal;
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0, "a pod would mount another's script");
	/* Tried again each pass: the ConfigMap may have gone since. */
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_ENTRYPOINT), 1);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_STARTING);
	cr_assert_str_eq(f.plan.status.message, "cannot create ConfigMap llama-entrypoint: "
			 CLASH_MESSAGE);
	cr_assert_str_eq(cond_reason(&f.plan, "Running"), "CreateRefused");
	cr_assert_str_eq(cond_reason(&f.plan, "Reconciling"), "CreateRefused");
	cr_assert_eq(f.plan.requeue_after_s, 600);
	fx_release(&f);

	/* Before admission (Kueue): the same words in Admitted. */
	fx_job(&f, ",\"queue\":\"team-a\"", NULL);
	f.in.mode = GANG_KUEUE;
	f.in.entrypoint_exists = false;
	f.in.refusal = &clash_refusal;
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "CreateRefused");
	cr_assert(strstr(cond_message(&f.plan, "Admitted"), "llama-entrypoint"));
	fx_release(&f);

	/* Once the job's own ConfigMap is there, the refusal no longer holds. */
	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	f.in.refusal = &clash_refusal;
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 2);
	cr_assert_str_eq(f.plan.status.message, "0 of 2 pods Running");
	fx_release(&f);
}

#define SERVICE_CLASH "Service llama already exists and belongs to TrainingJob llama, not to " \
	"this TrainingJob; cadre leaves it alone: delete or rename it and the job's pods are " \
	"created"

static const struct tj_refusal service_refusal = {
	.pod = "llama", .rank = TJ_REFUSAL_SERVICE, .attempt = 0,
	.reason = "AlreadyExists", .message = SERVICE_CLASH, .first_time = 1000000,
};

Test(tj_plan, a_service_that_is_not_the_jobs_holds_every_pod_and_says_which)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	f.in.service_exists = false;
	f.in.refusal = &service_refusal;
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0, "no rank would find its peers");
	/* Tried again each pass: the other Service may have gone since. */
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_SERVICE), 1);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_STARTING);
	cr_assert_str_eq(f.plan.status.message, "cannot create Service llama: " SERVICE_CLASH);
	cr_assert_str_eq(cond_reason(&f.plan, "Running"), "CreateRefused");
	fx_release(&f);

	/* Once the job's own Service is there, the refusal no longer holds. */
	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	f.in.refusal = &service_refusal;
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 2);
	cr_assert_str_eq(f.plan.status.message, "0 of 2 pods Running");
	fx_release(&f);

	/* A gang already whole found its peers: it is not held, nor restarted, for it. */
	fx_job(&f, ",\"gang\":{\"timeoutSeconds\":60}", ADMITTED_AT(EARLIER) "}");
	f.in.service_exists = false;
	f.in.refusal = &service_refusal;
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RUNNING);
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 0);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_SERVICE), 1);
	fx_release(&f);
}

Test(tj_plan, a_service_clash_past_the_gang_timeout_counts_against_max_restarts)
{
	struct fx f;

	fx_job(&f, ",\"maxRestarts\":0,\"gang\":{\"timeoutSeconds\":60}", ADMITTED_AT(EARLIER) "}");
	f.in.service_exists = false;
	f.in.refusal = &service_refusal;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(f.plan.status.last_failure.reason, "CreateRefused");
	cr_assert_null(f.plan.status.last_failure.pod, "a Service is not a pod");
	cr_assert(strstr(f.plan.status.message, "Service llama"), "%s", f.plan.status.message);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	fx_release(&f);
}

Test(tj_plan, a_configmap_clash_past_the_gang_timeout_counts_against_max_restarts)
{
	struct fx f;

	fx_job(&f, ",\"maxRestarts\":0,\"gang\":{\"timeoutSeconds\":60}", ADMITTED_AT(EARLIER) "}");
	f.in.entrypoint_exists = false;
	f.in.refusal = &clash_refusal;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(cond_reason(&f.plan, "Failed"), "MaxRestartsExceeded");
	cr_assert_str_eq(f.plan.status.last_failure.reason, "CreateRefused");
	cr_assert_null(f.plan.status.last_failure.pod, "a ConfigMap is not a pod");
	cr_assert(strstr(f.plan.status.message, "ConfigMap llama-entrypoint"), "%s",
		  f.plan.status.message);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	fx_release(&f);
}

/* ---- long runs: hangs, nodes left behind, the cap on infrastructure restarts ---- */

#define HUNG_STATUS ",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"terminated\":" \
	"{\"exitCode\":125,\"reason\":\"Error\",\"message\":\"cadre: hung: rank 1 no progress " \
	"for 30s (spec.hang.progressSeconds)\"}}}]"

static const struct tj_excluded_node *excluded(const struct tj_plan *p, const char *node)
{
	for (size_t i = 0; i < p->status.n_excluded_nodes; i++)
		if (!strcmp(p->status.excluded_nodes[i].node, node))
			return &p->status.excluded_nodes[i];
	return NULL;
}

#define RUNNING_ON_N0_N1 "{\"phase\":\"Running\",\"admittedTime\":\"" NOW "\"," \
	"\"conditions\":[{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\"," \
	"\"message\":\"\",\"lastTransitionTime\":\"" NOW "\"}]," DECIDED_NODES "}"

static bool n1_evicts(void *ctx, const char *node)
{
	(void)ctx;
	return !strcmp(node, "n1");
}

/*
 * A running rank's pod gone without a word from a node with a NoExecute
 * taint the job does not tolerate: the taint's eviction (the controller
 * manager deletes the pod), so the node is left behind as Tainted. From a
 * node without one it is a delete outside cadre, and no node is blamed.
 */
Test(tj_plan, a_pod_gone_from_an_untolerated_noexecute_node_leaves_the_node_behind)
{
	struct fx f;

	fx_job(&f, NULL, RUNNING_ON_N0_N1);
	fx_pod(&f, 0, 0, "Running", false, NULL);
	f.in.node_evicts = n1_evicts;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_not_null(excluded(&f.plan, "n1"));
	cr_assert_str_eq(excluded(&f.plan, "n1")->reason, "Tainted");
	cr_assert(strstr(f.plan.status.message, "NoExecute taint of node n1"), "%s",
		  f.plan.status.message);
	fx_release(&f);

	fx_job(&f, NULL, RUNNING_ON_N0_N1);
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.n_excluded_nodes, 0, "%s", f.plan.status.message);
	cr_assert(strstr(f.plan.status.message, "deleted outside cadre"), "%s",
		  f.plan.status.message);
	fx_release(&f);
}

Test(tj_plan, a_hung_rank_restarts_the_gang_as_the_jobs_failure_naming_rank_and_node)
{
	struct fx f;

	fx_job(&f, ",\"hang\":{\"progressSeconds\":30}", ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false, HUNG_STATUS);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "Hung");
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_eq(f.plan.status.infra_restarts, 0);
	cr_assert_str_eq(f.plan.status.last_failure.reason, "Hung");
	cr_assert_eq(f.plan.status.last_failure.rank, 1);
	cr_assert_str_eq(f.plan.status.last_failure.node, "n1");
	cr_assert(strstr(f.plan.status.last_failure.message, "no progress for 30s"), "%s",
		  f.plan.status.last_failure.message);
	cr_assert(has_event(&f.plan, "Hung"));
	cr_assert_eq(f.plan.status.n_excluded_nodes, 0, "one hang is no evidence against a node");
	cr_assert_eq(f.plan.status.n_failures, 1);
	cr_assert_str_eq(f.plan.status.failures[0].reason, "Hung");
	fx_release(&f);
}

Test(tj_plan, with_hang_action_fail_a_hung_rank_fails_the_job)
{
	struct fx f;

	fx_job(&f, ",\"hang\":{\"progressSeconds\":30,\"action\":\"Fail\"}", ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false, HUNG_STATUS);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(cond_reason(&f.plan, "Failed"), "Hung");
	cr_assert_eq(f.plan.status.restarts, 0);
	fx_release(&f);
}

Test(tj_plan, the_same_node_hung_twice_in_a_row_is_left_behind_and_not_the_jobs_fault)
{
	struct fx f;

	fx_job(&f, ",\"hang\":{\"progressSeconds\":30}", ADMITTED_BARE(NOW) ",\"restarts\":1,"
	       DECIDED_NODES ",\"lastFailure\":{\"rank\":1,\"node\":\"n1\",\"reason\":\"Hung\","
	       "\"exitCode\":125}}");
	fx_pod(&f, 0, 1, "Running", false, NULL);
	fx_pod(&f, 1, 1, "Failed", false, HUNG_STATUS);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_not_null(excluded(&f.plan, "n1"));
	cr_assert_str_eq(excluded(&f.plan, "n1")->reason, "Hung");
	cr_assert_str_eq(event_of(&f.plan, "NodeExcluded")->node, "n1",
			 "the Node gets a Warning event too");
	fx_release(&f);
}

Test(tj_plan, a_lost_node_is_left_behind_with_its_reason_and_time)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.node_ok = node_n1_lost;
	fx_plan(&f);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "NodeLost");
	cr_assert_not_null(excluded(&f.plan, "n1"));
	cr_assert_str_eq(excluded(&f.plan, "n1")->reason, "NodeLost");
	cr_assert_eq(excluded(&f.plan, "n1")->time, 1000000);
	fx_release(&f);
}

Test(tj_plan, node_pressure_a_noexecute_taint_and_a_bad_device_each_leave_the_node_behind)
{
	static const struct { const char *status, *cond, *reason; } cases[] = {
		{ ",\"reason\":\"Evicted\",\"message\":\"The node was low on resource: memory.\"",
		  "Evicted", "NodePressure" },
		{ ",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
		  "\"reason\":\"DeletionByTaintManager\",\"message\":\"Taint manager: deleting due "
		  "to NoExecute taint\"}]", "Evicted", "Tainted" },
		{ ",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"running\":{}},"
		  "\"allocatedResourcesStatus\":[{\"name\":\"nvidia.com/gpu\",\"resources\":["
		  "{\"resourceID\":\"GPU-3\",\"health\":\"Unhealthy\"}]}]}]",
		  "DeviceUnhealthy", "DeviceUnhealthy" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx f;

		fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
		fx_pod(&f, 0, 0, "Running", false, NULL);
		fx_pod(&f, 1, 0, i == 2 ? "Running" : "Failed", false, cases[i].status);
		fx_plan(&f);
		cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING, "case %zu", i);
		cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), cases[i].cond, "case %zu", i);
		cr_assert_eq(f.plan.status.infra_restarts, 1, "case %zu", i);
		cr_assert_not_null(excluded(&f.plan, "n1"), "case %zu", i);
		cr_assert_str_eq(excluded(&f.plan, "n1")->reason, cases[i].reason);
		fx_release(&f);
	}
	/* An eviction that says nothing of the node leaves it in use. */
	{
		struct fx f;

		fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
		fx_pod(&f, 0, 0, "Running", false, NULL);
		fx_pod(&f, 1, 0, "Failed", false, ",\"reason\":\"Evicted\",\"message\":\"preempted\"");
		fx_plan(&f);
		cr_assert_eq(f.plan.status.n_excluded_nodes, 0);
		fx_release(&f);
	}
}

Test(tj_plan, excluded_nodes_are_capped_at_a_quarter_of_the_gang_and_lapse_after_a_day)
{
	struct fx f;

	/* numNodes 2: room for one; the newest replaces the oldest. */
	fx_job(&f, NULL, ADMITTED_BARE(NOW) "," DECIDED_NODES ",\"excludedNodes\":[{\"node\":"
	       "\"old\",\"reason\":\"NodeLost\",\"time\":\"" EARLIER "\"}]}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.node_ok = node_n1_lost;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.n_excluded_nodes, 1);
	cr_assert_str_eq(f.plan.status.excluded_nodes[0].node, "n1");
	fx_release(&f);

	/* 1970-01-11: more than a day before now: gone at the next look. */
	fx_job(&f, NULL, "{\"phase\":\"Queued\",\"excludedNodes\":[{\"node\":\"stale\","
	       "\"reason\":\"NodeLost\",\"time\":\"1970-01-11T10:00:00Z\"},{\"node\":\"fresh\","
	       "\"reason\":\"NodeLost\",\"time\":\"" EARLIER "\"}]}");
	fx_plan(&f);
	cr_assert_null(excluded(&f.plan, "stale"));
	cr_assert_not_null(excluded(&f.plan, "fresh"));
	fx_release(&f);
}

/* Rank's pod of attempt 0, pinned by its admission and never bound: Pending, no node. */
static void fx_pod_unbound(struct fx *f, int rank)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"llama-%d\",\"uid\":\"p%d\",\"labels\":{"
		 "\"cadre.dev/job-name\":\"llama\",\"cadre.dev/node-rank\":\"%d\","
		 "\"cadre.dev/restart-attempt\":\"0\"}},\"spec\":{},"
		 "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\","
		 "\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":\"0/4 nodes are "
		 "available: 1 node(s) didn't match pod anti-affinity rules\"}]}}", rank, rank, rank);
	fx_add_pod(f, text);
}

/*
 * A built-in gang that times out is not pinned the same way again: the
 * node of each rank the scheduler never placed where it was pinned goes
 * into status.excludedNodes (GangTimeout), stored with the restart; a
 * bound rank's node took it and stays usable. No Warning on the node:
 * nothing says the node is bad.
 */
Test(tj_plan, a_gang_timeout_leaves_behind_the_nodes_its_ranks_were_never_scheduled_on)
{
	struct fx f;

	fx_job(&f, ",\"gang\":{\"timeoutSeconds\":60}", ADMITTED_AT(EARLIER) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod_unbound(&f, 1);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "GangTimeout");
	cr_assert_null(excluded(&f.plan, "n0"));
	cr_assert_not_null(excluded(&f.plan, "n1"));
	cr_assert_str_eq(excluded(&f.plan, "n1")->reason, "GangTimeout");
	cr_assert_eq(excluded(&f.plan, "n1")->time, 1000000);
	cr_assert(strstr(f.plan.status.message, "never scheduled on n1 (rank 1): it stays off for "
			 "the next attempts (status.excludedNodes)"), "%s", f.plan.status.message);
	cr_assert_not(has_event(&f.plan, "NodeExcluded"));
	fx_release(&f);

	/* No pod at all for either rank: both nodes, beside a failure's entry, which stays. */
	fx_job(&f, ",\"gang\":{\"timeoutSeconds\":60}", ADMITTED_AT(EARLIER) ",\"excludedNodes\":"
	       "[{\"node\":\"old\",\"reason\":\"NodeLost\",\"time\":\"" EARLIER "\"}]}");
	f.in.expectations_met = false;  /* the creates are on their way */
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_str_eq(excluded(&f.plan, "n0")->reason, "GangTimeout");
	cr_assert_str_eq(excluded(&f.plan, "n1")->reason, "GangTimeout");
	cr_assert_str_eq(excluded(&f.plan, "old")->reason, "NodeLost");
	fx_release(&f);

	/* A node excluded after a failure there stays so; Kueue's pods are not pinned. */
	fx_job(&f, ",\"gang\":{\"timeoutSeconds\":60}", ADMITTED_AT(EARLIER) ",\"excludedNodes\":"
	       "[{\"node\":\"n1\",\"reason\":\"Hung\",\"time\":\"" EARLIER "\"}]}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod_unbound(&f, 1);
	fx_plan(&f);
	cr_assert_str_eq(excluded(&f.plan, "n1")->reason, "Hung");
	fx_release(&f);
	fx_job(&f, ",\"gang\":{\"timeoutSeconds\":60}", ADMITTED_BARE(EARLIER) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod_unbound(&f, 1);
	f.in.mode = GANG_KUEUE;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.n_excluded_nodes, 0);
	fx_release(&f);
}

Test(tj_plan, past_max_infra_restarts_the_job_fails_listing_them)
{
	struct fx f;

	fx_job(&f, ",\"maxInfraRestarts\":2", ADMITTED_BARE(NOW) ",\"infraRestarts\":2,"
	       DECIDED_NODES ",\"failures\":[{\"attempt\":0,\"reason\":\"NodeLost\","
	       "\"infrastructure\":true,\"rank\":1,\"node\":\"n7\"},{\"attempt\":1,\"reason\":"
	       "\"GangTimeout\",\"infrastructure\":true}]}");
	fx_pod(&f, 0, 2, "Running", false, NULL);
	fx_pod(&f, 1, 2, "Running", false, NULL);
	f.in.node_ok = node_n1_lost;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(cond_reason(&f.plan, "Failed"), "TooManyInfraRestarts");
	cr_assert(strstr(f.plan.status.message, "maxInfraRestarts 2"), "%s", f.plan.status.message);
	cr_assert(strstr(f.plan.status.message, "attempt 0: NodeLost on n7 (rank 1); attempt 1: "
			 "GangTimeout; attempt 2: NodeLost on n1 (rank 1)"), "%s",
		  f.plan.status.message);
	cr_assert_eq(f.plan.status.infra_restarts, 2, "not counted past the cap");
	fx_release(&f);
}

Test(tj_plan, failure_policy_fails_at_once_or_restarts_without_counting_by_exit_code)
{
	struct fx f;
	const char *policy = ",\"maxRestarts\":5,\"failurePolicy\":{\"rules\":["
		"{\"action\":\"RestartNotCounted\",\"onExitCodes\":{\"operator\":\"In\","
		"\"values\":[33,34]}},{\"action\":\"Fail\",\"onExitCodes\":{\"operator\":\"NotIn\","
		"\"values\":[1]}}]}";

	/* Not 33, 34 or 1: the job fails at once. */
	fx_job(&f, policy, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false, ",\"containerStatuses\":[{\"name\":\"main\",\"state\":"
	       "{\"terminated\":{\"exitCode\":3,\"reason\":\"Error\"}}}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(cond_reason(&f.plan, "Failed"), "FailurePolicy");
	cr_assert_eq(f.plan.status.restarts, 0);
	cr_assert_eq(f.plan.status.last_failure.exit_code, 3);
	fx_release(&f);

	/* 33: a restart that maxRestarts does not count. */
	fx_job(&f, policy, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false, ",\"containerStatuses\":[{\"name\":\"main\",\"state\":"
	       "{\"terminated\":{\"exitCode\":33,\"reason\":\"Error\"}}}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.restarts, 0);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert(strstr(f.plan.status.message, "not counted against maxRestarts "
			 "(spec.failurePolicy"), "%s", f.plan.status.message);
	fx_release(&f);

	/* 1: no rule stops it, a counted restart. */
	fx_job(&f, policy, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false, ",\"containerStatuses\":[{\"name\":\"main\",\"state\":"
	       "{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"}}}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.restarts, 1);
	fx_release(&f);
}

Test(tj_plan, status_failures_keep_the_ten_latest)
{
	struct fx f;
	char status[4096];
	size_t n = 0;

	n += (size_t)snprintf(status + n, sizeof(status) - n, "%s", ADMITTED_BARE(NOW) ","
			      DECIDED_NODES ",\"restarts\":10,\"failures\":[");
	for (int i = 0; i < 10; i++)
		n += (size_t)snprintf(status + n, sizeof(status) - n, "%s{\"attempt\":%d,"
				      "\"reason\":\"PodFailed\",\"infrastructure\":false}",
				      i ? "," : "", i);
	snprintf(status + n, sizeof(status) - n, "]}");
	fx_job(&f, ",\"maxRestarts\":20", status);
	fx_pod(&f, 0, 10, "Running", false, NULL);
	fx_pod(&f, 1, 10, "Failed", false, ",\"containerStatuses\":[{\"name\":\"main\",\"state\":"
	       "{\"terminated\":{\"exitCode\":1}}}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.n_failures, 10);
	cr_assert_eq(f.plan.status.failures[0].attempt, 1, "the oldest went");
	cr_assert_eq(f.plan.status.failures[9].attempt, 10);
	fx_release(&f);
}

/* --- spec.dependency (docs/design.md 13) --- */

#define DEP ",\"dependency\":{\"items\":[{\"type\":\"afterok\",\"jobs\":[\"123\"]}]}"

Test(tj_plan, a_job_waits_queued_for_its_dependency_with_no_pod_and_no_admission_asked)
{
	struct fx f;
	struct tj_dep_verdict v = { .state = TJ_DEP_WAIT };

	snprintf(v.message, sizeof(v.message), "waiting for dependency afterok:123: job 123 is "
		 "Running");
	fx_job(&f, DEP, NULL);
	f.in.dependency = &v;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "Dependency");
	cr_assert_str_eq(f.plan.status.message, v.message);
	cr_assert_not(f.plan.needs_admission, "no capacity is asked for while it waits");
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	cr_assert(has_event(&f.plan, "Dependency"));
	fx_release(&f);
}

Test(tj_plan, a_dependency_that_can_never_be_met_fails_the_job)
{
	struct fx f;
	struct tj_dep_verdict v = { .state = TJ_DEP_NEVER };

	snprintf(v.message, sizeof(v.message), "dependency afterok:123 can never be satisfied: "
		 "job 123 is Failed");
	fx_job(&f, DEP, NULL);
	f.in.dependency = &v;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(cond_reason(&f.plan, "Failed"), "DependencyNeverSatisfied");
	cr_assert_str_eq(f.plan.status.message, v.message);
	fx_release(&f);
}

Test(tj_plan, a_met_dependency_is_stored_as_met_and_admission_follows_in_the_same_pass)
{
	struct fx f;
	char *pair = "afterok:123";
	struct tj_dep_verdict v = { .state = TJ_DEP_MET, .satisfied = &pair, .n_satisfied = 1 };

	fx_job(&f, DEP, NULL);
	f.in.dependency = &v;
	fx_plan(&f);
	cr_assert(f.plan.needs_admission);
	cr_assert(f.plan.status.dependency_met);
	cr_assert_eq(f.plan.status.n_dependency_satisfied, 1);
	cr_assert_str_eq(f.plan.status.dependency_satisfied[0], "afterok:123");
	/* Stored, it is not looked at again: no verdict is needed any more. */
	f.in.dependency = NULL;
	f.in.admission = ADMIT_ON_N0_N1("fits");
	fx_replan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_STARTING);
	fx_release(&f);
}

/* --- array jobs (docs/design.md 12) --- */

static struct tj_element elements[16];

static void fx_element(struct fx *f, int index, enum tj_phase phase)
{
	static char names[16][32];

	snprintf(names[f->in.n_elements], sizeof(names[0]), "llama-%d", index);
	elements[f->in.n_elements] = (struct tj_element){ .index = index,
		.name = names[f->in.n_elements], .uid = "e-uid", .phase = phase };
	f->in.elements = elements;
	f->in.n_elements++;
}

static int created_elements(const struct tj_plan *p, char *out, size_t size)
{
	int n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < p->n_actions; i++)
		if (p->actions[i].kind == TJ_CREATE_ELEMENT) {
			snprintf(out + strlen(out), size - strlen(out), "%s%d", n ? "," : "",
				 p->actions[i].rank);
			n++;
		}
	return n;
}

Test(tj_plan, an_array_starts_at_most_its_throttle_and_stores_the_decision_first)
{
	struct fx f;
	char made[128];

	fx_job(&f, ",\"array\":\"0-9%2\"", NULL);
	f.in.max_array_size = 1001;
	fx_plan(&f);
	cr_assert_eq(created_elements(&f.plan, made, sizeof(made)), 2);
	cr_assert_str_eq(made, "0,1");
	cr_assert_str_eq(f.plan.status.array_started, "0-1");
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RUNNING);
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "JobArrayTaskLimit");
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0, "an array runs no pods itself");
	cr_assert_not(f.plan.needs_admission);
	cr_assert_str_eq(f.plan.status.message, "10 elements: 2 running, 8 waiting (at most 2 at "
			 "once), 0 succeeded, 0 failed, 0 cancelled");
	fx_release(&f);
}

Test(tj_plan, an_element_that_ends_lets_the_next_one_start)
{
	struct fx f;
	char made[128];

	fx_job(&f, ",\"array\":\"0-9%2\"", "{\"phase\":\"Running\",\"array\":{\"started\":\"0-1\"}}");
	f.in.max_array_size = 1001;
	fx_element(&f, 0, TJ_PHASE_SUCCEEDED);
	fx_element(&f, 1, TJ_PHASE_RUNNING);
	fx_plan(&f);
	cr_assert_eq(created_elements(&f.plan, made, sizeof(made)), 1);
	cr_assert_str_eq(made, "2");
	cr_assert_str_eq(f.plan.status.array_started, "0-2");
	cr_assert_str_eq(f.plan.status.array_succeeded, "0");
	fx_release(&f);
}

/* After a stop between the status write and the creates: the stored ones, and no more. */
Test(tj_plan, started_elements_that_are_missing_are_created_and_no_others)
{
	struct fx f;
	char made[128];

	fx_job(&f, ",\"array\":\"0-9%2\"", "{\"phase\":\"Running\",\"array\":{\"started\":\"0-1\"}}");
	f.in.max_array_size = 1001;
	f.in.expectations_met = false;
	fx_plan(&f);
	cr_assert_eq(created_elements(&f.plan, made, sizeof(made)), 0,
		     "not while an earlier create is unseen");
	f.in.expectations_met = true;
	tj_plan_release(&f.plan);
	fx_plan(&f);
	cr_assert_eq(created_elements(&f.plan, made, sizeof(made)), 2);
	cr_assert_str_eq(made, "0,1");
	cr_assert_str_eq(f.plan.status.array_started, "0-1");
	fx_release(&f);
}

Test(tj_plan, a_cancelled_element_is_deleted_and_counts_until_it_is_gone)
{
	struct fx f;
	char made[128];

	fx_job(&f, ",\"array\":\"0-3%2\"", "{\"phase\":\"Running\",\"array\":{\"started\":\"0-1\"}}");
	f.in.max_array_size = 1001;
	f.in.cancel_tasks = "1,3";
	fx_element(&f, 0, TJ_PHASE_RUNNING);
	fx_element(&f, 1, TJ_PHASE_RUNNING);
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_ELEMENT), 1);
	cr_assert_eq(created_elements(&f.plan, made, sizeof(made)), 0, "1 is still there");
	cr_assert_str_eq(f.plan.status.array_cancelled, "1,3");
	/* Gone: 2 starts, 3 never will. */
	f.in.n_elements = 1;
	tj_plan_release(&f.plan);
	fx_plan(&f);
	cr_assert_eq(created_elements(&f.plan, made, sizeof(made)), 1);
	cr_assert_str_eq(made, "2");
	fx_release(&f);
}

/*
 * cadre.dev/cancel-tasks is anyone's annotation: a range past the largest
 * index an array may have, or thousands of ranges over millions of indices,
 * cancels what it names of this array, at a cost of its length.
 */
Test(tj_plan, cancel_tasks_of_any_reach_cancel_what_they_name_of_the_array)
{
	struct fx f;
	struct buf wide;

	fx_job(&f, ",\"array\":\"0-3%2\"", "{\"phase\":\"Running\",\"array\":{\"started\":\"0-1\"}}");
	f.in.max_array_size = 1001;
	f.in.cancel_tasks = "2-4000000";
	fx_element(&f, 0, TJ_PHASE_RUNNING);
	fx_element(&f, 1, TJ_PHASE_RUNNING);
	fx_plan(&f);
	cr_assert_str_eq(f.plan.status.array_cancelled, "2-3");
	tj_plan_release(&f.plan);
	buf_init(&wide, (size_t)1 << 20);
	for (int i = 0; i < 20000; i++)
		cr_assert_eq(buf_adds(&wide, i ? ",1-3999999" : "1-3999999"), 0);
	f.in.cancel_tasks = buf_str(&wide);
	fx_plan(&f);
	cr_assert_str_eq(f.plan.status.array_cancelled, "1-3");
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_ELEMENT), 1, "1 is deleted");
	buf_release(&wide);
	fx_release(&f);
}

static bool index_one_taken(void *ctx, int index)
{
	(void)ctx;
	return index == 1;
}

/* An element whose name another object holds fails once, named; the others run. */
Test(tj_plan, an_element_whose_name_is_taken_fails_and_the_rest_run)
{
	struct fx f;
	char made[128];

	fx_job(&f, ",\"array\":\"0-2\"", NULL);
	f.in.max_array_size = 1001;
	f.in.element_taken = index_one_taken;
	fx_plan(&f);
	cr_assert_eq(created_elements(&f.plan, made, sizeof(made)), 2);
	cr_assert_str_eq(made, "0,2");
	cr_assert_str_eq(f.plan.status.array_failed, "1");
	cr_assert_str_eq(f.plan.status.array_started, "0-2");
	cr_assert(has_event(&f.plan, "ElementNameTaken"));
	fx_release(&f);
}

Test(tj_plan, an_array_ends_as_its_elements_did)
{
	struct fx f;

	fx_job(&f, ",\"array\":\"0-2\"", "{\"phase\":\"Running\",\"array\":{\"started\":\"0-2\"}}");
	f.in.max_array_size = 1001;
	fx_element(&f, 0, TJ_PHASE_SUCCEEDED);
	fx_element(&f, 1, TJ_PHASE_FAILED);
	fx_element(&f, 2, TJ_PHASE_SUCCEEDED);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(cond_reason(&f.plan, "Failed"), "ElementsFailed");
	cr_assert_str_eq(f.plan.status.message, "1 of 3 elements failed: 1");
	tj_plan_release(&f.plan);
	elements[1].phase = TJ_PHASE_SUCCEEDED;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_SUCCEEDED);
	fx_release(&f);
}

Test(tj_plan, an_array_past_max_array_size_fails_naming_the_limit)
{
	struct fx f;

	fx_job(&f, ",\"array\":\"0-2000\"", NULL);
	f.in.max_array_size = 1001;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert(strstr(f.plan.status.message, "MaxArraySize 1001"), "%s", f.plan.status.message);
	fx_release(&f);
}

Test(tj_plan, a_held_array_starts_no_element)
{
	struct fx f;
	char made[128];

	fx_job(&f, ",\"array\":\"0-3\",\"suspend\":true", NULL);
	f.in.max_array_size = 1001;
	fx_plan(&f);
	cr_assert_eq(created_elements(&f.plan, made, sizeof(made)), 0);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_SUSPENDED);
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "JobHeldUser");
	fx_release(&f);
}

/* scontrol requeue (docs/design.md 13): a running gang goes back to the queue, once per request. */
Test(tj_plan, a_requeue_restarts_a_running_gang_once_counted_against_no_limit)
{
	struct fx f;

	fx_job(&f, NULL, "{\"phase\":\"Running\",\"admittedTime\":\"" NOW "\","
	       "\"conditions\":[{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\","
	       "\"message\":\"\",\"lastTransitionTime\":\"" NOW "\"}]," DECIDED_NODES "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.requeue = "2026-12-01T10:00:00Z";
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "Requeued");
	cr_assert_eq(f.plan.status.restarts, 0);
	cr_assert_eq(f.plan.status.infra_restarts, 0, "a requeue is no failure");
	cr_assert_eq(f.plan.status.requeues, 1);
	cr_assert_str_eq(f.plan.status.requeued, "2026-12-01T10:00:00Z");
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 2);
	/* The same request again, once stored: nothing more. */
	fx_replan(&f);
	cr_assert_eq(f.plan.status.requeues, 1);
	fx_release(&f);
}

/* n0 and n1 in rack r1, n2 in r2; no other node is known. */
static int rack_label(void *ctx, const char *node, const char *key, char *out, size_t size)
{
	(void)ctx;
	if (strcmp(key, "example.com/rack") || (strcmp(node, "n0") && strcmp(node, "n1")))
		return -1;
	snprintf(out, size, "r1");
	return 0;
}

/* status.topology says which domains of the job's level its ranks got, each once. */
Test(tj_plan, status_topology_names_the_domains_of_the_ranks_nodes)
{
	struct fx f;

	fx_job(&f, ",\"topology\":{\"required\":\"example.com/rack\"}", ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.node_label = rack_label;
	fx_plan(&f);
	cr_assert_str_eq(f.plan.status.topology.level, "example.com/rack");
	cr_assert_eq(f.plan.status.topology.n_domains, 1);
	cr_assert_str_eq(f.plan.status.topology.domains[0], "r1");
	fx_release(&f);

	/* Without spec.topology, nothing. */
	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.node_label = rack_label;
	fx_plan(&f);
	cr_assert_null(f.plan.status.topology.level);
	fx_release(&f);
}

/* What a gang mode cannot say of spec.topology is told in a Warning event, once. */
Test(tj_plan, a_mode_that_cannot_say_part_of_the_topology_tells_so_in_an_event)
{
	struct fx f;
	const char *topo = ",\"topology\":{\"required\":\"example.com/block\","
			   "\"preferred\":\"example.com/rack\"}";

	fx_job(&f, topo, "{}");
	f.in.mode = GANG_KUEUE;
	fx_plan(&f);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 2);
	cr_assert(has_event(&f.plan, "TopologyNotExpressible"));
	fx_release(&f);

	fx_job(&f, ",\"topology\":{\"required\":\"example.com/block\"}", "{}");
	f.in.mode = GANG_KUEUE;
	fx_plan(&f);
	cr_assert_not(has_event(&f.plan, "TopologyNotExpressible"), "Kueue says all of it");
	fx_release(&f);
}

/* The kubelet's words (pkg/kubelet/eviction/helpers.go, emptyDirMessageFmt) as a pod's status. */
#define SCRATCH_EVICTED ",\"reason\":\"Evicted\",\"message\":\"Usage of EmptyDir volume " \
	"\\\"scratch-1\\\" exceeds the limit \\\"20Gi\\\". \""
#define SCRATCH_SPEC ",\"scratch\":{\"/scratch/tmp\":{\"size\":\"20Gi\"},\"/mnt/cache\":" \
	"{\"size\":\"100Gi\",\"storageClassName\":\"local-nvme\"}}"

Test(tj_plan, a_rank_evicted_for_its_full_scratch_is_the_jobs_failure_named_by_its_path)
{
	struct fx f;

	fx_job(&f, SCRATCH_SPEC, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false, SCRATCH_EVICTED);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "ScratchFull");
	/* Counted against maxRestarts, not as the infrastructure's; the node stays in use. */
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_eq(f.plan.status.infra_restarts, 0);
	cr_assert_eq(f.plan.status.n_excluded_nodes, 0);
	cr_assert(f.plan.status.has_last_failure);
	cr_assert_str_eq(f.plan.status.last_failure.reason, "ScratchFull");
	cr_assert_eq(f.plan.status.last_failure.rank, 1);
	cr_assert_str_eq(f.plan.status.last_failure.node, "n1");
	/* scratch-1 is the second path in sorted order: /scratch/tmp, not /mnt/cache. */
	cr_assert_str_eq(f.plan.status.last_failure.message,
			 "scratch /scratch/tmp over 20Gi on node n1 (rank 1, pod llama-1): the kubelet "
			 "evicted it; ask spec.scratch for more, or write less there");
	fx_release(&f);
}

Test(tj_plan, a_container_over_its_storage_limit_is_the_jobs_failure_too)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false, ",\"reason\":\"Evicted\",\"message\":\"Pod ephemeral "
	       "local storage usage exceeds the total limit of containers 10Gi. \"");
	fx_plan(&f);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "ScratchFull");
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_eq(f.plan.status.infra_restarts, 0);
	cr_assert_not_null(strstr(f.plan.status.last_failure.message, "wrote more local storage "
				  "than its limit"));
	fx_release(&f);
	/* The node short of disk for everyone is still the node's fault. */
	fx_job(&f, SCRATCH_SPEC, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false, ",\"reason\":\"Evicted\",\"message\":\"The node was low "
	       "on resource: ephemeral-storage. Container main was using 30Gi, request is 20Gi.\"");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.restarts, 0);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_str_eq(excluded(&f.plan, "n1")->reason, "NodePressure");
	fx_release(&f);
}

#define PLAN_DIGEST "sha256:abababababababababababababababababababababababababababababababab"

Test(tj_plan, a_job_waits_for_its_code_pending_and_starts_once_it_is_whole)
{
	struct fx f;
	struct tj_code_state code[] = { { PLAN_DIGEST, false, "no ConfigMap labelled "
					  "cadre.dev/code=abab in namespace ml" } };
	const struct tj_event *e;

	fx_job(&f, ",\"code\":[{\"digest\":\"" PLAN_DIGEST "\",\"path\":\"/w\"}]", NULL);
	f.in.code = code;
	f.in.n_code = 1;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_PENDING);
	cr_assert_str_eq(cond_reason(&f.plan, "CodeReady"), "WaitingForCode");
	cr_assert(strstr(f.plan.status.message, "waiting for code " PLAN_DIGEST ": no ConfigMap"),
		  "%s", f.plan.status.message);
	cr_assert_not(f.plan.needs_admission, "never admitted without its code");
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	e = event_of(&f.plan, "WaitingForCode");
	cr_assert(strstr(e->message, PLAN_DIGEST), "%s", e->message);
	fx_replan(&f);
	cr_assert_eq(f.plan.n_events, 0, "still missing: no second event");

	code[0].complete = true;
	fx_replan(&f);
	cr_assert_str_eq(cond_reason(&f.plan, "CodeReady"), "CodePresent");
	cr_assert(f.plan.needs_admission, "whole: on to admission");
	fx_release(&f);

	/* A job without spec.code has no such condition. */
	fx_job(&f, NULL, NULL);
	fx_plan(&f);
	cr_assert_str_eq(cond_reason(&f.plan, "CodeReady"), "(absent)");
	fx_release(&f);
}

/*
 * The planner asks for a built-in admission only for a job tj_candidacy
 * says waits, the rule the capacity records use too (docs/design.md 3.1):
 * what made it one this pass is in the status it asks with.
 */
Test(tj_plan, a_job_refused_its_service_asks_for_admission_once_the_refusal_clears)
{
	struct fx f;

	/* Held: no candidate, no admission asked, and it says why. */
	fx_job(&f, NULL, "{\"phase\":\"Queued\"}");
	f.in.service_exists = false;
	f.in.refusal = &service_refusal;
	fx_plan(&f);
	cr_assert_not(f.plan.needs_admission);
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "CreateRefused");
	fx_replan(&f);
	cr_assert_not(f.plan.needs_admission);
	/* The Service is its own now: Queued for a decision, the refusal's reason gone. */
	f.in.service_exists = true;
	fx_replan(&f);
	cr_assert(f.plan.needs_admission, "%s", f.plan.status.message);
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "Queued");
	fx_release(&f);
}

Test(tj_plan, a_pending_job_whose_wait_is_over_asks_for_admission_as_queued)
{
	struct fx f;

	/* Pending for a Volume until now: the records take a Pending job for no candidate. */
	fx_job(&f, NULL, "{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"VolumesReady\","
	       "\"status\":\"False\",\"reason\":\"VolumeNotBound\",\"message\":\"m\"}]}");
	fx_plan(&f);
	cr_assert(f.plan.needs_admission);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	fx_release(&f);
}

#define RUNNING_ADMITTED "{\"phase\":\"Running\",\"conditions\":[" \
	"{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\"," \
	"\"message\":\"admitted\",\"lastTransitionTime\":\"" EARLIER "\"}," \
	"{\"type\":\"Running\",\"status\":\"True\",\"reason\":\"AllPodsRunning\"," \
	"\"message\":\"running\",\"lastTransitionTime\":\"" EARLIER "\"}]}"

/* Every pod delete of the plan gives the pod grace seconds. */
static void assert_deletes_with_grace(const struct tj_plan *p, size_t n, int64_t grace)
{
	size_t seen = 0;

	for (size_t i = 0; i < p->n_actions; i++) {
		if (p->actions[i].kind != TJ_DELETE_POD)
			continue;
		seen++;
		cr_assert(p->actions[i].has_grace, "%s deleted without the preemption's grace",
			  p->actions[i].pod);
		cr_assert_eq(p->actions[i].grace_s, grace);
	}
	cr_assert_eq(seen, n);
}

/*
 * docs/design.md 3.5: a Requeue victim records its preemption (preemptor,
 * attempt, grace, mode) in the status written before any pod is told, its
 * pods go with the grace, and it is queued again: no failure, no limit.
 */
Test(tj_plan, a_requeue_victim_records_its_preemption_then_stops_with_the_grace)
{
	struct tj_preempted pre = { "ml/urgent", 10, 0, false, 45 };
	struct fx f;

	fx_job(&f, ",\"maxInfraRestarts\":0,\"signal\":{\"name\":\"USR1\",\"secondsBefore\":45}",
	       RUNNING_ADMITTED);
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.preempted = &pre;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RESTARTING);
	cr_assert_eq(f.plan.status.preemptions, 1);
	cr_assert_eq(f.plan.status.restarts + f.plan.status.infra_restarts +
		     f.plan.status.requeues, 0, "counted in preemptions alone");
	cr_assert(f.plan.status.has_preemption);
	cr_assert_str_eq(f.plan.status.preemption.preemptor, "ml/urgent");
	cr_assert_eq(f.plan.status.preemption.attempt, 0);
	cr_assert_eq(f.plan.status.preemption.grace_s, 45);
	cr_assert_str_eq(f.plan.status.preemption.mode, "Requeue");
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "Preempted");
	cr_assert(strstr(f.plan.status.message, "preempted by ml/urgent (Partition tier 10 over 0)"
			 ": its pods get SIGUSR1 and 45s to stop"), "%s", f.plan.status.message);
	cr_assert(strstr(event_of(&f.plan, "Preempted")->message, "ml/urgent"));
	assert_deletes_with_grace(&f.plan, 2, 45);
	/* The next pass (after a crash, or with the pods still going): same grace, no second count. */
	fx_replan(&f);
	cr_assert_eq(f.plan.status.preemptions, 1);
	assert_deletes_with_grace(&f.plan, 2, 45);
	/* Its pods gone, it waits in the queue again. */
	for (size_t i = 0; i < f.n_pods; i++)
		json_decref(f.pods_json[i]);
	f.n_pods = 0;
	f.in.n_pods = 0;
	f.in.preempted = NULL;
	fx_replan(&f);
	fx_replan(&f);
	cr_assert(f.plan.needs_admission, "queued again: %s", f.plan.status.message);
	cr_assert_eq(tj_attempt(&f.plan.status), 1);
	fx_release(&f);
}

/* A Cancel victim ends Failed with reason Preempted, its pods given the grace. */
Test(tj_plan, a_cancel_victim_ends_failed_preempted)
{
	struct tj_preempted pre = { "ml/urgent", 10, 2, true, 30 };
	struct fx f;

	fx_job(&f, NULL, RUNNING_ADMITTED);
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	f.in.preempted = &pre;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_FAILED);
	cr_assert_str_eq(cond_reason(&f.plan, "Failed"), "Preempted");
	cr_assert_str_eq(f.plan.status.preemption.mode, "Cancel");
	cr_assert_eq(f.plan.status.preemptions, 1);
	cr_assert_eq(f.plan.status.restarts, 0);
	cr_assert(strstr(f.plan.status.message, "SIGTERM and 30s to stop, then the job ends"),
		  "%s", f.plan.status.message);
	assert_deletes_with_grace(&f.plan, 2, 30);
	fx_release(&f);
}

/* A job not admitted is no victim, whatever the input says. */
Test(tj_plan, a_job_not_admitted_is_not_preempted)
{
	struct tj_preempted pre = { "ml/urgent", 10, 0, false, 30 };
	struct fx f;

	fx_job(&f, NULL, NULL);
	f.in.preempted = &pre;
	fx_plan(&f);
	cr_assert_eq(f.plan.status.preemptions, 0);
	cr_assert_not(f.plan.status.has_preemption);
	fx_release(&f);
}

/*
 * The preemptor stores its victims in status.preempting (before any is
 * told), says so as an event, and drops the list once admitted.
 */
Test(tj_plan, a_preemptor_stores_its_victims_then_drops_them_when_admitted)
{
	static const char *const victims[] = { "ml/scavenge-a", "ml/scavenge-b" };
	static const int32_t attempts[] = { 0, 3 };
	struct fx f;

	fx_job(&f, NULL, NULL);
	f.in.admission = (struct tj_admission){ .verdict = ADMIT_WAIT, .reason = "Preempting",
		.message = "preempting 2 running jobs of lower Partition tiers to make room",
		.preempt = victims, .preempt_attempt = attempts, .n_preempt = 2 };
	fx_plan(&f);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_QUEUED);
	cr_assert_str_eq(cond_reason(&f.plan, "Admitted"), "Preempting");
	cr_assert_eq(f.plan.status.n_preempting, 2);
	cr_assert_str_eq(f.plan.status.preempting[1].job, "ml/scavenge-b");
	cr_assert_eq(f.plan.status.preempting[1].attempt, 3);
	cr_assert(has_event(&f.plan, "Preempting"));
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 0, "victims stop themselves");
	f.in.admission = ADMIT_ON_N0_N1("fits on n0, n1");
	fx_replan(&f);
	cr_assert_eq(f.plan.status.n_preempting, 0);
	cr_assert_null(f.plan.status.preempting);
	fx_release(&f);
}

/*
 * spec.restartStrategy InPlace (docs/failures.md, "In-place restart"). A
 * rank's run that failed is seen in its live pod: the container restarted
 * in place, its last end tagged with the attempt it belonged to.
 */
#define IN_PLACE ",\"restartStrategy\":\"InPlace\""
#define RAN_AND_FAILED(attempt) ",\"containerStatuses\":[{\"name\":\"main\",\"restartCount\":1," \
	"\"state\":{\"running\":{}},\"lastState\":{\"terminated\":{\"exitCode\":3," \
	"\"reason\":\"Error\",\"message\":\"Traceback: NCCL error\\ncadre-attempt: " attempt \
	"\\n\"}}}]"

static size_t count_patches_to(const struct tj_plan *p, int attempt)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_actions; i++)
		if (p->actions[i].kind == TJ_PATCH_POD_ATTEMPT && p->actions[i].attempt == attempt)
			n++;
	return n;
}

Test(tj_plan, in_place_a_failed_run_keeps_every_pod_and_tells_each_the_new_attempt)
{
	struct fx f;

	fx_job(&f, IN_PLACE, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, RAN_AND_FAILED("0"));
	fx_plan(&f);
	/* Counted once, stored with the attempt it began, before any pod is told. */
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert(f.plan.status.has_in_place);
	cr_assert_eq(f.plan.status.in_place.attempt, 1);
	cr_assert_eq(f.plan.status.in_place.time, 1000000);
	cr_assert_eq(f.plan.status.last_failure.rank, 1);
	cr_assert_eq(f.plan.status.last_failure.exit_code, 3);
	cr_assert_str_eq(f.plan.status.last_failure.message,
			 "rank 1 (pod llama-1) failed with exit code 3: Traceback: NCCL error");
	cr_assert(strstr(f.plan.status.message, "restarting the gang in place (restart 1 of 1)"),
		  "%s", f.plan.status.message);
	/* The admission stays: the ranks keep their nodes, and no pod is deleted. */
	cr_assert(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "PodFailed");
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 0);
	cr_assert_eq(count_patches_to(&f.plan, 1), 2);
	cr_assert_eq(f.plan.status.n_nodes, 2);
	cr_assert_str_eq(f.plan.status.nodes[1].node, "n1");
	cr_assert_null(f.plan.status.nodes[1].phase);
	fx_release(&f);
}

Test(tj_plan, in_place_the_told_gang_runs_again_and_its_old_failure_is_not_counted_twice)
{
	struct fx f;

	fx_job(&f, IN_PLACE, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, RAN_AND_FAILED("0"));
	fx_plan(&f);
	/* The pods as the cache shows them once told: the last end is of attempt 0. */
	for (size_t i = 0; i < f.n_pods; i++)
		json_decref(f.pods_json[i]);
	f.n_pods = 0;
	fx_pod(&f, 0, 1, "Running", false, NULL);
	fx_pod(&f, 1, 1, "Running", false, RAN_AND_FAILED("0"));
	fx_replan(&f);
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RUNNING);
	cr_assert(condition_is_true(&f.plan.status.conditions, "Running"));
	cr_assert_not(condition_is_true(&f.plan.status.conditions, "Restarting"));
	cr_assert_eq(f.plan.n_actions, 0);
	cr_assert_eq(f.plan.status.ready_nodes, 2);
	/* A failure of the new attempt is a new restart. */
	json_decref(f.pods_json[1]);
	f.n_pods = 1;
	fx_pod(&f, 1, 1, "Running", false, RAN_AND_FAILED("1"));
	f.job.spec.max_restarts = 2;
	fx_replan(&f);
	cr_assert_eq(f.plan.status.restarts, 2);
	cr_assert_eq(f.plan.status.in_place.attempt, 2);
	cr_assert_eq(count_patches_to(&f.plan, 2), 2);
	fx_release(&f);
}

/* A crash after the restart was stored: the next pass tells the same attempt, counting nothing. */
Test(tj_plan, in_place_a_stored_restart_is_finished_not_made_again)
{
	struct fx f;

	fx_job(&f, IN_PLACE, ADMITTED_AT(NOW) ",\"phase\":\"Restarting\",\"restarts\":1,"
	       "\"inPlaceRestart\":{\"attempt\":1,\"time\":\"" NOW "\"}}");
	fx_pod(&f, 0, 1, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, RAN_AND_FAILED("0"));
	fx_plan(&f);
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_eq(count_patches_to(&f.plan, 1), 1);
	cr_assert_str_eq(f.plan.actions[0].pod, "llama-1");
	cr_assert_str_eq(f.plan.actions[0].uid, "p1");
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 0);
	fx_release(&f);
}

/* A stop for the next attempt, and an end that is not the pod's attempt, are no failure. */
Test(tj_plan, in_place_a_stop_for_the_next_attempt_is_no_failure)
{
	struct fx f;

	fx_job(&f, IN_PLACE, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false,
	       ",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"terminated\":{"
	       "\"exitCode\":117,\"message\":\"cadre: stopped for attempt 1 (in-place restart)\\n"
	       "cadre-attempt: 0\\n\"}}}]");
	fx_pod(&f, 1, 0, "Running", false, ",\"containerStatuses\":[{\"name\":\"main\","
	       "\"lastState\":{\"terminated\":{\"exitCode\":3,\"message\":\"cadre-attempt: 7\"}}}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.restarts, 0);
	cr_assert_eq(f.plan.status.phase, TJ_PHASE_RUNNING);
	fx_release(&f);
}

/*
 * A rank's pod deleted by hand: that pod alone is made again, on its node,
 * once it is gone; the other rank is told, after it is gone, not before.
 */
Test(tj_plan, in_place_a_deleted_pod_is_made_again_alone_and_the_others_are_told)
{
	struct fx f;

	fx_job(&f, IN_PLACE, ADMITTED_BARE(NOW) ",\"phase\":\"Running\",\"nodes\":[{\"rank\":0,"
	       "\"pod\":\"llama-0\",\"node\":\"n0\",\"phase\":\"Running\"},{\"rank\":1,"
	       "\"pod\":\"llama-1\",\"node\":\"n1\",\"phase\":\"Running\"}]}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_add_pod(&f, "{\"metadata\":{\"name\":\"llama-1\",\"uid\":\"p1\",\"deletionTimestamp\":"
		   "\"" NOW "\",\"labels\":{\"cadre.dev/job-name\":\"llama\",\"cadre.dev/node-rank\":"
		   "\"1\",\"cadre.dev/restart-attempt\":\"0\"}},\"spec\":{\"nodeName\":\"n1\"},"
		   "\"status\":{\"phase\":\"Running\"}}");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_eq(f.plan.status.in_place.attempt, 1);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "Evicted");
	cr_assert(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_eq(f.plan.n_actions, 0, "nothing while the deleted pod is still going");
	/* Gone: rank 0 is told; rank 1 is not made before rank 0 is seen told. */
	json_decref(f.pods_json[1]);
	f.n_pods = f.in.n_pods = 1;
	fx_replan(&f);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_eq(count_patches_to(&f.plan, 1), 1);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	json_decref(f.pods_json[0]);
	f.n_pods = 0;
	fx_pod(&f, 0, 1, "Running", false, NULL);
	fx_replan(&f);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 1);
	cr_assert_eq(f.plan.actions[count_actions(&f.plan, TJ_CREATE_POD) - 1].rank, 1);
	cr_assert_eq(f.plan.actions[0].attempt, 1);
	cr_assert_str_eq(f.plan.status.nodes[1].node, "n1");
	fx_release(&f);
}

/* The node status.nodes gives rank, or NULL. */
static const char *node_of_rank(const struct tj_status *st, int rank)
{
	for (size_t i = 0; i < st->n_nodes; i++)
		if (st->nodes[i].rank == rank)
			return st->nodes[i].node;
	return NULL;
}

/* The rank of the plan's only action of kind; fails the test unless there is one. */
static int rank_of_only(const struct tj_plan *p, enum tj_action_kind kind)
{
	cr_assert_eq(count_actions(p, kind), 1);
	for (size_t i = 0; i < p->n_actions; i++)
		if (p->actions[i].kind == kind)
			return p->actions[i].rank;
	return -1;
}

/*
 * A rank on a lost node is placed again, alone: the new attempt forgets its
 * node, its pod goes, the other rank is told, then admission places it and
 * the node is in the status the pass stores before the pod is made. The
 * other rank keeps its pod throughout.
 */
Test(tj_plan, in_place_a_rank_on_a_lost_node_is_placed_again_alone)
{
	static const char *const placed[] = { "n0", "n2" };
	struct fx f;

	fx_job(&f, IN_PLACE, ADMITTED_AT(NOW) "}");
	f.in.node_ok = node_n1_lost;
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "NodeLost");
	cr_assert(f.plan.status.has_in_place);
	cr_assert(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_str_eq(node_of_rank(&f.plan.status, 0), "n0");
	cr_assert_null(node_of_rank(&f.plan.status, 1), "rank 1's lost node is forgotten");
	cr_assert_eq(rank_of_only(&f.plan, TJ_DELETE_POD), 1);
	cr_assert_eq(count_actions(&f.plan, TJ_PATCH_POD_ATTEMPT), 0);
	/* Its pod gone, rank 0 is told. */
	json_decref(f.pods_json[1]);
	f.n_pods = f.in.n_pods = 1;
	fx_replan(&f);
	cr_assert_eq(count_patches_to(&f.plan, 1), 1);
	cr_assert_not(f.plan.needs_admission);
	/* Rank 0 runs attempt 1: rank 1 asks for a node of its own, and nothing is made yet. */
	json_decref(f.pods_json[0]);
	f.n_pods = 0;
	fx_pod(&f, 0, 1, "Running", false, NULL);
	fx_replan(&f);
	cr_assert(f.plan.needs_admission);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	f.in.admission = (struct tj_admission){ .verdict = ADMIT_YES, .reason = "Admitted",
		.message = "placed again beside the ranks that keep their nodes: rank 1 on n2",
		.nodes = placed, .n_nodes = 2 };
	tj_plan_release(&f.plan);
	fx_plan(&f);
	cr_assert_not(f.plan.needs_admission);
	cr_assert_eq(rank_of_only(&f.plan, TJ_CREATE_POD), 1);
	cr_assert_str_eq(node_of_rank(&f.plan.status, 1), "n2");
	cr_assert_str_eq(node_of_rank(&f.plan.status, 0), "n0");
	cr_assert_str_eq(event_of(&f.plan, "RanksPlaced")->message,
			 "placed again beside the ranks that keep their nodes: rank 1 on n2");
	cr_assert_eq(f.plan.status.infra_restarts, 1, "counted once");
	fx_release(&f);
}

/* A rank that finds no node waits, asking again, until the gang timeout recreates the gang. */
Test(tj_plan, in_place_a_rank_without_a_node_waits_until_the_gang_timeout)
{
	struct fx f;

	fx_job(&f, IN_PLACE ",\"gang\":{\"timeoutSeconds\":60}", ADMITTED_BARE(EARLIER)
	       ",\"phase\":\"Restarting\",\"infraRestarts\":1,\"inPlaceRestart\":{\"attempt\":1,"
	       "\"time\":\"" NOW "\"},\"nodes\":[{\"rank\":0,\"pod\":\"llama-0\",\"node\":\"n0\"}]}");
	fx_pod(&f, 0, 1, "Running", false, NULL);
	f.in.admission = (struct tj_admission){ .verdict = ADMIT_WAIT,
		.reason = "InsufficientCapacity", .message = "rank 1: no node has room" };
	fx_plan(&f);
	cr_assert_not(f.plan.needs_admission);
	cr_assert_eq(count_actions(&f.plan, TJ_CREATE_POD), 0);
	cr_assert(f.plan.status.has_in_place);
	cr_assert_str_eq(f.plan.status.message,
			 "restarting in place: 1 rank waits for a node: rank 1: no node has room");
	cr_assert_leq(f.plan.requeue_after_s, 5, "asked again soon");
	f.in.now += 61;
	tj_plan_release(&f.plan);
	fx_plan(&f);
	cr_assert_not(f.plan.status.has_in_place);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "InPlaceFailed");
	cr_assert_eq(f.plan.status.infra_restarts, 1, "the same attempt, not counted again");
	cr_assert_not(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_eq(rank_of_only(&f.plan, TJ_DELETE_POD), 0);
	fx_release(&f);
}

/* A job that lists its nodes has nowhere else for a rank to go: the gang is recreated. */
Test(tj_plan, in_place_a_lost_node_of_a_job_that_lists_its_nodes_recreates_the_gang)
{
	struct fx f;

	fx_job(&f, IN_PLACE ",\"nodeList\":[\"n0\",\"n1\"]", ADMITTED_AT(NOW) "}");
	f.in.node_ok = node_n1_lost;
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "NodeLost");
	cr_assert_not(f.plan.status.has_in_place);
	cr_assert_not(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 2);
	fx_release(&f);
}

/* Past the gang timeout with ranks still not told, the same attempt is recreated. */
Test(tj_plan, in_place_that_does_not_finish_within_the_gang_timeout_recreates_the_gang)
{
	struct fx f;

	fx_job(&f, IN_PLACE ",\"gang\":{\"timeoutSeconds\":60}", ADMITTED_AT(EARLIER)
	       ",\"phase\":\"Restarting\",\"restarts\":1,\"inPlaceRestart\":{\"attempt\":1,"
	       "\"time\":\"" EARLIER "\"}}");
	fx_pod(&f, 0, 1, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_not(f.plan.status.has_in_place);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "InPlaceFailed");
	cr_assert_not(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_eq(count_actions(&f.plan, TJ_DELETE_POD), 2);
	cr_assert(has_event(&f.plan, "InPlaceFailed"));
	fx_release(&f);
}

/* Kueue decides a queued job's pods: its restarts recreate the gang. */
Test(tj_plan, in_place_is_built_in_and_none_mode_only)
{
	struct fx f;

	fx_job(&f, IN_PLACE, ADMITTED_AT(NOW) "}");
	f.in.mode = GANG_NATIVE;
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false,
	       ",\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"terminated\":"
	       "{\"exitCode\":3}}}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_not(f.plan.status.has_in_place);
	fx_release(&f);
}

/* Deleted by someone and ended by the kubelet's TERM before the cache showed the delete. */
Test(tj_plan, a_deleted_pod_that_ended_by_the_kubelets_term_is_an_infrastructure_restart)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_add_pod(&f, "{\"metadata\":{\"name\":\"llama-1\",\"uid\":\"p1\",\"deletionTimestamp\":"
		   "\"" NOW "\",\"labels\":{\"cadre.dev/job-name\":\"llama\",\"cadre.dev/node-rank\":"
		   "\"1\",\"cadre.dev/restart-attempt\":\"0\"}},\"spec\":{\"nodeName\":\"n1\"},"
		   "\"status\":{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"main\","
		   "\"state\":{\"terminated\":{\"exitCode\":143,\"reason\":\"Error\"}}}]}}");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.restarts, 0);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "Evicted");
	cr_assert_str_eq(f.plan.status.last_failure.reason, "Evicted");
	cr_assert_str_eq(f.plan.status.last_failure.message,
			 "pod llama-1 (rank 1) was deleted outside cadre");
	fx_release(&f);
}

/* The program's own failure carries the tag alone: no message to quote, the exit code said. */
Test(tj_plan, in_place_a_failure_tagged_without_a_message_names_its_exit_code)
{
	struct fx f;

	fx_job(&f, IN_PLACE, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, ",\"containerStatuses\":[{\"name\":\"main\","
	       "\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},\"lastState\":{"
	       "\"terminated\":{\"exitCode\":7,\"reason\":\"Error\",\"message\":"
	       "\"cadre-attempt: 0\\n\"}}}]");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert_eq(f.plan.status.last_failure.exit_code, 7);
	cr_assert_str_eq(f.plan.status.last_failure.message,
			 "rank 1 (pod llama-1) failed with exit code 7");
	fx_release(&f);
}

/* A node left behind after a failure takes no rank back: that rank is placed again alone. */
Test(tj_plan, in_place_a_rank_evicted_from_a_node_left_behind_is_placed_again)
{
	struct fx f;

	fx_job(&f, IN_PLACE, ADMITTED_AT(NOW) "}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Failed", false, ",\"reason\":\"Evicted\",\"message\":\"The node was low "
	       "on resource: memory.\"");
	fx_plan(&f);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_eq(f.plan.status.n_excluded_nodes, 1);
	cr_assert_str_eq(f.plan.status.excluded_nodes[0].node, "n1");
	cr_assert(f.plan.status.has_in_place);
	cr_assert(condition_is_true(&f.plan.status.conditions, "Admitted"));
	cr_assert_null(node_of_rank(&f.plan.status, 1));
	cr_assert_eq(rank_of_only(&f.plan, TJ_DELETE_POD), 1);
	cr_assert_eq(count_actions(&f.plan, TJ_PATCH_POD_ATTEMPT), 0);
	fx_release(&f);
}

/* A gang timeout's entry for the node a rank runs on says nothing against it: in place still. */
Test(tj_plan, in_place_a_gang_timeout_entry_does_not_keep_a_rank_off_its_node)
{
	struct fx f;

	fx_job(&f, IN_PLACE, ADMITTED_AT(NOW) ",\"excludedNodes\":[{\"node\":\"n1\",\"reason\":"
	       "\"GangTimeout\",\"time\":\"" NOW "\"}]}");
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_pod(&f, 1, 0, "Running", false, RAN_AND_FAILED("0"));
	fx_plan(&f);
	cr_assert_eq(f.plan.status.restarts, 1);
	cr_assert(f.plan.status.has_in_place);
	cr_assert_eq(count_patches_to(&f.plan, 1), 2);
	fx_release(&f);
}

/* A pod gone with its node (the pod GC takes a deleted node's pods) is a lost node. */
Test(tj_plan, a_pod_gone_with_its_node_is_a_lost_node_left_behind)
{
	struct fx f;

	fx_job(&f, NULL, ADMITTED_BARE(NOW) ",\"phase\":\"Running\",\"nodes\":[{\"rank\":0,"
	       "\"pod\":\"llama-0\",\"node\":\"n0\",\"phase\":\"Running\"},{\"rank\":1,"
	       "\"pod\":\"llama-1\",\"node\":\"n1\",\"phase\":\"Running\"}]}");
	f.in.node_ok = node_n1_lost;
	fx_pod(&f, 0, 0, "Running", false, NULL);
	fx_plan(&f);
	cr_assert_eq(f.plan.status.infra_restarts, 1);
	cr_assert_str_eq(cond_reason(&f.plan, "Restarting"), "NodeLost");
	cr_assert_str_eq(f.plan.status.last_failure.message, "node n1 of rank 1 (pod llama-1) was "
			 "lost");
	cr_assert_eq(f.plan.status.n_excluded_nodes, 1);
	cr_assert_str_eq(f.plan.status.excluded_nodes[0].node, "n1");
	fx_release(&f);
}
