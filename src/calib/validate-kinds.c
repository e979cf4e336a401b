/* validate-kinds.c — the table of reference kinds that `fabricsim
 * validate` can run (STYLE rule 7).  To add a kind: write its prepare /
 * predict / free callbacks here (or in the module that owns the model,
 * exporting one FsValKind) and add it to fs_val_kinds below; document its
 * header keys and columns in validation/reference/README.md.
 */
#include <string.h>

#include "calib/validate.h"
#include "calib/validate-nccl.h"
#include "util/error.h"

/* ---- host-copy: cudaMemcpyAsync over the GPU's host link ------------------
 * Header: `gpu:` catalog GPU model.  Columns: direction (h2d or d2h),
 * size_bytes, time_us.  Metrics: time (µs) and bandwidth (GB/s, size /
 * time).  Model: t = the GPU's copy_latency + size / its PCIe model's
 * effective bandwidth (both changed by --calibration). */

typedef struct {
  const FsModel *gpu;
  int c_dir, c_size, c_time;
} HostCopy;

static gboolean host_copy_prepare(const FsValTable *t, const FsCatalog *cat,
                                  const FsCalibration *cal, void **ctx,
                                  GError **error)
{
  (void)cal; /* the host link and copy latency were laid over the catalog */
  const char *name = fs_val_table_require(t, "gpu", error);
  if (name == NULL)
    return FALSE;
  GError *e = NULL;
  const FsModel *gpu = fs_catalog_require(cat, name, FS_MODEL_GPU, &e);
  if (gpu == NULL) {
    fs_error_prefix_at(e, t->file, 0, 0);
    g_propagate_error(error, e);
    return FALSE;
  }
  HostCopy *h = g_new0(HostCopy, 1);
  h->gpu = gpu;
  if ((h->c_dir = fs_val_table_col(t, "direction", error)) < 0 ||
      (h->c_size = fs_val_table_col(t, "size_bytes", error)) < 0 ||
      (h->c_time = fs_val_table_col(t, "time_us", error)) < 0) {
    g_free(h);
    return FALSE;
  }
  *ctx = h;
  return TRUE;
}

static gboolean host_copy_predict(void *ctx, const FsValTable *t, guint row, const char *metric,
                                  double *predicted, double *measured, uint64_t *size,
                                  GError **error)
{
  const HostCopy *h = ctx;
  const char *dir = t->cells[row][h->c_dir];
  if (strcmp(dir, "h2d") != 0 && strcmp(dir, "d2h") != 0) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, t->file, t->row_lines[row], 1,
                    "column \"direction\": expected h2d or d2h, got \"%s\"", dir);
    return FALSE;
  }
  double time_us;
  if (!fs_val_table_u64(t, row, h->c_size, size, error) ||
      !fs_val_table_double(t, row, h->c_time, &time_us, error))
    return FALSE;
  const FsGpuModel *g = &h->gpu->u.gpu;
  double pred_us = (double)g->copy_latency / 1e6 + (double)*size / g->pcie->u.link.bandwidth * 1e6;
  if (strcmp(metric, "time") == 0) {
    *predicted = pred_us;
    *measured = time_us;
  } else if (strcmp(metric, "bandwidth") == 0) {
    *predicted = (double)*size / pred_us / 1e3;
    *measured = (double)*size / time_us / 1e3;
  } else {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_KIND, t->file, 1, 1,
                    "kind host-copy predicts time or bandwidth, not \"%s\"", metric);
    return FALSE;
  }
  return TRUE;
}

static const FsValKind host_copy = {
  "host-copy",
  "cudaMemcpyAsync host<->device: GPU copy_latency + size / PCIe effective bandwidth",
  host_copy_prepare,
  host_copy_predict,
  g_free,
};

const FsValKind *const fs_val_kinds[] = {
  &host_copy,
  &fs_val_kind_nccl_tests,
  NULL,
};
