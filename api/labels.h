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
/* On a Volume's claim (and PV): the Volume it serves. */
#define LABEL_VOLUME CADRE_KEY_PREFIX "volume"
/* On an NFS PV, beside LABEL_VOLUME: a PV is cluster-scoped. */
#define LABEL_VOLUME_NAMESPACE CADRE_KEY_PREFIX "volume-namespace"

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
