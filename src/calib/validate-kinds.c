/* validate-kinds.c — the table of calib's reference kinds (STYLE rule 7):
 * the ones that need no simulated world.  To add a kind: write its prepare /
 * predict / free callbacks here and add it to fs_val_kinds below (a kind
 * that simulates belongs to scenario/, whose table scenario/nccl-ref.c
 * lists calib's kinds and its own); document its header keys and columns
 * in validation/reference/README.md.
 */
#include <string.h>

#include "calib/calibration.h"
#include "calib/validate.h"
#include "compute/kernel.h"
#include "util/error.h"

/* ---- host-copy: cudaMemcpyAsync over the GPU's host link ------------------
 * Header: `gpu:` catalog GPU model.  Columns: direction (h2d or d2h),
 * size_bytes, time_us.  Metrics: time (µs) and bandwidth (GB/s, size /
 * time).  Model: t = the GPU's copy_latency + size / its PCIe model's
 * effective bandwidth (both changed by --calibration). */

/* The catalog GPU named by the table's `gpu` header key; NULL with an
 * error at the table's file when the key is missing or names no GPU. */
static const FsModel *table_gpu(const FsValTable *t, const FsCatalog *cat, GError **error)
{
  const char *name = fs_val_table_require(t, "gpu", error);
  if (name == NULL)
    return NULL;
  GError *e = NULL;
  const FsModel *gpu = fs_catalog_require(cat, name, FS_MODEL_GPU, &e);
  if (gpu == NULL) {
    fs_error_prefix_at(e, t->file, 0, 0);
    g_propagate_error(error, e);
  }
  return gpu;
}

typedef struct {
  const FsModel *gpu;
  int c_dir, c_size, c_time;
} HostCopy;

