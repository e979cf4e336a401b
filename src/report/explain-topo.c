/* explain-topo.c — see explain-topo.h; `fabricsim explain topo TOPO [GPU GPU]`: why a GPU pair
 * is NV18, PIX, PXB, PHB, NODE, SYS or NET, for teaching.
 *
 * For a pair: the path type and the rule that gave it (topo/paths.h), the
 * route the router takes (net/route.h) hop by hop with each link's model,
 * family, count, per-direction bandwidth and latency, each path's
 * bottleneck, the bandwidth one transfer of --size bytes gets alone on
 * the flow network, and the transport NCCL would pick (P2P over NVLink or
 * PCIe, SHM through host memory, NET with or without GPUDirect RDMA) with
 * the reason (the P2P level, the NIC's GPUDirect support).  Without a
 * pair: the GPU × GPU matrix (up to 16 GPUs) and one explained pair per
 * path type that occurs.
 *
 * Cost: one route and one simulated transfer per explained pair; finding
 * the example pairs classifies at most 4096 pairs. */
#include "report/explain-topo.h"

#include <stdio.h>
#include <string.h>

#include "topo/paths.h"
#include "util/units.h"

#define MATRIX_MAX 16
#define SCAN_MAX 4096

/* Why a pair has its path type: one sentence per type. */
static const char *type_reason(FsPathType t)
{
  switch (t) {
  case FS_PATH_SELF: return "the same GPU";
  case FS_PATH_NV: return "NVLink: direct links between the pair plus, when both reach the same "
                          "NVSwitch plane, the smaller of their link counts into it";
  case FS_PATH_PIX: return "PCIe through at most one PCIe switch, no CPU on the way";
  case FS_PATH_PXB: return "PCIe through several PCIe switches, still no CPU on the way";
  case FS_PATH_PHB: return "PCIe up to the CPU's host bridge (root complex) and down again";
  case FS_PATH_NODE: return "PCIe through two or more host bridges of one NUMA node";
  case FS_PATH_SYS: return "PCIe across the inter-socket link (QPI/UPI/xGMI) between two CPUs";
  case FS_PATH_NET: return "different hosts and no NVLink between them: through NICs and the network";
  default: return "";
  }
}

typedef struct {
  FsTime finish;
  double rate;
} Done;

static void on_done(void *ctx, const FsFlowInfo *info)
{
  Done *d = ctx;
  d->finish = info->finish;
  d->rate = info->mean_rate;
}

static void print_hop(GString *out, const FsTopo *topo, FsFlowNet *net, FsRouter *router, FsChannelId ch)
{
  const FsTopoLink *l = fs_topo_link(topo, fs_topo_channel_link(ch));
  const FsLinkModel *m = &l->model->u.link;
  g_autofree char *name = fs_router_channel_name(router, ch);
  g_autofree char *bw = fs_format_bandwidth(fs_flownet_channel_capacity(net, ch));
  g_autofree char *lat = fs_format_time(fs_flownet_channel_latency(net, ch));
  g_autofree char *model = l->count > 1 ? g_strdup_printf("%s ×%u", l->model->name, l->count)
                                         : g_strdup(l->model->name);
  g_string_append_printf(out, "      %-36s %-12s %-22s %12s  %s\n", name, fs_link_family_name(m->family), model, bw, lat);
}

/* The default P2P level's reason: the CPU vendor of a's host. */
static char *level_reason(const FsTopo *topo, gboolean level_given, guint a)
{
  if (level_given)
    return g_strdup("");
  const FsTopoNode *g = fs_topo_node(topo, a);
  if (g->host >= 0) {
    guint n;
    const guint *nodes = fs_topo_host_nodes(topo, (guint)g->host, &n);
    for (guint i = 0; i < n; i++) {
      const FsTopoNode *c = fs_topo_node(topo, nodes[i]);
      if (c->kind == FS_NODE_CPU)
        return g_strdup_printf(" (NCCL's default for %s CPUs; PXB on Intel, SYS otherwise)",
                               fs_cpu_vendor_name(c->model->u.cpu.vendor));
    }
  }
  return g_strdup(" (NCCL's default without a CPU)");
}

