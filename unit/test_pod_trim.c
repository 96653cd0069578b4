/* What the pod caches keep of a pod (controller/manager/pod_trim.h). */
#include <criterion/criterion.h>

#include "base/err.h"
#include "api/pod_trim.h"
#include "kube/store.h"

#include <jansson.h>
#include <limits.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static json_t *parse(const char *text)
{
	json_error_t error;
	json_t *v = json_loads(text, 0, &error);

	cr_assert_not_null(v, "bad test JSON: %s", error.text);
	return v;
}

Test(pod_trim, quantities_parse_to_milli_units_rounding_up)
{
	static const struct { const char *text; long long milli; } cases[] = {
		{ "1", 1000 }, { "500m", 500 }, { "1.5", 1500 }, { "0.1", 100 },
		{ "64Gi", 64LL * 1024 * 1024 * 1024 * 1000 }, { "1Ki", 1024000 }, { "2k", 2000000 },
		{ "1M", 1000000000LL }, { "1e3", 1000000 }, { "1E-3", 1 },
		{ "250u", 1 }, { "1n", 1 }, { "0", 0 }, { "0.0001", 1 },
		{ "+2", 2000 }, { "-3m", -3 }, { ".5", 500 }, { "1P", 1000000000000000000LL },
	};
	long long milli;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(pod_trim_quantity_milli(cases[i].text, &milli), 0, "%s", cases[i].text);
		cr_assert_eq(milli, cases[i].milli, "%s: %lld", cases[i].text, milli);
	}
	/* An exabyte in milli-units is past int64: saturate, never wrap. */
	cr_assert_eq(pod_trim_quantity_milli("1E", &milli), 0);
	cr_assert_eq(milli, LLONG_MAX);
	cr_assert_eq(pod_trim_quantity_milli("8Ei", &milli), 0);
	cr_assert_eq(milli, LLONG_MAX);
	cr_assert_eq(pod_trim_quantity_milli("", &milli), CADRE_EPARSE);
	cr_assert_eq(pod_trim_quantity_milli("Gi", &milli), CADRE_EPARSE);
	cr_assert_eq(pod_trim_quantity_milli("1.2.3", &milli), CADRE_EPARSE);
	cr_assert_eq(pod_trim_quantity_milli("5GB", &milli), CADRE_EPARSE);
	cr_assert_eq(pod_trim_quantity_milli("1e", &milli), CADRE_EPARSE);
}

