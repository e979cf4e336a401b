/* algo-collnet.c — CollNet (SHARP): the network switches reduce across
 * hosts.  Modelled with the CollNet switches as endpoints:
 *   collnet_direct (all_reduce), per chunk on hosts of L ranks: an
 *   intra-host direct reduce-scatter (rank j gathers shard j from its L-1
 *   peers), rank j sends its shard up the aggregation tree, the tree
 *   returns the shard reduced over all hosts, and rank j sends it to its
 *   L-1 peers.  The scatter and the gather run on separate FIFO lanes
 *   (NCCL's CollNetDirect uses separate warps for them), so the next
 *   chunk's scatter does not wait behind the previous chunk's round trip
 *   through the network.
 *   collnet_direct (all_gather, reduce_scatter; NCCL 2.20+ with the SHARP
 *   plugin's iallgather/ireducescatter, one NIC per rank): rail j is the
 *   blocks of every host's local rank j.  all_gather: per slice, rank j
 *   sends its own block to shard j's switch, which returns the rail's
 *   blocks of every host (nh slices) to each host's rank j, and rank j
 *   forwards them to its L-1 peers (NCCL 2.20 all_gather.h RunWorkColl
 *   CollNetDirect: send to network, receive and broadcast to the local
 *   heads, receive the broadcast).  reduce_scatter, the reverse: rank j
 *   gathers rail j's blocks (nh slices) from its L-1 peers, sends their
 *   sum to the switch, which reduces over the hosts and returns to each
 *   host's rank j its own block.  NCCL walks the rail's blocks host by host
 *   in chunks; the model moves every host's slice at once: the same bytes
 *   on every link, a pipeline of slices.
 *   collnet_chain (all_reduce): a chain inside each host reduces the chunk
 *   to the channel's head rank (local rank channel mod L, so channels use
 *   every NIC), which sends it up the tree (shard = the head's local
 *   rank); the tree returns the total and the chain broadcasts it back
 *   (on its own lane).
 * The tree (comm.h, fs_comm_set_collnet_groups): with one group, every
 * host sends shard j to shard j's switch, which returns the total once
 * every host's part arrived; with several groups (leaf switches), a host
 * sends to its group's leaf, each leaf sends the group's partial result
 * to the root when its hosts' parts arrived, and the root sends the total
 * back to every leaf, which returns it to its hosts. */
#include "coll/algos.h"

/* The fewest chunks collnet_direct splits a channel's share into, when
 * slices allow (pipeline depth, not a hardware figure). */
#define MIN_CHUNKS 4
/* all_gather and reduce_scatter halve their unit below a slice, down to
 * this fraction of it, to keep MIN_CHUNKS in flight (NCCL's enqueue.cc
 * halves CollNetDirect chunks down to 128, 64 and 32 KiB for depth; a
 * Simple slice is 1 MiB: pipeline policy, not a hardware figure). */
#define MIN_UNIT_DIV 8

/* all_gather and reduce_scatter's unit for a channel share of `share`
 * bytes: the slice, halved down to slice / MIN_UNIT_DIV while the share
 * would hold fewer than MIN_CHUNKS units. */
static uint64_t rail_unit(const FsCollRequest *req, uint64_t share)
{
  uint64_t unit = req->slice_bytes, least = MAX(req->slice_bytes / MIN_UNIT_DIV, 1);
  while (unit / 2 >= least && share / unit < MIN_CHUNKS)
    unit /= 2;
  return unit;
}

static const char *unsupported_comm(const FsComm *comm)
{
  if (fs_comm_collnet_switch(comm, 0) < 0)
    return "the communicator has no CollNet (SHARP) switch";
  if (fs_comm_n_hosts(comm) < 2)
    return "CollNet needs at least two hosts";
  if (!fs_comm_hosts_uniform(comm))
    return "CollNet needs the same number of ranks on every host";
  return NULL;
}

