#include <criterion/criterion.h>

#include <jansson.h>

#include "api/decode.h"
#include "api/fielderr.h"
#include "api/volume.h"
#include "base/buf.h"
#include "base/err.h"

#define FIXTURE(name) CADRE_SOURCE_DIR "/unit/testdata/api/" name

static json_t *load_fixture(const char *path)
{
	json_error_t error;
	json_t *json = json_load_file(path, 0, &error);

	cr_assert_not_null(json, "%s:%d: %s", path, error.line, error.text);
	return json;
}

/* A Volume named "ckpt" with the given spec. */
static json_t *volume_with_spec(const char *spec)
{
	json_error_t error;
	json_t *json = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "cadre.dev/v1alpha1",
				 "kind", "Volume", "metadata", "name", "ckpt");
	json_t *s = json_loads(spec, 0, &error);

	cr_assert_not_null(s, "%s: %s", spec, error.text);
	json_object_set_new(json, "spec", s);
	return json;
}

static void assert_problem(const char *spec, const char *path, const char *message)
{
	struct volume vol;
	struct field_errors errs;
	json_t *json = volume_with_spec(spec);
	const struct field_error *e;
	struct buf all;

	field_errors_init(&errs);
	buf_init(&all, 1 << 16);
	vol_parse(json, &vol, &errs);
	vol_validate(&vol, &errs);
	field_errors_join(&errs, &all);
	e = field_errors_find(&errs, path);
	cr_assert_not_null(e, "%s: nothing at %s; got: %s", spec, path, buf_str(&all));
	cr_assert_str_eq(e->message, message, "%s: got: %s", spec, buf_str(&all));
	buf_release(&all);
	vol_release(&vol);
	field_errors_release(&errs);
	json_decref(json);
}

static void assert_valid(const char *spec)
{
	struct volume vol;
	struct field_errors errs;
	json_t *json = volume_with_spec(spec);
	struct buf all;

	field_errors_init(&errs);
	buf_init(&all, 1 << 16);
	cr_assert_eq(vol_parse(json, &vol, &errs), 0);
	vol_validate(&vol, &errs);
	field_errors_join(&errs, &all);
	cr_assert_eq(field_errors_count(&errs), 0, "%s: %s", spec, buf_str(&all));
	buf_release(&all);
	vol_release(&vol);
	field_errors_release(&errs);
	json_decref(json);
}

Test(volume, parses_the_design_example)
{
	json_t *json = load_fixture(FIXTURE("volume-example.json"));
	struct volume vol;
	struct field_errors errs;

	field_errors_init(&errs);
	cr_assert_eq(vol_parse(json, &vol, &errs), 0);
	cr_assert_eq(vol_validate(&vol, &errs), 0);
	cr_assert_str_eq(vol.meta.name, "shared-checkpoints");
	cr_assert_eq(vol.spec.type, VOL_TYPE_K8S_PVC);
	cr_assert_str_eq(vol.spec.size, "500Gi");
	cr_assert(vol.spec.has_size);
	cr_assert_eq(vol.spec.size_milli, 500LL * 1024 * 1024 * 1024 * 1000);
	cr_assert_eq(vol.spec.access_mode, VOL_ACCESS_READ_WRITE_MANY);
	cr_assert_str_eq(vol.spec.storage_class_name, "fast-rwx");
	cr_assert_str_eq(vol.spec.claim_name, "");
	cr_assert_not(vol.spec.has_nfs);
	cr_assert_eq(vol.spec.reclaim_policy, VOL_RECLAIM_RETAIN);
	cr_assert_eq(vol.status.phase, VOL_PHASE_BOUND);
	cr_assert_str_eq(vol.status.claim_name, "shared-checkpoints");
	cr_assert_str_eq(vol.status.capacity, "500Gi");
	cr_assert_eq(vol.status.n_access_modes, 1);
	cr_assert_str_eq(vol.status.access_modes[0], "ReadWriteMany");
	cr_assert_eq(vol.status.n_used_by, 1);
	cr_assert_str_eq(vol.status.used_by[0], "llama-pretrain");
	cr_assert(condition_is_true(&vol.status.conditions, "Ready"));
	vol_release(&vol);
	field_errors_release(&errs);
	json_decref(json);
}

