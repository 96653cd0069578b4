/*
 * slurm.h - the grammars Slurm users write and cadre's API carries as text:
 * time limits ("1-12:00:00"), job array index sets ("0-99%8",
 * "1,3,5-7", "0-15:4") and job dependencies ("afterok:123:prep?singleton").
 *
 * They live in api/ because the same text is read by the converter (from
 * #SBATCH lines), by the API's validation (spec.array, a Partition's
 * defaultTime), by the controller and by the CLI, and each must read it
 * the same way. Pure: no I/O, no globals; not thread-safe per object.
 */
#ifndef CADRE_API_SLURM_H
#define CADRE_API_SLURM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf;

/*
 * A time limit in every form sbatch's --time and slurm.conf's DefaultTime
 * and MaxTime read (src/common/parse_time.c, time_str2mins): "MM",
 * "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS", "UNLIMITED",
 * "INFINITE". Slurm keeps whole minutes, rounding seconds up, and so does
 * this. *seconds is -1 for no limit ("UNLIMITED", "INFINITE", "0").
 * 0 or CADRE_EPARSE.
 */
int slurm_time_parse(const char *text, int64_t *seconds);

/*
 * Seconds as Slurm's mins2time_str and secs2time_str print them
 * (scontrol's TimeLimit and RunTime): "HH:MM:SS", or "D-HH:MM:SS" past a
 * day; "UNLIMITED" for a negative value.
 */
void slurm_time_hms(int64_t seconds, char out[32]);

/*
 * Seconds as sinfo prints a partition's TIMELIMIT (print.c _print_secs):
 * "M:SS", "H:MM:SS", "D-HH:MM:SS"; "infinite" for a negative value.
 */
void slurm_time_sinfo(int64_t seconds, char out[32]);

/* ---- job arrays (sbatch --array) ---- */

/* The largest index an array may have is one less than this (Slurm's MaxArraySize). */
#define SLURM_DEFAULT_MAX_ARRAY_SIZE 1001
/* What the API accepts at all, whatever the controller is configured to run. */
#define SLURM_ARRAY_INDEX_LIMIT 4000000

/*
 * An array's indices, sorted and distinct, and its throttle: "0-99%8" is
 * 0..99 with at most 8 elements running at once (max_running 0: no limit).
 */
struct slurm_array {
	int32_t *index;     /* owned, ascending */
	size_t n;
	int32_t max_running;
	int32_t step;       /* SLURM_ARRAY_TASK_STEP: the ":step" of a single range, else 1 */
};

void slurm_array_init(struct slurm_array *a);
void slurm_array_release(struct slurm_array *a);

/*
 * Read an --array value: comma-separated items, each "N", "A-B" or
 * "A-B:S" (S >= 1), then an optional "%M" (M >= 1), as sbatch reads it.
 * Indices are 0..limit-1 (limit: the configured MaxArraySize, at most
 * SLURM_ARRAY_INDEX_LIMIT). On CADRE_EPARSE, why (at least 128 bytes) holds a
 * phrase for a person; CADRE_ENOMEM. Release a whatever it returns.
 */
int slurm_array_parse(const char *text, int32_t limit, struct slurm_array *a, char *why,
		      size_t why_size);

/* Whether index is one of a's. */
bool slurm_array_has(const struct slurm_array *a, int32_t index);

/*
 * A set of indices (ascending, distinct) as Slurm's bit_fmt writes it:
 * "0-3,5,7-9" ("" for none), appended to out. 0 or an error of buf_add.
 */
int slurm_indices_format(const int32_t *index, size_t n, struct buf *out);

/*
 * The pending part of an array as squeue and scontrol print it
 * (xlate_array_task_str in src/common/slurm_protocol_defs.c): a step
 * "A-B:S" when the indices are more than 5, span more than 10 and are
 * evenly spaced by S > 1; else bit_fmt's ranges cut to 63 bytes, the
 * last three "..." when longer than 61; then "%M" when max_running > 0.
 * Appended to out.
 */
int slurm_array_task_str(const int32_t *index, size_t n, int32_t max_running,
			 struct buf *out);

/*
 * Read a ranged set as slurm_indices_format writes it ("0-3,5"; "" is
 * none) into a new ascending array (*out NULL when none). At most
 * SLURM_ARRAY_INDEX_LIMIT entries. 0, CADRE_EPARSE, CADRE_ENOMEM.
 */
int slurm_indices_parse(const char *text, int32_t **out, size_t *n);

/*
 * Mark set[i] for each index i < size of a ranged set as
 * slurm_indices_parse reads it; indices from size on are left out. Time
 * linear in the text's length plus size, whatever the ranges span or how
 * often they overlap (cadre.dev/cancel-tasks is anyone's annotation).
 * 0, CADRE_EPARSE (nothing marked), CADRE_ENOMEM.
 */
int slurm_indices_mark(const char *text, unsigned char *set, size_t size);

/* ---- job dependencies (sbatch --dependency) ---- */

enum slurm_dep_type {
	SLURM_DEP_AFTER = 0,    /* the job has started (or ended) */
	SLURM_DEP_AFTERANY,     /* the job has ended, whatever its end */
	SLURM_DEP_AFTEROK,      /* the job has succeeded */
	SLURM_DEP_AFTERNOTOK,   /* the job has failed, timed out or been cancelled */
	SLURM_DEP_SINGLETON,    /* no other job of the same name and user runs */
};

struct slurm_dep_item {
	enum slurm_dep_type type;
	char **jobs;            /* owned: Slurm job ids ("123", "123_4") or job names */
	size_t n_jobs;          /* 0 for singleton */
};

struct slurm_dep {
	bool any;               /* '?': one item satisfied is enough; else every item */
	struct slurm_dep_item *items;  /* owned */
	size_t n_items;
};

void slurm_dep_init(struct slurm_dep *d);
void slurm_dep_release(struct slurm_dep *d);

/*
 * Read a --dependency value: items separated by ',' (all) or '?' (any),
 * never both; each "TYPE:JOB[:JOB...]" or "singleton". TYPE is after,
 * afterany, afterok or afternotok; a JOB is a job id ("123"), an array
 * element ("123_4") or a job name (a DNS label). aftercorr, afterburstbuffer
 * and "+time" delays are refused: cadre cannot honour them. On CADRE_EPARSE
 * why holds a phrase; CADRE_ENOMEM. Release d whatever it returns.
 */
int slurm_dep_parse(const char *text, struct slurm_dep *d, char *why, size_t why_size);

/* "after", "afterany", ...; static. */
const char *slurm_dep_type_name(enum slurm_dep_type type);

/* The type named name, or -1. */
int slurm_dep_type_parse(const char *name);

/* d as sbatch's --dependency text ("afterok:123:prep,singleton"), appended to out. */
int slurm_dep_format(const struct slurm_dep *d, struct buf *out);

/* Whether text is a Slurm job id: 1 to 10 digits, not starting with 0, optionally "_N". */
bool slurm_job_id_text(const char *text);

#endif
