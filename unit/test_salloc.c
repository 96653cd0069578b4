/*
 * cadre salloc and cadre completion: salloc's words (sbatch's options,
 * then the command), its lines as the allocation moves on, the SLURM_*
 * variables, its exit code; the completion scripts, run through bash.
 */
#include <criterion/criterion.h>

#include "api/fielderr.h"
#include "api/trainingjob.h"
#include "base/buf.h"
#include "cli/cli.h"
#include "cli/salloc.h"
#include "cli/submit.h"
#include "convert/convert.h"
#include "unit/support/clirun.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static struct trainingjob tj;
static struct buf msgs;
static char *out, *err;

static void setup(void)
{
	tj_init(&tj);
	buf_init(&msgs, 1 << 20);
}

static void teardown(void)
{
	tj_release(&tj);
	buf_release(&msgs);
	free(out);
	free(err);
	out = err = NULL;
}

TestSuite(salloc, .init = setup, .fini = teardown);

/* tj from a job "dbg-x7k2p" in namespace ml with the status JSON status. */
static void job(const char *spec, const char *status)
{
	char text[4096];
	struct field_errors errs;
	json_t *obj;

	snprintf(text, sizeof(text),
		 "{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		 "\"metadata\":{\"name\":\"dbg-x7k2p\",\"namespace\":\"ml\",\"uid\":\"u1\"},"
		 "\"spec\":{\"numNodes\":2,\"run\":\"true\"%s%s},\"status\":{\"jobId\":\"4242\"%s%s}}",
		 spec ? "," : "", spec ? spec : "", status ? "," : "", status ? status : "");
	obj = json_loads(text, 0, NULL);
	cr_assert(obj, "json: %s", text);
	tj_release(&tj);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(obj, &tj, &errs), 0, "%s", text);
	field_errors_release(&errs);
	json_decref(obj);
}

#define RUNNING "\"phase\":\"Running\",\"nodes\":[{\"rank\":0,\"node\":\"n1\"},{\"rank\":1,\"node\":\"n2\"}]"

/* The lines one step adds. */
static const char *step(struct salloc_watch *w, const struct trainingjob *t)
{
	buf_reset(&msgs);
	cr_assert_eq(salloc_watch_step(w, t, &msgs), 0);
	return buf_str(&msgs);
}

Test(salloc, a_job_that_waits_says_pending_once_then_allocated_granted_and_its_nodes)
{
	struct salloc_watch w = { .job_id = "4242", .state = SALLOC_SUBMITTED };

	job(NULL, "\"phase\":\"Queued\"");
	cr_assert_str_eq(step(&w, &tj), "", "not looked at yet: it may fit at once");
	job(NULL, "\"phase\":\"Queued\",\"conditions\":[{\"type\":\"Admitted\",\"status\":\"False\","
	    "\"reason\":\"InsufficientCapacity\",\"message\":\"m\","
	    "\"lastTransitionTime\":\"2026-12-01T10:00:00Z\"}]");
	cr_assert_str_eq(step(&w, &tj), "salloc: Pending job allocation 4242\n"
					"salloc: job 4242 queued and waiting for resources\n");
	cr_assert_eq(w.state, SALLOC_PENDING);
	cr_assert_str_eq(step(&w, &tj), "", "said once");
	job(NULL, RUNNING);
	cr_assert_str_eq(step(&w, &tj), "salloc: job 4242 has been allocated resources\n"
					"salloc: Granted job allocation 4242\n"
					"salloc: Nodes dbg-x7k2p-[0-1] are ready for job\n");
	cr_assert_eq(w.state, SALLOC_GRANTED);
	cr_assert_str_eq(step(&w, &tj), "");
}

Test(salloc, a_job_that_runs_at_once_is_granted_without_pending_lines)
{
	struct salloc_watch w = { .job_id = "7", .state = SALLOC_SUBMITTED };

	job(NULL, RUNNING);
	cr_assert_str_eq(step(&w, &tj), "salloc: Granted job allocation 7\n"
					"salloc: Nodes dbg-x7k2p-[0-1] are ready for job\n");
}

