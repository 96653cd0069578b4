/*
 * volume_affinity.h - where a job's Volumes can be mounted, for built-in
 * gang admission (docs/gang-admission.md, "What admission models and what
 * it refuses").
 *
 * A zonal disk's PersistentVolume carries a required node affinity (a
 * topology.kubernetes.io/zone term, or the zone labels of older
 * provisioners); kube-scheduler places a pod that mounts it only on nodes
 * it allows. The PVs are in the controller's cache already (for the
 * Volumes' own reconciler), so they are read at each decision, never
 * copied anywhere: nothing can go stale.
 */
#ifndef CADRE_VOLUME_AFFINITY_H
#define CADRE_VOLUME_AFFINITY_H

#include "controller/admission/affinity.h"

struct manager;
struct trainingjob;

/*
 * Add to a what the PersistentVolume bound to each of job's Volumes asks of
 * a node (affinity_add_pv), found through the caches: the Volume's
 * status.claimName, the claim's spec.volumeName. A Volume, claim or PV the
 * caches do not hold adds nothing (such a job waits Pending, not for
 * admission). job must outlive a. Returns 0 or CADRE_ENOMEM.
 */
int volume_affinity_add(struct manager *m, const struct trainingjob *job, struct affinity *a);

#endif
