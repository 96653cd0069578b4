/*
 * build.h - the objects a TrainingJob or a Volume turns into, as JSON ready
 * to POST: the headless Service and the pods of a gang (docs/design.md 2), the
 * PersistentVolumeClaim of a Volume and, for NFS, its PersistentVolume
 * (docs/design.md 4). docs/pods.md explains what a pod looks like and why.
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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/labels.h"
#include "api/trainingjob.h"
#include "api/volume.h"
#include "controller/options.h"

struct buf;

/* cadre's own labels, annotations and gate are in api/labels.h. */
/* Kueue's pod-group contract (docs/design.md 3.2). */
#define BUILD_KUEUE_QUEUE_LABEL "kueue.x-k8s.io/queue-name"
#define BUILD_KUEUE_GROUP_LABEL "kueue.x-k8s.io/pod-group-name"
#define BUILD_KUEUE_COUNT_ANNOTATION "kueue.x-k8s.io/pod-group-total-count"
/* Kueue's topology-aware scheduling (TAS) on a pod group (v0.17, docs/topology.md). */
#define BUILD_KUEUE_TAS_REQUIRED "kueue.x-k8s.io/podset-required-topology"
#define BUILD_KUEUE_TAS_PREFERRED "kueue.x-k8s.io/podset-preferred-topology"
#define BUILD_KUEUE_TAS_SLICE_REQUIRED "kueue.x-k8s.io/podset-slice-required-topology"
#define BUILD_KUEUE_TAS_SLICE_SIZE "kueue.x-k8s.io/podset-slice-size"
#define BUILD_KUEUE_POD_INDEX_LABEL "kueue.x-k8s.io/pod-group-pod-index-label"
/* The PodGroup versions of native gang mode (docs/gang-admission.md). */
#define BUILD_PODGROUP_V1ALPHA2 "scheduling.k8s.io/v1alpha2"  /* Kubernetes 1.36 */
#define BUILD_PODGROUP_V1BETA1 "scheduling.k8s.io/v1beta1"    /* Kubernetes 1.37 */
/* --accelerator-label's default. */
#define BUILD_DEFAULT_ACCELERATOR_LABEL "nvidia.com/gpu.product"
/*
 * The writable emptyDir the entrypoint writes srun, scontrol and module
 * into, first on PATH (docs/design.md 2.4; docs/pods.md).
 */
#define BUILD_BIN_DIR "/cadre/bin"
/* spec.hang: the file a program may touch to show progress (in the pod's /dev/shm). */
#define BUILD_HEARTBEAT_FILE "/dev/shm/cadre-heartbeat"
/*
 * The job's ConfigMap that holds the entrypoint script: "<job>" this suffix
 * (docs/pods.md). A job name fits a 61-byte host name prefix, so the
 * ConfigMap's name stays far inside the 253 bytes an object name may have.
 */
#define BUILD_ENTRYPOINT_SUFFIX "-entrypoint"
/*
 * spec.code (docs/code.md): bundle i's ConfigMaps are mounted read-only at
 * BUILD_CODE_DIR "/<i>" (files 0, 1, ... in part order) and, for a
 * directory, an emptyDir code-dir-<i> at its path, which the entrypoint
 * unpacks into.
 */
#define BUILD_CODE_DIR "/cadre/code"

/* SLURM_CLUSTER_NAME on every pod. */
#define BUILD_SLURM_CLUSTER_NAME "cadre"
/* Size written on an NFS PV and its claim when the Volume gives none; NFS enforces no size. */
#define BUILD_NFS_NOMINAL_SIZE "1Gi"

/* One spec.code bundle as its ConfigMaps say (controller/code/code.h). */
struct build_code {
	uint32_t parts;   /* ConfigMaps cadre-code-<label>-0 .. parts-1 */
	bool file;        /* one file, written at its path; else a directory */
};

/*
 * What the controller knows that the job does not. Borrowed; the arrays
 * may be NULL when their count is 0.
 */
