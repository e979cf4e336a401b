/* spec.h — the workload job spec: a workload YAML (format in
 * workloads/README.md) loaded into a checked, resolved FsWorkload.
 *
 * A workload is a model (a transformer given by its sizes or by a preset
 * name, or a plain layer list with parameter counts and FLOPs), training
 * settings (batch sizes, datatype, optimizer, recomputation), a parallel
 * layout (TP, sequence parallel, PP with GPipe/1F1B/interleaved, DP, CP,
 * EP, ZeRO/FSDP, gradient buckets, overlap switches), a placement (order
 * of the parallel dimensions, TP innermost by default, or an explicit rank
 * map) and CPU offload of the optimizer state.
 *
 * Presets: `model: llama2-7b` (or `model: {preset: llama2-7b, …}` with
 * fields that override the preset's) takes the model section of
 * llama2-7b.yaml, looked up beside the workload file first, then in
 * fs_workload_default_dir().
 *
 * Overrides use Megatron-LM's flag names (--tensor-model-parallel-size,
 * --pipeline-model-parallel-size, --micro-batch-size, --global-batch-size,
 * --num-layers, --hidden-size, --seq-length, --context-parallel-size,
 * --expert-model-parallel-size, --sequence-parallel,
 * --recompute-granularity, …), short forms (--tp --pp --dp --cp --ep --vp)
 * or the YAML path (parallel.tp); fs_workload_override_names() lists them.
 *
 * Errors are in FS_WORKLOAD_ERROR (or FS_YAML_ERROR) and start with
 * file:line:col of the offending field — or "override --tp=3: " when an
 * override set it.  Validation (fs_workload_resolve) checks tp×pp×dp×cp
 * against the GPU count, heads and KV heads and FFN size divisible by tp,
 * layers by pp × virtual stages, the global batch by micro batch × dp, the
 * experts by ep, the sequence by cp, the rank map, and more.
 *
 * Rank coordinates and communication groups: placement.h.
 *
 * Ownership: FsWorkload owns its strings and arrays; fs_workload_free.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "compute/memory.h"
#include "compute/transformer.h"
#include "util/schema.h"

/* What communication that overlaps compute costs it (--overlap-cost,
 * workloads/README.md): `modelled` — the communication kernels occupy SMs
 * the compute loses while they run (models/compute overlap-* curves) and
 * HBM bandwidth that memory-bound kernels beside them lose (models/compute
 * `comm_hbm`), and tensor-parallel overlap splits its GEMMs into one chunk
 * per TP rank; `exposed` — overlapped TP, CP and EP communication runs on
 * the compute stream, as if not overlapped; `free` — it runs beside the
 * compute at no cost (the ideal). */
#define FS_OVERLAP_COSTS(X)    \
  X(MODELLED, "modelled")      \
  X(EXPOSED, "exposed")        \
  X(FREE, "free")

typedef enum {
#define X(id, str) FS_OVERLAP_COST_##id,
  FS_OVERLAP_COSTS(X)
#undef X
  FS_OVERLAP_COST_N
} FsOverlapCost;

/* How the host issues a step's GPU work (`framework.launch`,
 * --framework-launch; workloads/README.md, "Host (framework) overhead"):
 * `eager` — each kernel and communication launch costs the host the
 * catalog's eager per-op time (models/compute, `host:`), and a kernel
 * cannot start before it is issued; `graphs` — each transformer layer's
 * pass is one captured CUDA graph (Megatron's --enable-cuda-graph,
 * per-layer scope), one graph launch of host time, the rest eager;
 * `off` — no host: every op starts when its inputs are ready (the
 * ideal, for teaching). */
#define FS_LAUNCH_MODES(X)     \
  X(EAGER, "eager")            \
  X(GRAPHS, "graphs")          \
  X(OFF, "off")

typedef enum {
#define X(id, str) FS_LAUNCH_##id,
  FS_LAUNCH_MODES(X)
#undef X
  FS_LAUNCH_N
} FsLaunchMode;

G_BEGIN_DECLS

#define FS_WORKLOAD_ERROR (fs_workload_error_quark())
GQuark fs_workload_error_quark(void);

typedef enum {
  FS_WORKLOAD_ERROR_INVALID,  /* a value or a combination of values is wrong */
  FS_WORKLOAD_ERROR_OVERRIDE, /* an override's name or value is wrong */
  FS_WORKLOAD_ERROR_PRESET,   /* a preset cannot be found or loops */
} FsWorkloadError;

/* The most layers a layer-list model may expand to, repeats (and YAML
 * aliases) included: a guard against a 500-byte file that asks for ten
 * million layers.  The environment variable FABRICSIM_MAX_LAYERS (a
 * positive integer, read at the first load) overrides it; the error names
 * the entry that crosses it and the variable. */
