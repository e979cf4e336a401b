/* cost.c — the planner's money and energy: a topology's power and price
 * from the catalog (every part that has a figure; the rest listed by
 * model; fabric switches whole or by the share of their ports in use),
 * and the per-design arithmetic of plan.h's header comment. */
#include <math.h>
#include <string.h>

#include "plan/plan.h"
#include "util/names.h"

/* Hours in a year of 365 days: the write-off period's unit. */
#define HOURS_PER_YEAR 8760.0

static const char *const rank_names[] = { FS_PLANNER_RANKS(FS_NAMES_ENTRY) };

static const char *const share_names[] = { FS_PLANNER_SHARES(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE(FsPlannerRank, fs_planner_rank, rank_names, FS_PLANNER_RANK_N, fs_names_index_nocase)
FS_NAMES_DEFINE(FsPlannerShare, fs_planner_share, share_names, FS_PLANNER_SHARE_N, fs_names_index_nocase)

void fs_planner_cost_inputs_init(FsPlannerCostInputs *in)
{
  memset(in, 0, sizeof *in);
  in->gpu_hour_price = -1;
  in->pue = 1.0;
  in->amortize_years = 4.0;
}

void fs_planner_cost_compute(const FsPlannerCostInputs *in, guint gpus, double it_power_w,
                             double capex_usd, double step_s, double tokens_per_step,
                             FsPlannerCost *out)
{
  memset(out, 0, sizeof *out);
  out->capex_usd = capex_usd;
  out->energy_j_per_step = it_power_w * in->pue * step_s;
  double kwh_step = out->energy_j_per_step / 3.6e6;
  double steps_per_mtok = tokens_per_step > 0 ? 1e6 / tokens_per_step : NAN;
  out->kwh_per_mtok = kwh_step * steps_per_mtok;
  if (in->gpu_hour_price >= 0) {
    out->gpu_hour_price = in->gpu_hour_price;
  } else if (capex_usd > 0 && gpus > 0 && in->amortize_years > 0) {
    out->gpu_hour_price = capex_usd / gpus / (in->amortize_years * HOURS_PER_YEAR);
    out->rate_from_capex = TRUE;
  } else {
    out->gpu_hour_price = NAN;
  }
  out->usd_per_step = gpus * out->gpu_hour_price * step_s / 3600.0 + kwh_step * in->kwh_price;
  out->usd_per_mtok = out->usd_per_step * steps_per_mtok;
  if (in->tokens > 0 && tokens_per_step > 0) {
    double steps = in->tokens / tokens_per_step;
    out->train_s = steps * step_s;
    out->train_usd = steps * out->usd_per_step;
    out->train_kwh = steps * kwh_step;
  }
}

static int part_cmp(const void *a, const void *b)
{
  const FsPlannerPart *x = a, *y = b;
  return strcmp(x->model->name, y->model->name);
}

static void part_power_price(const FsModel *m, double *power, double *price)
{
  *power = *price = 0;
  switch (m->kind) {
  case FS_MODEL_GPU:
    *power = m->u.gpu.tdp;
    *price = m->u.gpu.price;
    break;
  case FS_MODEL_CPU:
    *power = m->u.cpu.tdp;
    *price = m->u.cpu.price;
    break;
  case FS_MODEL_SWITCH:
    *power = m->u.sw.power;
    *price = m->u.sw.price;
    break;
  case FS_MODEL_NIC:
    *power = m->u.nic.power;
    *price = m->u.nic.price;
    break;
  default:
    break;
  }
}

static char *part_list(const FsPlannerPart *parts, guint n, gboolean want_price)
{
  GString *s = NULL;
  for (guint i = 0; i < n; i++) {
    if ((want_price ? parts[i].unit_price : parts[i].unit_power_w) > 0)
      continue;
    if (s == NULL)
      s = g_string_new(NULL);
    else
      g_string_append(s, ", ");
    g_string_append_printf(s, "%s ×%u", parts[i].model->name, parts[i].count);
  }
  return s ? g_string_free(s, FALSE) : NULL;
}

double fs_planner_port_share(const FsTopo *topo, guint node)
{
  const FsModel *m = fs_topo_node(topo, node)->model;
  if (m->kind != FS_MODEL_SWITCH || m->u.sw.port_link == NULL || m->u.sw.ports == 0)
    return 1;
  double capacity = m->u.sw.ports * m->u.sw.port_link->u.link.bandwidth;
  guint n;
  const FsTopoAdj *adj = fs_topo_adj(topo, node, &n);
  double used = 0;
  for (guint e = 0; e < n; e++)
    used += fs_topo_link(topo, adj[e].link)->bandwidth;
  if (!(capacity > 0) || used <= 0)
    return 1;
  return MIN(1.0, used / capacity);
}

/* See plan.h. Parts are GPUs, CPUs, switches and NICs, grouped by model; a fabric switch (one
 * with no host) counts as a fraction of a switch under FS_PLANNER_SHARE_PORTS. Totals are
 * summed in name order so that they are byte-identical across runs. Linear in the nodes. */
void fs_planner_system_costs(const FsTopo *topo, FsPlannerShare share, FsPlannerSystem *sys)
{
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_autoptr(GArray) parts = g_array_new(FALSE, TRUE, sizeof(FsPlannerPart));
  sys->n_parts = 0;
  for (guint i = 0; i < fs_topo_n_nodes(topo); i++) {
    const FsTopoNode *n = fs_topo_node(topo, i);
    double power, price;
    part_power_price(n->model, &power, &price);
    if (n->model->kind != FS_MODEL_GPU && n->model->kind != FS_MODEL_CPU &&
        n->model->kind != FS_MODEL_SWITCH && n->model->kind != FS_MODEL_NIC)
      continue;
    gboolean fabric = n->model->kind == FS_MODEL_SWITCH && n->host < 0;
    double units = fabric && share == FS_PLANNER_SHARE_PORTS ? fs_planner_port_share(topo, i) : 1;
    sys->n_parts++;
    /* Lookups only; the list is sorted by name below. */
    gpointer at = g_hash_table_lookup(seen, n->model);
    FsPlannerPart *pp;
    if (at == NULL) {
      FsPlannerPart part = { .model = n->model, .unit_price = price, .unit_power_w = power };
      g_array_append_val(parts, part);
      g_hash_table_insert(seen, (gpointer)n->model, GUINT_TO_POINTER(parts->len));
      pp = &g_array_index(parts, FsPlannerPart, parts->len - 1);
    } else {
      pp = &g_array_index(parts, FsPlannerPart, GPOINTER_TO_UINT(at) - 1);
    }
    pp->count++;
    pp->units += units;
    pp->fabric = pp->fabric || fabric;
  }
  g_array_sort(parts, part_cmp);
  /* Totals in name order, so that the sums are the same on every run. */
  sys->it_power_w = sys->capex_usd = 0;
  for (guint i = 0; i < parts->len; i++) {
    FsPlannerPart *pp = &g_array_index(parts, FsPlannerPart, i);
    pp->price_usd = pp->units * pp->unit_price;
    pp->power_w = pp->units * pp->unit_power_w;
    sys->it_power_w += pp->power_w;
    sys->capex_usd += pp->price_usd;
  }
  g_free(sys->unpriced);
  g_free(sys->unpowered);
  g_free(sys->parts);
  sys->unpriced = part_list((FsPlannerPart *)parts->data, parts->len, TRUE);
  sys->unpowered = part_list((FsPlannerPart *)parts->data, parts->len, FALSE);
  sys->n_models = parts->len;
  sys->parts = (FsPlannerPart *)g_array_free(g_steal_pointer(&parts), FALSE);
}
