/*
 * ranks.c - a job's rank pods, srun --label prefixes, the options of
 * cadre logs and cadre exec, and a command run on every rank.
 */
#include "cli/ranks.h"

#include "base/err.h"
#include "kube/exec.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define LABEL_JOB "cadre.dev/job-name"
#define LABEL_RANK "cadre.dev/node-rank"
#define LABEL_ATTEMPT "cadre.dev/restart-attempt"

bool cli_parse_count(const char *text, int *n)
{
	char *end;
	long v;

	if (!text || !*text || *text == '-' || *text == '+')
		return false;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || *end || v < 0 || v > 1000000)
		return false;
	*n = (int)v;
	return true;
}

/* A label's number; -1 when absent or not one. */
static int label_number(const json_t *labels, const char *key)
{
	int n;

	return cli_parse_count(json_string_value(json_object_get(labels, key)), &n) ? n : -1;
}

struct collect_pods {
	struct cli_rank_pods *pods;
	size_t cap;
};

static int collect_pod(void *ctx, json_t *item)
{
	struct collect_pods *c = ctx;
	const json_t *meta = json_object_get(item, "metadata");
	const json_t *labels = json_object_get(meta, "labels");
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *uid = json_string_value(json_object_get(meta, "uid"));
	const char *phase = json_string_value(json_object_get(json_object_get(item, "status"),
							      "phase"));
	struct cli_rank_pod *p;

	if (!name || label_number(labels, LABEL_RANK) < 0)
		return 0;
	if (c->pods->len == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		struct cli_rank_pod *v = realloc(c->pods->items, cap * sizeof(*v));

		if (!v)
			return CADRE_ENOMEM;
		c->pods->items = v;
		c->cap = cap;
	}
	p = &c->pods->items[c->pods->len];
	p->rank = label_number(labels, LABEL_RANK);
	p->attempt = label_number(labels, LABEL_ATTEMPT);
	p->deleting = json_object_get(meta, "deletionTimestamp") != NULL;
	p->name = strdup(name);
	p->uid = strdup(uid ? uid : "");
	p->phase = strdup(phase ? phase : "");
	if (!p->name || !p->uid || !p->phase) {
		free(p->name);
		free(p->uid);
		free(p->phase);
		return CADRE_ENOMEM;
	}
	c->pods->len++;
	return 0;
}

static int by_attempt_rank(const void *a, const void *b)
{
	const struct cli_rank_pod *x = a, *y = b;

	if (x->attempt != y->attempt)
		return (x->attempt > y->attempt) - (x->attempt < y->attempt);
	return (x->rank > y->rank) - (x->rank < y->rank);
}

int cli_rank_pods_list(struct cli_kube *k, const char *ns, const char *job,
		       struct cli_rank_pods *out, struct kube_status *st)
{
	struct collect_pods c = { .pods = out, .cap = 0 };
	struct kube_list_opts lo = { 0 };
	char selector[320];
	int e;

	memset(out, 0, sizeof(*out));
	snprintf(selector, sizeof(selector), LABEL_JOB "=%s", job);
	lo.label_selector = selector;
	e = kube_client_list_each(k->http, &kube_resource_pods, ns, &lo, collect_pod, &c, NULL,
				  st);
	if (e) {
		cli_rank_pods_release(out);
		if (!st->code)
			st->code = e;
		return e;
	}
	if (out->len)
		qsort(out->items, out->len, sizeof(*out->items), by_attempt_rank);
	return 0;
}

void cli_rank_pods_release(struct cli_rank_pods *pods)
{
	for (size_t i = 0; i < pods->len; i++) {
		free(pods->items[i].name);
		free(pods->items[i].uid);
		free(pods->items[i].phase);
	}
	free(pods->items);
	pods->items = NULL;
	pods->len = 0;
}

int cli_rank_pods_latest(const struct cli_rank_pods *pods)
{
	int latest = -1;

	for (size_t i = 0; i < pods->len; i++)
		if (pods->items[i].attempt > latest)
			latest = pods->items[i].attempt;
	return latest;
}

