/*
 * labels.h - every name cadre writes into the cluster under its own group:
 * the API group and version, the labels, annotations, scheduling gate and
 * finalizer it puts on objects, the event reporter and the container names
 * of the pods it builds (docs/design.md, "Names on objects").
 *
 * The controller, the CLI and the tests spell these through this header
 * only, so a rename is one edit. Only strings; includes nothing.
 */
#ifndef CADRE_LABELS_H
#define CADRE_LABELS_H

#define CADRE_GROUP "cadre.dev"
#define CADRE_GROUP_VERSION "v1alpha1"  /* not CADRE_VERSION: that is the release */
#define CADRE_API_VERSION CADRE_GROUP "/" CADRE_GROUP_VERSION
/* Every label and annotation key cadre owns starts with this (users may not set them). */
#define CADRE_KEY_PREFIX CADRE_GROUP "/"

/* On every pod, Service and PodGroup of a job: the job's name. */
#define LABEL_JOB_NAME CADRE_KEY_PREFIX "job-name"
/* On every pod of a job: its rank (0..nodes-1) and the attempt it belongs to. */
#define LABEL_NODE_RANK CADRE_KEY_PREFIX "node-rank"
#define LABEL_RESTART_ATTEMPT CADRE_KEY_PREFIX "restart-attempt"
/* The same label as a JSON pointer into a pod ("/" in a key is "~1" there). */
#define LABEL_RESTART_ATTEMPT_POINTER "/metadata/labels/" CADRE_GROUP "~1restart-attempt"
/* "true" on the pods of a job with spec.exclusive: admission keeps their nodes whole. */
#define LABEL_EXCLUSIVE CADRE_KEY_PREFIX "exclusive"
/* On a Volume's claim (and PV): the Volume it serves. */
#define LABEL_VOLUME CADRE_KEY_PREFIX "volume"
/* On an NFS PV, beside LABEL_VOLUME: a PV is cluster-scoped. */
#define LABEL_VOLUME_NAMESPACE CADRE_KEY_PREFIX "volume-namespace"

/*
 * On each element of an array job (docs/design.md 12): the array's name and the
 * element's index. The annotations say what the element's SLURM_ARRAY_* read: the
 * array's job id and its index set ("0-9%2").
 */
#define LABEL_ARRAY_JOB CADRE_KEY_PREFIX "array-job"
#define LABEL_ARRAY_INDEX CADRE_KEY_PREFIX "array-index"
#define ANNOTATION_ARRAY_JOB_ID CADRE_KEY_PREFIX "array-job-id"
#define ANNOTATION_ARRAY_TASKS CADRE_KEY_PREFIX "array-tasks"
/* On an array job: the elements `cadre scancel ID_INDEX` cancelled, a ranged index set. */
#define ANNOTATION_CANCEL_TASKS CADRE_KEY_PREFIX "cancel-tasks"
/* On a job: a requeue asked for by `cadre scontrol requeue` (any new value asks again). */
#define ANNOTATION_REQUEUE CADRE_KEY_PREFIX "requeue"
/* On a job `cadre launch -c NAME` keeps up as a SkyPilot cluster: NAME (cli/cluster.c). */
#define LABEL_CLUSTER CADRE_KEY_PREFIX "cluster"
/* On a job `cadre sbatch --dependency=singleton` named apart: the Slurm job name it groups by. */
#define LABEL_SLURM_NAME CADRE_KEY_PREFIX "slurm-name"

/* The job's uid on each pod, so a pod left by an earlier job of the same name is told apart. */
#define ANNOTATION_JOB_UID CADRE_KEY_PREFIX "job-uid"
/* Written by cadre sbatch and launch: who submitted the job. */
#define ANNOTATION_SUBMITTED_BY CADRE_KEY_PREFIX "submitted-by"

/* The scheduling gate of built-in gang admission (docs/gang-admission.md). */
#define GANG_GATE CADRE_KEY_PREFIX "gang"
/* The finalizer that keeps a Volume while jobs use it (docs/volumes.md). */
#define VOL_FINALIZER CADRE_KEY_PREFIX "volume-protection"
/* The reportingController of cadre's events. */
#define EVENTS_CONTROLLER CADRE_KEY_PREFIX "controller"

/* The container of a job's pod that runs the user's command. */
#define MAIN_CONTAINER "main"

#endif
