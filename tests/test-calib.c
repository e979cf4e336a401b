/* test-calib.c — the calibration file: reading the committed H100 file,
 * the overrides it makes (computed as validation/README.md says), the
 * corpus of good and bad files with positions, and the readers for the
 * compute and collective layers. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "calib/calibration.h"
#include "calib/fit.h"
#include "calib/nccl-apply.h"
#include "util/json-pos.h"
#include "testutil.h"

#define H100_FILE "validation/results/h100-2026-11-23.json"

static FsCalibration *load_h100(void)
{
  g_autofree char *path = fs_test_source_path(H100_FILE);
  GError *error = NULL;
  FsCalibration *cal = fs_calibration_load(path, &error);
  fs_assert_no_error(error);
  ck_assert_ptr_nonnull(cal);
  return cal;
}

static FsCatalog *load_catalog(void)
{
  GError *error = NULL;
  FsCatalog *cat = fs_catalog_load_default(NULL, &error);
  fs_assert_no_error(error);
  return cat;
}

static void assert_close(double got, double want, double rel)
{
  ck_assert_msg(fabs(got - want) <= rel * fabs(want), "got %.9g, want %.9g", got, want);
}

START_TEST(test_calib_reads_h100_file)
{
  g_autoptr(FsCalibration) cal = load_h100();
  ck_assert_int_eq(cal->schema_version, 1);
  ck_assert_str_eq(cal->device_name, "NVIDIA H100 80GB HBM3");
  ck_assert_str_eq(cal->date, "2026-11-23T09:38:04Z");
  ck_assert_uint_eq(cal->sm_count, 132);
  ck_assert_uint_eq(cal->memory_bytes, 85017493504u);
  ck_assert_str_eq(cal->pcie_gen_max, "5");
  ck_assert_str_eq(cal->pcie_width_max, "16");
  assert_close(cal->h2d_peak, 54.543e9, 1e-12);
  assert_close(cal->d2h_peak, 55.0291e9, 1e-12);
  assert_close(cal->bidir_peak, 97.4649e9, 1e-12);
  assert_close(cal->h2d_latency_us, 4.576, 1e-12);
  assert_close(cal->membw_triad, 2885.74e9, 1e-12);
  ck_assert_int_eq(cal->compute.launch_latency, 4155870);
  ck_assert_int_eq(cal->compute.graph_launch_latency, 965408);
  ck_assert(cal->nccl[FS_CALIB_NCCL_ALL_REDUCE].present);
  ck_assert_uint_eq(cal->nccl[FS_CALIB_NCCL_ALL_REDUCE].ranks, 1);
  assert_close(cal->nccl[FS_CALIB_NCCL_SENDRECV].latency_floor_us, 6.2431, 1e-12);
  /* 15 shapes per datatype, sorted by volume. */
  for (FsDtype d = FS_DTYPE_FP32; d <= FS_DTYPE_FP8; d++) {
    if (d == FS_DTYPE_TF32 || d == FS_DTYPE_FP32 || d == FS_DTYPE_BF16 || d == FS_DTYPE_FP16 ||
        d == FS_DTYPE_FP8) {
      ck_assert_uint_eq(cal->compute.n_gemm[d], 15);
      for (guint i = 1; i < cal->compute.n_gemm[d]; i++) {
        const FsCalibGemmPoint *a = &cal->compute.gemm[d][i - 1], *b = &cal->compute.gemm[d][i];
        ck_assert((double)a->m * a->n * a->k <= (double)b->m * b->n * b->k);
      }
    }
  }
  ck_assert_uint_eq(cal->compute.n_gemm[FS_DTYPE_INT8], 0);
  ck_assert_uint_eq(cal->warnings->len, 0);
}
END_TEST

/* Every override, recomputed here from the file's figures by the README's
 * rules and compared with what apply set in the catalog. */
