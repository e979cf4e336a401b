/* test-train-accuracy.c — predicted vs published training step times,
 * scored out of sample.
 *
 * Reads every validation/reference/training/training-*.csv (format in
 * validation/reference/training/README.md): rows of (name, model family,
 * workload preset, GPUs, Megatron-style overrides, measured value, set)
 * with a header naming the topology, the GPU generation, the metric
 * (step_time_s or tokens_per_s_per_gpu) and the bar (test-set MAPE in
 * percent).  The `set` column, fixed in the files, puts each row in the
 * fit set or the test set.  Each row is simulated (data-parallel
 * collectives timed alone, --dp-isolated, to keep the test short).  ONE
 * step-time factor for every row — no per-row, per-family or
 * per-generation factor — the geometric mean of measured/predicted step
 * time over the FIT rows only; the score is the test rows' error with it
 * (they took no part in the fit).  Fails when a table's test-set MAPE
 * exceeds its bar, when the step-time MAPE over all test rows or a model
 * family's or GPU generation's test-set bias exceeds the bars below, or
 * when the tables no longer cover what issue #20 asks (60 rows, A100, H100,
 * B200 and GB200 each in both sets).  The runner is scenario/train-ref.c,
 * the same one `fabricsim validate` uses for these tables. */
#include <check.h>
#include <math.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report/validate.h"
#include "scenario/train-ref.h"
#include "testutil.h"
#include "workload/spec.h"

/* Issue #20's bars: test-set step-time MAPE <= 10 % and no model family
 * biased by more than 10 % either way.  Met on 2026-11-27 with the Blackwell
 * GEMM curves (models/compute/blackwell.yaml) and the asynchronous SP
 * backward collectives: 9.83 % over 35 test rows (10.80 % before), family
 * biases within -6.3 % (llama2) and +5.5 % (llama3), GPU generations within
 * -6.0 % (B200, -13.2 % before) and +7.0 % (GB200), so every generation is
 * held to the same 10 %.  Figures: validation/reference/training/README.md. */
#define MAPE_BAR 10.0
#define BIAS_FAMILY_BAR 10.0
#define BIAS_GEN_BAR 10.0
/* How far the catalog's step factor may be from the fit (relative). */
#define STEP_FACTOR_TOL 1e-3

static FsScenario *scenario(void)
{
  GError *err = NULL;
  FsScenarioInputs in = { .needs = FS_SCENARIO_NEED_NCCL | FS_SCENARIO_NEED_EFFICIENCY };
  FsScenario *sc = fs_scenario_load(&in, &err);
  fs_assert_no_error(err);
  return sc;
}

/* A table of the reduced set whose rows all need more GPUs than this keeps
 * one row: a cluster that large costs seconds under the sanitizers whatever
 * the row (Llama 3 405B on 8,192 and 16,384 GPUs: 9 and 18 s of CPU). */
#define REDUCED_MAX_GPUS 4096

/* The reduced set (fs_test_reduced: the sanitizer build): a copy of each
 * table in a fresh folder with its header and two rows, the fit row and the
 * test row with the fewest GPUs (the first of equals); a table whose rows
 * all need more than REDUCED_MAX_GPUS keeps only its smallest row, as its
 * test row (the factor is fitted on the other tables' fit rows).  Every
 * table, system, generation, metric and both sets still run; the bars are
 * the plain build's.  Returns the copies' paths; *dir is the folder to
 * remove. */
