/*
 * convert.h - what researchers already have, read into cadre's kinds: a
 * Slurm batch script, a SkyPilot task or a SkyPilot volume file becomes a
 * struct trainingjob or struct volume (api/), plus the list of everything
 * that could not be honoured, each with its line (docs/design.md 2.4 and 9).
 *
 * Pure: the input is a buffer, the output structs; no I/O, no globals.
 * Not thread-safe per result; distinct results are independent.
 *
 *   struct convert_result r;
 *   struct convert_input in = { .text = text, .len = len, .default_name = "train" };
 *   convert_result_init(&r);
 *   if (convert_any(&in, &r) == 0)
 *           convert_emit_yaml(&r, &yaml);        // and print r.notes
 *   else
 *           print(r.error);                      // one line, with its line number
 *   convert_result_release(&r);
 *
 * Errors: CADRE_EPARSE for input that is not what it claims to be or holds a
 * value its own tool would refuse (r.error says which line and option);
 * CADRE_ETOOBIG for input over CONVERT_MAX_INPUT; CADRE_ENOMEM.
 */
#ifndef CADRE_CONVERT_H
#define CADRE_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/trainingjob.h"
#include "api/volume.h"

#include <jansson.h>

struct buf;

/* A batch script or task file is a few KiB; 4 MiB is far past any real one. */
#define CONVERT_MAX_INPUT ((size_t)4 << 20)

/* The GPU type written when a Slurm option names none (see docs/migrating.md). */
#define CONVERT_ANY_GPU_TYPE "NVIDIA"

enum convert_kind {
	CONVERT_UNKNOWN = 0,
	CONVERT_SLURM,       /* a batch script: "#!" first line, #SBATCH lines */
	CONVERT_SKY_TASK,    /* a SkyPilot task.yaml -> TrainingJob */
	CONVERT_SKY_VOLUME,  /* a SkyPilot volume YAML -> Volume */
};

/* One thing that could not be honoured, or the error that stopped a parse. */
struct convert_note {
	int line;       /* 1-based; 0 for the file as a whole */
	int column;     /* 1-based; 0 when only the line is known */
	char *option;   /* owned: "--time", "resources.cpus"; NULL for none */
	char *message;  /* owned, one line */
};

struct convert_notes {
	struct convert_note *items;
	size_t len;
	size_t cap;
};

struct convert_input {
	const char *text;          /* borrowed; need not be NUL-terminated */
	size_t len;
	const char *default_name;  /* the job's name when the file names none (sbatch
				      uses the script's file name); NULL: "job" */
	const char *image;         /* --image: used when the file names no image */
	int32_t max_array_size;    /* --array's indices stop below this; 0: Slurm's 1001 */
	const char *topology_level; /* the level --switches and --segment mean: the
				      ClusterTopology's defaultLevel (a node label key);
				      NULL: either option is an error that sets
				      convert_result.needs_topology_level */
	const char *const *args;   /* batch scripts only: sbatch options from the command
				      line, one word each, read after the script's #SBATCH
				      lines so that they win, as sbatch's do; notes and
				      errors about them have line CONVERT_LINE_ARGS */
	size_t n_args;
	const char *submit_dir;    /* batch scripts only: the absolute directory sbatch runs in,
				      which a relative --chdir is under (cadre sbatch); NULL:
				      a relative --chdir is refused */
};

/* The "line" of a note or error about an option of convert_input.args. */
#define CONVERT_LINE_ARGS (-1)

/*
 * A local file or directory the job needs in its pods (SkyPilot's workdir
 * and file_mounts): the CLI packs and uploads it as a code bundle and adds
 * spec.code {digest, target} (docs/code.md). The converter is pure and
 * uploads nothing; cadre convert only says what cadre launch would upload.
 */
struct convert_upload {
	char *source;       /* as the file wrote it; relative to where the command runs */
	char *target;       /* absolute path in the pod */
	const char *field;  /* "workdir" or "file_mounts" (static) */
	int line;
};

/* Where SkyPilot syncs workdir, ~/sky_workdir, for the root user of an image. */
#define CONVERT_SKY_WORKDIR "/root/sky_workdir"
#define CONVERT_SKY_HOME "/root"

struct convert_result {
	enum convert_kind kind;
	struct convert_upload *uploads;  /* SkyPilot tasks: workdir first, then file_mounts */
	size_t n_uploads;
	struct trainingjob tj;        /* CONVERT_SLURM and CONVERT_SKY_TASK */
	struct volume vol;            /* CONVERT_SKY_VOLUME */
	struct convert_notes notes;   /* in line order of discovery */
	struct convert_note error;    /* set when a convert_* call returns CADRE_EPARSE */
	bool image_from_flag;         /* spec.image came from convert_input.image */
	bool needs_topology_level;    /* --switches or --segment met no topology_level */
};

