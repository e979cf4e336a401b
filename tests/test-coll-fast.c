/* test-coll-fast.c — the shortcuts that make collectives fast (alone.h,
 * plan.h) against the simulation of every transfer:
 *   channel folding: a folded plan runs in the same time as the unfolded
 *     one (to the picosecond for NVLS; within 1e-3 for NVLink rings, whose
 *     router splits every copy's bytes over the NVSwitch planes in whole
 *     bytes), and folding is refused where it would not be exact;
 *     folding while building gives the plan folding the whole one gives;
 *   the fast path without a memo (folding, step extrapolation; every loop
 *     simulated, there is no loop extrapolation): equal to the full
 *     simulation, within FAST_TOL, for ring, tree, NVLS, NVLS tree and
 *     hierarchical all_reduce (and ring all_gather / reduce_scatter /
 *     broadcast, NVLS all_gather) on a DGX H100 and on 2 NDR nodes;
 *   step extrapolation (ring steps per loop): exact where the ring's steps
 *     repeat at once, refused where they drift within the steps checked;
 *   bounded buffers (conn_slots): the credits are the consumers of the
 *     transfer conn_slots earlier on the connection;
 *   a sweep's memo (rails, no times): every row is its size's alone run
 *     and its whole run, to the picosecond (there is no window
 *     extrapolation);
 *   slice coarsening (max_slices_per_conn): the transfer bound holds, and
 *     the error against exact slicing is printed and bounded. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catalog/catalog.h"
#include "collrun/alone.h"
#include "collrun/bench.h"
#include "collrun/coll-topo.h"
#include "collrun/rails.h"
#include "testutil.h"

/* A topology with its router and a communicator over all its GPUs. */
typedef FsTestColl Sys;

/* Topology name with define, every GPU or those of gpu_list, max-min. */
static void sys_open(Sys *s, const char *name, const char *define)
{
  fs_test_coll_open(s, name, define, "all", FS_NET_MAXMIN);
}

static void sys_open_gpus(Sys *s, const char *name, const char *define, const char *gpu_list)
{
  fs_test_coll_open(s, name, define, gpu_list, FS_NET_MAXMIN);
}

static void sys_close(Sys *s)
{
  fs_test_coll_close(s);
}

/* The tuner's choice for op of `size` bytes (nccl-tests' size) with algo
 * (and proto, -1 = tuner's; channels, 0 = tuner's) forced, and the
 * request it makes. */
static void choose(Sys *s, FsCollOp op, uint64_t size, const char *algo, int proto, guint nch,
                   FsCollChoice *ch, FsCollRequest *req, uint64_t *nbytes)
{
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  prefs.algo = fs_coll_algo_find(algo);
  ck_assert_ptr_nonnull(prefs.algo);
  prefs.proto = proto;
  prefs.channels = nch;
  ck_assert_msg(fs_test_coll_choose(s, op, size, &prefs, ch, req, nbytes),
                "the tuner refused %s with %s", fs_coll_op_name(op), algo);
}

/* Times req alone with opts; returns the stats. */
static FsCollAloneStats time_it(Sys *s, const FsCollChoice *ch, const FsCollRequest *req,
                                uint64_t nbytes, const FsCollAloneOpts *opts)
{
  GError *err = NULL;
  FsCollAloneStats st;
  ck_assert(fs_coll_time_alone(s->np, &s->sys, s->comm, nbytes, ch, req, 0, s->net,
                               fs_coll_topo_xfer, s->tnet, opts, &st, &err));
  fs_assert_no_error(err);
  return st;
}

static const FsCollAloneOpts exact_opts = {.exact = TRUE};

static FsCollAloneOpts fold_only(Sys *s)
{
  /* Folding without step extrapolation: min_steps so large that the
   * short runs never pay off (and no memo: no rails). */
  return (FsCollAloneOpts){.route_fixed = fs_coll_topo_route_fixed, .route_ctx = s->tnet,
                           .min_steps = G_MAXUINT / 8};
}

static double rel(FsTime a, FsTime b)
{
  return fabs((double)a - (double)b) / (double)b;
}

/* ---- Folding ----------------------------------------------------------- */

START_TEST(test_fold_nvls_exact_to_the_ps)
{
  /* NVLS on a DGX H100: 16 channels over 4 NVLS switches, transfers to and
   * from a switch take one path: the folded run (width 4) equals the
   * unfolded one to the picosecond. */
  Sys s;
  sys_open(&s, "dgx-h100.yaml", NULL);
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  choose(&s, FS_COLL_ALL_REDUCE, 64u << 20, "nvls", FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
  FsCollAloneOpts f = fold_only(&s);
  FsCollAloneStats a = time_it(&s, &ch, &req, nb, &exact_opts);
  FsCollAloneStats b = time_it(&s, &ch, &req, nb, &f);
  printf("nvls 64 MiB: exact %" G_GINT64_FORMAT " ps (%" G_GUINT64_FORMAT " steps), folded x%u %"
         G_GINT64_FORMAT " ps (%" G_GUINT64_FORMAT " steps)\n",
         a.time, a.sim_steps, b.width, b.time, b.sim_steps);
  fflush(stdout);
  ck_assert_uint_eq(a.width, 1);
  ck_assert_uint_gt(b.width, 1);
  ck_assert_uint_lt(b.sim_steps, a.sim_steps);
  ck_assert_int_eq(a.time, b.time);
  sys_close(&s);
}
END_TEST

START_TEST(test_fold_ring_nvlink_close)
{
  /* Ring on a DGX H100: every channel's ring is the same order, so all
   * fold into one.  Each transfer is split over the 4 NVSwitch planes in
   * whole bytes; the folded transfer splits k times the bytes at once, so
   * the two differ by that rounding only. */
  Sys s;
  sys_open(&s, "dgx-h100.yaml", NULL);
  const uint64_t sizes[] = {1u << 20, 32u << 20};
  for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
    FsCollChoice ch;
    FsCollRequest req;
    uint64_t nb;
    choose(&s, FS_COLL_ALL_REDUCE, sizes[i], "ring", -1, 0, &ch, &req, &nb);
    FsCollAloneOpts f = fold_only(&s);
    FsCollAloneStats a = time_it(&s, &ch, &req, nb, &exact_opts);
    FsCollAloneStats b = time_it(&s, &ch, &req, nb, &f);
    printf("ring %" G_GUINT64_FORMAT " B %s/%u: exact %" G_GINT64_FORMAT " ps, folded x%u %"
           G_GINT64_FORMAT " ps, rel %.2e\n", sizes[i], fs_coll_proto_name(ch.proto), ch.nchannels,
           a.time, b.width, b.time, rel(b.time, a.time));
    fflush(stdout);
    ck_assert_uint_eq(b.width, ch.nchannels);
    ck_assert_double_le(rel(b.time, a.time), 1e-3);
  }
  sys_close(&s);
}
END_TEST

static gboolean never_fixed(void *ctx, int src, int dst)
{
  (void)ctx, (void)src, (void)dst;
  return FALSE;
}

