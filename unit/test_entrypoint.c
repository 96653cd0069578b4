/*
 * The entrypoint script, run for real: each behaviour is checked under bash
 * and under /bin/sh (dash on Debian), the two shells a pod's /bin/sh can be.
 * getent is a stub (unit/testdata/bin/getent) that answers from a hosts file
 * the test writes, so no test touches the network.
 */
#include <criterion/criterion.h>

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include "api/fielderr.h"
#include "api/hostlist.h"
#include "api/trainingjob.h"
#include "base/buf.h"
#include "cli/bundle.h"
#include "controller/build/build.h"
#include "controller/build/entrypoint.h"
#include "unit/support/podenv.h"
#include "convert/convert.h"

#define STUB_BIN CADRE_SOURCE_DIR "/unit/testdata/bin"

/* One run of the script: a scratch directory, its environment, its output. */
struct ep {
	char dir[64];
	char hosts[128];
	char out[128];
	char err[128];
	char termlog[128];
	char stubs[128];  /* first on the default PATH: a test's own commands */
	char *env[96];
	size_t n_env;
	pid_t pid;
};

static void ep_setenv(struct ep *e, const char *name, const char *value)
{
	struct buf b;

	cr_assert_lt(e->n_env + 1, sizeof(e->env) / sizeof(e->env[0]));
	buf_init(&b, 1 << 16);
	cr_assert_eq(buf_addf(&b, "%s=%s", name, value), 0);
	e->env[e->n_env++] = buf_detach(&b, NULL);
	e->env[e->n_env] = NULL;
}

/* The gang the controller describes: n peers job-0 ... under job.ns.svc. */
static void ep_peers(struct ep *e, int n)
{
	char count[16];

	snprintf(count, sizeof(count), "%d", n);
	ep_setenv(e, ENTRYPOINT_ENV_JOB_NAME, "job");
	ep_setenv(e, ENTRYPOINT_ENV_NNODES, count);
	ep_setenv(e, ENTRYPOINT_ENV_PEER_DOMAIN, "job.ns.svc");
}

static void write_file(const char *path, const char *text, const char *mode)
{
	FILE *f = fopen(path, mode);

	cr_assert_not_null(f, "open %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

/* The whole file, or "" if it does not exist; the caller frees it. */
static char *read_file(const char *path)
{
	struct buf b;
	char chunk[4096];
	size_t n;
	FILE *f;

	buf_init(&b, 1 << 20);
	f = fopen(path, "r");
	if (f) {
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			cr_assert_eq(buf_add(&b, chunk, n), 0);
		fclose(f);
	}
	return buf_detach(&b, NULL);
}

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/*
 * What a test left behind if an assertion ended it early: the process group
 * of the script it started and its scratch directory (see kill_started_group).
 */
static pid_t started_group;
static char scratch_dir[64];

/*
 * A scratch directory with an empty hosts file; path is the script's PATH
 * (NULL: the stub getent first, then the system's directories).
 */
static void ep_init_path(struct ep *e, const char *path)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->dir, sizeof(e->dir), "/tmp/cadre-ep-XXXXXX");
	cr_assert_not_null(mkdtemp(e->dir));
	snprintf(scratch_dir, sizeof(scratch_dir), "%s", e->dir);
	snprintf(e->hosts, sizeof(e->hosts), "%s/hosts", e->dir);
	snprintf(e->out, sizeof(e->out), "%s/stdout", e->dir);
	snprintf(e->err, sizeof(e->err), "%s/stderr", e->dir);
	snprintf(e->termlog, sizeof(e->termlog), "%s/termination-log", e->dir);
	snprintf(e->stubs, sizeof(e->stubs), "%s/stubs", e->dir);
	write_file(e->hosts, "", "w");
	write_file(e->termlog, "", "w");
	if (path) {
		ep_setenv(e, "PATH", path);
	} else {
		char def[256];

		snprintf(def, sizeof(def), "%s:%s:/usr/bin:/bin", e->stubs, STUB_BIN);
		ep_setenv(e, "PATH", def);
	}
	ep_setenv(e, "HOME", e->dir);
	/* The entrypoint keeps its working files (fifos, marks) in TMPDIR/.cadre when no
	 * CADRE_BIN_DIR is set: a pod's alone, and each test's alone as tests run at once. */
	ep_setenv(e, "TMPDIR", e->dir);
	ep_setenv(e, "CADRE_TEST_HOSTS", e->hosts);
	ep_setenv(e, ENTRYPOINT_ENV_TERMINATION_LOG, e->termlog);
}

static void ep_init(struct ep *e)
{
	ep_init_path(e, NULL);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/*
 * What a test left behind if an assertion ended it early: the process group
 * of the script it started and its scratch directory. The fixture's fini
 * kills the one and removes the other, so a failure leaves no user loop
 * running and nothing in /tmp.
 */

static void remove_scratch(void)
{
	if (scratch_dir[0])
		nftw(scratch_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	scratch_dir[0] = '\0';
}

static void ep_release(struct ep *e)
{
	for (size_t i = 0; i < e->n_env; i++)
		free(e->env[i]);
	nftw(e->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	if (!strcmp(e->dir, scratch_dir))
		scratch_dir[0] = '\0';
}

/*
 * The fixture's fini: kill what is left of the script's process group and
 * remove the scratch directory, so a failed assertion leaves no user loop
 * running and nothing in /tmp.
 */
static void kill_started_group(void)
{
	if (started_group > 0)
		kill(-started_group, SIGKILL);
	started_group = 0;
	remove_scratch();
}

/*
 * Start the script as a pod does, in a process group of its own as a pod's
 * PID 1 is: the text written read-only into the scratch directory, as the
 * ConfigMap's key is mounted, and sourced by `shell -c ". <file>"`, the
 * command of entrypoint_command() with the scratch path for ENTRYPOINT_PATH.
 */
static void ep_start(struct ep *e, const char *shell)
{
	char script[128], command[160];
	pid_t pid;

	snprintf(script, sizeof(script), "%s/" ENTRYPOINT_KEY, e->dir);
	snprintf(command, sizeof(command), ". %s", script);
	unlink(script);  /* a second run of the same scratch directory */
	write_file(script, entrypoint_script(), "w");
	cr_assert_eq(chmod(script, 0444), 0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		char *argv[] = { (char *)shell, "-c", command, NULL };
		int in = open("/dev/null", O_RDONLY);
		int out = open(e->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int err = open(e->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (setpgid(0, 0) != 0 || in < 0 || out < 0 || err < 0 ||
		    dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(250);
		/* The runner's own pipes must not live on in the script's processes. */
		closefrom(3);
		execve(shell, argv, e->env);
		_exit(251);
	}
	e->pid = pid;
	started_group = pid;
	/* Set it here too, so kill_started_group cannot race the child's setpgid. */
	setpgid(pid, pid);
}

/* Wait for the script and return its exit code (128 + n for a signal). */
static int ep_wait(struct ep *e)
{
	int status;

	cr_assert_eq(waitpid(e->pid, &status, 0), e->pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static int ep_run(struct ep *e, const char *shell)
{
	ep_start(e, shell);
	return ep_wait(e);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Wait up to timeout_ms for path to contain needle. */
static bool wait_for_text(const char *path, const char *needle, long timeout_ms)
{
	for (long waited = 0; waited < timeout_ms; waited += 50) {
		char *text = read_file(path);
		bool found = strstr(text, needle) != NULL;

		free(text);
		if (found)
			return true;
		sleep_ms(50);
	}
	return false;
}

static void assert_file_eq(const char *path, const char *want)
{
	char *got = read_file(path);

	cr_assert_str_eq(got, want, "%s:\n%s\nwanted:\n%s", path, got, want);
	free(got);
}

static void assert_file_has(const char *path, const char *needle)
{
	char *got = read_file(path);

	cr_assert_not_null(strstr(got, needle), "%s lacks \"%s\":\n%s", path, needle, got);
	free(got);
}

static void assert_file_lacks(const char *path, const char *needle)
{
	char *got = read_file(path);

	cr_assert_null(strstr(got, needle), "%s has \"%s\":\n%s", path, needle, got);
	free(got);
}

/*
 * Each behaviour once per shell, so a failure names the shell. The timeout
 * turns a script that hangs into a failure; it is generous because valgrind
 * runs every shell and tool the script starts.
 */
#define BOTH_SHELLS(name)                                                   \
	static void name(const char *shell);                                \
	Test(entrypoint, name##_under_bash, .fini = kill_started_group,     \
	     .timeout = 120) { name("/bin/bash"); }                         \
	Test(entrypoint, name##_under_sh, .fini = kill_started_group,       \
	     .timeout = 120) { name("/bin/sh"); }                           \
	static void name(const char *shell)

BOTH_SHELLS(exports_peer_ips_in_rank_order)
{
	struct ep e;

	ep_init(&e);
	/* The hosts file lists the peers out of order; rank order must win. */
	write_file(e.hosts,
		   "job-2.job.ns.svc 10.4.0.30\n"
		   "job-0.job.ns.svc 10.4.0.10\n"
		   "job-1.job.ns.svc 10.4.0.20\n", "w");
	ep_peers(&e, 3);
	ep_setenv(&e, ENTRYPOINT_ENV_TIMEOUT, "30");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "printf '[%s]' \"$SKYPILOT_NODE_IPS\"");
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "[10.4.0.10\n10.4.0.20\n10.4.0.30]");
	assert_file_has(e.err, "cadre: all 3 peers resolved");
	ep_release(&e);
}

/* User code sees the names the script derived, as it saw the list before. */
BOTH_SHELLS(exports_the_peers_names_in_rank_order)
{
	struct ep e;

	ep_init(&e);
	write_file(e.hosts,
		   "job-0.job.ns.svc 10.4.0.10\n"
		   "job-1.job.ns.svc 10.4.0.20\n", "w");
	ep_peers(&e, 2);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "printf '[%s]' \"$CADRE_PEERS\"");
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "[job-0.job.ns.svc job-1.job.ns.svc]");
	ep_release(&e);
}

BOTH_SHELLS(refuses_a_node_count_that_is_not_a_number)
{
	struct ep e;

	ep_init(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_JOB_NAME, "job");
	ep_setenv(&e, ENTRYPOINT_ENV_NNODES, "two");
	ep_setenv(&e, ENTRYPOINT_ENV_PEER_DOMAIN, "job.ns.svc");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	cr_assert_eq(ep_run(&e, shell), ENTRYPOINT_EXIT_CONFIG);
	assert_file_eq(e.out, "");
	assert_file_has(e.termlog, "NNODES must be the number of nodes, not 'two'");
	ep_release(&e);
}

BOTH_SHELLS(times_out_naming_the_peers_that_never_resolved)
{
	char marker[160];
	size_t lines = 0;
	char *err;
	struct ep e;

	ep_init(&e);
	snprintf(marker, sizeof(marker), "%s/run-started", e.dir);
	write_file(e.hosts, "job-0.job.ns.svc 10.4.0.10\n", "w");
	ep_peers(&e, 3);
	ep_setenv(&e, ENTRYPOINT_ENV_TIMEOUT, "2");
	ep_setenv(&e, "MARKER", marker);
	ep_setenv(&e, ENTRYPOINT_ENV_SETUP, "touch \"$MARKER\"");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "touch \"$MARKER\"");
	cr_assert_eq(ep_run(&e, shell), ENTRYPOINT_EXIT_PEERS_TIMEOUT);
	cr_assert_not(file_exists(marker), "setup or run started without the peers");
	assert_file_has(e.err, "waiting for 2 of 3 peers to resolve");
	assert_file_has(e.err, "peers to resolve: job-1.job.ns.svc job-2.job.ns.svc\n");
	assert_file_has(e.termlog, "timed out after");
	assert_file_has(e.termlog, "job-1.job.ns.svc job-2.job.ns.svc");
	assert_file_lacks(e.termlog, "job-0");
	/* Progress is a line now and then, not one per poll. */
	err = read_file(e.err);
	for (const char *p = err; *p; p++)
		lines += *p == '\n';
	cr_assert_eq(lines, 2, "expected one progress line, then the timeout:\n%s", err);
	free(err);
	ep_release(&e);
}

BOTH_SHELLS(waits_for_a_peer_that_resolves_late)
{
	struct ep e;

	ep_init(&e);
	write_file(e.hosts, "job-0.job.ns.svc 10.4.0.10\n", "w");
	ep_peers(&e, 2);
	ep_setenv(&e, ENTRYPOINT_ENV_TIMEOUT, "60");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "printf '%s' \"$SKYPILOT_NODE_IPS\"");
	ep_start(&e, shell);
	cr_assert(wait_for_text(e.err, "waiting for 1 of 2 peers", 30000));
	write_file(e.hosts, "job-1.job.ns.svc 10.4.0.20\n", "a");
	cr_assert_eq(ep_wait(&e), 0);
	assert_file_eq(e.out, "10.4.0.10\n10.4.0.20");
	ep_release(&e);
}

BOTH_SHELLS(failed_setup_fails_the_pod_with_its_code_and_run_never_starts)
{
	struct ep e;

	ep_init(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_SETUP, "echo setup-ran\nexit 7");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	cr_assert_eq(ep_run(&e, shell), 7);
	assert_file_eq(e.out, "setup-ran\n");
	assert_file_has(e.err, "cadre: setup failed with exit code 7; run was not started");
	assert_file_has(e.termlog, "setup failed with exit code 7");
	ep_release(&e);
}

BOTH_SHELLS(runs_setup_then_run_and_returns_runs_exit_code)
{
	struct ep e;

	ep_init(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_SETUP, "echo setup");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run\nexit 42");
	cr_assert_eq(ep_run(&e, shell), 42);
	assert_file_eq(e.out, "setup\nrun\n");
	/* The user's own failure is not cadre's to explain. */
	assert_file_eq(e.termlog, "");
	ep_release(&e);
}

BOTH_SHELLS(run_succeeding_is_exit_zero_without_setup)
{
	struct ep e;

	ep_init(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "true");
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "");
	ep_release(&e);
}

BOTH_SHELLS(setup_and_run_execute_in_the_workdir)
{
	char workdir[160];
	char want[400];
	struct ep e;

	ep_init(&e);
	snprintf(workdir, sizeof(workdir), "%s/work dir", e.dir);
	cr_assert_eq(mkdir(workdir, 0755), 0);
	ep_setenv(&e, ENTRYPOINT_ENV_WORKDIR, workdir);
	ep_setenv(&e, ENTRYPOINT_ENV_SETUP, "pwd");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "pwd");
	cr_assert_eq(ep_run(&e, shell), 0);
	snprintf(want, sizeof(want), "%s\n%s\n", workdir, workdir);
	assert_file_eq(e.out, want);
	ep_release(&e);
}

BOTH_SHELLS(missing_workdir_fails_clearly_before_waiting_for_peers)
{
	struct ep e;

	ep_init(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_WORKDIR, "/nonexistent/workspace");
	ep_peers(&e, 1);
	ep_setenv(&e, ENTRYPOINT_ENV_TIMEOUT, "600");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	cr_assert_eq(ep_run(&e, shell), ENTRYPOINT_EXIT_WORKDIR);
	assert_file_eq(e.out, "");
	assert_file_has(e.err, "workdir /nonexistent/workspace does not exist");
	assert_file_has(e.termlog, "workdir /nonexistent/workspace does not exist");
	ep_release(&e);
}

/*
 * Quotes, $, backticks, backslashes and newlines reach the user shell as
 * written: the quoted heredoc prints them untouched, and the expansions
 * outside it happen exactly once.
 */
BOTH_SHELLS(setup_and_run_text_is_run_verbatim)
{
	static const char text[] =
		"cat <<'EOF'\n"
		"single ' double \" dollar $HOME ${X:-y} backtick `id` backslash \\ end\n"
		"EOF\n"
		"echo \"$((6 * 7)) `echo tick` $(echo sub) 'kept'\"\n";
	static const char once[] =
		"single ' double \" dollar $HOME ${X:-y} backtick `id` backslash \\ end\n"
		"42 tick sub 'kept'\n";
	struct buf want;
	struct ep e;

	ep_init(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_SETUP, text);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, text);
	cr_assert_eq(ep_run(&e, shell), 0);
	buf_init(&want, 4096);
	buf_adds(&want, once);
	buf_adds(&want, once);
	assert_file_eq(e.out, buf_str(&want));
	buf_release(&want);
	ep_release(&e);
}

