/* algo-nvls.c — in-switch reduction over NVLink (NVLS, NVSwitch gen3+
 * multimem).  Modelled as transfers to and from the host's NVLS switch
 * endpoint, so data crosses each GPU's NVLinks about once each way:
 *   all_reduce, per chunk c on a host of L ranks:
 *     every rank sends c up (the switch's multimem load-reduce reads it),
 *     the switch returns reduced shard c/L to each rank,
 *     each rank stores its shard back up (c/L), and the switch multicasts
 *     the whole reduced chunk c down to every rank;
 *   reduce_scatter: every rank sends its L blocks up; each gets its reduced block;
 *   all_gather: every rank sends its block up once; each gets all L.
 * nvls across hosts (NVLS + SHARP: NCCL runs it only with CollNet enabled,
 * tuning.cc "Collnet+NVLS"; all_reduce.h/all_gather.h/reduce_scatter.h
 * RunWorkColl NVLS, the !oneNode branch): each rank j is the head of
 * shard j;
 *   all_reduce: the NVLS load-reduce gives rank j its host's shard j,
 *     which it sends to shard j's network switch (algo-sharp.c); the switch
 *     returns the shard reduced over all hosts, and rank j stores it for
 *     the NVLS multicast to its host (nvls_down);
 *   all_gather, per slice c of each block: rank j sends its block to rail
 *     j's switch, which returns every host's rank-j block (nh·c); rank j
 *     stores them once into the NVLS switch, which multicasts them to the
 *     host's L ranks;
 *   reduce_scatter, the reverse: the host's ranks' rail-j blocks (nh·c
 *     each) go up the NVLS load-reduce, whose sum reaches rank j, which
 *     sends it to the network switch; rank j gets its own block (c) back
 *     reduced over every host.
 * nvls_tree (several hosts, all_reduce): the intra-host NVLS reduce-scatter,
 * then for every shard an inter-host binary tree (NCCL's btree over hosts;
 * odd channels use the complementary tree) among the ranks holding that
 * shard, then the NVLS multicast within each host.  The load-reduce and
 * the store-multicast halves use separate FIFO lanes (NCCL runs them from
 * different warps), so chunk k+1 goes up while chunk k comes down. */
#include "coll/algos.h"

static const char *check_nvls(const FsComm *comm)
{
  if (!fs_comm_has_nvls(comm))
    return "the communicator has no NVLS (in-switch reduction) switch on every host";
  if (!fs_comm_nvls_available(comm))
    return "NCCL offers NVLS only with more than 2 GPUs of the communicator per NVLink domain "
           "(src/transport/nvls.cc ncclNvlsInit)";
  return NULL;
}

static const char *unsupported(const FsComm *comm, FsCollOp op)
{
  if (op != FS_COLL_ALL_REDUCE && op != FS_COLL_REDUCE_SCATTER && op != FS_COLL_ALL_GATHER)
    return "NVLS runs all_reduce, reduce_scatter and all_gather";
  if (fs_comm_n_hosts(comm) > 1) {
    if (fs_comm_collnet_switch(comm, 0) < 0)
      return "NVLS across hosts needs CollNet (SHARP) switches in the fabric (NCCL's NVLS+SHARP); "
             "use nvls_tree";
    if (!fs_comm_hosts_uniform(comm))
      return "NVLS across hosts needs the same number of ranks on every host";
  }
  return check_nvls(comm);
}

static const char *unsupported_tree(const FsComm *comm, FsCollOp op)
{
  if (op != FS_COLL_ALL_REDUCE)
    return "NVLS tree runs all_reduce only";
  if (!fs_comm_hosts_uniform(comm))
    return "NVLS tree needs the same number of ranks on every host";
  return check_nvls(comm);
}

/* Intra-host part for one chunk of all_reduce, up: every rank sends c to
 * the NVLS switch, which returns shard j to rank j (mid[j]).  Only the
 * first `made` ranks of the host are made (the NVLS tree's mirrored
 * rails, FsCollRequest.mirror_rails; L otherwise): their transfers then
 * wait for theirs alone, which the others' mirror. */
