/* a2a.h — the load model of an all-to-all across hosts: the time of
 * NCCL's alltoall (grouped send/recv, the direct algorithm of
 * coll/algo-direct.c) from the bytes its sends put on every link, without
 * a plan of its n² transfers.
 *
 * Why: the direct plan starts every send at once, one transfer per peer
 * and p2p channel (coll/p2p-sched.h: one chunk each), so a step run of n
 * ranks holds n(n−1) × channels flows at the same time: 16.7 M on 4,096
 * GPUs, past the memory of the machine (tests/bench/RESULTS.md, "a2a18"),
 * and the stream model (streams.h) has as many streams.  Those transfers
 * all start together, carry the same bytes and have the same rate cap, so
 * under max-min sharing the collective lasts as long as its busiest link
 * needs for the bytes that cross it (or a transfer needs at its cap),
 * plus the slowest path's latency and the executor's latencies
 * (exec-params.h): that is what this model computes.  Measured against the
 * step run (--exec steps and --exact) on 2-128 DGX H100 nodes in
 * tests/bench/RESULTS.md ("Alltoall at 4,096 and 16,384 GPUs: the load
 * model", branch a2a19) and in tests/test-coll-streams.c.
 *
 * The bytes on every link, without routing the n² pairs: a send from GPU
 * g to GPU d on another host leaves through the NIC of d's rail; with PXN
 * its bytes first cross NVLink to the GPU next to that NIC (its relay,
 * net/route.h), so its route is the relay's route to d after g's NVLink
 * head to the relay.  Per source host and destination the model routes
 * each distinct relay once, times the sources that use it, and each
 * (source, relay) head once, times its destinations: H² × L routes for H
 * hosts of L GPUs instead of H² × L², no route kept; a source's relay is
 * asked once per rail (FsCollRouteRailFn), not once per destination.
 * Further, a relay's route to d is its prefix up to the first fabric
 * switch (the NIC's uplink: the same for every destination of a rail)
 * and that switch's route to d, which a switch forwarding by destination
 * (InfiniBand's tables, or adaptive routing's even spread; a route that
 * hashes the key declines above) takes whatever the source: per
 * destination the model routes one relay per first switch (a leaf: H /
 * hosts per leaf of them) and moves the other relays' bytes onto their own
 * prefixes, n × leaves routes in all.  That independence is checked on
 * every source host toward the ranks of the second host (FsCollRouteFabricFn
 * finds the first switch); where it does not hold the per-host sums above
 * run instead.  The decomposition is
 * checked, before anything is summed, on every pair of the first two
 * hosts (their routes and the composed ones must load the same channels
 * with the same shares); where it does not hold, or a route depends on
 * the transfer's ECMP key (a fabric that hashes flows: then channels
 * would not share one path), the model declines and the caller runs the
 * steps.
 *
 * Ownership: borrows everything.  Errors: FS_NET_ERROR_NO_ROUTE (a pair
 * without a route).  Cost: O(n × (leaves + L)) route look-ups (without
 * the switch aggregation O(n² / L)), O(n × rails) relay look-ups, O(n × H)
 * additions, once per communicator with a memo (below); memory O(channels
 * of the network + GPUs × rails).
 */
#pragma once

#include <glib.h>

#include "coll/tuner.h"
#include "net/flow.h"

G_BEGIN_DECLS

/* The GPU whose NIC sends a network transfer from GPU node src to GPU
 * node dst on another host: src itself, or its PXN relay; -1 when the
 * bytes reach the NIC another way (over PCIe through the CPU), or the two
 * are not GPUs of different hosts with NICs. */
typedef int (*FsCollRouteRelayFn)(void *ctx, int src, int dst);
/* The rail of GPU node dst: sends from one GPU to destinations of the same
 * rail take the same relay (net/route.h: the source sends through the NIC
 * with the local index of the destination's receiving NIC); -1 when dst
 * has no NIC. */
