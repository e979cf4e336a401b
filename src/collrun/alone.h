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
 *   A plan is a sequence of identical loops (the algorithm's loop_bytes,
 *   coll/plan.h): a ring's chunk loops, a tree's or a switch's slices.
 *   Every loop of it is simulated: there is no loop extrapolation.  There
 *   was one (plans of N, N+1, N+2 and 2N+2 loops checked periodic to
 *   1e-6, the rest extrapolated); removed 2026-11-28 (issue 19 item 7) as
 *   it saved no time in `fabricsim validate` once the stream model took
 *   the long plans, and its check missed drifts of up to 0.14 % (the NVLS
 *   tree on 2 NDR nodes; src/README.md, tests/bench/RESULTS.md).  Nor is
 *   there window extrapolation (a plan of F >= 64 loops timed from runs of
 *   8, 16 and 32 or more loops, a sweep's smaller sizes, its expected
 *   error checked at 1 %): removed 2026-11-28 (issue 19 item 7, branch
 *   window19), as the NVLS tree across 128 NDR nodes does not settle
 *   within 64 loops (time per loop 91.97, 92.97 then 86.67 us over [8,
 *   16], [16, 32], [32, 64]): a sweep's 1 GiB row came out 3.0 % above the
 *   same size alone and 2 GiB 5.2 % above its whole run.  A sweep's rows
 *   are now each size's alone run (tests/test-coll-fast.c).
 *
 *   Step extrapolation: a ring phase is 2(n−1) (or n−1) alike
 *   ring steps per loop (FsCollAlgo.ring_steps), so plans cut to K, K+1,
 *   K+2 and 2K+2 ring steps per loop (FsCollRequest.max_ring_steps, every
 *   loop cut alike, everything else unchanged) are simulated and checked
 *   (to 1e-6 relative) from K to K+1, K+1 to K+2 and over K+2 to 2K+2:
 *   the check at two scales catches regimes that repeat for a while and
 *   then drift.  The executor's per-step latency depends on the plan's
 *   latency depth (bench.h), which grows by a fixed count per step: it is
 *   extrapolated the same way (checked on the plans) so that the
 *   truncated plans run with the full plan's parameters.  The plans are
 *   built and run in order and an attempt stops at the first check that
 *   fails.  K starts at 4 (opts->min_steps) and doubles while 5K+5 is
 *   below the steps.  A
 *   128-rank ring all_reduce (one partial loop of 254 steps) runs 25 steps
 *   instead of 254.  Caveat, measured: a ring whose hops differ (NVLink
 *   and NIC hops, or some through the spines) takes about its length in
 *   steps to settle; when that does not show within 2K+2 steps the result
 *   is slightly short (16 DGX H100 nodes, 1 GiB ring/Simple/32: −8e-4;
 *   128 single-GPU nodes across 4 scalable units: −3.5e-4; 40 such nodes:
 *   refused by the check, run whole; tests/bench/RESULTS.md).  Under
 *   --exec auto (the default) rings of 1 MiB or more across whole hosts or
 *   one GPU per host (each its own NVLink domain) run as streams instead
 *   (streams.h); this serves the rest: rings on part of each host's GPUs,
 *   whose stream model is up to 1.2 % slow (PXN; kept for them,
 *   2026-11-28), across the trays of a GB200 NVL72 rack (streams up to
 *   11.5 % off; this itself up to 1.7 % off --exact there), smaller rings,
 *   and every ring under --exec steps.
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
 *   Channel deduplication (analytic flow model; dedup.h): flows share
 *   nothing there, so each channel is a closed system; of the channels
 *   whose steps and route figures agree one for one, one runs
 *   (FsCollExecParams.channel_mask).  Exact, to the picosecond; it needs
 *   opts->route_profile (routes whose figures do not depend on the key).
 *   A 128-rank ring over 16 DGX H100 nodes runs 1 of its 32 channels.
 *
 *   Plane bundles (net/route.h, fs_router_set_plane_bundles): where runs
 *   fold and opts->plane_bundles is given, and the run makes no rails, an
 *   NVLink transfer over the NVSwitch planes of a uniform island (every
 *   GPU linked alike to every plane) runs as one flow over a bundle of the
 *   planes instead of one per plane (DGX H100: 5+4+4+5 links, 4 flows to
 *   1).  Max-min gives each plane its weight's share of what the bundle
 *   gets while every flow on the planes is such a transfer's part; the
 *   byte remainders of the per-plane split move times by picoseconds
 *   (tests/bench/RESULTS.md, "NVSwitch plane bundles").  A run in which
 *   a flow pinned to one plane (a PXN head, an NVLS leg) crossed a bundled
 *   island while a transfer was bundled is run again without bundles
 *   (stats->unbundled_reruns); a plan with a connection that would do so
 *   (opts->planes_free, asked once per connection) runs without them at
 *   once (alltoall and the direct algorithms across DGX H100 hosts, whose
 *   PXN heads take one plane).
 *
 *   Rotated channels (rotation.h): where runs fold, opts->flow_paths
 *   and a memo are given, NCCL's tree and the ring's phases on hosts
 *   whose rings rotate into each other (DGX H100: by 2 GPUs, order 4)
 *   make only the channels
 *   c mod (s·m) < s (FsCollRequest.rotation) and runs each orbit of
 *   links under the rotation as one link (flow.h, fs_flownet_set_alias);
 *   the links whose routes do not rotate (spines hashed by destination)
 *   are watched, and a run whose watches fail runs the whole plan.  Exact
 *   to the picosecond (tests/test-rotation.c); a build other than release
 *   (FABRICSIM_CHECK_MIRRORS) runs the whole plan after every rotated run
 *   and stops unless the times are equal.  1/m of the transfers
 *   (stats->rotated_runs).
 *
 * A transfer's ECMP key is its connection's (exec.h), so a truncated plan
 * draws the same paths as the full plan where the fabric hashes flows
 * (Ethernet); folding is still refused there (route_fixed).
 *
 * Bounded buffers (FsCollRequest.conn_slots, coll/plan.h) are NCCL's and are on
 * for every tuned collective; they do not make the NVLS tree across many
 * nodes periodic (128 NDR nodes: the time per loop over windows of 8 loops
 * still differs by 2.5 %), so those plans run whole.
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
 * GPUs keeps 1/16).
 *
 * A collective that shares the network with others cannot use either:
 * coarser slices (FsCollRequest.max_slices_per_conn, coll/plan.h) are the
 * trade-off offered there.
 *
 * Ownership: borrows everything.  Errors: those of fs_coll_plan_new and
 * fs_coll_run_alone.  Cost: every loop of the plan, or four runs of 5K+5
 * ring steps per loop in all instead of all its steps; a folded run
 * simulates 1/k of the flows; a refused check costs its runs on top of the
 * whole plan.
 */
