/* layer-cost.c — what one layer's passes cost a rank of a training step
 * (executor-private.h, FsLayerCost): its kernels through the compute model
 * and the host model's view of them, the tensor-parallel overlap's split
 * GEMMs and SM share, the backward collectives launched beside the
 * column-parallel GEMMs, and the TP, EP and CP collectives timed alone;
 * workloads/README.md, "The compute and overlap effects".  The op graph that
 * uses these costs is built in executor.c. */
#include "workload/executor-private.h"

#include <math.h>
#include <string.h>

#include "compute/kernel.h"
#include "compute/transformer.h"

/* The time a compute span of `compute` loses to a communication of
 * `comm` running beside it on the same GPU, when the compute keeps the
 * fraction `rate` of its speed meanwhile: the communication's duration at
 * the reduced rate, or all of the compute's if it ends first. */
FsTime fs_train_overlap_loss(FsTime compute, FsTime comm, double rate)
{
  if (rate >= 1 || rate <= 0 || comm <= 0 || compute <= 0)
    return 0;
  double a = (double)comm * (1 - rate), b = (double)compute * (1 / rate - 1);
  return (FsTime)llround(MIN(a, b));
}

/* The compute rate left beside a communication of kind (an overlap-*
 * curve) of `bytes` on gpu: 1 when the cost is not modelled. */
double fs_train_overlap_rate(const FsTrain *t, FsEffKind kind, const FsGpuModel *gpu,
                             double bytes)
{
  if (t->w->overlap_cost != FS_OVERLAP_COST_MODELLED || t->eff == NULL)
    return 1;
  return fs_efficiency_lookup(t->eff, kind, gpu->arch, t->w->dtype, FALSE, MAX(bytes, 1), NULL);
}

/* See executor-private.h.  The bytes a GPU receives: 2(n − 1)/n of the
 * buffer in an all-reduce, n − 1 blocks in the block collectives. */
double fs_train_comm_hbm(const FsTrain *t, FsCollOp op, gboolean p2p, uint64_t unit, guint n,
                         FsTime dur)
{
  if (t->w->overlap_cost != FS_OVERLAP_COST_MODELLED || t->eff == NULL || n < 2 || dur <= 0)
    return 0;
  const FsEffCommHbm *h = fs_efficiency_comm_hbm(t->eff);
  if (h == NULL)
    return 0;
  double recv = fs_coll_unit_is_block(op) ? (double)unit * (n - 1)
                                          : 2.0 * (double)unit * (n - 1) / n;
  return (p2p ? h->point_to_point : h->collective) * recv / fs_time_to_s(dur);
}

/* See executor-private.h. */
double fs_train_shared_rate(const FsTrain *t, const FsKernel *k, guint n, const FsGpuModel *gpu,
                            double sm_rate, double hbm_bps)
{
  if (sm_rate >= 1 && hbm_bps <= 0)
    return 1;
  double alone = 0, shared = 0;
  for (guint i = 0; i < n; i++) {
    alone += (double)fs_kernel_time(&k[i], gpu, t->eff, NULL);
    shared += (double)fs_kernel_time_shared(&k[i], gpu, t->eff, sm_rate, hbm_bps);
  }
  /* No kernels: the SM share alone. */
  return shared > 0 ? alone / shared : sm_rate;
}

/* The kernels of k whose name is in names (all of k when none is), into a
 * new array (caller frees). */
static GArray *kernels_named(const GArray *k, const char *const *names, guint n)
{
  GArray *out = g_array_new(FALSE, FALSE, sizeof(FsKernel));
  for (guint i = 0; i < k->len; i++) {
    const FsKernel *kn = &g_array_index(k, FsKernel, i);
    for (guint j = 0; j < n; j++)
      if (strcmp(kn->name, names[j]) == 0) {
        g_array_append_val(out, *kn);
        break;
      }
  }
  if (out->len == 0)
    g_array_append_vals(out, k->data, k->len);
  return out;
}

/* The rate a compute span keeps beside a communication (kind's SM share
 * at `bytes`, hbm_bps of HBM), over the kernels of k named in names (all
 * of k when none is). */
