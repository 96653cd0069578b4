/*
 * partition.c - reading a Partition, choosing a job's, and applying it to
 * the job's spec in memory (partition.h).
 */
#include "api/partition.h"

#include "api/accel.h"
#include "api/decode.h"
#include "api/fielderr.h"
#include "api/name.h"
#include "api/slurm.h"
#include "api/trainingjob.h"
#include "base/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void partition_init(struct partition *p)
{
	meta_init(&p->meta);
	memset(&p->spec, 0, sizeof(p->spec));
	p->spec.max_time_s = -1;
}

void partition_release(struct partition *p)
{
	struct partition_spec *s = &p->spec;

	meta_release(&p->meta);
	json_decref(s->node_selector);
	json_decref(s->tolerations);
	free(s->default_image);
	free(s->default_time);
	free(s->max_time);
	free(s->default_accelerators);
	free(s->device_class_name);
	free(s->queue);
	tj_scratch_release(s->scratch, s->n_scratch);
	for (size_t i = 0; i < s->n_allowed_namespaces; i++)
		free(s->allowed_namespaces[i]);
	free(s->allowed_namespaces);
	json_decref(s->features);
	partition_init(p);
}

/* A Slurm time at spec.<key>: raw text and seconds (-1 unlimited). */
static void read_time(struct decoder *d, const json_t *spec, const char *key, char **raw,
		      int64_t *seconds)
{
	char path[DECODE_PATH_MAX];

	if (!decode_string(d, spec, "spec", key, raw))
		return;
	decode_path(path, sizeof(path), "spec", key);
	if (slurm_time_parse(*raw, seconds))
		decode_fail(d, path, "\"%.64s\" is not a Slurm time (MM, HH:MM:SS, D-HH:MM:SS, "
			    "UNLIMITED)", *raw);
}

/*
 * spec.allowedNamespaces: namespace names (DNS-1123 labels), each once, at
 * least one (leaving the list out is how every namespace is allowed; an
 * empty one would read as either), at most PARTITION_NAMESPACES_MAX.
 */
static void read_namespaces(struct decoder *d, const json_t *spec, struct partition_spec *s)
{
	const json_t *list = json_object_get(spec, "allowedNamespaces");
	char path[DECODE_PATH_MAX];
	const json_t *v;
	size_t i;

	if (!list || json_is_null(list) || !decode_as_array(d, list, "spec.allowedNamespaces"))
		return;
	if (!json_array_size(list) || json_array_size(list) > PARTITION_NAMESPACES_MAX) {
		decode_fail(d, "spec.allowedNamespaces", "must name 1 to %d namespaces (leave it "
			    "out for every namespace)", PARTITION_NAMESPACES_MAX);
		return;
	}
	s->allowed_namespaces = calloc(json_array_size(list), sizeof(*s->allowed_namespaces));
	if (!s->allowed_namespaces) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(list, i, v) {
		char *name = NULL;

		decode_path_index(path, sizeof(path), "spec.allowedNamespaces", i);
		if (!decode_as_string(d, v, path, &name))
			continue;
		s->allowed_namespaces[s->n_allowed_namespaces++] = name;
		if (!name_is_dns1123_label(name))
			decode_fail(d, path, "\"%.64s\" is not a namespace name", name);
		for (size_t j = 0; j + 1 < s->n_allowed_namespaces; j++)
			if (!strcmp(s->allowed_namespaces[j], name))
				decode_fail(d, path, "%.64s is listed twice", name);
	}
}

/*
 * spec.priorityTier, spec.preemptMode, spec.graceTimeSeconds and
 * spec.preemptExemptTimeSeconds, each within the schema's bounds, checked
 * again here as every other field's are: a Partition stored before the
 * schema had them was never checked by it.
 */
