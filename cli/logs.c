/*
 * logs.c - `cadre logs JOB [-f] [--rank N] [--attempt N]`: every rank's
 * container log through pods/log, each line prefixed "N: " (srun --label).
 *
 * Without -f the logs are read with timestamps and merged in time order
 * (a rank's own lines keep their order), then printed without them. With
 * -f one thread follows each rank's log; every second the job and its pods
 * are read again: the pods of a restart are followed as they start (and the
 * old attempt's streams stopped), a stream that ended while its container
 * still runs is opened again from its last line (cli_log_resume), and once
 * the job has ended the streams get a second to drain and are stopped. The
 * job's end, not the streams', ends the command: a kubelet ends a stream
 * when its container exits, a simulated one may not.
 */
#include "cli/logs.h"

#include "base/err.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOGS "cadre logs"
#define LOG_CONTAINER "main"
#define FOLLOW_POLL_MS 1000
#define FOLLOW_DRAIN_MS 1000
#define LOG_MAX_BODY ((size_t)64 << 20)

/* ---- the pure merge ---- */

/* Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static bool digits(const char *s, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + (s[i] - '0');
	}
	return true;
}

int cli_log_time(const char *line, size_t len, int64_t *ns, size_t *text_at)
{
	int y, mo, d, h, mi, s, frac = 0, places = 0;
	size_t i = 19;

	if (len < 20 || !digits(line, 4, &y) || line[4] != '-' || !digits(line + 5, 2, &mo) ||
	    line[7] != '-' || !digits(line + 8, 2, &d) || line[10] != 'T' ||
	    !digits(line + 11, 2, &h) || line[13] != ':' || !digits(line + 14, 2, &mi) ||
	    line[16] != ':' || !digits(line + 17, 2, &s) || mo < 1 || mo > 12 || d < 1 || d > 31)
		return CADRE_EPARSE;
	if (line[i] == '.') {
		for (i++; i < len && line[i] >= '0' && line[i] <= '9'; i++) {
			if (places < 9) {
				frac = frac * 10 + (line[i] - '0');
				places++;
			}
		}
	}
	while (places < 9) {
		frac *= 10;
		places++;
	}
	if (i >= len || line[i] != 'Z')
		return CADRE_EPARSE;
	i++;
	*ns = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * 1000000000LL) + frac;
	*text_at = i < len && line[i] == ' ' ? i + 1 : i;
	return 0;
}

/* The next line of src as [*line, *line + *len) without its newline; false at the end. */
static bool next_line(struct cli_log_source *src, const char **line, size_t *len)
{
	const char *p = src->text + src->at, *nl;
	size_t rest = src->len - src->at;

	if (!rest)
		return false;
	nl = memchr(p, '\n', rest);
	*line = p;
	*len = nl ? (size_t)(nl - p) : rest;
	return true;
}

int cli_logs_merge(struct cli_log_source *srcs, size_t n, FILE *out)
{
	for (;;) {
		size_t best = n, best_len = 0, best_text = 0;
		int64_t best_ns = 0;
		const char *best_line = NULL;

		for (size_t i = 0; i < n; i++) {
			const char *line;
			size_t len, text_at;
			int64_t t;

			if (!next_line(&srcs[i], &line, &len))
				continue;
			/* a line without a time goes with the one before it */
			if (cli_log_time(line, len, &t, &text_at)) {
				t = srcs[i].last_ns;
				text_at = 0;
			}
			if (best == n || t < best_ns) {
				best = i;
				best_ns = t;
				best_line = line;
				best_len = len;
				best_text = text_at;
			}
		}
		if (best == n)
			return fflush(out) ? CADRE_EIO : 0;
		srcs[best].last_ns = best_ns;
		srcs[best].at += best_len + (srcs[best].at + best_len < srcs[best].len);
		if (fprintf(out, "%d: %.*s\n", srcs[best].rank, (int)(best_len - best_text),
			    best_line + best_text) < 0)
			return CADRE_EIO;
	}
}

/* ---- resuming a followed log ---- */

void cli_log_resume_init(struct cli_log_resume *r)
{
	memset(r, 0, sizeof(*r));
}

