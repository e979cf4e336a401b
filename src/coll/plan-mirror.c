/* plan-mirror.c — folding while building (fs_coll_plan_new_folded): the
 * algorithm makes every channel, one after another; a channel is compared
 * step for step with the channels kept so far while it is made and stored
 * only from its first step that differs (mirroring), and dropped when it
 * ends equal to a kept one.  The plan comes out as fs_coll_plan_fold makes
 * it from the whole plan (plan-fold.c).  State: FoldBuild (plan-private.h). */
#include "coll/plan-private.h"

static void fold_channel_end(FsPlanBuilder *b);

/* The index of the lowest set bit of m (m != 0). */
static inline guint lowest_bit(guint64 m)
{
#if defined(__GNUC__) || defined(__clang__)
  return (guint)__builtin_ctzll(m);
#else
  guint i = 0;
  while (!(m & 1))
    m >>= 1, i++;
  return i;
#endif
}

/* Folding while building: the stored id of virtual id v, which must be a
 * step of the channel being made (else folding this way fails). */
uint32_t fs_plan_fold_stored(FsPlanBuilder *b, uint32_t v)
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
gboolean fs_plan_fold_step(FsPlanBuilder *b, guint ch)
{
  FoldBuild *f = &b->fold;
  if (f->failed)
    return FALSE;
  if (ch == f->cur && f->open)
    return TRUE;
  /* Channel by channel only: a step of an earlier channel fails. */
  if (ch >= G_N_ELEMENTS(f->seen) || f->seen[ch] || (f->cur != G_MAXUINT && ch < f->cur)) {
    f->failed = TRUE;
    return FALSE;
  }
  if (f->open)
    fold_channel_end(b);
  f->cur = ch;
  f->open = TRUE;
  f->seen[ch] = TRUE;
  f->vbase[ch] = f->vcount;
  f->sbase[ch] = b->plan->steps->len;
  f->cbase[ch] = b->plan->n_conns;
  /* Every kept channel is a candidate until a step differs; whether its
   * NVLS switches are this channel's, once per channel. */
  f->alive = f->kept;
  f->mirror = f->alive != 0;
  f->nvls_same = 0;
  const FsComm *comm = b->plan->comm;
  for (guint64 left = f->alive; left != 0; left &= left - 1) {
    guint r = lowest_bit(left), h = 0, nh = fs_comm_n_hosts(comm);
    while (h < nh && fs_comm_nvls_switch(comm, h, r) == fs_comm_nvls_switch(comm, h, ch))
      h++;
    if (h == nh)
      f->nvls_same |= G_GUINT64_CONSTANT(1) << r;
  }
  return TRUE;
}

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
    const FsCollStep *x = fs_coll_plan_step_at(p, br + k), *y = fs_coll_plan_step_at(p, bc + k);
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

/* Mirroring (FoldBuild): stores the first k steps of the current channel
 * c, which are kept channel r's first k steps (the same transfers, bytes and
 * dependencies relative to the channel's first step), on c's own
 * connections, as add_step and fs_plan_xfer_lane would have stored them.
 * Ends the mirroring of c.  Cost: O(k + their dependencies). */
static void fold_materialize(FsPlanBuilder *b, guint r, uint32_t k)
{
  FsCollPlan *p = b->plan;
  FoldBuild *f = &b->fold;
  guint c = f->cur;
  uint32_t br = f->sbase[r], bc = f->sbase[c];
  g_assert(p->steps->len == bc && b->fifo_prev->len == bc);
  f->mirror = FALSE;
  f->alive = 0;
  for (uint32_t i = 0; i < k; i++) {
    FsCollStep s = *fs_coll_plan_step_at(p, br + i);
    s.channel = (uint16_t)c;
    s.dep_off = p->deps->len;
    reserve(p->deps, &b->deps_cap, s.dep_off + s.n_deps + 1);
    const uint32_t *dr = (const uint32_t *)p->deps->data + fs_coll_plan_step_at(p, br + i)->dep_off;
    uint32_t *d = (uint32_t *)p->deps->data + s.dep_off;
    for (guint j = 0; j < s.n_deps; j++)
      d[j] = dr[j] - br + bc;
    p->deps->len = s.dep_off + s.n_deps;
    uint32_t fifo = ((const uint32_t *)b->fifo_prev->data)[br + i];
    if (fifo != FS_STEP_NONE)
      fifo = fifo - br + bc;
    if (s.kind == FS_STEP_XFER) {
      ConnKey key = {s.src, s.dst, c, s.lane};
      ConnEntry *conn = fs_plan_conn_get(&b->conns, &key);
      if (conn->count == 0)
        conn->id = p->n_conns++;
      s.conn = conn->id;
      conn->last = f->vbase[c] + i;
      p->max_conn = MAX(p->max_conn, ++conn->count);
    }
    reserve(p->steps, &b->steps_cap, p->steps->len + 1);
    ((FsCollStep *)p->steps->data)[p->steps->len++] = s;
    reserve(b->fifo_prev, &b->fifo_cap, b->fifo_prev->len + 1);
    ((uint32_t *)b->fifo_prev->data)[b->fifo_prev->len++] = fifo;
  }
}

