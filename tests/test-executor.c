/* test-executor.c — training steps on real topologies: the executor runs,
 * overlap hides data-parallel communication, results are deterministic,
 * the op graph reports deadlocks with ranks and ops. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "catalog/catalog.h"
#include "coll/nccl-params.h"
#include "coll/tuner.h"
#include "compute/efficiency.h"
#include "compute/transformer.h"
#include "testutil.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/names.h"
#include "workload/executor.h"

START_TEST(test_executor_runs_a_step)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  g_autoptr(FsWorkload) w = fs_test_small_gpt("  tp: 2\n  pp: 2\n  sequence_parallel: true\n", NULL);
  g_autoptr(FsTrain) t = fs_test_train(topo, w, NULL);
  const FsTrainResult *r = fs_train_result(t);
  ck_assert_int_gt(r->step_time, 0);
  ck_assert_uint_eq(r->gpus, 8);
  ck_assert_uint_eq(r->microbatches, 64 / (2 * 2));
  ck_assert(r->mfu > 0 && r->mfu < 1);
  ck_assert_uint_eq(r->classes->len, 2);
  for (guint i = 0; i < 2; i++) {
    const FsTrainClass *c = &g_array_index(r->classes, FsTrainClass, i);
    ck_assert_int_gt(c->time.busy[FS_CAT_FORWARD], 0);
    ck_assert_int_gt(c->time.busy[FS_CAT_BACKWARD], c->time.busy[FS_CAT_FORWARD]);
    ck_assert_int_gt(c->time.exposed[FS_CAT_TP], 0);
    /* Every picosecond of the step is accounted for once. */
    FsTime sum = c->time.bubble + c->time.host;
    for (guint k = 0; k < FS_CAT_N; k++)
      sum += c->time.busy[k] + c->time.exposed[k];
    ck_assert_int_eq(sum, r->step_time);
  }
  /* The model FLOPs of the simulated ranks: two stages of one TP rank hold
   * 1/(tp) of the work of one replica. */
  double mf = 0;
  for (guint i = 0; i < 2; i++)
    mf += g_array_index(r->classes, FsTrainClass, i).model_flops;
  double per_replica = r->model_flops_causal / w->dp;
  ck_assert_double_eq_tol(mf * w->tp / per_replica, 1.0, 0.02);
}
END_TEST

START_TEST(test_executor_overlap_hides_dp)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("pcie-gen4-8gpu.yaml", NULL);
  g_autoptr(FsWorkload) a = fs_test_small_gpt("  tp: 1\n  zero_stage: 0\n  bucket_size: 8 MB\n"
                                      "  overlap:\n    dp_grads: true\n", NULL);
  g_autoptr(FsWorkload) b = fs_test_small_gpt("  tp: 1\n  zero_stage: 0\n  bucket_size: 8 MB\n"
                                      "  overlap:\n    dp_grads: false\n", NULL);
  g_autoptr(FsTrain) ta = fs_test_train(topo, a, NULL);
  g_autoptr(FsTrain) tb = fs_test_train(topo, b, NULL);
  const FsTrainClass *ca = &g_array_index(fs_train_result(ta)->classes, FsTrainClass, 0);
  const FsTrainClass *cb = &g_array_index(fs_train_result(tb)->classes, FsTrainClass, 0);
  ck_assert_int_gt(cb->time.exposed[FS_CAT_DP], 0);
  ck_assert_int_lt(ca->time.exposed[FS_CAT_DP], cb->time.exposed[FS_CAT_DP]);
  ck_assert_int_lt(fs_train_result(ta)->step_time, fs_train_result(tb)->step_time);
}
END_TEST

START_TEST(test_executor_overlap_cost_modes)
{
  /* Overlapped TP and CP communication: free (beside the compute at no
   * cost), modelled (the compute loses SMs and the TP GEMMs run in chunks,
   * the ring attention exposes what a step does not hide) and exposed (on
   * the compute stream).  Both costed modes are slower than free. */
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  const char *par = "  tp: 2\n  cp: 2\n  sequence_parallel: true\n"
                    "  overlap:\n    tp_comm: true\n    cost: %s\n";
  FsTime step[FS_OVERLAP_COST_N];
  for (guint m = 0; m < FS_OVERLAP_COST_N; m++) {
    static const char *const names[] = {FS_OVERLAP_COSTS(FS_NAMES_ENTRY)};
    g_autofree char *p = g_strdup_printf(par, names[m]);
    /* No host model: this small model is host-bound in eager mode, which
     * hides what overlap costs the GPU (test-host.c). */
    const char *off[] = { "--framework-launch=off", NULL };
    g_autoptr(FsWorkload) w = fs_test_small_gpt(p, off);
    ck_assert_int_eq(w->overlap_cost, (int)m);
    g_autoptr(FsTrain) t = fs_test_train(topo, w, NULL);
    step[m] = fs_train_result(t)->step_time;
  }
  ck_assert_int_gt(step[FS_OVERLAP_COST_MODELLED], step[FS_OVERLAP_COST_FREE]);
  ck_assert_int_gt(step[FS_OVERLAP_COST_EXPOSED], step[FS_OVERLAP_COST_FREE]);
  /* What overlap costs lies between the two teaching extremes. */
  ck_assert_int_lt(step[FS_OVERLAP_COST_MODELLED], step[FS_OVERLAP_COST_EXPOSED]);
}
END_TEST

/* The step of the toy GPT on topo with parallel text par and the overrides
 * extra (NULL-terminated, up to 6), no host model; the first rank class in
 * *c when c is not NULL. */