/* Whether a line of time ns was printed already (a reopened stream sends it again). */
static bool printed_before(struct cli_log_resume *r, int64_t ns)
{
	if (!r->resuming)
		return false;
	if (ns < r->last_ns)
		return true;
	if (ns == r->last_ns && r->again < r->at_last) {
		r->again++;
		return true;
	}
	r->resuming = false;  /* past where the last stream stopped */
	return false;
}

/* The head read: drop the line, or send its text on (a line without a time as it is). */
static int decide(struct cli_log_resume *r, struct cli_prefixer *pre)
{
	size_t text = 0;

	/* text stays 0 for a line without a time: it goes on as it is */
	r->timed = !cli_log_time(r->head, r->head_len, &r->line_ns, &text);
	r->state = r->timed && printed_before(r, r->line_ns) ? LOG_DROPPING : LOG_PASSING;
	r->head_len -= text;
	memmove(r->head, r->head + text, r->head_len);
	if (r->state == LOG_DROPPING || !r->head_len)
		return 0;
	return cli_prefixer_write(pre, r->head, r->head_len);
}

/* A line printed to its newline counts as printed. */
static void line_ended(struct cli_log_resume *r)
{
	if (r->state == LOG_PASSING && r->timed) {
		if (r->at_last && r->line_ns == r->last_ns) {
			r->at_last++;
		} else {
			r->last_ns = r->line_ns;
			r->at_last = 1;
		}
	}
	r->state = LOG_AT_HEAD;
	r->head_len = 0;
}

int cli_log_resume_feed(struct cli_log_resume *r, struct cli_prefixer *pre,
			const char *data, size_t len)
{
	int e = 0;

	while (len && !e) {
		const char *nl;
		size_t n = 0;

		if (r->state == LOG_AT_HEAD) {
			/* the time ends at the first space; a line without one is not timed */
			while (n < len && data[n] != '\n' && r->head_len < sizeof(r->head))
				if ((r->head[r->head_len++] = data[n++]) == ' ')
					break;
			if ((r->head_len && r->head[r->head_len - 1] == ' ') ||
			    r->head_len == sizeof(r->head) || (n < len && data[n] == '\n'))
				e = decide(r, pre);
		} else {
			nl = memchr(data, '\n', len);
			n = nl ? (size_t)(nl - data) + 1 : len;
			if (r->state == LOG_PASSING)
				e = cli_prefixer_write(pre, data, n);
			if (nl)
				line_ended(r);
		}
		data += n;
		len -= n;
	}
	return e;
}

