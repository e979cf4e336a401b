/* plan.c — the planner's object and its run: the candidates of space.c
 * simulated on the sweep module's thread pool (one training step each,
 * analytic flows, data-parallel collectives timed alone), then priced
 * (cost.c), ranked, and given a one-line reason each. */
#include <math.h>
#include <string.h>

#include "core/sim.h"
#include "plan/plan-private.h"
#include "sweep/sweep.h"
#include "util/error.h"
#include "util/units.h"
#include "workload/executor.h"

G_DEFINE_QUARK(fs-planner-error-quark, fs_planner_error)

void fs_planner_spec_init(FsPlannerSpec *spec)
{
  memset(spec, 0, sizeof *spec);
  fs_planner_cost_inputs_init(&spec->cost);
  spec->rank_by = FS_PLANNER_RANK_COST;
}

static void system_clear(FsPlannerSystem *s)
{
  g_free(s->fabric);
  g_free(s->path);
  g_free(s->gpu_name);
  g_free(s->intra_path);
  g_free(s->unpriced);
  g_free(s->unpowered);
  g_free(s->parts);
}

static void design_clear(FsPlannerDesign *d)
{
  g_clear_pointer(&d->error, g_free);
  g_clear_pointer(&d->why, g_free);
}

static gboolean check_list(const guint *v, guint n, guint lo, guint hi, const char *what,
                           GError **error)
{
  for (guint i = 0; i < n; i++)
    if (v[i] < lo || v[i] > hi) {
      g_set_error(error, FS_PLANNER_ERROR, FS_PLANNER_ERROR_INPUT, "%s must be %u to %u, not %u", what, lo,
                  hi, v[i]);
      return FALSE;
    }
  return TRUE;
}

/* See plan.h: checks the targets, cost inputs, search lists and -D definitions
 * (FS_PLANNER_ERROR_INPUT names the bad one), then returns a planner that owns copies of the
 * spec's strings, fills the lists left empty with their defaults (micro-batches 1, 2, 4; ZeRO 1
 * to 3; 1F1B; every recompute policy; vp 2) and borrows cat, eff and nccl, which must outlive
 * it. */
