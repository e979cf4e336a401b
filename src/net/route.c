/* route.c — transports and shortest paths on the topology graph: the
 * router's options, its construction, routes and their memo, and transfers
 * split over a route's paths.  Contract in route.h; the router's inside in
 * route-private.h.
 *
 * Three subgraphs, each a set of link families and of nodes a path may
 * cross (endpoints may be anything):
 *   NVLINK  NVLink links, through NVSwitches;
 *   PCIE    PCIe, inter-socket and NVLink-C2C links (and NVLinks that end at
 *           a CPU), through PCIe switches and CPUs;
 *   FABRIC  InfiniBand and Ethernet links, through IB/Ethernet switches.
 * An edge u→v weighs the latency of its channel (the link's plus v's
 * entry latency).  NVLink and PCIe searches are local to a host or rack:
 * router_local_dist() runs a Dijkstra from the destination over the part
 * of the subgraph it reaches, in one dense array reset through a touched
 * list; router_walk() follows a shortest path from the source, choosing
 * among equal next hops by hash; spray_nvlink() enumerates all of them
 * (NVLink).  Fabric paths (static ECMP and adaptive) are in
 * route-fabric.c, the NIC a GPU's bytes leave by (rails, PXN) in
 * route-nic.c.
 */
#include "net/route.h"

#include <math.h>
#include <string.h>

#include "core/rng.h"
#include "net/route-private.h"
#include "util/names.h"

/* A memoised route (or walk): its paths, or for a route that depends on
 * the key only the fact that NVLink does not reach (no_nvlink). */
struct Memo {
  uint64_t key;            /* (src << 32 | dst), or the walk's key */
  gboolean keyed;          /* the route depends on the key: only no_nvlink is valid */
  gboolean no_nvlink;      /* NVLink spraying found no path */
  FsRouteKind kind;
  guint n_paths, n_hops;
  FsChannelId *hops;       /* these three point into the entry's own block */
  guint *starts;           /* n_paths + 1 */
  double *weights;
};

/* A new entry with room for its paths in the same block (one allocation:
 * a digest of a large group stores millions of routes). */
static Memo *memo_new(uint64_t key, guint n_paths, guint n_hops)
{
  gsize w = sizeof(Memo), st = w + (gsize)n_paths * sizeof(double);
  gsize h = st + (gsize)(n_paths + 1) * sizeof(guint);
  Memo *m = g_malloc0(h + (gsize)n_hops * sizeof(FsChannelId));
  m->key = key;
  m->n_paths = n_paths;
  m->n_hops = n_hops;
  m->weights = (double *)((char *)m + w);
  m->starts = (guint *)((char *)m + st);
  m->hops = (FsChannelId *)((char *)m + h);
  return m;
}

/* Entries kept per table before it is emptied (memory bound: a few
 * hundred bytes per entry). */
#define MEMO_MAX (1u << 18)

