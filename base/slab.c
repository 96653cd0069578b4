#include "base/slab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define HAVE_VALGRIND 1
#endif
#endif
#ifndef HAVE_VALGRIND
#define VALGRIND_MALLOCLIKE_BLOCK(p, n, rz, zeroed) ((void)0)
#define VALGRIND_FREELIKE_BLOCK(p, rz)              ((void)0)
#define VALGRIND_RESIZEINPLACE_BLOCK(p, o, n, rz)   ((void)0)
#define VALGRIND_MAKE_MEM_NOACCESS(p, n)            ((void)0)
#endif

/*
 * Classes: 32-byte steps up to 512 bytes (16 classes), then eight steps per
 * doubling up to SLAB_MAX_CLASS (5 doublings, 40 classes). Rounding up
 * wastes at most an eighth of an object above 512 bytes.
 */
#define SMALL_CLASSES 16
#define NCLASSES      (SMALL_CLASSES + 5 * 8)

/*
 * The header at the start of every mapping; slab_free() finds it by masking
 * an object's address, which is why every mapping is aligned to SLAB_SIZE
 * and a large object starts within its first SLAB_SIZE bytes.
 */
struct slab {
	bool large;
	uint8_t cls;
	uint32_t obj_size;      /* bytes per slot */
	uint32_t offset;        /* where slot 0 starts */
	uint32_t nobj, used;
	uint32_t hint;          /* no free slot in a bitmap word below this one */
	size_t map_size;        /* bytes mapped */
	size_t touched;         /* bytes from the start counted resident */
	struct slab *prev, *next;       /* in its class's list of slabs with room */
	uint64_t bits[];        /* a set bit is a slot in use (or past nobj) */
};

struct slab_class {
	struct slab *room;      /* slabs with a free slot, most recently freed into first */
	size_t nroom;
};

static pthread_mutex_t slab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slab_class classes[NCLASSES];
static atomic_size_t resident;

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

static size_t page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

static int class_of(size_t size)
{
	unsigned b;
	size_t step;

	if (size <= 512)
		return (int)((size + 31) / 32) - 1;
	b = (unsigned)(63 - __builtin_clzll((unsigned long long)(size - 1)));   /* 2^b < size <= 2^(b+1) */
	step = ((size_t)1 << b) / 8;
	return SMALL_CLASSES + (int)(b - 9) * 8 + (int)((size - ((size_t)1 << b) + step - 1) / step) - 1;
}

static size_t class_size(int cls)
{
	unsigned b;

	if (cls < SMALL_CLASSES)
		return (size_t)(cls + 1) * 32;
	b = 9 + (unsigned)(cls - SMALL_CLASSES) / 8;
	return ((size_t)1 << b) + ((size_t)1 << b) / 8 * (size_t)((cls - SMALL_CLASSES) % 8 + 1);
}

/* size bytes of fresh memory aligned to SLAB_SIZE, or NULL. */
static void *map_aligned(size_t size)
{
	size_t len = size + SLAB_SIZE, head, tail;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t at;

	if (p == MAP_FAILED)
		return NULL;
	at = ((uintptr_t)p + SLAB_SIZE - 1) & ~(uintptr_t)(SLAB_SIZE - 1);
	head = at - (uintptr_t)p;
	tail = len - head - size;
	if (head)
		munmap(p, head);
	if (tail)
		munmap((char *)at + size, tail);
	return (void *)at;
}

static void unmap(struct slab *s)
{
	size_t size = s->map_size;

	atomic_fetch_sub(&resident, s->touched);
	/* Shadow left poisoned would be wrong about whatever is mapped here next. */
	UNPOISON(s, size);
	munmap(s, size);
}

static void room_push(struct slab_class *c, struct slab *s)
{
	s->prev = NULL;
	s->next = c->room;
	if (c->room)
		c->room->prev = s;
	c->room = s;
	c->nroom++;
}

static void room_unlink(struct slab_class *c, struct slab *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		c->room = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
	c->nroom--;
}

static struct slab *slab_new(int cls)
{
	size_t obj_size = class_size(cls), nobj, words, offset;
	struct slab *s = map_aligned(SLAB_SIZE);

	if (!s)
		return NULL;
	/* A bitmap for as many slots as would fit without it is enough. */
	nobj = (SLAB_SIZE - sizeof(*s)) / obj_size;
	words = (nobj + 63) / 64;
	offset = round_up(sizeof(*s) + words * sizeof(uint64_t), 16);
	nobj = (SLAB_SIZE - offset) / obj_size;
	s->large = false;
	s->cls = (uint8_t)cls;
	s->obj_size = (uint32_t)obj_size;
	s->offset = (uint32_t)offset;
	s->nobj = (uint32_t)nobj;
	s->map_size = SLAB_SIZE;
	s->touched = round_up(offset, page_size());
	for (size_t i = nobj; i < words * 64; i++)
		s->bits[i / 64] |= (uint64_t)1 << (i % 64);
	atomic_fetch_add(&resident, s->touched);
	POISON((char *)s + offset, SLAB_SIZE - offset);
	VALGRIND_MAKE_MEM_NOACCESS((char *)s + offset, SLAB_SIZE - offset);
	return s;
}

