/* test-gemm-shape.c — GEMM efficiency by shape: the measured-shape factor of
 * the efficiency curves (fs_eff_curve_shape_factor, `shapes:` in
 * models/compute/README.md) and its out-of-sample check on the H100 probe's
 * GEMM tables (validation/reference/h100_gemm_shapes_cublaslt_probe_*.csv):
 * the model is made from the fit table only, and the held-out test table's
 * kernel-time MAPE is recorded here, before (FLOPs curves alone) and after
 * (with the measured shapes), so that a drift of either fails. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "calib/calibration.h"
#include "calib/validate.h"
#include "catalog/catalog.h"
#include "compute/efficiency.h"
#include "compute/kernel.h"
#include "testutil.h"

/* Recorded test-table MAPEs (%), validation/reference/
 * h100_gemm_shapes_cublaslt_probe_test.csv's note; a change of more than
 * DRIFT points either way fails (a better model updates the record). */
#define TEST_MAPE_BEFORE 8.35
#define TEST_MAPE_AFTER 6.64
#define DRIFT 0.3
/* The same for B200 (validation/reference/b200_gemm_shapes_xla_test.csv's note). */
#define B200_TEST_MAPE_BEFORE 7.53
#define B200_TEST_MAPE_AFTER 7.41

/* A constant curve of 0.5 with two measured shapes. */
static const char two_shapes[] =
  "curves:\n"
  "  - kind: gemm\n"
  "    arch: hopper\n"
  "    axis: flops\n"
  "    points: [[1, 0.5]]\n"
  "    shapes: [[1000, 1000, 1000, 0.25], [1000, 8000, 1000, 0.45]]\n"
  "    shape_range: 2\n"
  "    source: test\n";

