/*
 * spec.podTemplate.spec.resourceClaims and spec.resourceClaimsPerNode: the
 * DRA claims a job's pods make besides its accelerators (docs/dra.md).
 */
#include "api/decode.h"
#include "api/dra.h"
#include "api/name.h"
#include "api/trainingjob.h"

#include <stdio.h>
#include <string.h>

/* Whether name is one cadre gives a claim of its own (the accelerators, the channel). */
static bool reserved(const char *name)
{
	return !strcmp(name, DRA_CLAIM_NAME) || !strcmp(name, DRA_CHANNEL_CLAIM_NAME);
}

/*
 * One list's entries: objects of a DNS-label name, unique across both
 * lists (seen), naming a claim or a template (only a template when
 * per_node). Returns how many it read.
 */
static size_t validate_list(struct decoder *d, const json_t *list, const char *base,
			    bool per_node, json_t *seen)
{
	const char *allowed_why = per_node ?
		"an entry has only name and resourceClaimTemplateName" :
		"an entry has only name and one of resourceClaimName, resourceClaimTemplateName";
	static const char *const keys[] = { "name", "resourceClaimName",
					    "resourceClaimTemplateName", NULL };
	static const char *const per_node_keys[] = { "name", "resourceClaimTemplateName", NULL };
	char path[128];
	json_t *item;
	size_t i;

	json_array_foreach(list, i, item) {
		const char *name, *claim, *tmpl;

		snprintf(path, sizeof(path), "%s[%zu]", base, i);
		if (!json_is_object(item)) {
			decode_fail(d, path, "must be an object");
			continue;
		}
		decode_only_keys(d, item, path, per_node ? per_node_keys : keys, allowed_why);
		name = json_string_value(json_object_get(item, "name"));
		claim = json_string_value(json_object_get(item, "resourceClaimName"));
		tmpl = json_string_value(json_object_get(item, "resourceClaimTemplateName"));
		if (!name || !name_is_dns1123_label(name))
			decode_fail(d, path, "name must be a DNS label (lower case, at most 63)");
		else if (reserved(name))
			decode_fail(d, path, "name %s is cadre's own claim (accelerators through "
				    "DRA, the ComputeDomain channel): choose another", name);
		else if (json_object_get(seen, name))
			decode_fail(d, path, "name %s is claimed twice", name);
		else
			json_object_set_new(seen, name, json_true());
		if (!!claim == !!tmpl)
			decode_fail(d, path, per_node ? "resourceClaimTemplateName is required" :
				    "give one of resourceClaimName and resourceClaimTemplateName");
		else if (!name_is_dns1123_subdomain(claim ? claim : tmpl))
			decode_fail(d, path, "%s must name a %s (a DNS subdomain)",
				    claim ? "resourceClaimName" : "resourceClaimTemplateName",
				    claim ? "ResourceClaim" : "ResourceClaimTemplate");
	}
	return json_array_size(list);
}

void tj_validate_claims(struct decoder *d, const struct tj_spec *s)
{
	json_t *seen = json_object();
	size_t n = 0;

	if (!seen) {
		decode_nomem(d);
		return;
	}
	if (s->pod_template.resource_claims)
		n += validate_list(d, s->pod_template.resource_claims,
				   "spec.podTemplate.spec.resourceClaims", false, seen);
	if (s->resource_claims_per_node)
		n += validate_list(d, s->resource_claims_per_node, "spec.resourceClaimsPerNode",
				   true, seen);
	/*
	 * One ComputeDomain is one NVLink domain: a gang split across topology
	 * domains (a preference, or segments) cannot share it.
	 */
	if (s->compute_domain.set && s->topology.set && (!s->topology.required ||
							 s->topology.has_segment))
		decode_fail(d, "spec.topology", "with spec.computeDomain every rank shares one "
			    "NVLink domain: give topology.required (the level of that domain), "
			    "without preferred-only placement or segments");
	/* Room is kept for cadre's two: the accelerators and the channel. */
	if (n + 2 > TJ_MAX_RESOURCE_CLAIMS)
		decode_fail(d, "spec.resourceClaimsPerNode", "a pod may have at most %d claims; "
			    "these ask for %zu and cadre keeps 2", TJ_MAX_RESOURCE_CLAIMS, n);
	json_decref(seen);
}
