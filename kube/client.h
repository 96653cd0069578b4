/*
 * client.h - typed helpers for the REST verbs, on top of kube/http.h.
 *
 * Each helper builds the path from a struct kube_resource (kube/resource.h),
 * sends one request (plus whatever kube/http.c retries on its own: 429,
 * 503 Retry-After, 401 with dynamic credentials), and returns 0 or the
 * CADRE_E* code. When st is not NULL it receives the outcome, including the
 * API server's Status reason and message on failure ("pods \"x\" already
 * exists"), so a caller can log or surface it. When out is not NULL and the
 * call succeeds, *out is the object the server returned, as a NEW json_t
 * reference the caller must json_decref; on failure *out is NULL. Objects
 * passed in (obj, patch) are borrowed and not modified.
 *
 * ns may be NULL for cluster-scoped resources (and, for list, to list across
 * all namespaces). Thread-safe as kube/http.h.
 */
#ifndef CADRE_KUBE_CLIENT_H
#define CADRE_KUBE_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "kube/http.h"
#include "kube/resource.h"
#include "kube/status.h"

/* GET one object. CADRE_ENOTFOUND when it does not exist. */
int kube_client_get(struct kube_http *h, const struct kube_resource *res,
		    const char *ns, const char *name, json_t **out,
		    struct kube_status *st);

struct kube_list_opts {
	const char *label_selector;    /* NULL = none */
	const char *field_selector;    /* NULL = none */
	long limit;                    /* page size; 0 = 500 (client-go's pager) */
	const char *resource_version;  /* NULL = most recent ("" is sent as is) */
	/*
	 * Only each object's metadata (PartialObjectMetadataList): for a list
	 * whose objects are large and whose metadata is all that is read.
	 */
	bool metadata_only;
};

#define KUBE_ACCEPT_METADATA_LIST \
	"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


/*
 * Called once per item of each page, in order. item is BORROWED: valid for
 * the call only (json_incref to keep it). Return 0 to go on or a negative
 * code to stop the listing, which then returns that code.
 */
typedef int (*kube_list_item_fn)(void *ctx, json_t *item);

/*
 * List with pagination (limit / continue), calling on_item (required) for
 * every item so that a large list never needs to be held whole. resource_version, when
 * not NULL, receives the list's metadata.resourceVersion (of the first page:
 * every page of a paginated list is served from that snapshot) as a
 * malloc'd string for the caller to free. Errors: the mapped status code -
 * notably CADRE_EGONE when a continue token expired mid-list (start again)
 * - CADRE_EPARSE for a body that is not a list, or on_item's code.
 */
int kube_client_list_each(struct kube_http *h, const struct kube_resource *res,
			  const char *ns, const struct kube_list_opts *opts,
			  kube_list_item_fn on_item, void *ctx,
			  char **resource_version, struct kube_status *st);

/*
 * List every page into one array. *items is a NEW reference to a JSON array
 * of the items (each page's items appended in order); resource_version as
 * kube_list_each. On failure *items is NULL and *resource_version untouched.
 */
int kube_client_list(struct kube_http *h, const struct kube_resource *res,
		     const char *ns, const struct kube_list_opts *opts,
		     json_t **items, char **resource_version,
		     struct kube_status *st);

/* POST obj to the collection. CADRE_EEXIST when the name is taken. */
int kube_client_create(struct kube_http *h, const struct kube_resource *res,
		       const char *ns, const json_t *obj, json_t **out,
		       struct kube_status *st);

/* PUT obj (with its metadata.resourceVersion: CADRE_ECONFLICT when stale). */
int kube_client_replace(struct kube_http *h, const struct kube_resource *res,
			const char *ns, const char *name, const json_t *obj,
			json_t **out, struct kube_status *st);

/* PUT obj to the status subresource: only .status is taken by the server. */
int kube_client_replace_status(struct kube_http *h,
			       const struct kube_resource *res, const char *ns,
			       const char *name, const json_t *obj,
			       json_t **out, struct kube_status *st);

struct kube_delete_opts {
	const char *propagation_policy;  /* "Foreground", "Background", "Orphan", or NULL */
	const char *uid;                 /* precondition: delete only this incarnation */
	const char *resource_version;    /* precondition: delete only this version */
	bool grace_period_set;           /* send grace_period_seconds (0 = now) */
	int64_t grace_period_seconds;
};

/*
 * DELETE one object with DeleteOptions (opts may be NULL). A failed
 * precondition is CADRE_ECONFLICT; an object already gone is
 * CADRE_ENOTFOUND (callers deleting idempotently treat it as done). *out,
 * when asked, is what the server returned: the object (still terminating)
 * or a Status.
 */
int kube_client_delete(struct kube_http *h, const struct kube_resource *res,
		       const char *ns, const char *name,
		       const struct kube_delete_opts *opts, json_t **out,
		       struct kube_status *st);

enum kube_patch_type {
	KUBE_PATCH_MERGE,      /* application/merge-patch+json (RFC 7386) */
	KUBE_PATCH_JSON,       /* application/json-patch+json (RFC 6902), patch is an array */
	KUBE_PATCH_STRATEGIC,  /* application/strategic-merge-patch+json (built-in kinds only) */
};

/*
 * PATCH the object, or its subresource ("status"; NULL for the object).
 * A JSON patch with a "test" op that fails is CADRE_EREJECTED (422).
 */
int kube_client_patch(struct kube_http *h, const struct kube_resource *res,
		      const char *ns, const char *name, const char *subresource,
		      enum kube_patch_type type, const json_t *patch,
		      json_t **out, struct kube_status *st);

/* kube_client_patch on the status subresource. */
int kube_client_patch_status(struct kube_http *h,
			     const struct kube_resource *res, const char *ns,
			     const char *name, enum kube_patch_type type,
			     const json_t *patch, json_t **out,
			     struct kube_status *st);

/*
 * Server-side apply: PATCH with application/apply-patch+yaml (obj sent as
 * JSON, which is YAML), ?fieldManager=field_manager (required) and
 * &force=true when force. subresource as kube_client_patch. The name is
 * taken from the argument, not from obj. A conflict with another manager's
 * fields (without force) is CADRE_ECONFLICT.
 */
int kube_client_apply(struct kube_http *h, const struct kube_resource *res,
		      const char *ns, const char *name, const char *subresource,
		      const json_t *obj, const char *field_manager, bool force,
		      json_t **out, struct kube_status *st);

#endif
