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
#include "coll/coll-topo.h"
#include "coll/nccl-params.h"
#include "coll/tuner.h"
#include "core/sim.h"
#include "net/flow.h"
#include "net/route.h"
#include "topo/topo.h"
#include "util/units.h"
#include "workload/schedule.h"

static int opt_pp = 4, opt_mb = 8, opt_vp = 2;
static char *opt_sched = NULL;

static const GOptionEntry sched_entries[] = {
  {"pp", 0, 0, G_OPTION_ARG_INT, &opt_pp, "Pipeline stages (default 4)", "P"},
  {"microbatches", 'm', 0, G_OPTION_ARG_INT, &opt_mb, "Micro-batches per step (default 8)", "M"},
  {"vp", 0, 0, G_OPTION_ARG_INT, &opt_vp, "Model chunks per stage for interleaved (default 2)", "V"},
  {"schedule", 0, 0, G_OPTION_ARG_STRING, &opt_sched, "Only this schedule (default: all)", "NAME"},
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

static void draw(const FsSchedule *s, guint p, guint m, guint V)
{
  guint v = s->id == FS_PP_INTERLEAVED ? V : 1;
  const char *why = s->unsupported ? s->unsupported(p, m, v) : NULL;
  printf("%s — %s\n", s->name, s->summary);
  if (why != NULL) {
    printf("  cannot run p=%u, m=%u, v=%u: %s\n\n", p, m, v, why);
    return;
  }
  GArray **slots = g_new0(GArray *, p);
  guint span = timeline(s, p, m, v, V, slots);
  if (span == 0) {
    printf("  the stages' orders do not complete (deadlock)\n\n");
  } else {
    guint busy = 0;
    for (guint st = 0; st < p; st++) {
      g_autofree char *row = g_malloc(span + 1);
      memset(row, '.', span);
      row[span] = '\0';
      for (guint i = 0; i < slots[st]->len; i++) {
        const Slot *sl = &g_array_index(slots[st], Slot, i);
        char c = sl->it.backward ? (char)('a' + sl->it.mb % 26) : (char)('A' + sl->it.mb % 26);
        for (guint t = sl->start; t < sl->end; t++)
          row[t] = c;
        busy += sl->end - sl->start;
      }
      printf("  stage %-3u |%s|\n", st, row);
    }
    double bubble = 1.0 - (double)busy / ((double)p * span);
    double formula = (double)(p - 1) / ((double)v * m + p - 1);
    printf("  step %u ticks; bubble %.1f%% of stage time (idle '.'); formula (p-1)/(v·m+p-1) = %.1f%%\n\n",
           span, 100 * bubble, 100 * formula);
  }
  for (guint st = 0; st < p; st++)
    if (slots[st])
      g_array_unref(slots[st]);
  g_free(slots);
}

static int explain_schedule(int argc, char **argv)
{
  g_autoptr(GOptionContext) ctx = g_option_context_new("- pipeline schedules as a timeline");
  g_option_context_add_main_entries(ctx, sched_entries, NULL);
  g_option_context_set_description(ctx,
    "Capital letters are forward passes (A = micro-batch 0), lower case backward\n"
    "passes, '.' is the bubble.  A forward chunk takes 2 ticks, a backward 4; with\n"
    "--vp V an interleaved chunk is 1/V of a stage.\n\n"
    "Example:\n  fabricsim explain schedule --pp 4 --microbatches 8\n");
  if (!fs_cli_parse(ctx, &argc, &argv, "explain schedule"))
    return 2;
  if (argc != 1)
    return fs_cli_usage("explain schedule", "unexpected argument \"%s\"", argv[1]);
  if (opt_pp < 1 || opt_pp > 64 || opt_mb < 1 || opt_mb > 256 || opt_vp < 1 || opt_vp > 8)
    return fs_cli_usage("explain schedule", "expected 1 <= pp <= 64, 1 <= microbatches <= 256, 1 <= vp <= 8");
  const FsSchedule *only = NULL;
  if (opt_sched != NULL && (only = fs_schedule_find(opt_sched)) == NULL)
    return fs_cli_usage("explain schedule", "unknown schedule \"%s\" (see fabricsim train --list-schedules)",
                        opt_sched);
  printf("Pipeline of %d stages, %d micro-batches (capitals: forward, lower case: backward, '.': idle)\n\n",
         opt_pp, opt_mb);
  for (guint i = 0; fs_schedules[i] != NULL; i++)
    if (only == NULL || only == fs_schedules[i])
      draw(fs_schedules[i], (guint)opt_pp, (guint)opt_mb, (guint)opt_vp);
  return 0;
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
  g_autoptr(GOptionContext) ctx = g_option_context_new("TOPOLOGY - the arithmetic of one collective");
  g_option_context_add_main_entries(ctx, coll_entries, NULL);
  g_option_context_set_description(ctx,
    "Prints the rings the search found in the topology (per host: how many, what\n"
    "each carries, their GPU order), the tuner's choice and NCCL's alpha-beta\n"
    "arithmetic for it.  NCCL_ALGO, NCCL_PROTO and NCCL_COLLNET_ENABLE act as in\n"
    "`fabricsim coll`.\n\n"
    "Example:\n  fabricsim explain coll topologies/dgx-h100.yaml -o all_reduce -s 1G\n");
  if (!fs_cli_parse(ctx, &argc, &argv, "explain coll"))
    return 2;
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
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("Usage: fabricsim explain TOPIC [options]\n\nTopics:\n"
           "  schedule   pipeline schedules (GPipe, 1F1B, interleaved) as a timeline, with the bubble\n"
           "  coll       the tuner's choice for one collective and its alpha-beta arithmetic\n\n"
           "Example:\n  fabricsim explain schedule --pp 4 --microbatches 8\n");
    return 0;
  }
  return fs_cli_usage("explain", "expected a topic: schedule or coll (fabricsim explain --help)");
}
