/* paths.c — GPU-pair path classification (see paths.h). */
#include "topo/paths.h"

#include <string.h>

#include "topo/topo-private.h"
#include "util/names.h"

static const char *const path_names[] = { FS_PATH_TYPES(FS_NAMES_ENTRY) };

FS_NAMES_DEFINE_NAME(FsPathType, fs_path_type, path_names, FS_PATH_N_TYPES)

char *fs_path_label(FsPathType p, guint nvlinks)
{
  if (p == FS_PATH_NV)
    return g_strdup_printf("NV%u", nvlinks);
  return g_strdup(fs_path_type_name(p));
}

/* NVLinks between GPUs a and b: direct links plus the shared switch plane. */
static guint nvlink_count(const FsTopo *t, guint a, guint b)
{
  guint n, direct = 0;
  const FsTopoAdj *adj = fs_topo_adj(t, a, &n);
  for (guint e = 0; e < n; e++) {
    if (adj[e].peer != b)
      continue;
    const FsTopoLink *l = fs_topo_link(t, adj[e].link);
    if (l->model->u.link.family == FS_LINK_NVLINK)
      direct += l->count;
  }
  int ra = fs_topo_node(t, a)->gpu_rank, rb = fs_topo_node(t, b)->gpu_rank;
  guint via = 0;
  if (t->nv_comp[ra] >= 0 && t->nv_comp[ra] == t->nv_comp[rb])
    via = MIN(t->nv_sw_links[ra], t->nv_sw_links[rb]);
  return direct + via;
}

/* Whether node may sit in the middle of a host path: a CPU or a PCIe switch
 * of the given host. */
static gboolean host_fabric_node(const FsTopoNode *n, int host)
{
  if (n->host != host)
    return FALSE;
  if (n->kind == FS_NODE_CPU)
    return TRUE;
  return n->kind == FS_NODE_SWITCH && n->model->u.sw.kind == FS_SWITCH_PCIE;
}

/* Whether a host path may use link l between nodes x and y. */
static gboolean host_fabric_link(const FsTopoLink *l, const FsTopoNode *x, const FsTopoNode *y)
{
  switch (l->model->u.link.family) {
  case FS_LINK_PCIE:
  case FS_LINK_C2C:
  case FS_LINK_INTERSOCKET:
    return TRUE;
  case FS_LINK_NVLINK:
    return x->kind == FS_NODE_CPU || y->kind == FS_NODE_CPU;
  default:
    return FALSE;
  }
}

/* Breadth-first search from GPU a to GPU b through the host fabric, then
 * the classification of the path found.  Returns FS_PATH_SYS when no such
 * path exists (the GPUs share a host but no host bridge joins them). */
static FsPathType host_path(const FsTopo *t, guint a, guint b)
{
  const FsTopoNode *na = fs_topo_node(t, a);
  g_autoptr(GHashTable) parent = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_autoptr(GArray) queue = g_array_new(FALSE, FALSE, sizeof(guint));
  g_array_append_val(queue, a);
  g_hash_table_insert(parent, GUINT_TO_POINTER(a), GUINT_TO_POINTER(a));
  gboolean found = FALSE;
  for (guint qi = 0; qi < queue->len && !found; qi++) {
    guint x = g_array_index(queue, guint, qi);
    guint n;
    const FsTopoAdj *adj = fs_topo_adj(t, x, &n);
    for (guint e = 0; e < n; e++) {
      guint y = adj[e].peer;
      if (g_hash_table_contains(parent, GUINT_TO_POINTER(y)))
        continue;
      const FsTopoNode *nx = fs_topo_node(t, x), *ny = fs_topo_node(t, y);
      if (!host_fabric_link(fs_topo_link(t, adj[e].link), nx, ny))
        continue;
      if (y == b) {
        g_hash_table_insert(parent, GUINT_TO_POINTER(y), GUINT_TO_POINTER(x));
        found = TRUE;
        break;
      }
      if (!host_fabric_node(ny, na->host))
        continue;
      g_hash_table_insert(parent, GUINT_TO_POINTER(y), GUINT_TO_POINTER(x));
      g_array_append_val(queue, y);
    }
  }
  if (!found)
    return FS_PATH_SYS;
  guint switches = 0, cpus = 0;
  int socket = -1;
  gboolean sockets_differ = FALSE;
  for (guint x = GPOINTER_TO_UINT(g_hash_table_lookup(parent, GUINT_TO_POINTER(b))); x != a;
       x = GPOINTER_TO_UINT(g_hash_table_lookup(parent, GUINT_TO_POINTER(x)))) {
    const FsTopoNode *n = fs_topo_node(t, x);
    if (n->kind == FS_NODE_CPU) {
      cpus++;
      if (socket >= 0 && n->socket != socket)
        sockets_differ = TRUE;
      socket = n->socket;
    } else {
      switches++;
    }
  }
  if (cpus == 0)
    return switches <= 1 ? FS_PATH_PIX : FS_PATH_PXB;
  if (cpus == 1)
    return FS_PATH_PHB;
  return sockets_differ ? FS_PATH_SYS : FS_PATH_NODE;
}

