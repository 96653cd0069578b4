/*
 * Accelerators through Dynamic Resource Allocation, the job's side
 * (docs/dra.md): the attribute and selector a claim asks with, the
 * Partition's deviceClassName and the controller's flags, the
 * ResourceClaimTemplate and ComputeDomain a job gets, and the claims its
 * pods make.
 */
#include <criterion/criterion.h>

#include "api/dra.h"
#include "api/fielderr.h"
#include "api/partition.h"
#include "api/trainingjob.h"
#include "base/buf.h"
#include "base/err.h"
#include "controller/build/build.h"
#include "controller/options.h"

#define INPUTS CADRE_SOURCE_DIR "/unit/testdata/golden/inputs"

TestSuite(dra);

Test(dra, an_attribute_is_a_name_in_the_drivers_domain_or_a_domain_and_a_name)
{
	cr_assert(dra_attribute_valid("productName"));
	cr_assert(dra_attribute_valid("gpu.nvidia.com/productName"));
	cr_assert(dra_attribute_valid("example.com/model_2"));
	cr_assert_not(dra_attribute_valid(NULL));
	cr_assert_not(dra_attribute_valid(""));
	cr_assert_not(dra_attribute_valid("product name"));
	cr_assert_not(dra_attribute_valid("2product"));
	cr_assert_not(dra_attribute_valid("gpu.nvidia.com/"));
	cr_assert_not(dra_attribute_valid("/productName"));
	cr_assert_not(dra_attribute_valid("Gpu.Nvidia.com/productName"));
	cr_assert_not(dra_attribute_valid("example.com/model-2"), "not a C identifier");
	cr_assert_not(dra_attribute_valid("a']||true||x['"), "nothing that could leave its quotes");
	cr_assert_not(dra_attribute_valid("abcdefghijabcdefghijabcdefghijabc"), "33 bytes");
}

Test(dra, the_selector_asks_for_the_type_inside_the_attribute_case_aside)
{
	struct buf b;

	buf_init(&b, 1024);
	cr_assert_eq(dra_type_selector("productName", "H100", &b), 0);
	cr_assert_str_eq(buf_str(&b),
			 "'productName' in device.attributes[device.driver] && "
			 "device.attributes[device.driver]['productName'].lowerAscii()"
			 ".contains('h100')");
	buf_reset(&b);
	cr_assert_eq(dra_type_selector("example.com/model", "A100-80GB", &b), 0);
	cr_assert_str_eq(buf_str(&b),
			 "'model' in device.attributes['example.com'] && "
			 "device.attributes['example.com']['model'].lowerAscii()"
			 ".contains('a100-80gb')");
	buf_reset(&b);
	cr_assert_eq(dra_type_selector("productName", "H100')||('", &b), CADRE_EINVAL);
	cr_assert_eq(dra_type_selector("bad name", "H100", &b), CADRE_EINVAL);
	cr_assert_eq(dra_type_selector("productName", "", &b), CADRE_EINVAL);
	buf_release(&b);
}

Test(dra, a_devices_attribute_is_read_under_its_own_or_its_drivers_domain)
{
	json_t *attrs = json_pack("{s:{s:s}, s:{s:s}, s:{s:i}}",
				  "productName", "string", "NVIDIA H100 80GB HBM3",
				  "example.com/model", "string", "X1",
				  "gpu.nvidia.com/index", "int", 3);
	json_t *qualified = json_pack("{s:{s:s}}", "gpu.nvidia.com/productName", "string", "B200");

	cr_assert_str_eq(dra_device_attribute(attrs, "gpu.nvidia.com", "productName"),
			 "NVIDIA H100 80GB HBM3");
	cr_assert_str_eq(dra_device_attribute(attrs, "gpu.nvidia.com",
					      "gpu.nvidia.com/productName"),
			 "NVIDIA H100 80GB HBM3", "an unqualified key is in the driver's domain");
	cr_assert_str_eq(dra_device_attribute(qualified, "gpu.nvidia.com", "productName"), "B200");
	cr_assert_str_eq(dra_device_attribute(attrs, "gpu.nvidia.com", "example.com/model"), "X1");
	cr_assert_null(dra_device_attribute(attrs, "other.example.com", "example.com/productName"));
	cr_assert_null(dra_device_attribute(attrs, "gpu.nvidia.com", "index"), "not a string");
	cr_assert_null(dra_device_attribute(attrs, "gpu.nvidia.com", "missing"));
	cr_assert_null(dra_device_attribute(NULL, "gpu.nvidia.com", "productName"));
	json_decref(attrs);
	json_decref(qualified);
}