bool cli_log_resume_reopen(struct cli_log_resume *r, struct cli_prefixer *pre, char *since,
			   size_t size)
{
	time_t sec = (time_t)(r->last_ns / 1000000000LL);
	struct tm tm;

	cli_prefixer_drop(pre);
	r->state = LOG_AT_HEAD;
	r->head_len = 0;
	r->again = 0;
	r->resuming = r->at_last > 0;
	if (r->resuming && gmtime_r(&sec, &tm) &&
	    strftime(since, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return true;
	r->resuming = false;
	return false;
}

int cli_log_resume_finish(struct cli_log_resume *r, struct cli_prefixer *pre)
{
	int e = 0;

	if (r->state == LOG_AT_HEAD && r->head_len)
		e = decide(r, pre);
	if (r->state == LOG_DROPPING)
		cli_prefixer_drop(pre);
	r->state = LOG_AT_HEAD;
	r->head_len = 0;
	return e ? e : cli_prefixer_flush(pre);
}

/* ---- reading ---- */

/* A follow stream's path (since: NULL, or its sinceTime), or a whole log's (follow false). */
static int log_path(struct buf *path, const char *ns, const char *pod, bool follow,
		    const char *since)
{
	struct buf q;
	int e;

	buf_init(&q, 256);
	e = kube_path_query_add(&q, "container", LOG_CONTAINER);
	if (!e && follow)
		e = kube_path_query_add(&q, "follow", "true");
	if (!e)
		e = kube_path_query_add(&q, "timestamps", "true");
	if (!e && since)
		e = kube_path_query_add(&q, "sinceTime", since);
	buf_reset(path);
	if (!e)
		e = kube_path(path, &kube_resource_pods, ns, pod, "log", buf_str(&q));
	buf_release(&q);
	return e;
}

/* The pods of attempt (or the latest) and rank (or all) into v; how many. */
static size_t chosen(const struct cli_rank_pods *pods, const struct cli_logs_opts *o,
		     const struct cli_rank_pod **v)
{
	int attempt = o->attempt >= 0 ? o->attempt : cli_rank_pods_latest(pods);
	size_t n = 0;

	for (size_t i = 0; i < pods->len; i++)
		if (pods->items[i].attempt == attempt &&
		    (o->rank < 0 || pods->items[i].rank == o->rank))
			v[n++] = &pods->items[i];
	return n;
}

static int read_one(struct cli_kube *k, const char *ns, const struct cli_rank_pod *p,
		    struct cli_log_source *src, FILE *err)
{
	struct kube_response resp;
	struct buf path;
	char what[320];
	int e, code = 0;

	kube_response_init(&resp);
	buf_init(&path, 4096);
	e = log_path(&path, ns, p->name, false, NULL);
	if (!e)
		e = kube_http_request(k->http, "GET", buf_str(&path), NULL, NULL, 0, &resp);
	if (e) {
		snprintf(what, sizeof(what), "the log of rank %d (pod %s)", p->rank, p->name);
		if (!resp.error.code)
			resp.error.code = e;
		code = cli_kube_error(k, what, &resp.error, err);
	} else {
		src->rank = p->rank;
		src->len = resp.body.len;
		src->text = resp.body.data;
		resp.body.data = NULL;  /* src owns the bytes now */
		resp.body.len = resp.body.cap = 0;
	}
	buf_release(&path);
	kube_response_release(&resp);
	return code;
}

static int print_logs(struct cli_kube *k, const struct trainingjob *tj,
		      const struct cli_logs_opts *o, FILE *out, FILE *err)
{
	struct cli_rank_pods pods;
	struct kube_status st;
	const struct cli_rank_pod **v = NULL;
	struct cli_log_source *srcs = NULL;
	size_t n = 0;
	int code = 0, worst = 0;

	kube_status_clear(&st);
	if (cli_rank_pods_list(k, tj->meta.namespace, tj->meta.name, &pods, &st))
		return cli_kube_error(k, "list the job's pods", &st, err);
	v = calloc(pods.len + 1, sizeof(*v));
	srcs = calloc(pods.len + 1, sizeof(*srcs));
	if (!v || !srcs) {
		worst = CLI_EXIT_FAILED;
		goto out;
	}
	if (!(n = chosen(&pods, o, v))) {
		fprintf(err, "%s: job \"%s\" has no pods%s (state %s)\n", LOGS, tj->meta.name,
			o->rank >= 0 || o->attempt >= 0 ? " of that rank and attempt" : "",
			tj_phase_name(tj->status.phase));
		worst = CLI_EXIT_FAILED;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if ((code = read_one(k, tj->meta.namespace, v[i], &srcs[i], err)))
			worst = code;
	if (cli_logs_merge(srcs, n, out))
		worst = CLI_EXIT_FAILED;
out:
	for (size_t i = 0; srcs && i < n; i++)
		free((char *)srcs[i].text);
	free(srcs);
	free(v);
	cli_rank_pods_release(&pods);
	return worst;
}

/* ---- following ---- */

static atomic_bool logs_stop;

static void on_stop(int sig)
{
	(void)sig;
	atomic_store(&logs_stop, true);
}

struct follower {
	struct cli_kube *k;
	pthread_mutex_t *lock;
	struct cli_prefixer pre;
	struct cli_log_resume resume;
	char since[32];      /* the sinceTime of the next stream; "" for the whole log */
	char *pod;
	char *ns;
	int attempt;
	atomic_bool stop;
	atomic_bool ended;   /* the thread is done */
	int result;          /* kube_http_stream's */
	pthread_t thread;
	bool started;
};

static int follow_data(void *ctx, const char *data, size_t len)
{
	struct follower *f = ctx;
	int e;

	pthread_mutex_lock(f->lock);
	e = cli_log_resume_feed(&f->resume, &f->pre, data, len);
	pthread_mutex_unlock(f->lock);
	return e;
}

static void *follow_thread(void *arg)
{
	struct follower *f = arg;
	struct kube_stream_opts so = { .on_data = follow_data, .ctx = f, .stop = &f->stop };
	struct buf path;

	buf_init(&path, 4096);
	f->result = log_path(&path, f->ns, f->pod, true, *f->since ? f->since : NULL);
	if (!f->result)
		f->result = kube_http_stream(f->k->http, buf_str(&path), &so);
	buf_release(&path);
	/* a line left unfinished waits for the next stream, or the end (cli_log_resume) */
	atomic_store(&f->ended, true);
	return NULL;
}

struct follow {
	struct cli_kube *k;
	const struct cli_logs_opts *o;
	pthread_mutex_t lock;
	struct follower **v;
	size_t len, cap;
	FILE *out;
	FILE *err;
};

/* A restarted gang's pods keep their names (<job>-<rank>): a pod is its name and attempt. */
static struct follower *find_follower(struct follow *fw, const struct cli_rank_pod *p)
{
	for (size_t i = 0; i < fw->len; i++)
		if (fw->v[i]->attempt == p->attempt && !strcmp(fw->v[i]->pod, p->name))
			return fw->v[i];
	return NULL;
}

/* Read f's stream in a thread of its own. */
static int run_follower(struct follower *f)
{
	if (pthread_create(&f->thread, NULL, follow_thread, f))
		return CADRE_ENOMEM;
	f->started = true;
	return 0;
}

/* Follow p's log from now on: its container has started (it has a phase past Pending). */
static int start_follower(struct follow *fw, const char *ns, const struct cli_rank_pod *p)
{
	struct follower *f;

	if (fw->len == fw->cap) {
		size_t cap = fw->cap ? fw->cap * 2 : 8;
		struct follower **v = realloc(fw->v, cap * sizeof(*v));

		if (!v)
			return CADRE_ENOMEM;
		fw->v = v;
		fw->cap = cap;
	}
	if (!(f = calloc(1, sizeof(*f))))
		return CADRE_ENOMEM;
	f->k = fw->k;
	f->lock = &fw->lock;
	f->attempt = p->attempt;
	cli_prefixer_init(&f->pre, p->rank, fw->out);
	cli_log_resume_init(&f->resume);
	f->pod = strdup(p->name);
	f->ns = strdup(ns);
	fw->v[fw->len++] = f;
	if (!f->pod || !f->ns)
		return CADRE_ENOMEM;
	return run_follower(f);
}

/*
 * Open f's ended stream again where it stopped (cli_log_resume), and say so
 * on stderr, as tail -F says a file was replaced.
 */
static int reopen_follower(struct follow *fw, struct follower *f, int rank)
{
	char why[160];

	pthread_join(f->thread, NULL);
	f->started = false;
	atomic_store(&f->ended, false);
	if (!cli_log_resume_reopen(&f->resume, &f->pre, f->since, sizeof(f->since)))
		*f->since = '\0';
	if (f->result)
		snprintf(why, sizeof(why), "its log stream failed (%s)", cadre_strerror(f->result));
	else
		snprintf(why, sizeof(why), "the server ended its log stream");
	pthread_mutex_lock(&fw->lock);
	fprintf(fw->err, "%s: rank %d (pod %s): %s while the pod runs; reading on from %s\n",
		LOGS, rank, f->pod, why, *f->since ? f->since : "the start");
	pthread_mutex_unlock(&fw->lock);
	return run_follower(f);
}

/* Start following the chosen pods that run or ran; stop those of older attempts. */
static int follow_pods(struct follow *fw, const char *ns, const struct cli_rank_pods *pods)
{
	const struct cli_rank_pod **v = calloc(pods->len + 1, sizeof(*v));
	size_t n;
	int latest, e = 0;

	if (!v)
		return CADRE_ENOMEM;
	n = chosen(pods, fw->o, v);
	latest = n ? v[0]->attempt : -1;
	for (size_t i = 0; i < fw->len; i++)
		if (fw->v[i]->attempt < latest)
			atomic_store(&fw->v[i]->stop, true);
	for (size_t i = 0; i < n && !e; i++) {
		struct follower *f = find_follower(fw, v[i]);

		if (!strcmp(v[i]->phase, "Pending") || !*v[i]->phase)
			continue;
		/*
		 * A stream that ended while its container runs is opened again where it
		 * stopped: one the server refused while the container started, and one
		 * it ended (a kubelet or API server restarted, a connection cut).
		 */
		if (f && atomic_load(&f->ended) && f->result != CADRE_ECANCELED &&
		    !strcmp(v[i]->phase, "Running"))
			e = reopen_follower(fw, f, v[i]->rank);
		else if (!f)
			e = start_follower(fw, ns, v[i]);
	}
	free(v);
	return e;
}

static void sleep_ms(long ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

/* The job's phase now; CADRE_ENOTFOUND once it is gone. */
static int job_phase(struct cli_kube *k, const struct trainingjob *tj, enum tj_phase *phase,
		     struct kube_status *st)
{
	const char *name;
	json_t *obj = NULL;
	int e;

	if ((e = kube_client_get(k->http, &kube_resource_trainingjobs, tj->meta.namespace,
				 tj->meta.name, &obj, st)))
		return e;
	name = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
	if (!name || tj_phase_parse(name, phase))
		*phase = TJ_PHASE_UNSET;
	json_decref(obj);
	return 0;
}

static int follow_loop(struct follow *fw, const struct trainingjob *tj, FILE *err)
{
	struct kube_status st;
	enum tj_phase phase = tj->status.phase;
	int e;

	for (;;) {
		struct cli_rank_pods pods;

		kube_status_clear(&st);
		if ((e = cli_rank_pods_list(fw->k, tj->meta.namespace, tj->meta.name, &pods, &st)))
			return cli_kube_error(fw->k, "list the job's pods", &st, err);
		e = follow_pods(fw, tj->meta.namespace, &pods);
		cli_rank_pods_release(&pods);
		if (e)
			return CLI_EXIT_FAILED;
		if (tj_phase_terminal(phase))
			return 0;
		for (int i = 0; i < FOLLOW_POLL_MS / 100 && !atomic_load(&logs_stop); i++)
			sleep_ms(100);
		if (atomic_load(&logs_stop))
			return 130;
		kube_status_clear(&st);
		if ((e = job_phase(fw->k, tj, &phase, &st)) == CADRE_ENOTFOUND)
			return 0;
		if (e)
			return cli_kube_error(fw->k, "read the job", &st, err);
	}
}

static int follow_logs(struct cli_kube *k, const struct trainingjob *tj,
		       const struct cli_logs_opts *o, FILE *out, FILE *err)
{
	struct follow fw = { .k = k, .o = o, .out = out, .err = err };
	struct sigaction sa, old_int, old_term;
	int code;

	pthread_mutex_init(&fw.lock, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	atomic_store(&logs_stop, false);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	code = follow_loop(&fw, tj, err);
	if (code != 130)
		sleep_ms(FOLLOW_DRAIN_MS);
	for (size_t i = 0; i < fw.len; i++)
		atomic_store(&fw.v[i]->stop, true);
	for (size_t i = 0; i < fw.len; i++) {
		if (fw.v[i]->started)
			pthread_join(fw.v[i]->thread, NULL);
		/* a line the last stream left unfinished is printed as it is */
		cli_log_resume_finish(&fw.v[i]->resume, &fw.v[i]->pre);
		cli_prefixer_release(&fw.v[i]->pre);
		free(fw.v[i]->pod);
		free(fw.v[i]->ns);
		free(fw.v[i]);
	}
	free(fw.v);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	pthread_mutex_destroy(&fw.lock);
	return code;
}

int cli_logs(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	struct cli_logs_opts o = { .g = *g };
	struct cli_kube k = { 0 };
	struct cli_jobs jobs = { 0 };
	const struct trainingjob *tj;
	int code;

	if ((code = cli_logs_parse(args, n, &o, err)))
		return code;
	if (o.help) {
		cli_print_help(out, "logs");
		return 0;
	}
	if ((code = cli_kube_open(&o.g, LOGS, &k, err)))
		return code;
	if ((code = cli_jobs_list(&k, o.all, &jobs, err)))
		goto out;
	if (!(tj = cli_jobs_find(&jobs, o.job))) {
		fprintf(err, "%s: no job \"%s\" in namespace \"%s\"\n", LOGS, o.job, k.ns);
		code = CLI_EXIT_FAILED;
		goto out;
	}
	code = o.follow ? follow_logs(&k, tj, &o, out, err) : print_logs(&k, tj, &o, out, err);
out:
	cli_jobs_release(&jobs);
	cli_kube_close(&k);
	return code;
}