static FsTime toy_step(const FsTopo *topo, const char *par, const char *const *extra,
                       FsTrainClass *c)
{
  const char *ov[8] = { "--framework-launch=off" };
  for (guint i = 0; extra != NULL && extra[i] != NULL && i < 6; i++)
    ov[i + 1] = extra[i];
  g_autoptr(FsWorkload) w = fs_test_small_gpt(par, ov);
  g_autoptr(FsTrain) t = fs_test_train(topo, w, NULL);
  if (c != NULL)
    *c = g_array_index(fs_train_result(t)->classes, FsTrainClass, 0);
  return fs_train_result(t)->step_time;
}

START_TEST(test_executor_cp_exposed_column)
{
  /* Ring attention with modelled overlap: the exchange a step's kernel does
   * not hide is the compute stream waiting for CP, so the `cp` column shows
   * it (it showed 0, the time counted as forward and backward); exposed
   * shows the whole exchange, free only what outlasts the whole pass.  A
   * GPT without kv_heads exchanges its K and V too (it exchanged nothing). */
  g_autoptr(FsTopo) topo = fs_test_load_topo("pcie-gen4-8gpu.yaml", NULL);
  const char *par = "  tp: 1\n  cp: 4\n";
  const char *modes[] = { "--overlap-cost=modelled", "--overlap-cost=exposed",
                          "--overlap-cost=free" };
  FsTrainClass c[3];
  FsTime step[3];
  for (guint m = 0; m < 3; m++) {
    const char *ov[] = { modes[m], NULL };
    step[m] = toy_step(topo, par, ov, &c[m]);
  }
  ck_assert_int_gt(c[0].time.exposed[FS_CAT_CP], 0);
  ck_assert_int_lt(c[0].time.exposed[FS_CAT_CP], c[1].time.exposed[FS_CAT_CP]);
  ck_assert_int_lt(c[2].time.exposed[FS_CAT_CP], c[0].time.exposed[FS_CAT_CP]);
  ck_assert(step[2] < step[0] && step[0] < step[1]);
}
END_TEST


START_TEST(test_executor_dp_overlap_hbm)
{
  /* Gradient buckets reduced over NVLink beside the backward take HBM
   * bandwidth from its memory-bound kernels: with NCCL's HBM traffic
   * (models/compute comm_hbm) the step is slower than with none. */
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  const char *par = "  tp: 1\n  zero_stage: 0\n  bucket_size: 8 MB\n";
  FsTime with = toy_step(topo, par, NULL, NULL);
  GError *err = NULL;
  ck_assert(fs_efficiency_load_string(fs_test_eff,
                                      "curves: []\ncomm_hbm:\n  collective: 0\n"
                                      "  point_to_point: 0\n  source: none\n",
                                      -1, "none.yaml", TRUE, &err));
  fs_assert_no_error(err);
  FsTime without = toy_step(topo, par, NULL, NULL);
  ck_assert_int_gt(with, without);
}
END_TEST

START_TEST(test_executor_deterministic)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  g_autoptr(FsWorkload) w = fs_test_small_gpt("  tp: 2\n  pp: 2\n  zero_stage: 1\n", NULL);
  g_autoptr(FsTrain) t1 = fs_test_train(topo, w, NULL);
  g_autoptr(FsTrain) t2 = fs_test_train(topo, w, NULL);
  ck_assert_int_eq(fs_train_result(t1)->step_time, fs_train_result(t2)->step_time);
  const FsOpGraph *g1 = fs_train_graph(t1), *g2 = fs_train_graph(t2);
  ck_assert_uint_eq(fs_opgraph_n_ops(g1), fs_opgraph_n_ops(g2));
  for (guint i = 0; i < fs_opgraph_n_ops(g1); i++)
    ck_assert_int_eq(fs_opgraph_op(g1, i)->end, fs_opgraph_op(g2, i)->end);
}
END_TEST

START_TEST(test_executor_schedules_order)
{
  /* With the same layout, GPipe and 1F1B take the same time when stage
   * times are equal; interleaving takes less. */
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  /* The schedules alone: no host model (its synchronizations differ
   * between 1F1B and interleaved; test-host.c). */
  const char *off[] = { "--framework-launch=off", NULL };
  const char *gp[] = { "parallel.schedule=gpipe", "--framework-launch=off", NULL };
  const char *il[] = { "parallel.schedule=interleaved", "parallel.virtual_stages=2",
                       "--framework-launch=off", NULL };
  g_autoptr(FsWorkload) a = fs_test_small_gpt("  tp: 1\n  pp: 4\n  dp: 2\n", off);
  g_autoptr(FsWorkload) b = fs_test_small_gpt("  tp: 1\n  pp: 4\n  dp: 2\n", gp);
  g_autoptr(FsWorkload) c = fs_test_small_gpt("  tp: 1\n  pp: 4\n  dp: 2\n", il);
  g_autoptr(FsTrain) ta = fs_test_train(topo, a, NULL);
  g_autoptr(FsTrain) tb = fs_test_train(topo, b, NULL);
  g_autoptr(FsTrain) tc = fs_test_train(topo, c, NULL);
  FsTime bub_a = g_array_index(fs_train_result(ta)->classes, FsTrainClass, 1).time.bubble;
  FsTime bub_c = g_array_index(fs_train_result(tc)->classes, FsTrainClass, 1).time.bubble;
  ck_assert_int_lt(bub_c, bub_a);
  ck_assert_int_gt(fs_train_result(tb)->step_time, 0);
}
END_TEST

