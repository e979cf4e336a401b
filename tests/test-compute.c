/* test-compute.c — efficiency curves, the kernel time model and the
 * transformer decomposition (src/compute/). */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "catalog/catalog.h"
#include "compute/efficiency.h"
#include "compute/kernel.h"
#include "compute/transformer.h"
#include "testutil.h"

#define REL_EQ(a, b) (fabs((a) - (b)) <= 1e-12 * fabs(b))
#define ck_assert_rel(a, b)                                                              \
  ck_assert_msg(REL_EQ((double)(a), (double)(b)), "%s = %.17g, expected %.17g", #a, \
                (double)(a), (double)(b))

/* A test GPU with round figures (not a real product: the catalog holds
 * those).  Hopper, so that the Hopper curves apply. */
static FsGpuModel test_gpu(void)
{
  FsGpuModel g;
  memset(&g, 0, sizeof g);
  g.arch = FS_ARCH_HOPPER;
  g.flops[FS_DTYPE_BF16] = 1e15;
  g.flops[FS_DTYPE_FP16] = 1e15;
  g.flops[FS_DTYPE_FP32] = 5e13;
  g.flops[FS_DTYPE_TF32] = 5e14;
  g.memory = 80ull << 30;
  g.memory_bandwidth = 3e12;
  g.launch_latency = 2 * FS_US;
  return g;
}

static FsEfficiency *default_curves(void)
{
  GError *err = NULL;
  g_autofree char *dir = fs_test_source_path("models/compute");
  FsEfficiency *eff = fs_efficiency_load_dir(dir, &err);
  fs_assert_no_error(err);
  ck_assert_ptr_nonnull(eff);
  return eff;
}

/* ---- efficiency curves ------------------------------------------------- */

START_TEST(test_efficiency_default_curves_load)
{
  g_autoptr(FsEfficiency) eff = default_curves();
  ck_assert_uint_gt(fs_efficiency_size(eff), 5);
  /* Every kind has a fallback that applies to an architecture with no
   * curves of its own, and every curve has a source. */
  for (guint k = 0; k < FS_EFF_N_KINDS; k++)
    for (int causal = 0; causal < 2; causal++)
      ck_assert_msg(fs_efficiency_find(eff, k, FS_ARCH_PASCAL, FS_DTYPE_FP16, causal) != NULL,
                    "no fallback for %s", fs_eff_kind_name(k));
  for (guint i = 0; i < fs_efficiency_size(eff); i++)
    ck_assert_str_ne(fs_efficiency_nth(eff, i)->source, "");
  /* The Hopper bf16 GEMM curve (with its measured shapes) is picked over the
   * Hopper 16-bit one and the generic one, fp8 over all. */
  const FsEffCurve *c = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  ck_assert(!c->any_arch && !c->any_dtype && c->dtype == FS_DTYPE_BF16 && c->axis == FS_EFF_AXIS_FLOPS);
  ck_assert_uint_gt(c->n_shapes, 0);
  c = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_INT8, FALSE);
  ck_assert(!c->any_arch && c->any_dtype && c->axis == FS_EFF_AXIS_FLOPS && c->n_shapes == 0);
  c = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_FP8, FALSE);
  ck_assert(!c->any_arch && !c->any_dtype && c->dtype == FS_DTYPE_FP8);
  /* A100 GEMMs have their own measured curve (no longer Calculon's 0.95). */
  c = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_AMPERE, FS_DTYPE_BF16, FALSE);
  ck_assert(!c->any_arch && c->axis == FS_EFF_AXIS_FLOPS);
  ck_assert(fs_eff_curve_eval(c, 1e12) < 0.9);
  /* Overlapped communication leaves the compute less than its full rate,
   * DP's NCCL channels taking more SMs than TP's userbuffers. */
  double tp = fs_efficiency_lookup(eff, FS_EFF_OVERLAP_TP, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE, 1e6, NULL);
  double dp = fs_efficiency_lookup(eff, FS_EFF_OVERLAP_DP, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE, 1e6, NULL);
  ck_assert(tp < 1 && dp < tp);
  /* Causal attention curves are separate from non-causal ones. */
  const FsEffCurve *a = fs_efficiency_find(eff, FS_EFF_ATTENTION_FWD, FS_ARCH_HOPPER, FS_DTYPE_BF16, TRUE);
  const FsEffCurve *b = fs_efficiency_find(eff, FS_EFF_ATTENTION_FWD, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  ck_assert(a != b && a->causal == FS_EFF_CAUSAL_YES && b->causal == FS_EFF_CAUSAL_NO);
}
END_TEST

START_TEST(test_efficiency_interpolates_in_log_and_clamps)
{
  g_autoptr(FsEfficiency) eff = fs_efficiency_new();
  GError *err = NULL;
  double x[] = {100, 10000}, y[] = {0.2, 0.6};
  ck_assert(fs_efficiency_set(eff, FS_EFF_GEMM, FALSE, FS_ARCH_AMPERE, TRUE, 0, FS_EFF_CAUSAL_ANY,
                              FS_EFF_AXIS_MIN_DIM, x, y, 2, "test", &err));
  const FsEffCurve *c = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_AMPERE, FS_DTYPE_BF16, FALSE);
  ck_assert_ptr_nonnull(c);
  ck_assert_rel(fs_eff_curve_eval(c, 1000), 0.4);   /* half-way in log */
  ck_assert_rel(fs_eff_curve_eval(c, 10), 0.2);     /* clamped below */
  ck_assert_rel(fs_eff_curve_eval(c, 1e9), 0.6);    /* clamped above */
  ck_assert_rel(fs_eff_curve_eval(c, 100), 0.2);
  /* No curve for another architecture: the plain roofline (1.0). */
  const FsEffCurve *used = (const FsEffCurve *)1;
  ck_assert(fs_efficiency_lookup(eff, FS_EFF_GEMM, FS_ARCH_VOLTA, FS_DTYPE_BF16, FALSE, 512, &used) == 1.0);
  ck_assert_ptr_null(used);
}
END_TEST

