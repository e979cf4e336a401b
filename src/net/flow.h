/* flow.h — the flow network: transfers of bytes over directional channels,
 * sharing bandwidth by max-min fairness, run on an FsSim.
 *
 * Channels are abstract: a capacity (bytes/s) and a latency (FsTime), named
 * by consecutive ids from 0 in the order they are added.  The routing layer
 * adds one channel per direction of every topology link (id 2*link+dir), but
 * nothing here knows of topologies.
 *
 * A flow moves `bytes` from a source to a destination along a path (an array
 * of channel ids).  Its timeline, for a flow started at time S over a path
 * whose latencies sum to L (plus the flow's own extra_latency):
 *
 *   - from S the flow occupies every channel of its path and its bytes drain
 *     at its current rate (the max-min fair share, below);
 *   - it is *drained* at D, the first picosecond at which all its bytes have
 *     left the source: D = S + bytes/rate for a constant rate; in general the
 *     integral of its rate from S to D equals bytes.  At D it leaves its
 *     channels and the flows it shared them with speed up;
 *   - it *finishes* at F = D + L: the last byte has crossed the path.  The
 *     completion callback (FsFlowSpec.done) runs at F.  (So for a constant
 *     rate, F = S + L + bytes/rate: alpha-beta with alpha = L.)
 *   A zero-byte flow never occupies a channel: D = S, F = S + L.
 *
 * Drained callback (FsFlowSpec.drained, optional): runs at D, once, after
 * the flow has left its channels (the rates of the flows it shared them
 * with are recomputed later at the same picosecond, with any flow the
 * callback starts) and before the completion callback; when L = 0 both run
 * in that order at the same picosecond, one after the other.  Its
 * FsFlowInfo is the one the completion callback will get (drained = D,
 * finish = D + L, mean_rate, bottleneck).  A sender that may put its next
 * bytes on the wire as soon as the previous ones have left (a pipelined
 * connection: collrun/exec.h) starts them here rather than at F.  For a
 * zero-byte flow it runs at S (inside fs_flownet_start when S is now); for
 * a flow of copies, once.
 *
 * Rates (model FS_NET_MAXMIN): at every instant the active flows' rates are
 * the max-min fair allocation with per-flow caps, found by progressive
 * filling: all unfrozen flows rise together; a channel whose capacity is used
 * up freezes the flows crossing it, a flow reaching its cap freezes alone.
 * A channel listed twice in one path counts twice.  Rates change only when a
 * flow starts or drains, and only for flows coupled to it through shared
 * channels (its connected component in the flow/channel graph).  Only the
 * flows whose rate can change are recomputed: the set starts at the change
 * and grows until the allocation is verifiably max-min fair (fill.c); the
 * rest is untouched.  Recomputation is deferred to one event
 * at the current time, so flows starting or draining at the same picosecond
 * cost one recomputation together (no simulated time passes meanwhile;
 * fs_flownet_flush forces it early).
 *
 * Copies: a flow may stand for `copies` identical flows (same path, bytes
 * and cap each; FsFlowSpec.copies).  It is one record, one incidence per
 * channel and one drain event, and it gets exactly what its copies would
 * get: progressive filling counts it `copies` times on every channel and
 * freezes it at copies × the level (its cap, bytes and rate are the
 * copies' sums).  A stream model that would start w identical flows starts
 * one of w copies: the same rates, w times fewer flows to recompute.
 * Channel counters count copies (peak_flows, active_flows, flows_done);
 * the network's counters (FsFlowNetStats) count flows as started.
 *
 * Model FS_NET_ANALYTIC: no sharing.  Each flow gets, alone and for its whole
 * life, min(its cap, the smallest capacity on its path).  When no two flows
 * share a channel both models give identical times, to the picosecond.
 *
 * Time is integer picoseconds.  A drain time is rounded UP to the next
 * picosecond, so a flow never finishes early — except that a computed time
 * within 1e-13 relative (plus 1e-6 ps) of an integer is taken as that
 * integer, so that floating-point noise does not turn an exact hand-computed
 * 2,000,000,000 ps into 2,000,000,001.  Remaining bytes are tracked lazily
 * (bytes left at the last rate change, and its time).  Times saturate at
 * FS_TIME_MAX, the clock's end: a flow whose drain or delivery would pass
 * it stops the run with the clock's range error (core/sim.h), never a
 * wrapped or capped time.
 *
 * Determinism and ties: progressive filling pops channels in (fair share,
 * channel id) order and capped flows in (cap, flow slot) order, channels
 * first on a tie, so rates do not depend on list orders; they agree with a
 * full recomputation to floating-point rounding (tested to the picosecond on
 * random scenarios).  Events at one picosecond run in the order they were
 * scheduled (the event core's FIFO ties), so the same sequence of calls gives
 * the same sequence of callbacks.
 *
 * Ownership and cost: FsFlowNet borrows the FsSim (which must outlive it) and
 * owns its channels and flows.  Memory is O(channels + active flows + total
 * path length of active flows); flow slots, their hop arrays and the scratch
 * of the rate computation are recycled, so a warm network allocates nothing
 * per flow.  Starting or draining a flow costs O(path) plus a share of one
 * recomputation, O(E log E) for E flow-channel incidences of the affected
 * flows (at worst the whole component).
 *
 * Debug check: fs_flownet_set_check(TRUE), or FS_NET_CHECK=1 in the
 * environment, runs fs_flownet_check after every recomputation and stops the
 * run (g_error) at the first broken invariant.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "core/sim.h"
#include "util/units.h"

G_BEGIN_DECLS

#define FS_NET_ERROR (fs_net_error_quark())
GQuark fs_net_error_quark(void);

typedef enum {
  FS_NET_ERROR_INVARIANT, /* fs_flownet_check found a broken invariant */
  FS_NET_ERROR_NO_ROUTE,  /* no path between two endpoints (routing) */
  FS_NET_ERROR_INPUT,     /* a bad flow file or option (file:line:col) */
} FsNetError;

