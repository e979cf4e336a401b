/* executor-private.h — the step executor's internal records, shared by
 * executor.c (ranks, layer costs, the forward and backward passes, the
 * pipeline links, running the step) and dp-sched.c (data-parallel
 * gradient buckets, ZeRO parameter gathers and gradient reduce-scatters,
 * the tied-embedding all-reduce, the optimizer's shard).  Not installed;
 * not for callers of executor.h.
 *
 * Ownership: an FsRankBuilder lives on build_rank's stack while one
 * simulated rank's ops are added; it borrows the FsTrain and the rank,
 * and owns its arrays (fs_train_dp_init / fs_train_dp_clear for the
 * data-parallel part).
 */
#pragma once

#include "workload/executor.h"

G_BEGIN_DECLS

/* A simulated rank: one (stage, tp index) of replica dp = 0, cp = 0. */
typedef struct {
  guint rank, stage, tpi;
  int gpu;
  guint s_compute, s_pp, s_dp, s_fsdp, s_aux;
  guint s_ep;                /* paired passes' all-to-alls in flight (overlap.ep_comm), or G_MAXUINT */
  guint dp_comm;             /* gradient-reduction communicator (dp × cp group), or G_MAXUINT */
  guint dp_size;
  guint *dp_nodes;           /* the dp × cp group's GPU nodes */
  /* Expert gradients (ep > 1): the expert-data-parallel group, dp × cp / ep
   * ranks; the dp fields when ep = 1. */
  guint edp_comm, edp_size;
  guint *edp_nodes;          /* owned only when ep > 1 */
  guint emb_coll;            /* tied-embedding all-reduce (first and last stage), or G_MAXUINT */
  GArray *comm_ops;          /* guint32: this rank's communication ops and incoming transfers */
  double model_flops;
  guint host;                /* its host thread in the op graph (with a host model) */
} FsSimRank;

/* What the host model needs of a compute op's kernels (host-sched.c). */
typedef struct {
  guint kernels;             /* how many kernels the op stands for (0: not recorded) */
  FsTime sum;                /* their summed GPU time */
  FsTime tail;               /* max over kernels j of (j + 1)·h + the GPU time of kernels j…n−1,
                                h the eager per-op host time (0 without a host model) */
} FsHostOp;

/* Per-layer costs on one rank. */
typedef struct {
  FsTime fwd, bwd, recomp;
  double mf_fwd, mf_bwd;
  FsTime tp_fwd, tp_bwd;     /* measured TP collectives of the pass */
  FsTime ep_fwd, ep_bwd;
  FsTime ep_fwd_paired, ep_bwd_paired; /* the EP op of a pass paired with another micro-batch's
                                          opposite pass (overlap.ep_comm): exposed + loss */
  FsTime cp_fwd, cp_bwd;
  FsTime cp_exp_fwd, cp_exp_bwd; /* exposed ring-attention exchange (modelled overlap) */
  FsHostOp h_fwd, h_bwd, h_recomp; /* their kernels, for the host model */
  double params;             /* parameters held by the rank */
  double eparams;            /* of which expert parameters reduced over the edp group (ep > 1) */
} FsLayerCost;

struct FsTrain {
  const FsTopo *topo;
  const FsWorkload *w;
  const FsEfficiency *eff;
  const FsNcclParams *nccl;
  FsTrainOptions opt;
  const FsTrainEngines *engines;
  /* The world the op graph runs on (env: its engines with this step's
   * NCCL constants, tuner inputs and execution model) and its handle. */
  FsOpEnv env;
  gpointer world;
  /* A private world for measuring collectives alone, made on first use
   * (alone_world NULL until then). */
  FsOpEnv alone;
  gpointer alone_world;
  FsOpGraph *g;
  GArray *ranks;             /* FsSimRank */
  FsCollMemo *memo;          /* collective times measured alone (maybe borrowed) */
  FsCollMemo *own_memo;      /* the private one, when none was given */
  gboolean dp_alone;         /* DP collectives as measured DELAY ops */
  guint nj;                  /* TP ranks simulated per stage */
  guint p, v, m;
  uint64_t emb_bytes;        /* tied-embedding gradient all-reduced per TP rank, or 0 */
  GError *error;             /* the first error met while building ops */
  FsTrainResult res;
  /* The host model (host-sched.c): the launch mode in force (OFF when the
   * workload says off or the curves have no host costs for the GPU) and
   * its figures; per compute op, its kernels (FsHostOp by op id). */
  FsLaunchMode launch;
  FsTime h_op, h_graph, h_gap;
  GArray *hops;
};

