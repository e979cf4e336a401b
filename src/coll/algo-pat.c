/* algo-pat.c — PAT (NCCL 2.23+, "parallel aggregated trees") for
 * all_gather and reduce_scatter, modelled as Bruck's algorithm:
 * ceil(log2 n) steps; at distance d = 1, 2, 4, … every rank sends
 * min(d, n - d) blocks to rank r - d (all_gather; reduce_scatter runs the
 * same exchanges in reverse, largest distance first, towards r + d).  Each
 * rank sends n-1 blocks in all, like the ring, in logarithmically many
 * steps.  NCCL uses it with one rank per host. */
#include "coll/algos.h"

#include <string.h>

static const char *unsupported(const FsComm *comm, FsCollOp op)
{
  (void)comm;
  return op == FS_COLL_ALL_GATHER || op == FS_COLL_REDUCE_SCATTER
           ? NULL : "PAT runs all_gather and reduce_scatter only";
}

static void build(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint n = fs_comm_size(comm), nd = 0;
  guint dist[32];
  for (guint d = 1; d < n; d <<= 1)
    dist[nd++] = d;
  g_autofree uint32_t *last = g_new(uint32_t, n);
  g_autofree uint32_t *next = g_new(uint32_t, n);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t block = fs_plan_split(b, req->bytes, req->nchannels, ch);
    for (guint r = 0; r < n; r++)
      last[r] = FS_STEP_NONE;
    gboolean ag = req->op == FS_COLL_ALL_GATHER;
    for (guint i = 0; i < nd; i++) {
      guint d = ag ? dist[i] : dist[nd - 1 - i];
      uint64_t bytes = block * MIN(d, n - d);
      for (guint r = 0; r < n; r++) {
        guint to = ag ? (r + n - d) % n : (r + d) % n;
        next[to] = fs_plan_xfer(b, ch, FS_EP_RANK(r), FS_EP_RANK(to), bytes, &last[r], 1);
      }
      memcpy(last, next, sizeof(uint32_t) * n);
    }
  }
}

const FsCollAlgo fs_coll_algo_pat = {
  .name = "pat",
  .nccl = FS_NCCL_ALGO_PAT,
  .summary = "PAT: logarithmic all_gather / reduce_scatter (Bruck-style aggregation)",
  .unsupported = unsupported,
  .build = build,
};