static GPtrArray *reduced_tables(const GPtrArray *files, char **dir)
{
  *dir = g_dir_make_tmp("fs-train-reduced-XXXXXX", NULL);
  ck_assert_ptr_nonnull(*dir);
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < files->len; i++) {
    const char *path = g_ptr_array_index(files, i);
    g_autofree char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autoptr(GString) copy = g_string_new(NULL);
    const char *best[2] = { NULL, NULL }; /* fit, test */
    guint64 best_gpus[2] = { G_MAXUINT64, G_MAXUINT64 };
    gboolean header = FALSE;
    for (guint j = 0; lines[j] != NULL; j++) {
      const char *l = lines[j];
      if (l[0] == '#' || !header) {
        g_string_append_printf(copy, "%s\n", l);
        header = header || (l[0] != '#' && l[0] != '\0');
        continue;
      }
      g_auto(GStrv) f = g_strsplit(l, ",", -1);
      if (g_strv_length(f) != 7)
        continue; /* blank; a malformed row fails the whole run below */
      int set = strcmp(f[6], "fit") == 0 ? 0 : 1;
      guint64 gpus = g_ascii_strtoull(f[3], NULL, 10);
      if (gpus < best_gpus[set]) {
        best_gpus[set] = gpus;
        best[set] = l;
      }
    }
    if (MIN(best_gpus[0], best_gpus[1]) > REDUCED_MAX_GPUS) {
      const char *row = best[best_gpus[0] < best_gpus[1] ? 0 : 1];
      const char *comma = strrchr(row, ',');
      g_string_append_printf(copy, "%.*s,test\n", (int)(comma - row), row);
    } else {
      for (int s = 0; s < 2; s++)
        if (best[s] != NULL)
          g_string_append_printf(copy, "%s\n", best[s]);
    }
    g_autofree char *base = g_path_get_basename(path);
    char *dst = g_build_filename(*dir, base, NULL);
    ck_assert(g_file_set_contents(dst, copy->str, -1, NULL));
    g_ptr_array_add(out, dst);
  }
  return out;
}

static gboolean has_set(const FsTrainRef *ref, const char *generation, gboolean fit)
{
  for (guint i = 0; i < ref->tables->len; i++) {
    const FsTrainRefTable *t = g_ptr_array_index(ref->tables, i);
    for (guint j = 0; j < t->result->rows->len; j++)
      if (strcmp(t->generation, generation) == 0 &&
          g_array_index(t->result->rows, FsValRow, j).fit == fit)
        return TRUE;
  }
  return FALSE;
}

START_TEST(test_train_accuracy_tables)
{
  GError *err = NULL;
  g_autoptr(FsScenario) sc = scenario();
  g_autofree char *dir = fs_test_source_path("validation/reference/training");
  g_autoptr(GPtrArray) files = fs_train_ref_list(dir);
  ck_assert_uint_ge(files->len, 3);
  const gboolean reduced = fs_test_reduced();
  g_autofree char *rdir = NULL;
  if (reduced) {
    GPtrArray *r = reduced_tables(files, &rdir);
    g_ptr_array_unref(files);
    files = r;
  }
  g_autoptr(FsTrainRef) ref = fs_train_ref_run(sc, files, &err);
  fs_assert_no_error(err);
  if (reduced) {
    for (guint i = 0; i < files->len; i++)
      g_unlink(g_ptr_array_index(files, i));
    g_rmdir(rdir);
  }
  g_autoptr(FsValReport) rep = fs_report_validate_new(NULL, NULL);
  fs_report_validate_training(rep, ref);
  g_autoptr(GString) out = g_string_new(NULL);
  guint failed = fs_report_validate_finish(rep, out, FS_REPORT_TEXT);
  printf("\n%s", out->str);
  ck_assert_uint_eq(ref->tables->len, files->len);
  guint rows = 0;
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
    rows += t->result->rows->len;
  }
  /* What the issue asks the tables to cover (the reduced set: two rows a
   * table, one for a table of large clusters only). */
  ck_assert_uint_ge(rows, reduced ? 2 * files->len - 1 : 60);
  ck_assert_uint_eq(ref->n_fit + ref->n_test, rows);
  const char *gens[] = { "a100", "h100", "b200", "gb200" };
  for (guint g = 0; g < G_N_ELEMENTS(gens); g++)
    ck_assert_msg(has_set(ref, gens[g], TRUE) && has_set(ref, gens[g], FALSE),
                  "generation %s lacks fit or test rows", gens[g]);
  /* One factor, fitted on the fit rows: every prediction is raw x factor. */
  ck_assert(ref->factor > 0.5 && ref->factor < 2);
  if (reduced) /* the bars below are the whole tables': the plain build's */
    return;
  /* The catalog's figure (models/calibration/training-step.yaml), which
   * `fabricsim train` prints its validated estimate with, is this fit. */
  const FsStepFactor *sf = fs_scenario_step_factor(sc);
  ck_assert_msg(sf != NULL, "models/calibration/training-step.yaml is missing");
  ck_assert_msg(fabs(sf->factor / ref->factor - 1) <= STEP_FACTOR_TOL && sf->fit_rows == ref->n_fit,
                "update models/calibration/training-step.yaml: fitted step_factor %.4f on %u fit "
                "rows (the file says %.4f on %u)", ref->factor, ref->n_fit, sf->factor, sf->fit_rows);
  ck_assert_msg(ref->test_mape <= MAPE_BAR, "test-set step-time MAPE %.2f %% > %.0f %%",
                ref->test_mape, MAPE_BAR);
  for (guint i = 0; i < ref->families->len; i++) {
    const FsTrainRefGroup *g = &g_array_index(ref->families, FsTrainRefGroup, i);
    ck_assert_msg(fabs(g->bias) <= BIAS_FAMILY_BAR, "family %s biased %+.2f %%", g->name, g->bias);
  }
  for (guint i = 0; i < ref->generations->len; i++) {
    const FsTrainRefGroup *g = &g_array_index(ref->generations, FsTrainRefGroup, i);
    ck_assert_msg(fabs(g->bias) <= BIAS_GEN_BAR, "generation %s biased %+.2f %%", g->name, g->bias);
  }
  ck_assert_msg(failed == 0, "a table's test-set MAPE is past its bar (table above)");
}
END_TEST

