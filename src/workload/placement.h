/* placement.h — where each rank of a resolved workload sits in the
 * parallel layout, which GPU runs it, and the communication groups.
 *
 * Ranks are numbered by the workload's `placement.order`, innermost
 * dimension first (default "tp-cp-ep-dp-pp", Megatron-LM's): with it the TP
 * ranks of a group are consecutive GPUs, so tensor parallelism stays inside
 * a node.  As in Megatron, expert parallelism does not add ranks: it splits
 * the dp × cp ranks of one (tp, pp) position, so the dense coordinates are
 * (tp, cp, dp, pp) laid out by the order without "ep", and the expert
 * coordinates divide f = cp + cp_size · dp into ep = f mod ep_size (inner)
 * and edp = f div ep_size (expert data parallel).
 *
 * rank → GPU is placement.ranks when given, else the identity.
 * Everything is arithmetic on the resolved sizes: O(1) per coordinate,
 * O(group size) per group; nothing allocates.
 */
#pragma once

#include <glib.h>

#include "workload/spec.h"

G_BEGIN_DECLS

/* Parallel dimensions and the groups the executor builds communicators for. */
#define FS_PARALLEL_DIMS(X)   \
  X(TP, "tp")                 \
  X(CP, "cp")                 \
  X(EP, "ep")                 \
  X(DP, "dp")                 \
  X(PP, "pp")                 \
  X(DP_CP, "dp-cp")           \
  X(EDP, "edp")

typedef enum {
#define X(id, str) FS_DIM_##id,
  FS_PARALLEL_DIMS(X)
#undef X
  FS_DIM_N
} FsParallelDim;

const char *fs_parallel_dim_name(FsParallelDim d);

typedef struct {
  guint tp, cp, dp, pp;  /* dense coordinates */
  guint ep, edp;         /* expert-parallel index and expert-data-parallel index */
} FsRankCoords;

/* Coordinates of rank (0 <= rank < w->gpus). */
void fs_workload_rank_coords(const FsWorkload *w, guint rank, FsRankCoords *out);

/* The rank at dense coordinates c (c->ep and c->edp are ignored). */
guint fs_workload_rank_at(const FsWorkload *w, const FsRankCoords *c);

/* The GPU (index in the topology's GPU order) that runs rank. */
guint fs_workload_gpu_of_rank(const FsWorkload *w, guint rank);

/* The size of rank's group along dim (tp, cp, ep, dp, pp, dp × cp: the
 * gradient-reduction group, or edp: the expert-data-parallel group, the
 * dp × cp / ep ranks that hold the same experts and reduce their gradients —
 * Megatron-Core's DP·CP·TP / (ETP·EP) with the expert TP size equal to tp). */
guint fs_workload_group_size(const FsWorkload *w, FsParallelDim dim);

/* Writes the ranks of rank's group along dim into out (which holds
 * fs_workload_group_size(w, dim) entries), ordered by their index along
 * the dimension; rank itself is among them.  Returns the count. */
guint fs_workload_group(const FsWorkload *w, FsParallelDim dim, guint rank, guint *out);

G_END_DECLS
