/*
 * dash_cluster.c - the cluster page's data: GPU nodes (a device plugin's or
 * Dynamic Resource Allocation's) and who holds their accelerators, the hour
 * of GPU use, and whether the API server answers.
 */
#include "cli/dashboard/dash.h"

#include "base/err.h"
#include "api/dra_nodes.h"
#include "api/labels.h"
#include "api/quantity.h"
#include "kube/store.h"

#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *o, const char *a)
{
	return json_string_value(json_object_get(o, a));
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* "nvidia.com/gpu" and the like: an extended resource that counts GPUs. */
static bool is_gpu_resource(const char *name)
{
	size_t n = strlen(name);

	return strchr(name, '/') && n > 4 && !strcmp(name + n - 4, "/gpu");
}

static long long quantity(const json_t *q)
{
	int64_t milli = 0;

	if (json_is_string(q) && !quantity_parse(json_string_value(q), &milli))
		return (long long)(milli / 1000);
	if (json_is_integer(q))
		return (long long)json_integer_value(q);
	return 0;
}

static bool node_ready(const json_t *node)
{
	const json_t *conds = json_object_get(json_object_get(node, "status"), "conditions"), *c;
	size_t i;

	json_array_foreach(conds, i, c)
		if (!strcmp(or_empty(str(c, "type")), "Ready"))
			return !strcmp(or_empty(str(c, "status")), "True");
	return false;
}

/* What pod asks of resource: the sum over its containers' requests. */
static long long pod_request(const json_t *pod, const char *resource)
{
	const json_t *cs = json_object_get(json_object_get(pod, "spec"), "containers"), *c;
	long long sum = 0;
	size_t i;

	json_array_foreach(cs, i, c)
		sum += quantity(json_object_get(json_object_get(json_object_get(c, "resources"),
								"requests"), resource));
	return sum;
}

static bool pod_holds(const json_t *pod, const char *node)
{
	const char *phase = or_empty(str(json_object_get(pod, "status"), "phase"));

	return !strcmp(or_empty(str(json_object_get(pod, "spec"), "nodeName")), node) &&
	       strcmp(phase, "Succeeded") && strcmp(phase, "Failed");
}

/* Add count to the job's entry of jobs (an object key -> count). */
static void add_holder(json_t *jobs, const json_t *pod, long long count)
{
	const json_t *m = json_object_get(pod, "metadata");
	const char *job = str(json_object_get(m, "labels"), LABEL_JOB_NAME);
	char key[320];

	if (!job)
		return;
	snprintf(key, sizeof(key), "%s/%s", or_empty(str(m, "namespace")), job);
	json_object_set_new(jobs, key, json_integer(json_integer_value(json_object_get(jobs, key)) +
						    count));
}

/* A GPU node's row; held is the holders' counts by job (borrowed). */
static json_t *node_row(const json_t *node, const char *product, const char *resource,
			long long allocatable, long long used, const json_t *held)
{
	const char *name = or_empty(str(json_object_get(node, "metadata"), "name")), *k;
	json_t *jobs = json_array(), *row, *v;

	if (!jobs)
		return NULL;
	json_object_foreach((json_t *)held, k, v)
		json_array_append_new(jobs, json_pack("{s:s, s:O}", "key", k, "count", v));
	row = json_pack("{s:s, s:b, s:s, s:s, s:I, s:I, s:I, s:O}", "name", name,
			"ready", node_ready(node), "product", or_empty(product),
			"resource", resource, "allocatable", (json_int_t)allocatable,
			"used", (json_int_t)used,
			"free", (json_int_t)(allocatable > used ? allocatable - used : 0),
			"jobs", jobs);
	json_decref(jobs);
	return row;
}

static json_t *gpu_node(const json_t *node, const char *resource, long long allocatable,
			const json_t *pods)
{
	const char *name = or_empty(str(json_object_get(node, "metadata"), "name"));
	const json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
	json_t *held = json_object(), *row = NULL, *pod;
	long long used = 0;
	size_t i;

	if (!held)
		return NULL;
	json_array_foreach(pods, i, pod) {
		long long n;

		if (!pod_holds(pod, name) || !(n = pod_request(pod, resource)))
			continue;
		used += n;
		add_holder(held, pod, n);
	}
	row = node_row(node, str(labels, "nvidia.com/gpu.product"), resource, allocatable, used,
		       held);
	json_decref(held);
	return row;
}

/* The pod of by_key ("namespace/name" -> pod) that claim is reserved for first; NULL. */
static const json_t *claim_pod(const json_t *claim, const json_t *by_key)
{
	const char *ns = or_empty(str(json_object_get(claim, "metadata"), "namespace"));
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(claim, "status"), "reservedFor"), i, r) {
		const json_t *pod;
		char key[320];

		if (strcmp(or_empty(str(r, "resource")), "pods") || *or_empty(str(r, "apiGroup")))
			continue;
		snprintf(key, sizeof(key), "%s/%s", ns, or_empty(str(r, "name")));
		if ((pod = json_object_get(by_key, key)))
			return pod;
	}
	return NULL;
}

