/* route.h — routing on the topology graph: which channels a transfer
 * between two endpoints (GPUs, or a CPU standing for host memory) crosses,
 * decided the way NCCL decides its transports.
 *
 * The router puts the topology's channels into a flow network: channel
 * 2*link+dir (dir 0 = a→b) with the link's per-direction bandwidth, and a
 * latency equal to the link's plus that of the node it enters (a switch's
 * switching latency, a NIC's processing latency, a CPU's root-complex
 * latency).  So a path's latency is the sum over its hops.
 *
 * Transports, first match wins (NCCL: src/graph/paths.cc, p2p and net):
 *   LOCAL       src == dst: no channel.
 *   NVLINK      GPU to GPU over NVLink only, directly or through NVSwitches
 *               (never through another GPU).  All equal-latency shortest
 *               paths are used at once, the bytes split in proportion to
 *               each path's bottleneck bandwidth: NVSwitch planes spread a
 *               transfer over every plane (DGX H100: 5+4+4+5 links); a
 *               point-to-point mesh gives a pair only its own links.
 *   PCIE_P2P    GPU to GPU in one host over PCIe (through PCIe switches,
 *               root complexes, the inter-socket link), when the pair's path
 *               type (topo/paths.h) is within the P2P level.
 *   HOST        GPU to GPU in one host staged through host memory: to the
 *               source's nearest CPU, then on to the destination.
 *   PCIE        host memory (a CPU node) to or from a GPU of its host.
 *   NET_GDR     different hosts: GPU → a NIC of its host over PCIe without a
 *               CPU on the way (GPUDirect RDMA, NIC model permitting), the
 *               fabric, NIC → GPU likewise.
 *   NET_STAGED  the same where a side must go through its CPU's memory.
 * Which NICs a GPU-to-GPU network route uses (rails).  The destination
 * receives on its nearest NIC.  The source sends through the NIC of its
 * host with the same local index as that NIC (the destination's rail), as
 * NCCL's rings and trees do on multi-rail systems: a channel enters and
 * leaves a node through the same NIC (NCCL: src/graph/search.cc, "NET n ->
 * GPU a -> .. -> GPU x -> NET n"), so every host-to-host hop stays on one
 * rail.  The source uses that NIC directly when its PCIe path to it
 * crosses no CPU (NCCL's PIX or PXB: a NIC on the source's own PCIe
 * switches) and is as fast as the path of the NIC's own GPU; otherwise PXN
 * (NCCL's rule, src/graph/paths.cc): the bytes
 * cross NVLink (sprayed as NVLINK above) to the GPU next to that NIC, whose
 * proxy sends them (NCCL_PXN_DISABLE, since NCCL 2.12: "inter-node
 * communication using a non-local NIC, using NVLink and an intermediate
 * GPU"); without PXN they go over PCIe to that NIC (through the CPU's
 * memory when the path crosses a CPU).  FsRouteOptions.cross_nic decides
 * as NCCL_CROSS_NIC does (NCCL docs, env.html#nccl-cross-nic): 0 always the
 * destination's rail; 1 different NICs allowed, so the source's nearest NIC
 * (a hop from rail i to rail j crosses the spines); 2 (NCCL's default) the
 * destination's rail when PXN reaches it, else the nearest NIC.  (NCCL's
 * search relaxes the path type to PXN before it allows crossing NICs, and
 * reserves each NIC's bandwidth per channel; that without PXN it prefers
 * the nearest NIC at full speed to a same-NIC path over PCIe is this
 * model's reading of the search, not a rule NCCL documents.)  A host
 * without a NIC of that index uses its nearest NIC.
 * Within one subgraph the path is a shortest path by latency; among equal
 * ones (ECMP) the next hop is chosen by fs_hash64 of (flow key, node), so a
 * flow key always takes the same path and different keys spread, except
 * at a fabric switch that routes by destination (FsRouteOptions.ecmp):
 * there the pick hashes (destination endpoint, switch) and ignores the key,
 * as the linear forwarding table an InfiniBand subnet manager programs
 * (one output port per destination LID: IBTA spec vol. 1 §18.2.4.3;
 * OpenSM's minhop/updn/ftree engines fill it) — so every transfer between
 * two endpoints takes one path whatever its key.  Ethernet (RoCE) switches
 * hash a flow's 5-tuple (per queue pair, so per key).  A GPU's nearest NIC
 * is the closest over PCIe (multi-rail: ties go to the NIC with the GPU's
 * local index, then the lowest node).
 *
 * Adaptive routing (topology `routing: adaptive`, fs_topo_routing): every
 * fabric switch spreads each transfer over all its equal-cost next hops,
 * evenly, instead of picking one.  An InfiniBand switch with adaptive
 * routing "select[s] the output port based on the port's load" among an AR
 * group that the subnet manager configures, on a fat tree "all ports with
 * minimal hops to destination" (NVIDIA, InfiniBand Cluster Bring-up
 * Procedure, "Adaptive Routing": docs.nvidia.com/networking/display/
 * ibclusterbringupprocedure/adaptive+routing; Quantum-2 switches, AR on by
 * default in opensm.conf).  At flow level a transfer becomes one flow per
 * equal-cost fabric path, the bytes split evenly at each switch (what
 * load-based port choice averages to under a symmetric load), at most
 * FS_ROUTE_MAX_PATHS paths (past that, a switch splits over a subset of its
 * next hops chosen by the destination).  Such a route makes no choice by
 * key.
 *
 * Knobs (FsRouteOptions), after NCCL's environment: p2p_level (NCCL_P2P_LEVEL:
 * PIX, PXB, PHB, SYS; NODE counts as PHB, as in NCCL; default: PXB when a host's
 * CPUs are Intel, else SYS, as ncclTopoCheckP2p), p2p_disable
 * (NCCL_P2P_DISABLE: no NVLink or PCIe peer-to-peer, everything staged
 * through host memory), ib_disable (NCCL_IB_DISABLE: no network, so no
 * route between hosts).
 *
 * Memory and cost.  Inside a host (PCIe) or NVLink domain a route runs a
 * Dijkstra from the destination over the part of that subgraph it reaches
 * (a few dozen nodes in a server).  Across the fabric, distances to the
 * switch the destination NIC hangs from are computed over the fabric's
 * switches only and kept in an LRU cache of cache_size entries (default
 * 1024): memory O(nodes + cache_size × fabric switches), never O(GPUs²)
 * (16,384-GPU cluster: 86 MiB peak in bench-flows, all included).  A route
 * costs O(path × degree) plus, on a cache miss, one Dijkstra over the
 * fabric switches.  Nearest CPU and NIC per node are cached (O(nodes)).
 *
 * Memoisation.  A route that made no equal-cost choice on its way (so the
 * key could not have changed it: NVLink sprays, paths inside a host, a
 * fabric path under one leaf switch) is kept per (src, dst) and copied on
 * the next request; for a route that did, the router remembers that
 * NVLink does not reach and keeps each PCIe leg that made no choice.  The
 * result is the same as without the memo (the topology and options never
 * change); each table holds at most 2^18 entries (it is emptied when
 * full), a few hundred bytes each, in open addressing (a look-up per
 * transfer: a multiply and a probe or two).  Pieces of network routes that no key
 * enters are kept too: the NIC a GPU sends through toward each rail (and
 * its PXN relay), the relay's NVLink head per (GPU, relay), and per node
 * its NVLink component (GPUs of different components are not searched
 * for an NVLink path) — O(GPUs × rails) entries.
 *
 * Ownership: the router borrows the topology and the flow network, which
 * must outlive it.  It owns the bookkeeping of transfers in flight (a
 * finished transfer's record is kept for the next one, not freed): free it
 * after they completed, or free it and then the network without running
 * the simulation further.  Errors: FS_NET_ERROR_NO_ROUTE, naming both
 * endpoints.
 */
