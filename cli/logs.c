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
/* Each rank's bytes waiting for the merge: what the memory of a read of any size is. */
#define LOG_QUEUE_BYTES ((size_t)64 << 10)

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

/* ---- the merge, with bounded memory ---- */

/* One rank's bytes not yet printed: a ring of cap bytes. */
struct log_queue {
	char *ring;
	size_t head, len;    /* the first byte, and how many */
	bool ended;
	/* the merge's view of the line at the head */
	bool head_known;     /* its time is read */
	int64_t head_ns;
	size_t text_at;      /* where its text starts (after "TIME ") */
	int64_t last_ns;     /* the time of this rank's last line printed */
	char prefix[24];     /* "3: " */
};

struct cli_log_merge {
	pthread_mutex_t lock;
	pthread_cond_t cond;     /* bytes came, room was made, or a queue ended */
	struct log_queue *q;
	size_t n, cap;
	bool timestamps, stopped;
	FILE *out;
};

struct cli_log_merge *cli_log_merge_new(size_t n, const int *ranks, size_t queue_cap,
					bool timestamps, FILE *out)
{
	struct cli_log_merge *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->q = calloc(n ? n : 1, sizeof(*m->q));
	m->n = n;
	m->cap = queue_cap < CLI_LOG_HEAD_MAX ? CLI_LOG_HEAD_MAX : queue_cap;
	m->timestamps = timestamps;
	m->out = out;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	for (size_t i = 0; m->q && i < n; i++) {
		snprintf(m->q[i].prefix, sizeof(m->q[i].prefix), "%d: ", ranks[i]);
		if (!(m->q[i].ring = malloc(m->cap))) {
			cli_log_merge_free(m);
			return NULL;
		}
	}
	if (!m->q) {
		cli_log_merge_free(m);
		return NULL;
	}
	return m;
}

void cli_log_merge_free(struct cli_log_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; m->q && i < m->n; i++)
		free(m->q[i].ring);
	free(m->q);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

int cli_log_merge_push(struct cli_log_merge *m, size_t i, const char *data, size_t len)
{
	struct log_queue *q = &m->q[i];
	int e = 0;

	pthread_mutex_lock(&m->lock);
	while (len) {
		size_t room = m->cap - q->len, tail = (q->head + q->len) % m->cap, n;

		if (m->stopped) {
			e = CADRE_ECANCELED;
			break;
		}
		if (!room) {
			pthread_cond_wait(&m->cond, &m->lock);
			continue;
		}
		/* up to the ring's end, then from its start */
		n = len < room ? len : room;
		if (n > m->cap - tail)
			n = m->cap - tail;
		memcpy(q->ring + tail, data, n);
		q->len += n;
		data += n;
		len -= n;
		pthread_cond_broadcast(&m->cond);
	}
	pthread_mutex_unlock(&m->lock);
	return e;
}