static void read_preemption(struct decoder *d, const json_t *spec, struct partition_spec *s)
{
	enum partition_preempt_mode m = PARTITION_PREEMPT_OFF;
	char *mode = NULL;
	int64_t n;

	if (decode_as_int64(d, json_object_get(spec, "priorityTier"), "spec.priorityTier", 0,
			    PARTITION_PRIORITY_TIER_MAX, &n))
		s->priority_tier = (int32_t)n;
	if (decode_string(d, spec, "spec", "preemptMode", &mode)) {
		while (m <= PARTITION_PREEMPT_CANCEL &&
		       strcmp(mode, partition_preempt_mode_name(m)))
			m++;
		if (m <= PARTITION_PREEMPT_CANCEL)
			s->preempt_mode = m;
		else
			decode_fail(d, "spec.preemptMode", "must be one of Off, Requeue, Cancel, "
				    "not \"%.64s\"", mode);
		free(mode);
	}
	s->has_grace_time = decode_as_int64(d, json_object_get(spec, "graceTimeSeconds"),
					    "spec.graceTimeSeconds", 0,
					    PARTITION_GRACE_SECONDS_MAX, &s->grace_time_s);
	decode_as_int64(d, json_object_get(spec, "preemptExemptTimeSeconds"),
			"spec.preemptExemptTimeSeconds", 0, PARTITION_PREEMPT_EXEMPT_SECONDS_MAX,
			&s->preempt_exempt_s);
}

static void check_spec(struct decoder *d, const struct partition_spec *s)
{
	char path[DECODE_PATH_MAX];
	struct accel a;
	const char *key;
	json_t *value;

	json_object_foreach(s->node_selector, key, value) {
		decode_path(path, sizeof(path), "spec.nodeSelector", key);
		if (!name_is_qualified(key))
			decode_fail(d, path, "key must be a qualified name like example.com/name");
		if (!name_is_label_value(json_string_value(value)))
			decode_fail(d, path, "value must be a label value");
	}
	if (s->tolerations)
		api_validate_tolerations(d, s->tolerations, "spec.tolerations");
	if (s->default_accelerators && accel_parse(s->default_accelerators, &a))
		decode_fail(d, "spec.defaultAccelerators", "\"%.64s\" is not TYPE[:COUNT]",
			    s->default_accelerators);
	if (s->device_class_name && !name_is_dns1123_subdomain(s->device_class_name))
		decode_fail(d, "spec.deviceClassName", "must name a DeviceClass (a DNS subdomain)");
	if (s->queue && *s->queue && !name_is_dns1123_subdomain(s->queue))
		decode_fail(d, "spec.queue", "must name a Kueue LocalQueue (a DNS subdomain)");
	if (s->default_image && !*s->default_image)
		decode_fail(d, "spec.defaultImage", "must not be empty");
	if (s->default_time_s > 0 && s->max_time_s >= 0 && s->default_time_s > s->max_time_s)
		decode_fail(d, "spec.defaultTime", "must not be longer than maxTime");
	if (s->n_scratch) {
		struct tj_spec only = { .scratch = s->scratch, .n_scratch = s->n_scratch };

		tj_validate_scratch(d, &only);
	}
}

int partition_parse(const json_t *obj, struct partition *out, struct field_errors *errs)
{
	struct partition_spec *s = &out->spec;
	const json_t *spec;
	struct decoder d;

	partition_init(out);
	decode_init(&d, errs);
	if (!json_is_object(obj)) {
		decode_fail(&d, "", "a Partition must be a JSON object");
		return decode_finish(&d);
	}
	decode_merge(&d, meta_parse(json_object_get(obj, "metadata"), &out->meta, errs));
	if (out->meta.name && !name_is_dns1123_subdomain(out->meta.name))
		decode_fail(&d, "metadata.name", "must be a DNS subdomain");
	spec = json_object_get(obj, "spec");
	if (!spec || json_is_null(spec))
		return decode_finish(&d);  /* every field is optional */
	if (!decode_as_object(&d, spec, "spec"))
		return decode_finish(&d);
	decode_bool(&d, spec, "spec", "default", &s->is_default);
	decode_string_map_copy(&d, spec, "spec", "nodeSelector", &s->node_selector);
	decode_array_copy(&d, spec, "spec", "tolerations", &s->tolerations);
	decode_string(&d, spec, "spec", "defaultImage", &s->default_image);
	read_time(&d, spec, "defaultTime", &s->default_time, &s->default_time_s);
	read_time(&d, spec, "maxTime", &s->max_time, &s->max_time_s);
	decode_string(&d, spec, "spec", "defaultAccelerators", &s->default_accelerators);
	decode_string(&d, spec, "spec", "deviceClassName", &s->device_class_name);
	decode_string(&d, spec, "spec", "queue", &s->queue);
	tj_decode_scratch(&d, spec, &s->scratch, &s->n_scratch);
	read_namespaces(&d, spec, s);
	decode_int32(&d, spec, "spec", "maxJobPriority", &s->max_job_priority,
		     &s->has_max_job_priority);
	partition_decode_features(&d, spec, &s->features);
	read_preemption(&d, spec, s);
	check_spec(&d, s);
	return decode_finish(&d);
}

