/* json.c — models as JSON; see catalog-json.h for the schema.  Keys are
 * inserted in a fixed order and jansson keeps insertion order, so the
 * output is byte-stable. */
#include "catalog/catalog-json.h"

#include "catalog/names.h"

static json_t *ref(const FsModel *m)
{
  return m ? json_string(m->name) : json_null();
}

static void set(json_t *o, const char *key, json_t *v)
{
  json_object_set_new(o, key, v);
}

static void link_fields(json_t *o, const FsLinkModel *l)
{
  set(o, "family", json_string(fs_link_family_names[l->family]));
  set(o, "generation", json_string(l->generation ? l->generation : ""));
  set(o, "lane_rate", json_real(l->lane_rate));
  set(o, "lanes", json_integer(l->lanes));
  set(o, "encoding", json_real(l->encoding));
  set(o, "encoding_name", json_string(l->encoding_name ? l->encoding_name : "none"));
  set(o, "max_payload", json_integer(l->max_payload));
  set(o, "tlp_overhead", json_integer(l->tlp_overhead));
  set(o, "efficiency", json_real(l->efficiency));
  set(o, "latency_ps", json_integer(l->latency));
  set(o, "raw_bandwidth", json_real(l->raw_bandwidth));
  set(o, "bandwidth", json_real(l->bandwidth));
}

static void switch_fields(json_t *o, const FsSwitchModel *s)
{
  set(o, "switch_kind", json_string(fs_switch_kind_names[s->kind]));
  set(o, "ports", json_integer(s->ports));
  set(o, "port_link", ref(s->port_link));
  set(o, "lanes", json_integer(s->lanes));
  set(o, "latency_ps", json_integer(s->latency));
  set(o, "reduction", json_boolean(s->reduction));
  set(o, "reduction_bandwidth", json_real(s->reduction_bandwidth));
  set(o, "power", json_real(s->power));
  set(o, "price", json_real(s->price));
}

static void gpu_fields(json_t *o, const FsGpuModel *g)
{
  set(o, "arch", json_string(fs_gpu_arch_names[g->arch]));
  json_t *flops = json_object();
  for (int d = 0; d < FS_DTYPE_N; d++)
    set(flops, fs_dtype_names[d], json_real(g->flops[d]));
  set(o, "flops", flops);
  set(o, "memory", json_integer((json_int_t)g->memory));
  set(o, "memory_bandwidth", json_real(g->memory_bandwidth));
  set(o, "nvlink", ref(g->nvlink));
  set(o, "nvlinks", json_integer(g->nvlinks));
  set(o, "pcie", ref(g->pcie));
  set(o, "c2c", ref(g->c2c));
  set(o, "tdp", json_real(g->tdp));
  set(o, "price", json_real(g->price));
  set(o, "launch_latency_ps", json_integer(g->launch_latency));
  set(o, "sms", json_integer(g->sms));
  set(o, "memory_efficiency", json_real(g->memory_efficiency));
  set(o, "copy_latency_ps", json_integer(g->copy_latency));
}

static void cpu_fields(json_t *o, const FsCpuModel *c)
{
  set(o, "vendor", json_string(fs_cpu_vendor_names[c->vendor]));
  set(o, "pcie_lanes", json_integer(c->pcie_lanes));
  set(o, "pcie", ref(c->pcie));
  set(o, "intersocket", ref(c->intersocket));
  set(o, "intersocket_links", json_integer(c->intersocket_links));
  set(o, "memory_bandwidth", json_real(c->memory_bandwidth));
  set(o, "nvlink", ref(c->nvlink));
  set(o, "nvlinks", json_integer(c->nvlinks));
  set(o, "tdp", json_real(c->tdp));
  set(o, "price", json_real(c->price));
  set(o, "root_latency_ps", json_integer(c->root_latency));
  set(o, "root_bandwidth", json_real(c->root_bandwidth));
}

