/*
 * lazywatch.h - a store and its reflector, made up front and started the
 * first time something needs them: for kinds a controller reads only when a
 * job asks (Kueue's Workloads, the ClusterTopology), so a cluster without
 * them costs no watch and logs no refusal until then.
 *
 *   struct lazy_watch lw;
 *   if (lazy_watch_init(&lw, http, &so, &h, &ro)) ...fails...
 *   ... lazy_watch_start(&lw, &first) when needed; first says it started now ...
 *   lazy_watch_release(&lw);
 *
 * Thread-safe: lazy_watch_start may be called from any thread.
 */
#ifndef CADRE_KUBE_LAZYWATCH_H
#define CADRE_KUBE_LAZYWATCH_H

#include <pthread.h>
#include <stdbool.h>

struct kube_http;
struct reflector;
struct reflector_options;
struct store;
struct store_handlers;
struct store_options;

struct lazy_watch {
	struct store *store;
	struct reflector *reflector;
	pthread_mutex_t lock;  /* started */
	bool started;
};

/* The store with handlers h (NULL: none) and its reflector, not started. 0 or CADRE_ENOMEM
 * (or the reflector's error); lw is released either way on failure. */
int lazy_watch_init(struct lazy_watch *lw, struct kube_http *http, const struct store_options *so,
		    const struct store_handlers *h, const struct reflector_options *ro);

/* Start the reflector unless it runs; *first (may be NULL) is true when this call started
 * it. 0 or the reflector's error. */
int lazy_watch_start(struct lazy_watch *lw, bool *first);

void lazy_watch_release(struct lazy_watch *lw);

#endif
