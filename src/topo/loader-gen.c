/* loader-gen.c — the `generators:` section of the topology YAML: reads
 * each entry's keys (checked against the generator's table row) into a
 * spec and calls the generator in gen.c. */
#include <string.h>

#include "topo/gen.h"
#include "topo/loader-private.h"
#include "util/error.h"
#include "util/strutil.h"

typedef gboolean (*GenFn)(Loader *L, const FsYamlNode *e, const char *prefix, GError **error);

/* Endpoint node indices from the `endpoints` key (a pattern or a list). */
static GArray *endpoints(Loader *L, const FsYamlNode *e, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(e, "endpoints"); /* required by the schema */
  const FsYamlNode *const *items = (const FsYamlNode *const *)&v;
  guint n = 1;
  if (v->kind == FS_YAML_SEQ) {
    items = (const FsYamlNode *const *)v->values;
    n = v->n;
  }
  GArray *out = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n; i++) {
    g_autoptr(GPtrArray) names = fs_topo_loader_names(L, items[i], NULL, error);
    g_autofree guint *idx = names ? fs_topo_loader_resolve(L, names, items[i], error) : NULL;
    if (idx == NULL) {
      g_array_free(out, TRUE);
      return NULL;
    }
    g_array_append_vals(out, idx, names->len);
  }
  return out;
}

static gboolean ratio(Loader *L, const FsYamlNode *e, double *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(e, "oversubscription");
  *out = 1.0;
  if (v == NULL)
    return TRUE;
  g_autofree char *text = fs_topo_loader_text(L, v, "a ratio like 2:1", error);
  if (text == NULL)
    return FALSE;
  char *end;
  double a = g_ascii_strtod(text, &end), b = 1.0;
  if (end != text && *end == ':') {
    const char *s = end + 1;
    b = g_ascii_strtod(s, &end);
    if (end == s)
      b = -1;
  }
  if (end == text || *end != '\0' || !(a > 0) || !(b > 0) || a / b < 1.0) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, v->file, v->line, v->col,
                    "oversubscription must be a ratio of at least 1 like \"2:1\" or 2, got "
                    "\"%s\"", text);
    return FALSE;
  }
  *out = a / b;
  return TRUE;
}

/* The model named at node, or with "auto" the one the endpoints imply: for the link, the
 * network link of the first endpoint's NIC model; for the switch, the first switch model of the
 * catalog whose ports are that link. */
static const FsModel *fabric_model(Loader *L, const FsYamlNode *node, FsModelKind kind,
                                   const FsModel *link, const GArray *ep, GError **error)
{
  g_autofree char *name = fs_topo_loader_text(L, node, "a model name", error);
  if (name == NULL)
    return NULL;
  if (strcmp(name, "auto") != 0)
    return fs_topo_loader_model(L, node, kind, error);
  if (kind == FS_MODEL_LINK) {
    const FsTopoNode *first = ep->len ? fs_topo_node(L->topo, g_array_index(ep, guint, 0)) : NULL;
    if (first != NULL && first->kind == FS_NODE_NIC && first->model->u.nic.port_link)
      return first->model->u.nic.port_link;
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL, node->file, node->line,
                    node->col, "link: auto takes the network link of the endpoints' NIC model, "
                    "but the first endpoint%s%s is not a NIC; name a link model",
                    first ? " " : "", first ? first->name : "");
    return NULL;
  }
  for (guint i = 0; i < fs_catalog_size(L->cat); i++) {
    const FsModel *m = fs_catalog_nth(L->cat, i);
    if (m->kind == FS_MODEL_SWITCH && m->u.sw.port_link == link)
      return m;
  }
  fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL, node->file, node->line, node->col,
                  "switch: auto found no switch model whose ports are %s links; name a switch "
                  "model", link->name);
  return NULL;
}

/* The fabric keys of a generator entry; ep are its endpoints (for "auto" models). */
static gboolean fabric_spec(Loader *L, const FsYamlNode *e, const char *prefix, const GArray *ep,
                            FsFabricSpec *s, GError **error)
{
  const FsYamlNode *sw = fs_yaml_map_get(e, "switch"), *ln = fs_yaml_map_get(e, "link");
  s->link = fabric_model(L, ln, FS_MODEL_LINK, NULL, ep, error);
  if (s->link == NULL)
    return FALSE;
  s->sw = fabric_model(L, sw, FS_MODEL_SWITCH, s->link, ep, error);
  if (s->sw == NULL)
    return FALSE;
  s->prefix = prefix;
  s->pos = (FsGenPos){e->file, e->line, e->col};
  return ratio(L, e, &s->oversubscription, error) &&
         fs_topo_loader_uint(L, e, "levels", 3, &s->levels, error);
}

