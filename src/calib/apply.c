/* apply.c — matching a calibration to a catalog GPU model and applying its
 * overrides (calibration.h; rules in validation/README.md).
 *
 * Every override is recorded as an FsCalibChange, in the order of the
 * README's table: host link efficiency, duplex factor, copy latency,
 * memory efficiency, GEMM points, launch latency, NCCL base latencies.
 * A derived figure that cannot be applied (no catalog field, a host link
 * that nvidia-smi contradicts, a fraction above 1) is recorded with
 * applied = FALSE and a warning says why.
 */
#include <math.h>
#include <string.h>

#include "calib/calibration.h"
#include "util/strutil.h"
#include "util/units.h"

/* ---- matching ------------------------------------------------------------ */

/* Lower-case alphanumeric tokens of s (caller frees with g_strfreev). */
static char **tokens(const char *s, const char *seps)
{
  g_autofree char *low = g_ascii_strdown(s, -1);
  for (char *p = low; *p; p++)
    if (seps == NULL ? !g_ascii_isalnum(*p) : strchr(seps, *p) != NULL)
      *p = ' ';
  return fs_split_words(low, " ");
}

/* How many '-'-separated parts of the model name appear as words of the
 * device's product name ("h100-sxm" vs "NVIDIA H100 80GB HBM3" → 1). */
static guint name_score(const char *model, char **dev_tokens)
{
  g_auto(GStrv) parts = tokens(model, "-");
  guint score = 0;
  for (guint i = 0; parts[i]; i++)
    if (g_strv_contains((const char *const *)dev_tokens, parts[i]))
      score++;
  return score;
}

/* Picks the catalog GPU model that the calibrated device is: same SM count, memory within 5 %,
 * and among those the best name_score against the device name. Returns the model (owned by
 * cat), or NULL with FS_CALIB_ERROR_NO_MATCH set when no model fits or several tie. */
static const FsModel *match_gpu(const FsCalibration *cal, const FsCatalog *cat, GError **error)
{
  g_auto(GStrv) dev = tokens(cal->device_name, NULL);
  const FsModel *best = NULL;
  guint best_score = 0, n_best = 0, n_cand = 0;
  GString *cands = g_string_new(NULL);
  for (guint i = 0; i < fs_catalog_size(cat); i++) {
    const FsModel *m = fs_catalog_nth(cat, i);
    if (m->kind != FS_MODEL_GPU || m->u.gpu.sms != cal->sm_count)
      continue;
    double ratio = (double)cal->memory_bytes / (double)m->u.gpu.memory;
    if (ratio < 0.95 || ratio > 1.05)
      continue;
    n_cand++;
    g_string_append_printf(cands, "%s%s", cands->len ? ", " : "", m->name);
    guint s = name_score(m->name, dev);
    if (best == NULL || s > best_score) {
      best = m;
      best_score = s;
      n_best = 1;
    } else if (s == best_score) {
      n_best++;
    }
  }
  g_autofree char *mem = fs_format_size(cal->memory_bytes);
  if (n_cand == 0) {
    g_set_error(error, FS_CALIB_ERROR, FS_CALIB_ERROR_NO_MATCH,
                "%s: device \"%s\" (%u SMs, %s) matches no GPU model of the catalog (same SM "
                "count, memory within 5 %%); 'fabricsim models --kind gpu' lists them",
                cal->file, cal->device_name, cal->sm_count, mem);
    best = NULL;
  } else if (n_best > 1) {
    g_set_error(error, FS_CALIB_ERROR, FS_CALIB_ERROR_NO_MATCH,
                "%s: device \"%s\" (%u SMs, %s) matches several GPU models equally (%s); "
                "its name does not tell them apart",
                cal->file, cal->device_name, cal->sm_count, mem, cands->str);
    best = NULL;
  }
  g_string_free(cands, TRUE);
  return best;
}

/* ---- recording ------------------------------------------------------------ */

static void add_change(FsCalibration *cal, const char *model, const char *field, char *before,
                       char *after, char *rule, gboolean applied)
{
  FsCalibChange *c = g_new0(FsCalibChange, 1);
  c->model = g_strdup(model);
  c->field = g_strdup(field);
  c->before = before != NULL ? before : g_strdup("-");
  c->after = after;
  c->rule = rule;
  c->applied = applied;
  g_ptr_array_add(cal->changes, c);
}

