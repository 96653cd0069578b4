/*
 * tj_depend_read.c - spec.dependency against the TrainingJob cache
 * (tj_depend_read.h says what is read and how).
 */
#include "controller/trainingjob/tj_depend_read.h"
#include "base/err.h"
#include "api/labels.h"
#include "api/meta.h"
#include "api/slurm.h"
#include "controller/manager/jobids.h"
#include "controller/manager/manager.h"

#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* A label or annotation of a cached object. */
static const char *meta_str(const json_t *obj, const char *map, const char *key)
{
	return str(json_object_get(json_object_get(obj, "metadata"), map), key);
}

/* The cached job of namespace ns holding Slurm id id (a new reference), or NULL. */
static json_t *job_by_id(struct manager *m, const char *ns, const char *id)
{
	json_t *held = NULL, *job, *found = NULL;
	size_t i;

	if (store_by_index(m->stores[KIND_TRAININGJOBS], JOBIDS_INDEX, id, &held))
		return NULL;
	json_array_foreach(held, i, job)
		if (!found && str(json_object_get(job, "metadata"), "namespace") &&
		    !strcmp(str(json_object_get(job, "metadata"), "namespace"), ns))
			found = json_incref(job);
	json_decref(held);
	return found;
}

static json_t *job_by_name(struct manager *m, const char *ns, const char *name)
{
	char key[STORE_KEY_MAX];
	json_t *obj = NULL;

	if (snprintf(key, sizeof(key), "%s/%s", ns, name) >= (int)sizeof(key))
		return NULL;
	return store_get(m->stores[KIND_TRAININGJOBS], key, &obj) ? NULL : obj;
}

/*
 * The cached job a dependency names (a Slurm job id, an array element
 * "ID_INDEX", or a name) in namespace ns, as a new reference; NULL when
 * there is none. For an element, *array is its array job when the element
 * is not there (a new reference; NULL otherwise).
 */
static json_t *dep_job(struct manager *m, const char *ns, const char *ref, json_t **array)
{
	const char *under = strchr(ref, '_');
	char id[24], name[STORE_KEY_MAX];
	json_t *parent, *element = NULL;

	*array = NULL;
	if (!slurm_job_id_text(ref))
		return job_by_name(m, ns, ref);
	snprintf(id, sizeof(id), "%.*s", (int)(under ? (size_t)(under - ref) : strlen(ref)), ref);
	parent = job_by_id(m, ns, id);
	if (!under || !parent)
		return parent;
	/* An array's element is <array>-<index>. */
	if (snprintf(name, sizeof(name), "%s-%s", str(json_object_get(parent, "metadata"), "name") ?
		     str(json_object_get(parent, "metadata"), "name") : "", under + 1) <
	    (int)sizeof(name))
		element = job_by_name(m, ns, name);
	if (element)
		json_decref(parent);
	else
		*array = parent;
	return element;
}

static void dep_target_read(const json_t *obj, struct tj_dep_target *t)
{
	const json_t *st = json_object_get(obj, "status");

	t->found = obj != NULL;
	if (!obj)
		return;
	if (tj_phase_parse(str(st, "phase"), &t->phase))
		t->phase = TJ_PHASE_UNSET;
	t->started = json_object_get(st, "admittedTime") != NULL;
}

/* Whether index is in a ranged set as the array's status writes it ("0-3,5"). */
static bool in_set(const char *text, int32_t index)
{
	unsigned char *set;
	bool in;

	if (!text || index < 0 || !(set = calloc((size_t)index + 1, 1)))
		return false;
	in = slurm_indices_mark(text, set, (size_t)index + 1) == 0 && set[index];
	free(set);
	return in;
}

/*
 * An element that is not there, from its array: no job when the array has
 * no such index; ended as the array's sets say; else pending (not made yet
 * under the throttle) or going (made, and deleted before the array saw it end).
 */
static void element_from_array(const json_t *array, const char *index_text,
			       struct tj_dep_target *t)
{
	const json_t *sets = json_object_get(json_object_get(array, "status"), "array");
	const char *spec = str(json_object_get(array, "spec"), "array");
	struct slurm_array a;
	char why[128], *end;
	long index = strtol(index_text, &end, 10);

