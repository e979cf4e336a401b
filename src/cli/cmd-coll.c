/* cmd-coll.c — `fabricsim coll TOPO`: nccl-tests on the simulator.  Loads
 * a topology, builds a communicator over its GPUs, and for each size of
 * the sweep lets the tuner (or the user) pick algorithm, protocol and
 * channels, runs the collective on the flow network, and prints the row
 * the way nccl-tests does (or JSON).  Flags follow nccl-tests: -b -e -f -i
 * -g -d -o -r, plus --algo/--proto/--channels and NCCL_ALGO/NCCL_PROTO. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "calib/calibration.h"
#include "calib/nccl-apply.h"
#include "cli/commands.h"
#include "coll/bench.h"
#include "coll/coll-topo.h"
#include "coll/ncclt-format.h"
#include "net/route.h"
#include "report/link-sampler.h"
#include "report/trace-json.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/strutil.h"
#include "util/units.h"
#include "workload/opgraph.h"

#define COLL_SCHEMA_VERSION 1
#define TRACE_LINKS 16

static char *opt_op = NULL, *opt_min = NULL, *opt_max = NULL, *opt_step = NULL;
static gint64 opt_factor = 0;
static char *opt_gpus = NULL, *opt_ngpus = NULL, *opt_dtype = NULL, *opt_redop = NULL;
static gint opt_root = 0;
static char *opt_algo = NULL, *opt_proto = NULL;
static gint opt_channels = 0;
static gboolean opt_json = FALSE, opt_csv = FALSE, opt_list = FALSE, opt_explain = FALSE;
static gboolean opt_exact = FALSE;
static char *opt_trace = NULL;
static char *opt_calibration = NULL;
static char *opt_models = NULL, *opt_params = NULL;
static char **opt_defines = NULL;
static gint opt_iters = 20, opt_warmup = 1, opt_check = 0;

static const GOptionEntry entries[] = {
  {"op", 'o', 0, G_OPTION_ARG_STRING, &opt_op,
   "Collective (all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv, "
   "gather, scatter, hypercube, barrier); a reduction op name (sum, prod, max, min, avg) or "
   "'all' selects the redop as in nccl-tests", "OP"},
  {"redop", 0, 0, G_OPTION_ARG_STRING, &opt_redop, "Reduction op: sum, prod, max, min, avg, all", "OP"},
  {"minbytes", 'b', 0, G_OPTION_ARG_STRING, &opt_min, "Smallest size (default 32M; K/M/G = 1024^n)", "SIZE"},
  {"maxbytes", 'e', 0, G_OPTION_ARG_STRING, &opt_max, "Largest size (default 32M)", "SIZE"},
  {"stepfactor", 'f', 0, G_OPTION_ARG_INT64, &opt_factor, "Multiply the size by N each step", "N"},
  {"stepbytes", 'i', 0, G_OPTION_ARG_STRING, &opt_step, "Add SIZE each step (default 1M)", "SIZE"},
  {"ngpus", 'g', 0, G_OPTION_ARG_STRING, &opt_ngpus, "Use the first N GPUs (default: all)", "N"},
  {"gpus", 0, 0, G_OPTION_ARG_STRING, &opt_gpus, "GPUs to use: names or node indices, comma-separated", "LIST"},
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
   "Write a Chrome trace-event JSON of the sweep's sizes run back to back, each as the tuner "
   "picks it (ignores --algo/--proto/--channels)", "FILE"},
  {"list", 0, 0, G_OPTION_ARG_NONE, &opt_list, "List the algorithms and protocols and exit", NULL},
  {"exact", 0, 0, G_OPTION_ARG_NONE, &opt_exact,
   "Simulate every transfer: no channel folding, no loop, step or window extrapolation (slower; "
   "the shortcuts are within 1 %, most rows identical)", NULL},
  {"explain", 0, 0, G_OPTION_ARG_NONE, &opt_explain,
   "After the table, the cost model's arithmetic for each size (as # lines)", NULL},
  {"nccl-params", 0, 0, G_OPTION_ARG_FILENAME, &opt_params,
   "NCCL constants file (default models/nccl/nccl.yaml)", "FILE"},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models, "Catalog folder", "DIR"},
  {"define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &opt_defines, "Override a topology parameter", "NAME=VALUE"},
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration,
   "Lay a calibration file (tools/calibrate-gpu, fabricsim calibrate) over the catalog", "FILE"},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static void list_algos(void)
{
  printf("algorithms:\n");
  for (guint i = 0; fs_coll_algos[i]; i++) {
    const FsCollAlgo *a = fs_coll_algos[i];
    printf("  %-15s %-14s %s\n", a->name, a->nccl == FS_NCCL_ALGO_NONE ? "-" : fs_nccl_algo_name(a->nccl),
           a->summary);
  }
  printf("protocols:\n");
  for (guint p = 0; p < FS_PROTO_N; p++)
    printf("  %s\n", fs_coll_proto_name(p));
}

static gboolean parse_size(const char *text, uint64_t fallback, uint64_t *out, GError **error)
{
  if (text == NULL) {
    *out = fallback;
    return TRUE;
  }
  return fs_parse_size(text, out, error);
}

/* At most this many sizes in one sweep (-b to -e by -f or -i), unless
 * $FABRICSIM_MAX_SIZES (a positive integer) says otherwise: a typo such as
 * "-b 1 -e 16G -i 1" would otherwise run for days. */
