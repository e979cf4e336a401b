/* tuner.h — NCCL's cost model and the choice of algorithm, protocol and
 * channel count per collective call.
 *
 * The cost model is NCCL's (src/graph/tuning.cc, constants from
 * FsNcclParams): for an (op, algorithm, protocol) a latency in µs and a
 * bandwidth in GB/s, time = latency + bytes / bandwidth.  The tuner, like
 * NCCL, evaluates every enabled pair at the communicator's channel count,
 * keeps the fastest, then lowers the channel count for small messages
 * (NCCL's thread threshold: fewer channels while bytes < channels ×
 * threads × threshold).  Point-to-point ops (alltoall, gather, scatter,
 * sendrecv), hypercube and barrier are not in NCCL's tuning table: they go
 * to the direct (or recursive) algorithm, LL up to NCCL's P2P LL
 * threshold per peer and Simple above.
 *
 * The user may force any part (--algo/--proto/--channels), or restrict the
 * candidates with NCCL_ALGO / NCCL_PROTO strings, parsed as NCCL does: a
 * comma-separated list of names (case-insensitive), or a list after `^`
 * naming the ones to exclude.  NCCL_ALGO names are NCCL's (Ring, Tree,
 * CollNetDirect, CollNetChain, CollNet = both, NVLS, NVLSTree, PAT) or
 * fabricsim's algorithm names (ring, tree, rhd, direct, hier, …).
 *
 * Pure functions of their inputs; errors (a bad NCCL_ALGO, nothing left to
 * choose) are FS_COLL_ERROR.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "coll/nccl-params.h"
#include "coll/p2p-sched.h"
#include "coll/plan.h"

G_BEGIN_DECLS

/* What the model needs to know of the system (NCCL gets it from its
 * topology search). */
typedef struct {
  FsNcclRow arch;         /* the GPU's row in NCCL's per-architecture tables */
  FsNcclHw intra_hw;      /* NVLINK when GPUs of a host talk over NVLink, else PCI */
  FsNcclCpu cpu;
  double bw_intra;        /* GB/s per channel inside a host (NCCL's graph bwIntra) */
  double bw_inter;        /* GB/s per channel across hosts (bwInter) */
  double latency_inter;   /* µs, NCCL's graph latencyInter (usually 0) */
  guint max_channels;     /* channels of the ring/tree graph */
  /* Across hosts: the ring/tree graph's own channels (ncclTopoCompute's, before
   * connect.cc doubles them into max_channels), which NCCL's per-channel caps
   * (perChMaxRingLL128Bw, perChMaxTreeBw, perChMaxTreeLL128Bw) multiply;
   * 0: max_channels. */
  guint graph_channels;
  guint p2p_max_channels; /* the collective channels point-to-point scheduling starts from
                             (FsP2pShape.max_channels): max_channels before the cut to 2
                             per NIC across hosts, with the same NCCL_*_CTAS limits */
  guint nvls_channels;    /* channels NVLS runs on (comm->nvlsChannels; 0: no NVLS) */
  /* NCCL's NVLS graph (src/graph/search.cc, pattern NVLS): one channel per
   * head.  On one host every GPU is a head (at most NCCL_MAX_NVLS_ARITY);
   * across hosts a head is the GPU next to a NIC, one per distinct NIC
   * (ncclTopoSearchRecNet "NVLS search only tries to find NIC:GPU
   * combinations to compute the heads").  0 without NVLS. */
  guint nvls_heads;
  gboolean collnet;       /* a CollNet/SHARP switch is available */
  guint collnet_heads;    /* distinct NICs (CollNet heads) of the host with the fewest,
                             at most NCCL_MAX_DIRECT_ARITY + 1 (0 without CollNet) */
  gboolean ll128;         /* LL128 enabled (NCCL: NVLink inside the host) */
  /* The simulated network's own latency of one transfer inside a host and
   * across hosts (µs).  NCCL's hwLatencies include it, so the executor
   * charges only the rest per step. */
  double path_lat_intra, path_lat_inter;
  /* Bytes/s at which one channel's thread block copies a block inside its
   * GPU: the ring kernel's local step once per loop (algos.h
   * fs_algo_ring_phase).  NCCL's ring_kernel.local_copy_sm_share × the
   * GPU's memory bandwidth × memory efficiency / its SMs; 0 = free. */
  double local_copy_bw;
  /* Point to point (coll/p2p-sched.h): the least channels NCCL gives a peer
   * on the host (2 × NVLinks, or 2; 0 when the host has one rank), and the
   * network bandwidth of one GPU (GB/s; 0 on one host) over net_count NICs. */
  guint p2p_local_channels;
  double net_bw_gbps;
  guint net_count;
  /* The distinct NICs the ranks of a host reach first (the host with the
   * fewest; 0 on one host): the rails the rings, trees and NVLS heads cross
   * hosts on, each at net_bw_gbps. */
  guint net_nics;
  /* The network plugin's proxy work per message on the first GPU's NIC (its catalog
   * model's message_cost and stripe_cost, µs; min_stripe bytes over `devices`): 0 when the
   * NIC does not model it (p2p-sched.h fs_p2p_proxy_rate_gbps). */
  double net_msg_us, net_stripe_us;
  uint64_t net_min_stripe;
  guint net_devices;
} FsCollSysInfo;