static gboolean host_copy_prepare(const FsValTable *t, const FsValInputs *in, void **ctx,
                                  GError **error)
{
  /* in->cal: the host link and copy latency were laid over the catalog */
  const FsModel *gpu = table_gpu(t, in->cat, error);
  if (gpu == NULL)
    return FALSE;
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

const FsValKind fs_val_kind_host_copy = {
  "host-copy",
  "cudaMemcpyAsync host<->device: GPU copy_latency + size / PCIe effective bandwidth",
  host_copy_prepare,
  host_copy_predict,
  g_free,
};

/* ---- gemm: one GEMM kernel's time on one GPU --------------------------------
 * Header: `gpu:` catalog GPU model.  Columns: dtype (a catalog datatype), m,
 * n, k (C is m×n, k summed), time_us (the kernel's time without the launch
 * floor).  Metric: time (µs).  Model: fs_kernel_time of fs_kernel_gemm with
 * the default efficiency curves (models/compute, their measured shapes
 * included; --calibration lays its GEMM points over them), less the launch
 * overhead the kernel model adds. */

/* What the kernel kinds (gemm, attention) keep between rows: the table's GPU,
 * the default efficiency curves with the calibration laid over them, and the
 * columns they read, in the order of the kind's column-name list. */
typedef struct {
  const FsModel *gpu;
  FsEfficiency *eff;
  int col[8];
} KernelTable;

static void kernel_table_free(void *ctx)
{
  KernelTable *k = ctx;
  if (k == NULL)
    return;
  fs_efficiency_free(k->eff);
  g_free(k);
}

/* Prepares a kernel kind: the table's GPU (table_gpu), the default curves
 * (calibrated when cal is not NULL) and the columns named by cols (NULL-
 * terminated, at most 8), each required.  *ctx takes a KernelTable, freed by
 * kernel_table_free; FALSE with error set and nothing allocated otherwise. */
static gboolean kernel_table_prepare(const FsValTable *t, const FsCatalog *cat,
                                     const FsCalibration *cal, const char *const *cols,
                                     void **ctx, GError **error)
{
  const FsModel *gpu = table_gpu(t, cat, error);
  if (gpu == NULL)
    return FALSE;
  g_autoptr(FsEfficiency) eff = fs_efficiency_load_default(NULL, error);
  if (eff == NULL || (cal != NULL && !fs_calibration_apply_efficiency(cal, cat, eff, error)))
    return FALSE;
  KernelTable *k = g_new0(KernelTable, 1);
  k->gpu = gpu;
  for (guint i = 0; cols[i] != NULL; i++) {
    g_assert(i < G_N_ELEMENTS(k->col));
    if ((k->col[i] = fs_val_table_col(t, cols[i], error)) < 0) {
      g_free(k);
      return FALSE;
    }
  }
  k->eff = g_steal_pointer(&eff);
  *ctx = k;
  return TRUE;
}

enum { GEMM_DTYPE, GEMM_M, GEMM_N, GEMM_K, GEMM_TIME };
static const char *const gemm_cols[] = {"dtype", "m", "n", "k", "time_us", NULL};

static gboolean gemm_prepare(const FsValTable *t, const FsValInputs *in, void **ctx,
                             GError **error)
{
  return kernel_table_prepare(t, in->cat, in->cal, gemm_cols, ctx, error);
}

static gboolean gemm_predict(void *ctx, const FsValTable *t, guint row, const char *metric,
                             double *predicted, double *measured, uint64_t *size, GError **error)
{
  const KernelTable *g = ctx;
  if (strcmp(metric, "time") != 0) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_KIND, t->file, 1, 1,
                    "kind gemm predicts time, not \"%s\"", metric);
    return FALSE;
  }
  const char *dt = t->cells[row][g->col[GEMM_DTYPE]];
  FsDtype dtype;
  if (!fs_dtype_from_name(dt, &dtype)) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, t->file, t->row_lines[row], 1,
                    "column \"dtype\": unknown datatype \"%s\"", dt);
    return FALSE;
  }
  uint64_t m, n, k;
  double time_us;
  if (!fs_val_table_u64(t, row, g->col[GEMM_M], &m, error) || !fs_val_table_u64(t, row, g->col[GEMM_N], &n, error) ||
      !fs_val_table_u64(t, row, g->col[GEMM_K], &k, error) ||
      !fs_val_table_double(t, row, g->col[GEMM_TIME], &time_us, error))
    return FALSE;
  if (m == 0 || n == 0 || k == 0) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, t->file, t->row_lines[row], 1,
                    "columns m, n, k: a GEMM dimension must be at least 1");
    return FALSE;
  }
  FsKernel kn = fs_kernel_gemm("gemm", FS_PASS_FORWARD, dtype, m, n, k, 1);
  FsKernelTiming tm;
  fs_kernel_time(&kn, &g->gpu->u.gpu, g->eff, &tm);
  *predicted = fs_time_to_s(tm.time - tm.launch) * 1e6;
  *measured = time_us;
  *size = (uint64_t)kn.bytes;
  return TRUE;
}

const FsValKind fs_val_kind_gemm = {
  "gemm",
  "one GEMM kernel: max(FLOPs / (peak x efficiency(FLOPs curve x measured-shape factor)), "
  "bytes / (HBM bandwidth x memory efficiency)), launch excluded",
  gemm_prepare,
  gemm_predict,
  kernel_table_free,
};

/* ---- attention: one fused attention kernel's time on one GPU -----------------
 * Header: `gpu:` catalog GPU model.  Columns: dtype (a catalog datatype),
 * pass (forward or backward), causal (true or false), batch, heads, seq
 * (query and key length), head_dim, tflops (the published TFLOP/s in
 * FlashAttention's convention: forward 4·batch·heads·seq²·head_dim, halved
 * with a causal mask; backward 2.5× the forward).  Metrics: time (µs: the
 * kernel's FLOPs over tflops) and tflops.  Model: fs_kernel_time of
 * fs_kernel_attention (one query head per KV head) with the default
 * efficiency curves (models/compute, their head_dims: factors included;
 * --calibration lays its curves over them), less the launch overhead the
 * kernel model adds. */

enum { ATTN_DTYPE, ATTN_PASS, ATTN_CAUSAL, ATTN_BATCH, ATTN_HEADS, ATTN_SEQ, ATTN_D, ATTN_TFLOPS };
static const char *const attn_cols[] = {"dtype", "pass", "causal", "batch", "heads", "seq",
                                        "head_dim", "tflops", NULL};

