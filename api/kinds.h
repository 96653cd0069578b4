/*
 * kinds.h - where cadre's own kinds live in the API: the group, version,
 * plural and kind of TrainingJob, Volume and ClusterTopology (cadre.dev/v1alpha1), as the
 * initialisers of a struct kube_resource (kube/resource.h).
 *
 * api/ and kube/ never include each other, so the descriptors themselves
 * are declared by the parts that talk to the API server, as kube/resource.h
 * asks of any resource it does not know: the controller in
 * controller/kinds.h, the CLI in cli/kube.h, each as
 *   static const struct kube_resource kube_resource_trainingjobs =
 *           CADRE_RESOURCE_TRAININGJOBS;
 * The names are here once, so a rename is one edit. Only strings.
 */
#ifndef CADRE_KINDS_API_H
#define CADRE_KINDS_API_H

#include "api/labels.h"

/* { group, version, apiVersion, plural, kind, namespaced } */
#define CADRE_RESOURCE_TRAININGJOBS \
	{ CADRE_GROUP, CADRE_GROUP_VERSION, CADRE_API_VERSION, "trainingjobs", "TrainingJob", 1 }
#define CADRE_RESOURCE_VOLUMES \
	{ CADRE_GROUP, CADRE_GROUP_VERSION, CADRE_API_VERSION, "volumes", "Volume", 1 }
#define CADRE_RESOURCE_CLUSTERTOPOLOGIES \
	{ CADRE_GROUP, CADRE_GROUP_VERSION, CADRE_API_VERSION, "clustertopologies", \
	  "ClusterTopology", 0 }

#endif
