/* cmd-models.c — `fabricsim models [NAME] [--kind KIND] [--json] [--models DIR]`:
 * list the hardware catalog, or show one model with every field, its
 * source and the arithmetic of its derived figures. */
#include <stdio.h>
#include <string.h>

#include "calib/calibration.h"
#include "catalog/catalog-json.h"
#include "catalog/catalog.h"
#include "cli/commands.h"
#include "util/strutil.h"
#include "util/units.h"

static char *opt_kind = NULL;
static gboolean opt_json = FALSE;
static char *opt_models = NULL;
static char *opt_calibration = NULL;

static const GOptionEntry entries[] = {
  {"kind", 'k', 0, G_OPTION_ARG_STRING, &opt_kind,
   "Only models of this kind: link, switch, gpu, cpu, nic", "KIND"},
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON (schema in models/README.md)", NULL},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models,
   "Catalog folder (default: $FABRICSIM_MODELS, else the built-in models/)", "DIR"},
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration,
   "Apply a calibration file (validation/README.md) and show each figure it changes", "FILE"},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

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

static void print_list(const FsCatalog *cat, int kind)
{
  for (guint i = 0; i < fs_catalog_size(cat); i++) {
    const FsModel *m = fs_catalog_nth(cat, i);
    if (kind >= 0 && (int)m->kind != kind)
      continue;
    g_autofree char *s = summary(m);
    printf("%-28s %-7s %s\n", m->name, fs_model_kind_name(m->kind), s);
  }
}

/* ---- one model ---------------------------------------------------------- */

static void field(const char *key, const char *value)
{
  printf("  %-20s %s\n", key, value);
}

static void field_take(const char *key, char *value)
{
  field(key, value);
  g_free(value);
}

static void field_uint(const char *key, guint v)
{
  field_take(key, g_strdup_printf("%u", v));
}

static void show_link(const FsLinkModel *l)
{
  field("family", fs_link_family_name(l->family));
  field("generation", l->generation);
  if (l->bandwidth_given) {
    field("lane_rate", "- (bandwidth given per direction)");
  } else {
    const char *unit = l->family == FS_LINK_PCIE || l->family == FS_LINK_INTERSOCKET ? "GT/s"
                                                                                     : "Gb/s";
    field_take("lane_rate", g_strdup_printf("%.6g %s per lane", l->lane_rate / 1e9, unit));
    field_uint("lanes", l->lanes);
    field_take("encoding", g_strdup_printf("%s (%.6f)", l->encoding_name, l->encoding));
  }
  if (l->max_payload > 0) {
    field_take("max_payload", g_strdup_printf("%u B", l->max_payload));
    field_take("tlp_overhead", g_strdup_printf("%u B", l->tlp_overhead));
  }
  field_take("efficiency", g_strdup_printf("%.4f", l->efficiency));
  field_take("latency", fmt_time(l->latency));
  field_take("raw_bandwidth", fmt_bw(l->raw_bandwidth));
  field_take("bandwidth", fmt_bw(l->bandwidth));
}

static void show_switch(const FsSwitchModel *s)
{
  field("switch_kind", fs_switch_kind_name(s->kind));
  field_uint("ports", s->ports);
  if (s->lanes > 0)
    field_uint("lanes", s->lanes);
  field("port_link", ref_name(s->port_link));
  field_take("latency", fmt_time(s->latency));
  field("reduction", s->reduction ? "yes" : "no");
  if (s->reduction_bandwidth > 0)
    field_take("reduction_bandwidth", fmt_bw(s->reduction_bandwidth));
  if (s->power > 0)
    field_take("power", g_strdup_printf("%.4g W", s->power));
  if (s->price > 0)
    field_take("price", fmt_money(s->price));
}

static void show_gpu(const FsGpuModel *g)
{
  field("arch", fs_gpu_arch_name(g->arch));
  for (int d = 0; d < FS_DTYPE_N; d++) {
    g_autofree char *key = g_strdup_printf("flops.%s", fs_dtype_name((FsDtype)d));
    field_take(key, g->flops[d] > 0 ? fmt_flops(g->flops[d]) : g_strdup("- (unsupported)"));
  }
  field_take("memory", fs_format_size(g->memory));
  field_take("memory_bandwidth", fmt_bw(g->memory_bandwidth));
  field("nvlink", ref_name(g->nvlink));
  field_uint("nvlinks", g->nvlinks);
  field("pcie", ref_name(g->pcie));
  field("c2c", ref_name(g->c2c));
  field_take("tdp", g_strdup_printf("%.0f W", g->tdp));
  field_take("price", g->price > 0 ? fmt_money(g->price) : g_strdup("-"));
  field_take("launch_latency", fmt_time(g->launch_latency));
  field_uint("sms", g->sms);
  field_take("memory_efficiency", g_strdup_printf("%.4f", g->memory_efficiency));
  field_take("copy_latency", fmt_time(g->copy_latency));
}

static void show_cpu(const FsCpuModel *c)
{
  field("vendor", fs_cpu_vendor_name(c->vendor));
  field_uint("pcie_lanes", c->pcie_lanes);
  field("pcie", ref_name(c->pcie));
  field("intersocket", ref_name(c->intersocket));
  field_uint("intersocket_links", c->intersocket_links);
  field_take("memory_bandwidth", fmt_bw(c->memory_bandwidth));
  field("nvlink", ref_name(c->nvlink));
  field_uint("nvlinks", c->nvlinks);
  field_take("tdp", c->tdp > 0 ? g_strdup_printf("%.0f W", c->tdp) : g_strdup("-"));
  field_take("price", c->price > 0 ? fmt_money(c->price) : g_strdup("-"));
  field_take("root_latency", fmt_time(c->root_latency));
  field_take("root_bandwidth", c->root_bandwidth > 0 ? fmt_bw(c->root_bandwidth)
                                                     : g_strdup("- (no cap)"));
}