START_TEST(test_efficiency_override_replaces_curve)
{
  g_autoptr(FsEfficiency) eff = default_curves();
  guint n = fs_efficiency_size(eff);
  GError *err = NULL;
  double x[] = {1}, y[] = {0.5};
  ck_assert(fs_efficiency_set(eff, FS_EFF_GEMM, FALSE, FS_ARCH_HOPPER, FALSE, FS_DTYPE_BF16,
                              FS_EFF_CAUSAL_ANY, FS_EFF_AXIS_MIN_DIM, x, y, 1, "calibration", &err));
  fs_assert_no_error(err);
  ck_assert_uint_eq(fs_efficiency_size(eff), n); /* replaced, not added */
  ck_assert_uint_eq(fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE)->n_shapes, 0);
  ck_assert(fs_efficiency_lookup(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE, 4096, NULL) == 0.5);
  ck_assert_str_eq(fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE)->source,
                   "calibration");
  /* A calibration file replaces with replace = TRUE, and is refused without. */
  g_autofree char *dir = g_dir_make_tmp("fs-eff-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "calib.yaml", NULL);
  const char *text = "curves:\n"
                     "  - kind: memory\n    arch: hopper\n    points: [[1, 0.7]]\n    source: calib\n";
  ck_assert(g_file_set_contents(path, text, -1, NULL));
  ck_assert(!fs_efficiency_load_file(eff, path, FALSE, &err));
  fs_assert_error(err, FS_EFFICIENCY_ERROR, "already defined at");
  ck_assert(fs_efficiency_load_file(eff, path, TRUE, &err));
  fs_assert_no_error(err);
  ck_assert(fs_efficiency_lookup(eff, FS_EFF_MEMORY, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE, 1e9, NULL) == 0.7);
  /* Even when replacing, one file may not define a key twice. */
  const char *twice = "curves:\n"
                      "  - {kind: memory, arch: hopper, points: [[1, 0.6]], source: a}\n"
                      "  - {kind: memory, arch: hopper, points: [[1, 0.5]], source: b}\n";
  ck_assert(g_file_set_contents(path, twice, -1, NULL));
  ck_assert(!fs_efficiency_load_file(eff, path, TRUE, &err));
  fs_assert_error(err, FS_EFFICIENCY_ERROR, "calib.yaml:3:5: a memory curve");
  ck_assert(fs_efficiency_lookup(eff, FS_EFF_MEMORY, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE, 1e9, NULL) == 0.7);
  ck_assert(fs_efficiency_set(eff, FS_EFF_GEMM, TRUE, 0, TRUE, 0, FS_EFF_CAUSAL_ANY, FS_EFF_AXIS_FLOPS,
                              (double[]){2, 1}, (double[]){0.5, 0.5}, 2, "bad", &err) == FALSE);
  fs_assert_error(err, FS_EFFICIENCY_ERROR, "must increase");
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

/* Each bad curves file and the fragment of its error. */
START_TEST(test_efficiency_rejects_bad_files)
{
  static const struct { const char *text, *fragment; } cases[] = {
    {"curves:\n  - kind: gemm\n    arch: hopper\n    points: [[2, 0.5], [1, 0.6]]\n    source: s\n",
     "bad.yaml:4:24: point 2: x must increase"},
    {"curves:\n  - kind: gemm\n    arch: hopper\n    points: [[1, 1.5]]\n    source: s\n", "bad.yaml:4:18: expected a number from 0 to 1"},
    {"curves:\n  - kind: gem\n    arch: hopper\n    points: [[1, 0.5]]\n    source: s\n",
     "bad.yaml:2:11: unknown curve kind \"gem\""},
    {"curves:\n  - kind: gemm\n    arch: hoper\n    points: [[1, 0.5]]\n    source: s\n",
     "unknown architecture (or \"any\") \"hoper\""},
    {"curves:\n  - kind: gemm\n    arch: hopper\n    points: [[1, 0.5]]\n", "missing key \"source\""},
    {"curves:\n  - kind: gemm\n    arch: hopper\n    causal: true\n    points: [[1, 0.5]]\n    source: s\n",
     "bad.yaml:4:13: \"causal\" applies only to attention curves"},
    {"curves:\n  - kind: gemm\n    arch: hopper\n    points: [1, 0.5]\n    source: s\n",
     "expected a point [x, efficiency]"},
    {"curves:\n  - kind: gemm\n    arch: any\n    points: [[1, 0.5]]\n    source: s\n"
     "  - kind: gemm\n    arch: any\n    points: [[1, 0.5]]\n    source: t\n",
     "bad.yaml:6:5: a gemm curve for this arch, dtype and causal flag is already defined at"},
    {"curves:\n  - kind: gemm\n    arch: any\n    points: []\n    source: s\n", "at least one point"},
    {"curvs: []\n", "unknown key \"curvs\""},
    {"", "empty file"},
  };
  g_autofree char *dir = g_dir_make_tmp("fs-eff-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "bad.yaml", NULL);
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    ck_assert(g_file_set_contents(path, cases[i].text, -1, NULL));
    g_autoptr(FsEfficiency) eff = fs_efficiency_new();
    GError *err = NULL;
    ck_assert_msg(!fs_efficiency_load_file(eff, path, FALSE, &err), "case %u accepted", i);
    ck_assert_msg(strstr(err->message, cases[i].fragment) != NULL, "case %u: \"%s\" lacks \"%s\"", i,
                  err->message, cases[i].fragment);
    ck_assert_uint_eq(fs_efficiency_size(eff), 0);
    g_clear_error(&err);
  }
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

/* ---- kernel time model ------------------------------------------------- */

START_TEST(test_kernel_huge_gemm_is_compute_bound)
{
  g_autoptr(FsEfficiency) eff = default_curves();
  FsGpuModel gpu = test_gpu();
  FsKernel k = fs_kernel_gemm("big", FS_PASS_FORWARD, FS_DTYPE_BF16, 16384, 16384, 16384, 1);
  ck_assert_rel(k.flops, 2.0 * 16384.0 * 16384.0 * 16384.0);
  ck_assert_rel(k.bytes, 3.0 * 16384.0 * 16384.0 * 2);
  FsKernelTiming t;
  FsTime time = fs_kernel_time(&k, &gpu, eff, &t);
  double eff_16k = fs_efficiency_lookup(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE, k.flops, NULL);
  ck_assert(!t.memory_bound);
  /* 16384³ is a measured shape of the bf16 curve: the curve times its shape factor. */
  const FsEffCurve *c = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  double shape = fs_eff_curve_shape_factor(c, 16384, 16384, 16384);
  ck_assert(t.shape_factor == shape && shape != 1.0);
  ck_assert(t.efficiency == eff_16k * shape && t.efficiency > 0.5 && t.efficiency < 1);
  ck_assert_int_eq(t.compute, fs_time_from_s(k.flops / (1e15 * t.efficiency)));
  ck_assert_int_eq(time, t.compute + 2 * FS_US);
  /* Without curves: the plain roofline at peak. */
  ck_assert_int_eq(fs_kernel_time(&k, &gpu, NULL, NULL), fs_time_from_s(k.flops / 1e15) + 2 * FS_US);
  g_autofree char *text = fs_kernel_explain(&k, &gpu, eff);
  ck_assert_msg(strstr(text, "compute-bound") && strstr(text, "big (forward gemm 16384×16384×16384 bf16)"),
                "%s", text);
  g_autofree char *split = g_strdup_printf("(FLOPs curve %.3f × measured shapes %.3f)", eff_16k, shape);
  ck_assert_msg(strstr(text, split) != NULL, "%s lacks %s", text, split);
}
END_TEST

START_TEST(test_kernel_tiny_gemm_is_launch_bound)
{
  g_autoptr(FsEfficiency) eff = default_curves();
  FsGpuModel gpu = test_gpu();
  FsKernel k = fs_kernel_gemm("tiny", FS_PASS_FORWARD, FS_DTYPE_BF16, 16, 16, 16, 1);
  FsKernelTiming t;
  FsTime time = fs_kernel_time(&k, &gpu, eff, &t);
  ck_assert_int_ge(time, 2 * FS_US);
  ck_assert_msg(MAX(t.compute, t.memory) < t.launch, "body %" G_GINT64_FORMAT " ps", MAX(t.compute, t.memory));
}
END_TEST

START_TEST(test_kernel_memory_bound_and_dtype_fallback)
{
  g_autoptr(FsEfficiency) eff = default_curves();
  FsGpuModel gpu = test_gpu();
  /* An elementwise kernel over 1 GB: bandwidth-bound at the Hopper memory curve. */
  FsKernel m = fs_kernel_memory("add", FS_PASS_FORWARD, FS_DTYPE_BF16, 1e9, 1.5e8);
  FsKernelTiming t;
  FsTime time = fs_kernel_time(&m, &gpu, eff, &t);
  double me = fs_efficiency_lookup(eff, FS_EFF_MEMORY, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE, 1e9, NULL);
  ck_assert(t.memory_bound && t.mem_efficiency == me);
  ck_assert_int_eq(time, fs_time_from_s(1e9 / (3e12 * me)) + 2 * FS_US);
  ck_assert_int_eq(t.peak_dtype, FS_DTYPE_FP32);
  /* A skinny GEMM (M large, N = 128) is memory-bound by the roofline. */
  FsKernel skinny = fs_kernel_gemm("skinny", FS_PASS_FORWARD, FS_DTYPE_BF16, 65536, 128, 8192, 1);
  fs_kernel_time(&skinny, &gpu, eff, &t);
  ck_assert(t.memory_bound);
  /* FP8 on a GPU without an FP8 peak runs at the bf16 peak. */
  FsKernel f8 = fs_kernel_gemm("f8", FS_PASS_FORWARD, FS_DTYPE_FP8, 8192, 8192, 8192, 1);
  fs_kernel_time(&f8, &gpu, eff, &t);
  ck_assert_int_eq(t.peak_dtype, FS_DTYPE_BF16);
  ck_assert(t.peak == 1e15);
  /* With an FP8 peak, it uses it and the FP8 curve. */
  gpu.flops[FS_DTYPE_FP8] = 2e15;
  fs_kernel_time(&f8, &gpu, eff, &t);
  ck_assert_int_eq(t.peak_dtype, FS_DTYPE_FP8);
  ck_assert(!t.curve->any_dtype && t.curve->dtype == FS_DTYPE_FP8);
  /* No peak at all: never finishes. */
  FsGpuModel none;
  memset(&none, 0, sizeof none);
  ck_assert_int_eq(fs_kernel_time(&f8, &none, eff, NULL), FS_TIME_MAX);
}
END_TEST

START_TEST(test_kernel_shared_hbm_slows_memory_bound)
{
  /* A communication kernel beside a compute kernel: a memory-bound kernel
   * gets the HBM bandwidth left (max-min: at least half of what it reaches
   * alone), a compute-bound one loses only the SMs. */
  g_autoptr(FsEfficiency) eff = default_curves();
  FsGpuModel gpu = test_gpu();
  FsKernel m = fs_kernel_memory("add", FS_PASS_FORWARD, FS_DTYPE_BF16, 1e9, 1.5e8);
  FsKernelTiming t;
  FsTime alone = fs_kernel_time(&m, &gpu, eff, &t);
  double cap = 3e12 * t.mem_efficiency;
  ck_assert_int_eq(fs_kernel_time_shared(&m, &gpu, eff, 1.0, 0), alone);
  ck_assert_int_eq(fs_kernel_time_shared(&m, &gpu, eff, 1.0, 0.25 * cap),
                   fs_time_from_s(1e9 / (0.75 * cap)) + 2 * FS_US);
  /* Fewer SMs alone do not slow it: its compute side is far below its memory side. */
  ck_assert_int_eq(fs_kernel_time_shared(&m, &gpu, eff, 0.75, 0), alone);
  /* A communication that wants more than half: the kernel keeps half. */
  ck_assert_int_eq(fs_kernel_time_shared(&m, &gpu, eff, 1.0, 0.9 * cap),
                   fs_time_from_s(1e9 / (0.5 * cap)) + 2 * FS_US);
  /* A big GEMM: HBM traffic beside it changes nothing, SMs do. */
  FsKernel g = fs_kernel_gemm("big", FS_PASS_FORWARD, FS_DTYPE_BF16, 16384, 16384, 16384, 1);
  FsTime ga = fs_kernel_time(&g, &gpu, eff, &t);
  ck_assert_int_eq(fs_kernel_time_shared(&g, &gpu, eff, 1.0, 0.5 * cap), ga);
  ck_assert_int_eq(fs_kernel_time_shared(&g, &gpu, eff, 0.75, 0.5 * cap),
                   fs_time_from_s(fs_time_to_s(t.compute) / 0.75) + 2 * FS_US);
}
END_TEST

START_TEST(test_efficiency_comm_hbm)
{
  /* The shipped figures, with their source; a second file may not give
   * them again unless it replaces them. */
  g_autoptr(FsEfficiency) eff = default_curves();
  const FsEffCommHbm *h = fs_efficiency_comm_hbm(eff);
  ck_assert_ptr_nonnull(h);
  ck_assert(h->collective == 2 && h->point_to_point == 3);
  ck_assert(strstr(h->source, "all_reduce.h") != NULL);
  const char *again = "curves: []\ncomm_hbm:\n  collective: 1\n  point_to_point: 1\n  source: s\n";
  GError *err = NULL;
  ck_assert(!fs_efficiency_load_string(eff, again, -1, "again.yaml", FALSE, &err));
  ck_assert_msg(strstr(err->message, "again.yaml:3:3:") && strstr(err->message, "given twice"), "%s",
                err->message);
  g_clear_error(&err);
  ck_assert(fs_efficiency_load_string(eff, again, -1, "again.yaml", TRUE, &err));
  fs_assert_no_error(err);
  ck_assert(fs_efficiency_comm_hbm(eff)->collective == 1);
  /* A missing figure is refused at the mapping. */
  g_autoptr(FsEfficiency) e2 = fs_efficiency_new();
  ck_assert(!fs_efficiency_load_string(e2, "curves: []\ncomm_hbm:\n  collective: 1\n  source: s\n",
                                       -1, "short.yaml", FALSE, &err));
  ck_assert_msg(strstr(err->message, "point_to_point") != NULL, "%s", err->message);
  g_clear_error(&err);
  ck_assert_ptr_null(fs_efficiency_comm_hbm(e2));
}
END_TEST

START_TEST(test_kernel_attention_counts)
{
  /* 4·b·a·s²·d forward, half when causal; backward executes 2.5× and counts 2×. */
  FsKernel f = fs_kernel_attention("a", FS_PASS_FORWARD, FS_DTYPE_BF16, 32, 4096, 4096, 128, 1, FALSE, FALSE);
  ck_assert_rel(f.flops, 4.0 * 32 * 4096.0 * 4096 * 128);
  FsKernel c = fs_kernel_attention("a", FS_PASS_FORWARD, FS_DTYPE_BF16, 32, 4096, 4096, 128, 1, TRUE, FALSE);
  ck_assert_rel(c.flops, f.flops / 2);
  FsKernel b = fs_kernel_attention("a", FS_PASS_BACKWARD, FS_DTYPE_BF16, 32, 4096, 4096, 128, 1, TRUE, TRUE);
  ck_assert_rel(b.flops, 2.5 * c.flops);
  ck_assert_rel(b.model_flops, 2.0 * c.model_flops);
  FsKernel r = fs_kernel_attention("a", FS_PASS_RECOMPUTE, FS_DTYPE_BF16, 32, 4096, 4096, 128, 1, TRUE, FALSE);
  ck_assert(r.model_flops == 0 && r.flops == c.flops);
  /* GQA with 8 query heads per KV head reads a smaller K and V. */
  FsKernel g = fs_kernel_attention("a", FS_PASS_FORWARD, FS_DTYPE_BF16, 32, 4096, 4096, 128, 8, FALSE, FALSE);
  ck_assert(g.bytes < f.bytes && g.flops == f.flops && g.group == 8);
}
END_TEST

/* ---- transformer decomposition ----------------------------------------- */

static void gpt3_175b(FsTransformerConfig *c)
{
  /* Brown et al. 2020, Table 2.1: 96 layers, d_model 12288, 96 heads, 2048 context. */
  fs_transformer_config_init(c);
  c->layers = 96;
  c->hidden = 12288;
  c->ffn_hidden = 4 * 12288;
  c->heads = 96;
  c->vocab = 50257;
  c->seq_len = 2048;
  c->bias = TRUE;
  c->tied_embeddings = TRUE;
  c->dropout = TRUE;
}

static void llama2_7b(FsTransformerConfig *c)
{
  /* Touvron et al. 2023 / the Llama-2-7b model card config. */
  fs_transformer_config_init(c);
  c->layers = 32;
  c->hidden = 4096;
  c->ffn_hidden = 11008;
  c->heads = 32;
  c->kv_heads = 32;
  c->vocab = 32000;
  c->seq_len = 4096;
  c->mlp = FS_MLP_SWIGLU;
  c->norm = FS_NORM_RMSNORM;
  c->position = FS_POSITION_ROPE;
}

/* Model FLOPs of one micro-batch on all t·c ranks of one model replica:
 * every layer forward + backward plus the head. */
static double step_model_flops(const FsTransformerConfig *cfg, const FsTransformerRun *run)
{
  double sum = 0;
  for (guint l = 0; l < cfg->layers; l++)
    for (int p = 0; p < 2; p++) {
      g_autoptr(GArray) k = fs_transformer_layer_kernels(cfg, run, l, p ? FS_PASS_BACKWARD : FS_PASS_FORWARD);
      sum += fs_kernels_model_flops(k);
    }
  g_autoptr(GArray) hf = fs_transformer_head_kernels(cfg, run, FS_PASS_FORWARD);
  g_autoptr(GArray) hb = fs_transformer_head_kernels(cfg, run, FS_PASS_BACKWARD);
  g_autoptr(GArray) ef = fs_transformer_embedding_kernels(cfg, run, FS_PASS_FORWARD);
  sum += fs_kernels_model_flops(hf) + fs_kernels_model_flops(hb) + fs_kernels_model_flops(ef);
  return sum * run->tp * run->cp;
}

START_TEST(test_transformer_gpt3_params)
{
  FsTransformerConfig c;
  gpt3_175b(&c);
  FsTransformerParams p;
  fs_transformer_params(&c, &p);
  double L = 96, h = 12288, V = 50257, s = 2048;
  /* 12·L·h² + 13·L·h (layers with biases and LayerNorms) + V·h + s·h + 2h. */
  ck_assert_rel(p.total, 12 * L * h * h + 13 * L * h + V * h + s * h + 2 * h);
  ck_assert_rel(p.total, 174604259328.0);
  ck_assert_rel(p.matmul, 12 * L * h * h + V * h);
}
END_TEST

START_TEST(test_transformer_megatron_formula)
{
  /* Narayanan et al. 2021: 72·B·s·L·h²·(1 + s/(6h) + V/(12hL)) model FLOPs
   * per step (full score matrix), for B = 1 sequence. */
  FsTransformerConfig c;
  gpt3_175b(&c);
  c.causal = FALSE;
  c.vocab = 50304; /* padded as Megatron does, so that tp = 8 divides it */
  double L = 96, h = 12288, V = 50304, s = 2048;
  double megatron = 72 * s * L * h * h * (1 + s / (6 * h) + V / (12 * h * L));
  FsTransformerRun run;
  fs_transformer_run_init(&run);
  ck_assert_rel(step_model_flops(&c, &run), megatron);
  ck_assert_rel(fs_transformer_flops_per_token(&c, FALSE) * s, megatron);
  /* The same total split over 8 tensor-parallel ranks with sequence
   * parallelism and 2 context-parallel ranks, 2 sequences. */
  run.tp = 8;
  run.cp = 2;
  run.sequence_parallel = TRUE;
  run.micro_batch = 2;
  GError *err = NULL;
  ck_assert(fs_transformer_check(&c, &run, &err));
  ck_assert_rel(step_model_flops(&c, &run), 2 * megatron);
  /* Without SP the norms are replicated but carry no model FLOPs. */
  run.sequence_parallel = FALSE;
  ck_assert_rel(step_model_flops(&c, &run), 2 * megatron);
  /* Causal convention: the attention term halves. */
  c.causal = TRUE;
  run.tp = run.cp = run.micro_batch = 1;
  ck_assert_rel(step_model_flops(&c, &run), megatron - 0.5 * 12 * s * s * L * h);
  ck_assert_rel(fs_transformer_flops_per_token(&c, TRUE) * s, megatron - 0.5 * 12 * s * s * L * h);
}
END_TEST

START_TEST(test_transformer_full_recompute_hardware_flops)
{
  /* Narayanan et al.: with full recomputation the executed FLOPs are
   * 96·B·s·L·h²·(1 + s/(6h) + V/(16hL)) (the logits are not recomputed).
   * Unfused attention makes every FLOP a GEMM, with the full score matrix. */
  FsTransformerConfig c;
  gpt3_175b(&c);
  c.causal = FALSE;
  c.flash_attention = FALSE;
  double L = 96, h = 12288, V = 50257, s = 2048;
  double hfu = 96 * s * L * h * h * (1 + s / (6 * h) + V / (16 * h * L));
  FsTransformerRun run;
  fs_transformer_run_init(&run);
  run.recompute = FS_RECOMPUTE_FULL;
  double sum = 0;
  for (guint l = 0; l < c.layers; l++)
    for (int p = 0; p < 3; p++) {
      FsKernelPass pass = p == 0 ? FS_PASS_FORWARD : p == 1 ? FS_PASS_BACKWARD : FS_PASS_RECOMPUTE;
      g_autoptr(GArray) k = fs_transformer_layer_kernels(&c, &run, l, pass);
      sum += fs_kernels_class_flops(k, FS_KERNEL_GEMM);
    }
  g_autoptr(GArray) hf = fs_transformer_head_kernels(&c, &run, FS_PASS_FORWARD);
  g_autoptr(GArray) hb = fs_transformer_head_kernels(&c, &run, FS_PASS_BACKWARD);
  sum += fs_kernels_class_flops(hf, FS_KERNEL_GEMM) + fs_kernels_class_flops(hb, FS_KERNEL_GEMM);
  ck_assert_rel(sum, hfu);
}
END_TEST

START_TEST(test_transformer_llama2_7b)
{
  FsTransformerConfig c;
  llama2_7b(&c);
  FsTransformerParams p;
  fs_transformer_params(&c, &p);
  ck_assert_rel(p.total, 6738415616.0); /* the published parameter count */
  /* 6·N·T with N the GEMM weights (all parameters but the embedding table
   * and the norms) plus the attention term 12·L·h·s, halved for causal. */
  ck_assert_rel(p.matmul, p.total - p.embedding - 32 * p.norms - p.final_norm);
  double L = 32, h = 4096, s = 4096;
  FsTransformerRun run;
  fs_transformer_run_init(&run);
  ck_assert_rel(step_model_flops(&c, &run), (6 * p.matmul + 0.5 * 12 * L * h * s) * s);
  run.tp = 4;
  run.sequence_parallel = TRUE;
  ck_assert_rel(step_model_flops(&c, &run), (6 * p.matmul + 0.5 * 12 * L * h * s) * s);
}
END_TEST

START_TEST(test_transformer_layer_shapes)
{
  /* Llama-2-70B: 64 query heads, 8 KV heads of 128, FFN 28672, SwiGLU. */
  FsTransformerConfig c;
  llama2_7b(&c);
  c.layers = 80;
  c.hidden = 8192;
  c.ffn_hidden = 28672;
  c.heads = 64;
  c.kv_heads = 8;
  FsTransformerRun run;
  fs_transformer_run_init(&run);
  run.tp = 8;
  run.micro_batch = 1;
  run.sequence_parallel = TRUE;
  GError *err = NULL;
  ck_assert(fs_transformer_check(&c, &run, &err));
  g_autoptr(GArray) f = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  static const char *const order[] = {"input_norm", "qkv", "rotary", "attention", "out_proj",
                                      "attn_residual", "post_attn_norm", "mlp_fc1", "swiglu",
                                      "mlp_fc2", "mlp_residual"};
  ck_assert_uint_eq(f->len, G_N_ELEMENTS(order));
  for (guint i = 0; i < f->len; i++)
    ck_assert_str_eq(g_array_index(f, FsKernel, i).name, order[i]);
  const FsKernel *qkv = &g_array_index(f, FsKernel, 1);
  ck_assert_uint_eq(qkv->m, 4096);
  ck_assert_uint_eq(qkv->n, (64 + 2 * 8) * 128 / 8);
  ck_assert_uint_eq(qkv->k, 8192);
  const FsKernel *att = &g_array_index(f, FsKernel, 3);
  ck_assert(att->cls == FS_KERNEL_ATTENTION && att->batch == 8 && att->group == 8 && att->causal);
  /* SwiGLU's gate and up are one fc1 GEMM of n = 2·ffn/tp (Megatron's
   * gated_linear_unit); the activation reads both halves, writes one. */
  const FsKernel *fc1 = &g_array_index(f, FsKernel, 7);
  ck_assert(fc1->cls == FS_KERNEL_GEMM && fc1->m == 4096 && fc1->k == 8192);
  ck_assert_uint_eq(fc1->n, 2 * 28672 / 8);
  ck_assert_rel(fc1->model_flops, 2.0 * 4096 * (2 * 28672 / 8) * 8192);
  ck_assert_rel(g_array_index(f, FsKernel, 8).bytes, 3.0 * 4096 * (28672 / 8) * 2);
  const FsKernel *fc2 = &g_array_index(f, FsKernel, 9);
  ck_assert(fc2->m == 4096 && fc2->n == 8192 && fc2->k == 28672 / 8);
  /* Sequence parallel: the norm runs on s/t tokens. */
  ck_assert_rel(g_array_index(f, FsKernel, 0).bytes, 2.0 * 4096 / 8 * 8192 * 2);
  /* Backward: a dgrad and a wgrad per GEMM with the forward FLOPs each. */
  g_autoptr(GArray) b = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_BACKWARD);
  ck_assert_rel(fs_kernels_class_model_flops(b, FS_KERNEL_GEMM), 2 * fs_kernels_class_model_flops(f, FS_KERNEL_GEMM));
  ck_assert_str_eq(g_array_index(b, FsKernel, 0).name, "mlp_residual.bwd");
  ck_assert_str_eq(g_array_index(b, FsKernel, 1).name, "mlp_fc2.dgrad");
  ck_assert_str_eq(g_array_index(b, FsKernel, 2).name, "mlp_fc2.wgrad");
  /* fc1's dgrad m × k × n and wgrad k × n × m of the fused n. */
  guint fc1_bwd = 0;
  for (guint i = 0; i < b->len; i++) {
    const FsKernel *kn = &g_array_index(b, FsKernel, i);
    if (strcmp(kn->name, "mlp_fc1.dgrad") == 0) {
      ck_assert(kn->m == 4096 && kn->n == 8192 && kn->k == 2 * 28672 / 8);
      fc1_bwd++;
    } else if (strcmp(kn->name, "mlp_fc1.wgrad") == 0) {
      ck_assert(kn->m == 8192 && kn->n == 2 * 28672 / 8 && kn->k == 4096);
      fc1_bwd++;
    }
  }
  ck_assert_uint_eq(fc1_bwd, 2);
  /* Recomputation: none, selective with flash (nothing more), full. */
  g_autoptr(GArray) r0 = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_RECOMPUTE);
  ck_assert_uint_eq(r0->len, 0);
  run.recompute = FS_RECOMPUTE_SELECTIVE;
  g_autoptr(GArray) r1 = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_RECOMPUTE);
  ck_assert_uint_eq(r1->len, 0);
  c.flash_attention = FALSE;
  g_autoptr(GArray) r2 = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_RECOMPUTE);
  ck_assert_uint_eq(r2->len, 3); /* scores, softmax, values (no dropout) */
  ck_assert(fs_kernels_model_flops(r2) == 0 && fs_kernels_flops(r2) > 0);
  run.recompute = FS_RECOMPUTE_FULL;
  c.flash_attention = TRUE;
  g_autoptr(GArray) r3 = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_RECOMPUTE);
  ck_assert_uint_eq(r3->len, f->len);
  ck_assert_rel(fs_kernels_flops(r3), fs_kernels_flops(f));
  ck_assert(fs_kernels_model_flops(r3) == 0);
}
END_TEST

