/* fuzz-calibration.c — libFuzzer driver for the calibration file reader
 * (src/calib/calibration.c over src/util/json-pos.c).
 *
 * The bytes go to fs_calibration_load_string named "fuzz.json".  Promises
 * checked: a rejection is one line in FS_CALIB_ERROR or FS_JSON_ERROR
 * starting "fuzz.json:LINE:COL: "; an accepted file has schema major
 * version FS_CALIB_SCHEMA_MAJOR, GEMM points sorted by m·n·k with positive
 * dimensions and rates, non-negative latencies and bandwidths, NCCL entries
 * with at least one rank, and warnings that are one-line sentences.
 * Corpus: tests/data/calibration/.
 */
#include <math.h>

#include "calib/calibration.h"
#include "util/json-pos.h"
#include "fuzz-common.h"

#define INPUT_NAME "fuzz.json"

static void nonneg(const char *what, double v)
{
  if (!(v >= 0) || !isfinite(v))
    fs_fuzz_fail("an accepted file has %s = %g", what, v);
}

static void check(const FsCalibration *cal)
{
  if (cal->schema_version != FS_CALIB_SCHEMA_MAJOR)
    fs_fuzz_fail("accepted schema_version %d", cal->schema_version);
  nonneg("h2d_peak", cal->h2d_peak);
  nonneg("d2h_peak", cal->d2h_peak);
  nonneg("bidir_peak", cal->bidir_peak);
  nonneg("h2d_latency_us", cal->h2d_latency_us);
  nonneg("d2h_latency_us", cal->d2h_latency_us);
  nonneg("membw_copy", cal->membw_copy);
  nonneg("membw_triad", cal->membw_triad);
  nonneg("d2d_memcpy", cal->d2d_memcpy);
  const FsCalibCompute *c = &cal->compute;
  if (c->launch_latency < 0 || c->graph_launch_latency < 0 || c->sync_launch_latency < 0)
    fs_fuzz_fail("negative launch latency");
  for (int d = 0; d < FS_DTYPE_N; d++) {
    double last = 0;
    for (guint i = 0; i < c->n_gemm[d]; i++) {
      const FsCalibGemmPoint *g = &c->gemm[d][i];
      if (g->m == 0 || g->n == 0 || g->k == 0 || !(g->rate > 0) || !isfinite(g->rate))
        fs_fuzz_fail("GEMM point %s: %" G_GUINT64_FORMAT "x%" G_GUINT64_FORMAT "x%" G_GUINT64_FORMAT
                     " at %g FLOP/s", g->shape, g->m, g->n, g->k, g->rate);
      double size = (double)g->m * (double)g->n * (double)g->k;
      if (size < last)
        fs_fuzz_fail("GEMM points not sorted by m*n*k");
      last = size;
    }
  }
  for (int k = 0; k < FS_CALIB_NCCL_N; k++) {
    const FsCalibNccl *n = &cal->nccl[k];
    if (!n->present)
      continue;
    if (n->ranks < 1)
      fs_fuzz_fail("NCCL %s entry with %u ranks", fs_calib_nccl_op_name(k), n->ranks);
    nonneg("latency_floor_us", n->latency_floor_us);
    nonneg("peak_algbw", n->peak_algbw);
    nonneg("peak_busbw", n->peak_busbw);
  }
  for (guint i = 0; i < cal->n_link_fits; i++)
    if (cal->link_fits[i].models == NULL)
      fs_fuzz_fail("link fit %u has no model list", i);
  for (guint i = 0; i < cal->warnings->len; i++) {
    const char *w = g_ptr_array_index(cal->warnings, i);
    if (w == NULL || w[0] == '\0' || strchr(w, '\n') != NULL)
      fs_fuzz_fail("warning %u is empty or several lines", i);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  GError *error = NULL;
  FsCalibration *cal = fs_calibration_load_string((const char *)data, size, INPUT_NAME, &error);
  if (cal == NULL) {
    fs_fuzz_rejected(error, INPUT_NAME, FS_CALIB_ERROR, FS_JSON_ERROR, "calibration");
    return 0;
  }
  if (error != NULL)
    fs_fuzz_fail("the load succeeded but set an error: %s", error->message);
  check(cal);
  fs_calibration_free(cal);
  return 0;
}
