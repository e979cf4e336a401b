/* yaml.h — a YAML document tree over libyaml that remembers where every
 * node came from, with typed getters whose errors name file:line:col.
 *
 * Loading builds the whole tree (FsYamlDoc owns every node and string;
 * nodes are borrowed from it and live as long as the document).  Aliases
 * are resolved to the anchored node (a node may therefore be reached twice;
 * documents are a DAG, never a cycle).  Rejected at load time, each with
 * file:line:col and a sentence: syntax errors, duplicate keys in a mapping,
 * non-scalar keys, undefined aliases, nesting deeper than FS_YAML_MAX_DEPTH,
 * more than one document in a file, and alias expansion beyond
 * FS_YAML_MAX_NODES nodes ("billion laughs").  An empty file is an empty
 * document (root NULL); callers decide whether that is an error.
 *
 * Also at load time: input must be UTF-8 (invalid bytes, control
 * characters and NUL are syntax errors with their position; a file over
 * 256 MiB is FS_YAML_ERROR_LIMIT).  The YAML 1.1 merge key is supported:
 * `<<: *base` (or `<<: [*a, *b]`, first wins) adds the entries of the
 * merged mappings whose keys the mapping does not spell out itself; they
 * follow the explicit keys in keys[]/values[] and keep their own positions.
 * A quoted "<<" is an ordinary key.  Tags are ignored except `!!str`, which
 * makes a scalar quoted.
 *
 * Lines and columns are 1-based, as editors show them; columns count
 * characters, not bytes.  Messages are one line.
 * All errors are in FS_YAML_ERROR.
 *
 * Cost: loading is linear in the text plus the node count; a mapping's
 * duplicate-key check is a scan up to 16 keys and a hash table beyond.
 * fs_yaml_map_get scans the mapping (linear in its size).
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "util/units.h"

G_BEGIN_DECLS

#define FS_YAML_MAX_DEPTH 64
#define FS_YAML_DEPTH_CEILING 4096
#define FS_YAML_MAX_NODES 1000000

#define FS_YAML_ERROR (fs_yaml_error_quark())
GQuark fs_yaml_error_quark(void);

typedef enum {
  FS_YAML_ERROR_SYNTAX,  /* libyaml refused the text */
  FS_YAML_ERROR_LIMIT,   /* depth or node-count guard */
  FS_YAML_ERROR_SCHEMA,  /* wrong type, missing or unknown key, bad value */
  FS_YAML_ERROR_IO,      /* the file could not be read */
} FsYamlError;

typedef enum {
  FS_YAML_SCALAR,
  FS_YAML_MAP,
  FS_YAML_SEQ,
} FsYamlKind;

typedef struct FsYamlNode FsYamlNode;
typedef struct FsYamlDoc FsYamlDoc;

struct FsYamlNode {
  FsYamlKind kind;
  const char *file;   /* borrowed from the document */
  int line, col;      /* 1-based position of the node's first character */
  /* FS_YAML_SCALAR */
  const char *value;  /* NUL-terminated text (a YAML null reads as "" with is_null) */
  gboolean quoted;    /* written in quotes, as a block scalar (| or >) or tagged
                       * !!str: never a bool or null (numbers and units still
                       * parse from quoted text) */
  gboolean is_null;   /* "~", "null" or empty, unquoted */
  /* FS_YAML_MAP: keys[i] (scalar) maps to values[i], in document order.
   * FS_YAML_SEQ: values[i], keys NULL. */
  guint n;
  FsYamlNode **keys;
  FsYamlNode **values;
  /* A node built from JSON (fs_yaml_doc_from_json): its JSON path
   * ("$.summary.launch"), which messages quote after the position; NULL
   * for YAML.  JSON scalars keep their type: a string is quoted, a number
   * is its literal as written, a boolean "true"/"false" and null is_null;
   * the getters refuse a string where a number is expected and the
   * reverse, and name kinds as JSON does ("an object", "an array"). */
  const char *path;
};

/* Loads a file; name used in messages is the path as given. */
FsYamlDoc *fs_yaml_load_file(const char *path, GError **error);
/* Loads text of length len (-1: NUL-terminated); name is used in messages. */
FsYamlDoc *fs_yaml_load_string(const char *text, gssize len, const char *name,
                               GError **error);
void fs_yaml_doc_free(FsYamlDoc *doc);

typedef struct FsJsonDoc FsJsonDoc; /* util/json-pos.h */

/* The JSON front end: a tree of FsYamlNode built from a parsed JSON
 * document, every node at the position where its value starts (a member's
 * key node at the key) and carrying its JSON path, so that the same typed
 * getters and schema walks (util/schema.h) read JSON with errors of the
 * form "file:line:col: $.path: sentence".  Members keep the file's order.
 * The tree is independent of json (strings are copied).  Cost: linear in
 * the document. */
FsYamlDoc *fs_yaml_doc_from_json(const FsJsonDoc *json);

/* One "key: value" of a header in another format (the "# key: value"
 * lines of a validation table), with the 1-based positions of both. */
typedef struct {
  const char *key, *value;
  int key_line, key_col, value_line, value_col;
} FsYamlPair;

