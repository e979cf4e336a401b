/* algo-common.c — building blocks shared by the algorithms: chunking and
 * the ring phase (one ring step per block and position, pipelined by the
 * builder's buffer slots).  See algos.h. */
#include "coll/algos.h"

#include <string.h>

guint64 fs_algo_n_units(const FsPlanBuilder *b, uint64_t bytes, uint64_t unit)
{
  /* Each unit adds a step at least: past the step limit the plan fails,
   * so a loop over more units than that (an EiB in 512 KiB slices) only
   * needs to reach the limit, and one that starts after it nothing. */
  if (fs_plan_overflowed(b))
    return 1;
  guint64 n = bytes == 0 ? 1 : bytes / unit + (bytes % unit != 0);
  return MIN(n, (guint64)fs_plan_req(b)->max_steps + 1);
}

uint64_t fs_algo_unit(uint64_t bytes, uint64_t unit, guint64 i)
{
  uint64_t start = i * unit;
  if (start >= bytes)
    return 0;
  return MIN(unit, bytes - start);
}

guint64 fs_algo_n_chunks(const FsPlanBuilder *b, uint64_t bytes)
{
  return fs_algo_n_units(b, bytes, fs_plan_req(b)->slice_bytes);
}

uint64_t fs_algo_chunk(const FsPlanBuilder *b, uint64_t bytes, guint64 i)
{
  return fs_algo_unit(bytes, fs_plan_req(b)->slice_bytes, i);
}

/* See algos.h. Each block moves in slices, and slice j of a step waits for slice j of the step
 * before it upstream (and for ready[p]), so slices stream through the ring; max_ring_steps cuts
 * the steps for timing runs. Allocates two m × J arrays of step ids for the loop. */
void fs_algo_ring_loop(FsPlanBuilder *b, guint channel, FsRingKind kind, const guint *ranks,
                       guint m, const uint64_t *blocks, const uint32_t *ready, uint32_t *done)
{
  if (done)
    for (guint p = 0; p < m; p++)
      done[p] = FS_STEP_NONE;
  if (m <= 1)
    return;
  guint nsteps = kind == FS_RING_ALL_REDUCE ? 2 * (m - 1) : m - 1;
  guint limit = fs_plan_req(b)->max_ring_steps;
  if (limit > 0)
    nsteps = MIN(nsteps, limit); /* timing only (plan.h) */
  guint shift = kind == FS_RING_REDUCE_SCATTER ? 1 : 0;
  /* Blocks move in slices; slice j of a block at step s waits for slice j
   * of the same block from upstream at step s-1, so slices stream through
   * the ring. */
  uint64_t slice = fs_plan_req(b)->slice_bytes;
  guint J = 1;
  for (guint p = 0; p < m; p++)
    J = MAX(J, (guint)((blocks[p] + slice - 1) / slice));
  /* prev[p*J + j]: position p's send of slice j at the previous step. */
  g_autofree uint32_t *prev = g_new(uint32_t, (gsize)m * J);
  g_autofree uint32_t *cur = g_new(uint32_t, (gsize)m * J);
  for (guint i = 0; i < m * J; i++)
    prev[i] = FS_STEP_NONE;
  for (guint s = 0; s < nsteps; s++) {
    for (guint p = 0; p < m; p++) {
      guint from = (p + m - 1) % m;
      guint blk = (guint)((p + (guint64)m * 2 - s % m - shift) % m);
      uint64_t left = blocks[blk];
      for (guint j = 0; j < J; j++) {
        uint64_t bytes = MIN(left, slice);
        left -= bytes;
        uint32_t deps[2] = {prev[from * J + j], ready ? ready[p] : FS_STEP_NONE};
        /* A step's first slice follows the connection's previous step (ring_head). */
        FsCollEp src = FS_EP_RANK(ranks[p]), dst = FS_EP_RANK(ranks[(p + 1) % m]);
        cur[p * J + j] = j == 0    ? fs_plan_xfer_ring(b, channel, src, dst, bytes, deps, 2)
                         : bytes > 0 ? fs_plan_xfer(b, channel, src, dst, bytes, deps, 2)
                                     : FS_STEP_NONE;
      }
    }
    memcpy(prev, cur, sizeof(uint32_t) * m * J);
  }
  /* The last send of position p-1 arrives at position p (its last slice
   * follows the others on the same connection). */
  if (done)
    for (guint p = 0; p < m; p++) {
      guint from = (p + m - 1) % m;
      for (guint j = J; j-- > 0;)
        if (prev[from * J + j] != FS_STEP_NONE) {
          done[p] = prev[from * J + j];
          break;
        }
    }
}

void fs_algo_ring_phase(FsPlanBuilder *b, guint channel, FsRingKind kind, const guint *ranks,
                        guint m, uint64_t total, const uint32_t *ready, uint32_t *done)
{
  uint64_t chunk = fs_plan_req(b)->chunk_bytes;
  uint64_t loop = chunk * m;
  guint64 nloops = total == 0 ? 1 : total / loop + (total % loop != 0);
  g_autofree uint64_t *blocks = g_new(uint64_t, m);
  g_autofree uint32_t *gate = g_new(uint32_t, m);
  g_autofree uint32_t *last = g_new(uint32_t, m);
  for (guint p = 0; p < m; p++)
    gate[p] = ready ? ready[p] : FS_STEP_NONE;
  for (guint64 l = 0; l < nloops && !fs_plan_overflowed(b); l++) {
    uint64_t bytes = MIN(loop, total - MIN(total, l * loop));
    for (guint p = 0; p < m; p++)
      blocks[p] = fs_plan_split(b, bytes, m, p);
    fs_algo_ring_loop(b, channel, kind, ranks, m, blocks, gate, last);
    /* NCCL's ring kernel (src/device/all_reduce.h, reduce_scatter.h,
     * all_gather.h: runRing) is one thread block per channel running the
     * loop's primitives in order; one of them per loop moves its block
     * only inside the GPU (the final recv into the user buffer, or the
     * first copy of the input), and the next loop's sends start after it.
     * That local copy is a reduction step of the block's bytes, timed by
     * the executor's reduce bandwidth. */
    for (guint p = 0; p < m; p++)
      gate[p] = last[p] == FS_STEP_NONE ? gate[p] /* m == 1: nothing moved */
                                         : fs_plan_reduce(b, ranks[p], blocks[p], &last[p], 1);
  }
  if (done)
    memcpy(done, gate, sizeof(uint32_t) * m);
}

uint64_t fs_algo_loop_bytes(const FsCollRequest *req, uint64_t v)
{
  guint w = fs_coll_dtype_size(req->dtype);
  if (v == 0 || req->chunk_bytes % w != 0 || req->slice_bytes % w != 0)
    return 0;
  return v;
}

uint64_t fs_algo_slice_loop_bytes(const FsComm *comm, const FsCollRequest *req)
{
  (void)comm;
  return fs_algo_loop_bytes(req, req->slice_bytes);
}
