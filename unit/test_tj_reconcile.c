/*
 * The TrainingJob reconciler against a fake API server, for what crosses the
 * network around the entrypoint ConfigMap: it is written before any pod of
 * the pass, no pod goes out when it could not be, one that is not the job's
 * is never written, and an earlier controller's script is replaced, guarded
 * by its resourceVersion. The caches are filled by hand, as the reflectors
 * would fill them; the job runs with --gang-scheduler=none, so nothing waits
 * for an admission.
 */
#include <criterion/criterion.h>

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "api/fielderr.h"
#include "api/trainingjob.h"
#include "controller/build/build.h"
#include "controller/build/entrypoint.h"
#include "controller/manager/configmap_trim.h"
#include "controller/manager/manager.h"
#include "api/pod_trim.h"
#include "controller/manager/reconcile.h"
#include "controller/serve/metrics.h"
#include "controller/trainingjob/podview.h"
#include "controller/trainingjob/tj_depend.h"
#include "controller/trainingjob/tj_plan.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/resource.h"
#include "kube/store.h"
#include "kube/workqueue.h"
#include "unit/support/httpd.h"

#define JOB_UID "7a7a7a7a-0000-4000-8000-000000000001"
#define CM_PATH "/api/v1/namespaces/ml/configmaps"
#define CM_NAME_PATH CM_PATH "/llama-entrypoint"
#define PODS_PATH "/api/v1/namespaces/ml/pods"
#define SVC_PATH "/api/v1/namespaces/ml/services"
#define SVC_NAME_PATH SVC_PATH "/llama"
#define PG_PATH "/apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups"
#define TJ_STATUS_PATH "/apis/cadre.dev/v1alpha1/namespaces/ml/trainingjobs/llama/status"

static struct manager m;
static struct options opts;
static struct httpd *server;
static struct kube_config *config;
static pthread_mutex_t answer_lock = PTHREAD_MUTEX_INITIALIZER;
static int configmap_post_status;      /* the answer to POST configmaps */
static bool terminating;               /* a 403 is the namespace being deleted */
static const char *configmap_get_body;  /* the answer to GET of the ConfigMap; NULL: 404 */
static int service_post_status;        /* the answer to POST services */
static int status_put_conflicts;       /* answer this many PUTs of the job's status 409 */
static const char *service_get_body;    /* the answer to GET of the Service; NULL: 404 */
/* When set, a POST to held_path is answered only once one to awaited_path has come (or 2 s). */
static const char *held_path, *awaited_path;
static bool awaited_came;              /* a POST to awaited_path has come */
static bool came_while_held;           /* ... while the held answer was held */
static pthread_mutex_t came_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t came_cond = PTHREAD_COND_INITIALIZER;

static bool is(const struct httpd_request *req, const char *method, const char *path)
{
	size_t n = strlen(path);

	return !strcmp(req->method, method) && !strncmp(req->target, path, n) &&
	       (req->target[n] == '\0' || req->target[n] == '?');
}

/* Hold the answer to a POST to held_path until one to awaited_path comes. */
static void hold_until_awaited(const struct httpd_request *req)
{
	struct timespec deadline;

	pthread_mutex_lock(&came_lock);
	if (awaited_path && is(req, "POST", awaited_path)) {
		awaited_came = true;
		pthread_cond_broadcast(&came_cond);
	} else if (held_path && is(req, "POST", held_path)) {
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += 2;
		while (!awaited_came &&
		       pthread_cond_timedwait(&came_cond, &came_lock, &deadline) == 0)
			;
		came_while_held = awaited_came;
	}
	pthread_mutex_unlock(&came_lock);
}

/*
 * One request first, so that the client knows this server speaks HTTP/1.1
 * and opens a second connection rather than wait to multiplex on the first.
 */
static void warm_connection(void)
{
	struct kube_status st;
	json_t *got = NULL;

	cr_assert_eq(kube_client_get(m.http, &kube_resource_configmaps, "ml", "warm", &got, &st),
		     0);
	json_decref(got);
}

static bool held_answer_waited_for_the_other(void)
{
	bool came;

	pthread_mutex_lock(&came_lock);
	came = came_while_held;
	pthread_mutex_unlock(&came_lock);
	return came;
}

#define NOT_FOUND "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}"

/* The API server's answer to a create of resource name answered status: 403 over quota, 409. */
static const char *refused_create(int status, const char *resource, const char *name, char *buf,
				  size_t size)
{
	if (status == 403 && terminating)
		snprintf(buf, size, "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":403,"
			 "\"reason\":\"Forbidden\",\"message\":\"%s \\\"%s\\\" is forbidden: "
			 "unable to create new content in namespace ml because it is being "
			 "terminated\",\"details\":{\"causes\":[{\"reason\":\"NamespaceTerminating\"}]}}",
			 resource, name);
	else if (status == 403)
		snprintf(buf, size, "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":403,"
			 "\"reason\":\"Forbidden\",\"message\":\"%s \\\"%s\\\" is forbidden: "
			 "exceeded quota: count/%s\"}", resource, name, resource);
	else if (status == 409)
		snprintf(buf, size, "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":409,"
			 "\"reason\":\"AlreadyExists\",\"message\":\"%s \\\"%s\\\" already "
			 "exists\"}", resource, name);
	else
		snprintf(buf, size, "{}");
	return buf;
}

static void answer(void *ctx, const struct httpd_request *req, struct httpd_response *resp)
{
	/* The server copies the answer after this returns, on this connection's thread. */
	static _Thread_local char body[512];

	(void)ctx;
	hold_until_awaited(req);
	pthread_mutex_lock(&answer_lock);
	resp->status = !strcmp(req->method, "POST") ? 201 : 200;
	resp->body = "{}";
	if (is(req, "POST", CM_PATH)) {
		resp->status = configmap_post_status;
		resp->body = refused_create(resp->status, "configmaps", "llama-entrypoint", body,
					    sizeof(body));
	} else if (is(req, "GET", CM_NAME_PATH)) {
		resp->status = configmap_get_body ? 200 : 404;
		resp->body = configmap_get_body ? configmap_get_body : NOT_FOUND;
	} else if (is(req, "POST", SVC_PATH)) {
		resp->status = service_post_status;
		resp->body = refused_create(resp->status, "services", "llama", body, sizeof(body));
	} else if (is(req, "GET", SVC_NAME_PATH)) {
		resp->status = service_get_body ? 200 : 404;
		resp->body = service_get_body ? service_get_body : NOT_FOUND;
	} else if (is(req, "POST", PODS_PATH)) {
		resp->body = "{\"metadata\":{\"uid\":\"pod-uid\"}}";
	} else if (is(req, "PUT", TJ_STATUS_PATH) && status_put_conflicts > 0) {
		status_put_conflicts--;
		resp->status = 409;
		resp->body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":409,"
			     "\"reason\":\"Conflict\",\"message\":\"the object has been modified\"}";
	}
	pthread_mutex_unlock(&answer_lock);
}

static void cache(enum manager_kind kind, json_t *obj)
{
	cr_assert_eq(store_upsert(m.stores[kind], obj), 0);
	json_decref(obj);
}

