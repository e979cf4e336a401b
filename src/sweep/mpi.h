/* mpi.h — a sweep spread over MPI ranks (`mpirun -n K fabricsim sweep`).
 *
 * Points are dealt round-robin over the ranks (each runs its share on its
 * own threads, fs_sweep_run with first = done + rank, stride = size) and
 * rank 0 gathers and writes every row.  Each other rank sends its results
 * (TAG_RESULT, as JSON text) and then one TAG_DONE with its status, however
 * its run ended; rank 0 receives until every other rank is done, so it
 * never waits for a result that will not come.  When rank 0 is interrupted
 * it sends each other rank a TAG_STOP, which their poll turns into an
 * interrupt of their own (mpirun usually signals every rank anyway).
 * Messages from one rank arrive in the order sent, so a rank's results
 * precede its TAG_DONE.
 *
 * Built only with MPI (FS_HAVE_MPI): these objects go into the command
 * (src/cli/meson.build), never into libfabricsim, so that the tests'
 * library does not link MPI.  Threads: MPI_THREAD_FUNNELED; every call
 * from the main thread (fs_sweep_run calls its poll and result callbacks
 * there).
 */
#pragma once

#include <glib.h>

#include "sweep/sweep.h"

G_BEGIN_DECLS

typedef struct {
  int rank, size;
  int ranks_done;        /* rank 0: other ranks that said they are done */
  gboolean stop_sent;    /* rank 0: TAG_STOP sent to the others */
  FsSweepResultFn deliver; /* rank 0: where received results go */
  void *ud;
} FsSweepMpi;

/* Whether mpirun (Open MPI, MPICH/PMI or PMIx) started this process. */
gboolean fs_sweep_mpi_launched(void);
/* Starts MPI and fills m's rank and size; deliver(ud) takes rank 0's
 * received results. */
void fs_sweep_mpi_init(FsSweepMpi *m, FsSweepResultFn deliver, void *ud);

/* Every rank learns rank 0's status and starting point: *status becomes
 * the largest of all ranks', *done rank 0's. */
void fs_sweep_mpi_agree(FsSweepMpi *m, int *status, guint *done);

/* The callbacks of fs_sweep_run on the ranks: rank 0 polls with
 * fs_sweep_mpi_poll_root (takes what has arrived; on its own interrupt,
 * asks the others once to stop), the others with fs_sweep_mpi_poll_other
 * (a TAG_STOP interrupts the rank) and send their results with
 * fs_sweep_mpi_send_result.  ud: the FsSweepMpi. */
void fs_sweep_mpi_poll_root(void *ud);
void fs_sweep_mpi_poll_other(void *ud);
void fs_sweep_mpi_send_result(FsSweepResult *r, void *ud);

/* After fs_sweep_run: another rank tells rank 0 how its run ended; rank 0
 * receives (asleep between looks, not spinning on a core a working rank
 * may need) until every other rank is done, and turns a run that ended
 * before another rank's interrupt into that interrupt (*ran FALSE, *error
 * FS_RUNTIME_ERROR_INTERRUPTED). */
void fs_sweep_mpi_finish(FsSweepMpi *m, gboolean *ran, GError **error);

/* The exit status every rank returns (the largest), and MPI's end; the
 * other ranks wait asleep until rank 0 has written the output. */
void fs_sweep_mpi_end(FsSweepMpi *m, int *status);

G_END_DECLS
