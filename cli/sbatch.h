/*
 * sbatch.h - internal to cli/: what cadre sbatch asks the cluster before it
 * submits a job, and its --wait (cli/sbatch_check.c).
 */
#ifndef CADRE_CLI_SBATCH_H
#define CADRE_CLI_SBATCH_H

#include <stdio.h>

#include "cli/kube.h"

struct convert_result;

/* How often sbatch --wait reads the job. */
#define CLI_SBATCH_WAIT_POLL_S 2

/*
 * Check r, the converted job, against what the cluster holds, as slurmctld
 * checks a submission: its Partition (named, or the default one) exists
 * ("sbatch: error: invalid partition specified: NAME" otherwise), its time
 * limit is within the partition's MaxTime, and every job its dependency
 * names exists ("Job dependency problem" otherwise); a job named by name
 * is written as its id. The note about the image is made to say which
 * default the job gets. Partitions the user may not read are not checked
 * (the controller checks them). 0, or the exit code after one line on err.
 */
int cli_sbatch_check(struct cli_kube *k, struct convert_result *r, FILE *err);

/*
 * sbatch --wait: read job name until it ends; its exit code (0 when it
 * succeeded; the failed rank's code, or 1; for an array, the highest of
 * its elements'). A job deleted meanwhile, or a read that fails, is one
 * line and CLI_EXIT_FAILED.
 */
int cli_sbatch_wait(struct cli_kube *k, const char *name, FILE *err);

#endif
