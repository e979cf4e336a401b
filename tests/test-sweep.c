/* test-sweep.c — sweep specs: grid and list expansion and their order,
 * spec errors with positions, the in-order writer (rows arriving in any
 * order give the same file), threaded runs equal to serial runs, resume. */
#include <string.h>
#include <glib/gstdio.h>

#include "sweep/output.h"
#include "sweep/sweep.h"
#include "testutil.h"
#include "util/error.h"

static FsSweepSpec *load(const char *text, GError **error)
{
  g_autofree char *dir = fs_test_source_path("topologies");
  return fs_sweep_spec_load_string(text, "spec.yaml", dir, error);
}

START_TEST(test_sweep_grid_last_key_fastest)
{
  GError *error = NULL;
  g_autoptr(FsSweepSpec) s = load("kind: coll\nset: {topology: dgx-h100.yaml}\n"
                                  "grid:\n  op: [all_reduce, all_gather]\n  size: [1M, 2M, 4M]\n",
                                  &error);
  fs_assert_no_error(error);
  ck_assert_uint_eq(fs_sweep_spec_n_points(s), 6);
  ck_assert_uint_eq(fs_sweep_spec_n_axes(s), 2);
  ck_assert_str_eq(fs_sweep_spec_axis(s, 0), "op");
  static const char *ops[] = { "all_reduce", "all_reduce", "all_reduce",
                               "all_gather", "all_gather", "all_gather" };
  static const char *sizes[] = { "1M", "2M", "4M", "1M", "2M", "4M" };
  for (guint p = 0; p < 6; p++) {
    ck_assert_str_eq(fs_sweep_point_get(s, p, "op"), ops[p]);
    ck_assert_str_eq(fs_sweep_point_get(s, p, "size"), sizes[p]);
    ck_assert_str_eq(fs_sweep_point_get(s, p, "topology"), "dgx-h100.yaml");
  }
}
END_TEST

START_TEST(test_sweep_list_times_grid)
{
  GError *error = NULL;
  g_autoptr(FsSweepSpec) s = load("kind: coll\nset: {size: 1M}\n"
                                  "list:\n  - {topology: dgx-h100.yaml}\n"
                                  "  - {topology: dgx-a100.yaml, size: 8M}\n"
                                  "grid: {gpus: [2, 4]}\n", &error);
  fs_assert_no_error(error);
  ck_assert_uint_eq(fs_sweep_spec_n_points(s), 4);
  ck_assert_str_eq(fs_sweep_point_get(s, 0, "topology"), "dgx-h100.yaml");
  ck_assert_str_eq(fs_sweep_point_get(s, 1, "gpus"), "4");
  ck_assert_str_eq(fs_sweep_point_get(s, 1, "size"), "1M");   /* from set */
  ck_assert_str_eq(fs_sweep_point_get(s, 2, "topology"), "dgx-a100.yaml");
  ck_assert_str_eq(fs_sweep_point_get(s, 2, "size"), "8M");   /* the entry wins */
  ck_assert_str_eq(fs_sweep_point_get(s, 3, "gpus"), "4");
  /* Axes: list keys first, then the grid's. */
  ck_assert_uint_eq(fs_sweep_spec_n_axes(s), 3);
  ck_assert_str_eq(fs_sweep_spec_axis(s, 2), "gpus");
  g_autofree char *path = fs_sweep_point_path(s, 0, "topology");
  ck_assert(g_file_test(path, G_FILE_TEST_EXISTS));
}
END_TEST

START_TEST(test_sweep_spec_errors)
{
  GError *error = NULL;
  FsSweepSpec *s = load("kind: cooking\n", &error);
  ck_assert_ptr_null(s);
  fs_assert_error(error, FS_SWEEP_ERROR, "spec.yaml:1:7: unknown point kind \"cooking\"");
  s = load("kind: coll\ngrid:\n  colour: [red]\n", &error);
  ck_assert_ptr_null(s);
  fs_assert_error(error, FS_SWEEP_ERROR, "spec.yaml:3:3: \"colour\" is not a setting of a coll point");
  s = load("kind: coll\ngrid:\n  size: []\n", &error);
  ck_assert_ptr_null(s);
  fs_assert_error(error, FS_SWEEP_ERROR, "has no values");
  s = load("kind: train\ngrid:\n  tp: [1, 2]\n  micro_batch: [1]\n  parallel.zero_stage: [0, 1]\n",
           &error);
  fs_assert_no_error(error);
  ck_assert_uint_eq(fs_sweep_spec_n_points(s), 4);
  fs_sweep_spec_free(s);
  s = load("kind: train\ngrid:\n  a: [1,2,3,4,5,6,7,8,9,10]\n", &error);
  ck_assert_ptr_null(s);
  g_clear_error(&error);
}
END_TEST

