/* test-cluster.c — clusters of any node: topologies/cluster.yaml with every
 * node template of topologies/nodes/, and the language it needs (string
 * parameters, parameter constraints, template like:, in-network reduction
 * off, NVLink racks over template hosts, auto fabric models). */
#include <string.h>

#include "testutil.h"
#include "topo/identify.h"
#include "topo/paths.h"
#include "topo/topo.h"

static guint count_kind(const FsTopo *t, FsNodeKind kind, int host)
{
  guint n = 0;
  for (guint i = 0; i < fs_topo_n_nodes(t); i++)
    n += fs_topo_node(t, i)->kind == kind && (host < -1 || fs_topo_node(t, i)->host == host);
  return n;
}

static const char *path_label(const FsTopo *t, guint i, guint j, char *buf)
{
  guint n, nv;
  const guint *g = fs_topo_gpus(t, &n);
  FsPathType p = fs_topo_path_type(t, g[i], g[j], &nv);
  g_autofree char *l = fs_path_label(p, nv);
  g_strlcpy(buf, l, 16);
  return buf;
}

/* Every node template at 2 nodes: GPU model and count, NICs per host, NET
 * between the hosts (NV18 inside a GB200 rack), the node's parameters. */
START_TEST(test_cluster_every_node)
{
  static const struct {
    const char *node, *gpu, *nic, *fabric_switch;
    guint gpus_per_host, nics;
    const char *inside, *across;
  } want[] = {
    {"dgx-a100", "a100-sxm4-40gb", "connectx-6", "quantum-hdr", 8, 8, "NV12", "NET"},
    {"hgx-a100", "a100-sxm4-80gb", "connectx-6", "quantum-hdr", 8, 4, "NV12", "NET"},
    {"dgx-h100", "h100-sxm", "connectx-7", "quantum-2-ndr", 8, 8, "NV18", "NET"},
    {"dgx-h200", "h200-sxm", "connectx-7", "quantum-2-ndr", 8, 8, "NV18", "NET"},
    {"hgx-b200", "b200", "connectx-7", "quantum-2-ndr", 8, 8, "NV18", "NET"},
    {"gb200-nvl72", "gb200", "connectx-7", "quantum-2-ndr", 4, 4, "NV18", "NV18"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
    g_autofree char *node = g_strdup_printf("node=%s", want[i].node);
    const char *const defines[] = {node, "nodes=2", NULL};
    g_autoptr(FsTopo) t = fs_test_topo("cluster", defines, NULL);
    guint n;
    const guint *g = fs_topo_gpus(t, &n);
    ck_assert_uint_eq(n, 2 * want[i].gpus_per_host);
    ck_assert_str_eq(fs_topo_node(t, g[0])->model->name, want[i].gpu);
    ck_assert_uint_eq(fs_topo_n_hosts(t), 2);
    ck_assert_uint_eq(count_kind(t, FS_NODE_NIC, 1), want[i].nics);
    int nic = fs_topo_find(t, "node1/nic0");
    ck_assert_int_ge(nic, 0);
    ck_assert_str_eq(fs_topo_node(t, (guint)nic)->model->name, want[i].nic);
    int leaf = fs_topo_find(t, "ib/leaf0");
    ck_assert_int_ge(leaf, 0);
    ck_assert_str_eq(fs_topo_node(t, (guint)leaf)->model->name, want[i].fabric_switch);
    char buf[16];
    ck_assert_str_eq(path_label(t, 0, 1, buf), want[i].inside);
    ck_assert_str_eq(path_label(t, 0, want[i].gpus_per_host, buf), want[i].across);
  }
}
END_TEST

/* -D nics= sets NICs per node and the rails; the NICs spread over the PCIe switches. */
START_TEST(test_cluster_nics_per_node)
{
  const char *const twelve[] = {"nics=12", "nodes=2", NULL};
  g_autoptr(FsTopo) t = fs_test_topo("cluster", twelve, NULL);
  ck_assert_uint_eq(count_kind(t, FS_NODE_NIC, 0), 12);
  ck_assert_int_ge(fs_topo_find(t, "ib/leaf11"), 0);
  ck_assert_int_eq(fs_topo_find(t, "ib/leaf12"), -1);
  /* nic0-2 on pcie0, nic9-11 on pcie3. */
  for (guint k = 0; k < 12; k++) {
    g_autofree char *nic = g_strdup_printf("node0/nic%u", k);
    g_autofree char *sw = g_strdup_printf("node0/pcie%u", k / 3);
    int a = fs_topo_find(t, nic), b = fs_topo_find(t, sw);
    guint na;
    const FsTopoAdj *adj = fs_topo_adj(t, (guint)a, &na);
    gboolean found = FALSE;
    for (guint j = 0; j < na; j++)
      found |= adj[j].peer == (guint)b;
    ck_assert_msg(found, "%s is not on %s", nic, sw);
  }
  const char *const four[] = {"node=dgx-a100", "gpu=a100-sxm4-80gb", "nics=4", "nodes=2", NULL};
  g_autoptr(FsTopo) a = fs_test_topo("cluster", four, NULL);
  ck_assert_uint_eq(count_kind(a, FS_NODE_NIC, 1), 4);
}
END_TEST

/* A bad -D value fails at the declaration that forbids it, naming the -D. */
START_TEST(test_cluster_bad_values)
{
  static const struct {
    const char *def, *where, *what;
  } bad[] = {
    {"node=dgx-h300", "cluster.yaml:", "-D node=dgx-h300: parameter \"node\" is \"dgx-h300\"; "
     "expected one of dgx-a100, hgx-a100, dgx-h100, dgx-h200, hgx-b200, gb200-nvl72, aws-p5; "
     "did you "
     "mean \"dgx-h100\"?"},
    {"nics=5", "dgx-h100-node.yaml:", "-D nics=5: parameter \"nics\" is 5; expected one of 4, 8, 12"},
    {"nodes=0", "cluster.yaml:", "-D nodes=0: parameter \"nodes\" is 0; the least allowed is 1"},
    {"nodes=many", "cluster.yaml:", "-D nodes=many: parameter \"nodes\" must be an integer"},
    {"sharp=2", "cluster.yaml:", "parameter \"sharp\" is 2; expected one of 0, 1"},
    {"oversubscription=1:2", "cluster.yaml:", "oversubscription must be a ratio of at least 1"},
    {"nic=connectx-9", "dgx-h100-node.yaml:", "unknown device model \"connectx-9\""},
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    const char *const defines[] = {bad[i].def, NULL};
    GError *e = NULL;
    ck_assert_ptr_null(fs_test_topo("cluster", defines, &e));
    ck_assert_msg(e != NULL && e->domain == FS_TOPO_ERROR, "%s", bad[i].def);
    ck_assert_msg(strstr(e->message, bad[i].where) && strstr(e->message, bad[i].what),
                  "-D %s: %s", bad[i].def, e->message);
    g_clear_error(&e);
  }
  /* A wrapper pins its node: its declaration allows one value. */
  const char *const pinned[] = {"node=hgx-b200", NULL};
  GError *e = NULL;
  ck_assert_ptr_null(fs_test_topo("dgx-h100-ib-ndr", pinned, &e));
  fs_assert_error(e, FS_TOPO_ERROR, "dgx-h100-ib-ndr.yaml:13:3: -D node=hgx-b200: parameter "
                                    "\"node\" is \"hgx-b200\"; expected one of dgx-h100");
}
END_TEST

/* sharp=0 turns SHARP off on every fabric switch; sharp=1 leaves the model's. */
START_TEST(test_cluster_sharp)
{
  for (int on = 0; on <= 1; on++) {
    const char *const defines[] = {on ? "sharp=1" : "sharp=0", "nodes=2", NULL};
    g_autoptr(FsTopo) t = fs_test_topo("cluster", defines, NULL);
    guint ib = 0;
    for (guint i = 0; i < fs_topo_n_nodes(t); i++) {
      const FsTopoNode *x = fs_topo_node(t, i);
      if (x->kind == FS_NODE_SWITCH && x->model->u.sw.kind == FS_SWITCH_INFINIBAND) {
        ck_assert_int_eq(x->reduction, on);
        ib++;
      }
      /* NVSwitches keep NVLS either way. */
      if (x->kind == FS_NODE_SWITCH && x->model->u.sw.kind == FS_SWITCH_NVSWITCH)
        ck_assert(x->reduction);
    }
    ck_assert_uint_gt(ib, 0);
  }
}
END_TEST

/* GB200 NVL72: nodes are trays, 18 to a rack with its own 18 NVSwitch chips. */
START_TEST(test_cluster_gb200_racks)
{
  const char *const defines[] = {"node=gb200-nvl72", "nodes=36", NULL};
  g_autoptr(FsTopo) t = fs_test_topo("cluster", defines, NULL);
  guint n;
  fs_topo_gpus(t, &n);
  ck_assert_uint_eq(n, 144);
  ck_assert_uint_eq(fs_topo_n_hosts(t), 36);
  char buf[16];
  ck_assert_str_eq(path_label(t, 0, 71, buf), "NV18");
  ck_assert_str_eq(path_label(t, 71, 72, buf), "NET");
  ck_assert_str_eq(path_label(t, 72, 143, buf), "NV18");
  int sw = fs_topo_find(t, "nvl/rack1/swtray8/nvswitch1");
  ck_assert_int_ge(sw, 0);
  ck_assert_uint_eq(fs_topo_node_ports(t, (guint)sw), 72);
  ck_assert_int_eq(fs_topo_find(t, "nvl/rack2/swtray0/nvswitch0"), -1);
  /* A partial rack: 20 trays are a full rack and one of 2. */
  const char *const partial[] = {"node=gb200-nvl72", "nodes=20", NULL};
  g_autoptr(FsTopo) p = fs_test_topo("cluster", partial, NULL);
  sw = fs_topo_find(p, "nvl/rack1/swtray0/nvswitch0");
  ck_assert_int_ge(sw, 0);
  ck_assert_uint_eq(fs_topo_node_ports(p, (guint)sw), 8);
}
END_TEST

/* link: auto and switch: auto follow the NIC model: ConnectX-8 gives XDR and Quantum-X800. */
START_TEST(test_cluster_auto_fabric)
{
  const char *const defines[] = {"node=hgx-b200", "nic=connectx-8", "nodes=2", NULL};
  g_autoptr(FsTopo) t = fs_test_topo("cluster", defines, NULL);
  int leaf = fs_topo_find(t, "ib/leaf0");
  ck_assert_str_eq(fs_topo_node(t, (guint)leaf)->model->name, "quantum-x800");
  guint na;
  const FsTopoAdj *adj = fs_topo_adj(t, (guint)leaf, &na);
  ck_assert_uint_gt(na, 0);
  ck_assert_str_eq(fs_topo_link(t, adj[0].link)->model->name, "ib-xdr");
}
END_TEST

/* AWS p5 on EFA (topologies/aws-p5-efa.yaml): AMD hosts (NCCL's 2 us network post), one EFA
 * NIC per GPU at its measured goodput (4 x 100 Gb/s x 3108/3200 = 48.6 GB/s), NV18 inside, NET
 * across; cluster.yaml with node=aws-p5 and no switch says to name one (no switch model has EFA
 * ports). */
START_TEST(test_cluster_aws_p5)
{
  const char *const defines[] = {"nodes=2", NULL};
  g_autoptr(FsTopo) t = fs_test_topo("aws-p5-efa", defines, NULL);
  guint n;
  const guint *g = fs_topo_gpus(t, &n);
  ck_assert_uint_eq(n, 16);
  ck_assert_str_eq(fs_topo_node(t, g[0])->model->name, "h100-sxm");
  ck_assert_uint_eq(count_kind(t, FS_NODE_NIC, 1), 8);
  int cpu = fs_topo_find(t, "node1/cpu0");
  ck_assert_int_ge(cpu, 0);
  const FsModel *cm = fs_topo_node(t, (guint)cpu)->model;
  ck_assert_str_eq(cm->name, "epyc-7r13");
  ck_assert_int_eq(cm->u.cpu.vendor, FS_VENDOR_AMD);
  int nic = fs_topo_find(t, "node1/nic7");
  ck_assert_int_ge(nic, 0);
  const FsModel *nm = fs_topo_node(t, (guint)nic)->model;
  ck_assert_str_eq(nm->name, "efa-v2-p5");
  ck_assert_str_eq(nm->u.nic.port_link->name, "efa-v2-x4");
  ck_assert_double_eq_tol(nm->u.nic.port_link->u.link.bandwidth, 400e9 / 8 * 3108 / 3200, 1e6);
  char buf[16];
  ck_assert_str_eq(path_label(t, 0, 1, buf), "NV18");
  ck_assert_str_eq(path_label(t, 0, 8, buf), "NET");
  const char *const bare[] = {"node=aws-p5", "nodes=2", NULL};
  GError *e = NULL;
  ck_assert_ptr_null(fs_test_topo("cluster", bare, &e));
  ck_assert_msg(e != NULL && strstr(e->message, "switch: auto found no switch model whose ports "
                                                "are efa-v2-x4 links"),
                "%s", e ? e->message : "(no error)");
  g_clear_error(&e);
  /* The importers never pick the EFA NIC: it stands for 4 devices, and they see one (an
   * Ethernet port of 400 Gb/s, or any PCI id, is some other NIC). */
  const FsNicClues clues[] = {
    {.rate_gbps = 400, .family = FS_LINK_ETHERNET},
    {.rate_gbps = 100, .family = FS_LINK_ETHERNET},
    {.pci_vendor = 0x1d0f, .pci_device = 0xefa1, .family = -1},
  };
  for (guint i = 0; i < G_N_ELEMENTS(clues); i++) {
    FsIdentity id = {0};
    fs_identify_nic(fs_test_catalog(), &clues[i], &id);
    ck_assert_ptr_nonnull(id.model);
    ck_assert_str_ne(id.model->name, "efa-v2-p5");
    fs_identity_clear(&id);
  }
}
END_TEST

/* The language: string parameters, values:, like:, reduction:. */
START_TEST(test_cluster_language)
{
  GError *e = NULL;
  const char *text =
    "parameters:\n"
    "  kind: {default: h100-sxm, values: [h100-sxm, h200-sxm]}\n"
    "  count: {default: 2, min: 2, max: 4}\n"
    "  label: \"7\"\n"
    "templates:\n"
    "  box:\n"
    "    nodes:\n"
    "      - {name: \"gpu[0-${count-1}]\", model: \"${kind}\"}\n"
    "      - {name: sw, model: nvswitch-gen3, reduction: false}\n"
    "    links:\n"
    "      - {a: \"gpu[0-${count-1}]\", b: sw, model: nvlink4, count: 4}\n"
    "  copy: {like: box}\n"
    "hosts:\n"
    "  - {template: copy, name: \"n${label}x\"}\n";
  const char *const h200[] = {"kind=h200-sxm", NULL};
  g_autoptr(FsTopo) t = fs_test_topo_text(text, "lang.yaml", h200, &e);
  ck_assert_msg(t != NULL, "%s", e ? e->message : "");
  ck_assert_str_eq(fs_topo_node(t, (guint)fs_topo_find(t, "n7x/gpu1"))->model->name, "h200-sxm");
  ck_assert(!fs_topo_node(t, (guint)fs_topo_find(t, "n7x/sw"))->reduction);
  ck_assert_str_eq(fs_topo_param_string(t, 2), "7");

  static const struct {
    const char *def, *what;
  } bad[] = {
    {"count=5", "lang.yaml:3:3: -D count=5: parameter \"count\" is 5; the most allowed is 4"},
    {"kind=h100-sxn", "did you mean \"h100-sxm\"?"},
    {"kind=7", "parameter \"kind\" is \"7\"; expected one of h100-sxm, h200-sxm"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    const char *const d[] = {bad[i].def, NULL};
    ck_assert_ptr_null(fs_test_topo_text(text, "lang.yaml", d, &e));
    fs_assert_error(e, FS_TOPO_ERROR, bad[i].what);
  }
  /* A string in arithmetic, a like: loop, like: with nodes, reduction on a GPU. */
  static const struct {
    const char *text, *what;
  } wrong[] = {
    {"parameters: {k: word}\nnodes:\n  - {name: \"g[0-${k+1}]\", model: h100-sxm}\n",
     "parameter \"k\" is the string \"word\"; only integers take part in arithmetic"},
    {"templates:\n  a: {like: b}\n  b: {like: a}\nhosts:\n  - {template: a}\n",
     "through a chain of like:"},
    {"templates:\n  a: {nodes: []}\n  b: {like: a, nodes: []}\n",
     "a template with like: takes its nodes and links from the other template"},
    {"nodes:\n  - {name: g, model: h100-sxm, reduction: false}\n",
     "reduction: applies to switches"},
    {"parameters: {n: {default: x, min: 1}}\n", "min: and max: apply to integers"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(wrong); i++) {
    ck_assert_ptr_null(fs_test_topo_text(wrong[i].text, "w.yaml", NULL, &e));
    ck_assert_msg(e && g_str_has_prefix(e->message, "w.yaml:"), "not located: %s",
                  e ? e->message : "(no error)");
    fs_assert_error(e, FS_TOPO_ERROR, wrong[i].what);
  }
}
END_TEST

/* The same parameters give the same topology, twice. */
START_TEST(test_cluster_deterministic)
{
  const char *const defines[] = {"node=hgx-b200", "nodes=3", "nics=12", NULL};
  g_autoptr(FsTopo) a = fs_test_topo("cluster", defines, NULL);
  g_autoptr(FsTopo) b = fs_test_topo("cluster", defines, NULL);
  ck_assert_uint_eq(fs_topo_n_nodes(a), fs_topo_n_nodes(b));
  ck_assert_uint_eq(fs_topo_n_links(a), fs_topo_n_links(b));
  for (guint i = 0; i < fs_topo_n_nodes(a); i++)
    ck_assert_str_eq(fs_topo_node(a, i)->name, fs_topo_node(b, i)->name);
  for (guint i = 0; i < fs_topo_n_links(a); i++) {
    ck_assert_uint_eq(fs_topo_link(a, i)->a, fs_topo_link(b, i)->a);
    ck_assert_uint_eq(fs_topo_link(a, i)->b, fs_topo_link(b, i)->b);
  }
}
END_TEST

int main(void)
{
  const struct {
    const char *name;
    const TTest *fn;
  } tests[] = {
    {"every_node", test_cluster_every_node},
    {"nics_per_node", test_cluster_nics_per_node},
    {"bad_values", test_cluster_bad_values},
    {"sharp", test_cluster_sharp},
    {"gb200_racks", test_cluster_gb200_racks},
    {"auto_fabric", test_cluster_auto_fabric},
    {"aws_p5", test_cluster_aws_p5},
    {"language", test_cluster_language},
    {"deterministic", test_cluster_deterministic},
  };
  Suite *s = suite_create("cluster");
  for (guint i = 0; i < G_N_ELEMENTS(tests); i++) {
    TCase *tc = tcase_create(tests[i].name);
    tcase_add_unchecked_fixture(tc, fs_test_catalog_setup, NULL);
    tcase_add_test(tc, tests[i].fn);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
  }
  return fs_test_run_suite(s);
}
