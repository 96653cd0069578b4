#include "controller/gang.h"
#include "base/buf.h"
#include "base/err.h"
#include "api/accel.h"
#include "api/fielderr.h"
#include "api/quantity.h"
#include "controller/manager.h"
#include "controller/podview.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_RES 12

/* Free amounts of the resources a node offers, in milli-units. */
struct res_set {
	const char *names[MAX_RES];   /* borrowed from the node object */
	int64_t milli[MAX_RES];
	size_t n;
};

struct node_room {
	json_t *obj;        /* borrowed from the nodes snapshot */
	const char *name;
	bool schedulable;   /* Ready and not cordoned */
	struct res_set free;
};

/* What one pod of a job asks for, and where it may go. */
struct demand {
	const struct trainingjob *job;
	const char *accel_resource;
	int64_t cpu, memory, accel;
	int pods;            /* how many pods still need a place */
};

static int64_t *res_slot(struct res_set *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->names[i], name))
			return &r->milli[i];
	return NULL;
}

static void res_sub(struct res_set *r, const char *name, int64_t milli)
{
	int64_t *slot = res_slot(r, name);

	if (slot)
		*slot -= milli;
}

static void read_allocatable(struct node_room *room)
{
	const json_t *alloc = json_object_get(json_object_get(room->obj, "status"), "allocatable");
	const char *name;
	json_t *value;

	json_object_foreach((json_t *)alloc, name, value) {
		int64_t milli;

		if (room->free.n == MAX_RES || !json_string_value(value) ||
		    quantity_parse(json_string_value(value), &milli))
			continue;
		room->free.names[room->free.n] = name;
		room->free.milli[room->free.n++] = milli;
	}
}

static bool node_schedulable(const json_t *node)
{
	const json_t *cond;
	bool ready = false;
	size_t i;

	if (json_is_true(json_object_get(json_object_get(node, "spec"), "unschedulable")))
		return false;
	json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, cond) {
		const char *type = json_string_value(json_object_get(cond, "type"));
		const char *status = json_string_value(json_object_get(cond, "status"));

		if (type && !strcmp(type, "Ready"))
			ready = status && !strcmp(status, "True");
	}
	return ready;
}

/* Subtract a requests object ({"cpu": "1500m", ...}) from the node it names. */
static void charge(struct node_room *rooms, size_t n, const char *node, const json_t *requests)
{
	const char *name;
	json_t *value;

	if (!node)
		return;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(rooms[i].name, node))
			continue;
		json_object_foreach((json_t *)requests, name, value) {
			int64_t milli;

			if (json_string_value(value) &&
			    !quantity_parse(json_string_value(value), &milli))
				res_sub(&rooms[i].free, name, milli);
		}
		res_sub(&rooms[i].free, "pods", 1000);
		return;
	}
}

static int charge_other_pod(void *ctx, const char *key, const json_t *pod)
{
	struct { struct node_room *rooms; size_t n; } *c = ctx;

	(void)key;
	charge(c->rooms, c->n, json_string_value(json_object_get(pod, "nodeName")),
	       json_object_get(pod, "requests"));
	return 0;
}

/* cadre's own pods are cached whole: sum their containers' requests. */
static int charge_own_pod(void *ctx, const char *key, const json_t *pod)
{
	struct { struct node_room *rooms; size_t n; } *c = ctx;
	const json_t *spec = json_object_get(pod, "spec"), *container;
	const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"),
							      "phase"));
	size_t i;

	(void)key;
	if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
		return 0;
	json_array_foreach(json_object_get(spec, "containers"), i, container)
		charge(c->rooms, c->n, json_string_value(json_object_get(spec, "nodeName")),
		       json_object_get(json_object_get(container, "resources"), "requests"));
	return 0;
}

