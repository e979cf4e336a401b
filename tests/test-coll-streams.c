/* test-coll-streams.c — the stream model (collrun/streams.h) against the
 * step executor run exactly (every transfer, no shortcut: `coll --exact`):
 *   every algorithm × operation × protocol that runs on one DGX H100, on
 *   2 DGX H100 nodes over NDR, on 4 nodes with 4 GPUs each (a
 *   data-parallel group beside tensor-parallel pairs) and on 8 single-GPU
 *   nodes (sizes whose exact runs CI can afford: 256, 32 and 64 MiB, 2 to
 *   16 MiB per rank); the error of each is printed and bounded by the
 *   issue's bar, 1 % (STREAMS_TOL), whether or not --exec auto may pick
 *   the streams; the worst cases are in tests/bench/RESULTS.md.  NCCL's
 *   tree, CollNet, NVLS across hosts, the NVLS tree and the chains of
 *   broadcast and reduce run whole here (streams.h: their plans are within
 *   the whole runs' budget at these sizes) and are exact; past that budget
 *   they are not measured, and auto leaves them to the steps;
 *   the NVLS tree over 4, 8 and 16 whole DGX H100 nodes (run whole,
 *   streams.h; auto leaves it to the steps across hosts);
 *   NCCL's tree over 16 and 32 whole nodes, where its pipeline is deep
 *   (run whole; a grid of a few loops is up to 17 % off there);
 *   CollNetDirect over two SHARP groups (its skeletons of whole loops);
 *   the ring over GPUs 0, 2, 4 and 6 of 2 nodes at 1 GiB (PXN: its
 *   skeletons run on their own network and extrapolated over ring steps);
 *   with concurrent traffic: a bulk transfer sharing the network with the
 *   collective delays the streams as it delays the steps;
 *   the rule of --exec auto, the names, the debug of a run that fails;
 *   a sweep's memo: sizes that share streams and skeletons time as alone. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "collrun/alone.h"
#include "collrun/exec-params.h"
#include "collrun/coll-topo.h"
#include "collrun/streams.h"
#include "testutil.h"
#include "util/error.h"

/* The bound of |streams − exact| / exact in every case of the sweeps
 * (measured worst cases in tests/bench/RESULTS.md, gaps19): 0.038 % (2
 * nodes), 0.009 % (one node), 0.003 % on half hosts, whose rings leave
 * through the NICs of GPUs outside the group over NVLinks that their own
 * hops also cross (PXN; 0.76 % and -8.3 % with one repair), 0.000 % on one
 * GPU per host. */
#define STREAMS_TOL 0.01
/* The NVLS tree over whole nodes (test_nvls_tree_nodes; measured 0.000 %,
 * its whole plan run on its own network, RESULTS.md, cases19). */
#define STREAMS_TOL_NVLS_TREE 0.01
/* With concurrent traffic (test_concurrent_traffic; measured 0.27 %, NVLS tree). */
#define STREAMS_TOL_SHARED 0.01

typedef FsTestColl Sys;

/* The tuner's choice with algo and proto forced, and its request; FALSE
 * when the algorithm cannot run op here. */
static gboolean choose(Sys *s, FsCollOp op, uint64_t size, const FsCollAlgo *algo, int proto,
                       FsCollChoice *ch, FsCollRequest *req, uint64_t *nbytes)
{
  if (algo->unsupported(s->comm, op) != NULL)
    return FALSE;
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  prefs.algo = algo;
  prefs.proto = proto;
  return fs_test_coll_choose(s, op, size, &prefs, ch, req, nbytes);
}

/* fs_coll_time_alone of req on s under opts o, which must succeed: its stats. */
static FsCollAloneStats alone_with(Sys *s, const FsCollChoice *ch, const FsCollRequest *req,
                                   uint64_t nb, const FsCollAloneOpts *o)
{
  FsCollAloneStats st;
  GError *err = NULL;
  ck_assert(fs_coll_time_alone(s->np, &s->sys, s->comm, nb, ch, req, 0, s->net, fs_coll_topo_xfer,
                               s->tnet, o, &st, &err));
  fs_assert_no_error(err);
  return st;
}

static FsTime time_alone(Sys *s, const FsCollChoice *ch, const FsCollRequest *req, uint64_t nb,
                         FsCollExec exec)
{
  FsCollAloneOpts o = {.exact = exec == FS_COLL_EXEC_STEPS, .exec = exec,
                       .route_fixed = fs_coll_topo_route_fixed,
                       .route_paths = fs_coll_topo_route_paths, .route_ctx = s->tnet};
  FsCollAloneStats st = alone_with(s, ch, req, nb, &o);
  ck_assert(st.streams == (exec == FS_COLL_EXEC_STREAMS));
  return st.time;
}

static const FsCollOp ops[] = {FS_COLL_ALL_REDUCE, FS_COLL_ALL_GATHER, FS_COLL_REDUCE_SCATTER,
                               FS_COLL_BROADCAST, FS_COLL_REDUCE, FS_COLL_ALLTOALL};

/* Known gaps: cases whose stream model is off by more than STREAMS_TOL,
 * each printed; it must not get worse (its recorded error, 2 % of it and
 * 0.1 point of room), and a case back within the bound fails until its
 * line here is removed.  None is left: NVLS on one host (+10.9 % LL,
 * +8.2 % Simple at 256 MiB) runs whole since branch nvls19, and the rings
 * of LL over 4 x 4 GPUs (-7.7 to -8.3 %: the one repair of the schedule
 * missed the hops beside their PXN hops drifting into step) run their
 * skeletons on their own network since branch gaps19 (streams.c,
 * ring_shares_links; tests/bench/RESULTS.md).  The table ends at its
 * NULL line. */
static const struct {
  const char *name, *define, *algo;
  FsCollOp op;
  FsCollProto proto;
  double err; /* measured (streams - exact) / exact */
} stream_gaps[] = {
  {NULL, NULL, NULL, FS_COLL_ALL_REDUCE, FS_PROTO_LL, 0}, /* none left (the end) */
};