static void setup(void)
{
	memset(&m, 0, sizeof(m));
	memset(&opts, 0, sizeof(opts));
	opts.gang_scheduler = GANG_NONE;
	opts.workers = 1;
	m.opts = &opts;
	cr_assert_eq(httpd_new(&server), 0);
	httpd_set_handler(server, answer, NULL);
	cr_assert_eq(kube_config_new(httpd_url(server), &config), 0);
	cr_assert_eq(kube_http_new(config, NULL, &m.http), 0);
	for (int k = 0; k < KIND_COUNT; k++)
		cr_assert_not_null(m.stores[k] = store_new(NULL));
	cr_assert_eq(store_add_index(m.stores[KIND_PODS], "job", pod_index_job, NULL), 0);
	cr_assert_eq(store_add_index(m.stores[KIND_TRAININGJOBS], JOBIDS_INDEX, jobids_index, NULL),
		     0);
	cr_assert_eq(store_add_index(m.stores[KIND_TRAININGJOBS], TJ_SINGLETON_INDEX,
				     tj_singleton_index, NULL), 0);
	cr_assert_eq(store_add_index(m.stores[KIND_TRAININGJOBS], TJ_AWAITED_INDEX,
				     tj_awaited_index, NULL), 0);
	m.queue = wq_new(NULL);
	m.expect = expect_new(5 * 60 * 1000);
	m.memo = jobmemo_new(5 * 60 * 1000);
	m.jobids = jobids_new();
	cr_assert(m.queue && m.expect && m.memo && m.jobids);
	configmap_post_status = 201;
	terminating = false;
	configmap_get_body = NULL;
	service_post_status = 201;
	service_get_body = NULL;
	status_put_conflicts = 0;
	held_path = awaited_path = NULL;
	awaited_came = false;
	came_while_held = false;
	/* The two-node job llama in ml, new: no status yet. */
	cache(KIND_TRAININGJOBS, json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:i, s:s}, s:{s:i, s:s, s:s}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
		"metadata", "name", "llama", "namespace", "ml", "uid", JOB_UID,
		"resourceVersion", "5", "generation", 1,
		"creationTimestamp", "2026-12-01T10:00:00Z",
		"spec", "numNodes", 2, "image", "img", "run", "train"));
}

static void teardown(void)
{
	for (int k = 0; k < KIND_COUNT; k++)
		store_free(m.stores[k]);
	wq_free(m.queue);
	expect_free(m.expect);
	jobids_free(m.jobids);
	registry_free(m.registry);
	jobmemo_free(m.memo);
	kube_http_free(m.http);
	kube_config_free(config);
	httpd_free(server);
}

TestSuite(tj_reconcile, .init = setup, .fini = teardown);

/* The shared variables the cached job llama's pods need now, as this pass's options give them. */
static json_t *shared_env_of_job(void)
{
	struct build_opts bo = { .cluster_domain = opts.cluster_domain,
				 .default_image = opts.default_image };
	struct field_errors errs;
	struct trainingjob tj;
	json_t *obj = NULL, *data = NULL;

	cr_assert_eq(store_get(m.stores[KIND_TRAININGJOBS], "ml/llama", &obj), 0);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(obj, &tj, &errs), 0);
	cr_assert_eq(build_shared_env(&tj, &bo, &data, NULL), 0);
	tj_release(&tj);
	field_errors_release(&errs);
	json_decref(obj);
	return data;
}

/*
 * The job's ConfigMap as the API server holds it: owned by owner_uid (NULL:
 * none), the script in binaryData (script_b64: base64) and the job's shared
 * variables as data.
 */
static json_t *configmap(const char *owner_uid, const char *script_b64)
{
	json_t *cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:{s:s}}, s:o, s:{s:s}}",
			       "apiVersion", "v1", "kind", "ConfigMap",
			       "metadata", "name", "llama-entrypoint", "namespace", "ml",
			       "uid", "cm-uid", "resourceVersion", "7",
			       "labels", "cadre.dev/job-name", "llama",
			       "data", shared_env_of_job(), "binaryData", ENTRYPOINT_KEY, script_b64);

	cr_assert_not_null(cm);
	if (owner_uid)
		cr_assert_eq(json_object_set_new(json_object_get(cm, "metadata"),
						 "ownerReferences",
			json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion",
				  "cadre.dev/v1alpha1", "kind", "TrainingJob", "name", "llama",
				  "uid", owner_uid, "controller", 1, "blockOwnerDeletion", 1)), 0);
	return cm;
}

/* The job's ConfigMap as this controller writes it for the job as it is. */
static json_t *current_configmap(void)
{
	return configmap(JOB_UID, entrypoint_script_base64());
}

/* Cache it as the ConfigMap reflector would: trimmed. */
static void cache_configmap(json_t *cm)
{
	cache(KIND_CONFIGMAPS, configmap_trim(cm, NULL));
	json_decref(cm);
}

static size_t count(const char *method, const char *path)
{
	size_t n = 0;

	for (size_t i = 0; i < httpd_request_count(server); i++)
		n += is(httpd_request_at(server, i), method, path);
	return n;
}

/* The index of the first such request; the request count when there is none. */
static size_t first(const char *method, const char *path)
{
	for (size_t i = 0; i < httpd_request_count(server); i++)
		if (is(httpd_request_at(server, i), method, path))
			return i;
	return httpd_request_count(server);
}

static json_t *body_of(size_t i)
{
	json_t *body = json_loads(httpd_request_at(server, i)->body, 0, NULL);

	cr_assert_not_null(body, "request %zu has no JSON body", i);
	return body;
}

/* The script a written ConfigMap holds, in base64. */
static const char *script_of(const json_t *cm)
{
	return json_string_value(json_object_get(json_object_get(cm, "binaryData"),
						 ENTRYPOINT_KEY));
}

Test(tj_reconcile, a_new_job_creates_its_entrypoint_configmap_before_its_pods)
{
	json_t *cm, *data;

	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", CM_PATH), 1);
	cr_assert_eq(count("POST", PODS_PATH), 2);
	cr_assert_lt(first("POST", CM_PATH), first("POST", PODS_PATH),
		     "a pod create went out before the ConfigMap was answered");
	cm = body_of(first("POST", CM_PATH));
	cr_assert_str_eq(script_of(cm), entrypoint_script_base64());
	/* The ids the first status write will store, before it is written. */
	data = shared_env_of_job();
	cr_assert(json_equal(json_object_get(cm, "data"), data));
	cr_assert_not_null(json_object_get(data, "SLURM_JOB_ID"));
	json_decref(data);
	json_decref(cm);
}

/*
 * Another job, in another namespace, already holds the id this job's uid is
 * first offered: the job takes the next, and its ConfigMap (the pods'
 * SLURM_JOB_ID) carries the id its status stores.
 */
Test(tj_reconcile, an_id_another_job_holds_is_passed_over_everywhere_at_once)
{
	char taken[16], next[16];
	json_t *cm, *status;

	tj_job_id_probe(JOB_UID, 0, taken);
	tj_job_id_probe(JOB_UID, 1, next);
	cache(KIND_TRAININGJOBS, json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:{s:i, s:s, s:s}, s:{s:s}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
		"metadata", "name", "older", "namespace", "team-x", "uid", "u-older",
		"resourceVersion", "3",
		"spec", "numNodes", 1, "image", "img", "run", "train", "status", "jobId", taken));
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cm = body_of(first("POST", CM_PATH));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(cm, "data"),
							   "SLURM_JOB_ID")), next);
	status = body_of(first("PUT", TJ_STATUS_PATH));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(status, "status"),
							   "jobId")), next);
	json_decref(cm);
	json_decref(status);
}

/*
 * The ConfigMap's answer is held until the Service's create comes: sent one
 * after the other, the Service would only go once the ConfigMap was
 * answered, two round trips before the first pod.
 */
Test(tj_reconcile, a_new_job_s_configmap_and_service_go_out_together_before_its_pods)
{
	warm_connection();
	held_path = CM_PATH;
	awaited_path = SVC_PATH;
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", SVC_PATH), 1);
	cr_assert_eq(count("POST", CM_PATH), 1);
	cr_assert_lt(first("POST", SVC_PATH), first("POST", PODS_PATH));
	cr_assert_lt(first("POST", CM_PATH), first("POST", PODS_PATH));
	cr_assert(held_answer_waited_for_the_other(),
		  "the Service was created only after the ConfigMap's create was answered");
}

Test(tj_reconcile, no_pod_is_created_when_the_entrypoint_configmap_create_is_refused)
{
	struct refusal r;

	configmap_post_status = 403;
	cr_assert_neq(tj_reconcile(&m, "ml", "llama"), 0, "a refused create is tried again");
	cr_assert_eq(count("POST", CM_PATH), 1);
	cr_assert_eq(count("POST", PODS_PATH), 0, "a pod would wait for a ConfigMap that is not there");
	/* The next plan says why (tj_plan.h). */
	cr_assert(jobmemo_refusal(m.memo, "ml/llama", JOB_UID, 0, &r));
	cr_assert_eq(r.rank, TJ_REFUSAL_ENTRYPOINT);
	cr_assert_str_eq(r.pod, "llama-entrypoint");
	cr_assert(strstr(r.message, "exceeded quota"), "%s", r.message);
}