Test(salloc, starting_pods_are_a_grant_waiting_for_resource_configuration)
{
	struct salloc_watch w = { .job_id = "7", .state = SALLOC_SUBMITTED };

	job(NULL, "\"phase\":\"Starting\"");
	cr_assert_str_eq(step(&w, &tj), "salloc: Granted job allocation 7\n"
					"salloc: Waiting for resource configuration\n");
	cr_assert_str_eq(step(&w, &tj), "");
	job(NULL, RUNNING);
	cr_assert_str_eq(step(&w, &tj), "salloc: Nodes dbg-x7k2p-[0-1] are ready for job\n");
	cr_assert_eq(w.state, SALLOC_GRANTED);
}

Test(salloc, a_job_deleted_or_gone_is_revoked_once)
{
	struct salloc_watch w = { .job_id = "7", .state = SALLOC_PENDING };

	cr_assert_str_eq(step(&w, NULL), "salloc: Job allocation 7 has been revoked.\n");
	cr_assert_eq(w.state, SALLOC_REVOKED);
	cr_assert_str_eq(step(&w, NULL), "");
	w.state = SALLOC_GRANTED;
	job(NULL, RUNNING);
	tj.meta.deleting = true;
	cr_assert_str_eq(step(&w, &tj), "salloc: Job allocation 7 has been revoked.\n",
			 "scancel while the command runs");
}

Test(salloc, a_time_limit_and_a_failure_are_said_as_salloc_says_them)
{
	struct salloc_watch w = { .job_id = "7", .state = SALLOC_GRANTED };

	job(NULL, "\"phase\":\"Failed\",\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\","
	    "\"reason\":\"DeadlineExceeded\",\"message\":\"m\","
	    "\"lastTransitionTime\":\"2026-12-01T10:00:00Z\"}]");
	cr_assert_str_eq(step(&w, &tj), "salloc: Job 7 has exceeded its time limit and its "
					"allocation has been revoked.\n");
	w.state = SALLOC_PENDING;
	job(NULL, "\"phase\":\"Failed\",\"message\":\"volume ckpt not found\"");
	cr_assert_str_eq(step(&w, &tj), "salloc: Job allocation 7 has been revoked.\n"
					"salloc: error: volume ckpt not found\n");
}

static const char *env_of(const struct salloc_env *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < env->len; i++)
		if (!strncmp(env->items[i], name, n) && env->items[i][n] == '=')
			return env->items[i] + n + 1;
	return NULL;
}

Test(salloc, the_command_gets_the_variables_salloc_sets)
{
	struct salloc_env env;

	job("\"queue\":\"research\"", RUNNING);
	cr_assert_eq(salloc_env_build(&tj, "bash", "/home/a", "login1", &env), 0);
	cr_assert_str_eq(env_of(&env, "SLURM_JOB_ID"), "4242");
	cr_assert_str_eq(env_of(&env, "SLURM_JOBID"), "4242");
	cr_assert_str_eq(env_of(&env, "SLURM_JOB_NAME"), "bash");
	cr_assert_str_eq(env_of(&env, "SLURM_JOB_NODELIST"), "dbg-x7k2p-[0-1]");
	cr_assert_str_eq(env_of(&env, "SLURM_NODELIST"), "dbg-x7k2p-[0-1]");
	cr_assert_str_eq(env_of(&env, "SLURM_NNODES"), "2");
	cr_assert_str_eq(env_of(&env, "SLURM_JOB_NUM_NODES"), "2");
	cr_assert_str_eq(env_of(&env, "SLURM_JOB_ACCOUNT"), "ml");
	cr_assert_str_eq(env_of(&env, "SLURM_JOB_PARTITION"), "research");
	cr_assert_str_eq(env_of(&env, "SLURM_SUBMIT_DIR"), "/home/a");
	cr_assert_str_eq(env_of(&env, "SLURM_SUBMIT_HOST"), "login1");
	salloc_env_release(&env);
	job(NULL, RUNNING);
	cr_assert_eq(salloc_env_build(&tj, "bash", "/", "h", &env), 0);
	cr_assert_null(env_of(&env, "SLURM_JOB_PARTITION"), "no queue, no partition");
	salloc_env_release(&env);
}

