/*
 * tj_plan.h - the TrainingJob state machine (docs/design.md 1.2, 1.3, 3), as a
 * pure function: what the job is and what the caches show go in; the next
 * status, the writes to make and the events to record come out.
 *
 * Keeping the decision pure means every transition is a unit test, and the
 * reconciler around it (tj_reconcile.c) is only plumbing: read the caches,
 * call tj_plan_make, do the actions, write the status if it changed.
 *
 * The phases, as the planner walks them:
 *   (invalid spec)  -> Failed/InvalidSpec, terminal.
 *   Succeeded/Failed: terminal; delete pods still running, then wait for TTL.
 *   Suspended:      spec.suspend; every pod deleted, the Service kept.
 *   Pending:        a Volume is missing or not Bound.
 *   Queued:         waiting for admission (capacity, priority, Kueue) or for
 *                   the restart backoff to pass. A built-in gang has its
 *                   Service and entrypoint ConfigMap then, and no pod.
 *   Starting:       admitted. Built-in: the decision (Admitted, and the
 *                   node of every rank in status.nodes) is the status the
 *                   reconciler writes before anything else, and every pod
 *                   is created ungated and pinned to its rank's node.
 *                   In native mode the PodGroup and the pods exist before
 *                   admission, which is kube-scheduler placing the group.
 *   Running:        every pod Running.
 *   Restarting:     a failure was seen; every pod of the gang is deleted,
 *                   then the job goes back to Queued.
 *
 * The planner makes the admission decision only through its input: when it
 * reaches the point where a built-in gang must be admitted and none was
 * given, it says so (needs_admission) and the caller asks the admission
 * queue and calls it again.
 *
 * Every decision the plan acts on is in its status: the admission and the
 * nodes it chose, a restart with its counters and lastFailure, a finish.
 * The reconciler stores that status before it makes any of the plan's
 * writes, and makes none when the status cannot be stored, so a process
 * that stops at any point leaves a status that says what it was doing;
 * the next one plans from it and finishes the work (docs/design.md 3.1).
 */
#ifndef CADRE_TJ_PLAN_H
#define CADRE_TJ_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/trainingjob.h"
#include "controller/admission/kueue.h"
#include "controller/options.h"
#include "controller/trainingjob/podview.h"
#include "controller/trainingjob/tj_depend.h"

/* The state of one spec.volumes entry, from the Volume cache. */
struct tj_volume_state {
	const char *mount_path;
	const char *volume;       /* the Volume's name */
	bool found;
	bool bound;
	const char *claim_name;   /* the PVC to mount, when bound */
};

/* spec.code[i] against the namespace's bundles (controller/code/code.h). */
struct tj_code_state {
	const char *digest;
	bool complete;            /* every part of the bundle is there */
	const char *why;          /* !complete: what is missing, for a person */
};

/*
 * The last create of a pod of this job that the API server refused (Pod
 * Security, a ResourceQuota, an admission webhook): nothing appears in the
 * caches when that happens, so the reconciler remembers it (refusals.h).
 * The planner uses it only while it is of the current attempt and that
 * rank's pod is still missing: then status.message and the Admitted or
 * Running condition carry the API server's message, and once the gang
 * timeout passes it is a failure of user input (CreateRefused).
 *
 * The job's entrypoint ConfigMap is reported the same way, with rank
 * TJ_REFUSAL_ENTRYPOINT: a create the API server refused, or a ConfigMap of
 * that name that is not the job's (the reconciler never touches one). It
 * holds while the ConfigMap is not the job's (entrypoint_exists false), and
 * while it holds no pod is planned at all.
 *
 * The job's headless Service likewise, with rank TJ_REFUSAL_SERVICE: without
 * it no rank finds its peers. It holds while the Service is not the job's
 * (service_exists false) and a pod of the gang is missing: no pod is planned
 * then, and a gang already whole is not stopped for it.
 *
 * The DRA objects the pods claim from (docs/dra.md) likewise, with ranks
 * TJ_REFUSAL_CLAIM_TEMPLATE (the accelerators' ResourceClaimTemplate) and
 * TJ_REFUSAL_COMPUTE_DOMAIN (this attempt's ComputeDomain, refused too when
 * its CRD is not installed): they hold while a pod of the gang is missing.
 */
#define TJ_REFUSAL_ENTRYPOINT (-1)
#define TJ_REFUSAL_SERVICE (-2)
#define TJ_REFUSAL_CLAIM_TEMPLATE (-3)
#define TJ_REFUSAL_COMPUTE_DOMAIN (-4)
struct tj_refusal {
	const char *pod;          /* a negative rank: the ConfigMap's or the Service's name */
	int rank;
	int attempt;
	const char *reason;       /* the API server's reason (Forbidden, ...); may be "" */
	const char *message;      /* the API server's message */
	int64_t first_time;       /* Unix seconds of the first refusal of this attempt */
};

