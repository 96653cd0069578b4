/*
 * api/dra_class: which devices a DeviceClass selects, from the equalities
 * of its CEL selectors, with NVIDIA's classes (k8s-dra-driver-gpu's
 * deviceclass-*.yaml) as the cases that matter.
 */
#include <criterion/criterion.h>

#include "api/dra_class.h"
#include "base/err.h"

#include <jansson.h>
#include <string.h>

static json_t *device_class(const char *name, const char *expression, const char *ext)
{
	return json_pack("{s:{s:s},s:{s:s?,s:[{s:{s:s}}]}}", "metadata", "name", name, "spec",
			 "extendedResourceName", ext, "selectors", "cel", "expression", expression);
}

/* A device as NVIDIA's GPU plugin publishes it: type and productName in its driver's domain. */
static json_t *device(const char *type, const char *product)
{
	return json_pack("{s:s,s:{s:{s:s},s:{s:s},s:{s:i}}}", "name", "gpu-0", "attributes",
			 "type", "string", type, "productName", "string", product,
			 "gpu.nvidia.com/index", "int", 0);
}

static bool selects(const char *expression, const char *driver, const json_t *dev)
{
	json_t *obj = device_class("c", expression, NULL);
	struct dra_class c;
	bool yes;

	cr_assert_eq(dra_class_parse(obj, &c), 0);
	yes = dra_class_selects(&c, driver, dev);
	dra_class_release(&c);
	json_decref(obj);
	return yes;
}

Test(dra_class, nvidias_gpu_class_selects_its_gpus_and_not_its_mig_devices)
{
	json_t *obj = device_class("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com' && "
				   "device.attributes['gpu.nvidia.com'].type == 'gpu'",
				   "nvidia.com/gpu");
	json_t *gpu = device("gpu", "NVIDIA H100 80GB HBM3"), *mig = device("mig", "x");
	struct dra_class c;

	cr_assert_eq(dra_class_parse(obj, &c), 0);
	cr_assert_str_eq(c.name, "gpu.nvidia.com");
	cr_assert_str_eq(c.extended_resource_name, "nvidia.com/gpu");
	cr_assert_eq(c.n_terms, 2);
	cr_assert(dra_class_selects(&c, "gpu.nvidia.com", gpu));
	cr_assert_not(dra_class_selects(&c, "gpu.nvidia.com", mig));
	cr_assert_not(dra_class_selects(&c, "gpu.example.com", gpu), "another driver");
	cr_assert(dra_class_is_gpu(&c));
	dra_class_release(&c);
	json_decref(obj);
	json_decref(gpu);
	json_decref(mig);
}

Test(dra_class, attributes_are_found_qualified_or_in_the_drivers_domain_and_by_type)
{
	json_t *gpu = device("gpu", "NVIDIA H100 80GB HBM3");

	cr_assert(selects("device.attributes[\"gpu.nvidia.com\"]['productName'] == "
			  "\"NVIDIA H100 80GB HBM3\"", "gpu.nvidia.com", gpu));
	cr_assert(selects("device.attributes['gpu.nvidia.com'].index == 0", "gpu.nvidia.com", gpu),
		  "a qualified key");
	cr_assert_not(selects("device.attributes['gpu.nvidia.com'].index == 1", "gpu.nvidia.com",
			      gpu));
	cr_assert_not(selects("device.attributes['gpu.nvidia.com'].index == '0'", "gpu.nvidia.com",
			      gpu), "a string is not an int");
	cr_assert_not(selects("device.attributes['other.example.com'].type == 'gpu'",
			      "gpu.nvidia.com", gpu), "another domain's key is not the driver's");
	cr_assert_not(selects("device.attributes['gpu.nvidia.com'].missing == true",
			      "gpu.nvidia.com", gpu));
	cr_assert(selects("'gpu' == device.attributes['gpu.nvidia.com'].type", "gpu.nvidia.com", gpu),
		  "the literal on the left");
	json_decref(gpu);
}

/* What is not an equality is taken to hold; what is not a conjunction is ignored whole. */
Test(dra_class, other_conjuncts_hold_and_disjunctions_are_not_read)
{
	json_t *gpu = device("gpu", "NVIDIA H100 80GB HBM3");

	cr_assert(selects("device.driver == 'gpu.nvidia.com' && "
			  "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
			  "gpu.nvidia.com", gpu));
	cr_assert_not(selects("(device.driver == 'gpu.nvidia.com' && (device.attributes"
			      "['gpu.nvidia.com'].type == 'mig'))", "gpu.nvidia.com", gpu),
		      "parentheses are looked into");
	cr_assert(selects("device.driver == 'x' || device.driver == 'gpu.nvidia.com'",
			  "gpu.nvidia.com", gpu));
	cr_assert(selects("device.driver == 'x' ? true : false", "gpu.nvidia.com", gpu));
	cr_assert(selects("!(device.driver == 'x')", "gpu.nvidia.com", gpu));
	cr_assert(selects("device.driver != 'gpu.nvidia.com'", "gpu.nvidia.com", gpu));
	cr_assert_not(selects("device.driver == 'a&&b'", "gpu.nvidia.com", gpu),
		      "&& in a string splits nothing");
	cr_assert(selects("device.driver == 'gpu.nvidia.com' == true", "gpu.nvidia.com", gpu));
	cr_assert(selects("", "gpu.nvidia.com", gpu));
	json_decref(gpu);
}

Test(dra_class, gpu_classes_are_those_of_a_gpu_extended_resource_or_named_gpu)
{
	static const struct { const char *name, *ext; bool gpu; } cases[] = {
		{ "gpu.nvidia.com", NULL, true },
		{ "gpu.example.com", NULL, true },
		{ "h100s", "nvidia.com/gpu", true },
		{ "mig.nvidia.com", NULL, false },
		{ "vfio.gpu.nvidia.com", NULL, false },
		{ "compute-domain-default-channel.nvidia.com", NULL, false },
		{ "mig-1g", "nvidia.com/mig-1g.10gb", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *obj = device_class(cases[i].name, "true", cases[i].ext);
		struct dra_class c;

		cr_assert_eq(dra_class_parse(obj, &c), 0);
		cr_assert_eq(dra_class_is_gpu(&c), cases[i].gpu, "%s", cases[i].name);
		dra_class_release(&c);
		json_decref(obj);
	}
}

Test(dra_class, a_class_without_a_name_is_refused_and_odd_text_never_overreads)
{
	static const char *const odd[] = {
		"device.driver == '", "device.driver == 'a\\", "((((", "))&&((", "device.",
		"device.attributes[", "device.attributes['d'].", "device.driver == '''x'''",
		"device.driver == 99999999999999999999", "device.driver == -",
		"device.attributes['d']['n'] == 'a\\n'",
	};
	json_t *obj = json_pack("{s:{}}", "spec"), *gpu = device("gpu", "p");
	struct dra_class c;

	cr_assert_eq(dra_class_parse(obj, &c), CADRE_EINVAL);
	dra_class_release(&c);
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		cr_assert(selects(odd[i], "gpu.nvidia.com", gpu), "%s", odd[i]);
	json_decref(obj);
	json_decref(gpu);
}
