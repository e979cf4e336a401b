/* plan.c — see plan.h. */
#include "report/plan.h"
#include "report/format.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/units.h"

#define PLAN_SCHEMA_VERSION 1

/* ---- output ---- */

/* A JSON number, or null where the value is unknown (NaN, infinite). */
static json_t *jnum(double v)
{
  return isfinite(v) ? json_real(v) : json_null();
}

static char *money(double v)
{
  if (!isfinite(v))
    return g_strdup("n/a");
  if (v >= 1e6)
    return g_strdup_printf("$%.2f M", v / 1e6);
  if (v >= 1e4)
    return g_strdup_printf("$%.0f", v);
  if (v >= 1)
    return g_strdup_printf("$%.2f", v);
  if (v >= 0.01)
    return g_strdup_printf("$%.4f", v);
  return g_strdup_printf("$%.3g", v);
}

static char *duration(double s)
{
  if (s >= 2 * 86400)
    return g_strdup_printf("%.1f days", s / 86400);
  if (s >= 2 * 3600)
    return g_strdup_printf("%.1f h", s / 3600);
  return g_strdup_printf("%.0f s", s);
}

/* A count with a decimal suffix: "2 T", "300 G", "4.19 M". */
static char *count_text(double v)
{
  static const struct { double f; const char *s; } u[] = { {1e12, " T"}, {1e9, " G"}, {1e6, " M"}, {1e3, " K"} };
  for (guint i = 0; i < G_N_ELEMENTS(u); i++)
    if (v >= u[i].f)
      return g_strdup_printf("%.4g%s", v / u[i].f, u[i].s);
  return g_strdup_printf("%.4g", v);
}

static void layout_text(const FsPlannerDesign *d, char *buf, gsize len)
{
  char sched[48] = "";
  if (d->pp > 1 && d->schedule == FS_PP_INTERLEAVED)
    g_snprintf(sched, sizeof sched, " (interleaved ×%u)", d->vp);
  else if (d->pp > 1)
    g_snprintf(sched, sizeof sched, " (%s)", fs_pp_schedule_name(d->schedule));
  g_snprintf(buf, len, "tp %u%s, pp %u%s, dp %u, cp %u, ep %u, micro-batch %u, ZeRO-%u, recompute %s",
             d->tp, d->sequence_parallel ? "+SP" : "", d->pp, sched, d->dp, d->cp, d->ep,
             d->micro_batch, d->zero_stage, fs_recompute_name(d->recompute));
}

static void print_header(GString *out, const FsPlanner *p, const FsPlannerSpec *s)
{
  const FsPlannerStats *st = fs_planner_stats(p);
  if (s->target_step_s > 0)
    g_string_append_printf(out, "plan: %s, target step time %.4g s, ranked by %s\n", s->workload, s->target_step_s,
           fs_planner_rank_name(s->rank_by));
  else
    g_string_append_printf(out, "plan: %s, target %.6g tokens/s, ranked by %s\n", s->workload, s->target_tokens_per_s,
           fs_planner_rank_name(s->rank_by));
  g_string_append_printf(out, "searched %u systems (fabric × GPU count), %u layouts: %u break a rule, %u fit no memory "
         "setting, %u cannot reach the target even at peak FLOP/s (%u slower memory settings skipped); "
         "%u designs simulated, %u meet the target%s\n",
         st->systems, st->layouts, st->structure, st->memory, st->bound, st->dominated, st->simulated,
         st->meets, s->cost.budget > 0 ? " within budget" : "");
  const FsPlannerCostInputs *c = &s->cost;
  if (c->gpu_hour_price >= 0)
    g_string_append_printf(out, "cost basis: $%.4g per GPU-hour (given)", c->gpu_hour_price);
  else
    g_string_append_printf(out, "cost basis: catalog capex amortized over %.4g years", c->amortize_years);
  g_string_append_printf(out, ", $%.4g per kWh, PUE %.3g; energy = catalog TDP/power of every part × PUE; "
         "fabric switches %s\n", c->kwh_price, c->pue,
         c->switch_share == FS_PLANNER_SHARE_PORTS ? "by the share of their ports in use" : "whole");
}

