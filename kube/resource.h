/*
 * resource.h - which REST collection an object lives in, and the URL path
 * to it.
 *
 * A struct kube_resource names a group/version/resource. The descriptors
 * below are Kubernetes' own; any other (a custom resource) is declared the
 * same way by its user (the client serves any resource, it has no per-kind
 * code).
 *
 * Paths follow the API server's layout:
 *   core:   /api/v1[/namespaces/<ns>]/<plural>[/<name>[/<subresource>]]
 *   groups: /apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>[/<sub>]]
 * Path segments and query values are percent-encoded (RFC 3986 unreserved
 * characters pass as they are), so a label selector such as
 * "app.kubernetes.io/name in (a,b)" or a field selector with "!=" arrives intact.
 *
 * Pure functions on caller-owned buffers; thread-safe.
 */
#ifndef CADRE_KUBE_RESOURCE_H
#define CADRE_KUBE_RESOURCE_H

#include <stdbool.h>

#include "base/buf.h"

struct kube_resource {
	const char *group;        /* "" for the core group */
	const char *version;      /* "v1", "v1alpha1" */
	const char *api_version;  /* "v1" or "<group>/<version>", as objects spell it */
	const char *plural;       /* "pods": the path segment */
	const char *kind;         /* "Pod" */
	bool namespaced;
};

extern const struct kube_resource kube_resource_pods;
extern const struct kube_resource kube_resource_services;
extern const struct kube_resource kube_resource_configmaps;
extern const struct kube_resource kube_resource_pvcs;          /* persistentvolumeclaims */
extern const struct kube_resource kube_resource_pvs;           /* persistentvolumes */
extern const struct kube_resource kube_resource_nodes;
extern const struct kube_resource kube_resource_events;        /* events.k8s.io/v1 */
extern const struct kube_resource kube_resource_core_events;   /* core v1 events */
extern const struct kube_resource kube_resource_leases;        /* coordination.k8s.io/v1 */
/* Dynamic Resource Allocation, resource.k8s.io/v1 (GA in 1.34), and NVIDIA's ComputeDomain
 * (its CRD, when installed). */
extern const struct kube_resource kube_resource_deviceclasses;
extern const struct kube_resource kube_resource_resourceslices;
extern const struct kube_resource kube_resource_resourceclaims;
extern const struct kube_resource kube_resource_resourceclaimtemplates;
extern const struct kube_resource kube_resource_computedomains;
/* Kubernetes' own gang scheduling: 1.37 serves v1beta1, 1.36 v1alpha2 (each only if enabled). */
extern const struct kube_resource kube_resource_podgroups_v1beta1;
extern const struct kube_resource kube_resource_podgroups_v1alpha2;

/*
 * Append the path for res to out (which is not reset first).
 *   ns:          namespace, or NULL for all namespaces / cluster-scoped
 *                resources (ignored for cluster-scoped resources)
 *   name:        object name, or NULL for the collection
 *   subresource: "status", or NULL (needs a name)
 *   query:       an already-encoded query string without '?' (build it with
 *                kube_path_query_add), or NULL / "" for none
 * Returns 0, CADRE_EINVAL (subresource without name, empty name or
 * namespace), or the buf error (CADRE_ETOOBIG, CADRE_ENOMEM).
 */
int kube_path(struct buf *out, const struct kube_resource *res, const char *ns,
	      const char *name, const char *subresource, const char *query);

/*
 * Append "key=value" to a query string being built in q, with '&' before it
 * when q is not empty; value is percent-encoded, key is taken as it is (keys
 * are API field names). A NULL value appends nothing and returns 0, so
 * optional parameters can be passed unconditionally.
 * Returns 0, CADRE_ETOOBIG or CADRE_ENOMEM.
 */
int kube_path_query_add(struct buf *q, const char *key, const char *value);

/* Append s percent-encoded (everything but A-Z a-z 0-9 - . _ ~). */
int kube_path_escape(struct buf *out, const char *s);

#endif
