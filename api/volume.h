/*
 * volume.h - the Volume kind (cadre.dev/v1alpha1, docs/design.md section 4): a
 * shared volume that TrainingJobs mount by name, backed by a PVC that cadre
 * creates (k8s-pvc), adopts (claimName) or binds to an NFS export (nfs).
 *
 * Same conventions as trainingjob.h: owned heap strings, NULL when absent;
 * vol_parse never crashes and reports problems with their field paths.
 * Not thread-safe; one owner at a time.
 */
#ifndef CADRE_API_VOLUME_H
#define CADRE_API_VOLUME_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/condition.h"
#include "api/labels.h"
#include "api/meta.h"

struct field_errors;

#define VOL_API_VERSION CADRE_API_VERSION
#define VOL_KIND "Volume"

/* What the PVC's name and protection use: VOL_FINALIZER (api/labels.h). */

/*
 * k8s-pvc is the default: SkyPilot's volume files always name a type, and
 * a PVC is the only kind that needs no other field.
 */
enum vol_type {
	VOL_TYPE_K8S_PVC = 0,  /* "k8s-pvc" */
	VOL_TYPE_NFS,          /* "nfs": cadre creates a PV for the export and a PVC bound to it */
};

enum vol_access_mode {
	VOL_ACCESS_READ_WRITE_MANY = 0,  /* the default: every node of a gang mounts it */
	VOL_ACCESS_READ_WRITE_ONCE,
	VOL_ACCESS_READ_ONLY_MANY,
	VOL_ACCESS_READ_WRITE_ONCE_POD,
};

enum vol_reclaim_policy {
	VOL_RECLAIM_RETAIN = 0,  /* the default: deleting the Volume keeps the PVC and its data */
	VOL_RECLAIM_DELETE,      /* the PVC is owned by the Volume and goes with it */
};

enum vol_phase {
	VOL_PHASE_UNSET = 0,  /* not yet looked at; not written back */
	VOL_PHASE_PENDING,    /* the PVC does not exist or is not Bound yet */
	VOL_PHASE_BOUND,      /* the PVC is Bound: jobs may mount it */
	VOL_PHASE_FAILED,     /* the PVC is Lost or cannot be made */
};

struct vol_nfs {
	char *server;  /* owned; NULL when absent */
	char *path;    /* owned; NULL when absent */
	bool read_only;
};

struct vol_spec {
	enum vol_type type;
	char *size;          /* raw quantity, owned; NULL when absent */
	bool has_size;       /* size_milli holds size parsed */
	int64_t size_milli;  /* bytes * 1000 */
	enum vol_access_mode access_mode;
	char *storage_class_name;
	char *claim_name;    /* an existing PVC to use instead of creating one */
	bool has_nfs;        /* spec.nfs was given */
	struct vol_nfs nfs;
	enum vol_reclaim_policy reclaim_policy;
};

struct vol_status {
	enum vol_phase phase;
	char *claim_name;        /* the PVC in use */
	char *capacity;          /* the PVC's status.capacity.storage, raw */
	char **access_modes;     /* the PVC's status.accessModes */
	size_t n_access_modes;
	char **used_by;          /* names of non-terminal TrainingJobs that mount it */
	size_t n_used_by;
	int64_t observed_generation;  /* 0: not written (no status computed yet) */
	struct condition_list conditions;  /* Ready, Reconciling, Stalled */
};

struct volume {
	struct object_meta meta;
	struct vol_spec spec;
	struct vol_status status;
};

void vol_init(struct volume *vol);
void vol_release(struct volume *vol);
void vol_status_init(struct vol_status *status);
void vol_status_release(struct vol_status *status);

/*
 * Read a Volume object (borrowed) into out, which vol_parse initializes
 * first; like tj_parse: structural problems go to errs with their paths,
 * defaults are applied, out holds what could be read. Returns 0,
 * CADRE_EINVAL when it added errors, or CADRE_ENOMEM. Release out whatever
 * it returns.
 */
int vol_parse(const json_t *obj, struct volume *out, struct field_errors *errs);

/*
 * Defaults for what was absent. Every default of the kind is the zero value
 * of its enum (k8s-pvc, ReadWriteMany, Retain), so vol_parse's zeroed
 * struct already holds them; this exists so callers need not know that.
 */
void vol_default(struct vol_spec *spec);

/*
 * The rules of docs/design.md section 4: size required for k8s-pvc unless
 * claimName is given, and a positive quantity when given; nfs requires
 * nfs.server and an absolute nfs.path, and takes no claimName; nfs fields
 * only with type nfs; names are DNS subdomains. Every problem is added to
 * errs. Returns 0, CADRE_EINVAL, or CADRE_ENOMEM.
 */
int vol_validate(const struct volume *vol, struct field_errors *errs);

/* Read a status object (borrowed; NULL or null means none); paths "status.*". */
int vol_status_parse(const json_t *obj, struct vol_status *status, struct field_errors *errs);

/*
 * The status as the object to PUT to /status (new reference); unset
 * optional fields are left out, usedBy, accessModes and conditions always
 * written. NULL when out of memory or a string is not valid UTF-8.
 */
json_t *vol_status_to_json(const struct vol_status *status);

/*
 * Finish a status computed from the spec of generation (metadata.generation):
 * derive the GitOps conditions from phase and Ready (docs/design.md 1.2) and
 * stamp the status and every condition with generation.
 *   Pending: Reconciling=True with Ready's reason and message (kstatus:
 *            InProgress).
 *   Failed:  Stalled=True with Ready's reason and message (kstatus: Failed).
 *   Bound:   Reconciling=False (kstatus: Current).
 * Stalled is added only when True and set False if it ever stops being so.
 * A status with no phase yet is only stamped. lastTransitionTime moves only
 * when a condition's status does, so a second call with the same status
 * changes nothing. Returns 0 or CADRE_ENOMEM.
 */
int vol_status_observe(struct vol_status *status, int64_t generation, int64_t now);

/*
 * The note of the Event that a change of phase deserves, for a person to
 * act on: "phase <was> -> <now>: <why>", or "phase <now>: <why>" when was
 * is VOL_PHASE_UNSET (a Volume seen for the first time), <why> being the
 * message of now's Ready condition. Returns true and writes out (size
 * bytes, always terminated, cut when longer) when now->phase is set and is
 * not was; false, and out untouched, otherwise.
 */
bool vol_phase_change_note(enum vol_phase was, const struct vol_status *now, char *out,
			   size_t size);

/* Names as written in the API; static strings. */
const char *vol_type_name(enum vol_type type);
const char *vol_access_mode_name(enum vol_access_mode mode);
const char *vol_reclaim_policy_name(enum vol_reclaim_policy policy);
const char *vol_phase_name(enum vol_phase phase);  /* "" for VOL_PHASE_UNSET */

#endif
