/* test-route.c — routing on the topology graph (src/net/route.h): NCCL's
 * transport order, NVLink spraying, nearest NIC, ECMP, knobs, the route
 * cache, and the bandwidths that follow on the ready topologies. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "core/sim.h"
#include "net/route.h"
#include "testutil.h"
#include "topo/topo.h"

static guint node(const FsTopo *t, const char *name)
{
  int i = fs_topo_find(t, name);
  ck_assert_msg(i >= 0, "no node %s", name);
  return (guint)i;
}

static double link_bw(const char *model)
{
  const FsModel *m = fs_catalog_get(fs_test_catalog(), model);
  ck_assert_msg(m != NULL, "no model %s", model);
  return m->u.link.bandwidth;
}

/* Sum of the counts of the links joining a and b directly. */
static guint links_between(const FsTopo *t, guint a, guint b)
{
  guint n, c = 0;
  const FsTopoAdj *adj = fs_topo_adj(t, a, &n);
  for (guint k = 0; k < n; k++)
    if (adj[k].peer == b)
      c += fs_topo_link(t, adj[k].link)->count;
  return c;
}

typedef struct {
  FsFlowInfo info[64];
  guint n;
} Done;

static void on_done(void *ctx, const FsFlowInfo *info)
{
  Done *d = ctx;
  ck_assert_uint_lt(d->n, G_N_ELEMENTS(d->info));
  d->info[d->n++] = *info;
}

/* Runs transfers (src[i] → dst[i], bytes each) together from t = 0; returns
 * the aggregate rate: all bytes / the last drain time. */
static double run_transfers(const FsTopo *t, const FsRouteOptions *opt, const guint *src,
                            const guint *dst, guint n, uint64_t bytes, Done *done)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  fs_flownet_set_check(net, TRUE);
  g_autoptr(FsRouter) r = fs_router_new(t, net, opt);
  memset(done, 0, sizeof *done);
  for (guint i = 0; i < n; i++) {
    GError *error = NULL;
    ck_assert(fs_router_transfer(r, src[i], dst[i], bytes, 0, 0, i, on_done, done, NULL, &error));
    fs_assert_no_error(error);
  }
  GError *error = NULL;
  ck_assert(fs_sim_run(sim, &error));
  ck_assert_uint_eq(done->n, n);
  FsTime last = 0;
  for (guint i = 0; i < n; i++)
    last = MAX(last, done->info[i].drained);
  return (double)bytes * n * 1e12 / (double)last;
}

static FsRouteKind route_kind(FsRouter *r, guint a, guint b, guint *n_paths)
{
  FsRoute route;
  fs_route_init(&route);
  GError *error = NULL;
  ck_assert(fs_router_route(r, a, b, 7, &route, &error));
  fs_assert_no_error(error);
  FsRouteKind k = route.kind;
  if (n_paths)
    *n_paths = route.n_paths;
  fs_route_clear(&route);
  return k;
}

#define GB ((uint64_t)1000000000)

START_TEST(test_route_dgx_h100_single_peer_gets_all_planes)
{
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100.yaml", NULL, NULL);
  guint src = node(t, "gpu0"), dst = node(t, "gpu5");
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) r = fs_router_new(t, net, NULL);
  guint paths;
  ck_assert_int_eq(route_kind(r, src, dst, &paths), FS_ROUTE_NVLINK);
  ck_assert_uint_eq(paths, 4); /* one per NVSwitch */
  Done d;
  double rate = run_transfers(t, NULL, &src, &dst, 1, GB, &d);
  /* 18 NVLink4 links (5+4+4+5) per direction: 18 × 25 GB/s raw, times the
   * catalog's efficiency (0.824: 370.8 GB/s). */
  double want = 18 * link_bw("nvlink4");
  ck_assert_msg(fabs(rate - want) < 1e-6 * want, "rate %.6g, want %.6g", rate, want);
  ck_assert(want > 370e9 && want < 377e9);
}
END_TEST

START_TEST(test_route_full_mesh_pair_gets_only_its_links)
{
  g_autoptr(FsTopo) t = fs_test_topo("h100-fullmesh-nvlink.yaml", NULL, NULL);
  guint n;
  const guint *gpus = fs_topo_gpus(t, &n);
  ck_assert_uint_eq(n, 8);
  gboolean saw[4] = {FALSE};
  for (guint j = 1; j < n; j++) {
    guint c = links_between(t, gpus[0], gpus[j]);
    ck_assert(c == 2 || c == 3);
    saw[c] = TRUE;
    Done d;
    double rate = run_transfers(t, NULL, &gpus[0], &gpus[j], 1, GB, &d);
    double want = c * link_bw("nvlink4");
    ck_assert_msg(fabs(rate - want) < 1e-6 * want, "gpu0->%u: %.6g, want %.6g", j, rate, want);
  }
  ck_assert(saw[2] && saw[3]);
}
END_TEST

