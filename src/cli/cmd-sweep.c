/* cmd-sweep.c — `fabricsim sweep SPEC.yaml [-o OUT.csv|.json] [-j N]
 * [--resume]`: run every point of a sweep spec (workloads/sweeps/README.md)
 * on all cores, stream rows in point order, show progress on a terminal.
 * Built with MPI (FS_HAVE_MPI, this file only), `mpirun -n K fabricsim
 * sweep SPEC` deals points round-robin over the ranks (each uses its own
 * threads) and rank 0 gathers and writes every row. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef FS_HAVE_MPI
#include <mpi.h>
#endif

#include "cli/commands.h"
#include "core/sim.h"
#include "sweep/output.h"
#include "sweep/sweep.h"
#include "util/error.h"

static char *opt_out = NULL;
static char *opt_format = NULL;
static char *opt_models = NULL;
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
  {"quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "No progress bar", NULL},
  {"models", 0, 0, G_OPTION_ARG_FILENAME, &opt_models,
   "Catalog folder (default: $FABRICSIM_MODELS or the built-in models/)", "DIR"},
  {"list-kinds", 0, 0, G_OPTION_ARG_NONE, &opt_list, "List the point kinds and their columns", NULL},
  {NULL, 0, 0, 0, NULL, NULL, NULL},
};

typedef struct {
  FsSweepWriter *writer;
  guint total, start_done, got;
  gint64 t0, last_draw;
  gboolean tty;
  GError *error;      /* the first write error */
  int rank, size;     /* MPI (0, 1 without) */
  int ranks_done;     /* MPI rank 0: other ranks that said they are done */
  gboolean stop_sent; /* MPI rank 0: TAG_STOP sent to the others */
} Ctx;

static void progress(Ctx *c, gboolean final)
{
  if (!c->tty)
    return;
  gint64 now = g_get_monotonic_time();
  if (!final && now - c->last_draw < 100000)
    return;
  c->last_draw = now;
  guint done = c->start_done + c->got, todo = c->total - c->start_done;
  double el = (now - c->t0) / 1e6, rate = el > 0 ? c->got / el : 0;
  double eta = rate > 0 ? (todo - c->got) / rate : 0;
  int width = 30, fill = c->total ? (int)((guint64)width * done / c->total) : width;
  char bar[64];
  for (int i = 0; i < width; i++)
    bar[i] = i < fill ? '#' : '.';
  bar[width] = '\0';
  fprintf(stderr, "\r[%s] %u/%u points  %.1f/s  ETA %d:%02d%s", bar, done, c->total, rate,
          (int)eta / 60, (int)eta % 60, final ? "\n" : "");
  fflush(stderr);
}

static void deliver(Ctx *c, FsSweepResult *r)
{
  c->got++;
  if (c->error == NULL)
    fs_sweep_writer_add(c->writer, r, &c->error);
  fs_sweep_result_clear(r);
  progress(c, FALSE);
}

#ifdef FS_HAVE_MPI
/* Rank 0 and the others.  Each other rank sends its results (TAG_RESULT,
 * as JSON text) and then one TAG_DONE, however its run ended; rank 0
 * receives until every other rank is done, so it never waits for a result
 * that will not come.  When rank 0 is interrupted it sends each other rank
 * a TAG_STOP, which the others' poll turns into an interrupt of their own
 * (mpirun usually signals every rank anyway).  Messages from one rank
 * arrive in the order sent, so a rank's results precede its TAG_DONE. */
#define TAG_RESULT 17
#define TAG_DONE 18
#define TAG_STOP 19

static char *result_to_text(const FsSweepResult *r)
{
  json_t *o = json_object();
  json_object_set_new(o, "i", json_integer(r->index));
  json_object_set_new(o, "ok", json_boolean(r->ok));
  json_object_set_new(o, "e", r->error ? json_string(r->error) : json_null());
  json_t *v = json_array();
  for (guint i = 0; r->values && r->values[i]; i++)
    json_array_append_new(v, json_string(r->values[i]));
  json_object_set_new(o, "v", v);
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return s;
}

