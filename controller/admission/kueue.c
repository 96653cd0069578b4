/*
 * kueue.c - Kueue's Workload read, mapped and watched (kueue.h).
 */
#include "controller/admission/kueue.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "controller/trainingjob/podview.h"

const struct kube_resource kueue_resource_workloads = {
	"kueue.x-k8s.io", "v1beta2", "kueue.x-k8s.io/v1beta2", "workloads", "Workload", true };

/* --- reading a Workload --- */

static const char *str_of(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool cond_true(const json_t *c)
{
	const char *s = str_of(c, "status");

	return s && !strcmp(s, "True");
}

static void take(struct kueue_workload *out, enum kueue_wl_state state, const json_t *c)
{
	out->state = state;
	out->reason = c ? str_of(c, "reason") : NULL;
	out->message = c ? str_of(c, "message") : NULL;
}

/*
 * Kueue's reasons for an eviction that are no failure of the job's or its
 * nodes: preemption, a stopped queue, a deactivated Workload. The others
 * (PodsReadyTimeout, NodeFailures, AdmissionCheck, ...) are the
 * infrastructure's.
 */
static bool no_failure(const char *reason)
{
	static const char *const names[] = { "Preempted", "ClusterQueueStopped",
		"LocalQueueStopped", "InactiveWorkload", "Deactivated" };

	for (size_t i = 0; reason && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(reason, names[i]))
			return true;
	return false;
}

int kueue_workload_read(const json_t *obj, struct kueue_workload *out)
{
	const json_t *status = json_object_get(obj, "status");
	const json_t *evicted, *preempted, *admitted, *finished, *reserved;

	memset(out, 0, sizeof(*out));
	out->name = str_of(json_object_get(obj, "metadata"), "name");
	if (!out->name || !*out->name)
		return CADRE_EINVAL;
	out->cluster_queue = str_of(json_object_get(status, "admission"), "clusterQueue");
	finished = podview_condition(status, "Finished");
	evicted = podview_condition(status, "Evicted");
	preempted = podview_condition(status, "Preempted");
	admitted = podview_condition(status, "Admitted");
	reserved = podview_condition(status, "QuotaReserved");
	if (finished && cond_true(finished)) {
		take(out, KUEUE_WL_FINISHED, finished);
	} else if (evicted && cond_true(evicted)) {
		take(out, KUEUE_WL_EVICTED, evicted);
		out->no_failure = (preempted && cond_true(preempted)) || no_failure(out->reason);
		/* "Preempted" says little; the Preempted condition says in favour of whom. */
		if (preempted && cond_true(preempted)) {
			if (str_of(preempted, "message"))
				out->message = str_of(preempted, "message");
			if (str_of(preempted, "reason") && out->reason && !strcmp(out->reason, "Preempted"))
				out->reason = str_of(preempted, "reason");
		}
	} else if (admitted && cond_true(admitted)) {
		take(out, KUEUE_WL_ADMITTED, admitted);
	} else if (reserved && cond_true(reserved)) {
		/* Quota is reserved; the admission checks are what it waits for now. */
		take(out, KUEUE_WL_RESERVED, admitted ? admitted : reserved);
	} else {
		take(out, KUEUE_WL_PENDING, reserved);
	}
	return 0;
}

/* --- the decision --- */

static void wait_with(struct kueue_decision *out, const char *reason, bool recheck,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void wait_with(struct kueue_decision *out, const char *reason, bool recheck,
		      const char *fmt, ...)
{
	va_list ap;

	out->verdict = KUEUE_WAIT;
	out->recheck = recheck;
	out->reason = reason;
	va_start(ap, fmt);
	vsnprintf(out->message, sizeof(out->message), fmt, ap);
	va_end(ap);
}

static const char *or_default(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

/* No Workload for the group (yet): Kueue is down, does not take the pods, or is slow. */
static void decide_without_workload(const struct kueue_view *v, struct kueue_decision *out)
{
	const char *q = or_default(v->queue, "Kueue's default");

	if (!v->api_served) {
		wait_with(out, "NotManagedByKueue", true,
			  "not managed by Kueue: the API server serves no Kueue Workloads (%s %s); "
			  "is Kueue installed? Nothing admits this job (queue \"%s\") until it is",
			  kueue_resource_workloads.plural, kueue_resource_workloads.api_version, q);
		return;
	}
	if (v->n && v->pods == v->n && v->managed < v->n) {
		wait_with(out, "NotManagedByKueue", true,
			  "%zu of %zu pods are not managed by Kueue: is Kueue running, and does it "
			  "manage namespace %s? Nothing admitted this job (queue \"%s\")",
			  v->n - v->managed, v->n, or_default(v->namespace, ""), q);
		return;
	}
	wait_with(out, "WaitingForKueue", true,
		  "waiting for Kueue to make the Workload of pod group %s (queue \"%s\")",
		  or_default(v->group, "?"), q);
}

void kueue_decide(const struct kueue_view *v, struct kueue_decision *out)
{
	const struct kueue_workload *wl = v->wl;
	const char *q = or_default(v->queue, "Kueue's default");

	memset(out, 0, sizeof(*out));
	if (!wl) {
		decide_without_workload(v, out);
		return;
	}
	switch (wl->state) {
	case KUEUE_WL_ADMITTED:
	case KUEUE_WL_FINISHED:
		out->verdict = KUEUE_ADMIT;
		out->reason = "Admitted";
		snprintf(out->message, sizeof(out->message), "admitted by Kueue to ClusterQueue %s "
			 "(Workload %s)", or_default(wl->cluster_queue, "?"), wl->name);
		return;
	case KUEUE_WL_EVICTED:
		out->verdict = KUEUE_EVICT;
		out->reason = or_default(wl->reason, "Evicted");
		out->no_failure = wl->no_failure;
		snprintf(out->message, sizeof(out->message), "Kueue evicted Workload %s (%s): %s",
			 wl->name, or_default(wl->reason, "Evicted"), or_default(wl->message, "no message"));
		return;
	case KUEUE_WL_RESERVED:
		wait_with(out, "WaitingForKueue", false,
			  "Kueue reserved quota in ClusterQueue %s for Workload %s and waits for its "
			  "admission checks: %s", or_default(wl->cluster_queue, "?"), wl->name,
			  or_default(wl->message, "no message"));
		return;
	case KUEUE_WL_PENDING:
		break;
	}
	if (wl->message && *wl->message)
		wait_with(out, "WaitingForKueue", false, "Kueue: %s (Workload %s, queue \"%s\")",
			  wl->message, wl->name, q);
	else
		wait_with(out, "WaitingForKueue", false,
			  "waiting for Kueue to evaluate Workload %s (queue \"%s\")", wl->name, q);
}

/* --- names --- */

int kueue_group_name(const char *job, int attempt, char *out, size_t size)
{
	int n;

	if (!job || !*job || attempt < 0)
		return CADRE_EINVAL;
	n = snprintf(out, size, "%s-%d", job, attempt);
	/* It is a label value: at most 63 characters. */
	return n < 0 || (size_t)n >= size || n > 63 ? CADRE_EINVAL : 0;
}

int kueue_group_job(const char *workload, char *out, size_t size)
{
	const char *dash = workload ? strrchr(workload, '-') : NULL;
	size_t len;

	if (!dash || dash == workload || !dash[1] || strspn(dash + 1, "0123456789") != strlen(dash + 1))
		return CADRE_EINVAL;
	len = (size_t)(dash - workload);
	if (len >= size)
		return CADRE_EINVAL;
	memcpy(out, workload, len);
	out[len] = '\0';
	return 0;
}