/* The communicator as NCCL's point-to-point rules see it (coll/p2p-sched.h). */
void fs_coll_p2p_shape(const FsCollSysInfo *sys, const FsComm *comm, FsP2pShape *out);

/* TRUE when NCCL's point-to-point schedule applies to op on comm: the params
 * have a p2p_schedule table, op is a point-to-point op run by the direct
 * algorithm, and comm spans several hosts.  (On one host fabricsim keeps
 * the collective channels, cut for small messages, which match the
 * single-node measurements; models/nccl/README.md.) */
gboolean fs_coll_p2p_scheduled(const FsNcclParams *p, const FsComm *comm, FsCollOp op,
                               const FsCollAlgo *algo);

/* One (algorithm, protocol, channels) estimate. */
typedef struct {
  double base_us;       /* base latency */
  double lat_us;        /* total latency term (base + per-step) */
  double busbw_gbps;    /* NCCL's bus bandwidth after refinements */
  double algbw_gbps;    /* bus → algorithm bandwidth (and tree correction) */
  double time_us;       /* lat_us + bytes / algbw */
  guint nsteps;         /* NCCL's nsteps for the op */
  guint inter_steps;
  double intra_lat_us, inter_lat_us;  /* per step */
} FsCollCost;

/* Evaluates NCCL's model for algo/proto on nch channels for a call moving
 * nbytes (NCCL's nBytes: the buffer, or n × the block for all_gather and
 * reduce_scatter).  FALSE when the pair does not apply (NCCL gives it no
 * bandwidth), with *out zeroed. */
gboolean fs_coll_cost(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                      FsCollOp op, const FsCollAlgo *algo, FsCollProto proto, guint nch,
                      uint64_t nbytes, FsCollCost *out);

/* Candidate sets: bit i of algo_mask is fs_coll_algos[i]; bit p of
 * proto_mask is protocol p.  An op's candidates are algo_mask &
 * op_algo_mask[op] (and likewise for protocols): the first applies to
 * every collective, the second is per collective (NCCL >= 2.24's
 * "allreduce:tree,ring" entries).  Forced values (non-NULL algo, proto >=
 * 0, channels > 0) win over the masks. */
#define FS_COLL_ALGO_BIT(i) ((guint64)1 << (i))
typedef struct {
  guint64 algo_mask;
  guint proto_mask;
  guint64 op_algo_mask[FS_COLL_N_OPS];
  guint op_proto_mask[FS_COLL_N_OPS];
  const FsCollAlgo *algo;
  int proto;
  guint channels;
  /* CollNet (SHARP) left out of the choice even where the fabric has it,
   * unless algo forces a CollNet algorithm: NCCL without
   * NCCL_COLLNET_ENABLE=1 (scenario.h sets it from the environment). */
  gboolean collnet_off;
} FsCollPrefs;