START_TEST(test_calib_overrides_as_documented)
{
  g_autoptr(FsCalibration) cal = load_h100();
  g_autoptr(FsCatalog) cat = load_catalog();
  const FsModel *gpu = fs_catalog_get(cat, "h100-sxm");
  const FsModel *link = fs_catalog_get(cat, "pcie-gen5-x16");
  double raw = link->u.link.raw_bandwidth;
  assert_close(raw, 32e9 * 16 * 128.0 / 130.0 / 8, 1e-12);
  GError *error = NULL;
  ck_assert(fs_calibration_apply(cal, cat, &error));
  fs_assert_no_error(error);
  ck_assert_str_eq(cal->gpu_model, "h100-sxm");
  ck_assert_str_eq(cal->host_link, "pcie-gen5-x16");
  /* Host link: min(h2d, d2h) / raw. */
  double eff = 54.543e9 / raw;
  assert_close(link->u.link.efficiency, eff, 1e-12);
  assert_close(link->u.link.bandwidth, 54.543e9, 1e-12);
  ck_assert_uint_eq(link->u.link.max_payload, 0);
  assert_close(cal->host_duplex, 97.4649 / (2 * 54.543), 1e-12);
  /* Copy latency: mean of the 4 B medians. */
  ck_assert_int_eq(gpu->u.gpu.copy_latency, 4256000);
  /* Memory: max(copy, triad, d2d) / 3350 GB/s; streaming: triad's. */
  assert_close(gpu->u.gpu.memory_efficiency, 2990.99 / 3350, 1e-12);
  assert_close(cal->compute.stream_efficiency, 2885.74 / 3350, 1e-12);
  assert_close(gpu->u.gpu.memory_bandwidth, 3350e9, 1e-15); /* the peak stays */
  /* Launch: async_us replaces the value. */
  ck_assert_int_eq(gpu->u.gpu.launch_latency, 4155870);
  /* GEMM: flops / (flops[dtype] × (time − the launch floor, async_us));
   * bf16 8192³ took 1420.06 us (774.273 TFLOP/s), the floor 4.15587 us. */
  gboolean seen = FALSE;
  for (guint i = 0; i < cal->compute.n_gemm[FS_DTYPE_BF16]; i++) {
    const FsCalibGemmPoint *p = &cal->compute.gemm[FS_DTYPE_BF16][i];
    assert_close(p->efficiency,
                 p->flops / (gpu->u.gpu.flops[FS_DTYPE_BF16] * (p->flops / p->rate - 4.15587e-6)),
                 1e-12);
    if (strcmp(p->shape, "square_8192") == 0) {
      assert_close(p->efficiency, 1099510000000.0 / (989.4e12 * (1420.06 - 4.15587) * 1e-6), 1e-5);
      seen = TRUE;
    }
  }
  ck_assert(seen);
  /* Provenance on the changed models, none on the others. */
  ck_assert_ptr_nonnull(strstr(link->calibration, H100_FILE));
  ck_assert_ptr_nonnull(strstr(gpu->calibration, "launch_latency"));
  ck_assert_ptr_null(fs_catalog_get(cat, "pcie-gen4-x16")->calibration);
  ck_assert_ptr_null(fs_catalog_get(cat, "h200-sxm")->calibration);
  /* Changes are listed; the duplex factor is derived but not applied. */
  gboolean duplex = FALSE, base = FALSE;
  for (guint i = 0; i < cal->changes->len; i++) {
    const FsCalibChange *c = g_ptr_array_index(cal->changes, i);
    if (strcmp(c->field, "duplex") == 0)
      duplex = !c->applied;
    if (strcmp(c->field, "base_latency.all_reduce") == 0)
      base = c->applied && strstr(c->after, "5.561") != NULL;
  }
  ck_assert(duplex && base);
}
END_TEST

