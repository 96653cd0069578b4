/*
 * Code bundles on the controller's side (controller/code/code.h) against a
 * fake API server: when a bundle is whole, who owns it (the patches sent),
 * and when it is collected (the deletes sent), with the caches filled by
 * hand as the reflectors would fill them and the wall clock the test's.
 */
#include <criterion/criterion.h>

#include <jansson.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "api/code.h"
#include "api/trainingjob.h"
#include "base/err.h"
#include "controller/code/code.h"
#include "controller/manager/handlers.h"
#include "controller/manager/manager.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/store.h"
#include "kube/workqueue.h"
#include "unit/support/httpd.h"

#define DIGEST "sha256:c0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0de"
#define LABEL "c0dec0dec0dec0dec0dec0dec0dec0dec0dec0de"
#define CMS "/api/v1/namespaces/ml/configmaps/"
/* 2026-12-01T10:00:00Z */
#define T0 1796119200L

static struct manager m;
static struct options opts;
static struct httpd *server;
static struct kube_config *config;
static int64_t now_s;

static int64_t wall(void)
{
	return now_s;
}

static void answer(void *ctx, const struct httpd_request *req, struct httpd_response *resp)
{
	(void)ctx;
	(void)req;
	resp->status = 200;
	resp->body = "{}";
}

static void setup(void)
{
	memset(&m, 0, sizeof(m));
	memset(&opts, 0, sizeof(opts));
	opts.code_retention_seconds = 86400;
	opts.code_orphan_seconds = 3600;
	m.opts = &opts;
	m.wall_s = wall;
	cr_assert_eq(httpd_new(&server), 0);
	httpd_set_handler(server, answer, NULL);
	cr_assert_eq(kube_config_new(httpd_url(server), &config), 0);
	cr_assert_eq(kube_http_new(config, NULL, &m.http), 0);
	for (int k = 0; k < KIND_COUNT; k++)
		cr_assert_not_null(m.stores[k] = store_new(k == KIND_CODE ?
			&(struct store_options){ .kind = "configmaps", .trim = code_trim } : NULL));
	/* As manager.c sets them up. */
	cr_assert_eq(store_add_index(m.stores[KIND_CODE], CODE_INDEX, code_index_part, NULL), 0);
	cr_assert_eq(store_add_index(m.stores[KIND_TRAININGJOBS], CODE_INDEX, code_index_job,
				     NULL), 0);
	cr_assert_not_null(m.queue = wq_new(NULL));
}

static void teardown(void)
{
	for (int k = 0; k < KIND_COUNT; k++)
		store_free(m.stores[k]);
	wq_free(m.queue);
	kube_http_free(m.http);
	kube_config_free(config);
	httpd_free(server);
}

TestSuite(code_gc, .init = setup, .fini = teardown);

/* Part index of parts of the bundle, made at T0, owned by the job uid owner (NULL: none). */
static void cache_part(uint32_t index, uint32_t parts, const char *owner)
{
	char name[CODE_NAME_SIZE], num[8], count[8], size[24];
	json_t *cm;

	cr_assert_eq(code_part_name(DIGEST, index, name), 0);
	snprintf(num, sizeof(num), "%u", index);
	snprintf(count, sizeof(count), "%u", parts);
	snprintf(size, sizeof(size), "%u", (parts - 1) * CODE_PART_BYTES + 100);
	cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:{s:s}, s:{s:s, s:s, s:s, s:s, s:s}},"
		       " s:b, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
		       "metadata", "name", name, "namespace", "ml", "uid", name,
		       "resourceVersion", "1", "creationTimestamp", "2026-12-01T10:00:00Z",
		       "labels", CODE_LABEL, LABEL,
		       "annotations", CODE_ANNOTATION_DIGEST, DIGEST, CODE_ANNOTATION_PART, num,
		       CODE_ANNOTATION_PARTS, count, CODE_ANNOTATION_SIZE, size,
		       CODE_ANNOTATION_KIND, "dir", "immutable", 1, "binaryData", "part", "AAAA");
	cr_assert_not_null(cm);
	if (owner)
		cr_assert_eq(json_object_set_new(json_object_get(cm, "metadata"), "ownerReferences",
			json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "cadre.dev/v1alpha1",
				  "kind", "TrainingJob", "name", "x", "uid", owner)), 0);
	cr_assert_eq(store_upsert(m.stores[KIND_CODE], cm), 0);
	json_decref(cm);
}

/* A job named name (uid the same) naming the bundle, in phase (NULL: none), ended at done. */
static void cache_job(const char *name, const char *phase, const char *done)
{
	json_t *job = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:[{s:s, s:s}], s:s}, s:{}}",
				"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
				"metadata", "name", name, "namespace", "ml", "uid", name,
				"spec", "code", "digest", DIGEST, "path", "/w", "run", "true",
				"status");

	cr_assert_not_null(job);
	if (phase)
		json_object_set_new(json_object_get(job, "status"), "phase", json_string(phase));
	if (done)
		json_object_set_new(json_object_get(job, "status"), "completionTime",
				    json_string(done));
	cr_assert_eq(store_upsert(m.stores[KIND_TRAININGJOBS], job), 0);
	json_decref(job);
}

static size_t count(const char *method, const char *prefix)
{
	size_t n = 0;

	for (size_t i = 0; i < httpd_request_count(server); i++) {
		const struct httpd_request *r = httpd_request_at(server, i);

		n += !strcmp(r->method, method) && !strncmp(r->target, prefix, strlen(prefix));
	}
	return n;
}

