/* algo-tree.c — NCCL's double binary tree for all_reduce.  Hosts form a
 * binary tree (NCCL's btree over host indices in ring order); within a
 * host the ranks form a chain hanging from the host's first rank.  Even
 * channels use tree 0 and odd channels the complementary tree 1, so with
 * two or more channels every host is a leaf in one tree and inner in the
 * other (the "double" tree).  Each chunk is reduced up to the root and
 * broadcast down; up and down pipelines overlap across chunks.  Every
 * transfer is a step head (fs_plan_xfer_ring): across hosts a connection
 * idles the executor's ring_step_latency_inter between its chunks, the
 * proxy's posts (coll/tuner.h fs_coll_tree_proxy_posts_us). */
#include "coll/algos.h"

static const char *unsupported(const FsComm *comm, FsCollOp op)
{
  (void)comm;
  return op == FS_COLL_ALL_REDUCE ? NULL : "NCCL's tree runs all_reduce only";
}

typedef struct {
  int *parent;     /* per rank, -1 for the root */
  guint *bfs;      /* ranks, root first, parents before children */
  guint *kids;     /* children of each rank, flattened */
  guint *kid_off;  /* n + 1 offsets into kids */
  guint root;
} Tree;

/* Builds the tree used by channel ch (tree index t). */
static void tree_build(const FsComm *comm, guint ch, guint t, Tree *tr)
{
  guint n = fs_comm_size(comm);
  const guint *order = fs_comm_ring(comm, ch);
  guint nh = fs_comm_n_hosts(comm);
  /* Hosts in order of first appearance along the ring; each host's ranks
   * in ring order (a chain). */
  g_autofree int *host_pos = g_new(int, nh);
  g_autofree guint *host_of_pos = g_new(guint, nh);
  g_autofree guint *head = g_new(guint, nh);
  g_autofree int *last = g_new(int, nh);
  for (guint h = 0; h < nh; h++)
    host_pos[h] = -1, last[h] = -1;
  guint npos = 0;
  tr->parent = g_new(int, n);
  for (guint i = 0; i < n; i++) {
    guint r = order[i], h = fs_comm_host_index(comm, r);
    if (host_pos[h] < 0) {
      host_pos[h] = (int)npos;
      host_of_pos[npos++] = h;
      head[h] = r;
      tr->parent[r] = -2; /* set below from the host tree */
    } else {
      tr->parent[r] = last[h];
    }
    last[h] = (int)r;
  }
  for (guint h = 0; h < nh; h++) {
    int hp, c0, c1;
    fs_coll_btree(nh, t, (guint)host_pos[h], &hp, &c0, &c1);
    tr->parent[head[h]] = hp < 0 ? -1 : (int)head[host_of_pos[hp]];
    if (hp < 0)
      tr->root = head[h];
  }
  /* Children lists, in rank order (deterministic). */
  tr->kid_off = g_new0(guint, n + 1);
  for (guint r = 0; r < n; r++)
    if (tr->parent[r] >= 0)
      tr->kid_off[tr->parent[r] + 1]++;
  for (guint r = 0; r < n; r++)
    tr->kid_off[r + 1] += tr->kid_off[r];
  tr->kids = g_new(guint, n);
  g_autofree guint *fill = g_new0(guint, n);
  for (guint r = 0; r < n; r++)
    if (tr->parent[r] >= 0) {
      guint p = (guint)tr->parent[r];
      tr->kids[tr->kid_off[p] + fill[p]++] = r;
    }
  /* Breadth-first order from the root. */
  tr->bfs = g_new(guint, n);
  guint head_i = 0, tail = 0;
  tr->bfs[tail++] = tr->root;
  while (head_i < tail) {
    guint r = tr->bfs[head_i++];
    for (guint k = tr->kid_off[r]; k < tr->kid_off[r + 1]; k++)
      tr->bfs[tail++] = tr->kids[k];
  }
  g_assert(tail == n);
}

static void tree_free(Tree *tr)
{
  g_free(tr->parent);
  g_free(tr->bfs);
  g_free(tr->kids);
  g_free(tr->kid_off);
}

/* The check of a rotated channel's claim (fs_plan_channel_rotated): channel
 * ch's tree is channel rep's with every rank rotated by shift, edge for
 * edge, and its share of the bytes rep's; a g_error if not (the claim of
 * FsCollRequest.rotation was wrong). */
