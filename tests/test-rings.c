/* test-rings.c — the NCCL-like ring search (src/coll/ring-search.h) and
 * the communicators built from it, and CollNet's scaling, on the ready
 * topologies: rings are Hamiltonian cycles, on the DGX-1 cube-mesh every
 * hop is an NVLink, on the NVLink full mesh the rings cover every link in
 * both directions in proportion to its link count, behind NVSwitches the
 * ring stays in GPU order, and all_reduce at 1 GiB reaches a bus bandwidth
 * set by the GPU's links (bounds derived from the topology, not outputs). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "coll/ring-search.h"
#include "collrun/bench.h"
#include "collrun/coll-topo.h"
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

static FsNcclParams *params(void)
{
  GError *error = NULL;
  FsNcclParams *p = fs_nccl_params_load_default(&error);
  fs_assert_no_error(error);
  return p;
}

/* A topology, its flow network and router, and a communicator over all
 * its GPUs. */
typedef struct {
  FsTopo *topo;
  FsSim *sim;
  FsFlowNet *net;
  FsRouter *router;
  FsComm *comm;
  FsNcclParams *np;
} Sys;

static void sys_open(Sys *s, const char *file, const char *const *defines)
{
  memset(s, 0, sizeof *s);
  g_autofree char *rel = g_build_filename("topologies", file, NULL);
  g_autofree char *path = fs_test_source_path(rel);
  GError *error = NULL;
  s->topo = fs_topo_load_file(path, catalog(), defines, &error);
  fs_assert_no_error(error);
  s->sim = fs_sim_new();
  s->net = fs_flownet_new(s->sim, FS_NET_MAXMIN);
  s->router = fs_router_new(s->topo, s->net, NULL);
  s->np = params();
  guint n;
  const guint *gpus = fs_topo_gpus(s->topo, &n);
  s->comm = fs_coll_comm_from_topo(s->router, gpus, n, s->np->max_channels, &error);
  fs_assert_no_error(error);
}

static void sys_close(Sys *s)
{
  fs_comm_free(s->comm);
  fs_router_free(s->router);
  fs_flownet_free(s->net);
  fs_sim_free(s->sim);
  fs_topo_free(s->topo);
  fs_nccl_params_free(s->np);
}

/* NVLink bandwidth (bytes/s per direction) of the links joining nodes a
 * and b directly, 0 if none. */
static double nvlink_between(const FsTopo *t, guint a, guint b)
{
  guint na;
  const FsTopoAdj *adj = fs_topo_adj(t, a, &na);
  double bw = 0;
  for (guint k = 0; k < na; k++) {
    const FsTopoLink *l = fs_topo_link(t, adj[k].link);
    if (adj[k].peer == b && l->model->u.link.family == FS_LINK_NVLINK)
      bw += l->bandwidth;
  }
  return bw;
}

/* NVLink bandwidth (bytes/s per direction) a GPU has in all. */
static double nvlink_total(const FsTopo *t, guint gpu)
{
  guint na;
  const FsTopoAdj *adj = fs_topo_adj(t, gpu, &na);
  double bw = 0;
  for (guint k = 0; k < na; k++) {
    const FsTopoLink *l = fs_topo_link(t, adj[k].link);
    if (l->model->u.link.family == FS_LINK_NVLINK)
      bw += l->bandwidth;
  }
  return bw;
}

/* Every ring of comm visits every rank exactly once. */
static void assert_hamiltonian(const FsComm *c)
{
  guint n = fs_comm_size(c);
  g_autofree gboolean *seen = g_new(gboolean, n);
  for (guint r = 0; r < MAX(fs_comm_n_rings(c), 1); r++) {
    const guint *o = fs_comm_ring(c, r);
    memset(seen, 0, sizeof(gboolean) * n);
    for (guint i = 0; i < n; i++) {
      ck_assert_uint_lt(o[i], n);
      ck_assert_msg(!seen[o[i]], "ring %u visits rank %u twice", r, o[i]);
      seen[o[i]] = TRUE;
    }
  }
}

/* all_reduce of bytes alone on the system (tuned as NCCL would, or with
 * algo forced); busbw in bytes/s. */
