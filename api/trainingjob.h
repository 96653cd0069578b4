/*
 * trainingjob.h - the TrainingJob kind (cadre.dev/v1alpha1) as C structs:
 * reading it from JSON, its defaults, its validation, and its status as the
 * JSON the controller PUTs to /status.
 *
 * Field names follow docs/design.md section 1; every spec and status field there
 * has a member here. Pure: no I/O, no globals. Not thread-safe; one owner
 * at a time.
 *
 * Ownership: a struct trainingjob owns everything it points to. Strings are
 * heap copies; NULL means the field was absent or null (Kubernetes treats
 * an empty string in most optional names the same way, so users of a
 * field check `s && *s`). json_t members are new references to deep
 * copies, independent of the object parsed; NULL when absent.
 *
 *   struct trainingjob tj;
 *   struct field_errors errs;
 *   field_errors_init(&errs);
 *   if (tj_parse(obj, &tj, &errs) == 0 && tj_validate(&tj, &errs) == 0)
 *           use(&tj);
 *   else
 *           report(&errs);        // field_errors_join(): every problem, with its path
 *   tj_release(&tj);
 *   field_errors_release(&errs);
 */
#ifndef CADRE_API_TRAININGJOB_H
#define CADRE_API_TRAININGJOB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/accel.h"
#include "api/condition.h"
#include "api/labels.h"
#include "api/meta.h"
#include "api/slurm.h"

struct field_errors;

#define TJ_API_VERSION CADRE_API_VERSION
#define TJ_KIND "TrainingJob"

/* Defaults of docs/design.md section 1. */
#define TJ_DEFAULT_NUM_NODES 1
#define TJ_DEFAULT_ACCELERATOR_RESOURCE "nvidia.com/gpu"
#define TJ_DEFAULT_GANG_TIMEOUT_SECONDS 600
#define TJ_DEFAULT_MASTER_PORT 29500
#define TJ_DEFAULT_TASKS_PER_NODE 1
#define TJ_DEFAULT_MAX_INFRA_RESTARTS 10
#define TJ_DEFAULT_SIGNAL_SECONDS_BEFORE 60
/* Past spec.signal.secondsBefore, the grace a pod gets when the job sets none. */
#define TJ_SIGNAL_EXTRA_GRACE_SECONDS 30

/* The longest name a TrainingJob may have (the CRD's rule): room for "-<rank>" and "-entrypoint". */
#define TJ_NAME_MAX 50

/*
 * Most tasks one node may run (Slurm's --ntasks-per-node): one per CPU
 * thread of the largest nodes, far past one per GPU.
 */
#define TJ_MAX_TASKS_PER_NODE 1024
/*
 * The bounds of the sizes a user sets (the CRD's maximum, docs/api.md): a
 * gang of more nodes than any cluster has would make every admission walk
 * millions of ranks; a count or a time past these would overflow the sums
 * it goes into (a deadline at int64's maximum became an instant one).
 */
#define TJ_MAX_NUM_NODES 16384
#define TJ_MAX_RESTART_COUNT 10000              /* maxRestarts, maxInfraRestarts */
#define TJ_MAX_DEADLINE_SECONDS 315360000LL     /* activeDeadlineSeconds: ten years */
#define TJ_MAX_TTL_SECONDS 315360000LL          /* ttlSecondsAfterFinished: ten years */
#define TJ_MAX_GANG_TIMEOUT_SECONDS 604800      /* gang.timeoutSeconds: a week */

enum tj_success_policy {
	TJ_SUCCESS_ALL = 0,  /* every pod Succeeded (the default) */
	TJ_SUCCESS_RANK0,    /* rank 0 Succeeded; the rest are then deleted */
};

/* spec.restartStrategy (docs/failures.md "In-place restart"). */
enum tj_restart_strategy {
	TJ_RESTART_RECREATE = 0, /* every restart deletes the gang and admits it again */
	TJ_RESTART_IN_PLACE,     /* the ranks' processes restart in their pods */
};

