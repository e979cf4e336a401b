/* cost.c — the planner's money and energy: a topology's power and price
 * from the catalog (every part that has a figure; the rest listed by
 * model), and the per-design arithmetic of plan.h's header comment. */
#include <math.h>
#include <string.h>

#include "plan/plan.h"

/* Hours in a year of 365 days: the write-off period's unit. */
#define HOURS_PER_YEAR 8760.0

static const char *const rank_names[] = {
#define X(id, str) str,
  FS_PLAN_RANKS(X)
#undef X
};

const char *fs_plan_rank_name(FsPlanRank r)
{
  return (guint)r < FS_PLAN_RANK_N ? rank_names[r] : "?";
}

gboolean fs_plan_rank_from_name(const char *s, FsPlanRank *out)
{
  for (guint i = 0; i < FS_PLAN_RANK_N; i++)
    if (g_ascii_strcasecmp(s, rank_names[i]) == 0) {
      *out = (FsPlanRank)i;
      return TRUE;
    }
  return FALSE;
}

void fs_plan_cost_inputs_init(FsPlanCostInputs *in)
{
  memset(in, 0, sizeof *in);
  in->gpu_hour_price = -1;
  in->pue = 1.0;
  in->amortize_years = 4.0;
}

void fs_plan_cost_compute(const FsPlanCostInputs *in, guint gpus, double it_power_w,
                          double capex_usd, double step_s, double tokens_per_step,
                          FsPlanCost *out)
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

/* Per model: how many parts of it the topology has. */
typedef struct {
  const FsModel *model;
  guint count;
} PartCount;

static int part_cmp(const void *a, const void *b)
{
  const PartCount *x = a, *y = b;
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

static char *part_list(const PartCount *parts, guint n, gboolean want_price)
{
  GString *s = NULL;
  for (guint i = 0; i < n; i++) {
    double power, price;
    part_power_price(parts[i].model, &power, &price);
    if ((want_price ? price : power) > 0)
      continue;
    if (s == NULL)
      s = g_string_new(NULL);
    else
      g_string_append(s, ", ");
    g_string_append_printf(s, "%s ×%u", parts[i].model->name, parts[i].count);
  }
  return s ? g_string_free(s, FALSE) : NULL;
}

void fs_plan_system_costs(const FsTopo *topo, FsPlanSystem *sys)
{
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_autoptr(GArray) parts = g_array_new(FALSE, FALSE, sizeof(PartCount));
  sys->it_power_w = sys->capex_usd = 0;
  sys->n_parts = 0;
  for (guint i = 0; i < fs_topo_n_nodes(topo); i++) {
    const FsTopoNode *n = fs_topo_node(topo, i);
    double power, price;
    part_power_price(n->model, &power, &price);
    sys->it_power_w += power;
    sys->capex_usd += price;
    sys->n_parts++;
    /* Lookups only; the list is sorted by name below. */
    gpointer at = g_hash_table_lookup(seen, n->model);
    if (at == NULL) {
      PartCount pc = { n->model, 1 };
      g_array_append_val(parts, pc);
      g_hash_table_insert(seen, (gpointer)n->model, GUINT_TO_POINTER(parts->len));
    } else {
      g_array_index(parts, PartCount, GPOINTER_TO_UINT(at) - 1).count++;
    }
  }
  g_array_sort(parts, part_cmp);
  g_free(sys->unpriced);
  g_free(sys->unpowered);
  sys->unpriced = part_list((PartCount *)parts->data, parts->len, TRUE);
  sys->unpowered = part_list((PartCount *)parts->data, parts->len, FALSE);
}
