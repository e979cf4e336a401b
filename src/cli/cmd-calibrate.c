/* cmd-calibrate.c — `fabricsim calibrate nccl-tests --topo TOPO LOG...`:
 * fit a topology's link figures to real nccl-tests logs, print the fit
 * error per size, and write a calibration file with a `fitted` section
 * (src/calib/nccl-fit.h; format in validation/README.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib/calibration.h"
#include "calib/nccl-fit.h"
#include "calib/nccl-log.h"
#include "calib/nccl-simfit.h"
#include "cli/commands.h"
#include "topo/topo.h"
#include "util/strutil.h"
#include "util/units.h"

static char *opt_topo = NULL;
static char *opt_models = NULL;
static char *opt_calibration = NULL;
static char *opt_op = NULL;
static char *opt_out = NULL;
static gboolean opt_in_place = FALSE;
static gboolean opt_json = FALSE;
static double opt_base = -1;
static gboolean opt_simulate = FALSE;
static gint opt_iters = 20;

static const GOptionEntry entries[] = {
  {"topo", 't', 0, G_OPTION_ARG_FILENAME, &opt_topo,
   "Topology the logs were measured on (required)", "FILE"},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models,
   "Catalog folder (default: $FABRICSIM_MODELS, else the built-in models/)", "DIR"},
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration,
   "Apply a calibration file first; its one-rank NCCL floors give the base latency", "FILE"},
  {"op", 0, 0, G_OPTION_ARG_STRING, &opt_op,
   "Collective of logs that do not name it (all_reduce, all_gather, ...)", "OP"},
  {"in-place", 0, 0, G_OPTION_ARG_NONE, &opt_in_place,
   "Fit the in-place columns (default: out-of-place)", NULL},
  {"base-latency", 0, 0, G_OPTION_ARG_DOUBLE, &opt_base,
   "NCCL base latency in us subtracted before the per-step latency (default: from "
   "--calibration, else 0)", "US"},
  {"output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_out,
   "Write the calibration file (JSON) here; '-' for stdout", "OUT.json"},
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print the calibration file instead of the table",
   NULL},
  {"simulate", 0, 0, G_OPTION_ARG_NONE, &opt_simulate,
   "Also fit the link efficiency and NCCL's latency scale through the simulator "
   "(fabricsim coll on TOPO; slow: a few simulated sweeps per iteration)", NULL},
  {"iterations", 0, 0, G_OPTION_ARG_INT, &opt_iters,
   "Most iterations of the --simulate fit (default 20)", "N"},

  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* The base latency for a collective: --base-latency, else the matching
 * one-rank floor of --calibration, else 0. */
static double base_for(const FsCalibration *cal, const char *coll)
{
  if (opt_base >= 0)
    return opt_base;
  if (cal == NULL || coll == NULL)
    return 0;
  for (int op = 0; op < FS_CALIB_NCCL_N; op++)
    if (strcmp(fs_calib_nccl_op_name((FsCalibNcclOp)op), coll) == 0 && cal->nccl[op].present &&
        cal->nccl[op].ranks == 1)
      return cal->nccl[op].latency_floor_us;
  return 0;
}

static char *fmt(const char *f, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, f, v));
}

