/*
 * partition.h - the Partition kind (cadre.dev/v1alpha1, cluster-scoped,
 * short name part): what a Slurm partition is on Kubernetes, owned by the
 * cluster's admin (docs/design.md 11). Its name is the partition's name;
 * its spec says where and how the jobs that name it run:
 *
 *   spec:
 *     default: true                  # at most one: jobs that name none use it
 *     nodeSelector: {pool: gpu}      # the partition's nodes
 *     tolerations: [...]             # and the taints its jobs may ignore
 *     defaultImage: nvcr.io/...      # a job without spec.image runs this
 *     defaultTime: "1:00:00"         # Slurm times: a job without a limit gets this,
 *     maxTime: "7-00:00:00"          #   and none may ask for more
 *     defaultAccelerators: "H100:8"  # a job that asks for no accelerators gets these
 *     deviceClassName: gpu.nvidia.com # its accelerators come through DRA, from this
 *                                    #   DeviceClass (docs/dra.md); absent: a device plugin
 *     queue: team-a                  # a Kueue LocalQueue its jobs wait in (optional)
 *     allowedNamespaces: [ml, vision] # who may use it (Slurm's AllowAccounts); absent: all
 *     maxJobPriority: 50             # the highest spec.priority a job may ask
 *     features:                      # what sbatch -C names: a feature is had by the
 *       a100: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}  # nodes with these labels
 *     priorityTier: 10               # Slurm's PriorityTier (default 0): higher tiers are
 *                                    #   scheduled first and may preempt lower ones' jobs
 *     preemptMode: Requeue           # what preemption does to this partition's jobs:
 *                                    #   Off (default: never preempted), Requeue, Cancel
 *     graceTimeSeconds: 120          # Slurm's GraceTime: SIGTERM to kill for a victim;
 *                                    #   absent: the job's signal.secondsBefore, else 30
 *     preemptExemptTimeSeconds: 600  # Slurm's PreemptExemptTime: no job here is preempted
 *                                    #   before it has run this long (default 0)
 *
 * A TrainingJob names one with spec.partition; one that names neither a
 * partition nor a queue gets the default partition, if there is one. The
 * partition it got is recorded in the job's status.partition, so a later
 * change of the default does not move it. With no Partition objects at
 * all nothing changes. Applying a partition (partition_apply) makes an
 * effective spec in memory; the controller never writes it back.
 *
 * Pure: no I/O, no globals; not thread-safe per object. A struct partition
 * owns what it points to; json_t members are new references.
 */
#ifndef CADRE_API_PARTITION_H
#define CADRE_API_PARTITION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/meta.h"

struct field_errors;
struct tj_scratch;
struct tj_spec;

#define PARTITION_KIND "Partition"
/* spec.allowedNamespaces holds at most this many (the schema's maxItems). */
#define PARTITION_NAMESPACES_MAX 256
/* spec.features defines at most this many (the schema's maxProperties). */
#define PARTITION_FEATURES_MAX 128
/*
 * spec.priorityTier's ceiling, slurm.conf(5)'s "may not exceed 65533": a
 * uint16_t whose top two values are Slurm's NO_VAL16 and INFINITE16.
 */
#define PARTITION_PRIORITY_TIER_MAX 65533
/* spec.graceTimeSeconds at most a day, as the schema's maximum. */
#define PARTITION_GRACE_SECONDS_MAX 86400
/* spec.preemptExemptTimeSeconds at most a year (365 days), as the schema's maximum. */
#define PARTITION_PREEMPT_EXEMPT_SECONDS_MAX 31536000
/*
 * The grace of a victim when neither its partition nor its spec.signal says
 * one: Kubernetes' default terminationGracePeriodSeconds.
 */
#define PARTITION_GRACE_SECONDS_DEFAULT 30

/*
 * spec.preemptMode: what preemption does to a job of the partition, as
 * slurm.conf's PreemptMode of a partition (without Slurm's SUSPEND and
 * GANG, which need a suspended pod Kubernetes does not have).
 */
enum partition_preempt_mode {
	PARTITION_PREEMPT_OFF = 0,  /* never preempted */
	PARTITION_PREEMPT_REQUEUE,  /* stopped and queued again, as scontrol requeue */
	PARTITION_PREEMPT_CANCEL,   /* stopped for good */
};

struct partition_spec {
	bool is_default;           /* spec.default */
	json_t *node_selector;     /* object of strings; NULL when absent */
	json_t *tolerations;       /* array of Tolerations; NULL when absent */
	char *default_image;
	char *default_time;        /* raw Slurm time, NULL when absent */
	int64_t default_time_s;    /* -1: unlimited; 0: none given */
	char *max_time;
	int64_t max_time_s;        /* -1: unlimited (also when absent) */
	char *default_accelerators;
	char *device_class_name;   /* spec.deviceClassName: a DRA DeviceClass; NULL when absent */
	char *queue;               /* a Kueue LocalQueue name */
	struct tj_scratch *scratch; /* spec.scratch: a job's that names none, sorted */
	size_t n_scratch;
	/* spec.allowedNamespaces: NULL when absent (every namespace), else n of them. */
	char **allowed_namespaces;
	size_t n_allowed_namespaces;
	bool has_max_job_priority;  /* spec.maxJobPriority given */
	int32_t max_job_priority;
	/* spec.features: feature name -> {label: value, ...}; NULL when absent. */
	json_t *features;
	/* Preemption, as Slurm's partition settings of the same names. */
	int32_t priority_tier;       /* spec.priorityTier, 0 when absent */
	enum partition_preempt_mode preempt_mode;  /* spec.preemptMode, Off when absent */
	bool has_grace_time;         /* spec.graceTimeSeconds given */
	int64_t grace_time_s;        /* its value; partition_grace_seconds says the default */
	int64_t preempt_exempt_s;    /* spec.preemptExemptTimeSeconds, 0 when absent */
};

