/*
 * status.h - writing a TrainingJob's or a Volume's status: the one writer
 * both reconcilers use.
 *
 * The reconcilers compute the status they want; this compares it with the
 * cached object's status in canonical form (so the server's formatting of the
 * same status never causes a write) and, only when they differ, PUTs it
 * through the status subresource, guarded by the object's resourceVersion.
 * It never writes spec or metadata (docs/design.md 1.1). Thread-safe as the
 * manager's HTTP client is.
 */
#ifndef CADRE_STATUS_H
#define CADRE_STATUS_H

#include <jansson.h>
#include <stdbool.h>

#include "controller/manager/manager.h"

/*
 * The canonical JSON of a stored status (borrowed, may be NULL), as the kind's
 * own encoder writes it: a new reference, or NULL when it does not parse.
 */
typedef json_t *(*status_canonical_fn)(const json_t *status);

/*
 * Write want (borrowed; canonical) as the status of obj (borrowed, as cached)
 * of resource res, unless canonical(obj's status) already equals it. Returns
 * 0 (*written, when not NULL, says whether a PUT happened), CADRE_EAGAIN on a
 * conflict or a vanished object (a newer version is on its way through the
 * watch), CADRE_ENOMEM, or the API error, logged under component.
 */
int status_write(struct manager *m, const struct kube_resource *res, const json_t *obj,
		 const json_t *want, status_canonical_fn canonical, const char *component,
		 bool *written);

#endif
