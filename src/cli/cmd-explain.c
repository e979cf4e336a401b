/* cmd-explain.c — `fabricsim explain TOPIC …`: teaching views; the topics
 * `schedule` (the timelines: report/schedule.h) and `coll` (the tuner's
 * arithmetic: fs_coll_explain, coll/tuner.h) here, the larger ones in
 * explain-<topic>.c.  Options and dispatch only. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/explain.h"
#include "report/coll.h"
#include "report/schedule.h"
#include "scenario/scenario.h"
#include "util/units.h"

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
  GError *error = NULL;
  g_autoptr(GString) out = g_string_new(NULL);
  if (!fs_report_schedules(out, only, (guint)opt_pp, (guint)opt_mb, (guint)opt_vp, opt_csv, opt_svg,
                           &error))
    return fs_cli_fail("explain schedule", error);
  fputs(out->str, stdout);
  return 0;
}


static char *opt_op = NULL, *opt_size = NULL, *opt_gpus = NULL, *opt_models = NULL, *opt_nccl = NULL;
static char **opt_defines = NULL;

static const GOptionEntry coll_entries[] = {
  {"op", 'o', 0, G_OPTION_ARG_STRING, &opt_op, "Collective (default all_reduce)", "OP"},
  {"size", 's', 0, G_OPTION_ARG_STRING, &opt_size, "Buffer size, nccl-tests units (default 128M)", "SIZE"},
  {"gpus", 'g', 0, G_OPTION_ARG_STRING, &opt_gpus, "GPUs: all, a count or a list (default all)", "GPUS"},
  FS_OPT_MODELS(opt_models),
  FS_OPT_DEFINE(opt_defines),
  {"nccl-version", 0, 0, G_OPTION_ARG_STRING, &opt_nccl, "NCCL release of the constants, as in coll", "X.Y"},
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
    "`fabricsim coll`; --nccl-version X.Y takes models/nccl/nccl-X.Y.yaml.\n\n"
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
  FsScenarioInputs in = { .models_dir = opt_models, .topology = argv[1], .nccl_version = opt_nccl,
                          .defines = (const char *const *)opt_defines, .needs = FS_SCENARIO_NEED_NCCL };
  g_autoptr(FsScenario) sc = fs_scenario_load(&in, &error);
  if (sc == NULL)
    return fs_cli_fail("explain coll", error);
  g_autoptr(GString) out = g_string_new(NULL);
  if (!fs_report_coll_explain(out, sc, op, bytes, opt_gpus ? opt_gpus : "all",
                              opt_size ? opt_size : "128M", &error))
    return fs_cli_fail("explain coll", error);
  fputs(out->str, stdout);
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
