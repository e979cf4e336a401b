/* exec.c — the plan executor on FsFlowNet.  See exec.h.
 *
 * State per step: the number of unfinished dependencies.  Successor lists
 * are built once (CSR, in step order, so completions release successors
 * in a deterministic order).  An edge to the next transfer of the same
 * connection (FIFO order) is released when the transfer drains, every
 * other edge when it completes (exec.h).  Steps whose dependencies are all
 * done start at the current simulated time. */
#include "collrun/exec.h"

#include <math.h>

#include "core/rng.h"
#include "util/error.h"

struct FsCollRun {
  FsFlowNet *net;
  FsSim *sim;
  const FsCollPlan *plan;
  const FsCollStep *steps; /* the plan's steps, contiguous (NULL when empty) */
  FsCollExecParams params;
  FsCollTransferFn xfer;
  void *xfer_ctx;
  uint64_t key_base;   /* transfer keys: key_base + a hash of the connection */
  FsCollRunDoneFn done;
  void *done_ctx;
  guint n;
  guint *pending;      /* unfinished deps per step */
  FsTime *ready_at;    /* latest dependency completion (+ latency) per step */
  FsTime last;         /* latest sink completion (+ latency) */
  guint *succ_off;     /* n + 1 */
  gboolean *has_data_succ; /* a data dependency (not only credits) waits for the step */
  guint8 *drained;     /* its drain edges were released (a transfer drained) */
  uint32_t *succ;
  guint remaining;     /* steps not yet completed */
  /* Steps ready to start now.  The flow engine may complete a flow inside
   * fs_flownet_start (an empty flow on a zero-latency path), so starts go
   * through this queue instead of recursing. */
  guint *queue;        /* n + 1 slots: a step is queued at most once */
  guint queue_len, queue_head;
  gboolean draining;
  FsTime start, end;
  gboolean finished;
  GError *error;
  double *share_cap;   /* per step: its connection's cap (fs_coll_share_caps), or NULL */
  /* Per connection (FsCollStep.conn), from its first transfer on: its
   * endpoints' topology nodes and its ECMP key, the same for every
   * transfer of it (ConnEnds.src == CONN_UNSET before). */
  struct ConnEnds *conn_ends;
  guint n_conns;
};

/* What every transfer of one connection starts with (FsCollRun.conn_ends). */
typedef struct ConnEnds {
  int src, dst;        /* topology nodes (fs_coll_ep_node), -1 for none */
  uint64_t key;        /* conn_key */
} ConnEnds;
#define CONN_UNSET G_MININT

static void start_step(FsCollRun *run, guint i);

/* Marks a credit edge in the successor lists (steps < 2^24, coll/plan.h). */
#define CREDIT_EDGE 0x80000000u
/* Marks an edge to the next transfer of the same connection (FIFO order,
 * fs_coll_step_same_conn): released when the transfer drains (exec.h). */
#define DRAIN_EDGE 0x40000000u
#define EDGE_STEP(e) ((e) & ~(CREDIT_EDGE | DRAIN_EDGE))

/* Starts the queued steps in order, unless a caller up the stack is
 * already doing so. */
static void drain(FsCollRun *run)
{
  if (run->draining)
    return;
  run->draining = TRUE;
  while (run->queue_head < run->queue_len) {
    guint s = run->queue[run->queue_head++];
    start_step(run, s);
  }
  run->queue_len = 0;
  run->queue_head = 0;
  run->draining = FALSE;
}

/* Starts step i now, through the queue (see FsCollRun.queue). */
static void start_now(FsCollRun *run, guint i)
{
  g_assert(run->queue_len <= run->n);
  run->queue[run->queue_len++] = i;
  drain(run);
}

static void finish_run(FsCollRun *run)
{
  if (run->finished)
    return;
  run->finished = TRUE;
  run->end = MAX(run->last, fs_sim_now(run->sim));
  if (run->done)
    run->done(run->done_ctx, run);
}

static void start_event(void *ctx, uint64_t arg)
{
  start_now(ctx, (guint)arg);
}

static void end_event(void *ctx, uint64_t arg)
{
  (void)arg;
  finish_run(ctx);
}

/* The latency between step i's completion and the use of its data over
 * successor edge e (FsCollRun.succ; e == G_MAXUINT: by the caller's
 * buffer): none for a credit; for the next transfer of the same
 * connection (DRAIN_EDGE: fs_coll_step_same_conn, marked once when the
 * lists are built), the network step of a ring step's head; else the step
 * latency of i's transfer. */
