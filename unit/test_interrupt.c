/*
 * Interrupted at every write: the TrainingJob reconciler is stopped right
 * after each of its API writes in turn (k = 1, 2, ... to the last write of
 * a start, a delete that lets a waiting gang start, a restart after a
 * failure, a suspend and resume, an array, a dependency and a preemption), then a fresh controller, with empty
 * memory, takes over from what the API server holds (docs/design.md 3.1).
 * After every pass, of the stopped controller and of the fresh one, what
 * the server holds must keep these invariants:
 *   - no pod of a job whose stored status does not admit it: a live pod is
 *     of the admitted attempt, or of one the stored status has moved past
 *     (a restart stored before its teardown), or of a job stored as
 *     Suspended or finished;
 *   - every pod of an admitted attempt is pinned to the node its rank's
 *     stored decision names, and bound there if bound at all;
 *   - no GPU promised twice: on every node, the bound pods and the
 *     admitted ranks not yet bound there fit its GPUs, and no pinned pod
 *     ever found its node full;
 * and the job converges, with restarts and infraRestarts counted exactly
 * once per failure.
 *
 * The API server is unit/support/fakeapi.h (it dies after the k-th write:
 * nothing later lands), the caches are filled from it before each pass as
 * the reflectors would, and it plays kube-scheduler and the kubelets. The
 * cluster holds exactly one gang: two nodes of 8 GPUs, gangs of 2 x 8.
 */
#include <criterion/criterion.h>

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "api/labels.h"
#include "api/slurm.h"
#include "base/err.h"
#include "controller/admission/gang_pass.h"
#include "controller/manager/manager.h"
#include "controller/manager/reconcile.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/store.h"
#include "kube/workqueue.h"
#include "unit/support/fakeapi.h"

#define NS "ml"
#define T0 1800000000L
/* Passes a run may take to converge; every scenario needs a few dozen. */
#define MAX_PASSES 200

static int64_t wall_now;

static int64_t wall(void)
{
	return wall_now;
}

/* One controller process: its client, caches and memory, and nothing that runs. */
struct ctl {
	struct options opts;
	struct kube_config *cfg;
	struct kube_http *http;
	struct manager m;
};

static void ctl_start(struct ctl *c, struct fakeapi *api)
{
	memset(c, 0, sizeof(*c));
	c->opts.gang_scheduler = GANG_BUILTIN;
	c->opts.accelerator_label = "nvidia.com/gpu.product";
	c->opts.starvation_seconds = 600;
	c->opts.workers = 1;
	cr_assert_eq(kube_config_new(fakeapi_url(api), &c->cfg), 0);
	cr_assert_eq(kube_http_new(c->cfg, NULL, &c->http), 0);
	c->m.opts = &c->opts;
	c->m.config = c->cfg;
	c->m.http = c->http;
	c->m.queue = wq_new(NULL);
	c->m.expect = expect_new(5 * 60 * 1000);
	c->m.memo = jobmemo_new(5 * 60 * 1000);
	c->m.jobids = jobids_new();
	c->m.wall_s = wall;
	pthread_mutex_init(&c->m.lock, NULL);
	pthread_mutex_init(&c->m.admission_lock, NULL);
	pthread_cond_init(&c->m.wake, NULL);
	cr_assert(c->m.queue && c->m.expect && c->m.memo && c->m.jobids);
	cr_assert_eq(manager_stores_init(&c->m), 0);
}

/* The process is gone: everything it held in memory with it. */
static void ctl_stop(struct ctl *c)
{
	for (int k = 0; k < KIND_COUNT; k++)
		store_free(c->m.stores[k]);
	wq_free(c->m.queue);
	expect_free(c->m.expect);
	jobids_free(c->m.jobids);
	jobmemo_free(c->m.memo);
	gang_pass_free(c->m.pass);
	kube_http_free(c->http);
	kube_config_free(c->cfg);
	pthread_mutex_destroy(&c->m.lock);
	pthread_mutex_destroy(&c->m.admission_lock);
	pthread_cond_destroy(&c->m.wake);
}

static const char *label_of(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"),
								 "labels"), key));
}

static const char *phase_of(const json_t *obj)
{
	return json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
}

