/* p2p-sched.h — NCCL's scheduling of point-to-point operations: how many
 * channels a peer gets, how one send/recv is split over them, the chunk it
 * moves in, and what one channel carries over the network.
 *
 * NCCL (src/graph/paths.cc ncclTopoGetNchannels / ncclTopoComputeP2pChannels,
 * src/enqueue.cc addP2pToPlan, src/init.cc computeBuffSizes) gives every
 * communicator p2pnChannelsPerPeer: the least, over the rank's peers, of a
 * count by transport (NVLink peer: 2 × its NVLinks; other peer on the host:
 * 2; network peer: the release's rule, FsNcclP2pRule), rounded up to a power
 * of two and bounded by the p2p channels (the collective channels, a power
 * of two).  Each operation then takes between nChannelsMin (that count,
 * halved while it times the ranks exceeds the p2p channels) and
 * nChannelsMax (that count) channels by its size: parts of at least
 * part[0] chunks, doubled while parts exceed part[1] chunks.  One channel moves at
 * most fs_p2p_channel_rate_gbps over the network (the `p2p_net_channel`
 * figure, fitted on a measured sendrecv across hosts; without it,
 * NCCL_P2P_PER_CHANNEL_NET_BW, what NCCL 2.29 takes one channel to drive and
 * what its `bandwidth` rule divides the NIC by; fabricsim caps every network
 * transfer of a point-to-point plan at it, in every release), so that a
 * network peer with few channels gets a fraction of its NIC: 2 channels of
 * 17.9 GB/s on a 50 GB/s NDR port, about 70 %; 1 channel, 36 %.  A
 * channel's share of a send runs as one transfer: NCCL keeps NCCL_STEPS
 * chunks of it in flight, so it streams at the channel's rate and pays the
 * path's latency once (chunked, each chunk would wait for the previous
 * one's arrival).
 *
 * All figures come from the params file (FsNcclP2pSched); with no
 * `p2p_schedule` table (p->p2p.on FALSE) none of this applies.  Pure
 * functions; no allocation; no errors.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "coll/coll.h"
#include "coll/nccl-params.h"

G_BEGIN_DECLS

/* What NCCL's rules need to know of a communicator seen from one rank. */
typedef struct {
  guint nranks;           /* ranks of the communicator */
  guint nhosts;           /* hosts it spans (nNodes) */
  guint max_channels;     /* its collective channels (nChannels) */
  guint local_channels;   /* least count of a peer on the rank's host (2 × NVLinks, or
                             pci_peer_channels); 0: no peer on the host */
  double net_bw_gbps;     /* network bandwidth of one GPU (its NICs); 0: unknown */
  guint net_count;        /* NICs one GPU uses (>= 1 when net_bw_gbps > 0) */
  /* The network plugin's proxy work per message (µs) and per stripe, its least stripe
   * (bytes) over `net_devices` devices; 0: not modelled (FsNicModel). */
  double net_msg_us, net_stripe_us;
  uint64_t net_min_stripe;
  guint net_devices;
} FsP2pShape;

/* TRUE for the operations NCCL runs as grouped send/recv (alltoall,
 * gather, scatter, sendrecv) and the recursive exchanges fabricsim runs
 * point to point (hypercube, barrier). */
gboolean fs_coll_op_is_p2p(FsCollOp op);

/* NCCL's p2pnChannels: the collective channels bounded by the params'
 * channel maximum, rounded up to a power of two, at most the largest power
 * of two not above that maximum. */
guint fs_p2p_channels(const FsNcclParams *p, const FsP2pShape *s);

/* The channels of a network peer before the minimum over peers
 * (ncclTopoGetNchannels' NET branch), by the release's rule. */
guint fs_p2p_net_peer_channels(const FsNcclParams *p, const FsP2pShape *s);

/* p2pnChannelsPerPeer of the communicator (>= 1). */
guint fs_p2p_channels_per_peer(const FsNcclParams *p, const FsP2pShape *s);

/* The step size of a send with proto, across hosts or not (the unit of the
 * part sizes):
 * Simple moves p2p chunks (net_chunk across hosts, nvl_chunk on an
 * all-NVLink host, else net_chunk, which NCCL's PCI chunk equals), LL and
 * LL128 a protocol buffer step.  Payload bytes. */
uint64_t fs_p2p_step_bytes(const FsNcclParams *p, const FsP2pShape *s, FsCollProto proto,
                           gboolean nvlink);

