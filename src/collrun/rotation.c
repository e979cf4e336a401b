/* rotation.c — NCCL's tree and the ring's phases made for one channel of each
 * rotation.  See rotation.h. */
#include "collrun/rotation.h"

#include <string.h>

#include "coll/comm.h"
#include "collrun/rails-private.h"

struct FsCollRotation {
  FsChannelId *alias; /* per channel: its orbit's first member, or itself */
  guint n;            /* channels aliased (the network's when found) */
  guint merged;       /* channels aliased to another */
  FsCollRails *watches;
};

guint fs_coll_rotation_shift(const FsComm *comm, const FsCollAlgo *algo, const FsCollRequest *req,
                             guint *order)
{
  *order = 0;
  guint mult = algo->rotates != NULL ? algo->rotates(req->op) : 0;
  if (mult == 0 || req->nchannels < 2 || !fs_comm_hosts_uniform(comm) ||
      algo->unsupported(comm, req->op) != NULL)
    return 0;
  guint m, s = fs_comm_ring_rotation(comm, mult, &m);
  if (s == 0 || req->nchannels % (s * m) != 0 ||
      fs_coll_channel_bytes(req->bytes, req->dtype, req->nchannels, 0) !=
        fs_coll_channel_bytes(req->bytes, req->dtype, req->nchannels, req->nchannels - 1))
    return 0;
  *order = m;
  return s;
}

/* Pairs every distinct transfer (src, dst) of plan, whose made channels
 * rotate by s with order m, with its images k = 0 … m−1; their node
 * pairs into made. */
static gboolean align_plan(FsCollAlign *k, const FsComm *comm, const FsCollPlan *plan, guint s,
                           guint m, GArray *made)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint i = 0; i < fs_coll_plan_n_steps(plan); i++) {
    const FsCollStep *st = fs_coll_plan_step(plan, i);
    if (st->kind != FS_STEP_XFER)
      continue;
    if (FS_EP_KIND(st->src) != FS_EP_RANK_KIND || FS_EP_KIND(st->dst) != FS_EP_RANK_KIND ||
        st->src >= (1u << 24) || st->dst >= (1u << 24))
      return FALSE;
    /* A rank's node is its GPU whatever the channel: a pair once. */
    guint64 key = (guint64)st->src << 24 | st->dst;
    if (g_hash_table_contains(seen, &key))
      continue;
    g_hash_table_add(seen, g_memdup2(&key, sizeof key));
    guint ch = st->channel;
    int s0 = fs_coll_ep_node(comm, st->src, ch), d0 = fs_coll_ep_node(comm, st->dst, ch);
    for (guint j = 0; j < m; j++) {
      guint sj = fs_comm_rotate_rank(comm, st->src, j * s);
      guint dj = fs_comm_rotate_rank(comm, st->dst, j * s);
      if (!fs_coll_align_pair(k, j, s0, d0, fs_coll_ep_node(comm, FS_EP_RANK(sj), ch + j * s),
                              fs_coll_ep_node(comm, FS_EP_RANK(dj), ch + j * s)))
        return FALSE;
    }
    int pair[2] = {s0, d0};
    g_array_append_vals(made, pair, 2);
  }
  return TRUE;
}

/* Numbers the members of every component (joined by the pairs) by their
 * rotation from the component's first channel, whose idx the caller set
 * to 0: idx[b] = idx[a] + j mod m for every pair (j, a, b); bad[root]
 * when the pairs disagree. */
static void number_orbits(const FsCollAlign *k, guint m, guint *up, int *idx, gboolean *bad)
{
  const FsCollAlignTriple *t = (const FsCollAlignTriple *)k->triples->data;
  guint nt = k->triples->len;
  /* Relax until nothing changes: components are a few channels wide. */
  for (gboolean changed = TRUE; changed;) {
    changed = FALSE;
    for (guint i = 0; i < nt; i++) {
      int a = idx[t[i].a], b = idx[t[i].b], j = (int)t[i].j;
      if (a >= 0 && b < 0)
        idx[t[i].b] = (a + j) % (int)m, changed = TRUE;
      else if (b >= 0 && a < 0)
        idx[t[i].a] = (b - j + (int)m) % (int)m, changed = TRUE;
      else if (a >= 0 && b >= 0 && b != (a + j) % (int)m)
        bad[fs_coll_uf_find(up, t[i].a)] = TRUE;
    }
  }
}

