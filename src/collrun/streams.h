/* streams.h — the stream model of a collective: a second way to run one,
 * beside the step executor (exec.h), chosen per run (FsCollExec).
 *
 * A pipelined collective in steady state keeps every connection of its
 * plan (channel, lane, source, destination: one per channel per ring hop,
 * per tree edge, per NVLS or CollNet leg) busy at one pace.  The stream
 * model runs each connection as one flow (a stream) carrying all the bytes
 * the connection carries in the whole collective, on the same flow network
 * as everything else, and adds to the streams' time the pipeline's fill
 * and drain and the per-step latencies.  Its cost grows with the
 * connections, not with the bytes or the steps.
 *
 * How the figures are found, from the plans the step executor runs (the
 * algorithms' builders and the communicator's channels: whatever changes
 * there changes here):
 *
 *   Skeletons.  Plans of the same request cut to a few whole loops
 *   (FsCollAlgo.loop_bytes) and, for ring phases, a few ring steps per loop
 *   (FsCollRequest.max_ring_steps), folded where channels are identical
 *   (fs_coll_plan_new_folded).  The loop counts start where a cut plan is
 *   the full plan cut short (its request keeps the full one's loop bytes:
 *   CollNetDirect and NVLS through the network shrink their unit below
 *   FS_SHARP_MIN_CHUNKS loops, so from 4), and the full plan is taken
 *   where three counts would hold as many loops as it.  Their connections are the streams; each
 *   stream's bytes in the full collective are extrapolated linearly from
 *   the skeletons (a loop, or a ring step, adds the same bytes to every
 *   connection), as is the full plan's latency depth (for the executor's
 *   parameters, exec-params.h).
 *
 *   Pace.  Every link carries the bytes of the streams routed over it
 *   (their paths and ECMP keys as the executor would draw them); the
 *   collective cannot take less than the busiest link's bytes over its
 *   capacity, nor a stream less than its bytes over its rate cap: that is
 *   T_bw.  A stream's rate while it sends is what its own paths carry
 *   alone (their capacity, its rate cap); the repair below shares the
 *   links where transfers meet.
 *
 *   Fill, drain, latency.  Each skeleton is evaluated as a max-plus system
 *   with those rates: a transfer takes its wire bytes at its stream's rate
 *   plus its path's latency, waits for its dependencies plus the
 *   executor's step latency (exec.h: none on one connection's FIFO order
 *   or on a credit) — for the previous transfer of its connection, until
 *   that one has sent its bytes (the end of its sending interval, its
 *   drain: exec.h), for the others until they end — and a reduction takes
 *   its bytes at the reduce bandwidth.
 *   That schedule is then repaired once to the links' capacity: on every
 *   loaded link the transfers sending at once (their rates: wire bytes
 *   over their sending time, times their path's share) are shared max-min
 *   between each two events of the schedule (those asking less than the
 *   level keep their rate), each transfer is stretched by its mean
 *   slowdown over its sending time on its most loaded link, and the
 *   system is evaluated again.  This is what the flow network does where
 *   the pipeline's fill, its drain or its bursts put several transfers on
 *   a link at once (all channels starting together, NVLS and tree lanes
 *   up and down, rings leaving through another GPU's NIC over NVLink).
 *   Collectives whose links carry several of their streams at once
 *   (NCCL's tree, CollNet, the NVLS tree, NVLS: on one host its up lane
 *   and its store lane share each NVLink) and the
 *   chains of broadcast and reduce, whose hops fall out of lockstep after
 *   the root, are not repaired where their whole plan has at most
 *   STREAMS_WHOLE_MAX_STEPS (2^18) steps and is within the plan-step
 *   guard (FsCollRequest.max_steps, else fs_coll_plan_max_steps(): a plan
 *   past it is never built whole, so the repaired model below times it):
 *   the whole plan, folded, is run
 *   by the step executor on a network of its own (the channels its
 *   streams cross, at their capacity and latency, nothing else on them),
 *   so that every transfer gets, event by event, what the flow network's
 *   max-min fill gives it.  One repair is up to 16 % off there (every hop
 *   of the NVLS tree's fill across 4 or more hosts slowed by all the
 *   channels and loops crossing its NIC at once), the fixed point of
 *   repeated repairs that this replaced did not converge on the chains
 *   (ring broadcast of 2 DGX H100 nodes +5.0 %, still moving after 400
 *   passes), and grids of a few loops that agree do not see a pipeline
 *   that drifts over hundreds (NVLS tree LL on 2 nodes: loops 4-6
 *   periodic to 1e-9, -2.2 % extrapolated; the tree of LL128 on 8
 *   single-GPU nodes -12.5 %).  Past that budget they are repaired and
 *   extrapolated as the others.
 *   The time of the full collective is extrapolated from the repaired
 *   skeletons (three loop counts from one, three ring-step counts a host
 *   period apart), its time per loop and per ring step checked to agree to
 *   1e-6, else the counts double while the skeletons stay under
 *   FS_COLL_STREAMS_MAX_SKELETON steps.  Past that budget with no
 *   agreement (an NVLS tree over hundreds of nodes, whose loops never
 *   repeat) the unrepaired schedule's time is taken, extrapolated as
 *   before (ring steps checked), plus, per link whose streams' bytes need
 *   longer than that schedule sends through it, the difference, never
 *   more than the busiest link needs beyond the busiest stream alone.
 *
 *   A ring whose hops across hosts share a link with its hops inside a
 *   host (over part of each host's GPUs, leaving through another GPU's NIC
 *   over NVLink: PXN) is not repaired: its skeletons run on their own
 *   network as whole plans do, their times per unit checked to 1e-3
 *   (STREAMS_RUN_TOL; the counts double while they disagree, as above,
 *   and past the budget the last grid's extrapolation stands).  The one
 *   repair was -7.7 to -8.3 % off there (ring LL of 32 MiB over GPUs 0, 2,
 *   4 and 6 of 4 DGX H100 nodes; -5 % for Simple of 1 GiB over 2 such
 *   hosts): the hops beside the PXN hop on its NVLink plane, slowed by it,
 *   drift until two of them send at once every ring step, which the
 *   unrepaired phases never show.  Past the whole runs' budget, the loop
 *   counts of a collective that runs whole where small start where its
 *   connections' buffers have filled (FsCollRequest.conn_slots loops,
 *   within the skeletons' budget): NVLS LL on one DGX H100 runs loops 1-3
 *   at 7.95 us, periodic, and 7.16 from the 4th on (+11.1 % at 4 and
 *   16 GiB from loops 1-3; exact from 8-10).
 *
 *   Run.  At start + base latency every stream starts as a flow of its
 *   bytes capped at its pace (bytes / T_bw), a folded stream as one flow
 *   per channel it stands for (one flow in all when timed alone: the
 *   channels share one key and so one path): alone, every stream ends at
 *   T_bw plus its path latency.  When the last one ends, the collective
 *   ends at start + base + the max-plus time + however much later than
 *   that the streams ended (other traffic on the network slowed them).
 *
 * Exactness: alone on the network, the time is the max-plus time (or the
 * whole run's); against --exact step runs (tests/test-coll-streams.c,
 * tests/bench/RESULTS.md) within 0.11 % for rings, PAT, RHD, direct and
 * hier on whole hosts and on one GPU per host, 0.003 % on half hosts (PXN,
 * 32 MiB) and 0.35 % over GPUs 0, 2, 4 and 6 of 32 nodes (1 MiB-1 GiB);
 * NCCL's tree, CollNet, NVLS across hosts, the NVLS tree and the chains of
 * broadcast and reduce are
 * exact to 1e-5 where their whole plan runs (up to 2^18 steps, unfolded
 * where that fits: every case of the test), CollNetDirect within 0.2 % up
 * to 2,048 nodes.  Past the whole runs' budget they are repaired and
 * extrapolated as the others, which is not measured against exact runs
 * (the NVLS tree of 1 GiB on 32 nodes is 14 % fast there, exact on 8 and
 * 16 where it runs whole: its pipeline fills for tens of loops), and
 * --exec auto leaves them to the steps; NVLS on one DGX H100 is exact
 * there too (1-16 GiB, every op and protocol), the NVLS tree across 128
 * hosts past the plan-step guard -2.7 / -1.4 / -0.7 % at 4 / 8 / 16 GiB
 * (-5.1 / -2.6 / -1.3 % from loops 1-3).
 *
 * Ownership: a model borrows nothing after fs_coll_streams_new returns; a
 * run borrows its model, network and transfer context until done.
 * Errors: those of fs_coll_plan_new and of the route callback;
 * FS_RUNTIME_ERROR_LIMIT when even the smallest skeletons pass the step
 * limit.  Cost: building and evaluating the skeletons, O(their steps), routing
 * each stream once, and one flow per stream; with a memo (below), only the
 * evaluation for a size whose skeletons were built before.
 */
