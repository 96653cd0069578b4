/*
 * slurmfmt.h - internal to cli/: a TrainingJob as squeue, sacct and
 * sky jobs queue print a job, byte for byte where Slurm's tools define the
 * bytes (docs/cli.md, "The daily commands").
 *
 * Pure functions: a job and the time "now" in, text out; no I/O.
 *
 * squeue fields (%[.][N]X): N is the width, the text is cut to N bytes
 * keeping its start; with "." it is right-justified, else left-justified;
 * no N: the text as it is. A host list (%N, %R of a running job) is not
 * cut when right-justified, as squeue's _print_nodes. sacct fields: a width, negative for left
 * justification; text longer than the width is cut to it and its last byte
 * becomes "+" (a number or duration is never cut, a date is cut without
 * the "+", and a header is cut like a date, as print_fields.c does);
 * parsable output prints the whole text and a "|".
 */
#ifndef CADRE_CLI_SLURMFMT_H
#define CADRE_CLI_SLURMFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/labels.h"

struct buf;
struct trainingjob;

/* squeue's default -o and -l formats (src/squeue/opts.c). */
#define SLURM_SQUEUE_FORMAT "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
#define SLURM_SQUEUE_FORMAT_LONG "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
/* sacct's DEFAULT_FIELDS (src/sacct/sacct.h). */
#define SLURM_SACCT_FIELDS "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode"


/*
 * squeue's %M: [days-][hours:]minutes:seconds, days and hours only when
 * needed ("0:00", "0:59", "1:00:00", "1-00:00:00"); "INVALID" below 0 or
 * above 365 days, as squeue prints it.
 */
void slurm_time_used(int64_t seconds, char out[32]);

/* sacct's Elapsed: [days-]hh:mm:ss, zero-padded ("00:00:59", "1-00:00:00"). */
void slurm_elapsed(int64_t seconds, char out[32]);

/* A time limit as squeue's %l prints it: "UNLIMITED" or as slurm_time_used. */
void slurm_time_limit(const struct trainingjob *tj, char out[32]);

/* How long the job has run: from status.startTime to completionTime or now; 0 if not started. */
int64_t slurm_job_elapsed(const struct trainingjob *tj, int64_t now);

/*
 * The start of the run Slurm's tools show (squeue's TIME, sacct's Start and
 * Elapsed, scontrol's RunTime and StartTime): status.startTime (the first
 * start), but 0 while the job waits again after a requeue, a preemption or
 * a restart (PD, RQ): job_requeue_internal clears start_time, making it a
 * new pending job, and squeue's job_time_used counts nothing for one.
 */
int64_t slurm_start_time(const struct trainingjob *tj);

/* slurm_job_elapsed of the run slurm_start_time began: 0 while the job is pending. */
int64_t slurm_run_time(const struct trainingjob *tj, int64_t now);

/*
 * The job's state as Slurm names it. compact: squeue's %t ("PD", "R",
 * "CG", ...); else the long name (squeue %T, sacct State): PENDING,
 * CONFIGURING (Starting), RUNNING, REQUEUED (Restarting), SUSPENDED,
 * COMPLETED, FAILED, TIMEOUT (Failed for DeadlineExceeded), PREEMPTED
 * (slurm_preempted), and for a job being deleted COMPLETING in squeue,
 * CANCELLED in sacct (acct true). Static strings.
 */
const char *slurm_state(const struct trainingjob *tj, bool compact, bool acct);

/*
 * Whether tj ended because a job of a higher Partition tier preempted it
 * and its partition's preemptMode is Cancel (phase Failed, reason
 * Preempted; docs/design.md 3.5): Slurm's PR / PREEMPTED. A victim that is
 * requeued instead is REQUEUED, then PENDING again, as Slurm's.
 */
bool slurm_preempted(const struct trainingjob *tj);

/*
 * Whether every item of the comma-separated list is a state slurm_state
 * can return (compact or long, any case) or "all"; *bad is the first that
 * is not (borrowed from list, its length in *bad_len).
 */
bool slurm_states_valid(const char *list, const char **bad, size_t *bad_len);

/*
 * Why a job that has not started waits, as squeue's reason: Resources
 * (InsufficientCapacity), Priority (QueuedBehind), QOSWaitingForKueue
 * (WaitingForKueue), VolumeNotFound / VolumeNotBound (its Volumes),
 * NotManagedByKueue, JobHeldUser (suspended), BeginTime (no status yet:
 * the controller has not seen it), Resources for a preemptor waiting for
 * its victims (Preempting), else the Admitted condition's reason, else
 * "None" as Slurm prints it, a preempted job's too. Static or borrowed
 * from tj.
 */
const char *slurm_reason(const struct trainingjob *tj);

/* The user: the cadre.dev/submitted-by annotation, else the namespace, else "". Borrowed. */
const char *slurm_user(const struct trainingjob *tj);

/* The Partition (status.partition, else spec.partition), else spec.queue, else "-". Borrowed. */
const char *slurm_partition(const struct trainingjob *tj);

