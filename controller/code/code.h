/*
 * code.h - the controller's side of code bundles (docs/code.md): the
 * cache of their ConfigMaps, whether a job's bundles are complete, the
 * owner references that make a bundle go with the last job that uses it,
 * and the collection of bundles no job needs any more.
 *
 * The bundles' ConfigMaps are cached trimmed to what is read here (their
 * data never stays in memory) and indexed by "namespace/<label>" (the
 * label api/code.h names); the TrainingJob cache is indexed the same way
 * by the bundles each job's spec.code names. A bundle's key in the work
 * queue is "code/<namespace>/<label>".
 */
#ifndef CADRE_CONTROLLER_CODE_H
#define CADRE_CONTROLLER_CODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/code.h"
#include "kube/store.h"

struct manager;
struct trainingjob;

/* The name of both indexes. */
#define CODE_INDEX "code"

/*
 * Trim for the bundles' cache (store_options.trim): metadata only (name,
 * namespace, uid, resourceVersion, creationTimestamp, deletionTimestamp,
 * labels, ownerReferences and cadre's code annotations). NULL when out of
 * memory.
 */
json_t *code_trim(const json_t *cm, void *arg);

/* Index of the bundles' cache: a part under "namespace/<label>". */
int code_index_part(const json_t *cm, json_t *values, void *arg);

/* Index of the TrainingJob cache: a job under "namespace/<label>" per spec.code digest. */
int code_index_job(const json_t *job, json_t *values, void *arg);

/* What the cache holds of one bundle of a job. */
struct code_state {
	bool complete;     /* every part is there, sound and of this digest */
	bool file;         /* a bundle of one file */
	uint32_t parts;    /* how many it has (0 when none was seen) */
	uint64_t size;     /* the archive's bytes */
	char why[256];     /* !complete: what is missing, for a person */
};

/*
 * The bundle digest in namespace ns, from the cache parts (KIND_CODE):
 * complete when parts 0 .. n-1 are all there and agree (code_part_read),
 * else why says what is missing ("no ConfigMap labelled ...", "2 of 3
 * parts", "part 1: annotation ..."). 0, CADRE_ENOMEM or CADRE_EINVAL for a
 * malformed digest.
 */
int code_state_of(struct store *parts, const char *ns, const char *digest,
		  struct code_state *out);

/*
 * Make job (metadata.uid set) an owner of each part of the bundle digest
 * in ns that does not name it yet (a strategic merge patch of
 * ownerReferences, which merges by uid): with the last of its owners
 * deleted, Kubernetes' garbage collector deletes the part. Array elements
 * are not owners: their array is. 0, or the first error of a patch.
 */
int code_own(struct manager *m, const struct trainingjob *job, const char *digest);

/*
 * The bundle "namespace/<label>": deleted when no job in the cache names
 * it and its newest part is older than --code-orphan-seconds, or when
 * every job naming it has finished and the last ended more than
 * --code-retention ago; otherwise looked at again when that time comes.
 * 0 or the error of a delete (retried by the queue).
 */
int code_reconcile(struct manager *m, const char *ns, const char *label);

/* Bytes of bundle parts cached per namespace, as Prometheus gauge lines, into out. */
struct buf;
void code_metrics_render(struct store *parts, struct buf *out);

#endif
