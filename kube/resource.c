#include "kube/resource.h"

#include <string.h>

#include "base/err.h"

const struct kube_resource kube_resource_pods = {
	"", "v1", "v1", "pods", "Pod", true };
const struct kube_resource kube_resource_services = {
	"", "v1", "v1", "services", "Service", true };
const struct kube_resource kube_resource_configmaps = {
	"", "v1", "v1", "configmaps", "ConfigMap", true };
const struct kube_resource kube_resource_pvcs = {
	"", "v1", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true };
const struct kube_resource kube_resource_pvs = {
	"", "v1", "v1", "persistentvolumes", "PersistentVolume", false };
const struct kube_resource kube_resource_nodes = {
	"", "v1", "v1", "nodes", "Node", false };
const struct kube_resource kube_resource_events = {
	"events.k8s.io", "v1", "events.k8s.io/v1", "events", "Event", true };
const struct kube_resource kube_resource_core_events = {
	"", "v1", "v1", "events", "Event", true };
const struct kube_resource kube_resource_leases = {
	"coordination.k8s.io", "v1", "coordination.k8s.io/v1", "leases", "Lease", true };
const struct kube_resource kube_resource_resourceclaimtemplates = {
	"resource.k8s.io", "v1", "resource.k8s.io/v1", "resourceclaimtemplates",
	"ResourceClaimTemplate", true };
const struct kube_resource kube_resource_computedomains = {
	"resource.nvidia.com", "v1beta1", "resource.nvidia.com/v1beta1", "computedomains",
	"ComputeDomain", true };
const struct kube_resource kube_resource_deviceclasses = {
	"resource.k8s.io", "v1", "resource.k8s.io/v1", "deviceclasses", "DeviceClass", false };
const struct kube_resource kube_resource_resourceslices = {
	"resource.k8s.io", "v1", "resource.k8s.io/v1", "resourceslices", "ResourceSlice", false };
const struct kube_resource kube_resource_resourceclaims = {
	"resource.k8s.io", "v1", "resource.k8s.io/v1", "resourceclaims", "ResourceClaim", true };
const struct kube_resource kube_resource_podgroups_v1beta1 = {
	"scheduling.k8s.io", "v1beta1", "scheduling.k8s.io/v1beta1", "podgroups", "PodGroup", true };
const struct kube_resource kube_resource_podgroups_v1alpha2 = {
	"scheduling.k8s.io", "v1alpha2", "scheduling.k8s.io/v1alpha2", "podgroups", "PodGroup",
	true };

static bool unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == '~';
}

int kube_path_escape(struct buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t start = out->len;
	int err = 0;

	for (; *s && !err; s++) {
		unsigned char c = (unsigned char)*s;

		if (unreserved(c)) {
			err = buf_addc(out, (char)c);
		} else {
			char enc[3] = { '%', hex[c >> 4], hex[c & 15] };

			err = buf_add(out, enc, sizeof(enc));
		}
	}
	/* A failed escape leaves out as it was, like every buf call. */
	if (err) {
		out->len = start;
		if (out->data)
			out->data[start] = '\0';
	}
	return err;
}

int kube_path_query_add(struct buf *q, const char *key, const char *value)
{
	size_t start = q->len;
	int err;

	if (!value)
		return 0;
	err = (q->len ? buf_addc(q, '&') : 0);
	if (!err)
		err = buf_adds(q, key);
	if (!err)
		err = buf_addc(q, '=');
	if (!err)
		err = kube_path_escape(q, value);
	if (err) {
		q->len = start;
		if (q->data)
			q->data[start] = '\0';
	}
	return err;
}

/* "/<segment>" with the segment escaped; an empty segment is refused. */
static int add_segment(struct buf *out, const char *segment)
{
	int err;

	if (!*segment)
		return CADRE_EINVAL;
	err = buf_addc(out, '/');
	if (!err)
		err = kube_path_escape(out, segment);
	return err;
}

int kube_path(struct buf *out, const struct kube_resource *res, const char *ns,
	      const char *name, const char *subresource, const char *query)
{
	size_t start = out->len;
	int err;

	if (subresource && !name)
		return CADRE_EINVAL;
	if (res->group[0])
		err = buf_addf(out, "/apis/%s/%s", res->group, res->version);
	else
		err = buf_addf(out, "/api/%s", res->version);
	if (!err && res->namespaced && ns) {
		err = buf_adds(out, "/namespaces");
		if (!err)
			err = add_segment(out, ns);
	}
	if (!err)
		err = buf_addc(out, '/');
	if (!err)
		err = buf_adds(out, res->plural);
	if (!err && name)
		err = add_segment(out, name);
	if (!err && subresource)
		err = add_segment(out, subresource);
	if (!err && query && *query)
		err = buf_addf(out, "?%s", query);
	if (err) {
		out->len = start;
		if (out->data)
			out->data[start] = '\0';
	}
	return err;
}