/* The orbits and watches of the pairs found (rotation.h): a component
 * whose channels are numbered 0 … m−1 once each, of one capacity, is an
 * orbit aliased to its member 0; every channel of another component is
 * watched with the channels paired with it, and every channel of the made
 * flows there alone, below its capacity. */
static FsCollRotation *classify(const FsCollAlign *k, guint m)
{
  guint nc = k->nc, nt = k->triples->len;
  const FsCollAlignTriple *t = (const FsCollAlignTriple *)k->triples->data;
  g_autofree guint *up = g_new(guint, nc);
  for (guint c = 0; c < nc; c++)
    up[c] = c;
  for (guint i = 0; i < nt; i++)
    up[fs_coll_uf_find(up, t[i].a)] = fs_coll_uf_find(up, t[i].b);
  g_autofree int *idx = g_new(int, nc);
  g_autofree gboolean *bad = g_new0(gboolean, nc), *member = g_new0(gboolean, nc);
  g_autofree guint *size = g_new0(guint, nc);
  g_autofree guint64 *seen_idx = g_new0(guint64, nc);
  g_autofree FsChannelId *first = g_new(FsChannelId, nc);
  memset(idx, 0xff, sizeof(int) * nc);
  for (guint i = 0; i < nt; i++)
    member[t[i].a] = member[t[i].b] = TRUE;
  /* Seed each component at its smallest channel. */
  for (guint c = nc; c-- > 0;)
    if (member[c])
      first[fs_coll_uf_find(up, c)] = c;
  for (guint c = 0; c < nc; c++)
    if (member[c] && first[fs_coll_uf_find(up, c)] == c)
      idx[c] = 0;
  number_orbits(k, m, up, idx, bad);
  for (guint c = 0; c < nc; c++) {
    if (!member[c])
      continue;
    guint r = fs_coll_uf_find(up, c);
    guint64 bit = idx[c] >= 0 ? G_GUINT64_CONSTANT(1) << idx[c] : 0;
    bad[r] |= idx[c] < 0 || (seen_idx[r] & bit) ||
              fs_flownet_channel_capacity(k->net, c) !=
                fs_flownet_channel_capacity(k->net, first[r]);
    seen_idx[r] |= bit;
    size[r]++;
  }
  FsCollRotation *rot = g_new0(FsCollRotation, 1);
  rot->n = nc;
  rot->alias = g_new(FsChannelId, nc);
  rot->watches = fs_coll_rails_alloc();
  g_autofree gboolean *orbit = g_new0(gboolean, nc);
  for (guint c = 0; c < nc; c++) {
    guint r = member[c] ? fs_coll_uf_find(up, c) : c;
    orbit[c] = member[c] && !bad[r] && size[r] == m;
    rot->alias[c] = orbit[c] ? first[r] : c;
    rot->merged += rot->alias[c] != c;
  }
  /* Watches, in channel order of the watched channel. */
  g_autofree gboolean *alone = g_new0(gboolean, nc);
  g_autoptr(GArray) by_b = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  g_autofree guint *head = g_new(guint, nc), *next = g_new(guint, nt);
  memset(head, 0xff, sizeof(guint) * nc);
  for (guint i = nt; i-- > 0;)
    next[i] = head[t[i].b], head[t[i].b] = i;
  for (guint b = 0; b < nc; b++) {
    if (head[b] == G_MAXUINT || orbit[b])
      continue;
    g_array_set_size(by_b, 0);
    for (guint i = head[b]; i != G_MAXUINT; i = next[i]) {
      g_array_append_val(by_b, t[i].a);
      alone[t[i].a] = TRUE;
    }
    fs_coll_rails_add_watch(rot->watches, (const FsChannelId *)(void *)by_b->data, by_b->len,
                            fs_flownet_channel_capacity(k->net, b), FALSE);
  }
  for (FsChannelId a = 0; a < nc; a++)
    if (alone[a])
      fs_coll_rails_add_watch(rot->watches, &a, 1, fs_flownet_channel_capacity(k->net, a), TRUE);
  return rot;
}

