/* explain-overlap.c — `fabricsim explain overlap TOPO WORKLOAD
 * [OVERRIDE…]`: options; the two runs and the table are
 * report/explain-overlap.h. */
#include <stdio.h>

#include "cli/commands.h"
#include "cli/explain.h"
#include "report/explain-overlap.h"
#include "report/progress.h"
#include "scenario/scenario.h"

static char **opt_defines = NULL;
static char *opt_models = NULL, *opt_calibration = NULL;
static gboolean opt_dp_isolated = FALSE, opt_quiet = FALSE;

static const GOptionEntry entries[] = {
  FS_OPT_DEFINE(opt_defines),
  FS_OPT_CALIBRATION(opt_calibration),
  FS_OPT_MODELS(opt_models),
  {"dp-isolated", 0, 0, G_OPTION_ARG_NONE, &opt_dp_isolated,
   "Time data-parallel collectives alone (as train --dp-isolated)", NULL},
  FS_OPT_QUIET(opt_quiet),
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* "fabricsim explain overlap TOPOLOGY WORKLOAD [OVERRIDE...]": loads the scenario and the
 * workload with its overrides, resolves it on the topology's GPUs, and prints
 * fs_report_overlap(): one step with every overlap off against one with every overlap on.
 * Returns 0, 2 on a usage error, or the exit status of the first error. */
int fs_explain_overlap(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx =
    g_option_context_new("TOPOLOGY WORKLOAD [OVERRIDE…] - exposed vs hidden communication per kind");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_ignore_unknown_options(ctx, TRUE);
  g_option_context_set_description(ctx,
    "Runs the step twice, every overlap switch off then on (parallel.overlap.dp_grads,\n"
    "tp_comm, param_gather), and prints per kind of communication the time in flight,\n"
    "the part hidden behind compute and the part exposed.  OVERRIDEs as in train.\n\n"
    "Example:\n"
    "  fabricsim explain overlap topologies/dgx-h100.yaml workloads/llama2-7b.yaml --tp=2 --pp=2 \\\n"
    "      --num-layers=8 --global-batch-size=32\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "explain overlap");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc < 3)
    return fs_cli_usage("explain overlap", "expected a TOPOLOGY and a WORKLOAD file");
  GError *error = NULL;
  g_autoptr(FsProgress) progress = fs_progress_new("explain overlap", opt_quiet);
  FsScenarioInputs in = { .models_dir = opt_models, .calibration = opt_calibration,
                          .topology = argv[1], .defines = (const char *const *)opt_defines,
                          .needs = FS_SCENARIO_NEED_NCCL | FS_SCENARIO_NEED_EFFICIENCY };
  g_autoptr(FsScenario) sc = fs_scenario_load(&in, &error);
  if (sc == NULL)
    return fs_cli_fail("explain overlap", error);
  const FsTopo *topo = fs_scenario_topo(sc);
  g_autoptr(FsWorkload) w = fs_workload_load_file(argv[2], NULL, &error);
  if (w == NULL)
    return fs_cli_fail("explain overlap", error);
  if (argc > 3 && !fs_workload_apply_overrides(w, (const char *const *)argv + 3, &error))
    return fs_cli_fail("explain overlap", error);
  guint ngpus;
  fs_topo_gpus(topo, &ngpus);
  if (!fs_workload_resolve(w, ngpus, &error))
    return fs_cli_fail("explain overlap", error);
  FsTrainOptions topt;
  fs_train_options_init(&topt);
  topt.dp_isolated = opt_dp_isolated;
  g_autoptr(GString) out = g_string_new(NULL);
  if (!fs_report_overlap(out, sc, w, &topt, &error))
    return fs_cli_fail("explain overlap", error);
  g_clear_pointer(&progress, fs_progress_free);
  fputs(out->str, stdout);
  return 0;
}