static void print_system(GString *out, const FsPlanner *p, const FsPlannerSystem *sys)
{
  (void)p;
  g_autofree char *capex = money(sys->capex_usd);
  g_string_append_printf(out, "  %s with %u × %s%s: %.1f kW IT power, capex %s of priced parts",
         sys->fabric, sys->gpus, sys->gpu_name, sys->nodes ? "" : " (fixed size)",
         sys->it_power_w / 1e3, sys->capex_usd > 0 ? capex : "unknown");
  if (sys->unpriced)
    g_string_append_printf(out, "; no list price in the catalog for %s", sys->unpriced);
  if (sys->unpowered)
    g_string_append_printf(out, "; no power figure for %s", sys->unpowered);
  g_string_append_printf(out, "\n    parts:");
  for (guint i = 0; i < sys->n_models; i++) {
    const FsPlannerPart *pt = &sys->parts[i];
    g_string_append_printf(out, "%s %s ×%u", i ? ";" : "", pt->model->name, pt->count);
    if (pt->units != pt->count)
      g_string_append_printf(out, " (%.2f by ports in use)", pt->units);
    g_autofree char *price = money(pt->price_usd);
    if (pt->unit_price > 0)
      g_string_append_printf(out, " %s", price);
    else
      g_string_append_printf(out, " no price");
    if (pt->unit_power_w > 0)
      g_string_append_printf(out, ", %.3g kW", pt->power_w / 1e3);
    else
      g_string_append_printf(out, ", no power");
  }
  g_string_append_printf(out, "\n");
}

static void print_design(GString *out, const FsPlanner *p, guint rank, const FsPlannerDesign *d)
{
  const FsPlannerSpec *s = fs_planner_spec(p);
  const FsPlannerSystem *sys = fs_planner_system(p, d->system);
  char lay[256];
  layout_text(d, lay, sizeof lay);
  g_autofree char *nodes = sys->nodes ? g_strdup_printf(" (%u nodes)", sys->nodes) : g_strdup("");
  g_string_append_printf(out, "\n#%u  %s, %u × %s%s: %s\n", rank, sys->fabric, d->gpus, sys->gpu_name, nodes, lay);
  if (!d->ok) {
    g_string_append_printf(out, "    %s\n", d->why);
    return;
  }
  g_autofree char *ps = money(d->cost.usd_per_step);
  g_autofree char *pm = money(d->cost.usd_per_mtok);
  g_string_append_printf(out, "    step %.3f s, %.0f tokens/s, MFU %.1f %%, %.1f of %.1f GiB per GPU\n", d->step_s,
         d->tokens_per_s, 100 * d->mfu, d->mem_total / 1073741824.0, d->mem_capacity / 1073741824.0);
  g_string_append_printf(out, "    %s per step, %s and %.3g kWh per million tokens ($%.3g per GPU-hour%s)\n", ps, pm,
         d->cost.kwh_per_mtok, d->cost.gpu_hour_price, d->cost.rate_from_capex ? ", amortized capex" : "");
  if (s->cost.tokens > 0) {
    g_autofree char *tt = duration(d->cost.train_s);
    g_autofree char *tu = money(d->cost.train_usd);
    g_autofree char *tk = count_text(s->cost.tokens);
    g_string_append_printf(out, "    %s tokens: %s, %s, %.4g MWh\n", tk, tt, tu, d->cost.train_kwh / 1e3);
  }
  g_string_append_printf(out, "    why: %s\n", d->why);
}

