/*
 * gang.c - built-in gang admission against the live caches: the glue that
 * turns cached Nodes, pods and TrainingJobs into the inputs of the pure
 * capacity model (capacity.c) and admission queue (admission.c), and their
 * verdict back into the planner's terms. docs/gang-admission.md says how
 * the decision itself is made.
 *
 * Every string the model sees is borrowed from snapshots this file holds
 * for the length of one decision; the arrays it builds are freed at the end.
 */
#include "controller/admission/gang.h"
#include "controller/admission/gang_internal.h"
#include "controller/admission/gang_pass.h"
#include "controller/admission/gang_preempt.h"
#include "controller/admission/ranks.h"
#include "base/err.h"
#include "api/accel.h"
#include "api/fielderr.h"
#include "api/quantity.h"
#include "controller/admission/admission.h"
#include "controller/admission/affinity.h"
#include "controller/manager/cache_record.h"
#include "controller/admission/capacity.h"
#include "controller/admission/topology.h"
#include "controller/admission/topology_watch.h"
#include "controller/admission/volume_affinity.h"
#include "controller/build/build.h"
#include "controller/manager/manager.h"
#include "controller/partition/partitions.h"
#include "controller/trainingjob/podview.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>


void *gang_scratch_alloc(struct scratch *s, size_t count, size_t size)
{
	void **more;
	void *p;

	if (!count)
		return NULL;
	p = calloc(count, size);
	more = p ? realloc(s->blocks, (s->n + 1) * sizeof(*more)) : NULL;
	if (!more) {
		free(p);
		s->err = CADRE_ENOMEM;
		return NULL;
	}
	s->blocks = more;
	s->blocks[s->n++] = p;
	return p;
}

void gang_scratch_release(struct scratch *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->blocks[i]);
	free(s->blocks);
}

static const char *str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* A requests or allocatable object as cpu, memory and the rest. */
static void read_resources(struct scratch *s, const json_t *list, int64_t *cpu, int64_t *memory,
			   int64_t *pods, const struct cap_resource **ext, size_t *n_ext)
{
	struct cap_resource *out = gang_scratch_alloc(s, json_object_size(list), sizeof(*out));
	const char *name;
	json_t *value;
	size_t n = 0;

	json_object_foreach((json_t *)list, name, value) {
		int64_t milli;

		if (!json_string_value(value) || quantity_parse(json_string_value(value), &milli))
			continue;
		if (!strcmp(name, "cpu"))
			*cpu += milli;
		else if (!strcmp(name, "memory"))
			*memory += milli;
		else if (!strcmp(name, "pods")) {
			if (pods)
				*pods = milli / 1000;
		} else if (out) {
			out[n].name = name;
			out[n++].milli = milli;
		}
	}
	*ext = out;
	*n_ext = n;
}

static void read_node(struct scratch *s, const json_t *node, struct cap_node *cn)
{
	const json_t *meta = json_object_get(node, "metadata");
	const json_t *spec = json_object_get(node, "spec");
	const json_t *status = json_object_get(node, "status");
	const json_t *labels = json_object_get(meta, "labels"), *taint, *cond;
	struct cap_label *lab = gang_scratch_alloc(s, json_object_size(labels), sizeof(*lab));
	struct cap_taint *tnt = gang_scratch_alloc(s, json_array_size(json_object_get(spec, "taints")),
					      sizeof(*tnt));
	const char *key;
	json_t *value;
	size_t i;

	cn->name = str(meta, "name") ? str(meta, "name") : "";
	cn->unschedulable = json_is_true(json_object_get(spec, "unschedulable"));
	json_array_foreach(json_object_get(status, "conditions"), i, cond)
		if (str(cond, "type") && !strcmp(str(cond, "type"), "Ready"))
			cn->ready = str(cond, "status") && !strcmp(str(cond, "status"), "True");
	read_resources(s, json_object_get(status, "allocatable"), &cn->cpu_milli,
		       &cn->memory_milli, &cn->pods, &cn->extended, &cn->n_extended);
	json_object_foreach((json_t *)labels, key, value)
		if (lab && json_string_value(value)) {
			lab[cn->n_labels].key = key;
			lab[cn->n_labels++].value = json_string_value(value);
		}
	cn->labels = lab;
	json_array_foreach(json_object_get(spec, "taints"), i, taint)
		if (tnt) {
			tnt[cn->n_taints].key = str(taint, "key");
			tnt[cn->n_taints].value = str(taint, "value");
			tnt[cn->n_taints++].effect = cache_effect_parse(str(taint, "effect"));
		}
	cn->taints = tnt;
}


int gang_key_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether pod key "ns/<job>-<rank>" is a pod of a held gang. */
static bool pod_of_held(const struct charge_ctx *c, const char *key, int rank)
{
	char suffix[16], job[STORE_KEY_MAX];
	const char *want = job;
	size_t len = strlen(key);
	int n;

	if (!c->n_held || rank < 0)
		return false;
	n = snprintf(suffix, sizeof(suffix), "-%d", rank);
	if (n <= 0 || (size_t)n >= len || (size_t)(len - (size_t)n) >= sizeof(job) ||
	    strcmp(key + len - (size_t)n, suffix))
		return false;
	memcpy(job, key, len - (size_t)n);
	job[len - (size_t)n] = '\0';
	return bsearch(&want, c->held, c->n_held, sizeof(*c->held), gang_key_cmp) != NULL;
}

/*
 * A pod on its node: its requests used; the node occupied unless the pod
 * is a service of the node (DaemonSet, static); held whole when the pod is
 * an exclusive job's (spec.exclusive).
 */
void gang_charge(struct charge_ctx *c, const struct cache_pod *p)
{
	struct cap_resource ext[CACHE_POD_EXT_MAX];
	size_t n = 0;

	/*
	 * A pod asking for a DeviceClass's devices by name got them through a
	 * claim kube-scheduler made for it, and the claim counts them
	 * (dra_capacity.h): not twice.
	 */
	for (size_t i = 0; i < p->n_ext; i++)
		if (strncmp(p->ext_name[i], CAP_DEVICE_CLASS_PREFIX, strlen(CAP_DEVICE_CLASS_PREFIX)))
			ext[n++] = (struct cap_resource){ .name = p->ext_name[i],
							  .milli = p->ext_milli[i] };
	capacity_use(c->cap, p->node, p->cpu_milli, p->memory_milli, ext, n);
	if (!p->node_service)
		capacity_occupy(c->cap, p->node);
	if (p->exclusive)
		capacity_hold_whole(c->cap, p->node);
}

