/* plan.c — the plan DAG as its users read it (steps, dependencies,
 * credits, totals, depth), the algorithm table and the binary-tree shape.
 * Building a plan is plan-build.c, folding while building plan-mirror.c,
 * folding a whole plan plan-fold.c (shared state: plan-private.h).  See
 * plan.h. */
#include "coll/plan-private.h"

#include "coll/algos.h"

static const char *const nccl_algo_names[FS_NCCL_ALGO_N] = {
#define X(id, name) name,
  FS_NCCL_ALGOS(X)
#undef X
};

const char *fs_nccl_algo_name(FsNcclAlgo a)
{
  if (a < 0 || a >= FS_NCCL_ALGO_N)
    return "none";
  return nccl_algo_names[a];
}

const FsCollAlgo *const fs_coll_algos[] = {
  &fs_coll_algo_ring,
  &fs_coll_algo_tree,
  &fs_coll_algo_collnet_direct,
  &fs_coll_algo_collnet_chain,
  &fs_coll_algo_nvls,
  &fs_coll_algo_nvls_tree,
  &fs_coll_algo_pat,
  &fs_coll_algo_rhd,
  &fs_coll_algo_direct,
  &fs_coll_algo_hier,
  NULL,
};

const FsCollAlgo *fs_coll_algo_find(const char *name)
{
  for (guint i = 0; fs_coll_algos[i]; i++)
    if (g_ascii_strcasecmp(fs_coll_algos[i]->name, name) == 0)
      return fs_coll_algos[i];
  return NULL;
}

const FsCollAlgo *fs_coll_algo_for_nccl(FsNcclAlgo a)
{
  for (guint i = 0; fs_coll_algos[i]; i++)
    if (fs_coll_algos[i]->nccl == a)
      return fs_coll_algos[i];
  return NULL;
}

void fs_coll_plan_free(FsCollPlan *p)
{
  if (p == NULL)
    return;
  g_array_unref(p->steps);
  g_array_unref(p->deps);
  g_free(p);
}

const FsCollRequest *fs_coll_plan_request(const FsCollPlan *p)
{
  return &p->req;
}

const FsCollAlgo *fs_coll_plan_algo(const FsCollPlan *p)
{
  return p->algo;
}

const FsComm *fs_coll_plan_comm(const FsCollPlan *p)
{
  return p->comm;
}

guint fs_coll_plan_n_steps(const FsCollPlan *p)
{
  return p->steps->len;
}

const FsCollStep *fs_coll_plan_step(const FsCollPlan *p, guint i)
{
  g_return_val_if_fail(i < p->steps->len, NULL);
  return &g_array_index(p->steps, FsCollStep, i);
}

const uint32_t *fs_coll_plan_deps(const FsCollPlan *p, guint i, guint *n)
{
  const FsCollStep *s = fs_coll_plan_step(p, i);
  *n = s->n_deps;
  return s->n_deps ? &g_array_index(p->deps, uint32_t, s->dep_off) : NULL;
}

const uint32_t *fs_coll_plan_credits(const FsCollPlan *p, guint i, guint *n)
{
  const FsCollStep *s = fs_coll_plan_step(p, i);
  *n = s->n_credits;
  return s->n_credits ? &g_array_index(p->deps, uint32_t, s->dep_off + s->n_deps) : NULL;
}

const uint32_t *fs_coll_plan_dep_array(const FsCollPlan *p)
{
  return p->deps->len ? (const uint32_t *)(void *)p->deps->data : NULL;
}

guint fs_coll_plan_width(const FsCollPlan *p)
{
  return p->width;
}

gboolean fs_coll_plan_folded_while_built(const FsCollPlan *p)
{
  return p->folded_while_built;
}

guint fs_coll_plan_n_conns(const FsCollPlan *p)
{
  return p->n_conns;
}

guint fs_coll_plan_max_conn_xfers(const FsCollPlan *p)
{
  return p->max_conn;
}

guint fs_coll_plan_n_xfers(const FsCollPlan *p)
{
  return p->n_xfers;
}

uint64_t fs_coll_plan_xfer_bytes(const FsCollPlan *p)
{
  return p->xfer_bytes;
}

