/*
 * api/partition.h: a Partition read and checked, the default chosen, a job's
 * partition picked and applied to its spec in memory.
 */
#include <criterion/criterion.h>

#include "api/fielderr.h"
#include "api/partition.h"
#include "api/trainingjob.h"
#include "base/buf.h"
#include "base/err.h"

#include <stdio.h>
#include <string.h>

static void parse_ok(const char *json, struct partition *p)
{
	struct field_errors errs;
	json_error_t jerr;
	json_t *obj = json_loads(json, 0, &jerr);
	struct buf msg;

	cr_assert_not_null(obj, "%s", jerr.text);
	field_errors_init(&errs);
	buf_init(&msg, 4096);
	if (partition_parse(obj, p, &errs)) {
		field_errors_join(&errs, &msg);
		cr_assert_fail("%s", buf_str(&msg));
	}
	buf_release(&msg);
	field_errors_release(&errs);
	json_decref(obj);
}

static void assert_problem(const char *json, const char *want)
{
	struct field_errors errs;
	struct partition p;
	json_t *obj = json_loads(json, 0, NULL);
	struct buf msg;

	cr_assert_not_null(obj);
	field_errors_init(&errs);
	buf_init(&msg, 4096);
	cr_assert_eq(partition_parse(obj, &p, &errs), CADRE_EINVAL, "%s", json);
	field_errors_join(&errs, &msg);
	cr_assert(strstr(buf_str(&msg), want), "\"%s\" not in \"%s\"", want, buf_str(&msg));
	buf_release(&msg);
	partition_release(&p);
	field_errors_release(&errs);
	json_decref(obj);
}

#define GPU "{\"metadata\": {\"name\": \"gpu\", \"creationTimestamp\": \"2026-01-01T00:00:00Z\"}, " \
	    "\"spec\": {\"default\": true, \"nodeSelector\": {\"pool\": \"gpu\"}, " \
	    "\"tolerations\": [{\"key\": \"team\", \"operator\": \"Exists\"}], " \
	    "\"defaultImage\": \"img:1\", \"defaultTime\": \"1:00:00\", \"maxTime\": \"2-00:00:00\", " \
	    "\"defaultAccelerators\": \"H100:8\", \"queue\": \"team-a\"}}"

Test(partition, every_field_reads)
{
	struct partition p;

	parse_ok(GPU, &p);
	cr_assert_str_eq(p.meta.name, "gpu");
	cr_assert(p.spec.is_default);
	cr_assert_str_eq(json_string_value(json_object_get(p.spec.node_selector, "pool")), "gpu");
	cr_assert_eq(json_array_size(p.spec.tolerations), 1);
	cr_assert_str_eq(p.spec.default_image, "img:1");
	cr_assert_eq(p.spec.default_time_s, 3600);
	cr_assert_eq(p.spec.max_time_s, 2 * 86400);
	cr_assert_str_eq(p.spec.default_accelerators, "H100:8");
	cr_assert_str_eq(p.spec.queue, "team-a");
	partition_release(&p);
}

Test(partition, an_empty_spec_is_a_partition_of_every_node_without_limits)
{
	struct partition p;

	parse_ok("{\"metadata\": {\"name\": \"all\"}}", &p);
	cr_assert_not(p.spec.is_default);
	cr_assert_eq(p.spec.max_time_s, -1);
	cr_assert_eq(p.spec.default_time_s, 0);
	partition_release(&p);
}

Test(partition, bad_fields_are_named)
{
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"maxTime\": \"soon\"}}",
		       "spec.maxTime: \"soon\" is not a Slurm time");
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"defaultTime\": \"2:00:00\", "
		       "\"maxTime\": \"1:00:00\"}}", "spec.defaultTime: must not be longer than maxTime");
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"defaultAccelerators\": "
		       "\"H100:0\"}}", "spec.defaultAccelerators");
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"tolerations\": "
		       "[{\"operator\": \"Maybe\"}]}}", "spec.tolerations[0].operator");
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"nodeSelector\": "
		       "{\"pool\": 3}}}", "spec.nodeSelector");
	assert_problem("{\"metadata\": {\"name\": \"Bad_Name\"}}", "metadata.name");
}

