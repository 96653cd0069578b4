/*
 * gang_preempt.c - built-in preemption by Partition tier against the live
 * caches (gang_preempt.h).
 */
#include "controller/admission/gang_preempt.h"

#include "api/fielderr.h"
#include "api/partition.h"
#include "base/err.h"
#include "controller/admission/preempt.h"
#include "controller/manager/manager.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Victims named in a message, the rest counted. */
#define NAMED_MAX 5

static const char *str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

int gang_preempts_index(const json_t *job, json_t *values, void *arg)
{
	const json_t *list = json_object_get(json_object_get(job, "status"), "preempting");
	const json_t *v;
	size_t i;

	(void)arg;
	json_array_foreach(list, i, v)
		if (str(v, "job") && json_array_append_new(values, json_string(str(v, "job"))))
			return CADRE_ENOMEM;
	return 0;
}

struct stopping {
	bool found, holds, live;
	int attempt;
};

static int victim_record(void *arg, const char *key, const void *rec, size_t len)
{
	struct stopping *st = arg;
	struct cache_job job;

	(void)key;
	st->found = true;
	if (cache_job_read(rec, len, &job) == 0) {
		st->attempt = job.attempt;
		st->holds = job.candidacy == CANDIDACY_HOLDS;
	}
	return 0;
}

static int live_pod(void *arg, const char *key, const void *rec, size_t len)
{
	struct stopping *st = arg;
	struct cache_pod p;

	(void)key;
	if (cache_pod_read(rec, len, &p) == 0 && !gang_pod_ended(&p))
		st->live = true;
	return 0;
}

bool gang_victim_stopping(struct manager *m, const struct tj_preempting *v)
{
	struct stopping st = { .attempt = -1 };

	if (!v->job)
		return false;
	store_get_record(m->stores[KIND_TRAININGJOBS], v->job, victim_record, &st);
	if (!st.found)
		return false;
	store_index_foreach_record(m->stores[KIND_PODS], "job", v->job, live_pod, &st);
	return st.live || (st.holds && st.attempt == v->attempt);
}