static void print_text(GString *out, const FsPlanner *p, guint top)
{
  const FsPlannerSpec *s = fs_planner_spec(p);
  const FsPlannerStats *st = fs_planner_stats(p);
  print_header(out, p, s);
  guint n = fs_planner_n_designs(p);
  guint k = top ? MIN(top, n) : n;
  if (n == 0)
    return;
  g_string_append_printf(out, "\nsystems of the designs below:\n");
  g_autofree gboolean *shown = g_new0(gboolean, fs_planner_n_systems(p));
  for (guint i = 0; i < k; i++) {
    guint si = fs_planner_design(p, i)->system;
    if (!shown[si])
      print_system(out, p, fs_planner_system(p, si));
    shown[si] = TRUE;
  }
  if (st->meets == 0)
    g_string_append_printf(out, "\nNo design meets the target%s; the closest:\n", s->cost.budget > 0 ? " within budget" : "");
  for (guint i = 0; i < k; i++)
    print_design(out, p, i + 1, fs_planner_design(p, i));
}

static json_t *system_json(const FsPlannerSystem *sys)
{
  json_t *o = json_object();
  json_object_set_new(o, "fabric", json_string(sys->fabric));
  json_object_set_new(o, "file", json_string(sys->path));
  json_object_set_new(o, "gpus", json_integer(sys->gpus));
  json_object_set_new(o, "nodes", sys->nodes ? json_integer(sys->nodes) : json_null());
  json_object_set_new(o, "gpus_per_node", json_integer(sys->gpus_per_node));
  json_object_set_new(o, "gpu", json_string(sys->gpu_name));
  json_object_set_new(o, "intra_node_path", json_string(sys->intra_path));
  json_object_set_new(o, "it_power_w", json_real(sys->it_power_w));
  json_object_set_new(o, "capex_usd", sys->capex_usd > 0 ? json_real(sys->capex_usd) : json_null());
  json_object_set_new(o, "unpriced", sys->unpriced ? json_string(sys->unpriced) : json_null());
  json_object_set_new(o, "unpowered", sys->unpowered ? json_string(sys->unpowered) : json_null());
  json_t *parts = json_array();
  for (guint i = 0; i < sys->n_models; i++) {
    const FsPlannerPart *pt = &sys->parts[i];
    json_t *q = json_object();
    json_object_set_new(q, "model", json_string(pt->model->name));
    json_object_set_new(q, "count", json_integer(pt->count));
    json_object_set_new(q, "units", json_real(pt->units));
    json_object_set_new(q, "fabric_switch", json_boolean(pt->fabric));
    json_object_set_new(q, "unit_price_usd", pt->unit_price > 0 ? json_real(pt->unit_price) : json_null());
    json_object_set_new(q, "unit_power_w", pt->unit_power_w > 0 ? json_real(pt->unit_power_w) : json_null());
    json_object_set_new(q, "price_usd", pt->unit_price > 0 ? json_real(pt->price_usd) : json_null());
    json_object_set_new(q, "power_w", pt->unit_power_w > 0 ? json_real(pt->power_w) : json_null());
    json_array_append_new(parts, q);
  }
  json_object_set_new(o, "parts", parts);
  return o;
}

/* Builds the JSON object of the design ranked rank: its system, layout, whether it ran, met the
 * target and fits the budget, step time, throughput, MFU, exposed time per kind, memory and
 * cost. Training totals are null when the spec gives no token count. The caller owns the
 * returned reference. */
