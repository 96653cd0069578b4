#include <criterion/criterion.h>
#include <stdio.h>

#include "base/err.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/resource.h"
#include "api/kinds.h"
#include "kube/http.h"
#include "kube/resource.h"
#include "unit/support/httpd.h"

/* ---- paths ---- */

static const char *path_of(struct buf *b, const struct kube_resource *res,
			   const char *ns, const char *name, const char *sub,
			   const char *query)
{
	buf_reset(b);
	cr_assert_eq(kube_path(b, res, ns, name, sub, query), 0);
	return buf_str(b);
}

Test(resource, paths_for_core_group_namespaced_and_cluster_scoped_resources)
{
	struct buf b;

	buf_init(&b, 4096);
	cr_assert_str_eq(path_of(&b, &kube_resource_pods, "ml", "llama-0", NULL, NULL),
			 "/api/v1/namespaces/ml/pods/llama-0");
	cr_assert_str_eq(path_of(&b, &kube_resource_pods, NULL, NULL, NULL, NULL),
			 "/api/v1/pods");
	cr_assert_str_eq(path_of(&b, &kube_resource_nodes, "ignored", "gpu-7", NULL, NULL),
			 "/api/v1/nodes/gpu-7");
	cr_assert_str_eq(path_of(&b, &kube_resource_pvs, NULL, "cadre-ml-ckpt", NULL, NULL),
			 "/api/v1/persistentvolumes/cadre-ml-ckpt");
	cr_assert_str_eq(path_of(&b, &kube_resource_trainingjobs, "ml", "llama", "status", NULL),
			 "/apis/cadre.dev/v1alpha1/namespaces/ml/trainingjobs/llama/status");
	cr_assert_str_eq(path_of(&b, &kube_resource_volumes, "ml", NULL, NULL, "limit=500"),
			 "/apis/cadre.dev/v1alpha1/namespaces/ml/volumes?limit=500");
	cr_assert_str_eq(path_of(&b, &kube_resource_leases, "cadre-system", "cadre", NULL, NULL),
			 "/apis/coordination.k8s.io/v1/namespaces/cadre-system/leases/cadre");
	cr_assert_str_eq(path_of(&b, &kube_resource_events, "ml", NULL, NULL, ""),
			 "/apis/events.k8s.io/v1/namespaces/ml/events");
	cr_assert_str_eq(path_of(&b, &kube_resource_core_events, "ml", NULL, NULL, NULL),
			 "/api/v1/namespaces/ml/events");
	cr_assert_str_eq(path_of(&b, &kube_resource_services, "ml", "llama", NULL, NULL),
			 "/api/v1/namespaces/ml/services/llama");
	cr_assert_str_eq(path_of(&b, &kube_resource_pvcs, "ml", "ckpt", NULL, NULL),
			 "/api/v1/namespaces/ml/persistentvolumeclaims/ckpt");
	cr_assert_str_eq(kube_resource_trainingjobs.api_version, "cadre.dev/v1alpha1");
	cr_assert_str_eq(kube_resource_pods.api_version, "v1");
	buf_release(&b);
}

Test(resource, query_values_and_path_segments_are_percent_encoded)
{
	struct buf q, b;

	buf_init(&q, 4096);
	buf_init(&b, 4096);
	cr_assert_eq(kube_path_query_add(&q, "labelSelector",
					 "cadre.dev/job-name in (a,b),!tier"), 0);
	cr_assert_eq(kube_path_query_add(&q, "fieldSelector",
					 "status.phase!=Succeeded,status.phase!=Failed"), 0);
	cr_assert_eq(kube_path_query_add(&q, "continue", NULL), 0);
	cr_assert_eq(kube_path_query_add(&q, "continue", "eyJ2Ijoi+/=="), 0);
	cr_assert_str_eq(buf_str(&q),
			 "labelSelector=cadre.dev%2Fjob-name%20in%20%28a%2Cb%29%2C%21tier"
			 "&fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"
			 "&continue=eyJ2Ijoi%2B%2F%3D%3D");
	cr_assert_str_eq(path_of(&b, &kube_resource_pods, "a b", "x/y?z", NULL, NULL),
			 "/api/v1/namespaces/a%20b/pods/x%2Fy%3Fz");
	buf_reset(&b);
	cr_assert_eq(kube_path_escape(&b, "\xc3\xa9~-._"), 0);
	cr_assert_str_eq(buf_str(&b), "%C3%A9~-._");
	buf_release(&q);
	buf_release(&b);
}

