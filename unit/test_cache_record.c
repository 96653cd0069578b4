/*
 * The records admission walks instead of cached objects
 * (controller/manager/cache_record.h): each holds what gang.c reads of
 * the object it summarizes, and reads back the same.
 */
#include <criterion/criterion.h>

#include <jansson.h>
#include <string.h>

#include "base/err.h"
#include "api/labels.h"
#include "controller/manager/cache_record.h"
#include "api/pod_trim.h"
#include "kube/store.h"

static unsigned char rec[STORE_RECORD_MAX];

Test(cache_record, an_own_pod_keeps_node_phase_attempt_and_main_requests)
{
	json_t *pod = json_pack(
		"{s:{s:s, s:s, s:{s:s, s:s}}, s:{s:s, s:[{s:s, s:{s:{s:s, s:s, s:s, s:s, s:s}}},"
		" {s:s, s:{s:{s:s}}}]}, s:{s:s}}",
		"metadata", "name", "j-0", "namespace", "ml", "labels", LABEL_JOB_NAME, "j",
		LABEL_RESTART_ATTEMPT, "3", "spec", "nodeName", "gpu-1", "containers", "name",
		"main", "resources", "requests", "cpu", "1500m", "memory", "1Gi", "nvidia.com/gpu",
		"8", "pods", "1", "bad", "x", "name", "side", "resources", "requests", "cpu", "9",
		"status", "phase", "Succeeded");
	json_t *trimmed = pod_trim(pod, NULL);
	struct cache_pod p;
	int len = cache_record_pod(trimmed, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_pod_read(rec, (size_t)len, &p), 0);
	cr_assert_str_eq(p.node, "gpu-1");
	cr_assert_eq(p.cpu_milli, 1500);
	cr_assert_eq(p.memory_milli, 1073741824000LL);
	cr_assert_eq(p.n_ext, 1);
	cr_assert_str_eq(p.ext_name[0], "nvidia.com/gpu");
	cr_assert_eq(p.ext_milli[0], 8000);
	cr_assert_eq(p.phase, POD_SUCCEEDED);
	cr_assert_eq(p.attempt, 3);
	/* Something else is not a pod record. */
	cr_assert_eq(cache_pod_read(rec, 3, &p), CADRE_EINVAL);
	json_decref(trimmed);
	json_decref(pod);
}

/* One of cadre's pods pinned to gpu-2 and not bound, or being deleted. */
static json_t *pinned_pod(bool deleting)
{
	json_t *pod = json_pack(
		"{s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}},"
		" s:[{s:s, s:{s:{s:s}}}]}, s:{s:s}}",
		"metadata", "name", "j-1", "namespace", "ml", "labels", LABEL_JOB_NAME, "j",
		LABEL_RESTART_ATTEMPT, "0", LABEL_NODE_RANK, "1", "spec", "affinity",
		"nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
		"nodeSelectorTerms", "matchFields", "key", "metadata.name", "operator", "In",
		"values", "gpu-2", "containers", "name", "main", "resources", "requests",
		"nvidia.com/gpu", "8", "status", "phase", "Pending");

	if (deleting)
		json_object_set_new(json_object_get(pod, "metadata"), "deletionTimestamp",
				    json_string("2026-12-01T00:00:00Z"));
	return pod;
}

Test(cache_record, an_own_pod_not_bound_yet_names_the_node_it_is_pinned_to_until_it_goes)
{
	for (int deleting = 0; deleting < 2; deleting++) {
		json_t *pod = pinned_pod(deleting), *trimmed = pod_trim(pod, NULL);
		struct cache_pod p;
		int len = cache_record_pod(trimmed, rec, sizeof(rec), NULL);

		cr_assert_gt(len, 0);
		cr_assert_eq(cache_pod_read(rec, (size_t)len, &p), 0);
		cr_assert_null(p.node, "not bound");
		if (deleting)
			cr_assert_null(p.pinned, "a pod being deleted is never placed");
		else
			cr_assert_str_eq(p.pinned, "gpu-2");
		cr_assert_eq(p.rank, 1);
		json_decref(trimmed);
		json_decref(pod);
	}
}

