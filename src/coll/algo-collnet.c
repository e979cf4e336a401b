/* algo-collnet.c — CollNet (SHARP): the network switches reduce across
 * hosts.  Modelled with the CollNet switches as endpoints:
 *   collnet_direct (all_reduce), per chunk on hosts of L ranks: an
 *   intra-host direct reduce-scatter (rank j gathers shard j from its L-1
 *   peers), rank j sends its shard up the aggregation tree, the tree
 *   returns the shard reduced over all hosts, and rank j sends it to its
 *   L-1 peers.  The scatter and the gather run on separate FIFO lanes
 *   (NCCL's CollNetDirect uses separate warps for them), so the next
 *   chunk's scatter does not wait behind the previous chunk's round trip
 *   through the network.
 *   collnet_direct (all_gather, reduce_scatter; NCCL 2.20+ with the SHARP
 *   plugin's iallgather/ireducescatter, one NIC per rank): rail j is the
 *   blocks of every host's local rank j.  all_gather: per slice, rank j
 *   sends its own block to shard j's switch, which returns the rail's
 *   blocks of every host (nh slices) to each host's rank j, and rank j
 *   forwards them to its L-1 peers (NCCL 2.20 all_gather.h RunWorkColl
 *   CollNetDirect: send to network, receive and broadcast to the local
 *   heads, receive the broadcast).  reduce_scatter, the reverse: rank j
 *   gathers rail j's blocks (nh slices) from its L-1 peers, sends their
 *   sum to the switch, which reduces over the hosts and returns to each
 *   host's rank j its own block.  NCCL walks the rail's blocks host by host
 *   in chunks; the model moves every host's slice at once: the same bytes
 *   on every link, a pipeline of slices.
 *   collnet_chain (all_reduce): a chain inside each host reduces the chunk
 *   to the channel's head rank (local rank channel mod L, so channels use
 *   every NIC), which sends it up the tree (shard = the head's local
 *   rank); the tree returns the total and the chain broadcasts it back
 *   (on its own lane).
 * The trip through the aggregation tree (one switch per shard, or leaves
 * under a root: comm.h, fs_comm_set_collnet_groups) is algo-sharp.c's. */
#include "coll/algos.h"

static const char *unsupported_comm(const FsComm *comm)
{
  if (fs_comm_collnet_switch(comm, 0) < 0)
    return "the communicator has no CollNet (SHARP) switch";
  if (fs_comm_n_hosts(comm) < 2)
    return "CollNet needs at least two hosts";
  if (!fs_comm_hosts_uniform(comm))
    return "CollNet needs the same number of ranks on every host";
  return NULL;
}

static const char *unsupported_direct(const FsComm *comm, FsCollOp op)
{
  if (op != FS_COLL_ALL_REDUCE && op != FS_COLL_ALL_GATHER && op != FS_COLL_REDUCE_SCATTER)
    return "CollNetDirect runs all_reduce, all_gather and reduce_scatter";
  return unsupported_comm(comm);
}

static const char *unsupported_chain(const FsComm *comm, FsCollOp op)
{
  if (op != FS_COLL_ALL_REDUCE)
    return "CollNetChain runs all_reduce only";
  return unsupported_comm(comm);
}

/* Adds collnet_direct's steps to the plan (the model in the file comment): per channel, chunks
 * of L slices (halved while the channel would have fewer than FS_SHARP_MIN_CHUNKS), and per chunk the
 * intra-host scatter to the shard owners, each shard's trip through the aggregation tree
 * (fs_sharp_trip_run) and the gather back on lane 1. Adds about 2·nh·L² transfers per chunk; allocates
 * only its scratch arrays. */
