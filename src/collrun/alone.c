/* alone.c — a collective alone on the network: channel folding, step
 * extrapolation, rails and the guard to streams around the executor.  See
 * alone.h. */
#include "collrun/alone.h"

#include <inttypes.h>
#include <math.h>

#include "collrun/exec-params.h"
#include "collrun/rails.h"
#include "collrun/rotation.h"
#include "net/flowfile.h"
#include "util/error.h"

/* ---- The memo: rails and the stream models' shared work (alone.h) ----- */

/* The rails (rails.h) of a communicator, algorithm and channel count on a
 * network, NULL where none (the sizes of a sweep ask again). */
typedef struct {
  const FsComm *comm;
  const FsCollAlgo *algo;
  const FsFlowNet *net;
  guint nchannels;
  FsCollRails *rails; /* owned */
} RailsEntry;

/* The rotation (rotation.h) of a communicator, algorithm and channel
 * count on a network, with the NVSwitch planes bundled or not (the paths
 * differ), NULL where none. */
typedef struct {
  const FsComm *comm;
  const FsCollAlgo *algo;
  const FsFlowNet *net;
  guint nchannels;
  gboolean bundled;
  FsCollRotation *rot; /* owned */
  gboolean failed;     /* a run under it failed its watches: not tried again */
} RotationEntry;

struct FsCollAloneMemo {
  GArray *rails; /* RailsEntry (a sweep stores a few) */
  GArray *rotations; /* RotationEntry */
  FsCollStreamsMemo *streams; /* the stream models' (streams.h); made at first use */
  FsCollA2aMemo *a2a;          /* the alltoall load model's (a2a.h); made at first use */
};

FsCollAloneMemo *fs_coll_alone_memo_new(void)
{
  FsCollAloneMemo *m = g_new0(FsCollAloneMemo, 1);
  m->rails = g_array_new(FALSE, FALSE, sizeof(RailsEntry));
  m->rotations = g_array_new(FALSE, FALSE, sizeof(RotationEntry));
  return m;
}

void fs_coll_alone_memo_free(FsCollAloneMemo *m)
{
  if (m == NULL)
    return;
  for (guint i = 0; i < m->rails->len; i++)
    fs_coll_rails_free(g_array_index(m->rails, RailsEntry, i).rails);
  g_array_unref(m->rails);
  for (guint i = 0; i < m->rotations->len; i++)
    fs_coll_rotation_free(g_array_index(m->rotations, RotationEntry, i).rot);
  g_array_unref(m->rotations);
  fs_coll_streams_memo_free(m->streams);
  fs_coll_a2a_memo_free(m->a2a);
  g_free(m);
}

/* TRUE when runs fold identical channels (alone.h). */
static gboolean may_fold(const FsCollAloneOpts *opts, const FsFlowNet *net)
{
  return !opts->exact && opts->route_fixed != NULL && fs_flownet_model(net) == FS_NET_MAXMIN;
}

/* The plan of req to run: folded while it is built when runs fold (the
 * same plan as folding the whole one, fs_coll_plan_new_folded).  Its
 * latency depth is the whole plan's (a chain stays in its channel, and
 * every class of channels keeps one). */
static FsCollPlan *new_plan(const FsComm *comm, const FsCollAlgo *algo, const FsCollRequest *req,
                            const FsCollAloneOpts *opts, const FsFlowNet *net, GError **error)
{
  if (may_fold(opts, net))
    return fs_coll_plan_new_folded(comm, algo, req, opts->route_fixed, opts->route_ctx, error);
  return fs_coll_plan_new(comm, algo, req, error);
}

/* The rails of req when its step runs may make local rank 0's part only
 * (rails.h), else NULL: runs that fold (alone on a max-min network with
 * fixed routes), with a memo, which keeps them (borrowed from it), found
 * once per communicator, algorithm, channel count and network. */
