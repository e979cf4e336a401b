/* route-private.h — the router's inside, shared by its three files:
 * route.c (options, the router, local searches over PCIe and NVLink, whole
 * routes and their memo, transfers), route-fabric.c (paths over the
 * fabric, static and adaptive) and route-nic.c (the NIC a GPU sends
 * through: rails, PXN relays, NCCL_CROSS_NIC and NCCL_PXN_DISABLE; the legs
 * to and from NICs).  Not for other modules: they use route.h.
 */
#pragma once

#include "net/route.h"

G_BEGIN_DECLS

typedef enum { SUB_NVLINK, SUB_PCIE, SUB_FABRIC } Sub;

#define INF_DIST INT64_MAX
#define MAX_SPRAY 64

typedef struct {
  guint dst;
  Sub sub;
  uint64_t stamp;  /* 0 = empty */
  FsTime *dist;
} CacheEntry;

typedef struct {
  FsTime d;
  guint node;
} HeapItem;

/* A fabric next-hop candidate of a node (FsRouter.fab_adj). */
typedef struct {
  FsTopoAdj adj;     /* the adjacency entry */
  int fidx;          /* the peer's index among the fabric switches */
  FsTime lat;        /* hop_latency of the channel into the peer */
} FabAdj;

/* The router's memo tables (route.c): memoised routes, walks and PXN
 * heads by a 64-bit key, in open addressing (linear probing over a
 * power-of-two number of slots at most half full, the key kept in the
 * slot): a look-up, once per transfer a collective starts, costs a
 * multiply and a probe or two.  Never iterated but to free the entries:
 * the slots' order decides nothing. */
typedef struct Memo Memo;
typedef struct {
  uint64_t key;
  Memo *memo;              /* NULL: an empty slot */
} MemoSlot;
typedef struct {
  MemoSlot *slot;
  guint bits;              /* cap = 1 << bits slots (slot NULL: none yet) */
  guint n;                 /* entries */
} MemoTable;

/* A transfer split over several flows, until its last flow lands. */
typedef struct Transfer Transfer;
struct Transfer {
  guint left;              /* parts not yet landed (+ 1 while they start) */
  guint undrained;         /* parts not yet drained (+ 1 while they start) */
  FsFlowInfo agg;
  FsFlowDoneFn done;
  FsFlowDoneFn drained;    /* may be NULL */
  void *ctx;
  FsRouter *router;
  Transfer *prev, *next;   /* the router's list of transfers in flight (next: of
                              spare records, FsRouter.spare) */
};

