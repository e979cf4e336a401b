/* collclass.c — the congruence class signature of a GPU group (see
 * collclass.h). */
#include "workload/collclass.h"

#include <string.h>

#include "collrun/coll-topo.h"
#include "net/flow.h"
#include "topo/topo.h"

/* ECMP keys a key-dependent route is compared over. */
#define N_KEYS 4
/* Distinct pairs' words kept for interning (end_pair). */
#define MAX_PAIR_WORDS 4096u

/* The signature is streamed into a SHA-256 through a small buffer. */
typedef struct {
  GChecksum *sum;
  guint64 buf[256];
  guint len;
  /* Renamings by first appearance: topology node → index + 1, channel →
   * index + 1 (0: not seen yet). */
  GHashTable *nodes;
  guint *chans;
  guint n_nodes_seen, n_chans_seen;
  FsCollClassMode mode;
  /* The words of the pair being written (put_route), interned: a pair
   * whose words appeared before is written as its index (pair_words). */
  gboolean in_pair;
  struct PairWords *pair;  /* the words so far (room for cap) */
  guint cap;
  GHashTable *pairs;       /* PairWords* → index + 1 */
} Sig;

/* One pair's words, a key of Sig.pairs. */
typedef struct PairWords {
  guint n;
  guint hash;
  guint64 w[];
} PairWords;

static guint pair_hash(gconstpointer p)
{
  return ((const PairWords *)p)->hash;
}

static gboolean pair_equal(gconstpointer pa, gconstpointer pb)
{
  const PairWords *a = pa, *b = pb;
  return a->n == b->n && a->hash == b->hash && memcmp(a->w, b->w, a->n * sizeof(guint64)) == 0;
}

static void sum_word(Sig *s, guint64 w)
{
  s->buf[s->len++] = w;
  if (s->len == G_N_ELEMENTS(s->buf)) {
    g_checksum_update(s->sum, (const guchar *)s->buf, sizeof s->buf);
    s->len = 0;
  }
}

static void put(Sig *s, guint64 w)
{
  if (!s->in_pair) {
    sum_word(s, w);
    return;
  }
  if (s->pair->n == s->cap) {
    s->cap *= 2;
    s->pair = g_realloc(s->pair, sizeof(PairWords) + s->cap * sizeof(guint64));
  }
  s->pair->w[s->pair->n++] = w;
}

/* Ends the pair's words: into the signature as (1, count, the words) the
 * first time these words appear, as (0, their index) after that — a
 * stream from which the plain one can be read back, so two signatures
 * are equal exactly when their plain streams are, for far fewer bytes
 * hashed (a group's pairs repeat a handful of route profiles).  At most
 * MAX_PAIR_WORDS distinct pairs are kept (memory; renamed channels make
 * most pairs distinct outside PROFILE); later new ones are written whole
 * each time, which reads back as well. */
static void end_pair(Sig *s)
{
  s->in_pair = FALSE;
  PairWords *k = s->pair;
  const guint64 *w = k->w;
  guint n = k->n;
  guint h = n;
  for (guint i = 0; i < n; i++)
    h = (h ^ (guint)(w[i] ^ (w[i] >> 32))) * 16777619u;
  k->hash = h;
  guint idx = GPOINTER_TO_UINT(g_hash_table_lookup(s->pairs, k));
  if (idx != 0) {
    sum_word(s, 0);
    sum_word(s, idx - 1);
    return;
  }
  if (g_hash_table_size(s->pairs) < MAX_PAIR_WORDS) {
    k = g_memdup2(k, sizeof *k + n * sizeof(guint64));
    g_hash_table_insert(s->pairs, k, GUINT_TO_POINTER(g_hash_table_size(s->pairs) + 1));
  }
  sum_word(s, 1);
  sum_word(s, n);
  for (guint i = 0; i < n; i++)
    sum_word(s, w[i]);
}

static guint64 dbits(double d)
{
  guint64 w;
  memcpy(&w, &d, sizeof w);
  return w;
}

