/* memory.h — per-GPU memory footprint of a training job: weights,
 * gradients, optimizer state by ZeRO stage, activations by recomputation
 * policy and pipeline schedule, communication buffers; and whether it fits.
 *
 * Model state per parameter (mixed precision, Adam — the "16 bytes per
 * parameter" of the ZeRO paper): 2 (16-bit weights) + 2 (16-bit gradients)
 * + 4 (fp32 master) + 4 + 4 (Adam m, v).  Gradients kept in fp32 (Megatron's
 * main_grad) are 4 bytes.  SGD keeps one momentum.  An fp32 run has no
 * master copy: 4 + 4 + states.  ZeRO-1 divides the master and optimizer
 * states by dp × cp (the gradient-reduction group), ZeRO-2 also the
 * gradients, ZeRO-3 (FSDP) also the weights; MoE expert states divide by
 * the expert-data-parallel size dp × cp / ep instead.
 * Offloading the optimizer puts master and states in host memory.
 *
 * Activations per layer per micro-batch follow Korthikanti et al.,
 * "Reducing Activation Recomputation in Large Transformer Models" (2022),
 * generalised to GQA, SwiGLU, any FFN size and dropout on/off; for a GPT
 * (F = 4h, MHA, dropout, no flash attention) it is exactly
 *   s·b·h·(34 + 5·a·s/h)                  bytes, no parallelism
 *   s·b·h·(10 + 24/t + 5·a·s/(h·t))       tensor parallel
 *   s·b·h/t·(34 + 5·a·s/h)                tensor + sequence parallel
 *   s·b·h/t·34                            + selective recomputation
 *   2·s·b·h/t (or 2·s·b·h without SP)     full recomputation (layer input)
 * and everything is divided by the context-parallel degree.  Flash
 * attention stores no s×s scores (only the fp32 log-sum-exp, 4·a·s·b/t).
 * The formula terms are listed in src/compute/README.md.
 *
 * In-flight micro-batches on a pipeline stage: GPipe keeps all m;
 * 1F1B keeps min(p − stage, m); interleaved 1F1B with v chunks keeps
 * Megatron's warm-up count 2·(p − stage − 1) + (v − 1)·p + 1 chunks
 * (capped at m·v), each of L/(p·v) layers — L·(1 + (p−1)/(p·v)) layers on
 * stage 0 when m ≥ p.
 *
 * Everything is a pure function of its inputs; nothing allocates.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "compute/transformer.h"

G_BEGIN_DECLS

/* Pipeline schedules (`schedule: 1f1b`). */
#define FS_PP_SCHEDULES(X)          \
  X(GPIPE, "gpipe")                 \
  X(1F1B, "1f1b")                   \
  X(INTERLEAVED, "interleaved")

typedef enum {
#define X(id, str) FS_PP_##id,
  FS_PP_SCHEDULES(X)
#undef X
  FS_PP_N
} FsPpSchedule;

const char *fs_pp_schedule_name(FsPpSchedule s);
gboolean fs_pp_schedule_from_name(const char *s, FsPpSchedule *out);

/* The parallel layout and training settings that memory depends on. */
typedef struct {
  guint tp, pp, dp, cp, ep;
  guint vp;                   /* virtual stages per rank (interleaved); 0 or 1: none */
  gboolean sequence_parallel;
  FsPpSchedule schedule;
  guint micro_batch;          /* b */
  guint num_micro_batches;    /* m: micro-batches per step per DP rank */
  guint zero_stage;           /* 0..3 (FSDP = 3) */
  FsRecompute recompute;
  FsOptimizer optimizer;
  FsDtype dtype;              /* training dtype: bf16/fp16/fp8 are mixed precision */
  gboolean grad_fp32;         /* gradients accumulated in fp32 */
  gboolean offload_optimizer; /* master weights and optimizer states on the host */
  uint64_t bucket_size;       /* DP gradient bucket, bytes (0: none) */
  uint64_t reserved;          /* fixed extra per GPU (context, workspaces), bytes */
  /* Uneven pipeline stages: virtual stage v (chunk c of stage s is
   * v = c·pp + s) holds layers [vstage_first[v], vstage_first[v + 1]),
   * pp·vp + 1 entries, borrowed; NULL: every stage holds layers / pp. */
  const guint *vstage_first;
} FsMemoryLayout;

/* Fills a layout with 1-way parallelism, 1F1B, b = m = 1, ZeRO-0, Adam,
 * bf16, no recompute, no buckets. */
void fs_memory_layout_init(FsMemoryLayout *layout);

/* Model-state bytes for params parameters held (before ZeRO sharding). */
typedef struct {
  double weights;        /* working copy (16-bit, or fp32) */
  double gradients;
  double master;         /* fp32 master copy (mixed precision) */
  double optimizer;      /* Adam m, v (or momentum) */
  double host;           /* master + optimizer when offloaded (not on the GPU) */
} FsModelStates;

void fs_memory_model_states(double params, const FsMemoryLayout *layout, FsModelStates *out);

typedef struct {
  guint stage;
  guint layers;                   /* transformer layers on this stage */
  double params;                  /* parameters held by this GPU (before ZeRO) */
  uint64_t weights;
  uint64_t gradients;
  uint64_t master;
  uint64_t optimizer;
  uint64_t activations;           /* all in-flight micro-batches */
  uint64_t activations_per_microbatch; /* this stage, one micro-batch */
  double in_flight;               /* micro-batches' worth kept (may be fractional for interleaved) */
  uint64_t recompute_workspace;   /* one layer's full activations during full recompute */
  uint64_t comm_buffers;          /* gradient buckets, ZeRO-3 gathers, SP gathers */
  uint64_t reserved;
  uint64_t total;
  uint64_t host;                  /* offloaded optimizer state (host memory) */
  uint64_t capacity;              /* the GPU's memory, 0 when no GPU was given */
  gboolean fits;                  /* total <= capacity (TRUE when no GPU) */
} FsMemoryBreakdown;

/* Activation bytes of one transformer layer for one micro-batch of b
 * sequences on one rank (see the header comment).  layer picks dense or MoE. */
double fs_memory_layer_activations(const FsTransformerConfig *cfg, const FsMemoryLayout *layout,
                                   guint layer);

/* Micro-batches' worth of activations a stage keeps at its peak (see the
 * header comment), in units of "one micro-batch through all of this
 * stage's layers". */
double fs_memory_in_flight(FsPpSchedule schedule, guint pp, guint vp, guint num_micro_batches,
                           guint stage);

/* The footprint of pipeline stage `stage` (0-based; the first stage holds
 * the embedding, the last the output layer and the logits).  gpu may be
 * NULL (then capacity = 0 and fits = TRUE).  Fails (FS_TRANSFORMER_ERROR)
 * when the layout does not divide the model (layers by pp·vp, etc.). */
gboolean fs_memory_estimate(const FsTransformerConfig *cfg, const FsMemoryLayout *layout,
                            guint stage, const FsGpuModel *gpu, FsMemoryBreakdown *out,
                            GError **error);

/* The stage with the largest total, and its breakdown. */
gboolean fs_memory_estimate_worst(const FsTransformerConfig *cfg, const FsMemoryLayout *layout,
                                  const FsGpuModel *gpu, FsMemoryBreakdown *out, GError **error);

G_END_DECLS