static void three(struct partition parts[3], bool second_default)
{
	parse_ok(GPU, &parts[0]);
	parse_ok(second_default ?
		 "{\"metadata\": {\"name\": \"cpu\", \"creationTimestamp\": \"2025-01-01T00:00:00Z\"}, "
		 "\"spec\": {\"default\": true}}" :
		 "{\"metadata\": {\"name\": \"cpu\", \"creationTimestamp\": \"2025-01-01T00:00:00Z\"}}",
		 &parts[1]);
	parse_ok("{\"metadata\": {\"name\": \"debug\"}, \"spec\": {\"maxTime\": \"30\"}}", &parts[2]);
}

static void release3(struct partition parts[3])
{
	for (int i = 0; i < 3; i++)
		partition_release(&parts[i]);
}

Test(partition, the_default_is_the_one_that_says_so_and_the_oldest_when_two_do)
{
	struct partition parts[3];
	bool contested;

	three(parts, false);
	cr_assert_str_eq(partition_default(parts, 3, &contested)->meta.name, "gpu");
	cr_assert_not(contested);
	release3(parts);
	three(parts, true);
	cr_assert_str_eq(partition_default(parts, 3, &contested)->meta.name, "cpu");
	cr_assert(contested);
	release3(parts);
	cr_assert_null(partition_default(NULL, 0, NULL));
}

Test(partition, a_job_uses_its_recorded_partition_then_its_own_then_the_default)
{
	struct partition parts[3];
	const struct partition *found;
	const char *name;

	three(parts, false);
	partition_pick(parts, 3, "debug", "cpu", NULL, &name, &found);
	cr_assert_str_eq(name, "debug");
	cr_assert_eq(found, &parts[2]);
	partition_pick(parts, 3, NULL, "cpu", NULL, &name, &found);
	cr_assert_eq(found, &parts[1]);
	partition_pick(parts, 3, NULL, NULL, NULL, &name, &found);
	cr_assert_str_eq(name, "gpu");
	/* A job that names a Kueue queue and no partition keeps today's behaviour. */
	partition_pick(parts, 3, NULL, NULL, "team-b", &name, &found);
	cr_assert_null(name);
	cr_assert_null(found);
	/* A name no Partition has: named, not found (the job cannot run). */
	partition_pick(parts, 3, NULL, "gpu2", NULL, &name, &found);
	cr_assert_str_eq(name, "gpu2");
	cr_assert_null(found);
	/* No Partitions at all: nothing. */
	partition_pick(NULL, 0, NULL, NULL, NULL, &name, &found);
	cr_assert_null(name);
	release3(parts);
}

Test(partition, applying_fills_only_what_the_job_left_out)
{
	struct partition parts[3];
	struct tj_spec spec;

	three(parts, false);
	memset(&spec, 0, sizeof(spec));
	spec.pod_template.node_selector = json_pack("{s:s}", "pool", "mine");
	cr_assert_eq(partition_apply(&parts[0], &spec), 0);
	cr_assert_str_eq(spec.image, "img:1");
	cr_assert(spec.has_active_deadline_seconds);
	cr_assert_eq(spec.active_deadline_seconds, 3600);
	cr_assert_str_eq(spec.resources.accelerators, "H100:8");
	cr_assert(spec.resources.has_accel);
	cr_assert_eq(spec.resources.accel.count, 8);
	cr_assert_str_eq(spec.queue, "team-a");
	cr_assert_str_eq(spec.partition, "gpu");
	/* The job's own nodeSelector value wins over the partition's. */
	cr_assert_str_eq(json_string_value(json_object_get(spec.pod_template.node_selector, "pool")),
			 "mine");
	cr_assert_eq(json_array_size(spec.pod_template.tolerations), 1);
	free(spec.image);
	free(spec.resources.accelerators);
	free(spec.queue);
	free(spec.partition);
	json_decref(spec.pod_template.node_selector);
	json_decref(spec.pod_template.tolerations);
	release3(parts);
}

