/* executor.h — one training step of a workload on a topology, run as
 * events: per-rank op graphs (opgraph.h) built from the workload's layout
 * and pipeline schedule (schedule.h), timed by the compute model, with
 * communication on the flow network.
 *
 * What is simulated (workloads/README.md, "How a step is simulated"):
 *   - every pipeline stage of one data-parallel replica (dp = 0, cp = 0),
 *     with its forward and backward passes per micro-batch in the order of
 *     the schedule, layer by layer, on one compute stream per rank;
 *   - pipeline activations and gradients as flows between the stages'
 *     GPUs (a `pp` stream per rank, asynchronous to compute);
 *   - data-parallel gradient buckets as real collectives on the flow
 *     network over the whole dp × cp group (all replicas' GPUs carry the
 *     traffic), launched as the last micro-batch's backward produces each
 *     bucket (or after the backward without overlap); ZeRO ≥ 1 reduce-
 *     scatters and all-gathers the updated parameters (with param-gather
 *     overlap bucket by bucket, each layer's first forward waiting for its
 *     own bucket; else after the optimizer);
 *     ZeRO-3 gathers each layer's parameters ahead of use, every
 *     micro-batch, and reduce-scatters its gradients;
 *     MoE expert gradients (ep > 1) in buckets of their own, reduced over
 *     the expert-data-parallel group (dp × cp / ep ranks, placement.h);
 *   - with tied embeddings over several stages, the all-reduce of the word
 *     embedding's gradient between the first and the last stage (one
 *     2-GPU collective per TP index, category EMB) before the optimizer;
 *   - tensor-, context- and expert-parallel collectives as DELAY ops whose
 *     duration is the collective measured alone on the same topology
 *     (their GPUs sit in one NVLink domain with the default placement, so
 *     nothing else would share their links);
 *   - the optimizer step on each rank's compute stream.
 * In the analytic flow model no two flows share a channel, so a
 * collective takes the same time wherever it runs: data-parallel
 * collectives are then DELAY ops too, each distinct one (op, bytes, GPUs)
 * measured once (FsTrainOptions.memo) — the same step time as running
 * them on the shared network, for far less work.
 * Mirrored (not simulated, identical by symmetry): the other dp × cp
 * replicas' compute and pipeline traffic, and, above `full_tp_limit` GPUs,
 * the TP ranks other than tp = 0.  Exactness is discussed in
 * workloads/README.md.
 *
 * The simulator, flow network and router a step runs on are not built
 * here: the caller's FsTrainEngines makes them (the scenario,
 * scenario.h, is the one place that builds engines; this layer sits below
 * it and only receives them).
 *
 * Ownership: FsTrain borrows the topology, workload, efficiency curves,
 * NCCL parameters and engines (all must outlive it) and owns the worlds
 * the engines made for it (freed through them) and the op graph.  Errors: FS_WORKLOAD_ERROR for a layout the
 * executor cannot run (schedule constraints, a GPU count that does not
 * match), FS_NET/FS_COLL errors from routing and tuning,
 * FS_RUNTIME_ERROR_DEADLOCK if the graph cannot complete (a bug).
 */
#pragma once

#include <glib.h>

#include "coll/nccl-params.h"
#include "compute/efficiency.h"
#include "net/flow.h"
#include "net/route.h"
#include "topo/topo.h"
#include "workload/collmemo.h"
#include "workload/opgraph.h"
#include "workload/spec.h"

G_BEGIN_DECLS

/* When a collective timed alone may reuse the time of a congruent group
 * (collclass.h: same signature, e.g. the same collective one pipeline
 * stage over, on a rail-optimized fabric). */
#define FS_COLL_CLASSES(X)                                                              \
  X(AUTO, "auto")  /* where that is exact: analytic model, or no ECMP choice on the group */ \
  X(ON, "on")      /* also under max-min with ECMP choices (approximate: other spine draws) */ \
  X(OFF, "off")    /* exact GPU lists only */

typedef enum {
#define X(id, str) FS_COLL_CLASSES_##id,
  FS_COLL_CLASSES(X)
#undef X
  FS_COLL_CLASSES_N
} FsCollClasses;

const char *fs_coll_classes_name(FsCollClasses c);
/* "eager", "graphs" or "off" (host-sched.c). */
const char *fs_launch_mode_name(FsLaunchMode m);
/* FALSE when name is none of auto, on, off. */
gboolean fs_coll_classes_from_name(const char *name, FsCollClasses *out);