/*
 * Phases of docs/design.md 1.2. TJ_PHASE_UNSET is a job the controller has not
 * looked at yet (no status.phase); it is not written back.
 */
enum tj_phase {
	TJ_PHASE_UNSET = 0,
	TJ_PHASE_PENDING,     /* waiting for its Volumes to exist and be Bound */
	TJ_PHASE_QUEUED,      /* waiting for gang admission */
	TJ_PHASE_STARTING,    /* admitted; pods exist and are being started */
	TJ_PHASE_RUNNING,     /* every pod is Running */
	TJ_PHASE_RESTARTING,  /* tearing the gang down after a failure */
	TJ_PHASE_SUCCEEDED,   /* terminal */
	TJ_PHASE_FAILED,      /* terminal */
	TJ_PHASE_SUSPENDED,   /* spec.suspend; no pods exist */
};

/* spec.envs: one plain variable, in the order of the JSON object. */
struct tj_env {
	char *name;   /* owned, never NULL */
	char *value;  /* owned; NULL when the value was not a string */
};

/* spec.secretEnvs[i]: a variable whose value comes from a Secret. */
struct tj_secret_env {
	char *name;         /* owned; NULL when absent */
	char *secret_name;  /* secretKeyRef.name, owned; NULL when absent */
	char *secret_key;   /* secretKeyRef.key, owned; NULL when absent */
};

/* spec.volumes: a mount path and the Volume mounted there, in JSON order. */
struct tj_volume_mount {
	char *mount_path;  /* owned, never NULL */
	char *volume;      /* owned; NULL when the value was not a string */
};

/*
 * spec.scratch: node-local space at a mount path, one per rank, created and
 * deleted with the pod (docs/volumes.md, "Scratch"). Sorted by mount path,
 * whatever the JSON order: the first is TMPDIR, scratch-0 in the pod.
 */
struct tj_scratch {
	char *mount_path;          /* owned, never NULL */
	char *size;                /* raw quantity, owned; NULL when absent */
	bool has_size;             /* size_milli holds size parsed */
	int64_t size_milli;        /* bytes * 1000 */
	char *storage_class_name;  /* owned; NULL: an emptyDir on the node's own disk */
};

/* spec.stageIn[i]: a file or directory copied from a shared Volume into scratch. */
struct tj_stage_in {
	char *from;  /* owned; NULL when absent */
	char *to;    /* owned; NULL when absent */
};

/*
 * spec.code[i]: a code bundle (docs/code.md) unpacked at path in every pod
 * before setup. digest is "sha256:<64 hex>" of the bundle's archive.
 */
struct tj_code {
	char *digest;  /* owned; NULL when absent */
	char *path;    /* owned; NULL when absent */
};

/*
 * The nodes a job asks for or avoids, as sbatch's -w/--nodelist,
 * -x/--exclude, --exclusive and -C/--constraint say (docs/design.md 3.4):
 *
 *   nodeList: [gpu-node-1, gpu-node-2]  # these nodes, every one; others as well
 *                                       # when numNodes is larger
 *   excludeNodes: [gpu-node-7]          # never these
 *   exclusive: true                     # no other pod on its nodes while it runs
 *   constraint: "a100&ib|h100"          # node features, each a Partition's
 *                                       # spec.features entry; & binds before |
 */
struct tj_nodes {
	char **list;          /* owned, n_list of them; NULL when absent */
	size_t n_list;
	char **exclude;       /* owned */
	size_t n_exclude;
	bool exclusive;
	char *constraint;     /* owned; NULL when absent */
};

/* Most names in spec.nodeList and in spec.excludeNodes (the CRD's maxItems). */
#define TJ_MAX_NODE_NAMES 1024
/* Longest spec.constraint, and most features in it (the CRD's maxLength; checked). */
#define TJ_MAX_CONSTRAINT 1024
#define TJ_MAX_CONSTRAINT_FEATURES 64

/*
 * A constraint read: OR of terms, each the AND of its features. The
 * strings point into text (a copy of the constraint with the operators
 * cut out); release with tj_constraint_release.
 */
