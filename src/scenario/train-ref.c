/* train-ref.c — see train-ref.h. */
#include "scenario/train-ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/datadir.h"
#include "util/error.h"
#include "util/strutil.h"

static const char *const columns = "name,family,workload,gpus,overrides,measured,set";
enum { NCOLS = 7 };

static void table_free(FsTrainRefTable *t)
{
  fs_val_result_free(t->result);
  g_free(t->generation);
  g_free(t->metric);
  g_ptr_array_unref(t->names);
  g_ptr_array_unref(t->families);
  g_array_unref(t->raw);
  g_free(t);
}

static void groups_free(GArray *groups)
{
  for (guint i = 0; groups != NULL && i < groups->len; i++)
    g_free(g_array_index(groups, FsTrainRefGroup, i).name);
  if (groups != NULL)
    g_array_unref(groups);
}

void fs_train_ref_free(FsTrainRef *ref)
{
  if (ref == NULL)
    return;
  g_ptr_array_unref(ref->tables);
  groups_free(ref->families);
  groups_free(ref->generations);
  g_free(ref);
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
  return g_strcmp0(*(char *const *)a, *(char *const *)b);
}

GPtrArray *fs_train_ref_list(const char *dir)
{
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  const char *name;
  while (d != NULL && (name = g_dir_read_name(d)) != NULL)
    if (g_str_has_prefix(name, "training-") && g_str_has_suffix(name, ".csv"))
      g_ptr_array_add(files, g_build_filename(dir, name, NULL));
  g_ptr_array_sort(files, cmp_str);
  return files;
}

/* A table's system: the topology file, its -D definitions and the GPUs per
 * host (the `nodes` definition is GPUs / gpus_per_node, at least 1). */
typedef struct {
  char **topo;          /* path, then key=value definitions */
  guint gpus_per_node;
} System;

/* The predicted metric of one row (raw, uncalibrated). */
static gboolean simulate(const FsScenario *sc, const System *sys, const char *workload,
                         const char *overrides, guint gpus, gboolean time_metric, double *out,
                         GError **error)
{
  g_autofree char *tpath = fs_datadir_find(FS_DATA_TOPOLOGIES, sys->topo[0]);
  g_autoptr(GPtrArray) defs = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(defs, g_strdup_printf("nodes=%u",
                                        MAX((gpus + sys->gpus_per_node - 1) / sys->gpus_per_node,
                                            1u)));
  for (guint i = 1; sys->topo[i] != NULL; i++)
    g_ptr_array_add(defs, g_strdup(sys->topo[i]));
  g_ptr_array_add(defs, NULL);
  g_autoptr(FsTopo) topo = fs_scenario_load_topology(sc, tpath, (const char *const *)defs->pdata,
                                                     error);
  if (topo == NULL)
    return FALSE;
  g_autofree char *wpath = fs_datadir_find(FS_DATA_WORKLOADS, workload);
  g_autoptr(FsWorkload) w = fs_workload_load_file(wpath, NULL, error);
  g_auto(GStrv) ov = g_strsplit(overrides, " ", -1);
  if (w == NULL || !fs_workload_apply_overrides(w, (const char *const *)ov, error) ||
      !fs_workload_resolve(w, gpus, error))
    return FALSE;
  GError *e = NULL;
  g_autoptr(FsNcclParams) np = fs_scenario_nccl_for_topo(sc, topo, &e);
  if (e != NULL) {
    g_propagate_error(error, e);
    return FALSE;
  }
  FsTrainOptions opt;
  fs_train_options_init(&opt);
  opt.dp_isolated = TRUE;
  g_autoptr(FsTrain) t = fs_scenario_train_new(sc, topo, np, w, &opt, error);
  if (t == NULL || !fs_train_run(t, error))
    return FALSE;
  const FsTrainResult *r = fs_train_result(t);
  *out = time_metric ? fs_time_to_s(r->step_time) : r->tokens_per_s / r->gpus;
  return TRUE;
}

/* ---- the header's declared keys (validation/reference/training/README.md) ---- */

/* The typed header values; the text ones are read with fs_val_table_key. */
typedef struct {
  guint gpus_per_node;
  int metric;           /* index in metrics[] */
} Header;

static const char *const metrics[] = {"step_time_s", "tokens_per_s_per_gpu", NULL};

