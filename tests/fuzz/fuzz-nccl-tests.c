/* fuzz-nccl-tests.c — libFuzzer driver for the nccl-tests log reader
 * (src/calib/nccl-log.c: text output of every version and -J JSON).
 *
 * The bytes go to fs_nccl_log_parse named "fuzz.txt".  Promises checked: a
 * rejection is one line in FS_NCCL_LOG_ERROR or FS_JSON_ERROR starting
 * "fuzz.txt:LINE:COL: "; an accepted log has at least one test with at
 * least one row, every test's rows in file order, non-negative finite
 * sizes, times and bandwidths for the groups it has, a device list of
 * nranks entries when it has device lines, and nhosts ≤ nranks; every
 * dropped row has a line; fs_nccl_log_resolve (without and with hints)
 * accepts or gives one located line.  Corpus:
 * tests/data/nccl-tests/.
 */
#include <math.h>

#include "calib/nccl-log.h"
#include "util/json-pos.h"
#include "fuzz-common.h"

#define INPUT_NAME "fuzz.txt"

static gboolean good(double v) { return isfinite(v) && v >= 0; }

static void check_log(const FsNcclLog *log)
{
  if (log->tests == NULL || log->tests->len == 0)
    fs_fuzz_fail("an accepted log has no test");
  for (guint t = 0; t < log->tests->len; t++) {
    const FsNcclLogTest *test = g_ptr_array_index(log->tests, t);
    if (test->rows == NULL || test->rows->len == 0)
      fs_fuzz_fail("test %u has no row", t);
    if (test->devices != NULL && test->devices->len > 0 && test->nranks != test->devices->len)
      fs_fuzz_fail("test %u: %u device lines but %u ranks", t, test->devices->len,
                   test->nranks);
    if (test->nhosts > MAX(test->nranks, 1))
      fs_fuzz_fail("test %u: %u hosts for %u ranks", t, test->nhosts, test->nranks);
    if (test->has_avg_busbw && !(test->avg_busbw >= 0) && !isnan(test->avg_busbw))
      fs_fuzz_fail("test %u: average bus bandwidth %g", t, test->avg_busbw);
    int last = 0;
    for (guint i = 0; i < test->rows->len; i++) {
      const FsNcclLogRow *r = &g_array_index(test->rows, FsNcclLogRow, i);
      if (!log->json && r->line < last)
        fs_fuzz_fail("test %u row %u: line %d after line %d", t, i, r->line, last);
      last = r->line;
      if (!r->has_oop && !r->has_ip)
        fs_fuzz_fail("test %u row %u: neither out-of-place nor in-place figures", t, i);
      if (r->has_oop && (!good(r->oop_time_us) || !good(r->oop_algbw) || !good(r->oop_busbw)))
        fs_fuzz_fail("test %u row %u: out-of-place %g us %g %g GB/s", t, i, r->oop_time_us,
                     r->oop_algbw, r->oop_busbw);
      if (r->has_ip && (!good(r->ip_time_us) || !good(r->ip_algbw) || !good(r->ip_busbw)))
        fs_fuzz_fail("test %u row %u: in-place %g us %g %g GB/s", t, i, r->ip_time_us,
                     r->ip_algbw, r->ip_busbw);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  GError *error = NULL;
  FsNcclLog *log = fs_nccl_log_parse((const char *)data, size, INPUT_NAME, &error);
  if (log == NULL) {
    fs_fuzz_rejected(error, INPUT_NAME, FS_NCCL_LOG_ERROR, FS_JSON_ERROR, "nccl-tests log");
    return 0;
  }
  if (error != NULL)
    fs_fuzz_fail("the parse succeeded but set an error: %s", error->message);
  check_log(log);
  for (guint i = 0; i < log->dropped->len; i++)
    if (g_array_index(log->dropped, FsNcclLogDrop, i).line < 1)
      fs_fuzz_fail("dropped row %u without a line", i);
  /* The checks of calibrate (no hints, then --op all_reduce --ranks 16
   * --nodes 2): accepted, or one located line. */
  FsNcclLogHints none = {NULL, 0, 0}, some = {"all_reduce", 16, 2};
  GError *e1 = NULL, *e2 = NULL;
  if (!fs_nccl_log_resolve(log, &none, &e1))
    fs_fuzz_rejected(e1, INPUT_NAME, FS_NCCL_LOG_ERROR, 0, "nccl-tests log check");
  if (!fs_nccl_log_resolve(log, &some, &e2))
    fs_fuzz_rejected(e2, INPUT_NAME, FS_NCCL_LOG_ERROR, 0, "nccl-tests log check");
  g_free(fs_nccl_log_drops_text((const FsNcclLogDrop *)log->dropped->data, log->dropped->len));
  fs_nccl_log_free(log);
  return 0;
}