static void nvls_up(FsPlanBuilder *b, guint ch, guint h, uint64_t c, uint32_t *mid, guint made)
{
  const FsComm *comm = fs_plan_comm(b);
  guint L;
  const guint *ranks = fs_comm_host_ranks(comm, h, &L);
  uint32_t buf[16];
  g_autofree uint32_t *heap = L > G_N_ELEMENTS(buf) ? g_new(uint32_t, L) : NULL;
  uint32_t *up = heap ? heap : buf;
  made = MIN(made, L);
  for (guint j = 0; j < made; j++)
    up[j] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[j]), FS_EP_NVLS(h), c, NULL, 0);
  for (guint j = 0; j < made; j++)
    mid[j] = fs_plan_xfer(b, ch, FS_EP_NVLS(h), FS_EP_RANK(ranks[j]), fs_plan_split(b, c, L, j), up,
                          made);
}

/* Down: rank j stores its reduced shard (after mid[j]) and the switch
 * multicasts the whole chunk to every rank; the first `made` ranks only
 * (nvls_up). */
static void nvls_down(FsPlanBuilder *b, guint ch, guint h, uint64_t c, const uint32_t *mid,
                      guint made)
{
  const FsComm *comm = fs_plan_comm(b);
  guint L;
  const guint *ranks = fs_comm_host_ranks(comm, h, &L);
  uint32_t buf[16];
  g_autofree uint32_t *heap = L > G_N_ELEMENTS(buf) ? g_new(uint32_t, L) : NULL;
  uint32_t *st = heap ? heap : buf;
  made = MIN(made, L);
  for (guint j = 0; j < made; j++)
    st[j] = fs_plan_xfer_lane(b, ch, 1, FS_EP_RANK(ranks[j]), FS_EP_NVLS(h), fs_plan_split(b, c, L, j),
                              &mid[j], 1);
  for (guint j = 0; j < made; j++)
    fs_plan_xfer_lane(b, ch, 1, FS_EP_NVLS(h), FS_EP_RANK(ranks[j]), c, st, made);
}

/* One host's all_gather forward of rail j's returned blocks: rank stores
 * `bytes` once into the NVLS switch (lane 1, after `back`), which
 * multicasts them to the host's L ranks. */
static void nvls_multicast(FsPlanBuilder *b, guint ch, guint h, guint rank, uint64_t bytes, uint32_t back)
{
  const FsComm *comm = fs_plan_comm(b);
  guint L;
  const guint *ranks = fs_comm_host_ranks(comm, h, &L);
  uint32_t st = fs_plan_xfer_lane(b, ch, 1, FS_EP_RANK(rank), FS_EP_NVLS(h), bytes, &back, 1);
  for (guint i = 0; i < L; i++)
    fs_plan_xfer_lane(b, ch, 1, FS_EP_NVLS(h), FS_EP_RANK(ranks[i]), bytes, &st, 1);
}

/* One host's reduce_scatter load-reduce of rail j: every rank's nh·c rail
 * blocks go up, their sum comes to rank (the rail's head).  Returns the
 * arrival. */
static uint32_t nvls_rail_reduce(FsPlanBuilder *b, guint ch, guint h, guint rank, uint64_t bytes,
                                 uint32_t *up)
{
  const FsComm *comm = fs_plan_comm(b);
  guint L;
  const guint *ranks = fs_comm_host_ranks(comm, h, &L);
  for (guint i = 0; i < L; i++)
    up[i] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[i]), FS_EP_NVLS(h), bytes, NULL, 0);
  return fs_plan_xfer(b, ch, FS_EP_NVLS(h), FS_EP_RANK(rank), bytes, up, L);
}

/* Adds NVLS+SHARP's steps across hosts (the file comment): per channel and slice, all_reduce's
 * NVLS load-reduce in every host, each shard's trip through the network's aggregation tree
 * (algo-sharp.c) and the multicast back; all_gather and reduce_scatter per rail j, the network
 * trip of rank j's blocks with the NVLS multicast after it or the NVLS load-reduce before it.
 * Adds about nh·L·(L+3) transfers per slice; allocates only its scratch arrays. */
