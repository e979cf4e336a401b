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
 *   NET_GDR     different hosts: GPU → its nearest NIC over PCIe without a
 *               CPU on the way (GPUDirect RDMA, NIC model permitting), the
 *               fabric, NIC → GPU likewise.
 *   NET_STAGED  the same where a side must go through its CPU's memory.
 * Within one subgraph the path is a shortest path by latency; among equal
 * ones (ECMP) the next hop is chosen by fs_hash64 of (flow key, node), so a
 * flow key always takes the same path and different keys spread, except
 * at a fabric switch that routes by destination (FsRouteOptions.ecmp):
 * there the pick hashes (destination endpoint, switch) and ignores the key,
 * as the linear forwarding table an InfiniBand subnet manager programs
 * (one output port per destination LID: IBTA spec vol. 1 §18.2.4.3;
 * OpenSM's minhop/updn/ftree engines fill it) — so every transfer between
 * two endpoints takes one path whatever its key.  Ethernet (RoCE) switches
 * hash a flow's 5-tuple (per queue pair, so per key).  A GPU
 * uses its nearest NIC (multi-rail: ties go to the NIC with the GPU's local
 * index, then the lowest node).
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
 * full), a few hundred bytes each.
 *
 * Ownership: the router borrows the topology and the flow network, which
 * must outlive it.  It owns the bookkeeping of transfers in flight: free it
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
} FsRouteOptions;

/* The defaults: auto P2P level, nothing disabled, 1024 cached fabric
 * destinations, ECMP auto (by destination on InfiniBand). */
void fs_route_options_init(FsRouteOptions *opt);
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

/* The ECMP decisions of the last fs_router_route call: how many times a
 * next hop was picked by the key among several equal ones.  0 means that
 * route is the same for every key. */
guint fs_router_last_choices(const FsRouter *router);

/* The nearest CPU (host memory) of a node in its host, or -1. */
int fs_router_nearest_cpu(FsRouter *router, guint node);
/* The NIC a GPU (or CPU) uses, or -1 when its host has none. */
int fs_router_nearest_nic(FsRouter *router, guint node);

/* Starts a transfer of bytes from src to dst at time start: one flow per
 * path of the route, the bytes split by the weights (remainders to the
 * last), the rate cap (0 = none) likewise.  done runs once, when the last
 * byte of the last flow has landed, with an FsFlowInfo for the whole
 * transfer: start, drained and finish of the last flow, all the bytes,
 * mean_rate = bytes / (drained - start), the bottleneck of the last flow to
 * drain, path_len = the number of flows.  FALSE with error if no route. */
gboolean fs_router_transfer(FsRouter *router, guint src, guint dst, uint64_t bytes,
                            FsTime start, double rate_cap, uint64_t key, FsFlowDoneFn done,
                            void *ctx, void *user, GError **error);

/* The P2P level that applies to a GPU: the option, or with "auto" PXB
 * when its host's CPUs are Intel (or NVIDIA Grace), else SYS. */
FsPathType fs_router_p2p_level(const FsRouter *router, guint gpu);

/* "gpu3 -> nvswitch1" for channel ch (caller frees). */
char *fs_router_channel_name(const FsRouter *router, FsChannelId ch);

G_END_DECLS
