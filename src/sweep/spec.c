/* spec.c — the sweep spec: YAML → settings, list entries and grid axes;
 * points decoded by index (never materialised), so a spec of millions of
 * points costs only its text.  Format: workloads/sweeps/README.md. */
#include <string.h>

#include "sweep/sweep.h"
#include "util/datadir.h"
#include "util/error.h"
#include "util/limits.h"
#include "util/schema.h"
#include "util/strutil.h"
#include "util/yaml.h"

G_DEFINE_QUARK(fs-sweep-error-quark, fs_sweep_error)

typedef struct {
  char *key;
  char *value;
} Setting;

typedef struct {
  char *key;
  GPtrArray *values;  /* char* */
} Axis;

struct FsSweepSpec {
  char *name;
  char *dir;                 /* the spec's folder, for relative paths */
  const FsSweepKind *kind;
  GArray *set;               /* Setting */
  GPtrArray *list;           /* GArray of Setting per entry */
  GArray *grid;              /* Axis */
  GPtrArray *axes;           /* char*, borrowed from list/grid keys */
  guint n_grid, n_points;
};

static void setting_clear(Setting *s)
{
  g_free(s->key);
  g_free(s->value);
}

static void axis_clear(Axis *a)
{
  g_free(a->key);
  g_ptr_array_unref(a->values);
}

static GArray *settings_new(void)
{
  GArray *a = g_array_new(FALSE, TRUE, sizeof(Setting));
  g_array_set_clear_func(a, (GDestroyNotify)setting_clear);
  return a;
}

void fs_sweep_spec_free(FsSweepSpec *s)
{
  if (s == NULL)
    return;
  g_free(s->name);
  g_free(s->dir);
  g_array_unref(s->set);
  g_ptr_array_unref(s->list);
  g_array_unref(s->grid);
  g_ptr_array_unref(s->axes);
  g_free(s);
}

static gboolean spec_error(GError **error, const FsYamlNode *n, const char *fmt, const char *arg)
{
  g_autofree char *msg = g_strdup_printf(fmt, arg);
  fs_set_error_at(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC, n->file, n->line, n->col, "%s", msg);
  return FALSE;
}


guint64 fs_sweep_max_points(void)
{
  return fs_env_limit("FABRICSIM_MAX_POINTS", FS_SWEEP_MAX_POINTS, G_MAXUINT32);
}

/* The guard in force as text (a static buffer: spec errors are made one at a time). */
static const char *max_points_text(void)
{
  static char buf[32];
  g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT, fs_sweep_max_points());
  return buf;
}
/* A setting's key is one the kind understands: FsSchemaRead.any_key of the
 * settings and grid tables (the keys every kind takes are declared). */
static gboolean check_key(const FsSchemaField *field, const FsYamlNode *k, const FsYamlNode *v,
                          gconstpointer value, gpointer data, GError **error)
{
  (void)field, (void)v, (void)value;
  const FsSweepSpec *s = data;
  const char *key = k->value;
  if (g_str_has_prefix(key, "D.") && key[2] != '\0')
    return TRUE;
  if (s->kind->accepts(key))
    return TRUE;
  static const char *const common[] = {"topology", "workload", "model", NULL};
  const char *guess = fs_did_you_mean(key, common, -1);
  if (guess != NULL) {
    g_autofree char *m = g_strdup_printf("\"%%s\" is not a setting of a %s point; did you mean "
                                         "\"%s\"?", s->kind->name, guess);
    return spec_error(error, k, m, key);
  }
  g_autofree char *m = g_strdup_printf("\"%%s\" is not a setting of a %s point (expected topology, "
                                       "workload, model, D.<parameter> or one of the kind's; see "
                                       "workloads/sweeps/README.md)", s->kind->name);
  return spec_error(error, k, m, key);
}

/* The settings of a point (`set:`, each entry of `list:`) and the axes of
 * `grid:` (util/schema.h): the keys every kind takes, and any other key —
 * D.<parameter> or a setting of the kind, which check_key tests.  A grid
 * axis may be a list of values; read_grid reads it. */
#define SETTING(k, t, vdoc, d)                                                                \
  {.key = k, .type = t, .offset = FS_SCHEMA_NOWHERE, .value_doc = vdoc, .doc = d}
