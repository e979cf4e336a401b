/* alone.h — the time of one collective running alone on the network,
 * simulated quickly without giving up accuracy.
 *
 * Contract: the network carries nothing else while the collective runs
 * (fabricsim coll, the nccl-tests sweep, validation, a collective timed in
 * isolation for a training step).  Under that condition three shortcuts
 * are exact or checked, and all are used unless opts->exact:
 *
 *   Channel folding (coll/plan.h): k identical channels run as one
 *   flow set of k × the bytes at k × the rate cap.  Exact under max-min
 *   sharing when every flow stands for the same k and the copies would take
 *   the same paths (opts->route_fixed says so for every node pair; without
 *   it nothing is folded).  On InfiniBand the router picks equal-cost paths
 *   by destination (route.h, FsRouteOptions.ecmp), so every pair is fixed
 *   and channels fold across a fat tree too (128 DGX H100 nodes: the NVLS
 *   tree's 16 channels fold to 4, a one-GPU-per-node ring's 32 to 1).
 *   Plans are folded while they are built (fs_coll_plan_new_folded: the
 *   same plan, without ever holding the whole one).
 *
 *   Loop extrapolation: a plan is a sequence of identical loops (the
 *   algorithm's loop_bytes, coll/plan.h): a ring's chunk loops, a tree's or a
 *   switch's slices.  Started alone, the run settles after a transient
 *   into a periodic regime in which every further loop adds the same time
 *   (a max-plus system of a periodic DAG).  The plans with N, N+1, N+2 and
 *   2N+2 whole loops (every other part of the plan unchanged, the last
 *   partial loop included) are simulated; when the time per loop agrees
 *   (to 1e-6 relative) from N to N+1, N+1 to N+2 and over N+2 to 2N+2,
 *   the time of the full plan of F loops is
 *   T(2N+2) + (F − 2N − 2) × (T(N+2) − T(N+1)).  The check at two scales
 *   catches regimes that repeat exactly for a while and then drift (the
 *   NVLS tree across NDR nodes, whose two lanes drift apart: loops 8..10
 *   repeat to 1e-8, the full run is 0.45 % longer); such a plan runs whole.  N starts at 4 or at the
 *   pipeline's length in loops (the latency depth of a one-loop plan over
 *   its most transfers on one connection), whichever is larger: before the
 *   pipeline is full the loops can follow each other at a steady but
 *   shorter pace (a chain of 8 ranks: 2 % off at N = 4, exact from N = 8).
 *   When the differences disagree N doubles; when simulating 5N+5 loops
 *   would not be cheaper than F, the full plan runs.  The four plans are
 *   built and run in order and an attempt stops at the first check that
 *   fails (N+1 against N+2 before 2N+2 runs): the same answer for less.
 *   The executor's per-step latency depends on the plan's latency depth
 *   (bench.h), which grows by a fixed count per loop after the first: it is
 *   extrapolated the same way (checked on the three plans) so that the
 *   truncated plans run with the full plan's parameters.
 *
 *   Step extrapolation (when loop extrapolation does not apply: too few
 *   loops, or no periodic regime): a ring phase is 2(n−1) (or n−1) alike
 *   ring steps per loop (FsCollAlgo.ring_steps), so plans cut to K, K+1,
 *   K+2 and 2K+2 ring steps per loop (FsCollRequest.max_ring_steps, every
 *   loop cut alike, everything else unchanged) are simulated and checked
 *   the same way (1e-6, two scales, latency depth extrapolated); K starts
 *   at 4 (opts->min_steps) and doubles while 5K+5 is below the steps.  A
 *   128-rank ring all_reduce (one partial loop of 254 steps) runs 25 steps
 *   instead of 254.  Caveat, measured: a ring whose hops differ (NVLink
 *   and NIC hops, or some through the spines) takes about its length in
 *   steps to settle; when that does not show within 2K+2 steps the result
 *   is slightly short (16 DGX H100 nodes, 1 GiB ring/Simple/32: −8e-4;
 *   128 single-GPU nodes across 4 scalable units: −3.5e-4; 40 such nodes:
 *   refused by the check, run whole; tests/bench/RESULTS.md).
 *
 *   Periodic steps: a ring that visits P GPUs of each host between two
 *   network hops (P = ranks per host, every host alike) repeats every P
 *   ring steps, not every step (one NIC hop in P), so single steps never
 *   agree and it used to run whole.  When the check above fails at K, the
 *   plans of B, B+P, B+2P and B+2P+M steps (B = K + (S − K) mod P, so
 *   that S − B is whole periods; M = K rounded up to whole periods) are
 *   checked the same way (1e-6, two scales), period for period
 *   (stats->step_period).  Measured: equal to the whole run to the
 *   picosecond for 2 and 4 GPUs per host over 32 and 16 NDR nodes
 *   (tests/test-coll-dedup.c) and for GPT-3 175B's 128- and 512-rank DP
 *   groups (tests/bench/RESULTS.md).  opts->period_off (or exact) turns
 *   it off.
 *
 *   Window extrapolation (opts->memo): where no periodic regime exists
 *   (the NVLS tree across many nodes; NCCL's tree over 64 NDR nodes, whose
 *   loops repeat only from about the 56th), a plan of F >= 64 whole loops
 *   (and its last, partial loop, which every plan of the family keeps)
 *   takes its time from runs of plans of the same family (algorithm,
 *   protocol, channels, chunk, slice, slots, op, datatype, the bytes past
 *   the whole loops, executor parameters, folded) of L1 >= 8, L2 = 2 L1 and L3 = 2 L2 <=
 *   F/2 whole loops: T(F) = T(L3) + (F − L3) × s2, where s1 and s2 are the
 *   times per loop over [L1, L2] and [L2, L3].  The two windows disagree by
 *   |s2 − s1| per loop; over the F − L3 loops extrapolated that is the
 *   error to expect, and the window is accepted when it is at most 1 % of
 *   T(F).  Not exact (measured against whole runs in tests/bench/RESULTS.md).
 *   The runs are taken from the memo first (a sweep's smaller sizes, ×2
 *   apart, run whole): the largest window there.  A refused window widens
 *   to [L2, L3, 2 L3] by running the plan of 2 L3 loops, while that costs
 *   at most F/2 loops.  When the exact shortcuts fail (loop extrapolation,
 *   tried at the first N only when windows can run and F >= 128; step
 *   extrapolation) and runs fold, the plans of 8, 16 and 32 loops are run
 *   for a window when they cost at most F/2 loops (F >= 112), so that a
 *   single large size does not run whole.  Whole runs of such plans are
 *   recorded in the memo.
 *
 *   The memo also keeps every folded run of a family's plan of L whole
 *   loops (the truncated plans of loop extrapolation too) with its
 *   executor parameters and latency depth; an attempt that needs the same
 *   plan with the same parameters again (a larger size of the sweep tries
 *   the same N again) takes its time from the memo instead of building and
 *   running it.  Exact: a plan alone on the network with the same
 *   parameters takes the same time (folded runs only, whose routes do not
 *   depend on the keys; tests/test-coll-fast.c checks it to the ps).
 *
 *   Channel deduplication (analytic flow model; dedup.h): flows share
 *   nothing there, so each channel is a closed system; of the channels
 *   whose steps and route figures agree one for one, one runs
 *   (FsCollExecParams.channel_mask).  Exact, to the picosecond; it needs
 *   opts->route_profile (routes whose figures do not depend on the key).
 *   A 128-rank ring over 16 DGX H100 nodes runs 1 of its 32 channels.
 *
 * A transfer's ECMP key is its connection's (exec.h), so a truncated plan
 * draws the same paths as the full plan where the fabric hashes flows
 * (Ethernet); folding is still refused there (route_fixed).
 *
 * Bounded buffers (FsCollRequest.conn_slots, coll/plan.h) are NCCL's and are on
 * for every tuned collective; they do not make the NVLS tree across many
 * nodes periodic (128 NDR nodes: the time per loop over windows of 8 loops
 * still differs by 2.5 %), so those plans fail the 1e-6 check and run
 * whole, or take a window extrapolation (above).
 *
 * Too big for steps: when the whole plan would pass the plan-step guard
 * (coll/plan.h; a plan of whole loops is measured from its one- and
 * two-loop plans, counted as the guard counts them without being built,
 * fs_coll_plan_count_steps; any other fails while it is built), a run that
 * can route streams (opts->route_paths, not exact) is timed by the stream
 * model (streams.h; stats->streams) instead of failing: at once where the
 * stream model is trusted (fs_coll_exec_streams_trusted: the short runs of
 * the shortcuts over thousands of ranks cost seconds each and fail for the
 * NVLS tree, whose 64 loops of 1 GiB on 512 DGX H100 nodes do not repeat;
 * 33 s of CPU before, 2 s now), after the shortcuts otherwise.  A plan of
 * whole loops past the guard whole that folding might bring under it (no
 * more steps than the guard × its channels) is built folded first
 * (FsCollRequest.max_virtual): it runs as steps when it keeps no more
 * steps than the guard allows, else as streams (CollNetDirect on 16,384
 * GPUs keeps 1/16).  The family's one- and two-loop plans are built
 * folded in the same way, and a family whose plans pass the guard even
 * so is left out of the memo.
 *
 * A collective that shares the network with others cannot use either:
 * coarser slices (FsCollRequest.max_slices_per_conn, coll/plan.h) are the
 * trade-off offered there.
 *
 * Ownership: borrows everything.  Errors: those of fs_coll_plan_new and
 * fs_coll_run_alone.  Cost: four runs of 5N+5 loops in all (N = 4 unless
 * the transient is longer) instead of one of F loops, or of 5K+5 ring
 * steps per loop instead of all; a folded run simulates 1/k of the flows;
 * a refused check costs its runs on top of the whole plan.
 */
