/* models.c — see models.h. */
#include "report/models.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog-json.h"
#include "util/units.h"

/* ---- formatting helpers ------------------------------------------------ */

static char *fmt_bw(double v) { return fs_format_bandwidth(v); }
static char *fmt_time(FsTime t) { return fs_format_time(t); }

static char *fmt_flops(double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup_printf("%s TFLOP/s", g_ascii_formatd(buf, sizeof buf, "%.6g", v / 1e12));
}

static char *fmt_money(double usd)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup_printf("%s USD", g_ascii_formatd(buf, sizeof buf, "%.0f", usd));
}

static const char *ref_name(const FsModel *m) { return m ? m->name : "-"; }

/* One line of the list: the key figures of a model. */
static char *summary(const FsModel *m)
{
  switch (m->kind) {
  case FS_MODEL_LINK: {
    const FsLinkModel *l = &m->u.link;
    g_autofree char *label = fs_link_model_label(m);
    g_autofree char *raw = fmt_bw(l->raw_bandwidth);
    g_autofree char *eff = fmt_bw(l->bandwidth);
    g_autofree char *lat = fmt_time(l->latency);
    return g_strdup_printf("%s, %s raw, %s effective, %s", label, raw, eff, lat);
  }
  case FS_MODEL_SWITCH: {
    const FsSwitchModel *s = &m->u.sw;
    g_autofree char *lat = fmt_time(s->latency);
    return g_strdup_printf("%s, %u x %s%s, %s", fs_switch_kind_name(s->kind), s->ports,
                           ref_name(s->port_link), s->reduction ? ", reduction" : "", lat);
  }
  case FS_MODEL_GPU: {
    const FsGpuModel *g = &m->u.gpu;
    g_autofree char *mem = fs_format_size(g->memory);
    g_autofree char *bw = fmt_bw(g->memory_bandwidth);
    /* The headline rate: the lowest precision with a figure among bf16/fp16. */
    double peak = g->flops[FS_DTYPE_BF16] > 0 ? g->flops[FS_DTYPE_BF16] : g->flops[FS_DTYPE_FP16];
    g_autofree char *fl = fmt_flops(peak);
    g_autofree char *nv = g->nvlink ? g_strdup_printf("%u x %s", g->nvlinks, g->nvlink->name)
                                    : g_strdup("no NVLink");
    return g_strdup_printf("%s, %s at %s, 16-bit %s, %s, %s", fs_gpu_arch_name(g->arch), mem,
                           bw, fl, nv, ref_name(g->pcie));
  }
  case FS_MODEL_CPU: {
    const FsCpuModel *c = &m->u.cpu;
    g_autofree char *bw = fmt_bw(c->memory_bandwidth);
    return g_strdup_printf("%s, %u PCIe lanes (%s), %u x %s, memory %s",
                           fs_cpu_vendor_name(c->vendor), c->pcie_lanes, ref_name(c->pcie),
                           c->intersocket_links, ref_name(c->intersocket), bw);
  }
  case FS_MODEL_NIC: {
    const FsNicModel *n = &m->u.nic;
    g_autofree char *lat = fmt_time(n->latency);
    return g_strdup_printf("%u x %s, host %s, %s%s", n->ports, ref_name(n->port_link),
                           ref_name(n->pcie), lat, n->gpudirect ? ", GPUDirect RDMA" : "");
  }
  default:
    g_assert_not_reached();
  }
}

static void print_list(GString *out, const FsCatalog *cat, int kind)
{
  for (guint i = 0; i < fs_catalog_size(cat); i++) {
    const FsModel *m = fs_catalog_nth(cat, i);
    if (kind >= 0 && (int)m->kind != kind)
      continue;
    g_autofree char *s = summary(m);
    g_string_append_printf(out, "%-28s %-7s %s\n", m->name, fs_model_kind_name(m->kind), s);
  }
}

/* ---- one model ---------------------------------------------------------- */

static void field(GString *out, const char *key, const char *value)
{
  g_string_append_printf(out, "  %-20s %s\n", key, value);
}

static void field_take(GString *out, const char *key, char *value)
{
  field(out, key, value);
  g_free(value);
}

