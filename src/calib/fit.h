/* fit.h — the fitting math of `fabricsim calibrate nccl-tests`: robust
 * α-β lines per protocol regime, and a bounded least-squares fit of model
 * parameters through a prediction callback (the simulator).
 *
 * Errors are relative: a point's residual is (predicted − measured) /
 * measured, because nccl-tests sweeps sizes over nine decades and a 2 µs
 * miss at 8 B matters as much as a 2 ms miss at 8 GiB.  Robustness is
 * Huber's: iteratively reweighted least squares with weight 1 inside
 * k = 1.345 × the residuals' scale (1.4826 × their median absolute
 * value) and k/|r| outside, so that one disturbed size (a host hiccup,
 * the 32 B outlier of the DGX H100 sample) does not tilt the fit.
 *
 * Pure functions of their inputs; no allocation survives a call except
 * the caller's out records.  Errors (FS_FIT_ERROR): too few points, sizes
 * not increasing, a prediction callback's own error.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define FS_FIT_ERROR (fs_fit_error_quark())
GQuark fs_fit_error_quark(void);

typedef enum {
  FS_FIT_ERROR_DATA,    /* too few or unusable points */
  FS_FIT_ERROR_MODEL,   /* the prediction callback failed or returned nonsense */
} FsFitError;

/* t(s) = alpha + s / beta over sizes [first, last] (indices into the
 * caller's arrays).  beta = INFINITY when the regime is latency-bound (the
 * fitted slope was not positive). */
typedef struct {
  guint first, last;
  double alpha_us;
  double beta;          /* bytes/s */
  double rms_rel;       /* robust-weighted RMS of the relative residuals */
  double max_rel;       /* largest |relative residual| */
} FsAlphaBeta;

/* Robust fit of one α-β line to n points (sizes in bytes, times in µs,
 * n >= 2; sizes need not be sorted).  α is kept >= 0 and the slope >= 0
 * (refitting with the bound active when the free fit breaks it). */
gboolean fs_fit_alpha_beta(const uint64_t *sizes, const double *times_us, guint n,
                           FsAlphaBeta *out, GError **error);

/* The most regimes fs_fit_regimes considers (NCCL has three protocols). */
#define FS_FIT_MAX_REGIMES 3

/* Splits a sweep (sizes strictly increasing) into 1..max_regimes
 * contiguous regimes of at least 3 points each, one α-β line per regime,
 * choosing the split that minimises the robust cost and the number of
 * regimes by the Bayesian information criterion (a regime costs three
 * parameters: α, β and its boundary).  Returns the number of regimes in
 * *n_out; out has room for FS_FIT_MAX_REGIMES.  Cost: O(max_regimes × n²)
 * line fits. */
gboolean fs_fit_regimes(const uint64_t *sizes, const double *times_us, guint n,
                        guint max_regimes, FsAlphaBeta *out, guint *n_out, GError **error);

/* The time a set of regimes predicts for size (the regime whose range
 * contains it, else the nearest). */
double fs_fit_regimes_eval(const FsAlphaBeta *r, guint nr, const uint64_t *sizes, uint64_t size);

/* ---- fitting model parameters through a predictor ---------------------- */

/* Predicts times (µs) for n sizes with parameters p (np values). */
typedef gboolean (*FsFitPredictFn)(void *ctx, const double *p, const uint64_t *sizes, guint n,
                                   double *times_us, GError **error);

typedef struct {
  const char *name;     /* for reports, "nvlink.latency_us" */
  double value;         /* start value in, fitted value out */
  double lo, hi;        /* bounds, lo < hi */
} FsFitParam;

typedef struct {
  guint iterations;
  guint evaluations;    /* predictor calls */
  double rms_rel;       /* final robust RMS of relative residuals */
  gboolean converged;   /* the step became negligible before the iteration limit */
} FsFitResult;

/* Levenberg–Marquardt on the robustly weighted relative residuals, with
 * forward-difference Jacobians (one predictor call per parameter per
 * iteration) and parameters clamped to their bounds.  params[i].value is
 * updated in place.  At most max_iter iterations (<= 0: 50). */
gboolean fs_fit_params(FsFitPredictFn predict, void *ctx, FsFitParam *params, guint np,
                       const uint64_t *sizes, const double *times_us, guint n, int max_iter,
                       FsFitResult *out, GError **error);

G_END_DECLS