static const char *unsupported_direct(const FsComm *comm, FsCollOp op)
{
  if (op != FS_COLL_ALL_REDUCE && op != FS_COLL_ALL_GATHER && op != FS_COLL_REDUCE_SCATTER)
    return "CollNetDirect runs all_reduce, all_gather and reduce_scatter";
  return unsupported_comm(comm);
}

static const char *unsupported_chain(const FsComm *comm, FsCollOp op)
{
  if (op != FS_COLL_ALL_REDUCE)
    return "CollNetChain runs all_reduce only";
  return unsupported_comm(comm);
}

/* What crosses the tree's inner links (leaf → root, root → leaf) when
 * each host sends `bytes` up: the reduction of all_reduce keeps `bytes`
 * on every link; all_gather carries its group's hosts' slices up and every
 * host's down; reduce_scatter (each host sending nh slices of `bytes`)
 * carries the group's reduced nh slices up and its hosts' own slices down. */
typedef enum { TRIP_REDUCE, TRIP_GATHER, TRIP_SCATTER } TripKind;

/* A builder's state for the trips through the aggregation tree, made once
 * per plan: the group of leaf switches' host counts and the scratch of
 * tree_trip, whose results (back_dep, from) trip_back reads. */
typedef struct {
  guint nh, G;
  gboolean tree;     /* several groups: leaves under a root */
  guint *hosts;      /* G: hosts per group */
  uint32_t *grp_up;  /* G: each leaf's send to the root */
  uint64_t *down;    /* G: what the root returns to each leaf */
  uint32_t *deps;    /* nh */
  uint32_t *back_dep; /* nh: the step host h's return waits for (tree) */
  FsCollEp *from;    /* nh: the switch that returns to host h */
} Trip;

static void trip_init(Trip *t, const FsComm *comm)
{
  t->nh = fs_comm_n_hosts(comm);
  t->G = fs_comm_collnet_n_groups(comm);
  t->tree = t->G > 1;
  t->hosts = g_new0(guint, MAX(t->G, 1));
  for (guint h = 0; t->tree && h < t->nh; h++)
    t->hosts[fs_comm_collnet_group(comm, h)]++;
  t->grp_up = g_new(uint32_t, MAX(t->G, 1));
  t->down = g_new(uint64_t, MAX(t->G, 1));
  t->deps = g_new(uint32_t, t->nh);
  t->back_dep = g_new(uint32_t, t->nh);
  t->from = g_new(FsCollEp, t->nh);
}

static void trip_clear(Trip *t)
{
  g_free(t->hosts);
  g_free(t->grp_up);
  g_free(t->down);
  g_free(t->deps);
  g_free(t->back_dep);
  g_free(t->from);
}

/* One shard's trip through the aggregation tree on channel ch: up[h] is
 * host h's send of the shard to its switch (already added, with its
 * endpoint given by up_switch); adds the tree's transfers and leaves in
 * t->back_dep[h] the step after which host h's switch may send the result
 * back, and in t->from[h] that switch's endpoint.  bytes is what each host
 * sends up (reduce_scatter: nh slices; kind sets what the inner links
 * carry). */