Test(tj_reconcile, in_a_namespace_being_deleted_nothing_is_made_recorded_or_retried)
{
	struct refusal r;

	configmap_post_status = 403;
	service_post_status = 403;
	terminating = true;
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), CADRE_ETERMINATING,
		     "the worker forgets the job: it goes with its namespace");
	cr_assert_eq(count("POST", CM_PATH), 1);
	cr_assert_eq(count("POST", PODS_PATH), 0);
	cr_assert_not(jobmemo_refusal(m.memo, "ml/llama", JOB_UID, 0, &r),
		      "not a refusal the job's status would report");
}

Test(tj_reconcile, a_configmap_of_the_name_that_is_not_the_jobs_is_left_alone_and_no_pod_is_made)
{
	static const char foreign[] =
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
		"\"llama-entrypoint\",\"namespace\":\"ml\",\"uid\":\"x\",\"resourceVersion\":\"9\"},"
		"\"data\":{\"entrypoint.sh\":\"echo not cadre\"}}";
	struct refusal r;

	configmap_post_status = 409;
	configmap_get_body = foreign;
	cr_assert_neq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("GET", CM_NAME_PATH), 1, "the create met one the cache does not show");
	cr_assert_eq(count("PUT", CM_NAME_PATH), 0, "someone else's ConfigMap was written");
	cr_assert_eq(count("DELETE", CM_NAME_PATH), 0);
	cr_assert_eq(count("POST", PODS_PATH), 0, "a pod would run someone else's script");
	cr_assert(jobmemo_refusal(m.memo, "ml/llama", JOB_UID, 0, &r));
	cr_assert_eq(r.rank, TJ_REFUSAL_ENTRYPOINT);
	cr_assert(strstr(r.message, "ConfigMap llama-entrypoint already exists and has no owner"),
		  "%s", r.message);
}

/* An earlier TrainingJob's Service of the name, its owner not yet collected. */
static const char earlier_service[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"llama\","
	"\"namespace\":\"ml\",\"uid\":\"s\",\"resourceVersion\":\"9\",\"labels\":"
	"{\"cadre.dev/job-name\":\"llama\"},\"ownerReferences\":[{\"apiVersion\":"
	"\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\",\"name\":\"llama\",\"uid\":"
	"\"an-earlier-uid\",\"controller\":true}]},\"spec\":{\"clusterIP\":\"None\"}}";

Test(tj_reconcile, a_service_of_the_name_that_is_not_the_jobs_is_left_alone_and_no_pod_is_made)
{
	struct refusal r;

	service_post_status = 409;
	service_get_body = earlier_service;
	cr_assert_neq(tj_reconcile(&m, "ml", "llama"), 0, "the create is tried again");
	cr_assert_eq(count("GET", SVC_NAME_PATH), 1, "the create met one the cache does not show");
	cr_assert_eq(count("PUT", SVC_NAME_PATH) + count("PATCH", SVC_NAME_PATH) +
		     count("DELETE", SVC_NAME_PATH), 0, "someone else's Service was touched");
	cr_assert_eq(count("POST", PODS_PATH), 0, "no rank would find its peers");
	cr_assert(jobmemo_refusal(m.memo, "ml/llama", JOB_UID, 0, &r));
	cr_assert_eq(r.rank, TJ_REFUSAL_SERVICE);
	cr_assert_str_eq(r.pod, "llama");
	cr_assert(strstr(r.message, "Service llama already exists and belongs to TrainingJob "
			 "llama, not to this TrainingJob"), "%s", r.message);
}

Test(tj_reconcile, the_job_s_own_service_created_by_an_earlier_pass_is_taken_as_made)
{
	json_t *svc = json_loads(earlier_service, 0, NULL);
	char *body;

	cr_assert_not_null(svc);
	json_string_set(json_object_get(json_array_get(json_object_get(json_object_get(svc,
			"metadata"), "ownerReferences"), 0), "uid"), JOB_UID);
	body = json_dumps(svc, JSON_COMPACT);
	json_decref(svc);
	cr_assert_not_null(body);
	service_post_status = 409;
	service_get_body = body;
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("GET", SVC_NAME_PATH), 1);
	cr_assert_eq(count("POST", PODS_PATH), 2);
	free(body);
}

Test(tj_reconcile, no_pod_is_created_when_the_service_create_is_refused)
{
	struct refusal r;

	service_post_status = 403;
	cr_assert_neq(tj_reconcile(&m, "ml", "llama"), 0, "a refused create is tried again");
	cr_assert_eq(count("POST", PODS_PATH), 0);
	cr_assert(jobmemo_refusal(m.memo, "ml/llama", JOB_UID, 0, &r));
	cr_assert_eq(r.rank, TJ_REFUSAL_SERVICE);
	cr_assert(strstr(r.message, "exceeded quota: count/services"), "%s", r.message);
}

/* A cached Service of the name that an earlier job owns is not this job's: the create goes. */
Test(tj_reconcile, a_cached_service_of_an_earlier_job_of_the_name_is_not_taken_as_the_jobs)
{
	json_t *svc = json_loads(earlier_service, 0, NULL);

	cr_assert_not_null(svc);
	cache(KIND_SERVICES, store_trim_metadata(svc, NULL));
	json_decref(svc);
	service_post_status = 409;
	service_get_body = earlier_service;
	cr_assert_neq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", SVC_PATH), 1);
	cr_assert_eq(count("POST", PODS_PATH), 0);
}

Test(tj_reconcile, a_cached_configmap_of_an_earlier_job_of_the_name_is_not_written)
{
	cache_configmap(configmap("an-earlier-uid", entrypoint_script_base64()));
	cr_assert_neq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", CM_PATH) + count("PUT", CM_NAME_PATH), 0);
	cr_assert_eq(count("POST", PODS_PATH), 0);
}

Test(tj_reconcile, the_job_s_own_configmap_created_by_an_earlier_pass_is_taken_as_made)
{
	json_t *ours = current_configmap();
	char *text = json_dumps(ours, 0);

	configmap_post_status = 409;
	configmap_get_body = text;
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("PUT", CM_NAME_PATH), 0);
	cr_assert_eq(count("POST", PODS_PATH), 2);
	free(text);
	json_decref(ours);
}

/* An earlier controller's ConfigMap: the script in data, no variables. */
static json_t *earlier_configmap(void)
{
	json_t *cm = current_configmap();

	cr_assert_eq(json_object_del(cm, "binaryData"), 0);
	cr_assert_eq(json_object_set_new(cm, "data", json_pack("{s:s}", ENTRYPOINT_KEY,
							       "# an earlier controller's entrypoint\n")), 0);
	return cm;
}

Test(tj_reconcile, an_earlier_controllers_script_is_replaced_guarded_by_its_version_before_the_pods)
{
	json_t *put;

	cache_configmap(earlier_configmap());
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", CM_PATH), 0);
	cr_assert_eq(count("PUT", CM_NAME_PATH), 1);
	cr_assert_lt(first("PUT", CM_NAME_PATH), first("POST", PODS_PATH));
	cr_assert_eq(count("POST", PODS_PATH), 2);
	put = body_of(first("PUT", CM_NAME_PATH));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(put, "metadata"),
							   "resourceVersion")), "7");
	cr_assert_str_eq(script_of(put), entrypoint_script_base64());
	json_decref(put);
}

/*
 * Variables that are no longer the job's (a controller with another
 * --cluster-domain, a spec changed while queued) are rewritten before any
 * pod takes them by envFrom.
 */