/* A pod as the API server sends it for some other team's workload. */
static const char foreign_pod_json[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-7d9c6b5f4-x2x7k\","
	"\"generateName\":\"web-7d9c6b5f4-\",\"namespace\":\"shop\",\"uid\":\"3f1f8a4e-2b0c-4a51-9c39-1d1c0e6e8b11\","
	"\"resourceVersion\":\"918273\",\"creationTimestamp\":\"2026-01-02T03:04:05Z\","
	"\"labels\":{\"app\":\"web\",\"pod-template-hash\":\"7d9c6b5f4\",\"tier\":\"frontend\"},"
	"\"annotations\":{\"kubectl.kubernetes.io/restartedAt\":\"2026-01-02T03:00:00Z\","
	"\"prometheus.io/scrape\":\"true\",\"prometheus.io/port\":\"9090\"},"
	"\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-7d9c6b5f4\","
	"\"uid\":\"8c2d5a3e-1111-2222-3333-444455556666\",\"controller\":true,\"blockOwnerDeletion\":true}],"
	"\"managedFields\":[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
	"\"time\":\"2026-01-02T03:04:05Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":"
	"{\"f:generateName\":{},\"f:labels\":{\".\":{},\"f:app\":{},\"f:pod-template-hash\":{},\"f:tier\":{}},"
	"\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\"8c2d5a3e-1111-2222-3333-444455556666\\\"}\":{}}},"
	"\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"web\\\"}\":{\".\":{},\"f:image\":{},\"f:name\":{},"
	"\"f:ports\":{},\"f:resources\":{\"f:requests\":{\"f:cpu\":{},\"f:memory\":{}}}}}}}},"
	"{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-01-02T03:04:09Z\","
	"\"fieldsType\":\"FieldsV1\",\"subresource\":\"status\",\"fieldsV1\":{\"f:status\":{\"f:conditions\":{},"
	"\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:phase\":{},\"f:podIP\":{},\"f:startTime\":{}}}}]},"
	"\"spec\":{\"volumes\":[{\"name\":\"kube-api-access-abcde\",\"projected\":{\"sources\":[{\"serviceAccountToken\":"
	"{\"expirationSeconds\":3607,\"path\":\"token\"}},{\"configMap\":{\"name\":\"kube-root-ca.crt\",\"items\":"
	"[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}}],\"defaultMode\":420}}],"
	"\"initContainers\":[{\"name\":\"migrate\",\"image\":\"shop/migrate:1.2\",\"resources\":{\"requests\":"
	"{\"cpu\":\"2\",\"memory\":\"1Gi\"}}},{\"name\":\"proxy\",\"image\":\"envoy:1.30\",\"restartPolicy\":\"Always\","
	"\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}],"
	"\"containers\":[{\"name\":\"web\",\"image\":\"shop/web:4.5.6\",\"ports\":[{\"containerPort\":8080,"
	"\"protocol\":\"TCP\"}],\"env\":[{\"name\":\"MODE\",\"value\":\"production\"},{\"name\":\"LOG_LEVEL\","
	"\"value\":\"info\"}],\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"512Mi\",\"nvidia.com/gpu\":\"1\"},"
	"\"limits\":{\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"1\"}},\"volumeMounts\":[{\"name\":\"kube-api-access-abcde\","
	"\"readOnly\":true,\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],"
	"\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\","
	"\"imagePullPolicy\":\"IfNotPresent\"},{\"name\":\"metrics\",\"image\":\"exporter:0.9\",\"resources\":"
	"{\"requests\":{\"cpu\":\"250m\",\"memory\":\"128Mi\"}}}],"
	"\"overhead\":{\"cpu\":\"50m\"},\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,"
	"\"dnsPolicy\":\"ClusterFirst\",\"serviceAccountName\":\"default\",\"serviceAccount\":\"default\","
	"\"nodeName\":\"cpu-node-3\",\"securityContext\":{},\"schedulerName\":\"default-scheduler\","
	"\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\","
	"\"tolerationSeconds\":300},{\"key\":\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\","
	"\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],\"priority\":0,\"enableServiceLinks\":true,"
	"\"preemptionPolicy\":\"PreemptLowerPriority\",\"schedulingGates\":[{\"name\":\"example.com/wait\"}]},"
	"\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\","
	"\"lastTransitionTime\":\"2026-01-02T03:04:06Z\"},{\"type\":\"Ready\",\"status\":\"True\","
	"\"lastTransitionTime\":\"2026-01-02T03:04:09Z\"},{\"type\":\"ContainersReady\",\"status\":\"True\","
	"\"lastTransitionTime\":\"2026-01-02T03:04:09Z\"},{\"type\":\"PodScheduled\",\"status\":\"True\","
	"\"lastTransitionTime\":\"2026-01-02T03:04:05Z\"}],\"hostIP\":\"10.0.0.3\",\"podIP\":\"10.4.3.17\","
	"\"podIPs\":[{\"ip\":\"10.4.3.17\"}],\"startTime\":\"2026-01-02T03:04:05Z\",\"containerStatuses\":"
	"[{\"name\":\"web\",\"state\":{\"running\":{\"startedAt\":\"2026-01-02T03:04:08Z\"}},\"lastState\":{},"
	"\"ready\":true,\"restartCount\":0,\"image\":\"shop/web:4.5.6\",\"imageID\":\"docker-pullable://shop/web@sha256:"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\",\"containerID\":\"containerd://"
	"fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210\",\"started\":true}],"
	"\"qosClass\":\"Burstable\"}}";

Test(pod_trim, a_foreign_pod_is_kept_as_a_summary_of_what_it_uses)
{
	json_t *p = parse(foreign_pod_json);
	json_t *t = pod_trim(p, NULL);
	json_t *want = parse(
		"{\"namespace\":\"shop\",\"name\":\"web-7d9c6b5f4-x2x7k\",\"nodeName\":\"cpu-node-3\","
		"\"phase\":\"Running\",\"schedulingGates\":true,"
		/*
		 * cpu: containers 500m+250m, sidecar 100m -> 850m; init "migrate"
		 * needs 2 (plus no sidecar before it) -> max 2000m; + overhead 50m.
		 * memory: 512Mi+128Mi+64Mi = 704Mi vs 1Gi -> 1Gi.
		 */
		"\"requests\":{\"cpu\":\"2050m\",\"memory\":\"1073741824\",\"nvidia.com/gpu\":\"1\"}}");
	char *dump = json_dumps(t, JSON_SORT_KEYS);

	cr_assert(json_equal(t, want), "got %s", dump);
	free(dump);
	json_decref(p);
	json_decref(t);
	json_decref(want);
}

Test(pod_trim, a_sidecar_counts_toward_later_init_containers)
{
	json_t *p = parse(
		"{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\"},\"spec\":{"
		"\"initContainers\":[{\"name\":\"side\",\"restartPolicy\":\"Always\","
		"\"resources\":{\"requests\":{\"cpu\":\"1\"}}},{\"name\":\"init\","
		"\"resources\":{\"requests\":{\"cpu\":\"3\"}}}],"
		"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]},"
		"\"status\":{\"phase\":\"Pending\"}}");
	json_t *t = pod_trim(p, NULL);

	/* sum = 2 + 1 (sidecar) = 3; init need = 3 + 1 = 4 -> 4. */
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(t, "requests"), "cpu")),
			 "4");
	cr_assert_null(json_object_get(t, "nodeName"));
	cr_assert_null(json_object_get(t, "schedulingGates"));
	json_decref(p);
	json_decref(t);
}