void cli_log_merge_end(struct cli_log_merge *m, size_t i)
{
	pthread_mutex_lock(&m->lock);
	m->q[i].ended = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

void cli_log_merge_stop(struct cli_log_merge *m)
{
	pthread_mutex_lock(&m->lock);
	m->stopped = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

static char ring_at(const struct cli_log_merge *m, const struct log_queue *q, size_t k)
{
	return q->ring[(q->head + k) % m->cap];
}

static void ring_drop(const struct cli_log_merge *m, struct log_queue *q, size_t n)
{
	q->head = (q->head + n) % m->cap;
	q->len -= n;
}

/*
 * Read the time of the line at q's head, once enough of it is there: its
 * newline, or as much as a time takes, or the end. False while it must wait.
 */
static bool head_ready(struct cli_log_merge *m, struct log_queue *q)
{
	char head[CLI_LOG_HEAD_MAX];
	size_t n = 0;

	if (q->head_known)
		return true;
	while (n < q->len && n < sizeof(head) && (head[n] = ring_at(m, q, n)) != '\n')
		n++;
	if (n == q->len && n < sizeof(head) && !q->ended)
		return false;
	if (cli_log_time(head, n, &q->head_ns, &q->text_at)) {
		q->head_ns = q->last_ns;  /* a line without a time goes with the one before */
		q->text_at = 0;
	}
	q->head_known = true;
	return true;
}

/*
 * Copy q's bytes into out (at most size), through the first newline: how
 * many; *nl says whether the newline was among them. The ring holds them in
 * at most two runs: its end, then its start.
 */
static size_t ring_take_line(const struct cli_log_merge *m, struct log_queue *q, char *out,
			     size_t size, bool *nl)
{
	size_t got = 0;

	*nl = false;
	while (got < size && q->len && !*nl) {
		size_t run = m->cap - q->head, n;
		const char *p = q->ring + q->head, *end;

		if (run > q->len)
			run = q->len;
		if (run > size - got)
			run = size - got;
		end = memchr(p, '\n', run);
		n = end ? (size_t)(end - p) + 1 : run;
		memcpy(out + got, p, n);
		got += n;
		*nl = end != NULL;
		q->head = (q->head + n) % m->cap;
		q->len -= n;
	}
	return got;
}

/*
 * Print the line at q's head from its text (or its time, with
 * --timestamps) to its newline, waiting for the rest as it comes; the lock
 * is held on entry and on return, and let go while writing. A queue that
 * ends inside a line gives it its newline.
 */
static int print_line(struct cli_log_merge *m, struct log_queue *q)
{
	char chunk[16384];
	bool line_done = false;
	int e = 0;

	ring_drop(m, q, m->timestamps ? 0 : q->text_at);
	pthread_mutex_unlock(&m->lock);
	if (fputs(q->prefix, m->out) < 0)
		e = CADRE_EIO;
	pthread_mutex_lock(&m->lock);
	while (!e && !line_done) {
		size_t n;

		while (!q->len && !q->ended)
			pthread_cond_wait(&m->cond, &m->lock);
		n = ring_take_line(m, q, chunk, sizeof(chunk), &line_done);
		if (!n) {
			chunk[n++] = '\n';
			line_done = true;
		}
		pthread_cond_broadcast(&m->cond);
		pthread_mutex_unlock(&m->lock);
		if (fwrite(chunk, 1, n, m->out) != n)
			e = CADRE_EIO;
		pthread_mutex_lock(&m->lock);
	}
	q->last_ns = q->head_ns;
	q->head_known = false;
	return e;
}

int cli_log_merge_run(struct cli_log_merge *m)
{
	int e = 0;

	pthread_mutex_lock(&m->lock);
	while (!e && !m->stopped) {
		struct log_queue *best = NULL;
		bool waiting = false;

		for (size_t i = 0; i < m->n; i++) {
			struct log_queue *q = &m->q[i];

			if (q->ended && !q->len)
				continue;
			if (!head_ready(m, q)) {
				waiting = true;
				break;
			}
			if (!best || q->head_ns < best->head_ns)
				best = q;
		}
		if (waiting) {
			pthread_cond_wait(&m->cond, &m->lock);
			continue;
		}
		if (!best)
			break;
		e = print_line(m, best);
	}
	pthread_mutex_unlock(&m->lock);
	if (e)
		cli_log_merge_stop(m);
	return e ? e : fflush(m->out) ? CADRE_EIO : 0;
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
	if (!r->keep_time) {
		r->head_len -= text;
		memmove(r->head, r->head + text, r->head_len);
	}
	if (r->state == LOG_DROPPING || !r->head_len)
		return 0;
	return cli_prefixer_write(pre, r->head, r->head_len);
}

/*
 * A line printed to its newline counts as printed. The resume point is the
 * greatest time printed, not the last: a line after it with an earlier time
 * was printed too, and a stream opened from the last line's time would send
 * the greater one again, past the drop.
 */
static void line_ended(struct cli_log_resume *r)
{
	if (r->state == LOG_PASSING && r->timed) {
		if (r->at_last && r->line_ns == r->last_ns) {
			r->at_last++;
		} else if (!r->at_last || r->line_ns > r->last_ns) {
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

/*
 * The path of a pods/log stream with timestamps. A first stream (since
 * NULL) takes --tail, --since and --limit-bytes; a stream opened again takes
 * its sinceTime and the bytes of --limit-bytes still owed (limit > 0).
 */
static int log_path(struct buf *path, const char *ns, const char *pod, bool follow,
		    const struct cli_logs_opts *o, const char *since, long long limit)
{
	char num[32];
	struct buf q;
	int e;

	buf_init(&q, 1024);
	e = kube_path_query_add(&q, "container", LOG_CONTAINER);
	if (!e && follow)
		e = kube_path_query_add(&q, "follow", "true");
	if (!e)
		e = kube_path_query_add(&q, "timestamps", "true");
	if (!e && since)
		e = kube_path_query_add(&q, "sinceTime", since);
	if (!e && !since && o->tail >= 0) {
		snprintf(num, sizeof(num), "%ld", o->tail);
		e = kube_path_query_add(&q, "tailLines", num);
	}
	if (!e && !since && o->since_seconds > 0) {
		snprintf(num, sizeof(num), "%ld", o->since_seconds);
		e = kube_path_query_add(&q, "sinceSeconds", num);
	}
	if (!e && !since && *o->since_time)
		e = kube_path_query_add(&q, "sinceTime", o->since_time);
	if (!e && limit > 0) {
		snprintf(num, sizeof(num), "%lld", limit);
		e = kube_path_query_add(&q, "limitBytes", num);
	}
	buf_reset(path);
	if (!e)
		e = kube_path(path, &kube_resource_pods, ns, pod, "log", buf_str(&q));
	buf_release(&q);
	return e;
}

/* The pods of attempt (or the latest) and the ranks asked for into v; how many. */
static size_t chosen(const struct cli_rank_pods *pods, const struct cli_logs_opts *o,
		     const struct cli_rank_pod **v)
{
	int attempt = o->attempt >= 0 ? o->attempt : cli_rank_pods_latest(pods);
	size_t n = 0;

	for (size_t i = 0; i < pods->len; i++)
		if (pods->items[i].attempt == attempt &&
		    cli_rank_set_has(&o->ranks, pods->items[i].rank))
			v[n++] = &pods->items[i];
	return n;
}

/* One rank's log read into the merge, on a thread of its own. */
struct rank_reader {
	struct cli_kube *k;
	const struct cli_logs_opts *o;
	const char *ns;
	const struct cli_rank_pod *p;
	struct cli_log_merge *m;
	size_t i;
	struct kube_response resp;  /* why it failed */
	int result;
	pthread_t thread;
	bool started;
};

static int reader_data(void *ctx, const char *data, size_t len)
{
	struct rank_reader *r = ctx;

	return cli_log_merge_push(r->m, r->i, data, len);
}

static void *reader_main(void *arg)
{
	struct rank_reader *r = arg;
	struct kube_stream_opts so = { .on_data = reader_data, .ctx = r, .resp = &r->resp };
	struct buf path;

	buf_init(&path, 4096);
	r->result = log_path(&path, r->ns, r->p->name, false, r->o, NULL, r->o->limit_bytes);
	if (!r->result)
		r->result = kube_http_stream(r->k->http, buf_str(&path), &so);
	buf_release(&path);
	cli_log_merge_end(r->m, r->i);
	return NULL;
}

/*
 * Every chosen rank's log, streamed at once and merged in time order as it
 * arrives (cli_log_merge): memory is a queue per rank, whatever the logs'
 * size. A rank whose log cannot be read says so after the merged lines.
 */
static int print_logs(struct cli_kube *k, const struct trainingjob *tj,
		      const struct cli_logs_opts *o, FILE *out, FILE *err)
{
	struct cli_rank_pods pods;
	struct kube_status st;
	const struct cli_rank_pod **v = NULL;
	struct rank_reader *r = NULL;
	struct cli_log_merge *m = NULL;
	int *ranks = NULL;
	size_t n = 0;
	int worst = 0;

	kube_status_clear(&st);
	if (cli_rank_pods_list(k, tj->meta.namespace, tj->meta.name, &pods, &st))
		return cli_kube_error(k, "list the job's pods", &st, err);
	v = calloc(pods.len + 1, sizeof(*v));
	r = calloc(pods.len + 1, sizeof(*r));
	ranks = calloc(pods.len + 1, sizeof(*ranks));
	if (!v || !r || !ranks) {
		worst = CLI_EXIT_FAILED;
		goto out;
	}
	if (!(n = chosen(&pods, o, v))) {
		fprintf(err, "%s: job \"%s\" has no pods%s (state %s)\n", LOGS, tj->meta.name,
			o->ranks.n || o->attempt >= 0 ? " of that rank and attempt" : "",
			tj_phase_name(tj->status.phase));
		worst = CLI_EXIT_FAILED;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		ranks[i] = v[i]->rank;
	if (!(m = cli_log_merge_new(n, ranks, LOG_QUEUE_BYTES, o->timestamps, out))) {
		worst = CLI_EXIT_FAILED;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		r[i] = (struct rank_reader){ .k = k, .o = o, .ns = tj->meta.namespace, .p = v[i],
					     .m = m, .i = i };
		kube_response_init(&r[i].resp);
		if (pthread_create(&r[i].thread, NULL, reader_main, &r[i])) {
			r[i].result = CADRE_ENOMEM;
			cli_log_merge_end(m, i);
		} else {
			r[i].started = true;
		}
	}
	if (cli_log_merge_run(m))
		worst = CLI_EXIT_FAILED;
	for (size_t i = 0; i < n; i++) {
		char what[320];

		if (r[i].started)
			pthread_join(r[i].thread, NULL);
		if (r[i].result && r[i].result != CADRE_ECANCELED) {
			snprintf(what, sizeof(what), "the log of rank %d (pod %s)", v[i]->rank,
				 v[i]->name);
			if (!r[i].resp.error.code)
				kube_status_set(&r[i].resp.error, r[i].result, "%s",
						cadre_strerror(r[i].result));
			worst = cli_kube_error(k, what, &r[i].resp.error, err);
		}
		kube_response_release(&r[i].resp);
	}
out:
	cli_log_merge_free(m);
	free(ranks);
	free(r);
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
	const struct cli_logs_opts *o;
	pthread_mutex_t *lock;
	struct cli_prefixer pre;
	struct cli_log_resume resume;
	char since[32];      /* the sinceTime of the next stream; "" for the whole log */
	char *pod;
	char *uid;           /* the pod this follows: its name may come to be another's */
	char *ns;
	int attempt;
	bool verified;       /* the stream is the pod's (service thread: its own) */
	atomic_bool gone;    /* the name is another pod's now: never opened again */
	long long bytes;     /* read so far, against --limit-bytes */
	atomic_bool stop;
	atomic_bool ended;   /* the thread is done */
	int result;          /* kube_http_stream's */
	pthread_t thread;
	bool started;
};

/*
 * Whether the pod named f->pod is still f's pod: pods/log goes by name, and
 * a gang restart makes a new pod of the same name. A stream's first bytes
 * come only after the API server picked the pod; if that pod's uid is still
 * f's after them, the stream is f's pod's (a uid never comes back). 0, or
 * CADRE_ENOTFOUND when the name is another pod's or nobody's now. A pod
 * that cannot be read (a role with list but not get on pods, the server
 * away) cannot be told apart: its stream goes on as before this check.
 */
static int verify_pod(struct follower *f)
{
	struct kube_status st;
	json_t *pod = NULL;
	const char *uid;
	int e;

	kube_status_clear(&st);
	e = kube_client_get(f->k->http, &kube_resource_pods, f->ns, f->pod, &pod, &st);
	uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
	if (!e && (!uid || strcmp(uid, f->uid)))
		e = CADRE_ENOTFOUND;
	json_decref(pod);
	if (e != CADRE_ENOTFOUND)
		return 0;
	atomic_store(&f->gone, true);
	return e;
}

static int follow_data(void *ctx, const char *data, size_t len)
{
	struct follower *f = ctx;
	int e;

	if (!f->verified && *f->uid) {
		if ((e = verify_pod(f)))
			return e;
		f->verified = true;
	}
	f->bytes += (long long)len;
	pthread_mutex_lock(f->lock);
	e = cli_log_resume_feed(&f->resume, &f->pre, data, len);
	pthread_mutex_unlock(f->lock);
	return e;
}

static void *follow_thread(void *arg)
{
	struct follower *f = arg;
	struct kube_stream_opts so = { .on_data = follow_data, .ctx = f, .stop = &f->stop };
	long long limit = f->o->limit_bytes ? f->o->limit_bytes - f->bytes : 0;
	struct buf path;

	buf_init(&path, 4096);
	f->verified = false;
	f->result = log_path(&path, f->ns, f->pod, true, f->o, *f->since ? f->since : NULL, limit);
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

/* A restarted gang's pods keep their names (<job>-<rank>): a pod is its name, attempt and uid. */
static struct follower *find_follower(struct follow *fw, const struct cli_rank_pod *p)
{
	for (size_t i = 0; i < fw->len; i++)
		if (fw->v[i]->attempt == p->attempt && !strcmp(fw->v[i]->pod, p->name) &&
		    !strcmp(fw->v[i]->uid, p->uid))
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
	f->o = fw->o;
	f->lock = &fw->lock;
	f->attempt = p->attempt;
	cli_prefixer_init(&f->pre, p->rank, fw->out);
	cli_log_resume_init(&f->resume);
	f->resume.keep_time = fw->o->timestamps;
	f->pod = strdup(p->name);
	f->uid = strdup(p->uid);
	f->ns = strdup(ns);
	fw->v[fw->len++] = f;
	if (!f->pod || !f->uid || !f->ns)
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
		 * it ended (a kubelet or API server restarted, a connection cut). Not a
		 * pod being deleted (its name may be the next attempt's pod's by the
		 * time the stream is asked for), not one whose name was found to be
		 * another pod's, nor one that has sent all --limit-bytes allowed.
		 */
		if (f && atomic_load(&f->ended) && f->result != CADRE_ECANCELED &&
		    !strcmp(v[i]->phase, "Running") && !v[i]->deleting && !atomic_load(&f->gone) &&
		    !(fw->o->limit_bytes && f->bytes >= fw->o->limit_bytes))
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
		free(fw.v[i]->uid);
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