FsPlanner *fs_planner_new(const FsPlannerSpec *spec, const FsCatalog *cat, const FsEfficiency *eff,
                          const FsNcclParams *nccl, GError **error)
{
  const FsPlannerCostInputs *c = &spec->cost;
  if (spec->workload == NULL || spec->fabrics == NULL || spec->fabrics[0] == NULL) {
    g_set_error(error, FS_PLANNER_ERROR, FS_PLANNER_ERROR_INPUT, "a plan needs a workload and at least one fabric");
    return NULL;
  }
  if ((spec->target_tokens_per_s > 0) == (spec->target_step_s > 0) ||
      !isfinite(spec->target_tokens_per_s) || !isfinite(spec->target_step_s)) {
    g_set_error(error, FS_PLANNER_ERROR, FS_PLANNER_ERROR_INPUT,
                "give exactly one target: tokens per second or step time, greater than 0");
    return NULL;
  }
  if (!(c->pue >= 1 && c->pue <= 10) || c->kwh_price < 0 || c->tokens < 0 || c->budget < 0 ||
      !(c->amortize_years > 0) || !isfinite(c->gpu_hour_price) || !isfinite(c->kwh_price) ||
      !isfinite(c->tokens) || !isfinite(c->budget) || !isfinite(c->amortize_years) ||
      (guint)c->switch_share >= FS_PLANNER_SHARE_N) {
    g_set_error(error, FS_PLANNER_ERROR, FS_PLANNER_ERROR_INPUT,
                "cost inputs out of range: PUE 1 to 10, prices, tokens and budget >= 0, "
                "amortization > 0 years, a known switch share");
    return NULL;
  }
  if (spec->n_gpus == 0 && spec->gpus_max > 0 && spec->gpus_min > spec->gpus_max) {
    g_set_error(error, FS_PLANNER_ERROR, FS_PLANNER_ERROR_INPUT, "GPU range %u-%u is empty",
                spec->gpus_min, spec->gpus_max);
    return NULL;
  }
  if (!check_list(spec->gpus, spec->n_gpus, 1, 1u << 24, "a GPU count", error) ||
      !check_list(spec->tp, spec->n_tp, 1, 65536, "tp", error) ||
      !check_list(spec->pp, spec->n_pp, 1, 65536, "pp", error) ||
      !check_list(spec->cp, spec->n_cp, 1, 65536, "cp", error) ||
      !check_list(spec->ep, spec->n_ep, 1, 65536, "ep", error) ||
      !check_list(spec->micro_batch, spec->n_micro_batch, 1, 1u << 20, "micro-batch", error) ||
      !check_list(spec->zero, spec->n_zero, 0, 3, "a ZeRO stage", error))
    return NULL;
  if (spec->vp == 1 || spec->vp > 1024) {
    g_set_error(error, FS_PLANNER_ERROR, FS_PLANNER_ERROR_INPUT,
                "virtual stages of the interleaved schedule must be 2 to 1024, not %u", spec->vp);
    return NULL;
  }
  for (guint i = 0; spec->defines && spec->defines[i]; i++)
    if (g_str_has_prefix(spec->defines[i], "nodes=")) {
      g_set_error(error, FS_PLANNER_ERROR, FS_PLANNER_ERROR_INPUT,
                  "-D %s: plan sets `nodes` itself from the GPU counts (use --gpus)", spec->defines[i]);
      return NULL;
    }
  FsPlanner *p = g_new0(FsPlanner, 1);
  p->spec = *spec;
  p->workload = g_strdup(spec->workload);
  p->overrides = g_strdupv((char **)spec->overrides);
  p->fabrics = g_strdupv((char **)spec->fabrics);
  p->defines = g_strdupv((char **)spec->defines);
  p->spec.workload = p->workload;
  p->spec.overrides = (const char *const *)p->overrides;
  p->spec.fabrics = (const char *const *)p->fabrics;
  p->spec.defines = (const char *const *)p->defines;
  static const guint default_mb[] = { 1, 2, 4 };
  static const guint default_zero[] = { 1, 2, 3 };
  if (p->spec.n_micro_batch == 0) {
    memcpy(p->spec.micro_batch, default_mb, sizeof default_mb);
    p->spec.n_micro_batch = G_N_ELEMENTS(default_mb);
  }
  if (p->spec.n_zero == 0) {
    memcpy(p->spec.zero, default_zero, sizeof default_zero);
    p->spec.n_zero = G_N_ELEMENTS(default_zero);
  }
  if (p->spec.n_schedule == 0) {
    p->spec.schedule[0] = FS_PP_1F1B;
    p->spec.n_schedule = 1;
  }
  if (p->spec.vp == 0)
    p->spec.vp = 2;
  if (p->spec.n_recompute == 0) {
    p->spec.recompute[0] = FS_RECOMPUTE_NONE;
    p->spec.recompute[1] = FS_RECOMPUTE_SELECTIVE;
    p->spec.recompute[2] = FS_RECOMPUTE_FULL;
    p->spec.n_recompute = 3;
  }
  p->cat = cat;
  p->eff = eff;
  p->nccl = nccl;
  p->topos = g_ptr_array_new_with_free_func((GDestroyNotify)fs_topo_free);
  p->systems = g_array_new(FALSE, TRUE, sizeof(FsPlannerSystem));
  g_array_set_clear_func(p->systems, (GDestroyNotify)system_clear);
  p->designs = g_array_new(FALSE, TRUE, sizeof(FsPlannerDesign));
  g_array_set_clear_func(p->designs, (GDestroyNotify)design_clear);
  return p;
}

FsPlanner *fs_planner_new_in(const FsPlannerSpec *spec, const FsScenario *sc, GError **error)
{
  FsPlanner *p = fs_planner_new(spec, fs_scenario_catalog(sc), fs_scenario_efficiency(sc),
                                fs_scenario_nccl(sc), error);
  if (p != NULL) {
    p->prefs = fs_scenario_prefs(sc);
    p->sc = sc;
  }
  return p;
}

