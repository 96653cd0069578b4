#include "controller/trainingjob/podview.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Waiting reasons that mean the pod cannot start because of what the user
 * gave: fixing them needs a change of image, Secret or spec, not time. */
static const char *const start_failures[] = {
	"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
	"CreateContainerConfigError", "CreateContainerError", "RunContainerError",
	"CrashLoopBackOff", NULL,
};

static const char *str_at(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static int label_int(const json_t *labels, const char *key)
{
	const char *s = str_at(labels, key);
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > 1000000)
		return -1;
	return (int)v;
}

static enum pod_phase parse_phase(const char *s)
{
	if (!s || !strcmp(s, "Pending"))
		return POD_PENDING;
	if (!strcmp(s, "Running"))
		return POD_RUNNING;
	if (!strcmp(s, "Succeeded"))
		return POD_SUCCEEDED;
	if (!strcmp(s, "Failed"))
		return POD_FAILED;
	return POD_UNKNOWN;
}

const char *pod_phase_name(enum pod_phase phase)
{
	static const char *const names[] = { "Pending", "Running", "Succeeded", "Failed",
					     "Unknown" };

	return (unsigned)phase < 5 ? names[phase] : "Unknown";
}

const json_t *podview_condition(const json_t *status, const char *type)
{
	const json_t *cond;
	size_t i;

	json_array_foreach(json_object_get(status, "conditions"), i, cond)
		if (!strcmp(str_at(cond, "type") ? str_at(cond, "type") : "", type))
			return cond;
	return NULL;
}

static const json_t *main_container_status(const json_t *status)
{
	const json_t *cs, *first = NULL;
	size_t i;

	json_array_foreach(json_object_get(status, "containerStatuses"), i, cs) {
		const char *name = str_at(cs, "name");

		if (name && !strcmp(name, MAIN_CONTAINER))
			return cs;
		if (!first)
			first = cs;
	}
	return first;
}

