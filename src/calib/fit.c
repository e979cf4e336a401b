/* fit.c — see fit.h. */
#include "calib/fit.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(fs-fit-error-quark, fs_fit_error)

#define HUBER_K 1.345
#define MAD_SCALE 1.4826
#define IRLS_ITERS 25
/* The relative residual beyond which the regime split's loss grows
 * linearly (Huber's loss with a fixed 5 % knee, so that costs of
 * different splits compare). */
#define SPLIT_KNEE 0.05
/* Above this many points the split considers every k-th boundary only. */
#define SPLIT_MAX_BOUNDARIES 128

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Huber weights for residuals r (n), from their robust scale. */
static void huber_weights(const double *r, guint n, double *w)
{
  double *abs_r = g_new(double, n);
  for (guint i = 0; i < n; i++)
    abs_r[i] = fabs(r[i]);
  qsort(abs_r, n, sizeof *abs_r, cmp_double);
  double med = n % 2 ? abs_r[n / 2] : 0.5 * (abs_r[n / 2 - 1] + abs_r[n / 2]);
  g_free(abs_r);
  /* A floor keeps a perfect fit from giving every point weight k/|r|. */
  double k = HUBER_K * MAX(MAD_SCALE * med, 1e-4);
  for (guint i = 0; i < n; i++)
    w[i] = fabs(r[i]) <= k ? 1.0 : k / fabs(r[i]);
}

/* ---- α-β lines ------------------------------------------------------------ */

/* Weighted LS of a·u + b·x·u ≈ 1 (u = 1/t, x scaled), with a >= 0 and
 * b >= 0 enforced by refitting on the boundary. */
static void solve_line(const double *x, const double *u, const double *w, guint n, double *a,
                       double *b)
{
  double s11 = 0, s12 = 0, s22 = 0, t1 = 0, t2 = 0;
  for (guint i = 0; i < n; i++) {
    double c1 = u[i], c2 = x[i] * u[i];
    s11 += w[i] * c1 * c1;
    s12 += w[i] * c1 * c2;
    s22 += w[i] * c2 * c2;
    t1 += w[i] * c1;
    t2 += w[i] * c2;
  }
  double det = s11 * s22 - s12 * s12;
  if (det > 1e-300 * s11 * s22 && det > 0) {
    *a = (t1 * s22 - t2 * s12) / det;
    *b = (s11 * t2 - s12 * t1) / det;
  } else {
    *a = -1; /* degenerate (one distinct size): fall through to a bound */
    *b = -1;
  }
  if (*b < 0 || !isfinite(*b)) {
    *b = 0;
    *a = s11 > 0 ? t1 / s11 : 0;
  }
  if (*a < 0 || !isfinite(*a)) {
    *a = 0;
    *b = s22 > 0 ? t2 / s22 : 0;
  }
}

/* Fits points [0, n) of x (scaled sizes), t (µs); fills out's figures. */
static void fit_line(const double *x, const double *t, guint n, double xscale, FsAlphaBeta *out)
{
  double *u = g_new(double, n), *w = g_new(double, n), *r = g_new(double, n);
  for (guint i = 0; i < n; i++) {
    u[i] = 1.0 / t[i];
    w[i] = 1.0;
  }
  double a = 0, b = 0;
  for (int it = 0; it < IRLS_ITERS; it++) {
    double pa = a, pb = b;
    solve_line(x, u, w, n, &a, &b);
    for (guint i = 0; i < n; i++)
      r[i] = (a + b * x[i]) * u[i] - 1;
    if (n > 2)
      huber_weights(r, n, w);
    if (it > 0 && fabs(a - pa) <= 1e-12 * (fabs(a) + 1e-30) &&
        fabs(b - pb) <= 1e-12 * (fabs(b) + 1e-30))
      break;
  }
  double sw = 0, swr = 0, mx = 0;
  for (guint i = 0; i < n; i++) {
    sw += w[i];
    swr += w[i] * r[i] * r[i];
    mx = MAX(mx, fabs(r[i]));
  }
  out->alpha_us = a;
  /* t = a + b·(s / xscale) µs  ⇒  β = xscale / b bytes per µs. */
  out->beta = b > 0 ? xscale / b * 1e6 : INFINITY;
  out->rms_rel = sw > 0 ? sqrt(swr / sw) : 0;
  out->max_rel = mx;
  g_free(u);
  g_free(w);
  g_free(r);
}