START_TEST(test_route_pcie_gen4_host_limited_by_root_links)
{
  g_autoptr(FsTopo) t = fs_test_topo("pcie-gen4-8gpu.yaml", NULL, NULL);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) r = fs_router_new(t, net, NULL);
  guint n;
  const guint *gpus = fs_topo_gpus(t, &n);
  guint src[8], dst[8];
  for (guint i = 0; i < n; i++) {
    src[i] = (guint)fs_router_nearest_cpu(r, gpus[i]);
    dst[i] = gpus[i];
    ck_assert_int_eq(route_kind(r, src[i], dst[i], NULL), FS_ROUTE_PCIE);
  }
  double x16 = link_bw("pcie-gen4-x16");
  Done d;
  /* One GPU alone: its own x16 link. */
  double one = run_transfers(t, NULL, src, dst, 1, GB, &d);
  ck_assert(fabs(one - x16) < 1e-6 * x16);
  /* All eight at once: four GPUs share each socket's single x16 uplink. */
  double all = run_transfers(t, NULL, src, dst, 8, GB, &d);
  ck_assert_msg(fabs(all - 2 * x16) < 1e-6 * x16, "all %.6g, want %.6g", all, 2 * x16);
}
END_TEST

START_TEST(test_route_p2p_level_and_disable)
{
  g_autoptr(FsTopo) t = fs_test_topo("pcie-gen4-8gpu.yaml", NULL, NULL);
  guint n;
  const guint *g = fs_topo_gpus(t, &n);
  g_autoptr(FsSim) sim = fs_sim_new();
  FsRouteOptions opt;
  fs_route_options_init(&opt);
  /* AMD host: auto level is SYS, so even the cross-socket pair is P2P. */
  {
    g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
    g_autoptr(FsRouter) r = fs_router_new(t, net, &opt);
    ck_assert_int_eq(route_kind(r, g[0], g[1], NULL), FS_ROUTE_PCIE_P2P);
    ck_assert_int_eq(route_kind(r, g[0], g[7], NULL), FS_ROUTE_PCIE_P2P);
  }
  ck_assert(fs_route_p2p_level_from_name("pix", &opt.p2p_level));
  {
    g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
    g_autoptr(FsRouter) r = fs_router_new(t, net, &opt);
    ck_assert_int_eq(route_kind(r, g[0], g[1], NULL), FS_ROUTE_PCIE_P2P); /* same switch */
    ck_assert_int_eq(route_kind(r, g[0], g[2], NULL), FS_ROUTE_HOST);     /* PXB > PIX */
  }
  fs_route_options_init(&opt);
  opt.p2p_disable = TRUE;
  {
    g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
    g_autoptr(FsRouter) r = fs_router_new(t, net, &opt);
    ck_assert_int_eq(route_kind(r, g[0], g[1], NULL), FS_ROUTE_HOST);
  }
  FsPathType lv;
  ck_assert(!fs_route_p2p_level_from_name("fast", &lv));
  ck_assert(fs_route_p2p_level_from_name("SYS", &lv) && lv == FS_PATH_SYS);
}
END_TEST

START_TEST(test_route_dgx_h100_p2p_disabled_goes_through_host)
{
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100.yaml", NULL, NULL);
  FsRouteOptions opt;
  fs_route_options_init(&opt);
  opt.p2p_disable = TRUE;
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) r = fs_router_new(t, net, &opt);
  guint a = node(t, "gpu0"), b = node(t, "gpu7");
  ck_assert_int_eq(route_kind(r, a, b, NULL), FS_ROUTE_HOST);
  Done d;
  double rate = run_transfers(t, &opt, &a, &b, 1, GB, &d);
  ck_assert(fabs(rate - link_bw("pcie-gen5-x16")) < 1e-6 * rate);
}
END_TEST

START_TEST(test_route_multi_node_uses_nearest_nic)
{
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100-ib-ndr.yaml", NULL, NULL);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) r = fs_router_new(t, net, NULL);
  for (int g = 0; g < 8; g++) {
    g_autofree char *gpu = g_strdup_printf("node0/gpu%d", g);
    g_autofree char *nic = g_strdup_printf("node0/nic%d", g);
    ck_assert_int_eq(fs_router_nearest_nic(r, node(t, gpu)), (int)node(t, nic));
  }
  guint a = node(t, "node0/gpu3"), b = node(t, "node1/gpu3");
  ck_assert_int_eq(route_kind(r, a, b, NULL), FS_ROUTE_NET_GDR);
  /* The route starts on node0/gpu3's PCIe switch and nic3, ends at gpu3. */
  FsRoute route;
  fs_route_init(&route);
  GError *error = NULL;
  ck_assert(fs_router_route(r, a, b, 1, &route, &error));
  guint len;
  const FsChannelId *p = fs_route_path(&route, 0, &len);
  ck_assert_uint_ge(len, 5);
  ck_assert_uint_eq(fs_topo_channel_src(t, p[0]), a);
  ck_assert_uint_eq(fs_topo_channel_dst(t, p[len - 1]), b);
  gboolean via_nic3 = FALSE;
  for (guint i = 0; i < len; i++)
    via_nic3 |= fs_topo_channel_dst(t, p[i]) == node(t, "node0/nic3");
  ck_assert(via_nic3);
  fs_route_clear(&route);
  Done d;
  double rate = run_transfers(t, NULL, &a, &b, 1, GB, &d);
  ck_assert(fabs(rate - link_bw("ib-ndr")) < 1e-6 * rate);
  /* Within a node NVLink still wins. */
  ck_assert_int_eq(route_kind(r, a, node(t, "node0/gpu4"), NULL), FS_ROUTE_NVLINK);
}
END_TEST