#pragma once

#include <glib.h>

#include "coll/tuner.h"
#include "collrun/a2a.h"
#include "collrun/dedup.h"
#include "collrun/exec.h"
#include "collrun/streams.h"

G_BEGIN_DECLS

/* What the sizes of a sweep share: the rails of a communicator's NVLS
 * tree (rails.h), the rotations of its tree (rotation.h), the stream models' streams, routes and skeletons
 * (streams.h) and the alltoall load model's loads (a2a.h).  No time is reused: each size runs as it would alone.
 * Owned by the caller; one per communicator and network (fs_coll_bench
 * makes one per sweep). */
typedef struct FsCollAloneMemo FsCollAloneMemo;
FsCollAloneMemo *fs_coll_alone_memo_new(void);
void fs_coll_alone_memo_free(FsCollAloneMemo *memo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollAloneMemo, fs_coll_alone_memo_free)

/* Sets the NVSwitch plane bundles of the network's router (net/route.h)
 * on or off; off returns whether the run since on held (no flow pinned to
 * a plane met a bundled transfer), on returns TRUE.  ctx: route_ctx. */
typedef gboolean (*FsCollPlaneBundlesFn)(void *ctx, gboolean on);

typedef struct {
  gboolean exact;                 /* TRUE: every loop of every channel, no shortcut */
  FsCollAloneMemo *memo;          /* rails (rails.h; step runs need it) and the stream
                                     models' shared work (streams.h); NULL: none */
  FsCollRouteFixedFn route_fixed; /* folding needs it (fs_coll_topo_route_fixed); NULL: none */
  FsCollRouteProfileFn route_profile; /* analytic dedup needs it (fs_coll_topo_route_profile);
                                         NULL: none */
  FsCollRoutePathsFn route_paths; /* analytic model: links shared inside the collective
                                     (exec.h, fs_coll_share_caps); NULL: every flow alone */
  FsCollPlaneBundlesFn plane_bundles; /* step runs bundle NVSwitch planes (fs_coll_topo_plane_bundles,
                                         "Plane bundles" above); NULL: never */
  FsCollRouteFixedFn planes_free; /* with plane_bundles: TRUE when a transfer between two nodes
                                     leaves the bundled planes to bundled transfers
                                     (fs_coll_topo_planes_free); NULL: not asked */
  FsCollRouteRelayFn route_relay; /* the load model of an alltoall needs the first three */
  FsCollRouteOnceFn route_once;   /* (a2a.h; fs_coll_topo_route_relay, _once, _rail); NULL: */
  FsCollRouteRailFn route_rail;   /* the steps; route_fabric (fs_coll_topo_route_fabric) */
  FsCollRouteFabricFn route_fabric; /* routes once per fabric switch; NULL: per source host */
  FsCollRoutePathsFn flow_paths;  /* the paths a transfer's flows take now, NVSwitch plane
                                     bundles included (fs_coll_topo_flow_paths): NCCL's tree
                                     makes one channel per rotation with it (rotation.h);
                                     NULL: every channel */
  void *route_ctx;                /* of all ten */
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
  guint64 sim_loops;   /* whole loops of the largest plan simulated (== loops) */
  FsTime period;       /* time per ring step of a step extrapolation (per P steps
                          if periodic), else 0 */
  guint width;         /* channels per simulated channel in the last run (1: not folded) */
  guint sim_channels;  /* channels simulated in the last run (fewer than the plan's:
                          folded, or deduplicated in the analytic model) */
  guint ring_steps;    /* ring steps per loop of the full plan (0: none) */
  guint sim_ring_steps; /* ring steps per loop of the largest plan simulated (== ring_steps:
                           no step extrapolation) */
  guint step_period;   /* ring steps per period of a periodic step extrapolation (0: none) */
  guint runs;          /* simulations run */
  guint64 sim_steps;   /* steps simulated over all runs (streams: the skeletons' steps) */
  gboolean streams;    /* TRUE: timed by the stream model (FsCollAloneOpts.exec) */
  guint bundled_runs;  /* runs with NVSwitch planes bundled that held */
  guint unbundled_reruns; /* runs repeated without them (a flow pinned to a plane) */
  guint rotated_runs;  /* runs of one channel per rotation that held (rotation.h) */
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