Test(resource, bad_paths_are_refused_and_leave_the_buffer_alone)
{
	struct buf b;

	buf_init(&b, 4096);
	buf_adds(&b, "keep");
	cr_assert_eq(kube_path(&b, &kube_resource_pods, "ml", NULL, "status", NULL), CADRE_EINVAL);
	cr_assert_eq(kube_path(&b, &kube_resource_pods, "ml", "", NULL, NULL), CADRE_EINVAL);
	cr_assert_eq(kube_path(&b, &kube_resource_pods, "", "x", NULL, NULL), CADRE_EINVAL);
	cr_assert_str_eq(buf_str(&b), "keep");
	buf_release(&b);

	buf_init(&b, 16);
	cr_assert_eq(kube_path(&b, &kube_resource_trainingjobs, "ml", "x", NULL, NULL),
		     CADRE_ETOOBIG);
	cr_assert_str_eq(buf_str(&b), "");
	buf_release(&b);
}

/* ---- typed helpers against the fake server ---- */

struct env {
	struct httpd *server;
	struct kube_config *cfg;
	struct kube_http *http;
	struct kube_status st;
};

static void env_start(struct env *e)
{
	memset(e, 0, sizeof(*e));
	cr_assert_eq(httpd_new(&e->server), 0);
	cr_assert_eq(kube_config_new(httpd_url(e->server), &e->cfg), 0);
	cr_assert_eq(kube_http_new(e->cfg, NULL, &e->http), 0);
}

static void env_stop(struct env *e)
{
	kube_http_free(e->http);
	kube_config_free(e->cfg);
	httpd_free(e->server);
}

static const struct httpd_request *req_at(struct env *e, size_t i)
{
	const struct httpd_request *r = httpd_request_at(e->server, i);

	cr_assert_not_null(r, "no request %zu", i);
	return r;
}

static json_t *body_json(const struct httpd_request *r)
{
	json_t *j = json_loads(r->body, 0, NULL);

	cr_assert_not_null(j, "body is not JSON: %s", r->body);
	return j;
}

Test(client, get_returns_the_object_as_a_new_reference)
{
	struct env e;
	json_t *pod;

	env_start(&e);
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .body = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"7\"}}" });
	cr_assert_eq(kube_client_get(e.http, &kube_resource_pods, "ml", "p", &pod, &e.st), 0);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pod, "metadata"),
							   "resourceVersion")), "7");
	cr_assert_eq(pod->refcount, 1);
	cr_assert_str_eq(req_at(&e, 0)->target, "/api/v1/namespaces/ml/pods/p");
	json_decref(pod);
	env_stop(&e);
}

Test(client, get_of_a_missing_object_is_not_found_with_the_message)
{
	struct env e;
	json_t *pod = (json_t *)1;

	env_start(&e);
	httpd_push(e.server, &(struct httpd_response){ .status = 404,
		   .body = "{\"kind\":\"Status\",\"reason\":\"NotFound\","
			   "\"message\":\"pods \\\"p\\\" not found\",\"code\":404}" });
	cr_assert_eq(kube_client_get(e.http, &kube_resource_pods, "ml", "p", &pod, &e.st),
		     CADRE_ENOTFOUND);
	cr_assert_null(pod);
	cr_assert_eq(e.st.code, CADRE_ENOTFOUND);
	cr_assert_str_eq(e.st.reason, "NotFound");
	cr_assert_str_eq(e.st.message, "pods \"p\" not found");
	env_stop(&e);
}

