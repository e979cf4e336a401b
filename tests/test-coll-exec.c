/* test-coll-exec.c — running collective plans on the flow engine, on
 * hand-built channel graphs: bandwidth-bound rings reach the link rate,
 * small messages cost the protocol latencies, concurrent collectives on
 * shared links slow each other, NVLS beats the ring through a switch, and
 * runs are deterministic. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coll/plan.h"
#include "collrun/alone.h"
#include "collrun/bench.h"
#include "collrun/coll-topo.h"
#include "collrun/exec.h"
#include "collrun/exec-params.h"
#include "testutil.h"

#define MAXN 17

/* n GPUs (nodes 0..n-1), each ordered pair joined by its own channel of
 * bw bytes/s; with a switch (node n), GPU↔switch channels instead and
 * GPU→GPU routes through the switch. */
typedef struct {
  FsSim *sim;
  FsFlowNet *net;
  guint n;
  gboolean star;
  FsChannelId path[MAXN + 1][MAXN + 1][2];
  guint len[MAXN + 1][MAXN + 1];
} Graph;

static void graph_init(Graph *g, guint n, double bw, gboolean star)
{
  memset(g, 0, sizeof *g);
  g->sim = fs_sim_new();
  g->net = fs_flownet_new(g->sim, FS_NET_MAXMIN);
  g->n = n;
  g->star = star;
  if (!star) {
    for (guint i = 0; i < n; i++)
      for (guint j = 0; j < n; j++)
        if (i != j) {
          g->path[i][j][0] = fs_flownet_add_channel(g->net, bw, 0);
          g->len[i][j] = 1;
        }
    return;
  }
  FsChannelId up[MAXN], down[MAXN];
  for (guint i = 0; i < n; i++) {
    up[i] = fs_flownet_add_channel(g->net, bw, 0);
    down[i] = fs_flownet_add_channel(g->net, bw, 0);
    g->path[i][n][0] = up[i], g->len[i][n] = 1;
    g->path[n][i][0] = down[i], g->len[n][i] = 1;
  }
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < n; j++)
      if (i != j) {
        g->path[i][j][0] = up[i];
        g->path[i][j][1] = down[j];
        g->len[i][j] = 2;
      }
}

static void graph_free(Graph *g)
{
  fs_flownet_free(g->net);
  fs_sim_free(g->sim);
}

/* The transfer callback: one flow on the hand-built path. */
static gboolean xfer(void *ctx, int src, int dst, uint64_t bytes, double rate_cap, uint64_t key,
                     FsFlowDoneFn done, FsFlowDoneFn drained, void *done_ctx, void *user,
                     GError **error)
{
  (void)key;
  Graph *g = ctx;
  if (src < 0 || dst < 0 || (guint)src > g->n || (guint)dst > g->n || g->len[src][dst] == 0) {
    g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_NO_ROUTE, "no route %d -> %d", src, dst);
    return FALSE;
  }
  FsFlowSpec spec = {
    .src = src, .dst = dst, .path = g->path[src][dst], .path_len = g->len[src][dst],
    .bytes = bytes, .rate_cap = rate_cap, .start = fs_sim_now(g->sim), .done = done,
    .drained = drained, .ctx = done_ctx, .user = user,
  };
  fs_flownet_start(g->net, &spec);
  return TRUE;
}

static FsComm *comm_on(guint n, gboolean nvls)
{
  FsComm *c = fs_comm_new(n);
  for (guint r = 0; r < n; r++)
    fs_comm_set_gpu(c, r, (int)r);
  if (nvls) {
    int sw = (int)n;
    fs_comm_set_nvls_switch(c, 0, &sw, 1);
  }
  return c;
}

static FsCollPlan *plan(const FsComm *c, const char *algo, FsCollOp op, uint64_t bytes, guint nch,
                        uint64_t chunk, uint64_t slice)
{
  FsCollRequest req = {
    .op = op, .bytes = bytes, .dtype = FS_COLL_DT_FLOAT, .proto = FS_PROTO_SIMPLE,
    .nchannels = nch, .chunk_bytes = chunk, .slice_bytes = slice,
  };
  GError *err = NULL;
  FsCollPlan *p = fs_coll_plan_new(c, fs_coll_algo_find(algo), &req, &err);
  fs_assert_no_error(err);
  return p;
}

