/* fill.c — which flows a change affects, and their max-min fair rates.
 *
 * A recomputation starts from seeds: flows that just started, and the flows
 * whose bottleneck is a channel that a drained flow just left.  This is the
 * affected set A.  Every other flow keeps its rate as a fixed consumption of
 * the channels it shares with A.  Progressive filling gives A its rates over
 * what is left; then expand() checks max-min fairness at the boundary and
 * adds the outside flows whose limit moved (a flow bottlenecked where A's
 * total changed or where a flow of A overtook it; a flow faster than the
 * level at which its channel froze flows of A).  The fill is redone until A
 * stops growing.  A is at most the connected component of the seeds in the
 * flow/channel graph, and usually far smaller: in a loaded fat-tree a
 * change moves a handful of rates while the component spans every flow.
 * fs_flownet_set_global_recompute puts every running flow in A (a full
 * recomputation, for tests).
 *
 * Progressive filling with per-flow caps, on a min-heap of "levels":
 *   - a channel's level is its fair share: (capacity - rates already frozen
 *     or fixed on it) / (flows of A on it not yet frozen, a flow of c copies
 *     counting c);
 *   - a capped flow's level is its cap per copy.
 * Levels are rates per copy: a flow frozen at L gets copies × L, and adds L
 * to each channel it crosses once per copy (as its copies would, one by one,
 * so that the sums are those of the copies).
 * Popping the lowest level L freezes either every unfrozen flow of A on that
 * channel at L (the channel is their bottleneck) or the one capped flow at
 * its cap; the channels those flows cross get a new share once per filling
 * step, moved in place in an indexed heap (one entry per channel, so no
 * stale entry is pushed or popped); the caps are sorted once per fill and
 * merged with the heap's top.  The fill ends when every flow of A is frozen.
 * A channel whose flows were all frozen by caps or other channels leaves
 * the heap at the end of that step (end_step), taken out where it is,
 * rather than being popped and skipped later, each a sift from the root
 * (most of a fill's cost where A's flows run at their caps, as NCCL's LL128
 * trees do).
 * The pop order is the total order (level, kind, index), channels before caps on
 * a tie; every flow frozen in one step adds the same L to each channel it
 * crosses, so the sums do not depend on list order.  Rounding can make a new
 * share come out a hair below the level just frozen; levels are clamped to
 * be non-decreasing, as they are in exact arithmetic, which also keeps
 * every rate positive.  Results agree with a full recomputation to rounding
 * (1e-12 relative tolerances in expand()).
 *
 * Where every flow of A has a cap (NCCL's LL128 and LL chunks) the fill
 * ends with the last cap, so a channel whose share is above A's highest
 * cap cannot pop: it stays out of the heap until a freeze brings its share
 * down (fill_top).  The pops, levels and sums are the same, to the bit;
 * fs_flownet_set_fill_shortcut turns it off (tests/test-flow.c compares).
 *
 * Cost: O(R * E_A log E_A) for E_A flow-channel incidences of A and R fill
 * rounds (usually 1-3), plus a scan of the flows on A's channels; the
 * scratch arrays are kept in the network and reused.
 */
#include "net/flow-private.h"

#include <math.h>
#include <string.h>

/* A level's order key: its bits with the sign bit flipped when positive,
 * all flipped when negative, so that unsigned order is the order of the
 * doubles (levels are never NaN, and never -0: a share is a difference of
 * a positive capacity and a sum, over a positive count; a cap is positive;
 * a share a hair below 0 from rounding orders right).  key_level inverts
 * it exactly. */
static inline uint64_t level_key(double level)
{
  uint64_t b;
  memcpy(&b, &level, sizeof b);
  return b ^ ((uint64_t)((int64_t)b >> 63) | ((uint64_t)1 << 63));
}

static inline double key_level(uint64_t key)
{
  uint64_t b = key ^ ((key >> 63) ? (uint64_t)1 << 63 : ~(uint64_t)0);
  double level;
  memcpy(&level, &b, sizeof level);
  return level;
}

/* (level, tag) order as one 128-bit compare. */
static inline gboolean entry_less(const FsFillEntry *a, const FsFillEntry *b)
{
  __extension__ typedef unsigned __int128 U128;
  return (((U128)a->key << 64) | a->tag) < (((U128)b->key << 64) | b->tag);
}

