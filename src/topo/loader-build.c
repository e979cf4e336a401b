/* loader-build.c — the second phase of the loader: a topology built from
 * what reading collected.  Hosts are made from templates (following
 * like:), nodes from name patterns, links from pairs of patterns (zip or
 * every pair), then the generators run (loader-gen.c), and the topology is
 * finalized and validated.  Part of the loader (loader-private.h).
 */
#include <string.h>

#include "topo/loader-private.h"
#include "util/error.h"
#include "util/strutil.h"
#include "util/yaml.h"

/* Adds the nodes of one "nodes:" entry e, its name a pattern that may expand to many, under
 * prefix and in host. A top-level node joins the implicit host0 while the file declares no
 * host, and no host when it is marked fabric or hosts exist; "fabric" inside a template is
 * refused. Errors at the entry's position (FS_TOPO_ERROR_*): unknown keys or model, a bad
 * socket, a duplicate name. */
static gboolean add_nodes(Loader *L, const FsYamlNode *e, const char *prefix, int host,
                          gboolean top, GError **error)
{
  if (!fs_topo_loader_check(&fs_topo_node_schema, e, FALSE, error))
    return FALSE;
  const FsYamlNode *nn = fs_yaml_map_get(e, "name"), *mn = fs_yaml_map_get(e, "model");
  const FsModel *model = fs_topo_loader_model(L, mn, FS_MODEL_N_KINDS, error);
  if (model == NULL)
    return FALSE;
  int socket = -1;
  const FsYamlNode *sn = fs_yaml_map_get(e, "socket");
  if (sn != NULL) {
    int64_t s;
    if (!fs_topo_loader_int(L, sn, 0, 1024, "socket", &s, error))
      return FALSE;
    socket = (int)s;
  }
  gboolean fabric = FALSE;
  if (!fs_yaml_opt_bool(e, "fabric", &fabric, error))
    return FALSE;
  if (fabric && !top) {
    const FsYamlNode *f = fs_yaml_map_get(e, "fabric");
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, f->file, f->line, f->col,
                    "fabric: applies to top-level nodes only; a template's nodes belong to "
                    "its host");
    return FALSE;
  }
  if (top) {
    if (fabric || fs_topo_n_hosts(L->topo) > (L->lone_host >= 0 ? 1u : 0u))
      host = -1;
    else {
      if (L->lone_host < 0)
        L->lone_host = fs_topo_add_host(L->topo, "host0");
      host = L->lone_host;
    }
  }
  gboolean reduction = TRUE;
  const FsYamlNode *rn = fs_yaml_map_get(e, "reduction");
  if (rn != NULL && !fs_topo_loader_bool(L, rn, "reduction", &reduction, error))
    return FALSE;
  if (rn != NULL && model->kind != FS_MODEL_SWITCH) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, rn->file, rn->line, rn->col,
                    "reduction: applies to switches; \"%s\" is a %s model", model->name,
                    fs_model_kind_name(model->kind));
    return FALSE;
  }
  g_autoptr(GPtrArray) names = fs_topo_loader_names(L, nn, prefix, error);
  if (names == NULL)
    return FALSE;
  for (guint i = 0; i < names->len; i++) {
    guint idx;
    if (!fs_topo_add_node(L->topo, names->pdata[i], model, host, socket, nn->file, nn->line,
                          nn->col, &idx, error))
      return FALSE;
    if (!reduction)
      fs_topo_set_reduction(L->topo, idx, FALSE);
  }
  return TRUE;
}

/* Resolves expanded names to node indices; a dangling name fails at node. */
guint *fs_topo_loader_resolve(Loader *L, GPtrArray *names, const FsYamlNode *node,
                              GError **error)
{
  guint *idx = g_new(guint, names->len + 1);
  for (guint i = 0; i < names->len; i++) {
    int k = fs_topo_find(L->topo, names->pdata[i]);
    if (k >= 0) {
      idx[i] = (guint)k;
      continue;
    }
    const char *best = NULL;
    guint nn = fs_topo_n_nodes(L->topo);
    if (nn <= 200000) {
      g_autofree const char **all = g_new(const char *, nn + 1);
      for (guint j = 0; j < nn; j++)
        all[j] = fs_topo_node(L->topo, j)->name;
      best = fs_did_you_mean(names->pdata[i], all, nn);
    }
    if (best)
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_DANGLING, node->file, node->line,
                      node->col, "link end \"%s\" is not a node; did you mean \"%s\"?",
                      (char *)names->pdata[i], best);
    else
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_DANGLING, node->file, node->line,
                      node->col, "link end \"%s\" is not a node (declare it under nodes:)",
                      (char *)names->pdata[i]);
    g_free(idx);
    return NULL;
  }
  return idx;
}

static gboolean same_list(const guint *a, const guint *b, guint n)
{
  return memcmp(a, b, n * sizeof(guint)) == 0;
}