static void warn(FsCalibration *cal, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void warn(FsCalibration *cal, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_ptr_array_add(cal->warnings, g_strdup_printf("%s: %s", cal->file, msg));
}

static char *fmt_num(const char *fmt, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, fmt, v));
}

static char *fmt_eff(double eff, double bw)
{
  g_autofree char *e = fmt_num("%.4f", eff);
  g_autofree char *b = fs_format_bandwidth(bw);
  return g_strdup_printf("%s (%s)", e, b);
}

static char *gbps(double v) { return fmt_num("%.2f", v / 1e9); }

/* ---- the rules ------------------------------------------------------------- */

/* Sets the efficiency of the GPU's host (PCIe) link in cat from the slower of the measured
 * host-to-device and device-to-host peaks, and records the duplex factor when a bidirectional
 * peak was measured; each step is logged in cal's changes. Does nothing when neither peak was
 * measured. Leaves the link alone, with a warning, when nvidia-smi reports another PCIe
 * generation or width than the catalog, or when the measure exceeds the raw bandwidth. Returns
 * FALSE only when the catalog refuses the new efficiency, with error set. */
static gboolean apply_host_link(FsCalibration *cal, FsCatalog *cat, const FsModel *gpu,
                                GError **error)
{
  if (cal->h2d_peak <= 0 && cal->d2h_peak <= 0)
    return TRUE;
  const FsModel *link = gpu->u.gpu.pcie;
  double lo = cal->h2d_peak <= 0   ? cal->d2h_peak
              : cal->d2h_peak <= 0 ? cal->h2d_peak
                                   : MIN(cal->h2d_peak, cal->d2h_peak);
  double raw = link->u.link.raw_bandwidth;
  double eff = lo / raw;
  g_autofree char *h = gbps(cal->h2d_peak), *d = gbps(cal->d2h_peak), *r = gbps(raw);
  char *rule = g_strdup_printf("min(h2d %s, d2h %s GB/s) / %s GB/s raw", h, d, r);
  if (cal->pcie_gen_max != NULL && cal->pcie_width_max != NULL) {
    g_autofree char *seen = g_strdup_printf("pcie-gen%s-x%s", cal->pcie_gen_max,
                                            cal->pcie_width_max);
    if (strcmp(seen, link->name) != 0) {
      warn(cal, "nvidia-smi reports PCIe Gen%s x%s but %s's host link is %s; the host link "
                "is not overridden",
           cal->pcie_gen_max, cal->pcie_width_max, gpu->name, link->name);
      add_change(cal, link->name, "efficiency", fmt_eff(link->u.link.efficiency,
                 link->u.link.bandwidth), fmt_num("%.4f", eff), rule, FALSE);
      return TRUE;
    }
  }
  if (eff > 1) {
    warn(cal, "measured host copies (%s GB/s) exceed %s's raw bandwidth; the host link is not "
              "overridden",
         h, link->name);
    add_change(cal, link->name, "efficiency",
               fmt_eff(link->u.link.efficiency, link->u.link.bandwidth), fmt_num("%.4f", eff),
               rule, FALSE);
    return TRUE;
  }
  char *before = fmt_eff(link->u.link.efficiency, link->u.link.bandwidth);
  if (!fs_catalog_set_link_efficiency(cat, link->name, eff, cal->provenance, error)) {
    g_free(before);
    g_free(rule);
    return FALSE;
  }
  cal->host_link = g_strdup(link->name);
  cal->host_link_efficiency = eff;
  add_change(cal, link->name, "efficiency", before, fmt_eff(eff, link->u.link.bandwidth), rule,
             TRUE);
  if (cal->bidir_peak > 0) {
    cal->host_duplex = cal->bidir_peak / (2 * lo);
    g_autofree char *b = gbps(cal->bidir_peak), *l = gbps(lo);
    add_change(cal, link->name, "duplex", NULL, fmt_num("%.4f", cal->host_duplex),
               g_strdup_printf("bidir %s / (2 × %s GB/s); no catalog field: the flow model "
                               "charges each direction on its own",
                               b, l),
               FALSE);
  }
  return TRUE;
}