Test(cache_record, a_summary_keeps_its_effective_requests_and_an_unbound_pod_no_node)
{
	json_t *pod = json_pack(
		"{s:{s:s, s:s}, s:{s:[{s:s, s:{s:{s:s}}}], s:[{s:s, s:{s:{s:s}}}]},"
		" s:{s:s}}",
		"metadata", "name", "web", "namespace", "ml", "spec", "containers", "name", "a",
		"resources", "requests", "cpu", "1", "initContainers", "name", "init",
		"resources", "requests", "cpu", "4", "status", "phase", "Pending");
	json_t *summary = pod_trim_summary(pod, NULL);
	struct cache_pod p;
	int len = cache_record_pod(summary, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_pod_read(rec, (size_t)len, &p), 0);
	cr_assert_null(p.node);
	cr_assert_eq(p.cpu_milli, 4000);
	cr_assert_eq(p.n_ext, 0);
	cr_assert_eq(p.attempt, -1);
	json_decref(summary);
	json_decref(pod);
}

static json_t *job(const char *phase, bool suspend, const char *queue)
{
	json_t *j = json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:{s:i, s:{s:s}, s:s, s:s, s:b},"
		" s:{s:s, s:i, s:i, s:[{s:s, s:s, s:s}]}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob", "metadata", "name", "j",
		"namespace", "ml", "uid", "u-1", "creationTimestamp", "2026-12-01T00:00:00Z",
		"spec", "numNodes", 4, "resources", "accelerators", "H100:8", "image", "img",
		"run", "true", "suspend", suspend, "status", "phase", phase, "restarts", 1,
		"infraRestarts", 2, "conditions", "type", "Admitted", "status", "True",
		"lastTransitionTime", "2026-12-01T00:00:00Z");

	if (queue)
		json_object_set_new(json_object_get(j, "spec"), "queue", json_string(queue));
	return j;
}

static struct cache_job job_record(json_t *j)
{
	struct cache_job out;
	int len = cache_record_job(j, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_job_read(rec, (size_t)len, &out), 0);
	json_decref(j);
	return out;
}

Test(cache_record, a_job_record_says_what_the_job_is_to_gang_admission)
{
	struct cache_job r = job_record(job("Running", false, NULL));

	cr_assert_eq(r.candidacy, CANDIDACY_HOLDS);
	cr_assert_eq(r.attempt, 3);
	cr_assert_eq(r.num_nodes, 4);
	cr_assert_str_eq(r.uid, "u-1");
	cr_assert_str_eq(r.phase, "Running");
	cr_assert_eq(job_record(job("Queued", false, NULL)).candidacy, CANDIDACY_HOLDS);
	cr_assert_eq(job_record(job("Succeeded", false, NULL)).candidacy, CANDIDACY_NONE);
	cr_assert_eq(job_record(job("Pending", false, NULL)).candidacy, CANDIDACY_NONE);
	cr_assert_eq(job_record(job("Restarting", false, NULL)).candidacy, CANDIDACY_NONE);
	cr_assert_eq(job_record(job("Queued", true, NULL)).candidacy, CANDIDACY_NONE);
	cr_assert_eq(job_record(job("Queued", false, "team-a")).candidacy, CANDIDACY_NONE);
	/* One that does not parse cannot wait either, and still has a record. */
	r = job_record(json_pack("{s:{s:s}, s:s}", "metadata", "name", "x", "spec", "bad"));
	cr_assert_eq(r.candidacy, CANDIDACY_NONE);
	cr_assert_str_eq(r.uid, "");
}

Test(cache_record, a_node_record_reads_back_as_admission_reads_the_node)
{
	json_t *node = json_pack(
		"{s:{s:s, s:{s:s, s:s, s:i}}, s:{s:b, s:[{s:s, s:s, s:s}, {s:s, s:s}]},"
		" s:{s:{s:s, s:s, s:s, s:s, s:s}, s:[{s:s, s:s}, {s:s, s:s}]}}",
		"metadata", "name", "gpu-1", "labels", "nvidia.com/gpu.product", "H100", "zone",
		"a", "weird", 7, "spec", "unschedulable", 1, "taints", "key", "dedicated", "value",
		"ml", "effect", "NoSchedule", "key", "spot", "effect", "PreferNoSchedule",
		"status", "allocatable", "cpu", "64", "memory", "512Gi", "pods", "110",
		"nvidia.com/gpu", "8", "junk", "?", "conditions", "type", "MemoryPressure",
		"status", "False", "type", "Ready", "status", "True");
	struct cache_node_counts n;
	struct cap_resource ext[4];
	struct cap_label labels[4];
	struct cap_taint taints[4];
	struct cap_node cn;
	int len = cache_record_node(node, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_node_counts(rec, (size_t)len, &n), 0);
	cr_assert_eq(n.n_ext, 1);
	cr_assert_eq(n.n_labels, 2);
	cr_assert_eq(n.n_taints, 2);
	cr_assert_eq(cache_node_read(rec, (size_t)len, &cn, ext, labels, taints), 0);
	cr_assert_str_eq(cn.name, "gpu-1");
	cr_assert(cn.ready);
	cr_assert(cn.unschedulable);
	cr_assert_eq(cn.cpu_milli, 64000);
	cr_assert_eq(cn.pods, 110);
	cr_assert_str_eq(cn.extended[0].name, "nvidia.com/gpu");
	cr_assert_eq(cn.extended[0].milli, 8000);
	cr_assert_str_eq(cn.labels[0].key, "nvidia.com/gpu.product");
	cr_assert_str_eq(cn.labels[1].value, "a");
	cr_assert_str_eq(cn.taints[0].key, "dedicated");
	cr_assert_str_eq(cn.taints[0].value, "ml");
	cr_assert_eq(cn.taints[0].effect, CAP_NO_SCHEDULE);
	cr_assert_null(cn.taints[1].value);
	cr_assert_eq(cn.taints[1].effect, CAP_PREFER_NO_SCHEDULE);
	cr_assert_str_eq(cache_node_label(rec, (size_t)len, "zone"), "a");
	cr_assert_null(cache_node_label(rec, (size_t)len, "weird"));
	cr_assert_eq(cache_node_ready(rec, (size_t)len), 1);
	cr_assert_eq(cache_node_ready(rec, 3), CADRE_EINVAL);
	/* Too large for the room given: no record, the node is decoded instead. */
	cr_assert_eq(cache_record_node(node, rec, 40, NULL), 0);
	json_decref(node);
}

