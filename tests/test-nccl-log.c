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

/* nccl-tests 2.13 layout, one process driving 8 GPUs (-g 8); the figures of
 * validation/reference/h100_dgx_allreduce_8gpu_g8_vpbench.csv. */
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
  ck_assert_uint_eq(t->rows->len, 31);
  const FsNcclLogRow *r = row_at(t, 0);
  ck_assert_uint_eq(r->size, 8);
  ck_assert_uint_eq(r->count, 2);
  ck_assert_str_eq(r->type, "float");
  ck_assert_str_eq(r->redop, "sum");
  ck_assert_int_eq(r->root, -1);
  assert_close(r->oop_time_us, 33.18);
  assert_close(r->ip_time_us, 32.55);
  ck_assert(isnan(r->oop_wrong));
  r = row_at(t, 25);
  ck_assert_uint_eq(r->size, 268435456);
  assert_close(r->oop_busbw, 422.38);
  assert_close(r->ip_time_us, 1112.59);
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
    /* n_ files may also be refused by the checks of calibrate. */
    FsNcclLogHints none = {NULL, 0, 0};
    if (log != NULL && g_str_has_prefix(name, "n_") && !fs_nccl_log_resolve(log, &none, &error))
      g_clear_pointer(&log, fs_nccl_log_free);
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
  ck_assert_uint_ge(ny, 15);
  ck_assert_uint_ge(nn, 18);
  ck_assert_uint_ge(ni, 5);
}
END_TEST

static FsNcclLog *load_resolved(const char *name, const FsNcclLogHints *h)
{
  FsNcclLog *log = load(name);
  GError *error = NULL;
  ck_assert_msg(fs_nccl_log_resolve(log, h, &error), "%s: %s", name, error ? error->message : "");
  return log;
}

/* A resolve error: its message holds want. */
static void assert_resolve_fails(const char *name, const FsNcclLogHints *h, const char *want)
{
  g_autoptr(FsNcclLog) log = load(name);
  GError *error = NULL;
  ck_assert_msg(!fs_nccl_log_resolve(log, h, &error), "%s: accepted", name);
  ck_assert_msg(strstr(error->message, want) != NULL, "%s: \"%s\" lacks \"%s\"", name,
                error->message, want);
  ck_assert_int_eq(error->domain, FS_NCCL_LOG_ERROR);
  g_error_free(error);
}

/* Issue 21: a log whose first device line lost its '#' was read as 15
 * ranks and fitted silently; now the line is a device line. */
START_TEST(test_nccl_log_device_line_lost_hash)
{
  FsNcclLogHints none = {NULL, 0, 0};
  g_autoptr(FsNcclLog) log = load_resolved("y_mpi16_device_line_lost_hash.txt", &none);
  const FsNcclLogTest *t = test_at(log, 0);
  ck_assert_uint_eq(t->nranks, 16);
  ck_assert_uint_eq(t->nhosts, 2);
  ck_assert_int_eq(t->ranks_from, FS_NCCL_LOG_FROM_DEVICES);
  ck_assert_uint_eq(((FsNcclLogDevice *)g_ptr_array_index(t->devices, 0))->rank, 0);
  ck_assert_uint_eq(t->nccl_version, 22105);
  ck_assert_uint_ge(log->repaired_lines, 1);
  /* The same device list without the fix: rank 0 missing is a located error. */
  assert_resolve_fails("n_device_line_missing.txt", &none,
                       "n_device_line_missing.txt:6:1: the device list has 15 lines but no rank 0");
  /* 15 device lines under rows of 16 ranks: the busbw/algbw ratio says so. */
  assert_resolve_fails("n_busbw_says_16_ranks_devices_15.txt", &none, "factor for 16 ranks");
}
END_TEST

/* Markdown pastes: code fence, headings that lost '#', wrapped rows; a
 * table with '|' separators under a "> " quote. */
START_TEST(test_nccl_log_markdown)
{
  FsNcclLogHints none = {NULL, 0, 0};
  g_autoptr(FsNcclLog) log = load_resolved("y_markdown_fenced_lost_hash_wrapped.txt", &none);
  const FsNcclLogTest *t = test_at(log, 0);
  ck_assert_str_eq(t->collective, "all_reduce");
  ck_assert_uint_eq(t->nranks, 8);
  ck_assert_uint_eq(t->rows->len, 11);
  const FsNcclLogRow *r = row_at(t, 2);
  ck_assert_uint_eq(r->size, 4194304);
  ck_assert(r->has_ip);
  ck_assert_uint_eq(row_at(t, 3)->size, 8388608);
  FsNcclLogHints h = {NULL, 8, 1};
  g_autoptr(FsNcclLog) tab = load_resolved("y_markdown_table.txt", &h);
  t = test_at(tab, 0);
  ck_assert_uint_eq(t->rows->len, 11);
  ck_assert_uint_eq(t->nranks, 8);
  ck_assert_int_eq(t->ranks_from, FS_NCCL_LOG_FROM_OPTION);
  ck_assert_uint_eq(row_at(t, 10)->size, 1u << 30);
  /* Without --ranks the table has no rank count. */
  FsNcclLogHints none2 = {NULL, 0, 0};
  assert_resolve_fails("y_markdown_table.txt", &none2, "give the rank count with --ranks N");
}
END_TEST

