/* plan.h — capacity planning: which fabric, how many GPUs and which
 * parallel layout meet a throughput target, at what cost and energy.
 *
 * Contract.  Given a workload file, one or more topology files (scaled to
 * a GPU count through their `nodes` parameter) and a target (tokens/s or
 * step time), fs_planner_run enumerates designs — GPU count × TP × CP × PP ×
 * EP × micro-batch × pipeline schedule (1F1B by default; with pp = 1 the
 * schedule does not matter and only 1F1B is tried), with sequence
 * parallelism on whenever tp > 1 — prunes them, simulates the survivors with the training
 * executor in its fast mode (analytic flows, data-parallel collectives
 * timed alone) on the sweep module's thread pool, prices them and ranks
 * them.  Pruning, in order (each step counted in FsPlannerStats):
 *   1. structure: tp ≤ GPUs per node and dividing it (TP stays inside one
 *      NVLink/PCIe domain), heads/KV heads/FFN divisible by tp, layers by
 *      pp, the batch by micro-batch × dp, experts by ep … (the workload's
 *      own checks, fs_workload_resolve);
 *   2. memory: the memory settings (recompute policy × ZeRO stage) are
 *      tried cheapest first — ZeRO stages in the listed order inside each
 *      recompute policy in the listed order — and the first that fits the
 *      GPU (src/compute/memory.h) is kept; the later, slower ones are
 *      dominated and not simulated; a layout with none that fits is pruned;
 *   3. compute bound: a design whose step cannot meet the target even at
 *      the GPU's peak FLOP/s (model FLOPs / (GPUs × peak)) is pruned;
 *   4. size: more than max_systems fabric × GPU-count systems (checked
 *      before any is loaded) or more than max_candidates simulations left
 *      is an error (FS_RUNTIME_ERROR_LIMIT) naming the count and the
 *      option that raises the limit.
 * Ranking: designs that meet the target (and the budget) first, then by
 * the chosen metric, then by a stable key (fabric order, GPUs, tp, cp, pp,
 * ep, micro-batch, schedule, recompute, ZeRO: the enumeration order) — so the same
 * inputs give the same order on any thread count.
 *
 * Cost and energy (fs_planner_cost_compute, pure arithmetic): a system's IT
 * power is the sum of the catalog's TDP / power of every part of the
 * topology that has one (GPUs, CPUs, NICs, NVSwitch and PCIe switches,
 * fabric switches); energy per step = IT power × PUE × step time.
 * $/GPU-hour is the user's figure (taken as all-in: network included), or
 * else the capex (catalog prices of every priced part) spread over the
 * GPUs and amortize_years × 8760 h — only when the GPU model has a price;
 * otherwise cost is unknown (NaN) and ranking by cost needs the user's rate.
 * $ per step = GPUs × $/GPU-hour × step / 3600 + kWh per step × $/kWh.
 * Fabric switches (those outside every host: leaves, spines, NVLink Switch
 * systems) count whole, as many as the topology builds, or with
 * switch_share = ports as the fraction of their port bandwidth the
 * topology uses (a share of a larger fabric); switches inside a host
 * (NVSwitch chips, PCIe switches) always count whole.  Parts without a
 * price or power figure are listed (FsPlannerSystem), never guessed.
 *
 * Ownership: FsPlanner copies the spec's strings and lists; it borrows the
 * catalog, efficiency curves and NCCL parameters (they must outlive it).
 * Designs and systems are owned by the plan and read by index.
 * Errors: FS_PLANNER_ERROR (options that contradict each other, a GPU count
 * no fabric can reach), FS_TOPO_/FS_WORKLOAD_ERROR with file:line:col (bad
 * files), FS_RUNTIME_ERROR_LIMIT (the search is too large).  A design whose
 * simulation fails is kept with its error and ranked last.
 * Cost: one workload resolve and memory estimate per enumerated layout and
 * memory setting; one topology load per fabric and GPU count; one training
 * step simulation (analytic) per surviving design, its collectives timed
 * alone through one memo shared by every design and thread (collmemo.h:
 * a group's class and each collective measured once per search, exactly
 * what a fresh measurement gives).
 */
#pragma once

#include <glib.h>

#include "catalog/catalog.h"
#include "coll/nccl-params.h"
#include "compute/efficiency.h"
#include "scenario/scenario.h"
#include "compute/memory.h"
#include "compute/transformer.h"
#include "topo/topo.h"

G_BEGIN_DECLS

#define FS_PLANNER_ERROR (fs_planner_error_quark())
GQuark fs_planner_error_quark(void);

