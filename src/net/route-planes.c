/* route-planes.c — NVSwitch plane bundles: an NVLink transfer sprayed
 * over the planes of a uniform NVSwitch island runs as one flow over two
 * bundled channels instead of one flow per plane.  Contract in route.h
 * ("NVSwitch plane bundles"); the router's inside in route-private.h.
 *
 * Why it is the same allocation.  In an island where every GPU attaches to
 * every NVSwitch plane k by one link of the same capacity c_k (and to
 * nothing else over NVLink; at one latency over its planes, so that a
 * bundle channel's latency stands for each plane's), and every switch only
 * to the island's GPUs, every NVLink route between two of its GPUs is the spray over all planes
 * with the same weights w_k = c_k / C (C = sum of c_k), and every plane
 * channel has capacity w_k × C.  When every flow on the planes is such a
 * part (a transfer's bytes and cap times w_k), the planes are independent
 * max-min problems, plane k the w_k-scaled copy of one problem on
 * capacities C: max-min allocations scale (progressive filling with every
 * capacity and cap times w freezes the same flows at w times the levels),
 * so every part runs at w_k times the rate the whole transfer gets on
 * channels of capacity C.  A bundle is that problem: per GPU one channel
 * up (GPU to the planes, capacity C) and one down, one flow per transfer.
 *
 * What differs: the per-plane split gives part k floor(bytes × w_k) bytes
 * and the last part the remainder, so the parts drain a few bytes' time
 * apart; the bundled flow carries the bytes of the part that drains last,
 * scaled up by its weight (max over k of part_k / w_k, rounded), so that
 * it drains when that part would; the planes' flows that drained earlier
 * no longer free their plane for those picoseconds.  Floating-point sums
 * of the same levels differ in the last bits.  Measured: tests/bench/
 * RESULTS.md ("NVSwitch plane bundles").
 *
 * Where it does not hold, nothing is bundled: an island whose GPUs differ
 * in a plane's capacity (a failed link), a switch linked to another switch
 * or a CPU, a GPU with a direct NVLink, one plane only.  Flows pinned to a
 * plane (a PXN head takes the heaviest plane; NVLS legs start on a
 * switch) break the proportions: while bundles are on, every plane channel
 * of a bundled island is barred in the flow network
 * (fs_flownet_channel_bar), and a run in which such a flow started while a
 * transfer was bundled is reported not held (fs_router_plane_bundles_held),
 * for the caller to run again without bundles.
 */
#include <string.h>

#include "net/route-private.h"

#define NO_BUNDLE G_MAXUINT32

/* The capacity and the two hop latencies of GPU g's NVLink at adjacency a
 * (toward the switch, and back into g). */
static void plane_figures(const FsRouter *r, guint g, const FsTopoAdj *a, double *cap,
                          FsTime *up, FsTime *down)
{
  *cap = fs_topo_link(r->topo, a->link)->bandwidth;
  *up = hop_latency(r, a->link, a->peer);
  *down = hop_latency(r, a->link, g);
}

/* Whether adjacency a is an NVLink (router_link_in's NVLink family). */
static gboolean is_nvlink(const FsRouter *r, const FsTopoAdj *a)
{
  return router_link_in(r->topo, a->link, SUB_NVLINK);
}

/* Whether the island of GPUs gpus[0..n) is uniform (above): every GPU's
 * NVLinks go one to each switch of the first GPU's NVLink peers, at the
 * first GPU's capacities and at one latency each way over all of them
 * (latencies may differ between GPUs), with at least two such switches,
 * each NVSwitch with NVLinks to these GPUs only.  Cost: the NVLink
 * adjacencies of the island. */
static gboolean island_uniform(const FsRouter *r, const guint *gpus, guint n)
{
  if (n < 2)
    return FALSE;
  guint na;
  const FsTopoAdj *a0 = fs_topo_adj(r->topo, gpus[0], &na);
  GArray *sw = g_array_new(FALSE, FALSE, sizeof(guint));
  gboolean ok = TRUE;
  for (guint k = 0; k < na && ok; k++) {
    if (!is_nvlink(r, &a0[k]))
      continue;
    ok = router_transit_in(r->topo, a0[k].peer, SUB_NVLINK);
    for (guint j = 0; j < sw->len && ok; j++)
      ok = g_array_index(sw, guint, j) != a0[k].peer;
    g_array_append_val(sw, a0[k].peer);
  }
  ok = ok && sw->len >= 2;
  /* Every GPU: the same switches, capacities and latencies, each switch
   * once.  Its own latencies must be alike over the planes too, so that
   * one up and one down latency stand for all of them. */
  for (guint i = 0; i < n && ok; i++) {
    guint m, seen = 0;
    const FsTopoAdj *a = fs_topo_adj(r->topo, gpus[i], &m);
    FsTime up0 = -1, down0 = -1;
    for (guint k = 0; k < m && ok; k++) {
      if (!is_nvlink(r, &a[k]))
        continue;
      guint j = 0;
      while (j < sw->len && g_array_index(sw, guint, j) != a[k].peer)
        j++;
      if (j == sw->len) {
        ok = FALSE;
        break;
      }
      double cap, cap0;
      FsTime up, down, u0, d0;
      plane_figures(r, gpus[i], &a[k], &cap, &up, &down);
      guint k0 = 0;
      while (!(is_nvlink(r, &a0[k0]) && a0[k0].peer == a[k].peer))
        k0++;
      plane_figures(r, gpus[0], &a0[k0], &cap0, &u0, &d0);
      if (up0 < 0)
        up0 = up, down0 = down;
      ok = cap == cap0 && up == up0 && down == down0;
      seen++;
    }
    ok = ok && seen == sw->len;
  }
  /* Every switch: NVLinks to these GPUs only (as many as there are GPUs,
   * each GPU having one to it). */
  for (guint j = 0; j < sw->len && ok; j++) {
    guint m, links = 0;
    const FsTopoAdj *a = fs_topo_adj(r->topo, g_array_index(sw, guint, j), &m);
    for (guint k = 0; k < m && ok; k++) {
      if (!is_nvlink(r, &a[k]))
        continue;
      const FsTopoNode *p = fs_topo_node(r->topo, a[k].peer);
      ok = p->kind == FS_NODE_GPU && r->nvl_island[a[k].peer] == r->nvl_island[gpus[0]];
      links++;
    }
    ok = ok && links == n;
  }
  g_array_unref(sw);
  return ok;
}