/* The rate models, as written on the command line (`--model analytic`). */
#define FS_NET_MODELS(X)   \
  X(MAXMIN, "maxmin")      \
  X(ANALYTIC, "analytic")

typedef enum {
#define X(id, str) FS_NET_##id,
  FS_NET_MODELS(X)
#undef X
  FS_NET_N_MODELS
} FsNetModel;

const char *fs_net_model_name(FsNetModel m);
gboolean fs_net_model_from_name(const char *s, FsNetModel *out);

typedef uint32_t FsChannelId;
#define FS_CHANNEL_NONE ((int64_t)-1)

/* A flow's id: slot (low 32 bits, + 1) and generation (high 32 bits).  0 is
 * never valid.  Ids of finished flows become stale (slots are reused). */
typedef uint64_t FsFlowId;
#define FS_FLOW_NONE ((FsFlowId)0)

typedef struct FsFlowNet FsFlowNet;

/* What a flow did; handed to its completion callback, and by
 * fs_flownet_get_flow for a flow still running (then drained and finish are
 * 0 and the rates are current). */
typedef struct {
  FsFlowId id;
  int32_t src, dst;     /* the caller's labels, copied from the spec */
  uint64_t bytes;
  FsTime start;         /* S: began occupying its channels */
  FsTime drained;       /* D: last byte left the source */
  FsTime finish;        /* F = D + latency: last byte delivered */
  FsTime latency;       /* the path's latency plus the flow's extra latency */
  double rate;          /* current rate (running) or last rate (finished), B/s */
  double mean_rate;     /* bytes / (D - S); 0 when D == S */
  int64_t bottleneck;   /* the channel that limited it over its longest
                           unbroken stretch (current one while running), or
                           FS_CHANNEL_NONE (its cap, or an empty path) */
  guint path_len;
  void *user;           /* copied from the spec */
} FsFlowInfo;

/* Runs at the flow's finish time F (FsFlowSpec.done) or at its drain time
 * D (FsFlowSpec.drained).  info is valid during the call only.  The
 * callback may start flows. */
typedef void (*FsFlowDoneFn)(void *ctx, const FsFlowInfo *info);

/* A flow to start.  path is copied; path_len may be 0 (a local copy limited
 * only by rate_cap, instantaneous when uncapped). */
