/* plan.c — the plan DAG, its builder (FIFO dependencies per connection),
 * the algorithm table and the binary-tree shape.  See plan.h. */
#include "coll/plan.h"

#include <string.h>

#include "coll/algos.h"
#include "core/rng.h"
#include "util/error.h"
#include "util/limits.h"

struct FsCollPlan {
  FsCollRequest req;
  const FsCollAlgo *algo;
  const FsComm *comm;
  GArray *steps;  /* FsCollStep */
  GArray *deps;   /* uint32_t */
  guint n_xfers;
  uint64_t xfer_bytes;
  guint width;     /* channels each step stands for (fs_coll_plan_fold) */
  guint max_conn;  /* most transfers on one connection */
  guint n_conns;   /* connections (FsCollStep.conn) */
  guint lat_depth; /* fs_coll_plan_latency_depth + 1, once computed (0: not yet) */
};

/* A connection: its last transfer is kept for the FIFO dependency. */
typedef struct {
  uint32_t src, dst, channel, lane;
} ConnKey;

/* A connection's entry in the builder's table (ConnTable): its key, its
 * last transfer, its index (FsCollStep.conn) and the next entry of its
 * chain; count 0: made by the lookup, no transfer stored yet. */
typedef struct {
  ConnKey key;
  uint32_t last;
  uint32_t count;  /* transfers on the connection */
  uint32_t id;
  uint32_t next;   /* in the pool; FS_STEP_NONE ends the chain */
} ConnEntry;

/* The builder's connections, looked up once per transfer (the builder's
 * inner loop): entries in one pool in the order they were made, chained
 * per (channel, source endpoint) from a head array per channel indexed by
 * the source (ranks, then NVLS switches, then CollNet switches, each
 * index modulo the communicator's size: a chain compares whole keys; a
 * switch's connections to ranks by the receiving rank instead).  A
 * source has a few connections per channel, and the algorithms make the
 * transfers of one channel rank after rank, so a lookup reads one head
 * near the last one and entries made together: no hashing, no allocation
 * per connection, few cache misses on thousands of ranks. */
#define FS_PLAN_CONN_TABLES 64

typedef struct {
  ConnEntry *pool;
  guint n, cap;
  guint n_ep;                          /* slots per endpoint kind: the communicator's size */
  uint32_t *head[FS_PLAN_CONN_TABLES]; /* by channel (mod); NULL: not used yet */
} ConnTable;

/* Folding while building (fs_coll_plan_new_folded): the algorithm still
 * makes every step, but a channel that turns out identical to an earlier
 * kept one (compared when it ends; algorithms build channel by channel) is
 * dropped from the arrays at once.  Step ids given to the algorithm are
 * then virtual (every step made, in order), stored ids are those kept. */
typedef struct {
  gboolean on;
  gboolean failed;    /* cannot fold this way: the caller builds and folds */
  guint cur;          /* channel being made (G_MAXUINT: none yet) */
  uint32_t vcount;    /* steps made */
  uint32_t vbase[64]; /* virtual id of channel c's first step */
  uint32_t sbase[64]; /* stored id of channel c's first step (while kept) */
  uint32_t cbase[64]; /* the plan's connection count when channel c began */
  guint rep[64];      /* the kept channel c equals (c itself when kept) */
  guint size[64];     /* channels equal to kept channel c, c included */
  guint count[64];    /* steps of kept channel c */
  gboolean seen[64];
} FoldBuild;

struct FsPlanBuilder {
  FsCollPlan *plan;
  GArray *fifo_prev; /* uint32_t per step: the previous transfer on its connection */
  gboolean overflow;  /* past FS_COLL_PLAN_MAX_STEPS: further steps are dropped */
  ConnTable conns;
  guint cur_channel; /* channel of the last transfer (for reductions) */
  FoldBuild fold;
  guint steps_cap, deps_cap, fifo_cap; /* elements allocated (see reserve) */
  /* fs_coll_plan_count_steps: steps are counted, not stored; every one
   * gets id 0 (a step, never FS_STEP_NONE, so the algorithm's choices
   * stay those of a real build). */
  gboolean count_only;
  guint64 counted;
};

/* Makes room for `need` elements in a (GArray of plain elements, no
 * clearing) without changing its length, doubling the allocation: the
 * builder then writes elements and sets a->len itself, one store per step
 * instead of a GLib call per element. */
static inline void reserve(GArray *a, guint *cap, guint need)
{
  if (need <= *cap)
    return;
  guint len = a->len, c = MAX(MAX(need, *cap * 2), 256u);
  g_array_set_size(a, c);
  a->len = len;
  *cap = c;
}

static void fold_channel_end(FsPlanBuilder *b);

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

static inline gboolean conn_equal(const ConnKey *a, const ConnKey *b)
{
  return a->src == b->src && a->dst == b->dst && a->channel == b->channel && a->lane == b->lane;
}

