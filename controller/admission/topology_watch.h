/*
 * topology_watch.h - the cluster's topology levels as the controller sees
 * them (docs/topology.md): a watch of the ClusterTopology named default,
 * started the first time a job with spec.topology waits for admission, so
 * a cluster that never uses topology never asks for the kind.
 */
#ifndef CADRE_TOPOLOGY_WATCH_H
#define CADRE_TOPOLOGY_WATCH_H

#include <stdbool.h>

#include "api/clustertopology.h"

struct manager;
struct topology_watch;

struct topology_watch *topology_watch_new(struct manager *m);
void topology_watch_free(struct topology_watch *w);

/* Start the watch if it has not started. 0 or an error of reflector_start. */
int topology_watch_ensure(struct topology_watch *w);

/*
 * The levels now, into out (initialized first): the ClusterTopology named
 * default once the watch has listed, or cadre's built-in levels when there
 * is none (or w is NULL: a manager without the watch, as in benchmarks). Returns 0; CADRE_EAGAIN while the watch has not listed yet;
 * CADRE_EINVAL when the object is there but wrong, with why in why (a
 * person's line, at most size bytes); CADRE_ENOMEM. Release out whatever
 * it returns.
 */
int topology_watch_levels(struct topology_watch *w, struct cluster_topology *out, char *why,
			  size_t size);

#endif
