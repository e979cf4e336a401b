/* space.c — the planner's search space: the systems (each fabric at each
 * GPU count, through its `nodes` parameter), the layouts of each system,
 * and the pruning of plan.h's header comment (structure, memory, compute
 * bound), in a fixed enumeration order that gives every design its
 * stable key. */
#include <math.h>
#include <string.h>

#include "compute/kernel.h"
#include "core/sim.h"
#include "plan/plan-private.h"
#include "topo/paths.h"
#include "util/error.h"
#include "util/limits.h"
#include "util/names.h"
#include "util/units.h"

/* The topology parameter that scales a fabric. */
#define SCALE_PARAM "nodes"

guint fs_planner_divisors(guint n, guint max, guint *out)
{
  guint k = 0;
  for (guint d = 1; d <= n && d <= max && k < FS_PLANNER_MAX_CHOICES; d++)
    if (n % d == 0)
      out[k++] = d;
  return k;
}

guint fs_planner_default_max_candidates(void)
{
  static gsize once;
  static guint limit;
  if (g_once_init_enter(&once)) {
    limit = (guint)fs_env_limit("FABRICSIM_MAX_CANDIDATES", FS_PLANNER_MAX_CANDIDATES, G_MAXUINT);
    g_once_init_leave(&once, 1);
  }
  return limit;
}

static gboolean in_list(const guint *list, guint n, guint v)
{
  for (guint i = 0; i < n; i++)
    if (list[i] == v)
      return TRUE;
  return FALSE;
}

/* Divisors of n (≤ max), restricted to the user's list when one is given. */
static guint choices(guint n, guint max, const guint *user, guint n_user, guint *out)
{
  guint all[FS_PLANNER_MAX_CHOICES], k = 0;
  guint na = fs_planner_divisors(n, max, all);
  for (guint i = 0; i < na; i++)
    if (n_user == 0 || in_list(user, n_user, all[i]))
      out[k++] = all[i];
  return k;
}

double fs_planner_peak_flops(const FsWorkload *w, const FsGpuModel *gpu)
{
  FsKernel probe = fs_kernel_gemm("peak", FS_PASS_FORWARD, w->dtype, 1, 1, 1, 1);
  FsKernelTiming kt;
  fs_kernel_time(&probe, gpu, NULL, &kt);
  return kt.peak;
}

double fs_planner_tokens_per_step(const FsWorkload *w)
{
  return (double)w->global_batch * (w->form == FS_MODEL_FORM_TRANSFORMER ? w->model.seq_len : 1);
}

gboolean fs_planner_apply_layout(FsWorkload *w, const FsPlannerDesign *d, GError **error)
{
  char buf[16][64];
  guint k = 0;
  g_snprintf(buf[k++], 64, "gpus=%u", d->gpus);
  g_snprintf(buf[k++], 64, "parallel.tp=%u", d->tp);
  g_snprintf(buf[k++], 64, "parallel.pp=%u", d->pp);
  g_snprintf(buf[k++], 64, "parallel.dp=%u", d->dp);
  g_snprintf(buf[k++], 64, "parallel.cp=%u", d->cp);
  g_snprintf(buf[k++], 64, "parallel.ep=%u", d->ep);
  g_snprintf(buf[k++], 64, "parallel.sequence_parallel=%s", d->sequence_parallel ? "true" : "false");
  g_snprintf(buf[k++], 64, "parallel.schedule=%s", fs_pp_schedule_name(d->schedule));
  g_snprintf(buf[k++], 64, "parallel.virtual_stages=%u", MAX(d->vp, 1u));
  g_snprintf(buf[k++], 64, "training.micro_batch=%u", d->micro_batch);
  g_snprintf(buf[k++], 64, "training.recompute=%s", fs_recompute_name(d->recompute));
  g_snprintf(buf[k++], 64, "parallel.zero_stage=%u", d->zero_stage);
  const char *args[17];
  for (guint i = 0; i < k; i++)
    args[i] = buf[i];
  args[k] = NULL;
  return fs_workload_apply_overrides(w, args, error) && fs_workload_resolve(w, d->gpus, error);
}

/* ---- systems ---- */

static int64_t topo_param(const FsTopo *topo, const char *name)
{
  const char *const *names;
  const int64_t *values;
  guint n = fs_topo_params(topo, &names, &values), i;
  return fs_names_index(names, n, name, &i) ? values[i] : -1;
}