struct tj_constraint {
	char *text;
	const char **feature;     /* every feature, term by term */
	size_t n_features;
	size_t *term_end;         /* term t holds feature[term_end[t-1] .. term_end[t]) */
	size_t n_terms;
};

/*
 * Read a --constraint text: FEATURE (('&' | '|') FEATURE)*, a feature made
 * of letters, digits, '_', '-' and '.'; & binds before |. Slurm's brackets,
 * counts ("a*2") and matching OR are not taken. 0, CADRE_EPARSE (why, at
 * least 128 bytes, says where) or CADRE_ENOMEM.
 */
int tj_constraint_parse(const char *text, struct tj_constraint *out, char *why, size_t size);
void tj_constraint_release(struct tj_constraint *c);

/* Most entries of spec.code (the CRD's maxItems). */
#define TJ_MAX_CODE 8

struct decoder;

/*
 * spec.scratch of the object spec (a TrainingJob's or a Partition's) into
 * *out and *n, sorted by mount path; problems go to d. Release with
 * tj_scratch_release; tj_scratch_copy makes a deep copy (0 or CADRE_ENOMEM).
 */
void tj_decode_scratch(struct decoder *d, const json_t *spec, struct tj_scratch **out, size_t *n);
void tj_scratch_release(struct tj_scratch *scratch, size_t n);
/* spec.scratch of s as tj_validate checks it (paths, sizes, classes, apart from spec.volumes). */
struct tj_spec;
void tj_validate_scratch(struct decoder *d, const struct tj_spec *s);
int tj_scratch_copy(const struct tj_scratch *from, size_t n, struct tj_scratch **out,
		    size_t *n_out);

/* spec.podTemplate.spec.resourceClaims and spec.resourceClaimsPerNode, checked (trainingjob_claims.c). */
void tj_validate_claims(struct decoder *d, const struct tj_spec *s);

/* spec.nodeList, excludeNodes, exclusive, constraint: read, checked, released. */
void tj_decode_nodes(struct decoder *d, const json_t *spec, struct tj_nodes *out);
void tj_validate_nodes(struct decoder *d, const struct tj_spec *s);
void tj_nodes_release(struct tj_nodes *n);

/* Most entries of spec.scratch and of spec.stageIn (the CRD's maxProperties, maxItems). */
#define TJ_MAX_SCRATCH 16
#define TJ_MAX_STAGE_IN 64

/* spec.resources, per node. Raw strings are kept for messages and printing. */
struct tj_resources {
	char *accelerators;       /* raw "H100:8", owned; NULL when none asked for */
	bool has_accel;           /* accel holds accelerators parsed */
	struct accel accel;
	char *cpus;               /* raw quantity, owned; NULL when absent */
	bool has_cpus;            /* cpus_milli holds cpus parsed */
	int64_t cpus_milli;
	char *memory;             /* raw quantity, owned; NULL when absent */
	bool has_memory;
	int64_t memory_milli;     /* bytes * 1000 */
	char *accelerator_resource;  /* owned; "nvidia.com/gpu" by default */
	/*
	 * The DeviceClass the accelerators come from through Dynamic Resource
	 * Allocation (docs/dra.md): the partition's spec.deviceClassName, else
	 * the controller's --device-class-name; owned. NULL: they are
	 * accelerator_resource, an extended resource of a device plugin. Not a
	 * field of the job: a site says where its devices come from.
	 */
	char *device_class;
};

/*
 * spec.podTemplate: the safe subset of pod fields that is merged into every
 * pod. Anything else under podTemplate is a parse error (docs/design.md 6).
 */
