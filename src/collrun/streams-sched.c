/* streams-sched.c — the schedule of a stream model's skeleton: a max-plus
 * evaluation of its plan at the streams' rates, the links' deficit of that
 * schedule (link_extra), and one repair of it to the links' capacity
 * (max-min between events, repair); or the step executor's run of its plan
 * on a network of its own (skel_run).  The streams, their routes and the
 * loaded links come from streams.c (pace); see streams-private.h.  Links
 * of one class (Ctx.link_rep) are computed once; sorts are merge sorts
 * inlined for their element types (DEFINE_MERGE_SORT). */
#include "collrun/streams-private.h"

#include "core/rng.h"
#include "core/sim.h"

#include <math.h>
#include <string.h>

/* The value at `to` of a quantity measured at three equally spaced counts
 * (or at one: then it is that value); *agree: the two slopes agree to tol
 * (relative). */
double streams_extrap(const double v[3], const guint64 at[3], guint n, guint64 to, gboolean *agree,
                      double tol)
{
  if (n == 1)
    return v[0];
  double s1 = (v[1] - v[0]) / (double)(at[1] - at[0]);
  double s2 = (v[2] - v[1]) / (double)(at[2] - at[1]);
  if (agree != NULL && fabs(s2 - s1) > tol * MAX(fabs(s2), fabs(s1)) + 1e-9)
    *agree = FALSE;
  return v[2] + ((double)to - (double)at[2]) * s2;
}

/* A skeleton's plan as max-plus walks it (StreamsDag, streams-private.h),
 * made once per skeleton and kept with it (a memo's skeleton serves every
 * size of a sweep: skel19), so nothing in it depends on the latencies of
 * an FsCollExecParams: an edge holds its latency's class (LAT_*), which a
 * walk looks up in the ep it is given.  Each transfer's wire bytes,
 * whether a data dependency leaves a step, and whether every step depends
 * only on earlier ones (ordered: the plan's order is then a topological
 * one and max-plus pulls each step's start from its predecessors in that
 * order: each step's incoming edges, its data dependencies then its
 * credits, CSR, one from a connection's previous transfer marked
 * EDGE_DRAIN).  Otherwise each step's successors (CSR, a credit's marked
 * by the top bit, a FIFO edge of one connection by the next: EDGE_CREDIT,
 * EDGE_DRAIN) and its count of predecessors, for a walk in dependency
 * order (Kahn). */
struct StreamsDag {
  guint n;
  gboolean ordered;
  double *wire;       /* per step: its wire bytes (transfers; 0 otherwise) */
  gboolean *data_succ;
  guint *in_off;      /* ordered: edges into i: in[in_off[i] .. in_off[i + 1]) */
  uint32_t *in;       /* ordered: the source step, EDGE_DRAIN when from its drain */
  guint8 *in_lat;     /* ordered: per incoming edge, its LAT_* */
  guint *pending;     /* not ordered: predecessors per step */
  guint *off;         /* successors of i: succ[off[i] .. off[i + 1]) */
  uint32_t *succ;
  guint8 *elat;       /* per successor edge, its LAT_* */
};

typedef StreamsDag Dag;

#define EDGE_CREDIT 0x80000000u
#define EDGE_DRAIN 0x40000000u
#define EDGE_STEP(e) ((e) & ~(EDGE_CREDIT | EDGE_DRAIN))

/* The latency classes of an edge (dep_class), looked up in lat_table. */
enum { LAT_NONE, LAT_STEP_INTRA, LAT_STEP_INTER, LAT_RING_INTER, LAT_N };

/* The class of the latency a data dependency of step b on step a adds
 * after a ends: the step latency of a's class when they are not one
 * connection's FIFO, a ring's network step between consecutive steps
 * across hosts (exec.h), else none.  A FIFO edge of one connection runs
 * from a's drain (the end of its sending interval, xb), as the
 * executor's does (exec.h), any other from a's end. */
static inline guint8 dep_class(const FsCollStep *a, const FsCollStep *b)
{
  if (!fs_coll_step_same_conn(a, b))
    return a->kind == FS_STEP_XFER ? (a->inter ? LAT_STEP_INTER : LAT_STEP_INTRA) : LAT_NONE;
  if (a->inter && b->ring_head)
    return LAT_RING_INTER; /* a ring's next step (exec.h) */
  return LAT_NONE;
}

