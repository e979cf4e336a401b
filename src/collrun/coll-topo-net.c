/* coll-topo-net.c — a collective's transfers and routes on a topology's
 * router.  See coll-topo-net.h. */
#include "collrun/coll-topo-net.h"

#include "core/rng.h"

#include <math.h>

#include "util/error.h"

struct FsCollTopoNet {
  FsRouter *router;
  GHashTable *paths; /* (src << 32 | dst) → GArray of FsChannelId */
  GHashTable *fixed; /* (src << 32 | dst) → 1 + fs_coll_topo_route_fixed's answer */
  GHashTable *free_planes; /* (src << 32 | dst) → 1 + fs_coll_topo_planes_free's answer
                              between GPUs or CPUs */
  /* bfs_path's scratch, one entry per topology node, made at first use:
   * via[] is -1 everywhere between searches (a search resets the nodes it
   * reached, queue[0 .. its tail)), so a search costs the nodes it visits,
   * not the topology's size. */
  int *via;
  guint *queue;
  FsRoute once; /* fs_coll_topo_route_once's route, reused over its n² calls */
  FsRoute ask;  /* the route of route_profile, route_paths and route_fixed, reused:
                   none calls another, and each is asked per connection or pair */
  guint8 *is_switch; /* per topology node: 1 for a switch (to_switch), made at first use */
};

FsCollTopoNet *fs_coll_topo_net_new(FsRouter *router)
{
  FsCollTopoNet *t = g_new0(FsCollTopoNet, 1);
  t->router = router;
  t->paths = g_hash_table_new_full(fs_hash64_key, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
  t->fixed = g_hash_table_new_full(fs_hash64_key, g_int64_equal, g_free, NULL);
  t->free_planes = g_hash_table_new_full(fs_hash64_key, g_int64_equal, g_free, NULL);
  fs_route_init(&t->once);
  fs_route_init(&t->ask);
  return t;
}

void fs_coll_topo_net_free(FsCollTopoNet *t)
{
  if (t == NULL)
    return;
  g_hash_table_destroy(t->paths);
  g_hash_table_destroy(t->fixed);
  g_hash_table_destroy(t->free_planes);
  g_free(t->via);
  g_free(t->queue);
  g_free(t->is_switch);
  fs_route_clear(&t->once);
  fs_route_clear(&t->ask);
  g_free(t);
}

/* Fewest-hop path from src to dst that never passes through a GPU
 * (breadth-first, neighbours in adjacency order: deterministic), as
 * channels; NULL when none.  Costs the nodes it reaches (t's scratch). */
static GArray *bfs_path(FsCollTopoNet *t, const FsTopo *topo, guint src, guint dst)
{
  if (t->via == NULL) {
    guint nn = fs_topo_n_nodes(topo);
    t->via = g_new(int, nn); /* link used to reach the node, -1 unseen */
    t->queue = g_new(guint, nn);
    for (guint i = 0; i < nn; i++)
      t->via[i] = -1;
  }
  int *via = t->via;
  guint *queue = t->queue;
  guint head = 0, tail = 0;
  queue[tail++] = src;
  via[src] = (int)G_MAXINT;
  while (head < tail && via[dst] < 0) {
    guint u = queue[head++];
    if (u != src && fs_topo_node(topo, u)->kind == FS_NODE_GPU)
      continue;
    guint na;
    const FsTopoAdj *adj = fs_topo_adj(topo, u, &na);
    for (guint k = 0; k < na; k++)
      if (via[adj[k].peer] < 0) {
        via[adj[k].peer] = (int)adj[k].link;
        queue[tail++] = adj[k].peer;
      }
  }
  GArray *path = NULL;
  if (via[dst] >= 0) {
    path = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
    for (guint v = dst; v != src;) {
      guint link = (guint)via[v];
      const FsTopoLink *l = fs_topo_link(topo, link);
      guint from = l->a == v ? l->b : l->a;
      FsChannelId ch = fs_topo_channel_from(topo, link, from);
      g_array_prepend_val(path, ch);
      v = from;
    }
  }
  for (guint i = 0; i < tail; i++)
    via[queue[i]] = -1;
  return path;
}

/* The path to or from a reducing switch (cached): NVLS is next to the GPU;
 * a network switch is reached through the GPU's NIC (fewest hops to the
 * NIC, then from the NIC to the switch).  NULL with error when none. */
static const GArray *switch_path(FsCollTopoNet *t, int src, int dst, GError **error)
{
  const FsTopo *topo = fs_router_topo(t->router);
  gint64 k = ((gint64)src << 32) | (guint)dst;
  GArray *path = g_hash_table_lookup(t->paths, &k);
  if (path != NULL)
    return path;
  gboolean up = fs_topo_node(topo, (guint)src)->kind == FS_NODE_GPU;
  gboolean both = fs_topo_node(topo, (guint)src)->kind == FS_NODE_SWITCH &&
                  fs_topo_node(topo, (guint)dst)->kind == FS_NODE_SWITCH;
  guint gpu = (guint)(up ? src : dst), sw = (guint)(up ? dst : src);
  int nic = both || fs_topo_node(topo, sw)->model->u.sw.kind == FS_SWITCH_NVSWITCH
              ? -1 : fs_router_nearest_nic(t->router, gpu);
  if (both || nic < 0 || fs_topo_node(topo, gpu)->kind != FS_NODE_GPU) {
    path = bfs_path(t, topo, (guint)src, (guint)dst);
  } else {
    GArray *a = bfs_path(t, topo, up ? gpu : sw, (guint)nic);
    GArray *b = bfs_path(t, topo, (guint)nic, up ? sw : gpu);
    if (a && b)
      g_array_append_vals(a, b->data, b->len);
    else if (a)
      g_array_unref(a), a = NULL;
    if (b)
      g_array_unref(b);
    path = a;
  }
  if (path == NULL) {
    g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_NO_ROUTE, "no path from %s to %s",
                fs_topo_node(topo, (guint)src)->name, fs_topo_node(topo, (guint)dst)->name);
    return NULL;
  }
  g_hash_table_insert(t->paths, g_memdup2(&k, sizeof k), path);
  return path;
}