static gboolean apply_copy_latency(FsCalibration *cal, FsCatalog *cat, const FsModel *gpu,
                                   GError **error)
{
  double h = cal->h2d_peak > 0 ? cal->h2d_latency_us : 0;
  double d = cal->d2h_peak > 0 ? cal->d2h_latency_us : 0;
  if (h <= 0 && d <= 0)
    return TRUE;
  double us = h > 0 && d > 0 ? (h + d) / 2 : MAX(h, d);
  cal->copy_latency = (FsTime)llround(us * 1e6);
  char *before = fs_format_time(gpu->u.gpu.copy_latency);
  g_autofree char *hs = fmt_num("%.3f", h), *ds = fmt_num("%.3f", d);
  char *rule = g_strdup_printf("mean of the 4 B copy medians (h2d %s, d2h %s us)", hs, ds);
  if (!fs_catalog_set_gpu_copy_latency(cat, gpu->name, cal->copy_latency, cal->provenance,
                                       error)) {
    g_free(before);
    g_free(rule);
    return FALSE;
  }
  add_change(cal, gpu->name, "copy_latency", before, fs_format_time(cal->copy_latency), rule,
             TRUE);
  return TRUE;
}

static gboolean apply_memory(FsCalibration *cal, FsCatalog *cat, const FsModel *gpu,
                             GError **error)
{
  double best = MAX(cal->membw_copy, MAX(cal->membw_triad, cal->d2d_memcpy));
  if (best <= 0)
    return TRUE;
  double peak = gpu->u.gpu.memory_bandwidth;
  double eff = best / peak;
  cal->compute.memory_efficiency = eff;
  cal->compute.stream_efficiency = cal->membw_triad / peak;
  g_autofree char *c = gbps(cal->membw_copy), *t = gbps(cal->membw_triad),
                  *d = gbps(cal->d2d_memcpy), *p = gbps(peak);
  char *rule = g_strdup_printf("max(copy %s, triad %s, d2d %s GB/s) / %s GB/s", c, t, d, p);
  char *before = fmt_eff(gpu->u.gpu.memory_efficiency, peak * gpu->u.gpu.memory_efficiency);
  if (eff > 1) {
    warn(cal, "measured memory bandwidth exceeds %s's memory_bandwidth; not overridden",
         gpu->name);
    add_change(cal, gpu->name, "memory_efficiency", before, fmt_num("%.4f", eff), rule, FALSE);
    cal->compute.memory_efficiency = 0;
    cal->compute.stream_efficiency = 0;
    return TRUE;
  }
  if (!fs_catalog_set_gpu_memory_efficiency(cat, gpu->name, eff, cal->provenance, error)) {
    g_free(before);
    g_free(rule);
    return FALSE;
  }
  add_change(cal, gpu->name, "memory_efficiency", before, fmt_eff(eff, best), rule, TRUE);
  if (cal->membw_triad > 0)
    add_change(cal, "compute", "stream_efficiency", NULL,
               fmt_num("%.4f", cal->compute.stream_efficiency),
               g_strdup_printf("triad %s GB/s / %s GB/s", t, p), TRUE);
  return TRUE;
}

/* Sets each GEMM record's efficiency against gpu's peak for its dtype,
 * the launch floor taken out of its time (records no longer than the floor
 * and dtypes without a peak are marked unused, with a warning), and lists
 * the range per dtype as a change. */
