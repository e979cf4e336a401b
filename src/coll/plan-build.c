/* plan-build.c — the plan builder: the calls the algorithms make
 * (fs_plan_xfer*, fs_plan_reduce, fs_plan_split), each transfer after the
 * last one on its connection (FIFO), connections numbered as they appear;
 * the flow-control credits; the step guard; the entry points that build a
 * plan, count its steps or build it folded (with plan-mirror.c).  See
 * plan.h. */
#include "coll/plan-private.h"

#include <string.h>

#include "util/error.h"
#include "util/limits.h"

static inline gboolean conn_equal(const ConnKey *a, const ConnKey *b)
{
  return a->src == b->src && a->dst == b->dst && a->channel == b->channel && a->lane == b->lane;
}

/* The head slot of key k in its channel's array: its source (a switch's connection to a rank:
 * the rank) modulo the communicator's size, times spread, plus the other endpoint modulo
 * spread. */
static guint conn_slot(const ConnTable *t, const ConnKey *k)
{
  guint kind = FS_EP_KIND(k->src) == FS_EP_RANK_KIND   ? 0
               : FS_EP_KIND(k->src) == FS_EP_NVLS_KIND ? 1
                                                       : 2;
  /* A switch sends to every rank of its host or shard (NVLS: L ranks × 2
   * lanes per channel): its chains go by the receiving rank, so that each
   * stays a lane or two long. */
  gboolean by_dst = kind != 0 && FS_EP_KIND(k->dst) == FS_EP_RANK_KIND;
  FsCollEp by = by_dst ? k->dst : k->src, other = by_dst ? k->src : k->dst;
  guint spread = MAX(t->spread, 1u);
  return (kind * t->n_ep + FS_EP_INDEX(by) % t->n_ep) * spread + FS_EP_INDEX(other) % spread;
}

/* Doubles the slots per endpoint and rebuilds every chain from the pool (the newest entry
 * first in each, as made). */
static void conn_respread(ConnTable *t)
{
  t->spread = MAX(t->spread, 1u) * 2;
  gsize slots = (gsize)3 * t->n_ep * t->spread;
  for (guint c = 0; c < FS_PLAN_CONN_TABLES; c++)
    if (t->head[c] != NULL) {
      g_free(t->head[c]);
      t->head[c] = g_new(uint32_t, slots);
      memset(t->head[c], 0xff, sizeof(uint32_t) * slots);
    }
  for (guint i = 0; i < t->n; i++) {
    uint32_t *h = &t->head[t->pool[i].key.channel % FS_PLAN_CONN_TABLES][conn_slot(t, &t->pool[i].key)];
    t->pool[i].next = *h;
    *h = i;
  }
}