struct tj_pod_template {
	json_t *labels;              /* object of strings; NULL when absent */
	json_t *annotations;         /* object of strings; NULL when absent */
	json_t *node_selector;       /* object of strings; NULL when absent */
	json_t *tolerations;         /* array of Toleration objects; NULL when absent */
	json_t *affinity;            /* Affinity object; NULL when absent */
	char *service_account_name;
	json_t *image_pull_secrets;  /* array of {name}; NULL when absent */
	char *runtime_class_name;
	char *scheduler_name;
	/*
	 * spec.securityContext: the pod's, limited to what restricted Pod
	 * Security asks for (runAsUser, runAsGroup, runAsNonRoot, fsGroup,
	 * seccompProfile); NULL when absent. tj_validate refuses anything else.
	 */
	json_t *security_context;
	/*
	 * spec.containerSecurityContext: the securityContext of cadre's
	 * container main, limited to what takes privilege away
	 * (allowPrivilegeEscalation: false, capabilities.drop, runAsNonRoot,
	 * readOnlyRootFilesystem); NULL when absent.
	 */
	json_t *container_security_context;
	/*
	 * spec.resourceClaims: the pod's DRA claims as given ({name,
	 * resourceClaimName | resourceClaimTemplateName}), each claimed by
	 * container main (docs/dra.md); NULL when absent.
	 */
	json_t *resource_claims;
};

/* Most claims a pod may have (the API server's limit on spec.resourceClaims). */
#define TJ_MAX_RESOURCE_CLAIMS 32

/*
 * spec.computeDomain: one NVIDIA ComputeDomain (resource.nvidia.com/v1beta1)
 * per attempt, whose channel every rank claims, for multi-node NVLink.
 */
struct tj_compute_domain {
	bool set;                /* spec.computeDomain given */
	bool all_channels;       /* allocationMode All (default Single) */
};

/* spec.hang: how a rank shows progress (docs/design.md 1.3). */
enum tj_hang_action {
	TJ_HANG_RESTART = 0,  /* restart the gang (the default) */
	TJ_HANG_FAIL,         /* fail the job at once */
};

struct tj_hang {
	bool set;                    /* spec.hang is present */
	bool has_startup_seconds;
	int64_t startup_seconds;     /* before the first progress; progress_seconds when unset */
	bool has_progress_seconds;
	int64_t progress_seconds;    /* between two signs of progress */
	enum tj_hang_action action;
};

/* spec.signal: Slurm's --signal=NAME@SECONDS. */
struct tj_signal {
	char *name;                  /* "USR1", without SIG; NULL when spec.signal is absent */
	bool has_seconds_before;
	int64_t seconds_before;      /* default TJ_DEFAULT_SIGNAL_SECONDS_BEFORE */
};

/* spec.failurePolicy.rules[i]: what an exit code means. */
enum tj_failure_action {
	TJ_FAILURE_RESTART = 0,       /* restart, counted against maxRestarts */
	TJ_FAILURE_RESTART_NOT_COUNTED,
	TJ_FAILURE_FAIL,              /* fail the job at once */
};

struct tj_failure_rule {
	enum tj_failure_action action;
	bool not_in;                 /* onExitCodes.operator NotIn */
	int32_t *codes;              /* onExitCodes.values, owned */
	size_t n_codes;
};

/*
 * spec.topology: where the ranks go in the network (docs/topology.md). Each
 * level is a node label key; nodes with the same value of it (and of every
 * coarser level) are one domain.
 */
struct tj_topology {
	bool set;                  /* spec.topology is present */
	char *required;            /* every rank in one domain of this level; NULL: none */
	char *preferred;           /* as few domains of this level as possible; NULL: none */
	bool has_segment;
	int32_t segment_size;      /* segment.size: consecutive ranks per group */
	char *segment_required;    /* segment.required: each group in one domain of it */
};

