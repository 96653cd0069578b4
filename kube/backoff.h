/*
 * backoff.h - jittered exponential backoff, and the randomness it needs.
 *
 * When the API server goes away, every client reconnecting on the same
 * schedule would come back at the same instant; jitter spreads them out.
 * The shape is client-go's reflector backoff: start at initial_ms (800 ms),
 * double after each use up to max_ms (30 s), each delay stretched by a
 * random factor in [1, 1 + jitter) (jitter 1.0 in client-go) and never past
 * max_ms.
 *
 * Not thread-safe: a backoff belongs to one loop (a reflector, an
 * elector). Plain data; no release needed.
 */
#ifndef CADRE_KUBE_BACKOFF_H
#define CADRE_KUBE_BACKOFF_H

#include <stdint.h>

struct backoff {
	uint64_t initial_ms;
	uint64_t max_ms;
	uint64_t next_ms;    /* the base of the next delay, before jitter */
	double jitter;       /* 0: none; 1.0: up to twice the base */
	uint64_t rng;        /* backoff_random() state */
};

/*
 * Set up. seed 0 picks one from the clock and the struct's address, so
 * that processes started together still differ.
 */
void backoff_init(struct backoff *b, uint64_t initial_ms, uint64_t max_ms,
		  double jitter, uint64_t seed);

/* The delay to wait now; the following one will be about twice as long. */
uint64_t backoff_next(struct backoff *b);

/* Start again from initial_ms (after a success). */
void backoff_reset(struct backoff *b);

/* A uniformly random 64-bit number (splitmix64) from *state. */
uint64_t backoff_random(uint64_t *state);

/* A random integer in [lo, hi] (lo <= hi). */
uint64_t backoff_between(uint64_t *state, uint64_t lo, uint64_t hi);

#endif
