/*
 * trainingjob_status.c - a TrainingJob's status: reading it back from the
 * object and writing it as the body of a PUT to /status.
 */
#include "api/trainingjob.h"

#include "api/decode.h"
#include "api/fielderr.h"
#include "base/err.h"

#include <stdlib.h>
#include <string.h>

static void failure_release(struct tj_failure *f)
{
	free(f->pod);
	free(f->node);
	free(f->reason);
	free(f->message);
	memset(f, 0, sizeof(*f));
}

int tj_attempt(const struct tj_status *status)
{
	return status->restarts + status->infra_restarts + status->requeues +
	       status->preemptions;
}

int tj_ranks_placed(const struct tj_status *status, int num_nodes)
{
	int placed = 0;

	/* The planner writes one entry per rank. */
	for (size_t i = 0; i < status->n_nodes; i++)
		placed += status->nodes[i].rank >= 0 && status->nodes[i].rank < num_nodes &&
			  status->nodes[i].node && *status->nodes[i].node;
	return placed;
}

bool tj_in_place_current(const struct tj_status *status)
{
	return status->has_in_place && status->in_place.attempt == tj_attempt(status);
}

void tj_preempting_clear(struct tj_status *status)
{
	for (size_t i = 0; i < status->n_preempting; i++)
		free(status->preempting[i].job);
	free(status->preempting);
	status->preempting = NULL;
	status->n_preempting = 0;
}

bool tj_excluded_timed_out(const struct tj_excluded_node *x)
{
	return x->reason && !strcmp(x->reason, TJ_EXCLUDED_GANG_TIMEOUT);
}

void tj_status_init(struct tj_status *status)
{
	memset(status, 0, sizeof(*status));
	condition_list_init(&status->conditions);
}

void tj_status_release(struct tj_status *status)
{
	condition_list_release(&status->conditions);
	free(status->job_id);
	free(status->task_id);
	for (size_t i = 0; i < status->n_nodes; i++) {
		free(status->nodes[i].pod);
		free(status->nodes[i].node);
		free(status->nodes[i].ip);
		free(status->nodes[i].phase);
	}
	free(status->nodes);
	failure_release(&status->last_failure);
	free(status->message);
	for (size_t i = 0; i < status->n_excluded_nodes; i++) {
		free(status->excluded_nodes[i].node);
		free(status->excluded_nodes[i].reason);
	}
	free(status->excluded_nodes);
	for (size_t i = 0; i < status->n_failures; i++) {
		free(status->failures[i].reason);
		free(status->failures[i].node);
	}
	free(status->failures);
	free(status->partition);
	json_decref(status->partition_spec);
	free(status->array_started);
	free(status->array_succeeded);
	free(status->array_failed);
	free(status->array_cancelled);
	for (size_t i = 0; i < status->n_dependency_satisfied; i++)
		free(status->dependency_satisfied[i]);
	free(status->dependency_satisfied);
	for (size_t i = 0; i < status->n_dependency_seen; i++)
		free(status->dependency_seen[i]);
	free(status->dependency_seen);
	free(status->requeued);
	free(status->preemption.preemptor);
	free(status->preemption.mode);
	tj_preempting_clear(status);
	tj_topology_status_release(&status->topology);
	tj_status_init(status);
}

void tj_topology_status_release(struct tj_topology_status *t)
{
	free(t->level);
	for (size_t i = 0; i < t->n_domains; i++)
		free(t->domains[i]);
	free(t->domains);
	memset(t, 0, sizeof(*t));
}

/* status.inPlaceRestart (docs/failures.md). */
static void parse_in_place(struct decoder *d, const json_t *obj, struct tj_status *st)
{
	const json_t *ip = decode_object(d, obj, "status", "inPlaceRestart");

	if (!ip)
		return;
	st->has_in_place = true;
	decode_int32(d, ip, "status.inPlaceRestart", "attempt", &st->in_place.attempt, NULL);
	decode_time(d, ip, "status.inPlaceRestart", "time", &st->in_place.time);
}