/* A topology node, renamed (a node the group never met before gets the
 * next index), with its model. */
static void put_node(Sig *s, const FsTopo *topo, int node)
{
  if (node < 0) {
    put(s, G_MAXUINT64);
    return;
  }
  guint idx = GPOINTER_TO_UINT(g_hash_table_lookup(s->nodes, GINT_TO_POINTER(node + 1)));
  if (idx == 0) {
    idx = ++s->n_nodes_seen;
    g_hash_table_insert(s->nodes, GINT_TO_POINTER(node + 1), GUINT_TO_POINTER(idx));
  }
  put(s, idx);
  put(s, (guint64)(guintptr)fs_topo_node(topo, (guint)node)->model);
}

/* A channel that every key takes, renamed; its capacity and latency when
 * first met. */
static void put_chan(Sig *s, const FsFlowNet *net, FsChannelId ch)
{
  if (s->chans[ch] == 0) {
    s->chans[ch] = ++s->n_chans_seen;
    put(s, 1);
    put(s, dbits(fs_flownet_channel_capacity(net, ch)));
    put(s, (guint64)fs_flownet_channel_latency(net, ch));
  }
  put(s, s->chans[ch]);
}

/* A path's profile: hops, latency sum, bottleneck capacity. */
typedef struct {
  guint len;
  FsTime lat;
  double cap;
} Profile;

static Profile path_profile(const FsFlowNet *net, const FsChannelId *p, guint len)
{
  Profile pr = { len, 0, fs_flownet_path_capacity(net, p, len) };
  for (guint h = 0; h < len; h++)
    pr.lat += fs_flownet_channel_latency(net, p[h]);
  return pr;
}

static gboolean same_profiles(const FsFlowNet *net, const FsRoute *a, const FsRoute *b)
{
  if (a->kind != b->kind || a->n_paths != b->n_paths)
    return FALSE;
  for (guint i = 0; i < a->n_paths; i++) {
    guint la, lb;
    const FsChannelId *pa = fs_route_path(a, i, &la), *pb = fs_route_path(b, i, &lb);
    Profile x = path_profile(net, pa, la), y = path_profile(net, pb, lb);
    if (x.len != y.len || x.lat != y.lat || x.cap != y.cap ||
        g_array_index(a->weights, double, i) != g_array_index(b->weights, double, i))
      return FALSE;
  }
  return TRUE;
}

static gboolean route_has(const FsRoute *r, FsChannelId ch)
{
  for (guint i = 0; i < r->hops->len; i++)
    if (g_array_index(r->hops, FsChannelId, i) == ch)
      return TRUE;
  return FALSE;
}

static gboolean is_fabric_switch(const FsTopo *topo, guint node)
{
  const FsTopoNode *n = fs_topo_node(topo, node);
  return n->kind == FS_NODE_SWITCH && (n->model->u.sw.kind == FS_SWITCH_INFINIBAND ||
                                       n->model->u.sw.kind == FS_SWITCH_ETHERNET);
}

/* A hop written by its figures only, not by identity. */
static void put_figures(Sig *s, const FsFlowNet *net, FsChannelId ch)
{
  put(s, 2);
  put(s, dbits(fs_flownet_channel_capacity(net, ch)));
  put(s, (guint64)fs_flownet_channel_latency(net, ch));
}

/* The words of the route src → dst (put_route interns them); FALSE in
 * *ok when its profile depends on the key. */