static const FsCollRails *mirror_rails(const FsComm *comm, const FsCollAlgo *algo,
                                       const FsCollRequest *req, const FsCollAloneOpts *opts,
                                       const FsFlowNet *net)
{
  if (!may_fold(opts, net) || opts->route_paths == NULL || opts->memo == NULL ||
      algo->nccl != FS_NCCL_ALGO_NVLS_TREE)
    return NULL;
  GArray *memo = opts->memo->rails;
  for (guint i = 0; i < memo->len; i++) {
    const RailsEntry *e = &g_array_index(memo, RailsEntry, i);
    if (e->comm == comm && e->algo == algo && e->net == net && e->nchannels == req->nchannels)
      return e->rails;
  }
  RailsEntry e = {comm, algo, net, req->nchannels,
                  fs_coll_rails_new(comm, algo, req, net, opts->route_fixed, opts->route_paths,
                                    opts->route_ctx)};
  g_array_append_val(memo, e);
  return e.rails;
}

/* req, allowed to make as many steps as the step guard allows times its
 * channels when folded while built, keeping no more than the guard allows
 * (FsCollRequest.max_virtual): a plan past the guard whole that folding
 * brings under it. */
static FsCollRequest fold_past_guard(const FsCollRequest *req)
{
  FsCollRequest r = *req;
  guint limit = req->max_steps ? req->max_steps : fs_coll_plan_max_steps();
  r.max_virtual = (guint64)limit * MAX(req->nchannels, 1u);
  return r;
}

static gboolean run_plan_once(const FsCollPlan *run, const FsCollExecParams *params,
                              FsFlowNet *net, FsCollTransferFn xfer, void *xfer_ctx,
                              const FsCollAloneOpts *opts, FsCollAloneStats *stats, FsTime *t,
                              GError **error);

/* The memo's entry of the rotation of run's request on net with the
 * planes bundled or not (rotation.h; its rot NULL where none): found once
 * per communicator, algorithm, channel count, network and bundling. */
static RotationEntry *rotation_of(const FsCollPlan *run, const FsCollAloneOpts *opts,
                                  const FsFlowNet *net, gboolean bundled)
{
  const FsCollRequest *rq = fs_coll_plan_request(run);
  const FsComm *comm = fs_coll_plan_comm(run);
  const FsCollAlgo *algo = fs_coll_plan_algo(run);
  GArray *memo = opts->memo->rotations;
  for (guint i = 0; i < memo->len; i++) {
    RotationEntry *e = &g_array_index(memo, RotationEntry, i);
    if (e->comm == comm && e->algo == algo && e->net == net && e->nchannels == rq->nchannels &&
        e->bundled == bundled)
      return e;
  }
  RotationEntry e = {comm, algo, net, rq->nchannels, bundled,
                     fs_coll_rotation_new(comm, algo, rq, net, opts->route_fixed, opts->flow_paths,
                                          opts->route_ctx),
                     FALSE};
  g_array_append_val(memo, e);
  return &g_array_index(memo, RotationEntry, memo->len - 1);
}

/* run_plan_once, for a plan whose channels are made for one rotation each
 * (FsCollRequest.rotation) under the rotation's aliases and watches
 * (rotation.h); where it has none on net, or a watch failed (in this run,
 * or in an earlier one under the memo, after which it is not tried again:
 * a failed try costs its run on top of the whole plan's), the whole plan
 * runs instead.  A build that checks mirrors (fs_plan_check_mirrors)
 * runs the whole plan after a rotated run that held and stops unless the
 * two times are equal. */
