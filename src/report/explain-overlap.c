/* explain-overlap.c — see explain-overlap.h; `fabricsim explain overlap
 * TOPO WORKLOAD [OVERRIDE…]`: how much communication of each kind the step hides behind
 * compute, with every overlap switch off and with every one on.
 *
 * The step runs twice on the executor (workload/executor.h): once with
 * parallel.overlap.{dp_grads, tp_comm, param_gather} all false, once all
 * true; everything else as the workload and its overrides say.  For each
 * rank class (a pipeline stage's tp 0, dp 0 rank) and each kind of
 * communication — DP gradient reductions, parameter all-gathers (ZeRO/
 * FSDP), TP, CP, EP, PP — it measures, from the ops' start and end times:
 *   comm     the time at least one op of that kind was in flight for the
 *            rank (its own streams' ops, and the pipeline transfers it
 *            receives);
 *   hidden   the part of it while the rank's compute stream ran forward,
 *            backward, recompute or optimizer work;
 *   exposed  the rest: communication the rank waited for (or, for TP
 *            without overlap, ran on the compute stream itself).
 * Kinds can be in flight together, so exposed times may add up to more
 * than the executor's own breakdown (also printed), which gives each idle
 * moment to one kind only (dp, pp, cp, ep, tp in that order).  Times are
 * milliseconds, the mean over the stages.
 *
 * Cost: two training-step simulations and O(ops log ops) per stage. */
#include "report/explain-overlap.h"

#include <stdio.h>
#include <string.h>

#include "util/units.h"
#include "workload/schedule.h"

enum { K_DP, K_PARAM, K_EMB, K_TP, K_CP, K_EP, K_PP, K_N };
static const char *const kind_names[K_N] = {
  "dp gradients", "param all-gather", "tied embedding", "tp", "cp", "ep", "pp",
};

/* The kind of a communication op, or -1. */
static int kind_of(const FsOp *op)
{
  switch (op->cat) {
  case FS_CAT_DP: return strstr(op->name, "param") != NULL ? K_PARAM : K_DP;
  case FS_CAT_EMB: return K_EMB;
  case FS_CAT_TP: return K_TP;
  case FS_CAT_CP: return K_CP;
  case FS_CAT_EP: return K_EP;
  case FS_CAT_PP: return K_PP;
  default: return -1;
  }
}

typedef struct {
  FsTime a, b;
} Span;

static int span_cmp(const void *x, const void *y)
{
  const Span *p = x, *q = y;
  return p->a < q->a ? -1 : p->a > q->a ? 1 : (p->b < q->b ? -1 : p->b > q->b);
}

/* Sorts and merges spans in place into a disjoint union; returns its
 * total length. */
static FsTime merge(GArray *s)
{
  g_array_sort(s, span_cmp);
  guint k = 0;
  FsTime total = 0;
  for (guint i = 0; i < s->len; i++) {
    Span x = g_array_index(s, Span, i);
    if (k > 0 && x.a <= g_array_index(s, Span, k - 1).b) {
      Span *last = &g_array_index(s, Span, k - 1);
      last->b = MAX(last->b, x.b);
    } else {
      g_array_index(s, Span, k++) = x;
    }
  }
  g_array_set_size(s, k);
  for (guint i = 0; i < k; i++)
    total += g_array_index(s, Span, i).b - g_array_index(s, Span, i).a;
  return total;
}

/* Length of the intersection of two disjoint sorted unions. */
static FsTime overlap(const GArray *x, const GArray *y)
{
  FsTime total = 0;
  guint i = 0, j = 0;
  while (i < x->len && j < y->len) {
    const Span *p = &g_array_index(x, Span, i), *q = &g_array_index(y, Span, j);
    FsTime a = MAX(p->a, q->a), b = MIN(p->b, q->b);
    if (b > a)
      total += b - a;
    if (p->b < q->b)
      i++;
    else
      j++;
  }
  return total;
}

typedef struct {
  FsTime step;
  double comm[K_N], hidden[K_N];   /* ms, mean over stages */
  double exposed_cat[FS_CAT_N];    /* executor breakdown, ms, mean over stages */
  double bubble;
} Run;

static double ms(FsTime t) { return fs_time_to_s(t) * 1e3; }

/* Measures one finished step into *out. */
static void measure(FsTrain *t, Run *out)
{
  const FsTrainResult *r = fs_train_result(t);
  const FsOpGraph *g = fs_train_graph(t);
  memset(out, 0, sizeof *out);
  out->step = r->step_time;
  guint nc = r->classes->len, n = fs_opgraph_n_ops(g);
  for (guint c = 0; c < nc; c++) {
    const FsTrainClass *cl = &g_array_index(r->classes, FsTrainClass, c);
    g_autoptr(GArray) busy = g_array_new(FALSE, FALSE, sizeof(Span));
    GArray *comm[K_N];
    for (guint k = 0; k < K_N; k++)
      comm[k] = g_array_new(FALSE, FALSE, sizeof(Span));
    for (guint i = 0; i < n; i++) {
      const FsOp *op = fs_opgraph_op(g, i);
      if (op->start < 0 || op->end <= op->start)
        continue;
      const FsStream *s = fs_opgraph_stream(g, op->stream);
      gboolean mine = s->rank == cl->rank;
      Span sp = { op->start, op->end };
      if (mine && s->compute && op->kind == FS_OP_COMPUTE &&
          (op->cat == FS_CAT_FORWARD || op->cat == FS_CAT_BACKWARD || op->cat == FS_CAT_RECOMPUTE ||
           op->cat == FS_CAT_OPTIMIZER)) {
        g_array_append_val(busy, sp);
        continue;
      }
      int k = kind_of(op);
      if (k >= 0 && op->kind != FS_OP_COMPUTE &&
          (mine || (op->kind == FS_OP_XFER && op->dst == cl->gpu)))
        g_array_append_val(comm[k], sp);
    }
    merge(busy);
    for (guint k = 0; k < K_N; k++) {
      FsTime total = merge(comm[k]);
      out->comm[k] += ms(total) / nc;
      out->hidden[k] += ms(overlap(comm[k], busy)) / nc;
      g_array_unref(comm[k]);
    }
    for (guint k = 0; k < FS_CAT_N; k++)
      out->exposed_cat[k] += ms(cl->time.exposed[k]) / nc;
    out->bubble += ms(cl->time.bubble) / nc;
  }
}

