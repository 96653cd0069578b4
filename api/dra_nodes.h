/*
 * dra_nodes.h - the devices Dynamic Resource Allocation publishes on each
 * node, which DeviceClasses they are of, and which ResourceClaims hold
 * them: so that a node's DRA GPUs are shown as its extended-resource ones
 * are (cadre sinfo, scontrol show partition, the dashboard).
 *
 * A node's devices are those of the ResourceSlices whose spec.nodeName is
 * the node (with spec.perDeviceNodeSelection, each device's own nodeName);
 * slices for several nodes (nodeSelector, allNodes) are no node's. Of each
 * pool (driver and spec.pool.name) only the slices of the highest
 * spec.pool.generation count, as the scheduler reads a pool being
 * republished. A device is held by the claim whose
 * status.allocation.devices.results[] names it (driver, pool, device); a
 * result with adminAccess takes the device from no one and holds nothing.
 *
 * Pure. Borrows the JSON it is built from: the slices and claims must
 * outlive it. Thread-safe on distinct structs.
 */
#ifndef CADRE_API_DRA_NODES_H
#define CADRE_API_DRA_NODES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/dra_class.h"

struct dra_device {
	const char *node, *driver, *pool, *name;
	const json_t *device;  /* the item of the slice's spec.devices */
	const json_t *claim;   /* the ResourceClaim holding it; NULL: free */
};

struct dra_nodes {
	struct dra_device *devices;  /* by node, then driver, pool and name */
	size_t n_devices;
	struct dra_class *classes;   /* in the order listed */
	size_t n_classes;
};

/*
 * Build *out from the items of the DeviceClass, ResourceSlice and
 * ResourceClaim lists (borrowed arrays; any may be NULL: none). The
 * caller releases *out with dra_nodes_release whatever this returns.
 * 0 or CADRE_ENOMEM.
 */
int dra_nodes_build(const json_t *classes, const json_t *slices, const json_t *claims,
		    struct dra_nodes *out);

void dra_nodes_release(struct dra_nodes *d);

/* The devices of node: how many, the first in *first (NULL when none). */
size_t dra_nodes_of(const struct dra_nodes *d, const char *node, const struct dra_device **first);

/*
 * The class dev is counted for: class_name's when it selects dev; with
 * class_name NULL, the first GPU class (dra_class_is_gpu) that selects it.
 * NULL when none (or no class of that name is listed).
 */
const struct dra_class *dra_nodes_class_of(const struct dra_nodes *d, const struct dra_device *dev,
					   const char *class_name);

/*
 * A node's devices of class_name (NULL: of the GPU classes), as sinfo
 * counts a node's GPUs: how many, how many a claim holds; the productName
 * (DRA_DEFAULT_ATTRIBUTE) of the first that has one and the class of the
 * first (both borrowed, NULL when none).
 */
struct dra_node_gpus {
	long long devices, held;
	const char *product;
	const char *class_name;
};

void dra_nodes_gpus(const struct dra_nodes *d, const char *node, const char *class_name,
		    struct dra_node_gpus *out);

#endif