/* The recorded gap of a case (stream_gaps), or NULL. */
static const double *stream_gap(const char *name, const char *define, const char *algo,
                                FsCollOp op, FsCollProto proto)
{
  for (guint i = 0; stream_gaps[i].name != NULL; i++)
    if (strcmp(stream_gaps[i].name, name) == 0 &&
        g_strcmp0(stream_gaps[i].define, define) == 0 && strcmp(stream_gaps[i].algo, algo) == 0 &&
        stream_gaps[i].op == op && stream_gaps[i].proto == proto)
      return &stream_gaps[i].err;
  return NULL;
}

/* One case of sweep(): algorithm a, ops[o] and the protocol of ch, exact
 * steps against streams; the error is printed, bounded by STREAMS_TOL (a
 * known gap, stream_gaps, by its record) and
 * counted in *cases and *worst. */
static void sweep_case(Sys *s, const char *name, const char *define, uint64_t size, guint a,
                       guint o, const FsCollChoice *ch, const FsCollRequest *req, uint64_t nb,
                       double *worst, guint *cases)
{
  FsTime x = time_alone(s, ch, req, nb, FS_COLL_EXEC_STEPS);
  FsTime y = time_alone(s, ch, req, nb, FS_COLL_EXEC_STREAMS);
  double err = ((double)y - (double)x) / (double)x;
  g_autofree char *sz = fs_format_size(size);
  printf("%s %s %s %s %s/%s/%u: exact %.2f us streams %.2f us (%+.3f %%)\n", name,
         define ? define : "", fs_coll_op_name(ops[o]), sz, fs_coll_algos[a]->name,
         fs_coll_proto_name(ch->proto), ch->nchannels, x / 1e6, y / 1e6, 100 * err);
  fflush(stdout);
  const double *gap = stream_gap(name, define, fs_coll_algos[a]->name, ops[o], ch->proto);
  if (gap != NULL) {
    printf("  known gap, recorded %+.3f %%\n", 100 * *gap);
    ck_assert_msg(fabs(err) > STREAMS_TOL, "%s %s %s %s/%s: off by %.3f %%, within the bound: "
                  "remove its line from stream_gaps", name, define ? define : "",
                  fs_coll_op_name(ops[o]), fs_coll_algos[a]->name, fs_coll_proto_name(ch->proto),
                  100 * err);
    ck_assert_msg(fabs(err) <= fabs(*gap) * 1.02 + 0.001, "%s %s %s %s/%s: off by %.3f %%, worse "
                  "than its recorded gap %.3f %%", name, define ? define : "",
                  fs_coll_op_name(ops[o]), fs_coll_algos[a]->name, fs_coll_proto_name(ch->proto),
                  100 * err, 100 * *gap);
    return;
  }
  ck_assert_msg(fabs(err) <= STREAMS_TOL, "%s %s: %s %s/%s off by %.3f %%", name,
                define ? define : "", fs_coll_op_name(ops[o]), fs_coll_algos[a]->name,
                fs_coll_proto_name(ch->proto), 100 * err);
  *worst = MAX(*worst, fabs(err));
  (*cases)++;
}

/* Every algorithm × op × protocol on topology name (define) at size;
 * returns the worst relative error and counts the cases in *cases.
 * Reduced set (fs_test_reduced, the sanitizer build): each op of each
 * algorithm once, with a protocol the algorithm has not run yet where one
 * runs, then each protocol the algorithm has not run yet with its first op:
 * every algorithm × op and every algorithm × protocol of the full set, with
 * the same bounds, in a third of the cases. */
static double sweep(const char *name, const char *define, const char *gpus, uint64_t size,
                    guint *cases)
{
  Sys s;
  fs_test_coll_open(&s, name, define, gpus, FS_NET_MAXMIN);
  double worst = 0;
  const gboolean reduced = fs_test_reduced();
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  for (guint a = 0; fs_coll_algos[a] != NULL; a++) {
    const FsCollAlgo *algo = fs_coll_algos[a];
    if (!reduced) {
      for (guint o = 0; o < G_N_ELEMENTS(ops); o++)
        for (int p = 0; p < FS_PROTO_N; p++)
          if (choose(&s, ops[o], size, algo, p, &ch, &req, &nb))
            sweep_case(&s, name, define, size, a, o, &ch, &req, nb, &worst, cases);
      continue;
    }
    guint ran = 0; /* the protocols this algorithm ran, a bit each */
    for (guint o = 0; o < G_N_ELEMENTS(ops); o++)
      for (int i = 0; i < 2 * FS_PROTO_N; i++) {
        int p = (int)((a + o + (guint)i) % FS_PROTO_N);
        if ((i < FS_PROTO_N) == ((ran >> p) & 1u))
          continue; /* first the protocols not run yet, then the others */
        if (!choose(&s, ops[o], size, algo, p, &ch, &req, &nb))
          continue;
        ran |= 1u << ch.proto;
        sweep_case(&s, name, define, size, a, o, &ch, &req, nb, &worst, cases);
        break;
      }
    for (int p = 0; p < FS_PROTO_N; p++)
      for (guint o = 0; o < G_N_ELEMENTS(ops) && !((ran >> p) & 1u); o++)
        if (choose(&s, ops[o], size, algo, p, &ch, &req, &nb)) {
          ran |= 1u << ch.proto;
          sweep_case(&s, name, define, size, a, o, &ch, &req, nb, &worst, cases);
        }
  }
  fs_test_coll_close(&s);
  return worst;
}

START_TEST(test_single_node)
{
  guint n = 0;
  double w = sweep("dgx-h100.yaml", NULL, "all", 256u << 20, &n);
  printf("single node: %u cases, worst %.3f %%\n", n, 100 * w);
  ck_assert_uint_gt(n, fs_test_reduced() ? 8 : 20);
}
END_TEST