/* TorchTitan's per-op selective checkpointing (selective_op) re-runs
 * matmuls 2, 4 and 6 of q, k, v, o, w1, w3, w2 (k, o, w3) and the
 * elementwise ops, never the attention; GELU MLPs (q, k, v, o, fc1, fc2)
 * re-run fc2 instead of w3. */
START_TEST(test_transformer_selective_op_recompute)
{
  FsTransformerConfig c;
  llama2_7b(&c);
  c.kv_heads = 8;
  FsTransformerRun run;
  fs_transformer_run_init(&run);
  run.micro_batch = 2;
  run.recompute = FS_RECOMPUTE_SELECTIVE_OP;
  g_autoptr(GArray) r = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_RECOMPUTE);
  double T = 2.0 * 4096, h = 4096, F = 11008, kd = 8 * 128;
  ck_assert_rel(fs_kernels_class_flops(r, FS_KERNEL_GEMM), 2 * T * h * (kd + h + F));
  ck_assert(fs_kernels_class_flops(r, FS_KERNEL_ATTENTION) == 0);
  ck_assert(fs_kernels_model_flops(r) == 0);
  guint mem = 0;
  gboolean swiglu = FALSE;
  for (guint i = 0; i < r->len; i++) {
    const FsKernel *k = &g_array_index(r, FsKernel, i);
    ck_assert(k->pass == FS_PASS_RECOMPUTE);
    mem += k->cls == FS_KERNEL_MEMORY;
    swiglu |= strcmp(k->name, "swiglu") == 0;
  }
  ck_assert_uint_eq(mem, 6); /* two norms, rotary, SwiGLU, two residual adds */
  ck_assert(swiglu);
  /* Less than full recomputation, more than none. */
  g_autoptr(GArray) f = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  ck_assert(fs_kernels_flops(r) < 0.5 * fs_kernels_flops(f));
  /* GELU: q, k, v, o, fc1, fc2 -> k, o, fc2. */
  c.mlp = FS_MLP_GELU;
  g_autoptr(GArray) g = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_RECOMPUTE);
  ck_assert_rel(fs_kernels_class_flops(g, FS_KERNEL_GEMM), 2 * T * h * (kd + h + F));
  gboolean fc2 = FALSE;
  for (guint i = 0; i < g->len; i++)
    fc2 |= strcmp(g_array_index(g, FsKernel, i).name, "mlp_fc2") == 0;
  ck_assert(fc2);
  /* Its name reads back. */
  FsRecompute back;
  ck_assert(fs_recompute_from_name("selective_op", &back) && back == FS_RECOMPUTE_SELECTIVE_OP);
}
END_TEST

