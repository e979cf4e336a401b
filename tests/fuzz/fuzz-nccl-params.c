/* fuzz-nccl-params.c — libFuzzer driver for the NCCL parameter tables
 * reader (src/coll/nccl-params.c, models/nccl/nccl.yaml).
 *
 * The bytes go to fs_nccl_params_load_string named "fuzz.yaml".  Promises
 * checked: a rejection is one line in FS_COLL_ERROR or FS_YAML_ERROR
 * starting "fuzz.yaml:LINE:COL: "; accepted tables have at least one step,
 * chunk and slice sizes of at least one byte for every protocol (no
 * division by zero), non-negative finite latencies, and every listed
 * architecture found by fs_nccl_params_arch_row.  Corpus:
 * tests/data/nccl-params/.
 */
#include <math.h>

#include "coll/comm.h"
#include "coll/nccl-params.h"
#include "fuzz-common.h"
#include "util/yaml.h"

#define INPUT_NAME "fuzz.yaml"

static void check(const FsNcclParams *p)
{
  if (p->steps < 1)
    fs_fuzz_fail("accepted %u steps", p->steps);
  for (int pr = 0; pr < FS_PROTO_N; pr++) {
    if (fs_nccl_params_chunk_bytes(p, pr) < 1 || fs_nccl_params_slice_bytes(p, pr) < 1)
      fs_fuzz_fail("protocol %d: empty chunk or slice", pr);
    if (!(p->proto[pr].payload > 0) || !isfinite(p->proto[pr].payload))
      fs_fuzz_fail("protocol %d: payload %g", pr, p->proto[pr].payload);
  }
  for (int a = 0; a < FS_NCCL_ALGO_N; a++)
    for (int pr = 0; pr < FS_PROTO_N; pr++) {
      if (!(p->base_lat[a][pr] >= 0) || !isfinite(p->base_lat[a][pr]))
        fs_fuzz_fail("base latency %g", p->base_lat[a][pr]);
      for (int h = 0; h < FS_NCCL_HW_N; h++)
        if (!(p->hw_lat[h][a][pr] >= 0) || !isfinite(p->hw_lat[h][a][pr]))
          fs_fuzz_fail("hardware latency %g", p->hw_lat[h][a][pr]);
    }
  for (guint i = 0; i < p->n_archs; i++) {
    FsNcclRow row;
    if (p->arch_names[i] == NULL || !fs_nccl_params_arch_row(p, p->arch_names[i], &row) ||
        row < 0 || row >= FS_NCCL_ROW_N)
      fs_fuzz_fail("architecture %u has no row", i);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  GError *error = NULL;
  g_autofree char *text = fs_fuzz_text(data, size);
  FsNcclParams *p = fs_nccl_params_load_string(text, (gssize)size, INPUT_NAME, &error);
  if (p == NULL) {
    fs_fuzz_rejected(error, INPUT_NAME, FS_COLL_ERROR, FS_YAML_ERROR, "NCCL parameters");
    return 0;
  }
  if (error != NULL)
    fs_fuzz_fail("the load succeeded but set an error: %s", error->message);
  check(p);
  fs_nccl_params_free(p);
  return 0;
}