START_TEST(test_route_ib_disable)
{
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100-ib-ndr.yaml", NULL, NULL);
  FsRouteOptions opt;
  fs_route_options_init(&opt);
  opt.ib_disable = TRUE;
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) r = fs_router_new(t, net, &opt);
  FsRoute route;
  fs_route_init(&route);
  GError *error = NULL;
  ck_assert(!fs_router_route(r, node(t, "node0/gpu0"), node(t, "node1/gpu0"), 1, &route, &error));
  fs_assert_error(error, FS_NET_ERROR, "network is disabled");
  ck_assert(!fs_router_route(r, node(t, "node0/nic0"), node(t, "node1/gpu0"), 1, &route, &error));
  fs_assert_error(error, FS_NET_ERROR, "must be GPUs or CPUs");
  fs_route_clear(&route);
}
END_TEST

/* 2·k hosts, one GPU and one NIC each, on a two-leaf fat-tree. */
static char *fat_tree_yaml(int hosts, const char *oversub)
{
  return g_strdup_printf(
    "name: ft\n"
    "templates:\n"
    "  box:\n"
    "    nodes:\n"
    "      - {name: cpu0, model: epyc-7742}\n"
    "      - {name: gpu0, model: h100-sxm}\n"
    "      - {name: nic0, model: connectx-7}\n"
    "    links:\n"
    "      - {a: gpu0, b: cpu0, model: pcie-gen5-x16}\n"
    "      - {a: nic0, b: cpu0, model: pcie-gen5-x16}\n"
    "hosts:\n"
    "  - {template: box, name: \"h[0-%d]\"}\n"
    "generators:\n"
    "  - {type: fat-tree, name: ib, endpoints: \"h[0-%d]/nic0\", switch: quantum-2-ndr,\n"
    "     link: ib-ndr, levels: 2, oversubscription: \"%s\"}\n",
    hosts - 1, hosts - 1, oversub);
}

/* Every host of the first leaf sends to one of the second, 8 flows each
 * (8 ECMP keys); returns the aggregate rate across the spines at t = 0. */
static double cross_leaf_rate(int per_leaf, const char *oversub)
{
  g_autofree char *yaml = fat_tree_yaml(2 * per_leaf, oversub);
  g_autoptr(FsTopo) t = fs_test_topo_text(yaml, "test.yaml", NULL, NULL);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) r = fs_router_new(t, net, NULL);
  FsRoute route;
  fs_route_init(&route);
  GArray *ids = g_array_new(FALSE, FALSE, sizeof(FsFlowId));
  for (int h = 0; h < per_leaf; h++) {
    g_autofree char *a = g_strdup_printf("h%d/gpu0", h);
    g_autofree char *b = g_strdup_printf("h%d/gpu0", h + per_leaf);
    for (uint64_t k = 0; k < 8; k++) {
      GError *error = NULL;
      ck_assert(fs_router_route(r, node(t, a), node(t, b), (uint64_t)h * 8 + k, &route, &error));
      guint len;
      const FsChannelId *p = fs_route_path(&route, 0, &len);
      FsFlowSpec spec = {.path = p, .path_len = len, .bytes = GB};
      FsFlowId id = fs_flownet_start(net, &spec);
      g_array_append_val(ids, id);
    }
  }
  fs_flownet_flush(net);
  double sum = 0;
  for (guint i = 0; i < ids->len; i++) {
    FsFlowInfo info;
    ck_assert(fs_flownet_get_flow(net, g_array_index(ids, FsFlowId, i), &info));
    sum += info.rate;
  }
  GError *error = NULL;
  ck_assert(fs_flownet_check(net, &error));
  g_array_unref(ids);
  fs_route_clear(&route);
  return sum;
}

START_TEST(test_route_oversubscribed_fat_tree_drops_by_the_ratio)
{
  /* 64-port switches.  1:1: 32 hosts per leaf, 32 uplinks: full rate.
   * 2:1: 42 hosts per leaf, 22 uplinks: the leaf's cross traffic is capped
   * at 22 links, 0.52 of its hosts' demand. */
  double ndr = link_bw("ib-ndr");
  double full = cross_leaf_rate(32, "1:1");
  double over = cross_leaf_rate(42, "2:1");
  ck_assert_msg(fabs(full - 32 * ndr) < 1e-6 * full, "1:1 %.6g, want %.6g", full, 32 * ndr);
  ck_assert_msg(over <= 22 * ndr * (1 + 1e-9) && over >= 0.85 * 22 * ndr,
                "2:1 %.6g, uplinks %.6g", over, 22 * ndr);
  double per_host_full = full / 32, per_host_over = over / 42;
  ck_assert(per_host_over / per_host_full < 0.56);
}
END_TEST