/* A node of DRA GPUs (g, of the GPU classes): a device is used while its claim's pod holds. */
static json_t *dra_gpu_node(const json_t *node, const struct dra_nodes *dra,
			    const struct dra_node_gpus *g, const json_t *by_key)
{
	const char *name = or_empty(str(json_object_get(node, "metadata"), "name"));
	const struct dra_device *first;
	size_t n = dra_nodes_of(dra, name, &first);
	json_t *held = json_object(), *row;
	long long used = 0;

	if (!held)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const json_t *pod;

		if (!first[i].claim || !dra_nodes_class_of(dra, &first[i], NULL) ||
		    !(pod = claim_pod(first[i].claim, by_key)) || !pod_holds(pod, name))
			continue;
		used++;
		add_holder(held, pod, 1);
	}
	row = node_row(node, g->product, g->class_name, g->devices, used, held);
	json_decref(held);
	return row;
}

/* pods by "namespace/name", for the claims' reservedFor. A new object; NULL when out of memory. */
static json_t *pods_by_key(const json_t *pods)
{
	json_t *out = json_object(), *pod;
	size_t i;

	json_array_foreach(pods, i, pod) {
		const json_t *m = json_object_get(pod, "metadata");
		char key[320];

		if (!out)
			break;
		snprintf(key, sizeof(key), "%s/%s", or_empty(str(m, "namespace")),
			 or_empty(str(m, "name")));
		if (json_object_set(out, key, pod)) {
			json_decref(out);
			out = NULL;
		}
	}
	return out;
}

static int row_cmp(const void *a, const void *b)
{
	return strcmp(str(*(const json_t *const *)a, "name"), str(*(const json_t *const *)b, "name"));
}

json_t *dash_gpu_nodes(const json_t *nodes, const json_t *pods, const struct dra_nodes *dra)
{
	size_t n = json_array_size(nodes), k = 0, i;
	json_t **rows = calloc(n + 1, sizeof(*rows)), *out = json_array(), *node;
	json_t *by_key = dra ? pods_by_key(pods) : NULL;

	if (!rows || !out || (dra && !by_key))
		goto fail;
	json_array_foreach(nodes, i, node) {
		const json_t *alloc = json_object_get(json_object_get(node, "status"), "allocatable");
		const char *res;
		json_t *q;
		struct dra_node_gpus g;
		bool found = false;

		json_object_foreach((json_t *)alloc, res, q) {
			if (!is_gpu_resource(res) || quantity(q) <= 0)
				continue;
			if (!(rows[k] = gpu_node(node, res, quantity(q), pods)))
				goto fail;
			k++;
			found = true;
			break;
		}
		/* A node with the extended resource takes its path (KEP-5004), as sinfo reads it. */
		if (found || !dra)
			continue;
		dra_nodes_gpus(dra, or_empty(str(json_object_get(node, "metadata"), "name")), NULL,
			       &g);
		if (g.devices && !(rows[k++] = dra_gpu_node(node, dra, &g, by_key)))
			goto fail;
	}
	qsort(rows, k, sizeof(*rows), row_cmp);
	for (i = 0; i < k; i++) {
		json_array_append_new(out, rows[i]);
		rows[i] = NULL;
	}
	free(rows);
	json_decref(by_key);
	return out;
fail:
	for (i = 0; rows && i < k; i++)
		json_decref(rows[i]);
	free(rows);
	json_decref(by_key);
	json_decref(out);
	return NULL;
}

void dash_gpu_totals(const json_t *gpu_nodes, long long *used, long long *total)
{
	const json_t *row;
	size_t i;

	*used = *total = 0;
	json_array_foreach(gpu_nodes, i, row) {
		*used += json_integer_value(json_object_get(row, "used"));
		*total += json_integer_value(json_object_get(row, "allocatable"));
	}
}