static FsSweepResult fake(guint i)
{
  FsSweepResult r = { i, i % 3 != 2, NULL, NULL };
  if (r.ok) {
    r.values = g_new0(char *, 9);
    for (guint k = 0; k < 8; k++)
      r.values[k] = g_strdup_printf("%u", i * 10 + k);
  } else {
    r.error = g_strdup_printf("point %u, failed \"on purpose\"", i);
  }
  return r;
}

/* Writes results 0..n-1 in the given order and returns the file. */
static char *write_in_order(const FsSweepSpec *s, const char *path, FsSweepFormat fmt,
                            const guint *order, guint n)
{
  GError *error = NULL;
  g_autoptr(FsSweepWriter) w = fs_sweep_writer_open(s, path, fmt, FALSE, &error);
  fs_assert_no_error(error);
  for (guint i = 0; i < n; i++) {
    FsSweepResult r = fake(order[i]);
    ck_assert(fs_sweep_writer_add(w, &r, &error));
  }
  ck_assert(fs_sweep_writer_finish(w, &error));
  char *text;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  return text;
}

START_TEST(test_sweep_writer_order_is_point_order)
{
  GError *error = NULL;
  g_autoptr(FsSweepSpec) s = load("kind: coll\nset: {topology: dgx-h100.yaml}\n"
                                  "grid: {size: [1M, 2M, 3M, 4M, 5M, 6M]}\n", &error);
  fs_assert_no_error(error);
  g_autofree char *dir = g_dir_make_tmp("fs-sweep-XXXXXX", NULL);
  g_autofree char *csv = g_build_filename(dir, "out.csv", NULL);
  g_autofree char *json = g_build_filename(dir, "out.json", NULL);
  static const guint fwd[] = { 0, 1, 2, 3, 4, 5 }, mixed[] = { 5, 2, 0, 4, 1, 3 };
  for (int f = 0; f < 2; f++) {
    const char *path = f ? json : csv;
    g_autofree char *a = write_in_order(s, path, f ? FS_SWEEP_JSON : FS_SWEEP_CSV, fwd, 6);
    g_autofree char *b = write_in_order(s, path, f ? FS_SWEEP_JSON : FS_SWEEP_CSV, mixed, 6);
    ck_assert_str_eq(a, b);
    g_autofree char *partial = g_strconcat(path, ".partial", NULL);
    ck_assert(!g_file_test(partial, G_FILE_TEST_EXISTS));
    g_unlink(path);
  }
  /* The CSV quotes an error with a comma and quotes in it. */
  FsSweepResult r = fake(2);
  g_autofree char *row = fs_sweep_format_row(s, FS_SWEEP_CSV, &r);
  ck_assert_str_eq(row, "2,3M,error,,,,,,,,,\"point 2, failed \"\"on purpose\"\"\"");
  fs_sweep_result_clear(&r);
  g_rmdir(dir);
}
END_TEST

