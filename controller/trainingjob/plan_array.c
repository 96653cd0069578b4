/* plan_array.c - array jobs (docs/design.md 12): elements made under the throttle. */
#include "controller/trainingjob/plan_internal.h"
#include "base/buf.h"
#include "base/err.h"
#include "controller/admission/candidate.h"
#include "controller/build/build.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- array jobs (docs/design.md 12) --- */

/* The index sets of an array job, one byte per index up to its largest. */
struct index_sets {
	size_t size;
	unsigned char *member, *started, *succeeded, *failed, *cancelled, *cancel_asked, *present;
	const struct tj_element **element;  /* per index: the element in the cache, or NULL */
};

static void sets_release(struct index_sets *x)
{
	free(x->member);
	free(x->started);
	free(x->succeeded);
	free(x->failed);
	free(x->cancelled);
	free(x->cancel_asked);
	free(x->present);
	free(x->element);
}

/* A ranged set ("0-3,5") into set; indices past size are not the array's and are left out. */
static void set_load(unsigned char *set, size_t size, const char *text)
{
	(void)slurm_indices_mark(text, set, size);
}

/* set as a ranged string into *field (NULL when empty). */
static void set_store(struct planner *p, char **field, const unsigned char *set, size_t size)
{
	struct buf b;
	int32_t *v = calloc(size + 1, sizeof(*v));
	size_t n = 0;

	if (!v) {
		p->err = CADRE_ENOMEM;
		return;
	}
	for (size_t i = 0; i < size; i++)
		if (set[i])
			v[n++] = (int32_t)i;
	buf_init(&b, (size_t)16 << 20);
	if (slurm_indices_format(v, n, &b))
		p->err = CADRE_ENOMEM;
	plan_set_string(p, field, n ? buf_str(&b) : NULL);
	buf_release(&b);
	free(v);
}

static int sets_init(struct index_sets *x, const struct slurm_array *a)
{
	memset(x, 0, sizeof(*x));
	x->size = a->n ? (size_t)a->index[a->n - 1] + 1 : 1;
	x->member = calloc(x->size, 1);
	x->started = calloc(x->size, 1);
	x->succeeded = calloc(x->size, 1);
	x->failed = calloc(x->size, 1);
	x->cancelled = calloc(x->size, 1);
	x->cancel_asked = calloc(x->size, 1);
	x->present = calloc(x->size, 1);
	x->element = calloc(x->size, sizeof(*x->element));
	if (!x->member || !x->started || !x->succeeded || !x->failed || !x->cancelled ||
	    !x->cancel_asked || !x->present || !x->element)
		return CADRE_ENOMEM;
	for (size_t i = 0; i < a->n; i++)
		x->member[a->index[i]] = 1;
	return 0;
}

static bool ended(const struct index_sets *x, size_t i)
{
	return x->succeeded[i] || x->failed[i] || x->cancelled[i];
}

/*
 * An element whose name another object holds (a TrainingJob <job>-<index>
 * this array does not own) can never be made: it fails, once, with a
 * warning that names the object, and the array ends when the rest do.
 */
static bool element_taken(struct planner *p, struct index_sets *x, size_t i)
{
	const struct tj_input *in = p->in;

	if (!in->element_taken || !in->element_taken(in->element_ctx, (int)i))
		return false;
	x->failed[i] = 1;
	plan_event(p, true, "ElementNameTaken", "element %zu not created: trainingjob %s-%zu exists "
	      "and is not this array's", i, p->job->meta.name, i);
	return true;
}

/* What the array's elements are doing, for status.message. */
static void array_message(struct planner *p, const struct slurm_array *a, size_t running,
			  size_t waiting, size_t ok, size_t failed, size_t cancelled)
{
	char cap[48] = "";

	if (a->max_running > 0)
		snprintf(cap, sizeof(cap), " (at most %d at once)", a->max_running);
	plan_set_message(p, "%zu elements: %zu running, %zu waiting%s, %zu succeeded, %zu failed, "
		    "%zu cancelled", a->n, running, waiting, cap, ok, failed, cancelled);
}