/*
 * Everybody else's pods are cached as summaries: {nodeName, requests}. With
 * --namespace that cache holds cadre's own pods of the namespace too; those
 * are charged from the own-pod cache, once (a pod that only one of the two
 * watches has delivered yet is charged by that one). Both walks read the
 * pods' records (cache_record.h), never the pods.
 */
static int charge_other_pod(void *arg, const char *key, const void *rec, size_t len)
{
	struct charge_ctx *c = arg;
	struct cache_pod p;

	if (cache_pod_read(rec, len, &p) || !p.node)
		return 0;
	if (c->own && store_contains(c->own, key))
		return 0;
	gang_charge(c, &p);
	return 0;
}

/*
 * cadre's own pods: main's requests, once bound or pinned and until they
 * end; a held gang's pods are left to charge_admitted. A pinned pod of a
 * gang that holds nothing now (suspended, restarting, deleted, refused:
 * candidate.h) may still be bound there until it is deleted, so it is
 * charged there.
 */
static int charge_own_pod(void *arg, const char *key, const void *rec, size_t len)
{
	struct charge_ctx *c = arg;
	struct cache_pod p;

	if (cache_pod_read(rec, len, &p) || (!p.node && !p.pinned) || p.phase == POD_SUCCEEDED ||
	    p.phase == POD_FAILED || pod_of_held(c, key, p.rank))
		return 0;
	if (!p.node)
		p.node = p.pinned;
	gang_charge(c, &p);
	return 0;
}

/*
 * The ephemeral-storage its emptyDir scratch asks of a node (build_pod.c),
 * and the nodes it leaves behind (docs/design.md 1.4): after failures there,
 * and, apart, where its gang timed out before.
 */
static void demand_scratch_and_exclusions(struct scratch *s, const struct trainingjob *job,
					  struct cap_demand *d)
{
	const struct tj_status *st = &job->status;
	int64_t scratch = build_scratch_request_milli(job);

	if (scratch > 0) {
		struct cap_resource *disk = gang_scratch_alloc(s, 1, sizeof(*disk));

		if (disk) {
			*disk = (struct cap_resource){ "ephemeral-storage", scratch };
			d->extra = disk;
			d->n_extra = 1;
		}
	}
	if (st->n_excluded_nodes) {
		const char **avoid = gang_scratch_alloc(s, st->n_excluded_nodes, sizeof(*avoid));
		const char **timed_out = gang_scratch_alloc(s, st->n_excluded_nodes, sizeof(*timed_out));

		for (size_t i = 0; avoid && timed_out && i < st->n_excluded_nodes; i++) {
			const struct tj_excluded_node *x = &st->excluded_nodes[i];

			if (!x->node)
				continue;
			if (tj_excluded_timed_out(x))
				timed_out[d->n_timed_out++] = x->node;
			else
				avoid[d->n_avoid++] = x->node;
		}
		d->avoid = avoid;
		d->timed_out = timed_out;
	}
}

void gang_demand_of(struct scratch *s, const struct trainingjob *job, struct cap_demand *d)
{
	const struct tj_resources *r = &job->spec.resources;
	const json_t *sel = job->spec.pod_template.node_selector;
	const json_t *tols = job->spec.pod_template.tolerations, *tol;
	struct cap_label *lab = gang_scratch_alloc(s, json_object_size(sel), sizeof(*lab));
	struct cap_toleration *tl = gang_scratch_alloc(s, json_array_size(tols), sizeof(*tl));
	const char *key;
	json_t *value;
	size_t i;

	memset(d, 0, sizeof(*d));
	d->cpu_milli = r->has_cpus ? r->cpus_milli : 0;
	d->memory_milli = r->has_memory ? r->memory_milli : 0;
	if (r->has_accel) {
		d->accel_resource = r->accelerator_resource ? r->accelerator_resource :
				    "nvidia.com/gpu";
		d->accel_count = r->accel.count;
		d->accel_type = r->accel.type;
	}
	if (r->has_accel && r->device_class && *r->device_class) {
		size_t size = strlen(CAP_DEVICE_CLASS_PREFIX) + strlen(r->device_class) + 1;
		char *name = gang_scratch_alloc(s, size, 1);

		/* Its pods still tolerate the device plugin's taint (build_pod). */
		d->accel_taint = d->accel_resource;
		if (name)
			snprintf(name, size, "%s%s", CAP_DEVICE_CLASS_PREFIX, r->device_class);
		d->accel_resource = name;
	}
	json_object_foreach((json_t *)sel, key, value)
		if (lab && json_string_value(value)) {
			lab[d->n_node_selector].key = key;
			lab[d->n_node_selector++].value = json_string_value(value);
		}
	d->node_selector = lab;
	json_array_foreach(tols, i, tol)
		if (tl) {
			const char *op = str(tol, "operator");

			tl[d->n_tolerations].key = str(tol, "key");
			tl[d->n_tolerations].op = op && !strcmp(op, "Exists") ? CAP_TOLERATE_EXISTS :
						  CAP_TOLERATE_EQUAL;
			tl[d->n_tolerations].value = str(tol, "value");
			tl[d->n_tolerations++].effect = cache_effect_parse(str(tol, "effect"));
		}
	d->tolerations = tl;
	demand_scratch_and_exclusions(s, job, d);
	d->exclude = (const char *const *)job->spec.nodes.exclude;
	d->n_exclude = job->spec.nodes.n_exclude;
	d->required = (const char *const *)job->spec.nodes.list;
	d->n_required = job->spec.nodes.n_list;
	d->exclusive = job->spec.nodes.exclusive;
}




/*
 * Whether a candidate's gang holds capacity already: its cached status says
 * Admitted, or this controller admitted it and the status is still on its
 * way (jobmemo.h). Once the cache shows it with every rank's node (a rank
 * placed again during an in-place restart has its own), the record has
 * done its work.
 */
static bool holds_capacity(struct collect *c, const char *key, const struct cache_job *job)
{
	bool admitted = job->candidacy == CANDIDACY_HOLDS;
	bool recorded = jobmemo_admitted(c->m->memo, key, *job->uid ? job->uid : NULL,
					 job->attempt, c->now_ms, NULL);

	if (admitted && recorded && !job->awaiting_nodes)
		jobmemo_admission_done(c->m->memo, key);
	return admitted || recorded;
}

struct bound_count {
	int attempt;
	int bound;
};

bool gang_pod_ended(const struct cache_pod *p)
{
	return p->phase == POD_SUCCEEDED || p->phase == POD_FAILED;
}

/*
 * A pod of the current attempt that needs no room held for it: bound (it
 * is charged where it is), or ended (a rank that finished early frees its
 * node; a failed one restarts the gang).
 */