Test(partition, without_default_time_a_job_gets_max_time_as_in_slurm)
{
	struct partition parts[3];
	struct tj_spec spec;

	three(parts, false);
	memset(&spec, 0, sizeof(spec));
	cr_assert_eq(partition_apply(&parts[2], &spec), 0);
	cr_assert_eq(spec.active_deadline_seconds, 1800);
	free(spec.partition);
	release3(parts);
}

Test(partition, a_time_past_max_time_or_another_queue_is_refused)
{
	struct partition parts[3];
	struct tj_spec spec;
	char why[256];

	three(parts, false);
	memset(&spec, 0, sizeof(spec));
	spec.has_active_deadline_seconds = true;
	spec.active_deadline_seconds = 3 * 86400;
	cr_assert(partition_refuses(&parts[0], &spec, why, sizeof(why)));
	cr_assert_str_eq(why, "time limit 3-00:00:00 is past partition gpu's MaxTime 2-00:00:00");
	spec.active_deadline_seconds = 3600;
	cr_assert_not(partition_refuses(&parts[0], &spec, why, sizeof(why)));
	spec.queue = "team-b";
	cr_assert(partition_refuses(&parts[0], &spec, why, sizeof(why)));
	cr_assert(strstr(why, "team-b") && strstr(why, "team-a"), "%s", why);
	spec.queue = NULL;
	release3(parts);
}

#define SCRATCHY "{\"metadata\": {\"name\": \"nvme\"}, \"spec\": {\"scratch\": " \
		 "{\"/local/scratch\": {\"size\": \"500Gi\", \"storageClassName\": \"local-nvme\"}, " \
		 "\"/tmp/cache\": {\"size\": \"10Gi\"}}}}"

/* docs/volumes.md: a partition's scratch is what a job that names none gets, sorted by path. */
Test(partition, a_job_without_scratch_gets_the_partitions_and_one_with_keeps_its_own)
{
	struct tj_scratch own = { .mount_path = "/mine", .size = "1Gi" };
	struct partition p;
	struct tj_spec spec;
	char why[256];

	parse_ok(SCRATCHY, &p);
	cr_assert_eq(p.spec.n_scratch, 2);
	cr_assert_str_eq(p.spec.scratch[0].mount_path, "/local/scratch");
	memset(&spec, 0, sizeof(spec));
	cr_assert_not(partition_refuses(&p, &spec, why, sizeof(why)));
	cr_assert_eq(partition_apply(&p, &spec), 0);
	cr_assert_eq(spec.n_scratch, 2);
	cr_assert_str_eq(spec.scratch[0].mount_path, "/local/scratch");
	cr_assert_str_eq(spec.scratch[0].storage_class_name, "local-nvme");
	cr_assert_eq(spec.scratch[0].size_milli, 500LL * 1024 * 1024 * 1024 * 1000);
	cr_assert_str_eq(spec.scratch[1].mount_path, "/tmp/cache");
	cr_assert_null(spec.scratch[1].storage_class_name);
	cr_assert_neq(spec.scratch[0].mount_path, p.spec.scratch[0].mount_path, "a copy");
	tj_scratch_release(spec.scratch, spec.n_scratch);
	free(spec.partition);

	memset(&spec, 0, sizeof(spec));
	spec.scratch = &own;
	spec.n_scratch = 1;
	cr_assert_eq(partition_apply(&p, &spec), 0);
	cr_assert_eq(spec.scratch, &own, "the job's own scratch is left as it is");
	cr_assert_eq(spec.n_scratch, 1);
	free(spec.partition);
	partition_release(&p);
}

