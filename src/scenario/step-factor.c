/* step-factor.c — see step-factor.h. */
#include "scenario/step-factor.h"

#include <stddef.h>

#include "util/datadir.h"
#include "util/yaml.h"

/* The record the walk fills (strings borrowed from the document). */
typedef struct {
  double factor;
  guint fit_rows;
  const char *source, *description;
} Record;

static const FsSchemaField fields[] = {
  { .key = "step_factor", .type = FS_SCHEMA_DOUBLE, .offset = offsetof(Record, factor),
    .required = TRUE, .min = "0", .min_open = TRUE, .max = "10",
    .doc = "measured / predicted step time: the geometric mean over the fit rows of "
           "validation/reference/training, as `fabricsim validate` prints it "
           "(\"one step-time factor for every row, x F\")" },
  { .key = "fit_rows", .type = FS_SCHEMA_UINT, .offset = offsetof(Record, fit_rows),
    .required = TRUE, .min = "1",
    .doc = "how many published training steps (fit rows) it was fitted on" },
  { .key = "source", .type = FS_SCHEMA_STRING, .offset = offsetof(Record, source),
    .required = TRUE, .nonempty = TRUE,
    .doc = "how the factor was fitted: the rows, the command, the date" },
  { .key = "description", .type = FS_SCHEMA_STRING, .offset = offsetof(Record, description),
    .doc = "free text about the file" },
};

static const FsSchema file_schema = { "training step factor", NULL, fields, G_N_ELEMENTS(fields) };

static const FsSchemaEntry schemas[] = {
  { "step-factor.file", &file_schema },
};

const FsSchemaEntry *fs_step_factor_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}

char *fs_step_factor_path(const char *models_dir)
{
  return g_build_filename(models_dir != NULL ? models_dir : fs_datadir(FS_DATA_MODELS),
                          "calibration", "training-step.yaml", NULL);
}

FsStepFactor *fs_step_factor_load(const char *path, GError **error)
{
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_file(path, error);
  if (doc == NULL)
    return NULL;
  Record r = { 0 };
  if (!fs_schema_read(&file_schema, fs_yaml_doc_root(doc), &r, NULL, error))
    return NULL;
  FsStepFactor *f = g_new0(FsStepFactor, 1);
  f->factor = r.factor;
  f->fit_rows = r.fit_rows;
  f->source = g_strdup(r.source);
  f->path = g_strdup(path);
  return f;
}

void fs_step_factor_free(FsStepFactor *f)
{
  if (f == NULL)
    return;
  g_free(f->source);
  g_free(f->path);
  g_free(f);
}

FsStepCalibrated fs_step_factor_apply(const FsStepFactor *f, double step_s, double tokens_per_s,
                                      double mfu)
{
  return (FsStepCalibrated){ step_s * f->factor, tokens_per_s / f->factor, mfu / f->factor };
}
