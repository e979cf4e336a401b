/* route.c — transports and shortest paths on the topology graph.
 * Contract in route.h.
 *
 * Three subgraphs, each a set of link families and of nodes a path may
 * cross (endpoints may be anything):
 *   NVLINK  NVLink links, through NVSwitches;
 *   PCIE    PCIe, inter-socket and NVLink-C2C links (and NVLinks that end at
 *           a CPU), through PCIe switches and CPUs;
 *   FABRIC  InfiniBand and Ethernet links, through IB/Ethernet switches.
 * An edge u→v weighs the latency of its channel (the link's plus v's
 * entry latency).  NVLink and PCIe searches are local to a host or rack:
 * local_dist() runs a Dijkstra from the destination over the part of the
 * subgraph it reaches, in one dense array reset through a touched list.
 * Fabric searches are per anchor (the switch the destination NIC hangs
 * from) over the fabric's switches only, in compact arrays cached LRU
 * (fabric_dist).  walk() / walk_fabric() follow a shortest path from the
 * source, choosing among equal next hops by hash; spray() enumerates all
 * of them (NVLink).
 */
#include "net/route.h"

#include <string.h>

#include "core/rng.h"
#include "util/names.h"

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

/* A transfer split over several flows, until its last flow lands. */
typedef struct Transfer Transfer;
struct Transfer {
  guint left;
  FsFlowInfo agg;
  FsFlowDoneFn done;
  void *ctx;
  FsRouter *router;
  Transfer *prev, *next;   /* the router's list of transfers in flight */
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
  CacheEntry *cache;
  GHashTable *cache_index;  /* anchor node → CacheEntry* */
  uint64_t clock;
  int *near_cpu, *near_nic; /* -2 = not computed yet */
  GArray *heap;            /* HeapItem */
  FsRoute scratch;         /* for fs_router_transfer */
  Transfer *live;      /* transfers in flight (freed with the router) */
  GArray *stack;           /* spray: channels of the current path */
  /* Memoised routes (see route.h, "Memoisation"): whole routes per (src,
   * dst) and PCIe walks per (src, dst), each kept only when no equal-cost
   * choice was made, so that the key could not have changed it. */
  GHashTable *memo;        /* pair key → Memo* (lookups only; never iterated) */
  GHashTable *walk_memo;   /* walk key → Memo* */
  guint ecmp;              /* equal-cost choices made so far (a counter) */
  guint last_choices;      /* of them, made by the last fs_router_route (0 on a memo hit) */
  /* Pieces of a network route (route_net): the source's legs to its NIC,
   * the fabric paths, the leg from the destination's NIC. */
  FsRoute head, fab;
  GArray *leg, *tail;      /* FsChannelId */
  GArray *fstack;          /* adaptive fabric paths: channels of the current path */
  gboolean adaptive;       /* the topology's routing is adaptive */
};

/* A memoised route (or walk): its paths, or for a route that depends on
 * the key only the fact that NVLink does not reach (no_nvlink). */
typedef struct {
  uint64_t key;            /* (src << 32 | dst), or the walk's key */
  gboolean keyed;          /* the route depends on the key: only no_nvlink is valid */
  gboolean no_nvlink;      /* NVLink spraying found no path */
  FsRouteKind kind;
  guint n_paths, n_hops;
  FsChannelId *hops;
  guint *starts;           /* n_paths + 1 */
  double *weights;
} Memo;

/* Entries kept per table before it is emptied (memory bound: a few
 * hundred bytes per entry). */
#define MEMO_MAX (1u << 18)

static const char *const kind_names[] = { FS_ROUTE_KINDS(FS_NAMES_ENTRY) };

const char *fs_route_kind_name(FsRouteKind k)
{
  g_return_val_if_fail(k < FS_ROUTE_N_KINDS, "?");
  return kind_names[k];
}

static const char *const ecmp_names[] = { FS_ROUTE_ECMP_MODES(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE(FsRouteEcmp, fs_route_ecmp, ecmp_names, FS_ROUTE_ECMP_N, fs_names_index_nocase)

/* An NCCL integer variable's value when it is set to one of 0 .. max, else
 * def (fs_route_options_check_env reports a bad one). */
static guint env_choice(const char *name, guint max, guint def)
{
  const char *v = g_getenv(name);
  if (v == NULL || v[0] < '0' || v[0] > (char)('0' + max) || v[1] != '\0')
    return def;
  return (guint)(v[0] - '0');
}

void fs_route_options_init(FsRouteOptions *opt)
{
  memset(opt, 0, sizeof *opt);
  opt->p2p_level = FS_P2P_LEVEL_AUTO;
  opt->cache_size = 1024;
  /* NCCL's defaults: NCCL_CROSS_NIC 2, NCCL_PXN_DISABLE 0 (env.html). */
  opt->cross_nic = env_choice("NCCL_CROSS_NIC", 2, 2);
  opt->pxn_disable = env_choice("NCCL_PXN_DISABLE", 1, 0) == 1;
}

gboolean fs_route_options_check_env(GError **error)
{
  static const struct {
    const char *name;
    guint max;
  } vars[] = {{"NCCL_CROSS_NIC", 2}, {"NCCL_PXN_DISABLE", 1}};
  for (guint i = 0; i < G_N_ELEMENTS(vars); i++) {
    const char *v = g_getenv(vars[i].name);
    if (v == NULL || v[0] == '\0')
      continue;
    if (v[0] < '0' || v[0] > (char)('0' + vars[i].max) || v[1] != '\0') {
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "%s=%s: expected %s", vars[i].name, v,
                  vars[i].max == 2 ? "0, 1 or 2" : "0 or 1");
      return FALSE;
    }
  }
  return TRUE;
}

gboolean fs_route_p2p_level_from_name(const char *s, FsPathType *out)
{
  static const struct {
    const char *name;
    FsPathType level;
  } names[] = {{"LOC", FS_PATH_SELF}, {"0", FS_PATH_SELF}, {"NVL", FS_PATH_NV},
               {"PIX", FS_PATH_PIX},  {"PXB", FS_PATH_PXB}, {"PHB", FS_PATH_PHB},
               {"NODE", FS_PATH_NODE}, {"SYS", FS_PATH_SYS}};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++)
    if (g_ascii_strcasecmp(s, names[i].name) == 0) {
      *out = names[i].level;
      return TRUE;
    }
  return FALSE;
}

void fs_route_init(FsRoute *route)
{
  memset(route, 0, sizeof *route);
  route->hops = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  route->starts = g_array_new(FALSE, FALSE, sizeof(guint));
  route->weights = g_array_new(FALSE, FALSE, sizeof(double));
}