/* The value at a dotted path of obj ("status.phase"); array items by index ("spec.containers.0"). */
static json_t *at(json_t *obj, const char *path)
{
	char part[64];

	while (obj && *path) {
		size_t n = strcspn(path, ".");

		snprintf(part, sizeof(part), "%.*s", (int)n, path);
		obj = json_is_array(obj) ? json_array_get(obj, strtoul(part, NULL, 10))
					 : json_object_get(obj, part);
		path += n + (path[n] == '.');
	}
	return obj;
}

Test(pod_trim, cadres_own_pods_keep_what_the_reconcilers_read_and_nothing_else)
{
	json_t *p = parse(foreign_pod_json), *t, *cs;

	json_object_set_new(json_object_get(json_object_get(p, "metadata"), "labels"),
			    LABEL_JOB_NAME, json_string("llama"));
	json_object_set_new(json_object_get(p, "metadata"), "deletionTimestamp",
			    json_string("2026-01-02T03:05:00Z"));
	cs = json_array_get(json_object_get(json_object_get(p, "status"), "containerStatuses"), 0);
	cr_assert_not_null(cs);
	json_object_set_new(cs, "state", json_pack("{s:{s:i, s:s}, s:{s:s}}", "terminated",
						   "exitCode", 3, "reason", "Error", "running",
						   "startedAt", "2026-01-02T03:04:08Z"));
	json_object_set_new(cs, "lastState", json_pack("{s:{s:i, s:s}, s:{}}", "terminated",
						       "exitCode", 7, "message", "cadre-attempt: 0",
						       "waiting"));
	t = pod_trim(p, NULL);
	cr_assert_not_null(t);

	/* Identity, the job's labels, and deletion. */
	for (const char *const *k = (const char *const[]){ "metadata.name", "metadata.namespace",
			"metadata.uid", "metadata.resourceVersion", "metadata.labels",
			"metadata.deletionTimestamp", "spec.nodeName", "spec.schedulingGates",
			"status.phase", NULL }; *k; k++)
		cr_assert(json_equal(at(t, *k), at(p, *k)), "%s was not kept as it was", *k);
	/* Each container's name and requests, for the capacity it holds. */
	cr_assert_eq(json_array_size(at(t, "spec.containers")), 2);
	cr_assert_str_eq(json_string_value(at(t, "spec.containers.0.name")), "web");
	cr_assert(json_equal(at(t, "spec.containers.0.resources.requests"),
			     at(p, "spec.containers.0.resources.requests")));
	cr_assert_null(at(t, "spec.containers.0.resources.limits"));
	cr_assert_null(at(t, "spec.containers.0.image"));
	/* Conditions that decide trouble and readiness, without their times. */
	cr_assert_str_eq(json_string_value(at(t, "status.conditions.0.type")), "Ready");
	cr_assert_str_eq(json_string_value(at(t, "status.conditions.0.status")), "True");
	cr_assert_null(at(t, "status.conditions.0.lastTransitionTime"));
	/* A container's end, not its run. */
	cr_assert_eq(json_integer_value(at(t, "status.containerStatuses.0.state.terminated.exitCode")),
		     3);
	cr_assert_null(at(t, "status.containerStatuses.0.state.running"));
	/* The end of the run before an in-place restart, with its attempt tag. */
	cr_assert(json_equal(at(t, "status.containerStatuses.0.lastState.terminated"),
			     at(p, "status.containerStatuses.0.lastState.terminated")));
	cr_assert_null(at(t, "status.containerStatuses.0.lastState.waiting"));
	cr_assert_null(at(t, "status.containerStatuses.0.imageID"));
	/* The rest is gone. */
	cr_assert_null(at(t, "metadata.managedFields"));
	cr_assert_null(at(t, "metadata.annotations"));
	cr_assert_null(at(t, "metadata.ownerReferences"));
	cr_assert_null(at(t, "spec.volumes"));
	cr_assert_null(at(t, "spec.tolerations"));
	cr_assert_null(at(t, "status.hostIP"));
	/* The input is untouched. */
	cr_assert_not_null(at(p, "metadata.managedFields"));
	cr_assert_not_null(at(p, "status.containerStatuses.0.state.running"));
	json_decref(p);
	json_decref(t);
}