/* Whether the object lists key at attempt in its status.preempting, and waits. */
static bool lists(const json_t *obj, const char *key, int attempt)
{
	const json_t *status = json_object_get(obj, "status");
	const json_t *v, *c;
	size_t i;

	if (json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp"))
		return false;
	json_array_foreach(json_object_get(status, "conditions"), i, c)
		if (str(c, "type") && !strcmp(str(c, "type"), "Admitted") && str(c, "status") &&
		    !strcmp(str(c, "status"), "True"))
			return false;
	json_array_foreach(json_object_get(status, "preempting"), i, v)
		if (str(v, "job") && !strcmp(str(v, "job"), key) &&
		    json_integer_value(json_object_get(v, "attempt")) == attempt)
			return true;
	return false;
}

/* The preemptor's tier, from its Partition now. */
static int32_t tier_of(const struct partition_set *parts, const json_t *obj)
{
	struct field_errors errs;
	struct trainingjob job;
	struct job_preempt jp = { 0 };

	field_errors_init(&errs);
	if (tj_parse(obj, &job, &errs) == 0)
		partitions_preempt_of(parts, &job, &jp);
	tj_release(&job);
	field_errors_release(&errs);
	return jp.tier;
}

int gang_preempted(struct manager *m, const struct trainingjob *job, struct tj_preempted *out,
		   char *by, bool *yes)
{
	struct partition_set parts;
	struct job_preempt own;
	char key[STORE_KEY_MAX];
	json_t *list = NULL, *obj;
	size_t i;
	int err;

	*yes = false;
	snprintf(key, sizeof(key), "%s/%s", job->meta.namespace, job->meta.name);
	err = store_by_index(m->stores[KIND_TRAININGJOBS], GANG_PREEMPTS_INDEX, key, &list);
	if (err || !json_array_size(list)) {
		json_decref(list);
		return err == CADRE_ENOMEM ? err : 0;
	}
	if ((err = partitions_load(m, &parts)))
		goto out;
	json_array_foreach(list, i, obj) {
		if (*yes || !lists(obj, key, tj_attempt(&job->status)) ||
		    store_key(obj, by, STORE_KEY_MAX))
			continue;
		partitions_preempt_of(&parts, job, &own);
		*out = (struct tj_preempted){ by, tier_of(&parts, obj), own.tier,
					      own.mode == PARTITION_PREEMPT_CANCEL, own.grace_s };
		*yes = true;
	}
out:
	partitions_release(&parts);
	json_decref(list);
	return err;
}

/* A running gang that may be preempted, with the pods it would free. */
struct victim {
	char *key;               /* "namespace/name" */
	char *ns;                /* a copy of key split at its slash: namespace, then name */
	struct pre_victim v;
	struct pre_pod *pods;
	size_t cap_pods;
	int32_t attempt;
};

struct victims {
	struct collect *c;
	const char *preemptor;
	int32_t tier;
	struct victim *list;
	size_t n, cap;
	int err;
};

/* Another waiting job already stops it at this attempt. */
static bool taken(struct manager *m, const char *key, int attempt, const char *preemptor)
{
	json_t *list = NULL, *obj;
	bool yes = false;
	size_t i;

	if (store_by_index(m->stores[KIND_TRAININGJOBS], GANG_PREEMPTS_INDEX, key, &list))
		return true;  /* cannot tell: leave it */
	json_array_foreach(list, i, obj) {
		char k[STORE_KEY_MAX];

		if (!store_key(obj, k, sizeof(k)) && strcmp(k, preemptor) && lists(obj, key, attempt))
			yes = true;
	}
	json_decref(list);
	return yes;
}

/*
 * A candidate, from its record alone (nothing decoded): a Running gang of
 * a strictly lower tier whose mode is not Off, past its exempt time, not
 * preempted at this attempt already (whether another job is stopping it is
 * asked after the walk, outside the cache's lock: not_taken).
 */
static bool eligible(struct victims *vs, const struct cache_job *job)
{
	struct job_preempt jp;

	if (job->candidacy != CANDIDACY_HOLDS || strcmp(job->phase, "Running") ||
	    !job->run_started || job->preempted_attempt == job->attempt)
		return false;
	partitions_preempt_named(&vs->c->parts, job->partition, job->spec_partition, job->queue,
				 &jp);
	return jp.tier < vs->tier && jp.mode != PARTITION_PREEMPT_OFF &&
	       vs->c->now >= job->run_started + jp.exempt_s;
}

/* The candidates that no other waiting job is stopping already. */
static void not_taken(struct victims *vs)
{
	size_t kept = 0;

	for (size_t i = 0; i < vs->n; i++) {
		struct victim *x = &vs->list[i];

		if (!taken(vs->c->m, x->key, x->attempt, vs->preemptor)) {
			vs->list[kept++] = *x;
			continue;
		}
		free(x->key);
		free(x->ns);
	}
	vs->n = kept;
}

static int candidate_gang(void *arg, const char *key, const void *rec, size_t len)
{
	struct victims *vs = arg;
	struct cache_job job;
	struct job_preempt jp;
	struct victim *x;
	char *slash;

	if (cache_job_read(rec, len, &job) || !eligible(vs, &job))
		return 0;
	if (vs->n == vs->cap) {
		size_t cap = vs->cap ? vs->cap * 2 : 16;
		struct victim *more = realloc(vs->list, cap * sizeof(*more));

		if (!more)
			return vs->err = CADRE_ENOMEM;
		vs->list = more;
		vs->cap = cap;
	}
	x = &vs->list[vs->n];
	*x = (struct victim){ .key = strdup(key), .ns = strdup(key), .attempt = job.attempt };
	if (!x->key || !x->ns || !(slash = strchr(x->ns, '/'))) {
		free(x->key);
		free(x->ns);
		return vs->err = x->key && x->ns ? 0 : CADRE_ENOMEM;
	}
	*slash = '\0';
	partitions_preempt_named(&vs->c->parts, job.partition, job.spec_partition, job.queue,
				 &jp);
	x->v = (struct pre_victim){ x->ns, slash + 1, jp.tier, job.priority, job.run_started,
				    NULL, 0 };
	vs->n++;
	return 0;
}

struct pod_walk {
	const struct capacity *cap;
	struct victim *x;
	int err;
};

/* A victim's pod on a node, resolved to the capacity's index. */
static int victim_pod(void *arg, const char *key, const void *rec, size_t len)
{
	struct pod_walk *w = arg;
	struct cache_pod p;
	struct pre_pod *pp;
	long i;

	(void)key;
	if (cache_pod_read(rec, len, &p) || !p.node || gang_pod_ended(&p) ||
	    (i = capacity_node_index(w->cap, p.node)) < 0)
		return 0;
	if (w->x->v.n_pods == w->x->cap_pods) {
		size_t cap = w->x->cap_pods ? w->x->cap_pods * 2 : 8;
		struct pre_pod *more = realloc(w->x->pods, cap * sizeof(*more));

		if (!more)
			return w->err = CADRE_ENOMEM;
		w->x->pods = more;
		w->x->cap_pods = cap;
	}
	pp = &w->x->pods[w->x->v.n_pods++];
	*pp = (struct pre_pod){ .node = (uint32_t)i, .cpu_milli = p.cpu_milli,
				.memory_milli = p.memory_milli, .occupies = !p.node_service,
				.exclusive = p.exclusive };
	for (size_t e = 0; e < p.n_ext && e < PRE_POD_EXT_MAX; e++)
		pp->ext[pp->n_ext++] = (struct cap_resource){ p.ext_name[e], p.ext_milli[e] };
	w->x->v.pods = w->x->pods;
	return 0;
}

static void victims_release(struct victims *vs)
{
	for (size_t i = 0; i < vs->n; i++) {
		free(vs->list[i].key);
		free(vs->list[i].ns);
		free(vs->list[i].pods);
	}
	free(vs->list);
}

/* held_keys and the victims' keys, sorted, in scratch: the pods gang_capacity leaves out. */
static char **skip_keys(struct scratch *s, char **held_keys, size_t n_held,
			const struct victims *vs, size_t *n)
{
	char **keys = gang_scratch_alloc(s, n_held + vs->n + 1, sizeof(*keys));

	if (!keys)
		return NULL;
	for (size_t i = 0; i < n_held; i++)
		keys[i] = held_keys[i];
	for (size_t i = 0; i < vs->n; i++)
		keys[n_held + i] = vs->list[i].key;
	*n = n_held + vs->n;
	qsort(keys, *n, sizeof(*keys), gang_key_cmp);
	return keys;
}

/* Every job the queue places ahead of queue[target], where the decision placed it. */
static void take_ahead(struct capacity *base, const struct capacity *cap,
		       const struct adm_job *queue, size_t n_queue,
		       const struct adm_decision *dec, size_t target, uint32_t *placement)
{
	for (size_t k = 0; k < n_queue; k++) {
		bool all = true;

		if (k == target || dec[k].verdict != ADM_ADMIT ||
		    !admission_before(&queue[k], &queue[target]))
			continue;
		for (int r = 0; r < queue[k].num_nodes && all; r++) {
			long i = capacity_node_index(base, cap->nodes[dec[k].nodes[r]].name);

			all = i >= 0;
			placement[r] = all ? (uint32_t)i : 0;
		}
		if (all)
			capacity_take(base, &queue[k].demand, placement, queue[k].num_nodes);
	}
}

/* Whether queue[target] heads the queue's waiting jobs: nothing ahead of it waits. */
static bool heads(const struct adm_job *queue, size_t n_queue, const struct adm_decision *dec,
		  size_t target)
{
	for (size_t k = 0; k < n_queue; k++)
		if (k != target && dec[k].verdict != ADM_ADMIT && !queue[k].blocked &&
		    admission_before(&queue[k], &queue[target]))
			return false;
	return true;
}

size_t gang_queue_head(const struct adm_job *queue, size_t n_queue,
		       const struct adm_decision *dec)
{
	size_t head = n_queue;

	for (size_t k = 0; k < n_queue; k++)
		if (dec[k].verdict != ADM_ADMIT && !queue[k].blocked &&
		    (head == n_queue || admission_before(&queue[k], &queue[head])))
			head = k;
	return head;
}

bool gang_may_preempt(const struct partition_set *parts, const struct adm_job *job)
{
	return !job->blocked && !job->holds && partitions_preemptable_below(parts, job->tier);
}

/* The chosen victims into held, with a message naming them. 0 or CADRE_ENOMEM. */
static int record_choice(const struct victims *vs, const size_t *chosen, size_t n_chosen,
			 int32_t tier, struct jobmemo_admission *held)
{
	struct buf text;
	int err = 0;

	held->preempt = calloc(n_chosen, sizeof(*held->preempt));
	held->preempt_attempt = calloc(n_chosen, sizeof(*held->preempt_attempt));
	if (!held->preempt || !held->preempt_attempt)
		return CADRE_ENOMEM;
	buf_init(&text, 512);
	buf_addf(&text, "preempting %zu running job%s of lower Partition tiers to make room "
		 "(tier %d): ", n_chosen, n_chosen == 1 ? "" : "s", (int)tier);
	for (size_t i = 0; i < n_chosen; i++) {
		const struct victim *x = &vs->list[chosen[i]];

		if (!(held->preempt[i] = strdup(x->key)))
			err = CADRE_ENOMEM;
		held->preempt_attempt[i] = x->attempt;
		held->n_preempt = i + 1;
		if (i < NAMED_MAX)
			buf_addf(&text, "%s%s (tier %d)", i ? ", " : "", x->key, (int)x->v.tier);
	}
	if (n_chosen > NAMED_MAX)
		buf_addf(&text, " and %zu more", n_chosen - NAMED_MAX);
	free(held->message);
	held->message = err ? NULL : strdup(buf_str(&text));
	buf_release(&text);
	return err || !held->message ? CADRE_ENOMEM : 0;
}

/* The capacity the target would see at its turn, without the victims' pods. */
static int base_capacity(struct scratch *s, struct collect *c, char **held_keys, size_t n_held,
			 const struct capacity *cap, const struct adm_job *queue, size_t n_queue,
			 const struct adm_decision *dec, size_t target, struct victims *vs,
			 struct capacity *base, struct cap_node **nodes, json_t **objs)
{
	size_t n_skip = 0;
	char **skip = skip_keys(s, held_keys, n_held, vs, &n_skip);
	uint32_t *placement;
	size_t most = 1;
	int err;

	for (size_t k = 0; k < n_queue; k++)
		if ((size_t)queue[k].num_nodes > most)
			most = (size_t)queue[k].num_nodes;
	placement = gang_scratch_alloc(s, most, sizeof(*placement));
	if (!skip || !placement)
		return CADRE_ENOMEM;
	err = gang_capacity(c, s, base, nodes, objs, skip, n_skip);
	if (err)
		return err;
	gang_hold_admitted(s, c, base);
	take_ahead(base, cap, queue, n_queue, dec, target, placement);
	for (size_t i = 0; i < vs->n; i++) {
		struct pod_walk w = { base, &vs->list[i], 0 };

		store_index_foreach_record(c->m->stores[KIND_PODS], "job", vs->list[i].key,
					   victim_pod, &w);
		if (w.err)
			return w.err;
	}
	return s->err;
}

int gang_preempt(struct scratch *s, struct collect *c, char **held_keys, size_t n_held,
		 const struct capacity *cap, const struct adm_job *queue, size_t n_queue,
		 const struct adm_decision *dec, size_t target, struct jobmemo_admission *held)
{
	const struct adm_job *job = &queue[target];
	struct victims vs = { .c = c, .tier = job->tier };
	struct capacity base;
	struct cap_node *nodes = NULL;
	json_t *objs = NULL;
	size_t *chosen = NULL, n_chosen = 0;
	char key[STORE_KEY_MAX];
	struct pre_victim *pv = NULL;
	int err;

	memset(&base, 0, sizeof(base));
	if (!gang_may_preempt(&c->parts, job) || !heads(queue, n_queue, dec, target))
		return 0;
	snprintf(key, sizeof(key), "%s/%s", job->namespace, job->name);
	vs.preemptor = key;
	store_foreach_record(c->m->stores[KIND_TRAININGJOBS], candidate_gang, &vs);
	if ((err = vs.err))
		goto out;
	not_taken(&vs);
	if (!vs.n)
		goto out;
	err = base_capacity(s, c, held_keys, n_held, cap, queue, n_queue, dec, target, &vs, &base,
			    &nodes, &objs);
	pv = calloc(vs.n, sizeof(*pv));
	chosen = calloc(vs.n, sizeof(*chosen));
	if (!err && (!pv || !chosen))
		err = CADRE_ENOMEM;
	for (size_t i = 0; !err && i < vs.n; i++)
		pv[i] = vs.list[i].v;
	if (!err)
		err = preempt_choose(&base, job, pv, vs.n, chosen, &n_chosen);
	if (!err && n_chosen)
		err = record_choice(&vs, chosen, n_chosen, job->tier, held);
out:
	free(pv);
	free(chosen);
	capacity_release(&base);
	free(nodes);
	json_decref(objs);
	victims_release(&vs);
	return err;
}
