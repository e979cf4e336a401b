/* test-coll-dedup.c — the analytic model's shortcuts for a collective
 * timed alone (alone.h, dedup.h) against every transfer simulated:
 *   channel deduplication: one channel of each kind runs, and the time is
 *     the full run's to the picosecond (ring, tree, NVLS, NVLS tree and
 *     hierarchical plans, inside a DGX H100 and across NDR nodes);
 *   periodic step extrapolation: a ring that visits P GPUs per host
 *     repeats every P ring steps; extrapolated with period P it gives the
 *     whole run's time (rings of 2 GPUs per host over 32 nodes, 4 over 16). */
#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "collrun/alone.h"
#include "collrun/bench.h"
#include "collrun/coll-topo.h"
#include "testutil.h"

typedef FsTestColl Sys;

/* Topology name with define, communicator over gpu_list, analytic model. */
static void sys_open(Sys *s, const char *name, const char *define, const char *gpu_list)
{
  fs_test_coll_open(s, name, define, gpu_list, FS_NET_ANALYTIC);
}

static void sys_close(Sys *s)
{
  fs_test_coll_close(s);
}

/* Channels forced on the choices of choose() (0: the tuner's). */
static guint force_channels;

/* The tuner's choice for op of size bytes with algo forced (NULL: the
 * tuner's), and its request. */
static gboolean choose(Sys *s, FsCollOp op, uint64_t size, const char *algo, FsCollChoice *ch,
                       FsCollRequest *req, uint64_t *nbytes)
{
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  prefs.channels = force_channels;
  if (algo != NULL) {
    prefs.algo = fs_coll_algo_find(algo);
    ck_assert_ptr_nonnull(prefs.algo);
  }
  /* FALSE: the algorithm does not run here. */
  return fs_test_coll_choose(s, op, size, &prefs, ch, req, nbytes);
}

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

/* Deduplication only: no step extrapolation (the short runs would never
 * pay off). */
static FsCollAloneOpts dedup_only(Sys *s)
{
  return (FsCollAloneOpts){.route_profile = fs_coll_topo_route_profile, .route_ctx = s->tnet,
                           .min_steps = G_MAXUINT / 8};
}

/* Times op with every algorithm in algos that runs on s, exact and
 * deduplicated; they must agree to the picosecond.  Returns how many
 * plans ran fewer channels. */
static guint check_dedup(Sys *s, const char *what, FsCollOp op, uint64_t size)
{
  static const char *algos[] = {"ring", "tree", "nvls", "nvls_tree", "hier"};
  guint fewer = 0;
  for (guint i = 0; i < G_N_ELEMENTS(algos); i++) {
    FsCollChoice ch;
    FsCollRequest req;
    uint64_t nb;
    if (!choose(s, op, size, algos[i], &ch, &req, &nb))
      continue;
    FsCollAloneOpts d = dedup_only(s);
    FsCollAloneStats a = time_it(s, &ch, &req, nb, &exact_opts);
    FsCollAloneStats b = time_it(s, &ch, &req, nb, &d);
    printf("%s: %s %s %" G_GUINT64_FORMAT " B %s/%u: exact %" G_GINT64_FORMAT " ps (%"
           G_GUINT64_FORMAT " steps), dedup %" G_GINT64_FORMAT " ps (%u channels, %"
           G_GUINT64_FORMAT " steps)\n", what, algos[i], fs_coll_op_name(op), size,
           fs_coll_proto_name(ch.proto), ch.nchannels, a.time, a.sim_steps, b.time,
           b.sim_channels, b.sim_steps);
    fflush(stdout);
    ck_assert_int_eq(b.time, a.time);
    ck_assert_uint_eq(a.sim_channels, ch.nchannels);
    fewer += b.sim_channels < ch.nchannels;
  }
  return fewer;
}

