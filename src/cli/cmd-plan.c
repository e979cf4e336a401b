/* cmd-plan.c — `fabricsim plan --workload W --fabric TOPO… (--target-
 * tokens-per-s X | --target-step-time T)`: capacity planning.  Parses the
 * options into an FsPlannerSpec (src/plan/plan.h), runs the search with a
 * progress bar on a terminal, and prints the best designs with their cost,
 * energy and the reason each wins (text), or JSON / CSV (schemas in
 * README.md, "Output").  Exit 1 when no design meets the target. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "calib/calibration.h"
#include "cli/commands.h"
#include "plan/plan.h"
#include "util/error.h"
#include "util/units.h"

#define PLAN_SCHEMA_VERSION 1

static char *opt_workload = NULL;
static char **opt_fabrics = NULL;
static char **opt_sets = NULL;
static char **opt_defines = NULL;
static char *opt_tps = NULL, *opt_step = NULL, *opt_gpus = NULL;
static char *opt_tp = NULL, *opt_pp = NULL, *opt_cp = NULL, *opt_ep = NULL;
static char *opt_mb = NULL, *opt_zero = NULL, *opt_recompute = NULL, *opt_schedule = NULL;
static int opt_vp = 0;
static char *opt_budget = NULL, *opt_hour = NULL, *opt_kwh = NULL, *opt_pue = NULL;
static char *opt_years = NULL, *opt_tokens = NULL, *opt_rank = NULL, *opt_share = NULL;
static int opt_top = 5, opt_jobs = 0, opt_max = 0, opt_max_systems = 0;
static gboolean opt_json = FALSE, opt_csv = FALSE, opt_quiet = FALSE;
static char *opt_models = NULL, *opt_calibration = NULL;

static const GOptionEntry entries[] = {
  {"workload", 'w', 0, G_OPTION_ARG_FILENAME, &opt_workload, "The training job (workload YAML)", "FILE"},
  {"fabric", 'f', 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_fabrics,
   "A topology to consider (repeatable); scaled through its `nodes` parameter", "TOPO"},
  {"target-tokens-per-s", 0, 0, G_OPTION_ARG_STRING, &opt_tps,
   "Target throughput (tokens/s; suffixes K M G = 10^3 10^6 10^9)", "X"},
  {"target-step-time", 0, 0, G_OPTION_ARG_STRING, &opt_step, "Target step time (\"20 s\", \"900 ms\"; a bare number is seconds)", "T"},
  {"gpus", 'g', 0, G_OPTION_ARG_STRING, &opt_gpus,
   "GPU counts: a list (8,16,32) or a range (8-64: every count a fabric reaches); default one node up to the fabric's default size", "LIST|RANGE"},
  {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &opt_sets,
   "Workload override applied before the search (repeatable): training.global_batch=512", "NAME=VALUE"},
  {"define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &opt_defines,
   "Topology parameter for every fabric (repeatable; not nodes)", "NAME=VALUE"},
  {"tp", 0, 0, G_OPTION_ARG_STRING, &opt_tp, "Tensor-parallel sizes to try (default: every divisor of the GPUs per node)", "LIST"},
  {"pp", 0, 0, G_OPTION_ARG_STRING, &opt_pp, "Pipeline sizes to try (default: every divisor)", "LIST"},
  {"cp", 0, 0, G_OPTION_ARG_STRING, &opt_cp, "Context-parallel sizes to try (default 1)", "LIST"},
  {"ep", 0, 0, G_OPTION_ARG_STRING, &opt_ep, "Expert-parallel sizes (default 1; MoE: divisors of the experts)", "LIST"},
  {"micro-batch", 0, 0, G_OPTION_ARG_STRING, &opt_mb, "Micro-batch sizes to try (default 1,2,4)", "LIST"},
  {"zero", 0, 0, G_OPTION_ARG_STRING, &opt_zero, "ZeRO stages, cheapest first (default 1,2,3)", "LIST"},
  {"recompute", 0, 0, G_OPTION_ARG_STRING, &opt_recompute,
   "Recompute policies, cheapest first (default none,selective,full)", "LIST"},
  {"schedule", 0, 0, G_OPTION_ARG_STRING, &opt_schedule,
   "Pipeline schedules to try when pp > 1: gpipe, 1f1b, interleaved (default 1f1b)", "LIST"},
  {"vp", 0, 0, G_OPTION_ARG_INT, &opt_vp, "Virtual stages of the interleaved schedule (default 2)", "N"},
  {"budget", 0, 0, G_OPTION_ARG_STRING, &opt_budget,
   "US dollars: the cost of training --tokens when given, else the capex", "$"},
  {"gpu-hour-price", 0, 0, G_OPTION_ARG_STRING, &opt_hour,
   "US dollars per GPU-hour (default: catalog capex amortized over --amortize-years)", "$"},
  {"kwh-price", 0, 0, G_OPTION_ARG_STRING, &opt_kwh, "US dollars per kWh added to the hourly cost (default 0)", "$"},
  {"pue", 0, 0, G_OPTION_ARG_STRING, &opt_pue, "Power usage effectiveness of the data centre (default 1.0)", "P"},
  {"amortize-years", 0, 0, G_OPTION_ARG_STRING, &opt_years, "Write-off period of the capex (default 4)", "Y"},
  {"tokens", 0, 0, G_OPTION_ARG_STRING, &opt_tokens, "Tokens to train, for time and cost to train (2T, 300G)", "N"},
  {"switch-share", 0, 0, G_OPTION_ARG_STRING, &opt_share,
   "Fabric switches: whole (default: every switch the topology builds) or ports (the share of "
   "their port bandwidth in use)", "whole|ports"},
  {"rank-by", 0, 0, G_OPTION_ARG_STRING, &opt_rank, "cost (default), gpus, energy or time", "METRIC"},
  {"top", 'k', 0, G_OPTION_ARG_INT, &opt_top, "Designs to print (default 5; 0 = all)", "K"},
  {"max-candidates", 0, 0, G_OPTION_ARG_INT, &opt_max,
   "Most designs to simulate (default 2000, or $FABRICSIM_MAX_CANDIDATES); a larger search is an error", "N"},
  {"max-systems", 0, 0, G_OPTION_ARG_INT, &opt_max_systems,
   "Most fabric × GPU-count systems to build (default 64); a larger search is an error", "N"},
  {"jobs", 'j', 0, G_OPTION_ARG_INT, &opt_jobs, "Threads (default: all cores)", "N"},
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON (schema in README.md)", NULL},
  {"csv", 0, 0, G_OPTION_ARG_NONE, &opt_csv, "Print CSV, one line per design", NULL},
  {"quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "No progress bar", NULL},
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration, "Apply a calibration file", "FILE"},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models,
   "Catalog folder (default: $FABRICSIM_MODELS or the built-in models/)", "DIR"},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* ---- option values ---- */