START_TEST(test_fold_refused)
{
  Sys s;
  sys_open(&s, "dgx-h100.yaml", NULL);
  GError *err = NULL;
  FsCollRequest req = {
    .op = FS_COLL_ALL_REDUCE, .bytes = 1u << 20, .dtype = FS_COLL_DT_FLOAT,
    .proto = FS_PROTO_SIMPLE, .nchannels = 4, .chunk_bytes = 128u << 10, .slice_bytes = 64u << 10,
  };
  g_autoptr(FsCollPlan) p = fs_coll_plan_new(s.comm, fs_coll_algo_find("ring"), &req, &err);
  fs_assert_no_error(err);
  /* Identical channels fold... */
  g_autoptr(FsCollPlan) f = fs_coll_plan_fold(p, fs_coll_topo_route_fixed, s.tnet);
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fs_coll_plan_width(f), 4);
  ck_assert_uint_eq(fs_coll_plan_n_steps(f) * 4, fs_coll_plan_n_steps(p));
  ck_assert_uint_eq(fs_coll_plan_xfer_bytes(f), fs_coll_plan_xfer_bytes(p));
  ck_assert_uint_eq(fs_coll_plan_latency_depth(f), fs_coll_plan_latency_depth(p));
  /* ...not when a route may depend on the ECMP key, nor a folded plan again... */
  ck_assert_ptr_null(fs_coll_plan_fold(p, never_fixed, NULL));
  ck_assert_ptr_null(fs_coll_plan_fold(p, NULL, NULL));
  ck_assert_ptr_null(fs_coll_plan_fold(f, fs_coll_topo_route_fixed, s.tnet));
  /* ...nor when the channels' shares differ (3 equal ones and the last
   * with the remainder: classes of 3 and 1, no common width). */
  req.bytes = (1u << 20) + 4;
  g_autoptr(FsCollPlan) q = fs_coll_plan_new(s.comm, fs_coll_algo_find("ring"), &req, &err);
  fs_assert_no_error(err);
  ck_assert_ptr_null(fs_coll_plan_fold(q, fs_coll_topo_route_fixed, s.tnet));
  sys_close(&s);
}
END_TEST

START_TEST(test_fold_route_fixed)
{
  /* NVLink spraying makes no ECMP pick; routes across a fabric with
   * several equal uplinks do (a NIC's leaf to another pod). */
  Sys s;
  sys_open(&s, "dgx-h100.yaml", NULL);
  ck_assert(fs_coll_topo_route_fixed(s.tnet, fs_comm_gpu(s.comm, 0), fs_comm_gpu(s.comm, 1)));
  sys_close(&s);
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=64");
  guint n = fs_comm_size(s.comm);
  /* InfiniBand routes by destination (route.h, FsRouteOptions.ecmp auto):
   * every pair is fixed.  Hashing every flow (ecmp flow, as Ethernet
   * does) makes the pairs across leaves depend on the key. */
  FsRouteOptions ro;
  fs_route_options_init(&ro);
  ro.ecmp = FS_ROUTE_ECMP_FLOW;
  FsFlowNet *fnet = fs_flownet_new(s.sim, FS_NET_MAXMIN);
  FsRouter *frouter = fs_router_new(s.topo, fnet, &ro);
  FsCollTopoNet *ftnet = fs_coll_topo_net_new(frouter);
  guint fixed = 0, flow_fixed = 0, pairs = 0;
  for (guint r = 8; r < n; r += 8, pairs++) {
    fixed += fs_coll_topo_route_fixed(s.tnet, fs_comm_gpu(s.comm, 0), fs_comm_gpu(s.comm, r));
    flow_fixed += fs_coll_topo_route_fixed(ftnet, fs_comm_gpu(s.comm, 0), fs_comm_gpu(s.comm, r));
  }
  printf("64 NDR nodes, GPU 0 to local rank 0 of the %u other hosts: %u fixed by destination, "
         "%u fixed with per-flow ECMP\n", pairs, fixed, flow_fixed);
  fflush(stdout);
  ck_assert_uint_eq(fixed, pairs);
  ck_assert_uint_lt(flow_fixed, pairs);
  fs_coll_topo_net_free(ftnet);
  fs_router_free(frouter);
  fs_flownet_free(fnet);
  sys_close(&s);
}
END_TEST

START_TEST(test_fold_while_building)
{
  struct {
    const char *topo, *define;
    FsCollOp op;
    const char *algo;
    uint64_t size;
    guint min_width; /* 1: not folded (the whole plan) */
  } cases[] = {
    {"dgx-h100.yaml", NULL, FS_COLL_ALL_REDUCE, "nvls", 64u << 20, 4},
    {"dgx-h100.yaml", NULL, FS_COLL_ALL_GATHER, "nvls", 64u << 20, 4},
    {"dgx-h100.yaml", NULL, FS_COLL_ALL_REDUCE, "ring", 64u << 20, 2},
    {"dgx-h100.yaml", NULL, FS_COLL_ALLTOALL, "direct", 16u << 20, 1},
    {"dgx-h100.yaml", NULL, FS_COLL_ALL_REDUCE, "ring", (64u << 20) + 4, 1}, /* unequal shares */
    {"dgx-h100-ib-ndr.yaml", "nodes=4", FS_COLL_ALL_REDUCE, "nvls_tree", 64u << 20, 4},
    {"dgx-h100-ib-ndr.yaml", "nodes=2", FS_COLL_ALL_REDUCE, "tree", 16u << 20, 1},
    {"dgx-h100-ib-ndr.yaml", "nodes=2", FS_COLL_ALL_REDUCE, "hier", 16u << 20, 1},
    /* Channels of the two host trees: the mirrored channel matches the
     * other tree through every host's NVLS reduce, then differs. */
    {"dgx-h100-ib-ndr.yaml", "nodes=8", FS_COLL_ALL_REDUCE, "nvls_tree", 32u << 20, 4},
    {"dgx-h100-ib-ndr.yaml", "nodes=2", FS_COLL_ALL_GATHER, "ring", 16u << 20, 1},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    Sys s;
    sys_open(&s, cases[i].topo, cases[i].define);
    FsCollChoice ch;
    FsCollRequest req;
    uint64_t nb;
    choose(&s, cases[i].op, cases[i].size, cases[i].algo, FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
    GError *err = NULL;
    g_autoptr(FsCollPlan) whole = fs_coll_plan_new(s.comm, ch.algo, &req, &err);
    fs_assert_no_error(err);
    g_autoptr(FsCollPlan) folded = fs_coll_plan_fold(whole, fs_coll_topo_route_fixed, s.tnet);
    /* Channels an algorithm claims to mirror (plan.h fs_plan_channel_mirrored):
     * taken unmade (0), then made and checked (1); the same plan both ways. */
    for (guint check = 0; check < 2; check++) {
      g_setenv("FABRICSIM_CHECK_MIRRORS", check ? "1" : "0", TRUE);
      g_autoptr(FsCollPlan) built = fs_coll_plan_new_folded(s.comm, ch.algo, &req,
                                                            fs_coll_topo_route_fixed, s.tnet, &err);
      fs_assert_no_error(err);
      g_autofree char *what = g_strdup_printf("%s %s %s (mirrors %s)", cases[i].topo,
                                              cases[i].algo, fs_coll_op_name(cases[i].op),
                                              check ? "checked" : "taken");
      printf("fold while building, %s: %u of %u steps, width %u\n", what,
             fs_coll_plan_n_steps(built), fs_coll_plan_n_steps(whole), fs_coll_plan_width(built));
      fflush(stdout);
      fs_test_check_same_plan(built, folded ? folded : whole, what);
      fs_test_check_plan_conns(whole, what);
      fs_test_check_plan_conns(built, what);
      if (cases[i].min_width > 1) {
        ck_assert_uint_ge(fs_coll_plan_width(built), cases[i].min_width);
        ck_assert_msg(fs_coll_plan_folded_while_built(built), "%s: built whole", what);
      }
    }
    g_unsetenv("FABRICSIM_CHECK_MIRRORS");
    sys_close(&s);
  }
}
END_TEST

/* A made-up algorithm whose channels exercise every case of mirroring
 * while folding (plan-mirror.c, FoldBuild): channel c is a chain of transfers
 * over ranks 0 → 1 → 2 …, of 6 steps (c ≡ 0 mod 4), of 3 steps, a prefix
 * of those (c ≡ 1: mirrored to its end with only longer candidates, then
 * kept), of 6 steps whose fourth goes elsewhere (c ≡ 2: stored from the
 * step that differs), and of 6 again with a reduction (c ≡ 3). */
static void build_mirror_cases(FsPlanBuilder *b)
{
  const FsCollRequest *req = fs_plan_req(b);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    guint kind = ch % 4, n = kind == 1 ? 3 : 6;
    uint32_t prev = FS_STEP_NONE;
    for (guint k = 0; k < n; k++) {
      guint src = k % 4, dst = kind == 2 && k == 3 ? 7 : (k + 1) % 4;
      prev = fs_plan_xfer(b, ch, FS_EP_RANK(src), FS_EP_RANK(dst), 4096, &prev, 1);
      if (kind == 3 && k == 4)
        prev = fs_plan_reduce(b, dst, 4096, &prev, 1);
    }
  }
}

