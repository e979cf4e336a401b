/* dedup.c — channels that time alike in the analytic model.  See dedup.h. */
#include "collrun/dedup.h"

#include "core/rng.h"

typedef struct {
  const FsCollPlan *plan;
  const FsCollStep *st;
  guint *off, *idx, *pos; /* steps of each channel in step order (CSR), position in it */
  guint *prof;            /* per step: route profile id (transfers), 0 otherwise */
  const double *caps;     /* per step: the shared-link cap, or NULL */
} Chans;

/* TRUE when channels a and b time alike step for step (dedup.h); with
 * a == b, TRUE when every dependency of the channel stays inside it. */
static gboolean channels_alike(const Chans *cs, guint a, guint b)
{
  guint na = cs->off[a + 1] - cs->off[a];
  if (na != cs->off[b + 1] - cs->off[b])
    return FALSE;
  for (guint k = 0; k < na; k++) {
    guint i = cs->idx[cs->off[a] + k], j = cs->idx[cs->off[b] + k];
    const FsCollStep *x = &cs->st[i], *y = &cs->st[j];
    if (x->kind != y->kind || x->bytes != y->bytes || x->inter != y->inter ||
        x->ring_head != y->ring_head ||
        x->n_deps != y->n_deps || x->n_credits != y->n_credits || cs->prof[i] != cs->prof[j] ||
        (cs->caps != NULL && cs->caps[i] != cs->caps[j]))
      return FALSE;
    guint nd, nc;
    const uint32_t *dx = fs_coll_plan_deps(cs->plan, i, &nd);
    const uint32_t *dy = fs_coll_plan_deps(cs->plan, j, &nd);
    for (guint d = 0; d < nd; d++)
      if (cs->st[dx[d]].channel != a || cs->st[dy[d]].channel != b ||
          cs->pos[dx[d]] != cs->pos[dy[d]] ||
          fs_coll_step_same_conn(&cs->st[dx[d]], x) != fs_coll_step_same_conn(&cs->st[dy[d]], y))
        return FALSE;
    const uint32_t *cx = fs_coll_plan_credits(cs->plan, i, &nc);
    const uint32_t *cy = fs_coll_plan_credits(cs->plan, j, &nc);
    for (guint d = 0; d < nc; d++)
      if (cs->st[cx[d]].channel != a || cs->st[cy[d]].channel != b ||
          cs->pos[cx[d]] != cs->pos[cy[d]])
        return FALSE;
  }
  return TRUE;
}

/* Route profile ids (from 1) of every transfer; FALSE when one is refused. */
static gboolean profile_steps(Chans *cs, guint n, FsCollRouteProfileFn profile, void *ctx)
{
  const FsComm *comm = fs_coll_plan_comm(cs->plan);
  g_autoptr(GHashTable) pairs = g_hash_table_new_full(fs_hash64_key, g_int64_equal, g_free, NULL);
  g_autoptr(GHashTable) ids = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
                                                    (GDestroyNotify)g_bytes_unref, NULL);
  g_autoptr(GByteArray) buf = g_byte_array_new();
  for (guint i = 0; i < n; i++) {
    const FsCollStep *s = &cs->st[i];
    cs->prof[i] = 0;
    if (s->kind != FS_STEP_XFER)
      continue;
    int a = fs_coll_ep_node(comm, s->src, s->channel), b = fs_coll_ep_node(comm, s->dst, s->channel);
    if (a < 0 || b < 0)
      return FALSE;
    gint64 k = ((gint64)a << 32) | (guint)b;
    guint id = GPOINTER_TO_UINT(g_hash_table_lookup(pairs, &k));
    if (id == 0) {
      g_byte_array_set_size(buf, 0);
      if (!profile(ctx, a, b, buf))
        return FALSE;
      g_autoptr(GBytes) key = g_bytes_new(buf->data, buf->len);
      id = GPOINTER_TO_UINT(g_hash_table_lookup(ids, key));
      if (id == 0) {
        id = g_hash_table_size(ids) + 1;
        g_hash_table_insert(ids, g_bytes_ref(key), GUINT_TO_POINTER(id));
      }
      g_hash_table_insert(pairs, g_memdup2(&k, sizeof k), GUINT_TO_POINTER(id));
    }
    cs->prof[i] = id;
  }
  return TRUE;
}

/* See dedup.h: groups the channels whose steps match one for one (same shape, same route
 * profile by profile(ctx, a, b, buf), asked once per rank pair) and keeps one channel per
 * group. Costs one pass over the steps plus a profile per distinct pair; returns 0 as soon as a
 * step crosses channels or a profile is refused. */
guint64 fs_coll_plan_distinct_channels(const FsCollPlan *plan, FsCollRouteProfileFn profile,
                                       void *ctx, const double *step_caps, guint *kinds)
{
  *kinds = 0;
  guint nch = fs_coll_plan_request(plan)->nchannels, n = fs_coll_plan_n_steps(plan);
  if (nch < 2 || nch > 64 || fs_coll_plan_width(plan) != 1 || n == 0 || profile == NULL)
    return 0;
  Chans cs = {plan, fs_coll_plan_step(plan, 0), g_new0(guint, nch + 1), g_new(guint, n),
              g_new(guint, n), g_new(guint, n), step_caps};
  guint64 mask = 0;
  guint reps[64], nrep = 0;
  for (guint i = 0; i < n; i++) {
    if (cs.st[i].channel >= nch)
      goto out;
    cs.off[cs.st[i].channel + 1]++;
  }
  for (guint c = 0; c < nch; c++)
    cs.off[c + 1] += cs.off[c];
  {
    g_autofree guint *fill = g_new0(guint, nch);
    for (guint i = 0; i < n; i++) {
      guint c = cs.st[i].channel;
      cs.pos[i] = fill[c];
      cs.idx[cs.off[c] + fill[c]++] = i;
    }
  }
  if (!profile_steps(&cs, n, profile, ctx))
    goto out;
  /* Each channel joins the first kind it times like, else starts one. */
  for (guint c = 0; c < nch; c++) {
    guint r = 0;
    while (r < nrep && !channels_alike(&cs, reps[r], c))
      r++;
    if (r < nrep)
      continue;
    if (!channels_alike(&cs, c, c)) {
      nrep = 0; /* a dependency leaves the channel */
      goto out;
    }
    reps[nrep++] = c;
  }
  if (nrep < nch)
    for (guint r = 0; r < nrep; r++)
      mask |= (guint64)1 << reps[r];
out:
  if (mask != 0)
    *kinds = nrep;
  g_free(cs.off);
  g_free(cs.idx);
  g_free(cs.pos);
  g_free(cs.prof);
  return mask;
}