Test(tj_reconcile, variables_that_are_not_the_jobs_any_more_are_rewritten_before_the_pods)
{
	json_t *cm = current_configmap(), *put;

	cr_assert_eq(json_object_set_new(json_object_get(cm, "data"), "MASTER_ADDR",
					 json_string("llama-0.llama.ml.svc.old.domain")), 0);
	cache_configmap(cm);
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("PUT", CM_NAME_PATH), 1);
	cr_assert_lt(first("PUT", CM_NAME_PATH), first("POST", PODS_PATH));
	put = body_of(first("PUT", CM_NAME_PATH));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(put, "data"),
							   "MASTER_ADDR")),
			 "llama-0.llama.ml.svc.cluster.local");
	json_decref(put);
}

Test(tj_reconcile, the_job_s_current_configmap_in_the_cache_sends_nothing_for_it)
{
	cache_configmap(current_configmap());
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", CM_PATH) + count("PUT", CM_NAME_PATH) +
		     count("GET", CM_NAME_PATH), 0);
	cr_assert_eq(count("POST", PODS_PATH), 2);
}

/* ---- native gangs ---- */


static int podgroup_post_status;  /* the answer to POST podgroups */

static void answer_native(void *ctx, const struct httpd_request *req,
			  struct httpd_response *resp)
{
	answer(ctx, req, resp);
	/* A server with gang scheduling on keeps the pod's group (build_pod_kept_scheduling_group). */
	if (is(req, "POST", PODS_PATH))
		resp->body = "{\"metadata\":{\"uid\":\"pod-uid\"},\"spec\":{\"schedulingGroup\":"
			     "{\"podGroupName\":\"llama-attempt-0\"}}}";
	if (is(req, "POST", PG_PATH)) {
		resp->status = podgroup_post_status;
		if (resp->status == 403)
			resp->body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":403,"
				     "\"reason\":\"Forbidden\",\"message\":\"podgroups is "
				     "forbidden\"}";
	}
}

static void native_setup(int podgroup_status)
{
	opts.gang_scheduler = GANG_NATIVE;
	m.podgroups = &kube_resource_podgroups_v1alpha2;
	podgroup_post_status = podgroup_status;
	httpd_set_handler(server, answer_native, NULL);
	/* The ConfigMap exists already: the pass is the PodGroup's and the pods'. */
	cache_configmap(current_configmap());
}

/* One pass, not two: the pods follow the PodGroup's create as soon as it is answered. */
Test(tj_reconcile, a_native_gang_creates_its_pod_group_then_its_pods_in_one_pass)
{
	native_setup(201);
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", PG_PATH), 1);
	cr_assert_eq(count("POST", PODS_PATH), 2);
	cr_assert_lt(first("POST", PG_PATH), first("POST", PODS_PATH),
		     "a pod create went out before the PodGroup was answered");
}

/* The Service's answer is held until the PodGroup's create comes: they go out together. */
Test(tj_reconcile, a_native_gang_s_service_and_pod_group_go_out_together)
{
	native_setup(201);
	warm_connection();
	held_path = SVC_PATH;
	awaited_path = PG_PATH;
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", PG_PATH), 1);
	cr_assert_eq(count("POST", PODS_PATH), 2);
	cr_assert(held_answer_waited_for_the_other(),
		  "the PodGroup was created only after the Service's create was answered");
}

Test(tj_reconcile, no_pod_of_a_native_gang_is_created_when_its_pod_group_create_fails)
{
	native_setup(403);
	cr_assert_neq(tj_reconcile(&m, "ml", "llama"), 0, "a failed create is tried again");
	cr_assert_eq(count("POST", PG_PATH), 1);
	cr_assert_eq(count("POST", PODS_PATH), 0,
		     "a pod naming a missing PodGroup never reaches the scheduler's queue");
}

/* ---- every decision is stored before it is acted on ---- */

/*
 * Rank r of the running gang, cached: Running, or Failed with exit code code
 * and the container's terminated message (NULL: none).
 */
static void cache_pod_exited(int rank, bool failed, int code, const char *message)
{
	char name[32], rank_s[8];
	json_t *terminated = json_pack("{s:i, s:s}", "exitCode", code, "reason", "Error");

	if (message)
		json_object_set_new(terminated, "message", json_string(message));
	snprintf(name, sizeof(name), "llama-%d", rank);
	snprintf(rank_s, sizeof(rank_s), "%d", rank);
	cache(KIND_PODS, json_pack(
		"{s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:s}, s:{s:s, s:s, s:[{s:s, s:o}]}}",
		"metadata", "name", name, "namespace", "ml", "uid", name, "labels",
		"cadre.dev/job-name", "llama", "cadre.dev/node-rank", rank_s,
		"cadre.dev/restart-attempt", "0",
		"spec", "nodeName", rank ? "n1" : "n0",
		"status", "phase", failed ? "Failed" : "Running", "podIP", "10.0.0.9",
		"containerStatuses", "name", "main", "state",
		failed ? json_pack("{s:o}", "terminated", terminated) :
			 json_pack("{s:{}}", "running")));
	if (!failed)
		json_decref(terminated);
}

/* Rank r of the running gang, cached: Running, or Failed with exit code 3. */
static void cache_pod(int rank, bool failed)
{
	cache_pod_exited(rank, failed, 3, NULL);
}

/*
 * A failed rank restarts the gang. The restart (Restarting, restarts 1,
 * lastFailure) is stored before any pod is deleted: a status write lost to a
 * 409 (any concurrent label or annotation of the job) deletes nothing and
 * counts nothing, and the pass that stores it counts it once. Deleting first,
 * the pass after the 409 would find the pods gone, "deleted outside cadre",
 * and count an infrastructure restart with the exit code lost.
 */
Test(tj_reconcile, a_restart_is_stored_before_any_pod_goes_and_counted_once_after_a_conflict)
{
	static const char *const reason[] = { "reason", NULL };
	static const char *const pod_failed[] = { "PodFailed" };
	json_t *job = NULL, *body, *st;
	size_t stored = 0;

	m.registry = registry_new();
	m.metrics.job_restarts = registry_add(m.registry, METRIC_COUNTER, "cadre_job_restarts_total",
					      "restarts", reason, NULL, 0);
	cr_assert_not_null(m.metrics.job_restarts);
	cr_assert_eq(store_get(m.stores[KIND_TRAININGJOBS], "ml/llama", &job), 0);
	json_object_set_new(json_object_get(job, "spec"), "maxRestarts", json_integer(2));
	json_object_set_new(job, "status", json_pack(
		"{s:s, s:s, s:s, s:i, s:i, s:[{s:s, s:s, s:s, s:s, s:s}], s:s, s:s}",
		"phase", "Running", "jobId", "123456789", "taskId", "t", "restarts", 0,
		"infraRestarts", 0, "conditions", "type", "Admitted", "status", "True", "reason",
		"Admitted", "message", "m", "lastTransitionTime", "2026-12-01T10:00:00Z",
		"admittedTime", "2026-12-01T10:00:00Z", "startTime", "2026-12-01T10:00:05Z"));
	cache(KIND_TRAININGJOBS, job);
	cache_configmap(current_configmap());
	cache(KIND_SERVICES, json_pack("{s:{s:s, s:s, s:s, s:[{s:s}]}}", "metadata", "name",
				       "llama", "namespace", "ml", "uid", "svc",
				       "ownerReferences", "uid", JOB_UID));
	cache_pod(0, false);
	cache_pod(1, true);
	status_put_conflicts = 1;

	cr_assert_neq(tj_reconcile(&m, "ml", "llama"), 0, "a conflict is tried again");
	cr_assert_eq(count("PUT", TJ_STATUS_PATH), 1);
	cr_assert_eq(count("DELETE", PODS_PATH "/llama-0") + count("DELETE", PODS_PATH "/llama-1"),
		     0, "a pod went while the restart was not stored");
	cr_assert_eq(metric_value(m.metrics.job_restarts, pod_failed), 0);

	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("PUT", TJ_STATUS_PATH), 2);
	for (size_t i = 0; i < httpd_request_count(server); i++)
		if (is(httpd_request_at(server, i), "PUT", TJ_STATUS_PATH))
			stored = i;
	body = body_of(stored);
	st = json_object_get(body, "status");
	cr_assert_str_eq(json_string_value(json_object_get(st, "phase")), "Restarting");
	cr_assert_eq(json_integer_value(json_object_get(st, "restarts")), 1);
	cr_assert_eq(json_integer_value(json_object_get(st, "infraRestarts")), 0);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(st, "lastFailure"),
							"exitCode")), 3);
	json_decref(body);
	cr_assert_eq(count("DELETE", PODS_PATH "/llama-0") + count("DELETE", PODS_PATH "/llama-1"),
		     2);
	for (size_t i = 0; i < httpd_request_count(server); i++)
		if (is(httpd_request_at(server, i), "DELETE", PODS_PATH "/llama-0") ||
		    is(httpd_request_at(server, i), "DELETE", PODS_PATH "/llama-1"))
			cr_assert_gt(i, stored, "a pod was deleted before the restart was stored");
	cr_assert_eq(metric_value(m.metrics.job_restarts, pod_failed), 1, "counted once");
}