/* How many NVLinks GPU g has. */
static guint sw_count(const FsRouter *r, guint g)
{
  guint m, c = 0;
  const FsTopoAdj *a = fs_topo_adj(r->topo, g, &m);
  for (guint k = 0; k < m; k++)
    c += is_nvlink(r, &a[k]);
  return c;
}

/* Gives each GPU of a uniform island its bundle channels (up, then down,
 * in the network after the links' channels) and records its plane
 * channels (barred while bundles are on) and the channel each bundle
 * stands for in reports: the last plane's, which carries the split's
 * remainder. */
static void island_bundle(FsRouter *r, const guint *gpus, guint n)
{
  for (guint i = 0; i < n; i++) {
    guint m;
    const FsTopoAdj *a = fs_topo_adj(r->topo, gpus[i], &m);
    double cap = 0;
    FsTime up = 0, down = 0;
    FsChannelId last_up = 0, last_down = 0;
    for (guint k = 0; k < m; k++) {
      if (!is_nvlink(r, &a[k]))
        continue;
      double c;
      plane_figures(r, gpus[i], &a[k], &c, &up, &down);
      cap += c;
      last_up = fs_topo_channel_from(r->topo, a[k].link, gpus[i]);
      last_down = fs_topo_channel_from(r->topo, a[k].link, a[k].peer);
      g_array_append_val(r->planes, last_up);
      g_array_append_val(r->planes, last_down);
    }
    for (guint k = r->planes->len - 2 * (guint)sw_count(r, gpus[i]); k < r->planes->len; k++)
      r->is_plane[g_array_index(r->planes, FsChannelId, k)] = 1;
    FsChannelId cu = fs_flownet_add_channel(r->net, cap, up);
    fs_flownet_add_channel(r->net, cap, down);
    r->bundle_up[gpus[i]] = cu;
    g_array_append_val(r->bundle_rep, last_up);
    g_array_append_val(r->bundle_rep, last_down);
    r->bundled_gpus++;
  }
}

/* Finds the uniform islands (once per router) and bundles them. */
static void find_bundles(FsRouter *r)
{
  if (r->bundle_up != NULL)
    return;
  r->bundle_up = g_new(FsChannelId, MAX(r->n_nodes, 1));
  r->bundle_rep = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  r->planes = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  r->is_plane = g_new0(guint8, MAX(fs_topo_n_channels(r->topo), 1));
  r->first_bundle = fs_flownet_n_channels(r->net);
  /* The GPUs of each island, in node order (a counting sort by island). */
  g_autofree guint *count = g_new0(guint, r->n_nodes + 1);
  g_autofree guint *gpus = g_new(guint, MAX(r->n_nodes, 1));
  for (guint u = 0; u < r->n_nodes; u++) {
    r->bundle_up[u] = NO_BUNDLE;
    if (fs_topo_node(r->topo, u)->kind == FS_NODE_GPU)
      count[r->nvl_island[u] + 1]++;
  }
  for (guint u = 0; u < r->n_nodes; u++)
    count[u + 1] += count[u];
  g_autofree guint *first = g_memdup2(count, (r->n_nodes + 1) * sizeof(guint));
  for (guint u = 0; u < r->n_nodes; u++)
    if (fs_topo_node(r->topo, u)->kind == FS_NODE_GPU)
      gpus[count[r->nvl_island[u]]++] = u;
  for (guint i = 0; i < r->n_nodes; i++) {
    guint n = first[i + 1] - first[i];
    if (n > 0 && island_uniform(r, gpus + first[i], n))
      island_bundle(r, gpus + first[i], n);
  }
}

