/* cmd-replay.c — `fabricsim replay TOPO TRACE.json`: run an explicit
 * per-rank op graph (format in workloads/README.md) on a topology and
 * report its makespan, each rank's compute, exposed communication and idle
 * time, and the busiest links; a deadlock exits 1 naming ranks and ops. */
#include <stdio.h>

#include "cli/commands.h"
#include "report/progress.h"
#include "report/replay.h"
#include "scenario/scenario.h"
#include "workload/chakra/chakra.h"

#define TRACE_BINS 100

static char **opt_defines = NULL;
static char *opt_models = NULL;
static char *opt_calibration = NULL;
static gboolean opt_json = FALSE, opt_csv = FALSE;
static char *opt_trace = NULL;
static char *opt_model = NULL;
static gboolean opt_quiet = FALSE;
static gboolean opt_chakra = FALSE, opt_skip_unknown = FALSE;

static const GOptionEntry entries[] = {
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON (schema in workloads/README.md)", NULL},
  {"csv", 0, 0, G_OPTION_ARG_NONE, &opt_csv,
   "Print CSV: one line per rank (compute, exposed communication and idle ms)", NULL},
  {"trace", 0, 0, G_OPTION_ARG_FILENAME, &opt_trace,
   "Write a Chrome trace-event JSON of the run (opens in Perfetto)", "FILE"},
  {"model", 0, 0, G_OPTION_ARG_STRING, &opt_model, "Flow model: maxmin (default) or analytic", "MODEL"},
  {"chakra", 0, 0, G_OPTION_ARG_NONE, &opt_chakra,
   "The TRACE is MLCommons Chakra execution traces: a folder of PREFIX.RANK.et (or .json) "
   "files, the files themselves, or one ASTRA-sim text workload (.txt) on every GPU", NULL},
  {"skip-unknown", 0, 0, G_OPTION_ARG_NONE, &opt_skip_unknown,
   "With --chakra: skip nodes of types fabricsim does not simulate (and count them) instead "
   "of failing", NULL},
  FS_OPT_DEFINE(opt_defines),
  FS_OPT_CALIBRATION(opt_calibration),
  FS_OPT_MODELS(opt_models),
  FS_OPT_QUIET(opt_quiet),
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* "fabricsim replay TOPO TRACE" or "TOPO --chakra DIR|FILE...": loads the scenario and the
 * per-rank op graph (a fabricsim trace or Chakra traces), runs it on a fresh world with the
 * chosen flow model, writes the --trace file when asked, and prints the per-rank summary as
 * text, JSON or CSV. Returns 0, 2 on a usage error, or the exit status of the first error. */
int fs_cmd_replay(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx =
    g_option_context_new("TOPO TRACE | TOPO --chakra DIR|FILE… - replay a per-rank op graph");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "TRACE is JSON: ranks, communicators and ops (compute, send, recv, collectives)\n"
    "with dependencies; format in workloads/README.md.  With --chakra, MLCommons\n"
    "Chakra execution traces (one file per rank, as ASTRA-sim reads them; the\n"
    "mapping of node types is in tests/data/chakra/README.md): compute nodes take\n"
    "their duration_micros, else the compute model's time for num_ops/tensor_size;\n"
    "collectives run on the fabric over their process groups.  A .txt file is an\n"
    "ASTRA-sim text workload, read as Chakra's converter reads it (every GPU a rank).\n"
    "\nExamples:\n"
    "  fabricsim replay topologies/dgx-h100.yaml workloads/traces/pipeline-2stage.json\n"
    "  fabricsim replay topologies/dgx-h100.yaml --chakra tests/data/chakra/all_reduce_8r_1MiB\n"
    "  fabricsim replay topologies/dgx-h100.yaml --chakra \\\n"
    "      tests/data/chakra/text/Resnet50_DataParallel.txt\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "replay");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc != 3 && !(opt_chakra && argc > 3))
    return fs_cli_usage("replay", opt_chakra ? "expected a TOPOLOGY and Chakra traces (a folder or files)"
                                             : "expected a TOPOLOGY and a TRACE file");
  if (opt_skip_unknown && !opt_chakra)
    return fs_cli_usage("replay", "--skip-unknown goes with --chakra");
  if (opt_json && opt_csv)
    return fs_cli_usage("replay", "--json and --csv are exclusive");
  FsNetModel model = FS_NET_MAXMIN;
  if (opt_model != NULL && !fs_net_model_from_name(opt_model, &model))
    return fs_cli_usage("replay", "unknown flow model \"%s\" (maxmin or analytic)", opt_model);
  GError *error = NULL;
  FsScenarioInputs in = { .models_dir = opt_models, .calibration = opt_calibration,
                          .topology = argv[1], .defines = (const char *const *)opt_defines,
                          .needs = FS_SCENARIO_NEED_NCCL | FS_SCENARIO_NEED_EFFICIENCY };
  g_autoptr(FsScenario) sc = fs_scenario_load(&in, &error);
  if (sc == NULL)
    return fs_cli_fail("replay", error);
  const FsTopo *topo = fs_scenario_topo(sc);
  FsChakraOptions copt = { opt_skip_unknown };
  FsChakraStats cst = { 0 };
  g_autoptr(FsReplay) rp = opt_chakra
    ? fs_chakra_load((const char *const *)argv + 2, (guint)argc - 2, topo, fs_scenario_efficiency(sc),
                     &copt, &cst, &error)
    : fs_replay_load_file(argv[2], topo, fs_scenario_efficiency(sc), &error);
  if (rp == NULL)
    return fs_cli_fail("replay", error);
  g_autoptr(FsScenarioWorld) w = fs_scenario_world_new(sc, NULL, model, NULL);
  g_autoptr(FsLinkSampler) sampler = opt_trace ? fs_link_sampler_new(w->net, TRACE_BINS) : NULL;
  g_autoptr(FsProgress) progress = fs_progress_new("replay", opt_quiet);
  if (!fs_opgraph_run(rp->graph, &w->env, &error))
    return fs_cli_fail("replay", error);
  g_clear_pointer(&progress, fs_progress_free);
  FsTime end = fs_opgraph_end(rp->graph);
  if (sampler != NULL)
    fs_link_sampler_finish(sampler, end);
  if (opt_trace != NULL &&
      !fs_report_replay_trace(opt_trace, rp, topo, w->net, w->router, sampler, end, &error))
    return fs_cli_fail("replay", error);
  g_autoptr(GString) out = g_string_new(NULL);
  fs_report_replay(out, opt_json ? FS_REPORT_JSON : opt_csv ? FS_REPORT_CSV : FS_REPORT_TEXT, rp, topo,
                   w->net, w->router, end, opt_chakra ? &cst : NULL);
  fputs(out->str, stdout);
  return 0;
}