/* Launcher prefixes: srun -l "0: " and Open MPI "[1,0]<stdout>:". */
START_TEST(test_nccl_log_launcher_prefixes)
{
  FsNcclLogHints none = {NULL, 0, 0};
  const char *files[] = {"y_srun_labels.txt", "y_ompi_tag_output.txt"};
  for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
    g_autoptr(FsNcclLog) log = load_resolved(files[i], &none);
    const FsNcclLogTest *t = test_at(log, 0);
    ck_assert_uint_eq(t->nranks, 16);
    ck_assert_uint_eq(t->nhosts, 2);
    ck_assert_uint_eq(t->rows->len, 11);
    ck_assert(t->has_avg_busbw);
  }
}
END_TEST

/* No device list: ranks and nodes from NCCL's INFO lines, the library
 * version from its "NCCL version" line; --ranks must agree. */
START_TEST(test_nccl_log_counts_from_nccl_info)
{
  FsNcclLogHints none = {NULL, 0, 0};
  g_autoptr(FsNcclLog) log = load_resolved("y_no_devices_ranks_from_nccl_info.txt", &none);
  const FsNcclLogTest *t = test_at(log, 0);
  ck_assert_uint_eq(t->nranks, 16);
  ck_assert_uint_eq(t->nhosts, 2);
  ck_assert_int_eq(t->ranks_from, FS_NCCL_LOG_FROM_INFO);
  ck_assert_uint_eq(t->nccl_version, 21803);
  ck_assert_int_eq(t->nccl_version_line, 5);
  ck_assert_str_eq(t->collective, "all_reduce");
  FsNcclLogHints bad = {NULL, 8, 0};
  assert_resolve_fails("y_no_devices_ranks_from_nccl_info.txt", &bad,
                       ":6:1: NCCL's INFO line 6 says 16 ranks, but --ranks says 8");
  FsNcclLogHints nodes = {NULL, 0, 4};
  assert_resolve_fails("y_no_devices_ranks_from_nccl_info.txt", &nodes,
                       "says 2 hosts, but --nodes says 4");
  FsNcclLogHints none2 = {NULL, 0, 0};
  assert_resolve_fails("n_nccl_info_nranks_disagree.txt", &none2,
                       ":14:1: NCCL says 16 ranks here, but the device list (from line 6) has 8");
}
END_TEST

/* nccl-tests 1.x: "bytes N type op … res" header, device lines without a
 * Pid (skipped): the rank count comes from --ranks, checked by busbw. */
START_TEST(test_nccl_log_old_1x_needs_ranks)
{
  FsNcclLogHints none = {NULL, 0, 0};
  assert_resolve_fails("y_old_1x_bytes_header_no_devices.txt", &none,
                       "y_old_1x_bytes_header_no_devices.txt:10:1: the log has no device list");
  FsNcclLogHints h = {NULL, 4, 0};
  g_autoptr(FsNcclLog) log = load_resolved("y_old_1x_bytes_header_no_devices.txt", &h);
  const FsNcclLogTest *t = test_at(log, 0);
  ck_assert_str_eq(t->collective, "all_reduce");
  ck_assert_uint_eq(t->rows->len, 8);
  ck_assert_str_eq(row_at(t, 0)->redop, "sum");
  assert_close(row_at(t, 0)->oop_wrong, 2e-7);
  FsNcclLogHints wrong = {NULL, 8, 0};
  assert_resolve_fails("y_old_1x_bytes_header_no_devices.txt", &wrong, "factor for 4 ranks");
}
END_TEST

/* --op against the log's own name. */
START_TEST(test_nccl_log_op_checked)
{
  FsNcclLogHints ag = {"all_gather", 0, 0};
  assert_resolve_fails("y_dgxh100_g8_2.13.txt", &ag,
                       "the log is all_reduce (named here), but --op says all_gather");
  FsNcclLogHints none = {NULL, 0, 0};
  assert_resolve_fails("y_dgx1v_old_2.0.txt", &none, "give it with --op");
  FsNcclLogHints ar = {"all_reduce", 0, 0};
  g_autoptr(FsNcclLog) log = load_resolved("y_dgx1v_old_2.0.txt", &ar);
  ck_assert_str_eq(test_at(log, 0)->collective, "all_reduce");
  /* --ranks against the device list. */
  FsNcclLogHints r = {NULL, 16, 0};
  assert_resolve_fails("y_dgxh100_g8_2.13.txt", &r, "says 8 ranks, but --ranks says 16");
}
END_TEST