static const char *const kind_names[] = { FS_ROUTE_KINDS(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE_NAME(FsRouteKind, fs_route_kind, kind_names, FS_ROUTE_N_KINDS)

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

/* ---- the router ---- */


/* The first slot to probe for key in t (t->slot != NULL): Fibonacci
 * hashing, the product's top bits. */
static inline guint memo_home(const MemoTable *t, uint64_t key)
{
  return (guint)((key * G_GUINT64_CONSTANT(0x9E3779B97F4A7C15)) >> (64 - t->bits));
}

/* The entry of key in t (borrowed), or NULL. */
static inline Memo *memo_get(const MemoTable *t, uint64_t key)
{
  if (t->n == 0)
    return NULL;
  guint mask = (1u << t->bits) - 1;
  for (guint i = memo_home(t, key);; i = (i + 1) & mask) {
    const MemoSlot *sl = &t->slot[i];
    if (sl->memo == NULL || sl->key == key)
      return sl->memo;
  }
}

/* Frees every entry of t; keeps its slots. */
static void memo_clear(MemoTable *t)
{
  if (t->slot == NULL)
    return;
  for (guint i = 0; i < 1u << t->bits; i++)
    g_free(t->slot[i].memo);
  memset(t->slot, 0, sizeof(MemoSlot) << t->bits);
  t->n = 0;
}

/* Puts m in t's slots (a replaced entry is freed). */
static void memo_place(MemoTable *t, Memo *m)
{
  guint mask = (1u << t->bits) - 1;
  for (guint i = memo_home(t, m->key);; i = (i + 1) & mask) {
    MemoSlot *sl = &t->slot[i];
    if (sl->memo == NULL) {
      *sl = (MemoSlot){m->key, m};
      t->n++;
      return;
    }
    if (sl->key == m->key) {
      g_free(sl->memo);
      sl->memo = m;
      return;
    }
  }
}

/* Stores m under its key in table (owning it), emptying the table first
 * when full and doubling its slots past half full. */
static void memo_put(MemoTable *t, Memo *m)
{
  if (t->n >= MEMO_MAX)
    memo_clear(t);
  if (t->slot == NULL || 2 * (t->n + 1) > 1u << t->bits) {
    MemoSlot *old = t->slot;
    guint old_cap = old != NULL ? 1u << t->bits : 0;
    t->bits = old != NULL ? t->bits + 1 : 8;
    t->slot = g_new0(MemoSlot, (gsize)1 << t->bits);
    t->n = 0;
    for (guint i = 0; i < old_cap; i++)
      if (old[i].memo != NULL)
        memo_place(t, old[i].memo);
    g_free(old);
  }
  memo_place(t, m);
}

/* Frees t's entries and slots. */
static void memo_free(MemoTable *t)
{
  memo_clear(t);
  g_free(t->slot);
  *t = (MemoTable){0};
}

/* The root of node i in the union-find forest up (halving the path on the way). */
static guint island_root(guint *up, guint i)
{
  while (up[i] != i) {
    up[i] = up[up[i]];
    i = up[i];
  }
  return i;
}

/* Per node, a label of its component over NVLink links (router_link_in's
 * NVLINK family, through any node: a superset of what a search through
 * NVSwitches reaches, so different labels mean "no NVLink path"). */
static guint *nvlink_islands(const FsTopo *topo, guint n_nodes)
{
  guint *up = g_new(guint, MAX(n_nodes, 1));
  for (guint i = 0; i < n_nodes; i++)
    up[i] = i;
  for (guint l = 0; l < fs_topo_n_links(topo); l++)
    if (router_link_in(topo, l, SUB_NVLINK)) {
      const FsTopoLink *link = fs_topo_link(topo, l);
      guint a = island_root(up, link->a), b = island_root(up, link->b);
      up[MAX(a, b)] = MIN(a, b);
    }
  for (guint i = 0; i < n_nodes; i++)
    up[i] = island_root(up, i);
  return up;
}

/* Fills the router's fabric adjacency (fab_first, fab_adj) from fidx. */
static void fabric_adjacency(FsRouter *r)
{
  r->fab_first = g_new(guint, r->n_nodes + 1);
  GArray *all = g_array_new(FALSE, FALSE, sizeof(FabAdj));
  for (guint u = 0; u < r->n_nodes; u++) {
    r->fab_first[u] = all->len;
    guint n;
    const FsTopoAdj *adj = fs_topo_adj(r->topo, u, &n);
    for (guint k = 0; k < n; k++) {
      int p = r->fidx[adj[k].peer];
      if (p < 0 || !router_link_in(r->topo, adj[k].link, SUB_FABRIC))
        continue;
      FabAdj f = { adj[k], p, hop_latency(r, adj[k].link, adj[k].peer) };
      g_array_append_val(all, f);
    }
  }
  r->fab_first[r->n_nodes] = all->len;
  r->fab_adj = (FabAdj *)(void *)g_array_free(all, FALSE);
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
    r->fidx[i] = router_transit_in(topo, i, SUB_FABRIC) ? (int)r->n_fab++ : -1;
  }
  fabric_adjacency(r);
  r->touched = g_array_new(FALSE, FALSE, sizeof(guint));
  r->cache = g_new0(CacheEntry, r->opt.cache_size);
  r->cache_index = g_hash_table_new(g_direct_hash, g_direct_equal);
  r->heap = g_array_new(FALSE, FALSE, sizeof(HeapItem));
  r->stack = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  r->picks = g_hash_table_new_full(fs_hash64_key, g_int64_equal, NULL, g_free);
  r->nvl_island = nvlink_islands(topo, r->n_nodes);
  fs_route_init(&r->scratch);
  fs_route_init(&r->head);
  fs_route_init(&r->fab);
  r->leg = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  r->tail = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  r->fstack = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  r->adaptive = fs_topo_routing(topo) == FS_TOPO_ROUTING_ADAPTIVE;
  return r;
}

/* Frees the router: the bookkeeping of transfers still in flight, the
 * caches, the memos and the plane bundles' records (their channels stay
 * in the network, which the router borrowed). */
void fs_router_free(FsRouter *r)
{
  if (r == NULL)
    return;
  while (r->live != NULL) {
    Transfer *t = r->live;
    r->live = t->next;
    g_free(t);
  }
  while (r->spare != NULL) {
    Transfer *t = r->spare;
    r->spare = t->next;
    g_free(t);
  }
  for (guint i = 0; i < r->opt.cache_size; i++)
    g_free(r->cache[i].dist);
  g_free(r->cache);
  g_hash_table_unref(r->cache_index);
  g_free(r->sdist);
  g_free(r->fidx);
  g_free(r->fab_first);
  g_free(r->fab_adj);
  g_array_unref(r->touched);
  g_free(r->node_lat);
  g_free(r->near_cpu);
  g_free(r->near_nic);
  g_array_unref(r->heap);
  g_array_unref(r->stack);
  memo_free(&r->memo);
  memo_free(&r->walk_memo);
  memo_free(&r->pxn_memo);
  g_hash_table_unref(r->picks);
  g_free(r->nvl_island);
  fs_route_clear(&r->scratch);
  fs_route_clear(&r->head);
  fs_route_clear(&r->fab);
  g_array_unref(r->leg);
  g_array_unref(r->tail);
  g_array_unref(r->fstack);
  g_free(r->bundle_up);
  g_clear_pointer(&r->bundle_rep, g_array_unref);
  g_clear_pointer(&r->planes, g_array_unref);
  g_free(r->is_plane);
  g_free(r);
}

const FsTopo *fs_router_topo(const FsRouter *r) { return r->topo; }
FsFlowNet *fs_router_net(const FsRouter *r) { return r->net; }

/* ---- local searches (PCIe, NVLink) ---- */

void router_heap_push(GArray *h, HeapItem it)
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

HeapItem router_heap_pop(GArray *h)
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
 * the next router_local_dist call.  Cost: the part of the subgraph reached. */
const FsTime *router_local_dist(FsRouter *r, guint dst, Sub sub)
{
  FsTime *dist = r->sdist;
  for (guint i = 0; i < r->touched->len; i++)
    dist[g_array_index(r->touched, guint, i)] = INF_DIST;
  g_array_set_size(r->touched, 0);
  dist[dst] = 0;
  g_array_append_val(r->touched, dst);
  g_array_set_size(r->heap, 0);
  router_heap_push(r->heap, (HeapItem){0, dst});
  while (r->heap->len > 0) {
    HeapItem it = router_heap_pop(r->heap);
    if (it.d > dist[it.node])
      continue;
    if (it.node != dst && !router_transit_in(r->topo, it.node, sub))
      continue;
    guint n;
    const FsTopoAdj *adj = fs_topo_adj(r->topo, it.node, &n);
    for (guint k = 0; k < n; k++) {
      if (!router_link_in(r->topo, adj[k].link, sub))
        continue;
      /* The edge peer → it.node enters it.node. */
      FsTime nd = it.d + hop_latency(r, adj[k].link, it.node);
      if (nd < dist[adj[k].peer]) {
        if (dist[adj[k].peer] == INF_DIST)
          g_array_append_val(r->touched, adj[k].peer);
        dist[adj[k].peer] = nd;
        router_heap_push(r->heap, (HeapItem){nd, adj[k].peer});
      }
    }
  }
  return dist;
}


/* TRUE when adj entry k of u is a shortest next hop toward dst. */
static gboolean is_next(const FsRouter *r, const FsTime *dist, guint u, const FsTopoAdj *a,
                        guint dst, Sub sub)
{
  if (!router_link_in(r->topo, a->link, sub))
    return FALSE;
  if (a->peer != dst && !router_transit_in(r->topo, a->peer, sub))
    return FALSE;
  return dist[a->peer] != INF_DIST && dist[a->peer] + hop_latency(r, a->link, a->peer) == dist[u];
}

/* Appends to hops a shortest path src → dst over sub, ECMP by key.
 * FALSE (nothing appended) when there is none. */
static gboolean walk_search(FsRouter *r, guint src, guint dst, Sub sub, uint64_t key,
                            GArray *hops)
{
  const FsTime *dist = router_local_dist(r, dst, sub);
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
        u = route_hop(r->topo, hops, u, &adj[k]);
        break;
      }
    }
  }
  return TRUE;
}

