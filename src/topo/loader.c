/* loader.c — topology YAML to FsTopo (format in topologies/README.md):
 * the scalar helpers every part of the loader reads values with, the
 * reading of files and includes, and the two entry points.
 *
 * Two phases.  Reading walks the top file and its includes depth first
 * (an include is read where it appears; a file already read is skipped;
 * a file that includes itself through a chain is an error naming the
 * chain), evaluates parameters (loader-params.c: integers or words; an
 * outer file's value or a -D override wins over an included default, and
 * must fit every declaration's values:, min: and max:) and collects
 * templates and the hosts/nodes/links/generators entries of every file in
 * reading order.  Building (loader-build.c) then instantiates the hosts
 * (templates, following like:), adds top-level nodes and links, runs the
 * generators (loader-gen.c), finalizes and validates.  Every YAML document
 * stays alive until building ends, so entries are borrowed nodes.
 */
#include "topo/topo.h"

#include <string.h>

#include "topo/loader-private.h"
#include "topo/names.h"
#include "util/datadir.h"
#include "util/error.h"
#include "util/strutil.h"
#include "util/yaml.h"

/* ---- scalar helpers: ${} substitution with positions -------------------- */

/* Prefixes an error from names.c with node's position. */
static gboolean at(const FsYamlNode *node, GError **error)
{
  if (error && *error)
    fs_error_prefix_at(*error, node->file, node->line, node->col);
  return FALSE;
}

/* The scalar's text with ${} substituted (caller frees). */
char *fs_topo_loader_text(Loader *L, const FsYamlNode *node, const char *what, GError **error)
{
  if (node->kind != FS_YAML_SCALAR) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, node->file, node->line,
                    node->col, "expected %s, got %s", what, fs_yaml_kind_name(node));
    return NULL;
  }
  char *out = NULL;
  if (!fs_topo_subst_strings(node->value, L->params, L->strings, &out, error)) {
    at(node, error);
    return NULL;
  }
  return out;
}

gboolean fs_topo_loader_int(Loader *L, const FsYamlNode *node, int64_t min, int64_t max,
                            const char *what, int64_t *out, GError **error)
{
  g_autofree char *text = fs_topo_loader_text(L, node, "an integer", error);
  if (text == NULL)
    return FALSE;
  GError *e = NULL;
  if (!fs_topo_parse_int(text, min, max, out, &e)) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM, node->file, node->line,
                    node->col, "%s: %s", what, e->message);
    g_error_free(e);
    return FALSE;
  }
  return TRUE;
}

gboolean fs_topo_loader_uint(Loader *L, const FsYamlNode *map, const char *key, guint max,
                             guint *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  if (v == NULL)
    return TRUE;
  int64_t x;
  if (!fs_topo_loader_int(L, v, 0, max, key, &x, error))
    return FALSE;
  *out = (guint)x;
  return TRUE;
}

/* Expands the name pattern in node (after ${}) with prefix into names. */
GPtrArray *fs_topo_loader_names(Loader *L, const FsYamlNode *node, const char *prefix,
                                GError **error)
{
  g_autofree char *text = fs_topo_loader_text(L, node, "a name or name range", error);
  if (text == NULL)
    return NULL;
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  if (!fs_topo_expand(text, names, error)) {
    g_ptr_array_unref(names);
    at(node, error);
    return NULL;
  }
  if (prefix && *prefix)
    for (guint i = 0; i < names->len; i++) {
      char *full = g_strconcat(prefix, names->pdata[i], NULL);
      g_free(names->pdata[i]);
      names->pdata[i] = full;
    }
  return names;
}

/* A model named by node, of a node kind (gpu/cpu/switch/nic) when kind is
 * FS_MODEL_N_KINDS, else of exactly kind. */