static void field_uint(GString *out, const char *key, guint v)
{
  field_take(out, key, g_strdup_printf("%u", v));
}

static void show_link(GString *out, const FsLinkModel *l)
{
  field(out, "family", fs_link_family_name(l->family));
  field(out, "generation", l->generation);
  if (l->bandwidth_given) {
    field(out, "lane_rate", "- (bandwidth given per direction)");
  } else {
    const char *unit = l->family == FS_LINK_PCIE || l->family == FS_LINK_INTERSOCKET ? "GT/s"
                                                                                     : "Gb/s";
    field_take(out, "lane_rate", g_strdup_printf("%.6g %s per lane", l->lane_rate / 1e9, unit));
    field_uint(out, "lanes", l->lanes);
    field_take(out, "encoding", g_strdup_printf("%s (%.6f)", l->encoding_name, l->encoding));
  }
  if (l->max_payload > 0) {
    field_take(out, "max_payload", g_strdup_printf("%u B", l->max_payload));
    field_take(out, "tlp_overhead", g_strdup_printf("%u B", l->tlp_overhead));
  }
  field_take(out, "efficiency", g_strdup_printf("%.4f", l->efficiency));
  field_take(out, "latency", fmt_time(l->latency));
  field_take(out, "raw_bandwidth", fmt_bw(l->raw_bandwidth));
  field_take(out, "bandwidth", fmt_bw(l->bandwidth));
}

static void show_switch(GString *out, const FsSwitchModel *s)
{
  field(out, "switch_kind", fs_switch_kind_name(s->kind));
  field_uint(out, "ports", s->ports);
  if (s->lanes > 0)
    field_uint(out, "lanes", s->lanes);
  field(out, "port_link", ref_name(s->port_link));
  field_take(out, "latency", fmt_time(s->latency));
  field(out, "reduction", s->reduction ? "yes" : "no");
  if (s->reduction_bandwidth > 0)
    field_take(out, "reduction_bandwidth", fmt_bw(s->reduction_bandwidth));
  if (s->power > 0)
    field_take(out, "power", g_strdup_printf("%.4g W", s->power));
  if (s->price > 0)
    field_take(out, "price", fmt_money(s->price));
}

static void show_gpu(GString *out, const FsGpuModel *g)
{
  field(out, "arch", fs_gpu_arch_name(g->arch));
  for (int d = 0; d < FS_DTYPE_N; d++) {
    g_autofree char *key = g_strdup_printf("flops.%s", fs_dtype_name((FsDtype)d));
    field_take(out, key, g->flops[d] > 0 ? fmt_flops(g->flops[d]) : g_strdup("- (unsupported)"));
  }
  field_take(out, "memory", fs_format_size(g->memory));
  field_take(out, "memory_bandwidth", fmt_bw(g->memory_bandwidth));
  field(out, "nvlink", ref_name(g->nvlink));
  field_uint(out, "nvlinks", g->nvlinks);
  field(out, "pcie", ref_name(g->pcie));
  field(out, "c2c", ref_name(g->c2c));
  field_take(out, "tdp", g_strdup_printf("%.0f W", g->tdp));
  field_take(out, "price", g->price > 0 ? fmt_money(g->price) : g_strdup("-"));
  field_take(out, "launch_latency", fmt_time(g->launch_latency));
  field_uint(out, "sms", g->sms);
  field_take(out, "memory_efficiency", g_strdup_printf("%.4f", g->memory_efficiency));
  field_take(out, "copy_latency", fmt_time(g->copy_latency));
}

static void show_cpu(GString *out, const FsCpuModel *c)
{
  field(out, "vendor", fs_cpu_vendor_name(c->vendor));
  field_uint(out, "pcie_lanes", c->pcie_lanes);
  field(out, "pcie", ref_name(c->pcie));
  field(out, "intersocket", ref_name(c->intersocket));
  field_uint(out, "intersocket_links", c->intersocket_links);
  field_take(out, "memory_bandwidth", fmt_bw(c->memory_bandwidth));
  field(out, "nvlink", ref_name(c->nvlink));
  field_uint(out, "nvlinks", c->nvlinks);
  field_take(out, "tdp", c->tdp > 0 ? g_strdup_printf("%.0f W", c->tdp) : g_strdup("-"));
  field_take(out, "price", c->price > 0 ? fmt_money(c->price) : g_strdup("-"));
  field_take(out, "root_latency", fmt_time(c->root_latency));
  field_take(out, "root_bandwidth", c->root_bandwidth > 0 ? fmt_bw(c->root_bandwidth)
                                                     : g_strdup("- (no cap)"));
}