/* --- Partitions (docs/design.md 11) --- */

static void cache_partition(const char *json)
{
	json_t *obj = json_loads(json, 0, NULL);

	cr_assert_not_null(obj, "%s", json);
	cache(KIND_PARTITIONS, obj);
}

/* llama again, with spec given (a JSON object) instead of its own. */
static void recache_llama(const char *spec)
{
	cache(KIND_TRAININGJOBS, json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:i, s:s}, s:o}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
		"metadata", "name", "llama", "namespace", "ml", "uid", JOB_UID,
		"resourceVersion", "5", "generation", 1,
		"creationTimestamp", "2026-12-01T10:00:00Z",
		"spec", json_loads(spec, 0, NULL)));
}

/*
 * The variable name as pod's container gets it: from the pod's env, which
 * wins, else from the data of the ConfigMap this pass wrote (envFrom). A
 * new string, or NULL.
 */
static char *env_of(const json_t *pod, const char *name)
{
	const json_t *e;
	json_t *cm;
	char *value = NULL;
	size_t i;

	json_array_foreach(json_object_get(json_array_get(json_object_get(json_object_get(pod,
		"spec"), "containers"), 0), "env"), i, e)
		if (!strcmp(json_string_value(json_object_get(e, "name")), name))
			return strdup(json_string_value(json_object_get(e, "value")));
	cr_assert_eq(count("POST", CM_PATH), 1, "no ConfigMap was written");
	cm = body_of(first("POST", CM_PATH));
	if (json_string_value(json_object_get(json_object_get(cm, "data"), name)))
		value = strdup(json_string_value(json_object_get(json_object_get(cm, "data"),
								  name)));
	json_decref(cm);
	return value;
}

Test(tj_reconcile, a_job_without_image_or_partition_runs_in_the_default_partition_with_its_image)
{
	json_t *pod, *st;
	char *tol, *value;

	cache_partition("{\"apiVersion\": \"cadre.dev/v1alpha1\", \"kind\": \"Partition\", "
			"\"metadata\": {\"name\": \"gpu\", \"uid\": \"p1\"}, \"spec\": {\"default\": true, "
			"\"nodeSelector\": {\"pool\": \"gpu\"}, \"tolerations\": [{\"key\": \"team\", "
			"\"operator\": \"Exists\", \"effect\": \"NoSchedule\"}], "
			"\"defaultImage\": \"img:partition\", \"defaultTime\": \"1:00:00\"}}");
	recache_llama("{\"numNodes\": 2, \"run\": \"train\"}");
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", PODS_PATH), 2);
	pod = body_of(first("POST", PODS_PATH));
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(
		json_object_get(pod, "spec"), "containers"), 0), "image")), "img:partition");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(pod,
		"spec"), "nodeSelector"), "pool")), "gpu");
	tol = json_dumps(json_object_get(json_object_get(pod, "spec"), "tolerations"),
			 JSON_COMPACT | JSON_SORT_KEYS);
	cr_assert(tol && strstr(tol, "\"team\""), "%s", tol);
	free(tol);
	value = env_of(pod, "SLURM_JOB_PARTITION");
	cr_assert_str_eq(value, "gpu");
	free(value);
	st = body_of(first("PUT", TJ_STATUS_PATH));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(st, "status"),
							   "partition")), "gpu");
	json_decref(pod);
	json_decref(st);
}

/* status.<key> of the last status written this pass, a new string ("" when none). */
static char *last_status_str(const char *key)
{
	json_t *body = NULL;
	const char *text;
	char *value;

	for (size_t i = 0; i < httpd_request_count(server); i++)
		if (is(httpd_request_at(server, i), "PUT", TJ_STATUS_PATH)) {
			json_decref(body);
			body = body_of(i);
		}
	text = json_string_value(json_object_get(json_object_get(body, "status"), key));
	value = strdup(text ? text : "");
	json_decref(body);
	return value;
}

/* The message of the last status written this pass, a new string ("" when none). */
static char *last_status_message(void)
{
	return last_status_str("message");
}

/*
 * A job applied before its Partition (or while an admin replaces it) waits
 * for it, Pending and saying so in Slurm's words, as for a missing Volume:
 * it is not failed for good.
 */
Test(tj_reconcile, a_partition_that_does_not_exist_yet_is_waited_for_not_failed)
{
	json_t *body, *st, *c;
	size_t i;
	bool said = false;

	recache_llama("{\"numNodes\": 2, \"image\": \"img\", \"run\": \"train\", "
		      "\"partition\": \"gpu2\"}");
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", PODS_PATH), 0);
	body = body_of(first("PUT", TJ_STATUS_PATH));
	st = json_object_get(body, "status");
	cr_assert_str_eq(json_string_value(json_object_get(st, "phase")), "Pending");
	cr_assert_str_eq(json_string_value(json_object_get(st, "message")),
			 "invalid partition specified: gpu2: waiting for the Partition to exist");
	json_array_foreach(json_object_get(st, "conditions"), i, c) {
		cr_assert_str_neq(json_string_value(json_object_get(c, "type")), "Failed");
		said |= !strcmp(json_string_value(json_object_get(c, "type")), "Admitted") &&
			!strcmp(json_string_value(json_object_get(c, "reason")), "PartitionNotFound");
	}
	cr_assert(said, "Admitted/PartitionNotFound");
	json_decref(body);
}

/*
 * A running job keeps what it took from its Partition when it was admitted
 * (status.partitionSpec): the admin's later defaultTime of one second and
 * lower maxTime neither become its deadline nor fail it, and the Partition
 * deleted leaves it the image it took.
 */
static void cache_running_llama_in_debug(const char *spec, const char *recorded)
{
	json_t *job = NULL;

	recache_llama(spec);
	cr_assert_eq(store_get(m.stores[KIND_TRAININGJOBS], "ml/llama", &job), 0);
	json_object_set_new(job, "status", json_pack(
		"{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:[{s:s, s:s, s:s, s:s, s:s}], s:s, s:s}",
		"phase", "Running", "partition", "debug", "partitionSpec", recorded,
		"jobId", "123456789", "taskId", "t", "restarts", 0, "infraRestarts", 0,
		"conditions", "type", "Admitted", "status", "True", "reason", "Admitted",
		"message", "m", "lastTransitionTime", "2026-12-01T10:00:00Z",
		"admittedTime", "2026-12-01T10:00:00Z", "startTime", "2026-12-01T10:00:05Z"));
	cache(KIND_TRAININGJOBS, job);
	cache(KIND_SERVICES, json_pack("{s:{s:s, s:s, s:s, s:[{s:s}]}}", "metadata", "name",
				       "llama", "namespace", "ml", "uid", "svc",
				       "ownerReferences", "uid", JOB_UID));
	cache_pod(0, false);
	cache_pod(1, false);
	for (int i = 0; i < 2; i++)
		cache(KIND_NODES, json_pack("{s:{s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name",
					    i ? "n1" : "n0", "status", "conditions", "type",
					    "Ready", "status", "True"));
}

