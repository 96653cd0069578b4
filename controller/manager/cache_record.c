#include "controller/manager/cache_record.h"
#include "base/err.h"
#include "api/fielderr.h"
#include "api/labels.h"
#include "api/quantity.h"
#include "api/trainingjob.h"

#include <string.h>

/*
 * Records are bytes: a header copied in and out with memcpy (records need
 * no particular alignment), then fixed-size numbers, then NUL-terminated
 * strings. The magic tells a record of one kind from anything else.
 */
#define POD_MAGIC 0x50
#define JOB_MAGIC 0x4a

struct pod_hdr {
	int64_t cpu_milli, memory_milli;
	int32_t attempt, rank;
	uint8_t magic, phase, n_ext, bound, pinned, flags;
};

#define POD_NODE_SERVICE 0x01
#define POD_EXCLUSIVE 0x02

struct job_hdr {
	int64_t not_before;
	int64_t run_started;
	int32_t attempt, num_nodes, awaiting_nodes;
	int32_t priority, preempted_attempt;
	uint8_t magic, candidacy;
};

/* When the gang's current run started: its Running condition, else status.startTime. */
static int64_t run_started(const struct trainingjob *job)
{
	const struct condition *c = condition_find(&job->status.conditions, "Running");

	if (c && c->last_transition_time && c->status && !strcmp(c->status, "True"))
		return c->last_transition_time;
	return job->status.start_time;
}

/* A bounded writer over rec. */
struct rec_out {
	unsigned char *p;
	size_t len, size;
	int err;
};

static void put(struct rec_out *o, const void *data, size_t n)
{
	if (o->err || n > o->size - o->len) {
		o->err = CADRE_EINVAL;
		return;
	}
	memcpy(o->p + o->len, data, n);
	o->len += n;
}

static void put_str(struct rec_out *o, const char *s)
{
	put(o, s ? s : "", strlen(s ? s : "") + 1);
}

/* The next NUL-terminated string of rec at *off, or NULL past its end. */
static const char *get_str(const void *rec, size_t len, size_t *off)
{
	const char *s = (const char *)rec + *off;
	const char *nul = *off < len ? memchr(s, '\0', len - *off) : NULL;

	if (!nul)
		return NULL;
	*off += (size_t)(nul - s) + 1;
	return s;
}

static const char *str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* A ResourceList split as admission counts it (gang.c read_resources). */
struct split {
	int64_t cpu_milli, memory_milli, pods;
	size_t n_ext;                /* the other resources, in names[] and milli[] */
};

/* Split list into sp; at most max other resources are kept, in list order. */
static void split_resources(const json_t *list, struct split *sp, const char **names,
			    int64_t *milli, size_t max)
{
	const char *name;
	json_t *value;

	*sp = (struct split){ 0 };
	json_object_foreach((json_t *)list, name, value) {
		int64_t m;

		if (!json_string_value(value) || quantity_parse(json_string_value(value), &m))
			continue;
		if (!strcmp(name, "cpu"))
			sp->cpu_milli += m;
		else if (!strcmp(name, "memory"))
			sp->memory_milli += m;
		else if (!strcmp(name, "pods"))
			sp->pods = m / 1000;
		else if (sp->n_ext < max) {
			names[sp->n_ext] = name;
			milli[sp->n_ext++] = m;
		}
	}
}

