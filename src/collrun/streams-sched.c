/* streams-sched.c — the schedule of a stream model's skeleton: a max-plus
 * evaluation of its plan at the streams' rates, the links' deficit of that
 * schedule (link_extra), and one repair of it to the links' capacity
 * (max-min between events, repair).  The streams, their routes and the
 * loaded links come from streams.c (pace); see streams-private.h. */
#include "collrun/streams-private.h"

#include <math.h>
#include <string.h>

/* The value at `to` of a quantity measured at three equally spaced counts
 * (or at one: then it is that value); *agree: the two slopes agree. */
double streams_extrap(const double v[3], const guint64 at[3], guint n, guint64 to, gboolean *agree)
{
  if (n == 1)
    return v[0];
  double s1 = (v[1] - v[0]) / (double)(at[1] - at[0]);
  double s2 = (v[2] - v[1]) / (double)(at[2] - at[1]);
  if (agree != NULL && fabs(s2 - s1) > 1e-6 * MAX(fabs(s2), fabs(s1)) + 1e-9)
    *agree = FALSE;
  return v[2] + ((double)to - (double)at[2]) * s2;
}

/* Max-plus time of a skeleton (ps after its kickoff): a transfer takes its
 * wire bytes at its stream's rate plus its path latency, a reduction its
 * bytes at the reduce bandwidth; a data dependency on another connection's
 * transfer adds the step latency, FIFO order and credits none; the end is
 * the last completion plus the step latency of a final delivery (exec.c). */
static double maxplus(const Skel *k, const Stream *st, const FsCollExecParams *ep, double payload,
                      const double *stretch, double *xa, double *xb)
{
  const FsCollPlan *pl = k->plan;
  guint n = fs_coll_plan_n_steps(pl);
  if (n == 0)
    return 0;
  const FsCollStep *steps = fs_coll_plan_step(pl, 0);
  g_autofree guint *pending = g_new0(guint, n);
  g_autofree guint *off = g_new0(guint, n + 2);
  g_autofree gboolean *data_succ = g_new0(gboolean, n);
  guint total = 0;
  for (guint i = 0; i < n; i++) {
    guint nd, nc;
    const uint32_t *d = fs_coll_plan_deps(pl, i, &nd);
    const uint32_t *cr = fs_coll_plan_credits(pl, i, &nc);
    pending[i] = nd + nc;
    total += nd + nc;
    for (guint j = 0; j < nd; j++) {
      off[d[j] + 1]++;
      data_succ[d[j]] = TRUE;
    }
    for (guint j = 0; j < nc; j++)
      off[cr[j] + 1]++;
  }
  for (guint i = 0; i < n; i++)
    off[i + 1] += off[i];
  g_autofree uint32_t *succ = g_new(uint32_t, total + 1);
  g_autofree guint *fill = g_new0(guint, n);
  for (guint i = 0; i < n; i++) {
    guint nd, nc;
    const uint32_t *d = fs_coll_plan_deps(pl, i, &nd);
    const uint32_t *cr = fs_coll_plan_credits(pl, i, &nc);
    for (guint j = 0; j < nd; j++)
      succ[off[d[j]] + fill[d[j]]++] = i;
    for (guint j = 0; j < nc; j++)
      succ[off[cr[j]] + fill[cr[j]]++] = i | 0x80000000u;
  }
  g_autofree double *ready = g_new0(double, n);
  g_autofree guint *queue = g_new(guint, n);
  guint head = 0, tail = 0;
  for (guint i = 0; i < n; i++)
    if (pending[i] == 0)
      queue[tail++] = i;
  double end = 0;
  while (head < tail) {
    guint i = queue[head++];
    const FsCollStep *s = &steps[i];
    double fin = ready[i];
    double out_lat = 0;
    if (s->kind == FS_STEP_XFER) {
      guint32 ci = k->conn[i];
      const Stream *c = &st[ci];
      xa[i] = ready[i];
      double wire = ceil((double)s->bytes / payload) * MAX(s->width, 1);
      if (c->wire > 0)
        fin += wire / c->wire * c->t * 1e12 * stretch[i];
      xb[i] = fin; /* the bytes have left: the links are free (flow.h) */
      fin += c->lat;
      out_lat = (double)ep->step_latency[s->inter ? 1 : 0];
    } else if (ep->reduce_bw > 0) {
      fin += (double)s->bytes / ep->reduce_bw * 1e12;
    }
    if (!data_succ[i])
      end = MAX(end, fin + out_lat);
    end = MAX(end, fin);
    for (guint x = off[i]; x < off[i + 1]; x++) {
      guint j = succ[x] & 0x7fffffffu;
      double lat = 0;
      if (!(succ[x] & 0x80000000u) && !fs_coll_step_same_conn(s, &steps[j]))
        lat = out_lat;
      else if (!(succ[x] & 0x80000000u) && s->inter && steps[j].ring_head)
        lat = (double)ep->ring_step_latency_inter; /* a ring's next step (exec.h) */
      ready[j] = MAX(ready[j], fin + lat);
      if (--pending[j] == 0)
        queue[tail++] = j;
    }
  }
  return end;
}