START_TEST(test_route_ecmp_by_destination)
{
  /* InfiniBand switches (the default, auto) route by destination: every key
   * takes one path to a destination, no pick depends on the key (so the
   * route is memoised), and different destinations spread over the spines. */
  g_autofree char *yaml = fat_tree_yaml(512, "1:1"); /* 16 leaves, 8 spines */
  g_autoptr(FsTopo) t = fs_test_topo_text(yaml, "test.yaml", NULL, NULL);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) r = fs_router_new(t, net, NULL);
  FsRoute a, b;
  fs_route_init(&a);
  fs_route_init(&b);
  GHashTable *spines = g_hash_table_new(g_direct_hash, g_direct_equal);
  guint src = node(t, "h0/gpu0");
  for (guint d = 0; d < 32; d++) {
    g_autofree char *name = g_strdup_printf("h%u/gpu0", 256 + d);
    guint dst = node(t, name);
    GError *error = NULL;
    ck_assert(fs_router_route(r, src, dst, 0, &a, &error));
    ck_assert_uint_eq(fs_router_last_choices(r), 0);
    for (uint64_t k = 1; k < 8; k++) {
      ck_assert(fs_router_route(r, src, dst, k * 7919, &b, &error));
      ck_assert_uint_eq(a.hops->len, b.hops->len);
      ck_assert(memcmp(a.hops->data, b.hops->data, a.hops->len * sizeof(FsChannelId)) == 0);
    }
    guint len;
    const FsChannelId *p = fs_route_path(&a, 0, &len);
    for (guint i = 0; i < len; i++) {
      const char *nm = fs_topo_node(t, fs_topo_channel_dst(t, p[i]))->name;
      if (strstr(nm, "spine"))
        g_hash_table_add(spines, GUINT_TO_POINTER(fs_topo_channel_dst(t, p[i])));
    }
  }
  ck_assert_uint_ge(g_hash_table_size(spines), 6);
  g_hash_table_unref(spines);
  FsRouteEcmp e;
  ck_assert(fs_route_ecmp_from_name("Destination", &e) && e == FS_ROUTE_ECMP_DESTINATION);
  ck_assert(!fs_route_ecmp_from_name("random", &e));
  ck_assert_str_eq(fs_route_ecmp_name(FS_ROUTE_ECMP_FLOW), "flow");
  fs_route_clear(&a);
  fs_route_clear(&b);
}
END_TEST

START_TEST(test_route_ecmp_is_deterministic_and_spreads)
{
  g_autofree char *yaml = fat_tree_yaml(512, "1:1"); /* 16 leaves, 8 spines */
  g_autoptr(FsTopo) t = fs_test_topo_text(yaml, "test.yaml", NULL, NULL);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  FsRouteOptions opt;
  fs_route_options_init(&opt);
  opt.cache_size = 1; /* every call recomputes: the answer must not change */
  opt.ecmp = FS_ROUTE_ECMP_FLOW; /* InfiniBand would route by destination */
  g_autoptr(FsRouter) r = fs_router_new(t, net, &opt);
  FsRoute a, b;
  fs_route_init(&a);
  fs_route_init(&b);
  guint src = node(t, "h0/gpu0"), dst = node(t, "h400/gpu0");
  GHashTable *spines = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (uint64_t k = 0; k < 64; k++) {
    GError *error = NULL;
    ck_assert(fs_router_route(r, src, dst, k, &a, &error));
    ck_assert(fs_router_route(r, node(t, "h1/gpu0"), dst, k, &b, &error));
    ck_assert(fs_router_route(r, src, dst, k, &b, &error));
    ck_assert_uint_eq(a.hops->len, b.hops->len);
    ck_assert(memcmp(a.hops->data, b.hops->data, a.hops->len * sizeof(FsChannelId)) == 0);
    guint len;
    const FsChannelId *p = fs_route_path(&a, 0, &len);
    for (guint i = 0; i < len; i++) {
      const char *name = fs_topo_node(t, fs_topo_channel_dst(t, p[i]))->name;
      if (strstr(name, "spine"))
        g_hash_table_add(spines, GUINT_TO_POINTER(fs_topo_channel_dst(t, p[i])));
    }
  }
  ck_assert_uint_ge(g_hash_table_size(spines), 6);
  g_hash_table_unref(spines);
  fs_route_clear(&a);
  fs_route_clear(&b);
}
END_TEST

/* The route of (src, dst, key) from a router that has seen nothing. */
static void fresh_route(const FsTopo *t, const FsRouteOptions *opt, guint src, guint dst,
                        uint64_t key, FsRoute *out)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) r = fs_router_new(t, net, opt);
  GError *error = NULL;
  ck_assert(fs_router_route(r, src, dst, key, out, &error));
}

static void assert_same_route(const FsRoute *a, const FsRoute *b)
{
  ck_assert_int_eq(a->kind, b->kind);
  ck_assert_uint_eq(a->n_paths, b->n_paths);
  ck_assert_uint_eq(a->hops->len, b->hops->len);
  ck_assert(memcmp(a->hops->data, b->hops->data, a->hops->len * sizeof(FsChannelId)) == 0);
  ck_assert(memcmp(a->starts->data, b->starts->data, (a->n_paths + 1) * sizeof(guint)) == 0);
  ck_assert(memcmp(a->weights->data, b->weights->data, a->n_paths * sizeof(double)) == 0);
}

/* Memoised routes (a second request for a pair, or a PCIe leg seen
 * before) are the routes a fresh router computes, for every transport and
 * for ECMP routes under any key. */
