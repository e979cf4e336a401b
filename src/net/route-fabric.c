/* route-fabric.c — paths over the fabric (InfiniBand and Ethernet links
 * through their switches) from one endpoint (a NIC, or a GPU wired to the
 * fabric) to another.  Distances are per anchor (the switch the
 * destination hangs from) over the fabric's switches only, in compact
 * arrays cached LRU (fabric_dist).  Static routing walks one shortest path,
 * choosing among equal next hops by the flow's key or, on a switch that
 * routes by destination, by the destination (walk_fabric; route.h, ECMP);
 * adaptive routing takes every shortest path, the bytes split evenly at
 * each switch (adaptive_from).  Part of the router (route-private.h).
 */
#include "core/rng.h"
#include "net/route-private.h"

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
  router_heap_push(r->heap, (HeapItem){0, anchor});
  while (r->heap->len > 0) {
    HeapItem it = router_heap_pop(r->heap);
    if (it.d > dist[r->fidx[it.node]])
      continue;
    guint n;
    const FsTopoAdj *adj = fs_topo_adj(r->topo, it.node, &n);
    for (guint k = 0; k < n; k++) {
      int p = r->fidx[adj[k].peer];
      if (p < 0 || !router_link_in(r->topo, adj[k].link, SUB_FABRIC))
        continue;
      FsTime nd = it.d + hop_latency(r, adj[k].link, it.node);
      if (nd < dist[p]) {
        dist[p] = nd;
        router_heap_push(r->heap, (HeapItem){nd, adj[k].peer});
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
    if (r->fidx[adj[k].peer] >= 0 && router_link_in(r->topo, adj[k].link, SUB_FABRIC)) {
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

/* Whether fabric candidate a (a fabric link to a fabric switch) leads to
 * a switch with a path to the anchor (dist: every fabric switch's
 * distance to it), and *via the distance through a. */
static inline gboolean fabric_step(const FsTime *dist, const FabAdj *a, FsTime *via)
{
  if (dist[a->fidx] == INF_DIST)
    return FALSE;
  *via = dist[a->fidx] + a->lat;
  return TRUE;
}

/* How many of the n fabric candidates adj of a switch lead on a shortest
 * fabric path to the anchor (ties counted), and *best that path's
 * distance (INF_DIST when none does). */
static guint shortest_next_hops(const FsTime *dist, const FabAdj *adj, guint n, FsTime *best)
{
  guint cand = 0;
  *best = INF_DIST;
  for (guint k = 0; k < n; k++) {
    FsTime via;
    if (!fabric_step(dist, &adj[k], &via) || via > *best)
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
    FsTime best;
    const FabAdj *adj = &r->fab_adj[r->fab_first[u]];
    guint n = r->fab_first[u + 1] - r->fab_first[u];
    guint cand = shortest_next_hops(dist, adj, n, &best);
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
      if (!fabric_step(dist, &adj[k], &via) || via != best)
        continue;
      if (pick-- == 0) {
        u = route_hop(r->topo, hops, u, &adj[k].adj);
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
  FsTime best;
  const FabAdj *adj = &r->fab_adj[r->fab_first[u]];
  guint n = r->fab_first[u + 1] - r->fab_first[u];
  guint cand = shortest_next_hops(dist, adj, n, &best);
  if (cand == 0 || r->fstack->len > r->n_fab + 1)
    return;
  guint take = MIN(cand, MAX(budget, 1));
  guint first = take < cand ? (guint)(fs_hash64(((uint64_t)dst << 32) ^ fs_hash64(u + 1)) % cand) : 0;
  for (guint k = 0, i = 0; k < n; k++) {
    FsTime via;
    if (!fabric_step(dist, &adj[k], &via) || via != best)
      continue;
    guint slot = (i++ + cand - first) % cand; /* this next hop's place after `first` */
    if (slot >= take)
      continue;
    route_hop(r->topo, r->fstack, u, &adj[k].adj);
    adaptive_from(r, dist, adj[k].adj.peer, anchor, last_link, dst, w / take, MAX(budget / take, 1),
                  out);
    g_array_set_size(r->fstack, r->fstack->len - 1);
  }
}

/* The fabric paths from endpoint src to endpoint dst into out (reset
 * first): one walk_fabric path (weight 1) under static routing, every
 * equal-cost path under adaptive routing (at most budget).  FALSE when
 * there is none. */
gboolean router_fabric_paths(FsRouter *r, guint src, guint dst, uint64_t key, guint budget,
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
