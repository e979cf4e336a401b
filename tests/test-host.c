/* test-host.c — the host model of a training step: the op graph's host
 * chain on toy graphs with exact times (host-bound, GPU-bound, a
 * synchronization), the host costs in the efficiency files and the
 * workload's `framework.launch` (good and bad inputs), and a whole step in
 * each launch mode (accounting, determinism). */
#include <check.h>
#include <string.h>

#include "compute/efficiency.h"
#include "testutil.h"
#include "util/error.h"
#include "util/yaml.h"
#include "workload/executor.h"

/* Runs g on a fresh simulator; fails the test on an error. */
static void run_graph(FsOpGraph *g)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  FsOpEnv env = { .sim = sim };
  GError *err = NULL;
  ck_assert(fs_opgraph_run(g, &env, &err));
  fs_assert_no_error(err);
}

/* Three ops of five kernels each on one stream, the host issuing each
 * kernel in 20 ps: op i is issued from 100·i, its kernels at 100·i + 20,
 * 40, …, 100, and its end is bound by its last kernel's issue plus that
 * kernel's 2 ps (tail 102).  durs[i] is each op's GPU time. */
static FsOpGraph *three_ops(FsTime dur, guint32 *ids)
{
  FsOpGraph *g = fs_opgraph_new();
  guint s = fs_opgraph_add_stream(g, "compute", 0, -1, TRUE);
  guint h = fs_opgraph_add_host(g);
  FsOp o = { .kind = FS_OP_COMPUTE, .cat = FS_CAT_FORWARD, .name = "op", .dur = dur, .mb = -1,
             .layer = -1 };
  for (guint i = 0; i < 3; i++) {
    ids[i] = fs_opgraph_add(g, s, &o, NULL, 0);
    FsTime tail = 0;
    FsTime k = dur / 5;
    for (guint j = 0; j < 5; j++)
      tail = MAX(tail, (FsTime)(j + 1) * 20 + (FsTime)(5 - j) * k);
    fs_opgraph_set_host(g, ids[i], h, 100, 20, tail, FALSE);
  }
  return g;
}

START_TEST(test_host_bound_chain)
{
  guint32 id[3];
  g_autoptr(FsOpGraph) g = three_ops(10, id);
  run_graph(g);
  /* op0: start 20, end max(30, 0 + 102); op1: issued at 100, start
   * max(102, 120), end max(130, 202); op2: 220 and 302. */
  const FsTime start[3] = { 20, 120, 220 }, end[3] = { 102, 202, 302 };
  for (guint i = 0; i < 3; i++) {
    const FsOp *op = fs_opgraph_op(g, id[i]);
    ck_assert_int_eq(op->issue, 100 * (FsTime)i);
    ck_assert_int_eq(op->start, start[i]);
    ck_assert_int_eq(op->end, end[i]);
  }
  ck_assert_int_eq(fs_opgraph_end(g), 302);
  FsOpBreakdown bd;
  fs_opgraph_breakdown(g, 0, NULL, 0, 0, 302, &bd);
  ck_assert_int_eq(bd.busy[FS_CAT_FORWARD], 30);
  ck_assert_int_eq(bd.host, 272);
  ck_assert_int_eq(bd.bubble, 0);
}
END_TEST

START_TEST(test_host_gpu_bound_chain)
{
  guint32 id[3];
  g_autoptr(FsOpGraph) g = three_ops(1000, id);
  run_graph(g);
  /* The host is ahead after the first kernel: the ops run back to back
   * from 20, each tail (20 + 1000 at most) inside its GPU time. */
  for (guint i = 0; i < 3; i++) {
    const FsOp *op = fs_opgraph_op(g, id[i]);
    ck_assert_int_eq(op->start, 20 + 1000 * (FsTime)i);
    ck_assert_int_eq(op->end, 1020 + 1000 * (FsTime)i);
  }
  FsOpBreakdown bd;
  fs_opgraph_breakdown(g, 0, NULL, 0, 0, fs_opgraph_end(g), &bd);
  ck_assert_int_eq(bd.busy[FS_CAT_FORWARD], 3000);
  ck_assert_int_eq(bd.host, 20);
  /* Running again gives the same times. */
  run_graph(g);
  ck_assert_int_eq(fs_opgraph_op(g, id[2])->end, 3020);
}
END_TEST

