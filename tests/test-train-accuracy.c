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
 * row.  The runner is scenario/train-ref.c, the same one `fabricsim
 * validate` uses for these tables (one implementation, not two). */
#include <check.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "report/validate.h"
#include "scenario/train-ref.h"
#include "testutil.h"

static FsScenario *scenario(void)
{
  GError *err = NULL;
  FsScenarioInputs in = { .needs = FS_SCENARIO_NEED_NCCL | FS_SCENARIO_NEED_EFFICIENCY };
  FsScenario *sc = fs_scenario_load(&in, &err);
  fs_assert_no_error(err);
  return sc;
}

START_TEST(test_train_accuracy_tables)
{
  GError *err = NULL;
  g_autoptr(FsScenario) sc = scenario();
  g_autofree char *dir = fs_test_source_path("validation/reference/training");
  g_autoptr(GPtrArray) files = fs_train_ref_list(dir);
  ck_assert_uint_ge(files->len, 3);
  g_autoptr(FsTrainRef) ref = fs_train_ref_run(sc, files, &err);
  fs_assert_no_error(err);
  g_autoptr(FsValReport) rep = fs_report_validate_new(NULL);
  fs_report_validate_training(rep, ref);
  g_autoptr(GString) out = g_string_new(NULL);
  guint failed = fs_report_validate_finish(rep, out, FS_REPORT_TEXT);
  printf("\n%s", out->str);
  ck_assert_uint_eq(ref->tables->len, files->len);
  for (guint i = 0; i < ref->tables->len; i++) {
    const FsTrainRefTable *t = g_ptr_array_index(ref->tables, i);
    guint fit = 0;
    for (guint j = 0; j < t->result->rows->len; j++) {
      const FsValRow *row = &g_array_index(t->result->rows, FsValRow, j);
      ck_assert(row->fit != row->in_scope); /* the bar counts exactly the test rows */
      fit += row->fit;
    }
    ck_assert_uint_eq(fit, t->n_fit);
    ck_assert_uint_gt(t->result->in_scope, 0);
  }
  ck_assert_msg(failed == 0, "a table's test-set MAPE is past its bar (table above)");
}
END_TEST

/* A malformed table: one located error, nothing run. */
static void expect_error(const char *text, const char *where, const char *what)
{
  g_autofree char *dir = g_dir_make_tmp("fs-train-ref-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "training-bad.csv", NULL);
  ck_assert(g_file_set_contents(path, text, -1, NULL));
  g_autoptr(FsScenario) sc = scenario();
  g_autoptr(GPtrArray) files = fs_train_ref_list(dir);
  ck_assert_uint_eq(files->len, 1);
  GError *err = NULL;
  g_autoptr(FsTrainRef) ref = fs_train_ref_run(sc, files, &err);
  ck_assert_ptr_null(ref);
  ck_assert_ptr_nonnull(err);
  g_autofree char *loc = g_strdup_printf("%s:%s: ", path, where);
  ck_assert_msg(g_str_has_prefix(err->message, loc) && strstr(err->message, what) != NULL,
                "got \"%s\", expected \"%s...%s\"", err->message, loc, what);
  g_error_free(err);
  g_unlink(path);
  g_rmdir(dir);
}

#define HEAD "# source: x\n# topology: topologies/dgx-h100-ib-ndr.yaml\n# generation: h100\n" \
             "# metric: step_time_s\n# bar: 10\nname,workload,gpus,overrides,measured,set\n"

START_TEST(test_train_ref_bad_tables)
{
  expect_error(HEAD "a,gpt3-175b.yaml,64,--tp=8,1.5,maybe\n", "7:32", "set \"maybe\"");
  expect_error(HEAD "a,gpt3-175b.yaml,sixty,--tp=8,1.5,fit\n", "7:18", "gpus \"sixty\"");
  expect_error(HEAD "a,gpt3-175b.yaml,64,--tp=8,-1,test\n", "7:28", "measured \"-1\"");
  expect_error(HEAD "a,gpt3-175b.yaml,64\n", "7:1", "6 fields");
  expect_error("# source: x\n# topology: t.yaml\n# generation: h100\n# metric: step_time_s\n"
               "# bar: tight\n", "5:8", "bar \"tight\"");
  expect_error("# source: x\n# metric: mfu\n", "2:11", "metric \"mfu\"");
  expect_error("# source: x\nname,workload,gpus,overrides,measured,set\n", "2:1", "# topology:");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("train-accuracy");
  TCase *tc = tcase_create("test_train_accuracy_tables");
  tcase_add_test(tc, test_train_ref_bad_tables);
  tcase_add_test(tc, test_train_accuracy_tables);
  tcase_set_timeout(tc, 900);
  suite_add_tcase(s, tc);
  return fs_test_run_suite(s);
}