START_TEST(test_shape_factor_formula)
{
  g_autoptr(FsEfficiency) eff = fs_test_eff_load_text(two_shapes);
  const FsEffCurve *c = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  ck_assert_ptr_nonnull(c);
  ck_assert_uint_eq(c->n_shapes, 2);
  ck_assert(c->shape_range == 2);
  /* At a measured shape: its residual exactly. */
  ck_assert(fs_eff_curve_shape_factor(c, 1000, 1000, 1000) == 0.5);
  ck_assert(fs_eff_curve_shape_factor(c, 1000, 8000, 1000) == 0.9);
  /* Between them (n = 2000: distances ln 2 and ln 4), by the formula. */
  double l2 = log(2), l4 = log(4);
  double w0 = 1 / (l2 * l2), w1 = 1 / (l2 * l2), w2 = 1 / (l4 * l4);
  double want = (w0 + 0.5 * w1 + 0.9 * w2) / (w0 + w1 + w2);
  ck_assert_msg(fabs(fs_eff_curve_shape_factor(c, 1000, 2000, 1000) - want) < 1e-12, "%.17g vs %.17g",
                fs_eff_curve_shape_factor(c, 1000, 2000, 1000), want);
  /* Far from both: the curve alone; no shapes or a zero dimension: 1. */
  ck_assert(fabs(fs_eff_curve_shape_factor(c, 1e9, 1e9, 1e9) - 1) < 0.01);
  ck_assert(fs_eff_curve_shape_factor(c, 0, 1000, 1000) == 1.0);
  g_autoptr(FsEfficiency) plain = fs_test_eff_load_text("curves:\n  - kind: gemm\n    arch: any\n    axis: flops\n"
                                            "    points: [[1, 0.5]]\n    source: s\n");
  const FsEffCurve *p = fs_efficiency_find(plain, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  ck_assert_uint_eq(p->n_shapes, 0);
  ck_assert(fs_eff_curve_shape_factor(p, 1000, 1000, 1000) == 1.0);
}
END_TEST

START_TEST(test_shape_factor_in_kernel_time)
{
  g_autoptr(FsEfficiency) eff = fs_test_eff_load_text(two_shapes);
  FsGpuModel gpu;
  memset(&gpu, 0, sizeof gpu);
  gpu.arch = FS_ARCH_HOPPER;
  gpu.flops[FS_DTYPE_BF16] = 1e15;
  gpu.memory_bandwidth = 3e12;
  gpu.launch_latency = 2 * FS_US;
  FsKernel k = fs_kernel_gemm("g", FS_PASS_FORWARD, FS_DTYPE_BF16, 1000, 1000, 1000, 1);
  FsKernelTiming t;
  fs_kernel_time(&k, &gpu, eff, &t);
  ck_assert(t.shape_factor == 0.5 && t.efficiency == 0.25);
  ck_assert_int_eq(t.compute, fs_time_from_s(k.flops / (1e15 * 0.25)));
  /* A batch keeps the per-product shape; the curve is read at the kernel's FLOPs. */
  FsKernel kb = fs_kernel_gemm("g", FS_PASS_FORWARD, FS_DTYPE_BF16, 1000, 1000, 1000, 4);
  fs_kernel_time(&kb, &gpu, eff, &t);
  ck_assert(t.shape_factor == 0.5);
  /* Other kernels and curves without shapes: factor 1. */
  FsKernel a = fs_kernel_attention("a", FS_PASS_FORWARD, FS_DTYPE_BF16, 8, 1000, 1000, 128, 1, FALSE, FALSE);
  fs_kernel_time(&a, &gpu, eff, &t);
  ck_assert(t.shape_factor == 1.0);
  /* The product is capped at the peak. */
  g_autoptr(FsEfficiency) hi = fs_test_eff_load_text("curves:\n  - kind: gemm\n    arch: hopper\n    axis: flops\n"
                                         "    points: [[1, 0.5]]\n    shapes: [[64, 64, 64, 1]]\n"
                                         "    source: s\n");
  FsKernel s = fs_kernel_gemm("s", FS_PASS_FORWARD, FS_DTYPE_BF16, 64, 64, 64, 1);
  fs_kernel_time(&s, &gpu, hi, &t);
  ck_assert(t.shape_factor == 2.0 && t.efficiency == 1.0);
}
END_TEST

START_TEST(test_shapes_rejected)
{
  static const struct { const char *curve, *fragment; } cases[] = {
    {"  - kind: memory\n    arch: hopper\n    points: [[1, 0.5]]\n    shapes: [[1, 1, 1, 0.5]]\n",
     "t.yaml:5:13: \"shapes\" applies only to a gemm curve with axis: flops"},
    {"  - kind: gemm\n    arch: hopper\n    points: [[1, 0.5]]\n    shapes: [[1, 1, 1, 0.5]]\n",
     "\"shapes\" applies only to a gemm curve with axis: flops"},
    {"  - kind: gemm\n    arch: hopper\n    axis: flops\n    points: [[1, 0.5]]\n    shapes: []\n",
     "\"shapes\" is empty"},
    {"  - kind: gemm\n    arch: hopper\n    axis: flops\n    points: [[1, 0.5]]\n    shapes: [[1, 1, 0.5]]\n",
     "t.yaml:6:14: expected a shape [m, n, k, efficiency]"},
    {"  - kind: gemm\n    arch: hopper\n    axis: flops\n    points: [[1, 0.5]]\n    shapes: [[1.5, 1, 1, 0.5]]\n",
     "t.yaml:6:15: a GEMM dimension must be a whole number"},
    {"  - kind: gemm\n    arch: hopper\n    axis: flops\n    points: [[1, 0.5]]\n    shapes: [[0, 1, 1, 0.5]]\n",
     "t.yaml:6:15: expected a number from 1"},
    {"  - kind: gemm\n    arch: hopper\n    axis: flops\n    points: [[1, 0.5]]\n    shapes: [[1, 1, 1, 0]]\n",
     "efficiency must be in (0, 1]"},
    {"  - kind: gemm\n    arch: hopper\n    axis: flops\n    points: [[1, 0.5]]\n    shapes: [[1, 1, 1, 1.5]]\n",
     "expected a number from 0 to 1"},
    {"  - kind: gemm\n    arch: hopper\n    axis: flops\n    points: [[1, 0.5]]\n"
     "    shapes: [[2, 3, 4, 0.5], [2, 3, 4, 0.6]]\n",
     "t.yaml:6:30: shape 2x3x4 is given twice (shapes 1 and 2)"},
    {"  - kind: gemm\n    arch: hopper\n    axis: flops\n    points: [[1, 0.5]]\n    shape_range: 2\n",
     "t.yaml:6:18: \"shape_range\" applies only to a curve with \"shapes\""},
    {"  - kind: gemm\n    arch: hopper\n    axis: flops\n    points: [[1, 0.5]]\n    shapes: [[1, 1, 1, 0.5]]\n"
     "    shape_range: 1\n",
     "t.yaml:7:18: expected a number above 1 and at most 1e6, got 1"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
    fs_test_eff_refused(i, cases[i].curve, cases[i].fragment);
}
END_TEST

/* Shapes survive a later file's load (the staging copy) and a replace by
 * fs_efficiency_set drops them with the old points. */
START_TEST(test_shapes_copied_and_replaced)
{
  g_autoptr(FsEfficiency) eff = fs_test_eff_load_text(two_shapes);
  GError *err = NULL;
  ck_assert(fs_efficiency_load_string(eff, "curves:\n  - kind: memory\n    arch: any\n"
                                      "    points: [[1, 0.8]]\n    source: s\n",
                                      -1, "m.yaml", FALSE, &err));
  fs_assert_no_error(err);
  const FsEffCurve *c = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  ck_assert_uint_eq(c->n_shapes, 2);
  ck_assert(fs_eff_curve_shape_factor(c, 1000, 1000, 1000) == 0.5);
  double x = 1, y = 0.7;
  ck_assert(fs_efficiency_set(eff, FS_EFF_GEMM, FALSE, FS_ARCH_HOPPER, TRUE, 0, FS_EFF_CAUSAL_ANY,
                              FS_EFF_AXIS_FLOPS, &x, &y, 1, "probe", &err));
  c = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  ck_assert_uint_eq(c->n_shapes, 0);
}
END_TEST

/* A calibration over a curve with shapes: the measured points and shapes
 * replace, the prior ramp beyond them and the residuals of the shapes they
 * do not measure stay. */
START_TEST(test_calibrate_keeps_what_is_not_measured)
{
  g_autoptr(FsEfficiency) eff = fs_test_eff_load_text(
    "curves:\n"
    "  - kind: gemm\n"
    "    arch: hopper\n"
    "    axis: flops\n"
    "    points: [[1e6, 0.2], [1e9, 0.6], [1e12, 0.8]]\n"
    "    shapes: [[1000, 1000, 1000, 0.3], [1000, 8000, 1000, 0.54]]\n"
    "    shape_range: 2\n"
    "    source: test\n");
  GError *err = NULL;
  const FsEffCurve *c = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  double r2 = c->shape_cache[7]; /* the residual of 1000×8000×1000 against the prior curve */
  double x[] = {1e9, 1e10}, y[] = {0.3, 0.5};
  double shapes[] = {1000, 1000, 1000, 0.15};
  ck_assert(fs_efficiency_calibrate_gemm(eff, FS_ARCH_HOPPER, FS_DTYPE_BF16, x, y, 2, shapes, 1,
                                         "probe", &err));
  fs_assert_no_error(err);
  c = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  ck_assert(!c->any_dtype && c->dtype == FS_DTYPE_BF16 && strcmp(c->source, "probe") == 0);
  /* Points: the prior's 1e6 scaled by 0.3/0.6, the measured, the prior's 1e12 by 0.5/prior(1e10). */
  ck_assert_uint_eq(c->n, 4);
  double p10 = 0.6 + (0.8 - 0.6) / 3;
  ck_assert(c->x[0] == 1e6 && fabs(c->y[0] - 0.1) < 1e-12);
  ck_assert(c->x[1] == 1e9 && c->y[1] == 0.3 && c->x[2] == 1e10 && c->y[2] == 0.5);
  ck_assert(c->x[3] == 1e12 && fabs(c->y[3] - 0.8 * 0.5 / p10) < 1e-12);
  /* Shapes: the measured one as measured, the other at its prior residual. */
  ck_assert_uint_eq(c->n_shapes, 2);
  ck_assert(c->shape_range == 2);
  double f1 = 2e9, f2 = 1.6e10;
  ck_assert(fabs(fs_eff_curve_eval(c, f1) * fs_eff_curve_shape_factor(c, 1000, 1000, 1000) - 0.15) < 1e-12);
  ck_assert(fabs(fs_eff_curve_shape_factor(c, 1000, 8000, 1000) - r2) < 1e-12);
  ck_assert(fabs(c->shapes[7] - r2 * fs_eff_curve_eval(c, f2)) < 1e-12);
  /* Bad input: an error, the curve unchanged. */
  double bad[] = {1000, 1000, 1000, 0.2, 1000, 1000, 1000, 0.3};
  ck_assert(!fs_efficiency_calibrate_gemm(eff, FS_ARCH_HOPPER, FS_DTYPE_BF16, x, y, 2, bad, 2, "p", &err));
  ck_assert_ptr_nonnull(strstr(err->message, "given twice"));
  g_clear_error(&err);
  double frac[] = {1000.5, 1000, 1000, 0.2};
  ck_assert(!fs_efficiency_calibrate_gemm(eff, FS_ARCH_HOPPER, FS_DTYPE_BF16, x, y, 2, frac, 1, "p", &err));
  g_clear_error(&err);
  double ydown[] = {0.3, 1.5};
  ck_assert(!fs_efficiency_calibrate_gemm(eff, FS_ARCH_HOPPER, FS_DTYPE_BF16, x, ydown, 2, NULL, 0, "p", &err));
  g_clear_error(&err);
  ck_assert(fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE) == c);
  /* Without a prior curve on the flops axis: the points alone, range 4. */
  g_autoptr(FsEfficiency) bare = fs_efficiency_new();
  ck_assert(fs_efficiency_calibrate_gemm(bare, FS_ARCH_HOPPER, FS_DTYPE_FP8, x, y, 2, shapes, 1, "p", &err));
  c = fs_efficiency_find(bare, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_FP8, FALSE);
  ck_assert(c->n == 2 && c->n_shapes == 1 && c->shape_range == 4);
}
END_TEST

/* ---- the H100 probe tables --------------------------------------------- */

typedef struct {
  double mape, bias;
  guint rows;
} Score;

/* Kernel-time error of the rows of the reference table name against the
 * kernel model with eff on h100-sxm (as kind gemm predicts it): every row
 * when layout is NULL, else the rows of that layout (column "layout") and
 * datatype. */
static Score score_rows(const char *name, const FsCatalog *cat, const FsEfficiency *eff, const char *layout,
                        const char *dtype)
{
  g_autofree char *rel = g_strdup_printf("validation/reference/%s.csv", name);
  g_autofree char *path = fs_test_source_path(rel);
  GError *err = NULL;
  g_autoptr(FsValTable) t = fs_val_table_load(path, &err);
  fs_assert_no_error(err);
  const FsModel *gpu = fs_catalog_require(cat, fs_val_table_key(t, "gpu"), FS_MODEL_GPU, &err);
  fs_assert_no_error(err);
  int cd = fs_val_table_col(t, "dtype", NULL), cm = fs_val_table_col(t, "m", NULL);
  int cn = fs_val_table_col(t, "n", NULL), ck = fs_val_table_col(t, "k", NULL);
  int ct = fs_val_table_col(t, "time_us", NULL);
  int cl = layout != NULL ? fs_val_table_col(t, "layout", NULL) : -1;
  ck_assert(cd >= 0 && cm >= 0 && cn >= 0 && ck >= 0 && ct >= 0 && (layout == NULL || cl >= 0));
  Score s = {0};
  for (guint r = 0; r < t->nrows; r++) {
    if (layout != NULL && (strcmp(t->cells[r][cl], layout) != 0 || strcmp(t->cells[r][cd], dtype) != 0))
      continue;
    FsDtype dt;
    uint64_t m, n, k;
    double us;
    ck_assert(fs_dtype_from_name(t->cells[r][cd], &dt));
    ck_assert(fs_val_table_u64(t, r, cm, &m, NULL) && fs_val_table_u64(t, r, cn, &n, NULL) &&
              fs_val_table_u64(t, r, ck, &k, NULL) && fs_val_table_double(t, r, ct, &us, NULL));
    FsKernel kn = fs_kernel_gemm("g", FS_PASS_FORWARD, dt, m, n, k, 1);
    FsKernelTiming tm;
    fs_kernel_time(&kn, &gpu->u.gpu, eff, &tm);
    double e = fs_time_to_us(tm.time - tm.launch) / us - 1;
    s.mape += fabs(e);
    s.bias += e;
    s.rows++;
  }
  s.mape *= 100.0 / s.rows;
  s.bias *= 100.0 / s.rows;
  return s;
}

static Score score_table(const char *name, const FsCatalog *cat, const FsEfficiency *eff)
{
  return score_rows(name, cat, eff, NULL, NULL);
}

/* The default curves with every GEMM curve's shapes removed (the FLOPs
 * curves alone). */
static FsEfficiency *without_shapes(void)
{
  GError *err = NULL;
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, &err);
  fs_assert_no_error(err);
  for (guint i = 0; i < fs_efficiency_size(eff); i++) {
    const FsEffCurve *c = fs_efficiency_nth(eff, i);
    if (c->n_shapes == 0)
      continue;
    g_autofree char *src = g_strdup(c->source);
    ck_assert(fs_efficiency_set(eff, c->kind, c->any_arch, c->arch, c->any_dtype, c->dtype, c->causal,
                                c->axis, c->x, c->y, c->n, src, &err));
    fs_assert_no_error(err);
  }
  return g_steal_pointer(&eff);
}

START_TEST(test_h100_probe_out_of_sample)
{
  GError *err = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(NULL, &err);
  fs_assert_no_error(err);
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, &err);
  fs_assert_no_error(err);
  g_autoptr(FsEfficiency) bare = without_shapes();
  /* The shipped shapes are the fit table's rows: reproduced to rounding. */
  Score fit = score_table("h100_gemm_shapes_cublaslt_probe_fit", cat, eff);
  ck_assert_uint_eq(fit.rows, 55);
  ck_assert_msg(fit.mape < 0.1, "fit table MAPE %.3f %%: models/compute/hopper.yaml's shapes and the "
                "fit table disagree (rerun tools/gemm-shapes)", fit.mape);
  Score before = score_table("h100_gemm_shapes_cublaslt_probe_test", cat, bare);
  Score after = score_table("h100_gemm_shapes_cublaslt_probe_test", cat, eff);
  ck_assert_uint_eq(after.rows, 20);
  ck_assert_msg(fabs(before.mape - TEST_MAPE_BEFORE) <= DRIFT, "FLOPs curves alone: test MAPE %.2f %% "
                "(recorded %.2f %%)", before.mape, TEST_MAPE_BEFORE);
  ck_assert_msg(fabs(after.mape - TEST_MAPE_AFTER) <= DRIFT, "with shapes: test MAPE %.2f %% (recorded "
                "%.2f %%, bias %.2f %%)", after.mape, TEST_MAPE_AFTER, after.bias);
  ck_assert(after.mape < before.mape && fabs(after.bias) < fabs(before.bias));
}
END_TEST