/* A count with an optional decimal suffix: K, M, G (or B), T. */
static gboolean parse_amount(const char *opt, const char *text, double *out)
{
  g_autofree char *t = g_strstrip(g_strdup(text));
  const char *s = t[0] == '$' ? t + 1 : t;
  gsize n = strlen(s);
  double mult = 1;
  if (n > 0) {
    switch (s[n - 1]) {
    case 'k': case 'K': mult = 1e3; break;
    case 'M': mult = 1e6; break;
    case 'G': case 'B': mult = 1e9; break;
    case 'T': mult = 1e12; break;
    default: break;
    }
  }
  g_autofree char *num = g_strndup(s, mult > 1 ? n - 1 : n);
  double v;
  if (!fs_parse_number(num, &v, NULL) || !(v >= 0) || !isfinite(v * mult)) {
    fs_cli_usage("plan", "%s expects a number >= 0 (suffixes K, M, G, T), not \"%s\"", opt, text);
    return FALSE;
  }
  *out = v * mult;
  return TRUE;
}

static gboolean parse_list(const char *opt, const char *text, guint *out, guint *n)
{
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  *n = 0;
  for (guint i = 0; parts[i] != NULL; i++) {
    int64_t v;
    g_strstrip(parts[i]);
    if (*n >= FS_PLANNER_MAX_CHOICES || !fs_parse_int(parts[i], &v, NULL) || v > G_MAXINT) {
      fs_cli_usage("plan", "%s expects up to %u comma-separated integers, not \"%s\"", opt,
                   FS_PLANNER_MAX_CHOICES, text);
      return FALSE;
    }
    out[(*n)++] = (guint)v;
  }
  return TRUE;
}

