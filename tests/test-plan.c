/* test-plan.c — the capacity planner: divisors and search-space pruning
 * (structure, memory, compute bound, the size limit), cost and energy
 * arithmetic against hand-computed values, part lists of a real topology,
 * the ranking order and its stable tie-break, spec errors, and a small
 * end-to-end run whose ranking does not depend on the thread count. */
#include <math.h>
#include <string.h>

#include "coll/nccl-params.h"
#include "compute/efficiency.h"
#include "plan/plan.h"
#include "testutil.h"
#include "util/error.h"

static void close_to(double a, double b)
{
  ck_assert_msg(fabs(a - b) <= 1e-9 * fmax(1, fabs(b)), "%.12g != %.12g", a, b);
}
#define CLOSE(a, b) close_to((double)(a), (double)(b))

/* Llama 2 7B on one DGX H100 (8 GPUs), the given target step time. */
typedef struct {
  char *workload, *fabric;
  const char *fabrics[2];
  FsPlannerSpec spec;
} Setup;

static void small_spec(Setup *s, double target_s)
{
  s->workload = fs_test_source_path("workloads/llama2-7b.yaml");
  s->fabric = fs_test_source_path("topologies/dgx-h100.yaml");
  s->fabrics[0] = s->fabric;
  s->fabrics[1] = NULL;
  fs_planner_spec_init(&s->spec);
  s->spec.workload = s->workload;
  s->spec.fabrics = s->fabrics;
  s->spec.target_step_s = target_s;
}

static void small_free(Setup *s)
{
  g_free(s->workload);
  g_free(s->fabric);
}

START_TEST(test_plan_divisors)
{
  guint d[FS_PLANNER_MAX_CHOICES];
  ck_assert_uint_eq(fs_planner_divisors(12, 12, d), 6);
  ck_assert_uint_eq(d[0], 1);
  ck_assert_uint_eq(d[3], 4);
  ck_assert_uint_eq(d[5], 12);
  ck_assert_uint_eq(fs_planner_divisors(12, 4, d), 4);
  ck_assert_uint_eq(d[3], 4);
  ck_assert_uint_eq(fs_planner_divisors(7, 8, d), 2);
}
END_TEST

/* 16 GPUs, 11.2 kW of parts, PUE 1.5, 10 s per step of 4,194,304 tokens
 * (Llama 2's 1024 × 4096), $2 per GPU-hour, $0.10 per kWh, 1e9 tokens:
 *   energy/step = 11200 × 1.5 × 10        = 168000 J = 0.0466667 kWh
 *   kWh / Mtok  = 0.0466667 × 1e6/4194304 = 0.0111262
 *   $/step      = 16 × 2 × 10/3600 + 0.0466667 × 0.1 = 0.0935556
 *   $/Mtok      = 0.0935556 × 0.238419   = 0.0223054
 *   train       = 238.419 steps: 2384.19 s, $22.3054, 11.1262 kWh. */
START_TEST(test_plan_cost_arithmetic)
{
  FsPlannerCostInputs in;
  fs_planner_cost_inputs_init(&in);
  ck_assert(in.gpu_hour_price < 0);
  CLOSE(in.pue, 1.0);
  in.gpu_hour_price = 2.0;
  in.pue = 1.5;
  in.kwh_price = 0.1;
  in.tokens = 1e9;
  FsPlannerCost c;
  fs_planner_cost_compute(&in, 16, 11200, 0, 10.0, 4194304, &c);
  CLOSE(c.energy_j_per_step, 168000);
  CLOSE(c.kwh_per_mtok, 0.011126200358072918);
  CLOSE(c.usd_per_step, 0.09355555555555556);
  CLOSE(c.usd_per_mtok, 0.02230538262261285);
  CLOSE(c.train_s, 2384.185791015625);
  CLOSE(c.train_usd, 22.305382622612846);
  CLOSE(c.train_kwh, 11.126200358072918);
  ck_assert(!c.rate_from_capex);
  CLOSE(c.gpu_hour_price, 2.0);
}
END_TEST

/* Without a rate: $480,000 of GPUs over 16 GPUs and 4 × 8760 hours is
 * $0.856164 per GPU-hour; without capex the cost is unknown (NaN). */
