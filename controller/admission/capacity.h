/*
 * capacity.h - free capacity per node, and whether a gang fits in it
 * (docs/design.md 3.1; docs/gang-admission.md).
 *
 * The caller describes the cluster as plain structs: nodes with their
 * allocatable resources, labels, taints and state, then, one call each, the
 * requests of every non-terminal pod bound to a node (capacity_use) and the
 * pods of admitted gangs that are not bound yet (capacity_reserve), so two
 * gangs are never admitted onto the same free accelerators. A gang's pods
 * are identical, so "does it fit" is "can count copies of one pod's demand
 * be placed", several on one node when the demand is small. Quantities are
 * int64 milli-units, as api/quantity.h parses them.
 *
 * Pure: no I/O, no clock, no globals. A struct capacity is not thread-safe;
 * build one per admission pass. Strings and arrays given to it are
 * borrowed and must outlive it.
 */
#ifndef CADRE_CAPACITY_H
#define CADRE_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/admission/node_selector.h"

struct buf;

/* A taint's effect; CAP_EFFECT_ANY only in a toleration (one with no effect). */
enum cap_effect {
	CAP_EFFECT_ANY = 0,
	CAP_NO_SCHEDULE,
	CAP_PREFER_NO_SCHEDULE,  /* a preference: never keeps a pod off a node */
	CAP_NO_EXECUTE,
};

enum cap_toleration_op {
	CAP_TOLERATE_EQUAL = 0,  /* key and value equal; the default operator */
	CAP_TOLERATE_EXISTS,     /* any value; with an empty key, every taint */
};

struct cap_label {
	const char *key;
	const char *value;
};

struct cap_taint {
	const char *key;
	const char *value;  /* NULL reads as "" */
	enum cap_effect effect;
};

struct cap_toleration {
	const char *key;    /* NULL or "": every key (with CAP_TOLERATE_EXISTS) */
	enum cap_toleration_op op;
	const char *value;  /* NULL reads as "" */
	enum cap_effect effect;
};

/*
 * The extended resource of a DRA DeviceClass's devices is this and the
 * class's name: the name KEP-5004 gives it when the class names none
 * (dra_capacity.h says how admission counts it).
 */
#define CAP_DEVICE_CLASS_PREFIX "deviceclass.resource.kubernetes.io/"

/* An amount of an extended resource ("nvidia.com/gpu": 8000 for 8 devices). */
struct cap_resource {
	const char *name;
	int64_t milli;
};

struct cap_node {
	const char *name;
	bool ready;          /* condition Ready is True */
	bool unschedulable;  /* spec.unschedulable (cordoned) */
	/* status.allocatable */
	int64_t cpu_milli;
	int64_t memory_milli;
	int64_t pods;        /* most pods the node runs; 0 means no limit is known */
	const struct cap_resource *extended;
	size_t n_extended;
	const struct cap_label *labels;
	size_t n_labels;
	const struct cap_taint *taints;
	size_t n_taints;
};

/* What one pod of a gang asks for and where it may go. */
struct cap_demand {
	int64_t cpu_milli;
	int64_t memory_milli;
	/* "nvidia.com/gpu", or CAP_DEVICE_CLASS_PREFIX "<class>"; NULL or "" when none */
	const char *accel_resource;
	int64_t accel_count;         /* devices per pod; 0 when none */
	/*
	 * The key of the taint its pods tolerate for their accelerators (see
	 * tolerations below); NULL: accel_resource. A DRA job's pods tolerate
	 * the taint of the device plugin's resource all the same.
	 */
	const char *accel_taint;
	/*
	 * "H100": the node's accelerator label must contain it, case aside
	 * (accel_matches_label). NULL or "": any node with the resource.
	 */
	const char *accel_type;
	const struct cap_label *node_selector;  /* every pair must be a label of the node */
	size_t n_node_selector;
	/*
	 * podTemplate's tolerations. The pod's toleration of its accelerator
	 * resource's taint (key = accel_taint, Exists, NoSchedule; see
	 * build.h) is implied when accel_count > 0.
	 */
	const struct cap_toleration *tolerations;
	size_t n_tolerations;
	/* Nodes this job leaves behind (status.excludedNodes): never eligible. */
	const char *const *avoid;
	size_t n_avoid;
	/* Nodes the job itself excludes (spec.excludeNodes, sbatch -x): never eligible. */
	const char *const *exclude;
	size_t n_exclude;
	/*
	 * Nodes the job names (spec.nodeList, sbatch -w): each takes one pod,
	 * first, in order; the other pods go to other nodes, as Slurm gives a job
	 * its listed nodes and more. A listed node that cannot take its pod now
	 * keeps the whole gang waiting (cap_fit.required_busy names it).
	 */
	const char *const *required;
	size_t n_required;
	/*
	 * spec.exclusive (sbatch --exclusive): one pod a node, on nodes no other
	 * job has a pod on (capacity_occupy), and each node it takes is held whole.
	 */
	bool exclusive;
	/*
	 * Nodes where its gang timed out before (status.excludedNodes, reason
	 * GangTimeout): never eligible either, counted apart in the message.
	 * The caller leaves them out when the job could not fit without them.
	 */
	const char *const *timed_out;
	size_t n_timed_out;
	/*
	 * Required node selectors, every one of which a node must match: the
	 * podTemplate's required node affinity, each Volume's PersistentVolume's.
	 */
	const struct node_selector *affinity;
	size_t n_affinity;
	/* Required pod anti-affinity between the gang's ranks per host: at most one pod a node. */
	bool one_per_node;
	/*
	 * Other requests per pod, compared with the nodes' allocatable as the
	 * accelerator is (ephemeral-storage), at most CAP_EXTRA_MAX; names
	 * other than cpu, memory, pods and the accelerator resource.
	 */
	const struct cap_resource *extra;
	size_t n_extra;
};

