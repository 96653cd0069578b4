/*
 * kinds.h - the REST descriptors of cadre's own kinds (TrainingJob and
 * Volume, named in api/kinds.h) for the controller's kube/ client.
 *
 * kube/ knows only Kubernetes' own resources; the controller includes this
 * to reach cadre's (the CLI declares the same in cli/kube.h). Constant
 * data, one copy per translation unit that includes it (nothing compares
 * their addresses).
 */
#ifndef CADRE_KINDS_H
#define CADRE_KINDS_H

#include "api/kinds.h"
#include "kube/resource.h"

static const struct kube_resource kube_resource_trainingjobs = CADRE_RESOURCE_TRAININGJOBS;
static const struct kube_resource kube_resource_volumes = CADRE_RESOURCE_VOLUMES;
static const struct kube_resource kube_resource_clustertopologies =
	CADRE_RESOURCE_CLUSTERTOPOLOGIES;

#endif