START_TEST(test_route_memo_hit_is_identical)
{
  g_autofree char *yaml = fat_tree_yaml(64, "1:1");
  FsTopo *topos[3] = {fs_test_topo_text(yaml, "test.yaml", NULL, NULL),
                      fs_test_topo("pcie-gen3-8gpu", NULL, NULL), fs_test_topo("dgx-h100", NULL, NULL)};
  for (guint ti = 0; ti < 3; ti++) {
    FsTopo *t = topos[ti];
    for (int disable = 0; disable < 2; disable++) {
      FsRouteOptions opt;
      fs_route_options_init(&opt);
      opt.p2p_disable = disable;
      g_autoptr(FsSim) sim = fs_sim_new();
      g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
      g_autoptr(FsRouter) r = fs_router_new(t, net, &opt);
      guint ng;
      const guint *gpus = fs_topo_gpus(t, &ng);
      FsRoute a, b;
      fs_route_init(&a);
      fs_route_init(&b);
      for (guint round = 0; round < 2; round++)
        for (guint i = 0; i < MIN(ng, 24u); i++) {
          guint src = gpus[i], dst = gpus[(i * 7 + 5) % ng];
          int cpu = fs_router_nearest_cpu(r, dst);
          uint64_t key = round * 1000 + i;
          GError *error = NULL;
          ck_assert(fs_router_route(r, src, dst, key, &a, &error));
          fresh_route(t, &opt, src, dst, key, &b);
          assert_same_route(&a, &b);
          if (cpu >= 0 && fs_topo_node(t, src)->host == fs_topo_node(t, (guint)cpu)->host) {
            ck_assert(fs_router_route(r, src, (guint)cpu, key, &a, &error));
            fresh_route(t, &opt, src, (guint)cpu, key, &b);
            assert_same_route(&a, &b);
          }
        }
      fs_route_clear(&a);
      fs_route_clear(&b);
    }
  }
  for (guint ti = 0; ti < 3; ti++)
    fs_topo_free(topos[ti]);
}
END_TEST

/* Routes between hosts of a rail-optimized cluster (PXN relays over
 * NVLink, rails, NCCL_CROSS_NIC 0/1/2, PXN off) from one warm router —
 * its NIC choices, PXN heads and NVLink islands cached, half the pairs
 * looked up without storing (fs_router_route_once) — equal a fresh
 * router's, the second round included. */
START_TEST(test_route_cached_pieces_are_identical)
{
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100-ib-ndr.yaml", NULL, NULL);
  guint ng;
  const guint *gpus = fs_topo_gpus(t, &ng);
  ck_assert_uint_ge(ng, 16);
  for (guint variant = 0; variant < 4; variant++) {
    FsRouteOptions opt;
    fs_route_options_init(&opt);
    opt.cross_nic = variant < 3 ? variant : 2;
    opt.pxn_disable = variant == 3;
    g_autoptr(FsSim) sim = fs_sim_new();
    g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
    g_autoptr(FsRouter) r = fs_router_new(t, net, &opt);
    FsRoute a, b;
    fs_route_init(&a);
    fs_route_init(&b);
    guint relayed = 0;
    for (guint round = 0; round < 2; round++)
      for (guint i = 0; i < 8; i++)
        for (guint j = 8; j < 24 && j < ng; j += 3) {
          guint src = gpus[i], dst = gpus[j];
          GError *error = NULL;
          if ((i + j + round) % 2)
            ck_assert(fs_router_route_once(r, src, dst, 0, &a, &error));
          else
            ck_assert(fs_router_route(r, src, dst, 0, &a, &error));
          fs_assert_no_error(error);
          fresh_route(t, &opt, src, dst, 0, &b);
          assert_same_route(&a, &b);
          const FsTopoNode *first =
            fs_topo_node(t, fs_topo_channel_dst(t, g_array_index(a.hops, FsChannelId, 0)));
          relayed += first->kind == FS_NODE_SWITCH && first->model->u.sw.kind == FS_SWITCH_NVSWITCH;
        }
    /* PXN (a first hop into an NVSwitch) is taken unless it is off or
     * every pair goes through its own nearest NIC (NCCL_CROSS_NIC=1). */
    if (variant == 3 || variant == 1)
      ck_assert_uint_eq(relayed, 0);
    else
      ck_assert_uint_gt(relayed, 0);
    fs_route_clear(&a);
    fs_route_clear(&b);
  }
}
END_TEST

START_TEST(test_route_channels_match_topology)
{
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100.yaml", NULL, NULL);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) r = fs_router_new(t, net, NULL);
  ck_assert_uint_eq(fs_flownet_n_channels(net), fs_topo_n_channels(t));
  for (guint l = 0; l < fs_topo_n_links(t); l++) {
    const FsTopoLink *link = fs_topo_link(t, l);
    ck_assert(fs_flownet_channel_capacity(net, 2 * l) == link->bandwidth);
    ck_assert(fs_flownet_channel_latency(net, 2 * l) ==
              link->latency + fs_topo_node_latency(t, link->b) +
                (fs_topo_node(t, link->b)->kind == FS_NODE_CPU
                   ? fs_topo_node(t, link->b)->model->u.cpu.root_latency : 0));
  }
  g_autofree char *name = fs_router_channel_name(r, 0);
  ck_assert(strstr(name, " -> ") != NULL);
  ck_assert_str_eq(fs_route_kind_name(FS_ROUTE_NET_GDR), "net-gdr");
  guint g = node(t, "gpu2");
  ck_assert_int_eq(route_kind(r, g, g, NULL), FS_ROUTE_LOCAL);
}
END_TEST

typedef struct {
  FsSim *sim;
  FsFlowInfo drained, done;
  FsTime drained_at, done_at;
  guint n_drained, n_done;
} Phases;

static void phase_drained(void *ctx, const FsFlowInfo *info)
{
  Phases *p = ctx;
  ck_assert_uint_eq(p->n_done, 0);
  p->drained = *info;
  p->drained_at = fs_sim_now(p->sim);
  p->n_drained++;
}

static void phase_done(void *ctx, const FsFlowInfo *info)
{
  Phases *p = ctx;
  p->done = *info;
  p->done_at = fs_sim_now(p->sim);
  p->n_done++;
}