#pragma once

#include <glib.h>

#include "coll/tuner.h"
#include "collrun/dedup.h"
#include "collrun/exec.h"
#include "collrun/streams.h"

G_BEGIN_DECLS

/* Whole-plan times measured by earlier calls (a sweep's smaller sizes) and
 * runs of truncated plans, for the window extrapolation above and to run
 * no plan twice.  Owned by the caller; one per
 * communicator and network (fs_coll_bench makes one per sweep). */
typedef struct FsCollAloneMemo FsCollAloneMemo;
FsCollAloneMemo *fs_coll_alone_memo_new(void);
void fs_coll_alone_memo_free(FsCollAloneMemo *memo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollAloneMemo, fs_coll_alone_memo_free)

typedef struct {
  gboolean exact;                 /* TRUE: every loop of every channel, no shortcut */
  FsCollAloneMemo *memo;          /* window extrapolation (below) and the stream models'
                                     shared work (streams.h, FsCollStreamsMemo); NULL: none */
  FsCollRouteFixedFn route_fixed; /* folding needs it (fs_coll_topo_route_fixed); NULL: none */
  FsCollRouteProfileFn route_profile; /* analytic dedup needs it (fs_coll_topo_route_profile);
                                         NULL: none */
  FsCollRoutePathsFn route_paths; /* analytic model: links shared inside the collective
                                     (exec.h, fs_coll_share_caps); NULL: every flow alone */
  void *route_ctx;                /* of all three */
  guint min_loops;                /* N to start from; 0 = at least 4 and the pipeline's
                                     length (below) */
  guint min_steps;                /* K to start step extrapolation from; 0 = 4 */
  gboolean period_off;            /* TRUE: no periodic step extrapolation (period 1 only) */
  /* The execution model (streams.h): STEPS (zero) the executor with the
   * shortcuts above; STREAMS the stream model; AUTO streams where
   * fs_coll_exec_pick_streams says so.  Streams need route_paths (else
   * the steps run); exact runs steps whatever this says. */
  FsCollExec exec;
} FsCollAloneOpts;