START_TEST(test_plan_cost_amortized)
{
  FsPlannerCostInputs in;
  fs_planner_cost_inputs_init(&in);
  FsPlannerCost c;
  fs_planner_cost_compute(&in, 16, 11200, 480000, 10.0, 4194304, &c);
  ck_assert(c.rate_from_capex);
  CLOSE(c.gpu_hour_price, 0.8561643835616438);
  CLOSE(c.usd_per_step, 16 * 0.8561643835616438 * 10 / 3600);
  CLOSE(c.capex_usd, 480000);
  CLOSE(c.train_s, 0);
  fs_planner_cost_compute(&in, 16, 11200, 0, 10.0, 4194304, &c);
  ck_assert(isnan(c.usd_per_mtok));
  /* Energy does not need a price. */
  CLOSE(c.energy_j_per_step, 112000);
}
END_TEST

static void system_clear(FsPlannerSystem *sys)
{
  g_free(sys->unpriced);
  g_free(sys->unpowered);
  g_free(sys->parts);
}

/* A DGX H100 from the catalog: 8 × 700 W H100 ($30,000 each, a
 * street-price estimate), 2 × 350 W Xeon 8480C (no price), 8 × ConnectX-7
 * (24.9 W typical, $2,188 reseller price); NVSwitches and PCIe switches
 * are listed, not guessed:
 *   power = 8 × 700 + 2 × 350 + 8 × 24.9 = 6499.2 W
 *   capex = 8 × 30000 + 8 × 2188       = 257504 USD */
START_TEST(test_plan_system_costs)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100.yaml", NULL);
  FsPlannerSystem sys = {0};
  fs_planner_system_costs(topo, FS_PLANNER_SHARE_WHOLE, &sys);
  CLOSE(sys.it_power_w, 6499.2);
  CLOSE(sys.capex_usd, 257504);
  ck_assert_uint_eq(sys.n_parts, 8 + 2 + 8 + 4 + 4);
  ck_assert_ptr_nonnull(strstr(sys.unpriced, "xeon-platinum-8480c ×2"));
  ck_assert_ptr_null(strstr(sys.unpriced, "connectx-7"));
  ck_assert_ptr_null(strstr(sys.unpriced, "h100"));
  ck_assert_ptr_nonnull(strstr(sys.unpowered, "nvswitch-gen3 ×4"));
  ck_assert_ptr_null(strstr(sys.unpowered, "xeon"));
  ck_assert_ptr_null(strstr(sys.unpowered, "connectx-7"));
  /* Sorted by model name. */
  ck_assert(strstr(sys.unpriced, "nvswitch-gen3") < strstr(sys.unpriced, "xeon"));
  /* One entry per model, by name, with its share of the totals. */
  ck_assert_uint_eq(sys.n_models, 5);
  const char *names[] = {"connectx-7", "h100-sxm", "nvswitch-gen3", "pex89144", "xeon-platinum-8480c"};
  for (guint i = 0; i < 5; i++)
    ck_assert_str_eq(sys.parts[i].model->name, names[i]);
  ck_assert_uint_eq(sys.parts[0].count, 8);
  CLOSE(sys.parts[0].power_w, 199.2);
  CLOSE(sys.parts[0].price_usd, 17504);
  CLOSE(sys.parts[1].price_usd, 240000);
  CLOSE(sys.parts[2].price_usd, 0);
  ck_assert(!sys.parts[2].fabric);
  /* Calling again replaces the lists (no leak under ASan). */
  fs_planner_system_costs(topo, FS_PLANNER_SHARE_PORTS, &sys);
  CLOSE(sys.it_power_w, 6499.2);
  system_clear(&sys);
}
END_TEST

/* Four DGX H100 on the rail-optimized NDR fabric (the file's default):
 * 8 leaves (one per rail) and 4 spines, Quantum-2 QM9700 with 64 ports at
 * 747 W typical and no price.  Each leaf carries 4 host links and 32
 * uplinks (8 to each spine): 36 of 64 ports; each spine 8 × 8 = 64.
 *   whole: 4 × 6499.2 + 12 × 747                    = 34960.8 W
 *   ports: 4 × 6499.2 + (8 × 36/64 + 4) × 747 = 25996.8 + 8.5 × 747 = 32346.3 W
 * The NVSwitch and PCIe switches inside the hosts count whole either way;
 * capex is the hosts' 4 × 257504 = 1030016 USD. */
