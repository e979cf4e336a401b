/* dot.c — Graphviz text of a topology (fs_topo_to_dot in topo.h).
 * Hosts become clusters; node shapes follow the kind; an edge is labelled
 * with its model and bundle count.  Output order is node and link order,
 * so the text is deterministic. */
#include "topo/topo.h"

static const char *shape(FsNodeKind k)
{
  switch (k) {
  case FS_NODE_GPU: return "box";
  case FS_NODE_CPU: return "octagon";
  case FS_NODE_SWITCH: return "diamond";
  case FS_NODE_NIC: return "ellipse";
  default: return "plaintext";
  }
}

/* Appends s escaped for the inside of a DOT quoted string. */
static void escaped(GString *out, const char *s)
{
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      g_string_append_c(out, '\\');
    g_string_append_c(out, *s);
  }
}

/* Appends s as a DOT quoted string. */
static void quoted(GString *out, const char *s)
{
  g_string_append_c(out, '"');
  escaped(out, s);
  g_string_append_c(out, '"');
}

static void vertex(GString *out, const FsTopo *t, guint i, const char *indent)
{
  const FsTopoNode *n = fs_topo_node(t, i);
  g_string_append(out, indent);
  quoted(out, n->name);
  g_string_append_printf(out, " [shape=%s, label=\"", shape(n->kind));
  escaped(out, n->name);
  g_string_append(out, "\\n");
  escaped(out, n->model->name);
  g_string_append(out, "\"];\n");
}

char *fs_topo_to_dot(const FsTopo *t)
{
  GString *out = g_string_new("graph ");
  quoted(out, fs_topo_name(t));
  g_string_append(out, " {\n  graph [overlap=false, splines=true];\n  node [fontsize=10];\n"
                       "  edge [fontsize=8];\n");
  guint nh = fs_topo_n_hosts(t);
  for (guint h = 0; h < nh; h++) {
    guint n;
    const guint *nodes = fs_topo_host_nodes(t, h, &n);
    g_string_append_printf(out, "  subgraph \"cluster_%u\" {\n    label=", h);
    quoted(out, fs_topo_host_name(t, h));
    g_string_append(out, ";\n");
    for (guint i = 0; i < n; i++)
      vertex(out, t, nodes[i], "    ");
    g_string_append(out, "  }\n");
  }
  guint nn = fs_topo_n_nodes(t);
  for (guint i = 0; i < nn; i++)
    if (fs_topo_node(t, i)->host < 0)
      vertex(out, t, i, "  ");
  guint nl = fs_topo_n_links(t);
  for (guint l = 0; l < nl; l++) {
    const FsTopoLink *k = fs_topo_link(t, l);
    g_string_append(out, "  ");
    quoted(out, fs_topo_node(t, k->a)->name);
    g_string_append(out, " -- ");
    quoted(out, fs_topo_node(t, k->b)->name);
    g_string_append(out, " [label=\"");
    escaped(out, k->model->name);
    if (k->count > 1)
      g_string_append_printf(out, " x%u", k->count);
    g_string_append(out, "\"];\n");
  }
  g_string_append(out, "}\n");
  return g_string_free(out, FALSE);
}
