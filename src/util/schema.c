/* schema.c — the walker that reads a YAML mapping against a field table,
 * and the Markdown tables the READMEs quote (see schema.h).
 *
 * Values go through the typed getters of util/yaml.h (which put the node's
 * file:line:col in front of the units parser's reason); this file adds the
 * table's range, its default and the storage at the field's offset.  The
 * range sentence ("from 1 to 64", "above 0 and at most 100 TB/s") is built
 * from the table's text by one function, for messages and READMEs alike.
 */
#include "util/schema.h"

#include <math.h>
#include <string.h>

#include "util/names.h"
#include "util/strutil.h"

/* One parsed value, in the field's storage type. */
typedef union {
  const char *s;
  gboolean b;
  guint u;
  double d;
  FsTime t;
  uint64_t z;
  int e;
} Value;

/* ---- units ----------------------------------------------------------------- */

/* The noun of a numeric field in messages and READMEs. */
static const char *noun(const FsSchemaField *f)
{
  switch (f->type) {
  case FS_SCHEMA_UINT: return "an integer";
  case FS_SCHEMA_DOUBLE: return "a number";
  case FS_SCHEMA_QUANTITY:
    switch (f->unit) {
    case FS_SCHEMA_BANDWIDTH: return "a bandwidth";
    case FS_SCHEMA_LANE_RATE: return "a lane rate";
    case FS_SCHEMA_TIME: return "a time";
    case FS_SCHEMA_SIZE: return "a size";
    case FS_SCHEMA_POWER: return "a power";
    case FS_SCHEMA_FLOPS: return "a FLOP rate";
    }
    break;
  default: break;
  }
  return "a value";
}

/* Parses text (a range bound or a default, no position) as field f's value;
 * *num receives it as a double for range checks. */
static gboolean parse_text(const FsSchemaField *f, const char *text, Value *v, double *num,
                           GError **error)
{
  int64_t i;
  gboolean ok = TRUE;
  switch (f->type) {
  case FS_SCHEMA_STRING:
    v->s = text;
    return TRUE;
  case FS_SCHEMA_BOOL:
    if (strcmp(text, "true") == 0)
      v->b = TRUE;
    else if (strcmp(text, "false") == 0)
      v->b = FALSE;
    else
      ok = FALSE;
    break;
  case FS_SCHEMA_UINT:
    ok = fs_parse_int64(text, &i, error) && i >= 0 && i <= G_MAXUINT;
    if (ok)
      *num = v->u = (guint)i;
    break;
  case FS_SCHEMA_DOUBLE:
    ok = fs_parse_number(text, &v->d, error);
    *num = v->d;
    break;
  case FS_SCHEMA_QUANTITY:
    switch (f->unit) {
    case FS_SCHEMA_BANDWIDTH: ok = fs_parse_bandwidth(text, &v->d, error); *num = v->d; break;
    case FS_SCHEMA_LANE_RATE: ok = fs_parse_lane_rate(text, &v->d, error); *num = v->d; break;
    case FS_SCHEMA_POWER: ok = fs_parse_power(text, &v->d, error); *num = v->d; break;
    case FS_SCHEMA_FLOPS: ok = fs_parse_flops(text, &v->d, error); *num = v->d; break;
    case FS_SCHEMA_TIME: ok = fs_parse_time(text, &v->t, error); *num = (double)v->t; break;
    case FS_SCHEMA_SIZE: ok = fs_parse_size(text, &v->z, error); *num = (double)v->z; break;
    }
    break;
  case FS_SCHEMA_ENUM: {
    guint k;
    ok = fs_names_index(f->names, G_MAXUINT, text, &k);
    if (ok)
      v->e = f->values ? f->values[k] : (int)k;
    break;
  }
  default:
    ok = FALSE;
    break;
  }
  return ok;
}

/* A bound of the table as a number: the text in the field's unit, or a
 * bare number in the unit's base ("0", which a bandwidth parser refuses as
 * a value).  A text that parses neither way is a bug in the table. */
static gboolean table_number(const FsSchemaField *f, const char *text, double *num)
{
  Value v;
  if (parse_text(f, text, &v, num, NULL) || fs_parse_number(text, num, NULL))
    return TRUE;
  g_critical("schema field \"%s\": \"%s\" does not parse as %s", f->key, text, noun(f));
  return FALSE;
}

/* "from 1 to 64", "above 0 and at most 100 TB/s", "of at least 1"; NULL
 * when the field has no range.  Caller frees. */