/* `# topology:` is a path, then key=value words. */
static gboolean valid_topology(const char *text)
{
  g_auto(GStrv) w = fs_split_words(text, " \t");
  for (guint k = 1; w[0] != NULL && w[k] != NULL; k++)
    if (strchr(w[k], '=') == NULL)
      return FALSE;
  return w[0] != NULL;
}

/* `# bar:` is a positive percentage, or "none" and why. */
static gboolean valid_bar(const char *text)
{
  char *end = NULL;
  double b = g_ascii_strtod(text, &end);
  return (g_ascii_isdigit(text[0]) && end != text && *end == '\0' && b > 0) ||
         g_str_has_prefix(text, "none");
}

#define TEXT(k, req, vdoc, text)                                                             \
  {.key = k, .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE, .required = req,           \
   .value_doc = vdoc, .doc = text}
static const FsSchemaField header_fields[] = {
  TEXT("source", TRUE, "text", "where the numbers come from (URL, or repository + path + "
       "commit, each checked with the `read_file` or `search` tool)"),
  TEXT("setup", FALSE, "text", "the system as the source states it"),
  TEXT("derivation", FALSE, "text", "how `measured` was derived when the source prints "
       "something else"),
  {.key = "topology", .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .valid = valid_topology, .form = "\"topologies/cluster.yaml node=hgx-b200\" (a file, then "
   "key=value words)", .value_doc = "a path, then `key=value` words",
   .doc = "the topology file run, with its definitions; `nodes` is set to GPUs / "
   "gpus_per_node"},
  {.key = "gpus_per_node", .type = FS_SCHEMA_UINT, .offset = G_STRUCT_OFFSET(Header,
   gpus_per_node), .min = "1", .max = "1024", .def = "8",
   .doc = "GPUs per host of that topology (GB200 NVL72 compute trays: 4)"},
  TEXT("generation", TRUE, "a GPU generation", "reported: the test-set bias per generation"),
  {.key = "metric", .type = FS_SCHEMA_ENUM, .offset = G_STRUCT_OFFSET(Header, metric),
   .required = TRUE, .names = metrics, .doc = "what `measured` is"},
  {.key = "bar", .type = FS_SCHEMA_STRING, .offset = FS_SCHEMA_NOWHERE, .required = TRUE,
   .valid = valid_bar, .form = "\"10\" (a test-set MAPE in percent) or \"none: why\"",
   .value_doc = "a percentage, or `none: why`",
   .doc = "the largest test-set MAPE accepted for the table (`none: why` for a known miss)"},
  TEXT("split", FALSE, "text", "how the `set` column was chosen"),
  TEXT("rows", FALSE, "text", "which rows of the source are here, and why others are not"),
  TEXT("runs", FALSE, "text", "how the rows are run"),
};
#undef TEXT
static const FsSchema header_schema = {"training table header", NULL, header_fields,
                                       G_N_ELEMENTS(header_fields)};
static const FsSchemaEntry schemas[] = {{"train.header", &header_schema}};

const FsSchemaEntry *fs_train_ref_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}

static gboolean bad(GError **error, const FsValTable *v, guint row, int col, const char *msg,
                    const char *arg)
{
  fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, v->file, v->row_lines[row],
                  fs_val_table_cell_col(v, row, col), msg, arg);
  return FALSE;
}

/* Reads one table and simulates its rows: t's header fields and result
 * rows (raw predictions, names and families, measured values and sets). */