const FsModel *fs_topo_loader_model(Loader *L, const FsYamlNode *node, FsModelKind kind,
                                    GError **error)
{
  g_autofree char *name = fs_topo_loader_text(L, node, "a model name", error);
  if (name == NULL)
    return NULL;
  const FsModel *m = fs_catalog_get(L->cat, name);
  if (m != NULL && (kind == FS_MODEL_N_KINDS ? m->kind != FS_MODEL_LINK : m->kind == kind))
    return m;
  if (m != NULL) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL, node->file, node->line,
                    node->col, "model \"%s\" is a %s model; expected %s", name,
                    fs_model_kind_name(m->kind),
                    kind == FS_MODEL_N_KINDS ? "a gpu, cpu, switch or nic model"
                    : kind == FS_MODEL_LINK ? "a link model" : fs_model_kind_name(kind));
    return NULL;
  }
  if (kind != FS_MODEL_N_KINDS) {
    GError *e = NULL;
    m = fs_catalog_require(L->cat, name, kind, &e);
    if (m != NULL)
      return m;
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL, node->file, node->line,
                    node->col, "%s", e->message);
    g_error_free(e);
    return NULL;
  }
  /* A device model: suggest among every non-link model. */
  guint n = fs_catalog_size(L->cat);
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  for (guint i = 0; i < n; i++)
    if (fs_catalog_nth(L->cat, i)->kind != FS_MODEL_LINK)
      g_ptr_array_add(names, (gpointer)fs_catalog_nth(L->cat, i)->name);
  const char *best = fs_did_you_mean(name, (const char *const *)names->pdata, names->len);
  if (best)
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL, node->file, node->line,
                    node->col, "unknown device model \"%s\"; did you mean \"%s\"?", name, best);
  else
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_MODEL, node->file, node->line,
                    node->col, "unknown device model \"%s\" (see `fabricsim models`)", name);
  return NULL;
}
/* A yes/no value: true/yes/on/1 or false/no/off/0, any case, after ${}. */
gboolean fs_topo_loader_bool(Loader *L, const FsYamlNode *node, const char *what,
                             gboolean *out, GError **error)
{
  g_autofree char *text = fs_topo_loader_text(L, node, "true or false", error);
  if (text == NULL)
    return FALSE;
  static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no",
                                                                            "off", "0"};
  for (guint i = 0; i < G_N_ELEMENTS(yes); i++) {
    if (g_ascii_strcasecmp(text, yes[i]) == 0)
      return *out = TRUE, TRUE;
    if (g_ascii_strcasecmp(text, no[i]) == 0)
      return *out = FALSE, TRUE;
  }
  fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, node->file, node->line, node->col,
                  "%s must be true or false (or 1 or 0), got \"%s\"", what, text);
  return FALSE;
}

/* ---- phase 1: reading files -------------------------------------------- */

static gboolean read_file(Loader *L, const char *path, const FsYamlNode *from, GError **error);

/* The `routing:` field (static or adaptive, after ${} substitution: a file
 * makes it selectable with a word parameter, `routing: ${routing}`); the
 * outermost file's wins. */
static gboolean read_routing(Loader *L, const FsYamlNode *v, GError **error)
{
  g_autofree char *text = fs_topo_loader_text(L, v, "a routing", error);
  if (text == NULL)
    return FALSE;
  FsTopoRouting r;
  if (!fs_topo_routing_from_name(text, &r)) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM, v->file, v->line, v->col,
                    "routing must be static or adaptive, got \"%s\"", text);
    return FALSE;
  }
  if (L->routing < 0)
    L->routing = (int)r;
  return TRUE;
}

static gboolean read_include(Loader *L, const FsYamlNode *node, const char *path, GError **error)
{
  g_autofree char *dir = g_path_get_dirname(path);
  const FsYamlNode *const *items = (const FsYamlNode *const *)&node;
  guint n = 1;
  if (node->kind == FS_YAML_SEQ) {
    items = (const FsYamlNode *const *)node->values;
    n = node->n;
  }
  for (guint i = 0; i < n; i++) {
    g_autofree char *rel = fs_topo_loader_text(L, items[i], "a file name", error);
    if (rel == NULL)
      return FALSE;
    g_autofree char *full = g_path_is_absolute(rel) || strcmp(dir, ".") == 0
                              ? g_strdup(rel) : g_build_filename(dir, rel, NULL);
    if (!read_file(L, full, items[i], error))
      return FALSE;
  }
  return TRUE;
}

