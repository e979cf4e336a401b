/* streams.c — the stream model of a collective.  See streams.h.
 *
 * Order of work in fs_coll_streams_new: pick the skeletons' loop and ring-step
 * counts; build them (folded where allowed), numbering their connections
 * (the streams) as they appear; extrapolate each stream's wire bytes and
 * the plan's latency depth to the full collective; route the streams once
 * and load the links; evaluate every skeleton as a max-plus system with
 * the streams' rates, repair its schedule once to the links' capacity
 * (max-min between events, repair) and evaluate it again; extrapolate the
 * time, and when the skeletons' times per unit disagree, double the counts
 * and try again while the skeletons stay under the budget, past which the
 * unrepaired schedule's time and its links' deficit are taken.  The
 * schedule of a skeleton (max-plus, the links' deficit and repair) is in
 * streams-sched.c, over the types of streams-private.h. */
#include "collrun/streams-private.h"

#include <math.h>
#include <string.h>

#include "collrun/exec-params.h"
#include "core/rng.h"
#include "util/error.h"
#include "util/units.h"

static guint conn_hash(gconstpointer p)
{
  const ConnKey *k = p;
  return (guint)fs_hash64(((uint64_t)k->src << 32 | k->dst) ^
                          fs_hash64((uint64_t)k->channel << 8 | k->lane));
}

static gboolean conn_equal(gconstpointer a, gconstpointer b)
{
  return memcmp(a, b, sizeof(ConnKey)) == 0;
}

/* The ECMP key exec.c gives a transfer of this connection. */
static uint64_t conn_key(uint64_t key, const FsCollStep *s)
{
  uint64_t c = fs_hash64(((uint64_t)s->src << 32 | s->dst) ^
                         fs_hash64(((uint64_t)s->channel << 8 | s->lane) + 1));
  return (key << 32) + (c & 0xffffffffu);
}

static void skel_clear(Skel *k)
{
  if (k->cached) {
    memset(k, 0, sizeof *k);
    return;
  }
  fs_coll_plan_free(k->plan);
  streams_dag_free(k->dag);
  g_free(k->conn);
  if (k->wire)
    g_array_unref(k->wire);
  memset(k, 0, sizeof *k);
}

static void routes_init(Routes *r)
{
  r->first = g_array_new(FALSE, FALSE, sizeof(guint));
  r->w = g_array_new(FALSE, FALSE, sizeof(double));
  r->hop_off = g_array_new(FALSE, FALSE, sizeof(guint));
  r->hops = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  r->tw = g_array_new(FALSE, FALSE, sizeof(double));
  r->th = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
}

static void routes_clear(Routes *r)
{
  g_clear_pointer(&r->first, g_array_unref);
  g_clear_pointer(&r->w, g_array_unref);
  g_clear_pointer(&r->hop_off, g_array_unref);
  g_clear_pointer(&r->hops, g_array_unref);
  g_clear_pointer(&r->tw, g_array_unref);
  g_clear_pointer(&r->th, g_array_unref);
}

/* A family of collectives whose skeletons and streams are alike: one
 * request but for its bytes, on one communicator, network and router
 * (streams.h, FsCollStreamsMemo).  Its streams keep the ECMP key of the
 * family's first collective. */
struct Family {
  const FsComm *comm;
  const FsCollAlgo *algo;
  FsCollRequest req; /* bytes and max_ring_steps zeroed */
  const FsFlowNet *net;
  const void *route_ctx;
  gboolean fold;
  uint64_t key;
  GHashTable *conns; /* ConnKey* (owned) → index + 1 */
  GArray *streams;   /* Stream: its first figures (cap holds the width) */
  Routes routes;
  GPtrArray *skels;  /* CachedSkel*: the skeletons built so far */
};

struct FsCollStreamsMemo {
  GPtrArray *families; /* Family* (searched linearly: a sweep has a few) */
};

static void ctx_links_clear(Ctx *c)
{
  g_clear_pointer(&c->links, g_free);
  g_clear_pointer(&c->link_need, g_free);
  g_clear_pointer(&c->inc_off, g_free);
  g_clear_pointer(&c->inc, g_free);
  g_clear_pointer(&c->inc_w, g_free);
  g_clear_pointer(&c->link_rep, g_free);
  c->n_links = 0;
}

/* The stream of transfer s's connection, numbered (a new stream) when
 * first seen. */
static guint stream_index(Ctx *c, const FsCollPlan *plan, const FsCollStep *s)
{
  ConnKey key;
  memset(&key, 0, sizeof key);
  key.channel = s->channel, key.lane = s->lane, key.src = s->src, key.dst = s->dst;
  gpointer v = g_hash_table_lookup(c->conns, &key);
  if (v != NULL)
    return GPOINTER_TO_UINT(v) - 1;
  guint idx = c->tmpl->len;
  Stream st = {.k = key};
  const FsComm *comm = fs_coll_plan_comm(plan);
  st.src_node = fs_coll_ep_node(comm, s->src, s->channel);
  st.dst_node = fs_coll_ep_node(comm, s->dst, s->channel);
  st.key = conn_key(c->key, s);
  st.cap = 0;
  st.inter = s->inter;
  g_array_append_val(c->tmpl, st);
  g_hash_table_insert(c->conns, g_memdup2(&key, sizeof key), GUINT_TO_POINTER(idx + 1));
  return idx;
}