/* walk_search, memoised per (src, dst, sub) when it made no equal-cost
 * choice (then the key cannot change it).  A failed walk is not kept. */
gboolean router_walk(FsRouter *r, guint src, guint dst, Sub sub, uint64_t key, GArray *hops)
{
  if (src == dst)
    return TRUE;
  uint64_t mk = ((uint64_t)src << 34) | ((uint64_t)dst << 2) | (uint64_t)sub;
  const Memo *m = memo_get(&r->walk_memo, mk);
  if (m != NULL) {
    g_array_append_vals(hops, m->hops, m->n_hops);
    return TRUE;
  }
  guint mark = hops->len, before = r->ecmp;
  if (!walk_search(r, src, dst, sub, key, hops))
    return FALSE;
  if (r->ecmp == before) {
    Memo *nm = memo_new(mk, 0, hops->len - mark);
    memcpy(nm->hops, &g_array_index(hops, FsChannelId, mark), nm->n_hops * sizeof(FsChannelId));
    memo_put(&r->walk_memo, nm);
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
    route_hop(r->topo, r->stack, u, &adj[k]);
    spray_from(r, dist, adj[k].peer, dst, MIN(bw, fs_topo_link(r->topo, adj[k].link)->bandwidth),
               out);
    g_array_set_size(r->stack, r->stack->len - 1);
  }
}