static void tree_trip(FsPlanBuilder *b, Trip *t, guint ch, guint shard, TripKind kind,
                      uint64_t bytes, const uint32_t *up)
{
  const FsComm *comm = fs_plan_comm(b);
  guint nh = t->nh, G = t->G;
  if (!t->tree) {
    /* The shard's switch returns the total to each host once all arrived:
     * the return waits for every host's part (trip_back: deps = up). */
    for (guint h = 0; h < nh; h++)
      t->from[h] = FS_EP_COLLNET(shard);
    return;
  }
  for (guint g = 0; g < G; g++) {
    uint64_t up_bytes = kind == TRIP_GATHER ? t->hosts[g] * bytes : bytes;
    t->down[g] = kind == TRIP_GATHER    ? nh * bytes
                 : kind == TRIP_SCATTER ? t->hosts[g] * (bytes / nh)
                                        : bytes;
    guint nd = 0;
    for (guint h = 0; h < nh; h++)
      if (fs_comm_collnet_group(comm, h) == g)
        t->deps[nd++] = up[h];
    t->grp_up[g] = fs_plan_xfer(b, ch, FS_EP_COLLNET(fs_comm_collnet_leaf(comm, g, shard)),
                                FS_EP_COLLNET(shard), up_bytes, t->deps, nd);
  }
  for (guint g = 0; g < G; g++) {
    uint32_t down = fs_plan_xfer(b, ch, FS_EP_COLLNET(shard),
                                 FS_EP_COLLNET(fs_comm_collnet_leaf(comm, g, shard)), t->down[g],
                                 t->grp_up, G);
    for (guint h = 0; h < nh; h++)
      if (fs_comm_collnet_group(comm, h) == g) {
        t->back_dep[h] = down;
        t->from[h] = FS_EP_COLLNET(fs_comm_collnet_leaf(comm, g, shard));
      }
  }
}

/* After tree_trip: host h's switch returns bytes to rank, once the tree's
 * return reached it (several groups) or once every host's up[] arrived
 * (one switch).  Returns the transfer. */
static uint32_t trip_back(FsPlanBuilder *b, const Trip *t, guint ch, guint h, guint rank,
                          uint64_t bytes, const uint32_t *up)
{
  return t->tree ? fs_plan_xfer(b, ch, t->from[h], FS_EP_RANK(rank), bytes, &t->back_dep[h], 1)
                 : fs_plan_xfer(b, ch, t->from[h], FS_EP_RANK(rank), bytes, up, t->nh);
}

/* A channel share of `bytes` in units of `unit`: how many (at least 1),
 * and the size of unit k (the last may be short). */
static guint64 n_units(uint64_t bytes, uint64_t unit)
{
  return bytes == 0 ? 1 : (bytes + unit - 1) / unit;
}

static uint64_t unit_at(uint64_t bytes, uint64_t unit, guint64 k)
{
  return MIN(unit, bytes - MIN(bytes, k * unit));
}

/* The endpoint host index h sends shard j to. */
static FsCollEp up_switch(const FsComm *comm, guint h, guint j)
{
  if (fs_comm_collnet_n_groups(comm) <= 1)
    return FS_EP_COLLNET(j);
  return FS_EP_COLLNET(fs_comm_collnet_leaf(comm, fs_comm_collnet_group(comm, h), j));
}

/* Adds collnet_direct's steps to the plan (the model in the file comment): per channel, chunks
 * of L slices (halved while the channel would have fewer than MIN_CHUNKS), and per chunk the
 * intra-host scatter to the shard owners, each shard's trip through the aggregation tree
 * (tree_trip) and the gather back on lane 1. Adds about 2·nh·L² transfers per chunk; allocates
 * only its scratch arrays. */
