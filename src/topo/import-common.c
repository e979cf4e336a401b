/* import-common.c — the graph builder and YAML writer shared by the
 * importers (import-smi.c, import-nccl.c), and their model choices.  The
 * builder is a plain list of nodes and links; the writer emits one flow
 * mapping per node and per link, in insertion order, so the same input
 * always gives the same bytes. */
#include <stdarg.h>
#include <string.h>

#include "topo/import-private.h"
#include "topo/topo.h"
#include "util/datadir.h"

ImpGraph *imp_graph_new(void)
{
  ImpGraph *g = g_new0(ImpGraph, 1);
  g->nodes = g_ptr_array_new();
  g->links = g_array_new(FALSE, FALSE, sizeof(ImpLink));
  g->notes = g_ptr_array_new_with_free_func(g_free);
  return g;
}

void imp_graph_free(ImpGraph *g)
{
  if (g == NULL)
    return;
  for (guint i = 0; i < g->nodes->len; i++) {
    ImpNode *n = g_ptr_array_index(g->nodes, i);
    g_free(n->name);
    g_free(n->comment);
    g_free(n);
  }
  g_ptr_array_free(g->nodes, TRUE);
  g_array_free(g->links, TRUE);
  g_ptr_array_free(g->notes, TRUE);
  g_free(g);
}

guint imp_add_node(ImpGraph *g, const FsModel *model, int socket, const char *comment,
                   const char *format, ...)
{
  ImpNode *n = g_new0(ImpNode, 1);
  va_list ap;
  va_start(ap, format);
  n->name = g_strdup_vprintf(format, ap);
  va_end(ap);
  n->model = model;
  n->socket = socket;
  n->comment = g_strdup(comment);
  g_ptr_array_add(g->nodes, n);
  return g->nodes->len - 1;
}

void imp_add_link(ImpGraph *g, guint a, guint b, const FsModel *model, guint count)
{
  g_assert(a != b && count > 0 && model != NULL);
  ImpLink l = {a, b, model, count};
  g_array_append_val(g->links, l);
}

void imp_note(ImpGraph *g, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_ptr_array_add(g->notes, g_strdup_vprintf(format, ap));
  va_end(ap);
}

/* Appends text as "# " comment lines of at most about 76 columns, breaking
 * at spaces; control characters in text (it may quote the input) are
 * written as spaces so that a comment cannot end early. */
static void append_comment(GString *out, const char *text)
{
  g_autofree char *t = g_strdup(text);
  for (char *p = t; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = ' ';
  const char *p = t;
  while (*p) {
    while (*p == ' ')
      p++;
    if (!*p)
      break;
    gsize len = strlen(p), cut = len;
    if (len > 74) {
      cut = 74;
      while (cut > 0 && p[cut] != ' ')
        cut--;
      if (cut == 0) {
        cut = 74;
        while (p[cut] && p[cut] != ' ')
          cut++;
      }
    }
    g_string_append(out, "# ");
    g_string_append_len(out, p, (gssize)cut);
    g_string_append_c(out, '\n');
    p += cut;
  }
}

/* The topology name: the input's base name without its extension, with
 * anything but letters, digits, '.', '_' and '-' made '-'. */
static char *topo_name(const char *input)
{
  g_autofree char *base = g_path_get_basename(input);
  char *dot = strrchr(base, '.');
  if (dot != NULL && dot != base)
    *dot = '\0';
  GString *s = g_string_new(NULL);
  for (const char *p = base; *p; p++)
    g_string_append_c(s, g_ascii_isalnum(*p) || *p == '.' || *p == '_' || *p == '-' ? *p : '-');
  if (s->len == 0)
    g_string_append(s, "imported");
  return g_string_free(s, FALSE);
}

/* Writes g as topology YAML: a comment block naming the importer and input and holding g's
 * notes, the name (from the input's base name) and source, then one line per node (with its
 * socket and a one-line comment where set) and one per link (with its count when not 1), in
 * g's order.  Returns a new string that the caller frees.  Never fails. */
char *imp_emit(const ImpGraph *g, const char *importer, const char *input)
{
  GString *out = g_string_new(NULL);
  g_autofree char *head = g_strdup_printf("Imported by `fabricsim topo %s` from %s.", importer,
                                          input);
  append_comment(out, head);
  for (guint i = 0; i < g->notes->len; i++) {
    g_string_append(out, "#\n");
    append_comment(out, g_ptr_array_index(g->notes, i));
  }
  g_autofree char *name = topo_name(input);
  g_string_append_printf(out, "name: %s\n", name);
  g_string_append_printf(out, "source: fabricsim topo %s\n", importer);
  g_string_append(out, "nodes:\n");
  for (guint i = 0; i < g->nodes->len; i++) {
    const ImpNode *n = g_ptr_array_index(g->nodes, i);
    g_string_append_printf(out, "  - {name: %s, model: %s", n->name, n->model->name);
    if (n->socket >= 0)
      g_string_append_printf(out, ", socket: %d", n->socket);
    g_string_append(out, "}");
    if (n->comment != NULL) {
      g_string_append(out, "    ");
      GString *c = g_string_new(NULL);
      append_comment(c, n->comment);
      /* One line only: join wrapped lines. */
      for (gsize k = 0; k + 1 < c->len; k++)
        if (c->str[k] == '\n')
          c->str[k] = ' ';
      g_string_append_len(out, c->str, (gssize)c->len - 1);
      g_string_free(c, TRUE);
    }
    g_string_append_c(out, '\n');
  }
  if (g->links->len > 0)
    g_string_append(out, "links:\n");
  for (guint i = 0; i < g->links->len; i++) {
    const ImpLink *l = &g_array_index(g->links, ImpLink, i);
    const ImpNode *a = g_ptr_array_index(g->nodes, l->a), *b = g_ptr_array_index(g->nodes, l->b);
    g_string_append_printf(out, "  - {a: %s, b: %s, model: %s", a->name, b->name, l->model->name);
    if (l->count != 1)
      g_string_append_printf(out, ", count: %u", l->count);
    g_string_append(out, "}\n");
  }
  return g_string_free(out, FALSE);
}

const FsModel *imp_require(const FsCatalog *cat, const char *name, FsModelKind kind,
                           const char *option, GError **error)
{
  GError *e = NULL;
  const FsModel *m = fs_catalog_require(cat, name, kind, &e);
  if (m == NULL) {
    g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL, "%s: %s", option, e->message);
    g_error_free(e);
  }
  return m;
}

