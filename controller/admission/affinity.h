/*
 * affinity.h - where a rank may go, beyond its resources, as built-in gang
 * admission models it before it pins the rank to a node
 * (docs/gang-admission.md, "What admission models and what it refuses").
 *
 * Built-in mode pins every rank with a required node affinity, so a
 * constraint kube-scheduler checks and admission does not would pin ranks
 * where the scheduler refuses them, and the gang would time out again and
 * again. So admission reads, from the job and the PersistentVolumes of its
 * Volumes:
 *  - the podTemplate's required node affinity (terms OR-ed, their
 *    requirements on labels and on metadata.name AND-ed);
 *  - a required pod anti-affinity between the gang's own ranks per host
 *    (topologyKey kubernetes.io/hostname, a labelSelector that selects this
 *    job's pods only): at most one rank a node;
 *  - each bound PersistentVolume's required node affinity, and its zone and
 *    region labels (kube-scheduler's VolumeBinding and VolumeZone checks);
 * and affinity_refuse_builtin() names what it cannot model (pod affinity,
 * anti-affinity to other pods or other domains), which built-in mode refuses.
 *
 * A struct affinity owns the selectors it builds; strings in them are
 * borrowed from the JSON given (the job's, or a PersistentVolume it holds a
 * reference to). Not thread-safe; one per decision.
 */
#ifndef CADRE_AFFINITY_H
#define CADRE_AFFINITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "controller/admission/node_selector.h"

struct trainingjob;
struct field_errors;

/* The label kube-scheduler's per-host anti-affinity names, and the only one modelled. */
#define AFFINITY_HOSTNAME_KEY "kubernetes.io/hostname"

struct affinity {
	struct node_selector *selectors;  /* every one must match; owned */
	size_t n_selectors;
	bool one_per_node;                /* anti-affinity between the ranks per host */
	/* What the selectors point into: blocks to free, JSON held. */
	void **blocks;
	size_t n_blocks;
	json_t **held;
	size_t n_held;
};

void affinity_init(struct affinity *a);
void affinity_release(struct affinity *a);

/*
 * Add job's podTemplate affinity: its required node affinity as one
 * selector, and one_per_node when a required anti-affinity term keeps its
 * own ranks apart per host. Terms affinity_refuse_builtin() refuses are left
 * out (the caller refuses the job). job must outlive a.
 * Returns 0 or CADRE_ENOMEM.
 */
int affinity_add_template(struct affinity *a, const struct trainingjob *job);

/*
 * Add a NodeSelector object ({nodeSelectorTerms: [...]}) as one selector;
 * volume (may be NULL) names the Volume it comes from. sel must outlive a.
 * Returns 0 or CADRE_ENOMEM.
 */
int affinity_add_node_selector(struct affinity *a, const json_t *sel, const char *volume);

/*
 * Add what kube-scheduler checks of a bound PersistentVolume for the pods
 * that mount it, volume naming the Volume: spec.nodeAffinity.required, and
 * for each zone or region label (topology.kubernetes.io/zone and /region,
 * and their failure-domain.beta.kubernetes.io forms; "a__b" is either of
 * two) that a node carrying any of those labels must carry with one of its
 * values. a takes a reference to pv. Returns 0 or CADRE_ENOMEM.
 */
int affinity_add_pv(struct affinity *a, json_t *pv, const char *volume);

/*
 * Add to errs, with the path of each field, what built-in admission cannot
 * model in job's podTemplate: required pod affinity, and required pod
 * anti-affinity other than between its own ranks per host. Returns how many
 * problems it added (0: built-in mode can place the job).
 */
size_t affinity_refuse_builtin(const struct trainingjob *job, struct field_errors *errs);

#endif