void fs_planner_free(FsPlanner *p)
{
  if (p == NULL)
    return;
  g_array_unref(p->designs);
  g_array_unref(p->systems);
  g_ptr_array_unref(p->topos);
  fs_coll_memo_free(p->memo);
  if (p->sys_nccl != NULL)
    g_ptr_array_unref(p->sys_nccl);
  g_free(p->stats.structure_example);
  g_free(p->stats.memory_example);
  g_free(p->workload);
  g_strfreev(p->overrides);
  g_strfreev(p->fabrics);
  g_strfreev(p->defines);
  g_free(p);
}

const FsPlannerStats *fs_planner_stats(const FsPlanner *p) { return &p->stats; }
guint fs_planner_n_systems(const FsPlanner *p) { return p->systems->len; }
const FsPlannerSystem *fs_planner_system(const FsPlanner *p, guint i)
{
  g_return_val_if_fail(i < p->systems->len, NULL);
  return &g_array_index(p->systems, FsPlannerSystem, i);
}
guint fs_planner_n_designs(const FsPlanner *p) { return p->designs->len; }
const FsPlannerDesign *fs_planner_design(const FsPlanner *p, guint i)
{
  g_return_val_if_fail(i < p->designs->len, NULL);
  return &g_array_index(p->designs, FsPlannerDesign, i);
}
const FsPlannerSpec *fs_planner_spec(const FsPlanner *p) { return &p->spec; }

double fs_planner_target_step_s(const FsPlannerSpec *spec, double tokens_per_step)
{
  if (spec->target_step_s > 0)
    return spec->target_step_s;
  return tokens_per_step / spec->target_tokens_per_s;
}

/* ---- simulation (worker threads) ---- */

typedef struct {
  gboolean ok;
  char *error;
  double step_s, tokens_per_step, tokens_per_s, mfu, tflops;
  double tp_s, cp_s, ep_s, pp_s, dp_s, bubble_s;
} SimOut;

typedef struct {
  FsPlanner *p;
  FsPlannerProgressFn progress;
  void *ud;
  guint done;
} RunCtx;

static gboolean simulate(const FsPlanner *p, const FsPlannerDesign *d, SimOut *o, GError **error)
{
  g_autoptr(FsWorkload) w = fs_workload_load_file(p->workload, (const char *const *)p->overrides, error);
  if (w == NULL || !fs_planner_apply_layout(w, d, error))
    return FALSE;
  FsTrainOptions opt;
  fs_train_options_init(&opt);
  opt.net_model = FS_NET_ANALYTIC;
  opt.dp_isolated = TRUE;
  opt.memo = p->memo;
  const FsTopo *topo = g_ptr_array_index(p->topos, d->system);
  opt.prefs = p->prefs;
  const FsNcclParams *np = p->sys_nccl != NULL && g_ptr_array_index(p->sys_nccl, d->system) != NULL
                             ? g_ptr_array_index(p->sys_nccl, d->system) : p->nccl;
  g_autoptr(FsTrain) t = fs_train_new(topo, w, p->eff, np, fs_scenario_engines(), &opt, error);
  if (t == NULL || !fs_train_run(t, error))
    return FALSE;
  const FsTrainResult *r = fs_train_result(t);
  o->step_s = fs_time_to_s(r->step_time);
  o->tokens_per_step = r->tokens;
  o->tokens_per_s = r->tokens_per_s;
  o->mfu = r->mfu;
  o->tflops = r->tflops_per_gpu;
  /* The worst stage's exposed communication and bubble. */
  for (guint i = 0; i < r->classes->len; i++) {
    const FsTrainClass *c = &g_array_index(r->classes, FsTrainClass, i);
    o->tp_s = MAX(o->tp_s, fs_time_to_s(c->time.exposed[FS_CAT_TP]));
    o->cp_s = MAX(o->cp_s, fs_time_to_s(c->time.exposed[FS_CAT_CP]));
    o->ep_s = MAX(o->ep_s, fs_time_to_s(c->time.exposed[FS_CAT_EP]));
    o->pp_s = MAX(o->pp_s, fs_time_to_s(c->time.exposed[FS_CAT_PP]));
    /* Gradient synchronisation: DP buckets and the tied-embedding all-reduce. */
    o->dp_s = MAX(o->dp_s, fs_time_to_s(c->time.exposed[FS_CAT_DP] + c->time.exposed[FS_CAT_EMB] +
                                        c->time.exposed[FS_CAT_COMM]));
    o->bubble_s = MAX(o->bubble_s, fs_time_to_s(c->time.bubble));
  }
  return TRUE;
}

