/* route-nic.c — which NIC a GPU's bytes leave its host by, and the legs
 * between an endpoint and a NIC (route.h, "rails").  A GPU sends through
 * the NIC of the destination's rail: directly when it reaches that NIC
 * over PCIe without crossing a CPU, else over NVLink to the GPU next to
 * that NIC (PXN, unless NCCL_PXN_DISABLE), else through its own NIC
 * (NCCL_CROSS_NIC=2) or over PCIe to the rail's NIC (0); NCCL_CROSS_NIC=1
 * always takes the nearest NIC.  The nearest CPU and NIC of every node,
 * computed once.  Part of the router (route-private.h).
 */
#include "net/route-private.h"

/* The node of `kind` in node's host closest over PCIe: ties go to the same
 * local index, then the lowest node index.  -1 if none. */
static int nearest(FsRouter *r, guint node, FsNodeKind kind)
{
  const FsTopoNode *me = fs_topo_node(r->topo, node);
  if (me->kind == kind)
    return (int)node;
  if (me->host < 0)
    return -1;
  const FsTime *dist = router_local_dist(r, node, SUB_PCIE);
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
      if (router_link_in(r->topo, adj[k].link, SUB_FABRIC))
        r->near_nic[node] = (int)node;
    if (r->near_nic[node] < 0)
      r->near_nic[node] = nearest(r, node, FS_NODE_NIC);
  }
  return r->near_nic[node];
}

/* Appends the leg between an endpoint and its NIC (either direction):
 * directly over PCIe when no CPU is crossed and the NIC can do GPUDirect
 * RDMA (or the endpoint is host memory), else through the endpoint's
 * nearest CPU.  *gdr tells which.  FALSE if no path. */
gboolean router_nic_leg(FsRouter *r, guint ep, guint nic, gboolean to_nic, uint64_t key,
                        GArray *hops, gboolean *gdr)
{
  guint mark = hops->len;
  guint a = to_nic ? ep : nic, b = to_nic ? nic : ep;
  if (ep == nic) {
    *gdr = TRUE;
    return TRUE;
  }
  const FsTopoNode *e = fs_topo_node(r->topo, ep);
  if (!router_walk(r, a, b, SUB_PCIE, key, hops))
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
    return router_walk(r, ep, (guint)cpu, SUB_PCIE, key, hops) &&
           router_walk(r, (guint)cpu, nic, SUB_PCIE, key, hops);
  return router_walk(r, nic, (guint)cpu, SUB_PCIE, key, hops) &&
         router_walk(r, (guint)cpu, ep, SUB_PCIE, key, hops);
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
  gboolean found = router_walk(r, gpu, nic, SUB_PCIE, 0, r->leg);
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

/* router_pick_nics' choice for GPU src (whose nearest NIC is ns) toward a
 * GPU whose NIC has local index `local`: *nic and *proxy, set to ns and
 * src by the caller.  Nothing of the destination but that index counts. */
static void pick_rail(FsRouter *r, guint src, const FsTopoNode *s, int local, int ns, int *nic,
                      int *proxy)
{
  int want = host_nic(r, s->host, local);
  if (want < 0 || want == ns)
    return;
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
    return;
  }
  if (gpu >= 0 && proxy_bw > 0 && router_local_dist(r, (guint)gpu, SUB_NVLINK)[src] != INF_DIST) {
    *nic = want, *proxy = gpu;
    return;
  }
  /* No PXN: NCCL_CROSS_NIC=2 takes src's own NIC (the same rule for every
   * pair, so no NIC carries two rings' exits); 0 goes over PCIe to the
   * rail's NIC. */
  if (r->opt.cross_nic == 2)
    return;
  *nic = want, *proxy = -1;
}

/* A pick_rail answer, kept per (src, local index). */
typedef struct {
  uint64_t key;
  int nic, proxy;
} Pick;

/* Which NIC GPU src sends through toward GPU dst on another host, and how
 * it gets there (route.h, rails): *nic, and *proxy the GPU whose NIC it is
 * when the bytes cross NVLink first (PXN), src when src is next to it, -1
 * when they go over PCIe to a NIC not src's nearest.  *recv is dst's NIC.
 * FALSE when a side has no NIC.  The choice (pick_rail) is kept per src
 * and rail: a digest of a large group asks it for every pair. */
gboolean router_pick_nics(FsRouter *r, guint src, guint dst, int *nic, int *proxy, int *recv)
{
  int ns = fs_router_nearest_nic(r, src), nd = fs_router_nearest_nic(r, dst);
  *nic = ns, *proxy = (int)src, *recv = nd;
  if (ns < 0 || nd < 0)
    return FALSE;
  const FsTopoNode *s = fs_topo_node(r->topo, src), *d = fs_topo_node(r->topo, dst);
  if (r->opt.cross_nic == 1 || s->kind != FS_NODE_GPU || d->kind != FS_NODE_GPU)
    return TRUE;
  int local = fs_topo_node(r->topo, (guint)nd)->local;
  uint64_t key = ((uint64_t)src << 32) | (guint32)local;
  const Pick *p = g_hash_table_lookup(r->picks, &key);
  if (p != NULL) {
    *nic = p->nic, *proxy = p->proxy;
    return TRUE;
  }
  pick_rail(r, src, s, local, ns, nic, proxy);
  Pick *np = g_new(Pick, 1);
  *np = (Pick){ key, *nic, *proxy };
  g_hash_table_replace(r->picks, &np->key, np);
  return TRUE;
}

gboolean fs_router_net_nics(FsRouter *r, guint src, guint dst, int *send_nic, int *recv_nic,
                            int *proxy)
{
  g_return_val_if_fail(src < r->n_nodes && dst < r->n_nodes, FALSE);
  const FsTopoNode *s = fs_topo_node(r->topo, src), *d = fs_topo_node(r->topo, dst);
  if (s->kind != FS_NODE_GPU || d->kind != FS_NODE_GPU || s->host < 0 || s->host == d->host)
    return FALSE;
  return router_pick_nics(r, src, dst, send_nic, proxy, recv_nic);
}
