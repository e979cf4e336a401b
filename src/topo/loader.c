/* loader.c — topology YAML to FsTopo (format in topologies/README.md).
 *
 * Two phases.  Reading walks the top file and its includes depth first
 * (an include is read where it appears; a file already read is skipped;
 * a file that includes itself through a chain is an error naming the
 * chain), evaluates parameters (integers or words; an outer file's value
 * or a -D override wins over an included default, and must fit every
 * declaration's values:, min: and max:) and collects templates and the
 * hosts/nodes/links/generators entries of every file in reading order.
 * Building then instantiates the hosts (templates, following like:), adds
 * top-level nodes and links, runs the generators, finalizes and validates.  Every YAML
 * document stays alive until building ends, so entries are borrowed nodes.
 */
#include "topo/topo.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "topo/loader-private.h"
#include "topo/names.h"
#include "topo/topo-private.h"
#include "util/datadir.h"
#include "util/error.h"
#include "util/strutil.h"
#include "util/yaml.h"

static const char *const top_keys[] = {"name", "description", "source", "parameters", "include",
                                       "templates", "hosts", "nodes", "links", "generators",
                                       "routing", NULL};
static const char *const template_keys[] = {"description", "source", "nodes", "links", "like",
                                            NULL};
static const char *const param_keys[] = {"default", "values", "min", "max", "description", NULL};
static const char *const host_keys[] = {"template", "name", NULL};
static const char *const node_keys[] = {"name", "model", "socket", "fabric", "reduction", NULL};
static const char *const link_keys[] = {"a", "b", "model", "count", "pairing", NULL};

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

/* ---- phase 1: reading files -------------------------------------------- */

static gboolean read_file(Loader *L, const char *path, const FsYamlNode *from, GError **error);

static gboolean valid_param_name(const char *s)
{
  if (!g_ascii_isalpha(*s) && *s != '_')
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isalnum(*s) && *s != '_')
      return FALSE;
  return TRUE;
}

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

/* ---- parameters -------------------------------------------------------- */

/* One declaration under parameters:, a scalar default or a mapping. */
typedef struct {
  const char *name;
  const FsYamlNode *key, *def, *values, *min, *max;
  gboolean is_string;        /* the default's type */
} Decl;

/* An unquoted word: a letter or _ first, then letters, digits and - _ . : / +. */
static gboolean is_word(const char *s)
{
  if (!g_ascii_isalpha(*s) && *s != '_')
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isalnum(*s) && !strchr("-_.:/+", *s))
      return FALSE;
  return TRUE;
}

/* Reads the declaration (k, v) into d: its keys and its type (a default written in quotes or a
 * word is a string; anything else must be an integer expression). */
static gboolean read_decl(Loader *L, const FsYamlNode *k, const FsYamlNode *v, Decl *d,
                          GError **error)
{
  memset(d, 0, sizeof *d);
  d->name = k->value;
  d->key = k;
  d->def = v;
  if (v->kind == FS_YAML_MAP) {
    if (!fs_yaml_check_keys(v, param_keys, "parameter", error) ||
        !(d->def = fs_yaml_require_key(v, "default", "parameter", error)))
      return FALSE;
    d->values = fs_yaml_map_get(v, "values");
    d->min = fs_yaml_map_get(v, "min");
    d->max = fs_yaml_map_get(v, "max");
    if (d->values && !fs_yaml_require_seq(d->values, error))
      return FALSE;
  }
  if (d->def->kind != FS_YAML_SCALAR) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM, d->def->file, d->def->line,
                    d->def->col, "parameter \"%s\" must be an integer or a word (or a mapping "
                    "with default:), got %s", d->name, fs_yaml_kind_name(d->def));
    return FALSE;
  }
  g_autofree char *text = fs_topo_loader_text(L, d->def, "a parameter value", error);
  if (text == NULL)
    return FALSE;
  int64_t x;
  d->is_string = d->def->quoted ||
                 (!fs_topo_parse_int(text, INT64_MIN / 4, INT64_MAX / 4, &x, NULL) &&
                  is_word(text));
  if (d->is_string && (d->min || d->max)) {
    const FsYamlNode *m = d->min ? d->min : d->max;
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM, m->file, m->line, m->col,
                    "parameter \"%s\" is a string; min: and max: apply to integers (list the "
                    "allowed words under values:)", d->name);
    return FALSE;
  }
  return TRUE;
}