/* The entry of connection k; a new one (count 0) when there is none. */
static ConnEntry *conn_table_get(ConnTable *t, const ConnKey *k)
{
  guint c = k->channel % FS_PLAN_CONN_TABLES;
  if (t->head[c] == NULL) {
    t->head[c] = g_new(uint32_t, 3 * t->n_ep);
    memset(t->head[c], 0xff, sizeof(uint32_t) * 3 * t->n_ep);
  }
  guint kind = FS_EP_KIND(k->src) == FS_EP_RANK_KIND   ? 0
               : FS_EP_KIND(k->src) == FS_EP_NVLS_KIND ? 1
                                                       : 2;
  /* A switch sends to every rank of its host or shard (NVLS: L ranks × 2
   * lanes per channel): its chains go by the receiving rank, so that each
   * stays a lane or two long. */
  FsCollEp by = kind != 0 && FS_EP_KIND(k->dst) == FS_EP_RANK_KIND ? k->dst : k->src;
  uint32_t *h = &t->head[c][kind * t->n_ep + FS_EP_INDEX(by) % t->n_ep];
  for (uint32_t i = *h; i != FS_STEP_NONE; i = t->pool[i].next)
    if (conn_equal(&t->pool[i].key, k))
      return &t->pool[i];
  if (t->n == t->cap) {
    /* First: room for a few connections per endpoint and channel, so that
     * large plans do not copy the pool at every doubling. */
    t->cap = MAX(2 * t->cap, MAX(1024u, 4 * t->n_ep));
    t->pool = g_renew(ConnEntry, t->pool, t->cap);
  }
  ConnEntry *e = &t->pool[t->n];
  memset(e, 0, sizeof *e);
  e->key = *k;
  e->next = *h;
  *h = t->n++;
  return e;
}

const FsComm *fs_plan_comm(const FsPlanBuilder *b)
{
  return b->plan->comm;
}

const FsCollRequest *fs_plan_req(const FsPlanBuilder *b)
{
  return &b->plan->req;
}

gboolean fs_plan_overflowed(const FsPlanBuilder *b)
{
  return b->overflow;
}

guint fs_coll_plan_max_steps(void)
{
  static gsize once;
  static guint limit;
  if (g_once_init_enter(&once)) {
    /* Below FS_STEP_NONE: step ids must stay distinct from it. */
    limit = (guint)fs_env_limit("FABRICSIM_MAX_STEPS", FS_COLL_PLAN_MAX_STEPS, G_MAXUINT32 - 1);
    g_once_init_leave(&once, 1);
  }
  return limit;
}

/* Host index of an endpoint for the inter-host test; G_MAXUINT for the
 * CollNet switch (always "inter"). */
static guint ep_host(const FsComm *comm, FsCollEp ep)
{
  switch (FS_EP_KIND(ep)) {
  case FS_EP_RANK_KIND:
    return fs_comm_host_index(comm, FS_EP_INDEX(ep));
  case FS_EP_NVLS_KIND:
    return FS_EP_INDEX(ep);
  default:
    return G_MAXUINT;
  }
}

/* Folding while building: the stored id of virtual id v, which must be a
 * step of the channel being made (else folding this way fails). */
static uint32_t fold_stored(FsPlanBuilder *b, uint32_t v)
{
  FoldBuild *f = &b->fold;
  if (v < f->vbase[f->cur]) {
    f->failed = TRUE; /* a dependency leaves the channel */
    return 0;
  }
  return f->sbase[f->cur] + (v - f->vbase[f->cur]);
}

/* Folding while building: a step of channel ch is about to be made.  FALSE
 * when folding this way fails (the step is then not stored). */
static gboolean fold_step(FsPlanBuilder *b, guint ch)
{
  FoldBuild *f = &b->fold;
  if (f->failed)
    return FALSE;
  if (ch == f->cur)
    return TRUE;
  /* Channel by channel only: a step of an earlier channel fails. */
  if (ch >= G_N_ELEMENTS(f->seen) || f->seen[ch] || (f->cur != G_MAXUINT && ch < f->cur)) {
    f->failed = TRUE;
    return FALSE;
  }
  if (f->cur != G_MAXUINT)
    fold_channel_end(b);
  f->cur = ch;
  f->seen[ch] = TRUE;
  f->vbase[ch] = f->vcount;
  f->sbase[ch] = b->plan->steps->len;
  f->cbase[ch] = b->plan->n_conns;
  return TRUE;
}

/* Stores step proto with its dependencies deps (n, FS_STEP_NONE ignored) and
 * the previous transfer of its connection fifo; returns its id (virtual
 * while folding, 0 when only counting), FS_STEP_NONE past the guard. */
