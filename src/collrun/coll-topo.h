/* coll-topo.h — collectives on a real topology: a communicator over some
 * of its GPUs (hosts, NVLS and CollNet switches found in the graph), the
 * system figures NCCL's model needs (measured on the routes), and the
 * transfer callback that sends a plan's transfers through the router.
 *
 * Ownership: the results borrow nothing except where said.  Errors: FS_COLL_ERROR_INVALID for a bad
 * GPU list, FS_NET_ERROR_NO_ROUTE from the router.
 */
#pragma once

#include <glib.h>

#include "coll/tuner.h"
#include "collrun/a2a.h"
#include "collrun/alone.h"
#include "collrun/exec.h"
#include "net/route.h"
#include "topo/topo.h"

G_BEGIN_DECLS

/* A communicator whose rank i is GPU node gpus[i] (n of them).  Ranks of a
 * host keep their order; the host is the node's host (a fabric GPU is its
 * own host).  The host's NVLS switches are the NVSwitch nodes with
 * in-switch reduction that its GPUs link to; with two or more hosts,
 * shard j's CollNet switch is the reducing network switch nearest to the
 * NIC of the first host's local rank j (its rail's leaf).
 *
 * Rings come from an NCCL-like search of the first host's links
 * (coll/ring-search.h; at most max_rings, NCCL's MAXCHANNELS): R Hamiltonian
 * cycles over its GPUs on the fastest path type, as many as the links
 * hold (DGX-1: six NVLink rings; an NVLink full mesh: one per link;
 * behind NVSwitches: GPU order).  Every host uses the same cycles by
 * local rank (hosts are alike).  With one host, ring r is cycle r.  With
 * several hosts of equal size L, ring r follows cycle r mod R through
 * every host, entering each host at local rank r mod L, so host-to-host
 * hops use every NIC; there are lcm(R, L) rings (max(R, L) past
 * max_rings).  The rings' total bandwidth is recorded on the communicator
 * (fs_comm_set_ring_graph).  NULL with error for a node that is not a
 * GPU, a GPU listed twice, or GPUs of a host with no route between them. */
FsComm *fs_coll_comm_from_topo(FsRouter *router, const guint *gpus, guint n, guint max_rings,
                               GError **error);

/* The rings of comm in words, for `explain`: how many, what they carry,
 * and the order of each ring (up to 8 rings) through the first host's
 * GPUs by name, e.g. "ring 0: gpu0 gpu3 gpu2 gpu1 gpu5 gpu6 gpu7 gpu4";
 * with several hosts also each ring's hop out of the first host with the
 * NICs it takes (fs_router_net_nics: PXN, rails), the trees' NICs, and the
 * fabric's load: every host-to-host hop of every ring routed once, how many
 * cross rails and how many share the busiest switch-to-switch link (the
 * collisions of static routing by destination).  Caller frees. */
char *fs_coll_describe_rings(FsRouter *router, const FsComm *comm);

/* Parses a GPU list: "all", a count "N" (the first N GPUs in placement
 * order), or comma-separated GPU names or node indices ("node0/gpu1,3").
 * Returns a newly allocated array of node indices (*n entries), or NULL
 * with FS_COLL_ERROR_INVALID for an empty list, a count out of range or a
 * name that is not a GPU. */
guint *fs_coll_parse_gpus(const FsTopo *topo, const char *text, guint *n, GError **error);

/* NCCL's view of the system for comm: architecture row (from the first
 * rank's GPU model), intra-host transport (NVLINK when rank 0 reaches its
 * ring neighbour over NVLink, else PCI), channels (p->max_channels, or the
 * largest multiple of the communicator's ring count not above it),
 * per-channel bandwidths (inside a host: what the searched rings carry
 * together, or else the route capacity between ring neighbours; across
 * hosts: the route capacity between the first ranks of two hosts; each
 * divided by the channels), NVLS/CollNet availability, LL128 when NVLink.
 * The CPU vendor (NCCL's llMaxBws row and network post overhead) is the
 * catalog vendor of the first CPU on rank 0's host (Intel without one).
 * Point to point (coll/p2p-sched.h):
 * the least channels of a peer on the first rank's host (one route per
 * peer there) and, across hosts, that route capacity as one GPU's network. */
gboolean fs_coll_sysinfo_from_topo(const FsNcclParams *p, FsRouter *router, const FsComm *comm,
                                   FsCollSysInfo *out, GError **error);

/* The transfer context over a router (borrowed; must outlive it): GPU to
 * GPU transfers go through fs_router_transfer (NCCL's transports, NVLink
 * spraying, ECMP); transfers to or from a reducing switch (NVLS, CollNet)
 * take the fewest-hop path that crosses no GPU (cached). */
typedef struct FsCollTopoNet FsCollTopoNet;
FsCollTopoNet *fs_coll_topo_net_new(FsRouter *router);
void fs_coll_topo_net_free(FsCollTopoNet *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollTopoNet, fs_coll_topo_net_free)