/* Sets *error at where the value of parameter d->name came from: the -D override (message
 * prefixed with it, positioned at the declaration) or the file position of its value. */
static void value_error(Loader *L, const Decl *d, GError **error, const char *fmt, ...)
  G_GNUC_PRINTF(4, 5);
static void value_error(Loader *L, const Decl *d, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  const ParamSource *src = g_hash_table_lookup(L->param_src, d->name);
  if (src == NULL || src->value == NULL) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM, d->key->file,
                    d->key->line, d->key->col, "-D %s: %s", src ? src->define : d->name, msg);
  } else if (src->value->file == d->def->file && src->value->line == d->def->line &&
             src->value->col == d->def->col) {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM, src->value->file,
                    src->value->line, src->value->col, "%s", msg);
  } else {
    fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM, src->value->file,
                    src->value->line, src->value->col, "%s (as declared at %s:%d:%d)", msg,
                    d->key->file, d->key->line, d->key->col);
  }
}

/* Checks the value in force for d->name against d: its type, values:, min: and max:. */
static gboolean check_value(Loader *L, const Decl *d, GError **error)
{
  const int64_t *iv = g_hash_table_lookup(L->params, d->name);
  const char *sv = g_hash_table_lookup(L->strings, d->name);
  if (d->is_string != (sv != NULL)) {
    if (sv)
      value_error(L, d, error, "parameter \"%s\" must be an integer, got \"%s\"", d->name, sv);
    else
      value_error(L, d, error, "parameter \"%s\" must be a word, got %" G_GINT64_FORMAT, d->name, *iv);
    return FALSE;
  }
  int64_t bound;
  if (d->min && (!fs_topo_loader_int(L, d->min, INT64_MIN / 4, INT64_MAX / 4, "min", &bound,
                                     error)))
    return FALSE;
  if (d->min && *iv < bound) {
    value_error(L, d, error, "parameter \"%s\" is %" G_GINT64_FORMAT "; the least allowed is %"
                G_GINT64_FORMAT, d->name, *iv, bound);
    return FALSE;
  }
  if (d->max && (!fs_topo_loader_int(L, d->max, INT64_MIN / 4, INT64_MAX / 4, "max", &bound,
                                     error)))
    return FALSE;
  if (d->max && *iv > bound) {
    value_error(L, d, error, "parameter \"%s\" is %" G_GINT64_FORMAT "; the most allowed is %"
                G_GINT64_FORMAT, d->name, *iv, bound);
    return FALSE;
  }
  if (d->values == NULL)
    return TRUE;
  g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *mine = sv ? g_strdup(sv) : g_strdup_printf("%" G_GINT64_FORMAT, *iv);
  gboolean found = FALSE;
  for (guint i = 0; i < d->values->n; i++) {
    const FsYamlNode *item = d->values->values[i];
    char *t;
    if (d->is_string) {
      if (!(t = fs_topo_loader_text(L, item, "a word", error)))
        return FALSE;
    } else {
      int64_t x;
      if (!fs_topo_loader_int(L, item, INT64_MIN / 4, INT64_MAX / 4, "values", &x, error))
        return FALSE;
      t = g_strdup_printf("%" G_GINT64_FORMAT, x);
    }
    found |= strcmp(t, mine) == 0;
    g_ptr_array_add(texts, t);
  }
  if (found)
    return TRUE;
  g_ptr_array_add(texts, NULL);
  g_autofree char *list = g_strjoinv(", ", (char **)texts->pdata);
  const char *best = d->is_string ? fs_did_you_mean(mine, (const char *const *)texts->pdata,
                                                    (gssize)texts->len - 1)
                                  : NULL;
  value_error(L, d, error, "parameter \"%s\" is %s%s%s; expected one of %s%s%s%s", d->name,
              sv ? "\"" : "", mine, sv ? "\"" : "", list, best ? "; did you mean \"" : "",
              best ? best : "", best ? "\"?" : "");
  return FALSE;
}