struct tj_spec {
	bool has_num_nodes;
	int32_t num_nodes;
	bool has_tasks_per_node;
	int32_t tasks_per_node;  /* Slurm's --ntasks-per-node; 1 by default */
	struct tj_resources resources;
	char *image;      /* NULL: the controller's --default-image, checked there */
	char *setup;
	char *run;
	char *workdir;
	struct tj_env *envs;
	size_t n_envs;
	struct tj_secret_env *secret_envs;
	size_t n_secret_envs;
	struct tj_volume_mount *volumes;
	size_t n_volumes;
	struct tj_scratch *scratch;   /* spec.scratch, sorted by mount path */
	size_t n_scratch;
	struct tj_stage_in *stage_in; /* spec.stageIn, in its order */
	size_t n_stage_in;
	struct tj_code *code;         /* spec.code, in its order */
	size_t n_code;
	char *queue;                  /* Kueue LocalQueue */
	int32_t priority;             /* 0 when absent */
	char *priority_class_name;
	int32_t max_restarts;         /* 0 when absent */
	enum tj_success_policy success_policy;
	enum tj_restart_strategy restart_strategy;
	bool suspend;
	bool has_active_deadline_seconds;
	int64_t active_deadline_seconds;
	bool has_ttl_seconds_after_finished;
	int64_t ttl_seconds_after_finished;
	bool has_gang_timeout_seconds;
	int64_t gang_timeout_seconds;  /* spec.gang.timeoutSeconds */
	bool has_master_port;
	int32_t master_port;
	struct tj_pod_template pod_template;
	/*
	 * spec.resourceClaimsPerNode: [{name, resourceClaimTemplateName}], a
	 * claim of its own from each template for every rank's pod, as Kubeflow
	 * Trainer's field; NULL when absent.
	 */
	json_t *resource_claims_per_node;
	struct tj_compute_domain compute_domain;
	bool has_max_infra_restarts;
	int32_t max_infra_restarts;   /* default TJ_DEFAULT_MAX_INFRA_RESTARTS */
	struct tj_hang hang;
	struct tj_signal signal;
	bool has_termination_grace_period_seconds;
	int64_t termination_grace_period_seconds;
	struct tj_failure_rule *failure_rules;  /* spec.failurePolicy.rules, owned */
	size_t n_failure_rules;
	/* spec.partition: a Partition's name (api/partition.h); NULL when none. */
	char *partition;
	/*
	 * spec.array: Slurm's --array text ("0-99%8"); NULL when the job is no
	 * array. An array job runs no pods itself: each index becomes a
	 * TrainingJob <name>-<index> (docs/design.md 12).
	 */
	char *array;
	/* spec.dependency: Slurm's --dependency, as items (docs/design.md 13). */
	bool has_dependency;
	struct slurm_dep dependency;
	/* spec.output, spec.error: sbatch's --output/--error patterns (%x %j %A %a %N %t). */
	char *output;
	char *error;
	struct tj_topology topology;
	struct tj_nodes nodes;
};

/*
 * The level whose domains say where a job's ranks went: the segment's, else
 * the required one, else the preferred one; NULL without spec.topology.
 */
const char *tj_topology_level(const struct tj_spec *spec);

/*
 * spec.topology's levels against the cluster's, levels[0..n) coarse to
 * fine (node label keys): each must be one of them, preferred finer than
 * required, segment.required not wider than required. source names the
 * levels in the errors ("ClusterTopology default"). Returns 0 or
 * CADRE_EINVAL with the fields in errs.
 */
int tj_topology_check_levels(const struct tj_spec *spec, const char *const *levels, size_t n,
			     const char *source, struct field_errors *errs);

/*
 * The action spec.failurePolicy gives exit code (the first rule that
 * matches), TJ_FAILURE_RESTART when none does.
 */
enum tj_failure_action tj_failure_action_for(const struct tj_spec *spec, int exit_code);

/* Whether digest is a bundle digest spec.code takes: "sha256:" and 64 lowercase hex. */
bool tj_code_digest_ok(const char *digest);

/* Whether name is a signal spec.signal.name may take ("USR1", without SIG). */
bool tj_signal_name_ok(const char *name);

/* The grace the pods get (spec.terminationGracePeriodSeconds or the default); -1: Kubernetes'. */
int64_t tj_termination_grace_seconds(const struct tj_spec *spec);

/* status.nodes[i] */
struct tj_node_status {
	int32_t rank;
	char *pod;    /* owned; NULL when absent */
	char *node;   /* owned; NULL until scheduled */
	char *ip;     /* owned; NULL until it has one */
	char *phase;  /* owned pod phase: Pending, Running, Succeeded, Failed, Unknown */
};

/* status.excludedNodes[i] */
struct tj_excluded_node {
	char *node;
	char *reason;
	int64_t time;  /* Unix seconds */
};