/* ep's latency (ps) per class: lat[LAT_*]. */
static void lat_table(const FsCollExecParams *ep, double lat[LAT_N])
{
  lat[LAT_NONE] = 0;
  lat[LAT_STEP_INTRA] = (double)ep->step_latency[0];
  lat[LAT_STEP_INTER] = (double)ep->step_latency[1];
  lat[LAT_RING_INTER] = (double)ep->ring_step_latency_inter;
}

/* See streams-private.h.  Cost: O(steps + edges). */
StreamsDag *streams_dag_new(const Skel *k, double payload)
{
  const FsCollPlan *pl = k->plan;
  guint n = fs_coll_plan_n_steps(pl);
  Dag *g = g_new0(Dag, 1);
  g->n = n;
  g->wire = g_new0(double, n + 1);
  g->data_succ = g_new0(gboolean, n + 1);
  g->ordered = TRUE;
  if (n == 0)
    return g;
  const FsCollStep *steps = fs_coll_plan_step(pl, 0);
  guint total = 0;
  for (guint i = 0; i < n; i++) {
    guint nd, nc;
    const uint32_t *d = fs_coll_plan_deps(pl, i, &nd);
    const uint32_t *cr = fs_coll_plan_credits(pl, i, &nc);
    total += nd + nc;
    for (guint j = 0; j < nd; j++) {
      g->data_succ[d[j]] = TRUE;
      g->ordered = g->ordered && d[j] < i;
    }
    for (guint j = 0; j < nc; j++)
      g->ordered = g->ordered && cr[j] < i;
    if (steps[i].kind == FS_STEP_XFER)
      g->wire[i] = ceil((double)steps[i].bytes / payload) * MAX(steps[i].width, 1);
  }
  if (g->ordered) {
    g->in_off = g_new(guint, n + 1);
    g->in = g_new(uint32_t, total + 1);
    g->in_lat = g_new(guint8, total + 1);
    guint x = 0;
    for (guint i = 0; i < n; i++) {
      guint nd, nc;
      const uint32_t *d = fs_coll_plan_deps(pl, i, &nd);
      const uint32_t *cr = fs_coll_plan_credits(pl, i, &nc);
      g->in_off[i] = x;
      for (guint j = 0; j < nd; j++, x++) {
        g->in[x] = d[j] | (fs_coll_step_same_conn(&steps[d[j]], &steps[i]) ? EDGE_DRAIN : 0);
        g->in_lat[x] = dep_class(&steps[d[j]], &steps[i]);
      }
      for (guint j = 0; j < nc; j++, x++) {
        g->in[x] = cr[j];
        g->in_lat[x] = LAT_NONE; /* credits: none */
      }
    }
    g->in_off[n] = x;
    return g;
  }
  g->pending = g_new0(guint, n + 1);
  g->off = g_new0(guint, n + 2);
  for (guint i = 0; i < n; i++) {
    guint nd, nc;
    const uint32_t *d = fs_coll_plan_deps(pl, i, &nd);
    const uint32_t *cr = fs_coll_plan_credits(pl, i, &nc);
    g->pending[i] = nd + nc;
    for (guint j = 0; j < nd; j++)
      g->off[d[j] + 1]++;
    for (guint j = 0; j < nc; j++)
      g->off[cr[j] + 1]++;
  }
  for (guint i = 0; i < n; i++)
    g->off[i + 1] += g->off[i];
  g->succ = g_new(uint32_t, total + 1);
  g->elat = g_new(guint8, total + 1);
  g_autofree guint *fill = g_new0(guint, n);
  for (guint i = 0; i < n; i++) {
    guint nd, nc;
    const uint32_t *d = fs_coll_plan_deps(pl, i, &nd);
    const uint32_t *cr = fs_coll_plan_credits(pl, i, &nc);
    for (guint j = 0; j < nd; j++) {
      guint x = g->off[d[j]] + fill[d[j]]++;
      g->succ[x] = i | (fs_coll_step_same_conn(&steps[d[j]], &steps[i]) ? EDGE_DRAIN : 0);
      g->elat[x] = dep_class(&steps[d[j]], &steps[i]);
    }
    for (guint j = 0; j < nc; j++) {
      guint x = g->off[cr[j]] + fill[cr[j]]++;
      g->succ[x] = i | EDGE_CREDIT;
      g->elat[x] = LAT_NONE; /* credits: none */
    }
  }
  return g;
}

void streams_dag_free(StreamsDag *g)
{
  if (g == NULL)
    return;
  g_free(g->wire);
  g_free(g->data_succ);
  g_free(g->in_off);
  g_free(g->in);
  g_free(g->in_lat);
  g_free(g->pending);
  g_free(g->off);
  g_free(g->succ);
  g_free(g->elat);
  g_free(g);
}

