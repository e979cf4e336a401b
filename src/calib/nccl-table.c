/* nccl-table.c — a reference table of kind nccl-tests read as an
 * nccl-tests log, so that `fabricsim calibrate nccl-tests` fits the same
 * published figures `fabricsim validate` compares against.  See
 * fs_nccl_log_load_table in nccl-log.h. */
#include <math.h>
#include <string.h>

#include "calib/nccl-log.h"
#include "calib/validate.h"
#include "util/datadir.h"
#include "util/error.h"

static FsNcclLogTest *test_for(FsNcclLog *log, guint nranks, const char *coll, int line)
{
  for (guint i = 0; i < log->tests->len; i++) {
    FsNcclLogTest *t = g_ptr_array_index(log->tests, i);
    if (t->nranks == nranks)
      return t;
  }
  FsNcclLogTest *t = fs_nccl_log_add_test(log, line);
  t->collective = g_strdup(coll);
  t->nranks = nranks;
  t->ranks_from = FS_NCCL_LOG_FROM_TABLE;
  t->ranks_line = line;
  t->collective_line = line;
  return t;
}

/* See nccl-log.h.  Also: a table without rows fails with FS_NCCL_LOG_ERROR_EMPTY, and the in-place
 * figures are read only when both of their columns are present.  The caller owns the log. */
FsNcclLog *fs_nccl_log_load_table(const char *name, GError **error)
{
  g_autofree char *path = fs_datadir_resolve(name);
  g_autoptr(FsValTable) tab = fs_val_table_load(path, error);
  if (tab == NULL)
    return NULL;
  const char *kind = fs_val_table_key(tab, "kind");
  if (g_strcmp0(kind, "nccl-tests") != 0) {
    fs_set_error_at(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_PARSE, path, 1, 1,
                    "a reference table of kind nccl-tests was expected, this one is \"%s\"",
                    kind != NULL ? kind : "(no kind)");
    return NULL;
  }
  const char *coll = fs_val_table_require(tab, "collective", error);
  if (coll == NULL)
    return NULL;
  int c_gpus = fs_val_table_col(tab, "gpus", NULL);
  guint64 ranks = 0;
  if (c_gpus < 0) {
    const char *r = fs_val_table_require(tab, "ranks", error);
    if (r == NULL)
      return NULL;
    if (!g_ascii_string_to_unsigned(r, 10, 1, 65536, &ranks, NULL)) {
      fs_set_error_at(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_PARSE, path, 1, 1,
                      "ranks: expected a rank count, got \"%s\"", r);
      return NULL;
    }
  }
  int c_size = fs_val_table_col(tab, "size_bytes", error);
  int c_time = c_size < 0 ? -1 : fs_val_table_col(tab, "oop_time_us", error);
  int c_bw = c_time < 0 ? -1 : fs_val_table_col(tab, "oop_busbw_GBps", error);
  if (c_bw < 0)
    return NULL;
  int c_itime = fs_val_table_col(tab, "ip_time_us", NULL);
  int c_ibw = fs_val_table_col(tab, "ip_busbw_GBps", NULL);
  g_autoptr(FsNcclLog) log = fs_nccl_log_new(path);
  for (guint i = 0; i < tab->nrows; i++) {
    uint64_t n = ranks, size;
    FsNcclLogRow r = {.root = -1, .oop_wrong = NAN, .ip_wrong = NAN, .line = tab->row_lines[i]};
    if ((c_gpus >= 0 && !fs_val_table_u64(tab, i, c_gpus, &n, error)) ||
        !fs_val_table_u64(tab, i, c_size, &size, error) ||
        !fs_val_table_double(tab, i, c_time, &r.oop_time_us, error) ||
        !fs_val_table_double(tab, i, c_bw, &r.oop_busbw, error))
      return NULL;
    if (n == 0 || n > 65536) {
      fs_set_error_at(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_PARSE, path,
                      tab->row_lines[i], 1, "gpus: expected 1 to 65536 ranks, got %" G_GUINT64_FORMAT, n);
      return NULL;
    }
    r.size = size;
    r.count = size / 4;
    r.type = g_strdup("float");
    r.redop = g_strdup("sum");
    r.has_oop = TRUE;
    r.oop_algbw = r.oop_time_us > 0 ? size / 1e3 / r.oop_time_us : 0;
    if (c_itime >= 0 && c_ibw >= 0) {
      if (!fs_val_table_double(tab, i, c_itime, &r.ip_time_us, error) ||
          !fs_val_table_double(tab, i, c_ibw, &r.ip_busbw, error)) {
        g_free(r.type);
        g_free(r.redop);
        return NULL;
      }
      r.has_ip = TRUE;
      r.ip_algbw = r.ip_time_us > 0 ? size / 1e3 / r.ip_time_us : 0;
    }
    FsNcclLogTest *t = test_for(log, (guint)n, coll, tab->row_lines[i]);
    g_array_append_val(t->rows, r);
  }
  if (log->tests->len == 0) {
    fs_set_error_at(error, FS_NCCL_LOG_ERROR, FS_NCCL_LOG_ERROR_EMPTY, path, 1, 1,
                    "the table has no rows");
    return NULL;
  }
  return g_steal_pointer(&log);
}
