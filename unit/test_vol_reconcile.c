/*
 * The Volume reconciler against a fake API server: what it sends for the
 * owner reference of the claim and for the Events of a phase change, and
 * that a reconcile with nothing to change sends nothing. The caches are
 * filled by hand, as the reflectors would fill them.
 */
#include <criterion/criterion.h>

#include <jansson.h>
#include <pthread.h>
#include <string.h>

#include "base/err.h"
#include "controller/manager/manager.h"
#include "controller/manager/reconcile.h"
#include "kube/config.h"
#include "kube/events.h"
#include "kube/http.h"
#include "kube/store.h"
#include "unit/support/httpd.h"

#define VOL_UID "5e5e5e5e-0000-4000-8000-0000000000f1"
#define CLAIM_PATH "/api/v1/namespaces/ml/persistentvolumeclaims/"
#define VOLUME_PATH "/apis/cadre.dev/v1alpha1/namespaces/ml/volumes/scratch"
#define EVENTS_PATH "/apis/events.k8s.io/v1/namespaces/ml/events"

static struct manager m;
static struct httpd *server;
static struct kube_config *config;
static pthread_mutex_t answer_lock = PTHREAD_MUTEX_INITIALIZER;
static int status_put_code = 200;
static json_t *last_status;  /* the status of the last PUT that was answered 200 */

/* Every write succeeds, but a status PUT answers status_put_code. */
static void answer(void *ctx, const struct httpd_request *req, struct httpd_response *resp)
{
	(void)ctx;
	resp->status = !strcmp(req->method, "POST") ? 201 : 200;
	resp->body = "{}";
	if (!strcmp(req->method, "PUT")) {
		pthread_mutex_lock(&answer_lock);
		resp->status = status_put_code;
		if (status_put_code == 200) {
			json_t *body = json_loads(req->body, 0, NULL);

			json_decref(last_status);
			last_status = json_incref(json_object_get(body, "status"));
			json_decref(body);
		}
		pthread_mutex_unlock(&answer_lock);
	}
}

static void setup(void)
{
	memset(&m, 0, sizeof(m));
	cr_assert_eq(httpd_new(&server), 0);
	httpd_set_handler(server, answer, NULL);
	cr_assert_eq(kube_config_new(httpd_url(server), &config), 0);
	cr_assert_eq(kube_http_new(config, NULL, &m.http), 0);
	for (int k = 0; k < KIND_COUNT; k++)
		cr_assert_not_null(m.stores[k] = store_new(NULL));
	/* As manager.c sets it up: a Volume's users are found through it. */
	cr_assert_eq(store_add_index(m.stores[KIND_TRAININGJOBS], "volume",
				     manager_index_job_volumes, NULL), 0);
	status_put_code = 200;
	last_status = NULL;
}

static void teardown(void)
{
	events_free(m.events);
	for (int k = 0; k < KIND_COUNT; k++)
		store_free(m.stores[k]);
	kube_http_free(m.http);
	kube_config_free(config);
	httpd_free(server);
	json_decref(last_status);
}

TestSuite(vol_reconcile, .init = setup, .fini = teardown);

/* The Volume scratch in ml, protected, with policy, claimName claim (NULL: none). */
static json_t *volume(const char *policy, const char *claim)
{
	json_t *vol = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:i, s:[s]},"
				" s:{s:s, s:s, s:s}}",
				"apiVersion", "cadre.dev/v1alpha1", "kind", "Volume",
				"metadata", "name", "scratch", "namespace", "ml", "uid", VOL_UID,
				"resourceVersion", "10", "generation", 1,
				"finalizers", "cadre.dev/volume-protection",
				"spec", "type", "k8s-pvc", "size", "100Gi", "reclaimPolicy", policy);

	cr_assert_not_null(vol);
	if (claim)
		cr_assert_eq(json_object_set_new(json_object_get(vol, "spec"), "claimName",
						 json_string(claim)), 0);
	return vol;
}

static void being_deleted(json_t *vol)
{
	cr_assert_eq(json_object_set_new(json_object_get(vol, "metadata"), "deletionTimestamp",
					 json_string("2026-12-01T10:00:00Z")), 0);
}

