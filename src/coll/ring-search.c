/* ring-search.c — NCCL-like search for the rings of one host.  See
 * ring-search.h. */
#include "coll/ring-search.h"

#include <math.h>
#include <string.h>

/* One channel a hop reserves on: its dense index and the share of the
 * hop's bytes that cross it. */
typedef struct {
  guint ch;
  double frac;
} Use;

/* A hop a → b: the channels its route crosses. */
typedef struct {
  FsRouteKind kind;
  guint off, n;   /* uses[off .. off+n) */
  double cap;     /* bytes/s the route carries alone: min over uses of cap / frac */
} Hop;

typedef struct {
  guint m;
  Hop *hop;        /* m × m, hop[a*m + b] */
  Use *uses;
  double *cap;     /* per dense channel */
  double *rem;     /* per dense channel, during a search */
  guint nch;
  /* Per dense channel: the first hop of a route from GPU first[c], the
   * last hop of a route to GPU last[c] (-1: neither), and the best (lowest)
   * path type of those routes; for the bound on the number of rings. */
  int *first, *last;
  FsRouteKind *first_kind, *last_kind;
  /* Search state. */
  FsRouteKind kmax;
  double speed;
  guint target, max_rings;
  guint nr;        /* rings completed */
  guint *cur;      /* max_rings × m positions */
  guint *best;
  guint best_n;
  gboolean *used;  /* GPUs on the ring being built */
  guint *cand;     /* max_rings × m × m: candidate lists per ring and depth */
  guint64 work, budget;
} Search;

/* The slack allowed when comparing a reservation to what is left: a hop
 * whose capacity is exactly k × speed must hold k rings despite rounding. */
#define EPS 1e-9

static gboolean hop_fits(const Search *s, const Hop *h)
{
  for (guint i = 0; i < h->n; i++) {
    const Use *u = &s->uses[h->off + i];
    if (s->rem[u->ch] < s->speed * u->frac - EPS * s->cap[u->ch])
      return FALSE;
  }
  return TRUE;
}

static void hop_take(Search *s, const Hop *h, double sign)
{
  for (guint i = 0; i < h->n; i++) {
    const Use *u = &s->uses[h->off + i];
    s->rem[u->ch] -= sign * s->speed * u->frac;
  }
}

/* Capacity left on a hop (what one more flow on it could get). */
static double hop_left(const Search *s, const Hop *h)
{
  double left = INFINITY;
  for (guint i = 0; i < h->n; i++) {
    const Use *u = &s->uses[h->off + i];
    left = MIN(left, s->rem[u->ch] / u->frac);
  }
  return left;
}

/* Orders candidate next hops from a: path type, then capacity left
 * (larger first), then GPU index.  Insertion sort: m is small. */
static guint candidates(Search *s, guint a, guint *out)
{
  guint k = 0;
  double left[FS_RING_SEARCH_MAX_GPUS];
  for (guint b = 0; b < s->m; b++) {
    const Hop *h = &s->hop[a * s->m + b];
    if (s->used[b] || h->kind > s->kmax || !hop_fits(s, h))
      continue;
    double l = hop_left(s, h);
    guint j = k++;
    for (; j > 0; j--) {
      const Hop *p = &s->hop[a * s->m + out[j - 1]];
      gboolean before = h->kind < p->kind || (h->kind == p->kind && l > left[j - 1] * (1 + EPS));
      if (!before)
        break;
      out[j] = out[j - 1], left[j] = left[j - 1];
    }
    out[j] = b, left[j] = l;
  }
  return k;
}

/* Extends ring s->nr at position depth (1..m).  TRUE stops the whole
 * search: the target is reached or the budget is spent. */