Test(client, a_response_that_is_not_json_is_a_parse_error)
{
	struct env e;
	json_t *pod;

	env_start(&e);
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "<html>" });
	cr_assert_eq(kube_client_get(e.http, &kube_resource_pods, "ml", "p", &pod, &e.st),
		     CADRE_EPARSE);
	cr_assert_null(pod);
	env_stop(&e);
}

Test(client, list_follows_continue_tokens_across_pages)
{
	struct env e;
	json_t *items;
	char *rv = NULL;
	struct kube_list_opts opts = { .label_selector = "cadre.dev/job-name=llama",
				       .field_selector = "spec.nodeName=gpu-1", .limit = 2 };

	env_start(&e);
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .body = "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"100\","
			   "\"continue\":\"tok/1\"},\"items\":[{\"n\":1},{\"n\":2}]}" });
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .body = "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"100\","
			   "\"continue\":\"tok2\"},\"items\":[{\"n\":3},{\"n\":4}]}" });
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .body = "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"100\"},"
			   "\"items\":[{\"n\":5}]}" });
	cr_assert_eq(kube_client_list(e.http, &kube_resource_pods, NULL, &opts, &items, &rv,
				      &e.st), 0);
	cr_assert_eq(json_array_size(items), 5);
	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(json_integer_value(json_object_get(json_array_get(items, i), "n")),
			     (json_int_t)i + 1);
	cr_assert_str_eq(rv, "100");
	cr_assert_eq(httpd_request_count(e.server), 3);
	cr_assert_str_eq(req_at(&e, 0)->target,
			 "/api/v1/pods?labelSelector=cadre.dev%2Fjob-name%3Dllama"
			 "&fieldSelector=spec.nodeName%3Dgpu-1&limit=2");
	cr_assert_str_eq(req_at(&e, 1)->target,
			 "/api/v1/pods?labelSelector=cadre.dev%2Fjob-name%3Dllama"
			 "&fieldSelector=spec.nodeName%3Dgpu-1&limit=2&continue=tok%2F1");
	cr_assert(strstr(req_at(&e, 2)->target, "&continue=tok2"));
	json_decref(items);
	free(rv);
	env_stop(&e);
}

Test(client, list_asks_for_500_a_page_and_an_expired_continue_is_gone)
{
	struct env e;
	json_t *items = (json_t *)1;
	char *rv = NULL;

	env_start(&e);
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .body = "{\"metadata\":{\"resourceVersion\":\"9\",\"continue\":\"c\"},"
			   "\"items\":[{}]}" });
	httpd_push(e.server, &(struct httpd_response){ .status = 410,
		   .body = "{\"kind\":\"Status\",\"reason\":\"Expired\",\"message\":"
			   "\"The provided continue parameter is too old\",\"code\":410}" });
	cr_assert_eq(kube_client_list(e.http, &kube_resource_trainingjobs, "ml", NULL, &items,
				      &rv, &e.st), CADRE_EGONE);
	cr_assert_null(items);
	cr_assert_null(rv);
	cr_assert_str_eq(e.st.reason, "Expired");
	cr_assert_str_eq(req_at(&e, 0)->target,
			 "/apis/cadre.dev/v1alpha1/namespaces/ml/trainingjobs?limit=500");
	env_stop(&e);
}

struct counter {
	int seen;
	int stop_at;
};

static int count_items(void *ctx, json_t *item)
{
	struct counter *c = ctx;

	(void)item;
	if (++c->seen == c->stop_at)
		return CADRE_ECANCELED;
	return 0;
}

Test(client, list_each_hands_items_one_at_a_time_and_can_be_stopped)
{
	struct env e;
	struct counter c = { 0, 2 };
	struct kube_list_opts opts = { .resource_version = "0" };

	env_start(&e);
	httpd_push(e.server, &(struct httpd_response){ .status = 200,
		   .body = "{\"metadata\":{\"resourceVersion\":\"3\"},\"items\":[{},{},{}]}" });
	cr_assert_eq(kube_client_list_each(e.http, &kube_resource_nodes, NULL, &opts,
					   count_items, &c, NULL, &e.st), CADRE_ECANCELED);
	cr_assert_eq(c.seen, 2);
	cr_assert_str_eq(req_at(&e, 0)->target, "/api/v1/nodes?limit=500&resourceVersion=0");
	env_stop(&e);
}

