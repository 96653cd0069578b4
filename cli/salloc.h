/*
 * salloc.h - internal to cli/: the pure parts of `cadre salloc` (cli/salloc.c),
 * exposed for their tests: the job's default name, salloc's lines as the
 * job moves from submitted to granted to revoked, and the SLURM_*
 * variables the command runs with.
 */
#ifndef CADRE_CLI_SALLOC_H
#define CADRE_CLI_SALLOC_H

#include <stdbool.h>
#include <stddef.h>

struct buf;
struct trainingjob;

/*
 * The batch script an allocation runs on every node: nothing but a wait,
 * so the nodes are held until the job is deleted or its time limit ends it.
 */
#define SALLOC_HOLD_SCRIPT                                                   \
	"#!/bin/sh\n"                                                        \
	"# cadre salloc: hold the nodes until the job is cancelled or times out\n" \
	"while :; do sleep 3600; done\n"

/*
 * The job's name when --job-name does not give one: the command's base
 * name as a DNS label, cut to leave room, then "-" and suffix (five
 * characters, as a generateName suffix), so that two sallocs of bash do
 * not collide: "bash-x7k2p". A new string; NULL when out of memory.
 */
char *salloc_default_name(const char *command, const char *suffix);

/* Where an allocation is, as salloc knows it. */
enum salloc_state {
	SALLOC_SUBMITTED,    /* created, has its id, nothing said yet */
	SALLOC_PENDING,      /* "Pending job allocation N" said */
	SALLOC_CONFIGURING,  /* granted, the pods are being readied */
	SALLOC_GRANTED,      /* running: the command may run */
	SALLOC_REVOKED,      /* deleted, ended or timed out: nothing to relinquish */
};

struct salloc_watch {
	const char *job_id;  /* borrowed: status.jobId */
	enum salloc_state state;
};

/*
 * Append to msgs salloc's lines (src/salloc/salloc.c, src/api/allocate.c)
 * for what tj now is (NULL: the job is gone), and move w->state on:
 *   waiting     (Pending for its Volumes, Admitted=False, Suspended, Restarting;
 *               not a Queued job that has not been looked at yet)
 *               "salloc: Pending job allocation N"
 *               "salloc: job N queued and waiting for resources"
 *   starting    ("salloc: job N has been allocated resources", after pending)
 *               "salloc: Granted job allocation N"
 *               "salloc: Waiting for resource configuration"
 *   running     the same grant lines unless said, then
 *               "salloc: Nodes HOSTLIST are ready for job"
 *   gone, being deleted, ended
 *               "salloc: Job allocation N has been revoked."
 *               (a time limit: "salloc: Job N has exceeded its time limit and
 *               its allocation has been revoked."), then for a failure
 *               with a message "salloc: error: MESSAGE"
 * Each line ends "\n". Returns 0 or an error of buf_add.
 */
int salloc_watch_step(struct salloc_watch *w, const struct trainingjob *tj, struct buf *msgs);

/*
 * The variables salloc sets for its command (env_array_for_job): SLURM_JOB_ID
 * and SLURM_JOBID, SLURM_JOB_NAME (name), SLURM_JOB_NODELIST and SLURM_NODELIST
 * (the compressed host list), SLURM_JOB_NUM_NODES and SLURM_NNODES,
 * SLURM_JOB_ACCOUNT (the namespace, as sacct's Account), SLURM_JOB_PARTITION
 * (spec.queue, only when set), SLURM_SUBMIT_DIR and SLURM_SUBMIT_HOST, as
 * "NAME=value" entries in env->items (owned).
 */
#define SALLOC_ENV_MAX 16
struct salloc_env {
	char *items[SALLOC_ENV_MAX];
	size_t len;
};

int salloc_env_build(const struct trainingjob *tj, const char *name, const char *submit_dir,
		     const char *submit_host, struct salloc_env *env);
void salloc_env_release(struct salloc_env *env);

/*
 * salloc's exit code for a command's wait status (src/salloc/salloc.c):
 * its exit code; 0 when a signal a person sends ended it (SIGHUP, SIGINT,
 * SIGQUIT, SIGKILL); 1 for any other signal.
 */
int salloc_exit_code(int wait_status);

#endif