/* The reconciler asks a node record whether the node is Ready, for every pod on every pass. */
Test(cache_record, a_node_record_says_whether_the_node_is_ready)
{
	json_t *node = json_pack("{s:{s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", "gpu-2",
				 "status", "conditions", "type", "Ready", "status", "Unknown");
	int len = cache_record_node(node, rec, sizeof(rec), NULL);

	cr_assert_gt(len, 0);
	cr_assert_eq(cache_node_ready(rec, (size_t)len), 0);
	json_decref(node);
	node = json_pack("{s:{s:s}}", "metadata", "name", "gpu-3");
	len = cache_record_node(node, rec, sizeof(rec), NULL);
	cr_assert_gt(len, 0);
	cr_assert_eq(cache_node_ready(rec, (size_t)len), 0, "a node without conditions is not Ready");
	json_decref(node);
}

/* A DaemonSet's or static pod is a service of its node; an exclusive job's pod says so. */
Test(cache_record, a_pod_record_tells_node_services_and_exclusive_jobs_apart)
{
	json_t *ds = json_pack("{s:{s:s, s:s, s:[{s:s, s:s}]}, s:{s:s}, s:{s:s}}",
			       "metadata", "name", "agent", "namespace", "kube-system",
			       "ownerReferences", "kind", "DaemonSet", "name", "agent",
			       "spec", "nodeName", "n1", "status", "phase", "Running");
	json_t *mirror = json_pack("{s:{s:s, s:s, s:{s:s}}, s:{s:s}, s:{s:s}}",
				   "metadata", "name", "etcd-n1", "namespace", "kube-system",
				   "annotations", "kubernetes.io/config.mirror", "x",
				   "spec", "nodeName", "n1", "status", "phase", "Running");
	json_t *job = json_pack("{s:{s:s, s:s, s:[{s:s, s:s}]}, s:{s:s}, s:{s:s}}",
				"metadata", "name", "w", "namespace", "ml", "ownerReferences",
				"kind", "ReplicaSet", "name", "rs", "spec", "nodeName", "n1",
				"status", "phase", "Running");
	json_t *own = pinned_pod(false), *t;
	json_t *in[] = { ds, mirror, job };
	struct cache_pod p;
	int len;

	for (size_t i = 0; i < 3; i++) {
		t = pod_trim_summary(in[i], NULL);
		len = cache_record_pod(t, rec, sizeof(rec), NULL);
		cr_assert_gt(len, 0);
		cr_assert_eq(cache_pod_read(rec, (size_t)len, &p), 0);
		cr_assert_eq(p.node_service, i < 2, "pod %zu", i);
		cr_assert_not(p.exclusive);
		json_decref(t);
		json_decref(in[i]);
	}
	json_object_set_new(json_object_get(json_object_get(own, "metadata"), "labels"),
			    LABEL_EXCLUSIVE, json_string("true"));
	t = pod_trim(own, NULL);
	len = cache_record_pod(t, rec, sizeof(rec), NULL);
	cr_assert_eq(cache_pod_read(rec, (size_t)len, &p), 0);
	cr_assert(p.exclusive);
	cr_assert_not(p.node_service);
	json_decref(t);
	json_decref(own);
}
