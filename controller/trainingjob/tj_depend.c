/*
 * tj_depend.c - a job's spec.dependency against what the caches show
 * (tj_depend.h has the rules).
 */
#include "controller/trainingjob/tj_depend.h"

#include "base/err.h"
#include "api/labels.h"
#include "kube/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tj_dep_verdict_release(struct tj_dep_verdict *v)
{
	for (size_t i = 0; i < v->n_satisfied; i++)
		free(v->satisfied[i]);
	free(v->satisfied);
	for (size_t i = 0; i < v->n_seen; i++)
		free(v->seen[i]);
	free(v->seen);
	memset(v, 0, sizeof(*v));
}

static const struct tj_dep_target *target_of(const struct tj_dep_target *t, size_t n,
					     const char *ref)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].ref && !strcmp(t[i].ref, ref))
			return &t[i];
	return NULL;
}

static bool recorded(const struct trainingjob *job, const char *key)
{
	for (size_t i = 0; i < job->status.n_dependency_satisfied; i++)
		if (!strcmp(job->status.dependency_satisfied[i], key))
			return true;
	return false;
}

/* One job of an item: met, waiting or never, and why in why. */
static enum tj_dep_state pair_state(enum slurm_dep_type type, const char *ref,
				    const struct tj_dep_target *t, char *why, size_t size)
{
	bool by_id = slurm_job_id_text(ref);
	bool ok, failed;

	if (t && t->seen && !t->found) {
		/* Deleted since it was seen: cadre's cancel, as far as a dependency can tell. */
		snprintf(why, size, "job %s was cancelled (deleted)", ref);
		return type == SLURM_DEP_AFTEROK ? TJ_DEP_NEVER : TJ_DEP_MET;
	}
	if (!t || !t->found) {
		if (!by_id && !(t && t->no_such_index)) {
			snprintf(why, size, "job %s does not exist (yet)", ref);
			return TJ_DEP_WAIT;
		}
		/* No such job: Slurm refuses afterok and afternotok on it, lifts the others. */
		snprintf(why, size, "job %s does not exist%s", ref,
			 t && t->no_such_index ? ": its array has no such index" : "");
		return type == SLURM_DEP_AFTEROK || type == SLURM_DEP_AFTERNOTOK ? TJ_DEP_NEVER :
		       TJ_DEP_MET;
	}
	ok = t->phase == TJ_PHASE_SUCCEEDED;
	failed = t->phase == TJ_PHASE_FAILED;
	snprintf(why, size, "job %s is %s", ref, tj_phase_name(t->phase)[0] ?
		 tj_phase_name(t->phase) : "new");
	switch (type) {
	case SLURM_DEP_AFTER:
		return t->started || ok || failed ? TJ_DEP_MET : TJ_DEP_WAIT;
	case SLURM_DEP_AFTERANY:
		return ok || failed ? TJ_DEP_MET : TJ_DEP_WAIT;
	case SLURM_DEP_AFTEROK:
		return ok ? TJ_DEP_MET : failed ? TJ_DEP_NEVER : TJ_DEP_WAIT;
	case SLURM_DEP_AFTERNOTOK:
		return failed ? TJ_DEP_MET : ok ? TJ_DEP_NEVER : TJ_DEP_WAIT;
	case SLURM_DEP_SINGLETON:
		break;
	}
	return TJ_DEP_WAIT;
}

static int add_satisfied(struct tj_dep_verdict *v, const char *key)
{
	char **more = realloc(v->satisfied, (v->n_satisfied + 1) * sizeof(*more));

	if (!more)
		return CADRE_ENOMEM;
	v->satisfied = more;
	if (!(v->satisfied[v->n_satisfied] = strdup(key)))
		return CADRE_ENOMEM;
	v->n_satisfied++;
	return 0;
}

/* Add every ref found now to v->seen, each once. 0 or CADRE_ENOMEM. */
static int add_seen(struct tj_dep_verdict *v, const struct tj_dep_target *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool have = false;
		char **more;

		for (size_t j = 0; j < v->n_seen && !have; j++)
			have = !strcmp(v->seen[j], t[i].ref);
		if (!t[i].found || !t[i].ref || have)
			continue;
		if (!(more = realloc(v->seen, (v->n_seen + 1) * sizeof(*more))))
			return CADRE_ENOMEM;
		v->seen = more;
		if (!(v->seen[v->n_seen] = strdup(t[i].ref)))
			return CADRE_ENOMEM;
		v->n_seen++;
	}
	return 0;
}