START_TEST(test_route_transfer_drained_over_paths)
{
  /* A transfer sprayed over the 4 NVSwitch planes of a DGX H100 (4 flows)
   * reports its drain once, when its last part has drained, with the info
   * that done gets L later (the whole transfer's drained and finish); a
   * zero-byte one drains inside the call.  Copies alike. */
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100.yaml", NULL, NULL);
  for (guint copies = 1; copies <= 3; copies += 2) {
    g_autoptr(FsSim) sim = fs_sim_new();
    g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
    g_autoptr(FsRouter) r = fs_router_new(t, net, NULL);
    Phases p = {.sim = sim};
    GError *error = NULL;
    ck_assert(fs_router_transfer_copies(r, node(t, "gpu0"), node(t, "gpu5"), GB, copies, 0, 0, 1,
                                        phase_done, phase_drained, &p, NULL, &error));
    ck_assert(fs_sim_run(sim, &error));
    fs_assert_no_error(error);
    ck_assert_uint_eq(p.n_drained, 1);
    ck_assert_uint_eq(p.n_done, 1);
    ck_assert_uint_eq(p.done.path_len, 4);
    ck_assert_uint_eq(p.drained.bytes, GB * copies);
    ck_assert_int_eq(p.drained_at, p.done.drained);
    ck_assert_int_eq(p.done_at, p.done.finish);
    ck_assert(p.done.finish > p.done.drained);
    ck_assert(memcmp(&p.drained, &p.done, sizeof p.done) == 0);
    Phases z = {.sim = sim};
    ck_assert(fs_router_transfer_copies(r, node(t, "gpu0"), node(t, "gpu5"), 0, copies,
                                        fs_sim_now(sim), 0, 1, phase_done, phase_drained, &z,
                                        NULL, &error));
    ck_assert_uint_eq(z.n_drained, 1);
    ck_assert_uint_eq(z.n_done, 0);
    ck_assert(fs_sim_run(sim, &error));
    ck_assert_uint_eq(z.n_done, 1);
  }
}
END_TEST

START_TEST(test_route_free_with_transfers_in_flight)
{
  /* Freeing the router (then the network) mid-run releases the transfers'
   * bookkeeping: the sanitizer build checks nothing leaks. */
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100.yaml", NULL, NULL);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) r = fs_router_new(t, net, NULL);
  Done d = {0};
  GError *error = NULL;
  ck_assert(fs_router_transfer(r, node(t, "gpu0"), node(t, "gpu1"), GB, 0, 0, 1, on_done, &d,
                               NULL, &error));
  ck_assert(fs_router_transfer(r, node(t, "gpu0"), node(t, "cpu1"), GB, 0, 0, 2, on_done, &d,
                               NULL, &error));
  ck_assert(fs_sim_run_until(sim, 100 * FS_US, &error));
  ck_assert_uint_eq(d.n, 0);
}
END_TEST

/* A host like a DGX H100's NVLink part (4 NVSwitch planes of 5, 4, 4 and
 * 5 links per GPU) whose gpu3 has ${sw0} links to plane 0: 5 uniform, 4 a
 * failed link. */
static const char degraded_yaml[] =
  "name: degraded\n"
  "parameters:\n"
  "  sw0: 5\n"
  "templates:\n"
  "  box:\n"
  "    nodes:\n"
  "      - {name: cpu0, model: xeon-platinum-8480c, socket: 0}\n"
  "      - {name: \"gpu[0-7]\", model: h100-sxm}\n"
  "      - {name: \"nvswitch[0-3]\", model: nvswitch-gen3}\n"
  "    links:\n"
  "      - {a: \"gpu[0-2]\", b: nvswitch0, model: nvlink4, count: 5}\n"
  "      - {a: gpu3, b: nvswitch0, model: nvlink4, count: \"${sw0}\"}\n"
  "      - {a: \"gpu[4-7]\", b: nvswitch0, model: nvlink4, count: 5}\n"
  "      - {a: \"gpu[0-7]\", b: nvswitch1, model: nvlink4, count: 4}\n"
  "      - {a: \"gpu[0-7]\", b: nvswitch2, model: nvlink4, count: 4}\n"
  "      - {a: \"gpu[0-7]\", b: nvswitch3, model: nvlink4, count: 5}\n"
  "      - {a: \"gpu[0-7]\", b: cpu0, model: pcie-gen5-x16}\n"
  "hosts:\n"
  "  - template: box\n";

#define N_MIXED 48

/* Runs N_MIXED NVLink transfers between the GPUs of t (pairs, sizes, rate
 * caps and start times drawn from a fixed seed; some to the same GPU at
 * once, some capped) with the router's plane bundles on or off, into
 * done (by transfer: the key is its index); returns the flows started. */