/* Numbers the connections of k's plan (new ones become streams: one
 * lookup per connection, FsCollStep.conn) and sums their wire bytes. */
static void skel_scan(Ctx *c, Skel *k)
{
  guint n = fs_coll_plan_n_steps(k->plan);
  k->conn = g_new(guint32, n + 1);
  k->wire = g_array_sized_new(FALSE, TRUE, sizeof(double), c->tmpl->len + 16);
  k->depth = fs_coll_plan_latency_depth(k->plan);
  const FsCollStep *steps = n ? fs_coll_plan_step(k->plan, 0) : NULL;
  guint nc = fs_coll_plan_n_conns(k->plan);
  g_autofree guint32 *stream_of = g_new(guint32, nc + 1); /* per plan connection */
  memset(stream_of, 0xff, sizeof(guint32) * (nc + 1));
  for (guint i = 0; i < n; i++) {
    const FsCollStep *s = &steps[i];
    if (s->kind != FS_STEP_XFER) {
      k->conn[i] = G_MAXUINT32;
      continue;
    }
    if (stream_of[s->conn] == G_MAXUINT32)
      stream_of[s->conn] = stream_index(c, k->plan, s);
    guint idx = stream_of[s->conn];
    k->conn[i] = idx;
    if (k->wire->len <= idx)
      g_array_set_size(k->wire, idx + 1);
    guint width = MAX(s->width, 1);
    g_array_index(k->wire, double, idx) += ceil((double)s->bytes / c->payload) * width;
    Stream *st = &g_array_index(c->tmpl, Stream, idx);
    st->cap = MAX(st->cap, (double)width); /* the width, until the cap is known */
    st->width = MAX(st->width, width);
  }
}

/* The paths of stream i, found once (Routes): *np paths, their weights
 * *w and, per path, the offset *ho into *hops of its hop count and
 * channels.  The pointers hold until the next call. */
static gboolean stream_paths(Ctx *c, guint i, guint *np, const double **w, const guint **ho,
                             const FsChannelId **hops, GError **error)
{
  Routes *r = c->routes;
  while (r->first->len < 2 * (i + 1)) {
    guint none[2] = {G_MAXUINT, 0};
    g_array_append_vals(r->first, none, 2);
  }
  if (g_array_index(r->first, guint, 2 * i) == G_MAXUINT) {
    const Stream *s = &g_array_index(c->streams, Stream, i);
    GArray *tw = r->tw, *th = r->th;
    g_array_set_size(tw, 0);
    g_array_set_size(th, 0);
    if (!c->opts->route_paths(c->opts->route_ctx, s->src_node, s->dst_node, s->key, tw, th)) {
      g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_NO_ROUTE, "no route for a stream of the "
                  "collective (topology nodes %d to %d)", s->src_node, s->dst_node);
      return FALSE;
    }
    g_array_index(r->first, guint, 2 * i) = r->w->len;
    g_array_index(r->first, guint, 2 * i + 1) = tw->len;
    for (guint p = 0, pos = 0; p < tw->len; p++) {
      guint at = r->hops->len + pos;
      g_array_append_val(r->hop_off, at);
      pos += g_array_index(th, FsChannelId, pos) + 1;
    }
    g_array_append_vals(r->w, tw->data, tw->len);
    g_array_append_vals(r->hops, th->data, th->len);
  }
  guint f = g_array_index(r->first, guint, 2 * i);
  *np = g_array_index(r->first, guint, 2 * i + 1);
  *w = &g_array_index(r->w, double, f);
  *ho = &g_array_index(r->hop_off, guint, f);
  *hops = (const FsChannelId *)r->hops->data;
  return TRUE;
}

/* Links l and m carry the same streams with the same shares, in the same
 * order, at the same capacity: every figure the schedule takes of one
 * (streams-sched.c) is the other's. */
static gboolean link_same(const Ctx *c, guint l, guint m)
{
  guint n = c->inc_off[l + 1] - c->inc_off[l];
  if (n != c->inc_off[m + 1] - c->inc_off[m] ||
      fs_flownet_channel_capacity(c->net, c->links[l]) !=
          fs_flownet_channel_capacity(c->net, c->links[m]))
    return FALSE;
  const guint32 *a = &c->inc[c->inc_off[l]], *b = &c->inc[c->inc_off[m]];
  const double *wa = &c->inc_w[c->inc_off[l]], *wb = &c->inc_w[c->inc_off[m]];
  return memcmp(a, b, sizeof(guint32) * n) == 0 && memcmp(wa, wb, sizeof(double) * n) == 0;
}

static uint64_t link_hash(const Ctx *c, guint l)
{
  double cap = fs_flownet_channel_capacity(c->net, c->links[l]);
  uint64_t h;
  memcpy(&h, &cap, sizeof h);
  for (guint j = c->inc_off[l]; j < c->inc_off[l + 1]; j++) {
    uint64_t w;
    memcpy(&w, &c->inc_w[j], sizeof w);
    h = fs_hash64(h ^ c->inc[j]) ^ w;
  }
  return fs_hash64(h);
}

