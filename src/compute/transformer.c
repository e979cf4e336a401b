/* transformer.c — see transformer.h and src/compute/README.md. */
#include "compute/transformer.h"

#include <math.h>
#include <string.h>

#include "util/names.h"

G_DEFINE_QUARK(fs-transformer-error-quark, fs_transformer_error)

/* ---- enum names ---------------------------------------------------------- */

static const char *const mlp_names[] = { FS_MLP_TYPES(FS_NAMES_ENTRY) };
static const char *const norm_names[] = { FS_NORM_TYPES(FS_NAMES_ENTRY) };
static const char *const position_names[] = { FS_POSITION_TYPES(FS_NAMES_ENTRY) };
static const char *const recompute_names[] = { FS_RECOMPUTE_KINDS(FS_NAMES_ENTRY) };
static const char *const optimizer_names[] = { FS_OPTIMIZERS(FS_NAMES_ENTRY) };
static const char *const fp8_recipe_names[] = { FS_FP8_RECIPES(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE(FsMlpType, fs_mlp_type, mlp_names, FS_MLP_N, fs_names_index)
FS_NAMES_DEFINE(FsNormType, fs_norm_type, norm_names, FS_NORM_N, fs_names_index)
FS_NAMES_DEFINE(FsPositionType, fs_position_type, position_names, FS_POSITION_N, fs_names_index)
FS_NAMES_DEFINE(FsRecompute, fs_recompute, recompute_names, FS_RECOMPUTE_N, fs_names_index)
FS_NAMES_DEFINE(FsOptimizer, fs_optimizer, optimizer_names, FS_OPTIMIZER_N, fs_names_index)
FS_NAMES_DEFINE(FsFp8Recipe, fs_fp8_recipe, fp8_recipe_names, FS_FP8_RECIPE_N, fs_names_index)

/* ---- config -------------------------------------------------------------- */

/* Arithmetic per element of the elementwise kernels (FLOPs, not hardware
 * figures): they only matter when a GPU's vector rate is very low. */
#define NORM_FLOPS 5.0
#define GELU_FLOPS 8.0
#define SWIGLU_FLOPS 5.0
#define ROPE_FLOPS 3.0
#define SOFTMAX_FLOPS 5.0
#define LOSS_FLOPS 5.0

void fs_transformer_config_init(FsTransformerConfig *cfg)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->mlp = FS_MLP_GELU;
  cfg->norm = FS_NORM_LAYERNORM;
  cfg->position = FS_POSITION_LEARNED;
  cfg->causal = TRUE;
  cfg->flash_attention = TRUE;
  cfg->moe_every = 1;
}

void fs_transformer_run_init(FsTransformerRun *run)
{
  memset(run, 0, sizeof *run);
  run->micro_batch = 1;
  run->tp = run->cp = run->ep = 1;
  run->dtype = FS_DTYPE_BF16;
  run->recompute = FS_RECOMPUTE_NONE;
}

guint fs_transformer_head_dim(const FsTransformerConfig *cfg)
{
  if (cfg->head_dim)
    return cfg->head_dim;
  return cfg->heads ? cfg->hidden / cfg->heads : 0;
}

static guint kv_heads(const FsTransformerConfig *cfg)
{
  return cfg->kv_heads ? cfg->kv_heads : cfg->heads;
}

static guint moe_every(const FsTransformerConfig *cfg)
{
  return cfg->moe_every ? cfg->moe_every : 1;
}

static guint moe_ffn(const FsTransformerConfig *cfg)
{
  return cfg->moe_ffn_hidden ? cfg->moe_ffn_hidden : cfg->ffn_hidden;
}

gboolean fs_transformer_layer_is_moe(const FsTransformerConfig *cfg, guint layer)
{
  guint every = moe_every(cfg);
  return cfg->experts > 1 && layer % every == every - 1;
}

guint fs_transformer_moe_layers(const FsTransformerConfig *cfg)
{
  return cfg->experts > 1 ? cfg->layers / moe_every(cfg) : 0;
}

static gboolean invalid(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);
static gboolean invalid(GError **error, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  g_set_error_literal(error, FS_TRANSFORMER_ERROR, FS_TRANSFORMER_ERROR_INVALID, msg);
  return FALSE;
}

static gboolean divisible(GError **error, const char *what, guint value, const char *by,
                          guint divisor)
{
  if (divisor == 0 || value % divisor == 0)
    return TRUE;
  return invalid(error, "%s (%u) is not divisible by %s (%u)", what, value, by, divisor);
}

/* See transformer.h: the first rule broken sets FS_TRANSFORMER_ERROR_INVALID naming the fields
 * and their values; the model fields are checked before the run's parallel degrees. */
gboolean fs_transformer_check(const FsTransformerConfig *cfg, const FsTransformerRun *run,
                              GError **error)
{
  struct { const char *name; guint v; } must[] = {
    {"layers", cfg->layers},   {"hidden", cfg->hidden}, {"ffn_hidden", cfg->ffn_hidden},
    {"heads", cfg->heads},     {"vocab", cfg->vocab},   {"seq_length", cfg->seq_len},
  };
  for (guint i = 0; i < G_N_ELEMENTS(must); i++)
    if (must[i].v == 0)
      return invalid(error, "%s must be a positive integer", must[i].name);
  if (kv_heads(cfg) > cfg->heads)
    return invalid(error, "kv_heads (%u) is larger than heads (%u)", kv_heads(cfg), cfg->heads);
  if (!divisible(error, "heads", cfg->heads, "kv_heads", kv_heads(cfg)))
    return FALSE;
  if (cfg->head_dim == 0 && !divisible(error, "hidden", cfg->hidden, "heads", cfg->heads))
    return FALSE;
  if (cfg->position == FS_POSITION_LEARNED && cfg->max_positions && cfg->max_positions < cfg->seq_len)
    return invalid(error, "seq_length (%u) exceeds max_positions (%u) of the learned position table",
                   cfg->seq_len, cfg->max_positions);
  if (cfg->experts > 1) {
    if (cfg->top_k == 0 || cfg->top_k > cfg->experts)
      return invalid(error, "top_k (%u) must be between 1 and experts (%u)", cfg->top_k,
                     cfg->experts);
    if (cfg->capacity_factor < 0)
      return invalid(error, "capacity_factor must not be negative");
    if (moe_every(cfg) > cfg->layers)
      return invalid(error, "moe_every (%u) exceeds layers (%u)", moe_every(cfg), cfg->layers);
  }
  if (run == NULL)
    return TRUE;
  if (run->micro_batch == 0 || run->tp == 0 || run->cp == 0 || run->ep == 0)
    return invalid(error, "micro batch, tp, cp and ep must be positive");
  if (!divisible(error, "heads", cfg->heads, "tp", run->tp) ||
      !divisible(error, "kv_heads", kv_heads(cfg), "tp", run->tp) ||
      !divisible(error, "ffn_hidden", cfg->ffn_hidden, "tp", run->tp) ||
      !divisible(error, "seq_length", cfg->seq_len, "cp", run->cp))
    return FALSE;
  if (cfg->experts > 1 && (!divisible(error, "experts", cfg->experts, "ep", run->ep) ||
                           !divisible(error, "moe_ffn_hidden", moe_ffn(cfg), "tp", run->tp)))
    return FALSE;
  if (cfg->experts <= 1 && run->ep > 1)
    return invalid(error, "ep (%u) needs a mixture-of-experts model (experts > 1)", run->ep);
  if (run->sequence_parallel &&
      !divisible(error, "seq_length / cp", cfg->seq_len / run->cp * run->micro_batch, "tp", run->tp))
    return FALSE;
  return TRUE;
}

/* ---- parameters ---------------------------------------------------------- */

static double mlp_matrices(const FsTransformerConfig *cfg, double ffn)
{
  return (cfg->mlp == FS_MLP_SWIGLU ? 3.0 : 2.0) * (double)cfg->hidden * ffn;
}

static double mlp_biases(const FsTransformerConfig *cfg, double ffn)
{
  if (!cfg->bias)
    return 0;
  return (cfg->mlp == FS_MLP_SWIGLU ? 2.0 : 1.0) * ffn + (double)cfg->hidden;
}

void fs_transformer_params(const FsTransformerConfig *cfg, FsTransformerParams *p)
{
  memset(p, 0, sizeof *p);
  double h = cfg->hidden, d = fs_transformer_head_dim(cfg);
  double a = cfg->heads, g = kv_heads(cfg), V = cfg->vocab;
  double qkv_out = (a + 2 * g) * d;
  double attn_matrices = h * qkv_out + a * d * h;
  p->attention = attn_matrices + (cfg->bias ? qkv_out + h : 0);
  p->mlp = mlp_matrices(cfg, cfg->ffn_hidden) + mlp_biases(cfg, cfg->ffn_hidden);
  double expert = mlp_matrices(cfg, moe_ffn(cfg)) + mlp_biases(cfg, moe_ffn(cfg));
  double router = cfg->experts > 1 ? h * cfg->experts : 0;
  if (cfg->experts > 1) {
    p->moe = cfg->experts * expert + router;
    p->moe_active = cfg->top_k * expert + router;
  }
  p->norms = (cfg->norm == FS_NORM_LAYERNORM ? 4.0 : 2.0) * h;
  p->final_norm = (cfg->norm == FS_NORM_LAYERNORM ? 2.0 : 1.0) * h;
  p->embedding = V * h;
  p->positions = cfg->position == FS_POSITION_LEARNED
                   ? (double)(cfg->max_positions ? cfg->max_positions : cfg->seq_len) * h
                   : 0;
  p->output = cfg->tied_embeddings ? 0 : V * h;
  double moe_layers = fs_transformer_moe_layers(cfg);
  double dense_layers = (double)cfg->layers - moe_layers;
  p->layers_total = cfg->layers * (p->attention + p->norms) + dense_layers * p->mlp + moe_layers * p->moe;
  double rest = p->embedding + p->positions + p->output + p->final_norm;
  p->total = p->layers_total + rest;
  p->active = p->total - moe_layers * (p->moe - p->moe_active);
  p->matmul = cfg->layers * attn_matrices + dense_layers * mlp_matrices(cfg, cfg->ffn_hidden) +
              moe_layers * (cfg->top_k * mlp_matrices(cfg, moe_ffn(cfg)) + router) + V * h;
}

double fs_transformer_flops_per_token(const FsTransformerConfig *cfg, gboolean causal_half)
{
  FsTransformerParams p;
  fs_transformer_params(cfg, &p);
  double attn = 12.0 * cfg->layers * (double)cfg->heads * fs_transformer_head_dim(cfg) * cfg->seq_len;
  return 6.0 * p.matmul + (causal_half ? 0.5 : 1.0) * attn;
}

/* ---- kernels ------------------------------------------------------------- */

/* Names of each forward kernel and of its backward kernels (static). */
typedef struct {
  const char *fwd, *dgrad, *wgrad, *bwd;
} KName;

#define GEMM_NAME(n) {n, n ".dgrad", n ".wgrad", NULL}
#define MEM_NAME(n) {n, NULL, NULL, n ".bwd"}

static const KName kernel_names[] = {
  MEM_NAME("input_norm"),     GEMM_NAME("qkv"),          MEM_NAME("rotary"),
  {"attention", NULL, NULL, "attention.bwd"},
  {"attention.cp_step", NULL, NULL, "attention.cp_step.bwd"},
  MEM_NAME("attention.cp_correction"),
  GEMM_NAME("attn_scores"),   MEM_NAME("softmax"),       MEM_NAME("attn_dropout"),
  GEMM_NAME("attn_values"),   GEMM_NAME("out_proj"),     MEM_NAME("attn_residual"),
  MEM_NAME("post_attn_norm"), GEMM_NAME("mlp_fc1"),      MEM_NAME("gelu"),
  MEM_NAME("swiglu"),         GEMM_NAME("mlp_fc2"),      GEMM_NAME("router"),
  MEM_NAME("router_topk"),    MEM_NAME("moe_permute"),   GEMM_NAME("expert_fc1"),
  MEM_NAME("expert_gelu"),    MEM_NAME("expert_swiglu"), GEMM_NAME("expert_fc2"),
  MEM_NAME("moe_unpermute"),  MEM_NAME("mlp_residual"),  MEM_NAME("embedding"),
  MEM_NAME("final_norm"),     GEMM_NAME("logits"),       MEM_NAME("loss"),
};

/* FP8 casts (Transformer Engine): of a GEMM's input in the forward, of the
 * gradient of its output in the backward; with current (tensorwise)
 * scaling each is preceded by its amax pass, except the input of a GEMM
 * fed by the norm that TE fuses into its LayerNormLinear (`norm_amax`):
 * Megatron-LM's QKV and dense fc1 are TELayerNormColumnParallelLinear,
 * whose norm kernel computes the amax as it writes the 16-bit output
 * (`Impl::FUSED_NORM_AMAX_FP8` in `rmsnorm_fwd`/`layernorm_fwd`,
 * NVIDIA/TransformerEngine transformer_engine/pytorch/csrc/extensions/
 * normalization.cpp @c38e4ba1), and the cast then skips its amax kernel
 * (`Float8CurrentScalingQuantizer::quantize_with_amax` calls
 * `quantize_impl(..., compute_amax = false)`, csrc/quantizer.cpp
 * @ad3f651f; `_LayerNormLinear` hands the norm its input quantizer in
 * every FP8 recipe, module/layernorm_linear.py @3ec87875).  Indexed by
 * the GEMM's name. */
typedef struct {
  const char *gemm, *cast, *amax, *grad_cast, *grad_amax, *transpose;
  gboolean norm_amax;
} CastName;

#define CAST_NAME(n) {n, n ".fp8_cast", n ".fp8_amax", n ".grad_fp8_cast", n ".grad_fp8_amax", n ".fp8_transpose", FALSE}
#define NORM_CAST_NAME(n) {n, n ".fp8_cast", n ".fp8_amax", n ".grad_fp8_cast", n ".grad_fp8_amax", n ".fp8_transpose", TRUE}

static const CastName cast_names[] = {
  NORM_CAST_NAME("qkv"),    CAST_NAME("out_proj"),   NORM_CAST_NAME("mlp_fc1"), CAST_NAME("mlp_fc2"),
  CAST_NAME("expert_fc1"),  CAST_NAME("expert_fc2"),
  CAST_NAME("attn_scores"), CAST_NAME("attn_values"),
};

static const CastName *cast_of(const char *gemm)
{
  for (guint i = 0; i < G_N_ELEMENTS(cast_names); i++)
    if (strcmp(cast_names[i].gemm, gemm) == 0)
      return &cast_names[i];
  g_error("compute: no FP8 cast names for GEMM \"%s\"", gemm);
}

/* Whether a kernel is one of the FP8 casts (no backward of its own). */
static gboolean is_fp8_cast(const char *name)
{
  return g_str_has_suffix(name, "fp8_cast") || g_str_has_suffix(name, "fp8_amax") ||
         g_str_has_suffix(name, "fp8_transpose");
}

static const KName *names_of(const char *fwd)
{
  for (guint i = 0; i < G_N_ELEMENTS(kernel_names); i++)
    if (strcmp(kernel_names[i].fwd, fwd) == 0)
      return &kernel_names[i];
  g_error("compute: no backward names for kernel \"%s\"", fwd);
}

/* Per-rank sizes shared by the kernel builders. */
typedef struct {
  const FsTransformerConfig *cfg;
  const FsTransformerRun *run;
  FsKernelPass pass;      /* FORWARD or RECOMPUTE for builders */
  FsDtype gemm_dtype;
  FsDtype act_dtype;      /* activations: bf16, or fp32 for fp32/tf32 runs */
  gboolean fp8;           /* FP8 GEMMs: their inputs are cast by separate kernels */
  double e;               /* bytes per activation element */
  double T;               /* tokens in GEMMs: b·s/c */
  double Tn;              /* tokens in norms/elementwise: T/t with SP, else T */
  double replicated;      /* 1/t when norms etc. run on every TP rank, else 1 */
  double h, d, a_t, g_t, s_local, s;
} Dims;

static void dims_init(Dims *D, const FsTransformerConfig *cfg, const FsTransformerRun *run,
                      FsKernelPass pass)
{
  memset(D, 0, sizeof *D);
  D->cfg = cfg;
  D->run = run;
  D->pass = pass;
  D->gemm_dtype = run->dtype;
  D->fp8 = run->dtype == FS_DTYPE_FP8;
  gboolean wide = run->dtype == FS_DTYPE_FP32 || run->dtype == FS_DTYPE_TF32 || run->dtype == FS_DTYPE_FP64;
  D->act_dtype = wide ? FS_DTYPE_FP32 : (run->dtype == FS_DTYPE_FP16 ? FS_DTYPE_FP16 : FS_DTYPE_BF16);
  D->e = fs_dtype_bytes(D->act_dtype);
  double t = run->tp, c = run->cp;
  D->s = cfg->seq_len;
  D->s_local = (double)cfg->seq_len / c;
  D->T = (double)run->micro_batch * D->s_local;
  D->Tn = run->sequence_parallel ? D->T / t : D->T;
  D->replicated = run->sequence_parallel ? 1.0 : 1.0 / t;
  D->h = cfg->hidden;
  D->d = fs_transformer_head_dim(cfg);
  D->a_t = (double)cfg->heads / t;
  D->g_t = (double)kv_heads(cfg) / t;
}

/* Transformer Engine's FP8 cast of `elems` 16-bit elements: one kernel
 * that reads them and writes the FP8 copy and its transpose (the operand
 * layouts of the forward and of the weight-gradient GEMM), recording the
 * amax for delayed scaling; current (tensorwise) scaling first reads the
 * tensor once more to reduce its amax (`nvte_compute_amax_with_config` in
 * `Float8CurrentScalingQuantizer::quantize_impl`), unless `amax` is NULL:
 * the producer computed it. */
static void add_fp8_cast(GArray *out, FsKernelPass pass, FsFp8Recipe recipe, double elems,
                         double e, const char *cast, const char *amax)
{
  if (recipe == FS_FP8_TENSORWISE && amax) {
    FsKernel a = fs_kernel_memory(amax, pass, FS_DTYPE_BF16, elems * e, elems);
    g_array_append_val(out, a);
  }
  FsKernel c = fs_kernel_memory(cast, pass, FS_DTYPE_BF16,
                                elems * (e + 2 * fs_dtype_bytes(FS_DTYPE_FP8)), 2 * elems);
  g_array_append_val(out, c);
}

/* The FP8 input of a GEMM fed by the norm of TE's LayerNormLinear (QKV,
 * dense fc1) of `elems` (T × h) elements, the norm's T_n × h output
 * quantized (module/layernorm_linear.py @3ec87875, `_LayerNormLinear`):
 * with delayed scaling the norm kernel writes FP8 itself (`rmsnorm_fwd`/
 * `layernorm_fwd`: "Always used fused kernel for FP8 delayed scaling",
 * csrc/extensions/normalization.cpp @01a4d046; add_norm counts its 1-byte
 * output), with current scaling a cast follows the 16-bit norm output.
 * With sequence parallelism the quantizer is rowwise only
 * (`input_quantizer.set_usage(rowwise=True, columnwise=False)` when
 * `with_input_all_gather`): the cast reads 2 and writes 1 byte of the
 * local T_n × h shard, the FP8 shard is all-gathered, and the backward's
 * re-gather (`gather_along_first_dim(..., quantizer=ctx.input_quantizer)`,
 * rowwise and columnwise) makes the transpose of the gathered T × h (1 byte
 * read, 1 written).  Without it the delayed norm's columnwise copy is a
 * transpose of its output (`nvte_transpose` after the norm kernel in
 * `layernorm_fwd`, common/normalization/layernorm/ln_api.cpp @49faa734),
 * and the current-scaling cast writes both copies as any other. */
static void add_norm_fed_cast(GArray *out, const Dims *D, const CastName *cn, double elems)
{
  double q = fs_dtype_bytes(FS_DTYPE_FP8);
  gboolean delayed = D->run->fp8_recipe == FS_FP8_DELAYED;
  if (!delayed && !D->run->sequence_parallel) {
    add_fp8_cast(out, D->pass, D->run->fp8_recipe, elems, D->e, cn->cast, NULL);
    return;
  }
  if (!delayed) {
    double local = elems * D->Tn / D->T;
    FsKernel c = fs_kernel_memory(cn->cast, D->pass, FS_DTYPE_BF16, local * (D->e + q), local);
    g_array_append_val(out, c);
  }
  FsKernel t = fs_kernel_memory(cn->transpose, D->pass, FS_DTYPE_BF16, elems * 2 * q, 0);
  g_array_append_val(out, t);
}

/* GEMMs that stay 16-bit in an FP8 run: Megatron-LM builds them outside
 * Transformer Engine, so no FP8 autocast reaches them.  The output layer is
 * `tensor_parallel.ColumnParallelLinear` (`GPTModel.__init__`,
 * megatron/core/models/gpt/gpt_model.py, NVIDIA/Megatron-LM @007562f9); the
 * MoE router runs `router_gating_linear` in the input's dtype or
 * `moe_router_dtype` (`Router.gating`, megatron/core/transformer/moe/router.py
 * @7d231ef5). */
static gboolean runs_16bit(const char *gemm)
{
  return strcmp(gemm, "logits") == 0 || strcmp(gemm, "router") == 0;
}

static void add_gemm(GArray *out, const Dims *D, const char *name, double m, double n, double k,
                     double batch, double model_scale)
{
  gboolean fp8 = D->fp8 && !runs_16bit(name);
  /* FP8: the input (m × k per product) is cast first. */
  if (fp8) {
    const CastName *cn = cast_of(name);
    if (cn->norm_amax)
      add_norm_fed_cast(out, D, cn, m * k * batch);
    else
      add_fp8_cast(out, D->pass, D->run->fp8_recipe, m * k * batch, D->e, cn->cast, cn->amax);
  }
  FsDtype dtype = D->fp8 && !fp8 ? D->act_dtype : D->gemm_dtype;
  FsKernel kn = fs_kernel_gemm(name, D->pass, dtype, (uint64_t)llround(m),
                               (uint64_t)llround(n), (uint64_t)llround(k), (uint64_t)llround(batch));
  kn.model_flops *= model_scale;
  g_array_append_val(out, kn);
}

static void add_mem(GArray *out, const Dims *D, const char *name, double bytes, double flops)
{
  FsKernel kn = fs_kernel_memory(name, D->pass, D->act_dtype, bytes, flops);
  g_array_append_val(out, kn);
}

static void add_norm(GArray *out, const Dims *D, const char *name)
{
  double elems = D->Tn * D->h;
  add_mem(out, D, name, 2 * elems * D->e, NORM_FLOPS * elems);
}

/* The norm of TE's LayerNormLinear: with FP8 delayed scaling it writes its
 * output in FP8 (add_norm_fed_cast). */
static void add_fused_norm(GArray *out, const Dims *D, const char *name)
{
  double elems = D->Tn * D->h;
  double w = D->fp8 && D->run->fp8_recipe == FS_FP8_DELAYED ? fs_dtype_bytes(FS_DTYPE_FP8) : D->e;
  add_mem(out, D, name, elems * (D->e + w), NORM_FLOPS * elems);
}

/* Bias-dropout-add after a row-parallel GEMM. */
static void add_residual(GArray *out, const Dims *D, const char *name)
{
  double elems = D->Tn * D->h;
  double bytes = 3 * elems * D->e + (D->cfg->dropout ? elems : 0);
  add_mem(out, D, name, bytes, (D->cfg->dropout ? 2.0 : 1.0) * elems);
}

/* The attention core: one fused kernel, or the unfused sequence. */
static void add_attention_core(GArray *out, const Dims *D)
{
  const FsTransformerConfig *cfg = D->cfg;
  double b = D->run->micro_batch;
  double bh = b * D->a_t;
  if (cfg->flash_attention && D->run->cp > 1) {
    /* Ring attention (Megatron-LM / Transformer Engine context
     * parallelism): c steps, each the local queries against one rank's
     * K/V block of s/c keys, with the exchange of the next block behind
     * it.  Step 0 is the causal diagonal block; with a causal mask the
     * sequence is split load-balanced (each rank holds chunks i and
     * 2c−1−i), so every later step computes half of a full block (half
     * the queries or half the keys), without a mask.  After each later
     * step the partial outputs are merged with their log-sum-exp (the
     * softmax correction: read and write the output, read the step's). */
    double c = D->run->cp, blk = D->s_local;
    FsKernel k0 = fs_kernel_attention("attention", D->pass, D->act_dtype, (uint64_t)llround(bh),
                                      (uint64_t)llround(blk), (uint64_t)llround(blk),
                                      (uint64_t)llround(D->d), cfg->heads / kv_heads(cfg),
                                      cfg->causal, FALSE);
    g_array_append_val(out, k0);
    double keys = cfg->causal ? blk / 2 : blk;
    double oelems = D->T * D->a_t * D->d;
    for (guint i = 1; i < (guint)c; i++) {
      FsKernel ks = fs_kernel_attention("attention.cp_step", D->pass, D->act_dtype,
                                        (uint64_t)llround(bh), (uint64_t)llround(blk),
                                        (uint64_t)llround(keys), (uint64_t)llround(D->d),
                                        cfg->heads / kv_heads(cfg), FALSE, FALSE);
      g_array_append_val(out, ks);
      add_mem(out, D, "attention.cp_correction", 3 * oelems * D->e, SOFTMAX_FLOPS * oelems);
    }
    return;
  }
  if (cfg->flash_attention) {
    FsKernel kn = fs_kernel_attention("attention", D->pass, D->act_dtype, (uint64_t)llround(bh),
                                      (uint64_t)llround(D->s_local), (uint64_t)llround(D->s),
                                      (uint64_t)llround(D->d), cfg->heads / kv_heads(cfg),
                                      cfg->causal, FALSE);
    g_array_append_val(out, kn);
    return;
  }
  /* Unfused: the GEMMs compute the whole score matrix; with a causal mask
   * only half of it counts as model FLOPs. */
  double half = cfg->causal ? 0.5 : 1.0;
  double scores = bh * D->s_local * D->s;
  add_gemm(out, D, "attn_scores", D->s_local, D->s, D->d, bh, half);
  add_mem(out, D, "softmax", 2 * scores * D->e, SOFTMAX_FLOPS * scores);
  if (cfg->dropout)
    add_mem(out, D, "attn_dropout", scores * (2 * D->e + 1), scores);
  add_gemm(out, D, "attn_values", D->s_local, D->d, D->s, bh, half);
}

/* Columns of the MLP's input projection per unit of ffn/tp: a gated
 * linear unit (SwiGLU) has its gate and up projections as one linear_fc1
 * GEMM of twice the width, split after it (NVIDIA/Megatron-LM
 * megatron/core/transformer/mlp.py at 00caa53a, `gated_linear_unit`:
 * ffn_hidden_size *= 2, then `glu` chunks the output in two; the experts'
 * GroupedMLP, moe/experts.py at 00358e5e: fc1_output_size *= 2). */
static double fc1_width(const FsTransformerConfig *cfg)
{
  return cfg->mlp == FS_MLP_SWIGLU ? 2.0 : 1.0;
}

/* The activation between fc1 and fc2 on `elems` outputs: SwiGLU reads both
 * halves of fc1's output and writes one, GELU reads one and writes one. */
static void add_activation(GArray *out, const Dims *D, const char *gelu, const char *swiglu,
                           double elems)
{
  if (D->cfg->mlp == FS_MLP_SWIGLU)
    add_mem(out, D, swiglu, 3 * elems * D->e, SWIGLU_FLOPS * elems);
  else
    add_mem(out, D, gelu, 2 * elems * D->e, GELU_FLOPS * elems);
}

static void add_dense_mlp(GArray *out, const Dims *D)
{
  double F_t = (double)D->cfg->ffn_hidden / D->run->tp;
  add_gemm(out, D, "mlp_fc1", D->T, fc1_width(D->cfg) * F_t, D->h, 1, 1);
  add_activation(out, D, "gelu", "swiglu", D->T * F_t);
  add_gemm(out, D, "mlp_fc2", D->T, D->h, F_t, 1, 1);
}

/* An MoE MLP: router, dispatch, experts (this rank's E/ep experts, each
 * TP-split like a dense MLP, on T·top_k tokens padded by the capacity
 * factor), combine.  The all-to-all is the executor's. */
static void add_moe_mlp(GArray *out, const Dims *D)
{
  const FsTransformerConfig *cfg = D->cfg;
  double E = cfg->experts, E_loc = E / D->run->ep;
  double F_t = (double)moe_ffn(cfg) / D->run->tp;
  double cf = cfg->capacity_factor > 1 ? cfg->capacity_factor : 1.0;
  double routed = D->T * cfg->top_k;                /* token-expert pairs on this rank */
  double rows = ceil(routed * cf / E_loc);          /* per local expert, padded */
  double useful = routed / (rows * E_loc);          /* model share of the padded rows */
  add_gemm(out, D, "router", D->Tn, E, D->h, 1, D->replicated);
  add_mem(out, D, "router_topk", 2 * D->Tn * E * 4, SOFTMAX_FLOPS * D->Tn * E);
  add_mem(out, D, "moe_permute", 2 * routed * D->h * D->e, 0);
  add_gemm(out, D, "expert_fc1", rows, fc1_width(cfg) * F_t, D->h, E_loc, useful);
  add_activation(out, D, "expert_gelu", "expert_swiglu", rows * E_loc * F_t);
  add_gemm(out, D, "expert_fc2", rows, D->h, F_t, E_loc, useful);
  add_mem(out, D, "moe_unpermute", 2 * routed * D->h * D->e + D->T * D->h * D->e,
          routed * D->h);
}

/* The forward kernels of one layer, with pass FORWARD or RECOMPUTE. */
static void layer_forward(GArray *out, const FsTransformerConfig *cfg, const FsTransformerRun *run,
                          guint layer, FsKernelPass pass)
{
  Dims D;
  dims_init(&D, cfg, run, pass);
  add_fused_norm(out, &D, "input_norm");
  add_gemm(out, &D, "qkv", D.T, (D.a_t + 2 * D.g_t) * D.d, D.h, 1, 1);
  if (cfg->position == FS_POSITION_ROPE) {
    double elems = D.T * (D.a_t + D.g_t) * D.d;
    add_mem(out, &D, "rotary", 2 * elems * D.e, ROPE_FLOPS * elems);
  }
  add_attention_core(out, &D);
  add_gemm(out, &D, "out_proj", D.T, D.h, D.a_t * D.d, 1, 1);
  add_residual(out, &D, "attn_residual");
  if (fs_transformer_layer_is_moe(cfg, layer))
    add_norm(out, &D, "post_attn_norm");
  else
    add_fused_norm(out, &D, "post_attn_norm");
  if (fs_transformer_layer_is_moe(cfg, layer))
    add_moe_mlp(out, &D);
  else
    add_dense_mlp(out, &D);
  add_residual(out, &D, "mlp_residual");
}

/* The recompute pass of TorchTitan's per-op selective activation
 * checkpointing (`selective_op`): its policy saves the outputs of
 * aten.mm, the SDPA kernels and the FSDP reduce-scatter, "except every
 * second mm", counted per checkpointed block and pass, and the backward
 * re-runs the block's forward with the saved outputs replayed, so what
 * runs again is every other op (pytorch/torchtitan
 * torchtitan/parallelisms/parallelize_llama.py, `no_recompute_list` and
 * `_custom_policy`, commit 041336434916bdc0f88c1f89fda176fd3c2092e4, the
 * commit of docs/performance.md).  TorchTitan's Llama issues its matmuls
 * as q, k, v (`self.wq(x), self.wk(x), self.wv(x)` in Attention.forward), o,
 * then w1, w3, w2 (FeedForward.forward: `self.w2(F.silu(self.w1(x)) *
 * self.w3(x))`; torchtitan/models/llama/model.py, same commit), so the recomputed ones
 * are k, o and w3: the K columns of the fused QKV GEMM, the output
 * projection and one half of the fused fc1 (with a GELU MLP, q, k, v, o,
 * fc1, fc2: k, o and fc2).  An MoE layer's MLP (not in that commit's
 * models) keeps its outputs; its norm and residuals run again. */
static void layer_recompute_op(GArray *out, const FsTransformerConfig *cfg,
                               const FsTransformerRun *run, guint layer)
{
  Dims D;
  dims_init(&D, cfg, run, FS_PASS_RECOMPUTE);
  add_norm(out, &D, "input_norm");
  add_gemm(out, &D, "qkv", D.T, D.g_t * D.d, D.h, 1, 1);
  if (cfg->position == FS_POSITION_ROPE) {
    double elems = D.T * (D.a_t + D.g_t) * D.d;
    add_mem(out, &D, "rotary", 2 * elems * D.e, ROPE_FLOPS * elems);
  }
  add_gemm(out, &D, "out_proj", D.T, D.h, D.a_t * D.d, 1, 1);
  add_residual(out, &D, "attn_residual");
  add_norm(out, &D, "post_attn_norm");
  if (!fs_transformer_layer_is_moe(cfg, layer)) {
    double F_t = (double)cfg->ffn_hidden / run->tp;
    if (cfg->mlp == FS_MLP_SWIGLU) {
      add_gemm(out, &D, "mlp_fc1", D.T, F_t, D.h, 1, 1);
      add_activation(out, &D, "gelu", "swiglu", D.T * F_t);
    } else {
      add_activation(out, &D, "gelu", "swiglu", D.T * F_t);
      add_gemm(out, &D, "mlp_fc2", D.T, D.h, F_t, 1, 1);
    }
  }
  add_residual(out, &D, "mlp_residual");
}

/* The backward kernels of a forward list, in reverse order: a GEMM
 * (m, n, k) gives a dgrad (m, k, n) and a wgrad (k, n, m); attention its
 * backward kernel; a memory-bound kernel one that moves and computes twice
 * as much. */
static void backward_of(GArray *out, const GArray *fwd, const FsTransformerRun *run)
{
  for (guint i = fwd->len; i-- > 0;) {
    const FsKernel *f = &g_array_index(fwd, FsKernel, i);
    if (is_fp8_cast(f->name))
      continue;
    const KName *nm = names_of(f->name);
    double scale = f->flops > 0 ? f->model_flops / f->flops : 0;
    if (f->cls == FS_KERNEL_GEMM) {
      /* FP8: the gradient of the output (m × n) is cast before the dgrad
       * and wgrad GEMMs read it. */
      if (f->dtype == FS_DTYPE_FP8) {
        const CastName *cn = cast_of(f->name);
        add_fp8_cast(out, FS_PASS_BACKWARD, run->fp8_recipe, (double)f->m * f->n * f->batch,
                     fs_dtype_bytes(FS_DTYPE_BF16), cn->grad_cast, cn->grad_amax);
      }
      FsKernel dg = fs_kernel_gemm(nm->dgrad, FS_PASS_BACKWARD, f->dtype, f->m, f->k, f->n, f->batch);
      FsKernel wg = fs_kernel_gemm(nm->wgrad, FS_PASS_BACKWARD, f->dtype, f->k, f->n, f->m, f->batch);
      dg.model_flops *= scale;
      wg.model_flops *= scale;
      g_array_append_val(out, dg);
      g_array_append_val(out, wg);
    } else if (f->cls == FS_KERNEL_ATTENTION) {
      FsKernel b = fs_kernel_attention(nm->bwd, FS_PASS_BACKWARD, f->dtype, f->batch, f->m, f->n,
                                       f->k, f->group, f->causal, TRUE);
      g_array_append_val(out, b);
    } else {
      FsKernel b = fs_kernel_memory(nm->bwd, FS_PASS_BACKWARD, f->dtype, 2 * f->bytes, 2 * f->flops);
      g_array_append_val(out, b);
    }
  }
}

GArray *fs_transformer_layer_kernels(const FsTransformerConfig *cfg, const FsTransformerRun *run,
                                     guint layer, FsKernelPass pass)
{
  g_return_val_if_fail(cfg != NULL && run != NULL, NULL);
  GArray *out = g_array_new(FALSE, TRUE, sizeof(FsKernel));
  switch (pass) {
  case FS_PASS_FORWARD:
    layer_forward(out, cfg, run, layer, FS_PASS_FORWARD);
    break;
  case FS_PASS_BACKWARD: {
    g_autoptr(GArray) fwd = g_array_new(FALSE, TRUE, sizeof(FsKernel));
    layer_forward(fwd, cfg, run, layer, FS_PASS_FORWARD);
    backward_of(out, fwd, run);
    break;
  }
  case FS_PASS_RECOMPUTE:
    if (run->recompute == FS_RECOMPUTE_FULL) {
      layer_forward(out, cfg, run, layer, FS_PASS_RECOMPUTE);
    } else if (run->recompute == FS_RECOMPUTE_SELECTIVE_OP) {
      layer_recompute_op(out, cfg, run, layer);
    } else if (run->recompute == FS_RECOMPUTE_SELECTIVE && !cfg->flash_attention) {
      Dims D;
      dims_init(&D, cfg, run, FS_PASS_RECOMPUTE);
      add_attention_core(out, &D);
    }
    break;
  default:
    g_return_val_if_reached(out);
  }
  return out;
}

static void embedding_forward(GArray *out, const Dims *D)
{
  /* Vocab-parallel lookup: each rank writes a T×h block (rows outside its
   * shard are zero) that the TP all-reduce or reduce-scatter combines. */
  double elems = D->T * D->h;
  double bytes = 2 * elems * D->e;
  if (D->cfg->position == FS_POSITION_LEARNED)
    bytes += 3 * elems * D->e;
  if (D->cfg->dropout)
    bytes += 2 * elems * D->e + elems;
  add_mem(out, D, "embedding", bytes, elems);
}

GArray *fs_transformer_embedding_kernels(const FsTransformerConfig *cfg,
                                         const FsTransformerRun *run, FsKernelPass pass)
{
  GArray *out = g_array_new(FALSE, TRUE, sizeof(FsKernel));
  Dims D;
  dims_init(&D, cfg, run, FS_PASS_FORWARD);
  if (pass == FS_PASS_FORWARD) {
    embedding_forward(out, &D);
  } else if (pass == FS_PASS_BACKWARD) {
    g_autoptr(GArray) fwd = g_array_new(FALSE, TRUE, sizeof(FsKernel));
    embedding_forward(fwd, &D);
    backward_of(out, fwd, run);
  }
  return out;
}

static void head_forward(GArray *out, const Dims *D)
{
  /* A vocabulary that tp does not divide is padded to the next multiple
   * (Megatron pads further, to 128·tp); padding is executed, not counted. */
  double V = D->cfg->vocab, V_t = ceil(V / D->run->tp);
  add_norm(out, D, "final_norm");
  add_gemm(out, D, "logits", D->T, V_t, D->h, 1, V / (V_t * D->run->tp));
  /* Vocab-parallel cross-entropy: read the logits, keep fp32 softmax for
   * the backward. */
  double elems = D->T * V_t;
  add_mem(out, D, "loss", elems * (D->e + 4), LOSS_FLOPS * elems);
}

GArray *fs_transformer_head_kernels(const FsTransformerConfig *cfg, const FsTransformerRun *run,
                                    FsKernelPass pass)
{
  GArray *out = g_array_new(FALSE, TRUE, sizeof(FsKernel));
  Dims D;
  dims_init(&D, cfg, run, FS_PASS_FORWARD);
  if (pass == FS_PASS_FORWARD) {
    head_forward(out, &D);
  } else if (pass == FS_PASS_BACKWARD) {
    g_autoptr(GArray) fwd = g_array_new(FALSE, TRUE, sizeof(FsKernel));
    head_forward(fwd, &D);
    backward_of(out, fwd, run);
  }
  return out;
}

GArray *fs_optimizer_kernels(double params, FsOptimizer opt, gboolean master_fp32,
                             double grad_bytes)
{
  GArray *out = g_array_new(FALSE, TRUE, sizeof(FsKernel));
  double states = opt == FS_OPTIMIZER_ADAM ? 2 : 1;   /* m, v — or momentum */
  double rw = 4 + 4 * states;                          /* fp32 weights + states */
  double bytes_per = rw + grad_bytes + rw + (master_fp32 ? 2 : 0);
  double flops_per = opt == FS_OPTIMIZER_ADAM ? 12 : 3;
  FsKernel kn = fs_kernel_memory(opt == FS_OPTIMIZER_ADAM ? "adam" : "sgd", FS_PASS_OPTIMIZER,
                                 FS_DTYPE_FP32, params * bytes_per, params * flops_per);
  g_array_append_val(out, kn);
  return out;
}

GArray *fs_fp8_weight_cast_kernels(double params, FsFp8Recipe recipe)
{
  GArray *out = g_array_new(FALSE, TRUE, sizeof(FsKernel));
  /* Current scaling: TE's weight workspace update (`quantize_` of the
   * cached FP8 weight) goes through `quantize_impl` with its amax kernel. */
  if (recipe == FS_FP8_TENSORWISE) {
    FsKernel a = fs_kernel_memory("fp8_weight_amax", FS_PASS_OPTIMIZER, FS_DTYPE_BF16,
                                  params * fs_dtype_bytes(FS_DTYPE_BF16), params);
    g_array_append_val(out, a);
  }
  FsKernel c = fs_kernel_memory("fp8_weight_cast", FS_PASS_OPTIMIZER, FS_DTYPE_BF16,
                                params * (fs_dtype_bytes(FS_DTYPE_BF16) + 2 * fs_dtype_bytes(FS_DTYPE_FP8)),
                                2 * params);
  g_array_append_val(out, c);
  return out;
}

double fs_kernels_flops(const GArray *kernels)
{
  double s = 0;
  for (guint i = 0; i < kernels->len; i++)
    s += g_array_index(kernels, FsKernel, i).flops;
  return s;
}

double fs_kernels_model_flops(const GArray *kernels)
{
  double s = 0;
  for (guint i = 0; i < kernels->len; i++)
    s += g_array_index(kernels, FsKernel, i).model_flops;
  return s;
}

double fs_kernels_bytes(const GArray *kernels)
{
  double s = 0;
  for (guint i = 0; i < kernels->len; i++)
    s += g_array_index(kernels, FsKernel, i).bytes;
  return s;
}

double fs_kernels_class_model_flops(const GArray *kernels, FsKernelClass cls)
{
  double s = 0;
  for (guint i = 0; i < kernels->len; i++) {
    const FsKernel *k = &g_array_index(kernels, FsKernel, i);
    if (k->cls == cls)
      s += k->model_flops;
  }
  return s;
}

double fs_kernels_class_flops(const GArray *kernels, FsKernelClass cls)
{
  double s = 0;
  for (guint i = 0; i < kernels->len; i++) {
    const FsKernel *k = &g_array_index(kernels, FsKernel, i);
    if (k->cls == cls)
      s += k->flops;
  }
  return s;
}
