/* drive.c — one whole sweep run, alone or under MPI (drive.h). */
#include "sweep/drive.h"

#include "sweep/sweep.h"
#ifdef FS_HAVE_MPI
#include "sweep/mpi.h"
#endif
#include "util/error.h"

typedef struct {
  const FsSweepDrive *o;
  FsSweepWriter *writer;
  guint total, start_done, got;
  GError *error;      /* the first write error */
  int rank, size;     /* MPI (0, 1 without) */
#ifdef FS_HAVE_MPI
  FsSweepMpi mpi;
#endif
} Ctx;

static void progress(Ctx *c)
{
  if (c->o->progress != NULL)
    c->o->progress(c->start_done + c->got, c->total, c->o->ud);
}

/* Rank 0's sink for every row, its own and the other ranks': rows arrive in point order. */
static void on_result(FsSweepResult *r, void *ud)
{
  Ctx *c = ud;
  c->got++;
  if (c->error == NULL)
    fs_sweep_writer_add(c->writer, r, &c->error);
  fs_sweep_result_clear(r);
  progress(c);
}

static int fail(Ctx *c, GError *error)
{
  return c->o->fail(error, c->o->ud);
}

#ifdef FS_HAVE_MPI
static void poll_root(void *ud) { fs_sweep_mpi_poll_root(&((Ctx *)ud)->mpi); }
static void poll_other(void *ud) { fs_sweep_mpi_poll_other(&((Ctx *)ud)->mpi); }
#endif

/* Every rank loads the spec and the scenario; rank 0 opens the writer (resuming after the rows
 * already in OUT with resume) and every rank starts from that point, takes every size-th point
 * and sends its results to rank 0, which writes them in point order. */
int fs_sweep_drive(const FsSweepDrive *o)
{
  Ctx c = { .o = o, .size = 1 };
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
  g_autoptr(FsSweepSpec) spec = NULL;
  g_autoptr(FsSweepEnv) env = NULL;
  g_autoptr(FsSweepWriter) w = NULL;
  guint done = 0;
  if ((spec = fs_sweep_spec_load_file(o->spec_path, &error)) == NULL)
    status = fail(&c, error);
  FsScenarioInputs in = { .models_dir = o->models_dir, .calibration = o->calibration };
  if (status == 0 && (env = fs_sweep_env_new(&in, &error)) == NULL)
    status = fail(&c, error);
  if (status == 0 && c.rank == 0) {
    if ((w = fs_sweep_writer_open(spec, o->out, o->format, o->resume, &error)) == NULL)
      status = fail(&c, error);
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
  if (c.rank == 0)
    progress(&c);
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
  gboolean ran = fs_sweep_run(env, spec, done + (guint)c.rank, (guint)c.size, o->jobs, cb, poll,
                              &c, &error);
#ifdef FS_HAVE_MPI
  if (mpi)
    fs_sweep_mpi_finish(&c.mpi, &ran, &error);
#endif
  if (!ran) {
    gboolean interrupted = g_error_matches(error, FS_RUNTIME_ERROR, FS_RUNTIME_ERROR_INTERRUPTED);
    if (interrupted && c.rank != 0) { /* rank 0 reports the interrupt for all */
      g_clear_error(&error);
      status = FS_EXIT_INTERRUPTED;
      goto out;
    }
    if (interrupted) { /* the rows in point order so far are in OUT.partial; OUT is not written */
      g_clear_error(&error);
      error = fs_sweep_interrupted_error(fs_sweep_writer_done(w), c.total, o->out);
    }
    status = fail(&c, error);
    goto out;
  }
  if (c.rank == 0) {
    progress(&c);
    if (c.error != NULL)
      status = fail(&c, g_steal_pointer(&c.error));
    else if (!fs_sweep_writer_finish(w, &error))
      status = fail(&c, error);
  }
out:
#ifdef FS_HAVE_MPI
  if (mpi)
    fs_sweep_mpi_end(&c.mpi, &status);
#endif
  g_clear_error(&c.error);
  return status;
}
