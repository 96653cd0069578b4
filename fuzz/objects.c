/*
 * objects.c - a TrainingJob or a Volume as the controller's caches hand it
 * over: JSON decoded (api/), defaulted and validated, then built into what
 * the controller creates (controller/build/). "kind": "Volume" picks the
 * Volume path, "kind": "Partition" the Partition path; anything else is
 * read as a TrainingJob.
 *
 * Properties: decoding never fails but with field errors; an object that
 * validates builds: its Service, entrypoint ConfigMap and pods (first and
 * last rank, in each gang mode) or its PVC (unless it adopts one) and PV,
 * every one with its name and namespace (a PV has none); a pod may wait
 * (CADRE_EAGAIN) only for an accelerator type no node has. A validated
 * object that cannot be built would be retried by the reconciler forever.
 * A Partition that validates, applied to a job that validates, leaves a job
 * that still validates and builds: the controller applies partitions to
 * every job of theirs.
 */
#include "fuzz/fuzz.h"

#include "api/fielderr.h"
#include "api/partition.h"
#include "api/trainingjob.h"
#include "api/volume.h"
#include "base/buf.h"
#include "base/err.h"
#include "controller/build/build.h"
#include "controller/options.h"

#include <stdlib.h>
#include <string.h>

#define MAX_VOLUMES 64

/*
 * What the API server and the reconciler would have set before a build: a
 * namespaced object stored there always has a namespace, never "".
 */
static int fill_meta(struct object_meta *m)
{
	if (m->namespace && !*m->namespace) {
		free(m->namespace);
		m->namespace = NULL;
	}
	if (!m->namespace && !(m->namespace = strdup("ml")))
		return CADRE_ENOMEM;
	if (!m->uid && !(m->uid = strdup("3f1e4c52-0d0b-4bde-9cf1-6f8c8f1f2f7a")))
		return CADRE_ENOMEM;
	return 0;
}

/* A PersistentVolume is cluster-scoped: the one object built without a namespace. */
static void check_built(int err, json_t *obj, const struct buf *why, const char *what)
{
	const json_t *meta = json_object_get(obj, "metadata");

	/* No node has the job's accelerator type: the job waits (build.h), no fault of its spec. */
	if (err == CADRE_EAGAIN && !strcmp(what, "pod") && !obj)
		return;
	FUZZ_CHECK(!err, "a validated object does not build its %s (%d): %s", what, err,
		   buf_str(why));
	FUZZ_CHECK(json_string_value(json_object_get(meta, "name")) &&
		   (!strcmp(what, "PV") || json_string_value(json_object_get(meta, "namespace"))),
		   "its %s has no name or namespace", what);
	json_decref(obj);
}

/*
 * A pod that builds has its shared variables too, and no name twice between
 * those (its ConfigMap's, by envFrom) and its own env: the kubelet would
 * silently prefer the pod's.
 */
static void check_env(const struct trainingjob *tj, const struct build_opts *opts,
		      const json_t *pod)
{
	const json_t *c = json_array_get(json_object_get(json_object_get(pod, "spec"),
							 "containers"), 0);
	json_t *shared = NULL, *e;
	size_t i;
	int err = build_shared_env(tj, opts, &shared, NULL);

	FUZZ_CHECK(!err && json_object_size(shared),
		   "a job whose pod builds has no shared variables (%d)", err);
	json_array_foreach(json_object_get(c, "env"), i, e)
		FUZZ_CHECK(!json_object_get(shared, json_string_value(json_object_get(e, "name"))),
			   "%s is both in the pod's env and in its ConfigMap",
			   json_string_value(json_object_get(e, "name")));
	json_decref(shared);
}

static void build_job(struct trainingjob *tj)
{
	static const char *const values[] = { "NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB" };
	const char *claims[MAX_VOLUMES];
	static const enum gang_mode modes[] = { GANG_BUILTIN, GANG_KUEUE, GANG_NONE, GANG_NATIVE };
	struct buf why;
	json_t *obj = NULL;
	int err;

	if (tj->spec.n_volumes > MAX_VOLUMES || fill_meta(&tj->meta))
		return;
	if (!tj->status.job_id && !(tj->status.job_id = strdup("482913307")))
		return;
	if (!tj->status.task_id && !(tj->status.task_id = strdup("sky-2024-05-01-llama")))
		return;
	for (size_t i = 0; i < tj->spec.n_volumes; i++)
		claims[i] = "claim";
	buf_init(&why, 1 << 16);
	err = build_service(tj, &obj, &why);
	check_built(err, obj, &why, "Service");
	obj = NULL;
	/* A valid job's DRA objects are built, or refused with a reason (docs/dra.md). */
	if (build_uses_claim_template(tj)) {
		struct build_opts dra = { .device_attribute = "productName" };

		err = build_claim_template(tj, &dra, &obj, &why);
		check_built(err, obj, &why, "ResourceClaimTemplate");
		obj = NULL;
	}
	if (tj->spec.compute_domain.set) {
		err = build_compute_domain(tj, 3, &obj, &why);
		check_built(err, obj, &why, "ComputeDomain");
		obj = NULL;
	}
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct build_opts opts = {
			.mode = modes[m], .default_image = "registry.example/default:1",
			.label_values = values, .n_label_values = 2,
			.claim_names = claims, .n_claim_names = tj->spec.n_volumes,
		};

		int last = tj->spec.num_nodes > 0 ? (int)tj->spec.num_nodes - 1 : 0;

		if (m == 0) {
			obj = NULL;
			err = build_entrypoint_configmap(tj, &opts, &obj, &why);
			check_built(err, obj, &why, "entrypoint ConfigMap");
		}
		for (int rank = 0; rank <= last; rank += last ? last : 1) {
			obj = NULL;
			err = build_pod(tj, rank, 3, &opts, &obj, &why);
			if (!err)
				check_env(tj, &opts, obj);
			check_built(err, obj, &why, "pod");
		}
	}
	buf_release(&why);
}

