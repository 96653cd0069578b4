/*
 * exec.c - `cadre exec JOB [--rank N] [-it] -- CMD...`: a command on every
 * rank (or one) through pods/exec (kube/podexec.c), and the ranks' exec
 * that `cadre scancel --signal` uses.
 */
#include "cli/ranks.h"

#include "base/buf.h"
#include "base/err.h"
#include "cli/kube.h"
#include "convert/convert.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#define EXEC "cadre exec"
/* The container of a rank that runs the job (controller/build/build_pod.c), beside any sidecar. */
#define EXEC_CONTAINER "main"

static atomic_bool exec_stop;
static atomic_bool exec_resized;

static void on_stop(int sig)
{
	(void)sig;
	atomic_store(&exec_stop, true);
}

static void on_winch(int sig)
{
	(void)sig;
	atomic_store(&exec_resized, true);
}

static void set_handler(int sig, void (*fn)(int), struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, old);
}

struct rank_out {
	struct cli_prefixer out, err;
};

static int prefixed_output(void *ctx, int channel, const char *data, size_t len)
{
	struct rank_out *r = ctx;

	return cli_prefixer_write(channel == PODEXEC_CH_STDERR ? &r->err : &r->out, data, len);
}

/* The pods exec reaches: the latest attempt's Running ones (rank >= 0: that one). */
static size_t running_ranks(const struct cli_rank_pods *pods, int rank,
			    const struct cli_rank_pod **v)
{
	int latest = cli_rank_pods_latest(pods);
	size_t n = 0;

	for (size_t i = 0; i < pods->len; i++) {
		const struct cli_rank_pod *p = &pods->items[i];

		if (p->attempt == latest && !p->deleting && !strcmp(p->phase, "Running") &&
		    (rank < 0 || p->rank == rank))
			v[n++] = p;
	}
	return n;
}

/* One line for a rank whose command did not report an exit code; its code. */
static int rank_failure(struct cli_kube *k, const struct cli_rank_pod *p,
			const struct podexec_session *s, FILE *err)
{
	char what[320];

	if (!s->st.code) {
		fprintf(err, "%s: rank %d (pod %s): %s\n", k->cmd, p->rank, p->name,
			*s->st.message ? s->st.message : "the command ended without an exit code");
		return 1;
	}
	snprintf(what, sizeof(what), "exec in rank %d (pod %s)", p->rank, p->name);
	return cli_kube_error(k, what, &s->st, err);
}

static int job_pods(struct cli_kube *k, const struct trainingjob *tj,
		    struct cli_rank_pods *pods, FILE *err)
{
	struct kube_status st;
	char what[320];

	kube_status_clear(&st);
	if (!cli_rank_pods_list(k, tj->meta.namespace, tj->meta.name, pods, &st))
		return 0;
	snprintf(what, sizeof(what), "list the pods of job \"%s\"", tj->meta.name);
	return cli_kube_error(k, what, &st, err);
}

static int no_rank(struct cli_kube *k, const struct trainingjob *tj, int rank, FILE *err)
{
	if (rank >= 0)
		fprintf(err, "%s: rank %d of job \"%s\" is not running (state %s)\n", k->cmd, rank,
			tj->meta.name, tj_phase_name(tj->status.phase));
	else
		fprintf(err, "%s: job \"%s\" has no running rank (state %s)\n", k->cmd,
			tj->meta.name, tj_phase_name(tj->status.phase));
	return CLI_EXIT_FAILED;
}

int cli_exec_ranks(struct cli_kube *k, const struct trainingjob *tj, int rank, char **argv,
		   int argc, int *worst, FILE *out, FILE *err)
{
	struct cli_rank_pods pods;
	const struct cli_rank_pod **v = NULL;
	struct podexec_session *s = NULL;
	struct rank_out *outs = NULL;
	struct podexec_opts po = { .stop = &exec_stop };
	size_t n = 0;
	int code;

	*worst = 0;
	if ((code = job_pods(k, tj, &pods, err)))
		return code;
	v = calloc(pods.len + 1, sizeof(*v));
	s = calloc(pods.len + 1, sizeof(*s));
	outs = calloc(pods.len + 1, sizeof(*outs));
	if (!v || !s || !outs) {
		code = CLI_EXIT_FAILED;
		goto out;
	}
	if (!(n = running_ranks(&pods, rank, v))) {
		code = no_rank(k, tj, rank, err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		cli_prefixer_init(&outs[i].out, v[i]->rank, out);
		cli_prefixer_init(&outs[i].err, v[i]->rank, err);
		s[i] = (struct podexec_session){ .ns = tj->meta.namespace, .pod = v[i]->name,
						 .container = EXEC_CONTAINER, .argv = argv, .argc = (size_t)argc, .stdin_fd = -1,
						 .on_output = prefixed_output, .ctx = &outs[i] };
	}
	if (podexec_run(k->http, s, n, &po)) {
		code = rank_failure(k, v[0], &s[0], err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		int c = s[i].exit_code;

		cli_prefixer_flush(&outs[i].out);
		cli_prefixer_flush(&outs[i].err);
		if (s[i].st.code || c == PODEXEC_NO_EXIT_CODE)
			c = rank_failure(k, v[i], &s[i], err);
		if (c > *worst)
			*worst = c;
	}
out:
	for (size_t i = 0; outs && i < n; i++) {
		cli_prefixer_release(&outs[i].out);
		cli_prefixer_release(&outs[i].err);
	}
	free(outs);
	free(s);
	free(v);
	cli_rank_pods_release(&pods);
	return code;
}

/* ---- -it ---- */

static bool terminal_size(void *ctx, unsigned *cols, unsigned *rows)
{
	struct winsize ws;

	(void)ctx;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws))
		return false;
	if (!ws.ws_col || !ws.ws_row)
		return false;
	*cols = ws.ws_col;
	*rows = ws.ws_row;
	return true;
}