static gboolean parse_gpus(const char *text, FsPlannerSpec *s)
{
  const char *dash = strchr(text, '-');
  if (dash == NULL)
    return parse_list("--gpus", text, s->gpus, &s->n_gpus);
  g_autofree char *lo = g_strndup(text, dash - text);
  int64_t a, b;
  if (!fs_parse_int(g_strstrip(lo), &a, NULL) || !fs_parse_int(dash + 1, &b, NULL) || a < 1 ||
      b < a || b > (1 << 24)) {
    fs_cli_usage("plan", "--gpus expects a list (8,16,32) or a range LO-HI with 1 <= LO <= HI, not \"%s\"", text);
    return FALSE;
  }
  s->gpus_min = (guint)a;
  s->gpus_max = (guint)b;
  return TRUE;
}

static gboolean parse_recompute(const char *text, FsPlannerSpec *s)
{
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  for (guint i = 0; parts[i] != NULL; i++) {
    FsRecompute r;
    if (s->n_recompute >= FS_PLANNER_MAX_CHOICES || !fs_recompute_from_name(g_strstrip(parts[i]), &r)) {
      fs_cli_usage("plan", "--recompute expects none, selective or full (comma-separated), not \"%s\"", text);
      return FALSE;
    }
    s->recompute[s->n_recompute++] = r;
  }
  return TRUE;
}

static gboolean parse_schedules(const char *text, FsPlannerSpec *s)
{
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  for (guint i = 0; parts[i] != NULL; i++) {
    FsPpSchedule v;
    if (s->n_schedule >= FS_PLANNER_MAX_CHOICES || !fs_pp_schedule_from_name(g_strstrip(parts[i]), &v)) {
      fs_cli_usage("plan", "--schedule expects gpipe, 1f1b or interleaved (comma-separated), not \"%s\"", text);
      return FALSE;
    }
    s->schedule[s->n_schedule++] = v;
  }
  return TRUE;
}

static gboolean parse_step(const char *text, double *out)
{
  double v;
  FsTime t;
  if (fs_parse_number(text, &v, NULL) && v > 0 && isfinite(v)) {
    *out = v;
    return TRUE;
  }
  if (fs_parse_time(text, &t, NULL) && t > 0) {
    *out = fs_time_to_s(t);
    return TRUE;
  }
  fs_cli_usage("plan", "--target-step-time expects a time > 0 (\"20 s\", \"900 ms\"), not \"%s\"", text);
  return FALSE;
}

/* ---- progress ---- */

typedef struct {
  gboolean tty;
  gint64 t0, last;
  guint done, total;
} Progress;

static void progress(guint done, guint total, void *ud)
{
  Progress *pr = ud;
  pr->done = done;
  pr->total = total;
  if (!pr->tty)
    return;
  gint64 now = g_get_monotonic_time();
  gboolean final = done == total;
  if (!final && now - pr->last < 100000)
    return;
  pr->last = now;
  double el = (now - pr->t0) / 1e6, rate = el > 0 ? done / el : 0;
  double eta = rate > 0 ? (total - done) / rate : 0;
  int width = 30, fill = total ? (int)((guint64)width * done / total) : width;
  char bar[64];
  for (int i = 0; i < width; i++)
    bar[i] = i < fill ? '#' : '.';
  bar[width] = '\0';
  fprintf(stderr, "\r[%s] %u/%u designs  %.1f/s  ETA %d:%02d%s", bar, done, total, rate,
          (int)eta / 60, (int)eta % 60, final ? "\n" : "");
  fflush(stderr);
}

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

