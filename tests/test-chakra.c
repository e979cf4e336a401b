/* test-chakra.c — Chakra execution traces (src/workload/chakra): the example
 * traces of tests/data/chakra (tools/gen-chakra-examples) and the public
 * ASTRA-sim text workloads of tests/data/chakra/text replayed, each makespan
 * checked against a calculation made here without the Chakra reader; the write → read round
 * trip of a training step; bad inputs. */
#include <check.h>
#include <glib/gstdio.h>
#include <string.h>

#include "collrun/coll-topo.h"
#include "core/sim.h"
#include "net/flow.h"
#include "net/route.h"
#include "testutil.h"
#include "util/error.h"
#include "workload/chakra/chakra.h"
#include "workload/executor.h"

/* Loads tests/data/chakra/DIR onto topo and runs it; returns the makespan. */
static FsTime replay_dir(const FsTopo *topo, const char *dir, gboolean skip, FsChakraStats *st)
{
  g_autofree char *rel = g_build_filename("chakra", dir, NULL);
  g_autofree char *path = fs_test_data_path(rel);
  const char *paths[] = { path };
  FsChakraOptions opt = { skip };
  GError *error = NULL;
  g_autoptr(FsReplay) r = fs_chakra_load(paths, 1, topo, fs_test_eff, &opt, st, &error);
  fs_assert_no_error(error);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_ANALYTIC);
  g_autoptr(FsRouter) router = fs_router_new(topo, net, NULL);
  g_autoptr(FsCollTopoNet) tnet = fs_coll_topo_net_new(router);
  FsOpEnv env = { sim, net, router, tnet, fs_test_nccl, NULL, FS_COLL_EXEC_STEPS };
  ck_assert(fs_opgraph_run(r->graph, &env, &error));
  fs_assert_no_error(error);
  return fs_opgraph_end(r->graph);
}

/* The collective alone on the first n GPUs, through the collective layer
 * (no Chakra involved). */
static FsTime coll_alone(const FsTopo *topo, FsCollOp op, uint64_t unit, guint n)
{
  guint ngpu;
  const guint *gpus = fs_topo_gpus(topo, &ngpu);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_ANALYTIC);
  g_autoptr(FsRouter) router = fs_router_new(topo, net, NULL);
  g_autoptr(FsCollTopoNet) tnet = fs_coll_topo_net_new(router);
  FsOpEnv env = { sim, net, router, tnet, fs_test_nccl, NULL, FS_COLL_EXEC_STEPS };
  FsTime t = 0;
  GError *error = NULL;
  ck_assert(fs_opgraph_measure_coll(&env, gpus, n, op, unit, &t, &error));
  fs_assert_no_error(error);
  return t;
}

/* Microbenchmarks in the shape of ASTRA-sim's: one collective of comm_size 1 MiB per rank
 * over 8 NPUs.  comm_size is each rank's input: the buffer of an
 * all-reduce, the block of an all-gather, the whole (8 blocks) of a
 * reduce-scatter or an all-to-all. */
START_TEST(test_chakra_microbenchmarks_match_the_collective_alone)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  static const struct { const char *dir; FsCollOp op; uint64_t unit; } cases[] = {
    { "all_reduce_8r_1MiB", FS_COLL_ALL_REDUCE, 1u << 20 },
    { "all_gather_8r_1MiB", FS_COLL_ALL_GATHER, 1u << 20 },
    { "reduce_scatter_8r_1MiB", FS_COLL_REDUCE_SCATTER, (1u << 20) / 8 },
    { "all_to_all_8r_1MiB", FS_COLL_ALLTOALL, (1u << 20) / 8 },
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    FsChakraStats st;
    FsTime got = replay_dir(topo, cases[i].dir, FALSE, &st);
    FsTime want = coll_alone(topo, cases[i].op, cases[i].unit, 8);
    ck_assert_uint_eq(st.ranks, 8);
    ck_assert_uint_eq(st.collectives, 8);
    ck_assert_msg(want > 0 && got == want, "%s: %" G_GINT64_FORMAT " ps, alone %" G_GINT64_FORMAT,
                  cases[i].dir, got, want);
  }
}
END_TEST

