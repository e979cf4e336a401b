/* schedule.c — see schedule.h.
 *
 * The timeline is a list scheduling of each stage's order (from the
 * schedule's own callback) with a forward chunk of 2 ticks and a backward
 * chunk of 4 ticks (backward ≈ 2 × forward), scaled so that a whole stage's
 * forward is 2·V ticks whatever the schedule (V = --vp).  Communication is
 * free here: the drawing shows the schedule's bubble only. */
#include "report/schedule.h"

#include <stdio.h>
#include <string.h>

#include "report/timeline-svg.h"
#include "util/strutil.h"

typedef struct {
  FsSchedItem it;
  guint start, end;
} Slot;

/* Times every item of every stage; returns the makespan, or 0 when the
 * orders cannot complete (a schedule bug). */
static guint timeline(const FsSchedule *s, guint p, guint m, guint v, guint V, GArray **slots)
{
  guint f = 2 * V / v, b = 4 * V / v, vs_n = p * v;
  /* done[(vs * m + mb) * 2 + backward] = finish tick + 1 (0: not yet). */
  g_autofree guint *done = g_new0(guint, (gsize)vs_n * m * 2);
  g_autofree guint *pos = g_new0(guint, p);
  g_autofree guint *free_at = g_new0(guint, p);
  for (guint st = 0; st < p; st++) {
    slots[st] = g_array_new(FALSE, FALSE, sizeof(Slot));
    g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(FsSchedItem));
    s->order(p, m, v, st, order);
    for (guint i = 0; i < order->len; i++) {
      Slot sl = { g_array_index(order, FsSchedItem, i), 0, 0 };
      g_array_append_val(slots[st], sl);
    }
  }
  guint makespan = 0;
  for (gboolean progress = TRUE; progress;) {
    progress = FALSE;
    for (guint st = 0; st < p; st++) {
      while (pos[st] < slots[st]->len) {
        Slot *sl = &g_array_index(slots[st], Slot, pos[st]);
        guint vs = sl->it.chunk * p + st, dep = 0;
        gboolean ready = TRUE;
        if (!sl->it.backward && vs > 0) {
          dep = done[((vs - 1) * m + sl->it.mb) * 2];
          ready = dep > 0;
        } else if (sl->it.backward) {
          dep = vs + 1 < vs_n ? done[((vs + 1) * m + sl->it.mb) * 2 + 1] : done[(vs * m + sl->it.mb) * 2];
          ready = dep > 0;
        }
        if (!ready)
          break;
        sl->start = MAX(free_at[st], dep > 0 ? dep - 1 : 0);
        sl->end = sl->start + (sl->it.backward ? b : f);
        free_at[st] = sl->end;
        done[(vs * m + sl->it.mb) * 2 + sl->it.backward] = sl->end + 1;
        makespan = MAX(makespan, sl->end);
        pos[st]++;
        progress = TRUE;
      }
    }
  }
  for (guint st = 0; st < p; st++)
    if (pos[st] < slots[st]->len)
      return 0;
  return makespan;
}

/* One schedule's timeline, computed once for every output. */
typedef struct {
  const FsSchedule *s;
  guint v;            /* chunks per stage it ran with */
  const char *why;    /* why it cannot run, or NULL */
  GArray **slots;     /* per stage, or NULL */
  guint span;         /* 0: deadlock */
  double bubble, formula;
} Drawn;

static void drawn_clear(Drawn *d, guint p)
{
  if (d->slots != NULL)
    for (guint st = 0; st < p; st++)
      if (d->slots[st])
        g_array_unref(d->slots[st]);
  g_free(d->slots);
}

