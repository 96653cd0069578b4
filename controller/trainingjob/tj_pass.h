/*
 * tj_pass.h - one pass of the TrainingJob reconciler, shared by its files:
 * tj_reconcile.c runs the pass, tj_read.c reads the caches into the
 * planner's input, tj_write.c makes the writes the plan lists and stores
 * the status. A function's comment is at its definition. Internal to
 * controller/trainingjob/.
 */
#ifndef CADRE_TJ_PASS_H
#define CADRE_TJ_PASS_H

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "api/fielderr.h"
#include "api/meta.h"
#include "api/trainingjob.h"
#include "controller/build/build.h"
#include "controller/admission/affinity.h"
#include "controller/manager/cache_record.h"
#include "controller/admission/gang.h"
#include "controller/admission/kueue.h"
#include "controller/manager/configmap_trim.h"
#include "controller/manager/manager.h"
#include "controller/manager/status.h"
#include "controller/partition/partitions.h"
#include "controller/trainingjob/podview.h"
#include "controller/manager/reconcile.h"
#include "controller/trainingjob/tj_depend_read.h"
#include "controller/trainingjob/tj_plan.h"
#include "controller/code/code.h"
#include "kube/client.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Everything one pass reads, owned in one place so one function frees it. */
struct tj_pass {
	struct manager *m;
	char key[STORE_KEY_MAX];
	json_t *obj;                 /* the job as cached */
	struct trainingjob job;
	char job_id[16];             /* the id claimed while status.jobId is unset (jobids.h) */
	json_t *partition_obj;       /* the job's Partition as cached, before its admission */
	struct field_errors errs;
	struct buf invalid;
	json_t *pods;                /* array of pod objects */
	json_t *podgroup_objs;       /* native mode: the job's PodGroups */
	json_t *entrypoint;          /* the entrypoint ConfigMap as cached (trimmed), or NULL */
	char entrypoint_digest[BUILD_DIGEST_SIZE];  /* of the data it must hold; "" unknown */
	bool entrypoint_ready;       /* it is the job's and current: pods may be created */
	struct tj_podgroup *podgroups;
	size_t n_podgroups;
	struct podview *views;
	size_t n_views;
	json_t **volume_objs;
	struct tj_volume_state *volumes;
	size_t n_volumes;
	char **label_values;         /* accelerator label values that match */
	size_t n_label_values;
	struct code_state *code;     /* spec.code's bundles in the namespace */
	struct tj_code_state *code_in;  /* the same, as the planner's input */
	struct build_code *code_build;  /* the same, as the builder's */
	size_t n_code;
	struct tj_plan plan;
	struct jobmemo_admission admission;  /* the strings of the admission verdict */
	atomic_int created;          /* pods created by this pass (run_actions) */
	atomic_bool refused;         /* the API server refused a create of this pass */
	atomic_bool no_group;        /* native mode: this pass could not make the PodGroup */
	atomic_bool no_service;      /* the Service of the job's name was refused or is another's */
	atomic_bool no_claims;       /* what the pods claim DRA devices from was not made */
	atomic_bool claims_made;     /* ... or was, by this pass (no watch will say so) */
	struct refusal refusal;      /* the last refusal remembered (jobmemo.h) */
	struct tj_refusal refusal_in;  /* the same, as the planner's input */
	struct job_partition partition;  /* the job's Partition, applied to job.spec */
	struct tj_dep_verdict dependency;  /* spec.dependency against the caches */
	json_t *element_objs;        /* an array job's elements, as cached */
	struct tj_element *elements;
	size_t n_elements;
	struct tj_preempted preempted;   /* a higher tier's job preempts this one */
	char preemptor[STORE_KEY_MAX];   /* its key, which preempted points at */
};

/* tj_read.c */
void tj_fill_build_opts(struct tj_pass *p, struct build_opts *bo);
struct trainingjob tj_id_view(const struct tj_pass *p);
void tj_input_caches(struct tj_pass *p, struct tj_input *in);
void tj_input_partition(struct tj_pass *p, struct tj_input *in);
void tj_read_code(struct tj_pass *p);
int tj_read_dependency(struct tj_pass *p, struct tj_input *in);
void tj_read_elements(struct tj_pass *p, struct tj_input *in);
void tj_read_entrypoint(struct tj_pass *p);
void tj_read_label_values(struct tj_pass *p);
void tj_read_pods(struct tj_pass *p);
int tj_read_preempted(struct tj_pass *p, struct tj_input *in);
void tj_read_refusal(struct tj_pass *p, struct tj_input *in);
void tj_read_volumes(struct tj_pass *p);
void tj_validate_job(struct tj_pass *p);

/* tj_write.c */
int tj_own_code(struct tj_pass *p);
int tj_run_actions(struct tj_pass *p);
void tj_send_plan_events(struct tj_pass *p);
int tj_write_status(struct tj_pass *p, bool *written_out);

#endif
