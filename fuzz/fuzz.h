/*
 * fuzz.h - cadre's fuzz targets: one entry point per parser of untrusted
 * input, each checking properties of what it parsed, not only that it
 * did not crash (docs/fuzzing.md).
 *
 * An entry point takes any bytes and returns 0. A broken property calls
 * fuzz_fail(), which prints what broke and aborts: under libFuzzer that
 * saves the input (make fuzz puts it in fuzz/regressions/<target>/), and
 * the unit tests replay every such input through the same entry point
 * (unit/test_fuzz.c), so a fixed crash stays fixed in every build.
 *
 * Built two ways: into cadre-unit (all targets, through fuzz_targets[]),
 * and one libFuzzer binary per target (fuzz/libfuzzer.c, clang only).
 */
#ifndef CADRE_FUZZ_H
#define CADRE_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct convert_result;

typedef int (*fuzz_fn)(const uint8_t *data, size_t size);

struct fuzz_target {
	const char *name;  /* fuzz/<name>.c, fuzz/corpus/<name>/, fuzz/regressions/<name>/ */
	fuzz_fn fn;
};

/* Every target, for the unit tests' replay (fuzz/targets.c). */
extern const struct fuzz_target fuzz_targets[];
extern const size_t fuzz_targets_len;

int fuzz_sbatch(const uint8_t *data, size_t size);
int fuzz_skypilot(const uint8_t *data, size_t size);
int fuzz_hostlist(const uint8_t *data, size_t size);
int fuzz_slurm_values(const uint8_t *data, size_t size);
int fuzz_slurm_grammar(const uint8_t *data, size_t size);
int fuzz_kubeconfig(const uint8_t *data, size_t size);
int fuzz_watch(const uint8_t *data, size_t size);
int fuzz_objects(const uint8_t *data, size_t size);
int fuzz_podexec(const uint8_t *data, size_t size);
int fuzz_dash_http(const uint8_t *data, size_t size);
int fuzz_dash_ws(const uint8_t *data, size_t size);
int fuzz_code(const uint8_t *data, size_t size);
int fuzz_dra_class(const uint8_t *data, size_t size);

/* Print "<file>:<line>: property broken: <cond>: <message>" and abort. */
_Noreturn void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define FUZZ_CHECK(cond, ...) \
	do { \
		if (!(cond)) \
			fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
	} while (0)

/*
 * The properties of a conversion that succeeded (fuzz/common.c): the JSON
 * for the API server is built, the YAML of cadre convert is written and
 * reads back as that same JSON, both are UTF-8, tj_parse/vol_parse and
 * their validation accept it, and the CRD's schema accepts it
 * (unit/support/oapi.h). What broke is printed with the JSON.
 */
void fuzz_check_converted(const struct convert_result *r);

/* data as a new NUL-terminated string (the parsers take C strings); aborts when out of memory. */
char *fuzz_strndup(const uint8_t *data, size_t size);

#endif