/*
 * A PodGroup of the job (native gang mode, docs/gang-admission.md), from the
 * PodGroup cache: what kube-scheduler wrote in its status.
 */
enum tj_podgroup_state {
	TJ_PODGROUP_PENDING,        /* no PodGroupScheduled condition yet */
	TJ_PODGROUP_SCHEDULED,      /* PodGroupScheduled (1.37: PodGroupInitiallyScheduled) True */
	TJ_PODGROUP_UNSCHEDULABLE,  /* the same condition False */
};

struct tj_podgroup {
	const char *name;
	int attempt;                /* its cadre.dev/restart-attempt label */
	bool deleting;
	enum tj_podgroup_state state;
	const char *reason;         /* the scheduler's reason; may be NULL */
	const char *message;        /* the scheduler's message; may be NULL */
	bool disrupted;             /* DisruptionTarget True: the scheduler preempted the group */
	const char *disruption_message;
};

/*
 * Read a PodGroup object (either served version) into out, borrowing its
 * strings: the attempt label, deletionTimestamp, PodGroupScheduled (1.37:
 * PodGroupInitiallyScheduled) and DisruptionTarget. CADRE_EINVAL when it
 * has no name or no valid cadre.dev/restart-attempt label (not ours).
 */
int tj_podgroup_read(const json_t *obj, struct tj_podgroup *out);

/*
 * An element of an array job (docs/design.md 12): a TrainingJob <job>-<index>
 * the controller made, from the TrainingJob cache.
 */
struct tj_element {
	int32_t index;
	const char *name;
	const char *uid;
	enum tj_phase phase;     /* TJ_PHASE_UNSET: not looked at yet */
	bool deleting;
};

enum admit_verdict { ADMIT_UNDECIDED, ADMIT_YES, ADMIT_WAIT };

struct tj_admission {
	enum admit_verdict verdict;
	const char *reason;       /* ADMIT_WAIT: InsufficientCapacity | QueuedBehind | ... */
	const char *message;      /* for a person */
	/*
	 * ADMIT_YES: the node of each rank, n_nodes == numNodes (a node
	 * repeated when it takes several ranks). The plan stores them in
	 * status.nodes, and the pods are pinned to them.
	 */
	const char *const *nodes;
	int n_nodes;
	/*
	 * ADMIT_WAIT with reason Preempting: the running jobs ("ns/name") to
	 * stop, at their attempts, stored in status.preempting before any is
	 * told (docs/design.md 3.5).
	 */
	const char *const *preempt;
	const int32_t *preempt_attempt;
	size_t n_preempt;
};

/* This job is among a waiting job's status.preempting, at its attempt (gang_preempted). */
struct tj_preempted {
	const char *preemptor;   /* "namespace/name" */
	int32_t tier;            /* the preemptor's priorityTier */
	int32_t own_tier;        /* this job's */
	bool cancel;             /* its Partition's preemptMode is Cancel, else Requeue */
	int64_t grace_s;         /* partition_grace_seconds */
};

