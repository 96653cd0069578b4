/*
 * pod_trim.h - what the pod caches keep of a pod, and how they index it.
 *
 * The controller watches every pod in the cluster to count capacity, and its
 * own pods to reconcile them; keeping each whole would cost tens of KiB a pod.
 * These trims (store_options.trim, kube/store.h) keep what the reconcilers and
 * the capacity model read. Pure; thread-safe. Each returns a new reference, or
 * NULL when out of memory.
 */
#ifndef CADRE_POD_TRIM_H
#define CADRE_POD_TRIM_H

#include <jansson.h>

#include "api/labels.h"

/*
 * Trim for pods (pass as store_options.trim; arg unused).
 *
 * cadre's own pods (with LABEL_JOB_NAME) keep what its reconcilers read,
 * in the pod's own shape, and nothing else:
 *   metadata: name, namespace, uid, resourceVersion, labels, deletionTimestamp
 *   spec: nodeName, schedulingGates, containers[]: name, resources.requests
 *   status: phase, podIP, reason, message; conditions[] of type
 *     PodScheduled, Ready and DisruptionTarget: type, status, reason,
 *     message; containerStatuses[]: name, state.waiting, state.terminated,
 *     allocatedResourcesStatus (devices' health, KEP-4680)
 *
 * Every other pod is kept as a flat summary, enough to count what it uses:
 *   {"namespace": "...", "name": "...", "nodeName": "..." (when bound),
 *    "pinnedNode": "..." (not bound, and pinned: pod_pinned_node),
 *    "phase": "...", "requests": {"cpu": "1500m", "memory": "1073741824",
 *    "nvidia.com/gpu": "8", ...}, "schedulingGates": true (when gated)}
 * requests is a ResourceList of the pod's effective requests as the
 * scheduler counts them - the larger of the containers' sum and each init
 * container's need (restartable sidecars included), plus spec.overhead - in
 * canonical quantities ("<n>" when whole, else "<n>m"); zero amounts and an
 * empty list are left out. A summary has no "metadata" member, which is how
 * to tell it from a whole pod.
 */
json_t *pod_trim(const json_t *pod, void *arg);

/*
 * The one node a pod's required node affinity allows by name (every term
 * has a matchFields {metadata.name In [that node]}, as cadre's built-in
 * gangs and DaemonSets pin their pods), or NULL. Borrowed from spec.
 * Such a pod will take capacity there even before it is bound.
 */
const char *pod_pinned_node(const json_t *spec);

/*
 * Trim every pod to the flat summary above, cadre's own included: for a
 * cache that counts capacity and holds pods that another cache keeps whole.
 */
json_t *pod_trim_summary(const json_t *pod, void *arg);


/* Index pods by "namespace/<value of LABEL_JOB_NAME>" (cadre's pods only). */
int pod_index_job(const json_t *pod, json_t *values, void *arg);

/* Index pods by node name (spec.nodeName, or nodeName of a summary). */
int pod_index_node(const json_t *pod, json_t *values, void *arg);

/*
 * Parse a resource quantity ("500m", "1.5", "64Gi", "2e3") into milli-units
 * with quantity_parse() (api/quantity.h), rounding up as the API server does
 * for MilliValue, but saturating at +-INT64_MAX where quantity_parse refuses
 * a value too big: a pod's requests are counted, never refused.
 * Returns 0 or CADRE_EPARSE.
 */
int pod_trim_quantity_milli(const char *s, long long *milli);

#endif