static double run_alone_us(Graph *g, const FsCollPlan *p, const FsCollExecParams *ep)
{
  FsTime t = 0;
  GError *err = NULL;
  ck_assert(fs_coll_run_alone(g->net, p, ep, xfer, g, &t, &err));
  fs_assert_no_error(err);
  return fs_time_to_us(t);
}

static const FsCollExecParams simple_params = {
  .base_latency = 0, .step_latency = {0, 0}, .payload = 1.0,
};

START_TEST(test_exec_ring_reaches_link_bandwidth)
{
  /* 8 GPUs, 100 GB/s links: ring all_reduce of 256 MiB approaches
   * busbw = 100 GB/s, even with NCCL's 3.4 µs per step. */
  const double B = 100e9;
  const uint64_t S = 256u << 20;
  Graph g;
  graph_init(&g, 8, B, FALSE);
  g_autoptr(FsComm) c = comm_on(8, FALSE);
  g_autoptr(FsCollPlan) p = plan(c, "ring", FS_COLL_ALL_REDUCE, S, 1, 2 << 20, 1 << 20);
  FsCollExecParams ep = simple_params;
  ep.step_latency[0] = 3400 * FS_NS;
  double us = run_alone_us(&g, p, &ep);
  double busbw = (double)S / (us * 1e-6) * 1.75;
  ck_assert_msg(busbw > 0.95 * B && busbw <= B * 1.0001, "busbw %.3f GB/s", busbw / 1e9);
  graph_free(&g);
}
END_TEST

START_TEST(test_exec_ring_local_copy)
{
  /* The ring kernel's local copy per loop (a reduction step of the chunk,
   * timed at reduce_bw): with the copy at half the link rate, each loop
   * takes 2(n-1) link steps plus the time of 2 link steps, so busbw ≈
   * B · 2(n-1) / (2(n-1) + 2): 0.5 B on 2 GPUs, 0.875 B on 8.  Free (0),
   * both reach the link rate. */
  const double B = 100e9;
  const uint64_t S = 256u << 20;
  const guint ns[2] = {2, 8};
  for (guint k = 0; k < 2; k++) {
    guint n = ns[k];
    double want = (double)(2 * (n - 1)) / (2 * (n - 1) + 2);
    for (int copy = 0; copy < 2; copy++) {
      Graph g;
      graph_init(&g, n, B, FALSE);
      g_autoptr(FsComm) c = comm_on(n, FALSE);
      g_autoptr(FsCollPlan) p = plan(c, "ring", FS_COLL_ALL_REDUCE, S, 1, 2 << 20, 1 << 20);
      FsCollExecParams ep = simple_params;
      ep.reduce_bw = copy ? B / 2 : 0;
      double busbw = (double)S / (run_alone_us(&g, p, &ep) * 1e-6) * 2 * (n - 1) / n;
      double f = busbw / B;
      if (copy)
        ck_assert_msg(fabs(f - want) < 0.05 * want, "%u GPUs, copy at B/2: busbw %.3f B, want %.3f B", n, f, want);
      else
        ck_assert_msg(f > 0.95 && f <= 1.0001, "%u GPUs, free copy: busbw %.3f B", n, f);
      graph_free(&g);
    }
  }
}
END_TEST

