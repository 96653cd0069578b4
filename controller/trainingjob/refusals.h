/*
 * refusals.h - the last pod create the API server refused, per job.
 *
 * A refused create leaves nothing in any cache: no pod appears, so the
 * planner, which sees the world only through its input, would go on
 * reporting "0 of 1 pods Running" while Pod Security, a ResourceQuota or an
 * admission webhook refuses every retry. The reconciler records each
 * refusal here and passes it to the next plan (struct tj_refusal), which
 * turns it into status.message, a condition and, after the gang timeout, a
 * failure of user input. The job's entrypoint ConfigMap, which its pods
 * need, is recorded the same way under its own name, with the rank
 * TJ_REFUSAL_ENTRYPOINT (tj_plan.h): a create refused, or one of that name
 * that is not the job's.
 *
 * Memory only: after a controller restart the next create is refused again
 * within one pass, so nothing is lost by forgetting. The manager owns the
 * table (manager.h); keys are job keys ("namespace/name"). One entry per
 * job, the latest refusal, with the time of the first refusal of the same
 * attempt. An entry holds only while it describes the same job (uid) and
 * attempt: a lookup for another one drops it. Thread-safe. Every function
 * accepts a NULL table and then does nothing (finds nothing).
 */
#ifndef CADRE_REFUSALS_H
#define CADRE_REFUSALS_H

#include <stdbool.h>
#include <stdint.h>

#include "kube/status.h"

/* What one refusal said; plain data, copied out by refusals_get. */
struct refusal {
	char pod[254];          /* the pod (or entrypoint ConfigMap) that could not be created */
	int rank;
	int attempt;            /* restarts + infraRestarts of that create */
	char reason[64];        /* the API server's Status reason: Forbidden, Invalid, ... */
	char message[512];      /* the API server's message */
	int64_t first_time;     /* Unix seconds of the first refusal of this attempt */
	int64_t time;           /* Unix seconds of this one */
};

struct refusals;

struct refusals *refusals_new(void);
void refusals_free(struct refusals *r);

/*
 * Whether a failed create is the API server refusing the object, as
 * opposed to a transient failure: a response came, and it was 400, 403 or
 * 422 (admission webhooks, Pod Security, quotas, validation).
 */
bool refusal_is_final(const struct kube_status *st);

/*
 * Record that the create of pod (rank, attempt) of job (key, uid) was
 * refused at now (Unix seconds) with st's reason and message. An entry of
 * the same job and attempt keeps its first_time. 0 or CADRE_ENOMEM.
 */
int refusals_record(struct refusals *r, const char *job, const char *uid, const char *pod,
		    int rank, int attempt, const struct kube_status *st, int64_t now);

/* The create of pod succeeded (or the pod exists): drop the entry if it names pod. */
void refusals_created(struct refusals *r, const char *job, const char *pod);

/*
 * Copy job's refusal into out when it belongs to this uid and attempt;
 * an entry of another uid or attempt is dropped. True when out was filled.
 */
bool refusals_get(struct refusals *r, const char *job, const char *uid, int attempt,
		  struct refusal *out);

/* Drop job's entry (the job is gone). */
void refusals_forget(struct refusals *r, const char *job);

#endif