struct FsRouter {
  const FsTopo *topo;
  FsFlowNet *net;
  FsRouteOptions opt;
  guint n_nodes;
  FsTime *node_lat;        /* latency of entering each node */
  /* Local searches (PCIe, NVLink): one dense array, reset through the list
   * of the nodes the last search touched. */
  FsTime *sdist;
  GArray *touched;         /* guint */
  /* Fabric searches: distances over the fabric switches only (fidx maps a
   * node to its index among them, or -1), cached per anchor switch. */
  int *fidx;
  guint n_fab;
  /* Per node, its fabric adjacency in adjacency order: the entries whose
   * link is a fabric link and whose peer a fabric switch (fab_first[u] ..
   * fab_first[u + 1] in fab_adj), for the walks' scans. */
  guint *fab_first;
  FabAdj *fab_adj;
  CacheEntry *cache;
  GHashTable *cache_index;  /* anchor node → CacheEntry* */
  uint64_t clock;
  int *near_cpu, *near_nic; /* -2 = not computed yet */
  GArray *heap;            /* HeapItem */
  FsRoute scratch;         /* for fs_router_transfer */
  Transfer *live;      /* transfers in flight (freed with the router) */
  Transfer *spare;     /* finished transfers' records, chained by next, for
                          the next transfers (a step run starts one per step:
                          no allocation each) */
  GArray *stack;           /* spray: channels of the current path */
  /* Memoised routes (see route.h, "Memoisation"): whole routes per (src,
   * dst) and PCIe walks per (src, dst), each kept only when no equal-cost
   * choice was made, so that the key could not have changed it. */
  MemoTable memo;          /* pair key → Memo* */
  MemoTable walk_memo;     /* walk key → Memo* */
  MemoTable pxn_memo;      /* (src, proxy) → Memo*: the one NVLink path of a PXN head */
  GHashTable *picks;       /* (src, local index of the receiving NIC) → Pick*: router_pick_nics */
  /* Per node, its component over NVLink links (through any node): nodes
   * of different components never reach each other over NVLink, so
   * spraying between them is skipped without a search. */
  guint *nvl_island;
  guint ecmp;              /* equal-cost choices made so far (a counter) */
  guint last_choices;      /* of them, made by the last fs_router_route (0 on a memo hit) */
  /* Pieces of a network route (route_search): the source's legs to its NIC,
   * the fabric paths, the leg from the destination's NIC. */
  FsRoute head, fab;
  GArray *leg, *tail;      /* FsChannelId */
  GArray *fstack;          /* adaptive fabric paths: channels of the current path */
  gboolean adaptive;       /* the topology's routing is adaptive */
  /* NVSwitch plane bundles (route-planes.c; route.h). */
  gboolean bundles;        /* on: NVLink transfers of uniform islands are bundled */
  FsChannelId *bundle_up;  /* per node: its bundle channel up (down is + 1), or
                              G_MAXUINT32; NULL until the islands were examined */
  GArray *bundle_rep;      /* FsChannelId per bundle channel (from first_bundle):
                              the plane channel it stands for in reports */
  GArray *planes;          /* FsChannelId: the plane channels of the bundled islands */
  guint8 *is_plane;        /* per topology channel: 1 for those */
  guint first_bundle;      /* the first bundle channel */
  guint bundled_gpus;      /* GPUs with bundle channels */
  uint64_t bundled;        /* transfers bundled since bundles were last set */
  uint64_t barred_base;    /* fs_flownet_barred_starts when they were */
  FsChannelId bundle_path[2];
};

/* Empties route r (no paths, starts = {0}), keeping its arrays. */
static inline void route_reset(FsRoute *r)
{
  r->n_paths = 0;
  g_array_set_size(r->hops, 0);
  g_array_set_size(r->weights, 0);
  g_array_set_size(r->starts, 1);
  g_array_index(r->starts, guint, 0) = 0;
}

/* Closes the path made of the hops appended since the last one. */
static inline void route_end_path(FsRoute *r, double weight)
{
  guint end = r->hops->len;
  g_array_append_val(r->starts, end);
  g_array_append_val(r->weights, weight);
  r->n_paths++;
}

/* Latency of the channel over `link` that enters node `to`. */
/* Appends to hops the channel of the adjacency a out of node u (its link in
 * the direction away from u); returns the node it reaches.  Every walk
 * takes its hops through this. */
static inline guint route_hop(const FsTopo *t, GArray *hops, guint u, const FsTopoAdj *a)
{
  FsChannelId ch = fs_topo_channel_from(t, a->link, u);
  g_array_append_val(hops, ch);
  return a->peer;
}

static inline FsTime hop_latency(const FsRouter *r, guint link, guint to)
{
  return fs_topo_link(r->topo, link)->latency + r->node_lat[to];
}

/* Whether link `link` belongs to subgraph sub (its family; an NVLink to
 * a CPU is PCIe's).  Inline: every search step asks it. */
static inline gboolean router_link_in(const FsTopo *t, guint link, Sub sub)
{
  const FsTopoLink *l = fs_topo_link(t, link);
  FsLinkFamily f = l->model->u.link.family;
  switch (sub) {
  case SUB_NVLINK:
    return f == FS_LINK_NVLINK;
  case SUB_PCIE:
    return f == FS_LINK_PCIE || f == FS_LINK_INTERSOCKET || f == FS_LINK_C2C ||
           (f == FS_LINK_NVLINK && (fs_topo_node(t, l->a)->kind == FS_NODE_CPU ||
                                    fs_topo_node(t, l->b)->kind == FS_NODE_CPU));
  case SUB_FABRIC:
    return f == FS_LINK_INFINIBAND || f == FS_LINK_ETHERNET;
  }
  return FALSE;
}