static uint32_t add_step(FsPlanBuilder *b, const FsCollStep *proto, const uint32_t *deps, guint n,
                         uint32_t fifo)
{
  FsCollPlan *p = b->plan;
  FoldBuild *f = &b->fold;
  if (b->count_only) {
    b->counted++;
    return 0;
  }
  if ((f->on ? f->vcount : p->steps->len) >= p->req.max_steps) {
    b->overflow = TRUE;
    return FS_STEP_NONE;
  }
  if (f->on && !fold_step(b, proto->channel))
    return f->vcount++;
  FsCollStep s = *proto;
  s.width = 1;
  s.dep_off = p->deps->len;
  s.n_deps = 0;
  /* Room for every dependency; the length then counts those kept. */
  reserve(p->deps, &b->deps_cap, s.dep_off + n + 1);
  uint32_t *d = (uint32_t *)p->deps->data + s.dep_off;
  for (guint i = 0; i < n; i++)
    if (deps[i] != FS_STEP_NONE)
      d[s.n_deps++] = f->on ? fold_stored(b, deps[i]) : deps[i];
  if (fifo != FS_STEP_NONE)
    d[s.n_deps++] = fifo = f->on ? fold_stored(b, fifo) : fifo;
  if (f->on && f->failed)
    return f->vcount++;
  for (guint i = 0; i < s.n_deps; i++)
    g_assert(d[i] < p->steps->len);
  p->deps->len = s.dep_off + s.n_deps;
  s.n_credits = 0;
  reserve(p->steps, &b->steps_cap, p->steps->len + 1);
  ((FsCollStep *)p->steps->data)[p->steps->len++] = s;
  reserve(b->fifo_prev, &b->fifo_cap, b->fifo_prev->len + 1);
  ((uint32_t *)b->fifo_prev->data)[b->fifo_prev->len++] = fifo;
  if (f->on)
    return f->vcount++;
  return p->steps->len - 1;
}

static uint32_t xfer(FsPlanBuilder *b, guint channel, guint lane, FsCollEp src, FsCollEp dst,
                     uint64_t bytes, const uint32_t *deps, guint n, gboolean ring_head);

uint32_t fs_plan_xfer(FsPlanBuilder *b, guint channel, FsCollEp src, FsCollEp dst,
                      uint64_t bytes, const uint32_t *deps, guint n)
{
  return xfer(b, channel, 0, src, dst, bytes, deps, n, FALSE);
}

uint32_t fs_plan_xfer_ring(FsPlanBuilder *b, guint channel, FsCollEp src, FsCollEp dst,
                           uint64_t bytes, const uint32_t *deps, guint n)
{
  return xfer(b, channel, 0, src, dst, bytes, deps, n, TRUE);
}

uint32_t fs_plan_xfer_lane(FsPlanBuilder *b, guint channel, guint lane, FsCollEp src,
                           FsCollEp dst, uint64_t bytes, const uint32_t *deps, guint n)
{
  return xfer(b, channel, lane, src, dst, bytes, deps, n, FALSE);
}

/* See fs_plan_xfer_lane; ring_head sets FsCollStep.ring_head. */
static uint32_t xfer(FsPlanBuilder *b, guint channel, guint lane, FsCollEp src, FsCollEp dst,
                     uint64_t bytes, const uint32_t *deps, guint n, gboolean ring_head)
{
  g_assert(lane < 256);
  if (b->overflow)
    return FS_STEP_NONE;
  if (b->count_only) {
    b->counted++;
    return 0;
  }
  FsCollPlan *p = b->plan;
  g_assert(src != dst);
  FsCollStep s = {
    .kind = FS_STEP_XFER, .src = src, .dst = dst, .bytes = bytes,
    .channel = (uint16_t)channel, .lane = (uint8_t)lane, .ring_head = ring_head ? 1 : 0,
  };
  guint hs = ep_host(p->comm, src), hd = ep_host(p->comm, dst);
  s.inter = hs == G_MAXUINT || hd == G_MAXUINT || hs != hd;
  /* FIFO: after the previous transfer on the same connection. */
  ConnKey key = {src, dst, channel, lane};
  ConnEntry *conn = conn_table_get(&b->conns, &key);
  gboolean fresh = conn->count == 0;
  uint32_t fifo = fresh ? FS_STEP_NONE : conn->last;
  /* A connection's index is its first stored transfer's order (folding
   * while building takes back those of a dropped channel). */
  s.conn = fresh ? p->n_conns : conn->id;
  uint32_t id = add_step(b, &s, deps, n, fifo);
  if (id == FS_STEP_NONE)
    return id;
  if (fresh)
    conn->id = p->n_conns++;
  conn->last = id;
  p->max_conn = MAX(p->max_conn, ++conn->count);
  b->cur_channel = channel;
  p->n_xfers++;
  p->xfer_bytes += bytes;
  return id;
}

uint32_t fs_plan_reduce(FsPlanBuilder *b, guint rank, uint64_t bytes, const uint32_t *deps,
                        guint n)
{
  FsCollStep s = {
    .kind = FS_STEP_REDUCE, .src = FS_EP_RANK(rank), .dst = FS_EP_RANK(rank), .bytes = bytes,
    .channel = (uint16_t)b->cur_channel, .conn = FS_STEP_NONE,
  };
  return add_step(b, &s, deps, n, FS_STEP_NONE);
}

