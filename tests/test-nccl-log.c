/* test-nccl-log.c — the nccl-tests log reader against the corpus in
 * tests/data/nccl-tests/ (README there): every y_ file read with the
 * figures it holds, every n_ file rejected with its position, every i_
 * file read or rejected without a crash. */
#include <math.h>
#include <string.h>

#include "calib/nccl-log.h"
#include "util/json-pos.h"
#include "testutil.h"

static FsNcclLog *load(const char *name)
{
  g_autofree char *rel = g_strdup_printf("nccl-tests/%s", name);
  g_autofree char *path = fs_test_data_path(rel);
  GError *error = NULL;
  FsNcclLog *log = fs_nccl_log_load(path, &error);
  fs_assert_no_error(error);
  ck_assert_ptr_nonnull(log);
  return log;
}

static const FsNcclLogTest *test_at(const FsNcclLog *log, guint i)
{
  ck_assert_uint_gt(log->tests->len, i);
  return g_ptr_array_index(log->tests, i);
}

static const FsNcclLogRow *row_at(const FsNcclLogTest *t, guint i)
{
  ck_assert_uint_gt(t->rows->len, i);
  return &g_array_index(t->rows, FsNcclLogRow, i);
}

static void assert_close(double got, double want)
{
  ck_assert_msg(fabs(got - want) <= 1e-9 * fmax(1, fabs(want)), "got %.9g, want %.9g", got, want);
}

/* nccl-tests 2.13 layout, one process driving 8 GPUs (-g 8): the DGX H100
 * sample of validation/reference. */
START_TEST(test_nccl_log_g8_single_process)
{
  g_autoptr(FsNcclLog) log = load("y_dgxh100_g8_2.13.txt");
  ck_assert_uint_eq(log->tests->len, 1);
  const FsNcclLogTest *t = test_at(log, 0);
  ck_assert_str_eq(t->collective, "all_reduce");
  ck_assert_str_eq(t->version, "2.13.9");
  ck_assert_uint_eq(t->nccl_version, 21903);
  ck_assert_uint_eq(t->nthreads, 1);
  ck_assert_uint_eq(t->ngpus, 8);
  ck_assert_uint_eq(t->nranks, 8);
  ck_assert_uint_eq(t->nhosts, 1);
  const FsNcclLogDevice *d = g_ptr_array_index(t->devices, 7);
  ck_assert_uint_eq(d->rank, 7);
  ck_assert_int_eq(d->group, 0);
  ck_assert_str_eq(d->host, "dgxh100-01");
  ck_assert_str_eq(d->bus_id, "0000:db:00");
  ck_assert_str_eq(d->name, "NVIDIA H100 80GB HBM3");
  ck_assert_uint_eq(t->rows->len, 32);
  const FsNcclLogRow *r = row_at(t, 0);
  ck_assert_uint_eq(r->size, 8);
  ck_assert_uint_eq(r->count, 2);
  ck_assert_str_eq(r->type, "float");
  ck_assert_str_eq(r->redop, "sum");
  ck_assert_int_eq(r->root, -1);
  assert_close(r->oop_time_us, 13.67);
  assert_close(r->ip_time_us, 13.03);
  ck_assert(isnan(r->oop_wrong));
  r = row_at(t, 25);
  ck_assert_uint_eq(r->size, 268435456);
  assert_close(r->oop_busbw, 422.25);
  assert_close(r->ip_time_us, 1113.4);
  ck_assert(t->has_avg_busbw);
}
END_TEST

/* nccl-tests 2.0: no root column, "error" instead of "#wrong", device lines
 * without Group and with one-byte bus ids, no collective named. */