static gboolean check_points(const uint64_t *sizes, const double *times, guint n, guint min_n,
                             gboolean increasing, GError **error)
{
  if (n < min_n) {
    g_set_error(error, FS_FIT_ERROR, FS_FIT_ERROR_DATA,
                "%u sizes; a fit needs at least %u", n, min_n);
    return FALSE;
  }
  for (guint i = 0; i < n; i++) {
    if (!(times[i] > 0) || !isfinite(times[i])) {
      g_set_error(error, FS_FIT_ERROR, FS_FIT_ERROR_DATA,
                  "size %" G_GUINT64_FORMAT " B has time %g us; expected a positive time",
                  sizes[i], times[i]);
      return FALSE;
    }
    if (increasing && i > 0 && sizes[i] <= sizes[i - 1]) {
      g_set_error(error, FS_FIT_ERROR, FS_FIT_ERROR_DATA,
                  "sizes must increase (%" G_GUINT64_FORMAT " B after %" G_GUINT64_FORMAT " B)",
                  sizes[i], sizes[i - 1]);
      return FALSE;
    }
  }
  return TRUE;
}

static double max_size(const uint64_t *sizes, guint n)
{
  uint64_t m = 1;
  for (guint i = 0; i < n; i++)
    m = MAX(m, sizes[i]);
  return (double)m;
}

gboolean fs_fit_alpha_beta(const uint64_t *sizes, const double *times_us, guint n,
                           FsAlphaBeta *out, GError **error)
{
  g_return_val_if_fail(out != NULL, FALSE);
  if (!check_points(sizes, times_us, n, 2, FALSE, error))
    return FALSE;
  double xscale = max_size(sizes, n);
  double *x = g_new(double, n);
  for (guint i = 0; i < n; i++)
    x[i] = (double)sizes[i] / xscale;
  fit_line(x, times_us, n, xscale, out);
  out->first = 0;
  out->last = n - 1;
  g_free(x);
  return TRUE;
}

/* ---- regimes ---------------------------------------------------------------- */

static double split_loss(const double *x, const double *t, guint first, guint last,
                         double xscale, FsAlphaBeta *line)
{
  fit_line(x + first, t + first, last - first + 1, xscale, line);
  line->first = first;
  line->last = last;
  double loss = 0;
  double b = isfinite(line->beta) ? xscale * 1e6 / line->beta : 0;
  for (guint i = first; i <= last; i++) {
    double r = fabs((line->alpha_us + b * x[i]) / t[i] - 1);
    loss += r <= SPLIT_KNEE ? 0.5 * r * r : SPLIT_KNEE * r - 0.5 * SPLIT_KNEE * SPLIT_KNEE;
  }
  return loss;
}

/* See fit.h.  Also: max_regimes is clamped to 1..FS_FIT_MAX_REGIMES and to n / 3; beyond
 * SPLIT_MAX_BOUNDARIES points the boundaries are tried on a stride, which bounds the cost.
 * Returns FALSE, with the error of check_points set, only for a bad sweep. */