BOTH_SHELLS(user_code_runs_under_bash_when_the_image_has_it)
{
	struct ep e;

	ep_init(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo \"${BASH_VERSION:+bash}\"");
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "bash\n");
	ep_release(&e);
}

/*
 * An image without bash: PATH is a directory of our own that holds only sh
 * and getent, the two programs the script needs when every peer resolves.
 */
BOTH_SHELLS(user_code_falls_back_to_sh_without_bash)
{
	char bin[] = "/tmp/cadre-ep-bin-XXXXXX";
	char link[200];
	struct ep e;

	cr_assert_not_null(mkdtemp(bin));
	snprintf(link, sizeof(link), "%s/sh", bin);
	cr_assert_eq(symlink("/bin/sh", link), 0);
	snprintf(link, sizeof(link), "%s/getent", bin);
	cr_assert_eq(symlink(STUB_BIN "/getent", link), 0);
	ep_init_path(&e, bin);
	write_file(e.hosts, "job-0.job.ns.svc 10.4.0.10\n", "w");
	ep_peers(&e, 1);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo \"${BASH_VERSION:-no bash}\" \"$SKYPILOT_NODE_IPS\"");
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "no bash 10.4.0.10\n");
	ep_release(&e);
	nftw(bin, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/*
 * Under valgrind every shell is traced too, and a bash that exits from a
 * trap handler reports its own leaks and valgrind's exit code instead of
 * the script's: the signal tests say nothing there, so they skip.
 */
static void skip_under_valgrind(void)
{
	if (RUNNING_ON_VALGRIND)
		cr_skip_test("signals are tested without valgrind");
}

BOTH_SHELLS(sigterm_reaches_the_running_user_code)
{
	struct ep e;

	skip_under_valgrind();
	ep_init(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN,
		  "trap 'echo run-got-term; exit 42' TERM\n"
		  "echo ready\n"
		  "while :; do sleep 0.1; done");
	ep_start(&e, shell);
	cr_assert(wait_for_text(e.out, "ready", 30000));
	cr_assert_eq(kill(e.pid, SIGTERM), 0);
	cr_assert_eq(ep_wait(&e), 42);
	assert_file_eq(e.out, "ready\nrun-got-term\n");
	ep_release(&e);
}

BOTH_SHELLS(sigterm_during_setup_stops_before_run)
{
	struct ep e;

	skip_under_valgrind();
	ep_init(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_SETUP,
		  "trap 'echo setup-got-term; exit 0' TERM\n"
		  "echo ready\n"
		  "while :; do sleep 0.1; done");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	ep_start(&e, shell);
	cr_assert(wait_for_text(e.out, "ready", 30000));
	cr_assert_eq(kill(e.pid, SIGTERM), 0);
	cr_assert_eq(ep_wait(&e), 143);
	assert_file_eq(e.out, "ready\nsetup-got-term\n");
	assert_file_has(e.err, "stopped during setup; run was not started");
	ep_release(&e);
}

BOTH_SHELLS(refuses_to_start_without_run)
{
	struct ep e;

	ep_init(&e);
	cr_assert_eq(ep_run(&e, shell), ENTRYPOINT_EXIT_CONFIG);
	assert_file_has(e.err, "CADRE_RUN is empty");
	ep_release(&e);
}

BOTH_SHELLS(refuses_a_timeout_that_is_not_a_number)
{
	struct ep e;

	ep_init(&e);
	ep_peers(&e, 1);
	ep_setenv(&e, ENTRYPOINT_ENV_TIMEOUT, "10m");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	cr_assert_eq(ep_run(&e, shell), ENTRYPOINT_EXIT_CONFIG);
	assert_file_has(e.err, "CADRE_GANG_TIMEOUT_SECONDS must be a whole number");
	assert_file_eq(e.out, "");
	ep_release(&e);
}

Test(entrypoint, embedded_script_matches_controller_entrypoint_sh)
{
	char *file = read_file(CADRE_SOURCE_DIR "/controller/build/entrypoint.sh");

	cr_assert_gt(strlen(file), 0);
	cr_assert_str_eq(entrypoint_script(), file,
			 "controller/build/entrypoint.c is out of date: regenerate its literal "
			 "from controller/build/entrypoint.sh (the command is in entrypoint.c)");
	free(file);
}

/* The pod carries one short line; the script comes from the mounted ConfigMap. */
Test(entrypoint, command_sources_the_mounted_script_under_bin_sh)
{
	json_t *cmd = entrypoint_command();

	cr_assert_not_null(cmd);
	cr_assert_eq(json_array_size(cmd), 3);
	cr_assert_str_eq(json_string_value(json_array_get(cmd, 0)), "/bin/sh");
	cr_assert_str_eq(json_string_value(json_array_get(cmd, 1)), "-c");
	cr_assert_str_eq(json_string_value(json_array_get(cmd, 2)),
			 ". /cadre/entrypoint/entrypoint.sh");
	cr_assert_str_eq(ENTRYPOINT_PATH, "/cadre/entrypoint/entrypoint.sh");
	json_decref(cmd);
}

/* ---- Slurm batch scripts (docs/design.md 2.4) ---- */

/*
 * The seed's 2-node H100:8 job with run = text and tasksPerNode = tasks,
 * parsed and validated as the controller would see it.
 */
static void slurm_job(const char *run, int tasks, struct trainingjob *tj)
{
	struct field_errors errs;
	struct buf msg;
	json_t *obj;

	obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:i, s:i, s:{s:s}, s:s, s:s},"
			" s:{s:s, s:s}}",
			"apiVersion", "cadre.dev/v1alpha1", "kind", "TrainingJob",
			"metadata", "name", "llama-pretrain", "namespace", "research",
			"uid", "3f2c6a0e-8d1b-4c57-9a4e-1b2d3c4e5f60",
			"spec", "numNodes", 2, "tasksPerNode", tasks,
			"resources", "accelerators", "H100:8",
			"image", "nvcr.io/nvidia/pytorch:24.05-py3", "run", run,
			"status", "jobId", "482913307",
			"taskId", "cadre-2026-03-02-09-15-00_llama-pretrain_482913307");
	cr_assert_not_null(obj);
	buf_init(&msg, 4096);
	field_errors_init(&errs);
	tj_parse(obj, tj, &errs);
	tj_validate(tj, &errs);
	field_errors_join(&errs, &msg);
	cr_assert_eq(field_errors_count(&errs), 0, "%s", buf_str(&msg));
	field_errors_release(&errs);
	buf_release(&msg);
	json_decref(obj);
}

/*
 * The environment build_pod gives rank's pod, set on the script, with the
 * bin emptyDir replaced by a directory of the test's and the peers
 * resolving through the stub getent.
 */
static void ep_pod_env(struct ep *e, const struct trainingjob *tj, int rank)
{
	static const char *const values[] = { "NVIDIA-H100-80GB-HBM3" };
	struct build_opts opts = {
		.mode = GANG_BUILTIN, .label_values = values, .n_label_values = 1,
	};
	char bin[160];
	struct buf err;
	json_t *pod = NULL, *env, *var;
	size_t i;

	buf_init(&err, 4096);
	cr_assert_eq(build_pod(tj, rank, 0, &opts, &pod, &err), 0, "%s", buf_str(&err));
	buf_release(&err);
	snprintf(bin, sizeof(bin), "%s/cadre-bin", e->dir);
	cr_assert_eq(mkdir(bin, 0755), 0);
	env = pod_environment(tj, &opts, pod);
	json_array_foreach(env, i, var) {
		const char *name = json_string_value(json_object_get(var, "name"));
		const char *value = json_string_value(json_object_get(var, "value"));

		if (!value)
			continue;
		ep_setenv(e, name, strcmp(name, ENTRYPOINT_ENV_BIN_DIR) ? value : bin);
	}
	json_decref(env);
	json_decref(pod);
	write_file(e->hosts,
		   "llama-pretrain-0.llama-pretrain.research.svc 10.4.0.10\n"
		   "llama-pretrain-1.llama-pretrain.research.svc 10.4.0.11\n", "w");
}

/* An executable of the test's in e->stubs, which comes first on PATH. */
static void ep_stub(struct ep *e, const char *name, const char *text)
{
	char path[256];

	mkdir(e->stubs, 0755);
	snprintf(path, sizeof(path), "%s/%s", e->stubs, name);
	write_file(path, text, "w");
	cr_assert_eq(chmod(path, 0755), 0);
}

/*
 * The seed's train.sh, byte for byte, as the job's run on each rank: module
 * load and a virtualenv that is not there do not stop it, srun runs
 * torchrun once, and the rendezvous is rank 0's short host name.
 */