void fs_route_clear(FsRoute *route)
{
  g_clear_pointer(&route->hops, g_array_unref);
  g_clear_pointer(&route->starts, g_array_unref);
  g_clear_pointer(&route->weights, g_array_unref);
}

static void route_reset(FsRoute *r)
{
  r->n_paths = 0;
  g_array_set_size(r->hops, 0);
  g_array_set_size(r->weights, 0);
  g_array_set_size(r->starts, 1);
  g_array_index(r->starts, guint, 0) = 0;
}

/* Closes the path made of the hops appended since the last one. */
static void route_end_path(FsRoute *r, double weight)
{
  guint end = r->hops->len;
  g_array_append_val(r->starts, end);
  g_array_append_val(r->weights, weight);
  r->n_paths++;
}

/* ---- the subgraphs ---- */

static gboolean link_in(const FsTopo *t, guint link, Sub sub)
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

static gboolean transit_in(const FsTopo *t, guint node, Sub sub)
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

static void memo_free(gpointer p)
{
  Memo *m = p;
  g_free(m->hops);
  g_free(m->starts);
  g_free(m->weights);
  g_free(m);
}

/* Stores m under its key in table, emptying the table first when full. */
static void memo_put(GHashTable *table, Memo *m)
{
  if (g_hash_table_size(table) >= MEMO_MAX)
    g_hash_table_remove_all(table);
  g_hash_table_replace(table, &m->key, m);
}

/* See route.h. Adds two channels per link to net (one per direction, each with the link's
 * latency plus the latency of the node it enters; channel 2l goes from a to b) and sets up the
 * caches. The router borrows topo and net, which must outlive it. */
FsRouter *fs_router_new(const FsTopo *topo, FsFlowNet *net, const FsRouteOptions *opt)
{
  g_return_val_if_fail(topo != NULL && net != NULL, NULL);
  g_return_val_if_fail(fs_flownet_n_channels(net) == 0, NULL);
  FsRouter *r = g_new0(FsRouter, 1);
  r->topo = topo;
  r->net = net;
  if (opt)
    r->opt = *opt;
  else
    fs_route_options_init(&r->opt);
  r->opt.cache_size = MAX(r->opt.cache_size, 1);
  r->n_nodes = fs_topo_n_nodes(topo);
  r->node_lat = g_new(FsTime, MAX(r->n_nodes, 1));
  r->near_cpu = g_new(int, MAX(r->n_nodes, 1));
  r->near_nic = g_new(int, MAX(r->n_nodes, 1));
  for (guint i = 0; i < r->n_nodes; i++) {
    const FsTopoNode *n = fs_topo_node(topo, i);
    r->node_lat[i] = fs_topo_node_latency(topo, i) +
                     (n->kind == FS_NODE_CPU ? n->model->u.cpu.root_latency : 0);
    r->near_cpu[i] = r->near_nic[i] = -2;
  }
  fs_flownet_reserve_channels(net, 2 * fs_topo_n_links(topo));
  for (guint l = 0; l < fs_topo_n_links(topo); l++) {
    const FsTopoLink *link = fs_topo_link(topo, l);
    fs_flownet_add_channel(net, link->bandwidth, link->latency + r->node_lat[link->b]);
    fs_flownet_add_channel(net, link->bandwidth, link->latency + r->node_lat[link->a]);
  }
  r->sdist = g_new(FsTime, MAX(r->n_nodes, 1));
  r->fidx = g_new(int, MAX(r->n_nodes, 1));
  for (guint i = 0; i < r->n_nodes; i++) {
    r->sdist[i] = INF_DIST;
    r->fidx[i] = transit_in(topo, i, SUB_FABRIC) ? (int)r->n_fab++ : -1;
  }
  r->touched = g_array_new(FALSE, FALSE, sizeof(guint));
  r->cache = g_new0(CacheEntry, r->opt.cache_size);
  r->cache_index = g_hash_table_new(g_direct_hash, g_direct_equal);
  r->heap = g_array_new(FALSE, FALSE, sizeof(HeapItem));
  r->stack = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  r->memo = g_hash_table_new_full(fs_hash64_key, g_int64_equal, NULL, memo_free);
  r->walk_memo = g_hash_table_new_full(fs_hash64_key, g_int64_equal, NULL, memo_free);
  fs_route_init(&r->scratch);
  fs_route_init(&r->head);
  fs_route_init(&r->fab);
  r->leg = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  r->tail = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  r->fstack = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  r->adaptive = fs_topo_routing(topo) == FS_TOPO_ROUTING_ADAPTIVE;
  return r;
}

void fs_router_free(FsRouter *r)
{
  if (r == NULL)
    return;
  while (r->live != NULL) {
    Transfer *t = r->live;
    r->live = t->next;
    g_free(t);
  }
  for (guint i = 0; i < r->opt.cache_size; i++)
    g_free(r->cache[i].dist);
  g_free(r->cache);
  g_hash_table_unref(r->cache_index);
  g_free(r->sdist);
  g_free(r->fidx);
  g_array_unref(r->touched);
  g_free(r->node_lat);
  g_free(r->near_cpu);
  g_free(r->near_nic);
  g_array_unref(r->heap);
  g_array_unref(r->stack);
  g_hash_table_unref(r->memo);
  g_hash_table_unref(r->walk_memo);
  fs_route_clear(&r->scratch);
  fs_route_clear(&r->head);
  fs_route_clear(&r->fab);
  g_array_unref(r->leg);
  g_array_unref(r->tail);
  g_array_unref(r->fstack);
  g_free(r);
}

const FsTopo *fs_router_topo(const FsRouter *r) { return r->topo; }
FsFlowNet *fs_router_net(const FsRouter *r) { return r->net; }

/* Latency of the channel leaving `from` over `link`. */
static FsTime hop_latency(const FsRouter *r, guint link, guint to)
{
  return fs_topo_link(r->topo, link)->latency + r->node_lat[to];
}