static const char *no_env(const char *name)
{
	(void)name;
	return NULL;
}

Test(dra, the_controller_flags_name_a_class_and_an_attribute_and_refuse_what_is_neither)
{
	char *defaults[] = { "cadre-controller", NULL };
	char *set[] = { "cadre-controller", "--device-class-name=gpu.nvidia.com",
			"--device-attribute=example.com/model", NULL };
	char *bad_attr[] = { "cadre-controller", "--device-attribute=a'b", NULL };
	char *bad_class[] = { "cadre-controller", "--device-class-name=GPU_class", NULL };
	struct options o;
	struct buf err;

	buf_init(&err, 1024);
	cr_assert_eq(options_parse(&o, 1, defaults, no_env, &err), 0);
	cr_assert_null(o.device_class_name);
	cr_assert_str_eq(o.device_attribute, "productName");
	options_release(&o);
	cr_assert_eq(options_parse(&o, 3, set, no_env, &err), 0);
	cr_assert_str_eq(o.device_class_name, "gpu.nvidia.com");
	cr_assert_str_eq(o.device_attribute, "example.com/model");
	options_release(&o);
	cr_assert_eq(options_parse(&o, 2, bad_attr, no_env, &err), CADRE_EINVAL);
	cr_assert(strstr(buf_str(&err), "--device-attribute"), "%s", buf_str(&err));
	options_release(&o);
	buf_reset(&err);
	cr_assert_eq(options_parse(&o, 2, bad_class, no_env, &err), CADRE_EINVAL);
	cr_assert(strstr(buf_str(&err), "--device-class-name"), "%s", buf_str(&err));
	options_release(&o);
	buf_release(&err);
}

static int parse_partition(const char *text, struct partition *p, struct buf *msg)
{
	struct field_errors errs;
	json_error_t e;
	json_t *obj = json_loads(text, 0, &e);
	int ret;

	cr_assert_not_null(obj, "%s", e.text);
	field_errors_init(&errs);
	ret = partition_parse(obj, p, &errs);
	field_errors_join(&errs, msg);
	field_errors_release(&errs);
	json_decref(obj);
	return ret;
}

Test(dra, a_partitions_device_class_reaches_its_jobs_unless_one_is_set_already)
{
	struct partition p;
	struct tj_spec spec = { 0 };
	struct buf msg;

	buf_init(&msg, 1024);
	cr_assert_eq(parse_partition("{\"metadata\":{\"name\":\"dra\"},"
				     "\"spec\":{\"deviceClassName\":\"gpu.nvidia.com\"}}", &p, &msg),
		     0, "%s", buf_str(&msg));
	cr_assert_str_eq(p.spec.device_class_name, "gpu.nvidia.com");
	cr_assert_eq(partition_apply(&p, &spec), 0);
	cr_assert_str_eq(spec.resources.device_class, "gpu.nvidia.com");
	free(spec.resources.device_class);
	free(spec.partition);
	spec = (struct tj_spec){ 0 };
	spec.resources.device_class = strdup("mig.nvidia.com");
	cr_assert_eq(partition_apply(&p, &spec), 0);
	cr_assert_str_eq(spec.resources.device_class, "mig.nvidia.com");
	free(spec.resources.device_class);
	free(spec.partition);
	partition_release(&p);
	buf_reset(&msg);
	cr_assert_eq(parse_partition("{\"metadata\":{\"name\":\"dra\"},"
				     "\"spec\":{\"deviceClassName\":\"GPU class\"}}", &p, &msg),
		     CADRE_EINVAL);
	cr_assert(strstr(buf_str(&msg), "spec.deviceClassName"), "%s", buf_str(&msg));
	partition_release(&p);
	buf_release(&msg);
}

/* inputs/llama-pretrain.json (H100:8 on 2 nodes), edited by edit, parsed and checked. */
static int load_job(void (*edit)(json_t *), struct trainingjob *tj, struct buf *msg)
{
	struct field_errors errs;
	json_error_t e;
	json_t *obj = json_load_file(INPUTS "/llama-pretrain.json", 0, &e);
	int ret;

	cr_assert_not_null(obj, "%s", e.text);
	if (edit)
		edit(obj);
	field_errors_init(&errs);
	ret = tj_parse(obj, tj, &errs);
	if (!ret)
		ret = tj_validate(tj, &errs);
	field_errors_join(&errs, msg);
	field_errors_release(&errs);
	json_decref(obj);
	return ret;
}

