/* test-rotation.c — NCCL's tree made for one channel of each rotation
 * (collrun/rotation.h) against the plan of every channel:
 *   the communicator's rings rotate by 2 local ranks on DGX H100 hosts
 *     (coll/comm.h fs_comm_ring_rotation), not on one host;
 *   a request's rotation makes 1/m of the channels, and a bad one is
 *     refused with an error;
 *   channel aliases (net/flow.h): an aliased channel's flows share its
 *     alias's capacity;
 *   the rotated runs time as the whole plan to the picosecond (one
 *     scalable unit, every orbit merged; 40 nodes over two, the spine
 *     links watched), for every protocol, with NVSwitch planes bundled or
 *     not; refused where it does not apply; a run whose watches fail
 *     runs the whole plan. */
#include <stdio.h>
#include <string.h>

#include "collrun/alone.h"
#include "collrun/coll-topo.h"
#include "collrun/rotation.h"
#include "core/sim.h"
#include "testutil.h"

typedef FsTestColl Sys;

static void sys_open(Sys *s, const char *name, const char *define)
{
  fs_test_coll_open(s, name, define, "all", FS_NET_MAXMIN);
}

/* The tuner's choice for all_reduce of size bytes with algo and proto
 * forced (channels 0: the tuner's). */
static void choose(Sys *s, uint64_t size, const char *algo, int proto, guint nch, FsCollChoice *ch,
                   FsCollRequest *req, uint64_t *nbytes)
{
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  prefs.algo = fs_coll_algo_find(algo);
  ck_assert_ptr_nonnull(prefs.algo);
  prefs.proto = proto;
  prefs.channels = nch;
  ck_assert(fs_test_coll_choose(s, FS_COLL_ALL_REDUCE, size, &prefs, ch, req, nbytes));
}

/* Times req alone with the routes' callbacks of a `coll` run (with
 * flow_paths: rotated where it applies) or without flow_paths (every
 * channel), each with a memo of its own. */
static FsCollAloneStats time_it(Sys *s, const FsCollChoice *ch, const FsCollRequest *req,
                                uint64_t nb, gboolean rotate)
{
  g_autoptr(FsCollAloneMemo) memo = fs_coll_alone_memo_new();
  FsCollAloneOpts o = {.memo = memo};
  fs_coll_topo_alone_routes(&o, s->tnet, TRUE);
  if (!rotate)
    o.flow_paths = NULL;
  GError *err = NULL;
  FsCollAloneStats st;
  ck_assert(fs_coll_time_alone(s->np, &s->sys, s->comm, nb, ch, req, 0, s->net, fs_coll_topo_xfer,
                               s->tnet, &o, &st, &err));
  fs_assert_no_error(err);
  return st;
}

START_TEST(test_comm_rings_rotate)
{
  Sys s;
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=2");
  guint m;
  /* Ring i + 2 is ring i with every GPU moved 2 local ranks on. */
  ck_assert_uint_eq(fs_comm_ring_rotation(s.comm, 2, &m), 2);
  ck_assert_uint_eq(m, 4);
  ck_assert_uint_eq(fs_comm_rotate_rank(s.comm, 0, 2), 2);
  ck_assert_uint_eq(fs_comm_rotate_rank(s.comm, 15, 2), 9);
  const guint *r0 = fs_comm_ring(s.comm, 0), *r2 = fs_comm_ring(s.comm, 2);
  for (guint i = 0; i < fs_comm_size(s.comm); i++)
    ck_assert_uint_eq(r2[i], fs_comm_rotate_rank(s.comm, r0[i], 2));
  /* Shifts of 3: 6 (back by 2), not 3; of 5: none (odd shifts break the
   * GPUs' pairs on their PCIe switches). */
  ck_assert_uint_eq(fs_comm_ring_rotation(s.comm, 3, &m), 6);
  ck_assert_uint_eq(m, 4);
  ck_assert_uint_eq(fs_comm_ring_rotation(s.comm, 5, &m), 0);
  ck_assert_uint_eq(m, 0);
  fs_test_coll_close(&s);
  /* One host: no tree across hosts to rotate. */
  sys_open(&s, "dgx-h100.yaml", NULL);
  ck_assert_uint_eq(fs_comm_ring_rotation(s.comm, 2, &m), 0);
  fs_test_coll_close(&s);
}
END_TEST

