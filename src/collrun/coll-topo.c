/* coll-topo.c — communicators and NCCL system figures on a topology
 * (the transfers and routes: coll-topo-net.c).  See coll-topo.h. */
#include "collrun/coll-topo.h"

#include "coll/ring-search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static gboolean is_reducing_net_switch(const FsTopoNode *node)
{
  return node->kind == FS_NODE_SWITCH && node->reduction &&
         (node->model->u.sw.kind == FS_SWITCH_INFINIBAND || node->model->u.sw.kind == FS_SWITCH_ETHERNET);
}

/* The reducing IB/Ethernet switch fewest hops from node (breadth-first,
 * not through GPUs; ties by adjacency order), or -1.  seen (all FALSE,
 * and so left) and queue: scratch of the topology's node count, so that
 * a call costs the nodes it visits, not the topology's size. */
static int nearest_reducing_switch(const FsTopo *topo, guint from, gboolean *seen, guint *queue)
{
  guint head = 0, tail = 0;
  int found = -1;
  queue[tail++] = from;
  seen[from] = TRUE;
  while (head < tail && found < 0) {
    guint u = queue[head++];
    const FsTopoNode *node = fs_topo_node(topo, u);
    if (is_reducing_net_switch(node)) {
      found = (int)u;
      break;
    }
    if (u != from && node->kind == FS_NODE_GPU)
      continue;
    guint na;
    const FsTopoAdj *adj = fs_topo_adj(topo, u, &na);
    for (guint k = 0; k < na; k++)
      if (!seen[adj[k].peer]) {
        seen[adj[k].peer] = TRUE;
        queue[tail++] = adj[k].peer;
      }
  }
  for (guint i = 0; i < tail; i++)
    seen[queue[i]] = FALSE;
  return found;
}

/* The reducing network switch above leaves[0..n) (node indices): the one
 * whose largest hop count from them, through switches only, is smallest
 * (then the smallest total), the pick-th (mod ties) in node order among
 * equals so that shards spread over the spines.  -1 when none reaches
 * them all.  O(n × (nodes + links)). */
static int root_switch(const FsTopo *topo, const int *leaves, guint n, guint pick)
{
  guint nn = fs_topo_n_nodes(topo);
  g_autofree guint *worst = g_new0(guint, nn);
  g_autofree guint *total = g_new0(guint, nn);
  g_autofree guint *dist = g_new(guint, nn);
  g_autofree guint *queue = g_new(guint, nn);
  for (guint i = 0; i < n; i++) {
    for (guint v = 0; v < nn; v++)
      dist[v] = G_MAXUINT;
    guint head = 0, tail = 0;
    queue[tail++] = (guint)leaves[i];
    dist[leaves[i]] = 0;
    while (head < tail) {
      guint u = queue[head++];
      guint na;
      const FsTopoAdj *adj = fs_topo_adj(topo, u, &na);
      for (guint k = 0; k < na; k++)
        if (dist[adj[k].peer] == G_MAXUINT && fs_topo_node(topo, adj[k].peer)->kind == FS_NODE_SWITCH) {
          dist[adj[k].peer] = dist[u] + 1;
          queue[tail++] = adj[k].peer;
        }
    }
    for (guint v = 0; v < nn; v++) {
      worst[v] = dist[v] == G_MAXUINT || worst[v] == G_MAXUINT ? G_MAXUINT : MAX(worst[v], dist[v]);
      total[v] = worst[v] == G_MAXUINT ? G_MAXUINT : total[v] + dist[v];
    }
  }
  guint best_w = G_MAXUINT, best_t = G_MAXUINT, ties = 0;
  for (guint v = 0; v < nn; v++) {
    if (worst[v] == G_MAXUINT || !is_reducing_net_switch(fs_topo_node(topo, v)))
      continue;
    if (worst[v] < best_w || (worst[v] == best_w && total[v] < best_t))
      best_w = worst[v], best_t = total[v], ties = 0;
    if (worst[v] == best_w && total[v] == best_t)
      ties++;
  }
  if (ties == 0)
    return -1;
  guint want = pick % ties;
  for (guint v = 0; v < nn; v++)
    if (worst[v] == best_w && total[v] == best_t && is_reducing_net_switch(fs_topo_node(topo, v)) &&
        want-- == 0)
      return (int)v;
  return -1;
}

