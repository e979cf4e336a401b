/* paths.h — classification of GPU pairs the way `nvidia-smi topo -m` and
 * NCCL do: how two GPUs are connected, from best to worst.
 *
 *   X     the same GPU
 *   NV#   NVLink: # direct NVLinks between the pair, plus, when both GPUs
 *         reach the same NVSwitch plane, the smaller of the two GPUs'
 *         NVLink counts into that plane (DGX H100: 5+4+4+5 = NV18)
 *   PIX   PCIe through at most one PCIe switch
 *   PXB   PCIe through several PCIe switches, no host bridge
 *   PHB   PCIe through one CPU host bridge (root complex)
 *   NODE  through two or more host bridges of one socket (NUMA node)
 *   SYS   across the inter-socket link (QPI/UPI/X-Bus/xGMI)
 *   NET   different hosts, no NVLink between them: through the network
 *
 * How the rules map to NCCL (src/graph/paths.cc, PATH_* in topo.h):
 * NV# is PATH_NVL (NCCL also has PATH_NVB, NVLink through an intermediate
 * GPU, which nvidia-smi does not print and which we do not report);
 * PIX, PXB, PHB and SYS are PATH_PIX, PATH_PXB, PATH_PHB and PATH_SYS;
 * NODE is nvidia-smi's split of PATH_PHB (NCCL treats NODE as PHB); NET is
 * PATH_NET.  Multi-node NVLink (an NVL72 rack or an NVLink Switch System)
 * is NV#, as NCCL's MNNVL support sees it.  See topologies/README.md.
 *
 * The host path is the shortest path (fewest hops) from one GPU to the
 * other through PCIe switches and CPUs only, over PCIe, NVLink-C2C,
 * CPU-attached NVLink and inter-socket links; each CPU node is one host
 * bridge, and CPU nodes with the same `socket` are one NUMA node.
 */
#pragma once

#include "topo/topo.h"

G_BEGIN_DECLS

#define FS_PATH_TYPES(X) \
  X(SELF, "X")           \
  X(NV, "NV")            \
  X(PIX, "PIX")          \
  X(PXB, "PXB")          \
  X(PHB, "PHB")          \
  X(NODE, "NODE")        \
  X(SYS, "SYS")          \
  X(NET, "NET")

typedef enum {
#define X(id, str) FS_PATH_##id,
  FS_PATH_TYPES(X)
#undef X
  FS_PATH_N_TYPES
} FsPathType;

const char *fs_path_type_name(FsPathType p);

/* Classifies the pair of GPU nodes a and b (node indices).  *nvlinks (if
 * non-NULL) gets the NVLink count for FS_PATH_NV, else 0.  Cost: the
 * degree of a plus a breadth-first search of the two hosts' PCIe/CPU
 * nodes; allocates a little scratch. */
FsPathType fs_topo_path_type(const FsTopo *topo, guint a, guint b, guint *nvlinks);

/* The short label: "X", "NV18", "PIX" …  (caller frees). */
char *fs_path_label(FsPathType p, guint nvlinks);

/* The GPU × GPU matrix as `nvidia-smi topo -m` prints it, with a legend
 * (caller frees).  Rows and columns in placement order.  Cost: n² pair
 * classifications and n² cells of text (callers cap n; see
 * FS_PATHS_MATRIX_MAX_GPUS). */
#define FS_PATHS_MATRIX_MAX_GPUS 4096
char *fs_topo_paths_matrix(const FsTopo *topo);

G_END_DECLS