Test(salloc, the_exit_code_is_the_commands_and_a_users_signal_is_success)
{
	cr_assert_eq(salloc_exit_code(3 << 8), 3);
	cr_assert_eq(salloc_exit_code(0), 0);
	cr_assert_eq(salloc_exit_code(SIGINT), 0);
	cr_assert_eq(salloc_exit_code(SIGHUP), 0);
	cr_assert_eq(salloc_exit_code(SIGKILL), 0);
	cr_assert_eq(salloc_exit_code(SIGSEGV), 1);
}

Test(salloc, the_default_name_is_the_commands_base_name_as_a_label_with_a_suffix)
{
	char *name = salloc_default_name("/bin/bash", "x7k2p");

	cr_assert_str_eq(name, "bash-x7k2p");
	free(name);
	name = salloc_default_name("Train_Model.py", "b2c4d");
	cr_assert_str_eq(name, "train-model-py-b2c4d");
	free(name);
	name = salloc_default_name("a-very-long-command-name-that-goes-on-and-on-and-on-forever",
				   "b2c4d");
	cr_assert_leq(strlen(name), 52, "%s", name);
	cr_assert_str_eq(name, "a-very-long-command-name-that-goes-on-and-on-a-b2c4d");
	free(name);
}

/* salloc's words split into options and the command: line split at spaces into argv. */
static struct cli_words words(const char *line, char **argv, int *argc)
{
	static char copy[512];
	struct cli_words c = { .g = { 0 } };
	char *p = copy;

	snprintf(copy, sizeof(copy), "%s", line);
	for (*argc = 0; *p; argv[(*argc)++] = p, p += strcspn(p, " "), *p ? *p++ = 0 : 0)
		;
	return c;
}

Test(salloc, options_are_sbatchs_until_the_command_and_every_later_word_is_the_commands)
{
	char *argv[32];
	int argc;
	struct cli_words c = words("-N 2 --gpus=h100:8 --time 30 --image img:1 python3 -N -c x",
				   argv, &argc);

	cr_assert_eq(cli_words_parse(&c, "cadre salloc", CLI_WORDS_COMMAND, argv, argc, stderr), 0);
	cr_assert_eq(c.n_opts, 5);
	cr_assert_str_eq(c.opts[0], "-N");
	cr_assert_str_eq(c.opts[1], "2");
	cr_assert_str_eq(c.opts[2], "--gpus=h100:8");
	cr_assert_str_eq(c.opts[3], "--time");
	cr_assert_str_eq(c.opts[4], "30");
	cr_assert_str_eq(c.image, "img:1");
	cr_assert_eq(c.n_command, 4);
	cr_assert_str_eq(c.command[0], "python3");
	cr_assert_str_eq(c.command[1], "-N", "the command's -N stays the command's");
	cli_words_release(&c);

	c = words("-J dbg -- sh -c true", argv, &argc);
	cr_assert_eq(cli_words_parse(&c, "cadre salloc", CLI_WORDS_COMMAND, argv, argc, stderr), 0);
	cr_assert_eq(c.n_opts, 2);
	cr_assert_eq(c.n_command, 3);
	cr_assert_str_eq(c.command[0], "sh");
	cli_words_release(&c);

	c = words("-N1 --namespace ml", argv, &argc);
	cr_assert_eq(cli_words_parse(&c, "cadre salloc", CLI_WORDS_COMMAND, argv, argc, stderr), 0);
	cr_assert_eq(c.n_command, 0, "no command: $SHELL");
	cr_assert_str_eq(c.g.namespace, "ml");
	cli_words_release(&c);
}

