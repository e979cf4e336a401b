/* drive.h — one whole `fabricsim sweep` run: load the spec and the scenario
 * inputs, open the writer (resuming after the rows OUT already holds), run
 * every point alone or as one rank of an MPI launch (FS_HAVE_MPI), and
 * finish OUT.  Rank 0 writes the rows in point order; on an interrupt it
 * reports how far it got and OUT is not written (OUT.partial keeps the
 * rows).  The command (src/cli/cmd-sweep.c) parses options and calls this.
 */
#pragma once

#include <glib.h>

#include "sweep/output.h"

G_BEGIN_DECLS

/* Told done of total points after each row rank 0 receives, and once more
 * at the end; ud is FsSweepDrive.ud. */
typedef void (*FsSweepProgressFn)(guint done, guint total, void *ud);

/* Reports error (taken) as the command's one-line message and returns the
 * exit status it maps to; ud is FsSweepDrive.ud. */
typedef int (*FsSweepFailFn)(GError *error, void *ud);

typedef struct {
  const char *spec_path;   /* SPEC.yaml */
  const char *out;         /* -o FILE, or NULL for stdout */
  FsSweepFormat format;
  gboolean resume;         /* keep the points OUT (or OUT.partial) holds */
  const char *models_dir;  /* --models, or NULL */
  const char *calibration; /* --calibration, or NULL */
  guint jobs;              /* threads per rank, 0 = all cores */
  /* Called on rank 0 only (may be NULL): */
  FsSweepProgressFn progress;
  FsSweepFailFn fail;      /* required, on every rank */
  void *ud;
} FsSweepDrive;

/* Runs the sweep o describes and returns the exit status: 0, that of the
 * first error (reported through o->fail), or FS_EXIT_INTERRUPTED on the
 * ranks other than 0 when rank 0 reports an interrupt.  Under MPI every
 * rank returns the same status.  Cost: the points' simulations. */
int fs_sweep_drive(const FsSweepDrive *o);

G_END_DECLS