/* See explain-topo.h. Explains the pair a -> b: its NCCL path type and why, the route with
 * every hop and each path's bottleneck and latency, what a lone transfer of bytes achieves
 * (simulated on a fresh max-min world), and which NCCL transport the route stands for and why.
 * Returns FALSE with error set when routing or the simulation fails. */
gboolean fs_report_explain_pair(GString *out, const FsScenario *sc, const FsRouteOptions *ropt,
                                gboolean level_given, guint a, guint b, uint64_t bytes, GError **error)
{
  const FsTopo *topo = fs_scenario_topo(sc);
  const FsTopoNode *na = fs_topo_node(topo, a), *nb = fs_topo_node(topo, b);
  guint nvl = 0;
  FsPathType type = fs_topo_path_type(topo, a, b, &nvl);
  g_autofree char *label = fs_path_label(type, nvl);
  g_string_append_printf(out, "%s -> %s: %s\n", na->name, nb->name, label);
  g_string_append_printf(out, "  why %s: %s", label, type_reason(type));
  if (type == FS_PATH_NV) {
    guint n, direct = 0;
    const FsTopoAdj *adj = fs_topo_adj(topo, a, &n);
    for (guint i = 0; i < n; i++) {
      const FsTopoLink *l = fs_topo_link(topo, adj[i].link);
      if (adj[i].peer == b && l->model->u.link.family == FS_LINK_NVLINK)
        direct += l->count;
    }
    g_string_append_printf(out, ": here %u direct + %u through shared NVSwitch planes = %u", direct, nvl - MIN(direct, nvl), nvl);
  }
  g_string_append_printf(out, ".\n");
  g_autoptr(FsScenarioWorld) w = fs_scenario_world_new(sc, NULL, FS_NET_MAXMIN, ropt);
  FsSim *sim = w->sim;
  FsFlowNet *net = w->net;
  FsRouter *router = w->router;
  FsRoute route;
  fs_route_init(&route);
  if (!fs_router_route(router, a, b, 0, &route, error)) {
    fs_route_clear(&route);
    return FALSE;
  }
  g_string_append_printf(out, "  route: %s, %u path%s\n", fs_route_kind_name(route.kind), route.n_paths,
         route.n_paths == 1 ? "" : "s used at once, the bytes split by each path's bottleneck");
  g_string_append_printf(out, "      %-36s %-12s %-22s %12s  %s\n", "hop", "family", "link model", "bandwidth", "latency");
  double sum_bottleneck = 0;
  for (guint p = 0; p < route.n_paths; p++) {
    guint len;
    const FsChannelId *hops = fs_route_path(&route, p, &len);
    if (route.n_paths > 1)
      g_string_append_printf(out, "    path %u (%.1f%% of the bytes)\n", p + 1, 100 * g_array_index(route.weights, double, p));
    if (len == 0)
      continue;
    FsChannelId worst = hops[0];
    for (guint h = 0; h < len; h++) {
      print_hop(out, topo, net, router, hops[h]);
      if (fs_flownet_channel_capacity(net, hops[h]) < fs_flownet_channel_capacity(net, worst))
        worst = hops[h];
    }
    double cap = fs_flownet_path_capacity(net, hops, len);
    sum_bottleneck += cap;
    g_autofree char *wn = fs_router_channel_name(router, worst);
    g_autofree char *wb = fs_format_bandwidth(cap);
    g_autofree char *pl = fs_format_time(fs_flownet_path_latency(net, hops, len));
    g_string_append_printf(out, "    bottleneck %s at %s; latency %s\n", wb, wn, pl);
  }
  FsRouteKind kind = route.kind;
  fs_route_clear(&route);
  Done d = { 0, 0 };
  if (!fs_router_transfer(router, a, b, bytes, 0, 0, 0, on_done, &d, NULL, error) ||
      !fs_sim_run(sim, error))
    return FALSE;
  g_autofree char *sz = fs_format_size(bytes);
  g_autofree char *sum = fs_format_bandwidth(sum_bottleneck);
  g_autofree char *got = fs_format_bandwidth(d.rate);
  g_autofree char *tt = fs_format_time(d.finish);
  g_string_append_printf(out, "  one %s transfer alone: %s (bytes / drain time), done after %s; the paths' bottlenecks "
         "add up to %s\n", sz, got, tt, sum);
  FsPathType lvl = fs_router_p2p_level(router, a);
  const char *lvl_name = fs_path_type_name(lvl);
  g_autofree char *why_lvl = level_reason(topo, level_given, a);
  switch (kind) {
  case FS_ROUTE_NVLINK:
    g_string_append_printf(out, "  NCCL: P2P transport over NVLink (path NVL; NVLink always qualifies for P2P)\n");
    break;
  case FS_ROUTE_PCIE_P2P:
    g_string_append_printf(out, "  NCCL: P2P transport over PCIe: %s is within NCCL_P2P_LEVEL=%s%s\n", label, lvl_name, why_lvl);
    break;
  case FS_ROUTE_HOST:
    if (ropt->p2p_disable)
      g_string_append_printf(out, "  NCCL: SHM transport, staged through host memory: NCCL_P2P_DISABLE=1\n");
    else
      g_string_append_printf(out, "  NCCL: SHM transport, staged through host memory: %s is beyond NCCL_P2P_LEVEL=%s%s\n",
             label, lvl_name, why_lvl);
    break;
  case FS_ROUTE_NET_GDR:
    g_string_append_printf(out, "  NCCL: NET transport with GPUDirect RDMA: each NIC reads and writes GPU memory directly "
           "(no CPU between GPU and NIC, NIC capable)\n");
    break;
  case FS_ROUTE_NET_STAGED:
    g_string_append_printf(out, "  NCCL: NET transport staged through host memory: a CPU sits between a GPU and its NIC, "
           "or the NIC cannot do GPUDirect RDMA\n");
    break;
  default:
    g_string_append_printf(out, "  NCCL: no transport needed\n");
    break;
  }
  return TRUE;
}