guint fs_coll_plan_depth(const FsCollPlan *p)
{
  /* Dependencies always point to earlier steps, so one forward pass
   * computes the longest chain. */
  guint n = p->steps->len, best = 0;
  g_autofree guint *depth = g_new0(guint, n ? n : 1);
  for (guint i = 0; i < n; i++) {
    guint nd, d = 0;
    const uint32_t *deps = fs_coll_plan_deps_at(p, i, &nd);
    for (guint j = 0; j < nd; j++)
      d = MAX(d, depth[deps[j]]);
    depth[i] = d + 1;
    best = MAX(best, depth[i]);
  }
  return best;
}

guint fs_coll_plan_latency_depth(const FsCollPlan *cp)
{
  /* Computed once: the plan does not change after it is built. */
  FsCollPlan *p = (FsCollPlan *)cp;
  if (p->lat_depth > 0)
    return p->lat_depth - 1;
  guint n = p->steps->len, best = 0;
  g_autofree guint *depth = g_new0(guint, n ? n : 1);
  for (guint i = 0; i < n; i++) {
    const FsCollStep *s = fs_coll_plan_step_at(p, i);
    guint nd, d = 0;
    const uint32_t *deps = fs_coll_plan_deps_at(p, i, &nd);
    for (guint j = 0; j < nd; j++) {
      const FsCollStep *a = fs_coll_plan_step_at(p, deps[j]);
      guint w = a->kind == FS_STEP_XFER && !fs_coll_step_same_conn(a, s) ? 1 : 0;
      d = MAX(d, depth[deps[j]] + w);
    }
    depth[i] = d;
    /* The final delivery of a transfer counts once more. */
    best = MAX(best, d + (s->kind == FS_STEP_XFER ? 1 : 0));
  }
  p->lat_depth = best + 1;
  return best;
}

char *fs_coll_plan_describe(const FsCollPlan *p)
{
  return g_strdup_printf("%s %s %u ranks %u ch %s: %u steps (%u transfers), depth %u",
                         p->algo->name, fs_coll_op_name(p->req.op), fs_comm_size(p->comm),
                         p->req.nchannels, fs_coll_proto_name(p->req.proto), p->steps->len,
                         p->n_xfers, fs_coll_plan_depth(p));
}

/* The btree of n nodes rooted at 0: a node's lowest set bit `bit` gives its
 * level; its parent clears that bit and sets the next one (or only clears
 * it when that leaves the range); its children are node ± bit/2, the
 * upper one pulled in while it falls outside the range. */
static void btree(guint n, guint node, int *parent, int *c0, int *c1)
{
  *parent = *c0 = *c1 = -1;
  if (n <= 1)
    return;
  guint bit = 1;
  while (bit < n && !(bit & node))
    bit <<= 1;
  if (node == 0) {
    /* The root has one child: the highest power of two below n. */
    *c1 = (int)(bit >> 1);
    return;
  }
  guint up = (node ^ bit) | (bit << 1);
  if (up >= n)
    up = node ^ bit;
  *parent = (int)up;
  guint low = bit >> 1;
  if (low == 0)
    return;
  *c0 = (int)(node - low);
  guint down = node + low;
  while (low > 0 && down >= n) {
    low >>= 1;
    down = node + low;
  }
  *c1 = low > 0 ? (int)down : -1;
}

void fs_coll_btree(guint n, guint tree, guint node, int *parent, int *child0, int *child1)
{
  g_return_if_fail(node < n);
  if (tree == 0 || n <= 1) {
    btree(n, node, parent, child0, child1);
    return;
  }
  int p, a, c;
  if (n % 2 == 1) {
    /* Shift by one: node k plays the role of k-1 in the first tree. */
    btree(n, (node + n - 1) % n, &p, &a, &c);
#define MAP(x) ((x) < 0 ? -1 : (int)(((guint)(x) + 1) % n))
    *parent = MAP(p), *child0 = MAP(a), *child1 = MAP(c);
#undef MAP
  } else {
    /* Mirror: node k plays n-1-k. */
    btree(n, n - 1 - node, &p, &a, &c);
#define MAP(x) ((x) < 0 ? -1 : (int)(n - 1 - (guint)(x)))
    *parent = MAP(p), *child0 = MAP(a), *child1 = MAP(c);
#undef MAP
  }
}