static void show_nic(GString *out, const FsNicModel *n)
{
  field(out, "port_link", ref_name(n->port_link));
  field_uint(out, "ports", n->ports);
  field(out, "pcie", ref_name(n->pcie));
  field_take(out, "latency", fmt_time(n->latency));
  field(out, "gpudirect", n->gpudirect ? "yes" : "no");
  field_uint(out, "devices", n->devices);
  field_take(out, "power", n->power > 0 ? g_strdup_printf("%.4g W", n->power) : g_strdup("-"));
  field_take(out, "price", n->price > 0 ? fmt_money(n->price) : g_strdup("-"));
}

static void show(GString *out, const FsModel *m)
{
  g_string_append_printf(out, "%s (%s)\n", m->name, fs_model_kind_name(m->kind));
  if (m->description[0] != '\0')
    field(out, "description", m->description);
  switch (m->kind) {
  case FS_MODEL_LINK: show_link(out, &m->u.link); break;
  case FS_MODEL_SWITCH: show_switch(out, &m->u.sw); break;
  case FS_MODEL_GPU: show_gpu(out, &m->u.gpu); break;
  case FS_MODEL_CPU: show_cpu(out, &m->u.cpu); break;
  case FS_MODEL_NIC: show_nic(out, &m->u.nic); break;
  default: g_assert_not_reached();
  }
  field(out, "source", m->source);
  if (m->calibration != NULL)
    field(out, "calibrated", m->calibration);
  field_take(out, "defined at", g_strdup_printf("%s:%d:%d", m->file, m->line, m->col));
  g_autofree char *arith = fs_model_explain(m);
  if (arith[0] != '\0')
    g_string_append_printf(out, "arithmetic:\n%s", arith);
}

/* The overrides of a calibration, "before -> after" per figure; only those
 * of model `name` when it is non-NULL (figures outside the catalog, model
 * "compute" and "nccl", go with the matched GPU). */
static void print_changes(GString *out, const FsCalibration *cal, const char *name)
{
  if (cal->gpu_model != NULL)
    g_string_append_printf(out, "calibration %s: %s matched to %s\n", cal->file, cal->device_name, cal->gpu_model);
  else
    g_string_append_printf(out, "calibration %s: fitted link figures\n", cal->file);
  for (guint i = 0; i < cal->changes->len; i++) {
    const FsCalibChange *c = g_ptr_array_index(cal->changes, i);
    gboolean outside = strcmp(c->model, "compute") == 0 || strcmp(c->model, "nccl") == 0;
    if (name != NULL && strcmp(c->model, name) != 0 &&
        !(outside && g_strcmp0(name, cal->gpu_model) == 0))
      continue;
    g_autofree char *key = g_strdup_printf("%s.%s", c->model, c->field);
    g_string_append_printf(out, "  %-36s %s -> %s%s\n      %s\n", key, c->before, c->after,
           c->applied ? "" : "  (not applied)", c->rule);
  }
  g_string_append_printf(out, "\n");
}

static void print_json(GString *out, json_t *j)
{
  char *text = json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII);
  json_decref(j);
  g_string_append_printf(out, "%s\n", text);
  free(text);
}

void fs_report_model(GString *out, const FsModel *m, const FsCalibration *cal, gboolean json)
{
  if (json) {
    print_json(out, fs_model_to_json(m));
    return;
  }
  if (cal != NULL)
    print_changes(out, cal, m->name);
  show(out, m);
}

void fs_report_catalog(GString *out, const FsCatalog *cat, int kind, const FsCalibration *cal,
                       gboolean json)
{
  if (json) {
    print_json(out, fs_catalog_to_json(cat, kind));
    return;
  }
  if (cal != NULL)
    print_changes(out, cal, NULL);
  print_list(out, cat, kind);
}