static int count_bound(void *arg, const char *key, const void *rec, size_t len)
{
	struct bound_count *b = arg;
	struct cache_pod p;

	(void)key;
	if (cache_pod_read(rec, len, &p) == 0 && p.attempt == b->attempt &&
	    (p.node || gang_pod_ended(&p)))
		b->bound++;
	return 0;
}

/*
 * The first pass, over the TrainingJobs' records: which jobs wait or hold
 * (candidate.h). Admitted gangs whose ranks all have a node or have ended,
 * and jobs backing off after a failure, take no part.
 */
static int screen_job(void *arg, const char *key, const void *rec, size_t len)
{
	struct collect *c = arg;
	struct cache_job job;
	bool admitted = false;
	int unbound = 0;

	if (cache_job_read(rec, len, &job) || job.candidacy == CANDIDACY_NONE) {
		/* Finished, suspended, restarting or gone: any admission it had is over. */
		jobmemo_admission_done(c->m->memo, key);
		return 0;
	}
	if (holds_capacity(c, key, &job)) {
		struct bound_count b = { job.attempt, 0 };

		store_index_foreach_record(c->m->stores[KIND_PODS], "job", key, count_bound, &b);
		admitted = true;
		unbound = job.num_nodes - b.bound;
		if (unbound <= 0)
			return 0;
	} else if (c->now < job.not_before) {
		return 0;  /* backing off: not a candidate yet */
	}
	if (c->n_waiting == c->cap_waiting) {
		size_t cap = c->cap_waiting ? c->cap_waiting * 2 : 64;
		struct waiting *more = realloc(c->waiting, cap * sizeof(*more));

		if (!more)
			return c->err = CADRE_ENOMEM;
		c->waiting = more;
		c->cap_waiting = cap;
	}
	c->waiting[c->n_waiting] = (struct waiting){ strdup(key), admitted, unbound };
	if (!c->waiting[c->n_waiting].key)
		return c->err = CADRE_ENOMEM;
	c->n_waiting++;
	return 0;
}

/*
 * Since when a job waits, for the starvation guard: its creation, or its
 * last failure or preemption after that. Its place in the queue stays its
 * age (adm_job.created_s): a preempted job goes back where it was, but has
 * not waited the hours it ran.
 */
static int64_t waiting_since(const struct trainingjob *job)
{
	int64_t since = job->meta.creation_timestamp;

	if (job->status.has_last_failure && job->status.last_failure.time > since)
		since = job->status.last_failure.time;
	if (job->status.has_preemption && job->status.preemption.time > since)
		since = job->status.preemption.time;
	return since;
}

/*
 * Whether job restarts in place with ranks that have no node: their nodes
 * were lost or left behind, and each is placed again (place_lost_ranks).
 */
static bool placing_ranks(const struct trainingjob *job)
{
	const struct tj_status *st = &job->status;

	return tj_in_place_current(st) && condition_is_true(&st->conditions, "Admitted") &&
	       tj_ranks_placed(st, job->spec.num_nodes) < job->spec.num_nodes;
}

/*
 * The second pass: decode and parse the jobs that wait (outside the
 * TrainingJob cache's lock). One that changed since its record was read
 * so that it no longer waits is left out; the next decision sees it anew.
 */
static int collect_jobs(struct collect *c)
{
	c->jobs = calloc(c->n_waiting + 1, sizeof(*c->jobs));
	if (!c->jobs)
		return CADRE_ENOMEM;
	for (size_t i = 0; i < c->n_waiting; i++) {
		struct candidate *w = &c->jobs[c->n];
		struct job_partition part;
		struct field_errors errs;
		json_t *obj = NULL;
		bool ok;

		if (store_get(c->m->stores[KIND_TRAININGJOBS], c->waiting[i].key, &obj))
			continue;
		field_errors_init(&errs);
		/* Its partition's placement and defaults (a Kueue queue takes it out). */
		ok = tj_parse(obj, &w->job, &errs) == 0 &&
		     partitions_apply_set(&c->parts, &w->job, &part) == 0 &&
		     (part.verdict == PARTITION_NONE || part.verdict == PARTITION_APPLIED) &&
		     tj_validate(&w->job, &errs) == 0 &&
		     tj_candidacy(&w->job, NULL, NULL) != CANDIDACY_NONE;
		field_errors_release(&errs);
		json_decref(obj);
		if (!ok) {
			tj_release(&w->job);
			continue;
		}
		w->since = waiting_since(&w->job);
		w->admitted = c->waiting[i].admitted;
		w->unbound = c->waiting[i].unbound;
		/* The cache does not show the admission (or a rank's new node) yet: the
		 * decision is in the memo. */
		if (w->admitted && (!condition_is_true(&w->job.status.conditions, "Admitted") ||
				    placing_ranks(&w->job)))
			jobmemo_admitted(c->m->memo, c->waiting[i].key, w->job.meta.uid,
					 tj_attempt(&w->job.status),
					 c->now_ms, &w->recorded);
		c->n++;
	}
	return 0;
}

static void collect_release(struct collect *c)
{
	for (size_t i = 0; i < c->n; i++) {
		if (!c->jobs[i].borrowed)
			tj_release(&c->jobs[i].job);
		jobmemo_admission_release(&c->jobs[i].recorded);
	}
	for (size_t i = 0; i < c->n_waiting; i++)
		free(c->waiting[i].key);
	free(c->jobs);
	free(c->waiting);
	partitions_release(&c->parts);
}

/* job's key, "namespace/name", in scratch; NULL when out of memory. */
static char *job_key(struct scratch *s, const struct trainingjob *job)
{
	size_t len = strlen(job->meta.namespace) + strlen(job->meta.name) + 2;
	char *key = gang_scratch_alloc(s, len, 1);

	if (key)
		snprintf(key, len, "%s/%s", job->meta.namespace, job->meta.name);
	return key;
}

/* The keys of the admitted gangs in c, sorted, in scratch. 0 or CADRE_ENOMEM. */
static int held_keys(struct scratch *s, const struct collect *c, char ***held, size_t *n)
{
	*held = NULL;
	*n = 0;
	for (size_t i = 0; i < c->n; i++) {
		char *key;

		if (!c->jobs[i].admitted)
			continue;
		if (!*held && !(*held = gang_scratch_alloc(s, c->n, sizeof(**held))))
			return CADRE_ENOMEM;
		if (!(key = job_key(s, &c->jobs[i].job)))
			return CADRE_ENOMEM;
		(*held)[(*n)++] = key;
	}
	if (*n > 1)
		qsort(*held, *n, sizeof(**held), gang_key_cmp);
	return 0;
}

