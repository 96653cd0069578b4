/*
 * partitions.c - a job's Partition from the cache (partitions.h).
 */
#include "controller/partition/partitions.h"

#include "api/decode.h"
#include "api/fielderr.h"
#include "api/partition.h"
#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "controller/manager/manager.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every cached Partition, parsed; one that does not parse is kept with its name. */
static int load(struct manager *m, struct partition **out, size_t *n, json_t **bad)
{
	json_t *list = NULL, *obj;
	struct partition *parts;
	size_t i;
	int err;

	*out = NULL;
	*n = 0;
	if (!m->stores[KIND_PARTITIONS])
		return 0;
	if ((err = store_list(m->stores[KIND_PARTITIONS], &list)))
		return err;
	parts = calloc(json_array_size(list) + 1, sizeof(*parts));
	if (!parts) {
		json_decref(list);
		return CADRE_ENOMEM;
	}
	json_array_foreach(list, i, obj) {
		struct field_errors errs;
		struct buf why;

		field_errors_init(&errs);
		err = partition_parse(obj, &parts[*n], &errs);
		if (err == CADRE_EINVAL && parts[*n].meta.name) {
			buf_init(&why, 400);
			field_errors_join(&errs, &why);
			json_object_set_new(*bad, parts[*n].meta.name, json_string(buf_str(&why)));
			buf_release(&why);
			err = 0;
		}
		field_errors_release(&errs);
		if (err) {
			partition_release(&parts[*n]);
			if (err == CADRE_ENOMEM) {
				for (size_t k = 0; k < *n; k++)
					partition_release(&parts[k]);
				free(parts);
				json_decref(list);
				return err;
			}
			continue;
		}
		(*n)++;
	}
	json_decref(list);
	*out = parts;
	return 0;
}

/* The partition job->status recorded at its admission, applied to its spec. */
static int apply_recorded(struct trainingjob *job, struct job_partition *out)
{
	json_t *obj = json_pack("{s:s, s:s, s:{s:s}, s:O}", "apiVersion", "cadre.dev/v1alpha1",
				"kind", "Partition", "metadata", "name", job->status.partition,
				"spec", job->status.partition_spec);
	struct field_errors errs;
	struct partition p;
	int err;

	if (!obj)
		return CADRE_ENOMEM;
	field_errors_init(&errs);
	err = partition_parse(obj, &p, &errs);
	field_errors_release(&errs);
	json_decref(obj);
	/* A record that no longer parses (a later schema): the job goes on as admitted. */
	if (!err && !(err = partition_apply(&p, &job->spec))) {
		snprintf(out->name, sizeof(out->name), "%s", job->status.partition);
		out->verdict = PARTITION_APPLIED;
	}
	partition_release(&p);
	return err == CADRE_EINVAL ? 0 : err;
}

/* The tail of partitions_apply_set: the rules of submission, then the partition applied. */
static int apply_found(const struct partition *found, struct trainingjob *job,
		       struct job_partition *out)
{
	struct tj_spec *spec = &job->spec;
	int err;

	/* A time limit or queue the partition refuses is refused at submission, as in
	 * Slurm; an admitted job admitted without a record keeps running. */
	if (!job->status.admitted_time &&
	    partition_refuses(found, spec, out->message, sizeof(out->message))) {
		out->verdict = PARTITION_REFUSED;
		return 0;
	}
	/* Who may submit, and at what priority, is asked of a job still waiting for
	 * admission: an admin's later edit of the partition never fails a running job. */
	if (!job->status.admitted_time &&
	    partition_forbids(found, job->meta.namespace, spec, out->message,
			      sizeof(out->message))) {
		out->verdict = PARTITION_REFUSED;
		return 0;
	}
	if ((err = partition_apply(found, spec)))
		return err;
	out->verdict = PARTITION_APPLIED;
	return 0;
}

int partitions_apply(struct manager *m, struct trainingjob *job, struct job_partition *out)
{
	struct partition_set set = { .device_class = m->opts->device_class_name };
	int err;

	memset(out, 0, sizeof(*out));
	/* A job admitted before it had a partition, or with one recorded: no lookup. */
	if (job->status.admitted_time && (!job->status.partition || job->status.partition_spec))
		return partitions_apply_set(&set, job, out);
	err = partitions_load(m, &set);
	if (!err)
		err = partitions_apply_set(&set, job, out);
	partitions_release(&set);
	return err;
}

static int apply_set(const struct partition_set *set, struct trainingjob *job,
		     struct job_partition *out)
{
	struct tj_spec *spec = &job->spec;
	const struct partition *found;
	const char *name, *why;

