/* test-p2p.c — simulated p2pBandwidthLatencyTest / nvbandwidth matrices
 * (src/net/p2p.h) on the ready topologies, against the catalog's link
 * figures. */
#include <math.h>

#include "catalog/catalog.h"
#include "net/p2p.h"
#include "testutil.h"

static FsCatalog *catalog(void)
{
  static FsCatalog *cat = NULL;
  if (cat == NULL) {
    GError *error = NULL;
    cat = fs_catalog_load_default(NULL, &error);
    fs_assert_no_error(error);
  }
  return cat;
}

static FsTopo *load(const char *file)
{
  g_autofree char *rel = g_build_filename("topologies", file, NULL);
  g_autofree char *path = fs_test_source_path(rel);
  GError *error = NULL;
  FsTopo *t = fs_topo_load_file(path, catalog(), NULL, &error);
  fs_assert_no_error(error);
  return t;
}

static double bw(const char *model)
{
  return fs_catalog_get(catalog(), model)->u.link.bandwidth / 1e9;
}

static FsTime lat(const char *model)
{
  return fs_catalog_get(catalog(), model)->u.link.latency;
}

/* |got - want| within rel, or the test fails with both values. */
#define assert_near(got, want, rel)                                                       \
  ck_assert_msg(fabs((got) - (want)) <= (rel) * fabs(want), "%s = %.9g, want %.9g", #got, \
                (double)(got), (double)(want))

#define SIZE ((uint64_t)256 << 20)

START_TEST(test_p2p_dgx_h100_matrices)
{
  g_autoptr(FsTopo) t = load("dgx-h100.yaml");
  g_autoptr(FsP2pResult) r = fs_p2p_measure(t, FS_NET_MAXMIN, NULL, SIZE, 0, NULL);
  ck_assert_uint_eq(r->n, 8);
  double link = 18 * bw("nvlink4");
  /* The path: GPU -> NVSwitch -> GPU, two NVLink hops and one switch. */
  const FsModel *sw = fs_catalog_get(catalog(), "nvswitch-gen3");
  FsTime path = 2 * lat("nvlink4") + sw->u.sw.latency;
  double t_uni = (double)SIZE / (link * 1e9) * 1e12 + (double)path;
  for (guint i = 0; i < r->n; i++)
    for (guint j = 0; j < r->n; j++) {
      guint k = i * r->n + j;
      if (i == j) {
        ck_assert(r->uni_gbps[k] < 0 && !r->routed[k]);
        continue;
      }
      ck_assert_int_eq(r->kind[k], FS_ROUTE_NVLINK);
      assert_near(r->uni_gbps[k], (double)SIZE / t_uni * 1e3, 1e-6);
      assert_near(r->bi_gbps[k], 2 * r->uni_gbps[k], 1e-6);
      ck_assert(r->uni_gbps[k] > 370 && r->uni_gbps[k] < 377);
      /* 4 bytes: the path latency plus a picosecond or so of transfer. */
      ck_assert_msg(fabs(r->latency_us[k] * 1e6 - (double)path) < 100, "latency %.6f us",
                    r->latency_us[k]);
    }
  /* Host: every GPU alone gets its PCIe Gen5 x16; all at once share the
   * four PCIe switch uplinks, two GPUs per uplink. */
  double x16 = bw("pcie-gen5-x16");
  for (guint i = 0; i < r->n; i++) {
    ck_assert_int_ge(r->cpu[i], 0);
    assert_near(r->h2d_gbps[i], x16, 1e-3);
    assert_near(r->d2h_gbps[i], x16, 1e-3);
  }
  assert_near(r->h2d_all_gbps, 4 * x16, 1e-3);
}
END_TEST