int cache_record_pod(const json_t *pod, void *rec, size_t size, void *arg)
{
	struct rec_out o = { rec, 0, size, 0 };
	struct pod_hdr h = { .magic = POD_MAGIC, .phase = POD_UNKNOWN, .attempt = -1,
			     .rank = -1 };
	const char *names[CACHE_POD_EXT_MAX], *node, *pinned = NULL, *exclusive;
	int64_t milli[CACHE_POD_EXT_MAX];
	const json_t *requests;
	struct split sp;

	(void)arg;
	if (json_object_get(pod, "metadata")) {
		const json_t *spec = json_object_get(pod, "spec");
		const json_t *c = json_array_get(json_object_get(spec, "containers"), 0);
		struct podview v;

		podview_read(pod, &v);
		h.phase = (uint8_t)v.phase;
		h.attempt = v.attempt;
		h.rank = v.rank;
		node = v.node;
		if (!node && !v.deleting)
			pinned = str(spec, "pinnedNode");
		exclusive = str(json_object_get(json_object_get(pod, "metadata"), "labels"),
				LABEL_EXCLUSIVE);
		if (exclusive && !strcmp(exclusive, "true"))
			h.flags |= POD_EXCLUSIVE;
		requests = json_object_get(json_object_get(c, "resources"), "requests");
	} else {
		/* Pinned and not yet bound, it will be there: count it there already. */
		node = str(pod, "nodeName") ? str(pod, "nodeName") : str(pod, "pinnedNode");
		requests = json_object_get(pod, "requests");
		if (json_is_true(json_object_get(pod, "nodeService")))
			h.flags |= POD_NODE_SERVICE;
	}
	split_resources(requests, &sp, names, milli, CACHE_POD_EXT_MAX);
	h.cpu_milli = sp.cpu_milli;
	h.memory_milli = sp.memory_milli;
	h.n_ext = (uint8_t)sp.n_ext;
	h.bound = node != NULL;
	h.pinned = pinned != NULL;
	put(&o, &h, sizeof(h));
	put(&o, milli, h.n_ext * sizeof(*milli));
	put_str(&o, node ? node : pinned);
	for (uint8_t i = 0; i < h.n_ext; i++)
		put_str(&o, names[i]);
	return o.err ? o.err : (int)o.len;
}

int cache_pod_read(const void *rec, size_t len, struct cache_pod *out)
{
	struct pod_hdr h;
	size_t off;
	const char *node;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return CADRE_EINVAL;
	memcpy(&h, rec, sizeof(h));
	off = sizeof(h) + h.n_ext * sizeof(int64_t);
	if (h.magic != POD_MAGIC || h.n_ext > CACHE_POD_EXT_MAX || off > len)
		return CADRE_EINVAL;
	memcpy(out->ext_milli, (const char *)rec + sizeof(h), h.n_ext * sizeof(int64_t));
	node = get_str(rec, len, &off);
	for (uint8_t i = 0; i < h.n_ext; i++)
		if (!(out->ext_name[i] = get_str(rec, len, &off)))
			return CADRE_EINVAL;
	if (!node)
		return CADRE_EINVAL;
	out->node = h.bound ? node : NULL;
	out->pinned = h.pinned ? node : NULL;
	out->cpu_milli = h.cpu_milli;
	out->memory_milli = h.memory_milli;
	out->n_ext = h.n_ext;
	out->phase = (enum pod_phase)h.phase;
	out->attempt = h.attempt;
	out->rank = h.rank;
	out->node_service = h.flags & POD_NODE_SERVICE;
	out->exclusive = h.flags & POD_EXCLUSIVE;
	return 0;
}

int cache_record_job(const json_t *obj, void *rec, size_t size, void *arg)
{
	struct rec_out o = { rec, 0, size, 0 };
	struct job_hdr h = { .magic = JOB_MAGIC };
	struct field_errors errs;
	struct trainingjob job;

	(void)arg;
	field_errors_init(&errs);
	h.candidacy = CANDIDACY_NONE;
	if (tj_parse(obj, &job, &errs) == 0 && tj_validate(&job, &errs) == 0)
		h.candidacy = (uint8_t)tj_candidacy(&job, &h.not_before, NULL);
	h.attempt = tj_attempt(&job.status);
	h.num_nodes = job.spec.num_nodes;
	if (tj_in_place_current(&job.status))
		h.awaiting_nodes = job.spec.num_nodes - tj_ranks_placed(&job.status,
								       job.spec.num_nodes);
	h.priority = job.spec.priority;
	h.run_started = run_started(&job);
	h.preempted_attempt = job.status.has_preemption ? job.status.preemption.attempt : -1;
	put(&o, &h, sizeof(h));
	put_str(&o, job.meta.uid);
	put_str(&o, str(json_object_get(obj, "status"), "phase"));
	put_str(&o, job.status.partition);
	put_str(&o, job.spec.partition);
	put_str(&o, job.spec.queue);
	field_errors_release(&errs);
	tj_release(&job);
	return o.err ? o.err : (int)o.len;
}