/* See plan-private.h. */
ConnEntry *fs_plan_conn_get(ConnTable *t, const ConnKey *k)
{
  guint c = k->channel % FS_PLAN_CONN_TABLES;
  if (t->head[c] == NULL) {
    gsize slots = (gsize)3 * t->n_ep * MAX(t->spread, 1u);
    t->head[c] = g_new(uint32_t, slots);
    memset(t->head[c], 0xff, sizeof(uint32_t) * slots);
    t->n_tables++;
  }
  uint32_t *h = &t->head[c][conn_slot(t, k)];
  for (uint32_t i = *h; i != FS_STEP_NONE; i = t->pool[i].next)
    if (conn_equal(&t->pool[i].key, k))
      return &t->pool[i];
  /* A new connection: more than 4 per rank slot in use spreads the slots (at most n per
   * endpoint, where every other endpoint has one of its own). */
  if (t->n >= (guint64)4 * t->n_ep * MAX(t->spread, 1u) * t->n_tables && MAX(t->spread, 1u) < t->n_ep) {
    conn_respread(t);
    h = &t->head[c][conn_slot(t, k)];
  }
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

guint64 fs_plan_virtual_limit(const FsPlanBuilder *b)
{
  const FsCollRequest *r = &b->plan->req;
  /* Folding failed: the caller builds the whole plan next, whose every
   * step counts. */
  if (b->fold.failed || r->max_virtual <= r->max_steps)
    return r->max_steps;
  return MIN(r->max_virtual, (guint64)FS_PLAN_MAX_VIRTUAL);
}

gboolean fs_plan_at_guard(const FsPlanBuilder *b)
{
  const FsCollPlan *p = b->plan;
  if (!b->fold.on)
    return p->steps->len >= p->req.max_steps;
  return p->steps->len >= p->req.max_steps || b->fold.vcount >= fs_plan_virtual_limit(b);
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
  if (fs_plan_at_guard(b)) {
    b->overflow = TRUE;
    return FS_STEP_NONE;
  }
  if (f->on && !fs_plan_fold_step(b, proto->channel))
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
      d[s.n_deps++] = f->on ? fs_plan_fold_stored(b, deps[i]) : deps[i];
  if (fifo != FS_STEP_NONE)
    d[s.n_deps++] = fifo = f->on ? fs_plan_fold_stored(b, fifo) : fifo;
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

/* See plan.h: a mirrored step (fold_mirror) is only compared; else the
 * step is stored after its connection's last transfer (FIFO), numbering
 * the connection when it is new. */
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
  uint32_t mirrored;
  if (b->fold.on && fs_plan_fold_mirror(b, &s, deps, n, &mirrored)) {
    b->cur_channel = channel;
    return mirrored;
  }
  guint hs = ep_host(p->comm, src), hd = ep_host(p->comm, dst);
  s.inter = hs == G_MAXUINT || hd == G_MAXUINT || hs != hd;
  /* FIFO: after the previous transfer on the same connection. */
  ConnKey key = {src, dst, channel, lane};
  ConnEntry *conn = fs_plan_conn_get(&b->conns, &key);
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
  uint32_t mirrored;
  if (b->fold.on && fs_plan_fold_mirror(b, &s, deps, n, &mirrored))
    return mirrored;
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
  /* No transfer has `slots` earlier ones on its connection and the
   * dependencies lie in step order: the rebuilt array would be this one. */
  gboolean any = FALSE;
  guint at = 0;
  for (guint i = 0; i < n && !any; i++) {
    any = st[i].dep_off != at;
    at += st[i].n_deps;
    if (st[i].kind != FS_STEP_XFER)
      continue;
    uint32_t j = i;
    for (guint t = 0; t < slots && j != FS_STEP_NONE; t++)
      j = fifo_prev[j];
    any = any || j != FS_STEP_NONE;
  }
  if (!any && at == p->deps->len)
    return;
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
  /* Each step's credit source (the transfer `slots` back on its
   * connection), then the new array at its final size, filled in place:
   * two copies per step, no GLib call each. */
  g_autofree uint32_t *src = g_new(uint32_t, n + 1);
  guint len = 0;
  for (guint i = 0; i < n; i++) {
    uint32_t j = FS_STEP_NONE;
    if (st[i].kind == FS_STEP_XFER) {
      j = i;
      for (guint t = 0; t < slots && j != FS_STEP_NONE; t++)
        j = fifo_prev[j];
    }
    src[i] = j;
    len += st[i].n_deps + (j != FS_STEP_NONE ? off[j + 1] - off[j] : 0);
  }
  GArray *nd = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), len + 1);
  g_array_set_size(nd, len);
  uint32_t *out = (uint32_t *)(void *)nd->data;
  guint at_out = 0;
  for (guint i = 0; i < n; i++) {
    guint from = st[i].dep_off;
    st[i].dep_off = at_out;
    if (st[i].n_deps > 0)
      memcpy(out + at_out, deps + from, st[i].n_deps * sizeof *out);
    at_out += st[i].n_deps;
    uint32_t j = src[i];
    if (j == FS_STEP_NONE)
      continue;
    st[i].n_credits = off[j + 1] - off[j];
    if (st[i].n_credits > 0)
      memcpy(out + at_out, succ + off[j], st[i].n_credits * sizeof *out);
    at_out += st[i].n_credits;
  }
  g_assert(at_out == len);
  g_array_unref(p->deps);
  p->deps = nd;
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
  if (route_fixed != NULL && !b.overflow && !fs_plan_fold_finish(&b, route_fixed, ctx)) {
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
  if (req->rotation > 0 &&
      (req->rotation_order < 2 || req->nchannels % (req->rotation * req->rotation_order) != 0 ||
       fs_coll_channel_bytes(req->bytes, req->dtype, req->nchannels, 0) !=
         fs_coll_channel_bytes(req->bytes, req->dtype, req->nchannels, req->nchannels - 1))) {
    g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID,
                "invalid request: a rotation of %u (order %u) needs a multiple of %u channels "
                "(got %u) with equal shares",
                req->rotation, req->rotation_order, req->rotation * req->rotation_order,
                req->nchannels);
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

/* See plan.h. */
gboolean fs_plan_channel_rotated(const FsPlanBuilder *b, guint ch)
{
  const FsCollRequest *r = &b->plan->req;
  return r->rotation > 0 && !b->count_only && ch % (r->rotation * r->rotation_order) >= r->rotation;
}

/* See plan.h. */
gboolean fs_coll_plan_count_loop_steps(const FsComm *comm, const FsCollAlgo *algo,
                                       const FsCollRequest *req, uint64_t q, guint64 F,
                                       double *steps, GError **error)
{
  g_return_val_if_fail(req != NULL && steps != NULL, FALSE);
  FsCollRequest r1 = *req, r2 = *req;
  r1.mirror_rails = r2.mirror_rails = FALSE;
  r1.rotation = r2.rotation = 0;
  guint64 n1, n2;
  if (F < 2) {
    if (!fs_coll_plan_count_steps(comm, algo, &r1, &n1, error))
      return FALSE;
    *steps = (double)n1;
    return TRUE;
  }
  r1.bytes = req->bytes - (F - 1) * q * req->nchannels;
  r2.bytes = req->bytes - (F - 2) * q * req->nchannels;
  if (!fs_coll_plan_count_steps(comm, algo, &r1, &n1, error) ||
      !fs_coll_plan_count_steps(comm, algo, &r2, &n2, error))
    return FALSE;
  *steps = (double)n1 + (double)(F - 1) * ((double)n2 - (double)n1);
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
