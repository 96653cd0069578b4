/*
 * dra_capacity.h - accelerators published through Dynamic Resource
 * Allocation (resource.k8s.io/v1) as built-in admission counts them
 * (docs/design.md 3.1).
 *
 * A job whose accelerators come from DeviceClass C (its resources'
 * device_class) asks each node for CAP_DEVICE_CLASS_PREFIX "C", the name
 * KEP-5004 gives a class's devices as an extended resource. For one
 * decision, each node is given that resource: as allocatable, the devices
 * of the ResourceSlices whose spec.nodeName is the node (or, with
 * perDeviceNodeSelection, whose device's is; of each pool, only the slices
 * of its highest generation) that are of class C; as used, those of them
 * that a ResourceClaim's allocation holds. A device is of C when it
 * satisfies the equalities of C's selectors that cadre reads
 * (dra_select.h; kube-scheduler, which allocates, has the last word); a
 * device tainted NoSchedule or NoExecute is nobody's. A node with such
 * devices and without the accelerator label is given the label, valued as
 * its first device's type attribute (--device-attribute), so that a job's
 * type is matched as on a device plugin's node.
 *
 * cadre's pods ask for no such resource: the devices their claims hold are
 * counted from the claims once kube-scheduler has allocated them, and until
 * then an admitted gang's ranks without a node hold room where admission
 * placed them (gang.c reserve_admitted). Pods and claims come through
 * watches of their own: a rank seen bound before its claim is seen
 * allocated holds nothing for that moment, and a decision then may take
 * its devices for free; kube-scheduler keeps that other gang's pod pending,
 * and its gang timeout requeues it. Another tenant's pod that asks for the
 * resource by name has its devices counted from its claim too, and not
 * from its request (gang_charge).
 *
 * Preemption frees no device here: a victim's pods are set aside, its
 * claims still count (docs/design.md 3.1).
 *
 * One decision at a time (the admission lock); strings and arrays live in
 * the decision's scratch area.
 */
#ifndef CADRE_DRA_CAPACITY_H
#define CADRE_DRA_CAPACITY_H

#include <stddef.h>
#include <stdint.h>

#include "controller/admission/capacity.h"

struct candidate;
struct manager;
struct scratch;

/* Whether a class's devices can be counted now. */
enum dra_state {
	DRA_COUNTED,     /* the class exists and the caches have listed */
	DRA_NO_CLASS,    /* no DeviceClass of the name: none of its devices */
	DRA_NOT_SERVED,  /* the API server does not serve resource.k8s.io/v1 */
	DRA_NOT_SYNCED,  /* the caches of slices, claims or classes have not listed yet */
	DRA_TOO_MANY,    /* past the most classes one decision counts (64) */
};

/* The DeviceClasses of one decision and what is counted of them. */
struct dra_view {
	size_t n;
	const char **classes;     /* borrowed from the jobs */
	const char **resources;   /* CAP_DEVICE_CLASS_PREFIX + class, in scratch */
	enum dra_state *state;
	/* Of the last dra_capacity_add: per node and class, devices a claim holds. */
	int64_t *held;
	size_t n_nodes;
};

/*
 * The distinct DeviceClasses the waiting and admitted jobs name, into v
 * (scratch; s->err set when out of memory). None: DRA costs a decision
 * nothing.
 */
void dra_view_init(struct scratch *s, struct dra_view *v, const struct candidate *jobs,
		   size_t n_jobs);

/*
 * Read the caches of m and give nodes[0..n_nodes) (read from the Node
 * cache; their arrays in s) the devices of v's classes as extended
 * resources, and the accelerator label where they lack it. Sets v->state
 * and v->held. Returns 0 or CADRE_ENOMEM.
 */
int dra_capacity_add(struct manager *m, struct scratch *s, struct dra_view *v,
		     struct cap_node *nodes, size_t n_nodes);

/* Charge on cap (set up from the nodes dra_capacity_add saw) the devices claims hold. */
void dra_capacity_charge(const struct dra_view *v, struct capacity *cap);

/*
 * Why a job of class cannot be placed now, for its message (scratch), or
 * NULL when its devices are counted.
 */
const char *dra_blocked(struct scratch *s, const struct dra_view *v, const char *class_name);

#endif
