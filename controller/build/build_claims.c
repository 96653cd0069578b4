/*
 * build_claims.c - the DRA objects of a job (docs/dra.md): its accelerators'
 * ResourceClaimTemplate, its ComputeDomain per attempt, and the claims each
 * pod makes.
 */
#include "controller/build/build.h"

#include "api/dra.h"
#include "base/buf.h"
#include "base/err.h"

#include <stdio.h>
#include <string.h>

/* NVIDIA's ComputeDomain kind (k8s-dra-driver-gpu api/nvidia.com/resource/v1beta1). */
#define COMPUTE_DOMAIN_API_VERSION "resource.nvidia.com/v1beta1"

bool build_uses_claim_template(const struct trainingjob *job)
{
	const struct tj_resources *r = &job->spec.resources;

	return r->device_class && *r->device_class && r->has_accel && r->accel.count > 0;
}

static int name_into(char *out, size_t size, int n)
{
	return n < 0 || (size_t)n >= size ? CADRE_ETOOBIG : 0;
}

int build_claim_template_name(const char *job, char *out, size_t size)
{
	return name_into(out, size, snprintf(out, size, "%s-accelerators", job));
}

int build_compute_domain_name(const char *job, int attempt, char *out, size_t size)
{
	return name_into(out, size, snprintf(out, size, "%s-%d-cd", job, attempt));
}

/* The channel template NVIDIA's controller makes for a ComputeDomain of name cd. */
static int channel_template_name(const char *cd, char *out, size_t size)
{
	return name_into(out, size, snprintf(out, size, "%s-channel", cd));
}

int build_claim_template(const struct trainingjob *job, const struct build_opts *opts,
			 json_t **out, struct buf *err)
{
	const struct object_meta *meta = &job->meta;
	const char *attribute = opts && opts->device_attribute ? opts->device_attribute :
				DRA_DEFAULT_ATTRIBUTE;
	char name[320];
	json_t *owners = NULL;
	struct buf cel;
	int ret;

	*out = NULL;
	if ((ret = build_check_meta(meta, true, err)))
		return ret;
	if (!build_uses_claim_template(job))
		return build_fail(err, CADRE_EINVAL, "spec.resources.accelerators",
				  "no accelerators through a DeviceClass to claim");
	if (build_claim_template_name(meta->name, name, sizeof(name)))
		return build_fail(err, CADRE_ETOOBIG, "metadata.name", "too long");
	buf_init(&cel, 512);
	ret = dra_type_selector(attribute, job->spec.resources.accel.type, &cel);
	if (ret) {
		buf_release(&cel);
		return ret == CADRE_EINVAL ?
		       build_fail(err, ret, "spec.resources.accelerators",
				  "type %s cannot be matched against attribute %s",
				  job->spec.resources.accel.type, attribute) : ret;
	}
	ret = build_owner_refs(TJ_API_VERSION, TJ_KIND, meta->name, meta->uid, &owners);
	if (ret) {
		buf_release(&cel);
		return ret;
	}
	/*
	 * The claims made from it carry the job's label, so whoever counts a
	 * node's devices can tell the job's claims from everybody else's.
	 */
	*out = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:o},"
			 " s:{s:{s:{s:s}}, s:{s:{s:[{s:s, s:{s:s, s:s, s:i, s:[{s:{s:s}}]}}]}}}}",
			 "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaimTemplate",
			 "metadata", "name", name, "namespace", meta->namespace,
			 "labels", LABEL_JOB_NAME, meta->name, "ownerReferences", owners,
			 "spec", "metadata", "labels", LABEL_JOB_NAME, meta->name,
			 "spec", "devices", "requests", "name", DRA_CLAIM_NAME,
			 "exactly", "deviceClassName", job->spec.resources.device_class,
			 "allocationMode", "ExactCount", "count", job->spec.resources.accel.count,
			 "selectors", "cel", "expression", buf_str(&cel));
	buf_release(&cel);
	return *out ? 0 : CADRE_ENOMEM;
}

