/*
 * sbatch.h - internal to convert/: the state of one batch script being read.
 * sbatch.c reads the script (the #SBATCH block, the body, the commands that
 * now run on every node); sbatch_opts.c applies the options.
 */
#ifndef CADRE_CONVERT_SBATCH_H
#define CADRE_CONVERT_SBATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "convert/convert.h"

/* One word of an #SBATCH line, quotes and escapes removed. */
struct sbatch_arg {
	char *text;  /* owned */
	int line;
};

/* A GPU request: "[type:]count", as per node or in total. */
struct sbatch_gpus {
	char type[64];  /* "" when the option named none */
	int count;
	int line;       /* 0: not given */
	const char *option;
};

struct sbatch {
	const struct convert_input *in;
	struct convert_result *r;
	struct sbatch_arg *args;
	size_t n_args;
	size_t cap_args;

	int nodes, nodes_line;
	int tasks_per_node, tasks_per_node_line;
	int ntasks, ntasks_line;
	int cpus_per_task, cpus_per_task_line;
	struct sbatch_gpus gpus_per_node;   /* --gres=gpu, --gpus-per-node */
	struct sbatch_gpus gpus_total;      /* --gpus/-G */
	struct sbatch_gpus gpus_per_task;   /* --gpus-per-task */
	char *job_name;
	int job_name_line;
	bool has_image;
	/* --output, --error: decided at the end, once the volumes and workdir are known. */
	char *output, *error;
	int output_line, error_line;
	/* --mem-per-cpu, --mem-per-gpu, in MiB: times the node's CPUs or GPUs. */
	int64_t mem_per_cpu_mib, mem_per_gpu_mib;
	int mem_per_line;
	const char *mem_per_option;
	/* --switches=COUNT, --segment=N: spec.topology at the input's topology_level. */
	int switches, switches_line;
	int segment, segment_line;
};

/* Apply every collected argument to s->r->tj, then derive what needs several. */
int sbatch_apply(struct sbatch *s);

/*
 * Note every command of the script from byte body (line body_line) on that
 * runs outside srun and does more than set up the environment, and every
 * #SBATCH line there (sbatch ignores them). 0 or CADRE_ENOMEM.
 */
int sbatch_body_warn(struct sbatch *s, size_t body, int body_line);

#endif