static FsTime edge_latency(const FsCollRun *run, guint i, uint32_t e)
{
  const FsCollStep *a = &run->steps[i];
  if (a->kind != FS_STEP_XFER || (e != G_MAXUINT && (e & CREDIT_EDGE)))
    return 0;
  if (e != G_MAXUINT && (e & DRAIN_EDGE))
    return a->inter && run->steps[EDGE_STEP(e)].ring_head ? run->params.ring_step_latency_inter : 0;
  return run->params.step_latency[a->inter ? 1 : 0];
}

/* Releases successor edge k of step i at now: its successor becomes
 * ready the edge's latency later, and starts (now or then) once it has no
 * dependency left. */
static void release(FsCollRun *run, guint i, guint k, FsTime now)
{
  uint32_t s = EDGE_STEP(run->succ[k]);
  g_assert(run->pending[s] > 0);
  FsTime lat = edge_latency(run, i, run->succ[k]);
  run->ready_at[s] = MAX(run->ready_at[s], fs_time_add_sat(now, lat));
  if (--run->pending[s] == 0) {
    if (run->ready_at[s] <= now)
      start_now(run, s);
    else
      fs_sim_at(run->sim, run->ready_at[s], start_event, run, s);
  }
}

/* Transfer i has drained (its last byte left the source): the next
 * transfer of its connection may follow (exec.h).  Once per step. */
static void drain_step(FsCollRun *run, guint i)
{
  if (run->error != NULL || run->drained[i])
    return;
  run->drained[i] = 1;
  FsTime now = fs_sim_now(run->sim);
  for (guint k = run->succ_off[i]; k < run->succ_off[i + 1]; k++)
    if (run->succ[k] & DRAIN_EDGE)
      release(run, i, k, now);
}

/* Marks step i complete and starts (now or after the latency) every
 * successor that became ready; its drain edges first, if its transfer did
 * not report its drain. */
static void complete_step(FsCollRun *run, guint i)
{
  if (run->error != NULL)
    return;
  drain_step(run, i);
  if (run->error != NULL)
    return;
  FsTime now = fs_sim_now(run->sim);
  if (!run->has_data_succ[i])
    run->last = MAX(run->last, fs_time_add_sat(now, edge_latency(run, i, G_MAXUINT)));
  for (guint k = run->succ_off[i]; k < run->succ_off[i + 1]; k++)
    if (!(run->succ[k] & DRAIN_EDGE))
      release(run, i, k, now);
  g_assert(run->remaining > 0);
  if (--run->remaining == 0) {
    if (run->last > now)
      fs_sim_at(run->sim, run->last, end_event, run, 0);
    else
      finish_run(run);
  }
}

static void flow_done(void *ctx, const FsFlowInfo *info)
{
  complete_step(ctx, (guint)GPOINTER_TO_SIZE(info->user));
}

static void flow_drained(void *ctx, const FsFlowInfo *info)
{
  drain_step(ctx, (guint)GPOINTER_TO_SIZE(info->user));
}

static void reduce_done(void *ctx, uint64_t arg)
{
  complete_step(ctx, (guint)arg);
}

static void fail(FsCollRun *run, GError *error)
{
  if (run->error == NULL)
    run->error = error;
  else
    g_error_free(error);
  finish_run(run);
}

/* The ECMP key of a transfer: its run's key and its connection (channel,
 * lane, endpoints), not its step — NCCL keeps a connection's queue pairs
 * for the whole collective, so a flow-hashing fabric (RoCE ECMP on the
 * 5-tuple) sends every transfer of a connection along one path (exec.h). */
static uint64_t conn_key(const FsCollRun *run, const FsCollStep *s)
{
  uint64_t c = fs_hash64(((uint64_t)s->src << 32 | s->dst) ^
                         fs_hash64(((uint64_t)s->channel << 8 | s->lane) + 1));
  return run->key_base + (c & 0xffffffffu);
}

/* The endpoints' nodes and key of transfer s's connection: worked out at
 * its first transfer, then read (into *tmp when s->conn lies outside the
 * plan's connections). */
static const ConnEnds *conn_ends(FsCollRun *run, const FsCollStep *s, ConnEnds *tmp)
{
  ConnEnds *e = s->conn < run->n_conns ? &run->conn_ends[s->conn] : tmp;
  if (e == tmp || e->src == CONN_UNSET) {
    const FsComm *comm = fs_coll_plan_comm(run->plan);
    e->src = fs_coll_ep_node(comm, s->src, s->channel);
    e->dst = fs_coll_ep_node(comm, s->dst, s->channel);
    e->key = conn_key(run, s);
  }
  return e;
}