/* All algorithms and protocols, nothing forced, CollNet where the fabric
 * has it. */
void fs_coll_prefs_init(FsCollPrefs *prefs);
/* Applies prefs' CollNet setting to sys (fs_coll_sysinfo_from_topo's
 * answer): sys->collnet becomes FALSE when prefs->collnet_off and no
 * CollNet algorithm (or NVLS, which across hosts is NVLS+SHARP) is
 * forced.  Cost: O(1). */
void fs_coll_prefs_apply_sys(const FsCollPrefs *prefs, FsCollSysInfo *sys);
/* Parses a plain NCCL_ALGO list ("Ring,Tree", "^NVLS") into *mask. */
gboolean fs_coll_parse_nccl_algo(const char *text, guint64 *mask, GError **error);
/* Parses a plain NCCL_PROTO list into a protocol mask. */
gboolean fs_coll_parse_nccl_proto(const char *text, guint *mask, GError **error);
/* Parse NCCL_ALGO / NCCL_PROTO in NCCL >= 2.24's full syntax into prefs'
 * per-collective masks (src/graph/tuning.cc parseList): entries separated
 * by ';'; the first may be a plain list, which applies to every
 * collective; every other entry is "collective:list" (collective names as
 * NCCL's functions or fabricsim's: allreduce, AllGather, reduce_scatter,
 * broadcast, reduce, …; case and separators ignored) and replaces that
 * collective's set.  A list names the ones to enable, or after '^' the
 * ones to disable.  Example: "ring;allreduce:tree,ring;allgather:^nvls".
 * FS_COLL_ERROR_PARSE for an unknown name or collective, an empty list, or
 * an entry after the first without a collective. */
gboolean fs_coll_prefs_set_nccl_algo(FsCollPrefs *prefs, const char *text, GError **error);
gboolean fs_coll_prefs_set_nccl_proto(FsCollPrefs *prefs, const char *text, GError **error);

/* The tuner's answer: what to run, and the model's estimate of it. */
typedef struct {
  const FsCollAlgo *algo;
  FsCollProto proto;
  guint nchannels;
  uint64_t chunk_bytes;  /* pipelined chunk payload (per rank block per loop) */
  uint64_t slice_bytes;  /* payload of one transfer inside a chunk */
  guint conn_slots;      /* slices a connection's buffer holds (NCCL_STEPS /
                            slice steps; FsCollRequest.conn_slots), 0 = unbounded */
  FsCollCost cost;       /* at nchannels */
  const char *plugin;    /* the tuner plugin that chose algo and proto (its name, borrowed
                            from the params' plugin), NULL: NCCL's cost model */
} FsCollChoice;

/* Chooses for op moving nbytes (as fs_coll_cost) of which each rank's unit
 * is unit_bytes, on comm.  FALSE with FS_COLL_ERROR_UNSUPPORTED when no
 * allowed algorithm supports op on comm. */
gboolean fs_coll_tune(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                      FsCollOp op, uint64_t nbytes, const FsCollPrefs *prefs, FsCollChoice *out,
                      GError **error);

/* The plan request that runs choice ch for op on a unit of unit_bytes (FsCollSizes.unit_bytes)
 * with dtype, redop and root: the choice's protocol, channels, chunk, slice and connection
 * slots; every other field 0 (exact NCCL slicing, the whole collective, the default step
 * guard). Cost O(1). */
FsCollRequest fs_coll_choice_request(const FsCollChoice *ch, FsCollOp op, uint64_t unit_bytes,
                                     FsCollDtype dtype, FsCollRedop redop, guint root);

