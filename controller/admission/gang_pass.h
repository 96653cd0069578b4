/*
 * gang_pass.h - what the last admission pass decided for the jobs it was
 * not asked about (docs/gang-admission.md, "One pass answers the queue").
 *
 * A decision walks the whole queue (admission.h), deciding every job in it,
 * to answer one. A kick (manager_kick_admission) queues every waiting job,
 * and each asks in turn: a queue of N jobs cost N walks of N jobs per kick.
 * So a pass keeps its verdict for every other job in its queue, and a job
 * asked while nothing admission reads has changed since (the manager's
 * admission epoch, moved by every kick) gets it, if its object is the
 * version the pass read and the pass is younger than GANG_PASS_TTL_MS (a
 * wait can end with time alone: a restart backoff, the starvation guard).
 * Each job asked so is then decided as the pass decided it, which already
 * counted every job ahead of it as admitted or waiting; a job the pass did
 * not read (new, changed) is decided afresh, in a new pass.
 *
 * Under the manager's admission lock only.
 */
#ifndef CADRE_GANG_PASS_H
#define CADRE_GANG_PASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GANG_PASS_TTL_MS 2000

/* One job's verdict in a pass; strings borrowed when given, owned by the pass when kept. */
struct gang_pass_entry {
	const char *key;               /* "namespace/name" */
	const char *uid, *resource_version;
	int attempt;
	bool admit;
	const char *reason;            /* a wait's Admitted reason */
	const char *message;
	const char *const *nodes;      /* admit: the node of each rank */
	int n_nodes;
};

struct gang_pass;

void gang_pass_free(struct gang_pass *p);

/*
 * Replace *p with the pass of epoch made at now_ms, holding copies of
 * entries[0..n). 0 or CADRE_ENOMEM (*p then holds no pass).
 */
int gang_pass_set(struct gang_pass **p, uint64_t epoch, uint64_t now_ms,
		  const struct gang_pass_entry *entries, size_t n);

/*
 * The verdict for key when p is a pass of epoch, younger than the ttl at
 * now_ms, that read the job at this uid, resourceVersion and attempt; NULL
 * otherwise. Valid until the next gang_pass_set or gang_pass_free.
 */
const struct gang_pass_entry *gang_pass_find(const struct gang_pass *p, uint64_t epoch,
					     uint64_t now_ms, const char *key, const char *uid,
					     const char *resource_version, int attempt);

#endif