/* The fewest distinct NICs the ranks of one host reach first: the rails a
 * host's rings, trees and NVLS heads cross hosts on, and NCCL's NVLS and
 * CollNet heads of a node (search.cc ncclTopoSearchRecNet: one head per
 * NIC-local GPU, no GPU twice; CollNet all_gather and reduce_scatter need
 * one per rank). */
static guint host_nics(FsRouter *router, const FsComm *comm)
{
  guint best = G_MAXUINT;
  for (guint h = 0; h < fs_comm_n_hosts(comm); h++) {
    guint m, distinct = 0;
    const guint *ranks = fs_comm_host_ranks(comm, h, &m);
    g_autofree int *nic = g_new(int, m);
    for (guint j = 0; j < m; j++) {
      nic[j] = fs_router_nearest_nic(router, (guint)fs_comm_gpu(comm, ranks[j]));
      gboolean seen = nic[j] < 0;
      for (guint i = 0; i < j && !seen; i++)
        seen = nic[i] == nic[j];
      distinct += !seen;
    }
    best = MIN(best, distinct);
  }
  return best == G_MAXUINT ? 0 : best;
}

/* Sets comm's CollNet switches (and groups) for nh hosts of L ranks;
 * FALSE when some rank has no reducing switch within reach. */
static gboolean collnet_from_topo(FsRouter *router, FsComm *c, guint nh, guint L)
{
  const FsTopo *topo = fs_router_topo(router);
  g_autofree int *leaf = g_new(int, (gsize)nh * L);
  guint nn = fs_topo_n_nodes(topo);
  g_autofree gboolean *seen = g_new0(gboolean, nn);
  g_autofree guint *queue = g_new(guint, nn);
  for (guint h = 0; h < nh; h++) {
    guint m;
    const guint *ranks = fs_comm_host_ranks(c, h, &m);
    for (guint j = 0; j < L; j++) {
      int nic = fs_router_nearest_nic(router, (guint)fs_comm_gpu(c, ranks[j]));
      leaf[h * L + j] = nic < 0 ? -1 : nearest_reducing_switch(topo, (guint)nic, seen, queue);
      if (leaf[h * L + j] < 0)
        return FALSE;
    }
  }
  /* Groups: hosts with the same leaves, numbered by first appearance. */
  g_autofree guint *group = g_new(guint, nh);
  g_autoptr(GArray) first = g_array_new(FALSE, FALSE, sizeof(guint)); /* a host of each group */
  for (guint h = 0; h < nh; h++) {
    guint g = 0;
    while (g < first->len &&
           memcmp(leaf + g_array_index(first, guint, g) * L, leaf + h * L, sizeof(int) * L) != 0)
      g++;
    if (g == first->len)
      g_array_append_val(first, h);
    group[h] = g;
  }
  guint G = first->len;
  g_autofree int *gleaf = g_new(int, (gsize)G * L);
  for (guint g = 0; g < G; g++)
    memcpy(gleaf + g * L, leaf + g_array_index(first, guint, g) * L, sizeof(int) * L);
  g_autofree int *root = g_new(int, L);
  g_autofree int *col = g_new(int, G);
  for (guint j = 0; j < L; j++) {
    if (G == 1) {
      root[j] = gleaf[j];
      continue;
    }
    for (guint g = 0; g < G; g++)
      col[g] = gleaf[g * L + j];
    root[j] = root_switch(topo, col, G, j);
    if (root[j] < 0)
      return FALSE;
  }
  fs_comm_set_collnet_switches(c, root, L);
  fs_comm_set_collnet_groups(c, G, L, group, gleaf);
  return TRUE;
}

static guint gcd(guint a, guint b)
{
  while (b != 0) {
    guint t = a % b;
    a = b, b = t;
  }
  return a;
}

/* The exit of a ring through a host whose GPUs may be visited in any order:
 * path[0..L-1] (local ranks, entering at path[0]) is rearranged so that its
 * last GPU reaches the entry's rail NIC without PXN (fs_router_net_nics:
 * its own PCIe switches), as NCCL's search ends a channel "GPU x -> NET n"
 * on the best path type first (src/graph/search.cc); the other GPUs keep
 * their order.  Unchanged when the last GPU already does, or none does.
 * h0 and h1 are the ranks of two hosts (alike), to ask the router. */
