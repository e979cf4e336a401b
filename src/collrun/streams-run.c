/* streams-run.c — a stream model run on the flow network: every stream's
 * bytes started as flows at its pace after the base latency, and the end
 * the max-plus time gives, later by as much as the flows ended late
 * (fs_coll_streams_start and the run's accessors); a collective timed alone
 * by its stream model (fs_coll_streams_time_alone).  See streams.h. */
#include "collrun/streams-private.h"

#include <math.h>

#include "util/error.h"
#include "util/units.h"

struct FsCollStreamsRun {
  FsFlowNet *net;
  FsSim *sim;
  const FsCollStreams *s;
  FsCollTransferFn xfer;
  FsCollTransferCopiesFn xfer_copies; /* NULL: a folded stream as its width of transfers */
  void *xfer_ctx;
  FsCollStreamsDoneFn done;
  void *done_ctx;
  FsTime start, flows_start, end;
  guint pending;
  gboolean finished, ended;
  gboolean alone; /* nothing else on the network: a folded stream runs as one flow */
  GError *error;
};

static void run_finish(FsCollStreamsRun *run)
{
  if (run->finished)
    return;
  run->finished = TRUE;
  if (run->done)
    run->done(run->done_ctx, run);
}

static void end_event(void *ctx, uint64_t arg)
{
  (void)arg;
  run_finish(ctx);
}

/* The end once the streams are done at now: the max-plus time, later by as
 * much as the streams ended after T_bw and their latency. */
static void streams_done(FsCollStreamsRun *run)
{
  const FsCollStreams *s = run->s;
  FsTime now = fs_sim_now(run->sim);
  FsTime end = fs_time_add_sat(run->flows_start, fs_time_from_ps(s->mp));
  double lat = 0;
  for (guint i = 0; i < s->streams->len; i++) {
    const Stream *st = &g_array_index(s->streams, Stream, i);
    if (st->wire > 0)
      lat = MAX(lat, st->lat);
  }
  double alone = (double)run->flows_start + s->t_bw * 1e12 + lat;
  double late = (double)now - alone;
  /* Rounding of drain times to picoseconds is not lateness. */
  if (late > 1e-9 * s->t_bw * 1e12 + 64)
    end = fs_time_add_sat(end, fs_time_from_ps(late));
  run->end = MAX(end, now);
  run->ended = TRUE;
  if (run->end > now)
    fs_sim_at(run->sim, run->end, end_event, run, 0);
  else
    run_finish(run);
}

static void flow_done(void *ctx, const FsFlowInfo *info)
{
  (void)info;
  FsCollStreamsRun *run = ctx;
  g_assert(run->pending > 0);
  if (--run->pending == 0 && run->error == NULL)
    streams_done(run);
}

/* At the run's start plus the base latency: starts every stream's bytes as
 * flows at its pace (a folded stream as its width of transfers, or as one of
 * that many copies when xfer_copies is set); streams_done follows the last. */
static void kickoff(void *ctx, uint64_t arg)
{
  (void)arg;
  FsCollStreamsRun *run = ctx;
  const FsCollStreams *s = run->s;
  run->flows_start = fs_sim_now(run->sim);
  /* Count first: a flow may complete inside xfer. */
  run->pending = 1;
  for (guint i = 0; i < s->streams->len && run->error == NULL; i++) {
    const Stream *st = &g_array_index(s->streams, Stream, i);
    if (st->wire <= 0)
      continue;
    /* A folded stream runs as its width of flows, as many as share the
     * links with other traffic under max-min; each at its pace.  Alone,
     * they would share nothing but each other's paths (one key): one flow
     * of their bytes at their pace takes the same time. */
    guint w = run->alone ? 1 : MAX(st->width, 1);
    double pace = s->t_bw > 0 ? st->wire / w / s->t_bw : 0;
    if (w > 1 && run->xfer_copies != NULL) {
      /* The w transfers as one of w copies: the same rates. */
      run->pending++;
      GError *err = NULL;
      if (!run->xfer_copies(run->xfer_ctx, st->src_node, st->dst_node, (uint64_t)ceil(st->wire / w),
                            w, pace, st->key, flow_done, NULL, run, NULL, &err)) {
        run->pending--;
        run->error = err;
      }
      continue;
    }
    for (guint f = 0; f < w && run->error == NULL; f++) {
      run->pending++;
      GError *err = NULL;
      if (!run->xfer(run->xfer_ctx, st->src_node, st->dst_node, (uint64_t)ceil(st->wire / w), pace,
                     st->key, flow_done, NULL, run, NULL, &err)) {
        run->pending--;
        run->error = err;
      }
    }
  }
  if (run->error != NULL) {
    run->ended = TRUE;
    run->end = fs_sim_now(run->sim);
    run_finish(run);
    return;
  }
  flow_done(run, NULL);
}

