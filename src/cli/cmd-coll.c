/* cmd-coll.c — `fabricsim coll TOPO`: nccl-tests on the simulator.  Loads
 * a topology, builds a communicator over its GPUs, and for each size of
 * the sweep lets the tuner (or the user) pick algorithm, protocol and
 * channels, runs the collective on the flow network, and prints the row
 * the way nccl-tests does (or JSON).  Flags follow nccl-tests: -b -e -f -i
 * -g -d -o -r, plus --algo/--proto/--channels and NCCL_ALGO/NCCL_PROTO;
 * -o all runs every collective, one nccl-tests block each (--redop all is
 * every reduction op). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "calib/calibration.h"
#include "calib/nccl-apply.h"
#include "catalog/catalog.h"
#include "cli/commands.h"
#include "coll/ncclt-format.h"
#include "collrun/bench.h"
#include "collrun/coll-topo.h"
#include "net/route.h"
#include "report/link-sampler.h"
#include "report/trace-json.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/limits.h"
#include "util/strutil.h"
#include "util/units.h"
#include "workload/opgraph.h"

#define COLL_SCHEMA_VERSION 2
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
   "gather, scatter, hypercube, barrier), or 'all' for every one of them in that order; a "
   "reduction op name (sum, prod, max, min, avg) selects the redop of all_reduce as in nccl-tests", "OP"},
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
  uint64_t limit = fs_env_limit("FABRICSIM_MAX_SIZES", MAX_SIZES, G_MAXUINT64);
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
  FsCollOp ops[FS_COLL_N_OPS]; /* the collectives, each a block of its own */
  guint n_ops;
  const char *redop;           /* NULL (sum), "all", or a reduction op's name */
  FsCollDtype dtypes[FS_COLL_N_DTYPES];
  guint n_dtypes;
} Selection;

static void bad_op(GError **error, const char *text)
{
  g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
              "unknown collective or reduction op \"%s\"; expected a collective (see --list), all, "
              "or sum, prod, max, min, avg", text);
}

/* -o is a collective, "all" (every collective, in the catalog's order), or
 * else a reduction op as in nccl-tests (-o sum|prod|max|min|avg; --redop
 * also takes "all"). */
static gboolean parse_selection(Selection *sel, GError **error)
{
  sel->n_ops = 0;
  sel->redop = opt_redop;
  FsCollRedop r;
  if (opt_op == NULL) {
    sel->ops[sel->n_ops++] = FS_COLL_ALL_REDUCE;
  } else if (strcmp(opt_op, "all") == 0) {
    for (guint o = 0; o < FS_COLL_N_OPS; o++)
      sel->ops[sel->n_ops++] = (FsCollOp)o;
  } else if (fs_coll_op_from_name(opt_op, &sel->ops[0])) {
    sel->n_ops = 1;
  } else if (opt_redop != NULL) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown collective \"%s\" (see --list)", opt_op);
    return FALSE;
  } else if (fs_coll_redop_from_name(opt_op, &r)) {
    sel->ops[sel->n_ops++] = FS_COLL_ALL_REDUCE;
    sel->redop = opt_op;
  } else {
    bad_op(error, opt_op);
    return FALSE;
  }
  if (sel->redop != NULL && strcmp(sel->redop, "all") != 0 && !fs_coll_redop_from_name(sel->redop, &r)) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown reduction op \"%s\"; expected sum, prod, max, min, avg or all", sel->redop);
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

/* The redops op runs with: all five for "all" when op reduces, else the
 * one named (sum by default). */