gboolean fs_report_explain_topo(GString *out, const FsScenario *sc, const FsRouteOptions *ropt,
                                gboolean level_given, uint64_t bytes, GError **error)
{
  const FsTopo *topo = fs_scenario_topo(sc);
  guint ng;
  const guint *gpus = fs_topo_gpus(topo, &ng);
  g_string_append_printf(out, "%s: %u GPUs, %u hosts\n\n", fs_topo_name(topo), ng, fs_topo_n_hosts(topo));
  if (ng <= MATRIX_MAX) {
    g_autofree char *m = fs_topo_paths_matrix(topo);
    g_string_append_printf(out, "%s\n", m);
  }
  /* One example pair per path type, the first met in row order. */
  int ex_a[FS_PATH_N_TYPES], ex_b[FS_PATH_N_TYPES];
  for (guint t = 0; t < FS_PATH_N_TYPES; t++)
    ex_a[t] = ex_b[t] = -1;
  guint scanned = 0;
  for (guint i = 0; i < ng && scanned < SCAN_MAX; i++)
    for (guint j = i + 1; j < ng && scanned < SCAN_MAX; j++, scanned++) {
      FsPathType t = fs_topo_path_type(topo, gpus[i], gpus[j], NULL);
      if (ex_a[t] < 0) {
        ex_a[t] = (int)gpus[i];
        ex_b[t] = (int)gpus[j];
      }
    }
  gboolean any = FALSE;
  for (guint t = 0; t < FS_PATH_N_TYPES; t++) {
    if (ex_a[t] < 0)
      continue;
    g_string_append_printf(out, "%s", any ? "\n" : "");
    any = TRUE;
    if (!fs_report_explain_pair(out, sc, ropt, level_given, (guint)ex_a[t], (guint)ex_b[t], bytes, error))
      return FALSE;
  }
  if (!any)
    g_string_append_printf(out, "one GPU: no pair to explain\n");
  return TRUE;
}