static void build_direct(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  FsSharpTrip t;
  guint L, nh = fs_sharp_build_start(b, &t, &L);
  g_autofree uint32_t *in = g_new(uint32_t, L);
  g_autofree uint32_t *toswitch = g_new(uint32_t, (gsize)nh * L);
  g_autofree uint32_t *up = g_new(uint32_t, nh);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    /* Units of L slices, so that each rank's shard is a whole slice (a
     * network transfer long enough to hide its path latency), halved down
     * to one slice while the channel would have fewer than FS_SHARP_MIN_CHUNKS of
     * them (a pipeline needs a few chunks to overlap the scatter of one
     * with the network trip and the gather of others). */
    uint64_t unit = req->slice_bytes * L;
    while (unit > req->slice_bytes && bytes / unit < FS_SHARP_MIN_CHUNKS)
      unit /= 2;
    guint64 nchunks = fs_algo_n_units(b, bytes, unit);
    for (guint64 k = 0; k < nchunks; k++) {
      uint64_t c = fs_algo_unit(bytes, unit, k);
      for (guint h = 0; h < nh; h++) {
        guint m;
        const guint *ranks = fs_comm_host_ranks(comm, h, &m);
        for (guint j = 0; j < L; j++) {
          uint64_t shard = fs_plan_split(b, c, L, j);
          guint nin = 0;
          for (guint i = 1; i < L; i++)
            in[nin++] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[(j + i) % L]), FS_EP_RANK(ranks[j]),
                                     shard, NULL, 0);
          toswitch[h * L + j] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[j]), fs_sharp_up_switch(comm, h, j),
                                             shard, in, nin);
        }
      }
      for (guint j = 0; j < L; j++) {
        uint64_t shard = fs_plan_split(b, c, L, j);
        for (guint h = 0; h < nh; h++)
          up[h] = toswitch[h * L + j];
        fs_sharp_trip_run(b, &t, ch, j, FS_SHARP_REDUCE, shard, up);
        for (guint h = 0; h < nh; h++) {
          guint m;
          const guint *ranks = fs_comm_host_ranks(comm, h, &m);
          uint32_t back = fs_sharp_trip_back(b, &t, ch, h, ranks[j], shard, up);
          for (guint i = 1; i < L; i++)
            fs_plan_xfer_lane(b, ch, 1, FS_EP_RANK(ranks[j]), FS_EP_RANK(ranks[(j + i) % L]), shard,
                              &back, 1);
        }
      }
    }
  }
  fs_sharp_trip_clear(&t);
}

/* Adds collnet_direct's all_gather or reduce_scatter steps to the plan (the model in the file
 * comment): per channel and slice c of each rank's block, rail j's trip through the aggregation
 * tree for every j, all_gather forwarding the nh returned slices to the host's L-1 peers on lane
 * 1, reduce_scatter gathering nh slices from them first.  Adds about nh·L·(L+1) transfers per
 * slice; allocates only its scratch arrays. */
static void build_direct_rail(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  gboolean gather = req->op == FS_COLL_ALL_GATHER;
  FsSharpTrip t;
  guint L, nh = fs_sharp_build_start(b, &t, &L);
  g_autofree uint32_t *in = g_new(uint32_t, L);
  g_autofree uint32_t *up = g_new(uint32_t, nh);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t share = fs_plan_split(b, req->bytes, req->nchannels, ch);
    uint64_t unit = fs_sharp_rail_unit(req, share);
    guint64 nchunks = fs_algo_n_units(b, share, unit);
    for (guint64 k = 0; k < nchunks; k++) {
      uint64_t c = fs_algo_unit(share, unit, k), rail = nh * c;
      for (guint j = 0; j < L; j++) {
        for (guint h = 0; h < nh; h++) {
          guint m;
          const guint *ranks = fs_comm_host_ranks(comm, h, &m);
          guint nin = 0;
          if (!gather)
            for (guint i = 1; i < L; i++)
              in[nin++] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[(j + i) % L]), FS_EP_RANK(ranks[j]),
                                       rail, NULL, 0);
          up[h] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[j]), fs_sharp_up_switch(comm, h, j),
                               gather ? c : rail, in, nin);
        }
        fs_sharp_trip_run(b, &t, ch, j, gather ? FS_SHARP_GATHER : FS_SHARP_SCATTER, gather ? c : rail, up);
        for (guint h = 0; h < nh; h++) {
          guint m;
          const guint *ranks = fs_comm_host_ranks(comm, h, &m);
          uint32_t back = fs_sharp_trip_back(b, &t, ch, h, ranks[j], gather ? rail : c, up);
          if (gather)
            for (guint i = 1; i < L; i++)
              fs_plan_xfer_lane(b, ch, 1, FS_EP_RANK(ranks[j]), FS_EP_RANK(ranks[(j + i) % L]), rail,
                                &back, 1);
        }
      }
    }
  }
  fs_sharp_trip_clear(&t);
}