START_TEST(test_p2p_full_mesh_pairs)
{
  g_autoptr(FsTopo) t = load("h100-fullmesh-nvlink.yaml");
  g_autoptr(FsP2pResult) r = fs_p2p_measure(t, FS_NET_MAXMIN, NULL, SIZE, 0, NULL);
  double one = bw("nvlink4");
  guint two = 0, three = 0;
  for (guint k = 0; k < r->n * r->n; k++) {
    if (!r->routed[k])
      continue;
    double links = r->uni_gbps[k] / one;
    ck_assert_msg(fabs(links - 2) < 0.01 || fabs(links - 3) < 0.01, "%.4f links", links);
    two += fabs(links - 2) < 0.01;
    three += fabs(links - 3) < 0.01;
  }
  ck_assert_uint_gt(two, 0);
  ck_assert_uint_gt(three, 0);
}
END_TEST

START_TEST(test_p2p_pcie_gen4_root_links_and_disable)
{
  g_autoptr(FsTopo) t = load("pcie-gen4-8gpu.yaml");
  FsRouteOptions opt;
  fs_route_options_init(&opt);
  opt.p2p_disable = TRUE;
  g_autoptr(FsP2pResult) r = fs_p2p_measure(t, FS_NET_MAXMIN, &opt, SIZE, 0, NULL);
  double x16 = bw("pcie-gen4-x16");
  /* Eight GPUs to host at once: one x16 uplink per socket. */
  assert_near(r->h2d_all_gbps, 2 * x16, 1e-3);
  for (guint k = 0; k < r->n * r->n; k++)
    if (r->routed[k])
      ck_assert_int_eq(r->kind[k], FS_ROUTE_HOST);
  /* Bidirectional through host memory on one switch: each direction
   * crosses the shared uplink, so both get it. */
  ck_assert(r->bi_gbps[0 * r->n + 1] > r->uni_gbps[0 * r->n + 1]);
}
END_TEST

START_TEST(test_p2p_analytic_equals_maxmin_alone)
{
  /* A unidirectional measurement is one transfer alone: both models agree.
   * (Not the bidirectional one on a shared path, nor all GPUs at once.) */
  g_autoptr(FsTopo) t = load("dgx-h100.yaml");
  g_autoptr(FsP2pResult) a = fs_p2p_measure(t, FS_NET_ANALYTIC, NULL, SIZE, 4, NULL);
  g_autoptr(FsP2pResult) m = fs_p2p_measure(t, FS_NET_MAXMIN, NULL, SIZE, 4, NULL);
  ck_assert_uint_eq(a->n, 4);
  for (guint k = 0; k < 16; k++) {
    ck_assert(a->uni_gbps[k] == m->uni_gbps[k]);
    ck_assert(a->latency_us[k] == m->latency_us[k]);
  }
  for (guint i = 0; i < 4; i++)
    ck_assert(a->h2d_gbps[i] == m->h2d_gbps[i]);
  /* All at once, analytic ignores the shared uplinks. */
  ck_assert(a->h2d_all_gbps > m->h2d_all_gbps * 1.5);
}
END_TEST

START_TEST(test_p2p_cross_node_uses_the_network)
{
  g_autoptr(FsTopo) t = load("dgx-h100-ib-ndr.yaml");
  g_autoptr(FsP2pResult) r = fs_p2p_measure(t, FS_NET_MAXMIN, NULL, 64 << 20, 16, NULL);
  ck_assert_uint_eq(r->n, 16);
  ck_assert_int_eq(r->kind[0 * 16 + 1], FS_ROUTE_NVLINK);
  ck_assert_int_eq(r->kind[0 * 16 + 8], FS_ROUTE_NET_GDR);
  ck_assert(r->uni_gbps[0 * 16 + 8] < bw("ib-ndr") && r->uni_gbps[0 * 16 + 8] > 0.99 * bw("ib-ndr"));
  ck_assert(r->latency_us[0 * 16 + 8] > r->latency_us[0 * 16 + 1]);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("p2p");
  FS_ADD_TEST(s, test_p2p_dgx_h100_matrices);
  FS_ADD_TEST(s, test_p2p_full_mesh_pairs);
  FS_ADD_TEST(s, test_p2p_pcie_gen4_root_links_and_disable);
  FS_ADD_TEST(s, test_p2p_analytic_equals_maxmin_alone);
  FS_ADD_TEST(s, test_p2p_cross_node_uses_the_network);
  return fs_test_run_suite(s);
}