static uint64_t run_mixed(const FsTopo *t, gboolean bundles, FsFlowInfo done[N_MIXED],
                          guint *bundled_gpus)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  fs_flownet_set_check(net, TRUE);
  g_autoptr(FsRouter) r = fs_router_new(t, net, NULL);
  fs_router_set_plane_bundles(r, bundles);
  *bundled_gpus = fs_router_plane_bundle_gpus(r);
  guint n;
  const guint *gpus = fs_topo_gpus(t, &n);
  Done d = {0};
  GRand *rng = g_rand_new_with_seed(19);
  for (guint i = 0; i < N_MIXED; i++) {
    guint a = (guint)g_rand_int_range(rng, 0, (gint32)n);
    guint b = (a + 1 + (guint)g_rand_int_range(rng, 0, (gint32)n - 1)) % n;
    uint64_t bytes = (uint64_t)g_rand_int_range(rng, 1, 1 << 24) * 3 + (uint64_t)(i % 7);
    double cap = i % 3 == 0 ? 0 : g_rand_double_range(rng, 20e9, 300e9);
    FsTime start = (FsTime)g_rand_int_range(rng, 0, 200) * FS_US;
    GError *error = NULL;
    ck_assert(fs_router_transfer(r, gpus[a], gpus[b], bytes, start, cap, i, on_done, &d, NULL,
                                 &error));
    fs_assert_no_error(error);
  }
  g_rand_free(rng);
  GError *error = NULL;
  ck_assert(fs_sim_run(sim, &error));
  fs_assert_no_error(error);
  ck_assert_uint_eq(d.n, N_MIXED);
  ck_assert(fs_router_plane_bundles_held(r));
  for (guint i = 0; i < N_MIXED; i++)
    done[i] = d.info[i];
  FsFlowNetStats st;
  fs_flownet_stats(net, &st);
  return st.flows_started;
}

/* The transfers' records of run_mixed by their bytes and start (each is
 * one of a kind): the order of completion may differ between runs. */
static const FsFlowInfo *find_run(const FsFlowInfo *all, const FsFlowInfo *like)
{
  for (guint i = 0; i < N_MIXED; i++)
    if (all[i].bytes == like->bytes && all[i].start == like->start && all[i].src == like->src)
      return &all[i];
  ck_abort_msg("transfer of %" G_GUINT64_FORMAT " bytes not found", like->bytes);
  return NULL;
}

START_TEST(test_route_plane_bundles_match_per_plane)
{
  /* On a DGX H100 (uniform planes) a bundled transfer is one flow, and
   * the transfers drain and land when their per-plane parts would: within
   * the split's byte remainders (a few bytes' time, tens of ps) of
   * microsecond-long transfers. */
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100.yaml", NULL, NULL);
  FsFlowInfo plane[N_MIXED], bundle[N_MIXED];
  guint gp, gb;
  uint64_t fp = run_mixed(t, FALSE, plane, &gp);
  uint64_t fb = run_mixed(t, TRUE, bundle, &gb);
  ck_assert_uint_eq(gp, 8);
  ck_assert_uint_eq(gb, 8);
  ck_assert_uint_eq(fp, 4 * N_MIXED);
  ck_assert_uint_eq(fb, N_MIXED);
  FsTime worst = 0;
  for (guint i = 0; i < N_MIXED; i++) {
    const FsFlowInfo *b = find_run(bundle, &plane[i]);
    worst = MAX(worst, ABS(b->drained - plane[i].drained));
    ck_assert_int_eq(b->finish - b->drained, plane[i].finish - plane[i].drained);
    ck_assert_uint_eq(b->path_len, plane[i].path_len);
    /* A bundle's bottleneck is reported as a plane's channel. */
    ck_assert(b->bottleneck < (int64_t)fs_topo_n_channels(t));
  }
  ck_assert_msg(worst <= 50, "drain times differ by up to %" G_GINT64_FORMAT " ps", worst);
}
END_TEST

START_TEST(test_route_plane_bundles_skip_a_degraded_island)
{
  /* gpu3 with a failed link to plane 0: no bundle, and the runs are the
   * per-plane runs to the picosecond; with the link whole, bundles. */
  const char *const failed[] = {"sw0=4", NULL};
  g_autoptr(FsTopo) t = fs_test_topo_text(degraded_yaml, "degraded.yaml", failed, NULL);
  FsFlowInfo plane[N_MIXED], bundle[N_MIXED];
  guint gp, gb;
  uint64_t fp = run_mixed(t, FALSE, plane, &gp);
  uint64_t fb = run_mixed(t, TRUE, bundle, &gb);
  ck_assert_uint_eq(gb, 0);
  ck_assert_uint_eq(fp, fb);
  for (guint i = 0; i < N_MIXED; i++) {
    const FsFlowInfo *b = find_run(bundle, &plane[i]);
    ck_assert_int_eq(b->drained, plane[i].drained);
    ck_assert_int_eq(b->finish, plane[i].finish);
  }
  g_autoptr(FsTopo) whole = fs_test_topo_text(degraded_yaml, "degraded.yaml", NULL, NULL);
  fb = run_mixed(whole, TRUE, bundle, &gb);
  ck_assert_uint_eq(gb, 8);
  ck_assert_uint_eq(fb, N_MIXED);
}
END_TEST

