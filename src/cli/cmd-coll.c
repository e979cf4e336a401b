/* cmd-coll.c — `fabricsim coll TOPO`: nccl-tests on the simulator.  Loads
 * a topology, builds a communicator over its GPUs, and for each size of
 * the sweep lets the tuner (or the user) pick algorithm, protocol and
 * channels, runs the collective on the flow network, and prints the row
 * the way nccl-tests does (or JSON).  Flags follow nccl-tests: -b -e -f -i
 * -g -t -G -d -o -r (-g/-t/-G as nccl-tests launches: coll/launch.h), plus --algo/--proto/--channels and NCCL_ALGO/NCCL_PROTO;
 * -o all runs every collective, one nccl-tests block each (--redop all is
 * every reduction op). */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "report/coll.h"
#include "report/progress.h"
#include "scenario/coll-test.h"
#include "util/strutil.h"

static char *opt_op = NULL, *opt_min = NULL, *opt_max = NULL, *opt_step = NULL;
static gint64 opt_factor = 0;
static char *opt_gpus = NULL, *opt_ngpus = NULL, *opt_dtype = NULL, *opt_redop = NULL;
static gint opt_root = 0;
static char *opt_algo = NULL, *opt_proto = NULL;
static gint opt_channels = 0;
static gboolean opt_json = FALSE, opt_csv = FALSE, opt_list = FALSE, opt_explain = FALSE;
static gboolean opt_exact = FALSE;
static char *opt_exec = NULL;
static char *opt_trace = NULL, *opt_output_file = NULL;
static char *opt_calibration = NULL;
static char *opt_models = NULL, *opt_params = NULL, *opt_nccl_version = NULL;
static char **opt_defines = NULL;
static gint opt_threads = 0, opt_graph = 0, opt_nprocs = 0;
static gint opt_iters = 20, opt_warmup = 1, opt_check = 0;
static gboolean opt_quiet = FALSE;

