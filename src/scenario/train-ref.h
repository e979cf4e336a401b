/* train-ref.h — the training reference tables
 * (validation/reference/training/training-*.csv, format in that folder's
 * README.md) scored out of sample: every row simulated with `fabricsim
 * train`'s engine (data-parallel collectives timed alone, --dp-isolated),
 * ONE step-time factor for all rows, fitted on the FIT rows of every table
 * (the geometric mean of measured / predicted step time; no per-row,
 * per-family or per-generation factor), and the test rows scored with it:
 * each table's test-set MAPE against its bar, the test-set MAPE over all
 * tables, and the mean signed error (bias) of the test rows per model
 * family and per GPU generation.  The one implementation behind `fabricsim
 * validate`'s training tables and tests/test-train-accuracy.c.
 *
 * Lives in scenario because it needs both calib (the validate results it
 * fills) and workload (the training engine), which calib may not use.
 *
 * Ownership: the caller owns the FsTrainRef; its tables own their
 * results.  Errors: FS_VAL_ERROR with "file:line:col: sentence" for a
 * malformed table (a missing header line, a bad cell, an unknown set), no
 * fit row in any table, or a table with no test row; a row's workload,
 * override or topology error prefixed with the row's location.
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
  GPtrArray *names;     /* char *, the rows' `name` cells */
  GPtrArray *families;  /* char *, the rows' `family` cells */
  GArray *raw;          /* double, the rows' uncalibrated predictions */
  double raw_mape;      /* uncalibrated, all rows, % */
  double fit_mape;      /* calibrated fit rows (in sample), % */
  guint n_fit;
} FsTrainRefTable;

/* The test rows of one model family or one GPU generation.  Errors here
 * and in FsTrainRef's totals are step-time errors whatever the table's
 * metric (a throughput q measured as m is a step time m / q times the
 * measured one): negative = predicted too fast. */
typedef struct {
  char *name;
  guint n_test;
  double bias;          /* mean signed step-time error, calibrated, % */
  double mape;          /* mean absolute step-time error, calibrated, % */
  double raw_bias;      /* mean signed step-time error without the factor, % */
} FsTrainRefGroup;

typedef struct {
  GPtrArray *tables;       /* FsTrainRefTable *, by file name */
  double factor;           /* the one step-time factor (measured / predicted) */
  guint n_fit;             /* fit rows it was fitted on */
  guint n_test;
  double test_mape;        /* step-time MAPE over every table's test rows, calibrated, % */
  double test_max;         /* the largest |step-time error| of a test row, % */
  double test_bias;        /* mean signed step-time error of the test rows, % */
  double raw_test_mape;    /* the test rows' step-time MAPE without the factor, % */
  GArray *families;        /* FsTrainRefGroup, sorted by name */
  GArray *generations;     /* FsTrainRefGroup, sorted by name */
} FsTrainRef;

/* The declared keys of a training table's header (util/schema.h), named
 * "train.header" as validation/reference/training/README.md's markers name
 * them; *n receives the count.  Static, borrowed.  A table whose header has
 * a key they do not declare, lacks a required one or holds a bad value is
 * refused at that key or value. */
const FsSchemaEntry *fs_train_ref_schemas(guint *n);
/* The training-*.csv files of dir, sorted (caller frees; empty when none
 * or when dir does not exist). */
GPtrArray *fs_train_ref_list(const char *dir);
/* Runs the tables of files (paths) with sc's catalog, curves and NCCL
 * constants (sc needs FS_SCENARIO_NEED_NCCL | FS_SCENARIO_NEED_EFFICIENCY);
 * topology and workload names in the tables are found through the data
 * root (util/datadir.h).  NULL with an error (header comment).  Cost: one
 * simulated training step per row (up to seconds each). */
FsTrainRef *fs_train_ref_run(const FsScenario *sc, GPtrArray *files, GError **error);
void fs_train_ref_free(FsTrainRef *ref);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsTrainRef, fs_train_ref_free)

G_END_DECLS