int cache_job_read(const void *rec, size_t len, struct cache_job *out)
{
	struct job_hdr h;
	size_t off = sizeof(h);

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return CADRE_EINVAL;
	memcpy(&h, rec, sizeof(h));
	if (h.magic != JOB_MAGIC)
		return CADRE_EINVAL;
	out->uid = get_str(rec, len, &off);
	out->phase = get_str(rec, len, &off);
	out->partition = get_str(rec, len, &off);
	out->spec_partition = get_str(rec, len, &off);
	out->queue = get_str(rec, len, &off);
	if (!out->uid || !out->phase || !out->partition || !out->spec_partition || !out->queue)
		return CADRE_EINVAL;
	out->priority = h.priority;
	out->run_started = h.run_started;
	out->preempted_attempt = h.preempted_attempt;
	out->candidacy = (enum tj_candidacy)h.candidacy;
	out->not_before = h.not_before;
	out->attempt = h.attempt;
	out->num_nodes = h.num_nodes;
	out->awaiting_nodes = h.awaiting_nodes;
	return 0;
}

enum cap_effect cache_effect_parse(const char *s)
{
	if (!s || !*s)
		return CAP_EFFECT_ANY;
	if (!strcmp(s, "NoSchedule"))
		return CAP_NO_SCHEDULE;
	if (!strcmp(s, "PreferNoSchedule"))
		return CAP_PREFER_NO_SCHEDULE;
	return CAP_NO_EXECUTE;
}

#define NODE_MAGIC 0x4e
#define TAINT_HAS_KEY 0x10
#define TAINT_HAS_VALUE 0x20

struct node_hdr {
	int64_t cpu_milli, memory_milli, pods;
	uint16_t n_ext, n_labels, n_taints;
	uint8_t magic, ready, unschedulable;
};

int cache_record_node(const json_t *node, void *rec, size_t size, void *arg)
{
	const json_t *meta = json_object_get(node, "metadata");
	const json_t *spec = json_object_get(node, "spec");
	const json_t *status = json_object_get(node, "status");
	const json_t *labels = json_object_get(meta, "labels"), *cond, *taint;
	const json_t *taints = json_object_get(spec, "taints");
	struct node_hdr h = { .magic = NODE_MAGIC };
	struct rec_out o = { rec, 0, size, 0 };
	const char *names[64], *key;
	int64_t milli[64];
	struct split sp;
	json_t *value;
	size_t i;

	(void)arg;
	h.unschedulable = json_is_true(json_object_get(spec, "unschedulable"));
	json_array_foreach(json_object_get(status, "conditions"), i, cond)
		if (str(cond, "type") && !strcmp(str(cond, "type"), "Ready"))
			h.ready = str(cond, "status") && !strcmp(str(cond, "status"), "True");
	split_resources(json_object_get(status, "allocatable"), &sp, names, milli, 64);
	h.cpu_milli = sp.cpu_milli;
	h.memory_milli = sp.memory_milli;
	h.pods = sp.pods;
	h.n_ext = (uint16_t)sp.n_ext;
	json_object_foreach((json_t *)labels, key, value)
		h.n_labels += json_string_value(value) != NULL;
	if (json_array_size(taints) > UINT16_MAX || h.n_labels == UINT16_MAX)
		return 0;
	h.n_taints = (uint16_t)json_array_size(taints);
	put(&o, &h, sizeof(h));
	put(&o, milli, h.n_ext * sizeof(*milli));
	json_array_foreach(taints, i, taint) {
		uint8_t info = (uint8_t)cache_effect_parse(str(taint, "effect"));

		info |= str(taint, "key") ? TAINT_HAS_KEY : 0;
		info |= str(taint, "value") ? TAINT_HAS_VALUE : 0;
		put(&o, &info, 1);
	}
	put_str(&o, str(meta, "name"));
	for (i = 0; i < h.n_ext; i++)
		put_str(&o, names[i]);
	json_object_foreach((json_t *)labels, key, value)
		if (json_string_value(value)) {
			put_str(&o, key);
			put_str(&o, json_string_value(value));
		}
	json_array_foreach(taints, i, taint) {
		if (str(taint, "key"))
			put_str(&o, str(taint, "key"));
		if (str(taint, "value"))
			put_str(&o, str(taint, "value"));
	}
	return o.err ? 0 : (int)o.len;
}