static void text_to_result(const char *text, FsSweepResult *r)
{
  json_t *o = json_loads(text, 0, NULL);
  g_assert(o != NULL);
  r->index = (guint)json_integer_value(json_object_get(o, "i"));
  r->ok = json_is_true(json_object_get(o, "ok"));
  const char *e = json_string_value(json_object_get(o, "e"));
  r->error = e ? g_strdup(e) : NULL;
  json_t *v = json_object_get(o, "v");
  r->values = NULL;
  if (r->ok) {
    r->values = g_new0(char *, json_array_size(v) + 1);
    for (size_t i = 0; i < json_array_size(v); i++)
      r->values[i] = g_strdup(json_string_value(json_array_get(v, i)));
  }
  json_decref(o);
}

/* Rank 0: receives one message from another rank (blocking when wait): a
 * result, delivered, or a rank's TAG_DONE, counted. */
static gboolean mpi_receive(Ctx *c, gboolean wait)
{
  MPI_Status st;
  int flag = 1;
  if (!wait)
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
  else
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
  if (!flag)
    return FALSE;
  if (st.MPI_TAG == TAG_DONE) {
    int peer_status;
    MPI_Recv(&peer_status, 1, MPI_INT, st.MPI_SOURCE, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    c->ranks_done++;
    if (peer_status == FS_EXIT_INTERRUPTED)
      fs_sim_request_interrupt(); /* one rank stopped: the sweep stops */
    return TRUE;
  }
  int len;
  MPI_Get_count(&st, MPI_CHAR, &len);
  g_autofree char *buf = g_malloc(len + 1);
  MPI_Recv(buf, len, MPI_CHAR, st.MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  buf[len] = '\0';
  FsSweepResult r = {0};
  text_to_result(buf, &r);
  deliver(c, &r);
  return TRUE;
}

/* Rank 0's poll: takes what has arrived; on its own interrupt, asks the
 * other ranks (once) to stop too. */
static void poll_mpi(void *ud)
{
  Ctx *c = ud;
  while (mpi_receive(c, FALSE))
    ;
  if (fs_sim_interrupt_requested() && !c->stop_sent) {
    c->stop_sent = TRUE;
    for (int r = 1; r < c->size; r++) {
      int nothing = 0;
      MPI_Send(&nothing, 1, MPI_INT, r, TAG_STOP, MPI_COMM_WORLD);
    }
  }
}

/* The other ranks' poll: a TAG_STOP from rank 0 interrupts this rank. */
static void poll_stop(void *ud)
{
  (void)ud;
  int flag = 0;
  MPI_Status st;
  MPI_Iprobe(0, TAG_STOP, MPI_COMM_WORLD, &flag, &st);
  if (flag) {
    int nothing;
    MPI_Recv(&nothing, 1, MPI_INT, 0, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fs_sim_request_interrupt();
  }
}

static void send_result(FsSweepResult *r, void *ud)
{
  (void)ud;
  g_autofree char *t = result_to_text(r);
  MPI_Send(t, (int)strlen(t), MPI_CHAR, 0, TAG_RESULT, MPI_COMM_WORLD);
}

/* Under mpirun (Open MPI, MPICH/PMI or PMIx sets these), start MPI. */
static gboolean launched_by_mpirun(void)
{
  return g_getenv("OMPI_COMM_WORLD_SIZE") != NULL || g_getenv("PMI_SIZE") != NULL ||
         g_getenv("PMIX_RANK") != NULL;
}
#endif

static void on_result(FsSweepResult *r, void *ud)
{
  deliver(ud, r);
}

static int run(const char *spec_path)
{
  Ctx c = {0};
  c.size = 1;
#ifdef FS_HAVE_MPI
  gboolean mpi = launched_by_mpirun();
  if (mpi) {
    int provided;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
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
  if (status == 0 && (env = fs_sweep_env_new(opt_models, &error)) == NULL)
    status = fs_cli_fail("sweep", error);
  if (status == 0 && c.rank == 0) {
    if ((w = fs_sweep_writer_open(spec, opt_out, fmt, opt_resume, &error)) == NULL)
      status = fs_cli_fail("sweep", error);
    else
      done = fs_sweep_writer_done(w);
  }
#ifdef FS_HAVE_MPI
  if (mpi) {
    /* Every rank learns where to start, or that rank 0 failed. */
    int msg[2] = { status, (int)done };
    MPI_Bcast(msg, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &msg[0], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    status = msg[0];
    done = (guint)msg[1];
  }
#endif
  if (status != 0)
    goto out;
  c.writer = w;
  c.total = fs_sweep_spec_n_points(spec);
  c.start_done = done;
  c.t0 = c.last_draw = g_get_monotonic_time();
  c.tty = c.rank == 0 && !opt_quiet && isatty(STDERR_FILENO) && (opt_out != NULL || !isatty(STDOUT_FILENO));
  fs_sweep_env_prepare(env, spec, done + (guint)c.rank, (guint)c.size);
  FsSweepResultFn cb = on_result;
  FsSweepPollFn poll = NULL;
#ifdef FS_HAVE_MPI
  if (mpi && c.rank != 0) {
    cb = send_result;
    poll = poll_stop;
  }
  if (mpi && c.rank == 0)
    poll = poll_mpi;
#endif
  gboolean ran = fs_sweep_run(env, spec, done + (guint)c.rank, (guint)c.size,
                              (guint)MAX(opt_jobs, 0), cb, poll, &c, &error);
#ifdef FS_HAVE_MPI
  if (mpi && c.rank != 0) {
    int st = ran ? 0
             : g_error_matches(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED) ? FS_EXIT_INTERRUPTED
                                                                                    : 1;
    MPI_Send(&st, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD);
  }
  if (mpi && c.rank == 0) {
    if (!ran)
      poll_mpi(&c); /* tells the others to stop when interrupted */
    while (c.ranks_done < c.size - 1)
      mpi_receive(&c, TRUE);
    if (ran && fs_sim_interrupt_requested()) {
      /* Another rank was interrupted after this one had finished. */
      ran = FALSE;
      g_set_error(&error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED, "interrupted");
    }
  }
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
      progress(&c, TRUE);
      g_clear_error(&error);
      guint kept = fs_sweep_writer_done(w);
      if (opt_out != NULL)
        g_set_error(&error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED,
                    "interrupted: %u of %u points done; re-run with --resume to finish %s",
                    kept, c.total, opt_out);
      else
        g_set_error(&error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED,
                    "interrupted: %u of %u points done (rows above); use -o FILE to be able to "
                    "resume", kept, c.total);
    }
    status = fs_cli_fail("sweep", error);
    goto out;
  }
  if (c.rank == 0) {
    progress(&c, TRUE);
    if (c.error != NULL)
      status = fs_cli_fail("sweep", g_steal_pointer(&c.error));
    else if (!fs_sweep_writer_finish(w, &error))
      status = fs_cli_fail("sweep", error);
  }
out:
#ifdef FS_HAVE_MPI
  if (mpi) {
    MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
  }
#endif
  g_clear_error(&c.error);
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
    for (guint i = 0; fs_sweep_kinds[i] != NULL; i++) {
      const FsSweepKind *k = fs_sweep_kinds[i];
      printf("%-6s %s\n       columns:", k->name, k->summary);
      for (guint j = 0; k->columns[j].name; j++)
        printf(" %s", k->columns[j].name);
      printf("\n");
    }
    return 0;
  }
  if (argc != 2)
    return fs_cli_usage("sweep", "expected one SPEC.yaml");
  if (opt_jobs < 0)
    return fs_cli_usage("sweep", "-j must be 0 (all cores) or more");
  return run(argv[1]);
}