static void print_header(const FsPlanner *p, const FsPlannerSpec *s)
{
  const FsPlannerStats *st = fs_planner_stats(p);
  if (s->target_step_s > 0)
    printf("plan: %s, target step time %.4g s, ranked by %s\n", s->workload, s->target_step_s,
           fs_planner_rank_name(s->rank_by));
  else
    printf("plan: %s, target %.6g tokens/s, ranked by %s\n", s->workload, s->target_tokens_per_s,
           fs_planner_rank_name(s->rank_by));
  printf("searched %u systems (fabric × GPU count), %u layouts: %u break a rule, %u fit no memory "
         "setting, %u cannot reach the target even at peak FLOP/s (%u slower memory settings skipped); "
         "%u designs simulated, %u meet the target%s\n",
         st->systems, st->layouts, st->structure, st->memory, st->bound, st->dominated, st->simulated,
         st->meets, s->cost.budget > 0 ? " within budget" : "");
  const FsPlannerCostInputs *c = &s->cost;
  if (c->gpu_hour_price >= 0)
    printf("cost basis: $%.4g per GPU-hour (given)", c->gpu_hour_price);
  else
    printf("cost basis: catalog capex amortized over %.4g years", c->amortize_years);
  printf(", $%.4g per kWh, PUE %.3g; energy = catalog TDP/power of every part × PUE; "
         "fabric switches %s\n", c->kwh_price, c->pue,
         c->switch_share == FS_PLANNER_SHARE_PORTS ? "by the share of their ports in use" : "whole");
}

static void print_system(const FsPlanner *p, const FsPlannerSystem *sys)
{
  (void)p;
  g_autofree char *capex = money(sys->capex_usd);
  printf("  %s with %u × %s%s: %.1f kW IT power, capex %s of priced parts",
         sys->fabric, sys->gpus, sys->gpu_name, sys->nodes ? "" : " (fixed size)",
         sys->it_power_w / 1e3, sys->capex_usd > 0 ? capex : "unknown");
  if (sys->unpriced)
    printf("; no list price in the catalog for %s", sys->unpriced);
  if (sys->unpowered)
    printf("; no power figure for %s", sys->unpowered);
  printf("\n    parts:");
  for (guint i = 0; i < sys->n_models; i++) {
    const FsPlannerPart *pt = &sys->parts[i];
    printf("%s %s ×%u", i ? ";" : "", pt->model->name, pt->count);
    if (pt->units != pt->count)
      printf(" (%.2f by ports in use)", pt->units);
    g_autofree char *price = money(pt->price_usd);
    if (pt->unit_price > 0)
      printf(" %s", price);
    else
      printf(" no price");
    if (pt->unit_power_w > 0)
      printf(", %.3g kW", pt->power_w / 1e3);
    else
      printf(", no power");
  }
  printf("\n");
}

static void print_design(const FsPlanner *p, guint rank, const FsPlannerDesign *d)
{
  const FsPlannerSpec *s = fs_planner_spec(p);
  const FsPlannerSystem *sys = fs_planner_system(p, d->system);
  char lay[256];
  layout_text(d, lay, sizeof lay);
  g_autofree char *nodes = sys->nodes ? g_strdup_printf(" (%u nodes)", sys->nodes) : g_strdup("");
  printf("\n#%u  %s, %u × %s%s: %s\n", rank, sys->fabric, d->gpus, sys->gpu_name, nodes, lay);
  if (!d->ok) {
    printf("    %s\n", d->why);
    return;
  }
  g_autofree char *ps = money(d->cost.usd_per_step);
  g_autofree char *pm = money(d->cost.usd_per_mtok);
  printf("    step %.3f s, %.0f tokens/s, MFU %.1f %%, %.1f of %.1f GiB per GPU\n", d->step_s,
         d->tokens_per_s, 100 * d->mfu, d->mem_total / 1073741824.0, d->mem_capacity / 1073741824.0);
  printf("    %s per step, %s and %.3g kWh per million tokens ($%.3g per GPU-hour%s)\n", ps, pm,
         d->cost.kwh_per_mtok, d->cost.gpu_hour_price, d->cost.rate_from_capex ? ", amortized capex" : "");
  if (s->cost.tokens > 0) {
    g_autofree char *tt = duration(d->cost.train_s);
    g_autofree char *tu = money(d->cost.train_usd);
    g_autofree char *tk = count_text(s->cost.tokens);
    printf("    %s tokens: %s, %s, %.4g MWh\n", tk, tt, tu, d->cost.train_kwh / 1e3);
  }
  printf("    why: %s\n", d->why);
}