START_TEST(test_executor_gpu_count_mismatch)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  g_autoptr(FsWorkload) w = fs_test_small_gpt("  tp: 2\n", NULL);
  GError *err = NULL;
  ck_assert(fs_workload_resolve(w, 4, &err));
  g_autoptr(FsTrain) t =
    fs_train_new(topo, w, fs_test_eff, fs_test_nccl, fs_scenario_engines(), NULL, &err);
  ck_assert_ptr_null(t);
  fs_assert_error(err, FS_WORKLOAD_ERROR, "topology has 8");
}
END_TEST

/* Engines that count the worlds they make and free, over the scenario's. */
static gint worlds_made, worlds_freed;

static gpointer counting_world_new(const FsTopo *topo, FsNetModel model, FsOpEnv *env)
{
  worlds_made++;
  return fs_scenario_engines()->world_new(topo, model, env);
}

static void counting_world_free(gpointer world)
{
  worlds_freed++;
  fs_scenario_engines()->world_free(world);
}

START_TEST(test_executor_runs_on_given_engines)
{
  /* A step builds no engine of its own: its op graph runs on a world of
   * the engines it is given, and the collectives it times alone (TP here)
   * on a second one; it frees both through them.  The step time is the
   * scenario's engines' to the picosecond. */
  static const FsTrainEngines counting = { counting_world_new, counting_world_free };
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  g_autoptr(FsWorkload) w = fs_test_small_gpt("  tp: 2\n  pp: 2\n  dp: 2\n", NULL);
  GError *err = NULL;
  ck_assert(fs_workload_resolve(w, 8, &err));
  worlds_made = worlds_freed = 0;
  FsTrain *t = fs_train_new(topo, w, fs_test_eff, fs_test_nccl, &counting, NULL, &err);
  fs_assert_no_error(err);
  ck_assert(fs_train_run(t, &err));
  fs_assert_no_error(err);
  ck_assert_int_eq(worlds_made, 2);
  FsTime step = fs_train_result(t)->step_time;
  fs_train_free(t);
  ck_assert_int_eq(worlds_freed, 2);
  g_autoptr(FsTrain) ref = fs_test_train(topo, w, NULL);
  ck_assert_int_eq(step, fs_train_result(ref)->step_time);
}
END_TEST

/* The ops of a step whose name starts with prefix: count, bytes, and the
 * size of the communicator each collective runs on (all must agree). */
typedef struct {
  guint n;
  double bytes;
  guint comm_size;
} OpSum;

static OpSum ops_named(const FsTrain *t, const char *prefix)
{
  const FsOpGraph *g = fs_train_graph(t);
  OpSum s = { 0, 0, 0 };
  for (guint i = 0; i < fs_opgraph_n_ops(g); i++) {
    const FsOp *op = fs_opgraph_op(g, i);
    if (!g_str_has_prefix(op->name, prefix))
      continue;
    s.n++;
    s.bytes += (double)op->bytes;
    if (op->kind == FS_OP_COLL) {
      guint size = fs_opgraph_coll_comm_size(g, op->coll);
      ck_assert_msg(s.comm_size == 0 || s.comm_size == size, "%s: communicators of %u and %u GPUs",
                    prefix, s.comm_size, size);
      s.comm_size = size;
    }
  }
  return s;
}

/* The end of the last op named name on rank's streams. */
static FsTime op_end_on_rank(const FsTrain *t, const char *name, guint rank, FsTime *start)
{
  const FsOpGraph *g = fs_train_graph(t);
  FsTime end = -1;
  for (guint i = 0; i < fs_opgraph_n_ops(g); i++) {
    const FsOp *op = fs_opgraph_op(g, i);
    if (strcmp(op->name, name) == 0 && fs_opgraph_stream(g, op->stream)->rank == rank) {
      end = op->end;
      if (start != NULL)
        *start = op->start;
    }
  }
  return end;
}

START_TEST(test_executor_tied_embeddings)
{
  /* GPT-style tied embeddings over 4 stages: the first and the last stage
   * all-reduce the word embedding's gradient (vocab × hidden, bf16) before
   * their optimizer step; the middle stages take no part. */
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  const char *tied[] = { "model.tied_embeddings=true", NULL };
  g_autoptr(FsWorkload) w = fs_test_small_gpt("  tp: 1\n  pp: 4\n  dp: 2\n", tied);
  g_autoptr(FsTrain) t = fs_test_train(topo, w, NULL);
  OpSum e = ops_named(t, "embedding grad all-reduce");
  ck_assert_uint_eq(e.n, 2);
  ck_assert_uint_eq(e.comm_size, 2);
  ck_assert_double_eq_tol(e.bytes, 2.0 * 32000 * 1024 * 2, 1);
  const FsTrainResult *r = fs_train_result(t);
  for (guint s = 0; s < 4; s++) {
    const FsTrainClass *c = &g_array_index(r->classes, FsTrainClass, s);
    if (s == 0 || s == 3) {
      ck_assert_int_gt(c->time.exposed[FS_CAT_EMB], 0);
      FsTime ar_end = op_end_on_rank(t, "embedding grad all-reduce", c->rank, NULL), opt_start = 0;
      ck_assert_int_ge(op_end_on_rank(t, "optimizer step", c->rank, &opt_start), 0);
      ck_assert_int_ge(opt_start, ar_end);
    } else {
      ck_assert_int_eq(c->time.exposed[FS_CAT_EMB], 0);
    }
  }
  /* With tp 2 each TP index has its own pair, each of half the gradient. */
  g_autoptr(FsWorkload) w2 = fs_test_small_gpt("  tp: 2\n  pp: 2\n", tied);
  g_autoptr(FsTrain) t2 = fs_test_train(topo, w2, NULL);
  e = ops_named(t2, "embedding grad all-reduce");
  ck_assert_uint_eq(e.n, 4);
  ck_assert_uint_eq(e.comm_size, 2);
  ck_assert_double_eq_tol(e.bytes, 4.0 * 32000 * 1024 / 2 * 2, 1);
  /* Megatron's --untie-embeddings-and-output-weights, and one stage: none. */
  const char *untie[] = { "model.tied_embeddings=true", "--untie-embeddings-and-output-weights",
                          NULL };
  g_autoptr(FsWorkload) u = fs_test_small_gpt("  tp: 1\n  pp: 4\n  dp: 2\n", untie);
  ck_assert(!u->model.tied_embeddings);
  g_autoptr(FsTrain) tu = fs_test_train(topo, u, NULL);
  ck_assert_uint_eq(ops_named(tu, "embedding grad all-reduce").n, 0);
  ck_assert_int_eq(g_array_index(fs_train_result(tu)->classes, FsTrainClass, 0).time.exposed[FS_CAT_EMB], 0);
  g_autoptr(FsWorkload) one = fs_test_small_gpt("  tp: 1\n  pp: 1\n", tied);
  g_autoptr(FsTrain) t1 = fs_test_train(topo, one, NULL);
  ck_assert_uint_eq(ops_named(t1, "embedding grad all-reduce").n, 0);
}
END_TEST

