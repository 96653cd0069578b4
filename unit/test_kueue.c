#include <criterion/criterion.h>
#include <string.h>

#include "base/err.h"
#include "controller/admission/kueue.h"

/* A Workload as Kueue v0.17 writes it, with the conditions given (a JSON array). */
static json_t *workload(const char *conditions, const char *admission)
{
	char text[4096];
	json_error_t jerr;
	json_t *obj;

	snprintf(text, sizeof(text),
		 "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
		 "\"metadata\":{\"name\":\"llama-0\",\"namespace\":\"ml\"},"
		 "\"status\":{\"conditions\":%s%s}}",
		 conditions, admission ? admission : "");
	obj = json_loads(text, 0, &jerr);
	cr_assert_not_null(obj, "%s", jerr.text);
	return obj;
}

#define COND(type, status, reason, message) \
	"{\"type\":\"" type "\",\"status\":\"" status "\",\"reason\":\"" reason \
	"\",\"message\":\"" message "\"}"

#define SHORT_QUOTA "couldn't assign flavors to pod set main: insufficient unused quota " \
	"for nvidia.com/gpu in flavor h100, 8 more needed"

static void view(struct kueue_view *v, const struct kueue_workload *wl)
{
	memset(v, 0, sizeof(*v));
	v->api_served = true;
	v->wl = wl;
	v->group = "llama-0";
	v->queue = "team-a";
	v->namespace = "ml";
	v->n = 2;
}

Test(kueue, a_workload_short_of_quota_waits_with_kueues_own_message)
{
	json_t *obj = workload("[" COND("QuotaReserved", "False", "Pending", SHORT_QUOTA) "]", NULL);
	struct kueue_workload wl;
	struct kueue_view v;
	struct kueue_decision d;

	cr_assert_eq(kueue_workload_read(obj, &wl), 0);
	cr_assert_eq(wl.state, KUEUE_WL_PENDING);
	cr_assert_str_eq(wl.reason, "Pending");
	view(&v, &wl);
	kueue_decide(&v, &d);
	cr_assert_eq(d.verdict, KUEUE_WAIT);
	cr_assert_str_eq(d.reason, "WaitingForKueue");
	cr_assert(strstr(d.message, SHORT_QUOTA), "%s", d.message);
	cr_assert(strstr(d.message, "llama-0"), "%s", d.message);
	json_decref(obj);
}

Test(kueue, an_admitted_workload_admits_and_names_its_cluster_queue)
{
	json_t *obj = workload("[" COND("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue team-a-cq") ","
			       COND("Admitted", "True", "Admitted", "The workload is admitted") "]",
			       ",\"admission\":{\"clusterQueue\":\"team-a-cq\",\"podSetAssignments\":[]}");
	struct kueue_workload wl;
	struct kueue_view v;
	struct kueue_decision d;

	cr_assert_eq(kueue_workload_read(obj, &wl), 0);
	cr_assert_eq(wl.state, KUEUE_WL_ADMITTED);
	cr_assert_str_eq(wl.cluster_queue, "team-a-cq");
	view(&v, &wl);
	kueue_decide(&v, &d);
	cr_assert_eq(d.verdict, KUEUE_ADMIT);
	cr_assert(strstr(d.message, "ClusterQueue team-a-cq"), "%s", d.message);
	json_decref(obj);
}

/* Quota reserved but admission checks pending is not admitted. */
Test(kueue, quota_reserved_without_admitted_still_waits)
{
	json_t *obj = workload("[" COND("QuotaReserved", "True", "QuotaReserved", "Quota reserved") ","
			       COND("Admitted", "False", "NoChecks", "waiting for admission checks") "]",
			       ",\"admission\":{\"clusterQueue\":\"team-a-cq\"}");
	struct kueue_workload wl;
	struct kueue_view v;
	struct kueue_decision d;

	cr_assert_eq(kueue_workload_read(obj, &wl), 0);
	cr_assert_eq(wl.state, KUEUE_WL_RESERVED);
	view(&v, &wl);
	kueue_decide(&v, &d);
	cr_assert_eq(d.verdict, KUEUE_WAIT);
	cr_assert(strstr(d.message, "waiting for admission checks"), "%s", d.message);
	json_decref(obj);
}

