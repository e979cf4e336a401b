/* plan-fold.c — folding a whole plan (fs_coll_plan_fold): channels grouped
 * into classes of identical step sequences on the same topology nodes, one
 * member of each class kept with the class's width, where every route is
 * fixed.  See plan.h. */
#include "coll/plan-private.h"

#include <string.h>

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
    const FsCollStep *x = fs_coll_plan_step_at(p, cs->idx[cs->off[a] + k]);
    const FsCollStep *y = fs_coll_plan_step_at(p, cs->idx[cs->off[b] + k]);
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
      if (fs_coll_plan_step_at(p, dx[j])->channel != a || fs_coll_plan_step_at(p, dy[j])->channel != b ||
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

/* TRUE when every transfer of p goes between nodes whose route is fixed:
 * one question per connection (fs_coll_topo_route_fixed remembers its
 * answers per node pair, so a table of the pairs asked here cost more than
 * it saved). */
gboolean fs_coll_plan_routes_fixed(const FsCollPlan *p, FsCollRouteFixedFn fixed, void *ctx)
{
  g_autofree gboolean *conn_seen = g_new0(gboolean, p->n_conns + 1); /* one look per connection */
  for (guint i = 0; i < p->steps->len; i++) {
    const FsCollStep *s = fs_coll_plan_step_at(p, i);
    if (s->kind != FS_STEP_XFER || conn_seen[s->conn])
      continue;
    conn_seen[s->conn] = TRUE;
    int a = fs_coll_ep_node(p->comm, s->src, s->channel);
    int b = fs_coll_ep_node(p->comm, s->dst, s->channel);
    if (a < 0 || b < 0 || !fixed(ctx, a, b))
      return FALSE;
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
    guint c = fs_coll_plan_step_at(p, i)->channel;
    if (c >= nch)
      goto out;
    cs.off[c + 1]++;
  }
  for (guint c = 0; c < nch; c++)
    cs.off[c + 1] += cs.off[c];
  {
    g_autofree guint *fill = g_new0(guint, nch);
    for (guint i = 0; i < n; i++) {
      guint c = fs_coll_plan_step_at(p, i)->channel;
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
  if (k < 2 || k > G_MAXUINT8 || !fs_coll_plan_routes_fixed(p, route_fixed, ctx))
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
    map[i] = keep[fs_coll_plan_step_at(p, i)->channel] ? m++ : FS_STEP_NONE;
  for (guint i = 0; i < n; i++) {
    const FsCollStep *s = fs_coll_plan_step_at(p, i);
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