/* A sync op waits for every op its host issued before it (here a long
 * communication on another stream) and for its own dependencies. */
START_TEST(test_host_sync_waits_for_device)
{
  g_autoptr(FsOpGraph) g = fs_opgraph_new();
  guint sc = fs_opgraph_add_stream(g, "compute", 0, -1, TRUE);
  guint sd = fs_opgraph_add_stream(g, "dp", 0, -1, FALSE);
  guint h = fs_opgraph_add_host(g);
  FsOp a = { .kind = FS_OP_COMPUTE, .cat = FS_CAT_BACKWARD, .name = "a", .dur = 1000, .mb = -1,
             .layer = -1 };
  guint32 ia = fs_opgraph_add(g, sc, &a, NULL, 0);
  fs_opgraph_set_host(g, ia, h, 10, 10, 0, FALSE);
  FsOp c = { .kind = FS_OP_DELAY, .cat = FS_CAT_DP, .name = "c", .dur = 5000, .mb = -1,
             .layer = -1 };
  guint32 ic = fs_opgraph_add(g, sd, &c, &ia, 1);
  fs_opgraph_set_host(g, ic, h, 10, 10, 0, FALSE);
  FsOp b = { .kind = FS_OP_COMPUTE, .cat = FS_CAT_OPTIMIZER, .name = "b", .dur = 7, .mb = -1,
             .layer = -1 };
  guint32 ib = fs_opgraph_add(g, sc, &b, NULL, 0);
  fs_opgraph_set_host(g, ib, h, 10, 10, 0, TRUE);
  run_graph(g);
  /* a: 10 to 1010; c: issued at 10, waits for a, 1010 to 6010; b: issued
   * when c ends (6010), its kernel at 6020, ends 6027. */
  ck_assert_int_eq(fs_opgraph_op(g, ia)->end, 1010);
  ck_assert_int_eq(fs_opgraph_op(g, ic)->start, 1010);
  ck_assert_int_eq(fs_opgraph_op(g, ib)->issue, 6010);
  ck_assert_int_eq(fs_opgraph_op(g, ib)->start, 6020);
  ck_assert_int_eq(fs_opgraph_end(g), 6027);
  /* Without the sync b would run right after a. */
  g_autoptr(FsOpGraph) g2 = fs_opgraph_new();
  sc = fs_opgraph_add_stream(g2, "compute", 0, -1, TRUE);
  sd = fs_opgraph_add_stream(g2, "dp", 0, -1, FALSE);
  h = fs_opgraph_add_host(g2);
  ia = fs_opgraph_add(g2, sc, &a, NULL, 0);
  fs_opgraph_set_host(g2, ia, h, 10, 10, 0, FALSE);
  ic = fs_opgraph_add(g2, sd, &c, &ia, 1);
  fs_opgraph_set_host(g2, ic, h, 10, 10, 0, FALSE);
  ib = fs_opgraph_add(g2, sc, &b, NULL, 0);
  fs_opgraph_set_host(g2, ib, h, 10, 10, 0, FALSE);
  run_graph(g2);
  ck_assert_int_eq(fs_opgraph_op(g2, ib)->start, 1010);
  ck_assert_int_eq(fs_opgraph_end(g2), 6010);
}
END_TEST

