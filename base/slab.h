/*
 * slab.h - memory for long-lived small objects, kept apart from malloc's heap.
 *
 * The caches (kube/store.c) keep one small packed object per pod, decoded
 * from list pages and watch events whose jansson trees are many times larger
 * and die at once. From malloc, each kept object lands in a hole among those
 * trees; when the trees are freed, a page that still holds one kept object
 * cannot go back to the system, and a relist of 80,000 pods left malloc
 * holding three times what was in use (bench/results/design-scale). Objects
 * from here live in slabs of their own, mapped apart from malloc's arenas,
 * so what the trees free goes back in whole pages.
 *
 * A slab is SLAB_SIZE bytes, aligned to its size, of objects of one size
 * class (16-byte steps of a few classes per doubling, up to SLAB_MAX_CLASS);
 * a larger object has a mapping of its own. A slab hands out its lowest free
 * slot first, so a slab's pages are touched in order and a half-full slab
 * is half resident; a slab left empty is unmapped unless it is the last
 * with room in its class.
 *
 * Thread-safe (one lock for the process). Under ASan and valgrind, a freed
 * or never-used slot is unaddressable, as a freed malloc block is.
 */
#ifndef CADRE_SLAB_H
#define CADRE_SLAB_H

#include <stddef.h>

#define SLAB_SIZE      ((size_t)128 << 10)
#define SLAB_MAX_CLASS ((size_t)16 << 10)

/* size bytes aligned to 16, or NULL (size 0 or out of memory). Free with slab_free(). */
void *slab_alloc(size_t size);

/* Like slab_alloc(), zeroed. */
void *slab_calloc(size_t size);

/*
 * p (from slab_alloc(), old_size bytes asked for) moved to new_size bytes;
 * the first min(old_size, new_size) bytes kept. NULL on failure, and p is
 * then untouched. p NULL is slab_alloc(new_size).
 */
void *slab_realloc(void *p, size_t old_size, size_t new_size);

/* Give p back; NULL is ignored. */
void slab_free(void *p);

/* Bytes of slabs and large mappings the process has touched and not unmapped. */
size_t slab_resident_bytes(void);

#endif
