#include <criterion/criterion.h>

#include "base/slab.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* Every size up to the largest class gets a block of its own, aligned, that holds it whole. */
Test(slab, every_size_gets_an_aligned_block_of_at_least_that_size)
{
	static void *blocks[SLAB_MAX_CLASS + 1];

	for (size_t n = 1; n <= SLAB_MAX_CLASS; n += n < 1200 ? 1 : 61) {
		blocks[n] = slab_alloc(n);
		cr_assert_not_null(blocks[n], "size %zu", n);
		cr_assert_eq((uintptr_t)blocks[n] % 16, 0, "size %zu", n);
		memset(blocks[n], (int)(n & 0xff), n);
	}
	/* Writing one block never reached into another. */
	for (size_t n = 1; n <= SLAB_MAX_CLASS; n += n < 1200 ? 1 : 61) {
		const unsigned char *b = blocks[n];

		cr_assert_eq(b[0], (unsigned char)(n & 0xff), "size %zu", n);
		cr_assert_eq(b[n - 1], (unsigned char)(n & 0xff), "size %zu", n);
		slab_free(blocks[n]);
	}
	cr_assert_null(slab_alloc(0));
	slab_free(NULL);
}

/* The lowest free slot goes first, so a slab fills (and is resident) from its start. */
Test(slab, a_freed_slot_is_the_next_one_handed_out)
{
	void *a = slab_alloc(700), *b = slab_alloc(700), *c = slab_alloc(700), *d;

	cr_assert(a && b && c);
	slab_free(b);
	d = slab_alloc(690);    /* the same class as 700 (641-704 bytes) */
	cr_assert_eq(d, b);
	slab_free(a);
	slab_free(c);
	slab_free(d);
}

/* What is counted resident is the pages touched, not the slab mapped. */
Test(slab, one_small_object_is_not_a_whole_slab_resident)
{
	size_t before = slab_resident_bytes(), page = (size_t)sysconf(_SC_PAGESIZE);
	void *p = slab_alloc(4000);      /* a class no other test here uses first */

	cr_assert_not_null(p);
	cr_assert_leq(slab_resident_bytes() - before, 2 * page);
	slab_free(p);
}

/* Objects freed go back in slabs: after many come and go, what stays is at most a slab a class. */
Test(slab, freeing_everything_returns_all_but_a_slab_per_class)
{
	enum { N = 20000 };
	static void *v[N];
	size_t before = slab_resident_bytes(), peak;

	for (int i = 0; i < N; i++) {
		v[i] = slab_alloc(600 + (size_t)(i % 3) * 10);   /* one class */
		cr_assert_not_null(v[i]);
		memset(v[i], 1, 600);
	}
	peak = slab_resident_bytes();
	cr_assert_geq(peak - before, (size_t)N * 600, "%zu bytes for %d objects", peak - before, N);
	for (int i = 0; i < N; i++)
		slab_free(v[i]);
	cr_assert_leq(slab_resident_bytes() - before, SLAB_SIZE, "%zu bytes still held",
		      slab_resident_bytes() - before);
}

/* The point of it: what the caches keep does not sit in malloc's heap among the trees. */
Test(slab, its_objects_are_not_on_malloc_s_heap)
{
	enum { N = 4000 };
	static void *v[N];
	size_t before = mallinfo2().uordblks;

	for (int i = 0; i < N; i++)
		cr_assert_not_null(v[i] = slab_alloc(512));
	/* 2 MB in slabs; malloc's count moves by at most a little of its own bookkeeping. */
	cr_assert_lt(mallinfo2().uordblks - before, 64 * 1024);
	for (int i = 0; i < N; i++)
		slab_free(v[i]);
}

Test(slab, realloc_keeps_what_was_there_within_a_class_and_across_classes)
{
	char *p = slab_alloc(40), *q;

	cr_assert_not_null(p);
	memcpy(p, "0123456789", 10);
	q = slab_realloc(p, 40, 48);    /* the same 64-byte class: in place */
	cr_assert_eq(q, p);
	q = slab_realloc(q, 48, 5000);
	cr_assert_not_null(q);
	cr_assert_eq(memcmp(q, "0123456789", 10), 0);
	memset(q + 10, 'x', 4990);
	q = slab_realloc(q, 5000, 100000);      /* a mapping of its own */
	cr_assert_not_null(q);
	cr_assert_eq(memcmp(q, "0123456789", 10), 0);
	cr_assert_eq(q[4999], 'x');
	q = slab_realloc(q, 100000, 16);
	cr_assert_not_null(q);
	cr_assert_eq(memcmp(q, "0123456789", 10), 0);
	slab_free(q);
	p = slab_realloc(NULL, 0, 24);
	cr_assert_not_null(p);
	slab_free(p);
}

Test(slab, a_large_object_has_a_mapping_that_goes_back_when_freed)
{
	size_t before = slab_resident_bytes();
	char *p = slab_alloc(3 * SLAB_SIZE + 5);

	cr_assert_not_null(p);
	cr_assert_eq((uintptr_t)p % 16, 0);
	memset(p, 7, 3 * SLAB_SIZE + 5);
	cr_assert_geq(slab_resident_bytes() - before, 3 * SLAB_SIZE + 5);
	slab_free(p);
	cr_assert_eq(slab_resident_bytes(), before);
}

/* Threads allocating and freeing at once each find their own bytes where they left them. */
struct churn {
	unsigned char tag;
	int bad;
};

static void *churn(void *arg)
{
	struct churn *c = arg;
	void *v[256] = { 0 };

	for (int round = 0; round < 200; round++)
		for (int i = 0; i < 256; i++) {
			size_t n = 16 + (size_t)((i * 37 + round) % 2000);
			unsigned char *p;

			if (v[i]) {
				p = v[i];
				if (p[0] != c->tag || p[15] != c->tag)
					c->bad++;
				slab_free(v[i]);
			}
			p = slab_alloc(n);
			if (!p) {
				c->bad++;
				continue;
			}
			memset(p, c->tag, n);
			v[i] = p;
		}
	for (int i = 0; i < 256; i++)
		slab_free(v[i]);
	return NULL;
}

Test(slab, threads_allocating_at_once_do_not_share_a_block)
{
	pthread_t t[4];
	struct churn c[4];

	for (int i = 0; i < 4; i++) {
		c[i] = (struct churn){ .tag = (unsigned char)(0x11 * (i + 1)) };
		cr_assert_eq(pthread_create(&t[i], NULL, churn, &c[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		cr_assert_eq(c[i].bad, 0, "thread %d saw another's bytes %d times", i, c[i].bad);
	}
}