static void apply_gemm(FsCalibration *cal, const FsModel *gpu)
{
  for (int d = 0; d < FS_DTYPE_N; d++) {
    guint n = cal->compute.n_gemm[d];
    if (n == 0)
      continue;
    double peak = gpu->u.gpu.flops[d];
    g_autofree char *field = g_strdup_printf("gemm.%s", fs_dtype_name((FsDtype)d));
    if (peak <= 0) {
      warn(cal, "%s has no %s peak; its %u GEMM records are not used", gpu->name,
           fs_dtype_name((FsDtype)d), n);
      for (guint i = 0; i < n; i++)
        cal->compute.gemm[d][i].efficiency = 0;
      continue;
    }
    /* The probe's time holds one launch of the call, which the kernel
     * model adds itself (launch_latency, from the same file's async_us):
     * the efficiency is that of the time less it, as for the catalog's
     * curves and shapes (models/compute/README.md). */
    double floor_s = fs_time_to_s(cal->compute.launch_latency);
    double lo = INFINITY, hi = 0;
    guint used = 0;
    for (guint i = 0; i < n; i++) {
      FsCalibGemmPoint *pt = &cal->compute.gemm[d][i];
      double t = pt->flops / pt->rate - floor_s;
      if (!(t > 0)) {
        warn(cal, "GEMM %s %s took no longer than the launch floor (%.4g us); not used",
             fs_dtype_name((FsDtype)d), pt->shape, floor_s * 1e6);
        pt->efficiency = 0;
        continue;
      }
      pt->efficiency = pt->flops / (peak * t);
      lo = MIN(lo, pt->efficiency);
      hi = MAX(hi, pt->efficiency);
      used++;
      if (pt->efficiency > 1)
        warn(cal, "GEMM %s %s reached %.3g of %s's peak (above 1)", fs_dtype_name((FsDtype)d),
             pt->shape, pt->efficiency, gpu->name);
    }
    if (used == 0)
      continue;
    g_autofree char *l = fmt_num("%.3f", lo), *h = fmt_num("%.3f", hi),
                    *p = fmt_num("%.6g", peak / 1e12), *f = fmt_num("%.4g", floor_s * 1e6);
    add_change(cal, "compute", field, NULL,
               g_strdup_printf("%s to %s over %u shapes", l, h, used),
               g_strdup_printf("2·m·n·k / (%s TFLOP/s peak × (time − %s us launch)); squares "
                               "make the FLOPs curve, every shape its measured-shape table",
                               p, f),
               TRUE);
  }
}

static gboolean apply_launch(FsCalibration *cal, FsCatalog *cat, const FsModel *gpu,
                             GError **error)
{
  if (cal->compute.launch_latency <= 0)
    return TRUE;
  char *before = fs_format_time(gpu->u.gpu.launch_latency);
  if (!fs_catalog_set_gpu_launch_latency(cat, gpu->name, cal->compute.launch_latency,
                                         cal->provenance, error)) {
    g_free(before);
    return FALSE;
  }
  add_change(cal, gpu->name, "launch_latency", before,
             fs_format_time(cal->compute.launch_latency),
             g_strdup("summary.launch.async_us (back-to-back launches on one stream)"), TRUE);
  if (cal->compute.graph_launch_latency > 0)
    add_change(cal, "compute", "graph_launch_latency", NULL,
               fs_format_time(cal->compute.graph_launch_latency),
               g_strdup("summary.launch.graph_us (per node of a CUDA graph)"), TRUE);
  if (cal->compute.sync_launch_latency > 0)
    add_change(cal, "compute", "sync_launch_latency", NULL,
               fs_format_time(cal->compute.sync_launch_latency),
               g_strdup("summary.launch.sync_us (a kernel the host waits for)"), TRUE);
  return TRUE;
}

static void apply_nccl(FsCalibration *cal)
{
  for (int op = 0; op < FS_CALIB_NCCL_N; op++) {
    const FsCalibNccl *n = &cal->nccl[op];
    if (!n->present)
      continue;
    const char *name = fs_calib_nccl_op_name((FsCalibNcclOp)op);
    g_autofree char *us = fmt_num("%.3f", n->latency_floor_us);
    if (n->ranks == 1) {
      g_autofree char *field = g_strdup_printf("base_latency.%s", name);
      add_change(cal, "nccl", field, NULL, g_strdup_printf("%s us", us),
                 g_strdup_printf("nccl_%s.latency_floor_us with 1 rank (no steps: the base "
                                 "latency alone)",
                                 name),
                 TRUE);
    } else {
      g_autofree char *field = g_strdup_printf("step_latency.%s", name);
      add_change(cal, "nccl", field, NULL, g_strdup_printf("(%s us - base) / nsteps", us),
                 g_strdup_printf("%u ranks: needs NCCL's base latency (models/nccl) and the "
                                 "topology's links; see fs_calib_nccl_step_latency",
                                 n->ranks),
                 FALSE);
    }
  }
}

/* fitted.links: each family's efficiency on each of its models (a model
 * the catalog lacks, of another family, or a fraction above 1 is listed
 * as not applied, with a warning). */
