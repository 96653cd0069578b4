/*
 * accel.h - accelerator requests in SkyPilot's "<type>[:<count>]" form
 * ("H100:8", "h100", "A100-80GB:4"), and matching a type against the
 * product label of a node.
 *
 * Pure functions; thread-safe.
 */
#ifndef CADRE_API_ACCEL_H
#define CADRE_API_ACCEL_H

#include <stdbool.h>

struct buf;

struct accel {
	char type[64];  /* as written, case kept; NUL-terminated */
	int count;      /* >= 1 */
};

/*
 * Parse s, which must match ^[A-Za-z0-9][A-Za-z0-9._-]*(:[1-9][0-9]*)?$
 * (the pattern the CRD enforces), into *out; a missing count means 1.
 * Returns 0; CADRE_EPARSE for text that does not match (empty, ":8",
 * "H100:", "H100:0", "H100:x", white space); CADRE_ETOOBIG for a type
 * longer than 63 bytes or a count past INT_MAX. *out is written only on 0.
 */
int accel_parse(const char *s, struct accel *out);

/* Append "H100:8" (or "H100" for a count of 1) to out. 0 or an error of buf_add. */
int accel_format(const struct accel *accel, struct buf *out);

/*
 * Whether a node whose accelerator label (nvidia.com/gpu.product) has
 * label_value carries the type asked for: type is a case-insensitive
 * substring of it, so "H100" matches "NVIDIA-H100-80GB-HBM3". An empty or
 * NULL type or label matches nothing.
 */
bool accel_matches_label(const char *type, const char *label_value);

#endif