/* A small MoE (8 layers, 4 experts, top-2) with the given parallel section
 * and command-line overrides ov (NULL: none). */
static FsWorkload *small_moe_with(const char *parallel, const char *const *ov)
{
  g_autofree char *text = g_strdup_printf(
    "name: toy-moe\ngpus: 8\n"
    "model:\n  layers: 8\n  hidden: 1024\n  ffn_hidden: 2048\n  heads: 16\n  vocab: 32000\n"
    "  seq_length: 1024\n  experts: 4\n  top_k: 2\n  mlp: swiglu\n"
    "training:\n  global_batch: 64\n  micro_batch: 2\n  dtype: bf16\n"
    "parallel:\n%s", parallel);
  GError *err = NULL;
  FsWorkload *w = fs_workload_load_string(text, "toy-moe.yaml", NULL, ov, &err);
  fs_assert_no_error(err);
  return w;
}

static FsWorkload *small_moe(const char *parallel)
{
  return small_moe_with(parallel, NULL);
}

/* The small MoE with the given parallel section and overlap cost, no host
 * model; the first rank class in *c. */
static FsTime moe_step(const FsTopo *topo, const char *parallel, const char *cost, FsTrainClass *c)
{
  const char *ov[] = { "--framework-launch=off", cost, NULL };
  g_autoptr(FsWorkload) w = small_moe_with(parallel, ov);
  g_autoptr(FsTrain) t = fs_test_train(topo, w, NULL);
  if (c != NULL)
    *c = g_array_index(fs_train_result(t)->classes, FsTrainClass, 0);
  return fs_train_result(t)->step_time;
}

START_TEST(test_executor_ep_overlap)
{
  /* Megatron's combined 1F1B (overlap.ep_comm): a forward paired with
   * another micro-batch's backward hides its all-to-alls behind that
   * compute, which loses the NCCL kernel's SMs and HBM; the first forward
   * and the last backward run alone.  The step lies between all-to-alls on
   * the compute stream (no overlap, or `exposed`) and `free`. */
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  const char *plain = "  tp: 1\n  ep: 4\n", *ov = "  tp: 1\n  ep: 4\n  overlap:\n    ep_comm: true\n";
  FsTrainClass c0, c1;
  FsTime off = moe_step(topo, plain, "--overlap-cost=modelled", &c0);
  FsTime mod = moe_step(topo, ov, "--overlap-cost=modelled", &c1);
  FsTime exposed = moe_step(topo, ov, "--overlap-cost=exposed", NULL);
  FsTime free_ = moe_step(topo, ov, "--overlap-cost=free", NULL);
  ck_assert_int_gt(c0.time.exposed[FS_CAT_EP], 0);
  ck_assert_int_lt(c1.time.exposed[FS_CAT_EP], c0.time.exposed[FS_CAT_EP]);
  ck_assert_int_lt(mod, off);
  ck_assert_int_eq(exposed, moe_step(topo, plain, "--overlap-cost=exposed", NULL));
  ck_assert_int_lt(free_, mod);
}
END_TEST