static guint op_redops(const Selection *sel, FsCollOp op, FsCollRedop *out)
{
  guint n = 0;
  if (sel->redop != NULL && strcmp(sel->redop, "all") == 0) {
    if (!fs_coll_op_reduces(op)) {
      out[0] = FS_COLL_REDOP_SUM;
      return 1;
    }
    for (guint r = 0; r < FS_COLL_N_REDOPS; r++)
      out[n++] = (FsCollRedop)r;
    return n;
  }
  out[0] = FS_COLL_REDOP_SUM;
  if (sel->redop != NULL)
    fs_coll_redop_from_name(sel->redop, &out[0]);
  return 1;
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

/* Runs each size of the sweep (each collective's first datatype and redop)
 * once more, back to back, as collectives of an op graph (one stream per
 * rank, tuned as NCCL would), sampling link utilisation, and writes the
 * trace.  title_op: the collective's name, or "all". */
static gboolean write_trace(const FsTopo *topo, const FsNcclParams *np, const guint *gpus, guint n,
                            const char *title_op, const GArray *rows, const char *path,
                            GError **error)
{
  g_autoptr(FsOpGraph) g = fs_opgraph_new();
  guint comm = fs_opgraph_add_comm(g, "world", gpus, n);
  g_autofree guint *streams = g_new(guint, n);
  for (guint r = 0; r < n; r++)
    streams[r] = fs_opgraph_add_stream(g, "coll", r, (int)gpus[r], TRUE);
  const FsNcclTestsRow *first = NULL;
  for (guint i = 0; i < rows->len; i++) {
    const FsNcclTestsRow *row = &g_array_index(rows, FsNcclTestsRow, i);
    if (first == NULL || first->op != row->op)
      first = row;
    if (strcmp(row->type_name, first->type_name) != 0 || strcmp(row->redop_label, first->redop_label) != 0)
      continue;
    guint c = fs_opgraph_add_coll(g, comm, row->op, row->sizes.unit_bytes);
    g_autofree char *sz = fs_format_size(row->sizes.size);
    g_autofree char *name = g_strdup_printf("%s %s", fs_coll_op_name(row->op), sz);
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
  g_autofree char *title = g_strdup_printf("%s on %u GPUs of %s", title_op, n, fs_topo_name(topo));
  FsTraceOptions to = { title, tl, nl, sampler, end };
  g_autofree char *txt = fs_trace_json(g, topo, &to);
  for (guint i = 0; i < nl; i++)
    g_free(names[i]);
  return fs_write_file_atomic(path, txt, strlen(txt), error);
}

static int emit(const Selection *sel, FsCollSweep *swp, const FsTopo *topo, const FsNcclParams *np,
                const FsCollSysInfo *sysp, const FsComm *comm, const guint *gpus, guint n,
                const GArray *rows, const guint *ends, const double *avgs, char *const *skipped);

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
  for (guint o = 0; o < sel.n_ops; o++)
    if (fs_coll_op_rooted(sel.ops[o]) && (opt_root < 0 || (guint)opt_root >= n))
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

  /* One sweep per collective, each row knowing its collective; ends[o] is
   * the end of collective o's rows. */
  g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(FsNcclTestsRow));
  guint ends[FS_COLL_N_OPS];
  double avgs[FS_COLL_N_OPS];
  char *skipped[FS_COLL_N_OPS] = {NULL}; /* why collective o did not run (-o all) */
  guint n_skipped = 0;
  sw.alone.exact = opt_exact;
  sw.alone.route_fixed = fs_coll_topo_route_fixed;
  sw.alone.route_ctx = tnet;
  for (guint o = 0; o < sel.n_ops; o++) {
    guint op_first = rows->len;
    FsCollRedop redops[FS_COLL_N_REDOPS];
    guint n_redops = op_redops(&sel, sel.ops[o], redops);
    sw.op = sel.ops[o];
    for (guint d = 0; d < sel.n_dtypes; d++) {
      guint first = rows->len;
      sw.dtype = sel.dtypes[d];
      sw.redop = redops[0];
      if (!fs_coll_bench(np, &sys, comm, &sw, net, fs_coll_topo_xfer, tnet, rows, &error)) {
        /* -o all leaves out what cannot run on this communicator (a
         * hypercube on 3 ranks), saying why; unless nothing can. */
        if (sel.n_ops == 1 || !g_error_matches(error, FS_COLL_ERROR, FS_COLL_ERROR_UNSUPPORTED))
          return fs_cli_fail("coll", error);
        skipped[o] = g_strdup(error->message);
        g_clear_error(&error);
        g_array_set_size(rows, op_first);
        n_skipped++;
        break;
      }
      /* The model's time does not depend on the reduction op (the same plan,
       * the same bytes): the other redops repeat the first one's rows under
       * their own label, as nccl-tests prints one sweep per redop. */
      guint len = rows->len;
      for (guint r = 1; r < n_redops; r++)
        for (guint i = first; i < len; i++) {
          FsNcclTestsRow row = g_array_index(rows, FsNcclTestsRow, i);
          row.redop_label = fs_coll_op_redop_label(sw.op, redops[r]);
          g_array_append_val(rows, row);
        }
    }
    ends[o] = rows->len;
    if (skipped[o] != NULL) {
      avgs[o] = 0;
      continue;
    }
    g_autoptr(GArray) mine = g_array_new(FALSE, FALSE, sizeof(FsNcclTestsRow));
    g_array_append_vals(mine, &g_array_index(rows, FsNcclTestsRow, op_first), rows->len - op_first);
    avgs[o] = fs_coll_bench_avg_busbw(mine);
  }
  if (n_skipped == sel.n_ops) {
    int st = fs_cli_fail("coll", g_error_new(FS_COLL_ERROR, FS_COLL_ERROR_UNSUPPORTED, "%s", skipped[0]));
    for (guint o = 0; o < sel.n_ops; o++)
      g_free(skipped[o]);
    return st;
  }
  int status = emit(&sel, &sw, topo, np, &sys, comm, gpus, n, rows, ends, avgs, skipped);
  for (guint o = 0; o < sel.n_ops; o++)
    g_free(skipped[o]);
  return status;
}