/* A Bound claim named name in ml, as cached; owned by the Volume when owned. */
static json_t *claim(const char *name, bool owned)
{
	json_t *pvc = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:{s:s, s:[s], s:{s:s}}}",
				"apiVersion", "v1", "kind", "PersistentVolumeClaim",
				"metadata", "name", name, "namespace", "ml",
				"uid", "c1a1c1a1-0000-4000-8000-000000000001",
				"resourceVersion", "42",
				"status", "phase", "Bound", "accessModes", "ReadWriteMany",
				"capacity", "storage", "100Gi");

	cr_assert_not_null(pvc);
	if (owned)
		cr_assert_eq(json_object_set_new(json_object_get(pvc, "metadata"), "ownerReferences",
			json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion",
				  "cadre.dev/v1alpha1", "kind", "Volume", "name", "scratch",
				  "uid", VOL_UID, "controller", 1, "blockOwnerDeletion", 1)), 0);
	return pvc;
}

static void cache(enum manager_kind kind, json_t *obj)
{
	cr_assert_eq(store_upsert(m.stores[kind], obj), 0);
	json_decref(obj);
}

/* Reconcile, with the Volume's status as the last one written (a settled Volume). */
static int reconcile(void)
{
	return vol_reconcile(&m, "ml", "scratch");
}

static void settle(json_t *vol)
{
	json_t *again;

	cache(KIND_VOLUMES, json_incref(vol));
	cr_assert_eq(reconcile(), 0);
	cr_assert_not_null(last_status, "the first reconcile wrote no status");
	again = json_deep_copy(vol);
	cr_assert_eq(json_object_set(again, "status", last_status), 0);
	cache(KIND_VOLUMES, again);
	json_decref(vol);
}

/* The requests whose method and target are these, from request first on. */
static size_t count_requests(size_t first, const char *method, const char *target)
{
	size_t n = 0;

	for (size_t i = first; i < httpd_request_count(server); i++) {
		const struct httpd_request *r = httpd_request_at(server, i);

		if (!strcmp(r->method, method) && !strncmp(r->target, target, strlen(target)) &&
		    (r->target[strlen(target)] == '\0' || r->target[strlen(target)] == '?'))
			n++;
	}
	return n;
}

/* The only request from first on with this method and target. */
static const struct httpd_request *only_request(size_t first, const char *method,
						const char *target)
{
	const struct httpd_request *found = NULL;

	cr_assert_eq(count_requests(first, method, target), 1, "%zu %s %s, not 1",
		     count_requests(first, method, target), method, target);
	for (size_t i = first; i < httpd_request_count(server); i++) {
		const struct httpd_request *r = httpd_request_at(server, i);

		if (!strcmp(r->method, method) && !strncmp(r->target, target, strlen(target)))
			found = r;
	}
	return found;
}

static void assert_body(const struct httpd_request *r, const char *want_text)
{
	json_t *got = json_loads(r->body, 0, NULL), *want = json_loads(want_text, 0, NULL);

	cr_assert_not_null(got, "not JSON: %s", r->body);
	cr_assert_not_null(want);
	cr_assert(json_equal(got, want), "body %s", r->body);
	json_decref(got);
	json_decref(want);
}

static void assert_strategic(const struct httpd_request *r)
{
	cr_assert_str_eq(httpd_request_header(r, "Content-Type"),
			 "application/strategic-merge-patch+json");
}

Test(vol_reconcile, a_settled_volume_whose_claim_is_as_its_policy_says_sends_nothing)
{
	size_t before;

	cache(KIND_PVCS, claim("scratch", true));
	settle(volume("Delete", NULL));
	before = httpd_request_count(server);
	cr_assert_eq(reconcile(), 0);
	cr_assert_eq(httpd_request_count(server), before, "%zu requests",
		     httpd_request_count(server) - before);
}

Test(vol_reconcile, a_settled_retain_volume_with_an_unowned_claim_sends_nothing)
{
	size_t before;

	cache(KIND_PVCS, claim("scratch", false));
	settle(volume("Retain", NULL));
	before = httpd_request_count(server);
	cr_assert_eq(reconcile(), 0);
	cr_assert_eq(httpd_request_count(server), before);
}