BOTH_SHELLS(the_seeds_train_sh_runs_unchanged_on_every_rank)
{
	char *train = read_file(CADRE_SOURCE_DIR "/unit/testdata/convert/train.sh");
	struct trainingjob tj;

	cr_assert_gt(strlen(train), 0);
	slurm_job(train, 1, &tj);
	for (int rank = 0; rank < 2; rank++) {
		struct ep e;

		ep_init(&e);
		ep_pod_env(&e, &tj, rank);
		ep_stub(&e, "torchrun", "#!/bin/sh\nprintf '%s' \"torchrun\"\n"
			"printf ' %s' \"$@\"\nprintf '\\n'\n");
		cr_assert_eq(ep_run(&e, shell), 0, "rank %d", rank);
		assert_file_eq(e.out, "torchrun --nnodes=2 --nproc_per_node=8 --rdzv_id=482913307 "
			       "--rdzv_backend=c10d --rdzv_endpoint=llama-pretrain-0:29500 "
			       "train.py --batch-size 32\n");
		assert_file_has(e.err, "\"module load cuda/12.4\" does nothing here: "
				"the image provides the software");
		assert_file_has(e.err, "/shared/envs/torch/bin/activate: No such file");
		ep_release(&e);
	}
	tj_release(&tj);
	free(train);
}

/*
 * The seed's task.yaml as cadre launch converts it, with the ids the
 * controller gives: its setup and run on each rank, through the same
 * entrypoint. Its torchrun line reads SKYPILOT_NODE_IPS, so the master
 * address is rank 0's IP.
 */
static void sky_job(struct trainingjob *tj)
{
	char *task = read_file(CADRE_SOURCE_DIR "/unit/testdata/convert/task.yaml");
	struct convert_result r;

	convert_result_init(&r);
	cr_assert_eq(convert_sky_task(&(struct convert_input){ .text = task, .len = strlen(task),
			.image = "nvcr.io/nvidia/pytorch:24.05-py3" }, &r), 0, "%s",
		     r.error.message ? r.error.message : "");
	*tj = r.tj;
	tj_init(&r.tj);
	convert_result_release(&r);
	free(task);
	free(tj->meta.namespace);
	free(tj->meta.uid);
	free(tj->status.job_id);
	free(tj->status.task_id);
	tj->meta.namespace = strdup("research");
	tj->meta.uid = strdup("3f2c6a0e-8d1b-4c57-9a4e-1b2d3c4e5f60");
	tj->status.job_id = strdup("482913307");
	tj->status.task_id = strdup("cadre-2026-03-02-09-15-00_llama-pretrain_482913307");
	cr_assert(tj->meta.namespace && tj->meta.uid && tj->status.job_id && tj->status.task_id);
}

BOTH_SHELLS(the_seeds_skypilot_task_runs_unchanged_on_every_rank)
{
	struct trainingjob tj;

	sky_job(&tj);
	cr_assert_str_eq(tj.meta.name, "llama-pretrain");
	for (int rank = 0; rank < 2; rank++) {
		char want[256];
		struct ep e;

		ep_init(&e);
		ep_pod_env(&e, &tj, rank);
		ep_stub(&e, "pip", "#!/bin/sh\necho \"pip $*\" >&2\n");
		ep_stub(&e, "torchrun", "#!/bin/sh\nprintf '%s' \"torchrun\"\n"
			"printf ' %s' \"$@\"\nprintf '\\n'\n");
		cr_assert_eq(ep_run(&e, shell), 0, "rank %d", rank);
		snprintf(want, sizeof(want), "torchrun --nnodes=2 --nproc_per_node=8 --node_rank=%d "
			 "--master_addr=10.4.0.10 --master_port=29500 train.py --batch-size 32\n",
			 rank);
		assert_file_eq(e.out, want);
		assert_file_has(e.err, "pip install -r requirements.txt");
		ep_release(&e);
	}
	tj_release(&tj);
}

/* tasksPerNode 4: four copies on each node, PROCID 4 * node + local. */
BOTH_SHELLS(srun_starts_tasks_per_node_copies_with_their_own_ranks)
{
	static const char run[] =
		"srun sh -c 'echo \"$SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID $SLURM_STEP_ID "
		"$SLURM_STEP_NUM_TASKS $SLURM_STEP_NUM_NODES $SLURM_STEP_NODELIST "
		"$SLURM_STEP_TASKS_PER_NODE $SLURM_NTASKS\"' | sort\n"
		"srun true\n"
		"srun sh -c 'echo step $SLURM_STEP_ID' | sort -u\n"
		"echo \"batch $SLURM_PROCID $SLURM_LOCALID\"\n";
	static const char *const want[] = {
		"0 0 0 0 8 2 llama-pretrain-[0-1] 4(x2) 8\n"
		"1 1 0 0 8 2 llama-pretrain-[0-1] 4(x2) 8\n"
		"2 2 0 0 8 2 llama-pretrain-[0-1] 4(x2) 8\n"
		"3 3 0 0 8 2 llama-pretrain-[0-1] 4(x2) 8\n"
		"step 2\n"
		"batch 0 0\n",
		"4 0 1 0 8 2 llama-pretrain-[0-1] 4(x2) 8\n"
		"5 1 1 0 8 2 llama-pretrain-[0-1] 4(x2) 8\n"
		"6 2 1 0 8 2 llama-pretrain-[0-1] 4(x2) 8\n"
		"7 3 1 0 8 2 llama-pretrain-[0-1] 4(x2) 8\n"
		"step 2\n"
		"batch 1 0\n",
	};
	struct trainingjob tj;

	slurm_job(run, 4, &tj);
	for (int rank = 0; rank < 2; rank++) {
		struct ep e;

		ep_init(&e);
		ep_pod_env(&e, &tj, rank);
		cr_assert_eq(ep_run(&e, shell), 0, "rank %d", rank);
		assert_file_eq(e.out, want[rank]);
		ep_release(&e);
	}
	tj_release(&tj);
}

/* -n, -N and --ntasks-per-node lay a step out as Slurm's block distribution does. */
BOTH_SHELLS(srun_options_shape_the_step)
{
	static const char run[] =
		"srun -n 3 sh -c 'echo \"n3 $SLURM_PROCID/$SLURM_STEP_TASKS_PER_NODE\"' | sort\n"
		"srun -N1 --ntasks-per-node=2 sh -c 'echo \"N1 $SLURM_PROCID $SLURM_STEP_NODELIST\"'"
		" | sort\n"
		"srun --ntasks-per-node 2 --label --mpi=pmix --cpu-bind=cores --gpus-per-task=1 "
		"--export=ALL,EXTRA=yes sh -c 'echo \"$EXTRA\"' | sort\n"
		"srun -N 3 true; echo \"too many nodes: $?\"\n";
	static const char *const want[] = {
		"n3 0/2,1\nn3 1/2,1\n"
		"N1 0 llama-pretrain-0\nN1 1 llama-pretrain-0\n"
		"0: yes\n1: yes\n"
		"too many nodes: 1\n",
		"n3 2/2,1\n"
		"2: yes\n3: yes\n"
		"too many nodes: 1\n",
	};
	struct trainingjob tj;

	slurm_job(run, 1, &tj);
	for (int rank = 0; rank < 2; rank++) {
		struct ep e;

		ep_init(&e);
		ep_pod_env(&e, &tj, rank);
		cr_assert_eq(ep_run(&e, shell), 0, "rank %d", rank);
		assert_file_eq(e.out, want[rank]);
		assert_file_has(e.err, "ignoring --mpi=pmix");
		assert_file_has(e.err, "ignoring --gpus-per-task=1");
		ep_release(&e);
	}
	tj_release(&tj);
}

BOTH_SHELLS(srun_returns_the_worst_exit_code_of_its_tasks)
{
	static const char run[] =
		"srun --ntasks-per-node=3 sh -c 'exit $((SLURM_LOCALID * 2 + 1))'\n"
		"echo \"worst $?\"\n"
		"srun --ntasks-per-node=2 sh -c 'exit 0'\n"
		"echo \"clean $?\"\n"
		/* -K: the first failure stops the task that would run forever. */
		"srun -K --ntasks-per-node=2 sh -c 'if [ $SLURM_LOCALID = 1 ]; then"
		" until [ -e \"$READY\" ]; do sleep 0.1; done; exit 3; fi;"
		" trap \"exit 9\" TERM; touch \"$READY\"; while :; do sleep 0.1; done'\n"
		"echo \"kill-on-bad-exit $?\"\n";
	struct trainingjob tj;
	struct ep e;

	char ready[160];

	slurm_job(run, 1, &tj);
	ep_init(&e);
	ep_pod_env(&e, &tj, 0);
	snprintf(ready, sizeof(ready), "%s/task-0-ready", e.dir);
	ep_setenv(&e, "READY", ready);
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "worst 5\nclean 0\nkill-on-bad-exit 9\n");
	assert_file_has(e.err, "srun: error: task 2: exited with exit code 5");
	assert_file_has(e.err, "stopping the others (--kill-on-bad-exit)");
	ep_release(&e);
	tj_release(&tj);
}

/* SIGTERM to srun reaches every task; srun then returns their worst code. */
BOTH_SHELLS(srun_forwards_sigterm_to_its_tasks)
{
	static const char run[] =
		"srun --ntasks-per-node=2 sh -c 'trap \"echo task $SLURM_PROCID stopped; "
		"exit $((40 + SLURM_PROCID))\" TERM; echo ready; while :; do sleep 0.1; done' &\n"
		"echo $! >\"$SRUN_PID\"\n"
		"wait $!\n"
		"echo \"srun $?\"\n";
	char pidfile[160], *text;
	struct trainingjob tj;
	struct ep e;
	long pid;

	skip_under_valgrind();
	slurm_job(run, 1, &tj);
	ep_init(&e);
	ep_pod_env(&e, &tj, 0);
	snprintf(pidfile, sizeof(pidfile), "%s/srun.pid", e.dir);
	ep_setenv(&e, "SRUN_PID", pidfile);
	ep_start(&e, shell);
	cr_assert(wait_for_text(e.out, "ready\nready\n", 30000));
	/* The tasks can be ready before the shell that started srun has written its pid. */
	cr_assert(wait_for_text(pidfile, "\n", 30000));
	text = read_file(pidfile);
	pid = strtol(text, NULL, 10);
	free(text);
	cr_assert_gt(pid, 1);
	cr_assert_eq(kill((pid_t)pid, SIGTERM), 0);
	cr_assert_eq(ep_wait(&e), 0);
	assert_file_has(e.out, "task 0 stopped\n");
	assert_file_has(e.out, "task 1 stopped\n");
	assert_file_has(e.out, "srun 41\n");
	ep_release(&e);
	tj_release(&tj);
}

/*
 * A USR1 srun did not get from a task of its own (--kill-on-bad-exit's
 * word) stops nothing: the task runs to its end and srun returns its code.
 * The task sends it to its srun (its parent's parent) as anyone could.
 */
BOTH_SHELLS(srun_takes_a_usr1_from_outside_for_no_failure)
{
	static const char run[] =
		"srun sh -c 'read -r line </proc/$PPID/stat; set -- ${line##*) };"
		" kill -USR1 \"$2\"; sleep 1; echo task-done'\n"
		"echo \"srun $?\"\n";
	struct trainingjob tj;
	struct ep e;

	skip_under_valgrind();
	slurm_job(run, 1, &tj);
	ep_init(&e);
	ep_pod_env(&e, &tj, 0);
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "task-done\nsrun 0\n");
	assert_file_lacks(e.err, "a task failed");
	ep_release(&e);
	tj_release(&tj);
}

/*
 * cadre-signal, as `cadre scancel --signal=USR1` runs it in the container
 * while the run is in its srun step: the step's task gets USR1, and the
 * batch script's shell (no trap of its own: USR1 would kill it) and srun
 * are left alone, as Slurm's scancel --signal leaves the batch shell, so the
 * script goes on after the step. The task's own `sleep` gets it too.
 */
