/* validate.h — `fabricsim validate`: published and measured reference
 * tables (the CSV files of validation/reference, format in validation/reference/
 * README.md), the simulator's prediction for every row, the error per row
 * and the mean absolute percentage error (MAPE) per table against the
 * table's error bar.
 *
 * A table is a CSV file whose leading `# key: value` comments say where
 * it comes from (`source`, required), which runner predicts it (`kind`,
 * required), what the prediction must achieve (`bar`, required:
 * "METRIC within N% [for size >= SIZE]") and whatever the kind needs
 * (`gpu`, `topology`, `collective`, …).  The first other line names the
 * columns; then one row per line.
 *
 * Runners register by kind in a table of callbacks (fs_val_kinds): a kind
 * prepares a context from the table's header (a model, a GPU), then
 * predicts each row's metric and reads its measured value.  Calib's own
 * kinds are in validate-kinds.c; a higher module runs a table with a
 * table of its own that adds kinds (fs_val_run_kinds: the nccl-tests kind,
 * which simulates collectives in a scenario's world, is scenario/nccl-ref.h's).
 * A table whose kind has no runner in the table given is reported as not
 * run and does not fail the run.
 *
 * The bar holds when the MAPE over the rows in its scope is at most N %.
 *
 * Ownership: FsValTable owns its strings; results own theirs.  Errors:
 * FS_VAL_ERROR with "file:line:col: sentence" for a malformed table.
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdint.h>

#include "calib/calibration.h"
#include "catalog/catalog.h"
#include "util/schema.h"

G_BEGIN_DECLS

#define FS_VAL_ERROR (fs_val_error_quark())
GQuark fs_val_error_quark(void);

typedef enum {
  FS_VAL_ERROR_PARSE,   /* a malformed table or header */
  FS_VAL_ERROR_KIND,    /* a kind's own requirement (a missing key, column) */
  FS_VAL_ERROR_IO,
} FsValError;

typedef struct {
  char *file;
  char *name;             /* file name without folder and .csv */
  GPtrArray *keys;        /* char *, header comment keys in file order */
  GPtrArray *values;      /* char *, their values (repeated keys: joined by " ") */
  GPtrArray *key_lines;   /* GINT_TO_POINTER(line) of each key */
  guint ncols;
  char **cols;            /* column names */
  int header_line;
  guint nrows;
  char ***cells;          /* nrows × ncols strings */
  int *row_lines;
  /* The parsed bar. */
  char *bar_metric;
  double bar_pct;
  uint64_t bar_min_size;  /* 0: every row */
} FsValTable;

/* Reads the reference table at path (validation/reference/README.md):
 * "# key: value" comment lines, where key is a lower-case word (letters and
 * '_'), become keys (a repeated key has its values joined by a space; other
 * comments are prose), the first other non-blank line is the CSV header and
 * the rest are rows.  The keys are checked against the reference header's
 * schema (fs_val_schemas) and its bar parsed.  Returns a new table that the
 * caller frees, or NULL with FS_VAL_ERROR_IO when the file cannot be read,
 * or FS_VAL_ERROR_PARSE (file:line:col) for a row of the wrong width, no
 * header or no rows, a key the schema does not declare or a missing
 * required one, or a malformed "bar".  Cost: linear in the file. */
FsValTable *fs_val_table_load(const char *path, GError **error);
/* The same reader for a table of another format: the keys are read
 * against header (util/schema.h; values it stores go into record, which may
 * be NULL when every field is FS_SCHEMA_NOWHERE) and no bar is parsed.  The
 * training tables (scenario/train-ref.c) are read with it. */
FsValTable *fs_val_table_read(const char *path, const FsSchema *header, gpointer record,
                              GError **error);
void fs_val_table_free(FsValTable *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsValTable, fs_val_table_free)

/* The value of a header key, or NULL. */
const char *fs_val_table_key(const FsValTable *t, const char *key);
/* The declared keys of a reference table's header (util/schema.h), with
 * the name validation/reference/README.md's markers give them
 * ("validate.header"); *n receives the count.  Static, borrowed.  A table
 * whose header has a key they do not declare, or lacks a required one, is
 * refused by fs_val_table_load at the key (or 1:1). */
const FsSchemaEntry *fs_val_schemas(guint *n);
/* The same, or an error naming the table and the key when absent. */
const char *fs_val_table_require(const FsValTable *t, const char *key, GError **error);
/* Column index by name, or -1 (with an error when error is non-NULL). */
int fs_val_table_col(const FsValTable *t, const char *name, GError **error);
/* Column (1-based) where cell col of row starts in its line, for messages. */
int fs_val_table_cell_col(const FsValTable *t, guint row, int col);
/* Typed cells with file:line:col errors. */
gboolean fs_val_table_u64(const FsValTable *t, guint row, int col, uint64_t *out, GError **error);
gboolean fs_val_table_double(const FsValTable *t, guint row, int col, double *out,
                             GError **error);

