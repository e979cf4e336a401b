/* rails.c — the NVLS tree's mirrored rails.  See rails.h. */
#include "collrun/rails-private.h"

#include <string.h>

#include "coll/comm.h"

FsCollRails *fs_coll_rails_alloc(void)
{
  FsCollRails *r = g_new0(FsCollRails, 1);
  r->members = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  r->off = g_array_new(FALSE, FALSE, sizeof(guint));
  r->cap = g_array_new(FALSE, FALSE, sizeof(double));
  r->strict = g_array_new(FALSE, FALSE, sizeof(gboolean));
  guint zero = 0;
  g_array_append_val(r->off, zero);
  return r;
}

void fs_coll_rails_add_watch(FsCollRails *r, const FsChannelId *m, guint n, double cap,
                             gboolean strict)
{
  g_array_append_vals(r->members, m, n);
  guint end = r->members->len;
  g_array_append_val(r->off, end);
  g_array_append_val(r->cap, cap);
  g_array_append_val(r->strict, strict);
}

void fs_coll_align_init(FsCollAlign *k, const FsFlowNet *net, FsCollRouteFixedFn fixed,
                        FsCollRoutePathsFn paths, void *ctx)
{
  *k = (FsCollAlign){.net = net, .fixed = fixed, .paths = paths, .ctx = ctx,
                     .nc = fs_flownet_n_channels(net)};
  k->seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  k->triples = g_array_new(FALSE, FALSE, sizeof(FsCollAlignTriple));
  k->w0 = g_array_new(FALSE, FALSE, sizeof(double));
  k->w = g_array_new(FALSE, FALSE, sizeof(double));
  k->h0 = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  k->h = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
}

void fs_coll_align_clear(FsCollAlign *k)
{
  g_hash_table_unref(k->seen);
  g_array_unref(k->triples);
  g_array_unref(k->w0);
  g_array_unref(k->w);
  g_array_unref(k->h0);
  g_array_unref(k->h);
}

gboolean fs_coll_align_pair(FsCollAlign *k, guint j, int s0, int d0, int sj, int dj)
{
  if (s0 < 0 || d0 < 0 || sj < 0 || dj < 0 || !k->fixed(k->ctx, s0, d0) ||
      !k->fixed(k->ctx, sj, dj))
    return FALSE;
  g_array_set_size(k->w0, 0), g_array_set_size(k->h0, 0);
  g_array_set_size(k->w, 0), g_array_set_size(k->h, 0);
  if (!k->paths(k->ctx, s0, d0, 0, k->w0, k->h0) || !k->paths(k->ctx, sj, dj, 0, k->w, k->h) ||
      k->w0->len != k->w->len || k->h0->len != k->h->len)
    return FALSE;
  for (guint i = 0; i < k->w0->len; i++)
    if (g_array_index(k->w0, double, i) != g_array_index(k->w, double, i))
      return FALSE;
  const FsChannelId *x = (const FsChannelId *)k->h0->data, *y = (const FsChannelId *)k->h->data;
  for (guint pos = 0; pos < k->h0->len;) {
    guint n = x[pos];
    if (y[pos] != n || pos + 1 + n > k->h0->len)
      return FALSE;
    for (guint t = 1; t <= n; t++) {
      FsCollAlignTriple tr = {j, x[pos + t], y[pos + t]};
      if (tr.a >= k->nc || tr.b >= k->nc || tr.a >= (1u << 28) || tr.b >= (1u << 28) ||
          fs_flownet_channel_latency(k->net, tr.a) != fs_flownet_channel_latency(k->net, tr.b))
        return FALSE;
      guint64 key = (guint64)j << 56 | (guint64)tr.a << 28 | tr.b;
      if (!g_hash_table_contains(k->seen, &key)) {
        g_hash_table_add(k->seen, g_memdup2(&key, sizeof key));
        g_array_append_val(k->triples, tr);
      }
    }
    pos += 1 + n;
  }
  return TRUE;
}

/* Both directions between rank r0's node (and rank rj's) and node x0 (and
 * xj) for local rank j. */