/* TRUE when node src or dst is a switch (a reducing switch: NVLS, CollNet).
 * Asked per transfer: the node kinds are read once into t->is_switch. */
static gboolean to_switch(FsCollTopoNet *t, int src, int dst)
{
  if (t->is_switch == NULL) {
    const FsTopo *topo = fs_router_topo(t->router);
    guint nn = fs_topo_n_nodes(topo);
    t->is_switch = g_new(guint8, nn + 1);
    for (guint i = 0; i < nn; i++)
      t->is_switch[i] = fs_topo_node(topo, i)->kind == FS_NODE_SWITCH;
  }
  return t->is_switch[src] || t->is_switch[dst];
}

gboolean fs_coll_topo_xfer(void *ctx, int src, int dst, uint64_t bytes, double rate_cap,
                           uint64_t key, FsFlowDoneFn done, FsFlowDoneFn drained, void *done_ctx,
                           void *user, GError **error)
{
  return fs_coll_topo_xfer_copies(ctx, src, dst, bytes, 1, rate_cap, key, done, drained, done_ctx,
                                  user, error);
}

gboolean fs_coll_topo_xfer_copies(void *ctx, int src, int dst, uint64_t bytes, guint copies,
                                  double rate_cap, uint64_t key, FsFlowDoneFn done,
                                  FsFlowDoneFn drained, void *done_ctx, void *user, GError **error)
{
  FsCollTopoNet *t = ctx;
  FsFlowNet *net = fs_router_net(t->router);
  FsSim *sim = fs_flownet_sim(net);
  if (!to_switch(t, src, dst))
    return fs_router_transfer_copies(t->router, (guint)src, (guint)dst, bytes, copies,
                                     fs_sim_now(sim), rate_cap, key, done, drained, done_ctx, user,
                                     error);
  const GArray *path = switch_path(t, src, dst, error);
  if (path == NULL)
    return FALSE;
  FsFlowSpec spec = {
    .src = src, .dst = dst, .path = (const FsChannelId *)path->data, .path_len = path->len,
    .bytes = bytes * copies, .rate_cap = copies == 1 ? rate_cap : rate_cap * copies,
    .start = fs_sim_now(sim), .done = done, .drained = drained, .ctx = done_ctx, .user = user,
    .copies = copies,
  };
  fs_flownet_start(net, &spec);
  return TRUE;
}

