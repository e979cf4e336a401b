/* algo-collnet.c — CollNet (SHARP): the network switch reduces across
 * hosts.  Modelled with the CollNet switch as an endpoint:
 *   collnet_direct (all_reduce), per chunk c on hosts of L ranks: an
 *   intra-host direct reduce-scatter (rank j gathers shard j from its L-1
 *   peers), rank j sends its shard to the switch, the switch returns the
 *   shard reduced over all hosts, and rank j sends it to its L-1 peers;
 *   collnet_chain (all_reduce): a chain inside each host reduces the chunk
 *   to the host's first rank, which sends it to the switch; the switch
 *   returns the total and the chain broadcasts it back. */
#include "coll/algos.h"

static const char *unsupported(const FsComm *comm, FsCollOp op)
{
  if (op != FS_COLL_ALL_REDUCE)
    return "CollNet runs all_reduce only";
  if (fs_comm_collnet_switch(comm, 0) < 0)
    return "the communicator has no CollNet (SHARP) switch";
  if (fs_comm_n_hosts(comm) < 2)
    return "CollNet needs at least two hosts";
  if (!fs_comm_hosts_uniform(comm))
    return "CollNet needs the same number of ranks on every host";
  return NULL;
}

static void build_direct(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint nh = fs_comm_n_hosts(comm), L;
  fs_comm_host_ranks(comm, 0, &L);
  g_autofree uint32_t *in = g_new(uint32_t, MAX(L, nh));
  g_autofree uint32_t *toswitch = g_new(uint32_t, nh * L);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    /* Units of L slices, so that each rank's shard is a whole slice (a
     * network transfer long enough to hide its path latency). */
    uint64_t unit = req->slice_bytes * L;
    guint64 nchunks = bytes == 0 ? 1 : (bytes + unit - 1) / unit;
    for (guint64 k = 0; k < nchunks; k++) {
      uint64_t c = MIN(unit, bytes - MIN(bytes, k * unit));
      for (guint h = 0; h < nh; h++) {
        guint m;
        const guint *ranks = fs_comm_host_ranks(comm, h, &m);
        for (guint j = 0; j < L; j++) {
          uint64_t shard = fs_plan_split(b, c, L, j);
          guint nin = 0;
          for (guint i = 1; i < L; i++)
            in[nin++] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[(j + i) % L]), FS_EP_RANK(ranks[j]),
                                     shard, NULL, 0);
          toswitch[h * L + j] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[j]), FS_EP_COLLNET(j), shard, in, nin);
        }
      }
      for (guint j = 0; j < L; j++) {
        uint64_t shard = fs_plan_split(b, c, L, j);
        for (guint h = 0; h < nh; h++)
          in[h] = toswitch[h * L + j];
        for (guint h = 0; h < nh; h++) {
          guint m;
          const guint *ranks = fs_comm_host_ranks(comm, h, &m);
          uint32_t back = fs_plan_xfer(b, ch, FS_EP_COLLNET(j), FS_EP_RANK(ranks[j]), shard, in, nh);
          for (guint i = 1; i < L; i++)
            fs_plan_xfer(b, ch, FS_EP_RANK(ranks[j]), FS_EP_RANK(ranks[(j + i) % L]), shard, &back, 1);
        }
      }
    }
  }
}

static void build_chain(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint nh = fs_comm_n_hosts(comm), L;
  fs_comm_host_ranks(comm, 0, &L);
  g_autofree uint32_t *toswitch = g_new(uint32_t, nh);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    guint64 nchunks = fs_algo_n_chunks(b, bytes);
    for (guint64 k = 0; k < nchunks; k++) {
      uint64_t c = fs_algo_chunk(b, bytes, k);
      for (guint h = 0; h < nh; h++) {
        guint m;
        const guint *ranks = fs_comm_host_ranks(comm, h, &m);
        uint32_t prev = FS_STEP_NONE;
        for (guint j = L - 1; j >= 1; j--)
          prev = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[j]), FS_EP_RANK(ranks[j - 1]), c, &prev, 1);
        toswitch[h] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[0]), FS_EP_COLLNET(0), c, &prev, 1);
      }
      for (guint h = 0; h < nh; h++) {
        guint m;
        const guint *ranks = fs_comm_host_ranks(comm, h, &m);
        uint32_t prev = fs_plan_xfer(b, ch, FS_EP_COLLNET(0), FS_EP_RANK(ranks[0]), c, toswitch, nh);
        for (guint j = 0; j + 1 < L; j++)
          prev = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[j]), FS_EP_RANK(ranks[j + 1]), c, &prev, 1);
      }
    }
  }
}

const FsCollAlgo fs_coll_algo_collnet_direct = {
  .name = "collnet_direct",
  .nccl = FS_NCCL_ALGO_COLLNET_DIRECT,
  .summary = "SHARP: intra-host direct reduce-scatter, switch reduction per shard, all-gather",
  .unsupported = unsupported,
  .build = build_direct,
};

const FsCollAlgo fs_coll_algo_collnet_chain = {
  .name = "collnet_chain",
  .nccl = FS_NCCL_ALGO_COLLNET_CHAIN,
  .summary = "SHARP: intra-host chain to the host's first rank, switch reduction, chain back",
  .unsupported = unsupported,
  .build = build_chain,
};