/* TRUE when no path of the made transfers (node pairs made) crosses two
 * channels of one alias. */
static gboolean paths_distinct(FsCollAlign *k, const FsCollRotation *rot, const GArray *made)
{
  g_autofree guint *mark = g_new0(guint, rot->n);
  guint stamp = 0;
  const int *p = (const int *)(const void *)made->data;
  for (guint i = 0; i + 1 < made->len; i += 2) {
    g_array_set_size(k->w0, 0), g_array_set_size(k->h0, 0);
    if (!k->paths(k->ctx, p[i], p[i + 1], 0, k->w0, k->h0))
      return FALSE;
    const FsChannelId *h = (const FsChannelId *)(void *)k->h0->data;
    for (guint pos = 0; pos < k->h0->len; pos += 1 + h[pos]) {
      stamp++;
      for (guint x = 1; x <= h[pos]; x++) {
        FsChannelId c = h[pos + x], a = c < rot->n ? rot->alias[c] : c;
        if (a < rot->n && mark[a] == stamp)
          return FALSE;
        if (a < rot->n)
          mark[a] = stamp;
      }
    }
  }
  return TRUE;
}

FsCollRotation *fs_coll_rotation_new(const FsComm *comm, const FsCollAlgo *algo,
                                     const FsCollRequest *req, const FsFlowNet *net,
                                     FsCollRouteFixedFn fixed, FsCollRoutePathsFn paths,
                                     void *ctx)
{
  guint m, s = fs_coll_rotation_shift(comm, algo, req, &m);
  if (s == 0 || fixed == NULL || paths == NULL || m > 64 || algo->loop_bytes == NULL)
    return NULL;
  /* The made channels' transfers: those of one loop (the tree's edges). */
  FsCollRequest one = *req;
  uint64_t q = algo->loop_bytes(comm, req);
  if (q == 0)
    return NULL;
  one.bytes = q * req->nchannels;
  one.rotation = s;
  one.rotation_order = m;
  /* A ring's first step of each loop: every neighbour pair once. */
  one.max_ring_steps = algo->ring_steps != NULL && algo->ring_steps(comm, req) > 0 ? 1 : 0;
  g_autoptr(FsCollPlan) plan = fs_coll_plan_new(comm, algo, &one, NULL);
  if (plan == NULL)
    return NULL;
  FsCollAlign k;
  fs_coll_align_init(&k, net, fixed, paths, ctx);
  g_autoptr(GArray) made = g_array_new(FALSE, FALSE, sizeof(int));
  FsCollRotation *rot = align_plan(&k, comm, plan, s, m, made) ? classify(&k, m) : NULL;
  if (rot != NULL && !paths_distinct(&k, rot, made))
    g_clear_pointer(&rot, fs_coll_rotation_free);
  fs_coll_align_clear(&k);
  return rot;
}

void fs_coll_rotation_free(FsCollRotation *r)
{
  if (r == NULL)
    return;
  g_free(r->alias);
  fs_coll_rails_free(r->watches);
  g_free(r);
}

guint fs_coll_rotation_n_merged(const FsCollRotation *r)
{
  return r->merged;
}

guint fs_coll_rotation_n_watched(const FsCollRotation *r)
{
  return fs_coll_rails_n_watched(r->watches);
}

void fs_coll_rotation_begin(const FsCollRotation *r, FsFlowNet *net)
{
  fs_flownet_set_alias(net, r->alias, r->n);
  fs_coll_rails_watch(r->watches, net);
}

gboolean fs_coll_rotation_end(const FsCollRotation *r, FsFlowNet *net)
{
  fs_flownet_set_alias(net, NULL, 0);
  return fs_coll_rails_held(r->watches, net);
}
