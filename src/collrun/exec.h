/* exec.h — runs a collective plan on the flow network.
 *
 * A run walks the plan's DAG on an FsFlowNet.  A transfer becomes a flow
 * along the route between its two endpoints' topology nodes, carrying the
 * payload divided by the protocol's payload fraction (LL moves twice its
 * data), with an optional per-flow rate cap; a reduction is a compute
 * delay of bytes / reduce bandwidth (none when that is 0).  The protocol's
 * per-step latency (NCCL's hwLatencies for the algorithm, intra- or
 * inter-host by the transfer) is the time between a transfer's delivery
 * and the moment its data can be used: a step starts when every
 * dependency has completed, plus that latency for each dependency that is
 * a transfer on another connection, and the collective ends that latency
 * after its last transfer is delivered.
 *
 * The FIFO order of one connection (the edge from a transfer to the next
 * transfer of the same connection, fs_coll_step_same_conn: the builder's
 * only same-connection edge, never data: the next transfer's bytes are at
 * its source already) is released when the transfer has *drained* (its
 * last byte left the source, net/flow.h D), not when it is delivered
 * (F = D + the path's latency), and costs no step latency; a ring step's
 * first transfer across hosts waits ring_step_latency_inter after that
 * drain.  So a connection keeps its link busy while its previous bytes are
 * in flight, and a chunk does not pay its path latency again: NCCL's
 * sender posts a connection's next slice as soon as it has the data and a
 * free buffer slot, without waiting for the previous one to land
 * (src/device/prims_simple.h v2.28.9-1 waitPeer, lines 109-170: a sender
 * waits only while connStepCache + NCCL_STEPS < step + StepPerSlice, the
 * receiver's consumed steps plus the 8 slots; postPeer, lines 173-181,
 * publishes the step and moves on; waitSend of prims_ll.h lines 56-59 and
 * prims_ll128.h lines 58-61 the same, sendConnHeadCache + NCCL_STEPS;
 * across hosts the proxy isends a step as soon as the GPU posted it and
 * fewer than NCCL_STEPS are outstanding, src/transport/net.cc lines
 * 1272-1326).  The slots are the plan's credits (coll/plan.h
 * FsCollRequest.conn_slots: NCCL_STEPS / the protocol's slice steps, 4
 * slices for Simple, 8 for LL and LL128; NCCL's ALLREDUCE_SLICESTEPS =
 * NCCL_STEPS/4, src/include/collectives.h lines 17-33): transfer k of a
 * connection also waits until every step at the receiver that consumes
 * transfer k - slots has completed (the consumer's delivery stands for the
 * credit's trip back; no step latency).  They bind where a sender could
 * run more than the buffer ahead of its receiver (CREDITS_BIND below).
 *
 * The collective's base latency (NCCL's baseLatencies) passes before the
 * first step.  So a chain of k dependent transfers of
 * tiny messages takes base + k × step latency, as NCCL's model says, and
 * large pipelines hide the latency behind other slices.  Several runs may
 * share one network at once: their flows contend for real.  A step of a
 * folded plan (width k, coll/plan.h) starts one flow of k times its wire bytes
 * capped at k times the rate cap: it stands for k identical flows, which
 * is exact only when the run is alone on the network (alone.h).
 *
 * Transfers are started through a callback so that this module does not
 * depend on how the topology is routed (fs_router_transfer in
 * src/net/route.h has the same shape and may split a transfer over several
 * paths; tests start single flows on hand-built channel graphs).
 * Endpoint → node: a rank's GPU (fs_comm_gpu), a host's NVLS switch for the
 * step's channel, the CollNet switch.
 *
 * Ownership: the run borrows the net, the plan (and its communicator) and
 * the transfer context; all must outlive it.  Errors: a transfer that
 * cannot start or an endpoint with no node stops the run; the error is kept
 * and returned by fs_coll_run_finish (FS_COLL_ERROR_INVALID or the
 * callback's error).  Cost: O(steps + deps) plus one transfer per step.
 */
#pragma once

#include <glib.h>

#include "coll/plan.h"
#include "net/flow.h"

G_BEGIN_DECLS

/* Starts a transfer of bytes from node src to node dst now (key: a number
 * that tells transfers apart, for ECMP); done(done_ctx, info) must run once
 * when its last byte has landed, with info->user == user (it may run
 * before the call returns); drained(done_ctx, info), when not NULL, must
 * run once when its last byte has left the source (net/flow.h, D), before
 * done (at the same picosecond when the path has no latency; a caller
 * that gets done without drained takes the transfer as drained then).
 * FALSE with error when it cannot start. */
typedef gboolean (*FsCollTransferFn)(void *ctx, int src, int dst, uint64_t bytes, double rate_cap,
                                     uint64_t key, FsFlowDoneFn done, FsFlowDoneFn drained,
                                     void *done_ctx, void *user, GError **error);
/* As FsCollTransferFn for `copies` identical transfers (1 to
 * FS_FLOW_MAX_COPIES; bytes and rate_cap each copy's) that get under max-min
 * what separate transfers would (FsFlowSpec.copies); done runs once. */
typedef gboolean (*FsCollTransferCopiesFn)(void *ctx, int src, int dst, uint64_t bytes,
                                           guint copies, double rate_cap, uint64_t key,
                                           FsFlowDoneFn done, FsFlowDoneFn drained,
                                           void *done_ctx, void *user, GError **error);