/* Every element ended: the array is done, as its elements did. */
static void array_finish(struct planner *p, const struct index_sets *x, const struct slurm_array *a,
			 size_t failed, size_t cancelled)
{
	struct buf list;
	int32_t *v;
	size_t n = 0;

	if (!failed && !cancelled) {
		char msg[128];

		snprintf(msg, sizeof(msg), "all %zu elements succeeded", a->n);
		plan_finish(p, true, "AllElementsSucceeded", msg);
		return;
	}
	if (!(v = calloc(x->size + 1, sizeof(*v)))) {
		p->err = CADRE_ENOMEM;
		return;
	}
	for (size_t i = 0; i < x->size; i++)
		if (x->member[i] && (failed ? x->failed[i] : x->cancelled[i]))
			v[n++] = (int32_t)i;
	buf_init(&list, 4096);
	slurm_indices_format(v, n, &list);
	if (failed) {
		char msg[4200];

		snprintf(msg, sizeof(msg), "%zu of %zu elements failed: %s", failed, a->n,
			 buf_str(&list));
		plan_finish(p, false, "ElementsFailed", msg);
	} else {
		char msg[4200];

		snprintf(msg, sizeof(msg), "%zu of %zu elements were cancelled: %s", cancelled,
			 a->n, buf_str(&list));
		plan_finish(p, false, "ElementsCancelled", msg);
	}
	buf_release(&list);
	free(v);
}

/*
 * An array job runs no pods: its elements are TrainingJobs <job>-<index> it
 * owns. The decision to start one (its index in status.array.started) is
 * stored before the element is created, and the throttle counts what is
 * stored, so "at most N at once" holds whatever process creates them and
 * whenever one stops: a process that starts creates every started element
 * that is missing, and starts no more than the throttle leaves room for.
 * Cancelled elements (the annotation cadre.dev/cancel-tasks) are recorded
 * and deleted; one that ended first keeps its end.
 */
/*
 * What the array's status and the cache say of each element, into x: the
 * stored sets, the elements there (each there was started; one that ended
 * is counted so), and the cancellations asked, with a delete of each one
 * still there.
 */
static void array_observe(struct planner *p, struct index_sets *x)
{
	const struct tj_input *in = p->in;
	const struct tj_status *st = &p->out->status;

	set_load(x->started, x->size, st->array_started);
	set_load(x->succeeded, x->size, st->array_succeeded);
	set_load(x->failed, x->size, st->array_failed);
	set_load(x->cancelled, x->size, st->array_cancelled);
	set_load(x->cancel_asked, x->size, in->cancel_tasks);
	for (size_t k = 0; k < in->n_elements; k++) {
		const struct tj_element *e = &in->elements[k];
		size_t i = (size_t)e->index;

		if (e->index < 0 || i >= x->size || !x->member[i])
			continue;
		x->present[i] = 1;
		x->element[i] = e;
		x->started[i] = 1;  /* it exists: it was started (by this process or another) */
		if (!ended(x, i) && e->phase == TJ_PHASE_SUCCEEDED)
			x->succeeded[i] = 1;
		else if (!ended(x, i) && e->phase == TJ_PHASE_FAILED)
			x->failed[i] = 1;
	}
	for (size_t i = 0; i < x->size; i++) {
		if (!x->member[i] || !x->cancel_asked[i] || x->succeeded[i] || x->failed[i])
			continue;
		x->cancelled[i] = 1;
		if (x->present[i] && !x->element[i]->deleting) {
			struct tj_action *act = plan_action(p, TJ_DELETE_ELEMENT, (int)i, NULL);

			if (act) {
				act->pod = x->element[i]->name;
				act->uid = x->element[i]->uid;
			}
		}
	}
}

/*
 * The elements that run, the missing ones made again and new ones made,
 * lowest index first, while the throttle leaves room. How many run.
 */