#pragma once

#include <glib.h>

#include "coll/tuner.h"
#include "collrun/exec.h"

G_BEGIN_DECLS

/* How collectives run: the step executor, the stream model, or the rule
 * of fs_coll_exec_pick_streams. */
#define FS_COLL_EXECS(X) \
  X(STEPS, "steps")      \
  X(STREAMS, "streams")  \
  X(AUTO, "auto")

typedef enum {
#define X(id, str) FS_COLL_EXEC_##id,
  FS_COLL_EXECS(X)
#undef X
  FS_COLL_EXEC_N
} FsCollExec;

const char *fs_coll_exec_name(FsCollExec e);
/* FALSE when s names no execution model (ASCII-case-insensitive). */
gboolean fs_coll_exec_from_name(const char *s, FsCollExec *out);

/* The most steps the skeletons of one model may have together before the
 * loop or step counts stop doubling (the extrapolation then takes the
 * last counts' unrepaired figures, above).  A grid of the test's
 * collectives has at most 123 K steps; the 1 GiB NVLS tree on 4,096 GPUs
 * 590 K at its first counts, which no doubling makes agree. */
#define FS_COLL_STREAMS_MAX_SKELETON (1u << 19)

/* The algorithms and operations whose stream model was measured close to
 * exact step runs (tests/test-coll-streams.c, tests/bench/RESULTS.md):
 * all but the chains of broadcast and reduce, NCCL's tree and CollNet
 * (their links carry several of the collective's streams, or their hops
 * fall out of lockstep: exact where their whole plan runs, up to 2^18
 * steps, but past that repaired and extrapolated, unmeasured, where auto
 * would take the streams). */
