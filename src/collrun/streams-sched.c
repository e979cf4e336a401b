/* streams-sched.c — the schedule of a stream model's skeleton: a max-plus
 * evaluation of its plan at the streams' rates, the links' deficit of that
 * schedule (link_extra), and one repair of it to the links' capacity
 * (max-min between events, repair).  The streams, their routes and the
 * loaded links come from streams.c (pace); see streams-private.h.  Links
 * of one class (Ctx.link_rep) are computed once; sorts are merge sorts
 * inlined for their element types (DEFINE_MERGE_SORT). */
#include "collrun/streams-private.h"

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

/* A skeleton's plan as max-plus walks it, made once for the schedule's
 * two passes (before and after the repair): each transfer's wire bytes,
 * whether a data dependency leaves a step, and whether every step depends
 * only on earlier ones (ordered: the plan's order is then a topological
 * one and max-plus pulls each step's start from its dependencies in that
 * order).  Otherwise each step's successors (CSR, a credit's marked by the
 * top bit, a FIFO edge of one connection by the next: EDGE_CREDIT,
 * EDGE_DRAIN) with the latency the edge adds after its source finishes (or
 * drains), and its count of predecessors, for a walk in dependency order
 * (Kahn). */
typedef struct {
  guint n;
  gboolean ordered;
  double *wire;       /* per step: its wire bytes (transfers; 0 otherwise) */
  gboolean *data_succ;
  double *fin;        /* ordered: scratch, each step's end */
  guint *pending;     /* not ordered: predecessors per step */
  guint *off;         /* successors of i: succ[off[i] .. off[i + 1]) */
  uint32_t *succ;
  double *elat;       /* per successor edge, ps */
} Dag;

#define EDGE_CREDIT 0x80000000u
#define EDGE_DRAIN 0x40000000u
#define EDGE_STEP(e) ((e) & ~(EDGE_CREDIT | EDGE_DRAIN))

/* The latency a data dependency of step b on step a adds after a ends: the
 * step latency of a's class when they are not one connection's FIFO, a
 * ring's network step between consecutive steps across hosts (exec.h),
 * else none.  A FIFO edge of one connection runs from a's drain (the end of
 * its sending interval, xb), as the executor's does (exec.h), any other
 * from a's end. */
static inline double dep_latency(const FsCollStep *a, const FsCollStep *b,
                                 const FsCollExecParams *ep)
{
  if (!fs_coll_step_same_conn(a, b))
    return a->kind == FS_STEP_XFER ? (double)ep->step_latency[a->inter ? 1 : 0] : 0;
  if (a->inter && b->ring_head)
    return (double)ep->ring_step_latency_inter; /* a ring's next step (exec.h) */
  return 0;
}

/* Builds k's Dag with the latencies of ep.  Cost: O(steps + edges). */
static void dag_build(const Skel *k, const FsCollExecParams *ep, double payload, Dag *g)
{
  const FsCollPlan *pl = k->plan;
  guint n = fs_coll_plan_n_steps(pl);
  memset(g, 0, sizeof *g);
  g->n = n;
  g->wire = g_new0(double, n + 1);
  g->data_succ = g_new0(gboolean, n + 1);
  g->ordered = TRUE;
  if (n == 0)
    return;
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
    g->fin = g_new(double, n + 1);
    return;
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
  g->elat = g_new(double, total + 1);
  g_autofree guint *fill = g_new0(guint, n);
  for (guint i = 0; i < n; i++) {
    guint nd, nc;
    const uint32_t *d = fs_coll_plan_deps(pl, i, &nd);
    const uint32_t *cr = fs_coll_plan_credits(pl, i, &nc);
    for (guint j = 0; j < nd; j++) {
      guint x = g->off[d[j]] + fill[d[j]]++;
      g->succ[x] = i | (fs_coll_step_same_conn(&steps[d[j]], &steps[i]) ? EDGE_DRAIN : 0);
      g->elat[x] = dep_latency(&steps[d[j]], &steps[i], ep);
    }
    for (guint j = 0; j < nc; j++) {
      guint x = g->off[cr[j]] + fill[cr[j]]++;
      g->succ[x] = i | EDGE_CREDIT;
      g->elat[x] = 0; /* credits: none */
    }
  }
}

