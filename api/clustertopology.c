/*
 * clustertopology.c - the cluster's topology levels (clustertopology.h).
 */
#include "api/clustertopology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/name.h"
#include "base/err.h"

/*
 * Coarse to fine. Each cloud labels its own few of these, so one list
 * serves them all: a job names the level its cluster has. Sources:
 * NVIDIA topograph's node-labels reference (GKE, AWS, OCI, NVIDIA labels),
 * Kubernetes' well-known labels (zone).
 */
const struct cluster_topology_level cluster_topology_builtin[] = {
	{ "topology.kubernetes.io/zone", "zone" },
	{ "network.topology.nvidia.com/core", "core" },
	{ "network.topology.nvidia.com/spine", "spine" },
	{ "topology.k8s.aws/network-node-layer-1", "network-node-layer-1" },
	{ "cloud.google.com/gce-topology-block", "gce-topology-block" },
	{ "oci.oraclecloud.com/host.network_block_id", "network-block" },
	{ "topology.k8s.aws/network-node-layer-2", "network-node-layer-2" },
	{ "network.topology.nvidia.com/leaf", "leaf" },
	{ "cloud.google.com/gce-topology-subblock", "gce-topology-subblock" },
	{ "topology.k8s.aws/network-node-layer-3", "network-node-layer-3" },
	{ "oci.oraclecloud.com/host.rack_id", "rack" },
	{ "network.topology.nvidia.com/accelerator", "accelerator" },
	{ "nvidia.com/gpu.clique", "nvlink-clique" },
};
const size_t cluster_topology_builtin_count =
	sizeof(cluster_topology_builtin) / sizeof(cluster_topology_builtin[0]);

void cluster_topology_init(struct cluster_topology *t)
{
	memset(t, 0, sizeof(*t));
}

void cluster_topology_release(struct cluster_topology *t)
{
	for (size_t i = 0; i < t->n_levels; i++) {
		free(t->labels[i]);
		free(t->names[i]);
	}
	free(t->default_level);
	cluster_topology_init(t);
}

int cluster_topology_builtin_levels(struct cluster_topology *t)
{
	cluster_topology_init(t);
	snprintf(t->source, sizeof(t->source), "cadre's built-in levels");
	for (size_t i = 0; i < cluster_topology_builtin_count; i++) {
		t->labels[i] = strdup(cluster_topology_builtin[i].label);
		t->names[i] = strdup(cluster_topology_builtin[i].name);
		t->n_levels++;
		if (!t->labels[i] || !t->names[i])
			return CADRE_ENOMEM;
	}
	return 0;
}

int cluster_topology_index(const struct cluster_topology *t, const char *label)
{
	for (size_t i = 0; label && i < t->n_levels; i++)
		if (!strcmp(t->labels[i], label))
			return (int)i;
	return -1;
}

int cluster_topology_parse(const json_t *obj, struct cluster_topology *t,
			   struct field_errors *errs)
{
	const json_t *spec = json_object_get(obj, "spec"), *levels, *item;
	char path[DECODE_PATH_MAX];
	struct decoder d;
	size_t i;

	cluster_topology_init(t);
	snprintf(t->source, sizeof(t->source), CLUSTER_TOPOLOGY_KIND " "
		 CLUSTER_TOPOLOGY_NAME);
	decode_init(&d, errs);
	if (!json_is_object(spec)) {
		decode_fail(&d, "spec", "required");
		return decode_finish(&d);
	}
	levels = decode_array(&d, spec, "spec", "levels");
	if (!levels || !json_array_size(levels) ||
	    json_array_size(levels) > CLUSTER_TOPOLOGY_MAX_LEVELS)
		decode_fail(&d, "spec.levels", "must list 1 to %d levels, coarse to fine",
			    CLUSTER_TOPOLOGY_MAX_LEVELS);
	json_array_foreach(levels, i, item) {
		char *label = NULL, *name = NULL;

		if (i >= CLUSTER_TOPOLOGY_MAX_LEVELS)
			break;
		decode_path_index(path, sizeof(path), "spec.levels", i);
		if (!decode_as_object(&d, item, path))
			continue;
		decode_string(&d, item, path, "nodeLabel", &label);
		decode_string(&d, item, path, "name", &name);
		if (!label || !name_is_qualified(label)) {
			char sub[DECODE_PATH_MAX];

			decode_path(sub, sizeof(sub), path, "nodeLabel");
			decode_fail(&d, sub, label ? "\"%.64s\" is not a node label key" :
				    "required", label);
		} else if (cluster_topology_index(t, label) >= 0) {
			decode_fail(&d, path, "%.64s is a level already", label);
		} else {
			t->labels[t->n_levels] = label;
			t->names[t->n_levels++] = name;
			continue;
		}
		free(label);
		free(name);
	}
	if (decode_string(&d, spec, "spec", "defaultLevel", &t->default_level) &&
	    cluster_topology_index(t, t->default_level) < 0)
		decode_fail(&d, "spec.defaultLevel", "\"%.64s\" is not one of spec.levels",
			    t->default_level);
	return decode_finish(&d);
}