/* Step i's end when it may start at `ready`: a transfer takes its wire
 * bytes at its stream's rate (its sending interval into xa..xb) plus its
 * path latency, a reduction its bytes at the reduce bandwidth. */
static inline double step_end(const Skel *k, const Dag *g, const Stream *st,
                              const FsCollExecParams *ep, const double *stretch, guint i,
                              const FsCollStep *s, double ready, double *xa, double *xb)
{
  double fin = ready;
  if (s->kind == FS_STEP_XFER) {
    const Stream *c = &st[k->conn[i]];
    xa[i] = ready;
    if (c->wire > 0)
      fin += g->wire[i] / c->wire * c->t * 1e12 * stretch[i];
    xb[i] = fin; /* the bytes have left: the links are free (flow.h) */
    fin += c->lat;
  } else if (ep->reduce_bw > 0) {
    fin += (double)s->bytes / ep->reduce_bw * 1e12;
  }
  return fin;
}

/* Max-plus time of a skeleton (ps after its kickoff): each step starts
 * when the last of its dependencies has ended (the previous transfer of
 * its connection: drained, xb) plus the latency the edge adds
 * (dep_class; credits none) and ends as step_end says; the end is the
 * last completion plus the step latency of a final delivery (exec.c).
 * Every figure is a maximum of the same sums in either walk, so the two
 * give the same bits.  fin: scratch of a double per step (ordered). */
static double maxplus(const Skel *k, const Dag *g, const Stream *st, const FsCollExecParams *ep,
                      const double *stretch, double *xa, double *xb, double *fin)
{
  const FsCollPlan *pl = k->plan;
  guint n = g->n;
  if (n == 0)
    return 0;
  const FsCollStep *steps = fs_coll_plan_step(pl, 0);
  double lat[LAT_N];
  lat_table(ep, lat);
  double end = 0;
  if (g->ordered) {
    for (guint i = 0; i < n; i++) {
      double ready = 0;
      for (guint x = g->in_off[i]; x < g->in_off[i + 1]; x++) {
        uint32_t e = g->in[x];
        double from = e & EDGE_DRAIN ? xb[EDGE_STEP(e)] : fin[EDGE_STEP(e)];
        ready = MAX(ready, from + lat[g->in_lat[x]]);
      }
      fin[i] = step_end(k, g, st, ep, stretch, i, &steps[i], ready, xa, xb);
    }
    for (guint i = 0; i < n; i++) {
      const FsCollStep *s = &steps[i];
      double out_lat = s->kind == FS_STEP_XFER ? (double)ep->step_latency[s->inter ? 1 : 0] : 0;
      if (!g->data_succ[i])
        end = MAX(end, fin[i] + out_lat);
      end = MAX(end, fin[i]);
    }
    return end;
  }
  g_autofree guint *pending = g_memdup2(g->pending, sizeof(guint) * n);
  g_autofree double *ready = g_new0(double, n);
  g_autofree guint *queue = g_new(guint, n);
  guint head = 0, tail = 0;
  for (guint i = 0; i < n; i++)
    if (pending[i] == 0)
      queue[tail++] = i;
  while (head < tail) {
    guint i = queue[head++];
    const FsCollStep *s = &steps[i];
    double fin = step_end(k, g, st, ep, stretch, i, s, ready[i], xa, xb);
    double out_lat = s->kind == FS_STEP_XFER ? (double)ep->step_latency[s->inter ? 1 : 0] : 0;
    if (!g->data_succ[i])
      end = MAX(end, fin + out_lat);
    end = MAX(end, fin);
    for (guint x = g->off[i]; x < g->off[i + 1]; x++) {
      guint j = EDGE_STEP(g->succ[x]);
      double from = g->succ[x] & EDGE_DRAIN ? xb[i] : fin;
      ready[j] = MAX(ready[j], from + lat[g->elat[x]]);
      if (--pending[j] == 0)
        queue[tail++] = j;
    }
  }
  return end;
}

typedef struct {
  double t;   /* ps */
  double r;   /* bytes/ps, signed: + at the start, − at the end */
  guint i;    /* the transfer */
} DemandEv;

typedef struct {
  double a, b; /* ps: a transfer's sending interval */
} Span;

/* The orders the repair and link_extra sort by.  Events: by time, ends
 * before starts at one instant, then by transfer (a total order: a
 * transfer's two events are at different times).  Spans: by start (the
 * union link_extra takes of them does not depend on the order of ties). */
static inline gboolean ev_less(const DemandEv *x, const DemandEv *y)
{
  if (x->t != y->t)
    return x->t < y->t;
  if ((x->r < 0) != (y->r < 0))
    return x->r < 0;
  return x->i < y->i;
}

