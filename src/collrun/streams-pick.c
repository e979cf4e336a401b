/* streams-pick.c — which model runs a collective: the names of --exec and
 * the rule of --exec auto (fs_coll_exec_streams_trusted,
 * fs_coll_exec_pick_streams), each exclusion with the measurement behind
 * it.  See streams.h. */
#include <math.h>

#include "collrun/streams.h"
#include "util/names.h"

static const char *const exec_names[] = {FS_COLL_EXECS(FS_NAMES_ENTRY)};
FS_NAMES_DEFINE(FsCollExec, fs_coll_exec, exec_names, FS_COLL_EXEC_N, fs_names_index_nocase)

/* See streams.h: all but the chains of broadcast and reduce, NCCL's tree
 * and CollNet. */
gboolean fs_coll_exec_streams_trusted(const FsCollAlgo *algo, FsCollOp op)
{
  if (op == FS_COLL_BROADCAST || op == FS_COLL_REDUCE)
    return FALSE;
  return algo->nccl != FS_NCCL_ALGO_TREE && algo->nccl != FS_NCCL_ALGO_COLLNET_DIRECT &&
         algo->nccl != FS_NCCL_ALGO_COLLNET_CHAIN;
}

/* See streams.h: trusted, not NVLS nor the NVLS tree across hosts, and a
 * ring of whole hosts (or one GPU per host) from 1 MiB, or deep: the whole
 * loops of a channel's share, or the steps the plan would have (channels ×
 * ranks × ring steps, or 2 for a tree or switch, × the slices each
 * carries). */
gboolean fs_coll_exec_pick_streams(const FsComm *comm, const FsCollAlgo *algo,
                                   const FsCollRequest *req)
{
  guint n = fs_comm_size(comm);
  if (n < 2 || req->nchannels == 0 || !fs_coll_exec_streams_trusted(algo, req->op))
    return FALSE;
  /* NVLS: across hosts it goes through the SHARP switches as CollNet does
   * (its stream model was 4.7 % fast at 4 DGX H100 nodes, 256 MiB
   * all_reduce); on one host it runs whole, exact, up to 2^18 steps, and
   * past them its loop counts start where its buffers have filled (LL
   * all_reduce of 4 and 16 GiB on one DGX H100: +11.1 % from loops 1-3,
   * exact since branch gaps19; tests/bench/RESULTS.md), but where it runs
   * whole it costs a step run: the steps take it everywhere. */
  if (algo->nccl == FS_NCCL_ALGO_NVLS)
    return FALSE;
  /* The NVLS tree across hosts fills its pipeline for tens of loops: past
   * the budget of whole runs (STREAMS_WHOLE_MAX_STEPS) its stream model is
   * 14 % fast at 1 GiB on 32 nodes (exact on 8 and 16, run whole; it was
   * 9-14 % fast on 8-32 nodes: tests/bench/RESULTS.md, branch acc19),
   * while its step runs are made for local rank 0 alone (rails.h) and cost
   * 0.04-1 s up to 128 nodes.  The steps take it, and hand it to the streams
   * when its plan would pass the step guard (fs_coll_time_alone). */
  if (algo->nccl == FS_NCCL_ALGO_NVLS_TREE && fs_comm_n_hosts(comm) > 1)
    return FALSE;
  /* A ring across whole hosts or one GPU per host, each host its own
   * NVLink domain, from 1 MiB: within 0.011 % and 0.2 % of --exact at
   * 16-1,024 ranks, however shallow; not on part of each host's GPUs,
   * whose NIC hops may cross other GPUs' NVLinks (PXN: 1.0-1.2 % slow over
   * 32 nodes at 64 MiB-1 GiB with one repair, within 0.35 % since their
   * skeletons run on their own network, branch gaps19, at more CPU than
   * the steps' ring-step extrapolation for some sizes), nor across the trays of an NVLink rack (a
   * GB200 NVL72: up to 11.5 %; tests/bench/RESULTS.md, "--exec auto the
   * default").  Those stay with the steps (alone.h). */
  guint hosts = fs_comm_n_hosts(comm);
  if (algo->ring_steps != NULL && hosts > 1) {
    if (fs_comm_n_nvlink_domains(comm) != hosts ||
        !(fs_comm_whole_hosts(comm) || fs_comm_ppn(comm) == 1))
      return FALSE; /* however deep */
    if (req->bytes >= FS_COLL_STREAMS_AUTO_RING_BYTES)
      return TRUE;
  }
  uint64_t q = algo->loop_bytes ? algo->loop_bytes(comm, req) : 0;
  uint64_t share = req->bytes / req->nchannels;
  if (q > 0 && share / q >= FS_COLL_STREAMS_AUTO_LOOPS)
    return TRUE;
  guint S = algo->ring_steps ? algo->ring_steps(comm, req) : 0;
  uint64_t slice = MAX(req->slice_bytes, 1);
  double per = S > 0 ? (double)share / n : (double)share;
  double steps = (double)req->nchannels * n * MAX(S, 2) * MAX(1.0, ceil(per / (double)slice));
  return steps > FS_COLL_STREAMS_AUTO_STEPS;
}
