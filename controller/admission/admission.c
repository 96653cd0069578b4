/*
 * admission.c - one pass of the admission queue. The walk is linear in the
 * jobs; each job costs one capacity_fit (a scan of the nodes that stops as
 * soon as the gang is placed), two when nodes are held for a starving job.
 */
#include "controller/admission/admission.h"

#include "base/err.h"

/* Most pods one pass may place, all jobs together: far past any real queue. */
#define MAX_PLACEMENTS ((size_t)1 << 26)
/* Nodes named in an admission message before "and N more". */
#define MESSAGE_NODES 4

void admission_init(struct admission *a)
{
	memset(a, 0, sizeof(*a));
	buf_init(&a->text, 4096);
}

void admission_release(struct admission *a)
{
	free(a->order);
	free(a->fence);
	free(a->held_by);
	free(a->candidates);
	free(a->placement);
	buf_release(&a->text);
	memset(a, 0, sizeof(*a));
}

const char *adm_reason_name(enum adm_reason reason)
{
	switch (reason) {
	case ADM_REASON_ADMITTED: return "Admitted";
	case ADM_REASON_INSUFFICIENT_CAPACITY: return "InsufficientCapacity";
	case ADM_REASON_QUEUED_BEHIND: return "QueuedBehind";
	}
	return "";
}

/* Grow *p to hold n items of size bytes; scratch keeps its largest size. */
static int reserve(void **p, size_t *cap, size_t n, size_t size)
{
	void *more;

	if (n <= *cap)
		return 0;
	more = realloc(*p, n * size);
	if (!more)
		return CADRE_ENOMEM;
	*p = more;
	*cap = n;
	return 0;
}

static int compare_strings(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* Tier, then priority (higher first), then age (older first), then namespace and name. */
static int compare_jobs(const void *pa, const void *pb)
{
	const struct adm_job *a = *(const struct adm_job *const *)pa;
	const struct adm_job *b = *(const struct adm_job *const *)pb;
	int cmp;

	if (a->tier != b->tier)
		return a->tier > b->tier ? -1 : 1;
	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->created_s != b->created_s)
		return a->created_s < b->created_s ? -1 : 1;
	cmp = compare_strings(a->namespace, b->namespace);
	if (!cmp)
		cmp = compare_strings(a->name, b->name);
	if (!cmp && a != b)
		cmp = a < b ? -1 : 1;  /* the caller's order, so the sort is stable */
	return cmp;
}

/* Whether candidate a is a better node to hold than b: more free, then bigger, then first. */
static bool better(const struct cap_candidate *a, const struct cap_candidate *b)
{
	if (a->headroom != b->headroom)
		return a->headroom > b->headroom;
	if (a->room_empty != b->room_empty)
		return a->room_empty > b->room_empty;
	return a->node < b->node;
}

/*
 * Hold nodes for a starving job: of the nodes it could run on that nobody
 * holds yet, the ones with the most room now (they drain into a fit
 * soonest), until together they could hold its gang when empty. Nothing
 * behind it is placed on them, so they do drain.
 */
static void hold(struct admission *a, const struct capacity *cap, const struct adm_job *job)
{
	size_t n = capacity_candidates(cap, &job->demand, a->fence, job->num_nodes, a->candidates);
	int total = 0;

	/*
	 * Pick the best remaining candidate until the gang would fit: a few
	 * picks for a real gang, so no sort of every node.
	 */
	while (total < job->num_nodes && n > 0) {
		size_t best = 0;

		for (size_t k = 1; k < n; k++)
			if (better(&a->candidates[k], &a->candidates[best]))
				best = k;
		a->fence[a->candidates[best].node] = 1;
		a->held_by[a->candidates[best].node] = job;
		total += a->candidates[best].room_empty;
		a->candidates[best] = a->candidates[--n];
	}
}