/* Evicted wins over a stale Admitted; the Preempted condition says why. */
Test(kueue, a_preempted_workload_is_evicted_with_the_preemption_reason)
{
	json_t *obj = workload("[" COND("Admitted", "True", "Admitted", "admitted") ","
			       COND("Evicted", "True", "Preempted", "Preempted to accommodate a higher priority Workload") ","
			       COND("Preempted", "True", "InCohortReclamation", "Preempted to accommodate a workload (UID: u-2) due to reclamation within the cohort") "]",
			       NULL);
	struct kueue_workload wl;
	struct kueue_view v;
	struct kueue_decision d;

	cr_assert_eq(kueue_workload_read(obj, &wl), 0);
	cr_assert_eq(wl.state, KUEUE_WL_EVICTED);
	cr_assert_str_eq(wl.reason, "InCohortReclamation");
	view(&v, &wl);
	kueue_decide(&v, &d);
	cr_assert_eq(d.verdict, KUEUE_EVICT);
	cr_assert_str_eq(d.reason, "InCohortReclamation");
	cr_assert(d.no_failure, "a preemption is no failure");
	cr_assert(strstr(d.message, "reclamation within the cohort"), "%s", d.message);
	json_decref(obj);
}

/* An eviction that is not a preemption keeps Evicted's own reason. */
Test(kueue, an_eviction_for_a_pods_ready_timeout_keeps_its_reason)
{
	json_t *obj = workload("[" COND("Evicted", "True", "PodsReadyTimeout", "Exceeded the PodsReady timeout ml/llama-0") "]",
			       NULL);
	struct kueue_workload wl;
	struct kueue_view v;
	struct kueue_decision d;

	cr_assert_eq(kueue_workload_read(obj, &wl), 0);
	view(&v, &wl);
	kueue_decide(&v, &d);
	cr_assert_eq(d.verdict, KUEUE_EVICT);
	cr_assert_str_eq(d.reason, "PodsReadyTimeout");
	cr_assert_not(d.no_failure, "pods that never got ready are the infrastructure's");
	json_decref(obj);
}

/* The other evictions are the infrastructure's: counted against maxInfraRestarts. */
Test(kueue, an_eviction_for_node_failures_or_an_admission_check_is_a_failure)
{
	static const char *const reasons[] = { "NodeFailures", "AdmissionCheck", "PodsReadyTimeout" };

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		char conds[256];
		json_t *obj;
		struct kueue_workload wl;
		struct kueue_view v;
		struct kueue_decision d;

		snprintf(conds, sizeof(conds), "[{\"type\":\"Evicted\",\"status\":\"True\","
			 "\"reason\":\"%s\",\"message\":\"m\"}]", reasons[i]);
		obj = workload(conds, NULL);
		cr_assert_eq(kueue_workload_read(obj, &wl), 0);
		view(&v, &wl);
		kueue_decide(&v, &d);
		cr_assert_eq(d.verdict, KUEUE_EVICT);
		cr_assert_not(d.no_failure, "%s", reasons[i]);
		json_decref(obj);
	}
}

/* A stopped or deactivated queue evicts for no failure of the job's: a requeue. */
Test(kueue, an_eviction_by_a_stopped_queue_is_no_failure)
{
	static const char *const reasons[] = { "ClusterQueueStopped", "LocalQueueStopped",
		"InactiveWorkload", "Deactivated", "Preempted" };

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		char conds[256];
		json_t *obj;
		struct kueue_workload wl;
		struct kueue_view v;
		struct kueue_decision d;

		snprintf(conds, sizeof(conds), "[{\"type\":\"Evicted\",\"status\":\"True\","
			 "\"reason\":\"%s\",\"message\":\"m\"}]", reasons[i]);
		obj = workload(conds, NULL);
		cr_assert_eq(kueue_workload_read(obj, &wl), 0);
		view(&v, &wl);
		kueue_decide(&v, &d);
		cr_assert_eq(d.verdict, KUEUE_EVICT);
		cr_assert(d.no_failure, "%s", reasons[i]);
		json_decref(obj);
	}
}

