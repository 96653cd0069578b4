/*
 * api/dra_nodes: each node's DRA devices, of which class, and which a
 * ResourceClaim holds; only the newest generation of each pool counts.
 */
#include <criterion/criterion.h>

#include "api/dra_nodes.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static json_t *classes, *slices, *claims;
static struct dra_nodes d;

static json_t *gpu(const char *name, const char *type)
{
	return json_pack("{s:s,s:{s:{s:s},s:{s:s}}}", "name", name, "attributes", "type", "string",
			 type, "productName", "string", "NVIDIA H100 80GB HBM3");
}

/* A slice of pool (driver gpu.nvidia.com) at generation on node (NULL: every node), n GPUs. */
static json_t *slice(const char *node, const char *pool, int generation, int n)
{
	json_t *devices = json_array(), *s;

	for (int i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "gpu-%d", i);
		json_array_append_new(devices, gpu(name, "gpu"));
	}
	s = json_pack("{s:{s:s,s:{s:s,s:i,s:i},s:o}}", "spec", "driver", "gpu.nvidia.com", "pool",
		      "name", pool, "generation", generation, "resourceSliceCount", 1, "devices",
		      devices);
	if (node)
		json_object_set_new(json_object_get(s, "spec"), "nodeName", json_string(node));
	else
		json_object_set_new(json_object_get(s, "spec"), "allNodes", json_true());
	return s;
}

static json_t *result(const char *pool, const char *device, bool admin)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:b}", "request", "gpus", "driver", "gpu.nvidia.com",
			 "pool", pool, "device", device, "adminAccess", admin);
}

static json_t *claim(const char *name, json_t *results)
{
	return json_pack("{s:{s:s,s:s},s:{s:{s:{s:o}}}}", "metadata", "name", name, "namespace",
			 "ml", "status", "allocation", "devices", "results", results);
}

static void setup(void)
{
	json_t *per_device;

	classes = json_pack("[{s:{s:s},s:{s:s,s:[{s:{s:s}}]}},{s:{s:s},s:{s:[{s:{s:s}}]}}]",
			    "metadata", "name", "gpu.nvidia.com", "spec", "extendedResourceName",
			    "nvidia.com/gpu", "selectors", "cel", "expression",
			    "device.driver == 'gpu.nvidia.com' && "
			    "device.attributes['gpu.nvidia.com'].type == 'gpu'",
			    "metadata", "name", "mig.nvidia.com", "spec", "selectors", "cel",
			    "expression", "device.driver == 'gpu.nvidia.com' && "
			    "device.attributes['gpu.nvidia.com'].type == 'mig'");
	slices = json_array();
	/* node-a republishes its pool: generation 2 has 4 GPUs and a MIG device, 1 had 8. */
	json_array_append_new(slices, slice("node-a", "node-a", 1, 8));
	json_array_append_new(slices, slice("node-a", "node-a", 2, 4));
	json_array_append_new(json_object_get(json_object_get(json_array_get(slices, 1), "spec"),
					      "devices"), gpu("mig-0", "mig"));
	json_array_append_new(slices, slice(NULL, "shared", 1, 2));
	per_device = slice("x", "rack", 1, 2);
	json_object_del(json_object_get(per_device, "spec"), "nodeName");
	json_object_set_new(json_object_get(per_device, "spec"), "perDeviceNodeSelection",
			    json_true());
	json_object_set_new(json_array_get(json_object_get(json_object_get(per_device, "spec"),
							   "devices"), 0), "nodeName",
			    json_string("node-b"));
	json_array_append_new(slices, per_device);
	claims = json_array();
	json_array_append_new(claims, claim("two", json_pack("[o,o]", result("node-a", "gpu-0", false),
							      result("node-a", "gpu-1", false))));
	json_array_append_new(claims, claim("admin", json_pack("[o]", result("node-a", "gpu-2", true))));
	/* gpu-6 is only in the old generation: no device of the pool's now. */
	json_array_append_new(claims, claim("stale", json_pack("[o]", result("node-a", "gpu-6", false))));
}

static void teardown(void)
{
	dra_nodes_release(&d);
	json_decref(classes);
	json_decref(slices);
	json_decref(claims);
}

TestSuite(dra_nodes, .init = setup, .fini = teardown);

Test(dra_nodes, a_nodes_gpus_are_its_newest_pools_devices_and_claims_hold_some)
{
	struct dra_node_gpus g;

	cr_assert_eq(dra_nodes_build(classes, slices, claims, &d), 0);
	dra_nodes_gpus(&d, "node-a", NULL, &g);
	cr_assert_eq(g.devices, 4, "generation 1's eight are gone, the MIG device is not a GPU");
	cr_assert_eq(g.held, 2, "admin access holds nothing");
	cr_assert_str_eq(g.product, "NVIDIA H100 80GB HBM3");
	cr_assert_str_eq(g.class_name, "gpu.nvidia.com");
	dra_nodes_gpus(&d, "node-a", "mig.nvidia.com", &g);
	cr_assert_eq(g.devices, 1);
	cr_assert_eq(g.held, 0);
	cr_assert_str_eq(g.class_name, "mig.nvidia.com");
	dra_nodes_gpus(&d, "node-a", "no-such-class", &g);
	cr_assert_eq(g.devices, 0);
	cr_assert_null(g.product);
}

Test(dra_nodes, slices_for_many_nodes_are_no_nodes_and_per_device_nodes_are_read)
{
	const struct dra_device *first;
	struct dra_node_gpus g;

	cr_assert_eq(dra_nodes_build(classes, slices, claims, &d), 0);
	cr_assert_eq(d.n_devices, 6, "4 GPUs and a MIG device on node-a, one on node-b");
	cr_assert_eq(dra_nodes_of(&d, "node-b", &first), 1);
	cr_assert_str_eq(first->pool, "rack");
	dra_nodes_gpus(&d, "node-b", NULL, &g);
	cr_assert_eq(g.devices, 1);
	cr_assert_eq(dra_nodes_of(&d, "node-c", &first), 0);
	cr_assert_null(first);
}

Test(dra_nodes, nothing_listed_is_no_device)
{
	struct dra_node_gpus g;

	cr_assert_eq(dra_nodes_build(NULL, NULL, NULL, &d), 0);
	dra_nodes_gpus(&d, "node-a", NULL, &g);
	cr_assert_eq(g.devices, 0);
	dra_nodes_release(&d);
	/* Devices of no class known are no GPU's. */
	cr_assert_eq(dra_nodes_build(NULL, slices, claims, &d), 0);
	dra_nodes_gpus(&d, "node-a", NULL, &g);
	cr_assert_eq(g.devices, 0);
}
