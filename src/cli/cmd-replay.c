/* cmd-replay.c — `fabricsim replay TOPO TRACE.json`: run an explicit
 * per-rank op graph (format in workloads/README.md) on a topology and
 * report its makespan, each rank's compute, exposed communication and idle
 * time, and the busiest links; a deadlock exits 1 naming ranks and ops. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "calib/calibration.h"
#include "calib/nccl-apply.h"
#include "catalog/catalog.h"
#include "cli/commands.h"
#include "collrun/coll-topo.h"
#include "compute/efficiency.h"
#include "report/link-sampler.h"
#include "report/trace-json.h"
#include "topo/topo.h"
#include "util/strutil.h"
#include "util/units.h"
#include "workload/replay.h"

#define REPLAY_SCHEMA_VERSION 1
#define TOP_LINKS 8

static char **opt_defines = NULL;
static char *opt_models = NULL;
static char *opt_calibration = NULL;
static gboolean opt_json = FALSE, opt_csv = FALSE;
static char *opt_trace = NULL;
static char *opt_model = NULL;

static const GOptionEntry entries[] = {
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON (schema in workloads/README.md)", NULL},
  {"csv", 0, 0, G_OPTION_ARG_NONE, &opt_csv,
   "Print CSV: one line per rank (compute, exposed communication and idle ms)", NULL},
  {"trace", 0, 0, G_OPTION_ARG_FILENAME, &opt_trace,
   "Write a Chrome trace-event JSON of the run (opens in Perfetto)", "FILE"},
  {"model", 0, 0, G_OPTION_ARG_STRING, &opt_model, "Flow model: maxmin (default) or analytic", "MODEL"},
  {"define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &opt_defines,
   "Override a topology parameter (repeatable)", "NAME=VALUE"},
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration,
   "Apply a calibration file (fabricsim calibrate / the probes) to the catalog and the GEMM curves",
   "FILE"},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models,
   "Catalog folder (default: $FABRICSIM_MODELS or the built-in models/)", "DIR"},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static double ms(FsTime t) { return fs_time_to_s(t) * 1e3; }

int fs_cmd_replay(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx = g_option_context_new("TOPO TRACE - replay a per-rank op graph");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "TRACE is JSON: ranks, communicators and ops (compute, send, recv, collectives)\n"
    "with dependencies; format in workloads/README.md.\n"
    "\nExample:\n"
    "  fabricsim replay topologies/dgx-h100.yaml workloads/traces/pipeline-2stage.json\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "replay");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc != 3)
    return fs_cli_usage("replay", "expected a TOPOLOGY and a TRACE file");
  if (opt_json && opt_csv)
    return fs_cli_usage("replay", "--json and --csv are exclusive");
  FsNetModel model = FS_NET_MAXMIN;
  if (opt_model != NULL && !fs_net_model_from_name(opt_model, &model))
    return fs_cli_usage("replay", "unknown flow model \"%s\" (maxmin or analytic)", opt_model);
  GError *error = NULL;
  g_autoptr(FsCalibration) cal = NULL;
  g_autoptr(FsCatalog) cat = fs_calibration_load_catalog(opt_models, opt_calibration, &cal, &error);
  if (cat == NULL)
    return fs_cli_fail("replay", error);
  g_autoptr(FsTopo) topo = fs_topo_load_file(argv[1], cat, (const char *const *)opt_defines, &error);
  if (topo == NULL)
    return fs_cli_fail("replay", error);
  g_autofree char *effdir = opt_models ? g_build_filename(opt_models, "compute", NULL) : NULL;
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(effdir, &error);
  if (eff == NULL || (cal != NULL && !fs_calibration_apply_efficiency(cal, cat, eff, &error)))
    return fs_cli_fail("replay", error);
  g_autoptr(FsNcclParams) np = fs_nccl_params_load_default(&error);
  if (np == NULL)
    return fs_cli_fail("replay", error);
  fs_calibration_apply_nccl(cal, fs_calibration_topo_gpu(topo), np, NULL);
  g_autoptr(FsReplay) rp = fs_replay_load_file(argv[2], topo, eff, &error);
  if (rp == NULL)
    return fs_cli_fail("replay", error);
  g_autoptr(FsSim) sim = fs_sim_new();
  g_autoptr(FsFlowNet) net = fs_flownet_new(sim, model);
  g_autoptr(FsRouter) router = fs_router_new(topo, net, NULL);
  g_autoptr(FsCollTopoNet) tnet = fs_coll_topo_net_new(router);
  FsOpEnv env = { sim, net, router, tnet, np };
  g_autoptr(FsLinkSampler) sampler = opt_trace ? fs_link_sampler_new(net, 100) : NULL;
  if (!fs_opgraph_run(rp->graph, &env, &error))
    return fs_cli_fail("replay", error);
  FsTime end = fs_opgraph_end(rp->graph);
  if (sampler != NULL)
    fs_link_sampler_finish(sampler, end);
  /* Busiest channels. */
  guint nch = fs_flownet_n_channels(net), nl = 0;
  guint top[TOP_LINKS];
  double util[TOP_LINKS];
  for (guint c = 0; c < nch; c++) {
    FsChannelStats st;
    fs_flownet_channel_stats(net, c, &st);
    double u = end > 0 ? st.volume / (st.capacity * fs_time_to_s(end)) : 0;
    if (st.bytes == 0)
      continue;
    guint k = nl < TOP_LINKS ? nl++ : TOP_LINKS;
    if (k == TOP_LINKS && u <= util[TOP_LINKS - 1])
      continue;
    if (k == TOP_LINKS)
      k = TOP_LINKS - 1;
    while (k > 0 && util[k - 1] < u) {
      util[k] = util[k - 1];
      top[k] = top[k - 1];
      k--;
    }
    util[k] = u;
    top[k] = c;
  }
  json_t *root = json_object();
  json_t *ranks = json_array();
  if (opt_csv) {
    printf("rank,gpu,compute_ms,exposed_comm_ms,idle_ms,makespan_ms\n");
  } else if (!opt_json) {
    printf("%s on %s: %u ranks, %u ops\n", rp->name, fs_topo_name(topo), rp->n_ranks,
           fs_opgraph_n_ops(rp->graph));
    printf("  makespan %.3f ms\n\n", ms(end));
    printf("  %-5s %-16s %10s %10s %10s\n", "rank", "gpu", "compute", "exposed", "idle");
  }
  for (guint r = 0; r < rp->n_ranks; r++) {
    FsOpBreakdown bd;
    memset(&bd, 0, sizeof bd);
    GArray *ops = g_ptr_array_index(rp->rank_ops, r);
    FsTime compute = 0, exposed = 0;
    if (rp->compute_stream[r] != G_MAXUINT) {
      fs_opgraph_breakdown(rp->graph, rp->compute_stream[r], (const guint32 *)ops->data, ops->len,
                           0, end, &bd);
      for (guint k = 0; k < FS_CAT_N; k++) {
        compute += bd.busy[k];
        exposed += bd.exposed[k];
      }
    } else {
      bd.bubble = end;
    }
    const char *gname = "-";
    for (guint s = 0; s < fs_opgraph_n_streams(rp->graph); s++)
      if (fs_opgraph_stream(rp->graph, s)->rank == r) {
        gname = fs_topo_node(topo, (guint)fs_opgraph_stream(rp->graph, s)->gpu)->name;
        break;
      }
    if (opt_json) {
      json_t *o = json_object();
      json_object_set_new(o, "rank", json_integer(r));
      json_object_set_new(o, "gpu", json_string(gname));
      json_object_set_new(o, "compute_ms", json_real(ms(compute)));
      json_object_set_new(o, "exposed_comm_ms", json_real(ms(exposed)));
      json_object_set_new(o, "idle_ms", json_real(ms(bd.bubble)));
      json_array_append_new(ranks, o);
    } else if (opt_csv) {
      printf("%u,%s,%.10g,%.10g,%.10g,%.10g\n", r, gname, ms(compute), ms(exposed), ms(bd.bubble), ms(end));
    } else {
      printf("  %-5u %-16s %10.3f %10.3f %10.3f\n", r, gname, ms(compute), ms(exposed), ms(bd.bubble));
    }
  }
  json_t *links = json_array();
  if (!opt_json && !opt_csv)
    printf("\nBusiest links (mean utilisation):\n");
  for (guint i = 0; i < nl; i++) {
    g_autofree char *name = fs_router_channel_name(router, top[i]);
    if (opt_json) {
      json_t *o = json_object();
      json_object_set_new(o, "channel", json_string(name));
      json_object_set_new(o, "utilisation", json_real(util[i]));
      json_array_append_new(links, o);
    } else if (!opt_csv) {
      printf("  %-44s %5.1f%%\n", name, 100 * util[i]);
    }
  }
  if (opt_trace != NULL) {
    FsTraceLink tl[TOP_LINKS];
    char *names[TOP_LINKS] = { NULL };
    for (guint i = 0; i < nl; i++)
      tl[i] = (FsTraceLink){ names[i] = fs_router_channel_name(router, top[i]), top[i], util[i] };
    FsTraceOptions to = { rp->name, tl, nl, sampler, end };
    g_autofree char *txt = fs_trace_json(rp->graph, topo, &to);
    gboolean ok = fs_write_file_atomic(opt_trace, txt, strlen(txt), &error);
    for (guint i = 0; i < nl; i++)
      g_free(names[i]);
    if (!ok) {
      json_decref(root);
      json_decref(ranks);
      json_decref(links);
      return fs_cli_fail("replay", error);
    }
  }
  if (opt_json) {
    json_object_set_new(root, "schema_version", json_integer(REPLAY_SCHEMA_VERSION));
    json_object_set_new(root, "trace", json_string(rp->name));
    json_object_set_new(root, "topology", json_string(fs_topo_name(topo)));
    json_object_set_new(root, "makespan_s", json_real(fs_time_to_s(end)));
    json_object_set_new(root, "makespan_ps", json_integer(end));
    json_object_set_new(root, "ranks", ranks);
    json_object_set_new(root, "busiest_links", links);
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    printf("%s\n", s);
    free(s);
  } else {
    json_decref(ranks);
    json_decref(links);
  }
  json_decref(root);
  return 0;
}
