/* a2a.c — the load model of an all-to-all across hosts: every send's
 * bytes summed on the channels of its route, routed once per relay (PXN)
 * rather than once per pair, and the collective's time from the busiest
 * channel.  See a2a.h. */
#include "collrun/a2a.h"

#include <math.h>
#include <string.h>

#include "coll/algos.h"
#include "collrun/exec-params.h"
#include "net/route.h"
#include "util/error.h"

gboolean fs_coll_a2a_applies(const FsComm *comm, const FsCollChoice *choice,
                             const FsCollRequest *req)
{
  if (req->op != FS_COLL_ALLTOALL || choice->algo != &fs_coll_algo_direct ||
      fs_comm_n_hosts(comm) < 2 || req->nchannels == 0)
    return FALSE;
  uint64_t unit = req->slice_bytes ? req->slice_bytes : req->chunk_bytes;
  for (guint c = 0; c < req->nchannels; c++)
    if (fs_coll_channel_bytes(req->bytes, req->dtype, req->nchannels, c) > unit)
      return FALSE;
  return TRUE;
}

double fs_coll_a2a_transfers(const FsComm *comm, const FsCollRequest *req)
{
  double n = fs_comm_size(comm);
  return n * (n - 1) * MAX(req->nchannels, 1u);
}

gboolean fs_coll_a2a_pick(const FsComm *comm, const FsCollRequest *req)
{
  return fs_coll_a2a_transfers(comm, req) >= (double)FS_COLL_A2A_AUTO_TRANSFERS;
}

/* What the sums need: the network, the routes, the wire bytes of one
 * pair's block, scratch for one route, and the loads. */
typedef struct {
  const FsFlowNet *net;
  const FsCollA2aRoutes *routes;
  double wire;     /* bytes one send puts on the wire (its block over the payload share) */
  double *load;    /* bytes per channel of the network */
  GArray *w, *h;   /* one route's weights and hops */
  gboolean keyed;  /* a route made an ECMP choice: the model declines */
} Sums;

/* Routes src → dst once into s->w, s->h; *lat: its slowest path's
 * latency (ps).  FALSE with error when there is no route. */
static gboolean route(Sums *s, int src, int dst, double *lat, GError **error)
{
  g_array_set_size(s->w, 0);
  g_array_set_size(s->h, 0);
  gboolean fixed = TRUE;
  if (!s->routes->once(s->routes->ctx, src, dst, s->w, s->h, &fixed)) {
    g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_NO_ROUTE,
                "alltoall: no route from node %d to node %d", src, dst);
    return FALSE;
  }
  if (!fixed)
    s->keyed = TRUE;
  *lat = 0;
  const FsChannelId *hops = (const FsChannelId *)s->h->data;
  for (guint p = 0, o = 0; p < s->w->len; p++) {
    guint len = hops[o];
    *lat = MAX(*lat, (double)fs_flownet_path_latency(s->net, hops + o + 1, len));
    o += 1 + len;
  }
  return TRUE;
}

/* Adds mult sends' bytes along the route in s->w, s->h: to out[channel]
 * when out is not NULL (appending each channel to touched), else to the
 * loads. */
static void add_route(Sums *s, double mult, double *out, GArray *touched)
{
  double *load = out != NULL ? out : s->load;
  const FsChannelId *hops = (const FsChannelId *)s->h->data;
  for (guint p = 0, o = 0; p < s->w->len; p++) {
    guint len = hops[o];
    double b = mult * s->wire * g_array_index(s->w, double, p);
    for (guint k = 0; k < len; k++) {
      load[hops[o + 1 + k]] += b;
      if (touched != NULL)
        g_array_append_val(touched, hops[o + 1 + k]);
    }
    o += 1 + len;
  }
}

/* Adds sign × the route from src to dst to out (touched: its channels). */
static gboolean add_pair(Sums *s, int src, int dst, double sign, double *out, GArray *touched,
                         GError **error)
{
  double lat;
  if (!route(s, src, dst, &lat, error))
    return FALSE;
  add_route(s, sign, out, touched);
  return TRUE;
}