/* ---- srun --label ---- */

void cli_prefixer_init(struct cli_prefixer *p, int rank, FILE *out)
{
	snprintf(p->prefix, sizeof(p->prefix), "%d: ", rank);
	buf_init(&p->partial, CLI_PREFIX_MAX_LINE);
	p->out = out;
}

void cli_prefixer_release(struct cli_prefixer *p)
{
	buf_release(&p->partial);
}

static int emit(struct cli_prefixer *p, const char *a, size_t a_len, const char *b, size_t b_len)
{
	if (fputs(p->prefix, p->out) < 0 || (a_len && fwrite(a, 1, a_len, p->out) != a_len) ||
	    (b_len && fwrite(b, 1, b_len, p->out) != b_len) || fputc('\n', p->out) < 0)
		return CADRE_EIO;
	return 0;
}

int cli_prefixer_write(struct cli_prefixer *p, const char *data, size_t len)
{
	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl ? (size_t)(nl - data) : len;
		int e;

		if (!nl) {
			/* the rest waits for its newline, up to the cap */
			size_t room = CLI_PREFIX_MAX_LINE - p->partial.len;

			if (n > room) {
				if ((e = emit(p, p->partial.data, p->partial.len, data, room)))
					return e;
				buf_reset(&p->partial);
				data += room;
				len -= room;
				continue;
			}
			return buf_add(&p->partial, data, n) ? CADRE_ENOMEM : 0;
		}
		if ((e = emit(p, p->partial.data, p->partial.len, data, n)))
			return e;
		buf_reset(&p->partial);
		data += n + 1;
		len -= n + 1;
	}
	return fflush(p->out) ? CADRE_EIO : 0;
}

int cli_prefixer_flush(struct cli_prefixer *p)
{
	int e = 0;

	if (p->partial.len)
		e = emit(p, p->partial.data, p->partial.len, NULL, 0);
	buf_reset(&p->partial);
	return e ? e : fflush(p->out) ? CADRE_EIO : 0;
}

void cli_prefixer_drop(struct cli_prefixer *p)
{
	buf_reset(&p->partial);
}

/* ---- options ---- */