#define MAX_SIZES 10000

/* Whether the sweep runs at most the allowed number of sizes, counted as
 * bench.c steps through them (a factor stops at 0 or before an overflow;
 * the count saturates at G_MAXUINT64).  Else *why is a usage message
 * (caller frees).  Cost: O(log) for a factor, O(1) for a step. */
static gboolean sizes_within_limit(const FsCollSweep *sw, char **why)
{
  uint64_t n;
  if (sw->step_factor > 1) {
    n = 1;
    for (uint64_t size = sw->min_bytes; size != 0 && size <= G_MAXUINT64 / sw->step_factor &&
                                        size * sw->step_factor <= sw->max_bytes;
         size *= sw->step_factor)
      n++;
  } else {
    uint64_t q = (sw->max_bytes - sw->min_bytes) / sw->step_bytes;
    n = q == G_MAXUINT64 ? q : q + 1;
  }
  uint64_t limit = MAX_SIZES;
  const char *env = g_getenv("FABRICSIM_MAX_SIZES");
  guint64 v;
  if (env != NULL && env[0] != '\0') {
    if (g_ascii_string_to_unsigned(env, 10, 1, G_MAXUINT64, &v, NULL))
      limit = v;
    else
      g_printerr("fabricsim: ignoring FABRICSIM_MAX_SIZES=\"%s\": expected a positive integer\n",
                 env);
  }
  if (n <= limit)
    return TRUE;
  *why = g_strdup_printf("-b %" G_GUINT64_FORMAT " -e %" G_GUINT64_FORMAT " %s %" G_GUINT64_FORMAT
                         " is %" G_GUINT64_FORMAT " sizes; at most %" G_GUINT64_FORMAT " are "
                         "allowed (use a larger -i or -f; FABRICSIM_MAX_SIZES raises the limit)",
                         sw->min_bytes, sw->max_bytes, sw->step_factor > 1 ? "-f" : "-i",
                         sw->step_factor > 1 ? sw->step_factor : sw->step_bytes, n, limit);
  return FALSE;
}

/* The NCCL version code nccl-tests prints: 2.30.7 → 23007. */
static guint version_code(const char *v)
{
  guint a = 0, b = 0, c = 0;
  if (sscanf(v, "%u.%u.%u", &a, &b, &c) < 2)
    return 0;
  return a * 10000 + b * 100 + c;
}

typedef struct {
  FsCollOp op;
  FsCollRedop redops[FS_COLL_N_REDOPS];
  guint n_redops;
  FsCollDtype dtypes[FS_COLL_N_DTYPES];
  guint n_dtypes;
} Selection;

