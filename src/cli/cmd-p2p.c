/* cmd-p2p.c — `fabricsim p2p TOPO`: the matrices of CUDA's
 * p2pBandwidthLatencyTest and nvbandwidth, by simulating the transfers on
 * the flow network: unidirectional and bidirectional bandwidth and latency
 * per GPU pair, the transport used, and host↔device bandwidth per GPU
 * (alone, and all GPUs at once).  The measuring is src/net/p2p.c; this
 * file parses options and prints. */
#include <stdio.h>

#include "cli/commands.h"
#include "report/p2p.h"
#include "report/progress.h"
#include "scenario/scenario.h"
#include "util/units.h"

#define MAX_GPUS 256

static char **opt_defines = NULL;
static char *opt_calibration = NULL;
static char *opt_models = NULL;
static gboolean opt_json = FALSE, opt_csv = FALSE;
static char *opt_size = NULL;
static char *opt_model = NULL;
static char *opt_p2p_level = NULL;
static gboolean opt_p2p_disable = FALSE;
static gboolean opt_ib_disable = FALSE;
static gint opt_gpus = 0;
static gboolean opt_quiet = FALSE;

static const GOptionEntry entries[] = {
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON instead of text", NULL},
  {"csv", 0, 0, G_OPTION_ARG_NONE, &opt_csv,
   "Print CSV instead of text: one line per ordered GPU pair", NULL},
  {"size", 's', 0, G_OPTION_ARG_STRING, &opt_size,
   "Bytes per bandwidth transfer (default 256M; K/M/G are powers of 1024)", "SIZE"},
  {"model", 0, 0, G_OPTION_ARG_STRING, &opt_model, "Flow model: maxmin (default) or analytic",
   "MODEL"},
  {"p2p-level", 0, 0, G_OPTION_ARG_STRING, &opt_p2p_level,
   "Highest path type for PCIe peer-to-peer, as NCCL_P2P_LEVEL (LOC, NVL, PIX, PXB, PHB, SYS)",
   "LEVEL"},
  {"p2p-disable", 0, 0, G_OPTION_ARG_NONE, &opt_p2p_disable,
   "No peer-to-peer: stage through host memory (NCCL_P2P_DISABLE=1)", NULL},
  {"ib-disable", 0, 0, G_OPTION_ARG_NONE, &opt_ib_disable,
   "No network between hosts (NCCL_IB_DISABLE=1)", NULL},
  {"gpus", 'g', 0, G_OPTION_ARG_INT, &opt_gpus,
   "Measure only the first N GPUs (placement order)", "N"},
  FS_OPT_DEFINE(opt_defines),
  FS_OPT_MODELS(opt_models),
  FS_OPT_CALIBRATION(opt_calibration),
  FS_OPT_QUIET(opt_quiet),
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* "fabricsim p2p TOPO": loads the scenario, measures the p2p and host <-> device matrices of
 * the first --gpus GPUs (at most MAX_GPUS) with transfers of --size bytes (256 MiB by
 * default), and prints them as text, JSON or CSV on stdout. Returns 0, 2 on a usage error, or
 * the exit status of the first error. */
int fs_cmd_p2p(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx =
    g_option_context_new("TOPO - GPU-to-GPU and host-device bandwidth and latency matrices");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Simulates what CUDA's p2pBandwidthLatencyTest and nvbandwidth measure:\n"
    "for every ordered GPU pair a transfer alone (unidirectional), both\n"
    "directions at once (bidirectional, the sum), and a 4-byte transfer\n"
    "(latency: the path's latency); per GPU, host-to-device and\n"
    "device-to-host from its nearest CPU, alone and all GPUs at once.\n"
    "Bandwidths are GB/s (10^9 bytes/s) over the time to the last byte.\n"
    "\n"
    "Examples:\n"
    "  fabricsim p2p topologies/dgx-h100.yaml\n"
    "  fabricsim p2p topologies/pcie-gen4-8gpu.yaml --p2p-disable --json\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "p2p");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc != 2)
    return fs_cli_usage("p2p", "expected one topology FILE");
  if (opt_json && opt_csv)
    return fs_cli_usage("p2p", "--json and --csv are exclusive");
  GError *error = NULL;
  uint64_t bytes = 256u << 20;
  if (opt_size != NULL && !fs_parse_size(opt_size, &bytes, &error))
    return fs_cli_fail("p2p", error);
  if (bytes == 0)
    return fs_cli_usage("p2p", "--size must be at least 1 byte");
  FsNetModel model = FS_NET_MAXMIN;
  if (opt_model != NULL && !fs_net_model_from_name(opt_model, &model))
    return fs_cli_usage("p2p", "unknown --model \"%s\"; expected maxmin or analytic", opt_model);
  FsRouteOptions ropt;
  if (fs_cli_route_options("p2p", opt_p2p_level, opt_p2p_disable, opt_ib_disable, &ropt) != 0)
    return 2;

  FsScenarioInputs in = { .models_dir = opt_models, .calibration = opt_calibration,
                          .topology = argv[1], .defines = (const char *const *)opt_defines };
  g_autoptr(FsScenario) sc = fs_scenario_load(&in, &error);
  if (sc == NULL)
    return fs_cli_fail("p2p", error);
  const FsTopo *t = fs_scenario_topo(sc);
  guint ng;
  fs_topo_gpus(t, &ng);
  if (opt_gpus < 0)
    return fs_cli_usage("p2p", "--gpus must be positive");
  if (opt_gpus > 0)
    ng = MIN(ng, (guint)opt_gpus);
  if (ng > MAX_GPUS)
    return fs_cli_usage("p2p", "%u GPUs: the matrices would have %u entries; pass --gpus N "
                        "(at most %d) to measure the first N", ng, ng * ng, MAX_GPUS);
  if (ng == 0)
    return fs_cli_usage("p2p", "the topology has no GPU");

  g_autoptr(FsProgress) progress = fs_progress_new("p2p", opt_quiet);
  g_autoptr(FsScenarioWorld) w = fs_scenario_world_new(sc, NULL, model, &ropt);
  g_autoptr(FsP2pResult) res = fs_p2p_measure_on(w->router, bytes, ng, &error);
  if (res == NULL)
    return fs_cli_fail("p2p", error);
  g_clear_pointer(&progress, fs_progress_free);
  g_autoptr(GString) out = g_string_new(NULL);
  fs_report_p2p(out, opt_json ? FS_REPORT_JSON : opt_csv ? FS_REPORT_CSV : FS_REPORT_TEXT, t, model,
                bytes, ng, res);
  fputs(out->str, stdout);
  return 0;
}