/* ERR is an error located at PATH:WHERE whose sentence names WHAT; frees it. */
static void expect_located(GError *err, const char *path, const char *where, const char *what)
{
  ck_assert_ptr_nonnull(err);
  g_autofree char *loc = g_strdup_printf("%s:%s: ", path, where);
  ck_assert_msg(g_str_has_prefix(err->message, loc) && strstr(err->message, what) != NULL,
                "got \"%s\", expected \"%s...%s\"", err->message, loc, what);
  g_error_free(err);
}

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
  expect_located(err, path, where, what);
  g_unlink(path);
  g_rmdir(dir);
}

/* What issue #20 asks of the tables themselves, read from the files without
 * simulating: at least 60 rows, from 8 or fewer to 16,384 or more GPUs,
 * 16-bit (bf16 or fp16) and FP8 rows (each row's datatype is its workload
 * preset's with the row's overrides applied, as the runner applies them),
 * and no table drawn from the sources kept for independent checking
 * (NVIDIA/dgxc-benchmarking, VIA-Research/vTrain; validation/reference/README.md). */
START_TEST(test_train_tables_cover_issue)
{
  g_autofree char *dir = fs_test_source_path("validation/reference/training");
  g_autoptr(GPtrArray) files = fs_train_ref_list(dir);
  guint rows = 0, fp8 = 0, wide = 0;
  guint64 min_gpus = G_MAXUINT64, max_gpus = 0;
  for (guint i = 0; i < files->len; i++) {
    const char *path = g_ptr_array_index(files, i);
    g_autofree char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    g_autofree char *lower = g_ascii_strdown(text, -1);
    ck_assert_msg(strstr(lower, "dgxc-benchmarking") == NULL && strstr(lower, "vtrain") == NULL,
                  "%s names a source kept for independent checking", path);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    gboolean header = FALSE;
    for (guint j = 0; lines[j] != NULL; j++) {
      const char *l = lines[j];
      if (l[0] == '#' || l[0] == '\0' || !header) {
        header = header || (l[0] != '#' && l[0] != '\0');
        continue;
      }
      g_auto(GStrv) f = g_strsplit(l, ",", -1);
      ck_assert_msg(g_strv_length(f) == 7, "%s:%u: 7 cells expected", path, j + 1);
      guint64 gpus = g_ascii_strtoull(f[3], NULL, 10);
      min_gpus = MIN(min_gpus, gpus);
      max_gpus = MAX(max_gpus, gpus);
      g_autofree char *wpath = fs_test_source_path("workloads");
      g_autofree char *wfile = g_build_filename(wpath, f[2], NULL);
      GError *err = NULL;
      g_autoptr(FsWorkload) w = fs_workload_load_file(wfile, NULL, &err);
      fs_assert_no_error(err);
      g_auto(GStrv) args = g_strsplit_set(g_strstrip(f[4]), " ", -1);
      g_autoptr(GPtrArray) argv = g_ptr_array_new();
      for (guint k = 0; args[k] != NULL; k++)
        if (args[k][0] != '\0')
          g_ptr_array_add(argv, args[k]);
      g_ptr_array_add(argv, NULL);
      ck_assert_msg(fs_workload_apply_overrides(w, (const char *const *)argv->pdata, &err),
                    "%s:%u: %s", path, j + 1, err ? err->message : "");
      fp8 += w->dtype == FS_DTYPE_FP8;
      wide += w->dtype == FS_DTYPE_BF16 || w->dtype == FS_DTYPE_FP16;
      rows++;
    }
  }
  ck_assert_uint_ge(rows, 60);
  ck_assert_uint_le(min_gpus, 8);
  ck_assert_uint_ge(max_gpus, 16384);
  ck_assert_uint_gt(fp8, 0);
  ck_assert_uint_gt(wide, 0);
  ck_assert_uint_eq(fp8 + wide, rows);
}
END_TEST