/* c->link_rep: per loaded link, the first link of its class (link_same;
 * itself when it is the first), found with an open-addressed table of
 * the links' hashes.  The repair and the links' deficit compute a class
 * once (along a path of a rail-optimized fat tree, the GPU's port, its
 * NIC and the leaf's uplink carry the same streams).  Cost: O(incidences). */
static void link_classes(Ctx *c)
{
  guint size = 64;
  while (size < 2 * c->n_links)
    size *= 2;
  g_autofree guint *slot = g_new(guint, size);
  memset(slot, 0xff, sizeof(guint) * size);
  c->link_rep = g_new(guint, c->n_links + 1);
  for (guint l = 0; l < c->n_links; l++) {
    guint at = (guint)(link_hash(c, l) & (size - 1));
    c->link_rep[l] = l;
    for (; slot[at] != G_MAXUINT; at = (at + 1) & (size - 1))
      if (link_same(c, slot[at], l)) {
        c->link_rep[l] = slot[at];
        break;
      }
    if (c->link_rep[l] == l)
      slot[at] = l;
  }
}

/* Routes every stream, loads the links with their full-size bytes and sets
 * each stream's time (streams.h, Pace) and latency; returns T_bw. */
static gboolean pace(Ctx *c, const FsCollExecParams *ep, double *t_bw, double *t_free,
                     GError **error)
{
  guint nch = fs_flownet_n_channels(c->net);
  g_autofree double *load = g_new0(double, nch + 1);
  gboolean analytic = fs_flownet_model(c->net) == FS_NET_ANALYTIC;
  gboolean ok = TRUE;
  guint np = 0;
  const double *pw = NULL;
  const guint *ho = NULL;
  const FsChannelId *hops = NULL;
  for (guint pass = 0; pass < 2 && ok; pass++)
    for (guint i = 0; i < c->streams->len && ok; i++) {
      Stream *s = &g_array_index(c->streams, Stream, i);
      if (pass == 0) { /* s->cap held the width; a flow's cap as exec.c gives it */
        double fc = ep->rate_cap;
        if (s->inter && ep->rate_cap_inter > 0)
          fc = fc > 0 ? MIN(fc, ep->rate_cap_inter) : ep->rate_cap_inter;
        s->cap = fc > 0 ? fc * s->cap : 0;
      }
      if (s->src_node < 0 || s->dst_node < 0) {
        g_set_error(error, FS_COLL_ERROR, FS_COLL_ERROR_INVALID,
                    "a stream's endpoint has no topology node (bind ranks with fs_comm_set_gpu, "
                    "NVLS and CollNet switches with their setters)");
        ok = FALSE;
        break;
      }
      if (pass == 0 && s->wire <= 0)
        continue;
      if (!stream_paths(c, i, &np, &pw, &ho, &hops, error)) {
        ok = FALSE;
        break;
      }
      double t = 0, lat = 0;
      for (guint p = 0; p < np; p++) {
        guint len = hops[ho[p]];
        const FsChannelId *path = &hops[ho[p] + 1];
        double w = pw[p];
        if (pass == 0) {
          for (guint h = 0; h < len; h++)
            load[path[h]] += w * s->wire;
          continue;
        }
        lat = MAX(lat, (double)fs_flownet_path_latency(c->net, path, len));
        if (w <= 0 || s->wire <= 0)
          continue;
        double cap = fs_flownet_path_capacity(c->net, path, len);
        if (s->cap > 0)
          cap = MIN(cap, w * s->cap);
        if (isfinite(cap))
          t = MAX(t, w * s->wire / cap);
        if (!analytic)
          for (guint h = 0; h < len; h++)
            *t_bw = MAX(*t_bw, load[path[h]] / fs_flownet_channel_capacity(c->net, path[h]));
      }
      if (pass == 1) {
        s->t = t;
        s->lat = lat;
        *t_bw = MAX(*t_bw, t);
        *t_free = MAX(*t_free, t);
      }
    }
  if (!ok || analytic)
    return ok;
  /* The loaded links and, per link, the streams that cross it. */
  ctx_links_clear(c);
  g_autofree guint *link_of = g_new(guint, nch + 1);
  for (guint ch = 0; ch < nch; ch++)
    link_of[ch] = load[ch] > 0 ? c->n_links++ : G_MAXUINT;
  c->links = g_new(FsChannelId, c->n_links + 1);
  c->link_need = g_new(double, c->n_links + 1);
  c->inc_off = g_new0(guint, c->n_links + 2);
  for (guint ch = 0; ch < nch; ch++)
    if (link_of[ch] != G_MAXUINT) {
      c->links[link_of[ch]] = ch;
      c->link_need[link_of[ch]] = load[ch] / fs_flownet_channel_capacity(c->net, ch) * 1e12;
    }
  /* Two passes over the streams' paths: count per link, then fill. */
  for (guint pass = 0; pass < 2; pass++) {
    g_autofree guint *fill = pass ? g_new0(guint, c->n_links + 1) : NULL;
    for (guint i = 0; i < c->streams->len && ok; i++) {
      ok = stream_paths(c, i, &np, &pw, &ho, &hops, error);
      for (guint p = 0; ok && p < np; p++) {
        guint len = hops[ho[p]];
        const FsChannelId *path = &hops[ho[p] + 1];
        for (guint h = 0; h < len; h++) {
          guint l = link_of[path[h]];
          if (l == G_MAXUINT)
            continue;
          if (pass == 0) {
            c->inc_off[l + 1]++;
            continue;
          }
          c->inc_w[c->inc_off[l] + fill[l]] = pw[p];
          c->inc[c->inc_off[l] + fill[l]++] = i;
        }
      }
    }
    if (pass == 0) {
      for (guint l = 0; l < c->n_links; l++)
        c->inc_off[l + 1] += c->inc_off[l];
      c->inc = g_new(guint32, c->inc_off[c->n_links] + 1);
      c->inc_w = g_new(double, c->inc_off[c->n_links] + 1);
    }
  }
  if (ok)
    link_classes(c);
  return ok;
}

