/*
 * podview.h - what the TrainingJob reconciler reads from one of its pods.
 *
 * A pod's JSON is large and its meaning is spread over phase, reason,
 * conditions and container states. podview_read() boils it down to the
 * facts the state machine decides on: rank and attempt, phase, where it
 * runs, whether it is still gated, and, when it cannot start or has ended,
 * why, with the kubelet's or scheduler's own words.
 *
 * Strings are BORROWED from the pod object, which must outlive the view.
 * Pure; thread-safe on distinct views.
 */
#ifndef CADRE_PODVIEW_H
#define CADRE_PODVIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/labels.h"

/* How the entrypoint's watchdog starts a hung rank's termination message (entrypoint.h). */
#define PODVIEW_HUNG_MESSAGE "cadre: hung: "

/*
 * spec.restartStrategy InPlace (entrypoint.h): the last line of every
 * termination message the entrypoint writes names the attempt of the run
 * that ended; a stop for the next attempt exits PODVIEW_RESTART_EXIT with a
 * message starting PODVIEW_RESTART_MESSAGE, and is no failure.
 */
#define PODVIEW_ATTEMPT_LINE "cadre-attempt: "
#define PODVIEW_ATTEMPT_TAG "\n" PODVIEW_ATTEMPT_LINE
#define PODVIEW_RESTART_EXIT 117
#define PODVIEW_RESTART_MESSAGE "cadre: stopped for attempt "

/* Kueue's pod webhook labels every pod it gates, and so manages, with this. */
#define KUEUE_MANAGED_LABEL "kueue.x-k8s.io/managed"

enum pod_phase { POD_PENDING, POD_RUNNING, POD_SUCCEEDED, POD_FAILED, POD_UNKNOWN };

/* Why a pod ended or cannot start, in the reconciler's terms. */
enum pod_trouble {
	POD_TROUBLE_NONE,
	POD_TROUBLE_EXITED,        /* main exited non-zero: user code */
	POD_TROUBLE_START,         /* image pull, missing Secret, bad config: user input */
	POD_TROUBLE_UNSCHEDULABLE, /* the scheduler found no node: capacity */
	POD_TROUBLE_EVICTED,       /* evicted, preempted or deleted by someone else */
	POD_TROUBLE_NODE_LOST,     /* its node vanished or stopped answering */
	POD_TROUBLE_DEVICE,        /* a device it holds is reported Unhealthy (KEP-4680) */
};

/* What in a pod's end points at its node rather than at the job (docs/design.md 1.3). */
enum pod_node_evidence {
	POD_NODE_NONE,
	POD_NODE_PRESSURE,         /* evicted by the kubelet for node pressure */
	POD_NODE_TAINT,            /* evicted for a NoExecute taint it does not tolerate */
	POD_NODE_DEVICE,           /* an allocated device reported Unhealthy */
};

struct podview {
	const char *name;
	const char *uid;
	int rank;                  /* -1 when the label is missing or bad */
	int attempt;               /* -1 likewise */
	enum pod_phase phase;
	const char *node;          /* spec.nodeName; NULL until scheduled */
	const char *ip;            /* status.podIP; NULL until assigned */
	bool gated;                /* carries the cadre.dev/gang scheduling gate */
	int n_gates;               /* scheduling gates of anyone */
	bool kueue_managed;        /* labelled kueue.x-k8s.io/managed=true: Kueue took it */
	bool deleting;             /* has a deletionTimestamp */
	bool deleted_by_us;        /* deleting, and the delete was ours (set by the caller) */
	bool ready;                /* condition Ready is True */
	enum pod_trouble trouble;
	const char *reason;        /* short CamelCase: "ErrImagePull", "Error", "Evicted" */
	const char *message;       /* the kubelet's or scheduler's words; may be NULL */
	int message_len;           /* of message, without its attempt tag (podview_message_len) */
	int exit_code;             /* of main, when it terminated; else 0 */
	bool hung;                 /* ended by the entrypoint's watchdog (spec.hang) */
	/*
	 * InPlace: the main container of this live pod ended a run of the pod's
	 * own attempt with a failure (trouble is POD_TROUBLE_EXITED) and is
	 * restarted in place by the kubelet.
	 */
	bool exited_in_place;
	/*
	 * Evicted by the kubelet for its own local storage past a limit (an
	 * emptyDir's sizeLimit, spec.scratch): the job wrote it, not the node's fault.
	 */
	bool over_storage;
	enum pod_node_evidence evidence;
	const char *device;        /* POD_NODE_DEVICE: the device reported Unhealthy */
};

/*
 * The condition of type in an object's status.conditions (status borrowed;
 * so is the answer), or NULL: for pods, and for any kind whose status has
 * conditions of that shape (PodGroups).
 */
const json_t *podview_condition(const json_t *status, const char *type);

/* Read pod (borrowed) into view. Never fails: missing fields read as unknown. */
void podview_read(const json_t *pod, struct podview *view);

const char *pod_phase_name(enum pod_phase phase);

/*
 * Whether message is the kubelet's for a pod it evicted for its own local
 * storage (pkg/kubelet/eviction/helpers.go): an emptyDir past its sizeLimit,
 *   Usage of EmptyDir volume "scratch-0" exceeds the limit "100Gi".
 * a container past its ephemeral-storage limit, or the pod past the sum of
 * its containers'. For the emptyDir form, the volume's name and the limit
 * are copied (truncated, always terminated) into volume and limit when they
 * are not NULL; otherwise those are set to "".
 */
/* How much of v->message to show: without the attempt tag; 0 without a message. */
int podview_message_len(const struct podview *v);

bool podview_storage_eviction(const char *message, char *volume, size_t volume_size,
			      char *limit, size_t limit_size);

#endif