static guint host_gpus(const FsTopo *topo)
{
  guint n;
  const guint *gpus = fs_topo_gpus(topo, &n);
  if (n == 0)
    return 0;
  int host = fs_topo_node(topo, gpus[0])->host;
  if (host < 0)
    return n;
  guint hn;
  fs_topo_host_gpus(topo, (guint)host, &hn);
  return hn;
}

static FsTopo *load_topo(FsPlanner *p, const char *path, guint nodes, GError **error)
{
  g_autoptr(GPtrArray) defs = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; p->defines && p->defines[i]; i++)
    g_ptr_array_add(defs, g_strdup(p->defines[i]));
  if (nodes > 0)
    g_ptr_array_add(defs, g_strdup_printf(SCALE_PARAM "=%u", nodes));
  g_ptr_array_add(defs, NULL);
  /* Through the scenario, the one place that loads topologies; a planner
   * without one (fs_planner_new) has its own catalog. */
  return p->sc != NULL ? fs_scenario_load_topology(p->sc, path, (const char *const *)defs->pdata, error)
                       : fs_topo_load_file(path, p->cat, (const char *const *)defs->pdata, error);
}

/* What carries traffic between two GPUs of a node, in words: NVSwitch
 * when the GPU's NVLinks go to an NVSwitch, else NVLink, a PCIe switch,
 * or PCIe through the CPU. */
static const char *intra_medium(const FsTopo *topo, guint gpu, FsPathType t)
{
  if (t == FS_PATH_NV) {
    guint n;
    const FsTopoAdj *adj = fs_topo_adj(topo, gpu, &n);
    for (guint i = 0; i < n; i++) {
      const FsTopoNode *peer = fs_topo_node(topo, adj[i].peer);
      if (peer->kind == FS_NODE_SWITCH && peer->model->u.sw.kind == FS_SWITCH_NVSWITCH)
        return "NVSwitch";
    }
    return "NVLink";
  }
  if (t == FS_PATH_PIX || t == FS_PATH_PXB)
    return "a PCIe switch";
  return "PCIe through the CPU";
}

static void add_system(FsPlanner *p, FsTopo *topo, const char *path, guint fabric, guint nodes,
                       guint gpn)
{
  FsPlannerSystem sys = {0};
  guint n;
  const guint *gpus = fs_topo_gpus(topo, &n);
  const FsTopoNode *g0 = fs_topo_node(topo, gpus[0]);
  sys.fabric = g_strdup(fs_topo_name(topo));
  sys.path = g_strdup(path);
  sys.fabric_index = fabric;
  sys.gpus = n;
  sys.nodes = nodes;
  sys.gpus_per_node = gpn;
  sys.gpu = &g0->model->u.gpu;
  sys.gpu_name = g_strdup(g0->model->name);
  if (gpn >= 2) {
    guint nv = 0;
    FsPathType t = fs_topo_path_type(topo, gpus[0], gpus[1], &nv);
    g_autofree char *label = fs_path_label(t, nv);
    sys.intra_path = g_strdup_printf("%s (%s)", intra_medium(topo, gpus[0], t), label);
  } else {
    sys.intra_path = g_strdup("-");
  }
  fs_planner_system_costs(topo, p->spec.cost.switch_share, &sys);
  g_array_append_val(p->systems, sys);
  g_ptr_array_add(p->topos, topo);
}

/* The GPU counts to build fabric f at: the explicit list, the range, or
 * one node up to its default size. */
static gboolean wanted(const FsPlannerSpec *s, guint n, guint dflt)
{
  if (s->n_gpus > 0)
    return in_list(s->gpus, s->n_gpus, n);
  if (s->gpus_max > 0)
    return n >= s->gpus_min && n <= s->gpus_max;
  return n <= dflt;
}

/* Whether a fabric scales through `nodes`: nodes0 nodes of gpn GPUs make
 * all of its total GPUs. */
static gboolean scalable(guint total, guint gpn, int64_t nodes0)
{
  return nodes0 > 0 && gpn > 0 && total == (guint64)nodes0 * gpn;
}