static void build_net(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  FsSharpTrip t;
  guint L, nh = fs_sharp_build_start(b, &t, &L);
  g_autofree uint32_t *mid = g_new(uint32_t, (gsize)nh * L);
  g_autofree uint32_t *up = g_new(uint32_t, nh);
  g_autofree uint32_t *scratch = g_new(uint32_t, L);
  gboolean ar = req->op == FS_COLL_ALL_REDUCE, gather = req->op == FS_COLL_ALL_GATHER;
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    /* all_reduce by slices; all_gather and reduce_scatter by rail units
     * (fs_sharp_rail_unit: slices, halved to keep a pipeline). */
    uint64_t unit = ar ? req->slice_bytes : fs_sharp_rail_unit(req, bytes);
    guint64 nchunks = fs_algo_n_units(b, bytes, unit);
    for (guint64 k = 0; k < nchunks; k++) {
      uint64_t c = fs_algo_unit(bytes, unit, k), rail = nh * c;
      if (ar)
        for (guint h = 0; h < nh; h++)
          nvls_up(b, ch, h, c, mid + (gsize)h * L, L);
      for (guint j = 0; j < L; j++) {
        uint64_t shard = ar ? fs_plan_split(b, c, L, j) : gather ? c : rail;
        for (guint h = 0; h < nh; h++) {
          guint m;
          const guint *ranks = fs_comm_host_ranks(comm, h, &m);
          uint32_t ready = ar ? mid[(gsize)h * L + j]
                           : gather ? FS_STEP_NONE : nvls_rail_reduce(b, ch, h, ranks[j], rail, scratch);
          up[h] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[j]), fs_sharp_up_switch(comm, h, j), shard, &ready, 1);
        }
        fs_sharp_trip_run(b, &t, ch, j, ar ? FS_SHARP_REDUCE : gather ? FS_SHARP_GATHER : FS_SHARP_SCATTER,
                          shard, up);
        for (guint h = 0; h < nh; h++) {
          guint m;
          const guint *ranks = fs_comm_host_ranks(comm, h, &m);
          uint32_t back = fs_sharp_trip_back(b, &t, ch, h, ranks[j], ar ? shard : gather ? rail : c, up);
          if (ar)
            mid[(gsize)h * L + j] = back;
          else if (gather)
            nvls_multicast(b, ch, h, ranks[j], rail, back);
        }
      }
      if (ar)
        for (guint h = 0; h < nh; h++)
          nvls_down(b, ch, h, c, mid + (gsize)h * L, L);
    }
  }
  fs_sharp_trip_clear(&t);
}

/* Adds NVLS's steps within one host (the file comment): per channel and slice, all_reduce's
 * load-reduce up and multicast down (nvls_up, nvls_down), or one exchange through the switch
 * for reduce_scatter and all_gather; across hosts, build_net. Adds about 4·L transfers per
 * slice. */
static void build(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  if (fs_comm_n_hosts(comm) > 1) {
    build_net(b);
    return;
  }
  const FsCollRequest *req = fs_plan_req(b);
  guint L;
  const guint *ranks = fs_comm_host_ranks(comm, 0, &L);
  g_autofree uint32_t *mid = g_new(uint32_t, L);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    guint64 nchunks = fs_algo_n_chunks(b, bytes);
    for (guint64 k = 0; k < nchunks; k++) {
      uint64_t c = fs_algo_chunk(b, bytes, k);
      if (req->op == FS_COLL_ALL_REDUCE) {
        nvls_up(b, ch, 0, c, mid, L);
        nvls_down(b, ch, 0, c, mid, L);
        continue;
      }
      /* reduce_scatter: L blocks up, one reduced block down;
       * all_gather: one block up, L blocks down. */
      gboolean rs = req->op == FS_COLL_REDUCE_SCATTER;
      for (guint j = 0; j < L; j++)
        mid[j] = fs_plan_xfer(b, ch, FS_EP_RANK(ranks[j]), FS_EP_NVLS(0), rs ? c * L : c, NULL, 0);
      for (guint j = 0; j < L; j++)
        fs_plan_xfer(b, ch, FS_EP_NVLS(0), FS_EP_RANK(ranks[j]), rs ? c : c * L, mid, L);
    }
  }
}