/* The time of one transfer of bytes from GPU a to GPU b, alone, as an op
 * graph built here. */
static FsTime one_send(const FsTopo *topo, guint a, guint b, uint64_t bytes)
{
  guint ngpu;
  const guint *gpus = fs_topo_gpus(topo, &ngpu);
  g_autoptr(FsOpGraph) g = fs_opgraph_new();
  guint s = fs_opgraph_add_stream(g, "send", 0, (int)gpus[a], FALSE);
  FsOp x = { .kind = FS_OP_XFER, .cat = FS_CAT_COMM, .name = "x", .bytes = bytes,
             .src = (int32_t)gpus[a], .dst = (int32_t)gpus[b], .mb = -1, .layer = -1 };
  fs_opgraph_add(g, s, &x, NULL, 0);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_ANALYTIC);
  g_autoptr(FsRouter) router = fs_router_new(topo, net, NULL);
  g_autoptr(FsCollTopoNet) tnet = fs_coll_topo_net_new(router);
  FsOpEnv env = { sim, net, router, tnet, fs_test_nccl, NULL, FS_COLL_EXEC_STEPS };
  GError *error = NULL;
  ck_assert(fs_opgraph_run(g, &env, &error));
  return fs_opgraph_end(g);
}

/* A ring all-reduce written as point-to-point (the shape of ASTRA-sim's
 * custom-collective example):
 * per rank 14 sends of 128 KiB to the next rank, each receive followed by
 * the next send, and 7 reduction kernels of 7 µs after the first 7
 * receives.  Every rank moves in lockstep, so the makespan is 14 transfers
 * one after another plus 7 kernels. */
START_TEST(test_chakra_custom_ring_is_its_critical_path)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  FsChakraStats st;
  FsTime got = replay_dir(topo, "ring_allreduce_8r_1MiB", FALSE, &st);
  ck_assert_uint_eq(st.p2p, 8 * 28);
  ck_assert_uint_eq(st.measured, 8 * 7);
  FsTime t = one_send(topo, 0, 1, 131072);
  ck_assert(t > 0);
  FsTime want = 14 * t + 7 * 7 * (FsTime)1000000;
  ck_assert_msg(got == want, "ring: %" G_GINT64_FORMAT " ps, expected %" G_GINT64_FORMAT, got, want);
}
END_TEST

/* ---- Public ASTRA-sim text workloads (tests/data/chakra/text/) -------- */

/* Picoseconds of n microseconds. */
#define US(n) ((FsTime)(n) * 1000000)

/* Chakra's own microbenchmarks (mlcommons/chakra, Text input files): one
 * collective per rank, no compute.  On the 8 GPUs of a DGX H100 each
 * replays in exactly the time of the same collective alone, comm_size being
 * each rank's input as Chakra's converter writes it (the block of an
 * all-gather, all 8 blocks of a reduce-scatter or an all-to-all). */
START_TEST(test_chakra_text_microbenchmarks)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  static const struct { const char *file; FsCollOp op; uint64_t unit; } cases[] = {
    { "text/AllReduce_64KB.txt", FS_COLL_ALL_REDUCE, 65536 },
    { "text/AllGather_1MB.txt", FS_COLL_ALL_GATHER, 1048576 },
    { "text/ReduceScatter_1MB.txt", FS_COLL_REDUCE_SCATTER, 1048576 / 8 },
    { "text/AllToAll_512KB.txt", FS_COLL_ALLTOALL, 524288 / 8 },
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    FsChakraStats st;
    FsTime got = replay_dir(topo, cases[i].file, FALSE, &st);
    FsTime want = coll_alone(topo, cases[i].op, cases[i].unit, 8);
    ck_assert_uint_eq(st.ranks, 8);
    ck_assert_uint_eq(st.nodes, 8);
    ck_assert_uint_eq(st.collectives, 8);
    ck_assert_msg(want > 0 && got == want, "%s: %" G_GINT64_FORMAT " ps, alone %" G_GINT64_FORMAT,
                  cases[i].file, got, want);
  }
}
END_TEST

