/* dp-sched.c — the data-parallel schedule of one simulated rank (see
 * executor-private.h): gradient buckets and when they go out, ZeRO's
 * parameter gathers and gradient reduce-scatters, the tied-embedding
 * all-reduce, and the shard the optimizer updates.
 *
 * Buckets follow Megatron-Core's distributed optimizer: a chunk's
 * parameters in backward order (head, layers high to low, embedding) fill
 * buckets of `parallel.bucket_size` bytes of gradient, dense and expert
 * parameters in two separate buffers (expert buckets reduce over the
 * expert-data-parallel group).  A bucket closes when the last micro-batch's
 * backward of its last item finishes; it is all-reduced (ZeRO-0) or
 * reduce-scattered (ZeRO >= 1) then (overlap) or after the whole backward.
 * ZeRO-1/2 all-gather the updated parameters bucket by bucket, before the
 * next step's forwards (overlap: each item's first forward waits for its
 * own buckets) or after the optimizer.  ZeRO-3 gathers each layer's
 * parameters before every use and reduce-scatters its gradients on its own.
 *
 * Collectives run on the shared flow network as FS_OP_COLL ops over the
 * rank's communicator, or, when FsTrain.dp_alone, as DELAY ops of their
 * time measured alone.  Cost: O(items + buckets) per rank, plus one
 * measurement per distinct collective with dp_alone.
 */
#include "workload/executor-private.h"

#include <math.h>
#include <string.h>

/* A gradient bucket of a model chunk, closed after `close_item` in the
 * backward's order (a layer index, or -1 for the embedding, -2 for the head). */
typedef struct {
  guint chunk;
  int close_item;
  double params;
  gboolean expert;           /* expert parameters: reduced over the edp group */
} Bucket;

void fs_train_dp_init(FsRankBuilder *b)
{
  FsDpSched *dp = &b->dp;
  memset(dp, 0, sizeof *dp);
  dp->buckets = g_array_new(FALSE, FALSE, sizeof(Bucket));
  dp->ops = g_array_new(FALSE, FALSE, sizeof(guint32));
  dp->pending = g_array_new(FALSE, FALSE, sizeof(guint));
  dp->fsdp_consumers[0] = dp->fsdp_consumers[1] = FS_OP_NONE;
}

void fs_train_dp_clear(FsRankBuilder *b)
{
  FsDpSched *dp = &b->dp;
  g_free(dp->bucket_ag);
  g_free(dp->item_bucket);
  g_array_unref(dp->buckets);
  g_array_unref(dp->ops);
  g_array_unref(dp->pending);
}

/* The time of a data-parallel collective of this rank's dp × cp group (or
 * its expert-data-parallel group when `expert`) run alone, into *d.  FALSE
 * when it cannot be simulated: the step's first error is kept for the
 * caller of the build (b->t->error), later ones are dropped. */
static gboolean measure_alone(FsRankBuilder *b, gboolean expert, FsCollOp op, uint64_t unit,
                              FsTime *d)
{
  const FsSimRank *r = b->r;
  GError *err = NULL;
  if (fs_train_measure(b->t, expert ? r->edp_nodes : r->dp_nodes,
                       expert ? r->edp_size : r->dp_size, op, unit, d, &err))
    return TRUE;
  if (b->t->error == NULL)
    b->t->error = err;
  else
    g_error_free(err);
  return FALSE;
}

/* A gradient or parameter collective of this rank over its dp × cp group,
 * or over its expert-data-parallel group when `expert`. */
static guint32 add_coll_on(FsRankBuilder *b, gboolean expert, guint stream, FsCollOp op,
                           uint64_t unit, FsOpCat cat, const char *name, int layer,
                           const guint32 *deps, guint n)
{
  FsOpGraph *g = b->t->g;
  const FsSimRank *r = b->r;
  if (b->t->dp_alone) {
    FsTime d = 0;
    measure_alone(b, expert, op, unit, &d);
    guint32 id = fs_train_add_op(g, stream, FS_OP_DELAY, cat, name, d, -1, layer, 0, deps, n);
    g_array_append_val(b->r->comm_ops, id);
    return id;
  }
  guint c = fs_opgraph_add_coll(g, expert ? r->edp_comm : r->dp_comm, op, unit);
  FsOp o = { .kind = FS_OP_COLL, .cat = cat, .name = name, .coll = c, .bytes = unit, .mb = -1,
             .layer = layer };
  guint32 id = fs_opgraph_add(g, stream, &o, deps, n);
  g_array_append_val(b->r->comm_ops, id);
  return id;
}

