/* ring-search.h — NCCL-like ring search inside one host: the channels'
 * ring orders built from the topology's links so that together they use
 * every link a GPU has.
 *
 * NCCL (src/graph/search.c, ncclTopoCompute) searches for a graph of
 * nChannels rings, each a Hamiltonian cycle over the node's GPUs that
 * reserves a per-channel bandwidth S on every link it crosses; it starts
 * at a high S and the best path type (NVLink before PCIe), counts how many
 * channels fit, and lowers S (or relaxes the path type) until a solution
 * appears.  This search does the same on fabricsim's own routes:
 *
 *   - a hop a → b is the router's route between the two GPUs (the
 *     transport NCCL would use: NVLink direct or through NVSwitches, PCIe
 *     peer-to-peer, host-staged), and reserving S on it takes S × (the
 *     path's share of the bytes) from every channel along each of the
 *     route's paths (so a route sprayed over four NVSwitch planes reserves
 *     on all four, and a PCIe route reserves on the shared switch uplinks);
 *   - path types are tried best first (NVLink, then PCIe peer-to-peer,
 *     then host-staged): the first type under which any ring exists wins,
 *     so rings never take a PCIe hop where an all-NVLink ring exists;
 *   - the per-ring speeds tried are the hops' own capacities divided by
 *     1, 2, … max_rings (a link of two NVLinks holds one ring at its full
 *     rate, or two at the rate of one link), highest first; for each, a
 *     depth-first search with backtracking (across rings too) looks for
 *     as many rings as the GPUs' outgoing and incoming capacity could
 *     hold, within a work budget; the speed whose rings carry the most in
 *     total (rings × S) wins, ties to the higher speed (fewer rings); the
 *     search stops lowering S when the rings reach that bound, or after
 *     FS_RING_SEARCH_PATIENCE speeds in a row bring nothing better;
 *   - candidate next hops are tried by path type, then by the capacity
 *     left on the hop (largest first: spreads the rings over all links),
 *     then by GPU index, so the result is deterministic.
 *
 * On the DGX-1 hybrid cube-mesh this finds six rings at one NVLink each
 * (the NV2 pairs carry two rings, the NV1 pairs one): every NVLink in
 * both directions.  On an 8-GPU NVLink full mesh it finds as many rings
 * as the GPU has links.  Behind NVSwitches every order is as good, and
 * one ring at the whole route's capacity is the answer (GPU order).
 *
 * Ownership: the result's arrays belong to the caller (fs_ring_set_clear).
 * Errors: FS_NET_ERROR_NO_ROUTE from the router when two GPUs cannot reach
 * each other.  Cost: m² routes, then a search bounded by
 * FS_RING_SEARCH_BUDGET hop attempts per speed tried (a few milliseconds
 * for 8 GPUs).  Hosts of more than FS_RING_SEARCH_MAX_GPUS GPUs are not
 * searched (n_rings 0: the caller keeps GPU order).
 */
#pragma once

#include <glib.h>

#include "net/route.h"

G_BEGIN_DECLS

/* Hop attempts one speed's search may make before it settles for the most
 * rings it found (NCCL bounds its search by time, NCCL_SEARCH_TIMEOUT). */
#define FS_RING_SEARCH_BUDGET 50000u
/* Speeds tried in a row without a better total before the search stops
 * lowering the speed (once it has some rings). */
#define FS_RING_SEARCH_PATIENCE 2u
/* Hosts with more GPUs keep GPU order (m² routes would dominate). */
#define FS_RING_SEARCH_MAX_GPUS 64u

typedef struct {
  guint n_rings;     /* rings found; 0 when none was searched or found */
  guint m;           /* GPUs per ring */
  guint *order;      /* n_rings × m positions 0..m-1 into the caller's GPU list */
  double speed;      /* bytes/s each ring reserves on its hops */
  FsRouteKind kind;  /* the slowest transport a hop uses */
  guint64 work;      /* hop attempts made over all speeds tried */
} FsRingSet;

/* Searches up to max_rings rings over the m GPUs gpus[0..m-1] (node
 * indices, one host), each starting at gpus[0].  FALSE with error only
 * when a route is missing; TRUE with out->n_rings == 0 when m < 2 or
 * m > FS_RING_SEARCH_MAX_GPUS. */
gboolean fs_coll_ring_search(FsRouter *router, const guint *gpus, guint m, guint max_rings,
                             FsRingSet *out, GError **error);
void fs_ring_set_clear(FsRingSet *set);

G_END_DECLS
