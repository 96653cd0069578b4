/*
 * salloc.c - `cadre salloc [sbatch options] [COMMAND [ARGS]]`: an
 * interactive allocation, as Slurm's salloc makes one (src/salloc/salloc.c).
 *
 * The allocation is a TrainingJob whose run only waits (SALLOC_HOLD_SCRIPT),
 * so it holds its nodes until it is deleted or its time limit ends it. The
 * options are sbatch's, read by the same code as cadre sbatch's
 * (cli/submit.h, convert/sbatch_opts.c). Once the job runs, COMMAND (else
 * $SHELL) runs here with the job's SLURM_* variables, in the foreground of
 * the terminal; when it exits the job is deleted and salloc exits with its
 * exit code.
 *
 * Signals, as salloc treats them: while the job waits, SIGINT, SIGQUIT,
 * SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 cancel it; while the command runs,
 * SIGHUP and SIGTERM are passed to the command's process group and end the
 * allocation, the others are left to the command (Ctrl-C reaches it
 * through the terminal).
 */
#include "cli/salloc.h"

#include "api/fielderr.h"
#include "api/trainingjob.h"
#include "base/buf.h"
#include "base/err.h"
#include "cli/kube.h"
#include "cli/submit.h"
#include "convert/convert.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CMD "cadre salloc"
#define POLL_MS 500
/* While the command runs the job is only checked for revocation: seldom enough to cost nothing. */
#define RUN_POLL_MS 5000
#define RELEASE_TIMEOUT_MS 60000

static volatile sig_atomic_t got_signal;

static void on_signal(int signo)
{
	got_signal = signo;
}

static const int allocation_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 };

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;  /* no SA_RESTART: a wait ends at once */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(allocation_signals) / sizeof(allocation_signals[0]); i++)
		sigaction(allocation_signals[i], &sa, NULL);
}

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L },
		  NULL);
}

struct salloc {
	struct cli_kube k;
	const char *name;   /* the TrainingJob's (borrowed from the converted job) */
	char id[64];        /* status.jobId */
	char *uid;          /* metadata.uid, for a delete of this job and no other */
	struct trainingjob tj;  /* as last read */
	bool have_tj;
	FILE *err;
};

/* Read the job into s->tj; *gone when it is no more. 0, or the exit code after one line. */
static int read_job(struct salloc *s, bool *gone)
{
	struct kube_status st;
	struct field_errors errs;
	json_t *obj = NULL;
	char what[160];
	int e;

	kube_status_clear(&st);
	*gone = false;
	e = kube_client_get(s->k.http, &kube_resource_trainingjobs, s->k.ns, s->name, &obj, &st);
	if (e == CADRE_ENOTFOUND) {
		*gone = true;
		return 0;
	}
	if (e) {
		snprintf(what, sizeof(what), "read trainingjob \"%s\"", s->name);
		if (!st.code)
			st.code = e;
		return cli_kube_error(&s->k, what, &st, s->err);
	}
	if (s->have_tj)
		tj_release(&s->tj);
	field_errors_init(&errs);
	e = tj_parse(obj, &s->tj, &errs);
	field_errors_release(&errs);
	json_decref(obj);
	s->have_tj = true;
	if (e == CADRE_ENOMEM) {
		fprintf(s->err, "%s: out of memory\n", CMD);
		return CLI_EXIT_FAILED;
	}
	if (!s->uid && s->tj.meta.uid && !(s->uid = strdup(s->tj.meta.uid)))
		return CLI_EXIT_FAILED;
	return 0;
}

/* One read and salloc's lines for it. 0, or the exit code. */
static int watch(struct salloc *s, struct salloc_watch *w)
{
	struct buf msgs;
	bool gone;
	int code, e;

	if ((code = read_job(s, &gone)))
		return code;
	buf_init(&msgs, (size_t)1 << 20);
	e = salloc_watch_step(w, gone ? NULL : &s->tj, &msgs);
	fputs(buf_str(&msgs), s->err);
	fflush(s->err);
	buf_release(&msgs);
	return e ? CLI_EXIT_FAILED : 0;
}

/* Wait until the job runs. 0 when it does, else the exit code (the job revoked or a signal). */
static int wait_granted(struct salloc *s, struct salloc_watch *w)
{
	int code;

	for (;;) {
		if (got_signal)
			return CLI_EXIT_FAILED;
		if ((code = watch(s, w)))
			return code;
		if (w->state == SALLOC_GRANTED)
			return 0;
		if (w->state == SALLOC_REVOKED)
			return CLI_EXIT_FAILED;
		sleep_ms(POLL_MS);
	}
}