/* -o is the collective when it names one, else the redop (nccl-tests). */
static gboolean parse_selection(Selection *sel, GError **error)
{
  sel->op = FS_COLL_ALL_REDUCE;
  const char *redop = opt_redop;
  if (opt_op != NULL && !fs_coll_op_from_name(opt_op, &sel->op)) {
    if (redop != NULL) {
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "unknown collective \"%s\" (see --list)", opt_op);
      return FALSE;
    }
    redop = opt_op;
  }
  sel->n_redops = 0;
  if (redop == NULL || !fs_coll_op_reduces(sel->op)) {
    sel->redops[sel->n_redops++] = FS_COLL_REDOP_SUM;
    if (redop != NULL && strcmp(redop, "all") != 0 && !fs_coll_redop_from_name(redop, &sel->redops[0])) {
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "unknown collective or reduction op \"%s\"; expected a collective (see --list) or "
                  "sum, prod, max, min, avg, all", redop);
      return FALSE;
    }
  } else if (strcmp(redop, "all") == 0) {
    for (guint r = 0; r < FS_COLL_N_REDOPS; r++)
      sel->redops[sel->n_redops++] = (FsCollRedop)r;
  } else if (!fs_coll_redop_from_name(redop, &sel->redops[sel->n_redops++])) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown collective or reduction op \"%s\"; expected a collective (see --list) or "
                "sum, prod, max, min, avg, all", redop);
    return FALSE;
  }
  sel->n_dtypes = 0;
  if (opt_dtype != NULL && strcmp(opt_dtype, "all") == 0) {
    for (guint d = 0; d < FS_COLL_N_DTYPES; d++)
      sel->dtypes[sel->n_dtypes++] = (FsCollDtype)d;
  } else {
    sel->dtypes[sel->n_dtypes++] = FS_COLL_DT_FLOAT;
    if (opt_dtype != NULL && !fs_coll_dtype_from_name(opt_dtype, &sel->dtypes[0])) {
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "unknown datatype \"%s\"; expected int8, uint8, int32, uint32, int64, uint64, half, "
                  "float, double, bfloat16, f8e4m3, f8e5m2 or all", opt_dtype);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean build_prefs(FsCollPrefs *prefs, GError **error)
{
  fs_coll_prefs_init(prefs);
  const char *env_algo = g_getenv("NCCL_ALGO"), *env_proto = g_getenv("NCCL_PROTO");
  if (env_algo && env_algo[0] && !fs_coll_prefs_set_nccl_algo(prefs, env_algo, error))
    return FALSE;
  if (env_proto && env_proto[0] && !fs_coll_prefs_set_nccl_proto(prefs, env_proto, error))
    return FALSE;
  if (opt_algo != NULL && (prefs->algo = fs_coll_algo_find(opt_algo)) == NULL) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown algorithm \"%s\" (see fabricsim coll --list)", opt_algo);
    return FALSE;
  }
  if (opt_proto != NULL) {
    FsCollProto p;
    if (!fs_coll_proto_from_name(opt_proto, &p)) {
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "unknown protocol \"%s\"; expected LL, LL128 or Simple", opt_proto);
      return FALSE;
    }
    prefs->proto = (int)p;
  }
  if (opt_channels < 0 || opt_channels > 64) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--channels must be 1 to 64");
    return FALSE;
  }
  prefs->channels = (guint)opt_channels;
  return TRUE;
}

/* Appends the model's arithmetic for every size of the sweep (first
 * datatype and redop), each line prefixed "# ". */
static gboolean explain_sizes(GString *out, const FsNcclParams *np, const FsCollSysInfo *sys,
                              const FsComm *comm, const FsCollSweep *sw, GError **error)
{
  guint n = fs_comm_size(comm);
  for (uint64_t size = sw->min_bytes; size <= sw->max_bytes;
       size = sw->step_factor > 1 ? size * sw->step_factor : size + sw->step_bytes) {
    FsCollSizes sizes;
    fs_coll_sizes(sw->op, size, sw->dtype, n, &sizes);
    uint64_t nbytes = fs_coll_nccl_bytes(sw->op, &sizes, n);
    FsCollChoice ch;
    if (!fs_coll_tune(np, sys, comm, sw->op, nbytes, &sw->prefs, &ch, error))
      return FALSE;
    g_autofree char *text = fs_coll_explain(np, sys, comm, sw->op, nbytes, &ch);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_string_append(out, "#\n");
    for (guint i = 0; lines[i]; i++)
      if (lines[i][0] != '\0')
        g_string_append_printf(out, "# %s\n", lines[i]);
    if (sw->step_factor > 1 ? (size == 0 || size > G_MAXUINT64 / sw->step_factor)
                            : size > G_MAXUINT64 - sw->step_bytes)
      break;
  }
  return TRUE;
}