static gboolean run_plan_turned(const FsCollPlan *run, const FsCollExecParams *params,
                                FsFlowNet *net, FsCollTransferFn xfer, void *xfer_ctx,
                                const FsCollAloneOpts *opts, gboolean bundled,
                                FsCollAloneStats *stats, FsTime *t, GError **error)
{
  const FsCollRequest *rq = fs_coll_plan_request(run);
  if (rq->rotation == 0)
    return run_plan_once(run, params, net, xfer, xfer_ctx, opts, stats, t, error);
  RotationEntry *e = rotation_of(run, opts, net, bundled);
  FsTime turned = -1;
  if (e->rot != NULL && !e->failed) {
    fs_coll_rotation_begin(e->rot, net);
    gboolean ok = run_plan_once(run, params, net, xfer, xfer_ctx, opts, stats, t, error);
    gboolean held = fs_coll_rotation_end(e->rot, net);
    if (!ok)
      return FALSE;
    stats->rotated_runs += held;
    e->failed = !held;
    if (held && !fs_plan_check_mirrors())
      return TRUE;
    turned = held ? *t : -1;
  }
  FsCollRequest r = *rq;
  r.rotation = r.rotation_order = 0;
  g_autoptr(FsCollPlan) whole = new_plan(fs_coll_plan_comm(run), fs_coll_plan_algo(run), &r, opts,
                                         net, error);
  if (whole == NULL || !run_plan_once(whole, params, net, xfer, xfer_ctx, opts, stats, t, error))
    return FALSE;
  if (turned >= 0 && turned != *t)
    g_error("plan rotation: %s %s on %u ranks, %u channels rotated by %u took %" PRId64
            " ps, the whole plan %" PRId64 " ps",
            fs_coll_plan_algo(run)->name, fs_coll_op_name(rq->op),
            fs_comm_size(fs_coll_plan_comm(run)), rq->nchannels,
            rq->rotation, (int64_t)turned, (int64_t)*t);
  return TRUE;
}

/* run_plan_turned with the NVSwitch planes bundled (alone.h, "Plane
 * bundles") where runs fold, the caller can bundle and no connection of
 * the plan pins a flow to a bundled plane; a run that did not hold all the
 * same (a flow pinned to a plane met a bundled transfer) is repeated
 * without them. */
static gboolean run_plan_bundled(const FsCollPlan *run, const FsCollExecParams *params,
                                 FsFlowNet *net, FsCollTransferFn xfer, void *xfer_ctx,
                                 const FsCollAloneOpts *opts, FsCollAloneStats *stats, FsTime *t,
                                 GError **error)
{
  if (!may_fold(opts, net) || opts->plane_bundles == NULL ||
      (opts->planes_free != NULL &&
       !fs_coll_plan_routes_fixed(run, opts->planes_free, opts->route_ctx)))
    return run_plan_turned(run, params, net, xfer, xfer_ctx, opts, FALSE, stats, t, error);
  opts->plane_bundles(opts->route_ctx, TRUE);
  gboolean ok = run_plan_turned(run, params, net, xfer, xfer_ctx, opts, TRUE, stats, t, error);
  gboolean held = opts->plane_bundles(opts->route_ctx, FALSE);
  if (!ok || held) {
    stats->bundled_runs += ok;
    return ok;
  }
  stats->unbundled_reruns++;
  return run_plan_turned(run, params, net, xfer, xfer_ctx, opts, FALSE, stats, t, error);
}

/* Runs plan (from new_plan: folded already where runs fold, and a plan it
 * left unfolded is one fs_coll_plan_fold cannot fold) with params; adds to
 * stats.  A plan of local rank 0's part (FsCollRequest.mirror_rails) runs
 * with the rails' watches, and when a watched channel reached its capacity
 * (the other ranks would not have run as rank 0) the whole plan runs
 * instead. */
static gboolean run_plan(const FsCollPlan *plan, const FsCollExecParams *params, FsFlowNet *net,
                         FsCollTransferFn xfer, void *xfer_ctx, const FsCollAloneOpts *opts,
                         const FsCollRails *rails, FsCollAloneStats *stats, FsTime *t,
                         GError **error)
{
  if (rails == NULL || !fs_coll_plan_request(plan)->mirror_rails)
    return run_plan_bundled(plan, params, net, xfer, xfer_ctx, opts, stats, t, error);
  fs_coll_rails_watch(rails, net);
  gboolean ok = run_plan_once(plan, params, net, xfer, xfer_ctx, opts, stats, t, error);
  if (!fs_coll_rails_held(rails, net) && ok) {
    FsCollRequest r = *fs_coll_plan_request(plan);
    r.mirror_rails = FALSE;
    g_autoptr(FsCollPlan) whole = new_plan(fs_coll_plan_comm(plan), fs_coll_plan_algo(plan), &r,
                                           opts, net, error);
    ok = whole != NULL &&
         run_plan_once(whole, params, net, xfer, xfer_ctx, opts, stats, t, error);
  }
  return ok;
}

