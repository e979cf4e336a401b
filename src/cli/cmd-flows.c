/* cmd-flows.c — `fabricsim flows TOPO FLOWS`: replay a list of transfers
 * (CSV or JSON, format in tests/data/flows/README.md) on a topology and
 * print, per transfer, when it started and finished, its mean rate, its
 * transport and the channel that limited it. */
#include <stdio.h>

#include "cli/commands.h"
#include "report/flows.h"
#include "report/progress.h"
#include "scenario/scenario.h"

#define TRACE_BINS 100

static char **opt_defines = NULL;
static char *opt_calibration = NULL;
static char *opt_models = NULL;
static gboolean opt_json = FALSE;
static gboolean opt_csv = FALSE;
static char *opt_trace = NULL;
static char *opt_model = NULL;
static char *opt_p2p_level = NULL;
static gboolean opt_p2p_disable = FALSE;
static gboolean opt_ib_disable = FALSE;
static gboolean opt_quiet = FALSE;

static const GOptionEntry entries[] = {
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON", NULL},
  {"csv", 0, 0, G_OPTION_ARG_NONE, &opt_csv, "Print CSV (times in ps, rates in B/s)", NULL},
  {"trace", 0, 0, G_OPTION_ARG_FILENAME, &opt_trace,
   "Write a Chrome trace-event JSON of the transfers and link utilisation (opens in Perfetto)",
   "FILE"},
  {"model", 0, 0, G_OPTION_ARG_STRING, &opt_model,
   "Flow model: maxmin (default, bandwidth shared max-min fairly) or analytic (alpha-beta, "
   "no sharing)", "MODEL"},
  {"p2p-level", 0, 0, G_OPTION_ARG_STRING, &opt_p2p_level,
   "Highest path type for PCIe peer-to-peer (NCCL_P2P_LEVEL)", "LEVEL"},
  {"p2p-disable", 0, 0, G_OPTION_ARG_NONE, &opt_p2p_disable, "Stage GPU-to-GPU through host "
   "memory (NCCL_P2P_DISABLE=1)", NULL},
  {"ib-disable", 0, 0, G_OPTION_ARG_NONE, &opt_ib_disable, "No network between hosts "
   "(NCCL_IB_DISABLE=1)", NULL},
  FS_OPT_DEFINE(opt_defines),
  FS_OPT_MODELS(opt_models),
  FS_OPT_CALIBRATION(opt_calibration),
  FS_OPT_QUIET(opt_quiet),
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* "fabricsim flows TOPO FLOWS": loads the scenario and the flow list, replays every transfer
 * at once on a fresh world with the chosen flow model and routing options, writes the
 * --trace file when asked, and prints the report as text, JSON or CSV on stdout. Returns 0,
 * 2 on a usage error, or the exit status of the first error. */
int fs_cmd_flows(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx =
    g_option_context_new("TOPO FLOWS - replay a list of transfers on a topology");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "FLOWS is CSV (header id,start,src,dst,bytes[,deps]) or JSON ({\"flows\": [...]});\n"
    "src and dst name GPUs, or CPUs for host memory; start is a time (\"0 us\");\n"
    "bytes a size (K/M/G are powers of 1024); deps lists ids (separated by spaces\n"
    "or ';') that must finish first.  Every transfer is routed the way NCCL\n"
    "would (NVLink, PCIe P2P, host memory, network) and all run concurrently.\n"
    "\n"
    "Example:\n"
    "  fabricsim flows topologies/dgx-h100.yaml tests/data/flows/y_dgx_h100_basic.csv\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "flows");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc != 3)
    return fs_cli_usage("flows", "expected a topology FILE and a FLOWS file");
  if (opt_json && opt_csv)
    return fs_cli_usage("flows", "--json and --csv are exclusive");
  FsNetModel model = FS_NET_MAXMIN;
  if (opt_model != NULL && !fs_net_model_from_name(opt_model, &model))
    return fs_cli_usage("flows", "unknown --model \"%s\"; expected maxmin or analytic", opt_model);
  FsRouteOptions ropt;
  if (fs_cli_route_options("flows", opt_p2p_level, opt_p2p_disable, opt_ib_disable, &ropt) != 0)
    return 2;
  GError *error = NULL;
  FsScenarioInputs in = { .models_dir = opt_models, .calibration = opt_calibration,
                          .topology = argv[1], .defines = (const char *const *)opt_defines };
  g_autoptr(FsScenario) sc = fs_scenario_load(&in, &error);
  if (sc == NULL)
    return fs_cli_fail("flows", error);
  const FsTopo *t = fs_scenario_topo(sc);
  g_autoptr(FsFlowList) list = fs_flow_list_load(argv[2], t, &error);
  if (list == NULL)
    return fs_cli_fail("flows", error);
  g_autoptr(FsScenarioWorld) w = fs_scenario_world_new(sc, NULL, model, &ropt);
  g_autoptr(FsLinkSampler) sampler = opt_trace ? fs_link_sampler_new(w->net, TRACE_BINS) : NULL;
  g_autoptr(FsProgress) progress = fs_progress_new("flows", opt_quiet);
  if (!fs_flow_list_replay_on(list, w->router, &error))
    return fs_cli_fail("flows", error);
  g_clear_pointer(&progress, fs_progress_free);
  if (opt_trace != NULL &&
      !fs_report_flows_trace(opt_trace, t, w->net, w->router, sampler, list, argv[2], &error))
    return fs_cli_fail("flows", error);
  g_autoptr(GString) out = g_string_new(NULL);
  fs_report_flows(out, opt_json ? FS_REPORT_JSON : opt_csv ? FS_REPORT_CSV : FS_REPORT_TEXT, t, model,
                  list);
  fputs(out->str, stdout);
  return 0;
}