/* A document named name whose root (at 1:1) is the mapping of the n pairs,
 * in order, each value a quoted scalar (text; numbers and units still
 * parse from it), so that schema walks (util/schema.h) read such headers
 * with the same checks and messages as YAML.  Keys must be distinct.
 * Strings are copied.  Cost: linear in n. */
FsYamlDoc *fs_yaml_doc_from_pairs(const char *name, const FsYamlPair *pairs, guint n);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsYamlDoc, fs_yaml_doc_free)

/* The root node, or NULL for an empty document. */
FsYamlNode *fs_yaml_doc_root(FsYamlDoc *doc);
/* The file name given at load. */
const char *fs_yaml_doc_name(FsYamlDoc *doc);

/* Sets error to "file:line:col: <message>" at node, in FS_YAML_ERROR_SCHEMA;
 * control characters in the message are escaped so that it is one line. */
void fs_yaml_error(GError **error, const FsYamlNode *node, const char *format, ...)
  G_GNUC_PRINTF(3, 4);

/* Human name of a node's kind for messages: "a mapping", "a list", "a string",
 * "an empty value" (a null scalar), "nothing" (node NULL). */
const char *fs_yaml_kind_name(const FsYamlNode *node);

/* Mapping access.  fs_yaml_map_get returns the value for key or NULL
 * (node must be a map).  fs_yaml_require_map/seq fail unless node has that
 * kind ("expected a mapping, got a list").  */
FsYamlNode *fs_yaml_map_get(const FsYamlNode *map, const char *key);
gboolean fs_yaml_require_map(const FsYamlNode *node, GError **error);
gboolean fs_yaml_require_seq(const FsYamlNode *node, GError **error);

/* Fails on the first key of map that is not in allowed (NULL-terminated),
 * e.g. `x.yaml:3:5: unknown key "latncy" in link; did you mean "latency"?`.
 * what names the mapping in the message ("link", "model"). */
gboolean fs_yaml_check_keys(const FsYamlNode *map, const char *const *allowed,
                            const char *what, GError **error);

/* Returns map[key] or fails with `file:line:col: missing key "key" in what`
 * (position of the map). */
FsYamlNode *fs_yaml_require_key(const FsYamlNode *map, const char *key,
                                const char *what, GError **error);

/* Typed getters on a scalar node.  Each fails with the node's position and
 * the expectation, e.g.
 *   topo.yaml:12:14: expected a bandwidth like "50 GB/s", got "fast"
 * and includes the units parser's reason where there is one.  A null
 * scalar ("key:" with no value) is an error for every getter ("expected a
 * string, got an empty value").  Numbers, integers and quantities accept
 * quoted text ("12"); booleans must be unquoted true/false, yes/no or
 * on/off (any case).  fs_yaml_get_int accepts a sign and "1e3" when exact;
 * its range message names the bounds ("expected an integer from 1 to 64,
 * got 100").  Errors are FS_YAML_ERROR_SCHEMA; *out is set only on success. */
gboolean fs_yaml_get_string(const FsYamlNode *node, const char **out, GError **error);
gboolean fs_yaml_get_bool(const FsYamlNode *node, gboolean *out, GError **error);
gboolean fs_yaml_get_int(const FsYamlNode *node, int64_t min, int64_t max,
                         int64_t *out, GError **error);
gboolean fs_yaml_get_double(const FsYamlNode *node, double min, double max,
                            double *out, GError **error);
gboolean fs_yaml_get_bandwidth(const FsYamlNode *node, double *bytes_per_s, GError **error);
gboolean fs_yaml_get_lane_rate(const FsYamlNode *node, double *bits_per_s, GError **error);
gboolean fs_yaml_get_time(const FsYamlNode *node, FsTime *ps, GError **error);
gboolean fs_yaml_get_size(const FsYamlNode *node, uint64_t *bytes, GError **error);
gboolean fs_yaml_get_power(const FsYamlNode *node, double *watts, GError **error);
gboolean fs_yaml_get_flops(const FsYamlNode *node, double *flops, GError **error);

/* Optional-field forms: when map has no key (or map is NULL), leave *out
 * unchanged and return TRUE; otherwise as the getters above. */
gboolean fs_yaml_opt_string(const FsYamlNode *map, const char *key, const char **out, GError **error);
gboolean fs_yaml_opt_bool(const FsYamlNode *map, const char *key, gboolean *out, GError **error);
gboolean fs_yaml_opt_int(const FsYamlNode *map, const char *key, int64_t min, int64_t max,
                         int64_t *out, GError **error);
gboolean fs_yaml_opt_double(const FsYamlNode *map, const char *key, double min, double max,
                            double *out, GError **error);
gboolean fs_yaml_opt_bandwidth(const FsYamlNode *map, const char *key, double *out, GError **error);
gboolean fs_yaml_opt_time(const FsYamlNode *map, const char *key, FsTime *out, GError **error);
gboolean fs_yaml_opt_size(const FsYamlNode *map, const char *key, uint64_t *out, GError **error);

G_END_DECLS
