#include "kube/client.h"

#include <string.h>

#include "base/buf.h"
#include "base/err.h"

/* client-go's pager asks for 500 items a page. */
#define DEFAULT_PAGE_LIMIT 500
/* Paths are short; a selector past this is a bug, not a request. */
#define MAX_PATH (256 * 1024)

/*
 * One request and, on success, the body parsed into *out when asked.
 * Every helper ends here, so the outcome reaches st the same way.
 */
static int call_accept(struct kube_http *h, const char *method, const struct buf *path,
		       const char *accept, const char *content_type, const json_t *body,
		       json_t **out, struct kube_status *st)
{
	struct kube_response resp;
	char *payload = NULL;
	json_error_t jerr;
	int err;

	if (out)
		*out = NULL;
	kube_response_init(&resp);
	if (body) {
		payload = json_dumps(body, JSON_COMPACT);
		if (!payload) {
			err = kube_status_set(&resp.error, CADRE_ENOMEM,
					      "%s %s: cannot encode the body",
					      method, buf_str(path));
			goto out;
		}
	}
	err = kube_http_request_accept(h, method, buf_str(path), accept, content_type, payload,
				       payload ? strlen(payload) : 0, &resp);
	if (err || !out)
		goto out;
	*out = json_loadb(buf_str(&resp.body), resp.body.len, 0, &jerr);
	if (!*out)
		err = kube_status_set(&resp.error, CADRE_EPARSE,
				      "%s %s: response is not JSON: %s", method,
				      buf_str(path), jerr.text);
out:
	if (st)
		*st = resp.error;
	free(payload);
	kube_response_release(&resp);
	return err;
}

static int call(struct kube_http *h, const char *method, const struct buf *path,
		const char *content_type, const json_t *body, json_t **out,
		struct kube_status *st)
{
	return call_accept(h, method, path, NULL, content_type, body, out, st);
}

/* Build the path, recording a failure in st. */
static int path_for(struct buf *path, const struct kube_resource *res,
		    const char *ns, const char *name, const char *subresource,
		    const struct buf *query, struct kube_status *st)
{
	int err = kube_path(path, res, ns, name, subresource,
			    query ? buf_str(query) : NULL);

	if (err)
		kube_status_set(st, err, "%s %s/%s: cannot build the request path",
				res->plural, ns ? ns : "", name ? name : "");
	return err;
}

/* One request to one object or collection: build the path, then call(). */
static int request(struct kube_http *h, const char *method, const struct kube_resource *res,
		   const char *ns, const char *name, const char *subresource,
		   const struct buf *query, const char *content_type, const json_t *body,
		   json_t **out, struct kube_status *st)
{
	struct buf path;
	int err;

	if (out)
		*out = NULL;
	buf_init(&path, MAX_PATH);
	err = path_for(&path, res, ns, name, subresource, query, st);
	if (!err)
		err = call(h, method, &path, content_type, body, out, st);
	buf_release(&path);
	return err;
}

int kube_client_get(struct kube_http *h, const struct kube_resource *res,
		    const char *ns, const char *name, json_t **out,
		    struct kube_status *st)
{
	return request(h, "GET", res, ns, name, NULL, NULL, NULL, NULL, out, st);
}

int kube_client_list_each(struct kube_http *h, const struct kube_resource *res,
			  const char *ns, const struct kube_list_opts *opts,
			  kube_list_item_fn on_item, void *ctx,
			  char **resource_version, struct kube_status *st)
{
	static const struct kube_list_opts defaults = { 0 };
	struct buf path, query;
	char *cont = NULL, *rv = NULL, limit[32];
	json_t *page = NULL;
	int err;

	if (!opts)
		opts = &defaults;
	buf_init(&path, MAX_PATH);
	buf_init(&query, MAX_PATH);
	snprintf(limit, sizeof(limit), "%ld",
		 opts->limit > 0 ? opts->limit : (long)DEFAULT_PAGE_LIMIT);
	do {
		json_t *items, *item;
		const char *next, *page_rv;
		size_t i;

		buf_reset(&path);
		buf_reset(&query);
		err = kube_path_query_add(&query, "labelSelector", opts->label_selector);
		if (!err)
			err = kube_path_query_add(&query, "fieldSelector", opts->field_selector);
		if (!err)
			err = kube_path_query_add(&query, "limit", limit);
		/*
		 * The continue token pins the snapshot; resourceVersion may only
		 * go with the first page.
		 */
		if (!err && cont)
			err = kube_path_query_add(&query, "continue", cont);
		else if (!err)
			err = kube_path_query_add(&query, "resourceVersion",
						  opts->resource_version);
		if (err) {
			kube_status_set(st, err, "list %s: selectors too long", res->plural);
			goto out;
		}
		err = path_for(&path, res, ns, NULL, NULL, &query, st);
		if (!err)
			err = call_accept(h, "GET", &path,
					  opts->metadata_only ? KUBE_ACCEPT_METADATA_LIST : NULL,
					  NULL, NULL, &page, st);
		if (err)
			goto out;
		items = json_object_get(page, "items");
		if (!json_is_array(items) && !json_is_null(items)) {
			err = kube_status_set(st, CADRE_EPARSE, "list %s: the response has no items",
					      res->plural);
			goto out;
		}
		if (!rv) {
			page_rv = json_string_value(json_object_get(
				json_object_get(page, "metadata"), "resourceVersion"));
			rv = strdup(page_rv ? page_rv : "");
			if (!rv) {
				err = kube_status_set(st, CADRE_ENOMEM, "out of memory");
				goto out;
			}
		}
		json_array_foreach(items, i, item) {
			err = on_item(ctx, item);
			if (err) {
				kube_status_set(st, err, "list %s: stopped by the caller (%s)",
						res->plural, cadre_strerror(err));
				goto out;
			}
		}
		free(cont);
		cont = NULL;
		next = json_string_value(json_object_get(json_object_get(page, "metadata"),
							 "continue"));
		if (next && *next) {
			cont = strdup(next);
			if (!cont) {
				err = kube_status_set(st, CADRE_ENOMEM, "out of memory");
				goto out;
			}
		}
		json_decref(page);
		page = NULL;
	} while (cont);
	if (resource_version) {
		*resource_version = rv;
		rv = NULL;
	}
out:
	json_decref(page);
	free(cont);
	free(rv);
	buf_release(&path);
	buf_release(&query);
	return err;
}

