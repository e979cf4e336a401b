/* fill.c — which flows a change affects, and their max-min fair rates.
 *
 * A recomputation starts from seeds: flows that just started and channels
 * that a drained flow just left.  A breadth-first search over the bipartite
 * graph (channel -> its flows, flow -> its channels) collects the connected
 * component(s) of the seeds; no flow outside them can change rate, because
 * max-min fair rates of one component depend on that component alone.
 *
 * Progressive filling with per-flow caps, on a min-heap of "levels":
 *   - a channel's level is its fair share: (capacity - rates already frozen
 *     on it) / (incidences not yet frozen);
 *   - a capped flow's level is its cap.
 * Popping the lowest level L freezes either every unfrozen flow on that
 * channel at L (the channel is their bottleneck) or the one capped flow at
 * its cap; the channels those flows cross get a new share, pushed once per
 * filling step (stale heap entries are skipped by a version number).  The
 * pop order is the total order (level, kind, index), channels before caps on
 * a tie; since every flow frozen in one step adds the same L to each channel
 * it crosses, the sums do not depend on list order, and the rates are a
 * function of the component alone (the global-recompute test relies on it).
 * Floating-point rounding can make a new share come out a hair below the
 * level just frozen; levels are clamped to be non-decreasing, as they are in
 * exact arithmetic, which also keeps every rate positive.
 *
 * Cost: O(E log E) for E flow-channel incidences in the component; the
 * scratch arrays are kept in the network and reused.
 */
#include "net/flow-private.h"

#include <math.h>

static gboolean entry_less(const FsFillEntry *a, const FsFillEntry *b)
{
  return a->level < b->level || (a->level == b->level && a->tag < b->tag);
}

static void heap_push(GArray *heap, FsFillEntry e)
{
  g_array_append_val(heap, e);
  FsFillEntry *h = (FsFillEntry *)heap->data;
  guint i = heap->len - 1;
  while (i > 0) {
    guint p = (i - 1) / 2;
    if (!entry_less(&e, &h[p]))
      break;
    h[i] = h[p];
    i = p;
  }
  h[i] = e;
}

static FsFillEntry heap_pop(GArray *heap)
{
  FsFillEntry *h = (FsFillEntry *)heap->data;
  FsFillEntry top = h[0];
  FsFillEntry e = h[heap->len - 1];
  guint n = heap->len - 1;
  g_array_set_size(heap, n);
  if (n == 0)
    return top;
  guint i = 0;
  for (;;) {
    guint c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && entry_less(&h[c + 1], &h[c]))
      c++;
    if (!entry_less(&h[c], &e))
      break;
    h[i] = h[c];
    i = c;
  }
  h[i] = e;
  return top;
}

static void push_share(FsFlowNet *net, uint32_t ci)
{
  FsChan *c = &net->chans[ci];
  double share = (c->capacity - c->frozen_sum) / (double)c->unfrozen;
  heap_push(net->heap, (FsFillEntry){share, (FS_FILL_CHAN << 32) | ci, c->ver});
}

/* Freezes flow `slot` at `level`, updating the channels it crosses. */
static void freeze(FsFlowNet *net, uint32_t slot, double level, int64_t bneck)
{
  FsFlow *f = &net->flows[slot];
  f->frozen = net->epoch;
  f->new_rate = level;
  f->new_bneck = bneck;
  for (uint32_t h = 0; h < f->n_hops; h++) {
    uint32_t ci = f->hops[h].chan;
    FsChan *c = &net->chans[ci];
    c->frozen_sum += level;
    c->unfrozen--;
    c->ver++;
    if (c->touched != net->step) {
      c->touched = net->step;
      g_array_append_val(net->step_chans, ci);
    }
  }
}

/* Ends a filling step: one new heap entry per channel it touched. */
static void end_step(FsFlowNet *net)
{
  for (guint i = 0; i < net->step_chans->len; i++) {
    uint32_t ci = g_array_index(net->step_chans, uint32_t, i);
    if (net->chans[ci].unfrozen > 0)
      push_share(net, ci);
  }
  g_array_set_size(net->step_chans, 0);
}

static void next_step(FsFlowNet *net)
{
  if (++net->step == 0) {
    for (uint32_t c = 0; c < net->n_chans; c++)
      net->chans[c].touched = 0;
    net->step = 1;
  }
}

static void next_epoch(FsFlowNet *net)
{
  if (++net->epoch == 0) {
    for (uint32_t c = 0; c < net->n_chans; c++)
      net->chans[c].mark = 0;
    for (uint32_t s = 0; s < net->n_flows; s++)
      net->flows[s].mark = net->flows[s].frozen = 0;
    net->epoch = 1;
  }
}