/* ---- kinds ------------------------------------------------------------------ */

/* What a kind predicts with, all borrowed (they outlive the kind's context). */
typedef struct {
  const FsCatalog *cat;       /* the catalog, calibrated */
  const FsCalibration *cal;   /* the applied calibration, or NULL, for what the
                                 catalog does not hold (GEMM curves, NCCL's constants) */
  gconstpointer world;        /* the caller's, for the kinds of its own table
                                 (scenario/nccl-ref.h: the FsScenario); opaque here,
                                 NULL for calib's kinds */
} FsValInputs;

typedef struct {
  const char *name;      /* `kind:` value */
  const char *summary;   /* one line for --list-kinds */
  /* Reads the header and builds the context. */
  gboolean (*prepare)(const FsValTable *t, const FsValInputs *in, void **ctx, GError **error);
  /* Predicted and measured value of metric for row; *size the row's size
   * in bytes for the bar's scope (0 when the row has none).  FALSE with an
   * error for a metric the kind does not predict or a bad cell. */
  gboolean (*predict)(void *ctx, const FsValTable *t, guint row, const char *metric,
                      double *predicted, double *measured, uint64_t *size, GError **error);
  void (*free_ctx)(void *ctx);
} FsValKind;

/* Calib's kinds (host-copy, gemm, attention), NULL-terminated, in listing
 * order; each also by name for the tables of other modules. */
extern const FsValKind *const fs_val_kinds[];
extern const FsValKind fs_val_kind_host_copy, fs_val_kind_gemm, fs_val_kind_attention;
/* The kind named name in fs_val_kinds, or NULL. */
const FsValKind *fs_val_kind_find(const char *name);

/* ---- running ------------------------------------------------------------------ */

typedef struct {
  guint row;
  int line;
  uint64_t size;
  double predicted, measured;
  double error_pct;       /* 100 × (predicted − measured) / measured */
  gboolean in_scope;      /* counted by the bar */
  gboolean fit;           /* a calibration-fit row (training tables): outside the bar */
} FsValRow;

typedef struct {
  char *table;            /* name */
  char *file;
  char *kind;
  char *source;
  char *bar;              /* as written */
  gboolean ran;           /* FALSE: no runner for the kind in this build */
  GArray *rows;           /* FsValRow */
  guint in_scope;
  double mape;            /* over rows in scope, % */
  double max_abs_pct;     /* over rows in scope */
  gboolean pass;          /* ran and mape <= bar (TRUE when not run) */
  char *gap;              /* the table's `gap:` line: a known shortfall of the
                           * model, recorded with today's error; a table that
                           * misses its bar with a gap line is reported as a
                           * known gap, not a failure (NULL: none) */
} FsValResult;

void fs_val_result_free(FsValResult *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsValResult, fs_val_result_free)

/* Runs one table with the kind of its `kind:` line found in kinds (NULL-
 * terminated).  NULL with error for a malformed table or a kind's error; a
 * kind not in kinds gives a result with ran = FALSE. */
FsValResult *fs_val_run_kinds(const FsValTable *t, const FsValKind *const *kinds,
                              const FsValInputs *in, GError **error);
/* fs_val_run_kinds with calib's kinds (fs_val_kinds), cat and no calibration. */
FsValResult *fs_val_run(const FsValTable *t, const FsCatalog *cat, GError **error);
/* The same with the calibration that was applied to cat (NULL: none), for
 * the figures kinds take from it outside the catalog. */
FsValResult *fs_val_run_calibrated(const FsValTable *t, const FsCatalog *cat,
                                   const FsCalibration *cal, GError **error);

/* The *.csv files of dir, sorted by name (caller frees the array). */
GPtrArray *fs_val_list_tables(const char *dir, GError **error);

/* The reference folder: fs_datadir(FS_DATA_VALIDATION) —
 * $FABRICSIM_VALIDATION if set, else <data root>/validation/reference
 * (util/datadir.h).  Borrowed. */
const char *fs_val_default_dir(void);

/* JSON of a result (table, file, kind, source, bar, ran, pass, mape_pct,
 * max_abs_pct, rows[]).  New reference. */
json_t *fs_val_result_json(const FsValResult *r);

G_END_DECLS