#define CAP_EXTRA_MAX 4

/*
 * Why a gang fits or not. Counts of nodes are over all nodes; when fits is
 * true the scan may have stopped early and only fits and placed are
 * meaningful.
 */
struct cap_fit {
	bool fits;            /* all count pods placed on free capacity */
	int placed;           /* pods placed (<= count) */
	int room;             /* pods that fit on free capacity of usable nodes */
	int nodes_with_room;  /* usable nodes with room for at least one pod */
	int ever;             /* pods that eligible nodes could hold if empty, at most count */
	int eligible;         /* nodes the pod may run on (fenced ones included) */
	int fenced;           /* eligible nodes the caller held back (the fence) */
	int not_ready;        /* each node is counted under the first reason that excludes it */
	int unschedulable;
	int wrong_accel;      /* no accelerator label, or one of another type */
	int selector_mismatch;
	int tainted;          /* a NoSchedule or NoExecute taint not tolerated */
	int affinity_mismatch;  /* outside the podTemplate's required node affinity */
	int volume_mismatch;  /* outside a Volume's PersistentVolume's node affinity */
	const char *required_busy;  /* the first listed node that cannot take its pod; NULL */
	int avoided;          /* in the demand's avoid list */
	int excluded;         /* in the demand's exclude list */
	int occupied;         /* with another job's pod, for an exclusive demand */
	int timed_out;        /* in the demand's timed_out list */
};

struct cap_memo;

struct capacity {
	const struct cap_node *nodes;  /* borrowed */
	size_t n_nodes;
	const char *accel_label;       /* borrowed */
	/*
	 * Resource dimensions: 0 cpu, 1 memory, 2 pods, then every extended
	 * resource a node offers. Names borrowed.
	 */
	const char **res_names;
	size_t n_res;
	int64_t *alloc;                /* n_nodes * n_res, row per node */
	int64_t *free;                 /* n_nodes * n_res; may go negative when overcommitted */
	const char **accel_value;      /* per node: its accelerator label's value, or NULL */
	/*
	 * The ResourceSlice attribute a DRA device's type is read from
	 * (--device-attribute), for messages; NULL when no demand is DRA's.
	 * Borrowed; set after capacity_init.
	 */
	const char *device_attribute;
	uint32_t *by_name;             /* node indices sorted by name */
	unsigned char *occupied;       /* per node: a job's pod is there (capacity_occupy) */
	/*
	 * Which nodes carry each accelerator type asked about, filled even by
	 * the const functions (one more reason a capacity belongs to one
	 * thread): a queue has many jobs but few types.
	 */
	struct cap_memo *memo;
};

#define CAPACITY_MAX_NODES 1000000

/*
 * Set c up for nodes[0..n_nodes) with everything free. accel_label is the
 * node label naming the accelerator (--accelerator-label); NULL or "" means
 * "nvidia.com/gpu.product". Node names must be unique and non-NULL.
 * Returns 0, CADRE_EINVAL (a NULL or duplicate name, more than
 * CAPACITY_MAX_NODES nodes) or CADRE_ENOMEM; release c whatever it returns.
 */
int capacity_init(struct capacity *c, const struct cap_node *nodes, size_t n_nodes,
		  const char *accel_label);

void capacity_release(struct capacity *c);

/* The index of the node named name, or -1. O(log n). */
long capacity_node_index(const struct capacity *c, const char *name);

/*
 * Count a pod bound to node (a non-terminal pod of anyone, cadre's or not):
 * its requests and one pod slot leave the free capacity. Resources no node
 * offers are ignored. Returns 0, or CADRE_ENOTFOUND for a node c does not
 * know (a pod on a node that is gone; nothing to subtract).
 */
/*
 * A job's pod is on node (not a DaemonSet's or a static pod): an
 * exclusive demand may not go there. CADRE_ENOTFOUND for an unknown node.
 */
int capacity_occupy(struct capacity *c, const char *node);

/*
 * node is held whole (an exclusive job's pod is there, or will be): no
 * other pod fits on it. CADRE_ENOTFOUND for an unknown node.
 */
int capacity_hold_whole(struct capacity *c, const char *node);

int capacity_use(struct capacity *c, const char *node, int64_t cpu_milli, int64_t memory_milli,
		 const struct cap_resource *extended, size_t n_extended);