static void print_text(const FsPlanner *p, guint top)
{
  const FsPlannerSpec *s = fs_planner_spec(p);
  const FsPlannerStats *st = fs_planner_stats(p);
  print_header(p, s);
  guint n = fs_planner_n_designs(p);
  guint k = top ? MIN(top, n) : n;
  if (n == 0)
    return;
  printf("\nsystems of the designs below:\n");
  g_autofree gboolean *shown = g_new0(gboolean, fs_planner_n_systems(p));
  for (guint i = 0; i < k; i++) {
    guint si = fs_planner_design(p, i)->system;
    if (!shown[si])
      print_system(p, fs_planner_system(p, si));
    shown[si] = TRUE;
  }
  if (st->meets == 0)
    printf("\nNo design meets the target%s; the closest:\n", s->cost.budget > 0 ? " within budget" : "");
  for (guint i = 0; i < k; i++)
    print_design(p, i + 1, fs_planner_design(p, i));
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

static void print_json(const FsPlanner *p, guint top)
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
  char *txt = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
  printf("%s\n", txt);
  free(txt);
  json_decref(o);
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

static void print_csv(const FsPlanner *p, guint top)
{
  GString *s = g_string_new("rank,fabric,gpus,gpu,nodes,tp,pp,dp,cp,ep,sequence_parallel,schedule,"
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
  fputs(s->str, stdout);
  g_string_free(s, TRUE);
}

/* Why nothing was simulated, or nothing met the target (stderr, one line). */
static void explain_failure(const FsPlanner *p)
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
  fprintf(stderr, "fabricsim plan: %s\n", m->str);
  g_string_free(m, TRUE);
}

int fs_cmd_plan(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx = g_option_context_new("- capacity planning: fabrics, GPU counts and layouts that meet a target");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Searches GPU counts × TP/PP/DP/CP/EP × micro-batch on each fabric (scaled through its\n"
    "`nodes` parameter), keeps the cheapest memory setting (recompute, ZeRO) that fits,\n"
    "drops designs that cannot reach the target even at peak FLOP/s, simulates the rest\n"
    "(analytic flows, DP collectives timed alone) and ranks them by cost, GPUs, energy or\n"
    "time, with the reason each wins.  Exit 1 when no design meets the target.\n"
    "\nExample:\n"
    "  fabricsim plan --workload workloads/llama2-7b.yaml --fabric topologies/dgx-h100-ib-ndr.yaml \\\n"
    "      --gpus 8-32 --target-step-time 20s --gpu-hour-price 2.5 --pue 1.2 --tokens 2T\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "plan");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc > 1)
    return fs_cli_usage("plan", "unexpected argument \"%s\" (workload overrides go in --set)", argv[1]);
  if (opt_workload == NULL)
    return fs_cli_usage("plan", "--workload FILE is required");
  if (opt_fabrics == NULL || opt_fabrics[0] == NULL)
    return fs_cli_usage("plan", "at least one --fabric TOPO is required");
  if ((opt_tps != NULL) == (opt_step != NULL))
    return fs_cli_usage("plan", "give exactly one of --target-tokens-per-s and --target-step-time");
  if (opt_json && opt_csv)
    return fs_cli_usage("plan", "--json and --csv are exclusive");
  if (opt_top < 0 || opt_jobs < 0 || opt_max < 0 || opt_max_systems < 0)
    return fs_cli_usage("plan", "--top, --jobs, --max-candidates and --max-systems must be >= 0");
  FsPlannerSpec s;
  fs_planner_spec_init(&s);
  s.workload = opt_workload;
  s.fabrics = (const char *const *)opt_fabrics;
  s.defines = (const char *const *)opt_defines;
  s.overrides = (const char *const *)opt_sets;
  s.threads = (guint)opt_jobs;
  s.max_candidates = (guint)opt_max;
  s.max_systems = (guint)opt_max_systems;
  if (opt_tps != NULL) {
    if (!parse_amount("--target-tokens-per-s", opt_tps, &s.target_tokens_per_s))
      return 2;
    if (s.target_tokens_per_s <= 0)
      return fs_cli_usage("plan", "--target-tokens-per-s must be > 0");
  }
  if (opt_step && !parse_step(opt_step, &s.target_step_s))
    return 2;
  if ((opt_gpus && !parse_gpus(opt_gpus, &s)) ||
      (opt_tp && !parse_list("--tp", opt_tp, s.tp, &s.n_tp)) ||
      (opt_pp && !parse_list("--pp", opt_pp, s.pp, &s.n_pp)) ||
      (opt_cp && !parse_list("--cp", opt_cp, s.cp, &s.n_cp)) ||
      (opt_ep && !parse_list("--ep", opt_ep, s.ep, &s.n_ep)) ||
      (opt_mb && !parse_list("--micro-batch", opt_mb, s.micro_batch, &s.n_micro_batch)) ||
      (opt_zero && !parse_list("--zero", opt_zero, s.zero, &s.n_zero)) ||
      (opt_recompute && !parse_recompute(opt_recompute, &s)) ||
      (opt_schedule && !parse_schedules(opt_schedule, &s)))
    return 2;
  if (opt_vp < 0 || opt_vp == 1)
    return fs_cli_usage("plan", "--vp must be 2 or more");
  s.vp = (guint)opt_vp;
  if ((opt_budget && !parse_amount("--budget", opt_budget, &s.cost.budget)) ||
      (opt_hour && !parse_amount("--gpu-hour-price", opt_hour, &s.cost.gpu_hour_price)) ||
      (opt_kwh && !parse_amount("--kwh-price", opt_kwh, &s.cost.kwh_price)) ||
      (opt_pue && !parse_amount("--pue", opt_pue, &s.cost.pue)) ||
      (opt_years && !parse_amount("--amortize-years", opt_years, &s.cost.amortize_years)) ||
      (opt_tokens && !parse_amount("--tokens", opt_tokens, &s.cost.tokens)))
    return 2;
  if (opt_share && !fs_planner_share_from_name(opt_share, &s.cost.switch_share))
    return fs_cli_usage("plan", "--switch-share expects whole or ports, not \"%s\"", opt_share);
  if (opt_rank && !fs_planner_rank_from_name(opt_rank, &s.rank_by))
    return fs_cli_usage("plan", "--rank-by expects cost, gpus, energy or time, not \"%s\"", opt_rank);
  GError *error = NULL;
  g_autoptr(FsCalibration) cal = NULL;
  g_autoptr(FsCatalog) cat = fs_calibration_load_catalog(opt_models, opt_calibration, &cal, &error);
  if (cat == NULL)
    return fs_cli_fail("plan", error);
  g_autofree char *cdir = opt_models ? g_build_filename(opt_models, "compute", NULL) : NULL;
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(cdir, &error);
  if (eff == NULL || (cal != NULL && !fs_calibration_apply_efficiency(cal, cat, eff, &error)))
    return fs_cli_fail("plan", error);
  g_autoptr(FsNcclParams) np = fs_nccl_params_load_default(&error);
  if (np == NULL)
    return fs_cli_fail("plan", error);
  g_autoptr(FsPlanner) p = fs_planner_new(&s, cat, eff, np, &error);
  if (p == NULL || !fs_planner_prepare(p, &error))
    return fs_cli_fail("plan", error);
  Progress pr = { !opt_quiet && isatty(STDERR_FILENO), g_get_monotonic_time(), 0, 0, 0 };
  if (!fs_planner_run(p, progress, &pr, &error)) {
    if (pr.tty)
      fputc('\n', stderr); /* end the progress line */
    if (g_error_matches(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED)) {
      /* A ranking of some designs would mislead: nothing is printed. */
      g_free(error->message);
      error->message = g_strdup_printf("interrupted after %u of %u designs; nothing written",
                                       pr.done, fs_planner_n_designs(p));
    }
    return fs_cli_fail("plan", error);
  }
  if (opt_json)
    print_json(p, (guint)opt_top);
  else if (opt_csv)
    print_csv(p, (guint)opt_top);
  else
    print_text(p, (guint)opt_top);
  if (fs_planner_stats(p)->meets == 0) {
    explain_failure(p);
    return 1;
  }
  return 0;
}