/* Records the value of d->name: a -D override when there is one, else the default. */
static gboolean set_value(Loader *L, const Decl *d, GError **error)
{
  ParamSource *src = g_new0(ParamSource, 1);
  char *name = g_strdup(d->name);
  g_hash_table_insert(L->param_src, name, src);
  g_ptr_array_add(L->param_order, name);
  const char *ov = g_hash_table_lookup(L->overrides, d->name);
  if (ov != NULL) {
    g_hash_table_add(L->overrides_used, (gpointer)d->name);
    src->define = g_strdup_printf("%s=%s", d->name, ov);
    if (d->is_string) {
      g_hash_table_insert(L->strings, name, g_strdup(ov));
      return TRUE;
    }
    int64_t *val = g_new(int64_t, 1);
    GError *e = NULL;
    if (!fs_topo_eval(ov, L->params, val, &e)) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM, d->key->file, d->key->line,
                      d->key->col, "-D %s: parameter \"%s\" must be an integer (%s)",
                      src->define, d->name, e->message);
      g_error_free(e);
      g_free(val);
      return FALSE;
    }
    g_hash_table_insert(L->params, name, val);
    return TRUE;
  }
  src->value = d->def;
  if (d->is_string) {
    char *text = fs_topo_loader_text(L, d->def, "a word", error);
    if (text == NULL)
      return FALSE;
    g_hash_table_insert(L->strings, name, text);
    return TRUE;
  }
  int64_t *val = g_new(int64_t, 1);
  g_autofree char *what = g_strdup_printf("parameter \"%s\" must be an integer", d->name);
  if (!fs_topo_loader_int(L, d->def, INT64_MIN / 4, INT64_MAX / 4, what, val, error)) {
    g_free(val);
    return FALSE;
  }
  g_hash_table_insert(L->params, name, val);
  return TRUE;
}

/* Reads a parameters: mapping.  A parameter already set (by an outer file, an earlier include
 * or -D) keeps its value, which must still fit this declaration. */
static gboolean read_parameters(Loader *L, const FsYamlNode *map, GError **error)
{
  if (!fs_yaml_require_map(map, error))
    return FALSE;
  for (guint i = 0; i < map->n; i++) {
    const FsYamlNode *k = map->keys[i], *v = map->values[i];
    if (!valid_param_name(k->value)) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM, k->file, k->line, k->col,
                      "parameter name \"%s\" must be letters, digits and _ (not starting "
                      "with a digit)", k->value);
      return FALSE;
    }
    Decl d;
    if (!read_decl(L, k, v, &d, error))
      return FALSE;
    if (!g_hash_table_contains(L->param_src, k->value) && !set_value(L, &d, error))
      return FALSE;
    if (!check_value(L, &d, error))
      return FALSE;
  }
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
    if (!fs_yaml_require_map(v, error) || !fs_yaml_check_keys(v, template_keys, "template", error))
      return FALSE;
    const FsYamlNode *list, *like = fs_yaml_map_get(v, "like");
    if (like != NULL && (fs_yaml_map_get(v, "nodes") || fs_yaml_map_get(v, "links"))) {
      fs_set_error_at(error, FS_TOPO_ERROR, FS_TOPO_ERROR_INVALID, like->file, like->line,
                      like->col, "a template with like: takes its nodes and links from the "
                      "other template; drop nodes: and links: or like:");
      return FALSE;
    }
    if ((list = fs_yaml_map_get(v, "nodes")) && !fs_yaml_require_seq(list, error))
      return FALSE;
    if ((list = fs_yaml_map_get(v, "links")) && !fs_yaml_require_seq(list, error))
      return FALSE;
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
  if (!fs_yaml_require_map(root, error) || !fs_yaml_check_keys(root, top_keys, "topology", error))
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
  if ((v = fs_yaml_map_get(root, "parameters")) && !read_parameters(L, v, error))
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

/* ---- phase 2: building ---------------------------------------------------- */

/* Adds the nodes of one "nodes:" entry e, its name a pattern that may expand to many, under
 * prefix and in host. A top-level node joins the implicit host0 while the file declares no
 * host, and no host when it is marked fabric or hosts exist; "fabric" inside a template is
 * refused. Errors at the entry's position (FS_TOPO_ERROR_*): unknown keys or model, a bad
 * socket, a duplicate name. */
