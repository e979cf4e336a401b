/* coll-topo.c — communicators, NCCL system figures and transfers on a
 * topology.  See coll-topo.h. */
#include "coll/coll-topo.h"

#include <stdlib.h>
#include <string.h>

/* The reducing IB/Ethernet switch fewest hops from node (breadth-first,
 * not through GPUs; ties by adjacency order), or -1. */
static int nearest_reducing_switch(const FsTopo *topo, guint from)
{
  guint nn = fs_topo_n_nodes(topo);
  g_autofree gboolean *seen = g_new0(gboolean, nn);
  g_autofree guint *queue = g_new(guint, nn);
  guint head = 0, tail = 0;
  queue[tail++] = from;
  seen[from] = TRUE;
  while (head < tail) {
    guint u = queue[head++];
    const FsTopoNode *node = fs_topo_node(topo, u);
    if (node->kind == FS_NODE_SWITCH && node->model->u.sw.reduction &&
        (node->model->u.sw.kind == FS_SWITCH_INFINIBAND || node->model->u.sw.kind == FS_SWITCH_ETHERNET))
      return (int)u;
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
  return -1;
}

FsComm *fs_coll_comm_from_topo(FsRouter *router, const guint *gpus, guint n, GError **error)
{
  const FsTopo *topo = fs_router_topo(router);
  if (n == 0 || n > FS_COMM_MAX_RANKS) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID,
                "a communicator needs 1 to %u GPUs, got %u", FS_COMM_MAX_RANKS, n);
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
  /* NVLS: reducing NVSwitches adjacent to each host's GPUs, in node order. */
  guint nh = fs_comm_n_hosts(c);
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
            peer->model->u.sw.reduction && !seen[adj[k].peer]) {
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
  /* Rings across hosts: ring r enters every host at local rank r and
   * leaves it from local rank r-1, so channels spread their host-to-host
   * hops over every GPU's NIC (NCCL's rings do the same on multi-rail
   * systems).  Channel c uses ring c mod ppn. */
  guint L0;
  fs_comm_host_ranks(c, 0, &L0);
  gboolean uniform = TRUE;
  for (guint h = 1; h < nh; h++) {
    guint m;
    fs_comm_host_ranks(c, h, &m);
    uniform = uniform && m == L0;
  }
  if (nh > 1 && uniform) {
    g_autofree guint *order = g_new(guint, n);
    for (guint r = 0; r < L0; r++) {
      guint k = 0;
      for (guint h = 0; h < nh; h++) {
        guint m;
        const guint *hr = fs_comm_host_ranks(c, h, &m);
        for (guint i = 0; i < m; i++)
          order[k++] = hr[(r + i) % m];
      }
      if (!fs_comm_set_ring(c, r, order, error))
        return NULL;
    }
  }
  /* CollNet: for shard j, the reducing network switch nearest to local
   * rank j of the first host (its rail's leaf on a rail-optimized fabric),
   * when every host has as many ranks. */
  if (nh > 1) {
    guint L;
    const guint *ranks = fs_comm_host_ranks(c, 0, &L);
    g_autofree int *sw = g_new(int, L);
    guint found = 0;
    for (guint j = 0; j < L; j++) {
      int nic = fs_router_nearest_nic(router, (guint)fs_comm_gpu(c, ranks[j]));
      sw[j] = nic < 0 ? -1 : nearest_reducing_switch(topo, (guint)nic);
      found += sw[j] >= 0;
    }
    if (found == L)
      fs_comm_set_collnet_switches(c, sw, L);
  }
  return g_steal_pointer(&c);
}

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
  *n = out->len;
  return (guint *)g_array_free(g_steal_pointer(&out), FALSE);
}

/* Total capacity of a route (bytes/s): the sum over its paths of each
 * path's bottleneck. */
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
    *bw = sum;
    *lat_us = fs_time_to_us(lat);
    *kind = r.kind;
  }
  fs_route_clear(&r);
  return ok;
}

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
  out->cpu = FS_NCCL_CPU_INTEL;
  out->max_channels = p->max_channels;
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
  out->bw_intra = intra / 1e9 / out->max_channels;
  out->bw_inter = inter / 1e9 / out->max_channels;
  out->nvls_channels = fs_comm_has_nvls(comm) ? p->nvls_channels : 0;
  out->collnet = fs_comm_collnet_switch(comm, 0) >= 0;
  out->ll128 = out->intra_hw == FS_NCCL_HW_NVLINK;
  return TRUE;
}

struct FsCollTopoNet {
  FsRouter *router;
  GHashTable *paths; /* (src << 32 | dst) → GArray of FsChannelId */
};