/* run_plan without rails. */
static gboolean run_plan_once(const FsCollPlan *run, const FsCollExecParams *params,
                              FsFlowNet *net, FsCollTransferFn xfer, void *xfer_ctx,
                              const FsCollAloneOpts *opts, FsCollAloneStats *stats, FsTime *t,
                              GError **error)
{
  stats->width = fs_coll_plan_width(run);
  stats->runs++;
  guint nch = fs_coll_plan_request(run)->nchannels, kinds = 0;
  /* In the analytic model flows share nothing: one channel of each kind
   * runs (dedup.h). */
  FsCollExecParams ep = *params;
  g_autofree double *caps = NULL;
  if (opts->route_paths != NULL && fs_flownet_model(net) == FS_NET_ANALYTIC) {
    ep.share_paths = opts->route_paths;
    ep.share_ctx = opts->route_ctx;
    caps = fs_coll_share_caps(run, net, ep.key, ep.share_paths, ep.share_ctx);
  }
  if (!opts->exact && opts->route_profile != NULL && fs_flownet_model(net) == FS_NET_ANALYTIC)
    ep.channel_mask = fs_coll_plan_distinct_channels(run, opts->route_profile, opts->route_ctx,
                                                     caps, &kinds);
  stats->sim_channels = ep.channel_mask ? kinds : nch / stats->width;
  if (ep.channel_mask) {
    for (guint i = 0; i < fs_coll_plan_n_steps(run); i++)
      stats->sim_steps += ep.channel_mask >> fs_coll_plan_step(run, i)->channel & 1;
  } else {
    stats->sim_steps += fs_coll_plan_n_steps(run);
  }
  return fs_coll_run_alone(net, run, &ep, xfer, xfer_ctx, t, error);
}

/* Whole loops of loop bytes q in the smallest channel share of req. */
static guint64 whole_loops(const FsCollRequest *req, uint64_t q)
{
  guint64 f = G_MAXUINT64;
  for (guint c = 0; c < req->nchannels; c++)
    f = MIN(f, fs_coll_channel_bytes(req->bytes, req->dtype, req->nchannels, c) / q);
  return f;
}

/* A plan of the request cut to x ring steps per loop
 * (FsCollRequest.max_ring_steps) instead of its S, run with the full
 * plan's executor parameters (step extrapolation, alone.h). */
typedef struct {
  const FsNcclParams *p;
  const FsCollSysInfo *sys;
  const FsComm *comm;
  uint64_t nbytes;
  const FsCollChoice *choice;
  const FsCollRequest *req;
  uint64_t key;
  guint64 S;
  FsFlowNet *net;
  FsCollTransferFn xfer;
  void *xfer_ctx;
  const FsCollAloneOpts *opts;
  FsCollAloneStats *stats;
  const FsCollRails *rails; /* run_plan's (NULL: none) */
} Attempt;

/* Builds the cut plan of x ring steps per loop into *pl; *depth: its
 * latency depth. */
static gboolean attempt_depth(const Attempt *at, guint64 x, FsCollPlan **pl, gint64 *depth,
                              GError **error)
{
  FsCollRequest r = *at->req;
  r.max_ring_steps = (guint)x;
  if ((*pl = new_plan(at->comm, at->choice->algo, &r, at->opts, at->net, error)) == NULL)
    return FALSE;
  *depth = fs_coll_plan_latency_depth(*pl);
  return TRUE;
}