#define FS_WORKLOAD_MAX_LAYERS 100000

#define FS_MODEL_FORMS(X)         \
  X(TRANSFORMER, "transformer")   \
  X(LAYERS, "layers")

typedef enum {
#define X(id, str) FS_MODEL_FORM_##id,
  FS_MODEL_FORMS(X)
#undef X
  FS_MODEL_FORM_N
} FsModelForm;

/* One layer of a layer-list model (repeat already expanded). */
typedef struct {
  char *name;
  double params;        /* parameters */
  double flops;         /* forward FLOPs per sample */
  double activations;   /* bytes kept for the backward, per sample */
  FsKernelClass cls;    /* gemm (convolutions, linear layers) or memory */
  char *bwd_names[2];   /* "<name>.dgrad", "<name>.wgrad" (kernel names) */
} FsLayerSpec;

typedef struct {
  char *name;           /* `name:`, else the file's base name */
  char *description;
  char *source;         /* where the model's architecture comes from */
  char *file;           /* the workload file ("<string>" when from text) */
  char *preset;         /* the preset the model came from, or NULL */

  /* Model. */
  FsModelForm form;
  char *model_name;     /* the model's own name (e.g. "llama2-7b") */
  FsTransformerConfig model;
  FsLayerSpec *layers;  /* layer-list form */
  guint n_layers;

  /* Training. */
  guint global_batch;   /* sequences (samples) per step */
  guint micro_batch;
  guint grad_accum;     /* derived: global / (micro × dp) */
  FsDtype dtype;
  FsOptimizer optimizer;
  FsRecompute recompute;
  FsFp8Recipe fp8_recipe;   /* with dtype fp8 */
  gboolean grad_fp32;
  uint64_t memory_reserve;

  /* Parallel layout. */
  guint gpus;           /* 0 when neither the file nor resolve gave it */
  guint tp, pp, dp, cp, ep, vp;
  gboolean sequence_parallel;
  FsPpSchedule schedule;
  guint zero_stage;     /* FSDP = 3 */
  uint64_t bucket_size;
  gboolean overlap_dp_grads;
  gboolean overlap_tp_comm;
  gboolean overlap_param_gather;
  gboolean overlap_ep_comm;   /* MoE all-to-alls beside another micro-batch's compute (combined 1F1B) */
  FsOverlapCost overlap_cost; /* what overlapped communication costs the compute */
  FsLaunchMode launch;        /* how the host issues the GPU work (default eager) */
  gboolean fp8_param_gather;  /* ZeRO parameter all-gathers in FP8 (1 byte per weight) */
  /* Uneven pipeline stages (at most one of the three ways; workloads/README.md):
   * transformer layers per pipeline stage as given (parallel.stage_layers,
   * NULL: none), Megatron-LM's --decoder-first/last-pipeline-num-layers
   * (0: not given), and its --account-for-embedding/loss-in-pipeline-split
   * (the embedding, the loss, counted as one layer each in the split). */
  guint *stage_layers;
  guint n_stage_layers;
  guint first_stage_layers, last_stage_layers;
  gboolean account_embedding, account_loss;
  /* Resolved: the first layer of virtual stage vs (0 .. pp·vp − 1) is
   * vstage_first[vs], its layers run to vstage_first[vs + 1] (pp·vp + 1
   * entries; set by fs_workload_resolve). */
  guint *vstage_first;

  /* Placement. */
  char *order;          /* parallel dimensions innermost first, "tp-cp-ep-dp-pp" */
  guint *rank_map;      /* rank i runs on GPU rank_map[i]; NULL: identity */
  guint n_rank_map;

  gboolean offload_optimizer;

  struct FsWorkloadPriv *priv; /* field positions, for messages */
} FsWorkload;

/* Loads a workload file, applies overrides (NULL-terminated strings of the
 * form "--name=value", "--flag", "name=value"; NULL for none) and resolves
 * it with the file's own GPU count (fs_workload_resolve(w, 0)).  A path
 * that does not exist is looked up among the shipped workloads
 * (fs_datadir_find: "llama2-7b" from any folder).  NULL on error. */
FsWorkload *fs_workload_load_file(const char *path, const char *const *overrides, GError **error);

/* The same from text; name is used in messages and dir (nullable) is where
 * presets are looked up first. */
FsWorkload *fs_workload_load_string(const char *text, const char *name, const char *dir,
                                    const char *const *overrides, GError **error);

void fs_workload_free(FsWorkload *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsWorkload, fs_workload_free)