/* Runs each size of the sweep (the first datatype and redop) once more,
 * back to back, as collectives of an op graph (one stream per rank, tuned
 * as NCCL would), sampling link utilisation, and writes the trace. */
static gboolean write_trace(const FsTopo *topo, const FsNcclParams *np, const guint *gpus, guint n,
                            FsCollOp op, const GArray *rows, const char *path, GError **error)
{
  g_autoptr(FsOpGraph) g = fs_opgraph_new();
  guint comm = fs_opgraph_add_comm(g, "world", gpus, n);
  g_autofree guint *streams = g_new(guint, n);
  for (guint r = 0; r < n; r++)
    streams[r] = fs_opgraph_add_stream(g, "coll", r, (int)gpus[r], TRUE);
  const char *first_type = rows->len ? g_array_index(rows, FsNcclTestsRow, 0).type_name : NULL;
  const char *first_redop = rows->len ? g_array_index(rows, FsNcclTestsRow, 0).redop_label : NULL;
  for (guint i = 0; i < rows->len; i++) {
    const FsNcclTestsRow *row = &g_array_index(rows, FsNcclTestsRow, i);
    if (strcmp(row->type_name, first_type) != 0 || strcmp(row->redop_label, first_redop) != 0)
      continue;
    guint c = fs_opgraph_add_coll(g, comm, op, row->sizes.unit_bytes);
    g_autofree char *sz = fs_format_size(row->sizes.size);
    g_autofree char *name = g_strdup_printf("%s %s", fs_coll_op_name(op), sz);
    for (guint r = 0; r < n; r++) {
      FsOp o = { .kind = FS_OP_COLL, .cat = FS_CAT_COMM, .name = name, .bytes = row->sizes.unit_bytes,
                 .coll = c, .mb = -1, .layer = -1 };
      fs_opgraph_add(g, streams[r], &o, NULL, 0);
    }
  }
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) router = fs_router_new(topo, net, NULL);
  g_autoptr(FsCollTopoNet) tnet = fs_coll_topo_net_new(router);
  FsOpEnv env = { sim, net, router, tnet, np };
  g_autoptr(FsLinkSampler) sampler = fs_link_sampler_new(net, 100);
  if (!fs_opgraph_run(g, &env, error))
    return FALSE;
  FsTime end = fs_opgraph_end(g);
  if (sampler != NULL)
    fs_link_sampler_finish(sampler, end);
  FsTraceLink tl[TRACE_LINKS];
  guint nl = fs_trace_busiest_links(net, end, tl, TRACE_LINKS);
  char *names[TRACE_LINKS] = { NULL };
  for (guint i = 0; i < nl; i++)
    tl[i].name = names[i] = fs_router_channel_name(router, tl[i].channel);
  g_autofree char *title = g_strdup_printf("%s on %u GPUs of %s", fs_coll_op_name(op), n, fs_topo_name(topo));
  FsTraceOptions to = { title, tl, nl, sampler, end };
  g_autofree char *txt = fs_trace_json(g, topo, &to);
  for (guint i = 0; i < nl; i++)
    g_free(names[i]);
  return fs_write_file_atomic(path, txt, strlen(txt), error);
}

