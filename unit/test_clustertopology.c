/*
 * The cluster's topology levels: the ClusterTopology a cluster ships with
 * is cadre's built-in list, its CRD accepts it, and a job's spec.topology
 * is held to the levels with the field named.
 */
#include <criterion/criterion.h>

#include "api/clustertopology.h"
#include "api/trainingjob.h"
#include "base/buf.h"
#include "base/err.h"
#include "support/oapi.h"
#include "support/ytree.h"

#define MANIFEST CADRE_SOURCE_DIR "/manifests/clustertopology-default.yaml"
#define CRD CADRE_SOURCE_DIR "/crd/clustertopologies.cadre.dev.yaml"

static json_t *load_json(const char *path)
{
	struct ytree *t = NULL;
	json_t *obj;

	cr_assert_eq(ytree_load(path, &t), 0, "%s", path);
	obj = oapi_json_from_yaml(t);
	ytree_free(t);
	cr_assert_not_null(obj);
	return obj;
}

Test(clustertopology, the_shipped_default_is_the_builtin_list_and_its_crd_accepts_it)
{
	json_t *obj = load_json(MANIFEST);
	struct cluster_topology t;
	struct field_errors errs;
	struct buf why;

	buf_init(&why, 1024);
	cr_assert_eq(oapi_validate(oapi_crd_schema(CRD), obj, &why), 0, "%s", buf_str(&why));
	buf_release(&why);
	field_errors_init(&errs);
	cr_assert_eq(cluster_topology_parse(obj, &t, &errs), 0);
	cr_assert_eq(t.n_levels, cluster_topology_builtin_count);
	for (size_t i = 0; i < t.n_levels; i++) {
		cr_assert_str_eq(t.labels[i], cluster_topology_builtin[i].label, "level %zu", i);
		cr_assert_str_eq(t.names[i], cluster_topology_builtin[i].name, "level %zu", i);
	}
	cr_assert_str_eq(t.source, "ClusterTopology default");
	cluster_topology_release(&t);
	field_errors_release(&errs);
	json_decref(obj);
}

Test(clustertopology, the_crd_refuses_another_name_a_repeated_level_and_a_stray_default)
{
	json_t *obj = load_json(MANIFEST);
	json_t *spec = json_object_get(obj, "spec");
	json_t *levels = json_object_get(spec, "levels");
	struct buf why;

	buf_init(&why, 1024);
	json_object_set_new(json_object_get(obj, "metadata"), "name", json_string("other"));
	cr_assert_gt(oapi_validate(oapi_crd_schema(CRD), obj, &why), 0);
	cr_assert(strstr(buf_str(&why), "named default"), "%s", buf_str(&why));
	json_object_set_new(json_object_get(obj, "metadata"), "name", json_string("default"));
	json_object_set_new(spec, "defaultLevel", json_string("example.com/nowhere"));
	buf_reset(&why);
	cr_assert_gt(oapi_validate(oapi_crd_schema(CRD), obj, &why), 0);
	cr_assert(strstr(buf_str(&why), "spec.defaultLevel"), "%s", buf_str(&why));
	json_array_append(levels, json_array_get(levels, 0));
	json_object_del(spec, "defaultLevel");
	buf_reset(&why);
	cr_assert_gt(oapi_validate(oapi_crd_schema(CRD), obj, &why), 0, "a level given twice");
	buf_release(&why);
	json_decref(obj);
}

Test(clustertopology, parse_names_the_field_of_what_is_wrong)
{
	json_t *obj = json_pack("{s:{s:[{s:s}, {s:s}, {s:s}], s:s}}", "spec", "levels",
				"nodeLabel", "example.com/block", "nodeLabel", "not a label",
				"nodeLabel", "example.com/block", "defaultLevel", "example.com/rack");
	struct cluster_topology t;
	struct field_errors errs;

	field_errors_init(&errs);
	cr_assert_eq(cluster_topology_parse(obj, &t, &errs), CADRE_EINVAL);
	cr_assert_not_null(field_errors_find(&errs, "spec.levels[1].nodeLabel"));
	cr_assert_not_null(field_errors_find(&errs, "spec.levels[2]"));
	cr_assert_not_null(field_errors_find(&errs, "spec.defaultLevel"));
	cluster_topology_release(&t);
	field_errors_release(&errs);
	json_decref(obj);
}

/* spec.topology: its shape in tj_validate, its levels against the cluster's. */
static int job_with(const char *topology_json, struct trainingjob *tj, struct field_errors *errs)
{
	json_t *obj = json_pack("{s:{s:s, s:s, s:s}, s:{s:i, s:s, s:o}}", "metadata", "name",
				"llama", "namespace", "ml", "uid", "u", "spec", "numNodes", 8,
				"run", "x", "topology", json_loads(topology_json, 0, NULL));
	int err = tj_parse(obj, tj, errs);

	json_decref(obj);
	return err ? err : tj_validate(tj, errs);
}

Test(clustertopology, a_jobs_topology_names_levels_of_the_cluster_and_segments_divide_it)
{
	static const char *const levels[] = { "example.com/block", "example.com/rack" };
	struct trainingjob tj;
	struct field_errors errs;

	field_errors_init(&errs);
	cr_assert_eq(job_with("{\"required\":\"example.com/block\",\"segment\":{\"size\":4,"
			      "\"required\":\"example.com/rack\"}}", &tj, &errs), 0);
	cr_assert_eq(tj_topology_check_levels(&tj.spec, levels, 2, "ClusterTopology default",
					      &errs), 0);
	cr_assert_str_eq(tj_topology_level(&tj.spec), "example.com/rack");
	tj_release(&tj);

	cr_assert_eq(job_with("{\"required\":\"example.com/rack\",\"segment\":{\"size\":4,"
			      "\"required\":\"example.com/block\"}}", &tj, &errs), 0);
	cr_assert_eq(tj_topology_check_levels(&tj.spec, levels, 2, "ClusterTopology default",
					      &errs), CADRE_EINVAL);
	cr_assert_not_null(field_errors_find(&errs, "spec.topology.segment.required"));
	tj_release(&tj);
	field_errors_release(&errs);

	field_errors_init(&errs);
	cr_assert_eq(job_with("{\"preferred\":\"example.com/zone\"}", &tj, &errs), 0);
	cr_assert_eq(tj_topology_check_levels(&tj.spec, levels, 2, "ClusterTopology default",
					      &errs), CADRE_EINVAL);
	cr_assert_str_eq(field_errors_find(&errs, "spec.topology.preferred")->message,
			 "\"example.com/zone\" is not a level of ClusterTopology default");
	tj_release(&tj);
	field_errors_release(&errs);

	field_errors_init(&errs);
	cr_assert_eq(job_with("{\"segment\":{\"size\":3,\"required\":\"example.com/rack\"}}",
			      &tj, &errs), CADRE_EINVAL);
	cr_assert_str_eq(field_errors_find(&errs, "spec.topology.segment.size")->message,
			 "must divide numNodes (8) into whole segments");
	tj_release(&tj);
	field_errors_release(&errs);

	field_errors_init(&errs);
	cr_assert_eq(job_with("{}", &tj, &errs), CADRE_EINVAL);
	cr_assert_not_null(field_errors_find(&errs, "spec.topology"));
	tj_release(&tj);
	field_errors_release(&errs);
}
