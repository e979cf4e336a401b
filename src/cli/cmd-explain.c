/* cmd-explain.c — `fabricsim explain TOPIC …`: teaching views.
 *
 *   explain schedule --pp P --microbatches M [--vp V] [--schedule NAME]
 *       the pipeline schedules of the schedule table (src/workload/
 *       schedule.h) drawn as an ASCII timeline, one row per stage, with the
 *       bubble fraction measured on the drawing and the textbook formula.
 *   explain coll TOPO [-o OP] [-s SIZE] [-g GPUS]
 *       the tuner's choice for one collective and its alpha-beta arithmetic
 *       (fs_coll_explain, src/coll/tuner.h).
 *
 * The timeline is a list scheduling of each stage's order (from the
 * schedule's own callback) with a forward chunk of 2 ticks and a backward
 * chunk of 4 ticks (backward ≈ 2 × forward), scaled so that a whole stage's
 * forward is 2·V ticks whatever the schedule (V = --vp).  Communication is
 * free here: the drawing shows the schedule's bubble only. */
#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/explain.h"
#include "coll/nccl-params.h"
#include "coll/tuner.h"
#include "collrun/coll-topo.h"
#include "core/sim.h"
#include "net/flow.h"
#include "net/route.h"
#include "report/timeline-svg.h"
#include "topo/topo.h"
#include "util/strutil.h"
#include "util/units.h"
#include "workload/schedule.h"

static int opt_pp = 4, opt_mb = 8, opt_vp = 2;
static char *opt_sched = NULL, *opt_svg = NULL;
static gboolean opt_csv = FALSE;