Test(volume, parses_an_nfs_volume)
{
	json_t *json = load_fixture(FIXTURE("volume-nfs.json"));
	struct volume vol;
	struct field_errors errs;

	field_errors_init(&errs);
	cr_assert_eq(vol_parse(json, &vol, &errs), 0);
	cr_assert_eq(vol_validate(&vol, &errs), 0);
	cr_assert_eq(vol.spec.type, VOL_TYPE_NFS);
	cr_assert(vol.spec.has_nfs);
	cr_assert_str_eq(vol.spec.nfs.server, "10.0.0.5");
	cr_assert_str_eq(vol.spec.nfs.path, "/exports/ckpt");
	cr_assert(vol.spec.nfs.read_only);
	cr_assert_eq(vol.spec.reclaim_policy, VOL_RECLAIM_DELETE);
	cr_assert_eq(vol.status.phase, VOL_PHASE_UNSET);
	vol_release(&vol);
	field_errors_release(&errs);
	json_decref(json);
}

Test(volume, defaults_to_a_read_write_many_pvc_that_is_retained)
{
	struct volume vol;
	struct field_errors errs;
	json_t *json = volume_with_spec("{\"size\": \"10Gi\"}");

	field_errors_init(&errs);
	cr_assert_eq(vol_parse(json, &vol, &errs), 0);
	cr_assert_eq(vol.spec.type, VOL_TYPE_K8S_PVC);
	cr_assert_eq(vol.spec.access_mode, VOL_ACCESS_READ_WRITE_MANY);
	cr_assert_eq(vol.spec.reclaim_policy, VOL_RECLAIM_RETAIN);
	cr_assert_str_eq(vol_type_name(vol.spec.type), "k8s-pvc");
	cr_assert_str_eq(vol_access_mode_name(vol.spec.access_mode), "ReadWriteMany");
	cr_assert_str_eq(vol_reclaim_policy_name(vol.spec.reclaim_policy), "Retain");
	vol_release(&vol);
	field_errors_release(&errs);
	json_decref(json);
}

Test(volume, validation_names_each_problem_with_its_path)
{
	assert_problem("{\"type\": \"k8s-pvc\"}", "spec.size",
		       "required for type k8s-pvc unless claimName is set");
	assert_valid("{\"claimName\": \"existing-claim\"}");
	assert_problem("{\"size\": \"big\"}", "spec.size",
		       "\"big\" is not a quantity like \"500Gi\"");
	assert_problem("{\"size\": \"0\"}", "spec.size", "must be > 0");
	assert_problem("{\"size\": \"100Ei\"}", "spec.size", "\"100Ei\" is too large");
	assert_problem("{\"type\": \"nfs\"}", "spec.nfs.server", "required for type nfs");
	assert_problem("{\"type\": \"nfs\"}", "spec.nfs.path", "required for type nfs");
	assert_problem("{\"type\": \"nfs\", \"nfs\": {\"server\": \"s\", \"path\": \"exports\"}}",
		       "spec.nfs.path", "must be an absolute path");
	assert_problem("{\"type\": \"nfs\", \"claimName\": \"c\", "
		       "\"nfs\": {\"server\": \"s\", \"path\": \"/e\"}}",
		       "spec.claimName", "must not be set for type nfs: cadre binds its own PVC");
	assert_valid("{\"type\": \"nfs\", \"nfs\": {\"server\": \"nfs.local\", \"path\": \"/e\"}}");
	assert_problem("{\"size\": \"1Gi\", \"nfs\": {\"server\": \"s\", \"path\": \"/e\"}}",
		       "spec.nfs", "only for type nfs");
	assert_problem("{\"type\": \"s3\"}", "spec.type", "must be one of k8s-pvc, nfs, not \"s3\"");
	assert_problem("{\"size\": \"1Gi\", \"accessMode\": \"ReadWriteAll\"}", "spec.accessMode",
		       "must be one of ReadWriteMany, ReadWriteOnce, ReadOnlyMany, "
		       "ReadWriteOncePod, not \"ReadWriteAll\"");
	assert_problem("{\"size\": \"1Gi\", \"reclaimPolicy\": \"Recycle\"}", "spec.reclaimPolicy",
		       "must be one of Retain, Delete, not \"Recycle\"");
	assert_problem("{\"size\": \"1Gi\", \"storageClassName\": \"Fast SSD\"}",
		       "spec.storageClassName",
		       "must be the name of a StorageClass (a DNS subdomain)");
	assert_problem("{\"size\": true}", "spec.size",
		       "must be a quantity like \"32\" or \"256Gi\", not a boolean");
	assert_problem("{\"nfs\": {\"readOnly\": \"yes\"}}", "spec.nfs.readOnly",
		       "must be a boolean, not a string");
}