#pragma once

#include <glib.h>

#include "net/flow.h"
#include "topo/paths.h"
#include "topo/topo.h"

G_BEGIN_DECLS

#define FS_ROUTE_KINDS(X)        \
  X(LOCAL, "local")              \
  X(NVLINK, "nvlink")            \
  X(PCIE_P2P, "pcie-p2p")        \
  X(HOST, "host-staged")         \
  X(PCIE, "pcie")                \
  X(NET_GDR, "net-gdr")          \
  X(NET_STAGED, "net-staged")

typedef enum {
#define X(id, str) FS_ROUTE_##id,
  FS_ROUTE_KINDS(X)
#undef X
  FS_ROUTE_N_KINDS
} FsRouteKind;

const char *fs_route_kind_name(FsRouteKind k);

/* The P2P level's "auto" value: decided per host from its CPU vendor. */
#define FS_P2P_LEVEL_AUTO FS_PATH_N_TYPES

/* How a fabric switch picks among equal-cost next hops.  AUTO (the
 * default, 0): by destination at InfiniBand switches (static forwarding
 * tables from the subnet manager, as above; adaptive routing is not
 * modelled), by flow key at every other switch (Ethernet ECMP hashes the
 * 5-tuple).  FLOW: by key everywhere (each transfer key draws its own
 * path: the behaviour before the knob existed).  DESTINATION: by
 * destination everywhere. */