START_TEST(test_exec_ring_step_latency_across_hosts)
{
  /* A ring all_gather over 2 hosts × 4 GPUs, one loop of 256 KiB blocks: with
   * ring_step_latency_inter L the connection across hosts idles L between its
   * n-1 = 7 steps, so the run takes about 6 L more (each step waits for the one
   * before it on that connection); the NVLink connections do not pay it, and
   * a plan inside one host is unchanged. */
  const double B = 25e9;
  const uint64_t blk = 256u << 10, S = blk * 8;
  const FsTime L = 14 * FS_US;
  for (int hosts = 1; hosts <= 2; hosts++) {
    Graph g;
    graph_init(&g, 8, B, FALSE);
    g_autoptr(FsComm) c = comm_on(8, FALSE);
    for (guint r = 0; r < 8; r++)
      fs_comm_set_host(c, r, hosts == 2 ? r / 4 : 0);
    g_autoptr(FsCollPlan) p = plan(c, "ring", FS_COLL_ALL_GATHER, S, 1, 2 << 20, 1 << 20);
    FsCollExecParams ep = simple_params;
    double t0 = run_alone_us(&g, p, &ep);
    ep.ring_step_latency_inter = L;
    double t1 = run_alone_us(&g, p, &ep);
    double want = hosts == 2 ? 6 * fs_time_to_us(L) : 0;
    ck_assert_msg(fabs((t1 - t0) - want) <= 0.1 * fs_time_to_us(L) + 1e-6,
                  "%d host(s): %.3f us -> %.3f us, want +%.3f", hosts, t0, t1, want);
    graph_free(&g);
  }
}
END_TEST

START_TEST(test_exec_latency_floor_matches_protocol)
{
  /* 8 bytes, LL: base 6.6 µs + 14 steps × 0.6 µs; the bytes are noise. */
  Graph g;
  graph_init(&g, 8, 100e9, FALSE);
  g_autoptr(FsComm) c = comm_on(8, FALSE);
  g_autoptr(FsCollPlan) p = plan(c, "ring", FS_COLL_ALL_REDUCE, 8, 1, 32768, 0);
  FsCollExecParams ep = {
    .base_latency = 6600 * FS_NS, .step_latency = {600 * FS_NS, 2700 * FS_NS}, .payload = 0.5,
  };
  double us = run_alone_us(&g, p, &ep);
  ck_assert_msg(fabs(us - 15.0) < 0.005, "time %.6f us", us);
  /* Tree on one host is a chain: 2 × 7 hops. */
  g_autoptr(FsCollPlan) t = plan(c, "tree", FS_COLL_ALL_REDUCE, 8, 1, 32768, 0);
  us = run_alone_us(&g, t, &ep);
  ck_assert_msg(fabs(us - (6.6 + 14 * 0.6)) < 0.005, "tree time %.6f us", us);
  graph_free(&g);
}
END_TEST

typedef struct {
  guint done;
} Count;

static void count_done(void *ctx, FsCollRun *run)
{
  (void)run;
  ((Count *)ctx)->done++;
}

START_TEST(test_exec_concurrent_collectives_share_links)
{
  const uint64_t S = 64u << 20;
  Graph g;
  graph_init(&g, 4, 50e9, FALSE);
  g_autoptr(FsComm) c = comm_on(4, FALSE);
  g_autoptr(FsCollPlan) p = plan(c, "ring", FS_COLL_ALL_REDUCE, S, 1, 1 << 20, 512 << 10);
  double alone = run_alone_us(&g, p, &simple_params);
  graph_free(&g);
  /* Two at once on the same links: each takes about twice as long. */
  graph_init(&g, 4, 50e9, FALSE);
  Count cnt = {0};
  g_autoptr(FsCollRun) a = fs_coll_run_start(g.net, p, &simple_params, xfer, &g, 0, count_done, &cnt);
  g_autoptr(FsCollRun) b = fs_coll_run_start(g.net, p, &simple_params, xfer, &g, 0, count_done, &cnt);
  GError *err = NULL;
  ck_assert(fs_sim_run(g.sim, &err));
  ck_assert_uint_eq(cnt.done, 2);
  ck_assert(fs_coll_run_finish(a, &err) && fs_coll_run_finish(b, &err));
  double ta = fs_time_to_us(fs_coll_run_end_time(a)), tb = fs_time_to_us(fs_coll_run_end_time(b));
  ck_assert_msg(ta > 1.8 * alone && tb > 1.8 * alone, "alone %.1f, together %.1f / %.1f us", alone, ta, tb);
  ck_assert_msg(ta < 2.2 * alone && tb < 2.2 * alone, "alone %.1f, together %.1f / %.1f us", alone, ta, tb);
  /* Disjoint rings (reversed order uses the other direction): no slowdown. */
  graph_free(&g);
  graph_init(&g, 4, 50e9, FALSE);
  g_autoptr(FsComm) rc = comm_on(4, FALSE);
  guint rev[4] = {3, 2, 1, 0};
  ck_assert(fs_comm_set_ring(rc, 0, rev, &err));
  g_autoptr(FsCollPlan) q = plan(rc, "ring", FS_COLL_ALL_REDUCE, S, 1, 1 << 20, 512 << 10);
  g_autoptr(FsCollRun) x = fs_coll_run_start(g.net, p, &simple_params, xfer, &g, 0, NULL, NULL);
  g_autoptr(FsCollRun) y = fs_coll_run_start(g.net, q, &simple_params, xfer, &g, 0, NULL, NULL);
  ck_assert(fs_sim_run(g.sim, &err));
  ck_assert_double_eq_tol(fs_time_to_us(fs_coll_run_end_time(x)), alone, alone * 1e-6);
  ck_assert_double_eq_tol(fs_time_to_us(fs_coll_run_end_time(y)), alone, alone * 1e-6);
  graph_free(&g);
}
END_TEST