static char *range_text(const FsSchemaField *f)
{
  if (f->min && f->max)
    return f->min_open ? g_strdup_printf("above %s and at most %s", f->min, f->max)
                       : g_strdup_printf("from %s to %s", f->min, f->max);
  if (f->min)
    return f->min_open ? g_strdup_printf("above %s", f->min)
                       : g_strdup_printf("of at least %s", f->min);
  if (f->max)
    return g_strdup_printf("of at most %s", f->max);
  return NULL;
}

/* Checks num against the table's range; the message quotes the value as
 * written (text). */
static gboolean check_range(const FsSchemaField *f, const FsYamlNode *node, double num,
                            GError **error)
{
  double lo = -INFINITY, hi = INFINITY;
  if ((f->min && !table_number(f, f->min, &lo)) || (f->max && !table_number(f, f->max, &hi))) {
    fs_yaml_error(error, node, "the schema of \"%s\" has a bound that does not parse", f->key);
    return FALSE;
  }
  if (num >= lo && !(f->min_open && num == lo) && num <= hi)
    return TRUE;
  g_autofree char *range = range_text(f);
  if (f->type == FS_SCHEMA_QUANTITY)
    fs_yaml_error(error, node, "expected %s %s, got \"%s\"", noun(f), range, node->value);
  else
    fs_yaml_error(error, node, "expected %s %s, got %s", noun(f), range, node->value);
  return FALSE;
}

/* ---- one value ------------------------------------------------------------------ */

static gboolean read_enum(const FsSchemaField *f, const FsYamlNode *node, Value *v, GError **error)
{
  const char *s;
  if (!fs_yaml_get_string(node, &s, error))
    return FALSE;
  guint k;
  if (fs_names_index(f->names, G_MAXUINT, s, &k)) {
    v->e = f->values ? f->values[k] : (int)k;
    return TRUE;
  }
  const char *label = f->label ? f->label : f->key;
  const char *guess = fs_did_you_mean(s, f->names, -1);
  if (guess != NULL) {
    fs_yaml_error(error, node, "unknown %s \"%s\"; did you mean \"%s\"?", label, s, guess);
  } else {
    g_autofree char *list = g_strjoinv(", ", (char **)f->names);
    fs_yaml_error(error, node, "unknown %s \"%s\"; expected one of: %s", label, s, list);
  }
  return FALSE;
}

/* Reads node as f's type into *v (no storage, no nested schema). */
static gboolean read_node(const FsSchemaField *f, const FsYamlNode *node, Value *v, GError **error)
{
  double num = 0;
  int64_t i;
  switch (f->type) {
  case FS_SCHEMA_STRING:
    return fs_yaml_get_string(node, &v->s, error);
  case FS_SCHEMA_BOOL:
    return fs_yaml_get_bool(node, &v->b, error);
  case FS_SCHEMA_UINT: {
    double lo = 0, hi = G_MAXUINT;
    if ((f->min && !table_number(f, f->min, &lo)) || (f->max && !table_number(f, f->max, &hi)))
      return check_range(f, node, 0, error);
    if (!fs_yaml_get_int(node, (int64_t)lo + (f->min_open ? 1 : 0), (int64_t)hi, &i, error))
      return FALSE;
    v->u = (guint)i;
    return TRUE;
  }
  case FS_SCHEMA_DOUBLE:
    if (!fs_yaml_get_double(node, -G_MAXDOUBLE, G_MAXDOUBLE, &v->d, error))
      return FALSE;
    num = v->d;
    break;
  case FS_SCHEMA_QUANTITY: {
    gboolean ok = FALSE;
    switch (f->unit) {
    case FS_SCHEMA_BANDWIDTH: ok = fs_yaml_get_bandwidth(node, &v->d, error); num = v->d; break;
    case FS_SCHEMA_LANE_RATE: ok = fs_yaml_get_lane_rate(node, &v->d, error); num = v->d; break;
    case FS_SCHEMA_POWER: ok = fs_yaml_get_power(node, &v->d, error); num = v->d; break;
    case FS_SCHEMA_FLOPS: ok = fs_yaml_get_flops(node, &v->d, error); num = v->d; break;
    case FS_SCHEMA_TIME: ok = fs_yaml_get_time(node, &v->t, error); num = (double)v->t; break;
    case FS_SCHEMA_SIZE: ok = fs_yaml_get_size(node, &v->z, error); num = (double)v->z; break;
    }
    if (!ok)
      return FALSE;
    break;
  }
  case FS_SCHEMA_ENUM:
    return read_enum(f, node, v, error);
  case FS_SCHEMA_MAP:
    return fs_yaml_require_map(node, error);
  case FS_SCHEMA_LIST:
    return fs_yaml_require_seq(node, error);
  case FS_SCHEMA_ANY:
    return TRUE;
  }
  return check_range(f, node, num, error);
}