/*
 * status.preemption: the last time this job was preempted (built-in mode,
 * docs/design.md 3.5), written before its pods get their signal.
 */
struct tj_preemption {
	char *preemptor;     /* "namespace/name" of the job it made room for */
	int32_t attempt;     /* the attempt that was preempted */
	int64_t time;        /* Unix seconds */
	int64_t grace_s;     /* the signal's grace before the pods are killed */
	char *mode;          /* "Requeue" or "Cancel" */
	int32_t tier;        /* the preemptor's priorityTier */
};

/* status.preempting[i]: a job this one preempts, at the attempt it preempts. */
struct tj_preempting {
	char *job;           /* "namespace/name" */
	int32_t attempt;
};

/*
 * status.inPlaceRestart: the attempt that began in place, stored before any
 * rank is told (docs/failures.md). Its pods of earlier attempts are told, not
 * deleted, while attempt is the job's current one.
 */
struct tj_in_place {
	int32_t attempt;
	int64_t time;        /* Unix seconds: when it was decided */
};

/* Most jobs one preemption stops (status.preempting's maxItems). */
#define TJ_PREEMPTING_MAX 4096

/* status.failures[i] */
struct tj_failure_record {
	int32_t attempt;
	char *reason;
	bool infrastructure;
	int32_t rank;     /* -1 when no rank */
	char *node;
	int32_t exit_code;
	int64_t time;
};

/* At most this many status.failures are kept, the oldest dropped. */
#define TJ_MAX_FAILURE_RECORDS 10
/* status.excludedNodes lapse after this long. */
#define TJ_EXCLUDED_NODE_TTL_S (24 * 3600)
/*
 * The reason of a node excluded because the gang timed out with a rank
 * pinned there and never scheduled (built-in mode, docs/design.md 3.1):
 * no evidence against the node, only against this placement of this job.
 */
#define TJ_EXCLUDED_GANG_TIMEOUT "GangTimeout"

/* Whether x was left behind for a gang timeout, not for a failure there. */
bool tj_excluded_timed_out(const struct tj_excluded_node *x);

/* status.lastFailure */
struct tj_failure {
	int32_t rank;
	char *pod;
	char *node;
	int32_t exit_code;
	char *reason;
	char *message;
	int64_t time;  /* Unix seconds; 0 when unknown */
};

/* status.topology: the domains of the job's placement. */
struct tj_topology_status {
	char *level;      /* tj_topology_level's label key; NULL: no status.topology */
	char **domains;   /* the level's values on the ranks' nodes, distinct, in rank order */
	size_t n_domains;
};