/* The time of the cut plan pl (from attempt_depth) run with ep. */
static gboolean attempt_time(const Attempt *at, const FsCollPlan *pl, const FsCollExecParams *ep,
                             FsTime *t, GError **error)
{
  return run_plan(pl, ep, at->net, at->xfer, at->xfer_ctx, at->opts, at->rails, at->stats, t,
                  error);
}

/* Tries one ring-step extrapolation on the truncated plans of n[0..3] units: the
 * latency depth must grow by a whole count per unit and the time per unit must agree within tol
 * from n[0] to n[2] and again out to n[3]; then the full time is t[2] plus the remaining units
 * at that rate, stored in at->stats with *done = TRUE. Runs at most four short plans (fewer
 * when a check fails early) and frees them. Returns FALSE only on a
 * planning or run error; a regime that is not periodic just leaves *done FALSE. */
static gboolean try_extrapolate(const Attempt *at, const guint64 n[4], double tol, gboolean *done,
                                GError **error)
{
  *done = FALSE;
  FsCollPlan *pl[4] = {NULL, NULL, NULL, NULL};
  gint64 depth[4];
  FsTime t[4];
  gboolean ok = TRUE;
  /* The latency depth must grow by the same whole count per unit (checked
   * on each plan before it runs); the first two give the full plan's. */
  gint64 a = (gint64)(n[1] - n[0]), b = (gint64)(n[2] - n[1]), c = (gint64)(n[3] - n[2]);
  ok = attempt_depth(at, n[0], &pl[0], &depth[0], error) &&
       attempt_depth(at, n[1], &pl[1], &depth[1], error);
  gint64 dd = ok ? depth[1] - depth[0] : 0;
  if (ok && dd >= 0 && dd % a == 0) {
    guint64 full_depth = (guint64)depth[0] + (at->S - n[0]) * (guint64)(dd / a);
    FsCollExecParams ep;
    fs_coll_exec_params_depth(at->p, at->sys, at->comm, at->req->op, at->nbytes, at->choice,
                              (guint)MIN(full_depth, G_MAXUINT), &ep);
    ep.key = at->key;
    ok = attempt_depth(at, n[2], &pl[2], &depth[2], error);
    if (ok && (depth[2] - depth[1]) * a == dd * b) {
      ok = attempt_time(at, pl[0], &ep, &t[0], error) &&
           attempt_time(at, pl[1], &ep, &t[1], error) &&
           attempt_time(at, pl[2], &ep, &t[2], error);
      double s1 = ok ? (double)(t[1] - t[0]) / (double)a : 0;
      double s2 = ok ? (double)(t[2] - t[1]) / (double)b : 0;
      if (ok && s1 > 0 && fabs(s2 - s1) <= tol * s1) {
        ok = attempt_depth(at, n[3], &pl[3], &depth[3], error);
        if (ok && (depth[3] - depth[2]) * a == dd * c) {
          ok = attempt_time(at, pl[3], &ep, &t[3], error);
          double s3 = ok ? (double)(t[3] - t[2]) / (double)c : 0;
          if (ok && fabs(s3 - s2) <= tol * s2) {
            FsCollAloneStats *stats = at->stats;
            stats->time = fs_time_add_sat(t[2], fs_time_from_ps((double)(at->S - n[2]) * s2));
            stats->period = (FsTime)llround(s2);
            stats->sim_ring_steps = (guint)n[3];
            *done = TRUE;
          }
        }
      }
    }
  }
  for (guint i = 0; i < 4; i++)
    fs_coll_plan_free(pl[i]);
  return ok;
}

/* *over: the plan of req (F >= 2 whole loops of q bytes per channel)
 * would have more steps than the step guard allows (req->max_steps, else
 * fs_coll_plan_max_steps()) when built whole, its steps counted without
 * being built (fs_coll_plan_count_loop_steps).  *foldable (may be
 * NULL): it would not have more than the guard allows times its channels,
 * so that folding while building (which stores 1/k of k alike channels,
 * coll/plan.h) might bring it under.  FALSE only when they cannot be
 * planned for another reason.  Cost: the algorithm's calls for three
 * loops. */