#define SETTINGS(t, vdoc)                                                                     \
  SETTING("topology", t, vdoc, "the topology file, relative to the spec's folder, else to the " \
                               "working directory"),                                         \
  SETTING("workload", t, vdoc, "the workload file (`train`), found the same way"),            \
  SETTING("model", t, vdoc, "the flow model: `maxmin` (default) or `analytic`"),              \
  {.key = "setting", .any_key = TRUE, .type = t, .offset = FS_SCHEMA_NOWHERE,                 \
   .value_doc = vdoc,                                                                        \
   .doc = "`D.<parameter>`: a topology parameter, as `-D parameter=value`; or a setting of "  \
          "the point's kind (section \"Settings by kind\")"}
static const FsSchemaField settings_fields[] = {SETTINGS(FS_SCHEMA_SCALAR, NULL)};
static const FsSchema settings_schema = {"settings", NULL, settings_fields,
                                         G_N_ELEMENTS(settings_fields)};
static const FsSchemaField grid_fields[] = {
  SETTINGS(FS_SCHEMA_ANY, "a value (number or text) or a non-empty list of values")};
static const FsSchema grid_schema = {"grid", NULL, grid_fields, G_N_ELEMENTS(grid_fields)};
#undef SETTINGS
#undef SETTING

/* Reads map against schema (settings or grid), the kind's keys checked; in
 * FS_SWEEP_ERROR_SPEC. */
static gboolean read_table(FsSweepSpec *s, const FsSchema *schema, const FsYamlNode *map,
                           GError **error)
{
  FsSchemaRead opts = {.any_key = check_key, .data = s, .domain = FS_SWEEP_ERROR,
                       .code = FS_SWEEP_ERROR_SPEC};
  return fs_schema_read(schema, map, NULL, &opts, error);
}

/* Appends the settings of map (checked against the settings table) to out, in file order. */
static gboolean read_settings(FsSweepSpec *s, const FsYamlNode *map, GArray *out, GError **error)
{
  if (!read_table(s, &settings_schema, map, error))
    return FALSE;
  for (guint i = 0; i < map->n; i++) {
    Setting st = { g_strdup(map->keys[i]->value), g_strdup(map->values[i]->value) };
    g_array_append_val(out, st);
  }
  return TRUE;
}

static gboolean has_axis(const FsSweepSpec *s, const char *key)
{
  for (guint i = 0; i < s->axes->len; i++)
    if (strcmp(g_ptr_array_index(s->axes, i), key) == 0)
      return TRUE;
  return FALSE;
}

/* Reads the axes of `grid:` (keys checked by the grid table): each a value
 * or a non-empty list of values; the product is bounded by FABRICSIM_MAX_POINTS. */
static gboolean read_grid(FsSweepSpec *s, const FsYamlNode *map, GError **error)
{
  if (!read_table(s, &grid_schema, map, error))
    return FALSE;
  const FsSchemaField *one = &settings_fields[0]; /* a scalar value */
  guint64 n = 1;
  for (guint i = 0; i < map->n; i++) {
    const FsYamlNode *vals = map->values[i];
    Axis a = { g_strdup(map->keys[i]->value), g_ptr_array_new_with_free_func(g_free) };
    g_array_append_val(s->grid, a);
    if (vals->kind == FS_YAML_MAP)
      return spec_error(error, vals, "expected a list of values for the grid axis \"%s\"", a.key);
    if (vals->kind == FS_YAML_SEQ && vals->n == 0)
      return spec_error(error, vals, "the grid axis \"%s\" has no values", a.key);
    for (guint k = 0; k < (vals->kind == FS_YAML_SEQ ? vals->n : 1); k++) {
      const FsYamlNode *v = vals->kind == FS_YAML_SEQ ? vals->values[k] : vals;
      const char *text;
      GError *local = NULL;
      if (!fs_schema_read_value(one, v, &text, &local)) {
        local->domain = FS_SWEEP_ERROR;
        local->code = FS_SWEEP_ERROR_SPEC;
        g_propagate_error(error, local);
        return FALSE;
      }
      g_ptr_array_add(a.values, g_strdup(text));
    }
    n *= a.values->len;
    if (n > fs_sweep_max_points())
      return spec_error(error, vals, "the grid expands past %s points (FABRICSIM_MAX_POINTS "
                        "raises the limit)", max_points_text());
  }
  s->n_grid = (guint)n;
  return TRUE;
}

/* The top level of a spec, as read by the schema (util/schema.h). */
typedef struct {
  const char *name, *description, *kind;
} Top;