static void check_rotated(const FsPlanBuilder *b, guint ch)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint period = req->rotation * req->rotation_order, n = fs_comm_size(comm);
  guint rep = ch - ch % period + ch % req->rotation, shift = ch % period - ch % req->rotation;
  Tree a = {0}, t = {0};
  tree_build(comm, rep, rep % 2, &a);
  tree_build(comm, ch, ch % 2, &t);
  for (guint r = 0; r < n; r++) {
    int p = a.parent[r], want = p < 0 ? -1 : (int)fs_comm_rotate_rank(comm, (guint)p, shift);
    if (t.parent[fs_comm_rotate_rank(comm, r, shift)] != want)
      g_error("plan rotation: tree channel %u is not channel %u rotated by %u (rank %u)", ch, rep,
              shift, r);
  }
  if (fs_plan_split(b, req->bytes, req->nchannels, ch) !=
      fs_plan_split(b, req->bytes, req->nchannels, rep))
    g_error("plan rotation: tree channel %u's share differs from channel %u's", ch, rep);
  tree_free(&a);
  tree_free(&t);
}

/* Makes every channel's chunks, up the tree and down again (the header
 * above); a channel rotated from a made one (fs_plan_channel_rotated) is
 * skipped, or only checked. */
static void build(FsPlanBuilder *b)
{
  const FsComm *comm = fs_plan_comm(b);
  const FsCollRequest *req = fs_plan_req(b);
  guint n = fs_comm_size(comm);
  g_autofree uint32_t *up = g_new(uint32_t, n);
  g_autofree uint32_t *down = g_new(uint32_t, n);
  g_autofree uint32_t *deps = g_new(uint32_t, n);
  for (guint ch = 0; ch < req->nchannels; ch++) {
    /* Channel c + k·s is channel c rotated (the rings are, and the tree
     * index c mod 2 is kept when s is even): collrun/rotation.h. */
    if (fs_plan_channel_rotated(b, ch)) {
      if (fs_plan_check_mirrors())
        check_rotated(b, ch);
      continue;
    }
    Tree tr = {0};
    tree_build(comm, ch, req->nchannels >= 2 ? ch % 2 : 0, &tr);
    uint64_t bytes = fs_plan_split(b, req->bytes, req->nchannels, ch);
    guint64 nchunks = fs_algo_n_chunks(b, bytes);
    for (guint64 k = 0; k < nchunks; k++) {
      uint64_t c = fs_algo_chunk(b, bytes, k);
      /* Reduce up: children before parents (reverse BFS). */
      for (guint i = n; i-- > 1;) {
        guint r = tr.bfs[i], nd = 0;
        for (guint j = tr.kid_off[r]; j < tr.kid_off[r + 1]; j++)
          deps[nd++] = up[tr.kids[j]];
        up[r] = fs_plan_xfer_ring(b, ch, FS_EP_RANK(r), FS_EP_RANK((guint)tr.parent[r]), c, deps, nd);
      }
      /* Broadcast down: the root once all its children arrived. */
      for (guint i = 0; i < n; i++) {
        guint r = tr.bfs[i], nd = 0;
        if (r == tr.root) {
          for (guint j = tr.kid_off[r]; j < tr.kid_off[r + 1]; j++)
            deps[nd++] = up[tr.kids[j]];
        } else {
          deps[nd++] = down[r];
        }
        for (guint j = tr.kid_off[r]; j < tr.kid_off[r + 1]; j++)
          down[tr.kids[j]] = fs_plan_xfer_ring(b, ch, FS_EP_RANK(r), FS_EP_RANK(tr.kids[j]), c, deps, nd);
      }
    }
    tree_free(&tr);
  }
}

/* Channel c's tree is ring c's with tree index c mod 2: it rotates with
 * its ring by even shifts. */
static guint rotates(FsCollOp op)
{
  (void)op;
  return 2;
}

const FsCollAlgo fs_coll_algo_tree = {
  .name = "tree",
  .nccl = FS_NCCL_ALGO_TREE,
  .summary = "double binary tree over hosts, chains within a host; all_reduce only",
  .unsupported = unsupported,
  .build = build,
  .loop_bytes = fs_algo_slice_loop_bytes, /* one loop: one slice */
  .rotates = rotates,
};