static bool pod_ended(const json_t *pod)
{
	const char *phase = phase_of(pod);

	return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

/* What each cache's reflector would select. */
static bool selected(enum manager_kind k, const json_t *obj)
{
	switch (k) {
	case KIND_PODS:
	case KIND_SERVICES:
	case KIND_CONFIGMAPS:
		return label_of(obj, LABEL_JOB_NAME) != NULL;
	case KIND_OTHER_PODS:
		return !label_of(obj, LABEL_JOB_NAME) && !pod_ended(obj);
	default:
		return true;
	}
}

/* A relist of one cache from what the server holds now. */
static void sync_kind(struct ctl *c, struct fakeapi *api, enum manager_kind k,
		      const char *resource)
{
	json_t *list = fakeapi_list(api, resource), *obj;
	struct store_batch *b = store_batch_new(c->m.stores[k]);
	size_t i;

	cr_assert_not_null(b);
	json_array_foreach(list, i, obj)
		if (selected(k, obj))
			cr_assert_eq(store_batch_add(b, obj), 0);
	cr_assert_eq(store_batch_commit(b), 0);
	store_batch_free(b);
	json_decref(list);
}

/* One round: caches from the server, every job reconciled, the cluster moves on. */
static void pass(struct ctl *c, struct fakeapi *api)
{
	json_t *jobs, *job;
	size_t i;

	sync_kind(c, api, KIND_TRAININGJOBS, "trainingjobs");
	sync_kind(c, api, KIND_PODS, "pods");
	sync_kind(c, api, KIND_OTHER_PODS, "pods");
	sync_kind(c, api, KIND_NODES, "nodes");
	sync_kind(c, api, KIND_SERVICES, "services");
	sync_kind(c, api, KIND_CONFIGMAPS, "configmaps");
	sync_kind(c, api, KIND_PARTITIONS, "partitions");
	sync_kind(c, api, KIND_RESOURCESLICES, "resourceslices");
	sync_kind(c, api, KIND_RESOURCECLAIMS, "resourceclaims");
	sync_kind(c, api, KIND_DEVICECLASSES, "deviceclasses");
	jobs = fakeapi_list(api, "trainingjobs");
	json_array_foreach(jobs, i, job) {
		const json_t *meta = json_object_get(job, "metadata");

		tj_reconcile(&c->m, json_string_value(json_object_get(meta, "namespace")),
			     json_string_value(json_object_get(meta, "name")));
	}
	json_decref(jobs);
	fakeapi_schedule(api);
	wall_now += 3;
}

static int int_of(const json_t *obj, const char *key)
{
	return (int)json_integer_value(json_object_get(obj, key));
}

static int attempt_of_status(const json_t *st)
{
	return int_of(st, "restarts") + int_of(st, "infraRestarts") + int_of(st, "requeues") +
	       int_of(st, "preemptions");
}

static bool admitted(const json_t *st)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(st, "conditions"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "type")), "Admitted"))
			return !strcmp(json_string_value(json_object_get(c, "status")), "True");
	return false;
}

/* The stored decision's node for rank, or NULL. */
static const char *decided(const json_t *st, int rank)
{
	const json_t *n;
	size_t i;

	json_array_foreach(json_object_get(st, "nodes"), i, n)
		if (int_of(n, "rank") == rank)
			return json_string_value(json_object_get(n, "node"));
	return NULL;
}