static int run(const char *topo_path)
{
  GError *error = NULL;
  Selection sel;
  FsCollSweep sw = {0};
  if (!parse_selection(&sel, &error) || !build_prefs(&sw.prefs, &error))
    return fs_cli_fail("coll", error);
  if (!parse_size(opt_min, 32u << 20, &sw.min_bytes, &error) ||
      !parse_size(opt_max, 32u << 20, &sw.max_bytes, &error) ||
      !parse_size(opt_step, 1u << 20, &sw.step_bytes, &error))
    return fs_cli_fail("coll", error);
  if (opt_min != NULL && opt_max == NULL)
    sw.max_bytes = sw.min_bytes;
  if (sw.min_bytes > sw.max_bytes)
    return fs_cli_usage("coll", "minbytes (%" G_GUINT64_FORMAT ") is larger than maxbytes (%" G_GUINT64_FORMAT ")",
                        sw.min_bytes, sw.max_bytes);
  if (opt_factor < 0 || (opt_factor <= 1 && sw.step_bytes == 0))
    return fs_cli_usage("coll", "the step must grow the size: -f N with N >= 2, or -i SIZE with SIZE >= 1");
  sw.step_factor = (uint64_t)opt_factor;
  g_autofree char *too_many = NULL;
  if (!sizes_within_limit(&sw, &too_many))
    return fs_cli_usage("coll", "%s", too_many);

  g_autoptr(FsCalibration) cal = NULL;
  g_autoptr(FsCatalog) cat = fs_calibration_load_catalog(opt_models, opt_calibration, &cal, &error);
  if (cat == NULL)
    return fs_cli_fail("coll", error);
  g_autoptr(FsTopo) topo = fs_topo_load_file(topo_path, cat, (const char *const *)opt_defines, &error);
  if (topo == NULL)
    return fs_cli_fail("coll", error);
  g_autoptr(FsNcclParams) np = opt_params ? fs_nccl_params_load(opt_params, &error)
                                          : fs_nccl_params_load_default(&error);
  if (np == NULL)
    return fs_cli_fail("coll", error);
  fs_calibration_apply_nccl(cal, fs_calibration_topo_gpu(topo), np, NULL);
  if (opt_gpus != NULL && opt_ngpus != NULL)
    return fs_cli_usage("coll", "give -g N or --gpus LIST, not both");
  guint n = 0;
  g_autofree guint *gpus = fs_coll_parse_gpus(topo, opt_gpus ? opt_gpus : opt_ngpus, &n, &error);
  if (gpus == NULL)
    return fs_cli_fail("coll", error);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, FS_NET_MAXMIN);
  g_autoptr(FsRouter) router = fs_router_new(topo, net, NULL);
  g_autoptr(FsCollTopoNet) tnet = fs_coll_topo_net_new(router);
  g_autoptr(FsComm) comm = fs_coll_comm_from_topo(router, gpus, n, np->max_channels, &error);
  if (comm == NULL)
    return fs_cli_fail("coll", error);
  if (fs_coll_op_rooted(sel.op) && (opt_root < 0 || (guint)opt_root >= n))
    return fs_cli_usage("coll", "root %d is not a rank of %u GPUs", opt_root, n);
  sw.root = (guint)opt_root;

  FsCollSysInfo sys;
  if (!fs_coll_sysinfo_from_topo(np, router, comm, &sys, &error))
    return fs_cli_fail("coll", error);
  /* As in NCCL, CollNet (SHARP) is used only when enabled
   * (NCCL_COLLNET_ENABLE=1) or asked for by name. */
  const char *cn = g_getenv("NCCL_COLLNET_ENABLE");
  gboolean forced_cn = sw.prefs.algo != NULL && (sw.prefs.algo->nccl == FS_NCCL_ALGO_COLLNET_DIRECT ||
                                                 sw.prefs.algo->nccl == FS_NCCL_ALGO_COLLNET_CHAIN);
  if (!forced_cn && !(cn != NULL && strcmp(cn, "1") == 0))
    sys.collnet = FALSE;

  g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(FsNcclTestsRow));
  sw.op = sel.op;
  sw.alone.exact = opt_exact;
  sw.alone.route_fixed = fs_coll_topo_route_fixed;
  sw.alone.route_ctx = tnet;
  for (guint d = 0; d < sel.n_dtypes; d++) {
    guint first = rows->len;
    sw.dtype = sel.dtypes[d];
    sw.redop = sel.redops[0];
    if (!fs_coll_bench(np, &sys, comm, &sw, net, fs_coll_topo_xfer, tnet, rows, &error))
      return fs_cli_fail("coll", error);
    /* The model's time does not depend on the reduction op (the same plan,
     * the same bytes): the other redops repeat the first one's rows under
     * their own label, as nccl-tests prints one sweep per redop. */
    guint len = rows->len;
    for (guint r = 1; r < sel.n_redops; r++)
      for (guint i = first; i < len; i++) {
        FsNcclTestsRow row = g_array_index(rows, FsNcclTestsRow, i);
        row.redop_label = fs_coll_op_redop_label(sel.op, sel.redops[r]);
        g_array_append_val(rows, row);
      }
  }
  double avg = fs_coll_bench_avg_busbw(rows);
  if (opt_trace != NULL && !write_trace(topo, np, gpus, n, sel.op, rows, opt_trace, &error))
    return fs_cli_fail("coll", error);

  if (opt_csv) {
    printf("size_bytes,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,algo,proto,channels\n");
    for (guint i = 0; i < rows->len; i++) {
      const FsNcclTestsRow *r = &g_array_index(rows, FsNcclTestsRow, i);
      printf("%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%s,%s,%d,%.10g,%.10g,%.10g,%s,%s,%u\n",
             r->sizes.size, r->sizes.count, r->type_name, r->redop_label, r->root, r->oop_time_us,
             r->oop_algbw, r->oop_busbw, r->algo, r->proto, r->channels);
    }
    return 0;
  }
  if (opt_json) {
    json_t *root = json_object();
    json_object_set_new(root, "schema_version", json_integer(COLL_SCHEMA_VERSION));
    json_object_set_new(root, "collective", json_string(fs_coll_op_name(sel.op)));
    json_object_set_new(root, "topology", json_string(fs_topo_name(topo)));
    json_object_set_new(root, "nranks", json_integer(n));
    json_object_set_new(root, "nccl_version", json_string(np->version));
    json_t *res = json_array();
    for (guint i = 0; i < rows->len; i++)
      json_array_append_new(res, fs_ncclt_row_json(&g_array_index(rows, FsNcclTestsRow, i)));
    json_object_set_new(root, "results", res);
    json_object_set_new(root, "avg_busbw_GBps", json_real(avg));
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    printf("%s\n", s);
    free(s);
    json_decref(root);
    return 0;
  }
  FsNcclTestsHeader h = {
    .op = sel.op, .version_tag = "fabricsim-" FS_VERSION, .nccl_version_code = version_code(np->version),
    .nthreads = 1, .ngpus = n, .min_bytes = sw.min_bytes, .max_bytes = sw.max_bytes,
    .step_factor = sw.step_factor, .step_bytes = sw.step_bytes,
    .warmup_iters = (guint)MAX(opt_warmup, 0), .iters = (guint)MAX(opt_iters, 0), .agg_iters = 1,
    .validation = (guint)MAX(opt_check, 0),
  };
  g_autofree FsNcclTestsDevice *devs = g_new0(FsNcclTestsDevice, n);
  for (guint i = 0; i < n; i++) {
    const FsTopoNode *node = fs_topo_node(topo, gpus[i]);
    devs[i].rank = i;
    devs[i].hostname = node->host >= 0 ? fs_topo_host_name(topo, (guint)node->host) : "fabric";
    devs[i].device = node->local >= 0 ? (guint)node->local : 0;
    devs[i].name = node->model->name;
  }
  g_autoptr(GString) out = g_string_new(NULL);
  fs_ncclt_header(out, &h, devs, n);
  fs_ncclt_table_header(out);
  for (guint i = 0; i < rows->len; i++)
    fs_ncclt_row(out, &g_array_index(rows, FsNcclTestsRow, i));
  fs_ncclt_footer(out, sel.op, avg);
  if (opt_explain && !explain_sizes(out, np, &sys, comm, &sw, &error))
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
    "Runs a sweep of one collective on the topology's GPUs and prints nccl-tests'\n"
    "table (size, count, type, redop, root, time, algbw, busbw), a note of the\n"
    "algorithm/protocol/channels that ran, and the average bus bandwidth.  The\n"
    "tuner follows NCCL's cost model (models/nccl/nccl.yaml); NCCL_ALGO and\n"
    "NCCL_PROTO restrict it as in NCCL (\"Ring,Tree\", \"^NVLS\", or per collective as\n"
    "in NCCL 2.24+: \"ring;allreduce:tree,ring;allgather:^nvls\"); CollNet (SHARP)\n"
    "is considered only with NCCL_COLLNET_ENABLE=1 or --algo collnet_direct|collnet_chain.\n"
    "\n"
    "Examples:\n"
    "  fabricsim coll topologies/dgx-h100.yaml -o all_reduce -b 8 -e 8G -f 2\n"
    "  NCCL_ALGO=Ring fabricsim coll topologies/dgx-h100.yaml -o all_gather -b 1M -e 1G -f 4 --json\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "coll");
  if (done != FS_CLI_GO_ON)
    return done;
  if (opt_list) {
    list_algos();
    return 0;
  }
  if (argc != 2)
    return fs_cli_usage("coll", "expected one TOPOLOGY file");
  if (opt_json && opt_csv)
    return fs_cli_usage("coll", "--json and --csv are exclusive");
  return run(argv[1]);
}