/* The most nodes any wanted GPU count needs. */
static guint max_nodes_of(const FsPlannerSpec *s, guint nodes0, guint gpn)
{
  guint m = nodes0;
  if (s->n_gpus > 0) {
    m = 0;
    for (guint i = 0; i < s->n_gpus; i++)
      m = MAX(m, s->gpus[i] / gpn);
  } else if (s->gpus_max > 0) {
    m = s->gpus_max / gpn;
  }
  return m;
}

/* How many systems a fabric will give (before any is built). */
static guint count_wanted(const FsPlannerSpec *s, guint total, guint gpn, int64_t nodes0)
{
  if (!scalable(total, gpn, nodes0))
    return wanted(s, total, total) ? 1 : 0;
  guint n = 0, m = max_nodes_of(s, (guint)nodes0, gpn);
  for (guint k = 1; k <= m; k++)
    n += wanted(s, k * gpn, total);
  return n;
}

/* Builds the systems in order (fabric, then GPU count).  Each fabric's
 * default instance is loaded once: it sizes the search, and is reused
 * when its GPU count is wanted.  Cost: one topology load per system. */
static gboolean load_systems(FsPlanner *p, GError **error)
{
  g_autoptr(GPtrArray) bases = g_ptr_array_new_with_free_func((GDestroyNotify)fs_topo_free);
  guint limit = p->spec.max_systems ? p->spec.max_systems
                : (guint)fs_env_limit("FABRICSIM_MAX_SYSTEMS", FS_PLANNER_MAX_SYSTEMS, G_MAXUINT),
        planned = 0;
  for (guint f = 0; p->fabrics[f] != NULL; f++) {
    FsTopo *base = load_topo(p, p->fabrics[f], 0, error);
    if (base == NULL)
      return FALSE;
    g_ptr_array_add(bases, base);
    guint total;
    fs_topo_gpus(base, &total);
    planned += count_wanted(&p->spec, total, host_gpus(base), topo_param(base, SCALE_PARAM));
  }
  if (planned > limit) {
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_LIMIT,
                "the search spans %u fabric × GPU-count systems, above the limit of %u: narrow "
                "--gpus (a list instead of a range) or raise --max-systems (or FABRICSIM_MAX_SYSTEMS)",
                planned, limit);
    return FALSE;
  }
  g_autoptr(GString) reach = g_string_new(NULL);
  for (guint f = 0; f < bases->len; f++) {
    const char *path = p->fabrics[f];
    /* Taken from the array: added to the plan, or freed here. */
    g_autoptr(FsTopo) base = g_ptr_array_index(bases, f);
    g_ptr_array_index(bases, f) = NULL;
    guint total;
    fs_topo_gpus(base, &total);
    guint gpn = host_gpus(base);
    int64_t nodes0 = topo_param(base, SCALE_PARAM);
    if (!scalable(total, gpn, nodes0)) {
      /* A fixed system: only its own GPU count. */
      g_string_append_printf(reach, "%s%s: %u GPUs only", reach->len ? "; " : "",
                             fs_topo_name(base), total);
      if (wanted(&p->spec, total, total))
        add_system(p, g_steal_pointer(&base), path, f, 0, MAX(gpn, 1u));
      continue;
    }
    g_string_append_printf(reach, "%s%s: multiples of %u GPUs", reach->len ? "; " : "",
                           fs_topo_name(base), gpn);
    guint m = max_nodes_of(&p->spec, (guint)nodes0, gpn);
    for (guint k = 1; k <= m; k++) {
      guint n = k * gpn;
      if (!wanted(&p->spec, n, total))
        continue;
      FsTopo *t = k == (guint)nodes0 ? g_steal_pointer(&base) : load_topo(p, path, k, error);
      if (t == NULL)
        return FALSE;
      guint got;
      fs_topo_gpus(t, &got);
      if (got != n) {
        fs_topo_free(t);
        continue;
      }
      add_system(p, t, path, f, k, gpn);
    }
  }
  if (p->systems->len == 0) {
    g_set_error(error, FS_PLANNER_ERROR, FS_PLANNER_ERROR_NO_SYSTEM,
                "no fabric can be built with the GPU counts asked for (%s)", reach->str);
    return FALSE;
  }
  return TRUE;
}

/* ---- layouts ---- */

typedef struct {
  FsPlanner *p;
  FsWorkload *w;       /* the base workload, re-resolved per layout */
  double model_flops;  /* per step (the layout does not change it) */
  double tokens;       /* per step */
  uint64_t miss_total; /* smallest footprint that did not fit */
  guint key;
} Enum;