static bool tolerates(const struct demand *d, const json_t *taint)
{
	const char *key = json_string_value(json_object_get(taint, "key"));
	const char *effect = json_string_value(json_object_get(taint, "effect"));
	const char *value = json_string_value(json_object_get(taint, "value"));
	const json_t *tol;
	size_t i;

	if (effect && !strcmp(effect, "PreferNoSchedule"))
		return true;
	/* cadre adds a toleration of the accelerator resource's taint. */
	if (d->accel && key && !strcmp(key, d->accel_resource))
		return true;
	json_array_foreach(d->job->spec.pod_template.tolerations, i, tol) {
		const char *tkey = json_string_value(json_object_get(tol, "key"));
		const char *op = json_string_value(json_object_get(tol, "operator"));
		const char *tval = json_string_value(json_object_get(tol, "value"));
		const char *teff = json_string_value(json_object_get(tol, "effect"));

		if (teff && *teff && (!effect || strcmp(teff, effect)))
			continue;
		if (!tkey || !*tkey) {
			if (op && !strcmp(op, "Exists"))
				return true;
			continue;
		}
		if (!key || strcmp(tkey, key))
			continue;
		if (op && !strcmp(op, "Exists"))
			return true;
		if (!strcmp(tval ? tval : "", value ? value : ""))
			return true;
	}
	return false;
}

enum why_not { FITS, NOT_READY, WRONG_TYPE, SELECTOR, TAINTED, NO_ROOM };

static enum why_not eligible(struct manager *m, const struct demand *d,
			     const struct node_room *room)
{
	const json_t *labels = json_object_get(json_object_get(room->obj, "metadata"), "labels");
	const json_t *taint;
	const char *key;
	json_t *value;
	size_t i;

	if (!room->schedulable)
		return NOT_READY;
	if (d->job->spec.resources.has_accel) {
		const char *v = json_string_value(json_object_get(labels,
								  m->opts->accelerator_label));

		if (!v || !accel_matches_label(d->job->spec.resources.accel.type, v))
			return WRONG_TYPE;
	}
	json_object_foreach(d->job->spec.pod_template.node_selector, key, value) {
		const char *have = json_string_value(json_object_get(labels, key));

		if (!have || !json_string_value(value) || strcmp(have, json_string_value(value)))
			return SELECTOR;
	}
	json_array_foreach(json_object_get(json_object_get(room->obj, "spec"), "taints"), i, taint) {
		const char *effect = json_string_value(json_object_get(taint, "effect"));

		if (effect && strcmp(effect, "PreferNoSchedule") && !tolerates(d, taint))
			return TAINTED;
	}
	return FITS;
}

/* How many pods of d fit in room's free resources. */
static int64_t copies(const struct demand *d, struct node_room *room)
{
	int64_t best = INT32_MAX, *slot;
	const struct { const char *name; int64_t milli; } need[] = {
		{ "cpu", d->cpu }, { "memory", d->memory }, { d->accel_resource, d->accel },
		{ "pods", 1000 },
	};

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (!need[i].milli)
			continue;
		slot = res_slot(&room->free, need[i].name);
		if (!slot)
			return 0;  /* the node does not offer it at all */
		if (*slot < need[i].milli)
			return 0;
		if (*slot / need[i].milli < best)
			best = *slot / need[i].milli;
	}
	return best;
}

static void take(const struct demand *d, struct node_room *room, int64_t n)
{
	res_sub(&room->free, "cpu", d->cpu * n);
	res_sub(&room->free, "memory", d->memory * n);
	if (d->accel)
		res_sub(&room->free, d->accel_resource, d->accel * n);
	res_sub(&room->free, "pods", 1000 * n);
}

static void demand_of(const struct trainingjob *job, struct demand *d, int pods)
{
	const struct tj_resources *r = &job->spec.resources;

	memset(d, 0, sizeof(*d));
	d->job = job;
	d->accel_resource = r->accelerator_resource ? r->accelerator_resource : "nvidia.com/gpu";
	d->cpu = r->has_cpus ? r->cpus_milli : 0;
	d->memory = r->has_memory ? r->memory_milli : 0;
	d->accel = r->has_accel ? (int64_t)r->accel.count * 1000 : 0;
	d->pods = pods;
}

