/*
 * hash.h - FNV-1a, 64 bit, over a string: the hash job ids are derived with
 * (tj_job_id) and ConfigMap data is digested with (build_data_digest).
 * Not for anything an adversary chooses the input of. Pure.
 *
 * The offset basis is the one the first job ids were made with,
 * 1469598103934665603 (FNV's published one has one digit more); it stays,
 * since job ids derived from it are stored and printed by squeue and sacct.
 */
#ifndef CADRE_HASH_H
#define CADRE_HASH_H

#include <stdint.h>

static inline uint64_t hash_fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; s && *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

#endif