START_TEST(test_exec_nvls_beats_ring_through_switch)
{
  /* Through one switch, the ring's every byte crosses two links; NVLS
   * crosses each GPU's link about once each way: algbw ≈ B × n/(n+1). */
  const double B = 100e9;
  const uint64_t S = 128u << 20;
  Graph g;
  graph_init(&g, 8, B, TRUE);
  g_autoptr(FsComm) c = comm_on(8, TRUE);
  g_autoptr(FsCollPlan) nv = plan(c, "nvls", FS_COLL_ALL_REDUCE, S, 1, 2 << 20, 0);
  g_autoptr(FsCollPlan) ring = plan(c, "ring", FS_COLL_ALL_REDUCE, S, 1, 2 << 20, 1 << 20);
  double t_nv = run_alone_us(&g, nv, &simple_params);
  double t_ring = run_alone_us(&g, ring, &simple_params);
  double alg_nv = (double)S / (t_nv * 1e-6), alg_ring = (double)S / (t_ring * 1e-6);
  ck_assert_msg(alg_nv > 0.8 * B * 8 / 9, "NVLS algbw %.1f GB/s", alg_nv / 1e9);
  ck_assert_msg(alg_ring < 1.01 * B * 8 / 14, "ring algbw %.1f GB/s", alg_ring / 1e9);
  ck_assert_double_gt(alg_nv, 1.4 * alg_ring);
  graph_free(&g);
}
END_TEST

START_TEST(test_exec_every_algorithm_completes)
{
  Graph g;
  graph_init(&g, 8, 40e9, TRUE);
  g_autoptr(FsComm) c = comm_on(8, TRUE);
  for (guint a = 0; fs_coll_algos[a]; a++)
    for (guint op = 0; op < FS_COLL_N_OPS; op++) {
      if (fs_coll_algos[a]->unsupported(c, op) != NULL)
        continue;
      g_autoptr(FsCollPlan) p = plan(c, fs_coll_algos[a]->name, op, 1 << 20, 2, 65536, 0);
      double us = run_alone_us(&g, p, &simple_params);
      ck_assert_msg(us > 0 || op == FS_COLL_BARRIER, "%s %s", fs_coll_algos[a]->name, fs_coll_op_name(op));
    }
  graph_free(&g);
}
END_TEST

START_TEST(test_exec_deterministic)
{
  double t[2];
  for (guint i = 0; i < 2; i++) {
    Graph g;
    graph_init(&g, 6, 30e9, TRUE);
    g_autoptr(FsComm) c = comm_on(6, TRUE);
    g_autoptr(FsCollPlan) p = plan(c, "tree", FS_COLL_ALL_REDUCE, 3 << 20, 3, 131072, 0);
    t[i] = run_alone_us(&g, p, &simple_params);
    graph_free(&g);
  }
  ck_assert(t[0] == t[1]);
}
END_TEST