struct tj_input {
	const struct trainingjob *job;
	const char *invalid;          /* the field errors, joined; NULL when valid */
	/* The Failed reason of invalid: NULL for InvalidSpec ("invalid spec: ..."); else the
	 * reason, with invalid the whole message (InvalidPartition). */
	const char *invalid_reason;
	/* The Partition applied to job's spec (controller/partition/partitions.h); recorded
	 * in status.partition. NULL: none. */
	const char *partition;
	/* That Partition's spec now, recorded with the job's first admission; NULL: none. */
	const json_t *partition_spec;
	/*
	 * The Partition the job names does not exist (yet: applied before it, or
	 * replaced): the job waits, Pending with PartitionNotFound, saying so.
	 * NULL: no such wait.
	 */
	const char *partition_missing;
	/* The id claimed for a job whose status has none yet (jobids.h); NULL: the first probe. */
	const char *job_id;
	int64_t now;                  /* Unix seconds */
	/*
	 * A finished job: a job waiting for its dependencies names it and has
	 * not recorded its end (tj_dependency_awaited); its TTL waits, at most
	 * TJ_TTL_AWAITED_MAX_S more.
	 */
	bool awaited;
	enum gang_mode mode;          /* effective mode for this job */
	const struct podview *pods;   /* every pod of the job, any attempt */
	size_t n_pods;
	bool expectations_met;        /* no create/delete of ours is still unseen */
	const struct tj_volume_state *volumes;
	size_t n_volumes;
	/* One per spec.code entry; a job waits (Pending, WaitingForCode) until all are complete. */
	const struct tj_code_state *code;
	size_t n_code;
	/* Whether the node exists and is Ready; NULL: every node is fine. */
	bool (*node_ok)(void *ctx, const char *node);
	/* Whether the node exists at all, Ready or not; NULL: every node does. */
	bool (*node_known)(void *ctx, const char *node);
	/*
	 * The value of the node's label key into out (size bytes): 0, or -1
	 * when the node or its label is not known. NULL: no label is known.
	 */
	int (*node_label)(void *ctx, const char *node, const char *key, char *out, size_t size);
	void *node_ctx;
	/*
	 * Whether element index's name (<job>-<index>) is held by an object
	 * that is not this array's; NULL: never.
	 */
	bool (*element_taken)(void *ctx, int index);
	void *element_ctx;
	/*
	 * Whether the node has a NoExecute taint the job's pods do not tolerate,
	 * so that a pod of it deleted without a word was the taint's eviction
	 * (kube-controller-manager deletes such pods); NULL: no node has one.
	 */
	bool (*node_evicts)(void *ctx, const char *node);
	void *evicts_ctx;
	struct tj_admission admission;
	bool service_exists;          /* the job's Service exists and is the job's (its uid) */
	/*
	 * The job's entrypoint ConfigMap (build_entrypoint_configmap) exists, is
	 * the job's (an owner reference with its uid) and holds this
	 * controller's script. Pods mount it, so none is created without it.
	 */
	bool entrypoint_exists;
	const struct tj_refusal *refusal;  /* NULL: no create of this job is being refused */
	/* Native mode: the job's PodGroups, any attempt; ignored in the other modes. */
	const struct tj_podgroup *podgroups;
	size_t n_podgroups;
	/* Kueue mode: Kueue's Workload of the current attempt's pod group (kueue.h);
	 * NULL is a Kueue that is not reachable. The planner counts the pods itself. */
	const struct kueue_view *kueue;
	/*
	 * spec.dependency decided against the caches (tj_depend.h); NULL when the
	 * job has none, or it was met, or the job was admitted once: a dependency
	 * holds a job back only before it first starts.
	 */
	const struct tj_dep_verdict *dependency;
	/* An array job: its elements in the cache, the --max-array-size its indices stop
	 * below, and its annotation cadre.dev/cancel-tasks (NULL: none). */
	const struct tj_element *elements;
	size_t n_elements;
	int32_t max_array_size;
	const char *cancel_tasks;
	/* The job's annotation cadre.dev/requeue (scontrol requeue); NULL: none. */
	const char *requeue;
	/* A higher tier's job preempts this one; NULL: none (docs/design.md 3.5). */
	const struct tj_preempted *preempted;
};

enum tj_action_kind {
	/*
	 * The entrypoint ConfigMap, created (or, when an earlier controller's
	 * script is in it, updated): planned before any pod create of the pass
	 * whenever entrypoint_exists is false. The pod creates after it go out
	 * only once it was answered with success; if it fails, none does.
	 */
	TJ_CREATE_ENTRYPOINT,
	TJ_CREATE_SERVICE,
	/*
	 * What the pods claim DRA devices from (docs/dra.md): the job's
	 * accelerators' ResourceClaimTemplate, and the attempt's ComputeDomain.
	 * Planned with the first pod create of a pass of a job that has them;
	 * no pod goes out until they are made.
	 */
	TJ_CREATE_CLAIM_TEMPLATE,
	TJ_CREATE_COMPUTE_DOMAIN,
	/*
	 * rank, attempt. Built-in mode: pinned to the node status.nodes gives
	 * the rank (the plan's status, which is stored first).
	 */
	TJ_CREATE_POD,
	TJ_DELETE_POD,     /* pod, uid (precondition) */
	/*
	 * pod, uid (precondition), attempt: spec.restartStrategy InPlace, a
	 * live pod of an earlier attempt is told that attempt began: its
	 * cadre.dev/restart-attempt label is set to it (the entrypoint reads
	 * the label through the downward API, docs/failures.md).
	 */
	TJ_PATCH_POD_ATTEMPT,
	TJ_DELETE_JOB,     /* ttlSecondsAfterFinished passed */
	TJ_CREATE_PODGROUP, /* attempt: native mode, before any pod of the attempt */
	TJ_DELETE_PODGROUP, /* pod holds the PodGroup's name: one of an earlier attempt */
	/*
	 * An array job's element: rank is its index. Created once its index is
	 * in the status being written (status.array.started); deleted (pod and
	 * uid name it) when cancelled.
	 */
	TJ_CREATE_ELEMENT,
	TJ_DELETE_ELEMENT,
};