BOTH_SHELLS(a_signal_for_the_program_reaches_the_srun_tasks_and_spares_the_batch_shell)
{
	static const char run[] =
		"srun sh -c 'trap \"echo task-got-usr1\" USR1; echo ready; i=0;"
		" while [ $i -lt 40 ]; do sleep 0.1; i=$((i + 1)); done; echo task-done'\n"
		"echo \"batch goes on after srun $?\"\n";
	char cmd[512];
	struct trainingjob tj;
	struct ep e;

	skip_under_valgrind();
	slurm_job(run, 1, &tj);
	ep_init(&e);
	ep_pod_env(&e, &tj, 0);
	ep_start(&e, shell);
	cr_assert(wait_for_text(e.out, "ready\n", 30000));
	snprintf(cmd, sizeof(cmd), "CADRE_BIN_DIR='%s/cadre-bin' /bin/sh -c "
		 "'exec \"${CADRE_BIN_DIR:-/cadre/bin}/cadre-signal\" USR1'", e.dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(ep_wait(&e), 0);
	assert_file_eq(e.out, "ready\ntask-got-usr1\ntask-done\nbatch goes on after srun 0\n");
	assert_file_lacks(e.err, "a task failed");
	ep_release(&e);
	tj_release(&tj);
}

/* Append `cmd 'arg'` to run: arg in single quotes, none of which it holds. */
static void add_quoted(struct buf *run, const char *cmd, const char *arg, const char *tail)
{
	cr_assert_null(strchr(arg, '\''));
	cr_assert_eq(buf_addf(run, "%s '%s'%s\n", cmd, arg, tail), 0);
}

/*
 * scontrol's hostlists are api/hostlist.c's on the cases tested there: the
 * script's answers are compared with the C functions' for each.
 */
BOTH_SHELLS(scontrol_hostnames_and_hostlist_agree_with_cadres_hostlist_rules)
{
	static const char *const compress[] = {
		"node01,node02,node05", "tux2,tux1,tux2", "linux0000,linux0001,linux0002",
		"node5", "llama-pretrain-0,llama-pretrain-1", "n3,n2,n1", "n1,n2,n4,n3",
		"a1,b1,a2", "n1,n01", "n01,n1", "n5,n06", "n9,n10,n11", "n09,n10", "n99,n100",
		"n010,n11", "gpu1a,gpu2a", "rack1-n1,rack1-n2,rack2-n1", "login,n1,n2",
		"n1,login,n2", "1,2,3", "n1234567890,n1234567891", "n123456789,n123456790",
	};
	static const char *const expand[] = {
		"node[01-02,05]", "tux[2,1-2]", "linux[0000-0002]", "n[8-10]", "n[08-10]",
		"n[001-10]", "n[1,01]", "node5", "[1-3]", "a1,b[1-2] c3\td4\ne5", ",,a1,,",
		"n[1-2],n[1-2]", "n[1-3].ib", "rack[1-2]-n[3-4]", "a[1-2]b[3-4]c",
	};
	static const char *const bad[] = {
		"n[1-2", "n1-2]", "n]", "n[]", "n[1,,2]", "n[,1]", "n[1,]", "n[-1]",
		"n[1-]", "n[a]", "n[1-2-3]", "n[3-1]", "n[[1]]", "n[1]]", "n[1 ,2]",
		"n[1-0x2]", "n[+1]", "n[1234567890]", "a,b[1", "[",
	};
	struct buf run, want;
	struct ep e;
	size_t i;

	buf_init(&run, 1 << 16);
	buf_init(&want, 1 << 16);
	for (i = 0; i < sizeof(compress) / sizeof(compress[0]); i++) {
		struct hostlist hl;
		const char *names[16];

		cr_assert_eq(hostlist_expand(compress[i], 16, &hl), 0);
		for (size_t j = 0; j < hl.len; j++)
			names[j] = hl.names[j];
		add_quoted(&run, "scontrol show hostlist", compress[i], "");
		cr_assert_eq(hostlist_compress(names, hl.len, &want), 0);
		buf_addc(&want, '\n');
		hostlist_release(&hl);
	}
	for (i = 0; i < sizeof(expand) / sizeof(expand[0]); i++) {
		struct hostlist hl;

		add_quoted(&run, "scontrol show hostnames", expand[i], "");
		cr_assert_eq(hostlist_expand(expand[i], 1 << 10, &hl), 0);
		for (size_t j = 0; j < hl.len; j++)
			buf_addf(&want, "%s\n", hl.names[j]);
		hostlist_release(&hl);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		add_quoted(&run, "scontrol show hostnames", bad[i],
			   " >/dev/null 2>&1 && echo accepted");
	/* Without a list, Slurm's scontrol reads SLURM_NODELIST. */
	buf_adds(&run, "scontrol show hostnames | head -n 1\n");
	buf_adds(&want, "llama-pretrain-0\n");
	buf_adds(&run, "scontrol show job 1 2>&1 >/dev/null | grep -c 'not available'\n");
	buf_adds(&want, "1\n");
	{
		struct trainingjob tj;

		slurm_job(buf_str(&run), 1, &tj);
		ep_init(&e);
		ep_pod_env(&e, &tj, 1);
		tj_release(&tj);
	}
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, buf_str(&want));
	ep_release(&e);
	buf_release(&run);
	buf_release(&want);
}

BOTH_SHELLS(module_commands_do_nothing_and_succeed)
{
	struct trainingjob tj;
	struct ep e;

	slurm_job("module purge && module load cuda/12.4 gcc && module list && module avail\n"
		  "echo \"still here $?\"\n", 1, &tj);
	ep_init(&e);
	ep_pod_env(&e, &tj, 0);
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "still here 0\n");
	assert_file_has(e.err, "\"module load cuda/12.4 gcc\" does nothing here");
	ep_release(&e);
	tj_release(&tj);
}

/* A bin directory that cannot be written is the pod's problem, said before any waiting. */
BOTH_SHELLS(an_unwritable_bin_directory_fails_before_waiting_for_peers)
{
	struct ep e;

	ep_init(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_BIN_DIR, "/nonexistent/cadre/bin");
	ep_peers(&e, 1);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	cr_assert_eq(ep_run(&e, shell), ENTRYPOINT_EXIT_CONFIG);
	assert_file_eq(e.out, "");
	assert_file_has(e.termlog, "cannot write srun, scontrol, sbcast and module into "
			"/nonexistent/cadre/bin");
	ep_release(&e);
}

/* ---- spec.hang: the watchdog; spec.signal: the notice (docs/pods.md) ---- */

/* A bin directory for srun, cadre-signal and program.pid, as the pod's emptyDir. */
static void ep_bin(struct ep *e)
{
	char bin[160];

	snprintf(bin, sizeof(bin), "%s/cadre-bin", e->dir);
	cr_assert_eq(mkdir(bin, 0755), 0);
	ep_setenv(e, ENTRYPOINT_ENV_BIN_DIR, bin);
}

/* Watch for hangs: startup and progress seconds, the heartbeat file in the scratch dir. */
static void ep_hang(struct ep *e, const char *startup, const char *progress)
{
	char hb[160];

	ep_bin(e);
	snprintf(hb, sizeof(hb), "%s/heartbeat", e->dir);
	ep_setenv(e, ENTRYPOINT_ENV_HEARTBEAT_FILE, hb);
	ep_setenv(e, ENTRYPOINT_ENV_HANG_STARTUP, startup);
	ep_setenv(e, ENTRYPOINT_ENV_HANG_PROGRESS, progress);
	ep_setenv(e, "SLURM_NODEID", "3");
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

BOTH_SHELLS(a_rank_silent_from_the_start_is_ended_as_hung_after_the_startup_time)
{
	struct ep e;
	double t0, took;

	skip_under_valgrind();
	ep_init(&e);
	ep_hang(&e, "2", "1");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "sleep 60");
	t0 = mono_s();
	cr_assert_eq(ep_run(&e, shell), ENTRYPOINT_EXIT_HUNG);
	took = mono_s() - t0;
	cr_assert(took >= 1.5 && took < 8, "ended after %.1fs; the startup time is 2s", took);
	assert_file_has(e.termlog, ENTRYPOINT_HUNG_MESSAGE "rank 3 no progress in the first 2s "
			"(spec.hang.startupSeconds)");
	ep_release(&e);
}

BOTH_SHELLS(a_rank_that_stops_writing_is_ended_as_hung_after_the_progress_time)
{
	char dumps[192];
	struct ep e;
	double t0, took;

	skip_under_valgrind();
	ep_init(&e);
	ep_hang(&e, "30", "2");
	snprintf(dumps, sizeof(dumps), "%s/ckpt/cadre-nccl/job/attempt-0", e.dir);
	ep_setenv(&e, ENTRYPOINT_ENV_NCCL_DUMP_DIR, dumps);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo step 1; sleep 60");
	t0 = mono_s();
	cr_assert_eq(ep_run(&e, shell), ENTRYPOINT_EXIT_HUNG);
	took = mono_s() - t0;
	cr_assert(took >= 1.5 && took < 10, "ended after %.1fs; progress time 2s, startup 30s",
		  took);
	assert_file_eq(e.out, "step 1\n");
	assert_file_has(e.termlog, ENTRYPOINT_HUNG_MESSAGE "rank 3 no progress for 2s "
			"(spec.hang.progressSeconds); NCCL flight recorder dumps, if PyTorch wrote "
			"any: ");
	assert_file_has(e.termlog, dumps);
	cr_assert(file_exists(dumps), "the dump directory is made");
	ep_release(&e);
}

BOTH_SHELLS(output_is_progress_and_passes_through_whole_on_both_streams)
{
	struct ep e;

	skip_under_valgrind();
	ep_init(&e);
	ep_hang(&e, "2", "1");
	/* Four seconds of work, a line every 0.3 s: longer than both limits. */
	ep_setenv(&e, ENTRYPOINT_ENV_RUN,
		  "i=0; while [ $i -lt 13 ]; do echo out $i; echo err $i >&2; sleep 0.3;"
		  " i=$((i + 1)); done; exit 7");
	cr_assert_eq(ep_run(&e, shell), 7, "a program making progress is never ended");
	assert_file_eq(e.out, "out 0\nout 1\nout 2\nout 3\nout 4\nout 5\nout 6\nout 7\nout 8\n"
		       "out 9\nout 10\nout 11\nout 12\n");
	assert_file_has(e.err, "err 0\nerr 1\n");
	assert_file_has(e.err, "err 12\n");
	assert_file_lacks(e.out, "err");
	assert_file_lacks(e.err, "hung");
	ep_release(&e);
}

BOTH_SHELLS(touching_the_heartbeat_file_is_progress_without_any_output)
{
	struct ep e;

	skip_under_valgrind();
	ep_init(&e);
	ep_hang(&e, "2", "2");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN,
		  "i=0; while [ $i -lt 10 ]; do touch \"$CADRE_HEARTBEAT_FILE\"; sleep 0.5;"
		  " i=$((i + 1)); done");
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "");
	assert_file_lacks(e.err, "hung");
	ep_release(&e);
}

/* The run records when a signal came (CLOCK_MONOTONIC via /proc/uptime) into the scratch dir. */
#define RECORD_SIGNALS(extra)                                                        \
	"rec() { read -r up idle </proc/uptime; echo \"$1 $up\" >>\"$HOME/signals\"; };" \
	" trap 'rec USR1' USR1; trap 'rec TERM; exit 0' TERM; echo ready;"             \
	" while :; do sleep 0.1; " extra " done"

/* The uptime-clock seconds of the first line of signals naming sig, or -1. */
static double signal_time(const struct ep *e, const char *sig)
{
	char path[192], *text, *at;
	double t = -1;

	snprintf(path, sizeof(path), "%s/signals", e->dir);
	text = read_file(path);
	at = strstr(text, sig);
	if (at)
		t = strtod(at + strlen(sig), NULL);
	free(text);
	return t;
}

static double uptime_s(void)
{
	char *text = read_file("/proc/uptime");
	double t = strtod(text, NULL);

	free(text);
	return t;
}

BOTH_SHELLS(the_signal_comes_its_seconds_before_the_deadline)
{
	char deadline[32];
	struct ep e;
	double t0, got;

	skip_under_valgrind();
	ep_init(&e);
	ep_bin(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_SIGNAL, "USR1");
	ep_setenv(&e, ENTRYPOINT_ENV_SIGNAL_BEFORE, "3");
	snprintf(deadline, sizeof(deadline), "%lld", (long long)time(NULL) + 5);
	ep_setenv(&e, ENTRYPOINT_ENV_DEADLINE, deadline);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, RECORD_SIGNALS("[ -s \"$HOME/signals\" ] && exit 0;"));
	t0 = uptime_s();
	cr_assert_eq(ep_run(&e, shell), 0);
	got = signal_time(&e, "USR1") - t0;
	/* The deadline is 5 s (in whole seconds of the wall clock) away, the notice 3 s before. */
	cr_assert(got >= 0.8 && got < 3.5, "USR1 came %.2fs after the start, want about 2s", got);
	assert_file_has(e.err, "sending SIGUSR1 to the program: activeDeadlineSeconds runs out "
			"in 3s");
	ep_release(&e);
}