/* The binary tree over hosts of tree t (fs_coll_btree): parents, children
 * in host order, and the hosts in BFS order from the root. */
typedef struct {
  int *parent;
  guint *kid_off, *kids; /* CSR: children of h in kids[kid_off[h] .. kid_off[h+1]) */
  guint *order;
  guint root;
} HostTree;

static void host_tree(guint nh, guint t, HostTree *tr)
{
  tr->parent = g_new(int, nh);
  tr->kid_off = g_new0(guint, nh + 1);
  tr->kids = g_new(guint, nh);
  tr->order = g_new(guint, nh);
  tr->root = 0;
  for (guint h = 0; h < nh; h++) {
    int c0, c1;
    fs_coll_btree(nh, t, h, &tr->parent[h], &c0, &c1);
    if (tr->parent[h] < 0)
      tr->root = h;
    else
      tr->kid_off[tr->parent[h] + 1]++;
  }
  for (guint h = 0; h < nh; h++)
    tr->kid_off[h + 1] += tr->kid_off[h];
  g_autofree guint *fill = g_new0(guint, nh);
  for (guint h = 0; h < nh; h++)
    if (tr->parent[h] >= 0) {
      guint p = (guint)tr->parent[h];
      tr->kids[tr->kid_off[p] + fill[p]++] = h;
    }
  guint no = 0;
  tr->order[no++] = tr->root;
  for (guint i = 0; i < no; i++)
    for (guint k = tr->kid_off[tr->order[i]]; k < tr->kid_off[tr->order[i] + 1]; k++)
      tr->order[no++] = tr->kids[k];
  g_assert(no == nh);
}

static void host_tree_free(HostTree *tr)
{
  g_free(tr->parent);
  g_free(tr->kid_off);
  g_free(tr->kids);
  g_free(tr->order);
}

/* TRUE when every chunk of every channel of the plan splits into L equal
 * shards (fs_plan_split). */
static gboolean equal_shards(FsPlanBuilder *b, guint L)
{
  const FsCollRequest *req = fs_plan_req(b);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    guint64 nchunks = fs_algo_n_chunks(b, bytes);
    /* Chunks are alike but for the last: the first and the last decide. */
    for (guint64 k = 0; k < nchunks; k += MAX(nchunks - 1, 1)) {
      uint64_t c = fs_algo_chunk(b, bytes, k);
      for (guint j = 1; j < L; j++)
        if (fs_plan_split(b, c, L, j) != fs_plan_split(b, c, L, 0))
          return FALSE;
    }
  }
  return TRUE;
}

/* Adds nvls_tree's steps (all_reduce over several hosts, file comment): per chunk, the NVLS
 * load-reduce up in every host, then for every shard j a binary tree over the hosts among their
 * rank j (deeper hosts first up, the root reduces, then down; odd channels use the
 * complementary tree when there are two or more channels), then the NVLS multicast down in
 * every host. Builds the two host trees once per plan. */