static gboolean put_route_words(Sig *s, FsRouter *router, guint src, guint dst, FsRoute *rt,
                                FsRoute *alt, gboolean *ok, gboolean *approx, GError **error)
{
  const FsTopo *topo = fs_router_topo(router);
  const FsFlowNet *net = fs_router_net(router);
  if (!fs_router_route_once(router, src, dst, 0, &rt[0], error))
    return FALSE;
  gboolean keyed = fs_router_last_choices(router) > 0;
  put(s, rt[0].kind);
  put(s, rt[0].n_paths);
  put(s, keyed);
  if (keyed) {
    if (s->mode != FS_COLL_CLASS_PROFILE)
      *approx = TRUE;
    for (guint k = 1; k < N_KEYS; k++) {
      /* Keys far apart, as the executor's transfers draw them. */
      if (!fs_router_route_once(router, src, dst, 0x9e3779b97f4a7c15ull * k, &alt[k - 1], error))
        return FALSE;
      if (!same_profiles(net, &rt[0], &alt[k - 1])) {
        *ok = FALSE;
        return TRUE;
      }
    }
  }
  for (guint i = 0; i < rt[0].n_paths; i++) {
    guint len;
    const FsChannelId *p = fs_route_path(&rt[0], i, &len);
    put(s, dbits(g_array_index(rt[0].weights, double, i)));
    put(s, len);
    for (guint h = 0; h < len; h++) {
      gboolean fixed = TRUE;
      for (guint k = 1; k < N_KEYS && keyed && fixed; k++)
        fixed = route_has(&alt[k - 1], p[h]);
      if (s->mode == FS_COLL_CLASS_LOOSE && fixed && is_fabric_switch(topo, fs_topo_channel_src(topo, p[h])) &&
          is_fabric_switch(topo, fs_topo_channel_dst(topo, p[h]))) {
        fixed = FALSE; /* which spine does not count */
        *approx = TRUE;
      }
      if (fixed && s->mode != FS_COLL_CLASS_PROFILE)
        put_chan(s, net, p[h]);
      else
        put_figures(s, net, p[h]);
    }
  }
  return TRUE;
}

/* The words of the route src → dst as one interned pair (end_pair). */
static gboolean put_route(Sig *s, FsRouter *router, guint src, guint dst, FsRoute *rt,
                          FsRoute *alt, gboolean *ok, gboolean *approx, GError **error)
{
  s->in_pair = TRUE;
  s->pair->n = 0;
  gboolean r = put_route_words(s, router, src, dst, rt, alt, ok, approx, error);
  end_pair(s);
  return r;
}

/* The communicator in rank terms and the tuner's system figures. */
static gboolean put_comm(Sig *s, FsRouter *router, const FsNcclParams *nccl, const guint *nodes,
                         guint n, GError **error)
{
  const FsTopo *topo = fs_router_topo(router);
  g_autoptr(FsComm) c = fs_coll_comm_from_topo(router, nodes, n, nccl->max_channels, error);
  if (c == NULL)
    return FALSE;
  FsCollSysInfo sys;
  if (!fs_coll_sysinfo_from_topo(nccl, router, c, &sys, error))
    return FALSE;
  guint nr = fs_comm_n_rings(c), nh = fs_comm_n_hosts(c), ppn = fs_comm_ppn(c);
  put(s, nr);
  for (guint r = 0; r < nr; r++) {
    const guint *order = fs_comm_ring(c, r);
    for (guint i = 0; i < n; i++)
      put(s, order[i]);
  }
  put(s, dbits(fs_comm_ring_bw(c)));
  put(s, fs_comm_host_rings(c));
  put(s, fs_comm_has_nvls(c));
  for (guint h = 0; h < nh && fs_comm_has_nvls(c); h++)
    for (guint ch = 0; ch < MAX(nccl->max_channels, 1u); ch++)
      put_node(s, topo, fs_comm_nvls_switch(c, h, ch));
  for (guint j = 0; j < ppn; j++)
    put_node(s, topo, fs_comm_collnet_switch(c, j));
  guint ng = fs_comm_collnet_n_groups(c);
  put(s, ng);
  for (guint h = 0; h < nh && ng > 1; h++)
    put(s, fs_comm_collnet_group(c, h));
  for (guint g = 0; g < ng && ng > 1; g++)
    for (guint j = 0; j < ppn; j++)
      put_node(s, topo, fs_comm_collnet_switch(c, fs_comm_collnet_leaf(c, g, j)));
  put(s, sys.arch);
  put(s, sys.intra_hw);
  put(s, sys.cpu);
  put(s, dbits(sys.bw_intra));
  put(s, dbits(sys.bw_inter));
  put(s, dbits(sys.latency_inter));
  put(s, sys.max_channels);
  put(s, sys.nvls_channels);
  put(s, sys.nvls_heads);
  put(s, sys.graph_channels);
  put(s, sys.net_nics);
  put(s, sys.collnet_heads);
  put(s, dbits(sys.net_bw_gbps));
  put(s, sys.collnet);
  put(s, sys.ll128);
  put(s, dbits(sys.path_lat_intra));
  put(s, dbits(sys.path_lat_inter));
  put(s, dbits(sys.local_copy_bw));
  return TRUE;
}

