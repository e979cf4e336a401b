/* coll-topo.h — collectives on a real topology: a communicator over some
 * of its GPUs (hosts, NVLS and CollNet switches found in the graph), the
 * system figures NCCL's model needs (measured on the routes); the
 * transfers and routes of a plan on the router are coll-topo-net.h
 * (included here for its users).
 *
 * Ownership: the results borrow nothing except where said.  Errors: FS_COLL_ERROR_INVALID for a bad
 * GPU list, FS_NET_ERROR_NO_ROUTE from the router.
 */
#pragma once

#include <glib.h>

#include "coll/tuner.h"
#include "collrun/coll-topo-net.h"
#include "collrun/exec.h"
#include "net/route.h"
#include "topo/topo.h"

G_BEGIN_DECLS

/* A communicator whose rank i is GPU node gpus[i] (n of them).  Ranks of a
 * host keep their order; the host is the node's host (a fabric GPU is its
 * own host).  The host's NVLS switches are the NVSwitch nodes with
 * in-switch reduction that its GPUs link to; with two or more hosts,
 * shard j's CollNet switch is the reducing network switch nearest to the
 * NIC of the first host's local rank j (its rail's leaf).
 *
 * Rings come from an NCCL-like search of the first host's links
 * (coll/ring-search.h; at most max_rings, NCCL's MAXCHANNELS): R Hamiltonian
 * cycles over its GPUs on the fastest path type, as many as the links
 * hold (DGX-1: six NVLink rings; an NVLink full mesh: one per link;
 * behind NVSwitches: GPU order).  Every host uses the same cycles by
 * local rank (hosts are alike).  With one host, ring r is cycle r.  With
 * several hosts of equal size L, ring r follows cycle r mod R through
 * every host, entering each host at local rank r mod L, so host-to-host
 * hops use every NIC; there are lcm(R, L) rings (max(R, L) past
 * max_rings).  The rings' total bandwidth is recorded on the communicator
 * (fs_comm_set_ring_graph).  NULL with error for a node that is not a
 * GPU, a GPU listed twice, or GPUs of a host with no route between them. */
FsComm *fs_coll_comm_from_topo(FsRouter *router, const guint *gpus, guint n, guint max_rings,
                               GError **error);

/* The rings of comm in words, for `explain`: how many, what they carry,
 * and the order of each ring (up to 8 rings) through the first host's
 * GPUs by name, e.g. "ring 0: gpu0 gpu3 gpu2 gpu1 gpu5 gpu6 gpu7 gpu4";
 * with several hosts also each ring's hop out of the first host with the
 * NICs it takes (fs_router_net_nics: PXN, rails), the trees' NICs, and the
 * fabric's load: every host-to-host hop of every ring routed once, how many
 * cross rails and how many share the busiest switch-to-switch link (the
 * collisions of static routing by destination).  Caller frees. */
char *fs_coll_describe_rings(FsRouter *router, const FsComm *comm);

/* Parses a GPU list: "all", a count "N" (the first N GPUs in placement
 * order), or comma-separated GPU names or node indices ("node0/gpu1,3").
 * Returns a newly allocated array of node indices (*n entries), or NULL
 * with FS_COLL_ERROR_INVALID for an empty list, a count out of range or a
 * name that is not a GPU. */
guint *fs_coll_parse_gpus(const FsTopo *topo, const char *text, guint *n, GError **error);

/* NCCL's view of the system for comm: architecture row (from the first
 * rank's GPU model), intra-host transport (NVLINK when rank 0 reaches its
 * ring neighbour over NVLink, else PCI), channels (p->max_channels, or the
 * largest multiple of the communicator's ring count not above it),
 * per-channel bandwidths (inside a host: what the searched rings carry
 * together, or else the route capacity between ring neighbours; across
 * hosts: the route capacity between the first ranks of two hosts; each
 * divided by the channels), NVLS/CollNet availability, LL128 when NVLink.
 * The CPU vendor (NCCL's llMaxBws row and network post overhead) is the
 * catalog vendor of the first CPU on rank 0's host (Intel without one).
 * Point to point (coll/p2p-sched.h):
 * the least channels of a peer on the first rank's host (one route per
 * peer there) and, across hosts, that route capacity as one GPU's network. */
gboolean fs_coll_sysinfo_from_topo(const FsNcclParams *p, FsRouter *router, const FsComm *comm,
                                   FsCollSysInfo *out, GError **error);

/* The rate cap (bytes/s) of a lone send of bytes from GPU node src to GPU
 * node dst outside any collective (a pipeline-parallel send of `train`, a
 * trace's send in `replay`): NCCL's channels for that send on a two-rank
 * communicator across hosts, times the per-channel network bandwidth
 * (coll/p2p-sched.h); 0 (no cap) when both GPUs are on one host, when the
 * params have no p2p_schedule table, or when no route exists.  Cost: one
 * route lookup. */
double fs_coll_p2p_send_cap(const FsNcclParams *p, FsRouter *router, int src, int dst,
                            uint64_t bytes);

G_END_DECLS
