/* transformer.h — a decoder-only transformer decomposed into kernels, per
 * layer and per rank, with their FLOP and byte counts (formulas in
 * src/compute/README.md).
 *
 * Notation: L layers, h hidden, F FFN hidden, a heads, g KV heads (GQA),
 * d head dimension (h/a unless given), V vocabulary, s sequence, b micro
 * batch; t tensor-parallel degree, c context-parallel degree.  One rank
 * handles T = b·s/c tokens in its GEMMs and T/t (sequence parallel) or T
 * (without) in its norms and elementwise ops, a/t query heads and g/t KV
 * heads.
 *
 * GEMM FLOPs are 2·m·n·k.  Attention core FLOPs are 4·b·a·s·s·d per layer
 * (QKᵀ and PV) for the full score matrix; with `causal` the kernels count
 * half (what FlashAttention executes), and fs_transformer_flops_per_token()
 * offers both conventions: Megatron's formula and PaLM's 6N + 12·L·h·s count
 * the full matrix.  Backward GEMMs are a dgrad and a wgrad per forward GEMM
 * (2× forward); the attention backward executes 2.5× forward and counts 2×.
 *
 * Ownership: the kernel lists are GArrays of FsKernel that the caller frees
 * (g_array_unref); kernel names are static strings.  Configs are plain
 * records.  Errors (fs_transformer_check) are in FS_TRANSFORMER_ERROR and
 * have no position: the workload loader prefixes it.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "compute/kernel.h"

G_BEGIN_DECLS

#define FS_TRANSFORMER_ERROR (fs_transformer_error_quark())
GQuark fs_transformer_error_quark(void);

typedef enum {
  FS_TRANSFORMER_ERROR_INVALID, /* an inconsistent config or layout */
} FsTransformerError;

#define FS_MLP_TYPES(X)   \
  X(GELU, "gelu")         \
  X(SWIGLU, "swiglu")

typedef enum {
#define X(id, str) FS_MLP_##id,
  FS_MLP_TYPES(X)
#undef X
  FS_MLP_N
} FsMlpType;

#define FS_NORM_TYPES(X)        \
  X(LAYERNORM, "layernorm")     \
  X(RMSNORM, "rmsnorm")

typedef enum {
#define X(id, str) FS_NORM_##id,
  FS_NORM_TYPES(X)
#undef X
  FS_NORM_N
} FsNormType;

#define FS_POSITION_TYPES(X)  \
  X(LEARNED, "learned")       \
  X(ROPE, "rope")

typedef enum {
#define X(id, str) FS_POSITION_##id,
  FS_POSITION_TYPES(X)
#undef X
  FS_POSITION_N
} FsPositionType;

/* Activation recomputation (Megatron's --recompute-granularity; and
 * TorchTitan's per-op selective activation checkpointing, `selective_op`:
 * every output saved but the second, fourth and sixth matmul of a layer and
 * the elementwise ops, which the backward recomputes). */
#define FS_RECOMPUTE_KINDS(X)     \
  X(NONE, "none")                 \
  X(SELECTIVE, "selective")       \
  X(FULL, "full")                 \
  X(SELECTIVE_OP, "selective_op")

typedef enum {
#define X(id, str) FS_RECOMPUTE_##id,
  FS_RECOMPUTE_KINDS(X)
#undef X
  FS_RECOMPUTE_N
} FsRecompute;

/* How Transformer Engine scales FP8 GEMM inputs (Megatron-LM's
 * --fp8-recipe): `delayed` takes each tensor's scale from the amax history
 * of earlier steps, so the cast to FP8 is one pass that also records the
 * amax; `tensorwise` (TE's current scaling) first reduces the tensor's amax
 * in its own pass, then casts (the QKV and dense fc1 inputs take theirs from
 * the norm kernel TE fuses with those GEMMs: no pass of their own). */
#define FS_FP8_RECIPES(X)       \
  X(DELAYED, "delayed")         \
  X(TENSORWISE, "tensorwise")

typedef enum {
#define X(id, str) FS_FP8_##id,
  FS_FP8_RECIPES(X)
#undef X
  FS_FP8_RECIPE_N
} FsFp8Recipe;

#define FS_OPTIMIZERS(X)  \
  X(ADAM, "adam")         \
  X(SGD, "sgd")

