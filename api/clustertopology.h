/*
 * clustertopology.h - the cluster's topology levels (docs/topology.md): the
 * ClusterTopology named "default" (cadre.dev/v1alpha1, cluster-scoped,
 * owned by the cluster's administrators), or, without one, the levels
 * cadre knows out of the box.
 *
 * A level is a node label key; the levels are ordered coarse to fine, and
 * a job's spec.topology names levels by their labels.
 */
#ifndef CADRE_CLUSTERTOPOLOGY_H
#define CADRE_CLUSTERTOPOLOGY_H

#include <jansson.h>
#include <stddef.h>

#include "api/fielderr.h"

/* The one ClusterTopology cadre reads. */
#define CLUSTER_TOPOLOGY_NAME "default"
#define CLUSTER_TOPOLOGY_KIND "ClusterTopology"
/* The most levels one describes (the CRD's maxItems). */
#define CLUSTER_TOPOLOGY_MAX_LEVELS 16

struct cluster_topology_level {
	const char *label;   /* node label key */
	const char *name;    /* what a person calls it ("rack"); NULL: the label's last part */
};

/*
 * The levels known out of the box, coarse to fine, for a cluster without a
 * ClusterTopology (and the content of manifests/clustertopology-default.yaml,
 * which a unit test holds to this list): zones, then the network layers
 * and blocks of the clouds and of NVIDIA's topograph, then NVLink domains.
 */
extern const struct cluster_topology_level cluster_topology_builtin[];
extern const size_t cluster_topology_builtin_count;

struct cluster_topology {
	size_t n_levels;
	char *labels[CLUSTER_TOPOLOGY_MAX_LEVELS];   /* owned */
	char *names[CLUSTER_TOPOLOGY_MAX_LEVELS];    /* owned; NULL when not given */
	char *default_level;  /* spec.defaultLevel, the converters' level; NULL when not given */
	char source[64];      /* "ClusterTopology default" or "cadre's built-in levels" */
};

/* Empty; safe to release. */
void cluster_topology_init(struct cluster_topology *t);
void cluster_topology_release(struct cluster_topology *t);

/* The built-in levels into t (initialized first). 0 or CADRE_ENOMEM. */
int cluster_topology_builtin_levels(struct cluster_topology *t);

/*
 * Read a ClusterTopology object (borrowed) into t, which it initializes
 * first: spec.levels[] {nodeLabel, name}, 1 to 16 of them, each label a
 * qualified name and given once, and spec.defaultLevel one of them.
 * Returns 0, CADRE_EINVAL with the fields in errs, or CADRE_ENOMEM;
 * release t whatever it returns.
 */
int cluster_topology_parse(const json_t *obj, struct cluster_topology *t,
			   struct field_errors *errs);

/* The place of label among t's levels, or -1. */
int cluster_topology_index(const struct cluster_topology *t, const char *label);

#endif