/*
 * Delete the job (foreground: its pods go first) and wait until it is gone,
 * so that when salloc returns its nodes are free. 0 or the exit code.
 */
static int release(struct salloc *s)
{
	const struct kube_delete_opts opts = { .propagation_policy = "Foreground",
					       .uid = s->uid };
	struct kube_status st;
	char what[160];
	bool gone = false;
	int e, code = 0;

	kube_status_clear(&st);
	snprintf(what, sizeof(what), "delete trainingjob \"%s\"", s->name);
	e = kube_client_delete(s->k.http, &kube_resource_trainingjobs, s->k.ns, s->name, &opts,
			       NULL, &st);
	if (e && e != CADRE_ENOTFOUND && e != CADRE_ECONFLICT) {
		if (!st.code)
			st.code = e;
		return cli_kube_error(&s->k, what, &st, s->err);
	}
	for (int waited = 0; !gone && waited < RELEASE_TIMEOUT_MS; waited += 200) {
		if ((code = read_job(s, &gone)))
			return code;
		if (!gone)
			sleep_ms(200);
	}
	if (!gone) {
		fprintf(s->err, "%s: trainingjob \"%s\" is deleted but still there after %d s: "
			"its pods are being stopped\n", CMD, s->name, RELEASE_TIMEOUT_MS / 1000);
		return CLI_EXIT_FAILED;
	}
	return 0;
}

/*
 * In the child: the command in a process group of its own, with the signals
 * reset. It takes the terminal itself too (SIGTTOU is still ignored here),
 * as shells do for their jobs: a shell that starts before the parent's
 * tcsetpgrp would otherwise stop itself with SIGTTIN, waiting to be in the
 * foreground.
 */
static void exec_command(char **argv, bool interactive)
{
	static const int reset[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,
				     SIGTSTP, SIGTTIN, SIGTTOU };

	setpgid(0, 0);
	if (interactive)
		tcsetpgrp(STDIN_FILENO, getpid());
	for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		signal(reset[i], SIG_DFL);
	execvp(argv[0], argv);
	dprintf(STDERR_FILENO, "salloc: error: Unable to exec command \"%s\": %s\n", argv[0],
		strerror(errno));
	_exit(1);
}

/*
 * Wait for the command, checking now and then that the job still runs:
 * one revoked (scancel, its time limit) hangs up the command, as salloc
 * does. SIGHUP and SIGTERM are passed on and end the wait. *status is the
 * command's wait status; returns false when it was not reaped.
 */
static bool wait_command(struct salloc *s, struct salloc_watch *w, pid_t pid, int *status)
{
	int since_poll = 0;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
		if (got_signal == SIGHUP || got_signal == SIGTERM) {
			killpg(pid, got_signal);
			return false;
		}
		got_signal = 0;  /* the others are the command's */
		if ((since_poll += 100) >= RUN_POLL_MS && w->state != SALLOC_REVOKED) {
			since_poll = 0;
			if (!watch(s, w) && w->state == SALLOC_REVOKED)
				killpg(pid, SIGHUP);
		}
		sleep_ms(100);
	}
}

/* Run argv with the job's variables, in the terminal's foreground. The exit code salloc gives. */
static int run_command(struct salloc *s, struct salloc_watch *w, char **argv,
		       const char *job_name)
{
	struct salloc_env env;
	char dir[4096], host[256];
	bool interactive = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	int status = 0, code = CLI_EXIT_FAILED;
	pid_t pid;

	if (!getcwd(dir, sizeof(dir)))
		snprintf(dir, sizeof(dir), ".");
	if (gethostname(host, sizeof(host)))
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = 0;
	if (salloc_env_build(&s->tj, job_name, dir, host, &env)) {
		fprintf(s->err, "%s: out of memory\n", CMD);
		return CLI_EXIT_FAILED;
	}
	for (size_t i = 0; i < env.len; i++)
		putenv(env.items[i]);  /* the environment keeps them: never released */
	env.len = 0;
	/* job control, as salloc: the command owns the terminal, salloc stays out of its way */
	signal(SIGTSTP, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	fflush(NULL);
	if ((pid = fork()) < 0) {
		fprintf(s->err, "salloc: error: fork failed: %s\n", strerror(errno));
		return CLI_EXIT_FAILED;
	}
	if (!pid)
		exec_command(argv, interactive);
	setpgid(pid, pid);
	if (interactive)
		tcsetpgrp(STDIN_FILENO, pid);
	if (wait_command(s, w, pid, &status))
		code = salloc_exit_code(status);
	if (interactive)
		tcsetpgrp(STDIN_FILENO, getpgrp());
	return code;
}

/* "x7k2p": five characters of generateName's alphabet (no vowels, no look-alikes). */
static void random_suffix(char out[6])
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	unsigned char bytes[5] = { 0 };

	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
		unsigned long t = (unsigned long)time(NULL) ^ (unsigned long)getpid() << 16;

		for (size_t i = 0; i < sizeof(bytes); i++, t >>= 5)
			bytes[i] = (unsigned char)t;
	}
	for (size_t i = 0; i < sizeof(bytes); i++)
		out[i] = alphabet[bytes[i] % (sizeof(alphabet) - 1)];
	out[5] = 0;
}