/* The paths a transfer from node src to node dst with ECMP key `key` takes:
 * appends each path's share of the bytes to weights (double) and, to hops
 * (FsChannelId), its hop count followed by its channels.  FALSE when there
 * is no route. */
typedef gboolean (*FsCollRoutePathsFn)(void *ctx, int src, int dst, uint64_t key, GArray *weights,
                                       GArray *hops);

/* Links shared inside one collective in the analytic flow model (net/flow.h
 * gives every flow its path alone).  A connection is a (channel, lane, src,
 * dst) of the plan carrying B_j bytes in all; path i of its route takes
 * weight_i of them.  The load of a directional channel h is the bytes the
 * whole collective puts on it, L_h = sum of B_j × weight_i over the
 * (connection, path) pairs crossing it, and it needs L_h / capacity_h to
 * carry them.  Connection j is capped at
 *   R_j = B_j × min over the channels h of its paths of capacity_h / L_h,
 * the rate at which its bytes take as long as its busiest channel's whole
 * load: every connection on a channel gets a share in proportion to its
 * bytes, and they finish together, as when every connection of the
 * collective is busy from start to end.  The collective then takes about
 * max over channels of L_h / capacity_h plus the latency terms the plan's
 * steps add.  Equal to max-min when the connections are busy at once for
 * the whole run (a ring, NVLS: tests/test-executor.c compares a TP
 * all_reduce); slower when some idle part of the time (phases of a
 * hierarchical plan); different collectives still never share.  Every step of the plan
 * counts, whatever params->channel_mask.  Returns the cap of each step (0
 * for a reduction), n_steps entries, caller frees; NULL when a route is
 * missing.  Cost: one route per connection, O(steps + path hops). */
double *fs_coll_share_caps(const FsCollPlan *plan, const FsFlowNet *net, uint64_t key,
                           FsCollRoutePathsFn paths, void *ctx);

typedef struct {
  FsTime base_latency;       /* once, before the first step */
  FsTime step_latency[2];    /* per data dependency: [0] inside a host, [1] across hosts */
  FsTime ring_step_latency_inter; /* per FIFO dependency into a ring step's first transfer
                                (FsCollStep.ring_head) on a connection across hosts: the
                                connection idles this long after the previous transfer
                                drained, between its steps (NCCL's network
                                step of Ring/Simple, models/nccl coll_net_channel
                                ring_step_latencies; a tree's chunks, whose transfers are all
                                step heads: its proxy's posts, tree_step_posts;
                                exec-params.c); 0 = none */
  double payload;            /* payload bytes per wire byte (0 < payload <= 1) */
  double rate_cap;           /* per flow, bytes/s; 0 = none */
  double rate_cap_inter;     /* per flow that crosses hosts (FsCollStep.inter), bytes/s, on
                                top of rate_cap; 0 = none: one network channel of a
                                point-to-point plan (coll/p2p-sched.h), or one network
                                connection of a collective's channel (models/nccl
                                coll_net_channel; exec-params.c) */
  double reduce_bw;          /* bytes/s of a local reduction; 0 = instantaneous */
  uint64_t key;              /* transfer keys are key << 32 | a 32-bit hash of the
                                step's connection (channel, lane, src, dst): one
                                ECMP path per connection, as NCCL keeps its queue
                                pairs; give concurrent runs different keys */
  uint64_t channel_mask;     /* 0: every channel runs; else only the channels whose bit
                                is set (the others' steps never start and the run ends
                                with its last kept step): for a run alone in the
                                analytic model, which runs one channel of each kind
                                (dedup.h); a kept step must not wait on a skipped one */
  FsCollRoutePathsFn share_paths; /* analytic model: the run's connections share their
                                     links (fs_coll_share_caps); NULL: every flow has its
                                     path alone */
  void *share_ctx;
} FsCollExecParams;

typedef struct FsCollRun FsCollRun;

/* Called once when the last step completes (or the run fails). */
typedef void (*FsCollRunDoneFn)(void *ctx, FsCollRun *run);

/* Starts plan at absolute time `at` (>= now).  Returns the run (owned by
 * the caller, fs_coll_run_free after it is done). */
FsCollRun *fs_coll_run_start(FsFlowNet *net, const FsCollPlan *plan, const FsCollExecParams *params,
                             FsCollTransferFn xfer, void *xfer_ctx, FsTime at, FsCollRunDoneFn done,
                             void *done_ctx);
/* TRUE once every step completed (or the run failed). */
gboolean fs_coll_run_is_done(const FsCollRun *run);
/* Start and end times of a finished run (end = last step's completion). */
FsTime fs_coll_run_start_time(const FsCollRun *run);
FsTime fs_coll_run_end_time(const FsCollRun *run);
/* FALSE with the run's error if it failed; TRUE once it completed. */
gboolean fs_coll_run_finish(FsCollRun *run, GError **error);
void fs_coll_run_free(FsCollRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCollRun, fs_coll_run_free)

/* Convenience: runs one plan alone on net from now until it completes
 * (runs the simulation) and returns its duration in *elapsed. */
gboolean fs_coll_run_alone(FsFlowNet *net, const FsCollPlan *plan, const FsCollExecParams *params,
                           FsCollTransferFn xfer, void *xfer_ctx, FsTime *elapsed, GError **error);

G_END_DECLS