static double busbw(Sys *s, const char *algo, uint64_t bytes)
{
  GError *error = NULL;
  FsCollSysInfo sys;
  ck_assert(fs_coll_sysinfo_from_topo(s->np, s->router, s->comm, &sys, &error));
  g_autoptr(FsCollTopoNet) tnet = fs_coll_topo_net_new(s->router);
  FsCollSweep sw = {
    .op = FS_COLL_ALL_REDUCE, .dtype = FS_COLL_DT_FLOAT, .redop = FS_COLL_REDOP_SUM,
    .min_bytes = bytes, .max_bytes = bytes, .step_factor = 2,
  };
  fs_coll_prefs_init(&sw.prefs);
  if (algo != NULL)
    sw.prefs.algo = fs_coll_algo_find(algo);
  g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(FsNcclTestsRow));
  ck_assert(fs_coll_bench(s->np, &sys, s->comm, &sw, s->net, fs_coll_topo_xfer, tnet, rows, &error));
  fs_assert_no_error(error);
  const FsNcclTestsRow *r = &g_array_index(rows, FsNcclTestsRow, 0);
  printf("  %s %s: %.2f GB/s busbw (%s/%s/%u)\n", fs_topo_name(s->topo), algo ? algo : "tuned",
         r->oop_busbw, r->algo, r->proto, r->channels);
  return r->oop_busbw * 1e9;
}

/* Four GPUs in a square of single NVLinks (0-1-2-3-0) plus PCIe: two
 * rings (one each way round), every hop an NVLink, one link's rate each. */
START_TEST(test_rings_search_square)
{
  const char *yaml =
    "name: square\n"
    "nodes:\n"
    "  - {name: cpu0, model: xeon-e5-2698-v4, socket: 0}\n"
    "  - {name: pcie0, model: pex8796}\n"
    "  - {name: \"gpu[0-3]\", model: v100-sxm2-16gb}\n"
    "links:\n"
    "  - {a: gpu0, b: gpu1, model: nvlink2}\n"
    "  - {a: gpu1, b: gpu2, model: nvlink2}\n"
    "  - {a: gpu2, b: gpu3, model: nvlink2}\n"
    "  - {a: gpu3, b: gpu0, model: nvlink2}\n"
    "  - {a: \"gpu[0-3]\", b: pcie0, model: pcie-gen3-x16}\n"
    "  - {a: pcie0, b: cpu0, model: pcie-gen3-x16}\n";
  GError *error = NULL;
  g_autoptr(FsTopo) t = fs_topo_load_string(yaml, "square.yaml", catalog(), NULL, &error);
  fs_assert_no_error(error);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) router = fs_router_new(t, net, NULL);
  guint n;
  const guint *gpus = fs_topo_gpus(t, &n);
  FsRingSet rs;
  ck_assert(fs_coll_ring_search(router, gpus, n, 32, &rs, &error));
  ck_assert_uint_eq(rs.n_rings, 2);
  ck_assert_uint_eq(rs.kind, FS_ROUTE_NVLINK);
  double link = nvlink_between(t, gpus[0], gpus[1]);
  ck_assert(fabs(rs.speed - link) <= 1e-6 * link);
  for (guint r = 0; r < rs.n_rings; r++)
    for (guint i = 0; i < n; i++)
      ck_assert(nvlink_between(t, gpus[rs.order[r * n + i]], gpus[rs.order[r * n + (i + 1) % n]]) > 0);
  /* The two rings go opposite ways round. */
  ck_assert_uint_eq(rs.order[1], rs.order[n + n - 1]);
  fs_ring_set_clear(&rs);
  /* One GPU, or no rings wanted: nothing to search. */
  ck_assert(fs_coll_ring_search(router, gpus, 1, 32, &rs, &error));
  ck_assert_uint_eq(rs.n_rings, 0);
  fs_ring_set_clear(&rs);
}
END_TEST

/* DGX-1 V100: every hop of every ring is a direct NVLink, the rings carry
 * each GPU's whole NVLink bandwidth, and the channels are a multiple of
 * the rings. */