static inline gboolean span_less(const Span *x, const Span *y)
{
  return x->a < y->a;
}

static inline gboolean dbl_less(const double *x, const double *y)
{
  return *x < *y;
}

/* NAME(a, n, tmp): a stable merge sort of a[0 .. n) by LESS, tmp scratch
 * of n elements: the runs already in order (at least 16 long, an
 * insertion sort extending a shorter one), then merges of neighbouring
 * runs.  The events of one link come from a few streams, each one's
 * transfers in time order already (a connection's FIFO), so a link of k
 * streams costs about log2(k) passes, not log2(n / 16) (skel19: a
 * quarter of a 1,024-GPU NVLS tree's repair).  Stable, so its result is
 * that of any stable sort.  Cost: O(n log n) comparisons, inlined
 * (qsort's calls through a pointer and byte copies were a fifth of a
 * 4,096-GPU run). */
#define DEFINE_MERGE_SORT(NAME, T, LESS)                                                    \
  static void NAME(T *a, guint n, T *tmp)                                                   \
  {                                                                                         \
    enum { RUN = 16, STACK_RUNS = 64 };                                                     \
    guint stack_b[STACK_RUNS + 1];                                                          \
    gsize need = (gsize)n / RUN + 2;                                                        \
    guint *b = need <= STACK_RUNS ? stack_b : g_new(guint, need + 1);                       \
    guint m = 0;                                                                            \
    for (guint lo = 0; lo < n;) {                                                           \
      guint hi = lo + 1;                                                                    \
      while (hi < n && !LESS(&a[hi], &a[hi - 1]))                                           \
        hi++;                                                                               \
      guint end = hi - lo < RUN ? MIN(lo + RUN, n) : hi;                                    \
      for (guint i = hi; i < end; i++) {                                                    \
        if (!LESS(&a[i], &a[i - 1]))                                                        \
          continue;                                                                         \
        T v = a[i];                                                                         \
        guint j = i;                                                                        \
        for (; j > lo && LESS(&v, &a[j - 1]); j--)                                          \
          a[j] = a[j - 1];                                                                  \
        a[j] = v;                                                                           \
      }                                                                                     \
      b[m++] = lo;                                                                          \
      lo = end;                                                                             \
    }                                                                                       \
    b[m] = n;                                                                               \
    T *src = a, *dst = tmp;                                                                 \
    while (m > 1) {                                                                         \
      guint nm = 0;                                                                         \
      for (guint r = 0; r < m; r += 2) {                                                    \
        guint lo = b[r], mid = b[MIN(r + 1, m)], hi = b[MIN(r + 2, m)];                    \
        guint p = lo, q = mid, o = lo;                                                      \
        b[nm++] = lo;                                                                       \
        if (mid == hi || !LESS(&src[mid], &src[mid - 1])) {                                 \
          memcpy(dst + lo, src + lo, sizeof(T) * (hi - lo));                                \
          continue;                                                                         \
        }                                                                                   \
        while (p < mid && q < hi)                                                           \
          dst[o++] = LESS(&src[q], &src[p]) ? src[q++] : src[p++];                          \
        while (p < mid)                                                                     \
          dst[o++] = src[p++];                                                              \
        while (q < hi)                                                                      \
          dst[o++] = src[q++];                                                              \
      }                                                                                     \
      b[nm] = n;                                                                            \
      m = nm;                                                                               \
      T *sw = src;                                                                          \
      src = dst, dst = sw;                                                                  \
    }                                                                                       \
    if (src != a)                                                                           \
      memcpy(a, src, sizeof(T) * n);                                                        \
    if (b != stack_b)                                                                       \
      g_free(b);                                                                            \
  }

DEFINE_MERGE_SORT(ev_sort, DemandEv, ev_less)
DEFINE_MERGE_SORT(span_sort, Span, span_less)
DEFINE_MERGE_SORT(dbl_sort, double, dbl_less)

/* A growable scratch array of elements of `size` bytes (repair, link_extra):
 * room for at least `want` elements, and as many again for a sort's tmp. */
static void *scratch_room(void *p, gsize *cap, gsize want, gsize size)
{
  if (want <= *cap)
    return p;
  *cap = MAX(want, 2 * *cap);
  g_free(p);
  return g_malloc(size * 2 * *cap);
}

/* Repair's scratch, kept across links: events, the transfers active on a
 * link with each one's place in that set, the active rates to sort, the
 * streams seen on a link. */