static void heap_push(GArray *h, HeapItem it)
{
  g_array_append_val(h, it);
  HeapItem *a = (HeapItem *)h->data;
  guint i = h->len - 1;
  while (i > 0 && (a[(i - 1) / 2].d > it.d ||
                   (a[(i - 1) / 2].d == it.d && a[(i - 1) / 2].node > it.node))) {
    a[i] = a[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  a[i] = it;
}

static HeapItem heap_pop(GArray *h)
{
  HeapItem *a = (HeapItem *)h->data;
  HeapItem top = a[0], last = a[h->len - 1];
  guint n = h->len - 1, i = 0;
  g_array_set_size(h, n);
  while (n > 0) {
    guint c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && (a[c + 1].d < a[c].d || (a[c + 1].d == a[c].d && a[c + 1].node < a[c].node)))
      c++;
    if (a[c].d > last.d || (a[c].d == last.d && a[c].node > last.node))
      break;
    a[i] = a[c];
    i = c;
  }
  if (n > 0)
    a[i] = last;
  return top;
}

/* Distances to dst over a local subgraph (PCIe or NVLink) from every node
 * it reaches (INF_DIST elsewhere).  The array is the router's: valid until
 * the next local_dist call.  Cost: the part of the subgraph reached. */
static const FsTime *local_dist(FsRouter *r, guint dst, Sub sub)
{
  FsTime *dist = r->sdist;
  for (guint i = 0; i < r->touched->len; i++)
    dist[g_array_index(r->touched, guint, i)] = INF_DIST;
  g_array_set_size(r->touched, 0);
  dist[dst] = 0;
  g_array_append_val(r->touched, dst);
  g_array_set_size(r->heap, 0);
  heap_push(r->heap, (HeapItem){0, dst});
  while (r->heap->len > 0) {
    HeapItem it = heap_pop(r->heap);
    if (it.d > dist[it.node])
      continue;
    if (it.node != dst && !transit_in(r->topo, it.node, sub))
      continue;
    guint n;
    const FsTopoAdj *adj = fs_topo_adj(r->topo, it.node, &n);
    for (guint k = 0; k < n; k++) {
      if (!link_in(r->topo, adj[k].link, sub))
        continue;
      /* The edge peer → it.node enters it.node. */
      FsTime nd = it.d + hop_latency(r, adj[k].link, it.node);
      if (nd < dist[adj[k].peer]) {
        if (dist[adj[k].peer] == INF_DIST)
          g_array_append_val(r->touched, adj[k].peer);
        dist[adj[k].peer] = nd;
        heap_push(r->heap, (HeapItem){nd, adj[k].peer});
      }
    }
  }
  return dist;
}

/* Distances to the fabric switch `anchor` from every fabric switch, by
 * fabric index (INF_DIST when unreachable), over switches only.  Borrowed
 * from the LRU cache: valid until the next fabric_dist call.  Cost on a
 * miss: a Dijkstra over the fabric's switches. */
static const FsTime *fabric_dist(FsRouter *r, guint anchor)
{
  CacheEntry *hit = g_hash_table_lookup(r->cache_index, GUINT_TO_POINTER(anchor + 1));
  if (hit != NULL) {
    hit->stamp = ++r->clock;
    return hit->dist;
  }
  /* A miss: evict the least recently used entry (a scan, on misses only). */
  CacheEntry *victim = &r->cache[0];
  for (guint i = 0; i < r->opt.cache_size; i++)
    if (r->cache[i].stamp < victim->stamp)
      victim = &r->cache[i];
  if (victim->stamp != 0)
    g_hash_table_remove(r->cache_index, GUINT_TO_POINTER(victim->dst + 1));
  g_hash_table_insert(r->cache_index, GUINT_TO_POINTER(anchor + 1), victim);
  if (victim->dist == NULL)
    victim->dist = g_new(FsTime, MAX(r->n_fab, 1));
  victim->dst = anchor;
  victim->sub = SUB_FABRIC;
  victim->stamp = ++r->clock;
  FsTime *dist = victim->dist;
  for (guint i = 0; i < r->n_fab; i++)
    dist[i] = INF_DIST;
  dist[r->fidx[anchor]] = 0;
  g_array_set_size(r->heap, 0);
  heap_push(r->heap, (HeapItem){0, anchor});
  while (r->heap->len > 0) {
    HeapItem it = heap_pop(r->heap);
    if (it.d > dist[r->fidx[it.node]])
      continue;
    guint n;
    const FsTopoAdj *adj = fs_topo_adj(r->topo, it.node, &n);
    for (guint k = 0; k < n; k++) {
      int p = r->fidx[adj[k].peer];
      if (p < 0 || !link_in(r->topo, adj[k].link, SUB_FABRIC))
        continue;
      FsTime nd = it.d + hop_latency(r, adj[k].link, it.node);
      if (nd < dist[p]) {
        dist[p] = nd;
        heap_push(r->heap, (HeapItem){nd, adj[k].peer});
      }
    }
  }
  return dist;
}

/* The fabric switch a fabric endpoint hangs from (its first fabric link's
 * far end, by link order), or -1. */
static int attach_switch(const FsRouter *r, guint ep, guint *link)
{
  guint n;
  const FsTopoAdj *adj = fs_topo_adj(r->topo, ep, &n);
  for (guint k = 0; k < n; k++)
    if (r->fidx[adj[k].peer] >= 0 && link_in(r->topo, adj[k].link, SUB_FABRIC)) {
      *link = adj[k].link;
      return (int)adj[k].peer;
    }
  return -1;
}

/* TRUE when fabric node u picks among equal next hops by destination
 * (FsRouteOptions.ecmp). */
static gboolean by_destination(const FsRouter *r, guint u)
{
  switch (r->opt.ecmp) {
  case FS_ROUTE_ECMP_FLOW:
    return FALSE;
  case FS_ROUTE_ECMP_DESTINATION:
    return TRUE;
  default: {
    const FsTopoNode *node = fs_topo_node(r->topo, u);
    return node->kind == FS_NODE_SWITCH && node->model->u.sw.kind == FS_SWITCH_INFINIBAND;
  }
  }
}

/* Whether fabric link a leads to a switch with a path to the anchor
 * (dist: every fabric switch's distance to it), and *via the distance
 * through a. */
static gboolean fabric_step(FsRouter *r, const FsTime *dist, const FsTopoAdj *a, FsTime *via)
{
  int p = r->fidx[a->peer];
  if (p < 0 || !link_in(r->topo, a->link, SUB_FABRIC) || dist[p] == INF_DIST)
    return FALSE;
  *via = dist[p] + hop_latency(r, a->link, a->peer);
  return TRUE;
}

/* How many of the n links adj of a switch lead on a shortest fabric path
 * to the anchor (ties counted), and *best that path's distance (INF_DIST
 * when none does). */
static guint shortest_next_hops(FsRouter *r, const FsTime *dist, const FsTopoAdj *adj, guint n,
                                FsTime *best)
{
  guint cand = 0;
  *best = INF_DIST;
  for (guint k = 0; k < n; k++) {
    FsTime via;
    if (!fabric_step(r, dist, &adj[k], &via) || via > *best)
      continue;
    cand = via < *best ? 1 : cand + 1;
    *best = via;
  }
  return cand;
}

/* Appends a shortest fabric path from endpoint src to endpoint dst (NICs,
 * or GPUs wired to the fabric), ECMP by key: toward dst's switch, then the
 * last hop.  FALSE (nothing appended) when there is none. */
static gboolean walk_fabric(FsRouter *r, guint src, guint dst, uint64_t key, GArray *hops)
{
  guint last_link;
  int anchor = attach_switch(r, dst, &last_link);
  if (anchor < 0)
    return FALSE;
  const FsTime *dist = fabric_dist(r, (guint)anchor);
  guint mark = hops->len;
  guint u = src;
  for (guint steps = 0; u != (guint)anchor; steps++) {
    if (steps > r->n_fab + 1) {
      g_array_set_size(hops, mark);
      return FALSE;
    }
    /* Candidates: fabric switches next to u on a shortest path. */
    guint n;
    FsTime best;
    const FsTopoAdj *adj = fs_topo_adj(r->topo, u, &n);
    guint cand = shortest_next_hops(r, dist, adj, n, &best);
    if (cand == 0) {
      g_array_set_size(hops, mark);
      return FALSE;
    }
    /* A switch that routes by destination ignores the key (route.h). */
    gboolean by_dst = cand > 1 && by_destination(r, u);
    r->ecmp += cand > 1 && !by_dst;
    uint64_t h = by_dst ? fs_hash64(((uint64_t)dst << 32) ^ fs_hash64(u + 1))
                        : fs_hash64(key ^ fs_hash64(u + 1));
    guint pick = cand == 1 ? 0 : (guint)(h % cand);
    for (guint k = 0; k < n; k++) {
      FsTime via;
      if (!fabric_step(r, dist, &adj[k], &via) || via != best)
        continue;
      if (pick-- == 0) {
        FsChannelId ch = fs_topo_channel_from(r->topo, adj[k].link, u);
        g_array_append_val(hops, ch);
        u = adj[k].peer;
        break;
      }
    }
  }
  FsChannelId ch = fs_topo_channel_from(r->topo, last_link, (guint)anchor);
  g_array_append_val(hops, ch);
  return TRUE;
}

/* Adaptive routing: every shortest fabric path from u to the anchor switch
 * (then the last link to the destination endpoint), the share w split
 * evenly over the next hops at each switch; at most budget paths (a switch
 * with more next hops than its budget takes that many, starting at one
 * chosen by the destination).  Appended to out as whole paths. */
static void adaptive_from(FsRouter *r, const FsTime *dist, guint u, guint anchor, guint last_link,
                          guint dst, double w, guint budget, FsRoute *out)
{
  if (u == anchor) {
    g_array_append_vals(out->hops, r->fstack->data, r->fstack->len);
    FsChannelId ch = fs_topo_channel_from(r->topo, last_link, anchor);
    g_array_append_val(out->hops, ch);
    route_end_path(out, w);
    return;
  }
  guint n;
  FsTime best;
  const FsTopoAdj *adj = fs_topo_adj(r->topo, u, &n);
  guint cand = shortest_next_hops(r, dist, adj, n, &best);
  if (cand == 0 || r->fstack->len > r->n_fab + 1)
    return;
  guint take = MIN(cand, MAX(budget, 1));
  guint first = take < cand ? (guint)(fs_hash64(((uint64_t)dst << 32) ^ fs_hash64(u + 1)) % cand) : 0;
  for (guint k = 0, i = 0; k < n; k++) {
    FsTime via;
    if (!fabric_step(r, dist, &adj[k], &via) || via != best)
      continue;
    guint slot = (i++ + cand - first) % cand; /* this next hop's place after `first` */
    if (slot >= take)
      continue;
    FsChannelId ch = fs_topo_channel_from(r->topo, adj[k].link, u);
    g_array_append_val(r->fstack, ch);
    adaptive_from(r, dist, adj[k].peer, anchor, last_link, dst, w / take, MAX(budget / take, 1),
                  out);
    g_array_set_size(r->fstack, r->fstack->len - 1);
  }
}

/* The fabric paths from endpoint src to endpoint dst into out (reset
 * first): one walk_fabric path (weight 1) under static routing, every
 * equal-cost path under adaptive routing (at most budget).  FALSE when
 * there is none. */
static gboolean fabric_paths(FsRouter *r, guint src, guint dst, uint64_t key, guint budget,
                             FsRoute *out)
{
  route_reset(out);
  if (!r->adaptive) {
    if (!walk_fabric(r, src, dst, key, out->hops))
      return FALSE;
    route_end_path(out, 1);
    return TRUE;
  }
  guint last_link;
  int anchor = attach_switch(r, dst, &last_link);
  if (anchor < 0)
    return FALSE;
  const FsTime *dist = fabric_dist(r, (guint)anchor);
  g_array_set_size(r->fstack, 0);
  adaptive_from(r, dist, src, (guint)anchor, last_link, dst, 1.0, budget, out);
  return out->n_paths > 0;
}

/* TRUE when adj entry k of u is a shortest next hop toward dst. */
static gboolean is_next(const FsRouter *r, const FsTime *dist, guint u, const FsTopoAdj *a,
                        guint dst, Sub sub)
{
  if (!link_in(r->topo, a->link, sub))
    return FALSE;
  if (a->peer != dst && !transit_in(r->topo, a->peer, sub))
    return FALSE;
  return dist[a->peer] != INF_DIST && dist[a->peer] + hop_latency(r, a->link, a->peer) == dist[u];
}

/* Appends to hops a shortest path src → dst over sub, ECMP by key.
 * FALSE (nothing appended) when there is none. */
static gboolean walk_search(FsRouter *r, guint src, guint dst, Sub sub, uint64_t key,
                            GArray *hops)
{
  const FsTime *dist = local_dist(r, dst, sub);
  if (dist[src] == INF_DIST)
    return FALSE;
  guint u = src;
  for (guint steps = 0; u != dst; steps++) {
    g_assert(steps < r->n_nodes);
    guint n, cand = 0;
    const FsTopoAdj *adj = fs_topo_adj(r->topo, u, &n);
    for (guint k = 0; k < n; k++)
      cand += is_next(r, dist, u, &adj[k], dst, sub);
    g_assert(cand > 0);
    r->ecmp += cand > 1;
    guint pick = cand == 1 ? 0 : (guint)(fs_hash64(key ^ fs_hash64(u + 1)) % cand);
    for (guint k = 0; k < n; k++) {
      if (!is_next(r, dist, u, &adj[k], dst, sub))
        continue;
      if (pick-- == 0) {
        FsChannelId ch = fs_topo_channel_from(r->topo, adj[k].link, u);
        g_array_append_val(hops, ch);
        u = adj[k].peer;
        break;
      }
    }
  }
  return TRUE;
}

/* walk_search, memoised per (src, dst, sub) when it made no equal-cost
 * choice (then the key cannot change it).  A failed walk is not kept. */
static gboolean walk(FsRouter *r, guint src, guint dst, Sub sub, uint64_t key, GArray *hops)
{
  if (src == dst)
    return TRUE;
  uint64_t mk = ((uint64_t)src << 34) | ((uint64_t)dst << 2) | (uint64_t)sub;
  const Memo *m = g_hash_table_lookup(r->walk_memo, &mk);
  if (m != NULL) {
    g_array_append_vals(hops, m->hops, m->n_hops);
    return TRUE;
  }
  guint mark = hops->len, before = r->ecmp;
  if (!walk_search(r, src, dst, sub, key, hops))
    return FALSE;
  if (r->ecmp == before) {
    Memo *nm = g_new0(Memo, 1);
    nm->key = mk;
    nm->n_hops = hops->len - mark;
    nm->hops = g_memdup2(&g_array_index(hops, FsChannelId, mark), nm->n_hops * sizeof(FsChannelId));
    memo_put(r->walk_memo, nm);
  }
  return TRUE;
}

/* Spray: every shortest path u → dst (depth first, at most MAX_SPRAY),
 * each weighted by its bottleneck bandwidth (normalised by the caller). */
static void spray_from(FsRouter *r, const FsTime *dist, guint u, guint dst, double bw,
                       FsRoute *out)
{
  if (out->n_paths >= MAX_SPRAY)
    return;
  if (u == dst) {
    g_array_append_vals(out->hops, r->stack->data, r->stack->len);
    route_end_path(out, bw);
    return;
  }
  guint n;
  const FsTopoAdj *adj = fs_topo_adj(r->topo, u, &n);
  for (guint k = 0; k < n; k++) {
    if (!is_next(r, dist, u, &adj[k], dst, SUB_NVLINK))
      continue;
    FsChannelId ch = fs_topo_channel_from(r->topo, adj[k].link, u);
    g_array_append_val(r->stack, ch);
    spray_from(r, dist, adj[k].peer, dst, MIN(bw, fs_topo_link(r->topo, adj[k].link)->bandwidth),
               out);
    g_array_set_size(r->stack, r->stack->len - 1);
  }
}

static gboolean spray_nvlink(FsRouter *r, guint src, guint dst, FsRoute *out)
{
  const FsTime *dist = local_dist(r, dst, SUB_NVLINK);
  if (dist[src] == INF_DIST)
    return FALSE;
  g_array_set_size(r->stack, 0);
  spray_from(r, dist, src, dst, G_MAXDOUBLE, out);
  double sum = 0;
  for (guint i = 0; i < out->n_paths; i++)
    sum += g_array_index(out->weights, double, i);
  for (guint i = 0; i < out->n_paths; i++)
    g_array_index(out->weights, double, i) /= sum;
  return out->n_paths > 0;
}

/* The node of `kind` in node's host closest over PCIe: ties go to the same
 * local index, then the lowest node index.  -1 if none. */
static int nearest(FsRouter *r, guint node, FsNodeKind kind)
{
  const FsTopoNode *me = fs_topo_node(r->topo, node);
  if (me->kind == kind)
    return (int)node;
  if (me->host < 0)
    return -1;
  const FsTime *dist = local_dist(r, node, SUB_PCIE);
  guint n;
  const guint *nodes = fs_topo_host_nodes(r->topo, (guint)me->host, &n);
  int best = -1;
  for (guint i = 0; i < n; i++) {
    const FsTopoNode *c = fs_topo_node(r->topo, nodes[i]);
    if (c->kind != kind || dist[nodes[i]] == INF_DIST)
      continue;
    if (best < 0) {
      best = (int)nodes[i];
      continue;
    }
    const FsTopoNode *b = fs_topo_node(r->topo, (guint)best);
    FsTime db = dist[best], dc = dist[nodes[i]];
    gboolean cl = c->local == me->local, bl = b->local == me->local;
    if (dc < db || (dc == db && ((cl && !bl) || (cl == bl && nodes[i] < (guint)best))))
      best = (int)nodes[i];
  }
  return best;
}

int fs_router_nearest_cpu(FsRouter *r, guint node)
{
  g_return_val_if_fail(node < r->n_nodes, -1);
  if (r->near_cpu[node] == -2)
    r->near_cpu[node] = nearest(r, node, FS_NODE_CPU);
  return r->near_cpu[node];
}

int fs_router_nearest_nic(FsRouter *r, guint node)
{
  g_return_val_if_fail(node < r->n_nodes, -1);
  if (r->near_nic[node] == -2) {
    /* An endpoint wired to the fabric itself (a fabric of GPUs) is its own NIC. */
    guint n;
    const FsTopoAdj *adj = fs_topo_adj(r->topo, node, &n);
    r->near_nic[node] = -1;
    for (guint k = 0; k < n && r->near_nic[node] < 0; k++)
      if (link_in(r->topo, adj[k].link, SUB_FABRIC))
        r->near_nic[node] = (int)node;
    if (r->near_nic[node] < 0)
      r->near_nic[node] = nearest(r, node, FS_NODE_NIC);
  }
  return r->near_nic[node];
}

/* Rank of a path type for comparison with the P2P level (NODE = PHB). */
static int rank(FsPathType t)
{
  return t <= FS_PATH_PHB ? (int)t : (int)t - 1;
}

FsPathType fs_router_p2p_level(const FsRouter *r, guint gpu)
{
  if (r->opt.p2p_level != FS_P2P_LEVEL_AUTO)
    return r->opt.p2p_level;
  const FsTopoNode *g = fs_topo_node(r->topo, gpu);
  if (g->host >= 0) {
    guint n;
    const guint *nodes = fs_topo_host_nodes(r->topo, (guint)g->host, &n);
    for (guint i = 0; i < n; i++) {
      const FsTopoNode *c = fs_topo_node(r->topo, nodes[i]);
      if (c->kind == FS_NODE_CPU)
        return c->model->u.cpu.vendor == FS_VENDOR_INTEL ||
                       c->model->u.cpu.vendor == FS_VENDOR_NVIDIA
                   ? FS_PATH_PXB
                   : FS_PATH_SYS;
    }
  }
  return FS_PATH_SYS;
}

/* Appends the leg between an endpoint and its NIC (either direction):
 * directly over PCIe when no CPU is crossed and the NIC can do GPUDirect
 * RDMA (or the endpoint is host memory), else through the endpoint's
 * nearest CPU.  *gdr tells which.  FALSE if no path. */
static gboolean nic_leg(FsRouter *r, guint ep, guint nic, gboolean to_nic, uint64_t key,
                        GArray *hops, gboolean *gdr)
{
  guint mark = hops->len;
  guint a = to_nic ? ep : nic, b = to_nic ? nic : ep;
  if (ep == nic) {
    *gdr = TRUE;
    return TRUE;
  }
  const FsTopoNode *e = fs_topo_node(r->topo, ep);
  if (!walk(r, a, b, SUB_PCIE, key, hops))
    return FALSE;
  gboolean via_cpu = FALSE;
  for (guint i = mark; i < hops->len; i++) {
    guint to = fs_topo_channel_dst(r->topo, g_array_index(hops, FsChannelId, i));
    via_cpu |= to != b && fs_topo_node(r->topo, to)->kind == FS_NODE_CPU;
  }
  *gdr = e->kind != FS_NODE_GPU ||
         (!via_cpu && fs_topo_node(r->topo, nic)->model->u.nic.gpudirect);
  if (*gdr || e->kind != FS_NODE_GPU)
    return TRUE;
  g_array_set_size(hops, mark);
  int cpu = fs_router_nearest_cpu(r, ep);
  if (cpu < 0)
    return FALSE;
  if (to_nic)
    return walk(r, ep, (guint)cpu, SUB_PCIE, key, hops) &&
           walk(r, (guint)cpu, nic, SUB_PCIE, key, hops);
  return walk(r, nic, (guint)cpu, SUB_PCIE, key, hops) &&
         walk(r, (guint)cpu, ep, SUB_PCIE, key, hops);
}

/* The NIC of host `host` whose local index is `local`, or -1. */
static int host_nic(const FsRouter *r, int host, int local)
{
  if (host < 0)
    return -1;
  guint n;
  const guint *nodes = fs_topo_host_nodes(r->topo, (guint)host, &n);
  for (guint i = 0; i < n; i++) {
    const FsTopoNode *c = fs_topo_node(r->topo, nodes[i]);
    if (c->kind == FS_NODE_NIC && c->local == local)
      return (int)nodes[i];
  }
  return -1;
}

/* The GPU of src's host next to nic (whose nearest NIC it is; the lowest
 * such node), or -1. */
static int nic_gpu(FsRouter *r, guint src, guint nic)
{
  guint n;
  const guint *gpus = fs_topo_host_gpus(r->topo, (guint)fs_topo_node(r->topo, src)->host, &n);
  for (guint i = 0; i < n; i++)
    if (fs_router_nearest_nic(r, gpus[i]) == (int)nic)
      return (int)gpus[i];
  return -1;
}

/* Whether GPU gpu reaches nic over PCIe without crossing a CPU (NCCL's PIX
 * or PXB), and *bw, the slowest link of that path (0 when it does not). */
static gboolean pcie_to_nic(FsRouter *r, guint gpu, guint nic, double *bw)
{
  *bw = 0;
  g_array_set_size(r->leg, 0);
  guint choices = r->ecmp; /* a look, not a route: its choices do not key the route */
  gboolean found = walk(r, gpu, nic, SUB_PCIE, 0, r->leg);
  r->ecmp = choices;
  if (!found)
    return FALSE;
  double b = G_MAXDOUBLE;
  for (guint i = 0; i < r->leg->len; i++) {
    FsChannelId ch = g_array_index(r->leg, FsChannelId, i);
    guint to = fs_topo_channel_dst(r->topo, ch);
    if (to != nic && fs_topo_node(r->topo, to)->kind == FS_NODE_CPU)
      return FALSE;
    b = MIN(b, fs_topo_link(r->topo, fs_topo_channel_link(ch))->bandwidth);
  }
  *bw = r->leg->len > 0 ? b : 0;
  return r->leg->len > 0;
}

/* Which NIC GPU src sends through toward GPU dst on another host, and how
 * it gets there (route.h, rails): *nic, and *proxy the GPU whose NIC it is
 * when the bytes cross NVLink first (PXN), src when src is next to it, -1
 * when they go over PCIe to a NIC not src's nearest.  *recv is dst's NIC.
 * FALSE when a side has no NIC. */
static gboolean pick_nics(FsRouter *r, guint src, guint dst, int *nic, int *proxy, int *recv)
{
  int ns = fs_router_nearest_nic(r, src), nd = fs_router_nearest_nic(r, dst);
  *nic = ns, *proxy = (int)src, *recv = nd;
  if (ns < 0 || nd < 0)
    return FALSE;
  const FsTopoNode *s = fs_topo_node(r->topo, src), *d = fs_topo_node(r->topo, dst);
  if (r->opt.cross_nic == 1 || s->kind != FS_NODE_GPU || d->kind != FS_NODE_GPU)
    return TRUE;
  int want = host_nic(r, s->host, fs_topo_node(r->topo, (guint)nd)->local);
  if (want < 0 || want == ns)
    return TRUE;
  int gpu = r->opt.pxn_disable || r->opt.p2p_disable ? -1 : nic_gpu(r, src, (guint)want);
  double own_bw, proxy_bw = 0;
  gboolean own_pcie = pcie_to_nic(r, src, (guint)want, &own_bw);
  if (gpu >= 0)
    pcie_to_nic(r, (guint)gpu, (guint)want, &proxy_bw);
  /* NCCL (src/graph/paths.cc, ncclTopoComputePaths) relays through a GPU
   * for NIC n only when that GPU has a faster path to n or when ours
   * crosses a CPU; a rail NIC behind our own PCIe switches is used directly,
   * and a relay whose own path to n crosses a CPU too (GB200's NICs behind
   * Grace) gains nothing, so it is not taken. */
  if (own_pcie && own_bw >= proxy_bw) {
    *nic = want;
    return TRUE;
  }
  if (gpu >= 0 && proxy_bw > 0 && local_dist(r, (guint)gpu, SUB_NVLINK)[src] != INF_DIST) {
    *nic = want, *proxy = gpu;
    return TRUE;
  }
  /* No PXN: NCCL_CROSS_NIC=2 takes src's own NIC (the same rule for every
   * pair, so no NIC carries two rings' exits); 0 goes over PCIe to the
   * rail's NIC. */
  if (r->opt.cross_nic == 2)
    return TRUE;
  *nic = want, *proxy = -1;
  return TRUE;
}

gboolean fs_router_net_nics(FsRouter *r, guint src, guint dst, int *send_nic, int *recv_nic,
                            int *proxy)
{
  g_return_val_if_fail(src < r->n_nodes && dst < r->n_nodes, FALSE);
  const FsTopoNode *s = fs_topo_node(r->topo, src), *d = fs_topo_node(r->topo, dst);
  if (s->kind != FS_NODE_GPU || d->kind != FS_NODE_GPU || s->host < 0 || s->host == d->host)
    return FALSE;
  return pick_nics(r, src, dst, send_nic, proxy, recv_nic);
}

static gboolean no_route(FsRouter *r, guint src, guint dst, const char *why, GError **error)
{
  g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_NO_ROUTE, "no route from %s to %s: %s",
              fs_topo_node(r->topo, src)->name, fs_topo_node(r->topo, dst)->name, why);
  return FALSE;
}

