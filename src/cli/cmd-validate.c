/* cmd-validate.c — `fabricsim validate [--json] [TABLE...]`: run every
 * reference table (the CSV files of validation/reference) and print predicted vs
 * measured, the error per row and the MAPE per table against its bar.
 * Exit 1 when a table misses its bar, 2 for a malformed table. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "calib/calibration.h"
#include "calib/validate.h"
#include "cli/commands.h"

static gboolean opt_json = FALSE;
static gboolean opt_list = FALSE;
static char *opt_models = NULL;
static char *opt_calibration = NULL;
static char *opt_dir = NULL;

static const GOptionEntry entries[] = {
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print the results as JSON", NULL},
  {"list-kinds", 0, 0, G_OPTION_ARG_NONE, &opt_list, "List the reference kinds this build runs",
   NULL},
  {"dir", 0, 0, G_OPTION_ARG_FILENAME, &opt_dir,
   "Reference folder (default: $FABRICSIM_VALIDATION, else validation/reference)", "DIR"},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models,
   "Catalog folder (default: $FABRICSIM_MODELS, else the built-in models/)", "DIR"},
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration,
   "Apply a calibration file before predicting", "FILE"},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static char *fmt(const char *f, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  if (!isfinite(v))
    return g_strdup("-");
  return g_strdup(g_ascii_formatd(buf, sizeof buf, f, v));
}

static void print_result(const FsValResult *r, const char *metric)
{
  printf("%s (%s): bar %s\n", r->table, r->kind, r->bar);
  if (!r->ran) {
    printf("  not run: no runner for kind \"%s\" in this build ('fabricsim validate "
           "--list-kinds')\n\n",
           r->kind);
    return;
  }
  printf("  %5s %14s %12s %12s %9s\n", "line", "size (B)", "predicted", "measured", "error %");
  for (guint i = 0; i < r->rows->len; i++) {
    const FsValRow *row = &g_array_index(r->rows, FsValRow, i);
    g_autofree char *p = fmt("%.4g", row->predicted), *m = fmt("%.4g", row->measured);
    g_autofree char *e = fmt("%+.2f", row->error_pct);
    printf("  %5d %14" G_GUINT64_FORMAT " %12s %12s %9s%s\n", row->line, row->size, p, m, e,
           row->in_scope ? "" : "  (outside the bar)");
  }
  g_autofree char *mape = fmt("%.2f", r->mape), *mx = fmt("%.2f", r->max_abs_pct);
  printf("  %s MAPE %s %% over %u row%s (max %s %%): %s\n\n", metric, mape, r->in_scope,
         r->in_scope == 1 ? "" : "s", mx, r->pass ? "PASS" : "FAIL");
}

/* A TABLE argument: a path to a file, or a table name in the folder. */
static char *table_path(const char *dir, const char *arg)
{
  if (g_file_test(arg, G_FILE_TEST_IS_REGULAR))
    return g_strdup(arg);
  g_autofree char *name = g_str_has_suffix(arg, ".csv") ? g_strdup(arg)
                                                        : g_strdup_printf("%s.csv", arg);
  return g_build_filename(dir, name, NULL);
}

int fs_cmd_validate(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("[TABLE...] - compare predictions with published measurements");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Runs every reference table of validation/reference (or the named ones), prints\n"
    "predicted vs measured per row, the error, and the mean absolute percentage\n"
    "error (MAPE) per table against the table's bar (its `# bar:` line).  Exit\n"
    "status 1 when a table misses its bar.  Format: validation/reference/README.md.\n"
    "\n"
    "Examples:\n"
    "  fabricsim validate\n"
    "  fabricsim validate --calibration validation/results/h100-2026-11-23.json \\\n"
    "      h100_pcie_gen5_host_copies_fabricsim_probe\n"
    "  fabricsim validate --json > results.json\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "validate");
  if (done != FS_CLI_GO_ON)
    return done;
  if (opt_list) {
    for (guint i = 0; fs_val_kinds[i]; i++)
      printf("%-16s %s\n", fs_val_kinds[i]->name, fs_val_kinds[i]->summary);
    return 0;
  }
  const char *dir = opt_dir != NULL ? opt_dir : fs_val_default_dir();
  GError *error = NULL;
  g_autoptr(GPtrArray) files = NULL;
  if (argc > 1) {
    files = g_ptr_array_new_with_free_func(g_free);
    for (int i = 1; i < argc; i++)
      g_ptr_array_add(files, table_path(dir, argv[i]));
  } else if ((files = fs_val_list_tables(dir, &error)) == NULL) {
    return fs_cli_fail("validate", error);
  }
  if (files->len == 0)
    return fs_cli_usage("validate", "no reference tables (*.csv) in %s", dir);
  g_autoptr(FsCalibration) cal = NULL;
  g_autoptr(FsCatalog) cat = fs_calibration_load_catalog(opt_models, opt_calibration, &cal, &error);
  if (cat == NULL)
    return fs_cli_fail("validate", error);
  guint pass = 0, failed = 0, not_run = 0;
  json_t *all = json_array();
  for (guint i = 0; i < files->len; i++) {
    g_autoptr(FsValTable) t = fs_val_table_load(g_ptr_array_index(files, i), &error);
    if (t == NULL) {
      json_decref(all);
      return fs_cli_fail("validate", error);
    }
    g_autoptr(FsValResult) r = fs_val_run_calibrated(t, cat, cal, &error);
    if (r == NULL) {
      json_decref(all);
      return fs_cli_fail("validate", error);
    }
    if (!r->ran)
      not_run++;
    else if (r->pass)
      pass++;
    else
      failed++;
    if (opt_json)
      json_array_append_new(all, fs_val_result_json(r));
    else
      print_result(r, t->bar_metric);
  }
  if (opt_json) {
    json_t *doc = json_object();
    json_object_set_new(doc, "calibration",
                        opt_calibration ? json_string(opt_calibration) : json_null());
    json_object_set_new(doc, "tables", all);
    json_object_set_new(doc, "passed", json_integer(pass));
    json_object_set_new(doc, "failed", json_integer(failed));
    json_object_set_new(doc, "not_run", json_integer(not_run));
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8));
    json_decref(doc);
    printf("%s\n", text);
    free(text);
  } else {
    json_decref(all);
    printf("summary: %u passed, %u failed, %u not run\n", pass, failed, not_run);
  }
  return failed > 0 ? 1 : 0;
}
