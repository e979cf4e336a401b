/* plan-private.h — the planner's object, shared by space.c (systems,
 * enumeration, pruning) and plan.c (simulation, pricing, ranking). */
#pragma once

#include "plan/plan.h"
#include "topo/topo.h"
#include "workload/collmemo.h"
#include "workload/spec.h"

struct FsPlanner {
  FsPlannerSpec spec;          /* string pointers below replace the caller's */
  char *workload;
  GStrv overrides, fabrics, defines;
  const FsCatalog *cat;
  const FsEfficiency *eff;
  const FsNcclParams *nccl;
  const FsCollPrefs *prefs;  /* the scenario's tuner inputs, or NULL (NCCL's defaults) */
  const FsScenario *sc;      /* fs_planner_new_in's scenario, or NULL */
  GPtrArray *sys_nccl;       /* per system: NCCL constants calibrated for it, or NULL (run) */
  GPtrArray *topos;         /* FsTopo *, one per system */
  GArray *systems;          /* FsPlannerSystem */
  GArray *designs;          /* FsPlannerDesign */
  FsCollMemo *memo;         /* collective times measured alone, shared by every design (run) */
  FsPlannerStats stats;
  gboolean prepared, ran;
};

/* Sets a design's layout on w (gpus, tp, pp, dp, cp, ep, sequence
 * parallelism, 1F1B, micro-batch, recompute, ZeRO) and resolves it for
 * d->gpus.  Errors: the workload's (FS_WORKLOAD_ERROR). */
gboolean fs_planner_apply_layout(FsWorkload *w, const FsPlannerDesign *d, GError **error);

/* The GPU's peak FLOP/s for w's training dtype (the kernel model's choice). */
double fs_planner_peak_flops(const FsWorkload *w, const FsGpuModel *gpu);

/* Tokens per step (sequences × sequence length; samples for a layer list). */
double fs_planner_tokens_per_step(const FsWorkload *w);
