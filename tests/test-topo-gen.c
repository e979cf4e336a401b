/* test-topo-gen.c — fabric generators by counts (src/topo/gen.c): every
 * structure checked against its closed-form switch and link counts, and
 * validated (ports within the switch model, every GPU reachable). */
#include <string.h>

#include "testutil.h"
#include "topo-models.h"
#include "topo/gen.h"
#include "topo/paths.h"
#include "topo/topo.h"

static TestModels M;

/* n GPUs, each its own endpoint, in hosts of per_host GPUs. */
static FsTopo *gpus(guint n, guint per_host, guint **ep)
{
  FsTopo *t = fs_topo_new(NULL, "gen");
  *ep = g_new(guint, n);
  int host = -1;
  for (guint i = 0; i < n; i++) {
    if (i % per_host == 0) {
      char h[32];
      g_snprintf(h, sizeof h, "h%u", i / per_host);
      host = fs_topo_add_host(t, h);
    }
    char name[32];
    g_snprintf(name, sizeof name, "h%u/gpu%u", i / per_host, i % per_host);
    GError *e = NULL;
    ck_assert(fs_topo_add_node(t, name, &M.gpu, host, -1, NULL, 0, 0, &(*ep)[i], &e));
  }
  return t;
}

static guint count_switches(const FsTopo *t)
{
  guint n = 0;
  for (guint i = 0; i < fs_topo_n_nodes(t); i++)
    n += fs_topo_node(t, i)->kind == FS_NODE_SWITCH;
  return n;
}

/* The classic k-ary three-level fat-tree: k^3/4 hosts, 5k^2/4 switches,
 * 3k^3/4 links (hosts, leaf-agg, agg-core). */
START_TEST(test_gen_kary_fat_tree_counts)
{
  test_models_init(&M);
  const guint ks[] = {4, 8, 16, 32};
  for (guint i = 0; i < G_N_ELEMENTS(ks); i++) {
    guint k = ks[i], hosts = k * k * k / 4;
    FsModel sw = M.ibsw;
    sw.u.sw.ports = k;
    g_autofree guint *ep = NULL;
    g_autoptr(FsTopo) t = gpus(hosts, 8, &ep);
    FsFabricSpec spec = {&sw, &M.ib, 1.0, 3, "ft", {"test", 1, 1}};
    FsFabricInfo info;
    GError *e = NULL;
    ck_assert_msg(fs_topo_gen_fat_tree(t, ep, hosts, &spec, &info, &e), "k=%u: %s", k,
                  e ? e->message : "");
    fs_topo_finalize(t);
    ck_assert_uint_eq(info.levels, 3);
    ck_assert_uint_eq(info.leaves, k * k / 2);
    ck_assert_uint_eq(info.aggs, k * k / 2);
    ck_assert_uint_eq(info.cores, k * k / 4);
    ck_assert_uint_eq(count_switches(t), 5 * k * k / 4);
    ck_assert_uint_eq(fs_topo_n_links(t), 3 * k * k * k / 4);
    ck_assert_msg(fs_topo_validate(t, &e), "k=%u: %s", k, e ? e->message : "");
    /* Every switch uses exactly its k ports in a full k-ary tree. */
    for (guint n = 0; n < fs_topo_n_nodes(t); n++)
      if (fs_topo_node(t, n)->kind == FS_NODE_SWITCH &&
          !g_str_has_prefix(fs_topo_node(t, n)->name, "ft/core"))
        ck_assert_uint_eq(fs_topo_node_ports(t, n), k);
  }
}
END_TEST

/* Two levels with a 64-port switch, 16 to 2048 endpoints: ceil(n/32)
 * leaves, each with 32 up links; spines = smallest divisor of 32 that fits. */