static gboolean spray_nvlink(FsRouter *r, guint src, guint dst, FsRoute *out)
{
  if (r->nvl_island[src] != r->nvl_island[dst])
    return FALSE; /* as the search below would find: no NVLink path */
  const FsTime *dist = router_local_dist(r, dst, SUB_NVLINK);
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

/* ---- whole routes ---- */

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

/* The head of a PXN route into head (reset): the heaviest of the NVLink
 * paths from src to proxy (spray_nvlink, then one_path), memoised per
 * (src, proxy) (no key enters it).  FALSE when NVLink does not reach. */
static gboolean pxn_head(FsRouter *r, guint src, guint proxy, FsRoute *head)
{
  uint64_t mk = ((uint64_t)src << 32) | proxy;
  const Memo *m = memo_get(&r->pxn_memo, mk);
  route_reset(head);
  if (m != NULL) {
    g_array_append_vals(head->hops, m->hops, m->n_hops);
    route_end_path(head, 1);
    return TRUE;
  }
  if (!spray_nvlink(r, src, proxy, head))
    return FALSE;
  one_path(head);
  Memo *nm = memo_new(mk, 1, head->hops->len);
  memcpy(nm->hops, head->hops->data, nm->n_hops * sizeof(FsChannelId));
  memo_put(&r->pxn_memo, nm);
  return TRUE;
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
      if (!router_walk(r, src, dst, SUB_PCIE, key, out->hops))
        return no_route(r, src, dst, "no PCIe path in the host", error);
    } else {
      FsPathType type = fs_topo_path_type(r->topo, src, dst, NULL);
      if (!r->opt.p2p_disable && rank(type) <= rank(fs_router_p2p_level(r, src)) &&
          router_walk(r, src, dst, SUB_PCIE, key, out->hops)) {
        out->kind = FS_ROUTE_PCIE_P2P;
      } else {
        int cpu = fs_router_nearest_cpu(r, src);
        out->kind = FS_ROUTE_HOST;
        if (cpu < 0 || !router_walk(r, src, (guint)cpu, SUB_PCIE, key, out->hops) ||
            !router_walk(r, (guint)cpu, dst, SUB_PCIE, key, out->hops))
          return no_route(r, src, dst, "no PCIe path through host memory", error);
      }
    }
    route_end_path(out, 1);
    return TRUE;
  }
  if (r->opt.ib_disable)
    return no_route(r, src, dst, "different hosts and the network is disabled", error);
  int ns, nd, proxy;
  if (!router_pick_nics(r, src, dst, &ns, &proxy, &nd))
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
    if (!pxn_head(r, src, (guint)proxy, head) ||
        !router_nic_leg(r, (guint)proxy, (guint)ns, TRUE, key, r->leg, &gdr_s))
      return no_route(r, src, dst, "no PXN path to the rail's NIC", error);
  } else {
    if (!router_nic_leg(r, src, (guint)ns, TRUE, key, r->leg, &gdr_s))
      return no_route(r, src, dst, "no path through the network", error);
    route_end_path(head, 1);
  }
  if (!router_fabric_paths(r, (guint)ns, (guint)nd, key, MAX(FS_ROUTE_MAX_PATHS / head->n_paths, 1), fab) ||
      !router_nic_leg(r, dst, (guint)nd, FALSE, key, r->tail, &gdr_d))
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