Test(vol_reconcile, delete_changed_to_retain_removes_the_reference_with_one_guarded_patch)
{
	size_t before;
	const struct httpd_request *r;

	cache(KIND_PVCS, claim("scratch", false));
	settle(volume("Retain", NULL));
	cache(KIND_PVCS, claim("scratch", true));  /* left from when it was Delete */
	before = httpd_request_count(server);
	cr_assert_eq(reconcile(), 0);
	r = only_request(before, "PATCH", CLAIM_PATH "scratch");
	assert_strategic(r);
	assert_body(r, "{\"metadata\": {\"resourceVersion\": \"42\", \"ownerReferences\": "
		    "[{\"$patch\": \"delete\", \"uid\": \"" VOL_UID "\"}]}}");
	cr_assert_eq(count_requests(before, "DELETE", CLAIM_PATH "scratch"), 0);
}

Test(vol_reconcile, retain_changed_to_delete_adds_the_reference_with_one_guarded_patch)
{
	size_t before;
	const struct httpd_request *r;

	cache(KIND_PVCS, claim("scratch", true));
	settle(volume("Delete", NULL));
	cache(KIND_PVCS, claim("scratch", false));  /* made when it was Retain */
	before = httpd_request_count(server);
	cr_assert_eq(reconcile(), 0);
	r = only_request(before, "PATCH", CLAIM_PATH "scratch");
	assert_strategic(r);
	assert_body(r, "{\"metadata\": {\"resourceVersion\": \"42\", \"ownerReferences\": "
		    "[{\"apiVersion\": \"cadre.dev/v1alpha1\", \"kind\": \"Volume\", "
		    "\"name\": \"scratch\", \"uid\": \"" VOL_UID "\", \"controller\": true, "
		    "\"blockOwnerDeletion\": true}]}}");
}

Test(vol_reconcile, an_adopted_claim_with_delete_is_never_patched_to_be_owned)
{
	size_t before;

	cache(KIND_PVCS, claim("team-data", false));
	settle(volume("Delete", "team-data"));
	before = httpd_request_count(server);
	cr_assert_eq(reconcile(), 0);
	cr_assert_eq(httpd_request_count(server), before);
	cr_assert_eq(count_requests(0, "PATCH", CLAIM_PATH "team-data"), 0);
	cr_assert_eq(count_requests(0, "POST", "/api/v1/namespaces/ml/persistentvolumeclaims"),
		     0, "a claim was created for a Volume that adopts one");
}

Test(vol_reconcile, a_retain_volume_going_removes_its_reference_whatever_the_cache_says_then_its_finalizer)
{
	const struct httpd_request *disown, *finalizer;
	json_t *vol = volume("Retain", NULL);

	being_deleted(vol);
	cache(KIND_PVCS, claim("scratch", false));  /* the cache may lag behind the claim */
	cache(KIND_VOLUMES, vol);
	cr_assert_eq(reconcile(), 0);
	cr_assert_eq(httpd_request_count(server), 2);
	disown = httpd_request_at(server, 0);
	cr_assert_str_eq(disown->method, "PATCH");
	cr_assert_str_eq(disown->target, CLAIM_PATH "scratch");
	assert_strategic(disown);
	assert_body(disown, "{\"metadata\": {\"ownerReferences\": "
		    "[{\"$patch\": \"delete\", \"uid\": \"" VOL_UID "\"}]}}");
	finalizer = httpd_request_at(server, 1);
	cr_assert_str_eq(finalizer->method, "PATCH");
	cr_assert_str_eq(finalizer->target, VOLUME_PATH);
	cr_assert_eq(count_requests(0, "DELETE", CLAIM_PATH "scratch"), 0);
}