static void pick_exit(FsRouter *router, const FsComm *c, const guint *h0, const guint *h1,
                      guint *path, guint L)
{
  guint dst = (guint)fs_comm_gpu(c, h1[path[0]]);
  for (guint back = 1; back < L; back++) {
    guint i = L - back;
    int sn, rn, proxy;
    if (!fs_router_net_nics(router, (guint)fs_comm_gpu(c, h0[path[i]]), dst, &sn, &rn, &proxy) ||
        proxy != fs_comm_gpu(c, h0[path[i]]))
      continue;
    guint x = path[i];
    memmove(path + i, path + i + 1, (L - 1 - i) * sizeof *path);
    path[L - 1] = x;
    return;
  }
}

/* See coll-topo.h: maps the GPUs to ranks and hosts, searches the rings (fs_coll_ring_search)
 * and records the NVLS switches and CollNet groups; the new communicator belongs to the caller.
 * FS_COLL_ERROR_INVALID for a count out of range, a node that is not a GPU or a GPU given
 * twice. */
FsComm *fs_coll_comm_from_topo(FsRouter *router, const guint *gpus, guint n, guint max_rings,
                               GError **error)
{
  const FsTopo *topo = fs_router_topo(router);
  if (n == 0) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID, "a communicator needs at least 1 GPU");
    return NULL;
  }
  if (n > fs_comm_max_ranks()) {
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_LIMIT,
                "the communicator guard: %u GPUs, at most %u (FABRICSIM_MAX_RANKS=N raises the "
                "limit)", n, fs_comm_max_ranks());
    return NULL;
  }
  guint nn = fs_topo_n_nodes(topo);
  g_autofree gboolean *seen = g_new0(gboolean, nn);
  g_autoptr(FsComm) c = fs_comm_new(n);
  guint nhosts = fs_topo_n_hosts(topo);
  for (guint r = 0; r < n; r++) {
    if (gpus[r] >= nn || fs_topo_node(topo, gpus[r])->kind != FS_NODE_GPU) {
      g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID, "rank %u: node %u is not a GPU", r, gpus[r]);
      return NULL;
    }
    if (seen[gpus[r]]) {
      g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID, "GPU %s is listed twice",
                  fs_topo_node(topo, gpus[r])->name);
      return NULL;
    }
    seen[gpus[r]] = TRUE;
    const FsTopoNode *node = fs_topo_node(topo, gpus[r]);
    /* A fabric GPU (no host) is a host of its own. */
    fs_comm_set_host(c, r, node->host >= 0 ? (guint)node->host : nhosts + gpus[r]);
    fs_comm_set_gpu(c, r, (int)gpus[r]);
  }
  /* Whole hosts: every host's GPUs are all ranks (fs_comm_whole_hosts). */
  guint nh = fs_comm_n_hosts(c);
  gboolean whole = TRUE;
  for (guint h = 0; h < nh && whole; h++) {
    guint m, nt, g = 0;
    const guint *ranks = fs_comm_host_ranks(c, h, &m);
    int host = fs_topo_node(topo, (guint)fs_comm_gpu(c, ranks[0]))->host;
    if (host < 0)
      continue; /* a fabric GPU is a host of its own */
    const guint *nodes = fs_topo_host_nodes(topo, (guint)host, &nt);
    for (guint i = 0; i < nt; i++)
      g += fs_topo_node(topo, nodes[i])->kind == FS_NODE_GPU;
    whole = g == m;
  }
  fs_comm_set_whole_hosts(c, whole);
  /* NVLS: reducing NVSwitches adjacent to each host's GPUs, in node order. */
  for (guint h = 0; h < nh; h++) {
    guint m;
    const guint *ranks = fs_comm_host_ranks(c, h, &m);
    g_autoptr(GArray) sw = g_array_new(FALSE, FALSE, sizeof(int));
    memset(seen, 0, sizeof(gboolean) * nn);
    for (guint i = 0; i < m; i++) {
      guint na;
      const FsTopoAdj *adj = fs_topo_adj(topo, (guint)fs_comm_gpu(c, ranks[i]), &na);
      for (guint k = 0; k < na; k++) {
        const FsTopoNode *peer = fs_topo_node(topo, adj[k].peer);
        if (peer->kind == FS_NODE_SWITCH && peer->model->u.sw.kind == FS_SWITCH_NVSWITCH &&
            peer->reduction && !seen[adj[k].peer]) {
          seen[adj[k].peer] = TRUE;
          int id = (int)adj[k].peer;
          g_array_append_val(sw, id);
        }
      }
    }
    /* Node order, whatever the adjacency order was. */
    if (sw->len > 0) {
      int *v = (int *)sw->data;
      for (guint i = 1; i < sw->len; i++)
        for (guint j = i; j > 0 && v[j - 1] > v[j]; j--) {
          int t = v[j];
          v[j] = v[j - 1], v[j - 1] = t;
        }
      fs_comm_set_nvls_switch(c, h, v, sw->len);
    }
  }
  /* Rings: an NCCL-like search over the first host's GPUs (coll/ring-search.h)
   * gives R Hamiltonian cycles that together use every link; every host
   * (hosts are alike: same template) uses the same cycles by local rank.
   * One host: ring r is cycle r.  Several hosts of equal size L: ring r
   * follows cycle r mod R through every host, entering each host at local
   * rank r mod L and leaving it from that rank's predecessor on the cycle
   * (behind NVSwitches: from a GPU that reaches the entry's NIC without
   * PXN, pick_exit), so the rings' host-to-host hops spread over every
   * GPU's NIC (NCCL's rings do the same on multi-rail systems); there are lcm(R, L) rings
   * (max(R, L) when that exceeds max_rings).  Without a cycle (no search,
   * or none found) the cycle is local rank order. */
  guint L0;
  const guint *h0 = fs_comm_host_ranks(c, 0, &L0);
  FsRingSet rs;
  {
    g_autofree guint *h0gpus = g_new(guint, L0);
    for (guint i = 0; i < L0; i++)
      h0gpus[i] = (guint)fs_comm_gpu(c, h0[i]);
    if (!fs_coll_ring_search(router, h0gpus, L0, MAX(max_rings, 1), &rs, error))
      return NULL;
  }
  gboolean uniform = fs_comm_hosts_uniform(c);
  guint R = rs.n_rings;
  g_autofree guint *identity = g_new(guint, L0);
  for (guint i = 0; i < L0; i++)
    identity[i] = i;
  if (nh == 1 && R > 0) {
    g_autofree guint *order = g_new(guint, n);
    for (guint r = 0; r < R; r++) {
      for (guint i = 0; i < n; i++)
        order[i] = h0[rs.order[r * L0 + i]];
      if (!fs_comm_set_ring(c, r, order, error)) {
        fs_ring_set_clear(&rs);
        return NULL;
      }
    }
  } else if (nh > 1 && uniform) {
    guint cycles = MAX(R, 1), nrings = cycles / gcd(cycles, L0) * L0;
    if (nrings > MAX(max_rings, 1))
      nrings = MAX(cycles, L0);
    g_autofree guint *order = g_new(guint, n);
    g_autofree guint *path = g_new(guint, L0);
    guint L1;
    const guint *h1 = fs_comm_host_ranks(c, 1, &L1);
    /* Behind NVSwitches (one cycle at the whole route's rate) any order is
     * a ring, so the exit may be chosen. */
    gboolean free_order = R == 1 && rs.kind == FS_ROUTE_NVLINK && L0 > 2;
    for (guint r = 0; r < nrings; r++) {
      const guint *cyc = R > 0 ? rs.order + (r % R) * L0 : identity;
      guint entry = r % L0, start = 0;
      while (cyc[start] != entry)
        start++;
      for (guint i = 0; i < L0; i++)
        path[i] = cyc[(start + i) % L0];
      if (free_order)
        pick_exit(router, c, h0, h1, path, L0);
      guint k = 0;
      for (guint h = 0; h < nh; h++) {
        guint m;
        const guint *hr = fs_comm_host_ranks(c, h, &m);
        for (guint i = 0; i < m; i++)
          order[k++] = hr[path[i]];
      }
      if (!fs_comm_set_ring(c, r, order, error)) {
        fs_ring_set_clear(&rs);
        return NULL;
      }
    }
  }
  if (R > 0 && (nh == 1 || uniform))
    fs_comm_set_ring_graph(c, rs.speed * R, R);
  fs_ring_set_clear(&rs);
  /* CollNet (SHARP): shard j of host h reduces in the reducing network
   * switch nearest to the NIC of the host's local rank j (its rail's leaf
   * on a rail-optimized fabric).  Hosts whose leaves are the same form a
   * group; with one group that leaf is the shard's switch, with several
   * the groups' leaves reduce into a root switch one level up (SHARP's
   * aggregation tree), so no leaf uplink carries one stream per host. */
  if (nh > 1 && uniform && !collnet_from_topo(router, c, nh, L0))
    fs_comm_set_collnet_switches(c, NULL, 0);
  return g_steal_pointer(&c);
}