static void show_nic(const FsNicModel *n)
{
  field("port_link", ref_name(n->port_link));
  field_uint("ports", n->ports);
  field("pcie", ref_name(n->pcie));
  field_take("latency", fmt_time(n->latency));
  field("gpudirect", n->gpudirect ? "yes" : "no");
  field_take("power", n->power > 0 ? g_strdup_printf("%.4g W", n->power) : g_strdup("-"));
  field_take("price", n->price > 0 ? fmt_money(n->price) : g_strdup("-"));
}

static void show(const FsModel *m)
{
  printf("%s (%s)\n", m->name, fs_model_kind_name(m->kind));
  if (m->description[0] != '\0')
    field("description", m->description);
  switch (m->kind) {
  case FS_MODEL_LINK: show_link(&m->u.link); break;
  case FS_MODEL_SWITCH: show_switch(&m->u.sw); break;
  case FS_MODEL_GPU: show_gpu(&m->u.gpu); break;
  case FS_MODEL_CPU: show_cpu(&m->u.cpu); break;
  case FS_MODEL_NIC: show_nic(&m->u.nic); break;
  default: g_assert_not_reached();
  }
  field("source", m->source);
  if (m->calibration != NULL)
    field("calibrated", m->calibration);
  field_take("defined at", g_strdup_printf("%s:%d:%d", m->file, m->line, m->col));
  g_autofree char *arith = fs_model_explain(m);
  if (arith[0] != '\0')
    printf("arithmetic:\n%s", arith);
}

/* The overrides of a calibration, "before -> after" per figure; only those
 * of model `name` when it is non-NULL (figures outside the catalog, model
 * "compute" and "nccl", go with the matched GPU). */
static void print_changes(const FsCalibration *cal, const char *name)
{
  if (cal->gpu_model != NULL)
    printf("calibration %s: %s matched to %s\n", cal->file, cal->device_name, cal->gpu_model);
  else
    printf("calibration %s: fitted link figures\n", cal->file);
  for (guint i = 0; i < cal->changes->len; i++) {
    const FsCalibChange *c = g_ptr_array_index(cal->changes, i);
    gboolean outside = strcmp(c->model, "compute") == 0 || strcmp(c->model, "nccl") == 0;
    if (name != NULL && strcmp(c->model, name) != 0 &&
        !(outside && g_strcmp0(name, cal->gpu_model) == 0))
      continue;
    g_autofree char *key = g_strdup_printf("%s.%s", c->model, c->field);
    printf("  %-36s %s -> %s%s\n      %s\n", key, c->before, c->after,
           c->applied ? "" : "  (not applied)", c->rule);
  }
  printf("\n");
}

static int print_json(json_t *j)
{
  char *text = json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII);
  json_decref(j);
  if (text == NULL)
    return 1;
  printf("%s\n", text);
  free(text);
  return 0;
}

int fs_cmd_models(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx = g_option_context_new("[NAME] - list the hardware catalog or show one model");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Without NAME, lists every model (one per line, sorted by name) with its key\n"
    "figures.  With NAME, shows every field of that model, where its figures come\n"
    "from, and the arithmetic of its derived bandwidths.\n"
    "\n"
    "Examples:\n"
    "  fabricsim models --kind gpu\n"
    "  fabricsim models pcie-gen4-x16\n"
    "  fabricsim models h100-sxm --json\n"
    "  fabricsim models --calibration validation/results/h100-2026-11-23.json h100-sxm\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "models");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc > 2)
    return fs_cli_usage("models", "expected at most one NAME, got %d", argc - 1);

  int kind = -1;
  if (opt_kind != NULL) {
    FsModelKind k;
    if (!fs_model_kind_from_name(opt_kind, &k)) {
      const char *kinds[FS_MODEL_N_KINDS + 1];
      for (int i = 0; i < FS_MODEL_N_KINDS; i++)
        kinds[i] = fs_model_kind_name((FsModelKind)i);
      kinds[FS_MODEL_N_KINDS] = NULL;
      const char *guess = fs_did_you_mean(opt_kind, kinds, -1);
      if (guess != NULL)
        return fs_cli_usage("models", "unknown kind \"%s\"; did you mean \"%s\"?", opt_kind,
                            guess);
      return fs_cli_usage("models", "unknown kind \"%s\"; expected link, switch, gpu, cpu or nic",
                          opt_kind);
    }
    kind = (int)k;
  }

  GError *error = NULL;
  g_autoptr(FsCalibration) cal = NULL;
  g_autoptr(FsCatalog) cat = fs_calibration_load_catalog(opt_models, opt_calibration, &cal, &error);
  if (cat == NULL)
    return fs_cli_fail("models", error);
  if (cal != NULL)
    for (guint i = 0; i < cal->warnings->len; i++)
      fprintf(stderr, "fabricsim models: warning: %s\n",
              (const char *)g_ptr_array_index(cal->warnings, i));

  if (argc == 2) {
    const FsModel *m = kind >= 0 ? fs_catalog_require(cat, argv[1], (FsModelKind)kind, &error)
                                 : fs_catalog_find(cat, argv[1], &error);
    if (m == NULL)
      return fs_cli_fail("models", error);
    if (opt_json)
      return print_json(fs_model_to_json(m));
    if (cal != NULL)
      print_changes(cal, m->name);
    show(m);
    return 0;
  }
  if (opt_json)
    return print_json(fs_catalog_to_json(cat, kind));
  if (cal != NULL)
    print_changes(cal, NULL);
  print_list(cat, kind);
  return 0;
}