static void note_structure(Enum *e, const FsPlannerDesign *d, const GError *err)
{
  e->p->stats.structure++;
  if (e->p->stats.structure_example == NULL)
    e->p->stats.structure_example =
      g_strdup_printf("%u GPUs, tp %u, pp %u, dp %u, cp %u, ep %u, micro-batch %u: %s", d->gpus,
                      d->tp, d->pp, d->dp, d->cp, d->ep, d->micro_batch, err->message);
}

/* One layout: the memory settings cheapest first; the first that fits
 * becomes a candidate unless the compute bound rules it out. */
static gboolean try_layout(Enum *e, const FsPlannerSystem *sys, FsPlannerDesign *d, GError **error)
{
  FsPlanner *p = e->p;
  const FsPlannerSpec *s = &p->spec;
  guint n_settings = s->n_recompute * s->n_zero, tried = 0;
  p->stats.layouts++;
  for (guint r = 0; r < s->n_recompute; r++)
    for (guint z = 0; z < s->n_zero; z++) {
      d->recompute = s->recompute[r];
      d->zero_stage = s->zero[z];
      d->key = e->key++;
      tried++;
      GError *err = NULL;
      FsMemoryBreakdown mem;
      if (!fs_planner_apply_layout(e->w, d, &err) ||
          !fs_workload_memory_estimate(e->w, sys->gpu, &mem, &err)) {
        if (err->domain != FS_WORKLOAD_ERROR && err->domain != FS_TRANSFORMER_ERROR) {
          g_propagate_error(error, err);
          return FALSE;
        }
        /* The structural rules do not depend on the memory settings. */
        note_structure(e, d, err);
        g_error_free(err);
        e->key += n_settings - tried;
        return TRUE;
      }
      if (!mem.fits) {
        if (e->miss_total == 0 || mem.total < e->miss_total) {
          e->miss_total = mem.total;
          g_free(p->stats.memory_example);
          g_autofree char *need = fs_format_size(mem.total);
          g_autofree char *cap = fs_format_size(mem.capacity);
          p->stats.memory_example = g_strdup_printf(
            "%u × %s, tp %u, pp %u, dp %u, micro-batch %u, ZeRO-%u, recompute %s needs %s of %s",
            d->gpus, sys->gpu_name, d->tp, d->pp, d->dp, d->micro_batch, d->zero_stage,
            fs_recompute_name(d->recompute), need, cap);
        }
        continue;
      }
      p->stats.dominated += n_settings - tried;
      e->key += n_settings - tried;
      d->mem_total = mem.total;
      d->mem_capacity = mem.capacity;
      d->microbatches = e->w->grad_accum;
      double peak = fs_planner_peak_flops(e->w, sys->gpu);
      d->bound_step_s = peak > 0 ? e->model_flops / (d->gpus * peak) : INFINITY;
      if (p->stats.best_bound_gpus == 0 || d->bound_step_s < p->stats.best_bound_s) {
        p->stats.best_bound_s = d->bound_step_s;
        p->stats.best_bound_gpus = d->gpus;
      }
      if (d->bound_step_s > fs_planner_target_step_s(s, e->tokens)) {
        p->stats.bound++;
        return TRUE;
      }
      FsPlannerDesign c = *d;
      c.error = c.why = NULL;
      g_array_append_val(p->designs, c);
      return TRUE;
    }
  p->stats.memory++;
  return TRUE;
}

/* See plan.h. Loads every fabric, then enumerates tp × cp × pp × ep × micro-batch × schedule
 * per system (tp within a node, the rest dividing the GPU count) and hands each layout to
 * try_layout, which counts the memory and bound prunes and keeps the survivors in p->designs.
 * Fails with FS_PLANNER_ERROR_INPUT for a cost ranking with no GPU price,
 * FS_RUNTIME_ERROR_INTERRUPTED on SIGINT and FS_RUNTIME_ERROR_LIMIT when more designs survive
 * than max_candidates allows. */