Test(volume, size_may_be_a_bare_integer)
{
	struct volume vol;
	struct field_errors errs;
	json_t *json = volume_with_spec("{\"size\": 1073741824}");

	field_errors_init(&errs);
	cr_assert_eq(vol_parse(json, &vol, &errs), 0);
	cr_assert_str_eq(vol.spec.size, "1073741824");
	cr_assert_eq(vol.spec.size_milli, 1073741824000LL);
	vol_release(&vol);
	field_errors_release(&errs);
	json_decref(json);
}

Test(volume, status_round_trips_exactly)
{
	json_t *json = load_fixture(FIXTURE("volume-example.json"));
	struct volume vol;
	struct vol_status again;
	struct field_errors errs;
	json_t *out, *out2;

	field_errors_init(&errs);
	cr_assert_eq(vol_parse(json, &vol, &errs), 0);
	out = vol_status_to_json(&vol.status);
	cr_assert(json_equal(out, json_object_get(json, "status")));
	cr_assert_eq(vol_status_parse(out, &again, &errs), 0);
	out2 = vol_status_to_json(&again);
	cr_assert(json_equal(out, out2));
	json_decref(out);
	json_decref(out2);
	vol_status_release(&again);
	vol_release(&vol);
	field_errors_release(&errs);
	json_decref(json);
}

Test(volume, empty_status_writes_lists_and_nothing_else)
{
	struct vol_status st;
	json_t *out, *want;

	vol_status_init(&st);
	out = vol_status_to_json(&st);
	want = json_loads("{\"accessModes\": [], \"usedBy\": [], \"conditions\": []}", 0, NULL);
	cr_assert(json_equal(out, want));
	json_decref(out);
	json_decref(want);
	vol_status_release(&st);
}