/* fs_router_route and fs_router_route_once: a memo hit is copied out; a
 * miss is searched (route_search) and, when keep, memoised. */
static gboolean route_memo(FsRouter *r, guint src, guint dst, uint64_t key, gboolean keep,
                           FsRoute *out, GError **error)
{
  g_return_val_if_fail(src < r->n_nodes && dst < r->n_nodes, FALSE);
  uint64_t mk = ((uint64_t)src << 32) | dst;
  Memo *m = memo_get(&r->memo, mk);
  r->last_choices = 0;
  if (m != NULL && !m->keyed) {
    /* Each array sized once and copied (a hit is most calls). */
    out->kind = m->kind;
    out->n_paths = m->n_paths;
    g_array_set_size(out->hops, m->n_hops);
    g_array_set_size(out->starts, m->n_paths + 1);
    g_array_set_size(out->weights, m->n_paths);
    if (m->n_hops > 0)
      memcpy(out->hops->data, m->hops, m->n_hops * sizeof(FsChannelId));
    memcpy(out->starts->data, m->starts, (m->n_paths + 1) * sizeof(guint));
    if (m->n_paths > 0)
      memcpy(out->weights->data, m->weights, m->n_paths * sizeof(double));
    return TRUE;
  }
  guint before = r->ecmp;
  if (!route_search(r, src, dst, key, m != NULL && m->no_nvlink, out, error))
    return FALSE;
  r->last_choices = r->ecmp - before;
  if (m != NULL || !keep)
    return TRUE;
  gboolean keyed = r->ecmp != before;
  m = keyed ? memo_new(mk, 0, 0) : memo_new(mk, out->n_paths, out->hops->len);
  m->no_nvlink = out->kind != FS_ROUTE_NVLINK;
  m->keyed = keyed;
  if (!keyed) {
    m->kind = out->kind;
    /* A route between a GPU and itself has no hop and no path: nothing to copy (memcpy
     * takes no NULL even for zero bytes). */
    if (m->n_hops > 0)
      memcpy(m->hops, out->hops->data, m->n_hops * sizeof(FsChannelId));
    memcpy(m->starts, out->starts->data, (m->n_paths + 1) * sizeof(guint));
    if (m->n_paths > 0)
      memcpy(m->weights, out->weights->data, m->n_paths * sizeof(double));
  }
  memo_put(&r->memo, m);
  return TRUE;
}

gboolean fs_router_route(FsRouter *r, guint src, guint dst, uint64_t key, FsRoute *out,
                         GError **error)
{
  return route_memo(r, src, dst, key, TRUE, out, error);
}

gboolean fs_router_route_once(FsRouter *r, guint src, guint dst, uint64_t key, FsRoute *out,
                              GError **error)
{
  return route_memo(r, src, dst, key, FALSE, out, error);
}

/* ---- transfers over several paths ---- */

static void transfer_release(Transfer *t);
static void transfer_drained(Transfer *t);

/* A part drained (its finish is then known too: D + its latency): the
 * whole transfer's figures take it in. */