START_TEST(test_exec_unbound_endpoint_fails)
{
  Graph g;
  graph_init(&g, 4, 30e9, FALSE);
  g_autoptr(FsComm) c = fs_comm_new(4);
  g_autoptr(FsCollPlan) p = plan(c, "ring", FS_COLL_ALL_REDUCE, 1 << 16, 1, 4096, 0);
  FsTime t;
  GError *err = NULL;
  ck_assert(!fs_coll_run_alone(g.net, p, &simple_params, xfer, &g, &t, &err));
  fs_assert_error(err, FS_COLL_ERROR, "no topology node");
  graph_free(&g);
}
END_TEST

START_TEST(test_exec_ring_step_host_excess)
{
  /* A Simple ring's connection across hosts idles NCCL's network step (Ring/Simple interLat,
   * 14 µs) between steps, and on an AMD host also what its network post overhead adds to
   * NCCL's per-step ring latency: max(NVLink 3.4, 2 µs × 3) - 3.4 = 2.6 µs
   * (models/nccl coll_net_channel ring_step_host_excess); an Intel host's 1 µs × 3 hides
   * under the NVLink latency, and LL128 or one host pays nothing. */
  GError *err = NULL;
  g_autoptr(FsNcclParams) np = fs_nccl_params_load_default(&err);
  fs_assert_no_error(err);
  ck_assert_double_eq(np->coll_ring_step_host_excess, 1.0);
  FsCollSysInfo sys = {
    .arch = FS_NCCL_ROW_HOPPER, .intra_hw = FS_NCCL_HW_NVLINK, .cpu = FS_NCCL_CPU_INTEL,
    .bw_intra = 45, .bw_inter = 25, .max_channels = 16, .graph_channels = 8, .ll128 = TRUE,
  };
  FsCollChoice ch = {.algo = fs_coll_algo_find("ring"), .proto = FS_PROTO_SIMPLE, .nchannels = 16};
  ck_assert_ptr_nonnull(ch.algo);
  double lat[2][2][2]; /* [hosts-1][AMD][LL128] */
  for (int h = 0; h < 2; h++)
    for (int amd = 0; amd < 2; amd++)
      for (int ll128 = 0; ll128 < 2; ll128++) {
        g_autoptr(FsComm) c = comm_on(16, FALSE);
        for (guint r = 0; r < 16; r++)
          fs_comm_set_host(c, r, h ? r / 8 : 0);
        sys.cpu = amd ? FS_NCCL_CPU_AMD : FS_NCCL_CPU_INTEL;
        ch.proto = ll128 ? FS_PROTO_LL128 : FS_PROTO_SIMPLE;
        FsCollExecParams ep;
        fs_coll_exec_params_depth(np, &sys, c, FS_COLL_ALL_GATHER, 64u << 20, &ch, 15, &ep);
        lat[h][amd][ll128] = fs_time_to_us(ep.ring_step_latency_inter);
      }
  ck_assert_msg(fabs(lat[1][0][0] - 14.0) < 1e-6, "Intel: %.3f us", lat[1][0][0]);
  ck_assert_msg(fabs(lat[1][1][0] - 16.6) < 1e-6, "AMD: %.3f us", lat[1][1][0]);
  for (int amd = 0; amd < 2; amd++) {
    ck_assert_double_eq(lat[0][amd][0], 0);
    ck_assert_double_eq(lat[1][amd][1], 0);
  }
  np->coll_ring_step_host_excess = 0;
  g_autoptr(FsComm) c = comm_on(16, FALSE);
  for (guint r = 0; r < 16; r++)
    fs_comm_set_host(c, r, r / 8);
  sys.cpu = FS_NCCL_CPU_AMD;
  ch.proto = FS_PROTO_SIMPLE;
  FsCollExecParams ep;
  fs_coll_exec_params_depth(np, &sys, c, FS_COLL_ALL_GATHER, 64u << 20, &ch, 15, &ep);
  ck_assert_msg(fabs(fs_time_to_us(ep.ring_step_latency_inter) - 14.0) < 1e-6, "AMD, no excess");
}
END_TEST