START_TEST(test_nccl_log_old_layout)
{
  g_autoptr(FsNcclLog) log = load("y_dgx1v_old_2.0.txt");
  const FsNcclLogTest *t = test_at(log, 0);
  ck_assert_ptr_null(t->collective);
  ck_assert_ptr_null(t->version);
  ck_assert_uint_eq(t->nranks, 8);
  const FsNcclLogDevice *d = g_ptr_array_index(t->devices, 0);
  ck_assert_int_eq(d->group, -1);
  ck_assert_str_eq(d->bus_id, "0x06");
  ck_assert_str_eq(d->name, "Tesla V100-SXM2-16GB");
  ck_assert_uint_eq(t->rows->len, 12);
  const FsNcclLogRow *r = row_at(t, 0);
  ck_assert_str_eq(r->redop, "sum");
  ck_assert_int_eq(r->root, -1);
  assert_close(r->oop_wrong, 1e-7);
  assert_close(r->ip_time_us, 25.25);
}
END_TEST

/* Older still: no redop either; the collective from an echoed command. */
START_TEST(test_nccl_log_no_redop_column)
{
  g_autoptr(FsNcclLog) log = load("y_allgather_no_redop_old.txt");
  const FsNcclLogTest *t = test_at(log, 0);
  ck_assert_str_eq(t->collective, "all_gather");
  ck_assert_uint_eq(t->nranks, 4);
  const FsNcclLogRow *r = row_at(t, 0);
  ck_assert_ptr_null(r->redop);
  ck_assert_uint_eq(r->size, 1024);
  ck_assert(r->has_oop && r->has_ip);
}
END_TEST

/* MPI, 16 ranks on 2 nodes, NCCL_DEBUG=INFO: the INFO/WARN lines and the
 * row that an INFO line cut in two are skipped. */
START_TEST(test_nccl_log_mpi_two_nodes_with_info)
{
  g_autoptr(FsNcclLog) log = load("y_mpi16_2nodes_nccl_info.txt");
  ck_assert_uint_eq(log->tests->len, 1);
  const FsNcclLogTest *t = test_at(log, 0);
  ck_assert_str_eq(t->collective, "all_reduce");
  ck_assert_uint_eq(t->nranks, 16);
  ck_assert_uint_eq(t->nhosts, 2);
  ck_assert_uint_eq(t->rows->len, 10);
  for (guint i = 0; i < t->rows->len; i++)
    ck_assert_uint_ne(row_at(t, i)->size, 16u << 20);
  ck_assert_uint_ge(log->skipped_lines, 20);
}
END_TEST

/* Two outputs pasted into one file, with CRLF line ends. */
START_TEST(test_nccl_log_two_runs)
{
  g_autoptr(FsNcclLog) log = load("y_two_runs_crlf.txt");
  ck_assert_uint_eq(log->tests->len, 2);
  ck_assert_str_eq(test_at(log, 0)->collective, "all_reduce");
  ck_assert_str_eq(test_at(log, 1)->collective, "reduce_scatter");
  ck_assert_uint_eq(test_at(log, 1)->rows->len, 3);
  assert_close(row_at(test_at(log, 1), 2)->ip_busbw, 39.92);
  ck_assert_str_eq(((FsNcclLogDevice *)g_ptr_array_index(test_at(log, 1)->devices, 3))->name,
                   "NVIDIA A100-SXM4-40GB");
}
END_TEST

/* The per-iteration layout (-R) with a timestamp column and fabricsim's
 * trailing note: the i_* columns do not shift the in-place group. */
START_TEST(test_nccl_log_per_iteration_layout)
{
  g_autoptr(FsNcclLog) log = load("y_per_iteration_timestamps.txt");
  const FsNcclLogTest *t = test_at(log, 0);
  ck_assert_str_eq(t->collective, "broadcast");
  ck_assert_uint_eq(t->rows->len, 2);
  const FsNcclLogRow *r = row_at(t, 1);
  ck_assert_int_eq(r->root, 0);
  ck_assert_str_eq(r->redop, "none");
  assert_close(r->oop_time_us, 10.5);
  assert_close(r->ip_time_us, 10.4);
  assert_close(r->ip_busbw, 0.79);
}
END_TEST