static const char *mirror_cases_unsupported(const FsComm *comm, FsCollOp op)
{
  (void)comm, (void)op;
  return NULL;
}

static const FsCollAlgo mirror_cases_algo = {
  .name = "mirror-cases", .nccl = FS_NCCL_ALGO_NONE, .summary = "test",
  .unsupported = mirror_cases_unsupported, .build = build_mirror_cases,
};

START_TEST(test_fold_mirror_cases)
{
  Sys s;
  sys_open(&s, "dgx-h100.yaml", NULL);
  FsCollRequest req = {.op = FS_COLL_ALL_REDUCE, .bytes = 1u << 20, .dtype = FS_COLL_DT_FLOAT,
                       .proto = FS_PROTO_SIMPLE, .nchannels = 8, .chunk_bytes = 1u << 20};
  GError *err = NULL;
  g_autoptr(FsCollPlan) whole = fs_coll_plan_new(s.comm, &mirror_cases_algo, &req, &err);
  fs_assert_no_error(err);
  g_autoptr(FsCollPlan) folded = fs_coll_plan_fold(whole, fs_coll_topo_route_fixed, s.tnet);
  ck_assert_ptr_nonnull(folded);
  g_autoptr(FsCollPlan) built = fs_coll_plan_new_folded(s.comm, &mirror_cases_algo, &req,
                                                        fs_coll_topo_route_fixed, s.tnet, &err);
  fs_assert_no_error(err);
  /* Four classes of two channels: 6 + 3 + 6 + 7 steps kept, width 2,
   * folded while built (not the whole plan folded after). */
  ck_assert(fs_coll_plan_folded_while_built(built));
  ck_assert(!fs_coll_plan_folded_while_built(whole));
  ck_assert_uint_eq(fs_coll_plan_width(built), 2);
  ck_assert_uint_eq(fs_coll_plan_n_steps(built), 22);
  fs_test_check_same_plan(built, folded, "mirror cases");
  fs_test_check_plan_conns(built, "mirror cases");
  sys_close(&s);
}
END_TEST

/* A made-up algorithm that claims its channels mirror (fs_plan_channel_mirrored):
 * channel c is a chain 0 → 1 → 2 → 3 of transfers over ranks only, whose
 * size depends on c / 4 mod 2, claimed with step claim_step (8: true; 4:
 * false, channels 0 and 4 differ; both multiples of the host's NVLS switch
 * count, so that the claim is taken or checked). */
static guint claim_step;

static void build_mirror_claims(FsPlanBuilder *b)
{
  const FsCollRequest *req = fs_plan_req(b);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    if (fs_plan_channel_mirrored(b, ch, claim_step))
      continue;
    uint32_t prev = FS_STEP_NONE;
    for (guint k = 0; k < 3; k++)
      prev = fs_plan_xfer(b, ch, FS_EP_RANK(k), FS_EP_RANK(k + 1), 4096u << (ch / 4 % 2), &prev, 1);
  }
}

static const FsCollAlgo mirror_claims_algo = {
  .name = "mirror-claims", .nccl = FS_NCCL_ALGO_NONE, .summary = "test",
  .unsupported = mirror_cases_unsupported, .build = build_mirror_claims,
};

START_TEST(test_fold_mirror_claims)
{
  Sys s;
  sys_open(&s, "dgx-h100.yaml", NULL);
  FsCollRequest req = {.op = FS_COLL_ALL_REDUCE, .bytes = 1u << 20, .dtype = FS_COLL_DT_FLOAT,
                       .proto = FS_PROTO_SIMPLE, .nchannels = 8, .chunk_bytes = 1u << 20};
  GError *err = NULL;
  claim_step = 8;
  req.nchannels = 16;
  g_autoptr(FsCollPlan) whole = fs_coll_plan_new(s.comm, &mirror_claims_algo, &req, &err);
  fs_assert_no_error(err);
  ck_assert_uint_eq(fs_coll_plan_n_steps(whole), 48); /* a plain build makes every channel */
  g_autoptr(FsCollPlan) folded = fs_coll_plan_fold(whole, fs_coll_topo_route_fixed, s.tnet);
  ck_assert_ptr_nonnull(folded);
  for (guint check = 0; check < 2; check++) {
    g_setenv("FABRICSIM_CHECK_MIRRORS", check ? "1" : "0", TRUE);
    g_autoptr(FsCollPlan) built = fs_coll_plan_new_folded(s.comm, &mirror_claims_algo, &req,
                                                          fs_coll_topo_route_fixed, s.tnet, &err);
    fs_assert_no_error(err);
    ck_assert(fs_coll_plan_folded_while_built(built));
    ck_assert_uint_eq(fs_coll_plan_width(built), 8); /* two classes of 8 */
    ck_assert_uint_eq(fs_coll_plan_n_steps(built), 6);
    fs_test_check_same_plan(built, folded, check ? "claims checked" : "claims taken");
  }
  /* A false claim, checked: the build stops with the check's error. */
  claim_step = 4;
  fflush(stdout);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    g_setenv("FABRICSIM_CHECK_MIRRORS", "1", TRUE);
    FsCollPlan *bad = fs_coll_plan_new_folded(s.comm, &mirror_claims_algo, &req,
                                              fs_coll_topo_route_fixed, s.tnet, NULL);
    fs_coll_plan_free(bad);
    _exit(0);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFSIGNALED(status), "a false mirror claim passed the check (status %d)", status);
  g_unsetenv("FABRICSIM_CHECK_MIRRORS");
  sys_close(&s);
}
END_TEST