struct build_opts {
	/*
	 * --gang-scheduler. A job with spec.queue set is built for Kueue
	 * whatever this says (docs/design.md 3.2).
	 */
	enum gang_mode mode;
	/* --accelerator-label; NULL means BUILD_DEFAULT_ACCELERATOR_LABEL. */
	const char *accelerator_label;
	/*
	 * --cluster-domain; NULL means OPTIONS_DEFAULT_CLUSTER_DOMAIN. Each pod
	 * searches <job>.<namespace>.svc.<this>, so peers' short host names
	 * resolve (docs/design.md 2.4).
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
	/*
	 * Each spec.code bundle's parts and kind, in spec.code's order. A pod
	 * is built only once every bundle is whole: n_code must equal
	 * spec.n_code (else CADRE_EAGAIN).
	 */
	const struct build_code *code;
	size_t n_code;
	/*
	 * Built-in gang mode: the node the admission chose for this pod's rank.
	 * The pod requires it by name (node affinity matchFields metadata.name,
	 * AND-ed into every term), so kube-scheduler still checks the pod
	 * against it but places it nowhere else. NULL: not pinned.
	 */
	const char *node;
	/*
	 * --device-attribute: the ResourceSlice device attribute naming a
	 * device's type, for a job whose accelerators come through DRA
	 * (docs/dra.md); NULL means DRA_DEFAULT_ATTRIBUTE.
	 */
	const char *device_attribute;
};

/* Whether meta has a name, a namespace and (need_uid) a uid; else the error into err. */
int build_check_meta(const struct object_meta *meta, bool need_uid, struct buf *err);

/*
 * Accelerators through DRA (docs/dra.md, build_claims.c). A job whose
 * spec.resources.device_class is set gets one ResourceClaimTemplate,
 * "<job>-accelerators", owned by it: a request "accelerators" of
 * accel.count devices of the class whose --device-attribute holds the
 * type; each rank's pod claims its own claim from it. A job with
 * spec.computeDomain gets one ComputeDomain per attempt,
 * "<job>-<attempt>-cd", whose channel template "<job>-<attempt>-cd-channel"
 * (made by NVIDIA's ComputeDomain controller) every rank claims.
 */
bool build_uses_claim_template(const struct trainingjob *job);

/*
 * Whether the job's restarts are made in place (spec.restartStrategy
 * InPlace, docs/failures.md): in built-in and none mode, where no one but
 * cadre decides the pods; mode is the job's own (GANG_KUEUE for a job with
 * spec.queue, as the pod builder and the planner's input have it). Its pods then carry the restart rule, the attempt file
 * (BUILD_ATTEMPT_DIR) and ENTRYPOINT_ENV_ATTEMPT_FILE.
 */
bool build_in_place(const struct trainingjob *job, enum gang_mode mode);
#define BUILD_ATTEMPT_DIR "/cadre/attempt"
int build_claim_template_name(const char *job, char *out, size_t size);
int build_claim_template(const struct trainingjob *job, const struct build_opts *opts,
			 json_t **out, struct buf *err);
int build_compute_domain_name(const char *job, int attempt, char *out, size_t size);
int build_compute_domain(const struct trainingjob *job, int attempt, json_t **out,
			 struct buf *err);
/*
 * The pod's spec.resourceClaims (into *claims) and its container's
 * resources.claims (into *container): cadre's accelerators and channel,
 * then spec.resourceClaimsPerNode and podTemplate.spec.resourceClaims as
 * given. Both NULL when the job claims nothing. 0 or CADRE_ENOMEM.
 */
int build_pod_claims(const struct trainingjob *job, int attempt, json_t **claims,
		     json_t **container);

/*
 * The headless Service of job (docs/design.md 2.1): named after the job,
 * clusterIP None, publishNotReadyAddresses, selecting the job's pods, one
 * TCP port "master" = masterPort, owned by the job. Needs metadata.name,
 * namespace and uid.
 */
int build_service(const struct trainingjob *job, json_t **out, struct buf *err);

/*
 * "<job>-entrypoint" into out (size bytes): the name of the job's entrypoint
 * ConfigMap. 0, or CADRE_EINVAL without a name or when it does not fit.
 */
int build_entrypoint_name(const char *job, char *out, size_t size);