START_TEST(test_nodes_2)
{
  /* The reduced set at half the size: the exact LL runs of 256 MiB (tree,
   * NVLS tree, hier, ring) were 80 % of this test's 29 s of CPU under the
   * sanitizers. */
  guint n = 0;
  double w = sweep("dgx-h100-ib-ndr.yaml", "nodes=2", "all", (fs_test_reduced() ? 128u : 256u) << 20,
                   &n);
  printf("2 nodes: %u cases, worst %.3f %%\n", n, 100 * w);
  ck_assert_uint_gt(n, fs_test_reduced() ? 8 : 20);
}
END_TEST

START_TEST(test_nodes_4x4)
{
  /* Four GPUs of each of 4 DGX H100 nodes (a data-parallel group of
   * tensor-parallel pairs): rings leave each host through NICs whose GPUs
   * are not in the group (PXN, over NVLink), sharing those NVLinks with
   * the rings' own hops. */
  guint n = 0;
  double w = sweep("dgx-h100-ib-ndr.yaml", "nodes=4",
                   "node0/gpu0,node0/gpu2,node0/gpu4,node0/gpu6,node1/gpu0,node1/gpu2,node1/gpu4,"
                   "node1/gpu6,node2/gpu0,node2/gpu2,node2/gpu4,node2/gpu6,node3/gpu0,node3/gpu2,"
                   "node3/gpu4,node3/gpu6", 32u << 20, &n);
  printf("4 nodes x 4 GPUs: %u cases, worst %.3f %%\n", n, 100 * w);
  ck_assert_uint_gt(n, fs_test_reduced() ? 2 : 5);
}
END_TEST

START_TEST(test_nodes_8)
{
  /* One GPU of each of N DGX H100 nodes: N ranks over the NDR fabric. */
  guint n = 0;
  double w = 0;
  static const char *const sets[][2] = {
    {"nodes=8", "node0/gpu0,node1/gpu0,node2/gpu0,node3/gpu0,node4/gpu0,node5/gpu0,node6/gpu0,"
                "node7/gpu0"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(sets); i++)
    w = MAX(w, sweep("dgx-h100-ib-ndr.yaml", sets[i][0], sets[i][1], 64u << 20, &n));
  printf("8 nodes: %u cases, worst %.3f %%\n", n, 100 * w);
  ck_assert_uint_gt(n, fs_test_reduced() ? 2 : 5);
}
END_TEST

/* One all_reduce over GPUs gpus of DGX H100 nodes (define), algorithm
 * algo with proto at size: exact steps against streams, printed and
 * bounded by tol. */
static void nodes_cell(const char *define, const char *gpus, uint64_t size, const char *algo,
                       FsCollProto proto, double tol)
{
  Sys s;
  fs_test_coll_open(&s, "dgx-h100-ib-ndr.yaml", define, gpus, FS_NET_MAXMIN);
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, size, fs_coll_algo_find(algo), proto, &ch, &req, &nb));
  FsTime x = time_alone(&s, &ch, &req, nb, FS_COLL_EXEC_STEPS);
  FsTime y = time_alone(&s, &ch, &req, nb, FS_COLL_EXEC_STREAMS);
  double err = ((double)y - (double)x) / (double)x;
  g_autofree char *sz = fs_format_size(size);
  printf("%s %s all_reduce %s: exact %.2f us streams %.2f us (%+.3f %%)\n", algo, define, sz,
         x / 1e6, y / 1e6, 100 * err);
  fflush(stdout);
  ck_assert_msg(fabs(err) <= tol, "%s %s %s off by %.3f %%", algo, define, sz, 100 * err);
  fs_test_coll_close(&s);
}

/* nodes_cell over whole nodes. */
static void whole_nodes_cell(const char *define, uint64_t size, const char *algo,
                             FsCollProto proto, double tol)
{
  nodes_cell(define, "all", size, algo, proto, tol);
}

START_TEST(test_pxn_rings)
{
  /* The ring all_reduce (Simple, 16 channels) over GPUs 0, 2, 4 and 6 of
   * 2 DGX H100 nodes at 1 GiB: every ring leaves its host through another
   * GPU's NIC over NVLink (PXN), beside the other channels' hops to that
   * GPU, and the skeletons run on their own network (streams.c,
   * ring_shares_links), extrapolated over ring steps 4, 8 and 12 of 14:
   * exact 11191.5 us, streams 11191.5 (one repair: 10630.3, -5.0 %). */
  nodes_cell("nodes=2", "node0/gpu0,node0/gpu2,node0/gpu4,node0/gpu6,node1/gpu0,node1/gpu2,"
             "node1/gpu4,node1/gpu6", 1u << 30, "ring", FS_PROTO_SIMPLE, STREAMS_TOL);
}
END_TEST

START_TEST(test_nvls_tree_nodes)
{
  /* The NVLS tree all_reduce over whole DGX H100 nodes (Simple, 16
   * channels, a slice a loop): from 4 hosts on, the hosts' binary trees
   * have inner hosts whose NICs carry the up and down trees of one tree
   * and a leaf's of the other, and every hop of the fill is slowed by the
   * channels and loops sharing it.  The whole plan run on its own network
   * (streams-sched.c) against the exact steps: 4 nodes 128 / 256 MiB, 16
   * and 8 nodes 128 MiB 0.000 % (one repair: -15.3 / -16.7 / -7.6 %;
   * relaxed to a fixed point of the links' shares, as before 2026-11-28:
   * +0.001 / +0.002 / -0.03 / 0.000 %). */
  static const struct {
    const char *define;
    uint64_t size;
    double tol;
  } cells[] = {{"nodes=4", 128u << 20, STREAMS_TOL_NVLS_TREE},
               {"nodes=4", 256u << 20, STREAMS_TOL_NVLS_TREE},
               {"nodes=16", 128u << 20, STREAMS_TOL_NVLS_TREE},
               {"nodes=8", 128u << 20, STREAMS_TOL_NVLS_TREE}};
  for (guint i = 0; i < G_N_ELEMENTS(cells); i++) {
    if (fs_test_reduced() && i > 0)
      break; /* the sanitizer build: the first cell */
    whole_nodes_cell(cells[i].define, cells[i].size, "nvls_tree", FS_PROTO_SIMPLE, cells[i].tol);
  }
}
END_TEST

