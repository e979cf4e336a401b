/* p2p.c — see p2p.h. */
#include "report/p2p.h"
#include "report/format.h"

#include <jansson.h>
#include <stdio.h>

#include "util/units.h"

#define P2P_SCHEMA_VERSION 1

/* One matrix value: NULL in JSON and "-" in text when v < 0. */
static json_t *jnum(double v)
{
  return v < 0 ? json_null() : json_real(v);
}

/* The title line and the column header (destination GPUs 0 .. n-1, each
 * right-aligned in width) of a GPU × GPU matrix. */
static void matrix_head(GString *out, const char *title, guint n, int width)
{
  g_string_append_printf(out, "%s\n   D\\D", title);
  for (guint j = 0; j < n; j++)
    g_string_append_printf(out, " %*u", width, j);
  g_string_append_printf(out, "\n");
}

static void G_GNUC_PRINTF(5, 0) print_matrix(GString *out, const char *title, guint n, const double *m, const char *fmt)
{
  matrix_head(out, title, n, 8);
  for (guint i = 0; i < n; i++) {
    g_string_append_printf(out, "%6u ", i);
    for (guint j = 0; j < n; j++) {
      if (m[i * n + j] < 0) {
        g_string_append_printf(out, " %8s", "-");
      } else {
        g_string_append_printf(out, " ");
        g_string_append_printf(out, fmt, m[i * n + j]);
      }
    }
    g_string_append_printf(out, "\n");
  }
  g_string_append_printf(out, "\n");
}

/* See p2p.h. Appends the p2p measurements of the first ng GPUs to out: in JSON as matrices of
 * unidirectional and bidirectional bandwidth, latency and transport plus each GPU's host
 * bandwidths; in CSV as one row per GPU pair with empty fields where no value exists; in text
 * as a transport table, the three matrices and a host <-> device table. */
void fs_report_p2p(GString *out, FsReportFormat fmt, const FsTopo *t, FsNetModel model,
                   uint64_t bytes, guint ng, const FsP2pResult *res)
{
  guint n_all;
  const guint *gpus = fs_topo_gpus(t, &n_all);
  const double *uni = res->uni_gbps, *bi = res->bi_gbps, *lat = res->latency_us;
  const double *h2d = res->h2d_gbps, *d2h = res->d2h_gbps;
  const FsRouteKind *kind = res->kind;
  const gboolean *routed = res->routed;
  const int *cpu = res->cpu;
  double h2d_all = res->h2d_all_gbps;
  guint n_host = res->h2d_all_gpus;

  if (fmt == FS_REPORT_JSON) {
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
    fs_report_append_json(out, o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    return;
  }

  if (fmt == FS_REPORT_CSV) {
    /* Empty fields where a value does not exist (no route, no host path). */
    g_string_append_printf(out, "src_gpu,dst_gpu,bytes,transport,uni_GBps,bi_GBps,latency_us,src_h2d_GBps,src_d2h_GBps\n");
    for (guint i = 0; i < ng; i++)
      for (guint j = 0; j < ng; j++) {
        guint k = i * ng + j;
        g_string_append_printf(out, "%s,%s,%" G_GUINT64_FORMAT ",%s", fs_topo_node(t, gpus[i])->name,
               fs_topo_node(t, gpus[j])->name, bytes,
               i == j ? "local" : routed[k] ? fs_route_kind_name(kind[k]) : "none");
        const double v[] = { uni[k], bi[k], lat[k], h2d[i], d2h[i] };
        for (guint c = 0; c < G_N_ELEMENTS(v); c++)
          if (v[c] < 0)
            g_string_append_printf(out, ",");
          else
            g_string_append_printf(out, ",%.10g", v[c]);
        g_string_append_printf(out, "\n");
      }
    return;
  }
  g_autofree char *size = fs_format_size(bytes);
  g_string_append_printf(out, "# p2p: %s, %u GPUs, transfers of %s, %s flow model\n", fs_topo_name(t), ng, size,
         fs_net_model_name(model));
  for (guint i = 0; i < ng; i++)
    g_string_append_printf(out, "# GPU%-3u %s\n", i, fs_topo_node(t, gpus[i])->name);
  g_string_append_printf(out, "\n");
  matrix_head(out, "Transport (nvlink, pcie-p2p, host-staged, net-gdr, net-staged)", ng, 11);
  for (guint i = 0; i < ng; i++) {
    g_string_append_printf(out, "%6u ", i);
    for (guint j = 0; j < ng; j++) {
      guint k = i * ng + j;
      g_string_append_printf(out, " %11s", i == j ? "X" : routed[k] ? fs_route_kind_name(kind[k]) : "none");
    }
    g_string_append_printf(out, "\n");
  }
  g_string_append_printf(out, "\n");
  print_matrix(out, "Unidirectional P2P bandwidth (GB/s)", ng, uni, "%8.2f");
  print_matrix(out, "Bidirectional P2P bandwidth (GB/s, both directions together)", ng, bi, "%8.2f");
  print_matrix(out, "P2P latency (us, 4-byte transfer)", ng, lat, "%8.3f");
  g_string_append_printf(out, "Host <-> device (GB/s), from each GPU's nearest CPU\n");
  g_string_append_printf(out, "%6s  %-24s %-24s %10s %10s\n", "GPU", "name", "cpu", "H2D", "D2H");
  for (guint i = 0; i < ng; i++) {
    g_string_append_printf(out, "%6u  %-24s %-24s", i, fs_topo_node(t, gpus[i])->name,
           cpu[i] < 0 ? "-" : fs_topo_node(t, (guint)cpu[i])->name);
    if (h2d[i] < 0)
      g_string_append_printf(out, " %10s %10s\n", "-", "-");
    else
      g_string_append_printf(out, " %10.2f %10.2f\n", h2d[i], d2h[i]);
  }
  if (h2d_all >= 0)
    g_string_append_printf(out, "H2D, all %u GPUs at once: %.2f GB/s in total\n", n_host, h2d_all);
  return;
}