static gboolean over_guard(const FsComm *comm, const FsCollAlgo *algo, const FsCollRequest *req,
                           uint64_t q, guint64 F, gboolean *over, gboolean *foldable,
                           GError **error)
{
  double n;
  if (!fs_coll_plan_count_loop_steps(comm, algo, req, q, F, &n, error))
    return FALSE;
  guint limit = req->max_steps ? req->max_steps : fs_coll_plan_max_steps();
  *over = n > (double)limit;
  if (foldable != NULL)
    *foldable = n <= (double)limit * MAX(req->nchannels, 1u);
  return TRUE;
}

/* fs_coll_time_alone without the check of the clock's range.  Tries ring-step extrapolation
 * (K, K+1, K+2, 2K+2 steps, also over the host period P), and else runs the whole plan (or
 * says *too_big where it is past the step guard and streams can time it). Runs of req with
 * mirror_rails make rank 0's part under rails' watches (run_plan). The cost is that of the
 * short runs tried, and of the whole plan only when no shortcut holds. */
static gboolean time_alone(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                           uint64_t nbytes, const FsCollChoice *choice, const FsCollRequest *req,
                           uint64_t key, FsFlowNet *net, FsCollTransferFn xfer, void *xfer_ctx,
                           const FsCollAloneOpts *opts, FsCollAloneStats *stats, gboolean *too_big,
                           GError **error)
{
  *too_big = FALSE;
  uint64_t q = choice->algo->loop_bytes && req->nchannels >= 1 && fs_comm_size(comm) > 1
                 ? choice->algo->loop_bytes(comm, req)
                 : 0;
  /* F whole loops per channel (and a last, partial loop). */
  guint64 F = q > 0 ? whole_loops(req, q) : 0;
  /* A whole plan past the step guard whose stream model is trusted
   * (streams.h, fs_coll_exec_streams_trusted) runs as streams at once,
   * before any plan is built: the shortcuts' short runs
   * of thousands of ranks cost seconds each and, for the NVLS tree across
   * many nodes, fail (alone.h, "Too big for steps"). */
  gboolean can_stream = !opts->exact && opts->route_paths != NULL;
  if (can_stream && q > 0 && F >= 2 &&
      fs_coll_exec_streams_trusted(choice->algo, req->op)) {
    if (!over_guard(comm, choice->algo, req, q, F, too_big, NULL, error))
      return FALSE;
    if (*too_big)
      return TRUE;
  }
  /* Step runs make local rank 0's part alone where every local rank
   * mirrors it (rails.h): the same times, 1/L of the transfers. */
  const FsCollRails *rails = mirror_rails(comm, choice->algo, req, opts, net);
  FsCollRequest mirrored = *req;
  mirrored.mirror_rails = rails != NULL;
  /* And NCCL's tree makes one channel of each rotation (rotation.h): the
   * same times, 1/m of the transfers. */
  if (may_fold(opts, net) && opts->flow_paths != NULL && opts->memo != NULL)
    mirrored.rotation = fs_coll_rotation_shift(comm, choice->algo, req, &mirrored.rotation_order);
  req = &mirrored;
  if (q > 0)
    stats->loops = stats->sim_loops = F;
  /* Step extrapolation: every loop's ring steps are alike, so the plan
   * with K ring steps per loop grows by the same time per step once the
   * slices of a step stream through the ring (checked on K, K+1, K+2,
   * 2K+2, try_extrapolate). */
  guint S = choice->algo->ring_steps && fs_comm_size(comm) > 1
              ? choice->algo->ring_steps(comm, req) : 0;
  stats->ring_steps = stats->sim_ring_steps = S;
  /* A ring that visits P ranks per host between network hops repeats
   * every P steps, not every step (alone.h): when the steps disagree, the
   * plans of B, B+P, B+2P and B+2P+M steps (B ≡ S mod P, M a multiple of
   * P) are checked the same way. */
  guint P = fs_comm_uniform_ranks_per_host(comm);
  for (guint64 K = MAX(opts->min_steps, 4); !opts->exact && 5 * K + 5 < S; K *= 2) {
    const guint64 n[4] = {K, K + 1, K + 2, 2 * K + 2};
    const Attempt at = {p, sys, comm, nbytes, choice, req, key, S, net, xfer, xfer_ctx, opts,
                        stats, rails};
    gboolean done;
    if (!try_extrapolate(&at, n, 1e-6, &done, error))
      return FALSE;
    if (done)
      return TRUE;
    guint64 B = K + (S - K) % P, M = (K + P - 1) / P * P;
    const guint64 np[4] = {B, B + P, B + 2 * P, B + 2 * P + M};
    if (P < 2 || 4 * B + 5 * P + M >= S || opts->period_off)
      continue;
    if (!try_extrapolate(&at, np, 1e-6, &done, error))
      return FALSE;
    if (done) {
      stats->step_period = P;
      return TRUE;
    }
  }
  /* No shortcut: the whole plan.  One past the step guard (coll/plan.h)
   * cannot run: where the stream model can time it, it does
   * (fs_coll_time_alone).  A plan of whole loops is measured before it is
   * built (its one- and two-loop plans); any other fails while it is
   * built.  One past the guard whole
   * but that folding might bring under it is built folded, which fails
   * at the guard (and then streams) or runs as steps: CollNetDirect's
   * all_reduce of 1 GiB on 16,384 GPUs keeps 1/16 of its steps. */
  FsCollRequest whole = *req;
  if (can_stream && q > 0 && F >= 2 && !fs_coll_exec_streams_trusted(choice->algo, req->op)) {
    gboolean foldable;
    if (!over_guard(comm, choice->algo, req, q, F, too_big, &foldable, error))
      return FALSE;
    if (*too_big && !(foldable && may_fold(opts, net)))
      return TRUE;
    if (*too_big)
      whole = fold_past_guard(req);
    *too_big = FALSE;
  }
  GError *perr = NULL;
  g_autoptr(FsCollPlan) plan = new_plan(comm, choice->algo, &whole, opts, net, &perr);
  if (plan == NULL) {
    if (can_stream && g_error_matches(perr, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_LIMIT)) {
      g_error_free(perr);
      *too_big = TRUE;
      return TRUE;
    }
    g_propagate_error(error, perr);
    return FALSE;
  }
  FsCollExecParams ep;
  fs_coll_exec_params(p, sys, comm, req->op, nbytes, choice, plan, &ep);
  ep.key = key;
  return run_plan(plan, &ep, net, xfer, xfer_ctx, opts, rails, stats, &stats->time, error);
}