static bool in_list(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

/*
 * KEP-4680: containerStatuses[].allocatedResourcesStatus[].resources[] of
 * main, each {resourceID, health}. The first device reported Unhealthy, or NULL.
 */
static const char *unhealthy_device(const json_t *cs)
{
	const json_t *res, *dev;
	size_t i, j;

	json_array_foreach(json_object_get(cs, "allocatedResourcesStatus"), i, res)
		json_array_foreach(json_object_get(res, "resources"), j, dev)
			if (str_at(dev, "health") && !strcmp(str_at(dev, "health"), "Unhealthy"))
				return str_at(dev, "resourceID") ? str_at(dev, "resourceID") :
				       str_at(res, "name");
	return NULL;
}

/* The kubelet's eviction for node pressure says "The node was low on resource: ...". */
static bool pressure_message(const char *message)
{
	return message && strstr(message, "The node was low on resource") != NULL;
}

/* The quoted text at *p ("...") into out; p moves past it. False when there is none. */
static bool quoted(const char **p, char *out, size_t size)
{
	const char *end;

	if (**p != '"' || !(end = strchr(*p + 1, '"')))
		return false;
	if (out && size)
		snprintf(out, size, "%.*s", (int)(end - *p - 1), *p + 1);
	*p = end + 1;
	return true;
}

bool podview_storage_eviction(const char *message, char *volume, size_t volume_size,
			      char *limit, size_t limit_size)
{
	static const char emptydir[] = "Usage of EmptyDir volume ";
	static const char exceeds[] = " exceeds the limit ";
	const char *p = message ? strstr(message, emptydir) : NULL;

	if (volume && volume_size)
		volume[0] = '\0';
	if (limit && limit_size)
		limit[0] = '\0';
	if (!message)
		return false;
	if (p) {
		p += sizeof(emptydir) - 1;
		if (quoted(&p, volume, volume_size) && !strncmp(p, exceeds, sizeof(exceeds) - 1)) {
			p += sizeof(exceeds) - 1;
			quoted(&p, limit, limit_size);
		}
		return true;
	}
	return strstr(message, "exceeded its local ephemeral storage limit") ||
	       strstr(message, "Pod ephemeral local storage usage exceeds the total limit");
}

/* The attempt a termination message's tag names, or -1; *len: the message before the tag. */
static int message_attempt(const char *message, int *len)
{
	/* The tag is the last line: after the message, or the whole of it. */
	const char *tag = message ? strstr(message, PODVIEW_ATTEMPT_TAG) : NULL, *digits;
	char *end;
	long a;

	*len = message ? (int)strnlen(message, 1 << 20) : 0;
	if (tag) {
		*len = (int)(tag - message);
		digits = tag + strlen(PODVIEW_ATTEMPT_TAG);
	} else if (message && !strncmp(message, PODVIEW_ATTEMPT_LINE,
				       strlen(PODVIEW_ATTEMPT_LINE))) {
		*len = 0;
		digits = message + strlen(PODVIEW_ATTEMPT_LINE);
	} else {
		return -1;
	}
	errno = 0;
	a = strtol(digits, &end, 10);
	if (errno || end == digits || (*end && *end != '\n') || a < 0 || a > 1000000)
		return -1;
	return (int)a;
}

/*
 * InPlace: a live pod whose main container ended a run of the pod's own
 * attempt (the tag says so) with a failure, and was restarted in place by
 * the kubelet or waits for it. The latest end is state.terminated while the
 * container is down, lastState.terminated once it runs again. A stop for
 * the next attempt, and ends of earlier attempts, are no failure.
 */
static bool read_in_place_exit(const json_t *cs, struct podview *v)
{
	const json_t *t = json_object_get(json_object_get(cs, "state"), "terminated");
	const char *message;
	json_int_t code;
	int len;

	if (!t)
		t = json_object_get(json_object_get(cs, "lastState"), "terminated");
	message = str_at(t, "message");
	if (!t || v->attempt < 0 || message_attempt(message, &len) != v->attempt)
		return false;
	code = json_integer_value(json_object_get(t, "exitCode"));
	if (code == 0 || (code == PODVIEW_RESTART_EXIT &&
			  !strncmp(message, PODVIEW_RESTART_MESSAGE, strlen(PODVIEW_RESTART_MESSAGE))))
		return false;
	v->trouble = POD_TROUBLE_EXITED;
	v->exited_in_place = true;
	v->exit_code = code > INT32_MIN && code < INT32_MAX ? (int)code : 1;
	v->reason = str_at(t, "reason") ? str_at(t, "reason") : "Error";
	v->message = len ? message : NULL;
	v->message_len = len;
	v->hung = v->message && !strncmp(v->message, PODVIEW_HUNG_MESSAGE,
					 strlen(PODVIEW_HUNG_MESSAGE));
	return true;
}

/* Decide trouble, reason, message and exit code from the pod's status. */
static void read_trouble(const json_t *status, struct podview *v)
{
	const json_t *cs = main_container_status(status), *cond;
	const json_t *waiting = json_object_get(json_object_get(cs, "state"), "waiting");
	const json_t *terminated = json_object_get(json_object_get(cs, "state"), "terminated");
	const char *pod_reason = str_at(status, "reason");

	if (terminated) {
		json_int_t code = json_integer_value(json_object_get(terminated, "exitCode"));

		v->exit_code = code > INT32_MIN && code < INT32_MAX ? (int)code : 1;
	}

	/* A device it holds went bad: the node's fault, whatever the program did since. */
	v->device = unhealthy_device(cs);
	if (v->device && !v->deleting) {
		v->trouble = POD_TROUBLE_DEVICE;
		v->evidence = POD_NODE_DEVICE;
		v->reason = "DeviceUnhealthy";
		v->message = NULL;
		return;
	}
	/* The node or the cluster ended it: not the user's code. */
	cond = podview_condition(status, "DisruptionTarget");
	if (pod_reason && (!strcmp(pod_reason, "Evicted") || !strcmp(pod_reason, "Preempting") ||
			   !strcmp(pod_reason, "Shutdown") || !strcmp(pod_reason, "Terminated"))) {
		v->trouble = POD_TROUBLE_EVICTED;
		v->reason = pod_reason;
		v->message = str_at(status, "message");
		if (!strcmp(pod_reason, "Evicted") && pressure_message(v->message))
			v->evidence = POD_NODE_PRESSURE;
		else if (!strcmp(pod_reason, "Evicted"))
			v->over_storage = podview_storage_eviction(v->message, NULL, 0, NULL, 0);
		return;
	}
	if (pod_reason && (!strcmp(pod_reason, "NodeLost") ||
			   !strcmp(pod_reason, "UnexpectedAdmissionError"))) {
		v->trouble = POD_TROUBLE_NODE_LOST;
		v->reason = pod_reason;
		v->message = str_at(status, "message");
		return;
	}
	if (cond && !strcmp(str_at(cond, "status") ? str_at(cond, "status") : "", "True") &&
	    (v->phase == POD_FAILED || v->deleting)) {
		v->trouble = POD_TROUBLE_EVICTED;
		v->reason = str_at(cond, "reason") ? str_at(cond, "reason") : "DisruptionTarget";
		v->message = str_at(cond, "message");
		if (!strcmp(v->reason, "DeletionByTaintManager"))
			v->evidence = POD_NODE_TAINT;
		return;
	}
	if ((v->phase == POD_RUNNING || v->phase == POD_PENDING) && !v->deleting &&
	    read_in_place_exit(cs, v))
		return;
	if (v->phase == POD_FAILED) {
		v->trouble = POD_TROUBLE_EXITED;
		v->reason = terminated && str_at(terminated, "reason") ?
			    str_at(terminated, "reason") : (pod_reason ? pod_reason : "Failed");
		v->message = terminated && str_at(terminated, "message") ?
			     str_at(terminated, "message") : str_at(status, "message");
		if (!terminated && !v->exit_code)
			v->exit_code = 1;
		/* The entrypoint's watchdog ended it (entrypoint.h, ENTRYPOINT_HUNG_MESSAGE). */
		v->hung = v->message && !strncmp(v->message, PODVIEW_HUNG_MESSAGE,
						 strlen(PODVIEW_HUNG_MESSAGE));
		return;
	}
	if (v->phase != POD_PENDING)
		return;
	if (waiting && in_list(str_at(waiting, "reason"), start_failures)) {
		v->trouble = POD_TROUBLE_START;
		v->reason = str_at(waiting, "reason");
		v->message = str_at(waiting, "message");
		return;
	}
	cond = podview_condition(status, "PodScheduled");
	if (cond && str_at(cond, "status") && !strcmp(str_at(cond, "status"), "False") &&
	    str_at(cond, "reason") && !strcmp(str_at(cond, "reason"), "Unschedulable")) {
		v->trouble = POD_TROUBLE_UNSCHEDULABLE;
		v->reason = "Unschedulable";
		v->message = str_at(cond, "message");
	}
}

void podview_read(const json_t *pod, struct podview *v)
{
	const json_t *meta = json_object_get(pod, "metadata");
	const json_t *spec = json_object_get(pod, "spec");
	const json_t *status = json_object_get(pod, "status");
	const json_t *labels = json_object_get(meta, "labels");
	const json_t *gate, *cond;
	size_t i;

	memset(v, 0, sizeof(*v));
	v->name = str_at(meta, "name");
	v->uid = str_at(meta, "uid");
	v->rank = label_int(labels, LABEL_NODE_RANK);
	v->attempt = label_int(labels, LABEL_RESTART_ATTEMPT);
	v->phase = parse_phase(str_at(status, "phase"));
	v->node = str_at(spec, "nodeName");
	v->ip = str_at(status, "podIP");
	v->deleting = json_object_get(meta, "deletionTimestamp") != NULL &&
		      !json_is_null(json_object_get(meta, "deletionTimestamp"));
	v->kueue_managed = str_at(labels, KUEUE_MANAGED_LABEL) &&
			   !strcmp(str_at(labels, KUEUE_MANAGED_LABEL), "true");
	json_array_foreach(json_object_get(spec, "schedulingGates"), i, gate) {
		const char *name = str_at(gate, "name");

		v->n_gates++;
		if (name && !strcmp(name, GANG_GATE))
			v->gated = true;
	}
	cond = podview_condition(status, "Ready");
	v->ready = cond && str_at(cond, "status") && !strcmp(str_at(cond, "status"), "True");
	read_trouble(status, v);
	if (v->message && !v->exited_in_place)
		message_attempt(v->message, &v->message_len);
}

int podview_message_len(const struct podview *v)
{
	return v->message ? v->message_len : 0;
}
