/* cmd-train.c — `fabricsim train TOPO WORKLOAD [overrides…]`: simulate one
 * training step and report step time, throughput, MFU, where the time
 * went per pipeline stage, the busiest links, memory per GPU and energy.
 * JSON schema: workloads/README.md ("train --json"). */
#include <stdio.h>

#include "cli/commands.h"
#include "report/progress.h"
#include "report/train.h"
#include "scenario/scenario.h"
#include "workload/chakra/chakra.h"
#include "util/units.h"
#include "workload/schedule.h"
#include "workload/spec.h"

#define TRACE_BINS 100  /* utilisation samples per link, at least (link-sampler.h) */

static char **opt_defines = NULL;
static char *opt_models = NULL;
static char *opt_calibration = NULL;
static gboolean opt_json = FALSE, opt_csv = FALSE;
static gboolean opt_strict = FALSE;
static char *opt_trace = NULL;
static char *opt_model = NULL;
static gboolean opt_list = FALSE;
static gboolean opt_dp_isolated = FALSE;
static char *opt_coll_classes = NULL, *opt_exec = NULL;
static char *opt_chakra_out = NULL;
static gboolean opt_quiet = FALSE;

static const GOptionEntry entries[] = {
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON (schema in workloads/README.md)", NULL},
  {"csv", 0, 0, G_OPTION_ARG_NONE, &opt_csv,
   "Print CSV: one line per rank class (pipeline stage) with its time breakdown in ms", NULL},
  {"trace", 0, 0, G_OPTION_ARG_FILENAME, &opt_trace,
   "Write a Chrome trace-event JSON of the step (opens in Perfetto)", "FILE"},
  {"strict", 0, 0, G_OPTION_ARG_NONE, &opt_strict,
   "Fail (exit 2) when the job does not fit in GPU memory", NULL},
  {"model", 0, 0, G_OPTION_ARG_STRING, &opt_model,
   "Flow model: maxmin (default) or analytic", "MODEL"},
  FS_OPT_DEFINE(opt_defines),
  FS_OPT_CALIBRATION(opt_calibration),
  FS_OPT_MODELS(opt_models),
  {"dp-isolated", 0, 0, G_OPTION_ARG_NONE, &opt_dp_isolated,
   "Time data-parallel collectives alone (no contention; faster on large jobs)", NULL},
  {"coll-classes", 0, 0, G_OPTION_ARG_STRING, &opt_coll_classes,
   "Collectives timed alone on congruent GPU groups share one measurement: auto (where exact, "
   "the default), on (also under max-min with ECMP: approximate), off", "MODE"},
  {"exec", 0, 0, G_OPTION_ARG_STRING, &opt_exec,
   "How collectives run: steps, streams or auto (as coll --exec). Default: auto, with the "
   "data-parallel collectives on the shared network as streams wherever trusted", "MODEL"},
  {"chakra-out", 0, 0, G_OPTION_ARG_FILENAME, &opt_chakra_out,
   "Write the step as MLCommons Chakra traces DIR/step.RANK.et (as ASTRA-sim reads them; "
   "fabricsim replay TOPO --chakra DIR runs them again; collectives run step by step)", "DIR"},
  {"list-schedules", 0, 0, G_OPTION_ARG_NONE, &opt_list, "List the pipeline schedules", NULL},
  FS_OPT_QUIET(opt_quiet),
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* "fabricsim train TOPO WORKLOAD [OVERRIDE...]": loads the scenario and the workload with its
 * overrides, resolves it on the topology's GPUs, simulates one training step, estimates the
 * memory per GPU (a warning when it does not fit, a usage error with --strict), writes the
 * --trace and --chakra-out files when asked, and prints the report as text, JSON or CSV.
 * --list prints the pipeline schedules instead. Returns 0, 2 on a usage error, or the exit
 * status of the first error. */
int fs_cmd_train(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx =
    g_option_context_new("TOPO WORKLOAD [OVERRIDE…] - simulate one training step");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_ignore_unknown_options(ctx, TRUE);
  g_option_context_set_description(ctx,
    "OVERRIDEs use Megatron-LM's flag names (--tensor-model-parallel-size=8, --pp 4,\n"
    "--sequence-parallel, --decoder-first-pipeline-num-layers=7, …) or YAML paths (parallel.tp=8).\n"
    "Overlapped TP, CP, DP and EP communication takes SMs and HBM bandwidth from the compute:\n"
    "--overlap-cost=modelled (default), exposed (as if not overlapped) or free. FP8 casts follow\n"
    "--fp8-recipe=delayed|tensorwise. The host issues the kernels: --framework-launch=eager\n"
    "(default: each launch costs the measured eager per-op host time), graphs (one CUDA graph\n"
    "per layer pass) or off (workloads/README.md). The \"validated\" line is the raw step\n"
    "times the one factor fitted on published steps (models/calibration/training-step.yaml).\n\nExample:\n"
    "  fabricsim train topologies/dgx-h100.yaml workloads/llama2-7b.yaml\n"
    "  fabricsim train topologies/dgx-h100-ib-ndr.yaml workloads/gpt3-175b.yaml --tp=8 --pp=4 \\\n"
    "      --trace step.json\n"
    "  fabricsim train topologies/dgx-h100.yaml workloads/gpt3-13b.yaml --tp=1 --pp=8 \\\n"
    "      --chakra-out step/\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "train");
  if (done != FS_CLI_GO_ON)
    return done;
  if (opt_list) {
    for (guint i = 0; fs_schedules[i] != NULL; i++)
      printf("  %-12s %s\n", fs_schedules[i]->name, fs_schedules[i]->summary);
    return 0;
  }
  if (argc < 3)
    return fs_cli_usage("train", "expected a TOPOLOGY and a WORKLOAD file");
  if (opt_json && opt_csv)
    return fs_cli_usage("train", "--json and --csv are exclusive");
  GError *error = NULL;
  /* From the start: a run over a second, loading included, shows the line. */
  g_autoptr(FsProgress) progress = fs_progress_new("train", opt_quiet);
  FsTrainOptions topt;
  fs_train_options_init(&topt);
  topt.dp_isolated = opt_dp_isolated;
  if (opt_coll_classes != NULL && !fs_coll_classes_from_name(opt_coll_classes, &topt.coll_classes))
    return fs_cli_usage("train", "unknown --coll-classes \"%s\" (auto, on or off)", opt_coll_classes);
  if (opt_exec != NULL && !fs_coll_exec_from_name(opt_exec, &topt.exec))
    return fs_cli_usage("train", "--exec takes steps, streams or auto");
  /* --chakra-out: step by step, as `fabricsim replay` runs the traces. */
  if (opt_exec == NULL && opt_chakra_out != NULL)
    topt.exec = FS_COLL_EXEC_STEPS;
  topt.dp_streams = opt_chakra_out == NULL;
  if (opt_model != NULL && !fs_net_model_from_name(opt_model, &topt.net_model))
    return fs_cli_usage("train", "unknown flow model \"%s\" (maxmin or analytic)", opt_model);
  FsScenarioInputs in = { .models_dir = opt_models, .calibration = opt_calibration,
                          .topology = argv[1], .defines = (const char *const *)opt_defines,
                          .needs = FS_SCENARIO_NEED_NCCL | FS_SCENARIO_NEED_EFFICIENCY };
  g_autoptr(FsScenario) sc = fs_scenario_load(&in, &error);
  if (sc == NULL)
    return fs_cli_fail("train", error);
  const FsTopo *topo = fs_scenario_topo(sc);
  g_autoptr(FsWorkload) w = fs_workload_load_file(argv[2], NULL, &error);
  if (w == NULL)
    return fs_cli_fail("train", error);
  if (argc > 3 && !fs_workload_apply_overrides(w, (const char *const *)argv + 3, &error))
    return fs_cli_fail("train", error);
  guint ngpus;
  fs_topo_gpus(topo, &ngpus);
  if (!fs_workload_resolve(w, ngpus, &error))
    return fs_cli_fail("train", error);
  g_autoptr(FsTrain) t = fs_scenario_train_new(sc, NULL, NULL, w, &topt, &error);
  if (t == NULL)
    return fs_cli_fail("train", error);
  g_autoptr(FsLinkSampler) sampler = opt_trace ? fs_link_sampler_new(fs_train_net(t), TRACE_BINS) : NULL;
  if (!fs_train_run(t, &error))
    return fs_cli_fail("train", error);
  g_clear_pointer(&progress, fs_progress_free);
  const FsTrainResult *r = fs_train_result(t);
  if (sampler != NULL)
    fs_link_sampler_finish(sampler, r->step_time);
  FsMemoryBreakdown mem;
  if (!fs_workload_memory_estimate(w, r->gpu, &mem, &error))
    return fs_cli_fail("train", error);
  FsLinkUse links[FS_REPORT_TRAIN_LINKS];
  guint nl = fs_report_busiest_links(fs_train_net(t), r->step_time, links, FS_REPORT_TRAIN_LINKS);
  if (!mem.fits) {
    g_autofree char *tot = fs_format_size(mem.total);
    g_autofree char *cap = fs_format_size(mem.capacity);
    if (opt_strict)
      return fs_cli_usage("train", "%s needs %s per GPU on stage %u but a %s has %s (--strict)",
                          w->name, tot, mem.stage, r->gpu_name, cap);
    fprintf(stderr, "fabricsim train: warning: %s needs %s per GPU on stage %u but a %s has %s\n",
            w->name, tot, mem.stage, r->gpu_name, cap);
  }
  if (opt_trace != NULL && !fs_report_train_trace(opt_trace, t, w, topo, sampler, &error))
    return fs_cli_fail("train", error);
  if (opt_chakra_out != NULL &&
      !fs_chakra_write(fs_train_graph(t), topo, opt_chakra_out, "step", &error))
    return fs_cli_fail("train", error);
  g_autoptr(GString) out = g_string_new(NULL);
  if (opt_csv)
    fs_report_train_csv(out, t, fs_scenario_step_factor(sc));
  else if (opt_json)
    fs_report_train_json(out, t, w, topo, &mem, links, nl, fs_scenario_step_factor(sc));
  else
    fs_report_train_text(out, t, w, topo, &mem, links, nl, fs_scenario_step_factor(sc));
  fputs(out->str, stdout);
  return 0;
}