/* See coll-topo.h: "all" (or NULL), a count of the first GPUs, or a comma-separated list of GPU
 * names or node indices; the caller frees the array. */
guint *fs_coll_parse_gpus(const FsTopo *topo, const char *text, guint *n, GError **error)
{
  guint ngpu;
  const guint *all = fs_topo_gpus(topo, &ngpu);
  if (ngpu == 0) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID, "the topology has no GPU");
    return NULL;
  }
  if (text == NULL || strcmp(text, "all") == 0) {
    *n = ngpu;
    return g_memdup2(all, sizeof(guint) * ngpu);
  }
  char *end;
  unsigned long count = strtoul(text, &end, 10);
  if (*text != '\0' && *end == '\0' && g_ascii_isdigit(text[0])) {
    if (count == 0 || count > ngpu) {
      g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID,
                  "asked for %lu GPUs; the topology has %u", count, ngpu);
      return NULL;
    }
    *n = (guint)count;
    return g_memdup2(all, sizeof(guint) * count);
  }
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; parts[i]; i++) {
    char *name = g_strstrip(parts[i]);
    int idx = fs_topo_find(topo, name);
    if (idx < 0 && name[0] != '\0' && g_ascii_isdigit(name[0])) {
      unsigned long v = strtoul(name, &end, 10);
      if (*end == '\0' && v < fs_topo_n_nodes(topo))
        idx = (int)v;
    }
    if (idx < 0 || fs_topo_node(topo, (guint)idx)->kind != FS_NODE_GPU) {
      g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID,
                  "\"%s\" in the GPU list is not a GPU of the topology (GPU names look like \"%s\")",
                  name, fs_topo_node(topo, all[0])->name);
      return NULL;
    }
    guint u = (guint)idx;
    g_array_append_val(out, u);
  }
  if (out->len == 0) { /* "": g_strsplit gives no parts */
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID,
                "the GPU list is empty (a count, GPU names like \"%s\", or \"all\")",
                fs_topo_node(topo, all[0])->name);
    return NULL;
  }
  *n = out->len;
  return (guint *)g_array_free(g_steal_pointer(&out), FALSE);
}