static int cmp_span(const void *a, const void *b)
{
  const double *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0];
}

typedef struct {
  double t;   /* ps */
  double r;   /* bytes/ps, signed: + at the start, − at the end */
  guint i;    /* the transfer */
} DemandEv;

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int cmp_ev(const void *a, const void *b)
{
  const DemandEv *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  if ((x->r < 0) != (y->r < 0))
    return x->r < 0 ? -1 : 1; /* ends before starts at one instant */
  return x->i < y->i ? -1 : x->i > y->i;
}

/* One repair of skeleton k's max-plus schedule (xa..xb: each transfer's
 * sending interval) to its links' capacity (streams.h).  On every loaded
 * link each transfer sending asks for its rate (wire bytes over its
 * interval, times the share of its stream's bytes on the link); between
 * two events the link is shared max-min among those sending (one asking
 * less than the level keeps its rate), and a transfer's stretch becomes
 * the largest, over its links, of its mean slowdown over its interval
 * (rate over share; never below 1).  start, worst: scratch of a double per
 * step; wsum: of a double per stream, zero, left zero; ev: scratch.
 * Returns the largest relative change of a stretch.  Cost: per link, its
 * transfers' events sorted, and a sort of the transfers sending at once
 * where they ask for more than the capacity. */
static double repair(const Ctx *c, const Skel *k, double payload, const double *xa,
                     const double *xb, const guint *off, const guint *by, double *stretch,
                     double *start, double *worst, double *wsum, GArray *ev)
{
  guint n = fs_coll_plan_n_steps(k->plan), ns = c->streams->len;
  const FsCollStep *steps = n ? fs_coll_plan_step(k->plan, 0) : NULL;
  memset(worst, 0, sizeof(double) * n);
  g_autoptr(GArray) act = g_array_new(FALSE, FALSE, sizeof(DemandEv));
  g_autoptr(GArray) srt = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(GArray) seen = g_array_new(FALSE, FALSE, sizeof(guint32));
  for (guint l = 0; l < c->n_links; l++) {
    g_array_set_size(ev, 0);
    double cap = fs_flownet_channel_capacity(c->net, c->links[l]) * 1e-12;
    /* A stream whose several paths cross the link: once, their shares summed. */
    g_array_set_size(seen, 0);
    for (guint j = c->inc_off[l]; j < c->inc_off[l + 1]; j++) {
      guint32 t = c->inc[j];
      if (t >= ns)
        continue;
      if (wsum[t] == 0)
        g_array_append_val(seen, t);
      wsum[t] += c->inc_w[j];
    }
    for (guint q = 0; q < seen->len; q++) {
      guint32 t = g_array_index(seen, guint32, q);
      double w = wsum[t];
      wsum[t] = 0;
      for (guint x = off[t]; x < off[t + 1]; x++) {
        guint i = by[x];
        if (!(xb[i] > xa[i]) || !(w > 0))
          continue;
        const FsCollStep *s = &steps[i];
        double wire = ceil((double)s->bytes / payload) * MAX(s->width, 1);
        double r = w * wire / (xb[i] - xa[i]);
        DemandEv e0 = {xa[i], r, i}, e1 = {xb[i], -r, i};
        g_array_append_val(ev, e0);
        g_array_append_val(ev, e1);
      }
    }
    if (ev->len == 0 || !(cap > 0))
      continue;
    qsort(ev->data, ev->len, sizeof(DemandEv), cmp_ev);
    /* Max-min on the link over each stretch of time between events: the
     * transfers active share cap, those asking less than the level keep
     * their rate; a transfer's slowdown there is its rate over its share,
     * integrated over its interval into start[] (per link). */
    g_array_set_size(act, 0);
    double sum = 0, last = g_array_index(ev, DemandEv, 0).t;
    for (guint e = 0; e < ev->len; e++) {
      const DemandEv *x = &g_array_index(ev, DemandEv, e);
      double dt = x->t - last;
      if (dt > 0 && act->len > 0) {
        if (sum <= cap * (1 + 1e-9)) {
          for (guint q = 0; q < act->len; q++)
            start[g_array_index(act, DemandEv, q).i] += dt;
        } else {
          g_array_set_size(srt, act->len);
          for (guint q = 0; q < act->len; q++)
            g_array_index(srt, double, q) = g_array_index(act, DemandEv, q).r;
          qsort(srt->data, srt->len, sizeof(double), cmp_double);
          double left = cap, level = 0;
          for (guint q = 0; q < srt->len; q++) {
            double dq = g_array_index(srt, double, q);
            guint rest = srt->len - q;
            if (dq * rest >= left) {
              level = left / rest;
              break;
            }
            left -= dq;
            level = dq;
          }
          for (guint q = 0; q < act->len; q++) {
            const DemandEv *y = &g_array_index(act, DemandEv, q);
            start[y->i] += dt * (y->r > level ? y->r / level : 1);
          }
        }
      }
      last = x->t;
      if (x->r > 0) {
        DemandEv y = *x;
        start[x->i] = 0;
        g_array_append_val(act, y);
        sum += x->r;
      } else {
        for (guint q = 0; q < act->len; q++)
          if (g_array_index(act, DemandEv, q).i == x->i) {
            sum -= g_array_index(act, DemandEv, q).r;
            g_array_index(act, DemandEv, q) = g_array_index(act, DemandEv, act->len - 1);
            g_array_set_size(act, act->len - 1);
            break;
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
                       const guint *off, const guint *by, double *extra)
{
  guint ns = c->streams->len;
  GArray *iv = g_array_new(FALSE, FALSE, sizeof(double) * 2);
  for (guint l = 0; l < c->n_links; l++) {
    g_array_set_size(iv, 0);
    double need = 0;
    double cap = fs_flownet_channel_capacity(c->net, c->links[l]);
    for (guint j = c->inc_off[l]; j < c->inc_off[l + 1]; j++) {
      guint32 t = c->inc[j];
      if (t >= ns)
        continue;
      double sk = t < k->wire->len ? g_array_index(k->wire, double, t) : 0;
      need += sk * c->inc_w[j] / cap * 1e12;
      for (guint x = off[t]; x < off[t + 1]; x++) {
        guint i = by[x];
        if (xb[i] > xa[i]) {
          double v[2] = {xa[i], xb[i]};
          g_array_append_val(iv, v);
        }
      }
    }
    qsort(iv->data, iv->len, sizeof(double) * 2, cmp_span);
    double total = 0, a = 0, b = -1;
    for (guint j = 0; j < iv->len; j++) {
      const double *v = (const double *)iv->data + 2 * j;
      if (v[0] > b) {
        total += b > a ? b - a : 0;
        a = v[0], b = v[1];
      } else {
        b = MAX(b, v[1]);
      }
    }
    total += b > a ? b - a : 0;
    extra[l] = need - total;
  }
  g_array_unref(iv);
}

/* Skeleton k's max-plus times: k->time0 at the streams' own rates (with
 * link_extra's figures of that schedule into busy, when links are loaded)
 * and k->time with the schedule repaired once to the links' capacity
 * (repair).  xa, xb: scratch of a double per step. */
void streams_skel_time(const Ctx *c, Skel *k, const FsCollExecParams *ep, double payload,
                       double *xa, double *xb, double *busy)
{
  guint n = fs_coll_plan_n_steps(k->plan);
  const Stream *st = (const Stream *)c->streams->data;
  g_autofree double *stretch = g_new(double, n + 1);
  for (guint i = 0; i <= n; i++)
    stretch[i] = 1;
  k->time = k->time0 = maxplus(k, st, ep, payload, stretch, xa, xb);
  if (c->n_links == 0)
    return;
  g_autofree guint *off = NULL;
  g_autofree guint *by = NULL;
  skel_by_stream(c, k, &off, &by);
  link_extra(c, k, xa, xb, off, by, busy);
  g_autofree double *start = g_new(double, n + 1);
  g_autofree double *worst = g_new(double, n + 1);
  g_autofree double *wsum = g_new0(double, c->streams->len + 1);
  g_autoptr(GArray) ev = g_array_new(FALSE, FALSE, sizeof(DemandEv));
  if (repair(c, k, payload, xa, xb, off, by, stretch, start, worst, wsum, ev) > 0)
    k->time = maxplus(k, st, ep, payload, stretch, xa, xb);
}