START_TEST(test_transformer_moe)
{
  /* Mixtral 8x7B: 32 layers, h 4096, 8 experts of FFN 14336, top-2, GQA 8. */
  FsTransformerConfig c;
  llama2_7b(&c);
  c.ffn_hidden = 14336;
  c.kv_heads = 8;
  c.experts = 8;
  c.top_k = 2;
  FsTransformerParams p;
  fs_transformer_params(&c, &p);
  double h = 4096, F = 14336, attn = h * (32 + 16) * 128 + h * h, expert = 3 * h * F;
  ck_assert_rel(p.total, 32 * (attn + 8 * expert + 8 * h + 2 * h) + 2 * 32000 * h + h);
  ck_assert_rel(p.active, 32 * (attn + 2 * expert + 8 * h + 2 * h) + 2 * 32000 * h + h);
  ck_assert(p.total > 46.7e9 && p.total < 46.8e9 && p.active > 12.8e9 && p.active < 13.0e9);
  FsTransformerRun run;
  fs_transformer_run_init(&run);
  run.ep = 8;
  GError *err = NULL;
  ck_assert(fs_transformer_check(&c, &run, &err));
  /* Model FLOPs count top-k experts; a capacity factor adds executed FLOPs only. */
  double s = 4096;
  ck_assert_rel(step_model_flops(&c, &run), (6 * p.matmul + 0.5 * 12 * 32 * h * s) * s);
  g_autoptr(GArray) f1 = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  c.capacity_factor = 1.25;
  g_autoptr(GArray) f2 = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  ck_assert_rel(fs_kernels_model_flops(f2), fs_kernels_model_flops(f1));
  ck_assert(fs_kernels_flops(f2) > fs_kernels_flops(f1));
  /* One local expert per rank with ep = 8: a grouped GEMM of batch 1. */
  for (guint i = 0; i < f1->len; i++) {
    const FsKernel *k = &g_array_index(f1, FsKernel, i);
    if (strcmp(k->name, "expert_gate") == 0)
      ck_assert(k->batch == 1 && k->m == 4096 * 2 && k->k == 4096);
  }
}
END_TEST

