#include "api/volume.h"

#include "api/decode.h"
#include "api/fielderr.h"
#include "api/name.h"
#include "api/quantity.h"
#include "base/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = {
	[VOL_TYPE_K8S_PVC] = "k8s-pvc",
	[VOL_TYPE_NFS] = "nfs",
};

static const char *const access_mode_names[] = {
	[VOL_ACCESS_READ_WRITE_MANY] = "ReadWriteMany",
	[VOL_ACCESS_READ_WRITE_ONCE] = "ReadWriteOnce",
	[VOL_ACCESS_READ_ONLY_MANY] = "ReadOnlyMany",
	[VOL_ACCESS_READ_WRITE_ONCE_POD] = "ReadWriteOncePod",
};

static const char *const reclaim_names[] = {
	[VOL_RECLAIM_RETAIN] = "Retain",
	[VOL_RECLAIM_DELETE] = "Delete",
};

static const char *const phase_names[] = {
	[VOL_PHASE_UNSET] = "",
	[VOL_PHASE_PENDING] = "Pending",
	[VOL_PHASE_BOUND] = "Bound",
	[VOL_PHASE_FAILED] = "Failed",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *name_of(const char *const names[], size_t n, unsigned value)
{
	return value < n ? names[value] : "";
}

const char *vol_type_name(enum vol_type type)
{
	return name_of(type_names, COUNT(type_names), type);
}

const char *vol_access_mode_name(enum vol_access_mode mode)
{
	return name_of(access_mode_names, COUNT(access_mode_names), mode);
}

const char *vol_reclaim_policy_name(enum vol_reclaim_policy policy)
{
	return name_of(reclaim_names, COUNT(reclaim_names), policy);
}

const char *vol_phase_name(enum vol_phase phase)
{
	return name_of(phase_names, COUNT(phase_names), phase);
}

static void free_strings(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

void vol_status_init(struct vol_status *status)
{
	memset(status, 0, sizeof(*status));
	condition_list_init(&status->conditions);
}

void vol_status_release(struct vol_status *status)
{
	free(status->claim_name);
	free(status->capacity);
	free_strings(status->access_modes, status->n_access_modes);
	free_strings(status->used_by, status->n_used_by);
	condition_list_release(&status->conditions);
	vol_status_init(status);
}

void vol_init(struct volume *vol)
{
	meta_init(&vol->meta);
	memset(&vol->spec, 0, sizeof(vol->spec));
	vol_status_init(&vol->status);
}

void vol_release(struct volume *vol)
{
	struct vol_spec *s = &vol->spec;

	meta_release(&vol->meta);
	free(s->size);
	free(s->storage_class_name);
	free(s->claim_name);
	free(s->nfs.server);
	free(s->nfs.path);
	vol_status_release(&vol->status);
	vol_init(vol);
}

void vol_default(struct vol_spec *spec)
{
	/* Absent enums parse as their zero value, which is each default. */
	(void)spec;
}

/* Read member key as one of names; an unknown name is an error listing them. */
static void decode_enum(struct decoder *d, const json_t *obj, const char *base,
			const char *key, const char *const names[], size_t n, unsigned *out)
{
	char path[DECODE_PATH_MAX];
	char *value = NULL;
	size_t i;

	if (!decode_string(d, obj, base, key, &value))
		return;
	for (i = 0; i < n; i++)
		if (!strcmp(value, names[i]))
			break;
	if (i < n) {
		*out = (unsigned)i;
	} else {
		char choices[160] = "";
		size_t used = 0;

		for (size_t j = 0; j < n; j++)
			if (names[j][0])
				used += (size_t)snprintf(choices + used, sizeof(choices) - used,
							 "%s%s", used ? ", " : "", names[j]);
		decode_path(path, sizeof(path), base, key);
		decode_fail(d, path, "must be one of %s, not \"%.64s\"", choices, value);
	}
	free(value);
}

/* A string array into an owned list. */
static void decode_strings(struct decoder *d, const json_t *obj, const char *base,
			   const char *key, char ***out, size_t *n)
{
	char path[DECODE_PATH_MAX], item_path[DECODE_PATH_MAX];
	const json_t *list = decode_array(d, obj, base, key);
	size_t i;
	json_t *item;

	if (!list || !json_array_size(list))
		return;
	*out = calloc(json_array_size(list), sizeof(**out));
	if (!*out) {
		decode_nomem(d);
		return;
	}
	decode_path(path, sizeof(path), base, key);
	json_array_foreach(list, i, item) {
		char *value = NULL;

		decode_path_index(item_path, sizeof(item_path), path, i);
		if (json_is_null(item))
			decode_fail(d, item_path, "must be a string, not null");
		else if (decode_as_string(d, item, item_path, &value))
			(*out)[(*n)++] = value;
	}
}

static void parse_spec(struct decoder *d, const json_t *spec, struct vol_spec *s)
{
	unsigned value;
	const json_t *nfs;

	value = s->type;
	decode_enum(d, spec, "spec", "type", type_names, COUNT(type_names), &value);
	s->type = (enum vol_type)value;
	decode_quantity(d, spec, "spec", "size", &s->size, &s->has_size, &s->size_milli);
	value = s->access_mode;
	decode_enum(d, spec, "spec", "accessMode", access_mode_names,
		    COUNT(access_mode_names), &value);
	s->access_mode = (enum vol_access_mode)value;
	decode_string(d, spec, "spec", "storageClassName", &s->storage_class_name);
	decode_string(d, spec, "spec", "claimName", &s->claim_name);
	nfs = decode_object(d, spec, "spec", "nfs");
	if (nfs) {
		s->has_nfs = true;
		decode_string(d, nfs, "spec.nfs", "server", &s->nfs.server);
		decode_string(d, nfs, "spec.nfs", "path", &s->nfs.path);
		decode_bool(d, nfs, "spec.nfs", "readOnly", &s->nfs.read_only);
	}
	value = s->reclaim_policy;
	decode_enum(d, spec, "spec", "reclaimPolicy", reclaim_names, COUNT(reclaim_names),
		    &value);
	s->reclaim_policy = (enum vol_reclaim_policy)value;
}

int vol_status_parse(const json_t *obj, struct vol_status *status, struct field_errors *errs)
{
	struct decoder d;
	unsigned phase = VOL_PHASE_UNSET;

	vol_status_init(status);
	decode_init(&d, errs);
	if (!decode_as_object(&d, obj, "status"))
		return decode_finish(&d);
	decode_enum(&d, obj, "status", "phase", phase_names, COUNT(phase_names), &phase);
	status->phase = (enum vol_phase)phase;
	decode_string(&d, obj, "status", "claimName", &status->claim_name);
	decode_string(&d, obj, "status", "capacity", &status->capacity);
	decode_strings(&d, obj, "status", "accessModes", &status->access_modes,
		       &status->n_access_modes);
	decode_strings(&d, obj, "status", "usedBy", &status->used_by, &status->n_used_by);
	decode_int64(&d, obj, "status", "observedGeneration", &status->observed_generation, NULL);
	decode_merge(&d, condition_list_parse(json_object_get(obj, "conditions"),
					      "status.conditions", &status->conditions, errs));
	return decode_finish(&d);
}

int vol_parse(const json_t *obj, struct volume *out, struct field_errors *errs)
{
	struct decoder d;
	const json_t *spec;
	char *api_version = NULL, *kind = NULL;

	vol_init(out);
	decode_init(&d, errs);
	if (!json_is_object(obj)) {
		decode_fail(&d, "", "a Volume must be a JSON object");
		goto out;
	}
	if (decode_string(&d, obj, "", "apiVersion", &api_version) &&
	    strcmp(api_version, VOL_API_VERSION))
		decode_fail(&d, "apiVersion", "must be " VOL_API_VERSION);
	if (decode_string(&d, obj, "", "kind", &kind) && strcmp(kind, VOL_KIND))
		decode_fail(&d, "kind", "must be " VOL_KIND);
	decode_merge(&d, meta_parse(json_object_get(obj, "metadata"), &out->meta, errs));
	spec = json_object_get(obj, "spec");
	if (!spec || json_is_null(spec))
		decode_fail(&d, "spec", "required");
	else if (decode_as_object(&d, spec, "spec"))
		parse_spec(&d, spec, &out->spec);
	decode_merge(&d, vol_status_parse(json_object_get(obj, "status"), &out->status, errs));
out:
	free(api_version);
	free(kind);
	vol_default(&out->spec);
	return decode_finish(&d);
}

int vol_validate(const struct volume *vol, struct field_errors *errs)
{
	const struct vol_spec *s = &vol->spec;
	bool has_claim = s->claim_name && *s->claim_name;
	struct decoder d;
	int64_t milli;
	int err;

	decode_init(&d, errs);
	if (!vol->meta.name)
		decode_fail(&d, "metadata.name", "required");
	else if (!name_is_dns1123_subdomain(vol->meta.name))
		decode_fail(&d, "metadata.name", "must be a DNS subdomain: it names the PVC");
	if (s->size) {
		err = quantity_parse(s->size, &milli);
		if (err == CADRE_ETOOBIG)
			decode_fail(&d, "spec.size", "\"%.64s\" is too large", s->size);
		else if (err)
			decode_fail(&d, "spec.size", "\"%.64s\" is not a quantity like \"500Gi\"",
				    s->size);
		else if (milli <= 0)
			decode_fail(&d, "spec.size", "must be > 0");
	} else if (s->type == VOL_TYPE_K8S_PVC && !has_claim) {
		decode_fail(&d, "spec.size", "required for type k8s-pvc unless claimName is set");
	}
	if (has_claim && !name_is_dns1123_subdomain(s->claim_name))
		decode_fail(&d, "spec.claimName", "must be the name of a PVC (a DNS subdomain)");
	if (s->storage_class_name && *s->storage_class_name &&
	    !name_is_dns1123_subdomain(s->storage_class_name))
		decode_fail(&d, "spec.storageClassName",
			    "must be the name of a StorageClass (a DNS subdomain)");
	if (s->type == VOL_TYPE_NFS) {
		if (has_claim)
			decode_fail(&d, "spec.claimName",
				    "must not be set for type nfs: cadre binds its own PVC");
		if (!s->nfs.server || !*s->nfs.server)
			decode_fail(&d, "spec.nfs.server", "required for type nfs");
		if (!s->nfs.path || !*s->nfs.path)
			decode_fail(&d, "spec.nfs.path", "required for type nfs");
		else if (s->nfs.path[0] != '/')
			decode_fail(&d, "spec.nfs.path", "must be an absolute path");
	} else if (s->has_nfs) {
		decode_fail(&d, "spec.nfs", "only for type nfs");
	}
	return decode_finish(&d);
}

static bool put_string(json_t *obj, const char *key, const char *s)
{
	return !s || !json_object_set_new(obj, key, json_string(s));
}

static json_t *strings_to_json(char *const *list, size_t n)
{
	json_t *array = json_array();

	for (size_t i = 0; array && i < n; i++) {
		if (json_array_append_new(array, json_string(list[i]))) {
			json_decref(array);
			return NULL;
		}
	}
	return array;
}

json_t *vol_status_to_json(const struct vol_status *st)
{
	json_t *obj = json_object();
	bool ok = obj != NULL;

	if (ok && st->phase != VOL_PHASE_UNSET)
		ok = put_string(obj, "phase", vol_phase_name(st->phase));
	ok = ok && put_string(obj, "claimName", st->claim_name);
	ok = ok && put_string(obj, "capacity", st->capacity);
	if (ok && st->observed_generation)
		ok = !json_object_set_new(obj, "observedGeneration",
					  json_integer((json_int_t)st->observed_generation));
	ok = ok && !json_object_set_new(obj, "accessModes",
					strings_to_json(st->access_modes, st->n_access_modes));
	ok = ok && !json_object_set_new(obj, "usedBy",
					strings_to_json(st->used_by, st->n_used_by));
	ok = ok && !json_object_set_new(obj, "conditions",
					condition_list_to_json(&st->conditions));
	if (!ok) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

int vol_status_observe(struct vol_status *st, int64_t generation, int64_t now)
{
	const struct condition *ready = condition_find(&st->conditions, "Ready");
	const char *phase = vol_phase_name(st->phase);
	const char *reason = ready && *ready->reason ? ready->reason : phase;
	const char *message = ready && *ready->message ? ready->message : phase;
	int err = 0;

	st->observed_generation = generation;
	if (st->phase != VOL_PHASE_UNSET) {
		/* reason and message point into Ready's strings, which neither call frees. */
		err = condition_set(&st->conditions, "Reconciling",
				    st->phase == VOL_PHASE_PENDING ? "True" : "False", reason,
				    message, generation, now, NULL);
		if (!err && (st->phase == VOL_PHASE_FAILED ||
			     condition_find(&st->conditions, "Stalled")))
			err = condition_set(&st->conditions, "Stalled",
					    st->phase == VOL_PHASE_FAILED ? "True" : "False",
					    reason, message, generation, now, NULL);
	}
	condition_list_observe(&st->conditions, generation, NULL);
	return err;
}

bool vol_phase_change_note(enum vol_phase was, const struct vol_status *now, char *out,
			   size_t size)
{
	const struct condition *ready = condition_find(&now->conditions, "Ready");
	const char *why = ready && ready->message && *ready->message ? ready->message :
			  "no reason recorded";

	if (now->phase == VOL_PHASE_UNSET || now->phase == was || !size)
		return false;
	if (was == VOL_PHASE_UNSET)
		snprintf(out, size, "phase %s: %s", vol_phase_name(now->phase), why);
	else
		snprintf(out, size, "phase %s -> %s: %s", vol_phase_name(was),
			 vol_phase_name(now->phase), why);
	return true;
}