guint fs_router_last_choices(const FsRouter *r)
{
  return r->last_choices;
}

/* Keeps only the heaviest path of r (the first among equals), weight 1.  A
 * PXN leg takes one NVLink plane: the NIC behind it is the slower hop, and
 * parts of unequal weight sharing that NIC would finish apart under
 * max-min (equal rates, unequal bytes), a slowdown the hardware, which
 * sprays bytes and queues them at one NIC, does not have. */
static void one_path(FsRoute *r)
{
  guint best = 0;
  for (guint p = 1; p < r->n_paths; p++)
    if (g_array_index(r->weights, double, p) > g_array_index(r->weights, double, best))
      best = p;
  guint len;
  const FsChannelId *hops = fs_route_path(r, best, &len);
  g_autofree FsChannelId *keep = g_memdup2(hops, len * sizeof *hops);
  route_reset(r);
  g_array_append_vals(r->hops, keep, len);
  route_end_path(r, 1);
}

/* Finds the route from src to dst (GPUs or CPUs) into out, without the cache: NVLink spraying
 * between GPUs when allowed, else within a host PCIe peer-to-peer up to the P2P level or
 * through the nearest CPU, else across hosts through the nearest NICs (GPUDirect or staged) and
 * the fabric. FALSE with FS_NET_ERROR_NO_ROUTE saying which leg is missing. */
