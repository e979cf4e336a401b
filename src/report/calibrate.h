/* calibrate.h — the outputs of `fabricsim calibrate nccl-tests`: one
 * fit's table (regimes, error per size, the simulator's fit, the link
 * figures) and the calibration file with its `fitted` section
 * (validation/README.md).  Deterministic.
 */
#pragma once

#include <glib.h>

#include "calib/calibration.h"
#include "calib/nccl-fit.h"

G_BEGIN_DECLS

/* Appends the fit's table. */
void fs_report_calibrate_fit(GString *out, const FsNcclFit *f);

/* The calibration file (JSON text ending in a newline; caller frees) of n
 * fits made on the topology named topology. */
char *fs_report_calibration_file(FsNcclFit *const *fits, guint n, const char *topology);

G_END_DECLS
