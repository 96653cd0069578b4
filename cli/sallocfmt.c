/*
 * sallocfmt.c - the pure parts of cadre salloc: the default name, salloc's
 * lines as an allocation goes from pending to granted to revoked, the
 * SLURM_* variables and the exit code (contracts in cli/salloc.h).
 */
#include "cli/salloc.h"

#include "api/trainingjob.h"
#include "base/buf.h"
#include "base/err.h"
#include "cli/slurmfmt.h"
#include "convert/convert.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* A job's name is at most 52 bytes (convert_job_name); "-" and the suffix take 6. */
#define NAME_MAX_BASE 46

char *salloc_default_name(const char *command, const char *suffix)
{
	const char *base = strrchr(command, '/');
	char *label, *name = NULL;
	size_t len;

	if (!(label = convert_job_name(base ? base + 1 : command)))
		return NULL;
	len = strlen(label);
	len = len > NAME_MAX_BASE ? NAME_MAX_BASE : len;
	while (len && label[len - 1] == '-')
		len--;  /* a cut can leave a trailing '-' before ours */
	if ((name = malloc(len + strlen(suffix) + 2)))
		snprintf(name, len + strlen(suffix) + 2, "%.*s-%s", (int)len, label, suffix);
	free(label);
	return name;
}

static bool timed_out(const struct trainingjob *tj)
{
	return !strcmp(slurm_state(tj, true, true), "TO");
}

static int revoked(struct salloc_watch *w, const struct trainingjob *tj, struct buf *msgs)
{
	int e;

	w->state = SALLOC_REVOKED;
	if (tj && timed_out(tj))
		e = buf_addf(msgs, "salloc: Job %s has exceeded its time limit and its allocation "
			     "has been revoked.\n", w->job_id);
	else
		e = buf_addf(msgs, "salloc: Job allocation %s has been revoked.\n", w->job_id);
	if (!e && tj && tj->status.phase == TJ_PHASE_FAILED && tj->status.message &&
	    *tj->status.message)
		e = buf_addf(msgs, "salloc: error: %s\n", tj->status.message);
	return e;
}

/* The grant, said once: after a wait, salloc first says the job got its resources. */
static int granted(struct salloc_watch *w, struct buf *msgs)
{
	int e = 0;

	if (w->state == SALLOC_PENDING)
		e = buf_addf(msgs, "salloc: job %s has been allocated resources\n", w->job_id);
	return e ? e : buf_addf(msgs, "salloc: Granted job allocation %s\n", w->job_id);
}

static int running(struct salloc_watch *w, const struct trainingjob *tj, struct buf *msgs)
{
	struct buf hosts;
	int e = 0;

	if (w->state < SALLOC_CONFIGURING)
		e = granted(w, msgs);
	buf_init(&hosts, (size_t)1 << 20);
	e = e ? e : slurm_nodelist(tj, &hosts);
	e = e ? e : buf_addf(msgs, "salloc: Nodes %s are ready for job\n", buf_str(&hosts));
	buf_release(&hosts);
	w->state = SALLOC_GRANTED;
	return e;
}

static bool waits(const struct trainingjob *tj)
{
	const struct condition *admitted = condition_find(&tj->status.conditions, "Admitted");

	return tj->status.phase == TJ_PHASE_PENDING || tj->status.phase == TJ_PHASE_SUSPENDED ||
	       tj->status.phase == TJ_PHASE_RESTARTING ||
	       (admitted && !strcmp(admitted->status, "False"));
}

int salloc_watch_step(struct salloc_watch *w, const struct trainingjob *tj, struct buf *msgs)
{
	int e = 0;

	if (w->state == SALLOC_REVOKED)
		return 0;
	if (!tj || tj->meta.deleting || tj_phase_terminal(tj->status.phase))
		return revoked(w, tj, msgs);
	switch (tj->status.phase) {
	case TJ_PHASE_RUNNING:
		if (w->state != SALLOC_GRANTED)
			e = running(w, tj, msgs);
		break;
	case TJ_PHASE_STARTING:
		if (w->state < SALLOC_CONFIGURING) {
			e = granted(w, msgs);
			e = e ? e : buf_adds(msgs, "salloc: Waiting for resource configuration\n");
			w->state = SALLOC_CONFIGURING;
		}
		break;
	default:
		/*
		 * salloc says "Pending" only for a job that is not allocated at once:
		 * here one that waits for its Volumes, was refused admission for now
		 * (Admitted=False: Resources, Priority, Kueue), is held or requeued.
		 * A job in Queued that has not been looked at yet may still fit.
		 */
		if (w->state == SALLOC_SUBMITTED && waits(tj)) {
			e = buf_addf(msgs, "salloc: Pending job allocation %s\nsalloc: job %s "
				     "queued and waiting for resources\n", w->job_id, w->job_id);
			w->state = SALLOC_PENDING;
		}
		break;
	}
	return e;
}

static int env_add(struct salloc_env *env, const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 2;

	if (env->len == SALLOC_ENV_MAX)
		return CADRE_ENOMEM;
	if (!(env->items[env->len] = malloc(n)))
		return CADRE_ENOMEM;
	snprintf(env->items[env->len++], n, "%s=%s", name, value);
	return 0;
}

int salloc_env_build(const struct trainingjob *tj, const char *name, const char *submit_dir,
		     const char *submit_host, struct salloc_env *env)
{
	const char *id = tj->status.job_id ? tj->status.job_id : "";
	struct buf hosts;
	char nodes[24];
	int e;

	memset(env, 0, sizeof(*env));
	buf_init(&hosts, (size_t)1 << 20);
	snprintf(nodes, sizeof(nodes), "%d", (int)tj->spec.num_nodes);
	e = slurm_nodelist(tj, &hosts);
	e = e ? e : env_add(env, "SLURM_JOB_ID", id);
	e = e ? e : env_add(env, "SLURM_JOBID", id);
	e = e ? e : env_add(env, "SLURM_JOB_NAME", name);
	e = e ? e : env_add(env, "SLURM_JOB_NODELIST", buf_str(&hosts));
	e = e ? e : env_add(env, "SLURM_NODELIST", buf_str(&hosts));
	e = e ? e : env_add(env, "SLURM_JOB_NUM_NODES", nodes);
	e = e ? e : env_add(env, "SLURM_NNODES", nodes);
	e = e ? e : env_add(env, "SLURM_JOB_ACCOUNT", tj->meta.namespace ? tj->meta.namespace : "");
	if (!e && tj->spec.queue && *tj->spec.queue)
		e = env_add(env, "SLURM_JOB_PARTITION", tj->spec.queue);
	e = e ? e : env_add(env, "SLURM_SUBMIT_DIR", submit_dir);
	e = e ? e : env_add(env, "SLURM_SUBMIT_HOST", submit_host);
	buf_release(&hosts);
	if (e)
		salloc_env_release(env);
	return e;
}

void salloc_env_release(struct salloc_env *env)
{
	for (size_t i = 0; i < env->len; i++)
		free(env->items[i]);
	env->len = 0;
}

int salloc_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status)) {
		switch (WTERMSIG(status)) {
		case SIGHUP:
		case SIGINT:
		case SIGQUIT:
		case SIGKILL:
			return 0;  /* most likely sent by the user (salloc.c) */
		default:
			break;
		}
	}
	return 1;
}