static const char *pinned(const json_t *pod)
{
	const json_t *terms = json_object_get(json_object_get(json_object_get(json_object_get(
		json_object_get(pod, "spec"), "affinity"), "nodeAffinity"),
		"requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
	const json_t *f;
	size_t i;

	json_array_foreach(json_object_get(json_array_get(terms, 0), "matchFields"), i, f)
		if (!strcmp(json_string_value(json_object_get(f, "key")), "metadata.name"))
			return json_string_value(json_array_get(json_object_get(f, "values"), 0));
	return NULL;
}

static json_t *job_named(json_t *jobs, const char *name)
{
	json_t *job;
	size_t i;

	json_array_foreach(jobs, i, job)
		if (!strcmp(json_string_value(json_object_get(json_object_get(job, "metadata"),
							      "name")), name))
			return job;
	return NULL;
}

static int num(const char *s)
{
	return s ? (int)strtol(s, NULL, 10) : -1;
}

/* GPUs a node still has for admitted ranks: allocatable less the bound pods. */
/* A node's GPUs: a device plugin's in allocatable, else the devices its ResourceSlices publish. */
static long node_gpus(const json_t *node, const json_t *slices)
{
	const char *plugin = json_string_value(json_object_get(json_object_get(json_object_get(
		node, "status"), "allocatable"), "nvidia.com/gpu"));
	const char *name = json_string_value(json_object_get(json_object_get(node, "metadata"),
							     "name"));
	const json_t *slice;
	long n = 0;
	size_t i;

	if (plugin)
		return strtol(plugin, NULL, 10);
	json_array_foreach(slices, i, slice) {
		const json_t *spec = json_object_get(slice, "spec");
		const char *on = json_string_value(json_object_get(spec, "nodeName"));

		if (on && name && !strcmp(on, name))
			n += (long)json_array_size(json_object_get(spec, "devices"));
	}
	return n;
}

/*
 * An array job never has more elements that have not ended than its
 * throttle ("%N") allows: the decision to start one is stored first.
 */
static void check_array_throttle(json_t *jobs, const char *when)
{
	json_t *job, *el;
	size_t i, j;

	json_array_foreach(jobs, i, job) {
		const char *array = json_string_value(json_object_get(json_object_get(job, "spec"),
								      "array"));
		const char *name = json_string_value(json_object_get(json_object_get(job,
								"metadata"), "name"));
		struct slurm_array a;
		size_t live = 0;

		if (!array || slurm_array_parse(array, 1001, &a, NULL, 0))
			continue;
		json_array_foreach(jobs, j, el) {
			const char *of = label_of(el, LABEL_ARRAY_JOB);
			const char *phase = phase_of(el);

			live += of && !strcmp(of, name) &&
				!(phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")));
		}
		if (a.max_running)
			cr_assert_leq(live, (size_t)a.max_running, "%s: array %s has %zu elements "
				      "not ended, at most %d may be", when, name, live, a.max_running);
		slurm_array_release(&a);
	}
}

/* A job with an afterok dependency is never admitted before the job it names succeeded. */
static void check_dependencies(json_t *jobs, const char *when)
{
	json_t *job, *item, *ref, *other;
	size_t i, j, k, l;

	json_array_foreach(jobs, i, job) {
		const json_t *st = json_object_get(job, "status");

		if (!json_object_get(st, "admittedTime"))
			continue;
		json_array_foreach(json_object_get(json_object_get(json_object_get(job, "spec"),
				   "dependency"), "items"), j, item) {
			if (strcmp(json_string_value(json_object_get(item, "type")), "afterok"))
				continue;
			json_array_foreach(json_object_get(item, "jobs"), k, ref)
				json_array_foreach(jobs, l, other) {
					const char *on = json_string_value(json_object_get(
						json_object_get(other, "metadata"), "name"));

					if (strcmp(on, json_string_value(ref)))
						continue;
					cr_assert(phase_of(other) && !strcmp(phase_of(other),
						  "Succeeded"), "%s: %s was admitted while %s, which "
						  "it depends on, is %s", when, json_string_value(
						  json_object_get(json_object_get(job, "metadata"),
						  "name")), on, phase_of(other));
				}
		}
	}
}

/* The invariants of the header, on what the server holds now. */
static void check_invariants(struct fakeapi *api, const char *when)
{
	json_t *jobs = fakeapi_list(api, "trainingjobs"), *pods = fakeapi_list(api, "pods");
	json_t *nodes = fakeapi_list(api, "nodes"), *pod, *job, *node;
	json_t *slices = fakeapi_list(api, "resourceslices");
	size_t i, j;

	json_array_foreach(pods, i, pod) {
		const char *name = json_string_value(json_object_get(json_object_get(pod, "metadata"),
								     "name"));
		const json_t *st;
		int attempt = num(label_of(pod, LABEL_RESTART_ATTEMPT));
		int rank = num(label_of(pod, LABEL_NODE_RANK));
		const char *phase, *bound;
		bool ok;

		job = job_named(jobs, label_of(pod, LABEL_JOB_NAME));
		cr_assert_not_null(job, "%s: pod %s outlived its job", when, name);
		st = json_object_get(job, "status");
		phase = phase_of(job) ? phase_of(job) : "";
		ok = (attempt == attempt_of_status(st) && admitted(st)) ||
		     attempt < attempt_of_status(st) || !strcmp(phase, "Suspended") ||
		     !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
		cr_assert(ok, "%s: pod %s of attempt %d exists, but the stored status (phase %s, "
			  "attempt %d, Admitted %d) does not admit it", when, name, attempt, phase,
			  attempt_of_status(st), admitted(st));
		if (attempt != attempt_of_status(st) || !admitted(st))
			continue;
		cr_assert_not_null(decided(st, rank), "%s: rank %d has no stored node", when, rank);
		cr_assert_not_null(pinned(pod), "%s: pod %s is not pinned", when, name);
		cr_assert_str_eq(pinned(pod), decided(st, rank), "%s: pod %s pinned elsewhere than "
				 "its rank's stored node", when, name);
		bound = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
		if (bound)
			cr_assert_str_eq(bound, decided(st, rank), "%s: %s", when, name);
	}
	/* No GPU promised twice: bound pods, and admitted ranks not bound yet, per node. */
	json_array_foreach(nodes, i, node) {
		const char *nn = json_string_value(json_object_get(json_object_get(node, "metadata"),
								   "name"));
		long promised = 0;

		json_array_foreach(pods, j, pod) {
			const char *on = json_string_value(json_object_get(json_object_get(pod, "spec"),
									   "nodeName"));

			if (on && !strcmp(on, nn) && !pod_ended(pod))
				promised += 8;
		}
		json_array_foreach(jobs, j, job) {
			const json_t *st = json_object_get(job, "status");
			int n = int_of(json_object_get(job, "spec"), "numNodes");
			/* In place, a rank's pod of an earlier attempt is the one it goes on in. */
			const json_t *ip = json_object_get(st, "inPlaceRestart");
			bool in_place = ip && int_of(ip, "attempt") == attempt_of_status(st);

			if (!admitted(st))
				continue;
			for (int r = 0; r < n; r++) {
				bool placed = false;
				size_t k;

				if (!decided(st, r) || strcmp(decided(st, r), nn))
					continue;
				json_array_foreach(pods, k, pod)
					placed |= (num(label_of(pod, LABEL_RESTART_ATTEMPT)) ==
						   attempt_of_status(st) || in_place) &&
						  num(label_of(pod, LABEL_NODE_RANK)) == r &&
						  !strcmp(label_of(pod, LABEL_JOB_NAME),
							  json_string_value(json_object_get(
							  json_object_get(job, "metadata"), "name"))) &&
						  json_object_get(json_object_get(pod, "spec"),
								  "nodeName");
				if (!placed)
					promised += 8;
			}
		}
		cr_assert_leq(promised, node_gpus(node, slices), "%s: node %s has %ld GPUs promised, "
			      "%ld exist", when, nn, promised, node_gpus(node, slices));
	}
	cr_assert_eq(fakeapi_overbooked(api), 0, "%s: a pinned pod found its node full", when);
	check_array_throttle(jobs, when);
	check_dependencies(jobs, when);
	json_decref(jobs);
	json_decref(pods);
	json_decref(nodes);
	json_decref(slices);
}

/* --- the cluster, the jobs and the scenarios --- */

static void add_node(struct fakeapi *api, const char *name)
{
	cr_assert_eq(fakeapi_add(api, "nodes", json_pack(
		"{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:s, s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
		"apiVersion", "v1", "kind", "Node",
		"metadata", "name", name, "labels", "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3",
		"status", "allocatable", "cpu", "64", "memory", "512Gi", "pods", "110",
		"nvidia.com/gpu", "8", "conditions", "type", "Ready", "status", "True"), T0), 0);
}

static void add_job(struct fakeapi *api, const char *name, long created_s)
{
	cr_assert_eq(fakeapi_add(api, "trainingjobs", json_pack(
		"{s:s, s:s, s:{s:s, s:s}, s:{s:i, s:{s:s}, s:s, s:s, s:i}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
		"metadata", "name", name, "namespace", NS,
		"spec", "numNodes", 2, "resources", "accelerators", "H100:8", "image", "img",
		"run", "train", "maxRestarts", 2), created_s), 0);
}

/* A cluster that holds exactly one gang. */
static void two_nodes(struct fakeapi *api)
{
	add_node(api, "n0");
	add_node(api, "n1");
}

static json_t *stored_job(struct fakeapi *api, const char *name)
{
	return fakeapi_get(api, "trainingjobs", NS, name);
}

/* The job's phase is phase, with every pod of its attempt Running (or none, when want_pods 0). */
static bool job_is(struct fakeapi *api, const char *name, const char *phase, int want_pods)
{
	json_t *job = stored_job(api, name), *pods = fakeapi_list(api, "pods"), *pod;
	int running = 0, any = 0;
	bool ok;
	size_t i;

	json_array_foreach(pods, i, pod) {
		if (strcmp(label_of(pod, LABEL_JOB_NAME), name))
			continue;
		any++;
		running += phase_of(pod) && !strcmp(phase_of(pod), "Running") && job &&
			   num(label_of(pod, LABEL_RESTART_ATTEMPT)) ==
			   attempt_of_status(json_object_get(job, "status"));
	}
	ok = job && phase_of(job) && !strcmp(phase_of(job), phase) && running == want_pods &&
	     any == want_pods;
	json_decref(job);
	json_decref(pods);
	return ok;
}

struct step {
	const char *what;
	bool (*done)(struct fakeapi *api);
	void (*then)(struct fakeapi *api);   /* a user's act once done; may be NULL */
};

struct scenario {
	const char *name;
	void (*setup)(struct fakeapi *api);
	const struct step *steps;
	int n_steps;
	void (*check)(struct fakeapi *api);  /* at the end */
};

/* Start and delete: a starts, b waits (the cluster holds one gang); a deleted, b starts. */
static void setup_two_jobs(struct fakeapi *api)
{
	two_nodes(api);
	add_job(api, "a", T0);
	add_job(api, "b", T0 + 1);
}

static bool a_running_b_queued(struct fakeapi *api)
{
	return job_is(api, "a", "Running", 2) && job_is(api, "b", "Queued", 0);
}

static void delete_a(struct fakeapi *api)
{
	cr_assert_eq(fakeapi_delete_job(api, NS, "a"), 0);
}

static bool b_running(struct fakeapi *api)
{
	return job_is(api, "b", "Running", 2);
}

static void counters_are(struct fakeapi *api, const char *name, int restarts, int infra)
{
	json_t *job = stored_job(api, name);
	const json_t *st = json_object_get(job, "status");

	cr_assert_eq(int_of(st, "restarts"), restarts, "%s: restarts", name);
	cr_assert_eq(int_of(st, "infraRestarts"), infra, "%s: infraRestarts", name);
	json_decref(job);
}

static void check_b_clean(struct fakeapi *api)
{
	counters_are(api, "b", 0, 0);
}

static const struct step start_steps[] = {
	{ "a Running, b Queued", a_running_b_queued, delete_a },
	{ "b Running", b_running, NULL },
};

/* Restart: rank 1 exits 3; the gang restarts once, counted once, as the user's failure. */
static void setup_one_job(struct fakeapi *api)
{
	two_nodes(api);
	add_job(api, "a", T0);
}

static bool a_running(struct fakeapi *api)
{
	return job_is(api, "a", "Running", 2);
}

static void fail_rank_1(struct fakeapi *api)
{
	cr_assert_eq(fakeapi_fail_pod(api, NS, "a-1", 3), 0);
}

static bool a_running_again(struct fakeapi *api)
{
	json_t *job = stored_job(api, "a");
	bool again = job && attempt_of_status(json_object_get(job, "status")) >= 1;

	json_decref(job);
	return again && job_is(api, "a", "Running", 2);
}

static void check_one_user_restart(struct fakeapi *api)
{
	json_t *job = stored_job(api, "a");
	const json_t *f = json_object_get(json_object_get(job, "status"), "lastFailure");

	counters_are(api, "a", 1, 0);
	cr_assert_eq(int_of(f, "exitCode"), 3);
	cr_assert_eq(int_of(f, "rank"), 1);
	json_decref(job);
}

static const struct step restart_steps[] = {
	{ "a Running", a_running, fail_rank_1 },
	{ "a Running again", a_running_again, NULL },
};

/* Suspend and resume: the gang goes, and comes back, with nothing counted. */
static void suspend_a(struct fakeapi *api)
{
	cr_assert_eq(fakeapi_set_suspend(api, NS, "a", true), 0);
}

static bool a_suspended(struct fakeapi *api)
{
	return job_is(api, "a", "Suspended", 0);
}

static void resume_a(struct fakeapi *api)
{
	cr_assert_eq(fakeapi_set_suspend(api, NS, "a", false), 0);
}

static void check_a_clean(struct fakeapi *api)
{
	counters_are(api, "a", 0, 0);
}

static const struct step suspend_steps[] = {
	{ "a Running", a_running, suspend_a },
	{ "a Suspended", a_suspended, resume_a },
	{ "a Running again", a_running, NULL },
};

/* An array of three whole-node elements, one at a time, on a cluster that holds two. */
static void setup_array(struct fakeapi *api)
{
	two_nodes(api);
	cr_assert_eq(fakeapi_add(api, "trainingjobs", json_pack(
		"{s:s, s:s, s:{s:s, s:s}, s:{s:i, s:{s:s}, s:s, s:s, s:s}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
		"metadata", "name", "sweep", "namespace", NS,
		"spec", "numNodes", 1, "resources", "accelerators", "H100:8", "image", "img",
		"run", "train", "array", "0-2%1"), T0), 0);
}

static bool element_running(struct fakeapi *api, const char *element)
{
	return job_is(api, element, "Running", 1);
}

static bool e0_running(struct fakeapi *api) { return element_running(api, "sweep-0"); }
static bool e1_running(struct fakeapi *api) { return element_running(api, "sweep-1"); }
static bool e2_running(struct fakeapi *api) { return element_running(api, "sweep-2"); }
static void e0_done(struct fakeapi *api) { cr_assert_eq(fakeapi_succeed_pod(api, NS, "sweep-0-0"), 0); }
static void e1_done(struct fakeapi *api) { cr_assert_eq(fakeapi_succeed_pod(api, NS, "sweep-1-0"), 0); }
static void e2_done(struct fakeapi *api) { cr_assert_eq(fakeapi_succeed_pod(api, NS, "sweep-2-0"), 0); }

static bool sweep_succeeded(struct fakeapi *api)
{
	json_t *job = stored_job(api, "sweep");
	bool ok = job && phase_of(job) && !strcmp(phase_of(job), "Succeeded");

	json_decref(job);
	return ok;
}

static void check_sweep(struct fakeapi *api)
{
	json_t *job = stored_job(api, "sweep");
	const json_t *a = json_object_get(json_object_get(job, "status"), "array");

	cr_assert_str_eq(json_string_value(json_object_get(a, "started")), "0-2");
	cr_assert_str_eq(json_string_value(json_object_get(a, "succeeded")), "0-2");
	json_decref(job);
}

static const struct step array_steps[] = {
	{ "sweep-0 Running", e0_running, e0_done },
	{ "sweep-1 Running", e1_running, e1_done },
	{ "sweep-2 Running", e2_running, e2_done },
	{ "sweep Succeeded", sweep_succeeded, NULL },
};

/*
 * A dependency: b (afterok:a) waits while a runs, though a third node has
 * room for it, and starts once a succeeded.
 */
static void setup_dependency(struct fakeapi *api)
{
	two_nodes(api);
	add_node(api, "n2");
	add_job(api, "a", T0);
	cr_assert_eq(fakeapi_add(api, "trainingjobs", json_pack(
		"{s:s, s:s, s:{s:s, s:s}, s:{s:i, s:{s:s}, s:s, s:s, s:{s:[{s:s, s:[s]}]}}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
		"metadata", "name", "b", "namespace", NS,
		"spec", "numNodes", 1, "resources", "accelerators", "H100:8", "image", "img",
		"run", "train", "dependency", "items", "type", "afterok", "jobs", "a"), T0 + 1), 0);
}

static bool a_running_b_waiting(struct fakeapi *api)
{
	return job_is(api, "a", "Running", 2) && job_is(api, "b", "Queued", 0);
}

static void a_succeeds(struct fakeapi *api)
{
	cr_assert_eq(fakeapi_succeed_pod(api, NS, "a-0"), 0);
	cr_assert_eq(fakeapi_succeed_pod(api, NS, "a-1"), 0);
}

static bool b_running_alone(struct fakeapi *api)
{
	return job_is(api, "b", "Running", 1);
}

static void check_b_met(struct fakeapi *api)
{
	json_t *job = stored_job(api, "b");
	const json_t *dep = json_object_get(json_object_get(job, "status"), "dependency");

	cr_assert(json_is_true(json_object_get(dep, "met")));
	json_decref(job);
}

static const struct step dependency_steps[] = {
	{ "a Running, b waiting for it", a_running_b_waiting, a_succeeds },
	{ "b Running", b_running_alone, NULL },
};

/*
 * A preemption (docs/design.md 3.5): low (scavenger, tier 0, Requeue) runs
 * on the whole cluster; high (urgent, tier 10) arrives, low is preempted
 * and queued again, high runs; high deleted, low runs again. Stopped after
 * any write, the same preemption is finished, never a second one.
 */
static void add_partition(struct fakeapi *api, const char *name, int tier, const char *mode)
{
	cr_assert_eq(fakeapi_add(api, "partitions", json_pack(
		"{s:s, s:s, s:{s:s}, s:{s:i, s:s}}", "apiVersion", "cadre.dev/v1alpha1",
		"kind", "Partition", "metadata", "name", name,
		"spec", "priorityTier", tier, "preemptMode", mode), T0), 0);
}

static void add_job_in(struct fakeapi *api, const char *name, const char *partition,
		       long created_s)
{
	cr_assert_eq(fakeapi_add(api, "trainingjobs", json_pack(
		"{s:s, s:s, s:{s:s, s:s}, s:{s:i, s:{s:s}, s:s, s:s, s:s}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
		"metadata", "name", name, "namespace", NS,
		"spec", "numNodes", 2, "resources", "accelerators", "H100:8", "image", "img",
		"run", "train", "partition", partition), created_s), 0);
}

static void setup_preemption(struct fakeapi *api)
{
	two_nodes(api);
	add_partition(api, "scavenger", 0, "Requeue");
	add_partition(api, "urgent", 10, "Off");
	add_job_in(api, "low", "scavenger", T0);
}

static bool low_running(struct fakeapi *api)
{
	return job_is(api, "low", "Running", 2);
}

static void submit_high(struct fakeapi *api)
{
	add_job_in(api, "high", "urgent", T0 + 5);
}

static bool high_running_low_queued(struct fakeapi *api)
{
	return job_is(api, "high", "Running", 2) && job_is(api, "low", "Queued", 0);
}

static void delete_high(struct fakeapi *api)
{
	cr_assert_eq(fakeapi_delete_job(api, NS, "high"), 0);
}

static void check_one_preemption(struct fakeapi *api)
{
	json_t *job = stored_job(api, "low");
	const json_t *st = json_object_get(job, "status");
	const json_t *pre = json_object_get(st, "preemption");

	counters_are(api, "low", 0, 0);
	cr_assert_eq(int_of(st, "preemptions"), 1, "preempted once, never twice");
	cr_assert_eq(int_of(st, "requeues"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(pre, "preemptor")), NS "/high");
	cr_assert_eq(int_of(pre, "attempt"), 0);
	json_decref(job);
}

static const struct step preemption_steps[] = {
	{ "low Running", low_running, submit_high },
	{ "high Running, low Queued again", high_running_low_queued, delete_high },
	{ "low Running again", low_running, NULL },
};

/*
 * A restart of a gang whose GPUs come through DRA (docs/dra.md): nodes
 * without nvidia.com/gpu, each a ResourceSlice of 8; the job's claim
 * template is made once, before its first pod, and stays the job's.
 */
static void setup_dra(struct fakeapi *api)
{
	for (int n = 0; n < 2; n++) {
		char name[8];
		json_t *devices = json_array();

		snprintf(name, sizeof(name), "d%d", n);
		cr_assert_eq(fakeapi_add(api, "nodes", json_pack(
			"{s:s, s:s, s:{s:s}, s:{s:{s:s, s:s, s:s}, s:[{s:s, s:s}]}}",
			"apiVersion", "v1", "kind", "Node", "metadata", "name", name,
			"status", "allocatable", "cpu", "64", "memory", "512Gi", "pods", "110",
			"conditions", "type", "Ready", "status", "True"), T0), 0);
		for (int d = 0; d < 8; d++) {
			char dev[8];

			snprintf(dev, sizeof(dev), "gpu-%d", d);
			json_array_append_new(devices, json_pack(
				"{s:s, s:{s:{s:s}, s:{s:s}}}", "name", dev, "attributes",
				"type", "string", "gpu", "productName", "string",
				"NVIDIA H100 80GB HBM3"));
		}
		cr_assert_eq(fakeapi_add(api, "resourceslices", json_pack(
			"{s:s, s:s, s:{s:s+}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}",
			"apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice",
			"metadata", "name", name, "-gpus",
			"spec", "driver", "gpu.nvidia.com", "nodeName", name,
			"pool", "name", name, "generation", 1, "resourceSliceCount", 1,
			"devices", devices), T0), 0);
	}
	cr_assert_eq(fakeapi_add(api, "deviceclasses", json_pack(
		"{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1",
		"kind", "DeviceClass", "metadata", "name", "gpu.nvidia.com",
		"spec", "selectors", "cel", "expression", "device.driver == 'gpu.nvidia.com'"),
		T0), 0);
	cr_assert_eq(fakeapi_add(api, "partitions", json_pack(
		"{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "cadre.dev/v1alpha1",
		"kind", "Partition", "metadata", "name", "dra",
		"spec", "deviceClassName", "gpu.nvidia.com"), T0), 0);
	cr_assert_eq(fakeapi_add(api, "trainingjobs", json_pack(
		"{s:s, s:s, s:{s:s, s:s}, s:{s:i, s:{s:s}, s:s, s:s, s:s, s:i}}",
		"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
		"metadata", "name", "a", "namespace", NS,
		"spec", "numNodes", 2, "resources", "accelerators", "H100:8", "image", "img",
		"run", "train", "partition", "dra", "maxRestarts", 2), T0), 0);
}

static void check_dra_restart(struct fakeapi *api)
{
	json_t *tmpl = fakeapi_get(api, "resourceclaimtemplates", NS, "a-accelerators");
	json_t *pods = fakeapi_list(api, "pods"), *pod;
	json_t *all = fakeapi_list(api, "resourceclaimtemplates");
	size_t i;

	check_one_user_restart(api);
	cr_assert_not_null(tmpl, "the job's claim template exists");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(
		json_object_get(tmpl, "metadata"), "ownerReferences"), 0), "name")), "a");
	cr_assert_eq(json_array_size(all), 1, "made once, whatever stopped");
	json_array_foreach(pods, i, pod)
		cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(
			json_object_get(pod, "spec"), "resourceClaims"), 0),
			"resourceClaimTemplateName")), "a-accelerators");
	json_decref(pods);
	json_decref(all);
	json_decref(tmpl);
}

