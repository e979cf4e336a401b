/* cmd-sweep.c — `fabricsim sweep SPEC.yaml [-o OUT.csv|.json] [-j N]
 * [--resume]`: run every point of a sweep spec (workloads/sweeps/README.md)
 * on all cores, stream rows in point order, show progress on a terminal.
 * Built with MPI (FS_HAVE_MPI: this file and src/sweep/mpi.c only),
 * `mpirun -n K fabricsim sweep SPEC` deals points round-robin over the
 * ranks and rank 0 gathers and writes every row (sweep/mpi.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>


#include "cli/commands.h"
#include "core/sim.h"
#include "report/progress.h"
#include "sweep/output.h"
#include "sweep/sweep.h"
#ifdef FS_HAVE_MPI
#include "sweep/mpi.h"
#endif
#include "util/error.h"

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
  {"quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "No progress line on a terminal", NULL},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models,
   "Catalog folder (default: $FABRICSIM_MODELS or the built-in models/)", "DIR"},
  {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &opt_calibration,
   "Apply a calibration file (fabricsim calibrate / the probes) to the catalog and the GEMM curves",
   "FILE"},
  {"list-kinds", 0, 0, G_OPTION_ARG_NONE, &opt_list, "List the point kinds and their columns", NULL},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

typedef struct {
  FsSweepWriter *writer;
  guint total, start_done, got;
  FsProgress *progress; /* rank 0's line on a terminal */
  GError *error;      /* the first write error */
  int rank, size;     /* MPI (0, 1 without) */
#ifdef FS_HAVE_MPI
  FsSweepMpi mpi;
#endif
} Ctx;

static void progress(Ctx *c)
{
  fs_progress_count(c->progress, c->start_done + c->got, c->total, "points");
}

static void deliver(Ctx *c, FsSweepResult *r)
{
  c->got++;
  if (c->error == NULL)
    fs_sweep_writer_add(c->writer, r, &c->error);
  fs_sweep_result_clear(r);
  progress(c);
}

static void on_result(FsSweepResult *r, void *ud)
{
  deliver(ud, r);
}

#ifdef FS_HAVE_MPI
static void poll_root(void *ud) { fs_sweep_mpi_poll_root(&((Ctx *)ud)->mpi); }
static void poll_other(void *ud) { fs_sweep_mpi_poll_other(&((Ctx *)ud)->mpi); }
#endif

/* Runs the sweep of spec_path, alone or as one rank of an MPI launch: rank 0 opens the writer
 * (resuming after the rows already in -o with --resume) and every rank starts from that point,
 * takes every size-th point and sends its results to rank 0, which writes them in point order.
 * On an interrupt rank 0 reports how far it got and OUT is not written. Returns the exit
 * status: 0, 2 on a usage error, or that of the first error. */
static int run(const char *spec_path)
{
  Ctx c = {0};
  c.size = 1;
#ifdef FS_HAVE_MPI
  gboolean mpi = fs_sweep_mpi_launched();
  if (mpi) {
    fs_sweep_mpi_init(&c.mpi, on_result, &c);
    c.rank = c.mpi.rank;
    c.size = c.mpi.size;
  }
#endif
  GError *error = NULL;
  int status = 0;
  FsSweepFormat fmt = FS_SWEEP_CSV;
  const char *f = opt_format ? opt_format : (opt_out && g_str_has_suffix(opt_out, ".json") ? "json" : "csv");
  g_autoptr(FsSweepSpec) spec = NULL;
  g_autoptr(FsSweepEnv) env = NULL;
  g_autoptr(FsSweepWriter) w = NULL;
  guint done = 0;
  if (strcmp(f, "json") == 0)
    fmt = FS_SWEEP_JSON;
  else if (strcmp(f, "csv") != 0)
    status = fs_cli_usage("sweep", "unknown format \"%s\" (csv or json)", f);
  else if (opt_resume && opt_out == NULL)
    status = fs_cli_usage("sweep", "--resume needs -o FILE");
  if (status == 0 && (spec = fs_sweep_spec_load_file(spec_path, &error)) == NULL)
    status = fs_cli_fail("sweep", error);
  FsScenarioInputs in = { .models_dir = opt_models, .calibration = opt_calibration };
  if (status == 0 && (env = fs_sweep_env_new(&in, &error)) == NULL)
    status = fs_cli_fail("sweep", error);
  if (status == 0 && c.rank == 0) {
    if ((w = fs_sweep_writer_open(spec, opt_out, fmt, opt_resume, &error)) == NULL)
      status = fs_cli_fail("sweep", error);
    else
      done = fs_sweep_writer_done(w);
  }
#ifdef FS_HAVE_MPI
  if (mpi) /* every rank learns where to start, or that rank 0 failed */
    fs_sweep_mpi_agree(&c.mpi, &status, &done);
#endif
  if (status != 0)
    goto out;
  c.writer = w;
  c.total = fs_sweep_spec_n_points(spec);
  c.start_done = done;
  /* Rows on a terminal's stdout would interleave with the line: none then. */
  c.progress = fs_progress_new("sweep", c.rank != 0 || opt_quiet || (opt_out == NULL && isatty(STDOUT_FILENO)));
  fs_sweep_env_prepare(env, spec, done + (guint)c.rank, (guint)c.size);
  FsSweepResultFn cb = on_result;
  FsSweepPollFn poll = NULL;
#ifdef FS_HAVE_MPI
  if (mpi && c.rank != 0) {
    cb = fs_sweep_mpi_send_result;
    poll = poll_other;
  }
  if (mpi && c.rank == 0)
    poll = poll_root;
#endif
  gboolean ran = fs_sweep_run(env, spec, done + (guint)c.rank, (guint)c.size,
                              (guint)MAX(opt_jobs, 0), cb, poll, &c, &error);
#ifdef FS_HAVE_MPI
  if (mpi)
    fs_sweep_mpi_finish(&c.mpi, &ran, &error);
#endif
  if (!ran) {
    if (g_error_matches(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED) && c.rank != 0) {
      /* Rank 0 reports the interrupt for all. */
      g_clear_error(&error);
      status = FS_EXIT_INTERRUPTED;
      goto out;
    }
    if (g_error_matches(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED) && c.rank == 0) {
      /* The rows in point order so far are in OUT.partial; OUT is not written. */
      g_clear_pointer(&c.progress, fs_progress_free);
      g_clear_error(&error);
      error = fs_sweep_interrupted_error(fs_sweep_writer_done(w), c.total, opt_out);
    }
    status = fs_cli_fail("sweep", error);
    goto out;
  }
  if (c.rank == 0) {
    progress(&c);
    g_clear_pointer(&c.progress, fs_progress_free);
    if (c.error != NULL)
      status = fs_cli_fail("sweep", g_steal_pointer(&c.error));
    else if (!fs_sweep_writer_finish(w, &error))
      status = fs_cli_fail("sweep", error);
  }
out:
#ifdef FS_HAVE_MPI
  if (mpi)
    fs_sweep_mpi_end(&c.mpi, &status);
#endif
  g_clear_error(&c.error);
  g_clear_pointer(&c.progress, fs_progress_free);
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