static gboolean route_search(FsRouter *r, guint src, guint dst, uint64_t key, gboolean no_nvlink,
                             FsRoute *out, GError **error)
{
  route_reset(out);
  const FsTopoNode *s = fs_topo_node(r->topo, src), *d = fs_topo_node(r->topo, dst);
  if ((s->kind != FS_NODE_GPU && s->kind != FS_NODE_CPU) ||
      (d->kind != FS_NODE_GPU && d->kind != FS_NODE_CPU))
    return no_route(r, src, dst, "endpoints must be GPUs or CPUs (host memory)", error);
  if (src == dst) {
    out->kind = FS_ROUTE_LOCAL;
    route_end_path(out, 1);
    return TRUE;
  }
  gboolean gpus = s->kind == FS_NODE_GPU && d->kind == FS_NODE_GPU;
  if (gpus && !r->opt.p2p_disable && !no_nvlink && spray_nvlink(r, src, dst, out)) {
    out->kind = FS_ROUTE_NVLINK;
    return TRUE;
  }
  route_reset(out);
  if (s->host >= 0 && s->host == d->host) {
    if (!gpus) {
      out->kind = FS_ROUTE_PCIE;
      if (!walk(r, src, dst, SUB_PCIE, key, out->hops))
        return no_route(r, src, dst, "no PCIe path in the host", error);
    } else {
      FsPathType type = fs_topo_path_type(r->topo, src, dst, NULL);
      if (!r->opt.p2p_disable && rank(type) <= rank(fs_router_p2p_level(r, src)) &&
          walk(r, src, dst, SUB_PCIE, key, out->hops)) {
        out->kind = FS_ROUTE_PCIE_P2P;
      } else {
        int cpu = fs_router_nearest_cpu(r, src);
        out->kind = FS_ROUTE_HOST;
        if (cpu < 0 || !walk(r, src, (guint)cpu, SUB_PCIE, key, out->hops) ||
            !walk(r, (guint)cpu, dst, SUB_PCIE, key, out->hops))
          return no_route(r, src, dst, "no PCIe path through host memory", error);
      }
    }
    route_end_path(out, 1);
    return TRUE;
  }
  if (r->opt.ib_disable)
    return no_route(r, src, dst, "different hosts and the network is disabled", error);
  int ns, nd, proxy;
  if (!pick_nics(r, src, dst, &ns, &proxy, &nd))
    return no_route(r, src, dst, "a host without a NIC on PCIe", error);
  /* Heads: src to its NIC, over NVLink to the proxy first with PXN (one
   * path per NVLink path); the fabric paths; the tail to dst.  The route is
   * every head × fabric path, its share the product of theirs. */
  FsRoute *head = &r->head, *fab = &r->fab;
  route_reset(head);
  g_array_set_size(r->leg, 0);
  g_array_set_size(r->tail, 0);
  gboolean gdr_s, gdr_d;
  if (proxy >= 0 && (guint)proxy != src) {
    if (!spray_nvlink(r, src, (guint)proxy, head) ||
        !nic_leg(r, (guint)proxy, (guint)ns, TRUE, key, r->leg, &gdr_s))
      return no_route(r, src, dst, "no PXN path to the rail's NIC", error);
    one_path(head);
  } else {
    if (!nic_leg(r, src, (guint)ns, TRUE, key, r->leg, &gdr_s))
      return no_route(r, src, dst, "no path through the network", error);
    route_end_path(head, 1);
  }
  if (!fabric_paths(r, (guint)ns, (guint)nd, key, MAX(FS_ROUTE_MAX_PATHS / head->n_paths, 1), fab) ||
      !nic_leg(r, dst, (guint)nd, FALSE, key, r->tail, &gdr_d))
    return no_route(r, src, dst, "no path through the network", error);
  for (guint i = 0; i < head->n_paths; i++) {
    guint hl, fl;
    const FsChannelId *hp = fs_route_path(head, i, &hl);
    double hw = g_array_index(head->weights, double, i);
    for (guint j = 0; j < fab->n_paths; j++) {
      const FsChannelId *fp = fs_route_path(fab, j, &fl);
      if (hl > 0)
        g_array_append_vals(out->hops, hp, hl);
      g_array_append_vals(out->hops, r->leg->data, r->leg->len);
      g_array_append_vals(out->hops, fp, fl);
      g_array_append_vals(out->hops, r->tail->data, r->tail->len);
      route_end_path(out, hw * g_array_index(fab->weights, double, j));
    }
  }
  out->kind = gdr_s && gdr_d ? FS_ROUTE_NET_GDR : FS_ROUTE_NET_STAGED;
  return TRUE;
}