static gboolean apply_link_fits(FsCalibration *cal, FsCatalog *cat, GError **error)
{
  for (guint i = 0; i < cal->n_link_fits; i++) {
    const FsCalibLinkFit *f = &cal->link_fits[i];
    const char *fam = fs_link_family_name(f->family);
    for (guint m = 0; f->models[m]; m++) {
      const FsModel *link = fs_catalog_get(cat, f->models[m]);
      char *rule = g_strdup_printf("fitted %s efficiency (fabricsim calibrate nccl-tests)", fam);
      if (link == NULL || link->kind != FS_MODEL_LINK || link->u.link.family != f->family) {
        warn(cal, "fitted %s figures name \"%s\", which is not a %s link of the catalog; "
                  "not applied", fam, f->models[m], fam);
        add_change(cal, f->models[m], "efficiency", NULL, fmt_num("%.4f", f->efficiency), rule,
                   FALSE);
        continue;
      }
      char *before = fmt_eff(link->u.link.efficiency, link->u.link.bandwidth);
      if (f->efficiency > 1) {
        warn(cal, "fitted %s efficiency %.4f is above 1 (in-switch reduction or a busbw the "
                  "links alone cannot carry); %s is not overridden", fam, f->efficiency,
             link->name);
        add_change(cal, link->name, "efficiency", before, fmt_num("%.4f", f->efficiency), rule,
                   FALSE);
        continue;
      }
      if (!fs_catalog_set_link_efficiency(cat, link->name, f->efficiency, cal->provenance,
                                          error)) {
        g_free(before);
        g_free(rule);
        return FALSE;
      }
      add_change(cal, link->name, "efficiency", before,
                 fmt_eff(f->efficiency, link->u.link.bandwidth), rule, TRUE);
    }
    g_autofree char *field = g_strdup_printf("step_latency.%s", fam);
    add_change(cal, "nccl", field, NULL, g_strdup_printf("%.3f us", f->step_latency_us),
               g_strdup("fitted: (alpha of the smallest sizes - base) / nsteps; NCCL's hw "
                        "latencies of the class x step / Ring-LL (src/calib/nccl-apply.h)"),
               f->hw_latency_scale <= 0);
    if (f->hw_latency_scale > 0) {
      g_autofree char *sf = g_strdup_printf("hw_latency_scale.%s", fam);
      add_change(cal, "nccl", sf, NULL, fmt_num("%.4f", f->hw_latency_scale),
                 g_strdup("fitted through the simulator: NCCL's hw latencies of the class x "
                          "this factor (src/calib/nccl-apply.h)"),
                 TRUE);
    }
  }
  return TRUE;
}

gboolean fs_calibration_apply(FsCalibration *cal, FsCatalog *cat, GError **error)
{
  g_return_val_if_fail(cal != NULL && cat != NULL, FALSE);
  const FsModel *gpu = NULL;
  if (cal->device_name != NULL && (gpu = match_gpu(cal, cat, error)) == NULL)
    return FALSE;
  g_ptr_array_set_size(cal->changes, 0);
  g_ptr_array_set_size(cal->warnings, cal->n_load_warnings);
  g_clear_pointer(&cal->gpu_model, g_free);
  g_clear_pointer(&cal->host_link, g_free);
  g_clear_pointer(&cal->provenance, g_free);
  cal->host_link_efficiency = 0;
  cal->host_duplex = 0;
  cal->provenance = g_strdup_printf("calibration %s (%s, %s)", cal->file, cal->date,
                                    gpu != NULL ? cal->device_name : "fitted to nccl-tests logs");
  if (gpu == NULL)
    return apply_link_fits(cal, cat, error);
  cal->gpu_model = g_strdup(gpu->name);
  /* Every setter below validates its value before changing anything, and
   * every value was range-checked here, so a failure part-way would be a
   * programming error; the catalog is changed in README order. */
  if (!apply_host_link(cal, cat, gpu, error) || !apply_copy_latency(cal, cat, gpu, error) ||
      !apply_memory(cal, cat, gpu, error))
    return FALSE;
  apply_gemm(cal, gpu);
  if (!apply_launch(cal, cat, gpu, error))
    return FALSE;
  apply_nccl(cal);
  return apply_link_fits(cal, cat, error);
}

FsCatalog *fs_calibration_load_catalog(const char *models_dir, const char *calibration_file,
                                       FsCalibration **cal_out, GError **error)
{
  if (cal_out != NULL)
    *cal_out = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(models_dir, error);
  if (cat == NULL)
    return NULL;
  if (calibration_file == NULL)
    return g_steal_pointer(&cat);
  g_autoptr(FsCalibration) cal = fs_calibration_load(calibration_file, error);
  if (cal == NULL || !fs_calibration_apply(cal, cat, error))
    return NULL;
  if (cal_out != NULL)
    *cal_out = g_steal_pointer(&cal);
  return g_steal_pointer(&cat);
}