static gboolean load_table(const FsScenario *sc, const char *path, FsTrainRefTable *t,
                           GError **error)
{
  Header h = {0};
  g_autoptr(FsValTable) v = fs_val_table_read(path, &header_schema, &h, error);
  if (v == NULL)
    return FALSE;
  g_autofree char *cols = g_strjoinv(",", v->cols);
  if (strcmp(cols, columns) != 0) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, path, v->header_line, 1,
                    "expected the columns %s", columns);
    return FALSE;
  }
  FsValResult *r = t->result;
  r->pass = TRUE;
  r->source = g_strdup(fs_val_table_key(v, "source"));
  t->generation = g_strdup(fs_val_table_key(v, "generation"));
  t->metric = g_strdup(metrics[h.metric]);
  const char *bar = fs_val_table_key(v, "bar");
  r->bar = g_strdup(bar);
  r->mape = g_ascii_isdigit(bar[0]) ? g_ascii_strtod(bar, NULL) : -1; /* the bar, kept here
                                                                        * until the score
                                                                        * replaces it */
  g_auto(GStrv) topo = fs_split_words(fs_val_table_key(v, "topology"), " \t");
  System sys = {topo, h.gpus_per_node};
  gboolean time_metric = strcmp(t->metric, "step_time_s") == 0;
  for (guint i = 0; i < v->nrows; i++) {
    char **f = v->cells[i];
    int ln = v->row_lines[i];
    if (f[1][0] == '\0')
      return bad(error, v, i, 1, "%s", "family: expected a model family name");
    uint64_t gpus = 0;
    if (!fs_val_table_u64(v, i, 3, &gpus, error))
      return FALSE;
    if (gpus < 1 || gpus > 1 << 20)
      return bad(error, v, i, 3, "gpus \"%s\": expected a GPU count of 1 to 1048576", f[3]);
    FsValRow row = {.row = r->rows->len, .line = ln};
    if (!fs_val_table_double(v, i, 5, &row.measured, error))
      return FALSE;
    if (!(row.measured > 0))
      return bad(error, v, i, 5, "measured \"%s\": expected a positive number", f[5]);
    if (strcmp(f[6], "fit") != 0 && strcmp(f[6], "test") != 0)
      return bad(error, v, i, 6, "set \"%s\": expected fit or test", f[6]);
    row.fit = strcmp(f[6], "fit") == 0;
    double raw = 0;
    GError *e = NULL;
    if (!simulate(sc, &sys, f[2], f[4], (guint)gpus, time_metric, &raw, &e)) {
      fs_error_prefix_at(e, path, ln, 1);
      g_propagate_error(error, e);
      return FALSE;
    }
    g_array_append_val(t->raw, raw);
    g_ptr_array_add(t->names, g_strdup(f[0]));
    g_ptr_array_add(t->families, g_strdup(f[1]));
    g_array_append_val(r->rows, row);
  }
  return TRUE;
}

/* Step-time ratio measured / predicted (either metric). */
static double time_ratio(gboolean time_metric, double measured, double predicted)
{
  return time_metric ? measured / predicted : predicted / measured;
}

/* Signed error of the prediction p with the step-time factor k, in %, in
 * the table's metric. */
static double error_pct(gboolean time_metric, double p, double k, double measured)
{
  double q = time_metric ? p * k : p / k;
  return 100 * (q - measured) / measured;
}

/* The same row's error as a step time, in % (negative: predicted too
 * fast), whichever the metric: a throughput q predicts the step time
 * measured / q times the measured one. */
static double time_error_pct(gboolean time_metric, double p, double k, double measured)
{
  return time_metric ? 100 * (p * k - measured) / measured : 100 * (measured * k / p - 1);
}

/* Adds one test row's errors to the group called name. */
static void group_add(GArray *groups, const char *name, double err, double raw_err)
{
  FsTrainRefGroup *g = NULL;
  for (guint i = 0; i < groups->len && g == NULL; i++)
    if (strcmp(g_array_index(groups, FsTrainRefGroup, i).name, name) == 0)
      g = &g_array_index(groups, FsTrainRefGroup, i);
  if (g == NULL) {
    FsTrainRefGroup n = { .name = g_strdup(name) };
    g_array_append_val(groups, n);
    g = &g_array_index(groups, FsTrainRefGroup, groups->len - 1);
  }
  g->n_test++;
  g->bias += err;
  g->mape += fabs(err);
  g->raw_bias += raw_err;
}

static gint cmp_group(gconstpointer a, gconstpointer b)
{
  return strcmp(((const FsTrainRefGroup *)a)->name, ((const FsTrainRefGroup *)b)->name);
}

static void groups_finish(GArray *groups)
{
  for (guint i = 0; i < groups->len; i++) {
    FsTrainRefGroup *g = &g_array_index(groups, FsTrainRefGroup, i);
    g->bias /= g->n_test;
    g->mape /= g->n_test;
    g->raw_bias /= g->n_test;
  }
  g_array_sort(groups, cmp_group);
}

/* See train-ref.h. Loads and simulates every table (load_table), fits one
 * step-time factor as the geometric mean of measured/simulated over the fit
 * rows of all tables, then scores each test row with it: per table MAPE and
 * pass, overall test MAPE, bias and worst row, and the groups by family and
 * generation. */
