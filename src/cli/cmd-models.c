/* cmd-models.c — `fabricsim models [NAME] [--kind KIND] [--json] [--models DIR]`:
 * list the hardware catalog, or show one model with every field, its
 * source and the arithmetic of its derived figures. */
#include <stdio.h>
#include <string.h>

#include "calib/calibration.h"
#include "catalog/catalog.h"
#include "cli/commands.h"
#include "report/models.h"
#include "util/strutil.h"

static char *opt_kind = NULL;
static gboolean opt_json = FALSE;
static char *opt_models = NULL;
static char *opt_calibration = NULL;

static const GOptionEntry entries[] = {
  {"kind", 'k', 0, G_OPTION_ARG_STRING, &opt_kind,
   "Only models of this kind: link, switch, gpu, cpu, nic", "KIND"},
  {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON (schema in models/README.md)", NULL},
  FS_OPT_MODELS(opt_models),
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration,
   "Apply a calibration file (validation/README.md) and show each figure it changes", "FILE"},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* "fabricsim models [NAME]": loads the catalog, with a calibration applied when given (its
 * warnings go to stderr), and prints either the one model NAME (of --kind, when given) or the
 * whole catalog filtered by --kind, as text or JSON. An unknown --kind gets a "did you mean".
 * Returns 0, 2 on a usage error, or the exit status of the first error. */
int fs_cmd_models(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx = g_option_context_new("[NAME] - list the hardware catalog or show one model");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Without NAME, lists every model (one per line, sorted by name) with its key\n"
    "figures.  With NAME, shows every field of that model, where its figures come\n"
    "from, and the arithmetic of its derived bandwidths.\n"
    "\n"
    "Examples:\n"
    "  fabricsim models --kind gpu\n"
    "  fabricsim models pcie-gen4-x16\n"
    "  fabricsim models h100-sxm --json\n"
    "  fabricsim models --calibration validation/results/h100-2026-11-23.json h100-sxm\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "models");
  if (done != FS_CLI_GO_ON)
    return done;
  if (argc > 2)
    return fs_cli_usage("models", "expected at most one NAME, got %d", argc - 1);

  int kind = -1;
  if (opt_kind != NULL) {
    FsModelKind k;
    if (!fs_model_kind_from_name(opt_kind, &k)) {
      const char *kinds[FS_MODEL_N_KINDS + 1];
      for (int i = 0; i < FS_MODEL_N_KINDS; i++)
        kinds[i] = fs_model_kind_name((FsModelKind)i);
      kinds[FS_MODEL_N_KINDS] = NULL;
      const char *guess = fs_did_you_mean(opt_kind, kinds, -1);
      if (guess != NULL)
        return fs_cli_usage("models", "unknown kind \"%s\"; did you mean \"%s\"?", opt_kind,
                            guess);
      return fs_cli_usage("models", "unknown kind \"%s\"; expected link, switch, gpu, cpu or nic",
                          opt_kind);
    }
    kind = (int)k;
  }

  GError *error = NULL;
  g_autoptr(FsCalibration) cal = NULL;
  g_autoptr(FsCatalog) cat = fs_calibration_load_catalog(opt_models, opt_calibration, &cal, &error);
  if (cat == NULL)
    return fs_cli_fail("models", error);
  if (cal != NULL)
    for (guint i = 0; i < cal->warnings->len; i++)
      fprintf(stderr, "fabricsim models: warning: %s\n",
              (const char *)g_ptr_array_index(cal->warnings, i));

  g_autoptr(GString) out = g_string_new(NULL);
  if (argc == 2) {
    const FsModel *m = kind >= 0 ? fs_catalog_require(cat, argv[1], (FsModelKind)kind, &error)
                                 : fs_catalog_find(cat, argv[1], &error);
    if (m == NULL)
      return fs_cli_fail("models", error);
    fs_report_model(out, m, cal, opt_json);
  } else {
    fs_report_catalog(out, cat, kind, cal, opt_json);
  }
  fputs(out->str, stdout);
  return 0;
}
