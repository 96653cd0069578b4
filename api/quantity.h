/*
 * quantity.h - Kubernetes resource quantities ("32", "250m", "256Gi",
 * "1.5", "1e3") held exactly as int64_t milli-units.
 *
 * One int64 in milli-units is what every comparison in gang admission
 * wants: "1" is 1000, "250m" is 250, "500Gi" is 500 * 2^30 * 1000, which
 * leaves room for about 8 EiB of memory and 9.2 * 10^15 CPUs. Adding and
 * comparing are plain int64 operations; quantity_add() checks for overflow.
 *
 * The grammar is Kubernetes' (k8s.io/apimachinery resource.ParseQuantity):
 *   [+-] ( digits | digits "." digits? | "." digits ) suffix
 *   suffix: "" | n u m k M G T P E | Ki Mi Gi Ti Pi Ei | (e|E) [+-] digits
 * with no white space anywhere. Precision finer than a milli-unit rounds
 * away from zero, as Kubernetes rounds up ("0.1m" is 1, "-0.1m" is -1).
 *
 * Pure functions; thread-safe.
 */
#ifndef CADRE_API_QUANTITY_H
#define CADRE_API_QUANTITY_H

#include <stdint.h>

struct buf;

/* Longest quantity text accepted; real ones are a dozen bytes. */
#define QUANTITY_MAX_LEN 256

/*
 * Parse s into *milli. Returns 0; CADRE_EPARSE when s is not a quantity
 * (the message naming the field is the caller's to write); CADRE_ETOOBIG
 * when the value does not fit in int64 milli-units or s is longer than
 * QUANTITY_MAX_LEN. Nothing wraps silently. *milli is written only on 0.
 */
int quantity_parse(const char *s, int64_t *milli);

/*
 * Append the canonical text of milli to out: "250m" when it is not a whole
 * number; else "0"; else the largest binary suffix that divides it
 * ("256Gi", "1Ki"); else the largest decimal one ("32", "1k", "5M").
 * quantity_parse() reads the text back to the same value. Returns 0 or an
 * error of buf_add.
 */
int quantity_format(int64_t milli, struct buf *out);

/* *sum = a + b. Returns 0, or CADRE_ETOOBIG on overflow (*sum untouched). */
int quantity_add(int64_t a, int64_t b, int64_t *sum);

#endif
