/* coll-describe.c — the text `explain coll` prints of a communicator's
 * channels: each ring's order and, across hosts, the NICs and fabric path of
 * every host-to-host hop.  See coll-topo.h (fs_coll_describe_rings). */
#include "collrun/coll-topo.h"

#include <string.h>

/* The host-to-host hops of ring `ring` (borrowed order): each rank whose
 * successor is on another host, with that successor, into pairs (a, b). */
static guint ring_hops(const FsComm *comm, const guint *order, guint *pairs)
{
  guint n = fs_comm_size(comm), k = 0;
  for (guint i = 0; i < n; i++) {
    guint a = order[i], b = order[(i + 1) % n];
    if (fs_comm_host_index(comm, a) != fs_comm_host_index(comm, b)) {
      pairs[2 * k] = a;
      pairs[2 * k + 1] = b;
      k++;
    }
  }
  return k;
}

/* Appends "nicA -> nicB (PXN via gpuX)" for the network hop from GPU a to
 * GPU b, and whether it changes rails. */
static void describe_hop(GString *s, FsRouter *router, guint a, guint b)
{
  const FsTopo *topo = fs_router_topo(router);
  int sn, rn, proxy;
  if (!fs_router_net_nics(router, a, b, &sn, &rn, &proxy))
    return;
  const FsTopoNode *sa = fs_topo_node(topo, (guint)sn), *rb = fs_topo_node(topo, (guint)rn);
  g_string_append_printf(s, " -> %s", sa->name);
  if (proxy >= 0 && (guint)proxy != a)
    g_string_append_printf(s, " (PXN: NVLink to %s)", fs_topo_node(topo, (guint)proxy)->name);
  else if (proxy < 0)
    g_string_append(s, " (over PCIe)");
  g_string_append_printf(s, " -> %s -> %s%s", rb->name, fs_topo_node(topo, b)->name,
                         sa->local == rb->local ? "" : " [crosses rails]");
}

/* Appends the fabric's load from the rings' host-to-host hops: every hop of
 * every distinct ring routed once, the weight each fabric channel carries
 * summed per link of its bundle; the most loaded channel and how many hops
 * cross rails. */
static void describe_fabric(GString *s, FsRouter *router, const FsComm *comm)
{
  const FsTopo *topo = fs_router_topo(router);
  guint nr = MAX(fs_comm_n_rings(comm), 1), n = fs_comm_size(comm);
  g_autofree guint *pairs = g_new(guint, 2 * (gsize)n);
  g_autoptr(GHashTable) load = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  guint hops = 0, cross = 0;
  FsRoute route;
  fs_route_init(&route);
  for (guint r = 0; r < nr; r++) {
    guint k = ring_hops(comm, fs_comm_ring(comm, r), pairs);
    for (guint i = 0; i < k; i++) {
      guint a = (guint)fs_comm_gpu(comm, pairs[2 * i]), b = (guint)fs_comm_gpu(comm, pairs[2 * i + 1]);
      int sn, rn, proxy;
      if (!fs_router_net_nics(router, a, b, &sn, &rn, &proxy) ||
          !fs_router_route(router, a, b, ((guint64)r << 32) | i, &route, NULL))
        continue;
      hops++;
      cross += fs_topo_node(topo, (guint)sn)->local != fs_topo_node(topo, (guint)rn)->local;
      for (guint p = 0; p < route.n_paths; p++) {
        guint len;
        const FsChannelId *path = fs_route_path(&route, p, &len);
        for (guint h = 0; h < len; h++) {
          guint from = fs_topo_channel_src(topo, path[h]), to = fs_topo_channel_dst(topo, path[h]);
          if (fs_topo_node(topo, from)->host >= 0 || fs_topo_node(topo, to)->host >= 0)
            continue; /* a NIC's own link: not the switches' choice */
          double *w = g_hash_table_lookup(load, GUINT_TO_POINTER(path[h] + 1));
          if (w == NULL) {
            w = g_new0(double, 1);
            g_hash_table_insert(load, GUINT_TO_POINTER(path[h] + 1), w);
          }
          /* Per link of a bundle: a hop takes one link's worth. */
          *w += g_array_index(route.weights, double, p) / fs_topo_link(topo, path[h] / 2)->count;
        }
      }
    }
  }
  fs_route_clear(&route);
  if (hops == 0)
    return;
  /* The most loaded switch-to-switch channel (lowest channel id on ties). */
  double best = 0;
  guint best_ch = 0, used = 0;
  for (guint ch = 0; ch < fs_topo_n_channels(topo); ch++) {
    const double *w = g_hash_table_lookup(load, GUINT_TO_POINTER(ch + 1));
    if (w == NULL)
      continue;
    used++;
    if (*w > best + 1e-9)
      best = *w, best_ch = ch;
  }
  g_string_append_printf(s, "fabric (%s routing): %u host-to-host hop%s of %u ring%s, %u crossing rails",
                         fs_topo_routing_name(fs_topo_routing(topo)), hops, hops == 1 ? "" : "s",
                         nr, nr == 1 ? "" : "s", cross);
  if (used == 0) {
    g_string_append(s, "; none goes above a leaf switch\n");
    return;
  }
  g_autofree char *name = fs_router_channel_name(router, best_ch);
  g_string_append_printf(s, "; %u switch-to-switch links used, the busiest (%s) carries %.2f hop%s "
                         "per link at once (%s)\n", used, name, best, best > 1 + 1e-9 ? "s" : "",
                         best > 1 + 1e-9 ? "they share its bandwidth" : "no collision");
}