static const FsSchemaField top_fields[] = {
  {.key = "name", .type = FS_SCHEMA_STRING, .offset = offsetof(Top, name), .def = "sweep",
   .doc = "shown in the JSON output"},
  {.key = "description", .type = FS_SCHEMA_STRING, .offset = offsetof(Top, description),
   .doc = "one line for people; not used"},
  {.key = "kind", .type = FS_SCHEMA_STRING, .offset = offsetof(Top, kind), .def = "train",
   .value_doc = "`train`, `coll` or `p2p`",
   .doc = "what each point runs (`fabricsim sweep --list-kinds`)"},
  {.key = "set", .type = FS_SCHEMA_MAP, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "table `sweep.settings`", .doc = "settings common to every point"},
  {.key = "list", .type = FS_SCHEMA_LIST, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "list of tables `sweep.settings`",
   .doc = "one entry per group of points (not empty)"},
  {.key = "grid", .type = FS_SCHEMA_MAP, .offset = FS_SCHEMA_NOWHERE,
   .value_doc = "table `sweep.grid`",
   .doc = "every combination of the axes' values, for each list entry"},
};
static const FsSchema top_schema = {"a sweep spec", NULL, top_fields, G_N_ELEMENTS(top_fields)};

static const FsSchemaEntry schemas[] = {
  {"sweep.spec", &top_schema},
  {"sweep.settings", &settings_schema},
  {"sweep.grid", &grid_schema},
};

const FsSchemaEntry *fs_sweep_spec_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}

/* Builds a sweep spec from a parsed document: name (default "sweep"), kind (default train), the
 * common "set", then the points as a "list" of settings entries times the product of the "grid"
 * axes; the axes are listed in order of first appearance. NULL with FS_SWEEP_ERROR_SPEC at the
 * offending node for an unknown key or kind, an empty list, or more than FS_SWEEP_MAX_POINTS
 * points. */
static FsSweepSpec *spec_from_doc(FsYamlDoc *doc, const char *dir, GError **error)
{
  const FsYamlNode *root = fs_yaml_doc_root(doc);
  if (root == NULL) {
    fs_set_error_at(error, FS_SWEEP_ERROR, FS_SWEEP_ERROR_SPEC, fs_yaml_doc_name(doc), 1, 1,
                    "the sweep spec is empty (expected name, kind and grid or list)");
    return NULL;
  }
  Top top = {0};
  if (!fs_schema_read(&top_schema, root, &top, NULL, error))
    return NULL;
  g_autoptr(FsSweepSpec) s = g_new0(FsSweepSpec, 1);
  s->dir = g_strdup(dir ? dir : ".");
  s->set = settings_new();
  s->list = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  s->grid = g_array_new(FALSE, TRUE, sizeof(Axis));
  g_array_set_clear_func(s->grid, (GDestroyNotify)axis_clear);
  s->axes = g_ptr_array_new();
  s->n_grid = 1;
  const char *kind = top.kind;
  s->name = g_strdup(top.name);
  s->kind = fs_sweep_kind_find(kind);
  if (s->kind == NULL) {
    g_autoptr(GString) names = g_string_new(NULL);
    for (guint i = 0; fs_sweep_kinds[i] != NULL; i++)
      g_string_append_printf(names, "%s%s", i ? ", " : "", fs_sweep_kinds[i]->name);
    g_autofree char *m = g_strdup_printf("unknown point kind \"%%s\" (expected %s)", names->str);
    spec_error(error, fs_yaml_map_get(root, "kind"), m, kind);
    return NULL;
  }
  const FsYamlNode *n;
  if ((n = fs_yaml_map_get(root, "set")) != NULL && !read_settings(s, n, s->set, error))
    return NULL;
  if ((n = fs_yaml_map_get(root, "list")) != NULL) {
    if (n->n == 0) {
      spec_error(error, n, "the list has no entries%s", "");
      return NULL;
    }
    for (guint i = 0; i < n->n; i++) {
      GArray *e = settings_new();
      g_ptr_array_add(s->list, e);
      if (!read_settings(s, n->values[i], e, error))
        return NULL;
      for (guint k = 0; k < e->len; k++) {
        char *key = g_array_index(e, Setting, k).key;
        if (!has_axis(s, key))
          g_ptr_array_add(s->axes, key);
      }
    }
  }
  if ((n = fs_yaml_map_get(root, "grid")) != NULL && !read_grid(s, n, error))
    return NULL;
  for (guint i = 0; i < s->grid->len; i++) {
    char *key = g_array_index(s->grid, Axis, i).key;
    if (!has_axis(s, key))
      g_ptr_array_add(s->axes, key);
  }
  guint64 total = (guint64)MAX(s->list->len, 1u) * s->n_grid;
  if (total > fs_sweep_max_points()) {
    spec_error(error, root, "the spec expands past %s points (FABRICSIM_MAX_POINTS raises the "
               "limit)", max_points_text());
    return NULL;
  }
  s->n_points = (guint)total;
  return g_steal_pointer(&s);
}