static gboolean read_templates(Loader *L, const FsYamlNode *map, GError **error)
{
  if (!fs_yaml_require_map(map, error))
    return FALSE;
  for (guint i = 0; i < map->n; i++) {
    const FsYamlNode *k = map->keys[i], *v = map->values[i];
    const Template *old = g_hash_table_lookup(L->templates, k->value);
    if (old != NULL) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_DUPLICATE, k->file, k->line, k->col,
                      "template \"%s\" is already defined at %s:%d:%d", k->value,
                      old->key->file, old->key->line, old->key->col);
      return FALSE;
    }
    if (!fs_topo_loader_check(&fs_topo_template_schema, v, FALSE, error))
      return FALSE;
    const FsYamlNode *like = fs_yaml_map_get(v, "like");
    if (like != NULL && (fs_yaml_map_get(v, "nodes") || fs_yaml_map_get(v, "links"))) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, like->file, like->line,
                      like->col, "a template with like: takes its nodes and links from the "
                      "other template; drop nodes: and links: or like:");
      return FALSE;
    }
    Template *t = g_new0(Template, 1);
    t->name = k->value;
    t->map = v;
    t->key = k;
    g_hash_table_insert(L->templates, (gpointer)t->name, t);
    g_ptr_array_add(L->template_order, (gpointer)t->name);
  }
  return TRUE;
}

/* Appends the entries of the list under key (if present) to out. */
static gboolean collect(const FsYamlNode *root, const char *key, GPtrArray *out, GError **error)
{
  const FsYamlNode *seq = fs_yaml_map_get(root, key);
  if (seq == NULL || (seq->kind == FS_YAML_SCALAR && seq->is_null))
    return TRUE;
  if (!fs_yaml_require_seq(seq, error))
    return FALSE;
  for (guint i = 0; i < seq->n; i++) {
    if (!fs_yaml_require_map(seq->values[i], error))
      return FALSE;
    g_ptr_array_add(out, seq->values[i]);
  }
  return TRUE;
}

static gboolean read_doc(Loader *L, FsYamlDoc *doc, const char *path, GError **error)
{
  const FsYamlNode *root = fs_yaml_doc_root(doc);
  if (root == NULL) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, path, 1, 1,
                    "empty topology file; expected a mapping with nodes: and links:");
    return FALSE;
  }
  if (!fs_topo_loader_check(&fs_topo_file_schema, root, FALSE, error))
    return FALSE;
  if (L->name == NULL) {
    const char *name = NULL;
    if (!fs_yaml_opt_string(root, "name", &name, error))
      return FALSE;
    if (name != NULL) {
      L->name = g_strdup(name);
    } else {
      char *base = g_path_get_basename(path);
      char *dot = strrchr(base, '.');
      if (dot && dot != base)
        *dot = '\0';
      L->name = base;
    }
  }
  const FsYamlNode *v;
  if ((v = fs_yaml_map_get(root, "parameters")) && !fs_topo_loader_read_parameters(L, v, error))
    return FALSE;
  if ((v = fs_yaml_map_get(root, "routing")) && !read_routing(L, v, error))
    return FALSE;
  if ((v = fs_yaml_map_get(root, "include")) && !read_include(L, v, path, error))
    return FALSE;
  if ((v = fs_yaml_map_get(root, "templates")) && !read_templates(L, v, error))
    return FALSE;
  return collect(root, "hosts", L->hosts, error) && collect(root, "nodes", L->nodes, error) &&
         collect(root, "links", L->links, error) &&
         collect(root, "generators", L->gens, error);
}

