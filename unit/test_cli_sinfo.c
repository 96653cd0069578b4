/*
 * cadre sinfo and scontrol show partition against a fake API server, on a
 * cluster whose GPUs are partly a device plugin's (nvidia.com/gpu in the
 * node's allocatable) and partly Dynamic Resource Allocation's
 * (resource.k8s.io/v1 ResourceSlices): the exact bytes printed, what is
 * said on stderr, and that a cluster without DRA, or a user who may not
 * read it, gets what sinfo printed before DRA.
 */
#include <criterion/criterion.h>

#include "cli/cli.h"
#include "cli/sinfo.h"
#include "base/buf.h"
#include "unit/support/clirun.h"
#include "support/httpd.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RESOURCE "/apis/resource.k8s.io/v1/"

/* How the fake answers each list: 0 is 200 with the items. */
static struct fake {
	int classes, slices, claims;
	char body[65536];
} fake;

static json_t *parts, *nodes, *pods, *classes, *slices, *claims;
static struct httpd *server;
static char dir[64], kubeconfig[128], *out, *err;

static void status_body(int code, const char *reason)
{
	snprintf(fake.body, sizeof(fake.body), "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		 "\"status\":\"Failure\",\"reason\":\"%s\",\"message\":\"%s\",\"code\":%d}",
		 reason, reason, code);
}

static void list_body(const json_t *items)
{
	json_t *doc = json_pack("{s:s,s:s,s:{s:s},s:O}", "kind", "List", "apiVersion", "v1",
				"metadata", "resourceVersion", "1", "items", items);
	char *text = json_dumps(doc, JSON_COMPACT);

	cr_assert(text && strlen(text) < sizeof(fake.body));
	snprintf(fake.body, sizeof(fake.body), "%s", text);
	free(text);
	json_decref(doc);
}

static bool is_list(const struct httpd_request *req, const char *path)
{
	size_t n = strlen(path);

	return !strcmp(req->method, "GET") && !strncmp(req->target, path, n) &&
	       req->target[n] == '?';
}

/* A list the fake may refuse: status 0 answers items. */
static void answer(struct httpd_response *resp, int status, const json_t *items)
{
	resp->status = status ? status : 200;
	if (status)
		status_body(status, status == 403 ? "Forbidden" : "NotFound");
	else
		list_body(items);
}

static void handler(void *ctx, const struct httpd_request *req, struct httpd_response *resp)
{
	(void)ctx;
	if (is_list(req, "/apis/cadre.dev/v1alpha1/partitions"))
		answer(resp, 0, parts);
	else if (is_list(req, "/api/v1/nodes"))
		answer(resp, 0, nodes);
	else if (is_list(req, "/api/v1/pods"))
		answer(resp, 0, pods);
	else if (is_list(req, RESOURCE "deviceclasses"))
		answer(resp, fake.classes, classes);
	else if (is_list(req, RESOURCE "resourceslices"))
		answer(resp, fake.slices, slices);
	else if (is_list(req, RESOURCE "resourceclaims"))
		answer(resp, fake.claims, claims);
	else
		answer(resp, 404, NULL);
	resp->body = fake.body;
}

static json_t *node(const char *name, bool device_plugin)
{
	json_t *n = json_pack("{s:{s:s,s:{}},s:{s:{s:s,s:s},s:[{s:s,s:s}]}}",
			      "metadata", "name", name, "labels", "status", "capacity", "cpu", "96",
			      "memory", "1024Gi", "conditions", "type", "Ready", "status", "True");

	if (device_plugin) {
		json_object_set_new(json_object_get(json_object_get(n, "metadata"), "labels"),
				    "nvidia.com/gpu.product", json_string("NVIDIA-H100-80GB-HBM3"));
		json_object_set_new(json_object_get(json_object_get(n, "status"), "capacity"),
				    "nvidia.com/gpu", json_string("8"));
	}
	return n;
}

/* node's pool of n H100s at generation, as NVIDIA's plugin publishes them. */
static json_t *slice(const char *node, int generation, int n)
{
	json_t *devices = json_array();

	for (int i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "gpu-%d", i);
		json_array_append_new(devices, json_pack("{s:s,s:{s:{s:s},s:{s:s}}}", "name", name,
							 "attributes", "type", "string", "gpu",
							 "productName", "string",
							 "NVIDIA H100 80GB HBM3"));
	}
	return json_pack("{s:{s:s},s:{s:s,s:s,s:{s:s,s:i,s:i},s:o}}", "metadata", "name", node,
			 "spec", "driver", "gpu.nvidia.com", "nodeName", node, "pool", "name",
			 node, "generation", generation, "resourceSliceCount", 1, "devices",
			 devices);
}

