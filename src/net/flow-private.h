/* flow-private.h — the flow network's internal records, shared by flow.c
 * (flow lifecycle, events, counters) and fill.c (which flows a change
 * affects, and their max-min fair rates).  Not installed; not for callers.
 */
#pragma once

#include "net/flow.h"

G_BEGIN_DECLS

/* One hop of a flow: the channel, and the flow's position in that channel's
 * incidence list (so a drained flow leaves the list in O(1)). */
typedef struct {
  uint32_t chan;
  uint32_t pos;
} FsHop;

/* One entry of a channel's incidence list: which flow, at which of its hops. */
typedef struct {
  uint32_t flow;
  uint32_t hop;
} FsInc;

typedef struct {
  double capacity;
  FsTime latency;
  FsInc *inc;           /* the flows on this channel (unordered) */
  uint32_t n_inc, inc_cap;
  uint32_t units;       /* the copies of the flows on it (n_inc when none has copies) */
  /* Counters. */
  uint64_t bytes, flows_done;
  FsTime busy, busy_since;
  uint32_t peak;
  double load;          /* sum of current rates */
  double volume;        /* integral of load up to vol_time */
  FsTime vol_time;
  /* Scratch of one recomputation. */
  uint32_t mark;        /* == net->epoch: in the component */
  uint32_t touched;     /* == net->step: touched in the current filling step */
  uint32_t unfrozen;    /* copies of the flows not yet frozen */
  uint32_t hpos;        /* its entry's index in net->heap (fill.c's in_heap) */
  uint32_t froze;       /* == net->epoch: it was the bottleneck of a filling step */
  double froze_level;   /* the level of that step */
  double frozen_sum;    /* sum of the frozen (or fixed) flows' rates */
  double old_sum, new_sum; /* the affected flows' rates on it */
  double max_new;       /* the fastest affected flow's rate per copy */
  uint32_t n_bneck;     /* running flows whose current bottleneck it is */
  gboolean dirty;       /* a seed of the next recomputation */
  uint32_t watches;     /* 1 + the index of its first watch in net->w_chan (watch.c); 0: none */
  gboolean barred;      /* a flow started over it is counted (fs_flownet_channel_bar) */
} FsChan;

typedef enum {
  FS_FLOW_FREE,
  FS_FLOW_PENDING,      /* start event scheduled */
  FS_FLOW_RUNNING,      /* on its channels */
  FS_FLOW_DRAINED,      /* off its channels, waiting for its last byte to land */
} FsFlowState;

typedef struct {
  /* Hot: rate computation. */
  double rate;          /* current rate, B/s (0 before the first computation) */
  double cap;           /* INFINITY when uncapped */
  double bytes_left;    /* at t_upd */
  FsTime t_upd;
  FsTime drain_at;      /* scheduled drain time (valid when ev is pending) */
  FsEventId ev;         /* the start, drain or delivery event */
  FsHop *hops;
  uint32_t n_hops, hops_cap;
  uint32_t mark;        /* == net->epoch: in the component */
  uint32_t frozen;      /* == net->epoch: its new rate is set */
  uint32_t gen;
  uint32_t active_pos;  /* index in net->active */
  uint32_t copies;      /* identical flows it stands for (>= 1; flow.h) */
  double new_rate;
  int64_t new_bneck;
  uint8_t state;
  uint8_t dirty;        /* a seed of the next recomputation */
  /* Cold: bookkeeping and the caller's data. */
  int64_t bneck, best_bneck;
  FsTime bneck_since, best_dur;
  FsTime start, latency, drained;
  uint64_t bytes;
  int32_t src, dst;
  FsFlowDoneFn done;
  FsFlowDoneFn drained_fn; /* FsFlowSpec.drained: runs at D (may be NULL) */
  void *ctx, *user;
  uint32_t next_free;
} FsFlow;

/* An entry of the progressive filling (the channels' heap, the sorted
 * caps): a channel's fair share or a flow's cap.  Ordered by (level, tag);
 * tag = kind << 32 | index.  The level is kept as fill.c's order key
 * (level_key: its bits, mapped so that unsigned order is the order of
 * the doubles), so that an entry compares as one 128-bit integer. */
typedef struct {
  uint64_t key;
  uint64_t tag;
} FsFillEntry;

#define FS_FILL_CHAN ((uint64_t)0)
#define FS_FILL_CAP ((uint64_t)1)