typedef enum {
  FS_PLANNER_ERROR_INPUT,     /* options that cannot work (no target, a bad list) */
  FS_PLANNER_ERROR_NO_SYSTEM, /* no fabric can be built with the GPU counts asked for */
} FsPlannerError;

/* Ranking metrics (`--rank-by`). */
#define FS_PLANNER_RANKS(X)  \
  X(COST, "cost")         \
  X(GPUS, "gpus")         \
  X(ENERGY, "energy")     \
  X(TIME, "time")

typedef enum {
#define X(id, str) FS_PLANNER_RANK_##id,
  FS_PLANNER_RANKS(X)
#undef X
  FS_PLANNER_RANK_N
} FsPlannerRank;

const char *fs_planner_rank_name(FsPlannerRank r);
gboolean fs_planner_rank_from_name(const char *s, FsPlannerRank *out);

/* The default bound on simulations (`--max-candidates`). */
#define FS_PLANNER_MAX_CANDIDATES 2000u
/* The bound that applies when the spec gives none: FABRICSIM_MAX_CANDIDATES
 * from the environment when it is a positive number (read once; any other
 * value is ignored with a warning on stderr), else FS_PLANNER_MAX_CANDIDATES. */
guint fs_planner_default_max_candidates(void);
/* The default bound on fabric × GPU-count systems, each one topology
 * loaded and kept (`--max-systems`, or $FABRICSIM_MAX_SYSTEMS). */
#define FS_PLANNER_MAX_SYSTEMS 64u
/* The most values one search list may hold. */
#define FS_PLANNER_MAX_CHOICES 64u

/* How fabric switches are counted (`--switch-share`). */
#define FS_PLANNER_SHARES(X) \
  X(WHOLE, "whole")       \
  X(PORTS, "ports")

typedef enum {
#define X(id, str) FS_PLANNER_SHARE_##id,
  FS_PLANNER_SHARES(X)
#undef X
  FS_PLANNER_SHARE_N
} FsPlannerShare;

const char *fs_planner_share_name(FsPlannerShare s);
gboolean fs_planner_share_from_name(const char *s, FsPlannerShare *out);

/* Money and energy inputs.  Negative gpu_hour_price: not given. */
typedef struct {
  double gpu_hour_price;   /* $ per GPU-hour (rental, or all-in internal rate) */
  double kwh_price;        /* $ per kWh added to the hourly rate; 0: none */
  double pue;              /* power usage effectiveness, >= 1 */
  double amortize_years;   /* capex write-off when no gpu_hour_price */
  double tokens;           /* tokens to train, for time-to-train; 0: none */
  double budget;           /* $: cost of training `tokens` when given, else capex; 0: none */
  FsPlannerShare switch_share;/* fabric switches whole (default) or by ports in use */
} FsPlannerCostInputs;

void fs_planner_cost_inputs_init(FsPlannerCostInputs *in);

/* One design's money and energy (NaN where unknown: no hourly rate). */
typedef struct {
  double gpu_hour_price;   /* the rate used ($/GPU-hour) */
  gboolean rate_from_capex;/* the rate is amortized capex (+ energy) */
  double energy_j_per_step;
  double kwh_per_mtok;
  double usd_per_step;
  double usd_per_mtok;
  double train_s;          /* time to train `tokens` (0 when none) */
  double train_usd;
  double train_kwh;
  double capex_usd;        /* priced parts only */
} FsPlannerCost;

/* Pure arithmetic of the header comment.  tokens_per_step > 0, step_s > 0.
 * capex_usd 0: unknown. */
void fs_planner_cost_compute(const FsPlannerCostInputs *in, guint gpus, double it_power_w,
                             double capex_usd, double step_s, double tokens_per_step,
                             FsPlannerCost *out);