/* TRUE when the loads x and y (bytes per channel) agree to 1e-9 of a send's
 * wire bytes on every touched channel; clears both there and empties touched. */
static gboolean same_loads(const Sums *s, double *x, double *y, GArray *touched)
{
  gboolean same = TRUE;
  for (guint k = 0; k < touched->len; k++) {
    FsChannelId c = g_array_index(touched, FsChannelId, k);
    if (fabs(x[c] - y[c]) > 1e-9 * s->wire)
      same = FALSE;
    x[c] = y[c] = 0;
  }
  g_array_set_size(touched, 0);
  return same;
}

/* Checks the decomposition of a2a.h on every pair from host a to host b:
 * the channels the route from g to d loads, with their shares, are those
 * of the relay's route to d plus g's head to the relay, the head being
 * what g's route to the first such d0 loads beyond the relay's route to
 * d0 (the head does not depend on the destination).  *ok FALSE where they
 * differ.  Cost: four routes per pair and two arrays of a double per
 * channel of the network, cleared where touched. */
static gboolean check_relays(Sums *s, const FsComm *comm, guint a, guint b, gboolean *ok,
                             GError **error)
{
  guint nc = fs_flownet_n_channels(s->net), na, nb;
  const guint *ra = fs_comm_host_ranks(comm, a, &na), *rb = fs_comm_host_ranks(comm, b, &nb);
  g_autofree double *x = g_new0(double, nc), *y = g_new0(double, nc);
  g_autofree int *d0 = g_new(int, nb);
  g_autoptr(GArray) touched = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
  *ok = TRUE;
  for (guint i = 0; i < na && *ok; i++) {
    int g = fs_comm_gpu(comm, ra[i]);
    for (guint j = 0; j < nb && *ok; j++) {
      int d = fs_comm_gpu(comm, rb[j]);
      int rho = s->routes->relay(s->routes->ctx, g, d);
      d0[j] = d;
      for (guint k = 0; k < j; k++)
        if (s->routes->relay(s->routes->ctx, g, fs_comm_gpu(comm, rb[k])) == rho) {
          d0[j] = fs_comm_gpu(comm, rb[k]);
          break;
        }
      if (rho < 0 || rho == g)
        continue; /* routed whole */
      if (!add_pair(s, g, d, 1, x, touched, error) ||
          !add_pair(s, g, d0[j], 1, y, touched, error) ||
          !add_pair(s, rho, d0[j], -1, y, touched, error) ||
          !add_pair(s, rho, d, 1, y, touched, error))
        return FALSE;
      if (!same_loads(s, x, y, touched))
        *ok = FALSE;
    }
  }
  return TRUE;
}

/* A (source, relay) head: how many sends take it, and the first
 * destination it was seen for (its loads are g's route there less the
 * relay's). */
typedef struct {
  int src, relay, d0;
  double count;
} Head;

/* Sums the sends of host a's ranks into s->load: to its own ranks route
 * by route; to every other rank d, per relay the relay's route to d times
 * the sources that use it, and each source's head to a relay once, times
 * the sends it carries.  *lat_intra, *lat_inter: the slowest path (ps) of
 * a send inside the host and of one across hosts (a head's latency plus
 * the slowest relay route).  heads: scratch. */