typedef struct {
  DemandEv *ev;
  gsize ev_cap;
  DemandEv *act;
  guint *pos;
  double *srt;
  guint32 *seen;
  Span *iv;
  gsize iv_cap;
} Scratch;

/* One repair of skeleton k's max-plus schedule (xa..xb: each transfer's
 * sending interval) to its links' capacity (streams.h).  On every loaded
 * link each transfer sending asks for its rate in the schedule (wire bytes
 * over its interval, times the share of its stream's bytes on the link).
 * Between two events the link is shared max-min among those sending (one
 * asking less than the level keeps its rate).  A transfer's stretch
 * becomes the largest, over its links, of its mean slowdown over its
 * interval (rate over share), times its stretch.  start, worst: scratch
 * of a double per step; wsum: of a double per stream, zero, left zero; sc:
 * scratch (act, pos and srt of a step each, seen of a stream each).
 * Returns the largest relative change of a stretch.  Cost: per link, its
 * transfers' events sorted, and a sort of the transfers sending at once
 * where they ask for more than the capacity. */
static double repair(const Ctx *c, const Skel *k, const Dag *g, const double *xa,
                     const double *xb, const guint *off, const guint *by, double *stretch,
                     double *start, double *worst, double *wsum, Scratch *sc)
{
  guint n = g->n, ns = c->streams->len;
  memset(worst, 0, sizeof(double) * n);
  DemandEv *act = sc->act;
  guint *pos = sc->pos;
  for (guint l = 0; l < c->n_links; l++) {
    if (c->link_rep[l] != l)
      continue; /* its class's first link gave the same slowdowns (worst[] is a maximum) */
    double cap = fs_flownet_channel_capacity(c->net, c->links[l]) * 1e-12;
    /* A stream whose several paths cross the link: once, their shares summed. */
    guint nseen = 0;
    gsize room = 0;
    for (guint j = c->inc_off[l]; j < c->inc_off[l + 1]; j++) {
      guint32 t = c->inc[j];
      if (t >= ns)
        continue;
      if (wsum[t] == 0) {
        sc->seen[nseen++] = t;
        room += off[t + 1] - off[t];
      }
      wsum[t] += c->inc_w[j];
    }
    sc->ev = scratch_room(sc->ev, &sc->ev_cap, 2 * room, sizeof(DemandEv));
    DemandEv *ev = sc->ev;
    guint nev = 0;
    for (guint q = 0; q < nseen; q++) {
      guint32 t = sc->seen[q];
      double w = wsum[t];
      wsum[t] = 0;
      for (guint x = off[t]; x < off[t + 1]; x++) {
        guint i = by[x];
        if (!(xb[i] > xa[i]) || !(w > 0))
          continue;
        double r = w * g->wire[i] / (xb[i] - xa[i]);
        ev[nev++] = (DemandEv){xa[i], r, i};
        ev[nev++] = (DemandEv){xb[i], -r, i};
      }
    }
    if (nev == 0 || !(cap > 0))
      continue;
    ev_sort(ev, nev, ev + sc->ev_cap);
    /* Max-min on the link over each stretch of time between events: the
     * transfers active share cap, those asking less than the level keep
     * their rate; a transfer's slowdown there is its rate over its share,
     * integrated over its interval into start[] (per link). */
    guint nact = 0;
    double sum = 0, last = ev[0].t;
    for (guint e = 0; e < nev; e++) {
      const DemandEv *x = &ev[e];
      double dt = x->t - last;
      if (dt > 0 && nact > 0) {
        if (sum <= cap * (1 + 1e-9)) {
          for (guint q = 0; q < nact; q++)
            start[act[q].i] += dt;
        } else {
          double *srt = sc->srt;
          for (guint q = 0; q < nact; q++)
            srt[q] = act[q].r;
          dbl_sort(srt, nact, srt + nact);
          double left = cap, level = 0;
          for (guint q = 0; q < nact; q++) {
            double dq = srt[q];
            guint rest = nact - q;
            if (dq * rest >= left) {
              level = left / rest;
              break;
            }
            left -= dq;
            level = dq;
          }
          for (guint q = 0; q < nact; q++) {
            const DemandEv *y = &act[q];
            start[y->i] += dt * (y->r > level ? y->r / level : 1);
          }
        }
      }
      last = x->t;
      if (x->r > 0) {
        start[x->i] = 0;
        pos[x->i] = nact;
        act[nact++] = *x;
        sum += x->r;
      } else {
        /* Its start came first (ev_less), unless its rate is 0 (a start
         * with r == 0 never joined the set: it is not there to leave). */
        guint q = pos[x->i];
        if (q < nact && act[q].i == x->i) {
          sum -= act[q].r;
          act[q] = act[--nact];
          pos[act[q].i] = q;
        }
        worst[x->i] = MAX(worst[x->i], start[x->i] / (xb[x->i] - xa[x->i]));
      }
    }
  }
  double change = 0;
  for (guint i = 0; i < n; i++) {
    if (k->conn[i] == G_MAXUINT32 || worst[i] <= 0)
      continue;
    double f = MAX(1.0, stretch[i] * worst[i]);
    change = MAX(change, fabs(f - stretch[i]) / stretch[i]);
    stretch[i] = f;
  }
  return change;
}