static void print_fit(const FsNcclFit *f)
{
  g_autofree char *raw = fs_format_bandwidth(f->raw_per_gpu);
  g_autofree char *models = g_strjoinv(", ", f->models);
  printf("%s on %u rank%s, %u host%s (%s): %s via %s, %u link%s, %s raw per GPU\n", f->collective,
         f->nranks, f->nranks == 1 ? "" : "s", f->nhosts, f->nhosts == 1 ? "" : "s", f->log,
         fs_link_family_name(f->family), models, f->links_per_gpu, f->links_per_gpu == 1 ? "" : "s",
         raw);
  printf("  %-6s %-24s %10s %10s %10s %8s %8s %8s\n", "regime", "sizes", "alpha us",
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
    printf("  %-6u %-24s %10s %10s %10s %8s %8s %8s\n", i + 1, range, a, b, bb, frac, rms, mx);
  }
  printf("  %12s %12s %12s %8s\n", "size (B)", "measured us", "fitted us", "error %");
  for (guint i = 0; i < f->n; i++) {
    g_autofree char *m = fmt("%.2f", f->measured_us[i]), *p = fmt("%.2f", f->fitted_us[i]);
    g_autofree char *e = fmt("%+.2f", 100 * (f->fitted_us[i] / f->measured_us[i] - 1));
    printf("  %12" G_GUINT64_FORMAT " %12s %12s %8s\n", f->sizes[i], m, p, e);
  }
  if (f->has_sim) {
    printf("  through the simulator: %s efficiency %.4f, NCCL hw latency x %.3f; rms error %.2f %% "
           "(%u runs of the sweep%s)\n",
           fs_link_family_name(f->family), f->sim_efficiency, f->sim_latency_scale,
           100 * f->sim_rms_rel, f->sim_evaluations, f->sim_converged ? "" : ", not converged");
    printf("  %12s %12s %12s %8s\n", "size (B)", "measured us", "simulated us", "error %");
    for (guint i = 0; i < f->n; i++) {
      g_autofree char *m = fmt("%.2f", f->measured_us[i]), *p = fmt("%.2f", f->sim_us[i]);
      g_autofree char *e = fmt("%+.2f", 100 * (f->sim_us[i] / f->measured_us[i] - 1));
      printf("  %12" G_GUINT64_FORMAT " %12s %12s %8s\n", f->sizes[i], m, p, e);
    }
  }
  g_autofree char *eff = fmt("%.4f", f->efficiency), *pk = fmt("%.2f", f->peak_busbw / 1e9);
  g_autofree char *lat = fmt("%.3f", f->step_latency_us), *a0 = fmt("%.3f", f->regimes[0].alpha_us);
  g_autofree char *base = fmt("%.3f", f->base_us), *rawg = fmt("%.2f", f->raw_per_gpu / 1e9);
  printf("  %s efficiency %s = peak busbw %s / %s GB/s raw; latency per step %s us = (%s - "
         "%s base) / %u steps\n\n",
         fs_link_family_name(f->family), eff, pk, rawg, lat, a0, base, f->nsteps);
}

/* Groups the tests of every log by (collective, ranks) and fits each group. */
static int run(GPtrArray *logs, const FsTopo *topo, FsCatalog *cat, const FsCalibration *cal)
{
  g_autoptr(GPtrArray) fits = g_ptr_array_new_with_free_func((GDestroyNotify)fs_nccl_fit_free);
  g_autoptr(GPtrArray) done = g_ptr_array_new(); /* tests already in a group */
  for (guint li = 0; li < logs->len; li++) {
    const FsNcclLog *log = g_ptr_array_index(logs, li);
    for (guint ti = 0; ti < log->tests->len; ti++) {
      const FsNcclLogTest *t = g_ptr_array_index(log->tests, ti);
      if (g_ptr_array_find(done, t, NULL))
        continue;
      const char *coll = opt_op != NULL ? opt_op : t->collective;
      g_autoptr(GPtrArray) group = g_ptr_array_new(), files = g_ptr_array_new();
      for (guint lj = li; lj < logs->len; lj++) {
        const FsNcclLog *l2 = g_ptr_array_index(logs, lj);
        for (guint tj = 0; tj < l2->tests->len; tj++) {
          const FsNcclLogTest *u = g_ptr_array_index(l2->tests, tj);
          const char *c2 = opt_op != NULL ? opt_op : u->collective;
          if (g_ptr_array_find(done, u, NULL) || u->nranks != t->nranks ||
              g_strcmp0(c2, coll) != 0)
            continue;
          g_ptr_array_add(group, (gpointer)u);
          g_ptr_array_add(files, l2->file);
          g_ptr_array_add(done, (gpointer)u);
        }
      }
      GError *error = NULL;
      FsNcclFit *f = fs_nccl_fit_tests((const FsNcclLogTest *const *)group->pdata,
                                       (const char *const *)files->pdata, group->len, topo, opt_op,
                                       opt_in_place, base_for(cal, coll), &error);
      if (f == NULL)
        return fs_cli_fail("calibrate", error);
      g_ptr_array_add(fits, f);
      if (opt_simulate && !fs_nccl_fit_simulate(f, cat, opt_topo, opt_iters, &error))
        return fs_cli_fail("calibrate", error);
    }
  }
  if (!opt_json)
    for (guint i = 0; i < fits->len; i++)
      print_fit(g_ptr_array_index(fits, i));
  if (opt_out == NULL && !opt_json)
    return 0;
  json_t *doc = json_object();
  json_object_set_new(doc, "schema_version", json_integer(FS_CALIB_SCHEMA_MAJOR));
  json_t *gen = json_object();
  json_object_set_new(gen, "name", json_string("fabricsim calibrate"));
  json_object_set_new(gen, "version", json_string(FS_VERSION));
  json_object_set_new(doc, "generator", gen);
  json_object_set_new(doc, "mode", json_string("fitted"));
  json_object_set_new(doc, "fitted",
                      fs_nccl_fit_section((FsNcclFit *const *)fits->pdata, fits->len,
                                          fs_topo_name(topo)));
  char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  json_decref(doc);
  g_autofree char *out = g_strdup_printf("%s\n", text);
  free(text);
  if (opt_json || g_strcmp0(opt_out, "-") == 0) {
    fputs(out, stdout);
    return 0;
  }
  GError *error = NULL;
  if (!fs_write_file_atomic(opt_out, out, strlen(out), &error))
    return fs_cli_fail("calibrate", error);
  fprintf(stderr, "fabricsim calibrate: wrote %s\n", opt_out);
  return 0;
}