	memset(out, 0, sizeof(*out));
	/* A job admitted before it had a partition stays where it was put. */
	if (!job->status.partition && job->status.admitted_time)
		return 0;
	/* Admitted: what it took from its partition then, whatever the partition is now. */
	if (job->status.admitted_time && job->status.partition_spec)
		return apply_recorded(job, out);
	partition_pick(set->parts, set->n, job->status.partition, spec->partition, spec->queue,
		       &name, &found);
	if (!name && spec->nodes.constraint && !job->status.admitted_time) {
		/* Features are a Partition's (spec.features): with none, nothing defines them. */
		out->verdict = PARTITION_REFUSED;
		snprintf(out->message, sizeof(out->message), "spec.constraint %.200s names node "
			 "features, which a Partition defines (spec.features), and the job has no "
			 "partition", spec->nodes.constraint);
		return 0;
	}
	if (!name)
		return 0;
	snprintf(out->name, sizeof(out->name), "%s", name);
	if (!found && job->status.admitted_time) {
		/* Its partition was deleted under it: it goes on where it was admitted. */
		out->name[0] = '\0';
		return 0;
	}
	if (!found) {
		out->verdict = PARTITION_UNKNOWN;
		/* slurmctld's words (job_mgr.c), which sbatch prints. */
		snprintf(out->message, sizeof(out->message), "invalid partition specified: %s", name);
		return 0;
	}
	if ((why = json_string_value(json_object_get(set->bad, name)))) {
		out->verdict = PARTITION_REFUSED;
		snprintf(out->message, sizeof(out->message), "partition %s is not valid: %s", name,
			 why);
		return 0;
	}
	return apply_found(found, job, out);
}

/*
 * The controller's DeviceClass (--device-class-name) goes to a job whose
 * partition (or lack of one) names none: a site whose GPUs all come through
 * DRA says so once.
 */
int partitions_apply_set(const struct partition_set *set, struct trainingjob *job,
			 struct job_partition *out)
{
	struct tj_resources *r = &job->spec.resources;
	int err = apply_set(set, job, out);

	if (err || out->verdict == PARTITION_REFUSED || out->verdict == PARTITION_UNKNOWN ||
	    r->device_class || !set->device_class || !*set->device_class)
		return err;
	return api_strset(&r->device_class, set->device_class);
}

int partitions_load(struct manager *m, struct partition_set *set)
{
	memset(set, 0, sizeof(*set));
	set->device_class = m->opts->device_class_name;
	set->bad = json_object();
	if (!set->bad)
		return CADRE_ENOMEM;
	return load(m, &set->parts, &set->n, &set->bad);
}

void partitions_release(struct partition_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		partition_release(&set->parts[i]);
	free(set->parts);
	json_decref(set->bad);
	memset(set, 0, sizeof(*set));
}

void partitions_preempt_of(const struct partition_set *set, const struct trainingjob *job,
			   struct job_preempt *out)
{
	const struct tj_spec *spec = &job->spec;
	const struct partition *found = NULL;
	const char *name = NULL;

	partition_pick(set->parts, set->n, job->status.partition, spec->partition, spec->queue,
		       &name, &found);
	*out = (struct job_preempt){ 0 };
	out->grace_s = partition_grace_seconds(found ? &found->spec : NULL,
					       spec->signal.name != NULL,
					       spec->signal.seconds_before);
	if (!found)
		return;
	out->tier = found->spec.priority_tier;
	out->mode = (int)found->spec.preempt_mode;
	out->exempt_s = found->spec.preempt_exempt_s;
}

void partitions_preempt_named(const struct partition_set *set, const char *recorded,
			      const char *spec_partition, const char *queue,
			      struct job_preempt *out)
{
	const struct partition *found = NULL;
	const char *name = NULL;

	partition_pick(set->parts, set->n, recorded && *recorded ? recorded : NULL,
		       spec_partition && *spec_partition ? spec_partition : NULL,
		       queue && *queue ? queue : NULL, &name, &found);
	*out = (struct job_preempt){ 0 };
	if (!found)
		return;
	out->tier = found->spec.priority_tier;
	out->mode = (int)found->spec.preempt_mode;
	out->exempt_s = found->spec.preempt_exempt_s;
}

bool partitions_preemptable_below(const struct partition_set *set, int32_t tier)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->parts[i].spec.priority_tier < tier &&
		    set->parts[i].spec.preempt_mode != PARTITION_PREEMPT_OFF)
			return true;
	return false;
}