START_TEST(test_executor_expert_data_parallel)
{
  /* ep 2 of dp 8: expert gradients reduce over the 4 ranks that hold the
   * same experts (Megatron-Core's expert-data-parallel group), the rest over
   * all 8. */
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  g_autoptr(FsWorkload) w = small_moe("  tp: 1\n  ep: 2\n  zero_stage: 0\n");
  g_autoptr(FsTrain) t = fs_test_train(topo, w, NULL);
  FsTransformerParams pp;
  fs_transformer_params(&w->model, &pp);
  double experts = 8 * (pp.moe - 1024.0 * 4) / 2; /* per rank: 2 of the 4 experts */
  OpSum e = ops_named(t, "expert grad bucket"), d = ops_named(t, "grad bucket");
  ck_assert_uint_gt(e.n, 0);
  ck_assert_uint_eq(e.comm_size, 4);
  ck_assert_uint_eq(d.comm_size, 8);
  ck_assert_double_eq_tol(e.bytes / (experts * 2), 1.0, 1e-6); /* all-reduce: the whole buffer */
  /* ZeRO-1: a reduce-scatter leaves 1/4 of the expert gradients per rank,
   * and the expert parameters come back by an all-gather over the same 4. */
  g_autoptr(FsWorkload) z = small_moe("  tp: 1\n  ep: 2\n  zero_stage: 1\n");
  g_autoptr(FsTrain) tz = fs_test_train(topo, z, NULL);
  e = ops_named(tz, "expert grad bucket");
  ck_assert_uint_eq(e.comm_size, 4);
  ck_assert_double_eq_tol(e.bytes * 4 / (experts * 2), 1.0, 1e-6);
  /* ep = dp: every rank holds its own expert, nothing to reduce. */
  g_autoptr(FsWorkload) a = small_moe("  tp: 1\n  ep: 4\n  dp: 4\n  pp: 2\n  zero_stage: 1\n");
  g_autoptr(FsWorkload) b = small_moe("  tp: 1\n  ep: 4\n  dp: 4\n  pp: 2\n  zero_stage: 3\n");
  g_autoptr(FsTrain) ta = fs_test_train(topo, a, NULL);
  g_autoptr(FsTrain) tb = fs_test_train(topo, b, NULL);
  ck_assert_uint_eq(ops_named(ta, "expert").n, 0);
  ck_assert_uint_eq(ops_named(tb, "expert").n, 0);
  /* ZeRO-3 with ep 2: per layer an expert gather and reduce-scatter over 4. */
  g_autoptr(FsWorkload) f = small_moe("  tp: 1\n  ep: 2\n  zero_stage: 3\n");
  g_autoptr(FsTrain) tf = fs_test_train(topo, f, NULL);
  OpSum rs = ops_named(tf, "expert grad reduce-scatter");
  ck_assert_uint_eq(rs.n, 8);
  ck_assert_uint_eq(rs.comm_size, 4);
  ck_assert_double_eq_tol(rs.bytes * 4 / (experts * 2), 1.0, 1e-6);
  ck_assert_uint_eq(ops_named(tf, "expert param gather").comm_size, 4);
}
END_TEST

START_TEST(test_executor_mixtral_expert_groups)
{
  /* The Mixtral 8x7B preset on one DGX H100, tp 1, ep 4: dp 8, so each
   * expert's gradients reduce over the 2 ranks that hold it (Megatron-Core's
   * expert DP = dp·cp·tp / (etp·ep) = 8·1·1 / (1·4)) while attention, norms,
   * router and embeddings reduce over all 8; ZeRO-1 shards them the same
   * way, so the optimizer step covers 1/2 of the rank's experts. */
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  g_autofree char *path = fs_test_source_path("workloads/mixtral-8x7b.yaml");
  const char *ov[] = { "gpus=8", "--tp=1", "--ep=4", "--global-batch-size=8", NULL };
  GError *err = NULL;
  g_autoptr(FsWorkload) w = fs_workload_load_file(path, ov, &err);
  fs_assert_no_error(err);
  g_autoptr(FsTrain) t = fs_test_train(topo, w, NULL);
  ck_assert_uint_eq(w->dp, 8);
  ck_assert_uint_eq(w->zero_stage, 1);
  FsTransformerParams pp;
  fs_transformer_params(&w->model, &pp);
  double experts = 32 * (pp.moe - 4096.0 * 8) / 4;
  ck_assert_double_eq_tol(experts, 32.0 * 2 * 3 * 4096 * 14336, 1);
  OpSum e = ops_named(t, "expert grad bucket"), d = ops_named(t, "grad bucket");
  ck_assert_uint_eq(e.comm_size, 2);
  ck_assert_uint_eq(d.comm_size, 8);
  ck_assert_double_eq_tol(e.bytes * 2 / (experts * 2), 1.0, 1e-6);
  double dense = (pp.total - 32 * (pp.moe - 4096.0 * 8)) + 32 * 4096.0 * 8 * (1.0 / 4 - 1);
  ck_assert_double_eq_tol(d.bytes * 8 / (dense * 2), 1.0, 1e-3);
}
END_TEST

START_TEST(test_executor_param_gather_per_bucket)
{
  /* ZeRO-1 with overlapped parameter all-gathers: the forward starts when
   * the first bucket's parameters are in (the embedding's), not when every
   * bucket's are; each layer's first forward waits for its own bucket. */
  g_autoptr(FsTopo) topo = fs_test_load_topo("pcie-gen4-8gpu.yaml", NULL);
  g_autoptr(FsWorkload) w = fs_test_small_gpt("  tp: 1\n  zero_stage: 1\n  bucket_size: 8 MB\n", NULL);
  g_autoptr(FsTrain) t = fs_test_train(topo, w, NULL);
  const FsOpGraph *g = fs_train_graph(t);
  FsTime first_fwd = -1, last_ag = -1, first_ag = -1;
  guint n_ag = 0;
  for (guint i = 0; i < fs_opgraph_n_ops(g); i++) {
    const FsOp *op = fs_opgraph_op(g, i);
    if (fs_opgraph_stream(g, op->stream)->rank != 0)
      continue;
    if (strcmp(op->name, "param all-gather") == 0) {
      n_ag++;
      if (first_ag < 0)
        first_ag = op->end;
      last_ag = MAX(last_ag, op->end);
    }
    if (strcmp(op->name, "embedding forward") == 0 && op->mb == 0)
      first_fwd = op->start;
    /* A layer's first forward starts after some gather, never before the first. */
    if (op->kind == FS_OP_COMPUTE && op->cat == FS_CAT_FORWARD && op->mb == 0)
      ck_assert_int_ge(op->start, first_ag);
  }
  ck_assert_uint_gt(n_ag, 2);
  ck_assert_int_ge(first_fwd, first_ag);
  ck_assert_int_lt(first_fwd, last_ag);
}
END_TEST