/* Stores v at out in f's storage type. */
static void store(const FsSchemaField *f, gpointer out, const Value *v, GStringChunk *strings)
{
  switch (f->type) {
  case FS_SCHEMA_STRING:
    *(const char **)out = strings ? g_string_chunk_insert_const(strings, v->s) : v->s;
    break;
  case FS_SCHEMA_BOOL: *(gboolean *)out = v->b; break;
  case FS_SCHEMA_UINT: *(guint *)out = v->u; break;
  case FS_SCHEMA_DOUBLE: *(double *)out = v->d; break;
  case FS_SCHEMA_QUANTITY:
    switch (f->unit) {
    case FS_SCHEMA_TIME: *(FsTime *)out = v->t; break;
    case FS_SCHEMA_SIZE: *(uint64_t *)out = v->z; break;
    default: *(double *)out = v->d; break;
    }
    break;
  case FS_SCHEMA_ENUM: *(int *)out = v->e; break;
  default: break; /* maps, lists and anything: the loader reads them */
  }
}

gboolean fs_schema_read_value(const FsSchemaField *field, const FsYamlNode *node, gpointer out,
                              GError **error)
{
  g_return_val_if_fail(field != NULL && node != NULL && out != NULL, FALSE);
  Value v;
  if (!read_node(field, node, &v, error))
    return FALSE;
  store(field, out, &v, NULL);
  return TRUE;
}

/* ---- mappings ---------------------------------------------------------------------- */

const FsSchemaField *fs_schema_field(const FsSchema *schema, const char *key)
{
  for (const FsSchema *s = schema; s != NULL; s = s->base)
    for (guint i = 0; i < s->n_fields; i++)
      if (strcmp(s->fields[i].key, key) == 0)
        return &s->fields[i];
  return NULL;
}

/* Refuses the first key of map that no field of schema (or its base) declares. */
static gboolean check_keys(const FsSchema *schema, const FsYamlNode *map, GError **error)
{
  g_autoptr(GPtrArray) keys = g_ptr_array_new();
  for (const FsSchema *s = schema; s != NULL; s = s->base)
    for (guint i = 0; i < s->n_fields; i++)
      g_ptr_array_add(keys, (gpointer)s->fields[i].key);
  g_ptr_array_add(keys, NULL);
  return fs_yaml_check_keys(map, (const char *const *)keys->pdata, schema->name, error);
}

static gboolean read_map(const FsSchema *schema, const FsYamlNode *map, gpointer record,
                         const FsSchemaRead *opts, GError **error);

/* Reads the fields of one table (not its base) from map into record. */
static gboolean read_fields(const FsSchema *s, const FsYamlNode *map, char *record,
                            const FsSchemaRead *opts, GError **error)
{
  for (guint i = 0; i < s->n_fields; i++) {
    const FsSchemaField *f = &s->fields[i];
    gpointer out = f->offset == FS_SCHEMA_NOWHERE || record == NULL ? NULL : record + f->offset;
    const FsYamlNode *node = fs_yaml_map_get(map, f->key);
    Value v;
    if (node == NULL) {
      if (f->required) {
        fs_yaml_error(error, map, "missing key \"%s\" in %s", f->key, s->name);
        return FALSE;
      }
      if (f->def != NULL && out != NULL) {
        double num;
        if (!parse_text(f, f->def, &v, &num, NULL)) {
          g_critical("schema field \"%s\": default \"%s\" does not parse", f->key, f->def);
          fs_yaml_error(error, map, "the schema of \"%s\" has a default that does not parse",
                        f->key);
          return FALSE;
        }
        store(f, out, &v, opts->strings);
      }
      continue;
    }
    if (!read_node(f, node, &v, error))
      return FALSE;
    if (f->type == FS_SCHEMA_MAP && f->sub != NULL) {
      FsSchemaRead sub = *opts;
      sub.skip_base = FALSE;
      if (!read_map(f->sub, node, record, &sub, error))
        return FALSE;
    }
    if (out != NULL)
      store(f, out, &v, opts->strings);
  }
  return TRUE;
}

/* fs_schema_read in FS_YAML_ERROR_SCHEMA. */
static gboolean read_map(const FsSchema *schema, const FsYamlNode *map, gpointer record,
                         const FsSchemaRead *opts, GError **error)
{
  if (!fs_yaml_require_map(map, error))
    return FALSE;
  if (!opts->allow_unknown && !check_keys(schema, map, error))
    return FALSE;
  /* Base tables first, outermost first: the order of the first error. */
  if (!opts->skip_base && schema->base != NULL) {
    FsSchemaRead base = *opts;
    base.allow_unknown = TRUE;
    if (!read_map(schema->base, map, record, &base, error))
      return FALSE;
  }
  return read_fields(schema, map, record, opts, error);
}