static bool same_job(const struct trainingjob *a, const struct trainingjob *b)
{
	return a->meta.uid && b->meta.uid && !strcmp(a->meta.uid, b->meta.uid);
}

/*
 * The job asked about, as the planner passes it (with the status it is
 * about to write): the planner asks only when tj_candidacy says it waits,
 * which the cache may not show yet (its dependencies were met this pass, a
 * refusal has just cleared). It waits in the queue as the planner sees it,
 * in place of its cached self. collect_jobs left the slot for it.
 */
static void collect_asked(struct collect *c, const struct trainingjob *job)
{
	struct candidate *w = NULL;

	if (tj_candidacy(job, NULL, NULL) != CANDIDACY_WAITS)
		return;
	for (size_t i = 0; i < c->n && !w; i++)
		if (same_job(&c->jobs[i].job, job))
			w = &c->jobs[i];
	if (w && w->admitted)
		return;  /* the cache has it admitted: admitted_before or the next pass says */
	if (w)
		tj_release(&w->job);
	else
		w = &c->jobs[c->n++];
	*w = (struct candidate){ .job = *job, .borrowed = true, .since = waiting_since(job) };
}

/*
 * A job this controller admitted whose status has not come back yet is
 * asked about again (its status write failed or was refused): it is still
 * admitted, with what was decided then, on the same nodes.
 */
static bool admitted_before(struct manager *m, const char *key, const struct trainingjob *job,
			    uint64_t now_ms, struct tj_admission *out,
			    struct jobmemo_admission *held)
{
	struct jobmemo_admission recorded;

	if (!jobmemo_admitted(m->memo, key, job->meta.uid,
			      tj_attempt(&job->status), now_ms, &recorded))
		return false;
	if (!recorded.nodes) {
		jobmemo_admission_release(&recorded);
		return false;
	}
	jobmemo_admission_release(held);
	*held = recorded;
	*out = (struct tj_admission){ .verdict = ADMIT_YES, .reason = "Admitted",
				      .message = held->message,
				      .nodes = (const char *const *)held->nodes,
				      .n_nodes = held->n_nodes };
	return true;
}

/* The nodes as admission sees them, read from their records. */
struct node_walk {
	struct scratch *s;
	struct cap_node *nodes;
	size_t n, cap;
	json_t *undecoded;      /* keys of nodes without a record, to decode */
	int err;
};

static int node_slot(struct node_walk *w)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct cap_node *more = realloc(w->nodes, cap * sizeof(*more));

		if (!more)
			return w->err = CADRE_ENOMEM;
		w->nodes = more;
		w->cap = cap;
	}
	return 0;
}

/* Copy a node's record into the scratch area and read it from there. */
static int walk_node(void *arg, const char *key, const void *rec, size_t len)
{
	struct node_walk *w = arg;
	struct cache_node_counts n;
	void *copy;

	if (!len || cache_node_counts(rec, len, &n))
		return json_array_append_new(w->undecoded, json_string(key)) ?
		       (w->err = CADRE_ENOMEM) : 0;
	if (node_slot(w))
		return w->err;
	copy = gang_scratch_alloc(w->s, 1, len);
	if (copy) {
		struct cap_resource *ext = gang_scratch_alloc(w->s, n.n_ext, sizeof(*ext));
		struct cap_label *labels = gang_scratch_alloc(w->s, n.n_labels, sizeof(*labels));
		struct cap_taint *taints = gang_scratch_alloc(w->s, n.n_taints, sizeof(*taints));

		memcpy(copy, rec, len);
		if (!w->s->err && cache_node_read(copy, len, &w->nodes[w->n], ext, labels,
						  taints) == 0)
			w->n++;
	}
	return w->err = w->s->err;
}

/*
 * The cluster's free capacity now: every Ready node (read from the cache
 * into cap_nodes, which cap borrows; the few too large for a record are
 * decoded into nodes, held as long) less what every pod on it asks for.
 */
int gang_capacity(struct collect *c, struct scratch *s, struct capacity *cap,
		  struct cap_node **cap_nodes, json_t **nodes, char **held, size_t n_held)
{
	struct manager *m = c->m;
	struct charge_ctx charge = { cap, manager_other_pods_selector(m->opts) ? NULL :
				     m->stores[KIND_PODS], held, n_held };
	struct node_walk w = { .s = s, .undecoded = json_array() };
	const json_t *key;
	size_t i;
	int err;

	*nodes = json_array();
	if (!*nodes || !w.undecoded) {
		json_decref(w.undecoded);
		return CADRE_ENOMEM;
	}
	store_foreach_record(m->stores[KIND_NODES], walk_node, &w);
	err = w.err;
	json_array_foreach(w.undecoded, i, key) {
		json_t *node;

		if (err || store_get(m->stores[KIND_NODES], json_string_value(key), &node))
			continue;
		if (json_array_append_new(*nodes, node) || node_slot(&w))
			err = CADRE_ENOMEM;
		else {
			memset(&w.nodes[w.n], 0, sizeof(w.nodes[w.n]));
			read_node(s, node, &w.nodes[w.n++]);
		}
	}
	json_decref(w.undecoded);
	*cap_nodes = w.nodes;
	if (!err && !w.nodes && !(*cap_nodes = calloc(1, sizeof(**cap_nodes))))
		err = CADRE_ENOMEM;
	if (!err)
		err = dra_capacity_add(m, s, &c->dra, *cap_nodes, w.n);
	if (err)
		return err;
	err = capacity_init(cap, *cap_nodes, w.n, m->opts->accelerator_label);
	if (err)
		return err;
	cap->device_attribute = m->opts->device_attribute;
	dra_capacity_charge(&c->dra, cap);
	store_foreach_record(m->stores[KIND_OTHER_PODS], charge_other_pod, &charge);
	store_foreach_record(m->stores[KIND_PODS], charge_own_pod, &charge);
	return 0;
}

static const char *decided_node(const struct candidate *w, int rank);

struct bound_ranks {
	struct charge_ctx charge;
	const struct candidate *w;
	int attempt, n;
	bool in_place;           /* the attempt is restarting in place */
	unsigned char *bound;    /* per rank */
};

/*
 * A held gang's pod, read once: charged when it has a node and has not
 * ended (any attempt), and its rank marked as needing no room when of the
 * current one and bound or ended (count_bound). Restarting in place, a live
 * pod of an earlier attempt on its rank's node is the one that goes on.
 */