uint64_t fs_coll_channel_bytes(uint64_t total, FsCollDtype dtype, guint parts, guint i)
{
  g_assert(parts > 0 && i < parts);
  uint64_t w = fs_coll_dtype_size(dtype);
  uint64_t elems = total / w;
  uint64_t lo = elems * i / parts, hi = elems * (i + 1) / parts;
  uint64_t bytes = (hi - lo) * w;
  if (i == parts - 1)
    bytes += total % w;
  return bytes;
}

uint64_t fs_plan_split(const FsPlanBuilder *b, uint64_t total, guint parts, guint i)
{
  return fs_coll_channel_bytes(total, b->plan->req.dtype, parts, i);
}

/* Adds the flow-control waits of FsCollRequest.conn_slots (plan.h): every
 * transfer k of a connection waits for the consumers of transfer k − slots
 * on it, i.e. the steps that depend on that transfer's data (not its FIFO
 * successor).  Rebuilds the dependency array with each step's credits after
 * its deps.  O(steps + deps × slots). */
static void add_credits(FsCollPlan *p, const uint32_t *fifo_prev, guint slots)
{
  guint n = p->steps->len;
  FsCollStep *st = (FsCollStep *)p->steps->data;
  const uint32_t *deps = (const uint32_t *)p->deps->data;
  /* Data successors (CSR). */
  g_autofree guint *off = g_new0(guint, n + 2);
  for (guint i = 0; i < n; i++)
    for (guint k = 0; k < st[i].n_deps; k++) {
      uint32_t d = deps[st[i].dep_off + k];
      if (!fs_coll_step_same_conn(&st[d], &st[i]))
        off[d + 1]++;
    }
  for (guint i = 0; i < n; i++)
    off[i + 1] += off[i];
  g_autofree uint32_t *succ = g_new(uint32_t, off[n] + 1);
  g_autofree guint *fill = g_new0(guint, n + 1);
  for (guint i = 0; i < n; i++)
    for (guint k = 0; k < st[i].n_deps; k++) {
      uint32_t d = deps[st[i].dep_off + k];
      if (!fs_coll_step_same_conn(&st[d], &st[i]))
        succ[off[d] + fill[d]++] = i;
    }
  GArray *nd = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), p->deps->len + n);
  for (guint i = 0; i < n; i++) {
    guint from = st[i].dep_off;
    st[i].dep_off = nd->len;
    g_array_append_vals(nd, deps + from, st[i].n_deps);
    if (st[i].kind != FS_STEP_XFER)
      continue;
    uint32_t j = i;
    for (guint t = 0; t < slots && j != FS_STEP_NONE; t++)
      j = fifo_prev[j];
    if (j == FS_STEP_NONE)
      continue;
    g_array_append_vals(nd, succ + off[j], off[j + 1] - off[j]);
    st[i].n_credits = off[j + 1] - off[j];
  }
  g_array_unref(p->deps);
  p->deps = nd;
}

static inline const FsCollStep *step_at(const FsCollPlan *p, guint i);
static gboolean routes_fixed(const FsCollPlan *p, FsCollRouteFixedFn fixed, void *ctx);

/* TRUE when the channel made last, c, is step for step the kept channel r
 * (what channels_equal tests on a whole plan; credits come later and
 * follow from the same dependencies). */
static gboolean fold_equal(const FsPlanBuilder *b, guint r, guint c, guint nc)
{
  const FsCollPlan *p = b->plan;
  const FoldBuild *f = &b->fold;
  if (f->count[r] != nc)
    return FALSE;
  uint32_t br = f->sbase[r], bc = f->sbase[c];
  const uint32_t *deps = (const uint32_t *)p->deps->data;
  for (guint k = 0; k < nc; k++) {
    const FsCollStep *x = step_at(p, br + k), *y = step_at(p, bc + k);
    if (x->kind != y->kind || x->src != y->src || x->dst != y->dst || x->bytes != y->bytes ||
        x->lane != y->lane || x->inter != y->inter || x->ring_head != y->ring_head ||
        x->n_deps != y->n_deps)
      return FALSE;
    if (x->kind == FS_STEP_XFER &&
        (fs_coll_ep_node(p->comm, x->src, r) != fs_coll_ep_node(p->comm, y->src, c) ||
         fs_coll_ep_node(p->comm, x->dst, r) != fs_coll_ep_node(p->comm, y->dst, c)))
      return FALSE;
    for (guint j = 0; j < x->n_deps; j++)
      if (deps[x->dep_off + j] - br != deps[y->dep_off + j] - bc)
        return FALSE;
  }
  return TRUE;
}

/* The channel made last ends: dropped when it equals a kept channel (the
 * first, as fs_coll_plan_fold picks), else kept. */