/* Adds the links of one "links:" entry e: both ends are name patterns expanded under prefix and
 * resolved to nodes, paired element-wise ("zip", the default for equal counts) or every pair
 * ("all", the default otherwise; a list against itself gives each pair once and no self-link).
 * Errors at the entry's position: a bad key, model, count or pairing, a dangling end, or more
 * pairs than FABRICSIM_MAX_NAMES (FS_TOPO_ERROR_LIMIT). */
static gboolean add_links(Loader *L, const FsYamlNode *e, const char *prefix, GError **error)
{
  if (!fs_topo_loader_check(&fs_topo_link_schema, e, FALSE, error))
    return FALSE;
  const FsYamlNode *an = fs_yaml_map_get(e, "a"), *bn = fs_yaml_map_get(e, "b");
  const FsYamlNode *mn = fs_yaml_map_get(e, "model");
  const FsModel *model = fs_topo_loader_model(L, mn, FS_MODEL_LINK, error);
  if (model == NULL)
    return FALSE;
  guint count = 1;
  if (!fs_topo_loader_uint(L, e, "count", 1000000, &count, error))
    return FALSE;
  if (count == 0) {
    const FsYamlNode *c = fs_yaml_map_get(e, "count");
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, c->file, c->line, c->col,
                    "count must be at least 1 (leave the link out instead)");
    return FALSE;
  }
  g_autoptr(GPtrArray) an_names = fs_topo_loader_names(L, an, prefix, error);
  if (an_names == NULL)
    return FALSE;
  g_autoptr(GPtrArray) bn_names = fs_topo_loader_names(L, bn, prefix, error);
  if (bn_names == NULL)
    return FALSE;
  g_autofree guint *a = fs_topo_loader_resolve(L, an_names, an, error);
  if (a == NULL)
    return FALSE;
  g_autofree guint *b = fs_topo_loader_resolve(L, bn_names, bn, error);
  if (b == NULL)
    return FALSE;
  guint na = an_names->len, nb = bn_names->len;
  /* Pairing: zip for equal sizes, every pair otherwise, or as written. */
  gboolean zip = na == nb;
  const FsYamlNode *pn = fs_yaml_map_get(e, "pairing");
  if (pn != NULL) {
    g_autofree char *p = fs_topo_loader_text(L, pn, "zip or all", error);
    if (p == NULL)
      return FALSE;
    if (strcmp(p, "zip") == 0)
      zip = TRUE;
    else if (strcmp(p, "all") == 0)
      zip = FALSE;
    else {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, pn->file, pn->line, pn->col,
                      "pairing must be \"zip\" (element-wise) or \"all\" (every pair), got "
                      "\"%s\"", p);
      return FALSE;
    }
    if (zip && na != nb) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, pn->file, pn->line, pn->col,
                      "pairing: zip needs as many a names as b names (a has %u, b has %u)",
                      na, nb);
      return FALSE;
    }
  }
  if (zip) {
    for (guint i = 0; i < na; i++)
      if (!fs_topo_add_link(L->topo, a[i], b[i], model, count, e->file, e->line, e->col, NULL,
                            error))
        return FALSE;
    return TRUE;
  }
  if ((guint64)na * nb > fs_topo_limits()->names) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_LIMIT, e->file, e->line, e->col,
                    "every pair of %u a names and %u b names is %" G_GUINT64_FORMAT
                    " links, more than %" G_GUINT64_FORMAT "; use a generator or smaller "
                    "ranges (FABRICSIM_MAX_NAMES raises the limit)", na, nb,
                    (guint64)na * nb, fs_topo_limits()->names);
    return FALSE;
  }
  /* Every pair; when both sides are one list (a mesh), each pair once. */
  gboolean mesh = na == nb && same_list(a, b, na);
  for (guint i = 0; i < na; i++)
    for (guint j = mesh ? i + 1 : 0; j < nb; j++) {
      if (a[i] == b[j])
        continue;
      if (!fs_topo_add_link(L->topo, a[i], b[j], model, count, e->file, e->line, e->col, NULL,
                            error))
        return FALSE;
    }
  return TRUE;
}

/* Adds template t's nodes and links to host, their names under prefix. */
static gboolean instantiate(Loader *L, const Template *t, const char *prefix, int host,
                            GError **error)
{
  const FsYamlNode *nodes = fs_yaml_map_get(t->map, "nodes");
  const FsYamlNode *links = fs_yaml_map_get(t->map, "links");
  if (nodes && !fs_yaml_require_seq(nodes, error))
    return FALSE;
  if (links && !fs_yaml_require_seq(links, error))
    return FALSE;
  for (guint i = 0; nodes && i < nodes->n; i++)
    if (!fs_yaml_require_map(nodes->values[i], error) ||
        !add_nodes(L, nodes->values[i], prefix, host, FALSE, error))
      return FALSE;
  for (guint i = 0; links && i < links->n; i++)
    if (!fs_yaml_require_map(links->values[i], error) ||
        !add_links(L, links->values[i], prefix, error))
      return FALSE;
  return TRUE;
}