/* A growable array of uint32 (the scratch lists of a recomputation: kept
 * as plain arrays, they are on the hottest path). */
typedef struct {
  uint32_t *v;
  guint n, cap;
} FsU32Vec;

static inline void fs_u32vec_push(FsU32Vec *a, uint32_t x)
{
  if (a->n == a->cap) {
    a->cap = a->cap ? 2 * a->cap : 64;
    a->v = g_renew(uint32_t, a->v, a->cap);
  }
  a->v[a->n++] = x;
}

struct FsFlowNet {
  FsSim *sim;
  FsNetModel model;
  FsChan *chans;
  uint32_t n_chans, chans_cap;
  FsFlow *flows;
  uint32_t n_flows, flows_cap;   /* slots ever used, allocated */
  uint32_t free_head;            /* free slot list, UINT32_MAX = empty */
  uint32_t *active;              /* running flows (for global mode and checks) */
  uint32_t n_active, active_cap;
  /* Seeds of the pending recomputation. */
  FsU32Vec seed_flows;           /* slots */
  FsU32Vec seed_chans;           /* channel ids */
  FsEventId recompute_ev;
  /* Scratch of the recomputation (reused). */
  FsU32Vec comp_flows, comp_chans, step_chans;
  FsFillEntry *heap;             /* the channels' filling heap, indexed (a plain array: hot) */
  guint heap_n, heap_cap;
  guint fill_left;               /* flows of the affected set not frozen yet in this fill */
  FsFillEntry *caps;             /* the caps of the affected flows, sorted */
  FsFillEntry *caps_tmp;         /* the sort's scratch, caps_cap entries */
  guint caps_n, caps_cap;
  uint32_t epoch, step;
  gboolean check, global;
  gboolean fill_shortcut;        /* fill.c may leave channels out of its heap
                                    (fs_flownet_set_fill_shortcut) */
  double fill_top;               /* A's highest cap, INFINITY if a flow has none: a
                                    share above it stays out of the heap (fill.c) */
  FsFlowNetStats stats;
  uint64_t hop_bytes;            /* sum over drained flows of bytes * hops */
  uint64_t barred_starts;        /* flows started over a barred channel (fs_flownet_channel_bar) */
  const FsChannelId *alias;      /* fs_flownet_set_alias: channel c < n_alias runs on alias[c] */
  guint n_alias;
  /* Watches of summed loads (watch.c, fs_flownet_watch_add). */
  GArray *w_members;             /* FsChannelId, watch by watch */
  GArray *w_off;                 /* guint: watch i's members at [w_off[i], w_off[i + 1]) */
  GArray *w_peak;                /* double per watch */
  GArray *w_chan;                /* FsWatchRef: each watched channel's watches, a list */
  GArray *w_dirty;               /* guint: watches to re-sum after a recomputation */
  GArray *w_stamp;               /* guint per watch: == w_epoch when in w_dirty */
  guint w_epoch;
};

/* One watch of a channel (watch.c), and 1 + the index of the channel's
 * next one in w_chan (0: the last). */
typedef struct {
  guint watch;
  guint next;
} FsWatchRef;

/* watch.c: after a recomputation set the loads of the channels in
 * comp_chans, re-sums the watches of those that are watched. */
void fs_flownet_watch_update(FsFlowNet *net);
/* watch.c: frees the watches. */
void fs_flownet_watch_free(FsFlowNet *net);

/* fill.c: recomputes the rates of the components reached from the seeds,
 * applying them to the flows (settling bytes, rescheduling drains) through
 * fs_flownet_apply_rate.  Clears the seeds. */
void fs_flownet_recompute(FsFlowNet *net);

/* flow.c: gives flow `slot` its new rate at now, the current time (settles
 * its bytes, reschedules its drain when the drain time changed). */
void fs_flownet_apply_rate(FsFlowNet *net, uint32_t slot, double rate, int64_t bneck, FsTime now);

/* Settles a channel's volume integral up to now, the current time (inline:
 * every drain and recomputation settles each of its channels). */
static inline void fs_flownet_settle_channel(FsChan *c, FsTime now)
{
  if (now != c->vol_time) {
    c->volume += c->load * (double)(now - c->vol_time) / 1e12;
    c->vol_time = now;
  }
}

G_END_DECLS