static int mark_bound(void *arg, const char *key, const void *rec, size_t len)
{
	struct bound_ranks *b = arg;
	struct cache_pod p;
	const char *decided;

	(void)key;
	if (cache_pod_read(rec, len, &p) || (!p.node && !gang_pod_ended(&p)))
		return 0;
	if (!gang_pod_ended(&p))
		gang_charge(&b->charge, &p);
	if (p.rank < 0 || p.rank >= b->n)
		return 0;
	if (p.attempt == b->attempt)
		b->bound[p.rank] = 1;
	else if (b->in_place && p.attempt < b->attempt && !gang_pod_ended(&p) &&
		 (decided = decided_node(b->w, p.rank)) && !strcmp(decided, p.node))
		b->bound[p.rank] = 1;
	return 0;
}

/* The node the stored (or recorded) admission gave rank, or NULL. */
static const char *decided_node(const struct candidate *w, int rank)
{
	const struct tj_status *st = &w->job.status;

	if (w->recorded.nodes)
		return rank < w->recorded.n_nodes ? w->recorded.nodes[rank] : NULL;
	for (size_t i = 0; i < st->n_nodes; i++)
		if (st->nodes[i].rank == rank)
			return st->nodes[i].node;
	return NULL;
}

/*
 * An admitted gang's pods, each read once (the walk over cadre's pods left
 * them out): the bound ones charged, the ranks they fill marked in
 * w->bound for reserve_admitted.
 */
static void charge_admitted(struct manager *m, struct scratch *s, struct capacity *cap,
			    struct candidate *w)
{
	int n = w->job.spec.num_nodes;
	struct bound_ranks b = { { cap, NULL, NULL, 0 }, w,
				 tj_attempt(&w->job.status), n,
				 tj_in_place_current(&w->job.status),
				 gang_scratch_alloc(s, n > 0 ? (size_t)n : 1, 1) };
	char key[STORE_KEY_MAX];

	w->bound = b.bound;
	if (!b.bound)
		return;
	snprintf(key, sizeof(key), "%s/%s", w->job.meta.namespace, w->job.meta.name);
	store_index_foreach_record(m->stores[KIND_PODS], "job", key, mark_bound, &b);
}

/*
 * Room for an admitted gang's pods that have no node yet, each on the node
 * its admission chose: that is where it is pinned, so nothing else may be
 * admitted there. A node that is gone holds nothing (the planner restarts
 * that gang); a rank without a chosen node (one to be placed again after
 * its node was lost, or an admission of an earlier version) is placed as a
 * fit would place it, but for the job being placed itself.
 */
static void reserve_admitted(struct capacity *cap, const struct candidate *w,
			     const struct cap_demand *d)
{
	for (int r = 0; w->bound && r < w->job.spec.num_nodes; r++)
		if (!w->bound[r] && (!w->placing || decided_node(w, r)))
			capacity_reserve(cap, d, 1, decided_node(w, r), NULL);
}

void gang_hold_admitted(struct scratch *s, const struct collect *c, struct capacity *cap)
{
	/* Every bound pod of the admitted gangs first, then the room of their other ranks. */
	for (size_t i = 0; i < c->n; i++)
		if (c->jobs[i].admitted)
			charge_admitted(c->m, s, cap, &c->jobs[i]);
	for (size_t i = 0; i < c->n; i++) {
		struct cap_demand d;

		if (!c->jobs[i].admitted)
			continue;
		gang_demand_of(s, &c->jobs[i].job, &d);
		reserve_admitted(cap, &c->jobs[i], &d);
	}
}

/* The cluster's levels for this decision, read once some waiting job has spec.topology. */
struct levels_ctx {
	bool wanted;                   /* a waiting job has spec.topology */
	int err;                       /* of topology_watch_levels; -1 before it is asked */
	char why[320];                 /* why the levels cannot be used */
	struct cluster_topology levels;
	struct topo_map map;
	bool have_map;
};

char *gang_scratch_strdup(struct scratch *s, const char *text)
{
	char *copy = gang_scratch_alloc(s, strlen(text) + 1, 1);

	if (copy)
		memcpy(copy, text, strlen(text) + 1);
	return copy;
}

/*
 * A waiting job's spec.topology against the cluster's levels: a request on
 * the map, or the reason it cannot be placed in *blocked.
 */
static const struct topo_request *topology_of(struct scratch *s, struct levels_ctx *l,
					      const struct tj_spec *spec, const char **blocked)
{
	const struct tj_topology *t = &spec->topology;
	struct topo_request *r;
	struct field_errors errs;

	*blocked = NULL;
	if (!t->set)
		return NULL;
	if (!l->have_map) {
		*blocked = gang_scratch_strdup(s, l->why);
		return NULL;
	}
	field_errors_init(&errs);
	if (tj_topology_check_levels(spec, (const char *const *)l->levels.labels,
				     l->levels.n_levels, l->levels.source, &errs)) {
		const struct field_error *e = field_errors_at(&errs, 0);
		char text[768];

		snprintf(text, sizeof(text), "%s: %s", e ? e->path : "spec.topology",
			 e ? e->message : "cannot be placed");
		*blocked = gang_scratch_strdup(s, text);
		field_errors_release(&errs);
		return NULL;
	}
	field_errors_release(&errs);
	r = gang_scratch_alloc(s, 1, sizeof(*r));
	if (!r)
		return NULL;
	*r = (struct topo_request){
		.map = &l->map,
		.required = topo_level_index(&l->map, t->required),
		.preferred = topo_level_index(&l->map, t->preferred),
		.segment = t->has_segment ? topo_level_index(&l->map, t->segment_required) : -1,
		.segment_size = t->has_segment ? t->segment_size : 0,
	};
	return r;
}

/*
 * Read the levels and map the nodes, when a waiting job has spec.topology
 * or placing (the job whose ranks are placed again; may be NULL) has.
 */
static int levels_load(struct manager *m, const struct collect *c, const struct capacity *cap,
		       const struct trainingjob *placing, struct levels_ctx *l)
{
	int err;

	l->err = -1;
	l->wanted = placing && placing->spec.topology.set;
	for (size_t i = 0; i < c->n && !l->wanted; i++)
		l->wanted = !c->jobs[i].admitted && c->jobs[i].job.spec.topology.set;
	if (!l->wanted)
		return 0;
	l->err = topology_watch_levels(m->topology, &l->levels, l->why, sizeof(l->why));
	if (l->err == CADRE_ENOMEM)
		return l->err;
	if (l->err)
		return 0;
	err = topo_map_init(&l->map, cap, (const char *const *)l->levels.labels,
			    (const char *const *)l->levels.names, l->levels.n_levels);
	l->have_map = !err;
	return err;
}