START_TEST(test_rings_cube_mesh_all_nvlink)
{
  Sys s;
  sys_open(&s, "dgx-1-v100.yaml", NULL);
  assert_hamiltonian(s.comm);
  guint nr = fs_comm_n_rings(s.comm), n = fs_comm_size(s.comm);
  ck_assert_uint_ge(nr, 2);
  for (guint r = 0; r < nr; r++) {
    const guint *o = fs_comm_ring(s.comm, r);
    for (guint i = 0; i < n; i++) {
      guint a = (guint)fs_comm_gpu(s.comm, o[i]), b = (guint)fs_comm_gpu(s.comm, o[(i + 1) % n]);
      ck_assert_msg(nvlink_between(s.topo, a, b) > 0, "ring %u: %s -> %s is not an NVLink", r,
                    fs_topo_node(s.topo, a)->name, fs_topo_node(s.topo, b)->name);
    }
  }
  double total = nvlink_total(s.topo, (guint)fs_comm_gpu(s.comm, 0));
  ck_assert(fabs(fs_comm_ring_bw(s.comm) - total) <= 1e-6 * total);
  FsCollSysInfo sys;
  GError *error = NULL;
  ck_assert(fs_coll_sysinfo_from_topo(s.np, s.router, s.comm, &sys, &error));
  ck_assert_uint_eq(sys.max_channels % nr, 0);
  ck_assert_uint_le(sys.max_channels, s.np->max_channels);
  ck_assert_uint_eq(sys.intra_hw, FS_NCCL_HW_NVLINK);
  sys_close(&s);
}
END_TEST

/* The 8× H100 NVLink full mesh: the rings use every NVLink pair in both
 * directions, each as often as it has links (so every link is equally
 * loaded), and carry the GPU's whole NVLink bandwidth. */
START_TEST(test_rings_full_mesh_cover_every_link)
{
  Sys s;
  sys_open(&s, "h100-fullmesh-nvlink.yaml", NULL);
  assert_hamiltonian(s.comm);
  guint nr = fs_comm_n_rings(s.comm), n = fs_comm_size(s.comm);
  g_autofree guint *uses = g_new0(guint, n * n);
  for (guint r = 0; r < nr; r++) {
    const guint *o = fs_comm_ring(s.comm, r);
    for (guint i = 0; i < n; i++)
      uses[o[i] * n + o[(i + 1) % n]]++;
  }
  guint g0 = (guint)fs_comm_gpu(s.comm, 0), g1 = (guint)fs_comm_gpu(s.comm, 1);
  double one = nvlink_between(s.topo, g0, g1) / 2; /* the file's NV2 pair: one link's rate */
  for (guint a = 0; a < n; a++)
    for (guint b = 0; b < n; b++) {
      if (a == b)
        continue;
      double bw = nvlink_between(s.topo, (guint)fs_comm_gpu(s.comm, a), (guint)fs_comm_gpu(s.comm, b));
      ck_assert(bw > 0);
      guint links = (guint)lround(bw / one);
      ck_assert_msg(uses[a * n + b] == links, "rank %u -> %u: %u rings on %u links", a, b,
                    uses[a * n + b], links);
    }
  double total = nvlink_total(s.topo, g0);
  ck_assert(fabs(fs_comm_ring_bw(s.comm) - total) <= 1e-6 * total);
  sys_close(&s);
}
END_TEST

/* Behind NVSwitches every order is as good: one ring, in GPU order, and
 * the channel count stays NCCL's MAXCHANNELS. */
START_TEST(test_rings_nvswitch_keeps_gpu_order)
{
  Sys s;
  sys_open(&s, "dgx-h100.yaml", NULL);
  ck_assert_uint_eq(fs_comm_n_rings(s.comm), 1);
  const guint *o = fs_comm_ring(s.comm, 0);
  for (guint i = 0; i < fs_comm_size(s.comm); i++)
    ck_assert_uint_eq(o[i], i);
  FsCollSysInfo sys;
  GError *error = NULL;
  ck_assert(fs_coll_sysinfo_from_topo(s.np, s.router, s.comm, &sys, &error));
  ck_assert_uint_eq(sys.max_channels, s.np->max_channels);
  sys_close(&s);
}
END_TEST

/* Several hosts: ring r follows a cycle through every host, entering each
 * at local rank r mod L, so every GPU's NIC sends and receives. */
START_TEST(test_rings_multi_host_enter_every_rank)
{
  const char *const defs[] = {"nodes=2", NULL};
  Sys s;
  sys_open(&s, "dgx-h100-ib-ndr.yaml", defs);
  assert_hamiltonian(s.comm);
  guint L = fs_comm_ppn(s.comm), nr = fs_comm_n_rings(s.comm), n = fs_comm_size(s.comm);
  ck_assert_uint_eq(nr % L, 0);
  g_autofree gboolean *entered = g_new0(gboolean, L);
  for (guint r = 0; r < nr; r++) {
    const guint *o = fs_comm_ring(s.comm, r);
    for (guint i = 0; i < n; i++) {
      guint nx = o[(i + 1) % n];
      if (fs_comm_host_index(s.comm, o[i]) != fs_comm_host_index(s.comm, nx)) {
        ck_assert_uint_eq(fs_comm_local_rank(s.comm, nx), r % L);
        entered[fs_comm_local_rank(s.comm, nx)] = TRUE;
      }
    }
  }
  for (guint j = 0; j < L; j++)
    ck_assert(entered[j]);
  sys_close(&s);
}
END_TEST