START_TEST(test_dedup_exact_to_the_ps)
{
  Sys s;
  guint fewer = 0;
  sys_open(&s, "dgx-h100.yaml", NULL, "all");
  fewer += check_dedup(&s, "dgx-h100", FS_COLL_ALL_REDUCE, 4u << 20);
  fewer += check_dedup(&s, "dgx-h100", FS_COLL_ALL_GATHER, 1u << 20);
  sys_close(&s);
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=4", "all");
  fewer += check_dedup(&s, "4 ndr nodes", FS_COLL_ALL_REDUCE, 8u << 20);
  fewer += check_dedup(&s, "4 ndr nodes", FS_COLL_REDUCE_SCATTER, 8u << 20);
  sys_close(&s);
  /* One GPU per node on rail 0 and 2 GPUs per node: the rings' channels
   * use other rails, with the same figures. */
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=8",
           "node0/gpu0,node1/gpu0,node2/gpu0,node3/gpu0,node4/gpu0,node5/gpu0,node6/gpu0,"
           "node7/gpu0");
  fewer += check_dedup(&s, "8 nodes x 1", FS_COLL_ALL_REDUCE, 8u << 20);
  sys_close(&s);
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=4",
           "node0/gpu0,node0/gpu4,node1/gpu0,node1/gpu4,node2/gpu0,node2/gpu4,node3/gpu0,"
           "node3/gpu4");
  fewer += check_dedup(&s, "4 nodes x 2", FS_COLL_REDUCE_SCATTER, 8u << 20);
  sys_close(&s);
  ck_assert_uint_gt(fewer, 0);
}
END_TEST

/* A ring op over `per` GPUs of each of `nodes` nodes: exact and with the
 * default shortcuts (dedup, step extrapolation, periodic when needed);
 * equal to the picosecond, and step extrapolated. */
static void check_periodic(guint nodes, guint per, FsCollOp op, uint64_t size)
{
  g_autoptr(GString) g = g_string_new(NULL);
  for (guint h = 0; h < nodes; h++)
    for (guint k = 0; k < per; k++)
      g_string_append_printf(g, "%snode%u/gpu%u", g->len ? "," : "", h, k * (8 / per));
  g_autofree char *def = g_strdup_printf("nodes=%u", nodes);
  Sys s;
  sys_open(&s, "dgx-h100-ib-ndr.yaml", def, g->str);
  /* 32 channels (as NCCL_MIN_CTAS=32 gives), the layout these periods were measured on
   * (NCCL's default across hosts is 2 per NIC, coll-topo.c). */
  force_channels = 32;
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  ck_assert(choose(&s, op, size, "ring", &ch, &req, &nb));
  FsCollAloneOpts fast = {.route_fixed = fs_coll_topo_route_fixed,
                          .route_profile = fs_coll_topo_route_profile, .route_ctx = s.tnet};
  FsCollAloneOpts no_period = fast;
  no_period.period_off = TRUE;
  FsCollAloneStats a = time_it(&s, &ch, &req, nb, &exact_opts);
  FsCollAloneStats b = time_it(&s, &ch, &req, nb, &fast);
  FsCollAloneStats c = time_it(&s, &ch, &req, nb, &no_period);
  printf("%u nodes x %u: ring %s %" G_GUINT64_FORMAT " B %s/%u: exact %" G_GINT64_FORMAT
         " ps (%" G_GUINT64_FORMAT " steps); fast %" G_GINT64_FORMAT " ps (%u of %u ring steps, "
         "period %u, %u runs, %" G_GUINT64_FORMAT " steps); period 1 only: %u of %u ring steps\n",
         nodes, per, fs_coll_op_name(op), size, fs_coll_proto_name(ch.proto), ch.nchannels, a.time,
         a.sim_steps, b.time, b.sim_ring_steps, b.ring_steps, b.step_period, b.runs, b.sim_steps,
         c.sim_ring_steps, c.ring_steps);
  fflush(stdout);
  ck_assert_int_eq(b.time, a.time);
  ck_assert_int_eq(c.time, a.time);
  ck_assert_uint_lt(b.sim_ring_steps, b.ring_steps);
  /* Period 1 alone cannot extrapolate these rings: they run whole. */
  ck_assert_uint_eq(c.sim_ring_steps, c.ring_steps);
  ck_assert_uint_eq(b.step_period, per);
  force_channels = 0;
  sys_close(&s);
}

START_TEST(test_periodic_steps_exact)
{
  check_periodic(32, 2, FS_COLL_REDUCE_SCATTER, 64u << 20);
  check_periodic(16, 4, FS_COLL_ALL_GATHER, 32u << 20);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("coll-dedup");
  FS_ADD_TEST(s, test_dedup_exact_to_the_ps);
  FS_ADD_TEST(s, test_periodic_steps_exact);
  return fs_test_run_suite(s);
}