static gboolean both_ways(FsCollAlign *k, guint j, int r0, int x0, int rj, int xj)
{
  return fs_coll_align_pair(k, j, r0, x0, rj, xj) && fs_coll_align_pair(k, j, x0, r0, xj, rj);
}

/* Every NVLS leg (each host's ranks to and from each NVLS switch its
 * channels use) and every tree edge (ranks j of a host and of its parent,
 * in the trees req's channels use), for every local rank j. */
static gboolean align_all(FsCollAlign *k, const FsComm *comm, const FsCollRequest *req, guint L)
{
  guint nh = fs_comm_n_hosts(comm), nch = req->nchannels;
  for (guint h = 0; h < nh; h++) {
    guint m;
    const guint *ranks = fs_comm_host_ranks(comm, h, &m);
    for (guint ch = 0; ch < nch; ch++) {
      int sw = fs_coll_ep_node(comm, FS_EP_NVLS(h), ch);
      gboolean seen = FALSE;
      for (guint e = 0; e < ch && !seen; e++)
        seen = fs_coll_ep_node(comm, FS_EP_NVLS(h), e) == sw;
      for (guint j = 0; j < L && !seen; j++)
        if (!both_ways(k, j, fs_coll_ep_node(comm, FS_EP_RANK(ranks[0]), ch), sw,
                       fs_coll_ep_node(comm, FS_EP_RANK(ranks[j]), ch), sw))
          return FALSE;
    }
  }
  for (guint t = 0; t < (nch >= 2 ? 2u : 1u); t++)
    for (guint h = 0; h < nh; h++) {
      int parent, c0, c1;
      fs_coll_btree(nh, t, h, &parent, &c0, &c1);
      if (parent < 0)
        continue;
      guint m;
      const guint *a = fs_comm_host_ranks(comm, h, &m);
      const guint *b = fs_comm_host_ranks(comm, (guint)parent, &m);
      for (guint j = 0; j < L; j++)
        if (!both_ways(k, j, fs_coll_ep_node(comm, FS_EP_RANK(a[0]), 0),
                       fs_coll_ep_node(comm, FS_EP_RANK(b[0]), 0),
                       fs_coll_ep_node(comm, FS_EP_RANK(a[j]), 0),
                       fs_coll_ep_node(comm, FS_EP_RANK(b[j]), 0)))
          return FALSE;
    }
  return TRUE;
}

static int by_b(gconstpointer x, gconstpointer y)
{
  const FsCollAlignTriple *p = x, *q = y;
  return p->b != q->b ? (p->b < q->b ? -1 : 1) : p->a != q->a ? (p->a < q->a ? -1 : 1)
                                                              : (p->j > q->j) - (p->j < q->j);
}

/* The watches of the pairs found (rails.h): channels joined by pairs form
 * components; a clean one is one channel a of rank 0 paired once per rank
 * with distinct channels of its capacity (a itself for rank 0); every
 * channel of another component is watched, with the channels paired with
 * it.  Deterministic: watches in channel order. */