Test(vol_reconcile, an_adopting_delete_volume_going_leaves_the_claim_and_only_drops_its_reference)
{
	json_t *vol = volume("Delete", "team-data");

	being_deleted(vol);
	cache(KIND_PVCS, claim("team-data", false));
	cache(KIND_VOLUMES, vol);
	cr_assert_eq(reconcile(), 0);
	cr_assert_eq(count_requests(0, "DELETE", CLAIM_PATH "team-data"), 0);
	assert_body(only_request(0, "PATCH", CLAIM_PATH "team-data"),
		    "{\"metadata\": {\"ownerReferences\": "
		    "[{\"$patch\": \"delete\", \"uid\": \"" VOL_UID "\"}]}}");
	cr_assert_eq(count_requests(0, "PATCH", VOLUME_PATH), 1);
}

Test(vol_reconcile, a_delete_volume_going_deletes_the_claim_it_made)
{
	json_t *vol = volume("Delete", NULL);

	being_deleted(vol);
	cache(KIND_PVCS, claim("scratch", true));
	cache(KIND_VOLUMES, vol);
	cr_assert_eq(reconcile(), 0);
	cr_assert_eq(count_requests(0, "DELETE", CLAIM_PATH "scratch"), 1);
	cr_assert_eq(count_requests(0, "PATCH", CLAIM_PATH "scratch"), 0);
}

Test(vol_reconcile, a_refused_disown_keeps_the_finalizer)
{
	json_t *vol = volume("Retain", NULL);

	being_deleted(vol);
	cache(KIND_VOLUMES, vol);
	httpd_push(server, &(struct httpd_response){ .status = 403, .body =
		   "{\"kind\":\"Status\",\"reason\":\"Forbidden\",\"code\":403}" });
	httpd_push(server, &(struct httpd_response){ .status = 400, .body =
		   "{\"kind\":\"Status\",\"reason\":\"BadRequest\",\"code\":400}" });
	cr_assert_neq(reconcile(), 0);
	cr_assert_neq(reconcile(), 0);
	cr_assert_eq(count_requests(0, "PATCH", CLAIM_PATH "scratch"), 2);
	cr_assert_eq(count_requests(0, "PATCH", VOLUME_PATH), 0,
		     "the finalizer went while our reference may still be on the claim");
}

/* The Events the recorder sent, as JSON objects (new reference). */
static json_t *sent_events(void)
{
	json_t *all = json_array();

	cr_assert_eq(events_flush(m.events, 5000), 0);
	for (size_t i = 0; i < httpd_request_count(server); i++) {
		const struct httpd_request *r = httpd_request_at(server, i);

		if (!strcmp(r->method, "POST") && !strcmp(r->target, EVENTS_PATH))
			json_array_append_new(all, json_loads(r->body, 0, NULL));
	}
	return all;
}

static void start_recorder(void)
{
	struct events_options opts = { .reporting_controller = EVENTS_CONTROLLER };

	cr_assert_eq(events_new(m.http, &opts, &m.events), 0);
	cr_assert_eq(events_start(m.events), 0);
}

Test(vol_reconcile, a_phase_change_is_an_event_with_both_phases_and_what_the_claim_says)
{
	json_t *events, *bound = NULL, *e;
	size_t i;

	start_recorder();
	settle(volume("Retain", NULL));  /* no claim yet: Pending */
	cache(KIND_PVCS, claim("scratch", false));
	cr_assert_eq(reconcile(), 0);
	events = sent_events();
	json_array_foreach(events, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "reason")), "Bound"))
			bound = e;
	cr_assert_not_null(bound, "no Bound event among %zu", json_array_size(events));
	cr_assert_str_eq(json_string_value(json_object_get(bound, "type")), "Normal");
	cr_assert_str_eq(json_string_value(json_object_get(bound, "note")),
			 "phase Pending -> Bound: PersistentVolumeClaim scratch is Bound");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(bound, "regarding"),
							   "name")), "scratch");
	json_decref(events);
}