Test(client, create_posts_to_the_collection_and_reports_already_exists)
{
	struct env e;
	json_t *obj = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Pod",
				"metadata", "name", "llama-0");
	json_t *out, *sent;

	env_start(&e);
	httpd_push(e.server, &(struct httpd_response){ .status = 201,
		   .body = "{\"metadata\":{\"name\":\"llama-0\",\"uid\":\"u1\"}}" });
	httpd_push(e.server, &(struct httpd_response){ .status = 409,
		   .body = "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\","
			   "\"message\":\"pods \\\"llama-0\\\" already exists\",\"code\":409}" });
	cr_assert_eq(kube_client_create(e.http, &kube_resource_pods, "ml", obj, &out, &e.st), 0);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(out, "metadata"),
							   "uid")), "u1");
	json_decref(out);
	cr_assert_str_eq(req_at(&e, 0)->method, "POST");
	cr_assert_str_eq(req_at(&e, 0)->target, "/api/v1/namespaces/ml/pods");
	sent = body_json(req_at(&e, 0));
	cr_assert(json_equal(sent, obj));
	json_decref(sent);

	cr_assert_eq(kube_client_create(e.http, &kube_resource_pods, "ml", obj, NULL, &e.st),
		     CADRE_EEXIST);
	cr_assert_str_eq(e.st.message, "pods \"llama-0\" already exists");
	cr_assert_eq(obj->refcount, 1);
	json_decref(obj);
	env_stop(&e);
}

Test(client, delete_sends_delete_options_with_preconditions)
{
	struct env e;
	struct kube_delete_opts opts = { .propagation_policy = "Background", .uid = "u-1",
					 .resource_version = "42", .grace_period_set = true,
					 .grace_period_seconds = 0 };
	json_t *sent;

	env_start(&e);
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	cr_assert_eq(kube_client_delete(e.http, &kube_resource_pods, "ml", "llama-1", &opts,
					NULL, &e.st), 0);
	cr_assert_str_eq(req_at(&e, 0)->method, "DELETE");
	cr_assert_str_eq(req_at(&e, 0)->target, "/api/v1/namespaces/ml/pods/llama-1");
	sent = body_json(req_at(&e, 0));
	cr_assert_str_eq(json_string_value(json_object_get(sent, "kind")), "DeleteOptions");
	cr_assert_str_eq(json_string_value(json_object_get(sent, "propagationPolicy")), "Background");
	cr_assert_eq(json_integer_value(json_object_get(sent, "gracePeriodSeconds")), 0);
	cr_assert(json_is_integer(json_object_get(sent, "gracePeriodSeconds")));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(sent, "preconditions"),
							   "uid")), "u-1");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(sent, "preconditions"),
							   "resourceVersion")), "42");
	json_decref(sent);

	/* No options: no body, and a zeroed struct does not mean "grace 0". */
	memset(&opts, 0, sizeof(opts));
	cr_assert_eq(kube_client_delete(e.http, &kube_resource_pods, "ml", "x", &opts, NULL,
					&e.st), 0);
	cr_assert_eq(req_at(&e, 1)->body_len, 0);
	env_stop(&e);
}

Test(client, patch_types_send_their_content_types)
{
	static const char *const want[] = {
		"application/merge-patch+json",
		"application/json-patch+json",
		"application/strategic-merge-patch+json",
	};
	struct env e;
	json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "a", "b");

	env_start(&e);
	for (int i = 0; i < 3; i++)
		httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	cr_assert_eq(kube_client_patch(e.http, &kube_resource_pods, "ml", "p", NULL,
				       KUBE_PATCH_MERGE, patch, NULL, &e.st), 0);
	cr_assert_eq(kube_client_patch(e.http, &kube_resource_pods, "ml", "p", NULL,
				       KUBE_PATCH_JSON, patch, NULL, &e.st), 0);
	cr_assert_eq(kube_client_patch_status(e.http, &kube_resource_pods, "ml", "p",
					      KUBE_PATCH_STRATEGIC, patch, NULL, &e.st), 0);
	for (int i = 0; i < 3; i++) {
		cr_assert_str_eq(req_at(&e, (size_t)i)->method, "PATCH");
		cr_assert_str_eq(httpd_request_header(req_at(&e, (size_t)i), "Content-Type"),
				 want[i]);
	}
	cr_assert_str_eq(req_at(&e, 2)->target, "/api/v1/namespaces/ml/pods/p/status");
	json_decref(patch);
	env_stop(&e);
}