static void dag_clear(Dag *g)
{
  g_free(g->wire);
  g_free(g->data_succ);
  g_free(g->fin);
  g_free(g->pending);
  g_free(g->off);
  g_free(g->succ);
  g_free(g->elat);
  memset(g, 0, sizeof *g);
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
 * (dep_latency; credits none) and ends as step_end says; the end is the
 * last completion plus the step latency of a final delivery (exec.c).
 * Every figure is a maximum of the same sums in either walk, so the two
 * give the same bits. */
static double maxplus(const Skel *k, const Dag *g, const Stream *st, const FsCollExecParams *ep,
                      const double *stretch, double *xa, double *xb)
{
  const FsCollPlan *pl = k->plan;
  guint n = g->n;
  if (n == 0)
    return 0;
  const FsCollStep *steps = fs_coll_plan_step(pl, 0);
  double end = 0;
  if (g->ordered) {
    double *fin = g->fin;
    for (guint i = 0; i < n; i++) {
      const FsCollStep *s = &steps[i];
      guint nd, nc;
      const uint32_t *d = fs_coll_plan_deps(pl, i, &nd);
      const uint32_t *cr = fs_coll_plan_credits(pl, i, &nc);
      double ready = 0;
      for (guint j = 0; j < nd; j++) {
        const FsCollStep *a = &steps[d[j]];
        double from = fs_coll_step_same_conn(a, s) ? xb[d[j]] : fin[d[j]];
        ready = MAX(ready, from + dep_latency(a, s, ep));
      }
      for (guint j = 0; j < nc; j++)
        ready = MAX(ready, fin[cr[j]] + 0.0);
      fin[i] = step_end(k, g, st, ep, stretch, i, s, ready, xa, xb);
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
      ready[j] = MAX(ready[j], from + g->elat[x]);
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
 * of n elements: insertion sort on runs of 16, then merges of runs.  The
 * events of one link come from a few streams whose transfers are mostly in
 * time order already, so most runs cost a comparison per element.  Cost:
 * O(n log n) comparisons, inlined (qsort's calls through a pointer and
 * byte copies were a fifth of a 4,096-GPU run). */
#define DEFINE_MERGE_SORT(NAME, T, LESS)                                                    \
  static void NAME(T *a, guint n, T *tmp)                                                   \
  {                                                                                         \
    enum { RUN = 16 };                                                                      \
    for (guint lo = 0; lo < n; lo += RUN) {                                                 \
      guint hi = MIN(lo + RUN, n);                                                          \
      for (guint i = lo + 1; i < hi; i++) {                                                 \
        if (!LESS(&a[i], &a[i - 1]))                                                        \
          continue;                                                                         \
        T v = a[i];                                                                         \
        guint j = i;                                                                        \
        for (; j > lo && LESS(&v, &a[j - 1]); j--)                                          \
          a[j] = a[j - 1];                                                                  \
        a[j] = v;                                                                           \
      }                                                                                     \
    }                                                                                       \
    T *src = a, *dst = tmp;                                                                 \
    for (guint w = RUN; w < n; w *= 2) {                                                    \
      for (guint lo = 0; lo < n; lo += 2 * w) {                                             \
        guint mid = MIN(lo + w, n), hi = MIN(lo + 2 * w, n), p = lo, q = mid, o = lo;      \
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
      T *sw = src;                                                                          \
      src = dst, dst = sw;                                                                  \
    }                                                                                       \
    if (src != a)                                                                           \
      memcpy(a, src, sizeof(T) * n);                                                        \
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
 * sending interval) to its links' capacity (streams.h), or, with relax,
 * one pass of its relaxation to a fixed point.  On every loaded link each
 * transfer sending asks for a rate: repair, its rate in the schedule (wire
 * bytes over its interval, times the share of its stream's bytes on the
 * link); relax, its own rate (the same at stretch 1: the rate it would
 * take alone).  Between two events the link is shared max-min among those
 * sending (one asking less than the level keeps its rate).  Repair: a
 * transfer's stretch becomes the largest, over its links, of its mean
 * slowdown over its interval (rate over share), times its stretch.  Relax:
 * the bytes the shares give it over its interval tell how long it needs
 * at their mean (its bytes over them, times its interval), and its stretch
 * moves by damp of the way to that (never below 1), so that a transfer
 * the schedule moved out of a crowd speeds up again.  At a fixed point
 * every transfer's bytes are what max-min gives it while it sends: what
 * the flow network does to the same transfers (exact on the NVLS trees
 * over 2 to 128 DGX H100 nodes, tests/bench/RESULTS.md).  start, worst:
 * scratch of a double per step; wsum: of a double per stream, zero, left
 * zero; sc: scratch (act, pos and srt of a step each, seen of a stream
 * each).  Returns the largest relative change of a stretch.  Cost: per
 * link, its transfers' events sorted, and a sort of the transfers sending
 * at once where they ask for more than the capacity. */
static double repair(const Ctx *c, const Skel *k, const Dag *g, const double *xa,
                     const double *xb, const guint *off, const guint *by, double *stretch,
                     double *start, double *worst, double *wsum, Scratch *sc, gboolean relax,
                     double damp)
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
        double r = w * g->wire[i] / (xb[i] - xa[i]) * (relax ? stretch[i] : 1);
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
            start[act[q].i] += relax ? dt * act[q].r : dt;
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
            if (relax)
              start[y->i] += dt * MIN(y->r, level); /* the bytes it gets */
            else
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
        double span = xb[x->i] - xa[x->i];
        if (!relax)
          worst[x->i] = MAX(worst[x->i], start[x->i] / span);
        else if (start[x->i] > 0) /* its bytes (own rate × own time) over those it gets */
          worst[x->i] = MAX(worst[x->i], -x->r * span / stretch[x->i] / start[x->i]);
      }
    }
  }
  double change = 0;
  for (guint i = 0; i < n; i++) {
    if (k->conn[i] == G_MAXUINT32 || worst[i] <= 0)
      continue;
    double f = MAX(1.0, stretch[i] * worst[i]);
    if (relax)
      f = stretch[i] + damp * (f - stretch[i]);
    change = MAX(change, fabs(f - stretch[i]) / stretch[i]);
    stretch[i] = f;
  }
  return change;
}

/* The scratch of relax_pass, made once per schedule: each stream's loaded
 * links (CSR over Ctx.inc, the first link of each class only, with the
 * share of its bytes on each), and per link the transfers sending over it
 * (a slot per transfer crossing it, at lst_off[l]; each transfer's place
 * in each of its links' lists at ipos[ioff[i] + its link's rank]), the
 * rate they ask in all and whether that is more than its capacity (the
 * links asked for more: ov, with their places at ovpos). */
typedef struct {
  guint *sl_off;  /* stream t: its links sl[sl_off[t] .. sl_off[t + 1]) */
  guint *sl;
  double *sl_w;
  guint *ioff;    /* per step: its first slot in ipos */
  guint *ipos;
  guint *lst_off; /* per link: its list of transfers sending, lst[lst_off[l] ..), nlst[l] long */
  guint *lst;
  guint *nlst;
  double *ask;    /* per link: the rate its transfers sending ask, bytes/ps */
  double *cap;    /* per link, bytes/ps */
  guint *ov, *ovpos, nov;
  DemandEv *ev;
  double *r;      /* per step: the rate it asks (0: not sending) */
  double *lack;   /* per step: the bytes the shares kept from it */
  double *level;  /* per participant of a fill: its rate, G_MAXDOUBLE while it rises */
  guint *part, *stamp;
  guint np;       /* participants of the last fill (part, level: what each gets less) */
  gboolean dirty; /* a link asked for more than its capacity changed since that fill */
  double *rem, *wl;
  guint seg;
} Relax;

/* rx for skeleton k of n steps (off: its transfers by stream, as
 * skel_by_stream gives them): the streams' links and every list sized
 * once; nothing sending. */
static void relax_init(const Ctx *c, const Skel *k, guint n, const guint *off, Relax *rx)
{
  guint ns = c->streams->len, nl = c->n_links;
  memset(rx, 0, sizeof *rx);
  rx->sl_off = g_new0(guint, ns + 2);
  rx->lst_off = g_new0(guint, nl + 2);
  /* A stream whose several paths cross one link: once, their shares summed
   * (a link's incidences are walked in order, so its repeats are last). */
  g_autofree guint *seen = g_new(guint, ns + 1);
  memset(seen, 0xff, sizeof(guint) * (ns + 1));
  for (guint l = 0; l < nl; l++)
    for (guint j = c->inc_off[l]; j < c->inc_off[l + 1]; j++) {
      guint32 t = c->inc[j];
      if (t >= ns || c->link_rep[l] != l || seen[t] == l)
        continue;
      seen[t] = l;
      rx->sl_off[t + 1]++;
      rx->lst_off[l + 1] += off[t + 1] - off[t];
    }
  for (guint t = 0; t < ns; t++)
    rx->sl_off[t + 1] += rx->sl_off[t];
  for (guint l = 0; l < nl; l++)
    rx->lst_off[l + 1] += rx->lst_off[l];
  rx->sl = g_new(guint, rx->sl_off[ns] + 1);
  rx->sl_w = g_new(double, rx->sl_off[ns] + 1);
  g_autofree guint *fill = g_new0(guint, ns + 1);
  for (guint l = 0; l < nl; l++)
    for (guint j = c->inc_off[l]; j < c->inc_off[l + 1]; j++) {
      guint32 t = c->inc[j];
      if (t >= ns || c->link_rep[l] != l)
        continue;
      guint x = rx->sl_off[t] + fill[t];
      if (fill[t] > 0 && rx->sl[x - 1] == l) {
        rx->sl_w[x - 1] += c->inc_w[j];
        continue;
      }
      fill[t]++;
      rx->sl[x] = l;
      rx->sl_w[x] = c->inc_w[j];
    }
  rx->ioff = g_new0(guint, n + 2);
  for (guint i = 0; i < n; i++) {
    guint t = k->conn[i];
    rx->ioff[i + 1] = rx->ioff[i] + (t == G_MAXUINT32 ? 0 : rx->sl_off[t + 1] - rx->sl_off[t]);
  }
  rx->ipos = g_new(guint, rx->ioff[n] + 1);
  rx->lst = g_new(guint, rx->lst_off[nl] + 1);
  rx->nlst = g_new0(guint, nl + 1);
  rx->ask = g_new0(double, nl + 1);
  rx->cap = g_new(double, nl + 1);
  rx->ov = g_new(guint, nl + 1);
  rx->ovpos = g_new(guint, nl + 1);
  rx->rem = g_new(double, nl + 1);
  rx->wl = g_new(double, nl + 1);
  for (guint l = 0; l < nl; l++) {
    rx->cap[l] = fs_flownet_channel_capacity(c->net, c->links[l]) * 1e-12;
    rx->ovpos[l] = G_MAXUINT;
  }
  rx->ev = g_new(DemandEv, 4 * (gsize)n + 4);
  rx->r = g_new0(double, n + 1);
  rx->lack = g_new(double, n + 1);
  rx->level = g_new(double, n + 1);
  rx->part = g_new(guint, n + 1);
  rx->stamp = g_new(guint, n + 1);
  for (guint i = 0; i <= n; i++)
    rx->stamp[i] = G_MAXUINT;
}

static void relax_clear(Relax *rx)
{
  g_free(rx->sl_off);
  g_free(rx->sl);
  g_free(rx->sl_w);
  g_free(rx->ioff);
  g_free(rx->ipos);
  g_free(rx->lst_off);
  g_free(rx->lst);
  g_free(rx->nlst);
  g_free(rx->ask);
  g_free(rx->cap);
  g_free(rx->ov);
  g_free(rx->ovpos);
  g_free(rx->rem);
  g_free(rx->wl);
  g_free(rx->ev);
  g_free(rx->r);
  g_free(rx->lack);
  g_free(rx->level);
  g_free(rx->part);
  g_free(rx->stamp);
}

/* Link l's place among the links asked for more than their capacity,
 * kept as its transfers' asks change. */
static inline void relax_mark(Relax *rx, guint l)
{
  gboolean over = rx->ask[l] > rx->cap[l] * (1 + 1e-9);
  if (over && rx->ovpos[l] == G_MAXUINT) {
    rx->ovpos[l] = rx->nov;
    rx->ov[rx->nov++] = l;
  } else if (!over && rx->ovpos[l] != G_MAXUINT) {
    guint q = rx->ovpos[l], m = rx->ov[--rx->nov];
    rx->ov[q] = m;
    rx->ovpos[m] = q;
    rx->ovpos[l] = G_MAXUINT;
  }
}

/* Transfer i of stream t starts (on) or stops sending at rate r: into or
 * out of its links' lists and asks. */
static void relax_toggle(const Skel *k, Relax *rx, guint i, double r, gboolean on)
{
  guint t = k->conn[i];
  for (guint j = rx->sl_off[t], x = rx->ioff[i]; j < rx->sl_off[t + 1]; j++, x++) {
    guint l = rx->sl[j], *lst = rx->lst + rx->lst_off[l];
    if (on) {
      rx->ipos[x] = rx->nlst[l];
      lst[rx->nlst[l]++] = i;
      rx->ask[l] += rx->sl_w[j] * r;
    } else {
      guint q = rx->ipos[x], m = lst[--rx->nlst[l]];
      lst[q] = m;
      /* m's slot for link l: its rank among its stream's links */
      guint tm = k->conn[m];
      for (guint jm = rx->sl_off[tm], xm = rx->ioff[m]; jm < rx->sl_off[tm + 1]; jm++, xm++)
        if (rx->sl[jm] == l)
          rx->ipos[xm] = q;
      rx->ask[l] -= rx->sl_w[j] * r;
      if (rx->nlst[l] == 0)
        rx->ask[l] = 0; /* no drift once empty */
    }
    gboolean was = rx->ovpos[l] != G_MAXUINT;
    relax_mark(rx, l);
    rx->dirty = rx->dirty || was || rx->ovpos[l] != G_MAXUINT;
  }
}

/* The max-min shares of the transfers sending over the links asked for
 * more than their capacity (the others bind no one: every transfer that
 * crosses none of them gets what it asks), as the flow network fills
 * them (flow.h: progressive filling, a transfer's width of flows each
 * asking an equal part, frozen at its ask or on a saturated link): the
 * participants into part[0 .. np), what each gets less than it asks
 * (bytes/ps) into level[]. */
static void relax_fill(const Ctx *c, const Skel *k, Relax *rx)
{
  const Stream *st = (const Stream *)c->streams->data;
  guint np = 0, seg = rx->seg++;
  for (guint o = 0; o < rx->nov; o++) {
    guint l = rx->ov[o];
    rx->rem[l] = rx->cap[l];
    rx->wl[l] = 0;
    const guint *lst = rx->lst + rx->lst_off[l];
    for (guint q = 0; q < rx->nlst[l]; q++)
      if (rx->stamp[lst[q]] != seg) {
        rx->stamp[lst[q]] = seg;
        rx->level[np] = G_MAXDOUBLE;
        rx->part[np++] = lst[q];
      }
  }
  for (guint p = 0; p < np; p++) {
    guint t = k->conn[rx->part[p]];
    double wd = MAX(st[t].width, 1);
    for (guint j = rx->sl_off[t]; j < rx->sl_off[t + 1]; j++)
      if (rx->ovpos[rx->sl[j]] != G_MAXUINT)
        rx->wl[rx->sl[j]] += rx->sl_w[j] * wd;
  }
  double lev = 0;
  guint left = np;
  while (left > 0) {
    double inc = G_MAXDOUBLE;
    for (guint p = 0; p < np; p++)
      if (rx->level[p] == G_MAXDOUBLE) {
        guint i = rx->part[p];
        inc = MIN(inc, rx->r[i] / MAX(st[k->conn[i]].width, 1) - lev);
      }
    for (guint o = 0; o < rx->nov; o++) {
      guint l = rx->ov[o];
      if (rx->wl[l] > 1e-12)
        inc = MIN(inc, rx->rem[l] / rx->wl[l]);
    }
    inc = MAX(inc, 0);
    lev += inc;
    for (guint o = 0; o < rx->nov; o++) {
      guint l = rx->ov[o];
      if (rx->wl[l] > 1e-12)
        rx->rem[l] -= inc * rx->wl[l];
    }
    guint frozen = 0;
    for (guint p = 0; p < np; p++) {
      if (rx->level[p] != G_MAXDOUBLE)
        continue;
      guint i = rx->part[p], t = k->conn[i];
      double wd = MAX(st[t].width, 1), d = rx->r[i] / wd;
      gboolean stop = d - lev <= 1e-9 * d;
      for (guint j = rx->sl_off[t]; j < rx->sl_off[t + 1] && !stop; j++) {
        guint l = rx->sl[j];
        stop = rx->ovpos[l] != G_MAXUINT && rx->rem[l] <= 1e-9 * rx->cap[l];
      }
      if (!stop && left > 1 + frozen)
        continue;
      /* frozen here (or the last one: rounding may leave it short of both) */
      rx->level[p] = MIN(lev * wd, rx->r[i]);
      frozen++;
      for (guint j = rx->sl_off[t]; j < rx->sl_off[t + 1]; j++)
        if (rx->ovpos[rx->sl[j]] != G_MAXUINT)
          rx->wl[rx->sl[j]] -= rx->sl_w[j] * wd;
    }
    left -= frozen;
  }
  for (guint p = 0; p < np; p++)
    rx->level[p] = rx->r[rx->part[p]] - rx->level[p];
  rx->np = np;
}

/* The bytes the last fill's participants missed from `since` to t. */
static inline void relax_flush(Relax *rx, double since, double t)
{
  for (guint p = 0; p < rx->np; p++)
    rx->lack[rx->part[p]] += rx->level[p] * (t - since);
}

/* One pass of the relaxation of skeleton k's schedule (xa..xb: each
 * transfer's sending interval) over all its loaded links at once: between
 * each two events the transfers sending share the links max-min as the
 * flow network shares them (relax_fill: a transfer slowed on one link
 * leaves its share of the others to the rest, and gets at every instant
 * the least of its links' shares, not the least of their means over its
 * interval), each asking its own rate (its wire bytes over its
 * unstretched time); each transfer's stretch moves by damp of the way to
 * its bytes over those the shares give it in its interval, times its
 * stretch (never below 1).  Returns the largest relative change of a
 * stretch.  Cost: the events sorted, each a walk of its links, and per
 * change of a link asked for more than its capacity, a progressive fill
 * of those links' transfers. */
static double relax_pass(const Ctx *c, const Skel *k, const Dag *g, const double *xa,
                         const double *xb, double *stretch, double damp, Relax *rx)
{
  guint n = g->n, nev = 0;
  for (guint i = 0; i < n; i++) {
    rx->lack[i] = 0;
    rx->r[i] = 0;
    guint t = k->conn[i];
    if (t == G_MAXUINT32 || !(xb[i] > xa[i]) || rx->ioff[i + 1] == rx->ioff[i])
      continue;
    double r = g->wire[i] / (xb[i] - xa[i]) * stretch[i];
    if (!(r > 0))
      continue;
    rx->r[i] = r;
    rx->ev[nev++] = (DemandEv){xa[i], r, i};
    rx->ev[nev++] = (DemandEv){xb[i], -r, i};
  }
  if (nev == 0)
    return 0;
  ev_sort(rx->ev, nev, rx->ev + nev);
  /* The shares hold until a link asked for more than its capacity
   * changes (dirty): the fill is made again then, and its participants'
   * shortfall counted over the time it held. */
  double last = rx->ev[0].t, since = last;
  rx->np = 0;
  rx->dirty = FALSE;
  for (guint e = 0; e < nev; e++) {
    const DemandEv *x = &rx->ev[e];
    if (x->t > last && rx->dirty) {
      relax_flush(rx, since, last);
      rx->np = 0;
      if (rx->nov > 0)
        relax_fill(c, k, rx);
      since = last;
      rx->dirty = FALSE;
    }
    last = x->t;
    relax_toggle(k, rx, x->i, x->r > 0 ? x->r : -x->r, x->r > 0);
  }
  relax_flush(rx, since, last);
  double change = 0;
  for (guint i = 0; i < n; i++) {
    if (!(rx->r[i] > 0))
      continue;
    double got = rx->r[i] * (xb[i] - xa[i]) - rx->lack[i];
    if (!(got > 0))
      continue;
    double f = MAX(1.0, stretch[i] * g->wire[i] / got);
    f = stretch[i] + damp * (f - stretch[i]);
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

/* Skeleton k's max-plus times: k->time0 at the streams' own rates (with
 * link_extra's figures of that schedule into busy, when links are loaded)
 * and k->time with the schedule repaired once to the links' capacity
 * (repair), then, with relax, relaxed to a fixed point (STREAMS_RELAX_*).
 * xa, xb: scratch of a double per step. */
void streams_skel_time(const Ctx *c, Skel *k, const FsCollExecParams *ep, double payload,
                       gboolean relax, double *xa, double *xb, double *busy)
{
  guint n = fs_coll_plan_n_steps(k->plan);
  const Stream *st = (const Stream *)c->streams->data;
  Dag g;
  dag_build(k, ep, payload, &g);
  g_autofree double *stretch = g_new(double, n + 1);
  for (guint i = 0; i <= n; i++)
    stretch[i] = 1;
  k->time = k->time0 = maxplus(k, &g, st, ep, stretch, xa, xb);
  if (c->n_links > 0) {
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
    if (repair(c, k, &g, xa, xb, off, by, stretch, start, worst, wsum, &sc, FALSE, 1) > 0)
      k->time = maxplus(k, &g, st, ep, stretch, xa, xb);
    /* Relaxed to a fixed point: undamped while the changes shrink, then
     * by halves, to where no stretch changes by more than
     * STREAMS_RELAX_TOL or the time by more than that twice in a row (a
     * transfer at the edge of a crowd may flip between two stretches whose
     * schedules take the same time). */
    double damp = 1, last = G_MAXDOUBLE;
    guint still = 0;
    Relax rx;
    gboolean glob = relax && c->shared_links;
    if (glob)
      relax_init(c, k, n, off, &rx);
    for (guint pass = 0; relax && pass < STREAMS_RELAX_PASSES; pass++) {
      double before = k->time;
      double change = glob ? relax_pass(c, k, &g, xa, xb, stretch, damp, &rx)
                           : repair(c, k, &g, xa, xb, off, by, stretch, start, worst, wsum, &sc,
                                    TRUE, damp);
      if (change > 0)
        k->time = maxplus(k, &g, st, ep, stretch, xa, xb);
      k->passes++;
      if (change <= STREAMS_RELAX_TOL)
      still = fabs(k->time - before) <= STREAMS_RELAX_TOL * k->time ? still + 1 : 0;
      still = fabs(k->time - before) <= (g_getenv("FS_X_TTOL") && glob ? atof(g_getenv("FS_X_TTOL")) : STREAMS_RELAX_TOL) * k->time ? still + 1 : 0;
      if (still >= 2)
        break;
      if (change >= last)
        damp = 0.5;
      last = change;
    }
    if (glob)
      relax_clear(&rx);
    g_free(sc.ev);
    g_free(sc.act);
    g_free(sc.pos);
    g_free(sc.srt);
    g_free(sc.seen);
    g_free(sc.iv);
  }
  dag_clear(&g);
}
