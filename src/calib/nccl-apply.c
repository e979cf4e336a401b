/* nccl-apply.c — a calibration's NCCL figures over NCCL's constants.  See
 * nccl-apply.h. */
#include "calib/nccl-apply.h"

static void note(GPtrArray *notes, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void note(GPtrArray *notes, const char *fmt, ...)
{
  if (notes == NULL)
    return;
  va_list ap;
  va_start(ap, fmt);
  g_ptr_array_add(notes, g_strdup_vprintf(fmt, ap));
  va_end(ap);
}

/* NCCL's hardware latency class of a link family (as nccl-simfit.c). */
static FsNcclHw hw_of(FsLinkFamily f)
{
  return f == FS_LINK_NVLINK ? FS_NCCL_HW_NVLINK : f == FS_LINK_PCIE ? FS_NCCL_HW_PCI : FS_NCCL_HW_NET;
}

guint fs_calibration_apply_nccl(const FsCalibration *cal, FsNcclParams *p, GPtrArray *notes)
{
  g_return_val_if_fail(p != NULL, 0);
  if (cal == NULL)
    return 0;
  guint changed = 0;
  const FsCalibNccl *ar = &cal->nccl[FS_CALIB_NCCL_ALL_REDUCE];
  if (ar->present && ar->ranks == 1 && ar->latency_floor_us > 0) {
    double ref = p->base_lat[FS_NCCL_ALGO_RING][FS_PROTO_LL];
    double delta = ar->latency_floor_us - ref;
    for (int a = 0; a < FS_NCCL_ALGO_N; a++)
      for (int q = 0; q < FS_PROTO_N; q++)
        if (p->base_lat[a][q] > 0)
          p->base_lat[a][q] = MAX(0.0, p->base_lat[a][q] + delta);
    note(notes, "nccl base latencies %+.3f us: Ring/LL %.3f -> %.3f us (one-rank all_reduce floor)",
         delta, ref, p->base_lat[FS_NCCL_ALGO_RING][FS_PROTO_LL]);
    changed++;
  }
  gboolean hw_done[FS_NCCL_HW_N] = {FALSE};
  for (guint i = 0; i < cal->n_link_fits; i++) {
    const FsCalibLinkFit *f = &cal->link_fits[i];
    FsNcclHw hw = hw_of(f->family);
    double ll = p->hw_lat[hw][FS_NCCL_ALGO_RING][FS_PROTO_LL];
    double scale = f->hw_latency_scale > 0 ? f->hw_latency_scale
                   : f->step_latency_us > 0 && ll > 0 ? f->step_latency_us / ll
                                                       : 0;
    /* Families that share a class (InfiniBand and Ethernet are both NET):
     * the first one listed decides. */
    if (scale <= 0 || hw_done[hw])
      continue;
    hw_done[hw] = TRUE;
    for (int a = 0; a < FS_NCCL_ALGO_N; a++)
      for (int q = 0; q < FS_PROTO_N; q++)
        p->hw_lat[hw][a][q] *= scale;
    note(notes, "nccl %s hardware latencies x %.4f (%s %s): Ring/LL %.3f -> %.3f us",
         fs_nccl_hw_name(hw), scale, fs_link_family_name(f->family),
         f->hw_latency_scale > 0 ? "hw_latency_scale fitted through the simulator"
                                 : "step_latency_us / Ring/LL",
         ll, p->hw_lat[hw][FS_NCCL_ALGO_RING][FS_PROTO_LL]);
    changed++;
  }
  return changed;
}