static gboolean attn_prepare(const FsValTable *t, const FsValInputs *in, void **ctx,
                             GError **error)
{
  return kernel_table_prepare(t, in->cat, in->cal, attn_cols, ctx, error);
}

/* Reads column col of row as one of two words (FALSE for no, TRUE for
 * yes); an error at the row otherwise. */
static gboolean cell_choice(const FsValTable *t, guint row, int col, const char *no,
                            const char *yes, gboolean *out, GError **error)
{
  const char *v = t->cells[row][col];
  if (strcmp(v, no) == 0 || strcmp(v, yes) == 0) {
    *out = strcmp(v, yes) == 0;
    return TRUE;
  }
  fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, t->file, t->row_lines[row], 1,
                  "column \"%s\": expected %s or %s, got \"%s\"", t->cols[col], no, yes, v);
  return FALSE;
}

/* One row: the attention kernel of its dtype, pass, mask and sizes timed
 * by the kernel model without its launch overhead, against the row's FLOPs
 * at its published TFLOP/s (metric time), or the same as TFLOP/s (metric
 * tflops); *size is the sequence length.  An error at the row for a bad
 * cell or a non-positive size. */
static gboolean attn_predict(void *ctx, const FsValTable *t, guint row, const char *metric,
                             double *predicted, double *measured, uint64_t *size, GError **error)
{
  const KernelTable *a = ctx;
  gboolean want_time = strcmp(metric, "time") == 0;
  if (!want_time && strcmp(metric, "tflops") != 0) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_KIND, t->file, 1, 1,
                    "kind attention predicts time or tflops, not \"%s\"", metric);
    return FALSE;
  }
  const char *dt = t->cells[row][a->col[ATTN_DTYPE]];
  FsDtype dtype;
  if (!fs_dtype_from_name(dt, &dtype)) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, t->file, t->row_lines[row], 1,
                    "column \"dtype\": unknown datatype \"%s\"", dt);
    return FALSE;
  }
  gboolean backward, causal;
  uint64_t b, h, s, d;
  double tflops;
  if (!cell_choice(t, row, a->col[ATTN_PASS], "forward", "backward", &backward, error) ||
      !cell_choice(t, row, a->col[ATTN_CAUSAL], "false", "true", &causal, error) ||
      !fs_val_table_u64(t, row, a->col[ATTN_BATCH], &b, error) ||
      !fs_val_table_u64(t, row, a->col[ATTN_HEADS], &h, error) ||
      !fs_val_table_u64(t, row, a->col[ATTN_SEQ], &s, error) ||
      !fs_val_table_u64(t, row, a->col[ATTN_D], &d, error) ||
      !fs_val_table_double(t, row, a->col[ATTN_TFLOPS], &tflops, error))
    return FALSE;
  if (b == 0 || h == 0 || s == 0 || d == 0 || !(tflops > 0)) {
    fs_set_error_at(error, FS_VAL_ERROR, FS_VAL_ERROR_PARSE, t->file, t->row_lines[row], 1,
                    "columns batch, heads, seq, head_dim and tflops must be positive");
    return FALSE;
  }
  FsKernel kn = fs_kernel_attention("attention", backward ? FS_PASS_BACKWARD : FS_PASS_FORWARD,
                                    dtype, b * h, s, s, d, 1, causal, backward);
  FsKernelTiming tm;
  fs_kernel_time(&kn, &a->gpu->u.gpu, a->eff, &tm);
  double pred_us = fs_time_to_s(tm.time - tm.launch) * 1e6;
  double meas_us = kn.flops / (tflops * 1e12) * 1e6;
  *predicted = want_time ? pred_us : kn.flops / pred_us / 1e6;
  *measured = want_time ? meas_us : tflops;
  *size = s;
  return TRUE;
}

const FsValKind fs_val_kind_attention = {
  "attention",
  "one fused attention kernel: max(FLOPs / (peak x efficiency(sequence curve x head-dim factor)), "
  "bytes / (HBM bandwidth x memory efficiency)), launch excluded",
  attn_prepare,
  attn_predict,
  kernel_table_free,
};

const FsValKind *const fs_val_kinds[] = {
  &fs_val_kind_host_copy,
  &fs_val_kind_gemm,
  &fs_val_kind_attention,
  NULL,
};