static const GOptionEntry sched_entries[] = {
  {"pp", 0, 0, G_OPTION_ARG_INT, &opt_pp, "Pipeline stages (default 4)", "P"},
  {"microbatches", 'm', 0, G_OPTION_ARG_INT, &opt_mb, "Micro-batches per step (default 8)", "M"},
  {"vp", 0, 0, G_OPTION_ARG_INT, &opt_vp, "Model chunks per stage for interleaved (default 2)", "V"},
  {"schedule", 0, 0, G_OPTION_ARG_STRING, &opt_sched, "Only this schedule (default: all)", "NAME"},
  {"svg", 0, 0, G_OPTION_ARG_FILENAME, &opt_svg, "Also write the timelines as SVG to FILE", "FILE"},
  {"csv", 0, 0, G_OPTION_ARG_NONE, &opt_csv, "Print every pass as CSV instead of the text", NULL},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

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

static void draw(const Drawn *d, guint p, guint m)
{
  printf("%s — %s\n", d->s->name, d->s->summary);
  if (d->why != NULL) {
    printf("  cannot run p=%u, m=%u, v=%u: %s\n\n", p, m, d->v, d->why);
    return;
  }
  if (d->span == 0) {
    printf("  the stages' orders do not complete (deadlock)\n\n");
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
    printf("  stage %-3u |%s|\n", st, row);
  }
  printf("  step %u ticks; bubble %.1f%% of stage time (idle '.'); formula (p-1)/(v·m+p-1) = %.1f%%\n\n",
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

static void schedule_csv(const Drawn *d, guint nd, guint p)
{
  printf("schedule,virtual_stages,stage,microbatch,chunk,pass,start,end\n");
  for (guint k = 0; k < nd; k++) {
    if (d[k].why != NULL || d[k].span == 0)
      continue;
    for (guint st = 0; st < p; st++)
      for (guint i = 0; i < d[k].slots[st]->len; i++) {
        const Slot *sl = &g_array_index(d[k].slots[st], Slot, i);
        printf("%s,%u,%u,%u,%u,%s,%u,%u\n", d[k].s->name, d[k].v, st, sl->it.mb, sl->it.chunk,
               sl->it.backward ? "backward" : "forward", sl->start, sl->end);
      }
  }
}

static int explain_schedule(int argc, char **argv)
{
  FS_CLI_OPTIONS(sched_entries);
  g_autoptr(GOptionContext) ctx = g_option_context_new("- pipeline schedules as a timeline");
  g_option_context_add_main_entries(ctx, sched_entries, NULL);
  g_option_context_set_description(ctx,
    "Capital letters are forward passes (A = micro-batch 0), lower case backward\n"
    "passes, '.' is the bubble.  A forward chunk takes 2 ticks, a backward 4; with\n"
    "--vp V an interleaved chunk is 1/V of a stage.  --svg FILE also draws the\n"
    "timelines as SVG (one panel per schedule, one time scale, written atomically);\n"
    "--csv prints every pass (schedule, stage, micro-batch, chunk, start, end)\n"
    "instead of the text (tools/plot pipeline draws it).\n\n"
    "Examples:\n  fabricsim explain schedule --pp 4 --microbatches 8\n"
    "  fabricsim explain schedule --pp 4 --microbatches 8 --svg schedules.svg\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "explain schedule");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc != 1)
    return fs_cli_usage("explain schedule", "unexpected argument \"%s\"", argv[1]);
  if (opt_pp < 1 || opt_pp > 64 || opt_mb < 1 || opt_mb > 256 || opt_vp < 1 || opt_vp > 8)
    return fs_cli_usage("explain schedule", "expected 1 <= pp <= 64, 1 <= microbatches <= 256, 1 <= vp <= 8");
  const FsSchedule *only = NULL;
  if (opt_sched != NULL && (only = fs_schedule_find(opt_sched)) == NULL)
    return fs_cli_usage("explain schedule", "unknown schedule \"%s\" (see fabricsim train --list-schedules)",
                        opt_sched);
  guint p = (guint)opt_pp, m = (guint)opt_mb, V = (guint)opt_vp, nd = 0, ns = 0;
  while (fs_schedules[ns] != NULL)
    ns++;
  g_autofree Drawn *d = g_new0(Drawn, MAX(ns, 1u));
  for (guint i = 0; i < ns; i++)
    if (only == NULL || only == fs_schedules[i])
      compute(fs_schedules[i], p, m, V, &d[nd++]);
  int status = 0;
  if (opt_svg != NULL) {
    g_autofree char *svg = schedule_svg(d, nd, p, m);
    GError *error = NULL;
    if (!fs_write_file_atomic(opt_svg, svg, strlen(svg), &error))
      status = fs_cli_fail("explain schedule", error);
  }
  if (status == 0 && opt_csv) {
    schedule_csv(d, nd, p);
  } else if (status == 0) {
    printf("Pipeline of %d stages, %d micro-batches (capitals: forward, lower case: backward, '.': idle)\n\n",
           opt_pp, opt_mb);
    for (guint k = 0; k < nd; k++)
      draw(&d[k], p, m);
  }
  for (guint k = 0; k < nd; k++)
    drawn_clear(&d[k], p);
  return status;
}


static char *opt_op = NULL, *opt_size = NULL, *opt_gpus = NULL, *opt_models = NULL;
static char **opt_defines = NULL;

static const GOptionEntry coll_entries[] = {
  {"op", 'o', 0, G_OPTION_ARG_STRING, &opt_op, "Collective (default all_reduce)", "OP"},
  {"size", 's', 0, G_OPTION_ARG_STRING, &opt_size, "Buffer size, nccl-tests units (default 128M)", "SIZE"},
  {"gpus", 'g', 0, G_OPTION_ARG_STRING, &opt_gpus, "GPUs: all, a count or a list (default all)", "GPUS"},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models, "Catalog folder", "DIR"},
  {"define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &opt_defines, "Override a topology parameter", "NAME=VALUE"},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static int explain_coll(int argc, char **argv)
{
  FS_CLI_OPTIONS(coll_entries);
  g_autoptr(GOptionContext) ctx = g_option_context_new("TOPOLOGY - the arithmetic of one collective");
  g_option_context_add_main_entries(ctx, coll_entries, NULL);
  g_option_context_set_description(ctx,
    "Prints the rings the search found in the topology (per host: how many, what\n"
    "each carries, their GPU order), the tuner's choice and NCCL's alpha-beta\n"
    "arithmetic for it.  NCCL_ALGO, NCCL_PROTO and NCCL_COLLNET_ENABLE act as in\n"
    "`fabricsim coll`.\n\n"
    "Example:\n  fabricsim explain coll topologies/dgx-h100.yaml -o all_reduce -s 1G\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "explain coll");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc != 2)
    return fs_cli_usage("explain coll", "expected one TOPOLOGY file");
  GError *error = NULL;
  FsCollOp op = FS_COLL_ALL_REDUCE;
  if (opt_op != NULL && !fs_coll_op_from_name(opt_op, &op))
    return fs_cli_usage("explain coll", "unknown collective \"%s\"", opt_op);
  uint64_t bytes = 128u << 20;
  if (opt_size != NULL && !fs_parse_size(opt_size, &bytes, &error))
    return fs_cli_fail("explain coll", error);
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(opt_models, &error);
  if (cat == NULL)
    return fs_cli_fail("explain coll", error);
  g_autoptr(FsTopo) topo = fs_topo_load_file(argv[1], cat, (const char *const *)opt_defines, &error);
  if (topo == NULL)
    return fs_cli_fail("explain coll", error);
  g_autoptr(FsNcclParams) np = fs_nccl_params_load_default(&error);
  if (np == NULL)
    return fs_cli_fail("explain coll", error);
  guint n = 0;
  g_autofree guint *gpus = fs_coll_parse_gpus(topo, opt_gpus ? opt_gpus : "all", &n, &error);
  if (gpus == NULL)
    return fs_cli_fail("explain coll", error);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) router = fs_router_new(topo, net, NULL);
  g_autoptr(FsComm) comm = fs_coll_comm_from_topo(router, gpus, n, np->max_channels, &error);
  if (comm == NULL)
    return fs_cli_fail("explain coll", error);
  FsCollSysInfo sys;
  if (!fs_coll_sysinfo_from_topo(np, router, comm, &sys, &error))
    return fs_cli_fail("explain coll", error);
  FsCollSizes sizes;
  fs_coll_sizes(op, bytes, FS_COLL_DT_FLOAT, n, &sizes);
  uint64_t nbytes = fs_coll_nccl_bytes(op, &sizes, n);
  /* As `coll`: NCCL_ALGO / NCCL_PROTO restrict the tuner, and CollNet
   * (SHARP) counts only with NCCL_COLLNET_ENABLE=1. */
  FsCollPrefs prefs;
  fs_coll_prefs_init(&prefs);
  const char *env_algo = g_getenv("NCCL_ALGO"), *env_proto = g_getenv("NCCL_PROTO");
  const char *cn = g_getenv("NCCL_COLLNET_ENABLE");
  if ((env_algo && env_algo[0] && !fs_coll_prefs_set_nccl_algo(&prefs, env_algo, &error)) ||
      (env_proto && env_proto[0] && !fs_coll_prefs_set_nccl_proto(&prefs, env_proto, &error)))
    return fs_cli_fail("explain coll", error);
  if (!(cn != NULL && strcmp(cn, "1") == 0))
    sys.collnet = FALSE;
  FsCollChoice choice;
  if (!fs_coll_tune(np, &sys, comm, op, nbytes, &prefs, &choice, &error))
    return fs_cli_fail("explain coll", error);
  g_autofree char *text = fs_coll_explain(np, &sys, comm, op, nbytes, &choice);
  g_autofree char *rings = fs_coll_describe_rings(topo, comm);
  printf("%s %s on %u GPUs of %s\n%s%s", fs_coll_op_name(op), opt_size ? opt_size : "128M", n,
         fs_topo_name(topo), rings, text);
  return 0;
}

int fs_cmd_explain(int argc, char **argv)
{
  if (argc >= 2 && strcmp(argv[1], "coll") == 0)
    return explain_coll(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "schedule") == 0)
    return explain_schedule(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "topo") == 0)
    return fs_explain_topo(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "overlap") == 0)
    return fs_explain_overlap(argc - 1, argv + 1);
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("Usage: fabricsim explain TOPIC [options]\n\nTopics:\n"
           "  schedule   pipeline schedules (GPipe, 1F1B, interleaved) as a timeline, with the bubble\n"
           "  coll       the tuner's choice for one collective and its alpha-beta arithmetic\n"
           "  topo       why a GPU pair is NV#, PIX, PXB, PHB, NODE, SYS or NET: path, links, NCCL transport\n"
           "  overlap    exposed vs hidden communication per kind, with and without overlap\n\n"
           "Example:\n  fabricsim explain schedule --pp 4 --microbatches 8\n");
    return 0;
  }
  return fs_cli_usage("explain", "expected a topic: schedule, coll, topo or overlap (fabricsim explain --help)");
}
