/*
 * kinds.h - where cadre's own kinds live in the API: the group, version,
 * plural and kind of TrainingJob, Volume, Partition and ClusterTopology
 * (cadre.dev/v1alpha1), as the
 * initialisers of a struct kube_resource (kube/resource.h).
 *
 * api/ and kube/ never include each other, so the descriptors themselves
 * (static const struct kube_resource kube_resource_trainingjobs, ...) are
 * declared below only for a file that has included kube/resource.h, as the
 * controller and the CLI do before this header; api/ itself sees the names
 * alone. The names are here once, so a rename is one edit.
 */
#ifndef CADRE_KINDS_API_H
#define CADRE_KINDS_API_H

#include "api/labels.h"

/* { group, version, apiVersion, plural, kind, namespaced } */
#define CADRE_RESOURCE_TRAININGJOBS \
	{ CADRE_GROUP, CADRE_GROUP_VERSION, CADRE_API_VERSION, "trainingjobs", "TrainingJob", 1 }
#define CADRE_RESOURCE_VOLUMES \
	{ CADRE_GROUP, CADRE_GROUP_VERSION, CADRE_API_VERSION, "volumes", "Volume", 1 }
/* Cluster-scoped (api/partition.h). */
#define CADRE_RESOURCE_PARTITIONS \
	{ CADRE_GROUP, CADRE_GROUP_VERSION, CADRE_API_VERSION, "partitions", "Partition", 0 }
/* Cluster-scoped (api/clustertopology.h). */
#define CADRE_RESOURCE_CLUSTERTOPOLOGIES \
	{ CADRE_GROUP, CADRE_GROUP_VERSION, CADRE_API_VERSION, "clustertopologies", \
	  "ClusterTopology", 0 }

#endif

/* Outside the guard: a later include, after kube/resource.h, still declares them. */
#if defined(CADRE_KUBE_RESOURCE_H) && !defined(CADRE_KINDS_RESOURCES)
#define CADRE_KINDS_RESOURCES
static const struct kube_resource kube_resource_trainingjobs = CADRE_RESOURCE_TRAININGJOBS;
static const struct kube_resource kube_resource_volumes = CADRE_RESOURCE_VOLUMES;
static const struct kube_resource kube_resource_partitions = CADRE_RESOURCE_PARTITIONS;
static const struct kube_resource kube_resource_clustertopologies =
	CADRE_RESOURCE_CLUSTERTOPOLOGIES;
#endif