static json_t *design_json(const FsPlanner *p, guint rank, const FsPlannerDesign *d)
{
  json_t *o = json_object();
  json_object_set_new(o, "rank", json_integer(rank));
  json_object_set_new(o, "system", json_integer(d->system));
  json_object_set_new(o, "fabric", json_string(fs_planner_system(p, d->system)->fabric));
  json_object_set_new(o, "gpus", json_integer(d->gpus));
  json_t *l = json_object();
  json_object_set_new(l, "tp", json_integer(d->tp));
  json_object_set_new(l, "pp", json_integer(d->pp));
  json_object_set_new(l, "dp", json_integer(d->dp));
  json_object_set_new(l, "cp", json_integer(d->cp));
  json_object_set_new(l, "ep", json_integer(d->ep));
  json_object_set_new(l, "sequence_parallel", json_boolean(d->sequence_parallel));
  json_object_set_new(l, "schedule", json_string(fs_pp_schedule_name(d->schedule)));
  json_object_set_new(l, "virtual_stages", json_integer(MAX(d->vp, 1u)));
  json_object_set_new(l, "micro_batch", json_integer(d->micro_batch));
  json_object_set_new(l, "microbatches", json_integer(d->microbatches));
  json_object_set_new(l, "zero_stage", json_integer(d->zero_stage));
  json_object_set_new(l, "recompute", json_string(fs_recompute_name(d->recompute)));
  json_object_set_new(o, "layout", l);
  json_object_set_new(o, "ok", json_boolean(d->ok));
  json_object_set_new(o, "error", d->error ? json_string(d->error) : json_null());
  json_object_set_new(o, "meets_target", json_boolean(d->meets));
  json_object_set_new(o, "in_budget", json_boolean(d->in_budget));
  json_object_set_new(o, "step_time_s", jnum(d->step_s));
  json_object_set_new(o, "tokens_per_s", jnum(d->tokens_per_s));
  json_object_set_new(o, "mfu", jnum(d->mfu));
  json_object_set_new(o, "peak_bound_step_time_s", jnum(d->bound_step_s));
  json_t *ex = json_object();
  json_object_set_new(ex, "tp", jnum(d->tp_s));
  json_object_set_new(ex, "cp", jnum(d->cp_s));
  json_object_set_new(ex, "ep", jnum(d->ep_s));
  json_object_set_new(ex, "pp", jnum(d->pp_s));
  json_object_set_new(ex, "dp", jnum(d->dp_s));
  json_object_set_new(ex, "bubble", jnum(d->bubble_s));
  json_object_set_new(o, "exposed_s", ex);
  json_object_set_new(o, "memory_bytes", json_integer((json_int_t)d->mem_total));
  json_object_set_new(o, "memory_capacity_bytes", json_integer((json_int_t)d->mem_capacity));
  json_t *c = json_object();
  json_object_set_new(c, "usd_per_gpu_hour", jnum(d->cost.gpu_hour_price));
  json_object_set_new(c, "rate_from_capex", json_boolean(d->cost.rate_from_capex));
  json_object_set_new(c, "usd_per_step", jnum(d->cost.usd_per_step));
  json_object_set_new(c, "usd_per_mtok", jnum(d->cost.usd_per_mtok));
  json_object_set_new(c, "kwh_per_mtok", jnum(d->cost.kwh_per_mtok));
  json_object_set_new(c, "energy_j_per_step", jnum(d->cost.energy_j_per_step));
  json_object_set_new(c, "train_s", fs_planner_spec(p)->cost.tokens > 0 ? jnum(d->cost.train_s) : json_null());
  json_object_set_new(c, "train_usd", fs_planner_spec(p)->cost.tokens > 0 ? jnum(d->cost.train_usd) : json_null());
  json_object_set_new(c, "train_kwh", fs_planner_spec(p)->cost.tokens > 0 ? jnum(d->cost.train_kwh) : json_null());
  json_object_set_new(c, "capex_usd", d->cost.capex_usd > 0 ? json_real(d->cost.capex_usd) : json_null());
  json_object_set_new(o, "cost", c);
  json_object_set_new(o, "why", json_string(d->why ? d->why : ""));
  return o;
}

/* Appends the planner's result to out as one JSON document: the spec's target and cost inputs,
 * the search counters (how many layouts were pruned, simulated, failed), every candidate system
 * and the best top designs (all of them when top is 0). */
