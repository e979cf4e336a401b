/* train-ref.c — see train-ref.h. */
#include "scenario/train-ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/datadir.h"
#include "util/error.h"

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
  g_autoptr(FsTopo) topo = fs_topo_load_file(tpath, fs_scenario_catalog(sc),
                                             (const char *const *)defs->pdata, error);
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

/* A header line `# key: value` (key and value stripped, caller frees);
 * FALSE for a comment without a colon. */
static gboolean header_kv(const char *l, char **key, char **val, int *val_col)
{
  const char *v = strchr(l, ':');
  if (v == NULL)
    return FALSE;
  *key = g_strstrip(g_strndup(l + 1, (gsize)(v - l - 1)));
  *val = g_strstrip(g_strdup(v + 1));
  *val_col = (int)(v - l) + 3;
  return TRUE;
}

/* Reads one table and simulates its rows: t's header fields and result
 * rows (raw predictions, names and families, measured values and sets). */
static gboolean load_table(const FsScenario *sc, const char *path, FsTrainRefTable *t,
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
  g_auto(GStrv) topo = NULL;
  System sys = { NULL, 8 };
  gboolean header = FALSE;
  r->pass = TRUE;
  for (guint i = 0; lines[i] != NULL; i++) {
    char *l = lines[i];
    int ln = (int)i + 1;
    g_strchomp(l);
    if (l[0] == '\0')
      continue;
    if (l[0] == '#') {
      g_autofree char *key = NULL, *val = NULL;
      int vc = 0;
      if (!header_kv(l, &key, &val, &vc))
        continue;
      if (strcmp(key, "topology") == 0) {
        g_strfreev(topo);
        topo = g_strsplit_set(val, " \t", -1);
        guint n = 0;
        for (guint k = 0; topo[k] != NULL; k++)
          if (topo[k][0] != '\0')
            topo[n++] = topo[k];
          else
            g_free(topo[k]);
        topo[n] = NULL;
        for (guint k = 1; k < n; k++)
          if (strchr(topo[k], '=') == NULL)
            return bad(error, path, ln, vc, "topology definition \"%s\": expected key=value",
                       topo[k]);
        if (n == 0)
          return bad(error, path, ln, vc, "%s", "topology: expected a topology file");
      } else if (strcmp(key, "gpus_per_node") == 0) {
        char *end = NULL;
        long g = strtol(val, &end, 10);
        if (end == val || *end != '\0' || g < 1 || g > 1024)
          return bad(error, path, ln, vc, "gpus_per_node \"%s\": expected a count of 1 to 1024",
                     val);
        sys.gpus_per_node = (guint)g;
      } else if (strcmp(key, "generation") == 0) {
        g_free(t->generation);
        t->generation = g_strdup(val);
      } else if (strcmp(key, "source") == 0 && r->source == NULL) {
        r->source = g_strdup(val);
      } else if (strcmp(key, "metric") == 0) {
        if (strcmp(val, "step_time_s") != 0 && strcmp(val, "tokens_per_s_per_gpu") != 0)
          return bad(error, path, ln, vc,
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
          return bad(error, path, ln, vc,
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
      sys.topo = topo;
      header = TRUE;
      continue;
    }
    g_auto(GStrv) f = g_strsplit(l, ",", -1);
    if (g_strv_length(f) != NCOLS) {
      fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, path, ln, 1,
                      "a row has %d fields (%s), this one %u", NCOLS, columns, g_strv_length(f));
      return FALSE;
    }
    if (f[1][0] == '\0')
      return bad(error, path, ln, field_col(f, 1), "%s", "family: expected a model family name");
    char *end = NULL;
    long gpus = strtol(f[3], &end, 10);
    if (end == f[3] || *end != '\0' || gpus < 1 || gpus > 1 << 20)
      return bad(error, path, ln, field_col(f, 3), "gpus \"%s\": expected a GPU count", f[3]);
    FsValRow row = { .row = r->rows->len, .line = ln };
    row.measured = g_ascii_strtod(f[5], &end);
    if (end == f[5] || *end != '\0' || !(row.measured > 0))
      return bad(error, path, ln, field_col(f, 5), "measured \"%s\": expected a positive number",
                 f[5]);
    if (strcmp(f[6], "fit") != 0 && strcmp(f[6], "test") != 0)
      return bad(error, path, ln, field_col(f, 6), "set \"%s\": expected fit or test", f[6]);
    row.fit = strcmp(f[6], "fit") == 0;
    double raw = 0;
    if (!simulate(sc, &sys, f[2], f[4], (guint)gpus, strcmp(t->metric, "step_time_s") == 0, &raw,
                  &e)) {
      fs_error_prefix_at(e, path, ln, 1);
      g_propagate_error(error, e);
      return FALSE;
    }
    g_array_append_val(t->raw, raw);
    g_ptr_array_add(t->names, g_strdup(f[0]));
    g_ptr_array_add(t->families, g_strdup(f[1]));
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
