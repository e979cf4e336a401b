/* cmd-sweep.c — `fabricsim sweep SPEC.yaml [-o OUT.csv|.json] [-j N]
 * [--resume]`: run every point of a sweep spec (workloads/sweeps/README.md)
 * on all cores, stream rows in point order, show progress on a terminal.
 * The run itself, alone or under `mpirun -n K` (points dealt round-robin
 * over the ranks, rank 0 writes every row), is sweep/drive.h. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "report/progress.h"
#include "sweep/drive.h"
#include "sweep/sweep.h"

static char *opt_out = NULL;
static char *opt_format = NULL;
static char *opt_models = NULL;
static char *opt_calibration = NULL;
static int opt_jobs = 0;
static gboolean opt_resume = FALSE;
static gboolean opt_quiet = FALSE;
static gboolean opt_list = FALSE;

static const GOptionEntry entries[] = {
  {"output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_out,
   "Write results to FILE (.csv or .json; default: CSV on stdout)", "FILE"},
  {"format", 0, 0, G_OPTION_ARG_STRING, &opt_format, "csv or json (default: from FILE's extension)",
   "FMT"},
  {"jobs", 'j', 0, G_OPTION_ARG_INT, &opt_jobs, "Threads (default: all cores)", "N"},
  {"resume", 0, 0, G_OPTION_ARG_NONE, &opt_resume,
   "Keep the points FILE (or FILE.partial) already holds and run the rest", NULL},
  FS_OPT_QUIET(opt_quiet),
  FS_OPT_MODELS(opt_models),
  FS_OPT_CALIBRATION(opt_calibration),
  {"list-kinds", 0, 0, G_OPTION_ARG_NONE, &opt_list, "List the point kinds and their columns", NULL},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* The progress line of rank 0, drawn from the first count on. */
typedef struct {
  FsProgress *progress;
} Ui;

static void on_progress(guint done, guint total, void *ud)
{
  Ui *ui = ud;
  /* Rows on a terminal's stdout would interleave with the line: none then. */
  if (ui->progress == NULL)
    ui->progress = fs_progress_new("sweep", opt_quiet || (opt_out == NULL && isatty(STDOUT_FILENO)));
  fs_progress_count(ui->progress, done, total, "points");
}

static int on_fail(GError *error, void *ud)
{
  Ui *ui = ud;
  g_clear_pointer(&ui->progress, fs_progress_free); /* the message on a line of its own */
  return fs_cli_fail("sweep", error);
}

static int run(const char *spec_path)
{
  const char *f = opt_format ? opt_format : (opt_out && g_str_has_suffix(opt_out, ".json") ? "json" : "csv");
  if (strcmp(f, "json") != 0 && strcmp(f, "csv") != 0)
    return fs_cli_usage("sweep", "unknown format \"%s\" (csv or json)", f);
  if (opt_resume && opt_out == NULL)
    return fs_cli_usage("sweep", "--resume needs -o FILE");
  Ui ui = {0};
  FsSweepDrive o = {
    .spec_path = spec_path, .out = opt_out, .resume = opt_resume,
    .format = strcmp(f, "json") == 0 ? FS_SWEEP_JSON : FS_SWEEP_CSV,
    .models_dir = opt_models, .calibration = opt_calibration, .jobs = (guint)MAX(opt_jobs, 0),
    .progress = on_progress, .fail = on_fail, .ud = &ui,
  };
  int status = fs_sweep_drive(&o);
  g_clear_pointer(&ui.progress, fs_progress_free);
  return status;
}

int fs_cmd_sweep(int argc, char **argv)
{
  FS_CLI_OPTIONS(entries);
  g_autoptr(GOptionContext) ctx = g_option_context_new("SPEC.yaml - run a what-if sweep");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Expands the spec's grid/list into points (spec format: workloads/sweeps/README.md),\n"
    "runs them on all cores and writes one row per point, in point order, whatever\n"
    "the threads' timing.  A point that fails (a layout that does not divide the\n"
    "GPUs) is a row with status \"error\"; the sweep goes on.  Under mpirun the\n"
    "points are spread over the ranks and rank 0 writes the output.\n"
    "\n"
    "Examples:\n"
    "  fabricsim sweep workloads/sweeps/gpt3-175b-layouts.yaml -o layouts.csv\n"
    "  fabricsim sweep workloads/sweeps/allreduce-fabrics.yaml -o ar.json -j 2 --resume\n"
    "  mpirun -n 4 fabricsim sweep workloads/sweeps/gpt3-175b-layouts.yaml -o layouts.csv\n");
  int done = fs_cli_options_parse(ctx, &argc, &argv, "sweep");
  if (done != FS_CLI_GO_ON)
    return done;
  if (opt_list) {
    g_autoptr(GString) out = g_string_new(NULL);
    fs_sweep_kinds_describe(out);
    fputs(out->str, stdout);
    return 0;
  }
  if (argc != 2)
    return fs_cli_usage("sweep", "expected one SPEC.yaml");
  if (opt_jobs < 0)
    return fs_cli_usage("sweep", "-j must be 0 (all cores) or more");
  return run(argv[1]);
}