static void start_step(FsCollRun *run, guint i)
{
  if (run->error != NULL)
    return;
  const FsCollStep *s = &run->steps[i];
  if (s->kind == FS_STEP_REDUCE) {
    FsTime d = 0;
    if (run->params.reduce_bw > 0)
      d = fs_time_from_s((double)s->bytes / run->params.reduce_bw);
    fs_sim_after(run->sim, d, reduce_done, run, i);
    return;
  }
  ConnEnds tmp;
  const ConnEnds *ends = conn_ends(run, s, &tmp);
  int src = ends->src, dst = ends->dst;
  if (src < 0 || dst < 0) {
    fail(run, g_error_new(FS_COLL_ERROR, FS_COLL_ERROR_INVALID,
                          "step %u: endpoint %s has no topology node (bind ranks with fs_comm_set_gpu, "
                          "NVLS and CollNet switches with their setters)",
                          i, src < 0 ? "source" : "destination"));
    return;
  }
  GError *err = NULL;
  /* A folded step stands for `width` identical flows (coll/plan.h): one flow of
   * their bytes at their summed cap. */
  guint width = MAX(s->width, 1);
  uint64_t wire = (uint64_t)ceil((double)s->bytes / run->params.payload) * width;
  double cap = run->params.rate_cap;
  if (s->inter && run->params.rate_cap_inter > 0)
    cap = cap > 0 ? MIN(cap, run->params.rate_cap_inter) : run->params.rate_cap_inter;
  cap *= width;
  if (run->share_cap != NULL && run->share_cap[i] > 0)
    cap = cap > 0 ? MIN(cap, run->share_cap[i]) : run->share_cap[i];
  if (!run->xfer(run->xfer_ctx, src, dst, wire, cap, ends->key, flow_done, flow_drained,
                 run, GSIZE_TO_POINTER((gsize)i), &err))
    fail(run, err);
}

/* TRUE when step i's channel runs (FsCollExecParams.channel_mask). */
static gboolean step_runs(const FsCollRun *run, guint i)
{
  guint c = run->steps[i].channel;
  return run->params.channel_mask == 0 || (c < 64 && (run->params.channel_mask >> c & 1));
}

/* Starts every step without dependencies: the event at `at`. */
static void kickoff(void *ctx, uint64_t arg)
{
  (void)arg;
  FsCollRun *run = ctx;
  if (run->remaining == 0) {
    finish_run(run);
    return;
  }
  /* Queue every root before starting any: starting one may complete it
   * at once and bring other steps' pending counts to zero. */
  for (guint i = 0; i < run->n; i++)
    if (run->pending[i] == 0 && step_runs(run, i))
      run->queue[run->queue_len++] = i;
  drain(run);
}

/* See exec.h. Builds the successor lists of every step (data dependencies, FIFO edges of one
 * connection released at the drain, and credit edges that add no step latency) in two passes
 * over the plan, then schedules the kickoff at at plus the base latency. The run borrows net,
 * plan and xfer_ctx until done is called; it copies params. */