Test(volume, wrong_types_anywhere_are_field_errors)
{
	static const struct { const char *doc, *path; } cases[] = {
		{ "[]", "" },
		{ "{\"spec\": {\"size\": \"1Gi\"}}", "metadata" },
		{ "{\"metadata\": {\"name\": \"v\"}}", "spec" },
		{ "{\"metadata\": {\"name\": \"v\"}, \"spec\": []}", "spec" },
		{ "{\"metadata\": {\"name\": \"v\"}, \"spec\": {\"type\": 1}}", "spec.type" },
		{ "{\"metadata\": {\"name\": \"v\"}, \"spec\": {\"nfs\": \"x\"}}", "spec.nfs" },
		{ "{\"metadata\": {\"name\": \"v\"}, \"spec\": {\"nfs\": {\"server\": 1}}}",
		  "spec.nfs.server" },
		{ "{\"metadata\": {\"name\": \"v\"}, \"spec\": {}, \"status\": {\"phase\": \"Gone\"}}",
		  "status.phase" },
		{ "{\"metadata\": {\"name\": \"v\"}, \"spec\": {}, \"status\": {\"usedBy\": [1]}}",
		  "status.usedBy[0]" },
		{ "{\"metadata\": {\"name\": \"v\"}, \"spec\": {}, \"status\": {\"usedBy\": [null]}}",
		  "status.usedBy[0]" },
		{ "{\"metadata\": {\"name\": \"v\"}, \"spec\": {}, \"status\": {\"accessModes\": {}}}",
		  "status.accessModes" },
		{ "{\"metadata\": {\"name\": \"v\"}, \"spec\": {}, \"status\": {\"conditions\": [3]}}",
		  "status.conditions[0]" },
		{ "{\"kind\": \"TrainingJob\", \"metadata\": {\"name\": \"v\"}, \"spec\": {}}", "kind" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct volume vol;
		struct field_errors errs;
		json_t *json = json_loads(cases[i].doc, JSON_DECODE_ANY, NULL);

		cr_assert_not_null(json, "%s", cases[i].doc);
		field_errors_init(&errs);
		cr_assert_eq(vol_parse(json, &vol, &errs), CADRE_EINVAL, "%s", cases[i].doc);
		cr_assert_not_null(field_errors_find(&errs, cases[i].path), "%s", cases[i].doc);
		vol_release(&vol);
		field_errors_release(&errs);
		json_decref(json);
	}
}

Test(volume, the_document_cut_at_every_byte_loads_only_whole)
{
	json_t *doc = load_fixture(FIXTURE("volume-example.json"));
	char *text = json_dumps(doc, JSON_COMPACT);
	size_t len = strlen(text);
	int loaded = 0;

	for (size_t n = 0; n <= len; n++) {
		struct volume vol;
		struct field_errors errs;
		json_t *json = json_loadb(text, n, 0, NULL);

		if (!json)
			continue;
		loaded++;
		field_errors_init(&errs);
		cr_assert_eq(vol_parse(json, &vol, &errs), 0);
		vol_release(&vol);
		field_errors_release(&errs);
		json_decref(json);
	}
	cr_assert_eq(loaded, 1);
	free(text);
	json_decref(doc);
}

Test(volume, phase_names)
{
	cr_assert_str_eq(vol_phase_name(VOL_PHASE_PENDING), "Pending");
	cr_assert_str_eq(vol_phase_name(VOL_PHASE_BOUND), "Bound");
	cr_assert_str_eq(vol_phase_name(VOL_PHASE_FAILED), "Failed");
	cr_assert_str_eq(vol_phase_name(VOL_PHASE_UNSET), "");
	cr_assert_str_eq(vol_type_name(VOL_TYPE_NFS), "nfs");
	cr_assert_str_eq(vol_reclaim_policy_name(VOL_RECLAIM_DELETE), "Delete");
}

/*
 * Replace every member and element of the example, in turn, with each value
 * of another JSON type: never a crash, and the field itself is reported.
 */
static int replace_everywhere(json_t *doc, json_t *node, const char *path)
{
	char child[DECODE_PATH_MAX];
	int checked = 0;
	size_t n = json_is_object(node) ? json_object_size(node) : json_array_size(node);
	void *iter = json_is_object(node) ? json_object_iter(node) : NULL;

	for (size_t i = 0; i < n; i++) {
		const char *key = iter ? json_object_iter_key(iter) : NULL;
		json_t *original = key ? json_object_iter_value(iter) : json_array_get(node, i);
		json_t *wrongs[] = {
			json_true(), json_integer(42), json_real(1.5), json_string("x"),
			json_array(), json_object(),
		};

		if (key)
			decode_path(child, sizeof(child), path, key);
		else
			decode_path_index(child, sizeof(child), path, i);
		json_incref(original);
		for (size_t w = 0; w < sizeof(wrongs) / sizeof(wrongs[0]); w++) {
			struct volume vol;
			struct field_errors errs;
			bool same = json_typeof(original) == json_typeof(wrongs[w]) ||
				    (json_is_boolean(original) && json_is_boolean(wrongs[w])) ||
				    (!strcmp(child, "spec.size") && json_is_number(wrongs[w]));

			if (same) {
				json_decref(wrongs[w]);
				continue;
			}
			if (key)
				json_object_set_new(node, key, wrongs[w]);
			else
				json_array_set_new(node, i, wrongs[w]);
			field_errors_init(&errs);
			vol_parse(doc, &vol, &errs);
			vol_validate(&vol, &errs);
			json_decref(vol_status_to_json(&vol.status));
			cr_assert_not_null(field_errors_find(&errs, child), "%s replaced by type %d",
					   child, json_typeof(wrongs[w]));
			vol_release(&vol);
			field_errors_release(&errs);
			checked++;
		}
		if (key)
			json_object_set(node, key, original);
		else
			json_array_set(node, i, original);
		/* Re-read: set may have moved the iterator's entry. */
		if (key)
			iter = json_object_iter_next(node, json_object_key_to_iter(key));
		if (json_is_object(original) || json_is_array(original))
			checked += replace_everywhere(doc, original, child);
		json_decref(original);
	}
	return checked;
}

Test(volume, every_field_of_the_wrong_type_is_reported_at_its_path)
{
	json_t *doc = load_fixture(FIXTURE("volume-example.json"));
	json_t *nfs = load_fixture(FIXTURE("volume-nfs.json"));

	cr_assert_gt(replace_everywhere(doc, doc, ""), 100);
	cr_assert_gt(replace_everywhere(nfs, nfs, ""), 40);
	json_decref(doc);
	json_decref(nfs);
}

/* A status in phase with Ready as the reconciler sets it, at generation 1. */
static void status_in(struct vol_status *st, enum vol_phase phase, const char *ready,
		      const char *reason)
{
	vol_status_init(st);
	st->phase = phase;
	cr_assert_eq(condition_set(&st->conditions, "Ready", ready, reason, "what the PVC says",
				   1, 1000, NULL), 0);
}

static const char *cond_status(const struct vol_status *st, const char *type)
{
	const struct condition *c = condition_find(&st->conditions, type);

	return c ? c->status : "(absent)";
}

Test(volume, a_pending_volume_is_reconciling_with_the_reason_of_ready)
{
	struct vol_status st;
	const struct condition *c;

	status_in(&st, VOL_PHASE_PENDING, "False", "ClaimPending");
	cr_assert_eq(vol_status_observe(&st, 1, 2000), 0);
	c = condition_find(&st.conditions, "Reconciling");
	cr_assert_str_eq(c->status, "True");
	cr_assert_str_eq(c->reason, "ClaimPending");
	cr_assert_str_eq(c->message, "what the PVC says");
	cr_assert_str_eq(cond_status(&st, "Stalled"), "(absent)");
	vol_status_release(&st);
}

Test(volume, a_failed_volume_is_stalled_and_a_bound_one_is_neither)
{
	struct vol_status st;

	status_in(&st, VOL_PHASE_FAILED, "False", "ClaimLost");
	cr_assert_eq(vol_status_observe(&st, 1, 2000), 0);
	cr_assert_str_eq(cond_status(&st, "Stalled"), "True");
	cr_assert_str_eq(condition_find(&st.conditions, "Stalled")->reason, "ClaimLost");
	cr_assert_str_eq(cond_status(&st, "Reconciling"), "False");
	vol_status_release(&st);

	status_in(&st, VOL_PHASE_BOUND, "True", "Bound");
	cr_assert_eq(vol_status_observe(&st, 1, 2000), 0);
	cr_assert_str_eq(cond_status(&st, "Reconciling"), "False");
	cr_assert_str_eq(cond_status(&st, "Stalled"), "(absent)");
	vol_status_release(&st);
}

Test(volume, observe_stamps_every_condition_and_the_status_with_the_generation)
{
	struct vol_status st;
	json_t *first, *again;

	status_in(&st, VOL_PHASE_BOUND, "True", "Bound");
	cr_assert_eq(vol_status_observe(&st, 4, 2000), 0);
	cr_assert_eq(st.observed_generation, 4);
	for (size_t i = 0; i < st.conditions.len; i++)
		cr_assert_eq(st.conditions.items[i].observed_generation, 4, "%s",
			     st.conditions.items[i].type);
	cr_assert_eq(condition_find(&st.conditions, "Ready")->last_transition_time, 1000,
		     "a new generation is not a transition");
	first = vol_status_to_json(&st);
	cr_assert_eq(json_integer_value(json_object_get(first, "observedGeneration")), 4);
	cr_assert_eq(vol_status_observe(&st, 4, 3000), 0);
	again = vol_status_to_json(&st);
	cr_assert(json_equal(first, again), "a second reconcile writes nothing");
	json_decref(first);
	json_decref(again);
	vol_status_release(&st);
}

/* A status in phase with a Ready condition saying why. */
static void status_with(struct vol_status *st, enum vol_phase phase, const char *why)
{
	vol_status_init(st);
	st->phase = phase;
	cr_assert_eq(condition_set(&st->conditions, "Ready",
				   phase == VOL_PHASE_BOUND ? "True" : "False", "Why", why, 1, 100,
				   NULL), 0);
}

Test(volume, a_phase_change_is_noted_with_both_phases_and_the_ready_message)
{
	struct vol_status st;
	char note[128];

	status_with(&st, VOL_PHASE_BOUND, "PersistentVolumeClaim scratch is Bound");
	cr_assert(vol_phase_change_note(VOL_PHASE_PENDING, &st, note, sizeof(note)));
	cr_assert_str_eq(note, "phase Pending -> Bound: PersistentVolumeClaim scratch is Bound");
	vol_status_release(&st);

	status_with(&st, VOL_PHASE_FAILED, "PersistentVolumeClaim scratch lost its PersistentVolume");
	cr_assert(vol_phase_change_note(VOL_PHASE_BOUND, &st, note, sizeof(note)));
	cr_assert_str_eq(note, "phase Bound -> Failed: PersistentVolumeClaim scratch lost its "
			 "PersistentVolume");
	vol_status_release(&st);
}

Test(volume, the_first_phase_is_noted_alone)
{
	struct vol_status st;
	char note[128];

	status_with(&st, VOL_PHASE_PENDING, "PersistentVolumeClaim scratch does not exist yet");
	cr_assert(vol_phase_change_note(VOL_PHASE_UNSET, &st, note, sizeof(note)));
	cr_assert_str_eq(note, "phase Pending: PersistentVolumeClaim scratch does not exist yet");
	vol_status_release(&st);
}

Test(volume, an_unchanged_or_unset_phase_is_not_noted)
{
	struct vol_status st;
	char note[16] = "untouched";

	status_with(&st, VOL_PHASE_BOUND, "PersistentVolumeClaim scratch is Bound");
	cr_assert_not(vol_phase_change_note(VOL_PHASE_BOUND, &st, note, sizeof(note)));
	vol_status_release(&st);
	vol_status_init(&st);
	cr_assert_not(vol_phase_change_note(VOL_PHASE_PENDING, &st, note, sizeof(note)));
	cr_assert_str_eq(note, "untouched");
	vol_status_release(&st);
}

Test(volume, a_long_phase_note_is_cut_and_terminated)
{
	struct vol_status st;
	char note[20];

	status_with(&st, VOL_PHASE_BOUND, "PersistentVolumeClaim scratch is Bound");
	cr_assert(vol_phase_change_note(VOL_PHASE_PENDING, &st, note, sizeof(note)));
	cr_assert_str_eq(note, "phase Pending -> Bo");
	vol_status_release(&st);
}
