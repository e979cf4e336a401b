/* yaml-get.c — access to a loaded YAML tree: the position-carrying error
 * helper, mapping access, key checks and the typed getters (see yaml.h).
 * Everything here reads the public FsYamlNode fields only; the getters hand
 * scalar text to the units parsers and put the node's file:line:col in
 * front of their messages.
 */
#include "util/yaml.h"

#include <string.h>

#include "util/error.h"
#include "util/names.h"
#include "util/strutil.h"

/* Errors and access ------------------------------------------------------- */

void fs_yaml_error(GError **error, const FsYamlNode *node, const char *format, ...)
{
  if (error == NULL)
    return;
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  /* Values quoted in messages may hold newlines (block scalars): keep one line. */
  g_autofree char *clean = fs_escape_controls(msg);
  if (node != NULL && node->path != NULL) {
    /* JSON: the value's path after the position, as json-pos writes it. */
    g_autofree char *at = g_strdup_printf("%s: %s", node->path, clean);
    g_free(clean);
    clean = g_steal_pointer(&at);
  }
  if (node == NULL)
    fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_SCHEMA, NULL, 0, 0, "%s", clean);
  else
    fs_set_error_at(error, FS_YAML_ERROR, FS_YAML_ERROR_SCHEMA, node->file, node->line, node->col,
                    "%s", clean);
}

/* The JSON type of a node built from JSON. */
static const char *json_kind_name(const FsYamlNode *node)
{
  switch (node->kind) {
  case FS_YAML_MAP:
    return "an object";
  case FS_YAML_SEQ:
    return "an array";
  case FS_YAML_SCALAR:
    break;
  }
  if (node->is_null)
    return "null";
  if (node->quoted)
    return "a string";
  return strcmp(node->value, "true") == 0 || strcmp(node->value, "false") == 0 ? "a boolean"
                                                                                 : "a number";
}

const char *fs_yaml_kind_name(const FsYamlNode *node)
{
  if (node == NULL)
    return "nothing";
  if (node->path != NULL)
    return json_kind_name(node);
  switch (node->kind) {
  case FS_YAML_MAP:
    return "a mapping";
  case FS_YAML_SEQ:
    return "a list";
  case FS_YAML_SCALAR:
    return node->is_null ? "an empty value" : "a string";
  }
  return "an unknown node";
}

/* "a mapping", "an empty value" or the scalar in quotes, for "got ...";
 * JSON names the type ("a string", "an array"). */
static char *describe(const FsYamlNode *node)
{
  if (node != NULL && node->kind == FS_YAML_SCALAR && !node->is_null && node->path == NULL)
    return g_strdup_printf("\"%s\"", node->value);
  return g_strdup(fs_yaml_kind_name(node));
}

FsYamlNode *fs_yaml_map_get(const FsYamlNode *map, const char *key)
{
  g_return_val_if_fail(key != NULL, NULL);
  if (map == NULL || map->kind != FS_YAML_MAP)
    return NULL;
  for (guint i = 0; i < map->n; i++)
    if (strcmp(map->keys[i]->value, key) == 0)
      return map->values[i];
  return NULL;
}

gboolean fs_yaml_require_map(const FsYamlNode *node, GError **error)
{
  g_return_val_if_fail(node != NULL, FALSE);
  if (node->kind == FS_YAML_MAP)
    return TRUE;
  g_autofree char *got = describe(node);
  fs_yaml_error(error, node, "expected %s, got %s", node->path ? "an object" : "a mapping", got);
  return FALSE;
}

gboolean fs_yaml_require_seq(const FsYamlNode *node, GError **error)
{
  g_return_val_if_fail(node != NULL, FALSE);
  if (node->kind == FS_YAML_SEQ)
    return TRUE;
  g_autofree char *got = describe(node);
  fs_yaml_error(error, node, "expected %s, got %s", node->path ? "an array" : "a list", got);
  return FALSE;
}