static void compute(const FsSchedule *s, guint p, guint m, guint V, Drawn *d)
{
  memset(d, 0, sizeof *d);
  d->s = s;
  d->v = s->id == FS_PP_INTERLEAVED ? V : 1;
  d->why = s->unsupported ? s->unsupported(p, m, d->v) : NULL;
  if (d->why != NULL)
    return;
  d->slots = g_new0(GArray *, p);
  d->span = timeline(s, p, m, d->v, V, d->slots);
  if (d->span == 0)
    return;
  guint busy = 0;
  for (guint st = 0; st < p; st++)
    for (guint i = 0; i < d->slots[st]->len; i++) {
      const Slot *sl = &g_array_index(d->slots[st], Slot, i);
      busy += sl->end - sl->start;
    }
  d->bubble = 1.0 - (double)busy / ((double)p * d->span);
  d->formula = (double)(p - 1) / ((double)d->v * m + p - 1);
}

static void draw(GString *out, const Drawn *d, guint p, guint m)
{
  g_string_append_printf(out, "%s — %s\n", d->s->name, d->s->summary);
  if (d->why != NULL) {
    g_string_append_printf(out, "  cannot run p=%u, m=%u, v=%u: %s\n\n", p, m, d->v, d->why);
    return;
  }
  if (d->span == 0) {
    g_string_append_printf(out, "  the stages' orders do not complete (deadlock)\n\n");
    return;
  }
  for (guint st = 0; st < p; st++) {
    g_autofree char *row = g_malloc(d->span + 1);
    memset(row, '.', d->span);
    row[d->span] = '\0';
    for (guint i = 0; i < d->slots[st]->len; i++) {
      const Slot *sl = &g_array_index(d->slots[st], Slot, i);
      char c = sl->it.backward ? (char)('a' + sl->it.mb % 26) : (char)('A' + sl->it.mb % 26);
      for (guint t = sl->start; t < sl->end; t++)
        row[t] = c;
    }
    g_string_append_printf(out, "  stage %-3u |%s|\n", st, row);
  }
  g_string_append_printf(out, "  step %u ticks; bubble %.1f%% of stage time (idle '.'); formula (p-1)/(v·m+p-1) = %.1f%%\n\n",
         d->span, 100 * d->bubble, 100 * d->formula);
}

/* Forward and backward colours per model chunk (Tableau 10). */
static const char *const fwd_fill[] = { "#4e79a7", "#76b7b2", "#59a14f", "#8cd17d" };
static const char *const bwd_fill[] = { "#e15759", "#f28e2b", "#b07aa1", "#ff9d9a" };