/* A claim whose allocation holds the first n GPUs of node's pool. */
static json_t *claim(const char *node, int n)
{
	json_t *results = json_array();

	for (int i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "gpu-%d", i);
		json_array_append_new(results, json_pack("{s:s,s:s,s:s,s:s}", "request", "gpus",
							 "driver", "gpu.nvidia.com", "pool", node,
							 "device", name));
	}
	return json_pack("{s:{s:s,s:s},s:{s:{s:{s:o}},s:[{s:s,s:s}]}}", "metadata", "name", node,
			 "namespace", "ml", "status", "allocation", "devices", "results", results,
			 "reservedFor", "resource", "pods", "name", "p");
}

static void setup(void)
{
	memset(&fake, 0, sizeof(fake));
	parts = json_pack("[{s:{s:s},s:{s:b,s:s}}]", "metadata", "name", "gpu", "spec", "default",
			  1, "maxTime", "1-00:00:00");
	nodes = json_pack("[o,o,o,o]", node("gpu-node-0", true), node("gpu-node-1", true),
			  node("dra-0", false), node("dra-1", false));
	pods = json_pack("[{s:{s:s,s:s,s:{s:s}},s:{s:s,s:[{s:{s:{s:s}}}]},s:{s:s}}]",
			 "metadata", "name", "j-0", "namespace", "ml", "labels",
			 "cadre.dev/job-name", "j", "spec", "nodeName", "gpu-node-0", "containers",
			 "resources", "requests", "nvidia.com/gpu", "8", "status", "phase", "Running");
	classes = json_pack("[{s:{s:s},s:{s:s,s:[{s:{s:s}}]}}]", "metadata", "name",
			    "gpu.nvidia.com", "spec", "extendedResourceName", "nvidia.com/gpu",
			    "selectors", "cel", "expression", "device.driver == 'gpu.nvidia.com' && "
			    "device.attributes['gpu.nvidia.com'].type == 'gpu'");
	/* dra-1's pool was republished: generation 1 had 4 devices, generation 2 has 8. */
	slices = json_pack("[o,o,o]", slice("dra-0", 1, 8), slice("dra-1", 1, 4),
			   slice("dra-1", 2, 8));
	claims = json_pack("[o,o]", claim("dra-0", 8), claim("dra-1", 3));
	snprintf(dir, sizeof(dir), "/tmp/cadre-sinfo-XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(kubeconfig, sizeof(kubeconfig), "%s/config", dir);
	cr_assert_eq(httpd_new(&server), 0);
	httpd_set_handler(server, handler, NULL);
	clirun_kubeconfig(kubeconfig, httpd_url(server));
	unsetenv("KUBECONFIG");
	unsetenv("SINFO_FORMAT");
}

static void teardown(void)
{
	httpd_free(server);
	server = NULL;
	unlink(kubeconfig);
	rmdir(dir);
	free(out);
	free(err);
	out = err = NULL;
	json_decref(parts);
	json_decref(nodes);
	json_decref(pods);
	json_decref(classes);
	json_decref(slices);
	json_decref(claims);
}

TestSuite(cli_sinfo, .init = setup, .fini = teardown);

static int cadre(const char *line)
{
	return clirun(dir, line, kubeconfig, &out, &err);
}

static size_t count_requests(const char *prefix)
{
	size_t n = 0;

	for (size_t i = 0; i < httpd_request_count(server); i++)
		n += !strncmp(httpd_request_at(server, i)->target, prefix, strlen(prefix));
	return n;
}

/* What sinfo printed before DRA: the same lists, read without it. */
static char *before_dra(const struct sinfo_query *q)
{
	struct buf b;
	char *text;

	buf_init(&b, 1 << 20);
	cr_assert_eq(sinfo_table(q, parts, nodes, pods, &b), 0);
	text = strdup(buf_str(&b));
	buf_release(&b);
	return text;
}

static const char today[] =
	"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
	"gpu*         up 1-00:00:00      1  alloc gpu-node-0\n"
	"gpu*         up 1-00:00:00      3   idle dra-[0-1],gpu-node-1\n";

Test(cli_sinfo, dra_gpus_are_shown_as_the_device_plugins_are)
{
	cr_assert_eq(cadre("sinfo --kubeconfig KC"), 0, "%s", err);
	cr_assert_str_eq(err, "");
	cr_assert_str_eq(out,
		"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
		"gpu*         up 1-00:00:00      1    mix dra-1\n"
		"gpu*         up 1-00:00:00      2  alloc dra-0,gpu-node-0\n"
		"gpu*         up 1-00:00:00      1   idle gpu-node-1\n");
	cr_assert_eq(cadre("sinfo --kubeconfig KC -N -o %N|%G|%t"), 0, "%s", err);
	cr_assert_str_eq(out,
		"NODELIST|GRES|STATE\n"
		"dra-0|gpu:h100:8|alloc\n"
		"dra-1|gpu:h100:8|mix\n"
		"gpu-node-0|gpu:h100:8|alloc\n"
		"gpu-node-1|gpu:h100:8|idle\n");
	cr_assert_eq(count_requests(RESOURCE "deviceclasses?"), 2);
	cr_assert_eq(count_requests(RESOURCE "resourceslices?"), 2);
	cr_assert_eq(count_requests(RESOURCE "resourceclaims?"), 2);
}

/* A cluster that does not serve resource.k8s.io/v1 gets today's bytes and no word. */
Test(cli_sinfo, a_cluster_without_dra_prints_exactly_what_sinfo_printed_before)
{
	char *before = before_dra(&(struct sinfo_query){ 0 });

	fake.classes = fake.slices = fake.claims = 404;
	cr_assert_eq(cadre("sinfo --kubeconfig KC"), 0, "%s", err);
	cr_assert_str_eq(err, "");
	cr_assert_str_eq(out, today);
	cr_assert_str_eq(out, before);
	cr_assert_eq(count_requests(RESOURCE "resourceslices?"), 0, "no class: no slice is read");
	free(before);
}

/*
 * A user who may not list the DeviceClasses cannot tell whether the cluster
 * uses DRA: sinfo is what it was, without a word (the e2e user of
 * cadre-cluster-view and cadre-cluster-usage sees an empty stderr).
 */
Test(cli_sinfo, a_user_who_may_not_list_deviceclasses_gets_todays_output_silently)
{
	fake.classes = 403;
	cr_assert_eq(cadre("sinfo --kubeconfig KC"), 0, "%s", err);
	cr_assert_str_eq(err, "");
	cr_assert_str_eq(out, today);
}

Test(cli_sinfo, classes_but_no_slices_is_said_once)
{
	fake.slices = 403;
	cr_assert_eq(cadre("sinfo --kubeconfig KC"), 0, "%s", err);
	cr_assert_str_eq(out, today);
	cr_assert_str_eq(err, "cadre sinfo: GPUs of Dynamic Resource Allocation not shown: not "
			      "allowed to list resourceslices (resource.k8s.io, docs/install.md)\n");
	cr_assert_eq(cadre("sinfo --kubeconfig KC -h"), 0, "%s", err);
	cr_assert_str_eq(err, "", "not with -h");
}

/* Without the claims, whether DRA GPUs are held is not known: unk, and one line says why. */
Test(cli_sinfo, without_the_claims_dra_nodes_are_unk)
{
	fake.claims = 403;
	cr_assert_eq(cadre("sinfo --kubeconfig KC"), 0, "%s", err);
	cr_assert_str_eq(out,
		"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
		"gpu*         up 1-00:00:00      1  alloc gpu-node-0\n"
		"gpu*         up 1-00:00:00      1   idle gpu-node-1\n"
		"gpu*         up 1-00:00:00      2    unk dra-[0-1]\n");
	cr_assert_str_eq(err, "cadre sinfo: usage of DRA devices unknown (unk): not allowed to "
			      "list resourceclaims in every namespace (docs/install.md)\n");
}

Test(cli_sinfo, scontrol_show_partition_counts_dra_gpus)
{
	cr_assert_eq(cadre("scontrol --kubeconfig KC show partition gpu"), 0, "%s", err);
	cr_assert_str_eq(err, "");
	cr_assert(strstr(out, "   TRES=cpu=384,mem=4T,node=4,billing=384,gres/gpu=32\n\n"), "%s",
		  out);
	cr_assert_eq(count_requests(RESOURCE "resourceclaims?"), 0, "a record holds no usage");
	fake.classes = 404;
	cr_assert_eq(cadre("scontrol --kubeconfig KC show partition gpu"), 0, "%s", err);
	cr_assert(strstr(out, "   TRES=cpu=384,mem=4T,node=4,billing=384,gres/gpu=16\n\n"), "%s",
		  out);
}