static gboolean run_step(const FsScenario *sc, FsWorkload *w, const FsTrainOptions *topt, gboolean on,
                         Run *out, GError **error)
{
  w->overlap_dp_grads = w->overlap_tp_comm = w->overlap_param_gather = on;
  /* EP all-to-alls overlap where Megatron's combined 1F1B allows it (spec.c's rules). */
  w->overlap_ep_comm = on && w->ep > 1 && (w->pp == 1 || w->vp > 1) &&
                       w->recompute != FS_RECOMPUTE_FULL;
  g_autoptr(FsTrain) t = fs_scenario_train_new(sc, NULL, NULL, w, topt, error);
  if (t == NULL || !fs_train_run(t, error))
    return FALSE;
  measure(t, out);
  return TRUE;
}

/* See explain-overlap.h. Runs one training step with every overlap off and one with every
 * overlap on (two full simulations), then appends to out, per kind of communication, how much
 * was in flight, hidden behind compute and exposed, the step times, and the executor's
 * breakdown of exposed time and bubble. Returns FALSE with error set if either run fails. */
gboolean fs_report_overlap(GString *out, const FsScenario *sc, FsWorkload *w,
                           const FsTrainOptions *topt, GError **error)
{
  const FsTopo *topo = fs_scenario_topo(sc);
  gboolean own[4] = { w->overlap_dp_grads, w->overlap_tp_comm, w->overlap_param_gather,
                      w->overlap_ep_comm };
  Run off, on;
  if (!run_step(sc, w, topt, FALSE, &off, error) || !run_step(sc, w, topt, TRUE, &on, error))
    return FALSE;

  g_string_append_printf(out, "Overlap of communication with compute: %s on %s\n", w->name, fs_topo_name(topo));
  g_string_append_printf(out, "  layout tp %u%s, pp %u (%s), dp %u, cp %u, ep %u, ZeRO-%u; the workload itself says "
         "dp_grads %s, tp_comm %s, param_gather %s%s%s\n", w->tp, w->sequence_parallel ? " + SP" : "",
         w->pp, fs_pp_schedule_name(w->schedule), w->dp, w->cp, w->ep, w->zero_stage,
         own[0] ? "on" : "off", own[1] ? "on" : "off", own[2] ? "on" : "off",
         w->ep > 1 ? ", ep_comm " : "", w->ep > 1 ? (own[3] ? "on" : "off") : "");
  g_string_append_printf(out, "  ms per rank, mean over the %u pipeline stage%s (each stage's tp 0, dp 0 rank)\n\n", w->pp,
         w->pp == 1 ? "" : "s");
  g_string_append_printf(out, "  %-18s | %28s | %28s\n", "", "every overlap off", "every overlap on");
  g_string_append_printf(out, "  %-18s | %9s %9s %8s | %9s %9s %8s\n", "kind", "comm", "hidden", "exposed", "comm",
         "hidden", "exposed");
  for (guint k = 0; k < K_N; k++) {
    if (off.comm[k] == 0 && on.comm[k] == 0)
      continue;
    g_string_append_printf(out, "  %-18s | %9.3f %9.3f %8.3f | %9.3f %9.3f %8.3f\n", kind_names[k], off.comm[k],
           off.hidden[k], off.comm[k] - off.hidden[k], on.comm[k], on.hidden[k],
           on.comm[k] - on.hidden[k]);
  }
  double a = ms(off.step), b = ms(on.step);
  g_string_append_printf(out, "  %-18s | %28.3f | %28.3f   (%+.1f%%)\n", "step time", a, b, a > 0 ? 100 * (b - a) / a : 0.0);
  g_string_append_printf(out, "\nThe executor's breakdown (exposed communication by kind and bubble, ms):\n");
  const Run *runs[2] = { &off, &on };
  for (guint r = 0; r < 2; r++) {
    g_string_append_printf(out, "  overlap %-4s", r ? "on" : "off");
    for (guint k = 0; k < FS_CAT_N; k++)
      if (fs_op_cat_is_comm(k) && (off.exposed_cat[k] > 0 || on.exposed_cat[k] > 0))
        g_string_append_printf(out, "  %s %.3f", fs_op_cat_name(k), runs[r]->exposed_cat[k]);
    g_string_append_printf(out, "  bubble %.3f\n", runs[r]->bubble);
  }
  g_string_append_printf(out, "\ncomm: some op of the kind in flight for the rank; hidden: while its compute stream ran\n"
         "forward, backward, recompute or optimizer work; exposed = comm - hidden.  Kinds may be in\n"
         "flight together, so exposed times can add up to more than the breakdown, which gives\n"
         "each idle moment to one kind (dp, emb, pp, cp, ep, tp in that order).\n");
  return TRUE;
}