/* The channels one send of bytes (to one peer) is split over: between
 * nChannelsMin and nChannelsMax as addP2pToPlan splits it (1 for 0 bytes). */
guint fs_p2p_op_channels(const FsNcclParams *p, const FsP2pShape *s, FsCollProto proto,
                         gboolean nvlink, uint64_t bytes);

/* The most one channel of a point-to-point plan moves across hosts, GB/s:
 * the params' `p2p_net_channel` figure (fitted on a measurement), else
 * NCCL's own per-channel estimate (per_channel_net_bw_gbps). */
double fs_p2p_channel_rate_gbps(const FsNcclParams *p);

/* The channels that carry one rank's network operations of op in one direction, when each
 * operation runs on nch channels (fs_p2p_op_channels).  NCCL schedules a rank's peers in
 * rounds (src/init.cc ncclP2pSchedule, v2.28.9-1: groups of NCCL_P2P_SCHEDULE_GROUP_SIZE =
 * NCCL_MAX_DEV_WORK_P2P_PER_BATCH local ranks, or the gcd with the ranks per host) and gives
 * every round of one group the same base channel (src/include/channel.h
 * ncclP2pChannelBaseForRound: groupDelta × ⌈group / 8⌉ + localDelta / 8; 2.22–2.27 by node
 * delta, 2.18–2.21 ncclChannelComputeBase likewise): the operations to the ranks of one remote
 * group share that group's nch channels, and the groups spread over the p2p channels (bit
 * reversal).  With `shared_net_channels` the busiest rank's network operations (every rank's
 * for alltoall, the root's for gather and scatter; one for sendrecv and the recursive
 * exchanges) occupy min(p2p channels, ⌈remote ranks / group⌉ × nch) channels; without it,
 * nch per operation. */
guint fs_p2p_net_channels_busy(const FsNcclParams *p, const FsP2pShape *s, FsCollOp op, guint nch);

/* How many network transfers (one per operation and channel) of the busiest rank share one
 * channel in one direction: its network operations × nch over fs_p2p_net_channels_busy
 * (>= 1; 1 without `shared_net_channels`).  A channel is one thread block whose warps its
 * operations split (src/device/sendrecv.h), so each transfer moves at most
 * fs_p2p_channel_rate_gbps over this. */
double fs_p2p_net_flows_per_channel(const FsNcclParams *p, const FsP2pShape *s, FsCollOp op,
                                    guint nch);

/* NCCL's chunk of a Simple send of `bytes` to one peer across hosts: the p2p net chunk,
 * divided as the params' net_chunk_below / net_chunk_divide say for small ops (src/enqueue.cc
 * addP2pToPlan, "Tune chunk size for the network"). */
uint64_t fs_p2p_net_chunk_bytes(const FsNcclParams *p, uint64_t bytes);

/* The stripes the network plugin splits a message of `bytes` into (aws-ofi-nccl
 * src/nccl_ofi_scheduler.cpp get_num_stripes): ⌈bytes / min stripe⌉, at least 1, at most the
 * devices, rounded down to a divisor of the devices; 1 when the shape has no least stripe. */
guint fs_p2p_net_stripes(const FsP2pShape *s, uint64_t bytes);

/* The most one GPU's network operations of op move across hosts in one direction, GB/s, when
 * its proxy thread runs every message of them one after another (a send and a receive each
 * for the exchanges: alltoall, hypercube, barrier, and sendrecv with one rank per host; one
 * for gather's and scatter's root and for sendrecv's ranks at a host's edge), each
 * message costing net_msg_us + stripes × net_stripe_us: each operation's part of per_peer
 * bytes over nch channels moves in messages of NCCL's chunk (fs_p2p_net_chunk_bytes), the
 * last one shorter.  0 when the shape has no message cost (no bound).  Pure. */
double fs_p2p_proxy_rate_gbps(const FsNcclParams *p, const FsP2pShape *s, FsCollOp op,
                              uint64_t per_peer, guint nch);

/* The busiest rank's network transfers of op in one direction, each operation's nch parts:
 * what fs_p2p_proxy_rate_gbps is shared by (>= 1). */
guint64 fs_p2p_net_transfers(const FsP2pShape *s, FsCollOp op, guint nch);

/* The bytes per peer of one call of op moving nbytes on n ranks (NCCL's
 * nBytes, fs_coll_cost): the buffer for sendrecv, a block otherwise. */
uint64_t fs_p2p_peer_bytes(FsCollOp op, uint64_t nbytes, guint n);

G_END_DECLS