FsCollTopoNet *fs_coll_topo_net_new(FsRouter *router)
{
  FsCollTopoNet *t = g_new0(FsCollTopoNet, 1);
  t->router = router;
  t->paths = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
  return t;
}

void fs_coll_topo_net_free(FsCollTopoNet *t)
{
  if (t == NULL)
    return;
  g_hash_table_destroy(t->paths);
  g_free(t);
}

/* Fewest-hop path from src to dst that never passes through a GPU
 * (breadth-first, neighbours in adjacency order: deterministic), as
 * channels; NULL when none. */
static GArray *bfs_path(const FsTopo *topo, guint src, guint dst)
{
  guint nn = fs_topo_n_nodes(topo);
  g_autofree int *via = g_new(int, nn); /* link used to reach the node, -1 unseen */
  g_autofree guint *queue = g_new(guint, nn);
  for (guint i = 0; i < nn; i++)
    via[i] = -1;
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
  if (via[dst] < 0)
    return NULL;
  GArray *path = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  for (guint v = dst; v != src;) {
    guint link = (guint)via[v];
    const FsTopoLink *l = fs_topo_link(topo, link);
    guint from = l->a == v ? l->b : l->a;
    FsChannelId ch = fs_topo_channel_from(topo, link, from);
    g_array_prepend_val(path, ch);
    v = from;
  }
  return path;
}

gboolean fs_coll_topo_xfer(void *ctx, int src, int dst, uint64_t bytes, double rate_cap,
                           uint64_t key, FsFlowDoneFn done, void *done_ctx, void *user,
                           GError **error)
{
  FsCollTopoNet *t = ctx;
  const FsTopo *topo = fs_router_topo(t->router);
  FsFlowNet *net = fs_router_net(t->router);
  FsSim *sim = fs_flownet_sim(net);
  if (fs_topo_node(topo, (guint)src)->kind != FS_NODE_SWITCH &&
      fs_topo_node(topo, (guint)dst)->kind != FS_NODE_SWITCH)
    return fs_router_transfer(t->router, (guint)src, (guint)dst, bytes, fs_sim_now(sim), rate_cap,
                              key, done, done_ctx, user, error);
  /* To or from a reducing switch: NVLS is next to the GPU; a network switch
   * is reached through the GPU's NIC (fewest hops to the NIC, then from
   * the NIC to the switch). */
  gint64 k = ((gint64)src << 32) | (guint)dst;
  GArray *path = g_hash_table_lookup(t->paths, &k);
  if (path == NULL) {
    gboolean up = fs_topo_node(topo, (guint)src)->kind == FS_NODE_GPU;
    guint gpu = (guint)(up ? src : dst), sw = (guint)(up ? dst : src);
    int nic = fs_topo_node(topo, sw)->model->u.sw.kind == FS_SWITCH_NVSWITCH ? -1
              : fs_router_nearest_nic(t->router, gpu);
    if (nic < 0 || fs_topo_node(topo, gpu)->kind != FS_NODE_GPU) {
      path = bfs_path(topo, (guint)src, (guint)dst);
    } else {
      GArray *a = bfs_path(topo, up ? gpu : sw, (guint)nic);
      GArray *b = bfs_path(topo, (guint)nic, up ? sw : gpu);
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
      return FALSE;
    }
    g_hash_table_insert(t->paths, g_memdup2(&k, sizeof k), path);
  }
  FsFlowSpec spec = {
    .src = src, .dst = dst, .path = (const FsChannelId *)path->data, .path_len = path->len,
    .bytes = bytes, .rate_cap = rate_cap, .start = fs_sim_now(sim), .done = done,
    .ctx = done_ctx, .user = user,
  };
  fs_flownet_start(net, &spec);
  return TRUE;
}

gboolean fs_coll_topo_route_fixed(void *ctx, int src, int dst)
{
  FsCollTopoNet *t = ctx;
  const FsTopo *topo = fs_router_topo(t->router);
  /* Paths to and from a reducing switch take no key (see fs_coll_topo_xfer). */
  if (fs_topo_node(topo, (guint)src)->kind == FS_NODE_SWITCH ||
      fs_topo_node(topo, (guint)dst)->kind == FS_NODE_SWITCH)
    return TRUE;
  FsRoute route;
  fs_route_init(&route);
  gboolean ok = fs_router_route(t->router, (guint)src, (guint)dst, 0, &route, NULL) &&
                fs_router_last_choices(t->router) == 0;
  fs_route_clear(&route);
  return ok;
}
