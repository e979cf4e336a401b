/* flow.c — the flow network's lifecycle: channels, the flow pool, the start,
 * drain and delivery events, lazy byte accounting and per-channel counters.
 * The rate computation itself is in fill.c.  Contract in flow.h.
 */
#include "net/flow-private.h"

#include <math.h>
#include <string.h>

#include "util/names.h"

G_DEFINE_QUARK(fs-net-error-quark, fs_net_error)

static const char *const model_names[] = { FS_NET_MODELS(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE(FsNetModel, fs_net_model, model_names, FS_NET_N_MODELS, fs_names_index)

/* Picoseconds to move bytes_left at rate, rounded up, except that a value
 * within 1e-13 relative (+1e-6 ps) of an integer is that integer (flow.h).
 * Saturates at FS_TIME_MAX, the clock's end: a drain that far away stops
 * the run with the clock's range error (sim.h) unless a faster rate moves
 * it back first. */
static FsTime drain_ticks(double bytes_left, double rate)
{
  if (bytes_left <= 0 || isinf(rate))
    return 0;
  double x = bytes_left * 1e12 / rate;
  if (!(x < 9223372036854775808.0))
    return FS_TIME_MAX;
  double r = nearbyint(x);
  if (fabs(x - r) <= 1e-6 + x * 1e-13)
    return (FsTime)r;
  return (FsTime)ceil(x);
}


FsFlowNet *fs_flownet_new(FsSim *sim, FsNetModel model)
{
  g_return_val_if_fail(sim != NULL && model < FS_NET_N_MODELS, NULL);
  FsFlowNet *net = g_new0(FsFlowNet, 1);
  net->sim = sim;
  net->model = model;
  net->free_head = UINT32_MAX;
  net->fill_shortcut = TRUE;
  const char *env = g_getenv("FS_NET_CHECK");
  net->check = env != NULL && env[0] != '\0' && strcmp(env, "0") != 0;
  return net;
}

void fs_flownet_free(FsFlowNet *net)
{
  if (net == NULL)
    return;
  if (net->recompute_ev != FS_EVENT_NONE)
    fs_sim_cancel(net->sim, net->recompute_ev);
  /* Events still pending for our flows would call into freed memory. */
  for (uint32_t i = 0; i < net->n_flows; i++) {
    FsFlow *f = &net->flows[i];
    if (f->state != FS_FLOW_FREE && f->ev != FS_EVENT_NONE)
      fs_sim_cancel(net->sim, f->ev);
    g_free(f->hops);
  }
  for (uint32_t c = 0; c < net->n_chans; c++)
    g_free(net->chans[c].inc);
  g_free(net->chans);
  g_free(net->flows);
  g_free(net->active);
  g_free(net->seed_flows.v);
  g_free(net->seed_chans.v);
  fs_flownet_watch_free(net);
  g_free(net->comp_flows.v);
  g_free(net->comp_chans.v);
  g_free(net->step_chans.v);
  g_free(net->heap);
  g_free(net->caps);
  g_free(net->caps_tmp);
  g_free(net);
}

FsNetModel fs_flownet_model(const FsFlowNet *net) { return net->model; }
FsSim *fs_flownet_sim(const FsFlowNet *net) { return net->sim; }

FsChannelId fs_flownet_add_channel(FsFlowNet *net, double capacity, FsTime latency)
{
  g_return_val_if_fail(capacity > 0 && isfinite(capacity) && latency >= 0, 0);
  g_return_val_if_fail(net->n_chans < INT32_MAX, 0);
  if (net->n_chans == net->chans_cap) {
    net->chans_cap = net->chans_cap ? net->chans_cap * 2 : 64;
    net->chans = g_renew(FsChan, net->chans, net->chans_cap);
  }
  FsChan *c = &net->chans[net->n_chans];
  memset(c, 0, sizeof *c);
  c->capacity = capacity;
  c->latency = latency;
  c->vol_time = fs_sim_now(net->sim);
  return net->n_chans++;
}

void fs_flownet_reserve_channels(FsFlowNet *net, guint n)
{
  if (n > net->chans_cap) {
    net->chans_cap = n;
    net->chans = g_renew(FsChan, net->chans, net->chans_cap);
  }
}

guint fs_flownet_n_channels(const FsFlowNet *net) { return net->n_chans; }

double fs_flownet_channel_capacity(const FsFlowNet *net, FsChannelId ch)
{
  g_return_val_if_fail(ch < net->n_chans, 0);
  return net->chans[ch].capacity;
}

FsTime fs_flownet_channel_latency(const FsFlowNet *net, FsChannelId ch)
{
  g_return_val_if_fail(ch < net->n_chans, 0);
  return net->chans[ch].latency;
}

FsTime fs_flownet_path_latency(const FsFlowNet *net, const FsChannelId *path, guint len)
{
  FsTime t = 0;
  for (guint i = 0; i < len; i++)
    t = fs_time_add_sat(t, net->chans[path[i]].latency);
  return t;
}

double fs_flownet_path_capacity(const FsFlowNet *net, const FsChannelId *path, guint len)
{
  double c = INFINITY;
  for (guint i = 0; i < len; i++)
    c = MIN(c, net->chans[path[i]].capacity);
  return c;
}

static FsFlowId flow_id(const FsFlowNet *net, uint32_t slot)
{
  return ((uint64_t)net->flows[slot].gen << 32) | (uint64_t)(slot + 1);
}

/* Returns the slot of a live flow id, or UINT32_MAX. */
static uint32_t flow_slot(const FsFlowNet *net, FsFlowId id)
{
  uint32_t s = (uint32_t)id;
  if (s == 0 || s > net->n_flows)
    return UINT32_MAX;
  s--;
  const FsFlow *f = &net->flows[s];
  if (f->state == FS_FLOW_FREE || f->gen != (uint32_t)(id >> 32))
    return UINT32_MAX;
  return s;
}

static uint32_t alloc_slot(FsFlowNet *net)
{
  uint32_t s;
  if (net->free_head != UINT32_MAX) {
    s = net->free_head;
    net->free_head = net->flows[s].next_free;
    return s;
  }
  g_assert(net->n_flows < INT32_MAX);
  if (net->n_flows == net->flows_cap) {
    net->flows_cap = net->flows_cap ? net->flows_cap * 2 : 256;
    net->flows = g_renew(FsFlow, net->flows, net->flows_cap);
  }
  s = net->n_flows++;
  memset(&net->flows[s], 0, sizeof(FsFlow));
  net->flows[s].gen = 1;
  return s;
}

static void free_slot(FsFlowNet *net, uint32_t s)
{
  FsFlow *f = &net->flows[s];
  f->state = FS_FLOW_FREE;
  f->ev = FS_EVENT_NONE;
  f->gen++;
  f->next_free = net->free_head;
  net->free_head = s;
}

static void recompute_cb(void *ctx, uint64_t arg);

static void schedule_recompute(FsFlowNet *net)
{
  if (net->recompute_ev == FS_EVENT_NONE)
    net->recompute_ev = fs_sim_at(net->sim, fs_sim_now(net->sim), recompute_cb, net, 0);
}

static void run_recompute(FsFlowNet *net)
{
  fs_flownet_recompute(net);
  if (net->check) {
    GError *error = NULL;
    if (!fs_flownet_check(net, &error))
      g_error("flow network invariant broken at t=%" G_GINT64_FORMAT " ps: %s",
              fs_sim_now(net->sim), error->message);
  }
}

static void recompute_cb(void *ctx, uint64_t arg)
{
  (void)arg;
  FsFlowNet *net = ctx;
  net->recompute_ev = FS_EVENT_NONE;
  run_recompute(net);
}

void fs_flownet_flush(FsFlowNet *net)
{
  if (net->recompute_ev == FS_EVENT_NONE)
    return;
  fs_sim_cancel(net->sim, net->recompute_ev);
  net->recompute_ev = FS_EVENT_NONE;
  run_recompute(net);
}

static void drain_cb(void *ctx, uint64_t arg);
static void deliver_cb(void *ctx, uint64_t arg);
static void fill_info(const FsFlowNet *net, uint32_t slot, FsFlowInfo *out);

/* Runs the flow's drained callback, if any (flow.h).  The callback may
 * start flows, which may move the flow array: callers re-read their
 * FsFlow after it. */
static void notify_drained(FsFlowNet *net, uint32_t slot)
{
  FsFlowDoneFn fn = net->flows[slot].drained_fn;
  if (fn == NULL)
    return;
  FsFlowInfo info;
  fill_info(net, slot, &info);
  fn(net->flows[slot].ctx, &info);
}

/* Changes the flow's bottleneck at now: closes the interval of the previous
 * one (keeping the longest) and keeps the channels' n_bneck counts. */
static void set_bneck(FsFlowNet *net, FsFlow *f, int64_t bneck, FsTime now)
{
  FsTime dur = now - f->bneck_since;
  if (dur > f->best_dur) {
    f->best_dur = dur;
    f->best_bneck = f->bneck;
  }
  f->bneck_since = now;
  if (f->bneck != FS_CHANNEL_NONE)
    net->chans[f->bneck].n_bneck--;
  f->bneck = bneck;
  if (bneck != FS_CHANNEL_NONE)
    net->chans[bneck].n_bneck++;
}

void fs_flownet_apply_rate(FsFlowNet *net, uint32_t slot, double rate, int64_t bneck, FsTime now)
{
  FsFlow *f = &net->flows[slot];
  if (bneck != f->bneck)
    set_bneck(net, f, bneck, now);
  if (rate == f->rate && f->ev != FS_EVENT_NONE)
    return;
  if (f->rate > 0 && now != f->t_upd) {
    f->bytes_left -= f->rate * (double)(now - f->t_upd) / 1e12;
    if (f->bytes_left < 0)
      f->bytes_left = 0;
  }
  f->t_upd = now;
  f->rate = rate;
  net->stats.rate_changes++;
  FsTime d = fs_time_add_sat(now, drain_ticks(f->bytes_left, rate));
  if (f->ev == FS_EVENT_NONE)
    f->ev = fs_sim_at(net->sim, d, drain_cb, net, slot);
  else if (d != f->drain_at)
    f->ev = fs_sim_reschedule(net->sim, f->ev, d);
  f->drain_at = d;
}

/* Puts a flow on its channels and gives it a rate (analytic model, empty
 * path) or seeds a recomputation (max-min). */
static void begin_flow(FsFlowNet *net, uint32_t slot)
{
  FsTime now = fs_sim_now(net->sim);
  FsFlow *f = &net->flows[slot];
  f->state = FS_FLOW_RUNNING;
  f->ev = FS_EVENT_NONE;
  f->t_upd = now;
  f->bytes_left = (double)f->bytes;
  f->rate = 0;
  f->bneck = f->best_bneck = FS_CHANNEL_NONE;
  f->bneck_since = now;
  f->best_dur = -1;
  if (f->bytes == 0) {
    /* D = S: drained now, delivered after the latency (flow.h). */
    f->state = FS_FLOW_DRAINED;
    f->drained = now;
    FsTime lat = f->latency;
    if (lat != 0)
      f->ev = fs_sim_at(net->sim, fs_time_add_sat(now, lat), deliver_cb, net, slot);
    notify_drained(net, slot);
    if (lat == 0)
      deliver_cb(net, slot);
    return;
  }
  for (uint32_t h = 0; h < f->n_hops; h++) {
    FsChan *c = &net->chans[f->hops[h].chan];
    if (c->n_inc == c->inc_cap) {
      c->inc_cap = c->inc_cap ? c->inc_cap * 2 : 4;
      c->inc = g_renew(FsInc, c->inc, c->inc_cap);
    }
    if (c->n_inc == 0)
      c->busy_since = now;
    f->hops[h].pos = c->n_inc;
    c->inc[c->n_inc++] = (FsInc){slot, h};
    c->units += f->copies;
    if (c->units > c->peak)
      c->peak = c->units;
  }
  if (net->n_active == net->active_cap) {
    net->active_cap = net->active_cap ? net->active_cap * 2 : 256;
    net->active = g_renew(uint32_t, net->active, net->active_cap);
  }
  f->active_pos = net->n_active;
  net->active[net->n_active++] = slot;

  if (net->model == FS_NET_ANALYTIC || f->n_hops == 0) {
    /* Alone on its path: the same choice progressive filling makes for a
     * single flow (smallest capacity, lowest id; a channel wins a tie), per
     * copy. */
    double best = INFINITY;
    int64_t best_ch = FS_CHANNEL_NONE;
    for (uint32_t h = 0; h < f->n_hops; h++) {
      FsChannelId ch = f->hops[h].chan;
      double cap = net->chans[ch].capacity;
      if (cap < best || (cap == best && ch < best_ch)) {
        best = cap;
        best_ch = ch;
      }
    }
    gboolean capped = f->cap / f->copies < best;
    double rate = capped ? f->cap : best * f->copies;
    int64_t bneck = capped ? FS_CHANNEL_NONE : best_ch;
    for (uint32_t h = 0; h < f->n_hops; h++) {
      FsChan *c = &net->chans[f->hops[h].chan];
      fs_flownet_settle_channel(c, now);
      c->load += rate;
    }
    fs_flownet_apply_rate(net, slot, rate, bneck, now);
    return;
  }
  if (!f->dirty) {
    f->dirty = 1;
    fs_u32vec_push(&net->seed_flows, slot);
  }
  schedule_recompute(net);
}

static void start_cb(void *ctx, uint64_t arg)
{
  begin_flow(ctx, (uint32_t)arg);
}

/* See flow.h. Takes a free slot, copies the path into it (growing the hop array when needed)
 * and either begins the flow now or schedules its start event when spec->start lies ahead.
 * Returns FS_FLOW_NONE, through g_return_val_if_fail, on a bad spec. O(path length) here;
 * the rate recomputation that beginning a flow triggers is deferred. */
FsFlowId fs_flownet_start(FsFlowNet *net, const FsFlowSpec *spec)
{
  g_return_val_if_fail(net != NULL && spec != NULL, FS_FLOW_NONE);
  FsTime now = fs_sim_now(net->sim);
  g_return_val_if_fail(spec->start >= now, FS_FLOW_NONE);
  g_return_val_if_fail(spec->rate_cap >= 0 && !isnan(spec->rate_cap), FS_FLOW_NONE);
  g_return_val_if_fail(spec->extra_latency >= 0, FS_FLOW_NONE);
  g_return_val_if_fail(spec->path_len == 0 || spec->path != NULL, FS_FLOW_NONE);
  g_return_val_if_fail(spec->copies <= FS_FLOW_MAX_COPIES, FS_FLOW_NONE);
  gboolean barred = FALSE;
  for (guint i = 0; i < spec->path_len; i++) {
    g_return_val_if_fail(spec->path[i] < net->n_chans, FS_FLOW_NONE);
    barred |= net->chans[spec->path[i]].barred;
  }
  net->barred_starts += barred;

  uint32_t slot = alloc_slot(net);
  FsFlow *f = &net->flows[slot];
  if (f->hops_cap < spec->path_len) {
    f->hops_cap = MAX(spec->path_len, 4);
    f->hops = g_renew(FsHop, f->hops, f->hops_cap);
  }
  f->n_hops = spec->path_len;
  for (guint i = 0; i < spec->path_len; i++) {
    FsChannelId c = spec->path[i];
    f->hops[i] = (FsHop){c < net->n_alias ? net->alias[c] : c, 0};
  }
  f->cap = spec->rate_cap > 0 ? spec->rate_cap : INFINITY;
  f->copies = MAX(spec->copies, 1);
  f->bytes = spec->bytes;
  f->src = spec->src;
  f->dst = spec->dst;
  f->done = spec->done;
  f->drained_fn = spec->drained;
  f->ctx = spec->ctx;
  f->user = spec->user;
  f->start = spec->start;
  f->latency = fs_time_add_sat(fs_flownet_path_latency(net, spec->path, spec->path_len),
                       spec->extra_latency);
  f->drained = 0;
  f->rate = 0;
  f->dirty = 0;
  f->mark = f->frozen = 0;
  net->stats.flows_started++;
  net->stats.flows_active++;
  FsFlowId id = flow_id(net, slot);
  if (spec->start > now) {
    f->state = FS_FLOW_PENDING;
    f->ev = fs_sim_at(net->sim, spec->start, start_cb, net, slot);
  } else {
    begin_flow(net, slot);
  }
  return id;
}

static void fill_info(const FsFlowNet *net, uint32_t slot, FsFlowInfo *out)
{
  const FsFlow *f = &net->flows[slot];
  memset(out, 0, sizeof *out);
  out->id = flow_id(net, slot);
  out->src = f->src;
  out->dst = f->dst;
  out->bytes = f->bytes;
  out->start = f->start;
  out->latency = f->latency;
  out->rate = f->rate;
  out->path_len = f->n_hops;
  out->user = f->user;
  if (f->state == FS_FLOW_DRAINED) {
    out->drained = f->drained;
    out->finish = fs_time_add_sat(f->drained, f->latency);
    out->mean_rate =
      f->drained > f->start ? (double)f->bytes * 1e12 / (double)(f->drained - f->start) : 0;
    out->bottleneck = f->best_bneck;
  } else {
    out->bottleneck = f->bneck;
  }
}

gboolean fs_flownet_get_flow(FsFlowNet *net, FsFlowId id, FsFlowInfo *out)
{
  fs_flownet_flush(net);
  uint32_t s = flow_slot(net, id);
  if (s == UINT32_MAX)
    return FALSE;
  fill_info(net, s, out);
  return TRUE;
}

/* The flow's last byte left the source: free its channels, schedule its
 * delivery and run its drained callback. */
static void drain_cb(void *ctx, uint64_t arg)
{
  FsFlowNet *net = ctx;
  uint32_t slot = (uint32_t)arg;
  FsTime now = fs_sim_now(net->sim);
  FsFlow *f = &net->flows[slot];
  g_assert(f->state == FS_FLOW_RUNNING);
  set_bneck(net, f, FS_CHANNEL_NONE, now);
  f->bytes_left = 0;
  f->t_upd = now;
  f->drained = now;
  f->state = FS_FLOW_DRAINED;
  f->ev = FS_EVENT_NONE;
  gboolean seeded = FALSE;
  for (uint32_t h = 0; h < f->n_hops; h++) {
    FsHop hop = f->hops[h];
    FsChan *c = &net->chans[hop.chan];
    fs_flownet_settle_channel(c, now);
    c->load -= f->rate;
    FsInc last = c->inc[--c->n_inc];
    if (hop.pos != c->n_inc) {
      c->inc[hop.pos] = last;
      net->flows[last.flow].hops[last.hop].pos = hop.pos;
    }
    c->bytes += f->bytes;
    c->flows_done += f->copies;
    c->units -= f->copies;
    if (c->n_inc == 0) {
      c->busy = fs_time_add_sat(c->busy, now - c->busy_since);
      c->load = 0;
    } else if (net->model == FS_NET_MAXMIN && !c->dirty) {
      c->dirty = TRUE;
      fs_u32vec_push(&net->seed_chans, hop.chan);
      seeded = TRUE;
    }
  }
  net->hop_bytes += f->bytes * f->n_hops;
  uint32_t last = net->active[--net->n_active];
  if (f->active_pos != net->n_active) {
    net->active[f->active_pos] = last;
    net->flows[last].active_pos = f->active_pos;
  }
  if (seeded)
    schedule_recompute(net);
  /* The delivery is scheduled before the drained callback runs, which may
   * start flows (and move the flow array); with no latency it follows the
   * callback at once (flow.h). */
  FsTime lat = f->latency;
  if (lat != 0)
    f->ev = fs_sim_at(net->sim, fs_time_add_sat(now, lat), deliver_cb, net, slot);
  notify_drained(net, slot);
  if (lat == 0)
    deliver_cb(net, slot);
}

/* The last byte landed: report and recycle the slot. */
static void deliver_cb(void *ctx, uint64_t arg)
{
  FsFlowNet *net = ctx;
  uint32_t slot = (uint32_t)arg;
  FsFlowInfo info;
  fill_info(net, slot, &info);
  FsFlowDoneFn done = net->flows[slot].done;
  void *dctx = net->flows[slot].ctx;
  free_slot(net, slot);
  net->stats.flows_finished++;
  net->stats.flows_active--;
  if (done != NULL)
    done(dctx, &info);
}

void fs_flownet_channel_stats(const FsFlowNet *net, FsChannelId ch, FsChannelStats *out)
{
  g_return_if_fail(ch < net->n_chans);
  const FsChan *c = &net->chans[ch];
  FsTime now = fs_sim_now(net->sim);
  out->capacity = c->capacity;
  out->latency = c->latency;
  out->bytes = c->bytes;
  out->flows_done = c->flows_done;
  out->busy = fs_time_add_sat(c->busy, c->n_inc > 0 ? now - c->busy_since : 0);
  out->peak_flows = c->peak;
  out->active_flows = c->units;
  out->load = c->load;
  out->volume = c->volume + c->load * (double)(now - c->vol_time) / 1e12;
}

void fs_flownet_stats(const FsFlowNet *net, FsFlowNetStats *out)
{
  *out = net->stats;
}

void fs_flownet_channel_bar(FsFlowNet *net, FsChannelId ch, gboolean barred)
{
  g_return_if_fail(ch < net->n_chans);
  net->chans[ch].barred = barred;
}

uint64_t fs_flownet_barred_starts(const FsFlowNet *net)
{
  return net->barred_starts;
}

void fs_flownet_set_alias(FsFlowNet *net, const FsChannelId *alias, guint n)
{
  g_return_if_fail(net != NULL && (n == 0 || alias != NULL));
  for (guint c = 0; c < n; c++)
    g_return_if_fail(alias[c] < net->n_chans);
  net->alias = n > 0 ? alias : NULL;
  net->n_alias = n;
}

void fs_flownet_set_check(FsFlowNet *net, gboolean on) { net->check = on; }
void fs_flownet_set_global_recompute(FsFlowNet *net, gboolean on) { net->global = on; }
void fs_flownet_set_fill_shortcut(FsFlowNet *net, gboolean on) { net->fill_shortcut = on; }

/* Max-min fairness, by its characterisation: every running flow is at its
 * cap or crosses a full channel on which no flow is faster per copy (1e-9
 * slack). */
static gboolean check_maxmin(const FsFlowNet *net, GError **error)
{
  g_autofree double *fastest = g_new0(double, MAX(net->n_chans, 1));
  for (uint32_t i = 0; i < net->n_active; i++) {
    const FsFlow *f = &net->flows[net->active[i]];
    for (uint32_t h = 0; h < f->n_hops; h++)
      fastest[f->hops[h].chan] = MAX(fastest[f->hops[h].chan], f->rate / f->copies);
  }
  for (uint32_t i = 0; i < net->n_active; i++) {
    const FsFlow *f = &net->flows[net->active[i]];
    gboolean limited = f->rate >= f->cap * (1 - 1e-9);
    for (uint32_t h = 0; h < f->n_hops && !limited; h++) {
      const FsChan *c = &net->chans[f->hops[h].chan];
      limited = c->load >= c->capacity * (1 - 1e-9) &&
                f->rate / f->copies >= fastest[f->hops[h].chan] * (1 - 1e-9);
    }
    if (!limited) {
      g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_INVARIANT,
                  "flow slot %u at %.17g B/s is below its cap and has no full channel where "
                  "it is the fastest: not max-min fair", net->active[i], f->rate);
      return FALSE;
    }
  }
  return TRUE;
}

/* See flow.h. Runs any pending recomputation first, then checks every invariant the net keeps:
 * each channel's incidence list matches its flows, its load is the sum of their rates and stays
 * within capacity under max-min, its carried volume equals the bytes its flows moved, the byte
 * counters agree, the max-min allocation is fair, and every active flow has a positive rate and
 * a sane number of bytes left. Sets FS_NET_ERROR_INVARIANT naming the first breach.
 * O(channels + incidences + active flows), plus check_maxmin(). */
gboolean fs_flownet_check(FsFlowNet *net, GError **error)
{
  if (net->recompute_ev != FS_EVENT_NONE) {
    fs_sim_cancel(net->sim, net->recompute_ev);
    net->recompute_ev = FS_EVENT_NONE;
    fs_flownet_recompute(net);
  }
  FsTime now = fs_sim_now(net->sim);
  uint64_t carried = 0;
  for (uint32_t ci = 0; ci < net->n_chans; ci++) {
    const FsChan *c = &net->chans[ci];
    double sum = 0, moved = (double)c->bytes;
    uint64_t units = 0;
    for (uint32_t k = 0; k < c->n_inc; k++) {
      FsInc e = c->inc[k];
      const FsFlow *f = e.flow < net->n_flows ? &net->flows[e.flow] : NULL;
      if (f == NULL || f->state != FS_FLOW_RUNNING || e.hop >= f->n_hops ||
          f->hops[e.hop].chan != ci || f->hops[e.hop].pos != k) {
        g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_INVARIANT,
                    "channel %u: incidence %u does not match flow slot %u", ci, k, e.flow);
        return FALSE;
      }
      sum += f->rate;
      units += f->copies;
      double left = f->bytes_left - f->rate * (double)(now - f->t_upd) / 1e12;
      moved += (double)f->bytes - MAX(left, 0.0);
    }
    if (units != c->units) {
      g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_INVARIANT,
                  "channel %u: counts %u copies but its flows stand for %" G_GUINT64_FORMAT,
                  ci, c->units, units);
      return FALSE;
    }
    double tol = 1e-9 * MAX(sum, c->capacity);
    if (net->model == FS_NET_MAXMIN && sum > c->capacity + tol) {
      g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_INVARIANT,
                  "channel %u carries %.17g B/s, above its capacity %.17g B/s", ci, sum,
                  c->capacity);
      return FALSE;
    }
    if (fabs(sum - c->load) > tol) {
      g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_INVARIANT,
                  "channel %u: load %.17g B/s but its flows' rates sum to %.17g B/s", ci,
                  c->load, sum);
      return FALSE;
    }
    /* Conservation: what the channel carried (integral of its load) is what
     * its flows moved, up to one picosecond of rounding per flow. */
    double volume = c->volume + c->load * (double)(now - c->vol_time) / 1e12;
    double vtol = 1e-9 * MAX(volume, moved) + c->capacity * 1e-12 * (double)(c->flows_done + c->n_inc + 1);
    if (fabs(volume - moved) > vtol) {
      g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_INVARIANT,
                  "channel %u: carried %.17g bytes but its flows moved %.17g bytes", ci,
                  volume, moved);
      return FALSE;
    }
    carried += c->bytes;
  }
  if (carried != net->hop_bytes) {
    g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_INVARIANT,
                "channels counted %" G_GUINT64_FORMAT " bytes, drained flows %" G_GUINT64_FORMAT,
                carried, net->hop_bytes);
    return FALSE;
  }
  if (net->model == FS_NET_MAXMIN && !check_maxmin(net, error))
    return FALSE;
  for (uint32_t i = 0; i < net->n_active; i++) {
    const FsFlow *f = &net->flows[net->active[i]];
    double left = f->bytes_left - f->rate * (double)(now - f->t_upd) / 1e12;
    double tol = 1e-9 * (double)f->bytes + f->rate * 1e-12;
    if (f->state != FS_FLOW_RUNNING || f->active_pos != i || !(f->rate > 0) ||
        left < -tol || left > (double)f->bytes) {
      g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_INVARIANT,
                  "flow slot %u: state %d, rate %.17g B/s, %.17g of %" G_GUINT64_FORMAT
                  " bytes left", net->active[i], f->state, f->rate, left, f->bytes);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean fs_flownet_rewind(FsFlowNet *net)
{
  g_return_val_if_fail(net != NULL, FALSE);
  if (net->stats.flows_active > 0 || fs_sim_pending(net->sim) > 0)
    return FALSE;
  for (uint32_t c = 0; c < net->n_chans; c++)
    fs_flownet_settle_channel(&net->chans[c], fs_sim_now(net->sim));
  if (!fs_sim_rewind(net->sim))
    return FALSE;
  for (uint32_t c = 0; c < net->n_chans; c++)
    net->chans[c].vol_time = 0;
  return TRUE;
}
