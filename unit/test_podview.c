#include <criterion/criterion.h>

#include <string.h>

#include "controller/trainingjob/podview.h"
#include "api/pod_trim.h"
#include "kube/store.h"

static json_t *load(const char *text)
{
	json_error_t err;
	json_t *pod = json_loads(text, JSON_DECODE_ANY, &err);

	cr_assert_not_null(pod, "%s", err.text);
	return pod;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * podview_read, checked against the pod cache: the controller reads its
 * own pods as pod_trim cut them, so a trimmed pod must read exactly
 * as the whole one. (Pods without cadre's job label are not cadre's, and
 * are cached as summaries nobody reads a podview from.)
 */
static void read_pod(const json_t *pod, struct podview *v)
{
	struct podview t;
	json_t *trimmed;

	podview_read(pod, v);
	if (!json_object_get(json_object_get(json_object_get(pod, "metadata"), "labels"),
			     LABEL_JOB_NAME))
		return;
	trimmed = pod_trim(pod, NULL);
	cr_assert_not_null(trimmed);
	podview_read(trimmed, &t);
	cr_assert(same_str(t.name, v->name) && same_str(t.uid, v->uid) &&
		  same_str(t.node, v->node) && same_str(t.ip, v->ip) &&
		  same_str(t.reason, v->reason) && same_str(t.message, v->message),
		  "the cached pod reads differently: reason %s/%s message %s/%s", t.reason,
		  v->reason, t.message, v->message);
	cr_assert(t.rank == v->rank && t.attempt == v->attempt && t.phase == v->phase &&
		  t.gated == v->gated && t.n_gates == v->n_gates && t.deleting == v->deleting &&
		  t.ready == v->ready && t.trouble == v->trouble && t.exit_code == v->exit_code,
		  "the cached pod reads differently");
	json_decref(trimmed);
}

#define LABELS "\"labels\":{\"cadre.dev/job-name\":\"j\",\"cadre.dev/node-rank\":\"3\"," \
	"\"cadre.dev/restart-attempt\":\"2\"}"

Test(podview, reads_rank_attempt_gate_node_and_ip)
{
	json_t *pod = load("{\"metadata\":{\"name\":\"j-3\",\"uid\":\"u\"," LABELS "},"
			   "\"spec\":{\"nodeName\":\"n1\",\"schedulingGates\":[{\"name\":\"x\"},"
			   "{\"name\":\"cadre.dev/gang\"}]},"
			   "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.1.2.3\","
			   "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
	struct podview v;

	read_pod(pod, &v);
	cr_assert_str_eq(v.name, "j-3");
	cr_assert_eq(v.rank, 3);
	cr_assert_eq(v.attempt, 2);
	cr_assert(v.gated);
	cr_assert_eq(v.n_gates, 2);
	cr_assert_str_eq(v.node, "n1");
	cr_assert_str_eq(v.ip, "10.1.2.3");
	cr_assert_eq(v.phase, POD_RUNNING);
	cr_assert(v.ready);
	cr_assert_eq(v.trouble, POD_TROUBLE_NONE);
	json_decref(pod);
}

Test(podview, a_non_zero_exit_is_user_code)
{
	json_t *pod = load("{\"metadata\":{" LABELS "},\"status\":{\"phase\":\"Failed\","
			   "\"containerStatuses\":[{\"name\":\"sidecar\",\"state\":{}},"
			   "{\"name\":\"main\",\"state\":{\"terminated\":{\"exitCode\":3,"
			   "\"reason\":\"Error\",\"message\":\"boom\"}}}]}}");
	struct podview v;

	read_pod(pod, &v);
	cr_assert_eq(v.trouble, POD_TROUBLE_EXITED);
	cr_assert_eq(v.exit_code, 3);
	cr_assert_str_eq(v.reason, "Error");
	cr_assert_str_eq(v.message, "boom");
	json_decref(pod);
}

Test(podview, eviction_and_preemption_are_infrastructure)
{
	json_t *evicted = load("{\"metadata\":{" LABELS "},\"status\":{\"phase\":\"Failed\","
			       "\"reason\":\"Evicted\",\"message\":\"low on memory\"}}");
	json_t *preempted = load("{\"metadata\":{" LABELS ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
				 "\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":"
				 "\"DisruptionTarget\",\"status\":\"True\",\"reason\":"
				 "\"PreemptionByScheduler\"}]}}");
	struct podview v;

	read_pod(evicted, &v);
	cr_assert_eq(v.trouble, POD_TROUBLE_EVICTED);
	cr_assert_str_eq(v.message, "low on memory");
	read_pod(preempted, &v);
	cr_assert_eq(v.trouble, POD_TROUBLE_EVICTED);
	cr_assert(v.deleting);
	cr_assert_str_eq(v.reason, "PreemptionByScheduler");
	json_decref(evicted);
	json_decref(preempted);
}

Test(podview, image_pull_and_config_errors_are_start_trouble)
{
	json_t *pod = load("{\"metadata\":{" LABELS "},\"status\":{\"phase\":\"Pending\","
			   "\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"waiting\":"
			   "{\"reason\":\"CreateContainerConfigError\",\"message\":"
			   "\"secret \\\"hf\\\" not found\"}}}]}}");
	struct podview v;

	read_pod(pod, &v);
	cr_assert_eq(v.trouble, POD_TROUBLE_START);
	cr_assert_str_eq(v.reason, "CreateContainerConfigError");
	cr_assert_str_eq(v.message, "secret \"hf\" not found");
	json_decref(pod);
}

Test(podview, unschedulable_is_read_from_the_scheduler_condition)
{
	json_t *pod = load("{\"metadata\":{" LABELS "},\"status\":{\"phase\":\"Pending\","
			   "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
			   "\"reason\":\"Unschedulable\",\"message\":\"0/4 nodes are available\"}]}}");
	struct podview v;

	read_pod(pod, &v);
	cr_assert_eq(v.trouble, POD_TROUBLE_UNSCHEDULABLE);
	cr_assert_str_eq(v.message, "0/4 nodes are available");
	json_decref(pod);
}

Test(podview, garbage_reads_as_unknown_without_crashing)
{
	const char *const inputs[] = {
		"{}", "[]", "null", "{\"metadata\":5,\"spec\":[],\"status\":\"x\"}",
		"{\"metadata\":{\"labels\":{\"cadre.dev/node-rank\":\"-1\","
		"\"cadre.dev/restart-attempt\":\"99999999999\"}}}",
		"{\"spec\":{\"schedulingGates\":[1,null,{\"name\":7}]},\"status\":{\"phase\":"
		"\"Failed\",\"containerStatuses\":[{\"state\":{\"terminated\":{\"exitCode\":"
		"\"x\"}}}],\"conditions\":[5,{\"type\":null}]}}",
	};
	struct podview v;

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		json_t *pod = load(inputs[i]);

		read_pod(pod, &v);
		cr_assert_eq(v.rank, -1);
		cr_assert_eq(v.attempt, -1);
		cr_assert_not(v.gated);
		json_decref(pod);
	}
}

Test(podview, the_kubelets_storage_evictions_are_read_with_the_volume_and_limit)
{
	char volume[16], limit[16];

	cr_assert(podview_storage_eviction("Usage of EmptyDir volume \"scratch-0\" exceeds the "
					   "limit \"100Gi\". ", volume, sizeof(volume), limit,
					   sizeof(limit)));
	cr_assert_str_eq(volume, "scratch-0");
	cr_assert_str_eq(limit, "100Gi");
	cr_assert(podview_storage_eviction("Container main exceeded its local ephemeral storage "
					   "limit \"10Gi\". ", volume, sizeof(volume), limit,
					   sizeof(limit)));
	cr_assert_str_eq(volume, "");
	cr_assert(podview_storage_eviction("Pod ephemeral local storage usage exceeds the total "
					   "limit of containers 10Gi. ", NULL, 0, NULL, 0));
	/* Too long for the buffer: cut, still terminated. */
	cr_assert(podview_storage_eviction("Usage of EmptyDir volume \"a-very-long-volume-name\" "
					   "exceeds the limit \"1Gi\". ", volume, 8, limit,
					   sizeof(limit)));
	cr_assert_str_eq(volume, "a-very-");
	cr_assert_not(podview_storage_eviction("The node was low on resource: ephemeral-storage. ",
					       NULL, 0, NULL, 0));
	cr_assert_not(podview_storage_eviction("Usage of EmptyDir", volume, sizeof(volume), NULL, 0));
	cr_assert_not(podview_storage_eviction(NULL, NULL, 0, NULL, 0));
}
