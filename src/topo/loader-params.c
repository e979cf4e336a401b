/* loader-params.c — the parameters of a topology file: declarations under
 * parameters: (an integer or a word, with values:, min: and max:), the -D
 * overrides of the command line, the value in force for each (an outer
 * file's or a -D override wins over an included default and must fit every
 * declaration), and the check that every -D names a declared parameter.
 * Part of the loader (loader-private.h).
 */
#include <stdarg.h>
#include <string.h>

#include "topo/loader-private.h"
#include "topo/names.h"
#include "util/error.h"
#include "util/strutil.h"
#include "util/yaml.h"


/* A parameter's name: letters, digits and _, not starting with a digit. */
static gboolean valid_param_name(const char *s)
{
  if (!g_ascii_isalpha(*s) && *s != '_')
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isalnum(*s) && *s != '_')
      return FALSE;
  return TRUE;
}

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
    if (!fs_topo_loader_check(&fs_topo_param_schema, v, FALSE, error))
      return FALSE;
    d->def = fs_yaml_map_get(v, "default");
    d->values = fs_yaml_map_get(v, "values");
    d->min = fs_yaml_map_get(v, "min");
    d->max = fs_yaml_map_get(v, "max");
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
gboolean fs_topo_loader_read_parameters(Loader *L, const FsYamlNode *map, GError **error)
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

gboolean fs_topo_loader_parse_defines(Loader *L, const char *const *defines, GError **error)
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

gboolean fs_topo_loader_check_defines(Loader *L, GError **error)
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

void fs_topo_loader_param_source_free(gpointer p)
{
  ParamSource *src = p;
  g_free((char *)src->define);
  g_free(src);
}