/* A skeleton the memo keeps, by its request, whether it was folded and
 * the payload its wire bytes were counted with. */
typedef struct {
  FsCollRequest r;
  double payload;
  gboolean fold;
  Skel k;
} CachedSkel;

static void cached_skel_free(gpointer p)
{
  CachedSkel *cs = p;
  skel_clear(&cs->k);
  g_free(cs);
}

/* Whether algo's op on comm is run whole on its own network where its
 * plan is small enough (above fs_coll_streams_new, streams.h). */
static gboolean runs_whole(const FsCollAlgo *algo, FsCollOp op)
{
  if (algo->nccl == FS_NCCL_ALGO_NVLS_TREE || algo->nccl == FS_NCCL_ALGO_NVLS)
    return TRUE;
  return !fs_coll_exec_streams_trusted(algo, op);
}

/* Whether algo is a ring (FsCollAlgo.ring_steps) and a loaded link of c
 * carries the bytes of one of its streams across hosts beside one inside
 * a host: a ring over part of each host's GPUs whose hop to the next host
 * leaves through another GPU's NIC over NVLink (PXN) sends it over the
 * NVLink plane of that NIC's rail, beside the other channels' hops to
 * that GPU.  There the one repair of the schedule is off (ring LL of
 * 32 MiB over GPUs 0, 2, 4 and 6 of 4 DGX H100 nodes: -7.7 to -8.3 %;
 * Simple over 2 such hosts, 256 MiB-4 GiB: -4.4 to -5.0 %): the other
 * channels' hops, slowed by the NIC's flow, drift until two of them send
 * at once every ring step and take two thirds of that plane from it,
 * which the unrepaired phases, one hop at a time beside it, never show
 * (tests/bench/RESULTS.md, gaps19).  Cost: O(the loaded links' streams). */
static gboolean ring_shares_links(const Ctx *c, const FsCollAlgo *algo)
{
  if (algo->ring_steps == NULL)
    return FALSE;
  guint ns = c->streams->len;
  for (guint l = 0; l < c->n_links; l++) {
    gboolean inter = FALSE, intra = FALSE;
    for (guint j = c->inc_off[l]; j < c->inc_off[l + 1]; j++) {
      guint32 t = c->inc[j];
      const Stream *st = t < ns ? &g_array_index(c->streams, Stream, t) : NULL;
      if (st == NULL || !(st->wire > 0))
        continue;
      inter = inter || st->inter;
      intra = intra || !st->inter;
    }
    if (inter && intra)
      return TRUE;
  }
  return FALSE;
}

/* req cut to x of its F whole loops of q bytes per channel (all of them
 * when cut is FALSE), into *r (zeroed first: its padding too). */
static void cut_request(const FsCollRequest *req, uint64_t q, guint64 F, gboolean cut, guint64 x,
                        FsCollRequest *r)
{
  memset(r, 0, sizeof *r); /* padding too: cached requests are compared with memcmp */
  r->op = req->op, r->bytes = req->bytes, r->dtype = req->dtype;
  r->redop = req->redop, r->root = req->root, r->proto = req->proto;
  r->nchannels = req->nchannels, r->chunk_bytes = req->chunk_bytes;
  r->slice_bytes = req->slice_bytes, r->max_steps = req->max_steps;
  r->max_slices_per_conn = req->max_slices_per_conn, r->conn_slots = req->conn_slots;
  r->max_ring_steps = req->max_ring_steps;
  if (cut)
    r->bytes = req->bytes - (F - x) * q * req->nchannels;
}

/* Whether the whole plan of req (F whole loops of q bytes per channel, or
 * none when F is 0) is within the plan-step guard (req->max_steps, else
 * fs_coll_plan_max_steps()) as skel_build would build it: its steps
 * counted, not built, as collrun/alone.c counts them
 * (fs_coll_plan_count_loop_steps), at most the guard, or the guard times its
 * channels for the algorithms skel_build folds past the guard.  A plan past
 * it is not run whole: the step mode hands it to the streams at once
 * (alone.c), and the repaired model times it.  Counting fails: FALSE. */
static gboolean within_guard(const FsComm *comm, const FsCollAlgo *algo, const FsCollRequest *req,
                             uint64_t q, guint64 F)
{
  guint limit = req->max_steps ? req->max_steps : fs_coll_plan_max_steps();
  double cap = fs_coll_exec_streams_trusted(algo, req->op)
                 ? (double)limit
                 : (double)limit * MAX(req->nchannels, 1u);
  FsCollRequest r;
  double n;
  cut_request(req, q, F, FALSE, 0, &r);
  return fs_coll_plan_count_loop_steps(comm, algo, &r, q, F, &n, NULL) && n <= cap;
}