static void visit_flow(FsFlowNet *net, uint32_t slot)
{
  FsFlow *f = &net->flows[slot];
  if (f->mark != net->epoch) {
    f->mark = net->epoch;
    g_array_append_val(net->comp_flows, slot);
  }
}

static void visit_chan(FsFlowNet *net, uint32_t ci)
{
  FsChan *c = &net->chans[ci];
  if (c->mark != net->epoch) {
    c->mark = net->epoch;
    g_array_append_val(net->comp_chans, ci);
  }
}

/* Collects the components of the seeds (or every running flow) into
 * comp_flows and comp_chans, and clears the seeds. */
static void collect(FsFlowNet *net)
{
  g_array_set_size(net->comp_flows, 0);
  g_array_set_size(net->comp_chans, 0);
  for (guint i = 0; i < net->seed_flows->len; i++) {
    uint32_t s = g_array_index(net->seed_flows, uint32_t, i);
    net->flows[s].dirty = 0;
    if (net->flows[s].state == FS_FLOW_RUNNING)
      visit_flow(net, s);
  }
  for (guint i = 0; i < net->seed_chans->len; i++) {
    uint32_t ci = g_array_index(net->seed_chans, uint32_t, i);
    net->chans[ci].dirty = FALSE;
    visit_chan(net, ci);
  }
  g_array_set_size(net->seed_flows, 0);
  g_array_set_size(net->seed_chans, 0);
  if (net->global)
    for (uint32_t i = 0; i < net->n_active; i++)
      visit_flow(net, net->active[i]);

  guint fi = 0, ci = 0;
  while (fi < net->comp_flows->len || ci < net->comp_chans->len) {
    for (; ci < net->comp_chans->len; ci++) {
      const FsChan *c = &net->chans[g_array_index(net->comp_chans, uint32_t, ci)];
      for (uint32_t k = 0; k < c->n_inc; k++)
        visit_flow(net, c->inc[k].flow);
    }
    for (; fi < net->comp_flows->len; fi++) {
      const FsFlow *f = &net->flows[g_array_index(net->comp_flows, uint32_t, fi)];
      for (uint32_t h = 0; h < f->n_hops; h++)
        visit_chan(net, f->hops[h].chan);
    }
  }
}

/* Progressive filling over the collected component(s). */
static void fill(FsFlowNet *net)
{
  g_array_set_size(net->heap, 0);
  for (guint i = 0; i < net->comp_chans->len; i++) {
    uint32_t ci = g_array_index(net->comp_chans, uint32_t, i);
    FsChan *c = &net->chans[ci];
    c->unfrozen = c->n_inc;
    c->frozen_sum = 0;
    c->ver++;
    if (c->unfrozen > 0)
      push_share(net, ci);
  }
  for (guint i = 0; i < net->comp_flows->len; i++) {
    uint32_t s = g_array_index(net->comp_flows, uint32_t, i);
    if (isfinite(net->flows[s].cap))
      heap_push(net->heap, (FsFillEntry){net->flows[s].cap, (FS_FILL_CAP << 32) | s, 0});
  }
  double level = 0;
  while (net->heap->len > 0) {
    FsFillEntry e = heap_pop(net->heap);
    uint32_t idx = (uint32_t)e.tag;
    if ((e.tag >> 32) == FS_FILL_CAP) {
      if (net->flows[idx].frozen == net->epoch)
        continue;
      level = MAX(level, e.level);
      next_step(net);
      freeze(net, idx, level, FS_CHANNEL_NONE);
    } else {
      FsChan *c = &net->chans[idx];
      if (e.ver != c->ver || c->unfrozen == 0)
        continue;
      level = MAX(level, e.level);
      next_step(net);
      for (uint32_t k = 0; k < c->n_inc; k++) {
        uint32_t s = c->inc[k].flow;
        if (net->flows[s].frozen != net->epoch)
          freeze(net, s, level, idx);
      }
    }
    end_step(net);
  }
}

void fs_flownet_recompute(FsFlowNet *net)
{
  next_epoch(net);
  collect(net);
  fill(net);
  for (guint i = 0; i < net->comp_chans->len; i++) {
    FsChan *c = &net->chans[g_array_index(net->comp_chans, uint32_t, i)];
    g_assert(c->unfrozen == 0);
    fs_flownet_settle_channel(net, c);
    c->load = c->frozen_sum;
  }
  for (guint i = 0; i < net->comp_flows->len; i++) {
    uint32_t s = g_array_index(net->comp_flows, uint32_t, i);
    FsFlow *f = &net->flows[s];
    g_assert(f->frozen == net->epoch);
    fs_flownet_apply_rate(net, s, f->new_rate, f->new_bneck);
  }
  net->stats.recomputations++;
  net->stats.recomputed_flows += net->comp_flows->len;
  net->stats.max_component = MAX(net->stats.max_component, net->comp_flows->len);
}