static gboolean dfs(Search *s, guint depth)
{
  guint m = s->m;
  guint *ring = s->cur + (gsize)s->nr * m;
  if (s->work >= s->budget)
    return TRUE;
  if (depth == m) {
    const Hop *close = &s->hop[ring[m - 1] * m + ring[0]];
    s->work++;
    if (!hop_fits(s, close))
      return FALSE;
    hop_take(s, close, 1);
    s->nr++;
    if (s->nr > s->best_n) {
      s->best_n = s->nr;
      memcpy(s->best, s->cur, sizeof(guint) * s->nr * m);
    }
    gboolean stop = s->nr >= s->target;
    if (!stop) {
      /* The next ring, from the same first GPU. */
      memset(s->used, 0, sizeof(gboolean) * m);
      s->cur[(gsize)s->nr * m] = ring[0];
      s->used[ring[0]] = TRUE;
      stop = dfs(s, 1);
      for (guint i = 0; i < m; i++)
        s->used[i] = TRUE;
    }
    if (stop)
      return TRUE;
    s->nr--;
    hop_take(s, close, -1);
    return FALSE;
  }
  guint a = ring[depth - 1];
  guint *cand = s->cand + ((gsize)s->nr * m + depth) * m;
  guint nc = candidates(s, a, cand);
  for (guint i = 0; i < nc; i++) {
    guint b = cand[i];
    const Hop *h = &s->hop[a * m + b];
    s->work++;
    hop_take(s, h, 1);
    s->used[b] = TRUE;
    ring[depth] = b;
    if (dfs(s, depth + 1))
      return TRUE;
    s->used[b] = FALSE;
    hop_take(s, h, -1);
    if (s->work >= s->budget)
      return TRUE;
  }
  return FALSE;
}

/* Runs one search at speed with path types up to kmax; returns the rings
 * found (s->best, s->best_n). */
static void search_at(Search *s, double speed, FsRouteKind kmax, guint target)
{
  s->speed = speed;
  s->kmax = kmax;
  s->target = target;
  s->nr = 0;
  s->best_n = 0;
  s->work = 0;
  memcpy(s->rem, s->cap, sizeof(double) * s->nch);
  memset(s->used, 0, sizeof(gboolean) * s->m);
  s->cur[0] = 0;
  s->used[0] = TRUE;
  dfs(s, 1);
}

static int cmp_desc(gconstpointer a, gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x > y ? -1 : x < y ? 1 : 0;
}

