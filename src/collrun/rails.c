/* rails.c — the NVLS tree's mirrored rails.  See rails.h. */
#include "collrun/rails.h"

#include <string.h>

#include "coll/comm.h"

/* The map of rank 0's channels onto each local rank's, built pair by pair. */
typedef struct {
  const FsFlowNet *net;
  FsCollRouteFixedFn fixed;
  FsCollRoutePathsFn paths;
  void *ctx;
  guint nc;        /* the network's channels */
  guint32 *phi;    /* phi[j * nc + a]: rank j's channel for rank 0's a; G_MAXUINT32: none yet */
  guint64 *owner;  /* owner[b]: 1 + j * nc + a when rank j's b is the image of a; 0: free */
  GArray *w0, *h0, *w, *h; /* scratch: the two routes (exec.h, FsCollRoutePathsFn) */
} Check;

/* Maps rank 0's channel a to rank j's b: TRUE when consistent with the map
 * so far (a maps to b alone, b is no other rank's or channel's image) and
 * the two have the same capacity and latency. */
static gboolean map(Check *k, guint j, FsChannelId a, FsChannelId b)
{
  if (a >= k->nc || b >= k->nc)
    return FALSE;
  guint32 *p = &k->phi[(gsize)j * k->nc + a];
  if (*p != G_MAXUINT32)
    return *p == b;
  if (k->owner[b] != 0 ||
      fs_flownet_channel_capacity(k->net, a) != fs_flownet_channel_capacity(k->net, b) ||
      fs_flownet_channel_latency(k->net, a) != fs_flownet_channel_latency(k->net, b))
    return FALSE;
  *p = b;
  k->owner[b] = 1 + (guint64)j * k->nc + a;
  return TRUE;
}

/* Rank 0's transfer from node s0 to d0 and rank j's from sj to dj: TRUE
 * when both routes are fixed and rank j's is rank 0's through the map,
 * path for path with the same shares. */
static gboolean pair(Check *k, guint j, int s0, int d0, int sj, int dj)
{
  if (s0 < 0 || d0 < 0 || sj < 0 || dj < 0 || !k->fixed(k->ctx, s0, d0) ||
      !k->fixed(k->ctx, sj, dj))
    return FALSE;
  g_array_set_size(k->w0, 0), g_array_set_size(k->h0, 0);
  g_array_set_size(k->w, 0), g_array_set_size(k->h, 0);
  if (!k->paths(k->ctx, s0, d0, 0, k->w0, k->h0) || !k->paths(k->ctx, sj, dj, 0, k->w, k->h) ||
      k->w0->len != k->w->len || k->h0->len != k->h->len)
    return FALSE;
  for (guint i = 0; i < k->w0->len; i++)
    if (g_array_index(k->w0, double, i) != g_array_index(k->w, double, i))
      return FALSE;
  const FsChannelId *x = (const FsChannelId *)k->h0->data, *y = (const FsChannelId *)k->h->data;
  for (guint pos = 0; pos < k->h0->len;) {
    guint n = x[pos];
    if (y[pos] != n || pos + 1 + n > k->h0->len)
      return FALSE;
    for (guint t = 1; t <= n; t++)
      if (!map(k, j, x[pos + t], y[pos + t]))
        return FALSE;
    pos += 1 + n;
  }
  return TRUE;
}

/* Both directions between rank r0's node (and rank rj's) and node x0 (and
 * xj) for local rank j. */
static gboolean both_ways(Check *k, guint j, int r0, int x0, int rj, int xj)
{
  return pair(k, j, r0, x0, rj, xj) && pair(k, j, x0, r0, xj, rj);
}

/* Every NVLS leg (each host's ranks to and from each NVLS switch its
 * channels use) and every tree edge (ranks j of a host and of its parent,
 * in the trees req's channels use), for every local rank j. */
static gboolean check_all(Check *k, const FsComm *comm, const FsCollRequest *req)
{
  guint nh = fs_comm_n_hosts(comm), nch = req->nchannels, L;
  fs_comm_host_ranks(comm, 0, &L);
  for (guint h = 0; h < nh; h++) {
    guint m;
    const guint *ranks = fs_comm_host_ranks(comm, h, &m);
    for (guint ch = 0; ch < nch; ch++) {
      int sw = fs_coll_ep_node(comm, FS_EP_NVLS(h), ch);
      gboolean seen = FALSE;
      for (guint e = 0; e < ch && !seen; e++)
        seen = fs_coll_ep_node(comm, FS_EP_NVLS(h), e) == sw;
      for (guint j = 0; j < L && !seen; j++)
        if (!both_ways(k, j, fs_coll_ep_node(comm, FS_EP_RANK(ranks[0]), ch), sw,
                       fs_coll_ep_node(comm, FS_EP_RANK(ranks[j]), ch), sw))
          return FALSE;
    }
  }
  for (guint t = 0; t < (nch >= 2 ? 2u : 1u); t++)
    for (guint h = 0; h < nh; h++) {
      int parent, c0, c1;
      fs_coll_btree(nh, t, h, &parent, &c0, &c1);
      if (parent < 0)
        continue;
      guint m;
      const guint *a = fs_comm_host_ranks(comm, h, &m);
      const guint *b = fs_comm_host_ranks(comm, (guint)parent, &m);
      for (guint j = 0; j < L; j++)
        if (!both_ways(k, j, fs_coll_ep_node(comm, FS_EP_RANK(a[0]), 0),
                       fs_coll_ep_node(comm, FS_EP_RANK(b[0]), 0),
                       fs_coll_ep_node(comm, FS_EP_RANK(a[j]), 0),
                       fs_coll_ep_node(comm, FS_EP_RANK(b[j]), 0)))
          return FALSE;
    }
  return TRUE;
}

gboolean fs_coll_rails_mirror(const FsComm *comm, const FsCollAlgo *algo, const FsCollRequest *req,
                              const FsFlowNet *net, FsCollRouteFixedFn fixed,
                              FsCollRoutePathsFn paths, void *ctx)
{
  if (algo->nccl != FS_NCCL_ALGO_NVLS_TREE || req->op != FS_COLL_ALL_REDUCE || fixed == NULL ||
      paths == NULL || fs_comm_n_hosts(comm) < 2 || !fs_comm_hosts_uniform(comm) ||
      algo->unsupported(comm, req->op) != NULL)
    return FALSE;
  guint L;
  fs_comm_host_ranks(comm, 0, &L);
  if (L < 2)
    return FALSE;
  Check k = {.net = net, .fixed = fixed, .paths = paths, .ctx = ctx, .nc = fs_flownet_n_channels(net)};
  k.phi = g_new(guint32, (gsize)L * k.nc);
  memset(k.phi, 0xff, sizeof(guint32) * (gsize)L * k.nc);
  k.owner = g_new0(guint64, k.nc);
  k.w0 = g_array_new(FALSE, FALSE, sizeof(double));
  k.w = g_array_new(FALSE, FALSE, sizeof(double));
  k.h0 = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  k.h = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  gboolean ok = check_all(&k, comm, req);
  g_free(k.phi);
  g_free(k.owner);
  g_array_unref(k.w0);
  g_array_unref(k.w);
  g_array_unref(k.h0);
  g_array_unref(k.h);
  return ok;
}