Test(salloc, the_options_become_the_jobs_spec_through_sbatchs_converter)
{
	char *argv[32];
	int argc;
	struct cli_words c = words("-N 2 --gpus-per-node=h100:8 --time=30 -p research", argv,
				   &argc);
	struct convert_result r;

	convert_result_init(&r);
	cr_assert_eq(cli_words_parse(&c, "cadre salloc", CLI_WORDS_COMMAND, argv, argc, stderr), 0);
	cr_assert_eq(cli_words_convert(&c, "cadre salloc", "salloc", SALLOC_HOLD_SCRIPT,
				       strlen(SALLOC_HOLD_SCRIPT), "bash-x7k2p", &r, stderr), 0);
	cr_assert_str_eq(r.tj.meta.name, "bash-x7k2p");
	cr_assert_eq(r.tj.spec.num_nodes, 2);
	cr_assert_str_eq(r.tj.spec.resources.accelerators, "h100:8");
	cr_assert_eq(r.tj.spec.active_deadline_seconds, 1800);
	cr_assert_str_eq(r.tj.spec.partition, "research");
	cr_assert(strstr(r.tj.spec.run, "while :; do sleep 3600; done"), "holds: %s", r.tj.spec.run);
	convert_result_release(&r);
	cli_words_release(&c);
}

Test(salloc, bad_usage_is_one_line_and_exit_2_before_any_request)
{
	cr_assert_eq(clirun(".", "salloc --parsable", NULL, &out, &err), CLI_EXIT_USAGE);
	cr_assert_str_eq(err, "cadre salloc: unknown flag: --parsable (it is sbatch's)\n");
	cr_assert_eq(clirun(".", "salloc --time=soon", NULL, &out, &err), CLI_EXIT_USAGE);
	cr_assert(strstr(err, "--time"), "%s", err);
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
	cr_assert_eq(clirun(".", "salloc --submit-timeout x", NULL, &out, &err), CLI_EXIT_USAGE);
	cr_assert_str_eq(err, "cadre salloc: --submit-timeout \"x\": not a number of seconds\n");
	cr_assert_str_eq(out, "");
}

Test(salloc, an_unreachable_api_server_is_one_line_and_exit_1)
{
	char path[] = "/tmp/cadre-salloc-kc-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fprintf(f, "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n"
		   "  cluster:\n    server: http://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n"
		   "    cluster: c\n    user: u\nusers:\n- name: u\n  user:\n    token: t\n");
	fclose(f);
	cr_assert_eq(clirun(".", "salloc --kubeconfig KC --image i -N 1", path, &out, &err),
		     CLI_EXIT_FAILED);
	unlink(path);
	cr_assert(strstr(err, "cadre salloc: cannot reach the API server http://127.0.0.1:1"),
		  "%s", err);
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
}

Test(salloc, help_says_how_and_has_examples)
{
	cr_assert_eq(clirun(".", "salloc --help", NULL, &out, &err), CLI_EXIT_OK);
	cr_assert(strstr(out, "Usage: cadre salloc [sbatch options] [COMMAND [ARGS...]]"), "%s", out);
	cr_assert(strstr(out, "Examples:\n  cadre salloc -N 2"), "%s", out);
}

/* ---- completion ---- */

TestSuite(completion, .fini = teardown);

Test(completion, every_command_has_help_with_an_example)
{
	const char *name, *summary, *help;
	char line[64];
	size_t i;

	for (i = 0; cli_command_at(i, &name, &summary, &help); i++) {
		const char *examples = strstr(help, "\nExamples:\n");

		snprintf(line, sizeof(line), "cadre %s", name);
		cr_assert(examples && strstr(examples, line), "%s has no example", name);
		snprintf(line, sizeof(line), "%s --help", name);
		cr_assert_eq(clirun(".", line, NULL, &out, &err), CLI_EXIT_OK, "%s", name);
		cr_assert(strstr(out, "Usage: cadre "), "%s: %s", name, out);
	}
	cr_assert_geq(i, 11);
}

Test(completion, an_unknown_shell_is_one_line_and_exit_2)
{
	cr_assert_eq(clirun(".", "completion fish", NULL, &out, &err), CLI_EXIT_USAGE);
	cr_assert_str_eq(err, "cadre completion: the shells are bash and zsh (see cadre "
			      "completion --help)\n");
	cr_assert_eq(clirun(".", "completion", NULL, &out, &err), CLI_EXIT_USAGE);
}

/*
 * What bash completes for the words of line, the last one being completed,
 * with the script cadre completion bash prints loaded; a "cadre" on PATH that
 * prints squeue's -o '%i %j' lines stands for the cluster.
 */