static FsCollRails *classify(const FsCollAlign *k, guint L)
{
  guint nc = k->nc, nt = k->triples->len;
  g_autofree guint *up = g_new(guint, nc);
  for (guint c = 0; c < nc; c++)
    up[c] = c;
  FsCollAlignTriple *t = (FsCollAlignTriple *)k->triples->data;
  for (guint i = 0; i < nt; i++)
    up[fs_coll_uf_find(up, t[i].a)] = fs_coll_uf_find(up, t[i].b);
  g_autofree guint *a_of = g_new(guint, nc), *n_pairs = g_new0(guint, nc), *n_b = g_new0(guint, nc);
  g_autofree guint64 *jmask = g_new0(guint64, nc);
  g_autofree gboolean *bad = g_new0(gboolean, nc);
  memset(a_of, 0xff, sizeof(guint) * nc);
  for (guint i = 0; i < nt; i++) {
    guint r = fs_coll_uf_find(up, t[i].a);
    if (a_of[r] == G_MAXUINT)
      a_of[r] = t[i].a;
    guint64 bit = G_GUINT64_CONSTANT(1) << t[i].j;
    bad[r] |= a_of[r] != t[i].a || (jmask[r] & bit) || ++n_b[t[i].b] > 1 ||
              fs_flownet_channel_capacity(k->net, t[i].a) !=
                fs_flownet_channel_capacity(k->net, t[i].b);
    jmask[r] |= bit;
    n_pairs[r]++;
  }
  guint64 all = L == 64 ? G_MAXUINT64 : (G_GUINT64_CONSTANT(1) << L) - 1;
  FsCollRails *rails = fs_coll_rails_alloc();
  g_autofree gboolean *alone = g_new0(gboolean, nc);
  g_autoptr(GArray) sorted = g_array_copy(k->triples);
  g_array_sort(sorted, by_b);
  t = (FsCollAlignTriple *)sorted->data;
  for (guint i = 0; i < nt;) {
    guint e = i, r = fs_coll_uf_find(up, t[i].b);
    while (e < nt && t[e].b == t[i].b)
      e++;
    if (bad[r] || n_pairs[r] != L || jmask[r] != all) {
      g_autofree FsChannelId *m = g_new(FsChannelId, e - i);
      for (guint x = i; x < e; x++) {
        m[x - i] = t[x].a;
        alone[t[x].a] = TRUE;
      }
      fs_coll_rails_add_watch(rails, m, e - i, fs_flownet_channel_capacity(k->net, t[i].b), FALSE);
    }
    i = e;
  }
  /* A channel of rank 0 never a bottleneck: its flows' images then have
   * theirs on clean channels. */
  for (FsChannelId a = 0; a < nc; a++)
    if (alone[a])
      fs_coll_rails_add_watch(rails, &a, 1, fs_flownet_channel_capacity(k->net, a), TRUE);
  return rails;
}

/* See rails.h: the pairs of every rank's routes with rank 0's, then their
 * components and watches (classify). */
FsCollRails *fs_coll_rails_new(const FsComm *comm, const FsCollAlgo *algo,
                               const FsCollRequest *req, const FsFlowNet *net,
                               FsCollRouteFixedFn fixed, FsCollRoutePathsFn paths, void *ctx)
{
  if (algo->nccl != FS_NCCL_ALGO_NVLS_TREE || req->op != FS_COLL_ALL_REDUCE || fixed == NULL ||
      paths == NULL || fs_comm_n_hosts(comm) < 2 || !fs_comm_hosts_uniform(comm) ||
      algo->unsupported(comm, req->op) != NULL)
    return NULL;
  guint L;
  fs_comm_host_ranks(comm, 0, &L);
  if (L < 2 || L > 64)
    return NULL;
  FsCollAlign k;
  fs_coll_align_init(&k, net, fixed, paths, ctx);
  FsCollRails *rails = align_all(&k, comm, req, L) ? classify(&k, L) : NULL;
  fs_coll_align_clear(&k);
  return rails;
}

void fs_coll_rails_free(FsCollRails *r)
{
  if (r == NULL)
    return;
  g_array_unref(r->members);
  g_array_unref(r->off);
  g_array_unref(r->cap);
  g_array_unref(r->strict);
  g_free(r);
}

guint fs_coll_rails_n_watched(const FsCollRails *r)
{
  return r->cap->len;
}

void fs_coll_rails_watch(const FsCollRails *r, FsFlowNet *net)
{
  const guint *off = (const guint *)r->off->data;
  const FsChannelId *m = (const FsChannelId *)r->members->data;
  for (guint w = 0; w < r->cap->len; w++)
    fs_flownet_watch_add(net, m + off[w], off[w + 1] - off[w]);
}

gboolean fs_coll_rails_held(const FsCollRails *r, FsFlowNet *net)
{
  gboolean held = TRUE;
  /* Up to capacity (to rounding): the images' rates fit; below it by more
   * than rounding: never a bottleneck. */
  for (guint w = 0; w < r->cap->len && held; w++) {
    double peak = fs_flownet_watch_peak(net, w), cap = g_array_index(r->cap, double, w);
    held = g_array_index(r->strict, gboolean, w) ? peak < cap * (1 - 1e-9)
                                                 : peak <= cap * (1 + 1e-9);
  }
  fs_flownet_watch_clear(net);
  return held;
}
