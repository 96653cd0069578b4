#include "kube/backoff.h"

#include <time.h>
#include <unistd.h>

uint64_t backoff_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t backoff_between(uint64_t *state, uint64_t lo, uint64_t hi)
{
	uint64_t span = hi - lo + 1;

	if (!span)    /* the whole 64-bit range */
		return backoff_random(state);
	return lo + backoff_random(state) % span;
}

void backoff_init(struct backoff *b, uint64_t initial_ms, uint64_t max_ms,
		  double jitter, uint64_t seed)
{
	struct timespec ts;

	if (!seed) {
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
		       ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)b;
	}
	b->initial_ms = initial_ms;
	b->max_ms = max_ms < initial_ms ? initial_ms : max_ms;
	b->next_ms = b->initial_ms;
	b->jitter = jitter < 0 ? 0 : jitter;
	b->rng = seed;
}

void backoff_reset(struct backoff *b)
{
	b->next_ms = b->initial_ms;
}

uint64_t backoff_next(struct backoff *b)
{
	/* 53 random bits give a uniform double in [0, 1). */
	double r = (double)(backoff_random(&b->rng) >> 11) / 9007199254740992.0;
	double delay = (double)b->next_ms * (1.0 + r * b->jitter);

	if (b->next_ms > b->max_ms / 2)
		b->next_ms = b->max_ms;
	else
		b->next_ms *= 2;
	if (delay > (double)b->max_ms)
		return b->max_ms;
	return (uint64_t)delay;
}