struct tj_action {
	enum tj_action_kind kind;
	int rank;
	int attempt;
	const char *pod;   /* borrowed from the input's pod views */
	const char *uid;
	/* TJ_DELETE_POD of a preempted attempt: the preemption's grace (status.preemption). */
	bool has_grace;
	int64_t grace_s;
};

struct tj_event {
	bool warning;
	const char *reason;  /* static */
	char *message;       /* owned */
	char *node;          /* owned; set: the event is about this Node, not the job */
};

struct tj_plan {
	struct tj_status status;     /* the status to write (owned) */
	struct tj_action *actions;   /* owned array */
	size_t n_actions;
	struct tj_event *events;     /* owned array */
	size_t n_events;
	int64_t requeue_after_s;     /* > 0: look again after this long */
	bool needs_admission;        /* call again with an admission verdict */
	bool admitted_now;           /* this plan admits the gang */
	bool all_running_now;        /* this plan sees the gang Running for the first time */
};

/*
 * Decide. out is initialised here and must be released with
 * tj_plan_release whatever this returns. Returns 0 or CADRE_ENOMEM.
 */
int tj_plan_make(const struct tj_input *in, struct tj_plan *out);

/*
 * A start's progress (status.nodes, readyNodes, the "N of M pods Running"
 * message, and the Reconciling condition's reason and message, which say
 * what the start waits for now) changes with every pod
 * that is scheduled or starts: a status write per pod event, hundreds for a
 * large gang, each taking a token of the client's QPS from the gang's own
 * pod writes. Such a change alone is held back while a quiet time lasts:
 * the first TJ_START_QUIET_S after admission (a quick start is Admitted,
 * then Running, in two writes), and TJ_PROGRESS_EVERY_S after any later
 * status write (the reconciler keeps that time, expect_quiet(), and queues a
 * pass for when it ends). A start that takes a minute is so written three
 * times: Admitted, its progress at TJ_START_QUIET_S, Running; a slower one
 * shows its progress once a minute. A native gang's wait for kube-scheduler
 * (tj_status_waiting_for_scheduler) is the first part of its start: its
 * message does not change while the scheduler says nothing new, the same
 * quiet times hold there (TJ_START_QUIET_S after the wait's first write),
 * and its admission's write begins a TJ_PROGRESS_EVERY_S one, so the wait,
 * the admission and Running are a start's three writes in native mode too,
 * up to a start of a minute and a half.
 * True when want (a status object) differs from stored only so, both are
 * Starting or both wait for the scheduler, and now (Unix seconds) is before
 * quiet_until.
 */
#define TJ_START_QUIET_S 10
#define TJ_PROGRESS_EVERY_S 60
bool tj_status_progress_only(const json_t *stored, const json_t *want, int64_t quiet_until,
			     int64_t now);
/* Queued, with Admitted False for WaitingForScheduler (native mode, before the group is placed). */
bool tj_status_waiting_for_scheduler(const json_t *status);
/*
 * The end of that quiet time (Unix seconds): TJ_START_QUIET_S after
 * admitted_time, or last_until (the end of the quiet time after our last
 * status write; 0 for none) when later; last_until when not admitted.
 */
int64_t tj_status_quiet_until(int64_t admitted_time, int64_t last_until);
/*
 * The end of the quiet time a status write of a starting job at now begins
 * (Unix seconds): the end of the first one, TJ_START_QUIET_S after
 * admitted_time, for a write inside it (the admission's own), else
 * TJ_PROGRESS_EVERY_S after now.
 */
int64_t tj_status_quiet_after_write(int64_t admitted_time, int64_t now);
/*
 * The end of the quiet time that writing the status object written over
 * stored begins at now (Unix seconds), 0 for none: for a starting job
 * tj_status_quiet_after_write(), but TJ_PROGRESS_EVERY_S after a native
 * gang's admission over its written wait (the wait had the first quiet
 * time: a start of a minute is so three writes, the wait, Admitted and
 * Running); for a native gang waiting for the scheduler TJ_START_QUIET_S
 * after the wait's first write, TJ_PROGRESS_EVERY_S after any later one.
 */
int64_t tj_status_quiet_after(const json_t *stored, const json_t *written,
			      int64_t admitted_time, int64_t now);
void tj_plan_release(struct tj_plan *plan);

/* Restart backoff for the given attempt (1-based): 10 s doubling, at most 5 min. */
int64_t tj_restart_backoff_s(int attempt);

/*
 * How long past its TTL a finished job that a dependant still waits to see
 * stays (Slurm keeps a finished job MinJobAge, 300 s by default, for the
 * same reason).
 */
#define TJ_TTL_AWAITED_MAX_S 300

#endif