static gboolean gen_fat_tree(Loader *L, const FsYamlNode *e, const char *prefix, GError **error)
{
  FsFabricSpec s = {0};
  g_autoptr(GArray) ep = endpoints(L, e, error);
  return ep && fabric_spec(L, e, prefix, ep, &s, error) &&
         fs_topo_gen_fat_tree(L->topo, (guint *)(void *)ep->data, ep->len, &s, NULL, error);
}

static gboolean gen_rail(Loader *L, const FsYamlNode *e, const char *prefix, GError **error)
{
  FsFabricSpec s = {0};
  guint rails = 0, hpl = 0;
  g_autoptr(GArray) ep = endpoints(L, e, error);
  if (ep == NULL || !fabric_spec(L, e, prefix, ep, &s, error) ||
      !fs_topo_loader_uint(L, e, "rails", 4096, &rails, error) ||
      !fs_topo_loader_uint(L, e, "hosts_per_leaf", 1 << 20, &hpl, error))
    return FALSE;
  return fs_topo_gen_rail_optimized(L->topo, (guint *)(void *)ep->data, ep->len, rails,
                                          hpl, &s, NULL, error);
}

static gboolean gen_dragonfly(Loader *L, const FsYamlNode *e, const char *prefix, GError **error)
{
  FsFabricSpec f = {0};
  g_autoptr(GArray) ep = endpoints(L, e, error);
  if (ep == NULL || !fabric_spec(L, e, prefix, ep, &f, error))
    return FALSE;
  FsDragonflySpec s = {f.sw, f.link, NULL, 0, 0, 0, 0, prefix, f.pos};
  const FsYamlNode *g = fs_yaml_map_get(e, "global_link");
  if (g && !(s.global_link = fs_topo_loader_model(L, g, FS_MODEL_LINK, error)))
    return FALSE;
  const char *req[] = {"groups", "routers", "global_per_router"};
  guint *dst[] = {&s.groups, &s.routers, &s.global_per_router};
  for (guint i = 0; i < 3; i++) /* required by the schema */
    if (!fs_topo_loader_uint(L, e, req[i], 1 << 20, dst[i], error))
      return FALSE;
  if (!fs_topo_loader_uint(L, e, "endpoints_per_router", 1 << 20, &s.endpoints_per_router, error))
    return FALSE;
  return fs_topo_gen_dragonfly(L->topo, (guint *)(void *)ep->data, ep->len, &s, NULL, error);
}

/* The nvlink-rack generator: compute trays of GPUs (with CPUs over C2C
 * when cpus_per_tray > 0) on NVSwitch trays, counts and models from the
 * entry; with template:, that template's hosts are the compute trays and
 * only the switch trays are made.  Errors at the entry's keys. */
