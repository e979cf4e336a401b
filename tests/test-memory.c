/* test-memory.c — the per-GPU memory model (src/compute/memory.c). */
#include <math.h>
#include <string.h>

#include "compute/memory.h"
#include "testutil.h"

#define ck_assert_rel(a, b)                                                                   \
  ck_assert_msg(fabs((double)(a) - (double)(b)) <= 1e-9 * fabs((double)(b)),                  \
                "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

static double states_total(const FsModelStates *s)
{
  return s->weights + s->gradients + s->master + s->optimizer;
}

START_TEST(test_memory_zero_stages)
{
  FsMemoryLayout l;
  fs_memory_layout_init(&l);
  FsModelStates s;
  /* 7B parameters, mixed-precision Adam, no sharding: 16 B/param = 112 GB. */
  fs_memory_model_states(7e9, &l, &s);
  ck_assert_rel(s.weights, 14e9);
  ck_assert_rel(s.gradients, 14e9);
  ck_assert_rel(s.master, 28e9);
  ck_assert_rel(s.optimizer, 56e9);
  ck_assert_rel(states_total(&s), 112e9);
  /* ZeRO over 8: stage 1 shards master + states, 2 also gradients, 3 all. */
  l.dp = 8;
  l.zero_stage = 1;
  fs_memory_model_states(7e9, &l, &s);
  ck_assert_rel(states_total(&s), 7e9 * (2 + 2 + 12.0 / 8));
  l.zero_stage = 2;
  fs_memory_model_states(7e9, &l, &s);
  ck_assert_rel(states_total(&s), 7e9 * (2 + 14.0 / 8));
  l.zero_stage = 3;
  fs_memory_model_states(7e9, &l, &s);
  ck_assert_rel(states_total(&s), 112e9 / 8);
  /* Offloading moves master and states to the host. */
  l.zero_stage = 0;
  l.offload_optimizer = TRUE;
  fs_memory_model_states(7e9, &l, &s);
  ck_assert_rel(states_total(&s), 28e9);
  ck_assert_rel(s.host, 84e9);
  /* fp32 gradients (Megatron's main_grad): 18 B/param; SGD: one state. */
  l.offload_optimizer = FALSE;
  l.grad_fp32 = TRUE;
  fs_memory_model_states(1e9, &l, &s);
  ck_assert_rel(states_total(&s), 18e9);
  l.grad_fp32 = FALSE;
  l.optimizer = FS_OPTIMIZER_SGD;
  fs_memory_model_states(1e9, &l, &s);
  ck_assert_rel(states_total(&s), 12e9);
  /* Pure fp32 Adam: 4 + 4 + 8, no master copy. */
  l.optimizer = FS_OPTIMIZER_ADAM;
  l.dtype = FS_DTYPE_FP32;
  fs_memory_model_states(1e9, &l, &s);
  ck_assert_rel(states_total(&s), 16e9);
  ck_assert(s.master == 0);
}
END_TEST

/* The GPT of Korthikanti et al.: F = 4h, MHA, dropout, unfused attention. */
static void korthikanti_gpt(FsTransformerConfig *c)
{
  fs_transformer_config_init(c);
  c->layers = 96;
  c->hidden = 12288;
  c->ffn_hidden = 4 * 12288;
  c->heads = 96;
  c->vocab = 51200;
  c->seq_len = 2048;
  c->bias = TRUE;
  c->dropout = TRUE;
  c->flash_attention = FALSE;
}

START_TEST(test_memory_korthikanti_activations)
{
  FsTransformerConfig c;
  korthikanti_gpt(&c);
  FsMemoryLayout l;
  fs_memory_layout_init(&l);
  double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  l.micro_batch = 1;
  /* No parallelism: sbh(34 + 5as/h). */
  ck_assert_rel(fs_memory_layer_activations(&c, &l, 0), s * b * h * (34 + 5 * a * s / h));
  /* Tensor parallel: sbh(10 + 24/t + 5as/(ht)). */
  l.tp = 8;
  ck_assert_rel(fs_memory_layer_activations(&c, &l, 0), s * b * h * (10 + 24 / t + 5 * a * s / (h * t)));
  /* + sequence parallel: sbh/t·(34 + 5as/h). */
  l.sequence_parallel = TRUE;
  ck_assert_rel(fs_memory_layer_activations(&c, &l, 0), s * b * h / t * (34 + 5 * a * s / h));
  /* + selective recomputation: 34·sbh/t. */
  l.recompute = FS_RECOMPUTE_SELECTIVE;
  ck_assert_rel(fs_memory_layer_activations(&c, &l, 0), s * b * h / t * 34);
  /* Full recomputation keeps the layer input: 2sbh/t. */
  l.recompute = FS_RECOMPUTE_FULL;
  ck_assert_rel(fs_memory_layer_activations(&c, &l, 0), 2 * s * b * h / t);
  /* Context parallel divides the sequence. */
  l.recompute = FS_RECOMPUTE_SELECTIVE;
  l.cp = 2;
  ck_assert_rel(fs_memory_layer_activations(&c, &l, 0), s / 2 * b * h / t * 34);
  /* Flash attention keeps only an fp32 log-sum-exp instead of the scores. */
  l.cp = 1;
  l.recompute = FS_RECOMPUTE_NONE;
  c.flash_attention = TRUE;
  ck_assert_rel(fs_memory_layer_activations(&c, &l, 0), s * b * h / t * 34 + 4 * b * a / t * s);
  /* Without dropout the two masks go: 32 instead of 34. */
  c.dropout = FALSE;
  c.flash_attention = FALSE;
  ck_assert_rel(fs_memory_layer_activations(&c, &l, 0), s * b * h / t * (32 + 2 * a * s / h));
}
END_TEST

START_TEST(test_memory_in_flight_microbatches)
{
  /* 1F1B: p − stage on stage `stage` (capped by m); GPipe: all m. */
  ck_assert(fs_memory_in_flight(FS_PP_1F1B, 4, 1, 8, 0) == 4);
  ck_assert(fs_memory_in_flight(FS_PP_1F1B, 4, 1, 8, 3) == 1);
  ck_assert(fs_memory_in_flight(FS_PP_1F1B, 4, 1, 2, 0) == 2);
  ck_assert(fs_memory_in_flight(FS_PP_GPIPE, 4, 1, 8, 0) == 8);
  ck_assert(fs_memory_in_flight(FS_PP_GPIPE, 1, 1, 8, 0) == 1);
  /* Interleaved: stage 0 keeps L·(1 + (p−1)/(p·v)) layers = p·(1 + (p−1)/(pv))
   * micro-batches of its L/p layers. */
  double p = 4, v = 2;
  ck_assert_rel(fs_memory_in_flight(FS_PP_INTERLEAVED, 4, 2, 8, 0), p * (1 + (p - 1) / (p * v)));
  ck_assert_rel(fs_memory_in_flight(FS_PP_INTERLEAVED, 4, 2, 8, 3), (1 * p + 1) / v);
}
END_TEST

START_TEST(test_memory_estimate_gpt3_layouts)
{
  FsTransformerConfig c;
  korthikanti_gpt(&c);
  c.flash_attention = TRUE;
  c.tied_embeddings = TRUE;
  c.vocab = 51200;
  FsGpuModel gpu;
  memset(&gpu, 0, sizeof gpu);
  gpu.memory = 80ull * 1000 * 1000 * 1000;
  FsMemoryLayout l;
  fs_memory_layout_init(&l);
  FsMemoryBreakdown m;
  GError *err = NULL;
  /* On one GPU: 175B parameters × 16 B — far over 80 GB. */
  ck_assert(fs_memory_estimate(&c, &l, 0, &gpu, &m, &err));
  ck_assert(!m.fits);
  ck_assert(m.params > 174e9 && m.params < 176e9);
  ck_assert_rel(m.weights + m.gradients + m.master + m.optimizer, 16 * m.params);
  /* Megatron's layout: tp 8, pp 16 (6 layers a stage), sequence parallel,
   * selective recompute, 1F1B with 64 micro-batches of 1: it fits. */
  l.tp = 8;
  l.pp = 16;
  l.dp = 8;
  l.sequence_parallel = TRUE;
  l.recompute = FS_RECOMPUTE_SELECTIVE;
  l.num_micro_batches = 64;
  l.zero_stage = 1;
  ck_assert(fs_memory_estimate_worst(&c, &l, &gpu, &m, &err));
  fs_assert_no_error(err);
  ck_assert_msg(m.fits, "total %" G_GUINT64_FORMAT, m.total);
  ck_assert_uint_eq(m.layers, 6);
  /* Stage 0 keeps 16 micro-batches of 6 layers = 96 layers' worth. */
  FsMemoryBreakdown s0, slast;
  ck_assert(fs_memory_estimate(&c, &l, 0, &gpu, &s0, &err));
  ck_assert(fs_memory_estimate(&c, &l, 15, &gpu, &slast, &err));
  ck_assert(s0.in_flight == 16 && slast.in_flight == 1);
  double per_layer = fs_memory_layer_activations(&c, &l, 0);
  ck_assert_rel(s0.activations_per_microbatch, 6 * per_layer + 2048.0 * 12288 / 8); /* + embedding dropout mask */
  ck_assert(s0.activations > slast.activations);
  /* The sum of the parts is the total. */
  ck_assert_uint_eq(s0.total, s0.weights + s0.gradients + s0.master + s0.optimizer + s0.activations +
                                  s0.recompute_workspace + s0.comm_buffers + s0.reserved);
  /* GPipe keeps all micro-batches on stage 0: with 128 it no longer fits
  * (6 layers × 34·sbh/t ≈ 0.64 GB each), while 1F1B still does. */
  l.num_micro_batches = 128;
  ck_assert(fs_memory_estimate(&c, &l, 0, &gpu, &m, &err));
  ck_assert(m.fits && m.in_flight == 16);
  l.schedule = FS_PP_GPIPE;
  ck_assert(fs_memory_estimate(&c, &l, 0, &gpu, &m, &err));
  ck_assert(!m.fits && m.in_flight == 128);
  /* Full recomputation adds one layer's working set. */
  l.schedule = FS_PP_1F1B;
  l.recompute = FS_RECOMPUTE_FULL;
  ck_assert(fs_memory_estimate(&c, &l, 0, &gpu, &m, &err));
  ck_assert(m.recompute_workspace > 0 && m.activations < s0.activations);
  /* ZeRO-3 over 8 divides all model state by 8 (plus gather buffers). */
  l.recompute = FS_RECOMPUTE_SELECTIVE;
  l.zero_stage = 3;
  FsMemoryBreakdown z3;
  ck_assert(fs_memory_estimate(&c, &l, 1, &gpu, &z3, &err));
  ck_assert_rel(z3.weights + z3.gradients + z3.master + z3.optimizer, 16 * z3.params / 8);
}
END_TEST

START_TEST(test_memory_estimate_errors_and_moe)
{
  FsTransformerConfig c;
  korthikanti_gpt(&c);
  FsMemoryLayout l;
  fs_memory_layout_init(&l);
  FsMemoryBreakdown m;
  GError *err = NULL;
  l.pp = 5;
  ck_assert(!fs_memory_estimate(&c, &l, 0, NULL, &m, &err));
  fs_assert_error(err, FS_TRANSFORMER_ERROR, "layers (96) is not divisible by pp × virtual stages (5 × 1)");
  l.pp = 4;
  l.schedule = FS_PP_INTERLEAVED;
  l.vp = 5;
  ck_assert(!fs_memory_estimate(&c, &l, 0, NULL, &m, &err));
  fs_assert_error(err, FS_TRANSFORMER_ERROR, "(4 × 5)");
  l.vp = 2;
  ck_assert(!fs_memory_estimate(&c, &l, 4, NULL, &m, &err));
  fs_assert_error(err, FS_TRANSFORMER_ERROR, "stage 4 does not exist");
  ck_assert(fs_memory_estimate(&c, &l, 0, NULL, &m, &err));
  ck_assert(m.fits && m.capacity == 0);
  /* MoE: expert parameters divide by ep, and ZeRO shards them over dp/ep. */
  FsTransformerConfig moe;
  fs_transformer_config_init(&moe);
  moe.layers = 32;
  moe.hidden = 4096;
  moe.ffn_hidden = 14336;
  moe.heads = 32;
  moe.kv_heads = 8;
  moe.vocab = 32000;
  moe.seq_len = 4096;
  moe.mlp = FS_MLP_SWIGLU;
  moe.norm = FS_NORM_RMSNORM;
  moe.position = FS_POSITION_ROPE;
  moe.experts = 8;
  moe.top_k = 2;
  FsMemoryLayout e;
  fs_memory_layout_init(&e);
  FsMemoryBreakdown m1, m8;
  ck_assert(fs_memory_estimate(&moe, &e, 0, NULL, &m1, &err));
  e.ep = 8;
  e.dp = 8;
  ck_assert(fs_memory_estimate(&moe, &e, 0, NULL, &m8, &err));
  double experts = 32.0 * 8 * 3 * 4096 * 14336;
  ck_assert_rel(m1.params - m8.params, experts * 7 / 8);
  /* ZeRO-1 shards the fp32 master copy over dp × cp for dense parameters and
   * over the expert-data-parallel group dp × cp / ep for experts: doubling
   * cp halves both. */
  e.zero_stage = 1;
  FsMemoryBreakdown c1, c2;
  ck_assert(fs_memory_estimate(&moe, &e, 0, NULL, &c1, &err));
  e.cp = 2;
  ck_assert(fs_memory_estimate(&moe, &e, 0, NULL, &c2, &err));
  ck_assert_rel((double)c1.master, 2.0 * (double)c2.master);
  /* ep 8 of dp 8: each expert lives on one rank, its states are not
   * sharded; dense states are, 8 ways. */
  e.cp = 1;
  FsTransformerParams tp;
  fs_transformer_params(&moe, &tp);
  double expert_all = 32.0 * (tp.moe - 4096.0 * 8); /* the router is dense */
  double dense = tp.total - expert_all;               /* pp 1: the one stage holds it all */
  ck_assert_rel((double)c1.master, 4.0 * dense / 8 + 4.0 * expert_all / 8);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("memory");
  FS_ADD_TEST(s, test_memory_zero_stages);
  FS_ADD_TEST(s, test_memory_korthikanti_activations);
  FS_ADD_TEST(s, test_memory_in_flight_microbatches);
  FS_ADD_TEST(s, test_memory_estimate_gpt3_layouts);
  FS_ADD_TEST(s, test_memory_estimate_errors_and_moe);
  return fs_test_run_suite(s);
}