static void part_drained(void *ctx, const FsFlowInfo *info)
{
  Transfer *t = ctx;
  if (info->drained >= t->agg.drained) {
    t->agg.drained = info->drained;
    t->agg.bottleneck = router_report_channel(t->router, info->bottleneck);
    t->agg.rate = info->rate;
  }
  t->agg.finish = MAX(t->agg.finish, info->finish);
  t->agg.latency = MAX(t->agg.latency, info->latency);
  if (t->agg.id == FS_FLOW_NONE)
    t->agg.id = info->id;
  transfer_drained(t);
}

static void part_done(void *ctx, const FsFlowInfo *info)
{
  (void)info;
  transfer_release(ctx);
}

/* One part (or the start loop's hold) has drained; after the last one the
 * transfer has drained: its drained callback runs (every part drains
 * before it lands, so this precedes transfer_release's report). */
static void transfer_drained(Transfer *t)
{
  if (--t->undrained > 0)
    return;
  t->agg.mean_rate = t->agg.drained > t->agg.start
                       ? (double)t->agg.bytes * 1e12 / (double)(t->agg.drained - t->agg.start)
                       : 0;
  if (t->drained)
    t->drained(t->ctx, &t->agg);
}

/* One part (or the start loop's hold) is over; the last one reports the
 * transfer (its figures, mean rate included, final since it drained:
 * transfer_drained) and gives its record back (FsRouter.spare). */
static void transfer_release(Transfer *t)
{
  if (--t->left > 0)
    return;
  if (t->prev)
    t->prev->next = t->next;
  else
    t->router->live = t->next;
  if (t->next)
    t->next->prev = t->prev;
  if (t->done)
    t->done(t->ctx, &t->agg);
  /* After the report, which may start transfers: they must not take t. */
  t->next = t->router->spare;
  t->router->spare = t;
}

/* See route.h. Splits bytes over the route's paths by their weights (one flow always runs, so a
 * zero-byte transfer still takes its latency) and starts one flow per part; done runs once,
 * when the last part lands. The route is computed into the router's scratch, so done may start
 * transfers. */
gboolean fs_router_transfer(FsRouter *r, guint src, guint dst, uint64_t bytes, FsTime start,
                            double rate_cap, uint64_t key, FsFlowDoneFn done, void *ctx,
                            void *user, GError **error)
{
  return fs_router_transfer_copies(r, src, dst, bytes, 1, start, rate_cap, key, done, NULL, ctx,
                                   user, error);
}

/* A route as a transfer reads it: borrowed from the memo on a hit (no
 * copy: a collective's step run starts a transfer per step), else from
 * the router's scratch. */
typedef struct {
  FsRouteKind kind;
  guint n_paths;
  const FsChannelId *hops;
  const guint *starts;   /* n_paths + 1 */
  const double *weights;
} RouteView;

/* The route src → dst as fs_router_route finds it, viewed in *v (valid
 * until the next route of the router; nothing a transfer's flows do
 * before its parts have all started routes again). */
static gboolean route_view(FsRouter *r, guint src, guint dst, uint64_t key, RouteView *v,
                           GError **error)
{
  uint64_t mk = ((uint64_t)src << 32) | dst;
  const Memo *m = src < r->n_nodes && dst < r->n_nodes ? memo_get(&r->memo, mk) : NULL;
  if (m != NULL && !m->keyed) {
    r->last_choices = 0;
    *v = (RouteView){m->kind, m->n_paths, m->hops, m->starts, m->weights};
    return TRUE;
  }
  FsRoute *s = &r->scratch;
  if (!fs_router_route(r, src, dst, key, s, error))
    return FALSE;
  *v = (RouteView){s->kind, s->n_paths, (const FsChannelId *)(void *)s->hops->data,
                   (const guint *)(void *)s->starts->data,
                   (const double *)(void *)s->weights->data};
  return TRUE;
}

/* See route.h: fs_router_transfer's split of one copy, each part's flow
 * standing for the copies. */