static gboolean sum_host(Sums *s, const FsComm *comm, guint a, const int *rail, guint n_rails,
                         GArray *heads, double *lat_intra, double *lat_inter, GError **error)
{
  guint n = fs_comm_size(comm), na;
  const guint *ra = fs_comm_host_ranks(comm, a, &na);
  g_autofree int *relay = g_new(int, na);
  g_autofree double *cnt = g_new(double, na);
  /* relay_of[i × n_rails + rail]: local rank i's relay toward that rail
   * (-2: not asked yet). */
  g_autofree int *relay_of = g_new(int, (gsize)na * n_rails);
  for (guint k = 0; k < na * n_rails; k++)
    relay_of[k] = -2;
  double lat, lat2, head_lat = 0, tail_lat = 0;
  g_array_set_size(heads, 0);
  for (guint d = 0; d < n; d++) {
    int dg = fs_comm_gpu(comm, d);
    if (fs_comm_host_index(comm, d) == a) {
      for (guint i = 0; i < na; i++) {
        if (ra[i] == d)
          continue;
        if (!route(s, fs_comm_gpu(comm, ra[i]), dg, &lat, error))
          return FALSE;
        add_route(s, 1, NULL, NULL);
        *lat_intra = MAX(*lat_intra, lat);
      }
      continue;
    }
    /* The distinct relays toward d and the sources of each. */
    guint nr = 0;
    for (guint i = 0; i < na; i++) {
      int g = fs_comm_gpu(comm, ra[i]);
      int rho;
      if (rail[d] >= 0) {
        int *slot = &relay_of[i * n_rails + (guint)rail[d]];
        if (*slot == -2)
          *slot = s->routes->relay(s->routes->ctx, g, dg);
        rho = *slot;
      } else {
        rho = s->routes->relay(s->routes->ctx, g, dg);
      }
      if (rho < 0) {
        /* No relay: this send is routed whole. */
        if (!route(s, g, dg, &lat, error))
          return FALSE;
        add_route(s, 1, NULL, NULL);
        *lat_inter = MAX(*lat_inter, lat);
        continue;
      }
      guint k = 0;
      while (k < nr && relay[k] != rho)
        k++;
      if (k == nr)
        relay[nr] = rho, cnt[nr++] = 0;
      cnt[k] += 1;
      if (rho == g)
        continue;
      guint hi = 0;
      while (hi < heads->len && !(g_array_index(heads, Head, hi).src == g &&
                                  g_array_index(heads, Head, hi).relay == rho))
        hi++;
      if (hi == heads->len) {
        Head hd = {g, rho, dg, 0};
        g_array_append_val(heads, hd);
      }
      g_array_index(heads, Head, hi).count += 1;
    }
    for (guint k = 0; k < nr; k++) {
      if (!route(s, relay[k], dg, &lat, error))
        return FALSE;
      add_route(s, cnt[k], NULL, NULL);
      tail_lat = MAX(tail_lat, lat);
    }
  }
  for (guint hi = 0; hi < heads->len; hi++) {
    const Head *hd = &g_array_index(heads, Head, hi);
    if (!route(s, hd->src, hd->d0, &lat, error))
      return FALSE;
    add_route(s, hd->count, NULL, NULL);
    if (!route(s, hd->relay, hd->d0, &lat2, error))
      return FALSE;
    add_route(s, -hd->count, NULL, NULL);
    head_lat = MAX(head_lat, lat - lat2);
  }
  *lat_inter = MAX(*lat_inter, head_lat + tail_lat);
  return TRUE;
}

/* ---- Aggregation by first fabric switch (a2a.h) ----------------------- */

/* A relay seen by the switch aggregation, per rail (a GPU may send
 * through the NICs of several rails on its PCIe switch): its GPU node, its
 * prefix toward that rail (the channels of its routes up to and including
 * the first into a fabric switch, alike on every path), that switch's index, the prefix's latency,
 * and the sends whose bytes go onto its prefix beyond those its own
 * routes (as a switch's representative) carried. */
typedef struct {
  int node;
  guint sw;
  guint pre_off, pre_len; /* into Agg.pre */
  double pre_lat;         /* ps */
  double extra;
} Relay;

/* One distinct relay of a (source host, rail) and the sources using it. */
typedef struct {
  guint relay;  /* index into Agg.relays */
  double count;
} SetEntry;

/* A head of a (source host, rail): source g to relay, first seen toward d0. */
typedef struct {
  int src, relay, d0;
  guint set;    /* host × n_rails + rail */
} SetHead;