/* Prints the rows (text, --json or --csv) and writes the trace. */
static int emit(const Selection *sel, FsCollSweep *swp, const FsTopo *topo, const FsNcclParams *np,
                const FsCollSysInfo *sysp, const FsComm *comm, const guint *gpus, guint n,
                const GArray *rows, const guint *ends, const double *avgs, char *const *skipped)
{
  GError *error = NULL;
  FsCollSweep sw = *swp;
  const char *collective = sel->n_ops == 1 ? fs_coll_op_name(sel->ops[0]) : "all";
  if (opt_trace != NULL && !write_trace(topo, np, gpus, n, collective, rows, opt_trace, &error))
    return fs_cli_fail("coll", error);

  if (opt_csv) {
    printf("size_bytes,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,algo,proto,channels,op\n");
    for (guint i = 0; i < rows->len; i++) {
      const FsNcclTestsRow *r = &g_array_index(rows, FsNcclTestsRow, i);
      printf("%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%s,%s,%d,%.10g,%.10g,%.10g,%s,%s,%u,%s\n",
             r->sizes.size, r->sizes.count, r->type_name, r->redop_label, r->root, r->oop_time_us,
             r->oop_algbw, r->oop_busbw, r->algo, r->proto, r->channels, fs_coll_op_name(r->op));
    }
    return 0;
  }
  if (opt_json) {
    json_t *root = json_object();
    json_object_set_new(root, "schema_version", json_integer(COLL_SCHEMA_VERSION));
    json_object_set_new(root, "collective", json_string(collective));
    json_object_set_new(root, "topology", json_string(fs_topo_name(topo)));
    json_object_set_new(root, "nranks", json_integer(n));
    json_object_set_new(root, "nccl_version", json_string(np->version));
    json_t *res = json_array();
    for (guint i = 0; i < rows->len; i++)
      json_array_append_new(res, fs_ncclt_row_json(&g_array_index(rows, FsNcclTestsRow, i)));
    json_object_set_new(root, "results", res);
    json_object_set_new(root, "avg_busbw_GBps", json_real(fs_coll_bench_avg_busbw(rows)));
    json_t *by_op = json_object();
    for (guint o = 0; o < sel->n_ops; o++)
      if (skipped[o] == NULL)
        json_object_set_new(by_op, fs_coll_op_name(sel->ops[o]), json_real(avgs[o]));
    json_object_set_new(root, "avg_busbw_by_op", by_op);
    json_t *skip = json_array();
    for (guint o = 0; o < sel->n_ops; o++)
      if (skipped[o] != NULL) {
        json_t *e = json_object();
        json_object_set_new(e, "op", json_string(fs_coll_op_name(sel->ops[o])));
        json_object_set_new(e, "reason", json_string(skipped[o]));
        json_array_append_new(skip, e);
      }
    json_object_set_new(root, "skipped", skip);
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    printf("%s\n", s);
    free(s);
    json_decref(root);
    return 0;
  }
  g_autofree FsNcclTestsDevice *devs = g_new0(FsNcclTestsDevice, n);
  for (guint i = 0; i < n; i++) {
    const FsTopoNode *node = fs_topo_node(topo, gpus[i]);
    devs[i].rank = i;
    devs[i].hostname = node->host >= 0 ? fs_topo_host_name(topo, (guint)node->host) : "fabric";
    devs[i].device = node->local >= 0 ? (guint)node->local : 0;
    devs[i].name = node->model->name;
  }
  /* Each collective is a block of its own, as nccl-tests' programs run one
   * after another print them. */
  g_autoptr(GString) out = g_string_new(NULL);
  for (guint o = 0; o < sel->n_ops; o++) {
    FsNcclTestsHeader h = {
      .op = sel->ops[o], .version_tag = "fabricsim-" FS_VERSION,
      .nccl_version_code = version_code(np->version),
      .nthreads = 1, .ngpus = n, .min_bytes = sw.min_bytes, .max_bytes = sw.max_bytes,
      .step_factor = sw.step_factor, .step_bytes = sw.step_bytes,
      .warmup_iters = (guint)MAX(opt_warmup, 0), .iters = (guint)MAX(opt_iters, 0), .agg_iters = 1,
      .validation = (guint)MAX(opt_check, 0),
    };
    fs_ncclt_header(out, &h, devs, n);
    if (skipped[o] != NULL) {
      g_string_append_printf(out, "#\n# Not run: %s\n#\n# Collective test concluded: %s\n", skipped[o],
                             fs_coll_op_binary(sel->ops[o]));
      continue;
    }
    fs_ncclt_table_header(out);
    for (guint i = o ? ends[o - 1] : 0; i < ends[o]; i++)
      fs_ncclt_row(out, &g_array_index(rows, FsNcclTestsRow, i));
    fs_ncclt_footer(out, sel->ops[o], avgs[o]);
    sw.op = sel->ops[o];
    sw.dtype = sel->dtypes[0];
    if (opt_explain && !explain_sizes(out, np, sysp, comm, &sw, &error))
      return fs_cli_fail("coll", error);
  }
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
    "\n"
    "Examples:\n"
    "  fabricsim coll topologies/dgx-h100.yaml -o all_reduce -b 8 -e 8G -f 2\n"
    "  fabricsim coll topologies/dgx-h100.yaml -o all -b 8 -e 16G -f 2\n"
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