/*
 * Job arrays (docs/design.md 12). An array job's own row stands for its
 * elements still waiting to start, as Slurm's pending array record does;
 * each started element is a job of its own.
 *
 * slurm_is_element: tj is an array's element (its labels and annotations).
 * slurm_array_pending: appends to out (may be NULL) the pending indices as
 *   squeue prints them ("4-99%8"); 1 when there are any, 0 when none (or tj
 *   is no array, or ended), negative on error.
 * slurm_row_shown: false for an array job with nothing pending.
 * slurm_job_id: squeue's %i and sacct's JobID: "123_4" for an element,
 *   "123_[4-99%8]" for an array's pending row, else status.jobId.
 * slurm_job_name: the Slurm job name (an element's is its array's).
 * slurm_job_matches: word names tj as squeue -j and sacct -j read ids: its
 *   own id, its array's id, or "ARRAY_INDEX".
 */
bool slurm_is_element(const struct trainingjob *tj);
int slurm_array_pending(const struct trainingjob *tj, struct buf *out);
bool slurm_row_shown(const struct trainingjob *tj);
int slurm_job_id(const struct trainingjob *tj, struct buf *out);
const char *slurm_job_name(const struct trainingjob *tj);
bool slurm_job_matches(const struct trainingjob *tj, const char *word);
/* Whether one of the comma-separated ids of list names tj (slurm_job_matches). */
bool slurm_jobs_match(const struct trainingjob *tj, const char *list);

/*
 * The job as `scontrol show job` prints it (src/scontrol/info_job.c
 * _sprint_job_info): key=value lines indented three spaces, a blank line
 * after; appended to out. What Kubernetes has no word for is Slurm's value
 * for none (uid 0, QOS normal, (null)). 0 or CADRE_ENOMEM/CADRE_ETOOBIG.
 */
int slurm_show_job(const struct trainingjob *tj, int64_t now, struct buf *out);

/*
 * ExitCode "exit:signal": a failed job's lastFailure code, a code above 128
 * as the signal (137: "0:9"); "0:0" for any other job, a preempted one too.
 */
void slurm_exit_code(const struct trainingjob *tj, char out[24]);

/*
 * The host names of the ranks that have a node (<job>-<rank>, what
 * $SLURM_JOB_NODELIST names), compressed as Slurm writes them, appended to
 * out. 0 or the error of hostlist_compress/buf_add.
 */
int slurm_nodelist(const struct trainingjob *tj, struct buf *out);

/* One squeue field: text cut to width, right-justified when right; width < 0: whole text. */
int slurm_squeue_field(struct buf *out, const char *text, int width, bool right);

/*
 * Check an squeue -o format: every "%" followed by [.][digits] and a field
 * letter slurm_squeue_row knows (i j u t T M D R N r P l a %). Returns 0 or
 * CADRE_EINVAL with the offending byte offset in *bad.
 */
int slurm_squeue_check(const char *format, size_t *bad);

/* The header line of format (no newline): JOBID PARTITION NAME ... */
int slurm_squeue_header(const char *format, struct buf *out);

/* tj's line of format at now (no newline). 0, CADRE_EINVAL (bad format), CADRE_ENOMEM. */
int slurm_squeue_row(const char *format, const struct trainingjob *tj, int64_t now,
		     struct buf *out);

/* How sacct separates its fields. */
enum slurm_sacct_mode {
	SLURM_SACCT_TABLE,      /* fixed widths, one space after each field */
	SLURM_SACCT_PARSABLE,   /* -p: "|" after each field */
	SLURM_SACCT_PARSABLE2,  /* -P: "|" between fields */
};

/* One field of an sacct -o list. */
struct slurm_sacct_field {
	int id;     /* internal */
	int width;  /* negative: left-justified */
};

#define SLURM_SACCT_MAX_FIELDS 32

/*
 * Parse an sacct -o list ("JobID,State", "jobname%20", case-insensitive)
 * into fields[0..*n). Returns 0, or CADRE_EINVAL with the first unknown
 * name's offset in *bad (a width of 0 or more than 3 digits too).
 */
int slurm_sacct_parse(const char *list, struct slurm_sacct_field *fields, size_t *n, size_t *bad);

/* The header line and, in table mode, the dashes line (each ending "\n"). */
int slurm_sacct_header(const struct slurm_sacct_field *fields, size_t n,
		       enum slurm_sacct_mode mode, struct buf *out);

/* tj's line (ending "\n"). */
int slurm_sacct_row(const struct slurm_sacct_field *fields, size_t n, enum slurm_sacct_mode mode,
		    const struct trainingjob *tj, int64_t now, struct buf *out);

/* One sacct string field in mode: cut with "+", justified by the sign of width. */
int slurm_sacct_cell(struct buf *out, const char *text, int width, enum slurm_sacct_mode mode,
		     bool last);

/*
 * A duration as sky jobs queue prints it: "-" for none, "12s", "5m 3s",
 * "2h 5m", "3d 4h" (the two largest units).
 */
void sky_duration(int64_t seconds, bool known, char out[64]);

/* sky jobs queue's STATUS: PENDING, STARTING, RUNNING, RECOVERING, CANCELLING, SUCCEEDED, FAILED. */
const char *sky_status(const struct trainingjob *tj);

/* "2x(H100:8)", "1x(cpus=4)", "2x[CPU]": numNodes and the resources per node, appended. */
int sky_resources(const struct trainingjob *tj, struct buf *out);

/* A submission time as sky prints it: "12 secs ago", "5 mins ago", "3 hrs ago", "2 days ago". */
void sky_ago(int64_t then, int64_t now, char out[32]);

#endif