static guint32 add_coll(FsRankBuilder *b, guint stream, FsCollOp op, uint64_t unit, FsOpCat cat,
                        const char *name, int layer, const guint32 *deps, guint n)
{
  return add_coll_on(b, FALSE, stream, op, unit, cat, name, layer, deps, n);
}

/* The size of the group that reduces bucket bk's gradients. */
static guint bucket_group(const FsRankBuilder *b, const Bucket *bk)
{
  return bk->expert ? b->r->edp_size : b->r->dp_size;
}

/* Bytes per gathered parameter: 1 with FP8 GEMMs and --fp8-param-gather
 * (Megatron keeps the weights in FP8 and all-gathers them so), else 2. */
static double param_bytes(const FsRankBuilder *b)
{
  const FsWorkload *w = b->t->w;
  return w->dtype == FS_DTYPE_FP8 && w->fp8_param_gather ? 1.0 : 2.0;
}

/* Whether an overlap switch of the workload holds: `--overlap-cost
 * exposed` runs every data-parallel collective as if not overlapped. */
static gboolean overlapped(const FsRankBuilder *b, gboolean flag)
{
  return flag && b->t->w->overlap_cost != FS_OVERLAP_COST_EXPOSED;
}

/* With `--overlap-cost modelled`, a data-parallel collective launched now
 * beside the backward (op `after` on the compute stream) slows the compute
 * that follows: a compute op on the compute stream, counted as backward,
 * of what the compute (the kernels of a backward layer) loses to the
 * collective's SMs and HBM traffic while it, timed alone, runs
 * (fs_train_overlap_loss against the rest of the rank's backward is
 * bounded by the collective's time). */
static void overlap_cost(FsRankBuilder *b, gboolean expert, FsCollOp op, uint64_t unit,
                         guint32 after)
{
  double sm = fs_train_overlap_rate(b->t, FS_EFF_OVERLAP_DP, b->gpu, (double)unit);
  if (sm >= 1)
    return;
  const FsSimRank *r = b->r;
  FsTime d = 0;
  if (!measure_alone(b, expert, op, unit, &d))
    return;
  /* The backward's kernels lose the SMs, and its memory-bound kernels the
   * HBM the collective moves (layer-cost.c). */
  double hbm = fs_train_comm_hbm(b->t, op, FALSE, unit, expert ? r->edp_size : r->dp_size, d);
  double y = fs_train_shared_rate(b->t, (const FsKernel *)b->bwd_kernels->data,
                                  b->bwd_kernels->len, b->gpu, sm, hbm);
  FsTime loss = fs_train_overlap_loss(G_MAXINT64 / 4, d, y);
  if (loss > 0)
    fs_train_add_op(b->t->g, r->s_compute, FS_OP_COMPUTE, FS_CAT_BACKWARD, "dp overlap", loss, -1, -1,
                    0, &after, 1);
}

/* Launches the gradient collective of bucket i after op `after`. */
static void launch_bucket(FsRankBuilder *b, guint i, guint32 after)
{
  const Bucket *bk = &g_array_index(b->dp.buckets, Bucket, i);
  uint64_t bytes = (uint64_t)(bk->params * b->grad_bytes);
  guint32 id;
  char name[64];
  g_snprintf(name, sizeof name, bk->expert ? "expert grad bucket %u" : "grad bucket %u", i);
  FsCollOp op = b->t->w->zero_stage >= 1 ? FS_COLL_REDUCE_SCATTER : FS_COLL_ALL_REDUCE;
  uint64_t unit = b->t->w->zero_stage >= 1 ? bytes / bucket_group(b, bk) : bytes;
  id = add_coll_on(b, bk->expert, b->r->s_dp, op, unit, FS_CAT_DP, name, -1, &after, 1);
  g_array_append_val(b->dp.ops, id);
  if (overlapped(b, b->t->w->overlap_dp_grads))
    overlap_cost(b, bk->expert, op, unit, after);
}

