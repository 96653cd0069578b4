/*
 * ranks.h - a new node for some ranks of a gang that keeps the others
 * (docs/failures.md, "In-place restart"): a rank whose node was lost while
 * its peers restart in place is placed again, alone, near them.
 *
 * The kept ranks stay where they are; each rank to place goes where the
 * gang's admission could have put it beside them:
 *  - spec.topology's required level: in the kept ranks' domain of it;
 *  - a segment: beside a kept rank of its segment, in that rank's domain of
 *    the segment's level; a segment with no rank kept goes whole into one
 *    domain of that level;
 *  - the preferred level: in the kept ranks' domain of it when that has
 *    room, else anywhere the rest allows;
 *  - per-host anti-affinity: not on a kept rank's node.
 * The demand's own rules (accelerator type, selectors, taints, excluded and
 * left-behind nodes) hold as for any admission.
 *
 * Pure: no I/O, no clock.
 */
#ifndef CADRE_RANKS_H
#define CADRE_RANKS_H

#include <stdbool.h>
#include <stdint.h>

#include "controller/admission/capacity.h"
#include "controller/admission/topology.h"

struct buf;

/*
 * Place the ranks r of a gang of n where place[r] is set; nodes[r] is the
 * capacity index of every other rank's node (-1 when that node is not
 * known: it constrains nothing). topo may be NULL. On a fit, nodes[r] of
 * each placed rank receives its node, the demand is taken off cap, and
 * *fits is true; otherwise *fits is false, cap may hold some ranks taken
 * (the caller drops it) and why says, for a person, what does not fit.
 * Returns 0, CADRE_EINVAL (n < 1, no rank to place) or CADRE_ENOMEM.
 */
int ranks_place(struct capacity *cap, const struct cap_demand *d, const struct topo_request *topo,
		int n, const unsigned char *place, long *nodes, bool *fits, struct buf *why);

#endif
