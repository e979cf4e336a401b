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
  guint64 bits;
} Value;

/* ---- units ----------------------------------------------------------------- */

/* The noun of a numeric field in messages and READMEs. */
static const char *noun(const FsSchemaField *f)
{
  switch (f->type) {
  case FS_SCHEMA_UINT: return "an integer";
  case FS_SCHEMA_DOUBLE: return "a number";
  case FS_SCHEMA_SET: return "a list of names";
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

/* noun(f) with the unit of a bare number: "a bandwidth in GB/s".  Caller frees. */
static char *noun_in_unit(const FsSchemaField *f)
{
  return f->number_unit ? g_strdup_printf("%s in %s", noun(f), f->number_unit) : g_strdup(noun(f));
}

/* The values of a row of f: "numbers", "bandwidths in GB/s".  Caller frees. */
static char *plural_in_unit(const FsSchemaField *f)
{
  const char *n = f->type == FS_SCHEMA_STRING ? "a string"
                  : f->type == FS_SCHEMA_BOOL ? "a boolean"
                  : f->type == FS_SCHEMA_ENUM ? "a name"
                                              : noun(f);
  n += g_str_has_prefix(n, "an ") ? 3 : 2;
  return f->number_unit ? g_strdup_printf("%ss in %s", n, f->number_unit) : g_strdup_printf("%ss", n);
}

/* The bytes one value of f takes in the record (0: nothing is stored). */
static size_t value_size(const FsSchemaField *f)
{
  switch (f->type) {
  case FS_SCHEMA_STRING:
  case FS_SCHEMA_SCALAR: return sizeof(const char *);
  case FS_SCHEMA_BOOL: return sizeof(gboolean);
  case FS_SCHEMA_UINT: return sizeof(guint);
  case FS_SCHEMA_DOUBLE: return sizeof(double);
  case FS_SCHEMA_QUANTITY:
    return f->unit == FS_SCHEMA_TIME ? sizeof(FsTime)
           : f->unit == FS_SCHEMA_SIZE ? sizeof(uint64_t)
                                       : sizeof(double);
  case FS_SCHEMA_ENUM: return sizeof(int);
  case FS_SCHEMA_SET: return sizeof(guint64);
  default: return 0;
  }
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
  case FS_SCHEMA_SCALAR:
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
  if (f->number_unit != NULL ? fs_parse_number(text, num, NULL)
                             : parse_text(f, text, &v, num, NULL) || fs_parse_number(text, num, NULL))
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
  g_autofree char *what = noun_in_unit(f);
  if (f->type == FS_SCHEMA_QUANTITY && f->number_unit == NULL)
    fs_yaml_error(error, node, "expected %s %s, got \"%s\"", what, range, node->value);
  else
    fs_yaml_error(error, node, "expected %s %s, got %s", what, range, node->value);
  return FALSE;
}

/* The size of one number_unit in f's storage unit ("1 GB/s": 1e9 bytes/s). */
static gboolean unit_factor(const FsSchemaField *f, const FsYamlNode *node, double *factor,
                            GError **error)
{
  g_autofree char *one = g_strconcat("1 ", f->number_unit, NULL);
  Value v;
  if (parse_text(f, one, &v, factor, NULL))
    return TRUE;
  g_critical("schema field \"%s\": unit \"%s\" does not parse as %s", f->key, f->number_unit,
             noun(f));
  fs_yaml_error(error, node, "the schema of \"%s\" has a unit that does not parse", f->key);
  return FALSE;
}

/* A quantity written as a bare number in f->number_unit: checked against
 * the range as written, then converted to the storage unit. */
static gboolean read_bare_quantity(const FsSchemaField *f, const FsYamlNode *node, Value *v,
                                   GError **error)
{
  double d, factor;
  if (!fs_yaml_get_double(node, -G_MAXDOUBLE, G_MAXDOUBLE, &d, error) ||
      !check_range(f, node, d, error) || !unit_factor(f, node, &factor, error))
    return FALSE;
  switch (f->unit) {
  case FS_SCHEMA_TIME:
    v->t = (FsTime)llround(d * factor);
    break;
  case FS_SCHEMA_SIZE:
    if (d != floor(d) || !(d * factor < 18446744073709551616.0) || d < 0) {
      g_autofree char *what = noun_in_unit(f);
      fs_yaml_error(error, node, "expected %s (a whole number of bytes), got %s", what,
                    node->value);
      return FALSE;
    }
    v->z = (uint64_t)(d * factor);
    break;
  default:
    v->d = d * factor;
    break;
  }
  return TRUE;
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
    if (!fs_yaml_get_string(node, &v->s, error))
      return FALSE;
    if (f->nonempty && v->s[0] == '\0') {
      fs_yaml_error(error, node, "expected a non-empty %s", f->label ? f->label : f->key);
      return FALSE;
    }
    if (f->valid != NULL && !f->valid(v->s)) {
      fs_yaml_error(error, node, "\"%s\" in \"%s\" is not of the form %s", v->s, f->key,
                    f->form ? f->form : "its field declares");
      return FALSE;
    }
    return TRUE;
  case FS_SCHEMA_BOOL:
    return fs_yaml_get_bool(node, &v->b, error);
  case FS_SCHEMA_SCALAR:
    if (node->kind != FS_YAML_SCALAR || node->is_null) {
      fs_yaml_error(error, node, "expected a value (a number or a string), got %s",
                    fs_yaml_kind_name(node));
      return FALSE;
    }
    v->s = node->value;
    return TRUE;
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
    if (f->number_unit != NULL)
      return read_bare_quantity(f, node, v, error);
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
    if (!fs_yaml_require_seq(node, error))
      return FALSE;
    if (f->item == NULL)
      return TRUE;
    if (f->nonempty && node->n == 0) {
      fs_yaml_error(error, node, "\"%s\" is empty; expected a list like [%s]", f->key,
                    f->item->form ? f->item->form : "...");
      return FALSE;
    }
    for (guint k = 0; k < node->n; k++) {
      Value item;
      if (!read_node(f->item, node->values[k], &item, error))
        return FALSE;
    }
    return TRUE;
  case FS_SCHEMA_ANY:
    return TRUE;
  case FS_SCHEMA_SET:
    if (!fs_yaml_require_seq(node, error))
      return FALSE;
    v->bits = 0;
    for (guint i = 0; i < node->n; i++) {
      Value item;
      if (!read_enum(f, node->values[i], &item, error))
        return FALSE;
      if (item.e < 0 || item.e > 63) {
        g_critical("schema field \"%s\": value %d of a set is not a bit of 64", f->key, item.e);
        fs_yaml_error(error, node, "the schema of \"%s\" has a value out of a set's bits", f->key);
        return FALSE;
      }
      v->bits |= (guint64)1 << item.e;
    }
    return TRUE;
  }
  return check_range(f, node, num, error);
}

/* Stores v at out in f's storage type. */
static void store(const FsSchemaField *f, gpointer out, const Value *v, GStringChunk *strings)
{
  switch (f->type) {
  case FS_SCHEMA_STRING:
  case FS_SCHEMA_SCALAR:
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
  case FS_SCHEMA_SET: *(guint64 *)out = v->bits; break;
  default: break; /* maps, lists and anything: the loader reads them */
  }
}

/* Reads node as f (a row of f->count values when count > 0) and stores it
 * at out (NULL: checked only). */
static gboolean read_value(const FsSchemaField *f, const FsYamlNode *node, gpointer out,
                           GStringChunk *strings, GError **error)
{
  Value v;
  if (f->count == 0) {
    if (!read_node(f, node, &v, error))
      return FALSE;
    if (out != NULL)
      store(f, out, &v, strings);
    return TRUE;
  }
  if (!fs_yaml_require_seq(node, error))
    return FALSE;
  if (node->n != f->count) {
    g_autofree char *what = plural_in_unit(f);
    fs_yaml_error(error, node, "expected a list of %u %s, got %u", f->count, what, node->n);
    return FALSE;
  }
  for (guint i = 0; i < f->count; i++) {
    if (!read_node(f, node->values[i], &v, error))
      return FALSE;
    if (out != NULL)
      store(f, (char *)out + i * value_size(f), &v, strings);
  }
  return TRUE;
}

gboolean fs_schema_read_value(const FsSchemaField *field, const FsYamlNode *node, gpointer out,
                              GError **error)
{
  g_return_val_if_fail(field != NULL && node != NULL && out != NULL, FALSE);
  return read_value(field, node, out, NULL, error);
}

/* ---- mappings ---------------------------------------------------------------------- */

const FsSchemaField *fs_schema_field(const FsSchema *schema, const char *key)
{
  for (const FsSchema *s = schema; s != NULL; s = s->base)
    for (guint i = 0; i < s->n_fields; i++)
      if (!s->fields[i].any_key && strcmp(s->fields[i].key, key) == 0)
        return &s->fields[i];
  return NULL;
}

/* Whether schema (or its base) has a field for open keys. */
static gboolean has_any_key(const FsSchema *schema)
{
  for (const FsSchema *s = schema; s != NULL; s = s->base)
    for (guint i = 0; i < s->n_fields; i++)
      if (s->fields[i].any_key)
        return TRUE;
  return FALSE;
}

/* Refuses the first key of map that no field of schema (or its base) declares. */
static gboolean check_keys(const FsSchema *schema, const FsYamlNode *map, GError **error)
{
  if (has_any_key(schema))
    return TRUE;
  g_autoptr(GPtrArray) keys = g_ptr_array_new();
  for (const FsSchema *s = schema; s != NULL; s = s->base)
    for (guint i = 0; i < s->n_fields; i++)
      g_ptr_array_add(keys, (gpointer)s->fields[i].key);
  g_ptr_array_add(keys, NULL);
  return fs_yaml_check_keys(map, (const char *const *)keys->pdata, schema->name, error);
}

/* Reads the keys of map that no field of top declares as the any_key
 * field f, handing each to opts->any_key. */
static gboolean read_open_keys(const FsSchema *top, const FsSchemaField *f, const FsSchema *s,
                               const FsYamlNode *map, const FsSchemaRead *opts, GError **error)
{
  guint found = 0;
  for (guint i = 0; i < map->n; i++) {
    if (fs_schema_field(top, map->keys[i]->value) != NULL)
      continue;
    found++;
    Value v;
    gboolean scalar = value_size(f) > 0;
    if (!(scalar ? read_node(f, map->values[i], &v, error)
                 : read_value(f, map->values[i], NULL, NULL, error)))
      return FALSE;
    if (opts->any_key != NULL &&
        !opts->any_key(f, map->keys[i], map->values[i], scalar ? (gconstpointer)&v : NULL,
                       opts->data, error))
      return FALSE;
  }
  if (found == 0 && f->required) {
    fs_yaml_error(error, map, "expected at least one %s in %s", f->label ? f->label : f->key,
                  s->name);
    return FALSE;
  }
  return TRUE;
}

static gboolean read_map(const FsSchema *schema, const FsYamlNode *map, gpointer record,
                         const FsSchemaRead *opts, GError **error);

/* Reads the fields of one table s (not its base) of schema top from map
 * into record. */
static gboolean read_fields(const FsSchema *top, const FsSchema *s, const FsYamlNode *map,
                            char *record, const FsSchemaRead *opts, GError **error)
{
  for (guint i = 0; i < s->n_fields; i++) {
    const FsSchemaField *f = &s->fields[i];
    gpointer out = f->offset == FS_SCHEMA_NOWHERE || record == NULL ? NULL : record + f->offset;
    if (f->any_key) {
      if (!read_open_keys(top, f, s, map, opts, error))
        return FALSE;
      continue;
    }
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
        for (guint k = 0; k < MAX(f->count, 1u); k++)
          store(f, (char *)out + k * value_size(f), &v, opts->strings);
      }
      continue;
    }
    if (!read_value(f, node, f->type == FS_SCHEMA_MAP ? NULL : out, opts->strings, error))
      return FALSE;
    if (f->type == FS_SCHEMA_MAP && f->sub != NULL) {
      /* A nested record at the field's offset, or the same record. */
      FsSchemaRead sub = *opts;
      sub.skip_base = FALSE;
      if (!read_map(f->sub, node, out != NULL ? out : record, &sub, error))
        return FALSE;
    }
    if (opts->seen != NULL && !opts->seen(f, node, opts->data, error))
      return FALSE;
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
  return read_fields(schema, schema, map, record, opts, error);
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

/* Checks a schema table itself (schema.h): every bound and default of
 * every field, base tables included, parses as its field's value. */
gboolean fs_schema_check(const FsSchema *schema, GError **error)
{
  g_return_val_if_fail(schema != NULL, FALSE);
  for (const FsSchema *s = schema; s != NULL; s = s->base)
    for (guint i = 0; i < s->n_fields; i++) {
      const FsSchemaField *f = &s->fields[i];
      const char *bad = NULL;
      double num;
      Value v;
      g_autofree char *one = f->number_unit ? g_strconcat("1 ", f->number_unit, NULL) : NULL;
      if ((f->type == FS_SCHEMA_ENUM || f->type == FS_SCHEMA_SET) && f->names == NULL)
        bad = "an enum without names";
      else if (f->count > 0 && (value_size(f) == 0 || f->type == FS_SCHEMA_SET || f->any_key))
        bad = "a row of values that are not scalars, or of open keys";
      else if (f->any_key && f->offset != FS_SCHEMA_NOWHERE)
        bad = "open keys with an offset";
      else if (f->number_unit != NULL && f->type == FS_SCHEMA_QUANTITY &&
               !parse_text(f, one, &v, &num, NULL))
        bad = one;
      else if (f->number_unit != NULL &&
               ((f->min && !fs_parse_number(f->min, &num, NULL)) ||
                (f->max && !fs_parse_number(f->max, &num, NULL))))
        bad = f->min && !fs_parse_number(f->min, &num, NULL) ? f->min : f->max;
      else if (f->number_unit == NULL && f->min && !parse_text(f, f->min, &v, &num, NULL) &&
               !fs_parse_number(f->min, &num, NULL))
        bad = f->min;
      else if (f->number_unit == NULL && f->max && !parse_text(f, f->max, &v, &num, NULL) &&
               !fs_parse_number(f->max, &num, NULL))
        bad = f->max;
      else if (f->def && f->type != FS_SCHEMA_STRING && f->type != FS_SCHEMA_SCALAR &&
               !parse_text(f, f->def, &v, &num, NULL))
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
  g_autofree char *n = noun_in_unit(f);
  /* "an integer" -> "integer" for the table. */
  const char *bare = g_str_has_prefix(n, "an ") ? n + 3 : g_str_has_prefix(n, "a ") ? n + 2 : n;
  switch (f->type) {
  case FS_SCHEMA_STRING: return g_strdup("text");
  case FS_SCHEMA_SCALAR: return g_strdup("number or text");
  case FS_SCHEMA_BOOL: return g_strdup("`true` or `false`");
  case FS_SCHEMA_MAP: return g_strdup("mapping");
  case FS_SCHEMA_LIST: return g_strdup("list");
  case FS_SCHEMA_ANY: return g_strdup("any");
  case FS_SCHEMA_ENUM:
  case FS_SCHEMA_SET: {
    GString *s = g_string_new(f->type == FS_SCHEMA_SET ? "list of names from " : "one of ");
    for (guint i = 0; f->names[i] != NULL; i++)
      g_string_append_printf(s, "%s`%s`", i ? ", " : "", f->names[i]);
    return g_string_free(s, FALSE);
  }
  default:
    return range ? g_strdup_printf("%s %s", bare, range) : g_strdup(bare);
  }
}

/* The "value" column: one value, or a row of f->count of them ("list of 3
 * numbers from 0 to 1e12"). */
static char *value_cell(const FsSchemaField *f)
{
  g_autofree char *one = value_column(f);
  if (f->count == 0 || f->value_doc != NULL)
    return g_steal_pointer(&one);
  g_autofree char *range = range_text(f);
  g_autofree char *many = plural_in_unit(f);
  if (f->type == FS_SCHEMA_ENUM)
    return g_strdup_printf("list of %u names, each %s", f->count, one);
  return range ? g_strdup_printf("list of %u %s %s", f->count, many, range)
               : g_strdup_printf("list of %u %s", f->count, many);
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
    /* Open keys: the placeholder in italics ("*architecture*"). */
    g_autofree char *key = g_strdup_printf(f->any_key ? "*%s*" : "`%s`", f->key);
    g_autofree char *value = value_cell(f);
    g_autofree char *def = f->def == NULL   ? g_strdup("")
                           : f->def[0] == '\0' ? g_strdup("`\"\"`")
                                               : g_strdup_printf("`%s`", f->def);
    g_string_append(out, "|");
    cell(out, key);
    cell(out, value);
    cell(out, f->required_doc ? f->required_doc
              : f->any_key   ? (f->required ? "at least one" : "no")
              : f->required  ? "yes"
                             : "no");
    cell(out, def);
    g_autoptr(GString) doc = g_string_new(f->doc ? f->doc : "");
    for (guint k = 0; f->aliases && f->aliases[k]; k++)
      g_string_append_printf(doc, "%s`%s`", k == 0 ? (doc->len ? "; option " : "option ") : ", ",
                             f->aliases[k]);
    cell(out, doc->str);
    g_string_append(out, "\n");
  }
}