/* The GEMM points become the compute model's curves for the GPU's arch. */
START_TEST(test_calib_efficiency_curves)
{
  g_autoptr(FsCalibration) cal = load_h100();
  g_autoptr(FsCatalog) cat = load_catalog();
  GError *error = NULL;
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, &error);
  g_autoptr(FsEfficiency) ref = fs_efficiency_load_default(NULL, &error);
  fs_assert_no_error(error);
  ck_assert(fs_calibration_apply(cal, cat, &error));
  ck_assert(fs_calibration_apply_efficiency(cal, cat, eff, &error));
  fs_assert_no_error(error);
  const FsEffCurve *c = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  const FsEffCurve *old = fs_efficiency_find(ref, FS_EFF_GEMM, FS_ARCH_HOPPER, FS_DTYPE_BF16, FALSE);
  ck_assert_ptr_nonnull(c);
  ck_assert_ptr_nonnull(strstr(c->source, "h100-2026-11-23.json"));
  ck_assert(c->axis == FS_EFF_AXIS_FLOPS);
  /* The squares are the curve's points, every record a measured shape:
   * each record's efficiency is reproduced, the decode step (same FLOPs as
   * the 1024³ square) included. */
  ck_assert_uint_eq(c->n_shapes, cal->compute.n_gemm[FS_DTYPE_BF16]);
  double e1024 = 0;
  for (guint i = 0; i < cal->compute.n_gemm[FS_DTYPE_BF16]; i++) {
    const FsCalibGemmPoint *p = &cal->compute.gemm[FS_DTYPE_BF16][i];
    if (p->m == p->n && p->n == p->k)
      assert_close(fs_eff_curve_eval(c, p->flops), p->efficiency, 1e-9);
    if (strcmp(p->shape, "square_1024") == 0)
      e1024 = p->efficiency;
    double got = fs_eff_curve_eval(c, p->flops) * fs_eff_curve_shape_factor(c, p->m, p->n, p->k);
    assert_close(got, p->efficiency, 1e-9);
  }
  /* Below the smallest square the catalog's ramp continues, scaled to meet it. */
  ck_assert(e1024 > 0 && c->x[0] == old->x[0] && c->x[0] < 2.0 * 1024 * 1024 * 1024);
  assert_close(fs_eff_curve_eval(c, c->x[0]),
               old->y[0] * e1024 / fs_eff_curve_eval(old, 2.0 * 1024 * 1024 * 1024), 1e-9);
  /* Another architecture keeps its curves. */
  const FsEffCurve *a = fs_efficiency_find(eff, FS_EFF_GEMM, FS_ARCH_AMPERE, FS_DTYPE_BF16, FALSE);
  ck_assert(a == NULL || strstr(a->source, "h100-2026-11-23.json") == NULL);
}
END_TEST

START_TEST(test_calib_nccl_step_latency)
{
  FsCalibNccl n = {.present = TRUE, .ranks = 8, .latency_floor_us = 20};
  assert_close(fs_calib_nccl_step_latency(&n, FS_CALIB_NCCL_ALL_REDUCE, 6), 14.0 / 14, 1e-12);
  assert_close(fs_calib_nccl_step_latency(&n, FS_CALIB_NCCL_ALL_GATHER, 6), 14.0 / 7, 1e-12);
  n.ranks = 1;
  ck_assert(fs_calib_nccl_step_latency(&n, FS_CALIB_NCCL_ALL_REDUCE, 6) == 0);
}
END_TEST

/* The NCCL hook: the H100 file's one-rank floor moves every non-zero base
 * latency by floor − Ring/LL; a fitted file scales the hardware latencies
 * of its family's class by hw_latency_scale, or else by step / Ring-LL. */
