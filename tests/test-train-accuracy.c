/* test-train-accuracy.c — predicted vs published training throughput, scored
 * out of sample.
 *
 * Reads every validation/reference/training/training-*.csv (format in
 * validation/reference/training/README.md): rows of (name, workload preset,
 * GPUs, Megatron-style overrides, measured value, set) with a header naming
 * the topology, the GPU generation, the metric (step_time_s or
 * tokens_per_s_per_gpu) and the bar (test-set MAPE in percent, or "none").
 * The `set` column, fixed in the files, puts each row in the fit set or the
 * test set.  Each row is simulated (data-parallel collectives timed alone,
 * --dp-isolated, to keep the test short).  One calibration per GPU
 * generation and no per-row tuning: a single time factor per generation,
 * the geometric mean of measured/predicted step time over that
 * generation's FIT rows only.  The score is the test rows' error with that
 * factor (they took no part in the fit); the fit rows' in-sample error is
 * printed beside it for comparison.  Fails when a table's test-set MAPE
 * exceeds its bar, or when a generation has no fit row or a table no test
 * row. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "coll/nccl-params.h"
#include "compute/efficiency.h"
#include "testutil.h"
#include "topo/topo.h"
#include "workload/executor.h"

typedef struct {
  char *table, *name, *generation;
  gboolean time_metric;
  gboolean test;         /* in the test set (else the fit set) */
  double bar;            /* < 0: none */
  double measured, predicted;
} Row;

static void row_clear(Row *r)
{
  g_free(r->table);
  g_free(r->name);
  g_free(r->generation);
}

/* Runs one row; returns the predicted metric. */
static double simulate(FsCatalog *cat, FsEfficiency *eff, FsNcclParams *np, const char *topo_file,
                       const char *workload, guint gpus, const char *overrides, gboolean time_metric)
{
  GError *err = NULL;
  g_autofree char *tpath = fs_test_source_path(topo_file);
  g_autofree char *nodes = g_strdup_printf("nodes=%u", MAX(gpus / 8, 1u));
  const char *defs[] = { nodes, NULL };
  g_autoptr(FsTopo) topo = fs_topo_load_file(tpath, cat, defs, &err);
  fs_assert_no_error(err);
  g_autofree char *wrel = g_build_filename("workloads", workload, NULL);
  g_autofree char *wpath = fs_test_source_path(wrel);
  g_autoptr(FsWorkload) w = fs_workload_load_file(wpath, NULL, &err);
  fs_assert_no_error(err);
  g_auto(GStrv) ov = g_strsplit(overrides, " ", -1);
  ck_assert(fs_workload_apply_overrides(w, (const char *const *)ov, &err));
  fs_assert_no_error(err);
  ck_assert_msg(fs_workload_resolve(w, gpus, &err), "%s", err ? err->message : "");
  FsTrainOptions opt;
  fs_train_options_init(&opt);
  opt.dp_isolated = TRUE;
  g_autoptr(FsTrain) t = fs_train_new(topo, w, eff, np, &opt, &err);
  fs_assert_no_error(err);
  ck_assert(fs_train_run(t, &err));
  const FsTrainResult *r = fs_train_result(t);
  double s = fs_time_to_s(r->step_time);
  return time_metric ? s : r->tokens_per_s / r->gpus;
}

static void load_table(const char *path, GArray *rows, FsCatalog *cat, FsEfficiency *eff,
                       FsNcclParams *np)
{
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_autofree char *topo = NULL, *gen = NULL;
  gboolean time_metric = TRUE;
  double bar = -1;
  gboolean header = FALSE;
  g_autofree char *base = g_path_get_basename(path);
  for (guint i = 0; lines[i] != NULL; i++) {
    const char *l = lines[i];
    if (l[0] == '\0')
      continue;
    if (g_str_has_prefix(l, "# topology: "))
      topo = g_strstrip(g_strdup(l + 12));
    else if (g_str_has_prefix(l, "# generation: "))
      gen = g_strstrip(g_strdup(l + 14));
    else if (g_str_has_prefix(l, "# metric: "))
      time_metric = strstr(l, "step_time_s") != NULL;
    else if (g_str_has_prefix(l, "# bar: "))
      bar = g_ascii_isdigit(l[7]) ? g_ascii_strtod(l + 7, NULL) : -1;
    if (l[0] == '#')
      continue;
    if (!header) {
      header = TRUE;
      continue;
    }
    g_auto(GStrv) f = g_strsplit(l, ",", -1);
    ck_assert_msg(g_strv_length(f) == 6, "%s: row %u has not 6 fields", path, i + 1);
    ck_assert_msg(topo != NULL && gen != NULL, "%s: no topology or generation line", path);
    g_strstrip(f[5]);
    ck_assert_msg(strcmp(f[5], "fit") == 0 || strcmp(f[5], "test") == 0,
                  "%s: row %u: set is \"%s\", expected fit or test", path, i + 1, f[5]);
    Row r = { g_strdup(base), g_strdup(f[0]), g_strdup(gen), time_metric, strcmp(f[5], "test") == 0,
              bar, g_ascii_strtod(f[4], NULL), 0 };
    r.predicted = simulate(cat, eff, np, topo, f[1], (guint)atoi(f[2]), f[3], time_metric);
    g_array_append_val(rows, r);
  }
}

