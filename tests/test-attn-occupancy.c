/* test-attn-occupancy.c — the occupancy of an attention kernel's thread
 * blocks on the GPU's SMs (compute/attn-occupancy.h, `tiles:` in
 * models/compute/README.md): waves of equal blocks, the tail of unequal
 * (causal) ones, the factor against the curve's measured kernels, its place
 * in the kernel time, the refused inputs, and the catalog's tiles on the
 * held-out batch/heads table. */
#include <math.h>
#include <string.h>

#include "calib/validate.h"
#include "catalog/catalog.h"
#include "compute/attn-occupancy.h"
#include "compute/efficiency.h"
#include "compute/kernel.h"
#include "testutil.h"

/* A constant curve of 0.5 with two tile rows, measured at 16384 tokens and
 * hidden 2048 (the FlashAttention-3 paper's setting). */
static const char tiled[] =
  "curves:\n"
  "  - kind: attention-forward\n"
  "    arch: hopper\n"
  "    points: [[1024, 0.5]]\n"
  "    tiles: [[64, 192, 128], [128, 128, 64]]\n"
  "    measured_tokens: 16384\n"
  "    measured_hidden: 2048\n"
  "    tiles_source: test\n"
  "    source: test\n";

static const FsEffCurve *tiled_curve(FsEfficiency *eff)
{
  const FsEffCurve *c = fs_efficiency_find(eff, FS_EFF_ATTENTION_FWD, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  ck_assert_ptr_nonnull(c);
  ck_assert_uint_eq(c->n_tiles, 2);
  ck_assert_uint_eq(c->measured_tokens, 16384);
  ck_assert_uint_eq(c->measured_hidden, 2048);
  return c;
}

/* Equal blocks (no mask) run in waves: 132 blocks of 128 queries fill 132
 * SMs once, 133 take two waves. */
START_TEST(test_occupancy_equal_blocks_in_waves)
{
  g_autoptr(FsEfficiency) eff = fs_test_eff_load_text(tiled);
  const FsEffCurve *c = tiled_curve(eff);
  ck_assert(fs_attn_occupancy(c, 1, 128 * 132, 4096, 128, FALSE, FALSE, 132) == 1.0);
  ck_assert(fs_attn_occupancy(c, 132, 128, 4096, 128, FALSE, FALSE, 132) == 1.0);
  ck_assert(fabs(fs_attn_occupancy(c, 133, 128, 4096, 128, FALSE, FALSE, 132) - 133.0 / 264) < 1e-12);
  /* Head dim 64 takes the first row (192 queries a block): 2 blocks a head. */
  ck_assert(fabs(fs_attn_occupancy(c, 67, 384, 384, 64, FALSE, FALSE, 132) - 134.0 / 264) < 1e-12);
  /* A head dim above every row takes the last row. */
  ck_assert(fabs(fs_attn_occupancy(c, 133, 128, 4096, 256, FALSE, FALSE, 132) - 133.0 / 264) < 1e-12);
  /* Backward: one block per 128 keys; the queries do not count. */
  ck_assert(fabs(fs_attn_occupancy(c, 133, 4096, 128, 128, FALSE, TRUE, 132) - 133.0 / 264) < 1e-12);
  /* No tiles, no SMs or a zero size: 1. */
  ck_assert(fs_attn_occupancy(c, 133, 128, 4096, 128, FALSE, FALSE, 0) == 1.0);
  ck_assert(fs_attn_occupancy(c, 0, 128, 4096, 128, FALSE, FALSE, 132) == 1.0);
  ck_assert(fs_attn_occupancy(NULL, 133, 128, 4096, 128, FALSE, FALSE, 132) == 1.0);
}
END_TEST

/* Causal blocks: forward block i of 128 queries visits (i + 1) · 2 steps of
 * 64 keys, so one head of 4096 has works 2, 4, …, 64; the time is
 * W/S + w_max − Σw²/(2Σw) (attn-occupancy.h).  Backward block j of 128 keys
 * visits the queries from 128·j on, 64 at a time: 64, 62, …, 2. */
START_TEST(test_occupancy_causal_tail)
{
  g_autoptr(FsEfficiency) eff = fs_test_eff_load_text(tiled);
  const FsEffCurve *c = tiled_curve(eff);
  double sum = 0, sum2 = 0;
  for (int i = 1; i <= 32; i++) {
    sum += 2 * i;
    sum2 += 4.0 * i * i;
  }
  for (guint bh = 16; bh <= 128; bh *= 2) {
    double ideal = bh * sum / 132;
    double want = ideal / (ideal + 64 - sum2 / (2 * sum));
    ck_assert_msg(fabs(fs_attn_occupancy(c, bh, 4096, 4096, 128, TRUE, FALSE, 132) - want) < 1e-12,
                  "forward bh %u", bh);
    ck_assert_msg(fabs(fs_attn_occupancy(c, bh, 4096, 4096, 128, TRUE, TRUE, 132) - want) < 1e-12,
                  "backward bh %u", bh);
  }
  /* More work per SM, a smaller tail: occupancy grows with batch x heads. */
  ck_assert(fs_attn_occupancy(c, 16, 4096, 4096, 128, TRUE, FALSE, 132) <
            fs_attn_occupancy(c, 64, 4096, 4096, 128, TRUE, FALSE, 132));
  /* Fewer blocks than SMs: the longest block is the time. */
  ck_assert(fabs(fs_attn_occupancy(c, 1, 4096, 4096, 128, TRUE, FALSE, 132) - sum / 132 / 64) < 1e-12);
  /* Queries fewer than keys: the diagonal is aligned to the end of the
   * keys, so one block of 128 queries against 4096 keys sees all of them
   * (equal blocks again). */
  ck_assert(fs_attn_occupancy(c, 132, 128, 4096, 128, TRUE, FALSE, 132) == 1.0);
}
END_TEST

/* The factor is 1 at the curve's own setting (batch 16384/seq, heads
 * 2048/d) and the occupancy ratio elsewhere; the kernel time applies it
 * and the explanation prints it. */
START_TEST(test_occupancy_factor_in_kernel_time)
{
  g_autoptr(FsEfficiency) eff = fs_test_eff_load_text(tiled);
  const FsEffCurve *c = tiled_curve(eff);
  ck_assert(fs_attn_occupancy_factor(c, 4 * 16, 4096, 4096, 128, TRUE, FALSE, 132) == 1.0);
  ck_assert(fs_attn_occupancy_factor(c, 1 * 32, 16384, 16384, 64, TRUE, TRUE, 132) == 1.0);
  double f = fs_attn_occupancy_factor(c, 16, 4096, 4096, 128, TRUE, FALSE, 132);
  ck_assert(fabs(f - fs_attn_occupancy(c, 16, 4096, 4096, 128, TRUE, FALSE, 132) /
                 fs_attn_occupancy(c, 64, 4096, 4096, 128, TRUE, FALSE, 132)) < 1e-15);
  ck_assert(f < 0.9);
  FsGpuModel gpu;
  memset(&gpu, 0, sizeof gpu);
  gpu.arch = FS_ARCH_HOPPER;
  gpu.flops[FS_DTYPE_BF16] = 1e15;
  gpu.memory_bandwidth = 3e12;
  gpu.sms = 132;
  FsKernel k = fs_kernel_attention("a", FS_PASS_FORWARD, FS_DTYPE_BF16, 16, 4096, 4096, 128, 1, TRUE, FALSE);
  FsKernelTiming t;
  fs_kernel_time(&k, &gpu, eff, &t);
  ck_assert(t.occupancy == f && fabs(t.efficiency - 0.5 * f) < 1e-15 && t.shape_factor == 1.0);
  g_autofree char *line = fs_kernel_explain(&k, &gpu, eff);
  g_autofree char *want = g_strdup_printf("(seq_len curve 0.500 × occupancy %.3f)", f);
  ck_assert_msg(strstr(line, want) != NULL, "%s", line);
  /* A GPU without an SM count: no factor. */
  gpu.sms = 0;
  fs_kernel_time(&k, &gpu, eff, &t);
  ck_assert(t.occupancy == 1.0 && t.efficiency == 0.5);
}
END_TEST

START_TEST(test_tiles_rejected)
{
  static const char sizes[] = "    measured_tokens: 16384\n    measured_hidden: 2048\n    tiles_source: s\n";
  static const char fwd[] = "  - kind: attention-forward\n    arch: hopper\n    points: [[1, 0.5]]\n";
  static const struct { const char *head, *tiles, *rest, *fragment; } cases[] = {
    {"  - kind: gemm\n    arch: hopper\n    points: [[1, 0.5]]\n", "    tiles: [[64, 128, 128]]\n", sizes,
     "t.yaml:5:12: \"tiles\" applies only to attention curves"},
    {fwd, "    tiles: []\n", sizes, "\"tiles\" is empty"},
    {fwd, "    tiles: [[64, 128]]\n", sizes, "t.yaml:5:13: expected a row [head_dim, block, step]"},
    {fwd, "    tiles: [[64, 128.5, 64]]\n", sizes, "t.yaml:5:18: a tile size must be a whole number"},
    {fwd, "    tiles: [[64, 0, 64]]\n", sizes, "t.yaml:5:18: expected a number from 1"},
    {fwd, "    tiles: [[64, 128, 70000]]\n", sizes, "expected a number from 1 to 65536"},
    {fwd, "    tiles: [[128, 128, 64], [64, 192, 128]]\n", sizes, "t.yaml:5:30: head dims must increase (64 after 128)"},
    {fwd, "    tiles: [[64, 128, 64]]\n", "    measured_hidden: 2048\n    tiles_source: s\n",
     "t.yaml:5:12: \"tiles\" needs \"measured_tokens\" beside it"},
    {fwd, "    tiles: [[64, 128, 64]]\n", "    measured_tokens: 16384\n    tiles_source: s\n",
     "\"tiles\" needs \"measured_hidden\" beside it"},
    {fwd, "    tiles: [[64, 128, 64]]\n", "    measured_tokens: 16384\n    measured_hidden: 2048\n",
     "\"tiles\" needs \"tiles_source\" beside it"},
    {fwd, "    tiles: [[64, 128, 64]]\n", "    measured_tokens: 16384\n    measured_hidden: 2048\n    tiles_source: \"\"\n",
     "t.yaml:8:19: \"tiles_source\" must say where the tiles come from"},
    {fwd, "", "    measured_tokens: 16384\n", "t.yaml:5:22: \"measured_tokens\" applies only to a curve with \"tiles\""},
    {fwd, "", "    tiles_source: s\n", "\"tiles_source\" applies only to a curve with \"tiles\""},
    {fwd, "    tiles: [[64, 128, 64]]\n", "    measured_tokens: 0\n    measured_hidden: 2048\n    tiles_source: s\n",
     "t.yaml:6:22"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *curve = g_strconcat(cases[i].head, cases[i].tiles, cases[i].rest, NULL);
    fs_test_eff_refused(i, curve, cases[i].fragment);
  }
}
END_TEST

/* The tiles survive a later file's load (the staging copy); a replace by
 * fs_efficiency_set (a calibration's points, measured elsewhere) drops
 * them with the old points. */
START_TEST(test_tiles_copied_and_replaced)
{
  g_autoptr(FsEfficiency) eff = fs_test_eff_load_text(tiled);
  fs_test_eff_load_another(eff);
  const FsEffCurve *c = tiled_curve(eff);
  ck_assert(c->tiles[3] == 128 && c->tiles[5] == 64);
  c = fs_test_eff_replace_attention(eff);
  ck_assert_uint_eq(c->n_tiles, 0);
  ck_assert(fs_attn_occupancy_factor(c, 16, 4096, 4096, 128, TRUE, FALSE, 132) == 1.0);
}
END_TEST

/* Every Hopper attention curve carries tiles; on the held-out batch/heads
 * table (nothing fitted on it, nothing fitted for the tiles) the model
 * meets the 10 % bar with them and missed it without (recorded figures,
 * validation/reference/h100_attention_cudnn_framework_probe_batch.csv). */
START_TEST(test_catalog_tiles_on_batch_table)
{
  GError *err = NULL;
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, &err);
  fs_assert_no_error(err);
  guint n = 0;
  for (guint i = 0; i < fs_efficiency_size(eff); i++) {
    const FsEffCurve *c = fs_efficiency_nth(eff, i);
    if ((c->kind == FS_EFF_ATTENTION_FWD || c->kind == FS_EFF_ATTENTION_BWD) && !c->any_arch &&
        c->arch == FS_ARCH_HOPPER) {
      ck_assert_msg(c->n_tiles > 0 && c->measured_tokens == 16384 && c->measured_hidden == 2048,
                    "%s:%d: no tiles", c->file, c->line);
      n++;
    }
  }
  ck_assert_uint_eq(n, 5);
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(NULL, &err);
  fs_assert_no_error(err);
  const FsModel *gpu = fs_catalog_require(cat, "h100-sxm", FS_MODEL_GPU, &err);
  fs_assert_no_error(err);
  ck_assert_uint_eq(gpu->u.gpu.sms, 132);
  double without, with, bias;
  guint rows;
  fs_test_attention_score("h100_attention_cudnn_framework_probe_batch", FALSE, FALSE, &without,
                          &bias, &rows);
  fs_test_attention_score("h100_attention_cudnn_framework_probe_batch", FALSE, TRUE, &with, &bias,
                          &rows);
  ck_assert_msg(fabs(without - 12.51) <= 0.3, "without tiles: MAPE %.2f %% (recorded 12.51 %%)", without);
  ck_assert_msg(fabs(with - 5.96) <= 0.3, "with tiles: MAPE %.2f %% (recorded 5.96 %%)", with);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("attn-occupancy");
  FS_ADD_TEST(s, test_occupancy_equal_blocks_in_waves);
  FS_ADD_TEST(s, test_occupancy_causal_tail);
  FS_ADD_TEST(s, test_occupancy_factor_in_kernel_time);
  FS_ADD_TEST(s, test_tiles_rejected);
  FS_ADD_TEST(s, test_tiles_copied_and_replaced);
  FS_ADD_TEST(s, test_catalog_tiles_on_batch_table);
  return fs_test_run_suite(s);
}