static void load_ok(void (*edit)(json_t *), struct trainingjob *tj)
{
	struct buf msg;

	buf_init(&msg, 4096);
	cr_assert_eq(load_job(edit, tj, &msg), 0, "%s", buf_str(&msg));
	buf_release(&msg);
}

static json_t *pod_in(const struct trainingjob *tj, int rank, int attempt, const char *node,
		      enum gang_mode mode)
{
	static const char *const h100[] = { "NVIDIA-H100-80GB-HBM3" };
	struct build_opts opts = { .mode = mode, .node = node,
				   .accelerator_label = "nvidia.com/gpu.product",
				   .label_values = h100, .n_label_values = 1 };
	static const char *const claims[] = { "shared-checkpoints" };
	struct buf err;
	json_t *pod = NULL;

	opts.claim_names = claims;
	opts.n_claim_names = 1;
	buf_init(&err, 4096);
	cr_assert_eq(build_pod(tj, rank, attempt, &opts, &pod, &err), 0, "%s", buf_str(&err));
	buf_release(&err);
	return pod;
}

static json_t *pod_on(const struct trainingjob *tj, int rank, int attempt, const char *node)
{
	return pod_in(tj, rank, attempt, node, GANG_BUILTIN);
}

static json_t *pod_of(const struct trainingjob *tj, int rank, int attempt)
{
	return pod_on(tj, rank, attempt, "dra-node-1");
}

static json_t *main_container(json_t *pod)
{
	return json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
}

Test(dra, a_dra_jobs_pods_claim_the_jobs_template_and_ask_for_no_extended_resource)
{
	struct trainingjob tj;
	json_t *pod, *resources, *want;
	char *affinity;

	load_ok(NULL, &tj);
	tj.spec.resources.device_class = strdup("gpu.nvidia.com");
	pod = pod_of(&tj, 1, 0);
	want = json_pack("[{s:s, s:s}]", "name", "accelerators",
			 "resourceClaimTemplateName", "llama-pretrain-accelerators");
	cr_assert(json_equal(json_object_get(json_object_get(pod, "spec"), "resourceClaims"),
			     want));
	json_decref(want);
	resources = json_object_get(main_container(pod), "resources");
	want = json_pack("[{s:s}]", "name", "accelerators");
	cr_assert(json_equal(json_object_get(resources, "claims"), want));
	json_decref(want);
	cr_assert_null(json_object_get(json_object_get(resources, "requests"), "nvidia.com/gpu"));
	cr_assert_null(json_object_get(json_object_get(resources, "limits"), "nvidia.com/gpu"));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(resources, "requests"),
							   "cpu")), "32");
	affinity = json_dumps(json_object_get(json_object_get(pod, "spec"), "affinity"), 0);
	cr_assert(strstr(affinity, "dra-node-1"), "still pinned: %s", affinity);
	cr_assert_null(strstr(affinity, "gpu.product"), "the claim picks the type: %s", affinity);
	free(affinity);
	json_decref(pod);
	/* Unpinned (native, Kueue, none), it has no affinity at all: an empty term matches no node. */
	pod = pod_on(&tj, 1, 0, NULL);
	cr_assert_null(json_object_get(json_object_get(pod, "spec"), "affinity"));
	json_decref(pod);
	/* The same job from a device plugin: the extended resource, no claim. */
	free(tj.spec.resources.device_class);
	tj.spec.resources.device_class = NULL;
	pod = pod_of(&tj, 1, 0);
	resources = json_object_get(main_container(pod), "resources");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(resources, "limits"),
							   "nvidia.com/gpu")), "8");
	cr_assert_null(json_object_get(json_object_get(pod, "spec"), "resourceClaims"));
	cr_assert_null(json_object_get(resources, "claims"));
	json_decref(pod);
	tj_release(&tj);
}

/* Kueue (whose DRA support counts the claims), native and none: the same claims, unpinned. */
Test(dra, every_gang_mode_passes_the_claims_to_kube_scheduler)
{
	static const enum gang_mode modes[] = { GANG_KUEUE, GANG_NATIVE, GANG_NONE };
	struct trainingjob tj;

	load_ok(NULL, &tj);
	tj.spec.resources.device_class = strdup("gpu.nvidia.com");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		json_t *pod = pod_in(&tj, 0, 0, NULL, modes[i]);
		json_t *spec = json_object_get(pod, "spec");
		json_t *resources = json_object_get(main_container(pod), "resources");

		cr_assert_str_eq(json_string_value(json_object_get(json_array_get(
			json_object_get(spec, "resourceClaims"), 0), "resourceClaimTemplateName")),
			"llama-pretrain-accelerators", "mode %s", gang_mode_name(modes[i]));
		cr_assert_eq(json_array_size(json_object_get(resources, "claims")), 1);
		cr_assert_null(json_object_get(json_object_get(resources, "requests"),
					       "nvidia.com/gpu"));
		cr_assert_null(json_object_get(spec, "affinity"), "mode %s",
			       gang_mode_name(modes[i]));
		json_decref(pod);
	}
	tj_release(&tj);
}