typedef struct {
  int32_t src, dst;          /* labels, for the caller and reports */
  const FsChannelId *path;
  guint path_len;
  uint64_t bytes;
  double rate_cap;           /* bytes/s; 0 = uncapped */
  FsTime start;              /* absolute, >= fs_sim_now() */
  FsTime extra_latency;      /* added to the path's latency (software, protocol) */
  FsFlowDoneFn done;         /* at F; may be NULL */
  FsFlowDoneFn drained;      /* at D, before done (above); may be NULL */
  void *ctx;                 /* first argument of done and drained */
  void *user;                /* handed back in FsFlowInfo */
  guint copies;              /* identical flows it stands for, 0 or 1: itself
                                alone; bytes and rate_cap are their sums */
} FsFlowSpec;

/* Per-channel counters, up to the current time. */
typedef struct {
  double capacity;        /* bytes/s */
  FsTime latency;
  uint64_t bytes;         /* bytes of the flows that drained through it */
  uint64_t flows_done;    /* flows that drained through it */
  FsTime busy;            /* time with at least one flow on it */
  guint peak_flows;       /* most flows on it at once */
  guint active_flows;     /* flows on it now */
  double load;            /* sum of the current rates of its flows, bytes/s */
  double volume;          /* integral of load over time, bytes */
} FsChannelStats;

/* Whole-network counters. */
typedef struct {
  uint64_t flows_started;
  uint64_t flows_finished;
  guint flows_active;          /* started (maybe pending) and not finished */
  uint64_t recomputations;     /* rate recomputations run */
  uint64_t recomputed_flows;   /* sum of their affected-set sizes */
  guint max_component;         /* largest affected set recomputed */
  uint64_t rate_changes;       /* flows whose rate a recomputation changed */
  uint64_t shares_skipped;     /* channel shares kept out of a fill's heap (fill.c: above
                                  every cap of an affected set whose flows all have one) */
} FsFlowNetStats;

/* Creates a network on sim (borrowed; must outlive the network). */
FsFlowNet *fs_flownet_new(FsSim *sim, FsNetModel model);
void fs_flownet_free(FsFlowNet *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsFlowNet, fs_flownet_free)

FsNetModel fs_flownet_model(const FsFlowNet *net);
FsSim *fs_flownet_sim(const FsFlowNet *net);

/* Adds a channel (capacity > 0 bytes/s, latency >= 0); returns its id, the
 * number of channels before the call.  Amortised O(1). */
FsChannelId fs_flownet_add_channel(FsFlowNet *net, double capacity, FsTime latency);
/* Makes room for n channels in all, so that adding them copies nothing (a
 * router adds two per link: without it a big topology's channel array is
 * copied at every doubling, the largest part of setting up a small run). */
void fs_flownet_reserve_channels(FsFlowNet *net, guint n);
guint fs_flownet_n_channels(const FsFlowNet *net);
double fs_flownet_channel_capacity(const FsFlowNet *net, FsChannelId ch);
FsTime fs_flownet_channel_latency(const FsFlowNet *net, FsChannelId ch);

/* Sum of the latencies along a path; O(len). */
FsTime fs_flownet_path_latency(const FsFlowNet *net, const FsChannelId *path, guint len);
/* Smallest capacity along a path (INFINITY for an empty path); O(len). */
double fs_flownet_path_capacity(const FsFlowNet *net, const FsChannelId *path, guint len);

/* The most copies one flow may stand for (FsFlowSpec.copies). */
#define FS_FLOW_MAX_COPIES (1u << 16)

/* Starts a flow (now, or later at spec->start).  Returns its id.  Programmer
 * errors (a channel id out of range, start in the past, a negative cap,
 * copies above FS_FLOW_MAX_COPIES) are g_return_val_if_fail'ed to
 * FS_FLOW_NONE. */
FsFlowId fs_flownet_start(FsFlowNet *net, const FsFlowSpec *spec);

/* Fills *out for a flow not yet finished (pending or running) and returns
 * TRUE; FALSE for a stale id.  Runs a pending recomputation first. */
