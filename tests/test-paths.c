/* test-paths.c — GPU-pair path classification (src/topo/paths.c) on
 * hand-built graphs, one TCase per rule. */
#include <string.h>

#include "testutil.h"
#include "topo-models.h"
#include "topo/paths.h"
#include "topo/topo.h"

static TestModels M;

static guint node(FsTopo *t, const char *name, const FsModel *m, int host, int socket)
{
  guint i;
  GError *e = NULL;
  ck_assert(fs_topo_add_node(t, name, m, host, socket, "test", 1, 1, &i, &e));
  return i;
}

static void mklink(FsTopo *t, guint a, guint b, const FsModel *m, guint count)
{
  GError *e = NULL;
  ck_assert(fs_topo_add_link(t, a, b, m, count, "test", 1, 1, NULL, &e));
}

static FsPathType path(FsTopo *t, guint a, guint b, guint *nv)
{
  guint dummy;
  return fs_topo_path_type(t, a, b, nv ? nv : &dummy);
}

START_TEST(test_paths_self_and_direct_nvlink)
{
  test_models_init(&M);
  g_autoptr(FsTopo) t = fs_topo_new(NULL, "t");
  int h = fs_topo_add_host(t, "h");
  guint g0 = node(t, "g0", &M.gpu, h, -1), g1 = node(t, "g1", &M.gpu, h, -1);
  mklink(t, g0, g1, &M.nvlink, 2);
  mklink(t, g0, g1, &M.nvlink, 1); /* two bundles add up */
  fs_topo_finalize(t);
  guint nv;
  ck_assert_int_eq(path(t, g0, g0, &nv), FS_PATH_SELF);
  ck_assert_int_eq(path(t, g0, g1, &nv), FS_PATH_NV);
  ck_assert_uint_eq(nv, 3);
  g_autofree char *label = fs_path_label(FS_PATH_NV, nv);
  ck_assert_str_eq(label, "NV3");
}
END_TEST

START_TEST(test_paths_nvswitch_counts_min_plane_links)
{
  test_models_init(&M);
  g_autoptr(FsTopo) t = fs_topo_new(NULL, "t");
  int h = fs_topo_add_host(t, "h");
  guint g[3], s[4];
  for (guint i = 0; i < 3; i++) {
    char n[8];
    g_snprintf(n, sizeof n, "g%u", i);
    g[i] = node(t, n, &M.gpu, h, -1);
  }
  for (guint i = 0; i < 4; i++) {
    char n[8];
    g_snprintf(n, sizeof n, "s%u", i);
    s[i] = node(t, n, &M.nvswitch, h, -1);
  }
  /* DGX H100 style: 5+4+4+5 for g0, g1; g2 has only 4 links to s1. */
  const guint per[4] = {5, 4, 4, 5};
  for (guint i = 0; i < 2; i++)
    for (guint k = 0; k < 4; k++)
      mklink(t, g[i], s[k], &M.nvlink, per[k]);
  mklink(t, g[2], s[1], &M.nvlink, 4);
  fs_topo_finalize(t);
  guint nv;
  ck_assert_int_eq(path(t, g[0], g[1], &nv), FS_PATH_NV);
  ck_assert_uint_eq(nv, 18);
  ck_assert_int_eq(path(t, g[0], g[2], &nv), FS_PATH_NV);
  ck_assert_uint_eq(nv, 4);
}
END_TEST

/* Two sockets; socket 0 has two host bridges (CPU nodes c0a, c0b); under c0a
 * a switch tree sw0 -> (sw1, sw2); GPUs: a,b on sw1; c on sw2; d on sw3
 * (directly under c0a); e under c0b; f under socket 1. */
START_TEST(test_paths_pcie_levels)
{
  test_models_init(&M);
  g_autoptr(FsTopo) t = fs_topo_new(NULL, "t");
  int h = fs_topo_add_host(t, "h");
  guint c0a = node(t, "c0a", &M.cpu, h, 0), c0b = node(t, "c0b", &M.cpu, h, 0);
  guint c1 = node(t, "c1", &M.cpu, h, 1);
  guint sw0 = node(t, "sw0", &M.pcisw, h, -1), sw1 = node(t, "sw1", &M.pcisw, h, -1);
  guint sw2 = node(t, "sw2", &M.pcisw, h, -1), sw3 = node(t, "sw3", &M.pcisw, h, -1);
  guint a = node(t, "a", &M.gpu, h, -1), b = node(t, "b", &M.gpu, h, -1);
  guint c = node(t, "c", &M.gpu, h, -1), d = node(t, "d", &M.gpu, h, -1);
  guint e = node(t, "e", &M.gpu, h, -1), f = node(t, "f", &M.gpu, h, -1);
  mklink(t, sw0, c0a, &M.pcie, 1);
  mklink(t, sw1, sw0, &M.pcie, 1);
  mklink(t, sw2, sw0, &M.pcie, 1);
  mklink(t, sw3, c0a, &M.pcie, 1);
  mklink(t, a, sw1, &M.pcie, 1);
  mklink(t, b, sw1, &M.pcie, 1);
  mklink(t, c, sw2, &M.pcie, 1);
  mklink(t, d, sw3, &M.pcie, 1);
  mklink(t, e, c0b, &M.pcie, 1);
  mklink(t, f, c1, &M.pcie, 1);
  mklink(t, c0a, c0b, &M.upi, 1);
  mklink(t, c0b, c1, &M.upi, 1);
  fs_topo_finalize(t);
  ck_assert_int_eq(path(t, a, b, NULL), FS_PATH_PIX);
  ck_assert_int_eq(path(t, a, c, NULL), FS_PATH_PXB);
  ck_assert_int_eq(path(t, a, d, NULL), FS_PATH_PHB);
  ck_assert_int_eq(path(t, a, e, NULL), FS_PATH_NODE);
  ck_assert_int_eq(path(t, a, f, NULL), FS_PATH_SYS);
  ck_assert_int_eq(path(t, f, a, NULL), FS_PATH_SYS);
}
END_TEST

