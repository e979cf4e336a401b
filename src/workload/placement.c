/* placement.c — see placement.h. */
#include "workload/placement.h"

#include <string.h>

#include "util/names.h"

static const char *const dim_names[] = { FS_PARALLEL_DIMS(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE_NAME(FsParallelDim, fs_parallel_dim, dim_names, FS_DIM_N)

/* The dense dimensions (tp, cp, dp, pp) in the workload's order, innermost
 * first, with their sizes.  The order was validated by fs_workload_resolve. */
typedef struct {
  FsParallelDim dim[4];
  guint size[4];
  guint stride[4];
} Layout;

static void layout_of(const FsWorkload *w, Layout *L)
{
  g_auto(GStrv) parts = g_strsplit(w->order ? w->order : "tp-cp-ep-dp-pp", "-", -1);
  guint n = 0, stride = 1;
  for (guint i = 0; parts[i] != NULL && n < 4; i++) {
    FsParallelDim d;
    guint size;
    if (strcmp(parts[i], "tp") == 0)
      d = FS_DIM_TP, size = w->tp;
    else if (strcmp(parts[i], "cp") == 0)
      d = FS_DIM_CP, size = w->cp;
    else if (strcmp(parts[i], "dp") == 0)
      d = FS_DIM_DP, size = w->dp;
    else if (strcmp(parts[i], "pp") == 0)
      d = FS_DIM_PP, size = w->pp;
    else
      continue; /* ep adds no ranks */
    L->dim[n] = d;
    L->size[n] = MAX(size, 1);
    L->stride[n] = stride;
    stride *= L->size[n];
    n++;
  }
  g_assert(n == 4);
}

static guint *coord_ref(FsRankCoords *c, FsParallelDim d)
{
  switch (d) {
  case FS_DIM_TP:
    return &c->tp;
  case FS_DIM_CP:
    return &c->cp;
  case FS_DIM_DP:
    return &c->dp;
  default:
    return &c->pp;
  }
}

void fs_workload_rank_coords(const FsWorkload *w, guint rank, FsRankCoords *out)
{
  g_return_if_fail(w != NULL && out != NULL);
  memset(out, 0, sizeof *out);
  Layout L;
  layout_of(w, &L);
  for (guint i = 0; i < 4; i++)
    *coord_ref(out, L.dim[i]) = (rank / L.stride[i]) % L.size[i];
  guint ep = MAX(w->ep, 1);
  guint f = out->cp + MAX(w->cp, 1) * out->dp;
  out->ep = f % ep;
  out->edp = f / ep;
}

guint fs_workload_rank_at(const FsWorkload *w, const FsRankCoords *c)
{
  Layout L;
  layout_of(w, &L);
  FsRankCoords tmp = *c;
  guint r = 0;
  for (guint i = 0; i < 4; i++)
    r += *coord_ref(&tmp, L.dim[i]) * L.stride[i];
  return r;
}

guint fs_workload_gpu_of_rank(const FsWorkload *w, guint rank)
{
  if (w->rank_map != NULL && rank < w->n_rank_map)
    return w->rank_map[rank];
  return rank;
}

guint fs_workload_group_size(const FsWorkload *w, FsParallelDim dim)
{
  switch (dim) {
  case FS_DIM_TP:
    return MAX(w->tp, 1);
  case FS_DIM_CP:
    return MAX(w->cp, 1);
  case FS_DIM_EP:
    return MAX(w->ep, 1);
  case FS_DIM_DP:
    return MAX(w->dp, 1);
  case FS_DIM_PP:
    return MAX(w->pp, 1);
  case FS_DIM_DP_CP:
    return MAX(w->dp, 1) * MAX(w->cp, 1);
  case FS_DIM_EDP:
    return MAX(MAX(w->dp, 1) * MAX(w->cp, 1) / MAX(w->ep, 1), 1);
  default:
    g_return_val_if_reached(1);
  }
}

guint fs_workload_group(const FsWorkload *w, FsParallelDim dim, guint rank, guint *out)
{
  FsRankCoords c;
  fs_workload_rank_coords(w, rank, &c);
  guint n = fs_workload_group_size(w, dim), cp = MAX(w->cp, 1), ep = MAX(w->ep, 1);
  for (guint i = 0; i < n; i++) {
    FsRankCoords m = c;
    switch (dim) {
    case FS_DIM_EP: {
      /* Same expert-data-parallel index, every expert-parallel index. */
      guint f = c.edp * ep + i;
      m.cp = f % cp;
      m.dp = f / cp;
      break;
    }
    case FS_DIM_DP_CP:
      m.cp = i % cp;
      m.dp = i / cp;
      break;
    case FS_DIM_EDP: {
      /* Same expert-parallel index, every expert-data-parallel index. */
      guint f = i * ep + c.ep;
      m.cp = f % cp;
      m.dp = f / cp;
      break;
    }
    default:
      *coord_ref(&m, dim) = i;
    }
    out[i] = fs_workload_rank_at(w, &m);
  }
  return n;
}