/* Sets one field by override name (see the header comment) to value
 * (NULL for a flag: --sequence-parallel, --bf16, --use-distributed-optimizer).
 * Does not re-validate: call fs_workload_resolve after the last one. */
gboolean fs_workload_apply_override(FsWorkload *w, const char *name, const char *value,
                                    GError **error);

/* Applies "--name=value" / "--flag" / "name=value" strings in order; a
 * name followed by a separate value ("--tp", "8") is also accepted. */
gboolean fs_workload_apply_overrides(FsWorkload *w, const char *const *args, GError **error);

/* The accepted override names (Megatron's, short forms and YAML paths),
 * NULL-terminated, static. */
const char *const *fs_workload_override_names(void);

/* The field tables of the workload file (util/schema.h), for
 * tools/gen-schema-docs; static, *n receives their count. */
const FsSchemaEntry *fs_workload_schemas(guint *n);

/* Derives and checks: with gpus > 0 (the topology's GPU count) dp is
 * derived when not given and tp×pp×dp×cp must equal gpus; with gpus = 0
 * the file's `gpus:` is used, else dp (default 1) fixes the count.  Then
 * grad_accum = global / (micro × dp) and every rule of the header comment.
 * May be called again after more overrides. */
gboolean fs_workload_resolve(FsWorkload *w, guint gpus, GError **error);

/* The folder of the presets: fs_datadir(FS_DATA_WORKLOADS) —
 * $FABRICSIM_WORKLOADS if set, else <data root>/workloads (util/datadir.h).
 * Borrowed. */
const char *fs_workload_default_dir(void);

/* Views of a resolved workload for the compute module. */
void fs_workload_transformer_run(const FsWorkload *w, FsTransformerRun *run);
void fs_workload_memory_layout(const FsWorkload *w, FsMemoryLayout *layout);

/* Total parameters (either form). */
double fs_workload_params(const FsWorkload *w);

/* Model FLOPs of one step (forward + backward over the global batch).
 * Transformers: 6·N_matmul + 12·L·a·d·s per token with causal_half FALSE —
 * the convention of published MFU: NeMo's flops_formulas.py (llama3, gpt3:
 * the 12·s/h term in full) and Megatron-LM's num_floating_point_operations
 * up to 2024 (megatron/training/training.py at 86df799, "(1 + g/a + s/h)");
 * with causal_half TRUE the attention term is halved for a causal model,
 * as the kernels compute it and as Megatron-LM counts it since 2025
 * (training.py at 001b00c, "causal mask (only half of the mask is
 * non-zero)").  Layer-list models: 3 × the forward GEMM FLOPs either way. */
double fs_workload_step_model_flops(const FsWorkload *w, gboolean causal_half);

/* Kernels of layer i of a layer-list model for one micro-batch: FORWARD
 * (flops × micro batch), BACKWARD (a dgrad and a wgrad, each of the
 * forward FLOPs).  Kernel names are borrowed from w.  Caller frees. */
GArray *fs_workload_layer_kernels(const FsWorkload *w, guint i, FsKernelPass pass);

/* Model chunks: pp × virtual stages.  Chunk c runs on pipeline stage
 * c mod pp and holds layers [first, first + count) of
 * fs_workload_chunk_layers: an even share in order by default (the first
 * chunks one more when a layer list does not divide), or the uneven split
 * the workload asks for (stage_layers, first/last stage layers, embedding
 * and loss counted as layers). */
guint fs_workload_chunks(const FsWorkload *w);
void fs_workload_chunk_layers(const FsWorkload *w, guint chunk, guint *first, guint *count);

/* Transformer (or listed) layers held by pipeline stage `stage` over all
 * its chunks; 0 for a stage that does not exist. */
guint fs_workload_stage_layers(const FsWorkload *w, guint stage);

/* The kernels of one micro-batch through model chunk `chunk` on one rank,
 * in execution order: FORWARD (the embedding first on chunk 0, the head
 * last on the last chunk), BACKWARD (head, layers in reverse, embedding),
 * RECOMPUTE (what the recomputation policy re-runs before the backward).
 * Caller frees. */
GArray *fs_workload_chunk_kernels(const FsWorkload *w, guint chunk, FsKernelPass pass);

/* The optimizer step on one rank of pipeline stage `stage` (its share of
 * the parameters: 1/dp of them with ZeRO-1 and up).  NULL and error when
 * the stage does not exist.  Caller frees. */
GArray *fs_workload_optimizer_kernels(const FsWorkload *w, guint stage, GError **error);

/* The memory footprint of the worst pipeline stage (either form). */
gboolean fs_workload_memory_estimate(const FsWorkload *w, const FsGpuModel *gpu,
                                     FsMemoryBreakdown *out, GError **error);

G_END_DECLS
