/* exec-params.h — the executor's parameters (exec.h) for a tuned
 * collective, from the same NCCL model the tuner uses (coll/tuner.h).
 *
 * The collective's base latency is NCCL's baseLatencies[algo][proto], and
 * the per-step latency is (model latency − base) / the plan's latency
 * depth, less the network's own path latency (sys->path_lat_*, which the
 * flows pay), so that a tiny message takes NCCL's modelled latency,
 * while large ones hide it behind the pipeline.  The protocol's payload
 * fraction inflates wire bytes (LL 2×); LL128 flows are capped at NCCL's
 * per-channel LL128 bandwidth; the network transfers of a point-to-point
 * plan across hosts at NCCL's per-channel network bandwidth
 * (coll/p2p-sched.h, rate_cap_inter); plans built of ring phases (ring, hier)
 * reduce at the system's local copy bandwidth.
 *
 * Users: the nccl-tests sweep (bench.h), a collective timed alone
 * (alone.h) and the training op graph (src/workload/opgraph.c).
 *
 * Ownership: borrows everything; fills the caller's struct.  Errors: none
 * (when the model cannot cost the collective, the base latency is
 * NCCL's baseLatencies entry and steps add none).  Cost: one fs_coll_cost.
 */
#pragma once

#include <glib.h>

#include "coll/tuner.h"
#include "collrun/exec.h"

G_BEGIN_DECLS

/* Executor parameters for running choice's plan of op (nbytes as
 * fs_coll_cost).  plan gives the latency depth. */
void fs_coll_exec_params(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                         FsCollOp op, uint64_t nbytes, const FsCollChoice *choice,
                         const FsCollPlan *plan, FsCollExecParams *out);

/* The same for a plan of the given latency depth (fs_coll_plan_latency_depth). */
void fs_coll_exec_params_depth(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                               FsCollOp op, uint64_t nbytes, const FsCollChoice *choice,
                               guint depth, FsCollExecParams *out);

G_END_DECLS