/* The template called name; an unknown one fails at node with a did-you-mean. */
static const Template *find_template(Loader *L, const char *name, const FsYamlNode *node,
                                     GError **error)
{
  const Template *t = g_hash_table_lookup(L->templates, name);
  if (t != NULL)
    return t;
  const char *best = fs_did_you_mean(name, (const char *const *)L->template_order->pdata,
                                     L->template_order->len);
  fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, node->file, node->line, node->col,
                  "unknown template \"%s\"%s%s%s", name, best ? "; did you mean \"" : "",
                  best ? best : " (define it under templates:, here or in an include)",
                  best ? "\"?" : "");
  return NULL;
}

GArray *fs_topo_loader_template_hosts(Loader *L, const char *name)
{
  GArray *out = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint h = 0; h < L->host_template->len; h++)
    if (L->host_template->pdata[h] && strcmp(L->host_template->pdata[h], name) == 0)
      g_array_append_val(out, h);
  return out;
}

/* Makes the hosts of one "hosts:" entry e from its template (following
 * like: to the template with the nodes, a loop refused): one host named
 * after the template, or one per name of the name pattern, each with the
 * template's nodes and links under "name/".  Errors at the entry. */
static gboolean add_hosts(Loader *L, const FsYamlNode *e, GError **error)
{
  if (!fs_topo_loader_check(&fs_topo_host_schema, e, FALSE, error))
    return FALSE;
  const FsYamlNode *tn = fs_yaml_map_get(e, "template");
  g_autofree char *tname = fs_topo_loader_text(L, tn, "a template name", error);
  if (tname == NULL)
    return FALSE;
  const Template *named = find_template(L, tname, tn, error);
  const Template *t = named;
  /* like: chains end at a template with nodes; a chain longer than the templates loops. */
  for (guint steps = 0; t != NULL && fs_yaml_map_get(t->map, "like") != NULL; steps++) {
    const FsYamlNode *like = fs_yaml_map_get(t->map, "like");
    if (steps >= L->template_order->len) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, like->file, like->line,
                      like->col, "template \"%s\" is like itself through a chain of like:",
                      t->name);
      return FALSE;
    }
    g_autofree char *other = fs_topo_loader_text(L, like, "a template name", error);
    t = other ? find_template(L, other, like, error) : NULL;
  }
  if (t == NULL)
    return FALSE;
  const FsYamlNode *nn = fs_yaml_map_get(e, "name");
  if (nn == NULL) {
    int host = fs_topo_add_host(L->topo, named->name);
    g_ptr_array_add(L->host_template, (gpointer)named->name);
    return instantiate(L, t, "", host, error);
  }
  g_autoptr(GPtrArray) names = fs_topo_loader_names(L, nn, NULL, error);
  if (names == NULL)
    return FALSE;
  for (guint i = 0; i < names->len; i++) {
    int host = fs_topo_add_host(L->topo, names->pdata[i]);
    g_ptr_array_add(L->host_template, (gpointer)named->name);
    g_autofree char *prefix = g_strconcat(names->pdata[i], "/", NULL);
    if (!instantiate(L, t, prefix, host, error))
      return FALSE;
  }
  return TRUE;
}

FsTopo *fs_topo_loader_build(Loader *L, GError **error)
{
  if (!fs_topo_loader_check_defines(L, error))
    return NULL;
  L->topo = fs_topo_new(L->cat, L->name);
  for (guint i = 0; i < L->param_order->len; i++) {
    const char *p = L->param_order->pdata[i];
    const char *text = g_hash_table_lookup(L->strings, p);
    if (text != NULL)
      fs_topo_set_param_string(L->topo, p, text);
    else
      fs_topo_set_param(L->topo, p, *(int64_t *)g_hash_table_lookup(L->params, p));
  }
  if (L->routing >= 0)
    fs_topo_set_routing(L->topo, (FsTopoRouting)L->routing);
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < L->hosts->len; i++)
    ok = add_hosts(L, L->hosts->pdata[i], error);
  for (guint i = 0; ok && i < L->nodes->len; i++)
    ok = add_nodes(L, L->nodes->pdata[i], NULL, -1, TRUE, error);
  for (guint i = 0; ok && i < L->links->len; i++)
    ok = add_links(L, L->links->pdata[i], NULL, error);
  for (guint i = 0; ok && i < L->gens->len; i++)
    ok = fs_topo_loader_generate(L, L->gens->pdata[i], error);
  if (ok) {
    fs_topo_finalize(L->topo);
    ok = fs_topo_validate(L->topo, error);
  }
  if (!ok) {
    fs_topo_free(L->topo);
    return NULL;
  }
  return L->topo;
}
