/*
 * podenv.h - the environment a built pod's main container gets, as the
 * kubelet assembles it: the job's ConfigMap data (envFrom, built here with
 * build_shared_env) and then the pod's own env, which wins over it. Tests
 * that read a variable read it from here, whichever of the two carries it.
 */
#ifndef CADRE_UNIT_PODENV_H
#define CADRE_UNIT_PODENV_H

#include <jansson.h>

#include "api/trainingjob.h"
#include "controller/build/build.h"

/*
 * A new array of {name, value} (valueFrom entries as the pod has them):
 * the ConfigMap's variables in the order build_shared_env gives them, then
 * the pod's env; a name the pod sets replaces the ConfigMap's in place.
 * Fails the test when the pod takes no ConfigMap by envFrom or the job's
 * shared variables do not build.
 */
json_t *pod_environment(const struct trainingjob *tj, const struct build_opts *opts,
			const json_t *pod);

#endif
