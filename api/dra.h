/*
 * dra.h - accelerators through Dynamic Resource Allocation (resource.k8s.io/v1,
 * docs/dra.md): which device attribute names a device's type, the CEL
 * selector a job's claim template asks with, and reading that attribute
 * back from a ResourceSlice's device.
 *
 * An attribute is named as the controller's --device-attribute takes it:
 * "NAME" (a C identifier of at most 32 bytes) in the domain of the device's
 * own driver, as NVIDIA's driver publishes "productName"; or "DOMAIN/NAME"
 * for another domain. A device has the type asked for when the attribute's
 * string holds the type, case aside: "H100" in "NVIDIA H100 80GB HBM3", as
 * accel_matches_label matches a node's label.
 *
 * Pure functions; thread-safe.
 */
#ifndef CADRE_API_DRA_H
#define CADRE_API_DRA_H

#include <jansson.h>
#include <stdbool.h>

struct buf;

#define DRA_DEFAULT_ATTRIBUTE "productName"
/* The name of the accelerators' entry in a pod's spec.resourceClaims, and of their request. */
#define DRA_CLAIM_NAME "accelerators"
/* The entry of a job's ComputeDomain channel in a pod's spec.resourceClaims. */
#define DRA_CHANNEL_CLAIM_NAME "compute-domain"

/* Whether attr is "NAME" or "DOMAIN/NAME" as above. */
bool dra_attribute_valid(const char *attr);

/*
 * The CEL expression of a device whose attribute holds type (an
 * accel_parse type; case aside) into out: false, never an error, for a
 * device without the attribute. 0, CADRE_EINVAL for an invalid attribute
 * or a type with a character outside [A-Za-z0-9._-], or an error of buf_add.
 */
int dra_type_selector(const char *attribute, const char *type, struct buf *out);

/*
 * The string value of attribute on a ResourceSlice device published by
 * driver: its "attributes" object (borrowed), keyed by "NAME" (the driver's
 * domain) or "DOMAIN/NAME". NULL when it has none, or not a string.
 */
const char *dra_device_attribute(const json_t *attributes, const char *driver,
				 const char *attribute);

#endif