START_TEST(test_exec_tree_proxy_posts)
{
  /* A tree's GPU facing the network posts an isend and an irecv per chunk for each of the
   * channels its proxy serves (models/nccl coll_net_channel tree_step_posts: 2), each
   * getNetOverhead: 16 channels on 8 NICs idle 2 × 2 × 1 µs between chunks on an Intel host,
   * 2 × 2 × 2 µs on an AMD one; nothing inside one host, without NICs or for a ring. */
  GError *err = NULL;
  g_autoptr(FsNcclParams) np = fs_nccl_params_load_default(&err);
  fs_assert_no_error(err);
  ck_assert_double_eq(np->coll_tree_step_posts, 2.0);
  FsCollSysInfo sys = {
    .arch = FS_NCCL_ROW_HOPPER, .intra_hw = FS_NCCL_HW_NVLINK, .cpu = FS_NCCL_CPU_INTEL,
    .bw_intra = 45, .bw_inter = 25, .max_channels = 16, .graph_channels = 8, .ll128 = TRUE,
    .net_nics = 8,
  };
  FsCollChoice ch = {.algo = fs_coll_algo_find("tree"), .proto = FS_PROTO_LL128, .nchannels = 16};
  ck_assert_ptr_nonnull(ch.algo);
  double lat[2][2]; /* [hosts-1][AMD] */
  for (int h = 0; h < 2; h++)
    for (int amd = 0; amd < 2; amd++) {
      g_autoptr(FsComm) c = comm_on(16, FALSE);
      for (guint r = 0; r < 16; r++)
        fs_comm_set_host(c, r, h ? r / 8 : 0);
      sys.cpu = amd ? FS_NCCL_CPU_AMD : FS_NCCL_CPU_INTEL;
      FsCollExecParams ep;
      fs_coll_exec_params_depth(np, &sys, c, FS_COLL_ALL_REDUCE, 1u << 20, &ch, 15, &ep);
      lat[h][amd] = fs_time_to_us(ep.ring_step_latency_inter);
    }
  ck_assert_msg(fabs(lat[1][0] - 4.0) < 1e-6, "Intel: %.3f us", lat[1][0]);
  ck_assert_msg(fabs(lat[1][1] - 8.0) < 1e-6, "AMD: %.3f us", lat[1][1]);
  ck_assert_double_eq(lat[0][0], 0);
  ck_assert_double_eq(lat[0][1], 0);
  g_autoptr(FsComm) c = comm_on(16, FALSE);
  for (guint r = 0; r < 16; r++)
    fs_comm_set_host(c, r, r / 8);
  FsCollExecParams ep;
  ch.algo = fs_coll_algo_find("ring");
  fs_coll_exec_params_depth(np, &sys, c, FS_COLL_ALL_REDUCE, 1u << 20, &ch, 15, &ep);
  ck_assert_double_eq(fs_time_to_us(ep.ring_step_latency_inter), 0);
  ch.algo = fs_coll_algo_find("tree");
  sys.net_nics = 0;
  fs_coll_exec_params_depth(np, &sys, c, FS_COLL_ALL_REDUCE, 1u << 20, &ch, 15, &ep);
  ck_assert_double_eq(fs_time_to_us(ep.ring_step_latency_inter), 0);

  /* The executed tree: 2 hosts × 4 GPUs, one channel of 4 chunks.  Each connection across
   * hosts carries the 4 chunks up and down, each after the first L after the one before, so
   * the run takes at least 3 L more; inside one host nothing changes. */
  const FsTime L = 20 * FS_US;
  for (int hosts = 1; hosts <= 2; hosts++) {
    Graph g;
    graph_init(&g, 8, 25e9, FALSE);
    g_autoptr(FsComm) c2 = comm_on(8, FALSE);
    for (guint r = 0; r < 8; r++)
      fs_comm_set_host(c2, r, hosts == 2 ? r / 4 : 0);
    g_autoptr(FsCollPlan) p = plan(c2, "tree", FS_COLL_ALL_REDUCE, 256u << 10, 1, 64u << 10,
                                   64u << 10);
    FsCollExecParams e = simple_params;
    double t0 = run_alone_us(&g, p, &e);
    e.ring_step_latency_inter = L;
    double t1 = run_alone_us(&g, p, &e);
    if (hosts == 1)
      ck_assert_msg(fabs(t1 - t0) < 1e-6, "one host: %.3f us -> %.3f us", t0, t1);
    else
      ck_assert_msg(t1 - t0 >= 3 * fs_time_to_us(L) - 1e-6, "2 hosts: %.3f us -> %.3f us", t0, t1);
    graph_free(&g);
  }
}
END_TEST