static void fold_channel_end(FsPlanBuilder *b)
{
  FsCollPlan *p = b->plan;
  FoldBuild *f = &b->fold;
  guint c = f->cur, nc = p->steps->len - f->sbase[c];
  for (guint r = 0; r < c; r++)
    if (f->rep[r] == r && f->seen[r] && fold_equal(b, r, c, nc)) {
      f->rep[c] = r;
      f->size[r]++;
      if (nc > 0)
        g_array_set_size(p->deps, step_at(p, f->sbase[c])->dep_off);
      g_array_set_size(p->steps, f->sbase[c]);
      g_array_set_size(b->fifo_prev, f->sbase[c]);
      p->n_conns = f->cbase[c];
      return;
    }
  f->rep[c] = c;
  f->size[c] = 1;
  f->count[c] = nc;
}

/* Folding while building, once the algorithm is done: TRUE when the plan
 * kept is what fs_coll_plan_fold gives for the whole plan (every class of
 * identical channels of the same size k >= 2, so one member of each is
 * kept, and fixed routes); it is then given width k. */
static gboolean fold_finish(FsPlanBuilder *b, FsCollRouteFixedFn route_fixed, void *ctx)
{
  FsCollPlan *p = b->plan;
  FoldBuild *f = &b->fold;
  guint nch = p->req.nchannels, k = 0;
  if (f->failed || f->cur == G_MAXUINT)
    return FALSE;
  fold_channel_end(b);
  for (guint c = 0; c < nch; c++)
    if (!f->seen[c])
      return FALSE;
  for (guint c = 0; c < nch; c++)
    if (f->rep[c] == c)
      k = k == 0 ? f->size[c] : k;
  for (guint c = 0; c < nch; c++)
    if (f->rep[c] == c && f->size[c] != k)
      return FALSE; /* fs_coll_plan_fold would keep several of a class */
  if (k < 2 || k > G_MAXUINT8 || !routes_fixed(p, route_fixed, ctx))
    return FALSE;
  p->width = k;
  p->n_xfers = 0;
  p->xfer_bytes = 0;
  FsCollStep *st = (FsCollStep *)p->steps->data;
  for (guint i = 0; i < p->steps->len; i++) {
    st[i].width = (uint8_t)k;
    if (st[i].kind == FS_STEP_XFER) {
      p->n_xfers++;
      p->xfer_bytes += st[i].bytes * k;
    }
  }
  return TRUE;
}

/* Builds the plan of a checked request r (slice <= chunk, max_steps set).
 * route_fixed non-NULL: folded while building (see FoldBuild); *unfolded
 * is then set when that did not work (NULL is returned without an error:
 * build the whole plan and fold it). */
static FsCollPlan *build_plan_mode(const FsComm *comm, const FsCollAlgo *algo,
                                   const FsCollRequest *r, FsCollRouteFixedFn route_fixed,
                                   void *ctx, gboolean *unfolded, GError **error);

static FsCollPlan *build_plan(const FsComm *comm, const FsCollAlgo *algo, const FsCollRequest *r,
                              GError **error)
{
  return build_plan_mode(comm, algo, r, NULL, NULL, NULL, error);
}

/* Builds the plan (contract at the declaration above): runs the algorithm's builder, then
 * either folds the result (route_fixed set) or adds the connection credits, and turns a builder
 * that ran past max_steps into FS_RUNTIME_ERROR_LIMIT. The plan borrows comm and belongs to the
 * caller. */
static FsCollPlan *build_plan_mode(const FsComm *comm, const FsCollAlgo *algo,
                                   const FsCollRequest *r, FsCollRouteFixedFn route_fixed,
                                   void *ctx, gboolean *unfolded, GError **error)
{
  FsCollPlan *p = g_new0(FsCollPlan, 1);
  p->req = *r;
  p->algo = algo;
  p->comm = comm;
  p->width = 1;
  p->steps = g_array_new(FALSE, FALSE, sizeof(FsCollStep));
  p->deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  FsPlanBuilder b = {
    .plan = p,
    .fifo_prev = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
    .conns = {.n_ep = MAX(fs_comm_size(comm), 1u)},
  };
  if (route_fixed != NULL) {
    b.fold.on = TRUE;
    b.fold.cur = G_MAXUINT;
  }
  if (fs_comm_size(comm) > 1)
    algo->build(&b);
  for (guint t = 0; t < FS_PLAN_CONN_TABLES; t++)
    g_free(b.conns.head[t]);
  g_free(b.conns.pool);
  if (route_fixed != NULL && !b.overflow && !fold_finish(&b, route_fixed, ctx)) {
    *unfolded = TRUE;
    g_array_unref(b.fifo_prev);
    fs_coll_plan_free(p);
    return NULL;
  }
  if (!b.overflow && r->conn_slots > 0)
    add_credits(p, (const uint32_t *)b.fifo_prev->data, r->conn_slots);
  g_array_unref(b.fifo_prev);
  if (b.overflow) {
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_LIMIT,
                "the plan-step guard: the %s plan of %s on %u ranks × %u channels needs more "
                "than %u steps; use fewer channels, a larger chunk or another algorithm, or "
                "raise the limit (FABRICSIM_MAX_STEPS=N)",
                algo->name, fs_coll_op_name(r->op), fs_comm_size(comm), r->nchannels,
                p->req.max_steps);
    fs_coll_plan_free(p);
    return NULL;
  }
  return p;
}