/*
 * spec.restartStrategy InPlace (docs/failures.md): rank 1's run fails and the
 * kubelet restarts it in its pod; then rank 1's pod is deleted by hand. Each
 * restart is counted once, every pod that can stay stays (its uid), and only
 * the deleted rank gets a new pod.
 */
static char uid_before[2][64];

static void setup_one_job_in_place(struct fakeapi *api)
{
	json_t *job;

	two_nodes(api);
	add_job(api, "a", T0);
	job = stored_job(api, "a");
	json_object_set_new(json_object_get(job, "spec"), "restartStrategy",
			    json_string("InPlace"));
	cr_assert_eq(fakeapi_delete_job(api, NS, "a"), 0);
	cr_assert_eq(fakeapi_add(api, "trainingjobs", job, T0), 0);
}

static const char *uid_of(struct fakeapi *api, const char *pod_name, char out[64])
{
	json_t *pod = fakeapi_get(api, "pods", NS, pod_name);

	snprintf(out, 64, "%s", pod ? json_string_value(json_object_get(json_object_get(pod,
		 "metadata"), "uid")) : "");
	json_decref(pod);
	return out;
}

static void keep_uids(struct fakeapi *api)
{
	uid_of(api, "a-0", uid_before[0]);
	uid_of(api, "a-1", uid_before[1]);
}