struct partition {
	struct object_meta meta;
	struct partition_spec spec;
};

void partition_init(struct partition *p);
void partition_release(struct partition *p);

/*
 * Read a Partition object (borrowed) into out, initialised here, and check
 * it: a DNS-1123 name, Slurm times, an accelerators text as a
 * TrainingJob's, a queue that is a DNS-1123 subdomain, string label values,
 * tolerations as a pod's, defaultTime not past maxTime, the preemption
 * fields within the schema's bounds and enum. Problems go to errs with
 * their paths. 0, CADRE_EINVAL when it added errors (out holds what could
 * be read), CADRE_ENOMEM. Release out whatever it returns.
 */
int partition_parse(const json_t *obj, struct partition *out, struct field_errors *errs);

/* "Off", "Requeue" or "Cancel": spec.preemptMode's text (static; "Off" for no mode). */
const char *partition_preempt_mode_name(enum partition_preempt_mode mode);

/*
 * The seconds a job of partition p gets between the SIGTERM of its
 * preemption and the kill: p's spec.graceTimeSeconds, else the job's
 * spec.signal.secondsBefore when it has a spec.signal (job_has_signal;
 * signal_seconds_before its value), else PARTITION_GRACE_SECONDS_DEFAULT.
 * p may be NULL (no partition: the job's own say). Pure.
 */
int64_t partition_grace_seconds(const struct partition_spec *p, bool job_has_signal,
				int64_t signal_seconds_before);

/*
 * The default partition of parts[0..n): the oldest (then first by name)
 * of those with spec.default. When more than one claims it, *contested
 * (may be NULL) is set. NULL when none.
 */
const struct partition *partition_default(const struct partition *parts, size_t n,
					  bool *contested);

/* The partition named name, or NULL. */
const struct partition *partition_find(const struct partition *parts, size_t n,
				       const char *name);

/*
 * Which partition a job uses: status.partition once recorded, else
 * spec.partition, else (when it names no queue either) the default one.
 * *name is the name it uses (NULL: none, today's behaviour); *found the
 * partition, NULL when the name is none of parts (the job cannot run).
 */
void partition_pick(const struct partition *parts, size_t n, const char *recorded,
		    const char *spec_partition, const char *spec_queue, const char **name,
		    const struct partition **found);

/*
 * Fill what spec leaves to its partition: image, activeDeadlineSeconds
 * (defaultTime, else maxTime, as Slurm), accelerators (defaultAccelerators), queue,
 * the DeviceClass its accelerators come from (deviceClassName); add the
 * partition's nodeSelector (a key the job sets keeps the job's value) and
 * tolerations to spec.podTemplate. 0 or CADRE_ENOMEM.
 */
int partition_apply(const struct partition *p, struct tj_spec *spec);

struct decoder;

/* spec.features of a Partition's spec object into *out, checked (partition_features.c). */
void partition_decode_features(struct decoder *d, const json_t *spec, json_t **out);

/*
 * Whether constraint (spec.constraint) names a feature p's spec.features
 * does not define; which one into why. false for a constraint that does
 * not parse (tj_validate says why).
 */
bool partition_lacks_feature(const struct partition *p, const char *constraint, char *why,
			     size_t size);

/*
 * spec.constraint as a required node affinity of the pod template, with
 * the labels of p's features: every nodeSelectorTerm of the template
 * AND-ed with each OR-ed part of the constraint. Nothing for no constraint
 * or one p lacks a feature of. 0 or CADRE_ENOMEM. partition_apply calls it.
 */
int partition_apply_constraint(const struct partition *p, struct tj_spec *spec);

/*
 * Why spec (before partition_apply) cannot run in p, for a person (out,
 * at least 256 bytes): a time limit past maxTime, or a queue other than
 * the partition's. false when it can.
 */
bool partition_refuses(const struct partition *p, const struct tj_spec *spec, char *out,
		       size_t size);

/*
 * Why a job of namespace ns, asking spec (its spec.priority), may not be
 * submitted to p, for a person (out, at least 256 bytes), naming the
 * field: ns not in spec.allowedNamespaces, or spec.priority above
 * maxJobPriority. false when it may. These are rules of submission: the
 * controller asks only while the job waits for admission, so an admin's
 * later edit never fails a running job (docs/design.md 11).
 */
bool partition_forbids(const struct partition *p, const char *ns, const struct tj_spec *spec,
		       char *out, size_t size);

#endif
