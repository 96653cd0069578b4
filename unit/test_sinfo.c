/*
 * cli/sinfo: the partitions and their nodes as Slurm's sinfo prints them,
 * compared byte for byte. The reference lines follow src/sinfo/opts.c's
 * default formats ("partition:9 ,available:.5 ,time:.10 ,nodes:.6
 * ,statecompact:.6 ,nodelist:0"; -N "nodelist:0 ,nodes:.6 ,partition:.9
 * ,statecompact:6") and print.c's _print_str padding and cutting, at
 * SchedMD/slurm 284c3b9.
 */
#include <criterion/criterion.h>

#include "base/buf.h"
#include "base/err.h"
#include "cli/sinfo.h"
#include "api/dra_nodes.h"

#include <jansson.h>
#include <string.h>

static json_t *parts, *nodes, *pods;
static struct buf b;

static json_t *node(const char *name, const char *ready, bool cordoned)
{
	return json_pack("{s:{s:s,s:{s:s}},s:{s:b},s:{s:{s:s,s:s,s:s},s:[{s:s,s:s}]}}",
			 "metadata", "name", name, "labels", "nvidia.com/gpu.product",
			 "NVIDIA-H100-80GB-HBM3", "spec", "unschedulable", cordoned,
			 "status", "capacity", "cpu", "96", "memory", "1024Gi", "nvidia.com/gpu",
			 "8", "conditions", "type", "Ready", "status", ready);
}

static json_t *pod(const char *on, const char *gpus)
{
	return json_pack("{s:{s:{s:s}},s:{s:s,s:[{s:{s:{s:s}}}]},s:{s:s}}",
			 "metadata", "labels", "cadre.dev/job-name", "j", "spec", "nodeName", on,
			 "containers", "resources", "requests", "nvidia.com/gpu", gpus,
			 "status", "phase", "Running");
}

static void setup(void)
{
	buf_init(&b, 1 << 20);
	parts = json_pack("[{s:{s:s},s:{s:s}},{s:{s:s},s:{s:b,s:s,s:{s:s}}}]",
			  "metadata", "name", "debug", "spec", "maxTime", "30:00",
			  "metadata", "name", "gpu", "spec", "default", 1, "maxTime", "7-00:00:00",
			  "nodeSelector", "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3");
	nodes = json_array();
	json_array_append_new(nodes, node("gpu-node-2", "True", false));
	json_array_append_new(nodes, node("gpu-node-0", "True", false));
	json_array_append_new(nodes, node("gpu-node-1", "True", false));
	json_array_append_new(nodes, node("gpu-node-3", "True", false));
	json_array_append_new(nodes, node("gpu-node-10", "True", false));
	pods = json_array();
	json_array_append_new(pods, pod("gpu-node-0", "8"));
	json_array_append_new(pods, pod("gpu-node-1", "4"));
}

static void teardown(void)
{
	buf_release(&b);
	json_decref(parts);
	json_decref(nodes);
	json_decref(pods);
}

TestSuite(sinfo, .init = setup, .fini = teardown);

