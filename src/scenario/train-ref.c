/* train-ref.c — see train-ref.h. */
#include "scenario/train-ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/datadir.h"
#include "util/error.h"

static const char *const columns = "name,workload,gpus,overrides,measured,set";

typedef struct {
  char *workload, *overrides;
  guint gpus;
  double raw;            /* the uncalibrated prediction of the table's metric */
} RowIn;

static void table_free(FsTrainRefTable *t)
{
  fs_val_result_free(t->result);
  g_free(t->generation);
  g_free(t->metric);
  g_free(t);
}

void fs_train_ref_free(FsTrainRef *ref)
{
  if (ref == NULL)
    return;
  g_ptr_array_unref(ref->tables);
  g_ptr_array_unref(ref->generations);
  g_array_unref(ref->factors);
  g_array_unref(ref->fit_rows);
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

/* The predicted metric of one row (raw, uncalibrated). */
static gboolean simulate(const FsScenario *sc, const char *topo_name, const RowIn *in,
                         gboolean time_metric, double *out, GError **error)
{
  g_autofree char *tpath = fs_datadir_find(FS_DATA_TOPOLOGIES, topo_name);
  g_autofree char *nodes = g_strdup_printf("nodes=%u", MAX(in->gpus / 8, 1u));
  const char *defs[] = { nodes, NULL };
  g_autoptr(FsTopo) topo = fs_topo_load_file(tpath, fs_scenario_catalog(sc), defs, error);
  if (topo == NULL)
    return FALSE;
  g_autofree char *wpath = fs_datadir_find(FS_DATA_WORKLOADS, in->workload);
  g_autoptr(FsWorkload) w = fs_workload_load_file(wpath, NULL, error);
  g_auto(GStrv) ov = g_strsplit(in->overrides, " ", -1);
  if (w == NULL || !fs_workload_apply_overrides(w, (const char *const *)ov, error) ||
      !fs_workload_resolve(w, in->gpus, error))
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

/* Column (1-based) of field k of a comma-separated line. */
static int field_col(char **f, guint k)
{
  int col = 1;
  for (guint i = 0; i < k; i++)
    col += (int)strlen(f[i]) + 1;
  return col;
}

static gboolean bad(GError **error, const char *file, int line, int col, const char *msg,
                    const char *arg)
{
  fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, file, line, col, msg, arg);
  return FALSE;
}

/* Reads one table and simulates its rows: t's header fields and result
 * rows (raw predictions in ins, measured values and sets filled). */
static gboolean load_table(const FsScenario *sc, const char *path, FsTrainRefTable *t, GArray *ins,
                           GError **error)
{
  g_autofree char *text = NULL;
  GError *e = NULL;
  if (!g_file_get_contents(path, &text, NULL, &e)) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_IO, path, 0, 0, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  FsValResult *r = t->result;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_autofree char *topo = NULL;
  gboolean header = FALSE;
  r->pass = TRUE;
  for (guint i = 0; lines[i] != NULL; i++) {
    char *l = lines[i];
    int ln = (int)i + 1;
    g_strchomp(l);
    if (l[0] == '\0')
      continue;
    if (l[0] == '#') {
      const char *v = strchr(l, ':');
      if (v == NULL)
        continue;
      g_autofree char *key = g_strstrip(g_strndup(l + 1, (gsize)(v - l - 1)));
      g_autofree char *val = g_strstrip(g_strdup(v + 1));
      if (strcmp(key, "topology") == 0) {
        g_free(topo);
        topo = g_strdup(val);
      } else if (strcmp(key, "generation") == 0) {
        g_free(t->generation);
        t->generation = g_strdup(val);
      } else if (strcmp(key, "source") == 0 && r->source == NULL) {
        r->source = g_strdup(val);
      } else if (strcmp(key, "metric") == 0) {
        if (strcmp(val, "step_time_s") != 0 && strcmp(val, "tokens_per_s_per_gpu") != 0)
          return bad(error, path, ln, (int)(v - l) + 3,
                     "metric \"%s\": expected step_time_s or tokens_per_s_per_gpu", val);
        g_free(t->metric);
        t->metric = g_strdup(val);
      } else if (strcmp(key, "bar") == 0) {
        char *end = NULL;
        double b = g_ascii_strtod(val, &end);
        if (g_ascii_isdigit(val[0]) && end != val && *end == '\0' && b > 0)
          r->mape = b; /* the bar, kept here until the score replaces it */
        else if (g_str_has_prefix(val, "none"))
          r->mape = -1;
        else
          return bad(error, path, ln, (int)(v - l) + 3,
                     "bar \"%s\": expected a test-set MAPE in percent, or \"none: why\"", val);
        g_free(r->bar);
        r->bar = g_strdup(val);
      }
      continue;
    }
    if (!header) {
      if (topo == NULL || t->generation == NULL || t->metric == NULL || r->bar == NULL)
        return bad(error, path, ln, 1, "%s", "a `# topology:`, `# generation:`, `# metric:` and "
                   "`# bar:` line must come before the column names");
      if (strcmp(g_strstrip(l), columns) != 0)
        return bad(error, path, ln, 1, "expected the columns %s", columns);
      header = TRUE;
      continue;
    }
    g_auto(GStrv) f = g_strsplit(l, ",", -1);
    if (g_strv_length(f) != 6) {
      fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, path, ln, 1,
                      "a row has 6 fields (%s), this one %u", columns, g_strv_length(f));
      return FALSE;
    }
    char *end = NULL;
    long gpus = strtol(f[2], &end, 10);
    if (end == f[2] || *end != '\0' || gpus < 1 || gpus > 1 << 20)
      return bad(error, path, ln, field_col(f, 2), "gpus \"%s\": expected a GPU count", f[2]);
    FsValRow row = { .row = r->rows->len, .line = ln };
    row.measured = g_ascii_strtod(f[4], &end);
    if (end == f[4] || *end != '\0' || !(row.measured > 0))
      return bad(error, path, ln, field_col(f, 4), "measured \"%s\": expected a positive number",
                 f[4]);
    if (strcmp(f[5], "fit") != 0 && strcmp(f[5], "test") != 0)
      return bad(error, path, ln, field_col(f, 5), "set \"%s\": expected fit or test", f[5]);
    row.fit = strcmp(f[5], "fit") == 0;
    RowIn in = { f[1], f[3], (guint)gpus, 0 };
    if (!simulate(sc, topo, &in, strcmp(t->metric, "step_time_s") == 0, &in.raw, &e)) {
      fs_error_prefix_at(e, path, ln, 1);
      g_propagate_error(error, e);
      return FALSE;
    }
    in.workload = in.overrides = NULL;
    g_array_append_val(ins, in);
    g_array_append_val(r->rows, row);
  }
  if (!header)
    return bad(error, path, (int)g_strv_length(lines), 1, "no column line (%s)", columns);
  return TRUE;
}

