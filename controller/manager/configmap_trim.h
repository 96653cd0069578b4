/*
 * configmap_trim.h - what the controller's cache keeps of a job's entrypoint
 * ConfigMap (build_entrypoint_configmap), and what such a ConfigMap is to a
 * job.
 *
 * Each one holds the whole entrypoint script, some 36 KB in base64, and the
 * variables the job's ranks share: 10,000 jobs cached whole would be
 * 360 MB, most of it one text repeated. The cache needs only whose it is,
 * whether its script is this controller's and whether its variables are the
 * job's, so the trim compares the script and digests the variables once,
 * when the watch brings the object, and keeps those answers instead. Pure;
 * thread-safe.
 */
#ifndef CADRE_CONFIGMAP_TRIM_H
#define CADRE_CONFIGMAP_TRIM_H

#include <jansson.h>

/* The member of a trimmed ConfigMap that replaces binaryData: true or false. */
#define CONFIGMAP_TRIM_CURRENT "entrypointCurrent"
/* The member that replaces data: build_data_digest() of it. */
#define CONFIGMAP_TRIM_DIGEST "dataDigest"

/*
 * Trim for ConfigMaps (pass as store_options.trim; arg unused): a new
 * reference to store_trim_metadata()'s object plus CONFIGMAP_TRIM_CURRENT:
 * whether binaryData[ENTRYPOINT_KEY] is entrypoint_script_base64(), and
 * CONFIGMAP_TRIM_DIGEST. NULL when out of memory.
 */
json_t *configmap_trim(const json_t *cm, void *arg);

enum configmap_state {
	CONFIGMAP_ABSENT,    /* none of that name */
	CONFIGMAP_CURRENT,   /* the job's, with this controller's script and the job's variables */
	CONFIGMAP_STALE,     /* the job's, with another script (an earlier controller's) or
				other variables (a spec that changed) */
	CONFIGMAP_FOREIGN,   /* not the job's: no owner reference with its uid */
};

/*
 * What cm (trimmed as above; NULL for none) is to the job whose uid is uid
 * and whose ConfigMap's data has the digest want (build_entrypoint_digest).
 * A ConfigMap is the job's when one of its owner references has the job's
 * uid: a leftover of an earlier job of the same name is not.
 */
enum configmap_state configmap_state(const json_t *cm, const char *uid, const char *want);

#endif
