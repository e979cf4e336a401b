/* test-coll-accuracy.c — the collective layer against published
 * measurements (validation/reference/): one node of 8 H100 (Azure ND H100 v5,
 * NCCL 2.18.5, NVLS forced; NVIDIA/nccl-tests issue 290's single node) and
 * one of 8 A100 80 GB (Azure ND A100 v4), then the multi-node tables.  Each
 * row is simulated exactly as `fabricsim coll` runs it (the nccl-tests kind
 * of `fabricsim validate`: tuner's choice unless the table forces an
 * algorithm, float, sum, the first N GPUs of the table's topology) with one
 * set of catalog figures for every size and GPU count.  Prints predicted vs
 * measured and the error per row (run with CK_VERBOSITY or read the test log).
 *
 * Bars enforced (see the CSV headers):
 *   Single node: each table's bar (busbw MAPE within 10 % over size >= 64
 *               MiB) and the level the model reaches (2026-11-28), so that it
 *               does not slip: Azure H100 MAPE 6.71 % (bound 7.2 %), every
 *               row within 11.5 % (worst 512 MiB, +10.9 %: the simulated NVLS
 *               curve reaches its asymptote at smaller sizes than the
 *               measured one and sits 6-7 % above it from 1 GiB on); issue
 *               290's node 9.61 % (bound 10 %), rows within 13 % (+12.6 % at
 *               512 MiB); Azure A100 8.57 % (bound 9.1 %), rows within 27.5 %
 *               (64 and 128 MiB, +26 and +27 %: the measured curve stalls at
 *               167-174 GB/s there before 214 at 256 MiB; from 256 MiB on
 *               within 6.2 %).  These sources give no single-node times
 *               below 128 MiB: the single-node small sizes are checked on the
 *               -g 8 table of multinode[] (h100_dgx_allreduce_8gpu_g8_vpbench).
 *   Multi-node (issue 18; H100 + 8 x 400 Gb/s InfiniBand per node, 2, 4
 *               and 8 nodes, all_reduce, nccl-tests issue 309; 8 nodes with
 *               CollNetChain on SHARP, CoreWeave's README; the other tables
 *               of multinode[]): busbw
 *               against the table's bar (MAPE <= 10 % over >= 64 MiB) and
 *               time against 25 % (MAPE over <= 1 MiB, outliers checked
 *               against the in-place time); a missed bar must be recorded
 *               in the table's `gap:` line, and must not get worse than
 *               recorded (gap_metric).
 *   Every committed nccl-tests table is judged here (test_every_table_judged):
 *               `fabricsim validate`'s tests leave the costly ones to this one.
 *   Reduced set (FS_TEST_REDUCED, the sanitizer build): the multi-node tables
 *               marked `reduced` below, whole, with their bars. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib/validate.h"
#include "scenario/nccl-ref.h"
#include "testutil.h"

/* The scenario `fabricsim validate` runs the tables in, without options. */
static FsScenario *scenario(void)
{
  GError *error = NULL;
  FsScenarioInputs in = {.needs = FS_SCENARIO_NEED_NCCL};
  FsScenario *sc = fs_scenario_load(&in, &error);
  fs_assert_no_error(error);
  return sc;
}

static FsValTable *table(const char *file)
{
  GError *error = NULL;
  g_autofree char *rel = g_build_filename("validation/reference", file, NULL);
  g_autofree char *p = fs_test_source_path(rel);
  FsValTable *t = fs_val_table_load(p, &error);
  fs_assert_no_error(error);
  return t;
}

static double err_pct(double pred, double meas) { return 100.0 * (pred - meas) / meas; }