/* ASTRA-sim's ResNet-50, data parallel (DATA): 54 layers, per rank the
 * forward chain, then from the last layer the weight-gradient kernel, its
 * all-reduce and the input-gradient kernel (none for conv1).  The kernels
 * are one chain: 380,038 µs forward + 337,813 µs weight gradients +
 * 364,599 µs input gradients (377,463 less conv1's 12,864) = 1,082,450 µs
 * (tests/data/chakra/README.md).  Each all-reduce (at most 9,437,184 bytes)
 * ends long before the next weight gradient (at least 4,308 µs later), so
 * only the last one, conv1's 37,632 bytes after the last kernel, adds to
 * the makespan. */
START_TEST(test_chakra_text_resnet50_data_parallel)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  FsChakraStats st;
  FsTime got = replay_dir(topo, "text/Resnet50_DataParallel.txt", FALSE, &st);
  ck_assert_uint_eq(st.ranks, 8);
  ck_assert_uint_eq(st.nodes, 8 * (54 + 54 + 54 + 53));
  ck_assert_uint_eq(st.collectives, 8 * 54);
  ck_assert_uint_eq(st.measured, 8 * (54 + 54 + 53));
  FsTime ar = coll_alone(topo, FS_COLL_ALL_REDUCE, 37632, 8);
  ck_assert(ar > 0 && ar < US(4308));
  FsTime want = US(380038 + 337813 + 364599) + ar;
  ck_assert_msg(got == want, "resnet50: %" G_GINT64_FORMAT " ps, expected %" G_GINT64_FORMAT,
                got, want);
}
END_TEST

/* ASTRA-sim's MLP, model parallel (MODEL) and hybrid data-model parallel
 * (HYBRID_DATA_MODEL), 6 layers.  Forward: kernel, then its all-gather,
 * one after another.  Backward from the last layer: the input-gradient
 * kernel, then its all-reduce (not for the first layer) beside the
 * weight-gradient kernel; the next layer waits for both, and every
 * weight-gradient kernel (at least 3,456 µs) outlasts the all-reduce beside
 * it.  The hybrid adds a weight-gradient all-reduce after each
 * weight-gradient kernel, which the next input-gradient kernel does not
 * wait for: only the first layer's (37,632 bytes) is on the path.  So:
 * every kernel (MODEL 78,883 + 78,883 + 37,440 = 195,206 µs; hybrid
 * 3 × 78,883 = 236,649 µs) + the six forward all-gathers (blocks of
 * 37,632, 65,536 × 4 and 147,456 bytes) [+ one all-reduce of 37,632]. */
START_TEST(test_chakra_text_mlp_model_and_hybrid)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  FsTime ag = coll_alone(topo, FS_COLL_ALL_GATHER, 37632, 8) +
              4 * coll_alone(topo, FS_COLL_ALL_GATHER, 65536, 8) +
              coll_alone(topo, FS_COLL_ALL_GATHER, 147456, 8);
  ck_assert(coll_alone(topo, FS_COLL_ALL_REDUCE, 147456, 8) < US(3456));
  FsChakraStats st;
  FsTime got = replay_dir(topo, "text/MLP_ModelParallel.txt", FALSE, &st);
  ck_assert_uint_eq(st.nodes, 8 * (6 + 6 + 6 + 5 + 6));
  ck_assert_uint_eq(st.collectives, 8 * 11);
  FsTime want = US(195206) + ag;
  ck_assert_msg(got == want, "MLP model: %" G_GINT64_FORMAT " ps, expected %" G_GINT64_FORMAT,
                got, want);
  got = replay_dir(topo, "text/MLP_HybridParallel_Data_Model.txt", FALSE, &st);
  ck_assert_uint_eq(st.nodes, 8 * (6 + 6 + 6 + 5 + 6 + 6));
  ck_assert_uint_eq(st.collectives, 8 * 17);
  want = US(236649) + ag + coll_alone(topo, FS_COLL_ALL_REDUCE, 37632, 8);
  ck_assert_msg(got == want, "MLP hybrid: %" G_GINT64_FORMAT " ps, expected %" G_GINT64_FORMAT,
                got, want);
}
END_TEST

