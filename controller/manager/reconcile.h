/*
 * reconcile.h - the reconcilers the manager's workers run.
 *
 * Each takes an object's namespace and name, reads the caches, makes the
 * writes that bring the cluster closer to what the object asks for, and
 * writes the object's status when it changed. They return 0 when done,
 * CADRE_EAGAIN to be looked at again soon (with backoff), or another
 * negative code for a failure that is retried with backoff and counted.
 * They never write spec or metadata, except the Volume protection
 * finalizer (docs/design.md 1.1).
 */
#ifndef CADRE_RECONCILE_H
#define CADRE_RECONCILE_H

struct manager;

int tj_reconcile(struct manager *m, const char *ns, const char *name);
int vol_reconcile(struct manager *m, const char *ns, const char *name);

/* Queue every TrainingJob that is waiting for admission. */
void tj_requeue_waiting(struct manager *m);

#endif