static const GOptionEntry entries[] = {
  {"op", 'o', 0, G_OPTION_ARG_STRING, &opt_op,
   "Collective (all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv, "
   "gather, scatter, hypercube, barrier), or 'all' for every one of them in that order; a "
   "reduction op name (sum, prod, max, min, avg) selects the redop of all_reduce as in nccl-tests", "OP"},
  {"redop", 0, 0, G_OPTION_ARG_STRING, &opt_redop, "Reduction op: sum, prod, max, min, avg, all", "OP"},
  {"minbytes", 'b', 0, G_OPTION_ARG_STRING, &opt_min, "Smallest size (default 32M; K/M/G = 1024^n)", "SIZE"},
  {"maxbytes", 'e', 0, G_OPTION_ARG_STRING, &opt_max, "Largest size (default 32M)", "SIZE"},
  {"stepfactor", 'f', 0, G_OPTION_ARG_INT64, &opt_factor, "Multiply the size by N each step", "N"},
  {"stepbytes", 'i', 0, G_OPTION_ARG_STRING, &opt_step, "Add SIZE each step (default 1M)", "SIZE"},
  {"ngpus", 'g', 0, G_OPTION_ARG_STRING, &opt_ngpus,
   "GPUs per thread, as nccl-tests: one thread launches N GPUs' kernels in turn each iteration "
   "(ranks = --nprocs x -t x -g; default: one process per GPU, -g 1, on all GPUs)", "N"},
  {"nthreads", 't', 0, G_OPTION_ARG_INT, &opt_threads, "Threads per process, as nccl-tests (default 1)", "N"},
  {"cudagraph", 'G', 0, G_OPTION_ARG_INT, &opt_graph,
   "Capture N iterations in a CUDA graph, as nccl-tests (one launch per GPU per N iterations)", "N"},
  {"nprocs", 0, 0, G_OPTION_ARG_INT, &opt_nprocs,
   "Processes, as mpirun -np (default: 1 with -g or -t, else one per GPU)", "N"},
  {"gpus", 0, 0, G_OPTION_ARG_STRING, &opt_gpus,
   "GPUs to use: names or node indices, comma-separated (split into processes of -t x -g)", "LIST"},
  {"datatype", 'd', 0, G_OPTION_ARG_STRING, &opt_dtype,
   "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2, or all (default float)", "TYPE"},
  {"root", 'r', 0, G_OPTION_ARG_INT, &opt_root, "Root rank of rooted collectives (default 0)", "RANK"},
  {"algo", 0, 0, G_OPTION_ARG_STRING, &opt_algo, "Force an algorithm (see --list)", "NAME"},
  {"proto", 0, 0, G_OPTION_ARG_STRING, &opt_proto, "Force a protocol: LL, LL128, Simple", "NAME"},
  {"channels", 0, 0, G_OPTION_ARG_INT, &opt_channels, "Force the channel count (1-64)", "N"},
  {"iters", 'n', 0, G_OPTION_ARG_INT, &opt_iters, "Iterations (printed; a simulation needs one)", "N"},
  {"warmup_iters", 'w', 0, G_OPTION_ARG_INT, &opt_warmup, "Warmup iterations (printed only)", "N"},
  {"check", 'c', 0, G_OPTION_ARG_INT, &opt_check, "Accepted for nccl-tests compatibility; no data is checked", "N"},
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON instead of the nccl-tests table", NULL},
  {"csv", 0, 0, G_OPTION_ARG_NONE, &opt_csv, "Print CSV instead of the nccl-tests table", NULL},
  {"trace", 0, 0, G_OPTION_ARG_FILENAME, &opt_trace,
   "Write a Chrome trace-event JSON of the sweep's sizes run back to back, each tuned as in the "
   "table (NCCL_ALGO, NCCL_PROTO, --algo, --proto, --channels)", "FILE"},
  {"output_file", 'J', 0, G_OPTION_ARG_FILENAME, &opt_output_file,
   "Also write the JSON file nccl-tests' own -J writes (one collective; atomically; '-': to stdout "
   "instead of the table)", "FILE"},
  {"list", 0, 0, G_OPTION_ARG_NONE, &opt_list, "List the algorithms and protocols and exit", NULL},
  {"exact", 0, 0, G_OPTION_ARG_NONE, &opt_exact,
   "Simulate every transfer: no channel folding, rails or step extrapolation (slower; most "
   "rows identical, the shortcuts' measured errors in README.md, \"Speed\")", NULL},
  {"exec", 0, 0, G_OPTION_ARG_STRING, &opt_exec,
   "How collectives run: steps (the step executor), streams (one flow per connection, plus the "
   "pipeline's fill and latencies; src/collrun/streams.h) or auto (the default: streams for deep "
   "pipelines of the algorithms it models closely and rings of whole hosts; README.md)", "MODEL"},
  {"explain", 0, 0, G_OPTION_ARG_NONE, &opt_explain,
   "After the table, the cost model's arithmetic for each size (as # lines)", NULL},
  {"nccl-params", 0, 0, G_OPTION_ARG_FILENAME, &opt_params,
   "NCCL constants file (default models/nccl/nccl.yaml)", "FILE"},
  {"nccl-version", 0, 0, G_OPTION_ARG_STRING, &opt_nccl_version,
   "NCCL release whose constants to use (models/nccl/nccl-X.Y.yaml: 2.18 ... 2.30)", "X.Y"},
  FS_OPT_MODELS(opt_models),
  FS_OPT_DEFINE(opt_defines),
  FS_OPT_CALIBRATION(opt_calibration),
  FS_OPT_QUIET(opt_quiet),
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* Runs the sweep and prints it (text, --json or --csv), and the trace. */
static int run(const char *topo_path)
{
  GError *error = NULL;
  FsCollSelection sel;
  if (!fs_coll_selection_parse(&sel, opt_op, opt_redop, opt_dtype, &error))
    return fs_cli_fail("coll", error);
  FsScenarioInputs in = { .models_dir = opt_models, .calibration = opt_calibration,
                          .nccl_params = opt_params, .nccl_version = opt_nccl_version,
                          .topology = topo_path,
                          .defines = (const char *const *)opt_defines, .needs = FS_SCENARIO_NEED_NCCL,
                          .algo = opt_algo, .proto = opt_proto, .channels = opt_channels };
  FsCollSweep sw = {0};
  if (!fs_coll_sizes_parse(&sw, opt_min, opt_max, opt_factor, opt_step, &error))
    return fs_cli_fail("coll", error);
  if (opt_output_file != NULL && strcmp(opt_output_file, "-") == 0 && (opt_json || opt_csv))
    return fs_cli_usage("coll", "-J - writes nccl-tests' JSON to stdout; it takes no --json or --csv");
  if (opt_output_file != NULL && sel.n_ops > 1)
    return fs_cli_usage("coll", "-J writes one collective's file (nccl-tests writes one per "
                        "program); give -o with one collective");
  g_autoptr(FsScenario) sc = fs_scenario_load(&in, &error);
  if (sc == NULL)
    return fs_cli_fail("coll", error);
  g_autofree char *ranks = NULL;
  if (!fs_coll_launch_from_flags(opt_ngpus, opt_threads, opt_graph, opt_nprocs, opt_gpus != NULL,
                                 &sw.launch, &ranks, &error))
    return fs_cli_fail("coll", error);
  sw.root = (guint)opt_root;
  sw.alone.exact = opt_exact;
  sw.alone.exec = FS_COLL_EXEC_AUTO;
  if (opt_exec != NULL && !fs_coll_exec_from_name(opt_exec, &sw.alone.exec))
    return fs_cli_usage("coll", "--exec takes steps, streams or auto");
  g_autoptr(FsProgress) progress = fs_progress_new("coll", opt_quiet);
  g_autoptr(FsCollTest) r = fs_coll_test_new(sc, &sel, &sw, opt_gpus ? opt_gpus : ranks, &error);
  if (r == NULL)
    return fs_cli_fail("coll", error);
  if (opt_trace != NULL && !fs_report_coll_trace(opt_trace, sc, r, &error))
    return fs_cli_fail("coll", error);
  g_clear_pointer(&progress, fs_progress_free);
  g_autoptr(GString) out = g_string_new(NULL);
  FsCollTextOptions topt = { opt_warmup, opt_iters, opt_check };
  if (opt_output_file != NULL) {
    fs_report_coll_ncclt_json(out, sc, r, &topt, opt_output_file);
    if (!fs_write_file_atomic(opt_output_file, out->str, out->len, &error))
      return fs_cli_fail("coll", error);
    if (strcmp(opt_output_file, "-") == 0)
      return 0;   /* -J - : the file on stdout, in place of the table */
    g_string_truncate(out, 0);
  }
  if (opt_csv)
    fs_report_coll_csv(out, r);
  else if (opt_json)
    fs_report_coll_json(out, sc, r);
  else if (!fs_report_coll_text(out, sc, r, &topt, opt_explain, &error))
    return fs_cli_fail("coll", error);
  fputs(out->str, stdout);
  return 0;
}

int fs_cmd_coll(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx = g_option_context_new("TOPOLOGY - nccl-tests on the simulator");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Runs a sweep of one collective (or of each, -o all) on the topology's GPUs and\n"
    "prints nccl-tests' table (size, count, type, redop, root, time, algbw, busbw), a\n"
    "note of the algorithm/protocol/channels that ran, and the average bus bandwidth;\n"
    "-o all prints one such block per collective, as nccl-tests' programs would.  The\n"
    "tuner follows NCCL's cost model (models/nccl/nccl.yaml); NCCL_ALGO and\n"
    "NCCL_PROTO restrict it as in NCCL (\"Ring,Tree\", \"^NVLS\", or per collective as\n"
    "in NCCL 2.24+: \"ring;allreduce:tree,ring;allgather:^nvls\"); CollNet (SHARP)\n"
    "is considered only with NCCL_COLLNET_ENABLE=1 or --algo collnet_direct|collnet_chain.\n"
    "NCCL_CROSS_NIC and NCCL_PXN_DISABLE choose each ring's NICs (rails) as in NCCL.\n"
    "NCCL_MIN_CTAS, NCCL_MAX_CTAS, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS set the channels.\n"
    "\n"
    "Examples:\n"
    "  fabricsim coll topologies/dgx-h100.yaml -o all_reduce -b 8 -e 8G -f 2\n"
    "  fabricsim coll topologies/dgx-h100.yaml -o all -b 8 -e 16G -f 2\n"
    "  NCCL_ALGO=Ring fabricsim coll topologies/dgx-h100.yaml -o all_gather -b 1M -e 1G -f 4 --json\n"
    "  fabricsim coll topologies/dgx-h100.yaml -b 8 -e 1G -f 2 -J ar.json   # nccl-tests' -J file\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "coll");
  if (done != FS_CLI_GO_ON)
    return done;
  if (opt_list) {
    g_autoptr(GString) out = g_string_new(NULL);
    fs_report_coll_list(out);
    fputs(out->str, stdout);
    return 0;
  }
  if (argc != 2)
    return fs_cli_usage("coll", "expected one TOPOLOGY file");
  if (opt_json && opt_csv)
    return fs_cli_usage("coll", "--json and --csv are exclusive");
  return run(argv[1]);
}