START_TEST(test_tree_ll128_chunk)
{
  /* NCCL's Tree/LL128 chunk (src/enqueue.cc nstepsLL128): 1 MiB on 16 channels of 4 × 8
   * H100 ranks halves 576000 B to 72000 (first rule, floor 131072), then to 18000 (second,
   * floor 32768), 17280 on LL128's grain of 1920 B; 64 MiB on 16 nodes stops at 72000 →
   * 71040; 8 GiB keeps the protocol's chunk. */
  GError *err = NULL;
  g_autoptr(FsNcclParams) np = fs_nccl_params_load_default(&err);
  fs_assert_no_error(err);
  ck_assert_uint_eq(fs_coll_tree_ll128_chunk(np, 576000, 1u << 20, 16, 4, 8), 17280);
  ck_assert_uint_eq(fs_coll_tree_ll128_chunk(np, 576000, 1u << 20, 16, 8, 8), 17280);
  ck_assert_uint_eq(fs_coll_tree_ll128_chunk(np, 576000, 64u << 20, 16, 16, 8), 71040);
  ck_assert_uint_eq(fs_coll_tree_ll128_chunk(np, 576000, (uint64_t)8 << 30, 16, 4, 8), 576000);
  np->tree_ll128_grain = 0;
  ck_assert_uint_eq(fs_coll_tree_ll128_chunk(np, 576000, 1u << 20, 16, 4, 8), 576000);
}
END_TEST

/* CollNetChain on 2 DGX H100 nodes with SHARP (models/nccl collnet_chain): each channel is one
 * thread block, so its flows move at most bwIntra × 0.5, NCCL's price of one channel, and the
 * 16 channels stay under 16 × that with the pipeline's fill and drain on top; without the cap
 * the channels share the NVLinks freely and the plan runs NVLink-bound, above NCCL's price. */
START_TEST(test_exec_collnet_chain_kernel_rate)
{
  FsTestColl s;
  fs_test_coll_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=2", "all", FS_NET_MAXMIN);
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  prefs.algo = fs_coll_algo_find("collnet_chain");
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  ck_assert(fs_test_coll_choose(&s, FS_COLL_ALL_REDUCE, 256u << 20, &prefs, &ch, &req, &nb));
  ck_assert_uint_eq(req.slice_bytes, 128u << 10);
  double priced = ch.nchannels * s.sys.bw_intra * s.np->collnet_chain_ratio; /* GB/s algbw */
  double algbw[2];
  for (guint capped = 0; capped < 2; capped++) {
    if (!capped)
      s.np->collnet_chain_ratio = 0;
    else
      s.np->collnet_chain_ratio = 0.5;
    GError *err = NULL;
    FsCollAloneStats st;
    FsCollAloneOpts opts = {.exact = TRUE};
    ck_assert(fs_coll_time_alone(s.np, &s.sys, s.comm, nb, &ch, &req, 0, s.net, fs_coll_topo_xfer,
                                 s.tnet, &opts, &st, &err));
    fs_assert_no_error(err);
    algbw[capped] = (double)nb / fs_time_to_s(st.time) / 1e9;
  }
  printf("collnet_chain 2 nodes 256 MiB: %.1f GB/s algbw capped, %.1f uncapped, NCCL's price %.1f\n",
         algbw[1], algbw[0], priced);
  ck_assert_double_le(algbw[1], priced);
  ck_assert_double_ge(algbw[1], 0.7 * priced);
  ck_assert_double_gt(algbw[0], 1.05 * priced);
  fs_test_coll_close(&s);
}
END_TEST