START_TEST(test_plan_switch_share)
{
  g_autoptr(FsTopo) topo = fs_test_load_topo("dgx-h100-ib-ndr.yaml", NULL);
  int leaf = fs_topo_find(topo, "ib/leaf0"), spine = fs_topo_find(topo, "ib/spine0");
  ck_assert_int_ge(leaf, 0);
  ck_assert_int_ge(spine, 0);
  CLOSE(fs_planner_port_share(topo, (guint)leaf), 36.0 / 64);
  CLOSE(fs_planner_port_share(topo, (guint)spine), 1);
  CLOSE(fs_planner_port_share(topo, (guint)fs_topo_find(topo, "node0/gpu0")), 1);
  FsPlannerSystem sys = {0};
  fs_planner_system_costs(topo, FS_PLANNER_SHARE_WHOLE, &sys);
  CLOSE(sys.it_power_w, 34960.8);
  CLOSE(sys.capex_usd, 1030016);
  ck_assert_ptr_nonnull(strstr(sys.unpriced, "quantum-2-ndr ×12"));
  ck_assert_ptr_null(strstr(sys.unpowered ? sys.unpowered : "", "quantum"));
  const FsPlannerPart *q = &sys.parts[sys.n_models - 2];
  ck_assert_str_eq(q->model->name, "quantum-2-ndr");
  ck_assert(q->fabric);
  CLOSE(q->units, 12);
  fs_planner_system_costs(topo, FS_PLANNER_SHARE_PORTS, &sys);
  CLOSE(sys.it_power_w, 32346.3);
  CLOSE(sys.capex_usd, 1030016);
  q = &sys.parts[sys.n_models - 2];
  ck_assert_uint_eq(q->count, 12);
  CLOSE(q->units, 8.5);
  CLOSE(q->power_w, 6349.5);
  /* In-host switches are whole. */
  ck_assert_str_eq(sys.parts[2].model->name, "nvswitch-gen3");
  CLOSE(sys.parts[2].units, 16);
  system_clear(&sys);
}
END_TEST

/* The cost of one design from those catalog figures: the 32 GPUs of the
 * four-node system above, PUE 1.3, $0.10 per kWh, 10 s per step of
 * 4,194,304 tokens, no hourly rate (so the capex sets it, over 4 years):
 *   rate        = 1030016 / 32 / (4 × 8760)        = 0.918607 $/GPU-hour
 *   energy/step = 34960.8 × 1.3 × 10               = 454490.4 J = 0.126247 kWh
 *   $/step      = 32 × 0.918607 × 10/3600 + 0.126247 × 0.1 = 0.0942787
 *   kWh / Mtok  = 0.126247 × 1e6 / 4194304         = 0.0300997
 * With the port share the energy drops to 32346.3 × 1.3 × 10 = 420501.9 J. */
START_TEST(test_plan_cost_from_catalog)
{
  FsPlannerCostInputs in;
  fs_planner_cost_inputs_init(&in);
  in.pue = 1.3;
  in.kwh_price = 0.1;
  FsPlannerCost c;
  fs_planner_cost_compute(&in, 32, 34960.8, 1030016, 10.0, 4194304, &c);
  ck_assert(c.rate_from_capex);
  CLOSE(c.gpu_hour_price, 1030016.0 / 32 / (4 * 8760));
  ck_assert(fabs(c.gpu_hour_price - 0.918607) < 5e-7);
  CLOSE(c.energy_j_per_step, 454490.4);
  CLOSE(c.usd_per_step, 32 * (1030016.0 / 32 / 35040) * 10 / 3600 + 454490.4 / 3.6e6 * 0.1);
  ck_assert(fabs(c.usd_per_step - 0.0942787) < 5e-7);
  ck_assert(fabs(c.kwh_per_mtok - 0.0300997) < 5e-7);
  fs_planner_cost_compute(&in, 32, 32346.3, 1030016, 10.0, 4194304, &c);
  CLOSE(c.energy_j_per_step, 420501.9);
}
END_TEST