/* ---- readers for the compute and collective layers ----------------------- */

/* Adds v to the mean of *count values in *mean. */
static void mean_add(double *mean, guint *count, double v)
{
  *mean = (*mean * *count + v) / (*count + 1);
  (*count)++;
}

/* Appends (x, y) to the points, averaging y over equal x (the input is
 * sorted by x). */
static void add_point(GArray *x, GArray *y, GArray *cnt, double fx, double fy)
{
  guint m = x->len;
  if (m > 0 && g_array_index(x, double, m - 1) == fx) {
    mean_add(&g_array_index(y, double, m - 1), &g_array_index(cnt, guint, m - 1), fy);
    return;
  }
  guint one = 1;
  g_array_append_val(x, fx);
  g_array_append_val(y, fy);
  g_array_append_val(cnt, one);
}

/* Lays one datatype's points over eff: the squares (m = n = k) make the
 * FLOPs curve (every point when there is no square), every record a
 * measured shape (repeats of one shape averaged); what they do not measure
 * stays from the curve that applied (fs_efficiency_calibrate_gemm). */
static gboolean calibrate_dtype(const FsCalibration *cal, FsGpuArch arch, FsDtype d,
                                FsEfficiency *eff, GError **error)
{
  const FsCalibGemmPoint *p = cal->compute.gemm[d];
  guint n = cal->compute.n_gemm[d];
  gboolean squares = FALSE;
  for (guint i = 0; i < n; i++)
    squares |= p[i].efficiency > 0 && p[i].m == p[i].n && p[i].n == p[i].k;
  g_autoptr(GArray) x = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(GArray) y = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(GArray) cnt = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(GArray) rcnt = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n; i++) {
    if (p[i].efficiency <= 0)
      continue;
    double e = MIN(p[i].efficiency, 1.0);
    if (!squares || (p[i].m == p[i].n && p[i].n == p[i].k))
      add_point(x, y, cnt, p[i].flops, e);
    double row[4] = {(double)p[i].m, (double)p[i].n, (double)p[i].k, e};
    guint at = 0;
    while (at < rcnt->len && memcmp(&g_array_index(rows, double, 4 * at), row, 3 * sizeof(double)) != 0)
      at++;
    if (at == rcnt->len) {
      guint one = 1;
      g_array_append_vals(rows, row, 4);
      g_array_append_val(rcnt, one);
    } else {
      mean_add(&g_array_index(rows, double, 4 * at + 3), &g_array_index(rcnt, guint, at), e);
    }
  }
  if (x->len == 0)
    return TRUE;
  g_autofree char *src = g_strdup_printf("%s: cuBLASLt GEMMs (fabricsim-probe)", cal->provenance);
  return fs_efficiency_calibrate_gemm(eff, arch, d, (double *)(void *)x->data,
                                      (double *)(void *)y->data, x->len,
                                      (double *)(void *)rows->data, rcnt->len, src, error);
}

gboolean fs_calibration_apply_efficiency(const FsCalibration *cal, const FsCatalog *cat,
                                         FsEfficiency *eff, GError **error)
{
  g_return_val_if_fail(cal != NULL && cat != NULL && eff != NULL, FALSE);
  if (cal->gpu_model == NULL)
    return TRUE;
  const FsModel *gpu = fs_catalog_require(cat, cal->gpu_model, FS_MODEL_GPU, error);
  if (gpu == NULL)
    return FALSE;
  for (int d = 0; d < FS_DTYPE_N; d++)
    if (cal->compute.n_gemm[d] > 0 && !calibrate_dtype(cal, gpu->u.gpu.arch, (FsDtype)d, eff, error))
      return FALSE;
  return TRUE;
}

double fs_calib_nccl_step_latency(const FsCalibNccl *n, FsCalibNcclOp op, double base_us)
{
  g_return_val_if_fail(n != NULL && op < FS_CALIB_NCCL_N, 0);
  if (!n->present || n->ranks < 2 || n->latency_floor_us <= base_us)
    return 0;
  guint steps = op == FS_CALIB_NCCL_ALL_REDUCE ? 2 * (n->ranks - 1)
                : op == FS_CALIB_NCCL_SENDRECV ? 1
                                               : n->ranks - 1;
  return (n->latency_floor_us - base_us) / steps;
}