START_TEST(test_bench_sweep_latency_and_bandwidth)
{
  /* 8 GPUs on 100 GB/s point-to-point links, NCCL's Hopper/NVLink
   * constants: the 8-byte row takes NCCL's modelled latency (LL ring:
   * 6.6 + 14 × 0.6 µs); the largest row's busbw nears the link rate. */
  GError *err = NULL;
  g_autoptr(FsNcclParams) np = fs_nccl_params_load_default(&err);
  fs_assert_no_error(err);
  FsCollSysInfo sys = {
    .arch = FS_NCCL_ROW_HOPPER, .intra_hw = FS_NCCL_HW_NVLINK, .cpu = FS_NCCL_CPU_INTEL,
    .bw_intra = 100.0 / 16, .bw_inter = 1, .max_channels = 16, .ll128 = TRUE,
  };
  Graph g;
  graph_init(&g, 8, 100e9, FALSE);
  g_autoptr(FsComm) c = comm_on(8, FALSE);
  FsCollSweep sw = {
    .op = FS_COLL_ALL_REDUCE, .dtype = FS_COLL_DT_FLOAT, .redop = FS_COLL_REDOP_SUM,
    .min_bytes = 8, .max_bytes = 512u << 20, .step_factor = 8,
  };
  fs_coll_prefs_init(&sw.prefs);
  g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(FsNcclTestsRow));
  ck_assert(fs_coll_bench(np, &sys, c, &sw, g.net, xfer, &g, rows, &err));
  fs_assert_no_error(err);
  ck_assert_uint_eq(rows->len, 9);
  const FsNcclTestsRow *small = &g_array_index(rows, FsNcclTestsRow, 0);
  ck_assert_str_eq(small->algo, "ring");
  ck_assert_str_eq(small->proto, "LL");
  ck_assert_msg(fabs(small->oop_time_us - 15.0) < 0.01, "8 B: %.4f us", small->oop_time_us);
  const FsNcclTestsRow *big = &g_array_index(rows, FsNcclTestsRow, rows->len - 1);
  ck_assert_str_eq(big->proto, "Simple");
  ck_assert_msg(big->oop_busbw > 90 && big->oop_busbw <= 100.01, "128 MiB busbw %.2f", big->oop_busbw);
  /* Time grows with size; busbw too. */
  for (guint i = 1; i < rows->len; i++) {
    const FsNcclTestsRow *a = &g_array_index(rows, FsNcclTestsRow, i - 1);
    const FsNcclTestsRow *b = &g_array_index(rows, FsNcclTestsRow, i);
    ck_assert_double_ge(b->oop_time_us, a->oop_time_us);
    ck_assert_double_ge(b->oop_busbw, a->oop_busbw * 0.99);
  }
  if (g_getenv("FS_TEST_VERBOSE")) {
    g_autoptr(GString) out = g_string_new(NULL);
    fs_ncclt_table_header(out);
    for (guint i = 0; i < rows->len; i++)
      fs_ncclt_row(out, &g_array_index(rows, FsNcclTestsRow, i));
    fputs(out->str, stderr);
  }
  double avg = fs_coll_bench_avg_busbw(rows);
  ck_assert_double_gt(avg, 0);
  graph_free(&g);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("coll-exec");
  FS_ADD_TEST(s, test_exec_ring_reaches_link_bandwidth);
  FS_ADD_TEST(s, test_exec_ring_local_copy);
  FS_ADD_TEST(s, test_exec_ring_step_latency_across_hosts);
  FS_ADD_TEST(s, test_exec_ring_step_host_excess);
  FS_ADD_TEST(s, test_exec_tree_proxy_posts);
  FS_ADD_TEST(s, test_tree_ll128_chunk);
  FS_ADD_TEST(s, test_exec_latency_floor_matches_protocol);
  FS_ADD_TEST(s, test_exec_concurrent_collectives_share_links);
  FS_ADD_TEST(s, test_exec_nvls_beats_ring_through_switch);
  FS_ADD_TEST(s, test_exec_every_algorithm_completes);
  FS_ADD_TEST(s, test_exec_deterministic);
  FS_ADD_TEST(s, test_exec_unbound_endpoint_fails);
  FS_ADD_TEST(s, test_exec_collnet_chain_kernel_rate);
  FS_ADD_TEST(s, test_bench_sweep_latency_and_bandwidth);
  return fs_test_run_suite(s);
}