gboolean fs_fit_regimes(const uint64_t *sizes, const double *times_us, guint n,
                        guint max_regimes, FsAlphaBeta *out, guint *n_out, GError **error)
{
  g_return_val_if_fail(out != NULL && n_out != NULL, FALSE);
  if (!check_points(sizes, times_us, n, 2, TRUE, error))
    return FALSE;
  max_regimes = CLAMP(max_regimes, 1, FS_FIT_MAX_REGIMES);
  max_regimes = MIN(max_regimes, MAX(1, n / 3));
  double xscale = max_size(sizes, n);
  double *x = g_new(double, n);
  for (guint i = 0; i < n; i++)
    x[i] = (double)sizes[i] / xscale;
  guint stride = n > SPLIT_MAX_BOUNDARIES ? (n + SPLIT_MAX_BOUNDARIES - 1) / SPLIT_MAX_BOUNDARIES : 1;

  /* Best split into k regimes, k = 1 .. max_regimes, by brute force over
   * boundaries (k <= 3: at most two nested loops). */
  double best_bic = INFINITY;
  FsAlphaBeta cand[FS_FIT_MAX_REGIMES], tmp[FS_FIT_MAX_REGIMES];
  for (guint k = 1; k <= max_regimes; k++) {
    double best_loss = INFINITY;
    if (k == 1) {
      best_loss = split_loss(x, times_us, 0, n - 1, xscale, &cand[0]);
    } else if (k == 2) {
      for (guint b1 = 3; b1 + 3 <= n; b1 += stride) {
        double l = split_loss(x, times_us, 0, b1 - 1, xscale, &tmp[0]) +
                   split_loss(x, times_us, b1, n - 1, xscale, &tmp[1]);
        if (l < best_loss) {
          best_loss = l;
          memcpy(cand, tmp, 2 * sizeof *tmp);
        }
      }
    } else {
      for (guint b1 = 3; b1 + 6 <= n; b1 += stride)
        for (guint b2 = b1 + 3; b2 + 3 <= n; b2 += stride) {
          double l = split_loss(x, times_us, 0, b1 - 1, xscale, &tmp[0]) +
                     split_loss(x, times_us, b1, b2 - 1, xscale, &tmp[1]) +
                     split_loss(x, times_us, b2, n - 1, xscale, &tmp[2]);
          if (l < best_loss) {
            best_loss = l;
            memcpy(cand, tmp, 3 * sizeof *tmp);
          }
        }
    }
    if (!isfinite(best_loss))
      break;
    /* Below a noise floor (0.3 % per point: the 2-3 digits nccl-tests prints)
     * a split only fits rounding, so losses under it compare equal. */
    double floor_loss = 0.5 * 0.003 * 0.003 * n;
    double bic = n * log(MAX(best_loss, floor_loss) / n) + (3.0 * k - 1) * log((double)n);
    if (bic < best_bic) {
      best_bic = bic;
      memcpy(out, cand, k * sizeof *cand);
      *n_out = k;
    }
  }
  g_free(x);
  return TRUE;
}

double fs_fit_regimes_eval(const FsAlphaBeta *r, guint nr, const uint64_t *sizes, uint64_t size)
{
  g_return_val_if_fail(r != NULL && nr > 0, 0);
  guint i = 0;
  while (i + 1 < nr && size > sizes[r[i].last])
    i++;
  return r[i].alpha_us + (isfinite(r[i].beta) ? (double)size / r[i].beta * 1e6 : 0);
}

/* ---- parameters through a predictor ------------------------------------------ */

/* Solves the np × np system A·x = b in place (partial pivoting); FALSE
 * when singular. */
static gboolean solve(double *A, double *b, guint np)
{
  for (guint c = 0; c < np; c++) {
    guint piv = c;
    for (guint r = c + 1; r < np; r++)
      if (fabs(A[r * np + c]) > fabs(A[piv * np + c]))
        piv = r;
    if (fabs(A[piv * np + c]) < 1e-300)
      return FALSE;
    if (piv != c) {
      for (guint k = 0; k < np; k++) {
        double t = A[c * np + k];
        A[c * np + k] = A[piv * np + k];
        A[piv * np + k] = t;
      }
      double t = b[c];
      b[c] = b[piv];
      b[piv] = t;
    }
    for (guint r = c + 1; r < np; r++) {
      double f = A[r * np + c] / A[c * np + c];
      for (guint k = c; k < np; k++)
        A[r * np + k] -= f * A[c * np + k];
      b[r] -= f * b[c];
    }
  }
  for (guint c = np; c-- > 0;) {
    for (guint k = c + 1; k < np; k++)
      b[c] -= A[c * np + k] * b[k];
    b[c] /= A[c * np + c];
  }
  return TRUE;
}

typedef struct {
  FsFitPredictFn fn;
  void *ctx;
  const uint64_t *sizes;
  const double *meas;
  guint n;
  guint evals;
} Pred;

/* Relative residuals at p into r. */
static gboolean residuals(Pred *pr, const double *p, double *r, GError **error)
{
  pr->evals++;
  if (!pr->fn(pr->ctx, p, pr->sizes, pr->n, r, error))
    return FALSE;
  for (guint i = 0; i < pr->n; i++) {
    if (!isfinite(r[i]) || r[i] < 0) {
      g_set_error(error, FS_FIT_ERROR, FS_FIT_ERROR_MODEL,
                  "the model predicted %g us for %" G_GUINT64_FORMAT " B", r[i], pr->sizes[i]);
      return FALSE;
    }
    r[i] = r[i] / pr->meas[i] - 1;
  }
  return TRUE;
}

static double wcost(const double *r, const double *w, guint n)
{
  double c = 0;
  for (guint i = 0; i < n; i++)
    c += w[i] * r[i] * r[i];
  return c;
}

