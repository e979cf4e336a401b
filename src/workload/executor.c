/* executor.c — builds and runs the op graph of one training step (see
 * executor.h): the simulated ranks and their streams, collectives timed
 * alone, the forward and backward passes in the schedule's order, the
 * pipeline links, and the result.  What each layer's passes cost is in
 * layer-cost.c, the data-parallel part of each rank's schedule (gradient
 * buckets, ZeRO gathers, the optimizer's shard) in dp-sched.c, the host
 * side in host-sched.c. */
#include "workload/executor-private.h"

#include <string.h>

#include "compute/kernel.h"
#include "compute/transformer.h"
#include "util/error.h"
#include "util/names.h"
#include "workload/placement.h"
#include "workload/schedule.h"

void fs_train_options_init(FsTrainOptions *opt)
{
  opt->net_model = FS_NET_MAXMIN;
  opt->full_tp_limit = 256;
  opt->dp_isolated = FALSE;
  opt->dp_flows = FALSE;
  opt->memo = NULL;
  opt->coll_classes = FS_COLL_CLASSES_AUTO;
  opt->prefs = NULL;
  opt->exec = FS_COLL_EXEC_AUTO;
  opt->dp_streams = TRUE;
}

static const char *const class_names[] = { FS_COLL_CLASSES(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE(FsCollClasses, fs_coll_classes, class_names, FS_COLL_CLASSES_N,
                fs_names_index_nocase)

static int gpu_node(const FsTrain *t, guint rank)
{
  guint n;
  const guint *gpus = fs_topo_gpus(t->topo, &n);
  return (int)gpus[fs_workload_gpu_of_rank(t->w, rank)];
}

/* The GPU nodes of rank's group along dim (caller frees); count in *n. */
static guint *group_nodes(const FsTrain *t, FsParallelDim dim, guint rank, guint *n)
{
  *n = fs_workload_group_size(t->w, dim);
  guint *r = g_new(guint, *n);
  fs_workload_group(t->w, dim, rank, r);
  for (guint i = 0; i < *n; i++)
    r[i] = (guint)gpu_node(t, r[i]);
  return r;
}

/* The congruence class of key's group (collclass.h), computed once per
 * group and memo (shared by the steps of a sweep or a plan, on any
 * thread). */
static gboolean group_class(FsTrain *t, const FsCollMemoKey *key, FsCollMemoClass *c,
                            GError **error)
{
  /* Analytic: only the paths' figures matter; max-min with classes "on":
   * which spine does not count (approximate); else the strict signature. */
  FsCollClassMode mode = t->opt.net_model == FS_NET_ANALYTIC ? FS_COLL_CLASS_PROFILE :
                         t->opt.coll_classes == FS_COLL_CLASSES_ON ? FS_COLL_CLASS_LOOSE :
                         FS_COLL_CLASS_STRICT;
  /* Claimed: a thread that needs the same group meanwhile waits for it. */
  if (fs_coll_memo_claim_class(t->memo, key, mode, c))
    return TRUE;
  if (!fs_coll_class_digest(t->alone.router, t->nccl, mode, key->nodes, key->n, c->digest,
                            &c->has_class, &c->approx, error)) {
    fs_coll_memo_release_class(t->memo, key, mode);
    return FALSE;
  }
  fs_coll_memo_put_class(t->memo, key, mode, c);
  return TRUE;
}

/* A world of the step's engines over its topology and flow model, with
 * the step's NCCL constants, tuner inputs and execution model; its handle
 * in *world. */
static void make_world(FsTrain *t, FsOpEnv *env, gpointer *world)
{
  *world = t->engines->world_new(t->topo, t->opt.net_model, env);
  env->nccl = t->nccl;
  env->prefs = t->opt.prefs;
  env->exec = t->opt.exec;
}

/* The private world collectives are measured alone on. */
static void ensure_private_net(FsTrain *t)
{
  if (t->alone_world == NULL)
    make_world(t, &t->alone, &t->alone_world);
}

/* The time of op on the group (nodes), measured alone once per (op, size,
 * GPU list) and flow model (the memo), or once per congruence class of
 * the group (collclass.h) where FsTrainOptions.coll_classes allows
 * (executor-private.h). */
gboolean fs_train_measure(FsTrain *t, const guint *nodes, guint n, FsCollOp op, uint64_t unit,
                          FsTime *out, GError **error)
{
  *out = 0;
  if (n < 2 || unit == 0)
    return TRUE;
  FsCollMemoKey key = { t->topo, t->nccl, t->opt.net_model, op, unit, nodes, n, NULL };
  if (fs_coll_memo_lookup(t->memo, &key, out))
    return TRUE;
  ensure_private_net(t);
  /* The key this thread measures under: the group's class where allowed,
   * else its exact GPU list (claimed: another thread waits for it). */
  FsCollMemoKey ckey = key;
  FsCollMemoClass gc; /* ckey may point into it */
  if (t->opt.coll_classes != FS_COLL_CLASSES_OFF) {
    if (!group_class(t, &key, &gc, error))
      return FALSE;
    /* Approximate classes only with "on" (collclass.h). */
    if (gc.has_class && (!gc.approx || t->opt.coll_classes == FS_COLL_CLASSES_ON))
      ckey.class_digest = gc.digest;
  }
  if (fs_coll_memo_claim(t->memo, &ckey, out)) {
    if (ckey.class_digest != NULL)
      fs_coll_memo_store(t->memo, &key, *out);
    return TRUE;
  }
  if (!fs_opgraph_measure_coll(&t->alone, nodes, n, op, unit, out, error)) {
    fs_coll_memo_release(t->memo, &ckey);
    return FALSE;
  }
  fs_coll_memo_store(t->memo, &ckey, *out);
  if (ckey.class_digest != NULL)
    fs_coll_memo_store(t->memo, &key, *out);
  return TRUE;
}

/* Activation bytes of one micro-batch at a stage boundary, per TP rank. */
static uint64_t boundary_bytes(const FsWorkload *w, guint last_layer)
{
  if (w->form == FS_MODEL_FORM_LAYERS)
    return (uint64_t)(w->layers[last_layer].activations * w->micro_batch);
  double b = (double)w->micro_batch * w->model.seq_len / w->cp * w->model.hidden * 2.0;
  if (w->sequence_parallel)
    b /= w->tp;
  return (uint64_t)b;
}

/* ---- building ------------------------------------------------------------ */

/* Cross-stage links, filled while building and connected at the end. */
typedef struct {
  guint32 *f_first, *f_out, *b_first, *b_out; /* [(j·V + g)·m + mb] */
} Links;

guint32 fs_train_add_op(FsOpGraph *g, guint stream, FsOpKind kind, FsOpCat cat, const char *name,
                        FsTime dur, int mb, int layer, double mf, const guint32 *deps, guint n)
{
  FsOp o = { .kind = kind, .cat = cat, .name = name, .dur = dur, .mb = mb, .layer = layer,
             .model_flops = mf };
  return fs_opgraph_add(g, stream, &o, deps, n);
}

/* A layer's pass on the compute stream, with its TP/EP/CP communication;
 * paired: the pass runs beside another micro-batch's opposite pass
 * (Megatron-LM's combined 1F1B, overlap.ep_comm), which hides its EP
 * all-to-alls. */
static guint32 layer_pass(FsRankBuilder *b, guint l, int mb, gboolean backward, gboolean paired)
{
  FsTrain *t = b->t;
  FsOpGraph *g = t->g;
  const FsLayerCost *c = &b->lc[l];
  FsSimRank *r = b->r;
  char name[64];
  guint32 ag = fs_train_dp_layer_gather(b, l);
  guint32 before = fs_opgraph_stream(g, r->s_compute)->last;
  guint32 op;
  if (backward && c->recomp > 0) {
    g_snprintf(name, sizeof name, "layer %u recompute", l);
    op = fs_train_add_op(g, r->s_compute, FS_OP_COMPUTE, FS_CAT_RECOMPUTE, name, c->recomp, mb,
                         (int)l, 0, &ag, 1);
    fs_train_host_note(t, op, &c->h_recomp);
    ag = FS_OP_NONE;
  }
  g_snprintf(name, sizeof name, backward ? "layer %u backward" : "layer %u forward", l);
  op = fs_train_add_op(g, r->s_compute, FS_OP_COMPUTE, backward ? FS_CAT_BACKWARD : FS_CAT_FORWARD,
                       name, backward ? c->bwd : c->fwd, mb, (int)l,
                       backward ? c->mf_bwd : c->mf_fwd, &ag, 1);
  fs_train_host_note(t, op, backward ? &c->h_bwd : &c->h_fwd);
  r->model_flops += backward ? c->mf_bwd : c->mf_fwd;
  if (!backward && mb == 0)
    fs_train_dp_wait_params(b, op, (int)l);
  fs_train_dp_layer_consumed(b, op);
  FsTime tp = backward ? c->tp_bwd : c->tp_fwd;
  FsTime ep = paired ? (backward ? c->ep_bwd_paired : c->ep_fwd_paired)
                     : (backward ? c->ep_bwd : c->ep_fwd);
  FsTime cp = backward ? c->cp_bwd : c->cp_fwd;
  FsTime cp_exp = backward ? c->cp_exp_bwd : c->cp_exp_fwd;
  guint32 joins[2] = { FS_OP_NONE, FS_OP_NONE };
  if (tp > 0) {
    g_snprintf(name, sizeof name, "layer %u tp", l);
    if (t->w->overlap_tp_comm && t->w->overlap_cost != FS_OVERLAP_COST_EXPOSED)
      /* overlapped with the layer's GEMMs */
      joins[0] = fs_train_add_op(g, r->s_aux, FS_OP_DELAY, FS_CAT_TP, name, tp, mb, (int)l, 0,
                                 &before, before == FS_OP_NONE ? 0 : 1);
    else
      op = fs_train_add_op(g, r->s_compute, FS_OP_DELAY, FS_CAT_TP, name, tp, mb, (int)l, 0, NULL, 0);
  }
  if (cp > 0) {
    g_snprintf(name, sizeof name, "layer %u cp", l);
    if (t->w->overlap_cost == FS_OVERLAP_COST_EXPOSED)
      op = fs_train_add_op(g, r->s_compute, FS_OP_DELAY, FS_CAT_CP, name, cp, mb, (int)l, 0, NULL, 0);
    else /* ring attention overlaps the exchange with the attention kernels */
      joins[1] = fs_train_add_op(g, r->s_aux, FS_OP_DELAY, FS_CAT_CP, name, cp, mb, (int)l, 0,
                                 &before, before == FS_OP_NONE ? 0 : 1);
    /* The exchange that outlasts the ring's step kernels: the compute
     * stream waits for it (modelled overlap; layer-cost.c). */
    if (cp_exp > 0) {
      g_snprintf(name, sizeof name, "layer %u cp exposed", l);
      op = fs_train_add_op(g, r->s_compute, FS_OP_DELAY, FS_CAT_CP, name, cp_exp, mb, (int)l, 0,
                           NULL, 0);
    }
  }
  for (guint i = 0; i < 2; i++)
    if (joins[i] != FS_OP_NONE)
      g_array_append_val(r->comm_ops, joins[i]);
  FsTime ep_all = backward ? c->ep_bwd : c->ep_fwd;
  if (paired && ep_all > 0 && r->s_ep != G_MAXUINT && t->w->overlap_cost != FS_OVERLAP_COST_EXPOSED) {
    /* The all-to-alls in flight beside the paired pass, for the trace and
     * `explain overlap`; nothing waits for this op: what they cost is the
     * op on the compute stream below. */
    g_snprintf(name, sizeof name, "layer %u ep all-to-all (paired)", l);
    guint32 x = fs_train_add_op(g, r->s_ep, FS_OP_DELAY, FS_CAT_EP, name, ep_all, mb, (int)l, 0,
                                &before, before == FS_OP_NONE ? 0 : 1);
    g_array_append_val(r->comm_ops, x);
  }
  if (ep > 0) {
    g_snprintf(name, sizeof name, "layer %u ep all-to-all", l);
    op = fs_train_add_op(g, r->s_compute, FS_OP_DELAY, FS_CAT_EP, name, ep, mb, (int)l, 0, joins, 2);
  } else if (joins[0] != FS_OP_NONE || joins[1] != FS_OP_NONE) {
    /* The next op waits for the overlapped communication too. */
    op = fs_train_add_op(g, r->s_compute, FS_OP_DELAY, FS_CAT_OTHER, "sync", 0, mb, (int)l, 0,
                         joins, 2);
  }
  return op;
}

guint fs_train_n_layers(const FsTrain *t)
{
  return t->w->form == FS_MODEL_FORM_LAYERS ? t->w->n_layers : t->w->model.layers;
}

void fs_train_layer_range(const FsTrain *t, guint vstage, guint *lo, guint *hi)
{
  guint count;
  fs_workload_chunk_layers(t->w, vstage, lo, &count);
  *hi = *lo + count;
}

static guint link_index(const FsTrain *t, guint j, guint g, guint mb)
{
  return (j * t->p * t->v + g) * t->m + mb;
}

static FsSimRank *rank_of(FsTrain *t, guint stage, guint j)
{
  return &g_array_index(t->ranks, FsSimRank, stage * t->nj + j);
}

/* Adds the forward pass of micro-batch mb through r's layers of virtual chunk `chunk` to the
 * compute stream: a zero-length "recv activations" marker (what the previous stage's send is
 * later made a dependency of), the embedding on the first virtual stage, the layers, the head
 * on the last, and the activation send to the next stage on the pp stream. Records the marker
 * and the pass's last op in lk for fs_train_new to link the stages. */
static void forward(FsRankBuilder *b, Links *lk, guint mb, guint chunk, gboolean paired)
{
  FsTrain *t = b->t;
  FsOpGraph *g = t->g;
  FsSimRank *r = b->r;
  guint vs = chunk * t->p + r->stage, nv = t->p * t->v;
  guint32 first = FS_OP_NONE, op;
  /* A zero-length marker starts the pass, so that the activation from the
   * previous stage can be waited for. */
  first = fs_train_add_op(g, r->s_compute, FS_OP_DELAY, FS_CAT_OTHER, "recv activations", 0,
                          (int)mb, -1, 0, NULL, 0);
  if (vs == 0 && t->w->form == FS_MODEL_FORM_TRANSFORMER) {
    op = fs_train_add_op(g, r->s_compute, FS_OP_COMPUTE, FS_CAT_FORWARD, "embedding forward",
                         b->emb_fwd, (int)mb, -1, b->emb_mf[0], NULL, 0);
    fs_train_host_note(t, op, &b->h_emb[0]);
    if (mb == 0)
      fs_train_dp_wait_params(b, op, -1);
    r->model_flops += b->emb_mf[0];
    if (b->emb_tp > 0)
      fs_train_add_op(g, r->s_compute, FS_OP_DELAY, FS_CAT_TP, "embedding tp", b->emb_tp, (int)mb,
                      -1, 0, NULL, 0);
  }
  guint lo, hi;
  fs_train_layer_range(t, vs, &lo, &hi);
  for (guint l = lo; l < hi; l++)
    op = layer_pass(b, l, (int)mb, FALSE, paired);
  if (vs == nv - 1 && t->w->form == FS_MODEL_FORM_TRANSFORMER) {
    if (b->head_tp_fwd > 0)
      fs_train_add_op(g, r->s_compute, FS_OP_DELAY, FS_CAT_TP, "head tp", b->head_tp_fwd, (int)mb,
                      -1, 0, NULL, 0);
    op = fs_train_add_op(g, r->s_compute, FS_OP_COMPUTE, FS_CAT_FORWARD, "head forward", b->head_fwd,
                         (int)mb, -1, b->head_mf[0], NULL, 0);
    fs_train_host_note(t, op, &b->h_head[0]);
    if (mb == 0)
      fs_train_dp_wait_params(b, op, -2);
    r->model_flops += b->head_mf[0];
  }
  op = fs_opgraph_stream(g, r->s_compute)->last;
  guint32 out = op;
  if (vs + 1 < nv) {
    FsSimRank *to = rank_of(t, (vs + 1) % t->p, r->tpi);
    FsOp x = { .kind = FS_OP_XFER, .cat = FS_CAT_PP, .name = "send activations",
               .bytes = boundary_bytes(t->w, hi > 0 ? hi - 1 : 0), .src = r->gpu, .dst = to->gpu,
               .mb = (int)mb, .layer = -1 };
    out = fs_opgraph_add(g, r->s_pp, &x, &op, 1);
    g_array_append_val(r->comm_ops, out);
    g_array_append_val(to->comm_ops, out);
  }
  lk->f_first[link_index(t, r->tpi, vs, mb)] = first;
  lk->f_out[link_index(t, r->tpi, vs, mb)] = out;
}

/* Adds the backward pass of micro-batch mb, the mirror of forward: a "recv gradients" marker,
 * the head on the last virtual stage, the layers in reverse, the embedding on the first, and
 * the gradient send to the previous stage. On the chunk's last backward micro-batch it tells
 * the data-parallel plan when each layer's gradients are ready (fs_train_dp_grads_ready). */
static void backward(FsRankBuilder *b, Links *lk, guint mb, guint chunk, gboolean paired)
{
  FsTrain *t = b->t;
  FsOpGraph *g = t->g;
  FsSimRank *r = b->r;
  guint vs = chunk * t->p + r->stage, nv = t->p * t->v;
  gboolean last_mb = b->last_b_mb[chunk] == mb;
  guint32 first = fs_train_add_op(g, r->s_compute, FS_OP_DELAY, FS_CAT_OTHER, "recv gradients", 0,
                                  (int)mb, -1, 0, NULL, 0);
  guint32 op = first;
  if (vs == nv - 1 && t->w->form == FS_MODEL_FORM_TRANSFORMER) {
    op = fs_train_add_op(g, r->s_compute, FS_OP_COMPUTE, FS_CAT_BACKWARD, "head backward",
                         b->head_bwd, (int)mb, -1, b->head_mf[1], NULL, 0);
    fs_train_host_note(t, op, &b->h_head[1]);
    r->model_flops += b->head_mf[1];
    if (b->head_tp_bwd > 0)
      op = fs_train_add_op(g, r->s_compute, FS_OP_DELAY, FS_CAT_TP, "head tp", b->head_tp_bwd,
                           (int)mb, -1, 0, NULL, 0);
    if (last_mb)
      fs_train_dp_grads_ready(b, chunk, -2, op);
  }
  guint lo, hi;
  fs_train_layer_range(t, vs, &lo, &hi);
  for (guint l = hi; l-- > lo;) {
    op = layer_pass(b, l, (int)mb, TRUE, paired);
    if (last_mb)
      fs_train_dp_grads_ready(b, chunk, (int)l, op);
  }
  if (vs == 0 && t->w->form == FS_MODEL_FORM_TRANSFORMER) {
    op = fs_train_add_op(g, r->s_compute, FS_OP_COMPUTE, FS_CAT_BACKWARD, "embedding backward",
                         b->emb_bwd, (int)mb, -1, b->emb_mf[1], NULL, 0);
    fs_train_host_note(t, op, &b->h_emb[1]);
    r->model_flops += b->emb_mf[1];
  }
  if (last_mb)
    fs_train_dp_grads_ready(b, chunk, -1, op);
  guint32 out = op;
  if (vs > 0) {
    FsSimRank *to = rank_of(t, (vs - 1) % t->p, r->tpi);
    FsOp x = { .kind = FS_OP_XFER, .cat = FS_CAT_PP, .name = "send gradients",
               .bytes = boundary_bytes(t->w, lo > 0 ? lo - 1 : 0), .src = r->gpu, .dst = to->gpu,
               .mb = (int)mb, .layer = -1 };
    out = fs_opgraph_add(g, r->s_pp, &x, &op, 1);
    g_array_append_val(r->comm_ops, out);
    g_array_append_val(to->comm_ops, out);
  }
  lk->b_first[link_index(t, r->tpi, vs, mb)] = first;
  lk->b_out[link_index(t, r->tpi, vs, mb)] = out;
}

/* Which passes of a rank's schedule order run paired (caller frees):
 * with overlap.ep_comm, Megatron-LM's combined 1F1B merges a forward and a
 * backward of different micro-batches that follow each other in the
 * order into one step, layer by layer (combined_1f1b.py: "the forward
 * pass of Transformer layers for one micro-batch runs in parallel with the
 * backward pass of another"; without a pipeline the first forward and the
 * last backward run alone).  Pairs are taken greedily from the start. */
static gboolean *pair_passes(const FsTrain *t, const GArray *order)
{
  gboolean *paired = g_new0(gboolean, MAX(order->len, 1u));
  if (!t->w->overlap_ep_comm || t->w->overlap_cost == FS_OVERLAP_COST_EXPOSED)
    return paired;
  for (guint i = 0; i + 1 < order->len; i++) {
    const FsSchedItem *a = &g_array_index(order, FsSchedItem, i);
    const FsSchedItem *c = &g_array_index(order, FsSchedItem, i + 1);
    if (paired[i] || a->backward == c->backward || (a->mb == c->mb && a->chunk == c->chunk))
      continue;
    paired[i] = paired[i + 1] = TRUE;
  }
  return paired;
}

/* The backward kernels of the rank's first layer: what its data-parallel
 * collectives overlap (caller frees). */
static GArray *first_backward_kernels(const FsTrain *t, guint stage)
{
  guint lo, hi;
  fs_train_layer_range(t, stage, &lo, &hi);
  /* A stage without layers (the embedding or loss alone): the model's first layer. */
  if (lo >= fs_train_n_layers(t))
    lo = 0;
  if (t->w->form == FS_MODEL_FORM_LAYERS)
    return fs_workload_layer_kernels(t->w, lo, FS_PASS_BACKWARD);
  FsTransformerRun run;
  fs_workload_transformer_run(t->w, &run);
  return fs_transformer_layer_kernels(&t->w->model, &run, lo, FS_PASS_BACKWARD);
}

/* Builds the whole step of one simulated rank: the cost of each of its layers (identical layers
 * share the first one's), of the embedding and head with their tensor-parallel collectives
 * (measured on the network), then its passes in the schedule's order, the data-parallel
 * collectives and the optimizer step after them. FALSE with the error of a failed cost or
 * measurement. */
static gboolean build_rank(FsTrain *t, Links *lk, FsSimRank *r, GError **error)
{
  const FsWorkload *w = t->w;
  FsOpGraph *g = t->g;
  const FsTopoNode *node = fs_topo_node(t->topo, (guint)r->gpu);
  const FsGpuModel *gpu = &node->model->u.gpu;
  guint L = fs_train_n_layers(t);
  FsRankBuilder b = { .t = t, .r = r, .gpu = gpu };
  guint32 first_op = fs_opgraph_n_ops(g);
  b.lc = g_new0(FsLayerCost, L);
  b.last_b_mb = g_new0(guint32, t->v);
  b.bwd_kernels = first_backward_kernels(t, r->stage);
  fs_train_dp_init(&b);
  b.grad_bytes = w->grad_fp32 || w->dtype == FS_DTYPE_FP32 || w->dtype == FS_DTYPE_TF32 ? 4.0 : 2.0;
  gboolean ok = TRUE;
  guint ntp, nep, ncp;
  g_autofree guint *tpn = group_nodes(t, FS_DIM_TP, r->rank, &ntp);
  g_autofree guint *epn = group_nodes(t, FS_DIM_EP, r->rank, &nep);
  g_autofree guint *cpn = group_nodes(t, FS_DIM_CP, r->rank, &ncp);
  for (guint c = 0; c < t->v && ok; c++) {
    guint lo, hi;
    fs_train_layer_range(t, c * t->p + r->stage, &lo, &hi);
    for (guint l = lo; l < hi && ok; l++) {
      /* Identical layers (same kind) cost the same: reuse the first. */
      gboolean found = FALSE;
      if (w->form == FS_MODEL_FORM_TRANSFORMER)
        for (guint k = lo; k < l && !found; k++)
          if (fs_transformer_layer_is_moe(&w->model, k) == fs_transformer_layer_is_moe(&w->model, l)) {
            b.lc[l] = b.lc[k];
            found = TRUE;
          }
      if (!found)
        ok = fs_train_layer_cost(t, l, gpu, tpn, ntp, epn, nep, cpn, ncp, &b.lc[l], error);
    }
  }
  if (ok && w->form == FS_MODEL_FORM_TRANSFORMER) {
    FsTransformerRun run;
    fs_workload_transformer_run(w, &run);
    const FsTransformerConfig *cfg = &w->model;
    b.emb_fwd = fs_train_kernels_time(
      t, fs_transformer_embedding_kernels(cfg, &run, FS_PASS_FORWARD), gpu, &b.emb_mf[0], &b.h_emb[0]);
    b.emb_bwd = fs_train_kernels_time(
      t, fs_transformer_embedding_kernels(cfg, &run, FS_PASS_BACKWARD), gpu, &b.emb_mf[1], &b.h_emb[1]);
    b.head_fwd = fs_train_kernels_time(
      t, fs_transformer_head_kernels(cfg, &run, FS_PASS_FORWARD), gpu, &b.head_mf[0], &b.h_head[0]);
    b.head_bwd = fs_train_kernels_time(
      t, fs_transformer_head_kernels(cfg, &run, FS_PASS_BACKWARD), gpu, &b.head_mf[1], &b.h_head[1]);
    FsTransformerParams pp;
    fs_transformer_params(cfg, &pp);
    b.emb_params = (pp.embedding + pp.positions) / w->tp;
    b.head_params = pp.output / w->tp + pp.final_norm;
    /* Tied embeddings across stages: the last stage holds a copy of the
     * word embedding as its output layer (Megatron-LM), a parameter like
     * any other of the stage. */
    if (cfg->tied_embeddings && t->p * t->v > 1)
      b.head_params += pp.embedding / w->tp;
    if (ntp > 1) {
      uint64_t act = (uint64_t)((double)w->micro_batch * cfg->seq_len / w->cp * cfg->hidden * 2.0);
      FsCollOp op = w->sequence_parallel ? FS_COLL_REDUCE_SCATTER : FS_COLL_ALL_REDUCE;
      ok = fs_train_measure(t, tpn, ntp, op, w->sequence_parallel ? act / ntp : act, &b.emb_tp, error);
      if (ok && w->sequence_parallel) {
        ok = fs_train_measure(t, tpn, ntp, FS_COLL_ALL_GATHER, act / ntp, &b.head_tp_fwd, error) &&
             fs_train_measure(t, tpn, ntp, FS_COLL_REDUCE_SCATTER, act / ntp, &b.head_tp_bwd, error);
      } else if (ok) {
        ok = fs_train_measure(t, tpn, ntp, FS_COLL_ALL_REDUCE, act, &b.head_tp_bwd, error);
      }
    }
  }
  if (ok) {
    GArray *order = g_array_new(FALSE, FALSE, sizeof(FsSchedItem));
    const FsSchedule *sched = fs_schedule_get(w->schedule);
    sched->order(t->p, t->m, t->v, r->stage, order);
    for (guint i = 0; i < order->len; i++) {
      const FsSchedItem *it = &g_array_index(order, FsSchedItem, i);
      if (it->backward)
        b.last_b_mb[it->chunk] = it->mb;
    }
    fs_train_dp_plan(&b);
    g_autofree gboolean *paired = pair_passes(t, order);
    for (guint i = 0; i < order->len; i++) {
      const FsSchedItem *it = &g_array_index(order, FsSchedItem, i);
      if (it->backward)
        backward(&b, lk, it->mb, it->chunk, paired[i]);
      else
        forward(&b, lk, it->mb, it->chunk, paired[i]);
    }
    g_array_unref(order);
    guint32 end_bwd = fs_opgraph_stream(g, r->s_compute)->last;
    fs_train_dp_after_backward(&b, end_bwd);
    /* The optimizer step over this rank's shard, after every gradient
     * collective. */
    double shard = fs_train_dp_shard(&b);
    gboolean mixed = w->dtype != FS_DTYPE_FP32 && w->dtype != FS_DTYPE_TF32;
    FsHostOp hopt = { 0 }, hcast = { 0 };
    FsTime opt_t = w->offload_optimizer ? 0 :
      fs_train_kernels_time(t, fs_optimizer_kernels(shard, w->optimizer, mixed, b.grad_bytes), gpu,
                            NULL, &hopt);
    /* FP8: the per-step cast of the updated weights (spec-views.c's
     * fs_workload_optimizer_kernels counts the same). */
    if (w->dtype == FS_DTYPE_FP8 && w->form == FS_MODEL_FORM_TRANSFORMER) {
      GArray *cast = fs_fp8_weight_cast_kernels(w->fp8_param_gather ? shard : fs_train_dp_local(&b),
                                                w->fp8_recipe);
      opt_t += fs_train_kernels_time(t, cast, gpu, NULL, &hcast);
      /* The casts run after the update: one host view of both. */
      hopt.tail = MAX(hopt.tail + hcast.sum, (FsTime)hopt.kernels * t->h_op + hcast.tail);
      hopt.kernels += hcast.kernels;
      hopt.sum += hcast.sum;
    }
    guint32 opt = fs_train_add_op(g, r->s_compute, FS_OP_COMPUTE, FS_CAT_OPTIMIZER,
                                  "optimizer step", opt_t, -1, -1, 0,
                                  (const guint32 *)b.dp.ops->data, b.dp.ops->len);
    fs_train_host_note(t, opt, &hopt);
    fs_train_dp_after_optimizer(&b, opt);
    fs_train_host_rank(t, r, first_op);
  }
  g_free(b.lc);
  g_free(b.last_b_mb);
  g_array_unref(b.bwd_kernels);
  fs_train_dp_clear(&b);
  return ok;
}

/* See executor.h. Makes the world of the run through the engines, one simulated rank
 * per pipeline stage and TP index (one TP index past full_tp_limit GPUs) with its streams and
 * DP (and expert DP) communicators, the tied-embedding all-reduces, every rank's ops
 * (build_rank), and the pipeline dependencies between stages. FS_WORKLOAD_ERROR_INVALID when
 * the GPU counts differ, the schedule's own error, or the first error of a rank; the FsTrain
 * borrows topo, w, eff and nccl. */
FsTrain *fs_train_new(const FsTopo *topo, const FsWorkload *w, const FsEfficiency *eff,
                      const FsNcclParams *nccl, const FsTrainEngines *engines,
                      const FsTrainOptions *opt, GError **error)
{
  g_return_val_if_fail(engines != NULL, NULL);
  guint ngpus;
  fs_topo_gpus(topo, &ngpus);
  if (w->gpus != ngpus) {
    g_set_error(error, FS_WORKLOAD_ERROR, FS_WORKLOAD_ERROR_INVALID,
                "the workload runs on %u GPUs but the topology has %u", w->gpus, ngpus);
    return NULL;
  }
  const FsSchedule *sched = fs_schedule_get(w->schedule);
  guint v = MAX(w->vp, 1u);
  if (!fs_schedule_check(sched, w->pp, w->grad_accum, v, error))
    return NULL;
  FsTrain *t = g_new0(FsTrain, 1);
  t->topo = topo;
  t->w = w;
  t->eff = eff;
  t->nccl = nccl;
  t->engines = engines;
  if (opt != NULL)
    t->opt = *opt;
  else
    fs_train_options_init(&t->opt);
  /* The analytic model keeps its step runs under AUTO (executor.h). */
  if (t->opt.net_model == FS_NET_ANALYTIC && t->opt.exec == FS_COLL_EXEC_AUTO)
    t->opt.exec = FS_COLL_EXEC_STEPS;
  make_world(t, &t->env, &t->world);
  t->g = fs_opgraph_new();
  t->ranks = g_array_new(FALSE, TRUE, sizeof(FsSimRank));
  t->memo = t->opt.memo;
  if (t->memo == NULL)
    t->memo = t->own_memo = fs_coll_memo_new();
  t->dp_alone = t->opt.dp_isolated || (t->opt.net_model == FS_NET_ANALYTIC && !t->opt.dp_flows);
  t->p = w->pp;
  t->v = v;
  t->m = w->grad_accum;
  t->nj = w->gpus <= t->opt.full_tp_limit ? w->tp : 1;
  /* Simulated ranks and their streams.  Under AUTO, data-parallel
   * collectives on the shared network as streams where trusted
   * (FsTrainOptions.dp_streams; not with dp_flows, the path kept for
   * checking the analytic model). */
  gboolean dp_streams = t->opt.dp_streams && !t->opt.dp_flows && t->opt.exec == FS_COLL_EXEC_AUTO;
  for (guint s = 0; s < t->p; s++)
    for (guint j = 0; j < t->nj; j++) {
      FsRankCoords c = { .tp = j, .cp = 0, .dp = 0, .pp = s };
      FsSimRank r = { .rank = fs_workload_rank_at(w, &c), .stage = s, .tpi = j };
      r.gpu = gpu_node(t, r.rank);
      r.s_compute = fs_opgraph_add_stream(t->g, "compute", r.rank, r.gpu, TRUE);
      r.s_pp = fs_opgraph_add_stream(t->g, "pp", r.rank, r.gpu, FALSE);
      r.s_dp = fs_opgraph_add_stream(t->g, "dp", r.rank, r.gpu, FALSE);
      r.s_fsdp = fs_opgraph_add_stream(t->g, "param-gather", r.rank, r.gpu, FALSE);
      r.s_aux = fs_opgraph_add_stream(t->g, "tp-cp", r.rank, r.gpu, FALSE);
      r.s_ep = w->overlap_ep_comm ? fs_opgraph_add_stream(t->g, "ep", r.rank, r.gpu, FALSE)
                                  : G_MAXUINT;
      r.comm_ops = g_array_new(FALSE, FALSE, sizeof(guint32));
      guint n;
      guint *dpn = group_nodes(t, FS_DIM_DP_CP, r.rank, &n);
      r.dp_size = n;
      r.dp_nodes = dpn;
      char name[64];
      g_snprintf(name, sizeof name, "dp(stage %u, tp %u)", s, j);
      r.dp_comm = fs_opgraph_add_comm(t->g, name, dpn, n);
      r.edp_comm = r.dp_comm;
      r.edp_size = r.dp_size;
      r.edp_nodes = r.dp_nodes;
      if (w->ep > 1) {
        r.edp_nodes = group_nodes(t, FS_DIM_EDP, r.rank, &r.edp_size);
        g_snprintf(name, sizeof name, "edp(stage %u, tp %u)", s, j);
        r.edp_comm = fs_opgraph_add_comm(t->g, name, r.edp_nodes, r.edp_size);
        if (dp_streams)
          fs_opgraph_comm_set_streams(t->g, r.edp_comm);
      }
      if (dp_streams)
        fs_opgraph_comm_set_streams(t->g, r.dp_comm);
      r.emb_coll = G_MAXUINT;
      g_array_append_val(t->ranks, r);
    }
  /* Tied embeddings over more than one stage: one all-reduce per TP index
   * between the first and the last stage's GPUs (Megatron's embedding
   * group), of the word embedding's gradient (vocab × hidden / tp). */
  if (w->form == FS_MODEL_FORM_TRANSFORMER && w->model.tied_embeddings && t->p > 1) {
    FsTransformerParams pp;
    fs_transformer_params(&w->model, &pp);
    double gb = w->grad_fp32 || w->dtype == FS_DTYPE_FP32 || w->dtype == FS_DTYPE_TF32 ? 4.0 : 2.0;
    t->emb_bytes = (uint64_t)(pp.embedding / w->tp * gb);
    for (guint j = 0; j < t->nj; j++) {
      FsSimRank *first = rank_of(t, 0, j), *last = rank_of(t, t->p - 1, j);
      guint nodes[2] = { (guint)first->gpu, (guint)last->gpu };
      char name[64];
      g_snprintf(name, sizeof name, "embedding(tp %u)", j);
      guint comm = fs_opgraph_add_comm(t->g, name, nodes, 2);
      first->emb_coll = last->emb_coll = fs_opgraph_add_coll(t->g, comm, FS_COLL_ALL_REDUCE,
                                                             t->emb_bytes);
    }
  }
  /* The host model's mode and figures, for the GPU of rank 0. */
  fs_train_host_init(t, &fs_topo_node(topo, (guint)g_array_index(t->ranks, FsSimRank, 0).gpu)
                            ->model->u.gpu);
  guint nlink = t->nj * t->p * t->v * t->m;
  Links lk = { g_new(guint32, nlink), g_new(guint32, nlink), g_new(guint32, nlink),
               g_new(guint32, nlink) };
  gboolean ok = TRUE;
  for (guint i = 0; i < t->ranks->len && ok; i++)
    ok = build_rank(t, &lk, &g_array_index(t->ranks, FsSimRank, i), error);
  if (ok && t->error != NULL) {
    g_propagate_error(error, g_steal_pointer(&t->error));
    ok = FALSE;
  }
  /* Pipeline dependencies: a forward waits for the previous virtual
   * stage's activations, a backward for the next one's gradients. */
  guint nv = t->p * t->v;
  for (guint j = 0; j < t->nj && ok; j++)
    for (guint gs = 0; gs < nv; gs++)
      for (guint mb = 0; mb < t->m; mb++) {
        guint i = link_index(t, j, gs, mb);
        if (gs > 0)
          fs_opgraph_add_dep(t->g, lk.f_first[i], lk.f_out[link_index(t, j, gs - 1, mb)]);
        if (gs + 1 < nv)
          fs_opgraph_add_dep(t->g, lk.b_first[i], lk.b_out[link_index(t, j, gs + 1, mb)]);
      }
  g_free(lk.f_first); g_free(lk.f_out); g_free(lk.b_first); g_free(lk.b_out);
  if (!ok) {
    fs_train_free(t);
    return NULL;
  }
  return t;
}

void fs_train_free(FsTrain *t)
{
  if (t == NULL)
    return;
  for (guint i = 0; i < t->ranks->len; i++) {
    FsSimRank *r = &g_array_index(t->ranks, FsSimRank, i);
    g_array_unref(r->comm_ops);
    if (r->edp_nodes != r->dp_nodes)
      g_free(r->edp_nodes);
    g_free(r->dp_nodes);
  }
  g_clear_error(&t->error);
  g_array_unref(t->ranks);
  if (t->hops != NULL)
    g_array_unref(t->hops);
  fs_coll_memo_free(t->own_memo);
  if (t->res.classes)
    g_array_unref(t->res.classes);
  fs_opgraph_free(t->g);
  t->engines->world_free(t->world);
  if (t->alone_world != NULL)
    t->engines->world_free(t->alone_world);
  g_free(t);
}

/* See executor.h. Runs the op graph to its end and derives the step time, tokens per second,
 * TFLOP/s per GPU, MFU against the GEMM peak of the workload's dtype, TDP energy, and the time
 * breakdown of the first rank of every stage (the FsTrainClass list, replaced on each run). */
gboolean fs_train_run(FsTrain *t, GError **error)
{
  if (!fs_opgraph_run(t->g, &t->env, error))
    return FALSE;
  const FsWorkload *w = t->w;
  FsTrainResult *res = &t->res;
  res->step_time = fs_opgraph_end(t->g);
  res->gpus = w->gpus;
  res->microbatches = t->m;
  res->simulated_ranks = t->ranks->len;
  res->n_ops = fs_opgraph_n_ops(t->g);
  res->launch = t->launch;
  const FsSimRank *r0 = &g_array_index(t->ranks, FsSimRank, 0);
  const FsTopoNode *node = fs_topo_node(t->topo, (guint)r0->gpu);
  res->gpu = &node->model->u.gpu;
  res->gpu_name = node->model->name;
  double secs = fs_time_to_s(res->step_time);
  res->tokens = (double)w->global_batch *
                (w->form == FS_MODEL_FORM_TRANSFORMER ? w->model.seq_len : 1);
  res->tokens_per_s = secs > 0 ? res->tokens / secs : 0;
  res->model_flops = fs_workload_step_model_flops(w, FALSE);
  res->model_flops_causal = fs_workload_step_model_flops(w, TRUE);
  res->tflops_per_gpu = secs > 0 ? res->model_flops / secs / w->gpus / 1e12 : 0;
  /* The peak the GEMMs run at: the dtype's, or the next wider type the GPU
   * has (bf16 on a V100 runs at the fp16 peak), as the kernel model says. */
  FsKernel probe = fs_kernel_gemm("peak", FS_PASS_FORWARD, w->dtype, 1, 1, 1, 1);
  FsKernelTiming kt;
  fs_kernel_time(&probe, res->gpu, NULL, &kt);
  res->peak_flops = kt.peak;
  res->peak_dtype = kt.peak_dtype;
  double peak_s = res->peak_flops * w->gpus * secs;
  res->mfu = peak_s > 0 ? res->model_flops / peak_s : 0;
  res->mfu_causal = peak_s > 0 ? res->model_flops_causal / peak_s : 0;
  res->energy_j = res->gpu->tdp * w->gpus * secs;
  if (res->classes)
    g_array_unref(res->classes);
  res->classes = g_array_new(FALSE, TRUE, sizeof(FsTrainClass));
  for (guint s = 0; s < t->p; s++) {
    const FsSimRank *r = &g_array_index(t->ranks, FsSimRank, s * t->nj);
    FsTrainClass c = { .stage = s, .rank = r->rank, .gpu = r->gpu, .model_flops = r->model_flops };
    fs_opgraph_breakdown(t->g, r->s_compute, (const guint32 *)r->comm_ops->data, r->comm_ops->len,
                         0, res->step_time, &c.time);
    g_array_append_val(res->classes, c);
  }
  return TRUE;
}

const FsTrainResult *fs_train_result(const FsTrain *t) { return &t->res; }
const FsOpGraph *fs_train_graph(const FsTrain *t) { return t->g; }
FsFlowNet *fs_train_net(const FsTrain *t) { return t->env.net; }
FsRouter *fs_train_router(const FsTrain *t) { return t->env.router; }
