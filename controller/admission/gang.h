/*
 * gang.h - built-in gang admission against the live caches (docs/design.md 3.1).
 *
 * gang_admit() answers one question for one job: may its whole gang be
 * created now? It builds a picture of free capacity from the Node cache
 * and the requests of every non-terminal pod, sets aside room for gangs
 * already admitted whose pods are not bound yet, then walks the queue of
 * waiting jobs in admission order (priority, then age, then name) placing
 * each that fits, until it reaches the job asked about. A job that does
 * not fit does not stop smaller ones behind it, unless it has waited longer
 * than --starvation-seconds: then nothing behind it is admitted.
 *
 * One decision at a time (the manager's admission lock), so two workers
 * can never admit two gangs onto the same free GPUs.
 */
#ifndef CADRE_GANG_H
#define CADRE_GANG_H

#include <stddef.h>

#include "api/trainingjob.h"
#include "controller/manager/jobmemo.h"
#include "controller/trainingjob/tj_plan.h"

struct manager;

/*
 * Decide for job. An admission places every rank on a node, and is
 * recorded (jobmemo.h) until the TrainingJob cache shows the status that
 * stores it: every later decision counts the gang on exactly those nodes.
 * A job recorded so is admitted again with the same message and nodes (its
 * status write failed). out's strings and node list point into held,
 * which the caller releases (jobmemo_admission_release) after using out.
 * Returns 0 or CADRE_ENOMEM.
 */
int gang_admit(struct manager *m, const struct trainingjob *job, struct tj_admission *out,
	       struct jobmemo_admission *held);

/*
 * The distinct values of the accelerator label on cached Nodes that match
 * type, as a new array of new strings (*values NULL and *n 0 when none).
 */
void gang_matching_label_values(struct manager *m, const char *type, char ***values,
				size_t *n);

#endif