/* See fit.h.  Also: it sets FS_FIT_ERROR_DATA for 0 or more than 16 parameters or fewer than
 * np + 1 points, and returns FALSE with the predictor's error when a predictor call fails
 * (params then keep their start values). */
gboolean fs_fit_params(FsFitPredictFn predict, void *ctx, FsFitParam *params, guint np,
                       const uint64_t *sizes, const double *times_us, guint n, int max_iter,
                       FsFitResult *out, GError **error)
{
  g_return_val_if_fail(predict != NULL && params != NULL && out != NULL, FALSE);
  memset(out, 0, sizeof *out);
  if (np == 0 || np > 16) {
    g_set_error(error, FS_FIT_ERROR, FS_FIT_ERROR_DATA, "%u parameters; expected 1 to 16", np);
    return FALSE;
  }
  if (!check_points(sizes, times_us, n, np + 1, FALSE, error))
    return FALSE;
  if (max_iter <= 0)
    max_iter = 50;
  Pred pr = {predict, ctx, sizes, times_us, n, 0};
  double *p = g_new(double, np), *pt = g_new(double, np), *r = g_new(double, n),
         *rt = g_new(double, n), *w = g_new(double, n), *J = g_new(double, n * np),
         *A = g_new(double, np * np), *g = g_new(double, np);
  gboolean ok = TRUE;
  for (guint j = 0; j < np; j++)
    p[j] = CLAMP(params[j].value, params[j].lo, params[j].hi);
  double lambda = 1e-3;
  if (!(ok = residuals(&pr, p, r, error)))
    goto done;
  for (int it = 0; it < max_iter; it++) {
    out->iterations = (guint)it + 1;
    huber_weights(r, n, w);
    double cost = wcost(r, w, n);
    /* Forward-difference Jacobian of the residuals. */
    for (guint j = 0; j < np; j++) {
      double span = params[j].hi - params[j].lo;
      double h = 1e-4 * MAX(fabs(p[j]), 1e-3 * span);
      if (p[j] + h > params[j].hi)
        h = -h;
      memcpy(pt, p, np * sizeof *p);
      pt[j] += h;
      if (!(ok = residuals(&pr, pt, rt, error)))
        goto done;
      for (guint i = 0; i < n; i++)
        J[i * np + j] = (rt[i] - r[i]) / h;
    }
    gboolean improved = FALSE;
    for (int tries = 0; tries < 12 && !improved; tries++) {
      for (guint a = 0; a < np; a++) {
        g[a] = 0;
        for (guint i = 0; i < n; i++)
          g[a] -= w[i] * J[i * np + a] * r[i];
        for (guint b = 0; b < np; b++) {
          double s = 0;
          for (guint i = 0; i < n; i++)
            s += w[i] * J[i * np + a] * J[i * np + b];
          A[a * np + b] = s;
        }
        A[a * np + a] *= 1 + lambda;
        A[a * np + a] += 1e-12;
      }
      if (!solve(A, g, np)) {
        lambda *= 10;
        continue;
      }
      double step = 0;
      for (guint j = 0; j < np; j++) {
        pt[j] = CLAMP(p[j] + g[j], params[j].lo, params[j].hi);
        step = MAX(step, fabs(pt[j] - p[j]) / MAX(fabs(p[j]), 1e-3 * (params[j].hi - params[j].lo)));
      }
      if (!(ok = residuals(&pr, pt, rt, error)))
        goto done;
      double tcost = wcost(rt, w, n);
      if (tcost < cost) {
        improved = TRUE;
        memcpy(p, pt, np * sizeof *p);
        memcpy(r, rt, n * sizeof *r);
        lambda = MAX(lambda / 3, 1e-9);
        if (step < 1e-7 || cost - tcost < 1e-12 * MAX(cost, 1e-30))
          out->converged = TRUE;
      } else {
        lambda *= 4;
      }
    }
    if (!improved)
      out->converged = TRUE; /* no direction lowers the cost: a (local) minimum */
    if (out->converged)
      break;
  }
  huber_weights(r, n, w);
  double sw = 0;
  for (guint i = 0; i < n; i++)
    sw += w[i];
  out->rms_rel = sqrt(wcost(r, w, n) / sw);
  for (guint j = 0; j < np; j++)
    params[j].value = p[j];
done:
  out->evaluations = pr.evals;
  g_free(p);
  g_free(pt);
  g_free(r);
  g_free(rt);
  g_free(w);
  g_free(J);
  g_free(A);
  g_free(g);
  return ok;
}
