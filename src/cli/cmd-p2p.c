/* cmd-p2p.c — `fabricsim p2p TOPO`: the matrices of CUDA's
 * p2pBandwidthLatencyTest and nvbandwidth, by simulating the transfers on
 * the flow network: unidirectional and bidirectional bandwidth and latency
 * per GPU pair, the transport used, and host↔device bandwidth per GPU
 * (alone, and all GPUs at once).  The measuring is src/net/p2p.c; this
 * file parses options and prints. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "calib/calibration.h"
#include "cli/commands.h"
#include "net/flow.h"
#include "net/p2p.h"
#include "net/route.h"
#include "topo/topo.h"
#include "util/units.h"

#define MAX_GPUS 256
#define P2P_SCHEMA_VERSION 1

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
  {"define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &opt_defines,
   "Override a topology parameter (repeatable)", "NAME=VALUE"},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models,
   "Catalog folder (default: $FABRICSIM_MODELS or the built-in models/)", "DIR"},
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration,
   "Lay a calibration file (tools/calibrate-gpu, fabricsim calibrate) over the catalog", "FILE"},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* One matrix value: NULL in JSON and "-" in text when v < 0. */
static json_t *jnum(double v)
{
  return v < 0 ? json_null() : json_real(v);
}

static void G_GNUC_PRINTF(4, 0) print_matrix(const char *title, guint n, const double *m, const char *fmt)
{
  printf("%s\n   D\\D", title);
  for (guint j = 0; j < n; j++)
    printf(" %8u", j);
  printf("\n");
  for (guint i = 0; i < n; i++) {
    printf("%6u ", i);
    for (guint j = 0; j < n; j++) {
      if (m[i * n + j] < 0) {
        printf(" %8s", "-");
      } else {
        printf(" ");
        printf(fmt, m[i * n + j]);
      }
    }
    printf("\n");
  }
  printf("\n");
}

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

  g_autoptr(FsCatalog) cat = fs_calibration_load_catalog(opt_models, opt_calibration, NULL, &error);
  if (cat == NULL)
    return fs_cli_fail("p2p", error);
  g_autoptr(FsTopo) t = fs_topo_load_file(argv[1], cat, (const char *const *)opt_defines, &error);
  if (t == NULL)
    return fs_cli_fail("p2p", error);
  guint ng;
  const guint *gpus = fs_topo_gpus(t, &ng);
  if (opt_gpus < 0)
    return fs_cli_usage("p2p", "--gpus must be positive");
  if (opt_gpus > 0)
    ng = MIN(ng, (guint)opt_gpus);
  if (ng > MAX_GPUS)
    return fs_cli_usage("p2p", "%u GPUs: the matrices would have %u entries; pass --gpus N "
                        "(at most %d) to measure the first N", ng, ng * ng, MAX_GPUS);
  if (ng == 0)
    return fs_cli_usage("p2p", "the topology has no GPU");

  g_autoptr(FsP2pResult) res = fs_p2p_measure(t, model, &ropt, bytes, ng, &error);
  if (res == NULL)
    return fs_cli_fail("p2p", error);
  const double *uni = res->uni_gbps, *bi = res->bi_gbps, *lat = res->latency_us;
  const double *h2d = res->h2d_gbps, *d2h = res->d2h_gbps;
  const FsRouteKind *kind = res->kind;
  const gboolean *routed = res->routed;
  const int *cpu = res->cpu;
  double h2d_all = res->h2d_all_gbps;
  guint n_host = res->h2d_all_gpus;

  if (opt_json) {
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(P2P_SCHEMA_VERSION));
    json_object_set_new(o, "topology", json_string(fs_topo_name(t)));
    json_object_set_new(o, "model", json_string(fs_net_model_name(model)));
    json_object_set_new(o, "bytes", json_integer((json_int_t)bytes));
    json_t *names = json_array();
    for (guint i = 0; i < ng; i++)
      json_array_append_new(names, json_string(fs_topo_node(t, gpus[i])->name));
    json_object_set_new(o, "gpus", names);
    const char *keys[] = {"unidirectional_gbps", "bidirectional_gbps", "latency_us"};
    const double *mats[] = {uni, bi, lat};
    for (guint m = 0; m < 3; m++) {
      json_t *rows = json_array();
      for (guint i = 0; i < ng; i++) {
        json_t *row = json_array();
        for (guint j = 0; j < ng; j++)
          json_array_append_new(row, jnum(mats[m][i * ng + j]));
        json_array_append_new(rows, row);
      }
      json_object_set_new(o, keys[m], rows);
    }
    json_t *rows = json_array();
    for (guint i = 0; i < ng; i++) {
      json_t *row = json_array();
      for (guint j = 0; j < ng; j++) {
        guint k = i * ng + j;
        json_array_append_new(row, i == j ? json_string("local")
                                   : routed[k] ? json_string(fs_route_kind_name(kind[k]))
                                               : json_null());
      }
      json_array_append_new(rows, row);
    }
    json_object_set_new(o, "transport", rows);
    json_t *host = json_array();
    for (guint i = 0; i < ng; i++) {
      json_t *h = json_object();
      json_object_set_new(h, "gpu", json_string(fs_topo_node(t, gpus[i])->name));
      json_object_set_new(h, "cpu", cpu[i] < 0 ? json_null()
                                                : json_string(fs_topo_node(t, (guint)cpu[i])->name));
      json_object_set_new(h, "h2d_gbps", jnum(h2d[i]));
      json_object_set_new(h, "d2h_gbps", jnum(d2h[i]));
      json_array_append_new(host, h);
    }
    json_object_set_new(o, "host", host);
    json_object_set_new(o, "h2d_all_gpus_gbps", jnum(h2d_all));
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    printf("%s\n", s);
    free(s);
    json_decref(o);
    return 0;
  }

  if (opt_csv) {
    /* Empty fields where a value does not exist (no route, no host path). */
    printf("src_gpu,dst_gpu,bytes,transport,uni_GBps,bi_GBps,latency_us,src_h2d_GBps,src_d2h_GBps\n");
    for (guint i = 0; i < ng; i++)
      for (guint j = 0; j < ng; j++) {
        guint k = i * ng + j;
        printf("%s,%s,%" G_GUINT64_FORMAT ",%s", fs_topo_node(t, gpus[i])->name,
               fs_topo_node(t, gpus[j])->name, bytes,
               i == j ? "local" : routed[k] ? fs_route_kind_name(kind[k]) : "none");
        const double v[] = { uni[k], bi[k], lat[k], h2d[i], d2h[i] };
        for (guint c = 0; c < G_N_ELEMENTS(v); c++)
          if (v[c] < 0)
            printf(",");
          else
            printf(",%.10g", v[c]);
        printf("\n");
      }
    return 0;
  }
  g_autofree char *size = fs_format_size(bytes);
  printf("# p2p: %s, %u GPUs, transfers of %s, %s flow model\n", fs_topo_name(t), ng, size,
         fs_net_model_name(model));
  for (guint i = 0; i < ng; i++)
    printf("# GPU%-3u %s\n", i, fs_topo_node(t, gpus[i])->name);
  printf("\n");
  printf("Transport (nvlink, pcie-p2p, host-staged, net-gdr, net-staged)\n   D\\D");
  for (guint j = 0; j < ng; j++)
    printf(" %11u", j);
  printf("\n");
  for (guint i = 0; i < ng; i++) {
    printf("%6u ", i);
    for (guint j = 0; j < ng; j++) {
      guint k = i * ng + j;
      printf(" %11s", i == j ? "X" : routed[k] ? fs_route_kind_name(kind[k]) : "none");
    }
    printf("\n");
  }
  printf("\n");
  print_matrix("Unidirectional P2P bandwidth (GB/s)", ng, uni, "%8.2f");
  print_matrix("Bidirectional P2P bandwidth (GB/s, both directions together)", ng, bi, "%8.2f");
  print_matrix("P2P latency (us, 4-byte transfer)", ng, lat, "%8.3f");
  printf("Host <-> device (GB/s), from each GPU's nearest CPU\n");
  printf("%6s  %-24s %-24s %10s %10s\n", "GPU", "name", "cpu", "H2D", "D2H");
  for (guint i = 0; i < ng; i++) {
    printf("%6u  %-24s %-24s", i, fs_topo_node(t, gpus[i])->name,
           cpu[i] < 0 ? "-" : fs_topo_node(t, (guint)cpu[i])->name);
    if (h2d[i] < 0)
      printf(" %10s %10s\n", "-", "-");
    else
      printf(" %10.2f %10.2f\n", h2d[i], d2h[i]);
  }
  if (h2d_all >= 0)
    printf("H2D, all %u GPUs at once: %.2f GB/s in total\n", n_host, h2d_all);
  return 0;
}