START_TEST(test_plan_rotated_channels)
{
  Sys s;
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=2");
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  choose(&s, 1u << 20, "tree", FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
  guint m, sh = fs_coll_rotation_shift(s.comm, ch.algo, &req, &m);
  ck_assert_uint_eq(sh, 2);
  ck_assert_uint_eq(m, 4);
  GError *err = NULL;
  g_autoptr(FsCollPlan) whole = fs_coll_plan_new(s.comm, ch.algo, &req, &err);
  fs_assert_no_error(err);
  FsCollRequest r = req;
  r.rotation = sh;
  r.rotation_order = m;
  g_autoptr(FsCollPlan) turned = fs_coll_plan_new(s.comm, ch.algo, &r, &err);
  fs_assert_no_error(err);
  ck_assert_uint_eq(fs_coll_plan_n_steps(turned) * m, fs_coll_plan_n_steps(whole));
  for (guint i = 0; i < fs_coll_plan_n_steps(turned); i++)
    ck_assert_uint_lt(fs_coll_plan_step(turned, i)->channel % (sh * m), sh);
  /* The guard counts every channel. */
  guint64 n1, n2;
  ck_assert(fs_coll_plan_count_steps(s.comm, ch.algo, &r, &n1, &err));
  ck_assert(fs_coll_plan_count_steps(s.comm, ch.algo, &req, &n2, &err));
  ck_assert_uint_eq(n1, n2);
  /* Folded while built, the channels it does not make being empty in the
   * whole plan too: the plan fs_coll_plan_fold makes of that, for less. */
  g_autoptr(FsCollPlan) folded = fs_coll_plan_fold(turned, fs_coll_topo_route_fixed, s.tnet);
  ck_assert(folded != NULL);
  g_autoptr(FsCollPlan) built = fs_coll_plan_new_folded(s.comm, ch.algo, &r,
                                                        fs_coll_topo_route_fixed, s.tnet, &err);
  fs_assert_no_error(err);
  ck_assert(fs_coll_plan_folded_while_built(built));
  ck_assert_uint_eq(fs_coll_plan_width(built), 2);
  fs_test_check_same_plan(built, folded, "tree rotated, folded while built");
  fs_test_check_plan_conns(built, "tree rotated, folded while built");
  /* A rotation that does not divide the channels, or unequal shares: an
   * error, no plan. */
  FsCollRequest bad = r;
  bad.nchannels = 12;
  ck_assert(fs_coll_plan_new(s.comm, ch.algo, &bad, &err) == NULL);
  ck_assert(g_error_matches(err, FS_COLL_ERROR, FS_COLL_ERROR_INVALID));
  ck_assert(strstr(err->message, "rotation") != NULL);
  g_clear_error(&err);
  bad = r;
  bad.bytes += 4;
  ck_assert(fs_coll_plan_new(s.comm, ch.algo, &bad, &err) == NULL);
  g_clear_error(&err);
  bad = r;
  bad.rotation_order = 1;
  ck_assert(fs_coll_plan_new(s.comm, ch.algo, &bad, &err) == NULL);
  g_clear_error(&err);
  /* Nor does the rotation apply to such requests. */
  bad = req;
  bad.bytes += 4;
  ck_assert_uint_eq(fs_coll_rotation_shift(s.comm, ch.algo, &bad, &m), 0);
  fs_test_coll_close(&s);
}
END_TEST

START_TEST(test_flow_alias)
{
  /* Channels 0 and 1 of 1 GB/s; 1 aliased to 0: two flows, one on each,
   * share 0 and take twice as long as alone. */
  FsSim *sim = fs_sim_new();
  FsFlowNet *net = fs_flownet_new(sim, FS_NET_MAXMIN);
  FsChannelId c0 = fs_flownet_add_channel(net, 1e9, 0);
  FsChannelId c1 = fs_flownet_add_channel(net, 1e9, 1000);
  const FsChannelId alias[2] = {c0, c0};
  fs_flownet_set_alias(net, alias, 2);
  FsFlowId a = fs_flownet_start(net, &(FsFlowSpec){.path = &c0, .path_len = 1, .bytes = 1000000});
  FsFlowId b = fs_flownet_start(net, &(FsFlowSpec){.path = &c1, .path_len = 1, .bytes = 1000000});
  FsFlowInfo ia, ib;
  ck_assert(fs_flownet_get_flow(net, a, &ia) && fs_flownet_get_flow(net, b, &ib));
  ck_assert_double_eq_tol(ia.rate, 0.5e9, 1);
  ck_assert_double_eq_tol(ib.rate, 0.5e9, 1);
  /* The latency is the path's as given. */
  ck_assert_int_eq(ib.latency, 1000);
  fs_flownet_set_alias(net, NULL, 0);
  FsFlowId c = fs_flownet_start(net, &(FsFlowSpec){.path = &c1, .path_len = 1, .bytes = 1000000});
  FsFlowInfo ic;
  ck_assert(fs_flownet_get_flow(net, c, &ic));
  ck_assert_double_eq_tol(ic.rate, 1e9, 1);
  GError *err = NULL;
  ck_assert(fs_sim_run(sim, &err));
  fs_assert_no_error(err);
  fs_flownet_free(net);
  fs_sim_free(sim);
}
END_TEST

/* op of size with algo and proto on s, rotated and whole; returns the
 * rotated run's stats after checking the two times equal and the rotated
 * run a quarter of the steps.  The check of a build with
 * FABRICSIM_CHECK_MIRRORS (the default of the test build) is off here, so
 * that the steps counted are the rotated run's own. */
static FsCollAloneStats check_op_rotated(Sys *s, FsCollOp op, const char *algo, uint64_t size,
                                         int proto)
{
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  prefs.algo = fs_coll_algo_find(algo);
  prefs.proto = proto;
  ck_assert(fs_test_coll_choose(s, op, size, &prefs, &ch, &req, &nb));
  FsCollAloneStats a = time_it(s, &ch, &req, nb, FALSE);
  FsCollAloneStats b = time_it(s, &ch, &req, nb, TRUE);
  printf("%s %s %s %" G_GUINT64_FORMAT " B on %u ranks: rotated %.6f us, %" G_GUINT64_FORMAT
         " steps; whole %.6f us, %" G_GUINT64_FORMAT " steps\n",
         algo, fs_coll_op_name(op), fs_coll_proto_name(ch.proto), size, fs_comm_size(s->comm), fs_time_to_us(b.time),
         b.sim_steps, fs_time_to_us(a.time), a.sim_steps);
  ck_assert_int_eq(b.time, a.time);
  ck_assert_uint_eq(a.rotated_runs, 0);
  ck_assert_uint_ge(b.rotated_runs, 1);
  ck_assert_uint_eq(b.sim_steps * 4, a.sim_steps);
  return b;
}

static FsCollAloneStats check_rotated(Sys *s, uint64_t size, int proto)
{
  return check_op_rotated(s, FS_COLL_ALL_REDUCE, "tree", size, proto);
}

START_TEST(test_rotation_exact)
{
  g_setenv("FABRICSIM_CHECK_MIRRORS", "0", TRUE);
  /* One scalable unit (2, 3 and 4 nodes): every link's orbit merged. */
  const char *defines[] = {"nodes=2", "nodes=3", "nodes=4"};
  const int protos[] = {FS_PROTO_LL, FS_PROTO_LL128, FS_PROTO_SIMPLE};
  for (guint i = 0; i < G_N_ELEMENTS(defines); i++) {
    Sys s;
    sys_open(&s, "dgx-h100-ib-ndr.yaml", defines[i]);
    for (guint p = 0; p < G_N_ELEMENTS(protos); p++)
      check_rotated(&s, (p + 1) << 20, protos[p]);
    fs_test_coll_close(&s);
  }
  g_unsetenv("FABRICSIM_CHECK_MIRRORS");
}
END_TEST

START_TEST(test_rotation_rings)
{
  g_setenv("FABRICSIM_CHECK_MIRRORS", "0", TRUE);
  /* The ring's phases rotate with their rings (its chains from a root do
   * not): all_reduce, all_gather and reduce_scatter as steps (short of
   * the stream model's sizes, and cut to a few ring steps per loop), at
   * sizes the tuner gives a multiple of 8 channels (all_reduce of 384 KiB
   * takes 12) with equal shares (all_gather of 384 KiB over 16 or 24
   * ranks; 256 KiB over 24 does not split equally: no rotation). */
  const char *defines[] = {"nodes=2", "nodes=3"};
  const FsCollOp ops[] = {FS_COLL_ALL_REDUCE, FS_COLL_ALL_GATHER, FS_COLL_REDUCE_SCATTER};
  for (guint i = 0; i < G_N_ELEMENTS(defines); i++) {
    Sys s;
    sys_open(&s, "dgx-h100-ib-ndr.yaml", defines[i]);
    for (guint o = 0; o < G_N_ELEMENTS(ops); o++)
      check_op_rotated(&s, ops[o], "ring", o == 0 ? 512u << 10 : 384u << 10,
                       o == 0 ? FS_PROTO_SIMPLE : FS_PROTO_LL128);
    FsCollChoice ch;
    FsCollRequest req;
    uint64_t nb;
    guint m;
    FsCollPrefs prefs;
    fs_coll_prefs_init(&prefs);
    prefs.algo = fs_coll_algo_find("ring");
    ck_assert(fs_test_coll_choose(&s, FS_COLL_BROADCAST, 1u << 20, &prefs, &ch, &req, &nb));
    ck_assert_uint_eq(fs_coll_rotation_shift(s.comm, ch.algo, &req, &m), 0);
    fs_test_coll_close(&s);
  }
  g_unsetenv("FABRICSIM_CHECK_MIRRORS");
}
END_TEST

START_TEST(test_rotation_watched)
{
  g_setenv("FABRICSIM_CHECK_MIRRORS", "0", TRUE);
  /* 40 nodes over two scalable units: the spine links, hashed by
   * destination, do not rotate with the rails; watched, they stay within
   * their capacity and the rotated runs time as the whole ones. */
  Sys s;
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=40");
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  choose(&s, 4u << 20, "tree", FS_PROTO_LL128, 0, &ch, &req, &nb);
  g_autoptr(FsCollRotation) rot = fs_coll_rotation_new(s.comm, ch.algo, &req, s.net,
                                                       fs_coll_topo_route_fixed,
                                                       fs_coll_topo_flow_paths, s.tnet);
  ck_assert(rot != NULL);
  printf("rotation on 40 nodes: %u channels merged, %u watches\n", fs_coll_rotation_n_merged(rot),
         fs_coll_rotation_n_watched(rot));
  ck_assert_uint_gt(fs_coll_rotation_n_merged(rot), 0);
  ck_assert_uint_gt(fs_coll_rotation_n_watched(rot), 0);
  check_rotated(&s, 4u << 20, FS_PROTO_LL128);
  /* A run that fills every channel does not hold: the whole plan would
   * run instead (alone.c). */
  fs_coll_rotation_begin(rot, s.net);
  fs_test_coll_fill_every_channel(&s);
  ck_assert(!fs_coll_rotation_end(rot, s.net));
  fs_test_coll_close(&s);
  g_unsetenv("FABRICSIM_CHECK_MIRRORS");
}
END_TEST

START_TEST(test_rotation_checked)
{
  /* With FABRICSIM_CHECK_MIRRORS (a build without FS_RELEASE, or =1) a
   * rotated run is followed by the whole plan and stops unless the times
   * agree: here they do, and the run counts both. */
  g_setenv("FABRICSIM_CHECK_MIRRORS", "1", TRUE);
  Sys s;
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=3");
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  choose(&s, 2u << 20, "tree", FS_PROTO_LL128, 0, &ch, &req, &nb);
  FsCollAloneStats a = time_it(&s, &ch, &req, nb, FALSE);
  FsCollAloneStats b = time_it(&s, &ch, &req, nb, TRUE);
  ck_assert_int_eq(b.time, a.time);
  ck_assert_uint_eq(b.rotated_runs, 1);
  ck_assert_uint_eq(b.sim_steps * 4, a.sim_steps * 5);
  fs_test_coll_close(&s);
  g_unsetenv("FABRICSIM_CHECK_MIRRORS");
}
END_TEST

START_TEST(test_rotation_refused)
{
  Sys s;
  sys_open(&s, "dgx-h100-ib-ndr.yaml", "nodes=2");
  FsCollChoice ch;
  FsCollRequest req;
  uint64_t nb;
  guint m;
  /* An algorithm without rotations; channels not a multiple of the
   * rotation's 8. */
  choose(&s, 1u << 20, "nvls_tree", FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
  ck_assert_uint_eq(fs_coll_rotation_shift(s.comm, ch.algo, &req, &m), 0);
  choose(&s, 1u << 20, "tree", FS_PROTO_SIMPLE, 4, &ch, &req, &nb);
  ck_assert_uint_eq(fs_coll_rotation_shift(s.comm, ch.algo, &req, &m), 0);
  choose(&s, 1u << 20, "tree", FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
  /* No fixed routes to check against. */
  ck_assert(fs_coll_rotation_new(s.comm, ch.algo, &req, s.net, NULL, fs_coll_topo_flow_paths,
                                 s.tnet) == NULL);
  fs_test_coll_close(&s);
  /* One host. */
  sys_open(&s, "dgx-h100.yaml", NULL);
  choose(&s, 1u << 20, "tree", FS_PROTO_SIMPLE, 0, &ch, &req, &nb);
  ck_assert_uint_eq(fs_coll_rotation_shift(s.comm, ch.algo, &req, &m), 0);
  fs_test_coll_close(&s);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("rotation");
  FS_ADD_TEST(s, test_comm_rings_rotate);
  FS_ADD_TEST(s, test_plan_rotated_channels);
  FS_ADD_TEST(s, test_flow_alias);
  FS_ADD_TEST(s, test_rotation_exact);
  FS_ADD_TEST(s, test_rotation_rings);
  FS_ADD_TEST(s, test_rotation_watched);
  FS_ADD_TEST(s, test_rotation_checked);
  FS_ADD_TEST(s, test_rotation_refused);
  return fs_test_run_suite(s);
}