static char *complete_bash(const char *script, const char *line)
{
	char dir[] = "/tmp/cadre-compl-XXXXXX", cmd[8192], path[128];
	static char result[4096];
	FILE *f, *p;
	size_t n;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/comp.bash", dir);
	cr_assert((f = fopen(path, "w")));
	fputs(script, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/cadre", dir);
	cr_assert((f = fopen(path, "w")));
	fputs("#!/bin/sh\necho \"args: $*\" >&2\n"
	      "[ \"$*\" = \"--namespace ml squeue -h -t all -o %i %j\" ] && printf '4242 llama\\n4243 bert\\n'\n"
	      "exit 0\n", f);
	fclose(f);
	chmod(path, 0755);
	snprintf(cmd, sizeof(cmd), "cd %s && PATH=%s:$PATH bash -c 'source ./comp.bash; "
		 "COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _cadre; "
		 "echo \"${COMPREPLY[*]}\"' 2>/dev/null; rm -rf %s", dir, dir, line, dir);
	cr_assert((p = popen(cmd, "r")));
	n = fread(result, 1, sizeof(result) - 1, p);
	result[n] = 0;
	pclose(p);
	if (n && result[n - 1] == '\n')
		result[n - 1] = 0;
	return result;
}

Test(completion, bash_completes_commands_flags_sbatch_options_and_job_names)
{
	cr_assert_eq(clirun(".", "completion bash", NULL, &out, &err), CLI_EXIT_OK);
	cr_assert(strstr(out, "complete -F _cadre cadre kubectl-cadre\n"), "%s", out);
	cr_assert_str_eq(complete_bash(out, "cadre sa"), "sacct salloc");
	cr_assert_str_eq(complete_bash(out, "cadre -n ml sq"), "squeue", "-n's value is no command");
	cr_assert_str_eq(complete_bash(out, "cadre squeue --nohe"), "--noheader");
	cr_assert_str_eq(complete_bash(out, "cadre salloc --gpus-per-n"), "--gpus-per-node");
	cr_assert_str_eq(complete_bash(out, "cadre sbatch --parsa"), "--parsable");
	cr_assert_str_eq(complete_bash(out, "cadre salloc --tim"), "--time",
			 "once, though both the help and sbatch's table name it");
	cr_assert_str_eq(complete_bash(out, "cadre completion z"), "zsh");
	cr_assert_str_eq(complete_bash(out, "cadre --namespace ml scancel \"\""),
			 "4242 llama 4243 bert", "the namespace's jobs, asked with its namespace");
	cr_assert_str_eq(complete_bash(out, "cadre --namespace ml status ll"), "llama");
}

Test(completion, zsh_describes_commands_and_lists_each_commands_flags)
{
	cr_assert_eq(clirun(".", "completion zsh", NULL, &out, &err), CLI_EXIT_OK);
	cr_assert(!strncmp(out, "#compdef cadre kubectl-cadre\n", 29), "%s", out);
	cr_assert(strstr(out, "\t\t\t\t'status:one job as a person reads it\\: state and why"),
		  "':' escaped for _describe: %s", out);
	cr_assert(strstr(out, "\t(squeue) opts='-u --user --me -j --jobs"), "%s", out);
	cr_assert(strstr(out, "compdef _cadre cadre kubectl-cadre\n"), "%s", out);
	cr_assert(strstr(out, "squeue -h -t all -o '%i %j'"), "%s", out);
}

Test(completion, the_zsh_script_is_valid_zsh)
{
	char path[] = "/tmp/cadre-zsh-XXXXXX", cmd[128];
	int fd;
	FILE *f;

	if (system("command -v zsh >/dev/null 2>&1"))
		cr_skip_test("no zsh here");
	cr_assert_eq(clirun(".", "completion zsh", NULL, &out, &err), CLI_EXIT_OK);
	cr_assert((fd = mkstemp(path)) >= 0);
	cr_assert((f = fdopen(fd, "w")));
	fputs(out, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "zsh -n %s", path);
	cr_assert_eq(system(cmd), 0, "zsh -n refuses the script");
	unlink(path);
}