typedef struct {
  guint n_hosts, n_rails;
  GHashTable *relay_index; /* relay node × n_rails + rail → 1 + index */
  GArray *relays;          /* Relay */
  GArray *pre;             /* FsChannelId: the prefixes back to back */
  GHashTable *sw_index;    /* switch node → 1 + index */
  GArray *sw_cnt;          /* double per switch: sends of the current destination */
  GArray *sw_rep;          /* guint per switch: its representative relay there */
  GArray *touched;         /* guint: switches with sends toward the current destination */
  guint *set_off, *set_n;  /* per host × rail into entries; set_n G_MAXUINT: not made yet */
  GArray *entries;         /* SetEntry */
  GArray *heads;           /* SetHead */
  double *dests;           /* per host × rail: remote destinations of that rail */
} Agg;

static void agg_clear(Agg *g)
{
  g_hash_table_unref(g->relay_index);
  g_array_unref(g->relays);
  g_array_unref(g->pre);
  g_hash_table_unref(g->sw_index);
  g_array_unref(g->sw_cnt);
  g_array_unref(g->sw_rep);
  g_array_unref(g->touched);
  g_free(g->set_off);
  g_free(g->set_n);
  g_array_unref(g->entries);
  g_array_unref(g->heads);
  g_free(g->dests);
}

/* The index of relay node rho toward rail r, made from its route to d (of
 * that rail: its prefix and first switch) at first sight.  *ok FALSE when
 * a path of that route meets no fabric switch or the paths' prefixes
 * differ. */
static gboolean agg_relay(Sums *s, Agg *g, int rho, guint rail, int d, guint *out, gboolean *ok,
                          GError **error)
{
  gpointer key = GUINT_TO_POINTER((guint)rho * g->n_rails + rail);
  gpointer v = g_hash_table_lookup(g->relay_index, key);
  if (v != NULL) {
    *out = GPOINTER_TO_UINT(v) - 1;
    return TRUE;
  }
  double lat;
  if (!route(s, rho, d, &lat, error))
    return FALSE;
  const FsChannelId *hops = (const FsChannelId *)s->h->data;
  Relay r = {rho, 0, g->pre->len, 0, 0, 0};
  int sw = -1;
  for (guint p = 0, o = 0; p < s->w->len && *ok; p++) {
    guint len = hops[o], k = 0;
    int at = -1;
    while (k < len && (at = s->routes->fabric(s->routes->ctx, hops[o + 1 + k])) < 0)
      k++;
    if (at < 0)
      *ok = FALSE; /* no fabric switch on the way */
    else if (p == 0) {
      sw = at;
      r.pre_len = k + 1;
      g_array_append_vals(g->pre, hops + o + 1, k + 1);
      r.pre_lat = (double)fs_flownet_path_latency(s->net, hops + o + 1, k + 1);
    } else if (at != sw || k + 1 != r.pre_len ||
               memcmp(hops + o + 1, &g_array_index(g->pre, FsChannelId, r.pre_off),
                      (k + 1) * sizeof(FsChannelId)) != 0) {
      *ok = FALSE; /* paths that part before the switch */
    }
    o += 1 + len;
  }
  if (!*ok)
    return TRUE;
  gpointer sv = g_hash_table_lookup(g->sw_index, GINT_TO_POINTER(sw));
  if (sv == NULL) {
    double zero = 0;
    guint none = 0;
    g_array_append_val(g->sw_cnt, zero);
    g_array_append_val(g->sw_rep, none);
    sv = GUINT_TO_POINTER(g->sw_cnt->len);
    g_hash_table_insert(g->sw_index, GINT_TO_POINTER(sw), sv);
  }
  r.sw = GPOINTER_TO_UINT(sv) - 1;
  g_array_append_val(g->relays, r);
  *out = g->relays->len - 1;
  g_hash_table_insert(g->relay_index, key, GUINT_TO_POINTER(g->relays->len));
  return TRUE;
}