/* Routes every ordered pair and gathers the channels they reserve on. */
static gboolean build_hops(Search *s, FsRouter *router, const guint *gpus, GError **error)
{
  guint m = s->m;
  FsFlowNet *net = fs_router_net(router);
  g_autoptr(GHashTable) dense = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_autoptr(GArray) uses = g_array_new(FALSE, FALSE, sizeof(Use));
  g_autoptr(GArray) caps = g_array_new(FALSE, FALSE, sizeof(double));
  /* first[c] / last[c]: the GPU whose routes leave by (arrive on) c, or -1. */
  g_autoptr(GArray) first = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GArray) last = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GArray) fkind = g_array_new(FALSE, FALSE, sizeof(FsRouteKind));
  g_autoptr(GArray) lkind = g_array_new(FALSE, FALSE, sizeof(FsRouteKind));
  FsRoute r;
  fs_route_init(&r);
  s->hop = g_new0(Hop, (gsize)m * m);
  for (guint a = 0; a < m; a++)
    for (guint b = 0; b < m; b++) {
      if (a == b)
        continue;
      if (!fs_router_route(router, gpus[a], gpus[b], 0, &r, error)) {
        fs_route_clear(&r);
        return FALSE;
      }
      Hop *h = &s->hop[a * m + b];
      h->kind = r.kind;
      h->off = uses->len;
      for (guint p = 0; p < r.n_paths; p++) {
        guint len;
        const FsChannelId *path = fs_route_path(&r, p, &len);
        double w = g_array_index(r.weights, double, p);
        for (guint i = 0; i < len; i++) {
          gpointer v;
          guint d;
          if (g_hash_table_lookup_extended(dense, GUINT_TO_POINTER(path[i] + 1), NULL, &v)) {
            d = GPOINTER_TO_UINT(v);
          } else {
            d = caps->len;
            double c = fs_flownet_channel_capacity(net, path[i]);
            int none = -1;
            FsRouteKind worst = FS_ROUTE_N_KINDS;
            g_array_append_val(caps, c);
            g_array_append_val(first, none);
            g_array_append_val(last, none);
            g_array_append_val(fkind, worst);
            g_array_append_val(lkind, worst);
            g_hash_table_insert(dense, GUINT_TO_POINTER(path[i] + 1), GUINT_TO_POINTER(d));
          }
          if (i == 0) {
            g_array_index(first, int, d) = (int)a;
            FsRouteKind *fk = &g_array_index(fkind, FsRouteKind, d);
            *fk = MIN(*fk, r.kind);
          }
          if (i + 1 == len) {
            g_array_index(last, int, d) = (int)b;
            FsRouteKind *lk = &g_array_index(lkind, FsRouteKind, d);
            *lk = MIN(*lk, r.kind);
          }
          /* One channel twice on a route (two paths share it) adds up. */
          guint j = h->off;
          while (j < uses->len && g_array_index(uses, Use, j).ch != d)
            j++;
          if (j < uses->len) {
            g_array_index(uses, Use, j).frac += w;
          } else {
            Use u = {d, w};
            g_array_append_val(uses, u);
          }
        }
      }
      h->n = uses->len - h->off;
    }
  fs_route_clear(&r);
  s->nch = caps->len;
  s->cap = (double *)g_array_free(g_steal_pointer(&caps), FALSE);
  s->uses = (Use *)g_array_free(g_steal_pointer(&uses), FALSE);
  s->rem = g_new(double, MAX(s->nch, 1));
  s->first = (int *)g_array_free(g_steal_pointer(&first), FALSE);
  s->last = (int *)g_array_free(g_steal_pointer(&last), FALSE);
  s->first_kind = (FsRouteKind *)g_array_free(g_steal_pointer(&fkind), FALSE);
  s->last_kind = (FsRouteKind *)g_array_free(g_steal_pointer(&lkind), FALSE);
  for (guint i = 0; i < m * m; i++) {
    Hop *h = &s->hop[i];
    h->cap = h->n > 0 ? INFINITY : 0;
    for (guint k = 0; k < h->n; k++) {
      const Use *u = &s->uses[h->off + k];
      h->cap = MIN(h->cap, s->cap[u->ch] / u->frac);
    }
  }
  return TRUE;
}

/* The most a ring set on hops of types up to kmax can carry per GPU: the
 * smallest, over GPUs, of what the channels its routes leave by (arrive
 * on) carry.  O(channels + m). */
static double io_bound(const Search *s, FsRouteKind kmax)
{
  g_autofree double *out = g_new0(double, s->m);
  g_autofree double *in = g_new0(double, s->m);
  for (guint c = 0; c < s->nch; c++) {
    if (s->first[c] >= 0 && s->first_kind[c] <= kmax)
      out[s->first[c]] += s->cap[c];
    if (s->last[c] >= 0 && s->last_kind[c] <= kmax)
      in[s->last[c]] += s->cap[c];
  }
  double bound = INFINITY;
  for (guint a = 0; a < s->m; a++)
    bound = MIN(bound, MIN(out[a], in[a]));
  return bound;
}

static void search_free(Search *s)
{
  g_free(s->hop);
  g_free(s->uses);
  g_free(s->cap);
  g_free(s->rem);
  g_free(s->first);
  g_free(s->last);
  g_free(s->first_kind);
  g_free(s->last_kind);
  g_free(s->cur);
  g_free(s->best);
  g_free(s->used);
  g_free(s->cand);
}

