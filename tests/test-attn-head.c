/* test-attn-head.c — attention efficiency by head dimension: the
 * head-dimension factor of the attention curves (fs_eff_curve_head_dim_factor,
 * `head_dims:` in models/compute/README.md), its provenance (the bf16
 * factors are the means of this project's framework probe rows, validation/
 * reference/h100_attention_cudnn_framework_probe_fit.csv) and its
 * out-of-sample check on the FlashAttention-3 paper's cuDNN figures
 * (h100_attention_fa3_paper_test.csv): the held-out table's kernel-time MAPE
 * is recorded here, before (curves by sequence length alone) and after (with
 * the factors), so that a drift of either fails; so are the probe rows' fit
 * figure and the batch/heads rows' figure. */
#include <math.h>
#include <string.h>

#include "calib/validate.h"
#include "catalog/catalog.h"
#include "compute/efficiency.h"
#include "compute/kernel.h"
#include "testutil.h"

/* Recorded test-table MAPEs (%), the test table's note; a change of more
 * than DRIFT points either way fails (a better model updates the record). */
#define TEST_MAPE_BEFORE 19.75
#define TEST_MAPE_AFTER 11.15
#define DRIFT 0.3

/* A constant forward curve of 0.5 with three head-dim rows. */
static const char three_dims[] =
  "curves:\n"
  "  - kind: attention-forward\n"
  "    arch: hopper\n"
  "    points: [[1024, 0.5]]\n"
  "    head_dims: [[64, 0.6], [128, 1], [256, 1.5]]\n"
  "    source: test\n";

