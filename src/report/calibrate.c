/* calibrate.c — see calibrate.h. */
#include "report/calibrate.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>

#include "util/units.h"

static char *fmt(const char *f, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, f, v));
}

/* See calibrate.h. Appends to out the fit's header line, one row per alpha-beta regime (size
 * range, alpha, beta, bus bandwidth, fraction of the largest regime's beta, rms and max error),
 * the measured against fitted time of every size, the simulator's fit when there is one, and
 * how the link efficiency and per-step latency follow from the fit. Numbers are formatted in
 * the C locale. */
void fs_report_calibrate_fit(GString *out, const FsNcclFit *f)
{
  g_autofree char *raw = fs_format_bandwidth(f->raw_per_gpu);
  g_autofree char *models = g_strjoinv(", ", f->models);
  g_string_append_printf(out, "%s on %u rank%s, %u host%s (%s): %s via %s, %u link%s, %s raw per GPU\n", f->collective,
         f->nranks, f->nranks == 1 ? "" : "s", f->nhosts, f->nhosts == 1 ? "" : "s", f->log,
         fs_link_family_name(f->family), models, f->links_per_gpu, f->links_per_gpu == 1 ? "" : "s",
         raw);
  g_string_append_printf(out, "  %-6s %-24s %10s %10s %10s %8s %8s %8s\n", "regime", "sizes", "alpha us",
         "beta GB/s", "busbw GB/s", "bw frac", "rms %", "max %");
  const FsAlphaBeta *big = &f->regimes[f->n_regimes - 1];
  for (guint i = 0; i < f->n_regimes; i++) {
    const FsAlphaBeta *r = &f->regimes[i];
    g_autofree char *lo = fs_format_size(f->sizes[r->first]);
    g_autofree char *hi = fs_format_size(f->sizes[r->last]);
    g_autofree char *range = g_strdup_printf("%s .. %s", lo, hi);
    g_autofree char *a = fmt("%.3f", r->alpha_us);
    g_autofree char *b = isfinite(r->beta) ? fmt("%.2f", r->beta / 1e9) : g_strdup("-");
    g_autofree char *bb =
        isfinite(r->beta) ? fmt("%.2f", r->beta / 1e9 * f->busbw_factor) : g_strdup("-");
    g_autofree char *frac = isfinite(r->beta) && isfinite(big->beta)
                                ? fmt("%.3f", r->beta / big->beta)
                                : g_strdup("-");
    g_autofree char *rms = fmt("%.2f", 100 * r->rms_rel), *mx = fmt("%.2f", 100 * r->max_rel);
    g_string_append_printf(out, "  %-6u %-24s %10s %10s %10s %8s %8s %8s\n", i + 1, range, a, b, bb, frac, rms, mx);
  }
  g_string_append_printf(out, "  %12s %12s %12s %8s\n", "size (B)", "measured us", "fitted us", "error %");
  for (guint i = 0; i < f->n; i++) {
    g_autofree char *m = fmt("%.2f", f->measured_us[i]), *p = fmt("%.2f", f->fitted_us[i]);
    g_autofree char *e = fmt("%+.2f", 100 * (f->fitted_us[i] / f->measured_us[i] - 1));
    g_string_append_printf(out, "  %12" G_GUINT64_FORMAT " %12s %12s %8s\n", f->sizes[i], m, p, e);
  }
  if (f->has_sim) {
    g_string_append_printf(out, "  through the simulator: %s efficiency %.4f, NCCL hw latency x %.3f; rms error %.2f %% "
           "(%u runs of the sweep%s)\n",
           fs_link_family_name(f->family), f->sim_efficiency, f->sim_latency_scale,
           100 * f->sim_rms_rel, f->sim_evaluations, f->sim_converged ? "" : ", not converged");
    g_string_append_printf(out, "  %12s %12s %12s %8s\n", "size (B)", "measured us", "simulated us", "error %");
    for (guint i = 0; i < f->n; i++) {
      g_autofree char *m = fmt("%.2f", f->measured_us[i]), *p = fmt("%.2f", f->sim_us[i]);
      g_autofree char *e = fmt("%+.2f", 100 * (f->sim_us[i] / f->measured_us[i] - 1));
      g_string_append_printf(out, "  %12" G_GUINT64_FORMAT " %12s %12s %8s\n", f->sizes[i], m, p, e);
    }
  }
  g_autofree char *eff = fmt("%.4f", f->efficiency), *pk = fmt("%.2f", f->peak_busbw / 1e9);
  g_autofree char *lat = fmt("%.3f", f->step_latency_us), *a0 = fmt("%.3f", f->regimes[0].alpha_us);
  g_autofree char *base = fmt("%.3f", f->base_us), *rawg = fmt("%.2f", f->raw_per_gpu / 1e9);
  g_string_append_printf(out, "  %s efficiency %s = peak busbw %s / %s GB/s raw; latency per step %s us = (%s - "
         "%s base) / %u steps\n\n",
         fs_link_family_name(f->family), eff, pk, rawg, lat, a0, base, f->nsteps);
}

char *fs_report_calibration_file(FsNcclFit *const *fits, guint n, const char *topology)
{
  json_t *doc = json_object();
  json_object_set_new(doc, "schema_version", json_integer(FS_CALIB_SCHEMA_MAJOR));
  json_t *gen = json_object();
  json_object_set_new(gen, "name", json_string("fabricsim calibrate"));
  json_object_set_new(gen, "version", json_string(FS_VERSION));
  json_object_set_new(doc, "generator", gen);
  json_object_set_new(doc, "mode", json_string("fitted"));
  json_object_set_new(doc, "fitted", fs_nccl_fit_section(fits, n, topology));
  char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  json_decref(doc);
  char *out = g_strdup_printf("%s\n", text);
  free(text);
  return out;
}