/* Step-time ratio measured / predicted (either metric). */
static double time_ratio(const Row *r)
{
  return r->time_metric ? r->measured / r->predicted : r->predicted / r->measured;
}

START_TEST(test_train_accuracy_tables)
{
  GError *err = NULL;
  g_autoptr(FsCatalog) cat = fs_catalog_load_default(NULL, &err);
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, &err);
  g_autoptr(FsNcclParams) np = fs_nccl_params_load_default(&err);
  fs_assert_no_error(err);
  g_autofree char *dir = fs_test_source_path("validation/reference/training");
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL)
    if (g_str_has_prefix(name, "training-") && g_str_has_suffix(name, ".csv"))
      g_ptr_array_add(files, g_build_filename(dir, name, NULL));
  g_ptr_array_sort(files, (GCompareFunc)g_strcmp0);
  ck_assert_uint_ge(files->len, 3);
  GArray *rows = g_array_new(FALSE, FALSE, sizeof(Row));
  for (guint i = 0; i < files->len; i++)
    load_table(g_ptr_array_index(files, i), rows, cat, eff, np);
  /* One factor per GPU generation, fitted on the fit rows only. */
  g_autoptr(GHashTable) sum = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
  for (guint i = 0; i < rows->len; i++) {
    Row *r = &g_array_index(rows, Row, i);
    if (r->test)
      continue;
    double *acc = g_hash_table_lookup(sum, r->generation);
    if (acc == NULL) {
      acc = g_new0(double, 2);
      g_hash_table_insert(sum, r->generation, acc);
    }
    acc[0] += log(time_ratio(r));
    acc[1] += 1;
  }
  printf("\n%-34s %-16s %-4s %12s %12s %8s %8s\n", "table", "row", "set", "measured", "predicted",
         "raw err", "cal err");
  const char *table = NULL;
  double ape[2] = {0, 0}, ape_raw = 0, all_test = 0;
  guint n[2] = {0, 0}, n_all = 0, n_test_all = 0;
  gboolean failed = FALSE;
  for (guint i = 0; i <= rows->len; i++) {
    Row *r = i < rows->len ? &g_array_index(rows, Row, i) : NULL;
    if (table != NULL && (r == NULL || strcmp(r->table, table) != 0)) {
      const Row *prev = &g_array_index(rows, Row, i - 1);
      ck_assert_msg(n[1] > 0, "%s has no test row", table);
      double mape = 100 * ape[1] / n[1];
      printf("  %s: test-set MAPE %.1f%% over %u rows with the %s calibration (fit rows in sample: "
             "%.1f%% over %u; raw, all rows: %.1f%%); bar %s%.0f%%\n", table, mape, n[1],
             prev->generation, n[0] ? 100 * ape[0] / n[0] : 0.0, n[0], 100 * ape_raw / n_all,
             prev->bar < 0 ? "none, was " : "", prev->bar < 0 ? mape : prev->bar);
      if (prev->bar >= 0 && mape > prev->bar)
        failed = TRUE;
      ape[0] = ape[1] = ape_raw = 0;
      n[0] = n[1] = n_all = 0;
    }
    if (r == NULL)
      break;
    table = r->table;
    double *acc = g_hash_table_lookup(sum, r->generation);
    ck_assert_msg(acc != NULL, "generation %s has no fit row", r->generation);
    double k = exp(acc[0] / acc[1]);
    double cal = r->time_metric ? r->predicted * k : r->predicted / k;
    double e_raw = (r->predicted - r->measured) / r->measured;
    double e = (cal - r->measured) / r->measured;
    printf("%-34s %-16s %-4s %12.3f %12.3f %+7.1f%% %+7.1f%%\n", r->table, r->name,
           r->test ? "test" : "fit", r->measured, r->predicted, 100 * e_raw, 100 * e);
    ape[r->test] += fabs(e);
    n[r->test]++;
    ape_raw += fabs(e_raw);
    n_all++;
    if (r->test) {
      all_test += fabs(e);
      n_test_all++;
    }
  }
  printf("  all tables: test-set MAPE %.1f%% over %u rows\n", 100 * all_test / MAX(n_test_all, 1u),
         n_test_all);
  GList *gens = g_list_sort(g_hash_table_get_keys(sum), (GCompareFunc)g_strcmp0);
  for (GList *l = gens; l != NULL; l = l->next) {
    double *acc = g_hash_table_lookup(sum, l->data);
    printf("  calibration %s: step times × %.3f (fitted over %.0f fit rows)\n", (char *)l->data,
           exp(acc[0] / acc[1]), acc[1]);
  }
  g_list_free(gens);
  for (guint i = 0; i < rows->len; i++)
    row_clear(&g_array_index(rows, Row, i));
  g_array_unref(rows);
  ck_assert_msg(!failed, "a table's test-set MAPE is past its bar (table above)");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("train-accuracy");
  TCase *tc = tcase_create("test_train_accuracy_tables");
  tcase_add_test(tc, test_train_accuracy_tables);
  tcase_set_timeout(tc, 900);
  suite_add_tcase(s, tc);
  return fs_test_run_suite(s);
}
