/* collclass.h — the congruence class of a GPU group, for the memo of
 * collectives timed alone (collmemo.h): two groups in one class take the
 * same time for the same collective, so one measurement serves both.
 *
 * A collective timed alone depends on the topology only through what the
 * communicator and the transfers see.  The class signature writes all of
 * it down in rank terms, with every node and channel renamed by order of
 * first appearance (so translates of one group, e.g. the 16 pipeline
 * stages' data-parallel groups on one rail of a rail-optimized fat tree,
 * write the same words):
 *
 *   - per rank: its host (renamed), its local index in the host, its GPU
 *     model;
 *   - the communicator NCCL would build (fs_coll_comm_from_topo): every
 *     ring in rank order, each host's NVLS switches and the CollNet
 *     switches, leaves and groups (renamed nodes, with their models), and
 *     the system figures the tuner reads (fs_coll_sysinfo_from_topo);
 *   - per ordered pair of ranks: the route's kind, its paths' weights, and
 *     each hop: a channel that the route takes whatever its ECMP key
 *     (renamed, with its capacity and latency at first appearance), or,
 *     for a hop that depends on the key, only its capacity and latency.
 *     A route that made ECMP choices is routed with four keys; their
 *     paths must agree in number, hop count, latency sum and bottleneck
 *     capacity, else the group has no class (the exact GPU list is then
 *     the only key).
 *
 * When equal signatures give equal times (workloads/README.md, "What is
 * simulated ..."): with no ECMP choice on any pair, the channels the
 * collective can use are isomorphic between the groups (same capacities,
 * latencies and sharing), the plan is the same in rank terms, and the
 * flow engine sees the same network: exact.  In the analytic flow model a
 * transfer's time depends only on its path's latency and bottleneck
 * capacity, which the four keys agreed on: exact when every equal-cost
 * path has the same bottleneck (true on the generated fat trees, where a
 * tier's links share one model; checked on four keys, not proven).
 * Under max-min sharing with ECMP choices it is an approximation: the key
 * hash mixes in node ids, so translated groups draw other spine paths and
 * other collisions (*ecmp tells the caller).
 * Reducing switches (NVLS, CollNet) are compared by identity pattern and
 * model; the fewest-hop paths to them are not written down (they are
 * isomorphic when the hosts come from one template and the fabric from one
 * generator).
 *
 * Ownership: borrows the router (its memo warms up); returns a newly
 * allocated digest.  Errors: those of fs_coll_comm_from_topo, the tuner's
 * system figures and routing (FS_COLL_ERROR, FS_NET_ERROR).
 * Cost: n × (n − 1) routes (four for a pair with ECMP choices) and one
 * communicator build: about a second for 128 ranks spread over a
 * 16,384-GPU fabric, against minutes for measuring a 128-rank collective;
 * the signature itself is hashed (SHA-256), not kept.
 */
#pragma once

#include <glib.h>

#include "coll/nccl-params.h"
#include "net/route.h"

G_BEGIN_DECLS

#define FS_COLL_CLASS_DIGEST 32

/* Fills digest with the SHA-256 of the class signature of the GPU group
 * nodes[0..n) (rank order) and sets *ecmp when some pair's route made
 * ECMP choices.  *has_class is FALSE when the group has no class (its
 * routes' profiles depend on the ECMP key).  FALSE with error when the
 * communicator or a route cannot be built. */
gboolean fs_coll_class_digest(FsRouter *router, const FsNcclParams *nccl, const guint *nodes,
                              guint n, guint8 digest[FS_COLL_CLASS_DIGEST], gboolean *has_class,
                              gboolean *ecmp, GError **error);

G_END_DECLS
