/* test-topo.c — the topology loader and graph: the parser corpus
 * (tests/data/topo/{y,n,i}_*.yaml), every ready file in topologies/,
 * documented GPU counts, NVLink counts and nvidia-smi path matrices,
 * parameters, placement order and the adjacency index. */
#include <string.h>

#include "testutil.h"
#include "topo/names.h"
#include "topo/paths.h"
#include "topo/topo.h"
#include "util/yaml.h"

/* The label of the pair of GPU ranks (i, j). */
static char *label(const FsTopo *t, guint i, guint j)
{
  guint n, nv;
  const guint *g = fs_topo_gpus(t, &n);
  FsPathType p = fs_topo_path_type(t, g[i], g[j], &nv);
  return fs_path_label(p, nv);
}

static void assert_label(const FsTopo *t, guint i, guint j, const char *want)
{
  g_autofree char *got = label(t, i, j);
  ck_assert_msg(strcmp(got, want) == 0, "%s: GPU%u-GPU%u is %s, expected %s", fs_topo_name(t),
                i, j, got, want);
}

static char *read_text(const char *path)
{
  char *text = NULL;
  ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "cannot read %s", path);
  return g_strchomp(text);
}

START_TEST(test_topo_corpus)
{
  g_autofree char *dir = fs_test_data_path("topo");
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  const char *f;
  while ((f = g_dir_read_name(d)) != NULL)
    if (g_str_has_suffix(f, ".yaml"))
      g_ptr_array_add(names, g_strdup(f));
  guint ny = 0, nn = 0, ni = 0;
  for (guint i = 0; i < names->len; i++) {
    const char *name = names->pdata[i];
    g_autofree char *path = g_build_filename(dir, name, NULL);
    GError *e = NULL;
    FsTopo *t = fs_topo_load_file(path, fs_test_catalog(), NULL, &e);
    if (name[0] == 'y') {
      ck_assert_msg(t != NULL, "%s should load: %s", name, e ? e->message : "");
      ny++;
    } else if (name[0] == 'n') {
      ck_assert_msg(t == NULL, "%s should be rejected", name);
      g_autofree char *errpath = g_strndup(path, strlen(path) - 5);
      g_autofree char *errfile = g_strconcat(errpath, ".err", NULL);
      g_autofree char *frag = read_text(errfile);
      ck_assert_msg(e->domain == FS_TOPO_ERROR || e->domain == FS_YAML_ERROR,
                    "%s: error in an unexpected domain: %s", name, e->message);
      ck_assert_msg(strstr(e->message, frag) != NULL, "%s: \"%s\" does not contain \"%s\"", name,
                    e->message, frag);
      nn++;
    } else {
      ni++;
    }
    g_clear_error(&e);
    fs_topo_free(t);
  }
  ck_assert_uint_ge(nn, 20);
  ck_assert_uint_ge(ny, 5);
  ck_assert_uint_ge(ni, 2);
}
END_TEST

START_TEST(test_topo_ready_files_load)
{
  g_autofree char *dir = fs_test_source_path("topologies");
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  const char *f;
  guint n = 0;
  while ((f = g_dir_read_name(d)) != NULL) {
    if (!g_str_has_suffix(f, ".yaml"))
      continue;
    g_autofree char *path = g_build_filename(dir, f, NULL);
    GError *e = NULL;
    g_autoptr(FsTopo) t = fs_topo_load_file(path, fs_test_catalog(), NULL, &e);
    ck_assert_msg(t != NULL, "%s: %s", f, e ? e->message : "");
    n++;
  }
  ck_assert_uint_ge(n, 20);
}
END_TEST

/* The declared keys (topo/loader-schema.c): every table is well formed, and
 * a generator's keys are its own plus the shared ones (a fat-tree's key is
 * refused in a dragonfly, a dragonfly's accepted there). */