/* The rate of a network route whose paths share channels (PXN's NVLink
 * paths and adaptive routing's fabric paths all cross the same NICs): the
 * largest R with R × (the shares of the paths through c) ≤ c's capacity on
 * every channel c. */
static double shared_capacity(const FsFlowNet *net, const FsRoute *r)
{
  g_autoptr(GHashTable) load = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  double best = INFINITY;
  for (guint i = 0; i < r->n_paths; i++) {
    guint len;
    const FsChannelId *p = fs_route_path(r, i, &len);
    for (guint k = 0; k < len; k++) {
      double *w = g_hash_table_lookup(load, GUINT_TO_POINTER(p[k] + 1));
      if (w == NULL) {
        w = g_new0(double, 1);
        g_hash_table_insert(load, GUINT_TO_POINTER(p[k] + 1), w);
      }
      *w += g_array_index(r->weights, double, i);
    }
  }
  for (guint i = 0; i < r->n_paths; i++) {
    guint len;
    const FsChannelId *p = fs_route_path(r, i, &len);
    for (guint k = 0; k < len; k++) {
      const double *w = g_hash_table_lookup(load, GUINT_TO_POINTER(p[k] + 1));
      best = MIN(best, fs_flownet_channel_capacity(net, p[k]) / *w);
    }
  }
  return best;
}

/* Total capacity of a route (bytes/s): the sum over its paths of each
 * path's bottleneck (NVLink planes are disjoint), or for a network route of
 * several paths their shared capacity. */
static gboolean route_capacity(FsRouter *router, guint a, guint b, double *bw, double *lat_us,
                               FsRouteKind *kind, GError **error)
{
  FsRoute r;
  fs_route_init(&r);
  gboolean ok = fs_router_route(router, a, b, 0, &r, error);
  if (ok) {
    double sum = 0;
    FsTime lat = 0;
    for (guint i = 0; i < r.n_paths; i++) {
      guint len;
      const FsChannelId *p = fs_route_path(&r, i, &len);
      sum += fs_flownet_path_capacity(fs_router_net(router), p, len);
      lat = MAX(lat, fs_flownet_path_latency(fs_router_net(router), p, len));
    }
    if (r.n_paths > 1 && (r.kind == FS_ROUTE_NET_GDR || r.kind == FS_ROUTE_NET_STAGED))
      sum = shared_capacity(fs_router_net(router), &r);
    *bw = sum;
    *lat_us = fs_time_to_us(lat);
    *kind = r.kind;
  }
  fs_route_clear(&r);
  return ok;
}