FsCollStreamsRun *fs_coll_streams_start(FsFlowNet *net, const FsCollStreams *s,
                                        FsCollTransferFn xfer, void *xfer_ctx, FsTime at,
                                        FsCollStreamsDoneFn done, void *done_ctx)
{
  g_return_val_if_fail(net != NULL && s != NULL && xfer != NULL, NULL);
  FsCollStreamsRun *run = g_new0(FsCollStreamsRun, 1);
  run->net = net;
  run->sim = fs_flownet_sim(net);
  run->s = s;
  run->xfer = xfer;
  run->xfer_ctx = xfer_ctx;
  run->done = done;
  run->done_ctx = done_ctx;
  run->start = at;
  fs_sim_at(run->sim, fs_time_add_sat(at, s->ep.base_latency), kickoff, run, 0);
  return run;
}

void fs_coll_streams_run_set_copies(FsCollStreamsRun *run, FsCollTransferCopiesFn xfer_copies)
{
  g_return_if_fail(run != NULL);
  run->xfer_copies = xfer_copies;
}

gboolean fs_coll_streams_run_is_done(const FsCollStreamsRun *run)
{
  return run->finished;
}

FsTime fs_coll_streams_run_start_time(const FsCollStreamsRun *run)
{
  return run->start;
}

FsTime fs_coll_streams_run_end_time(const FsCollStreamsRun *run)
{
  return run->end;
}

gboolean fs_coll_streams_run_finish(FsCollStreamsRun *run, GError **error)
{
  if (run->error != NULL) {
    g_propagate_error(error, g_error_copy(run->error));
    return FALSE;
  }
  if (!run->finished) {
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_DEADLOCK,
                "collective streams did not complete: %u of %u streams still running",
                run->pending, run->s->streams->len);
    return FALSE;
  }
  return TRUE;
}

void fs_coll_streams_run_free(FsCollStreamsRun *run)
{
  if (run == NULL)
    return;
  g_clear_error(&run->error);
  g_free(run);
}

static gboolean not_done(void *data)
{
  return !((FsCollStreamsRun *)data)->finished;
}

gboolean fs_coll_streams_time_alone(const FsNcclParams *p, const FsCollSysInfo *sys,
                                    const FsComm *comm, uint64_t nbytes,
                                    const FsCollChoice *choice, const FsCollRequest *req,
                                    uint64_t key, FsFlowNet *net, FsCollTransferFn xfer,
                                    void *xfer_ctx, const FsCollStreamsOpts *opts,
                                    FsTime *elapsed, FsCollStreamsInfo *info, GError **error)
{
  g_autoptr(FsCollStreams) s = fs_coll_streams_new(p, sys, comm, nbytes, choice, req, key, net,
                                                   opts, error);
  if (s == NULL)
    return FALSE;
  FsSim *sim = fs_flownet_sim(net);
  /* A time past the clock's end is refused before it runs, as the step
   * model's extrapolations are (alone.c). */
  if (s->info.time >= FS_TIME_MAX - fs_sim_now(sim)) {
    g_autofree char *size = fs_format_size(req->bytes);
    return fs_set_clock_range_error(error, "%s of %s on %u ranks would end past the clock's end; "
                                    "time fewer bytes", fs_coll_op_name(req->op), size,
                                    fs_comm_size(comm));
  }
  g_autoptr(FsCollStreamsRun) run = fs_coll_streams_start(net, s, xfer, xfer_ctx,
                                                          fs_sim_now(sim), NULL, NULL);
  run->alone = TRUE;
  if (!fs_sim_run_while(sim, not_done, run, error))
    return FALSE;
  if (!fs_coll_streams_run_finish(run, error)) {
    fs_sim_run(sim, NULL); /* flows in flight point at the run */
    return FALSE;
  }
  *elapsed = run->end - run->start;
  if (info != NULL)
    fs_coll_streams_info(s, info);
  return TRUE;
}