static double busbw_check(const char *file, double row_bar, guint want_rows, double *max_abs)
{
  g_autoptr(FsScenario) sc = scenario();
  g_autoptr(FsValTable) t = table(file);
  GError *error = NULL;
  g_autoptr(FsValResult) res = fs_scenario_val_run(sc, t, &error);
  fs_assert_no_error(error);
  ck_assert(res->ran);
  int c_gpus = fs_val_table_col(t, "gpus", NULL);
  printf("%s: busbw (GB/s), bar: %s\n", file, res->bar);
  printf("%5s %12s %10s %10s %8s\n", "gpus", "size (B)", "predicted", "measured", "error %");
  *max_abs = 0;
  for (guint i = 0; i < res->rows->len; i++) {
    const FsValRow *r = &g_array_index(res->rows, FsValRow, i);
    uint64_t g = 8;
    if (c_gpus >= 0)
      ck_assert(fs_val_table_u64(t, r->row, c_gpus, &g, &error));
    gboolean in = r->in_scope;
    if (in)
      *max_abs = MAX(*max_abs, fabs(r->error_pct));
    printf("%5" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %10.2f %10.2f %+8.2f%s\n", g, r->size,
           r->predicted, r->measured, r->error_pct,
           !in ? "  (outside the bar)" : fabs(r->error_pct) > row_bar ? "  MISS" : "");
  }
  printf("MAPE %.2f %% over %u rows, max %.2f %%\n", res->mape, res->in_scope, *max_abs);
  ck_assert_uint_eq(res->in_scope, want_rows);
  return res->mape;
}

/* A single-node table: its bar, and its MAPE and worst row no worse than the bounds (the level
 * the model reaches today, header comment); rows: the rows in the bar's scope. */
static void single_check(const char *file, guint rows, double mape_bound, double row_bound)
{
  g_autoptr(FsValTable) t = table(file);
  double max_abs;
  double mape = busbw_check(file, row_bound, rows, &max_abs);
  ck_assert_double_le(mape, t->bar_pct);
  ck_assert_double_le(mape, mape_bound);
  ck_assert_double_le(max_abs, row_bound);
}

START_TEST(test_h100_azure_busbw)
{
  single_check("h100_hgx_allreduce_8gpu_g8_nvls_azure.csv", 8, 7.2, 11.5);
}
END_TEST

START_TEST(test_h100_nccltests290_busbw)
{
  single_check("h100_hgx_allreduce_8gpu_g8_nccltests290.csv", 6, 10.0, 13.0);
}
END_TEST

START_TEST(test_a100_azure_busbw)
{
  single_check("a100_hgx_allreduce_8gpu_g8_azure.csv", 8, 9.1, 27.5);
}
END_TEST

/* Time MAPE over the rows of size <= 1 MiB of an nccl-tests table, against the out-of-place
 * time, or the in-place time where the two disagree by more than 25 % (a measurement outlier,
 * as in test_h100_small_time).  *rows: how many rows it covers. */
static double small_time_mape(const char *file, guint *rows)
{
  g_autoptr(FsScenario) sc = scenario();
  g_autoptr(FsValTable) t = table(file);
  GError *error = NULL;
  void *ctx = NULL;
  const FsValKind *k = &fs_val_kind_nccl_tests;
  FsValInputs in = {fs_scenario_catalog(sc), NULL, sc};
  ck_assert(k->prepare(t, &in, &ctx, &error));
  int c_ip = fs_val_table_col(t, "ip_time_us", &error);
  fs_assert_no_error(error);
  double sum = 0;
  *rows = 0;
  int c_size = fs_val_table_col(t, "size_bytes", &error);
  fs_assert_no_error(error);
  printf("%s: time (us), size <= 1 MiB\n", file);
  for (guint r = 0; r < t->nrows; r++) {
    double pred, oop, ip;
    uint64_t size;
    /* The larger rows are busbw_check's (simulated there): not run again. */
    ck_assert(fs_val_table_u64(t, r, c_size, &size, &error));
    if (size > (1u << 20))
      continue;
    ck_assert(k->predict(ctx, t, r, "time", &pred, &oop, &size, &error));
    ck_assert(fs_val_table_double(t, r, c_ip, &ip, &error));
    if (size > (1u << 20))
      continue;
    gboolean outlier = MAX(oop, ip) > 1.25 * MIN(oop, ip);
    double e = err_pct(pred, outlier ? ip : oop);
    printf("%12" G_GUINT64_FORMAT " %10.2f %10.2f %10.2f %+8.2f%s\n", size, pred, oop, ip, e,
           outlier ? "  (oop/ip disagree > 25 %: checked vs ip)" : "");
    sum += fabs(e);
    (*rows)++;
  }
  k->free_ctx(ctx);
  return *rows > 0 ? sum / *rows : 0;
}