Test(sinfo, the_default_format_groups_by_partition_and_state_with_a_star_on_the_default)
{
	cr_assert_eq(sinfo_table(&(struct sinfo_query){ 0 }, parts, nodes, pods, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
		"debug        up      30:00      1    mix gpu-node-1\n"
		"debug        up      30:00      1  alloc gpu-node-0\n"
		"debug        up      30:00      3   idle gpu-node-[2-3,10]\n"
		"gpu*         up 7-00:00:00      1    mix gpu-node-1\n"
		"gpu*         up 7-00:00:00      1  alloc gpu-node-0\n"
		"gpu*         up 7-00:00:00      3   idle gpu-node-[2-3,10]\n");
}

Test(sinfo, drain_and_down_come_from_cordons_and_the_ready_condition)
{
	json_array_set_new(nodes, 0, node("gpu-node-2", "False", false));
	json_array_set_new(nodes, 3, node("gpu-node-3", "True", true));
	json_array_set_new(nodes, 4, node("gpu-node-10", "Unknown", false));
	cr_assert_eq(sinfo_table(&(struct sinfo_query){ .partitions = "gpu" }, parts, nodes, pods,
				 &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
		"gpu*         up 7-00:00:00      1  down* gpu-node-10\n"
		"gpu*         up 7-00:00:00      1  drain gpu-node-3\n"
		"gpu*         up 7-00:00:00      1    mix gpu-node-1\n"
		"gpu*         up 7-00:00:00      1  alloc gpu-node-0\n"
		"gpu*         up 7-00:00:00      1   down gpu-node-2\n");
}

/*
 * Without the pods (a user holding cadre-cluster-view alone may not list them),
 * an up node is unk, never idle: sinfo does not claim what it cannot know.
 * down and drain still come from the Node, and %F counts unk as other.
 */
Test(sinfo, without_the_pods_an_up_node_is_unk_and_down_and_drain_still_show)
{
	const struct sinfo_query unknown = { .partitions = "gpu", .usage_unknown = true };

	json_array_set_new(nodes, 0, node("gpu-node-2", "False", false));
	json_array_set_new(nodes, 3, node("gpu-node-3", "True", true));
	cr_assert_eq(sinfo_table(&unknown, parts, nodes, NULL, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
		"gpu*         up 7-00:00:00      1  drain gpu-node-3\n"
		"gpu*         up 7-00:00:00      1   down gpu-node-2\n"
		"gpu*         up 7-00:00:00      3    unk gpu-node-[0-1,10]\n");
	buf_reset(&b);
	cr_assert_eq(sinfo_table(&(struct sinfo_query){ .format = "%D %F %T", .usage_unknown = true,
							.partitions = "gpu", .states = "unk" },
				 parts, nodes, NULL, &b), 0);
	cr_assert_str_eq(buf_str(&b), "NODES NODES(A/I/O/T) STATE\n3 0/0/3/3 unknown\n");
	cr_assert(sinfo_states_ok("unk,unknown"));
}

Test(sinfo, node_format_lists_each_node_and_partition)
{
	json_array_remove(nodes, 4);
	cr_assert_eq(sinfo_table(&(struct sinfo_query){ .node_flag = true, .partitions = "gpu" },
				 parts, nodes, pods, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"NODELIST    NODES PARTITION STATE \n"
		"gpu-node-0      1      gpu* alloc \n"
		"gpu-node-1      1      gpu* mix   \n"
		"gpu-node-2      1      gpu* idle  \n"
		"gpu-node-3      1      gpu* idle  \n");
}

Test(sinfo, the_long_formats_have_sinfos_columns)
{
	json_array_remove(nodes, 4);
	cr_assert_eq(sinfo_table(&(struct sinfo_query){ .long_output = true, .partitions = "gpu" },
				 parts, nodes, NULL, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE "
		"RESERVATION NODELIST\n"
		"gpu*         up 7-00:00:00 1-infinite   no       NO        all      4        idle "
		"            gpu-node-[0-3]\n");
	buf_reset(&b);
	json_array_remove(nodes, 3);
	json_array_remove(nodes, 2);
	cr_assert_eq(sinfo_table(&(struct sinfo_query){ .long_output = true, .node_flag = true,
							.partitions = "gpu" },
				 parts, nodes, pods, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"NODELIST    NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT "
		"AVAIL_FE REASON              \n"
		"gpu-node-0      1      gpu*   allocated 96     96:1:1 104857        0      1 "
		"  (null) none                \n"
		"gpu-node-2      1      gpu*        idle 96     96:1:1 104857        0      1 "
		"  (null) none                \n");
}

Test(sinfo, a_format_of_its_own_with_gres_and_counts)
{
	size_t bad = 0;

	cr_assert_eq(sinfo_table(&(struct sinfo_query){ .format = "%P %D %G %F %N",
							.partitions = "gpu" },
				 parts, nodes, pods, &b), 0);
	cr_assert_str_eq(buf_str(&b), "PARTITION NODES GRES NODES(A/I/O/T) NODELIST\n"
				      "gpu* 5 gpu:h100:8 2/3/0/5 gpu-node-[0-3,10]\n");
	cr_assert_not(sinfo_format_ok("%P %Q", &bad));
	cr_assert_eq(bad, 3);
	cr_assert(sinfo_states_ok("idle,MIX,drain"));
	cr_assert_not(sinfo_states_ok("idle,bogus"));
}

Test(sinfo, gres_types_come_from_the_product_label)
{
	char t[64];

	sinfo_gres_type("NVIDIA-H100-80GB-HBM3", t);
	cr_assert_str_eq(t, "h100");
	sinfo_gres_type("NVIDIA-A100-SXM4-80GB", t);
	cr_assert_str_eq(t, "a100");
	sinfo_gres_type("Tesla-T4", t);
	cr_assert_str_eq(t, "t4");
	sinfo_gres_type(NULL, t);
	cr_assert_str_eq(t, "");
}

Test(sinfo, json_lists_each_row_with_its_nodes)
{
	json_t *doc;

	cr_assert_eq(sinfo_json(&(struct sinfo_query){ .partitions = "gpu" }, parts, nodes, pods,
				&b), 0);
	doc = json_loads(buf_str(&b), 0, NULL);
	cr_assert(doc);
	cr_assert_eq(json_array_size(json_object_get(doc, "sinfo")), 3);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(
		json_object_get(doc, "sinfo"), 0), "partition"), "name")), "gpu");
	json_decref(doc);
}

/* cadre's %y: where each node sits in the ClusterTopology's levels; rows group each domain. */
Test(sinfo, the_topology_column_names_each_nodes_domains)
{
	static const char *const labels[] = { "example.com/block", "example.com/rack" };
	static const char *const names[] = { "block", NULL };
	const char *racks[] = { "r2", "r1", "r1", "r2", NULL };

	for (size_t i = 0; i < 4; i++) {
		json_t *l = json_object_get(json_object_get(json_array_get(nodes, i), "metadata"),
					    "labels");

		json_object_set_new(l, "example.com/block", json_string("b1"));
		json_object_set_new(l, "example.com/rack", json_string(racks[i]));
	}
	cr_assert_eq(sinfo_table(&(struct sinfo_query){ .format = "%P %D %t %N %y",
							.partitions = "gpu", .topo_labels = labels,
							.topo_names = names, .n_topo = 2 },
				 parts, nodes, NULL, &b), 0);
	cr_assert_str_eq(buf_str(&b), "PARTITION NODES STATE NODELIST TOPOLOGY\n"
				      "gpu* 1 idle gpu-node-10 -\n"
				      "gpu* 2 idle gpu-node-[0-1] block=b1,rack=r1\n"
				      "gpu* 2 idle gpu-node-[2-3] block=b1,rack=r2\n");
}

/* Two partitions, gpu with the tenancy fields, for scontrol show partition. */
static json_t *tenancy_parts(void)
{
	return json_pack("[{s:{s:s},s:{s:s}},{s:{s:s},s:{s:b,s:s,s:{s:s},s:[s,s],s:i}}]",
			 "metadata", "name", "debug", "spec", "maxTime", "30:00",
			 "metadata", "name", "gpu", "spec", "default", 1, "maxTime", "7-00:00:00",
			 "nodeSelector", "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3",
			 "allowedNamespaces", "ml", "vision", "maxJobPriority", 50);
}

/*
 * slurm_sprint_partition_info (src/api/partition_info.c @ 284c3b9, not one_liner):
 * AllowAccounts is the list of allowedNamespaces, ALL without one; maxJobPriority
 * has no key of Slurm's and none is made up. Without the preemption fields:
 * PriorityTier=0 (cadre's default, where Slurm's is 1), PreemptMode=OFF and
 * GraceTime=30, what a job without spec.signal gets.
 */
Test(sinfo, scontrol_show_partition_prints_allow_accounts_as_slurm_does)
{
	json_t *p = tenancy_parts();

	cr_assert_eq(sinfo_show_partition(NULL, p, nodes, pods, NULL, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"PartitionName=debug\n"
		"   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
		"   AllocNodes=ALL Default=NO QoS=N/A\n"
		"   DefaultTime=NONE DisableRootJobs=NO Exclusive=NO GraceTime=30 Hidden=NO\n"
		"   MaxNodes=UNLIMITED MaxTime=00:30:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED "
		"MaxCPUsPerSocket=UNLIMITED\n"
		"   Nodes=gpu-node-[0-3,10]\n"
		"   PriorityJobFactor=1 PriorityTier=0 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
		"   OverTimeLimit=NONE PreemptMode=OFF\n"
		"   State=UP TotalCPUs=480 TotalNodes=5 SelectTypeParameters=NONE\n"
		"   JobDefaults=(null)\n"
		"   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
		"   TRES=cpu=480,mem=5T,node=5,billing=480,gres/gpu=40\n"
		"\n"
		"PartitionName=gpu\n"
		"   AllowGroups=ALL AllowAccounts=ml,vision AllowQos=ALL\n"
		"   AllocNodes=ALL Default=YES QoS=N/A\n"
		"   DefaultTime=NONE DisableRootJobs=NO Exclusive=NO GraceTime=30 Hidden=NO\n"
		"   MaxNodes=UNLIMITED MaxTime=7-00:00:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED "
		"MaxCPUsPerSocket=UNLIMITED\n"
		"   Nodes=gpu-node-[0-3,10]\n"
		"   PriorityJobFactor=1 PriorityTier=0 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
		"   OverTimeLimit=NONE PreemptMode=OFF\n"
		"   State=UP TotalCPUs=480 TotalNodes=5 SelectTypeParameters=NONE\n"
		"   JobDefaults=(null)\n"
		"   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
		"   TRES=cpu=480,mem=5T,node=5,billing=480,gres/gpu=40\n"
		"\n");
	json_decref(p);
}

Test(sinfo, scontrol_show_partition_of_one_name_and_of_none)
{
	json_t *p = tenancy_parts();

	cr_assert_eq(sinfo_show_partition("gpu", p, nodes, pods, NULL, &b), 0);
	cr_assert(!strncmp(buf_str(&b), "PartitionName=gpu\n   AllowGroups=ALL AllowAccounts="
			   "ml,vision AllowQos=ALL\n", 72), "%s", buf_str(&b));
	cr_assert_null(strstr(buf_str(&b), "debug"));
	cr_assert_null(strstr(buf_str(&b), "50"), "no key is made up for maxJobPriority");
	cr_assert_eq(sinfo_show_partition("gpu2", p, nodes, pods, NULL, &b), CADRE_ENOTFOUND);
	json_decref(p);
}

/* data_parser's partition "accounts": {"allowed": "ml,vision", "deny": ""}; "" for all. */
Test(sinfo, json_has_each_partitions_allowed_accounts)
{
	json_t *p = tenancy_parts(), *doc, *rows;

	cr_assert_eq(sinfo_json(&(struct sinfo_query){ 0 }, p, nodes, pods, &b), 0);
	doc = json_loads(buf_str(&b), 0, NULL);
	cr_assert(doc);
	rows = json_object_get(doc, "sinfo");
	for (size_t i = 0; i < json_array_size(rows); i++) {
		const json_t *part = json_object_get(json_array_get(rows, i), "partition");
		const char *name = json_string_value(json_object_get(part, "name"));

		cr_assert_str_eq(json_string_value(json_object_get(json_object_get(part,
			"accounts"), "allowed")), !strcmp(name, "gpu") ? "ml,vision" : "");
		cr_assert_str_eq(json_string_value(json_object_get(json_object_get(part,
			"accounts"), "deny")), "");
	}
	json_decref(doc);
	json_decref(p);
}

/* Four partitions of every node, of the tiers absent (0), 10, 1024 and 1536. */
static json_t *tiered_parts(void)
{
	return json_pack("[{s:{s:s}},{s:{s:s},s:{s:i}},{s:{s:s},s:{s:i}},{s:{s:s},s:{s:i}}]",
			 "metadata", "name", "debug",
			 "metadata", "name", "gpu", "spec", "priorityTier", 10,
			 "metadata", "name", "big", "spec", "priorityTier", 1024,
			 "metadata", "name", "half", "spec", "priorityTier", 1536);
}

/*
 * sinfo's "%p Partition scheduling tier priority" (src/sinfo/print.c
 * _print_priority_tier @ 284c3b9): header PRIO_TIER, the number through
 * convert_num_unit's exact units (1024 is 1K, 1536 1.50K), padded and cut
 * as every field.
 */
Test(sinfo, percent_p_is_the_partitions_priority_tier_as_sinfo_prints_it)
{
	json_t *p = tiered_parts();
	size_t bad = 1;

	cr_assert(sinfo_format_ok("%p", &bad));
	cr_assert_eq(sinfo_table(&(struct sinfo_query){ .format = "%R %p %.6p|%8p|" }, p, nodes,
				 pods, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"PARTITION PRIO_TIER PRIO_T|PRIO_TIE|\n"
		"debug 0      0|0       |\n"
		"gpu 10     10|10      |\n"
		"big 1K     1K|1K      |\n"
		"half 1.50K  1.50K|1.50K   |\n");
	json_decref(p);
}

/* Slurm's PriorityTier, PreemptMode (its words, upper case) and GraceTime, where it prints them. */
Test(sinfo, scontrol_show_partition_prints_the_preemption_fields_as_slurm_does)
{
	json_t *p = json_pack("[{s:{s:s},s:{s:s,s:i,s:s,s:i,s:i}},{s:{s:s},s:{s:s,s:s}}]",
			      "metadata", "name", "prod", "spec", "maxTime", "1-00:00:00",
			      "priorityTier", 10, "preemptMode", "Requeue", "graceTimeSeconds", 120,
			      "preemptExemptTimeSeconds", 600,
			      "metadata", "name", "scavenger", "spec", "maxTime", "4:00:00",
			      "preemptMode", "Cancel");

	cr_assert_eq(sinfo_show_partition(NULL, p, nodes, pods, NULL, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"PartitionName=prod\n"
		"   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
		"   AllocNodes=ALL Default=NO QoS=N/A\n"
		"   DefaultTime=NONE DisableRootJobs=NO Exclusive=NO GraceTime=120 Hidden=NO\n"
		"   MaxNodes=UNLIMITED MaxTime=1-00:00:00 MinNodes=0 LLN=NO "
		"MaxCPUsPerNode=UNLIMITED MaxCPUsPerSocket=UNLIMITED\n"
		"   Nodes=gpu-node-[0-3,10]\n"
		"   PriorityJobFactor=1 PriorityTier=10 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
		"   OverTimeLimit=NONE PreemptMode=REQUEUE\n"
		"   State=UP TotalCPUs=480 TotalNodes=5 SelectTypeParameters=NONE\n"
		"   JobDefaults=(null)\n"
		"   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
		"   TRES=cpu=480,mem=5T,node=5,billing=480,gres/gpu=40\n"
		"\n"
		"PartitionName=scavenger\n"
		"   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
		"   AllocNodes=ALL Default=NO QoS=N/A\n"
		"   DefaultTime=NONE DisableRootJobs=NO Exclusive=NO GraceTime=30 Hidden=NO\n"
		"   MaxNodes=UNLIMITED MaxTime=04:00:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED "
		"MaxCPUsPerSocket=UNLIMITED\n"
		"   Nodes=gpu-node-[0-3,10]\n"
		"   PriorityJobFactor=1 PriorityTier=0 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
		"   OverTimeLimit=NONE PreemptMode=CANCEL\n"
		"   State=UP TotalCPUs=480 TotalNodes=5 SelectTypeParameters=NONE\n"
		"   JobDefaults=(null)\n"
		"   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
		"   TRES=cpu=480,mem=5T,node=5,billing=480,gres/gpu=40\n"
		"\n");
	cr_assert_null(strstr(buf_str(&b), "600"), "PreemptExemptTime is not a partition key");
	json_decref(p);
}

/*
 * Dynamic Resource Allocation: nodes whose GPUs are ResourceSlice devices
 * (no nvidia.com/gpu in their allocatable) are shown as the extended
 * resource's are: GRES gpu:TYPE:COUNT, and idle, mix or alloc from what the
 * ResourceClaims' allocations hold.
 */
static json_t *dra_classes, *dra_slices, *dra_claims;
static struct dra_nodes dra;

static json_t *dra_node(const char *name)
{
	return json_pack("{s:{s:s,s:{s:s}},s:{s:{s:s,s:s},s:[{s:s,s:s}]}}",
			 "metadata", "name", name, "labels", "kubernetes.io/os", "linux",
			 "status", "capacity", "cpu", "96", "memory", "1024Gi",
			 "conditions", "type", "Ready", "status", "True");
}

/* A slice of node's pool at generation: n devices of type ("gpu", "mig") and product. */
static json_t *dra_slice(const char *node, int generation, const char *type, int n,
			 const char *product)
{
	json_t *devices = json_array();

	for (int i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "%s-%d", type, i);
		json_array_append_new(devices, json_pack("{s:s,s:{s:{s:s},s:{s:s}}}", "name", name,
							 "attributes", "type", "string", type,
							 "productName", "string", product));
	}
	return json_pack("{s:{s:s,s:s,s:{s:s,s:i,s:i},s:o}}", "spec", "driver", "gpu.nvidia.com",
			 "nodeName", node, "pool", "name", node, "generation", generation,
			 "resourceSliceCount", 1, "devices", devices);
}

/* A claim holding the first n GPUs of node's pool. */
static json_t *dra_claim(const char *node, int n)
{
	json_t *results = json_array();

	for (int i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "gpu-%d", i);
		json_array_append_new(results, json_pack("{s:s,s:s,s:s,s:s}", "request", "gpus",
							 "driver", "gpu.nvidia.com", "pool", node,
							 "device", name));
	}
	return json_pack("{s:{s:s,s:s},s:{s:{s:{s:o}}}}", "metadata", "name", node, "namespace",
			 "ml", "status", "allocation", "devices", "results", results);
}

static void dra_setup(void)
{
	setup();
	json_decref(parts);
	json_decref(nodes);
	json_decref(pods);
	parts = json_pack("[{s:{s:s},s:{s:b,s:s}},{s:{s:s},s:{s:s,s:s}}]",
			  "metadata", "name", "dra", "spec", "default", 1, "maxTime", "1-00:00:00",
			  "metadata", "name", "mig", "spec", "maxTime", "4:00:00",
			  "deviceClassName", "mig.nvidia.com");
	nodes = json_array();
	for (int i = 3; i >= 0; i--) {
		char name[16];

		snprintf(name, sizeof(name), "dra-%d", i);
		json_array_append_new(nodes, dra_node(name));
	}
	pods = json_array();
	dra_classes = json_pack("[{s:{s:s},s:{s:s,s:[{s:{s:s}}]}},{s:{s:s},s:{s:[{s:{s:s}}]}}]",
				"metadata", "name", "gpu.nvidia.com", "spec",
				"extendedResourceName", "nvidia.com/gpu", "selectors", "cel",
				"expression", "device.driver == 'gpu.nvidia.com' && "
				"device.attributes['gpu.nvidia.com'].type == 'gpu'",
				"metadata", "name", "mig.nvidia.com", "spec", "selectors", "cel",
				"expression", "device.driver == 'gpu.nvidia.com' && "
				"device.attributes['gpu.nvidia.com'].type == 'mig'");
	dra_slices = json_array();
	/* dra-0's pool was republished: generation 1's A100s are no longer there. */
	json_array_append_new(dra_slices, dra_slice("dra-0", 1, "gpu", 4, "NVIDIA A100-SXM4-80GB"));
	json_array_append_new(dra_slices, dra_slice("dra-0", 2, "gpu", 8, "NVIDIA H100 80GB HBM3"));
	json_array_append_new(dra_slices, dra_slice("dra-1", 1, "gpu", 8, "NVIDIA H100 80GB HBM3"));
	json_array_append_new(dra_slices, dra_slice("dra-2", 1, "gpu", 8, "NVIDIA H100 80GB HBM3"));
	json_array_append_new(dra_slices, dra_slice("dra-3", 1, "mig", 2, "NVIDIA H100 80GB HBM3"));
	dra_claims = json_array();
	json_array_append_new(dra_claims, dra_claim("dra-0", 8));
	json_array_append_new(dra_claims, dra_claim("dra-1", 3));
	cr_assert_eq(dra_nodes_build(dra_classes, dra_slices, dra_claims, &dra), 0);
}

static void dra_teardown(void)
{
	dra_nodes_release(&dra);
	json_decref(dra_classes);
	json_decref(dra_slices);
	json_decref(dra_claims);
	teardown();
}

TestSuite(sinfo_dra, .init = dra_setup, .fini = dra_teardown);

Test(sinfo_dra, dra_gpus_show_as_gres_and_their_claims_make_nodes_alloc_mix_or_idle)
{
	const struct sinfo_query q = { .partitions = "dra", .dra = &dra };

	cr_assert_eq(sinfo_table(&q, parts, nodes, pods, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
		"dra*         up 1-00:00:00      1    mix dra-1\n"
		"dra*         up 1-00:00:00      1  alloc dra-0\n"
		"dra*         up 1-00:00:00      2   idle dra-[2-3]\n");
	buf_reset(&b);
	cr_assert_eq(sinfo_table(&(struct sinfo_query){ .format = "%P %D %G %F %t %N",
							.partitions = "dra", .dra = &dra },
				 parts, nodes, pods, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"PARTITION NODES GRES NODES(A/I/O/T) STATE NODELIST\n"
		"dra* 1 gpu:h100:8 1/0/0/1 mix dra-1\n"
		"dra* 1 gpu:h100:8 1/0/0/1 alloc dra-0\n"
		"dra* 1 (null) 0/1/0/1 idle dra-3\n"
		"dra* 1 gpu:h100:8 0/1/0/1 idle dra-2\n");
}

/* A partition's deviceClassName says which devices are its nodes' GPUs. */
Test(sinfo_dra, a_partitions_device_class_picks_its_nodes_devices)
{
	cr_assert_eq(sinfo_table(&(struct sinfo_query){ .format = "%P %D %G %t %N", .node_flag = true,
							.dra = &dra },
				 parts, nodes, pods, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"PARTITION NODES GRES STATE NODELIST\n"
		"dra* 1 gpu:h100:8 alloc dra-0\n"
		"mig 1 (null) idle dra-0\n"
		"dra* 1 gpu:h100:8 mix dra-1\n"
		"mig 1 (null) idle dra-1\n"
		"dra* 1 gpu:h100:8 idle dra-2\n"
		"mig 1 (null) idle dra-2\n"
		"dra* 1 (null) idle dra-3\n"
		"mig 1 gpu:h100:2 idle dra-3\n");
}

/* Without the claims, what DRA GPUs are held is not known: unk, as without the pods. */
Test(sinfo_dra, without_the_claims_a_node_of_dra_gpus_is_unk)
{
	const struct sinfo_query q = { .format = "%P %D %t %N", .partitions = "dra", .dra = &dra,
				       .dra_claims_unknown = true };

	json_array_append_new(nodes, node("gpu-node-0", "True", false));
	cr_assert_eq(sinfo_table(&q, parts, nodes, pods, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"PARTITION NODES STATE NODELIST\n"
		"dra* 2 idle dra-3,gpu-node-0\n"
		"dra* 3 unk dra-[0-2]\n");
}

/* A node listing nvidia.com/gpu takes the device plugin's path, whatever the slices say. */
Test(sinfo_dra, a_node_with_the_extended_resource_is_read_as_before)
{
	json_t *old = node("dra-1", "True", false);

	json_array_set_new(nodes, 2, old);
	cr_assert_eq(sinfo_table(&(struct sinfo_query){ .format = "%G %t %N", .partitions = "dra",
							.dra = &dra },
				 parts, nodes, pods, &b), 0);
	cr_assert_str_eq(buf_str(&b),
		"GRES STATE NODELIST\n"
		"gpu:h100:8 alloc dra-0\n"
		"(null) idle dra-3\n"
		"gpu:h100:8 idle dra-[1-2]\n");
}

Test(sinfo_dra, scontrol_show_partition_counts_dra_gpus_in_tres)
{
	cr_assert_eq(sinfo_show_partition(NULL, parts, nodes, NULL, &dra, &b), 0);
	cr_assert(strstr(buf_str(&b), "PartitionName=dra\n"), "%s", buf_str(&b));
	cr_assert(strstr(buf_str(&b), "   TRES=cpu=384,mem=4T,node=4,billing=384,gres/gpu=24\n\n"
				      "PartitionName=mig\n"), "%s", buf_str(&b));
	cr_assert(strstr(buf_str(&b), "   TRES=cpu=384,mem=4T,node=4,billing=384,gres/gpu=2\n\n"),
		  "%s", buf_str(&b));
	buf_reset(&b);
	cr_assert_eq(sinfo_show_partition("dra", parts, nodes, NULL, NULL, &b), 0);
	cr_assert(strstr(buf_str(&b), "   TRES=cpu=384,mem=4T,node=4,billing=384\n\n"),
		  "without DRA, no gres: %s", buf_str(&b));
}

Test(sinfo_dra, json_rows_carry_the_dra_gres)
{
	json_t *doc;

	cr_assert_eq(sinfo_json(&(struct sinfo_query){ .partitions = "dra", .dra = &dra }, parts,
				nodes, pods, &b), 0);
	doc = json_loads(buf_str(&b), 0, NULL);
	cr_assert(doc);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(
		json_object_get(doc, "sinfo"), 0), "gres"), "total")), "gpu:h100:8");
	json_decref(doc);
}

Test(sinfo_dra, dra_product_names_become_gres_types)
{
	char t[64];

	sinfo_gres_type("NVIDIA H100 80GB HBM3", t);
	cr_assert_str_eq(t, "h100");
	sinfo_gres_type("NVIDIA GeForce RTX 4090", t);
	cr_assert_str_eq(t, "rtx");
	sinfo_gres_type("NVIDIA_H100", t);
	cr_assert_str_eq(t, "nvidia", "a label's underscore is read as before");
}
