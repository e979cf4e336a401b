/* cmd-plan.c — `fabricsim plan --workload W --fabric TOPO… (--target-
 * tokens-per-s X | --target-step-time T)`: capacity planning.  Parses the
 * options into an FsPlannerSpec (src/plan/plan.h), runs the search with a
 * progress bar on a terminal, and prints the best designs with their cost,
 * energy and the reason each wins (text), or JSON / CSV (schemas in
 * README.md, "Output").  Exit 1 when no design meets the target. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "plan/plan.h"
#include "report/plan.h"
#include "report/progress.h"
#include "scenario/scenario.h"
#include "util/error.h"
#include "util/units.h"


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
  {"tokens", 0, 0, G_OPTION_ARG_STRING, &opt_tokens, "Tokens to train, for time and cost to train (2T, 300G; amounts at most 1000T)", "N"},
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
  FS_OPT_QUIET(opt_quiet),
  FS_OPT_CALIBRATION(opt_calibration),
  FS_OPT_MODELS(opt_models),
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* ---- progress ---- */

typedef struct {
  FsProgress *line;
  guint done;
} Progress;

static void progress(guint done, guint total, void *ud)
{
  Progress *pr = ud;
  pr->done = done;
  fs_progress_count(pr->line, done, total, "designs");
}

/* "fabricsim plan": checks and parses the options into a planner spec (target, fabrics, layout
 * lists, cost inputs, ranking), loads the scenario with NCCL parameters and efficiencies, runs
 * the planner with a progress line and prints the ranked designs as text, JSON or CSV. An
 * interrupt prints nothing. Returns 0, 1 when no design meets the target (after saying why on
 * stderr), 2 on a usage error, or the exit status of the first error. */
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
  GError *error = NULL;
  if (opt_tps != NULL) {
    if (!fs_planner_parse_amount("--target-tokens-per-s", opt_tps, &s.target_tokens_per_s, &error))
      return fs_cli_fail("plan", error);
    if (s.target_tokens_per_s <= 0)
      return fs_cli_usage("plan", "--target-tokens-per-s must be > 0");
  }
  if (opt_step && !fs_planner_parse_step(opt_step, &s.target_step_s, &error))
    return fs_cli_fail("plan", error);
  if ((opt_gpus && !fs_planner_parse_gpus(opt_gpus, &s, &error)) ||
      (opt_tp && !fs_planner_parse_list("--tp", opt_tp, s.tp, &s.n_tp, &error)) ||
      (opt_pp && !fs_planner_parse_list("--pp", opt_pp, s.pp, &s.n_pp, &error)) ||
      (opt_cp && !fs_planner_parse_list("--cp", opt_cp, s.cp, &s.n_cp, &error)) ||
      (opt_ep && !fs_planner_parse_list("--ep", opt_ep, s.ep, &s.n_ep, &error)) ||
      (opt_mb && !fs_planner_parse_list("--micro-batch", opt_mb, s.micro_batch, &s.n_micro_batch, &error)) ||
      (opt_zero && !fs_planner_parse_list("--zero", opt_zero, s.zero, &s.n_zero, &error)) ||
      (opt_recompute && !fs_planner_parse_recompute(opt_recompute, &s, &error)) ||
      (opt_schedule && !fs_planner_parse_schedules(opt_schedule, &s, &error)))
    return fs_cli_fail("plan", error);
  if (opt_vp < 0 || opt_vp == 1)
    return fs_cli_usage("plan", "--vp must be 2 or more");
  s.vp = (guint)opt_vp;
  if ((opt_budget && !fs_planner_parse_amount("--budget", opt_budget, &s.cost.budget, &error)) ||
      (opt_hour && !fs_planner_parse_amount("--gpu-hour-price", opt_hour, &s.cost.gpu_hour_price, &error)) ||
      (opt_kwh && !fs_planner_parse_amount("--kwh-price", opt_kwh, &s.cost.kwh_price, &error)) ||
      (opt_pue && !fs_planner_parse_amount("--pue", opt_pue, &s.cost.pue, &error)) ||
      (opt_years && !fs_planner_parse_amount("--amortize-years", opt_years, &s.cost.amortize_years, &error)) ||
      (opt_tokens && !fs_planner_parse_amount("--tokens", opt_tokens, &s.cost.tokens, &error)))
    return fs_cli_fail("plan", error);
  if (opt_share && !fs_planner_share_from_name(opt_share, &s.cost.switch_share))
    return fs_cli_usage("plan", "--switch-share expects whole or ports, not \"%s\"", opt_share);
  if (opt_rank && !fs_planner_rank_from_name(opt_rank, &s.rank_by))
    return fs_cli_usage("plan", "--rank-by expects cost, gpus, energy or time, not \"%s\"", opt_rank);
  FsScenarioInputs in = { .models_dir = opt_models, .calibration = opt_calibration,
                          .needs = FS_SCENARIO_NEED_NCCL | FS_SCENARIO_NEED_EFFICIENCY };
  g_autoptr(FsScenario) sc = fs_scenario_load(&in, &error);
  if (sc == NULL)
    return fs_cli_fail("plan", error);
  g_autoptr(FsPlanner) p = fs_planner_new_in(&s, sc, &error);
  if (p == NULL || !fs_planner_prepare(p, &error))
    return fs_cli_fail("plan", error);
  g_autoptr(FsProgress) line = fs_progress_new("plan", opt_quiet);
  Progress pr = { line, 0 };
  gboolean ran = fs_planner_run(p, progress, &pr, &error);
  g_clear_pointer(&line, fs_progress_free); /* ends the progress line */
  if (!ran) {
    if (g_error_matches(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED)) {
      /* A ranking of some designs would mislead: nothing is printed. */
      g_free(error->message);
      error->message = g_strdup_printf("interrupted after %u of %u designs; nothing written",
                                       pr.done, fs_planner_n_designs(p));
    }
    return fs_cli_fail("plan", error);
  }
  g_autoptr(GString) out = g_string_new(NULL);
  fs_report_plan(out, opt_json ? FS_REPORT_JSON : opt_csv ? FS_REPORT_CSV : FS_REPORT_TEXT, p,
                 (guint)opt_top);
  fputs(out->str, stdout);
  if (fs_planner_stats(p)->meets == 0) {
    g_string_truncate(out, 0);
    fs_report_plan_failure(out, p);
    fprintf(stderr, "fabricsim plan: %s\n", out->str);
    return 1;
  }
  return 0;
}