/* The fewest whole loops (from 1, at most F) whose cut plan is the full
 * plan cut short: its request has the full one's loop bytes q.  The
 * network algorithms shrink their unit while a channel would hold fewer
 * than FS_SHARP_MIN_CHUNKS of them (fs_sharp_loop_bytes is then 0), so
 * that CollNetDirect's all_reduce of 1 to 3 loops is a pipeline of
 * smaller chunks, not three of the full plan's loops. */
static guint64 first_whole_loops(const FsComm *comm, const FsCollAlgo *algo,
                                 const FsCollRequest *req, uint64_t q, guint64 F)
{
  guint64 x = 1;
  for (; x < F; x++) {
    FsCollRequest r;
    cut_request(req, q, F, TRUE, x, &r);
    if (algo->loop_bytes(comm, &r) == q)
      break;
  }
  return x;
}

/* Builds the skeleton of x whole loops (nx > 1; else the full loops, not
 * folded with c->unfold) and k ring steps per loop (nk > 1; else all), or
 * copies the family's. */
static gboolean skel_build(Ctx *c, const FsCollAlgo *algo, uint64_t q, guint64 F, guint nx,
                           guint64 x, guint nk, guint64 k, Skel *out, GError **error)
{
  FsCollRequest r;
  cut_request(c->req, q, F, nx > 1, x, &r);
  if (nk > 1)
    r.max_ring_steps = (guint)k;
  gboolean fold = c->opts->route_fixed != NULL && fs_flownet_model(c->net) == FS_NET_MAXMIN &&
                  !(nx == 1 && c->unfold);
  if (c->fam != NULL)
    for (guint i = 0; i < c->fam->skels->len; i++) {
      CachedSkel *cs = g_ptr_array_index(c->fam->skels, i);
      if (cs->payload == c->payload && cs->fold == fold && memcmp(&cs->r, &r, sizeof r) == 0) {
        *out = cs->k;
        out->cached = TRUE;
        out->home = &cs->k;
        return TRUE;
      }
    }
  /* Folded while built, a skeleton of an algorithm that --exec auto
   * leaves to the steps may make as many steps as the guard allows times
   * its channels, keeping no more than the guard allows, as its step run
   * past the guard may (collrun/alone.c): CollNetDirect's whole plan of
   * 8 loops on 16,384 GPUs. */
  if (fold && !fs_coll_exec_streams_trusted(algo, r.op))
    r.max_virtual = (guint64)(r.max_steps ? r.max_steps : fs_coll_plan_max_steps()) *
                    MAX(r.nchannels, 1u);
  out->plan = fold ? fs_coll_plan_new_folded(c->comm, algo, &r, c->opts->route_fixed,
                                             c->opts->route_ctx, error)
                   : fs_coll_plan_new(c->comm, algo, &r, error);
  if (out->plan == NULL)
    return FALSE;
  skel_scan(c, out);
  if (c->fam != NULL) {
    CachedSkel *cs = g_new0(CachedSkel, 1);
    cs->r = r;
    cs->payload = c->payload;
    cs->fold = fold;
    cs->k = *out;
    g_ptr_array_add(c->fam->skels, cs);
    out->cached = TRUE;
    out->home = &cs->k;
  }
  return TRUE;
}

FsCollStreamsMemo *fs_coll_streams_memo_new(void)
{
  FsCollStreamsMemo *m = g_new0(FsCollStreamsMemo, 1);
  m->families = g_ptr_array_new();
  return m;
}

static void family_free(Family *f)
{
  g_hash_table_unref(f->conns);
  g_array_unref(f->streams);
  routes_clear(&f->routes);
  g_ptr_array_unref(f->skels);
  g_free(f);
}

void fs_coll_streams_memo_free(FsCollStreamsMemo *m)
{
  if (m == NULL)
    return;
  for (guint i = 0; i < m->families->len; i++)
    family_free(g_ptr_array_index(m->families, i));
  g_ptr_array_unref(m->families);
  g_free(m);
}

/* The memo's family of req (made with key when new). */
static Family *family_get(FsCollStreamsMemo *m, const FsComm *comm, const FsCollAlgo *algo,
                          const FsCollRequest *req, const FsFlowNet *net, const void *route_ctx,
                          gboolean fold, uint64_t key)
{
  FsCollRequest r;
  memset(&r, 0, sizeof r);
  r.op = req->op, r.dtype = req->dtype, r.redop = req->redop, r.root = req->root;
  r.proto = req->proto, r.nchannels = req->nchannels, r.chunk_bytes = req->chunk_bytes;
  r.slice_bytes = req->slice_bytes, r.max_steps = req->max_steps;
  r.max_slices_per_conn = req->max_slices_per_conn, r.conn_slots = req->conn_slots;
  for (guint i = 0; i < m->families->len; i++) {
    Family *f = g_ptr_array_index(m->families, i);
    if (f->comm == comm && f->algo == algo && f->net == net && f->route_ctx == route_ctx &&
        f->fold == fold && memcmp(&f->req, &r, sizeof r) == 0)
      return f;
  }
  Family *f = g_new0(Family, 1);
  f->comm = comm, f->algo = algo, f->req = r, f->net = net, f->route_ctx = route_ctx;
  f->fold = fold, f->key = key;
  f->conns = g_hash_table_new_full(conn_hash, conn_equal, g_free, NULL);
  f->streams = g_array_new(FALSE, TRUE, sizeof(Stream));
  routes_init(&f->routes);
  f->skels = g_ptr_array_new_with_free_func(cached_skel_free);
  g_ptr_array_add(m->families, f);
  return f;
}