BOTH_SHELLS(on_sigterm_the_signal_comes_first_and_sigterm_its_seconds_later)
{
	struct ep e;
	double sent, usr1, term;

	skip_under_valgrind();
	ep_init(&e);
	ep_bin(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_SIGNAL, "USR1");
	ep_setenv(&e, ENTRYPOINT_ENV_SIGNAL_BEFORE, "2");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, RECORD_SIGNALS(""));
	ep_start(&e, shell);
	cr_assert(wait_for_text(e.out, "ready", 30000));
	sent = uptime_s();
	cr_assert_eq(kill(e.pid, SIGTERM), 0);
	cr_assert_eq(ep_wait(&e), 0);
	usr1 = signal_time(&e, "USR1") - sent;
	term = signal_time(&e, "TERM") - sent;
	cr_assert(usr1 >= -0.05 && usr1 < 1, "USR1 came %.2fs after SIGTERM, want at once", usr1);
	cr_assert(term >= 1.5 && term < 4, "SIGTERM reached the program %.2fs after it came, "
		  "want 2s (secondsBefore)", term);
	ep_release(&e);
}

/*
 * sbatch --output (spec.output): the pattern expanded as sbatch expands it,
 * relative to the working directory, the program's stdout and stderr
 * appended there as well as to the container log.
 */
BOTH_SHELLS(output_goes_to_the_file_its_pattern_names_and_to_the_log)
{
	struct ep e;
	char path[256], dir[160];

	ep_init(&e);
	snprintf(dir, sizeof(dir), "%s/work", e.dir);
	cr_assert_eq(mkdir(dir, 0755), 0);
	ep_setenv(&e, ENTRYPOINT_ENV_WORKDIR, dir);
	ep_setenv(&e, "SLURM_JOB_NAME", "sweep");
	ep_setenv(&e, "SLURM_JOB_ID", "482913307");
	ep_setenv(&e, "SLURM_ARRAY_JOB_ID", "482913300");
	ep_setenv(&e, "SLURM_ARRAY_TASK_ID", "4");
	ep_setenv(&e, "SLURM_NODEID", "1");
	ep_setenv(&e, ENTRYPOINT_ENV_OUTPUT, "logs/%x-%j-%A_%a.%t.out%%");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo to-stdout; echo to-stderr >&2");
	cr_assert_eq(ep_run(&e, shell), 0);
	snprintf(path, sizeof(path), "%s/logs/sweep-482913307-482913300_4.1.out%%", dir);
	assert_file_has(path, "to-stdout\n");
	assert_file_has(path, "to-stderr\n");
	assert_file_has(e.out, "to-stdout\n");
	assert_file_has(e.err, "to-stderr\n");
	ep_release(&e);
}

BOTH_SHELLS(error_has_its_own_file_when_given_and_a_job_no_array_index)
{
	struct ep e;
	char out[256], err[256];

	ep_init(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_WORKDIR, e.dir);
	ep_setenv(&e, "SLURM_JOB_ID", "7");
	ep_setenv(&e, ENTRYPOINT_ENV_OUTPUT, "o-%j-%a");
	ep_setenv(&e, ENTRYPOINT_ENV_ERROR, "e-%j");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo out; echo err >&2; exit 3");
	cr_assert_eq(ep_run(&e, shell), 3, "the program's exit code is the pod's");
	/* Slurm writes 4294967294 (NO_VAL) for %a of a job that is no array. */
	snprintf(out, sizeof(out), "%s/o-7-4294967294", e.dir);
	snprintf(err, sizeof(err), "%s/e-7", e.dir);
	assert_file_eq(out, "out\n");
	assert_file_eq(err, "err\n");
	ep_release(&e);
}

/* A shell that traps the signal gets it: the run's own trap, as SkyPilot runs use. */
BOTH_SHELLS(a_signal_for_the_program_reaches_a_shell_that_traps_it)
{
	char cmd[512];
	struct ep e;

	skip_under_valgrind();
	ep_init(&e);
	ep_bin(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN,
		  "got=0; trap 'got=1' USR1; echo ready\n"
		  "while [ $got = 0 ]; do sleep 0.1; done\n"
		  "echo run-got-usr1");
	ep_start(&e, shell);
	cr_assert(wait_for_text(e.out, "ready\n", 30000));
	snprintf(cmd, sizeof(cmd), "'%s/cadre-bin/cadre-signal' USR1", e.dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(ep_wait(&e), 0);
	assert_file_eq(e.out, "ready\nrun-got-usr1\n");
	ep_release(&e);
}

/*
 * The seed's `$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)`:
 * head stops reading after a line, and scontrol, still writing, says
 * nothing about it (it said "invalid hostlist" of a good list, now and
 * then on two hosts, always on a list longer than a pipe holds).
 */
BOTH_SHELLS(scontrol_hostnames_cut_short_by_head_is_no_error)
{
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "scontrol show hostnames 'n[0-19999]' | head -n 1");
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "n0\n");
	assert_file_lacks(e.err, "invalid hostlist");
	ep_release(&e);
}

/* ---- spec.stageIn and sbcast: shared Volume to the node's scratch (docs/volumes.md) ---- */

/* A shared directory with data.txt and tree/a, and an empty scratch directory, in e's dir. */
static void ep_shared_and_scratch(struct ep *e)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/shared", e->dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/shared/data.txt", e->dir);
	write_file(path, "the dataset\n", "w");
	snprintf(path, sizeof(path), "%s/shared/tree", e->dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/shared/tree/a", e->dir);
	write_file(path, "leaf\n", "w");
	snprintf(path, sizeof(path), "%s/scratch", e->dir);
	cr_assert_eq(mkdir(path, 0755), 0);
}

BOTH_SHELLS(stage_in_copies_files_and_directories_before_setup_and_logs_the_time)
{
	struct buf list, setup;
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_shared_and_scratch(&e);
	buf_init(&list, 4096);
	buf_init(&setup, 4096);
	buf_addf(&list, "%s/shared/data.txt\n%s/scratch/data.txt\n"
		 "%s/shared/tree\n%s/scratch/deep/tree\n", e.dir, e.dir, e.dir, e.dir);
	ep_setenv(&e, ENTRYPOINT_ENV_STAGE_IN, buf_str(&list));
	buf_addf(&setup, "cat %s/scratch/data.txt %s/scratch/deep/tree/a", e.dir, e.dir);
	ep_setenv(&e, ENTRYPOINT_ENV_SETUP, buf_str(&setup));
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run");
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "the dataset\nleaf\nrun\n");
	buf_reset(&list);
	buf_addf(&list, "cadre: staged in %s/shared/data.txt to %s/scratch/data.txt in ", e.dir,
		 e.dir);
	assert_file_has(e.err, buf_str(&list));
	assert_file_has(e.err, "/scratch/deep/tree in ");
	buf_release(&list);
	buf_release(&setup);
	ep_release(&e);
}

BOTH_SHELLS(a_stage_in_that_cannot_copy_fails_the_pod_before_setup)
{
	struct buf list;
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_shared_and_scratch(&e);
	buf_init(&list, 4096);
	buf_addf(&list, "%s/shared/missing\n%s/scratch/missing\n", e.dir, e.dir);
	ep_setenv(&e, ENTRYPOINT_ENV_STAGE_IN, buf_str(&list));
	ep_setenv(&e, ENTRYPOINT_ENV_SETUP, "echo setup-ran");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	cr_assert_eq(ep_run(&e, shell), ENTRYPOINT_EXIT_STAGE_IN);
	assert_file_eq(e.out, "");
	assert_file_has(e.termlog, "stageIn: cannot copy ");
	assert_file_has(e.err, "no such file or directory");
	buf_release(&list);
	ep_release(&e);
}

/*
 * Four tasks of one node call sbcast for the same file at once, as srun's
 * copies of a batch script line would: one copies (cp runs once), the others
 * wait for it, and all four find the whole file there.
 */
BOTH_SHELLS(sbcast_copies_once_per_node_however_many_tasks_ask)
{
	struct buf run;
	char cp[128];
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_shared_and_scratch(&e);
	snprintf(cp, sizeof(cp), "%s/cp-calls", e.dir);
	ep_setenv(&e, "CP_CALLS", cp);
	ep_stub(&e, "cp", "#!/bin/sh\necho \"$*\" >>\"$CP_CALLS\"\nsleep 1\nexec /bin/cp \"$@\"\n");
	buf_init(&run, 4096);
	buf_addf(&run, "for t in 1 2 3 4; do (sbcast %s/shared/data.txt %s/scratch/d.txt && "
		 "cat %s/scratch/d.txt) & done; wait\n", e.dir, e.dir, e.dir);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, buf_str(&run));
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "the dataset\nthe dataset\nthe dataset\nthe dataset\n");
	{
		char *calls = read_file(cp);
		size_t lines = 0;

		for (const char *p = calls; *p; p++)
			lines += *p == '\n';
		cr_assert_eq(lines, 1, "cp ran %zu times:\n%s", lines, calls);
		free(calls);
	}
	buf_release(&run);
	ep_release(&e);
}

BOTH_SHELLS(sbcast_refuses_to_replace_a_file_without_force_and_notes_ignored_options)
{
	struct buf run;
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_shared_and_scratch(&e);
	buf_init(&run, 4096);
	buf_addf(&run, "echo old >%s/scratch/d.txt\n"
		 "sbcast %s/shared/data.txt %s/scratch/d.txt; echo \"plain $?\"\n"
		 "sbcast -C --fanout=8 -f %s/shared/data.txt %s/scratch/d.txt; echo \"force $?\"\n"
		 "cat %s/scratch/d.txt\n"
		 "sbcast %s/shared/nothing %s/scratch/n; echo \"missing $?\"\n",
		 e.dir, e.dir, e.dir, e.dir, e.dir, e.dir, e.dir, e.dir);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, buf_str(&run));
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "plain 1\nforce 0\nthe dataset\nmissing 1\n");
	assert_file_has(e.err, "d.txt exists; --force replaces it");
	assert_file_has(e.err, "sbcast: cadre: ignoring -C: the copy is local to this node");
	assert_file_has(e.err, "sbcast: cadre: ignoring --fanout: the copy is local to this node");
	buf_release(&run);
	ep_release(&e);
}

/*
 * ---- spec.code: each bundle checked and unpacked before anything runs (docs/code.md) ----
 *
 * The bundles are packed as the CLI packs them (cli/bundle.h) or, when a
 * test needs an archive the CLI would never make, written with libarchive
 * directly, with the digest of what was written: the digest only says the
 * parts are the bundle's, not that whoever made it meant well.
 */