const FsModel *imp_pcie_switch(const FsCatalog *cat, const FsModel *link, guint min_ports)
{
  const FsModel *any = NULL;
  for (guint i = 0; i < fs_catalog_size(cat); i++) {
    const FsModel *m = fs_catalog_nth(cat, i);
    if (m->kind != FS_MODEL_SWITCH || m->u.sw.kind != FS_SWITCH_PCIE || m->u.sw.ports < min_ports)
      continue;
    const FsModel *pl = m->u.sw.port_link;
    if (pl != NULL && link != NULL && g_strcmp0(pl->u.link.generation, link->u.link.generation) == 0)
      return m;
    if (any == NULL)
      any = m;
  }
  return any;
}

const FsModel *imp_nvswitch(const FsCatalog *cat, const FsModel *nvlink)
{
  for (guint i = 0; i < fs_catalog_size(cat); i++) {
    const FsModel *m = fs_catalog_nth(cat, i);
    if (m->kind == FS_MODEL_SWITCH && m->u.sw.kind == FS_SWITCH_NVSWITCH &&
        m->u.sw.port_link == nvlink)
      return m;
  }
  return NULL;
}

const FsModel *imp_socket_link(const FsModel *cpu, guint *count)
{
  if (cpu->u.cpu.intersocket != NULL) {
    *count = MAX(cpu->u.cpu.intersocket_links, 1u);
    return cpu->u.cpu.intersocket;
  }
  *count = 1;
  return cpu->u.cpu.pcie;
}

char *fs_import_path(gboolean smi, const char *path, const char *hw_path, const FsCatalog *cat,
                     FsImportOptions *opt, GError **error)
{
  g_autofree char *text = NULL, *hw = NULL;
  gsize len = 0, hw_len = 0;
  g_autofree char *found = fs_datadir_resolve(path);
  path = found;
  if (!g_file_get_contents(path, &text, &len, error) ||
      (hw_path != NULL && !g_file_get_contents(hw_path, &hw, &hw_len, error)))
    return NULL;
  opt->hw_text = hw;
  opt->hw_text_len = hw_len;
  opt->hw_text_name = hw_path;
  char *yaml = smi ? fs_import_smi(text, len, path, cat, opt, error)
                   : fs_import_nccl(text, len, path, cat, opt, error);
  opt->hw_text = NULL;
  opt->hw_text_len = 0;
  return yaml;
}