#define SRC "# source: x\n"
#define TOPO "# topology: topologies/dgx-h100-ib-ndr.yaml\n"
#define GEN "# generation: h100\n"
#define METRIC "# metric: step_time_s\n"
#define BAR "# bar: 10\n"
#define COLS "name,family,workload,gpus,overrides,measured,set\n"
#define HEAD SRC TOPO GEN METRIC BAR COLS

START_TEST(test_train_ref_bad_tables)
{
  expect_error(HEAD "a,gpt,gpt3-175b.yaml,64,--tp=8,1.5,maybe\n", "7:36", "set \"maybe\"");
  expect_error(HEAD "a,gpt,gpt3-175b.yaml,sixty,--tp=8,1.5,fit\n", "7:22",
               "\"gpus\": expected an integer, got \"sixty\"");
  expect_error(HEAD "a,gpt,gpt3-175b.yaml,64,--tp=8,-1,test\n", "7:32", "measured \"-1\"");
  expect_error(HEAD "a,,gpt3-175b.yaml,64,--tp=8,1.5,test\n", "7:3", "family");
  expect_error(HEAD "a,gpt,gpt3-175b.yaml,64\n", "7:1", "names 7");
  expect_error(HEAD "a,gpt3-175b.yaml,64,--tp=8,1.5,test\n", "7:1", "names 7");
  expect_error(SRC TOPO GEN METRIC "# bar: tight\n", "5:8", "\"tight\" in \"bar\"");
  expect_error(SRC TOPO GEN "# metric: mfu\n" BAR COLS "a,gpt,gpt3-175b.yaml,64,,1.5,fit\n",
               "4:11", "unknown metric \"mfu\"");
  expect_error(SRC COLS "a,gpt,gpt3-175b.yaml,64,,1.5,fit\n", "1:1", "missing key \"topology\"");
  expect_error(SRC "# topology: cluster.yaml node\n" GEN METRIC BAR, "2:13",
               "in \"topology\" is not of the form");
  expect_error(HEAD "# gpus_per_node: 0\n", "7:18", "expected an integer from 1 to 1024, got 0");
  expect_error(SRC TOPO GEN METRIC BAR "# generaton: b200\n", "6:3",
               "unknown key \"generaton\" in training table header; did you mean \"generation\"?");
  expect_error(SRC TOPO GEN METRIC BAR "name,family,workload,gpus,overrides,measured\n"
               "a,gpt,gpt3-175b.yaml,64,,1.5\n", "6:1", "expected the columns");
  /* Every row a test row: nothing to fit the factor on (one small row is run first). */
  expect_error(HEAD "a,llama2,llama2-7b.yaml,8,--global-batch-size=8 --num-layers=2,1.5,test\n", "1:1",
               "no fit row");
}
END_TEST