/*
 * The variables every rank of every attempt of job shares (docs/design.md
 * 2.3 and 2.4 but for the rank's and the restart count's; docs/pods.md,
 * "Environment") as one object, name -> value: the data of the job's
 * ConfigMap, which each pod takes whole by envFrom. status.jobId and
 * status.taskId are derived when the job has none stored yet, as the
 * planner derives them. CADRE_EINVAL (in err) when the job cannot become
 * pods, for build_pod's reasons, or CADRE_ENOMEM.
 */
int build_shared_env(const struct trainingjob *job, const struct build_opts *opts,
		     json_t **out, struct buf *err);

/*
 * The ConfigMap the pods of job mount their entrypoint from and take their
 * shared variables from: named build_entrypoint_name(), labelled
 * LABEL_JOB_NAME like the Service, owned by the job (controller,
 * blockOwnerDeletion); binaryData ENTRYPOINT_KEY = the script
 * (entrypoint_script_base64()), data = build_shared_env(), or nothing when
 * the job cannot become pods (build_pod then says why). Needs
 * metadata.name, namespace and uid.
 */
int build_entrypoint_configmap(const struct trainingjob *job, const struct build_opts *opts,
			       json_t **out, struct buf *err);

/* Room for a digest: 16 hex digits and the NUL. */
#define BUILD_DIGEST_SIZE 17

/*
 * A digest of a ConfigMap's data (NULL: none), the same for equal data
 * whatever the order of its keys: FNV-1a over its compact JSON with sorted
 * keys. What the controller's cache keeps of the data (configmap_trim.h).
 * 0 or CADRE_ENOMEM.
 */
int build_data_digest(const json_t *data, char out[BUILD_DIGEST_SIZE]);

/*
 * build_data_digest() of the data build_entrypoint_configmap() would write
 * for job now. 0 or CADRE_ENOMEM.
 */
int build_entrypoint_digest(const struct trainingjob *job, const struct build_opts *opts,
			    char out[BUILD_DIGEST_SIZE]);

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
 * The ephemeral-storage every rank's container requests: the sizes of the
 * job's emptyDir scratch (spec.scratch without a storageClassName) summed,
 * 0 when there is none. Admission charges a rank's node with it.
 */
int64_t build_scratch_request_milli(const struct trainingjob *job);

/*
 * "<job>-attempt-<attempt>" into out: the PodGroup of one attempt, so a
 * restart gets a fresh one (a 1.36 PodGroup's status records only its first
 * placement and its minCount cannot change). Returns 0 or CADRE_EINVAL
 * (no name, or longer than size or than an object name may be).
 */
int build_podgroup_name(const char *job, int attempt, char *out, size_t size);

/*
 * The standalone PodGroup of attempt attempt of job, for native gang mode
 * (docs/gang-admission.md): apiVersion api_version (BUILD_PODGROUP_V1ALPHA2 or
 * BUILD_PODGROUP_V1BETA1: the standalone shape is the same in both),
 * named build_podgroup_name(), labelled with the job and the attempt,
 * owned by the job, schedulingPolicy.gang.minCount = numNodes and the
 * job's priorityClassName. Needs metadata.name, namespace and uid.
 */
int build_podgroup(const struct trainingjob *job, int attempt, const char *api_version,
		   json_t **out, struct buf *err);

/*
 * Whether pod (as the API server returned it) still names podgroup in
 * spec.schedulingGroup.podGroupName. An API server whose GenericWorkload
 * gate is off drops the field without an error, and the pod would then be
 * scheduled on its own: a partial gang.
 */
bool build_pod_kept_scheduling_group(const json_t *pod, const char *podgroup);

/*
 * The PVC that a k8s-pvc or nfs Volume is mounted through: named after the
 * Volume, in its namespace, labelled cadre.dev/volume=<name>, owned by the
 * Volume only when reclaimPolicy is Delete. For nfs it is pre-bound to the
 * PV named pv_name (volumeName, storageClassName ""): the one build_pv
 * makes when pv_name is NULL, or a PV of the old scheme the Volume adopted
 * (build_pv_legacy_name). A Volume with spec.claimName adopts that claim and
 * has none built: CADRE_EINVAL.
 */
int build_pvc(const struct volume *vol, const char *pv_name, json_t **out, struct buf *err);