static const char host_ok[] =
  "curves:\n"
  "  - kind: memory\n    arch: any\n    points: [[1, 1]]\n    source: s\n"
  "host:\n"
  "  - arch: any\n    eager_op: 20 us\n    graph_launch: 4 us\n    gpu_gap: 0.5 us\n"
  "    source: measured\n"
  "  - arch: hopper\n    eager_op: 25 us\n    graph_launch: 3 us\n    gpu_gap: 0.4 us\n"
  "    source: measured\n";

START_TEST(test_host_costs_load)
{
  g_autoptr(FsEfficiency) eff = fs_test_eff_load_text(host_ok);
  const FsEffHost *h = fs_efficiency_host(eff, FS_ARCH_HOPPER);
  ck_assert_ptr_nonnull(h);
  ck_assert_int_eq(h->eager_op, 25 * FS_US);
  ck_assert_int_eq(h->graph_launch, 3 * FS_US);
  ck_assert_int_eq(h->gpu_gap, 400 * FS_NS);
  ck_assert_int_eq(h->line, 12);
  h = fs_efficiency_host(eff, FS_ARCH_AMPERE);
  ck_assert(h != NULL && h->any_arch && h->eager_op == 20 * FS_US);
  /* The project's catalog has one. */
  ck_assert_ptr_nonnull(fs_efficiency_host(fs_test_eff, FS_ARCH_HOPPER));
}
END_TEST

START_TEST(test_host_costs_refused)
{
  static const struct {
    const char *host, *fragment;
  } bad[] = {
    { "  - arch: any\n    eager_op: -1 us\n    graph_launch: 4 us\n    gpu_gap: 0 us\n"
      "    source: s\n", "t.yaml:8:15:" },
    { "  - arch: nova\n    eager_op: 1 us\n    graph_launch: 4 us\n    gpu_gap: 0 us\n"
      "    source: s\n", "t.yaml:7:11:" },
    { "  - arch: any\n    eager_op: 1 us\n    graph_launch: 4 us\n    gpu_gap: 0 us\n",
      "t.yaml:7:5:" },
    { "  - arch: any\n    eager_op: 1 us\n    graph_launch: 4 us\n    gpu_gap: 0 us\n"
      "    source: s\n  - arch: any\n    eager_op: 1 us\n    graph_launch: 4 us\n"
      "    gpu_gap: 0 us\n    source: s\n", "t.yaml:12:11: host costs for \"any\" are given twice" },
    { "  - arch: any\n    eager_op: 1 us\n    graph_launch: 4 us\n    gpu_gap: 0 us\n"
      "    source: s\n    extra: 1\n", "t.yaml:12:5:" },
    { "  - arch: any\n    eager_op: 2 s\n    graph_launch: 4 us\n    gpu_gap: 0 us\n"
      "    source: s\n", "t.yaml:8:15:" },
    { "  - arch: any\n    eager_op: 1 us\n    graph_launch: 4 us\n    gpu_gap: 0 us\n"
      "    source: \"\"\n", "t.yaml:11:13:" },
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autofree char *text = g_strdup_printf("curves:\n  - kind: memory\n    arch: any\n"
                                            "    points: [[1, 1]]\n    source: s\nhost:\n%s",
                                            bad[i].host);
    g_autoptr(FsEfficiency) eff = fs_efficiency_new();
    GError *err = NULL;
    ck_assert_msg(!fs_efficiency_load_string(eff, text, -1, "t.yaml", FALSE, &err), "case %u", i);
    ck_assert_msg(strstr(err->message, bad[i].fragment) != NULL && strchr(err->message, '\n') == NULL,
                  "case %u: \"%s\" lacks \"%s\"", i, err->message, bad[i].fragment);
    /* Nothing was loaded. */
    ck_assert_uint_eq(fs_efficiency_size(eff), 0);
    ck_assert_ptr_null(fs_efficiency_host(eff, FS_ARCH_HOPPER));
    g_clear_error(&err);
  }
}
END_TEST