/* Step-time ratio measured / predicted (either metric). */
static double time_ratio(gboolean time_metric, double measured, double predicted)
{
  return time_metric ? measured / predicted : predicted / measured;
}

FsTrainRef *fs_train_ref_run(const FsScenario *sc, GPtrArray *files, GError **error)
{
  g_autoptr(FsTrainRef) ref = g_new0(FsTrainRef, 1);
  ref->tables = g_ptr_array_new_with_free_func((GDestroyNotify)table_free);
  ref->generations = g_ptr_array_new_with_free_func(g_free);
  ref->factors = g_array_new(FALSE, TRUE, sizeof(double));
  ref->fit_rows = g_array_new(FALSE, TRUE, sizeof(guint));
  g_autoptr(GPtrArray) raws = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  for (guint i = 0; i < files->len; i++) {
    const char *path = g_ptr_array_index(files, i);
    FsTrainRefTable *t = g_new0(FsTrainRefTable, 1);
    t->result = g_new0(FsValResult, 1);
    g_autofree char *base = g_path_get_basename(path);
    t->result->table = g_strndup(base, strlen(base) - (g_str_has_suffix(base, ".csv") ? 4 : 0));
    t->result->file = g_strdup(path);
    t->result->kind = g_strdup("training");
    t->result->rows = g_array_new(FALSE, TRUE, sizeof(FsValRow));
    t->result->ran = TRUE;
    g_ptr_array_add(ref->tables, t);
    GArray *ins = g_array_new(FALSE, TRUE, sizeof(RowIn));
    g_ptr_array_add(raws, ins);
    if (!load_table(sc, path, t, ins, error))
      return NULL;
    if (!g_ptr_array_find_with_equal_func(ref->generations, t->generation, g_str_equal, NULL))
      g_ptr_array_add(ref->generations, g_strdup(t->generation));
  }
  g_ptr_array_sort(ref->generations, cmp_str);
  /* One factor per generation: the geometric mean over its fit rows. */
  for (guint g = 0; g < ref->generations->len; g++) {
    const char *gen = g_ptr_array_index(ref->generations, g);
    double sum = 0;
    guint n = 0;
    const FsTrainRefTable *first = NULL;
    for (guint i = 0; i < ref->tables->len; i++) {
      const FsTrainRefTable *t = g_ptr_array_index(ref->tables, i);
      GArray *ins = g_ptr_array_index(raws, i);
      if (strcmp(t->generation, gen) != 0)
        continue;
      first = first != NULL ? first : t;
      gboolean tm = strcmp(t->metric, "step_time_s") == 0;
      for (guint j = 0; j < t->result->rows->len; j++) {
        const FsValRow *row = &g_array_index(t->result->rows, FsValRow, j);
        if (row->fit) {
          sum += log(time_ratio(tm, row->measured, g_array_index(ins, RowIn, j).raw));
          n++;
        }
      }
    }
    if (n == 0) {
      fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, first->result->file, 1, 1,
                      "generation \"%s\" has no fit row in any table: its factor cannot be fitted",
                      gen);
      return NULL;
    }
    double k = exp(sum / n);
    g_array_append_val(ref->factors, k);
    g_array_append_val(ref->fit_rows, n);
  }
  double all = 0;
  for (guint i = 0; i < ref->tables->len; i++) {
    FsTrainRefTable *t = g_ptr_array_index(ref->tables, i);
    GArray *ins = g_ptr_array_index(raws, i);
    FsValResult *r = t->result;
    guint g = 0;
    g_ptr_array_find_with_equal_func(ref->generations, t->generation, g_str_equal, &g);
    t->factor = g_array_index(ref->factors, double, g);
    gboolean tm = strcmp(t->metric, "step_time_s") == 0;
    double bar = r->mape, test = 0, fit = 0, raw = 0;
    for (guint j = 0; j < r->rows->len; j++) {
      FsValRow *row = &g_array_index(r->rows, FsValRow, j);
      double p = g_array_index(ins, RowIn, j).raw;
      raw += fabs(p - row->measured) / row->measured;
      row->predicted = tm ? p * t->factor : p / t->factor;
      row->error_pct = 100 * (row->predicted - row->measured) / row->measured;
      row->in_scope = !row->fit;
      if (row->fit) {
        fit += fabs(row->error_pct);
        t->n_fit++;
      } else {
        test += fabs(row->error_pct);
        r->in_scope++;
        r->max_abs_pct = MAX(r->max_abs_pct, fabs(row->error_pct));
      }
    }
    if (r->in_scope == 0) {
      fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, r->file, 1, 1,
                      "no test row: the table has nothing to score (set column)");
      return NULL;
    }
    r->mape = test / r->in_scope;
    r->pass = bar < 0 || r->mape <= bar;
    t->fit_mape = t->n_fit > 0 ? fit / t->n_fit : 0;
    t->raw_mape = r->rows->len > 0 ? 100 * raw / r->rows->len : 0;
    all += test;
    ref->n_test += r->in_scope;
  }
  ref->test_mape = ref->n_test > 0 ? all / ref->n_test : 0;
  return g_steal_pointer(&ref);
}