Test(vol_reconcile, an_unchanged_phase_and_an_unstored_status_record_no_phase_event)
{
	json_t *events, *e;
	size_t i;

	start_recorder();
	cache(KIND_PVCS, claim("scratch", false));
	settle(volume("Retain", NULL));  /* Bound at once: the one phase event */
	cr_assert_eq(reconcile(), 0);    /* still Bound */
	cache(KIND_PVCS, json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s}}", "apiVersion",
				   "v1", "kind", "PersistentVolumeClaim", "metadata", "name",
				   "scratch", "namespace", "ml", "resourceVersion", "43",
				   "status", "phase", "Lost"));
	status_put_code = 409;  /* the Failed status is not stored */
	cr_assert_eq(reconcile(), CADRE_EAGAIN);
	events = sent_events();
	json_array_foreach(events, i, e) {
		const char *reason = json_string_value(json_object_get(e, "reason"));

		cr_assert(!strcmp(reason, "Bound") || !strcmp(reason, "CreatedClaim"),
			  "unexpected event %s", reason);
	}
	json_decref(events);
}

/* A TrainingJob in ns that mounts the Volume scratch, in phase. */
static json_t *job_using_scratch(const char *ns, const char *name, const char *phase)
{
	return json_pack("{s:{s:s, s:s}, s:{s:{s:s}}, s:{s:s}}", "metadata", "namespace", ns,
			 "name", name, "spec", "volumes", "/data", "scratch", "status", "phase",
			 phase);
}

/*
 * Protection: while a job of its namespace that has not finished mounts it,
 * a Volume being deleted keeps its finalizer and its claim; finished jobs
 * and another namespace's jobs of the same Volume name do not hold it.
 */
Test(vol_reconcile, a_volume_going_waits_for_the_unfinished_jobs_of_its_namespace_using_it)
{
	json_t *vol = volume("Delete", NULL), *train = job_using_scratch("ml", "train", "Running");

	being_deleted(vol);
	cache(KIND_PVCS, claim("scratch", true));
	cache(KIND_VOLUMES, json_incref(vol));
	cache(KIND_TRAININGJOBS, job_using_scratch("ml", "done", "Succeeded"));
	cache(KIND_TRAININGJOBS, job_using_scratch("other", "elsewhere", "Running"));
	cache(KIND_TRAININGJOBS, json_incref(train));
	cr_assert_eq(reconcile(), 0);
	cr_assert_eq(count_requests(0, "DELETE", CLAIM_PATH "scratch"), 0);
	cr_assert_eq(count_requests(0, "PATCH", VOLUME_PATH), 0);

	/* Once that job is gone, the delete goes ahead. */
	cr_assert_eq(store_remove(m.stores[KIND_TRAININGJOBS], train), 0);
	cr_assert_eq(reconcile(), 0);
	cr_assert_eq(count_requests(0, "DELETE", CLAIM_PATH "scratch"), 1);
	json_decref(train);
	json_decref(vol);
}

/*
 * PersistentVolumes of nfs Volumes (docs/volumes.md, "The PV of an nfs Volume"):
 * cluster-scoped, so named uniquely and touched only when labelled as the Volume's.
 */
#define PVS_PATH "/api/v1/persistentvolumes"
/* printf 'ml/scratch' | sha256sum | cut -c1-16 */
#define PV_NEW "cadre.ml.scratch.c5226cf47ff810b4"
#define PV_OLD "cadre-ml-scratch"

/* volume() made an nfs Volume. */
static json_t *nfs_volume(const char *policy)
{
	json_t *vol = volume(policy, NULL);
	json_t *spec = json_object_get(vol, "spec");

	cr_assert_eq(json_object_set_new(spec, "type", json_string("nfs")), 0);
	cr_assert_eq(json_object_set_new(spec, "nfs", json_pack("{s:s, s:s}", "server",
				"10.0.0.5", "path", "/exports/scratch")), 0);
	return vol;
}

/* A PV named name as cached, labelled as Volume ns/volume's (ns NULL: unlabelled). */
static json_t *pv(const char *name, const char *ns, const char *volume)
{
	json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s}}",
				"apiVersion", "v1", "kind", "PersistentVolume",
				"metadata", "name", name,
				"uid", "9f9f9f9f-0000-4000-8000-000000000009",
				"resourceVersion", "77", "status", "phase", "Bound");

	cr_assert_not_null(obj);
	if (ns)
		cr_assert_eq(json_object_set_new(json_object_get(obj, "metadata"), "labels",
			json_pack("{s:s, s:s}", "cadre.dev/volume", volume,
				  "cadre.dev/volume-namespace", ns)), 0);
	return obj;
}