Test(tj_reconcile, an_admitted_job_keeps_what_it_took_from_its_partition)
{
	char *msg;

	cache_partition("{\"metadata\": {\"name\": \"debug\"}, \"spec\": {\"defaultTime\": \"1\","
			" \"maxTime\": \"1\"}}");
	cache_running_llama_in_debug("{\"numNodes\": 2, \"image\": \"img\", \"run\": \"train\", "
				     "\"partition\": \"debug\"}", "{}");
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	msg = last_status_message();
	cr_assert_null(strstr(msg, "MaxTime"), "%s", msg);
	cr_assert_null(strstr(msg, "deadline"), "%s", msg);
	cr_assert_eq(count("DELETE", PODS_PATH "/llama-0") + count("DELETE", PODS_PATH "/llama-1"),
		     0, "%s", msg);
	free(msg);
}

Test(tj_reconcile, a_deleted_partition_leaves_an_admitted_job_the_image_it_took)
{
	char *msg;

	opts.default_image = NULL;
	cache_running_llama_in_debug("{\"numNodes\": 2, \"run\": \"train\", "
				     "\"partition\": \"debug\"}",
				     "{\"defaultImage\":\"registry.example/team:1\"}");
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	msg = last_status_message();
	cr_assert_null(strstr(msg, "spec.image"), "%s", msg);
	cr_assert_eq(count("DELETE", PODS_PATH "/llama-0") + count("DELETE", PODS_PATH "/llama-1"),
		     0, "%s", msg);
	free(msg);
}

Test(tj_reconcile, a_time_limit_past_the_partitions_max_time_fails_the_job)
{
	json_t *body;

	cache_partition("{\"metadata\": {\"name\": \"debug\"}, \"spec\": {\"maxTime\": \"30\"}}");
	recache_llama("{\"numNodes\": 2, \"image\": \"img\", \"run\": \"train\", "
		      "\"partition\": \"debug\", \"activeDeadlineSeconds\": 3600}");
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", PODS_PATH), 0);
	body = body_of(first("PUT", TJ_STATUS_PATH));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(body, "status"),
							   "message")),
			 "time limit 01:00:00 is past partition debug's MaxTime 00:30:00");
	json_decref(body);
}

/* Slurm's AllowAccounts: a namespace the partition does not list cannot escape into it. */
Test(tj_reconcile, a_namespace_not_in_the_partitions_allowed_namespaces_fails_the_job)
{
	char *msg;

	cache_partition("{\"metadata\": {\"name\": \"gpu\"}, \"spec\": {\"allowedNamespaces\": "
			"[\"vision\"]}}");
	recache_llama("{\"numNodes\": 2, \"image\": \"img\", \"run\": \"train\", "
		      "\"partition\": \"gpu\"}");
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", PODS_PATH), 0);
	msg = last_status_message();
	cr_assert_str_eq(msg, "partition gpu: namespace ml is not in spec.allowedNamespaces");
	free(msg);
}

/* A job naming no partition is held to the default one's rules. */
Test(tj_reconcile, a_priority_above_the_default_partitions_max_fails_the_job)
{
	char *msg;

	cache_partition("{\"metadata\": {\"name\": \"gpu\"}, \"spec\": {\"default\": true, "
			"\"maxJobPriority\": 50}}");
	recache_llama("{\"numNodes\": 2, \"image\": \"img\", \"run\": \"train\", "
		      "\"priority\": 100}");
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", PODS_PATH), 0);
	msg = last_status_message();
	cr_assert_str_eq(msg, "spec.priority 100 is above partition gpu's maxJobPriority 50");
	free(msg);
}

/* The rules are for submission: an admin narrowing a partition leaves its running jobs be. */
Test(tj_reconcile, an_admitted_job_is_not_failed_by_a_later_allowed_namespaces)
{
	json_t *job = NULL;
	char *msg;

	cache_partition("{\"metadata\": {\"name\": \"gpu\"}, \"spec\": {\"allowedNamespaces\": "
			"[\"vision\"], \"maxJobPriority\": 0}}");
	cr_assert_eq(store_get(m.stores[KIND_TRAININGJOBS], "ml/llama", &job), 0);
	json_object_set_new(json_object_get(job, "spec"), "partition", json_string("gpu"));
	json_object_set_new(json_object_get(job, "spec"), "priority", json_integer(100));
	json_object_set_new(job, "status", json_pack(
		"{s:s, s:s, s:s, s:s, s:i, s:i, s:[{s:s, s:s, s:s, s:s, s:s}], s:s, s:s}",
		"phase", "Running", "partition", "gpu", "jobId", "123456789", "taskId", "t",
		"restarts", 0, "infraRestarts", 0, "conditions", "type", "Admitted", "status",
		"True", "reason", "Admitted", "message", "m", "lastTransitionTime",
		"2026-12-01T10:00:00Z", "admittedTime", "2026-12-01T10:00:00Z", "startTime",
		"2026-12-01T10:00:05Z"));
	cache(KIND_TRAININGJOBS, job);
	cache_configmap(current_configmap());
	cache(KIND_SERVICES, json_pack("{s:{s:s, s:s, s:s, s:[{s:s}]}}", "metadata", "name",
				       "llama", "namespace", "ml", "uid", "svc",
				       "ownerReferences", "uid", JOB_UID));
	cache_pod(0, false);
	cache_pod(1, false);
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	msg = last_status_message();
	cr_assert_null(strstr(msg, "allowedNamespaces"), "%s", msg);
	cr_assert_null(strstr(msg, "maxJobPriority"), "%s", msg);
	free(msg);
}

Test(tj_reconcile, with_no_partitions_at_all_nothing_changes)
{
	json_t *pod, *st;
	char *value;

	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", PODS_PATH), 2);
	pod = body_of(first("POST", PODS_PATH));
	cr_assert_null(json_object_get(json_object_get(pod, "spec"), "nodeSelector"));
	value = env_of(pod, "SLURM_JOB_PARTITION");
	cr_assert_null(value);
	st = body_of(first("PUT", TJ_STATUS_PATH));
	cr_assert_null(json_object_get(json_object_get(st, "status"), "partition"));
	json_decref(pod);
	json_decref(st);
}

/*
 * A rank the entrypoint's watchdog ended (spec.hang) restarts the gang as
 * Hung: the restart is the job's, and cadre_job_restarts_total counts it
 * under reason Hung, apart from a program's own failures.
 */
Test(tj_reconcile, a_hung_rank_is_counted_in_the_restart_metric_as_hung)
{
	static const char *const reason[] = { "reason", NULL };
	static const char *const hung[] = { "Hung" }, *const pod_failed[] = { "PodFailed" };
	json_t *job = NULL, *body = NULL, *st;

	m.registry = registry_new();
	m.metrics.job_restarts = registry_add(m.registry, METRIC_COUNTER, "cadre_job_restarts_total",
					      "restarts", reason, NULL, 0);
	cr_assert_not_null(m.metrics.job_restarts);
	cr_assert_eq(store_get(m.stores[KIND_TRAININGJOBS], "ml/llama", &job), 0);
	json_object_set_new(json_object_get(job, "spec"), "maxRestarts", json_integer(2));
	json_object_set_new(json_object_get(job, "spec"), "hang",
			    json_pack("{s:i}", "progressSeconds", 60));
	json_object_set_new(job, "status", json_pack(
		"{s:s, s:s, s:s, s:i, s:i, s:[{s:s, s:s, s:s, s:s, s:s}], s:s, s:s}",
		"phase", "Running", "jobId", "123456789", "taskId", "t", "restarts", 0,
		"infraRestarts", 0, "conditions", "type", "Admitted", "status", "True", "reason",
		"Admitted", "message", "m", "lastTransitionTime", "2026-12-01T10:00:00Z",
		"admittedTime", "2026-12-01T10:00:00Z", "startTime", "2026-12-01T10:00:05Z"));
	cache(KIND_TRAININGJOBS, job);
	cache_configmap(current_configmap());
	cache(KIND_SERVICES, json_pack("{s:{s:s, s:s, s:s, s:[{s:s}]}}", "metadata", "name",
				       "llama", "namespace", "ml", "uid", "svc",
				       "ownerReferences", "uid", JOB_UID));
	cache_pod(0, false);
	cache_pod_exited(1, true, 125, PODVIEW_HUNG_MESSAGE "rank 1 no progress for 60s "
			 "(spec.hang.progressSeconds)");

	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	for (size_t i = 0; i < httpd_request_count(server); i++)
		if (is(httpd_request_at(server, i), "PUT", TJ_STATUS_PATH)) {
			json_decref(body);
			body = body_of(i);
		}
	cr_assert_not_null(body);
	st = json_object_get(body, "status");
	cr_assert_eq(json_integer_value(json_object_get(st, "restarts")), 1);
	cr_assert_eq(json_integer_value(json_object_get(st, "infraRestarts")), 0);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(st, "lastFailure"),
							   "reason")), "Hung");
	json_decref(body);
	cr_assert_eq(metric_value(m.metrics.job_restarts, hung), 1);
	cr_assert_eq(metric_value(m.metrics.job_restarts, pod_failed), 0);
}