static FsPlannerDesign mk(guint key, gboolean ok, gboolean meets, gboolean budget, double metric,
                          double step)
{
  FsPlannerDesign d = {0};
  d.key = key;
  d.ok = ok;
  d.meets = meets;
  d.in_budget = budget;
  d.metric = metric;
  d.step_s = step;
  return d;
}

/* Meeting and in budget first, then over budget, then misses, then
 * failures; inside a group the metric, then the step time, then the key. */
START_TEST(test_plan_rank_order)
{
  FsPlannerDesign d[] = {
    mk(0, FALSE, FALSE, FALSE, INFINITY, 0),
    mk(1, TRUE, FALSE, TRUE, 30, 30),
    mk(2, TRUE, TRUE, FALSE, 1, 5),
    mk(3, TRUE, TRUE, TRUE, 2, 5),
    mk(4, TRUE, TRUE, TRUE, 2, 4),
    mk(5, TRUE, TRUE, TRUE, 2, 4),
    mk(6, TRUE, TRUE, TRUE, 3, 1),
    mk(7, TRUE, FALSE, TRUE, 25, 25),
  };
  qsort(d, G_N_ELEMENTS(d), sizeof d[0], fs_planner_design_cmp);
  static const guint want[] = { 4, 5, 3, 6, 2, 7, 1, 0 };
  for (guint i = 0; i < G_N_ELEMENTS(want); i++)
    ck_assert_uint_eq(d[i].key, want[i]);
  FsPlannerRank r;
  ck_assert(fs_planner_rank_from_name("energy", &r));
  ck_assert_int_eq(r, FS_PLANNER_RANK_ENERGY);
  ck_assert(!fs_planner_rank_from_name("speed", &r));
  ck_assert_str_eq(fs_planner_rank_name(FS_PLANNER_RANK_GPUS), "gpus");
}
END_TEST

/* Llama 2 7B with 30 layers on 8 GPUs of one node: tp ∈ {1, 2, 4, 8} and
 * pp | 8/tp give 10 layouts × 3 micro-batches = 30; pp 4 and 8 do not
 * divide 30 layers (tp 1: pp 4, 8; tp 2: pp 4) — 9 rejected by structure.
 * Every kept design fits, with the first memory setting that fits. */
START_TEST(test_plan_prune_structure_and_memory)
{
  GError *error = NULL;
  Setup s;
  small_spec(&s, 1000);
  const char *ov[] = { "model.layers=30", NULL };
  s.spec.overrides = ov;
  g_autoptr(FsPlanner) p = fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error);
  fs_assert_no_error(error);
  ck_assert(fs_planner_prepare(p, &error));
  fs_assert_no_error(error);
  const FsPlannerStats *st = fs_planner_stats(p);
  ck_assert_uint_eq(st->systems, 1);
  ck_assert_uint_eq(st->layouts, 30);
  ck_assert_uint_eq(st->structure, 9);
  ck_assert_ptr_nonnull(strstr(st->structure_example, "layers"));
  ck_assert_uint_eq(st->bound, 0);
  ck_assert_uint_eq(fs_planner_n_designs(p) + st->memory, 21);
  ck_assert_uint_gt(fs_planner_n_designs(p), 0);
  guint last = 0;
  for (guint i = 0; i < fs_planner_n_designs(p); i++) {
    const FsPlannerDesign *d = fs_planner_design(p, i);
    ck_assert_uint_le(d->mem_total, d->mem_capacity);
    ck_assert_uint_le(d->tp, 8);
    ck_assert_uint_eq(d->tp * d->pp * d->dp * d->cp, 8);
    ck_assert_uint_eq(30 % d->pp, 0);
    ck_assert(d->sequence_parallel == (d->tp > 1));
    /* Enumeration order is the key order. */
    ck_assert(i == 0 || d->key > last);
    last = d->key;
  }
  small_free(&s);
}
END_TEST

/* A target no layout can reach at peak FLOP/s prunes everything and keeps
 * the best bound: 8 H100 need more than 1 s per step for Llama 2 7B's
 * 4 M tokens (6 × 6.7e9 × 4.2e6 FLOPs ≈ 1.7e17 over 8 × 989 TFLOP/s). */