/* FsCollTransferFn over an FsCollTopoNet (ctx). */
gboolean fs_coll_topo_xfer(void *ctx, int src, int dst, uint64_t bytes, double rate_cap,
                           uint64_t key, FsFlowDoneFn done, FsFlowDoneFn drained, void *done_ctx,
                           void *user, GError **error);
/* FsCollTransferCopiesFn over an FsCollTopoNet (ctx): fs_coll_topo_xfer's
 * paths, one flow per path for all the copies. */
gboolean fs_coll_topo_xfer_copies(void *ctx, int src, int dst, uint64_t bytes, guint copies,
                                  double rate_cap, uint64_t key, FsFlowDoneFn done,
                                  FsFlowDoneFn drained, void *done_ctx, void *user, GError **error);

/* FsCollRouteFixedFn over an FsCollTopoNet (ctx): TRUE when transfers
 * from node src to node dst take the same paths whatever their key (no
 * ECMP choice on the way), so that identical channels can be folded. */
gboolean fs_coll_topo_route_fixed(void *ctx, int src, int dst);

/* FsCollPlaneBundlesFn over an FsCollTopoNet (ctx, alone.h): sets the
 * NVSwitch plane bundles of its router on or off
 * (fs_router_set_plane_bundles); returns, when off, whether the run since
 * they were set on held (fs_router_plane_bundles_held), and TRUE when on. */
gboolean fs_coll_topo_plane_bundles(void *ctx, gboolean on);
/* FsCollRouteFixedFn over an FsCollTopoNet (ctx, alone.h): TRUE when a
 * transfer from node src to node dst puts no flow on a bundled NVSwitch
 * plane other than its own bundled one (fs_router_plane_pinned; for a
 * switch endpoint, its path), so that bundles hold for it. */
gboolean fs_coll_topo_planes_free(void *ctx, int src, int dst);

/* Sets the route callbacks of o to those of an FsCollTopoNet t (ctx):
 * route_fixed and the plane bundles' two always; on the max-min model
 * (maxmin) also route_paths and the alltoall load model's four, which give
 * the stream model and the load model their routes (alone.h; the analytic
 * model keeps its step runs).  Leaves o's other fields as they are. */
void fs_coll_topo_alone_routes(FsCollAloneOpts *o, FsCollTopoNet *t, gboolean maxmin);

/* FsCollRouteProfileFn over an FsCollTopoNet (ctx, dedup.h): the analytic
 * figures of the paths from node src to node dst (per path: its share of
 * the bytes, smallest capacity, latency); FALSE when the route depends on
 * the key (as fs_coll_topo_route_fixed) or there is none. */
gboolean fs_coll_topo_route_profile(void *ctx, int src, int dst, GByteArray *out);

/* The rate cap (bytes/s) of a lone send of bytes from GPU node src to GPU
 * node dst outside any collective (a pipeline-parallel send of `train`, a
 * trace's send in `replay`): NCCL's channels for that send on a two-rank
 * communicator across hosts, times the per-channel network bandwidth
 * (coll/p2p-sched.h); 0 (no cap) when both GPUs are on one host, when the
 * params have no p2p_schedule table, or when no route exists.  Cost: one
 * route lookup. */
double fs_coll_p2p_send_cap(const FsNcclParams *p, FsRouter *router, int src, int dst,
                            uint64_t bytes);

/* FsCollRoutePathsFn over an FsCollTopoNet (ctx, exec.h): the paths a
 * transfer from node src to node dst with ECMP key `key` takes, as
 * fs_coll_topo_xfer sends it (a reducing switch: its one path). */
gboolean fs_coll_topo_route_paths(void *ctx, int src, int dst, uint64_t key, GArray *weights,
                                  GArray *hops);

/* FsCollRouteRelayFn over an FsCollTopoNet (ctx, a2a.h): the GPU whose NIC
 * sends from GPU node src to GPU node dst (fs_router_net_nics' proxy). */
int fs_coll_topo_route_relay(void *ctx, int src, int dst);
/* FsCollRouteRailFn over an FsCollTopoNet (ctx, a2a.h): the local index
 * of dst's nearest NIC (its receiving NIC, net/route.h). */
int fs_coll_topo_route_rail(void *ctx, int dst);

/* FsCollRouteFabricFn over an FsCollTopoNet (ctx, a2a.h). */
int fs_coll_topo_route_fabric(void *ctx, FsChannelId ch);

/* FsCollRouteOnceFn over an FsCollTopoNet (ctx, a2a.h): fs_router_route_once
 * with key 0 (a reducing switch: its one path, always fixed). */
gboolean fs_coll_topo_route_once(void *ctx, int src, int dst, GArray *weights, GArray *hops,
                                 gboolean *fixed);

G_END_DECLS