int tj_dep_decide(const struct trainingjob *job, const struct tj_dep_target *targets, size_t n,
		  const char *singleton_by, const char *cycle, struct tj_dep_verdict *out)
{
	const struct slurm_dep *d = &job->spec.dependency;
	char first_wait[512] = "", first_never[512] = "";
	size_t met = 0, never = 0;

	memset(out, 0, sizeof(*out));
	if (add_seen(out, targets, n))
		return CADRE_ENOMEM;
	if (cycle) {
		out->state = TJ_DEP_NEVER;
		snprintf(out->message, sizeof(out->message), "circular job dependency: %.470s",
			 cycle);
		return 0;
	}
	for (size_t i = 0; i < d->n_items; i++) {
		const struct slurm_dep_item *it = &d->items[i];
		const char *type = slurm_dep_type_name(it->type);
		enum tj_dep_state item = TJ_DEP_MET;
		char why[256], key[320], text[512];

		if (it->type == SLURM_DEP_SINGLETON) {
			if (singleton_by) {
				item = TJ_DEP_WAIT;
				snprintf(text, sizeof(text), "singleton: job %s of the same name and "
					 "user is still running or waiting", singleton_by);
				if (!*first_wait)
					snprintf(first_wait, sizeof(first_wait), "%s", text);
			}
			met += item == TJ_DEP_MET;
			continue;
		}
		for (size_t j = 0; j < it->n_jobs; j++) {
			enum tj_dep_state s;

			snprintf(key, sizeof(key), "%s:%s", type, it->jobs[j]);
			if (recorded(job, key))
				continue;
			s = pair_state(it->type, it->jobs[j],
				       target_of(targets, n, it->jobs[j]), why, sizeof(why));
			if (s == TJ_DEP_MET && add_satisfied(out, key))
				return CADRE_ENOMEM;
			if (s == TJ_DEP_NEVER) {
				item = TJ_DEP_NEVER;
				if (!*first_never)
					snprintf(first_never, sizeof(first_never), "dependency %.200s "
						 "can never be satisfied: %.255s", key, why);
			} else if (s == TJ_DEP_WAIT && item != TJ_DEP_NEVER) {
				item = TJ_DEP_WAIT;
				if (!*first_wait)
					snprintf(first_wait, sizeof(first_wait), "%.200s: %.255s", key,
						 why);
			}
		}
		met += item == TJ_DEP_MET;
		never += item == TJ_DEP_NEVER;
	}
	if (d->any ? met > 0 : met == d->n_items)
		out->state = TJ_DEP_MET;
	else if (d->any ? never == d->n_items : never > 0)
		out->state = TJ_DEP_NEVER;
	else
		out->state = TJ_DEP_WAIT;
	if (out->state == TJ_DEP_NEVER)
		snprintf(out->message, sizeof(out->message), "%s", first_never);
	else if (out->state == TJ_DEP_WAIT)
		snprintf(out->message, sizeof(out->message), "waiting for dependency %.480s",
			 first_wait);
	return 0;
}

size_t tj_singleton_key(const char *ns, const char *group, const char *user, char *out,
			size_t size)
{
	/* A unit separator: no Kubernetes name or label value holds one. */
	int n = snprintf(out, size, "%s\x1f%s\x1f%s", ns, group, user ? user : "");

	if (n < 0 || (size_t)n >= size) {
		if (size)
			out[0] = '\0';
		return 0;
	}
	return (size_t)n;
}

static const char *meta_str(const json_t *meta, const char *map, const char *key)
{
	return json_string_value(json_object_get(json_object_get(meta, map), key));
}

int tj_singleton_index(const json_t *job, json_t *values, void *arg)
{
	const json_t *meta = json_object_get(job, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *group = meta_str(meta, "labels", LABEL_SLURM_NAME);
	const char *phase = json_string_value(json_object_get(json_object_get(job, "status"),
							      "phase"));
	enum tj_phase ph;
	char key[1024];

	(void)arg;
	if (!ns || !name || (phase && !tj_phase_parse(phase, &ph) && tj_phase_terminal(ph)))
		return 0;
	if (!tj_singleton_key(ns, group ? group : name, meta_str(meta, "annotations",
								 ANNOTATION_SUBMITTED_BY),
			      key, sizeof(key)))
		return 0;
	return json_array_append_new(values, json_string(key)) ? CADRE_ENOMEM : 0;
}

bool tj_waits_for_dependency(const json_t *job)
{
	const json_t *st = json_object_get(job, "status");
	const char *phase = json_string_value(json_object_get(st, "phase"));
	enum tj_phase ph;

	if (!json_object_get(json_object_get(job, "spec"), "dependency") ||
	    json_is_true(json_object_get(json_object_get(st, "dependency"), "met")) ||
	    json_object_get(st, "admittedTime"))
		return false;
	return !(phase && !tj_phase_parse(phase, &ph) && tj_phase_terminal(ph));
}

/* Whether "type:ref" is in the job's status.dependency.satisfied. */
static bool satisfied_json(const json_t *job, const char *type, const char *ref)
{
	const json_t *list = json_object_get(json_object_get(json_object_get(job, "status"),
							     "dependency"), "satisfied");
	const json_t *v;
	size_t i, tl = strlen(type);

	json_array_foreach(list, i, v) {
		const char *s = json_string_value(v);

		if (s && !strncmp(s, type, tl) && s[tl] == ':' && !strcmp(s + tl + 1, ref))
			return true;
	}
	return false;
}

int tj_awaited_index(const json_t *job, json_t *values, void *arg)
{
	const char *ns = json_string_value(json_object_get(json_object_get(job, "metadata"),
							   "namespace"));
	const json_t *items = json_object_get(json_object_get(json_object_get(job, "spec"),
							      "dependency"), "items");
	const json_t *item, *ref;
	char key[STORE_KEY_MAX];
	size_t i, j;

	(void)arg;
	if (!ns || !tj_waits_for_dependency(job))
		return 0;
	json_array_foreach(items, i, item) {
		const char *type = json_string_value(json_object_get(item, "type"));

		json_array_foreach(json_object_get(item, "jobs"), j, ref) {
			const char *r = json_string_value(ref);

			if (!type || !r || satisfied_json(job, type, r) ||
			    snprintf(key, sizeof(key), "%s/%s", ns, r) >= (int)sizeof(key))
				continue;
			if (json_array_append_new(values, json_string(key)))
				return CADRE_ENOMEM;
		}
	}
	return 0;
}