int build_compute_domain(const struct trainingjob *job, int attempt, json_t **out,
			 struct buf *err)
{
	const struct object_meta *meta = &job->meta;
	char name[320], channel[352], a[16];
	json_t *owners = NULL;
	int ret;

	*out = NULL;
	if ((ret = build_check_meta(meta, true, err)))
		return ret;
	if (build_compute_domain_name(meta->name, attempt, name, sizeof(name)) ||
	    channel_template_name(name, channel, sizeof(channel)))
		return build_fail(err, CADRE_ETOOBIG, "metadata.name", "too long");
	snprintf(a, sizeof(a), "%d", attempt);
	ret = build_owner_refs(TJ_API_VERSION, TJ_KIND, meta->name, meta->uid, &owners);
	if (ret)
		return ret;
	/* numNodes 0: the driver's IMEX daemons do not gate the pods' start on a count. */
	*out = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}, s:o},"
			 " s:{s:i, s:{s:{s:s}, s:s}}}",
			 "apiVersion", COMPUTE_DOMAIN_API_VERSION, "kind", "ComputeDomain",
			 "metadata", "name", name, "namespace", meta->namespace,
			 "labels", LABEL_JOB_NAME, meta->name, LABEL_RESTART_ATTEMPT, a,
			 "ownerReferences", owners,
			 "spec", "numNodes", 0, "channel", "resourceClaimTemplate", "name", channel,
			 "allocationMode", job->spec.compute_domain.all_channels ? "All" : "Single");
	return *out ? 0 : CADRE_ENOMEM;
}

/* Append {name, resourceClaimTemplateName: tmpl} to claims and {name} to container. */
static int add_claim(json_t *claims, json_t *container, const json_t *entry)
{
	const char *name = json_string_value(json_object_get(entry, "name"));

	if (!name)
		return 0;
	if (json_array_append(claims, (json_t *)entry) ||
	    json_array_append_new(container, json_pack("{s:s}", "name", name)))
		return CADRE_ENOMEM;
	return 0;
}

static int add_template_claim(json_t *claims, json_t *container, const char *name,
			      const char *tmpl)
{
	json_t *entry = json_pack("{s:s, s:s}", "name", name, "resourceClaimTemplateName", tmpl);
	int ret = entry ? add_claim(claims, container, entry) : CADRE_ENOMEM;

	json_decref(entry);
	return ret;
}

int build_pod_claims(const struct trainingjob *job, int attempt, json_t **claims,
		     json_t **container)
{
	const json_t *lists[2] = { job->spec.resource_claims_per_node,
				   job->spec.pod_template.resource_claims };
	json_t *c = json_array(), *k = json_array(), *entry;
	char name[320], channel[352];
	int ret = c && k ? 0 : CADRE_ENOMEM;
	size_t i;

	if (!ret && build_uses_claim_template(job)) {
		ret = build_claim_template_name(job->meta.name, name, sizeof(name));
		ret = ret ? ret : add_template_claim(c, k, DRA_CLAIM_NAME, name);
	}
	if (!ret && job->spec.compute_domain.set) {
		ret = build_compute_domain_name(job->meta.name, attempt, name, sizeof(name));
		ret = ret ? ret : channel_template_name(name, channel, sizeof(channel));
		ret = ret ? ret : add_template_claim(c, k, DRA_CHANNEL_CLAIM_NAME, channel);
	}
	for (size_t l = 0; !ret && l < 2; l++)
		json_array_foreach(lists[l], i, entry)
			if (!ret)
				ret = add_claim(c, k, entry);
	if (ret || !json_array_size(c)) {
		json_decref(c);
		json_decref(k);
		c = k = NULL;
	}
	*claims = c;
	*container = k;
	return ret == CADRE_ETOOBIG ? CADRE_EINVAL : ret;
}