START_TEST(test_head_dim_factor_formula)
{
  g_autoptr(FsEfficiency) eff = fs_test_eff_load_text(three_dims);
  const FsEffCurve *c = fs_efficiency_find(eff, FS_EFF_ATTENTION_FWD, FS_ARCH_HOPPER, FS_DTYPE_BF16, TRUE);
  ck_assert_ptr_nonnull(c);
  ck_assert_uint_eq(c->n_head_dims, 3);
  /* At a row: its factor; outside the rows: clamped. */
  ck_assert(fs_eff_curve_head_dim_factor(c, 64) == 0.6);
  ck_assert(fs_eff_curve_head_dim_factor(c, 128) == 1.0);
  ck_assert(fs_eff_curve_head_dim_factor(c, 256) == 1.5);
  ck_assert(fs_eff_curve_head_dim_factor(c, 32) == 0.6);
  ck_assert(fs_eff_curve_head_dim_factor(c, 512) == 1.5);
  /* Between rows: linear in ln d (96 is 0.415 of the way from 64 to 128). */
  double f = (log(96) - log(64)) / (log(128) - log(64));
  ck_assert(fabs(fs_eff_curve_head_dim_factor(c, 96) - (0.6 + f * 0.4)) < 1e-12);
  ck_assert(fabs(fs_eff_curve_head_dim_factor(c, 192) - (1.0 + (log(192) - log(128)) / log(2) * 0.5)) < 1e-12);
  /* d < 1 or a curve without rows: 1. */
  ck_assert(fs_eff_curve_head_dim_factor(c, 0) == 1.0);
  g_autoptr(FsEfficiency) plain = fs_test_eff_load_text("curves:\n  - kind: attention-forward\n    arch: any\n"
                                            "    points: [[1, 0.5]]\n    source: s\n");
  const FsEffCurve *p = fs_efficiency_find(plain, FS_EFF_ATTENTION_FWD, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  ck_assert_uint_eq(p->n_head_dims, 0);
  ck_assert(fs_eff_curve_head_dim_factor(p, 64) == 1.0);
}
END_TEST

START_TEST(test_head_dim_factor_in_kernel_time)
{
  g_autoptr(FsEfficiency) eff = fs_test_eff_load_text(three_dims);
  FsGpuModel gpu;
  memset(&gpu, 0, sizeof gpu);
  gpu.arch = FS_ARCH_HOPPER;
  gpu.flops[FS_DTYPE_BF16] = 1e15;
  gpu.memory_bandwidth = 3e12;
  gpu.launch_latency = 2 * FS_US;
  FsKernel k = fs_kernel_attention("a", FS_PASS_FORWARD, FS_DTYPE_BF16, 64, 4096, 4096, 64, 1, FALSE, FALSE);
  FsKernelTiming t;
  fs_kernel_time(&k, &gpu, eff, &t);
  ck_assert(t.shape_factor == 0.6 && fabs(t.efficiency - 0.3) < 1e-15);
  ck_assert_int_eq(t.compute, fs_time_from_s(k.flops / (1e15 * t.efficiency)));
  g_autofree char *line = fs_kernel_explain(&k, &gpu, eff);
  ck_assert_msg(strstr(line, "(seq_len curve 0.500 × head dim 64 0.600)") != NULL, "%s", line);
  /* The product is capped at the peak. */
  FsKernel w = fs_kernel_attention("a", FS_PASS_FORWARD, FS_DTYPE_BF16, 8, 4096, 4096, 512, 1, FALSE, FALSE);
  g_autoptr(FsEfficiency) hi = fs_test_eff_load_text("curves:\n  - kind: attention-forward\n    arch: hopper\n"
                                         "    points: [[1, 0.8]]\n    head_dims: [[128, 1], [256, 2]]\n"
                                         "    source: s\n");
  fs_kernel_time(&w, &gpu, hi, &t);
  ck_assert(t.shape_factor == 2.0 && t.efficiency == 1.0);
  /* A GEMM on the same set: no factor. */
  FsKernel g = fs_kernel_gemm("g", FS_PASS_FORWARD, FS_DTYPE_BF16, 64, 64, 64, 1);
  fs_kernel_time(&g, &gpu, eff, &t);
  ck_assert(t.shape_factor == 1.0);
}
END_TEST

START_TEST(test_head_dims_rejected)
{
  static const struct { const char *curve, *fragment; } cases[] = {
    {"  - kind: gemm\n    arch: hopper\n    points: [[1, 0.5]]\n    head_dims: [[64, 0.5]]\n",
     "t.yaml:5:16: \"head_dims\" applies only to attention curves"},
    {"  - kind: attention-backward\n    arch: hopper\n    points: [[1, 0.5]]\n    head_dims: []\n",
     "\"head_dims\" is empty"},
    {"  - kind: attention-forward\n    arch: hopper\n    points: [[1, 0.5]]\n    head_dims: [[64, 0.5, 1]]\n",
     "t.yaml:5:17: expected a row [head_dim, factor]"},
    {"  - kind: attention-forward\n    arch: hopper\n    points: [[1, 0.5]]\n    head_dims: [[64.5, 0.5]]\n",
     "t.yaml:5:18: a head dimension must be a whole number"},
    {"  - kind: attention-forward\n    arch: hopper\n    points: [[1, 0.5]]\n    head_dims: [[0, 0.5]]\n",
     "t.yaml:5:18: expected a number from 1"},
    {"  - kind: attention-forward\n    arch: hopper\n    points: [[1, 0.5]]\n    head_dims: [[64, 0]]\n",
     "factor must be in (0, 4]"},
    {"  - kind: attention-forward\n    arch: hopper\n    points: [[1, 0.5]]\n    head_dims: [[64, 5]]\n",
     "expected a number from 0 to 4"},
    {"  - kind: attention-forward\n    arch: hopper\n    points: [[1, 0.5]]\n"
     "    head_dims: [[128, 1], [64, 0.6]]\n",
     "t.yaml:5:28: head dims must increase (64 after 128)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
    fs_test_eff_refused(i, cases[i].curve, cases[i].fragment);
}
END_TEST

/* The rows survive a later file's load (the staging copy) and a replace by
 * fs_efficiency_set drops them with the old points. */
START_TEST(test_head_dims_copied_and_replaced)
{
  g_autoptr(FsEfficiency) eff = fs_test_eff_load_text(three_dims);
  fs_test_eff_load_another(eff);
  const FsEffCurve *c = fs_efficiency_find(eff, FS_EFF_ATTENTION_FWD, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  ck_assert_uint_eq(c->n_head_dims, 3);
  ck_assert(fs_eff_curve_head_dim_factor(c, 64) == 0.6);
  c = fs_test_eff_replace_attention(eff);
  ck_assert_uint_eq(c->n_head_dims, 0);
}
END_TEST

/* ---- the FlashAttention-3 paper's tables -------------------------------- */

START_TEST(test_fa3_paper_out_of_sample)
{
  double before, after, bb, ba, fit, fb;
  guint rows;
  fs_test_attention_score("h100_attention_fa3_paper_fit", FALSE, TRUE, &fit, &fb, &rows);
  ck_assert_uint_eq(rows, 33);
  fs_test_attention_score("h100_attention_fa3_paper_test", TRUE, TRUE, &before, &bb, &rows);
  fs_test_attention_score("h100_attention_fa3_paper_test", FALSE, TRUE, &after, &ba, &rows);
  ck_assert_uint_eq(rows, 33);
  ck_assert_msg(fabs(before - TEST_MAPE_BEFORE) <= DRIFT, "curves alone: test MAPE %.2f %% (recorded %.2f %%)",
                before, TEST_MAPE_BEFORE);
  ck_assert_msg(fabs(after - TEST_MAPE_AFTER) <= DRIFT, "with head_dims: test MAPE %.2f %% (recorded %.2f %%, "
                "bias %.2f %%; fit table %.2f %%)", after, TEST_MAPE_AFTER, ba, fit);
  ck_assert(after < before && fabs(ba) < fabs(bb));
}
END_TEST

/* The bf16 curves' head_dims: rows are the framework probe's: for each
 * kernel (pass, mask) and head dim 64 and 256, the mean over the table's
 * lengths of its TFLOP/s over head dim 128's at the same length (to the
 * three decimals hopper.yaml carries).  The probe rows' kernel-time MAPE
 * (a fit figure: the factors come from them, the head dim 128 points from
 * the earlier probe) and the batch/heads rows' (nothing fitted; batch x
 * heads enters through the occupancy of the kernels' thread blocks,
 * test-attn-occupancy.c) are recorded. */
START_TEST(test_framework_probe_factors)
{
  g_autofree char *path =
    fs_test_source_path("validation/reference/h100_attention_cudnn_framework_probe_fit.csv");
  GError *err = NULL;
  g_autoptr(FsValTable) t = fs_val_table_load(path, &err);
  fs_assert_no_error(err);
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, &err);
  fs_assert_no_error(err);
  int cp = fs_val_table_col(t, "pass", NULL), cc = fs_val_table_col(t, "causal", NULL);
  int cs = fs_val_table_col(t, "seq", NULL), ck = fs_val_table_col(t, "head_dim", NULL);
  int ct = fs_val_table_col(t, "tflops", NULL);
  ck_assert(cp >= 0 && cc >= 0 && cs >= 0 && ck >= 0 && ct >= 0);
  for (int bwd = 0; bwd < 2; bwd++)
    for (int causal = 0; causal < 2; causal++) {
      const FsEffCurve *c = fs_efficiency_find(eff, bwd ? FS_EFF_ATTENTION_BWD : FS_EFF_ATTENTION_FWD,
                                               FS_ARCH_HOPPER, FS_DTYPE_BF16, causal);
      ck_assert_ptr_nonnull(c);
      for (guint d = 64; d <= 256; d *= 4) {
        double sum = 0;
        guint n = 0;
        for (guint r = 0; r < t->nrows; r++) {
          uint64_t s, hd;
          double tf;
          ck_assert(fs_val_table_u64(t, r, cs, &s, NULL) && fs_val_table_u64(t, r, ck, &hd, NULL) &&
                    fs_val_table_double(t, r, ct, &tf, NULL));
          if (hd != d || strcmp(t->cells[r][cp], bwd ? "backward" : "forward") != 0 ||
              strcmp(t->cells[r][cc], causal ? "true" : "false") != 0)
            continue;
          /* The head dim 128 row of the same pass, mask and length. */
          for (guint q = 0; q < t->nrows; q++) {
            uint64_t s2, hd2;
            double tf2;
            ck_assert(fs_val_table_u64(t, q, cs, &s2, NULL) && fs_val_table_u64(t, q, ck, &hd2, NULL) &&
                      fs_val_table_double(t, q, ct, &tf2, NULL));
            if (s2 == s && hd2 == 128 && strcmp(t->cells[q][cp], t->cells[r][cp]) == 0 &&
                strcmp(t->cells[q][cc], t->cells[r][cc]) == 0) {
              sum += tf / tf2;
              n++;
            }
          }
        }
        ck_assert_uint_eq(n, 6);
        double f = fs_eff_curve_head_dim_factor(c, d);
        ck_assert_msg(fabs(f - sum / n) < 0.0006, "%s causal %d head dim %u: factor %.3f, probe mean %.4f",
                      bwd ? "backward" : "forward", causal, d, f, sum / n);
      }
    }
  double mape, bias;
  guint rows;
  fs_test_attention_score("h100_attention_cudnn_framework_probe_fit", FALSE, TRUE, &mape, &bias, &rows);
  ck_assert_uint_eq(rows, 72);
  ck_assert_msg(fabs(mape - 9.32) <= DRIFT, "probe rows: MAPE %.2f %% (recorded 9.32 %%, bias %.2f %%)", mape,
                bias);
  fs_test_attention_score("h100_attention_cudnn_framework_probe_batch", FALSE, TRUE, &mape, &bias, &rows);
  ck_assert_uint_eq(rows, 12);
  ck_assert_msg(fabs(mape - 5.96) <= DRIFT, "batch/heads rows: MAPE %.2f %% (recorded 5.96 %%, bias %.2f %%)",
                mape, bias);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("attn-head");
  FS_ADD_TEST(s, test_head_dim_factor_formula);
  FS_ADD_TEST(s, test_head_dim_factor_in_kernel_time);
  FS_ADD_TEST(s, test_head_dims_rejected);
  FS_ADD_TEST(s, test_head_dims_copied_and_replaced);
  FS_ADD_TEST(s, test_fa3_paper_out_of_sample);
  FS_ADD_TEST(s, test_framework_probe_factors);
  return fs_test_run_suite(s);
}
