/* cmd-validate.c — `fabricsim validate [--json] [TABLE...]`: run every
 * reference table (the CSV files of validation/reference) and print predicted vs
 * measured, the error per row and the MAPE per table against its bar.
 * Exit 1 when a table misses its bar, 2 for a malformed table. */
#include <stdio.h>

#include "cli/commands.h"
#include "report/progress.h"
#include "report/validate.h"
#include "scenario/nccl-ref.h"
#include "scenario/train-ref.h"

static gboolean opt_json = FALSE;
static gboolean opt_list = FALSE;
static char *opt_models = NULL;
static char *opt_calibration = NULL;
static char *opt_dir = NULL;
static gboolean opt_quiet = FALSE;

static const GOptionEntry entries[] = {
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print the results as JSON", NULL},
  {"list-kinds", 0, 0, G_OPTION_ARG_NONE, &opt_list, "List the reference kinds this build runs",
   NULL},
  {"dir", 0, 0, G_OPTION_ARG_FILENAME, &opt_dir,
   "Reference folder (default: $FABRICSIM_VALIDATION, else validation/reference)", "DIR"},
  FS_OPT_MODELS(opt_models),
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration,
   "Apply a calibration file before predicting", "FILE"},
  FS_OPT_QUIET(opt_quiet),
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* A TABLE argument: a path to a file, or a table name in the folder. */
static char *table_path(const char *dir, const char *arg)
{
  if (g_file_test(arg, G_FILE_TEST_IS_REGULAR))
    return g_strdup(arg);
  g_autofree char *name = g_str_has_suffix(arg, ".csv") ? g_strdup(arg)
                                                        : g_strdup_printf("%s.csv", arg);
  return g_build_filename(dir, name, NULL);
}

/* "fabricsim validate [TABLE...]": runs every reference table named (or every *.csv of the
 * reference folder) through the calibrated models and prints how the predictions compare with
 * the measurements, as text or JSON. --list prints the table kinds instead. Returns 0, 1 when
 * a table fails its bar, 2 on a usage error, or the exit status of the first error. */
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
    "status 1 when a table misses its bar, unless its `# gap:` line records the\n"
    "miss (a KNOWN GAP).  A table that meets its bar while its gap line still\n"
    "records a MAPE says which: the bar's metric closed, or another metric's\n"
    "record (issue 18's time bar, not checked here) still open.\n"
    "Format: validation/reference/README.md.\n"
    "Then the training tables (DIR/training/training-*.csv, or TABLEs so named):\n"
    "ONE step-time factor for all rows fitted on their fit rows, each row printed\n"
    "(name, family, set), the test-set MAPE per table against its bar, over all\n"
    "tables, and the test rows' bias per model family and per GPU generation.\n"
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
    for (guint i = 0; fs_scenario_val_kinds[i]; i++)
      printf("%-16s %s\n", fs_scenario_val_kinds[i]->name, fs_scenario_val_kinds[i]->summary);
    return 0;
  }
  const char *dir = opt_dir != NULL ? opt_dir : fs_val_default_dir();
  GError *error = NULL;
  g_autoptr(GPtrArray) files = NULL, train = NULL;
  if (argc > 1) {
    files = g_ptr_array_new_with_free_func(g_free);
    train = g_ptr_array_new_with_free_func(g_free);
    for (int i = 1; i < argc; i++) {
      char *p = table_path(dir, argv[i]);
      g_autofree char *base = g_path_get_basename(p);
      g_ptr_array_add(g_str_has_prefix(base, "training-") ? train : files, p);
    }
  } else if ((files = fs_val_list_tables(dir, &error)) == NULL) {
    return fs_cli_fail("validate", error);
  } else {
    g_autofree char *tdir = g_build_filename(dir, "training", NULL);
    train = fs_train_ref_list(tdir);
  }
  if (files->len + train->len == 0)
    return fs_cli_usage("validate", "no reference tables (*.csv) in %s", dir);
  FsScenarioInputs in = { .models_dir = opt_models, .calibration = opt_calibration,
                          .needs = FS_SCENARIO_NEED_NCCL | FS_SCENARIO_NEED_EFFICIENCY };
  g_autoptr(FsScenario) sc = fs_scenario_load(&in, &error);
  if (sc == NULL)
    return fs_cli_fail("validate", error);
  g_autoptr(FsValReport) rep = fs_report_validate_new(opt_calibration, sc);
  g_autoptr(FsProgress) progress = fs_progress_new("validate", opt_quiet);
  for (guint i = 0; i < files->len; i++) {
    g_autoptr(FsValTable) t = fs_val_table_load(g_ptr_array_index(files, i), &error);
    if (t == NULL)
      return fs_cli_fail("validate", error);
    g_autoptr(FsValResult) r = fs_scenario_val_run(sc, t, &error);
    if (r == NULL)
      return fs_cli_fail("validate", error);
    fs_report_validate_add(rep, r, t->bar_metric);
  }
  g_autoptr(FsTrainRef) ref = NULL;
  if (train->len > 0 && (ref = fs_train_ref_run(sc, train, &error)) == NULL)
    return fs_cli_fail("validate", error);
  if (ref != NULL)
    fs_report_validate_training(rep, ref);
  g_clear_pointer(&progress, fs_progress_free);
  g_autoptr(GString) out = g_string_new(NULL);
  guint failed = fs_report_validate_finish(rep, out, opt_json ? FS_REPORT_JSON : FS_REPORT_TEXT);
  fputs(out->str, stdout);
  return failed > 0 ? 1 : 0;
}