gboolean fs_coll_exec_streams_trusted(const FsCollAlgo *algo, FsCollOp op);
/* The rule of --exec auto: TRUE when the collective req is trusted (above)
 * (and not NVLS, which across hosts goes through the SHARP switches as
 * CollNet does and on one host is exact where it runs whole, and past
 * 2^18 steps since its loop counts start where its buffers have filled
 * (branch gaps19; auto's rule left as it was), nor the NVLS tree across
 * hosts, 9-14 % fast past the budget of whole runs while its step runs
 * are mirrored per rail, nor a ring across hosts but the whole-host ones
 * below) and deep: every channel's share is at least FS_COLL_STREAMS_AUTO_LOOPS
 * whole loops, or the plan's steps would pass FS_COLL_STREAMS_AUTO_STEPS
 * (the step executor is then slow and the pipeline deep); or a ring of
 * FS_COLL_STREAMS_AUTO_RING_BYTES or more across hosts that are whole
 * (fs_comm_whole_hosts) or hold one rank each, each its own NVLink
 * domain, deep or not (measured within 0.2 % of --exact; rings on part of
 * each host's GPUs were 1.2 % off, and are within 0.35 % since their
 * skeletons run on their own network (branch gaps19), across a GB200
 * NVL72's trays 11.5 %: they stay with the steps).  Cost: O(hosts). */
#define FS_COLL_STREAMS_AUTO_LOOPS 64
#define FS_COLL_STREAMS_AUTO_STEPS (1u << 20)
#define FS_COLL_STREAMS_AUTO_RING_BYTES (1u << 20)
gboolean fs_coll_exec_pick_streams(const FsComm *comm, const FsCollAlgo *algo,
                                   const FsCollRequest *req);

/* What the models of one sweep share (fs_coll_bench): per family of
 * collectives (one communicator, algorithm and request but for its bytes,
 * on one network and router) the streams, their routes and the skeletons
 * built so far, so that a size whose skeletons another size already built
 * (sizes of whole loops share them) builds and routes nothing.  A family's
 * streams keep the ECMP key of its first model, as a communicator's
 * connections keep their paths from one collective to the next.  Grows
 * with the families and skeletons seen; borrows comm, algo, network and
 * route context, which must outlive it. */