START_TEST(test_tree_nodes)
{
  /* NCCL's tree all_reduce (LL128, 16 channels) over whole DGX H100 nodes,
   * where its pipeline is deep (streams.c): on 32 nodes at 8 MiB most of
   * the loops are in flight at once, and grids of 1-3 loops, whose down
   * trees never meet their up trees on a NIC, agree on a pace 6.2 % fast;
   * on 16 nodes at 64 MiB one repair is -17.1 % off.  Both whole plans are
   * under 2^18 steps and run whole (0.000 %, RESULTS.md, scale19). */
  static const struct {
    const char *define;
    uint64_t size;
  } cells[] = {{"nodes=32", 8u << 20}, {"nodes=16", 64u << 20}};
  for (guint i = 0; i < G_N_ELEMENTS(cells); i++) {
    if (fs_test_reduced() && i > 0)
      break; /* the sanitizer build: the first cell */
    whole_nodes_cell(cells[i].define, cells[i].size, "tree", FS_PROTO_LL128, STREAMS_TOL);
  }
}
END_TEST

START_TEST(test_collnet_direct_groups)
{
  /* CollNetDirect all_reduce of 1 GiB over 4 DGX H100 nodes in two SHARP
   * groups (two hosts per leaf): 8 loops of 8 slices per channel.  Its
   * plans of fewer than FS_SHARP_MIN_CHUNKS loops halve their chunks, so
   * the model's skeletons start at 4 loops, and 4, 5 and 6 hold more
   * than the whole plan: the whole plan, one skeleton, run whole
   * (streams.h): 0.000 % (-0.16 % repaired once; before: grids from 1 loop, -0.17 %
   * here and +11.7 % on 256 nodes where the budget stopped the grids
   * before they agreed). */
  Sys s;
  fs_test_coll_open(&s, "cluster.yaml", "hosts_per_leaf=2", "all", FS_NET_MAXMIN);
  ck_assert_uint_eq(fs_comm_collnet_n_groups(s.comm), 2);
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, 1u << 30, fs_coll_algo_find("collnet_direct"),
                   FS_PROTO_SIMPLE, &ch, &req, &nb));
  FsTime x = time_alone(&s, &ch, &req, nb, FS_COLL_EXEC_STEPS);
  FsCollStreamsOpts so = {fs_coll_topo_route_fixed, fs_coll_topo_route_paths, s.tnet, NULL};
  FsCollStreamsInfo info;
  FsTime y;
  GError *err = NULL;
  ck_assert(fs_coll_streams_time_alone(s.np, &s.sys, s.comm, nb, &ch, &req, 0, s.net,
                                       fs_coll_topo_xfer, s.tnet, &so, &y, &info, &err));
  fs_assert_no_error(err);
  double e = ((double)y - (double)x) / (double)x;
  printf("collnet_direct 2 groups all_reduce 1 GiB: exact %.2f us streams %.2f us (%+.3f %%), "
         "%u skeletons\n", x / 1e6, y / 1e6, 100 * e, info.skeletons);
  ck_assert_uint_eq(info.loops, 8);
  ck_assert_uint_eq(info.skeletons, 1);
  ck_assert_msg(fabs(e) <= 1e-3, "collnet_direct off by %.3f %%", 100 * e);
  fs_test_coll_close(&s);
}
END_TEST

/* ---- Concurrent traffic ------------------------------------------------ */

typedef struct {
  gboolean done;
  FsTime end;
} Done;

static void run_done(void *ctx, FsCollRun *run)
{
  Done *d = ctx;
  d->done = TRUE;
  d->end = fs_coll_run_end_time(run);
}

static void streams_done(void *ctx, FsCollStreamsRun *run)
{
  Done *d = ctx;
  d->done = TRUE;
  d->end = fs_coll_streams_run_end_time(run);
}

static void bulk_done(void *ctx, const FsFlowInfo *info)
{
  (void)ctx;
  (void)info;
}

/* The collective's time with a bulk transfer of `bulk` bytes between the
 * first GPUs of two nodes starting with it, steps (exact plan) or streams
 * (streams 2: a folded stream as one transfer of its width of copies). */
static FsTime with_traffic(Sys *s, const FsCollChoice *ch, const FsCollRequest *req, uint64_t nb,
                           uint64_t bulk, int streams)
{
  GError *err = NULL;
  guint ng;
  const guint *gpus = fs_topo_gpus(s->topo, &ng);
  FsTime t0 = fs_sim_now(s->sim);
  Done d = {0};
  g_autoptr(FsCollRun) run = NULL;
  g_autoptr(FsCollStreamsRun) srun = NULL;
  g_autoptr(FsCollPlan) plan = NULL;
  g_autoptr(FsCollStreams) model = NULL;
  if (streams) {
    FsCollStreamsOpts so = {fs_coll_topo_route_fixed, fs_coll_topo_route_paths, s->tnet, NULL};
    model = fs_coll_streams_new(s->np, &s->sys, s->comm, nb, ch, req, 0, s->net, &so, &err);
    fs_assert_no_error(err);
    srun = fs_coll_streams_start(s->net, model, fs_coll_topo_xfer, s->tnet, t0, streams_done, &d);
    if (streams == 2)
      fs_coll_streams_run_set_copies(srun, fs_coll_topo_xfer_copies);
  } else {
    plan = fs_coll_plan_new(s->comm, ch->algo, req, &err);
    fs_assert_no_error(err);
    FsCollExecParams ep;
    fs_coll_exec_params(s->np, &s->sys, s->comm, req->op, nb, ch, plan, &ep);
    run = fs_coll_run_start(s->net, plan, &ep, fs_coll_topo_xfer, s->tnet, t0, run_done, &d);
  }
  if (bulk > 0)
    ck_assert(fs_coll_topo_xfer(s->tnet, (int)gpus[0], (int)gpus[ng / 2], bulk, 0, 7, bulk_done,
                                NULL, NULL, NULL, &err));
  fs_assert_no_error(err);
  ck_assert(fs_sim_run(s->sim, &err));
  fs_assert_no_error(err);
  ck_assert(d.done);
  return d.end - t0;
}