FsPathType fs_topo_path_type(const FsTopo *t, guint a, guint b, guint *nvlinks)
{
  g_return_val_if_fail(t->finalized, FS_PATH_NET);
  g_return_val_if_fail(fs_topo_node(t, a)->kind == FS_NODE_GPU &&
                       fs_topo_node(t, b)->kind == FS_NODE_GPU, FS_PATH_NET);
  if (nvlinks)
    *nvlinks = 0;
  if (a == b)
    return FS_PATH_SELF;
  guint nv = nvlink_count(t, a, b);
  if (nv > 0) {
    if (nvlinks)
      *nvlinks = nv;
    return FS_PATH_NV;
  }
  const FsTopoNode *na = fs_topo_node(t, a), *nb = fs_topo_node(t, b);
  if (na->host != nb->host || na->host < 0)
    return FS_PATH_NET;
  return host_path(t, a, b);
}

/* See paths.h: columns as wide as the widest label (NV with the largest NVLink count, or the
 * last GPU's name), one row per GPU with its node name, then nvidia-smi's legend. */
char *fs_topo_paths_matrix(const FsTopo *t)
{
  guint n;
  const guint *gpus = fs_topo_gpus(t, &n);
  GString *s = g_string_new(NULL);
  /* Column width: "GPU<n-1>" or the longest possible label ("NV" and the
   * largest NVLink count any GPU has), at least 6; rows are built one at a
   * time, so memory stays linear in the GPU count. */
  char h[32];
  guint maxnv = 0;
  for (guint i = 0; i < n; i++)
    maxnv = MAX(maxnv, fs_topo_node_links(t, gpus[i], FS_LINK_NVLINK));
  g_snprintf(h, sizeof h, "NV%u", maxnv);
  guint label_w = MAX(6, (guint)strlen(h) + 1);
  g_snprintf(h, sizeof h, "GPU%u", n > 0 ? n - 1 : 0);
  guint w = MAX(6, (guint)strlen(h) + 1);
  label_w = MAX(label_w, w);
  /* Header: GPU indices in placement order. */
  g_string_append_printf(s, "%-*s", (int)w, "");
  for (guint j = 0; j < n; j++) {
    g_snprintf(h, sizeof h, "GPU%u", j);
    g_string_append_printf(s, "%-*s", (int)label_w, h);
  }
  g_string_append(s, "Name\n");
  for (guint i = 0; i < n; i++) {
    g_snprintf(h, sizeof h, "GPU%u", i);
    g_string_append_printf(s, "%-*s", (int)w, h);
    for (guint j = 0; j < n; j++) {
      guint nv;
      FsPathType p = fs_topo_path_type(t, gpus[i], gpus[j], &nv);
      g_autofree char *cell = fs_path_label(p, nv);
      g_string_append_printf(s, "%-*s", (int)label_w, cell);
    }
    g_string_append_printf(s, "%s\n", fs_topo_node(t, gpus[i])->name);
  }
  g_string_append(s,
    "\nLegend:\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges\n"
    "         within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host\n"
    "         Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
    "  NET  = Connection through the network (different hosts)\n");
  return g_string_free(s, FALSE);
}