static void print_json(GString *out, const FsPlanner *p, guint top)
{
  const FsPlannerSpec *s = fs_planner_spec(p);
  const FsPlannerStats *st = fs_planner_stats(p);
  json_t *o = json_object();
  json_object_set_new(o, "schema_version", json_integer(PLAN_SCHEMA_VERSION));
  json_object_set_new(o, "workload", json_string(s->workload));
  json_t *t = json_object();
  json_object_set_new(t, "step_time_s", s->target_step_s > 0 ? json_real(s->target_step_s) : json_null());
  json_object_set_new(t, "tokens_per_s", s->target_tokens_per_s > 0 ? json_real(s->target_tokens_per_s) : json_null());
  json_object_set_new(o, "target", t);
  json_object_set_new(o, "rank_by", json_string(fs_planner_rank_name(s->rank_by)));
  json_t *c = json_object();
  json_object_set_new(c, "gpu_hour_price", s->cost.gpu_hour_price >= 0 ? json_real(s->cost.gpu_hour_price) : json_null());
  json_object_set_new(c, "kwh_price", json_real(s->cost.kwh_price));
  json_object_set_new(c, "pue", json_real(s->cost.pue));
  json_object_set_new(c, "amortize_years", json_real(s->cost.amortize_years));
  json_object_set_new(c, "switch_share", json_string(fs_planner_share_name(s->cost.switch_share)));
  json_object_set_new(c, "tokens", s->cost.tokens > 0 ? json_real(s->cost.tokens) : json_null());
  json_object_set_new(c, "budget", s->cost.budget > 0 ? json_real(s->cost.budget) : json_null());
  json_object_set_new(o, "cost_inputs", c);
  json_t *se = json_object();
  json_object_set_new(se, "systems", json_integer(st->systems));
  json_object_set_new(se, "layouts", json_integer(st->layouts));
  json_object_set_new(se, "pruned_structure", json_integer(st->structure));
  json_object_set_new(se, "pruned_memory", json_integer(st->memory));
  json_object_set_new(se, "pruned_bound", json_integer(st->bound));
  json_object_set_new(se, "dominated", json_integer(st->dominated));
  json_object_set_new(se, "simulated", json_integer(st->simulated));
  json_object_set_new(se, "failed", json_integer(st->failed));
  json_object_set_new(se, "meets", json_integer(st->meets));
  json_object_set_new(o, "search", se);
  json_t *sy = json_array();
  for (guint i = 0; i < fs_planner_n_systems(p); i++)
    json_array_append_new(sy, system_json(fs_planner_system(p, i)));
  json_object_set_new(o, "systems", sy);
  json_t *ds = json_array();
  guint n = fs_planner_n_designs(p), k = top ? MIN(top, n) : n;
  for (guint i = 0; i < k; i++)
    json_array_append_new(ds, design_json(p, i + 1, fs_planner_design(p, i)));
  json_object_set_new(o, "designs", ds);
  fs_report_append_json(out, o, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
}

static void csv_str(GString *s, const char *v)
{
  if (strpbrk(v, ",\"\n") == NULL) {
    g_string_append(s, v);
    return;
  }
  g_string_append_c(s, '"');
  for (const char *c = v; *c; c++) {
    if (*c == '"')
      g_string_append_c(s, '"');
    g_string_append_c(s, *c);
  }
  g_string_append_c(s, '"');
}

static void csv_num(GString *s, double v)
{
  if (isfinite(v))
    g_string_append_printf(s, "%.9g", v);
}

static void print_csv(GString *out, const FsPlanner *p, guint top)
{
  GString *s = out;
  g_string_append(s, "rank,fabric,gpus,gpu,nodes,tp,pp,dp,cp,ep,sequence_parallel,schedule,"
                            "virtual_stages,micro_batch,zero_stage,recompute,status,meets_target,in_budget,step_time_s,"
                            "tokens_per_s,mfu,memory_gib,usd_per_gpu_hour,usd_per_step,usd_per_mtok,"
                            "kwh_per_mtok,train_s,train_usd,train_kwh,capex_usd,why\n");
  guint n = fs_planner_n_designs(p), k = top ? MIN(top, n) : n;
  gboolean tokens = fs_planner_spec(p)->cost.tokens > 0;
  for (guint i = 0; i < k; i++) {
    const FsPlannerDesign *d = fs_planner_design(p, i);
    const FsPlannerSystem *sys = fs_planner_system(p, d->system);
    g_string_append_printf(s, "%u,", i + 1);
    csv_str(s, sys->fabric);
    g_string_append_printf(s, ",%u,", d->gpus);
    csv_str(s, sys->gpu_name);
    g_string_append_printf(s, ",%u,%u,%u,%u,%u,%u,%d,%s,%u,%u,%u,%s,%s,%d,%d,", sys->nodes, d->tp,
                           d->pp, d->dp, d->cp, d->ep, d->sequence_parallel,
                           fs_pp_schedule_name(d->schedule), MAX(d->vp, 1u), d->micro_batch, d->zero_stage,
                           fs_recompute_name(d->recompute), d->ok ? "ok" : "error", d->meets,
                           d->in_budget);
    double v[] = { d->step_s, d->tokens_per_s, d->mfu, d->mem_total / 1073741824.0,
                   d->cost.gpu_hour_price, d->cost.usd_per_step, d->cost.usd_per_mtok,
                   d->cost.kwh_per_mtok, tokens ? d->cost.train_s : NAN,
                   tokens ? d->cost.train_usd : NAN, tokens ? d->cost.train_kwh : NAN,
                   d->cost.capex_usd > 0 ? d->cost.capex_usd : NAN };
    for (guint j = 0; j < G_N_ELEMENTS(v); j++) {
      if (d->ok || j == 3)
        csv_num(s, v[j]);
      g_string_append_c(s, ',');
    }
    csv_str(s, d->why ? d->why : "");
    g_string_append_c(s, '\n');
  }
}

void fs_report_plan_failure(GString *out, const FsPlanner *p)
{
  const FsPlannerSpec *s = fs_planner_spec(p);
  const FsPlannerStats *st = fs_planner_stats(p);
  GString *m = g_string_new("no design meets the target");
  if (s->cost.budget > 0)
    g_string_append(m, " within the budget");
  if (st->simulated == 0) {
    if (st->layouts == 0)
      g_string_append(m, ": no layout to try (tp must divide the GPUs per node, cp and pp the GPU "
                      "count; check --tp, --pp, --cp, --ep)");
    else if (st->best_bound_gpus > 0)
      g_string_append_printf(m, ": even at peak FLOP/s the best layout that fits needs %.4g s per "
                             "step (%u GPUs); more GPUs or a faster GPU are needed",
                             st->best_bound_s, st->best_bound_gpus);
    else if (st->memory > 0)
      g_string_append_printf(m, ": no layout fits in GPU memory (closest: %s)", st->memory_example);
    else if (st->structure > 0)
      g_string_append_printf(m, ": no layout passes the workload's rules (e.g. %s)", st->structure_example);
  } else if (st->meets == 0 && fs_planner_n_designs(p) > 0 && fs_planner_design(p, 0)->ok) {
    const FsPlannerDesign *d = fs_planner_design(p, 0);
    g_string_append_printf(m, "; the closest, #1 above, takes %.4g s per step (%.0f tokens/s)",
                           d->step_s, d->tokens_per_s);
  }
  g_string_append(out, m->str);
  g_string_free(m, TRUE);
}

void fs_report_plan(GString *out, FsReportFormat fmt, const FsPlanner *p, guint top)
{
  if (fmt == FS_REPORT_JSON)
    print_json(out, p, top);
  else if (fmt == FS_REPORT_CSV)
    print_csv(out, p, top);
  else
    print_text(out, p, top);
}