const char *partition_preempt_mode_name(enum partition_preempt_mode mode)
{
	switch (mode) {
	case PARTITION_PREEMPT_REQUEUE: return "Requeue";
	case PARTITION_PREEMPT_CANCEL: return "Cancel";
	case PARTITION_PREEMPT_OFF: break;
	}
	return "Off";
}

int64_t partition_grace_seconds(const struct partition_spec *p, bool job_has_signal,
				int64_t signal_seconds_before)
{
	if (p && p->has_grace_time)
		return p->grace_time_s;
	/* The job's own warning is the time it asked for to save its work. */
	if (job_has_signal)
		return signal_seconds_before;
	return PARTITION_GRACE_SECONDS_DEFAULT;
}

/* Older first, then by name: the order the default is chosen in. */
static bool before(const struct partition *a, const struct partition *b)
{
	if (a->meta.creation_timestamp != b->meta.creation_timestamp)
		return a->meta.creation_timestamp < b->meta.creation_timestamp;
	return strcmp(a->meta.name ? a->meta.name : "", b->meta.name ? b->meta.name : "") < 0;
}

const struct partition *partition_default(const struct partition *parts, size_t n,
					  bool *contested)
{
	const struct partition *best = NULL;
	size_t claims = 0;

	for (size_t i = 0; i < n; i++) {
		if (!parts[i].spec.is_default || !parts[i].meta.name)
			continue;
		claims++;
		if (!best || before(&parts[i], best))
			best = &parts[i];
	}
	if (contested)
		*contested = claims > 1;
	return best;
}

const struct partition *partition_find(const struct partition *parts, size_t n,
				       const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (parts[i].meta.name && !strcmp(parts[i].meta.name, name))
			return &parts[i];
	return NULL;
}

void partition_pick(const struct partition *parts, size_t n, const char *recorded,
		    const char *spec_partition, const char *spec_queue, const char **name,
		    const struct partition **found)
{
	const struct partition *def;

	*name = NULL;
	*found = NULL;
	if (recorded && *recorded)
		*name = recorded;
	else if (spec_partition && *spec_partition)
		*name = spec_partition;
	else if (!(spec_queue && *spec_queue) && (def = partition_default(parts, n, NULL)))
		*name = def->meta.name;
	if (*name)
		*found = partition_find(parts, n, *name);
}

/* Copy every member of from not in *to into *to (created when NULL). */
static int merge_map(json_t **to, const json_t *from)
{
	const char *key;
	json_t *value;

	if (!from || !json_object_size(from))
		return 0;
	if (!*to && !(*to = json_object()))
		return CADRE_ENOMEM;
	json_object_foreach((json_t *)from, key, value)
		if (!json_object_get(*to, key) && json_object_set(*to, key, value))
			return CADRE_ENOMEM;
	return 0;
}

static int append_list(json_t **to, const json_t *from)
{
	json_t *copy;

	if (!from || !json_array_size(from))
		return 0;
	if (!*to && !(*to = json_array()))
		return CADRE_ENOMEM;
	if (!(copy = json_deep_copy(from)) || json_array_extend(*to, copy)) {
		json_decref(copy);
		return CADRE_ENOMEM;
	}
	json_decref(copy);
	return 0;
}

