/* train-ref.h — the training reference tables
 * (validation/reference/training/training-*.csv, format in that folder's
 * README.md) scored out of sample: every row simulated with `fabricsim
 * train`'s engine (data-parallel collectives timed alone, --dp-isolated),
 * one step-time factor per GPU generation fitted on the FIT rows of all
 * tables (geometric mean of measured / predicted step time), and each
 * table's test-set MAPE with that factor against its bar.  The one
 * implementation behind `fabricsim validate`'s training tables and
 * tests/test-train-accuracy.c.
 *
 * Lives in scenario because it needs both calib (the validate results it
 * fills) and workload (the training engine), which calib may not use.
 *
 * Ownership: the caller owns the FsTrainRef; its tables own their
 * results.  Errors: FS_VAL_ERROR with "file:line:col: sentence" for a
 * malformed table (a missing header line, a bad cell, an unknown set), a
 * generation with no fit row or a table with no test row; a row's
 * workload, override or topology error prefixed with the row's location.
 */
#pragma once

#include <glib.h>

#include "calib/validate.h"
#include "scenario/scenario.h"

G_BEGIN_DECLS

typedef struct {
  FsValResult *result;  /* rows: calibrated predictions; fit rows marked fit, not in scope */
  char *generation;     /* `# generation:` */
  char *metric;         /* step_time_s or tokens_per_s_per_gpu */
  double factor;        /* the generation's step-time factor */
  double raw_mape;      /* uncalibrated, all rows, % */
  double fit_mape;      /* calibrated fit rows (in sample), % */
  guint n_fit;
} FsTrainRefTable;

typedef struct {
  GPtrArray *tables;       /* FsTrainRefTable *, by file name */
  GPtrArray *generations;  /* char *, sorted */
  GArray *factors;         /* double, per generation */
  GArray *fit_rows;        /* guint, per generation */
  double test_mape;        /* over every table's test rows, % */
  guint n_test;
} FsTrainRef;

/* The training-*.csv files of dir, sorted (caller frees; empty when none
 * or when dir does not exist). */
GPtrArray *fs_train_ref_list(const char *dir);
/* Runs the tables of files (paths) with sc's catalog, curves and NCCL
 * constants (sc needs FS_SCENARIO_NEED_NCCL | FS_SCENARIO_NEED_EFFICIENCY);
 * topology and workload names in the tables are found through the data
 * root (util/datadir.h).  NULL with an error (header comment).  Cost: one
 * simulated training step per row (seconds each). */
FsTrainRef *fs_train_ref_run(const FsScenario *sc, GPtrArray *files, GError **error);
void fs_train_ref_free(FsTrainRef *ref);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsTrainRef, fs_train_ref_free)

G_END_DECLS