START_TEST(test_gen_two_level_sizes)
{
  test_models_init(&M);
  const guint sizes[] = {16, 64, 256, 1024, 2048};
  for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
    guint n = sizes[i];
    g_autofree guint *ep = NULL;
    g_autoptr(FsTopo) t = gpus(n, 8, &ep);
    FsFabricSpec spec = {&M.ibsw64, &M.ib, 1.0, 2, "ft", {"test", 1, 1}};
    FsFabricInfo info;
    GError *e = NULL;
    ck_assert_msg(fs_topo_gen_fat_tree(t, ep, n, &spec, &info, &e), "%s", e ? e->message : "");
    fs_topo_finalize(t);
    guint leaves = (n + 31) / 32;
    ck_assert_uint_eq(info.leaves, leaves);
    guint spines = 1;
    while (32 % spines != 0 || leaves * (32 / spines) > 64)
      spines++;
    ck_assert_uint_eq(info.spines, spines);
    ck_assert_uint_eq(count_switches(t), leaves + spines);
    ck_assert_uint_eq(fs_topo_n_links(t), n + leaves * spines);
    ck_assert(fs_topo_validate(t, &e));
    /* Non-blocking: half the endpoints can send at full rate. */
    ck_assert_double_eq_tol(fs_topo_bisection(t), (n / 2) * 50e9, 1.0);
  }
}
END_TEST

/* 16,384 endpoints on 64-port switches need three levels: 512 leaves,
 * 16 pods of 32, 512 aggregation and 32 planes of 8 cores. */
START_TEST(test_gen_three_level_16k)
{
  test_models_init(&M);
  guint n = 16384;
  g_autofree guint *ep = NULL;
  g_autoptr(FsTopo) t = gpus(n, 8, &ep);
  FsFabricSpec spec = {&M.ibsw64, &M.ib, 1.0, 0, "ft", {"test", 1, 1}};
  FsFabricInfo info;
  GError *e = NULL;
  ck_assert(fs_topo_gen_fat_tree(t, ep, n, &spec, &info, &e));
  fs_topo_finalize(t);
  ck_assert_uint_eq(info.levels, 3);
  ck_assert_uint_eq(info.leaves, 512);
  ck_assert_uint_eq(info.aggs, 512);
  ck_assert_uint_eq(info.cores, 256);
  ck_assert_uint_eq(fs_topo_n_links(t), 16384 + 512 * 32 + 512 * 8);
  ck_assert(fs_topo_validate(t, &e));
  guint ng;
  fs_topo_gpus(t, &ng);
  ck_assert_uint_eq(ng, 16384);
}
END_TEST

/* Oversubscription 3:1 on 64 ports: 48 down, 16 up; the bisection of two
 * full leaves' worth of GPUs is limited to the up links. */
START_TEST(test_gen_oversubscription)
{
  test_models_init(&M);
  guint n = 96;
  g_autofree guint *ep = NULL;
  g_autoptr(FsTopo) t = gpus(n, 8, &ep);
  FsFabricSpec spec = {&M.ibsw64, &M.ib, 3.0, 2, "ft", {"test", 1, 1}};
  FsFabricInfo info;
  GError *e = NULL;
  ck_assert(fs_topo_gen_fat_tree(t, ep, n, &spec, &info, &e));
  fs_topo_finalize(t);
  ck_assert_uint_eq(info.leaves, 2);
  ck_assert_uint_eq(fs_topo_node_ports(t, (guint)fs_topo_find(t, "ft/leaf0")), 64);
  /* Leaf 0 holds the first half exactly: 16 up links of 50 GB/s. */
  ck_assert_double_eq_tol(fs_topo_bisection(t), 16 * 50e9, 1.0);
}
END_TEST

START_TEST(test_gen_too_big_for_levels)
{
  test_models_init(&M);
  g_autofree guint *ep = NULL;
  g_autoptr(FsTopo) t = gpus(64, 8, &ep);
  FsFabricSpec spec = {&M.ibsw, &M.ib, 1.0, 2, "ft", {"f.yaml", 3, 5}};
  GError *e = NULL;
  ck_assert(!fs_topo_gen_fat_tree(t, ep, 64, &spec, NULL, &e));
  fs_assert_error(e, FS_TOPO_ERROR, "f.yaml:3:5: 32 leaves do not fit under one spine level");
}
END_TEST