/* The framework probe's GEMMs (validation/reference/
 * h100_gemm_layouts_framework_probe_test.csv: 16 transformer shapes as
 * PyTorch runs them forward, dgrad and wgrad in bf16 and forward in fp8),
 * never fitted on: the kernel-time MAPE and bias of each layout with the
 * shipped curves and shapes, recorded so that a drift fails.  The two
 * squares' forward rows repeat fit-table shapes: the two probes agree on
 * them within 0.7 % once the framework file's timing floor is subtracted. */
static const struct {
  const char *layout, *dtype;
  guint rows;
  double mape, bias;
} layout_records[] = {
  {"forward", "bf16", 16, 7.74, -6.30},
  {"dgrad", "bf16", 16, 8.02, -7.20},
  {"wgrad", "bf16", 16, 9.04, -9.04},
  {"forward", "fp8", 16, 5.96, -5.82},
};

START_TEST(test_framework_probe_layouts)
{
  GError *err = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(NULL, &err);
  fs_assert_no_error(err);
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, &err);
  fs_assert_no_error(err);
  const char *name = "h100_gemm_layouts_framework_probe_test";
  for (guint i = 0; i < G_N_ELEMENTS(layout_records); i++) {
    Score sc = score_rows(name, cat, eff, layout_records[i].layout, layout_records[i].dtype);
    ck_assert_uint_eq(sc.rows, layout_records[i].rows);
    ck_assert_msg(fabs(sc.mape - layout_records[i].mape) <= DRIFT && fabs(sc.bias - layout_records[i].bias) <= DRIFT,
                  "%s %s: MAPE %.2f %% bias %.2f %% (recorded %.2f, %.2f)", layout_records[i].layout,
                  layout_records[i].dtype, sc.mape, sc.bias, layout_records[i].mape, layout_records[i].bias);
  }
  Score all = score_table(name, cat, eff);
  ck_assert_uint_eq(all.rows, 64);
  ck_assert_msg(fabs(all.mape - 7.69) <= DRIFT, "whole table: MAPE %.2f %% (recorded 7.69 %%)", all.mape);
}
END_TEST

