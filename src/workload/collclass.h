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
 *     each hop, written by the mode:
 *       STRICT   a channel that the route takes whatever its ECMP key is
 *                renamed (with its capacity and latency at first
 *                appearance); a hop that depends on the key is written by
 *                its capacity and latency only, and makes the class
 *                approximate;
 *       PROFILE  every hop by its capacity and latency only (the analytic
 *                flow model, where no two flows share a channel);
 *       LOOSE    as STRICT, but a hop from one fabric switch to another
 *                (leaf to spine, spine to leaf) by its figures only, which
 *                makes the class approximate: translates whose routes take
 *                other spines (ECMP by key, or switches that route by
 *                destination) then share a class.
 *     A route with ECMP choices is drawn with four keys; their paths must
 *     agree in number, hop count, latency sum and bottleneck capacity,
 *     else the group has no class (its exact GPU list is then the key).
 *
 * When equal signatures give equal times (workloads/README.md, "What is
 * simulated ..."): STRICT and not approximate — the channels the
 * collective can use are isomorphic between the groups (same capacities,
 * latencies and sharing), the plan is the same in rank terms, and the
 * flow engine sees the same network: exact.  PROFILE in the analytic flow
 * model — a transfer's time depends only on its path's latency and
 * bottleneck capacity, which the four keys agreed on: exact when every
 * equal-cost path has the same bottleneck (true on the generated fat
 * trees, where a tier's links share one model; checked on four keys, not
 * proven).  An approximate class under max-min sharing: translated groups
 * take other spine paths and meet other collisions between their own
 * flows (the ECMP hash mixes in node ids).
 * Reducing switches (NVLS, CollNet) are compared by identity pattern and
 * model; the fewest-hop paths to them are not written down (they are
 * isomorphic when the hosts come from one template and the fabric from one
 * generator).
 *
 * Ownership: borrows the router (its caches warm up); returns a newly
 * allocated digest.  Errors: those of fs_coll_comm_from_topo, the tuner's
 * system figures and routing (FS_COLL_ERROR, FS_NET_ERROR).
 * Cost: n × (n − 1) routes (four for a pair with ECMP choices) and one
 * communicator build: about a second for 128 ranks spread over a
 * 16,384-GPU fabric, against minutes for measuring a 128-rank collective;
 * the signature itself is hashed (SHA-256), not kept, each pair's words
 * interned (written whole the first time, then by index: a stream that
 * reads back to the plain one, so equal digests still mean equal
 * signatures, for a few words hashed per pair).
 */
#pragma once

#include <glib.h>

#include "coll/nccl-params.h"
#include "net/route.h"

G_BEGIN_DECLS

#define FS_COLL_CLASS_DIGEST 32

typedef enum {
  FS_COLL_CLASS_STRICT,
  FS_COLL_CLASS_PROFILE,
  FS_COLL_CLASS_LOOSE,
} FsCollClassMode;

/* Fills digest with the SHA-256 of the class signature (in mode) of the
 * GPU group nodes[0..n) (rank order) and sets *approx when the class is
 * an approximation (above).  *has_class is FALSE when the group has no
 * class (its routes' profiles depend on the ECMP key).  FALSE with error
 * when the communicator or a route cannot be built. */
gboolean fs_coll_class_digest(FsRouter *router, const FsNcclParams *nccl, FsCollClassMode mode,
                              const guint *nodes, guint n, guint8 digest[FS_COLL_CLASS_DIGEST],
                              gboolean *has_class, gboolean *approx, GError **error);

G_END_DECLS
