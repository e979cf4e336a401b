/* cmd-calibrate.c — `fabricsim calibrate nccl-tests --topo TOPO LOG...`:
 * fit a topology's link figures to real nccl-tests logs, print the fit
 * error per size, and write a calibration file with a `fitted` section
 * (src/calib/nccl-fit.h; format in validation/README.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib/calibration.h"
#include "calib/nccl-fit.h"
#include "calib/nccl-log.h"
#include "cli/commands.h"
#include "report/calibrate.h"
#include "report/progress.h"
#include "scenario/nccl-simfit.h"
#include "topo/topo.h"
#include "util/strutil.h"
#include "util/units.h"

static char *opt_topo = NULL;
static char *opt_models = NULL;
static char *opt_calibration = NULL;
static char *opt_op = NULL;
static char *opt_out = NULL;
static gboolean opt_in_place = FALSE;
static gboolean opt_json = FALSE;
static double opt_base = -1;
static gint opt_ranks = 0, opt_nodes = 0;
static gboolean opt_simulate = FALSE;
static gint opt_iters = 20;
static gboolean opt_quiet = FALSE;
static char *opt_nccl_version = NULL, *opt_nccl_params = NULL;

static const GOptionEntry entries[] = {
  {"topo", 't', 0, G_OPTION_ARG_FILENAME, &opt_topo,
   "Topology the logs were measured on (required)", "FILE"},
  FS_OPT_MODELS(opt_models),
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration,
   "Apply a calibration file first; its one-rank NCCL floors give the base latency", "FILE"},
  {"op", 0, 0, G_OPTION_ARG_STRING, &opt_op,
   "Collective of logs that do not name it (all_reduce, all_gather, ...); a log that names "
   "another is an error", "OP"},
  {"ranks", 0, 0, G_OPTION_ARG_INT, &opt_ranks,
   "Rank count of logs without a device list (checked against the log where it has one)", "N"},
  {"nodes", 0, 0, G_OPTION_ARG_INT, &opt_nodes,
   "Host count of logs without a device list (checked likewise)", "N"},
  {"in-place", 0, 0, G_OPTION_ARG_NONE, &opt_in_place,
   "Fit the in-place columns (default: out-of-place)", NULL},
  {"base-latency", 0, 0, G_OPTION_ARG_DOUBLE, &opt_base,
   "NCCL base latency in us subtracted before the per-step latency (default: from "
   "--calibration, else 0)", "US"},
  {"output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_out,
   "Write the calibration file (JSON) here; '-' for stdout", "OUT.json"},
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print the calibration file instead of the table",
   NULL},
  {"simulate", 0, 0, G_OPTION_ARG_NONE, &opt_simulate,
   "Also fit the link efficiency and NCCL's latency scale through the simulator "
   "(fabricsim coll on TOPO; slow: a few simulated sweeps per iteration)", NULL},
  {"iterations", 0, 0, G_OPTION_ARG_INT, &opt_iters,
   "Most iterations of the --simulate fit (default 20)", "N"},
  FS_OPT_QUIET(opt_quiet),
  {"nccl-version", 0, 0, G_OPTION_ARG_STRING, &opt_nccl_version,
   "NCCL release of the --simulate fit (models/nccl/nccl-X.Y.yaml; default: the log's "
   "nccl-library= or \"NCCL version\" line, else models/nccl/nccl.yaml)", "X.Y"},
  {"nccl-params", 0, 0, G_OPTION_ARG_FILENAME, &opt_nccl_params,
   "NCCL parameter file of the --simulate fit (instead of --nccl-version)", "FILE"},

  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* Fits the logs (grouped by collective and rank count), through the
 * simulator too with --simulate, and prints or writes the result. */
static int run(GPtrArray *logs, const FsScenario *sc, GString *notes)
{
  const FsTopo *topo = fs_scenario_topo(sc);
  GError *error = NULL;
  g_autoptr(FsProgress) progress = fs_progress_new("calibrate", opt_quiet);
  g_autoptr(GPtrArray) fits = fs_nccl_fit_logs(logs, topo, opt_op, opt_in_place, opt_base,
                                               fs_scenario_calibration(sc), &error);
  if (fits == NULL)
    return fs_cli_fail("calibrate", error);
  for (guint i = 0; i < fits->len; i++) {
    const FsNcclFit *f = g_ptr_array_index(fits, i);
    g_autofree char *drops = fs_nccl_log_drops_text((const FsNcclLogDrop *)f->dropped->data,
                                                    f->dropped->len);
    if (drops != NULL)
      g_string_append(notes, drops);
  }
  for (guint i = 0; opt_simulate && i < fits->len; i++)
    if (!fs_nccl_fit_simulate(g_ptr_array_index(fits, i), sc, opt_topo, opt_iters, &error))
      return fs_cli_fail("calibrate", error);
  g_clear_pointer(&progress, fs_progress_free);
  /* The rows left out, once every fit has succeeded. */
  fputs(notes->str, stderr);
  if (!opt_json) {
    g_autoptr(GString) text = g_string_new(NULL);
    for (guint i = 0; i < fits->len; i++)
      fs_report_calibrate_fit(text, g_ptr_array_index(fits, i));
    fputs(text->str, stdout);
  }
  if (opt_out == NULL && !opt_json)
    return 0;
  g_autofree char *out = fs_report_calibration_file((FsNcclFit *const *)fits->pdata, fits->len,
                                                    fs_topo_name(topo));
  if (opt_json || g_strcmp0(opt_out, "-") == 0) {
    fputs(out, stdout);
    return 0;
  }
  if (!fs_write_file_atomic(opt_out, out, strlen(out), &error))
    return fs_cli_fail("calibrate", error);
  fprintf(stderr, "fabricsim calibrate: wrote %s\n", opt_out);
  return 0;
}