START_TEST(test_opgraph_cycle_is_deadlock)
{
  g_autoptr(FsOpGraph) g = fs_opgraph_new();
  guint s0 = fs_opgraph_add_stream(g, "compute", 0, -1, TRUE);
  guint s1 = fs_opgraph_add_stream(g, "compute", 1, -1, TRUE);
  FsOp o = { .kind = FS_OP_COMPUTE, .cat = FS_CAT_FORWARD, .name = "a", .dur = 10, .mb = -1, .layer = -1 };
  guint32 a = fs_opgraph_add(g, s0, &o, NULL, 0);
  o.name = "b";
  guint32 b = fs_opgraph_add(g, s1, &o, &a, 1);
  fs_opgraph_add_dep(g, a, b);
  g_autoptr(FsSim) sim = fs_sim_new();
  FsOpEnv env = { .sim = sim };
  GError *err = NULL;
  ck_assert(!fs_opgraph_run(g, &env, &err));
  ck_assert_int_eq(err->code, FS_RUNTIME_ERROR_DEADLOCK);
  /* One line: the first op of the cycle and what it waits for. */
  ck_assert_ptr_nonnull(strstr(err->message, "first stuck: rank 0 compute op 0 \"a\" waits for "
                                             "rank 1 compute op 1 \"b\""));
  ck_assert_ptr_null(strchr(err->message, '\n'));
  fs_assert_error(err, FS_RUNTIME_ERROR, "2 of 2 ops never ran");
}
END_TEST

START_TEST(test_opgraph_collective_not_joined)
{
  g_autoptr(FsOpGraph) g = fs_opgraph_new();
  guint gpus[2] = { 0, 1 };
  guint comm = fs_opgraph_add_comm(g, "world", gpus, 2);
  guint coll = fs_opgraph_add_coll(g, comm, FS_COLL_ALL_REDUCE, 1024);
  fs_opgraph_set_coll_expected(g, coll, 2);
  guint s0 = fs_opgraph_add_stream(g, "compute", 0, 0, TRUE);
  FsOp o = { .kind = FS_OP_COLL, .cat = FS_CAT_COMM, .name = "ar", .coll = coll, .mb = -1, .layer = -1 };
  fs_opgraph_add(g, s0, &o, NULL, 0);
  g_autoptr(FsSim) sim = fs_sim_new();
  FsOpEnv env = { .sim = sim };
  GError *err = NULL;
  ck_assert(!fs_opgraph_run(g, &env, &err));
  fs_assert_error(err, FS_RUNTIME_ERROR, "all_reduce on communicator world: 1 of 2 members joined");
}
END_TEST

/* The analytic model times data-parallel collectives alone (DELAY ops,
 * each distinct one once): the same step, stage by stage, as running them
 * as flows on the shared network, on one node and across nodes (ZeRO-1
 * reduce-scatters and all-gathers, ZeRO-0 all-reduces, ZeRO-3 gathers). */
/* The default mode's data-parallel collectives on the shared network run
 * as streams (exec AUTO, FsTrainOptions.dp_streams): the step agrees with
 * running them step by step (exec STEPS) on 4 NDR nodes, 16-rank DP rings of
 * ZeRO-1 buckets overlapped with the backward and of all_reduces after it;
 * the stream runs are deterministic. */
START_TEST(test_executor_dp_streams_match_steps)
{
  const char *defs[] = { "nodes=4", NULL };
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100-ib-ndr.yaml", defs);
  const char *layouts[] = {
    "  tp: 2\n  zero_stage: 1\n  bucket_size: 8 MB\n",
    "  tp: 2\n  zero_stage: 0\n  overlap:\n    dp_grads: false\n",
  };
  for (guint li = 0; li < G_N_ELEMENTS(layouts); li++) {
    /* The collectives alone: no host model shifting their launches. */
    const char *off[] = { "--framework-launch=off", NULL };
    g_autoptr(FsWorkload) wa = fs_test_small_gpt(layouts[li], off);
    g_autoptr(FsWorkload) wb = fs_test_small_gpt(layouts[li], off);
    g_autoptr(FsWorkload) wc = fs_test_small_gpt(layouts[li], off);
    FsTrainOptions oa, ob;
    fs_train_options_init(&oa);
    ck_assert(oa.dp_streams);
    ck_assert_int_eq(oa.exec, FS_COLL_EXEC_AUTO);
    ob = oa;
    ob.exec = FS_COLL_EXEC_STEPS;
    g_autoptr(FsTrain) ta = fs_test_train(topo, wa, &oa);
    g_autoptr(FsTrain) tb = fs_test_train(topo, wb, &ob);
    g_autoptr(FsTrain) tc = fs_test_train(topo, wc, &oa);
    fs_test_assert_same_result(ta, tc);
    FsTime a = fs_train_result(ta)->step_time, b = fs_train_result(tb)->step_time;
    const FsTrainClass *ca = &g_array_index(fs_train_result(ta)->classes, FsTrainClass, 0);
    const FsTrainClass *cb = &g_array_index(fs_train_result(tb)->classes, FsTrainClass, 0);
    ck_assert_int_gt(cb->time.exposed[FS_CAT_DP], 0);
    ck_assert_msg(fabs((double)a / (double)b - 1) < 0.01, "layout %u: streams %.6f s, steps %.6f s",
                  li, fs_time_to_s(a), fs_time_to_s(b));
    /* The exposed part is a small residual of overlapped 8 MB buckets:
     * 16-rank rings (4 GPUs of each host) whose NIC hops leave through
     * other GPUs' NICs over NVLinks that the rings' own hops also cross
     * (PXN).  The stream model used to run every transfer at its stream's
     * own rate there (0.587 vs 0.634 ms, -7 %); with its schedule repaired
     * to the links' capacity (collrun/streams.h) 0.653 vs 0.634 ms (+3 %,
     * the half-host gap of tests/test-coll-streams.c); the step within
     * 0.3 %. */
    ck_assert_msg(fabs((double)ca->time.exposed[FS_CAT_DP] / (double)cb->time.exposed[FS_CAT_DP] - 1) < 0.05,
                  "layout %u: exposed DP %.6f vs %.6f s", li,
                  fs_time_to_s(ca->time.exposed[FS_CAT_DP]), fs_time_to_s(cb->time.exposed[FS_CAT_DP]));
  }
}
END_TEST

