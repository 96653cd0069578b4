/*
 * common.c - what the benchmarks that need no cluster share (common.h).
 */
#include "bench/common.h"
#include "controller/admission/gang_pass.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/fielderr.h"
#include "api/pod_trim.h"
#include "api/trainingjob.h"
#include "controller/admission/gang.h"
#include "controller/manager/jobmemo.h"
#include "controller/admission/gang_preempt.h"
#include "controller/manager/cache_record.h"
#include "controller/manager/cache_record_dra.h"

_Noreturn void bench_die(const char *what)
{
	fprintf(stderr, "%s: %s\n", program_invocation_short_name, what);
	exit(1);
}

double bench_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct store *bench_cache_new(enum manager_kind kind)
{
	struct store_options opts = { .kind = "nodes", .trim = store_trim_bookkeeping,
				      .record = cache_record_node };
	struct store *s;
	int err = 0;

	if (kind == KIND_PODS)
		opts = (struct store_options){ .kind = "pods", .trim = pod_trim,
					       .record = cache_record_pod };
	else if (kind == KIND_OTHER_PODS)
		opts = (struct store_options){ .kind = "pods", .trim = pod_trim_summary,
					       .record = cache_record_pod };
	else if (kind == KIND_TRAININGJOBS)
		opts = (struct store_options){ .kind = "trainingjobs",
					       .trim = store_trim_bookkeeping,
					       .record = cache_record_job };
	else if (kind == KIND_PARTITIONS)
		opts = (struct store_options){ .kind = "partitions" };
	else if (kind == KIND_RESOURCESLICES)
		opts = (struct store_options){ .kind = "resourceslices", .trim = cache_trim_slice,
					       .record = cache_record_slice };
	else if (kind == KIND_RESOURCECLAIMS)
		opts = (struct store_options){ .kind = "resourceclaims", .trim = cache_trim_claim,
					       .record = cache_record_claim };
	else if (kind == KIND_DEVICECLASSES)
		opts = (struct store_options){ .kind = "deviceclasses", .trim = cache_trim_class,
					       .record = cache_record_class };
	s = store_new(&opts);
	if (s && kind == KIND_PODS)
		err = store_add_index(s, "job", pod_index_job, NULL) ||
		      store_add_index(s, "node", pod_index_node, NULL);
	if (s && kind == KIND_TRAININGJOBS)
		err = store_add_index(s, GANG_PREEMPTS_INDEX, gang_preempts_index, NULL);
	if (!s || err)
		bench_die("out of memory");
	return s;
}

void bench_put(struct store *s, json_t *obj)
{
	if (!obj || store_upsert(s, obj))
		bench_die("cannot store an object");
	json_decref(obj);
}

void bench_manager_init(struct manager *m)
{
	m->memo = jobmemo_new(5 * 60 * 1000);
	if (!m->memo)
		bench_die("out of memory");
	pthread_mutex_init(&m->admission_lock, NULL);
}

void bench_manager_free(struct manager *m)
{
	for (int k = 0; k < KIND_COUNT; k++)
		store_free(m->stores[k]);
	jobmemo_free(m->memo);
	gang_pass_free(m->pass);
	pthread_mutex_destroy(&m->admission_lock);
}

void bench_decide_runs(struct manager *m, json_t *obj, int runs, double *ms,
		       struct bench_verdict *last)
{
	const json_t *meta = json_object_get(obj, "metadata");
	struct field_errors errs;
	struct trainingjob job;
	struct tj_admission out;
	struct jobmemo_admission held = { 0 };
	char key[STORE_KEY_MAX];

	snprintf(key, sizeof(key), "%s/%s", json_string_value(json_object_get(meta, "namespace")),
		 json_string_value(json_object_get(meta, "name")));
	if (store_upsert(m->stores[KIND_TRAININGJOBS], obj))
		bench_die("cannot store the new job");
	field_errors_init(&errs);
	if (tj_parse(obj, &job, &errs))
		bench_die("the new job does not parse");
	if (m->opts->device_class_name && !job.spec.resources.device_class &&
	    !(job.spec.resources.device_class = strdup(m->opts->device_class_name)))
		bench_die("out of memory");
	for (int r = 0; r < runs; r++) {
		double t0 = bench_now_ms();

		if (gang_admit(m, &job, &out, &held))
			bench_die("gang_admit failed");
		ms[r] = bench_now_ms() - t0;
		*last = (struct bench_verdict){ out.verdict == ADMIT_YES, out.n_preempt };
		jobmemo_admission_release(&held);
		/* Decide afresh next time, not from the record of this admission. */
		jobmemo_forget(m->memo, key);
	}
	store_remove(m->stores[KIND_TRAININGJOBS], obj);
	tj_release(&job);
	field_errors_release(&errs);
}

double bench_decide(struct manager *m, json_t *obj, int runs, struct bench_verdict *last)
{
	double *ms = calloc(runs > 0 ? (size_t)runs : 1, sizeof(*ms)), best = 1e9;

	if (!ms)
		bench_die("out of memory");
	bench_decide_runs(m, obj, runs, ms, last);
	for (int r = 0; r < runs; r++)
		if (ms[r] < best)
			best = ms[r];
	free(ms);
	return best;
}

json_t *bench_tenant_pod(long i)
{
	char name[32], node[32];

	snprintf(name, sizeof(name), "tenant-%ld", i);
	snprintf(node, sizeof(node), "gpu-node-%ld", i);
	return json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:[{s:s, s:{s:{s:s}}}]}, s:{s:s}}",
		"apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace", "other",
		"uid", name, "spec", "nodeName", node, "containers", "name", "c", "resources",
		"requests", "nvidia.com/gpu", "8", "status", "phase", "Running");
}