/* Rows left out are listed: a negative size by the reader (one line). */
START_TEST(test_nccl_log_dropped_rows)
{
  g_autoptr(FsNcclLog) log = load("y_rows_time_zero_negative_size.txt");
  ck_assert_uint_eq(log->dropped->len, 1);
  const FsNcclLogDrop *d = &g_array_index(log->dropped, FsNcclLogDrop, 0);
  ck_assert_int_eq(d->line, 21);
  g_autofree char *text = fs_nccl_log_drops_text(d, 1);
  ck_assert_str_eq(strrchr(text, '/') + 1,
                   "y_rows_time_zero_negative_size.txt:21:1: row dropped: negative size\n");
  /* Five drops of one reason: one line with the count and the first lines. */
  FsNcclLogDrop five[5];
  for (guint i = 0; i < 5; i++)
    five[i] = (FsNcclLogDrop){"a.log", 10 + (int)i, "out-of-place time is 0"};
  g_autofree char *t5 = fs_nccl_log_drops_text(five, 5);
  ck_assert_str_eq(t5, "a.log:10:1: 5 rows dropped: out-of-place time is 0 (lines 10, 11, 12, 13, 14)\n");
  ck_assert_ptr_null(fs_nccl_log_drops_text(five, 0));
  g_autoptr(FsNcclLog) mpi = load("y_mpi16_2nodes_nccl_info.txt");
  ck_assert_uint_eq(mpi->dropped->len, 1);
}
END_TEST

START_TEST(test_nccl_log_busbw_factor)
{
  assert_close(fs_nccl_log_busbw_factor("all_reduce", 16), 1.875);
  assert_close(fs_nccl_log_busbw_factor("all_gather", 4), 0.75);
  assert_close(fs_nccl_log_busbw_factor("sendrecv", 4), 1);
  assert_close(fs_nccl_log_busbw_factor("nonsense", 4), 0);
}
END_TEST

/* Real logs from public sources (tests/data/real/nccl-tests/SOURCES.md):
 * each read with the hints a user would give, or refused with its reason. */
typedef struct {
  const char *file;
  FsNcclLogHints hints;
  const char *refused; /* fragment of the error, NULL when read */
  const char *op;
  guint ranks, hosts, rows, nccl;
  FsNcclLogFrom ranks_from;
  int headerless; /* the first row, for rows without column titles */
} RealLog;

static const RealLog real_logs[] = {
  {"gcp-a3mega-h100-2nodes-allreduce.txt", {NULL, 0, 0}, NULL, "all_reduce", 16, 2, 31, 0,
   FS_NCCL_LOG_FROM_DEVICES, 0},
  {"oci-h200-2nodes-nccl-2.27.5.txt", {NULL, 0, 0}, NULL, "all_reduce", 16, 2, 5, 22705,
   FS_NCCL_LOG_FROM_DEVICES, 0},
  {"oci-a100-2nodes-10g.txt", {"all_reduce", 0, 0}, NULL, "all_reduce", 16, 2, 1, 0,
   FS_NCCL_LOG_FROM_DEVICES, 0},
  {"aws-eks-p5-h100-2nodes-table-indented.txt", {"all_reduce", 16, 2}, NULL, "all_reduce", 16,
   2, 32, 0, FS_NCCL_LOG_FROM_OPTION, 0},
  {"nccl-tests-82-broadcast-v100-2nodes-excerpt.txt", {NULL, 0, 0}, NULL, "broadcast", 2, 2, 1,
   20906, FS_NCCL_LOG_FROM_DEVICES, 0},
  {"aws-k8s-tester-503-p5-tagged-head.txt", {"all_reduce", 0, 0},
   ":4:1: the log has no device list, no nThread/nGpus line and no NCCL nRanks", NULL, 0, 0, 0,
   0, 0, 0},
  {"nccl-tests-294-h100-16ranks-nccl-info-failed.txt", {NULL, 0, 0},
   "no nccl-tests result table found", NULL, 0, 0, 0, 0, 0, 0},
  /* Rows without column titles: read in the 2.10+ layout, with a note;
   * the collective from --op, the ranks from NCCL INFO's nranks. */
  {"nccl-tests-294-h100-rows-without-header.txt", {NULL, 0, 0},
   ":1:1: the log does not name its collective; give it with --op", NULL, 0, 0, 0, 0, 0, 0},
  {"nccl-tests-294-h100-rows-without-header.txt", {"all_reduce", 0, 0}, NULL, "all_reduce", 16,
   0, 5, 0, FS_NCCL_LOG_FROM_INFO, 1},
  {"nccl-tests-107-v100-two-processes-headers.txt", {NULL, 0, 0},
   "no nccl-tests result table found", NULL, 0, 0, 0, 0, 0, 0},
  {"nccl-583-a100-lost-hash-header.txt", {NULL, 0, 0}, "no nccl-tests result table found", NULL,
   0, 0, 0, 0, 0, 0},
  /* Rank-tagged rows without titles: 24 ranks, as every row's busbw/algbw
   * (1.917 = 2 × 23/24) says; a wrong count is refused by that ratio. */
  {"nccl-1453-rank-prefixed-rows.txt", {"all_reduce", 24, 0}, NULL, "all_reduce", 24, 0, 10, 0,
   FS_NCCL_LOG_FROM_OPTION, 1},
  {"nccl-1453-rank-prefixed-rows.txt", {"all_reduce", 16, 0}, "busbw/algbw", NULL, 0, 0, 0, 0,
   0, 0},
};