/*
 * Place d's pods on the rooms, first fit in node order. Commits only when
 * every pod found a place (commit true) and reports how many nodes had room.
 */
static bool place(struct manager *m, const struct demand *d, struct node_room *rooms,
		  size_t n, bool commit, int counts[NO_ROOM + 1])
{
	int64_t placed = 0;

	for (size_t i = 0; i < n; i++) {
		enum why_not why = eligible(m, d, &rooms[i]);
		int64_t fit = why == FITS ? copies(d, &rooms[i]) : 0;

		if (why == FITS && !fit)
			why = NO_ROOM;
		if (counts)
			counts[why]++;
		placed += fit;
	}
	if (placed < d->pods || !commit)
		return placed >= d->pods;
	placed = 0;
	for (size_t i = 0; i < n && placed < d->pods; i++) {
		int64_t fit;

		if (eligible(m, d, &rooms[i]) != FITS)
			continue;
		fit = copies(d, &rooms[i]);
		if (fit > d->pods - placed)
			fit = d->pods - placed;
		take(d, &rooms[i], fit);
		placed += fit;
	}
	return true;
}

struct waiting {
	struct trainingjob job;
	int64_t since;     /* created, or last requeued after a failure */
	bool admitted;     /* holds a reservation: admitted, pods not all bound */
	int unbound;       /* pods of an admitted job that still need a place */
};

struct collect {
	struct manager *m;
	struct waiting *jobs;
	size_t n, cap;
	int64_t now;
	int err;
};

static bool condition_true(const struct trainingjob *job, const char *type)
{
	return condition_is_true(&job->status.conditions, type);
}

static int collect_job(void *ctx, const char *key, const json_t *obj)
{
	struct collect *c = ctx;
	struct field_errors errs;
	struct waiting *w;
	int attempt;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct waiting *more = realloc(c->jobs, cap * sizeof(*more));

		if (!more) {
			c->err = CADRE_ENOMEM;
			return c->err;
		}
		c->jobs = more;
		c->cap = cap;
	}
	w = &c->jobs[c->n];
	memset(w, 0, sizeof(*w));
	field_errors_init(&errs);
	if (tj_parse(obj, &w->job, &errs) || tj_validate(&w->job, &errs) ||
	    tj_phase_terminal(w->job.status.phase) || w->job.spec.suspend ||
	    w->job.meta.deleting || (w->job.spec.queue && *w->job.spec.queue) ||
	    w->job.status.phase == TJ_PHASE_PENDING || w->job.status.phase == TJ_PHASE_SUSPENDED) {
		field_errors_release(&errs);
		tj_release(&w->job);
		return 0;
	}
	field_errors_release(&errs);
	w->since = w->job.meta.creation_timestamp;
	attempt = w->job.status.restarts + w->job.status.infra_restarts;
	if (w->job.status.has_last_failure && w->job.status.last_failure.time > w->since)
		w->since = w->job.status.last_failure.time;
	if (condition_true(&w->job, "Admitted")) {
		/* Reserve room for the pods of this gang that are not on a node yet. */
		json_t *pods = NULL, *pod;
		int bound = 0;
		size_t i;

		if (store_by_index(c->m->stores[KIND_PODS], "job", key, &pods) == 0) {
			json_array_foreach(pods, i, pod) {
				struct podview v;

				podview_read(pod, &v);
				if (v.attempt == attempt && v.node && v.phase != POD_SUCCEEDED &&
				    v.phase != POD_FAILED)
					bound++;
			}
			json_decref(pods);
		}
		w->admitted = true;
		w->unbound = w->job.spec.num_nodes - bound;
		if (w->unbound <= 0) {
			tj_release(&w->job);
			return 0;
		}
	} else if (attempt > 0 && w->job.status.has_last_failure &&
		   c->now < w->job.status.last_failure.time + tj_restart_backoff_s(attempt)) {
		tj_release(&w->job);  /* backing off: not a candidate yet */
		return 0;
	}
	c->n++;
	return 0;
}