/* --- singleton (docs/design.md 13), read from the cache's index of groups --- */

/* A job of ml cached with the Slurm name label and submitter, in phase. */
static void cache_of_group(const char *name, const char *group, const char *user,
			   const char *created, const char *phase)
{
	char uid[64];

	snprintf(uid, sizeof(uid), "uid-%s", name);
	cache(KIND_TRAININGJOBS, json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:i, s:s, s:{s:s}, s:{s:s}}, "
		"s:{s:i, s:s, s:s, s:{s:[{s:s}]}}, s:{s:s}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
		"metadata", "name", name, "namespace", "ml", "uid",
		!strcmp(name, "llama") ? JOB_UID : uid, "resourceVersion", "5", "generation", 1,
		"creationTimestamp", created, "labels", LABEL_SLURM_NAME, group,
		"annotations", ANNOTATION_SUBMITTED_BY, user,
		"spec", "numNodes", 1, "image", "img", "run", "train",
		"dependency", "items", "type", "singleton", "status", "phase", phase));
}

Test(tj_reconcile, a_singleton_is_not_held_by_other_names_users_or_finished_jobs)
{
	char *msg;

	/* Same name, another user; same user, another name; same both but finished. */
	cache_of_group("other-user", "train", "bob", "2026-12-01T09:00:00Z", "Running");
	cache_of_group("other-name", "eval", "alice", "2026-12-01T09:00:00Z", "Running");
	cache_of_group("done", "train", "alice", "2026-12-01T09:00:00Z", "Succeeded");
	cache_of_group("llama", "train", "alice", "2026-12-01T10:00:00Z", "Queued");
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	msg = last_status_message();
	cr_assert_null(strstr(msg, "singleton"), "%s", msg);
	free(msg);
	cr_assert_eq(count("POST", PODS_PATH), 1, "nothing of its group runs: it starts");
}

Test(tj_reconcile, a_singleton_waits_for_an_older_job_of_its_name_and_user)
{
	char *msg;

	cache_of_group("first", "train", "alice", "2026-12-01T09:00:00Z", "Running");
	cache_of_group("llama", "train", "alice", "2026-12-01T10:00:00Z", "Queued");
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	msg = last_status_message();
	cr_assert_str_eq(msg, "waiting for dependency singleton: job first of the same name and "
			 "user is still running or waiting");
	free(msg);
	cr_assert_eq(count("POST", PODS_PATH), 0);
}

/* --- dependencies at the edges (docs/design.md 13), read from the caches --- */

static void cache_text(const char *json)
{
	json_t *obj = json_loads(json, 0, NULL);

	cr_assert_not_null(obj, "%s", json);
	cache(KIND_TRAININGJOBS, obj);
}

/* llama, depending as dependency (a JSON object) says, with status (a JSON object). */
static void cache_dependant(const char *dependency, const char *status)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		 "\"metadata\":{\"name\":\"llama\",\"namespace\":\"ml\",\"uid\":\"%s\","
		 "\"resourceVersion\":\"5\",\"generation\":1,"
		 "\"creationTimestamp\":\"2026-12-01T10:00:00Z\"},"
		 "\"spec\":{\"numNodes\":1,\"image\":\"img\",\"run\":\"train\",\"dependency\":%s},"
		 "\"status\":%s}", JOB_UID, dependency, status ? status : "{}");
	cache_text(text);
}

/* The phase of the last status written this pass, a new string ("" when none). */
static char *last_status_phase(void)
{
	return last_status_str("phase");
}

/* The last status written says Failed, and its message holds text. */
static void assert_failed_saying(const char *text)
{
	char *phase = last_status_phase(), *msg = last_status_message();

	cr_assert_str_eq(phase, "Failed", "%s", msg);
	cr_assert(strstr(msg, text), "%s", msg);
	free(msg);
	free(phase);
}

/* Array job arr, id 700000001, "0-3%1": element 0 done and deleted, 1 running, 2-3 not made. */
static void cache_throttled_array(void)
{
	cache_text("{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		   "\"metadata\":{\"name\":\"arr\",\"namespace\":\"ml\",\"uid\":\"uid-arr\","
		   "\"creationTimestamp\":\"2026-12-01T09:00:00Z\"},"
		   "\"spec\":{\"numNodes\":1,\"image\":\"img\",\"run\":\"x\",\"array\":\"0-3%1\"},"
		   "\"status\":{\"phase\":\"Running\",\"jobId\":\"700000001\",\"array\":"
		   "{\"started\":\"0-1\",\"succeeded\":\"0\"}}}");
	cache_text("{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		   "\"metadata\":{\"name\":\"arr-1\",\"namespace\":\"ml\",\"uid\":\"uid-arr-1\","
		   "\"creationTimestamp\":\"2026-12-01T09:00:00Z\"},"
		   "\"spec\":{\"numNodes\":1,\"image\":\"img\",\"run\":\"x\"},"
		   "\"status\":{\"phase\":\"Running\",\"jobId\":\"700000002\"}}");
}

#define AFTEROK(job) "{\"items\":[{\"type\":\"afterok\",\"jobs\":[\"" job "\"]}]}"

/*
 * An element the throttle has not made yet is pending, as Slurm's array
 * record holds it: its dependant waits. Before, it was no job: afterok
 * failed at once (and afterany was met).
 */
Test(tj_reconcile, a_dependency_on_an_element_not_made_yet_waits_for_it)
{
	char *msg, *phase;

	cache_throttled_array();
	cache_dependant(AFTEROK("700000001_3"), NULL);
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	phase = last_status_phase();
	msg = last_status_message();
	cr_assert_str_eq(phase, "Queued", "%s", msg);
	cr_assert_str_eq(msg, "waiting for dependency afterok:700000001_3: job 700000001_3 is "
			 "Queued");
	free(msg);
	free(phase);
}

/* An element ended and deleted ended as its array's sets say; an index it lacks is no job. */
Test(tj_reconcile, an_element_gone_ended_as_its_array_says)
{
	cache_throttled_array();
	cache_dependant(AFTEROK("700000001_0"), NULL);
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", PODS_PATH), 1, "element 0 succeeded: met, it starts");
}

Test(tj_reconcile, a_dependency_on_an_index_the_array_does_not_have_can_never_be_met)
{
	cache_throttled_array();
	cache_dependant(AFTEROK("700000001_9"), NULL);
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	assert_failed_saying("its array has no such index");
}

/*
 * A dependency by id on a job that never existed (applied with kubectl):
 * afternotok can never be met, as sbatch refuses it. Before, it was met at
 * once. One seen by an earlier pass and deleted since was cancelled: met.
 */
Test(tj_reconcile, afternotok_on_an_id_no_job_ever_had_fails_and_on_one_deleted_is_met)
{
	cache_dependant("{\"items\":[{\"type\":\"afternotok\",\"jobs\":[\"812345678\"]}]}", NULL);
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	assert_failed_saying("job 812345678 does not exist");
}

Test(tj_reconcile, afternotok_on_a_job_deleted_since_it_was_seen_is_met)
{
	cache_dependant("{\"items\":[{\"type\":\"afternotok\",\"jobs\":[\"812345678\"]}]}",
			"{\"phase\":\"Queued\",\"dependency\":{\"seen\":[\"812345678\"]}}");
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", PODS_PATH), 1, "cancelled is not ok: met, it starts");
}