static void fail_rank_1_in_place(struct fakeapi *api)
{
	keep_uids(api);
	cr_assert_eq(fakeapi_fail_pod_in_place(api, NS, "a-1", 3), 0);
}

static void delete_rank_1(struct fakeapi *api)
{
	keep_uids(api);
	cr_assert_eq(fakeapi_delete_pod(api, NS, "a-1"), 0);
}

static bool a_running_attempt(struct fakeapi *api, int attempt)
{
	json_t *job = stored_job(api, "a");
	bool there = job && attempt_of_status(json_object_get(job, "status")) == attempt;

	json_decref(job);
	return there && job_is(api, "a", "Running", 2);
}

static bool a_running_1(struct fakeapi *api) { return a_running_attempt(api, 1); }
static bool a_running_2(struct fakeapi *api) { return a_running_attempt(api, 2); }

static void check_in_place(struct fakeapi *api)
{
	json_t *job = stored_job(api, "a");
	const json_t *st = json_object_get(job, "status");
	char uid[64];

	/* The user's failure, then the deleted pod: one restart of each kind. */
	counters_are(api, "a", 1, 1);
	cr_assert_eq(int_of(json_object_get(st, "inPlaceRestart"), "attempt"), 2);
	/* The second restart kept rank 0's pod and made rank 1's again. */
	cr_assert_str_eq(uid_of(api, "a-0", uid), uid_before[0]);
	cr_assert_str_neq(uid_of(api, "a-1", uid), uid_before[1]);
	json_decref(job);
}