/* The number of kernels of k whose name is name. */
static guint count_named(const GArray *k, const char *name)
{
  guint n = 0;
  for (guint i = 0; i < k->len; i++)
    n += strcmp(g_array_index(k, FsKernel, i).name, name) == 0;
  return n;
}

static double named_bytes(const GArray *k, const char *name)
{
  double b = 0;
  for (guint i = 0; i < k->len; i++)
    if (strcmp(g_array_index(k, FsKernel, i).name, name) == 0)
      b += g_array_index(k, FsKernel, i).bytes;
  return b;
}

START_TEST(test_transformer_fp8_casts)
{
  /* FP8 GEMMs (Transformer Engine): each GEMM input is cast once (SwiGLU's
   * fused fc1: one cast of its input, one of its 2·ffn-wide output
   * gradient), each output gradient once; current scaling adds an amax
   * pass per cast; 16-bit GEMMs have none. */
  FsTransformerConfig c;
  llama2_7b(&c);
  FsTransformerRun run;
  fs_transformer_run_init(&run);
  g_autoptr(GArray) bf = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  ck_assert_uint_eq(count_named(bf, "qkv.fp8_cast"), 0);
  run.dtype = FS_DTYPE_FP8;
  g_autoptr(GArray) f = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  g_autoptr(GArray) b = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_BACKWARD);
  ck_assert_uint_eq(count_named(b, "mlp_fc1.grad_fp8_cast"), 1);
  ck_assert_uint_eq(count_named(f, "qkv.fp8_amax"), 0);
  /* Delayed scaling: the norm of TE's LayerNormLinear (QKV, dense fc1)
   * writes FP8 itself (1 byte instead of 2), then its transpose (1 byte
   * read, 1 written); no cast. */
  ck_assert_uint_eq(count_named(f, "mlp_fc1.fp8_cast") + count_named(f, "qkv.fp8_cast"), 0);
  ck_assert_rel(named_bytes(f, "qkv.fp8_transpose"), 4096.0 * 4096 * 2);
  ck_assert_rel(named_bytes(f, "input_norm"), 4096.0 * 4096 * 3);
  ck_assert_rel(named_bytes(bf, "input_norm"), 4096.0 * 4096 * 4);
  /* Other GEMM inputs, T·h elements: 2 bytes read, 1 + 1 written. */
  ck_assert_rel(named_bytes(f, "out_proj.fp8_cast"), 4096.0 * 4096 * 4);
  ck_assert_rel(named_bytes(b, "mlp_fc1.grad_fp8_cast"), 4096.0 * 2 * 11008 * 4);
  ck_assert_rel(named_bytes(b, "out_proj.grad_fp8_cast"), 4096.0 * 4096 * 4);
  /* The casts carry no model FLOPs: MFU is unchanged. */
  ck_assert_rel(fs_kernels_model_flops(f), fs_kernels_model_flops(bf));
  run.fp8_recipe = FS_FP8_TENSORWISE;
  g_autoptr(GArray) ft = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  g_autoptr(GArray) bt = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_BACKWARD);
  /* The norm-fed GEMMs' inputs (TE's LayerNormLinear: QKV, dense fc1)
   * take their amax from the norm kernel: no amax pass of their own. */
  ck_assert_uint_eq(count_named(ft, "qkv.fp8_amax"), 0);
  ck_assert_uint_eq(count_named(ft, "mlp_fc1.fp8_amax"), 0);
  ck_assert_uint_eq(count_named(ft, "out_proj.fp8_amax"), 1);
  ck_assert_uint_eq(count_named(ft, "mlp_fc2.fp8_amax"), 1);
  ck_assert_rel(named_bytes(ft, "out_proj.fp8_amax"), 4096.0 * 4096 * 2);
  /* Output gradients: every GEMM's has its amax pass. */
  ck_assert_uint_eq(count_named(bt, "qkv.grad_fp8_amax"), 1);
  ck_assert_uint_eq(count_named(bt, "mlp_fc1.grad_fp8_amax"), 1);
  ck_assert_rel(named_bytes(bt, "mlp_fc1.grad_fp8_amax"), 4096.0 * 2 * 11008 * 2);
  ck_assert_double_gt(fs_kernels_bytes(ft), fs_kernels_bytes(f));
  /* Current scaling: a 16-bit norm output cast to both copies ... */
  ck_assert_rel(named_bytes(ft, "qkv.fp8_cast"), 4096.0 * 4096 * 4);
  ck_assert_uint_eq(count_named(ft, "qkv.fp8_transpose"), 0);
  /* ... or, with sequence parallelism, the local shard cast rowwise (2
   * bytes read, 1 written) and the gathered copy transposed. */
  run.tp = 4;
  run.sequence_parallel = TRUE;
  g_autoptr(GArray) fs = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  ck_assert_rel(named_bytes(fs, "qkv.fp8_cast"), 4096.0 / 4 * 4096 * 3);
  ck_assert_rel(named_bytes(fs, "qkv.fp8_transpose"), 4096.0 * 4096 * 2);
  run.tp = 1;
  run.sequence_parallel = FALSE;
  /* The per-step weight cast: an amax pass (2 bytes a weight) first. */
  g_autoptr(GArray) wd = fs_fp8_weight_cast_kernels(1e6, FS_FP8_DELAYED);
  g_autoptr(GArray) wt = fs_fp8_weight_cast_kernels(1e6, FS_FP8_TENSORWISE);
  ck_assert_uint_eq(wd->len, 1);
  ck_assert_uint_eq(count_named(wt, "fp8_weight_amax"), 1);
  ck_assert_rel(fs_kernels_bytes(wt), fs_kernels_bytes(wd) + 2e6);
  /* Megatron's output layer (ColumnParallelLinear) and MoE router are not
   * Transformer Engine modules: 16-bit GEMMs without casts in an FP8 run. */
  g_autoptr(GArray) hf = fs_transformer_head_kernels(&c, &run, FS_PASS_FORWARD);
  g_autoptr(GArray) hb = fs_transformer_head_kernels(&c, &run, FS_PASS_BACKWARD);
  ck_assert_uint_eq(count_named(hf, "logits.fp8_cast") + count_named(hb, "logits.grad_fp8_cast"), 0);
  for (guint i = 0; i < hf->len; i++)
    ck_assert_int_ne(g_array_index(hf, FsKernel, i).dtype, FS_DTYPE_FP8);
  c.experts = 8;
  c.top_k = 2;
  g_autoptr(GArray) mf = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  ck_assert_uint_eq(count_named(mf, "router.fp8_cast") + count_named(mf, "router.fp8_amax"), 0);
  ck_assert_uint_eq(count_named(mf, "expert_fc1.fp8_cast"), 1);
  for (guint i = 0; i < mf->len; i++)
    if (strcmp(g_array_index(mf, FsKernel, i).name, "router") == 0)
      ck_assert_int_eq(g_array_index(mf, FsKernel, i).dtype, FS_DTYPE_BF16);
}
END_TEST