static void *sim_task(guint i, void *ud)
{
  RunCtx *c = ud;
  SimOut *o = g_new0(SimOut, 1);
  GError *error = NULL;
  o->ok = simulate(c->p, &g_array_index(c->p->designs, FsPlannerDesign, i), o, &error);
  if (!o->ok && fs_sim_interrupt_requested()) { /* cut short: dropped, the run fails */
    g_clear_error(&error);
    g_free(o);
    return NULL;
  }
  if (!o->ok) {
    o->error = g_strdup(error ? error->message : "failed");
    g_clear_error(&error);
  }
  return o;
}

static void sim_done(guint i, void *result, void *ud)
{
  RunCtx *c = ud;
  SimOut *o = result;
  FsPlannerDesign *d = &g_array_index(c->p->designs, FsPlannerDesign, i);
  d->ok = o->ok;
  d->error = o->error;
  d->step_s = o->step_s;
  d->tokens_per_step = o->tokens_per_step;
  d->tokens_per_s = o->tokens_per_s;
  d->mfu = o->mfu;
  d->tflops_per_gpu = o->tflops;
  d->tp_s = o->tp_s;
  d->cp_s = o->cp_s;
  d->ep_s = o->ep_s;
  d->pp_s = o->pp_s;
  d->dp_s = o->dp_s;
  d->bubble_s = o->bubble_s;
  g_free(o);
  c->done++;
  if (c->progress != NULL)
    c->progress(c->done, c->p->designs->len, c->ud);
}

/* ---- pricing and ranking ---- */

static double rank_metric(FsPlannerRank by, const FsPlannerDesign *d)
{
  switch (by) {
  case FS_PLANNER_RANK_COST:
    return isnan(d->cost.usd_per_mtok) ? INFINITY : d->cost.usd_per_mtok;
  case FS_PLANNER_RANK_GPUS:
    return d->gpus;
  case FS_PLANNER_RANK_ENERGY:
    return d->cost.kwh_per_mtok;
  case FS_PLANNER_RANK_TIME:
  default:
    return d->step_s;
  }
}

/* The sort group: 0 meets target and budget, 1 meets the target over
 * budget, 2 misses the target, 3 failed. */
static int group(const FsPlannerDesign *d)
{
  if (!d->ok)
    return 3;
  if (!d->meets)
    return 2;
  return d->in_budget ? 0 : 1;
}