static void levels_release(struct levels_ctx *l)
{
	cluster_topology_release(&l->levels);
	topo_map_release(&l->map);
}

/*
 * What a waiting job asks of a node beyond its resources (affinity.h), into
 * d from aff (which d then borrows): its podTemplate's required node
 * affinity and per-host anti-affinity, its Volumes' node affinity. A job
 * whose affinity built-in mode cannot model waits, *blocked saying why (its
 * own reconcile fails it). The nodes where its gang timed out are left out
 * unless, without them, it could not fit even in an empty cluster: a
 * timeout must not make a gang unplaceable (docs/gang-admission.md).
 */
static void waiting_placement(struct scratch *s, struct manager *m, const struct capacity *cap,
			      const struct trainingjob *job, struct affinity *aff,
			      struct cap_demand *d, const char **blocked)
{
	struct field_errors errs;
	struct cap_fit fit;

	if (affinity_add_template(aff, job) || volume_affinity_add(m, job, aff)) {
		s->err = CADRE_ENOMEM;
		return;
	}
	d->affinity = aff->selectors;
	d->n_affinity = aff->n_selectors;
	d->one_per_node = aff->one_per_node;
	field_errors_init(&errs);
	if (!*blocked && affinity_refuse_builtin(job, &errs)) {
		struct buf text;

		buf_init(&text, 512);
		if (!field_errors_join(&errs, &text))
			*blocked = gang_scratch_strdup(s, buf_str(&text));
		buf_release(&text);
	}
	field_errors_release(&errs);
	if (d->n_timed_out && !capacity_fit(cap, d, job->spec.num_nodes, NULL, NULL, &fit) &&
	    !fit.fits && fit.ever < job->spec.num_nodes)
		d->n_timed_out = 0;
}

/*
 * A job whose status.preempting lists victims still stopping holds the
 * nodes it needs (docs/design.md 3.5): the words its message and the
 * held-back jobs' say it with, in scratch; NULL when none is stopping.
 */
static const char *preempted_stopping(struct scratch *s, struct manager *m,
				      const struct trainingjob *job)
{
	const struct tj_status *st = &job->status;
	char text[160];
	size_t n = 0;

	for (size_t i = 0; i < st->n_preempting; i++)
		n += gang_victim_stopping(m, &st->preempting[i]);
	if (!n)
		return NULL;
	snprintf(text, sizeof(text), "is waiting for %zu job%s it preempted to stop", n,
		 n == 1 ? "" : "s");
	return gang_scratch_strdup(s, text);
}

/*
 * The queue: every waiting candidate in c, with its demand (of[i] is the
 * candidate of queue[i]). Admitted gangs are not in it; their pods without
 * a node yet are reserved in cap instead.
 * *target is the position of job in the queue, -1 when it is not a candidate.
 * aff has a struct affinity per candidate, which the queue's demands borrow.
 */
static void gang_queue(struct scratch *s, const struct collect *c, struct capacity *cap,
		       struct levels_ctx *l, const struct trainingjob *job,
		       struct affinity *aff, struct adm_job *queue,
		       const struct candidate **of, size_t *n_queue, long *target)
{
	gang_hold_admitted(s, c, cap);
	for (size_t i = 0; i < c->n; i++) {
		struct candidate *w = &c->jobs[i];
		struct cap_demand d;
		const char *blocked;
		const struct topo_request *topo;
		struct job_preempt jp;

		if (w->admitted)
			continue;
		gang_demand_of(s, &w->job, &d);
		if (same_job(&w->job, job))
			*target = (long)*n_queue;
		topo = topology_of(s, l, &w->job.spec, &blocked);
		if (!blocked)
			blocked = dra_blocked(s, &c->dra, w->job.spec.resources.device_class);
		waiting_placement(s, c->m, cap, &w->job, &aff[i], &d, &blocked);
		partitions_preempt_of(&c->parts, &w->job, &jp);
		of[*n_queue] = w;
		queue[(*n_queue)++] = (struct adm_job){
			.namespace = w->job.meta.namespace, .name = w->job.meta.name,
			.tier = jp.tier, .holds = preempted_stopping(s, c->m, &w->job),
			.priority = w->job.spec.priority,
			.created_s = w->job.meta.creation_timestamp,
			.waiting_since_s = w->since, .num_nodes = w->job.spec.num_nodes,
			.demand = d, .topo = topo, .blocked = blocked,
		};
	}
}

/* A message into held, and out pointing at it. 0 or CADRE_ENOMEM. */
static int hold_message(struct jobmemo_admission *held, struct tj_admission *out, const char *msg)
{
	char *copy = strdup(msg);

	if (!copy)
		return CADRE_ENOMEM;
	free(held->message);
	held->message = copy;
	out->message = copy;
	return 0;
}

/*
 * Admit job on names[0..n) (the node of each rank) with message: recorded
 * until the cache shows it, and into out (its strings in held).
 */
static int admit_on(struct manager *m, const char *key, const struct trainingjob *job,
		    const char *message, const char *const *names, int n, uint64_t now_ms,
		    struct tj_admission *out, struct jobmemo_admission *held)
{
	int err;

	jobmemo_admission_release(held);
	err = jobmemo_admission_set(held, message, names, n);
	/* Until the cache shows it, every other decision must count this gang. */
	if (!err)
		err = jobmemo_admit(m->memo, key, job->meta.uid, tj_attempt(&job->status), message,
				    names, n, now_ms);
	if (err)
		return err;
	*out = (struct tj_admission){ .verdict = ADMIT_YES, .reason = "Admitted",
				      .message = held->message,
				      .nodes = (const char *const *)held->nodes,
				      .n_nodes = held->n_nodes };
	return 0;
}

/* The Admitted reason of a wait, as a static string. */
static const char *wait_reason(enum adm_reason reason)
{
	return reason == ADM_REASON_QUEUED_BEHIND ? "QueuedBehind" : "InsufficientCapacity";
}

/*
 * Turn job's decision into out (its strings in held); an admission is
 * recorded, with the node of every rank, until the cache shows it.
 */
static int gang_verdict(struct manager *m, const char *key, const struct trainingjob *job,
			const struct capacity *cap, const struct adm_decision *d, uint64_t now_ms,
			struct tj_admission *out, struct jobmemo_admission *held)
{
	int n = job->spec.num_nodes, err;
	const char **names;