Test(kueue, without_the_workload_api_a_job_says_kueue_is_unreachable_and_waits)
{
	struct kueue_view v;
	struct kueue_decision d;

	view(&v, NULL);
	v.api_served = false;
	kueue_decide(&v, &d);
	cr_assert_eq(d.verdict, KUEUE_WAIT);
	cr_assert_str_eq(d.reason, "NotManagedByKueue");
	cr_assert(strstr(d.message, "is Kueue installed?"), "%s", d.message);
	cr_assert(d.recheck);
}

Test(kueue, without_a_workload_yet_the_job_waits_for_kueue)
{
	struct kueue_view v;
	struct kueue_decision d;

	view(&v, NULL);
	v.pods = 1;
	kueue_decide(&v, &d);
	cr_assert_eq(d.verdict, KUEUE_WAIT);
	cr_assert_str_eq(d.reason, "WaitingForKueue");
	cr_assert(strstr(d.message, "pod group llama-0"), "%s", d.message);

	/* Every pod there and not one taken by Kueue's webhook: the namespace is not managed. */
	v.pods = 2;
	v.managed = 0;
	kueue_decide(&v, &d);
	cr_assert_str_eq(d.reason, "NotManagedByKueue");
	cr_assert(strstr(d.message, "2 of 2 pods are not managed by Kueue"), "%s", d.message);
}

Test(kueue, a_finished_workload_is_admitted)
{
	json_t *obj = workload("[" COND("Admitted", "True", "Admitted", "admitted") ","
			       COND("Finished", "True", "Succeeded", "done") "]", NULL);
	struct kueue_workload wl;

	cr_assert_eq(kueue_workload_read(obj, &wl), 0);
	cr_assert_eq(wl.state, KUEUE_WL_FINISHED);
	json_decref(obj);
}

Test(kueue, a_workload_without_a_name_is_refused)
{
	json_t *obj = json_pack("{s:{}}", "metadata");
	struct kueue_workload wl;

	cr_assert_eq(kueue_workload_read(obj, &wl), CADRE_EINVAL);
	json_decref(obj);
}

Test(kueue, the_group_is_the_job_and_attempt_and_maps_back_to_the_job)
{
	char buf[64];

	cr_assert_eq(kueue_group_name("llama", 3, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "llama-3");
	cr_assert_eq(kueue_group_job("llama-3", buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "llama");
	cr_assert_eq(kueue_group_job("team-b-big-12", buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "team-b-big");
	cr_assert_eq(kueue_group_job("llama-x", buf, sizeof(buf)), CADRE_EINVAL);
	cr_assert_eq(kueue_group_job("llama-", buf, sizeof(buf)), CADRE_EINVAL);
	cr_assert_eq(kueue_group_job("7", buf, sizeof(buf)), CADRE_EINVAL);
	/* A label value: at most 63 characters. */
	cr_assert_eq(kueue_group_name("a-very-long-job-name-that-is-exactly-sixty-characters-long-xyz", 10,
				      buf, sizeof(buf)), CADRE_EINVAL);
}

/* The cache keeps what kueue_workload_read reads, and not the pod templates. */
Test(kueue, the_cache_keeps_conditions_and_cluster_queue_and_drops_pod_sets)
{
	json_t *obj = workload("[" COND("Admitted", "True", "Admitted", "admitted") "]",
			       ",\"admission\":{\"clusterQueue\":\"team-a-cq\",\"podSetAssignments\":[{\"name\":\"main\"}]}");
	struct kueue_workload before, after;
	json_t *trimmed;

	json_object_set_new(obj, "spec", json_pack("{s:[{s:s, s:{}}]}", "podSets", "name", "main",
						   "template"));
	trimmed = kueue_workload_trim(obj, NULL);
	cr_assert_not_null(trimmed);
	cr_assert_null(json_object_get(trimmed, "spec"));
	cr_assert_null(json_object_get(json_object_get(json_object_get(trimmed, "status"), "admission"),
				       "podSetAssignments"));
	cr_assert_eq(kueue_workload_read(obj, &before), 0);
	cr_assert_eq(kueue_workload_read(trimmed, &after), 0);
	cr_assert_eq(after.state, before.state);
	cr_assert_str_eq(after.cluster_queue, "team-a-cq");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(trimmed, "metadata"),
							   "namespace")), "ml");
	json_decref(trimmed);
	json_decref(obj);
}