FsSweepSpec *fs_sweep_spec_load_file(const char *name, GError **error)
{
  g_autofree char *path = fs_datadir_find(FS_DATA_WORKLOADS, name);
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_file(path, error);
  if (doc == NULL)
    return NULL;
  g_autofree char *dir = g_path_get_dirname(path);
  return spec_from_doc(doc, dir, error);
}

FsSweepSpec *fs_sweep_spec_load_string(const char *text, const char *name, const char *dir,
                                       GError **error)
{
  g_autoptr(FsYamlDoc) doc = fs_yaml_load_string(text, -1, name, error);
  if (doc == NULL)
    return NULL;
  return spec_from_doc(doc, dir, error);
}

const char *fs_sweep_spec_name(const FsSweepSpec *s) { return s->name; }
const FsSweepKind *fs_sweep_spec_kind(const FsSweepSpec *s) { return s->kind; }
guint fs_sweep_spec_n_points(const FsSweepSpec *s) { return s->n_points; }
guint fs_sweep_spec_n_axes(const FsSweepSpec *s) { return s->axes->len; }
const char *fs_sweep_spec_axis(const FsSweepSpec *s, guint i) { return g_ptr_array_index(s->axes, i); }

/* The grid value index of axis a at point (last axis fastest). */
static guint grid_digit(const FsSweepSpec *s, guint point, guint a)
{
  guint g = point % s->n_grid;
  for (guint i = s->grid->len; i-- > a + 1;)
    g /= g_array_index(s->grid, Axis, i).values->len;
  return g % g_array_index(s->grid, Axis, a).values->len;
}

static const char *settings_get(const GArray *a, const char *key)
{
  for (guint i = 0; i < a->len; i++)
    if (strcmp(g_array_index(a, Setting, i).key, key) == 0)
      return g_array_index(a, Setting, i).value;
  return NULL;
}

const char *fs_sweep_point_get(const FsSweepSpec *s, guint point, const char *key)
{
  g_return_val_if_fail(point < s->n_points, NULL);
  for (guint i = 0; i < s->grid->len; i++) {
    const Axis *a = &g_array_index(s->grid, Axis, i);
    if (strcmp(a->key, key) == 0)
      return g_ptr_array_index(a->values, grid_digit(s, point, i));
  }
  if (s->list->len > 0) {
    const char *v = settings_get(g_ptr_array_index(s->list, point / s->n_grid), key);
    if (v != NULL)
      return v;
  }
  return settings_get(s->set, key);
}

guint fs_sweep_point_settings(const FsSweepSpec *s, guint point, const char **keys,
                              const char **values, guint max)
{
  guint n = 0;
  for (guint i = 0; i < s->set->len && n < max; i++) {
    const char *k = g_array_index(s->set, Setting, i).key;
    if (has_axis(s, k))
      continue;
    keys[n] = k;
    values[n++] = g_array_index(s->set, Setting, i).value;
  }
  for (guint i = 0; i < s->axes->len && n < max; i++) {
    const char *k = g_ptr_array_index(s->axes, i);
    const char *v = fs_sweep_point_get(s, point, k);
    if (v == NULL)
      continue;
    keys[n] = k;
    values[n++] = v;
  }
  if (n < max) {
    keys[n] = NULL;
    values[n] = NULL;
  }
  return n;
}

char *fs_sweep_point_path(const FsSweepSpec *s, guint point, const char *key)
{
  const char *v = fs_sweep_point_get(s, point, key);
  if (v == NULL)
    return NULL;
  if (g_path_is_absolute(v))
    return g_strdup(v);
  char *p = g_build_filename(s->dir, v, NULL);
  if (g_file_test(p, G_FILE_TEST_EXISTS))
    return p;
  g_free(p);
  return g_strdup(v);
}