/* The channels' heap is indexed: a channel has at most one entry, at
 * heap[chans[ci].hpos], moved in place when its share changes, so no stale
 * entry is ever pushed or popped.  hpos is valid only while heap_n > hpos
 * and that entry's tag is the channel (entries of an earlier fill linger
 * in hpos). */
static inline gboolean in_heap(const FsFlowNet *net, uint32_t ci)
{
  uint32_t p = net->chans[ci].hpos;
  return p < net->heap_n && (uint32_t)net->heap[p].tag == ci;
}

static inline void heap_place(FsFlowNet *net, guint i, FsFillEntry e)
{
  net->heap[i] = e;
  net->chans[(uint32_t)e.tag].hpos = i;
}

static void sift_up(FsFlowNet *net, guint i, FsFillEntry e)
{
  FsFillEntry *h = net->heap;
  while (i > 0) {
    guint p = (i - 1) / 2;
    if (!entry_less(&e, &h[p]))
      break;
    heap_place(net, i, h[p]);
    i = p;
  }
  heap_place(net, i, e);
}

static void sift_down(FsFlowNet *net, guint i, FsFillEntry e)
{
  FsFillEntry *h = net->heap;
  guint n = net->heap_n;
  for (;;) {
    guint c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && entry_less(&h[c + 1], &h[c]))
      c++;
    if (!entry_less(&h[c], &e))
      break;
    heap_place(net, i, h[c]);
    i = c;
  }
  heap_place(net, i, e);
}

/* Sets channel ci's entry to `level`: inserts it, or moves it in place. */
static void heap_set(FsFlowNet *net, uint32_t ci, double level)
{
  FsFillEntry e = {level_key(level), (FS_FILL_CHAN << 32) | ci};
  if (in_heap(net, ci)) {
    guint i = net->chans[ci].hpos;
    gboolean up = entry_less(&e, &net->heap[i]);
    if (up)
      sift_up(net, i, e);
    else
      sift_down(net, i, e);
    return;
  }
  if (net->heap_n == net->heap_cap) {
    net->heap_cap = net->heap_cap ? 2 * net->heap_cap : 256;
    net->heap = g_renew(FsFillEntry, net->heap, net->heap_cap);
  }
  sift_up(net, net->heap_n++, e);
}

static FsFillEntry heap_pop(FsFlowNet *net)
{
  FsFillEntry top = net->heap[0];
  guint n = --net->heap_n;
  if (n > 0)
    sift_down(net, 0, net->heap[n]);
  return top;
}

/* Takes the entry at i out of the heap: the last entry fills the hole and
 * moves up or down from there (usually a step or two, where a pop from the
 * root would descend the whole heap). */
static void heap_remove(FsFlowNet *net, guint i)
{
  guint n = --net->heap_n;
  if (i == n)
    return;
  FsFillEntry e = net->heap[n];
  if (i > 0 && entry_less(&e, &net->heap[(i - 1) / 2]))
    sift_up(net, i, e);
  else
    sift_down(net, i, e);
}

/* Sets channel ci's entry to its fair share, but for a share above
 * net->fill_top where the channel has no entry yet: that one stays out of
 * the heap (fill()). */
static void push_share(FsFlowNet *net, uint32_t ci)
{
  FsChan *c = &net->chans[ci];
  double share = (c->capacity - c->frozen_sum) / (double)c->unfrozen;
  if (share > net->fill_top && !in_heap(net, ci)) {
    net->stats.shares_skipped++;
    return;
  }
  heap_set(net, ci, share);
}

/* The order of sort_caps: (level, tag), or the tag alone when every level
 * is the same (by_tag). */
static inline gboolean caps_less(const FsFillEntry *a, const FsFillEntry *b, gboolean by_tag)
{
  return by_tag ? a->tag < b->tag : entry_less(a, b);
}

/* Sorts the caps of A by (level, tag): insertion sort on short runs, then
 * bottom-up merges through net->caps_tmp (no callback: a large component
 * sorts its caps on every fill).  by_tag: every cap has the same level
 * (NCCL's LL128 and LL flows of one size: most fills), so the tags alone
 * decide, a plain 64-bit compare; the compiler makes one copy of the sort
 * for each case. */