/* The set of host a toward rail r (its distinct relays with their
 * sources, and its heads), made at first use from destination d of that
 * rail.  *ok FALSE where a source has no relay or agg_relay fails. */
static gboolean agg_set(Sums *s, const FsComm *comm, Agg *g, guint a, guint r, int d, guint *set,
                        gboolean *ok, GError **error)
{
  *set = a * g->n_rails + r;
  if (g->set_n[*set] != G_MAXUINT)
    return TRUE;
  guint na;
  const guint *ra = fs_comm_host_ranks(comm, a, &na);
  g->set_off[*set] = g->entries->len;
  g->set_n[*set] = 0;
  for (guint i = 0; i < na && *ok; i++) {
    int src = fs_comm_gpu(comm, ra[i]);
    int rho = s->routes->relay(s->routes->ctx, src, d);
    guint ri;
    if (rho < 0) {
      *ok = FALSE;
      break;
    }
    if (!agg_relay(s, g, rho, r, d, &ri, ok, error))
      return FALSE;
    if (!*ok)
      break;
    guint k = 0;
    SetEntry *e = &g_array_index(g->entries, SetEntry, g->set_off[*set]);
    while (k < g->set_n[*set] && e[k].relay != ri)
      k++;
    if (k == g->set_n[*set]) {
      SetEntry ne = {ri, 0};
      g_array_append_val(g->entries, ne);
      g->set_n[*set]++;
    }
    g_array_index(g->entries, SetEntry, g->set_off[*set] + k).count += 1;
    if (rho != src) {
      SetHead h = {src, rho, d, *set};
      g_array_append_val(g->heads, h);
    }
  }
  return TRUE;
}

/* The sends of every source host toward destination rank d: per first
 * switch, its representative relay's route to d times the sends through
 * the switch, the other relays' sends counted onto their prefixes
 * (Relay.extra).  With check (x, y, touched: scratch), instead of summing,
 * every relay's own route to d is compared with the composed one (the
 * representative's less its prefix, plus the relay's prefix); *ok FALSE
 * where they differ.  *tail: the slowest route beyond its prefix (ps). */
static gboolean agg_dest(Sums *s, const FsComm *comm, Agg *g, const int *rail, guint d,
                         gboolean check, double *x, double *y, GArray *touched, double *tail,
                         gboolean *ok, GError **error)
{
  int dg = fs_comm_gpu(comm, d);
  guint hd = fs_comm_host_index(comm, d), r = (guint)rail[d];
  double lat;
  for (guint a = 0; a < g->n_hosts && *ok; a++) {
    if (a == hd)
      continue;
    guint set;
    if (!agg_set(s, comm, g, a, r, dg, &set, ok, error))
      return FALSE;
    if (!*ok)
      break;
    if (!check)
      g->dests[set] += 1;
    for (guint k = 0; k < g->set_n[set]; k++) {
      const SetEntry *e = &g_array_index(g->entries, SetEntry, g->set_off[set] + k);
      Relay *rl = &g_array_index(g->relays, Relay, e->relay);
      double *cnt = &g_array_index(g->sw_cnt, double, rl->sw);
      if (*cnt == 0) {
        g_array_append_val(g->touched, rl->sw);
        g_array_index(g->sw_rep, guint, rl->sw) = e->relay;
      }
      *cnt += e->count;
      if (!check) {
        rl->extra += e->count;
        continue;
      }
      /* The relay's own route against the composed one. */
      const Relay *rep = &g_array_index(g->relays, Relay, g_array_index(g->sw_rep, guint, rl->sw));
      const FsChannelId *rp = &g_array_index(g->pre, FsChannelId, rep->pre_off);
      const FsChannelId *lp = &g_array_index(g->pre, FsChannelId, rl->pre_off);
      if (!route(s, rl->node, dg, &lat, error))
        return FALSE;
      add_route(s, 1, x, touched);
      if (!route(s, rep->node, dg, &lat, error))
        return FALSE;
      add_route(s, 1, y, touched);
      for (guint q = 0; q < rep->pre_len; q++)
        y[rp[q]] -= s->wire;
      for (guint q = 0; q < rl->pre_len; q++) {
        y[lp[q]] += s->wire;
        g_array_append_val(touched, lp[q]);
      }
      if (!same_loads(s, x, y, touched))
        *ok = FALSE;
    }
  }
  /* One route per first switch, from its representative. */
  for (guint k = 0; k < g->touched->len; k++) {
    guint sw = g_array_index(g->touched, guint, k);
    double *cnt = &g_array_index(g->sw_cnt, double, sw);
    if (!check && *ok) {
      Relay *rep = &g_array_index(g->relays, Relay, g_array_index(g->sw_rep, guint, sw));
      if (!route(s, rep->node, dg, &lat, error))
        return FALSE;
      add_route(s, *cnt, NULL, NULL);
      rep->extra -= *cnt;
      *tail = MAX(*tail, lat - rep->pre_lat);
    }
    *cnt = 0;
  }
  g_array_set_size(g->touched, 0);
  return TRUE;
}

