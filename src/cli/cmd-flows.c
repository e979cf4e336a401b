/* cmd-flows.c — `fabricsim flows TOPO FLOWS`: replay a list of transfers
 * (CSV or JSON, format in tests/data/flows/README.md) on a topology and
 * print, per transfer, when it started and finished, its mean rate, its
 * transport and the channel that limited it. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "calib/calibration.h"
#include "cli/commands.h"
#include "net/flowfile.h"
#include "net/route.h"
#include "report/link-sampler.h"
#include "report/trace-json.h"
#include "topo/topo.h"
#include "util/strutil.h"
#include "util/units.h"

#define FLOWS_SCHEMA_VERSION 1
#define TRACE_LINKS 16

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
  {"define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &opt_defines,
   "Override a topology parameter (repeatable)", "NAME=VALUE"},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models,
   "Catalog folder (default: $FABRICSIM_MODELS or the built-in models/)", "DIR"},
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration,
   "Lay a calibration file (tools/calibrate-gpu, fabricsim calibrate) over the catalog", "FILE"},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static char *bottleneck_name(const FsTopo *t, int64_t ch)
{
  if (ch == FS_CHANNEL_NONE || (guint64)ch >= fs_topo_n_channels(t))
    return g_strdup("-");
  return g_strdup_printf("%s->%s", fs_topo_node(t, fs_topo_channel_src(t, (guint)ch))->name,
                         fs_topo_node(t, fs_topo_channel_dst(t, (guint)ch))->name);
}

/* The trace of the replayed transfers (trace-json.h). */
static gboolean write_trace(const FsTopo *t, FsFlowNet *net, FsRouter *router, FsLinkSampler *sampler,
                            GPtrArray *recs, FsTime makespan, const char *name, GError **error)
{
  if (sampler != NULL)
    fs_link_sampler_finish(sampler, makespan);
  g_autofree FsTraceTransfer *xs = g_new0(FsTraceTransfer, MAX(recs->len, 1u));
  for (guint i = 0; i < recs->len; i++) {
    FsFlowRecord *r = g_ptr_array_index(recs, i);
    xs[i] = (FsTraceTransfer){ r->id, (guint)r->src, (guint)r->dst, r->bytes,
                               fs_route_kind_name(r->kind), r->info.start, r->info.finish };
  }
  FsTraceLink tl[TRACE_LINKS];
  guint nl = fs_trace_busiest_links(net, makespan, tl, TRACE_LINKS);
  char *names[TRACE_LINKS] = { NULL };
  for (guint i = 0; i < nl; i++)
    tl[i].name = names[i] = fs_router_channel_name(router, tl[i].channel);
  g_autofree char *title = g_strdup_printf("%s on %s", name, fs_topo_name(t));
  FsTraceOptions to = { title, tl, nl, sampler, makespan };
  g_autofree char *txt = fs_trace_json_transfers(t, xs, recs->len, &to);
  for (guint i = 0; i < nl; i++)
    g_free(names[i]);
  return fs_write_file_atomic(opt_trace, txt, strlen(txt), error);
}

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
  g_autoptr(FsCatalog) cat = fs_calibration_load_catalog(opt_models, opt_calibration, NULL, &error);
  if (cat == NULL)
    return fs_cli_fail("flows", error);
  g_autoptr(FsTopo) t = fs_topo_load_file(argv[1], cat, (const char *const *)opt_defines, &error);
  if (t == NULL)
    return fs_cli_fail("flows", error);
  g_autoptr(FsFlowList) list = fs_flow_list_load(argv[2], t, &error);
  if (list == NULL)
    return fs_cli_fail("flows", error);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, model);
  g_autoptr(FsRouter) router = fs_router_new(t, net, &ropt);
  g_autoptr(FsLinkSampler) sampler = opt_trace ? fs_link_sampler_new(net, 100) : NULL;
  if (!fs_flow_list_replay_on(list, router, &error))
    return fs_cli_fail("flows", error);

  GPtrArray *recs = list->records;
  FsTime makespan = 0;
  uint64_t total = 0;
  for (guint i = 0; i < recs->len; i++) {
    FsFlowRecord *r = g_ptr_array_index(recs, i);
    makespan = MAX(makespan, r->info.finish);
    total += r->bytes;
  }
  if (opt_trace != NULL && !write_trace(t, net, router, sampler, recs, makespan, argv[2], &error))
    return fs_cli_fail("flows", error);
  if (opt_json) {
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(FLOWS_SCHEMA_VERSION));
    json_object_set_new(o, "topology", json_string(fs_topo_name(t)));
    json_object_set_new(o, "model", json_string(fs_net_model_name(model)));
    json_t *arr = json_array();
    for (guint i = 0; i < recs->len; i++) {
      FsFlowRecord *r = g_ptr_array_index(recs, i);
      g_autofree char *bn = bottleneck_name(t, r->info.bottleneck);
      json_t *f = json_object();
      json_object_set_new(f, "id", json_string(r->id));
      json_object_set_new(f, "src", json_string(fs_topo_node(t, r->src)->name));
      json_object_set_new(f, "dst", json_string(fs_topo_node(t, r->dst)->name));
      json_object_set_new(f, "bytes", json_integer((json_int_t)r->bytes));
      json_object_set_new(f, "transport", json_string(fs_route_kind_name(r->kind)));
      json_object_set_new(f, "start_ps", json_integer(r->info.start));
      json_object_set_new(f, "finish_ps", json_integer(r->info.finish));
      json_object_set_new(f, "latency_ps", json_integer(r->info.latency));
      json_object_set_new(f, "mean_rate_gbps", json_real(r->info.mean_rate / 1e9));
      json_object_set_new(f, "paths", json_integer(r->info.path_len));
      json_object_set_new(f, "bottleneck", r->info.bottleneck == FS_CHANNEL_NONE
                                             ? json_null() : json_string(bn));
      json_array_append_new(arr, f);
    }
    json_object_set_new(o, "flows", arr);
    json_object_set_new(o, "makespan_ps", json_integer(makespan));
    json_object_set_new(o, "bytes", json_integer((json_int_t)total));
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    printf("%s\n", s);
    free(s);
    json_decref(o);
    return 0;
  }
  if (opt_csv) {
    printf("id,src,dst,bytes,transport,start_ps,finish_ps,mean_rate_Bps,paths,bottleneck\n");
    for (guint i = 0; i < recs->len; i++) {
      FsFlowRecord *r = g_ptr_array_index(recs, i);
      g_autofree char *bn = bottleneck_name(t, r->info.bottleneck);
      printf("%s,%s,%s,%" G_GUINT64_FORMAT ",%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
             ",%.10g,%u,%s\n", r->id, fs_topo_node(t, r->src)->name,
             fs_topo_node(t, r->dst)->name, r->bytes, fs_route_kind_name(r->kind), r->info.start,
             r->info.finish, r->info.mean_rate, r->info.path_len, bn);
    }
    return 0;
  }
  printf("# flows: %u transfers on %s, %s flow model\n", recs->len, fs_topo_name(t),
         fs_net_model_name(model));
  printf("%-12s %-14s %-14s %12s %-11s %12s %12s %10s  %s\n", "id", "src", "dst", "bytes",
         "transport", "start(us)", "finish(us)", "GB/s", "bottleneck");
  for (guint i = 0; i < recs->len; i++) {
    FsFlowRecord *r = g_ptr_array_index(recs, i);
    g_autofree char *bn = bottleneck_name(t, r->info.bottleneck);
    printf("%-12s %-14s %-14s %12" G_GUINT64_FORMAT " %-11s %12.3f %12.3f %10.2f  %s\n", r->id,
           fs_topo_node(t, r->src)->name, fs_topo_node(t, r->dst)->name, r->bytes,
           fs_route_kind_name(r->kind), fs_time_to_us(r->info.start),
           fs_time_to_us(r->info.finish), r->info.mean_rate / 1e9, bn);
  }
  g_autofree char *ms = fs_format_time(makespan);
  g_autofree char *sz = fs_format_size(total);
  printf("# makespan %s, %s moved\n", ms, sz);
  return 0;
}