/* capacity_use, capacity_hold_whole on the node of index i (< c->n_nodes). */
void capacity_use_at(struct capacity *c, size_t i, int64_t cpu_milli, int64_t memory_milli,
		     const struct cap_resource *extended, size_t n_extended);
void capacity_hold_whole_at(struct capacity *c, size_t i);

/*
 * Take amounts of extended resources off node i's free capacity and
 * nothing else (no pod slot): devices ResourceClaims hold, which no
 * pod's requests name. i < c->n_nodes; names no node offers are ignored.
 */
void capacity_use_extended_at(struct capacity *c, size_t i, const struct cap_resource *extended,
			      size_t n_extended);

/*
 * What is free and occupied, kept aside (capacity_save) to be put back
 * (capacity_restore) after trying what-ifs on c: preemption (preempt.h)
 * charges different sets of victims' pods onto one base.
 */
struct cap_saved {
	int64_t *free;
	unsigned char *occupied;
	size_t n_nodes, n_res;
};

/* 0 or CADRE_ENOMEM (saved released). */
int capacity_save(const struct capacity *c, struct cap_saved *saved);
void capacity_restore(struct capacity *c, const struct cap_saved *saved);
/* Only node i's row (what is free on it, and whether it is occupied). */
void capacity_restore_node(struct capacity *c, const struct cap_saved *saved, size_t i);
void cap_saved_release(struct cap_saved *saved);

/*
 * Hold room for count pods of an admitted gang that are not bound yet (do
 * not also pass them to capacity_use). With node set, all of them are held
 * on that node, even past its free capacity (it may be where the scheduler
 * already decided); with node NULL, they are placed as capacity_fit would
 * place them, on nodes where they are eligible. *unplaced (may be NULL) is
 * set to the pods that found no room. Returns 0, CADRE_EINVAL for count < 0,
 * CADRE_ENOTFOUND for an unknown node.
 */
int capacity_reserve(struct capacity *c, const struct cap_demand *d, int count, const char *node,
		     int *unplaced);

/*
 * Whether count pods of d fit on free capacity, first fit in node order,
 * several per node where they fit. fence (may be NULL) has one byte per
 * node; a non-zero byte keeps that node out (admission's starvation guard).
 * placement (may be NULL) receives count node indices when it fits, one per
 * pod. Returns 0 or CADRE_EINVAL (count < 1, a negative demand, more than
 * CAP_EXTRA_MAX extra requests).
 */
int capacity_fit(const struct capacity *c, const struct cap_demand *d, int count,
		 const unsigned char *fence, uint32_t *placement, struct cap_fit *fit);

/* Take count pods of d off the free capacity of the nodes in placement. */
void capacity_take(struct capacity *c, const struct cap_demand *d, const uint32_t *placement,
		   int count);

/*
 * Whether a pod of d may run on node i at all: ready, schedulable, the
 * accelerator type, nodeSelector, taints, required node affinity and its
 * Volumes' node affinity allow it. Size is not looked at.
 */
bool capacity_eligible(const struct capacity *c, const struct cap_demand *d, size_t i);

/* Pods of d that node i has room for now, and when empty (both at most limit). */
int capacity_room(const struct capacity *c, const struct cap_demand *d, size_t i, int limit);
int capacity_room_empty(const struct capacity *c, const struct cap_demand *d, size_t i, int limit);

/*
 * Pods of d that each node has room for now (or when empty), at most limit,
 * into room (c->n_nodes entries, by node index): 0 for a node d may not use
 * or that fence keeps out (fence may be NULL). The demand is resolved once,
 * so this is the way to ask about every node. Returns 0 or CADRE_EINVAL.
 */
int capacity_rooms(const struct capacity *c, const struct cap_demand *d, int limit,
		   const unsigned char *fence, bool empty, int64_t *room);

/* A node a job could use, as capacity_candidates() lists them. */
struct cap_candidate {
	uint32_t node;
	int room_empty;   /* pods of the demand it holds when empty, >= 1 */
	/*
	 * Room now, in pods, fractional: 0.75 when the scarcest resource a pod
	 * needs is at three quarters of one pod's share.
	 */
	double headroom;
};

/*
 * List in out (room for c->n_nodes entries) the nodes a pod of d is
 * eligible for, that are not fenced (fence may be NULL) and could hold at
 * least one pod when empty; room_empty at most limit. Returns how many.
 */
size_t capacity_candidates(const struct capacity *c, const struct cap_demand *d,
			   const unsigned char *fence, int limit, struct cap_candidate *out);

/*
 * Append to out, for a person, why count pods of d do not fit, from fit (as
 * capacity_fit left it): "needs 2 nodes with 8 nvidia.com/gpu of type H100,
 * 32 CPU, 256Gi memory; 1 node has room", "no node has accelerator type
 * H100 (label nvidia.com/gpu.product)", with the nodes left out and why. A
 * DRA demand's devices are said as "8 devices of DeviceClass C".
 * Returns 0 or an error of buf_add.
 */
int capacity_describe(const struct capacity *c, const struct cap_demand *d, int count,
		      const struct cap_fit *fit, struct buf *out);

#endif