/* The transfers of skeleton k by stream (CSR: those of stream t are
 * by[off[t] .. off[t + 1])), as link_extra and repair walk them. */
static void skel_by_stream(const Ctx *c, const Skel *k, guint **off_out, guint **by_out)
{
  guint n = fs_coll_plan_n_steps(k->plan), ns = c->streams->len;
  guint *off = g_new0(guint, ns + 2);
  for (guint i = 0; i < n; i++)
    if (k->conn[i] != G_MAXUINT32)
      off[k->conn[i] + 1]++;
  for (guint t = 0; t < ns; t++)
    off[t + 1] += off[t];
  guint *by = g_new(guint, off[ns] + 1);
  g_autofree guint *fill = g_new0(guint, ns + 1);
  for (guint i = 0; i < n; i++)
    if (k->conn[i] != G_MAXUINT32)
      by[off[k->conn[i]] + fill[k->conn[i]]++] = i;
  *off_out = off;
  *by_out = by;
}

/* Per loaded link, how much longer its streams' bytes need at its
 * capacity than the max-plus schedule of skeleton k sends through it (the
 * union of its transfers' sending intervals xa..xb): where streams overlap
 * there at full rate, the link serves them one after another.  Into
 * extra[link], in ps; scaled from the full size by the skeleton's share of
 * the bytes (wire of the skeleton / full wire, per stream). */
static void link_extra(const Ctx *c, const Skel *k, const double *xa, const double *xb,
                       const guint *off, const guint *by, double *extra, Scratch *sc)
{
  guint ns = c->streams->len;
  for (guint l = 0; l < c->n_links; l++) {
    if (c->link_rep[l] != l) {
      extra[l] = extra[c->link_rep[l]]; /* the same streams and capacity: the same figure */
      continue;
    }
    double need = 0;
    double cap = fs_flownet_channel_capacity(c->net, c->links[l]);
    gsize room = 0;
    for (guint j = c->inc_off[l]; j < c->inc_off[l + 1]; j++)
      if (c->inc[j] < ns)
        room += off[c->inc[j] + 1] - off[c->inc[j]];
    sc->iv = scratch_room(sc->iv, &sc->iv_cap, room, sizeof(Span));
    Span *iv = sc->iv;
    guint niv = 0;
    for (guint j = c->inc_off[l]; j < c->inc_off[l + 1]; j++) {
      guint32 t = c->inc[j];
      if (t >= ns)
        continue;
      double sk = t < k->wire->len ? g_array_index(k->wire, double, t) : 0;
      need += sk * c->inc_w[j] / cap * 1e12;
      for (guint x = off[t]; x < off[t + 1]; x++) {
        guint i = by[x];
        if (xb[i] > xa[i])
          iv[niv++] = (Span){xa[i], xb[i]};
      }
    }
    if (niv > 1)
      span_sort(iv, niv, iv + sc->iv_cap);
    double total = 0, a = 0, b = -1;
    for (guint j = 0; j < niv; j++) {
      if (iv[j].a > b) {
        total += b > a ? b - a : 0;
        a = iv[j].a, b = iv[j].b;
      } else {
        b = MAX(b, iv[j].b);
      }
    }
    total += b > a ? b - a : 0;
    extra[l] = need - total;
  }
}

/* ---- A skeleton run by the step executor on a network of its own ---- */

/* The private network of skel_run: a channel per channel of the shared
 * network that the streams cross (made when first crossed, with its
 * capacity and latency), the streams by their transfers' endpoints and
 * ECMP keys, and path scratch. */
typedef struct {
  const Ctx *c;
  FsFlowNet *net;
  guint *map;          /* per channel of c->net: its channel here + 1 (0: not made yet) */
  GHashTable *by_key;  /* StreamKey* (owned) → stream + 1 */
  GArray *path;        /* FsChannelId scratch */
} PrivNet;

