/* nccl-fit.h — fitting a topology's link figures to nccl-tests logs: the
 * library behind `fabricsim calibrate nccl-tests`.
 *
 * For each test of a log (one collective over one sweep of sizes):
 *   1. the measured time per size (out-of-place by default; sizes seen in
 *      several logs of the same collective and rank count take the
 *      median), fitted by robust α-β lines per protocol regime
 *      (fit.h: fs_fit_regimes);
 *   2. the link family the collective's bandwidth goes through on the
 *      topology: the network (InfiniBand/Ethernet) when the ranks span
 *      several hosts, else NVLink when the GPUs have NVLinks, else PCIe;
 *      and the raw bandwidth per GPU of that family (NVLinks × raw per
 *      link; a host's network links ÷ its GPUs in the communicator; the
 *      GPU's PCIe link);
 *   3. validation/README.md's rules for multi-rank NCCL records:
 *      link efficiency = peak busbw / raw per GPU, where peak busbw is the
 *      largest measured busbw (nccl-tests' factor applied to the fitted
 *      regimes' best β agrees with it within the fit error), and latency
 *      per step = (α of the smallest-size regime − base) / nsteps, with
 *      NCCL's base latency given by the caller (0 when unknown).
 *   4. per regime, its β as a fraction of the largest sizes' regime: the
 *      protocol's bandwidth efficiency relative to Simple when the regimes
 *      are NCCL's protocols (LL, LL128, Simple).
 * The results form the `fitted` section of a calibration file, which
 * fs_calibration_apply lays over the catalog (the links' efficiency).
 *
 * The topology's ranks are its GPUs in fs_topo_gpus order (rank r on GPU
 * r), as nccl-tests places them with one GPU per rank host by host.
 *
 * Ownership: FsNcclFit owns its arrays and strings.  Errors: FS_FIT_ERROR
 * (too few sizes), FS_NCCL_LOG_ERROR (a test without a collective name
 * and none given), FS_TOPO_ERROR-free: a topology with fewer GPUs than the
 * log's ranks is FS_FIT_ERROR_DATA.
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdint.h>

#include "calib/calibration.h"
#include "calib/fit.h"
#include "calib/nccl-log.h"
#include "catalog/catalog.h"
#include "topo/topo.h"

G_BEGIN_DECLS

typedef struct {
  char *log;            /* the log file (first one, when merged) */
  char *collective;
  guint nranks, nhosts;
  gboolean in_place;
  guint n;              /* sizes */
  uint64_t *sizes;
  double *measured_us;
  double *measured_busbw; /* GB/s, as the log printed it */
  double *fitted_us;
  FsAlphaBeta regimes[FS_FIT_MAX_REGIMES];
  guint n_regimes;
  double busbw_factor;  /* nccl-tests' busbw / algbw */
  guint nsteps;         /* NCCL's steps of the collective on nranks */
  /* The link family and its figures. */
  FsLinkFamily family;
  char **models;        /* link model names of that family on the path, NULL-terminated */
  guint links_per_gpu;
  double raw_per_gpu;   /* bytes/s */
  double peak_busbw;    /* bytes/s */
  double efficiency;    /* peak_busbw / raw_per_gpu */
  double base_us;
  double step_latency_us;
  /* Through the simulator (nccl-simfit.h), when has_sim. */
  gboolean has_sim;
  double sim_efficiency;      /* the family's link efficiency */
  double sim_latency_scale;   /* factor on NCCL's hardware latencies */
  double sim_rms_rel;
  guint sim_evaluations;
  gboolean sim_converged;
  double *sim_us;             /* the simulator's time per size at the fit */
  /* Rows left out of the fit (no figure in the fitted column, or a time
   * of 0), in file order; the file names are borrowed from the caller's
   * files (valid while the logs are). */
  GArray *dropped;            /* FsNcclLogDrop */
} FsNcclFit;

void fs_nccl_fit_free(FsNcclFit *fit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsNcclFit, fs_nccl_fit_free)

/* Fits one test of a log on topo.  collective overrides the log's name
 * (NULL: the log's; an error when neither says).  base_us: NCCL's base
 * latency for the collective (0 when unknown). */
FsNcclFit *fs_nccl_fit_test(const FsNcclLogTest *test, const char *log_file, const FsTopo *topo,
                            const char *collective, gboolean in_place, double base_us,
                            GError **error);

/* Merges the rows of several tests of one collective and rank count
 * (sizes sorted; a size present in several takes the median time) and
 * fits them.  tests and files have n entries. */
FsNcclFit *fs_nccl_fit_tests(const FsNcclLogTest *const *tests, const char *const *files, guint n,
                             const FsTopo *topo, const char *collective, gboolean in_place,
                             double base_us, GError **error);

/* Groups the tests of every log by (collective, rank count), in the order
 * first met, and fits each group (fs_nccl_fit_tests) on topo.
 * collective: as fs_nccl_fit_test.  The base latency of a group:
 * base_override when >= 0, else the one-rank NCCL floor of cal for that
 * collective (cal may be NULL), else 0.  Returns the fits (FsNcclFit,
 * owned), or NULL with the first fit's error. */
GPtrArray *fs_nccl_fit_logs(GPtrArray *logs, const FsTopo *topo, const char *collective,
                            gboolean in_place, double base_override,
                            const FsCalibration *cal, GError **error);

/* The `fitted` section of a calibration file for fits (n of them):
 * {"method": "nccl-tests", "topology": NAME, "tests": [...], "links":
 * {FAMILY: {"efficiency", "step_latency_us", "hw_latency_scale" (median of the
 * simulator fits, only when some test has one), "models": [...], "tests"}}},
 * where a family's figures are the medians over its tests.  New reference. */
json_t *fs_nccl_fit_section(FsNcclFit *const *fits, guint n, const char *topology);

G_END_DECLS