/* Checks req for algo on comm; *r: the request with defaults filled in. */
static gboolean check_request(const FsComm *comm, const FsCollAlgo *algo,
                              const FsCollRequest *req, FsCollRequest *r, GError **error)
{
  if (req->op >= FS_COLL_N_OPS || req->dtype >= FS_COLL_N_DTYPES || req->proto >= FS_PROTO_N) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID, "invalid collective request");
    return FALSE;
  }
  if (req->nchannels < 1 || req->nchannels > 64 || req->chunk_bytes < 1) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID,
                "invalid request: channels must be 1..64 (got %u), the chunk size at least 1 byte",
                req->nchannels);
    return FALSE;
  }
  if (fs_coll_op_rooted(req->op) && req->root >= fs_comm_size(comm)) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID,
                "root %u is not a rank of a %u-rank communicator", req->root, fs_comm_size(comm));
    return FALSE;
  }
  const char *why = algo->unsupported(comm, req->op);
  if (why != NULL) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_UNSUPPORTED, "algorithm %s cannot run %s: %s",
                algo->name, fs_coll_op_name(req->op), why);
    return FALSE;
  }
  *r = *req;
  if (r->max_steps == 0)
    r->max_steps = fs_coll_plan_max_steps();
  if (r->slice_bytes == 0 || r->slice_bytes > r->chunk_bytes)
    r->slice_bytes = r->chunk_bytes;
  return TRUE;
}

FsCollPlan *fs_coll_plan_new(const FsComm *comm, const FsCollAlgo *algo,
                             const FsCollRequest *req, GError **error)
{
  g_return_val_if_fail(comm != NULL && algo != NULL && req != NULL, NULL);
  FsCollRequest r;
  if (!check_request(comm, algo, req, &r, error))
    return NULL;
  /* Coarsening: the whole buffer in one chunk is as coarse as it gets. */
  uint64_t whole = MAX(req->bytes * fs_comm_size(comm), 1);
  for (;;) {
    FsCollPlan *p = build_plan(comm, algo, &r, error);
    if (p == NULL || r.max_slices_per_conn == 0 || p->max_conn <= r.max_slices_per_conn ||
        r.chunk_bytes >= whole)
      return p;
    /* Transfers per connection fall about in proportion to the slice size:
     * grow chunk and slice by the next power of two above the excess. */
    guint64 f = 2;
    while (f * r.max_slices_per_conn < p->max_conn)
      f *= 2;
    fs_coll_plan_free(p);
    r.chunk_bytes = r.chunk_bytes > G_MAXUINT64 / f ? G_MAXUINT64 : r.chunk_bytes * f;
    r.slice_bytes = r.slice_bytes > G_MAXUINT64 / f ? G_MAXUINT64 : r.slice_bytes * f;
  }
}

gboolean fs_coll_plan_count_steps(const FsComm *comm, const FsCollAlgo *algo,
                                  const FsCollRequest *req, guint64 *steps, GError **error)
{
  g_return_val_if_fail(comm != NULL && algo != NULL && req != NULL && steps != NULL, FALSE);
  FsCollRequest r;
  if (!check_request(comm, algo, req, &r, error))
    return FALSE;
  FsCollPlan p = {.req = r, .algo = algo, .comm = comm, .width = 1};
  FsPlanBuilder b = {.plan = &p, .count_only = TRUE};
  if (fs_comm_size(comm) > 1)
    algo->build(&b);
  *steps = b.counted;
  return TRUE;
}

