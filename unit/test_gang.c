/*
 * Gang admission against the caches (gang.c), in the window that a burst of
 * submissions opens: a gang has been admitted and its pods created, but its
 * Admitted status has not come back through the watch. Driven with a
 * manager that has only the stores, options and admission records that
 * gang_admit reads; the stores are filled as the reflectors would fill them.
 */
#include <criterion/criterion.h>

#include <jansson.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "api/fielderr.h"
#include "controller/manager/cache_record.h"
#include "controller/admission/gang.h"
#include "controller/admission/gang_pass.h"
#include "controller/manager/manager.h"
#include "controller/partition/partitions.h"
#include "controller/trainingjob/podview.h"
#include "api/pod_trim.h"
#include "kube/store.h"
#include "unit/support/gangman.h"

static struct manager m;
static struct options opts;

static void setup(void)
{
	gangman_setup(&m, &opts);
}

static void teardown(void)
{
	gangman_teardown(&m);
}

TestSuite(gang, .init = setup, .fini = teardown);

static void upsert(enum manager_kind kind, json_t *obj)
{
	gangman_upsert(&m, kind, obj);
}

static void add_node(const char *name)
{
	upsert(KIND_NODES, json_pack(
		"{s:{s:s, s:{s:s}}, s:{s:{s:s, s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
		"metadata", "name", name, "labels", "nvidia.com/gpu.product",
		"NVIDIA-H100-80GB-HBM3",
		"status", "allocatable", "cpu", "64", "memory", "512Gi", "pods", "110",
		"nvidia.com/gpu", "8", "conditions", "type", "Ready", "status", "True"));
}

/* A TrainingJob as cached: Queued, or with the Admitted condition when admitted. */
static json_t *job_json(const char *name, const char *uid, int nodes, int priority,
			const char *created, bool admitted)
{
	json_t *job = json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:i, s:s}, s:{s:i, s:{s:s}, s:s, s:s, s:i}, "
		"s:{s:s, s:s}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
		"metadata", "name", name, "namespace", "ns", "uid", uid, "generation", 1,
		"creationTimestamp", created,
		"spec", "numNodes", nodes, "resources", "accelerators", "H100:8", "image", "img",
		"run", "true", "priority", priority,
		"status", "phase", admitted ? "Starting" : "Queued", "jobId", "1");

	cr_assert_not_null(job);
	if (admitted)
		json_object_set_new(json_object_get(job, "status"), "conditions", json_pack(
			"[{s:s, s:s, s:s, s:s, s:s}]", "type", "Admitted", "status", "True",
			"reason", "Admitted", "message", "admitted",
			"lastTransitionTime", "2026-12-01T00:00:00Z"));
	return job;
}

/*
 * Created ago_s seconds ago: recent, so that no job has waited past
 * --starvation-seconds (a starving job fences its nodes, which would hide
 * the window these tests are about).
 */
static void add_job(const char *name, const char *uid, int nodes, int priority, int ago_s,
		    bool admitted)
{
	time_t at = time(NULL) - ago_s;
	char created[32];
	struct tm tm;

	gmtime_r(&at, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	upsert(KIND_TRAININGJOBS, job_json(name, uid, nodes, priority, created, admitted));
}

/* One of cadre's pods as the watch shows it: gated, or released and maybe bound. */
static void add_pod(const char *job, int rank, bool gated, const char *node)
{
	char name[64], rank_s[8];
	json_t *pod;

	snprintf(name, sizeof(name), "%s-%d", job, rank);
	snprintf(rank_s, sizeof(rank_s), "%d", rank);
	pod = json_pack("{s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}}, "
			"s:{s:[{s:s, s:{s:{s:s}, s:{s:s}}}]}, s:{s:s}}",
			"metadata", "name", name, "namespace", "ns", "uid", name, "labels",
			LABEL_JOB_NAME, job, LABEL_NODE_RANK, rank_s, LABEL_RESTART_ATTEMPT, "0",
			"spec", "containers", "name", "main", "resources", "requests",
			"nvidia.com/gpu", "8", "limits", "nvidia.com/gpu", "8",
			"status", "phase", "Pending");
	cr_assert_not_null(pod);
	if (gated)
		json_object_set_new(json_object_get(pod, "spec"), "schedulingGates",
				    json_pack("[{s:s}]", "name", GANG_GATE));
	if (node)
		json_object_set_new(json_object_get(pod, "spec"), "nodeName", json_string(node));
	upsert(KIND_PODS, pod);
}

/* Somebody's pod bound to node with 8 GPUs, as the cache of other pods holds it. */
static void add_other_pod(const char *ns, const char *name, const char *job, const char *node)
{
	json_t *pod = json_pack("{s:{s:s, s:s, s:s, s:{}}, s:{s:s, s:[{s:s, s:{s:{s:s}}}]}, "
				"s:{s:s}}",
				"metadata", "name", name, "namespace", ns, "uid", name, "labels",
				"spec", "nodeName", node, "containers", "name", "main", "resources",
				"requests", "nvidia.com/gpu", "8", "status", "phase", "Running");

	cr_assert_not_null(pod);
	if (job)
		json_object_set_new(json_object_get(json_object_get(pod, "metadata"), "labels"),
				    LABEL_JOB_NAME, json_string(job));
	upsert(KIND_OTHER_PODS, pod);
}

/*
 * gang_admit for the cached job ns/name: its message into msg and, when
 * admitted, the node of every rank, comma-separated, into nodes (may be NULL).
 */
static enum admit_verdict decide_on(const char *name, char *msg, size_t size, char *nodes,
				    size_t nodes_size)
{
	char key[64];
	json_t *obj = NULL;
	struct trainingjob job;
	struct field_errors errs;
	struct tj_admission out;
	struct jobmemo_admission held = { 0 };

	snprintf(key, sizeof(key), "ns/%s", name);
	cr_assert_eq(store_get(m.stores[KIND_TRAININGJOBS], key, &obj), 0);
	tj_init(&job);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(obj, &job, &errs), 0);
	/* As the reconciler asks: with its partition's defaults applied. */
	if (m.stores[KIND_PARTITIONS]) {
		struct job_partition part;

		cr_assert_eq(partitions_apply(&m, &job, &part), 0);
	}
	cr_assert_eq(gang_admit(&m, &job, &out, &held), 0);
	snprintf(msg, size, "%s", out.message ? out.message : "");
	if (out.verdict == ADMIT_YES)
		cr_assert_eq(out.n_nodes, job.spec.num_nodes, "an admission places every rank");
	if (nodes) {
		nodes[0] = '\0';
		for (int r = 0; r < out.n_nodes; r++)
			snprintf(nodes + strlen(nodes), nodes_size - strlen(nodes), "%s%s",
				 r ? "," : "", out.nodes[r]);
	}
	jobmemo_admission_release(&held);
	field_errors_release(&errs);
	tj_release(&job);
	json_decref(obj);
	return out.verdict;
}

static enum admit_verdict decide(const char *name, char *msg, size_t size)
{
	return decide_on(name, msg, size, NULL, 0);
}

static void assert_admits(const char *name)
{
	char msg[512];

	cr_assert_eq(decide(name, msg, sizeof(msg)), ADMIT_YES, "%s not admitted: %s", name, msg);
}

static void assert_waits(const char *name)
{
	char msg[512];

	cr_assert_eq(decide(name, msg, sizeof(msg)), ADMIT_WAIT, "%s admitted: %s", name, msg);
}

/*
 * The burst seen on a real cluster: gang a (2 nodes) admitted, its pods
 * created, released, one bound; its status not back yet. Counted as a
 * waiting gang, a would no longer fit (its own bound pod takes a node), and
 * b would be placed on the node a's second pod needs.
 */
Test(gang, a_gang_admitted_before_its_status_is_cached_keeps_its_nodes)
{
	add_node("gpu-0");
	add_node("gpu-1");
	add_job("a", "uid-a", 2, 0, 10, false);
	assert_admits("a");
	add_pod("a", 0, false, "gpu-0");
	add_pod("a", 1, false, NULL);
	add_job("b", "uid-b", 1, 0, 9, false);
	assert_waits("b");
}

/*
 * Before a's pods exist: b, of higher priority and submitted after a was
 * admitted, is ahead of a in the queue and would take a's free nodes.
 */
Test(gang, a_later_gang_of_higher_priority_cannot_take_an_admitted_gangs_nodes)
{
	add_node("gpu-0");
	add_node("gpu-1");
	add_job("a", "uid-a", 2, 0, 10, false);
	assert_admits("a");
	add_job("b", "uid-b", 2, 10, 9, false);
	assert_waits("b");
}