START_TEST(test_paths_net_between_hosts)
{
  test_models_init(&M);
  g_autoptr(FsTopo) t = fs_topo_new(NULL, "t");
  int h0 = fs_topo_add_host(t, "h0"), h1 = fs_topo_add_host(t, "h1");
  guint g0 = node(t, "h0/g", &M.gpu, h0, -1), g1 = node(t, "h1/g", &M.gpu, h1, -1);
  guint n0 = node(t, "h0/n", &M.nic, h0, -1), n1 = node(t, "h1/n", &M.nic, h1, -1);
  guint sw = node(t, "sw", &M.ibsw, -1, -1);
  mklink(t, g0, n0, &M.pcie, 1);
  mklink(t, g1, n1, &M.pcie, 1);
  mklink(t, n0, sw, &M.ib, 1);
  mklink(t, n1, sw, &M.ib, 1);
  fs_topo_finalize(t);
  ck_assert_int_eq(path(t, g0, g1, NULL), FS_PATH_NET);
}
END_TEST

START_TEST(test_paths_multinode_nvlink_is_nv)
{
  test_models_init(&M);
  g_autoptr(FsTopo) t = fs_topo_new(NULL, "t");
  int h0 = fs_topo_add_host(t, "h0"), h1 = fs_topo_add_host(t, "h1");
  guint g0 = node(t, "h0/g", &M.gpu, h0, -1), g1 = node(t, "h1/g", &M.gpu, h1, -1);
  guint s0 = node(t, "h0/s", &M.nvswitch, h0, -1), s1 = node(t, "h1/s", &M.nvswitch, h1, -1);
  guint spine = node(t, "spine", &M.nvswitch, -1, -1);
  mklink(t, g0, s0, &M.nvlink, 18);
  mklink(t, g1, s1, &M.nvlink, 18);
  mklink(t, s0, spine, &M.nvlink, 18);
  mklink(t, s1, spine, &M.nvlink, 18);
  fs_topo_finalize(t);
  guint nv;
  ck_assert_int_eq(path(t, g0, g1, &nv), FS_PATH_NV);
  ck_assert_uint_eq(nv, 18);
}
END_TEST

START_TEST(test_paths_cpu_nvlink_and_c2c_are_host_links)
{
  test_models_init(&M);
  g_autoptr(FsTopo) t = fs_topo_new(NULL, "t");
  int h = fs_topo_add_host(t, "h");
  guint c0 = node(t, "c0", &M.cpu, h, 0), c1 = node(t, "c1", &M.cpu, h, 1);
  guint g0 = node(t, "g0", &M.gpu, h, -1), g1 = node(t, "g1", &M.gpu, h, -1);
  guint g2 = node(t, "g2", &M.gpu, h, -1);
  mklink(t, g0, c0, &M.nvlink, 2); /* POWER-style NVLink to the CPU */
  mklink(t, g1, c0, &M.c2c, 1);    /* Grace-style C2C */
  mklink(t, g2, c1, &M.nvlink, 2);
  mklink(t, c0, c1, &M.upi, 1);
  fs_topo_finalize(t);
  ck_assert_int_eq(path(t, g0, g1, NULL), FS_PATH_PHB);
  ck_assert_int_eq(path(t, g0, g2, NULL), FS_PATH_SYS);
}
END_TEST

START_TEST(test_paths_matrix_text)
{
  test_models_init(&M);
  g_autoptr(FsTopo) t = fs_topo_new(NULL, "t");
  int h = fs_topo_add_host(t, "h");
  guint g0 = node(t, "gpu0", &M.gpu, h, -1), g1 = node(t, "gpu1", &M.gpu, h, -1);
  mklink(t, g0, g1, &M.nvlink, 4);
  fs_topo_finalize(t);
  g_autofree char *m = fs_topo_paths_matrix(t);
  ck_assert_ptr_nonnull(strstr(m, "      GPU0  GPU1  Name\n"));
  ck_assert_ptr_nonnull(strstr(m, "GPU0  X     NV4   gpu0\n"));
  ck_assert_ptr_nonnull(strstr(m, "GPU1  NV4   X     gpu1\n"));
  ck_assert_ptr_nonnull(strstr(m, "Legend:"));
  ck_assert_str_eq(fs_path_type_name(FS_PATH_PXB), "PXB");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("paths");
  FS_ADD_TEST(s, test_paths_self_and_direct_nvlink);
  FS_ADD_TEST(s, test_paths_nvswitch_counts_min_plane_links);
  FS_ADD_TEST(s, test_paths_pcie_levels);
  FS_ADD_TEST(s, test_paths_net_between_hosts);
  FS_ADD_TEST(s, test_paths_multinode_nvlink_is_nv);
  FS_ADD_TEST(s, test_paths_cpu_nvlink_and_c2c_are_host_links);
  FS_ADD_TEST(s, test_paths_matrix_text);
  return fs_test_run_suite(s);
}