START_TEST(test_calib_apply_nccl)
{
  GError *error = NULL;
  g_autoptr(FsNcclParams) ref = fs_nccl_params_load_default(&error);
  g_autoptr(FsNcclParams) p = fs_nccl_params_load_default(&error);
  fs_assert_no_error(error);
  ck_assert_uint_eq(fs_calibration_apply_nccl(NULL, NULL, p, NULL), 0);
  g_autoptr(FsCalibration) cal = load_h100();
  g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
  ck_assert_uint_eq(fs_calibration_apply_nccl(cal, NULL, p, notes), 1);
  ck_assert_uint_eq(notes->len, 1);
  double floor = cal->nccl[FS_CALIB_NCCL_ALL_REDUCE].latency_floor_us;
  assert_close(p->base_lat[FS_NCCL_ALGO_RING][FS_PROTO_LL], floor, 1e-12);
  double d = floor - ref->base_lat[FS_NCCL_ALGO_RING][FS_PROTO_LL];
  assert_close(p->base_lat[FS_NCCL_ALGO_TREE][FS_PROTO_LL128], 14.0 + d, 1e-12);
  ck_assert(p->base_lat[FS_NCCL_ALGO_NVLS][FS_PROTO_SIMPLE] == 0); /* zero stays zero */
  ck_assert(p->hw_lat[FS_NCCL_HW_NVLINK][FS_NCCL_ALGO_RING][FS_PROTO_LL] ==
            ref->hw_lat[FS_NCCL_HW_NVLINK][FS_NCCL_ALGO_RING][FS_PROTO_LL]);

  g_autofree char *dir = g_dir_make_tmp("fs-calib-XXXXXX", &error);
  fs_assert_no_error(error);
  g_autofree char *f1 = g_build_filename(dir, "scale.json", NULL);
  g_autofree char *f2 = g_build_filename(dir, "step.json", NULL);
  ck_assert(g_file_set_contents(f1,
      "{\"schema_version\": 1, \"mode\": \"fitted\", \"fitted\": {\"links\": {\"nvlink\": "
      "{\"efficiency\": 0.8, \"step_latency_us\": 3.0, \"hw_latency_scale\": 2.5, "
      "\"models\": [\"nvlink4\"]}}}}", -1, NULL));
  ck_assert(g_file_set_contents(f2,
      "{\"schema_version\": 1, \"mode\": \"fitted\", \"fitted\": {\"links\": {\"infiniband\": "
      "{\"efficiency\": 0.9, \"step_latency_us\": 5.4, \"models\": [\"ib-ndr\"]}}}}", -1, NULL));
  g_autoptr(FsCalibration) c1 = fs_calibration_load(f1, &error);
  fs_assert_no_error(error);
  g_autoptr(FsCalibration) c2 = fs_calibration_load(f2, &error);
  fs_assert_no_error(error);
  assert_close(c1->link_fits[0].hw_latency_scale, 2.5, 1e-12);
  ck_assert(c2->link_fits[0].hw_latency_scale == 0);
  g_autoptr(FsNcclParams) q = fs_nccl_params_load_default(&error);
  ck_assert_uint_eq(fs_calibration_apply_nccl(c1, NULL, q, NULL), 1);
  ck_assert_uint_eq(fs_calibration_apply_nccl(c2, NULL, q, NULL), 1);
  for (int a = 0; a < FS_NCCL_ALGO_N; a++)
    for (int r = 0; r < FS_PROTO_N; r++) {
      assert_close(q->hw_lat[FS_NCCL_HW_NVLINK][a][r] + 1e-30, ref->hw_lat[FS_NCCL_HW_NVLINK][a][r] * 2.5 + 1e-30, 1e-12);
      /* NET Ring/LL is 2.7 us: step 5.4 us doubles the class. */
      assert_close(q->hw_lat[FS_NCCL_HW_NET][a][r] + 1e-30, ref->hw_lat[FS_NCCL_HW_NET][a][r] * 2.0 + 1e-30, 1e-12);
      ck_assert(q->hw_lat[FS_NCCL_HW_PCI][a][r] == ref->hw_lat[FS_NCCL_HW_PCI][a][r]);
      ck_assert(q->base_lat[a][r] == ref->base_lat[a][r]);
    }
  /* Figures of one machine: the H100 floor and an nvlink4 fit leave an A100
   * system alone (listed), and apply to an H100 one. */
  g_autoptr(FsCatalog) cat = load_catalog();
  ck_assert(fs_calibration_apply(cal, cat, &error));
  fs_assert_no_error(error);
  const FsModel *a100 = fs_catalog_get(cat, "a100-sxm4-40gb"), *h100 = fs_catalog_get(cat, "h100-sxm");
  ck_assert(a100 != NULL && h100 != NULL);
  g_autoptr(FsNcclParams) r = fs_nccl_params_load_default(&error);
  g_ptr_array_set_size(notes, 0);
  ck_assert_uint_eq(fs_calibration_apply_nccl(cal, a100, r, notes), 0);
  ck_assert_uint_eq(fs_calibration_apply_nccl(c1, a100, r, notes), 0);
  ck_assert_uint_eq(notes->len, 2);
  ck_assert_ptr_nonnull(strstr(g_ptr_array_index(notes, 0), "measured on h100-sxm"));
  ck_assert(r->base_lat[FS_NCCL_ALGO_RING][FS_PROTO_LL] == ref->base_lat[FS_NCCL_ALGO_RING][FS_PROTO_LL]);
  ck_assert_uint_eq(fs_calibration_apply_nccl(cal, h100, r, NULL), 1);
  ck_assert_uint_eq(fs_calibration_apply_nccl(c1, h100, r, NULL), 1);
  g_unlink(f1);
  g_unlink(f2);
  g_rmdir(dir);
}
END_TEST