typedef struct {
  int src, dst;
  uint64_t key;
} StreamKey;

static guint skey_hash(gconstpointer p)
{
  const StreamKey *k = p;
  return (guint)fs_hash64(((uint64_t)(guint)k->src << 32 | (guint)k->dst) ^ k->key);
}

static gboolean skey_equal(gconstpointer a, gconstpointer b)
{
  const StreamKey *x = a, *y = b;
  return x->src == y->src && x->dst == y->dst && x->key == y->key;
}

/* A transfer of skel_run split over its stream's paths: drained once the
 * last part has drained, done once the last part has landed (exec.h). */
typedef struct {
  FsFlowDoneFn done, drained;
  void *ctx;
  guint left, undrained;
  FsFlowInfo info;
} PrivXfer;

static void priv_release(PrivXfer *t)
{
  if (--t->left > 0)
    return;
  t->done(t->ctx, &t->info);
  g_free(t);
}

static void priv_drained(PrivXfer *t)
{
  if (--t->undrained > 0 || t->drained == NULL)
    return;
  t->drained(t->ctx, &t->info);
}

static void priv_part_drained(void *ctx, const FsFlowInfo *info)
{
  PrivXfer *t = ctx;
  t->info.drained = MAX(t->info.drained, info->drained);
  t->info.finish = MAX(t->info.finish, info->finish);
  priv_drained(t);
}

static void priv_part_done(void *ctx, const FsFlowInfo *info)
{
  (void)info;
  priv_release(ctx);
}

/* FsCollTransferFn of skel_run, as fs_router_transfer on the shared
 * network (route.c): the transfer's stream (its endpoints and key), one
 * flow per path of its route with that path's share of the bytes and of
 * the cap (a folded step as the executor gives it: one flow of its width's
 * bytes at its width's cap). */
static gboolean priv_xfer(void *ctx, int src, int dst, uint64_t bytes, double rate_cap,
                          uint64_t key, FsFlowDoneFn done, FsFlowDoneFn drained, void *done_ctx,
                          void *user, GError **error)
{
  PrivNet *pn = ctx;
  const Ctx *c = pn->c;
  StreamKey sk = {src, dst, key};
  guint i = GPOINTER_TO_UINT(g_hash_table_lookup(pn->by_key, &sk));
  if (i == 0) {
    g_set_error(error, FS_NET_ERROR, FS_NET_ERROR_NO_ROUTE, "a skeleton's transfer (topology "
                "nodes %d to %d) is no stream of the collective", src, dst);
    return FALSE;
  }
  i--;
  const Routes *r = c->routes;
  guint f = g_array_index(r->first, guint, 2 * i), np = g_array_index(r->first, guint, 2 * i + 1);
  PrivXfer *t = g_new0(PrivXfer, 1);
  t->done = done, t->drained = drained, t->ctx = done_ctx, t->info.user = user;
  /* Held until every part has started (a part may drain and land at once). */
  t->left = t->undrained = 1;
  uint64_t given = 0;
  FsSim *sim = fs_flownet_sim(pn->net);
  for (guint p = 0; p < np; p++) {
    double w = g_array_index(r->w, double, f + p);
    uint64_t part = p + 1 == np ? bytes - given : MIN((uint64_t)((double)bytes * w), bytes - given);
    given += part;
    if (!(part > 0 || (bytes == 0 && p == 0)))
      continue;
    guint at = g_array_index(r->hop_off, guint, f + p);
    const FsChannelId *hops = (const FsChannelId *)r->hops->data;
    guint len = hops[at];
    g_array_set_size(pn->path, len);
    for (guint h = 0; h < len; h++) {
      FsChannelId ch = hops[at + 1 + h];
      if (pn->map[ch] == 0)
        pn->map[ch] = 1 + fs_flownet_add_channel(pn->net, fs_flownet_channel_capacity(c->net, ch),
                                                 fs_flownet_channel_latency(c->net, ch));
      g_array_index(pn->path, FsChannelId, h) = pn->map[ch] - 1;
    }
    FsFlowSpec spec = {
      .src = src, .dst = dst, .path = (const FsChannelId *)pn->path->data, .path_len = len,
      .bytes = part, .rate_cap = rate_cap * w, .start = fs_sim_now(sim),
      .done = priv_part_done, .drained = priv_part_drained, .ctx = t, .user = user,
      .copies = 1,
    };
    t->left++;
    t->undrained++;
    fs_flownet_start(pn->net, &spec);
  }
  priv_drained(t);
  priv_release(t);
  return TRUE;
}