#define FS_ROUTE_ECMP_MODES(X)           \
  X(AUTO, "auto")                        \
  X(FLOW, "flow")                        \
  X(DESTINATION, "destination")

typedef enum {
#define X(id, str) FS_ROUTE_ECMP_##id,
  FS_ROUTE_ECMP_MODES(X)
#undef X
  FS_ROUTE_ECMP_N
} FsRouteEcmp;

const char *fs_route_ecmp_name(FsRouteEcmp e);
/* Parses an ECMP mode name (auto, flow, destination).  FALSE if unknown. */
gboolean fs_route_ecmp_from_name(const char *s, FsRouteEcmp *out);

typedef struct {
  FsPathType p2p_level;  /* FS_PATH_PIX … FS_PATH_SYS, or FS_P2P_LEVEL_AUTO */
  gboolean p2p_disable;
  gboolean ib_disable;
  guint cache_size;      /* distance arrays kept (>= 1) */
  FsRouteEcmp ecmp;      /* equal-cost picks at fabric switches (above) */
  guint cross_nic;       /* NCCL_CROSS_NIC: 0, 1 or 2 (above) */
  gboolean pxn_disable;  /* NCCL_PXN_DISABLE=1: no PXN (above) */
} FsRouteOptions;

/* Most paths of one route (NVLink planes × adaptive fabric paths). */
#define FS_ROUTE_MAX_PATHS 64

/* The defaults: auto P2P level, nothing disabled, 1024 cached fabric
 * destinations, ECMP auto (by destination on InfiniBand), and
 * NCCL_CROSS_NIC / NCCL_PXN_DISABLE from the environment as NCCL reads
 * them (2 and 0 when unset; a value that is not 0/1/2, 0/1 is ignored here:
 * fs_route_options_check_env reports it). */
void fs_route_options_init(FsRouteOptions *opt);
/* FALSE with G_OPTION_ERROR_BAD_VALUE naming the variable when
 * NCCL_CROSS_NIC is set to other than 0, 1, 2 or NCCL_PXN_DISABLE to other
 * than 0, 1 (the commands call it once, at the start of a scenario). */
gboolean fs_route_options_check_env(GError **error);
/* Parses a P2P level name (NVL, PIX, PXB, PHB, NODE, SYS, or LOC/0 for none,
 * case-insensitive) as NCCL_P2P_LEVEL does.  FALSE if unknown. */
gboolean fs_route_p2p_level_from_name(const char *s, FsPathType *out);

/* A route: one or more paths, each with its share of the bytes.  Reused
 * across calls (fs_route_init once, fs_route_clear at the end). */
typedef struct {
  FsRouteKind kind;
  guint n_paths;
  GArray *hops;     /* FsChannelId: the paths back to back */
  GArray *starts;   /* guint: path i is hops[starts[i] .. starts[i+1]) */
  GArray *weights;  /* double: share of the bytes of path i; they sum to 1 */
} FsRoute;