/* ---- The fast path against the full simulation ------------------------ */

typedef struct {
  FsCollOp op;
  const char *algo;
  uint64_t size;
  guint nch; /* 0: the tuner's */
} Case;

/* How far the fast path (folding, step extrapolation) may be from the
 * simulation of every transfer: a folded copy's bytes split over the
 * NVSwitch planes in whole bytes (test_fold_ring_nvlink_close).  Measured
 * 2026-11-28: at most 4.9e-6 (the tree on a DGX H100), 0 on 2 NDR nodes. */
#define FAST_TOL 1e-5

/* Every case timed exact and fast (no memo): every loop simulated and the
 * times within FAST_TOL; returns the worst error. */
static double check_cases(Sys *s, const Case *cases, guint n)
{
  double worst = 0;
  FsCollAloneOpts fast = {.route_fixed = fs_coll_topo_route_fixed, .route_ctx = s->tnet};
  for (guint i = 0; i < n; i++) {
    FsCollChoice ch;
    FsCollRequest req;
    uint64_t nb;
    choose(s, cases[i].op, cases[i].size, cases[i].algo, FS_PROTO_SIMPLE, cases[i].nch, &ch, &req,
           &nb);
    FsCollAloneStats a = time_it(s, &ch, &req, nb, &exact_opts);
    FsCollAloneStats b = time_it(s, &ch, &req, nb, &fast);
    double e = rel(b.time, a.time);
    printf("%-14s %-10s %11" G_GUINT64_FORMAT " B %2u ch: full %.3f us (%" G_GUINT64_FORMAT
           " loops, %" G_GUINT64_FORMAT " steps), fast %.3f us (%" G_GUINT64_FORMAT
           " loops, width %u, %u runs, %" G_GUINT64_FORMAT " steps), error %.2e\n",
           fs_coll_op_name(cases[i].op), cases[i].algo, cases[i].size, ch.nchannels,
           fs_time_to_us(a.time), a.loops, a.sim_steps, fs_time_to_us(b.time), b.sim_loops,
           b.width, b.runs, b.sim_steps, e);
    fflush(stdout);
    ck_assert_uint_eq(b.sim_loops, b.loops);
    ck_assert_msg(e <= FAST_TOL, "%s %s %" G_GUINT64_FORMAT ": error %.2e", cases[i].algo,
                  fs_coll_op_name(cases[i].op), cases[i].size, e);
    worst = MAX(worst, e);
  }
  return worst;
}

START_TEST(test_fast_dgx_h100)
{
  Sys s;
  sys_open(&s, "dgx-h100.yaml", NULL);
  const Case cases[] = {
    {FS_COLL_ALL_REDUCE, "ring", 1u << 30, 1},
    {FS_COLL_ALL_REDUCE, "ring", 1u << 30, 2},
    {FS_COLL_ALL_GATHER, "ring", 1u << 30, 1},
    {FS_COLL_REDUCE_SCATTER, "ring", 1u << 30, 1},
    {FS_COLL_BROADCAST, "ring", 64u << 20, 2},
    {FS_COLL_ALL_REDUCE, "tree", 256u << 20, 4},
    {FS_COLL_ALL_REDUCE, "nvls", 256u << 20, 4},
    {FS_COLL_ALL_REDUCE, "nvls", 1u << 30, 0},
    {FS_COLL_ALL_GATHER, "nvls", 256u << 20, 1},
  };
  double w = check_cases(&s, cases, G_N_ELEMENTS(cases));
  printf("DGX H100: worst error %.2e\n", w);
  sys_close(&s);
}
END_TEST

START_TEST(test_fast_ndr_2_nodes)
{
  Sys s;
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=2");
  const Case cases[] = {
    {FS_COLL_ALL_REDUCE, "ring", 1u << 30, 1},
    {FS_COLL_ALL_REDUCE, "tree", 1u << 30, 4},
    /* The NVLS tree, whose drift the removed loop extrapolation's check
     * missed (alone.h). */
    {FS_COLL_ALL_REDUCE, "nvls_tree", 256u << 20, 4},
    {FS_COLL_ALL_REDUCE, "hier", 1u << 30, 1},
  };
  double w = check_cases(&s, cases, G_N_ELEMENTS(cases));
  printf("2 NDR nodes: worst error %.2e\n", w);
  sys_close(&s);
}
END_TEST

/* ---- Bounded connection buffers ---------------------------------------- */