/* Mirroring (FoldBuild): the step s (dependencies deps, n of them, virtual
 * ids, FS_STEP_NONE ignored) is about to be made in channel s->channel.
 * TRUE with its virtual id in *id when the channel is mirrored and s equals
 * step for step what a kept channel it still matches has there (what
 * fold_equal compares: kind, endpoints, bytes, lane, ring_head, dependencies relative
 * to the channel's first step; `inter` and the endpoints' topology nodes
 * follow from the endpoints, but for NVLS switches on channels whose
 * switches differ (FoldBuild.nvls_same); the FIFO dependency follows from
 * the same endpoints before); nothing is stored.  FALSE: make it as usual
 * (the steps made so far are then stored).  s->inter need not be set. */
gboolean fs_plan_fold_mirror(FsPlanBuilder *b, const FsCollStep *s, const uint32_t *deps, guint n,
                            uint32_t *id)
{
  FsCollPlan *p = b->plan;
  FoldBuild *f = &b->fold;
  if (b->count_only || f->vcount >= fs_plan_virtual_limit(b) || !fs_plan_fold_step(b, s->channel) ||
      !f->mirror)
    return FALSE;
  guint c = f->cur;
  uint32_t k = f->vcount - f->vbase[c];
  const uint32_t *all = (const uint32_t *)p->deps->data;
  const uint32_t *fifo = (const uint32_t *)b->fifo_prev->data;
  guint64 alive = f->alive, left = alive;
  guint last = 0;
  while (left != 0) {
    guint r = lowest_bit(left);
    left &= left - 1;
    last = r;
    gboolean same = k < f->count[r];
    const FsCollStep *x = same ? fs_coll_plan_step_at(p, f->sbase[r] + k) : NULL;
    if (same)
      same = x->kind == s->kind && x->src == s->src && x->dst == s->dst &&
             x->bytes == s->bytes && x->lane == s->lane && x->ring_head == s->ring_head;
    if (same && s->kind == FS_STEP_XFER && !(f->nvls_same & (G_GUINT64_CONSTANT(1) << r)) &&
        (FS_EP_KIND(s->src) == FS_EP_NVLS_KIND || FS_EP_KIND(s->dst) == FS_EP_NVLS_KIND))
      same = fs_coll_ep_node(p->comm, s->src, r) == fs_coll_ep_node(p->comm, s->src, c) &&
             fs_coll_ep_node(p->comm, s->dst, r) == fs_coll_ep_node(p->comm, s->dst, c);
    guint m = 0;
    const uint32_t *dx = same ? all + x->dep_off : NULL;
    for (guint j = 0; same && j < n; j++) {
      if (deps[j] == FS_STEP_NONE)
        continue;
      /* A dependency outside the channel fails folding (fold_stored). */
      same = deps[j] >= f->vbase[c] && m < x->n_deps &&
             dx[m] - f->sbase[r] == deps[j] - f->vbase[c];
      m++;
    }
    if (same)
      same = x->n_deps == m + (fifo[f->sbase[r] + k] != FS_STEP_NONE);
    if (!same)
      alive &= ~(G_GUINT64_CONSTANT(1) << r);
  }
  if (alive == 0) {
    /* Every candidate matched the k steps before this one. */
    fold_materialize(b, last, k);
    return FALSE;
  }
  f->alive = alive;
  *id = f->vcount++;
  return TRUE;
}

/* The channel made last ends: dropped when it equals a kept channel (the
 * first, as fs_coll_plan_fold picks), else kept. */
static void fold_channel_close(FsPlanBuilder *b)
{
  FsCollPlan *p = b->plan;
  FoldBuild *f = &b->fold;
  guint c = f->cur;
  if (f->mirror) {
    /* Mirrored to the end: equal to the first candidate of as many steps. */
    uint32_t nc = f->vcount - f->vbase[c];
    for (guint r = 0; r < c; r++)
      if ((f->alive & (G_GUINT64_CONSTANT(1) << r)) && f->count[r] == nc) {
        f->rep[c] = r;
        f->size[r]++;
        f->mirror = FALSE;
        f->alive = 0;
        return;
      }
    /* Longer candidates only: c is kept, its steps are theirs so far. */
    for (guint r = 0; r < c; r++)
      if (f->alive & (G_GUINT64_CONSTANT(1) << r)) {
        fold_materialize(b, r, nc);
        break;
      }
  }
  guint nc = p->steps->len - f->sbase[c];
  for (guint r = 0; r < c; r++)
    if (f->rep[r] == r && f->seen[r] && fold_equal(b, r, c, nc)) {
      f->rep[c] = r;
      f->size[r]++;
      if (nc > 0)
        g_array_set_size(p->deps, fs_coll_plan_step_at(p, f->sbase[c])->dep_off);
      g_array_set_size(p->steps, f->sbase[c]);
      g_array_set_size(b->fifo_prev, f->sbase[c]);
      p->n_conns = f->cbase[c];
      return;
    }
  f->rep[c] = c;
  f->size[c] = 1;
  f->count[c] = nc;
  f->kept |= G_GUINT64_CONSTANT(1) << c;
}