/* The data-parallel schedule of one rank (dp-sched.c). */
typedef struct {
  GArray *buckets;           /* gradient buckets in backward order (dp-sched.c's Bucket) */
  guint next_bucket;         /* the first bucket not yet closed by the backward */
  GArray *ops;               /* guint32: the gradient collectives the optimizer waits for */
  GArray *pending;           /* guint: buckets to launch after the backward (no overlap) */
  guint32 *bucket_ag;        /* per bucket: its param all-gather (ZeRO-1/2 overlap), or NULL */
  guint *item_bucket;        /* per (item, dense|expert): the bucket holding it, or G_MAXUINT */
  guint32 fsdp_consumers[2]; /* ZeRO-3 prefetch window */
  guint fsdp_k;
} FsDpSched;

/* The state of building one simulated rank's ops. */
typedef struct {
  FsTrain *t;
  FsSimRank *r;
  const FsGpuModel *gpu;
  FsLayerCost *lc;           /* per layer of the model (only this stage's filled) */
  FsTime emb_fwd, emb_bwd, head_fwd, head_bwd;
  double emb_mf[2], head_mf[2];
  FsTime emb_tp, head_tp_fwd, head_tp_bwd;
  FsHostOp h_emb[2], h_head[2];  /* forward, backward */
  double emb_params, head_params;
  guint32 *last_b_mb;        /* per chunk: micro-batch of its last backward */
  GArray *bwd_kernels;       /* FsKernel: one backward layer's, what DP overlaps (owned) */
  double grad_bytes;         /* bytes per gradient element */
  FsDpSched dp;
} FsRankBuilder;

/* ---- executor.c ---- */

/* Adds an op of the given kind on stream; returns its id. */
guint32 fs_train_add_op(FsOpGraph *g, guint stream, FsOpKind kind, FsOpCat cat, const char *name,
                        FsTime dur, int mb, int layer, double mf, const guint32 *deps, guint n);

/* The time of op on the group (nodes) measured alone, once per (op, size,
 * GPU list) and flow model, or once per congruence class of the group
 * where FsTrainOptions.coll_classes allows; 0 for fewer than two GPUs.
 * Errors: routing and tuning errors (FS_NET, FS_COLL). */
gboolean fs_train_measure(FsTrain *t, const guint *nodes, guint n, FsCollOp op, uint64_t unit,
                          FsTime *out, GError **error);

/* ---- layer-cost.c ---- */

/* Fills *c with the costs of layer l on a rank whose GPU is gpu and whose
 * TP, EP and CP groups are tp_nodes, ep_nodes and cp_nodes (ntp, nep, ncp
 * GPUs): its forward, backward and recompute passes (with their model
 * FLOPs and host views) and the collectives each pass launches, timed alone
 * through fs_train_measure.  Errors: fs_train_measure's. */
gboolean fs_train_layer_cost(FsTrain *t, guint l, const FsGpuModel *gpu, const guint *tp_nodes,
                             guint ntp, const guint *ep_nodes, guint nep, const guint *cp_nodes,
                             guint ncp, FsLayerCost *c, GError **error);

/* The time a compute span of `compute` loses to `comm` running beside it
 * when it keeps the fraction `rate` of its speed meanwhile:
 * min(comm·(1 − rate), compute·(1/rate − 1)); 0 for rate >= 1. */
FsTime fs_train_overlap_loss(FsTime compute, FsTime comm, double rate);

/* The compute rate left beside a communication of kind (FS_EFF_OVERLAP_*)
 * moving `bytes` on gpu, from the overlap curves; 1 unless the workload's
 * overlap cost is `modelled`. */
double fs_train_overlap_rate(const FsTrain *t, FsEffKind kind, const FsGpuModel *gpu,
                             double bytes);

/* The HBM bandwidth (bytes/s) a communication takes on each GPU of its
 * group while it runs: op over n GPUs with `unit` bytes a rank (as
 * coll/coll.h's FsCollSizes.unit_bytes), lasting dur, the bytes a GPU
 * receives times models/compute `comm_hbm` (point_to_point when p2p, else
 * collective).  0 unless the overlap cost is `modelled` and the curves
 * have `comm_hbm`. */
double fs_train_comm_hbm(const FsTrain *t, FsCollOp op, gboolean p2p, uint64_t unit, guint n,
                         FsTime dur);

