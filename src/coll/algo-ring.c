/* algo-ring.c — NCCL's ring: every channel is a ring over all ranks (its
 * own order, from the communicator).  all_reduce is a reduce-scatter then
 * an all-gather, 2(n-1) steps per chunk; reduce_scatter and all_gather are
 * n-1 steps; broadcast and reduce are a pipelined chain along the ring
 * from (to) the root. */
#include "coll/algos.h"

static const char *unsupported(const FsComm *comm, FsCollOp op)
{
  (void)comm;
  switch (op) {
  case FS_COLL_ALL_REDUCE:
  case FS_COLL_ALL_GATHER:
  case FS_COLL_REDUCE_SCATTER:
  case FS_COLL_BROADCAST:
  case FS_COLL_REDUCE:
    return NULL;
  default:
    return "the ring runs all_reduce, all_gather, reduce_scatter, broadcast and reduce";
  }
}

/* A chain from position `first` along the ring through all n ranks: every
 * chunk hops n-1 times, each hop waiting for the previous one. */
static void chain(FsPlanBuilder *b, guint ch, const guint *order, guint n, guint first,
                  uint64_t bytes)
{
  guint64 nchunks = fs_algo_n_chunks(b, bytes);
  for (guint64 k = 0; k < nchunks; k++) {
    uint64_t c = fs_algo_chunk(b, bytes, k);
    uint32_t prev = FS_STEP_NONE;
    for (guint i = 0; i + 1 < n; i++) {
      guint from = order[(first + i) % n], to = order[(first + i + 1) % n];
      prev = fs_plan_xfer(b, ch, FS_EP_RANK(from), FS_EP_RANK(to), c, &prev, 1);
    }
  }
}

/* The check of a rotated channel's claim (fs_plan_channel_rotated): channel
 * ch's ring is channel rep's with every rank rotated, position for
 * position, and its share rep's; a g_error if not. */
static void check_rotated(const FsPlanBuilder *b, guint ch)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint period = req->rotation * req->rotation_order, n = fs_comm_size(comm);
  guint rep = ch - ch % period + ch % req->rotation, shift = ch % period - ch % req->rotation;
  const guint *a = fs_comm_ring(comm, rep), *t = fs_comm_ring(comm, ch);
  for (guint i = 0; i < n; i++)
    if (t[i] != fs_comm_rotate_rank(comm, a[i], shift))
      g_error("plan rotation: ring channel %u is not channel %u rotated by %u (position %u)", ch,
              rep, shift, i);
  if (fs_plan_split(b, req->bytes, req->nchannels, ch) !=
      fs_plan_split(b, req->bytes, req->nchannels, rep))
    g_error("plan rotation: ring channel %u's share differs from channel %u's", ch, rep);
}

/* Every channel's ring phase or chain; a channel rotated from a made one
 * (fs_plan_channel_rotated: the phases, whose steps depend on the ring's
 * order alone) is skipped, or only checked. */
static void build(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint n = fs_comm_size(comm);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    if (fs_plan_channel_rotated(b, ch)) {
      if (fs_plan_check_mirrors())
        check_rotated(b, ch);
      continue;
    }
    const guint *order = fs_comm_ring(comm, ch);
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    guint root_pos = 0;
    for (guint p = 0; p < n; p++)
      if (order[p] == req->root)
        root_pos = p;
    switch (req->op) {
    case FS_COLL_ALL_REDUCE:
      fs_algo_ring_phase(b, ch, FS_RING_ALL_REDUCE, order, n, bytes, NULL, NULL);
      break;
    case FS_COLL_REDUCE_SCATTER:
      fs_algo_ring_phase(b, ch, FS_RING_REDUCE_SCATTER, order, n, bytes * n, NULL, NULL);
      break;
    case FS_COLL_ALL_GATHER:
      fs_algo_ring_phase(b, ch, FS_RING_ALL_GATHER, order, n, bytes * n, NULL, NULL);
      break;
    case FS_COLL_BROADCAST:
      chain(b, ch, order, n, root_pos, bytes);
      break;
    case FS_COLL_REDUCE:
      chain(b, ch, order, n, root_pos + 1, bytes);
      break;
    default:
      g_assert_not_reached();
    }
  }
}

/* One loop of a channel: a chunk per rank (all_reduce: per rank block of
 * the buffer; reduce_scatter, all_gather: of the per-rank unit), or one
 * slice of a chain. */
static uint64_t loop_bytes(const FsComm *comm, const FsCollRequest *req)
{
  uint64_t v;
  switch (req->op) {
  case FS_COLL_ALL_REDUCE:
    v = req->chunk_bytes * fs_comm_size(comm);
    break;
  case FS_COLL_REDUCE_SCATTER:
  case FS_COLL_ALL_GATHER:
    v = req->chunk_bytes;
    break;
  default:
    v = req->slice_bytes;
    break;
  }
  return fs_algo_loop_bytes(req, v);
}

/* Ring steps per loop: all_reduce 2(n-1), reduce_scatter and all_gather
 * n-1; the chains of broadcast and reduce have none. */
static guint ring_steps(const FsComm *comm, const FsCollRequest *req)
{
  return fs_coll_ring_steps(req->op, fs_comm_size(comm));
}

/* The ring phases rotate with their rings by any shift; a chain from a
 * root does not (the root stays). */
static guint rotates(FsCollOp op)
{
  return op == FS_COLL_ALL_REDUCE || op == FS_COLL_ALL_GATHER || op == FS_COLL_REDUCE_SCATTER;
}

const FsCollAlgo fs_coll_algo_ring = {
  .name = "ring",
  .nccl = FS_NCCL_ALGO_RING,
  .summary = "rings over all ranks, one per channel; all_reduce = reduce-scatter + all-gather",
  .unsupported = unsupported,
  .build = build,
  .loop_bytes = loop_bytes,
  .ring_steps = ring_steps,
  .rotates = rotates,
};