gboolean fs_yaml_check_keys(const FsYamlNode *map, const char *const *allowed, const char *what,
                            GError **error)
{
  g_return_val_if_fail(map != NULL && allowed != NULL, FALSE);
  if (!fs_yaml_require_map(map, error))
    return FALSE;
  for (guint i = 0; i < map->n; i++) {
    const FsYamlNode *key = map->keys[i];
    if (fs_names_index(allowed, G_MAXUINT, key->value, NULL))
      continue;
    const char *guess = fs_did_you_mean(key->value, allowed, -1);
    if (guess != NULL) {
      fs_yaml_error(error, key, "unknown key \"%s\" in %s; did you mean \"%s\"?", key->value, what, guess);
    } else {
      g_autofree char *list = g_strjoinv(", ", (char **)allowed);
      fs_yaml_error(error, key, "unknown key \"%s\" in %s; known keys: %s", key->value, what, list);
    }
    return FALSE;
  }
  return TRUE;
}

FsYamlNode *fs_yaml_require_key(const FsYamlNode *map, const char *key, const char *what,
                                GError **error)
{
  g_return_val_if_fail(map != NULL && key != NULL, NULL);
  if (!fs_yaml_require_map(map, error))
    return NULL;
  FsYamlNode *v = fs_yaml_map_get(map, key);
  if (v == NULL)
    fs_yaml_error(error, map, "missing key \"%s\" in %s", key, what);
  return v;
}

/* Typed getters ------------------------------------------------------------ */

/* What a getter reads from a JSON scalar: any, a number or a string. */
typedef enum { WANT_ANY, WANT_NUMBER, WANT_STRING } Want;

/* The text of a non-null scalar, or NULL with "expected <expect>, got ...".
 * A JSON scalar must also be of the JSON type want says. */
static const char *scalar_text(const FsYamlNode *node, const char *expect, Want want,
                               GError **error)
{
  g_return_val_if_fail(node != NULL, NULL);
  const char *json = node->path != NULL ? json_kind_name(node) : NULL;
  gboolean typed = json == NULL || want == WANT_ANY ||
                   strcmp(json, want == WANT_STRING ? "a string" : "a number") == 0;
  if (node->kind == FS_YAML_SCALAR && !node->is_null && typed)
    return node->value;
  g_autofree char *got = describe(node);
  fs_yaml_error(error, node, "expected %s, got %s", expect, got);
  return NULL;
}

/* Re-raises a units parser error at node's position, in FS_YAML_ERROR_SCHEMA. */
static gboolean units_error(const FsYamlNode *node, GError *local, GError **error)
{
  fs_yaml_error(error, node, "%s", local->message);
  g_error_free(local);
  return FALSE;
}

gboolean fs_yaml_get_string(const FsYamlNode *node, const char **out, GError **error)
{
  g_return_val_if_fail(out != NULL, FALSE);
  const char *s = scalar_text(node, "a string", WANT_STRING, error);
  if (s == NULL)
    return FALSE;
  *out = s;
  return TRUE;
}

gboolean fs_yaml_get_bool(const FsYamlNode *node, gboolean *out, GError **error)
{
  g_return_val_if_fail(out != NULL, FALSE);
  static const char *const yes[] = {"true", "yes", "on"};
  static const char *const no[] = {"false", "no", "off"};
  const char *s = scalar_text(node, "true or false", WANT_ANY, error);
  if (s == NULL)
    return FALSE;
  if (node->path != NULL) {
    if (strcmp(json_kind_name(node), "a boolean") == 0) {
      *out = strcmp(s, "true") == 0;
      return TRUE;
    }
    fs_yaml_error(error, node, "expected true or false, got %s", json_kind_name(node));
  } else if (!node->quoted) {
    if (fs_names_index_nocase(yes, G_N_ELEMENTS(yes), s, NULL)) {
      *out = TRUE;
      return TRUE;
    }
    if (fs_names_index_nocase(no, G_N_ELEMENTS(no), s, NULL)) {
      *out = FALSE;
      return TRUE;
    }
    fs_yaml_error(error, node, "expected true or false, got \"%s\"", s);
  } else {
    fs_yaml_error(error, node, "expected true or false, got the quoted string \"%s\" (write it without quotes)", s);
  }
  return FALSE;
}