START_TEST(test_plan_prune_bound)
{
  GError *error = NULL;
  Setup s;
  small_spec(&s, 1.0);
  g_autoptr(FsPlanner) p = fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error);
  fs_assert_no_error(error);
  ck_assert(fs_planner_prepare(p, &error));
  const FsPlannerStats *st = fs_planner_stats(p);
  ck_assert_uint_eq(fs_planner_n_designs(p), 0);
  ck_assert_uint_gt(st->bound, 0);
  ck_assert_uint_eq(st->bound + st->memory + st->structure, st->layouts);
  ck_assert_uint_eq(st->best_bound_gpus, 8);
  ck_assert(st->best_bound_s > 15 && st->best_bound_s < 30);
  small_free(&s);
}
END_TEST

/* Schedules are a search dimension only when pp > 1: tp 2 on 8 GPUs has
 * pp 1 (1F1B only), pp 2 and pp 4 (1F1B and interleaved ×2 each). */
START_TEST(test_plan_schedules)
{
  GError *error = NULL;
  Setup s;
  small_spec(&s, 1000);
  s.spec.tp[0] = 2;
  s.spec.n_tp = 1;
  s.spec.micro_batch[0] = 1;
  s.spec.n_micro_batch = 1;
  s.spec.schedule[0] = FS_PP_1F1B;
  s.spec.schedule[1] = FS_PP_INTERLEAVED;
  s.spec.n_schedule = 2;
  g_autoptr(FsPlanner) p = fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error);
  fs_assert_no_error(error);
  ck_assert(fs_planner_prepare(p, &error));
  fs_assert_no_error(error);
  ck_assert_uint_eq(fs_planner_stats(p)->layouts, 5);
  ck_assert_uint_eq(fs_planner_n_designs(p), 5);
  static const guint pps[] = { 1, 2, 2, 4, 4 };
  for (guint i = 0; i < 5; i++) {
    const FsPlannerDesign *d = fs_planner_design(p, i);
    ck_assert_uint_eq(d->pp, pps[i]);
    gboolean inter = d->pp > 1 && (i % 2) == 0;
    ck_assert_int_eq(d->schedule, inter ? FS_PP_INTERLEAVED : FS_PP_1F1B);
    ck_assert_uint_eq(d->vp, inter ? 2 : 1);
  }
  /* One virtual stage is not interleaving. */
  s.spec.vp = 1;
  ck_assert_ptr_null(fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error));
  fs_assert_error(error, FS_PLANNER_ERROR, "virtual stages");
  small_free(&s);
}
END_TEST

/* Llama 2 70B cannot fit on 8 × 80 GiB whatever the setting (16 bytes of
 * model state per parameter, 70e9 × 16 / 8 = 140 GB even fully sharded):
 * every layout is pruned for memory, the smallest footprint is named, and
 * nothing is simulated. */
START_TEST(test_plan_prune_memory)
{
  GError *error = NULL;
  Setup s;
  small_spec(&s, 1e6);
  g_free(s.workload);
  s.workload = fs_test_source_path("workloads/llama2-70b.yaml");
  s.spec.workload = s.workload;
  g_autoptr(FsPlanner) p = fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error);
  fs_assert_no_error(error);
  ck_assert(fs_planner_prepare(p, &error));
  fs_assert_no_error(error);
  const FsPlannerStats *st = fs_planner_stats(p);
  ck_assert_uint_eq(fs_planner_n_designs(p), 0);
  ck_assert_uint_gt(st->memory, 0);
  ck_assert_uint_eq(st->memory + st->structure, st->layouts);
  ck_assert_uint_eq(st->dominated, 0);
  ck_assert_ptr_nonnull(strstr(st->memory_example, "recompute full needs"));
  ck_assert_ptr_nonnull(strstr(st->memory_example, "of 80 GiB"));
  small_free(&s);
}
END_TEST