/* A status write that failed: the job is asked about again, and is still admitted. */
Test(gang, a_gang_asked_about_again_before_its_status_is_cached_stays_admitted)
{
	char msg[512], nodes[256];

	add_node("gpu-0");
	add_job("a", "uid-a", 1, 0, 10, false);
	assert_admits("a");
	add_pod("a", 0, false, "gpu-0");
	cr_assert_eq(decide_on("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert(strstr(msg, "gpu-0"), "the first decision's message is kept: %s", msg);
	cr_assert_str_eq(nodes, "gpu-0", "and its nodes");
}

/* Nodes with room for GPUs of 4-GPU pods: several ranks share one, first fit packs them. */
static void add_node_gpus(const char *name, const char *gpus)
{
	upsert(KIND_NODES, json_pack(
		"{s:{s:s, s:{s:s}}, s:{s:{s:s, s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
		"metadata", "name", name, "labels", "nvidia.com/gpu.product",
		"NVIDIA-H100-80GB-HBM3",
		"status", "allocatable", "cpu", "64", "memory", "512Gi", "pods", "110",
		"nvidia.com/gpu", gpus, "conditions", "type", "Ready", "status", "True"));
}

/*
 * A job of n ranks of accel each, as cached: admitted with its decision in
 * status.nodes (ranks on nodes[r]), or Queued when nodes is NULL.
 */
static void add_admitted_on(const char *name, const char *uid, const char *accel,
			    const char *const *nodes, int n)
{
	time_t at = time(NULL) - 10;
	char created[32], pod[64];
	struct tm tm;
	json_t *job, *list = json_array();

	gmtime_r(&at, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	job = job_json(name, uid, n, 0, created, nodes != NULL);
	json_object_set_new(json_object_get(job, "spec"), "resources",
			    json_pack("{s:s}", "accelerators", accel));
	for (int r = 0; r < n && nodes; r++) {
		snprintf(pod, sizeof(pod), "%s-%d", name, r);
		json_array_append_new(list, json_pack("{s:i, s:s, s:s}", "rank", r, "pod", pod,
						      "node", nodes[r]));
	}
	json_object_set_new(json_object_get(job, "status"), "nodes", list);
	upsert(KIND_TRAININGJOBS, job);
}

Test(gang, an_admission_places_every_rank_packing_small_pods_first_fit)
{
	char msg[512], nodes[256];

	add_node_gpus("gpu-0", "8");
	add_node_gpus("gpu-1", "8");
	add_admitted_on("a", "uid-a", "H100:4", NULL, 3);
	cr_assert_eq(decide_on("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-0,gpu-0,gpu-1");
}

/*
 * The decision is where the pods are pinned: an admitted gang's ranks not
 * bound yet hold room on exactly their chosen nodes, not where a fit of the
 * cluster as it is now would put them. Here a's two 4-GPU ranks were
 * admitted onto gpu-1; a first fit now would count them on gpu-0 and give
 * gpu-1 to b, whose pod could then never bind beside a's.
 */
Test(gang, an_admitted_gangs_unbound_ranks_hold_room_on_their_chosen_nodes)
{
	static const char *const on_gpu1[] = { "gpu-1", "gpu-1" };
	char msg[512], nodes[256];

	add_node_gpus("gpu-0", "8");
	add_node_gpus("gpu-1", "8");
	add_admitted_on("a", "uid-a", "H100:4", on_gpu1, 2);
	add_job("b", "uid-b", 1, 0, 9, false);
	cr_assert_eq(decide_on("b", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-0");
	/* One of a's ranks bound: it is counted where it is, the other still held. */
	add_pod("a", 0, false, "gpu-1");
	add_job("c", "uid-c", 1, 0, 8, false);
	assert_waits("c");
}

/*
 * With --namespace, another install's gang admitted and created but not
 * bound is seen only through its pods: a pod pinned to a node by name
 * takes its room there before it is bound.
 */
Test(gang, with_a_namespace_another_installs_pinned_unbound_pods_take_capacity)
{
	json_t *pod;

	opts.namespace = "ns";
	add_node("gpu-0");
	pod = json_pack("{s:{s:s, s:s, s:s, s:{s:s}}, s:{s:{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}},"
			" s:[{s:s, s:{s:{s:s}}}]}, s:{s:s}}",
			"metadata", "name", "x-0", "namespace", "team-b", "uid", "x-0", "labels",
			LABEL_JOB_NAME, "x",
			"spec", "affinity", "nodeAffinity",
			"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
			"matchFields", "key", "metadata.name", "operator", "In", "values", "gpu-0",
			"containers", "name", "main", "resources", "requests", "nvidia.com/gpu", "8",
			"status", "phase", "Pending");
	upsert(KIND_OTHER_PODS, pod);
	add_job("a", "uid-a", 1, 0, 10, false);
	assert_waits("a");
}

/* Once the cache shows the admission, the record has done its work. */
Test(gang, the_record_goes_once_the_cache_shows_the_admission)
{
	add_node("gpu-0");
	add_node("gpu-1");
	add_job("a", "uid-a", 1, 0, 10, false);
	assert_admits("a");
	cr_assert_eq(jobmemo_len(m.memo), 1);
	add_job("a", "uid-a", 1, 0, 10, true);
	add_job("b", "uid-b", 1, 0, 9, false);
	assert_admits("b");
	cr_assert_eq(jobmemo_len(m.memo), 1, "only b's record is left");
	add_job("c", "uid-c", 1, 0, 8, false);
	assert_waits("c");
}

/* A job deleted and made again under the same name inherits nothing. */
Test(gang, a_job_replaced_under_the_same_name_does_not_inherit_an_admission)
{
	add_node("gpu-0");
	add_job("a", "uid-a", 1, 0, 10, false);
	assert_admits("a");
	add_job("a", "uid-a2", 1, 0, 7, false);
	add_job("b", "uid-b", 1, 0, 9, false);
	/* The old a holds nothing; b is older than the new a, so b goes first. */
	assert_admits("b");
	assert_waits("a");
}

/* With --namespace, every pod of the cluster is in the cache of other pods. */
Test(gang, with_a_namespace_the_other_pods_cache_selects_every_pod)
{
	cr_assert_str_eq(manager_other_pods_selector(&opts), "!" LABEL_JOB_NAME);
	opts.namespace = "ns";
	cr_assert_null(manager_other_pods_selector(&opts));
}

/* Another cadre install's pods, in a namespace this one does not watch, use GPUs. */
Test(gang, with_a_namespace_cadre_pods_of_other_namespaces_take_capacity)
{
	opts.namespace = "ns";
	add_node("gpu-0");
	add_node("gpu-1");
	add_other_pod("team-b", "x-0", "x", "gpu-0");
	add_other_pod("team-b", "x-1", "x", "gpu-1");
	add_job("a", "uid-a", 1, 0, 10, false);
	assert_waits("a");
}

/* This namespace's own pods are in both caches then; they count once. */
Test(gang, with_a_namespace_own_pods_in_both_caches_count_once)
{
	opts.namespace = "ns";
	add_node("gpu-0");
	add_node("gpu-1");
	add_job("a", "uid-a", 1, 0, 10, true);
	add_pod("a", 0, false, "gpu-0");
	add_other_pod("ns", "a-0", "a", "gpu-0");
	add_job("b", "uid-b", 1, 0, 9, false);
	assert_admits("b");
	add_job("c", "uid-c", 1, 0, 8, false);
	assert_waits("c");
}

/*
 * A node too large for a record (STORE_RECORD_MAX: labels of a few KiB) is
 * decoded instead, and its capacity counts like any other's.
 */
Test(gang, a_node_too_large_for_a_record_still_offers_its_capacity)
{
	json_t *node = json_pack(
		"{s:{s:s, s:{s:s}}, s:{s:{s:s, s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
		"metadata", "name", "gpu-big", "labels", "nvidia.com/gpu.product",
		"NVIDIA-H100-80GB-HBM3",
		"status", "allocatable", "cpu", "64", "memory", "512Gi", "pods", "110",
		"nvidia.com/gpu", "8", "conditions", "type", "Ready", "status", "True");
	json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
	unsigned char rec[STORE_RECORD_MAX];
	char key[64];

	for (int i = 0; i < 200; i++) {
		snprintf(key, sizeof(key), "example.com/a-rather-long-label-%03d", i);
		json_object_set_new(labels, key, json_string("with-a-value-of-some-length"));
	}
	cr_assert_eq(cache_record_node(node, rec, sizeof(rec), NULL), 0);
	upsert(KIND_NODES, node);
	add_job("a", "uid-a", 1, 0, 10, false);
	assert_admits("a");
	add_pod("a", 0, false, "gpu-big");
	add_job("b", "uid-b", 1, 0, 9, false);
	assert_waits("b");
}

/* A job's later attempts leave behind the nodes in its status.excludedNodes. */
Test(gang, a_job_leaves_its_excluded_nodes_behind_and_says_so_when_nothing_else_fits)
{
	json_t *job;
	char msg[512], nodes[256];

	add_node("gpu-0");
	add_node("gpu-1");
	job = job_json("a", "uid-a", 1, 0, "2026-12-01T00:00:00Z", false);
	json_object_set_new(json_object_get(job, "status"), "excludedNodes",
			    json_pack("[{s:s, s:s}]", "node", "gpu-0", "reason", "NodeLost"));
	upsert(KIND_TRAININGJOBS, job);
	cr_assert_eq(decide_on("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-1");

	add_pod("other", 0, false, "gpu-1");
	add_job("other", "uid-o", 1, 0, 30, true);
	job = job_json("b", "uid-b", 1, 0, "2026-12-01T00:00:01Z", false);
	json_object_set_new(json_object_get(job, "status"), "excludedNodes",
			    json_pack("[{s:s, s:s}]", "node", "gpu-0", "reason", "Hung"));
	upsert(KIND_TRAININGJOBS, job);
	cr_assert_eq(decide("b", msg, sizeof(msg)), ADMIT_WAIT);
	cr_assert(strstr(msg, "1 this job left behind after failures there"), "%s", msg);
}

/*
 * A partition's nodeSelector and tolerations are the job's (docs/design.md 11):
 * admission places its ranks only on the partition's nodes, where its
 * tolerations let it, before any pod is pinned there.
 */
Test(gang, a_partitions_node_selector_and_tolerations_decide_where_its_jobs_are_admitted)
{
	json_t *job;
	char msg[512], nodes[256];

	add_node("gpu-0");
	upsert(KIND_NODES, json_pack(
		"{s:{s:s, s:{s:s, s:s}}, s:{s:[{s:s, s:s, s:s}]}, "
		"s:{s:{s:s, s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
		"metadata", "name", "gpu-1", "labels", "nvidia.com/gpu.product",
		"NVIDIA-H100-80GB-HBM3", "pool", "gpu",
		"spec", "taints", "key", "team", "value", "a", "effect", "NoSchedule",
		"status", "allocatable", "cpu", "64", "memory", "512Gi", "pods", "110",
		"nvidia.com/gpu", "8", "conditions", "type", "Ready", "status", "True"));
	upsert(KIND_PARTITIONS, json_pack("{s:{s:s}, s:{s:{s:s}, s:[{s:s, s:s}]}}",
					  "metadata", "name", "gpu",
					  "spec", "nodeSelector", "pool", "gpu",
					  "tolerations", "key", "team", "operator", "Exists"));
	/* Without the partition, gpu-1's taint keeps a job off it: two ranks do not fit. */
	upsert(KIND_TRAININGJOBS, job_json("b", "uid-b", 2, 0, "2026-12-01T00:00:00Z", false));
	cr_assert_eq(decide("b", msg, sizeof(msg)), ADMIT_WAIT, "%s", msg);
	/* With it, only gpu-1 carries its label. */
	job = job_json("a", "uid-a", 1, 0, "2026-12-01T00:00:01Z", false);
	json_object_set_new(json_object_get(job, "spec"), "partition", json_string("gpu"));
	upsert(KIND_TRAININGJOBS, job);
	cr_assert_eq(decide_on("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-1");
	/* Two ranks in a partition of one node wait, though gpu-0 is free. */
	job = job_json("c", "uid-c", 2, 0, "2026-12-01T00:00:02Z", false);
	json_object_set_new(json_object_get(job, "spec"), "partition", json_string("gpu"));
	upsert(KIND_TRAININGJOBS, job);
	cr_assert_eq(decide("c", msg, sizeof(msg)), ADMIT_WAIT, "%s", msg);
}

/* --- only jobs that can start take room (docs/design.md 3.1, candidate.h) --- */

/* A job as cached, with members merged into its spec and its status. */
static void add_job_with(const char *name, const char *uid, int nodes, int ago_s, bool admitted,
			 const char *spec_extra, const char *status_extra)
{
	time_t at = time(NULL) - ago_s;
	char created[32];
	struct tm tm;
	json_t *job, *more;

	gmtime_r(&at, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	job = job_json(name, uid, nodes, 0, created, admitted);
	if (spec_extra) {
		cr_assert_not_null(more = json_loads(spec_extra, 0, NULL), "%s", spec_extra);
		json_object_update(json_object_get(job, "spec"), more);
		json_decref(more);
	}
	if (status_extra) {
		cr_assert_not_null(more = json_loads(status_extra, 0, NULL), "%s", status_extra);
		json_object_update(json_object_get(job, "status"), more);
		json_decref(more);
	}
	upsert(KIND_TRAININGJOBS, job);
}

/* One of cadre's pods of attempt 0 in phase, bound to node or pinned to pinned. */
static void add_own_pod(const char *job, int rank, const char *phase, const char *node,
			const char *pinned, bool deleting)
{
	char name[64], rank_s[8];
	json_t *pod, *spec;

	snprintf(name, sizeof(name), "%s-%d", job, rank);
	snprintf(rank_s, sizeof(rank_s), "%d", rank);
	pod = json_pack("{s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}}, "
			"s:{s:[{s:s, s:{s:{s:s}}}]}, s:{s:s}}",
			"metadata", "name", name, "namespace", "ns", "uid", name, "labels",
			LABEL_JOB_NAME, job, LABEL_NODE_RANK, rank_s, LABEL_RESTART_ATTEMPT, "0",
			"spec", "containers", "name", "main", "resources", "requests",
			"nvidia.com/gpu", "8", "status", "phase", phase);
	cr_assert_not_null(pod);
	spec = json_object_get(pod, "spec");
	if (node)
		json_object_set_new(spec, "nodeName", json_string(node));
	if (pinned)
		json_object_set_new(spec, "affinity", json_pack(
			"{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}", "nodeAffinity",
			"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
			"matchFields", "key", "metadata.name", "operator", "In", "values", pinned));
	if (deleting)
		json_object_set_new(json_object_get(pod, "metadata"), "deletionTimestamp",
				    json_string("2026-12-01T00:00:00Z"));
	upsert(KIND_PODS, pod);
}

/*
 * Item 1 of the shared-site review: an array job runs no pods. Admitted
 * as "ElementsStarted" once its first element started, it used to be held
 * as a gang of numNodes ranks for the array's whole life: on a node that
 * fits one element, the second never started.
 */
Test(gang, an_array_job_holds_nothing_and_its_elements_take_turns_on_one_node)
{
	add_node("gpu-0");
	add_job_with("arr", "uid-arr", 1, 30, true, "{\"array\":\"0-1\"}",
		     "{\"phase\":\"Running\"}");
	add_job_with("arr-0", "uid-arr-0", 1, 20, false, NULL, NULL);
	assert_admits("arr-0");
	/* While element 0 runs there, element 1 waits; once it ends, element 1 starts. */
	add_job_with("arr-0", "uid-arr-0", 1, 20, true, NULL, "{\"phase\":\"Running\"}");
	add_own_pod("arr-0", 0, "Running", "gpu-0", NULL, false);
	add_job_with("arr-1", "uid-arr-1", 1, 19, false, NULL, NULL);
	assert_waits("arr-1");
	add_job_with("arr-0", "uid-arr-0", 1, 20, true, NULL, "{\"phase\":\"Succeeded\"}");
	add_own_pod("arr-0", 0, "Succeeded", "gpu-0", NULL, false);
	assert_admits("arr-1");
}

/*
 * Item 2: a job held by a dependency is no candidate. 4 nodes, a runs on
 * one; b (3 nodes, afterok:a), older, waits for a; c (3 nodes) runs on the
 * 3 idle ones. Before, b took them in the walk ahead of c, and after
 * --starvation-seconds fenced them.
 */
Test(gang, a_job_waiting_for_its_dependency_takes_no_room_and_fences_nothing)
{
	static const char dep[] =
		"{\"dependency\":{\"items\":[{\"type\":\"afterok\",\"jobs\":[\"a\"]}]}}";

	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "gpu-%d", i);
		add_node(name);
	}
	add_job_with("a", "uid-a", 1, 5000, true, NULL, "{\"phase\":\"Running\"}");
	add_own_pod("a", 0, "Running", "gpu-0", NULL, false);
	/* Waited far past --starvation-seconds: as a candidate it would fence the idle nodes. */
	add_job_with("b", "uid-b", 3, 4000, false, dep, "{\"conditions\":[{\"type\":\"Admitted\","
		     "\"status\":\"False\",\"reason\":\"Dependency\",\"message\":\"afterok:a\"}]}");
	add_job_with("c", "uid-c", 3, 10, false, NULL, NULL);
	assert_admits("c");
}

/*
 * A job whose dependency the planner has just found met is asked about
 * with the status it is about to write (tj_reconcile.c plan): it takes its
 * place in the queue though the cache still says it waits for a dependency.
 */
Test(gang, a_job_asked_about_as_its_dependency_is_met_is_decided_at_once)
{
	json_t *obj = NULL;
	struct trainingjob job;
	struct field_errors errs;
	struct tj_admission out;
	struct jobmemo_admission held = { 0 };

	add_node("gpu-0");
	add_job_with("b", "uid-b", 1, 100, false,
		     "{\"dependency\":{\"items\":[{\"type\":\"afterok\",\"jobs\":[\"a\"]}]}}",
		     "{\"conditions\":[{\"type\":\"Admitted\",\"status\":\"False\","
		     "\"reason\":\"Dependency\",\"message\":\"afterok:a\"}]}");
	assert_waits("b");  /* as cached: not a candidate, not admitted */
	cr_assert_eq(store_get(m.stores[KIND_TRAININGJOBS], "ns/b", &obj), 0);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(obj, &job, &errs), 0);
	job.status.dependency_met = true;
	cr_assert_eq(gang_admit(&m, &job, &out, &held), 0);
	cr_assert_eq(out.verdict, ADMIT_YES, "%s", out.message);
	jobmemo_admission_release(&held);
	field_errors_release(&errs);
	tj_release(&job);
	json_decref(obj);
}

/*
 * Item 3: a gang that holds nothing now (here suspended) may still have a
 * pod pinned to a node and not deleted yet, which kube-scheduler can bind
 * there at any moment: that node is not free. Once the pod is going, it is.
 */
Test(gang, a_pinned_pod_of_a_gang_that_holds_nothing_still_takes_its_node_until_it_goes)
{
	add_node("gpu-0");
	add_job_with("s", "uid-s", 1, 50, true, "{\"suspend\":true}", "{\"phase\":\"Suspended\"}");
	add_own_pod("s", 0, "Pending", NULL, "gpu-0", false);
	add_job_with("t", "uid-t", 1, 10, false, NULL, NULL);
	assert_waits("t");
	add_own_pod("s", 0, "Pending", NULL, "gpu-0", true);
	assert_admits("t");
}

/*
 * Item 4: with successPolicy All, a rank that finished frees its node at
 * once; before, the gang held it until its last rank ended.
 */
Test(gang, a_rank_that_finished_early_frees_its_node)
{
	static const char *const placed[] = { "gpu-0", "gpu-1" };
	char msg[512], nodes[256];

	add_node("gpu-0");
	add_node("gpu-1");
	add_admitted_on("f", "uid-f", "H100:8", placed, 2);
	add_own_pod("f", 0, "Succeeded", "gpu-0", NULL, false);
	add_own_pod("f", 1, "Pending", NULL, "gpu-1", false);
	add_job_with("g", "uid-g", 1, 5, false, NULL, NULL);
	cr_assert_eq(decide_on("g", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-0");
}


/* A ready H100 node with 8 GPUs, extra labels ("k=v,k2=v2") and ephemeral-storage (may be NULL). */
static void add_node_labelled(const char *name, const char *labels, const char *disk)
{
	json_t *node = json_pack(
		"{s:{s:s, s:{s:s, s:s}}, s:{s:{s:s, s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
		"metadata", "name", name, "labels", "nvidia.com/gpu.product",
		"NVIDIA-H100-80GB-HBM3", "kubernetes.io/hostname", name,
		"status", "allocatable", "cpu", "64", "memory", "512Gi", "pods", "110",
		"nvidia.com/gpu", "8", "conditions", "type", "Ready", "status", "True");
	json_t *lab = json_object_get(json_object_get(node, "metadata"), "labels");
	char copy[256], *save = NULL;

	cr_assert_not_null(node);
	snprintf(copy, sizeof(copy), "%s", labels ? labels : "");
	for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		cr_assert_not_null(eq);
		*eq = '\0';
		json_object_set_new(lab, kv, json_string(eq + 1));
	}
	if (disk)
		json_object_set_new(json_object_get(json_object_get(node, "status"), "allocatable"),
				    "ephemeral-storage", json_string(disk));
	upsert(KIND_NODES, node);
}

/* The job ns/name leaves the cache (deleted), and with it any admission it had. */
static void remove_job(const char *name)
{
	json_t *obj = json_pack("{s:{s:s, s:s}}", "metadata", "name", name, "namespace", "ns");

	cr_assert_eq(store_remove(m.stores[KIND_TRAININGJOBS], obj), 0);
	json_decref(obj);
}

/* A queued job of nodes ranks of 2 H100s, with spec_extra (JSON members) merged into its spec. */
static void add_placed_job(const char *name, int nodes, const char *spec_extra,
			 const char *excluded)
{
	json_t *job = job_json(name, name, nodes, 0, "2026-12-01T00:00:00Z", false);
	json_t *spec = json_object_get(job, "spec"), *extra;
	json_error_t jerr;
	char text[2048];

	json_object_set_new(json_object_get(spec, "resources"), "accelerators",
			    json_string("H100:2"));
	snprintf(text, sizeof(text), "{%s}", spec_extra ? spec_extra : "");
	extra = json_loads(text, 0, &jerr);
	cr_assert_not_null(extra, "%s: %s", jerr.text, text);
	json_object_update(spec, extra);
	json_decref(extra);
	if (excluded) {
		snprintf(text, sizeof(text), "[%s]", excluded);
		extra = json_loads(text, 0, &jerr);
		cr_assert_not_null(extra, "%s: %s", jerr.text, text);
		json_object_set_new(json_object_get(job, "status"), "excludedNodes", extra);
	}
	upsert(KIND_TRAININGJOBS, job);
}

/*
 * Pinned ranks must go where kube-scheduler takes them: a required node
 * affinity keeps the gang on its pool, and anti-affinity between its ranks
 * per host puts one rank on each node, where first fit alone would have
 * packed both small ranks on gpu-0 (off the pool, and two on one host).
 */
Test(gang, required_node_affinity_and_per_host_anti_affinity_decide_the_nodes)
{
	char msg[512], nodes[256];

	add_node_labelled("gpu-0", NULL, NULL);
	add_node_labelled("gpu-1", "pool=b", NULL);
	add_node_labelled("gpu-2", "pool=b", NULL);
	add_placed_job("a", 2, "\"podTemplate\":{\"spec\":{\"affinity\":{\"nodeAffinity\":{"
		     "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
		     "\"matchExpressions\":[{\"key\":\"pool\",\"operator\":\"In\",\"values\":[\"b\"]}]"
		     "}]}},\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
		     "\"labelSelector\":{\"matchLabels\":{\"cadre.dev/job-name\":\"a\"}},"
		     "\"topologyKey\":\"kubernetes.io/hostname\"}]}}}}", NULL);
	cr_assert_eq(decide_on("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-1,gpu-2");
	/* Three such ranks have two nodes of the pool: never, and it says why. */
	add_placed_job("b", 3, "\"podTemplate\":{\"spec\":{\"affinity\":{\"nodeAffinity\":{"
		     "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
		     "\"matchExpressions\":[{\"key\":\"pool\",\"operator\":\"In\",\"values\":[\"b\"]}]"
		     "}]}},\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
		     "\"labelSelector\":{\"matchLabels\":{\"cadre.dev/job-name\":\"b\"}},"
		     "\"topologyKey\":\"kubernetes.io/hostname\"}]}}}}", NULL);
	cr_assert_eq(decide("b", msg, sizeof(msg)), ADMIT_WAIT);
	cr_assert(strstr(msg, "could hold only 2 even if empty; not counted: 1 not matching its "
			 "required node affinity"), "%s", msg);
}

/* What built-in mode cannot model, it never pins: the job waits, naming the field. */
Test(gang, a_job_whose_affinity_cannot_be_modelled_is_never_pinned)
{
	char msg[512];

	add_node_labelled("gpu-0", NULL, NULL);
	add_placed_job("a", 1, "\"podTemplate\":{\"spec\":{\"affinity\":{\"podAffinity\":{"
		     "\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":{"
		     "\"matchLabels\":{\"app\":\"db\"}},\"topologyKey\":\"kubernetes.io/hostname\"}]"
		     "}}}}", NULL);
	cr_assert_eq(decide("a", msg, sizeof(msg)), ADMIT_WAIT);
	cr_assert(strstr(msg, "spec.podTemplate.spec.affinity.podAffinity."), "%s", msg);
}

/* A rank's emptyDir scratch is its ephemeral-storage request: nodes with the room, only. */
Test(gang, scratch_goes_where_ephemeral_storage_has_room)
{
	char msg[512], nodes[256];

	add_node_labelled("gpu-0", NULL, "50Gi");
	add_node_labelled("gpu-1", NULL, NULL);
	add_node_labelled("gpu-2", NULL, "500Gi");
	add_placed_job("a", 1, "\"scratch\":{\"/scratch\":{\"size\":\"100Gi\"}}", NULL);
	cr_assert_eq(decide_on("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-2");
}

/*
 * A Volume bound to a zonal PersistentVolume: its ranks go to the PV's zone,
 * where kube-scheduler's VolumeBinding lets them.
 */
Test(gang, a_job_mounting_a_zonal_volume_is_placed_in_its_zone)
{
	struct store_options plain = { .kind = "objects" };
	char msg[512], nodes[256];

	m.stores[KIND_VOLUMES] = store_new(&plain);
	m.stores[KIND_PVCS] = store_new(&plain);
	m.stores[KIND_PVS] = store_new(&plain);
	upsert(KIND_VOLUMES, json_pack("{s:{s:s, s:s}, s:{s:s, s:s}}", "metadata", "name", "ckpt",
				       "namespace", "ns", "status", "phase", "Bound",
				       "claimName", "ckpt"));
	upsert(KIND_PVCS, json_pack("{s:{s:s, s:s}, s:{s:s}}", "metadata", "name", "ckpt",
				    "namespace", "ns", "spec", "volumeName", "pv-ckpt"));
	upsert(KIND_PVS, json_pack("{s:{s:s}, s:{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}}",
				   "metadata", "name", "pv-ckpt", "spec", "nodeAffinity",
				   "required", "nodeSelectorTerms", "matchExpressions", "key",
				   "topology.kubernetes.io/zone", "operator", "In", "values", "z2"));
	add_node_labelled("gpu-0", "topology.kubernetes.io/zone=z1", NULL);
	add_node_labelled("gpu-1", "topology.kubernetes.io/zone=z2", NULL);
	add_placed_job("a", 1, "\"volumes\":{\"/ckpt\":\"ckpt\"}", NULL);
	cr_assert_eq(decide_on("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-1");
	add_placed_job("b", 2, "\"volumes\":{\"/ckpt\":\"ckpt\"}", NULL);
	cr_assert_eq(decide("b", msg, sizeof(msg)), ADMIT_YES, "%s", msg);
	add_placed_job("c", 5, "\"volumes\":{\"/ckpt\":\"ckpt\"}", NULL);
	cr_assert_eq(decide("c", msg, sizeof(msg)), ADMIT_WAIT);
	cr_assert(strstr(msg, "1 outside its Volumes' PersistentVolume node affinity"), "%s", msg);
}

/*
 * A gang that timed out is not pinned the same way again: the nodes its
 * never-scheduled ranks were pinned to are left out, unless the gang could
 * not fit without them even in an empty cluster (then waiting would be
 * for ever).
 */
Test(gang, nodes_where_a_gang_timed_out_are_left_out_unless_nothing_else_could_hold_it)
{
	char msg[512], nodes[256];

	add_node_labelled("gpu-0", NULL, NULL);
	add_node_labelled("gpu-1", NULL, NULL);
	add_node_labelled("gpu-2", NULL, NULL);
	add_placed_job("a", 1, NULL, "{\"node\":\"gpu-0\",\"reason\":\"GangTimeout\"}");
	cr_assert_eq(decide_on("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-1");
	remove_job("a");
	/* Whole nodes: three ranks need all three, gpu-0 included. */
	add_placed_job("b", 3, "\"resources\":{\"accelerators\":\"H100:8\"}",
		     "{\"node\":\"gpu-0\",\"reason\":\"GangTimeout\"}");
	cr_assert_eq(decide_on("b", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-0,gpu-1,gpu-2");
	remove_job("b");
	/* Two could go elsewhere, once there is room: they wait for it. */
	add_pod("busy", 0, false, "gpu-1");
	add_job("busy", "uid-busy", 1, 0, 30, true);
	add_placed_job("c", 2, "\"resources\":{\"accelerators\":\"H100:8\"}",
		     "{\"node\":\"gpu-0\",\"reason\":\"GangTimeout\"}");
	cr_assert_eq(decide("c", msg, sizeof(msg)), ADMIT_WAIT, "%s", msg);
	cr_assert(strstr(msg, "1 where its gang timed out before (status.excludedNodes)"), "%s",
		  msg);
}

/* sbatch -x: the nodes a job excludes are never its, and the message says so. */
Test(gang, the_nodes_a_job_excludes_are_never_its)
{
	char msg[512], nodes[256];

	add_node("gpu-0");
	add_node("gpu-1");
	add_job_with("x", "uid-x", 1, 5, false, "{\"excludeNodes\":[\"gpu-0\"]}", NULL);
	cr_assert_eq(decide_on("x", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-1");
	add_job_with("y", "uid-y", 2, 4, false, "{\"excludeNodes\":[\"gpu-0\"]}", NULL);
	cr_assert_eq(decide("y", msg, sizeof(msg)), ADMIT_WAIT);
	cr_assert(strstr(msg, "1 excluded by the job (spec.excludeNodes)"), "%s", msg);
}

/* sbatch -C: the partition's features, as required node affinity, decide the nodes. */
Test(gang, a_constraint_places_a_job_on_nodes_with_the_features)
{
	char msg[512], nodes[256];

	add_node("gpu-0");
	upsert(KIND_NODES, json_pack(
		"{s:{s:s, s:{s:s, s:s}}, s:{s:{s:s, s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
		"metadata", "name", "gpu-1", "labels", "nvidia.com/gpu.product",
		"NVIDIA-H100-80GB-HBM3", "fabric", "ib",
		"status", "allocatable", "cpu", "64", "memory", "512Gi", "pods", "110",
		"nvidia.com/gpu", "8", "conditions", "type", "Ready", "status", "True"));
	upsert(KIND_PARTITIONS, json_pack("{s:{s:s}, s:{s:{s:{s:s}}}}", "metadata", "name", "gpu",
					  "spec", "features", "ib", "fabric", "ib"));
	add_job_with("c", "uid-c", 1, 5, false, "{\"partition\":\"gpu\",\"constraint\":\"ib\"}",
		     NULL);
	cr_assert_eq(decide_on("c", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-1");
	add_job_with("d", "uid-d", 2, 4, false, "{\"partition\":\"gpu\",\"constraint\":\"ib\"}",
		     NULL);
	cr_assert_eq(decide("d", msg, sizeof(msg)), ADMIT_WAIT);
	cr_assert(strstr(msg, "1 not matching its required node affinity"), "%s", msg);
}

/*
 * sbatch -w: the listed nodes take one rank each, first and in order, and
 * the other ranks go elsewhere; a listed node that cannot take its rank
 * keeps the gang waiting, named.
 */
Test(gang, the_nodes_a_job_lists_take_its_first_ranks_and_a_busy_one_keeps_it_waiting)
{
	char msg[512], nodes[256];

	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "gpu-%d", i);
		add_node(name);
	}
	add_job_with("w", "uid-w", 3, 5, false, "{\"nodeList\":[\"gpu-2\",\"gpu-0\"]}", NULL);
	cr_assert_eq(decide_on("w", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_eq(strncmp(nodes, "gpu-2,gpu-0,", 12), 0, "%s", nodes);
	cr_assert(strcmp(nodes + 12, "gpu-2") && strcmp(nodes + 12, "gpu-0"),
		  "the third rank on a node of its own: %s", nodes);
	add_other_pod("team", "busy", NULL, "gpu-3");
	add_job_with("v", "uid-v", 1, 4, false, "{\"nodeList\":[\"gpu-3\"]}", NULL);
	cr_assert_eq(decide("v", msg, sizeof(msg)), ADMIT_WAIT);
	cr_assert(strstr(msg, "node gpu-3 of spec.nodeList cannot take a rank now"), "%s", msg);
}

/* Somebody's pod on node asking gpus GPUs, a DaemonSet's when daemon. */
static void add_small_pod(const char *name, const char *node, const char *gpus, bool daemon)
{
	json_t *pod = json_pack("{s:{s:s, s:s, s:s}, s:{s:s, s:[{s:s, s:{s:{s:s}}}]}, s:{s:s}}",
				"metadata", "name", name, "namespace", "kube-system", "uid", name,
				"spec", "nodeName", node, "containers", "name", "c", "resources",
				"requests", "nvidia.com/gpu", gpus, "status", "phase", "Running");

	cr_assert_not_null(pod);
	if (daemon)
		json_object_set_new(json_object_get(pod, "metadata"), "ownerReferences",
				    json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "apps/v1",
					      "kind", "DaemonSet", "name", "agent", "uid", "ds"));
	upsert(KIND_OTHER_PODS, pod);
}

/*
 * sbatch --exclusive: nodes no other job has a pod on (a DaemonSet's pod is
 * the node's, not a job's), one rank each; and while an exclusive gang is
 * there, nothing else is placed on its nodes however much room is left.
 */
Test(gang, an_exclusive_job_takes_empty_nodes_whole_and_keeps_them)
{
	char msg[512], nodes[256];
	json_t *pod;

	add_node("gpu-0");
	add_node("gpu-1");
	add_small_pod("other", "gpu-0", "1", false);
	add_small_pod("agent-1", "gpu-1", "0", true);
	add_job_with("ex", "uid-ex", 1, 5, false, "{\"exclusive\":true,\"resources\":"
		     "{\"accelerators\":\"H100:1\"}}", NULL);
	cr_assert_eq(decide_on("ex", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-1");
	add_job_with("ex2", "uid-ex2", 2, 4, false, "{\"exclusive\":true,\"resources\":"
		     "{\"accelerators\":\"H100:1\"}}", NULL);
	cr_assert_eq(decide("ex2", msg, sizeof(msg)), ADMIT_WAIT);
	cr_assert(strstr(msg, "with pods of other jobs (spec.exclusive)"), "%s", msg);

	/* Running on gpu-1 with 1 of 8 GPUs: nobody else goes there. */
	add_job_with("ex", "uid-ex", 1, 5, true, "{\"exclusive\":true,\"resources\":"
		     "{\"accelerators\":\"H100:1\"}}", "{\"phase\":\"Running\"}");
	pod = json_pack("{s:{s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s}}, "
			"s:{s:s, s:[{s:s, s:{s:{s:s}}}]}, s:{s:s}}",
			"metadata", "name", "ex-0", "namespace", "ns", "uid", "ex-0", "labels",
			LABEL_JOB_NAME, "ex", LABEL_NODE_RANK, "0", LABEL_RESTART_ATTEMPT, "0",
			LABEL_EXCLUSIVE, "true", "spec", "nodeName", "gpu-1", "containers", "name",
			"main", "resources", "requests", "nvidia.com/gpu", "1", "status", "phase",
			"Running");
	upsert(KIND_PODS, pod);
	add_job_with("small", "uid-small", 1, 3, false, "{\"resources\":{\"accelerators\":"
		     "\"H100:1\"}}", NULL);
	cr_assert_eq(decide_on("small", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES,
		     "%s", msg);
	cr_assert_str_eq(nodes, "gpu-0", "gpu-1 is held whole by the exclusive job");
}

/* --- preemption by Partition tier (docs/design.md 3.5, gang_preempt.h) --- */

#include "controller/admission/gang_preempt.h"

/* Partitions scavenger (tier 0, mode), urgent (tier 10, Off), and the preempts index. */
static void preemption_site(const char *mode, int exempt_s)
{
	cr_assert_eq(store_add_index(m.stores[KIND_TRAININGJOBS], GANG_PREEMPTS_INDEX,
				     gang_preempts_index, NULL), 0);
	upsert(KIND_PARTITIONS, json_pack("{s:{s:s}, s:{s:i, s:s, s:i}}", "metadata", "name",
					  "scavenger", "spec", "priorityTier", 0, "preemptMode",
					  mode, "preemptExemptTimeSeconds", exempt_s));
	upsert(KIND_PARTITIONS, json_pack("{s:{s:s}, s:{s:i}}", "metadata", "name", "urgent",
					  "spec", "priorityTier", 10));
}

/* A gang of partition part running on node (one rank), its run started ago_s seconds ago. */
static void add_running(const char *name, const char *part, const char *node, int ago_s)
{
	time_t at = time(NULL) - ago_s;
	char spec[128], status[512], started[32];
	struct tm tm;

	gmtime_r(&at, &tm);
	strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(spec, sizeof(spec), "{\"partition\":\"%s\"}", part);
	snprintf(status, sizeof(status), "{\"phase\":\"Running\",\"startTime\":\"%s\","
		 "\"nodes\":[{\"rank\":0,\"node\":\"%s\"}]}", started, node);
	add_job_with(name, name, 1, ago_s + 60, true, spec, status);
	add_own_pod(name, 0, "Running", node, NULL, false);
}

/* A waiting job of partition part, numNodes nodes, created ago_s seconds ago. */
static void add_waiting(const char *name, const char *part, int nodes, int ago_s,
			const char *status_extra)
{
	char spec[128];

	snprintf(spec, sizeof(spec), "{\"partition\":\"%s\"}", part);
	add_job_with(name, name, nodes, ago_s, false, spec, status_extra);
}

/* gang_admit for ns/name: the verdict, reason and message, and the victims comma-separated. */
static enum admit_verdict decide_preempt(const char *name, char *reason, char *msg, char *victims)
{
	struct gangman_decision d;
	const struct tj_admission *out = &d.out;
	enum admit_verdict verdict;

	gangman_decide(&m, name, &d);
	snprintf(reason, 64, "%s", out->reason ? out->reason : "");
	snprintf(msg, 512, "%s", out->message ? out->message : "");
	victims[0] = '\0';
	for (size_t i = 0; i < out->n_preempt; i++)
		snprintf(victims + strlen(victims), 256 - strlen(victims), "%s%s@%d", i ? "," : "",
			 out->preempt[i], out->preempt_attempt[i]);
	verdict = out->verdict;
	gangman_decided(&d);
	return verdict;
}

/* Two nodes, each run by a scavenger gang: a on gpu-0, started a_ago seconds ago, b on gpu-1. */
static void two_scavengers(const char *a, int a_ago, const char *b, int b_ago)
{
	preemption_site("Requeue", 0);
	add_node("gpu-0");
	add_node("gpu-1");
	add_running(a, "scavenger", "gpu-0", a_ago);
	add_running(b, "scavenger", "gpu-1", b_ago);
}

Test(gang, a_higher_tier_preempts_the_youngest_lower_tier_gang_that_makes_it_fit)
{
	char reason[64], msg[512], victims[256];

	two_scavengers("scav-old", 600, "scav-young", 60);
	add_waiting("urg", "urgent", 1, 5, NULL);
	cr_assert_eq(decide_preempt("urg", reason, msg, victims), ADMIT_WAIT);
	cr_assert_str_eq(reason, "Preempting", "%s", msg);
	cr_assert_str_eq(victims, "ns/scav-young@0");
	cr_assert(strstr(msg, "preempting 1 running job of lower Partition tiers to make room "
			 "(tier 10): ns/scav-young (tier 0)"), "%s", msg);
	/* Two nodes wanted: both go. */
	add_waiting("urg", "urgent", 2, 5, NULL);
	decide_preempt("urg", reason, msg, victims);
	cr_assert_str_eq(victims, "ns/scav-young@0,ns/scav-old@0");
}

Test(gang, nothing_is_preempted_that_would_not_make_room_nor_for_an_equal_tier)
{
	char reason[64], msg[512], victims[256];

	two_scavengers("scav-a", 600, "scav-b", 600);
	/* Three nodes: not even with both gone. */
	add_waiting("urg", "urgent", 3, 5, NULL);
	cr_assert_eq(decide_preempt("urg", reason, msg, victims), ADMIT_WAIT);
	cr_assert_str_eq(reason, "InsufficientCapacity", "%s", msg);
	cr_assert_str_eq(victims, "");
	/* The same tier never preempts, whatever its priority. */
	add_job_with("peer", "peer", 1, 5, false, "{\"partition\":\"scavenger\",\"priority\":900}",
		     NULL);
	cr_assert_eq(decide_preempt("peer", reason, msg, victims), ADMIT_WAIT);
	cr_assert_str_eq(victims, "", "%s", msg);
}

Test(gang, a_partition_whose_mode_is_off_or_whose_exempt_time_runs_is_never_preempted)
{
	char reason[64], msg[512], victims[256];

	preemption_site("Off", 0);
	add_node("gpu-0");
	add_running("scav", "scavenger", "gpu-0", 600);
	add_waiting("urg", "urgent", 1, 5, NULL);
	decide_preempt("urg", reason, msg, victims);
	cr_assert_str_eq(victims, "", "%s", msg);
	/* Requeue, but a run of 10 minutes is exempt for an hour. */
	upsert(KIND_PARTITIONS, json_pack("{s:{s:s}, s:{s:i, s:s, s:i}}", "metadata", "name",
					  "scavenger", "spec", "priorityTier", 0, "preemptMode",
					  "Requeue", "preemptExemptTimeSeconds", 3600));
	decide_preempt("urg", reason, msg, victims);
	cr_assert_str_eq(victims, "", "%s", msg);
	upsert(KIND_PARTITIONS, json_pack("{s:{s:s}, s:{s:i, s:s, s:i}}", "metadata", "name",
					  "scavenger", "spec", "priorityTier", 0, "preemptMode",
					  "Requeue", "preemptExemptTimeSeconds", 300));
	decide_preempt("urg", reason, msg, victims);
	cr_assert_str_eq(victims, "ns/scav@0", "%s", msg);
}

/*
 * While its victims stop, a preemptor holds the nodes it needs (a job
 * behind it that would fit is told so), chooses no second set, and each
 * victim finds itself listed, with its preemptor, tiers and grace.
 */
Test(gang, a_preemptor_holds_while_its_victims_stop_and_they_find_themselves_listed)
{
	char reason[64], msg[512], victims[256], by[STORE_KEY_MAX];
	struct tj_preempted pre;
	struct field_errors errs;
	struct trainingjob victim;
	json_t *obj;
	bool yes;

	preemption_site("Cancel", 0);
	add_node("gpu-0");
	add_node("gpu-1");
	add_node("gpu-2");
	add_running("scav-a", "scavenger", "gpu-0", 600);
	add_running("scav-b", "scavenger", "gpu-1", 60);
	add_waiting("urg", "urgent", 2, 5, "{\"preempting\":[{\"job\":\"ns/scav-b\","
		    "\"attempt\":0}],\"conditions\":[{\"type\":\"Admitted\",\"status\":\"False\","
		    "\"reason\":\"Preempting\",\"message\":\"m\","
		    "\"lastTransitionTime\":\"2026-12-01T00:00:00Z\"}]}");
	add_waiting("small", "scavenger", 1, 4, NULL);
	cr_assert_eq(decide_preempt("urg", reason, msg, victims), ADMIT_WAIT);
	cr_assert_str_eq(victims, "", "no second preemption while the first stops: %s", msg);
	cr_assert(strstr(msg, "it is waiting for 1 job it preempted to stop"), "%s", msg);
	cr_assert_eq(decide_preempt("small", reason, msg, victims), ADMIT_WAIT);
	cr_assert_str_eq(reason, "QueuedBehind", "%s", msg);
	cr_assert(strstr(msg, "held for ns/urg, which is waiting for 1 job it preempted"), "%s",
		  msg);
	/* The victim's side. */
	cr_assert_eq(store_get(m.stores[KIND_TRAININGJOBS], "ns/scav-b", &obj), 0);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(obj, &victim, &errs), 0);
	cr_assert_eq(gang_preempted(&m, &victim, &pre, by, &yes), 0);
	cr_assert(yes);
	cr_assert_str_eq(pre.preemptor, "ns/urg");
	cr_assert_eq(pre.tier, 10);
	cr_assert_eq(pre.own_tier, 0);
	cr_assert(pre.cancel);
	cr_assert_eq(pre.grace_s, 30);
	/* At another attempt it is not the job listed. */
	victim.status.requeues = 1;
	cr_assert_eq(gang_preempted(&m, &victim, &pre, by, &yes), 0);
	cr_assert_not(yes);
	tj_release(&victim);
	field_errors_release(&errs);
	json_decref(obj);
	/* Its pods gone and its status past the attempt: the preemptor fits on what it held. */
	add_job_with("scav-b", "scav-b", 1, 120, false, "{\"partition\":\"scavenger\"}",
		     "{\"phase\":\"Failed\"}");
	obj = json_pack("{s:{s:s, s:s}}", "metadata", "name", "scav-b-0", "namespace", "ns");
	store_remove(m.stores[KIND_PODS], obj);
	json_decref(obj);
	cr_assert_eq(decide_preempt("urg", reason, msg, victims), ADMIT_YES, "%s", msg);
}

/*
 * A preempted job queued again keeps its place by age, but its wait for the
 * starvation guard starts at the preemption: it had not waited the hours it
 * ran, so it fences no node against the jobs behind it.
 */
Test(gang, a_requeued_victim_keeps_its_place_but_has_not_starved)
{
	time_t at = time(NULL) - 30;
	char status[256], when[32];
	struct tm tm;

	gmtime_r(&at, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(status, sizeof(status), "{\"preemptions\":1,\"preemption\":{\"preemptor\":"
		 "\"ns/urgent\",\"attempt\":0,\"time\":\"%s\",\"graceSeconds\":30,"
		 "\"mode\":\"Requeue\",\"tier\":10}}", when);
	add_node("gpu-0");
	add_node("gpu-1");
	add_other_pod("other", "busy", NULL, "gpu-1");
	add_job_with("victim", "victim", 2, 3600, false, NULL, status);
	add_job_with("small", "small", 1, 60, false, NULL, NULL);
	assert_waits("victim");
	assert_admits("small");
}

/*
 * spec.restartStrategy InPlace (docs/failures.md): rank 1's node was lost
 * and its entry forgotten; rank 0 runs attempt 1 on gpu-0. The rank is
 * placed again alone: not on the node left behind, not where b runs, and
 * until the cache shows its node, every other decision counts it there.
 */
static void add_attempt_pod(const char *job, int rank, int attempt, const char *node)
{
	char name[64], rank_s[8], attempt_s[8];

	snprintf(name, sizeof(name), "%s-%d", job, rank);
	snprintf(rank_s, sizeof(rank_s), "%d", rank);
	snprintf(attempt_s, sizeof(attempt_s), "%d", attempt);
	upsert(KIND_PODS, json_pack("{s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}}, "
				    "s:{s:s, s:[{s:s, s:{s:{s:s}}}]}, s:{s:s}}",
				    "metadata", "name", name, "namespace", "ns", "uid", name,
				    "labels", LABEL_JOB_NAME, job, LABEL_NODE_RANK, rank_s,
				    LABEL_RESTART_ATTEMPT, attempt_s,
				    "spec", "nodeName", node, "containers", "name", "main",
				    "resources", "requests", "nvidia.com/gpu", "8",
				    "status", "phase", "Running"));
}

#define IN_PLACE_STATUS "\"phase\":\"Restarting\",\"infraRestarts\":1," \
	"\"inPlaceRestart\":{\"attempt\":1,\"time\":\"2026-12-01T00:00:00Z\"}," \
	"\"excludedNodes\":[{\"node\":\"gpu-1\",\"reason\":\"NodeLost\"," \
	"\"time\":\"2026-12-01T00:00:00Z\"}]"

Test(gang, a_rank_whose_node_was_lost_is_placed_again_alone_and_held_there)
{
	char msg[512], nodes[256], status[512];

	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "gpu-%d", i);
		add_node(name);
	}
	/* gpu-1 is lost: NotReady. */
	upsert(KIND_NODES, json_pack("{s:{s:s}, s:{s:{s:s}, s:[{s:s, s:s}]}}", "metadata", "name",
				     "gpu-1", "status", "allocatable", "nvidia.com/gpu", "8",
				     "conditions", "type", "Ready", "status", "False"));
	add_job_with("b", "uid-b", 1, 20, true, NULL,
		     "{\"nodes\":[{\"rank\":0,\"pod\":\"b-0\",\"node\":\"gpu-2\"}]}");
	add_own_pod("b", 0, "Running", "gpu-2", NULL, false);
	add_job_with("a", "uid-a", 2, 30, true, "{\"restartStrategy\":\"InPlace\"}",
		     "{" IN_PLACE_STATUS ",\"nodes\":[{\"rank\":0,\"pod\":\"a-0\",\"node\":"
		     "\"gpu-0\"}]}");
	add_attempt_pod("a", 0, 1, "gpu-0");
	/* A waiting job of higher priority, older: the running gang's rank comes first. */
	add_job("w", "uid-w", 1, 100, 60, false);
	cr_assert_eq(decide_on("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-0,gpu-3", "rank 0 keeps gpu-0; gpu-1 is lost, gpu-2 is b's");
	cr_assert_str_eq(msg, "placed again beside the ranks that keep their nodes: rank 1 on "
			 "gpu-3");
	/* Asked again (its status write failed): the same node. */
	cr_assert_eq(decide_on("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES);
	cr_assert_str_eq(nodes, "gpu-0,gpu-3");
	/* Before the cache shows it, and after, gpu-3 is a's. */
	add_job("c", "uid-c", 1, 0, 5, false);
	assert_waits("c");
	cr_assert(jobmemo_admitted(m.memo, "ns/a", "uid-a", 1, manager_now_ms(), NULL),
		  "the record lasts while the cache lacks rank 1's node");
	snprintf(status, sizeof(status), "{" IN_PLACE_STATUS ",\"nodes\":[{\"rank\":0,\"pod\":"
		 "\"a-0\",\"node\":\"gpu-0\"},{\"rank\":1,\"pod\":\"a-1\",\"node\":\"gpu-3\"}]}");
	add_job_with("a", "uid-a", 2, 30, true, "{\"restartStrategy\":\"InPlace\"}", status);
	assert_waits("c");
	cr_assert_not(jobmemo_admitted(m.memo, "ns/a", "uid-a", 1, manager_now_ms(), NULL),
		      "the cache shows it: the record has done its work");
	/* No free node beside it: the rank waits, and says why. */
	add_job_with("a", "uid-a", 2, 30, true, "{\"restartStrategy\":\"InPlace\"}",
		     "{" IN_PLACE_STATUS ",\"nodes\":[{\"rank\":0,\"pod\":\"a-0\",\"node\":"
		     "\"gpu-0\"}]}");
	add_own_pod("c", 0, "Running", "gpu-3", NULL, false);
	jobmemo_forget(m.memo, "ns/a");
	cr_assert_eq(decide_on("a", msg, sizeof(msg), NULL, 0), ADMIT_WAIT);
	cr_assert(strstr(msg, "rank 1: needs 1 node with 8 nvidia.com/gpu"), "%s", msg);
}

/* A job as cached at resourceVersion rv (the pass remembers jobs by version). */
static void add_job_at(const char *name, int nodes, int priority, int ago_s, const char *rv)
{
	time_t at = time(NULL) - ago_s;
	char created[32], uid[32];
	struct tm tm;
	json_t *job;

	gmtime_r(&at, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(uid, sizeof(uid), "uid-%s", name);
	job = job_json(name, uid, nodes, priority, created, false);
	json_object_set_new(json_object_get(job, "metadata"), "resourceVersion", json_string(rv));
	upsert(KIND_TRAININGJOBS, job);
}

/*
 * docs/gang-admission.md, "One pass answers the queue": a decision keeps
 * what it decided for every other job of the queue, and a job asked while
 * nothing moved (no kick) and unchanged itself gets that verdict without a
 * walk of its own; a kick, or a new version of the job, decides afresh.
 */
Test(gang, one_pass_answers_the_queue_until_a_kick)
{
	char msg[512], nodes[256];

	add_node("gpu-0");
	add_node("gpu-1");
	add_job_at("big", 3, 0, 50, "1");     /* never fits: it heads the queue */
	add_job_at("a", 1, 0, 40, "2");
	add_job_at("b", 1, 0, 30, "3");
	add_job_at("c", 1, 0, 20, "4");
	/* Asked about c, the pass admits a and b ahead of it and leaves c waiting. */
	cr_assert_eq(decide_on("c", msg, sizeof(msg), NULL, 0), ADMIT_WAIT, "%s", msg);
	/* A node is cordoned without a kick: a and b still get what the pass decided. */
	upsert(KIND_NODES, json_pack("{s:{s:s, s:{s:s}}, s:{s:b}, s:{s:{s:s, s:s, s:s, s:s}, "
				     "s:[{s:s, s:s}]}}", "metadata", "name", "gpu-1", "labels",
				     "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3", "spec",
				     "unschedulable", 1, "status", "allocatable", "cpu", "64",
				     "memory", "512Gi", "pods", "110", "nvidia.com/gpu", "8",
				     "conditions", "type", "Ready", "status", "True"));
	cr_assert_eq(decide_on("b", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-1", "the pass's placement, from before the cordon");
	/* The kick that the cordon brings: a is decided afresh, and fits on gpu-0 only. */
	atomic_fetch_add(&m.admission_epoch, 1);
	cr_assert_eq(decide_on("a", msg, sizeof(msg), nodes, sizeof(nodes)), ADMIT_YES, "%s", msg);
	cr_assert_str_eq(nodes, "gpu-0");
	/* That pass holds b (recorded at gpu-1) and the head; c waits, and a new version of c
	 * is decided afresh (still waiting: nothing is free). */
	add_job_at("c", 1, 0, 20, "5");
	cr_assert_eq(decide_on("c", msg, sizeof(msg), NULL, 0), ADMIT_WAIT, "%s", msg);
	/* With no Partition to preempt from, even the head's wait is kept. */
	cr_assert_not_null(gang_pass_find(m.pass, atomic_load(&m.admission_epoch),
					  manager_now_ms(), "ns/big", "uid-big", "1", 0));
}

/* The job ns/name as cached, at resourceVersion rv. */
static void set_rv(const char *name, const char *rv)
{
	char key[64];
	json_t *obj = NULL, *copy;

	snprintf(key, sizeof(key), "ns/%s", name);
	cr_assert_eq(store_get(m.stores[KIND_TRAININGJOBS], key, &obj), 0);
	copy = json_deep_copy(obj);
	json_decref(obj);
	json_object_set_new(json_object_get(copy, "metadata"), "resourceVersion", json_string(rv));
	upsert(KIND_TRAININGJOBS, copy);
}

/* The head of the queue, which may preempt, is decided afresh when asked, never from a pass. */
Test(gang, a_pass_does_not_answer_the_head_that_may_preempt)
{
	char reason[64], msg[512], victims[256];

	two_scavengers("scav-old", 600, "scav-young", 60);
	add_waiting("urg", "urgent", 1, 10, NULL);
	add_waiting("urg2", "urgent", 1, 5, NULL);
	set_rv("urg", "7");
	set_rv("urg2", "8");
	/* urg2 is asked first; urg, ahead of it, waits in that pass. */
	cr_assert_eq(decide_preempt("urg2", reason, msg, victims), ADMIT_WAIT);
	cr_assert_str_eq(victims, "");
	cr_assert_eq(decide_preempt("urg", reason, msg, victims), ADMIT_WAIT);
	cr_assert_str_eq(reason, "Preempting", "%s", msg);
	cr_assert_str_eq(victims, "ns/scav-young@0");
}

/* gang_pass.h alone: a verdict is found only for the job, version and attempt the pass read. */
Test(gang, a_pass_finds_only_what_it_read_in_its_epoch_and_time)
{
	static const char *const nodes[] = { "gpu-0", "gpu-1" };
	const struct gang_pass_entry in[] = {
		{ .key = "ns/w", .uid = "u-w", .resource_version = "5", .attempt = 1,
		  .reason = "QueuedBehind", .message = "behind" },
		{ .key = "ns/a", .uid = "u-a", .resource_version = "6", .admit = true,
		  .message = "fits", .nodes = nodes, .n_nodes = 2 },
		{ .key = "ns/norv", .uid = "u-n", .resource_version = NULL, .message = "x" },
	};
	struct gang_pass *p = NULL;
	const struct gang_pass_entry *e;

	cr_assert_eq(gang_pass_set(&p, 7, 1000, in, 3), 0);
	e = gang_pass_find(p, 7, 1500, "ns/w", "u-w", "5", 1);
	cr_assert_not_null(e);
	cr_assert_str_eq(e->message, "behind");
	e = gang_pass_find(p, 7, 1500, "ns/a", "u-a", "6", 0);
	cr_assert(e && e->admit && e->n_nodes == 2 && !strcmp(e->nodes[1], "gpu-1"));
	cr_assert_null(gang_pass_find(p, 8, 1500, "ns/w", "u-w", "5", 1), "a kick since");
	cr_assert_null(gang_pass_find(p, 7, 1000 + GANG_PASS_TTL_MS, "ns/w", "u-w", "5", 1),
		       "too old");
	cr_assert_null(gang_pass_find(p, 7, 1500, "ns/w", "u-w", "6", 1), "another version");
	cr_assert_null(gang_pass_find(p, 7, 1500, "ns/w", "u-x", "5", 1), "another job");
	cr_assert_null(gang_pass_find(p, 7, 1500, "ns/w", "u-w", "5", 2), "another attempt");
	cr_assert_null(gang_pass_find(p, 7, 1500, "ns/norv", "u-n", NULL, 0), "no version read");
	cr_assert_null(gang_pass_find(p, 7, 1500, "ns/x", "u-w", "5", 1));
	cr_assert_eq(gang_pass_set(&p, 9, 2000, NULL, 0), 0);
	cr_assert_null(gang_pass_find(p, 9, 2000, "ns/w", "u-w", "5", 1), "replaced");
	gang_pass_free(p);
}