typedef enum {
#define X(id, str) FS_OPTIMIZER_##id,
  FS_OPTIMIZERS(X)
#undef X
  FS_OPTIMIZER_N
} FsOptimizer;

const char *fs_mlp_type_name(FsMlpType v);
const char *fs_norm_type_name(FsNormType v);
const char *fs_position_type_name(FsPositionType v);
const char *fs_recompute_name(FsRecompute v);
const char *fs_optimizer_name(FsOptimizer v);
const char *fs_fp8_recipe_name(FsFp8Recipe v);
gboolean fs_mlp_type_from_name(const char *s, FsMlpType *out);
gboolean fs_norm_type_from_name(const char *s, FsNormType *out);
gboolean fs_position_type_from_name(const char *s, FsPositionType *out);
gboolean fs_recompute_from_name(const char *s, FsRecompute *out);
gboolean fs_optimizer_from_name(const char *s, FsOptimizer *out);
gboolean fs_fp8_recipe_from_name(const char *s, FsFp8Recipe *out);

typedef struct {
  guint layers;          /* L */
  guint hidden;          /* h */
  guint ffn_hidden;      /* F (per expert for MoE layers: moe_ffn_hidden) */
  guint heads;           /* a */
  guint kv_heads;        /* g; = a for multi-head attention */
  guint head_dim;        /* d; 0 means h/a */
  guint vocab;           /* V */
  guint seq_len;         /* s, the training sequence length */
  guint max_positions;   /* learned position table rows; 0 means seq_len */
  FsMlpType mlp;
  FsNormType norm;
  FsPositionType position;
  gboolean bias;         /* biases on the linear layers (GPT-2/3) */
  gboolean tied_embeddings; /* the output layer reuses the input embedding */
  gboolean dropout;      /* dropout after attention and MLP (GPT-3 training) */
  gboolean causal;       /* causal attention mask (decoders: TRUE) */
  gboolean flash_attention; /* fused attention that never stores the s×s scores */
  /* Mixture of experts: experts > 1 makes every moe_every-th layer (layer
   * index i with i % moe_every == moe_every - 1) an MoE layer with
   * `experts` experts of FFN size moe_ffn_hidden (0: ffn_hidden), top_k
   * routed per token, tokens padded to capacity_factor (0 or 1: dropless). */
  guint experts;
  guint top_k;
  double capacity_factor;
  guint moe_ffn_hidden;
  guint moe_every;       /* 0 means 1 */
} FsTransformerConfig;

/* How one micro-batch runs on one rank. */
typedef struct {
  guint micro_batch;     /* b */
  guint tp;              /* t */
  guint cp;              /* c */
  guint ep;              /* expert-parallel degree */
  gboolean sequence_parallel;
  FsDtype dtype;         /* GEMM datatype: bf16, fp16, fp8 (attention and
                            elementwise ops run in 16-bit) or fp32/tf32 */
  FsFp8Recipe fp8_recipe; /* with fp8: how the GEMM inputs are scaled */
  FsRecompute recompute;
} FsTransformerRun;

/* Fills cfg with defaults for the fields a YAML may omit: kv_heads = heads,
 * GELU, LayerNorm, learned positions, no bias, untied, no dropout, causal,
 * flash attention, dense. */
void fs_transformer_config_init(FsTransformerConfig *cfg);
/* Fills run with b = 1, t = c = ep = 1, bf16, no recompute. */
void fs_transformer_run_init(FsTransformerRun *run);

/* Checks a config and a run (run may be NULL): positive sizes, heads
 * divisible by kv_heads, heads and kv_heads and ffn sizes divisible by tp
 * (a vocabulary tp does not divide is padded), seq_len divisible by cp (and by tp with sequence
 * parallel), experts divisible by ep, top_k <= experts.  The message names
 * the fields ("heads (40) is not divisible by tp (3)"). */
gboolean fs_transformer_check(const FsTransformerConfig *cfg, const FsTransformerRun *run,
                              GError **error);

/* Derived sizes. */
guint fs_transformer_head_dim(const FsTransformerConfig *cfg);
gboolean fs_transformer_layer_is_moe(const FsTransformerConfig *cfg, guint layer);
guint fs_transformer_moe_layers(const FsTransformerConfig *cfg);