/*
 * Whether vol owns the claim it uses, so that the garbage collector takes
 * the claim when the Volume goes: only a reclaimPolicy Delete Volume, and
 * only of the claim cadre made for it (named after it). A claim adopted
 * through spec.claimName was brought by the user and is never owned,
 * whatever the policy (docs/volumes.md).
 */
bool build_claim_owned(const struct volume *vol);

/*
 * What makes the claim pvc (borrowed, as cached) carry vol's owner
 * reference exactly when build_claim_owned(vol) says so: *out is NULL when
 * it already does (nothing to send), or a new reference to a strategic
 * merge patch of metadata.ownerReferences keyed by the Volume's uid, so
 * that other owners are kept, guarded by the claim's resourceVersion, so
 * that a decision taken on an old copy fails (409) instead of landing. The
 * reference added is build_owner_refs()'s, but not the controller when the
 * claim already has one (the API server allows one). A reference counts as
 * vol's when its uid is vol's. CADRE_EINVAL when vol lacks name,
 * namespace or uid, or pvc lacks metadata.resourceVersion.
 */
int build_claim_owner_patch(const struct volume *vol, const json_t *pvc, json_t **out,
			    struct buf *err);

/*
 * The same patch removing vol's owner reference, unguarded: for the last
 * look before a Volume that does not own its claim lets go of it, when
 * the cache may not yet hold the claim's latest version. Keyed by uid it
 * removes nothing else and is a no-op when the reference is absent.
 * CADRE_EINVAL when vol lacks name, namespace or uid.
 */
int build_claim_disown_patch(const struct volume *vol, json_t **out, struct buf *err);

/*
 * The PV of an nfs Volume: named build_pv_name(), the export as given,
 * persistentVolumeReclaimPolicy Retain (cadre deletes it itself, the data
 * stays), storageClassName "", claimRef naming the PVC so no other claim
 * can bind it. Not owned: a cluster-scoped object cannot be owned by a
 * namespaced one. CADRE_EINVAL for any other type.
 */
int build_pv(const struct volume *vol, json_t **out, struct buf *err);

/*
 * The name of the PV cadre makes for an nfs Volume, into out (size bytes):
 * "cadre.<namespace>.<name>.<hash>", the hash being the first 16 hex digits
 * of SHA-256 over "<namespace>/<name>", the readable part cut so the whole
 * is at most 253 bytes, a DNS subdomain. A PV is cluster-scoped: the hash
 * keeps namespace ml's Volume prod-data and namespace ml-prod's Volume data
 * apart, where "cadre-<namespace>-<name>" gave both cadre-ml-prod-data.
 * Derived from the Volume's identity alone, so any controller process
 * finds the same name again after a crash; and no old-scheme name
 * (build_pv_legacy_name, "cadre-" ...) is ever a new one ("cadre." ...).
 * Pure. Returns 0, or CADRE_EINVAL when ns or name is missing or out is
 * too small (BUILD_PV_NAME_SIZE is enough); CADRE_ENOMEM when the digest
 * cannot be made.
 */
#define BUILD_PV_PREFIX "cadre."
#define BUILD_PV_NAME_SIZE 254
int build_pv_name_of(const char *ns, const char *name, char *out, size_t size);
/* build_pv_name_of() of vol's namespace and name. */
int build_pv_name(const struct volume *vol, char *out, size_t size);

/*
 * The name the PV of an nfs Volume had before: "cadre-<namespace>-<name>",
 * which two Volumes can share. Read only to adopt such a PV on upgrade,
 * and only when build_pv_is_volumes() says it is vol's. CADRE_EINVAL when
 * vol lacks a name or namespace, or the name would pass 253 bytes or size.
 */
int build_pv_legacy_name(const struct volume *vol, char *out, size_t size);

/*
 * Whether pv (borrowed) is labelled as vol's: cadre.dev/volume is vol's
 * name and cadre.dev/volume-namespace its namespace. cadre patches, deletes
 * or adopts no PV that is not: a PV of the right name but labelled for
 * another Volume, or not at all, is someone else's.
 */
bool build_pv_is_volumes(const json_t *pv, const struct volume *vol);

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