/* Appends the NICs of nvls_tree's trees across hosts (algo-nvls.c): shard j of every chunk
 * crosses between the hosts' local rank j, each on its own NIC, as NCCL's NVLS heads each
 * run their tree on their NIC (search.cc, one head per NIC-local GPU); how many distinct
 * NICs (rails) that is and how many of the hops change rails. */
static void describe_nvls_tree(GString *s, FsRouter *router, const FsComm *comm)
{
  const FsTopo *topo = fs_router_topo(router);
  guint L, L1;
  const guint *h0 = fs_comm_host_ranks(comm, 0, &L);
  const guint *h1 = fs_comm_host_ranks(comm, 1, &L1);
  g_autofree int *nics = g_new(int, L);
  guint distinct = 0, cross = 0;
  for (guint j = 0; j < L && j < L1; j++) {
    int sn, rn, proxy;
    nics[j] = -1;
    if (!fs_router_net_nics(router, (guint)fs_comm_gpu(comm, h0[j]), (guint)fs_comm_gpu(comm, h1[j]), &sn,
                            &rn, &proxy))
      continue;
    nics[j] = sn;
    gboolean seen = FALSE;
    for (guint i = 0; i < j && !seen; i++)
      seen = nics[i] == sn;
    distinct += !seen;
    cross += fs_topo_node(topo, (guint)sn)->local != fs_topo_node(topo, (guint)rn)->local;
  }
  g_string_append_printf(s, "nvls_tree: shard j of every chunk crosses hosts between local rank j of each "
                         "host: %u shard%s on %u NIC%s per host, %u crossing rails (shard 0: %s",
                         L, L == 1 ? "" : "s", distinct, distinct == 1 ? "" : "s", cross,
                         fs_topo_node(topo, (guint)fs_comm_gpu(comm, h0[0]))->name);
  describe_hop(s, router, (guint)fs_comm_gpu(comm, h0[0]), (guint)fs_comm_gpu(comm, h1[0]));
  if (L > 1) {
    g_string_append_printf(s, "; shard %u: %s", L - 1, fs_topo_node(topo, (guint)fs_comm_gpu(comm, h0[L - 1]))->name);
    describe_hop(s, router, (guint)fs_comm_gpu(comm, h0[L - 1]), (guint)fs_comm_gpu(comm, h1[L - 1]));
  }
  g_string_append(s, ")\n");
}