/* Rail-optimized: rail r of every host on the leaf of rail r. */
START_TEST(test_gen_rail_optimized)
{
  test_models_init(&M);
  guint hosts = 64, rails = 8, n = hosts * rails;
  g_autofree guint *ep = NULL;
  g_autoptr(FsTopo) t = gpus(n, rails, &ep);
  FsFabricSpec spec = {&M.ibsw64, &M.ib, 1.0, 0, "ib", {"test", 1, 1}};
  FsFabricInfo info;
  GError *e = NULL;
  ck_assert(fs_topo_gen_rail_optimized(t, ep, n, 0, 0, &spec, &info, &e));
  fs_topo_finalize(t);
  /* 32 hosts per leaf: 2 units × 8 rails. */
  ck_assert_uint_eq(info.leaves, 16);
  guint na;
  const FsTopoAdj *adj = fs_topo_adj(t, (guint)fs_topo_find(t, "h33/gpu5"), &na);
  ck_assert_uint_eq(na, 1);
  ck_assert_str_eq(fs_topo_node(t, adj[0].peer)->name, "ib/leaf13"); /* unit 1, rail 5 */
  ck_assert(fs_topo_validate(t, &e));
  ck_assert_double_eq_tol(fs_topo_bisection(t), (n / 2) * 50e9, 1.0);
}
END_TEST

/* Balanced dragonfly g = a*h + 1: one global link per pair of groups. */
START_TEST(test_gen_dragonfly_counts)
{
  test_models_init(&M);
  guint g = 9, a = 4, h = 2, p = 2, n = g * a * p;
  g_autofree guint *ep = NULL;
  g_autoptr(FsTopo) t = gpus(n, 8, &ep);
  FsDragonflySpec spec = {&M.ibsw64, &M.ib, NULL, g, a, h, p, "df", {"test", 1, 1}};
  FsFabricInfo info;
  GError *e = NULL;
  ck_assert(fs_topo_gen_dragonfly(t, ep, n, &spec, &info, &e));
  fs_topo_finalize(t);
  ck_assert_uint_eq(count_switches(t), g * a);
  guint local = g * a * (a - 1) / 2, global = g * (g - 1) / 2;
  ck_assert_uint_eq(fs_topo_n_links(t), local + global + n);
  /* Every router: a-1 local, h global, p endpoints. */
  for (guint i = 0; i < fs_topo_n_nodes(t); i++)
    if (fs_topo_node(t, i)->kind == FS_NODE_SWITCH)
      ck_assert_uint_eq(fs_topo_node_ports(t, i), a - 1 + h + p);
  ck_assert(fs_topo_validate(t, &e));
}
END_TEST

START_TEST(test_gen_nvlink_rack)
{
  test_models_init(&M);
  g_autoptr(FsTopo) t = fs_topo_new(NULL, "rack");
  FsModel sw = M.nvswitch;
  sw.u.sw.ports = 72;
  FsNvlRackSpec spec = {"rack", 18, 4, 2, 9, 2, &M.gpu, &M.cpu, &sw, &M.nvlink, &M.c2c, 0,
                        {"test", 1, 1}};
  GError *e = NULL;
  ck_assert(fs_topo_gen_nvlink_rack(t, &spec, &e));
  fs_topo_finalize(t);
  ck_assert(fs_topo_validate(t, &e));
  guint ng;
  const guint *g = fs_topo_gpus(t, &ng);
  ck_assert_uint_eq(ng, 72);
  ck_assert_uint_eq(fs_topo_n_hosts(t), 18);
  ck_assert_uint_eq(fs_topo_node_links(t, g[0], FS_LINK_NVLINK), 18);
  guint nv;
  ck_assert_int_eq(fs_topo_path_type(t, g[0], g[71], &nv), FS_PATH_NV);
  ck_assert_uint_eq(nv, 18);
  ck_assert_str_eq(fs_topo_node(t, g[5])->name, "rack/tray1/gpu1");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("topo-gen");
  FS_ADD_TEST(s, test_gen_kary_fat_tree_counts);
  FS_ADD_TEST(s, test_gen_two_level_sizes);
  FS_ADD_TEST(s, test_gen_three_level_16k);
  FS_ADD_TEST(s, test_gen_oversubscription);
  FS_ADD_TEST(s, test_gen_too_big_for_levels);
  FS_ADD_TEST(s, test_gen_rail_optimized);
  FS_ADD_TEST(s, test_gen_dragonfly_counts);
  FS_ADD_TEST(s, test_gen_nvlink_rack);
  return fs_test_run_suite(s);
}