/* Appends one path's analytic figures: its share of the bytes, its
 * smallest capacity and its latency (flow.h). */
static void append_path(GByteArray *out, const FsFlowNet *net, double weight,
                        const FsChannelId *path, guint len)
{
  double cap = INFINITY;
  for (guint i = 0; i < len; i++)
    cap = MIN(cap, fs_flownet_channel_capacity(net, path[i]));
  FsTime lat = fs_flownet_path_latency(net, path, len);
  g_byte_array_append(out, (const guint8 *)&weight, sizeof weight);
  g_byte_array_append(out, (const guint8 *)&cap, sizeof cap);
  g_byte_array_append(out, (const guint8 *)&lat, sizeof lat);
}

gboolean fs_coll_topo_route_profile(void *ctx, int src, int dst, GByteArray *out)
{
  FsCollTopoNet *t = ctx;
  const FsFlowNet *net = fs_router_net(t->router);
  if (to_switch(t, src, dst)) {
    const GArray *path = switch_path(t, src, dst, NULL);
    if (path == NULL)
      return FALSE;
    guint one = 1;
    g_byte_array_append(out, (const guint8 *)&one, sizeof one);
    append_path(out, net, 1.0, (const FsChannelId *)path->data, path->len);
    return TRUE;
  }
  FsRoute *route = &t->ask;
  gboolean ok = fs_router_route(t->router, (guint)src, (guint)dst, 0, route, NULL) &&
                fs_router_last_choices(t->router) == 0;
  if (ok) {
    g_byte_array_append(out, (const guint8 *)&route->n_paths, sizeof route->n_paths);
    for (guint i = 0; i < route->n_paths; i++) {
      guint len;
      const FsChannelId *path = fs_route_path(route, i, &len);
      append_path(out, net, g_array_index(route->weights, double, i), path, len);
    }
  }
  return ok;
}

gboolean fs_coll_topo_route_paths(void *ctx, int src, int dst, uint64_t key, GArray *weights,
                                  GArray *hops)
{
  FsCollTopoNet *t = ctx;
  if (to_switch(t, src, dst)) {
    const GArray *path = switch_path(t, src, dst, NULL);
    if (path == NULL)
      return FALSE;
    fs_route_append_path(weights, hops, 1.0, (const FsChannelId *)path->data, path->len);
    return TRUE;
  }
  FsRoute *route = &t->ask;
  gboolean ok = fs_router_route(t->router, (guint)src, (guint)dst, key, route, NULL);
  if (ok)
    fs_route_append_paths(route, weights, hops);
  return ok;
}

gboolean fs_coll_topo_flow_paths(void *ctx, int src, int dst, uint64_t key, GArray *weights,
                                 GArray *hops)
{
  FsCollTopoNet *t = ctx;
  if (to_switch(t, src, dst))
    return fs_coll_topo_route_paths(ctx, src, dst, key, weights, hops);
  return fs_router_flow_paths(t->router, (guint)src, (guint)dst, key, weights, hops);
}

gboolean fs_coll_topo_plane_bundles(void *ctx, gboolean on)
{
  FsCollTopoNet *t = ctx;
  gboolean held = on || fs_router_plane_bundles_held(t->router);
  fs_router_set_plane_bundles(t->router, on);
  return held;
}

