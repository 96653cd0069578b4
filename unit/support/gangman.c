#include "unit/support/gangman.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "api/pod_trim.h"
#include "controller/admission/gang_pass.h"
#include "controller/manager/cache_record.h"
#include "controller/manager/cache_record_dra.h"
#include "kube/store.h"

void gangman_setup(struct manager *m, struct options *opts)
{
	const struct store_options o[KIND_COUNT] = {
		[KIND_PODS] = { .kind = "pods", .trim = pod_trim, .record = cache_record_pod },
		[KIND_OTHER_PODS] = { .kind = "pods", .trim = pod_trim_summary,
				      .record = cache_record_pod },
		[KIND_TRAININGJOBS] = { .kind = "trainingjobs", .record = cache_record_job },
		[KIND_NODES] = { .kind = "nodes", .record = cache_record_node },
		[KIND_PARTITIONS] = { .kind = "partitions" },
		[KIND_RESOURCESLICES] = { .kind = "resourceslices", .trim = cache_trim_slice,
					  .record = cache_record_slice },
		[KIND_RESOURCECLAIMS] = { .kind = "resourceclaims", .trim = cache_trim_claim,
					  .record = cache_record_claim },
		[KIND_DEVICECLASSES] = { .kind = "deviceclasses", .trim = cache_trim_class,
					 .record = cache_record_class },
	};

	memset(m, 0, sizeof(*m));
	memset(opts, 0, sizeof(*opts));
	opts->accelerator_label = "nvidia.com/gpu.product";
	opts->starvation_seconds = 600;
	m->opts = opts;
	for (int k = 0; k < KIND_COUNT; k++)
		if (o[k].kind)
			cr_assert_not_null(m->stores[k] = store_new(&o[k]));
	cr_assert_eq(store_add_index(m->stores[KIND_PODS], "job", pod_index_job, NULL), 0);
	m->memo = jobmemo_new(5 * 60 * 1000);
	cr_assert_not_null(m->memo);
	pthread_mutex_init(&m->admission_lock, NULL);
}

void gangman_teardown(struct manager *m)
{
	for (int k = 0; k < KIND_COUNT; k++)
		store_free(m->stores[k]);
	jobmemo_free(m->memo);
	gang_pass_free(m->pass);
	pthread_mutex_destroy(&m->admission_lock);
}

void gangman_decide(struct manager *m, const char *name, struct gangman_decision *d)
{
	char key[64];

	memset(d, 0, sizeof(*d));
	snprintf(key, sizeof(key), "ns/%s", name);
	cr_assert_eq(store_get(m->stores[KIND_TRAININGJOBS], key, &d->obj), 0);
	tj_init(&d->job);
	field_errors_init(&d->errs);
	cr_assert_eq(tj_parse(d->obj, &d->job, &d->errs), 0);
	cr_assert_eq(partitions_apply(m, &d->job, &d->part), 0);
	cr_assert_eq(gang_admit(m, &d->job, &d->out, &d->held), 0);
}

void gangman_decided(struct gangman_decision *d)
{
	jobmemo_admission_release(&d->held);
	field_errors_release(&d->errs);
	tj_release(&d->job);
	json_decref(d->obj);
}

void gangman_upsert(struct manager *m, enum manager_kind kind, json_t *obj)
{
	cr_assert_not_null(obj);
	cr_assert_eq(store_upsert(m->stores[kind], obj), 0);
	json_decref(obj);
}