struct tj_status {
	enum tj_phase phase;
	struct condition_list conditions;
	int64_t observed_generation;
	char *job_id;   /* numeric text, stable for the job's life (SLURM_JOB_ID) */
	char *task_id;  /* SKYPILOT_TASK_ID, stable across restarts */
	int32_t ready_nodes;
	int32_t restarts;        /* gang restarts counted against maxRestarts */
	int32_t infra_restarts;  /* node loss, eviction, disruption, gang timeout */
	int32_t requeues;        /* Kueue's preemption, a stopped queue, scontrol requeue */
	int32_t preemptions;     /* built-in preemption by a higher tier: no failure */
	int64_t admitted_time;   /* Unix seconds; 0 when not yet */
	int64_t start_time;
	int64_t completion_time;
	struct tj_node_status *nodes;  /* owned array */
	size_t n_nodes;
	bool has_last_failure;
	struct tj_failure last_failure;
	char *message;  /* why the job waits or failed, for a person */
	struct tj_excluded_node *excluded_nodes;  /* owned array */
	size_t n_excluded_nodes;
	struct tj_failure_record *failures;       /* owned array, oldest first */
	size_t n_failures;
	/* The Partition the job runs in, recorded once (api/partition.h); NULL: none. */
	char *partition;
	/*
	 * That Partition's spec as it was when the job was admitted, recorded
	 * with the admission: what the job took from it (a time limit, an image,
	 * placement) is kept from then on, whatever an admin edits or deletes
	 * (docs/design.md 11). NULL: none recorded (owned).
	 */
	json_t *partition_spec;
	/*
	 * An array job's elements, as ranged index sets ("0-3,5"): started
	 * (its TrainingJob was decided; written before it is created), and
	 * of those the ones that ended so. NULL for an empty set.
	 */
	bool has_array;
	char *array_started;
	char *array_succeeded;
	char *array_failed;
	char *array_cancelled;
	/*
	 * spec.dependency's progress: met once every item (any one, with
	 * any) was satisfied, and never looked at again; satisfied lists the
	 * "type:job" items met so far, so a job that is deleted after it
	 * satisfied an item still counts.
	 */
	bool dependency_met;
	char **dependency_satisfied;
	size_t n_dependency_satisfied;
	/*
	 * status.dependency.seen: the jobs spec.dependency names (as it names
	 * them) that were there when this job looked; one gone since was
	 * deleted, one never seen never existed (docs/design.md 13).
	 */
	char **dependency_seen;
	size_t n_dependency_seen;
	/* The last requeue asked for (annotation cadre.dev/requeue) that was acted on. */
	char *requeued;
	struct tj_topology_status topology;
	bool has_preemption;
	struct tj_preemption preemption;
	bool has_in_place;
	struct tj_in_place in_place;
	/*
	 * The jobs this one preempts to make room for itself, decided before any
	 * is told (docs/design.md 3.5); cleared once it is admitted.
	 */
	struct tj_preempting *preempting;
	size_t n_preempting;
};

struct trainingjob {
	struct object_meta meta;
	struct tj_spec spec;
	struct tj_status status;
};

/* Empty job: everything NULL, zero, or unset; safe to release. */
void tj_init(struct trainingjob *tj);

/* Free everything the job owns; it is left as after tj_init. */
void tj_release(struct trainingjob *tj);

void tj_status_init(struct tj_status *status);

/*
 * The gang's attempt: restarts + infraRestarts + requeues + preemptions, each start of the
 * gang one more. Pod names, the attempt label and the pod group's name
 * follow it.
 */
int tj_attempt(const struct tj_status *status);

/*
 * The ranks in [0, num_nodes) that status.nodes gives a node (one entry each):
 * built-in admission stores every rank's; an in-place restart forgets the
 * node of a rank that must be placed again (docs/failures.md).
 */
int tj_ranks_placed(const struct tj_status *status, int num_nodes);

/*
 * Whether the job's current attempt is restarting in place: status.inPlaceRestart
 * names it (docs/failures.md, "In-place restart").
 */
bool tj_in_place_current(const struct tj_status *status);

/* Empty status.preempting, freeing what it held. */
void tj_preempting_clear(struct tj_status *status);
void tj_topology_status_release(struct tj_topology_status *t);
void tj_status_release(struct tj_status *status);

/*
 * Read a TrainingJob object (borrowed) into out, which tj_parse initializes
 * first. Structural problems (a field of the wrong type, an unknown field
 * under podTemplate, a phase or successPolicy that is not one of its names,
 * a number out of range, missing metadata) are added to errs with their
 * path; the rest of the object is still read, so out holds what could be.
 * Defaults are applied (tj_default) to the fields that were absent. The
 * quantities and accelerators are parsed where they parse; that they must
 * is checked by tj_validate. Never crashes, whatever the JSON.
 *
 * Returns 0; CADRE_EINVAL when it added errors; CADRE_ENOMEM. Release out
 * whatever it returns.
 */
int tj_parse(const json_t *obj, struct trainingjob *out, struct field_errors *errs);

/*
 * Fill the fields that are unset with their defaults: numNodes 1,
 * tasksPerNode 1, acceleratorResource nvidia.com/gpu, gang.timeoutSeconds 600, masterPort
 * 29500 (priority, maxRestarts, suspend and successPolicy default to their
 * zero values). Fields already set are kept, valid or not. If the copy of
 * the accelerator resource name cannot be allocated it stays NULL, which
 * tj_validate reports.
 */
void tj_default(struct tj_spec *spec);