/* status.preemption and status.preempting (docs/design.md 3.5). */
static void parse_preemption(struct decoder *d, const json_t *obj, struct tj_status *st)
{
	const json_t *pre = decode_object(d, obj, "status", "preemption");
	const json_t *list = decode_array(d, obj, "status", "preempting"), *item;
	char path[DECODE_PATH_MAX];
	size_t i;

	if (pre) {
		struct tj_preemption *p = &st->preemption;

		st->has_preemption = true;
		decode_string(d, pre, "status.preemption", "preemptor", &p->preemptor);
		decode_int32(d, pre, "status.preemption", "attempt", &p->attempt, NULL);
		decode_time(d, pre, "status.preemption", "time", &p->time);
		decode_int64(d, pre, "status.preemption", "graceSeconds", &p->grace_s, NULL);
		decode_string(d, pre, "status.preemption", "mode", &p->mode);
		decode_int32(d, pre, "status.preemption", "tier", &p->tier, NULL);
	}
	if (!list || !json_array_size(list))
		return;
	st->preempting = calloc(json_array_size(list), sizeof(*st->preempting));
	if (!st->preempting) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(list, i, item) {
		struct tj_preempting *v = &st->preempting[st->n_preempting];

		decode_path_index(path, sizeof(path), "status.preempting", i);
		if (!decode_as_object(d, item, path))
			continue;
		decode_string(d, item, path, "job", &v->job);
		decode_int32(d, item, path, "attempt", &v->attempt, NULL);
		if (v->job)
			st->n_preempting++;
	}
}

/* status.topology: {level, domains}. */
static void parse_topology(struct decoder *d, const json_t *obj, struct tj_status *st)
{
	const json_t *topo = decode_object(d, obj, "status", "topology");
	const json_t *list = decode_array(d, topo, "status.topology", "domains"), *item;
	char path[DECODE_PATH_MAX];
	size_t i;

	if (!topo)
		return;
	decode_string(d, topo, "status.topology", "level", &st->topology.level);
	if (!list || !json_array_size(list))
		return;
	st->topology.domains = calloc(json_array_size(list), sizeof(*st->topology.domains));
	if (!st->topology.domains) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(list, i, item) {
		decode_path_index(path, sizeof(path), "status.topology.domains", i);
		if (!json_is_string(item)) {
			decode_fail(d, path, "must be a string");
			continue;
		}
		if (!(st->topology.domains[st->topology.n_domains] = strdup(json_string_value(item)))) {
			decode_nomem(d);
			return;
		}
		st->topology.n_domains++;
	}
}

static void parse_excluded_nodes(struct decoder *d, const json_t *obj, struct tj_status *st)
{
	char path[DECODE_PATH_MAX];
	const json_t *list = decode_array(d, obj, "status", "excludedNodes");
	size_t i;
	json_t *item;

	if (!list || !json_array_size(list))
		return;
	st->excluded_nodes = calloc(json_array_size(list), sizeof(*st->excluded_nodes));
	if (!st->excluded_nodes) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(list, i, item) {
		struct tj_excluded_node *x = &st->excluded_nodes[st->n_excluded_nodes];

		decode_path_index(path, sizeof(path), "status.excludedNodes", i);
		if (!decode_as_object(d, item, path))
			continue;
		st->n_excluded_nodes++;
		decode_string(d, item, path, "node", &x->node);
		decode_string(d, item, path, "reason", &x->reason);
		decode_time(d, item, path, "time", &x->time);
	}
}

static void parse_failures(struct decoder *d, const json_t *obj, struct tj_status *st)
{
	char path[DECODE_PATH_MAX];
	const json_t *list = decode_array(d, obj, "status", "failures");
	size_t i;
	json_t *item;

	if (!list || !json_array_size(list))
		return;
	st->failures = calloc(json_array_size(list), sizeof(*st->failures));
	if (!st->failures) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(list, i, item) {
		struct tj_failure_record *f = &st->failures[st->n_failures];

		decode_path_index(path, sizeof(path), "status.failures", i);
		if (!decode_as_object(d, item, path))
			continue;
		st->n_failures++;
		f->rank = -1;
		decode_int32(d, item, path, "attempt", &f->attempt, NULL);
		decode_string(d, item, path, "reason", &f->reason);
		decode_bool(d, item, path, "infrastructure", &f->infrastructure);
		decode_int32(d, item, path, "rank", &f->rank, NULL);
		decode_string(d, item, path, "node", &f->node);
		decode_int32(d, item, path, "exitCode", &f->exit_code, NULL);
		decode_time(d, item, path, "time", &f->time);
	}
}