int fs_cmd_calibrate(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("nccl-tests --topo TOPO LOG... - fit link figures to nccl-tests logs");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Reads nccl-tests output (text of any version, or -J JSON; a LOG ending in .csv is\n"
    "a reference table of kind nccl-tests, validation/reference/README.md, one test per\n"
    "GPU count), fits each collective's\n"
    "time per size with robust alpha-beta lines per protocol regime, derives the\n"
    "efficiency and per-step latency of the link family the collective runs over on\n"
    "TOPO, prints the fit error per size, and writes a calibration file with a\n"
    "`fitted` section (validation/README.md) that --calibration applies.\n"
    "\n"
    "Examples:\n"
    "  fabricsim calibrate nccl-tests --topo topologies/dgx-h100.yaml all_reduce.log\n"
    "  fabricsim calibrate nccl-tests --topo topologies/dgx-a100.yaml --simulate \\\n"
    "      validation/reference/a100_allreduce_2to8gpu_vtrain_lut.csv -o a100-fit.json\n"
    "  fabricsim calibrate nccl-tests --topo topologies/dgx-a100.yaml --op all_reduce \\\n"
    "      --calibration validation/results/h100-2026-11-23.json run*.log -o fitted.json\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "calibrate");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc < 2 || strcmp(argv[1], "nccl-tests") != 0)
    return fs_cli_usage("calibrate", "expected the kind of input first: nccl-tests");
  if (argc < 3)
    return fs_cli_usage("calibrate", "expected at least one nccl-tests LOG");
  if (opt_topo == NULL)
    return fs_cli_usage("calibrate", "--topo TOPO is required");
  if (opt_op != NULL) {
    g_autofree char *c = fs_nccl_log_collective_from_binary(opt_op);
    if (c == NULL)
      return fs_cli_usage("calibrate", "unknown collective \"%s\" for --op", opt_op);
    g_free(opt_op);
    opt_op = g_steal_pointer(&c);
  }
  GError *error = NULL;
  g_autoptr(FsCalibration) cal = NULL;
  g_autoptr(FsCatalog) cat = fs_calibration_load_catalog(opt_models, opt_calibration, &cal, &error);
  if (cat == NULL)
    return fs_cli_fail("calibrate", error);
  g_autoptr(FsTopo) topo = fs_topo_load_file(opt_topo, cat, NULL, &error);
  if (topo == NULL)
    return fs_cli_fail("calibrate", error);
  g_autoptr(GPtrArray) logs = g_ptr_array_new_with_free_func((GDestroyNotify)fs_nccl_log_free);
  for (int i = 2; i < argc; i++) {
    FsNcclLog *log = g_str_has_suffix(argv[i], ".csv") ? fs_nccl_log_load_table(argv[i], &error)
                                                      : fs_nccl_log_load(argv[i], &error);
    if (log == NULL)
      return fs_cli_fail("calibrate", error);
    g_ptr_array_add(logs, log);
  }
  return run(logs, topo, cat, cal);
}