/* Parameter counts (whole model, no parallelism). */
typedef struct {
  double attention;      /* per layer: QKV + output projection (+ biases) */
  double mlp;            /* per dense layer: 2 or 3 matrices (+ biases) */
  double moe;            /* per MoE layer: all experts + router */
  double moe_active;     /* per MoE layer: top_k experts + router */
  double norms;          /* per layer: two norms */
  double embedding;      /* V·h */
  double positions;      /* max_positions·h for learned positions, else 0 */
  double output;         /* V·h when untied, else 0 */
  double final_norm;
  double layers_total;   /* all layers */
  double total;          /* everything */
  double active;         /* per token: MoE counts top_k experts */
  double matmul;         /* weights of the GEMMs a token passes through
                            (active experts, output layer, router; no
                            embedding lookup, norms, biases): 2× this is the
                            forward GEMM FLOPs per token */
} FsTransformerParams;

void fs_transformer_params(const FsTransformerConfig *cfg, FsTransformerParams *out);

/* Model FLOPs per token for one training step (forward + backward, no
 * recomputation): 6·matmul + 12·L·a·d·s, with the attention term halved
 * when causal_half is TRUE.  With causal_half = FALSE this is PaLM's
 * 6N + 12·L·H·Q·T and, for a GPT (F = 4h, MHA, tied output), Megatron's
 * 72·B·s·L·h²·(1 + s/6h + V/(12hL)) divided by B·s. */
double fs_transformer_flops_per_token(const FsTransformerConfig *cfg, gboolean causal_half);

/* The kernels of one layer (index layer, 0-based, for MoE placement) on
 * one rank, for pass FORWARD, BACKWARD or RECOMPUTE (the recompute pass
 * is empty without recomputation; selective recomputes the attention core
 * unless flash_attention already does so in its backward; full re-runs the
 * forward; selective_op re-runs the layer's norms, rotary, activation and
 * residual adds and its matmuls 2, 4 and 6 in TorchTitan's order q, k, v,
 * o, w1, w3, w2 — the key projection, the output projection and the
 * SwiGLU up projection w3, or fc2 of a GELU MLP — keeping the attention
 * and the other matmuls' outputs).  Kernel order is execution order.
 * Caller frees. */
GArray *fs_transformer_layer_kernels(const FsTransformerConfig *cfg, const FsTransformerRun *run,
                                     guint layer, FsKernelPass pass);

/* The input embedding (first pipeline stage): lookup (+ learned positions),
 * FORWARD or BACKWARD.  Caller frees. */
GArray *fs_transformer_embedding_kernels(const FsTransformerConfig *cfg,
                                         const FsTransformerRun *run, FsKernelPass pass);

/* The head (last pipeline stage): final norm, logits GEMM (vocab-parallel,
 * V/t columns), softmax cross-entropy; FORWARD or BACKWARD.  Caller frees. */
GArray *fs_transformer_head_kernels(const FsTransformerConfig *cfg, const FsTransformerRun *run,
                                    FsKernelPass pass);

/* The optimizer step over params parameters held by this rank, as one
 * memory-bound kernel.  Adam with mixed precision (master_fp32) reads the
 * fp32 master, m, v and the gradient and writes master, m, v and the 16-bit
 * copy: (4+4+4+grad) + (4+4+4+2) bytes per parameter; SGD with momentum
 * (4+4+grad) + (4+4+2).  Without mixed precision there is no 16-bit copy.
 * grad_bytes is 2 (bf16 gradients) or 4 (fp32).  Caller frees. */
GArray *fs_optimizer_kernels(double params, FsOptimizer opt, gboolean master_fp32,
                             double grad_bytes);

/* Transformer Engine's cast of `params` updated 16-bit weights to FP8
 * and their transpose, once per step (the first micro-batch's, or the
 * optimizer's own with FP8 parameter gathers): one memory-bound kernel
 * reading 2 and writing 1 + 1 bytes per weight, after an amax pass
 * reading 2 bytes per weight with current (tensorwise) scaling.  Caller
 * frees. */
GArray *fs_fp8_weight_cast_kernels(double params, FsFp8Recipe recipe);

/* Sums over a kernel list. */
double fs_kernels_flops(const GArray *kernels);
double fs_kernels_model_flops(const GArray *kernels);
double fs_kernels_bytes(const GArray *kernels);
/* Sums of model and executed FLOPs of the kernels of one class. */
double fs_kernels_class_model_flops(const GArray *kernels, FsKernelClass cls);
double fs_kernels_class_flops(const GArray *kernels, FsKernelClass cls);

G_END_DECLS