static double beside_rate(const FsTrain *t, const GArray *k, const char *const *names, guint n,
                          const FsGpuModel *gpu, FsEffKind kind, double bytes, double hbm_bps)
{
  double y = fs_train_overlap_rate(t, kind, gpu, bytes);
  if (y >= 1 && hbm_bps <= 0)
    return 1;
  g_autoptr(GArray) sel = kernels_named(k, names, n);
  return fs_train_shared_rate(t, (const FsKernel *)sel->data, sel->len, gpu, y, hbm_bps);
}

/* The GEMMs tensor-parallel overlap runs beside its collectives: the
 * forward GEMMs next to an all-gather or a reduce-scatter and the dgrads of
 * the row-parallel ones (NeMo's qkv/proj/fc1/fc2 fprop and proj/fc2 dgrad). */
static const char *const tp_split_names[] = {
  "qkv", "out_proj", "mlp_fc1", "mlp_fc2", "out_proj.dgrad", "mlp_fc2.dgrad",
};

/* Tensor-parallel overlap (Transformer Engine userbuffers, ring exchange)
 * runs each overlapped GEMM (tp_split_names) as one chunk per TP rank, each
 * a GEMM of m/tp rows: the time this adds to kernels k over running them
 * whole. */
static FsTime tp_split_extra(const FsTrain *t, const GArray *k, const FsGpuModel *gpu, guint parts)
{
  FsTime extra = 0;
  for (guint i = 0; i < k->len; i++) {
    const FsKernel *kn = &g_array_index(k, FsKernel, i);
    if (kn->cls != FS_KERNEL_GEMM || kn->m < parts)
      continue;
    gboolean hit = FALSE;
    for (guint j = 0; j < G_N_ELEMENTS(tp_split_names) && !hit; j++)
      hit = strcmp(kn->name, tp_split_names[j]) == 0;
    if (!hit)
      continue;
    FsKernel part = fs_kernel_gemm(kn->name, kn->pass, kn->dtype, kn->m / parts, kn->n, kn->k,
                                   kn->batch);
    FsTime whole = fs_kernel_time(kn, gpu, t->eff, NULL);
    FsTime chunks = parts * fs_kernel_time(&part, gpu, t->eff, NULL);
    if (chunks > whole)
      extra += chunks - whole;
  }
  return extra;
}

/* The time of the first kernel of k named name (0 when none) and, in
 * *count, how many kernels bear that name. */
static FsTime named_kernel_time(const FsTrain *t, const GArray *k, const FsGpuModel *gpu,
                                const char *name, guint *count)
{
  FsTime first = 0;
  *count = 0;
  for (guint i = 0; i < k->len; i++) {
    const FsKernel *kn = &g_array_index(k, FsKernel, i);
    if (strcmp(kn->name, name) != 0)
      continue;
    if ((*count)++ == 0)
      first = fs_kernel_time(kn, gpu, t->eff, NULL);
  }
  return first;
}

/* The summed time of the kernels of k whose name is in names. */
static FsTime kernels_named_time(const FsTrain *t, const GArray *k, const FsGpuModel *gpu,
                                 const char *const *names, guint n)
{
  FsTime sum = 0;
  for (guint i = 0; i < k->len; i++) {
    const FsKernel *kn = &g_array_index(k, FsKernel, i);
    for (guint j = 0; j < n; j++)
      if (strcmp(kn->name, names[j]) == 0) {
        sum += fs_kernel_time(kn, gpu, t->eff, NULL);
        break;
      }
  }
  return sum;
}

/* The backward GEMMs of the column-parallel linears (QKV and the MLP's
 * fc1, SwiGLU's gate and up in one): their dgrads and their wgrads. */
static void column_parallel_bwd(const FsTrain *t, const GArray *k, const FsGpuModel *gpu,
                                FsTime *dgrad, FsTime *wgrad)
{
  static const char *const dg[] = { "qkv.dgrad", "mlp_fc1.dgrad" };
  static const char *const wg[] = { "qkv.wgrad", "mlp_fc1.wgrad" };
  *dgrad = kernels_named_time(t, k, gpu, dg, G_N_ELEMENTS(dg));
  *wgrad = kernels_named_time(t, k, gpu, wg, G_N_ELEMENTS(wg));
}

/* What a collective of `comm` launched asynchronously beside a compute
 * span of `compute` adds to the pass: the part of it that outlasts the
 * compute, and what the compute loses to its SMs (at rate y). */
