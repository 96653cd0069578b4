/*
 * dra_class.h - which ResourceSlice devices a DeviceClass (resource.k8s.io/v1)
 * selects, as far as it can be told without a CEL interpreter: for showing
 * the devices of a class (cadre sinfo, the dashboard), never for allocating.
 *
 * Each of the class's spec.selectors[].cel.expression is read as a
 * conjunction (its top-level "&&"; parentheses around a conjunction are
 * looked into). Two forms of conjunct are understood:
 *   device.driver == 'X'
 *   device.attributes['D'].NAME == V     (also ["D"], and ['D']['NAME'])
 * V a string ('...' or "..."), an integer, true or false; either side of
 * "==" may be the literal. A device is of the class when every understood
 * conjunct of every selector holds; any other conjunct is taken to hold,
 * and so is an expression with a top-level "||" (not a conjunction). The
 * devices found are thus a superset of those the scheduler would allocate
 * from the class; for classes made of driver and attribute equalities,
 * as NVIDIA's are (docs/cli.md), they are the same.
 *
 * Pure; thread-safe on distinct structs.
 */
#ifndef CADRE_API_DRA_CLASS_H
#define CADRE_API_DRA_CLASS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* One understood equality: device.driver (domain NULL), or device.attributes[domain].name. */
struct dra_class_term {
	char *domain;
	char *name;
	json_t *value;  /* a string, an integer or a boolean; owned */
};

struct dra_class {
	char *name;                    /* metadata.name */
	char *extended_resource_name;  /* spec.extendedResourceName; NULL when absent */
	struct dra_class_term *terms;
	size_t n_terms;
};

/*
 * Read the DeviceClass obj (borrowed) into *out, which the caller releases
 * with dra_class_release whatever this returns. 0, CADRE_EINVAL for an
 * object without metadata.name, CADRE_ENOMEM.
 */
int dra_class_parse(const json_t *obj, struct dra_class *out);

void dra_class_release(struct dra_class *c);

/*
 * Whether c selects device (an item of a ResourceSlice's spec.devices,
 * borrowed) of the slice's driver. An attribute is found under
 * "DOMAIN/NAME", or under "NAME" when DOMAIN is the driver's own (as the
 * API server's CEL environment finds it); a missing attribute, or one of
 * another type than the literal, does not hold.
 */
bool dra_class_selects(const struct dra_class *c, const char *driver, const json_t *device);

/*
 * Whether c stands for whole GPUs where no class is named: its
 * extendedResourceName is a "/gpu" resource (NVIDIA's gpu.nvidia.com
 * serves nvidia.com/gpu), or its name's first label is "gpu"
 * (gpu.nvidia.com, gpu.example.com), and so not mig.nvidia.com or
 * vfio.gpu.nvidia.com, nor a ComputeDomain's channels.
 */
bool dra_class_is_gpu(const struct dra_class *c);

#endif
