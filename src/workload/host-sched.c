/* host-sched.c — the host side of a training step (executor-private.h):
 * which launch mode runs, what each op costs the host thread that issues
 * it, and where that thread waits for the GPU.  The run itself (the host
 * clock, the gate on each op's start) is the op graph's
 * (fs_opgraph_set_host); the model and its sources are in
 * workloads/README.md, "Host (framework) overhead". */
#include "workload/executor-private.h"

#include <string.h>

#include "compute/kernel.h"
#include "util/names.h"

static const char *const launch_names[] = { FS_LAUNCH_MODES(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE_NAME(FsLaunchMode, fs_launch_mode, launch_names, FS_LAUNCH_N)

void fs_train_host_init(FsTrain *t, const FsGpuModel *gpu)
{
  t->launch = FS_LAUNCH_OFF;
  t->h_op = t->h_graph = t->h_gap = 0;
  const FsEffHost *h = t->eff != NULL ? fs_efficiency_host(t->eff, gpu->arch) : NULL;
  if (t->w->launch == FS_LAUNCH_OFF || h == NULL)
    return;
  t->launch = t->w->launch;
  t->h_op = h->eager_op;
  t->h_graph = h->graph_launch;
  t->h_gap = h->gpu_gap;
}

FsTime fs_train_kernels_time(const FsTrain *t, GArray *k, const FsGpuModel *gpu, double *mf,
                             FsHostOp *ho)
{
  const FsKernel *ks = (const FsKernel *)k->data;
  guint n = k->len;
  FsTime sum = 0;
  g_autofree FsTime *d = ho != NULL ? g_new(FsTime, MAX(n, 1u)) : NULL;
  for (guint i = 0; i < n; i++) {
    FsTime x = fs_kernel_time(&ks[i], gpu, t->eff, NULL);
    /* With a host model the host's issue cost is charged by the host
     * chain; on the GPU a kernel then costs only its gap behind the
     * previous one (models/compute/README.md, "Host costs"). */
    if (t->launch != FS_LAUNCH_OFF && x < FS_TIME_MAX && x >= gpu->launch_latency)
      x = x - gpu->launch_latency + t->h_gap;
    if (d != NULL)
      d[i] = x;
    sum = x > FS_TIME_MAX - sum ? FS_TIME_MAX : sum + x;
  }
  if (ho != NULL) {
    /* Kernel j is issued at (j + 1)·h after the op's issue began and the
     * kernels from j on run back to back after it at the earliest. */
    ho->kernels = n;
    ho->sum = sum;
    ho->tail = 0;
    FsTime suffix = 0;
    for (guint j = n; j-- > 0;) {
      suffix = d[j] > FS_TIME_MAX - suffix ? FS_TIME_MAX : suffix + d[j];
      FsTime at = (FsTime)(j + 1) * t->h_op;
      FsTime v = suffix > FS_TIME_MAX - at ? FS_TIME_MAX : at + suffix;
      ho->tail = MAX(ho->tail, v);
    }
  }
  if (mf != NULL)
    *mf = fs_kernels_model_flops(k);
  g_array_unref(k);
  return sum;
}

void fs_train_host_note(FsTrain *t, guint32 op, const FsHostOp *ho)
{
  if (t->launch == FS_LAUNCH_OFF)
    return;
  if (t->hops == NULL)
    t->hops = g_array_new(FALSE, TRUE, sizeof(FsHostOp));
  if (op >= t->hops->len)
    g_array_set_size(t->hops, op + 1);
  g_array_index(t->hops, FsHostOp, op) = *ho;
}

/* How many launches a communication DELAY op of a layer stands for: the
 * collectives of the pass it times (two per layer and pass: after the
 * attention and after the MLP; an all-gather and a reduce-scatter each
 * with sequence parallelism; the K/V exchange of every ring step for CP;
 * dispatch and combine for EP); one for any other. */
static guint comm_launches(const FsTrain *t, const FsOp *op)
{
  if (op->layer < 0)
    return 1;
  switch (op->cat) {
  case FS_CAT_TP:
    return t->w->sequence_parallel ? 4 : 2;
  case FS_CAT_CP:
    return MAX(t->w->cp, 2u) - 1;
  case FS_CAT_EP:
    return 2;
  default:
    return 1;
  }
}

/* See executor-private.h.  Walks the rank's ops in the order they were
 * added (its program order), skipping other ranks' and receives, and gives
 * each to the rank's new host thread: a compute op its kernels' launches
 * (one graph launch for a layer pass with graphs) and their tail, a
 * communication op its launches, markers nothing; the optimizer and the
 * p2p calls of the non-interleaved schedule are synchronizations. */
void fs_train_host_rank(FsTrain *t, FsSimRank *r, guint32 first)
{
  if (t->launch == FS_LAUNCH_OFF)
    return;
  FsOpGraph *g = t->g;
  r->host = fs_opgraph_add_host(g);
  /* Megatron's non-interleaved pipeline schedule batches the sends and
   * receives of each of its p2p calls and then synchronizes the device
   * (batch_p2p_comm with batch_p2p_sync, p2p_communication.py's
   * _communicate); the interleaved one overlaps them without a
   * synchronization.  A call happens between two passes where the first
   * sent (a forward off the last stage, a backward off the first) or the
   * second receives (a forward on a later stage, a backward on an earlier
   * one): the marker that starts the second pass is then a sync. */
  gboolean p2p_sync = t->p > 1 && t->v == 1;
  gboolean sent = FALSE;
  guint n = fs_opgraph_n_ops(g);
  for (guint32 i = first; i < n; i++) {
    const FsOp *op = fs_opgraph_op(g, i);
    const FsStream *s = fs_opgraph_stream(g, op->stream);
    if (s->rank != r->rank || op->kind == FS_OP_RECV)
      continue;
    FsTime cost = 0, first_t = 0, tail = 0;
    gboolean sync = FALSE;
    gboolean in_layer = op->layer >= 0;
    /* Captured in a layer's graph: its compute and its TP, CP and EP
     * collectives (not the data-parallel gathers and reductions). */
    gboolean graphed = t->launch == FS_LAUNCH_GRAPHS && in_layer && op->cat != FS_CAT_DP &&
                       op->cat != FS_CAT_PP && op->cat != FS_CAT_EMB;
    if (op->kind == FS_OP_COMPUTE) {
      const FsHostOp *ho = i < (t->hops ? t->hops->len : 0) ? &g_array_index(t->hops, FsHostOp, i)
                                                           : NULL;
      /* An op without kernels of its own (the time a DP collective takes
       * from the backward beside it) launches nothing. */
      guint k = ho != NULL ? ho->kernels : 0;
      if (k > 0 && graphed) {
        /* One captured graph per layer pass: one launch, its kernels
         * then back to back on the GPU. */
        cost = first_t = t->h_graph;
      } else if (k > 0) {
        cost = (FsTime)k * t->h_op;
        first_t = t->h_op;
        /* The op's time beyond its kernels (overlap losses, split GEMMs)
         * runs after the last kernel is issued. */
        tail = ho->tail + MAX(op->dur - ho->sum, 0);
      }
      /* The gradient norm's .item() before the optimizer step
       * (clip_grad_norm_fp32 → get_grad_norm_fp32). */
      sync = op->cat == FS_CAT_OPTIMIZER;
    } else if (op->kind == FS_OP_DELAY && op->dur == 0) {
      /* A marker or a join: nothing launched.  The markers of a pass's
       * received activations or gradients are the schedule's receives. */
      gboolean fwd = strcmp(op->name, "recv activations") == 0;
      gboolean bwd = strcmp(op->name, "recv gradients") == 0;
      gboolean recv = (fwd && r->stage > 0) || (bwd && r->stage + 1 < t->p);
      sync = p2p_sync && (fwd || bwd) && (recv || sent);
      if (fwd || bwd)
        sent = FALSE;
    } else if (!graphed) {
      /* A collective, a transfer, a gather: its launches (NCCL kernels). */
      cost = (FsTime)(op->kind == FS_OP_DELAY ? comm_launches(t, op) : 1) * t->h_op;
      first_t = t->h_op;
    }
    if (op->kind == FS_OP_XFER && op->cat == FS_CAT_PP)
      sent = TRUE;
    fs_opgraph_set_host(g, i, r->host, cost, first_t, tail, sync);
  }
}