/* Whether a path over subgraph sub may cross node `node` (NVSwitches for
 * NVLink, PCIe switches and CPUs for PCIe, IB/Ethernet switches for the
 * fabric). */
static inline gboolean router_transit_in(const FsTopo *t, guint node, Sub sub)
{
  const FsTopoNode *n = fs_topo_node(t, node);
  FsSwitchKind sk = n->kind == FS_NODE_SWITCH ? n->model->u.sw.kind : FS_SWITCH_N_KINDS;
  switch (sub) {
  case SUB_NVLINK:
    return sk == FS_SWITCH_NVSWITCH;
  case SUB_PCIE:
    return n->kind == FS_NODE_CPU || sk == FS_SWITCH_PCIE;
  case SUB_FABRIC:
    return sk == FS_SWITCH_INFINIBAND || sk == FS_SWITCH_ETHERNET;
  }
  return FALSE;
}

/* ---- route.c ---- */

/* The router's binary min-heap of (distance, node), ties to the lower
 * node: push, and pop of the least (h not empty).  O(log n). */
void router_heap_push(GArray *h, HeapItem it);
HeapItem router_heap_pop(GArray *h);

/* Distances to dst over a local subgraph (PCIe or NVLink) from every node
 * it reaches (INF_DIST elsewhere).  The array is the router's: valid until
 * the next call.  Cost: the part of the subgraph reached. */
const FsTime *router_local_dist(FsRouter *r, guint dst, Sub sub);

/* Appends to hops a shortest path src → dst over the local subgraph sub,
 * ECMP by key, memoised when no equal-cost choice was made.  FALSE
 * (nothing appended) when there is none. */
gboolean router_walk(FsRouter *r, guint src, guint dst, Sub sub, uint64_t key, GArray *hops);

/* ---- route-planes.c ---- */

/* The bundled path (GPU src up, down to dst) of a route of kind `kind`
 * when it is an NVLink route between two GPUs of a bundled island, in the
 * router's scratch (valid until the next call), else NULL.  Bundles must
 * have been set on once. */
const FsChannelId *router_bundle_path(FsRouter *r, guint src, guint dst, FsRouteKind kind);
/* The channel a flow's bottleneck ch stands for in reports: a bundle
 * channel's last plane, else ch. */
int64_t router_report_channel(const FsRouter *r, int64_t ch);
/* "gpu3 -> NVSwitch planes" for a bundle channel (caller frees), else
 * NULL. */
char *router_bundle_name(const FsRouter *r, FsChannelId ch);

/* ---- route-fabric.c ---- */

/* The fabric paths from endpoint src to endpoint dst (NICs, or GPUs wired
 * to the fabric) into out (reset first): one shortest path, ECMP by key,
 * under static routing; every equal-cost path, at most budget, under
 * adaptive routing.  FALSE when there is none. */
gboolean router_fabric_paths(FsRouter *r, guint src, guint dst, uint64_t key, guint budget,
                             FsRoute *out);

/* ---- route-nic.c ---- */

/* Appends the leg between endpoint ep and its NIC nic (toward the NIC when
 * to_nic): directly over PCIe when no CPU is crossed and the NIC can do
 * GPUDirect RDMA (or ep is host memory), else through ep's nearest CPU;
 * *gdr tells which.  FALSE when there is no path. */
gboolean router_nic_leg(FsRouter *r, guint ep, guint nic, gboolean to_nic, uint64_t key,
                        GArray *hops, gboolean *gdr);

/* Which NIC src sends through toward dst on another host (route.h, rails):
 * *nic; *proxy, the GPU whose NIC it is when the bytes cross NVLink first
 * (PXN), src when src is next to it, -1 when they go over PCIe to a NIC
 * not src's nearest; *recv, dst's NIC.  FALSE when a side has no NIC. */
gboolean router_pick_nics(FsRouter *r, guint src, guint dst, int *nic, int *proxy, int *recv);

G_END_DECLS