gboolean fs_schema_read(const FsSchema *schema, const FsYamlNode *map, gpointer record,
                        const FsSchemaRead *opts, GError **error)
{
  g_return_val_if_fail(schema != NULL && map != NULL, FALSE);
  static const FsSchemaRead plain = {0};
  if (opts == NULL)
    opts = &plain;
  GError *local = NULL;
  if (read_map(schema, map, record, opts, &local))
    return TRUE;
  if (opts->domain != 0) {
    local->domain = opts->domain;
    local->code = opts->code;
  }
  g_propagate_error(error, local);
  return FALSE;
}

gboolean fs_schema_check(const FsSchema *schema, GError **error)
{
  g_return_val_if_fail(schema != NULL, FALSE);
  for (const FsSchema *s = schema; s != NULL; s = s->base)
    for (guint i = 0; i < s->n_fields; i++) {
      const FsSchemaField *f = &s->fields[i];
      const char *bad = NULL;
      double num;
      Value v;
      if (f->type == FS_SCHEMA_ENUM && f->names == NULL)
        bad = "an enum without names";
      else if (f->min && !parse_text(f, f->min, &v, &num, NULL) &&
               !fs_parse_number(f->min, &num, NULL))
        bad = f->min;
      else if (f->max && !parse_text(f, f->max, &v, &num, NULL) &&
               !fs_parse_number(f->max, &num, NULL))
        bad = f->max;
      else if (f->def && f->type != FS_SCHEMA_STRING && !parse_text(f, f->def, &v, &num, NULL))
        bad = f->def;
      if (bad != NULL) {
        g_set_error(error, FS_YAML_ERROR, FS_YAML_ERROR_SCHEMA,
                    "schema %s, field \"%s\": \"%s\" does not parse as %s", s->name, f->key,
                    bad, noun(f));
        return FALSE;
      }
      if (f->type == FS_SCHEMA_MAP && f->sub != NULL && !fs_schema_check(f->sub, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- documentation ------------------------------------------------------------------ */

/* The "value" column of field f. */
static char *value_column(const FsSchemaField *f)
{
  if (f->value_doc != NULL)
    return g_strdup(f->value_doc);
  g_autofree char *range = range_text(f);
  const char *n = noun(f);
  /* "an integer" -> "integer" for the table. */
  const char *bare = g_str_has_prefix(n, "an ") ? n + 3 : g_str_has_prefix(n, "a ") ? n + 2 : n;
  switch (f->type) {
  case FS_SCHEMA_STRING: return g_strdup("text");
  case FS_SCHEMA_BOOL: return g_strdup("`true` or `false`");
  case FS_SCHEMA_MAP: return g_strdup("mapping");
  case FS_SCHEMA_LIST: return g_strdup("list");
  case FS_SCHEMA_ANY: return g_strdup("any");
  case FS_SCHEMA_ENUM: {
    GString *s = g_string_new("one of ");
    for (guint i = 0; f->names[i] != NULL; i++)
      g_string_append_printf(s, "%s`%s`", i ? ", " : "", f->names[i]);
    return g_string_free(s, FALSE);
  }
  default:
    return range ? g_strdup_printf("%s %s", bare, range) : g_strdup(bare);
  }
}

/* Appends text with '|' escaped for a Markdown cell. */
static void cell(GString *out, const char *text)
{
  g_string_append(out, " ");
  for (const char *p = text; *p; p++) {
    if (*p == '|')
      g_string_append_c(out, '\\');
    g_string_append_c(out, *p);
  }
  g_string_append(out, " |");
}

void fs_schema_doc_markdown(const FsSchema *schema, GString *out)
{
  g_return_if_fail(schema != NULL && out != NULL);
  g_string_append(out, "| key | value | required | default | meaning |\n");
  g_string_append(out, "|---|---|---|---|---|\n");
  for (guint i = 0; i < schema->n_fields; i++) {
    const FsSchemaField *f = &schema->fields[i];
    g_autofree char *key = g_strdup_printf("`%s`", f->key);
    g_autofree char *value = value_column(f);
    g_autofree char *def = f->def == NULL   ? g_strdup("")
                           : f->def[0] == '\0' ? g_strdup("`\"\"`")
                                               : g_strdup_printf("`%s`", f->def);
    g_string_append(out, "|");
    cell(out, key);
    cell(out, value);
    cell(out, f->required_doc ? f->required_doc : f->required ? "yes" : "no");
    cell(out, def);
    cell(out, f->doc ? f->doc : "");
    g_string_append(out, "\n");
  }
}