/* NCCL's nBytes for a row of nccl-tests sizes. */
uint64_t fs_coll_nccl_bytes(FsCollOp op, const FsCollSizes *sizes, guint nranks);

/* NCCL's Tree/LL128 chunk, payload bytes, for nbytes on nchannels of a communicator of
 * `nodes` hosts and `ppn` ranks per host, from the protocol's chunk `chunk` (src/enqueue.cc
 * v2.28.9-1 lines 2069-2077, the same since 2.18: small sizes run smaller chunks so that the
 * tree pipelines; models/nccl tree_ll128_chunk).  `chunk` itself when p has no such table. */
uint64_t fs_coll_tree_ll128_chunk(const FsNcclParams *p, uint64_t chunk, uint64_t nbytes,
                                  guint nchannels, guint nodes, double ppn);

/* What the proxies' serial sends add to a Ring/LL or Ring/LL128 plan of op across hosts, µs
 * over the whole op (models/nccl coll_net_channel ring_serial_sends): NCCL's proxy posts the
 * network send of each of its channels one after the other (src/transport/net.cc
 * sendProxyProgress, one isend per step and channel), so with k channels per NIC (nchannels
 * over sys->net_nics) each ring step waits (k - 1) × getNetOverhead (net_overhead_us of the
 * host's CPU vendor) beyond the one send NCCL's per-step ring latency holds; × the ring steps
 * of NCCL's model (2(n-1) all_reduce, n-1 all_gather and reduce_scatter).  0 for other plans,
 * one host, one channel per NIC, or a file without ring_serial_sends; in *per_step_us the
 * per-step figure when not NULL. */
double fs_coll_ring_proxy_sends_us(const FsNcclParams *p, const FsCollSysInfo *sys,
                                   const FsComm *comm, FsCollOp op, const FsCollAlgo *algo,
                                   FsCollProto proto, guint nchannels, double *per_step_us);

/* What a tree plan's connection across hosts idles between two consecutive chunks, µs
 * (models/nccl coll_net_channel tree_step_posts): the GPU of a tree channel that faces the
 * network sends each chunk up to its parent host and receives it back down through the same
 * proxy (src/proxy.cc SaveProxy, ncclPatternTreeUpDown: a proxySend and a proxyRecv on
 * tree->up), which posts one isend and one irecv per chunk (src/transport/net.cc
 * sendProxyProgress, recvProxyProgress), the k channels it serves (nchannels over
 * sys->net_nics) one after the other, each getNetOverhead (net_overhead_us of the host's CPU
 * vendor): tree_step_posts × k × net_overhead_us.  NCCL's tree latency holds no such term.
 * 0 for other plans, one host, no NIC or a file without tree_step_posts. */
double fs_coll_tree_proxy_posts_us(const FsNcclParams *p, const FsCollSysInfo *sys,
                                   const FsComm *comm, const FsCollAlgo *algo, guint nchannels);

/* What a Ring/Simple plan's connection across hosts idles between two consecutive ring steps,
 * µs, given its cost c (models/nccl coll_net_channel): ring_step_latencies × NCCL's network step
 * (c->inter_lat_us) + ring_step_host_excess × what the host's network post overhead adds to
 * NCCL's per-step ring latency (c->intra_lat_us beyond the NVLink hw latency: 2.6 µs on AMD
 * hosts, none on Intel), in *host_us when not NULL.  0 for other plans, one host, or a file
 * without ring_step_latencies. */
double fs_coll_ring_step_idle_us(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                                 const FsCollAlgo *algo, FsCollProto proto, const FsCollCost *c,
                                 double *host_us);

/* The α-β arithmetic of one choice for nbytes, several lines of text,
 * for `fabricsim explain coll` (caller frees). */
char *fs_coll_explain(const FsNcclParams *p, const FsCollSysInfo *sys, const FsComm *comm,
                      FsCollOp op, uint64_t nbytes, const FsCollChoice *choice);

G_END_DECLS
