/* nccl-apply.c — a calibration's NCCL figures over NCCL's constants.  See
 * nccl-apply.h. */
#include "calib/nccl-apply.h"

#include <string.h>

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

const FsModel *fs_calibration_topo_gpu(const FsTopo *topo)
{
  guint n = 0;
  const guint *gpus = fs_topo_gpus(topo, &n);
  return n > 0 ? fs_topo_node(topo, gpus[0])->model : NULL;
}

/* Whether a fit over family with these link models describes gpu's links. */
static gboolean fit_matches(const FsCalibLinkFit *f, const FsModel *gpu)
{
  if (gpu == NULL || gpu->kind != FS_MODEL_GPU)
    return TRUE;
  const FsModel *link = f->family == FS_LINK_NVLINK ? gpu->u.gpu.nvlink
                        : f->family == FS_LINK_PCIE ? gpu->u.gpu.pcie
                                                    : NULL;
  if (f->family != FS_LINK_NVLINK && f->family != FS_LINK_PCIE)
    return TRUE;
  for (guint m = 0; link != NULL && f->models[m]; m++)
    if (strcmp(f->models[m], link->name) == 0)
      return TRUE;
  return FALSE;
}

/* See nccl-apply.h.  Also: each rule applied or skipped appends one line to notes (a note per
 * skip says why: another GPU, a fit of other link models); the base latencies shift by one
 * delta and never go below 0, and the hardware latencies of a class are scaled once. */
guint fs_calibration_apply_nccl(const FsCalibration *cal, const FsModel *gpu, FsNcclParams *p,
                                GPtrArray *notes)
{
  g_return_val_if_fail(p != NULL, 0);
  if (cal == NULL)
    return 0;
  guint changed = 0;
  const FsCalibNccl *ar = &cal->nccl[FS_CALIB_NCCL_ALL_REDUCE];
  gboolean same_gpu = gpu == NULL || cal->gpu_model == NULL || strcmp(gpu->name, cal->gpu_model) == 0;
  if (ar->present && ar->ranks == 1 && ar->latency_floor_us > 0 && !same_gpu)
    note(notes, "nccl base latencies not changed: the one-rank floor was measured on %s, the "
                "system has %s", cal->gpu_model, gpu->name);
  else if (ar->present && ar->ranks == 1 && ar->latency_floor_us > 0) {
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
    if (!fit_matches(f, gpu)) {
      note(notes, "nccl %s hardware latencies not changed: the %s fit is of other link models "
                  "than %s's", fs_nccl_hw_name(hw), fs_link_family_name(f->family), gpu->name);
      continue;
    }
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