/* One metric of a multi-node table (validation/reference, issue 18) against its bar: either the
 * MAPE meets the bar and the table's `gap:` line does not mention the metric, or the gap line
 * records "<metric> MAPE N %" and the MAPE today is not worse than N (within half a point).
 * Fails when a gap closes but its record stays (it would hide a pass), when a bar is missed
 * without a record, and on a regression. */
static void gap_metric(const FsValTable *t, const char *metric, double mape, double bar)
{
  const char *gap = fs_val_table_key(t, "gap");
  g_autofree char *key = g_strdup_printf("%s MAPE ", metric);
  const char *at = gap != NULL ? strstr(gap, key) : NULL;
  if (mape <= bar) {
    ck_assert_msg(at == NULL, "%s: %s MAPE %.2f %% meets the bar (%.0f %%): remove it from the "
                  "gap line", t->name, metric, mape, bar);
    return;
  }
  ck_assert_msg(at != NULL, "%s: %s MAPE %.2f %% misses the bar (%.0f %%) and the gap line does "
                "not record it", t->name, metric, mape, bar);
  double recorded = g_ascii_strtod(at + strlen(key), NULL);
  printf("%s: known gap, %s MAPE %.2f %% (recorded %.2f %%, bar %.0f %%)\n", t->name, metric,
         mape, recorded, bar);
  ck_assert_msg(mape <= recorded + 0.5, "%s: %s MAPE %.2f %% is worse than the recorded %.2f %%",
                t->name, metric, mape, recorded);
}

/* A multi-node table: busbw against the table's bar (MAPE over >= 64 MiB), time against issue
 * 18's 25 % over <= 1 MiB where the table has such rows; want_busbw / want_time: the row counts. */
static void multinode_check(const char *file, guint want_busbw, guint want_time)
{
  g_autoptr(FsValTable) t = table(file);
  double max_abs;
  double mape = busbw_check(file, t->bar_pct, want_busbw, &max_abs);
  gap_metric(t, "busbw", mape, t->bar_pct);
  guint rows = 0;
  double tm = fs_val_table_col(t, "oop_time_us", NULL) >= 0 ? small_time_mape(file, &rows) : 0;
  ck_assert_msg(rows == want_time, "%s: %u time rows, expected %u", file, rows, want_time);
  if (rows > 0)
    gap_metric(t, "time", tm, 25.0);
}

/* The multi-node tables and their row counts (busbw rows >= 64 MiB, time rows <= 1 MiB; 0: the
 * source has bandwidths only).  h100_dgx_allreduce_8gpu_g8_vpbench is one process driving 8
 * GPUs from one thread (-g 8): the host launch floor (coll/launch.h), fitted on this table, sets
 * its small sizes.
 * reduced: kept in the reduced set (fs_test_reduced, the sanitizer build): one table per
 * collective and per cluster (H100 InfiniBand with its time rows, B200 for every collective,
 * one process driving 8 GPUs, EFA), each whole and with its bars; the others (the same
 * collective on larger clusters of the same kind: about 45 of the 56 s of CPU; CoreWeave's 8-node
 * CollNetChain all_reduce, whose CollNet code coll-streams runs under the sanitizers) run in the
 * plain build only.  CPU s: plain build, 2026-11-27 (tests/README.md, "CI time"). */
static const struct {
  const char *file;
  guint busbw_rows, time_rows;
  gboolean reduced;
} multinode[] = {
  {"h100_ib400_2node_allreduce_default_nccltests309.csv", 9, 18, TRUE},     /* 2.5 s */
  {"h100_ib400_4node_allreduce_default_nccltests309.csv", 9, 18, FALSE},    /* 11.3 s */
  {"h100_ib400_2to8node_allreduce_default_nccltests309.csv", 24, 3, FALSE}, /* 22.1 s */
  {"h100_dgx_allreduce_8gpu_g8_vpbench.csv", 8, 18, TRUE},
  {"h100_ib400_4node_allreduce_default_vpbench.csv", 8, 18, FALSE},         /* 4.6 s */
  {"h100_ib400_4node_allgather_default_vpbench.csv", 8, 12, FALSE},         /* 2.8 s */
  {"b200_ib400_2node_allreduce_default_vultr.csv", 8, 3, TRUE},
  {"b200_ib400_2node_allgather_default_vultr.csv", 8, 3, TRUE},
  {"b200_ib400_2node_reducescatter_default_vultr.csv", 8, 3, TRUE},
  {"b200_ib400_2node_alltoall_default_vultr2.csv", 8, 3, TRUE},
  {"b200_ib400_2node_sendrecv_default_vultr2.csv", 8, 3, TRUE},
  {"efa/h100_efa_2_4_16node_alltoall_default_awsbench_test.csv", 18, 0, TRUE}, /* 0.4 s */
  {"efa/h100_efa_8_32node_alltoall_default_awsbench_fit.csv", 12, 0, FALSE},     /* 1.2 s */
  {"efa/h100_efa_2to16node_allreduce_default_awsbench.csv", 32, 0, FALSE}, /* 4.9 s */
  {"h100_ib400_8node_allreduce_collnetchain_coreweave.csv", 5, 0, FALSE},  /* 1.8 s */
};