/* fold_channel_close, then the check of fs_plan_channel_mirrored: a channel
 * an algorithm claimed to mirror kept channel r must have been found equal
 * to r. */
static void fold_channel_end(FsPlanBuilder *b)
{
  FoldBuild *f = &b->fold;
  guint c = f->cur;
  f->open = FALSE;
  fold_channel_close(b);
  if (f->claimed && f->expect[c] != G_MAXUINT && f->rep[c] != f->expect[c])
    g_error("plan mirroring: %s channel %u was claimed to mirror channel %u, but its steps "
            "differ (built, it %s %u)",
            b->plan->algo->name, c, f->expect[c],
            f->rep[c] == c ? "is kept as channel" : "equals channel", f->rep[c]);
}

/* See plan.h: FABRICSIM_CHECK_MIRRORS, by default on in a build without
 * FS_RELEASE. */
gboolean fs_plan_check_mirrors(void)
{
#ifdef FS_RELEASE
  gboolean on = FALSE;
#else
  gboolean on = TRUE;
#endif
  const char *v = g_getenv("FABRICSIM_CHECK_MIRRORS");
  if (v != NULL && *v != '\0')
    on = g_strcmp0(v, "0") != 0;
  return on;
}

/* See plan.h.  The claimed channel joins the class of the first candidate
 * whose NVLS switches are its own on every host (that candidate's kept
 * representative: the class fold_channel_close would have found). */
gboolean fs_plan_channel_mirrored(FsPlanBuilder *b, guint ch, guint step)
{
  FsCollPlan *p = b->plan;
  FoldBuild *f = &b->fold;
  if (!f->on || f->failed || b->count_only || b->overflow || step == 0 ||
      ch >= G_N_ELEMENTS(f->seen) || f->seen[ch] || (f->cur != G_MAXUINT && ch < f->cur))
    return FALSE;
  /* The channel before ends first: its class decides the candidates'. */
  if (f->open)
    fold_channel_end(b);
  if (!f->claimed) {
    for (guint c = 0; c < G_N_ELEMENTS(f->expect); c++)
      f->expect[c] = G_MAXUINT;
    f->claimed = TRUE;
  }
  const FsComm *comm = p->comm;
  guint nh = fs_comm_n_hosts(comm), rep = G_MAXUINT;
  for (guint r = ch % step; r < ch && rep == G_MAXUINT; r += step) {
    if (!f->seen[r])
      continue;
    guint h = 0;
    while (h < nh && fs_comm_nvls_switch(comm, h, r) == fs_comm_nvls_switch(comm, h, ch))
      h++;
    if (h == nh)
      rep = f->rep[r];
  }
  if (rep == G_MAXUINT)
    return FALSE;
  f->expect[ch] = rep;
  if (fs_plan_check_mirrors())
    return FALSE; /* made and compared: fold_channel_end checks */
  f->cur = ch;
  f->seen[ch] = TRUE;
  f->rep[ch] = rep;
  f->size[rep]++;
  return TRUE;
}

/* Folding while building, once the algorithm is done: TRUE when the plan
 * kept is what fs_coll_plan_fold gives for the whole plan (every class of
 * identical channels of the same size k >= 2, so one member of each is
 * kept, and fixed routes); it is then given width k.  A channel the
 * algorithm made no step of (one rotated from a made one,
 * FsCollRequest.rotation) is empty in the whole plan too: the empty
 * channels are one class there, and the gcd fs_coll_plan_fold takes stays
 * k when their number is a multiple of k (the members it keeps of that
 * class have no step). */
gboolean fs_plan_fold_finish(FsPlanBuilder *b, FsCollRouteFixedFn route_fixed, void *ctx)
{
  FsCollPlan *p = b->plan;
  FoldBuild *f = &b->fold;
  guint nch = p->req.nchannels, k = 0, unseen = 0;
  if (f->failed || f->cur == G_MAXUINT)
    return FALSE;
  if (f->open)
    fold_channel_end(b);
  for (guint c = 0; c < nch; c++)
    if (f->seen[c] && f->rep[c] == c)
      k = k == 0 ? f->size[c] : k;
  for (guint c = 0; c < nch; c++) {
    if (!f->seen[c])
      unseen++;
    else if (f->rep[c] == c && f->size[c] != k)
      return FALSE; /* fs_coll_plan_fold would keep several of a class */
  }
  if (k < 2 || k > G_MAXUINT8 || unseen % k != 0 ||
      !fs_coll_plan_routes_fixed(p, route_fixed, ctx))
    return FALSE;
  p->width = k;
  p->folded_while_built = TRUE;
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