static const struct step in_place_steps[] = {
	{ "a Running", a_running, fail_rank_1_in_place },
	{ "a Running attempt 1 in the same pods", a_running_1, delete_rank_1 },
	{ "a Running attempt 2, rank 1 in a new pod", a_running_2, NULL },
};

/*
 * InPlace, rank 1's node is lost (its pods with it): rank 1 is placed again
 * on the free node and made there, while rank 0 keeps its pod.
 */
static char lost_node[64];

static void setup_one_job_in_place_three_nodes(struct fakeapi *api)
{
	setup_one_job_in_place(api);
	add_node(api, "n2");
}

static void lose_rank_1s_node(struct fakeapi *api)
{
	json_t *pod = fakeapi_get(api, "pods", NS, "a-1");

	keep_uids(api);
	snprintf(lost_node, sizeof(lost_node), "%s", json_string_value(json_object_get(
		 json_object_get(pod, "spec"), "nodeName")));
	json_decref(pod);
	cr_assert_eq(fakeapi_lose_node(api, lost_node), 0);
}

static bool a_running_1_elsewhere(struct fakeapi *api)
{
	json_t *pod = fakeapi_get(api, "pods", NS, "a-1");
	const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"),
							     "nodeName"));
	bool elsewhere = node && strcmp(node, lost_node);

	json_decref(pod);
	return elsewhere && a_running_1(api);
}