/* The loads of every send across hosts by first fabric switch (a2a.h),
 * after checking on the ranks of host 1 that a relay's route is its
 * prefix and its switch's; *ok FALSE (and nothing summed) where the
 * aggregation does not apply.  *lat_inter: a head's latency plus the
 * slowest prefix and route beyond it (ps). */
static gboolean sum_by_switch(Sums *s, const FsComm *comm, const int *rail, guint n_rails,
                              double *lat_inter, gboolean *ok, GError **error)
{
  guint n = fs_comm_size(comm), H = fs_comm_n_hosts(comm), nc = fs_flownet_n_channels(s->net);
  *ok = s->routes->fabric != NULL;
  for (guint d = 0; d < n && *ok; d++)
    *ok = rail[d] >= 0;
  if (!*ok)
    return TRUE;
  Agg g = {H, n_rails, g_hash_table_new(NULL, NULL), g_array_new(FALSE, FALSE, sizeof(Relay)),
           g_array_new(FALSE, FALSE, sizeof(FsChannelId)), g_hash_table_new(NULL, NULL),
           g_array_new(FALSE, FALSE, sizeof(double)), g_array_new(FALSE, FALSE, sizeof(guint)),
           g_array_new(FALSE, FALSE, sizeof(guint)), g_new0(guint, (gsize)H * n_rails),
           g_new(guint, (gsize)H * n_rails), g_array_new(FALSE, FALSE, sizeof(SetEntry)),
           g_array_new(FALSE, FALSE, sizeof(SetHead)), g_new0(double, (gsize)H * n_rails)};
  for (guint k = 0; k < H * n_rails; k++)
    g.set_n[k] = G_MAXUINT;
  gboolean good = TRUE;
  double tail = 0, head_lat = 0, pre_lat = 0, lat, lat2;
  {
    g_autofree double *x = g_new0(double, nc), *y = g_new0(double, nc);
    g_autoptr(GArray) touched = g_array_new(FALSE, FALSE, sizeof(FsChannelId));
    guint nb;
    const guint *rb = fs_comm_host_ranks(comm, 1, &nb);
    for (guint j = 0; j < nb && good && *ok; j++)
      good = agg_dest(s, comm, &g, rail, rb[j], TRUE, x, y, touched, &tail, ok, error);
  }
  for (guint d = 0; d < n && good && *ok && !s->keyed; d++)
    good = agg_dest(s, comm, &g, rail, d, FALSE, NULL, NULL, NULL, &tail, ok, error);
  for (guint k = 0; k < g.heads->len && good && *ok && !s->keyed; k++) {
    const SetHead *h = &g_array_index(g.heads, SetHead, k);
    double m = g.dests[h->set];
    good = route(s, h->src, h->d0, &lat, error);
    if (good)
      add_route(s, m, NULL, NULL);
    good = good && route(s, h->relay, h->d0, &lat2, error);
    if (good)
      add_route(s, -m, NULL, NULL);
    head_lat = MAX(head_lat, lat - lat2);
  }
  for (guint k = 0; k < g.relays->len && good && *ok; k++) {
    const Relay *r = &g_array_index(g.relays, Relay, k);
    const FsChannelId *p = &g_array_index(g.pre, FsChannelId, r->pre_off);
    for (guint q = 0; q < r->pre_len; q++)
      s->load[p[q]] += r->extra * s->wire;
    pre_lat = MAX(pre_lat, r->pre_lat);
  }
  *lat_inter = MAX(*lat_inter, head_lat + pre_lat + tail);
  agg_clear(&g);
  return good;
}