static void parse_nodes(struct decoder *d, const json_t *obj, struct tj_status *st)
{
	char path[DECODE_PATH_MAX];
	const json_t *list = decode_array(d, obj, "status", "nodes");
	size_t i;
	json_t *item;

	if (!list || !json_array_size(list))
		return;
	st->nodes = calloc(json_array_size(list), sizeof(*st->nodes));
	if (!st->nodes) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(list, i, item) {
		struct tj_node_status *node = &st->nodes[st->n_nodes];

		decode_path_index(path, sizeof(path), "status.nodes", i);
		if (!decode_as_object(d, item, path)) {
			if (json_is_null(item))
				decode_fail(d, path, "must be an object, not null");
			continue;
		}
		st->n_nodes++;
		decode_int32(d, item, path, "rank", &node->rank, NULL);
		decode_string(d, item, path, "pod", &node->pod);
		decode_string(d, item, path, "node", &node->node);
		decode_string(d, item, path, "ip", &node->ip);
		decode_string(d, item, path, "phase", &node->phase);
	}
}

static void parse_last_failure(struct decoder *d, const json_t *obj, struct tj_status *st)
{
	const char *base = "status.lastFailure";
	const json_t *f = decode_object(d, obj, "status", "lastFailure");
	struct tj_failure *lf = &st->last_failure;

	if (!f)
		return;
	st->has_last_failure = true;
	decode_int32(d, f, base, "rank", &lf->rank, NULL);
	decode_string(d, f, base, "pod", &lf->pod);
	decode_string(d, f, base, "node", &lf->node);
	decode_int32(d, f, base, "exitCode", &lf->exit_code, NULL);
	decode_string(d, f, base, "reason", &lf->reason);
	decode_string(d, f, base, "message", &lf->message);
	decode_time(d, f, base, "time", &lf->time);
}

/* status.array: the elements of an array job, as ranged index sets. */
static void parse_array(struct decoder *d, const json_t *obj, struct tj_status *st)
{
	const json_t *a = decode_object(d, obj, "status", "array");

	if (!a)
		return;
	st->has_array = true;
	decode_string(d, a, "status.array", "started", &st->array_started);
	decode_string(d, a, "status.array", "succeeded", &st->array_succeeded);
	decode_string(d, a, "status.array", "failed", &st->array_failed);
	decode_string(d, a, "status.array", "cancelled", &st->array_cancelled);
}

/* A list of strings at status.dependency.<key> into *out. */
static void parse_string_list(struct decoder *d, const json_t *dep, const char *key, char ***out,
			      size_t *n)
{
	const json_t *list = decode_array(d, dep, "status.dependency", key), *v;
	char path[DECODE_PATH_MAX], base[DECODE_PATH_MAX];
	size_t i;

	if (!list || !json_array_size(list))
		return;
	if (!(*out = calloc(json_array_size(list), sizeof(char *)))) {
		decode_nomem(d);
		return;
	}
	decode_path(base, sizeof(base), "status.dependency", key);
	json_array_foreach(list, i, v) {
		decode_path_index(path, sizeof(path), base, i);
		if (decode_as_string(d, v, path, &(*out)[*n]))
			(*n)++;
	}
}

/* status.dependency: {met, satisfied: ["afterok:prep", ...], seen: ["prep", ...]}. */
static void parse_dependency_status(struct decoder *d, const json_t *obj, struct tj_status *st)
{
	const json_t *dep = decode_object(d, obj, "status", "dependency");

	decode_bool(d, dep, "status.dependency", "met", &st->dependency_met);
	parse_string_list(d, dep, "satisfied", &st->dependency_satisfied,
			  &st->n_dependency_satisfied);
	parse_string_list(d, dep, "seen", &st->dependency_seen, &st->n_dependency_seen);
}