static void build_direct_any(FsPlanBuilder *b)
{
  if (fs_plan_req(b)->op == FS_COLL_ALL_REDUCE)
    build_direct(b);
  else
    build_direct_rail(b);
}

/* Adds collnet_chain's steps to the plan: per channel and slice-sized chunk (the tuner's slice is
 * NCCL's CollNetChain chunk where the NCCL model has one, models/nccl collnet_chain), a chain inside
 * every host down to the channel's head rank (local rank ch mod L), the head's trip through the
 * aggregation tree, and the chain broadcast back on lane 1. Adds about 2·nh·L transfers per
 * chunk. */
static void build_chain(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  FsSharpTrip t;
  guint L, nh = fs_sharp_build_start(b, &t, &L);
  g_autofree uint32_t *toswitch = g_new(uint32_t, nh);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    guint64 nchunks = fs_algo_n_chunks(b, bytes);
    /* Channel ch's chain ends at local rank ch mod L (NCCL spreads the
     * channels' heads over the GPUs, so over every NIC). */
    guint head = ch % L;
    for (guint64 k = 0; k < nchunks; k++) {
      uint64_t c = fs_algo_chunk(b, bytes, k);
      for (guint h = 0; h < nh; h++) {
        guint m;
        const guint *ranks = fs_comm_host_ranks(comm, h, &m);
        uint32_t prev = FS_STEP_NONE;
        for (guint j = L - 1; j >= 1; j--)
          prev = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[(head + j) % L]),
                              FS_EP_RANK(ranks[(head + j - 1) % L]), c, &prev, 1);
        toswitch[h] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[head]), fs_sharp_up_switch(comm, h, head), c, &prev, 1);
      }
      fs_sharp_trip_run(b, &t, ch, head, FS_SHARP_REDUCE, c, toswitch);
      for (guint h = 0; h < nh; h++) {
        guint m;
        const guint *ranks = fs_comm_host_ranks(comm, h, &m);
        uint32_t prev = fs_sharp_trip_back(b, &t, ch, h, ranks[head], c, toswitch);
        for (guint j = 0; j + 1 < L; j++)
          prev = fs_plan_xfer_lane(b, ch, 1, FS_EP_RANK(ranks[(head + j) % L]),
                                   FS_EP_RANK(ranks[(head + j + 1) % L]), c, &prev, 1);
      }
    }
  }
  fs_sharp_trip_clear(&t);
}

/* collnet_direct's loop: a chunk of L slices (all_reduce) or a slice (fs_sharp_loop_bytes). */
static uint64_t direct_loop_bytes(const FsComm *comm, const FsCollRequest *req)
{
  guint L;
  fs_comm_host_ranks(comm, 0, &L);
  return fs_sharp_loop_bytes(req, req->op == FS_COLL_ALL_REDUCE ? req->slice_bytes * L : req->slice_bytes);
}

const FsCollAlgo fs_coll_algo_collnet_direct = {
  .name = "collnet_direct",
  .nccl = FS_NCCL_ALGO_COLLNET_DIRECT,
  .summary = "SHARP: intra-host direct reduce-scatter, switch reduction per shard, all-gather; "
             "all_gather and reduce_scatter per rail",
  .unsupported = unsupported_direct,
  .build = build_direct_any,
  .loop_bytes = direct_loop_bytes, /* one loop: a chunk of L slices (all_reduce), or a slice */
};

const FsCollAlgo fs_coll_algo_collnet_chain = {
  .name = "collnet_chain",
  .nccl = FS_NCCL_ALGO_COLLNET_CHAIN,
  .summary = "SHARP: intra-host chain to the channel's head rank, switch reduction, chain back",
  .unsupported = unsupported_chain,
  .build = build_chain,
  .loop_bytes = fs_algo_slice_loop_bytes, /* one loop: one slice */
};