/*
 * The allocation: submit, wait for the grant, run, release. The job's
 * name stays the converted job's; job_name is what $SLURM_JOB_NAME says.
 */
static int allocate(struct salloc *s, const struct convert_result *r,
		    const struct cli_placement *placement, double timeout, char **argv,
		    const char *job_name)
{
	struct salloc_watch w = { .job_id = s->id, .state = SALLOC_SUBMITTED };
	int code;

	catch_signals();
	if ((code = cli_submit_on(&s->k, &(struct cli_notes){ r, "salloc", placement }, timeout,
				  s->id, sizeof(s->id), s->err)))
		return code;
	if ((code = wait_granted(s, &w)) == 0) {
		fprintf(s->err, "salloc: To reach the nodes: cadre -n %s exec %s -it -- bash\n",
			s->k.ns, s->name);
		fflush(s->err);
		code = run_command(s, &w, argv, job_name);
	}
	if (w.state == SALLOC_REVOKED)
		return code ? code : 0;
	if (got_signal && w.state != SALLOC_GRANTED)
		fprintf(s->err, "salloc: Job allocation %s has been revoked.\n", s->id);
	else
		fprintf(s->err, "salloc: Relinquishing job allocation %s\n", s->id);
	fflush(s->err);
	signal(SIGINT, SIG_IGN);  /* the release is not to be cut short */
	return release(s) ? CLI_EXIT_FAILED : code;
}

/* The words, the help, the checks before any request. 0, or the exit code (-1: help shown). */
static int salloc_args(struct cli_words *c, char **args, int n, double *timeout, FILE *out,
		       FILE *err)
{
	if (cli_words_parse(c, CMD, CLI_WORDS_COMMAND, args, n, err))
		return CLI_EXIT_USAGE;
	if (c->help) {
		cli_print_help(out, "salloc");
		return -1;
	}
	if (c->parsable) {
		fprintf(err, "%s: unknown flag: --parsable (it is sbatch's)\n", CMD);
		return CLI_EXIT_USAGE;
	}
	if (c->timeout && !cli_parse_timeout(c->timeout, timeout)) {
		fprintf(err, "%s: --submit-timeout \"%s\": not a number of seconds\n", CMD,
			c->timeout);
		return CLI_EXIT_USAGE;
	}
	return cli_placement_check(&c->placement, CMD, err);
}

int cli_salloc(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	struct cli_words c = { .g = *g };
	struct salloc s = { .err = err };
	struct convert_result r;
	double timeout = CLI_SUBMIT_TIMEOUT_S;
	const char *shell = getenv("SHELL");
	char *shell_argv[] = { (char *)(shell && *shell ? shell : "/bin/sh"), NULL };
	char **argv, *name = NULL, suffix[6];
	const char *base, *job_name;
	int code;

	convert_result_init(&r);
	if ((code = salloc_args(&c, args, n, &timeout, out, err))) {
		code = code < 0 ? CLI_EXIT_OK : code;
		goto out;
	}
	argv = c.n_command ? c.command : shell_argv;
	base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	random_suffix(suffix);
	code = CLI_EXIT_FAILED;
	if (!(name = salloc_default_name(argv[0], suffix)))
		goto out;
	if ((code = cli_words_convert(&c, CMD, "salloc", SALLOC_HOLD_SCRIPT,
				      strlen(SALLOC_HOLD_SCRIPT), name, &r, err)))
		goto out;
	/* salloc names a job after its command unless told: $SLURM_JOB_NAME says "bash" */
	job_name = strcmp(r.tj.meta.name, name) ? r.tj.meta.name : base;
	s.name = r.tj.meta.name;
	if ((code = cli_kube_open(&c.g, CMD, &s.k, err)))
		goto out;
	code = allocate(&s, &r, &c.placement, timeout, argv, job_name);
out:
	if (s.have_tj)
		tj_release(&s.tj);
	free(s.uid);
	cli_kube_close(&s.k);
	free(name);
	cli_words_release(&c);
	convert_result_release(&r);
	return code;
}