static void nic_fields(json_t *o, const FsNicModel *n)
{
  set(o, "port_link", ref(n->port_link));
  set(o, "ports", json_integer(n->ports));
  set(o, "pcie", ref(n->pcie));
  set(o, "latency_ps", json_integer(n->latency));
  set(o, "gpudirect", json_boolean(n->gpudirect));
  set(o, "devices", json_integer(n->devices));
  set(o, "message_cost_ps", json_integer(n->message_cost));
  set(o, "stripe_cost_ps", json_integer(n->stripe_cost));
  set(o, "min_stripe", json_integer((json_int_t)n->min_stripe));
  set(o, "power", json_real(n->power));
  set(o, "price", json_real(n->price));
}

/* A '\n'-joined identification list (FsModelIds) as a JSON array. */
static json_t *id_list(const char *joined)
{
  json_t *a = json_array();
  if (joined != NULL && *joined != '\0') {
    g_auto(GStrv) items = g_strsplit(joined, "\n", -1);
    for (guint i = 0; items[i] != NULL; i++)
      json_array_append_new(a, json_string(items[i]));
  }
  return a;
}

/* The identification keys (models/README.md, "Identification"). */
static void id_fields(json_t *o, const FsModel *m)
{
  set(o, "pci_ids", id_list(m->ids.pci_ids));
  set(o, "product_names", id_list(m->ids.product_names));
  if (m->kind == FS_MODEL_GPU) {
    const FsGpuModel *g = &m->u.gpu;
    char cc[16];
    g_snprintf(cc, sizeof cc, "%u.%u", g->compute_capability / 10, g->compute_capability % 10);
    set(o, "compute_capability", g->compute_capability > 0 ? json_string(cc) : json_null());
    set(o, "form_factor", g->form_factor != NULL && *g->form_factor ? json_string(g->form_factor)
                                                                   : json_null());
    set(o, "reference_cpu", ref(g->reference_cpu));
    set(o, "reference_nic", ref(g->reference_nic));
  } else if (m->kind == FS_MODEL_CPU) {
    set(o, "cpuid", id_list(m->ids.cpuid));
    set(o, "cores", json_integer(m->u.cpu.cores));
    set(o, "threads_per_core", json_integer(m->u.cpu.threads_per_core));
  }
}

json_t *fs_model_to_json(const FsModel *m)
{
  g_return_val_if_fail(m != NULL, NULL);
  json_t *o = json_object();
  set(o, "name", json_string(m->name));
  set(o, "kind", json_string(fs_model_kind_names[m->kind]));
  set(o, "description", json_string(m->description ? m->description : ""));
  set(o, "source", json_string(m->source ? m->source : ""));
  set(o, "file", m->file ? json_string(m->file) : json_null());
  set(o, "line", json_integer(m->line));
  if (m->calibration != NULL)
    set(o, "calibration", json_string(m->calibration));
  switch (m->kind) {
  case FS_MODEL_LINK: link_fields(o, &m->u.link); break;
  case FS_MODEL_SWITCH: switch_fields(o, &m->u.sw); break;
  case FS_MODEL_GPU: gpu_fields(o, &m->u.gpu); break;
  case FS_MODEL_CPU: cpu_fields(o, &m->u.cpu); break;
  case FS_MODEL_NIC: nic_fields(o, &m->u.nic); break;
  default: g_assert_not_reached();
  }
  if (m->kind == FS_MODEL_GPU || m->kind == FS_MODEL_CPU || m->kind == FS_MODEL_NIC)
    id_fields(o, m);
  return o;
}

json_t *fs_catalog_to_json(const FsCatalog *cat, int kind)
{
  g_return_val_if_fail(cat != NULL, NULL);
  json_t *a = json_array();
  for (guint i = 0; i < fs_catalog_size(cat); i++) {
    const FsModel *m = fs_catalog_nth(cat, i);
    if (kind < 0 || (int)m->kind == kind)
      json_array_append_new(a, fs_model_to_json(m));
  }
  return a;
}