/* A text workload runs on every GPU of the topology: 4 on a 4-GPU box. */
START_TEST(test_chakra_text_takes_every_gpu)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("v100-nvlink-4gpu.yaml", NULL);
  FsChakraStats st;
  FsTime got = replay_dir(topo, "text/AllReduce_64KB.txt", FALSE, &st);
  ck_assert_uint_eq(st.ranks, 4);
  ck_assert(got == coll_alone(topo, FS_COLL_ALL_REDUCE, 65536, 4));
}
END_TEST

/* train → Chakra → replay gives the same step time to the picosecond, and
 * the files are the same bytes when written again.  The step writes one
 * file per GPU, the data-parallel replicas it mirrors as copies of the
 * simulated ones. */
static void round_trip(const char *parallel)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  /* No host model: a Chakra trace holds the GPU ops, not the host's issue
   * costs (workloads/README.md, "Host (framework) overhead"). */
  const char *off[] = { "--framework-launch=off", NULL };
  g_autoptr(FsWorkload) w = fs_test_small_gpt(parallel, off);
  /* Step by step, as the replay runs collectives (train --chakra-out too). */
  FsTrainOptions opt;
  fs_train_options_init(&opt);
  opt.exec = FS_COLL_EXEC_STEPS;
  g_autoptr(FsTrain) t = fs_test_train(topo, w, &opt);
  FsTime step = fs_train_result(t)->step_time;
  g_autofree char *dir = g_dir_make_tmp("chakra-XXXXXX", NULL);
  g_autofree char *again = g_build_filename(dir, "again", NULL);
  GError *error = NULL;
  ck_assert(fs_chakra_write(fs_train_graph(t), topo, dir, "step", &error));
  ck_assert(fs_chakra_write(fs_train_graph(t), topo, again, "step", &error));
  fs_assert_no_error(error);
  for (guint r = 0; r < 8; r++) {
    g_autofree char *base = g_strdup_printf("step.%u.et", r);
    g_autofree char *a = g_build_filename(dir, base, NULL);
    g_autofree char *b = g_build_filename(again, base, NULL);
    g_autofree char *ta = NULL, *tb = NULL;
    gsize la, lb;
    ck_assert(g_file_get_contents(a, &ta, &la, NULL) && g_file_get_contents(b, &tb, &lb, NULL));
    ck_assert(la == lb && memcmp(ta, tb, la) == 0);
    g_unlink(b);
  }
  g_rmdir(again);
  const char *paths[] = { dir };
  FsChakraStats st;
  g_autoptr(FsReplay) rp = fs_chakra_load(paths, 1, topo, fs_test_eff, NULL, &st, &error);
  fs_assert_no_error(error);
  ck_assert_uint_eq(st.ranks, 8);
  ck_assert_uint_eq(st.modelled, 0);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) router = fs_router_new(topo, net, NULL);
  g_autoptr(FsCollTopoNet) tnet = fs_coll_topo_net_new(router);
  FsOpEnv env = { sim, net, router, tnet, fs_test_nccl, NULL, FS_COLL_EXEC_STEPS };
  ck_assert(fs_opgraph_run(rp->graph, &env, &error));
  ck_assert_msg(fs_opgraph_end(rp->graph) == step, "%s: replayed %" G_GINT64_FORMAT " ps, step %"
                G_GINT64_FORMAT, parallel, fs_opgraph_end(rp->graph), step);
  for (guint r = 0; r < 8; r++) {
    g_autofree char *base = g_strdup_printf("step.%u.et", r);
    g_autofree char *a = g_build_filename(dir, base, NULL);
    g_unlink(a);
  }
  g_rmdir(dir);
}