static void write_bytes(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f, "open %s: %s", path, strerror(errno));
	cr_assert_eq(fwrite(data, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

/*
 * The bundle's bytes as the pod sees its ConfigMaps: the files 0, 1, ...
 * of a new directory dir, n_parts of them (the last may be shorter), as the
 * 1 MiB parts are, only smaller.
 */
static void write_parts(const char *dir, const struct bundle *b, size_t n_parts)
{
	size_t part_len = (b->len + n_parts - 1) / n_parts;

	cr_assert_eq(mkdir(dir, 0755), 0, "mkdir %s: %s", dir, strerror(errno));
	for (size_t i = 0, off = 0; i < n_parts; i++) {
		size_t len = b->len - off < part_len ? b->len - off : part_len;
		char path[256];

		snprintf(path, sizeof(path), "%s/%zu", dir, i);
		write_bytes(path, b->data + off, len);
		off += len;
	}
}

/* CADRE_CODE naming one bundle, as build_pod writes it. */
static void ep_code(struct ep *e, const struct bundle *b, const char *kind, const char *parts,
		    const char *path)
{
	char line[512];

	snprintf(line, sizeof(line), "%s %s %s %s\n", b->digest, kind, parts, path);
	ep_setenv(e, ENTRYPOINT_ENV_CODE, line);
}

static void pack(const char *src, struct bundle *b)
{
	char why[512] = "";

	bundle_init(b);
	cr_assert_eq(bundle_pack(src, BUNDLE_DEFAULT_MAX_BYTES, b, why, sizeof(why)), 0, "%s", why);
}

/*
 * A project in dir/src: top.txt (0644), sub/x, tool.sh (0755) and link, a
 * relative symbolic link to sub/x.
 */
static void make_project(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/src", dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/src/sub", dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/src/top.txt", dir);
	write_file(path, "top\n", "w");
	cr_assert_eq(chmod(path, 0644), 0);
	snprintf(path, sizeof(path), "%s/src/sub/x", dir);
	write_file(path, "in sub\n", "w");
	snprintf(path, sizeof(path), "%s/src/tool.sh", dir);
	write_file(path, "#!/bin/sh\necho tool ran\n", "w");
	cr_assert_eq(chmod(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/src/link", dir);
	cr_assert_eq(symlink("sub/x", path), 0);
}

static mode_t mode_of(const char *dir, const char *name)
{
	char path[320];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
	return st.st_mode;
}

/* Run the script and assert its exit code, showing its stderr when it is another. */
static void assert_exit(struct ep *e, const char *shell, int want)
{
	int rc = ep_run(e, shell);

	if (rc != want) {
		char *err = read_file(e->err);

		cr_assert_fail("exit %d, not %d; stderr:\n%s", rc, want, err);
		free(err);
	}
}

BOTH_SHELLS(code_a_directory_bundle_is_unpacked_at_its_path_before_the_workdir_and_setup)
{
	char src[160], parts[160], target[160];
	struct bundle b;
	struct ep e;

	ep_init(&e);
	make_project(e.dir);
	snprintf(src, sizeof(src), "%s/src", e.dir);
	snprintf(parts, sizeof(parts), "%s/parts", e.dir);
	/* The path may hold spaces, and need not exist: the pod's emptyDir is made there. */
	snprintf(target, sizeof(target), "%s/home dir/proj", e.dir);
	pack(src, &b);
	write_parts(parts, &b, 3);
	ep_code(&e, &b, "dir", parts, target);
	ep_setenv(&e, ENTRYPOINT_ENV_WORKDIR, target);
	ep_setenv(&e, ENTRYPOINT_ENV_SETUP, "cat top.txt");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "cat sub/x; test -x tool.sh && ./tool.sh; readlink link;"
		  " cat link; test -x top.txt || echo top.txt-not-executable");
	assert_exit(&e, shell, 0);
	assert_file_eq(e.out, "top\nin sub\ntool ran\nsub/x\nin sub\ntop.txt-not-executable\n");
	cr_assert_eq(mode_of(target, "tool.sh") & 07777, 0755);
	cr_assert_eq(mode_of(target, "top.txt") & 07777, 0644);
	cr_assert(S_ISDIR(mode_of(target, "sub")));
	cr_assert(S_ISLNK(mode_of(target, "link")));
	assert_file_eq(e.termlog, "");
	bundle_release(&b);
	ep_release(&e);
}

/* A file bundle is its one file, written at the path it is given, under whatever name. */
BOTH_SHELLS(code_a_file_bundle_is_written_at_its_path_whose_directory_is_made)
{
	char src[160], parts[160], dir[160], target[192], run[512], bin[160];
	struct bundle b;
	struct ep e;
	DIR *d;
	struct dirent *de;

	ep_init(&e);
	ep_bin(&e);
	snprintf(src, sizeof(src), "%s/train.py", e.dir);
	write_file(src, "print('training')\n", "w");
	cr_assert_eq(chmod(src, 0750), 0);
	snprintf(parts, sizeof(parts), "%s/parts", e.dir);
	snprintf(dir, sizeof(dir), "%s/opt/not yet", e.dir);
	snprintf(target, sizeof(target), "%s/main.py", dir);
	pack(src, &b);
	cr_assert(b.file);
	write_parts(parts, &b, 2);
	ep_code(&e, &b, "file", parts, target);
	snprintf(run, sizeof(run), "cat '%s'; test -x '%s' && echo executable", target, target);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, run);
	assert_exit(&e, shell, 0);
	assert_file_eq(e.out, "print('training')\nexecutable\n");
	cr_assert_eq(mode_of(dir, "main.py") & 07777, 0750);
	/* Its scratch copy is gone. */
	snprintf(bin, sizeof(bin), "%s/cadre-bin", e.dir);
	d = opendir(bin);
	cr_assert_not_null(d);
	while ((de = readdir(d)))
		cr_assert_neq(strncmp(de->d_name, ".cadre-code", 11), 0, "%s/%s is left", bin,
			      de->d_name);
	closedir(d);
	bundle_release(&b);
	ep_release(&e);
}

/* Lines of CADRE_CODE are bundles of their own: a directory and a file inside it. */
BOTH_SHELLS(code_every_line_is_a_bundle_unpacked_in_turn)
{
	char src[160], parts[2][160], target[2][200];
	struct bundle dir, file;
	struct buf lines;
	struct ep e;

	ep_init(&e);
	make_project(e.dir);
	snprintf(src, sizeof(src), "%s/src", e.dir);
	pack(src, &dir);
	snprintf(src, sizeof(src), "%s/src/sub/x", e.dir);
	pack(src, &file);
	for (int i = 0; i < 2; i++)
		snprintf(parts[i], sizeof(parts[i]), "%s/parts-%d", e.dir, i);
	snprintf(target[0], sizeof(target[0]), "%s/work", e.dir);
	snprintf(target[1], sizeof(target[1]), "%s/work/conf/x.yaml", e.dir);
	write_parts(parts[0], &dir, 1);
	write_parts(parts[1], &file, 1);
	buf_init(&lines, 4096);
	buf_addf(&lines, "%s dir %s %s\n%s file %s %s\n", dir.digest, parts[0], target[0],
		 file.digest, parts[1], target[1]);
	ep_setenv(&e, ENTRYPOINT_ENV_CODE, buf_str(&lines));
	ep_setenv(&e, ENTRYPOINT_ENV_WORKDIR, target[0]);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "cat top.txt conf/x.yaml");
	assert_exit(&e, shell, 0);
	assert_file_eq(e.out, "top\nin sub\n");
	buf_release(&lines);
	bundle_release(&dir);
	bundle_release(&file);
	ep_release(&e);
}

/* The pod fails as the script says: ENTRYPOINT_EXIT_CODE, the digest named, nothing run. */
static void assert_code_refused(struct ep *e, const char *shell, const struct bundle *b,
				const char *why)
{
	char said[512];

	ep_setenv(e, ENTRYPOINT_ENV_SETUP, "echo setup-ran");
	ep_setenv(e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	assert_exit(e, shell, ENTRYPOINT_EXIT_CODE);
	assert_file_eq(e->out, "");
	snprintf(said, sizeof(said), "cadre: code %s: %s", b->digest, why);
	assert_file_has(e->termlog, said);
	assert_file_has(e->err, said);
}

BOTH_SHELLS(code_a_changed_byte_in_a_part_fails_the_pod_naming_the_digest)
{
	char src[160], parts[160], target[160], part1[192];
	struct bundle b;
	struct ep e;
	FILE *f;
	int c;

	ep_init(&e);
	make_project(e.dir);
	snprintf(src, sizeof(src), "%s/src", e.dir);
	snprintf(parts, sizeof(parts), "%s/parts", e.dir);
	snprintf(target, sizeof(target), "%s/proj", e.dir);
	pack(src, &b);
	write_parts(parts, &b, 3);
	snprintf(part1, sizeof(part1), "%s/1", parts);
	f = fopen(part1, "r+b");
	cr_assert_not_null(f);
	cr_assert_eq(fseek(f, 10, SEEK_SET), 0);
	c = fgetc(f);
	cr_assert_neq(c, EOF);
	cr_assert_eq(fseek(f, 10, SEEK_SET), 0);
	fputc(c ^ 0x01, f);
	cr_assert_eq(fclose(f), 0);
	ep_code(&e, &b, "dir", parts, target);
	assert_code_refused(&e, shell, &b, "the bundle's sha256 is sha256:");
	assert_file_has(e.termlog, ": its ConfigMaps were changed or mixed");
	cr_assert_not(file_exists(target), "a bundle that is not its digest was unpacked");
	bundle_release(&b);
	ep_release(&e);
}

/* Parts that are whole, but of another bundle than the digest the job names. */
BOTH_SHELLS(code_parts_of_another_bundle_fail_the_pod_naming_both_digests)
{
	char src[160], parts[160], target[160], said[200];
	struct bundle b, other;
	struct ep e;

	ep_init(&e);
	make_project(e.dir);
	snprintf(src, sizeof(src), "%s/src", e.dir);
	snprintf(parts, sizeof(parts), "%s/parts", e.dir);
	snprintf(target, sizeof(target), "%s/proj", e.dir);
	pack(src, &b);
	snprintf(src, sizeof(src), "%s/src/top.txt", e.dir);
	pack(src, &other);
	write_parts(parts, &other, 1);
	ep_code(&e, &b, "dir", parts, target);
	snprintf(said, sizeof(said), "the bundle's sha256 is %s, not %s", other.digest, b.digest);
	assert_code_refused(&e, shell, &b, said);
	cr_assert_not(file_exists(target));
	bundle_release(&b);
	bundle_release(&other);
	ep_release(&e);
}

BOTH_SHELLS(code_parts_that_are_not_mounted_fail_the_pod)
{
	char parts[160], target[160], said[256];
	struct bundle b;
	struct ep e;

	ep_init(&e);
	bundle_init(&b);
	snprintf(b.digest, sizeof(b.digest), "sha256:%064d", 0);
	snprintf(parts, sizeof(parts), "%s/cadre/code/0", e.dir);
	snprintf(target, sizeof(target), "%s/proj", e.dir);
	ep_code(&e, &b, "dir", parts, target);
	snprintf(said, sizeof(said), "its ConfigMaps are not mounted at %s", parts);
	assert_code_refused(&e, shell, &b, said);
	cr_assert_not(file_exists(target));
	ep_release(&e);
}

/* A directory bundle given as a file bundle: one file is one entry. */
BOTH_SHELLS(code_a_file_bundle_of_several_entries_is_refused)
{
	char src[160], parts[160], target[160];
	struct bundle b;
	struct ep e;

	ep_init(&e);
	make_project(e.dir);
	snprintf(src, sizeof(src), "%s/src", e.dir);
	snprintf(parts, sizeof(parts), "%s/parts", e.dir);
	snprintf(target, sizeof(target), "%s/conf/x.yaml", e.dir);
	pack(src, &b);
	write_parts(parts, &b, 1);
	ep_code(&e, &b, "file", parts, target);
	assert_code_refused(&e, shell, &b, "a bundle of one file holds 5 entries");
	cr_assert_not(file_exists(target));
	bundle_release(&b);
	ep_release(&e);
}

/* One entry of an archive written by hand: a file, directory, link, FIFO, device or hard link. */
struct raw_entry {
	const char *name;
	unsigned int type;   /* AE_IFREG, AE_IFDIR, AE_IFLNK, AE_IFIFO, AE_IFCHR; 0: a hard link */
	const char *target;  /* a link's */
	const char *text;    /* a file's contents */
};

/*
 * A gzip-compressed pax archive of entries, written with libarchive as
 * anyone could write one, into b with its digest: the checks past the
 * digest are what a crafted archive meets.
 */
static void raw_bundle(const struct raw_entry *entries, size_t n, struct bundle *b)
{
	size_t cap = 1 << 20, used = 0;
	struct archive *a = archive_write_new();

	bundle_init(b);
	b->data = malloc(cap);
	cr_assert(a && b->data);
	cr_assert_eq(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
	cr_assert_eq(archive_write_add_filter_gzip(a), ARCHIVE_OK);
	cr_assert_eq(archive_write_open_memory(a, b->data, cap, &used), ARCHIVE_OK,
		     "%s", archive_error_string(a));
	for (size_t i = 0; i < n; i++) {
		const struct raw_entry *r = &entries[i];
		struct archive_entry *e = archive_entry_new();
		size_t len = r->text ? strlen(r->text) : 0;

		archive_entry_set_pathname(e, r->name);
		if (r->type) {
			archive_entry_set_filetype(e, r->type);
			archive_entry_set_perm(e, r->type == AE_IFDIR ? 0755 : 0644);
		} else {
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, 0644);
			archive_entry_set_hardlink(e, r->target);
		}
		if (r->type == AE_IFLNK)
			archive_entry_set_symlink(e, r->target);
		if (r->type == AE_IFCHR)
			archive_entry_set_rdev(e, makedev(1, 3));
		if (r->type == AE_IFREG)
			archive_entry_set_size(e, (la_int64_t)len);
		cr_assert_eq(archive_write_header(a, e), ARCHIVE_OK, "%s: %s", r->name,
			     archive_error_string(a));
		if (len)
			cr_assert_eq(archive_write_data(a, r->text, len), (la_ssize_t)len);
		archive_entry_free(e);
	}
	cr_assert_eq(archive_write_close(a), ARCHIVE_OK, "%s", archive_error_string(a));
	archive_write_free(a);
	b->len = used;
	bundle_digest(b->data, b->len, b->digest);
}

/* entries as a directory bundle at e's dir/target, in one part; the target's path into target. */
static void ep_raw_code(struct ep *e, const struct raw_entry *entries, size_t n,
			struct bundle *b, char *target, size_t target_size)
{
	char parts[160];

	raw_bundle(entries, n, b);
	snprintf(parts, sizeof(parts), "%s/parts", e->dir);
	write_parts(parts, b, 1);
	snprintf(target, target_size, "%s/target", e->dir);
	ep_code(e, b, "dir", parts, target);
}

/* How many entries under dir (links not followed) are named name. */
static int found_count;
static const char *found_name;

static int count_name(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	found_count += !strcmp(path + ftw->base, found_name);
	return 0;
}

static int files_named(const char *dir, const char *name)
{
	found_count = 0;
	found_name = name;
	nftw(dir, count_name, 8, FTW_PHYS);
	return found_count;
}

BOTH_SHELLS(code_an_entry_with_a_dotdot_is_refused_and_nothing_lands_outside)
{
	static const char *const names[] = { "../escape", "sub/../../escape", "./../escape" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct raw_entry entries[] = {
			{ "ok.txt", AE_IFREG, NULL, "fine\n" },
			{ names[i], AE_IFREG, NULL, "escaped\n" },
		};
		char target[160], said[256];
		struct bundle b;
		struct ep e;

		ep_init(&e);
		ep_raw_code(&e, entries, 2, &b, target, sizeof(target));
		snprintf(said, sizeof(said), "the entry %s would land outside %s", names[i], target);
		assert_code_refused(&e, shell, &b, said);
		cr_assert_eq(files_named(e.dir, "escape"), 0, "%s was written", names[i]);
		cr_assert_not(file_exists(target), "a refused bundle was unpacked in part");
		bundle_release(&b);
		ep_release(&e);
	}
}

BOTH_SHELLS(code_an_entry_with_an_absolute_name_is_refused)
{
	char target[160], abs[160], said[400];
	struct raw_entry entries[] = {
		{ "ok.txt", AE_IFREG, NULL, "fine\n" },
		{ abs, AE_IFREG, NULL, "absolute\n" },
	};
	struct bundle b;
	struct ep e;

	ep_init(&e);
	/* Under /tmp, beside the target, and this test's alone. */
	snprintf(abs, sizeof(abs), "%s/abs", e.dir);
	ep_raw_code(&e, entries, 2, &b, target, sizeof(target));
	snprintf(said, sizeof(said), "the entry %s would land outside %s", abs, target);
	assert_code_refused(&e, shell, &b, said);
	cr_assert_not(file_exists(abs), "%s was written", abs);
	cr_assert_eq(files_named(e.dir, "abs"), 0, "the entry was written under another name");
	bundle_release(&b);
	ep_release(&e);
}

BOTH_SHELLS(code_a_fifo_a_device_or_a_hard_link_is_refused)
{
	static const struct raw_entry odd[] = {
		{ "pipe", AE_IFIFO, NULL, NULL },
		{ "null", AE_IFCHR, NULL, NULL },
		{ "again", 0, "ok.txt", NULL },
	};

	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		const struct raw_entry entries[] = {
			{ "ok.txt", AE_IFREG, NULL, "fine\n" },
			odd[i],
		};
		char target[160];
		struct bundle b;
		struct ep e;

		ep_init(&e);
		ep_raw_code(&e, entries, 2, &b, target, sizeof(target));
		assert_code_refused(&e, shell, &b, "it holds an entry that is not a file, directory "
				    "or symbolic link: ");
		assert_file_has(e.termlog, odd[i].name);
		cr_assert_not(file_exists(target), "%s: a refused bundle was unpacked", odd[i].name);
		bundle_release(&b);
		ep_release(&e);
	}
}

/*
 * A link that points out of the path, then a file "through" it: whatever
 * the script and tar make of it, nothing is written outside the target.
 * GNU tar makes a link that points out only once every file is written (a
 * placeholder stands in for it until then), so no file goes through it.
 * The link points at link_target ("" for e's own outside/); where says
 * where the file would land through it.
 */
static void assert_nothing_written_through(const char *shell, const char *link_target)
{
	char outside[160], leaf[64], inner[128], where[256], target[160];
	struct raw_entry entries[] = {
		{ "evil", AE_IFLNK, link_target, NULL },
		{ inner, AE_IFREG, NULL, "pwned\n" },
	};
	struct bundle b;
	struct ep e;
	int rc;

	ep_init(&e);
	/* A name only this run writes, so that one found at / is this run's own. */
	snprintf(leaf, sizeof(leaf), "%s-pwned", strrchr(e.dir, '/') + 1);
	snprintf(inner, sizeof(inner), "evil/%s", leaf);
	snprintf(outside, sizeof(outside), "%s/outside", e.dir);
	cr_assert_eq(mkdir(outside, 0755), 0);
	if (!*link_target)
		entries[0].target = outside;
	if (!strcmp(link_target, "/"))
		snprintf(where, sizeof(where), "/%s", leaf);
	else if (!strcmp(link_target, ".."))
		snprintf(where, sizeof(where), "%s/%s", e.dir, leaf);
	else
		snprintf(where, sizeof(where), "%s/%s", outside, leaf);
	ep_raw_code(&e, entries, 2, &b, target, sizeof(target));
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "true");
	rc = ep_run(&e, shell);
	if (file_exists(where) && !strcmp(link_target, "/"))
		unlink(where);
	cr_assert_not(file_exists(where), "%s was written through evil -> %s", where,
		      entries[0].target);
	cr_assert_eq(files_named(e.dir, leaf), files_named(target, leaf),
		     "%s was written outside %s", leaf, target);
	/* GNU tar cannot open evil/...: a placeholder file stands at evil. */
	cr_assert(rc == 0 || rc == ENTRYPOINT_EXIT_CODE, "exit %d", rc);
	bundle_release(&b);
	ep_release(&e);
}