/* The search. */
typedef struct {
  const char *workload;            /* workload file */
  const char *const *overrides;    /* applied to it first (NULL-terminated; may be NULL) */
  const char *const *fabrics;      /* topology files, NULL-terminated, at least one */
  const char *const *defines;      /* "-D name=value" for every fabric (not `nodes`); may be NULL */
  /* GPU counts: an explicit list, or (n_gpus == 0) the range
   * gpus_min..gpus_max (every count a fabric reaches in it); both empty:
   * one node up to each fabric's default size. */
  guint gpus[FS_PLANNER_MAX_CHOICES];
  guint n_gpus;
  guint gpus_min, gpus_max;
  /* Target: exactly one > 0. */
  double target_tokens_per_s;
  double target_step_s;
  /* Search lists (n = 0: the default in brackets).  tp and pp [every
   * divisor that passes the rules], cp [1], ep [1; every divisor of the
   * experts for an MoE], micro_batch [1, 2, 4], zero [1, 2, 3], recompute
   * [none, selective, full]. */
  guint tp[FS_PLANNER_MAX_CHOICES], n_tp;
  guint pp[FS_PLANNER_MAX_CHOICES], n_pp;
  guint cp[FS_PLANNER_MAX_CHOICES], n_cp;
  guint ep[FS_PLANNER_MAX_CHOICES], n_ep;
  guint micro_batch[FS_PLANNER_MAX_CHOICES], n_micro_batch;
  guint zero[FS_PLANNER_MAX_CHOICES], n_zero;
  FsRecompute recompute[FS_PLANNER_MAX_CHOICES];
  guint n_recompute;
  FsPpSchedule schedule[FS_PLANNER_MAX_CHOICES]; /* [1f1b]; used when pp > 1 */
  guint n_schedule;
  guint vp;                        /* virtual stages of `interleaved` (0: 2) */
  FsPlannerCostInputs cost;
  FsPlannerRank rank_by;
  guint max_candidates;            /* 0: fs_planner_default_max_candidates() */
  guint max_systems;               /* 0: $FABRICSIM_MAX_SYSTEMS or FS_PLANNER_MAX_SYSTEMS */
  guint threads;                   /* 0: all cores */
} FsPlannerSpec;

void fs_planner_spec_init(FsPlannerSpec *spec);

/* One model's parts in a system, with what the catalog knows of them. */
typedef struct {
  const FsModel *model;
  guint count;             /* parts of this model in the topology */
  double units;            /* what is paid for and powered: count, or the summed
                            * port shares of fabric switches (switch_share = ports) */
  gboolean fabric;         /* switches outside every host */
  double unit_price;       /* US dollars, 0: no price in the catalog */
  double unit_power_w;     /* watts, 0: no power figure */
  double price_usd;        /* units × unit_price */
  double power_w;          /* units × unit_power_w */
} FsPlannerPart;

/* One fabric at one GPU count. */
typedef struct {
  char *fabric;            /* the topology's name */
  char *path;              /* its file */
  guint fabric_index;      /* position in spec.fabrics */
  guint gpus;
  guint nodes;             /* the `nodes` parameter (0: the fabric has none) */
  guint gpus_per_node;
  const FsGpuModel *gpu;
  char *gpu_name;
  char *intra_path;        /* GPU 0 ↔ GPU 1 of one node: "NVSwitch (NV18)", "a PCIe switch (PIX)", … */
  double it_power_w;       /* parts with a power figure */
  double capex_usd;        /* parts with a price */
  guint n_parts;           /* GPUs, CPUs, NICs and switches */
  FsPlannerPart *parts;       /* one per model, sorted by name */
  guint n_models;
  char *unpriced;          /* "connectx-7 ×32, quantum-2-ndr ×4" or NULL */
  char *unpowered;         /* the same for parts without a power figure */
} FsPlannerSystem;

typedef struct {
  guint key;               /* enumeration order: the stable tie-break */
  guint system;            /* index of its FsPlannerSystem */
  guint gpus, tp, pp, dp, cp, ep, micro_batch, zero_stage;
  gboolean sequence_parallel;
  FsPpSchedule schedule;
  guint vp;                /* virtual stages (1 unless interleaved) */
  FsRecompute recompute;
  guint microbatches;      /* per replica per step */
  uint64_t mem_total, mem_capacity;
  double bound_step_s;     /* model FLOPs / (GPUs × peak) */
  /* Simulated. */
  gboolean ok;
  char *error;             /* when the simulation failed */
  double step_s, tokens_per_step, tokens_per_s, mfu, tflops_per_gpu;
  double tp_s, cp_s, ep_s, pp_s, dp_s, bubble_s; /* exposed, worst stage */
  FsPlannerCost cost;
  gboolean meets;          /* meets the target */
  gboolean in_budget;
  double metric;           /* the ranking value (smaller is better) */
  char *why;               /* one line: what makes it win */
} FsPlannerDesign;

typedef struct {
  guint systems;           /* fabric × GPU count instances */
  guint layouts;           /* layouts enumerated (before memory settings) */
  guint structure;         /* pruned: the rules of step 1 (first message kept) */
  guint memory;            /* pruned: no memory setting fits */
  guint dominated;         /* memory settings not simulated (a cheaper one fits) */
  guint bound;             /* pruned: cannot meet the target at peak FLOP/s */
  guint simulated;
  guint failed;            /* simulations that failed */
  guint meets;             /* designs meeting the target (and budget) */
  double best_bound_s;     /* smallest peak-FLOP/s step time of any layout that fits */
  guint best_bound_gpus;   /* … and its GPU count */
  char *structure_example; /* the first structural rejection's message */
  char *memory_example;    /* the smallest-footprint layout that did not fit */
  double wall_s;           /* time of the simulations */
} FsPlannerStats;

