/*
 * libfuzzer.c - the libFuzzer entry of one target: built once per target
 * with -DFUZZ_ENTRY=fuzz_<name> (CMakeLists.txt, CADRE_FUZZ).
 */
#include "fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return FUZZ_ENTRY(data, size);
}