static gboolean gen_rack(Loader *L, const FsYamlNode *e, const char *prefix, GError **error)
{
  FsNvlRackSpec s = {0};
  s.prefix = prefix;
  s.pos = (FsGenPos){e->file, e->line, e->col};
  s.trays = 18, s.gpus_per_tray = 4, s.cpus_per_tray = 2, s.switch_trays = 9;
  s.switches_per_tray = 2;
  const FsYamlNode *tn = fs_yaml_map_get(e, "template");
  if (tn != NULL) {
    /* Trays are existing hosts: the generator makes only the switch trays. */
    static const char *const own[] = {"gpus_per_tray", "cpus_per_tray", "gpu", "cpu", "c2c"};
    for (guint i = 0; i < G_N_ELEMENTS(own); i++) {
      const FsYamlNode *v = fs_yaml_map_get(e, own[i]);
      if (v != NULL) {
        fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, v->file, v->line, v->col,
                        "with template:, the trays are that template's hosts; %s: belongs in "
                        "the template", own[i]);
        return FALSE;
      }
    }
    s.cpus_per_tray = 0;
  }
  if (!fs_topo_loader_uint(L, e, "trays", 4096, &s.trays, error) ||
      !fs_topo_loader_uint(L, e, "gpus_per_tray", 64, &s.gpus_per_tray, error) ||
      !fs_topo_loader_uint(L, e, "cpus_per_tray", 64, &s.cpus_per_tray, error) ||
      !fs_topo_loader_uint(L, e, "switch_trays", 4096, &s.switch_trays, error) ||
      !fs_topo_loader_uint(L, e, "switches_per_tray", 64, &s.switches_per_tray, error) ||
      !fs_topo_loader_uint(L, e, "links_per_switch", 1024, &s.links_per_switch, error))
    return FALSE;
  const FsYamlNode *v;
  struct { const char *key; FsModelKind kind; const FsModel **dst; gboolean needed; } m[] = {
    {"gpu", FS_MODEL_GPU, &s.gpu, tn == NULL},
    {"switch", FS_MODEL_SWITCH, &s.sw, TRUE},
    {"nvlink", FS_MODEL_LINK, &s.nvlink, TRUE},
    {"cpu", FS_MODEL_CPU, &s.cpu, s.cpus_per_tray > 0},
    {"c2c", FS_MODEL_LINK, &s.c2c, s.cpus_per_tray > 0},
  };
  for (guint i = 0; i < G_N_ELEMENTS(m); i++) {
    v = m[i].needed ? fs_yaml_require_key(e, m[i].key, "nvlink-rack generator", error)
                    : fs_yaml_map_get(e, m[i].key);
    if (m[i].needed && v == NULL)
      return FALSE;
    if (v && !(*m[i].dst = fs_topo_loader_model(L, v, m[i].kind, error)))
      return FALSE;
  }
  if (tn == NULL)
    return fs_topo_gen_nvlink_rack(L->topo, &s, error);
  g_autofree char *tname = fs_topo_loader_text(L, tn, "a template name", error);
  if (tname == NULL)
    return FALSE;
  g_autoptr(GArray) hosts = fs_topo_loader_template_hosts(L, tname);
  return fs_topo_gen_nvlink_racks(L->topo, (const guint *)(void *)hosts->data, hosts->len, &s,
                                  error);
}

/* The generator table: type name, its keys (loader-schema.c), the function. */
static const struct {
  const char *type;
  const FsSchema *schema;
  GenFn fn;
} generators[] = {
  {"fat-tree", &fs_topo_fat_tree_schema, gen_fat_tree},
  {"rail-optimized", &fs_topo_rail_schema, gen_rail},
  {"dragonfly", &fs_topo_dragonfly_schema, gen_dragonfly},
  {"nvlink-rack", &fs_topo_rack_schema, gen_rack},
};

/* Runs one generators: entry: finds its type in the generator table,
 * checks its keys, names its nodes under name: (the type by default),
 * runs it and turns reduction off on the switches it made when
 * reduction: false.  An unknown type fails at type: with a did-you-mean. */
gboolean fs_topo_loader_generate(Loader *L, const FsYamlNode *e, GError **error)
{
  if (!fs_topo_loader_check(&fs_topo_gen_schema, e, TRUE, error))
    return FALSE;
  const FsYamlNode *tn = fs_yaml_map_get(e, "type");
  g_autofree char *type = fs_topo_loader_text(L, tn, "a generator type", error);
  if (type == NULL)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS(generators); i++) {
    if (strcmp(type, generators[i].type) != 0)
      continue;
    if (!fs_topo_loader_check(generators[i].schema, e, FALSE, error))
      return FALSE;
    const FsYamlNode *nn = fs_yaml_map_get(e, "name");
    g_autofree char *prefix = nn ? fs_topo_loader_text(L, nn, "a name prefix", error)
                                 : g_strdup(type);
    if (prefix == NULL)
      return FALSE;
    /* reduction: false turns in-network reduction off on every switch the entry makes. */
    gboolean reduction = TRUE;
    const FsYamlNode *rn = fs_yaml_map_get(e, "reduction");
    if (rn != NULL && !fs_topo_loader_bool(L, rn, "reduction", &reduction, error))
      return FALSE;
    guint before = fs_topo_n_nodes(L->topo);
    if (!generators[i].fn(L, e, prefix, error))
      return FALSE;
    for (guint k = before; !reduction && k < fs_topo_n_nodes(L->topo); k++)
      fs_topo_set_reduction(L->topo, k, FALSE);
    return TRUE;
  }
  const char *types[G_N_ELEMENTS(generators)];
  for (guint i = 0; i < G_N_ELEMENTS(generators); i++)
    types[i] = generators[i].type;
  const char *best = fs_did_you_mean(type, types, G_N_ELEMENTS(types));
  fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, tn->file, tn->line, tn->col,
                  "unknown generator type \"%s\"%s%s%s; expected fat-tree, rail-optimized, "
                  "dragonfly or nvlink-rack", type, best ? " (did you mean \"" : "",
                  best ? best : "", best ? "\"?)" : "");
  return FALSE;
}

