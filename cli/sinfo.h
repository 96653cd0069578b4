/*
 * sinfo.h - internal to cli/: cadre sinfo's table, from the Partitions, the
 * Nodes and the pods bound to them (cli/sinfo.c), as Slurm's sinfo prints
 * it (src/sinfo/opts.c, print.c, sort.c @ SchedMD/slurm 284c3b9).
 *
 * A node is in a partition when it carries every label of the partition's
 * nodeSelector (all nodes when it has none). Its state, as sinfo's:
 *   down*  Ready is Unknown (the kubelet stopped answering: NO_RESPOND)
 *   down   Ready is False
 *   drain  cordoned (spec.unschedulable), nothing allocated; drng when
 *          something still runs on it
 *   alloc  every GPU requested by pods that have not ended (a node without
 *          GPUs: every CPU, by cadre's pods); of DRA GPUs, every one a
 *          ResourceClaim's allocation holds
 *   mix    some of them
 *   idle   none
 *   unk    the caller may not list pods cluster-wide (usage_unknown): the
 *          node is up, but whether anything runs on it is not known
 *          (cordoned: drain); a node of DRA GPUs, when the claims could not
 *          be listed (dra_claims_unknown)
 * GRES is gpu:TYPE:COUNT, TYPE from nvidia.com/gpu.product ("h100").
 * A node without a "/gpu" extended resource in its allocatable shows the
 * devices Dynamic Resource Allocation publishes on it instead (sinfo_query
 * dra): those of its partition's spec.deviceClassName, or, for a partition
 * naming none, of the GPU classes (dra_class_is_gpu); TYPE from the first
 * one's productName ("NVIDIA H100 80GB HBM3" is "h100" too).
 * %p (PRIO_TIER) is the partition's spec.priorityTier, in sinfo's units
 * (1024 is "1K").
 * cadre's own field %y (TOPOLOGY; sinfo --topology adds it) shows where a
 * node sits in the network: "block=b1,rack=r2" of the ClusterTopology's
 * levels it carries, "-" for none; rows group the nodes of one domain.
 *
 * Pure: no I/O.
 */
#ifndef CADRE_CLI_SINFO_H
#define CADRE_CLI_SINFO_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct buf;
struct dra_nodes;

/* sinfo's default formats (src/sinfo/opts.c), in the short form of -o. */
#define SINFO_FORMAT "%#P %.5a %.10l %.6D %.6t %N"
#define SINFO_FORMAT_LONG "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %.11i %N"
#define SINFO_FORMAT_NODE "%#N %.6D %.#P %6t"
#define SINFO_FORMAT_NODE_LONG "%#N %.6D %.#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E"

struct sinfo_query {
	const char *format;      /* -o; NULL: the default for node_flag/long */
	bool node_flag;          /* -N */
	bool long_output;        /* -l (the date line is the caller's) */
	bool noheader;           /* -h */
	const char *partitions;  /* -p LIST; NULL: all */
	const char *states;      /* -t LIST; NULL: all */
	/*
	 * The pods could not be listed (no cadre-cluster-usage, docs/install.md):
	 * an up node is unk rather than idle, which would claim what is not known.
	 */
	bool usage_unknown;
	/*
	 * The cluster's topology levels, coarse to fine (docs/topology.md), for
	 * cadre's own field %y (TOPOLOGY): each node's "name=value" of every level
	 * whose label it carries. labels[i] a node label key, names[i] what a
	 * person calls it (NULL: the label's last part).
	 */
	const char *const *topo_labels;
	const char *const *topo_names;
	size_t n_topo;
	/*
	 * The devices of Dynamic Resource Allocation (api/dra_nodes.h; borrowed),
	 * NULL when there are none or they could not be read: then the GPUs are
	 * the extended resources alone, as before DRA. dra_claims_unknown: the
	 * ResourceClaims could not be listed, so a node of DRA GPUs is unk.
	 */
	const struct dra_nodes *dra;
	bool dra_claims_unknown;
};

/*
 * Whether format is one sinfo reads here; *bad the offset of the first
 * field it does not know.
 */
bool sinfo_format_ok(const char *format, size_t *bad);

/* Whether every item of the comma-separated list is a node state sinfo -t knows. */
bool sinfo_states_ok(const char *list);

/*
 * The table for q from the items of the Partition, Node and Pod lists
 * (borrowed JSON arrays; pods may be NULL: nothing allocated), appended to
 * out; with json, {"sinfo": [...]} instead. 0, CADRE_EINVAL for a format
 * sinfo_format_ok refuses, CADRE_ENOMEM/CADRE_ETOOBIG.
 */
int sinfo_table(const struct sinfo_query *q, const json_t *partitions, const json_t *nodes,
		const json_t *pods, struct buf *out);
int sinfo_json(const struct sinfo_query *q, const json_t *partitions, const json_t *nodes,
	       const json_t *pods, struct buf *out);

/*
 * scontrol show partition [NAME]: the record of each Partition (of the one
 * named), as slurm_sprint_partition_info prints it (src/api/partition_info.c
 * @ 284c3b9, not one_liner), from the same lists as sinfo_table, appended
 * to out. AllowAccounts is spec.allowedNamespaces, comma-separated, or ALL;
 * PriorityTier is spec.priorityTier (cadre's default 0, not Slurm's 1),
 * PreemptMode spec.preemptMode in Slurm's words (OFF, REQUEUE, CANCEL),
 * GraceTime spec.graceTimeSeconds, else the 30 s a job without spec.signal
 * is given (a job with one, its secondsBefore); Nodes, TotalCPUs, TotalNodes
 * and TRES are the nodes sinfo puts in it; what cadre has no notion of
 * carries slurm.conf's default. maxJobPriority and preemptExemptTimeSeconds
 * (a slurm.conf and QOS setting in Slurm) have no key in Slurm's record and
 * are not invented one (kubectl get partition -o wide shows the first).
 * The TRES gres/gpu counts DRA GPUs as sinfo does (dra may be NULL). 0,
 * CADRE_ENOTFOUND when no record is shown, CADRE_ENOMEM.
 */
int sinfo_show_partition(const char *name, const json_t *partitions, const json_t *nodes,
			 const json_t *pods, const struct dra_nodes *dra, struct buf *out);

/*
 * cadre scontrol show partition [NAME]: lists the Partitions and Nodes
 * (and DeviceClasses and ResourceSlices, when the cluster serves them and
 * the user may list them) through k and prints
 * sinfo_show_partition's records to out; scontrol's "Partition NAME not
 * found" (exit 1) or "No partitions in the system". Returns the exit code.
 */
struct cli_kube;
int cli_show_partition(struct cli_kube *k, const char *name, FILE *out, FILE *err);

/*
 * "h100" from "NVIDIA-H100-80GB-HBM3" (a node's product label) or "NVIDIA
 * H100 80GB HBM3" (a DRA device's productName): the GRES type, into out.
 */
void sinfo_gres_type(const char *product, char out[64]);

#endif