START_TEST(test_transformer_cp_ring_attention)
{
  /* Context parallelism over c ranks: c attention steps (the causal
   * diagonal, then c − 1 half blocks without a mask), c − 1 softmax
   * corrections, and the attention FLOPs of the unsplit layer. */
  FsTransformerConfig c;
  llama2_7b(&c);
  FsTransformerRun run;
  fs_transformer_run_init(&run);
  g_autoptr(GArray) one = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  run.cp = 4;
  g_autoptr(GArray) f = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  g_autoptr(GArray) b = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_BACKWARD);
  ck_assert_uint_eq(count_named(f, "attention"), 1);
  ck_assert_uint_eq(count_named(f, "attention.cp_step"), 3);
  ck_assert_uint_eq(count_named(f, "attention.cp_correction"), 3);
  ck_assert_uint_eq(count_named(b, "attention.cp_step.bwd"), 3);
  ck_assert_rel(fs_kernels_class_model_flops(f, FS_KERNEL_ATTENTION) * 4,
                fs_kernels_class_model_flops(one, FS_KERNEL_ATTENTION));
  for (guint i = 0; i < f->len; i++) {
    const FsKernel *k = &g_array_index(f, FsKernel, i);
    if (strcmp(k->name, "attention.cp_step") == 0)
      ck_assert(!k->causal && k->m == 1024 && k->n == 512);
  }
}
END_TEST