/* Skeleton k's time (ps after its kickoff) as the step executor runs its
 * plan (exec.h) with ep on a network of its own: the channels of the
 * shared network that its streams cross, at their capacity and latency,
 * and nothing else on them: every transfer's bytes are what max-min gives
 * it while it sends, found by the flow network's own progressive filling
 * (net/fill.c) event by event — the fixed point that the relaxation this
 * replaced iterated toward (64 passes, and on the ring broadcast of 2 DGX
 * H100 nodes it oscillated, +5.0 %).  FALSE with error where a transfer has no stream.  Cost: the
 * executor's run of the skeleton, O(steps) events, each a fill of the
 * flows it touches. */
static gboolean skel_run(const Ctx *c, const Skel *k, const FsCollExecParams *ep, double *out,
                         GError **error)
{
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  PrivNet pn = {c, net, g_new0(guint, fs_flownet_n_channels(c->net) + 1),
                g_hash_table_new_full(skey_hash, skey_equal, g_free, NULL),
                g_array_new(FALSE, FALSE, sizeof(FsChannelId))};
  for (guint i = 0; i < c->streams->len; i++) {
    const Stream *st = &g_array_index(c->streams, Stream, i);
    StreamKey *sk = g_new(StreamKey, 1);
    *sk = (StreamKey){st->src_node, st->dst_node, st->key};
    if (2 * i + 1 < c->routes->first->len &&
        g_array_index(c->routes->first, guint, 2 * i) != G_MAXUINT)
      g_hash_table_replace(pn.by_key, sk, GUINT_TO_POINTER(i + 1));
    else
      g_free(sk);
  }
  FsCollExecParams p = *ep;
  p.base_latency = 0;
  p.key = c->key; /* the streams' keys (a memo's family keeps its first) */
  FsTime t = 0;
  gboolean ok = fs_coll_run_alone(net, k->plan, &p, priv_xfer, &pn, &t, error);
  g_free(pn.map);
  g_hash_table_unref(pn.by_key);
  g_array_unref(pn.path);
  *out = (double)t;
  return ok;
}

/* Skeleton k's times: k->time0, max-plus at the streams' own rates, and
 * k->time: with run (a whole plan), the step executor's run of its plan
 * on a network of its own (skel_run), else that schedule repaired once to
 * the links' capacity (repair), with link_extra's figures of the first
 * schedule into busy, when links are loaded.  xa, xb: scratch of a double per step.  FALSE with
 * error where the run fails. */
gboolean streams_skel_time(const Ctx *c, Skel *k, const FsCollExecParams *ep, double payload,
                           gboolean run, double *xa, double *xb, double *busy, GError **error)
{
  guint n = fs_coll_plan_n_steps(k->plan);
  const Stream *st = (const Stream *)c->streams->data;
  if (k->dag == NULL) {
    k->dag = streams_dag_new(k, payload);
    if (k->home != NULL)
      k->home->dag = k->dag; /* a memo's skeleton keeps it for the next size */
  }
  const Dag *g = k->dag;
  g_autofree double *fin = g->ordered ? g_new(double, n + 1) : NULL;
  g_autofree double *stretch = g_new(double, n + 1);
  for (guint i = 0; i <= n; i++)
    stretch[i] = 1;
  k->time = k->time0 = maxplus(k, g, st, ep, stretch, xa, xb, fin);
  gboolean ok = TRUE;
  if (c->n_links > 0 && run) {
    ok = skel_run(c, k, ep, &k->time, error); /* busy: not needed (a whole plan) */
  } else if (c->n_links > 0) {
    g_autofree guint *off = NULL;
    g_autofree guint *by = NULL;
    skel_by_stream(c, k, &off, &by);
    Scratch sc = {0};
    link_extra(c, k, xa, xb, off, by, busy, &sc);
    g_autofree double *start = g_new(double, n + 1);
    g_autofree double *worst = g_new(double, n + 1);
    g_autofree double *wsum = g_new0(double, c->streams->len + 1);
    sc.act = g_new(DemandEv, n + 1);
    sc.pos = g_new(guint, n + 1);
    sc.srt = g_new(double, 2 * (gsize)n + 2);
    sc.seen = g_new(guint32, c->streams->len + 1);
    if (repair(c, k, g, xa, xb, off, by, stretch, start, worst, wsum, &sc) > 0)
      k->time = maxplus(k, g, st, ep, stretch, xa, xb, fin);
    g_free(sc.ev);
    g_free(sc.act);
    g_free(sc.pos);
    g_free(sc.srt);
    g_free(sc.seen);
    g_free(sc.iv);
  }
  return ok;
}