START_TEST(test_sweep_resume_keeps_finished_points)
{
  GError *error = NULL;
  g_autoptr(FsSweepSpec) s = load("kind: coll\nset: {topology: dgx-h100.yaml}\n"
                                  "grid: {size: [1M, 2M, 3M, 4M]}\n", &error);
  fs_assert_no_error(error);
  g_autofree char *dir = g_dir_make_tmp("fs-sweep-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "out.csv", NULL);
  g_autofree char *partial = g_strconcat(path, ".partial", NULL);
  static const guint all[] = { 0, 1, 2, 3 };
  g_autofree char *full = write_in_order(s, path, FS_SWEEP_CSV, all, 4);
  /* An interrupted run: points 0 and 1 done, point 2 cut mid-line.  (The
   * cut is found in the copy: with write_in_order inlined, GCC 12 -O3
   * cannot tell that `full` is not its local `text` and warns of a
   * dangling pointer, -Wdangling-pointer, on arithmetic with `full`.) */
  g_autoptr(GString) part = g_string_new(full);
  const char *cut = strstr(part->str, "\n2,");
  ck_assert(cut != NULL);
  g_string_truncate(part, (gsize)(cut - part->str) + 1);
  g_string_append(part, "2,3M,o");
  ck_assert(g_file_set_contents(partial, part->str, -1, NULL));
  g_unlink(path);
  g_autoptr(FsSweepWriter) w = fs_sweep_writer_open(s, path, FS_SWEEP_CSV, TRUE, &error);
  fs_assert_no_error(error);
  ck_assert_uint_eq(fs_sweep_writer_done(w), 2);
  for (guint i = 2; i < 4; i++) {
    FsSweepResult r = fake(i);
    ck_assert(fs_sweep_writer_add(w, &r, &error));
  }
  ck_assert(fs_sweep_writer_finish(w, &error));
  g_autofree char *again = NULL;
  ck_assert(g_file_get_contents(path, &again, NULL, NULL));
  ck_assert_str_eq(again, full);
  /* A finished file: nothing left to run. */
  g_autoptr(FsSweepWriter) w2 = fs_sweep_writer_open(s, path, FS_SWEEP_CSV, TRUE, &error);
  fs_assert_no_error(error);
  ck_assert_uint_eq(fs_sweep_writer_done(w2), 4);
  g_clear_pointer(&w2, fs_sweep_writer_free);
  g_unlink(partial);
  /* Another spec's file is refused. */
  g_autoptr(FsSweepSpec) other = load("kind: coll\nset: {topology: dgx-h100.yaml}\n"
                                      "grid: {size: [1M, 8M]}\n", &error);
  FsSweepWriter *w3 = fs_sweep_writer_open(other, path, FS_SWEEP_CSV, TRUE, &error);
  ck_assert_ptr_null(w3);
  fs_assert_error(error, FS_SWEEP_ERROR, "row 2 is not point 1");
  g_unlink(path);
  g_unlink(partial);
  g_rmdir(dir);
}
END_TEST

typedef struct {
  GPtrArray *rows;
} Collect;

static void collect(FsSweepResult *r, void *ud)
{
  Collect *c = ud;
  g_ptr_array_add(c->rows, g_strdup_printf("%u %s %s", r->index, r->ok ? r->values[4] : "-",
                                           r->ok ? r->values[5] : r->error));
}

static int cmp_rows(gconstpointer a, gconstpointer b)
{
  return atoi(*(char **)a) - atoi(*(char **)b);
}

START_TEST(test_sweep_threads_match_serial)
{
  GError *error = NULL;
  g_autoptr(FsSweepSpec) s = load("kind: coll\nset: {topology: dgx-h100.yaml, model: analytic}\n"
                                  "grid: {op: [all_reduce, all_gather], size: [64K, 16M], "
                                  "gpus: [2, 8, 9]}\n", &error);
  fs_assert_no_error(error);
  g_autoptr(FsSweepEnv) env = fs_sweep_env_new(NULL, &error);
  fs_assert_no_error(error);
  fs_sweep_env_prepare(env, s, 0, 1);
  Collect one = { g_ptr_array_new_with_free_func(g_free) };
  Collect two = { g_ptr_array_new_with_free_func(g_free) };
  ck_assert(fs_sweep_run(env, s, 0, 1, 1, collect, NULL, &one, &error));
  ck_assert(fs_sweep_run(env, s, 0, 1, 3, collect, NULL, &two, &error));
  ck_assert_uint_eq(one.rows->len, 12);
  ck_assert_uint_eq(two.rows->len, 12);
  g_ptr_array_sort(two.rows, cmp_rows);
  for (guint i = 0; i < 12; i++)
    ck_assert_str_eq(g_ptr_array_index(one.rows, i), g_ptr_array_index(two.rows, i));
  /* gpus 9 on an 8-GPU system fails as a row, not as the sweep. */
  ck_assert(strstr(g_ptr_array_index(one.rows, 2), " - ") != NULL);
  /* A stride runs every other point. */
  Collect half = { g_ptr_array_new_with_free_func(g_free) };
  ck_assert(fs_sweep_run(env, s, 1, 2, 2, collect, NULL, &half, &error));
  ck_assert_uint_eq(half.rows->len, 6);
  g_ptr_array_unref(one.rows);
  g_ptr_array_unref(two.rows);
  g_ptr_array_unref(half.rows);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("sweep");
  FS_ADD_TEST(s, test_sweep_grid_last_key_fastest);
  FS_ADD_TEST(s, test_sweep_list_times_grid);
  FS_ADD_TEST(s, test_sweep_spec_errors);
  FS_ADD_TEST(s, test_sweep_writer_order_is_point_order);
  FS_ADD_TEST(s, test_sweep_resume_keeps_finished_points);
  FS_ADD_TEST(s, test_sweep_threads_match_serial);
  return fs_test_run_suite(s);
}