START_TEST(test_concurrent_traffic)
{
  /* Ring all_reduce of 256 MiB on 2 DGX H100 nodes, with a transfer from
   * node0/gpu0 to node1/gpu0 as large as the collective's bytes on one
   * NIC: it delays both runs alike. */
  Sys s;
  fs_test_coll_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=2", "all", FS_NET_MAXMIN);
  static const char *const algos[] = {"ring", "nvls_tree"};
  for (guint a = 0; a < G_N_ELEMENTS(algos); a++) {
    FsCollChoice ch;
    FsCollRequest req;
    uint64_t nb;
    ck_assert(choose(&s, FS_COLL_ALL_REDUCE, 256u << 20, fs_coll_algo_find(algos[a]),
                     FS_PROTO_SIMPLE, &ch, &req, &nb));
    FsTime x0 = with_traffic(&s, &ch, &req, nb, 0, FALSE);
    FsTime y0 = with_traffic(&s, &ch, &req, nb, 0, TRUE);
    FsTime x = with_traffic(&s, &ch, &req, nb, 64u << 20, FALSE);
    FsTime y = with_traffic(&s, &ch, &req, nb, 64u << 20, TRUE);
    /* Copies in place of a folded stream's identical transfers: the same
     * rates under max-min, so the same times but for rounding. */
    FsTime yc0 = with_traffic(&s, &ch, &req, nb, 0, 2);
    FsTime yc = with_traffic(&s, &ch, &req, nb, 64u << 20, 2);
    ck_assert_int_le(llabs(yc0 - y0), 2);
    ck_assert_int_le(llabs(yc - y), 2);
    double e0 = ((double)y0 - (double)x0) / (double)x0, e = ((double)y - (double)x) / (double)x;
    printf("%s with traffic: steps %.2f us (alone %.2f), streams %.2f us (alone %.2f): %+.3f %% "
           "(alone %+.3f %%)\n", algos[a], x / 1e6, x0 / 1e6, y / 1e6, y0 / 1e6, 100 * e,
           100 * e0);
    fflush(stdout);
    ck_assert_int_gt(x, x0);
    ck_assert_int_ge(y, y0);
    ck_assert_msg(fabs(e) <= STREAMS_TOL_SHARED, "%s with traffic off by %.3f %%", algos[a],
                  100 * e);
  }
  fs_test_coll_close(&s);
}
END_TEST

/* ---- A sweep's memo ---------------------------------------------------- */

/* Times req as streams with key and memo (NULL: none). */
static FsTime streams_alone(Sys *s, const FsCollChoice *ch, const FsCollRequest *req, uint64_t nb,
                            uint64_t key, FsCollAloneMemo *memo)
{
  FsCollAloneOpts o = {.exec = FS_COLL_EXEC_STREAMS, .memo = memo,
                       .route_fixed = fs_coll_topo_route_fixed,
                       .route_paths = fs_coll_topo_route_paths, .route_ctx = s->tnet};
  FsCollAloneStats st;
  GError *err = NULL;
  ck_assert(fs_coll_time_alone(s->np, &s->sys, s->comm, nb, ch, req, key, s->net,
                               fs_coll_topo_xfer, s->tnet, &o, &st, &err));
  fs_assert_no_error(err);
  ck_assert(st.streams);
  return st.time;
}

START_TEST(test_memo)
{
  /* Sizes of one family share streams, routes and skeletons, under the
   * family's first key: each size times as it does alone with that key,
   * whichever sizes came before. */
  static const char *const algos[] = {"ring", "nvls_tree"};
  Sys s;
  fs_test_coll_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=2", "all", FS_NET_MAXMIN);
  for (guint a = 0; a < G_N_ELEMENTS(algos); a++) {
    g_autoptr(FsCollAloneMemo) memo = fs_coll_alone_memo_new();
    static const uint64_t sizes[] = {(uint64_t)512 << 20, (uint64_t)1 << 30, (uint64_t)768 << 20};
    for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
      FsCollChoice ch;
      FsCollRequest req;
      uint64_t nb;
      ck_assert(choose(&s, FS_COLL_ALL_REDUCE, sizes[i], fs_coll_algo_find(algos[a]),
                       FS_PROTO_SIMPLE, &ch, &req, &nb));
      FsTime shared = streams_alone(&s, &ch, &req, nb, 7 + i, memo);
      FsTime own = streams_alone(&s, &ch, &req, nb, 7, NULL);
      printf("memo %s %" G_GUINT64_FORMAT " B: %.3f us shared, %.3f us alone\n", algos[a],
             sizes[i], shared / 1e6, own / 1e6);
      ck_assert_uint_eq(shared, own);
    }
  }
  fs_test_coll_close(&s);
}
END_TEST

/* ---- Past the step guard ------------------------------------------------ */