/* Count the bytes jansson holds, as malloc sizes them (chunk header included). */
static _Atomic long long heap_bytes;

static void *counting_malloc(size_t n)
{
	void *p = malloc(n);

	if (p)
		atomic_fetch_add(&heap_bytes, (long long)(malloc_usable_size(p) + sizeof(size_t)));
	return p;
}

static void counting_free(void *p)
{
	if (p)
		atomic_fetch_sub(&heap_bytes, (long long)(malloc_usable_size(p) + sizeof(size_t)));
	free(p);
}

#define MEM_PODS 2000

Test(pod_trim, a_cached_foreign_pod_costs_under_2_KiB)
{
	struct store_options opts = { .kind = "pods", .trim = pod_trim };
	struct store *s;
	long long before, after, whole_before, whole;
	char name[64], node[32];
	json_t *p, *full;
	int i;

	json_set_alloc_funcs(counting_malloc, counting_free);
	s = store_new(&opts);
	cr_assert_eq(store_add_index(s, "node", pod_index_node, NULL), 0);
	cr_assert_eq(store_add_index(s, "job", pod_index_job, NULL), 0);

	whole_before = atomic_load(&heap_bytes);
	full = parse(foreign_pod_json);
	whole = atomic_load(&heap_bytes) - whole_before;

	before = atomic_load(&heap_bytes);
	for (i = 0; i < MEM_PODS; i++) {
		p = json_deep_copy(full);
		snprintf(name, sizeof(name), "web-7d9c6b5f4-%05d", i);
		snprintf(node, sizeof(node), "cpu-node-%d", i % 100);
		json_object_set_new(json_object_get(p, "metadata"), "name", json_string(name));
		json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(node));
		cr_assert_eq(store_upsert(s, p), 0);
		json_decref(p);
	}
	after = atomic_load(&heap_bytes);
	cr_log_info("foreign pod: %lld bytes parsed whole, %lld bytes cached (store + indexes)",
		    whole, (after - before) / MEM_PODS);
	cr_assert_lt((after - before) / MEM_PODS, 2048, "%lld bytes per pod",
		     (after - before) / MEM_PODS);
	json_decref(full);
	store_free(s);
}