gboolean fs_router_transfer_copies(FsRouter *r, guint src, guint dst, uint64_t bytes,
                                   guint copies, FsTime start, double rate_cap, uint64_t key,
                                   FsFlowDoneFn done, FsFlowDoneFn drained, void *ctx, void *user,
                                   GError **error)
{
  g_return_val_if_fail(copies >= 1 && copies <= FS_FLOW_MAX_COPIES, FALSE);
  RouteView route;
  if (!route_view(r, src, dst, key, &route, error))
    return FALSE;
  Transfer *t = r->spare;
  if (t != NULL) {
    r->spare = t->next;
    memset(t, 0, sizeof *t);
  } else {
    t = g_new0(Transfer, 1);
  }
  t->router = r;
  t->next = r->live;
  if (r->live)
    r->live->prev = t;
  r->live = t;
  t->done = done;
  t->drained = drained;
  t->ctx = ctx;
  t->agg.src = (int32_t)src;
  t->agg.dst = (int32_t)dst;
  t->agg.bytes = bytes * copies;
  t->agg.start = start;
  t->agg.user = user;
  t->agg.bottleneck = FS_CHANNEL_NONE;
  /* Split the bytes; paths that get none are skipped (but one flow always
   * runs, so a zero-byte transfer still completes after its latency). */
  uint64_t given = 0;
  guint last = route.n_paths - 1;
  uint64_t part[MAX(MAX_SPRAY, FS_ROUTE_MAX_PATHS)];
  for (guint i = 0; i < route.n_paths; i++) {
    double w = route.weights[i];
    part[i] = i == last ? bytes - given : MIN((uint64_t)((double)bytes * w), bytes - given);
    given += part[i];
    t->left += part[i] > 0 || (bytes == 0 && i == 0);
  }
  t->agg.path_len = t->left;
  /* A bundled NVLink transfer (route-planes.c) is one flow over the
   * bundle, of the bytes that make it drain when the part that drains
   * last would (the largest part over its weight). */
  const FsChannelId *bundle = r->bundles ? router_bundle_path(r, src, dst, route.kind) : NULL;
  if (bundle != NULL) {
    double most = 0;
    for (guint i = 0; i < route.n_paths; i++)
      if (part[i] > 0)
        most = MAX(most, (double)part[i] / route.weights[i]);
    uint64_t b = (uint64_t)llround(most);
    r->bundled++;
    t->undrained = t->left = 2;
    FsFlowSpec spec = {
      .src = (int32_t)src, .dst = (int32_t)dst, .path = bundle, .path_len = 2,
      .bytes = b * copies, .start = start, .done = part_done, .drained = part_drained,
      .ctx = t, .user = user,
      .rate_cap = copies == 1 ? rate_cap : rate_cap * copies, .copies = copies,
    };
    fs_flownet_start(r->net, &spec);
    transfer_drained(t);
    transfer_release(t);
    return TRUE;
  }
  /* A zero-byte part drains at once, and with no latency lands, inside
   * fs_flownet_start.  Hold the transfer until every part has started, so
   * that its drained and done callbacks, which may start another transfer
   * (reusing r->scratch or emptying the memo), run only after this loop
   * is finished with the route. */
  t->undrained = t->left + 1;
  t->left++;
  for (guint i = 0; i < route.n_paths; i++) {
    if (!(part[i] > 0 || (bytes == 0 && i == 0)))
      continue;
    guint len = route.starts[i + 1] - route.starts[i];
    const FsChannelId *path = len > 0 ? route.hops + route.starts[i] : NULL;
    double cap = rate_cap * route.weights[i];
    FsFlowSpec spec = {
      .src = (int32_t)src, .dst = (int32_t)dst, .path = path, .path_len = len,
      .bytes = part[i] * copies, .start = start, .done = part_done, .drained = part_drained,
      .ctx = t, .user = user,
      .rate_cap = copies == 1 ? cap : cap * copies, .copies = copies,
    };
    fs_flownet_start(r->net, &spec);
  }
  transfer_drained(t);
  transfer_release(t);
  return TRUE;
}

char *fs_router_channel_name(const FsRouter *r, FsChannelId ch)
{
  if (ch >= fs_topo_n_channels(r->topo)) {
    char *bundle = router_bundle_name(r, ch);
    return bundle != NULL ? bundle : g_strdup_printf("channel %u", ch);
  }
  return g_strdup_printf("%s -> %s", fs_topo_node(r->topo, fs_topo_channel_src(r->topo, ch))->name,
                         fs_topo_node(r->topo, fs_topo_channel_dst(r->topo, ch))->name);
}