/* "fabricsim calibrate nccl-tests": parses the options, loads every LOG (a .csv one as a
 * reference table) and resolves its ranks, hosts and collective with the hints of --op,
 * --ranks and --nodes, loads the scenario (with NCCL's parameters for --simulate, from the
 * options or the release the first log names), then fits and writes through run(). Returns 0,
 * 2 on a usage error, or the exit status of the first error. */
int fs_cmd_calibrate(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("nccl-tests --topo TOPO LOG... - fit link figures to nccl-tests logs");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Reads nccl-tests output (text of any version, or -J JSON; a LOG ending in .csv is\n"
    "a reference table of kind nccl-tests, validation/reference/README.md, one test per\n"
    "GPU count), fits each collective's\n"
    "time per size with robust alpha-beta lines per protocol regime, derives the\n"
    "efficiency and per-step latency of the link family the collective runs over on\n"
    "TOPO, prints the fit error per size, and writes a calibration file with a\n"
    "`fitted` section (validation/README.md) that --calibration applies.\n"
    "\n"
    "Logs of every era and mangled copies are read (validation/README.md): old layouts,\n"
    "MPI-launched logs, device lines without '#', launcher prefixes, Markdown pastes,\n"
    "wrapped rows, NCCL_DEBUG=INFO lines.  Ranks and hosts come from the device list,\n"
    "NCCL's INFO lines and nThread x nGpus, checked against each other and against the\n"
    "rows' busbw/algbw; --ranks/--nodes give them when the log lacks them, --op names\n"
    "the collective (checked where the log names one).  Rows left out (cut by other\n"
    "output, negative size, time 0) are listed on stderr with their file:line.\n"
    "\n"
    "Examples:\n"
    "  fabricsim calibrate nccl-tests --topo topologies/dgx-h100.yaml \\\n"
    "      validation/reference/h100_dgx_allreduce_8gpu_g8_vpbench.csv   # or your own log\n"
    "  fabricsim calibrate nccl-tests --topo topologies/dgx-h100.yaml --simulate \\\n"
    "      validation/reference/h100_hgx_allreduce_8gpu_g8_nccltests290.csv -o h100-fit.json\n"
    "  fabricsim calibrate nccl-tests --topo topologies/dgx-h100.yaml --op all_reduce \\\n"
    "      --calibration validation/results/h100-2026-11-23.json \\\n"
    "      validation/reference/h100_hgx_allreduce_8gpu_g8_nccltests290.csv -o fitted.json\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "calibrate");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc < 2 || strcmp(argv[1], "nccl-tests") != 0)
    return fs_cli_usage("calibrate", "expected the kind of input first: nccl-tests");
  if (argc < 3)
    return fs_cli_usage("calibrate", "expected at least one nccl-tests LOG");
  if (opt_topo == NULL)
    return fs_cli_usage("calibrate", "--topo TOPO is required");
  if (opt_ranks < 0 || opt_ranks > (1 << 24) || opt_nodes < 0 || opt_nodes > (1 << 24))
    return fs_cli_usage("calibrate", "--ranks and --nodes take a count from 1 to 16777216");
  if (opt_nccl_version != NULL && opt_nccl_params != NULL)
    return fs_cli_usage("calibrate", "give --nccl-version or --nccl-params, not both");
  if (opt_op != NULL) {
    g_autofree char *c = fs_nccl_log_collective_from_binary(opt_op);
    if (c == NULL)
      return fs_cli_usage("calibrate", "unknown collective \"%s\" for --op", opt_op);
    g_free(opt_op);
    opt_op = g_steal_pointer(&c);
  }
  GError *error = NULL;
  g_autoptr(GPtrArray) logs = g_ptr_array_new_with_free_func((GDestroyNotify)fs_nccl_log_free);
  g_autoptr(GString) notes = g_string_new(NULL);
  for (int i = 2; i < argc; i++) {
    FsNcclLog *log = g_str_has_suffix(argv[i], ".csv") ? fs_nccl_log_load_table(argv[i], &error)
                                                      : fs_nccl_log_load(argv[i], &error);
    FsNcclLogHints hints = {opt_op, (guint)opt_ranks, (guint)opt_nodes};
    if (log == NULL)
      return fs_cli_fail("calibrate", error);
    g_ptr_array_add(logs, log);
    if (!fs_nccl_log_resolve(log, &hints, &error))
      return fs_cli_fail("calibrate", error);
    g_autofree char *said = fs_nccl_log_notes_text(log);
    if (said != NULL)
      g_string_append(notes, said);
  }
  /* NCCL's constants of the --simulate fit: the options', else the release
   * the first log names (one without a file: said, and the default). */
  g_autoptr(GString) warn = g_string_new(NULL);
  g_autofree char *version = opt_simulate && !opt_nccl_params && !opt_nccl_version
                               ? fs_nccl_logs_release(logs, warn) : NULL;
  if (warn->len > 0)
    fprintf(stderr, "fabricsim calibrate: warning: %s", warn->str);
  FsScenarioInputs in = { .models_dir = opt_models, .calibration = opt_calibration,
                          .topology = opt_topo, .nccl_params = opt_nccl_params,
                          .nccl_version = opt_nccl_version ? opt_nccl_version : version,
                          .needs = opt_simulate ? FS_SCENARIO_NEED_NCCL : 0 };
  g_autoptr(FsScenario) sc = fs_scenario_load(&in, &error);
  if (sc == NULL)
    return fs_cli_fail("calibrate", error);
  return run(logs, sc, notes);
}