START_TEST(test_nccl_log_real_corpus)
{
  for (guint i = 0; i < G_N_ELEMENTS(real_logs); i++) {
    const RealLog *want = &real_logs[i];
    g_autofree char *rel = g_strdup_printf("real/nccl-tests/%s", want->file);
    g_autofree char *path = fs_test_data_path(rel);
    GError *error = NULL;
    g_autoptr(FsNcclLog) log = fs_nccl_log_load(path, &error);
    if (log != NULL && !fs_nccl_log_resolve(log, &want->hints, &error))
      g_clear_pointer(&log, fs_nccl_log_free);
    if (want->refused != NULL) {
      ck_assert_msg(log == NULL, "%s was read", want->file);
      ck_assert_msg(g_str_has_prefix(error->message, path), "%s: %s", want->file, error->message);
      ck_assert_msg(strstr(error->message, want->refused) != NULL, "%s: \"%s\" lacks \"%s\"",
                    want->file, error->message, want->refused);
      g_clear_error(&error);
      continue;
    }
    ck_assert_msg(log != NULL, "%s: %s", want->file, error ? error->message : "");
    ck_assert_uint_eq(log->tests->len, 1);
    const FsNcclLogTest *t = test_at(log, 0);
    ck_assert_msg(g_strcmp0(t->collective, want->op) == 0, "%s: op %s", want->file,
                  t->collective);
    ck_assert_msg(t->nranks == want->ranks && t->nhosts == want->hosts,
                  "%s: %u ranks on %u hosts", want->file, t->nranks, t->nhosts);
    ck_assert_msg(t->rows->len == want->rows, "%s: %u rows", want->file, t->rows->len);
    ck_assert_msg(t->nccl_version == want->nccl, "%s: NCCL %u", want->file, t->nccl_version);
    ck_assert_msg(t->ranks_from == want->ranks_from, "%s: ranks from %d", want->file,
                  t->ranks_from);
    ck_assert_msg(t->headerless_line == want->headerless, "%s: headerless at %d", want->file,
                  t->headerless_line);
    g_autofree char *notes = fs_nccl_log_notes_text(log);
    ck_assert(want->headerless == 0 || strstr(notes, "note: rows without column titles") != NULL);
  }
  /* At least ten real logs. */
  g_autofree char *dir = fs_test_data_path("real/nccl-tests");
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  guint n = 0;
  for (const char *name; (name = g_dir_read_name(d)) != NULL;)
    n += g_str_has_suffix(name, ".txt");
  guint distinct = 0;
  for (guint i = 0; i < G_N_ELEMENTS(real_logs); i++)
    distinct += i == 0 || strcmp(real_logs[i].file, real_logs[i - 1].file) != 0;
  ck_assert_uint_eq(n, distinct);
  ck_assert_uint_ge(n, 10);
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
  FS_ADD_TEST(s, test_nccl_log_device_line_lost_hash);
  FS_ADD_TEST(s, test_nccl_log_markdown);
  FS_ADD_TEST(s, test_nccl_log_launcher_prefixes);
  FS_ADD_TEST(s, test_nccl_log_counts_from_nccl_info);
  FS_ADD_TEST(s, test_nccl_log_old_1x_needs_ranks);
  FS_ADD_TEST(s, test_nccl_log_op_checked);
  FS_ADD_TEST(s, test_nccl_log_dropped_rows);
  FS_ADD_TEST(s, test_nccl_log_busbw_factor);
  FS_ADD_TEST(s, test_nccl_log_real_corpus);
  return fs_test_run_suite(s);
}