FsCollPlan *fs_coll_plan_new_folded(const FsComm *comm, const FsCollAlgo *algo,
                                    const FsCollRequest *req, FsCollRouteFixedFn route_fixed,
                                    void *ctx, GError **error)
{
  g_return_val_if_fail(comm != NULL && algo != NULL && req != NULL, NULL);
  FsCollRequest r;
  if (!check_request(comm, algo, req, &r, error))
    return NULL;
  /* Only where the channels can be alike: equal shares, exact slicing. */
  gboolean try = route_fixed != NULL && r.max_slices_per_conn == 0 && r.nchannels >= 2 &&
                 fs_comm_size(comm) > 1;
  for (guint c = 1; try && c < r.nchannels; c++)
    try = fs_coll_channel_bytes(r.bytes, r.dtype, r.nchannels, c) ==
          fs_coll_channel_bytes(r.bytes, r.dtype, r.nchannels, 0);
  if (try) {
    gboolean unfolded = FALSE;
    FsCollPlan *p = build_plan_mode(comm, algo, &r, route_fixed, ctx, &unfolded, error);
    if (p != NULL || !unfolded)
      return p;
  }
  FsCollPlan *whole = fs_coll_plan_new(comm, algo, req, error);
  if (whole == NULL || route_fixed == NULL)
    return whole;
  FsCollPlan *f = fs_coll_plan_fold(whole, route_fixed, ctx);
  if (f == NULL)
    return whole;
  fs_coll_plan_free(whole);
  return f;
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

/* Unchecked accessors for the loops below (i < n_steps by construction). */
static inline const FsCollStep *step_at(const FsCollPlan *p, guint i)
{
  return &g_array_index(p->steps, FsCollStep, i);
}

static inline const uint32_t *deps_at(const FsCollPlan *p, guint i, guint *n)
{
  const FsCollStep *s = step_at(p, i);
  *n = s->n_deps;
  return s->n_deps ? &g_array_index(p->deps, uint32_t, s->dep_off) : NULL;
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

guint fs_coll_plan_width(const FsCollPlan *p)
{
  return p->width;
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
    const uint32_t *deps = deps_at(p, i, &nd);
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
    const FsCollStep *s = step_at(p, i);
    guint nd, d = 0;
    const uint32_t *deps = deps_at(p, i, &nd);
    for (guint j = 0; j < nd; j++) {
      const FsCollStep *a = step_at(p, deps[j]);
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

/* ---- Channel folding ---------------------------------------------------- */

int fs_coll_ep_node(const FsComm *comm, FsCollEp ep, guint ch)
{
  switch (FS_EP_KIND(ep)) {
  case FS_EP_RANK_KIND:
    return fs_comm_gpu(comm, FS_EP_INDEX(ep));
  case FS_EP_NVLS_KIND:
    return fs_comm_nvls_switch(comm, FS_EP_INDEX(ep), ch);
  case FS_EP_COLLNET_KIND:
    return fs_comm_collnet_switch(comm, FS_EP_INDEX(ep));
  default:
    return -1;
  }
}

/* Steps of each channel in step order (CSR: idx[off[c] .. off[c+1])) and
 * each step's position in its channel. */
typedef struct {
  guint *off, *idx, *pos;
} ChannelSteps;

/* TRUE when channels a and b of p are identical step for step (see
 * fs_coll_plan_fold).  Dependencies must stay inside the channel. */
static gboolean channels_equal(const FsCollPlan *p, const ChannelSteps *cs, guint a, guint b)
{
  guint na = cs->off[a + 1] - cs->off[a];
  if (na != cs->off[b + 1] - cs->off[b])
    return FALSE;
  for (guint k = 0; k < na; k++) {
    const FsCollStep *x = step_at(p, cs->idx[cs->off[a] + k]);
    const FsCollStep *y = step_at(p, cs->idx[cs->off[b] + k]);
    if (x->kind != y->kind || x->src != y->src || x->dst != y->dst || x->bytes != y->bytes ||
        x->lane != y->lane || x->inter != y->inter || x->ring_head != y->ring_head ||
        x->n_deps != y->n_deps || x->n_credits != y->n_credits)
      return FALSE;
    if (x->kind == FS_STEP_XFER &&
        (fs_coll_ep_node(p->comm, x->src, a) != fs_coll_ep_node(p->comm, y->src, b) ||
         fs_coll_ep_node(p->comm, x->dst, a) != fs_coll_ep_node(p->comm, y->dst, b)))
      return FALSE;
    guint nd = x->n_deps + x->n_credits;
    /* A plan with no dependency at all has no deps array (NULL data). */
    const uint32_t *dx = nd ? &g_array_index(p->deps, uint32_t, x->dep_off) : NULL;
    const uint32_t *dy = nd ? &g_array_index(p->deps, uint32_t, y->dep_off) : NULL;
    for (guint j = 0; j < nd; j++)
      if (step_at(p, dx[j])->channel != a || step_at(p, dy[j])->channel != b ||
          cs->pos[dx[j]] != cs->pos[dy[j]])
        return FALSE;
  }
  return TRUE;
}

static guint gcd(guint a, guint b)
{
  while (b) {
    guint t = a % b;
    a = b, b = t;
  }
  return a;
}

/* TRUE when every transfer of p goes between nodes whose route is fixed. */
static gboolean routes_fixed(const FsCollPlan *p, FsCollRouteFixedFn fixed, void *ctx)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full(fs_hash64_key, g_int64_equal, g_free, NULL);
  g_autofree gboolean *conn_seen = g_new0(gboolean, p->n_conns + 1); /* one look per connection */
  for (guint i = 0; i < p->steps->len; i++) {
    const FsCollStep *s = step_at(p, i);
    if (s->kind != FS_STEP_XFER || conn_seen[s->conn])
      continue;
    conn_seen[s->conn] = TRUE;
    int a = fs_coll_ep_node(p->comm, s->src, s->channel);
    int b = fs_coll_ep_node(p->comm, s->dst, s->channel);
    if (a < 0 || b < 0)
      return FALSE;
    gint64 k = ((gint64)a << 32) | (guint)b;
    if (g_hash_table_contains(seen, &k))
      continue;
    if (!fixed(ctx, a, b))
      return FALSE;
    g_hash_table_add(seen, g_memdup2(&k, sizeof k));
  }
  return TRUE;
}

/* See plan.h. Channels are grouped into classes of equal step sequences (quadratic in the
 * channels in the worst case), k is the gcd of the class sizes, and the first size/k members of
 * each class are kept with their steps renumbered and given width k; the folded plan belongs to
 * the caller and borrows comm like p. */
FsCollPlan *fs_coll_plan_fold(const FsCollPlan *p, FsCollRouteFixedFn route_fixed, void *ctx)
{
  g_return_val_if_fail(p != NULL, NULL);
  guint nch = p->req.nchannels, n = p->steps->len;
  if (nch < 2 || route_fixed == NULL || p->width != 1 || n == 0)
    return NULL;
  ChannelSteps cs = {g_new0(guint, nch + 1), g_new(guint, n), g_new(guint, n)};
  g_autofree guint *cls = g_new(guint, nch);   /* class representative of each channel */
  g_autofree guint *size = g_new0(guint, nch); /* class size, at the representative */
  g_autofree guint *kept = g_new0(guint, nch); /* members kept so far, at the representative */
  g_autofree uint32_t *map = NULL;
  g_autofree uint32_t *conn_map = NULL; /* a kept connection's new index */
  FsCollPlan *f = NULL;
  guint k = 0;
  for (guint i = 0; i < n; i++) {
    guint c = step_at(p, i)->channel;
    if (c >= nch)
      goto out;
    cs.off[c + 1]++;
  }
  for (guint c = 0; c < nch; c++)
    cs.off[c + 1] += cs.off[c];
  {
    g_autofree guint *fill = g_new0(guint, nch);
    for (guint i = 0; i < n; i++) {
      guint c = step_at(p, i)->channel;
      cs.pos[i] = fill[c];
      cs.idx[cs.off[c] + fill[c]++] = i;
    }
  }
  /* Classes: each channel joins the first earlier representative it equals. */
  for (guint c = 0; c < nch; c++) {
    cls[c] = c;
    for (guint r = 0; r < c; r++)
      if (cls[r] == r && channels_equal(p, &cs, r, c)) {
        cls[c] = r;
        break;
      }
    if (cls[c] == c && !channels_equal(p, &cs, c, c))
      goto out; /* a dependency leaves the channel */
    size[cls[c]]++;
  }
  for (guint c = 0; c < nch; c++)
    if (size[c] > 0)
      k = gcd(k, size[c]);
  if (k < 2 || k > G_MAXUINT8 || !routes_fixed(p, route_fixed, ctx))
    goto out;
  /* Keep the first size/k members of every class, steps in their order. */
  gboolean keep[64];
  for (guint c = 0; c < nch; c++)
    keep[c] = kept[cls[c]]++ < size[cls[c]] / k;
  f = g_new0(FsCollPlan, 1);
  f->req = p->req;
  f->algo = p->algo;
  f->comm = p->comm;
  f->width = k;
  f->max_conn = p->max_conn;
  f->steps = g_array_sized_new(FALSE, FALSE, sizeof(FsCollStep), n);
  f->deps = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), p->deps->len);
  map = g_new(uint32_t, n);
  conn_map = g_new(uint32_t, p->n_conns + 1);
  memset(conn_map, 0xff, sizeof(uint32_t) * (p->n_conns + 1));
  /* The kept steps' new ids first: credits may point forward. */
  for (guint i = 0, m = 0; i < n; i++)
    map[i] = keep[step_at(p, i)->channel] ? m++ : FS_STEP_NONE;
  for (guint i = 0; i < n; i++) {
    const FsCollStep *s = step_at(p, i);
    if (!keep[s->channel])
      continue;
    FsCollStep t = *s;
    t.width = (uint8_t)k;
    t.dep_off = f->deps->len;
    if (s->kind == FS_STEP_XFER) {
      if (conn_map[s->conn] == FS_STEP_NONE)
        conn_map[s->conn] = f->n_conns++;
      t.conn = conn_map[s->conn];
    }
    guint nd = s->n_deps + s->n_credits;
    if (nd > 0) { /* a plan with no dependency at all has no deps array */
      const uint32_t *d = &g_array_index(p->deps, uint32_t, s->dep_off);
      g_array_set_size(f->deps, t.dep_off + nd);
      uint32_t *fd = &g_array_index(f->deps, uint32_t, t.dep_off);
      for (guint j = 0; j < nd; j++) {
        g_assert(map[d[j]] != FS_STEP_NONE);
        fd[j] = map[d[j]];
      }
    }
    g_assert(map[i] == f->steps->len);
    g_array_append_val(f->steps, t);
    if (s->kind == FS_STEP_XFER) {
      f->n_xfers++;
      f->xfer_bytes += s->bytes * k;
    }
  }
out:
  g_free(cs.off);
  g_free(cs.idx);
  g_free(cs.pos);
  return f;
}