static int node_hdr_read(const void *rec, size_t len, struct node_hdr *h, size_t *off)
{
	if (len < sizeof(*h))
		return CADRE_EINVAL;
	memcpy(h, rec, sizeof(*h));
	*off = sizeof(*h) + h->n_ext * sizeof(int64_t) + h->n_taints;
	if (h->magic != NODE_MAGIC || *off > len)
		return CADRE_EINVAL;
	return 0;
}

int cache_node_counts(const void *rec, size_t len, struct cache_node_counts *out)
{
	struct node_hdr h;
	size_t off;
	int err = node_hdr_read(rec, len, &h, &off);

	if (err)
		return err;
	*out = (struct cache_node_counts){ h.n_ext, h.n_labels, h.n_taints };
	return 0;
}

int cache_node_read(const void *rec, size_t len, struct cap_node *out, struct cap_resource *ext,
		    struct cap_label *labels, struct cap_taint *taints)
{
	const unsigned char *info;
	struct node_hdr h;
	size_t off, i;
	int err = node_hdr_read(rec, len, &h, &off);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	info = (const unsigned char *)rec + sizeof(h) + h.n_ext * sizeof(int64_t);
	if (!(out->name = get_str(rec, len, &off)))
		return CADRE_EINVAL;
	for (i = 0; i < h.n_ext; i++) {
		memcpy(&ext[i].milli, (const char *)rec + sizeof(h) + i * sizeof(int64_t),
		       sizeof(int64_t));
		if (!(ext[i].name = get_str(rec, len, &off)))
			return CADRE_EINVAL;
	}
	for (i = 0; i < h.n_labels; i++)
		if (!(labels[i].key = get_str(rec, len, &off)) ||
		    !(labels[i].value = get_str(rec, len, &off)))
			return CADRE_EINVAL;
	for (i = 0; i < h.n_taints; i++) {
		taints[i].key = info[i] & TAINT_HAS_KEY ? get_str(rec, len, &off) : NULL;
		taints[i].value = info[i] & TAINT_HAS_VALUE ? get_str(rec, len, &off) : NULL;
		taints[i].effect = (enum cap_effect)(info[i] & 0x0f);
		if ((info[i] & TAINT_HAS_KEY && !taints[i].key) ||
		    (info[i] & TAINT_HAS_VALUE && !taints[i].value))
			return CADRE_EINVAL;
	}
	out->ready = h.ready;
	out->unschedulable = h.unschedulable;
	out->cpu_milli = h.cpu_milli;
	out->memory_milli = h.memory_milli;
	out->pods = h.pods;
	out->extended = ext;
	out->n_extended = h.n_ext;
	out->labels = labels;
	out->n_labels = h.n_labels;
	out->taints = taints;
	out->n_taints = h.n_taints;
	return 0;
}

int cache_node_ready(const void *rec, size_t len)
{
	struct node_hdr h;
	size_t off;
	int err = node_hdr_read(rec, len, &h, &off);

	return err ? err : h.ready != 0;
}

const char *cache_node_label(const void *rec, size_t len, const char *key)
{
	struct node_hdr h;
	size_t off, i;

	if (node_hdr_read(rec, len, &h, &off) || !get_str(rec, len, &off))
		return NULL;
	for (i = 0; i < h.n_ext; i++)
		if (!get_str(rec, len, &off))
			return NULL;
	for (i = 0; i < h.n_labels; i++) {
		const char *k = get_str(rec, len, &off), *v = get_str(rec, len, &off);

		if (!k || !v)
			return NULL;
		if (!strcmp(k, key))
			return v;
	}
	return NULL;
}