static gboolean read_file(Loader *L, const char *path, const FsYamlNode *from, GError **error)
{
  g_autofree char *canon = g_canonicalize_filename(path, NULL);
  for (guint i = 0; i < L->chain->len; i++) {
    if (strcmp(L->chain->pdata[i], canon) != 0)
      continue;
    GString *msg = g_string_new("include cycle: ");
    for (guint j = i; j < L->chain->len; j++) {
      g_autofree char *b = g_path_get_basename(L->chain->pdata[j]);
      g_string_append_printf(msg, "%s -> ", b);
    }
    g_autofree char *b = g_path_get_basename(canon);
    g_string_append(msg, b);
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INCLUDE, from->file, from->line,
                    from->col, "%s", msg->str);
    g_string_free(msg, TRUE);
    return FALSE;
  }
  if (g_hash_table_contains(L->read, canon))
    return TRUE;
  if (from != NULL && !g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INCLUDE, from->file, from->line,
                    from->col, "included file \"%s\" does not exist (paths are relative to "
                    "the including file)", path);
    return FALSE;
  }
  FsYamlDoc *doc = fs_yaml_load_file(path, error);
  if (doc == NULL)
    return FALSE;
  g_ptr_array_add(L->docs, doc);
  g_hash_table_add(L->read, g_strdup(canon));
  g_ptr_array_add(L->chain, g_strdup(canon));
  gboolean ok = read_doc(L, doc, path, error);
  g_ptr_array_remove_index(L->chain, L->chain->len - 1);
  return ok;
}

/* ---- driver --------------------------------------------------------------- */

static void loader_clear(Loader *L)
{
  g_ptr_array_unref(L->docs);
  g_hash_table_destroy(L->params);
  g_hash_table_destroy(L->strings);
  g_hash_table_destroy(L->param_src);
  g_ptr_array_unref(L->host_template);
  g_ptr_array_unref(L->param_order);
  g_hash_table_destroy(L->overrides);
  g_hash_table_destroy(L->overrides_used);
  g_hash_table_destroy(L->templates);
  g_ptr_array_unref(L->template_order);
  g_ptr_array_unref(L->chain);
  g_hash_table_destroy(L->read);
  g_ptr_array_unref(L->hosts);
  g_ptr_array_unref(L->nodes);
  g_ptr_array_unref(L->links);
  g_ptr_array_unref(L->gens);
  g_free(L->name);
}

static void loader_init(Loader *L, const FsCatalog *cat)
{
  memset(L, 0, sizeof *L);
  L->cat = cat;
  L->docs = g_ptr_array_new_with_free_func((GDestroyNotify)fs_yaml_doc_free);
  L->params = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
  L->strings = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
  L->param_src = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, fs_topo_loader_param_source_free);
  L->host_template = g_ptr_array_new();
  L->param_order = g_ptr_array_new_with_free_func(g_free);
  L->overrides = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  L->overrides_used = g_hash_table_new(g_str_hash, g_str_equal);
  L->templates = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
  L->template_order = g_ptr_array_new();
  L->chain = g_ptr_array_new_with_free_func(g_free);
  L->read = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  L->hosts = g_ptr_array_new();
  L->nodes = g_ptr_array_new();
  L->links = g_ptr_array_new();
  L->gens = g_ptr_array_new();
  L->lone_host = -1;
  L->routing = -1;
}

FsTopo *fs_topo_load_file(const char *path, const FsCatalog *cat, const char *const *defines,
                          GError **error)
{
  Loader L;
  loader_init(&L, cat);
  FsTopo *t = NULL;
  g_autofree char *file = fs_datadir_find(FS_DATA_TOPOLOGIES, path);
  if (fs_topo_loader_parse_defines(&L, defines, error) && read_file(&L, file, NULL, error))
    t = fs_topo_loader_build(&L, error);
  loader_clear(&L);
  return t;
}

FsTopo *fs_topo_load_string(const char *text, const char *name, const FsCatalog *cat,
                            const char *const *defines, GError **error)
{
  Loader L;
  loader_init(&L, cat);
  FsTopo *t = NULL;
  FsYamlDoc *doc = NULL;
  if (fs_topo_loader_parse_defines(&L, defines, error) &&
      (doc = fs_yaml_load_string(text, -1, name, error)) != NULL) {
    g_ptr_array_add(L.docs, doc);
    g_autofree char *canon = g_canonicalize_filename(name, NULL);
    g_ptr_array_add(L.chain, g_strdup(canon));
    g_hash_table_add(L.read, g_strdup(canon));
    if (read_doc(&L, doc, name, error))
      t = fs_topo_loader_build(&L, error);
  }
  loader_clear(&L);
  return t;
}