/* See coll-topo.h: the rings' summary, each ring's order through the first host and its
 * host-to-host hop with the NICs it uses, the trees' NICs, and the fabric's load. */
char *fs_coll_describe_rings(FsRouter *router, const FsComm *comm)
{
  const FsTopo *topo = fs_router_topo(router);
  GString *s = g_string_new(NULL);
  guint nr = fs_comm_n_rings(comm), hr = fs_comm_host_rings(comm);
  guint L;
  const guint *h0 = fs_comm_host_ranks(comm, 0, &L);
  gboolean multi = fs_comm_n_hosts(comm) > 1;
  if (hr > 0)
    g_string_append_printf(s, "rings: %u per host from the search, %.2f GB/s each, %.2f GB/s per GPU in all; %u ring%s over %u host%s\n",
                           hr, fs_comm_ring_bw(comm) / hr / 1e9, fs_comm_ring_bw(comm) / 1e9, MAX(nr, 1),
                           MAX(nr, 1) == 1 ? "" : "s", fs_comm_n_hosts(comm), fs_comm_n_hosts(comm) == 1 ? "" : "s");
  else
    g_string_append_printf(s, "rings: %u (no search: GPU order within a host)\n", MAX(nr, 1));
  g_autofree guint *pairs = g_new(guint, 2 * (gsize)fs_comm_size(comm));
  for (guint r = 0; r < MAX(nr, 1) && r < 8; r++) {
    const guint *order = fs_comm_ring(comm, r);
    g_string_append_printf(s, "  ring %u:", r);
    for (guint i = 0, k = 0; i < fs_comm_size(comm) && k < L; i++)
      if (fs_comm_host_index(comm, order[i]) == fs_comm_host_index(comm, h0[0])) {
        g_string_append_printf(s, " %s", fs_topo_node(topo, (guint)fs_comm_gpu(comm, order[i]))->name);
        k++;
      }
    /* The hop that leaves the first host, with its NICs. */
    guint k = multi ? ring_hops(comm, order, pairs) : 0;
    for (guint i = 0; i < k; i++)
      if (fs_comm_host_index(comm, pairs[2 * i]) == 0) {
        describe_hop(s, router, (guint)fs_comm_gpu(comm, pairs[2 * i]),
                     (guint)fs_comm_gpu(comm, pairs[2 * i + 1]));
        break;
      }
    g_string_append_c(s, '\n');
  }
  if (nr > 8)
    g_string_append_printf(s, "  … %u more\n", nr - 8);
  if (multi) {
    /* Trees (algo-tree.c): a channel's host heads are its ring's first rank
     * on each host, joined host to host, so the same local GPU and NIC. */
    const guint *order = fs_comm_ring(comm, 0);
    guint head = order[0];
    int sn, rn, proxy;
    guint other = h0[0];
    for (guint i = 0; i < fs_comm_size(comm); i++)
      if (fs_comm_host_index(comm, order[i]) != fs_comm_host_index(comm, head)) {
        other = order[i];
        break;
      }
    if (fs_router_net_nics(router, (guint)fs_comm_gpu(comm, head), (guint)fs_comm_gpu(comm, other),
                           &sn, &rn, &proxy))
      g_string_append_printf(s, "trees: channel c joins hosts at ring c's first GPU of each host "
                             "(channel 0: %s -> %s -> %s -> %s)\n",
                             fs_topo_node(topo, (guint)fs_comm_gpu(comm, head))->name,
                             fs_topo_node(topo, (guint)sn)->name, fs_topo_node(topo, (guint)rn)->name,
                             fs_topo_node(topo, (guint)fs_comm_gpu(comm, other))->name);
    if (fs_comm_nvls_available(comm) && fs_comm_hosts_uniform(comm))
      describe_nvls_tree(s, router, comm);
    describe_fabric(s, router, comm);
  }
  return g_string_free(s, FALSE);
}