/* A backward item of the chunk's last micro-batch finished at op `op`: the
 * buckets it closes go out (now with overlap, else after the backward). */
static void item_done(FsRankBuilder *b, guint chunk, int item, guint32 op)
{
  FsDpSched *dp = &b->dp;
  while (dp->next_bucket < dp->buckets->len) {
    const Bucket *bk = &g_array_index(dp->buckets, Bucket, dp->next_bucket);
    if (bk->chunk != chunk || bk->close_item != item)
      break;
    if (bucket_group(b, bk) < 2)
      ; /* nothing to reduce */
    else if (overlapped(b, b->t->w->overlap_dp_grads))
      launch_bucket(b, dp->next_bucket, op);
    else
      g_array_append_val(dp->pending, dp->next_bucket);
    dp->next_bucket++;
  }
}

/* The slot of item (a layer, -1 the embedding, -2 the head) and buffer k
 * (0 dense, 1 expert) in FsDpSched.item_bucket. */
static guint item_slot(const FsRankBuilder *b, int item, guint k)
{
  guint L = fs_train_n_layers(b->t);
  guint i = item >= 0 ? (guint)item : item == -1 ? L : L + 1;
  return 2 * i + k;
}

void fs_train_dp_wait_params(FsRankBuilder *b, guint32 op, int item)
{
  if (b->dp.bucket_ag == NULL)
    return;
  for (guint k = 0; k < 2; k++) {
    guint bi = b->dp.item_bucket[item_slot(b, item, k)];
    if (bi != G_MAXUINT && b->dp.bucket_ag[bi] != FS_OP_NONE)
      fs_opgraph_add_dep(b->t->g, op, b->dp.bucket_ag[bi]);
  }
}

/* Whether layers gather their parameters before use (ZeRO-3 over more
 * than one rank). */
static gboolean fsdp(const FsRankBuilder *b)
{
  return b->t->w->zero_stage >= 3 && b->r->dp_size > 1;
}

guint32 fs_train_dp_layer_gather(FsRankBuilder *b, guint l)
{
  if (!fsdp(b))
    return FS_OP_NONE;
  const FsLayerCost *c = &b->lc[l];
  uint64_t unit = (uint64_t)((c->params - c->eparams) * param_bytes(b) / b->r->dp_size);
  guint32 window = b->dp.fsdp_consumers[b->dp.fsdp_k % 2];
  guint32 ag = add_coll(b, b->r->s_fsdp, FS_COLL_ALL_GATHER, unit, FS_CAT_DP, "param gather",
                        (int)l, &window, window == FS_OP_NONE ? 0 : 1);
  /* Expert parameters are sharded over the expert-data-parallel group; the
   * stream orders this gather after the dense one. */
  if (c->eparams > 0 && b->r->edp_size > 1)
    ag = add_coll_on(b, TRUE, b->r->s_fsdp, FS_COLL_ALL_GATHER,
                     (uint64_t)(c->eparams * param_bytes(b) / b->r->edp_size), FS_CAT_DP,
                     "expert param gather", (int)l, NULL, 0);
  return ag;
}

void fs_train_dp_layer_consumed(FsRankBuilder *b, guint32 op)
{
  if (fsdp(b))
    b->dp.fsdp_consumers[b->dp.fsdp_k++ % 2] = op;
}