/* The loads of one communicator on one network, per wire byte of a
 * block: the busiest channel's seconds per byte and the slowest paths'
 * latencies (ps), or declined. */
typedef struct {
  const FsComm *comm;
  const FsFlowNet *net;
  void *ctx;
  gboolean declined;
  double per_byte, lat_intra, lat_inter;
} Loads;

struct FsCollA2aMemo {
  GArray *loads; /* Loads */
};

FsCollA2aMemo *fs_coll_a2a_memo_new(void)
{
  FsCollA2aMemo *m = g_new0(FsCollA2aMemo, 1);
  m->loads = g_array_new(FALSE, FALSE, sizeof(Loads));
  return m;
}

void fs_coll_a2a_memo_free(FsCollA2aMemo *m)
{
  if (m == NULL)
    return;
  g_array_unref(m->loads);
  g_free(m);
}

/* Sums the loads of comm's sends per wire byte of a block into *out
 * (a2a.h: check_relays on the first two hosts, then sum_by_switch, else
 * sum_host over every host); out->declined where the decomposition does
 * not hold or a route is keyed.  FALSE with error when a pair has no
 * route. */
static gboolean sum_loads(const FsComm *comm, const FsFlowNet *net, const FsCollA2aRoutes *routes,
                          Loads *out, GError **error)
{
  guint nc = fs_flownet_n_channels(net);
  g_autofree double *load = g_new0(double, nc);
  Sums s = {net, routes, 1.0, load,
            g_array_new(FALSE, FALSE, sizeof(double)), g_array_new(FALSE, FALSE, sizeof(FsChannelId)),
            FALSE};
  g_autoptr(GArray) heads = g_array_new(FALSE, FALSE, sizeof(Head));
  gboolean ok = TRUE, same = TRUE;
  double lat_intra = 0, lat_inter = 0;
  /* Every rank's rail, so that a source asks its relay once per rail. */
  guint n = fs_comm_size(comm), n_rails = 1;
  g_autofree int *rail = g_new(int, n);
  for (guint d = 0; d < n; d++) {
    rail[d] = routes->rail(routes->ctx, fs_comm_gpu(comm, d));
    n_rails = MAX(n_rails, (guint)(rail[d] + 1));
  }
  ok = check_relays(&s, comm, 0, 1, &same, error);
  /* By first fabric switch where that holds; else host by host. */
  gboolean by_switch = FALSE;
  if (ok && same && !s.keyed)
    ok = sum_by_switch(&s, comm, rail, n_rails, &lat_inter, &by_switch, error);
  if (ok && same && !s.keyed && by_switch) {
    /* The sends inside each host, route by route. */
    for (guint a = 0; a < fs_comm_n_hosts(comm) && ok; a++) {
      guint na;
      const guint *ra = fs_comm_host_ranks(comm, a, &na);
      double lat;
      for (guint i = 0; i < na && ok; i++)
        for (guint j = 0; j < na && ok; j++) {
          if (i == j)
            continue;
          ok = route(&s, fs_comm_gpu(comm, ra[i]), fs_comm_gpu(comm, ra[j]), &lat, error);
          if (ok)
            add_route(&s, 1, NULL, NULL);
          lat_intra = MAX(lat_intra, lat);
        }
    }
  } else if (ok && same && !s.keyed) {
    memset(load, 0, nc * sizeof *load);
    lat_inter = 0;
    for (guint a = 0; ok && a < fs_comm_n_hosts(comm); a++)
      ok = sum_host(&s, comm, a, rail, n_rails, heads, &lat_intra, &lat_inter, error);
  }
  g_array_unref(s.w);
  g_array_unref(s.h);
  *out = (Loads){comm, net, routes->ctx, !same || s.keyed, 0, lat_intra, lat_inter};
  /* The busiest channel, per wire byte of a block. */
  for (guint c = 0; ok && c < nc; c++) {
    double cap = fs_flownet_channel_capacity(net, c);
    if (load[c] > 0 && cap > 0)
      out->per_byte = MAX(out->per_byte, load[c] / cap);
  }
  return ok;
}

