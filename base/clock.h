/*
 * clock.h - the two clocks cadre reads: a monotonic one for intervals and
 * timeouts (never steps back when the wall clock is set), and the wall
 * clock, formatted as Kubernetes writes a metav1.MicroTime.
 * Thread-safe.
 */
#ifndef CADRE_CLOCK_H
#define CADRE_CLOCK_H

#include <stdint.h>

/* Milliseconds on CLOCK_MONOTONIC. */
uint64_t clock_mono_ms(void);

/* The same, in the shape of the injectable clocks (arg unused): the default
 * for the now_ms options of the work queue, the leader elector and events. */
uint64_t clock_mono_ms_cb(void *arg);

/* Now, in UTC, as "2026-11-30T01:02:03.123456Z". */
void clock_micro_time(char out[64]);

#endif