START_TEST(test_topo_schemas_declared)
{
  guint n;
  const FsSchemaEntry *e = fs_topo_schemas(&n);
  ck_assert_uint_ge(n, 10);
  for (guint i = 0; i < n; i++) {
    GError *err = NULL;
    ck_assert_msg(fs_schema_check(e[i].schema, &err), "%s: %s", e[i].id,
                  err ? err->message : "");
    ck_assert(g_str_has_prefix(e[i].id, "topo."));
  }
  const char *base = "nodes:\n  - {name: \"node[0-8]/nic0\", model: connectx-7, fabric: true}\n"
                     "generators:\n  - {type: dragonfly, endpoints: \"node[0-8]/nic0\", "
                     "switch: quantum-2-ndr, link: ib-ndr, groups: 9, routers: 4, "
                     "global_per_router: 2";
  g_autofree char *ok = g_strconcat(base, ", global_link: ib-ndr}\n", NULL);
  g_autofree char *bad = g_strconcat(base, ", levels: 2}\n", NULL);
  GError *err = NULL;
  g_autoptr(FsTopo) t = fs_topo_load_string(ok, "t.yaml", fs_test_catalog(), NULL, &err);
  ck_assert_msg(t != NULL, "%s", err ? err->message : "");
  ck_assert_ptr_null(fs_topo_load_string(bad, "t.yaml", fs_test_catalog(), NULL, &err));
  fs_assert_error(err, FS_YAML_ERROR, "t.yaml:4:134: unknown key \"levels\" in dragonfly generator");
}
END_TEST

/* GPU and host counts as documented in each file's header. */
START_TEST(test_topo_documented_counts)
{
  static const struct { const char *file; guint gpus, hosts, nvlinks; } want[] = {
    {"dgx-1-p100", 8, 1, 4},       {"dgx-1-v100", 8, 1, 6},
    {"ibm-minsky", 4, 1, 4},       {"summit-node", 6, 1, 6},
    {"dgx-2", 16, 1, 6},           {"dgx-a100", 8, 1, 12},
    {"dgx-h100", 8, 1, 18},        {"h100-fullmesh-nvlink", 8, 1, 18},
    {"hgx-b200", 8, 1, 18},        {"gb200-nvl72", 72, 18, 18},
    {"gh200", 1, 1, 0},            {"dgx-h100-superpod-256", 256, 32, 18},
    {"dgx-h100-ib-ndr", 32, 4, 18}, {"dgx-a100-ib-hdr", 32, 4, 12},
    {"pcie-gen3-8gpu", 8, 1, 0},   {"pcie-gen4-8gpu", 8, 1, 0},
    {"pcie-gen5-8gpu", 8, 1, 0},
  };
  for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
    g_autoptr(FsTopo) t = fs_test_topo(want[i].file, NULL, NULL);
    guint n;
    const guint *g = fs_topo_gpus(t, &n);
    ck_assert_msg(n == want[i].gpus, "%s: %u GPUs", want[i].file, n);
    ck_assert_msg(fs_topo_n_hosts(t) == want[i].hosts, "%s: %u hosts", want[i].file,
                  fs_topo_n_hosts(t));
    for (guint r = 0; r < n; r++)
      ck_assert_msg(fs_topo_node_links(t, g[r], FS_LINK_NVLINK) == want[i].nvlinks,
                    "%s: GPU%u has %u NVLinks", want[i].file, r,
                    fs_topo_node_links(t, g[r], FS_LINK_NVLINK));
  }
}
END_TEST

