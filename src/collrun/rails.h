/* rails.h — local ranks that mirror each other in a collective timed
 * alone: the NVLS tree's rails.
 *
 * The NVLS tree (coll/algo-nvls.c) gives shard j of every chunk to local
 * rank j of every host, which carries it through its own NIC up and down a
 * binary tree of the hosts' ranks j, after and before the host's NVLS
 * legs.  On a rail-optimized fabric rank j's part (its NVLinks to the
 * channel's NVLS switch, its PCIe path to its NIC, rail j) is rank 0's
 * moved to other links: when no link carries two ranks' transfers and
 * every transfer of rank j crosses, hop for hop, links of the same
 * capacity and latency as rank 0's matching transfer, the map of rank 0's
 * links to rank j's being one map for all transfers, then alone on the
 * network every rank's flows get the same rates at the same times as rank
 * 0's (max-min sharing sees the same system L times over, on disjoint
 * links), every dependency on all L ranks' transfers is met when rank 0's
 * is, and the collective times exactly as rank 0's part alone.  The plan
 * then makes rank 0's part only (FsCollRequest.mirror_rails), 1/L of its
 * transfers; tests/test-coll-fast.c compares such runs with whole ones to
 * the picosecond.
 *
 * Soundness: only for a collective alone on the network (other traffic
 * would break the symmetry), with fixed routes (the route of every pair
 * checked is the one its transfers take, whatever their ECMP key), and
 * equal shards (checked while building, coll/plan.h).
 *
 * Ownership: borrows everything.  Errors: none (FALSE on any doubt).
 * Cost: two route lookups per distinct (host, NVLS switch) pair and per
 * tree edge, per local rank; fs_coll_alone_memo keeps the answer for a
 * sweep's sizes.
 */
#pragma once

#include <glib.h>

#include "coll/plan.h"
#include "collrun/exec.h"
#include "net/flow.h"

G_BEGIN_DECLS

/* TRUE when req, built with algo on comm (its channels' NVLS switches and
 * its host trees), may make local rank 0's part only: algo is the NVLS
 * tree across two or more hosts of L >= 2 ranks each, every route its
 * transfers take is fixed (fixed) and, found with paths, rank j's routes
 * are rank 0's moved by one map of net's channels onto channels of the
 * same capacity and latency, each local rank on channels of its own
 * (above).  ctx: of fixed and paths. */
gboolean fs_coll_rails_mirror(const FsComm *comm, const FsCollAlgo *algo, const FsCollRequest *req,
                              const FsFlowNet *net, FsCollRouteFixedFn fixed,
                              FsCollRoutePathsFn paths, void *ctx);

G_END_DECLS