START_TEST(test_transformer_check_errors)
{
  FsTransformerConfig c;
  llama2_7b(&c);
  FsTransformerRun run;
  fs_transformer_run_init(&run);
  GError *err = NULL;
  run.tp = 3;
  ck_assert(!fs_transformer_check(&c, &run, &err));
  fs_assert_error(err, FS_TRANSFORMER_ERROR, "heads (32) is not divisible by tp (3)");
  run.tp = 1;
  run.cp = 3;
  ck_assert(!fs_transformer_check(&c, &run, &err));
  fs_assert_error(err, FS_TRANSFORMER_ERROR, "seq_length (4096) is not divisible by cp (3)");
  run.cp = 1;
  run.ep = 2;
  ck_assert(!fs_transformer_check(&c, &run, &err));
  fs_assert_error(err, FS_TRANSFORMER_ERROR, "needs a mixture-of-experts model");
  run.ep = 1;
  c.kv_heads = 5;
  ck_assert(!fs_transformer_check(&c, &run, &err));
  fs_assert_error(err, FS_TRANSFORMER_ERROR, "heads (32) is not divisible by kv_heads (5)");
  c.kv_heads = 8;
  c.experts = 8;
  c.top_k = 9;
  ck_assert(!fs_transformer_check(&c, &run, &err));
  fs_assert_error(err, FS_TRANSFORMER_ERROR, "top_k (9) must be between 1 and experts (8)");
}
END_TEST