START_TEST(test_conn_slots_credits)
{
  /* With conn_slots = S, transfer k of a connection waits (credits) for
   * exactly the steps that consume transfer k - S of it; folding keeps
   * them; the run completes (no credit cycle).  The bound binds here: the
   * tree runs 3 % longer; the NVLS tree 0.2 % shorter (less run-ahead,
   * less sharing of the NICs between loops: under max-min sharing that can
   * help). */
  Sys s;
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=2");
  /* The NVLS tree as the plan alone runs it (no NVLSTree kernel rate, models/nccl
   * nvls_tree_kernel): its run-ahead is what the credits bound. */
  s.np->nvls_tree_exec_bw[FS_NCCL_ROW_HOPPER] = 0;
  GError *err = NULL;
  const char *algos[] = {"tree", "nvls_tree", "ring"};
  guint binds = 0;
  for (guint a = 0; a < G_N_ELEMENTS(algos); a++) {
    FsCollRequest req = {
      .op = FS_COLL_ALL_REDUCE, .bytes = 64u << 20, .dtype = FS_COLL_DT_FLOAT,
      .proto = FS_PROTO_SIMPLE, .nchannels = 4, .chunk_bytes = 2u << 20,
      .slice_bytes = 1u << 20, .conn_slots = 2,
    };
    g_autoptr(FsCollPlan) p = fs_coll_plan_new(s.comm, fs_coll_algo_find(algos[a]), &req, &err);
    fs_assert_no_error(err);
    guint n = fs_coll_plan_n_steps(p), with_credits = 0;
    /* Per step: the transfer two before it on its connection. */
    g_autofree uint32_t *prev = g_new(uint32_t, n);
    for (guint i = 0; i < n; i++) {
      guint nd;
      const uint32_t *d = fs_coll_plan_deps(p, i, &nd);
      prev[i] = FS_STEP_NONE;
      for (guint j = 0; j < nd; j++)
        if (fs_coll_step_same_conn(fs_coll_plan_step(p, d[j]), fs_coll_plan_step(p, i)))
          prev[i] = d[j];
    }
    for (guint i = 0; i < n; i++) {
      guint nc;
      const uint32_t *c = fs_coll_plan_credits(p, i, &nc);
      uint32_t k2 = prev[i] == FS_STEP_NONE ? FS_STEP_NONE : prev[prev[i]];
      if (k2 == FS_STEP_NONE) {
        ck_assert_uint_eq(nc, 0);
        continue;
      }
      /* Every credit consumes k2's data; every consumer of k2 is a credit. */
      guint consumers = 0;
      for (guint x = 0; x < n; x++) {
        guint nd;
        const uint32_t *d = fs_coll_plan_deps(p, x, &nd);
        for (guint j = 0; j < nd; j++)
          if (d[j] == k2 && prev[x] != k2) {
            consumers++;
            gboolean found = FALSE;
            for (guint y = 0; y < nc; y++)
              found |= c[y] == x;
            ck_assert_msg(found, "%s: step %u misses credit %u", algos[a], i, x);
          }
      }
      ck_assert_uint_eq(nc, consumers);
      with_credits += nc > 0;
    }
    ck_assert_uint_gt(with_credits, 0);
    FsCollChoice ch = {.algo = fs_coll_algo_find(algos[a]), .proto = FS_PROTO_SIMPLE,
                       .nchannels = 4, .chunk_bytes = 2u << 20, .slice_bytes = 1u << 20};
    uint64_t nb = 64u << 20;
    FsTime bounded = time_it(&s, &ch, &req, nb, &exact_opts).time;
    FsCollAloneOpts f = fold_only(&s);
    FsTime folded = time_it(&s, &ch, &req, nb, &f).time;
    req.conn_slots = 0;
    FsTime free_run = time_it(&s, &ch, &req, nb, &exact_opts).time;
    printf("%s 64 MiB 4 ch, 2 slots: %.3f us (folded %.3f), unbounded %.3f us\n", algos[a],
           fs_time_to_us(bounded), fs_time_to_us(folded), fs_time_to_us(free_run));
    fflush(stdout);
    ck_assert_double_le(rel(folded, bounded), 1e-3);
    binds += bounded != free_run;
  }
  ck_assert_uint_ge(binds, 2);
  sys_close(&s);
}
END_TEST

/* ---- A sweep's rows ---------------------------------------------------- */

/* The NVLS tree all_reduce of `size` bytes (Simple, the tuner's channels)
 * timed alone with opts. */