void dash_history_add(struct dash_history *h, int64_t t, long long used, long long total)
{
	size_t at = (h->start + h->len) % DASH_SAMPLES;

	if (h->len == DASH_SAMPLES) {
		at = h->start;
		h->start = (h->start + 1) % DASH_SAMPLES;
	} else {
		h->len++;
	}
	h->s[at].t = t;
	h->s[at].used = used;
	h->s[at].total = total;
}

json_t *dash_history_json(const struct dash_history *h)
{
	json_t *out = json_array();

	for (size_t i = 0; out && i < h->len; i++) {
		size_t at = (h->start + i) % DASH_SAMPLES;

		if (json_array_append_new(out, json_pack("[I, I, I]", (json_int_t)h->s[at].t,
							 (json_int_t)h->s[at].used,
							 (json_int_t)h->s[at].total))) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

void dash_health_init(struct dash_health *h, uint64_t failures)
{
	h->connected = true;
	h->failures = failures;
}

bool dash_health_needs_probe(const struct dash_health *h, uint64_t failures)
{
	return !h->connected || failures != h->failures;
}

bool dash_health_step(struct dash_health *h, uint64_t failures, bool probe_ok)
{
	bool was = h->connected, moved = failures != h->failures;

	if (h->connected && moved && !probe_ok)
		h->connected = false;
	else if (!h->connected && probe_ok && !moved)
		h->connected = true;
	h->failures = failures;
	return was != h->connected;
}

/* One domain's row in out (an object value -> row), counted for a GPU node row. */
static void count_in_domain(json_t *domains, const char *value, const json_t *row)
{
	json_t *d = json_object_get(domains, value);
	long long alloc = json_integer_value(json_object_get(row, "allocatable"));
	long long free_gpus = json_integer_value(json_object_get(row, "free"));
	bool whole = json_is_true(json_object_get(row, "ready")) && free_gpus == alloc;

	if (!d) {
		d = json_pack("{s:s, s:i, s:i, s:I, s:I}", "value", value, "nodes", 0, "freeNodes",
			      0, "freeGpus", (json_int_t)0, "gpus", (json_int_t)0);
		if (!d || json_object_set_new(domains, value, d))
			return;
	}
	json_object_set_new(d, "nodes", json_integer(json_integer_value(json_object_get(d, "nodes")) + 1));
	json_object_set_new(d, "freeNodes", json_integer(json_integer_value(
		json_object_get(d, "freeNodes")) + whole));
	json_object_set_new(d, "freeGpus", json_integer(json_integer_value(
		json_object_get(d, "freeGpus")) + free_gpus));
	json_object_set_new(d, "gpus", json_integer(json_integer_value(json_object_get(d, "gpus")) +
						   alloc));
}

static int domain_cmp(const void *a, const void *b)
{
	return strcmp(str(*(const json_t *const *)a, "value"), str(*(const json_t *const *)b, "value"));
}

json_t *dash_topology(const json_t *levels, const json_t *nodes, const json_t *gpu_rows)
{
	json_t *out = json_array(), *labels_of = json_object(), *level, *node, *row;
	size_t i, j;

	if (!out || !labels_of)
		goto fail;
	json_array_foreach(nodes, i, node) {
		const json_t *m = json_object_get(node, "metadata");

		if (str(m, "name"))
			json_object_set(labels_of, str(m, "name"), json_object_get(m, "labels"));
	}
	json_array_foreach(levels, i, level) {
		const char *label = str(level, "nodeLabel");
		json_t *domains = json_object(), *list = json_array(), *v;
		json_t **sorted;
		const char *k;
		size_t n = 0;

		if (!label || !domains || !list) {
			json_decref(domains);
			json_decref(list);
			continue;
		}
		json_array_foreach(gpu_rows, j, row) {
			const char *value = str(json_object_get(labels_of, or_empty(str(row, "name"))),
						label);

			if (value)
				count_in_domain(domains, value, row);
		}
		sorted = calloc(json_object_size(domains) + 1, sizeof(*sorted));
		json_object_foreach(domains, k, v)
			if (sorted)
				sorted[n++] = v;
		if (sorted)
			qsort(sorted, n, sizeof(*sorted), domain_cmp);
		for (j = 0; j < n; j++)
			json_array_append(list, sorted[j]);
		free(sorted);
		if (n)
			json_array_append_new(out, json_pack("{s:s, s:s, s:O}", "label", label, "name",
							     str(level, "name") ? str(level, "name") :
							     (strrchr(label, '/') ? strrchr(label, '/') + 1 :
							      label), "domains", list));
		json_decref(list);
		json_decref(domains);
	}
	json_decref(labels_of);
	return out;
fail:
	json_decref(out);
	json_decref(labels_of);
	return NULL;
}
