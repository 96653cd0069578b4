/*
 * status.c - the one status writer of both kinds (status.h).
 */
#include "controller/manager/status.h"
#include "base/err.h"
#include "base/log.h"
#include "kube/client.h"

int status_write(struct manager *m, const struct kube_resource *res, const json_t *obj,
		 const json_t *want, status_canonical_fn canonical, const char *component,
		 bool *written)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	struct kube_status st;
	json_t *have, *body;
	int ret;

	if (written)
		*written = false;
	/* Compare canonical forms, so server-side formatting never causes a write. */
	have = canonical(json_object_get(obj, "status"));
	if (have && json_equal(have, want)) {
		json_decref(have);
		return 0;
	}
	json_decref(have);
	body = json_pack("{s:s, s:s, s:{s:O, s:O, s:O}, s:O}", "apiVersion", res->api_version,
			 "kind", res->kind, "metadata", "name", json_object_get(meta, "name"),
			 "namespace", json_object_get(meta, "namespace"), "resourceVersion",
			 json_object_get(meta, "resourceVersion"), "status", want);
	if (!body)
		return CADRE_ENOMEM;
	ret = kube_client_replace_status(m->http, res, ns, name, body, NULL, &st);
	json_decref(body);
	if (!ret && written)
		*written = true;
	if (ret == CADRE_ECONFLICT || ret == CADRE_ENOTFOUND)
		return CADRE_EAGAIN;
	if (ret)
		log_warn(component, "%s/%s: cannot write status: %s", ns ? ns : "", name ? name : "",
			 st.message);
	return ret;
}