void fs_train_dp_grads_ready(FsRankBuilder *b, guint chunk, int item, guint32 op)
{
  if (item < 0 || !fsdp(b)) {
    item_done(b, chunk, item, op);
    return;
  }
  /* ZeRO-3: the layer's gradients alone, reduce-scattered over the group. */
  const FsSimRank *r = b->r;
  const FsLayerCost *lc = &b->lc[item];
  uint64_t unit = (uint64_t)((lc->params - lc->eparams) * b->grad_bytes / r->dp_size);
  guint32 rs = add_coll(b, r->s_dp, FS_COLL_REDUCE_SCATTER, unit, FS_CAT_DP, "grad reduce-scatter",
                        item, &op, 1);
  g_array_append_val(b->dp.ops, rs);
  if (lc->eparams > 0 && r->edp_size > 1) {
    rs = add_coll_on(b, TRUE, r->s_dp, FS_COLL_REDUCE_SCATTER,
                     (uint64_t)(lc->eparams * b->grad_bytes / r->edp_size), FS_CAT_DP,
                     "expert grad reduce-scatter", item, &op, 1);
    g_array_append_val(b->dp.ops, rs);
  }
}

/* Splits this rank's chunks into gradient buckets in backward order. */
static void plan_buckets(FsRankBuilder *b)
{
  FsTrain *t = b->t;
  const FsWorkload *w = t->w;
  guint nv = t->p * t->v;
  double limit = w->bucket_size > 0 ? (double)w->bucket_size / b->grad_bytes : INFINITY;
  gboolean tf = w->form == FS_MODEL_FORM_TRANSFORMER;
  for (guint c = t->v; c-- > 0;) {
    guint vs = c * t->p + b->r->stage;
    double acc[2] = { 0, 0 };
    guint lo, hi;
    fs_train_layer_range(t, vs, &lo, &hi);
    /* Items in backward order: head, layers high to low, embedding; each
     * with its dense and expert parameters (two gradient buffers, as in
     * Megatron-Core: expert buckets reduce over the edp group). */
    GArray *items = g_array_new(FALSE, FALSE, sizeof(int));
    GArray *params = g_array_new(FALSE, FALSE, 2 * sizeof(double));
    if (vs == nv - 1 && tf) {
      int it = -2;
      double p[2] = { b->head_params, 0 };
      g_array_append_val(items, it);
      g_array_append_val(params, p);
    }
    /* ZeRO-3 reduce-scatters each layer's gradients on its own
     * (fs_train_dp_grads_ready). */
    for (guint l = hi; l-- > lo && w->zero_stage < 3;) {
      int it = (int)l;
      double p[2] = { b->lc[l].params - b->lc[l].eparams, b->lc[l].eparams };
      g_array_append_val(items, it);
      g_array_append_val(params, p);
    }
    if (vs == 0 && tf) {
      int it = -1;
      double p[2] = { b->emb_params, 0 };
      g_array_append_val(items, it);
      g_array_append_val(params, p);
    }
    guint open[2] = { 0, 0 }; /* first item of each buffer's open bucket */
    for (guint i = 0; i < items->len; i++) {
      const double *p = (const double *)params->data + 2 * i;
      int item = g_array_index(items, int, i);
      for (guint k = 0; k < 2; k++) {
        acc[k] += p[k];
        if (acc[k] >= limit || i + 1 == items->len) {
          if (acc[k] > 0) {
            for (guint j = open[k]; j <= i; j++)
              if (((const double *)params->data)[2 * j + k] > 0)
                b->dp.item_bucket[item_slot(b, g_array_index(items, int, j), k)] =
                  b->dp.buckets->len;
            Bucket bk = { c, item, acc[k], k == 1 };
            g_array_append_val(b->dp.buckets, bk);
          }
          acc[k] = 0;
          open[k] = i + 1;
        }
      }
    }
    g_array_unref(items);
    g_array_unref(params);
  }
}

/* Whether the optimizer state is sharded and the parameters all-gathered
 * bucket by bucket (ZeRO-1/2 over more than one rank). */
static gboolean sharded(const FsRankBuilder *b)
{
  const FsWorkload *w = b->t->w;
  return w->zero_stage >= 1 && w->zero_stage < 3 && b->r->dp_size > 1;
}

