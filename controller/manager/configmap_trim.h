/*
 * configmap_trim.h - what the controller's cache keeps of a job's entrypoint
 * ConfigMap (build_entrypoint_configmap), and what such a ConfigMap is to a
 * job.
 *
 * Each one holds the whole entrypoint script, some 27 KB: 10,000 jobs
 * cached whole would be 270 MB of one text repeated. The cache needs only
 * whose it is and whether its script is this controller's, so the trim
 * compares the script once, when the watch brings the object, and keeps the
 * answer instead. Pure; thread-safe.
 */
#ifndef CADRE_CONFIGMAP_TRIM_H
#define CADRE_CONFIGMAP_TRIM_H

#include <jansson.h>

/* The member of a trimmed ConfigMap that replaces data: true or false. */
#define CONFIGMAP_TRIM_CURRENT "entrypointCurrent"

/*
 * Trim for ConfigMaps (pass as store_options.trim; arg unused): a new
 * reference to store_trim_metadata()'s object plus CONFIGMAP_TRIM_CURRENT:
 * whether data[ENTRYPOINT_KEY] is entrypoint_script(). NULL when out of
 * memory.
 */
json_t *configmap_trim(const json_t *cm, void *arg);

enum configmap_state {
	CONFIGMAP_ABSENT,    /* none of that name */
	CONFIGMAP_CURRENT,   /* the job's, with this controller's script */
	CONFIGMAP_STALE,     /* the job's, with another script: an earlier controller's */
	CONFIGMAP_FOREIGN,   /* not the job's: no owner reference with its uid */
};

/*
 * What cm (trimmed as above; NULL for none) is to the job whose uid is uid.
 * A ConfigMap is the job's when one of its owner references has the job's
 * uid: a leftover of an earlier job of the same name is not.
 */
enum configmap_state configmap_state(const json_t *cm, const char *uid);

#endif
