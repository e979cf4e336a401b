/* algo-direct.c — direct (one-shot) algorithms: every rank talks to its
 * peers point to point, as NCCL's send/recv does for alltoall, gather,
 * scatter and sendrecv.  all_reduce is one-shot: every rank sends its whole
 * buffer to every other and reduces locally (bandwidth-hungry, latency of
 * one step).  sendrecv is a ring of pairs, rank r → r+1, as nccl-tests
 * runs it.  barrier is a gather of empty messages to rank 0 then a
 * release.  Per-peer data is pipelined in chunks. */
#include "coll/algos.h"

static const char *unsupported(const FsComm *comm, FsCollOp op)
{
  (void)comm;
  return op == FS_COLL_HYPERCUBE ? "hypercube exchanges are recursive (use rhd)" : NULL;
}

/* Sends bytes from src to dst in chunks; returns the last chunk's step.
 * Every chunk waits for dep. */
static uint32_t send_chunked(FsPlanBuilder *b, guint ch, guint src, guint dst, uint64_t bytes,
                             uint32_t dep)
{
  guint64 nchunks = fs_algo_n_chunks(b, bytes);
  uint32_t last = FS_STEP_NONE;
  for (guint64 k = 0; k < nchunks; k++)
    last = fs_plan_xfer(b, ch, FS_EP_RANK(src), FS_EP_RANK(dst), fs_algo_chunk(b, bytes, k), &dep, 1);
  return last;
}

/* Adds the direct algorithm's steps for the request: per channel, every rank sends to each peer
 * (the whole buffer or its block, chunked) with a local reduce at the receiver where the op
 * reduces; rooted ops send from or to the root only; sendrecv is the ring of pairs r → r+1;
 * barrier (channel 0 only) is an empty gather to rank 0 and its release. About n² transfers per
 * chunk and channel for the all-to-all ops. */
static void build(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint n = fs_comm_size(comm), root = req->root;
  g_autofree uint32_t *in = g_new(uint32_t, n);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    switch (req->op) {
    case FS_COLL_ALL_REDUCE:
    case FS_COLL_ALL_GATHER:
    case FS_COLL_REDUCE_SCATTER:
    case FS_COLL_ALLTOALL:
      /* Rank r sends to each peer d (in the order r+1, r+2, … to spread
       * the load): the whole buffer (all_reduce, all_gather) or block d. */
      for (guint d = 0; d < n; d++) {
        guint nin = 0;
        for (guint i = 1; i < n; i++) {
          guint r = (d + n - i) % n;
          in[nin++] = send_chunked(b, ch, r, d, bytes, FS_STEP_NONE);
        }
        if (fs_coll_op_reduces(req->op))
          fs_plan_reduce(b, d, bytes * (n - 1), in, nin);
      }
      break;
    case FS_COLL_BROADCAST:
    case FS_COLL_SCATTER:
      for (guint i = 1; i < n; i++)
        send_chunked(b, ch, root, (root + i) % n, bytes, FS_STEP_NONE);
      break;
    case FS_COLL_REDUCE:
    case FS_COLL_GATHER: {
      guint nin = 0;
      for (guint i = 1; i < n; i++)
        in[nin++] = send_chunked(b, ch, (root + i) % n, root, bytes, FS_STEP_NONE);
      if (req->op == FS_COLL_REDUCE)
        fs_plan_reduce(b, root, bytes * (n - 1), in, nin);
      break;
    }
    case FS_COLL_SENDRECV:
      for (guint r = 0; r < n; r++)
        send_chunked(b, ch, r, (r + 1) % n, bytes, FS_STEP_NONE);
      break;
    case FS_COLL_BARRIER: {
      if (ch > 0)
        break; /* one channel is enough to synchronise */
      guint nin = 0;
      for (guint r = 1; r < n; r++)
        in[nin++] = fs_plan_xfer(b, 0, FS_EP_RANK(r), FS_EP_RANK(0), 0, NULL, 0);
      for (guint r = 1; r < n; r++)
        fs_plan_xfer(b, 0, FS_EP_RANK(0), FS_EP_RANK(r), 0, in, nin);
      break;
    }
    default:
      g_assert_not_reached();
    }
  }
}

/* One loop is one slice of every send on every channel (the sends are chunked alike, the
 * last partial chunk after the whole ones), so a run alone can extrapolate loops (alone.h).
 * Not for the reducing ops: their final reduction grows with the bytes. */
static uint64_t loop_bytes(const FsComm *comm, const FsCollRequest *req)
{
  if (fs_coll_op_reduces(req->op) || req->op == FS_COLL_BARRIER)
    return 0;
  return fs_algo_slice_loop_bytes(comm, req);
}

const FsCollAlgo fs_coll_algo_direct = {
  .name = "direct",
  .nccl = FS_NCCL_ALGO_NONE,
  .summary = "point to point with every peer (one-shot all_reduce; alltoall, gather, scatter, sendrecv)",
  .unsupported = unsupported,
  .build = build,
  .loop_bytes = loop_bytes,
};