/* Indices into multinode[] of the tables this run checks (all, or the reduced set). */
static guint checked_tables[G_N_ELEMENTS(multinode)];

START_TEST(test_multinode)
{
  guint m = checked_tables[_i];
  multinode_check(multinode[m].file, multinode[m].busbw_rows, multinode[m].time_rows);
}
END_TEST

/* The tables judged here (the three single-node ones and multinode[]) are every committed
 * nccl-tests table of validation/reference and its efa/ folder, so that a table added there is
 * judged (fabricsim validate and tests/test-validate.c leave the costly ones to this test). */
START_TEST(test_every_table_judged)
{
  static const char *const single[] = {"h100_hgx_allreduce_8gpu_g8_nvls_azure.csv",
                                       "h100_hgx_allreduce_8gpu_g8_nccltests290.csv",
                                       "a100_hgx_allreduce_8gpu_g8_azure.csv"};
  static const char *const dirs[] = {"", "efa"};
  guint found = 0;
  for (guint d = 0; d < G_N_ELEMENTS(dirs); d++) {
    GError *error = NULL;
    g_autofree char *rel = g_build_filename("validation/reference", dirs[d], NULL);
    g_autofree char *dir = fs_test_source_path(rel);
    g_autoptr(GPtrArray) files = fs_val_list_tables(dir, &error);
    fs_assert_no_error(error);
    for (guint i = 0; i < files->len; i++) {
      const char *path = g_ptr_array_index(files, i);
      g_autoptr(FsValTable) t = fs_val_table_load(path, &error);
      fs_assert_no_error(error);
      if (g_strcmp0(fs_val_table_key(t, "kind"), "nccl-tests") != 0)
        continue;
      g_autofree char *base = g_path_get_basename(path);
      g_autofree char *name = dirs[d][0] != '\0' ? g_build_filename(dirs[d], base, NULL)
                                                 : g_strdup(base);
      gboolean listed = FALSE;
      for (guint s = 0; s < G_N_ELEMENTS(single); s++)
        listed |= strcmp(name, single[s]) == 0;
      for (guint m = 0; m < G_N_ELEMENTS(multinode); m++)
        listed |= strcmp(name, multinode[m].file) == 0;
      ck_assert_msg(listed, "validation/reference/%s: an nccl-tests table that "
                    "test-coll-accuracy.c does not judge (add it to multinode[])", name);
      found++;
    }
  }
  ck_assert_uint_eq(found, G_N_ELEMENTS(single) + G_N_ELEMENTS(multinode));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("coll-accuracy");
  FS_ADD_TEST(s, test_h100_azure_busbw);
  FS_ADD_TEST(s, test_h100_nccltests290_busbw);
  FS_ADD_TEST(s, test_a100_azure_busbw);
  FS_ADD_TEST(s, test_every_table_judged);
  guint n = 0;
  for (guint m = 0; m < G_N_ELEMENTS(multinode); m++)
    if (multinode[m].reduced || !fs_test_reduced())
      checked_tables[n++] = m;
  TCase *tc = tcase_create("test_multinode");
  tcase_add_loop_test(tc, test_multinode, 0, (int)n);
  /* The 2-8 node table takes about 19 s of CPU (rings of 2-4 loops per channel on 16
   * channels run whole): a busy machine needs more than 120 s. */
  tcase_set_timeout(tc, 300);
  suite_add_tcase(s, tc);
  return fs_test_run_suite(s);
}