static void check_placed_again(struct fakeapi *api)
{
	json_t *job = stored_job(api, "a");
	const json_t *st = json_object_get(job, "status");
	char uid[64];

	counters_are(api, "a", 0, 1);
	cr_assert_eq(int_of(json_object_get(st, "inPlaceRestart"), "attempt"), 1);
	cr_assert_str_eq(uid_of(api, "a-0", uid), uid_before[0], "rank 0 kept its pod");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(st,
			 "excludedNodes"), 0), "node")), lost_node);
	json_decref(job);
}

static const struct step node_lost_steps[] = {
	{ "a Running", a_running, lose_rank_1s_node },
	{ "a Running attempt 1, rank 1 on another node", a_running_1_elsewhere, NULL },
};

static const struct scenario scenarios[] = {
	{ "start, then delete", setup_two_jobs, start_steps, 2, check_b_clean },
	{ "restart", setup_one_job, restart_steps, 2, check_one_user_restart },
	{ "suspend and resume", setup_one_job, suspend_steps, 3, check_a_clean },
	{ "an array, one element at a time", setup_array, array_steps, 4, check_sweep },
	{ "an afterok dependency", setup_dependency, dependency_steps, 2, check_b_met },
	{ "a preemption by a higher tier", setup_preemption, preemption_steps, 3,
	  check_one_preemption },
	{ "a restart of a gang of DRA devices", setup_dra, restart_steps, 2, check_dra_restart },
	{ "an in-place restart, then a partial one", setup_one_job_in_place, in_place_steps, 3,
	  check_in_place },
	{ "an in-place restart that places a rank again", setup_one_job_in_place_three_nodes,
	  node_lost_steps, 2, check_placed_again },
};