Test(client, apply_sends_apply_yaml_with_field_manager_and_force)
{
	struct env e;
	json_t *obj = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "cadre.dev/v1alpha1",
				"kind", "TrainingJob", "metadata", "name", "llama",
				"status", "phase", "Running");
	json_t *out, *sent;

	env_start(&e);
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{\"ok\":true}" });
	httpd_push(e.server, &(struct httpd_response){ .status = 409,
		   .body = "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"message\":"
			   "\"Apply failed with 1 conflict: conflict with \\\"kubectl\\\"\",\"code\":409}" });
	cr_assert_eq(kube_client_apply(e.http, &kube_resource_trainingjobs, "ml", "llama",
				       "status", obj, "cadre", true, &out, &e.st), 0);
	cr_assert(json_is_true(json_object_get(out, "ok")));
	json_decref(out);
	cr_assert_str_eq(req_at(&e, 0)->method, "PATCH");
	cr_assert_str_eq(req_at(&e, 0)->target,
			 "/apis/cadre.dev/v1alpha1/namespaces/ml/trainingjobs/llama/status"
			 "?fieldManager=cadre&force=true");
	cr_assert_str_eq(httpd_request_header(req_at(&e, 0), "Content-Type"),
			 "application/apply-patch+yaml");
	sent = body_json(req_at(&e, 0));
	cr_assert(json_equal(sent, obj));
	json_decref(sent);

	cr_assert_eq(kube_client_apply(e.http, &kube_resource_trainingjobs, "ml", "llama",
				       NULL, obj, "cadre", false, NULL, &e.st), CADRE_ECONFLICT);
	cr_assert_str_eq(req_at(&e, 1)->target,
			 "/apis/cadre.dev/v1alpha1/namespaces/ml/trainingjobs/llama?fieldManager=cadre");
	cr_assert(strstr(e.st.message, "conflict with"));

	cr_assert_eq(kube_client_apply(e.http, &kube_resource_trainingjobs, "ml", "llama",
				       NULL, obj, NULL, false, NULL, &e.st), CADRE_EINVAL);
	cr_assert_eq(httpd_request_count(e.server), 2);
	json_decref(obj);
	env_stop(&e);
}

Test(client, replace_and_replace_status_put_the_object)
{
	struct env e;
	json_t *obj = json_pack("{s:{s:s, s:s}}", "metadata", "name", "v", "resourceVersion", "5");

	env_start(&e);
	httpd_push(e.server, &(struct httpd_response){ .status = 200, .body = "{}" });
	httpd_push(e.server, &(struct httpd_response){ .status = 409,
		   .body = "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"code\":409}" });
	cr_assert_eq(kube_client_replace(e.http, &kube_resource_volumes, "ml", "v", obj, NULL,
					 &e.st), 0);
	cr_assert_eq(kube_client_replace_status(e.http, &kube_resource_volumes, "ml", "v", obj,
						NULL, &e.st), CADRE_ECONFLICT);
	cr_assert_str_eq(req_at(&e, 0)->method, "PUT");
	cr_assert_str_eq(req_at(&e, 0)->target, "/apis/cadre.dev/v1alpha1/namespaces/ml/volumes/v");
	cr_assert_str_eq(req_at(&e, 1)->target,
			 "/apis/cadre.dev/v1alpha1/namespaces/ml/volumes/v/status");
	cr_assert_str_eq(e.st.reason, "Conflict");
	json_decref(obj);
	env_stop(&e);
}