	if (d->verdict != ADM_ADMIT && held->n_preempt) {
		out->reason = "Preempting";
		out->message = held->message;
		out->preempt = (const char *const *)held->preempt;
		out->preempt_attempt = held->preempt_attempt;
		out->n_preempt = held->n_preempt;
		return 0;
	}
	if (d->verdict != ADM_ADMIT) {
		out->reason = wait_reason(d->reason);
		return hold_message(held, out, d->message);
	}
	names = calloc(n > 0 ? (size_t)n : 1, sizeof(*names));
	if (!names)
		return CADRE_ENOMEM;
	for (int r = 0; r < n; r++)
		names[r] = cap->nodes[d->nodes[r]].name;
	err = admit_on(m, key, job, d->message, names, n, now_ms, out, held);
	free(names);
	return err;
}

/*
 * The pass's verdict for every job of its queue but target (gang_pass.h),
 * kept as the manager's last pass. The one job that may preempt when it
 * waits (the head of the queue, gang_preempt.h) is left out: asked, it is
 * decided afresh and chooses its victims then.
 */
static int remember_pass(struct scratch *s, struct manager *m, uint64_t epoch,
			 uint64_t now_ms, const struct capacity *cap, const struct collect *c,
			 const struct adm_job *queue, const struct candidate *const *of,
			 size_t n_queue, const struct adm_decision *dec, size_t target)
{
	struct gang_pass_entry *e = gang_scratch_alloc(s, n_queue + 1, sizeof(*e));
	size_t n = 0, head = gang_queue_head(queue, n_queue, dec);

	for (size_t i = 0; e && i < n_queue; i++) {
		const struct trainingjob *job = &of[i]->job;
		const char **names = NULL;

		if (i == target || (i == head && gang_may_preempt(&c->parts, &queue[i])))
			continue;
		if (dec[i].verdict == ADM_ADMIT &&
		    (names = gang_scratch_alloc(s, (size_t)queue[i].num_nodes, sizeof(*names))))
			for (int r = 0; r < queue[i].num_nodes; r++)
				names[r] = cap->nodes[dec[i].nodes[r]].name;
		e[n++] = (struct gang_pass_entry){ .key = job_key(s, job), .uid = job->meta.uid,
			.resource_version = job->meta.resource_version,
			.attempt = tj_attempt(&job->status), .admit = dec[i].verdict == ADM_ADMIT,
			.reason = wait_reason(dec[i].reason), .message = dec[i].message,
			.nodes = names, .n_nodes = names ? queue[i].num_nodes : 0 };
	}
	return s->err ? s->err : gang_pass_set(&m->pass, epoch, now_ms, e, n);
}

/*
 * job as the manager's last pass decided it, when that pass read it as it is
 * and nothing has moved since (gang_pass.h). True when out is answered.
 */
static bool decided_in_pass(struct manager *m, uint64_t epoch, uint64_t now_ms,
			    const char *key, const struct trainingjob *job,
			    struct tj_admission *out, struct jobmemo_admission *held, int *err)
{
	const struct gang_pass_entry *e = gang_pass_find(m->pass, epoch, now_ms, key,
							 job->meta.uid, job->meta.resource_version,
							 tj_attempt(&job->status));

	if (!e)
		return false;
	if (e->admit && e->n_nodes == job->spec.num_nodes) {
		*err = admit_on(m, key, job, e->message, e->nodes, e->n_nodes, now_ms, out, held);
		return true;
	}
	if (e->admit)
		return false;
	out->reason = !strcmp(e->reason, "QueuedBehind") ? "QueuedBehind" : "InsufficientCapacity";
	*err = hold_message(held, out, e->message);
	return true;
}


/*
 * An in-place restart whose ranks lost their nodes (docs/failures.md): each
 * is placed again beside the ranks that keep theirs (ranks.h), on what is
 * free once every admitted gang is counted, before any waiting job: the
 * gang is admitted and running. The nodes of every rank are recorded as an
 * admission's are, until the cache shows them in status.nodes.
 */
static int place_lost_ranks(struct scratch *s, struct collect *c, struct capacity *cap,
			    struct levels_ctx *l, const char *key, const struct trainingjob *job,
			    struct tj_admission *out, struct jobmemo_admission *held)
{
	const struct tj_status *st = &job->status;
	int n = job->spec.num_nodes, err = 0;
	unsigned char *place = gang_scratch_alloc(s, (size_t)n, 1);
	long *at = gang_scratch_alloc(s, (size_t)n, sizeof(*at));
	const char **names = gang_scratch_alloc(s, (size_t)n, sizeof(*names));
	const struct topo_request *topo;
	struct affinity aff = { 0 };
	const char *blocked, *sep = "";
	struct cap_demand d;
	struct buf why;
	bool fits = false;

	if (!place || !at || !names)
		return CADRE_ENOMEM;
	memset(place, 1, (size_t)n);
	for (int r = 0; r < n; r++)
		at[r] = -1;
	for (size_t i = 0; i < st->n_nodes; i++) {
		const struct tj_node_status *ns = &st->nodes[i];

		if (ns->rank < 0 || ns->rank >= n || !ns->node || !*ns->node)
			continue;
		place[ns->rank] = 0;
		names[ns->rank] = ns->node;
		at[ns->rank] = capacity_node_index(cap, ns->node);
	}
	gang_demand_of(s, job, &d);
	topo = topology_of(s, l, &job->spec, &blocked);
	if (!blocked)
		blocked = dra_blocked(s, &c->dra, job->spec.resources.device_class);
	waiting_placement(s, c->m, cap, job, &aff, &d, &blocked);
	buf_init(&why, 4096);
	if (s->err)
		err = s->err;
	else if (blocked)
		buf_adds(&why, blocked);
	else
		err = ranks_place(cap, &d, topo, n, place, at, &fits, &why);
	if (!err && !fits) {
		out->reason = "InsufficientCapacity";
		err = buf_error(&why) ? CADRE_ENOMEM : hold_message(held, out, buf_str(&why));
	} else if (!err) {
		buf_reset(&why);
		buf_adds(&why, "placed again beside the ranks that keep their nodes: ");
		for (int r = 0; r < n; r++)
			if (place[r]) {
				names[r] = cap->nodes[at[r]].name;
				buf_addf(&why, "%srank %d on %s", sep, r, names[r]);
				sep = ", ";
			}
		err = buf_error(&why) ? CADRE_ENOMEM :
		      admit_on(c->m, key, job, buf_str(&why), names, n, c->now_ms, out, held);
	}
	buf_release(&why);
	affinity_release(&aff);
	return err;
}