/* See streams.h.  One attempt per pair of counts (x0 loops, k0 steps): a 3 × 3 grid of
 * skeletons at most (fewer where a dimension runs whole). */
FsCollStreams *fs_coll_streams_new(const FsNcclParams *p, const FsCollSysInfo *sys,
                                   const FsComm *comm, uint64_t nbytes, const FsCollChoice *choice,
                                   const FsCollRequest *req, uint64_t key, FsFlowNet *net,
                                   const FsCollStreamsOpts *opts, GError **error)
{
  g_return_val_if_fail(opts != NULL && opts->route_paths != NULL, NULL);
  const FsCollAlgo *algo = choice->algo;
  guint n = fs_comm_size(comm);
  uint64_t q = algo->loop_bytes && req->nchannels >= 1 && n > 1 ? algo->loop_bytes(comm, req) : 0;
  guint64 F = G_MAXUINT64;
  if (q > 0)
    for (guint ch = 0; ch < req->nchannels; ch++)
      F = MIN(F, fs_coll_channel_bytes(req->bytes, req->dtype, req->nchannels, ch) / q);
  if (q == 0)
    F = 0;
  guint S = algo->ring_steps && n > 1 ? algo->ring_steps(comm, req) : 0;
  guint P = fs_comm_uniform_ranks_per_host(comm);
  FsCollExecParams ep;
  fs_coll_exec_params_depth(p, sys, comm, req->op, nbytes, choice, 1, &ep);
  Ctx c;
  memset(&c, 0, sizeof c);
  c.comm = comm, c.req = req, c.opts = opts, c.net = net, c.key = key, c.payload = ep.payload;
  gboolean fold = opts->route_fixed != NULL && fs_flownet_model(net) == FS_NET_MAXMIN;
  /* Run whole on their own network (streams-sched.c), where the whole
   * plan is small enough (below): collectives whose links carry several of
   * their streams at once (NCCL's tree, CollNet, the NVLS tree, NVLS) or whose hops fall out of lockstep after the root (the chains
   * of broadcast and reduce), where one repair is up to 16 % off; not the
   * others' (one stream per link at a time, one repair within 0.75 %: the
   * runs would cost every training run's data-parallel streams and gain
   * nothing). */
  gboolean whole_algo = runs_whole(algo, req->op);
  /* Nor where the whole plan is past the plan-step guard (within_guard;
   * counted once, when a whole run is otherwise due): test_past_guard. */
  int in_guard = -1;
  /* Whether a ring's streams across hosts share links with its streams
   * inside hosts (ring_shares_links), known once they are routed: -1
   * until then. */
  int shared_ring = -1;
  guint64 x0 = F > 0 ? first_whole_loops(comm, algo, req, q, F) : 1, k0 = MAX(4, P);
  /* Such a plan whose steps unfolded (those of its first loops, per loop,
   * times its loops; counted where every channel's loop moves a transfer
   * per rank but one, their least, would not pass the budget already) are
   * within STREAMS_WHOLE_UNFOLD_STEPS runs whole and
   * unfolded: the folded plans of the chains are off the exact ones (ring
   * reduce Simple on 2 DGX H100 nodes, 256 MiB: -1.42 %, as the folded
   * step run).  Its streams are its own (no memo: a family's streams keep
   * the width of its folded skeletons). */
  if (whole_algo && fold && S < k0 + 2 * P + 1 &&
      (double)(n - 1) * req->nchannels * (double)MAX(F, 1) <= STREAMS_WHOLE_UNFOLD_STEPS) {
    FsCollRequest r;
    guint64 cnt = 0;
    guint limit = req->max_steps ? req->max_steps : fs_coll_plan_max_steps();
    cut_request(req, q, F, F > 0 && x0 < F, x0, &r);
    double whole_cnt = 0;
    c.unfold = fs_coll_plan_count_steps(comm, algo, &r, &cnt, NULL) &&
               (whole_cnt = (double)cnt / (double)x0 * (double)MAX(F, x0)) <=
                 STREAMS_WHOLE_UNFOLD_STEPS &&
               whole_cnt <= limit;
    if (c.unfold)
      x0 = MAX(F, 1);
  }
  Routes own_routes = {0};
  if (opts->memo != NULL && !c.unfold) {
    c.fam = family_get(opts->memo, comm, algo, req, net, opts->route_ctx, fold, key);
    c.key = c.fam->key;
    c.conns = c.fam->conns;
    c.tmpl = c.fam->streams;
    c.routes = &c.fam->routes;
  } else {
    c.conns = g_hash_table_new_full(conn_hash, conn_equal, g_free, NULL);
    c.tmpl = g_array_new(FALSE, TRUE, sizeof(Stream));
    routes_init(&own_routes);
    c.routes = &own_routes;
  }
  c.streams = g_array_new(FALSE, TRUE, sizeof(Stream));
  FsCollStreams *s = g_new0(FsCollStreams, 1);
  s->info.loops = F;
  s->info.ring_steps = S;
  gboolean ok = TRUE, done = FALSE;
  Skel grid[3][3];
  memset(grid, 0, sizeof grid);
  while (ok && !done) {
    /* Loops: three counts 1 apart past x0, or the full plan's where those
     * three would hold as many loops (CollNetDirect's 4, 5 and 6 of 8). */
    guint nx = F >= x0 + 3 && 3 * x0 + 3 < F ? 3 : 1, nk = S >= k0 + 2 * P + 1 ? 3 : 1;
    guint64 xs[3] = {x0, x0 + 1, x0 + 2}, ks[3] = {k0, k0 + P, k0 + 2 * P};
    guint64 steps = 0;
    for (guint i = 0; i < nx && ok; i++)
      for (guint j = 0; j < nk && ok; j++) {
        ok = skel_build(&c, algo, q, F, nx, xs[i], nk, ks[j], &grid[i][j], error);
        if (ok) {
          steps += fs_coll_plan_n_steps(grid[i][j].plan);
          s->info.skeletons++;
        }
      }
    if (!ok)
      break;
    s->info.sim_steps += steps;
    /* The whole plan run on its own network (streams_skel_time) where it
     * has at most STREAMS_WHOLE_MAX_STEPS steps (about those of the last
     * skeleton per loop), not a grid of a few loops: these pipelines drift
     * past any few loops that agree (NVLS tree LL on 2 DGX H100 nodes:
     * loops 4-6 periodic to 1e-9 at 4.287 us a loop, 4.37 over the whole
     * 512; -2.2 % extrapolated), and the chains' and trees' grids passed
     * for steady while still filling (unfolded where small, above). */
    double per_loop = (double)fs_coll_plan_n_steps(grid[nx - 1][0].plan) / (double)xs[nx - 1];
    double whole_steps = nx == 1 ? (double)steps : per_loop * (double)F;
    gboolean whole = whole_algo && nk == 1 && whole_steps <= STREAMS_WHOLE_MAX_STEPS;
    if (whole && in_guard < 0)
      in_guard = within_guard(comm, algo, req, q, F);
    whole = whole && in_guard == 1;
    if (whole && nx == 3) {
      for (guint i = 0; i < 3; i++)
        for (guint j = 0; j < 3; j++)
          skel_clear(&grid[i][j]);
      x0 = F; /* nx == 1 next: the full loops */
      continue;
    }
    /* Past the whole runs' budget, such a collective starts its loop
     * counts where its connections' buffers have filled (at least
     * FsCollRequest.conn_slots loops: a loop moves a slice or more per
     * connection), where that grid stays within the skeletons' budget:
     * before, its credits never bind, and its first loops run in a regime
     * of their own, periodic but not the steady one (NVLS LL all_reduce on
     * one DGX H100: 7.95 us a loop over loops 1-3, to 1e-9, then 7.16 from
     * the 4th on: +11.1 % at 4 and 16 GiB from loops 1-3). */
    guint64 xbuf = req->conn_slots;
    if (whole_algo && !whole && nx == 3 && nk == 1 && x0 < xbuf && F >= 3 * xbuf + 4 &&
        (double)steps / (double)(3 * x0 + 3) * (double)(3 * xbuf + 3) <=
          FS_COLL_STREAMS_MAX_SKELETON) {
      for (guint i = 0; i < 3; i++)
        for (guint j = 0; j < 3; j++)
          skel_clear(&grid[i][j]);
      x0 = xbuf;
      continue;
    }
    /* Every skeleton's wire bytes per stream, extrapolated to the full
     * plan (after the choices above, which take none of it: a grid they
     * throw away is not paced, skel19). */
    g_array_set_size(c.streams, 0);
    g_array_append_vals(c.streams, c.tmpl->data, c.tmpl->len);
    guint ns = c.streams->len;
    gboolean agree = TRUE;
    double vx[3] = {0, 0, 0}, v[3] = {0, 0, 0};
    for (guint t = 0; t < ns; t++) {
      for (guint i = 0; i < nx; i++) {
        for (guint j = 0; j < nk; j++) {
          GArray *w = grid[i][j].wire;
          v[j] = t < w->len ? g_array_index(w, double, t) : 0;
        }
        vx[i] = streams_extrap(v, ks, nk, S, NULL, 0);
      }
      g_array_index(c.streams, Stream, t).wire = MAX(0, streams_extrap(vx, xs, nx, F, NULL, 0));
    }
    for (guint i = 0; i < nx; i++) {
      for (guint j = 0; j < nk; j++)
        v[j] = grid[i][j].depth;
      vx[i] = streams_extrap(v, ks, nk, S, NULL, 0);
    }
    double depth = streams_extrap(vx, xs, nx, F, NULL, 0);
    fs_coll_exec_params_depth(p, sys, comm, req->op, nbytes, choice,
                              (guint)CLAMP(llround(depth), 0, G_MAXUINT), &ep);
    ep.key = key;
    s->t_bw = 0;
    double t_free = 0;
    /* Routes are found once: a retry only adds skeletons' steps. */
    for (guint t = 0; t < ns; t++) {
      Stream *st = &g_array_index(c.streams, Stream, t);
      st->t = 0;
    }
    if (!(ok = pace(&c, &ep, &s->t_bw, &t_free, error)))
      break;
    guint nl = c.n_links;
    /* A ring whose streams across hosts share links with its streams
     * inside hosts (PXN: ring_shares_links) runs its skeletons on their
     * own network as whole runs do, its times per unit checked to
     * STREAMS_RUN_TOL. */
    if (shared_ring < 0)
      shared_ring = ring_shares_links(&c, algo);
    gboolean run = whole || shared_ring;
    double tol = run && !whole ? STREAMS_RUN_TOL : 1e-6;
    g_autofree double *busy = g_new0(double, (gsize)9 * (nl + 1));
    for (guint i = 0; i < nx && ok; i++)
      for (guint j = 0; j < nk && ok; j++) {
        guint nsteps = fs_coll_plan_n_steps(grid[i][j].plan);
        g_autofree double *xa = g_new0(double, nsteps + 1);
        g_autofree double *xb = g_new0(double, nsteps + 1);
        ok = streams_skel_time(&c, &grid[i][j], &ep, c.payload, run, xa, xb,
                               busy + (gsize)(i * 3 + j) * (nl + 1), error);
      }
    if (!ok)
      break;
    /* The repaired schedule's time, checked in both counts (streams.h). */
    for (guint i = 0; i < nx; i++) {
      for (guint j = 0; j < nk; j++)
        v[j] = grid[i][j].time;
      vx[i] = streams_extrap(v, ks, nk, S, &agree, tol);
    }
    double mp = MAX(0, streams_extrap(vx, xs, nx, F, &agree, tol));
    /* Widen the counts that disagree while the next grid stays in budget
     * (its size about doubles). */
    done = agree || (nx == 1 && nk == 1) || 2 * steps > FS_COLL_STREAMS_MAX_SKELETON;
    if (!agree && done && run) {
      /* Skeletons run on their own network past the budget without
       * agreeing: their times are the flow network's, not a schedule to
       * lengthen; the last grid's extrapolation stands, approximate. */
      s->info.repaired = FALSE;
    } else if (!agree && done) {
      /* Past the budget without a steady repaired schedule: the streams'
       * own rates, their ring steps checked as before, and the links whose
       * streams' bytes need longer than that schedule sends through them
       * lengthen it by the difference, never by more than the busiest
       * link needs beyond the busiest stream alone. */
      agree = TRUE;
      double v0[3] = {0, 0, 0};
      for (guint i = 0; i < nx; i++) {
        for (guint j = 0; j < nk; j++)
          v[j] = grid[i][j].time0;
        v0[i] = streams_extrap(v, ks, nk, S, &agree, tol);
      }
      double deficit = 0;
      for (guint l = 0; l < nl; l++) {
        for (guint i = 0; i < nx; i++) {
          for (guint j = 0; j < nk; j++)
            v[j] = busy[(gsize)(i * 3 + j) * (nl + 1) + l];
          vx[i] = streams_extrap(v, ks, nk, S, NULL, 0);
        }
        deficit = MAX(deficit, streams_extrap(vx, xs, nx, F, NULL, 0));
      }
      deficit = MIN(deficit, (s->t_bw - t_free) * 1e12);
      mp = MAX(0, streams_extrap(v0, xs, nx, F, NULL, 0)) + MAX(0, deficit);
      s->info.repaired = FALSE;
    } else {
      s->info.repaired = nl > 0;
    }
    s->mp = mp;
    s->info.approximate = !agree;
    /* Widen the counts that disagree while the next grid stays in budget
     * (its size about doubles). */
    for (guint i = 0; i < 3; i++)
      for (guint j = 0; j < 3; j++)
        skel_clear(&grid[i][j]);
    if (!done) {
      if (nx == 3)
        x0 *= 2;
      if (nk == 3)
        k0 *= 2;
    }
  }
  for (guint i = 0; i < 3; i++)
    for (guint j = 0; j < 3; j++)
      skel_clear(&grid[i][j]);
  if (c.fam == NULL) {
    g_hash_table_unref(c.conns);
    g_array_unref(c.tmpl);
    routes_clear(&own_routes);
  }
  ctx_links_clear(&c);
  s->streams = c.streams;
  if (!ok) {
    fs_coll_streams_free(s);
    return NULL;
  }
  s->ep = ep;
  s->info.time = fs_time_add_sat(ep.base_latency, fs_time_from_ps(s->mp));
  s->info.t_bw = fs_time_from_s(s->t_bw);
  s->info.streams = s->streams->len;
  return s;
}

void fs_coll_streams_free(FsCollStreams *s)
{
  if (s == NULL)
    return;
  if (s->streams)
    g_array_unref(s->streams);
  g_free(s);
}

void fs_coll_streams_info(const FsCollStreams *s, FsCollStreamsInfo *out)
{
  *out = s->info;
}