Test(partition, its_scratch_over_a_jobs_volume_is_refused_and_bad_scratch_is_named)
{
	struct tj_volume_mount vol = { .mount_path = "/local", .volume = "data" };
	struct partition p;
	struct tj_spec spec;
	char why[256];

	parse_ok(SCRATCHY, &p);
	memset(&spec, 0, sizeof(spec));
	spec.volumes = &vol;
	spec.n_volumes = 1;
	cr_assert(partition_refuses(&p, &spec, why, sizeof(why)));
	cr_assert_str_eq(why, "partition nvme's scratch /local/scratch overlaps the mount path "
			      "/local of spec.volumes: give the job a spec.scratch of its own");
	vol.mount_path = "/local2";
	cr_assert_not(partition_refuses(&p, &spec, why, sizeof(why)));
	partition_release(&p);

	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"scratch\": "
		       "{\"scratch\": {\"size\": \"1Gi\"}}}}", "mount path must be absolute");
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"scratch\": "
		       "{\"/s\": {\"size\": \"lots\"}}}}", "spec.scratch[\"/s\"].size");
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"scratch\": "
		       "{\"/s\": {}}}}", "spec.scratch[\"/s\"].size");
}

#define GUARDED "{\"metadata\": {\"name\": \"gpu\"}, \"spec\": {\"allowedNamespaces\": " \
		"[\"ml\", \"vision\"], \"maxJobPriority\": 50}}"

/* Slurm's AllowAccounts: a namespace not listed may not use the partition. */
Test(partition, a_namespace_not_in_allowed_namespaces_is_forbidden_naming_the_field)
{
	struct tj_spec spec;
	struct partition p;
	char why[256];

	memset(&spec, 0, sizeof(spec));
	parse_ok(GUARDED, &p);
	cr_assert_eq(p.spec.n_allowed_namespaces, 2);
	cr_assert_str_eq(p.spec.allowed_namespaces[1], "vision");
	cr_assert_not(partition_forbids(&p, "ml", &spec, why, sizeof(why)));
	cr_assert_not(partition_forbids(&p, "vision", &spec, why, sizeof(why)));
	cr_assert(partition_forbids(&p, "web", &spec, why, sizeof(why)));
	cr_assert_str_eq(why, "partition gpu: namespace web is not in spec.allowedNamespaces");
	partition_release(&p);
}

Test(partition, a_priority_above_max_job_priority_is_forbidden_naming_the_field)
{
	struct tj_spec spec;
	struct partition p;
	char why[256];

	memset(&spec, 0, sizeof(spec));
	parse_ok(GUARDED, &p);
	cr_assert(p.spec.has_max_job_priority);
	spec.priority = 50;
	cr_assert_not(partition_forbids(&p, "ml", &spec, why, sizeof(why)));
	spec.priority = 100;
	cr_assert(partition_forbids(&p, "ml", &spec, why, sizeof(why)));
	cr_assert_str_eq(why, "spec.priority 100 is above partition gpu's maxJobPriority 50");
	partition_release(&p);
}

Test(partition, without_the_fields_every_namespace_and_priority_may_use_it)
{
	struct tj_spec spec;
	struct partition p;
	char why[256];

	memset(&spec, 0, sizeof(spec));
	spec.priority = 2147483647;
	parse_ok("{\"metadata\": {\"name\": \"all\"}}", &p);
	cr_assert_null(p.spec.allowed_namespaces);
	cr_assert_not(p.spec.has_max_job_priority);
	cr_assert_not(partition_forbids(&p, "anyone", &spec, why, sizeof(why)));
	partition_release(&p);
}