static gboolean add_nodes(Loader *L, const FsYamlNode *e, const char *prefix, int host,
                          gboolean top, GError **error)
{
  if (!fs_yaml_check_keys(e, node_keys, "node", error))
    return FALSE;
  const FsYamlNode *nn = fs_yaml_require_key(e, "name", "node", error);
  const FsYamlNode *mn = nn ? fs_yaml_require_key(e, "model", "node", error) : NULL;
  if (mn == NULL)
    return FALSE;
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
  if (!fs_yaml_check_keys(e, link_keys, "link", error))
    return FALSE;
  const FsYamlNode *an = fs_yaml_require_key(e, "a", "link", error);
  const FsYamlNode *bn = an ? fs_yaml_require_key(e, "b", "link", error) : NULL;
  const FsYamlNode *mn = bn ? fs_yaml_require_key(e, "model", "link", error) : NULL;
  if (mn == NULL)
    return FALSE;
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

static gboolean add_hosts(Loader *L, const FsYamlNode *e, GError **error)
{
  if (!fs_yaml_check_keys(e, host_keys, "hosts entry", error))
    return FALSE;
  const FsYamlNode *tn = fs_yaml_require_key(e, "template", "hosts entry", error);
  if (tn == NULL)
    return FALSE;
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

/* ---- driver --------------------------------------------------------------- */

static gboolean parse_defines(Loader *L, const char *const *defines, GError **error)
{
  for (guint i = 0; defines && defines[i]; i++) {
    const char *eq = strchr(defines[i], '=');
    g_autofree char *name = eq ? g_strndup(defines[i], (gsize)(eq - defines[i])) : NULL;
    if (name == NULL || !valid_param_name(name) || eq[1] == '\0') {
      g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM,
                  "-D %s: expected NAME=INTEGER or NAME=WORD, e.g. -D nodes=32", defines[i]);
      return FALSE;
    }
    /* The value is typed by the parameter's declaration (set_value). */
    g_hash_table_replace(L->overrides, g_steal_pointer(&name), g_strdup(eq + 1));
  }
  return TRUE;
}

static gint cmp_strp(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static gboolean check_defines_used(Loader *L, GError **error)
{
  g_autoptr(GPtrArray) unused = g_ptr_array_new();
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, L->overrides);
  while (g_hash_table_iter_next(&it, &k, &v))
    if (!g_hash_table_contains(L->overrides_used, k))
      g_ptr_array_add(unused, k);
  if (unused->len == 0)
    return TRUE;
  g_ptr_array_sort(unused, cmp_strp);
  const char *name = *(const char **)unused->pdata; /* sorted: deterministic */
  g_autofree char *known = NULL;
  if (L->param_order->len > 0) {
    g_ptr_array_add(L->param_order, NULL);
    known = g_strjoinv(", ", (char **)L->param_order->pdata);
    g_ptr_array_remove_index(L->param_order, L->param_order->len - 1);
  }
  const char *value = g_hash_table_lookup(L->overrides, name);
  g_set_error(error, FS_TOPO_ERROR, FS_TOPO_ERROR_PARAM,
              "-D %s=%s: the topology has no parameter \"%s\"%s%s", name, value, name,
              known ? "; its parameters are: " : " (it declares none)", known ? known : "");
  return FALSE;
}

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

static void param_source_free(gpointer p)
{
  ParamSource *src = p;
  g_free((char *)src->define);
  g_free(src);
}

static void loader_init(Loader *L, const FsCatalog *cat)
{
  memset(L, 0, sizeof *L);
  L->cat = cat;
  L->docs = g_ptr_array_new_with_free_func((GDestroyNotify)fs_yaml_doc_free);
  L->params = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
  L->strings = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
  L->param_src = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, param_source_free);
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

static FsTopo *build(Loader *L, GError **error)
{
  if (!check_defines_used(L, error))
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

FsTopo *fs_topo_load_file(const char *path, const FsCatalog *cat, const char *const *defines,
                          GError **error)
{
  Loader L;
  loader_init(&L, cat);
  FsTopo *t = NULL;
  g_autofree char *file = fs_datadir_find(FS_DATA_TOPOLOGIES, path);
  if (parse_defines(&L, defines, error) && read_file(&L, file, NULL, error))
    t = build(&L, error);
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
  if (parse_defines(&L, defines, error) &&
      (doc = fs_yaml_load_string(text, -1, name, error)) != NULL) {
    g_ptr_array_add(L.docs, doc);
    g_autofree char *canon = g_canonicalize_filename(name, NULL);
    g_ptr_array_add(L.chain, g_strdup(canon));
    g_hash_table_add(L.read, g_strdup(canon));
    if (read_doc(&L, doc, name, error))
      t = build(&L, error);
  }
  loader_clear(&L);
  return t;
}