START_TEST(test_host_launch_mode_refused)
{
  GError *err = NULL;
  FsWorkload *w = fs_workload_load_string(
    "model:\n  layers: 2\n  hidden: 64\n  ffn_hidden: 256\n  heads: 4\n  vocab: 100\n  seq_length: 16\n"
    "training:\n  global_batch: 8\n  micro_batch: 1\n"
    "framework:\n  launch: lazy\n", "w.yaml", NULL, NULL, &err);
  ck_assert_ptr_null(w);
  fs_assert_error(err, FS_YAML_ERROR, "w.yaml:12:11:");
  const char *ov[] = { "--framework-launch=sometimes", NULL };
  w = fs_workload_load_string(
    "model:\n  layers: 2\n  hidden: 64\n  ffn_hidden: 256\n  heads: 4\n  vocab: 100\n  seq_length: 16\n"
    "training:\n  global_batch: 8\n  micro_batch: 1\n", "w.yaml", NULL, ov, &err);
  ck_assert_ptr_null(w);
  ck_assert_ptr_nonnull(err);
  ck_assert_msg(strstr(err->message, "--framework-launch") != NULL, "%s", err->message);
  g_clear_error(&err);
  /* Megatron's flag selects graphs. */
  const char *ov2[] = { "--enable-cuda-graph", NULL };
  w = fs_workload_load_string(
    "model:\n  layers: 2\n  hidden: 64\n  ffn_hidden: 256\n  heads: 4\n  vocab: 100\n  seq_length: 16\n"
    "training:\n  global_batch: 8\n  micro_batch: 1\n", "w.yaml", NULL, ov2, &err);
  fs_assert_no_error(err);
  ck_assert_int_eq(w->launch, FS_LAUNCH_GRAPHS);
  fs_workload_free(w);
}
END_TEST

/* A whole step in each mode: every picosecond of a stage is accounted for
 * once (host included); off has no host time; a small layout waits for the
 * host in eager mode and less with graphs; two runs are identical. */
START_TEST(test_host_step_modes)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  const char *modes[] = { "off", "eager", "graphs" };
  FsTime host[3], step[3];
  for (guint m = 0; m < 3; m++) {
    g_autofree char *o = g_strdup_printf("--framework-launch=%s", modes[m]);
    const char *ov[] = { o, "--micro-batch-size=1", NULL };
    g_autoptr(FsWorkload) w = fs_test_small_gpt("  tp: 8\n  pp: 1\n", ov);
    g_autoptr(FsTrain) t = fs_test_train(topo, w, NULL);
    g_autoptr(FsTrain) t2 = fs_test_train(topo, w, NULL);
    fs_test_assert_same_result(t, t2);
    const FsTrainResult *r = fs_train_result(t);
    ck_assert_str_eq(fs_launch_mode_name(r->launch), modes[m]);
    const FsTrainClass *c = &g_array_index(r->classes, FsTrainClass, 0);
    FsTime sum = c->time.bubble + c->time.host;
    for (guint k = 0; k < FS_CAT_N; k++)
      sum += c->time.busy[k] + c->time.exposed[k];
    ck_assert_int_eq(sum, r->step_time);
    host[m] = c->time.host;
    step[m] = r->step_time;
  }
  ck_assert_int_eq(host[0], 0);
  ck_assert_int_gt(host[1], host[2]);
  ck_assert_int_gt(step[1], step[2]);
  ck_assert_int_gt(step[1], step[0]);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("host");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, fs_test_models_setup, fs_test_models_teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_host_bound_chain);
  tcase_add_test(tc, test_host_gpu_bound_chain);
  tcase_add_test(tc, test_host_sync_waits_for_device);
  tcase_add_test(tc, test_host_costs_load);
  tcase_add_test(tc, test_host_costs_refused);
  tcase_add_test(tc, test_host_launch_mode_refused);
  tcase_add_test(tc, test_host_step_modes);
  suite_add_tcase(s, tc);
  return fs_test_run_suite(s);
}
