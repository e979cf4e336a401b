/* alone.c — a collective alone on the network: channel folding and loop
 * extrapolation around the executor.  See alone.h. */
#include "coll/alone.h"

#include "coll/bench.h"

/* Runs plan (folded when opts allow) with params; adds to stats. */
static gboolean run_plan(const FsCollPlan *plan, const FsCollExecParams *params, FsFlowNet *net,
                         FsCollTransferFn xfer, void *xfer_ctx, const FsCollAloneOpts *opts,
                         FsCollAloneStats *stats, FsTime *t, GError **error)
{
  g_autoptr(FsCollPlan) folded = NULL;
  /* Folding relies on max-min sharing (alone.h); the analytic model gives
   * every flow its path alone. */
  if (!opts->exact && opts->route_fixed != NULL && fs_flownet_model(net) == FS_NET_MAXMIN)
    folded = fs_coll_plan_fold(plan, opts->route_fixed, opts->route_ctx);
  const FsCollPlan *run = folded ? folded : plan;
  stats->width = fs_coll_plan_width(run);
  stats->runs++;
  stats->sim_steps += fs_coll_plan_n_steps(run);
  return fs_coll_run_alone(net, run, params, xfer, xfer_ctx, t, error);
}

/* Whole loops of loop bytes q in the smallest channel share of req. */
static guint64 whole_loops(const FsCollRequest *req, uint64_t q)
{
  guint64 f = G_MAXUINT64;
  for (guint c = 0; c < req->nchannels; c++)
    f = MIN(f, fs_coll_channel_bytes(req->bytes, req->dtype, req->nchannels, c) / q);
  return f;
}

/* Tries the extrapolation from N whole loops; FALSE in *done when the
 * differences disagree (then nothing is set but stats). */
static gboolean try_extrapolate(const FsNcclParams *p, const FsCollSysInfo *sys,
                                const FsComm *comm, uint64_t nbytes, const FsCollChoice *choice,
                                const FsCollRequest *req, uint64_t key, uint64_t q, guint64 F,
                                guint64 N, FsFlowNet *net, FsCollTransferFn xfer, void *xfer_ctx,
                                const FsCollAloneOpts *opts, FsCollAloneStats *stats,
                                gboolean *done, GError **error)
{
  *done = FALSE;
  FsCollPlan *pl[3] = {NULL, NULL, NULL};
  guint depth[3];
  gboolean ok = TRUE;
  for (guint i = 0; i < 3 && ok; i++) {
    FsCollRequest r = *req;
    r.bytes = req->bytes - (F - (N + i)) * q * req->nchannels;
    pl[i] = fs_coll_plan_new(comm, choice->algo, &r, error);
    ok = pl[i] != NULL;
    if (ok)
      depth[i] = fs_coll_plan_latency_depth(pl[i]);
  }
  /* The latency depth must grow by the same count per loop too. */
  if (ok && depth[2] - depth[1] == depth[1] - depth[0] && depth[1] >= depth[0]) {
    guint64 full_depth = depth[0] + (F - N) * (guint64)(depth[1] - depth[0]);
    FsCollExecParams ep;
    fs_coll_exec_params_depth(p, sys, comm, req->op, nbytes, choice,
                              (guint)MIN(full_depth, G_MAXUINT), &ep);
    ep.key = key;
    FsTime t[3];
    for (guint i = 0; i < 3 && ok; i++)
      ok = run_plan(pl[i], &ep, net, xfer, xfer_ctx, opts, stats, &t[i], error);
    if (ok) {
      FsTime d1 = t[1] - t[0], d2 = t[2] - t[1];
      FsTime diff = d2 > d1 ? d2 - d1 : d1 - d2;
      if (d1 > 0 && (double)diff <= 1e-6 * (double)d1) {
        stats->time = t[2] + (FsTime)(F - N - 2) * d2;
        stats->period = d2;
        stats->sim_loops = N + 2;
        *done = TRUE;
      }
    }
  }
  for (guint i = 0; i < 3; i++)
    fs_coll_plan_free(pl[i]);
  return ok;
}

gboolean fs_coll_time_alone(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                            uint64_t nbytes, const FsCollChoice *choice, const FsCollRequest *req,
                            uint64_t key, FsFlowNet *net, FsCollTransferFn xfer, void *xfer_ctx,
                            const FsCollAloneOpts *opts, FsCollAloneStats *stats, GError **error)
{
  static const FsCollAloneOpts defaults = {0};
  FsCollAloneStats local;
  if (opts == NULL)
    opts = &defaults;
  if (stats == NULL)
    stats = &local;
  *stats = (FsCollAloneStats){.width = 1};
  uint64_t q = choice->algo->loop_bytes && req->nchannels >= 1 && fs_comm_size(comm) > 1
                 ? choice->algo->loop_bytes(comm, req)
                 : 0;
  if (q > 0) {
    guint64 F = whole_loops(req, q);
    stats->loops = stats->sim_loops = F;
    /* Extrapolate while three short runs cost less than the full one. */
    for (guint64 N = opts->min_loops ? opts->min_loops : 4; !opts->exact && 3 * N + 3 < F; N *= 2) {
      gboolean done;
      if (!try_extrapolate(p, sys, comm, nbytes, choice, req, key, q, F, N, net, xfer, xfer_ctx,
                           opts, stats, &done, error))
        return FALSE;
      if (done)
        return TRUE;
    }
  }
  g_autoptr(FsCollPlan) plan = fs_coll_plan_new(comm, choice->algo, req, error);
  if (plan == NULL)
    return FALSE;
  FsCollExecParams ep;
  fs_coll_exec_params(p, sys, comm, req->op, nbytes, choice, plan, &ep);
  ep.key = key;
  return run_plan(plan, &ep, net, xfer, xfer_ctx, opts, stats, &stats->time, error);
}