/* Times req with the stream model (streams.h), sharing the memo's streams. */
static gboolean time_streams(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                             uint64_t nbytes, const FsCollChoice *choice, const FsCollRequest *req,
                             uint64_t key, FsFlowNet *net, FsCollTransferFn xfer, void *xfer_ctx,
                             const FsCollAloneOpts *opts, FsCollAloneStats *stats, GError **error)
{
  FsCollStreamsOpts so = {opts->route_fixed, opts->route_paths, opts->route_ctx, NULL};
  if (opts->memo != NULL) {
    if (opts->memo->streams == NULL)
      opts->memo->streams = fs_coll_streams_memo_new();
    so.memo = opts->memo->streams;
  }
  FsCollStreamsInfo info;
  *stats = (FsCollAloneStats){.width = 1};
  if (!fs_coll_streams_time_alone(p, sys, comm, nbytes, choice, req, key, net, xfer, xfer_ctx,
                                  &so, &stats->time, &info, error))
    return FALSE;
  stats->streams = TRUE;
  stats->runs = 1;
  stats->sim_steps = info.sim_steps;
  stats->loops = info.loops;
  stats->ring_steps = info.ring_steps;
  stats->sim_channels = info.streams;
  return TRUE;
}

/* See alone.h: the stream model where opts->exec picks it, else time_alone (the stream model
 * when the whole plan would pass the step guard), and an error when the time passes the
 * clock's range. */
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
  /* An alltoall across hosts: the load model (a2a.h) where --exec streams
   * asks for a model, where auto picks it, or, under steps, from
   * FS_COLL_A2A_STEPS_TRANSFERS transfers (n(n-1) x channels) or past the
   * plan-step guard or the flow guard; it may decline (routes it cannot
   * decompose), and then the steps run. */
  gboolean a2a = fs_coll_a2a_applies(comm, choice, req);
  double a2a_n = fs_coll_a2a_transfers(comm, req);
  guint max_flows = fs_flow_list_max_flows();
  if (!opts->exact && opts->route_relay != NULL && opts->route_once != NULL &&
      opts->route_rail != NULL && a2a &&
      (opts->exec == FS_COLL_EXEC_STREAMS ||
       (opts->exec == FS_COLL_EXEC_AUTO && fs_coll_a2a_pick(comm, req)) ||
       a2a_n >= (double)FS_COLL_A2A_STEPS_TRANSFERS ||
       a2a_n > (double)(req->max_steps ? req->max_steps : fs_coll_plan_max_steps()) ||
       a2a_n > (double)max_flows)) {
    FsCollA2aRoutes r = {opts->route_relay, opts->route_once, opts->route_rail,
                         opts->route_fabric, opts->route_ctx};
    if (opts->memo != NULL && opts->memo->a2a == NULL)
      opts->memo->a2a = fs_coll_a2a_memo_new();
    gboolean timed;
    if (!fs_coll_a2a_time_alone(p, sys, comm, nbytes, choice, req, net, &r,
                                opts->memo != NULL ? opts->memo->a2a : NULL, &timed,
                                &stats->time, error))
      return FALSE;
    if (timed) {
      stats->streams = TRUE;
      stats->runs = 1;
      return TRUE;
    }
  }
  /* As steps, an alltoall across hosts starts every transfer at once: past
   * the flow guard they would not fit in memory (16.7 M on 4,096 GPUs). */
  if (a2a && a2a_n > (double)max_flows) {
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_LIMIT,
                "the flow guard: the alltoall on %u ranks × %u channels runs as steps with "
                "%.0f transfers at once, more than %u; %sraise the limit "
                "(FABRICSIM_MAX_FLOWS=N)",
                fs_comm_size(comm), req->nchannels, a2a_n, max_flows,
                opts->exact ? "drop --exact (the load model times it, a2a.h), or " : "");
    return FALSE;
  }
  if (!opts->exact && opts->route_paths != NULL &&
      (opts->exec == FS_COLL_EXEC_STREAMS ||
       (opts->exec == FS_COLL_EXEC_AUTO && fs_coll_exec_pick_streams(comm, choice->algo, req))))
    return time_streams(p, sys, comm, nbytes, choice, req, key, net, xfer, xfer_ctx, opts, stats,
                        error);
  gboolean too_big;
  if (!time_alone(p, sys, comm, nbytes, choice, req, key, net, xfer, xfer_ctx, opts, stats,
                  &too_big, error))
    return FALSE;
  if (too_big)
    return time_streams(p, sys, comm, nbytes, choice, req, key, net, xfer, xfer_ctx, opts, stats,
                        error);
  /* An extrapolated time saturates at the clock's end (a simulated one
   * stops the run before it). */
  if (stats->time >= FS_TIME_MAX - fs_sim_now(fs_flownet_sim(net))) {
    g_autofree char *size = fs_format_size(req->bytes);
    return fs_set_clock_range_error(error, "%s of %s on %u ranks would end past the clock's end; "
                                    "time fewer bytes", fs_coll_op_name(req->op), size,
                                    fs_comm_size(comm));
  }
  return TRUE;
}