/* nccl-tests -J output (JSON version 2). */
START_TEST(test_nccl_log_json)
{
  g_autoptr(FsNcclLog) log = load("y_json_J_v2.json");
  ck_assert(log->json);
  const FsNcclLogTest *t = test_at(log, 0);
  ck_assert_str_eq(t->collective, "all_reduce");
  ck_assert_uint_eq(t->nccl_version, 22703);
  ck_assert_uint_eq(t->nranks, 8);
  ck_assert_uint_eq(t->nhosts, 1);
  ck_assert_uint_eq(t->rows->len, 3);
  const FsNcclLogRow *r = row_at(t, 2);
  ck_assert_uint_eq(r->size, 268435456);
  ck_assert_str_eq(r->redop, "sum");
  ck_assert_int_eq(r->root, -1);
  assert_close(r->oop_time_us, 1112.5);
  ck_assert(r->has_ip);
  assert_close(t->avg_busbw, 243.1);
}
END_TEST

START_TEST(test_nccl_log_binary_names)
{
  const char *in[] = {"all_reduce_perf", "./build/all_gather_perf_mpi", "/x/alltoall_perf",
                      "sendrecv", "hostname", "perf"};
  const char *want[] = {"all_reduce", "all_gather", "alltoall", "sendrecv", NULL, NULL};
  for (guint i = 0; i < G_N_ELEMENTS(in); i++) {
    g_autofree char *got = fs_nccl_log_collective_from_binary(in[i]);
    if (want[i] == NULL)
      ck_assert_ptr_null(got);
    else
      ck_assert_str_eq(got, want[i]);
  }
}
END_TEST

START_TEST(test_nccl_log_corpus)
{
  g_autofree char *dir = fs_test_data_path("nccl-tests");
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  guint ny = 0, nn = 0, ni = 0;
  for (const char *name; (name = g_dir_read_name(d)) != NULL;) {
    if (g_str_has_suffix(name, ".err") || strcmp(name, "README.md") == 0)
      continue;
    g_autofree char *path = g_build_filename(dir, name, NULL);
    GError *error = NULL;
    g_autoptr(FsNcclLog) log = fs_nccl_log_load(path, &error);
    if (g_str_has_prefix(name, "y_")) {
      ck_assert_msg(error == NULL, "%s: %s", name, error ? error->message : "");
      for (guint i = 0; i < log->tests->len; i++)
        ck_assert_uint_gt(test_at(log, i)->rows->len, 0);
      ny++;
    } else if (g_str_has_prefix(name, "n_")) {
      ck_assert_msg(error != NULL, "%s was accepted", name);
      ck_assert_msg(error->domain == FS_NCCL_LOG_ERROR || error->domain == FS_JSON_ERROR,
                    "%s: wrong domain: %s", name, error->message);
      ck_assert_msg(g_str_has_prefix(error->message, path), "%s: no file prefix: %s", name,
                    error->message);
      g_autofree char *stem = g_strndup(path, strrchr(path, '.') - path);
      g_autofree char *errpath = g_strdup_printf("%s.err", stem);
      g_autofree char *want = NULL;
      ck_assert_msg(g_file_get_contents(errpath, &want, NULL, NULL), "%s: no .err", name);
      g_strchomp(want);
      ck_assert_msg(strstr(error->message, want) != NULL, "%s: \"%s\" lacks \"%s\"", name,
                    error->message, want);
      g_clear_error(&error);
      nn++;
    } else if (g_str_has_prefix(name, "i_")) {
      g_clear_error(&error);
      ni++;
    } else {
      ck_abort_msg("%s: corpus files start with y_, n_ or i_", name);
    }
  }
  ck_assert_uint_ge(ny, 7);
  ck_assert_uint_ge(nn, 12);
  ck_assert_uint_ge(ni, 5);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("nccl-log");
  FS_ADD_TEST(s, test_nccl_log_g8_single_process);
  FS_ADD_TEST(s, test_nccl_log_old_layout);
  FS_ADD_TEST(s, test_nccl_log_no_redop_column);
  FS_ADD_TEST(s, test_nccl_log_mpi_two_nodes_with_info);
  FS_ADD_TEST(s, test_nccl_log_two_runs);
  FS_ADD_TEST(s, test_nccl_log_per_iteration_layout);
  FS_ADD_TEST(s, test_nccl_log_json);
  FS_ADD_TEST(s, test_nccl_log_binary_names);
  FS_ADD_TEST(s, test_nccl_log_corpus);
  return fs_test_run_suite(s);
}