gboolean fs_yaml_get_int(const FsYamlNode *node, int64_t min, int64_t max, int64_t *out,
                         GError **error)
{
  g_return_val_if_fail(out != NULL && min <= max, FALSE);
  const char *s = scalar_text(node, "an integer", WANT_NUMBER, error);
  if (s == NULL)
    return FALSE;
  GError *local = NULL;
  int64_t v;
  if (!fs_parse_int64(s, &v, &local))
    return units_error(node, local, error);
  if (v < min || v > max) {
    if (max == INT64_MAX)
      fs_yaml_error(error, node, "expected an integer of at least %" G_GINT64_FORMAT ", got %s", min, s);
    else if (min == INT64_MIN)
      fs_yaml_error(error, node, "expected an integer of at most %" G_GINT64_FORMAT ", got %s", max, s);
    else
      fs_yaml_error(error, node,
                    "expected an integer from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT ", got %s",
                    min, max, s);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

/* A double in C syntax without trailing zeros noise ("0.5", "1e+20"). */
static char *fmt_double(double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.10g", v));
}

gboolean fs_yaml_get_double(const FsYamlNode *node, double min, double max, double *out,
                            GError **error)
{
  g_return_val_if_fail(out != NULL && min <= max, FALSE);
  const char *s = scalar_text(node, "a number", WANT_NUMBER, error);
  if (s == NULL)
    return FALSE;
  GError *local = NULL;
  double v;
  if (!fs_parse_number(s, &v, &local))
    return units_error(node, local, error);
  if (v < min || v > max) {
    g_autofree char *lo = fmt_double(min);
    g_autofree char *hi = fmt_double(max);
    fs_yaml_error(error, node, "expected a number from %s to %s, got %s", lo, hi, s);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

/* The getters for quantities differ only in the parser and the example. */
#define QUANTITY_GETTER(fn, type, parser, expect)                                        \
  gboolean fn(const FsYamlNode *node, type *out, GError **error)                       \
  {                                                                                    \
    g_return_val_if_fail(out != NULL, FALSE);                                          \
    const char *s = scalar_text(node, expect, WANT_ANY, error);                                  \
    if (s == NULL)                                                                     \
      return FALSE;                                                                    \
    GError *local = NULL;                                                              \
    type v;                                                                            \
    if (!parser(s, &v, &local))                                                        \
      return units_error(node, local, error);                                          \
    *out = v;                                                                          \
    return TRUE;                                                                       \
  }

QUANTITY_GETTER(fs_yaml_get_bandwidth, double, fs_parse_bandwidth, "a bandwidth like \"50 GB/s\"")
QUANTITY_GETTER(fs_yaml_get_lane_rate, double, fs_parse_lane_rate, "a lane rate like \"16 GT/s\"")
QUANTITY_GETTER(fs_yaml_get_time, FsTime, fs_parse_time, "a time like \"1.5 us\"")
QUANTITY_GETTER(fs_yaml_get_size, uint64_t, fs_parse_size, "a size like \"16 GiB\"")
QUANTITY_GETTER(fs_yaml_get_power, double, fs_parse_power, "a power like \"700 W\"")
QUANTITY_GETTER(fs_yaml_get_flops, double, fs_parse_flops, "a FLOP rate like \"989 TFLOP/s\"")

/* Optional fields ----------------------------------------------------------- */

gboolean fs_yaml_opt_string(const FsYamlNode *map, const char *key, const char **out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_string(v, out, error);
}

gboolean fs_yaml_opt_bool(const FsYamlNode *map, const char *key, gboolean *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_bool(v, out, error);
}

gboolean fs_yaml_opt_int(const FsYamlNode *map, const char *key, int64_t min, int64_t max,
                         int64_t *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_int(v, min, max, out, error);
}

gboolean fs_yaml_opt_double(const FsYamlNode *map, const char *key, double min, double max,
                            double *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_double(v, min, max, out, error);
}

gboolean fs_yaml_opt_bandwidth(const FsYamlNode *map, const char *key, double *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_bandwidth(v, out, error);
}

gboolean fs_yaml_opt_time(const FsYamlNode *map, const char *key, FsTime *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_time(v, out, error);
}

gboolean fs_yaml_opt_size(const FsYamlNode *map, const char *key, uint64_t *out, GError **error)
{
  const FsYamlNode *v = fs_yaml_map_get(map, key);
  return v == NULL || fs_yaml_get_size(v, out, error);
}