static size_t array_start(struct planner *p, struct index_sets *x, const struct slurm_array *a)
{
	size_t running = 0;

	/* Running: started, not ended, and a cancelled one until it is gone. */
	for (size_t i = 0; i < x->size; i++)
		if (x->member[i] && x->started[i] &&
		    (!ended(x, i) || (x->cancelled[i] && x->present[i] && !x->succeeded[i] &&
				      !x->failed[i])))
			running++;
	/* A started element that is missing is created (again). */
	for (size_t i = 0; i < x->size && p->in->expectations_met; i++)
		if (x->member[i] && x->started[i] && !ended(x, i) && !x->present[i]) {
			if (element_taken(p, x, i))
				running--;
			else
				plan_action(p, TJ_CREATE_ELEMENT, (int)i, NULL);
		}
	for (size_t i = 0; i < x->size && !p->job->spec.suspend; i++) {
		if (!x->member[i] || x->started[i] || x->cancelled[i])
			continue;
		if (a->max_running > 0 && running >= (size_t)a->max_running)
			break;
		x->started[i] = 1;
		if (element_taken(p, x, i))
			continue;
		running++;
		plan_action(p, TJ_CREATE_ELEMENT, (int)i, NULL);
	}
	return running;
}

/* Why elements wait (held, or the throttle), or that every one has started; the phase. */
static void array_wait(struct planner *p, const struct slurm_array *a, size_t running,
		       size_t pending)
{
	if (pending && p->job->spec.suspend) {
		plan_cond(p, "Admitted", false, "JobHeldUser", "spec.suspend is true: no element starts");
		plan_waiting(p, "JobHeldUser");
	} else if (pending) {
		char msg[128];

		snprintf(msg, sizeof(msg), "at most %d elements run at once", a->max_running);
		plan_cond(p, "Admitted", false, "JobArrayTaskLimit", msg);
		plan_waiting(p, "JobArrayTaskLimit");
	} else {
		plan_cond(p, "Admitted", true, "ElementsStarted", "every element has started");
	}
	plan_set_phase(p, running ? TJ_PHASE_RUNNING : p->job->spec.suspend ? TJ_PHASE_SUSPENDED :
		  TJ_PHASE_QUEUED);
}

void plan_array(struct planner *p)
{
	const struct tj_input *in = p->in;
	struct tj_status *st = &p->out->status;
	size_t running, pending = 0, ok = 0, failed = 0, cancelled = 0, done = 0;
	int32_t limit = in->max_array_size > 0 ? in->max_array_size : SLURM_DEFAULT_MAX_ARRAY_SIZE;
	struct index_sets x;
	struct slurm_array a;
	char why[256];
	int err;

	memset(&x, 0, sizeof(x));
	err = slurm_array_parse(p->job->spec.array, limit, &a, why, sizeof(why));
	if (err == CADRE_ENOMEM) {
		p->err = err;
		goto out;
	}
	if (err) {
		char msg[512];

		snprintf(msg, sizeof(msg), "invalid spec: spec.array: %s", why);
		plan_finish(p, false, "InvalidSpec", msg);
		goto out;
	}
	if (plan_dependency_holds(p) || (!st->admitted_time && plan_partition_waits(p)))
		goto out;
	if ((err = sets_init(&x, &a))) {
		p->err = err;
		goto out;
	}
	st->has_array = true;
	array_observe(p, &x);
	running = array_start(p, &x, &a);
	for (size_t i = 0; i < x.size; i++) {
		if (!x.member[i])
			continue;
		pending += !x.started[i] && !x.cancelled[i];
		ok += x.succeeded[i];
		failed += x.failed[i];
		cancelled += x.cancelled[i] && !x.succeeded[i] && !x.failed[i];
		done += ended(&x, i);
	}
	set_store(p, &st->array_started, x.started, x.size);
	set_store(p, &st->array_succeeded, x.succeeded, x.size);
	set_store(p, &st->array_failed, x.failed, x.size);
	set_store(p, &st->array_cancelled, x.cancelled, x.size);
	if (running)
		plan_first_admission(p);
	if (running && !st->start_time)
		st->start_time = p->in->now;
	if (done == a.n) {
		array_finish(p, &x, &a, failed, cancelled);
		goto out;
	}
	array_wait(p, &a, running, pending);
	array_message(p, &a, running, pending, ok, failed, cancelled);
out:
	sets_release(&x);
	slurm_array_release(&a);
}