START_TEST(test_executor_analytic_dp_alone_is_exact)
{
  const char *defs[] = { "nodes=2", NULL };
  g_autoptr(FsTopo) one = fs_test_load_topo("dgx-h100.yaml", NULL);
  g_autoptr(FsTopo) two = fs_test_load_topo("dgx-h100-ib-ndr.yaml", defs);
  const char *layouts[] = {
    "  tp: 2\n  pp: 2\n  zero_stage: 1\n  bucket_size: 4 MB\n",
    "  tp: 1\n  zero_stage: 0\n  overlap:\n    dp_grads: false\n",
    "  tp: 2\n  zero_stage: 3\n",
  };
  const FsTopo *topos[] = { one, two };
  for (guint ti = 0; ti < 2; ti++)
    for (guint li = 0; li < G_N_ELEMENTS(layouts); li++) {
      g_autoptr(FsWorkload) wa = fs_test_small_gpt(layouts[li], NULL);
      g_autoptr(FsWorkload) wb = fs_test_small_gpt(layouts[li], NULL);
      FsTrainOptions oa, ob;
      fs_train_options_init(&oa);
      oa.net_model = FS_NET_ANALYTIC;
      ob = oa;
      ob.dp_flows = TRUE;
      g_autoptr(FsTrain) ta = fs_test_train(topos[ti], wa, &oa);
      g_autoptr(FsTrain) tb = fs_test_train(topos[ti], wb, &ob);
      fs_test_assert_same_result(ta, tb);
      ck_assert_int_gt(g_array_index(fs_train_result(ta)->classes, FsTrainClass, 0)
                         .time.exposed[FS_CAT_DP], 0);
    }
}
END_TEST

/* The analytic model's TP collectives against the full-contention model
 * (max-min) on one DGX H100 (tp 8, the TP all_reduce of every layer): the
 * channels of one collective share their NVLinks (collrun/exec.h,
 * fs_coll_share_caps).  A ring, whose connections are all busy for the whole
 * run, comes out within 0.1 % of max-min (measured 223.274 vs 223.272 ms of
 * exposed TP per step); NVLS, whose two lanes and channels are not busy at
 * once, is pessimistic but bounded: at least max-min and at most 1.6 × it
 * (measured 1.53 ×; before the sharing it was 0.33 ×, every flow on a whole
 * link).  workloads/README.md states the same. */
START_TEST(test_executor_analytic_tp_shares_links)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  const char *algos[] = { "Ring", "NVLS" };
  const double lo[] = { 0.999, 1.0 }, hi[] = { 1.001, 1.6 };
  for (guint a = 0; a < 2; a++) {
    FsCollPrefs prefs;
    fs_coll_prefs_init(&prefs);
    GError *err = NULL;
    ck_assert(fs_coll_prefs_set_nccl_algo(&prefs, algos[a], &err));
    FsTime tp[2];
    for (int m = 0; m < 2; m++) {
      const char *ov[] = { "--tp=8", "--global-batch-size=8", NULL };
      g_autofree char *path = fs_test_source_path("workloads/llama2-7b.yaml");
      g_autoptr(FsWorkload) w = fs_workload_load_file(path, ov, &err);
      fs_assert_no_error(err);
      FsTrainOptions o;
      fs_train_options_init(&o);
      o.net_model = m ? FS_NET_ANALYTIC : FS_NET_MAXMIN;
      o.prefs = &prefs;
      g_autoptr(FsTrain) t = fs_test_train(topo, w, &o);
      tp[m] = g_array_index(fs_train_result(t)->classes, FsTrainClass, 0).time.exposed[FS_CAT_TP];
    }
    ck_assert_int_gt(tp[0], 0);
    double r = (double)tp[1] / (double)tp[0];
    ck_assert_msg(r >= lo[a] && r <= hi[a], "%s: analytic / max-min TP time = %.4f, expected %.3f..%.3f",
                  algos[a], r, lo[a], hi[a]);
  }
}
END_TEST

/* A shared memo of collective times: the second step measures nothing
 * (every collective hits) and gives the same result as a fresh one; keys
 * differ by node list, op, bytes and flow model. */
