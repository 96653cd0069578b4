/*
 * kinds.h - where cadre's own kinds live in the API: the REST descriptors
 * of TrainingJob and Volume (cadre.dev/v1alpha1) for the kube/ client.
 *
 * kube/ knows only Kubernetes' own resources; the controller and the CLI
 * include this to reach cadre's. Constant data, one copy per translation
 * unit that includes it (nothing compares their addresses).
 */
#ifndef CADRE_KINDS_H
#define CADRE_KINDS_H

#include "api/labels.h"
#include "kube/resource.h"

static const struct kube_resource kube_resource_trainingjobs = {
	CADRE_GROUP, CADRE_GROUP_VERSION, CADRE_API_VERSION, "trainingjobs", "TrainingJob", true };
static const struct kube_resource kube_resource_volumes = {
	CADRE_GROUP, CADRE_GROUP_VERSION, CADRE_API_VERSION, "volumes", "Volume", true };

#endif