/* The fraction of its speed a span of kernels k (n) keeps on gpu beside a
 * communication that leaves it sm_rate of the SMs and takes hbm_bps of
 * HBM: their summed time alone over their summed time shared
 * (compute/kernel.h fs_kernel_time_shared); sm_rate with no kernels. */
double fs_train_shared_rate(const FsTrain *t, const FsKernel *k, guint n, const FsGpuModel *gpu,
                            double sm_rate, double hbm_bps);

/* The layers [*lo, *hi) of virtual stage vstage. */
void fs_train_layer_range(const FsTrain *t, guint vstage, guint *lo, guint *hi);

/* The number of layers of the model. */
guint fs_train_n_layers(const FsTrain *t);

/* ---- host-sched.c ---- */

/* Chooses the launch mode and its figures (t->launch, h_op, h_graph,
 * h_gap) from the workload and the host costs of gpu's architecture in
 * t->eff (compute/efficiency.h); OFF without curves or without an entry. */
void fs_train_host_init(FsTrain *t, const FsGpuModel *gpu);

/* The summed time of kernels k (an array of FsKernel, unreferenced here)
 * on gpu: each kernel's time from the kernel model, its launch latency
 * replaced by the host model's GPU gap when a host model runs; their
 * model FLOPs in *mf and the host model's view in *ho (either may be
 * NULL). */
FsTime fs_train_kernels_time(const FsTrain *t, GArray *k, const FsGpuModel *gpu, double *mf,
                             FsHostOp *ho);

/* Records that compute op `op` runs the kernels ho describes. */
void fs_train_host_note(FsTrain *t, guint32 op, const FsHostOp *ho);

/* Gives the ops of rank r from op `first` on (its whole step, in program
 * order) to its host thread, each with its issue cost: see
 * workloads/README.md, "Host (framework) overhead".  A no-op when the
 * launch mode is OFF. */
void fs_train_host_rank(FsTrain *t, FsSimRank *r, guint32 first);

/* ---- dp-sched.c: items are layers (>= 0), -1 the embedding, -2 the head ---- */

/* Allocates b->dp (empty); fs_train_dp_clear frees it. */
void fs_train_dp_init(FsRankBuilder *b);
void fs_train_dp_clear(FsRankBuilder *b);

/* Splits the rank's chunks into gradient buckets in backward order
 * (b->lc, emb_params, head_params and grad_bytes must be set), and with
 * ZeRO-1/2 and param-gather overlap adds each bucket's parameter
 * all-gather (the first forward of an item waits for its buckets). */
void fs_train_dp_plan(FsRankBuilder *b);

/* ZeRO-3 (dp > 1): gathers layer l's parameters at most two layers ahead
 * of the compute that consumes them; returns the gather op, else
 * FS_OP_NONE. */
guint32 fs_train_dp_layer_gather(FsRankBuilder *b, guint l);

/* ZeRO-3 (dp > 1): the compute op that consumes the last gather; a no-op
 * otherwise. */
void fs_train_dp_layer_consumed(FsRankBuilder *b, guint32 op);

/* ZeRO-1/2 with param-gather overlap: op (the first forward of item)
 * waits for the all-gathers of the buckets holding its parameters. */
void fs_train_dp_wait_params(FsRankBuilder *b, guint32 op, int item);

/* The last micro-batch's backward of item (in chunk) finished at op: its
 * gradients are reduced — ZeRO-3 reduce-scatters a layer's gradients now;
 * otherwise the buckets the item closes go out (now with overlap, else
 * after the backward). */
void fs_train_dp_grads_ready(FsRankBuilder *b, guint chunk, int item, guint32 op);

/* After the backward (op end_bwd): the buckets held back (no overlap) and
 * the tied-embedding all-reduce. */
void fs_train_dp_after_backward(FsRankBuilder *b, guint32 end_bwd);

/* The parameters the rank holds (all its layers', embedding's, head's). */
double fs_train_dp_local(const FsRankBuilder *b);

/* The parameters of the rank's optimizer shard (all of them below ZeRO-1). */
double fs_train_dp_shard(const FsRankBuilder *b);

/* ZeRO-1/2 without param-gather overlap: the buckets' parameter
 * all-gathers after the optimizer step (op opt). */
void fs_train_dp_after_optimizer(FsRankBuilder *b, guint32 opt);

G_END_DECLS