FsCollRun *fs_coll_run_start(FsFlowNet *net, const FsCollPlan *plan, const FsCollExecParams *params,
                             FsCollTransferFn xfer, void *xfer_ctx, FsTime at, FsCollRunDoneFn done,
                             void *done_ctx)
{
  g_return_val_if_fail(net != NULL && plan != NULL && params != NULL && xfer != NULL, NULL);
  g_return_val_if_fail(params->payload > 0 && params->payload <= 1, NULL);
  FsCollRun *run = g_new0(FsCollRun, 1);
  run->net = net;
  run->sim = fs_flownet_sim(net);
  run->plan = plan;
  run->params = *params;
  run->xfer = xfer;
  run->xfer_ctx = xfer_ctx;
  run->key_base = params->key << 32;
  run->done = done;
  run->done_ctx = done_ctx;
  run->n = fs_coll_plan_n_steps(plan);
  /* Steps live in one array (coll/plan.h), so index it directly in the loop. */
  run->steps = run->n ? fs_coll_plan_step(plan, 0) : NULL;
  run->remaining = 0;
  for (guint i = 0; i < run->n; i++)
    run->remaining += step_runs(run, i);
  run->pending = g_new0(guint, run->n + 1);
  run->ready_at = g_new0(FsTime, run->n + 1);
  run->queue = g_new(guint, run->n + 1);
  run->succ_off = g_new0(guint, run->n + 2);
  run->has_data_succ = g_new0(gboolean, run->n + 1);
  run->drained = g_new0(guint8, run->n + 1);
  /* Data dependencies and credits (coll/plan.h) alike; a credit edge carries
   * CREDIT_EDGE in its successor entry (no step latency), a FIFO edge of one
   * connection DRAIN_EDGE (released at the drain). */
  const uint32_t *all = fs_coll_plan_dep_array(plan);
  guint total = 0;
  for (guint i = 0; i < run->n; i++) {
    const FsCollStep *s = &run->steps[i];
    guint nd = s->n_deps, nc = s->n_credits;
    const uint32_t *deps = nd + nc > 0 ? all + s->dep_off : NULL;
    const uint32_t *cred = deps != NULL ? deps + nd : NULL;
    run->pending[i] = nd + nc;
    total += nd + nc;
    for (guint j = 0; j < nd; j++) {
      run->succ_off[deps[j] + 1]++;
      run->has_data_succ[deps[j]] = TRUE;
    }
    for (guint j = 0; j < nc; j++)
      run->succ_off[cred[j] + 1]++;
  }
  for (guint i = 0; i < run->n; i++)
    run->succ_off[i + 1] += run->succ_off[i];
  run->succ = g_new(uint32_t, total + 1);
  g_autofree guint *fill = g_new0(guint, run->n + 1);
  for (guint i = 0; i < run->n; i++) {
    const FsCollStep *s = &run->steps[i];
    guint nd = s->n_deps, nc = s->n_credits;
    const uint32_t *deps = nd + nc > 0 ? all + s->dep_off : NULL;
    const uint32_t *cred = deps != NULL ? deps + nd : NULL;
    for (guint j = 0; j < nd; j++) {
      uint32_t mark = fs_coll_step_same_conn(&run->steps[deps[j]], &run->steps[i]) ? DRAIN_EDGE : 0;
      run->succ[run->succ_off[deps[j]] + fill[deps[j]]++] = i | mark;
    }
    for (guint j = 0; j < nc; j++)
      run->succ[run->succ_off[cred[j]] + fill[cred[j]]++] = i | CREDIT_EDGE;
  }
  run->n_conns = fs_coll_plan_n_conns(plan);
  run->conn_ends = g_new(ConnEnds, run->n_conns + 1);
  for (guint c = 0; c < run->n_conns; c++)
    run->conn_ends[c].src = CONN_UNSET;
  if (params->share_paths != NULL && fs_flownet_model(net) == FS_NET_ANALYTIC)
    run->share_cap = fs_coll_share_caps(plan, net, params->key, params->share_paths, params->share_ctx);
  run->start = at;
  fs_sim_at(run->sim, fs_time_add_sat(at, params->base_latency), kickoff, run, 0);
  return run;
}

/* Adds to load[ch] (a hash of channel + 1 → double bytes) what every path of
 * connection c puts on each of its channels: its bytes × the path's weight;
 * or, with cap != NULL, lowers cap[c] to the rate at which the connection's
 * bytes take as long as its busiest channel's whole load. */
static void walk_paths(GHashTable *load, const GArray *off, const GArray *pw, const GArray *ph,
                       const double *bytes, const FsFlowNet *net, double *cap)
{
  guint hp = 0;
  for (guint c = 1; c < off->len; c++) {
    for (guint p = g_array_index(off, guint, c - 1); p < g_array_index(off, guint, c); p++) {
      guint len = g_array_index(ph, FsChannelId, hp);
      double w = g_array_index(pw, double, p);
      for (guint h = 0; h < len; h++) {
        FsChannelId ch = g_array_index(ph, FsChannelId, hp + 1 + h);
        double *l = g_hash_table_lookup(load, GUINT_TO_POINTER(ch + 1));
        if (cap == NULL) {
          if (l == NULL) {
            l = g_new0(double, 1);
            g_hash_table_insert(load, GUINT_TO_POINTER(ch + 1), l);
          }
          *l += bytes[c] * w;
        } else if (w > 0 && *l > 0) {
          cap[c] = MIN(cap[c], fs_flownet_channel_capacity(net, ch) * bytes[c] / *l);
        }
      }
      hp += 1 + len;
    }
  }
}

/* See exec.h.  Routes every connection once (its paths kept in pw/ph), sums
 * its bytes, then the load of each channel, then each connection's cap. */