gboolean fs_planner_prepare(FsPlanner *p, GError **error)
{
  g_return_val_if_fail(!p->prepared, FALSE);
  p->prepared = TRUE;
  if (!load_systems(p, error))
    return FALSE;
  p->stats.systems = p->systems->len;
  g_autoptr(FsWorkload) w = fs_workload_load_file(p->workload, (const char *const *)p->overrides, error);
  if (w == NULL)
    return FALSE;
  const FsPlannerSpec *s = &p->spec;
  gboolean layers = w->form == FS_MODEL_FORM_LAYERS;
  gboolean moe = !layers && w->model.experts > 1;
  Enum e = { p, w, fs_workload_step_model_flops(w, TRUE), fs_planner_tokens_per_step(w), 0, 0 };
  for (guint si = 0; si < p->systems->len; si++) {
    const FsPlannerSystem *sys = &g_array_index(p->systems, FsPlannerSystem, si);
    if (fs_sim_interrupt_requested()) {
      g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED,
                  "interrupted while building the search; nothing written");
      return FALSE;
    }
    guint N = sys->gpus;
    if (s->cost.gpu_hour_price < 0 && s->rank_by == FS_PLANNER_RANK_COST && sys->gpu->price <= 0) {
      g_set_error(error, FS_PLANNER_ERROR, FS_PLANNER_ERROR_INPUT,
                  "%s: the catalog has no price for its GPU (%s; NVIDIA publishes no list price): give "
                  "--gpu-hour-price or rank by gpus, energy or time", sys->fabric, sys->gpu_name);
      return FALSE;
    }
    guint tps[FS_PLANNER_MAX_CHOICES];
    guint ntp = layers ? 1 : choices(sys->gpus_per_node, sys->gpus_per_node, s->tp, s->n_tp, tps);
    if (layers)
      tps[0] = 1;
    for (guint a = 0; a < ntp; a++) {
      guint tp = tps[a];
      if (N % tp)
        continue;
      guint cps[FS_PLANNER_MAX_CHOICES], ncp = 0;
      if (layers || s->n_cp == 0)
        cps[ncp++] = 1;
      else
        for (guint i = 0; i < s->n_cp; i++)
          cps[ncp++] = s->cp[i];
      for (guint b = 0; b < ncp; b++) {
        guint cp = cps[b];
        if (N % (tp * cp))
          continue;
        guint rest = N / (tp * cp);
        guint pps[FS_PLANNER_MAX_CHOICES];
        guint npp = choices(rest, rest, s->pp, s->n_pp, pps);
        for (guint c = 0; c < npp; c++) {
          guint pp = pps[c], dp = rest / pp;
          guint eps[FS_PLANNER_MAX_CHOICES], nep = 0;
          if (s->n_ep > 0) {
            for (guint i = 0; i < s->n_ep; i++)
              eps[nep++] = s->ep[i];
          } else if (moe) {
            guint ed[FS_PLANNER_MAX_CHOICES];
            guint ne = fs_planner_divisors(w->model.experts, w->model.experts, ed);
            for (guint i = 0; i < ne; i++)
              if (((guint64)dp * cp) % ed[i] == 0)
                eps[nep++] = ed[i];
          } else {
            eps[nep++] = 1;
          }
          /* With one stage the schedule does not matter: 1F1B only. */
          guint nsched = pp > 1 ? s->n_schedule : 1;
          for (guint x = 0; x < nep; x++)
            for (guint m = 0; m < s->n_micro_batch; m++)
              for (guint h = 0; h < nsched; h++) {
                FsPlannerDesign d = {0};
                d.system = si;
                d.gpus = N;
                d.tp = tp;
                d.pp = pp;
                d.dp = dp;
                d.cp = cp;
                d.ep = eps[x];
                d.micro_batch = s->micro_batch[m];
                d.sequence_parallel = tp > 1;
                d.schedule = pp > 1 ? s->schedule[h] : FS_PP_1F1B;
                d.vp = d.schedule == FS_PP_INTERLEAVED ? s->vp : 1;
                if (!try_layout(&e, sys, &d, error))
                  return FALSE;
              }
        }
      }
    }
  }
  guint limit = s->max_candidates ? s->max_candidates : fs_planner_default_max_candidates();
  if (p->designs->len > limit) {
    g_set_error(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_LIMIT,
                "the search has %u designs to simulate, above the limit of %u: narrow --gpus, "
                "--tp, --pp or --micro-batch, or raise --max-candidates (or "
                "FABRICSIM_MAX_CANDIDATES)", p->designs->len, limit);
    return FALSE;
  }
  return TRUE;
}