/* The volumeName of the claim the reconcile created from request first on. */
static const char *created_claim_pv(size_t first, json_t **body)
{
	const struct httpd_request *r = only_request(first, "POST",
						     "/api/v1/namespaces/ml/persistentvolumeclaims");

	*body = json_loads(r->body, 0, NULL);
	cr_assert_not_null(*body);
	return json_string_value(json_object_get(json_object_get(*body, "spec"), "volumeName"));
}

Test(vol_reconcile, an_nfs_volume_makes_its_pv_under_a_name_of_its_own_and_binds_its_claim_to_it)
{
	json_t *body = NULL, *made;

	cache(KIND_VOLUMES, nfs_volume("Retain"));
	cr_assert_eq(reconcile(), 0);
	made = json_loads(only_request(0, "POST", PVS_PATH)->body, 0, NULL);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(made, "metadata"),
							    "name")), PV_NEW);
	cr_assert_str_eq(created_claim_pv(0, &body), PV_NEW);
	json_decref(made);
	json_decref(body);
}

Test(vol_reconcile, an_old_scheme_pv_labelled_as_the_volumes_is_adopted_and_no_new_one_made)
{
	json_t *body = NULL;

	cache(KIND_PVS, pv(PV_OLD, "ml", "scratch"));
	cache(KIND_VOLUMES, nfs_volume("Retain"));
	cr_assert_eq(reconcile(), 0);
	cr_assert_eq(count_requests(0, "POST", PVS_PATH), 0);
	cr_assert_str_eq(created_claim_pv(0, &body), PV_OLD, "the claim binds the PV with the data");
	cr_assert_not_null(last_status);
	cr_assert_str_neq(json_string_value(json_object_get(last_status, "phase")), "Failed");
	json_decref(body);
}

/* Namespace ml-scratch's Volume x had cadre-ml-scratch too: it is not ml/scratch's. */
Test(vol_reconcile, an_old_scheme_pv_labelled_as_another_volumes_or_unlabelled_is_never_touched)
{
	const char *owners[][2] = { { "ml-scratch", "x" }, { NULL, NULL }, { "ml", "other" } };

	for (size_t i = 0; i < sizeof(owners) / sizeof(owners[0]); i++) {
		size_t first = httpd_request_count(server);
		json_t *body = NULL, *vol = nfs_volume("Delete");

		cache(KIND_PVS, pv(PV_OLD, owners[i][0], owners[i][1]));
		cache(KIND_VOLUMES, json_incref(vol));
		cr_assert_eq(reconcile(), 0);
		cr_assert_eq(count_requests(first, "POST", PVS_PATH), 1);
		cr_assert_str_eq(created_claim_pv(first, &body), PV_NEW);
		json_decref(body);
		/* Nor when the Volume goes with reclaimPolicy Delete. */
		being_deleted(vol);
		cache(KIND_VOLUMES, json_incref(vol));
		cr_assert_eq(reconcile(), 0);
		cr_assert_eq(count_requests(first, "DELETE", PVS_PATH "/" PV_OLD), 0);
		cr_assert_eq(count_requests(first, "PATCH", PVS_PATH "/" PV_OLD), 0);
		cr_assert_eq(count_requests(first, "PATCH", VOLUME_PATH), 1, "the finalizer goes");
		cr_assert_eq(store_remove(m.stores[KIND_VOLUMES], vol), 0);
		json_decref(vol);
	}
}