Test(dra, the_jobs_template_asks_for_its_count_of_the_classs_devices_of_its_type)
{
	struct build_opts opts = { .device_attribute = "productName" };
	struct trainingjob tj;
	struct buf err;
	json_t *obj = NULL, *want;

	load_ok(NULL, &tj);
	buf_init(&err, 1024);
	cr_assert_eq(build_claim_template(&tj, &opts, &obj, &err), CADRE_EINVAL,
		     "no DeviceClass, nothing to claim");
	tj.spec.resources.device_class = strdup("gpu.nvidia.com");
	cr_assert_eq(build_claim_template(&tj, &opts, &obj, &err), 0, "%s", buf_str(&err));
	want = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:[{s:s, s:s, s:s, s:s, s:b, s:b}]},"
			 " s:{s:{s:{s:s}}, s:{s:{s:[{s:s, s:{s:s, s:s, s:i, s:[{s:{s:s}}]}}]}}}}",
			 "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaimTemplate",
			 "metadata", "name", "llama-pretrain-accelerators", "namespace", "research",
			 "labels", "cadre.dev/job-name", "llama-pretrain",
			 "ownerReferences", "apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
			 "name", "llama-pretrain", "uid", "3f2c6a0e-8d1b-4c57-9a4e-1b2d3c4e5f60",
			 "controller", 1, "blockOwnerDeletion", 1,
			 "spec", "metadata", "labels", "cadre.dev/job-name", "llama-pretrain",
			 "spec", "devices", "requests", "name", "accelerators",
			 "exactly", "deviceClassName", "gpu.nvidia.com", "allocationMode", "ExactCount",
			 "count", 8, "selectors", "cel", "expression",
			 "'productName' in device.attributes[device.driver] && "
			 "device.attributes[device.driver]['productName'].lowerAscii()"
			 ".contains('h100')");
	cr_assert(json_equal(obj, want), "%s", json_dumps(obj, JSON_SORT_KEYS));
	json_decref(want);
	json_decref(obj);
	buf_release(&err);
	tj_release(&tj);
}

static void add_claims(json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec");

	json_object_set_new(spec, "computeDomain", json_pack("{s:s}", "allocationMode", "All"));
	json_object_set_new(spec, "resourceClaimsPerNode",
			    json_pack("[{s:s, s:s}]", "name", "nic", "resourceClaimTemplateName",
				      "rdma-nic"));
	json_object_set_new(json_object_get(json_object_get(spec, "podTemplate"), "spec") ?
			    json_object_get(json_object_get(spec, "podTemplate"), "spec") :
			    (json_object_set_new(spec, "podTemplate", json_pack("{s:{}}", "spec")),
			     json_object_get(json_object_get(spec, "podTemplate"), "spec")),
			    "resourceClaims",
			    json_pack("[{s:s, s:s}]", "name", "scratch-ssd", "resourceClaimName",
				      "shared-ssd"));
}

Test(dra, cadres_claims_come_first_then_the_jobs_own_each_claimed_by_main)
{
	struct trainingjob tj;
	json_t *pod, *want;

	load_ok(add_claims, &tj);
	tj.spec.resources.device_class = strdup("gpu.nvidia.com");
	cr_assert(tj.spec.compute_domain.set);
	cr_assert(tj.spec.compute_domain.all_channels);
	pod = pod_of(&tj, 0, 3);
	want = json_pack("[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}, {s:s, s:s}]",
			 "name", "accelerators", "resourceClaimTemplateName",
			 "llama-pretrain-accelerators",
			 "name", "compute-domain", "resourceClaimTemplateName",
			 "llama-pretrain-3-cd-channel",
			 "name", "nic", "resourceClaimTemplateName", "rdma-nic",
			 "name", "scratch-ssd", "resourceClaimName", "shared-ssd");
	cr_assert(json_equal(json_object_get(json_object_get(pod, "spec"), "resourceClaims"), want),
		  "%s", json_dumps(json_object_get(json_object_get(pod, "spec"), "resourceClaims"),
				   0));
	json_decref(want);
	want = json_pack("[{s:s}, {s:s}, {s:s}, {s:s}]", "name", "accelerators",
			 "name", "compute-domain", "name", "nic", "name", "scratch-ssd");
	cr_assert(json_equal(json_object_get(json_object_get(main_container(pod), "resources"),
					     "claims"), want));
	json_decref(want);
	json_decref(pod);
	tj_release(&tj);
}