static int raw_output(void *ctx, int channel, const char *data, size_t len)
{
	FILE *f = channel == PODEXEC_CH_STDERR ? stderr : ctx;

	return fwrite(data, 1, len, f) == len && !fflush(f) ? 0 : CADRE_EIO;
}

/* One rank, stdin attached, with a terminal when tty; the command's exit code. */
static int exec_interactive(struct cli_kube *k, const struct trainingjob *tj,
			    const struct cli_exec_opts *o, FILE *out, FILE *err)
{
	struct podexec_opts po = { .stop = &exec_stop, .resized = &exec_resized,
				   .get_size = terminal_size };
	struct cli_rank_pods pods;
	const struct cli_rank_pod **v;
	struct podexec_session s;
	struct termios saved, raw;
	struct sigaction old_winch;
	bool restored = true;
	int code, rank = o->rank >= 0 ? o->rank : 0;

	if ((code = job_pods(k, tj, &pods, err)))
		return code;
	if (!(v = calloc(pods.len + 1, sizeof(*v)))) {
		cli_rank_pods_release(&pods);
		return CLI_EXIT_FAILED;
	}
	if (!running_ranks(&pods, rank, v)) {
		code = no_rank(k, tj, rank, err);
		goto out;
	}
	s = (struct podexec_session){ .ns = tj->meta.namespace, .pod = v[0]->name,
				      .container = EXEC_CONTAINER, .argv = o->argv, .argc = (size_t)o->argc,
				      .tty = o->tty && isatty(STDIN_FILENO), .stdin_fd = STDIN_FILENO,
				      .on_output = raw_output, .ctx = out };
	if (s.tty && !tcgetattr(STDIN_FILENO, &saved)) {
		raw = saved;
		cfmakeraw(&raw);
		restored = tcsetattr(STDIN_FILENO, TCSANOW, &raw) != 0;
	}
	set_handler(SIGWINCH, on_winch, &old_winch);
	code = podexec_run(k->http, &s, 1, &po);
	sigaction(SIGWINCH, &old_winch, NULL);
	if (!restored)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	if (code || s.st.code || s.exit_code == PODEXEC_NO_EXIT_CODE)
		code = rank_failure(k, v[0], &s, err);
	else
		code = s.exit_code;
out:
	free(v);
	cli_rank_pods_release(&pods);
	return code;
}

/* sky exec CLUSTER TASK.yaml: the task's run, as bash -c RUN on every rank. */
struct task_cmd {
	char *run;
	char *argv[4];
};

static int task_command(struct cli_exec_opts *o, struct task_cmd *t, FILE *err)
{
	struct convert_result r;
	struct buf text;
	size_t len;
	int code, e;

	memset(t, 0, sizeof(*t));
	if (o->argc != 1 || o->interactive || (len = strlen(o->argv[0])) < 6 ||
	    (strcmp(o->argv[0] + len - 5, ".yaml") && strcmp(o->argv[0] + len - 4, ".yml")) ||
	    access(o->argv[0], R_OK))
		return 0;
	convert_result_init(&r);
	buf_init(&text, CONVERT_MAX_INPUT);
	if (!(code = cli_read_input(EXEC, o->argv[0], &text, err))) {
		e = convert_sky_task(&(struct convert_input){ .text = buf_str(&text),
							      .len = text.len }, &r);
		code = cli_converted(EXEC, o->argv[0], e, &r, err);
	}
	if (!code && !(r.tj.spec.run && *r.tj.spec.run)) {
		fprintf(err, "%s: %s has no run\n", EXEC, o->argv[0]);
		code = CLI_EXIT_USAGE;
	}
	if (!code && !(t->run = strdup(r.tj.spec.run)))
		code = CLI_EXIT_FAILED;
	if (!code) {
		t->argv[0] = "bash";
		t->argv[1] = "-c";
		t->argv[2] = t->run;
		o->argv = t->argv;
		o->argc = 3;
	}
	buf_release(&text);
	convert_result_release(&r);
	return code;
}

int cli_exec(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	struct task_cmd task = { 0 };
	struct cli_exec_opts o = { .g = *g };
	struct cli_kube k = { 0 };
	struct cli_jobs jobs = { 0 };
	const struct trainingjob *tj;
	struct sigaction old_int, old_term;
	int code, worst = 0;

	if ((code = cli_exec_parse(args, n, &o, err)))
		return code;
	if (o.help) {
		cli_print_help(out, "exec");
		return 0;
	}
	if ((code = task_command(&o, &task, err)))
		return code;
	if ((code = cli_kube_open(&o.g, EXEC, &k, err)))
		goto out_task;
	if ((code = cli_jobs_list(&k, o.all, &jobs, err)))
		goto out;
	if (!(tj = cli_jobs_find(&jobs, o.job))) {
		fprintf(err, "%s: no job \"%s\" in namespace \"%s\"\n", EXEC, o.job, k.ns);
		code = CLI_EXIT_FAILED;
		goto out;
	}
	atomic_store(&exec_stop, false);
	set_handler(SIGTERM, on_stop, &old_term);
	if (!o.interactive)
		set_handler(SIGINT, on_stop, &old_int);
	if (o.interactive) {
		code = exec_interactive(&k, tj, &o, out, err);
	} else if (!(code = cli_exec_ranks(&k, tj, o.rank, o.argv, o.argc, &worst, out, err))) {
		code = worst;
	}
	if (!o.interactive)
		sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
out:
	cli_jobs_release(&jobs);
	cli_kube_close(&k);
out_task:
	free(task.run);
	return code;
}