typedef struct {
  FsNetModel net_model;     /* maxmin (default) or analytic */
  guint full_tp_limit;      /* simulate every TP rank up to this many GPUs (default 256) */
  /* Data-parallel collectives as DELAY ops measured alone (no contention
   * with pipeline traffic or with each other; much faster on large jobs).
   * Default FALSE: they run on the shared flow network. */
  gboolean dp_isolated;
  /* In the analytic flow model DP collectives are timed alone (the same
   * result: nothing shares a channel there).  TRUE runs them as flows on
   * the shared network anyway — slower; for checking that equality. */
  gboolean dp_flows;
  /* Collective times measured alone, shared between steps (sweeps: one
   * per sweep; borrowed, thread-safe; collmemo.h).  NULL: the step keeps
   * a private one. */
  FsCollMemo *memo;
  /* Congruent groups share a measurement (default AUTO: only where exact). */
  FsCollClasses coll_classes;
  /* The tuner's inputs for every collective of the step (borrowed; the
   * scenario's NCCL_ALGO / NCCL_PROTO / CollNet, scenario.h), or NULL
   * (default) for NCCL's defaults.  A shared memo must see one setting. */
  const FsCollPrefs *prefs;
  /* How collectives run (collrun/streams.h; default AUTO, as `fabricsim
   * train`): on the shared network and when timed alone.  STEPS runs every
   * one step by step (the reference).  Under the analytic flow model AUTO
   * runs steps (exact with channel dedup, collrun/dedup.h; its stream model
   * shares no link inside a collective, and moved `plan`'s GPT-3 175B step
   * times by up to 11.5 %).  A shared memo must see one setting. */
  FsCollExec exec;
  /* With exec AUTO, the data-parallel collectives on the shared network
   * (not dp_isolated) run the stream model wherever it is trusted, deep or
   * not (fs_opgraph_comm_set_streams): a step of hundreds of DP ranks then
   * costs seconds, not minutes (tests/bench/RESULTS.md, "Training
   * reference rows").  Default TRUE; FALSE leaves them to AUTO's rule. */
  gboolean dp_streams;
} FsTrainOptions;

void fs_train_options_init(FsTrainOptions *opt);

/* One rank class: a pipeline stage (its tp = 0, dp = 0 rank). */
typedef struct {
  guint stage;
  guint rank;
  int gpu;                   /* topology node */
  FsOpBreakdown time;
  double model_flops;        /* model FLOPs this rank's kernels run (causal attention
                                halved: they sum to FsTrainResult.model_flops_causal) */
} FsTrainClass;

typedef struct {
  FsTime step_time;
  double tokens;             /* per step, whole job */
  double tokens_per_s;
  double model_flops;        /* per step, whole job, the convention of published MFU
                                (NeMo, Megatron-LM 2024: attention in full;
                                fs_workload_step_model_flops) */
  double model_flops_causal; /* the same with causal attention halved (Megatron-LM 2025) */
  double tflops_per_gpu;     /* model TFLOP/s per GPU */
  double peak_flops;         /* the GPU's dense peak for the training dtype (or the
                                next wider one it has) */
  FsDtype peak_dtype;        /* the dtype of that peak */
  double mfu;                /* model_flops / (peak × GPUs × step time) */
  double mfu_causal;         /* model_flops_causal / (peak × GPUs × step time) */
  double energy_j;           /* GPUs × TDP × step time */
  guint gpus;
  guint microbatches;        /* per replica per step */
  guint simulated_ranks;
  guint n_ops;
  FsLaunchMode launch;       /* the host model in force: the workload's, or OFF where the
                                efficiency curves give no host costs for the GPU */
  const FsGpuModel *gpu;     /* the GPU model of rank 0 */
  const char *gpu_name;
  GArray *classes;           /* FsTrainClass, by stage */
} FsTrainResult;

typedef struct FsTrain FsTrain;

/* Where a step's engines come from (scenario.h's fs_scenario_engines):
 * world_new builds a simulator, a flow network on it in flow model
 * `model` and a router over topo with NCCL's default route options,
 * fills env's sim, net, router and tnet with them (the step sets the rest
 * of env) and returns the handle world_free frees.  A step asks for two
 * worlds: the one its op graph runs on (in fs_train_new) and a private
 * one that collectives are timed alone on (the first time one is, from
 * the thread building the step).  Both functions must be safe to call
 * from several threads at once (sweep and plan build steps in parallel). */
typedef struct {
  gpointer (*world_new)(const FsTopo *topo, FsNetModel model, FsOpEnv *env);
  void (*world_free)(gpointer world);
} FsTrainEngines;

/* Builds the op graph of one step on worlds made by engines.  The
 * workload must be resolved for the topology's GPU count
 * (fs_workload_resolve(w, n_gpus)). */
FsTrain *fs_train_new(const FsTopo *topo, const FsWorkload *w, const FsEfficiency *eff,
                      const FsNcclParams *nccl, const FsTrainEngines *engines,
                      const FsTrainOptions *opt, GError **error);
void fs_train_free(FsTrain *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsTrain, fs_train_free)

/* Runs the step and fills the result. */
gboolean fs_train_run(FsTrain *t, GError **error);
const FsTrainResult *fs_train_result(const FsTrain *t);

/* For reports (borrowed). */
const FsOpGraph *fs_train_graph(const FsTrain *t);
FsFlowNet *fs_train_net(const FsTrain *t);
FsRouter *fs_train_router(const FsTrain *t);

G_END_DECLS