/* all_reduce at 1 GiB: the rings bring busbw close to the GPU's NVLink
 * bandwidth (and never above it) where before a single ring order left
 * most links idle. */
START_TEST(test_rings_busbw_reaches_links)
{
  const char *files[] = {"dgx-1-v100.yaml", "h100-fullmesh-nvlink.yaml"};
  for (guint f = 0; f < G_N_ELEMENTS(files); f++) {
    Sys s;
    sys_open(&s, files[f], NULL);
    double total = nvlink_total(s.topo, (guint)fs_comm_gpu(s.comm, 0));
    double bb = busbw(&s, "ring", 1u << 30);
    ck_assert_msg(bb >= 0.9 * total && bb <= 1.001 * total, "%s: busbw %.2f GB/s, NVLink %.2f GB/s",
                  files[f], bb / 1e9, total / 1e9);
    sys_close(&s);
  }
}
END_TEST

/* CollNet (SHARP) all_reduce on DGX H100 nodes over NDR: busbw does not
 * fall as nodes are added (2 → 64 nodes, the last spanning two leaf
 * groups), and sits near what NVLink allows: each GPU sends 2(L-1)/L of
 * the buffer over NVLink (scatter and gather), so algbw <= NVLink × L /
 * (2(L-1)). */
static void collnet_scaling(const guint *nodes, guint count, uint64_t bytes, double frac, double keep)
{
  double prev = 0;
  for (guint i = 0; i < count; i++) {
    g_autofree char *def = g_strdup_printf("nodes=%u", nodes[i]);
    const char *const defs[] = {def, NULL};
    Sys s;
    sys_open(&s, "dgx-h100-ib-ndr.yaml", defs);
    guint n = fs_comm_size(s.comm), L = fs_comm_ppn(s.comm);
    double nv = nvlink_total(s.topo, (guint)fs_comm_gpu(s.comm, 0));
    double bound = nv * L / (2.0 * (L - 1)) * 2.0 * (n - 1) / n;
    double bb = busbw(&s, "collnet_direct", bytes);
    ck_assert_msg(bb >= frac * bound && bb <= 1.001 * bound, "%u nodes: busbw %.2f GB/s, bound %.2f GB/s",
                  nodes[i], bb / 1e9, bound / 1e9);
    ck_assert_msg(bb >= prev * keep, "%u nodes: busbw %.2f GB/s fell from %.2f GB/s", nodes[i],
                  bb / 1e9, prev / 1e9);
    prev = bb;
    sys_close(&s);
  }
}

START_TEST(test_collnet_scaling_2_to_16)
{
  const guint nodes[] = {2, 4, 16};
  collnet_scaling(nodes, G_N_ELEMENTS(nodes), 256u << 20, 0.9, 0.999);
}
END_TEST

/* 64 nodes span two scalable units (32 nodes per leaf): the leaves reduce
 * into a spine instead of 32 hosts' streams sharing one uplink (which cut
 * busbw to a fifth).  A smaller buffer keeps the run short: its two-chunk
 * pipeline pays the tree's two extra store-and-forward hops (leaf to
 * spine and back) per chunk, so 64 nodes may sit a few percent below 16
 * here (at 256 MiB and above they are level: README seed comparisons). */
START_TEST(test_collnet_scaling_64)
{
  const guint nodes[] = {16, 64};
  collnet_scaling(nodes, G_N_ELEMENTS(nodes), 64u << 20, 0.6, 0.85);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("rings");
  FS_ADD_TEST(s, test_rings_search_square);
  FS_ADD_TEST(s, test_rings_cube_mesh_all_nvlink);
  FS_ADD_TEST(s, test_rings_full_mesh_cover_every_link);
  FS_ADD_TEST(s, test_rings_nvswitch_keeps_gpu_order);
  FS_ADD_TEST(s, test_rings_multi_host_enter_every_rank);
  FS_ADD_TEST(s, test_rings_busbw_reaches_links);
  FS_ADD_TEST(s, test_collnet_scaling_2_to_16);
  FS_ADD_TEST(s, test_collnet_scaling_64);
  return fs_test_run_suite(s);
}
