/* memory.c — see memory.h and src/compute/README.md. */
#include "compute/memory.h"

#include <math.h>
#include <string.h>

#include "util/names.h"

static const char *const schedule_names[] = { FS_PP_SCHEDULES(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE(FsPpSchedule, fs_pp_schedule, schedule_names, FS_PP_N, fs_names_index)

void fs_memory_layout_init(FsMemoryLayout *l)
{
  memset(l, 0, sizeof *l);
  l->tp = l->pp = l->dp = l->cp = l->ep = l->vp = 1;
  l->schedule = FS_PP_1F1B;
  l->micro_batch = l->num_micro_batches = 1;
  l->recompute = FS_RECOMPUTE_NONE;
  l->optimizer = FS_OPTIMIZER_ADAM;
  l->dtype = FS_DTYPE_BF16;
}

static gboolean mixed_precision(FsDtype d)
{
  return d == FS_DTYPE_BF16 || d == FS_DTYPE_FP16 || d == FS_DTYPE_FP8 || d == FS_DTYPE_FP4 ||
         d == FS_DTYPE_INT8;
}

/* Model states of params parameters sharded by ZeRO over `shards` ranks. */
static void states_sharded(double params, const FsMemoryLayout *l, double shards, FsModelStates *o)
{
  gboolean mixed = mixed_precision(l->dtype);
  double wbytes = mixed ? 2 : 4;
  double gbytes = l->grad_fp32 || !mixed ? 4 : 2;
  double mbytes = mixed ? 4 : 0;
  double sbytes = l->optimizer == FS_OPTIMIZER_ADAM ? 8 : 4;
  guint z = l->zero_stage;
  o->weights = params * wbytes / (z >= 3 ? shards : 1);
  o->gradients = params * gbytes / (z >= 2 ? shards : 1);
  o->master = params * mbytes / (z >= 1 ? shards : 1);
  o->optimizer = params * sbytes / (z >= 1 ? shards : 1);
  o->host = 0;
  if (l->offload_optimizer) {
    o->host = o->master + o->optimizer;
    o->master = o->optimizer = 0;
  }
}

void fs_memory_model_states(double params, const FsMemoryLayout *layout, FsModelStates *out)
{
  states_sharded(params, layout, MAX(layout->dp, 1), out);
}

/* ---- activations ----------------------------------------------------------- */

static double act_bytes(const FsMemoryLayout *l)
{
  return l->dtype == FS_DTYPE_FP32 || l->dtype == FS_DTYPE_TF32 ? 4 : 2;
}

/* Korthikanti's per-layer terms, generalised.  "seq" terms live in the
 * sequence-parallel region (divided by t only with SP); "tp" terms are
 * inside the tensor-parallel region (always divided by t). */
static double layer_full(const FsTransformerConfig *cfg, const FsMemoryLayout *l, guint layer,
                         gboolean keep_scores)
{
  double e = act_bytes(l);
  double t = MAX(l->tp, 1), c = MAX(l->cp, 1), b = MAX(l->micro_batch, 1);
  double s = cfg->seq_len, sl = s / c, tok = b * sl;
  double h = cfg->hidden, d = fs_transformer_head_dim(cfg);
  double a = cfg->heads, g = cfg->kv_heads ? cfg->kv_heads : cfg->heads;
  double seq_div = l->sequence_parallel ? t : 1;
  double mask = cfg->dropout ? 1 : 0;

  /* Sequence region: norm inputs, the QKV and MLP GEMM inputs (the norm
   * outputs), dropout masks after the row-parallel GEMMs. */
  double seq = tok * h * (4 * e + 2 * mask);
  /* Attention, TP region: Q, K, V and the output-projection input. */
  double tp = tok * d * (a + 2 * g + a) * e / t;
  if (cfg->flash_attention) {
    tp += 4.0 * b * (a / t) * sl; /* fp32 log-sum-exp */
  } else if (keep_scores) {
    double scores = b * (a / t) * sl * s;
    tp += scores * (cfg->dropout ? 2 * e + 1 : e); /* softmax out, mask, dropout out */
  }
  /* MLP. */
  guint nmats = cfg->mlp == FS_MLP_SWIGLU ? 3 : 2;
  if (fs_transformer_layer_is_moe(cfg, layer)) {
    double E = cfg->experts, E_loc = E / MAX(l->ep, 1);
    double F = cfg->moe_ffn_hidden ? cfg->moe_ffn_hidden : cfg->ffn_hidden;
    double cf = cfg->capacity_factor > 1 ? cfg->capacity_factor : 1;
    double rows = ceil(tok * cfg->top_k * cf / E_loc) * E_loc;
    seq += tok * E * 4;                       /* router probabilities (fp32) */
    tp += rows * h * e;                       /* permuted expert inputs */
    tp += rows * (F / t) * nmats * e;         /* expert intermediates */
  } else {
    tp += tok * ((double)cfg->ffn_hidden / t) * nmats * e;
  }
  return seq / seq_div + tp;
}

double fs_memory_layer_activations(const FsTransformerConfig *cfg, const FsMemoryLayout *l,
                                   guint layer)
{
  switch (l->recompute) {
  case FS_RECOMPUTE_FULL: {
    double t = MAX(l->tp, 1), c = MAX(l->cp, 1), b = MAX(l->micro_batch, 1);
    double tok = b * cfg->seq_len / c;
    return tok * cfg->hidden * act_bytes(l) / (l->sequence_parallel ? t : 1);
  }
  case FS_RECOMPUTE_SELECTIVE:
  case FS_RECOMPUTE_SELECTIVE_OP:
    return layer_full(cfg, l, layer, FALSE);
  default:
    return layer_full(cfg, l, layer, TRUE);
  }
}

double fs_memory_in_flight(FsPpSchedule schedule, guint pp, guint vp, guint m, guint stage)
{
  pp = MAX(pp, 1);
  m = MAX(m, 1);
  if (pp == 1)
    return 1;
  switch (schedule) {
  case FS_PP_GPIPE:
    return m;
  case FS_PP_INTERLEAVED: {
    guint v = MAX(vp, 1);
    /* Megatron's warm-up micro-batches plus the one in the steady state. */
    double chunks = 2.0 * (pp - stage - 1) + (double)(v - 1) * pp + 1;
    chunks = MIN(chunks, (double)m * v);
    return chunks / v;
  }
  default:
    return MIN(pp - stage, m);
  }
}

/* Parameters one GPU holds on a stage, split into dense and expert
 * parameters (they shard differently under ZeRO). */
static void stage_params(const FsTransformerConfig *cfg, const FsMemoryLayout *l, guint stage,
                         const guint *layers, guint count, double *dense, double *expert,
                         double *layer_max)
{
  FsTransformerParams p;
  fs_transformer_params(cfg, &p);
  double t = MAX(l->tp, 1), ep = MAX(l->ep, 1), h = cfg->hidden;
  /* Row-parallel biases (output projection, second MLP GEMM) are replicated. */
  double row_bias = cfg->bias ? h : 0;
  double attn = (p.attention - row_bias) / t + row_bias + p.norms;
  double mlp = (p.mlp - row_bias) / t + row_bias;
  double router = cfg->experts > 1 ? h * cfg->experts : 0;
  double experts = cfg->experts > 1 ? (p.moe - router - cfg->experts * row_bias) / (t * ep) +
                                          cfg->experts / ep * row_bias
                                    : 0;
  *dense = *expert = *layer_max = 0;
  for (guint k = 0; k < count; k++) {
    guint i = layers[k];
    double lp;
    if (fs_transformer_layer_is_moe(cfg, i)) {
      *dense += attn + router;
      *expert += experts;
      lp = attn + router + experts;
    } else {
      *dense += attn + mlp;
      lp = attn + mlp;
    }
    *layer_max = MAX(*layer_max, lp);
  }
  guint pp = MAX(l->pp, 1);
  if (stage == 0)
    *dense += p.embedding / t + p.positions;
  if (stage == pp - 1) {
    *dense += p.final_norm;
    if (!cfg->tied_embeddings)
      *dense += p.output / t;
    else if (pp > 1)
      *dense += p.embedding / t; /* the output layer's copy of the tied embedding */
  }
}

/* See memory.h: fills out with the per-GPU bytes of one pipeline stage (weights, gradients,
 * optimizer state under the ZeRO stage, activations under the recompute policy) and whether
 * they fit the GPU. */
gboolean fs_memory_estimate(const FsTransformerConfig *cfg, const FsMemoryLayout *l,
                            guint stage, const FsGpuModel *gpu, FsMemoryBreakdown *out,
                            GError **error)
{
  g_return_val_if_fail(cfg != NULL && l != NULL && out != NULL, FALSE);
  memset(out, 0, sizeof *out);
  guint pp = MAX(l->pp, 1), vp = l->schedule == FS_PP_INTERLEAVED ? MAX(l->vp, 1) : 1;
  if (cfg->layers == 0 || (l->vstage_first == NULL && cfg->layers % (pp * vp) != 0)) {
    g_set_error(error, FS_TRANSFORMER_ERROR, FS_TRANSFORMER_ERROR_INVALID,
                "layers (%u) is not divisible by pp × virtual stages (%u × %u)", cfg->layers, pp, vp);
    return FALSE;
  }
  if (stage >= pp) {
    g_set_error(error, FS_TRANSFORMER_ERROR, FS_TRANSFORMER_ERROR_INVALID,
                "stage %u does not exist (pp = %u)", stage, pp);
    return FALSE;
  }
  if (l->zero_stage > 3) {
    g_set_error(error, FS_TRANSFORMER_ERROR, FS_TRANSFORMER_ERROR_INVALID,
                "ZeRO stage %u does not exist (0 to 3)", l->zero_stage);
    return FALSE;
  }
  /* The stage's layers: an even block (with interleaving v chunks spread
   * over the model, whose sizes are those of one contiguous block), or the
   * chunks of the uneven split (FsMemoryLayout.vstage_first). */
  g_autoptr(GArray) mine = g_array_new(FALSE, FALSE, sizeof(guint));
  if (l->vstage_first != NULL) {
    for (guint v = stage; v < pp * MAX(l->vp, 1); v += pp)
      for (guint i = l->vstage_first[v]; i < l->vstage_first[v + 1]; i++)
        g_array_append_val(mine, i);
  } else {
    for (guint i = stage * (cfg->layers / pp); i < (stage + 1) * (cfg->layers / pp); i++)
      g_array_append_val(mine, i);
  }
  const guint *ids = (const guint *)mine->data;
  out->stage = stage;
  out->layers = mine->len;

  /* Model states. */
  double dense, expert, layer_max;
  stage_params(cfg, l, stage, ids, mine->len, &dense, &expert, &layer_max);
  out->params = dense + expert;
  FsModelStates sd, se;
  /* ZeRO shards over the gradient-reduction group, dp × cp (Megatron-Core's
   * data-parallel group with context parallelism); expert states over the
   * expert-data-parallel group, dp × cp / ep. */
  double dp = (double)MAX(l->dp, 1) * MAX(l->cp, 1);
  states_sharded(dense, l, dp, &sd);
  states_sharded(expert, l, MAX(dp / MAX(l->ep, 1), 1), &se);
  out->weights = (uint64_t)llround(sd.weights + se.weights);
  out->gradients = (uint64_t)llround(sd.gradients + se.gradients);
  out->master = (uint64_t)llround(sd.master + se.master);
  out->optimizer = (uint64_t)llround(sd.optimizer + se.optimizer);
  out->host = (uint64_t)llround(sd.host + se.host);

  /* Activations of one micro-batch through this stage's layers. */
  double per_mb = 0;
  for (guint k = 0; k < mine->len; k++)
    per_mb += fs_memory_layer_activations(cfg, l, ids[k]);
  double e = act_bytes(l), t = MAX(l->tp, 1), c = MAX(l->cp, 1);
  double tok = (double)MAX(l->micro_batch, 1) * cfg->seq_len / c;
  double seq_div = l->sequence_parallel ? t : 1;
  if (stage == 0 && cfg->dropout)
    per_mb += tok * cfg->hidden / seq_div; /* embedding dropout mask */
  out->in_flight = fs_memory_in_flight(l->schedule, pp, vp, l->num_micro_batches, stage);
  double acts = per_mb * out->in_flight;
  if (stage == pp - 1) {
    /* Final norm input, logits GEMM input and fp32 logits of the one
     * micro-batch whose loss is being computed. */
    acts += 2 * tok * cfg->hidden * e / seq_div + 4 * tok * (double)cfg->vocab / t;
  }
  out->activations_per_microbatch = (uint64_t)llround(per_mb);
  out->activations = (uint64_t)llround(acts);
  if (l->recompute == FS_RECOMPUTE_FULL) {
    FsMemoryLayout none = *l;
    none.recompute = FS_RECOMPUTE_NONE;
    double ws = 0;
    for (guint k = 0; k < mine->len; k++)
      ws = MAX(ws, fs_memory_layer_activations(cfg, &none, ids[k]));
    out->recompute_workspace = (uint64_t)llround(ws);
  }

  /* Communication buffers. */
  double comm = 0;
  if (l->dp > 1)
    comm += (double)l->bucket_size;
  if (l->zero_stage >= 3 && l->dp > 1)
    comm += 2 * layer_max * (mixed_precision(l->dtype) ? 2 : 4); /* current + prefetched layer */
  if (l->tp > 1 && l->sequence_parallel)
    comm += tok * cfg->hidden * e; /* all-gathered norm output */
  if (pp > 1)
    comm += 2 * tok * cfg->hidden * e / seq_div; /* send + receive */
  out->comm_buffers = (uint64_t)llround(comm);
  out->reserved = l->reserved;
  out->total = out->weights + out->gradients + out->master + out->optimizer + out->activations +
               out->recompute_workspace + out->comm_buffers + out->reserved;
  out->capacity = gpu ? gpu->memory : 0;
  out->fits = gpu ? out->total <= gpu->memory : TRUE;
  return TRUE;
}

gboolean fs_memory_estimate_worst(const FsTransformerConfig *cfg, const FsMemoryLayout *layout,
                                  const FsGpuModel *gpu, FsMemoryBreakdown *out, GError **error)
{
  gboolean have = FALSE;
  for (guint s = 0; s < MAX(layout->pp, 1); s++) {
    FsMemoryBreakdown b;
    if (!fs_memory_estimate(cfg, layout, s, gpu, &b, error))
      return FALSE;
    if (!have || b.total > out->total) {
      *out = b;
      have = TRUE;
    }
  }
  return TRUE;
}