gboolean fs_flownet_get_flow(FsFlowNet *net, FsFlowId id, FsFlowInfo *out);

/* Runs the pending rate recomputation now, if any. */
void fs_flownet_flush(FsFlowNet *net);

void fs_flownet_channel_stats(const FsFlowNet *net, FsChannelId ch, FsChannelStats *out);
void fs_flownet_stats(const FsFlowNet *net, FsFlowNetStats *out);

/* Watches of summed loads (max-min model): a watch of channels chans[0..n)
 * (a channel listed k times counts k times) keeps the peak, over the rate
 * recomputations from now on, of the sum of their loads (each channel's
 * sum of current rates), taken once every recomputation has set them
 * all.  For a caller that checks a bound the run must keep (a mirrored
 * collective's shared links, collrun/rails.h).  Returns the watch's id,
 * from 0 in order.  Cost: O(n), and each recomputation then re-sums the
 * watches of the watched channels it changed. */
guint fs_flownet_watch_add(FsFlowNet *net, const FsChannelId *chans, guint n);
/* The peak of watch id so far (0 before any recomputation). */
double fs_flownet_watch_peak(const FsFlowNet *net, guint id);
/* Drops every watch. */
void fs_flownet_watch_clear(FsFlowNet *net);

/* Bars channel ch (barred TRUE) or lifts its bar: a flow started over a
 * barred channel runs as any other but is counted
 * (fs_flownet_barred_starts, never reset).  For a caller that has moved
 * a channel's usual traffic elsewhere and must learn whether other
 * traffic used the channel meanwhile (the NVSwitch plane bundles of
 * route.h).  O(1); a start pays one test per hop. */
void fs_flownet_channel_bar(FsFlowNet *net, FsChannelId ch, gboolean barred);
/* Flows started so far over at least one barred channel (a flow of
 * copies counts once). */
uint64_t fs_flownet_barred_starts(const FsFlowNet *net);

/* Channel aliases: while set, a flow started over channel c < n runs on
 * channel alias[c] instead (its latency is still the path's as given).
 * For a caller that runs one member of each class of symmetric flows and
 * lets each class of symmetric channels be one channel, which then carries
 * the loads its members would (collrun/rotation.h).  alias is borrowed and
 * must stay valid until set again; n = 0 (alias NULL) turns them off.
 * Flows already started keep their channels.  A path must not name two
 * channels of one alias (the caller's check).  O(n) to set (ids checked);
 * a start pays one test per hop. */
void fs_flownet_set_alias(FsFlowNet *net, const FsChannelId *alias, guint n);

/* Sets the simulation's clock back to 0 (fs_sim_rewind) when the network
 * is idle: no flow pending or active and no event pending.  The channels'
 * counters (bytes, busy time, volume) carry on.  Returns FALSE (and
 * changes nothing) otherwise.  Cost O(channels). */
gboolean fs_flownet_rewind(FsFlowNet *net);


/* Checks the engine's invariants at the current time: no channel above its
 * capacity (1e-9 relative), every flow list consistent, every running flow
 * with 0 <= bytes left <= bytes and a positive rate, and per channel the
 * integral of its load equal to the bytes its flows moved (bytes conserved,
 * within the picosecond rounding), and max-min fairness (every running flow
 * at its cap or on a full channel where no flow is faster; maxmin model
 * only).  FALSE with FS_NET_ERROR_INVARIANT naming
 * the first violation.  O(channels + incidences). */
gboolean fs_flownet_check(FsFlowNet *net, GError **error);
/* Runs fs_flownet_check after every recomputation (g_error on failure). */
void fs_flownet_set_check(FsFlowNet *net, gboolean on);
/* Testing aid: recompute ALL active flows at every change instead of the
 * affected components (the results must be identical). */
void fs_flownet_set_global_recompute(FsFlowNet *net, gboolean on);
/* Testing aid: turns off (or back on) the fill's shortcut where every
 * affected flow has a cap: a channel whose share is above every cap stays
 * out of the fill's heap (fill.c; on by default).  The rates, and so the
 * times, must be identical to the bit either way. */
void fs_flownet_set_fill_shortcut(FsFlowNet *net, gboolean on);

G_END_DECLS