BOTH_SHELLS(code_nothing_is_written_through_a_link_to_the_root)
{
	assert_nothing_written_through(shell, "/");
}

BOTH_SHELLS(code_nothing_is_written_through_a_link_to_an_absolute_directory)
{
	assert_nothing_written_through(shell, "");
}

BOTH_SHELLS(code_nothing_is_written_through_a_link_up_out_of_the_path)
{
	assert_nothing_written_through(shell, "..");
}

/*
 * An image whose tar is not GNU tar (busybox's): it may write through a
 * link it has just made, so a bundle with a link is refused there, and one
 * without is unpacked by it. The stub reports another tar and runs GNU tar.
 */
static void ep_other_tar(struct ep *e)
{
	ep_stub(e, "tar", "#!/bin/sh\n"
		"if [ \"$1\" = --version ]; then echo 'tar (busybox) 1.36.1'; exit 0; fi\n"
		"PATH=${PATH#*:}\n"
		"exec tar \"$@\"\n");
}

BOTH_SHELLS(code_a_link_is_refused_when_the_images_tar_is_not_gnu_tar)
{
	char src[160], parts[160], target[160];
	struct bundle b;
	struct ep e;

	ep_init(&e);
	ep_other_tar(&e);
	make_project(e.dir);
	snprintf(src, sizeof(src), "%s/src", e.dir);
	snprintf(parts, sizeof(parts), "%s/parts", e.dir);
	snprintf(target, sizeof(target), "%s/proj", e.dir);
	pack(src, &b);
	write_parts(parts, &b, 2);
	ep_code(&e, &b, "dir", parts, target);
	assert_code_refused(&e, shell, &b, "it holds a symbolic link and the image's tar is not "
			    "GNU tar");
	cr_assert_not(file_exists(target));
	bundle_release(&b);
	ep_release(&e);
}

BOTH_SHELLS(code_a_bundle_without_links_is_unpacked_by_another_tar)
{
	char src[160], link[192], parts[160], target[160];
	struct bundle b;
	struct ep e;

	ep_init(&e);
	ep_other_tar(&e);
	make_project(e.dir);
	snprintf(link, sizeof(link), "%s/src/link", e.dir);
	cr_assert_eq(unlink(link), 0);
	snprintf(src, sizeof(src), "%s/src", e.dir);
	snprintf(parts, sizeof(parts), "%s/parts", e.dir);
	snprintf(target, sizeof(target), "%s/proj", e.dir);
	pack(src, &b);
	write_parts(parts, &b, 2);
	ep_code(&e, &b, "dir", parts, target);
	ep_setenv(&e, ENTRYPOINT_ENV_WORKDIR, target);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "cat top.txt sub/x; ./tool.sh");
	assert_exit(&e, shell, 0);
	assert_file_eq(e.out, "top\nin sub\ntool ran\n");
	bundle_release(&b);
	ep_release(&e);
}

/*
 * GNU tar prints names quoted in its "escape" style ("na\303\257ve.py" in
 * the C locale a pod's shell has): a file bundle's one file is taken from
 * the scratch directory it was unpacked into, never by the listed name.
 */
static void code_a_file_bundle_named_beyond_ascii(const char *shell)
{
	char src[160], parts[160], target[160], run[256];
	struct bundle b;
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	snprintf(src, sizeof(src), "%s/na\xc3\xafve.py", e.dir);
	write_file(src, "print('ok')\n", "w");
	snprintf(parts, sizeof(parts), "%s/parts", e.dir);
	snprintf(target, sizeof(target), "%s/main.py", e.dir);
	pack(src, &b);
	write_parts(parts, &b, 1);
	ep_code(&e, &b, "file", parts, target);
	snprintf(run, sizeof(run), "cat '%s'", target);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, run);
	assert_exit(&e, shell, 0);
	assert_file_eq(e.out, "print('ok')\n");
	bundle_release(&b);
	ep_release(&e);
}

Test(entrypoint, code_a_file_bundle_named_beyond_ascii_is_written_under_bash,
     .fini = kill_started_group, .timeout = 120)
{
	code_a_file_bundle_named_beyond_ascii("/bin/bash");
}

Test(entrypoint, code_a_file_bundle_named_beyond_ascii_is_written_under_sh,
     .fini = kill_started_group, .timeout = 120)
{
	code_a_file_bundle_named_beyond_ascii("/bin/sh");
}

/*
 * The parts are read once: a ConfigMap that changed after the digest was
 * checked (a mutable one, refreshed by the kubelet) cannot slip other bytes
 * into what is listed and unpacked. The stub cat serves a part's bytes the
 * first time it is read and something else every time after.
 */
BOTH_SHELLS(code_the_bytes_unpacked_are_the_bytes_checked)
{
	char src[160], parts[160], target[160], stub[1024];
	struct bundle b;
	struct ep e;

	ep_init(&e);
	make_project(e.dir);
	snprintf(stub, sizeof(stub), "#!/bin/sh\n"
		 "case ${1:-} in %s/parts/*)\n"
		 "  m=%s/seen.${1##*/}\n"
		 "  if [ -e \"$m\" ]; then echo EVIL; exit 0; fi\n"
		 "  : >\"$m\" ;;\n"
		 "esac\n"
		 "PATH=${PATH#*:}\n"
		 "exec cat \"$@\"\n", e.dir, e.dir);
	ep_stub(&e, "cat", stub);
	snprintf(src, sizeof(src), "%s/src", e.dir);
	snprintf(parts, sizeof(parts), "%s/parts", e.dir);
	snprintf(target, sizeof(target), "%s/proj", e.dir);
	pack(src, &b);
	write_parts(parts, &b, 3);
	ep_code(&e, &b, "dir", parts, target);
	ep_setenv(&e, ENTRYPOINT_ENV_WORKDIR, target);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "cat top.txt");
	assert_exit(&e, shell, 0);
	assert_file_eq(e.out, "top\n");
	bundle_release(&b);
	ep_release(&e);
}

/*
 * ---- spec.restartStrategy InPlace: the attempt file (the pod's label
 * cadre.dev/restart-attempt, projected by the kubelet) and the state file
 * that outlives a restart of the container ----
 */

#define STOPPED_FOR_ATTEMPT_EXIT 117  /* the script's exit for a run stopped by a newer attempt */

/* Write the attempt file as the kubelet writes a downward API file: the value
 * without a newline, swapped in whole. */