static void build_direct(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint nh = fs_comm_n_hosts(comm), L;
  fs_comm_host_ranks(comm, 0, &L);
  Trip t;
  trip_init(&t, comm);
  g_autofree uint32_t *in = g_new(uint32_t, L);
  g_autofree uint32_t *toswitch = g_new(uint32_t, (gsize)nh * L);
  g_autofree uint32_t *up = g_new(uint32_t, nh);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    /* Units of L slices, so that each rank's shard is a whole slice (a
     * network transfer long enough to hide its path latency), halved down
     * to one slice while the channel would have fewer than MIN_CHUNKS of
     * them (a pipeline needs a few chunks to overlap the scatter of one
     * with the network trip and the gather of others). */
    uint64_t unit = req->slice_bytes * L;
    while (unit > req->slice_bytes && bytes / unit < MIN_CHUNKS)
      unit /= 2;
    guint64 nchunks = n_units(bytes, unit);
    for (guint64 k = 0; k < nchunks; k++) {
      uint64_t c = unit_at(bytes, unit, k);
      for (guint h = 0; h < nh; h++) {
        guint m;
        const guint *ranks = fs_comm_host_ranks(comm, h, &m);
        for (guint j = 0; j < L; j++) {
          uint64_t shard = fs_plan_split(b, c, L, j);
          guint nin = 0;
          for (guint i = 1; i < L; i++)
            in[nin++] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[(j + i) % L]), FS_EP_RANK(ranks[j]),
                                     shard, NULL, 0);
          toswitch[h * L + j] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[j]), up_switch(comm, h, j),
                                             shard, in, nin);
        }
      }
      for (guint j = 0; j < L; j++) {
        uint64_t shard = fs_plan_split(b, c, L, j);
        for (guint h = 0; h < nh; h++)
          up[h] = toswitch[h * L + j];
        tree_trip(b, &t, ch, j, TRIP_REDUCE, shard, up);
        for (guint h = 0; h < nh; h++) {
          guint m;
          const guint *ranks = fs_comm_host_ranks(comm, h, &m);
          uint32_t back = trip_back(b, &t, ch, h, ranks[j], shard, up);
          for (guint i = 1; i < L; i++)
            fs_plan_xfer_lane(b, ch, 1, FS_EP_RANK(ranks[j]), FS_EP_RANK(ranks[(j + i) % L]), shard,
                              &back, 1);
        }
      }
    }
  }
  trip_clear(&t);
}

/* Adds collnet_direct's all_gather or reduce_scatter steps to the plan (the model in the file
 * comment): per channel and slice c of each rank's block, rail j's trip through the aggregation
 * tree for every j, all_gather forwarding the nh returned slices to the host's L-1 peers on lane
 * 1, reduce_scatter gathering nh slices from them first.  Adds about nh·L·(L+1) transfers per
 * slice; allocates only its scratch arrays. */
static void build_direct_rail(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  gboolean gather = req->op == FS_COLL_ALL_GATHER;
  guint nh = fs_comm_n_hosts(comm), L;
  fs_comm_host_ranks(comm, 0, &L);
  Trip t;
  trip_init(&t, comm);
  g_autofree uint32_t *in = g_new(uint32_t, L);
  g_autofree uint32_t *up = g_new(uint32_t, nh);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t share = fs_plan_split(b, req->bytes, req->nchannels, ch);
    uint64_t unit = rail_unit(req, share);
    guint64 nchunks = n_units(share, unit);
    for (guint64 k = 0; k < nchunks; k++) {
      uint64_t c = unit_at(share, unit, k), rail = nh * c;
      for (guint j = 0; j < L; j++) {
        for (guint h = 0; h < nh; h++) {
          guint m;
          const guint *ranks = fs_comm_host_ranks(comm, h, &m);
          guint nin = 0;
          if (!gather)
            for (guint i = 1; i < L; i++)
              in[nin++] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[(j + i) % L]), FS_EP_RANK(ranks[j]),
                                       rail, NULL, 0);
          up[h] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[j]), up_switch(comm, h, j),
                               gather ? c : rail, in, nin);
        }
        tree_trip(b, &t, ch, j, gather ? TRIP_GATHER : TRIP_SCATTER, gather ? c : rail, up);
        for (guint h = 0; h < nh; h++) {
          guint m;
          const guint *ranks = fs_comm_host_ranks(comm, h, &m);
          uint32_t back = trip_back(b, &t, ch, h, ranks[j], gather ? rail : c, up);
          if (gather)
            for (guint i = 1; i < L; i++)
              fs_plan_xfer_lane(b, ch, 1, FS_EP_RANK(ranks[j]), FS_EP_RANK(ranks[(j + i) % L]), rail,
                                &back, 1);
        }
      }
    }
  }
  trip_clear(&t);
}

static void build_direct_any(FsPlanBuilder *b)
{
  if (fs_plan_req(b)->op == FS_COLL_ALL_REDUCE)
    build_direct(b);
  else
    build_direct_rail(b);
}