int gang_admit(struct manager *m, const struct trainingjob *job, struct tj_admission *out,
	       struct jobmemo_admission *held)
{
	struct collect c = { .m = m, .now = manager_time(m), .now_ms = manager_now_ms() };
	char key[STORE_KEY_MAX];
	struct scratch s = { 0 };
	struct capacity cap;
	struct admission adm;
	struct cap_node *cap_nodes = NULL;
	struct adm_job *queue = NULL;
	struct adm_decision *decisions = NULL;
	struct affinity *aff = NULL;
	struct levels_ctx levels = { 0 };
	json_t *nodes = NULL;
	char **gangs = NULL;
	const struct candidate **of = NULL;
	size_t n_queue = 0, n_gangs = 0;
	long target = -1;
	bool placing = placing_ranks(job);
	uint64_t epoch;
	int err = 0;

	memset(&cap, 0, sizeof(cap));
	admission_init(&adm);
	*out = (struct tj_admission){ .verdict = ADMIT_WAIT, .reason = "InsufficientCapacity",
				      .message = "waiting for capacity" };
	snprintf(key, sizeof(key), "%s/%s", job->meta.namespace ? job->meta.namespace : "",
		 job->meta.name ? job->meta.name : "");
	pthread_mutex_lock(&m->admission_lock);
	/* Read before the caches: a kick while this decides makes its pass stale at once. */
	epoch = atomic_load(&m->admission_epoch);
	if (admitted_before(m, key, job, c.now_ms, out, held) ||
	    (!placing && decided_in_pass(m, epoch, c.now_ms, key, job, out, held, &err)))
		goto out;
	/*
	 * The waiting jobs before the pods: the admitted gangs among them have
	 * their pods charged apart (charge_ctx.held).
	 */
	store_foreach_record(m->stores[KIND_TRAININGJOBS], screen_job, &c);
	err = c.err ? c.err : s.err;
	if (!err)
		err = partitions_load(m, &c.parts);
	if (!err)
		err = collect_jobs(&c);
	if (!err) {
		collect_asked(&c, job);
		dra_view_init(&s, &c.dra, c.jobs, c.n);
		err = s.err;
	}
	if (!err)
		err = held_keys(&s, &c, &gangs, &n_gangs);
	if (!err)
		err = gang_capacity(&c, &s, &cap, &cap_nodes, &nodes, gangs, n_gangs);
	if (err)
		goto out;
	queue = calloc(c.n + 1, sizeof(*queue));
	decisions = calloc(c.n + 1, sizeof(*decisions));
	aff = calloc(c.n + 1, sizeof(*aff));  /* all zero: affinity_init's state */
	of = calloc(c.n + 1, sizeof(*of));
	if (!queue || !decisions || !aff || !of) {
		err = CADRE_ENOMEM;
		goto out;
	}
	err = levels_load(m, &c, &cap, placing ? job : NULL, &levels);
	if (err)
		goto out;
	for (size_t i = 0; placing && i < c.n; i++)
		c.jobs[i].placing = same_job(&c.jobs[i].job, job);
	gang_queue(&s, &c, &cap, &levels, job, aff, queue, of, &n_queue, &target);
	if (s.err) {
		err = s.err;
		goto out;
	}
	if (placing) {
		err = place_lost_ranks(&s, &c, &cap, &levels, key, job, out, held);
		goto out;
	}
	if (target < 0) {
		/* Not a candidate now (candidate.h): wait and say why. */
		const char *why;
		char msg[160];

		tj_candidacy(job, NULL, &why);
		snprintf(msg, sizeof(msg), "not waiting for admission yet (phase %s%s%s)",
			 tj_phase_name(job->status.phase), *why ? ": " : "", why);
		err = hold_message(held, out, msg);
		goto out;
	}
	err = admission_decide(&adm, &cap, queue, n_queue, c.now,
			       m->opts->starvation_seconds, decisions);
	jobmemo_admission_release(held);
	if (!err && decisions[target].verdict != ADM_ADMIT)
		err = gang_preempt(&s, &c, gangs, n_gangs, &cap, queue, n_queue, decisions,
				   (size_t)target, held);
	if (!err)
		err = gang_verdict(m, key, job, &cap, &decisions[target], c.now_ms, out, held);
	/* A choice of victims changes what the next decisions see: no pass is kept. */
	if (!err && held->n_preempt) {
		gang_pass_free(m->pass);
		m->pass = NULL;
	} else if (!err) {
		err = remember_pass(&s, m, epoch, c.now_ms, &cap, &c, queue, of, n_queue,
				    decisions, (size_t)target);
	}
out:
	pthread_mutex_unlock(&m->admission_lock);
	admission_release(&adm);
	levels_release(&levels);
	capacity_release(&cap);
	for (size_t i = 0; aff && i < c.n; i++)
		affinity_release(&aff[i]);
	free(aff);
	collect_release(&c);
	free(queue);
	free(of);
	free(decisions);
	free(cap_nodes);
	gang_scratch_release(&s);
	json_decref(nodes);
	return err;
}

struct label_values {
	const char *label, *type;
	char **list;
	size_t n, cap;
	json_t *undecoded;      /* nodes without a record */
};

static void label_value_add(struct label_values *lv, const char *v)
{
	if (!v || !accel_matches_label(lv->type, v) || lv->n == lv->cap)
		return;
	for (size_t j = 0; j < lv->n; j++)
		if (!strcmp(lv->list[j], v))
			return;
	if ((lv->list[lv->n] = strdup(v)))
		lv->n++;
}

static int node_label_value(void *arg, const char *key, const void *rec, size_t len)
{
	struct label_values *lv = arg;

	if (!len)
		json_array_append_new(lv->undecoded, json_string(key));
	else
		label_value_add(lv, cache_node_label(rec, len, lv->label));
	return 0;
}

void gang_matching_label_values(struct manager *m, const char *type, char ***values, size_t *n)
{
	struct label_values lv = { m->opts->accelerator_label, type, NULL, 0, 0, json_array() };
	const json_t *key;
	size_t i;

	*values = NULL;
	*n = 0;
	lv.cap = store_len(m->stores[KIND_NODES]) + 1;
	lv.list = calloc(lv.cap + 1, sizeof(*lv.list));
	if (!lv.list || !lv.undecoded)
		goto out;
	store_foreach_record(m->stores[KIND_NODES], node_label_value, &lv);
	json_array_foreach(lv.undecoded, i, key) {
		json_t *node;

		if (store_get(m->stores[KIND_NODES], json_string_value(key), &node))
			continue;
		label_value_add(&lv, str(json_object_get(json_object_get(node, "metadata"),
							 "labels"), lv.label));
		json_decref(node);
	}
	*values = lv.list;
	*n = lv.n;
	lv.list = NULL;
out:
	free(lv.list);
	json_decref(lv.undecoded);
}