void fs_route_init(FsRoute *route);
void fs_route_clear(FsRoute *route);
static inline const FsChannelId *fs_route_path(const FsRoute *r, guint i, guint *len)
{
  guint a = g_array_index(r->starts, guint, i), b = g_array_index(r->starts, guint, i + 1);
  *len = b - a;
  /* An empty path (a transfer to itself) may have no hop storage at all. */
  return b > a ? &g_array_index(r->hops, FsChannelId, a) : NULL;
}

typedef struct FsRouter FsRouter;

/* Creates a router over topo (finalized) and adds its channels to net,
 * which must have none yet.  opt may be NULL (defaults). */
FsRouter *fs_router_new(const FsTopo *topo, FsFlowNet *net, const FsRouteOptions *opt);
void fs_router_free(FsRouter *router);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsRouter, fs_router_free)

const FsTopo *fs_router_topo(const FsRouter *router);
FsFlowNet *fs_router_net(const FsRouter *router);

/* Routes src → dst (node indices of GPUs or CPUs).  key selects among
 * equal-cost paths (use a flow id or a hash of it).  FALSE with
 * FS_NET_ERROR_NO_ROUTE when no transport applies. */
gboolean fs_router_route(FsRouter *router, guint src, guint dst, uint64_t key, FsRoute *out,
                         GError **error);
/* The same route, but a pair not in the memo yet is not stored there: for
 * one-off look-ups over many pairs (a group's class signature routes
 * every ordered pair once), which would only churn the memo. */
gboolean fs_router_route_once(FsRouter *router, guint src, guint dst, uint64_t key, FsRoute *out,
                              GError **error);

/* The ECMP decisions of the last fs_router_route call: how many times a
 * next hop was picked by the key among several equal ones.  0 means that
 * route is the same for every key. */
guint fs_router_last_choices(const FsRouter *router);

/* The nearest CPU (host memory) of a node in its host, or -1. */
int fs_router_nearest_cpu(FsRouter *router, guint node);
/* The nearest NIC of a GPU (or CPU), or -1 when its host has none. */
int fs_router_nearest_nic(FsRouter *router, guint node);

/* The NICs a network route from GPU src to GPU dst on another host uses
 * (rails, above): *send_nic on src's host, *recv_nic on dst's, and *proxy,
 * the GPU whose NIC sends (src itself, or with PXN the GPU next to
 * *send_nic; -1 when the bytes go over PCIe to a NIC not the nearest).
 * FALSE when the two are not GPUs of different hosts with NICs. */
gboolean fs_router_net_nics(FsRouter *router, guint src, guint dst, int *send_nic, int *recv_nic,
                            int *proxy);

/* Starts a transfer of bytes from src to dst at time start: one flow per
 * path of the route, the bytes split by the weights (remainders to the
 * last), the rate cap (0 = none) likewise.  done runs once, when the last
 * byte of the last flow has landed, with an FsFlowInfo for the whole
 * transfer: start, drained and finish of the last flow, all the bytes,
 * mean_rate = bytes / (drained - start), the bottleneck of the last flow to
 * drain, path_len = the number of flows.  A transfer that lands at once
 * (zero bytes, no latency: src = dst) calls done before returning, after
 * every part has started; done may start other transfers.  FALSE with
 * error if no route. */
gboolean fs_router_transfer(FsRouter *router, guint src, guint dst, uint64_t bytes,
                            FsTime start, double rate_cap, uint64_t key, FsFlowDoneFn done,
                            void *ctx, void *user, GError **error);
/* fs_router_transfer for `copies` identical transfers (1 to
 * FS_FLOW_MAX_COPIES; bytes and rate_cap are each copy's): each path's part
 * of one copy, split as above, runs as one flow of that many copies
 * (FsFlowSpec.copies), so the copies get what separate transfers would
 * under max-min, from copies times fewer flows; done runs once, with the
 * bytes of all the copies.  drained (may be NULL) runs once, when the last
 * part has drained (FsFlowSpec.drained: its last byte left the source),
 * with the same FsFlowInfo as done will get (drained, finish and bytes of
 * the whole transfer), before done; for a transfer that drains at once
 * (zero bytes) before returning, after every part has started. */
