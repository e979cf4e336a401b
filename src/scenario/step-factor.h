/* step-factor.h — the validated step-time factor of `fabricsim train`
 * (models/calibration/training-step.yaml): the ONE factor, measured over
 * predicted step time, that `fabricsim validate` fits on the fit rows of
 * the training reference tables (validation/reference/training; the
 * geometric mean, scenario/train-ref.h), kept as a catalog figure with its
 * source so that `train` can print the calibrated estimate beside the raw
 * model.  tests/test-train-accuracy.c checks that the file's factor is the
 * one the tables fit (within 0.1 %), so the figure cannot go stale.
 *
 * Format (keys declared by fs_step_factor_schemas, "step-factor.file",
 * documented in models/README.md): step_factor, fit_rows, source,
 * description.  The scenario loads it (fs_scenario_step_factor); a models
 * folder without the file has no factor (train then prints the raw model
 * only).
 *
 * Ownership: the caller frees the FsStepFactor (fs_step_factor_free).
 * Errors: the file's read error, or FS_YAML_ERROR_SCHEMA with
 * "file:line:col: sentence" for an unknown key, a missing one or a value
 * out of range.
 */
#pragma once

#include <glib.h>

#include "util/schema.h"

G_BEGIN_DECLS

typedef struct {
  double factor;   /* measured / predicted step time, applied to the raw step */
  guint fit_rows;  /* the published training steps it was fitted on */
  char *source;    /* how it was fitted (the `source:` line) */
  char *path;      /* the file it came from */
} FsStepFactor;

/* The file's schemas ("step-factor.file"), for tools/gen-schema-docs;
 * *n receives the count.  Static, borrowed. */
const FsSchemaEntry *fs_step_factor_schemas(guint *n);
/* The file under models_dir (NULL: the data root's models/, util/datadir.h):
 * DIR/calibration/training-step.yaml (caller frees). */
char *fs_step_factor_path(const char *models_dir);
/* Reads path.  NULL with an error (header comment). */
FsStepFactor *fs_step_factor_load(const char *path, GError **error);
void fs_step_factor_free(FsStepFactor *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsStepFactor, fs_step_factor_free)

/* A raw step time (s), token rate and MFU with the factor applied: the step
 * times f->factor, the rates divided by it. */
typedef struct {
  double step_s, tokens_per_s, mfu;
} FsStepCalibrated;
FsStepCalibrated fs_step_factor_apply(const FsStepFactor *f, double step_s, double tokens_per_s,
                                      double mfu);

G_END_DECLS