static void ep_set_attempt(const struct ep *e, const char *attempt)
{
	char path[160], fresh[170];

	snprintf(path, sizeof(path), "%s/attempt", e->dir);
	snprintf(fresh, sizeof(fresh), "%s.new", path);
	write_file(fresh, attempt, "w");
	cr_assert_eq(rename(fresh, path), 0);
}

/*
 * The in-place mode at attempt `attempt`, in a pod created at attempt 0 (its
 * environment says so). Needs the bin directory of ep_bin or ep_hang.
 */
static void ep_in_place(struct ep *e, const char *attempt)
{
	char path[160];

	ep_set_attempt(e, attempt);
	snprintf(path, sizeof(path), "%s/attempt", e->dir);
	ep_setenv(e, "CADRE_ATTEMPT_FILE", path);
	ep_setenv(e, "CADRE_RESTART_ATTEMPT", "0");
	ep_setenv(e, "SLURM_RESTART_COUNT", "0");
}

/* The state file in the bin directory of ep_bin. */
static void state_path(const struct ep *e, char *path, size_t size)
{
	snprintf(path, size, "%s/cadre-bin/.cadre-attempt", e->dir);
}

/* What an earlier container of the pod left in the state file. */
static void ep_set_state(const struct ep *e, const char *state)
{
	char path[160];

	state_path(e, path, sizeof(path));
	write_file(path, state, "w");
}

static void assert_state(const struct ep *e, const char *want)
{
	char path[160];

	state_path(e, path, sizeof(path));
	assert_file_eq(path, want);
}

BOTH_SHELLS(in_place_the_program_sees_the_current_attempt_and_its_failure_is_tagged_with_it)
{
	char dumps[192], want[512];
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_in_place(&e, "2");
	snprintf(dumps, sizeof(dumps), "%s/ckpt/cadre-nccl/job/attempt-0", e.dir);
	ep_setenv(&e, ENTRYPOINT_ENV_NCCL_DUMP_DIR, dumps);
	snprintf(want, sizeof(want), "%s/rank_", dumps);
	ep_setenv(&e, "TORCH_FR_DUMP_TEMP_FILE", want);
	ep_setenv(&e, ENTRYPOINT_ENV_RUN,
		  "echo \"$CADRE_RESTART_ATTEMPT $SLURM_RESTART_COUNT\"\n"
		  "echo \"$CADRE_NCCL_DUMP_DIR\"\n"
		  "echo \"$TORCH_FR_DUMP_TEMP_FILE\"\n"
		  "exit 3");
	cr_assert_eq(ep_run(&e, shell), 3);
	snprintf(want, sizeof(want), "2 2\n%s/ckpt/cadre-nccl/job/attempt-2\n"
		 "%s/ckpt/cadre-nccl/job/attempt-2/rank_\n", e.dir, e.dir);
	assert_file_eq(e.out, want);
	assert_file_eq(e.termlog, "cadre-attempt: 2\n");
	assert_state(&e, "ended 2\n");
	ep_release(&e);
}

BOTH_SHELLS(in_place_a_run_that_succeeds_ends_its_attempt_without_a_message)
{
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_in_place(&e, "1\n");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo \"$CADRE_RESTART_ATTEMPT\"");
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "1\n");
	assert_file_eq(e.termlog, "");
	assert_state(&e, "ended 1\n");
	ep_release(&e);
}

/* cadre's own failures keep their message first, the attempt last. */
BOTH_SHELLS(in_place_a_failed_setup_keeps_its_message_and_is_tagged_with_the_attempt)
{
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_in_place(&e, "4");
	ep_setenv(&e, ENTRYPOINT_ENV_SETUP, "exit 7");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	cr_assert_eq(ep_run(&e, shell), 7);
	assert_file_eq(e.out, "");
	assert_file_eq(e.termlog, "cadre: setup failed with exit code 7; run was not started\n"
		       "cadre-attempt: 4\n");
	assert_state(&e, "ended 4\n");
	ep_release(&e);
}

BOTH_SHELLS(in_place_a_hung_rank_keeps_the_hang_message_first_and_the_attempt_last)
{
	struct ep e;

	skip_under_valgrind();
	ep_init(&e);
	ep_hang(&e, "1", "1");
	ep_in_place(&e, "0");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "sleep 60");
	cr_assert_eq(ep_run(&e, shell), ENTRYPOINT_EXIT_HUNG);
	assert_file_eq(e.termlog, ENTRYPOINT_HUNG_MESSAGE "rank 3 no progress in the first 1s "
		       "(spec.hang.startupSeconds)\ncadre-attempt: 0\n");
	assert_state(&e, "ended 0\n");
	ep_release(&e);
}

BOTH_SHELLS(in_place_a_newer_attempt_stops_the_running_program_for_no_failure)
{
	struct ep e;
	double t0, took;

	skip_under_valgrind();
	ep_init(&e);
	ep_bin(&e);
	ep_in_place(&e, "0");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo ready; sleep 30");
	ep_start(&e, shell);
	cr_assert(wait_for_text(e.out, "ready", 30000));
	t0 = mono_s();
	ep_set_attempt(&e, "1");
	cr_assert_eq(ep_wait(&e), STOPPED_FOR_ATTEMPT_EXIT);
	took = mono_s() - t0;
	cr_assert(took < 4, "stopped %.1fs after the attempt changed; it is looked at every second",
		  took);
	assert_file_has(e.err, "cadre: attempt 1 began (in-place restart): stopping attempt 0");
	assert_file_eq(e.termlog, "cadre: stopped for attempt 1 (in-place restart)\n"
		       "cadre-attempt: 0\n");
	assert_state(&e, "ended 0\n");
	ep_release(&e);
}

/* As a pod stop: the spec.signal notice, SIGTERM secondsBefore later. */
BOTH_SHELLS(in_place_a_newer_attempt_sends_the_signal_first_and_sigterm_its_seconds_later)
{
	struct ep e;
	double sent, usr1, term;

	skip_under_valgrind();
	ep_init(&e);
	ep_bin(&e);
	ep_in_place(&e, "0");
	ep_setenv(&e, ENTRYPOINT_ENV_SIGNAL, "USR1");
	ep_setenv(&e, ENTRYPOINT_ENV_SIGNAL_BEFORE, "1");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, RECORD_SIGNALS(""));
	ep_start(&e, shell);
	cr_assert(wait_for_text(e.out, "ready", 30000));
	sent = uptime_s();
	ep_set_attempt(&e, "1");
	/* The program exits 0 on SIGTERM: still a stop, not a success of the old attempt. */
	cr_assert_eq(ep_wait(&e), STOPPED_FOR_ATTEMPT_EXIT);
	usr1 = signal_time(&e, "USR1") - sent;
	term = signal_time(&e, "TERM") - sent;
	cr_assert(usr1 >= 0 && usr1 < 2, "USR1 came %.2fs after the attempt changed", usr1);
	cr_assert(term - usr1 >= 0.8 && term - usr1 < 2.5,
		  "SIGTERM came %.2fs after USR1, want 1s (secondsBefore)", term - usr1);
	assert_file_has(e.err, "sending SIGUSR1 to the program: attempt 1 began");
	assert_file_eq(e.termlog, "cadre: stopped for attempt 1 (in-place restart)\n"
		       "cadre-attempt: 0\n");
	ep_release(&e);
}

BOTH_SHELLS(in_place_a_newer_attempt_during_setup_never_starts_run)
{
	struct ep e;

	skip_under_valgrind();
	ep_init(&e);
	ep_bin(&e);
	ep_in_place(&e, "0");
	ep_setenv(&e, ENTRYPOINT_ENV_SETUP,
		  "trap 'exit 0' TERM\n"
		  "echo ready\n"
		  "while :; do sleep 0.1; done");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	ep_start(&e, shell);
	cr_assert(wait_for_text(e.out, "ready", 30000));
	ep_set_attempt(&e, "1");
	cr_assert_eq(ep_wait(&e), STOPPED_FOR_ATTEMPT_EXIT);
	assert_file_eq(e.out, "ready\n");
	assert_file_eq(e.termlog, "cadre: stopped for attempt 1 (in-place restart)\n"
		       "cadre-attempt: 0\n");
	assert_state(&e, "ended 0\n");
	ep_release(&e);
}

/*
 * The container restarted by the kubelet after this rank's run of attempt 1
 * ended: the program waits for the controller to begin attempt 2, then runs
 * as that attempt.
 */
BOTH_SHELLS(in_place_after_its_run_ended_a_rank_waits_for_the_next_attempt)
{
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_in_place(&e, "1");
	ep_set_state(&e, "ended 1\n");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo \"ran $CADRE_RESTART_ATTEMPT\"");
	ep_start(&e, shell);
	cr_assert(wait_for_text(e.err, "cadre: attempt 1 ended on this rank; waiting for the next "
				"attempt (in-place restart)", 30000));
	sleep_ms(500);
	assert_file_eq(e.out, "");
	ep_set_attempt(&e, "2");
	cr_assert_eq(ep_wait(&e), 0);
	assert_file_eq(e.out, "ran 2\n");
	assert_state(&e, "ended 2\n");
	ep_release(&e);
}

/* A run the last container never saw end (it was killed): said now, for it. */
BOTH_SHELLS(in_place_a_run_killed_with_its_container_is_ended_with_137)
{
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_in_place(&e, "1");
	ep_set_state(&e, "running 1\n");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	cr_assert_eq(ep_run(&e, shell), 137);
	assert_file_eq(e.out, "");
	assert_file_eq(e.termlog, "cadre: the run of attempt 1 ended without an exit status "
		       "(the container was killed)\ncadre-attempt: 1\n");
	assert_state(&e, "ended 1\n");
	ep_release(&e);
}

/* The controller began attempt 1 while attempt 0's container was being killed. */
BOTH_SHELLS(in_place_an_older_attempts_state_does_not_hold_up_the_current_one)
{
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_in_place(&e, "1");
	ep_set_state(&e, "running 0\n");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo \"ran $CADRE_RESTART_ATTEMPT\"");
	cr_assert_eq(ep_run(&e, shell), 0);
	assert_file_eq(e.out, "ran 1\n");
	assert_file_lacks(e.err, "waiting for the next attempt");
	assert_state(&e, "ended 1\n");
	ep_release(&e);
}

/* The kubelet may not have written the label yet: the attempt is read again. */
BOTH_SHELLS(in_place_an_attempt_file_without_a_number_is_read_until_it_has_one)
{
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_in_place(&e, "");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo \"ran $CADRE_RESTART_ATTEMPT\"");
	ep_start(&e, shell);
	cr_assert(wait_for_text(e.err, "to hold the attempt", 30000));
	ep_set_attempt(&e, "3x");
	sleep_ms(500);
	assert_file_eq(e.out, "");
	ep_set_attempt(&e, "3");
	cr_assert_eq(ep_wait(&e), 0);
	assert_file_eq(e.out, "ran 3\n");
	ep_release(&e);
}

BOTH_SHELLS(in_place_without_a_bin_directory_fails_before_running)
{
	struct ep e;

	ep_init(&e);
	ep_in_place(&e, "0");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	cr_assert_eq(ep_run(&e, shell), ENTRYPOINT_EXIT_CONFIG);
	assert_file_eq(e.out, "");
	assert_file_eq(e.termlog, "cadre: CADRE_ATTEMPT_FILE (spec.restartStrategy InPlace) needs "
		       "CADRE_BIN_DIR, where the attempt is kept across restarts of the container\n");
	ep_release(&e);
}

/* Without CADRE_ATTEMPT_FILE the pod is as it always was: nothing kept, nothing tagged. */
BOTH_SHELLS(without_an_attempt_file_no_state_is_kept_and_no_message_is_tagged)
{
	char path[160];
	struct ep e;

	ep_init(&e);
	ep_bin(&e);
	ep_setenv(&e, "CADRE_RESTART_ATTEMPT", "0");
	ep_setenv(&e, ENTRYPOINT_ENV_SETUP, "echo \"$CADRE_RESTART_ATTEMPT\"; exit 7");
	ep_setenv(&e, ENTRYPOINT_ENV_RUN, "echo run-ran");
	cr_assert_eq(ep_run(&e, shell), 7);
	assert_file_eq(e.out, "0\n");
	assert_file_eq(e.termlog, "cadre: setup failed with exit code 7; run was not started\n");
	state_path(&e, path, sizeof(path));
	cr_assert_not(file_exists(path), "no state file without the in-place mode");
	ep_release(&e);
}