/* NCCL's channels for the peers on the host of the communicator's first rank
 * (coll/p2p-sched.h): 2 × the NVLinks of an NVLink route (its capacity over one NVLink of
 * the GPU's model), 2 (pci_peer_channels) for any other; the least goes to
 * sys->p2p_local_channels (0: no peer on the host). One route per peer on that host. */
static gboolean p2p_peers(const FsNcclParams *p, FsRouter *router, const FsComm *comm,
                          const FsTopoNode *g0, FsCollSysInfo *sys, GError **error)
{
  guint m;
  const guint *ranks = fs_comm_host_ranks(comm, fs_comm_host_index(comm, 0), &m);
  const FsModel *nvl = g0->model->u.gpu.nvlink;
  double link_bw = nvl != NULL ? nvl->u.link.bandwidth : 0;
  guint least = 0;
  for (guint i = 0; i < m; i++) {
    if (ranks[i] == 0)
      continue;
    double bw, lat;
    FsRouteKind kind;
    if (!route_capacity(router, (guint)fs_comm_gpu(comm, 0), (guint)fs_comm_gpu(comm, ranks[i]), &bw,
                        &lat, &kind, error))
      return FALSE;
    guint c = p->p2p.pci_channels;
    if (kind == FS_ROUTE_NVLINK && link_bw > 0)
      c = p->p2p.nvl_channels_per_link * MAX(1u, (guint)MIN(bw / link_bw, 64.0));
    least = least == 0 ? c : MIN(least, c);
  }
  sys->p2p_local_channels = p->p2p.on ? least : 0;
  return TRUE;
}

/* NCCL's CPU vendor of the communicator (comm->cpuVendor: llMaxBws rows, getNetOverhead in
 * src/graph/tuning.cc): the catalog vendor of the first CPU on the host of `gpu`; Intel when
 * the host has none (a GPU-only test topology). */
static FsNcclCpu nccl_cpu(const FsTopo *topo, const FsTopoNode *gpu)
{
  if (gpu->host < 0)
    return FS_NCCL_CPU_INTEL;
  guint n;
  const guint *nodes = fs_topo_host_nodes(topo, (guint)gpu->host, &n);
  for (guint i = 0; i < n; i++) {
    const FsTopoNode *c = fs_topo_node(topo, nodes[i]);
    if (c->kind != FS_NODE_CPU || c->model == NULL)
      continue;
    switch (c->model->u.cpu.vendor) {
    case FS_VENDOR_INTEL:
      return FS_NCCL_CPU_INTEL;
    case FS_VENDOR_AMD:
      return FS_NCCL_CPU_AMD;
    default:
      return FS_NCCL_CPU_OTHER;
    }
  }
  return FS_NCCL_CPU_INTEL;
}

/* See coll-topo.h: fills out (zeroed first) with the NCCL tuning row of the first GPU's
 * architecture (FS_COLL_ERROR_INVALID when nccl-params has none), the channel count, the
 * per-channel bandwidths and latencies measured on the routes, and which of NVLS, CollNet and
 * LL128 the fabric offers; also fails when a route the measure needs does not exist. */