FsTrainRef *fs_train_ref_run(const FsScenario *sc, GPtrArray *files, GError **error)
{
  g_autoptr(FsTrainRef) ref = g_new0(FsTrainRef, 1);
  ref->tables = g_ptr_array_new_with_free_func((GDestroyNotify)table_free);
  ref->families = g_array_new(FALSE, TRUE, sizeof(FsTrainRefGroup));
  ref->generations = g_array_new(FALSE, TRUE, sizeof(FsTrainRefGroup));
  for (guint i = 0; i < files->len; i++) {
    const char *path = g_ptr_array_index(files, i);
    FsTrainRefTable *t = g_new0(FsTrainRefTable, 1);
    t->result = g_new0(FsValResult, 1);
    t->names = g_ptr_array_new_with_free_func(g_free);
    t->families = g_ptr_array_new_with_free_func(g_free);
    t->raw = g_array_new(FALSE, TRUE, sizeof(double));
    g_autofree char *base = g_path_get_basename(path);
    t->result->table = g_strndup(base, strlen(base) - (g_str_has_suffix(base, ".csv") ? 4 : 0));
    t->result->file = g_strdup(path);
    t->result->kind = g_strdup("training");
    t->result->rows = g_array_new(FALSE, TRUE, sizeof(FsValRow));
    t->result->ran = TRUE;
    g_ptr_array_add(ref->tables, t);
    if (!load_table(sc, path, t, error))
      return NULL;
  }
  /* One factor for every row: the geometric mean over all fit rows. */
  double sum = 0;
  for (guint i = 0; i < ref->tables->len; i++) {
    const FsTrainRefTable *t = g_ptr_array_index(ref->tables, i);
    gboolean tm = strcmp(t->metric, "step_time_s") == 0;
    for (guint j = 0; j < t->result->rows->len; j++) {
      const FsValRow *row = &g_array_index(t->result->rows, FsValRow, j);
      if (row->fit) {
        sum += log(time_ratio(tm, row->measured, g_array_index(t->raw, double, j)));
        ref->n_fit++;
      }
    }
  }
  if (ref->n_fit == 0) {
    const char *first = files->len > 0 ? g_ptr_array_index(files, 0) : "training";
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, first, 1, 1, "%s",
                    "no fit row in any table: the step-time factor cannot be fitted (set column)");
    return NULL;
  }
  ref->factor = exp(sum / ref->n_fit);
  double all = 0, bias = 0, raw_all = 0;
  for (guint i = 0; i < ref->tables->len; i++) {
    FsTrainRefTable *t = g_ptr_array_index(ref->tables, i);
    FsValResult *r = t->result;
    gboolean tm = strcmp(t->metric, "step_time_s") == 0;
    double bar = r->mape, test = 0, fit = 0, raw = 0;
    for (guint j = 0; j < r->rows->len; j++) {
      FsValRow *row = &g_array_index(r->rows, FsValRow, j);
      double p = g_array_index(t->raw, double, j);
      raw += fabs(error_pct(tm, p, 1, row->measured));
      row->predicted = tm ? p * ref->factor : p / ref->factor;
      row->error_pct = error_pct(tm, p, ref->factor, row->measured);
      row->in_scope = !row->fit;
      if (row->fit) {
        fit += fabs(row->error_pct);
        t->n_fit++;
        continue;
      }
      test += fabs(row->error_pct);
      r->in_scope++;
      r->max_abs_pct = MAX(r->max_abs_pct, fabs(row->error_pct));
      double terr = time_error_pct(tm, p, ref->factor, row->measured);
      double raw_terr = time_error_pct(tm, p, 1, row->measured);
      all += fabs(terr);
      ref->test_max = MAX(ref->test_max, fabs(terr));
      bias += terr;
      raw_all += fabs(raw_terr);
      group_add(ref->families, g_ptr_array_index(t->families, j), terr, raw_terr);
      group_add(ref->generations, t->generation, terr, raw_terr);
    }
    if (r->in_scope == 0) {
      fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, r->file, 1, 1, "%s",
                      "no test row: the table has nothing to score (set column)");
      return NULL;
    }
    r->mape = test / r->in_scope;
    r->pass = bar < 0 || r->mape <= bar;
    t->fit_mape = t->n_fit > 0 ? fit / t->n_fit : 0;
    t->raw_mape = r->rows->len > 0 ? raw / r->rows->len : 0;
    ref->n_test += r->in_scope;
  }
  ref->test_mape = all / ref->n_test;
  ref->test_bias = bias / ref->n_test;
  ref->raw_test_mape = raw_all / ref->n_test;
  groups_finish(ref->families);
  groups_finish(ref->generations);
  return g_steal_pointer(&ref);
}