/* The published `nvidia-smi topo -m` matrix of DGX-1 V100 (WP-08437-002). */
START_TEST(test_topo_dgx1_v100_matrix)
{
  static const char *const m[8][8] = {
    {"X", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS"},
    {"NV1", "X", "NV2", "NV1", "SYS", "NV2", "SYS", "SYS"},
    {"NV1", "NV2", "X", "NV2", "SYS", "SYS", "NV1", "SYS"},
    {"NV2", "NV1", "NV2", "X", "SYS", "SYS", "SYS", "NV1"},
    {"NV2", "SYS", "SYS", "SYS", "X", "NV1", "NV1", "NV2"},
    {"SYS", "NV2", "SYS", "SYS", "NV1", "X", "NV2", "NV1"},
    {"SYS", "SYS", "NV1", "SYS", "NV1", "NV2", "X", "NV2"},
    {"SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", "X"},
  };
  g_autoptr(FsTopo) t = fs_test_topo("dgx-1-v100", NULL, NULL);
  for (guint i = 0; i < 8; i++)
    for (guint j = 0; j < 8; j++)
      assert_label(t, i, j, m[i][j]);
}
END_TEST

START_TEST(test_topo_dgx1_p100_cube_mesh)
{
  g_autoptr(FsTopo) t = fs_test_topo("dgx-1-p100", NULL, NULL);
  /* Linked: the quad and the peer i+4; the rest cross the sockets. */
  for (guint i = 0; i < 8; i++)
    for (guint j = 0; j < 8; j++) {
      if (i == j)
        continue;
      gboolean linked = (i / 4 == j / 4) || (i % 4 == j % 4);
      assert_label(t, i, j, linked ? "NV1" : "SYS");
    }
}
END_TEST

START_TEST(test_topo_nvswitch_systems)
{
  static const struct { const char *file; const char *label; } want[] = {
    {"dgx-h100", "NV18"}, {"dgx-a100", "NV12"}, {"dgx-2", "NV6"}, {"hgx-b200", "NV18"},
    {"gb200-nvl72", "NV18"}, {"dgx-h100-superpod-256", "NV18"},
  };
  for (guint k = 0; k < G_N_ELEMENTS(want); k++) {
    g_autoptr(FsTopo) t = fs_test_topo(want[k].file, NULL, NULL);
    guint n;
    fs_topo_gpus(t, &n);
    /* Every pair for small systems; a stride through the big ones. */
    guint step = n > 16 ? 7 : 1;
    for (guint i = 0; i < n; i += step)
      for (guint j = 0; j < n; j += step)
        assert_label(t, i, j, i == j ? "X" : want[k].label);
  }
}
END_TEST

START_TEST(test_topo_pcie_servers)
{
  g_autoptr(FsTopo) g3 = fs_test_topo("pcie-gen3-8gpu", NULL, NULL);
  assert_label(g3, 0, 1, "PIX");
  assert_label(g3, 0, 2, "PHB");
  assert_label(g3, 0, 4, "SYS");
  assert_label(g3, 6, 7, "PIX");
  g_autoptr(FsTopo) g4 = fs_test_topo("pcie-gen4-8gpu", NULL, NULL);
  assert_label(g4, 0, 1, "PIX");
  assert_label(g4, 0, 3, "PXB");
  assert_label(g4, 2, 7, "SYS");
  g_autoptr(FsTopo) g5 = fs_test_topo("pcie-gen5-8gpu", NULL, NULL);
  assert_label(g5, 0, 3, "PIX");
  assert_label(g5, 3, 4, "SYS");
  g_autoptr(FsTopo) minsky = fs_test_topo("ibm-minsky", NULL, NULL);
  assert_label(minsky, 0, 1, "NV2");
  assert_label(minsky, 1, 2, "SYS");
  g_autoptr(FsTopo) summit = fs_test_topo("summit-node", NULL, NULL);
  assert_label(summit, 0, 2, "NV2");
  assert_label(summit, 2, 3, "SYS");
  g_autoptr(FsTopo) mesh = fs_test_topo("h100-fullmesh-nvlink", NULL, NULL);
  assert_label(mesh, 0, 1, "NV2");
  assert_label(mesh, 0, 3, "NV3");
  assert_label(mesh, 5, 7, "NV2");
}
END_TEST

START_TEST(test_topo_cluster_net_and_order)
{
  const char *const defines[] = {"nodes=8", NULL};
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100-ib-ndr", defines, NULL);
  guint n;
  const guint *g = fs_topo_gpus(t, &n);
  ck_assert_uint_eq(n, 64);
  ck_assert_uint_eq(fs_topo_n_hosts(t), 8);
  for (guint r = 0; r < n; r++) {
    char want[32];
    g_snprintf(want, sizeof want, "node%u/gpu%u", r / 8, r % 8);
    const FsTopoNode *x = fs_topo_node(t, g[r]);
    ck_assert_str_eq(x->name, want);
    ck_assert_int_eq(x->gpu_rank, (int)r);
    ck_assert_int_eq(x->host, (int)(r / 8));
  }
  guint hn;
  const guint *hg = fs_topo_host_gpus(t, 3, &hn);
  ck_assert_uint_eq(hn, 8);
  ck_assert_uint_eq(hg[0], g[24]);
  ck_assert_str_eq(fs_topo_host_name(t, 3), "node3");
  assert_label(t, 0, 7, "NV18");
  assert_label(t, 0, 8, "NET");
  ck_assert_int_eq(fs_topo_find(t, "node5/gpu2"), (int)g[42]);
  ck_assert_int_eq(fs_topo_find(t, "node9/gpu0"), -1);
  /* A GPU on a command line: its name or its index in placement order. */
  ck_assert_int_eq(fs_topo_find_gpu(t, "node5/gpu2"), (int)g[42]);
  ck_assert_int_eq(fs_topo_find_gpu(t, "42"), (int)g[42]);
  ck_assert_int_eq(fs_topo_find_gpu(t, "64"), -1);
  ck_assert_int_eq(fs_topo_find_gpu(t, "-1"), -1);
  ck_assert_int_eq(fs_topo_find_gpu(t, "ib/leaf0"), -1);
  ck_assert_int_eq(fs_topo_find_gpu(t, ""), -1);
  /* Fabric switches belong to no host. */
  ck_assert_int_eq(fs_topo_node(t, (guint)fs_topo_find(t, "ib/leaf0"))->host, -1);
  const char *const *pn;
  const int64_t *pv;
  /* nodes first (the wrapper's), then cluster.yaml's and the node file's. */
  ck_assert_uint_ge(fs_topo_params(t, &pn, &pv), 2);
  ck_assert_str_eq(pn[0], "nodes");
  ck_assert_int_eq(pv[0], 8);
  ck_assert_ptr_null(fs_topo_param_string(t, 0));
  ck_assert_str_eq(pn[1], "node");
  ck_assert_str_eq(fs_topo_param_string(t, 1), "dgx-h100");
}
END_TEST

START_TEST(test_topo_adjacency_and_channels)
{
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100-ib-ndr", NULL, NULL);
  guint nn = fs_topo_n_nodes(t), total = 0;
  for (guint i = 0; i < nn; i++) {
    guint n;
    const FsTopoAdj *adj = fs_topo_adj(t, i, &n);
    total += n;
    for (guint e = 0; e < n; e++) {
      const FsTopoLink *l = fs_topo_link(t, adj[e].link);
      ck_assert((l->a == i && l->b == adj[e].peer) || (l->b == i && l->a == adj[e].peer));
      guint ch = fs_topo_channel_from(t, adj[e].link, i);
      ck_assert_uint_eq(fs_topo_channel_src(t, ch), i);
      ck_assert_uint_eq(fs_topo_channel_dst(t, ch), adj[e].peer);
      ck_assert_uint_eq(fs_topo_channel_link(ch), adj[e].link);
    }
  }
  ck_assert_uint_eq(total, 2 * fs_topo_n_links(t));
  ck_assert_uint_eq(fs_topo_n_channels(t), 2 * fs_topo_n_links(t));
  /* Bundles: the 5-link bundle to nvswitch0 carries 5 × the model. */
  guint g0 = (guint)fs_topo_find(t, "node0/gpu0"), n;
  const FsTopoAdj *adj = fs_topo_adj(t, g0, &n);
  gboolean seen = FALSE;
  for (guint e = 0; e < n; e++) {
    const FsTopoLink *l = fs_topo_link(t, adj[e].link);
    if (strcmp(fs_topo_node(t, adj[e].peer)->name, "node0/nvswitch0") == 0) {
      ck_assert_uint_eq(l->count, 5);
      ck_assert_double_eq_tol(l->bandwidth, 5 * l->model->u.link.bandwidth, 1e-3);
      seen = TRUE;
    }
  }
  ck_assert(seen);
  guint sw = (guint)fs_topo_find(t, "node0/nvswitch0");
  ck_assert_int_eq(fs_topo_node_latency(t, sw), fs_topo_node(t, sw)->model->u.sw.latency);
  ck_assert_int_eq(fs_topo_node_latency(t, g0), 0);
}
END_TEST

START_TEST(test_topo_defines_errors)
{
  g_autofree char *path = fs_test_source_path("topologies/dgx-h100-ib-ndr.yaml");
  const char *const unknown[] = {"nodez=3", NULL};
  const char *const bad[] = {"nodes=abc", NULL};
  const char *const syntax[] = {"nodes", NULL};
  GError *e = NULL;
  ck_assert_ptr_null(fs_topo_load_file(path, fs_test_catalog(), unknown, &e));
  fs_assert_error(e, FS_TOPO_ERROR, "-D nodez=3: the topology has no parameter \"nodez\"; "
                                    "its parameters are: nodes");
  ck_assert_ptr_null(fs_topo_load_file(path, fs_test_catalog(), bad, &e));
  fs_assert_error(e, FS_TOPO_ERROR, "parameter \"nodes\" must be an integer");
  ck_assert_ptr_null(fs_topo_load_file(path, fs_test_catalog(), syntax, &e));
  fs_assert_error(e, FS_TOPO_ERROR, "expected NAME=INTEGER");
}
END_TEST

START_TEST(test_topo_expressions)
{
  g_autoptr(GHashTable) p = g_hash_table_new(g_str_hash, g_str_equal);
  int64_t n = 4, v;
  g_hash_table_insert(p, (gpointer)"n", &n);
  GError *e = NULL;
  ck_assert(fs_topo_eval("2+3*4", p, &v, &e) && v == 14);
  ck_assert(fs_topo_eval("(2+3)*4", p, &v, &e) && v == 20);
  ck_assert(fs_topo_eval(" n*8-1 ", p, &v, &e) && v == 31);
  ck_assert(fs_topo_eval("-n+10", p, &v, &e) && v == 6);
  ck_assert(fs_topo_eval("7/2 + 7%4", p, &v, &e) && v == 6);
  ck_assert(!fs_topo_eval("9223372036854775807+1", p, &v, &e));
  fs_assert_error(e, FS_TOPO_ERROR, "integer overflow");
  ck_assert(!fs_topo_eval("n*", p, &v, &e));
  fs_assert_error(e, FS_TOPO_ERROR, "unexpected end");
  ck_assert(!fs_topo_eval("1.5", p, &v, &e));
  fs_assert_error(e, FS_TOPO_ERROR, "only integers");
  g_autofree char *s = NULL;
  ck_assert(fs_topo_subst("node[0-${n-1}]/gpu${n}", p, &s, &e));
  ck_assert_str_eq(s, "node[0-3]/gpu4");
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  ck_assert(fs_topo_expand("n[0-1]/g[08-10,3]", names, &e));
  ck_assert_uint_eq(names->len, 8);
  ck_assert_str_eq(names->pdata[0], "n0/g08");
  ck_assert_str_eq(names->pdata[3], "n0/g03");
  ck_assert_str_eq(names->pdata[7], "n1/g03");
}
END_TEST

START_TEST(test_topo_pairings)
{
  GError *e = NULL;
  g_autoptr(FsTopo) t = fs_test_topo_text(
    "nodes:\n"
    "  - {name: \"g[0-3]\", model: h100-sxm}\n"
    "  - {name: \"s[0-1]\", model: nvswitch-gen3}\n"
    "  - {name: \"n[0-3]\", model: connectx-7}\n"
    "links:\n"
    "  - {a: \"g[0-3]\", b: \"g[0-3]\", model: nvlink4, pairing: all}\n"
    "  - {a: \"g[0-3]\", b: \"s[0-1]\", model: nvlink4, count: 2}\n"
    "  - {a: \"g[0-3]\", b: \"n[0-3]\", model: pcie-gen5-x16}\n",
    "test.yaml", NULL, &e);
  ck_assert_msg(t != NULL, "%s", e ? e->message : "");
  /* mesh: 6 pairs; one-to-many: 8; zip: 4. */
  ck_assert_uint_eq(fs_topo_n_links(t), 6 + 8 + 4);
  g_autofree char *l = label(t, 0, 1);
  ck_assert_str_eq(l, "NV5"); /* 1 direct + min(4, 4) through the switches */
  g_autofree char *dot = fs_topo_to_dot(t);
  ck_assert_ptr_nonnull(strstr(dot, "graph \"test\" {"));
  ck_assert_ptr_nonnull(strstr(dot, "\"g0\" -- \"s0\" [label=\"nvlink4 x2\"];"));
  ck_assert_ptr_nonnull(strstr(dot, "subgraph \"cluster_0\""));
}
END_TEST

START_TEST(test_topo_bisection)
{
  /* Eight GPUs each with one 400G NIC on one leaf, halves of 4 GPUs: four
   * NIC links carry the cut. */
  g_autoptr(FsTopo) t = fs_test_topo("dgx-h100-ib-ndr", NULL, NULL);
  double b = fs_topo_bisection(t);
  const FsModel *ndr = fs_catalog_get(fs_test_catalog(), "ib-ndr");
  ck_assert_ptr_nonnull(ndr);
  /* 2 of 4 nodes on each side: 16 NICs' worth crosses. */
  ck_assert_double_eq_tol(b, 16 * ndr->u.link.bandwidth, 1e-3 * b);
  const char *const d84[] = {"nodes=84", NULL};
  g_autoptr(FsTopo) o = fs_test_topo("dgx-h100-ib-ndr-oversub", d84, NULL);
  /* Two scalable units of 42: the cut is the 8 leaves × 22 up links. */
  ck_assert_double_eq_tol(fs_topo_bisection(o), 8 * 22 * ndr->u.link.bandwidth, 1e-3 * b);
}
END_TEST

/* Text loads resolve includes from the folder of the name given. */
START_TEST(test_topo_load_string_include)
{
  g_autofree char *name = fs_test_data_path("topo/virtual.yaml");
  GError *e = NULL;
  g_autoptr(FsTopo) t = fs_test_topo_text(
    "include: inc/box.yaml\n"
    "hosts:\n"
    "  - template: box\n"
    "    name: \"n[0-2]\"\n"
    "generators:\n"
    "  - {type: fat-tree, endpoints: \"n[0-2]/nic[0-1]\", switch: quantum-2-ndr, link: ib-ndr}\n",
    name, NULL, &e);
  ck_assert_msg(t != NULL, "%s", e ? e->message : "");
  guint n;
  fs_topo_gpus(t, &n);
  ck_assert_uint_eq(n, 6);
  ck_assert_uint_eq(fs_topo_n_hosts(t), 3);
  ck_assert_str_eq(fs_topo_name(t), "virtual");
  assert_label(t, 0, 1, "NV18");
  assert_label(t, 1, 2, "NET");
  /* The same text from a folder without inc/ fails at the include. */
  ck_assert_ptr_null(fs_test_topo_text("include: inc/box.yaml\n", "/nonexistent/x.yaml", NULL, &e));
  fs_assert_error(e, FS_TOPO_ERROR, "x.yaml:1:10: included file \"/nonexistent/inc/box.yaml\"");
}
END_TEST

/* The loader's limits can be lowered and raised at run time (added with the
 * fuzz driver, which keeps inputs small this way). */
START_TEST(test_topo_limits_override)
{
  const FsTopoLimits saved = *fs_topo_limits();
  ck_assert_uint_eq(saved.names, FS_TOPO_MAX_NAMES);
  ck_assert_uint_eq(saved.nodes, FS_TOPO_MAX_NODES);
  GError *err = NULL;
  const char *four = "nodes:\n  - name: g[0-3]\n    model: h100-sxm\n"
                     "  - name: sw\n    model: nvswitch-gen3\n"
                     "links:\n  - {a: \"g[0-3]\", b: sw, model: nvlink4, count: 16}\n";
  fs_topo_set_limits(&(FsTopoLimits){3, saved.nodes, saved.links});
  ck_assert_ptr_null(fs_test_topo_text(four, "test.yaml", NULL, &err));
  fs_assert_error(err, FS_TOPO_ERROR,
                  "test.yaml:2:11: name range \"g[0-3]\" expands to 4 names; the limit is 3 "
                  "(FABRICSIM_MAX_NAMES raises it)");
  fs_topo_set_limits(&(FsTopoLimits){saved.names, 4, saved.links});
  ck_assert_ptr_null(fs_test_topo_text(four, "test.yaml", NULL, &err));
  fs_assert_error(err, FS_TOPO_ERROR, "test.yaml:4:11: more than 4 nodes");
  fs_topo_set_limits(&(FsTopoLimits){saved.names, saved.nodes, 3});
  ck_assert_ptr_null(fs_test_topo_text(four, "test.yaml", NULL, &err));
  fs_assert_error(err, FS_TOPO_ERROR, "test.yaml:7:5: more than 3 links");
  fs_topo_set_limits(&(FsTopoLimits){4, 5, 4});
  g_autoptr(FsTopo) t = fs_test_topo_text(four, "test.yaml", NULL, &err);
  fs_assert_no_error(err);
  ck_assert_uint_eq(fs_topo_n_nodes(t), 5);
  fs_topo_set_limits(&saved);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("topo");
  const struct { const char *name; const TTest *fn; } tests[] = {
    {"test_topo_corpus", test_topo_corpus},
    {"test_topo_ready_files_load", test_topo_ready_files_load},
    {"test_topo_schemas_declared", test_topo_schemas_declared},
    {"test_topo_documented_counts", test_topo_documented_counts},
    {"test_topo_dgx1_v100_matrix", test_topo_dgx1_v100_matrix},
    {"test_topo_dgx1_p100_cube_mesh", test_topo_dgx1_p100_cube_mesh},
    {"test_topo_nvswitch_systems", test_topo_nvswitch_systems},
    {"test_topo_pcie_servers", test_topo_pcie_servers},
    {"test_topo_cluster_net_and_order", test_topo_cluster_net_and_order},
    {"test_topo_adjacency_and_channels", test_topo_adjacency_and_channels},
    {"test_topo_defines_errors", test_topo_defines_errors},
    {"test_topo_expressions", test_topo_expressions},
    {"test_topo_pairings", test_topo_pairings},
    {"test_topo_bisection", test_topo_bisection},
    {"test_topo_load_string_include", test_topo_load_string_include},
    {"test_topo_limits_override", test_topo_limits_override},
  };
  for (guint i = 0; i < G_N_ELEMENTS(tests); i++) {
    TCase *tc = tcase_create(tests[i].name);
    tcase_add_unchecked_fixture(tc, fs_test_catalog_setup, NULL);
    tcase_add_test(tc, tests[i].fn);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
  }
  return fs_test_run_suite(s);
}