int tj_status_parse(const json_t *obj, struct tj_status *status, struct field_errors *errs)
{
	struct decoder d;
	char *phase = NULL;

	tj_status_init(status);
	decode_init(&d, errs);
	if (!decode_as_object(&d, obj, "status"))
		return decode_finish(&d);
	if (decode_string(&d, obj, "status", "phase", &phase) && *phase &&
	    tj_phase_parse(phase, &status->phase))
		decode_fail(&d, "status.phase", "unknown phase \"%.64s\"", phase);
	free(phase);
	decode_merge(&d, condition_list_parse(json_object_get(obj, "conditions"),
					      "status.conditions", &status->conditions, errs));
	decode_int64(&d, obj, "status", "observedGeneration", &status->observed_generation, NULL);
	decode_string(&d, obj, "status", "jobId", &status->job_id);
	decode_string(&d, obj, "status", "taskId", &status->task_id);
	decode_int32(&d, obj, "status", "readyNodes", &status->ready_nodes, NULL);
	decode_int32(&d, obj, "status", "restarts", &status->restarts, NULL);
	decode_int32(&d, obj, "status", "infraRestarts", &status->infra_restarts, NULL);
	decode_int32(&d, obj, "status", "requeues", &status->requeues, NULL);
	decode_int32(&d, obj, "status", "preemptions", &status->preemptions, NULL);
	decode_time(&d, obj, "status", "admittedTime", &status->admitted_time);
	decode_time(&d, obj, "status", "startTime", &status->start_time);
	decode_time(&d, obj, "status", "completionTime", &status->completion_time);
	parse_nodes(&d, obj, status);
	parse_last_failure(&d, obj, status);
	parse_excluded_nodes(&d, obj, status);
	parse_failures(&d, obj, status);
	parse_topology(&d, obj, status);
	decode_string(&d, obj, "status", "message", &status->message);
	decode_string(&d, obj, "status", "partition", &status->partition);
	/* JSON text, so that the schema keeps every field of the status known. */
	if (json_is_string(json_object_get(obj, "partitionSpec"))) {
		json_t *spec = json_loads(json_string_value(json_object_get(obj, "partitionSpec")),
					  0, NULL);

		if (json_is_object(spec))
			status->partition_spec = spec;
		else
			json_decref(spec);
	}
	parse_array(&d, obj, status);
	parse_dependency_status(&d, obj, status);
	decode_string(&d, obj, "status", "requeued", &status->requeued);
	parse_preemption(&d, obj, status);
	parse_in_place(&d, obj, status);
	return decode_finish(&d);
}

/* Set key to a copy of s when s is not NULL. false when out of memory or not UTF-8. */
static bool put_string(json_t *obj, const char *key, const char *s)
{
	return !s || !json_object_set_new(obj, key, json_string(s));
}

static bool put_int(json_t *obj, const char *key, int64_t n)
{
	return !json_object_set_new(obj, key, json_integer((json_int_t)n));
}

/* A time, left out when 0 (unset). */
static bool put_time(json_t *obj, const char *key, int64_t t)
{
	char text[32];

	if (!t)
		return true;
	if (api_time_format(t, text))
		return false;
	return put_string(obj, key, text);
}

static json_t *nodes_to_json(const struct tj_status *st)
{
	json_t *array = json_array();

	for (size_t i = 0; array && i < st->n_nodes; i++) {
		const struct tj_node_status *n = &st->nodes[i];
		json_t *obj = json_object();

		if (!obj || !put_int(obj, "rank", n->rank) || !put_string(obj, "pod", n->pod) ||
		    !put_string(obj, "node", n->node) || !put_string(obj, "ip", n->ip) ||
		    !put_string(obj, "phase", n->phase) || json_array_append_new(array, obj)) {
			json_decref(obj);
			json_decref(array);
			return NULL;
		}
	}
	return array;
}