/* nvidia-smi says Gen4 but the catalog's H100 SXM has Gen5: the host link
 * is left alone, with a warning; everything else still applies. */
START_TEST(test_calib_pcie_mismatch_warns)
{
  g_autofree char *src = fs_test_data_path("calibration/y_minimal.json");
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(src, &text, NULL, NULL));
  g_autoptr(GString) s = g_string_new(text);
  g_string_replace(s, "\"nvidia_smi.pcie.link.gen.max\": \"5\"",
                   "\"nvidia_smi.pcie.link.gen.max\": \"4\"", 1);
  g_autofree char *dir = g_dir_make_tmp("fs-calib-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "gen4.json", NULL);
  ck_assert(g_file_set_contents(path, s->str, -1, NULL));
  GError *error = NULL;
  g_autoptr(FsCalibration) cal = fs_calibration_load(path, &error);
  fs_assert_no_error(error);
  g_autoptr(FsCatalog) cat = load_catalog();
  double before = fs_catalog_get(cat, "pcie-gen5-x16")->u.link.efficiency;
  ck_assert(fs_calibration_apply(cal, cat, &error));
  ck_assert(fs_catalog_get(cat, "pcie-gen5-x16")->u.link.efficiency == before);
  ck_assert_ptr_null(cal->host_link);
  ck_assert_uint_eq(cal->warnings->len, 1);
  ck_assert_ptr_nonnull(strstr(g_ptr_array_index(cal->warnings, 0), "PCIe Gen4 x16"));
  ck_assert_int_eq(fs_catalog_get(cat, "h100-sxm")->u.gpu.launch_latency, 2500000);
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

/* A device the catalog does not have is an error naming it; the catalog
 * is left unchanged. */
START_TEST(test_calib_unknown_device)
{
  g_autoptr(FsCalibration) cal = load_h100();
  cal->sm_count = 7;
  g_autoptr(FsCatalog) cat = load_catalog();
  GError *error = NULL;
  ck_assert(!fs_calibration_apply(cal, cat, &error));
  fs_assert_error(error, FS_CALIB_ERROR, "device \"NVIDIA H100 80GB HBM3\" (7 SMs");
  ck_assert_ptr_null(fs_catalog_get(cat, "h100-sxm")->calibration);
}
END_TEST

START_TEST(test_calib_corpus)
{
  g_autofree char *dir = fs_test_data_path("calibration");
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  g_autoptr(FsCatalog) cat = load_catalog();
  guint ny = 0, nn = 0;
  for (const char *name; (name = g_dir_read_name(d)) != NULL;) {
    if (!g_str_has_suffix(name, ".json"))
      continue;
    g_autofree char *path = g_build_filename(dir, name, NULL);
    GError *error = NULL;
    g_autoptr(FsCalibration) cal = fs_calibration_load(path, &error);
    if (cal != NULL)
      fs_calibration_apply(cal, cat, &error);
    if (g_str_has_prefix(name, "y_")) {
      ck_assert_msg(error == NULL, "%s: %s", name, error ? error->message : "");
      ck_assert_str_eq(cal->gpu_model, "h100-sxm");
      ny++;
    } else if (g_str_has_prefix(name, "n_")) {
      ck_assert_msg(error != NULL, "%s was accepted", name);
      ck_assert_msg(error->domain == FS_CALIB_ERROR || error->domain == FS_JSON_ERROR,
                    "%s: wrong domain", name);
      ck_assert_msg(g_str_has_prefix(error->message, path), "%s: no file prefix: %s", name,
                    error->message);
      g_autofree char *errpath = g_strdup(path);
      strcpy(errpath + strlen(errpath) - 4, "err");
      g_autofree char *want = NULL;
      ck_assert_msg(g_file_get_contents(errpath, &want, NULL, NULL), "%s: no .err", name);
      g_strchomp(want);
      ck_assert_msg(strstr(error->message, want) != NULL, "%s: \"%s\" lacks \"%s\"", name,
                    error->message, want);
      g_clear_error(&error);
      nn++;
    } else {
      ck_abort_msg("%s: corpus files start with y_ or n_", name);
    }
  }
  ck_assert_uint_ge(ny, 3);
  ck_assert_uint_ge(nn, 15);
}
END_TEST

/* Paths of values that are absent fall back to their parent's position. */
START_TEST(test_json_positions)
{
  const char *text = "{\n  \"a\": {\"b\": [1,\n    {\"c d\": true}]},\n  \"e\": \"x\"\n}\n";
  GError *error = NULL;
  g_autoptr(FsJsonDoc) doc = fs_json_doc_parse(text, strlen(text), "t.json", &error);
  fs_assert_no_error(error);
  int line, col;
  fs_json_doc_position(doc, "$.a.b[1][\"c d\"]", &line, &col);
  ck_assert_int_eq(line, 3);
  ck_assert_int_eq(col, 13);
  fs_json_doc_position(doc, "$.a.b[0]", &line, &col);
  ck_assert_int_eq(line, 2);
  ck_assert_int_eq(col, 15);
  fs_json_doc_position(doc, "$.a.missing", &line, &col);
  ck_assert_int_eq(line, 2);
  ck_assert_int_eq(col, 8);
  fs_json_doc_position(doc, "$.e", &line, &col);
  ck_assert_int_eq(line, 4);
  ck_assert_int_eq(col, 8);
  g_autofree char *p = fs_json_path_member("$", "c d");
  ck_assert_str_eq(p, "$[\"c d\"]");
}
END_TEST


/* ---- fitting ----------------------------------------------------------- */

#define NSWEEP 28 /* 8 B .. 1 GiB, ×2 */

static void sweep(uint64_t *sizes)
{
  for (guint i = 0; i < NSWEEP; i++)
    sizes[i] = (uint64_t)8 << i;
}

static double ab(double alpha_us, double beta, uint64_t s) { return alpha_us + (double)s / beta * 1e6; }

START_TEST(test_fit_alpha_beta_exact_and_robust)
{
  uint64_t sz[NSWEEP];
  double t[NSWEEP];
  sweep(sz);
  for (guint i = 0; i < NSWEEP; i++)
    t[i] = ab(10, 100e9, sz[i]);
  FsAlphaBeta f;
  GError *error = NULL;
  ck_assert(fs_fit_alpha_beta(sz, t, NSWEEP, &f, &error));
  assert_close(f.alpha_us, 10, 1e-6);
  assert_close(f.beta, 100e9, 1e-6);
  ck_assert(f.rms_rel < 1e-9);
  /* One size five times too slow (a host hiccup) barely moves the fit. */
  t[4] *= 5;
  ck_assert(fs_fit_alpha_beta(sz, t, NSWEEP, &f, &error));
  assert_close(f.alpha_us, 10, 0.01);
  assert_close(f.beta, 100e9, 0.01);
  ck_assert(f.max_rel > 0.7);
  /* Latency only: β infinite, α the level. */
  for (guint i = 0; i < 5; i++)
    t[i] = 7;
  ck_assert(fs_fit_alpha_beta(sz, t, 5, &f, &error));
  assert_close(f.alpha_us, 7, 1e-9);
  ck_assert(isinf(f.beta));
  ck_assert(!fs_fit_alpha_beta(sz, t, 1, &f, &error));
  fs_assert_error(error, FS_FIT_ERROR, "at least 2");
}
END_TEST

START_TEST(test_fit_regimes_find_protocol_switch)
{
  uint64_t sz[NSWEEP];
  double t[NSWEEP];
  sweep(sz);
  /* LL-like up to 64 KiB (5 us, 10 GB/s), Simple-like above (30 us, 200 GB/s). */
  for (guint i = 0; i < NSWEEP; i++)
    t[i] = sz[i] <= 65536 ? ab(5, 10e9, sz[i]) : ab(30, 200e9, sz[i]);
  FsAlphaBeta r[FS_FIT_MAX_REGIMES];
  guint nr = 0;
  GError *error = NULL;
  ck_assert(fs_fit_regimes(sz, t, NSWEEP, 3, r, &nr, &error));
  ck_assert_uint_eq(nr, 2);
  ck_assert_uint_eq(sz[r[0].last], 65536);
  assert_close(r[0].alpha_us, 5, 1e-6);
  assert_close(r[1].beta, 200e9, 1e-6);
  assert_close(fs_fit_regimes_eval(r, nr, sz, 1 << 20), ab(30, 200e9, 1 << 20), 1e-6);
  /* One line's data stays one regime. */
  for (guint i = 0; i < NSWEEP; i++)
    t[i] = ab(20, 150e9, sz[i]) * (1 + 0.01 * ((i % 3) - 1.0));
  ck_assert(fs_fit_regimes(sz, t, NSWEEP, 3, r, &nr, &error));
  ck_assert_uint_eq(nr, 1);
  /* Sizes must increase. */
  sz[5] = sz[4];
  ck_assert(!fs_fit_regimes(sz, t, NSWEEP, 3, r, &nr, &error));
  fs_assert_error(error, FS_FIT_ERROR, "sizes must increase");
}
END_TEST

/* A predictor with two parameters, α (µs) and β (GB/s), and a floor that
 * is not a parameter: the fit must find α and β from far away. */
static gboolean predict_ab(void *ctx, const double *p, const uint64_t *sizes, guint n,
                           double *out, GError **error)
{
  (void)error;
  guint *calls = ctx;
  (*calls)++;
  for (guint i = 0; i < n; i++)
    out[i] = 2 + ab(p[0], p[1] * 1e9, sizes[i]);
  return TRUE;
}

START_TEST(test_fit_params_recovers_model)
{
  uint64_t sz[NSWEEP];
  double t[NSWEEP];
  sweep(sz);
  for (guint i = 0; i < NSWEEP; i++)
    t[i] = 2 + ab(8, 240e9, sz[i]);
  FsFitParam p[] = {{"alpha_us", 1, 0, 100}, {"beta_GBps", 50, 1, 1000}};
  FsFitResult res;
  guint calls = 0;
  GError *error = NULL;
  ck_assert(fs_fit_params(predict_ab, &calls, p, 2, sz, t, NSWEEP, 0, &res, &error));
  fs_assert_no_error(error);
  assert_close(p[0].value, 8, 1e-4);
  assert_close(p[1].value, 240, 1e-4);
  ck_assert(res.rms_rel < 1e-5);
  ck_assert_uint_eq(res.evaluations, calls);
  /* Bounds hold: with β capped at 100 GB/s the fit stops at the cap. */
  FsFitParam q[] = {{"alpha_us", 1, 0, 100}, {"beta_GBps", 50, 1, 100}};
  ck_assert(fs_fit_params(predict_ab, &calls, q, 2, sz, t, NSWEEP, 0, &res, &error));
  ck_assert(q[1].value <= 100);
  assert_close(q[1].value, 100, 1e-6);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("calib");
  FS_ADD_TEST(s, test_calib_reads_h100_file);
  FS_ADD_TEST(s, test_calib_apply_nccl);
  FS_ADD_TEST(s, test_calib_overrides_as_documented);
  FS_ADD_TEST(s, test_calib_nccl_step_latency);
  FS_ADD_TEST(s, test_calib_efficiency_curves);
  FS_ADD_TEST(s, test_calib_pcie_mismatch_warns);
  FS_ADD_TEST(s, test_calib_unknown_device);
  FS_ADD_TEST(s, test_calib_corpus);
  FS_ADD_TEST(s, test_json_positions);
  FS_ADD_TEST(s, test_fit_alpha_beta_exact_and_robust);
  FS_ADD_TEST(s, test_fit_regimes_find_protocol_switch);
  FS_ADD_TEST(s, test_fit_params_recovers_model);
  return fs_test_run_suite(s);
}