typedef struct {
  FsTime time;         /* the collective's duration */
  guint64 loops;       /* whole loops per channel of the full plan (0: no loop structure) */
  guint64 sim_loops;   /* whole loops of the largest plan simulated (== loops: no extrapolation) */
  FsTime period;       /* time per loop when extrapolated, else 0 */
  guint width;         /* channels per simulated channel in the last run (1: not folded) */
  guint sim_channels;  /* channels simulated in the last run (fewer than the plan's:
                          folded, or deduplicated in the analytic model) */
  guint ring_steps;    /* ring steps per loop of the full plan (0: none) */
  guint sim_ring_steps; /* ring steps per loop of the largest plan simulated (== ring_steps:
                           no step extrapolation) */
  gboolean window;     /* TRUE: window extrapolation (not exact) */
  guint step_period;   /* ring steps per period of a periodic step extrapolation (0: none) */
  guint runs;          /* simulations run */
  guint64 sim_steps;   /* steps simulated over all runs (streams: the skeletons' steps) */
  gboolean streams;    /* TRUE: timed by the stream model (FsCollAloneOpts.exec) */
} FsCollAloneStats;

/* Times the collective req (built with choice->algo; nbytes as
 * fs_coll_cost, for the executor's latencies) alone on net, starting now;
 * the simulation advances by the runs' durations.  key: the runs' ECMP key
 * (FsCollExecParams.key).  opts NULL = defaults (extrapolation, no folding).
 * stats may be NULL.  A collective that would end past the clock's end
 * (simulated or extrapolated) fails with the clock's range error
 * (FS_RUNTIME_ERROR_CLOCK, util/units.h). */
gboolean fs_coll_time_alone(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                            uint64_t nbytes, const FsCollChoice *choice, const FsCollRequest *req,
                            uint64_t key, FsFlowNet *net, FsCollTransferFn xfer, void *xfer_ctx,
                            const FsCollAloneOpts *opts, FsCollAloneStats *stats, GError **error);

G_END_DECLS