static FsCollAloneStats time_nvls_tree(Sys *s, uint64_t size, const FsCollAloneOpts *opts)
{
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  choose(s, FS_COLL_ALL_REDUCE, size, "nvls_tree", FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
  return time_it(s, &ch, &req, nb, opts);
}

START_TEST(test_sweep_rows_are_alone_runs)
{
  /* A sweep's sizes share a memo (fs_coll_bench); each row must be the
   * time the size gives alone (its own memo, as `coll -b S -e S`) and the
   * whole plan's (no memo: folded, every loop simulated).  The NVLS tree
   * across 8 NDR nodes has no periodic regime: its 2 and 4 GiB (128 and
   * 256 loops) took the window extrapolation (removed, alone.h) from the
   * smaller sizes' runs, -0.24 and -0.61 % from their whole runs (and on
   * 128 nodes the 1 GiB row +3.0 % from its alone run; RESULTS.md in
   * tests/bench, branch window19). */
  Sys s;
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=8");
  g_autoptr(FsCollAloneMemo) swept = fs_coll_alone_memo_new();
  FsCollAloneOpts sweep = {.route_fixed = fs_coll_topo_route_fixed,
                           .route_paths = fs_coll_topo_route_paths, .route_ctx = s.tnet,
                           .memo = swept};
  FsCollAloneOpts whole = {.route_fixed = fs_coll_topo_route_fixed, .route_ctx = s.tnet};
  /* Up to 2 GiB under the sanitizers (its whole runs have no rails). */
  uint64_t largest = fs_test_reduced() ? 2ull << 30 : 4ull << 30;
  for (uint64_t size = 128u << 20; size <= largest; size *= 2) {
    g_autoptr(FsCollAloneMemo) own = fs_coll_alone_memo_new();
    FsCollAloneOpts alone = sweep;
    alone.memo = own;
    FsCollAloneStats a = time_nvls_tree(&s, size, &sweep);
    FsCollAloneStats b = time_nvls_tree(&s, size, &alone);
    FsCollAloneStats c = time_nvls_tree(&s, size, &whole);
    printf("nvls_tree 8 nodes %" G_GUINT64_FORMAT " MiB (%" G_GUINT64_FORMAT " loops): sweep "
           "%.6f us, alone %.6f us, whole %.6f us\n", size >> 20, c.loops, fs_time_to_us(a.time),
           fs_time_to_us(b.time), fs_time_to_us(c.time));
    fflush(stdout);
    ck_assert(!a.streams && !b.streams && !c.streams);
    ck_assert_int_eq(a.time, b.time);
    ck_assert_int_eq(b.time, c.time);
  }
  sys_close(&s);
}
END_TEST

/* ---- Step extrapolation ------------------------------------------------ */

/* Ring op of size on s (protocol proto, -1 = the tuner's; channels nch, 0 = the tuner's) timed exact and
 * fast: step extrapolated (fewer ring steps simulated than the loop has)
 * and within tol of the full simulation.  Returns the error. */
static double check_ring_steps(Sys *s, const char *what, FsCollOp op, uint64_t size, int proto,
                               guint nch, double tol)
{
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  choose(s, op, size, "ring", proto, nch, &ch, &req, &nb);
  FsCollAloneOpts fast = {.route_fixed = fs_coll_topo_route_fixed, .route_ctx = s->tnet};
  FsCollAloneStats a = time_it(s, &ch, &req, nb, &exact_opts);
  FsCollAloneStats b = time_it(s, &ch, &req, nb, &fast);
  double e = rel(b.time, a.time);
  printf("%s: ring %s %" G_GUINT64_FORMAT " B %s/%u, %u ranks: exact %.3f us (%" G_GUINT64_FORMAT
         " steps), fast %.3f us (%u of %u ring steps, width %u, %u runs, %" G_GUINT64_FORMAT
         " steps), error %.2e\n", what, fs_coll_op_name(op), size, fs_coll_proto_name(ch.proto),
         ch.nchannels, fs_comm_size(s->comm), fs_time_to_us(a.time), a.sim_steps,
         fs_time_to_us(b.time), b.sim_ring_steps, b.ring_steps, b.width, b.runs, b.sim_steps, e);
  fflush(stdout);
  ck_assert_uint_eq(a.sim_ring_steps, a.ring_steps);
  if (tol < 0) {
    /* Expected to fail the periodicity check and run whole. */
    ck_assert_uint_eq(b.sim_ring_steps, b.ring_steps);
    ck_assert_int_eq(b.time, a.time);
    return e;
  }
  ck_assert_msg(b.sim_ring_steps < b.ring_steps, "%s: not step extrapolated", what);
  ck_assert_msg(e <= tol, "%s: error %.2e", what, e);
  return e;
}

START_TEST(test_extrapolate_ring_steps)
{
  /* 8 NDR nodes, 64 ranks, one partial loop: the ring's steps repeat
   * exactly (the hosts sit under one leaf per rail).  With the sender's own
   * NIC (NCCL_CROSS_NIC=1, the routes before rails); the default rails
   * repeat every host's 8 steps instead (test-rails.c). */
  Sys s;
  g_setenv("NCCL_CROSS_NIC", "1", TRUE);
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=8");
  g_unsetenv("NCCL_CROSS_NIC");
  /* On Simple: the tuner's LL128 at these sizes holds its flows across hosts to NCCL's LL128
   * cap per graph channel (collrun/exec-params.c, since 2026-11-28), and those steps no longer
   * repeat to the picosecond (all_reduce extrapolated 2.8e-5 short, all_gather run whole). */
  double w = check_ring_steps(&s, "8 nodes", FS_COLL_ALL_REDUCE, 64u << 20, FS_PROTO_SIMPLE, 0, 1e-6);
  w = MAX(w, check_ring_steps(&s, "8 nodes", FS_COLL_ALL_GATHER, 16u << 20, FS_PROTO_SIMPLE, 0, 2e-6));
  sys_close(&s);
  /* 40 nodes, one GPU each (rail 0): the ring crosses two scalable units
   * (32 nodes per leaf); the longer hops through the spines take about a
   * ring's length in steps to settle, and here that shows within the steps
   * checked: refused, run whole.  (With 128 such nodes it does not show
   * there: extrapolated 3.5e-4 short, tests/bench/RESULTS.md.) */
  g_autoptr(GString) g = g_string_new(NULL);
  for (guint h = 0; h < 40; h++)
    g_string_append_printf(g, "%snode%u/gpu0", h ? "," : "", h);
  sys_open_gpus(&s, "dgx-h100-ib-ndr.yaml", "nodes=40", g->str);
  w = MAX(w, check_ring_steps(&s, "40 nodes x 1", FS_COLL_ALL_REDUCE, 100u << 20, -1, 0, -1));
  sys_close(&s);
  printf("step extrapolation: worst error %.2e\n", w);
}
END_TEST

/* ---- Slice coarsening -------------------------------------------------- */

START_TEST(test_coarsen_bounds_transfers)
{
  Sys s;
  sys_open(&s, "dgx-h100.yaml", NULL);
  GError *err = NULL;
  const char *algos[] = {"ring", "tree", "nvls"};
  for (guint a = 0; a < G_N_ELEMENTS(algos); a++) {
    FsCollChoice ch;
    FsCollRequest req;
    uint64_t nb;
    choose(&s, FS_COLL_ALL_REDUCE, 64u << 20, algos[a], FS_PROTO_SIMPLE, 1, &ch, &req, &nb);
    g_autoptr(FsCollPlan) exact = fs_coll_plan_new(s.comm, ch.algo, &req, &err);
    fs_assert_no_error(err);
    FsTime t0 = time_it(&s, &ch, &req, nb, &exact_opts).time;
    const guint limits[] = {64, 32};
    for (guint l = 0; l < G_N_ELEMENTS(limits); l++) {
      FsCollRequest r = req;
      r.max_slices_per_conn = limits[l];
      g_autoptr(FsCollPlan) p = fs_coll_plan_new(s.comm, ch.algo, &r, &err);
      fs_assert_no_error(err);
      ck_assert_uint_le(fs_coll_plan_max_conn_xfers(p), limits[l]);
      ck_assert_uint_gt(fs_coll_plan_request(p)->slice_bytes, req.slice_bytes);
      ck_assert_uint_eq(fs_coll_plan_xfer_bytes(p), fs_coll_plan_xfer_bytes(exact));
      FsTime t = time_it(&s, &ch, &r, nb, &exact_opts).time;
      double e = ((double)t - (double)t0) / (double)t0;
      printf("%-5s 64 MiB 1 ch: exact %u transfers/conn %.2f us; max %u/conn: %u (slice %"
             G_GUINT64_FORMAT " B) %.2f us, error %+.2f %%\n", algos[a],
             fs_coll_plan_max_conn_xfers(exact), fs_time_to_us(t0), limits[l],
             fs_coll_plan_max_conn_xfers(p), fs_coll_plan_request(p)->slice_bytes,
             fs_time_to_us(t), 100 * e);
      fflush(stdout);
      /* Coarser pipelines fill more slowly, but fewer latency-charged
       * hops (the per-step latency follows the plan's latency depth) can
       * make up for it: within 25 % either way down to 32 per connection. */
      ck_assert_double_le(fabs(e), 0.25);
    }
    /* 0 leaves the plan as NCCL slices it. */
    ck_assert_uint_eq(fs_coll_plan_request(exact)->slice_bytes, req.slice_bytes);
  }
  sys_close(&s);
}
END_TEST

/* ---- Mirrored rails (collrun/rails.h) ----------------------------------- */

/* The NVLS tree's collective ch/req on s timed twice, each with a memo of
 * its own: whole (*whole: no route_paths, so no rails) and with its rails
 * mirrored (*mirrored); prints both as `what`. */
static void time_whole_and_mirrored(Sys *s, const FsCollChoice *ch, const FsCollRequest *req,
                                    uint64_t nb, const char *what, FsCollAloneStats *whole,
                                    FsCollAloneStats *mirrored)
{
  g_autoptr(FsCollAloneMemo) m1 = fs_coll_alone_memo_new();
  g_autoptr(FsCollAloneMemo) m2 = fs_coll_alone_memo_new();
  FsCollAloneOpts plain = {.route_fixed = fs_coll_topo_route_fixed, .route_ctx = s->tnet,
                           .memo = m1};
  FsCollAloneOpts mirror = plain;
  mirror.route_paths = fs_coll_topo_route_paths;
  mirror.memo = m2;
  *whole = time_it(s, ch, req, nb, &plain);
  *mirrored = time_it(s, ch, req, nb, &mirror);
  printf("rails mirrored, nvls_tree %s: %.6f us, %" G_GUINT64_FORMAT " steps; whole %.6f us, "
         "%" G_GUINT64_FORMAT " steps\n",
         what, fs_time_to_us(mirrored->time), mirrored->sim_steps, fs_time_to_us(whole->time),
         whole->sim_steps);
}

START_TEST(test_rails_mirror_exact)
{
  /* The NVLS tree on whole DGX H100 nodes of one rail-optimized scalable
   * unit: every local rank's legs and tree edges are rank 0's on its own
   * NVLinks, PCIe path, NIC and rail, so its runs make rank 0's part only
   * and time as the whole plan, to the picosecond (folded and extrapolated
   * alike both ways: only the routes' callback differs). */
  struct {
    const char *define;
    uint64_t size;
  } cases[] = {{"nodes=2", 64u << 20}, {"nodes=4", 64u << 20}, {"nodes=4", 256u << 20},
               {"nodes=4", (64u << 20) + 4096}};
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    Sys s;
    sys_open(&s, "dgx-h100-ib-ndr.yaml", cases[i].define);
    FsCollChoice ch;
    FsCollRequest req;
    uint64_t nb;
    choose(&s, FS_COLL_ALL_REDUCE, cases[i].size, "nvls_tree", FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
    g_autoptr(FsCollRails) rails = fs_coll_rails_new(s.comm, ch.algo, &req, s.net,
                                                     fs_coll_topo_route_fixed,
                                                     fs_coll_topo_route_paths, s.tnet);
    ck_assert(rails != NULL);
    /* One scalable unit: every rail's links are rank 0's moved, none shared. */
    ck_assert_uint_eq(fs_coll_rails_n_watched(rails), 0);
    FsCollAloneStats a, b;
    g_autofree char *what = g_strdup_printf("%s %" G_GUINT64_FORMAT " B", cases[i].define,
                                            cases[i].size);
    time_whole_and_mirrored(&s, &ch, &req, nb, what, &a, &b);
    ck_assert_int_eq(b.time, a.time);
    ck_assert(!b.streams && !a.streams);
    /* The NVLS legs and every tree edge made by one rank of each host. */
    ck_assert_uint_le(b.sim_steps * 4, a.sim_steps);
    sys_close(&s);
  }
}
END_TEST

START_TEST(test_rails_mirror_watched)
{
  /* 40 nodes over two scalable units of 32: static routing hashes every
   * rail's tree edges over the spines differently, so some spine links
   * carry two edges of one rail where rank 0's carry one: watched, they
   * stay within capacity and the mirrored runs time as the whole ones. */
  Sys s;
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=40");
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  choose(&s, FS_COLL_ALL_REDUCE, 64u << 20, "nvls_tree", FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
  g_autoptr(FsCollRails) rails = fs_coll_rails_new(s.comm, ch.algo, &req, s.net,
                                                   fs_coll_topo_route_fixed,
                                                   fs_coll_topo_route_paths, s.tnet);
  ck_assert(rails != NULL);
  printf("rails of 40 nodes: %u watches\n", fs_coll_rails_n_watched(rails));
  ck_assert_uint_gt(fs_coll_rails_n_watched(rails), 0);
  FsCollAloneStats a, b;
  time_whole_and_mirrored(&s, &ch, &req, nb, "nodes=40 64 MiB", &a, &b);
  ck_assert_int_eq(b.time, a.time);
  ck_assert_uint_le(b.sim_steps * 4, a.sim_steps);
  /* A run that fills the watched links (a flow alone on every channel of
   * the network, each at its channel's capacity) does not hold: the whole
   * plan would run instead (alone.c). */
  fs_coll_rails_watch(rails, s.net);
  fs_test_coll_fill_every_channel(&s);
  ck_assert(!fs_coll_rails_held(rails, s.net));
  sys_close(&s);
}
END_TEST

START_TEST(test_rails_mirror_refused)
{
  /* One host (no tree), another algorithm: nothing to mirror. */
  Sys s;
  sys_open(&s, "dgx-h100.yaml", NULL);
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  choose(&s, FS_COLL_ALL_REDUCE, 64u << 20, "nvls", FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
  ck_assert(fs_coll_rails_new(s.comm, ch.algo, &req, s.net, fs_coll_topo_route_fixed,
                              fs_coll_topo_route_paths, s.tnet) == NULL);
  sys_close(&s);
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=4");
  choose(&s, FS_COLL_ALL_REDUCE, 64u << 20, "ring", FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
  ck_assert(fs_coll_rails_new(s.comm, ch.algo, &req, s.net, fs_coll_topo_route_fixed,
                              fs_coll_topo_route_paths, s.tnet) == NULL);
  choose(&s, FS_COLL_ALL_REDUCE, 64u << 20, "nvls_tree", FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
  /* No fixed routes to check against: refused. */
  ck_assert(fs_coll_rails_new(s.comm, ch.algo, &req, s.net, NULL, fs_coll_topo_route_paths,
                              s.tnet) == NULL);
  sys_close(&s);
}
END_TEST

/* ---- NVSwitch plane bundles (alone.h, net/route.h) ------------------- */

/* How far a run with the planes bundled may be from the same run per
 * plane, where the bundles apply: the per-plane split's byte remainders
 * shift drains by picoseconds.  Measured 2026-11-28: at most 6.6e-7 (the
 * tree with LL128 on 2 NDR nodes, 84 ps in 127.56 us). */
#define PLANES_TOL 1e-5

/* Times case c folded (no step extrapolation) with and without the plane
 * bundles; returns the relative difference, checks that the bundled run
 * held and, when exact_too, that the two are equal to the picosecond. */
static double check_planes(Sys *s, const Case *c, int proto, gboolean exact_too)
{
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  choose(s, c->op, c->size, c->algo, proto, c->nch, &ch, &req, &nb);
  FsCollAloneOpts plane = fold_only(s), bundle = fold_only(s);
  bundle.plane_bundles = fs_coll_topo_plane_bundles;
  bundle.planes_free = fs_coll_topo_planes_free;
  FsCollAloneStats a = time_it(s, &ch, &req, nb, &plane);
  FsCollAloneStats b = time_it(s, &ch, &req, nb, &bundle);
  double e = rel(b.time, a.time);
  printf("%-14s %-10s %11" G_GUINT64_FORMAT " B %2u ch: per plane %.6f us, bundled %.6f us "
         "(%u bundled runs), difference %.2e\n",
         fs_coll_op_name(c->op), c->algo, c->size, ch.nchannels, fs_time_to_us(a.time),
         fs_time_to_us(b.time), b.bundled_runs, e);
  fflush(stdout);
  ck_assert_uint_eq(a.bundled_runs, 0);
  ck_assert_uint_eq(b.bundled_runs, b.runs);
  ck_assert_uint_eq(b.unbundled_reruns, 0);
  if (exact_too)
    ck_assert_int_eq(a.time, b.time);
  ck_assert_msg(e <= PLANES_TOL, "%s %s: bundles moved the time by %.2e", c->algo,
                fs_coll_op_name(c->op), e);
  return e;
}

START_TEST(test_plane_bundles_match_per_plane)
{
  /* One DGX H100, and 2 NDR nodes (NCCL's tree with LL128 at 8 MiB, the
   * issue-19 shape): every NVLink transfer is one flow instead of 4. */
  Sys s;
  sys_open(&s, "dgx-h100.yaml", NULL);
  ck_assert_uint_eq(fs_router_plane_bundle_gpus(s.router), 8);
  const Case one[] = {
    {FS_COLL_ALL_REDUCE, "ring", 256u << 20, 1},
    {FS_COLL_ALL_GATHER, "ring", 256u << 20, 2},
    {FS_COLL_ALL_REDUCE, "tree", 64u << 20, 4},
    {FS_COLL_BROADCAST, "ring", 64u << 20, 2},
  };
  double w = 0;
  for (guint i = 0; i < G_N_ELEMENTS(one); i++)
    w = MAX(w, check_planes(&s, &one[i], FS_PROTO_SIMPLE, FALSE));
  sys_close(&s);
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=2");
  ck_assert_uint_eq(fs_router_plane_bundle_gpus(s.router), 16);
  const Case two[] = {
    {FS_COLL_ALL_REDUCE, "tree", 8u << 20, 0},
    {FS_COLL_ALL_REDUCE, "ring", 64u << 20, 0},
  };
  w = MAX(w, check_planes(&s, &two[0], FS_PROTO_LL128, FALSE));
  w = MAX(w, check_planes(&s, &two[1], FS_PROTO_SIMPLE, FALSE));
  /* alltoall crosses rails by PXN, each head on one plane: the plan is
   * not bundled at all (one question per connection), so it runs once, per
   * plane, in the per-plane time. */
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  choose(&s, FS_COLL_ALLTOALL, 16u << 20, "direct", FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
  FsCollAloneOpts plane = fold_only(&s), bundle = fold_only(&s);
  bundle.plane_bundles = fs_coll_topo_plane_bundles;
  bundle.planes_free = fs_coll_topo_planes_free;
  FsCollAloneStats a = time_it(&s, &ch, &req, nb, &plane);
  FsCollAloneStats b = time_it(&s, &ch, &req, nb, &bundle);
  ck_assert_uint_eq(b.bundled_runs + b.unbundled_reruns, 0);
  ck_assert_uint_eq(b.runs, a.runs);
  ck_assert_int_eq(a.time, b.time);
  printf("plane bundles: worst difference %.2e\n", w);
  sys_close(&s);
}
END_TEST

START_TEST(test_plane_bundles_failed_link)
{
  /* node1's gpu3 has a failed NVLink: node1 keeps its planes, node0 is
   * bundled; tree and ring the same to the picosecond here. */
  Sys s;
  sys_open(&s, "../tests/data/planes/dgx-h100-failed-link.yaml", NULL);
  ck_assert_uint_eq(fs_router_plane_bundle_gpus(s.router), 8);
  const Case c[] = {
    {FS_COLL_ALL_REDUCE, "tree", 8u << 20, 0},
    {FS_COLL_ALL_REDUCE, "ring", 64u << 20, 0},
  };
  check_planes(&s, &c[0], FS_PROTO_LL128, TRUE);
  check_planes(&s, &c[1], FS_PROTO_SIMPLE, FALSE);
  sys_close(&s);
}
END_TEST

/* A transfer callback that starts, with the collective's first transfer,
 * a flow over one NVSwitch plane (as a PXN head or an NVLS leg would). */
typedef struct {
  FsCollTopoNet *tnet;
  FsFlowNet *net;
  FsChannelId plane;
  gboolean started;
} Pinned;

static gboolean pinned_xfer(void *ctx, int src, int dst, uint64_t bytes, double rate_cap,
                            uint64_t key, FsFlowDoneFn done, FsFlowDoneFn drained,
                            void *done_ctx, void *user, GError **error)
{
  Pinned *p = ctx;
  if (!p->started) {
    p->started = TRUE;
    FsFlowSpec spec = {.path = &p->plane, .path_len = 1, .bytes = 1u << 20,
                       .start = fs_sim_now(fs_flownet_sim(p->net))};
    fs_flownet_start(p->net, &spec);
  }
  return fs_coll_topo_xfer(p->tnet, src, dst, bytes, rate_cap, key, done, drained, done_ctx,
                           user, error);
}

START_TEST(test_plane_bundles_pinned_flow_reruns)
{
  /* A flow pinned to plane 1 of gpu0 during a bundled ring: the run did
   * not hold, so it ran again per plane. */
  Sys s;
  sys_open(&s, "dgx-h100.yaml", NULL);
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  choose(&s, FS_COLL_ALL_REDUCE, 64u << 20, "ring", FS_PROTO_SIMPLE, 1, &ch, &req, &nb);
  guint n, g0 = (guint)fs_topo_find(s.topo, "gpu0"), sw = (guint)fs_topo_find(s.topo, "nvswitch1");
  const FsTopoAdj *adj = fs_topo_adj(s.topo, g0, &n);
  Pinned p = {.tnet = s.tnet, .net = s.net};
  for (guint k = 0; k < n; k++)
    if (adj[k].peer == sw)
      p.plane = fs_topo_channel_from(s.topo, adj[k].link, g0);
  FsCollAloneOpts plane = fold_only(&s), bundle = fold_only(&s);
  bundle.plane_bundles = fs_coll_topo_plane_bundles;
  GError *err = NULL;
  FsCollAloneStats a, b;
  ck_assert(fs_coll_time_alone(s.np, &s.sys, s.comm, nb, &ch, &req, 0, s.net, pinned_xfer, &p,
                               &plane, &a, &err));
  p.started = FALSE;
  ck_assert(fs_coll_time_alone(s.np, &s.sys, s.comm, nb, &ch, &req, 0, s.net, pinned_xfer, &p,
                               &bundle, &b, &err));
  fs_assert_no_error(err);
  ck_assert_uint_eq(a.unbundled_reruns, 0);
  ck_assert_uint_eq(b.unbundled_reruns, 1);
  ck_assert_uint_eq(b.bundled_runs, 0);
  ck_assert_uint_eq(b.runs, 2);
  /* The flow starts once (with the first run's first transfer): the rerun
   * is the per-plane run without it. */
  FsCollAloneStats c;
  ck_assert(fs_coll_time_alone(s.np, &s.sys, s.comm, nb, &ch, &req, 0, s.net, pinned_xfer, &p,
                               &plane, &c, &err));
  fs_assert_no_error(err);
  ck_assert_int_eq(c.time, b.time);
  ck_assert_int_ne(a.time, b.time);
  sys_close(&s);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("coll-fast");
  FS_ADD_TEST(s, test_fold_nvls_exact_to_the_ps);
  FS_ADD_TEST(s, test_fold_ring_nvlink_close);
  FS_ADD_TEST(s, test_fold_refused);
  FS_ADD_TEST(s, test_fold_route_fixed);
  FS_ADD_TEST(s, test_fold_while_building);
  FS_ADD_TEST(s, test_fold_mirror_cases);
  FS_ADD_TEST(s, test_fold_mirror_claims);
  FS_ADD_TEST(s, test_fast_dgx_h100);
  FS_ADD_TEST(s, test_fast_ndr_2_nodes);
  FS_ADD_TEST(s, test_extrapolate_ring_steps);
  FS_ADD_TEST(s, test_conn_slots_credits);
  FS_ADD_TEST(s, test_sweep_rows_are_alone_runs);
  FS_ADD_TEST(s, test_coarsen_bounds_transfers);
  FS_ADD_TEST(s, test_rails_mirror_exact);
  FS_ADD_TEST(s, test_rails_mirror_watched);
  FS_ADD_TEST(s, test_rails_mirror_refused);
  FS_ADD_TEST(s, test_plane_bundles_match_per_plane);
  FS_ADD_TEST(s, test_plane_bundles_failed_link);
  FS_ADD_TEST(s, test_plane_bundles_pinned_flow_reruns);
  return fs_test_run_suite(s);
}