START_TEST(test_chakra_round_trip_of_a_training_step)
{
  round_trip("  tp: 1\n  pp: 8\n");            /* pipeline transfers, no replica */
  round_trip("  tp: 1\n  pp: 2\n");            /* dp 4: three replicas written as copies */
  round_trip("  tp: 1\n  pp: 1\n  zero_stage: 1\n"); /* dp 8, ZeRO-1 gathers and reduce-scatters */
}
END_TEST

/* A step with collectives timed alone (tensor parallelism) is refused. */
START_TEST(test_chakra_write_refuses_collectives_timed_alone)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  g_autoptr(FsWorkload) w = fs_test_small_gpt("  tp: 8\n", NULL);
  g_autoptr(FsTrain) t = fs_test_train(topo, w, NULL);
  GError *error = NULL;
  ck_assert(!fs_chakra_write(fs_train_graph(t), topo, "/nonexistent/never", "step", &error));
  fs_assert_error(error, FS_WORKLOAD_ERROR, "communication timed alone");
}
END_TEST

/* Every n_ file of tests/data/chakra is refused with a located one-line
 * error naming the file; every y_ file loads. */
START_TEST(test_chakra_corpus)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  g_autofree char *dir = fs_test_data_path("chakra");
  GDir *d = g_dir_open(dir, 0, NULL);
  ck_assert(d != NULL);
  const char *e;
  guint yes = 0, no = 0;
  while ((e = g_dir_read_name(d)) != NULL) {
    if (!(g_str_has_prefix(e, "y_") || g_str_has_prefix(e, "n_") || g_str_has_prefix(e, "i_")) ||
        g_str_has_suffix(e, ".err"))
      continue;
    g_autofree char *path = g_build_filename(dir, e, NULL);
    const char *paths[] = { path };
    GError *error = NULL;
    FsReplay *r = fs_chakra_load(paths, 1, topo, fs_test_eff, NULL, NULL, &error);
    if (e[0] == 'i') { /* either outcome; a rejection is one line naming the file */
      ck_assert_msg(r != NULL || (strchr(error->message, '\n') == NULL &&
                                  g_str_has_prefix(error->message, path)), "%s", e);
      fs_replay_free(r);
      g_clear_error(&error);
      continue;
    }
    if (e[0] == 'y') {
      ck_assert_msg(r != NULL, "%s: %s", e, error ? error->message : "");
      fs_replay_free(r);
      yes++;
      continue;
    }
    ck_assert_msg(r == NULL, "%s was accepted", e);
    ck_assert(error != NULL && strchr(error->message, '\n') == NULL);
    ck_assert_msg(g_str_has_prefix(error->message, path), "%s", error->message);
    g_autofree char *errp = g_strconcat(path, ".err", NULL);
    g_autofree char *want = NULL;
    ck_assert_msg(g_file_get_contents(errp, &want, NULL, NULL), "%s has no .err", e);
    g_strstrip(want);
    ck_assert_msg(strstr(error->message, want) != NULL, "%s: \"%s\" lacks \"%s\"", e,
                  error->message, want);
    g_error_free(error);
    no++;
  }
  g_dir_close(d);
  ck_assert(yes >= 2 && no >= 6);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("chakra");
  TCase *tc = tcase_create("chakra");
  tcase_add_checked_fixture(tc, fs_test_models_setup, fs_test_models_teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_chakra_microbenchmarks_match_the_collective_alone);
  tcase_add_test(tc, test_chakra_custom_ring_is_its_critical_path);
  tcase_add_test(tc, test_chakra_text_microbenchmarks);
  tcase_add_test(tc, test_chakra_text_resnet50_data_parallel);
  tcase_add_test(tc, test_chakra_text_mlp_model_and_hybrid);
  tcase_add_test(tc, test_chakra_text_takes_every_gpu);
  tcase_add_test(tc, test_chakra_round_trip_of_a_training_step);
  tcase_add_test(tc, test_chakra_write_refuses_collectives_timed_alone);
  tcase_add_test(tc, test_chakra_corpus);
  suite_add_tcase(s, tc);
  return fs_test_run_suite(s);
}
