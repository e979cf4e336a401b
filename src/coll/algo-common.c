/* algo-common.c — building blocks shared by the algorithms: chunking and
 * the ring phase (one ring step per block and position, pipelined by the
 * builder's buffer slots).  See algos.h. */
#include "coll/algos.h"

#include <string.h>

guint64 fs_algo_n_chunks(const FsPlanBuilder *b, uint64_t bytes)
{
  uint64_t c = fs_plan_req(b)->chunk_bytes;
  return bytes == 0 ? 1 : (bytes + c - 1) / c;
}

uint64_t fs_algo_chunk(const FsPlanBuilder *b, uint64_t bytes, guint64 i)
{
  uint64_t c = fs_plan_req(b)->chunk_bytes;
  uint64_t start = i * c;
  if (start >= bytes)
    return 0;
  return MIN(c, bytes - start);
}

void fs_algo_ring_loop(FsPlanBuilder *b, guint channel, FsRingKind kind, const guint *ranks,
                       guint m, const uint64_t *blocks, const uint32_t *ready, uint32_t *done)
{
  if (done)
    for (guint p = 0; p < m; p++)
      done[p] = FS_STEP_NONE;
  if (m <= 1)
    return;
  guint nsteps = kind == FS_RING_ALL_REDUCE ? 2 * (m - 1) : m - 1;
  guint shift = kind == FS_RING_REDUCE_SCATTER ? 1 : 0;
  /* prev[p]: the send of position p at the previous step. */
  g_autofree uint32_t *prev = g_new(uint32_t, m);
  g_autofree uint32_t *cur = g_new(uint32_t, m);
  for (guint p = 0; p < m; p++)
    prev[p] = FS_STEP_NONE;
  for (guint s = 0; s < nsteps; s++) {
    for (guint p = 0; p < m; p++) {
      guint from = (p + m - 1) % m;
      guint blk = (guint)((p + (guint64)m * 2 - s % m - shift) % m);
      uint32_t deps[2] = {prev[from], ready ? ready[p] : FS_STEP_NONE};
      cur[p] = fs_plan_xfer(b, channel, FS_EP_RANK(ranks[p]), FS_EP_RANK(ranks[(p + 1) % m]),
                            blocks[blk], deps, 2);
    }
    memcpy(prev, cur, sizeof(uint32_t) * m);
  }
  /* The last send of position p-1 arrives at position p. */
  if (done)
    for (guint p = 0; p < m; p++)
      done[p] = prev[(p + m - 1) % m];
}

void fs_algo_ring_phase(FsPlanBuilder *b, guint channel, FsRingKind kind, const guint *ranks,
                        guint m, uint64_t total, const uint32_t *ready, uint32_t *done)
{
  uint64_t chunk = fs_plan_req(b)->chunk_bytes;
  uint64_t loop = chunk * m;
  guint64 nloops = total == 0 ? 1 : (total + loop - 1) / loop;
  g_autofree uint64_t *blocks = g_new(uint64_t, m);
  for (guint64 l = 0; l < nloops; l++) {
    uint64_t bytes = MIN(loop, total - MIN(total, l * loop));
    for (guint p = 0; p < m; p++)
      blocks[p] = fs_plan_split(b, bytes, m, p);
    fs_algo_ring_loop(b, channel, kind, ranks, m, blocks, ready, done);
  }
}