/* Adds collnet_chain's steps to the plan: per channel and slice-sized chunk, a chain inside
 * every host down to the channel's head rank (local rank ch mod L), the head's trip through the
 * aggregation tree, and the chain broadcast back on lane 1. Adds about 2·nh·L transfers per
 * chunk. */
static void build_chain(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint nh = fs_comm_n_hosts(comm), L;
  fs_comm_host_ranks(comm, 0, &L);
  Trip t;
  trip_init(&t, comm);
  g_autofree uint32_t *toswitch = g_new(uint32_t, nh);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    guint64 nchunks = fs_algo_n_chunks(b, bytes);
    /* Channel ch's chain ends at local rank ch mod L (NCCL spreads the
     * channels' heads over the GPUs, so over every NIC). */
    guint head = ch % L;
    for (guint64 k = 0; k < nchunks; k++) {
      uint64_t c = fs_algo_chunk(b, bytes, k);
      for (guint h = 0; h < nh; h++) {
        guint m;
        const guint *ranks = fs_comm_host_ranks(comm, h, &m);
        uint32_t prev = FS_STEP_NONE;
        for (guint j = L - 1; j >= 1; j--)
          prev = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[(head + j) % L]),
                              FS_EP_RANK(ranks[(head + j - 1) % L]), c, &prev, 1);
        toswitch[h] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[head]), up_switch(comm, h, head), c, &prev, 1);
      }
      tree_trip(b, &t, ch, head, TRIP_REDUCE, c, toswitch);
      for (guint h = 0; h < nh; h++) {
        guint m;
        const guint *ranks = fs_comm_host_ranks(comm, h, &m);
        uint32_t prev = trip_back(b, &t, ch, h, ranks[head], c, toswitch);
        for (guint j = 0; j + 1 < L; j++)
          prev = fs_plan_xfer_lane(b, ch, 1, FS_EP_RANK(ranks[(head + j) % L]),
                                   FS_EP_RANK(ranks[(head + j + 1) % L]), c, &prev, 1);
      }
    }
  }
  trip_clear(&t);
}

/* collnet_direct's loop: one chunk of L slices per channel, when the smallest channel share
 * holds at least MIN_CHUNKS of them (else build_direct shrinks the unit with the bytes, and a
 * truncated plan would not be the same plan cut short: no loops). */
static uint64_t direct_loop_bytes(const FsComm *comm, const FsCollRequest *req)
{
  guint L;
  fs_comm_host_ranks(comm, 0, &L);
  /* all_reduce: a chunk of L slices; all_gather, reduce_scatter: a slice. */
  uint64_t unit = req->op == FS_COLL_ALL_REDUCE ? req->slice_bytes * L : req->slice_bytes;
  uint64_t share = fs_coll_channel_bytes(req->bytes, req->dtype, req->nchannels, 0);
  for (guint c = 1; c < req->nchannels; c++)
    share = MIN(share, fs_coll_channel_bytes(req->bytes, req->dtype, req->nchannels, c));
  if (unit == 0 || share / unit < MIN_CHUNKS)
    return 0;
  return fs_algo_loop_bytes(req, unit);
}

const FsCollAlgo fs_coll_algo_collnet_direct = {
  .name = "collnet_direct",
  .nccl = FS_NCCL_ALGO_COLLNET_DIRECT,
  .summary = "SHARP: intra-host direct reduce-scatter, switch reduction per shard, all-gather; "
             "all_gather and reduce_scatter per rail",
  .unsupported = unsupported_direct,
  .build = build_direct_any,
  .loop_bytes = direct_loop_bytes, /* one loop: a chunk of L slices (all_reduce), or a slice */
};

const FsCollAlgo fs_coll_algo_collnet_chain = {
  .name = "collnet_chain",
  .nccl = FS_NCCL_ALGO_COLLNET_CHAIN,
  .summary = "SHARP: intra-host chain to the channel's head rank, switch reduction, chain back",
  .unsupported = unsupported_chain,
  .build = build_chain,
  .loop_bytes = fs_algo_slice_loop_bytes, /* one loop: one slice */
};