gboolean fs_router_route(FsRouter *r, guint src, guint dst, uint64_t key, FsRoute *out,
                         GError **error)
{
  g_return_val_if_fail(src < r->n_nodes && dst < r->n_nodes, FALSE);
  uint64_t mk = ((uint64_t)src << 32) | dst;
  Memo *m = g_hash_table_lookup(r->memo, &mk);
  r->last_choices = 0;
  if (m != NULL && !m->keyed) {
    route_reset(out);
    out->kind = m->kind;
    out->n_paths = m->n_paths;
    g_array_append_vals(out->hops, m->hops, m->n_hops);
    g_array_set_size(out->starts, 0);
    g_array_append_vals(out->starts, m->starts, m->n_paths + 1);
    g_array_append_vals(out->weights, m->weights, m->n_paths);
    return TRUE;
  }
  guint before = r->ecmp;
  if (!route_search(r, src, dst, key, m != NULL && m->no_nvlink, out, error))
    return FALSE;
  r->last_choices = r->ecmp - before;
  if (m != NULL)
    return TRUE;
  m = g_new0(Memo, 1);
  m->key = mk;
  m->no_nvlink = out->kind != FS_ROUTE_NVLINK;
  m->keyed = r->ecmp != before;
  if (!m->keyed) {
    m->kind = out->kind;
    m->n_paths = out->n_paths;
    m->n_hops = out->hops->len;
    m->hops = g_memdup2(out->hops->data, m->n_hops * sizeof(FsChannelId));
    m->starts = g_memdup2(out->starts->data, (m->n_paths + 1) * sizeof(guint));
    m->weights = g_memdup2(out->weights->data, m->n_paths * sizeof(double));
  }
  memo_put(r->memo, m);
  return TRUE;
}