typedef struct FsPlanner FsPlanner;

/* Called from the calling thread after each simulation: done of total. */
typedef void (*FsPlannerProgressFn)(guint done, guint total, void *ud);

/* Validates the spec and copies it.  NULL and FS_PLANNER_ERROR on a spec
 * that cannot work. */
FsPlanner *fs_planner_new(const FsPlannerSpec *spec, const FsCatalog *cat, const FsEfficiency *eff,
                          const FsNcclParams *nccl, GError **error);
/* Option values (`fabricsim plan`), each FALSE with an FS_USAGE_ERROR
 * naming the option (opt) and the text: a count with an optional decimal
 * suffix K, M, G (or B), T and an optional leading '$' (>= 0, at most
 * 10^15: "1000 T", a limit the error names); a
 * comma-separated list of at most FS_PLANNER_MAX_CHOICES integers (*n set);
 * GPU counts as such a list or a range LO-HI (1 <= LO <= HI <= 2^24);
 * recompute modes and pipeline schedules, comma-separated (appended to
 * s); a target step time, seconds or a time with its unit, > 0. */
gboolean fs_planner_parse_amount(const char *opt, const char *text, double *out, GError **error);
gboolean fs_planner_parse_list(const char *opt, const char *text, guint *out, guint *n, GError **error);
gboolean fs_planner_parse_gpus(const char *text, FsPlannerSpec *s, GError **error);
gboolean fs_planner_parse_recompute(const char *text, FsPlannerSpec *s, GError **error);
gboolean fs_planner_parse_schedules(const char *text, FsPlannerSpec *s, GError **error);
gboolean fs_planner_parse_step(const char *text, double *out, GError **error);

/* As fs_planner_new with the scenario's catalog, curves, NCCL constants and
 * tuner inputs (NCCL_ALGO, NCCL_PROTO, CollNet): what `fabricsim plan`
 * calls.  The scenario must outlive the plan and have loaded the curves
 * and NCCL constants. */
FsPlanner *fs_planner_new_in(const FsPlannerSpec *spec, const FsScenario *sc, GError **error);
void fs_planner_free(FsPlanner *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsPlanner, fs_planner_free)

/* Loads the fabrics, enumerates and prunes (fills the stats and the
 * candidate list).  Errors: see the header comment. */
gboolean fs_planner_prepare(FsPlanner *p, GError **error);

/* Simulates the candidates, prices and ranks them.  progress may be NULL.
 * A stop request (SIGINT, SIGTERM) before the ranking is done fails with
 * FS_RUNTIME_ERROR_INTERRUPTED. */
gboolean fs_planner_run(FsPlanner *p, FsPlannerProgressFn progress, void *ud, GError **error);

const FsPlannerStats *fs_planner_stats(const FsPlanner *p);
guint fs_planner_n_systems(const FsPlanner *p);
const FsPlannerSystem *fs_planner_system(const FsPlanner *p, guint i);
/* Candidates: after fs_planner_prepare in enumeration order, after
 * fs_planner_run in rank order (best first). */
guint fs_planner_n_designs(const FsPlanner *p);
const FsPlannerDesign *fs_planner_design(const FsPlanner *p, guint i);
const FsPlannerSpec *fs_planner_spec(const FsPlanner *p);

/* The target as a step time for a design's tokens per step. */
double fs_planner_target_step_s(const FsPlannerSpec *spec, double tokens_per_step);

/* Internal steps, exposed for the tests (space.c, cost.c). */

/* The divisors of n in increasing order that are <= max (at most
 * FS_PLANNER_MAX_CHOICES); returns their count. */
guint fs_planner_divisors(guint n, guint max, guint *out);

/* Power, price and part lists of a loaded topology into sys (fills
 * it_power_w, capex_usd, n_parts, parts, n_models, unpriced, unpowered;
 * replaces what they held).  share: how fabric switches count. */
void fs_planner_system_costs(const FsTopo *topo, FsPlannerShare share, FsPlannerSystem *sys);

/* The fraction of switch node's port bandwidth that its links use, in
 * (0, 1]: Σ link bandwidth ÷ (ports × port link bandwidth); 1 for a node
 * that is not a switch or has no links. */
double fs_planner_port_share(const FsTopo *topo, guint node);

/* Orders designs: meeting (and in budget) first, simulated before failed,
 * then metric, then key.  qsort-compatible on FsPlannerDesign. */
int fs_planner_design_cmp(const void *a, const void *b);

G_END_DECLS