static void build_volume(struct volume *vol)
{
	struct buf why;
	json_t *obj = NULL;
	int err;

	if (fill_meta(&vol->meta))
		return;
	buf_init(&why, 1 << 16);
	/* A Volume with spec.claimName adopts that claim: none is built for it. */
	if (!vol->spec.claim_name) {
		err = build_pvc(vol, NULL, &obj, &why);
		check_built(err, obj, &why, "PVC");
	}
	if (vol->spec.type == VOL_TYPE_NFS) {
		obj = NULL;
		err = build_pv(vol, &obj, &why);
		check_built(err, obj, &why, "PV");
	}
	buf_release(&why);
}

/* A valid job of two ranks with H100s, to apply a partition to. */
static const char partition_job[] =
	"{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
	"\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\",\"uid\":\"u\"},"
	"\"spec\":{\"numNodes\":2,\"run\":\"x\"}}";

static void check_partition(const json_t *obj)
{
	struct field_errors errs, job_errs;
	struct partition part;
	struct trainingjob tj;
	json_t *job = json_loads(partition_job, 0, NULL);
	char why_ns[256];
	struct buf why;

	field_errors_init(&errs);
	field_errors_init(&job_errs);
	tj_init(&tj);
	buf_init(&why, 1 << 16);
	if (partition_parse(obj, &part, &errs) || field_errors_count(&errs) || !job ||
	    tj_parse(job, &tj, &job_errs))
		goto out;
	if (partition_refuses(&part, &tj.spec, (char[256]){ 0 }, 256))
		goto out;
	/* Who may submit: a refusal always says why, naming the field. */
	if (partition_forbids(&part, "ml", &tj.spec, why_ns, sizeof(why_ns)))
		FUZZ_CHECK(strstr(why_ns, "spec.allowedNamespaces") ||
			   strstr(why_ns, "maxJobPriority"), "a refusal names no field: %s", why_ns);
	FUZZ_CHECK(partition_apply(&part, &tj.spec) == 0, "partition_apply failed");
	tj_validate(&tj, &job_errs);
	field_errors_join(&job_errs, &why);
	FUZZ_CHECK(!field_errors_count(&job_errs), "a valid partition made a valid job invalid: %s",
		   buf_str(&why));
	FUZZ_CHECK(tj.spec.partition && !strcmp(tj.spec.partition, part.meta.name),
		   "the job does not name its partition");
	build_job(&tj);
out:
	buf_release(&why);
	tj_release(&tj);
	partition_release(&part);
	field_errors_release(&errs);
	field_errors_release(&job_errs);
	json_decref(job);
}

int fuzz_objects(const uint8_t *data, size_t size)
{
	json_t *obj = json_loadb((const char *)data, size, 0, NULL);
	struct field_errors errs;
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	int err;

	if (!obj)
		return 0;
	field_errors_init(&errs);
	if (kind && !strcmp(kind, "Partition")) {
		check_partition(obj);
	} else if (kind && !strcmp(kind, "Volume")) {
		struct volume vol;

		err = vol_parse(obj, &vol, &errs);
		FUZZ_CHECK(!err || field_errors_count(&errs), "vol_parse failed (%d) with no error",
			   err);
		if (!err && !vol_validate(&vol, &errs) && !field_errors_count(&errs))
			build_volume(&vol);
		vol_release(&vol);
	} else {
		struct trainingjob tj;

		err = tj_parse(obj, &tj, &errs);
		FUZZ_CHECK(!err || field_errors_count(&errs), "tj_parse failed (%d) with no error",
			   err);
		if (!err && !tj_validate(&tj, &errs) && !field_errors_count(&errs))
			build_job(&tj);
		tj_release(&tj);
	}
	field_errors_release(&errs);
	json_decref(obj);
	return 0;
}
