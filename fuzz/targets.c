/*
 * targets.c - every fuzz target by name, for unit/test_fuzz.c: each
 * replays fuzz/corpus/<name>/ and fuzz/regressions/<name>/ through it.
 */
#include "fuzz/fuzz.h"

const struct fuzz_target fuzz_targets[] = {
	{ "sbatch", fuzz_sbatch },
	{ "skypilot", fuzz_skypilot },
	{ "hostlist", fuzz_hostlist },
	{ "slurm_values", fuzz_slurm_values },
	{ "slurm_grammar", fuzz_slurm_grammar },
	{ "kubeconfig", fuzz_kubeconfig },
	{ "watch", fuzz_watch },
	{ "objects", fuzz_objects },
	{ "podexec", fuzz_podexec },
	{ "dash_http", fuzz_dash_http },
	{ "dash_ws", fuzz_dash_ws },
	{ "code", fuzz_code },
	{ "dra_class", fuzz_dra_class },
};

const size_t fuzz_targets_len = sizeof(fuzz_targets) / sizeof(fuzz_targets[0]);