START_TEST(test_route_plane_bundles_report_a_pinned_flow)
{
  /* A flow over one plane (as an NVLS leg or a PXN head) while a transfer
   * is bundled: the run did not hold.  Either alone, it did. */
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100.yaml", NULL, NULL);
  guint g0 = node(t, "gpu0"), g5 = node(t, "gpu5"), sw = node(t, "nvswitch1");
  guint n;
  const FsTopoAdj *adj = fs_topo_adj(t, g0, &n);
  FsChannelId plane = 0;
  for (guint k = 0; k < n; k++)
    if (adj[k].peer == sw)
      plane = fs_topo_channel_from(t, adj[k].link, g0);
  for (guint what = 0; what < 3; what++) {
    g_autoptr(FsSim) sim = fs_sim_new();
    g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
    g_autoptr(FsRouter) r = fs_router_new(t, net, NULL);
    fs_router_set_plane_bundles(r, TRUE);
    Done d = {0};
    GError *error = NULL;
    if (what != 1)
      ck_assert(fs_router_transfer(r, g0, g5, GB, 0, 0, 1, on_done, &d, NULL, &error));
    if (what != 0) {
      FsFlowSpec spec = {.path = &plane, .path_len = 1, .bytes = GB, .done = on_done, .ctx = &d};
      fs_flownet_start(net, &spec);
    }
    ck_assert(fs_sim_run(sim, &error));
    fs_assert_no_error(error);
    ck_assert(fs_router_plane_bundles_held(r) == (what != 2));
    char *name = fs_router_channel_name(r, fs_flownet_n_channels(net) - 1);
    ck_assert_str_eq(name, "NVSwitch planes -> gpu7");
    g_free(name);
    /* Set again (off, then on): counted afresh. */
    fs_router_set_plane_bundles(r, FALSE);
    fs_router_set_plane_bundles(r, TRUE);
    ck_assert(fs_router_plane_bundles_held(r));
  }
  /* Across two DGX H100 nodes a transfer to another rail's GPU crosses
   * NVLink to the GPU next to that rail's NIC first (PXN), on one plane:
   * pinned; one on its own rail, or within a node (bundled), is not. */
  g_autoptr(FsTopo) two = fs_test_topo("dgx-h100-ib-ndr.yaml", (const char *const[]){"nodes=2", NULL},
                                       NULL);
  {
    g_autoptr(FsSim) sim = fs_sim_new();
    g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
    g_autoptr(FsRouter) r = fs_router_new(two, net, NULL);
    guint a = node(two, "node0/gpu0");
    ck_assert(fs_router_plane_pinned(r, a, node(two, "node1/gpu3")));
    ck_assert(!fs_router_plane_pinned(r, a, node(two, "node1/gpu0")));
    ck_assert(!fs_router_plane_pinned(r, a, node(two, "node0/gpu5")));
  }
  /* The analytic model has none. */
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_ANALYTIC);
  g_autoptr(FsRouter) r = fs_router_new(t, net, NULL);
  ck_assert_uint_eq(fs_router_plane_bundle_gpus(r), 0);
}
END_TEST

START_TEST(test_route_plane_bundles_cover_uniform_switches)
{
  /* Which shipped systems have uniform NVSwitch planes: every GPU of an
   * NVSwitch system; none of a point-to-point mesh, a PCIe box or a
   * hybrid cube-mesh. */
  static const struct {
    const char *topo, *define;
    guint gpus;
  } cases[] = {
    {"dgx-h100.yaml", NULL, 8},     {"dgx-a100.yaml", NULL, 8},
    {"hgx-b200.yaml", NULL, 8},     {"dgx-2.yaml", NULL, 0},
    {"gb200-nvl72.yaml", NULL, 72}, {"dgx-h100-ib-ndr.yaml", "nodes=2", 16},
    {"h100-fullmesh-nvlink.yaml", NULL, 0}, {"dgx-1-v100.yaml", NULL, 0},
    {"pcie-gen4-8gpu.yaml", NULL, 0},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *const d[] = {cases[i].define, NULL};
    g_autoptr(FsTopo) t = fs_test_topo(cases[i].topo, cases[i].define ? d : NULL, NULL);
    g_autoptr(FsSim) sim = fs_sim_new();
    g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
    g_autoptr(FsRouter) r = fs_router_new(t, net, NULL);
    guint got = fs_router_plane_bundle_gpus(r);
    printf("%s: %u GPUs bundled\n", cases[i].topo, got);
    ck_assert_msg(got == cases[i].gpus, "%s: %u GPUs bundled, want %u", cases[i].topo, got,
                  cases[i].gpus);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("route");
  FS_ADD_TEST(s, test_route_dgx_h100_single_peer_gets_all_planes);
  FS_ADD_TEST(s, test_route_full_mesh_pair_gets_only_its_links);
  FS_ADD_TEST(s, test_route_pcie_gen4_host_limited_by_root_links);
  FS_ADD_TEST(s, test_route_p2p_level_and_disable);
  FS_ADD_TEST(s, test_route_dgx_h100_p2p_disabled_goes_through_host);
  FS_ADD_TEST(s, test_route_multi_node_uses_nearest_nic);
  FS_ADD_TEST(s, test_route_ib_disable);
  FS_ADD_TEST(s, test_route_oversubscribed_fat_tree_drops_by_the_ratio);
  FS_ADD_TEST(s, test_route_ecmp_is_deterministic_and_spreads);
  FS_ADD_TEST(s, test_route_ecmp_by_destination);
  FS_ADD_TEST(s, test_route_channels_match_topology);
  FS_ADD_TEST(s, test_route_memo_hit_is_identical);
  FS_ADD_TEST(s, test_route_cached_pieces_are_identical);
  FS_ADD_TEST(s, test_route_free_with_transfers_in_flight);
  FS_ADD_TEST(s, test_route_transfer_drained_over_paths);
  FS_ADD_TEST(s, test_route_plane_bundles_match_per_plane);
  FS_ADD_TEST(s, test_route_plane_bundles_skip_a_degraded_island);
  FS_ADD_TEST(s, test_route_plane_bundles_report_a_pinned_flow);
  FS_ADD_TEST(s, test_route_plane_bundles_cover_uniform_switches);
  return fs_test_run_suite(s);
}