/* "45s", "15m", "2h5m": how long a job has waited, for a person. */
static void add_duration(struct buf *b, int64_t s)
{
	if (s < 120)
		buf_addf(b, "%llds", (long long)s);
	else if (s < 7200)
		buf_addf(b, "%lldm", (long long)(s / 60));
	else
		buf_addf(b, "%lldh%lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
}

/*
 * Copy the scratch text into a decision, cut with "..." when too long or when
 * an append to it failed (the text then stops where it failed: buf.h).
 */
static void set_message(struct adm_decision *d, const struct buf *text)
{
	const char *s = buf_str(text);
	size_t keep = text->len;

	if (!buf_error(text) && keep < sizeof(d->message)) {
		memcpy(d->message, s, keep + 1);
		return;
	}
	if (keep > sizeof(d->message) - 4)
		keep = sizeof(d->message) - 4;
	memcpy(d->message, s, keep);
	memcpy(d->message + keep, "...", 4);
}

static void admitted_message(struct buf *b, const struct capacity *cap, const uint32_t *nodes,
			     int count)
{
	int named = 0, distinct = 0;

	buf_addf(b, "admitted: %d %s on ", count, count == 1 ? "pod" : "pods");
	for (int p = 0; p < count; p++) {
		bool seen = false;

		for (int q = 0; q < p && !seen; q++)
			seen = nodes[q] == nodes[p];
		if (seen)
			continue;
		distinct++;
		if (named < MESSAGE_NODES) {
			buf_addf(b, "%s%s", named ? ", " : "", cap->nodes[nodes[p]].name);
			named++;
		}
	}
	if (distinct > named)
		buf_addf(b, " and %d more %s", distinct - named,
			 distinct - named == 1 ? "node" : "nodes");
}

/*
 * Whether job fits: its topology placement, or the first fit of its pods.
 * fit is filled either way (for a topology job, from a plain fit when its
 * levels do not decide), tfit for a topology job.
 */
static int fits(const struct capacity *cap, const struct adm_job *job, const unsigned char *fence,
		uint32_t *nodes, struct cap_fit *fit, struct topo_fit *tfit)
{
	int ret;

	memset(tfit, 0, sizeof(*tfit));
	tfit->level = -1;
	if (!job->topo)
		return capacity_fit(cap, &job->demand, job->num_nodes, fence, nodes, fit);
	ret = topo_fit(cap, &job->demand, job->num_nodes, job->topo, fence, nodes, tfit);
	if (ret)
		return ret;
	/* The plain fit says which nodes are eligible, fenced or too full. */
	ret = capacity_fit(cap, &job->demand, job->num_nodes, fence, NULL, fit);
	fit->fits = tfit->fits;
	if (tfit->level >= 0)
		fit->ever = tfit->best_ever >= tfit->units ? job->num_nodes : 0;
	return ret;
}

int admission_fits(const struct capacity *cap, const struct adm_job *job, uint32_t *placement,
		   bool *fit_out)
{
	struct cap_fit fit;
	struct topo_fit tfit;
	int ret = fits(cap, job, NULL, placement, &fit, &tfit);

	*fit_out = !ret && fit.fits;
	return ret;
}

bool admission_before(const struct adm_job *a, const struct adm_job *b)
{
	return compare_jobs(&a, &b) < 0;
}

/* The job holding the first held node that job could use; the fence says one exists. */
static const struct adm_job *first_holder(const struct admission *a, const struct capacity *cap,
					  const struct adm_job *job)
{
	for (size_t i = 0; i < cap->n_nodes; i++)
		if (a->fence[i] && capacity_eligible(cap, &job->demand, i))
			return a->held_by[i];
	return NULL;
}

static void job_name(struct buf *b, const struct adm_job *job)
{
	if (job->namespace && *job->namespace)
		buf_addf(b, "%s/", job->namespace);
	buf_adds(b, job->name ? job->name : "");
}

/* Why a job that fits waits: the nodes are held for holder, which goes first. */
static void held_for(struct buf *text, const struct adm_job *holder, int64_t now_s,
		     int64_t starvation_s)
{
	buf_addf(text, "fits, but on nodes held for ");
	job_name(text, holder);
	if (holder->holds) {
		buf_addf(text, ", which %s", holder->holds);
		return;
	}
	buf_adds(text, ", which has waited ");
	add_duration(text, now_s - holder->waiting_since_s);
	buf_adds(text, " (longer than ");
	add_duration(text, starvation_s);
	buf_adds(text, ") and goes first");
}

/* Room in a's scratch for n_jobs jobs, total placements and cap's nodes. 0 or CADRE_ENOMEM. */
static int admission_room(struct admission *a, const struct capacity *cap, size_t n_jobs,
			  size_t total)
{
	int ret;

	if ((ret = reserve((void **)&a->order, &a->order_cap, n_jobs ? n_jobs : 1,
			   sizeof(*a->order))) ||
	    (ret = reserve((void **)&a->placement, &a->placement_cap, total ? total : 1,
			   sizeof(*a->placement))))
		return ret;
	if (cap->n_nodes > a->node_cap) {
		size_t fence_cap = a->node_cap, held_cap = a->node_cap, cand_cap = a->node_cap;

		if ((ret = reserve((void **)&a->fence, &fence_cap, cap->n_nodes, 1)) ||
		    (ret = reserve((void **)&a->held_by, &held_cap, cap->n_nodes,
				   sizeof(*a->held_by))) ||
		    (ret = reserve((void **)&a->candidates, &cand_cap, cap->n_nodes,
				   sizeof(*a->candidates))))
			return ret;
		a->node_cap = cap->n_nodes;
	}
	return 0;
}

/* The nodes (or the domain) job needs are held for it. */
static void hold_for(struct admission *a, struct capacity *cap, const struct adm_job *job)
{
	if (job->topo && topo_hold(cap, &job->demand, job->num_nodes, job->topo, a->fence)) {
		for (size_t i = 0; i < cap->n_nodes; i++)
			if (a->fence[i] == TOPO_NEWLY_HELD) {
				a->fence[i] = 1;
				a->held_by[i] = job;
			}
	} else {
		hold(a, cap, job);
	}
}

/* A starving job holds the nodes (or the domain) it needs, and its message says so. */
static void starve(struct admission *a, struct capacity *cap, const struct adm_job *job,
		   int64_t waited)
{
	hold_for(a, cap, job);
	buf_adds(&a->text, "; waiting ");
	add_duration(&a->text, waited);
	buf_adds(&a->text, ", so no job behind it may use the nodes it needs");
}

int admission_decide(struct admission *a, struct capacity *cap, const struct adm_job *jobs,
		     size_t n_jobs, int64_t now_s, int64_t starvation_s, struct adm_decision *out)
{
	size_t total = 0, used = 0;
	bool any_held = false;
	int ret;

	for (size_t j = 0; j < n_jobs; j++) {
		if (jobs[j].num_nodes < 1 || (size_t)jobs[j].num_nodes > MAX_PLACEMENTS - total)
			return CADRE_EINVAL;
		total += (size_t)jobs[j].num_nodes;
	}
	if ((ret = admission_room(a, cap, n_jobs, total)))
		return ret;
	if (cap->n_nodes)
		memset(a->fence, 0, cap->n_nodes);
	for (size_t j = 0; j < n_jobs; j++)
		a->order[j] = &jobs[j];
	qsort(a->order, n_jobs, sizeof(*a->order), compare_jobs);

	for (size_t pos = 0; pos < n_jobs; pos++) {
		const struct adm_job *job = a->order[pos];
		struct adm_decision *d = &out[job - jobs];
		uint32_t *nodes = a->placement + used;
		int64_t waited = now_s - job->waiting_since_s;
		struct cap_fit fit, open;
		struct topo_fit tfit, topen;

		memset(d, 0, sizeof(*d));
		d->position = pos;
		buf_reset(&a->text);
		if (job->blocked) {
			d->verdict = ADM_WAIT;
			d->reason = ADM_REASON_INSUFFICIENT_CAPACITY;
			buf_adds(&a->text, job->blocked);
			set_message(d, &a->text);
			continue;
		}
		ret = fits(cap, job, any_held ? a->fence : NULL, nodes, &fit, &tfit);
		if (ret)
			return ret;
		if (fit.fits) {
			capacity_take(cap, &job->demand, nodes, job->num_nodes);
			used += (size_t)job->num_nodes;
			d->verdict = ADM_ADMIT;
			d->reason = ADM_REASON_ADMITTED;
			d->nodes = nodes;
			admitted_message(&a->text, cap, nodes, job->num_nodes);
			set_message(d, &a->text);
			continue;
		}

		d->verdict = ADM_WAIT;
		d->reason = ADM_REASON_INSUFFICIENT_CAPACITY;
		if (fit.fenced > 0) {
			/* Would it fit but for the held nodes? Then it waits its turn. */
			ret = fits(cap, job, NULL, NULL, &open, &topen);
			if (ret)
				return ret;
			const struct adm_job *holder = open.fits ? first_holder(a, cap, job) : NULL;

			if (holder) {
				d->reason = ADM_REASON_QUEUED_BEHIND;
				held_for(&a->text, holder, now_s, starvation_s);
			}
		}
		if (d->reason == ADM_REASON_INSUFFICIENT_CAPACITY && tfit.level >= 0 &&
		    fit.eligible > 0)
			topo_describe(job->topo, job->num_nodes, &tfit, &a->text);
		else if (d->reason == ADM_REASON_INSUFFICIENT_CAPACITY)
			capacity_describe(cap, &job->demand, job->num_nodes, &fit, &a->text);

		if (job->holds) {
			/* Its victims are stopping: what they free is its own. */
			d->starving = true;
			hold_for(a, cap, job);
			buf_addf(&a->text, "; it %s, so no job behind it may use the nodes it needs",
				 job->holds);
			any_held = true;
		} else if (starvation_s >= 0 && waited >= starvation_s &&
			   fit.ever >= job->num_nodes) {
			/* A job that could never fit must not hold the cluster hostage. */
			d->starving = true;
			starve(a, cap, job, waited);
			any_held = true;
		}
		set_message(d, &a->text);
	}
	return 0;
}