typedef struct FsCollStreamsMemo FsCollStreamsMemo;
FsCollStreamsMemo *fs_coll_streams_memo_new(void);
void fs_coll_streams_memo_free(FsCollStreamsMemo *memo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollStreamsMemo, fs_coll_streams_memo_free)

typedef struct {
  FsCollRouteFixedFn route_fixed; /* folding the skeletons; NULL: none */
  FsCollRoutePathsFn route_paths; /* required */
  void *route_ctx;                /* of both */
  FsCollStreamsMemo *memo;        /* shared with other models (above); NULL: none */
} FsCollStreamsOpts;

typedef struct FsCollStreams FsCollStreams;

/* The stream model of collective req (built with choice->algo; nbytes as
 * fs_coll_cost, for the executor's latencies) on net's links, with the
 * ECMP key key (FsCollExecParams.key).  NULL with error (above). */
FsCollStreams *fs_coll_streams_new(const FsNcclParams *p, const FsCollSysInfo *sys,
                                   const FsComm *comm, uint64_t nbytes, const FsCollChoice *choice,
                                   const FsCollRequest *req, uint64_t key, FsFlowNet *net,
                                   const FsCollStreamsOpts *opts, GError **error);
void fs_coll_streams_free(FsCollStreams *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollStreams, fs_coll_streams_free)

typedef struct {
  FsTime time;          /* alone: base latency + the max-plus time */
  FsTime t_bw;          /* the busiest link's (or cap's) time, T_bw */
  guint streams;        /* connections run as flows */
  guint skeletons;      /* skeleton plans built */
  guint64 sim_steps;    /* their steps */
  guint64 loops;        /* whole loops per channel of the full plan (0: none) */
  guint ring_steps;     /* ring steps per loop of the full plan (0: none) */
  gboolean approximate; /* the skeletons' times per unit did not agree to 1e-6 */
  gboolean repaired;    /* the time is the repaired schedule's (above; FALSE: past the
                           budget, or no loaded link) */
} FsCollStreamsInfo;

/* The model's figures. */
void fs_coll_streams_info(const FsCollStreams *s, FsCollStreamsInfo *out);

typedef struct FsCollStreamsRun FsCollStreamsRun;
typedef void (*FsCollStreamsDoneFn)(void *ctx, FsCollStreamsRun *run);

/* Starts the streams of s at absolute time at (>= now) through xfer
 * (FsCollTransferFn, exec.h); done runs once when the collective ends
 * (above) or fails.  The run is the caller's (fs_coll_streams_run_free
 * after done). */
FsCollStreamsRun *fs_coll_streams_start(FsFlowNet *net, const FsCollStreams *s,
                                        FsCollTransferFn xfer, void *xfer_ctx, FsTime at,
                                        FsCollStreamsDoneFn done, void *done_ctx);
/* Runs each folded stream of width w (identical connections: one route)
 * as one transfer of w copies through xfer_copies instead of w transfers
 * through xfer: the same rates under max-min, w times fewer flows.  Call
 * before the run's start time. */
void fs_coll_streams_run_set_copies(FsCollStreamsRun *run, FsCollTransferCopiesFn xfer_copies);
gboolean fs_coll_streams_run_is_done(const FsCollStreamsRun *run);
FsTime fs_coll_streams_run_start_time(const FsCollStreamsRun *run);
FsTime fs_coll_streams_run_end_time(const FsCollStreamsRun *run);
/* FALSE with the run's error (a transfer that could not start), or with
 * FS_RUNTIME_ERROR_DEADLOCK when it has not ended. */
gboolean fs_coll_streams_run_finish(FsCollStreamsRun *run, GError **error);
void fs_coll_streams_run_free(FsCollStreamsRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollStreamsRun, fs_coll_streams_run_free)

/* Times collective req alone on net from now as streams (the simulation
 * advances by its duration) into *elapsed; info may be NULL. */
gboolean fs_coll_streams_time_alone(const FsNcclParams *p, const FsCollSysInfo *sys,
                                    const FsComm *comm, uint64_t nbytes,
                                    const FsCollChoice *choice, const FsCollRequest *req,
                                    uint64_t key, FsFlowNet *net, FsCollTransferFn xfer,
                                    void *xfer_ctx, const FsCollStreamsOpts *opts,
                                    FsTime *elapsed, FsCollStreamsInfo *info, GError **error);

G_END_DECLS
