/* nccl-apply.h — laying a calibration's NCCL figures over NCCL's tuning
 * constants (FsNcclParams, loaded from models/nccl), which the catalog does
 * not hold: the collective layer's tuner and executor then use them.
 *
 * Two rules (validation/README.md, "How a calibration file overrides the
 * catalog"):
 *
 * - Base latency.  With one rank NCCL runs no step, so its model's time is
 *   the base latency alone: the nccl probe's one-rank all_reduce floor
 *   (summary.nccl_all_reduce.latency_floor_us with ranks = 1) replaces
 *   baseLatencies[Ring][LL], and every other non-zero base latency moves by
 *   the same amount (clamped at 0), so NCCL's differences between
 *   algorithms and protocols stay.
 * - Per-step latency.  For each family of the file's `fitted.links`, NCCL's
 *   hardware latencies of that class (hwLatencies[NVLINK | PCI | NET],
 *   every algorithm and protocol) are multiplied by one factor: the
 *   simulator-fitted `hw_latency_scale` when the fit went through the
 *   simulator (`fabricsim calibrate nccl-tests --simulate`: the factor that
 *   made fabricsim's times match the log), else `step_latency_us` /
 *   hwLatencies[class][Ring][LL] (the α-β fit's latency per step of the
 *   smallest sizes, which NCCL runs with LL).  A factor of 0 (no latency
 *   fitted) changes nothing.
 *
 * Ownership: p is changed in place; cal is read only.  Each change is
 * appended to notes (char *, one line each, caller owns) when notes is
 * non-NULL.  Cost: constant.
 */
#pragma once

#include <glib.h>

#include "calib/calibration.h"
#include "coll/nccl-params.h"

G_BEGIN_DECLS

/* Applies cal's NCCL figures to p (see above).  A NULL cal changes
 * nothing.  Returns the number of tables changed (0, 1 or 2). */
guint fs_calibration_apply_nccl(const FsCalibration *cal, FsNcclParams *p, GPtrArray *notes);

G_END_DECLS
