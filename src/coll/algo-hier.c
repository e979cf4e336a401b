/* algo-hier.c — hierarchical all_reduce: an intra-host ring
 * reduce-scatter, an inter-host ring all-reduce of each shard among the
 * ranks that hold it (local rank j of every host), then an intra-host ring
 * all-gather.  Each rank moves only 1/L of the data across the network,
 * the classic two-level scheme (Horovod's hierarchical all-reduce). */
#include "coll/algos.h"

static const char *unsupported(const FsComm *comm, FsCollOp op)
{
  if (op != FS_COLL_ALL_REDUCE)
    return "the hierarchical algorithm runs all_reduce only";
  if (!fs_comm_hosts_uniform(comm))
    return "the hierarchical algorithm needs the same number of ranks on every host";
  return NULL;
}

static void build(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint nh = fs_comm_n_hosts(comm), L;
  fs_comm_host_ranks(comm, 0, &L);
  /* done1[h*L + j]: rank j of host h holds reduced shard j; done2 after
   * the inter-host all-reduce of that shard. */
  g_autofree uint32_t *done1 = g_new(uint32_t, nh * L);
  g_autofree uint32_t *done2 = g_new(uint32_t, nh * L);
  g_autofree uint32_t *ready = g_new(uint32_t, MAX(nh, L));
  g_autofree uint32_t *out = g_new(uint32_t, MAX(nh, L));
  g_autofree guint *ranks = g_new(guint, MAX(nh, L));
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    for (guint h = 0; h < nh; h++) {
      guint m;
      const guint *hr = fs_comm_host_ranks(comm, h, &m);
      fs_algo_ring_phase(b, ch, FS_RING_REDUCE_SCATTER, hr, L, bytes, NULL, done1 + h * L);
    }
    for (guint j = 0; j < L; j++) {
      for (guint h = 0; h < nh; h++) {
        guint m;
        ranks[h] = fs_comm_host_ranks(comm, h, &m)[j];
        ready[h] = done1[h * L + j];
      }
      fs_algo_ring_phase(b, ch, FS_RING_ALL_REDUCE, ranks, nh, fs_plan_split(b, bytes, L, j),
                         ready, out);
      for (guint h = 0; h < nh; h++)
        done2[h * L + j] = nh > 1 ? out[h] : done1[h * L + j];
    }
    for (guint h = 0; h < nh; h++) {
      guint m;
      const guint *hr = fs_comm_host_ranks(comm, h, &m);
      fs_algo_ring_phase(b, ch, FS_RING_ALL_GATHER, hr, L, bytes, done2 + h * L, NULL);
    }
  }
}

/* One loop: a chunk per rank of every host and every shard, so that the
 * intra-host phases lose n_hosts loops and each inter-host ring one. */
static uint64_t loop_bytes(const FsComm *comm, const FsCollRequest *req)
{
  guint L;
  fs_comm_host_ranks(comm, 0, &L);
  uint64_t v = req->chunk_bytes * L * fs_comm_n_hosts(comm);
  return fs_algo_loop_bytes(req, v);
}

const FsCollAlgo fs_coll_algo_hier = {
  .name = "hier",
  .nccl = FS_NCCL_ALGO_NONE,
  .summary = "hierarchical: intra-host reduce-scatter, inter-host all-reduce, intra-host all-gather",
  .unsupported = unsupported,
  .build = build,
  .loop_bytes = loop_bytes,
};