gboolean fs_coll_topo_planes_free(void *ctx, int src, int dst)
{
  FsCollTopoNet *t = ctx;
  if (!to_switch(t, src, dst)) {
    /* Asked once per pair: every folded plan run with bundles asks again,
     * and the answer (key 0's route, the router's bundles) never changes. */
    gint64 k = ((gint64)src << 32) | (guint)dst;
    gpointer v = g_hash_table_lookup(t->free_planes, &k);
    if (v != NULL)
      return GPOINTER_TO_UINT(v) - 1;
    gboolean ok = !fs_router_plane_pinned(t->router, (guint)src, (guint)dst);
    g_hash_table_insert(t->free_planes, g_memdup2(&k, sizeof k), GUINT_TO_POINTER((guint)ok + 1));
    return ok;
  }
  const GArray *path = switch_path(t, src, dst, NULL);
  return path != NULL &&
         !fs_router_plane_pinned_path(t->router, (const FsChannelId *)(void *)path->data, path->len);
}

int fs_coll_topo_route_relay(void *ctx, int src, int dst)
{
  FsCollTopoNet *t = ctx;
  int ns, nd, proxy;
  if (src < 0 || dst < 0 || !fs_router_net_nics(t->router, (guint)src, (guint)dst, &ns, &nd, &proxy))
    return -1;
  return proxy;
}

int fs_coll_topo_route_fabric(void *ctx, FsChannelId ch)
{
  FsCollTopoNet *t = ctx;
  const FsTopo *topo = fs_router_topo(t->router);
  guint node = fs_topo_channel_dst(topo, ch);
  return fs_topo_node(topo, node)->host < 0 ? (int)node : -1;
}

int fs_coll_topo_route_rail(void *ctx, int dst)
{
  FsCollTopoNet *t = ctx;
  int nd = dst >= 0 ? fs_router_nearest_nic(t->router, (guint)dst) : -1;
  return nd < 0 ? -1 : fs_topo_node(fs_router_topo(t->router), (guint)nd)->local;
}

gboolean fs_coll_topo_route_once(void *ctx, int src, int dst, GArray *weights, GArray *hops,
                                 gboolean *fixed)
{
  FsCollTopoNet *t = ctx;
  *fixed = TRUE;
  if (to_switch(t, src, dst))
    return fs_coll_topo_route_paths(ctx, src, dst, 0, weights, hops);
  FsRoute *route = &t->once;
  gboolean ok = fs_router_route_once(t->router, (guint)src, (guint)dst, 0, route, NULL);
  *fixed = fs_router_last_choices(t->router) == 0;
  if (ok)
    fs_route_append_paths(route, weights, hops);
  return ok;
}

void fs_coll_topo_alone_routes(FsCollAloneOpts *o, FsCollTopoNet *t, gboolean maxmin)
{
  o->route_fixed = fs_coll_topo_route_fixed;
  o->plane_bundles = fs_coll_topo_plane_bundles;
  o->planes_free = fs_coll_topo_planes_free;
  o->route_ctx = t;
  if (!maxmin)
    return;
  o->route_paths = fs_coll_topo_route_paths;
  o->flow_paths = fs_coll_topo_flow_paths;
  o->route_relay = fs_coll_topo_route_relay;
  o->route_once = fs_coll_topo_route_once;
  o->route_rail = fs_coll_topo_route_rail;
  o->route_fabric = fs_coll_topo_route_fabric;
}

gboolean fs_coll_topo_route_fixed(void *ctx, int src, int dst)
{
  FsCollTopoNet *t = ctx;
  /* Paths to and from a reducing switch take no key (see fs_coll_topo_xfer). */
  if (to_switch(t, src, dst))
    return TRUE;
  /* Asked once per pair: every plan folded on this network asks again. */
  gint64 k = ((gint64)src << 32) | (guint)dst;
  gpointer v = g_hash_table_lookup(t->fixed, &k);
  if (v != NULL)
    return GPOINTER_TO_UINT(v) - 1;
  gboolean ok = fs_router_route(t->router, (guint)src, (guint)dst, 0, &t->ask, NULL) &&
                fs_router_last_choices(t->router) == 0;
  g_hash_table_insert(t->fixed, g_memdup2(&k, sizeof k), GUINT_TO_POINTER((guint)ok + 1));
  return ok;
}