static int by_admission_order(const void *a, const void *b)
{
	const struct waiting *x = a, *y = b;
	int c;

	if (x->admitted != y->admitted)
		return x->admitted ? -1 : 1;  /* reservations first */
	if (x->job.spec.priority != y->job.spec.priority)
		return x->job.spec.priority > y->job.spec.priority ? -1 : 1;
	if (x->job.meta.creation_timestamp != y->job.meta.creation_timestamp)
		return x->job.meta.creation_timestamp < y->job.meta.creation_timestamp ? -1 : 1;
	c = strcmp(x->job.meta.namespace ? x->job.meta.namespace : "",
		   y->job.meta.namespace ? y->job.meta.namespace : "");
	return c ? c : strcmp(x->job.meta.name ? x->job.meta.name : "",
			      y->job.meta.name ? y->job.meta.name : "");
}

static bool same_job(const struct trainingjob *a, const struct trainingjob *b)
{
	return a->meta.uid && b->meta.uid && !strcmp(a->meta.uid, b->meta.uid);
}

static void describe_demand(const struct demand *d, struct buf *b)
{
	const struct tj_resources *r = &d->job->spec.resources;

	buf_addf(b, "needs %d node%s", d->pods, d->pods == 1 ? "" : "s");
	if (r->has_accel)
		buf_addf(b, " with %d %s of type %s", r->accel.count, d->accel_resource,
			 r->accel.type);
	if (r->cpus || r->memory)
		buf_adds(b, r->has_accel ? " and" : " with");
	if (r->cpus)
		buf_addf(b, " %s cpu%s", r->cpus, r->memory ? "," : "");
	if (r->memory)
		buf_addf(b, " %s memory", r->memory);
}

static void why_message(struct manager *m, const struct demand *d, const int counts[],
			struct buf *b)
{
	int room = counts[FITS];

	describe_demand(d, b);
	buf_addf(b, "; %d node%s ha%s room", room, room == 1 ? "" : "s", room == 1 ? "s" : "ve");
	if (counts[NO_ROOM])
		buf_addf(b, ", %d ha%s too little free", counts[NO_ROOM],
			 counts[NO_ROOM] == 1 ? "s" : "ve");
	if (counts[WRONG_TYPE])
		buf_addf(b, ", %d ha%s no %s matching %s", counts[WRONG_TYPE],
			 counts[WRONG_TYPE] == 1 ? "s" : "ve", m->opts->accelerator_label,
			 d->job->spec.resources.accel.type);
	if (counts[SELECTOR])
		buf_addf(b, ", %d do%s not match the node selector", counts[SELECTOR],
			 counts[SELECTOR] == 1 ? "es" : "");
	if (counts[TAINTED])
		buf_addf(b, ", %d ha%s taints the job does not tolerate", counts[TAINTED],
			 counts[TAINTED] == 1 ? "s" : "ve");
	if (counts[NOT_READY])
		buf_addf(b, ", %d %s not Ready or cordoned", counts[NOT_READY],
			 counts[NOT_READY] == 1 ? "is" : "are");
}