static json_t *failure_to_json(const struct tj_failure *f)
{
	json_t *obj = json_object();

	if (!obj || !put_int(obj, "rank", f->rank) || !put_string(obj, "pod", f->pod) ||
	    !put_string(obj, "node", f->node) || !put_int(obj, "exitCode", f->exit_code) ||
	    !put_string(obj, "reason", f->reason) || !put_string(obj, "message", f->message) ||
	    !put_time(obj, "time", f->time)) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

/* status.preemption and status.preempting, when there are. false when out of memory. */
static bool put_preemption(json_t *obj, const struct tj_status *st)
{
	const struct tj_preemption *p = &st->preemption;
	json_t *pre, *list;

	if (st->has_preemption) {
		pre = json_object();
		if (!pre || json_object_set_new(obj, "preemption", pre) ||
		    !put_string(pre, "preemptor", p->preemptor) ||
		    !put_int(pre, "attempt", p->attempt) || !put_time(pre, "time", p->time) ||
		    !put_int(pre, "graceSeconds", p->grace_s) || !put_string(pre, "mode", p->mode) ||
		    !put_int(pre, "tier", p->tier))
			return false;
	}
	if (!st->n_preempting)
		return true;
	list = json_array();
	if (!list || json_object_set_new(obj, "preempting", list))
		return false;
	for (size_t i = 0; i < st->n_preempting; i++) {
		json_t *v = json_object();

		if (!v || json_array_append_new(list, v) ||
		    !put_string(v, "job", st->preempting[i].job) ||
		    !put_int(v, "attempt", st->preempting[i].attempt))
			return false;
	}
	return true;
}

static json_t *excluded_to_json(const struct tj_status *st)
{
	json_t *array = json_array();

	for (size_t i = 0; array && i < st->n_excluded_nodes; i++) {
		const struct tj_excluded_node *x = &st->excluded_nodes[i];
		json_t *obj = json_object();

		if (!obj || !put_string(obj, "node", x->node) ||
		    !put_string(obj, "reason", x->reason) || !put_time(obj, "time", x->time) ||
		    json_array_append_new(array, obj)) {
			json_decref(obj);
			json_decref(array);
			return NULL;
		}
	}
	return array;
}

static json_t *failures_to_json(const struct tj_status *st)
{
	json_t *array = json_array();

	for (size_t i = 0; array && i < st->n_failures; i++) {
		const struct tj_failure_record *f = &st->failures[i];
		json_t *obj = json_object();

		if (!obj || !put_int(obj, "attempt", f->attempt) ||
		    !put_string(obj, "reason", f->reason) ||
		    json_object_set_new(obj, "infrastructure", json_boolean(f->infrastructure)) ||
		    (f->rank >= 0 && !put_int(obj, "rank", f->rank)) ||
		    !put_string(obj, "node", f->node) || !put_int(obj, "exitCode", f->exit_code) ||
		    !put_time(obj, "time", f->time) || json_array_append_new(array, obj)) {
			json_decref(obj);
			json_decref(array);
			return NULL;
		}
	}
	return array;
}

static json_t *array_to_json(const struct tj_status *st)
{
	json_t *obj = json_object();

	if (!obj || !put_string(obj, "started", st->array_started) ||
	    !put_string(obj, "succeeded", st->array_succeeded) ||
	    !put_string(obj, "failed", st->array_failed) ||
	    !put_string(obj, "cancelled", st->array_cancelled)) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

static json_t *topology_to_json(const struct tj_topology_status *t)
{
	json_t *obj = json_object(), *domains = json_array();

	for (size_t i = 0; domains && i < t->n_domains; i++)
		if (json_array_append_new(domains, json_string(t->domains[i]))) {
			json_decref(domains);
			domains = NULL;
		}
	if (!obj || !domains || !put_string(obj, "level", t->level)) {
		json_decref(domains);
		json_decref(obj);
		return NULL;
	}
	if (json_object_set_new(obj, "domains", domains)) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

/* list as a new JSON array under key of obj, when it holds any. 0 or CADRE_ENOMEM. */
static int put_string_list(json_t *obj, const char *key, char *const *list, size_t n)
{
	json_t *arr;

	if (!n)
		return 0;
	if (!(arr = json_array()))
		return CADRE_ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(arr, json_string(list[i]))) {
			json_decref(arr);
			return CADRE_ENOMEM;
		}
	return json_object_set_new(obj, key, arr) ? CADRE_ENOMEM : 0;
}

static json_t *dependency_to_json(const struct tj_status *st)
{
	json_t *obj = json_object();

	if (!obj || json_object_set_new(obj, "met", json_boolean(st->dependency_met)) ||
	    put_string_list(obj, "satisfied", st->dependency_satisfied,
			    st->n_dependency_satisfied) ||
	    put_string_list(obj, "seen", st->dependency_seen, st->n_dependency_seen)) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

json_t *tj_status_to_json(const struct tj_status *st)
{
	json_t *obj = json_object();
	bool ok = obj != NULL;

	if (ok && st->phase != TJ_PHASE_UNSET)
		ok = put_string(obj, "phase", tj_phase_name(st->phase));
	ok = ok && !json_object_set_new(obj, "conditions",
					condition_list_to_json(&st->conditions));
	ok = ok && put_int(obj, "observedGeneration", st->observed_generation);
	ok = ok && put_string(obj, "jobId", st->job_id);
	ok = ok && put_string(obj, "taskId", st->task_id);
	ok = ok && put_int(obj, "readyNodes", st->ready_nodes);
	ok = ok && put_int(obj, "restarts", st->restarts);
	ok = ok && put_int(obj, "infraRestarts", st->infra_restarts);
	ok = ok && put_int(obj, "requeues", st->requeues);
	if (ok && st->preemptions)
		ok = put_int(obj, "preemptions", st->preemptions);
	ok = ok && put_time(obj, "admittedTime", st->admitted_time);
	ok = ok && put_time(obj, "startTime", st->start_time);
	ok = ok && put_time(obj, "completionTime", st->completion_time);
	ok = ok && !json_object_set_new(obj, "nodes", nodes_to_json(st));
	if (ok && st->has_last_failure)
		ok = !json_object_set_new(obj, "lastFailure", failure_to_json(&st->last_failure));
	if (ok && st->n_excluded_nodes)
		ok = !json_object_set_new(obj, "excludedNodes", excluded_to_json(st));
	if (ok && st->n_failures)
		ok = !json_object_set_new(obj, "failures", failures_to_json(st));
	if (ok && st->topology.level)
		ok = !json_object_set_new(obj, "topology", topology_to_json(&st->topology));
	ok = ok && put_string(obj, "message", st->message);
	ok = ok && put_string(obj, "partition", st->partition);
	if (ok && st->partition_spec) {
		char *text = json_dumps(st->partition_spec, JSON_COMPACT | JSON_SORT_KEYS);

		ok = text && !json_object_set_new(obj, "partitionSpec", json_string(text));
		free(text);
	}
	if (ok && st->has_array)
		ok = !json_object_set_new(obj, "array", array_to_json(st));
	if (ok && (st->dependency_met || st->n_dependency_satisfied || st->n_dependency_seen))
		ok = !json_object_set_new(obj, "dependency", dependency_to_json(st));
	ok = ok && put_string(obj, "requeued", st->requeued);
	ok = ok && put_preemption(obj, st);
	if (ok && st->has_in_place) {
		json_t *ip = json_object();

		ok = ip && !json_object_set_new(obj, "inPlaceRestart", ip) &&
		     put_int(ip, "attempt", st->in_place.attempt) &&
		     put_time(ip, "time", st->in_place.time);
	}
	if (!ok) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

int tj_status_copy(struct tj_status *dst, const struct tj_status *src)
{
	struct field_errors errs;
	json_t *obj;
	int err;

	tj_status_init(dst);
	obj = tj_status_to_json(src);
	if (!obj)
		return CADRE_EINVAL;
	field_errors_init(&errs);
	err = tj_status_parse(obj, dst, &errs);
	field_errors_release(&errs);
	json_decref(obj);
	return err;
}