static inline void sort_caps_by(FsFlowNet *net, gboolean by_tag)
{
  FsFillEntry *v = net->caps;
  guint n = net->caps_n;
  const guint run = 16;
  for (guint lo = 0; lo < n; lo += run) {
    guint hi = MIN(lo + run, n);
    for (guint i = lo + 1; i < hi; i++) {
      FsFillEntry e = v[i];
      guint j = i;
      for (; j > lo && caps_less(&e, &v[j - 1], by_tag); j--)
        v[j] = v[j - 1];
      v[j] = e;
    }
  }
  if (n <= run)
    return;
  FsFillEntry *src = v, *dst = net->caps_tmp;
  for (guint w = run; w < n; w *= 2) {
    for (guint lo = 0; lo < n; lo += 2 * w) {
      guint mid = MIN(lo + w, n), hi = MIN(lo + 2 * w, n), i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        dst[k++] = caps_less(&src[j], &src[i], by_tag) ? src[j++] : src[i++];
      while (i < mid)
        dst[k++] = src[i++];
      while (j < hi)
        dst[k++] = src[j++];
    }
    FsFillEntry *t = src;
    src = dst;
    dst = t;
  }
  if (src != v)
    memcpy(v, src, n * sizeof *v);
}

static void sort_caps(FsFlowNet *net, gboolean same_level)
{
  if (same_level)
    sort_caps_by(net, TRUE);
  else
    sort_caps_by(net, FALSE);
}

/* Freezes flow `slot` at `level` per copy, updating the channels it crosses. */
static void freeze(FsFlowNet *net, uint32_t slot, double level, int64_t bneck)
{
  FsFlow *f = &net->flows[slot];
  f->frozen = net->epoch;
  net->fill_left--;
  f->new_rate = f->copies == 1 ? level : level * f->copies;
  f->new_bneck = bneck;
  for (uint32_t h = 0; h < f->n_hops; h++) {
    uint32_t ci = f->hops[h].chan;
    FsChan *c = &net->chans[ci];
    if (f->copies == 1)
      c->frozen_sum += level;
    else
      for (uint32_t k = 0; k < f->copies; k++)
        c->frozen_sum += level;
    c->unfrozen -= f->copies;
    if (c->touched != net->step) {
      c->touched = net->step;
      fs_u32vec_push(&net->step_chans, ci);
    }
  }
}

/* Ends a filling step: one new heap entry per channel it touched, and none
 * for a channel whose flows are now all frozen (by caps or other channels).
 * Such an entry would only be popped and skipped, a sift down the whole
 * heap; taken out where it is, it costs less, and the heap, a total order
 * of distinct entries, pops the same sequence without it. */