gboolean fs_coll_sysinfo_from_topo(const FsNcclParams *p, FsRouter *router, const FsComm *comm,
                                   FsCollSysInfo *out, GError **error)
{
  const FsTopo *topo = fs_router_topo(router);
  memset(out, 0, sizeof *out);
  const FsTopoNode *g0 = fs_topo_node(topo, (guint)fs_comm_gpu(comm, 0));
  const char *arch = fs_gpu_arch_name(g0->model->u.gpu.arch);
  FsNcclRow row = FS_NCCL_ROW_HOPPER;
  if (!fs_nccl_params_arch_row(p, arch, &row)) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID,
                "%s: no arch_rows entry for GPU architecture \"%s\"", p->file, arch);
    return FALSE;
  }
  out->arch = row;
  out->cpu = nccl_cpu(topo, g0);
  /* Channels: a multiple of the rings, so that every ring carries as
   * many channels (NCCL duplicates its rings up to MAXCHANNELS). */
  guint nrings = fs_comm_n_rings(comm);
  out->max_channels = p->max_channels;
  if (nrings > 0 && nrings <= p->max_channels)
    out->max_channels = nrings * (p->max_channels / nrings);
  /* Across hosts NCCL's ring graph holds one channel per NIC it leaves by (each reserves
   * a NIC's bandwidth at the search's first inter-node speed; at most MAXCHANNELS/2 of
   * them, src/init.cc ringGraph->maxChannels), doubled when there are at most 4
   * (src/graph/search.cc ncclTopoDupChannels keeps more than 4 on sm80+), and connecting
   * the rings doubles them again (src/graph/connect.cc "Duplication"): 16 channels on 8
   * NICs, 4 for one GPU and its NIC.  fabricsim's rings enter every host at each local
   * rank in turn, one NIC per local rank.  Hosts of one NVLink domain (a GB200 NVL72
   * rack's trays) are one node to NCCL (MNNVL), whose rings stay on NVLink. */
  out->p2p_max_channels = out->max_channels;
  guint ppn = fs_comm_ppn(comm);
  if (fs_comm_n_nvlink_domains(comm) > 1 && ppn > 0) {
    guint graph = MIN(ppn, MAX(p->max_channels / 2, 1u));
    if (graph <= 4)
      graph *= 2;
    out->max_channels = MIN(out->max_channels, 2 * graph);
    out->graph_channels = MIN(graph, out->max_channels);
  }
  out->intra_hw = FS_NCCL_HW_PCI;
  /* Inside a host: rank 0 to the next rank of its host on ring 0. */
  const guint *ring = fs_comm_ring(comm, 0);
  guint n = fs_comm_size(comm), h0 = fs_comm_host_index(comm, ring[0]);
  double intra = 0, inter = 0;
  FsRouteKind kind;
  if (n > 1 && fs_comm_host_index(comm, ring[1]) == h0) {
    if (!route_capacity(router, (guint)fs_comm_gpu(comm, ring[0]), (guint)fs_comm_gpu(comm, ring[1]),
                        &intra, &out->path_lat_intra, &kind, error))
      return FALSE;
    if (kind == FS_ROUTE_NVLINK)
      out->intra_hw = FS_NCCL_HW_NVLINK;
    /* What the searched rings carry together, when a search ran. */
    if (fs_comm_ring_bw(comm) > 0)
      intra = fs_comm_ring_bw(comm);
  }
  /* Across hosts: the first rank of host 0 to the first rank of host 1. */
  if (fs_comm_n_hosts(comm) > 1) {
    guint m0, m1;
    const guint *r0 = fs_comm_host_ranks(comm, 0, &m0);
    const guint *r1 = fs_comm_host_ranks(comm, 1, &m1);
    if (!route_capacity(router, (guint)fs_comm_gpu(comm, r0[0]), (guint)fs_comm_gpu(comm, r1[0]),
                        &inter, &out->path_lat_inter, &kind, error))
      return FALSE;
    if (intra == 0)
      intra = inter, out->path_lat_intra = out->path_lat_inter;
  } else {
    inter = intra;
    out->path_lat_inter = out->path_lat_intra;
  }
  if (fs_comm_n_hosts(comm) > 1) {
    /* One GPU's network: the route between two hosts' first GPUs (its NIC).
     * NCCL counts the NICs that match the GPU's bandwidth; fabricsim takes one. */
    out->net_bw_gbps = inter / 1e9;
    out->net_count = 1;
    /* The rings cross hosts on every NIC of the host, each channel on one (search.cc
     * ncclTopoSearchRecNet reserves the channel's speed on its NIC, and the ring graph's
     * bwInter is its bwIntra): what they carry across hosts is the NICs' sum, at most
     * what they carry inside the host. */
    out->net_nics = host_nics(router, comm);
    inter = MIN(intra, MAX(out->net_nics, 1u) * inter);
    /* The network plugin's proxy work per message, from the first GPU's nearest NIC
     * (FsNicModel; 0 for NICs that do not model it). */
    int nic = fs_router_nearest_nic(router, (guint)fs_comm_gpu(comm, 0));
    const FsTopoNode *nn = nic >= 0 ? fs_topo_node(topo, (guint)nic) : NULL;
    if (nn != NULL && nn->model != NULL && nn->model->kind == FS_MODEL_NIC) {
      const FsNicModel *m = &nn->model->u.nic;
      out->net_msg_us = fs_time_to_s(m->message_cost) * 1e6;
      out->net_stripe_us = fs_time_to_s(m->stripe_cost) * 1e6;
      out->net_min_stripe = m->min_stripe;
      out->net_devices = MAX(m->devices, 1u);
    }
  }
  out->bw_intra = intra / 1e9 / out->max_channels;
  out->bw_inter = inter / 1e9 / out->max_channels;
  if (!p2p_peers(p, router, comm, g0, out, error))
    return FALSE;
  /* NCCL's NVLS channels by architecture; on Blackwell by whether the communicator leaves its
   * NVLink domain (src/transport/nvls.cc: multiNode, hosts or MNNVL cliques). */
  out->nvls_channels = fs_comm_nvls_available(comm)
                         ? fs_nccl_params_nvls_channels(p, row, fs_comm_n_nvlink_domains(comm) > 1) : 0;
  /* NCCL's NVLS graph: every GPU of the node a head on one node (src/graph/search.cc "Force
   * intra-node NVLS algorithm to pull evenly from all GPUs"; one NVLink domain of several
   * hosts, a GB200 NVL72 rack's trays, is one node to NCCL), one head per NIC across nodes;
   * at most NCCL_MAX_NVLS_ARITY. */
  if (out->nvls_channels > 0)
    out->nvls_heads = MIN(fs_comm_n_nvlink_domains(comm) > 1 ? MAX(out->net_nics, 1u)
                          : fs_comm_n_hosts(comm) > 1 ? fs_comm_size(comm) : ppn,
                          MAX(p->nvls_arity, 1u));
  /* NCCL_MIN/MAX_CTAS and NCCL_MIN/MAX_NCHANNELS (coll/nccl-params.h); the per-channel
   * bandwidths above stay the totals over the new counts. */
  guint nch = out->max_channels, none = 0;
  fs_nccl_params_channels(p, &nch, &out->nvls_channels);
  fs_nccl_params_channels(p, &out->p2p_max_channels, &none);
  if (nch != out->max_channels) {
    out->bw_intra = out->bw_intra * out->max_channels / nch;
    out->bw_inter = out->bw_inter * out->max_channels / nch;
    out->max_channels = nch;
  }
  out->collnet = fs_comm_collnet_switch(comm, 0) >= 0;
  /* CollNetDirect's graph: one head per NIC, at most NCCL_MAX_DIRECT_ARITY + 1 (2.22+). */
  out->collnet_heads = out->collnet ? host_nics(router, comm) : 0;
  if (p->direct_heads > 0)
    out->collnet_heads = MIN(out->collnet_heads, p->direct_heads);
  out->ll128 = out->intra_hw == FS_NCCL_HW_NVLINK;
  const FsGpuModel *gm = &g0->model->u.gpu;
  if (gm->sms > 0)
    out->local_copy_bw = p->ring_copy_sm_share * gm->memory_bandwidth * gm->memory_efficiency / gm->sms;
  return TRUE;
}