START_TEST(test_past_guard)
{
  /* A plan past the plan-step guard (its steps counted, not built) runs as
   * streams in the step mode: at once where the stream model is trusted
   * (ring, NVLS), the time the stream model gives under the same guard;
   * one step under the guard it runs as steps.  The stream model does not
   * run NVLS whole past the guard either (a whole run builds the whole
   * plan, which the guard forbids: streams.h): its time there is the
   * repaired model's over skeletons of fewer steps than the plan, within
   * STREAMS_TOL of the whole run's at the default guard (its loop counts
   * start where the connections' buffers have filled: 16 ps off; +8 %
   * from loops 1-3 before 2026-11-28, branch gaps19), the ring's the
   * same. */
  Sys s;
  fs_test_coll_open(&s, "dgx-h100.yaml", NULL, "all", FS_NET_MAXMIN);
  static const char *const algos[] = {"ring", "nvls"};
  for (guint a = 0; a < G_N_ELEMENTS(algos); a++) {
    FsCollChoice ch;
    FsCollRequest req;
    uint64_t nb;
    ck_assert(choose(&s, FS_COLL_ALL_REDUCE, 256u << 20, fs_coll_algo_find(algos[a]),
                     FS_PROTO_SIMPLE, &ch, &req, &nb));
    guint64 steps;
    GError *err = NULL;
    ck_assert(fs_coll_plan_count_steps(s.comm, ch.algo, &req, &steps, &err));
    fs_assert_no_error(err);
    FsTime whole = time_alone(&s, &ch, &req, nb, FS_COLL_EXEC_STREAMS);
    FsCollAloneOpts o = {.exec = FS_COLL_EXEC_STEPS, .route_fixed = fs_coll_topo_route_fixed,
                         .route_paths = fs_coll_topo_route_paths, .route_ctx = s.tnet};
    FsCollAloneStats st;
    req.max_steps = (guint)steps - 1;
    FsTime streams = time_alone(&s, &ch, &req, nb, FS_COLL_EXEC_STREAMS);
    printf("past the guard %s: %.3f us, at the default guard %.3f us\n", algos[a],
           streams / 1e6, whole / 1e6);
    if (a == 0)
      ck_assert_uint_eq(streams, whole);
    else
      ck_assert(fabs((double)streams - (double)whole) <= STREAMS_TOL * (double)whole);
    st = alone_with(&s, &ch, &req, nb, &o);
    ck_assert_msg(st.streams, "%s past the guard ran as steps", algos[a]);
    ck_assert_uint_eq(st.time, streams);
    if (a == 1)
      ck_assert_msg(st.sim_steps < steps, "nvls past the guard ran whole (%" G_GUINT64_FORMAT
                    " steps)", st.sim_steps);
    req.max_steps = (guint)steps;
    st = alone_with(&s, &ch, &req, nb, &o);
    ck_assert_msg(!st.streams, "%s under the guard ran as streams", algos[a]);
  }
  fs_test_coll_close(&s);
}
END_TEST

START_TEST(test_past_guard_folds)
{
  /* A plan past the plan-step guard whole that folding brings under it
   * (the guard bounds the steps a plan folded while built keeps,
   * coll/plan.h) runs as steps, folded, not as streams: CollNetDirect's
   * all_reduce of 1 GiB on 2 DGX H100 nodes with the guard at its kept
   * steps takes the path of 16,384 GPUs at the default guard and gives
   * the time of the same plan folded under the guard (to the ps), within
   * 1e-5 of the --exact time (6.2e-6 short: folding's, as without the
   * guard); one step under them it does not run as steps. */
  Sys s;
  fs_test_coll_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=2", "all", FS_NET_MAXMIN);
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, 1u << 30, fs_coll_algo_find("collnet_direct"),
                   FS_PROTO_SIMPLE, &ch, &req, &nb));
  guint64 whole;
  GError *err = NULL;
  ck_assert(fs_coll_plan_count_steps(s.comm, ch.algo, &req, &whole, &err));
  fs_assert_no_error(err);
  g_autoptr(FsCollPlan) folded = fs_coll_plan_new_folded(s.comm, ch.algo, &req,
                                                         fs_coll_topo_route_fixed, s.tnet, &err);
  fs_assert_no_error(err);
  guint kept = fs_coll_plan_n_steps(folded);
  ck_assert_uint_gt(fs_coll_plan_width(folded), 1);
  ck_assert_uint_lt(kept, whole);
  FsTime exact = time_alone(&s, &ch, &req, nb, FS_COLL_EXEC_STEPS);
  FsCollAloneOpts o = {.exec = FS_COLL_EXEC_STEPS, .route_fixed = fs_coll_topo_route_fixed,
                       .route_paths = fs_coll_topo_route_paths, .route_ctx = s.tnet};
  FsCollAloneStats st;
  gboolean ok = fs_coll_time_alone(s.np, &s.sys, s.comm, nb, &ch, &req, 0, s.net,
                                   fs_coll_topo_xfer, s.tnet, &o, &st, &err);
  fs_assert_no_error(err);
  ck_assert(ok && !st.streams);
  FsTime under = st.time;
  req.max_steps = kept;
  ok = fs_coll_time_alone(s.np, &s.sys, s.comm, nb, &ch, &req, 0, s.net,
                                   fs_coll_topo_xfer, s.tnet, &o, &st, &err);
  fs_assert_no_error(err);
  ck_assert(ok);
  printf("collnet_direct past the guard whole (%" G_GUINT64_FORMAT " steps, %u kept): "
         "%.6f us, under the guard %.6f us, exact %.6f us\n", whole, kept, st.time / 1e6,
         under / 1e6, exact / 1e6);
  ck_assert_msg(!st.streams, "folded under the guard, ran as streams");
  ck_assert_uint_gt(st.width, 1);
  ck_assert_uint_eq(st.time, under);
  ck_assert(fabs((double)st.time - (double)exact) <= 1e-5 * (double)exact);
  /* One step fewer: not as steps (the stream model's few loops of the
   * plan pass so low a guard too, and name it). */
  req.max_steps = kept - 1;
  ok = fs_coll_time_alone(s.np, &s.sys, s.comm, nb, &ch, &req, 0, s.net, fs_coll_topo_xfer, s.tnet,
                          &o, &st, &err);
  ck_assert(ok ? st.streams : g_error_matches(err, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_LIMIT));
  g_clear_error(&err);
  fs_test_coll_close(&s);
}
END_TEST

/* ---- The rule, the names ----------------------------------------------- */