START_TEST(test_executor_memo_hit_is_identical)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  g_autoptr(FsCollMemo) memo = fs_coll_memo_new();
  FsTrainOptions opt;
  fs_train_options_init(&opt);
  opt.net_model = FS_NET_ANALYTIC;
  g_autoptr(FsWorkload) w0 = fs_test_small_gpt("  tp: 2\n  zero_stage: 1\n", NULL);
  g_autoptr(FsTrain) fresh = fs_test_train(topo, w0, &opt);
  opt.memo = memo;
  g_autoptr(FsWorkload) w1 = fs_test_small_gpt("  tp: 2\n  zero_stage: 1\n", NULL);
  g_autoptr(FsTrain) first = fs_test_train(topo, w1, &opt);
  guint64 hits0;
  guint entries0;
  fs_coll_memo_stats(memo, &hits0, &entries0);
  ck_assert_uint_gt(entries0, 2);
  g_autoptr(FsWorkload) w2 = fs_test_small_gpt("  tp: 2\n  zero_stage: 1\n", NULL);
  g_autoptr(FsTrain) second = fs_test_train(topo, w2, &opt);
  guint64 hits1;
  guint entries1;
  fs_coll_memo_stats(memo, &hits1, &entries1);
  ck_assert_uint_eq(entries1, entries0);
  ck_assert_uint_gt(hits1, hits0);
  fs_test_assert_same_result(fresh, first);
  fs_test_assert_same_result(first, second);
  /* What makes a key. */
  guint a[] = { 1, 2, 3 }, b[] = { 1, 3, 2 };
  FsCollMemoKey k = { topo, fs_test_nccl, FS_NET_MAXMIN, FS_COLL_ALL_REDUCE, 1024, a, 3, NULL };
  fs_coll_memo_store(memo, &k, 77);
  FsTime got = 0;
  ck_assert(fs_coll_memo_lookup(memo, &k, &got));
  ck_assert_int_eq(got, 77);
  fs_coll_memo_store(memo, &k, 99); /* the first store stays */
  ck_assert(fs_coll_memo_lookup(memo, &k, &got));
  ck_assert_int_eq(got, 77);
  FsCollMemoKey k2 = k;
  k2.nodes = b;
  ck_assert(!fs_coll_memo_lookup(memo, &k2, &got));
  k2 = k;
  k2.unit = 2048;
  ck_assert(!fs_coll_memo_lookup(memo, &k2, &got));
  k2 = k;
  k2.op = FS_COLL_ALL_GATHER;
  ck_assert(!fs_coll_memo_lookup(memo, &k2, &got));
  k2 = k;
  k2.model = FS_NET_ANALYTIC;
  ck_assert(!fs_coll_memo_lookup(memo, &k2, &got));
  k2 = k;
  k2.n = 2;
  ck_assert(!fs_coll_memo_lookup(memo, &k2, &got));
  /* A group's class: a claim is a miss for others until stored; a
   * released claim leaves nothing; the first store wins. */
  FsCollMemoClass c = { .has_class = TRUE }, out;
  c.digest[0] = 7;
  ck_assert(!fs_coll_memo_claim_class(memo, &k, FS_COLL_CLASS_STRICT, &out));
  ck_assert(!fs_coll_memo_get_class(memo, &k, FS_COLL_CLASS_STRICT, &out));
  fs_coll_memo_release_class(memo, &k, FS_COLL_CLASS_STRICT);
  ck_assert(!fs_coll_memo_claim_class(memo, &k, FS_COLL_CLASS_STRICT, &out));
  fs_coll_memo_put_class(memo, &k, FS_COLL_CLASS_STRICT, &c);
  ck_assert(fs_coll_memo_claim_class(memo, &k, FS_COLL_CLASS_STRICT, &out));
  ck_assert(out.has_class && out.digest[0] == 7);
  c.digest[0] = 8;
  fs_coll_memo_put_class(memo, &k, FS_COLL_CLASS_STRICT, &c);
  ck_assert(fs_coll_memo_get_class(memo, &k, FS_COLL_CLASS_STRICT, &out));
  ck_assert_uint_eq(out.digest[0], 7);
  ck_assert(!fs_coll_memo_get_class(memo, &k, FS_COLL_CLASS_PROFILE, &out));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("executor");
  TCase *tc = tcase_create("executor");
  tcase_add_checked_fixture(tc, fs_test_models_setup, fs_test_models_teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_executor_runs_a_step);
  tcase_add_test(tc, test_executor_overlap_hides_dp);
  tcase_add_test(tc, test_executor_overlap_cost_modes);
  tcase_add_test(tc, test_executor_cp_exposed_column);
  tcase_add_test(tc, test_executor_ep_overlap);
  tcase_add_test(tc, test_executor_dp_overlap_hbm);
  tcase_add_test(tc, test_executor_deterministic);
  tcase_add_test(tc, test_executor_schedules_order);
  tcase_add_test(tc, test_executor_gpu_count_mismatch);
  tcase_add_test(tc, test_executor_runs_on_given_engines);
  tcase_add_test(tc, test_executor_analytic_dp_alone_is_exact);
  tcase_add_test(tc, test_executor_dp_streams_match_steps);
  tcase_add_test(tc, test_executor_memo_hit_is_identical);
  tcase_add_test(tc, test_executor_analytic_tp_shares_links);
  tcase_add_test(tc, test_executor_tied_embeddings);
  tcase_add_test(tc, test_executor_expert_data_parallel);
  tcase_add_test(tc, test_executor_mixtral_expert_groups);
  tcase_add_test(tc, test_executor_param_gather_per_bucket);
  suite_add_tcase(s, tc);
  FS_ADD_TEST(s, test_opgraph_cycle_is_deadlock);
  FS_ADD_TEST(s, test_opgraph_collective_not_joined);
  return fs_test_run_suite(s);
}