int fs_planner_design_cmp(const void *a, const void *b)
{
  const FsPlannerDesign *x = a, *y = b;
  int gx = group(x), gy = group(y);
  if (gx != gy)
    return gx < gy ? -1 : 1;
  if (x->metric != y->metric)
    return x->metric < y->metric ? -1 : 1;
  /* Equal metric (fewest GPUs, or a tie): the faster step first. */
  if (gx < 3 && x->step_s != y->step_s)
    return x->step_s < y->step_s ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

static void price(FsPlanner *p, FsPlannerDesign *d)
{
  const FsPlannerSystem *sys = &g_array_index(p->systems, FsPlannerSystem, d->system);
  const FsPlannerCostInputs *in = &p->spec.cost;
  if (!d->ok) {
    d->metric = INFINITY;
    return;
  }
  /* Amortized capex is a rate only when the GPUs themselves are priced. */
  double capex = sys->gpu->price > 0 ? sys->capex_usd : 0;
  fs_planner_cost_compute(in, d->gpus, sys->it_power_w, capex, d->step_s, d->tokens_per_step, &d->cost);
  d->cost.capex_usd = sys->capex_usd;
  d->meets = d->step_s <= fs_planner_target_step_s(&p->spec, d->tokens_per_step) * (1 + 1e-12);
  if (in->budget <= 0)
    d->in_budget = TRUE;
  else if (in->tokens > 0)
    d->in_budget = d->cost.train_usd <= in->budget;
  else
    d->in_budget = sys->capex_usd > 0 && sys->capex_usd <= in->budget;
  /* Designs that miss the target rank by how close they come. */
  d->metric = d->meets ? rank_metric(p->spec.rank_by, d) : d->step_s;
}

static double pct(double part, double whole) { return whole > 0 ? 100 * part / whole : 0; }

/* The one-line "why" of a ranked design (a new string for the caller): how much of the step
 * each parallel dimension exposes, the memory fit and MFU, then the margin over the next design
 * in the ranking's own terms (cost, energy, GPUs or time) and whether it misses the target or
 * the budget. A failed simulation is explained by its error alone. */
static char *explain(const FsPlanner *p, const FsPlannerDesign *d, const FsPlannerDesign *next)
{
  const FsPlannerSystem *sys = &g_array_index(p->systems, FsPlannerSystem, d->system);
  GString *s = g_string_new(NULL);
  if (!d->ok) {
    g_string_append_printf(s, "simulation failed: %s", d->error);
    return g_string_free(s, FALSE);
  }
  if (d->tp > 1)
    g_string_append_printf(s, "TP%u keeps TP traffic inside a node on %s, %.0f %% of the step exposed; ",
                           d->tp, sys->intra_path, pct(d->tp_s, d->step_s));
  else
    g_string_append(s, "TP1: no tensor-parallel traffic; ");
  if (d->pp > 1 && d->schedule == FS_PP_INTERLEAVED)
    g_string_append_printf(s, "PP%u interleaved ×%u bubble %.0f %% over %u micro-batches; ", d->pp,
                           d->vp, pct(d->bubble_s, d->step_s), d->microbatches);
  else if (d->pp > 1)
    g_string_append_printf(s, "PP%u %s bubble %.0f %% over %u micro-batches; ", d->pp,
                           fs_pp_schedule_name(d->schedule), pct(d->bubble_s, d->step_s),
                           d->microbatches);
  if (d->cp > 1)
    g_string_append_printf(s, "CP%u %.0f %% exposed; ", d->cp, pct(d->cp_s, d->step_s));
  if (d->ep > 1)
    g_string_append_printf(s, "EP%u %.0f %% exposed; ", d->ep, pct(d->ep_s, d->step_s));
  if (d->dp > 1)
    g_string_append_printf(s, "DP%u gradients %.0f %% exposed; ", d->dp, pct(d->dp_s, d->step_s));
  double gib = d->mem_total / 1073741824.0;
  g_string_append_printf(s, "fits %.*f of %.0f GiB (ZeRO-%u, recompute %s); MFU %.0f %%",
                         gib < 10 ? 1 : 0, gib, d->mem_capacity / 1073741824.0, d->zero_stage,
                         fs_recompute_name(d->recompute), 100 * d->mfu);
  if (next != NULL && d->meets && next->ok && next->meets) {
    /* The margin over the next design, in the ranking's own terms. */
    double mine, theirs;
    const char *what;
    switch (p->spec.rank_by) {
    case FS_PLANNER_RANK_COST:
      mine = d->cost.usd_per_mtok, theirs = next->cost.usd_per_mtok, what = "cheaper per token";
      break;
    case FS_PLANNER_RANK_ENERGY:
      mine = d->cost.kwh_per_mtok, theirs = next->cost.kwh_per_mtok, what = "less energy per token";
      break;
    case FS_PLANNER_RANK_GPUS:
      if (next->gpus > d->gpus) {
        g_string_append_printf(s, "; %u fewer GPUs than the next", next->gpus - d->gpus);
        mine = theirs = NAN;
        what = NULL;
        break;
      }
      /* As many GPUs: faster. */
      mine = d->step_s, theirs = next->step_s, what = "faster than the next on as many GPUs";
      break;
    case FS_PLANNER_RANK_TIME:
    default:
      mine = d->step_s, theirs = next->step_s, what = "faster than the next";
      break;
    }
    if (what != NULL && isfinite(mine) && isfinite(theirs) && theirs > 0) {
      double margin = 100 * (1 - mine / theirs);
      if (margin < 0.05)
        g_string_append(s, "; within 0.05 % of the next");
      else if (p->spec.rank_by == FS_PLANNER_RANK_COST || p->spec.rank_by == FS_PLANNER_RANK_ENERGY)
        g_string_append_printf(s, "; %.1f %% %s than the next", margin, what);
      else
        g_string_append_printf(s, "; %.1f %% %s", margin, what);
    }
  }
  if (!d->meets)
    g_string_append_printf(s, "; misses the target by %.1f %%",
                           100 * (d->step_s / fs_planner_target_step_s(&p->spec, d->tokens_per_step) - 1));
  else if (!d->in_budget)
    g_string_append(s, "; over budget");
  return g_string_free(s, FALSE);
}

/* See plan.h. Calibrates each fabric's NCCL constants when the scenario
 * has a calibration, simulates every candidate design on the sweep pool
 * (sim_task), prices them, sorts them by fs_planner_design_cmp and writes
 * each design's reason against the next. */
gboolean fs_planner_run(FsPlanner *p, FsPlannerProgressFn progress, void *ud, GError **error)
{
  g_return_val_if_fail(p->prepared && !p->ran, FALSE);
  p->ran = TRUE;
  /* With a calibration, each system's NCCL constants are calibrated for
   * its GPU, as a single-topology command's are (scenario.h). */
  if (p->sc != NULL && fs_scenario_calibration(p->sc) != NULL) {
    p->sys_nccl = g_ptr_array_new_with_free_func((GDestroyNotify)fs_nccl_params_free);
    for (guint i = 0; i < p->topos->len; i++) {
      const FsTopo *topo = g_ptr_array_index(p->topos, i);
      FsNcclParams *np = topo != NULL ? fs_scenario_nccl_for_topo(p->sc, topo, error) : NULL;
      if (topo != NULL && np == NULL)
        return FALSE;
      g_ptr_array_add(p->sys_nccl, np);
    }
  }
  /* One memo for every design: layouts that share a group, an operation and a size (every
   * micro-batch size and schedule of a TP × PP × DP split, for a start) measure it once; a
   * hit is exactly what a new measurement gives (collmemo.h). */
  p->memo = fs_coll_memo_new();
  RunCtx c = { p, progress, ud, 0 };
  gint64 t0 = g_get_monotonic_time();
  if (p->designs->len > 0 &&
      !fs_sweep_run_tasks(0, 1, p->designs->len, p->spec.threads, sim_task, sim_done, NULL, &c, error))
    return FALSE;
  p->stats.wall_s = (g_get_monotonic_time() - t0) / 1e6;
  p->stats.simulated = p->designs->len;
  for (guint i = 0; i < p->designs->len; i++) {
    FsPlannerDesign *d = &g_array_index(p->designs, FsPlannerDesign, i);
    price(p, d);
    p->stats.failed += !d->ok;
    p->stats.meets += d->ok && d->meets && d->in_budget;
  }
  g_array_sort(p->designs, fs_planner_design_cmp);
  for (guint i = 0; i < p->designs->len; i++) {
    /* A stop request after the last simulation: no ranking is printed. */
    if (fs_sim_interrupt_requested()) {
      g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED, "interrupted while ranking");
      return FALSE;
    }
    FsPlannerDesign *d = &g_array_index(p->designs, FsPlannerDesign, i);
    const FsPlannerDesign *next = i + 1 < p->designs->len ? d + 1 : NULL;
    d->why = explain(p, d, next);
  }
  return TRUE;
}