/* The load model of an alltoall across hosts (collrun/a2a.h) against the
 * exact step run: whole DGX H100 nodes, half of each node's GPUs (PXN
 * heads to GPUs outside the communicator), a GB200 NVL72 rack's trays and
 * a RoCE fabric (ECMP by flow key, but its two hosts share a leaf: no
 * choice is made, the model times it), 4 DGX H100 on two leaves per rail
 * (routes through the spines); 1 and 32 MiB.  Each is also timed without
 * the aggregation by first fabric switch (route_fabric NULL: per source
 * host), and with a memo shared by the sizes (a sweep's), to the
 * picosecond the same.  Bounded by
 * STREAMS_TOL (measured: 0.000 % on the InfiniBand and RoCE cases,
 * -0.132 % and -0.090 % on the NVL72 at 1 and 32 MiB, its latency; the
 * deviations at 2-128 nodes are in tests/bench/RESULTS.md, branch a2a19). */
START_TEST(test_alltoall_load_model)
{
  static const struct {
    const char *file, *define, *gpus;
    gboolean timed; /* the model times it (else it declines) */
  } cases[] = {
    {"dgx-h100-ib-ndr.yaml", "nodes=2", "all", TRUE},
    {"cluster.yaml", "hosts_per_leaf=2", "all", TRUE}, /* 4 DGX H100, two leaves per rail */
    {"dgx-h100-ib-ndr.yaml", "nodes=4",
     "node0/gpu0,node0/gpu2,node0/gpu4,node0/gpu6,node1/gpu0,node1/gpu2,node1/gpu4,node1/gpu6,"
     "node2/gpu0,node2/gpu2,node2/gpu4,node2/gpu6,node3/gpu0,node3/gpu2,node3/gpu4,node3/gpu6",
     TRUE},
    {"cluster.yaml", "node=gb200-nvl72", "all", TRUE},
    {"dgx-h100-roce.yaml", NULL, "all", TRUE},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    Sys s;
    fs_test_coll_open(&s, cases[i].file, cases[i].define, cases[i].gpus, FS_NET_MAXMIN);
    /* The sizes share a memo (a sweep's): each must time as alone. */
    g_autoptr(FsCollAloneMemo) memo = fs_coll_alone_memo_new();
    for (uint64_t size = 1u << 20; size <= 32u << 20; size *= 32) {
      FsCollChoice ch;
      FsCollRequest req;
      uint64_t nb;
      FsCollPrefs prefs;
      fs_coll_prefs_init(&prefs);
      ck_assert(fs_test_coll_choose(&s, FS_COLL_ALLTOALL, size, &prefs, &ch, &req, &nb));
      ck_assert(fs_coll_a2a_applies(s.comm, &ch, &req));
      FsTime x = time_alone(&s, &ch, &req, nb, FS_COLL_EXEC_STEPS);
      FsCollAloneOpts o = {.exec = FS_COLL_EXEC_STREAMS, .route_fixed = fs_coll_topo_route_fixed,
                           .route_paths = fs_coll_topo_route_paths,
                           .route_relay = fs_coll_topo_route_relay,
                           .route_once = fs_coll_topo_route_once,
                           .route_rail = fs_coll_topo_route_rail,
                           .route_fabric = fs_coll_topo_route_fabric, .route_ctx = s.tnet};
      FsCollAloneStats st = alone_with(&s, &ch, &req, nb, &o);
      /* The model's stats say one run and no steps; the stream model's
       * (when it declines) its skeletons. */
      gboolean timed = st.streams && st.sim_steps == 0;
      o.route_fabric = NULL;
      FsCollAloneStats st2 = alone_with(&s, &ch, &req, nb, &o);
      ck_assert_int_eq(st2.time, st.time);
      o.route_fabric = fs_coll_topo_route_fabric;
      o.memo = memo;
      st2 = alone_with(&s, &ch, &req, nb, &o);
      ck_assert_int_eq(st2.time, st.time);
      o.memo = NULL;
      if (timed) {
        /* Under steps, past the plan-step guard (lowered here), the load
         * model stands in (alone.c); under it, the steps run. */
        FsCollRequest low = req;
        low.max_steps = (guint)fs_coll_a2a_transfers(s.comm, &req) - 1;
        o.exec = FS_COLL_EXEC_STEPS;
        st2 = alone_with(&s, &ch, &low, nb, &o);
        ck_assert(st2.streams && st2.time == st.time);
        st2 = alone_with(&s, &ch, &req, nb, &o);
        ck_assert(!st2.streams);
      }
      double e = ((double)st.time - (double)x) / (double)x;
      g_autofree char *sz = fs_format_size(size);
      printf("alltoall %s %s %s: exact %.3f us load model %.3f us (%+.3f %%)%s\n", cases[i].file,
             cases[i].define ? cases[i].define : "", sz, x / 1e6, st.time / 1e6, 100 * e,
             timed ? "" : " (declined)");
      fflush(stdout);
      ck_assert_msg(timed == cases[i].timed, "%s: the load model %s", cases[i].file,
                    timed ? "timed it" : "declined");
      ck_assert_msg(fabs(e) <= STREAMS_TOL, "%s %s off by %.3f %%", cases[i].file, sz, 100 * e);
    }
    fs_test_coll_close(&s);
  }
}
END_TEST

