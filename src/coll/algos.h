/* algos.h — internal: the algorithm entries (one file each, algo-*.c)
 * and the building blocks they share (algo-common.c). */
#pragma once

#include "coll/plan.h"

G_BEGIN_DECLS

extern const FsCollAlgo fs_coll_algo_ring;
extern const FsCollAlgo fs_coll_algo_tree;
extern const FsCollAlgo fs_coll_algo_collnet_direct;
extern const FsCollAlgo fs_coll_algo_collnet_chain;
extern const FsCollAlgo fs_coll_algo_nvls;
extern const FsCollAlgo fs_coll_algo_nvls_tree;
extern const FsCollAlgo fs_coll_algo_pat;
extern const FsCollAlgo fs_coll_algo_rhd;
extern const FsCollAlgo fs_coll_algo_direct;
extern const FsCollAlgo fs_coll_algo_hier;

/* Loop bytes (FsCollAlgo.loop_bytes) as an algorithm computed them: v,
 * or 0 when v is 0 or the request's chunk or slice is not a whole number
 * of elements (then removing loops would not leave the rest unchanged). */
uint64_t fs_algo_loop_bytes(const FsCollRequest *req, uint64_t v);
/* The loop_bytes of an algorithm whose loop is one slice (trees, NVLS). */
uint64_t fs_algo_slice_loop_bytes(const FsComm *comm, const FsCollRequest *req);

/* Ring phases over a subset of ranks. */
typedef enum {
  FS_RING_ALL_REDUCE,     /* 2(m-1) steps: reduce-scatter then all-gather */
  FS_RING_REDUCE_SCATTER, /* m-1 steps; block p ends reduced at position p */
  FS_RING_ALL_GATHER,     /* m-1 steps; block p starts at position p */
} FsRingKind;

/* Runs one loop of a ring phase on channel over m ranks (ring order in
 * ranks[]), where block p has blocks[p] bytes.  ready[p] (or NULL) is a
 * step every send of position p waits for (FS_STEP_NONE for none).  On
 * return, done[p] (if non-NULL) is the last transfer into position p
 * (FS_STEP_NONE when m == 1).  Adds m × steps transfers. */
void fs_algo_ring_loop(FsPlanBuilder *b, guint channel, FsRingKind kind, const guint *ranks,
                       guint m, const uint64_t *blocks, const uint32_t *ready, uint32_t *done);

/* Runs a whole ring phase for `total` bytes of a channel: per-rank blocks of
 * total/m, in loops of m chunks (each block at most the request's chunk
 * size), one fs_algo_ring_loop per loop, each followed by every rank's
 * local copy of its block (a reduction step after the loop's last arrival
 * into the rank; NCCL's ring kernel runs one primitive per loop that moves
 * data only inside the GPU, and the next loop's sends wait for it).
 * ready as above, for the first loop; done[p] (if non-NULL) is position
 * p's last local copy (ready[p] when m == 1). */
void fs_algo_ring_phase(FsPlanBuilder *b, guint channel, FsRingKind kind, const guint *ranks,
                        guint m, uint64_t total, const uint32_t *ready, uint32_t *done);

/* Pipelined units for bytes: the request's slice size (chains, trees,
 * switch algorithms and direct sends move slice by slice).  Number of
 * units (at least 1) and the size of unit i. */
guint64 fs_algo_n_chunks(const FsPlanBuilder *b, uint64_t bytes);
uint64_t fs_algo_chunk(const FsPlanBuilder *b, uint64_t bytes, guint64 i);

/* TRUE when n is a power of two. */
static inline gboolean fs_algo_pow2(guint n)
{
  return n > 0 && (n & (n - 1)) == 0;
}

G_END_DECLS
