/* algo-rhd.c — recursive halving-doubling (Rabenseifner) and its
 * relatives: all_reduce as recursive-halving reduce-scatter then
 * recursive-doubling all-gather over the largest power of two p ≤ n (the
 * n - p extra ranks first fold their data into a partner and get the
 * result back at the end); reduce_scatter and all_gather as one half of
 * it (n a power of two); hypercube as nccl-tests' exchange with rank ^ 2^k
 * of a doubling amount; barrier as dissemination (round k: r → r + 2^k).
 * log2(n) steps, each one transfer per rank: latency-friendly, and each
 * rank still sends about 2S for all_reduce. */
#include "coll/algos.h"

#include <string.h>

static const char *unsupported(const FsComm *comm, FsCollOp op)
{
  guint n = fs_comm_size(comm);
  switch (op) {
  case FS_COLL_ALL_REDUCE:
  case FS_COLL_BARRIER:
    return NULL;
  case FS_COLL_REDUCE_SCATTER:
  case FS_COLL_ALL_GATHER:
  case FS_COLL_HYPERCUBE:
    return fs_algo_pow2(n) ? NULL : "needs a power-of-two number of ranks";
  default:
    return "recursive halving-doubling runs all_reduce, reduce_scatter, all_gather, hypercube and barrier";
  }
}

/* Halving over p ranks: step k exchanges seg/2^(k+1) with r ^ (p >> (k+1)).
 * last[r] is the step rank r waits for before its next send (updated). */
static void halving(FsPlanBuilder *b, guint ch, guint p, uint64_t total, uint32_t *last)
{
  g_autofree uint32_t *next = g_new(uint32_t, p);
  uint64_t seg = total;
  for (guint d = p >> 1; d >= 1; d >>= 1) {
    seg = (seg + 1) / 2;
    for (guint r = 0; r < p; r++)
      next[r ^ d] = fs_plan_xfer(b, ch, FS_EP_RANK(r), FS_EP_RANK(r ^ d), seg, &last[r], 1);
    /* A rank goes on once it has its partner's half (and its own send). */
    for (guint r = 0; r < p; r++)
      last[r] = next[r];
  }
}

/* Doubling: distance 1, 2, …; amount doubles from total/p. */
static void doubling(FsPlanBuilder *b, guint ch, guint p, uint64_t total, uint32_t *last)
{
  g_autofree uint32_t *next = g_new(uint32_t, p);
  uint64_t seg = total / p;
  for (guint d = 1; d < p; d <<= 1) {
    for (guint r = 0; r < p; r++)
      next[r ^ d] = fs_plan_xfer(b, ch, FS_EP_RANK(r), FS_EP_RANK(r ^ d), seg, &last[r], 1);
    for (guint r = 0; r < p; r++)
      last[r] = next[r];
    seg *= 2;
  }
}

/* Adds the recursive halving-doubling steps for the request over the largest power of two p ≤
 * n: all_reduce folds the n - p extra ranks into a partner first and returns them the result
 * last; reduce_scatter is the halving and all_gather and hypercube the doubling (n a power of
 * two, which unsupported checks); barrier (channel 0 only) is dissemination with empty
 * messages. log2(p) transfers per rank and channel. */
static void build(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint n = fs_comm_size(comm), p = 1;
  while (p * 2 <= n)
    p *= 2;
  g_autofree uint32_t *last = g_new(uint32_t, n);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    for (guint r = 0; r < n; r++)
      last[r] = FS_STEP_NONE;
    switch (req->op) {
    case FS_COLL_ALL_REDUCE:
      for (guint r = p; r < n; r++)
        last[r - p] = fs_plan_xfer(b, ch, FS_EP_RANK(r), FS_EP_RANK(r - p), bytes, NULL, 0);
      halving(b, ch, p, bytes, last);
      doubling(b, ch, p, bytes, last);
      for (guint r = p; r < n; r++)
        fs_plan_xfer(b, ch, FS_EP_RANK(r - p), FS_EP_RANK(r), bytes, &last[r - p], 1);
      break;
    case FS_COLL_REDUCE_SCATTER:
      halving(b, ch, n, bytes * n, last);
      break;
    case FS_COLL_ALL_GATHER:
      doubling(b, ch, n, bytes * n, last);
      break;
    case FS_COLL_HYPERCUBE:
      doubling(b, ch, n, bytes * n, last);
      break;
    case FS_COLL_BARRIER: {
      if (ch > 0)
        break;
      g_autofree uint32_t *next = g_new(uint32_t, n);
      for (guint d = 1; d < n; d <<= 1) {
        for (guint r = 0; r < n; r++)
          next[(r + d) % n] = fs_plan_xfer(b, 0, FS_EP_RANK(r), FS_EP_RANK((r + d) % n), 0, &last[r], 1);
        memcpy(last, next, sizeof(uint32_t) * n);
      }
      break;
    }
    default:
      g_assert_not_reached();
    }
  }
}

const FsCollAlgo fs_coll_algo_rhd = {
  .name = "rhd",
  .nccl = FS_NCCL_ALGO_NONE,
  .summary = "recursive halving-doubling (Rabenseifner); hypercube; dissemination barrier",
  .unsupported = unsupported,
  .build = build,
};