/*
 * Run passes from step *step until every step is done or stop() says so
 * (the process died); each step's act follows its completion. The
 * invariants are checked after every pass. Returns the passes run.
 */
static int run(struct ctl *c, struct fakeapi *api, const struct scenario *s, int *step,
	       bool (*stop)(struct fakeapi *), const char *when)
{
	int passes = 0;

	while (*step < s->n_steps && passes < MAX_PASSES && !(stop && stop(api))) {
		pass(c, api);
		passes++;
		check_invariants(api, when);
		if (!(stop && stop(api)) && s->steps[*step].done(api)) {
			if (s->steps[*step].then)
				s->steps[*step].then(api);
			(*step)++;
		}
	}
	return passes;
}

/* The writes of a whole scenario when nothing stops it. */
static int writes_uninterrupted(const struct scenario *s)
{
	struct fakeapi *api;
	struct ctl c;
	int step = 0, writes;

	wall_now = T0 + 10;
	cr_assert_eq(fakeapi_new(&api), 0);
	s->setup(api);
	ctl_start(&c, api);
	run(&c, api, s, &step, NULL, s->name);
	cr_assert_eq(step, s->n_steps, "%s: stuck before \"%s\"", s->name,
		     s->steps[step < s->n_steps ? step : 0].what);
	s->check(api);
	writes = fakeapi_writes(api);
	ctl_stop(&c);
	fakeapi_free(api);
	return writes;
}

/* Stopped right after write k, then a fresh controller from what the server holds. */
static void interrupted_at(const struct scenario *s, int k)
{
	struct fakeapi *api;
	struct ctl c;
	char when[128];
	int step = 0;

	wall_now = T0 + 10;
	cr_assert_eq(fakeapi_new(&api), 0);
	s->setup(api);
	ctl_start(&c, api);
	fakeapi_crash_after(api, k);
	snprintf(when, sizeof(when), "%s, stopped after write %d", s->name, k);
	run(&c, api, s, &step, fakeapi_crashed, when);
	cr_assert(fakeapi_crashed(api), "%s: the run ended before write %d", s->name, k);
	ctl_stop(&c);
	fakeapi_revive(api);
	check_invariants(api, when);

	snprintf(when, sizeof(when), "%s, taken over after write %d", s->name, k);
	ctl_start(&c, api);
	run(&c, api, s, &step, NULL, when);
	cr_assert_eq(step, s->n_steps, "%s: a fresh controller never got past \"%s\"", when,
		     s->steps[step < s->n_steps ? step : 0].what);
	s->check(api);
	ctl_stop(&c);
	fakeapi_free(api);
}

Test(interrupt, every_write_of_a_start_a_delete_a_restart_and_a_suspend_can_be_the_last)
{
	int total = 0;

	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		const struct scenario *s = &scenarios[i];
		int writes = writes_uninterrupted(s);

		cr_assert_gt(writes, 3, "%s: %d writes", s->name, writes);
		for (int k = 1; k <= writes; k++)
			interrupted_at(s, k);
		cr_log_info("interruption: %s: %d writes, stopped after each, every invariant held",
			    s->name, writes);
		fprintf(stderr, "interruption: %s: %d writes, stopped after each; every invariant "
			"held\n", s->name, writes);
		total += writes;
	}
	fprintf(stderr, "interruption: %d stops in all, every invariant held after each\n", total);
}