/* See ring-search.h. For each path type from NVLink down, tries the candidate ring speeds
 * (every distinct hop capacity divided by 1..max_rings, fastest first, capped by the GPUs' in
 * and out bound) and keeps the set of rings with the highest total that beats the previous by
 * 0.1 %; gives up on a type after FS_RING_SEARCH_PATIENCE misses. The search is bounded by
 * FS_RING_SEARCH_BUDGET steps per speed (out->work adds them up); out->order belongs to out. */
gboolean fs_coll_ring_search(FsRouter *router, const guint *gpus, guint m, guint max_rings,
                             FsRingSet *out, GError **error)
{
  memset(out, 0, sizeof *out);
  out->m = m;
  if (m < 2 || m > FS_RING_SEARCH_MAX_GPUS || max_rings == 0)
    return TRUE;
  Search s = {.m = m, .max_rings = max_rings, .budget = FS_RING_SEARCH_BUDGET};
  if (!build_hops(&s, router, gpus, error)) {
    search_free(&s);
    return FALSE;
  }
  s.cur = g_new(guint, (gsize)max_rings * m);
  s.best = g_new(guint, (gsize)max_rings * m);
  s.used = g_new(gboolean, m);
  s.cand = g_new(guint, (gsize)max_rings * m * m);
  double best_total = 0;
  /* Path types, best first: the first under which a ring exists wins. */
  for (int k = FS_ROUTE_NVLINK; k < FS_ROUTE_N_KINDS && out->n_rings == 0; k++) {
    FsRouteKind kmax = (FsRouteKind)k;
    gboolean any = FALSE;
    for (guint i = 0; i < m * m; i++)
      any = any || (i / m != i % m && s.hop[i].kind == kmax);
    if (!any)
      continue;
    /* Bound: a GPU cannot send (receive) more than the channels its hops
     * of these types leave (arrive) by carry. */
    double bound = io_bound(&s, kmax);
    /* Speeds: every distinct hop capacity / 1..max_rings, highest first. */
    g_autoptr(GArray) speeds = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < m * m; i++) {
      if (i / m == i % m || s.hop[i].kind > kmax)
        continue;
      gboolean seen = FALSE;
      for (guint j = 0; j < i && !seen; j++)
        seen = j / m != j % m && s.hop[j].kind <= kmax &&
               fabs(s.hop[j].cap - s.hop[i].cap) <= EPS * s.hop[i].cap;
      for (guint d = 1; !seen && d <= max_rings; d++) {
        double v = s.hop[i].cap / d;
        g_array_append_val(speeds, v);
      }
    }
    g_array_sort(speeds, cmp_desc);
    double prev = INFINITY;
    guint misses = 0;
    for (guint i = 0; i < speeds->len && misses < FS_RING_SEARCH_PATIENCE; i++) {
      double v = g_array_index(speeds, double, i);
      if (v >= prev * (1 - EPS))
        continue;
      prev = v;
      guint target = (guint)MIN((double)max_rings, floor(bound / v * (1 + EPS)));
      /* Only a strictly better total (by 0.1 %) replaces the best. */
      if (target == 0 || target * v <= best_total * 1.001)
        continue;
      search_at(&s, v, kmax, target);
      out->work += s.work;
      if (s.best_n == 0 || s.best_n * v <= best_total * 1.001) {
        misses += best_total > 0;
        continue;
      }
      misses = 0;
      best_total = s.best_n * v;
      out->n_rings = s.best_n;
      out->speed = v;
      g_free(out->order);
      out->order = g_memdup2(s.best, sizeof(guint) * s.best_n * m);
      out->kind = FS_ROUTE_LOCAL;
      for (guint r = 0; r < s.best_n; r++)
        for (guint p = 0; p < m; p++) {
          const guint *o = out->order + r * m;
          out->kind = MAX(out->kind, s.hop[o[p] * m + o[(p + 1) % m]].kind);
        }
    }
  }
  search_free(&s);
  return TRUE;
}

void fs_ring_set_clear(FsRingSet *set)
{
  g_clear_pointer(&set->order, g_free);
  set->n_rings = 0;
}