	slurm_array_init(&a);
	if (!spec || *end || index < 0 || index >= SLURM_ARRAY_INDEX_LIMIT ||
	    slurm_array_parse(spec, SLURM_ARRAY_INDEX_LIMIT, &a, why, sizeof(why)) ||
	    !slurm_array_has(&a, (int32_t)index)) {
		t->no_such_index = true;
		slurm_array_release(&a);
		return;
	}
	slurm_array_release(&a);
	t->found = true;
	t->started = in_set(str(sets, "started"), (int32_t)index);
	if (in_set(str(sets, "succeeded"), (int32_t)index))
		t->phase = TJ_PHASE_SUCCEEDED;
	else if (in_set(str(sets, "failed"), (int32_t)index) ||
		 in_set(str(sets, "cancelled"), (int32_t)index))
		t->phase = TJ_PHASE_FAILED;  /* Slurm's CANCELLED: not ok, ended */
	else
		t->phase = t->started ? TJ_PHASE_RUNNING : TJ_PHASE_QUEUED;
}

static bool listed(char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* What the caches show of the job ref names, for job, into t. */
static void dep_target_fill(struct manager *m, const struct trainingjob *job, const char *ref,
			    struct tj_dep_target *t)
{
	json_t *array = NULL, *obj = dep_job(m, job->meta.namespace, ref, &array);

	t->ref = ref;
	dep_target_read(obj, t);
	if (!obj && array)
		element_from_array(array, strchr(ref, '_') + 1, t);
	t->seen = listed(job->status.dependency_seen, job->status.n_dependency_seen, ref);
	json_decref(obj);
	json_decref(array);
}

/*
 * singleton: an older job of the same Slurm name and submitter still
 * running or waiting, or any such that was admitted. Its name into out
 * (false when none).
 */
static bool singleton_blocker(struct manager *m, const struct trainingjob *job, char *out,
			      size_t size)
{
	const struct object_meta *me = &job->meta;
	const char *group = meta_label(me, LABEL_SLURM_NAME) ? meta_label(me, LABEL_SLURM_NAME) :
			    me->name;
	const char *user = meta_annotation(me, ANNOTATION_SUBMITTED_BY);
	json_t *all = NULL, *obj;
	bool found = false;
	char key[1024];
	size_t i;

	/* Only its group, from the cache's index (tj_depend.h). */
	if (!tj_singleton_key(me->namespace, group, user, key, sizeof(key)) ||
	    store_by_index(m->stores[KIND_TRAININGJOBS], TJ_SINGLETON_INDEX, key, &all))
		return false;
	json_array_foreach(all, i, obj) {
		const json_t *meta = json_object_get(obj, "metadata");
		const char *ns = str(meta, "namespace"), *name = str(meta, "name");
		const char *its_group = meta_str(obj, "labels", LABEL_SLURM_NAME);
		const char *its_user = meta_str(obj, "annotations", ANNOTATION_SUBMITTED_BY);
		const char *phase = str(json_object_get(obj, "status"), "phase");
		int64_t created = 0;
		enum tj_phase ph = TJ_PHASE_UNSET;
		bool older, started;

		if (!ns || !name || strcmp(ns, me->namespace) || !strcmp(name, me->name))
			continue;
		if (strcmp(its_group ? its_group : name, group) ||
		    strcmp(its_user ? its_user : "", user ? user : ""))
			continue;
		if (phase && !tj_phase_parse(phase, &ph) && tj_phase_terminal(ph))
			continue;
		api_time_parse(str(meta, "creationTimestamp"), &created);
		older = created < me->creation_timestamp ||
			(created == me->creation_timestamp && strcmp(name, me->name) < 0);
		started = json_object_get(json_object_get(obj, "status"), "admittedTime") != NULL;
		if (older || started) {
			snprintf(out, size, "%s", name);
			found = true;
			break;
		}
	}
	json_decref(all);
	return found;
}

/* The cycle walk: jobs read so far, and the chain from the job to the one read now. */
struct walk {
	struct manager *m;
	const char *ns, *self_uid;
	json_t *visited;        /* uid -> true */
	const char *chain[16];
	int depth;
};

static bool leads_back(struct walk *w, const json_t *dependency, char *out, size_t size);

/* One job a waiting job names: the job itself (a cycle), or one to follow. */
static bool ref_leads_back(struct walk *w, const char *ref, char *out, size_t size)
{
	json_t *array = NULL, *obj = dep_job(w->m, w->ns, ref, &array);
	const json_t *meta = json_object_get(obj, "metadata");
	const char *uid = str(meta, "uid"), *name = str(meta, "name");
	bool back = false;

	json_decref(array);
	if (!obj || !uid || !name) {
		json_decref(obj);
		return false;
	}
	if (!strcmp(uid, w->self_uid)) {
		size_t len = 0;

		for (int i = 0; i < w->depth && len < size; i++)
			len += (size_t)snprintf(out + len, size - len, "%s -> ", w->chain[i]);
		if (len < size)
			snprintf(out + len, size - len, "%s", name);
		back = true;
	} else if (!json_object_get(w->visited, uid) &&
		   json_object_size(w->visited) < TJ_DEP_WALK_MAX &&
		   w->depth < (int)(sizeof(w->chain) / sizeof(w->chain[0])) &&
		   tj_waits_for_dependency(obj) &&
		   !json_object_set_new(w->visited, uid, json_true())) {
		w->chain[w->depth++] = name;
		back = leads_back(w, json_object_get(json_object_get(obj, "spec"), "dependency"),
				  out, size);
		w->depth--;
	}
	json_decref(obj);
	return back;
}

static bool leads_back(struct walk *w, const json_t *dependency, char *out, size_t size)
{
	const json_t *item, *ref;
	size_t i, j;

	json_array_foreach(json_object_get(dependency, "items"), i, item)
		json_array_foreach(json_object_get(item, "jobs"), j, ref)
			if (json_string_value(ref) &&
			    ref_leads_back(w, json_string_value(ref), out, size))
				return true;
	return false;
}

/* The chain that leads from job back to itself into out ("a -> b -> a"), or false. */
static bool dep_cycle(struct manager *m, const struct trainingjob *job, char *out, size_t size)
{
	const struct slurm_dep *d = &job->spec.dependency;
	struct walk w = { m, job->meta.namespace, job->meta.uid, json_object(), { 0 }, 1 };
	bool back = false;

	if (!w.visited || !job->meta.uid || !job->meta.name)
		goto out;
	w.chain[0] = job->meta.name;
	for (size_t i = 0; i < d->n_items && !back; i++)
		for (size_t j = 0; j < d->items[i].n_jobs && !back; j++)
			back = ref_leads_back(&w, d->items[i].jobs[j], out, size);
out:
	json_decref(w.visited);
	return back;
}

int tj_dependency_read(struct manager *m, const struct trainingjob *job,
		       struct tj_dep_verdict *out, bool *decided)
{
	const struct tj_spec *spec = &job->spec;
	const struct tj_status *st = &job->status;
	struct tj_dep_target *targets;
	char blocker[256], cycle[512];
	bool singleton = false;
	size_t n = 0, cap = 0;
	int err;

	*decided = false;
	if (!spec->has_dependency || st->dependency_met || st->admitted_time)
		return 0;
	for (size_t i = 0; i < spec->dependency.n_items; i++)
		cap += spec->dependency.items[i].n_jobs;
	if (!(targets = calloc(cap + 1, sizeof(*targets))))
		return CADRE_ENOMEM;
	for (size_t i = 0; i < spec->dependency.n_items; i++) {
		const struct slurm_dep_item *it = &spec->dependency.items[i];

		singleton |= it->type == SLURM_DEP_SINGLETON;
		for (size_t j = 0; j < it->n_jobs; j++)
			dep_target_fill(m, job, it->jobs[j], &targets[n++]);
	}
	err = tj_dep_decide(job, targets, n,
			    singleton && singleton_blocker(m, job, blocker, sizeof(blocker)) ?
			    blocker : NULL,
			    dep_cycle(m, job, cycle, sizeof(cycle)) ? cycle : NULL, out);
	free(targets);
	*decided = true;
	return err;
}

/* Whether someone other than uid is filed under ns/ref in the awaited index. */
static bool awaited_as(struct manager *m, const char *ns, const char *ref, const char *uid)
{
	char key[STORE_KEY_MAX];
	json_t *list = NULL, *obj;
	bool awaited = false;
	size_t i;

	if (!ref || !*ref || snprintf(key, sizeof(key), "%s/%s", ns, ref) >= (int)sizeof(key) ||
	    store_by_index(m->stores[KIND_TRAININGJOBS], TJ_AWAITED_INDEX, key, &list))
		return false;
	json_array_foreach(list, i, obj) {
		const char *its = str(json_object_get(obj, "metadata"), "uid");

		awaited |= !its || !uid || strcmp(its, uid);
	}
	json_decref(list);
	return awaited;
}

bool tj_dependency_awaited(struct manager *m, const struct trainingjob *job)
{
	const char *ns = job->meta.namespace;
	const char *array_id = meta_annotation(&job->meta, ANNOTATION_ARRAY_JOB_ID);
	const char *index = meta_label(&job->meta, LABEL_ARRAY_INDEX);
	char element[64];

	if (!ns)
		return false;
	if (awaited_as(m, ns, job->meta.name, job->meta.uid) ||
	    awaited_as(m, ns, job->status.job_id, job->meta.uid))
		return true;
	return array_id && index &&
	       snprintf(element, sizeof(element), "%s_%s", array_id, index) <
	       (int)sizeof(element) && awaited_as(m, ns, element, job->meta.uid);
}