void fs_train_dp_plan(FsRankBuilder *b)
{
  guint L = fs_train_n_layers(b->t);
  b->dp.item_bucket = g_new(guint, 2 * (L + 2));
  for (guint i = 0; i < 2 * (L + 2); i++)
    b->dp.item_bucket[i] = G_MAXUINT;
  plan_buckets(b);
  /* Parameters updated by the previous step's optimizer are gathered
   * bucket by bucket in forward order, each layer's first forward waiting
   * for its own buckets (ZeRO-1/2 with overlap). */
  if (sharded(b) && overlapped(b, b->t->w->overlap_param_gather)) {
    GArray *buckets = b->dp.buckets;
    b->dp.bucket_ag = g_new(guint32, MAX(buckets->len, 1u));
    for (guint k = buckets->len; k-- > 0;) {
      const Bucket *bk = &g_array_index(buckets, Bucket, k);
      guint n = bucket_group(b, bk);
      b->dp.bucket_ag[k] = n < 2 ? FS_OP_NONE :
        add_coll_on(b, bk->expert, b->r->s_dp, FS_COLL_ALL_GATHER, (uint64_t)(bk->params * param_bytes(b) / n),
                    FS_CAT_DP, "param all-gather", -1, NULL, 0);
    }
  }
}

void fs_train_dp_after_backward(FsRankBuilder *b, guint32 end_bwd)
{
  FsTrain *t = b->t;
  FsSimRank *r = b->r;
  if (r->dp_size > 1)
    for (guint k = 0; k < b->dp.pending->len; k++)
      launch_bucket(b, g_array_index(b->dp.pending, guint, k), end_bwd);
  /* Tied embeddings: after the data-parallel gradient reduction, the
   * first and the last stage all-reduce the word embedding's gradient
   * (Megatron-LM's finalize_model_grads, the embedding group); the
   * optimizer waits for it. */
  if (r->emb_coll != G_MAXUINT) {
    FsOp o = { .kind = FS_OP_COLL, .cat = FS_CAT_EMB, .name = "embedding grad all-reduce",
               .coll = r->emb_coll, .bytes = t->emb_bytes, .mb = -1, .layer = -1 };
    guint32 id = fs_opgraph_add(t->g, r->s_dp, &o, &end_bwd, 1);
    g_array_append_val(r->comm_ops, id);
    g_array_append_val(b->dp.ops, id);
  }
}

double fs_train_dp_local(const FsRankBuilder *b)
{
  double held = 0;
  for (guint c = 0; c < b->dp.buckets->len; c++)
    held += g_array_index(b->dp.buckets, Bucket, c).params;
  if (b->t->w->zero_stage >= 3)
    for (guint l = 0, L = fs_train_n_layers(b->t); l < L; l++)
      held += b->lc[l].params;
  return held;
}

double fs_train_dp_shard(const FsRankBuilder *b)
{
  const FsWorkload *w = b->t->w;
  double held[2] = { 0, 0 }; /* dense, expert */
  for (guint c = 0; c < b->dp.buckets->len; c++) {
    const Bucket *bk = &g_array_index(b->dp.buckets, Bucket, c);
    held[bk->expert ? 1 : 0] += bk->params;
  }
  if (w->zero_stage >= 3)
    for (guint l = 0, L = fs_train_n_layers(b->t); l < L; l++) {
      held[0] += b->lc[l].params - b->lc[l].eparams;
      held[1] += b->lc[l].eparams;
    }
  return w->zero_stage >= 1 ? held[0] / b->r->dp_size + held[1] / b->r->edp_size
                            : held[0] + held[1];
}

void fs_train_dp_after_optimizer(FsRankBuilder *b, guint32 opt)
{
  if (!sharded(b) || overlapped(b, b->t->w->overlap_param_gather))
    return;
  for (guint k = b->dp.buckets->len; k-- > 0;) {
    const Bucket *bk = &g_array_index(b->dp.buckets, Bucket, k);
    guint n = bucket_group(b, bk);
    if (n > 1)
      add_coll_on(b, bk->expert, b->r->s_dp, FS_COLL_ALL_GATHER,
                  (uint64_t)(bk->params * param_bytes(b) / n), FS_CAT_DP, "param all-gather", -1, &opt, 1);
  }
}