int gang_admit(struct manager *m, const struct trainingjob *job, struct tj_admission *out,
	       char *msg, size_t size)
{
	struct collect c = { .m = m, .now = time(NULL) };
	struct node_room *rooms = NULL;
	json_t *nodes = NULL, *node;
	struct { struct node_room *rooms; size_t n; } charge_ctx;
	const struct waiting *starving = NULL;
	struct demand d;
	struct buf text;
	size_t n_rooms = 0, i;
	int counts[NO_ROOM + 1] = { 0 };
	int err = 0;
	bool decided = false;

	buf_init(&text, size > 1 ? size - 1 : 1);
	*out = (struct tj_admission){ ADMIT_WAIT, "InsufficientCapacity", msg };
	pthread_mutex_lock(&m->admission_lock);
	err = store_list(m->stores[KIND_NODES], &nodes);
	if (err)
		goto out;
	rooms = calloc(json_array_size(nodes) + 1, sizeof(*rooms));
	if (!rooms) {
		err = CADRE_ENOMEM;
		goto out;
	}
	json_array_foreach(nodes, i, node) {
		struct node_room *room = &rooms[n_rooms++];

		room->obj = node;
		room->name = json_string_value(json_object_get(json_object_get(node, "metadata"),
							       "name"));
		if (!room->name)
			room->name = "";
		room->schedulable = node_schedulable(node);
		read_allocatable(room);
	}
	charge_ctx.rooms = rooms;
	charge_ctx.n = n_rooms;
	store_foreach(m->stores[KIND_OTHER_PODS], charge_other_pod, &charge_ctx);
	store_foreach(m->stores[KIND_PODS], charge_own_pod, &charge_ctx);

	store_foreach(m->stores[KIND_TRAININGJOBS], collect_job, &c);
	if (c.err) {
		err = c.err;
		goto out;
	}
	qsort(c.jobs, c.n, sizeof(*c.jobs), by_admission_order);

	for (i = 0; i < c.n && !decided; i++) {
		const struct waiting *w = &c.jobs[i];
		bool target = same_job(&w->job, job);
		bool fits;

		demand_of(&w->job, &d, w->admitted ? w->unbound : w->job.spec.num_nodes);
		if (w->admitted) {
			place(m, &d, rooms, n_rooms, true, NULL);
			continue;
		}
		if (starving && !target)
			continue;
		if (starving) {
			buf_addf(&text, "queued behind %s/%s (priority %d), which has waited %llds "
				 "for capacity and now holds back the jobs after it",
				 starving->job.meta.namespace, starving->job.meta.name,
				 starving->job.spec.priority, (long long)(c.now - starving->since));
			out->reason = "QueuedBehind";
			decided = true;
			break;
		}
		memset(counts, 0, sizeof(counts));
		fits = place(m, &d, rooms, n_rooms, true, target ? counts : NULL);
		if (target) {
			if (fits) {
				out->verdict = ADMIT_YES;
				out->reason = "Admitted";
				describe_demand(&d, &text);
				buf_adds(&text, ": the whole gang fits now");
			} else {
				why_message(m, &d, counts, &text);
			}
			decided = true;
		} else if (!fits && c.now - w->since >= m->opts->starvation_seconds) {
			starving = w;
		}
	}
	if (!decided) {
		/* Not a candidate (backing off, suspended...): say so plainly. */
		demand_of(job, &d, job->spec.num_nodes);
		memset(counts, 0, sizeof(counts));
		place(m, &d, rooms, n_rooms, false, counts);
		why_message(m, &d, counts, &text);
	}
out:
	pthread_mutex_unlock(&m->admission_lock);
	snprintf(msg, size, "%s", buf_str(&text));
	buf_release(&text);
	for (i = 0; i < c.n; i++)
		tj_release(&c.jobs[i].job);
	free(c.jobs);
	free(rooms);
	json_decref(nodes);
	return err;
}

void gang_matching_label_values(struct manager *m, const char *type, char ***values, size_t *n)
{
	json_t *nodes = NULL, *node;
	char **list = NULL;
	size_t i, count = 0;

	*values = NULL;
	*n = 0;
	if (store_list(m->stores[KIND_NODES], &nodes))
		return;
	list = calloc(json_array_size(nodes) + 1, sizeof(*list));
	if (!list)
		goto out;
	json_array_foreach(nodes, i, node) {
		const char *v = json_string_value(json_object_get(
			json_object_get(json_object_get(node, "metadata"), "labels"),
			m->opts->accelerator_label));
		bool seen = false;

		if (!v || !accel_matches_label(type, v))
			continue;
		for (size_t j = 0; j < count; j++)
			seen = seen || !strcmp(list[j], v);
		if (!seen && (list[count] = strdup(v)))
			count++;
	}
	*values = list;
	*n = count;
	list = NULL;
out:
	free(list);
	json_decref(nodes);
}
