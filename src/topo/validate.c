/* validate.c — checks on a finalized topology: port budgets and
 * reachability (see fs_topo_validate in topo.h). */
#include "topo/topo.h"

#include "topo/connect.h"
#include "topo/topo-private.h"
#include "util/error.h"

/* Sum of the counts of node's network (InfiniBand or Ethernet) links. */
static guint network_ports(const FsTopo *t, guint node)
{
  return fs_topo_node_links(t, node, FS_LINK_INFINIBAND) +
         fs_topo_node_links(t, node, FS_LINK_ETHERNET);
}

/* Checks node i's port budget: the NVLinks of a GPU or CPU, the ports of a switch and the
 * network ports of a NIC may not exceed what its model has (other kinds have no budget).
 * Returns FALSE with FS_TOPO_ERROR_PORTS set at the node's place in its file otherwise. */
static gboolean check_ports(const FsTopo *t, guint i, GError **error)
{
  const FsTopoNode *n = fs_topo_node(t, i);
  switch (n->kind) {
  case FS_NODE_GPU: {
    guint used = fs_topo_node_links(t, i, FS_LINK_NVLINK);
    guint have = n->model->u.gpu.nvlinks;
    if (used > have) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PORTS, n->file, n->line, n->col,
                      "GPU \"%s\" uses %u NVLinks but its model \"%s\" has %u; lower the "
                      "link counts", n->name, used, n->model->name, have);
      return FALSE;
    }
    break;
  }
  case FS_NODE_SWITCH: {
    guint used = fs_topo_node_ports(t, i);
    guint have = n->model->u.sw.ports;
    if (used > have) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PORTS, n->file, n->line, n->col,
                      "switch \"%s\" uses %u ports but its model \"%s\" has %u", n->name, used,
                      n->model->name, have);
      return FALSE;
    }
    break;
  }
  case FS_NODE_CPU: {
    /* POWER8+/POWER9 attach GPUs by NVLink; other CPUs have none. */
    guint used = fs_topo_node_links(t, i, FS_LINK_NVLINK);
    guint have = n->model->u.cpu.nvlinks;
    if (used > have) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PORTS, n->file, n->line, n->col,
                      "CPU \"%s\" uses %u NVLinks but its model \"%s\" has %u", n->name, used,
                      n->model->name, have);
      return FALSE;
    }
    break;
  }
  case FS_NODE_NIC: {
    guint used = network_ports(t, i);
    guint have = n->model->u.nic.ports;
    if (used > have) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PORTS, n->file, n->line, n->col,
                      "NIC \"%s\" uses %u network ports but its model \"%s\" has %u", n->name,
                      used, n->model->name, have);
      return FALSE;
    }
    break;
  }
  default:
    break;
  }
  return TRUE;
}

static guint uf_find(guint *parent, guint x)
{
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

/* The connected components of t's nodes: a union-find parent array
 * (caller frees); uf_find gives a node's component. */
static guint *components(const FsTopo *t)
{
  guint nn = fs_topo_n_nodes(t), nl = fs_topo_n_links(t);
  guint *parent = g_new(guint, MAX(nn, 1));
  for (guint i = 0; i < nn; i++)
    parent[i] = i;
  for (guint l = 0; l < nl; l++) {
    const FsTopoLink *k = fs_topo_link(t, l);
    guint ra = uf_find(parent, k->a), rb = uf_find(parent, k->b);
    if (ra != rb)
      parent[MAX(ra, rb)] = MIN(ra, rb);
  }
  return parent;
}

gboolean fs_topo_check_connected(const FsTopo *t, GError **error)
{
  guint ng;
  const guint *gpus = fs_topo_gpus(t, &ng);
  if (ng < 2)
    return TRUE;
  g_autofree guint *parent = components(t);
  guint c0 = uf_find(parent, gpus[0]);
  for (guint r = 1; r < ng; r++) {
    if (uf_find(parent, gpus[r]) == c0)
      continue;
    const FsTopoNode *a = fs_topo_node(t, gpus[0]), *b = fs_topo_node(t, gpus[r]);
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_UNREACHABLE, b->file, b->line, b->col,
                    "GPU \"%s\" cannot reach GPU \"%s\": no chain of links joins them; link "
                    "the parts of the system (topo check --allow-disconnected accepts it)",
                    b->name, a->name);
    return FALSE;
  }
  return TRUE;
}

/* Every GPU must share a connected component with another GPU. */
static gboolean check_reachable(const FsTopo *t, GError **error)
{
  guint ng;
  const guint *gpus = fs_topo_gpus(t, &ng);
  if (ng < 2)
    return TRUE;
  guint nn = fs_topo_n_nodes(t);
  g_autofree guint *parent = components(t);
  g_autofree guint *gpus_in = g_new0(guint, nn);
  for (guint r = 0; r < ng; r++)
    gpus_in[uf_find(parent, gpus[r])]++;
  for (guint r = 0; r < ng; r++) {
    if (gpus_in[uf_find(parent, gpus[r])] >= 2)
      continue;
    const FsTopoNode *n = fs_topo_node(t, gpus[r]);
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_UNREACHABLE, n->file, n->line, n->col,
                    "GPU \"%s\" is not connected to any other GPU; add a link from it (or "
                    "from its host) to the rest of the system", n->name);
    return FALSE;
  }
  return TRUE;
}

gboolean fs_topo_validate(const FsTopo *t, GError **error)
{
  g_return_val_if_fail(t->finalized, FALSE);
  guint nn = fs_topo_n_nodes(t);
  for (guint i = 0; i < nn; i++)
    if (!check_ports(t, i, error))
      return FALSE;
  return check_reachable(t, error);
}