Test(code_gc, a_bundle_is_whole_only_with_every_part_and_says_what_is_missing)
{
	struct code_state st;

	cr_assert_eq(code_state_of(m.stores[KIND_CODE], "ml", DIGEST, &st), 0);
	cr_assert_not(st.complete);
	cr_assert(strstr(st.why, "no ConfigMap labelled cadre.dev/code=" LABEL " in namespace ml"),
		  "%s", st.why);
	cache_part(0, 3, NULL);
	cache_part(2, 3, NULL);
	cr_assert_eq(code_state_of(m.stores[KIND_CODE], "ml", DIGEST, &st), 0);
	cr_assert_not(st.complete);
	cr_assert(strstr(st.why, "2 of its 3 ConfigMaps"), "%s", st.why);
	cache_part(1, 3, NULL);
	cr_assert_eq(code_state_of(m.stores[KIND_CODE], "ml", DIGEST, &st), 0);
	cr_assert(st.complete, "%s", st.why);
	cr_assert_eq(st.parts, 3);
	cr_assert_not(st.file);
	/* Another namespace holds none of it. */
	cr_assert_eq(code_state_of(m.stores[KIND_CODE], "other", DIGEST, &st), 0);
	cr_assert_not(st.complete);
}

Test(code_gc, the_cache_keeps_a_parts_metadata_never_its_data)
{
	json_t *got = NULL;
	char name[CODE_NAME_SIZE];
	char key[128];

	cache_part(0, 1, NULL);
	code_part_name(DIGEST, 0, name);
	snprintf(key, sizeof(key), "ml/%s", name);
	cr_assert_eq(store_get(m.stores[KIND_CODE], key, &got), 0);
	cr_assert_null(json_object_get(got, "binaryData"));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(got,
		"metadata"), "annotations"), CODE_ANNOTATION_DIGEST)), DIGEST);
	json_decref(got);
}

Test(code_gc, each_job_becomes_an_owner_of_each_part_once_and_an_array_element_never)
{
	struct trainingjob tj;

	tj_init(&tj);
	tj.meta.name = strdup("a");
	tj.meta.namespace = strdup("ml");
	tj.meta.uid = strdup("uid-a");
	cache_part(0, 2, NULL);
	cache_part(1, 2, "uid-a");
	cr_assert_eq(code_own(&m, &tj, DIGEST), 0);
	cr_assert_eq(count("PATCH", CMS), 1, "part 1 names the job already");
	const struct httpd_request *r = httpd_request_at(server, 0);
	cr_assert_str_eq(r->target, CMS "cadre-code-" LABEL "-0");
	bool strategic = false;
	for (size_t h = 0; h < r->nheaders; h++)
		strategic |= !strcasecmp(r->names[h], "content-type") &&
			     !strcmp(r->values[h], "application/strategic-merge-patch+json");
	cr_assert(strategic, "merged by uid, the other owners kept");
	cr_assert(strstr(r->body, "\"uid\":\"uid-a\"") && strstr(r->body, "\"kind\":\"TrainingJob\""),
		  "%s", r->body);

	tj.meta.labels = json_pack("{s:s}", "cadre.dev/array-job", "sweep");
	cr_assert_eq(code_own(&m, &tj, "sha256:nothex"), CADRE_EINVAL);
	free(tj.meta.uid);
	tj.meta.uid = strdup("uid-element");
	cr_assert_eq(code_own(&m, &tj, DIGEST), 0);
	cr_assert_eq(count("PATCH", CMS), 1, "an element's array owns the bundle");
	tj_release(&tj);
}

Test(code_gc, a_bundle_no_job_names_goes_after_the_orphan_time_and_not_before)
{
	cache_part(0, 2, NULL);
	cache_part(1, 2, NULL);
	now_s = T0 + 100;
	cr_assert_eq(code_reconcile(&m, "ml", LABEL), 0);
	cr_assert_eq(count("DELETE", CMS), 0);
	now_s = T0 + 3600;
	cr_assert_eq(code_reconcile(&m, "ml", LABEL), 0);
	cr_assert_eq(count("DELETE", CMS), 2);
}

Test(code_gc, a_bundle_a_running_job_names_stays_and_goes_a_retention_after_the_last_end)
{
	cache_part(0, 1, "a");
	cache_job("a", "Running", NULL);
	cache_job("b", "Succeeded", "2026-12-01T12:00:00Z");
	now_s = T0 + 10 * 86400;
	cr_assert_eq(code_reconcile(&m, "ml", LABEL), 0);
	cr_assert_eq(count("DELETE", CMS), 0, "a job that has not ended needs it");

	cache_job("a", "Failed", "2026-12-02T09:00:00Z");
	now_s = T0 + 86400 + 82800 - 1;  /* a second before a day after a's end */
	cr_assert_eq(code_reconcile(&m, "ml", LABEL), 0);
	cr_assert_eq(count("DELETE", CMS), 0);
	now_s += 1;
	cr_assert_eq(code_reconcile(&m, "ml", LABEL), 0);
	cr_assert_eq(count("DELETE", CMS), 1);

	/* A negative retention keeps it for good. */
	opts.code_retention_seconds = -1;
	now_s += 1000000;
	cr_assert_eq(code_reconcile(&m, "ml", LABEL), 0);
	cr_assert_eq(count("DELETE", CMS), 1);
}

Test(code_gc, a_new_leader_looks_at_every_bundle)
{
	cache_part(0, 1, NULL);
	manager_enqueue_everything(&m);
	cr_assert_eq(wq_len(m.queue), 1);
	char *key = NULL;
	cr_assert_eq(wq_get(m.queue, &key), 0);
	cr_assert_str_eq(key, "code/ml/" LABEL);
	free(key);
}
