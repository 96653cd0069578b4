/*
 * build.h - the objects a TrainingJob or a Volume turns into, as JSON ready
 * to POST: the headless Service and the pods of a gang (DESIGN.md 2), the
 * PersistentVolumeClaim of a Volume and, for NFS, its PersistentVolume
 * (DESIGN.md 4). docs/pods.md explains what a pod looks like and why.
 *
 * Pure: the same input gives the same JSON, byte for byte once dumped with
 * sorted keys; no I/O, no clock, no globals. Thread-safe.
 *
 * Every builder returns 0 and stores a new reference in *out, or returns a
 * negative code, leaves *out NULL and appends to err (when err is not NULL)
 * one message that starts with the path of the field at fault:
 *   CADRE_EINVAL  the spec cannot become this object ("spec.image: ...");
 *                 the reconciler reports it as InvalidSpec;
 *   CADRE_EAGAIN  nothing is wrong with the spec but the cluster cannot take
 *                 the pod yet: accelerators are asked for and no Node carries
 *                 a matching label value; the job stays Queued with the
 *                 message;
 *   CADRE_ENOMEM  out of memory.
 * The inputs are borrowed; the results share no memory with them.
 */
#ifndef CADRE_BUILD_H
#define CADRE_BUILD_H

#include <jansson.h>
#include <stddef.h>

#include "api/trainingjob.h"
#include "api/volume.h"
#include "controller/options.h"

struct buf;

/* Labels cadre puts on what it creates (DESIGN.md 2.1, 2.2, 4). */
#define BUILD_LABEL_JOB_NAME "cadre.dev/job-name"
#define BUILD_LABEL_NODE_RANK "cadre.dev/node-rank"
#define BUILD_LABEL_RESTART_ATTEMPT "cadre.dev/restart-attempt"
#define BUILD_LABEL_VOLUME "cadre.dev/volume"
/* On an NFS PV, beside BUILD_LABEL_VOLUME: a PV is cluster-scoped. */
#define BUILD_LABEL_VOLUME_NAMESPACE "cadre.dev/volume-namespace"
/* The job's uid on each pod, so a pod left by an earlier job of the same name is told apart. */
#define BUILD_ANNOTATION_JOB_UID "cadre.dev/job-uid"
/* The scheduling gate of built-in gang admission (DESIGN.md 3.1). */
#define BUILD_GANG_GATE "cadre.dev/gang"
/* Kueue's pod-group contract (DESIGN.md 3.2). */
#define BUILD_KUEUE_QUEUE_LABEL "kueue.x-k8s.io/queue-name"
#define BUILD_KUEUE_GROUP_LABEL "kueue.x-k8s.io/pod-group-name"
#define BUILD_KUEUE_COUNT_ANNOTATION "kueue.x-k8s.io/pod-group-total-count"
/* --accelerator-label's default. */
#define BUILD_DEFAULT_ACCELERATOR_LABEL "nvidia.com/gpu.product"
/*
 * The writable emptyDir the entrypoint writes srun, scontrol and module
 * into, first on PATH (DESIGN.md 2.4; docs/pods.md).
 */
#define BUILD_BIN_DIR "/cadre/bin"
/* SLURM_CLUSTER_NAME on every pod. */
#define BUILD_SLURM_CLUSTER_NAME "cadre"
/* Size written on an NFS PV and its claim when the Volume gives none; NFS enforces no size. */
#define BUILD_NFS_NOMINAL_SIZE "1Gi"

/*
 * What the controller knows that the job does not. Borrowed; the arrays
 * may be NULL when their count is 0.
 */
struct build_opts {
	/*
	 * --gang-scheduler. A job with spec.queue set is built for Kueue
	 * whatever this says (DESIGN.md 3.2).
	 */
	enum gang_mode mode;
	/* --accelerator-label; NULL means BUILD_DEFAULT_ACCELERATOR_LABEL. */
	const char *accelerator_label;
	/*
	 * --cluster-domain; NULL means OPTIONS_DEFAULT_CLUSTER_DOMAIN. Each pod
	 * searches <job>.<namespace>.svc.<this>, so peers' short host names
	 * resolve (DESIGN.md 2.4).
	 */
	const char *cluster_domain;
	/* --default-image, used when spec.image is absent; NULL if not given. */
	const char *default_image;
	/*
	 * Values of the accelerator label seen on Nodes whose value matches
	 * the job's accelerator type. The pod requires one of them (node
	 * affinity). Values that do not match the type are ignored and
	 * duplicates dropped; the rest are written sorted. Unused when the job
	 * asks for no accelerators.
	 */
	const char *const *label_values;
	size_t n_label_values;
	/*
	 * The PVC name of each spec.volumes entry, in the order of
	 * spec.volumes (the Volume's status.claimName). n_claim_names must
	 * equal spec.n_volumes and each name must be set.
	 */
	const char *const *claim_names;
	size_t n_claim_names;
};

/*
 * The headless Service of job (DESIGN.md 2.1): named after the job,
 * clusterIP None, publishNotReadyAddresses, selecting the job's pods, one
 * TCP port "master" = masterPort, owned by the job. Needs metadata.name,
 * namespace and uid.
 */
int build_service(const struct trainingjob *job, json_t **out, struct buf *err);

/*
 * Pod rank (0 <= rank < numNodes) of attempt attempt (status.restarts +
 * status.infraRestarts; it names the Kueue pod group and is exported as
 * CADRE_RESTART_ATTEMPT) of job. The job must be validated (tj_validate)
 * and carry status.jobId and status.taskId: pass the status the
 * reconciler is about to write, not an older one.
 */
int build_pod(const struct trainingjob *job, int rank, int attempt,
	      const struct build_opts *opts, json_t **out, struct buf *err);

/*
 * The PVC that a k8s-pvc or nfs Volume is mounted through: named after the
 * Volume, in its namespace, labelled cadre.dev/volume=<name>, owned by the
 * Volume only when reclaimPolicy is Delete. For nfs it is pre-bound to the
 * PV build_pv makes (volumeName, storageClassName ""). A Volume with
 * spec.claimName adopts that claim and has none built: CADRE_EINVAL.
 */
int build_pvc(const struct volume *vol, json_t **out, struct buf *err);

/*
 * The PV of an nfs Volume: named build_pv_name(), the export as given,
 * persistentVolumeReclaimPolicy Retain (cadre deletes it itself, the data
 * stays), storageClassName "", claimRef naming the PVC so no other claim
 * can bind it. Not owned: a cluster-scoped object cannot be owned by a
 * namespaced one. CADRE_EINVAL for any other type.
 */
int build_pv(const struct volume *vol, json_t **out, struct buf *err);

/*
 * "cadre-<namespace>-<name>" into out (size bytes). Returns 0, or
 * CADRE_EINVAL when the Volume lacks a name or namespace, or the result is
 * longer than an object name may be (253) or than size allows.
 */
int build_pv_name(const struct volume *vol, char *out, size_t size);

/*
 * metadata.ownerReferences naming one controlling owner, with
 * blockOwnerDeletion so a foreground delete waits for what it owns: a new
 * reference in *out. Returns 0 or CADRE_ENOMEM (also for a NULL argument).
 */
int build_owner_refs(const char *api_version, const char *kind, const char *name,
		     const char *uid, json_t **out);

/*
 * For the builders: append "<path>: <message>" to err (if not NULL) and
 * return code, so a failure is one line, `return build_fail(...)`.
 */
int build_fail(struct buf *err, int code, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