/* See collclass.h. The signature hashed is the mode, the ranks (hosts renumbered in order of
 * appearance, local index, GPU model), the communicator built for the group and its system
 * facts (put_comm) and the route profile of every ordered pair under several ECMP keys
 * (put_route), so the cost is n² route look-ups. The model enters as its address, so digests
 * compare within one process only. */
gboolean fs_coll_class_digest(FsRouter *router, const FsNcclParams *nccl, FsCollClassMode mode,
                              const guint *nodes, guint n, guint8 digest[FS_COLL_CLASS_DIGEST],
                              gboolean *has_class, gboolean *approx, GError **error)
{
  const FsTopo *topo = fs_router_topo(router);
  const FsFlowNet *net = fs_router_net(router);
  Sig s = { 0 };
  s.sum = g_checksum_new(G_CHECKSUM_SHA256);
  s.nodes = g_hash_table_new(g_direct_hash, g_direct_equal);
  s.chans = g_new0(guint, fs_flownet_n_channels(net));
  s.mode = mode;
  s.cap = 64;
  s.pair = g_malloc(sizeof(PairWords) + s.cap * sizeof(guint64));
  s.pairs = g_hash_table_new_full(pair_hash, pair_equal, g_free, NULL);
  put(&s, mode);
  *has_class = TRUE;
  *approx = FALSE;
  gboolean ok = TRUE;
  /* Ranks: host (renamed), local index, GPU model. */
  put(&s, n);
  g_autoptr(GHashTable) hosts = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = 0; i < n; i++) {
    const FsTopoNode *node = fs_topo_node(topo, nodes[i]);
    gpointer key = GINT_TO_POINTER(node->host >= 0 ? node->host + 1 : -(int)nodes[i] - 1);
    guint h = GPOINTER_TO_UINT(g_hash_table_lookup(hosts, key));
    if (h == 0) {
      h = g_hash_table_size(hosts) + 1;
      g_hash_table_insert(hosts, key, GUINT_TO_POINTER(h));
    }
    put(&s, h);
    put(&s, (guint64)(gint64)node->local);
    put(&s, (guint64)(guintptr)node->model);
  }
  ok = put_comm(&s, router, nccl, nodes, n, error);
  FsRoute rt, alt[N_KEYS - 1];
  fs_route_init(&rt);
  for (guint k = 0; k + 1 < N_KEYS; k++)
    fs_route_init(&alt[k]);
  for (guint i = 0; i < n && ok && *has_class; i++)
    for (guint j = 0; j < n && ok && *has_class; j++)
      if (i != j)
        ok = put_route(&s, router, nodes[i], nodes[j], &rt, alt, has_class, approx, error);
  fs_route_clear(&rt);
  for (guint k = 0; k + 1 < N_KEYS; k++)
    fs_route_clear(&alt[k]);
  if (ok && *has_class) {
    g_checksum_update(s.sum, (const guchar *)s.buf, s.len * sizeof(guint64));
    gsize len = FS_COLL_CLASS_DIGEST;
    g_checksum_get_digest(s.sum, digest, &len);
  }
  g_checksum_free(s.sum);
  g_hash_table_unref(s.nodes);
  g_hash_table_unref(s.pairs);
  g_free(s.pair);
  g_free(s.chans);
  return ok;
}