START_TEST(test_plan_limit_and_errors)
{
  GError *error = NULL;
  Setup s;
  small_spec(&s, 1000);
  s.spec.max_candidates = 2;
  g_autoptr(FsPlanner) p = fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error);
  fs_assert_no_error(error);
  ck_assert(!fs_planner_prepare(p, &error));
  fs_assert_error(error, FS_RUNTIME_ERROR, "--max-candidates");
  /* A GPU count the fixed 8-GPU box cannot have. */
  s.spec.max_candidates = 0;
  s.spec.gpus[0] = 16;
  s.spec.n_gpus = 1;
  g_autoptr(FsPlanner) q = fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error);
  ck_assert(!fs_planner_prepare(q, &error));
  fs_assert_error(error, FS_PLANNER_ERROR, "dgx-h100: 8 GPUs only");
  s.spec.n_gpus = 0;
  /* Two targets, none, a bad PUE, -D nodes, a bad ZeRO stage. */
  s.spec.target_tokens_per_s = 1e5;
  ck_assert_ptr_null(fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error));
  fs_assert_error(error, FS_PLANNER_ERROR, "exactly one target");
  s.spec.target_tokens_per_s = 0;
  s.spec.target_step_s = 0;
  ck_assert_ptr_null(fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error));
  fs_assert_error(error, FS_PLANNER_ERROR, "exactly one target");
  s.spec.target_step_s = 10;
  s.spec.cost.pue = 0.5;
  ck_assert_ptr_null(fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error));
  fs_assert_error(error, FS_PLANNER_ERROR, "PUE");
  s.spec.cost.pue = 1.2;
  const char *defs[] = { "nodes=4", NULL };
  s.spec.defines = defs;
  ck_assert_ptr_null(fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error));
  fs_assert_error(error, FS_PLANNER_ERROR, "--gpus");
  s.spec.defines = NULL;
  s.spec.zero[0] = 4;
  s.spec.n_zero = 1;
  ck_assert_ptr_null(fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error));
  fs_assert_error(error, FS_PLANNER_ERROR, "ZeRO");
  small_free(&s);
}
END_TEST

/* The rank order as a string of design keys. */
static char *ranking(guint threads)
{
  GError *error = NULL;
  Setup s;
  small_spec(&s, 1000);
  const char *ov[] = { "training.global_batch=32", NULL };
  s.spec.overrides = ov;
  s.spec.tp[0] = 2;
  s.spec.tp[1] = 8;
  s.spec.n_tp = 2;
  s.spec.pp[0] = 1;
  s.spec.pp[1] = 2;
  s.spec.n_pp = 2;
  s.spec.micro_batch[0] = 2;
  s.spec.n_micro_batch = 1;
  s.spec.cost.gpu_hour_price = 2.0;
  s.spec.threads = threads;
  g_autoptr(FsPlanner) p = fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error);
  fs_assert_no_error(error);
  ck_assert(fs_planner_prepare(p, &error));
  ck_assert(fs_planner_run(p, NULL, NULL, &error));
  fs_assert_no_error(error);
  /* tp 2 × pp 1, tp 2 × pp 2, tp 8 × pp 1 (tp 8 × pp 2 needs 16 GPUs). */
  ck_assert_uint_eq(fs_planner_n_designs(p), 3);
  ck_assert_uint_eq(fs_planner_stats(p)->meets, 3);
  GString *out = g_string_new(NULL);
  double prev = 0;
  for (guint i = 0; i < fs_planner_n_designs(p); i++) {
    const FsPlannerDesign *d = fs_planner_design(p, i);
    ck_assert(d->ok);
    ck_assert(d->meets);
    ck_assert(d->step_s > 0 && d->step_s >= d->bound_step_s);
    /* Ranked by cost: $ per million tokens never decreases. */
    ck_assert(d->cost.usd_per_mtok >= prev);
    prev = d->cost.usd_per_mtok;
    CLOSE(d->cost.usd_per_step, 8 * 2.0 * d->step_s / 3600);
    ck_assert_ptr_nonnull(strstr(d->why, "fits"));
    if (d->tp > 1)
      ck_assert_ptr_nonnull(strstr(d->why, "NV18"));
    if (d->pp > 1)
      ck_assert_ptr_nonnull(strstr(d->why, "bubble"));
    g_string_append_printf(out, "%u:%.9g ", d->key, d->step_s);
  }
  small_free(&s);
  return g_string_free(out, FALSE);
}

START_TEST(test_plan_run_threads_do_not_change_ranking)
{
  g_autofree char *one = ranking(1);
  g_autofree char *two = ranking(2);
  ck_assert_str_eq(one, two);
}
END_TEST