/* See a2a.h.  The loads come from the memo or sum_loads; the time is the
 * executor's base latency, then T_bw = max(busiest channel's load /
 * capacity, one transfer's wire bytes / its rate cap), then the slowest
 * path's latency and the step latency of its class (inside a host or
 * across hosts). */
gboolean fs_coll_a2a_time_alone(const FsNcclParams *p, const FsCollSysInfo *sys,
                                const FsComm *comm, uint64_t nbytes, const FsCollChoice *choice,
                                const FsCollRequest *req, FsFlowNet *net,
                                const FsCollA2aRoutes *routes, FsCollA2aMemo *memo,
                                gboolean *timed, FsTime *elapsed, GError **error)
{
  *timed = FALSE;
  g_return_val_if_fail(fs_coll_a2a_applies(comm, choice, req), FALSE);
  if (routes == NULL || routes->relay == NULL || routes->once == NULL || routes->rail == NULL)
    return TRUE;
  FsCollExecParams ep;
  /* Every transfer of the plan starts at once: a latency depth of one. */
  fs_coll_exec_params_depth(p, sys, comm, req->op, nbytes, choice, 1, &ep);
  double payload = ep.payload > 0 ? ep.payload : 1.0;
  Loads ld, *found = NULL;
  for (guint i = 0; memo != NULL && i < memo->loads->len && found == NULL; i++) {
    Loads *e = &g_array_index(memo->loads, Loads, i);
    if (e->comm == comm && e->net == net && e->ctx == routes->ctx)
      found = e;
  }
  if (found != NULL) {
    ld = *found;
  } else {
    if (!sum_loads(comm, net, routes, &ld, error))
      return FALSE;
    if (memo != NULL)
      g_array_append_val(memo->loads, ld);
  }
  if (ld.declined)
    return TRUE;
  double lat_intra = ld.lat_intra, lat_inter = ld.lat_inter;
  double t_bw = ld.per_byte * ((double)req->bytes / payload);
  /* The longest transfer at its rate cap. */
  double cap_inter = ep.rate_cap_inter > 0 ? ep.rate_cap_inter : INFINITY;
  if (ep.rate_cap > 0)
    cap_inter = MIN(cap_inter, ep.rate_cap);
  double chan_wire = 0;
  for (guint c = 0; c < req->nchannels; c++)
    chan_wire = MAX(chan_wire, (double)fs_coll_channel_bytes(req->bytes, req->dtype,
                                                             req->nchannels, c) / payload);
  if (isfinite(cap_inter))
    t_bw = MAX(t_bw, chan_wire / cap_inter);
  if (ep.rate_cap > 0)
    t_bw = MAX(t_bw, chan_wire / ep.rate_cap);
  double tail = MAX(lat_inter + (double)ep.step_latency[1], lat_intra + (double)ep.step_latency[0]);
  FsTime t = fs_time_add_sat(ep.base_latency, fs_time_from_ps(t_bw * 1e12 + tail));
  FsSim *sim = fs_flownet_sim(net);
  if (!fs_sim_run_until(sim, fs_time_add_sat(fs_sim_now(sim), t), error))
    return FALSE;
  *elapsed = t;
  *timed = TRUE;
  return TRUE;
}