Test(partition, bad_allowed_namespaces_and_max_job_priority_are_named)
{
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"allowedNamespaces\": []}}",
		       "spec.allowedNamespaces: must name 1 to 256 namespaces");
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"allowedNamespaces\": "
		       "[\"ml\", \"Bad_NS\"]}}", "spec.allowedNamespaces[1]: \"Bad_NS\" is not a "
		       "namespace name");
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"allowedNamespaces\": "
		       "[\"ml\", \"ml\"]}}", "spec.allowedNamespaces[1]: ml is listed twice");
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"allowedNamespaces\": "
		       "\"ml\"}}", "spec.allowedNamespaces");
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"maxJobPriority\": \"high\"}}",
		       "spec.maxJobPriority");
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"maxJobPriority\": "
		       "4294967296}}", "spec.maxJobPriority");
}

#define FEATURED "{\"metadata\": {\"name\": \"gpu\"}, \"spec\": {\"features\": {" \
		 "\"a100\": {\"nvidia.com/gpu.product\": \"A100\"}, " \
		 "\"h100\": {\"nvidia.com/gpu.product\": \"H100\"}, " \
		 "\"ib\": {\"fabric\": \"ib\", \"rack\": \"r1\"}}}}"

/* The expressions of term i of a node affinity's required terms, compact and sorted. */
static char *term_text(const json_t *affinity, size_t i)
{
	const json_t *terms = json_object_get(json_object_get(json_object_get(affinity,
		"nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"),
		"nodeSelectorTerms");

	return json_dumps(json_array_get(terms, i), JSON_COMPACT | JSON_SORT_KEYS);
}

static size_t term_count(const json_t *affinity)
{
	return json_array_size(json_object_get(json_object_get(json_object_get(affinity,
		"nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"),
		"nodeSelectorTerms"));
}

/* sbatch -C: a partition's features, as a required node affinity of the job's pods. */
Test(partition, a_constraint_becomes_the_node_affinity_of_the_partitions_features)
{
	struct partition p;
	struct tj_spec spec;
	char *t;

	parse_ok(FEATURED, &p);
	memset(&spec, 0, sizeof(spec));
	spec.nodes.constraint = "a100&ib|h100";
	cr_assert_eq(partition_apply(&p, &spec), 0);
	cr_assert_eq(term_count(spec.pod_template.affinity), 2);
	t = term_text(spec.pod_template.affinity, 0);
	cr_assert_str_eq(t, "{\"matchExpressions\":[{\"key\":\"nvidia.com/gpu.product\","
			 "\"operator\":\"In\",\"values\":[\"A100\"]},{\"key\":\"fabric\","
			 "\"operator\":\"In\",\"values\":[\"ib\"]},{\"key\":\"rack\",\"operator\":"
			 "\"In\",\"values\":[\"r1\"]}]}");
	free(t);
	t = term_text(spec.pod_template.affinity, 1);
	cr_assert_str_eq(t, "{\"matchExpressions\":[{\"key\":\"nvidia.com/gpu.product\","
			 "\"operator\":\"In\",\"values\":[\"H100\"]}]}");
	free(t);
	json_decref(spec.pod_template.affinity);
	free(spec.partition);

	/* The template's own terms are OR-ed: each is AND-ed with each part of the constraint. */
	memset(&spec, 0, sizeof(spec));
	spec.nodes.constraint = "a100|h100";
	spec.pod_template.affinity = json_loads(
		"{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
		"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":"
		"\"In\",\"values\":[\"a\"]}]},{\"matchFields\":[{\"key\":\"metadata.name\","
		"\"operator\":\"NotIn\",\"values\":[\"n1\"]}]}]}}}", 0, NULL);
	cr_assert_eq(partition_apply(&p, &spec), 0);
	cr_assert_eq(term_count(spec.pod_template.affinity), 4);
	t = term_text(spec.pod_template.affinity, 3);
	cr_assert_str_eq(t, "{\"matchExpressions\":[{\"key\":\"nvidia.com/gpu.product\","
			 "\"operator\":\"In\",\"values\":[\"H100\"]}],\"matchFields\":[{\"key\":"
			 "\"metadata.name\",\"operator\":\"NotIn\",\"values\":[\"n1\"]}]}");
	free(t);
	json_decref(spec.pod_template.affinity);
	free(spec.partition);
	partition_release(&p);
}

/* sbatch's "Invalid feature specification": a feature the partition does not define. */
Test(partition, a_feature_the_partition_does_not_define_is_refused_and_bad_features_named)
{
	struct partition p;
	struct tj_spec spec;
	char why[256];

	parse_ok(FEATURED, &p);
	memset(&spec, 0, sizeof(spec));
	spec.nodes.constraint = "a100&nvme";
	cr_assert(partition_refuses(&p, &spec, why, sizeof(why)));
	cr_assert_str_eq(why, "feature nvme of spec.constraint is not one of partition gpu's "
			 "spec.features");
	/* Applied anyway (an admitted job's record), an unknown feature adds nothing. */
	cr_assert_eq(partition_apply(&p, &spec), 0);
	cr_assert_null(spec.pod_template.affinity);
	free(spec.partition);
	partition_release(&p);
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"features\": "
		       "{\"a b\": {\"x\": \"y\"}}}}", "a feature's name is 1 to 63 letters");
	assert_problem("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"features\": "
		       "{\"ab\": {}}}}", "must be the labels a node has the feature by");
}

/* A Partition whose spec is the JSON members spec_members (no braces). */
#define WITH_SPEC(spec_members) "{\"metadata\": {\"name\": \"p\"}, \"spec\": {" spec_members "}}"

/* Slurm's partition settings under their own names; absent, nothing is preempted. */
Test(partition, without_preemption_fields_the_tier_is_0_and_nothing_is_preempted)
{
	struct partition p;

	parse_ok("{\"metadata\": {\"name\": \"all\"}}", &p);
	cr_assert_eq(p.spec.priority_tier, 0);
	cr_assert_eq(p.spec.preempt_mode, PARTITION_PREEMPT_OFF);
	cr_assert_not(p.spec.has_grace_time, "absent: the controller resolves it per job");
	cr_assert_eq(p.spec.grace_time_s, 0);
	cr_assert_eq(p.spec.preempt_exempt_s, 0);
	partition_release(&p);
}

Test(partition, preemption_fields_read_at_their_bounds)
{
	static const char *const modes[] = { "Off", "Requeue", "Cancel" };
	struct partition p;
	char json[512];

	parse_ok(WITH_SPEC("\"priorityTier\": 65533, \"preemptMode\": \"Requeue\", "
			   "\"graceTimeSeconds\": 86400, \"preemptExemptTimeSeconds\": 31536000"),
		 &p);
	cr_assert_eq(p.spec.priority_tier, 65533);
	cr_assert_eq(p.spec.preempt_mode, PARTITION_PREEMPT_REQUEUE);
	cr_assert(p.spec.has_grace_time);
	cr_assert_eq(p.spec.grace_time_s, 86400);
	cr_assert_eq(p.spec.preempt_exempt_s, 31536000);
	partition_release(&p);
	/* 0 is a grace of its own (kill at once), not "absent". */
	parse_ok(WITH_SPEC("\"priorityTier\": 0, \"graceTimeSeconds\": 0, "
			   "\"preemptExemptTimeSeconds\": 0"), &p);
	cr_assert(p.spec.has_grace_time);
	cr_assert_eq(p.spec.grace_time_s, 0);
	partition_release(&p);
	for (int m = 0; m < 3; m++) {
		snprintf(json, sizeof(json), WITH_SPEC("\"preemptMode\": \"%s\""), modes[m]);
		parse_ok(json, &p);
		cr_assert_eq(p.spec.preempt_mode, (enum partition_preempt_mode)m, "%s", modes[m]);
		cr_assert_str_eq(partition_preempt_mode_name(p.spec.preempt_mode), modes[m]);
		partition_release(&p);
	}
}

Test(partition, preemption_fields_out_of_bounds_are_named_with_their_paths)
{
	assert_problem(WITH_SPEC("\"priorityTier\": -1"),
		       "spec.priorityTier: must be between 0 and 65533");
	assert_problem(WITH_SPEC("\"priorityTier\": 65534"),
		       "spec.priorityTier: must be between 0 and 65533");
	assert_problem(WITH_SPEC("\"priorityTier\": \"high\""), "spec.priorityTier: must be an "
		       "integer");
	assert_problem(WITH_SPEC("\"graceTimeSeconds\": -1"),
		       "spec.graceTimeSeconds: must be between 0 and 86400");
	assert_problem(WITH_SPEC("\"graceTimeSeconds\": 86401"),
		       "spec.graceTimeSeconds: must be between 0 and 86400");
	assert_problem(WITH_SPEC("\"preemptExemptTimeSeconds\": -1"),
		       "spec.preemptExemptTimeSeconds: must be between 0 and 31536000");
	assert_problem(WITH_SPEC("\"preemptExemptTimeSeconds\": 31536001"),
		       "spec.preemptExemptTimeSeconds: must be between 0 and 31536000");
}

/* The enum is the schema's, case and all; YAML's bare Off arrives as false. */
Test(partition, a_preempt_mode_not_off_requeue_or_cancel_is_named)
{
	assert_problem(WITH_SPEC("\"preemptMode\": \"Suspend\""),
		       "spec.preemptMode: must be one of Off, Requeue, Cancel, not \"Suspend\"");
	assert_problem(WITH_SPEC("\"preemptMode\": \"REQUEUE\""),
		       "spec.preemptMode: must be one of Off, Requeue, Cancel, not \"REQUEUE\"");
	assert_problem(WITH_SPEC("\"preemptMode\": \"\""),
		       "spec.preemptMode: must be one of Off, Requeue, Cancel, not \"\"");
	assert_problem(WITH_SPEC("\"preemptMode\": false"), "spec.preemptMode: must be a string");
}

Test(partition, a_bad_preemption_field_leaves_the_others_read)
{
	struct field_errors errs;
	struct partition p;
	json_t *obj = json_loads(WITH_SPEC("\"priorityTier\": 70000, \"preemptMode\": \"Cancel\", "
					   "\"graceTimeSeconds\": 90000"), 0, NULL);

	cr_assert_not_null(obj);
	field_errors_init(&errs);
	cr_assert_eq(partition_parse(obj, &p, &errs), CADRE_EINVAL);
	cr_assert_eq(field_errors_count(&errs), 2);
	cr_assert_eq(p.spec.priority_tier, 0);
	cr_assert_eq(p.spec.preempt_mode, PARTITION_PREEMPT_CANCEL);
	cr_assert_not(p.spec.has_grace_time);
	partition_release(&p);
	field_errors_release(&errs);
	json_decref(obj);
}

/* GraceTime: the partition's, else the job's spec.signal.secondsBefore, else 30. */
Test(partition, the_grace_is_the_partitions_then_the_jobs_signal_then_30)
{
	struct partition with, without;

	parse_ok(WITH_SPEC("\"graceTimeSeconds\": 120"), &with);
	parse_ok(WITH_SPEC("\"preemptMode\": \"Requeue\""), &without);
	cr_assert_eq(partition_grace_seconds(&with.spec, true, 45), 120);
	cr_assert_eq(partition_grace_seconds(&with.spec, false, 0), 120);
	cr_assert_eq(partition_grace_seconds(&without.spec, true, 45), 45);
	cr_assert_eq(partition_grace_seconds(&without.spec, true, 0), 0);
	cr_assert_eq(partition_grace_seconds(&without.spec, false, 45), 30,
		     "secondsBefore counts only with a signal");
	cr_assert_eq(partition_grace_seconds(NULL, false, 0), PARTITION_GRACE_SECONDS_DEFAULT);
	cr_assert_eq(PARTITION_GRACE_SECONDS_DEFAULT, 30);
	partition_release(&with);
	partition_release(&without);
}