double *fs_coll_share_caps(const FsCollPlan *plan, const FsFlowNet *net, uint64_t key,
                           FsCollRoutePathsFn paths, void *ctx)
{
  guint n = fs_coll_plan_n_steps(plan);
  const FsComm *comm = fs_coll_plan_comm(plan);
  const FsCollStep *st = n ? fs_coll_plan_step(plan, 0) : NULL;
  FsCollRun keyer = { .key_base = key << 32 };
  g_autofree guint *conn_at = g_new0(guint, fs_coll_plan_n_conns(plan) + 1); /* FsCollStep.conn → c */
  g_autoptr(GHashTable) load = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  g_autoptr(GArray) pw = g_array_new(FALSE, FALSE, sizeof(double));      /* path weights */
  g_autoptr(GArray) ph = g_array_new(FALSE, FALSE, sizeof(FsChannelId)); /* [len, hops…] per path */
  g_autoptr(GArray) off = g_array_new(FALSE, FALSE, sizeof(guint));      /* conn c: paths off[c-1].. */
  g_autoptr(GArray) bytes = g_array_new(FALSE, TRUE, sizeof(double));    /* per conn (from 1) */
  g_autofree guint *conn_of = g_new0(guint, n + 1);
  guint zero = 0;
  double none = 0;
  g_array_append_val(off, zero);
  g_array_append_val(bytes, none);
  for (guint i = 0; i < n; i++) {
    const FsCollStep *s = &st[i];
    if (s->kind != FS_STEP_XFER)
      continue;
    guint c = conn_at[s->conn];
    if (c == 0) {
      int a = fs_coll_ep_node(comm, s->src, s->channel), b = fs_coll_ep_node(comm, s->dst, s->channel);
      if (a < 0 || b < 0 || !paths(ctx, a, b, conn_key(&keyer, s), pw, ph))
        return NULL;
      c = off->len; /* connections from 1 */
      conn_at[s->conn] = c;
      guint end = pw->len;
      g_array_append_val(off, end);
      g_array_append_val(bytes, none);
    }
    conn_of[i] = c;
    g_array_index(bytes, double, c) += (double)s->bytes * MAX(s->width, 1);
  }
  const double *b = (const double *)bytes->data;
  walk_paths(load, off, pw, ph, b, net, NULL);
  g_autofree double *conn_cap = g_new(double, off->len);
  for (guint c = 0; c < off->len; c++)
    conn_cap[c] = INFINITY;
  walk_paths(load, off, pw, ph, b, net, conn_cap);
  double *cap = g_new0(double, n + 1);
  for (guint i = 0; i < n; i++)
    cap[i] = conn_of[i] && isfinite(conn_cap[conn_of[i]]) ? conn_cap[conn_of[i]] : 0;
  return cap;
}

gboolean fs_coll_run_is_done(const FsCollRun *run)
{
  return run->finished;
}

FsTime fs_coll_run_start_time(const FsCollRun *run)
{
  return run->start;
}

FsTime fs_coll_run_end_time(const FsCollRun *run)
{
  return run->end;
}

gboolean fs_coll_run_finish(FsCollRun *run, GError **error)
{
  if (run->error != NULL) {
    g_propagate_error(error, g_error_copy(run->error));
    return FALSE;
  }
  if (!run->finished) {
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_DEADLOCK,
                "collective did not complete: %u of %u steps never became ready", run->remaining, run->n);
    return FALSE;
  }
  return TRUE;
}

void fs_coll_run_free(FsCollRun *run)
{
  if (run == NULL)
    return;
  g_free(run->pending);
  g_free(run->ready_at);
  g_free(run->queue);
  g_free(run->succ_off);
  g_free(run->has_data_succ);
  g_free(run->drained);
  g_free(run->succ);
  g_free(run->share_cap);
  g_free(run->conn_ends);
  g_clear_error(&run->error);
  g_free(run);
}

static gboolean not_done(void *data)
{
  return !((FsCollRun *)data)->finished;
}

gboolean fs_coll_run_alone(FsFlowNet *net, const FsCollPlan *plan, const FsCollExecParams *params,
                           FsCollTransferFn xfer, void *xfer_ctx, FsTime *elapsed, GError **error)
{
  FsSim *sim = fs_flownet_sim(net);
  g_autoptr(FsCollRun) run = fs_coll_run_start(net, plan, params, xfer, xfer_ctx, fs_sim_now(sim),
                                               NULL, NULL);
  if (!fs_sim_run_while(sim, not_done, run, error))
    return FALSE;
  if (!fs_coll_run_finish(run, error)) {
    /* Let flows already in flight finish before the run is freed: their
     * callbacks point at it. */
    fs_sim_run(sim, NULL);
    return FALSE;
  }
  *elapsed = run->end - run->start;
  return TRUE;
}
