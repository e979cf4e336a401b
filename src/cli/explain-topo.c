/* explain-topo.c — `fabricsim explain topo TOPO [GPU GPU]`: options and the
 * GPU arguments; why a pair is NV#, PIX, PXB, PHB, NODE, SYS or NET (the
 * rule, the route, the transport NCCL would pick) is report/explain-topo.h. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/explain.h"
#include "report/explain-topo.h"
#include "scenario/scenario.h"
#include "util/units.h"

static char **opt_defines = NULL;
static char *opt_models = NULL, *opt_calibration = NULL, *opt_size = NULL;
static char *opt_p2p_level = NULL;
static gboolean opt_p2p_disable = FALSE, opt_ib_disable = FALSE;

static const GOptionEntry entries[] = {
  {"size", 's', 0, G_OPTION_ARG_STRING, &opt_size,
   "Bytes of the transfer timed for each pair (default 256M)", "SIZE"},
  {"p2p-level", 0, 0, G_OPTION_ARG_STRING, &opt_p2p_level,
   "NCCL_P2P_LEVEL: LOC, NVL, PIX, PXB, PHB, SYS (default: by CPU vendor)", "LEVEL"},
  {"p2p-disable", 0, 0, G_OPTION_ARG_NONE, &opt_p2p_disable, "NCCL_P2P_DISABLE=1", NULL},
  {"ib-disable", 0, 0, G_OPTION_ARG_NONE, &opt_ib_disable, "NCCL_IB_DISABLE=1", NULL},
  FS_OPT_DEFINE(opt_defines),
  FS_OPT_CALIBRATION(opt_calibration),
  FS_OPT_MODELS(opt_models),
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* "fabricsim explain topo TOPOLOGY [GPU GPU]": with two GPUs (by name or index) explains that
 * pair's path, route and transport with a transfer of --size bytes (256 MiB by default);
 * without, explains the topology's path types as a whole. Returns 0, 2 on a usage error
 * (including two equal or unknown GPUs), or the exit status of the first error. */
int fs_explain_topo(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx =
    g_option_context_new("TOPOLOGY [GPU GPU] - why a GPU pair is NV#, PIX, PXB, PHB, NODE, SYS or NET");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "GPUs are names or indices in placement order.  Without a pair: the matrix\n"
    "(up to 16 GPUs) and one explained pair per path type that occurs.\n\n"
    "Examples:\n"
    "  fabricsim explain topo topologies/dgx-h100.yaml gpu0 gpu1\n"
    "  fabricsim explain topo topologies/pcie-gen4-8gpu.yaml\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "explain topo");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc != 2 && argc != 4)
    return fs_cli_usage("explain topo", "expected a TOPOLOGY file and optionally two GPUs");
  GError *error = NULL;
  uint64_t bytes = 256u << 20;
  if (opt_size != NULL && !fs_parse_size(opt_size, &bytes, &error))
    return fs_cli_fail("explain topo", error);
  if (bytes == 0)
    return fs_cli_usage("explain topo", "--size must be at least 1 byte");
  FsRouteOptions ropt;
  if (fs_cli_route_options("explain topo", opt_p2p_level, opt_p2p_disable, opt_ib_disable, &ropt) != 0)
    return 2;
  FsScenarioInputs in = { .models_dir = opt_models, .calibration = opt_calibration,
                          .topology = argv[1], .defines = (const char *const *)opt_defines };
  g_autoptr(FsScenario) sc = fs_scenario_load(&in, &error);
  if (sc == NULL)
    return fs_cli_fail("explain topo", error);
  const FsTopo *topo = fs_scenario_topo(sc);
  g_autoptr(GString) out = g_string_new(NULL);
  guint ng;
  const guint *gpus = fs_topo_gpus(topo, &ng);
  if (ng == 0)
    return fs_cli_usage("explain topo", "%s has no GPU", argv[1]);
  if (argc == 4) {
    int pair[2];
    for (guint k = 0; k < 2; k++)
      if ((pair[k] = fs_topo_find_gpu(topo, argv[2 + k])) < 0)
        return fs_cli_usage("explain topo", "\"%s\" is not a GPU of %s (a GPU name such as \"%s\", or an "
                            "index below %u)", argv[2 + k], fs_topo_name(topo),
                            fs_topo_node(topo, gpus[0])->name, ng);
    if (pair[0] == pair[1])
      return fs_cli_usage("explain topo", "\"%s\" and \"%s\" are the same GPU; give two different GPUs",
                          argv[2], argv[3]);
    if (!fs_report_explain_pair(out, sc, &ropt, opt_p2p_level != NULL, (guint)pair[0], (guint)pair[1],
                                bytes, &error))
      return fs_cli_fail("explain topo", error);
    fputs(out->str, stdout);
    return 0;
  }
  if (!fs_report_explain_topo(out, sc, &ropt, opt_p2p_level != NULL, bytes, &error))
    return fs_cli_fail("explain topo", error);
  fputs(out->str, stdout);
  return 0;
}