static void build_tree(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint nh = fs_comm_n_hosts(comm), L;
  fs_comm_host_ranks(comm, 0, &L);
  /* mid[h*L + j]: when rank j of host h holds its reduced shard. */
  g_autofree uint32_t *mid = g_new(uint32_t, nh * L);
  g_autofree uint32_t *up = g_new(uint32_t, nh);
  g_autofree uint32_t *down = g_new(uint32_t, nh);
  /* who[j*nh + h]: rank j of host h. */
  g_autofree guint *who = g_new(guint, L * nh);
  for (guint h = 0; h < nh; h++) {
    guint m;
    const guint *ranks = fs_comm_host_ranks(comm, h, &m);
    for (guint j = 0; j < L; j++)
      who[j * nh + h] = ranks[j];
  }
  /* Mirrored rails (FsCollRequest.mirror_rails): local rank 0 alone, where
   * every chunk of every channel splits into L equal shards (so that rank
   * j's transfers carry rank 0's bytes). */
  guint made = req->mirror_rails && equal_shards(b, L) ? 1 : L;
  /* Even channels use tree 0, odd ones tree 1 (with two or more). */
  HostTree trees[2];
  host_tree(nh, 0, &trees[0]);
  host_tree(nh, 1, &trees[1]);
  uint32_t deps[3];
  for (guint ch = 0; ch < req->nchannels; ch++) {
    /* A channel's steps are those of the channels of its tree's parity
     * but for its NVLS switches: a mirror is not made (plan.h). */
    if (req->nchannels >= 2 && fs_plan_channel_mirrored(b, ch, 2))
      continue;
    const HostTree *tr = &trees[req->nchannels >= 2 ? ch % 2 : 0];
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    guint64 nchunks = fs_algo_n_chunks(b, bytes);
    for (guint64 k = 0; k < nchunks; k++) {
      uint64_t c = fs_algo_chunk(b, bytes, k);
      for (guint h = 0; h < nh; h++)
        nvls_up(b, ch, h, c, mid + h * L, made);
      for (guint j = 0; j < made; j++) {
        uint64_t shard = fs_plan_split(b, c, L, j);
        /* Rank j of every host: a binary tree over hosts, up then down. */
        const guint *w = who + j * nh;
        /* Up: deeper hosts first.  btree node ids are host indices; a
         * host's up send waits for its own shard and its children's. */
        for (guint i = nh; i-- > 1;) {
          guint h = tr->order[i], nd = 0;
          deps[nd++] = mid[h * L + j];
          for (guint x = tr->kid_off[h]; x < tr->kid_off[h + 1] && nd < 3; x++)
            deps[nd++] = up[tr->kids[x]];
          up[h] = fs_plan_xfer(b, ch, FS_EP_RANK(w[h]), FS_EP_RANK(w[tr->parent[h]]), shard, deps, nd);
        }
        for (guint i = 0; i < nh; i++) {
          guint h = tr->order[i], nd = 0;
          if (h == tr->root) {
            deps[nd++] = mid[h * L + j];
            for (guint x = tr->kid_off[h]; x < tr->kid_off[h + 1] && nd < 3; x++)
              deps[nd++] = up[tr->kids[x]];
            /* The root's shard is final once its children are in. */
            down[h] = fs_plan_reduce(b, w[h], shard, deps, nd);
          }
          for (guint x = tr->kid_off[h]; x < tr->kid_off[h + 1]; x++)
            down[tr->kids[x]] = fs_plan_xfer(b, ch, FS_EP_RANK(w[h]), FS_EP_RANK(w[tr->kids[x]]), shard,
                                             &down[h], 1);
        }
        for (guint h = 0; h < nh; h++)
          mid[h * L + j] = down[h];
      }
      for (guint h = 0; h < nh; h++)
        nvls_down(b, ch, h, c, mid + h * L, made);
    }
  }
  host_tree_free(&trees[0]);
  host_tree_free(&trees[1]);
}

/* NVLS's loop: a slice; across hosts, all_gather and reduce_scatter's rail unit
 * (fs_sharp_loop_bytes). */
static uint64_t nvls_loop_bytes(const FsComm *comm, const FsCollRequest *req)
{
  if (fs_comm_n_hosts(comm) > 1 && req->op != FS_COLL_ALL_REDUCE)
    return fs_sharp_loop_bytes(req, req->slice_bytes);
  return fs_algo_slice_loop_bytes(comm, req);
}

const FsCollAlgo fs_coll_algo_nvls = {
  .name = "nvls",
  .nccl = FS_NCCL_ALGO_NVLS,
  .summary = "in-switch reduction on NVSwitch (multimem): data crosses each NVLink once each way; "
             "across hosts with SHARP switches (NVLS+SHARP)",
  .unsupported = unsupported,
  .build = build,
  .loop_bytes = nvls_loop_bytes,
};

const FsCollAlgo fs_coll_algo_nvls_tree = {
  .name = "nvls_tree",
  .nccl = FS_NCCL_ALGO_NVLS_TREE,
  .summary = "NVLS within hosts, binary tree of shards across hosts; all_reduce",
  .unsupported = unsupported_tree,
  .build = build_tree,
  .loop_bytes = fs_algo_slice_loop_bytes, /* one loop: one slice */
};