typedef int (*FsCollRouteRailFn)(void *ctx, int dst);
/* The paths of a transfer from node src to node dst (key 0), as
 * FsCollRoutePathsFn (exec.h) appends them, without keeping the route in
 * any memo (a look-up over n² pairs); *fixed: no ECMP choice was made on
 * the way (every key takes these paths).  FALSE when there is no route. */
typedef gboolean (*FsCollRouteOnceFn)(void *ctx, int src, int dst, GArray *weights, GArray *hops,
                                      gboolean *fixed);

/* The node channel ch leads into when it belongs to no host (a fabric
 * switch), else -1. */
typedef int (*FsCollRouteFabricFn)(void *ctx, FsChannelId ch);

typedef struct {
  FsCollRouteRelayFn relay;
  FsCollRouteOnceFn once;
  FsCollRouteRailFn rail;
  FsCollRouteFabricFn fabric; /* NULL: no aggregation by fabric switch (below) */
  void *ctx; /* of all four */
} FsCollA2aRoutes;

/* TRUE when the load model can time req (built with choice->algo on
 * comm): an alltoall of the direct algorithm across two or more hosts
 * whose every channel's share of a peer's block is one transfer
 * (NCCL's p2p schedule, choice->chunk_bytes at least that share), so that
 * every transfer starts at once.  Cost: O(channels). */
gboolean fs_coll_a2a_applies(const FsComm *comm, const FsCollChoice *choice,
                             const FsCollRequest *req);

/* The transfers a step run of req would hold at once (n(n−1) ×
 * channels), for the rule of --exec auto and the guard (alone.c). */
double fs_coll_a2a_transfers(const FsComm *comm, const FsCollRequest *req);

/* The rule of --exec auto for an alltoall the load model applies to
 * (alone.c): TRUE from FS_COLL_A2A_AUTO_TRANSFERS transfers in a step run
 * (fs_coll_a2a_transfers), where the model was measured against the step
 * runs (a2a.h) and the step run costs seconds. */
#define FS_COLL_A2A_AUTO_TRANSFERS (1u << 18)
/* Under --exec steps the load model stands in for the step run from this
 * many transfers (a shortcut exact where measured, like the step engine's
 * others, alone.h): the step run of 2^22 transfers holds them all at
 * once, about 1.7 GiB (4,096 DGX H100 GPUs: 16.7 M, out of memory after
 * 12.7 s under a 4 GB limit, though just under the plan-step guard). */
#define FS_COLL_A2A_STEPS_TRANSFERS (1u << 22)
gboolean fs_coll_a2a_pick(const FsComm *comm, const FsCollRequest *req);

/* What the sizes of a sweep share: per communicator, network and route
 * context, the figures of its loads per wire byte of a block (the busiest
 * channel's seconds per byte, the slowest paths' latencies), or that the
 * model declined.  The loads are summed per wire byte whether or not a
 * memo is used, so that a size gives the same time alone and in a sweep.
 * Borrows the communicators and networks, which must outlive it. */
typedef struct FsCollA2aMemo FsCollA2aMemo;
FsCollA2aMemo *fs_coll_a2a_memo_new(void);
void fs_coll_a2a_memo_free(FsCollA2aMemo *memo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollA2aMemo, fs_coll_a2a_memo_free)

/* Times req (fs_coll_a2a_applies; nbytes as fs_coll_cost) alone on net
 * from now: the executor's base latency, the busiest link's load over its
 * capacity (or a transfer's wire bytes over its rate cap, whichever is
 * longer), the slowest path's latency and the step latency into the
 * caller's buffer; the simulation advances by it.  memo (may be NULL):
 * the loads of an earlier size of the same communicator, network and
 * routes, or where this size's go.  *timed FALSE (and the clock
 * unchanged) when the model declines (above).  FALSE with error when a
 * pair has no route. */
gboolean fs_coll_a2a_time_alone(const FsNcclParams *p, const FsCollSysInfo *sys,
                                const FsComm *comm, uint64_t nbytes, const FsCollChoice *choice,
                                const FsCollRequest *req, FsFlowNet *net,
                                const FsCollA2aRoutes *routes, FsCollA2aMemo *memo,
                                gboolean *timed, FsTime *elapsed, GError **error);

G_END_DECLS