static void end_step(FsFlowNet *net)
{
  for (guint i = 0; i < net->step_chans.n; i++) {
    uint32_t ci = net->step_chans.v[i];
    if (net->chans[ci].unfrozen > 0)
      push_share(net, ci);
    else if (in_heap(net, ci))
      heap_remove(net, net->chans[ci].hpos);
  }
  net->step_chans.n = 0;
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

static void visit_chan(FsFlowNet *net, uint32_t ci)
{
  FsChan *c = &net->chans[ci];
  if (c->mark != net->epoch) {
    c->mark = net->epoch;
    fs_u32vec_push(&net->comp_chans, ci);
  }
}

/* Adds a flow to the affected set, and its channels to the touched set. */
static void add_flow(FsFlowNet *net, uint32_t slot)
{
  FsFlow *f = &net->flows[slot];
  if (f->mark == net->epoch)
    return;
  f->mark = net->epoch;
  fs_u32vec_push(&net->comp_flows, slot);
  for (uint32_t h = 0; h < f->n_hops; h++)
    visit_chan(net, f->hops[h].chan);
}

/* Starts the affected set from the seeds (or every running flow) and
 * clears the seeds: new flows, and the flows whose bottleneck is a channel
 * a drained flow left (no other flow there was limited by that channel). */
static void collect_seeds(FsFlowNet *net)
{
  net->comp_flows.n = 0;
  net->comp_chans.n = 0;
  for (guint i = 0; i < net->seed_flows.n; i++) {
    uint32_t s = net->seed_flows.v[i];
    net->flows[s].dirty = 0;
    if (net->flows[s].state == FS_FLOW_RUNNING)
      add_flow(net, s);
  }
  for (guint i = 0; i < net->seed_chans.n; i++) {
    uint32_t ci = net->seed_chans.v[i];
    FsChan *c = &net->chans[ci];
    c->dirty = FALSE;
    if (c->n_bneck == 0)
      continue;
    for (uint32_t k = 0; k < c->n_inc; k++)
      if (net->flows[c->inc[k].flow].bneck == ci)
        add_flow(net, c->inc[k].flow);
  }
  net->seed_flows.n = 0;
  net->seed_chans.n = 0;
  if (net->global)
    for (uint32_t i = 0; i < net->n_active; i++)
      add_flow(net, net->active[i]);
}

/* Progressive filling over the component, with the boundary channels'
 * outside flows as fixed consumption. */
static void fill(FsFlowNet *net)
{
  net->heap_n = 0;
  /* The caps of A, sorted once: popped in order, merged with the heap. */
  net->caps_n = 0;
  if (net->caps_cap < net->comp_flows.n) {
    net->caps_cap = MAX(2 * net->comp_flows.n, 64);
    net->caps = g_renew(FsFillEntry, net->caps, net->caps_cap);
    net->caps_tmp = g_renew(FsFillEntry, net->caps_tmp, net->caps_cap);
  }
  uint64_t diff = 0; /* nonzero when two caps' levels differ */
  for (guint i = 0; i < net->comp_flows.n; i++) {
    uint32_t s = net->comp_flows.v[i];
    const FsFlow *f = &net->flows[s];
    if (isfinite(f->cap)) {
      uint64_t key = level_key(f->copies == 1 ? f->cap : f->cap / f->copies);
      net->caps[net->caps_n++] = (FsFillEntry){key, (FS_FILL_CAP << 32) | s};
      diff |= key ^ net->caps[0].key;
    }
  }
  sort_caps(net, diff == 0);
  /* Every flow of A capped: the fill ends with the last cap, so a channel
   * whose share is above the highest cap can never pop (a cap below it
   * always comes first); it stays out of the heap (push_share) until a
   * freeze brings its share down to fill_top. */
  net->fill_top = INFINITY;
  if (net->caps_n == net->comp_flows.n && net->caps_n > 0 && net->fill_shortcut)
    net->fill_top = key_level(net->caps[net->caps_n - 1].key);
  for (guint i = 0; i < net->comp_chans.n; i++) {
    uint32_t ci = net->comp_chans.v[i];
    FsChan *c = &net->chans[ci];
    c->unfrozen = 0;
    c->frozen_sum = c->load; /* minus A's current rates, below */
    c->froze = 0;
  }
  /* What the outside flows use is the load less A's rates: O(A's hops), not
   * a scan of every flow on A's channels. */
  for (guint i = 0; i < net->comp_flows.n; i++) {
    const FsFlow *f = &net->flows[net->comp_flows.v[i]];
    for (uint32_t h = 0; h < f->n_hops; h++) {
      FsChan *c = &net->chans[f->hops[h].chan];
      c->unfrozen += f->copies;
      c->frozen_sum -= f->rate;
    }
  }
  for (guint i = 0; i < net->comp_chans.n; i++) {
    uint32_t ci = net->comp_chans.v[i];
    FsChan *c = &net->chans[ci];
    if (c->unfrozen == c->units || c->frozen_sum < 0)
      c->frozen_sum = 0; /* no outside flow (exactly), or rounding */
    if (c->unfrozen > 0)
      push_share(net, ci);
  }
  guint next_cap = 0;
  double level = 0;
  net->fill_left = net->comp_flows.n;
  /* Once every flow of A is frozen, what is left in the heap and the caps
   * would only be popped and skipped: the fill ends there. */
  while (net->fill_left > 0) {
    while (next_cap < net->caps_n &&
           net->flows[(uint32_t)net->caps[next_cap].tag].frozen == net->epoch)
      next_cap++;
    gboolean cap = next_cap < net->caps_n;
    if (!cap && net->heap_n == 0)
      break;
    if (cap && (net->heap_n == 0 || entry_less(&net->caps[next_cap], &net->heap[0]))) {
      FsFillEntry e = net->caps[next_cap++];
      level = MAX(level, key_level(e.key));
      next_step(net);
      freeze(net, (uint32_t)e.tag, level, FS_CHANNEL_NONE);
    } else {
      FsFillEntry e = heap_pop(net);
      uint32_t idx = (uint32_t)e.tag;
      FsChan *c = &net->chans[idx];
      if (c->unfrozen == 0)
        continue; /* its flows were frozen elsewhere: an entry left in place */
      level = MAX(level, key_level(e.key));
      next_step(net);
      c->froze = net->epoch;
      c->froze_level = level;
      for (uint32_t k = 0; k < c->n_inc; k++) {
        const FsFlow *f = &net->flows[c->inc[k].flow];
        if (f->mark == net->epoch && f->frozen != net->epoch)
          freeze(net, c->inc[k].flow, level, idx);
      }
    }
    end_step(net);
  }
}

/* After a fill of the affected set A, checks that the whole allocation is
 * max-min fair, and adds to A the outside flows for which it is not:
 *   - a flow bottlenecked at a channel where A's total rate changed, or
 *     where a flow of A now runs faster than it (its limit moved);
 *   - a flow faster than the level at which that channel froze flows of A
 *     (the channel became their bottleneck; it must slow down to share).
 * Every other outside flow keeps a valid bottleneck, and every flow of A has
 * one (a cap, or a channel where it is the fastest), which characterises
 * the max-min fair allocation.  Returns TRUE if A grew. */
static gboolean expand(FsFlowNet *net)
{
  for (guint i = 0; i < net->comp_chans.n; i++) {
    FsChan *c = &net->chans[net->comp_chans.v[i]];
    c->old_sum = c->new_sum = c->max_new = 0;
  }
  for (guint i = 0; i < net->comp_flows.n; i++) {
    const FsFlow *f = &net->flows[net->comp_flows.v[i]];
    for (uint32_t h = 0; h < f->n_hops; h++) {
      FsChan *c = &net->chans[f->hops[h].chan];
      c->old_sum += f->rate;
      c->new_sum += f->new_rate;
      double per = f->copies == 1 ? f->new_rate : f->new_rate / f->copies;
      c->max_new = MAX(c->max_new, per);
    }
  }
  gboolean grew = FALSE;
  guint n = net->comp_chans.n;
  for (guint i = 0; i < n; i++) {
    uint32_t ci = net->comp_chans.v[i];
    FsChan *c = &net->chans[ci];
    if (c->units == c->unfrozen)
      continue; /* no outside flow */
    gboolean changed = fabs(c->new_sum - c->old_sum) > 1e-12 * c->capacity;
    gboolean froze = c->froze == net->epoch;
    if (!froze && c->n_bneck == 0)
      continue; /* no outside flow can be affected: none is limited here */
    for (uint32_t k = 0; k < c->n_inc; k++) {
      uint32_t s = c->inc[k].flow;
      const FsFlow *o = &net->flows[s];
      if (o->mark == net->epoch)
        continue;
      double per = o->copies == 1 ? o->rate : o->rate / o->copies;
      if ((o->bneck == ci && (changed || c->max_new > per * (1 + 1e-12))) ||
          (froze && per > c->froze_level * (1 + 1e-12))) {
        add_flow(net, s);
        grew = TRUE;
      }
    }
  }
  return grew;
}

void fs_flownet_recompute(FsFlowNet *net)
{
  FsTime now = fs_sim_now(net->sim);
  next_epoch(net);
  collect_seeds(net);
  do {
    /* A fill that is redone starts afresh: new frozen marks. */
    for (guint i = 0; i < net->comp_flows.n; i++)
      net->flows[net->comp_flows.v[i]].frozen = 0;
    fill(net);
  } while (expand(net));
  for (guint i = 0; i < net->comp_chans.n; i++) {
    FsChan *c = &net->chans[net->comp_chans.v[i]];
    g_assert(c->unfrozen == 0);
    fs_flownet_settle_channel(c, now);
    c->load = c->frozen_sum;
  }
  for (guint i = 0; i < net->comp_flows.n; i++) {
    uint32_t s = net->comp_flows.v[i];
    FsFlow *f = &net->flows[s];
    g_assert(f->frozen == net->epoch);
    fs_flownet_apply_rate(net, s, f->new_rate, f->new_bneck, now);
  }
  if (net->w_chan != NULL)
    fs_flownet_watch_update(net);
  net->stats.recomputations++;
  net->stats.recomputed_flows += net->comp_flows.n;
  net->stats.max_component = MAX(net->stats.max_component, net->comp_flows.n);
}
