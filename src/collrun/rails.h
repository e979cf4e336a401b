/* rails.h — local ranks that mirror each other in a collective timed
 * alone: the NVLS tree's rails.
 *
 * The NVLS tree (coll/algo-nvls.c) gives shard j of every chunk to local
 * rank j of every host, which carries it through its own NIC up and down a
 * binary tree of the hosts' ranks j, after and before the host's NVLS
 * legs.  Rank j's part runs on its own NVLinks, PCIe path, NIC and rail:
 * rank 0's part moved to other links, where the fabric's routes agree.
 * Every dependency that joins the ranks (the NVLS load-reduce waits for
 * all L ranks' sends, the multicast for all L stores) waits for the same
 * events on every rank.  So alone on the network, when rank j's flows get
 * the rates of rank 0's at the same times, the collective times exactly as
 * rank 0's part alone: the plan then makes rank 0's part only
 * (FsCollRequest.mirror_rails), 1/L of its transfers.
 *
 * When they do, link for link.  Every transfer of rank j is aligned with
 * rank 0's, path for path (same shares) and hop for hop (same latency):
 * each hop pairs a channel a of rank 0 with a channel b of rank j.  A
 * channel b whose one pair is (a, b) for one rank, a's pairs being one per
 * rank onto distinct channels of a's capacity, carries the images of a's
 * flows and nothing else (clean).  Every other channel (shared by two
 * ranks, or by two of rank 0's links' images, or an image of a channel
 * whose images differ) is watched: in the run of rank 0's part, the sum of
 * the loads of the channels paired with it must stay below its capacity,
 * so that it never limits a flow (the rates max-min sharing gives are then
 * those it would give without it).  Then every flow of rank j has the rate
 * of its rank-0 image at every moment: rank 0's flows have a bottleneck on
 * a clean channel, whose image is as loaded with the images of the same
 * flows.  A run whose watches fail is run again whole (collrun/alone.c).
 * On 128 DGX H100 nodes under static routing, whose rails hash their spine
 * links apart, every rail differs from rank 0's in a few spine links that
 * two tree edges share: watched, they stay within their capacity (at most
 * full: two flows at their NICs' rate on a link of twice that), and the
 * NVLS tree's runs take 1/8 of the transfers.  tests/test-coll-fast.c
 * compares mirrored runs with whole ones to the picosecond.
 *
 * Soundness: only for a collective alone on the network (other traffic
 * would break the symmetry), with fixed routes (the route checked is the
 * one every transfer of the pair takes, whatever its ECMP key), and equal
 * shards (checked while building, coll/plan.h).
 *
 * Ownership: FsCollRails borrows comm and net, which must outlive it.
 * Errors: none (NULL on any doubt).  Cost: two route lookups per distinct
 * (host, NVLS switch) pair and per tree edge, per local rank; a sweep's
 * memo keeps the answer (alone.c).
 */
#pragma once

#include <glib.h>

#include "coll/plan.h"
#include "collrun/exec.h"
#include "net/flow.h"

G_BEGIN_DECLS

typedef struct FsCollRails FsCollRails;

/* The rails of req, built with algo on comm (its channels' NVLS switches
 * and host trees), when its runs may make local rank 0's part only: algo
 * is the NVLS tree across two or more hosts of 2 to 64 ranks each, every
 * route its transfers take is fixed (fixed) and, found with paths (ctx: of
 * both), every rank's routes align with rank 0's on net (above).  NULL
 * otherwise. */
FsCollRails *fs_coll_rails_new(const FsComm *comm, const FsCollAlgo *algo,
                               const FsCollRequest *req, const FsFlowNet *net,
                               FsCollRouteFixedFn fixed, FsCollRoutePathsFn paths, void *ctx);
void fs_coll_rails_free(FsCollRails *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollRails, fs_coll_rails_free)

/* The channels watched (0: every channel clean). */
guint fs_coll_rails_n_watched(const FsCollRails *r);
/* Before a run of rank 0's part alone on net: sets its watches. */
void fs_coll_rails_watch(const FsCollRails *r, FsFlowNet *net);
/* After it: TRUE when every watched channel stayed below its capacity
 * (the run timed as the whole plan would); drops the watches. */
gboolean fs_coll_rails_held(const FsCollRails *r, FsFlowNet *net);

G_END_DECLS