/* See coll-topo.h: a two-rank communicator across hosts, its one network peer. */
double fs_coll_p2p_send_cap(const FsNcclParams *p, FsRouter *router, int src, int dst,
                            uint64_t bytes)
{
  const FsTopo *topo = fs_router_topo(router);
  if (!p->p2p.on || src < 0 || dst < 0 || src == dst)
    return 0;
  int hs = fs_topo_node(topo, (guint)src)->host, hd = fs_topo_node(topo, (guint)dst)->host;
  if (hs >= 0 && hs == hd)
    return 0;
  double bw, lat;
  FsRouteKind kind;
  GError *err = NULL;
  if (!route_capacity(router, (guint)src, (guint)dst, &bw, &lat, &kind, &err)) {
    g_error_free(err); /* the transfer itself reports it */
    return 0;
  }
  FsP2pShape s = {.nranks = 2, .nhosts = 2, .max_channels = p->max_channels,
                  .net_bw_gbps = bw / 1e9, .net_count = 1};
  guint nch = fs_p2p_op_channels(p, &s, bytes <= p->p2p_ll_threshold ? FS_PROTO_LL : FS_PROTO_SIMPLE,
                                 FALSE, bytes);
  return nch * fs_p2p_channel_rate_gbps(p) * 1e9;
}