static int rank_opt(const char *cmd, const char *flag, const char *text, int *out, FILE *err)
{
	if (!text)
		return 0;
	if (!cli_parse_count(text, out)) {
		fprintf(err, "%s: %s: not a rank number: \"%s\"\n", cmd, flag, text);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

bool cli_rank_set_parse(const char *text, struct cli_rank_set *set)
{
	const char *p = text;

	set->n = 0;
	if (!p || !*p)
		return false;
	for (;;) {
		char word[32], *dash;
		size_t len = strcspn(p, ",");
		int lo, hi;

		if (!len || len >= sizeof(word) || set->n == CLI_RANK_RANGES)
			return false;
		memcpy(word, p, len);
		word[len] = '\0';
		dash = strchr(word, '-');
		if (dash)
			*dash = '\0';
		if (!cli_parse_count(word, &lo) || (dash && !cli_parse_count(dash + 1, &hi)))
			return false;
		if (!dash)
			hi = lo;
		if (hi < lo)
			return false;
		set->lo[set->n] = lo;
		set->hi[set->n++] = hi;
		p += len;
		if (!*p)
			return true;
		p++;
	}
}

bool cli_rank_set_has(const struct cli_rank_set *set, int rank)
{
	if (!set->n)
		return true;
	for (size_t i = 0; i < set->n; i++)
		if (rank >= set->lo[i] && rank <= set->hi[i])
			return true;
	return false;
}

/*
 * --since: a duration as kubectl takes it ("90s", "10m", "1h30m": a number
 * and a unit, h, m or s, one or more times) into seconds, else an RFC 3339
 * time into o->since_time in UTC. false for anything else.
 */
static bool since_parse(const char *text, struct cli_logs_opts *o)
{
	const char *p = text;
	long long total = 0;
	int64_t ms;

	while (*p >= '0' && *p <= '9') {
		char *end;
		long long v = strtoll(p, &end, 10);
		int unit = *end == 'h' ? 3600 : *end == 'm' ? 60 : *end == 's' ? 1 : 0;

		if (!unit || v > 100LL * 365 * 86400)
			break;
		total += v * unit;
		p = end + 1;
		if (!*p) {
			if (total <= 0 || total > 100LL * 365 * 86400)
				return false;
			o->since_seconds = (long)total;
			return true;
		}
	}
	if (kube_exec_parse_time(text, &ms) == 0) {
		time_t sec = (time_t)(ms / 1000);
		struct tm tm;

		return gmtime_r(&sec, &tm) &&
		       strftime(o->since_time, sizeof(o->since_time), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	return false;
}

/* A whole number of at least min, at most max, into *v. */
static bool parse_whole(const char *text, long long min, long long max, long long *v)
{
	char *end;

	if (!text || !*text || *text == '+' || *text == ' ')
		return false;
	errno = 0;
	*v = strtoll(text, &end, 10);
	return !errno && !*end && *v >= min && *v <= max;
}

int cli_logs_parse(char **args, int n, struct cli_logs_opts *o, FILE *err)
{
	const char *rank = NULL, *attempt = NULL, *tail = NULL, *since = NULL, *limit = NULL;
	const struct cli_opt opts[] = {
		{ "follow", 'f', NULL, &o->follow }, { "rank", 0, &rank, NULL },
		{ "attempt", 0, &attempt, NULL }, { "tail", 0, &tail, NULL },
		{ "since", 0, &since, NULL }, { "limit-bytes", 0, &limit, NULL },
		{ "timestamps", 0, NULL, &o->timestamps }, { NULL, 0, NULL, NULL },
	};
	char **pos = calloc((size_t)n + 1, sizeof(*pos));
	int n_pos = 0, code;
	long long v = 0;

	o->attempt = -1;
	o->tail = -1;
	o->ranks.n = 0;
	if (!pos)
		return CLI_EXIT_FAILED;
	code = cli_opts_parse("cadre logs", opts, args, n, &o->g, &o->all, &o->help, pos, &n_pos,
			      err);
	if (!code && rank && !cli_rank_set_parse(rank, &o->ranks)) {
		fprintf(err, "cadre logs: --rank: not a rank, a range or a list of them (3, 0-3, "
			"0,2,5-7): \"%s\"\n", rank);
		code = CLI_EXIT_USAGE;
	}
	if (!code && attempt && !cli_parse_count(attempt, &o->attempt)) {
		fprintf(err, "cadre logs: --attempt: not an attempt number: \"%s\"\n", attempt);
		code = CLI_EXIT_USAGE;
	}
	if (!code && tail) {
		if (!parse_whole(tail, 0, 1LL << 40, &v)) {
			fprintf(err, "cadre logs: --tail: not a number of lines: \"%s\"\n", tail);
			code = CLI_EXIT_USAGE;
		} else {
			o->tail = (long)v;
		}
	}
	if (!code && since && !since_parse(since, o)) {
		fprintf(err, "cadre logs: --since: not a duration (90s, 10m, 1h30m) nor an RFC 3339 "
			"time (2026-12-01T10:00:00Z): \"%s\"\n", since);
		code = CLI_EXIT_USAGE;
	}
	if (!code && limit) {
		if (!parse_whole(limit, 1, 1LL << 50, &v)) {
			fprintf(err, "cadre logs: --limit-bytes: not a number of bytes above 0: "
				"\"%s\"\n", limit);
			code = CLI_EXIT_USAGE;
		} else {
			o->limit_bytes = v;
		}
	}
	if (!code && !o->help && n_pos != 1) {
		fprintf(err, n_pos ? "cadre logs: one job at a time (got %d)\n" :
				     "cadre logs: which job? (cadre logs JOB: its id or name)\n",
			n_pos);
		code = CLI_EXIT_USAGE;
	}
	if (!code && n_pos)
		o->job = pos[0];
	free(pos);
	return code;
}

/* The index in args of the "--" that ends cadre exec's own words; n when none. */
static int dashdash_at(char **args, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(args[i], "--"))
			return i;
	return n;
}

/*
 * sky exec NAME CMD...: without "--", the command starts at the first word
 * after the job that is not one of exec's flags (a program's name does not
 * start with '-'); n when there is none.
 */
static int command_at(char **args, int n)
{
	static const char *const valued[] = { "--rank", "--namespace", "-n", "--kubeconfig",
					      "--context" };
	bool job = false;

	for (int i = 0; i < n; i++) {
		if (args[i][0] == '-' && args[i][1]) {
			for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++)
				if (!strcmp(args[i], valued[k]))
					i++;
			continue;
		}
		if (job)
			return i;
		job = true;
	}
	return n;
}

int cli_exec_parse(char **args, int n, struct cli_exec_opts *o, FILE *err)
{
	const char *rank = NULL;
	const struct cli_opt opts[] = {
		{ "rank", 0, &rank, NULL }, { "stdin", 'i', NULL, &o->interactive },
		{ "tty", 't', NULL, &o->tty }, { NULL, 0, NULL, NULL },
	};
	int dd = dashdash_at(args, n), n_pos = 0, code, skip = 1;
	char **pos = calloc((size_t)n + 1, sizeof(*pos));

	o->rank = -1;
	if (dd == n && (dd = command_at(args, n)) < n)
		skip = 0;  /* sky exec's form: the command right after the job */
	if (!pos)
		return CLI_EXIT_FAILED;
	code = cli_opts_parse("cadre exec", opts, args, dd, &o->g, &o->all, &o->help, pos, &n_pos,
			      err);
	if (!code)
		code = rank_opt("cadre exec", "--rank", rank, &o->rank, err);
	if (code || o->help)
		goto out;
	if (!n_pos) {
		fprintf(err, "cadre exec: which job? (cadre exec JOB [--rank N] -- COMMAND...)\n");
		code = CLI_EXIT_USAGE;
		goto out;
	}
	o->job = pos[0];
	/* as kubectl exec: the command follows "--", so its own flags stay its own */
	o->argv = dd < n ? args + dd + skip : NULL;
	o->argc = dd < n ? n - dd - skip : 0;
	if (n_pos > 1) {
		fprintf(err, "cadre exec: unexpected \"%s\": the command goes after \"--\" "
			"(cadre exec JOB -- COMMAND...)\n", pos[1]);
		code = CLI_EXIT_USAGE;
	} else if (o->argc <= 0) {
		fprintf(err, "cadre exec: no command (cadre exec JOB -- COMMAND...)\n");
		code = CLI_EXIT_USAGE;
	} else if (o->tty && !o->interactive) {
		fprintf(err, "cadre exec: -t needs -i: a terminal is interactive (use -it)\n");
		code = CLI_EXIT_USAGE;
	}
out:
	free(pos);
	return code;
}

static const struct {
	const char *name;
	int number;
} signals[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "ABRT", SIGABRT },
	{ "KILL", SIGKILL }, { "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
	{ "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM }, { "CONT", SIGCONT },
	{ "STOP", SIGSTOP }, { "TSTP", SIGTSTP }, { "URG", SIGURG }, { "XCPU", SIGXCPU },
	{ "WINCH", SIGWINCH },
};

bool cli_signal_name(const char *text, char *name, size_t size)
{
	const char *t = text && !strncasecmp(text, "SIG", 3) ? text + 3 : text;
	int number = -1;

	if (!t || !*t)
		return false;
	if (t[0] >= '0' && t[0] <= '9' && !cli_parse_count(t, &number))
		return false;
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		if (number >= 0 ? signals[i].number == number : !strcasecmp(signals[i].name, t)) {
			snprintf(name, size, "%s", signals[i].name);
			return true;
		}
	}
	return false;
}