/* A plan's designs share one memo of collective times (and of group
 * classes) across designs and threads: each design's figures equal a
 * plan of that design alone (a memo of its own).  4 DGX H100 on the
 * rail-optimized fabric, so data-parallel groups cross hosts and rails. */
static void multi_spec(Setup *s, const char **ov)
{
  small_spec(s, 1000);
  g_free(s->fabric);
  s->fabric = fs_test_source_path("topologies/dgx-h100-ib-ndr.yaml");
  s->fabrics[0] = s->fabric;
  s->spec.overrides = ov;
  s->spec.gpus[0] = 32;
  s->spec.n_gpus = 1;
  s->spec.zero[0] = 1;
  s->spec.n_zero = 1;
  s->spec.recompute[0] = FS_RECOMPUTE_NONE;
  s->spec.n_recompute = 1;
}

START_TEST(test_plan_shared_memo_equals_fresh)
{
  GError *error = NULL;
  const char *ov[] = { "training.global_batch=64", NULL };
  Setup s;
  multi_spec(&s, ov);
  s.spec.tp[0] = 2;
  s.spec.tp[1] = 4;
  s.spec.n_tp = 2;
  s.spec.pp[0] = 1;
  s.spec.pp[1] = 2;
  s.spec.n_pp = 2;
  s.spec.micro_batch[0] = 1;
  s.spec.micro_batch[1] = 2;
  s.spec.n_micro_batch = 2;
  s.spec.threads = 2;
  g_autoptr(FsPlanner) p = fs_planner_new(&s.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error);
  fs_assert_no_error(error);
  ck_assert(fs_planner_prepare(p, &error));
  ck_assert(fs_planner_run(p, NULL, NULL, &error));
  fs_assert_no_error(error);
  ck_assert_uint_eq(fs_planner_n_designs(p), 8);
  for (guint i = 0; i < fs_planner_n_designs(p); i++) {
    const FsPlannerDesign *d = fs_planner_design(p, i);
    ck_assert(d->ok);
    Setup one;
    multi_spec(&one, ov);
    one.spec.tp[0] = d->tp;
    one.spec.pp[0] = d->pp;
    one.spec.micro_batch[0] = d->micro_batch;
    one.spec.n_tp = one.spec.n_pp = one.spec.n_micro_batch = 1;
    one.spec.threads = 1;
    g_autoptr(FsPlanner) q = fs_planner_new(&one.spec, fs_test_cat, fs_test_eff, fs_test_nccl, &error);
    fs_assert_no_error(error);
    ck_assert(fs_planner_prepare(q, &error));
    ck_assert(fs_planner_run(q, NULL, NULL, &error));
    ck_assert_uint_eq(fs_planner_n_designs(q), 1);
    const FsPlannerDesign *e = fs_planner_design(q, 0);
    /* Exactly: a memo hit is the time a new measurement gives. */
    ck_assert(e->step_s == d->step_s);
    ck_assert(e->dp_s == d->dp_s && e->tp_s == d->tp_s && e->pp_s == d->pp_s);
    ck_assert(e->bubble_s == d->bubble_s);
    small_free(&one);
  }
  small_free(&s);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("plan");
  FS_ADD_TEST(s, test_plan_divisors);
  FS_ADD_TEST(s, test_plan_cost_arithmetic);
  FS_ADD_TEST(s, test_plan_cost_amortized);
  FS_ADD_TEST(s, test_plan_cost_from_catalog);
  FS_ADD_TEST(s, test_plan_rank_order);
  TCase *tc = tcase_create("catalog");
  tcase_add_checked_fixture(tc, fs_test_models_setup, fs_test_models_teardown);
  tcase_add_test(tc, test_plan_system_costs);
  tcase_add_test(tc, test_plan_switch_share);
  tcase_add_test(tc, test_plan_prune_structure_and_memory);
  tcase_add_test(tc, test_plan_prune_bound);
  tcase_add_test(tc, test_plan_prune_memory);
  tcase_add_test(tc, test_plan_schedules);
  tcase_add_test(tc, test_plan_limit_and_errors);
  tcase_add_test(tc, test_plan_run_threads_do_not_change_ranking);
  tcase_add_test(tc, test_plan_shared_memo_equals_fresh);
  tcase_set_timeout(tc, 300);
  suite_add_tcase(s, tc);
  return fs_test_run_suite(s);
}
