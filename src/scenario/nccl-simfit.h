/* nccl-simfit.h — fitting through the simulator: the link family's
 * efficiency and a scale on NCCL's per-step hardware latency, chosen so
 * that the collective layer's predictions (fabricsim coll on the
 * topology) match a log's times size by size, on the scenario's worlds:
 * its NCCL constants (calibrated by --calibration) and tuner inputs
 * (NCCL_ALGO, NCCL_PROTO, CollNet) are those of `fabricsim coll`.
 *
 * Parameters: p0 = efficiency of every catalog link model of fit->family
 * on the path (fit->models), in [0.05, 1]; p1 = the factor on NCCL's
 * hardware latencies of that class (hw_lat[NVLINK|PCI|NET][*][*] of
 * models/nccl), in [0.05, 20].  Each evaluation sets the efficiency
 * (fs_catalog_set_link_efficiency, no provenance), reloads the topology
 * (its links cache their bandwidth), and runs every size of the sweep
 * alone, as fabricsim coll does; fs_fit_params (Levenberg–Marquardt on
 * robust relative errors) drives it.  Cost: about 4 × (sizes) simulated
 * collectives per iteration.
 */
#pragma once

#include "calib/nccl-fit.h"
#include "scenario/scenario.h"

G_BEGIN_DECLS

/* Fits fit (from fs_nccl_fit_tests) on the topology file topo_path loaded
 * over the scenario's catalog (whose link models are changed: the fitted
 * efficiency is left in place; the scenario's own topology, if any, keeps
 * its links).  The scenario must have loaded NCCL's constants.  Fills
 * fit->sim_*. */
gboolean fs_nccl_fit_simulate(FsNcclFit *fit, const FsScenario *sc, const char *topo_path,
                              int max_iter, GError **error);

G_END_DECLS