static FsTime async_beside(FsTime compute, FsTime comm, double y)
{
  return (comm > compute ? comm - compute : 0) + fs_train_overlap_loss(compute, comm, y);
}

/* Ring attention: the exchange of each K/V block runs behind one step's
 * attention kernel; what a step's share of the exchange (comm / steps)
 * takes beyond the step's kernel is exposed, once per step. */
static FsTime cp_exposed(FsTime step, guint steps, FsTime comm)
{
  if (steps == 0 || comm <= 0)
    return 0;
  FsTime share = comm / steps;
  return share > step ? (share - step) * steps : 0;
}

/* Costs of layer l on the rank with GPU gpu and TP group tp_nodes
 * (executor-private.h). */
gboolean fs_train_layer_cost(FsTrain *t, guint l, const FsGpuModel *gpu, const guint *tp_nodes,
                             guint ntp, const guint *ep_nodes, guint nep, const guint *cp_nodes,
                             guint ncp, FsLayerCost *c, GError **error)
{
  const FsWorkload *w = t->w;
  memset(c, 0, sizeof *c);
  if (w->form == FS_MODEL_FORM_LAYERS) {
    c->fwd = fs_train_kernels_time(t, fs_workload_layer_kernels(w, l, FS_PASS_FORWARD), gpu,
                                   &c->mf_fwd, &c->h_fwd);
    c->bwd = fs_train_kernels_time(t, fs_workload_layer_kernels(w, l, FS_PASS_BACKWARD), gpu,
                                   &c->mf_bwd, &c->h_bwd);
    c->params = w->layers[l].params;
    return TRUE;
  }
  FsTransformerRun run;
  fs_workload_transformer_run(w, &run);
  const FsTransformerConfig *cfg = &w->model;
  gboolean tp_split = w->overlap_tp_comm && ntp > 1 && w->overlap_cost == FS_OVERLAP_COST_MODELLED;
  FsTime cp_step[2];
  guint cp_steps[2];
  FsTime col_dgrad = 0, col_wgrad = 0;
  /* Each pass's kernels, kept for the rates of what overlaps them. */
  g_autoptr(GArray) kf = NULL;
  g_autoptr(GArray) kb = NULL;
  for (guint pass = 0; pass < 2; pass++) {
    GArray *k = fs_transformer_layer_kernels(cfg, &run, l, pass ? FS_PASS_BACKWARD : FS_PASS_FORWARD);
    if (pass)
      kb = g_array_ref(k);
    else
      kf = g_array_ref(k);
    FsTime extra = tp_split ? tp_split_extra(t, k, gpu, ntp) : 0;
    if (pass)
      column_parallel_bwd(t, k, gpu, &col_dgrad, &col_wgrad);
    cp_step[pass] = named_kernel_time(t, k, gpu, pass ? "attention.cp_step.bwd" : "attention.cp_step",
                                      &cp_steps[pass]);
    if (pass)
      c->bwd = fs_train_kernels_time(t, k, gpu, &c->mf_bwd, &c->h_bwd) + extra;
    else
      c->fwd = fs_train_kernels_time(t, k, gpu, &c->mf_fwd, &c->h_fwd) + extra;
  }
  c->recomp = fs_train_kernels_time(
    t, fs_transformer_layer_kernels(cfg, &run, l, FS_PASS_RECOMPUTE), gpu, NULL, &c->h_recomp);
  FsTransformerParams pp;
  fs_transformer_params(cfg, &pp);
  gboolean moe = fs_transformer_layer_is_moe(cfg, l);
  c->params = (pp.attention + pp.norms) / w->tp + (moe ? pp.moe / ((double)w->tp * w->ep)
                                                       : pp.mlp / w->tp);
  /* Megatron-Core keeps expert parameters in their own gradient buffer,
   * reduced over the expert-data-parallel group (the router stays dense). */
  if (moe && w->ep > 1)
    c->eparams = (pp.moe - (double)cfg->hidden * cfg->experts) / ((double)w->tp * w->ep);
  /* TP: per layer two collectives in each pass (after attention and after
   * the MLP): all-reduce, or with sequence parallelism an all-gather before
   * and a reduce-scatter after each block (Korthikanti et al. 2022, §4.2.2). */
  uint64_t act = (uint64_t)((double)w->micro_batch * cfg->seq_len / w->cp * cfg->hidden * 2.0);
  if (ntp > 1) {
    FsTime ar = 0, ag = 0, rs = 0, ag_in = 0;
    if (w->sequence_parallel) {
      if (!fs_train_measure(t, tp_nodes, ntp, FS_COLL_ALL_GATHER, act / ntp, &ag, error) ||
          !fs_train_measure(t, tp_nodes, ntp, FS_COLL_REDUCE_SCATTER, act / ntp, &rs, error))
        return FALSE;
      /* The gathers of the two norm outputs (the inputs of QKV and fc1).
       * In FP8 Transformer Engine's LayerNormLinear gathers them quantized,
       * 1 byte an element (`gather_along_first_dim(ln_out, tp_group,
       * quantizer=input_quantizer)` in `_LayerNormLinear.forward` and
       * again in its backward, transformer_engine/pytorch/module/
       * layernorm_linear.py @3ec87875); an MoE layer's MLP input goes to
       * the token dispatcher in 16 bits. */
      ag_in = 2 * ag;
      if (w->dtype == FS_DTYPE_FP8) {
        FsTime ag8;
        if (!fs_train_measure(t, tp_nodes, ntp, FS_COLL_ALL_GATHER, act / 2 / ntp, &ag8, error))
          return FALSE;
        ag_in = moe ? ag + ag8 : 2 * ag8;
      }
      c->tp_fwd = ag_in + 2 * rs;
      c->tp_bwd = 2 * (ag + rs);
    } else {
      if (!fs_train_measure(t, tp_nodes, ntp, FS_COLL_ALL_REDUCE, act, &ar, error))
        return FALSE;
      c->tp_fwd = c->tp_bwd = 2 * ar;
    }
    /* The HBM a TP collective takes: at the rate of one gather (or
     * all-reduce) of the pass, each a ring over the TP group. */
    double tp_hbm = w->sequence_parallel
                      ? fs_train_comm_hbm(t, FS_COLL_ALL_GATHER, FALSE, act / ntp, ntp, ag)
                      : fs_train_comm_hbm(t, FS_COLL_ALL_REDUCE, FALSE, act, ntp, ar);
    /* With sequence parallelism and without TP overlap, Megatron's
     * column-parallel linears launch their backward collectives
     * asynchronously (LinearWithGradAccumulationAndAsyncCommunication.
     * backward): the re-gather of the input beside the dgrad GEMM and the
     * reduce-scatter of the input gradient beside the wgrad GEMM, so that
     * only the row-parallel linears' gathers of the output gradient stay
     * on the compute stream.  The async collectives are NCCL kernels: the
     * compute keeps the overlap-dp rate (one CTA per channel) while they
     * run, and what outlasts the GEMM is exposed.  Without sequence
     * parallelism the backward all-reduces stay on the stream (the
     * Megatron of the 2020-21 runs reduced synchronously);
     * `overlap.cost: exposed` keeps every backward collective on it. */
    if (w->sequence_parallel && !w->overlap_tp_comm && w->overlap_cost != FS_OVERLAP_COST_EXPOSED) {
      static const char *const col[] = { "qkv.dgrad", "mlp_fc1.dgrad", "qkv.wgrad", "mlp_fc1.wgrad" };
      double y = beside_rate(t, kb, col, G_N_ELEMENTS(col), gpu, FS_EFF_OVERLAP_DP, (double)act,
                             tp_hbm);
      c->tp_bwd = 2 * ag + async_beside(col_dgrad, ag_in, y) + async_beside(col_wgrad, 2 * rs, y);
    }
    if (w->recompute == FS_RECOMPUTE_FULL)
      c->tp_bwd += c->tp_fwd;
    if (w->overlap_tp_comm) {
      /* Userbuffers overlap each collective with the GEMMs next to it. */
      guint ns = G_N_ELEMENTS(tp_split_names);
      double yf = beside_rate(t, kf, tp_split_names, ns, gpu, FS_EFF_OVERLAP_TP, (double)act, tp_hbm);
      double yb = beside_rate(t, kb, tp_split_names, ns, gpu, FS_EFF_OVERLAP_TP, (double)act, tp_hbm);
      c->fwd += fs_train_overlap_loss(c->fwd, c->tp_fwd, yf);
      c->bwd += fs_train_overlap_loss(c->bwd, c->tp_bwd, yb);
    }
  }
  /* EP: dispatch and combine all-to-alls of the routed tokens (top_k copies)
   * in each pass. */
  if (moe && nep > 1) {
    double tokens = (double)w->micro_batch * cfg->seq_len / w->cp / (w->sequence_parallel ? w->tp : 1);
    uint64_t block = (uint64_t)(tokens * MAX(cfg->top_k, 1u) * cfg->hidden * 2.0 / nep);
    FsTime a2a;
    if (!fs_train_measure(t, ep_nodes, nep, FS_COLL_ALLTOALL, block, &a2a, error))
      return FALSE;
    c->ep_fwd = c->ep_bwd = 2 * a2a;
    /* Megatron-LM's combined 1F1B (--overlap-moe-expert-parallel-comm,
     * megatron/core/pipeline_parallel/combined_1f1b.py): in a forward
     * paired with another micro-batch's backward, layer by layer, "EP A2A
     * in forward step is hidden by the attention/mlp computation in the
     * backward step, and vice versa".  A paired pass's all-to-alls run
     * beside the other pass's compute of the layer: what outlasts it is
     * exposed, and that compute loses the NCCL kernel's SMs and HBM. */
    if (w->overlap_ep_comm && w->overlap_cost != FS_OVERLAP_COST_EXPOSED) {
      double hbm = fs_train_comm_hbm(t, FS_COLL_ALLTOALL, TRUE, block, nep, a2a);
      double yb = beside_rate(t, kb, NULL, 0, gpu, FS_EFF_OVERLAP_EP, (double)block, hbm);
      double yf = beside_rate(t, kf, NULL, 0, gpu, FS_EFF_OVERLAP_EP, (double)block, hbm);
      c->ep_fwd_paired = async_beside(c->bwd, c->ep_fwd, yb);
      c->ep_bwd_paired = async_beside(c->fwd, c->ep_bwd, yf);
    } else {
      c->ep_fwd_paired = c->ep_fwd;
      c->ep_bwd_paired = c->ep_bwd;
    }
  }
  /* CP: the ring exchange of K and V (an all-gather of the rank's KV
   * block) in the forward, and of their gradients (a reduce-scatter) in the
   * backward. */
  if (ncp > 1) {
    /* kv_heads 0 means one per head (no GQA), as the compute model reads it. */
    guint kvh = cfg->kv_heads ? cfg->kv_heads : cfg->heads;
    uint64_t kv = (uint64_t)(2.0 * w->micro_batch * cfg->seq_len / w->cp * kvh / w->tp *
                             fs_transformer_head_dim(cfg) * 2.0);
    if (!fs_train_measure(t, cp_nodes, ncp, FS_COLL_ALL_GATHER, kv, &c->cp_fwd, error) ||
        !fs_train_measure(t, cp_nodes, ncp, FS_COLL_REDUCE_SCATTER, kv, &c->cp_bwd, error))
      return FALSE;
    /* Ring attention's exchange is NCCL send/recv beside the step kernels. */
    static const char *const stf[] = { "attention.cp_step" }, *const stb[] = { "attention.cp_step.bwd" };
    double yf = beside_rate(t, kf, stf, 1, gpu, FS_EFF_OVERLAP_CP, (double)kv,
                            fs_train_comm_hbm(t, FS_COLL_ALL_GATHER, TRUE, kv, ncp, c->cp_fwd));
    double yb = beside_rate(t, kb, stb, 1, gpu, FS_EFF_OVERLAP_CP, (double)kv,
                            fs_train_comm_hbm(t, FS_COLL_REDUCE_SCATTER, TRUE, kv, ncp, c->cp_bwd));
    c->fwd += fs_train_overlap_loss(c->fwd, c->cp_fwd, yf);
    c->bwd += fs_train_overlap_loss(c->bwd, c->cp_bwd, yb);
    /* What outlasts the step kernels is exposed exchange: its own op on the
     * compute stream (executor.c), counted in the `cp` column. */
    if (w->overlap_cost == FS_OVERLAP_COST_MODELLED) {
      c->cp_exp_fwd = cp_exposed(cp_step[0], cp_steps[0], c->cp_fwd);
      c->cp_exp_bwd = cp_exposed(cp_step[1], cp_steps[1], c->cp_bwd);
    }
  }
  return TRUE;
}