/*
 * The semantic rules of docs/design.md sections 1, 2.3 and 6, checked on a
 * parsed job: every problem is added to errs with its field path, e.g.
 * "spec.envs.SLURM_JOB_ID: reserved for cadre" or
 * "spec.volumes[\"tmp\"]: mount path must be absolute". spec.image is not
 * checked: whether it may be absent depends on the controller's
 * --default-image. Returns 0, CADRE_EINVAL when it added errors, or
 * CADRE_ENOMEM.
 */
int tj_validate(const struct trainingjob *tj, struct field_errors *errs);

/*
 * Read a status object (borrowed; NULL or null means no status yet) into
 * status, which this initializes first; paths start with "status.".
 * Returns 0, CADRE_EINVAL when it added errors, or CADRE_ENOMEM. Release
 * status whatever it returns.
 */
int tj_status_parse(const json_t *obj, struct tj_status *status, struct field_errors *errs);

/*
 * The status as the exact object to PUT to /status (new reference). Unset
 * optional fields (phase, ids, times, lastFailure, message) are left out;
 * counters and conditions are always written. NULL when out of memory,
 * when a string is not valid UTF-8, or when a time is outside years 0001
 * to 9999.
 */
json_t *tj_status_to_json(const struct tj_status *status);

/*
 * A deep copy of src in dst, which this initializes first (so the
 * controller can build the next status from the current one). It goes
 * through tj_status_to_json, so dst is exactly what a PUT would store.
 * Returns 0; CADRE_EINVAL when src cannot be written (see
 * tj_status_to_json; a failed allocation there reads the same) or read
 * back (a condition with a bad status); CADRE_ENOMEM. Release dst
 * whatever it returns.
 */
int tj_status_copy(struct tj_status *dst, const struct tj_status *src);

/* "Running", ...; "" for TJ_PHASE_UNSET and for values outside the enum. Static. */
const char *tj_phase_name(enum tj_phase phase);

/* The phase named name (exact case). 0 or CADRE_EINVAL. */
int tj_phase_parse(const char *name, enum tj_phase *out);

/* Succeeded and Failed: the job will not run again. */
bool tj_phase_terminal(enum tj_phase phase);

/* "All" or "Rank0". Static. */
const char *tj_success_policy_name(enum tj_success_policy policy);

/* "Recreate" or "InPlace". Static. */
const char *tj_restart_strategy_name(enum tj_restart_strategy strategy);

/*
 * The environment variables cadre sets in every pod (docs/design.md 2.3), in
 * the order of that table; NULL-terminated. spec.envs and spec.secretEnvs
 * may not use them.
 */
extern const char *const tj_reserved_envs[];

/* Whether name is one of tj_reserved_envs (exact case, as shells see names). */
bool tj_env_reserved(const char *name);

/*
 * The numeric SLURM_JOB_ID a job is first offered: derived from its uid. 9
 * digits. The id it keeps is the one stored in status.jobId, claimed
 * unique (controller/manager/jobids.h) from the probes below.
 */
void tj_job_id(const char *uid, char out[16]);

/* Probe k (0: tj_job_id's) of the ids a job may take: the next id of the nine-digit ring. */
void tj_job_id_probe(const char *uid, unsigned k, char out[16]);

/* Room for tj_task_id()'s answer, NUL included. */
#define TJ_TASK_ID_MAX 512

/*
 * SKYPILOT_TASK_ID as SkyPilot spells it, cadre-<created>_<name>_<job id>
 * (the creation time with '-' for ':' and 'T'): a function of the job's
 * metadata and job id, so the planner that stores it and the builder that
 * needs it before it is stored agree.
 */
void tj_task_id(const struct object_meta *meta, const char *job_id, char out[TJ_TASK_ID_MAX]);

/*
 * Whether a plain env name looks like it carries a credential: it ends in
 * _TOKEN or _KEY, or contains PASSWORD or SECRET, in any case. Such an
 * entry earns a Warning event (docs/design.md 6); it is not an error.
 */
bool tj_env_looks_secret(const char *name);

#endif