void fs_router_set_plane_bundles(FsRouter *r, gboolean on)
{
  g_return_if_fail(r != NULL);
  FsFlowNetStats st;
  fs_flownet_stats(r->net, &st);
  g_return_if_fail(!on || st.flows_active == 0);
  on = on && fs_flownet_model(r->net) == FS_NET_MAXMIN;
  if (on)
    find_bundles(r);
  if (r->planes != NULL && on != r->bundles)
    for (guint i = 0; i < r->planes->len; i++)
      fs_flownet_channel_bar(r->net, g_array_index(r->planes, FsChannelId, i), on);
  r->bundles = on;
  r->bundled = 0;
  r->barred_base = fs_flownet_barred_starts(r->net);
}

gboolean fs_router_plane_bundles_held(const FsRouter *r)
{
  return r->bundled == 0 || fs_flownet_barred_starts(r->net) == r->barred_base;
}

gboolean fs_router_plane_pinned_path(FsRouter *r, const FsChannelId *path, guint len)
{
  if (fs_flownet_model(r->net) != FS_NET_MAXMIN)
    return FALSE;
  find_bundles(r);
  for (guint i = 0; i < len; i++)
    if (path[i] < fs_topo_n_channels(r->topo) && r->is_plane[path[i]])
      return TRUE;
  return FALSE;
}

gboolean fs_router_plane_pinned(FsRouter *r, guint src, guint dst)
{
  if (fs_flownet_model(r->net) != FS_NET_MAXMIN)
    return FALSE;
  find_bundles(r);
  if (r->bundled_gpus == 0)
    return FALSE;
  FsRoute *s = &r->scratch;
  if (!fs_router_route(r, src, dst, 0, s, NULL))
    return TRUE;
  if (router_bundle_path(r, src, dst, s->kind) != NULL)
    return FALSE;
  return fs_router_plane_pinned_path(r, (const FsChannelId *)(void *)s->hops->data,
                                     s->hops->len);
}

guint fs_router_plane_bundle_gpus(FsRouter *r)
{
  if (fs_flownet_model(r->net) != FS_NET_MAXMIN)
    return 0;
  find_bundles(r);
  return r->bundled_gpus;
}

const FsChannelId *router_bundle_path(FsRouter *r, guint src, guint dst, FsRouteKind kind)
{
  if (kind != FS_ROUTE_NVLINK || r->bundle_up[src] == NO_BUNDLE ||
      r->bundle_up[dst] == NO_BUNDLE)
    return NULL;
  r->bundle_path[0] = r->bundle_up[src];
  r->bundle_path[1] = r->bundle_up[dst] + 1;
  return r->bundle_path;
}

void fs_route_append_path(GArray *weights, GArray *hops, double w, const FsChannelId *path,
                          guint len)
{
  FsChannelId n = len;
  g_array_append_val(weights, w);
  g_array_append_val(hops, n);
  g_array_append_vals(hops, path, len);
}

void fs_route_append_paths(const FsRoute *route, GArray *weights, GArray *hops)
{
  for (guint i = 0; i < route->n_paths; i++) {
    guint len;
    const FsChannelId *path = fs_route_path(route, i, &len);
    fs_route_append_path(weights, hops, g_array_index(route->weights, double, i), path, len);
  }
}

gboolean fs_router_flow_paths(FsRouter *r, guint src, guint dst, uint64_t key, GArray *weights,
                              GArray *hops)
{
  /* The router's scratch route, as fs_router_plane_pinned: no transfer is
   * starting its parts from it now (a rotation asks per pair, and a route
   * of its own made and freed three arrays each time). */
  FsRoute *route = &r->scratch;
  gboolean ok = fs_router_route(r, src, dst, key, route, NULL);
  const FsChannelId *bundle =
    ok && r->bundles ? router_bundle_path(r, src, dst, route->kind) : NULL;
  if (bundle != NULL)
    fs_route_append_path(weights, hops, 1.0, bundle, 2);
  else if (ok)
    fs_route_append_paths(route, weights, hops);
  return ok;
}

int64_t router_report_channel(const FsRouter *r, int64_t ch)
{
  if (r->bundle_rep == NULL || ch < (int64_t)r->first_bundle ||
      ch >= (int64_t)r->first_bundle + (int64_t)r->bundle_rep->len)
    return ch;
  return g_array_index(r->bundle_rep, FsChannelId, ch - r->first_bundle);
}

char *router_bundle_name(const FsRouter *r, FsChannelId ch)
{
  if (r->bundle_rep == NULL || ch < r->first_bundle ||
      ch >= r->first_bundle + r->bundle_rep->len)
    return NULL;
  guint i = ch - r->first_bundle;
  FsChannelId rep = g_array_index(r->bundle_rep, FsChannelId, i);
  const char *gpu = fs_topo_node(r->topo, i % 2 == 0 ? fs_topo_channel_src(r->topo, rep)
                                                     : fs_topo_channel_dst(r->topo, rep))->name;
  return i % 2 == 0 ? g_strdup_printf("%s -> NVSwitch planes", gpu)
                    : g_strdup_printf("NVSwitch planes -> %s", gpu);
}