/* A free slot of s (which has one), marked used; with the lock held. */
static void *slot_take(struct slab *s)
{
	uint32_t w = s->hint;
	size_t i, end;
	unsigned bit;

	while (s->bits[w] == UINT64_MAX)
		w++;
	bit = (unsigned)__builtin_ctzll(~s->bits[w]);
	s->bits[w] |= (uint64_t)1 << bit;
	s->hint = w;
	s->used++;
	i = (size_t)w * 64 + bit;
	end = round_up(s->offset + (i + 1) * s->obj_size, page_size());
	if (end > s->touched) {
		atomic_fetch_add(&resident, end - s->touched);
		s->touched = end;
	}
	return (char *)s + s->offset + i * s->obj_size;
}

static void *large_alloc(size_t size)
{
	size_t offset = round_up(sizeof(struct slab), 16);
	size_t map_size = round_up(offset + size, page_size());
	struct slab *s = map_aligned(map_size);

	if (!s)
		return NULL;
	s->large = true;
	s->offset = (uint32_t)offset;
	s->map_size = map_size;
	s->touched = map_size;
	atomic_fetch_add(&resident, map_size);
	return (char *)s + offset;
}

void *slab_alloc(size_t size)
{
	struct slab_class *c;
	struct slab *s;
	void *p;
	int cls;

	if (!size)
		return NULL;
	if (size > SLAB_MAX_CLASS) {
		p = large_alloc(size);
		if (p)
			VALGRIND_MALLOCLIKE_BLOCK(p, size, 0, 1);
		return p;
	}
	cls = class_of(size);
	c = &classes[cls];
	pthread_mutex_lock(&slab_lock);
	s = c->room;
	if (!s) {
		s = slab_new(cls);
		if (!s) {
			pthread_mutex_unlock(&slab_lock);
			return NULL;
		}
		room_push(c, s);
	}
	p = slot_take(s);
	if (s->used == s->nobj)
		room_unlink(c, s);
	pthread_mutex_unlock(&slab_lock);
	UNPOISON(p, size);
	VALGRIND_MALLOCLIKE_BLOCK(p, size, 0, 0);
	return p;
}

void *slab_calloc(size_t size)
{
	void *p = slab_alloc(size);

	if (p)
		memset(p, 0, size);
	return p;
}

static struct slab *slab_of(const void *p)
{
	return (struct slab *)((uintptr_t)p & ~(uintptr_t)(SLAB_SIZE - 1));
}

void slab_free(void *p)
{
	struct slab *s;
	struct slab_class *c;
	size_t i;

	if (!p)
		return;
	s = slab_of(p);
	VALGRIND_FREELIKE_BLOCK(p, 0);
	if (s->large) {
		unmap(s);
		return;
	}
	i = (size_t)((char *)p - ((char *)s + s->offset)) / s->obj_size;
	POISON(p, s->obj_size);
	c = &classes[s->cls];
	pthread_mutex_lock(&slab_lock);
	if (!(s->bits[i / 64] & ((uint64_t)1 << (i % 64))))
		abort();        /* freed twice: the caller's bug, as it would be with free() */
	s->bits[i / 64] &= ~((uint64_t)1 << (i % 64));
	if (i / 64 < s->hint)
		s->hint = (uint32_t)(i / 64);
	if (s->used-- == s->nobj)
		room_push(c, s);
	/* An empty slab goes back unless its class would have no room left. */
	if (!s->used && c->nroom > 1) {
		room_unlink(c, s);
		unmap(s);
	}
	pthread_mutex_unlock(&slab_lock);
}

void *slab_realloc(void *p, size_t old_size, size_t new_size)
{
	struct slab *s;
	void *q;

	if (!p)
		return slab_alloc(new_size);
	if (!new_size)
		return NULL;
	s = slab_of(p);
	if (!s->large && new_size <= SLAB_MAX_CLASS && class_of(new_size) == s->cls) {
		POISON(p, s->obj_size);
		UNPOISON(p, new_size);
		VALGRIND_RESIZEINPLACE_BLOCK(p, old_size, new_size, 0);
		return p;
	}
	q = slab_alloc(new_size);
	if (!q)
		return NULL;
	memcpy(q, p, old_size < new_size ? old_size : new_size);
	slab_free(p);
	return q;
}

size_t slab_resident_bytes(void)
{
	return atomic_load(&resident);
}