gboolean fs_router_transfer_copies(FsRouter *router, guint src, guint dst, uint64_t bytes,
                                   guint copies, FsTime start, double rate_cap, uint64_t key,
                                   FsFlowDoneFn done, FsFlowDoneFn drained, void *ctx, void *user,
                                   GError **error);

/* NVSwitch plane bundles (route-planes.c).  While on, an NVLink transfer
 * between two GPUs of a uniform NVSwitch island — every GPU linked to
 * every one of its (two or more) NVSwitches by one link of the same
 * capacity as the other GPUs' to that switch, at one latency over all its
 * planes, no other NVLink at its GPUs or switches — runs as one flow over two bundled
 * channels (the source's up to the planes, the destination's down, each
 * of the planes' summed capacity) instead of one flow per plane.  Under
 * max-min that is the per-plane allocation while every flow on the planes
 * is such a transfer's part (route-planes.c says why), up to the split's
 * byte remainders and floating-point rounding.  Other routes, and every
 * route of an island that is not uniform (a failed link), run as before;
 * fs_router_route is unchanged.  Bundle channels are added to the network
 * (after the links' channels) when bundles are first set on; reports
 * name them after the planes (fs_router_channel_name) and a transfer's
 * bottleneck is the last plane's channel.  Set on or off only while the
 * network carries no flow; a no-op on the analytic model.  For a
 * collective timed alone, whose caller reads no per-link counters
 * (the planes carry nothing while bundled). */
void fs_router_set_plane_bundles(FsRouter *router, gboolean on);
/* FALSE when, since bundles were last set, a transfer was bundled and a
 * flow crossed a plane channel of a bundled island (a PXN head pinned to
 * one plane, an NVLS leg started on a switch): the planes were not
 * proportional, and the run should be repeated without bundles. */
gboolean fs_router_plane_bundles_held(const FsRouter *router);
/* TRUE when a transfer from src to dst would put a flow on a plane of a
 * bundled island without being bundled (a PXN head on one plane), so
 * that a run of it with bundles would not hold; also TRUE when there is
 * no route.  Examines the islands the first time.  Cost: a route
 * (memoised) and its hops.  The same for a path the caller starts itself
 * (an NVLS leg): fs_router_plane_pinned_path. */
gboolean fs_router_plane_pinned(FsRouter *router, guint src, guint dst);
gboolean fs_router_plane_pinned_path(FsRouter *router, const FsChannelId *path, guint len);
/* Appends one path to arrays laid out as collrun/exec.h's
 * FsCollRoutePathsFn fills them: its weight to weights (double), its hop
 * count then its channels to hops (FsChannelId). */
void fs_route_append_path(GArray *weights, GArray *hops, double weight, const FsChannelId *path,
                          guint len);
/* Appends every path of route so (fs_route_append_path, with its weight). */
void fs_route_append_paths(const FsRoute *route, GArray *weights, GArray *hops);
/* The paths the flows of a transfer from src to dst with ECMP key `key`
 * would take if started now: the route's (fs_router_route) or, while
 * bundles are on and the transfer would be bundled, the one path of its
 * two bundle channels (weight 1), appended per path
 * (fs_route_append_path).  FALSE when there is no route. */
gboolean fs_router_flow_paths(FsRouter *router, guint src, guint dst, uint64_t key,
                              GArray *weights, GArray *hops);
/* The GPUs in uniform islands, which bundles would cover (0 on the
 * analytic model).  Examines the islands the first time (O(NVLinks)). */
guint fs_router_plane_bundle_gpus(FsRouter *router);

/* The P2P level that applies to a GPU: the option, or with "auto" PXB
 * when its host's CPUs are Intel (or NVIDIA Grace), else SYS. */
FsPathType fs_router_p2p_level(const FsRouter *router, guint gpu);

/* "gpu3 -> nvswitch1" for channel ch (caller frees). */
char *fs_router_channel_name(const FsRouter *router, FsChannelId ch);

G_END_DECLS