static int append_item(void *ctx, json_t *item)
{
	return json_array_append(ctx, item) ? CADRE_ENOMEM : 0;
}

int kube_client_list(struct kube_http *h, const struct kube_resource *res,
		     const char *ns, const struct kube_list_opts *opts,
		     json_t **items, char **resource_version,
		     struct kube_status *st)
{
	json_t *all = json_array();
	int err;

	*items = NULL;
	if (!all)
		return kube_status_set(st, CADRE_ENOMEM, "out of memory");
	err = kube_client_list_each(h, res, ns, opts, append_item, all,
				    resource_version, st);
	if (err) {
		json_decref(all);
		return err;
	}
	*items = all;
	return 0;
}

int kube_client_create(struct kube_http *h, const struct kube_resource *res,
		       const char *ns, const json_t *obj, json_t **out,
		       struct kube_status *st)
{
	return request(h, "POST", res, ns, NULL, NULL, NULL, "application/json", obj, out, st);
}

int kube_client_replace(struct kube_http *h, const struct kube_resource *res,
			const char *ns, const char *name, const json_t *obj,
			json_t **out, struct kube_status *st)
{
	return request(h, "PUT", res, ns, name, NULL, NULL, "application/json", obj, out, st);
}

int kube_client_replace_status(struct kube_http *h,
			       const struct kube_resource *res, const char *ns,
			       const char *name, const json_t *obj,
			       json_t **out, struct kube_status *st)
{
	return request(h, "PUT", res, ns, name, "status", NULL, "application/json", obj, out,
		       st);
}

/* metav1.DeleteOptions for opts, or NULL when there is nothing to say. */
static json_t *delete_options(const struct kube_delete_opts *opts)
{
	json_t *body, *pre = NULL;

	if (!opts || (!opts->propagation_policy && !opts->uid &&
		      !opts->resource_version && !opts->grace_period_set))
		return NULL;
	body = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1");
	if (!body)
		return NULL;
	if (opts->propagation_policy)
		json_object_set_new(body, "propagationPolicy",
				    json_string(opts->propagation_policy));
	if (opts->grace_period_set)
		json_object_set_new(body, "gracePeriodSeconds",
				    json_integer(opts->grace_period_seconds));
	if (opts->uid || opts->resource_version) {
		pre = json_object();
		if (opts->uid)
			json_object_set_new(pre, "uid", json_string(opts->uid));
		if (opts->resource_version)
			json_object_set_new(pre, "resourceVersion",
					    json_string(opts->resource_version));
		json_object_set_new(body, "preconditions", pre);
	}
	return body;
}

int kube_client_delete(struct kube_http *h, const struct kube_resource *res,
		       const char *ns, const char *name,
		       const struct kube_delete_opts *opts, json_t **out,
		       struct kube_status *st)
{
	json_t *body = delete_options(opts);
	int err = request(h, "DELETE", res, ns, name, NULL, NULL, "application/json", body, out,
			  st);

	json_decref(body);
	return err;
}

static const char *patch_content_type(enum kube_patch_type type)
{
	switch (type) {
	case KUBE_PATCH_JSON: return "application/json-patch+json";
	case KUBE_PATCH_STRATEGIC: return "application/strategic-merge-patch+json";
	case KUBE_PATCH_MERGE: break;
	}
	return "application/merge-patch+json";
}

int kube_client_patch(struct kube_http *h, const struct kube_resource *res,
		      const char *ns, const char *name, const char *subresource,
		      enum kube_patch_type type, const json_t *patch,
		      json_t **out, struct kube_status *st)
{
	return request(h, "PATCH", res, ns, name, subresource, NULL, patch_content_type(type),
		       patch, out, st);
}

int kube_client_patch_status(struct kube_http *h,
			     const struct kube_resource *res, const char *ns,
			     const char *name, enum kube_patch_type type,
			     const json_t *patch, json_t **out,
			     struct kube_status *st)
{
	return kube_client_patch(h, res, ns, name, "status", type, patch, out, st);
}

int kube_client_apply(struct kube_http *h, const struct kube_resource *res,
		      const char *ns, const char *name, const char *subresource,
		      const json_t *obj, const char *field_manager, bool force,
		      json_t **out, struct kube_status *st)
{
	struct buf query;
	int err;

	if (out)
		*out = NULL;
	if (!field_manager || !*field_manager)
		return kube_status_set(st, CADRE_EINVAL,
				       "apply %s/%s: a field manager is required",
				       res->plural, name ? name : "");
	buf_init(&query, MAX_PATH);
	err = kube_path_query_add(&query, "fieldManager", field_manager);
	if (!err && force)
		err = kube_path_query_add(&query, "force", "true");
	if (err)
		kube_status_set(st, err, "apply %s: field manager too long", res->plural);
	if (!err)
		err = request(h, "PATCH", res, ns, name, subresource, &query,
			      "application/apply-patch+yaml", obj, out, st);
	buf_release(&query);
	return err;
}