Test(vol_reconcile, a_pv_of_its_name_labelled_as_another_volumes_is_refused_in_status_and_left)
{
	const char *owners[][2] = { { "ml-prod", "data" }, { NULL, NULL } };

	for (size_t i = 0; i < sizeof(owners) / sizeof(owners[0]); i++) {
		size_t first = httpd_request_count(server);
		const json_t *ready;
		const char *msg;

		cache(KIND_PVS, pv(PV_NEW, owners[i][0], owners[i][1]));
		cache(KIND_VOLUMES, nfs_volume("Delete"));
		cr_assert_eq(reconcile(), 0);
		cr_assert_eq(count_requests(first, "POST", PVS_PATH), 0);
		cr_assert_eq(count_requests(first, "POST",
					    "/api/v1/namespaces/ml/persistentvolumeclaims"), 0);
		cr_assert_not_null(last_status);
		cr_assert_str_eq(json_string_value(json_object_get(last_status, "phase")), "Failed");
		ready = json_array_get(json_object_get(last_status, "conditions"), 0);
		cr_assert_str_eq(json_string_value(json_object_get(ready, "reason")),
				 "PersistentVolumeConflict");
		msg = json_string_value(json_object_get(ready, "message"));
		cr_assert_not_null(strstr(msg, "PersistentVolume " PV_NEW " "), "%s", msg);
		if (owners[i][0])
			cr_assert_not_null(strstr(msg, "Volume ml-prod/data's"), "%s", msg);
	}
}

Test(vol_reconcile, a_delete_nfs_volume_going_deletes_its_pv_guarded_by_uid_and_version)
{
	json_t *vol = nfs_volume("Delete");
	json_t *body, *pre;

	being_deleted(vol);
	cache(KIND_PVS, pv(PV_NEW, "ml", "scratch"));
	cache(KIND_VOLUMES, vol);
	cr_assert_eq(reconcile(), 0);
	body = json_loads(only_request(0, "DELETE", PVS_PATH "/" PV_NEW)->body, 0, NULL);
	pre = json_object_get(body, "preconditions");
	cr_assert_str_eq(json_string_value(json_object_get(pre, "uid")),
			 "9f9f9f9f-0000-4000-8000-000000000009");
	cr_assert_str_eq(json_string_value(json_object_get(pre, "resourceVersion")), "77");
	cr_assert_eq(count_requests(0, "DELETE", PVS_PATH "/" PV_OLD), 0);
	json_decref(body);
}

Test(vol_reconcile, a_delete_nfs_volume_going_deletes_the_old_scheme_pv_it_adopted)
{
	json_t *vol = nfs_volume("Delete");

	being_deleted(vol);
	cache(KIND_PVS, pv(PV_OLD, "ml", "scratch"));
	cache(KIND_VOLUMES, vol);
	cr_assert_eq(reconcile(), 0);
	cr_assert_eq(count_requests(0, "DELETE", PVS_PATH "/" PV_OLD), 1);
	cr_assert_eq(count_requests(0, "DELETE", PVS_PATH "/" PV_NEW), 0);
}

Test(vol_reconcile, a_delete_nfs_volume_going_leaves_a_pv_of_its_name_that_is_anothers)
{
	json_t *vol = nfs_volume("Delete");

	being_deleted(vol);
	cache(KIND_PVS, pv(PV_NEW, "ml-prod", "data"));
	cache(KIND_VOLUMES, vol);
	cr_assert_eq(reconcile(), 0);
	cr_assert_eq(count_requests(0, "DELETE", PVS_PATH "/" PV_NEW), 0);
	cr_assert_eq(count_requests(0, "PATCH", VOLUME_PATH), 1, "the finalizer goes");
}

/* A PV that is not a Volume's still brings back the Volume whose PV name it holds. */
Test(vol_reconcile, an_nfs_volume_is_indexed_under_its_pv_name)
{
	json_t *values = json_array(), *nfs = nfs_volume("Retain"), *pvc = volume("Retain", NULL);

	cr_assert_eq(manager_index_volume_pv(nfs, values, NULL), 0);
	cr_assert_eq(json_array_size(values), 1);
	cr_assert_str_eq(json_string_value(json_array_get(values, 0)), PV_NEW);
	json_array_clear(values);
	cr_assert_eq(manager_index_volume_pv(pvc, values, NULL), 0);
	cr_assert_eq(json_array_size(values), 0, "a k8s-pvc Volume has no PV of cadre's");
	json_decref(values);
	json_decref(nfs);
	json_decref(pvc);
}