/* What a pass finds is stored as seen, so that a deletion later reads as a cancel. */
Test(tj_reconcile, a_job_a_dependency_names_is_stored_as_seen_while_it_waits)
{
	json_t *body, *seen;

	cache_throttled_array();
	cache_dependant(AFTEROK("arr-1"), NULL);
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	body = body_of(first("PUT", TJ_STATUS_PATH));
	seen = json_object_get(json_object_get(json_object_get(body, "status"), "dependency"),
			       "seen");
	cr_assert_eq(json_array_size(seen), 1);
	cr_assert_str_eq(json_string_value(json_array_get(seen, 0)), "arr-1");
	json_decref(body);
}

/* A cycle of names waits for ever in Slurm's default; here it fails, saying the chain. */
Test(tj_reconcile, a_cycle_of_dependencies_fails_naming_the_chain)
{
	char *phase, *msg;

	cache_text("{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		   "\"metadata\":{\"name\":\"b\",\"namespace\":\"ml\",\"uid\":\"uid-b\","
		   "\"creationTimestamp\":\"2026-12-01T09:00:00Z\"},"
		   "\"spec\":{\"numNodes\":1,\"image\":\"img\",\"run\":\"x\",\"dependency\":"
		   AFTEROK("llama") "},\"status\":{\"phase\":\"Queued\"}}");
	cache_dependant(AFTEROK("b"), NULL);
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	phase = last_status_phase();
	msg = last_status_message();
	cr_assert_str_eq(phase, "Failed", "%s", msg);
	cr_assert_str_eq(msg, "circular job dependency: llama -> b -> llama");
	free(msg);
	free(phase);
}

/*
 * A finished job's TTL waits while a job that waits for its dependencies
 * names it and has not recorded its end: before, with a short TTL the
 * dependant could find it gone, its success never seen.
 */
static void cache_finished_llama_with_ttl(void)
{
	time_t at = time(NULL) - 10;
	char done[32], text[1536];
	struct tm tm;

	/* It ended 10 s ago, its TTL of 0 long past, within TJ_TTL_AWAITED_MAX_S of it. */
	gmtime_r(&at, &tm);
	strftime(done, sizeof(done), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(text, sizeof(text),
		 "{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		 "\"metadata\":{\"name\":\"llama\",\"namespace\":\"ml\",\"uid\":\"" JOB_UID "\","
		 "\"resourceVersion\":\"5\",\"generation\":1,"
		 "\"creationTimestamp\":\"2026-12-01T10:00:00Z\"},"
		 "\"spec\":{\"numNodes\":1,\"image\":\"img\",\"run\":\"x\","
		 "\"ttlSecondsAfterFinished\":0},"
		 "\"status\":{\"phase\":\"Succeeded\",\"jobId\":\"700000050\","
		 "\"observedGeneration\":1,\"completionTime\":\"%s\",\"conditions\":"
		 "[{\"type\":\"Succeeded\",\"status\":\"True\",\"reason\":\"Completed\","
		 "\"message\":\"done\",\"lastTransitionTime\":\"%s\"}]}}", done, done);
	cache_text(text);
}

#define LLAMA_PATH "/apis/cadre.dev/v1alpha1/namespaces/ml/trainingjobs/llama"

Test(tj_reconcile, a_finished_jobs_ttl_waits_for_a_dependant_that_has_not_seen_it_end)
{
	cache_finished_llama_with_ttl();
	cache_text("{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		   "\"metadata\":{\"name\":\"next\",\"namespace\":\"ml\",\"uid\":\"uid-next\","
		   "\"creationTimestamp\":\"2026-12-01T10:01:00Z\"},"
		   "\"spec\":{\"numNodes\":1,\"image\":\"img\",\"run\":\"x\",\"dependency\":"
		   AFTEROK("700000050") "},\"status\":{\"phase\":\"Queued\"}}");
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("DELETE", LLAMA_PATH), 0, "its dependant has not seen it succeed");
}

Test(tj_reconcile, a_finished_jobs_ttl_deletes_it_once_its_dependants_recorded_its_end)
{
	cache_finished_llama_with_ttl();
	cache_text("{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		   "\"metadata\":{\"name\":\"next\",\"namespace\":\"ml\",\"uid\":\"uid-next\","
		   "\"creationTimestamp\":\"2026-12-01T10:01:00Z\"},"
		   "\"spec\":{\"numNodes\":1,\"image\":\"img\",\"run\":\"x\",\"dependency\":"
		   "{\"items\":[{\"type\":\"afterok\",\"jobs\":[\"llama\",\"other\"]}]}},"
		   "\"status\":{\"phase\":\"Queued\",\"dependency\":{\"satisfied\":"
		   "[\"afterok:llama\"]}}}");
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("DELETE", LLAMA_PATH), 1, "its end is recorded where it is needed");
}


#define POD_AFFINITY_SPEC "{\"numNodes\": 2, \"image\": \"img\", \"run\": \"train\", " \
	"\"podTemplate\": {\"spec\": {\"affinity\": {\"podAffinity\": {" \
	"\"requiredDuringSchedulingIgnoredDuringExecution\": [{\"labelSelector\": " \
	"{\"matchLabels\": {\"app\": \"db\"}}, \"topologyKey\": \"kubernetes.io/hostname\"}]}}}}}"

/*
 * Built-in mode pins every rank to a node: a constraint it cannot model
 * (affinity to other pods) would be pinned where the scheduler refuses it,
 * so the job fails at once as an invalid spec for this mode, naming the
 * field, as a spec without an image does without --default-image. Modes
 * that do not pin take it as it is.
 */
Test(tj_reconcile, built_in_mode_fails_a_job_whose_affinity_it_cannot_model_naming_the_field)
{
	char *msg;

	opts.gang_scheduler = GANG_BUILTIN;
	recache_llama(POD_AFFINITY_SPEC);
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	cr_assert_eq(count("POST", PODS_PATH), 0);
	msg = last_status_message();
	cr_assert(!strncmp(msg, "invalid spec: spec.podTemplate.spec.affinity.podAffinity."
			   "requiredDuringSchedulingIgnoredDuringExecution: built-in gang "
			   "admission pins every rank", 122), "%s", msg);
	free(msg);
}

/* A gang admitted before (by an earlier version) is placed already: it is not ended for it. */
Test(tj_reconcile, an_admitted_gang_is_not_failed_for_an_affinity_it_could_not_model)
{
	json_t *job = json_loads(POD_AFFINITY_SPEC, 0, NULL);
	char *msg;

	opts.gang_scheduler = GANG_BUILTIN;
	cr_assert_not_null(job);
	cache(KIND_TRAININGJOBS, json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:i, s:s}, s:o, s:{s:s, s:s, s:[{s:s, s:s, "
		"s:s, s:s, s:s}], s:[{s:i, s:s, s:s}, {s:i, s:s, s:s}]}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
		"metadata", "name", "llama", "namespace", "ml", "uid", JOB_UID,
		"resourceVersion", "5", "generation", 1,
		"creationTimestamp", "2026-12-01T10:00:00Z", "spec", job,
		"status", "phase", "Starting", "jobId", "1", "conditions", "type", "Admitted",
		"status", "True", "reason", "Admitted", "message", "admitted",
		"lastTransitionTime", "2026-12-01T10:00:01Z",
		"nodes", "rank", 0, "pod", "llama-0", "node", "n0", "rank", 1, "pod", "llama-1",
		"node", "n1"));
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	msg = last_status_message();
	cr_assert_null(strstr(msg, "invalid spec"), "%s", msg);
	free(msg);
}

Test(tj_reconcile, modes_that_do_not_pin_take_a_pod_affinity_as_it_is)
{
	char *msg;

	opts.gang_scheduler = GANG_NONE;
	recache_llama(POD_AFFINITY_SPEC);
	cr_assert_eq(tj_reconcile(&m, "ml", "llama"), 0);
	msg = last_status_message();
	cr_assert_eq(count("POST", PODS_PATH), 2, "%s", msg);
	cr_assert_null(strstr(msg, "invalid spec"), "%s", msg);
	free(msg);
}