/* ---- transfers over several paths ---- */


static void transfer_release(Transfer *t);

static void part_done(void *ctx, const FsFlowInfo *info)
{
  Transfer *t = ctx;
  if (info->drained >= t->agg.drained) {
    t->agg.drained = info->drained;
    t->agg.bottleneck = info->bottleneck;
    t->agg.rate = info->rate;
  }
  t->agg.finish = MAX(t->agg.finish, info->finish);
  t->agg.latency = MAX(t->agg.latency, info->latency);
  if (t->agg.id == FS_FLOW_NONE)
    t->agg.id = info->id;
  transfer_release(t);
}

/* One part (or the start loop's hold) is over; the last one reports the
 * transfer and frees it. */
static void transfer_release(Transfer *t)
{
  if (--t->left > 0)
    return;
  t->agg.mean_rate = t->agg.drained > t->agg.start
                       ? (double)t->agg.bytes * 1e12 / (double)(t->agg.drained - t->agg.start)
                       : 0;
  if (t->prev)
    t->prev->next = t->next;
  else
    t->router->live = t->next;
  if (t->next)
    t->next->prev = t->prev;
  if (t->done)
    t->done(t->ctx, &t->agg);
  g_free(t);
}

/* See route.h. Splits bytes over the route's paths by their weights (one flow always runs, so a
 * zero-byte transfer still takes its latency) and starts one flow per part; done runs once,
 * when the last part lands. The route is computed into the router's scratch, so done may start
 * transfers. */