void convert_result_init(struct convert_result *r);
void convert_result_release(struct convert_result *r);

/*
 * Add a note (option may be NULL). Returns 0 or CADRE_ENOMEM; the message
 * is formatted from fmt, cut at 1 KiB and kept to one line (control
 * characters in what it quotes become spaces; convert_fail's too).
 */
int convert_note(struct convert_notes *notes, int line, const char *option,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * Set r->error (once: the first error wins) and return CADRE_EPARSE, or
 * CADRE_ENOMEM when the message cannot be kept.
 */
int convert_fail(struct convert_result *r, int line, int column, const char *option,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * When the file named no image: spec.image from in->image (--image), else a
 * note that the controller's --default-image will run the job; from_file
 * says how the file would have named one. 0, CADRE_EPARSE for an image
 * that is not UTF-8, or CADRE_ENOMEM.
 */
int convert_default_image(const struct convert_input *in, struct convert_result *r,
			  const char *from_file);

/*
 * Which kind text looks like: a script whose first line starts with "#!" or
 * that holds an #SBATCH line; else YAML whose top level has run, setup,
 * num_nodes or resources (a task) or type and size (a volume). Does not
 * validate; CONVERT_UNKNOWN when none fits.
 */
enum convert_kind convert_detect(const char *text, size_t len);

/* Each parser initializes nothing: r must be fresh from convert_result_init. */
int convert_slurm(const struct convert_input *in, struct convert_result *r);
int convert_sky_task(const struct convert_input *in, struct convert_result *r);
int convert_sky_volume(const struct convert_input *in, struct convert_result *r);

/*
 * How many words the sbatch option at word takes, read as getopt_long reads
 * sbatch's: 2 when its value is the next word ("-N 2", "--time 10"), else 1
 * ("-N2", "--time=10", a switch, a word that is no known option: convert
 * reports it). So a command line splits into options, the script and its
 * arguments the way sbatch splits it.
 */
int convert_sbatch_words(const char *word);

/*
 * The long name (without "--") of the i-th sbatch option that converts to
 * something (not one only reported), in the table's order; NULL past the
 * last. For shell completion.
 */
const char *convert_sbatch_option(size_t i);

/*
 * The converted object as the JSON the API server takes: what the YAML of
 * convert_emit_yaml reads back as (every string stays a string), built
 * from the structs without going through YAML. *out is a new reference.
 * 0, CADRE_EINVAL for a result with nothing converted or a string that is
 * not UTF-8 (the converters never make one), or CADRE_ENOMEM.
 */
int convert_to_json(const struct convert_result *r, json_t **out);

/*
 * Order notes by line, stably; notes about the command line
 * (CONVERT_LINE_ARGS) after them, notes about the whole file (line 0) last.
 */
void convert_notes_sort(struct convert_notes *notes);

/*
 * convert_detect, then the parser for that kind, then convert_notes_sort;
 * CADRE_EPARSE when it is none.
 */
int convert_any(const struct convert_input *in, struct convert_result *r);

/*
 * Append the converted object as YAML to out: apiVersion, kind, metadata,
 * spec, in the order docs/design.md writes them, only the fields the input set.
 * Returns 0, CADRE_EINVAL for a result with nothing converted or a string
 * that is not UTF-8, or an error of buf_add.
 */
int convert_emit_yaml(const struct convert_result *r, struct buf *out);

/*
 * A name the file gave (job-name, name), made into a DNS-1035 label the way
 * a person would: lower case, runs of other characters as one '-', leading
 * digits and dashes dropped, at most CONVERT_NAME_MAX bytes. Returns
 * a new string the caller frees, "job" when nothing is left, NULL when out
 * of memory.
 */
char *convert_job_name(const char *name);

/* The longest job name the CRD takes (crd/: room for "-<rank>" and "-entrypoint"). */
#define CONVERT_NAME_MAX 50

/*
 * Values of sbatch options, exposed for their tests.
 *
 * convert_slurm_time: --time in every form sbatch reads ("MM", "MM:SS",
 * "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS", "UNLIMITED", "INFINITE", "0"
 * for none) into seconds; Slurm counts whole minutes and rounds seconds
 * up, and so does this. *seconds is -1 for no limit. 0 or CADRE_EPARSE.
 *
 * convert_slurm_memory: --mem's "<n>[K|M|G|T]" (MiB when no unit, as
 * sbatch reads it) into a Kubernetes quantity ("64G" -> "64Gi"), a new
 * string the caller frees; "0" (all of a node's memory) gives *quantity
 * NULL. 0, CADRE_EPARSE (also for a size past what a quantity holds) or
 * CADRE_ENOMEM.
 */
int convert_slurm_time(const char *text, int64_t *seconds);
int convert_slurm_memory(const char *text, char **quantity);

#endif