int partition_apply(const struct partition *p, struct tj_spec *spec)
{
	const struct partition_spec *ps = &p->spec;
	int err;

	if (!spec->image && ps->default_image && (err = api_strset(&spec->image,
								   ps->default_image)))
		return err;
	/* Slurm: a job without a limit gets DefaultTime, else MaxTime. */
	if (!spec->has_active_deadline_seconds && (ps->default_time_s > 0 || ps->max_time_s > 0)) {
		spec->has_active_deadline_seconds = true;
		spec->active_deadline_seconds = ps->default_time_s > 0 ? ps->default_time_s :
						 ps->max_time_s;
	}
	if (!spec->resources.accelerators && ps->default_accelerators) {
		if ((err = api_strset(&spec->resources.accelerators, ps->default_accelerators)))
			return err;
		spec->resources.has_accel = accel_parse(ps->default_accelerators,
							&spec->resources.accel) == 0;
	}
	if (!spec->resources.device_class && ps->device_class_name &&
	    (err = api_strset(&spec->resources.device_class, ps->device_class_name)))
		return err;
	if (!(spec->queue && *spec->queue) && ps->queue && *ps->queue &&
	    (err = api_strset(&spec->queue, ps->queue)))
		return err;
	if (!spec->partition && (err = api_strset(&spec->partition, p->meta.name)))
		return err;
	/* A job that asks for no scratch gets the partition's, as a Slurm site gives $TMPDIR. */
	if (!spec->n_scratch && ps->n_scratch &&
	    (err = tj_scratch_copy(ps->scratch, ps->n_scratch, &spec->scratch, &spec->n_scratch)))
		return err;
	if ((err = merge_map(&spec->pod_template.node_selector, ps->node_selector)) ||
	    (err = partition_apply_constraint(p, spec)))
		return err;
	return append_list(&spec->pod_template.tolerations, ps->tolerations);
}

/* a is b or under it. */
static bool at_or_under(const char *a, const char *b)
{
	size_t n = strlen(b);

	return !strncmp(a, b, n) && (a[n] == '\0' || a[n] == '/');
}

bool partition_refuses(const struct partition *p, const struct tj_spec *spec, char *out,
		       size_t size)
{
	const struct partition_spec *ps = &p->spec;
	char limit[32], asked[32];

	if (ps->max_time_s >= 0 && spec->has_active_deadline_seconds &&
	    spec->active_deadline_seconds > ps->max_time_s) {
		slurm_time_hms(ps->max_time_s, limit);
		slurm_time_hms(spec->active_deadline_seconds, asked);
		snprintf(out, size, "time limit %s is past partition %s's MaxTime %s", asked,
			 p->meta.name ? p->meta.name : "", limit);
		return true;
	}
	if (ps->queue && *ps->queue && spec->queue && *spec->queue &&
	    strcmp(ps->queue, spec->queue)) {
		snprintf(out, size, "spec.queue %.63s is not partition %s's queue %.63s: name one "
			 "or the other", spec->queue, p->meta.name ? p->meta.name : "", ps->queue);
		return true;
	}
	/* sbatch: "Invalid feature specification". */
	if (partition_lacks_feature(p, spec->nodes.constraint, out, size))
		return true;
	/* The partition's scratch, which a job without its own gets, beside its Volumes. */
	for (size_t i = 0; !spec->n_scratch && i < ps->n_scratch; i++)
		for (size_t j = 0; j < spec->n_volumes; j++) {
			const char *s = ps->scratch[i].mount_path, *v = spec->volumes[j].mount_path;

			if (at_or_under(s, v) || at_or_under(v, s)) {
				snprintf(out, size, "partition %s's scratch %.128s overlaps the mount "
					 "path %.128s of spec.volumes: give the job a spec.scratch "
					 "of its own", p->meta.name ? p->meta.name : "", s, v);
				return true;
			}
		}
	return false;
}

bool partition_forbids(const struct partition *p, const char *ns, const struct tj_spec *spec,
		       char *out, size_t size)
{
	const struct partition_spec *ps = &p->spec;
	const char *name = p->meta.name ? p->meta.name : "";
	bool listed = !ps->allowed_namespaces;

	for (size_t i = 0; !listed && i < ps->n_allowed_namespaces; i++)
		listed = ns && !strcmp(ps->allowed_namespaces[i], ns);
	if (!listed) {
		snprintf(out, size, "partition %s: namespace %.63s is not in spec.allowedNamespaces",
			 name, ns ? ns : "");
		return true;
	}
	if (ps->has_max_job_priority && spec->priority > ps->max_job_priority) {
		snprintf(out, size, "spec.priority %d is above partition %s's maxJobPriority %d",
			 (int)spec->priority, name, (int)ps->max_job_priority);
		return true;
	}
	return false;
}