/* The catalog's H100 with the shipped curves: one Llama-2-7B layer
 * (b = 1, s = 4096) forward was measured at 3.1 ms and backward at 6.9 ms in
 * eager PyTorch (models/compute/README.md); the model must stay near. */
START_TEST(test_kernel_catalog_h100_layer)
{
  GError *err = NULL;
  g_autofree char *models = fs_test_source_path("models");
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(models, &err);
  fs_assert_no_error(err);
  const FsModel *h100 = fs_catalog_require(cat, "h100-sxm", FS_MODEL_GPU, &err);
  fs_assert_no_error(err);
  g_autoptr(FsEfficiency) eff = default_curves();
  FsTransformerConfig c;
  llama2_7b(&c);
  FsTransformerRun run;
  fs_transformer_run_init(&run);
  g_autoptr(GArray) f = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  g_autoptr(GArray) b = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_BACKWARD);
  double tf = fs_time_to_us(fs_kernel_list_time((FsKernel *)f->data, f->len, &h100->u.gpu, eff));
  double tb = fs_time_to_us(fs_kernel_list_time((FsKernel *)b->data, b->len, &h100->u.gpu, eff));
  ck_assert_msg(tf > 3105 * 0.75 && tf < 3105 * 1.1, "forward %.0f us", tf);
  ck_assert_msg(tb > 6868 * 0.75 && tb < 6868 * 1.1, "backward %.0f us", tb);
  /* The same layer in fp8 GEMMs is faster, on an A100 (no fp8) slower. */
  run.dtype = FS_DTYPE_FP8;
  g_autoptr(GArray) f8 = fs_transformer_layer_kernels(&c, &run, 0, FS_PASS_FORWARD);
  ck_assert(fs_time_to_us(fs_kernel_list_time((FsKernel *)f8->data, f8->len, &h100->u.gpu, eff)) < tf);
  const FsModel *a100 = fs_catalog_require(cat, "a100-sxm4-80gb", FS_MODEL_GPU, &err);
  fs_assert_no_error(err);
  ck_assert(fs_time_to_us(fs_kernel_list_time((FsKernel *)f8->data, f8->len, &a100->u.gpu, eff)) > tf);
}
END_TEST

START_TEST(test_optimizer_kernel_bytes)
{
  g_autoptr(GArray) k = fs_optimizer_kernels(1e9, FS_OPTIMIZER_ADAM, TRUE, 2);
  ck_assert_uint_eq(k->len, 1);
  /* Read master, m, v (12) + bf16 grad (2); write master, m, v (12) + bf16 copy (2). */
  ck_assert_rel(g_array_index(k, FsKernel, 0).bytes, 28e9);
  ck_assert(g_array_index(k, FsKernel, 0).pass == FS_PASS_OPTIMIZER);
  g_autoptr(GArray) s = fs_optimizer_kernels(1e9, FS_OPTIMIZER_SGD, FALSE, 4);
  ck_assert_rel(g_array_index(s, FsKernel, 0).bytes, 20e9);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("compute");
  FS_ADD_TEST(s, test_efficiency_default_curves_load);
  FS_ADD_TEST(s, test_efficiency_interpolates_in_log_and_clamps);
  FS_ADD_TEST(s, test_efficiency_override_replaces_curve);
  FS_ADD_TEST(s, test_efficiency_rejects_bad_files);
  FS_ADD_TEST(s, test_kernel_huge_gemm_is_compute_bound);
  FS_ADD_TEST(s, test_kernel_tiny_gemm_is_launch_bound);
  FS_ADD_TEST(s, test_kernel_memory_bound_and_dtype_fallback);
  FS_ADD_TEST(s, test_kernel_attention_counts);
  FS_ADD_TEST(s, test_kernel_shared_hbm_slows_memory_bound);
  FS_ADD_TEST(s, test_efficiency_comm_hbm);
  FS_ADD_TEST(s, test_transformer_gpt3_params);
  FS_ADD_TEST(s, test_transformer_megatron_formula);
  FS_ADD_TEST(s, test_transformer_full_recompute_hardware_flops);
  FS_ADD_TEST(s, test_transformer_llama2_7b);
  FS_ADD_TEST(s, test_transformer_layer_shapes);
  FS_ADD_TEST(s, test_transformer_selective_op_recompute);
  FS_ADD_TEST(s, test_transformer_moe);
  FS_ADD_TEST(s, test_transformer_check_errors);
  FS_ADD_TEST(s, test_transformer_fp8_casts);
  FS_ADD_TEST(s, test_transformer_cp_ring_attention);
  FS_ADD_TEST(s, test_kernel_catalog_h100_layer);
  FS_ADD_TEST(s, test_optimizer_kernel_bytes);
  return fs_test_run_suite(s);
}