/* A malformed step-factor file: one located error. */
static void expect_factor_error(const char *text, const char *where, const char *what)
{
  g_autofree char *dir = g_dir_make_tmp("fs-step-factor-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "training-step.yaml", NULL);
  ck_assert(g_file_set_contents(path, text, -1, NULL));
  GError *err = NULL;
  g_autoptr(FsStepFactor) f = fs_step_factor_load(path, &err);
  ck_assert_ptr_null(f);
  expect_located(err, path, where, what);
  g_unlink(path);
  g_rmdir(dir);
}

/* The shipped step factor loads through the scenario and applies as its
 * header says; bad files are refused at the key or value. */
START_TEST(test_step_factor_file)
{
  g_autoptr(FsScenario) sc = scenario();
  const FsStepFactor *sf = fs_scenario_step_factor(sc);
  ck_assert_ptr_nonnull(sf);
  ck_assert(sf->factor > 1 && sf->factor < 2 && sf->fit_rows > 0 && sf->source[0] != '\0');
  FsStepCalibrated c = fs_step_factor_apply(sf, 2.0, 1000.0, 0.5);
  ck_assert_double_eq_tol(c.step_s, 2.0 * sf->factor, 1e-12);
  ck_assert_double_eq_tol(c.tokens_per_s * sf->factor, 1000.0, 1e-9);
  ck_assert_double_eq_tol(c.mfu * sf->factor, 0.5, 1e-12);
  expect_factor_error("step_factor: 1.2\nfit_rows: 3\n", "1:1", "source");
  expect_factor_error("step_factor: 0\nfit_rows: 3\nsource: x\n", "1:14", "above 0 and at most 10");
  expect_factor_error("step_factor: 1.2\nfit_rows: 3\nsource: x\nstep_factr: 1\n", "4:1",
                      "did you mean \"step_factor\"");
  /* A models folder without the file (the catalog files and compute/
   * linked, no calibration/): no factor, no error. */
  g_autofree char *dir = g_dir_make_tmp("fs-step-factor-XXXXXX", NULL);
  g_autofree char *rel = fs_test_source_path("models");
  /* Absolute: the links must not point back into the temporary folder. */
  g_autofree char *models = g_canonicalize_filename(rel, NULL);
  g_autoptr(GPtrArray) links = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GDir) d = g_dir_open(models, 0, NULL);
  ck_assert_ptr_nonnull(d);
  for (const char *n; (n = g_dir_read_name(d)) != NULL;) {
    if (!g_str_has_suffix(n, ".yaml") && strcmp(n, "compute") != 0)
      continue;
    g_autofree char *target = g_build_filename(models, n, NULL);
    char *link = g_build_filename(dir, n, NULL);
    ck_assert_int_eq(symlink(target, link), 0);
    g_ptr_array_add(links, link);
  }
  GError *err = NULL;
  FsScenarioInputs in = { .models_dir = dir,
                          .needs = FS_SCENARIO_NEED_NCCL | FS_SCENARIO_NEED_EFFICIENCY };
  g_autoptr(FsScenario) bare = fs_scenario_load(&in, &err);
  fs_assert_no_error(err);
  ck_assert_ptr_null(fs_scenario_step_factor(bare));
  for (guint i = 0; i < links->len; i++)
    g_unlink(g_ptr_array_index(links, i));
  g_rmdir(dir);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("train-accuracy");
  TCase *tc = tcase_create("test_train_accuracy_tables");
  tcase_add_test(tc, test_train_ref_bad_tables);
  tcase_add_test(tc, test_step_factor_file);
  tcase_add_test(tc, test_train_tables_cover_issue);
  tcase_add_test(tc, test_train_accuracy_tables);
  tcase_set_timeout(tc, 900);
  suite_add_tcase(s, tc);
  return fs_test_run_suite(s);
}
