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
 * Both are figures of one machine: given the GPU model of the system being
 * simulated (gpu, non-NULL), the base latency applies only when it is the
 * GPU the probe file was matched to, and an NVLink (PCIe) fit only when the
 * GPU's NVLink (host PCIe) model is among the fit's models; network fits
 * apply to any GPU.  Skipped rules are listed in notes with the reason.
 *
 * Ownership: p is changed in place; cal is read only.  Each change is
 * appended to notes (char *, one line each, caller owns) when notes is
 * non-NULL.  Cost: constant.
 */
#pragma once

#include <glib.h>

#include "calib/calibration.h"
#include "coll/nccl-params.h"
#include "topo/topo.h"

G_BEGIN_DECLS

/* Applies cal's NCCL figures to p (see above) for a system of gpu (NULL:
 * no check).  A NULL cal changes nothing.  Returns the number of rules
 * applied (the base latency, one per latency class). */
guint fs_calibration_apply_nccl(const FsCalibration *cal, const FsModel *gpu, FsNcclParams *p,
                                GPtrArray *notes);

/* The GPU model of topo's first GPU (what fs_calibration_apply_nccl checks
 * against), or NULL when it has none. */
const FsModel *fs_calibration_topo_gpu(const FsTopo *topo);

G_END_DECLS