/* The SVG of every schedule that ran, one panel each, one time scale. */
static char *schedule_svg(const Drawn *d, guint nd, guint p, guint m)
{
  g_autofree FsSvgPanel *panels = g_new0(FsSvgPanel, MAX(nd, 1u));
  g_autoptr(GPtrArray) owned = g_ptr_array_new_with_free_func(g_free);
  g_auto(GStrv) rows = g_new0(char *, p + 1);
  for (guint st = 0; st < p; st++)
    rows[st] = g_strdup_printf("stage %u", st);
  guint np = 0, vmax = 1;
  for (guint k = 0; k < nd; k++) {
    if (d[k].why != NULL || d[k].span == 0)
      continue;
    vmax = MAX(vmax, d[k].v);
    guint nb = 0;
    for (guint st = 0; st < p; st++)
      nb += d[k].slots[st]->len;
    FsSvgBar *bars = g_new0(FsSvgBar, MAX(nb, 1u));
    g_ptr_array_add(owned, bars);
    guint b = 0;
    for (guint st = 0; st < p; st++)
      for (guint i = 0; i < d[k].slots[st]->len; i++) {
        const Slot *sl = &g_array_index(d[k].slots[st], Slot, i);
        char *lab = g_strdup_printf("%u", sl->it.mb);
        g_autofree char *chunk = d[k].v > 1 ? g_strdup_printf(", chunk %u", sl->it.chunk) : g_strdup("");
        char *tip = g_strdup_printf("stage %u, %s of micro-batch %u%s, ticks %u-%u", st,
                                    sl->it.backward ? "backward" : "forward", sl->it.mb, chunk,
                                    sl->start, sl->end);
        g_ptr_array_add(owned, lab);
        g_ptr_array_add(owned, tip);
        guint c = MIN(sl->it.chunk, (guint)G_N_ELEMENTS(fwd_fill) - 1);
        bars[b++] = (FsSvgBar){ st, sl->start, sl->end, sl->it.backward ? bwd_fill[c] : fwd_fill[c],
                                lab, tip };
      }
    char *title = g_strdup_printf("%s (v = %u): bubble %.1f%% of stage time (formula %.1f%%), step %u ticks",
                                  d[k].s->name, d[k].v, 100 * d[k].bubble, 100 * d[k].formula, d[k].span);
    g_ptr_array_add(owned, title);
    panels[np++] = (FsSvgPanel){ title, p, (const char *const *)rows, bars, b, d[k].span };
  }
  FsSvgLegend legend[2 * G_N_ELEMENTS(fwd_fill) + 1];
  guint nl = 0;
  for (guint c = 0; c < MIN(vmax, (guint)G_N_ELEMENTS(fwd_fill)); c++) {
    char *f = vmax > 1 ? g_strdup_printf("forward, chunk %u", c) : g_strdup("forward");
    char *bk = vmax > 1 ? g_strdup_printf("backward, chunk %u", c) : g_strdup("backward");
    g_ptr_array_add(owned, f);
    g_ptr_array_add(owned, bk);
    legend[nl++] = (FsSvgLegend){ fwd_fill[c], f };
    legend[nl++] = (FsSvgLegend){ bwd_fill[c], bk };
  }
  legend[nl++] = (FsSvgLegend){ "#eeeeee", "idle (bubble)" };
  g_autofree char *title = g_strdup_printf("Pipeline of %u stages, %u micro-batches (numbers: micro-batch)",
                                           p, m);
  return fs_svg_timeline(title, panels, np,
                         "ticks (a stage's forward of one micro-batch = 2, backward = 4, each ÷ v per chunk)",
                         legend, nl);
}

static void schedule_csv(GString *out, const Drawn *d, guint nd, guint p)
{
  g_string_append_printf(out, "schedule,virtual_stages,stage,microbatch,chunk,pass,start,end\n");
  for (guint k = 0; k < nd; k++) {
    if (d[k].why != NULL || d[k].span == 0)
      continue;
    for (guint st = 0; st < p; st++)
      for (guint i = 0; i < d[k].slots[st]->len; i++) {
        const Slot *sl = &g_array_index(d[k].slots[st], Slot, i);
        g_string_append_printf(out, "%s,%u,%u,%u,%u,%s,%u,%u\n", d[k].s->name, d[k].v, st, sl->it.mb, sl->it.chunk,
               sl->it.backward ? "backward" : "forward", sl->start, sl->end);
      }
  }
}

gboolean fs_report_schedules(GString *out, const FsSchedule *only, guint p, guint m, guint V,
                             gboolean csv, const char *svg_path, GError **error)
{
  guint nd = 0, ns = 0;
  while (fs_schedules[ns] != NULL)
    ns++;
  g_autofree Drawn *d = g_new0(Drawn, MAX(ns, 1u));
  for (guint i = 0; i < ns; i++)
    if (only == NULL || only == fs_schedules[i])
      compute(fs_schedules[i], p, m, V, &d[nd++]);
  gboolean ok = TRUE;
  if (svg_path != NULL) {
    g_autofree char *svg = schedule_svg(d, nd, p, m);
    ok = fs_write_file_atomic(svg_path, svg, strlen(svg), error);
  }
  if (ok && csv) {
    schedule_csv(out, d, nd, p);
  } else if (ok) {
    g_string_append_printf(out, "Pipeline of %u stages, %u micro-batches (capitals: forward, lower case: "
                           "backward, '.': idle)\n\n", p, m);
    for (guint k = 0; k < nd; k++)
      draw(out, &d[k], p, m);
  }
  for (guint k = 0; k < nd; k++)
    drawn_clear(&d[k], p);
  return ok;
}