Test(dra, each_attempt_has_a_compute_domain_owned_by_the_job_whose_channel_its_pods_claim)
{
	struct trainingjob tj;
	struct buf err;
	json_t *cd = NULL, *want;

	load_ok(add_claims, &tj);
	buf_init(&err, 1024);
	cr_assert_eq(build_compute_domain(&tj, 3, &cd, &err), 0, "%s", buf_str(&err));
	want = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}, s:[{s:s, s:s, s:s, s:s, s:b, s:b}]},"
			 " s:{s:i, s:{s:{s:s}, s:s}}}",
			 "apiVersion", "resource.nvidia.com/v1beta1", "kind", "ComputeDomain",
			 "metadata", "name", "llama-pretrain-3-cd", "namespace", "research",
			 "labels", "cadre.dev/job-name", "llama-pretrain",
			 "cadre.dev/restart-attempt", "3",
			 "ownerReferences", "apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
			 "name", "llama-pretrain", "uid", "3f2c6a0e-8d1b-4c57-9a4e-1b2d3c4e5f60",
			 "controller", 1, "blockOwnerDeletion", 1,
			 "spec", "numNodes", 0, "channel", "resourceClaimTemplate", "name",
			 "llama-pretrain-3-cd-channel", "allocationMode", "All");
	cr_assert(json_equal(cd, want), "%s", json_dumps(cd, JSON_SORT_KEYS));
	json_decref(want);
	json_decref(cd);
	buf_release(&err);
	tj_release(&tj);
}

static void reserved_name(json_t *obj)
{
	json_object_set_new(json_object_get(obj, "spec"), "resourceClaimsPerNode",
			    json_pack("[{s:s, s:s}]", "name", "accelerators",
				      "resourceClaimTemplateName", "t"));
}

static void both_names(json_t *obj)
{
	json_object_set_new(json_object_get(obj, "spec"), "podTemplate",
			    json_pack("{s:{s:[{s:s, s:s, s:s}]}}", "spec", "resourceClaims",
				      "name", "x", "resourceClaimName", "a",
				      "resourceClaimTemplateName", "b"));
}

static void twice(json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec");

	json_object_set_new(spec, "resourceClaimsPerNode",
			    json_pack("[{s:s, s:s}]", "name", "nic", "resourceClaimTemplateName", "t"));
	json_object_set_new(spec, "podTemplate",
			    json_pack("{s:{s:[{s:s, s:s}]}}", "spec", "resourceClaims",
				      "name", "nic", "resourceClaimName", "c"));
}

static void bad_mode(json_t *obj)
{
	json_object_set_new(json_object_get(obj, "spec"), "computeDomain",
			    json_pack("{s:s}", "allocationMode", "Some"));
}

static void split_domain(json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec");

	json_object_set_new(spec, "computeDomain", json_object());
	json_object_set_new(spec, "topology", json_pack("{s:s}", "preferred", "nvlink-domain"));
}

static void assert_refused(void (*edit)(json_t *), const char *field, const char *words)
{
	struct trainingjob tj;
	struct buf msg;

	buf_init(&msg, 4096);
	cr_assert_neq(load_job(edit, &tj, &msg), 0);
	cr_assert(strstr(buf_str(&msg), field) && strstr(buf_str(&msg), words), "%s",
		  buf_str(&msg));
	tj_release(&tj);
	buf_release(&msg);
}

Test(dra, claims_that_cannot_be_made_are_refused_naming_the_entry)
{
	assert_refused(reserved_name, "spec.resourceClaimsPerNode[0]", "cadre's own");
	assert_refused(both_names, "spec.podTemplate.spec.resourceClaims[0]", "one of");
	assert_refused(twice, "spec.resourceClaimsPerNode[0]", "claimed twice");
	assert_refused(bad_mode, "spec.computeDomain.allocationMode", "Single or All");
	assert_refused(split_domain, "spec.topology", "one NVLink domain");
}
