/*
 * fakeapi.h - a small stateful stand-in for the API server, for unit tests
 * that stop the reconciler after any one of its writes and let a fresh one
 * take over from what the server holds (unit/test_interrupt.c).
 *
 * It serves, over unit/support/httpd.h, what the TrainingJob reconciler
 * sends: GET, POST, PUT (and PUT of /status, refused with 409 when its
 * resourceVersion is not the stored one, as the real server refuses it) and
 * DELETE (with a uid precondition, 409 when it does not match; the object
 * goes at once) of pods, services and configmaps (namespaced, core), nodes,
 * and trainingjobs (cadre.dev/v1alpha1). It assigns uids, resourceVersions,
 * generations and creation times. Deleting a TrainingJob takes what it owns
 * (and what that owns) with it, as the garbage collector would.
 *
 * It counts writes (every POST, PUT, PATCH and DELETE), and can die after
 * the k-th from now: that write is applied, and every request after it is
 * answered 503, so nothing the stopped process still sends lands.
 *
 * It also plays kube-scheduler and the kubelets, when asked
 * (fakeapi_schedule): a pod without a node is bound to the node its
 * required node affinity names (matchFields metadata.name) or else to the
 * first node with room, only where its nvidia.com/gpu request fits beside
 * the other bound pods; a bound pod runs. A pod that does not fit stays
 * Pending, and fakeapi_overbooked() says so.
 *
 * Objects handed out are new references; the caller may keep them.
 * Thread-safe (the server's threads and the test's).
 */
#ifndef CADRE_UNIT_FAKEAPI_H
#define CADRE_UNIT_FAKEAPI_H

#include <jansson.h>
#include <stdbool.h>

struct fakeapi;

int fakeapi_new(struct fakeapi **out);
void fakeapi_free(struct fakeapi *f);
const char *fakeapi_url(struct fakeapi *f);

/*
 * Store obj (stolen) of resource ("pods", "nodes", "trainingjobs", ...) as
 * if created: uid, resourceVersion, generation 1 and creationTimestamp
 * (created_s, Unix seconds) set. 0, or CADRE_EEXIST.
 */
int fakeapi_add(struct fakeapi *f, const char *resource, json_t *obj, long created_s);

/* Every object of resource, as a new array. */
json_t *fakeapi_list(struct fakeapi *f, const char *resource);

/* One object (NULL when absent; ns NULL for nodes). */
json_t *fakeapi_get(struct fakeapi *f, const char *resource, const char *ns, const char *name);

/* A user's edit: spec.suspend of a TrainingJob set (generation and resourceVersion move). */
int fakeapi_set_suspend(struct fakeapi *f, const char *ns, const char *name, bool suspend);

/* A user's delete of a TrainingJob, and of what it owns. */
int fakeapi_delete_job(struct fakeapi *f, const char *ns, const char *name);

/* Writes received so far (events aside). */
int fakeapi_writes(struct fakeapi *f);

/* Die after the k-th write from now (k >= 1); 0: never. */
void fakeapi_crash_after(struct fakeapi *f, int k);
bool fakeapi_crashed(struct fakeapi *f);
/* Answer again (a new process talks to it). */
void fakeapi_revive(struct fakeapi *f);

/* One round of kube-scheduler and the kubelets (see above). */
void fakeapi_schedule(struct fakeapi *f);

/* The kubelet reports that pod's container exited with code. 0 or CADRE_ENOTFOUND. */
int fakeapi_fail_pod(struct fakeapi *f, const char *ns, const char *name, int code);

/*
 * spec.restartStrategy InPlace: the pod's run of its attempt exited with code
 * and the kubelet restarted the container in place (phase Running, the end
 * in lastState, tagged with the pod's cadre.dev/restart-attempt as the
 * entrypoint tags it). 0 or CADRE_ENOTFOUND.
 */
int fakeapi_fail_pod_in_place(struct fakeapi *f, const char *ns, const char *name, int code);

/* Someone deletes the pod (no grace, as the pod GC would end it). 0 or CADRE_ENOTFOUND. */
int fakeapi_delete_pod(struct fakeapi *f, const char *ns, const char *name);

/*
 * The node is lost: it goes, and with it every pod bound there, as the pod
 * GC removes the pods of a deleted node. 0 or CADRE_ENOTFOUND.
 */
int fakeapi_lose_node(struct fakeapi *f, const char *name);

/* The kubelet reports that pod's container exited 0 (phase Succeeded). 0 or CADRE_ENOTFOUND. */
int fakeapi_succeed_pod(struct fakeapi *f, const char *ns, const char *name);

/* Pods left Pending because their node had no room for them: 0 when none ever was. */
int fakeapi_overbooked(struct fakeapi *f);

#endif