/* Calibrated with the probe file itself (`--calibration
 * validation/results/h100-2026-11-23.json`), the fit table is reproduced:
 * every record is a measured shape and the launch floor is not counted
 * twice (before: 18 % MAPE, the shapes dropped and the floor in every
 * efficiency).  With only the file's squares, the catalog's shape residuals
 * stay and the fit table stays within 2 %. */
START_TEST(test_h100_probe_calibrated)
{
  GError *err = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(NULL, &err);
  fs_assert_no_error(err);
  g_autofree char *path = fs_test_source_path("validation/results/h100-2026-11-23.json");
  g_autoptr(FsCalibration) cal = fs_calibration_load(path, &err);
  fs_assert_no_error(err);
  ck_assert(fs_calibration_apply(cal, cat, &err));
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, &err);
  ck_assert(fs_calibration_apply_efficiency(cal, cat, eff, &err));
  fs_assert_no_error(err);
  Score fit = score_table("h100_gemm_shapes_cublaslt_probe_fit", cat, eff);
  Score test = score_table("h100_gemm_shapes_cublaslt_probe_test", cat, eff);
  ck_assert_msg(fit.mape < 0.1, "calibrated fit table MAPE %.2f %%", fit.mape);
  ck_assert_msg(test.mape < 1, "calibrated test table MAPE %.2f %%", test.mape);
  /* Squares only: the non-square records are not used. */
  for (int d = 0; d < FS_DTYPE_N; d++)
    for (guint i = 0; i < cal->compute.n_gemm[d]; i++) {
      FsCalibGemmPoint *p = &cal->compute.gemm[d][i];
      if (!(p->m == p->n && p->n == p->k))
        p->efficiency = 0;
    }
  g_autoptr(FsEfficiency) sq = fs_efficiency_load_default(NULL, &err);
  ck_assert(fs_calibration_apply_efficiency(cal, cat, sq, &err));
  fs_assert_no_error(err);
  const FsEffCurve *c = fs_efficiency_find(sq, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  ck_assert_uint_eq(c->n_shapes, 11); /* 5 squares measured, 6 layer shapes kept */
  fit = score_table("h100_gemm_shapes_cublaslt_probe_fit", cat, sq);
  ck_assert_msg(fit.mape < 2, "squares-only calibration: fit table MAPE %.2f %%", fit.mape);
}
END_TEST