gboolean fs_router_transfer(FsRouter *r, guint src, guint dst, uint64_t bytes, FsTime start,
                            double rate_cap, uint64_t key, FsFlowDoneFn done, void *ctx,
                            void *user, GError **error)
{
  FsRoute *route = &r->scratch;
  if (!fs_router_route(r, src, dst, key, route, error))
    return FALSE;
  Transfer *t = g_new0(Transfer, 1);
  t->router = r;
  t->next = r->live;
  if (r->live)
    r->live->prev = t;
  r->live = t;
  t->done = done;
  t->ctx = ctx;
  t->agg.src = (int32_t)src;
  t->agg.dst = (int32_t)dst;
  t->agg.bytes = bytes;
  t->agg.start = start;
  t->agg.user = user;
  t->agg.bottleneck = FS_CHANNEL_NONE;
  /* Split the bytes; paths that get none are skipped (but one flow always
   * runs, so a zero-byte transfer still completes after its latency). */
  uint64_t given = 0;
  guint last = route->n_paths - 1;
  uint64_t part[MAX(MAX_SPRAY, FS_ROUTE_MAX_PATHS)];
  for (guint i = 0; i < route->n_paths; i++) {
    double w = g_array_index(route->weights, double, i);
    part[i] = i == last ? bytes - given : MIN((uint64_t)((double)bytes * w), bytes - given);
    given += part[i];
    t->left += part[i] > 0 || (bytes == 0 && i == 0);
  }
  t->agg.path_len = t->left;
  /* A zero-byte part with no latency lands inside fs_flownet_start.  Hold
   * the transfer until every part has started, so that its done callback,
   * which may start another transfer (reusing r->scratch), runs only after
   * this loop is finished with the route. */
  t->left++;
  for (guint i = 0; i < route->n_paths; i++) {
    if (!(part[i] > 0 || (bytes == 0 && i == 0)))
      continue;
    guint len;
    const FsChannelId *path = fs_route_path(route, i, &len);
    FsFlowSpec spec = {
      .src = (int32_t)src, .dst = (int32_t)dst, .path = path, .path_len = len,
      .bytes = part[i], .start = start, .done = part_done, .ctx = t, .user = user,
      .rate_cap = rate_cap * g_array_index(route->weights, double, i),
    };
    fs_flownet_start(r->net, &spec);
  }
  transfer_release(t);
  return TRUE;
}

char *fs_router_channel_name(const FsRouter *r, FsChannelId ch)
{
  if (ch >= fs_topo_n_channels(r->topo))
    return g_strdup_printf("channel %u", ch);
  return g_strdup_printf("%s -> %s", fs_topo_node(r->topo, fs_topo_channel_src(r->topo, ch))->name,
                         fs_topo_node(r->topo, fs_topo_channel_dst(r->topo, ch))->name);
}