START_TEST(test_auto_rule_and_names)
{
  FsCollExec e;
  ck_assert(fs_coll_exec_from_name("streams", &e) && e == FS_COLL_EXEC_STREAMS);
  ck_assert(fs_coll_exec_from_name("AUTO", &e) && e == FS_COLL_EXEC_AUTO);
  ck_assert(!fs_coll_exec_from_name("stream", &e));
  ck_assert_str_eq(fs_coll_exec_name(FS_COLL_EXEC_STEPS), "steps");
  Sys s;
  fs_test_coll_open(&s, "dgx-h100.yaml", NULL, "all", FS_NET_MAXMIN);
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  /* 1 MiB ring all_reduce: one partial loop, few steps: the step executor. */
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, 1u << 20, fs_coll_algo_find("ring"), FS_PROTO_SIMPLE,
                   &ch, &req, &nb));
  ck_assert(!fs_coll_exec_pick_streams(s.comm, ch.algo, &req));
  /* 16 GiB ring of LL: thousands of slices per channel: streams. */
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, (uint64_t)16 << 30, fs_coll_algo_find("ring"),
                   FS_PROTO_LL, &ch, &req, &nb));
  ck_assert(fs_coll_exec_pick_streams(s.comm, ch.algo, &req));
  /* 16 GiB NVLS: as deep, but its stream model, exact on one host where it
   * runs whole, is 11 % slow past 2^18 steps (LL from 4 GiB): steps. */
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, (uint64_t)16 << 30, fs_coll_algo_find("nvls"),
                   FS_PROTO_SIMPLE, &ch, &req, &nb));
  ck_assert(!fs_coll_exec_pick_streams(s.comm, ch.algo, &req));
  fs_test_coll_close(&s);
  /* 16 GiB NVLS tree across 2 hosts: deep, but its stream model is 9-14 %
   * fast past the budget of whole runs and its steps are mirrored per rail:
   * the step executor (which hands it to the streams past the guard). */
  fs_test_coll_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=2", "all", FS_NET_MAXMIN);
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, (uint64_t)16 << 30, fs_coll_algo_find("nvls_tree"),
                   FS_PROTO_SIMPLE, &ch, &req, &nb));
  ck_assert(!fs_coll_exec_pick_streams(s.comm, ch.algo, &req));
  /* 1 MiB ring all_reduce over 2 whole hosts: shallow, but a ring of whole
   * hosts from 1 MiB (within 0.011 % of --exact): streams; 512 KiB: steps. */
  ck_assert(fs_comm_whole_hosts(s.comm));
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, 1u << 20, fs_coll_algo_find("ring"), FS_PROTO_SIMPLE,
                   &ch, &req, &nb));
  ck_assert(fs_coll_exec_pick_streams(s.comm, ch.algo, &req));
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, 1u << 19, fs_coll_algo_find("ring"), FS_PROTO_SIMPLE,
                   &ch, &req, &nb));
  ck_assert(!fs_coll_exec_pick_streams(s.comm, ch.algo, &req));
  fs_test_coll_close(&s);
  /* GPUs 0, 2, 4 and 6 of 4 hosts: their ring's NIC hops cross other GPUs'
   * NVLinks (PXN; streams 1.0-1.2 % slow at 32 nodes): steps.  One GPU per
   * host: streams. */
  fs_test_coll_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=4",
                    "node0/gpu0,node0/gpu2,node0/gpu4,node0/gpu6,node1/gpu0,node1/gpu2,"
                    "node1/gpu4,node1/gpu6,node2/gpu0,node2/gpu2,node2/gpu4,node2/gpu6,"
                    "node3/gpu0,node3/gpu2,node3/gpu4,node3/gpu6", FS_NET_MAXMIN);
  ck_assert(!fs_comm_whole_hosts(s.comm));
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, 1u << 20, fs_coll_algo_find("ring"), FS_PROTO_SIMPLE,
                   &ch, &req, &nb));
  ck_assert(!fs_coll_exec_pick_streams(s.comm, ch.algo, &req));
  /* however deep (ring LL there: 8 % fast, stream_gaps) */
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, (uint64_t)16 << 30, fs_coll_algo_find("ring"),
                   FS_PROTO_LL, &ch, &req, &nb));
  ck_assert(!fs_coll_exec_pick_streams(s.comm, ch.algo, &req));
  fs_test_coll_close(&s);
  fs_test_coll_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=4",
                    "node0/gpu0,node1/gpu0,node2/gpu0,node3/gpu0", FS_NET_MAXMIN);
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, 1u << 20, fs_coll_algo_find("ring"), FS_PROTO_SIMPLE,
                   &ch, &req, &nb));
  ck_assert(fs_coll_exec_pick_streams(s.comm, ch.algo, &req));
  fs_test_coll_close(&s);
  /* The 4 trays of a GB200 NVL72 rack, whole but one NVLink domain (the
   * ring's streams up to 11.5 % off on 18 trays): steps. */
  fs_test_coll_open(&s, "cluster.yaml", "node=gb200-nvl72", "all", FS_NET_MAXMIN);
  ck_assert(fs_comm_whole_hosts(s.comm) && fs_comm_n_hosts(s.comm) == 4);
  ck_assert(choose(&s, FS_COLL_ALL_REDUCE, 1u << 20, fs_coll_algo_find("ring"), FS_PROTO_SIMPLE,
                   &ch, &req, &nb));
  ck_assert(!fs_coll_exec_pick_streams(s.comm, ch.algo, &req));
  fs_test_coll_close(&s);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("coll-streams");
  /* The sweeps take 5-15 s of CPU each (plain build): on a machine loaded
   * ten times over, more than Check's 120 s of wall time. */
  const struct {
    const char *name;
    const TTest *test;
  } sweeps[] = {{"test_single_node", test_single_node}, {"test_nodes_2", test_nodes_2},
                {"test_nodes_4x4", test_nodes_4x4}, {"test_nodes_8", test_nodes_8},
                {"test_nvls_tree_nodes", test_nvls_tree_nodes},
                {"test_tree_nodes", test_tree_nodes}, {"test_pxn_rings", test_pxn_rings}};
  for (guint i = 0; i < G_N_ELEMENTS(sweeps); i++) {
    TCase *tc = tcase_create(sweeps[i].name);
    tcase_add_test(tc, sweeps[i].test);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
  }
  FS_ADD_TEST(s, test_collnet_direct_groups);
  FS_ADD_TEST(s, test_concurrent_traffic);
  FS_ADD_TEST(s, test_auto_rule_and_names);
  FS_ADD_TEST(s, test_alltoall_load_model);
  FS_ADD_TEST(s, test_memo);
  FS_ADD_TEST(s, test_past_guard);
  FS_ADD_TEST(s, test_past_guard_folds);
  return fs_test_run_suite(s);
}