/* B200 GEMMs by shape (models/compute/blackwell.yaml, XLA's sm_100 matmul
 * table): a non-square shape now runs at the table's efficiency, not at
 * the FLOPs curve's, in the direction the table says.  bf16 4096 x 4096 x
 * 1024 (3.4e10 FLOPs) reached 0.566 where the curve says 0.629 there (a
 * short k is slow); fp8 4096 x 2048 x 4096 (6.9e10 FLOPs) 0.674 where the
 * curve says 0.631.  Out of sample, on the table's held-out m = 2048 shapes
 * (validation/reference/b200_gemm_shapes_xla_test.csv), the kernel-time
 * MAPE is recorded before (FLOPs curves alone) and after. */
START_TEST(test_b200_xla_shapes)
{
  GError *err = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(NULL, &err);
  fs_assert_no_error(err);
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, &err);
  fs_assert_no_error(err);
  g_autoptr(FsEfficiency) bare = without_shapes();
  const FsModel *gpu = fs_catalog_require(cat, "b200", FS_MODEL_GPU, &err);
  fs_assert_no_error(err);
  static const struct {
    FsDtype dtype;
    uint64_t m, n, k;
    double table, curve;
  } rows[] = {
    {FS_DTYPE_BF16, 4096, 4096, 1024, 0.566, 0.629},
    {FS_DTYPE_FP8, 4096, 2048, 4096, 0.674, 0.631},
  };
  for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
    FsKernel kn = fs_kernel_gemm("g", FS_PASS_FORWARD, rows[i].dtype, rows[i].m, rows[i].n, rows[i].k, 1);
    FsKernelTiming with, without;
    fs_kernel_time(&kn, &gpu->u.gpu, eff, &with);
    fs_kernel_time(&kn, &gpu->u.gpu, bare, &without);
    ck_assert_msg(fabs(with.efficiency - rows[i].table) < 0.002 && fabs(without.efficiency - rows[i].curve) < 0.002,
                  "row %u: efficiency %.4f with shapes (table %.3f), %.4f without (curve %.3f)", i,
                  with.efficiency, rows[i].table, without.efficiency, rows[i].curve);
    ck_assert(rows[i].table < rows[i].curve ? with.compute > without.compute : with.compute < without.compute);
  }
  Score before = score_table("b200_gemm_shapes_xla_test", cat, bare);
  Score after = score_table("b200_gemm_shapes_xla_test", cat, eff);
  ck_assert_uint_eq(after.rows, 16);
  ck_assert_msg(fabs(before.mape - B200_TEST_MAPE_BEFORE) <= DRIFT && fabs(after.mape - B200_TEST_MAPE_AFTER) <= DRIFT,
                "B200 held-out shapes: MAPE %.2f %% (bias %.2f %%) without shapes, %.2f %% (bias %.2f %%) with "
                "(recorded %.2f, %.2f)", before.mape, before.bias, after.mape, after.bias, B200_TEST_MAPE_BEFORE,
                B200_TEST_MAPE_AFTER);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("gemm-shape");
  FS_ADD_TEST(s, test_shape_factor_formula);
  FS_ADD_TEST(s, test_shape_factor_in_kernel_time);
  FS_ADD_TEST(s, test_shapes_rejected);
  FS_ADD_TEST(s, test_shapes_copied_and_replaced);
  FS_ADD_TEST(s, test_calibrate_keeps_what_is_not_measured);
  FS_ADD_TEST(s, test_h100_probe_out_of_sample);
  FS_ADD_TEST(s, test_framework_probe_layouts);
  FS_ADD_TEST(s, test_h100_probe_calibrated);
  FS_ADD_TEST(s, test_b200_xla_shapes);
  return fs_test_run_suite(s);
}
